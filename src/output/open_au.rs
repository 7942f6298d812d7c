//! `open-au`'s text, drawn from its document alone.

use super::value_text;
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::units::{format_bytes, format_rate};

/// `open-au`'s text from its document (the wear line apart: `output::render` adds it).
pub fn render(doc: &Document) -> String {
    let Body::OpenAu(r) = &doc.body else {
        return String::new();
    };
    let mut text = format!(
        "erase block {} (from {})\n",
        format_bytes(r.parameters.params.erase_bytes),
        r.parameters.erase_size_source
    );
    for (key, label) in [("open_au", "in order"), ("open_au_random", "random order")] {
        if let Some(inf) = doc.inferences.get(key) {
            text.push_str(&format!(
                "open erase blocks ({label}): {} ({}) - {}\n",
                value_text(inf),
                inf.status_word(),
                inf.evidence
            ));
        }
    }
    text.push('\n');
    for random in [false, true] {
        let ladder: Vec<_> = r
            .samples
            .iter()
            .filter(|x| x.phase == "ladder" && x.random == random)
            .collect();
        let det: Vec<_> = r
            .samples
            .iter()
            .filter(|x| x.phase == "detect" && x.random == random && !x.superseded)
            .collect();
        if det.is_empty() {
            continue;
        }
        let order = if random { "random" } else { "linear" };
        let mut t = Table::new(&["open erase blocks", "small-block write", "mean", "order"]);
        for x in &det {
            t.row(vec![
                x.open_aus.to_string(),
                format_rate(x.bytes_per_s),
                format_rate(x.mean_bytes_per_s),
                order.into(),
            ]);
        }
        text.push_str(&t.render());
        let mut counts: Vec<u32> = ladder.iter().map(|x| x.open_aus).collect();
        counts.sort_unstable();
        counts.dedup();
        if !counts.is_empty() {
            let mut header = vec!["block size".to_string()];
            header.extend(counts.iter().map(|c| format!("{c} open ({order})")));
            let refs: Vec<&str> = header.iter().map(String::as_str).collect();
            let mut t = Table::new(&refs);
            let mut sizes: Vec<u64> = ladder.iter().map(|x| x.block_bytes).collect();
            sizes.sort_unstable_by(|a, b| b.cmp(a));
            sizes.dedup();
            for bs in sizes {
                let mut row = vec![format_bytes(bs)];
                for c in &counts {
                    let r = ladder
                        .iter()
                        .find(|x| x.block_bytes == bs && x.open_aus == *c)
                        .map(|x| format_rate(x.mean_bytes_per_s))
                        .unwrap_or_default();
                    row.push(r);
                }
                t.row(row);
            }
            text.push('\n');
            text.push_str(&t.render());
        }
        text.push('\n');
    }
    text
}
