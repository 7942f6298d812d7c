//! `restore`'s text, drawn from its document alone.

use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::units::format_bytes;

/// `restore`'s text from its document: what was restored (or, with `--list`, what the
/// journal holds) and its regions.
pub fn render(doc: &Document) -> String {
    let Body::Restore(r) = &doc.body else {
        return String::new();
    };
    let mut s = match (&r.summary, r.restored) {
        (Some(sum), true) if r.restored_meanwhile => format!(
            "another restore of this journal put its {} regions back onto {} and removed it while this one waited; read back, each equals the journal; nothing written\n\n",
            sum.verified,
            crate::input::printable(doc.target.info().map_or("?", |t| t.spec.as_str())),
        ),
        (Some(sum), true) => format!(
            "restored {} regions ({}) onto {} and verified each by checksum; journal {}\n\n",
            sum.regions,
            format_bytes(sum.bytes),
            crate::input::printable(doc.target.info().map_or("?", |t| t.spec.as_str())),
            if r.journal_removed == Some(true) {
                "removed"
            } else {
                "kept"
            }
        ),
        _ => format!(
            "journal {} is intact: {} regions ({}) saved from {}; nothing written\n\n",
            crate::input::printable(&r.journal),
            r.samples.len(),
            format_bytes(r.samples.iter().map(|x| x.length_bytes).sum()),
            // A journal someone else wrote (--list is for looking at those): its words
            // are shown, never obeyed, and a line break in them fakes no line.
            crate::input::printable(&r.journal_identity.describe())
        ),
    };
    let mut t = Table::new(&["region offset", "length"]);
    for x in r.samples.iter().take(40) {
        t.row(vec![
            x.offset_bytes.to_string(),
            format_bytes(x.length_bytes),
        ]);
    }
    s.push_str(&t.render());
    if r.samples.len() > 40 {
        s.push_str(&format!(
            "... and {} more (all in --json)\n",
            r.samples.len() - 40
        ));
    }
    s
}
