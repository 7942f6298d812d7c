//! `sim`'s text, drawn from its document alone.

use crate::backend::sim::config::SimConfig;
use crate::report::{Body, Document};

/// `sim list`'s text from its document: each preset with its keys in the order a `sim:`
/// spec writes them, then every key with its meaning.
pub fn render(doc: &Document) -> String {
    let Body::SimList(list) = &doc.body else {
        return String::new();
    };
    let mut s = String::from("Simulator presets (use as sim:NAME[,key=value...]):\n\n");
    for p in &list.presets {
        s.push_str(&format!("{}\n  {}\n  ", p.name, p.about));
        let cfg = SimConfig::parse(&p.name).unwrap_or_default();
        let pairs: Vec<String> = cfg
            .pairs()
            .iter()
            .map(|(k, v)| format!("{k}={}", v.replace(' ', "")))
            .collect();
        s.push_str(&pairs.join(","));
        s.push_str("\n\n");
    }
    s.push_str("Keys (sim:custom,key=value... starts from the sd-16g values):\n");
    let w = list.keys.iter().map(|k| k.key.len()).max().unwrap_or(0);
    for k in &list.keys {
        s.push_str(&format!("  {:w$}  {}\n", k.key, k.meaning));
    }
    s
}
