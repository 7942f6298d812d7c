//! `align`'s text, drawn from its document alone.

use crate::analysis::align::AlignPoint;
use crate::input::printable;
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::units::{format_bytes, format_ns};
use crate::vocab::Inference;
use std::collections::BTreeMap;

/// The diff table: one row per alignment, one column per block size (shared with `analyze`).
pub fn table(points: &[AlignPoint]) -> String {
    let mut sizes: Vec<u64> = points.iter().map(|p| p.block_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut aligns: Vec<u64> = points.iter().map(|p| p.align_bytes).collect();
    aligns.sort_unstable();
    aligns.dedup();
    let header: Vec<String> = std::iter::once("alignment".to_string())
        .chain(
            sizes
                .iter()
                .map(|b| format!("diff, {} reads", format_bytes(*b))),
        )
        .collect();
    let hdr: Vec<&str> = header.iter().map(|s| s.as_str()).collect();
    // The first point of each (block size, alignment), looked up once per cell (a scan
    // per cell was quadratic: minutes for a log of a million alignments).
    let mut first: std::collections::HashMap<(u64, u64), &AlignPoint> =
        std::collections::HashMap::with_capacity(points.len());
    for p in points {
        first.entry((p.block_bytes, p.align_bytes)).or_insert(p);
    }
    let mut t = Table::new(&hdr);
    for a in aligns.iter().rev() {
        let mut row = vec![format_bytes(*a)];
        for b in &sizes {
            row.push(match first.get(&(*b, *a)).copied() {
                Some(p) if p.se_ns > 0.0 => {
                    format!("{} ± {}", format_ns(p.diff_ns), format_ns(p.se_ns))
                }
                Some(p) => format_ns(p.diff_ns),
                None => String::new(),
            });
        }
        t.row(row);
    }
    t.render()
}

/// The geometry inferences a document carries (`erase_block_bytes`, `page_bytes`, and
/// `multi_plane_bytes` when there is one); `None` when it carries none.
fn geometry(
    map: &BTreeMap<String, Inference>,
) -> Option<(&Inference, &Inference, Option<&Inference>)> {
    Some((
        map.get("erase_block_bytes")?,
        map.get("page_bytes")?,
        map.get("multi_plane_bytes"),
    ))
}

/// The one-line verdict and the evidence lines under the table (shared with `analyze`),
/// from a document's inferences.
pub fn summary_and_evidence(map: &BTreeMap<String, Inference>) -> (String, String) {
    let Some((erase, page, mp)) = geometry(map) else {
        return (String::new(), String::new());
    };
    let mut s = String::new();
    let mut line = |what: &str, i: &Inference| {
        let v = i
            .as_u64()
            .map(format_bytes)
            .unwrap_or_else(|| "?".to_string());
        s.push_str(&format!(
            "{what}: {v} ({}, {:.2}): {}\n",
            i.status_word(),
            i.confidence,
            i.evidence
        ));
    };
    line("erase block", erase);
    line("page", page);
    if let Some(m) = mp {
        line("multi-plane", m);
    }
    let structure = map.get("erase_block_structure");
    if let Some(st) = structure {
        s.push_str(&format!(
            "erase-block structure: {} ({}, {:.2}): {}\n",
            st.value
                .as_ref()
                .and_then(|v| v.as_str())
                .map_or_else(|| "?".to_string(), |v| printable(v).into_owned()),
            st.status_word(),
            st.confidence,
            st.evidence
        ));
    }
    let none_visible = structure.filter(|st| {
        st.value.as_ref().and_then(|v| v.as_str()) == Some(crate::analysis::align::NONE_VISIBLE)
            && erase.value.is_none()
    });
    let summary = match none_visible {
        Some(st) => {
            let page_part = match page.as_u64() {
                Some(p) => format!(", page {} ({})", format_bytes(p), page.status_word()),
                None => String::new(),
            };
            format!(
                "no erase-block structure visible{page_part} — {}: {}",
                st.status_word(),
                st.evidence
            )
        }
        None => crate::analysis::align::summarize(erase, page, mp),
    };
    (summary, s)
}

/// `align`'s text from its document: the summary, the boundary-cost table, the evidence and
/// the run's cost (also `auto --verbose`'s geometry section and `history show`'s).
pub fn render(doc: &Document) -> String {
    let Body::Align(a) = &doc.body else {
        return String::new();
    };
    let (summary, evidence) = summary_and_evidence(&doc.inferences);
    let run = &a.parameters;
    format!(
        "{summary}\n\nBoundary cost (on − (pre + post)/2; higher means the read straddled a boundary):\n{}\n{evidence}reads: {}, rounds: {}, stopped: {}; flashbench -a would do {} reads for these block sizes; time in reads {}\n",
        table(&a.points()),
        run.reads,
        run.rounds,
        run.stop_reason,
        run.flashbench_reads,
        format_ns(run.io_time_ns as f64),
    )
}
