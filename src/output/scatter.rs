//! `scatter`'s text, drawn from its document alone.

use crate::report::{Body, Document};
use crate::vocab::units::{format_bytes, format_ns};

/// `scatter`'s text from its document: the range of the fastest read times.
pub fn render(doc: &Document) -> String {
    let Body::Scatter(sc) = &doc.body else {
        return String::new();
    };
    let (points, block) = (&sc.samples, sc.parameters.block_bytes);
    let times = points.iter().map(|p| p.min_ns);
    let min = times.clone().min().unwrap_or(0);
    let max = times.max().unwrap_or(0);
    let mut s = format!(
        "scatter: {} positions of {} over {}, fastest read {} … slowest {}\n",
        points.len(),
        format_bytes(block * sc.parameters.span as u64),
        format_bytes(points.len() as u64 * block),
        format_ns(min as f64),
        format_ns(max as f64)
    );
    if sc.output.is_none() && sc.plot.is_none() {
        s.push_str("(use -o FILE for the raw data and --plot FILE.svg for the chart)\n");
    }
    s
}
