//! `interval`'s text, drawn from its document alone.

use crate::analysis::interval::IntervalPoint;
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::units::{format_bytes, format_ns, format_rate};
use crate::vocab::Inference;
use std::collections::BTreeMap;

/// `interval`'s text from its document (also `history show`'s).
pub fn render(doc: &Document) -> String {
    let Body::Interval(iv) = &doc.body else {
        return String::new();
    };
    let points: Vec<IntervalPoint> = iv
        .samples
        .iter()
        .map(|r| IntervalPoint {
            bytes: r.bytes,
            min_ns: r.min_ns as f64,
            avg_ns: r.avg_ns as f64,
            max_ns: r.max_ns as f64,
        })
        .collect();
    text(&points, &doc.inferences)
}

/// One-line answer and the table from the points and the document's `access_time_ns` and
/// `throughput_bytes_per_s` (shared with `analyze`).
pub fn text(points: &[IntervalPoint], inferences: &BTreeMap<String, Inference>) -> String {
    let (Some(access), Some(rate)) = (
        inferences.get("access_time_ns"),
        inferences.get("throughput_bytes_per_s"),
    ) else {
        return String::new();
    };
    let head = match (access.as_u64(), rate.as_u64()) {
        (Some(a), Some(t)) => format!(
            "access time {}, throughput {} — {}",
            format_ns(a as f64),
            format_rate(t as f64),
            if access.status_word() == "confident" && rate.status_word() == "confident" {
                "confident"
            } else {
                "tentative"
            }
        ),
        (None, Some(t)) => format!(
            "throughput {} — access time inconclusive",
            format_rate(t as f64)
        ),
        _ => "access time and throughput inconclusive".to_string(),
    };
    let mut t = Table::new(&["request", "min", "avg", "max", "rate at min"]);
    for p in points {
        t.row(vec![
            format_bytes(p.bytes),
            format_ns(p.min_ns),
            format_ns(p.avg_ns),
            format_ns(p.max_ns),
            format_rate(p.bytes as f64 * 1e9 / p.min_ns),
        ]);
    }
    format!(
        "{head}\n\n{}\naccess time: {}\nthroughput: {}\n",
        t.render(),
        access.evidence,
        rate.evidence
    )
}
