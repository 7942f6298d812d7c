//! `slc`'s text, drawn from its document alone.

use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::units::{format_bytes, format_rate};

/// `slc`'s text from its document (the wear line apart: `output::render` adds it).
pub fn render(doc: &Document) -> String {
    let Body::Slc(r) = &doc.body else {
        return String::new();
    };
    let mut text = String::new();
    for k in [
        "slc_cache_bytes",
        "cached_bytes_per_s",
        "native_bytes_per_s",
        "slc_cache_recovered",
    ] {
        if let Some(inf) = doc.inferences.get(k) {
            let v = match (&inf.value, k) {
                (Some(v), "slc_cache_bytes") => format_bytes(v.as_u64().unwrap_or(0)),
                (Some(v), k) if k.ends_with("_per_s") => format_rate(v.as_f64().unwrap_or(0.0)),
                (Some(v), _) => v.to_string(),
                (None, _) => "?".into(),
            };
            text.push_str(&format!(
                "{}: {v} ({}) - {}\n",
                k.replace('_', " "),
                inf.status_word(),
                inf.evidence
            ));
        }
    }
    text.push('\n');
    let mut t = Table::new(&["written before", "interval", "throughput"]);
    let step = (r.samples.len() / 32).max(1);
    for iv in r.samples.iter().step_by(step) {
        t.row(vec![
            format_bytes(iv.start_bytes),
            format_bytes(iv.bytes),
            format_rate(iv.bytes_per_s()),
        ]);
    }
    if let Some(r) = &r.recovery {
        t.row(vec![
            "after idle".into(),
            format_bytes(r.bytes),
            format_rate(r.bytes_per_s()),
        ]);
    }
    text.push_str(&t.render());
    if step > 1 {
        text.push_str(&format!(
            "(every {} of {} intervals shown; all in --json or --plot)\n",
            crate::vocab::units::ordinal(step as u64),
            r.samples.len()
        ));
    }
    text.push('\n');
    text
}
