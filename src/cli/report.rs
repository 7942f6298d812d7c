//! `flashscope report FILE.json... -o report.html`: saved `--json` documents of any
//! command in one self-contained HTML page.

pub use super::defs::report::*;

use crate::report::html;
use crate::report::output_file::OutputFile;
use crate::vocab::error::Verdict;
use crate::{Error, Result};

/// Read every document (all before anything is written), render, write atomically.
pub fn run(args: &Args) -> Result<Verdict> {
    if args.files.iter().filter(|f| *f == "-").count() > 1 {
        return Err(Error::usage(
            "standard input (-) can be read once: give it as one FILE only",
        ));
    }
    let out = super::defaulted(&args.output.value, "--output")?;
    let page = OutputFile::create("--output", &out)?;
    let docs = crate::report::load_documents(&args.files)?;
    html::write_page(&docs, &page)?;
    super::say(&format!(
        "flashscope report: {} document{} in {}",
        docs.len(),
        if docs.len() == 1 { "" } else { "s" },
        out.display()
    ));
    Ok(Verdict::Ok)
}
