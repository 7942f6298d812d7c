//! `probe`'s text, drawn from its document alone.

use crate::report::{Body, Document};
use crate::vocab::units::format_bytes;

/// `probe`'s text from its document (the wear line apart: `output::render` adds it).
pub fn render(doc: &Document) -> String {
    match &doc.body {
        Body::Probe(p) => render_verdict(doc, &p.verdict, p.partition_command.as_deref()),
        _ => String::new(),
    }
}

/// How the text introduces the partition command (`auto --verbose` leaves that line out:
/// its verdict block gives the command once).
pub const MAKE_USABLE: &str = "make it usable (erases its partition table): ";

fn render_verdict(doc: &Document, line: &str, command: Option<&str>) -> String {
    let mut s = format!("{line}\n");
    if let Some(c) = command {
        s.push_str(&format!("{MAKE_USABLE}{c}\n"));
    }
    for (k, inf) in &doc.inferences {
        s.push_str(&format!(
            "  {k}: {} ({}) — {}\n",
            inf.value
                .as_ref()
                .map(|v| match v.as_u64() {
                    Some(n) if k.ends_with("_bytes") => format!("{} ({n} bytes)", format_bytes(n)),
                    _ => v
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string()),
                })
                .unwrap_or_else(|| "?".to_string()),
            inf.status_word(),
            inf.evidence
        ));
    }
    s.push_str(&format!("  took {:.1} s\n", doc.elapsed_ns as f64 / 1e9));
    s
}
