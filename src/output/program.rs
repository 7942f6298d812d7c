//! `program`'s text, drawn from its document alone.

use super::value_text;
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::units::{format_bytes, format_rate};

/// `program`'s text from its document (the wear line apart: `output::render` adds it).
pub fn render(doc: &Document) -> String {
    let Body::Program(r) = &doc.body else {
        return String::new();
    };
    let mut text = String::new();
    for (k, inf) in &doc.inferences {
        text.push_str(&format!(
            "{}: {} ({}) - {}\n",
            k.replace('_', " "),
            value_text(inf),
            inf.status_word(),
            inf.evidence
        ));
    }
    text.push('\n');
    let mut t = Table::new(&[
        "block size",
        "write 00",
        "write ff",
        "write 5a",
        "read",
        "rnd write 00",
        "rnd write ff",
        "rnd write 5a",
        "rnd read",
    ]);
    for x in &r.samples {
        let mut row = vec![format_bytes(x.block_bytes)];
        row.extend(x.bytes_per_s.iter().map(|&r| format_rate(r)));
        t.row(row);
    }
    text.push_str(&t.render());
    text.push('\n');
    text
}
