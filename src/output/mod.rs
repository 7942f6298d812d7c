//! The output room: each command's text, drawn from its document alone (one file per
//! command), and [`render`], the one place that knows which text a document prints as.
//! It renders and never measures or decides; it returns strings, and the command line
//! prints them (docs/ARCHITECTURE.md).

pub mod align;
pub mod analyze;
pub mod auto;
pub mod bench;
pub mod compare;
pub mod fat;
pub mod fs;
pub mod health;
pub mod history;
pub mod info;
pub mod interval;
pub mod io;
pub mod model;
pub mod open_au;
pub mod probe;
pub mod program;
pub mod restore;
pub mod scatter;
pub mod sim;
pub mod slc;
pub mod verify;

use crate::report::{Body, Document};

/// A document's text as its command prints it. The one place that knows each command's
/// rendering, and each renders from the document alone: a stored run (`history show`) or a
/// saved `--json` document prints as the run printed it. A writing test's text ends with
/// the wear line.
pub fn render(doc: &Document) -> String {
    let wear = || crate::report::wear_line(doc);
    match &doc.body {
        Body::Info(_) => info::render(doc),
        Body::Health(_) => health::render(doc),
        Body::Probe(_) => probe::render(doc) + &wear(),
        Body::OpenAu(_) => open_au::render(doc) + &wear(),
        Body::Fat(_) => fat::render(doc) + &wear(),
        Body::Program(_) => program::render(doc) + &wear(),
        Body::Slc(_) => slc::render(doc) + &wear(),
        Body::Verify(_) => verify::render(doc),
        Body::SimList(_) => sim::render(doc),
        // `sim serve` reports on stderr while it serves; its document is for --json.
        Body::SimServe(_) => String::new(),
        Body::Io(_) => io::render(doc),
        Body::Bench(_) => bench::render(doc),
        Body::Align(_) => align::render(doc),
        Body::Auto(_) => auto::render(doc),
        Body::Scatter(_) => scatter::render(doc),
        Body::Interval(_) => interval::render(doc),
        Body::Analyze(_) => analyze::render(doc),
        Body::FsSeq(_) => fs::render_seq(doc),
        Body::FsFiles(_) => fs::render_files(doc),
        Body::FsMatrix(_) => fs::render_matrix(doc),
        Body::Model(_) => model::render(doc),
        Body::Restore(_) => restore::render(doc),
        Body::Compare(_) => compare::render(doc),
        Body::HistoryList(_) => history::render_list(doc),
        Body::HistoryTable(_) => history::render_table(doc),
    }
}

/// `value` of an inference as text, `?` when inconclusive.
pub(crate) fn value_text(inf: &crate::vocab::Inference) -> String {
    inf.value
        .as_ref()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "?".into())
}
