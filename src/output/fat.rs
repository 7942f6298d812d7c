//! `fat`'s text, drawn from its document alone.

use super::value_text;
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::units::{format_bytes, format_rate};

/// `fat`'s text from its document (the wear line apart: `output::render` adds it).
pub fn render(doc: &Document) -> String {
    let Body::Fat(r) = &doc.body else {
        return String::new();
    };
    let (params, samples) = (&r.parameters.params, &r.samples);
    let nr = params.nr;
    let mut text = format!(
        "erase block {} (from {})\n",
        format_bytes(params.erase_bytes),
        r.parameters.erase_size_source
    );
    if let Some(inf) = doc.inferences.get("fat_area_erase_blocks") {
        text.push_str(&format!(
            "erase blocks that behave differently (FAT area): {} ({}) - {}\n\n",
            value_text(inf),
            inf.status_word(),
            inf.evidence
        ));
    }
    let mut header = vec!["block size".to_string()];
    header.extend((0..nr).map(|i| format!("block {i}")));
    let refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&refs);
    let mut sizes: Vec<u64> = samples.iter().map(|x| x.block_bytes).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    for bs in sizes {
        let mut row = vec![format_bytes(bs)];
        for i in 0..nr {
            row.push(
                samples
                    .iter()
                    .find(|x| x.block_bytes == bs && x.erase_block == i)
                    .map(|x| format_rate(x.bytes_per_s))
                    .unwrap_or_default(),
            );
        }
        t.row(row);
    }
    text.push_str(&t.render());
    text.push('\n');
    text
}
