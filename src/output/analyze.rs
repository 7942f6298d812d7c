//! `analyze`'s text, drawn from its document alone.

use crate::analysis::capacity_tools;
use crate::analysis::logs;
use crate::input;
use crate::report::results::CapacityReportSample;
use crate::report::{Body, Document};
use crate::vocab::Inference;
use std::collections::BTreeMap;

/// `analyze`'s text from its document: for each kind of log there is, the same lines as
/// the live command's (the boundary costs and the interval table drawn again from the logs
/// the document holds).
pub fn render(doc: &Document) -> String {
    let Body::Analyze(a) = &doc.body else {
        return String::new();
    };
    let mut parts = Vec::new();
    let apts = logs::align_points(&a.samples, a.parameters.blocksize);
    if !apts.is_empty() {
        let (summary, evidence) = super::align::summary_and_evidence(&doc.inferences);
        parts.push(format!(
            "{summary}\n\nBoundary cost from the logs:\n{}\n{evidence}",
            super::align::table(&apts),
        ));
    }
    let ipts = logs::interval_points(&a.samples);
    if !ipts.is_empty() {
        parts.push(super::interval::text(&ipts, &doc.inferences));
    }
    parts.extend(write_test_lines(&doc.inferences));
    for c in &a.capacity_reports {
        parts.push(capacity_text(c));
    }
    parts.join("\n")
}

/// A capacity report's restatement: the tool's verdict, sizes and cache, and its blind
/// spots (every string taken from the pasted text goes through `input::printable`).
fn capacity_text(c: &CapacityReportSample) -> String {
    use crate::analysis::capacity_tools::ToolVerdict;
    use crate::vocab::units::format_bytes;
    let r = &c.report;
    let size = |b: Option<u64>| b.map(format_bytes).unwrap_or_else(|| "?".into());
    let verdict = match r.verdict {
        ToolVerdict::Genuine if r.tool == capacity_tools::Tool::F3probe => {
            "the device is the real thing".to_string()
        }
        ToolVerdict::Genuine => "no data lost in what it tested".to_string(),
        ToolVerdict::Counterfeit => format!(
            "the device is a counterfeit of type {}",
            input::printable(r.fake_type.as_deref().unwrap_or("?"))
        ),
        ToolVerdict::Damaged => "the device is damaged".to_string(),
        ToolVerdict::DataLost => "the device loses data".to_string(),
    };
    let mut out = format!(
        "{} ({}{}): {verdict}\n",
        r.tool.name(),
        input::printable(&c.file),
        r.version
            .as_deref()
            .map(|v| format!(", {}", input::printable(v)))
            .unwrap_or_default()
    );
    let mut figures = Vec::new();
    if r.usable_bytes.is_some() {
        figures.push(format!("usable {}", size(r.usable_bytes)));
    }
    if r.announced_bytes.is_some() {
        figures.push(format!("announced {}", size(r.announced_bytes)));
    }
    if r.cache_bytes.is_some() {
        figures.push(format!("cache about {}", size(r.cache_bytes)));
    }
    if r.ok_bytes.is_some() || r.lost_bytes.is_some() {
        figures.push(format!(
            "read back {} intact, {} lost",
            size(r.ok_bytes),
            size(r.lost_bytes)
        ));
    }
    if let (Some(t), Some(f)) = (r.tested_bytes, r.free_bytes) {
        figures.push(format!("tested {} of {} MiB free", t >> 20, f >> 20));
    }
    if !figures.is_empty() {
        out.push_str(&format!("  {}\n", figures.join(", ")));
    }
    for b in &r.blind_spots {
        out.push_str(&format!("  blind spot: {b}\n"));
    }
    out.push_str("  (restated from the pasted output, not measured: `flashscope probe` measures the card itself)\n");
    out
}

/// The text line of each write-test inference the document has, in the order `analyze`
/// prints them.
fn write_test_lines(map: &BTreeMap<String, Inference>) -> Vec<String> {
    [
        ("open_au", "open erase blocks (open_au)"),
        (
            "open_au_random",
            "open erase blocks in random order (open_au_random)",
        ),
        (
            "fat_area_erase_blocks",
            "FAT area erase blocks (fat_area_erase_blocks)",
        ),
    ]
    .into_iter()
    .filter_map(|(key, what)| map.get(key).map(|i| line(what, i)))
    .collect()
}

fn line(key: &str, inf: &Inference) -> String {
    let v = inf
        .value
        .as_ref()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "?".into());
    format!("{key}: {v} ({}) - {}\n", inf.status_word(), inf.evidence)
}
