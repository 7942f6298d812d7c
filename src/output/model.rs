//! `model`'s text, drawn from its document alone.

use crate::model::reference::EmpiricalRow;
use crate::model::{as_whole_ns, Estimate, FlashKind, Term};
use crate::report::results::ModelParameters;
use crate::report::table::{Align, Table};
use crate::report::{Body, Document};
use crate::vocab::units::{format_bytes, format_ns, format_rate};

/// `model`'s text from its document: the estimate with its terms, then the reference rows.
pub fn render(doc: &Document) -> String {
    let Body::Model(m) = &doc.body else {
        return String::new();
    };
    let mut text = String::new();
    if let (Some(e), ModelParameters::Datasheet(d)) = (&m.estimate, &m.parameters) {
        text.push_str(&render_estimate(e, d.kind, d.total_bytes));
    }
    if let Some(rows) = &m.reference {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&render_reference(rows));
    }
    text
}

/// A model time as the document holds it (whole ns), so live and saved runs print alike.
fn ns_text(ns: f64) -> String {
    format_ns(as_whole_ns(ns) as f64)
}

fn term_row(t: &mut Table, term: &Term) {
    t.row(vec![
        term.name.clone(),
        term.count.to_string(),
        ns_text(term.each_ns),
        ns_text(term.total_ns),
        term.formula.clone(),
    ]);
}

fn render_estimate(e: &Estimate, kind: FlashKind, total: u64) -> String {
    let mut s = format!(
        "{}: sequential write at most {}, sequential read at most {} (bus {})\n\n",
        kind.name(),
        format_rate(e.write_bytes_per_s),
        format_rate(e.read_bytes_per_s),
        format_rate(e.bus_bytes_per_s)
    );
    s.push_str(&format!("writing {}:\n", format_bytes(total)));
    let mut t = Table::new(&["term", "count", "each", "total", "how"]).align(4, Align::Left);
    for term in &e.write_terms {
        term_row(&mut t, term);
    }
    t.row(vec![
        "= time".into(),
        String::new(),
        String::new(),
        ns_text(e.write_ns),
        format!("→ {}", format_rate(e.write_bytes_per_s)),
    ]);
    s.push_str(&t.render());
    s.push_str(&format!(
        "\nreading {} (bus-limited):\n",
        format_bytes(total)
    ));
    let mut t = Table::new(&["term", "count", "each", "total", "how"]).align(4, Align::Left);
    for term in &e.read_terms {
        term_row(&mut t, term);
    }
    t.row(vec![
        "= time".into(),
        String::new(),
        String::new(),
        ns_text(e.read_ns),
        format!("→ {}", format_rate(e.read_bytes_per_s)),
    ]);
    s.push_str(&t.render());
    s
}

fn render_reference(rows: &[EmpiricalRow]) -> String {
    let mut s = String::from(
        "measured by the vendor (4 KiB random IOPS; the vendor's K/s and M/s read as KiB/s and MiB/s):\n",
    );
    let mut t = Table::new(&[
        "soc",
        "media",
        "part",
        "seq read",
        "seq write",
        "rand read",
        "rand write",
        "notes",
    ])
    .align(1, Align::Left)
    .align(2, Align::Left)
    .align(7, Align::Left);
    // A rate in the tool's one unit (MiB/s); the vendor's text when it is not a rate.
    let o = |bytes_per_s: Option<u64>, v: &Option<String>| {
        bytes_per_s
            .map(|b| crate::vocab::units::format_rate(b as f64))
            .or_else(|| v.clone())
            .unwrap_or_else(|| "-".into())
    };
    let n = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
    for r in rows {
        t.row(vec![
            r.soc.clone(),
            r.media.clone(),
            r.part.clone(),
            o(r.seq_read_bytes_per_s, &r.seq_read),
            o(r.seq_write_bytes_per_s, &r.seq_write),
            n(r.rand_read_iops),
            n(r.rand_write_iops),
            r.notes.clone(),
        ]);
    }
    s.push_str(&t.render());
    s
}
