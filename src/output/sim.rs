//! `sim`'s text, drawn from its document alone.

use crate::backend::sim::config::SimConfig;
use crate::report::{Body, Document};
use crate::serve::{Outcome, Ready};
use crate::vocab::units::{format_bytes, format_ns};

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

/// `sim serve`'s line on stderr once the card is reachable: what is served, where, and
/// with which priority.
pub(crate) fn serving(spec: &str, size_bytes: u64, ready: &Ready) -> String {
    format!(
        "serving {} ({}) as {}{}{}; replies {} ahead of the model to make up for the served path; stop with Ctrl-C or SIGTERM",
        spec,
        format_bytes(size_bytes),
        ready.image.display(),
        ready
            .loop_device
            .as_ref()
            .map(|d| format!(" on {}", d.display()))
            .unwrap_or_default(),
        if ready.realtime {
            ", real-time priority"
        } else {
            " (no real-time priority: timing suffers when the CPUs are busy)"
        },
        format_ns(ready.lead_ns as f64)
    )
}

/// `sim serve`'s lines on stderr once it stopped: why, the cleanup's problems, the totals.
pub(crate) fn served(outcome: &Outcome) -> String {
    let mut s = format!("stopped by {}\n", outcome.stopped_by);
    for w in &outcome.cleanup_warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    s + &outcome.stats.text()
}
