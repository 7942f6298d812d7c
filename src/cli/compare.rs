//! `flashscope compare A B [C...]`: saved bench / io documents or fio JSON side by side,
//! each figure of B (C, …) against A's with the difference, its 95 % interval and one
//! sentence; text, `--json`, or an HTML page (`-o`).

pub use super::defs::compare::*;

use super::Output;
use crate::commands::compare::CompareParams;
use crate::compare::SideSpec;
use crate::report::output_file::OutputFile;
use crate::vocab::error::Verdict;
use crate::{Error, Result};
use std::path::Path;

/// `history`: the database history ids and devices are looked up in (`None` with
/// `--no-history`: every side is a file).
pub fn run(args: &Args, history: Option<&Path>, out: &Output) -> Result<Verdict> {
    if args.sides.iter().filter(|s| *s == "-").count() > 1 {
        return Err(Error::usage(
            "standard input (-) can be read once: give it as one SIDE only",
        ));
    }
    let page = OutputFile::create_opt("--output", args.output.value.as_deref())?;
    let params = CompareParams {
        sides: args
            .sides
            .iter()
            .map(|s| SideSpec::parse(s, history))
            .collect::<Result<Vec<_>>>()?,
        force: args.force,
    };
    let doc = crate::commands::compare::run(&params)?;
    if let Some(page) = &page {
        crate::report::html::write_page(std::slice::from_ref(&doc), page)?;
    }
    out.emit(&doc);
    if let Some(o) = args.output.value.as_ref().filter(|_| !out.json) {
        super::say(&format!(
            "flashscope compare: the page is in {}",
            o.display()
        ));
    }
    Ok(Verdict::Ok)
}
