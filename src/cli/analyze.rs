//! `flashscope analyze FILE...`: flashbench logs through the same inference as live tests.

pub use super::defs::analyze::*;

use super::Output;
use crate::analysis::flashbench;
use crate::commands::analyze::{self, AnalyzeParams};
use crate::report::output_file::OutputFile;
use crate::vocab::error::Verdict;
use crate::Result;

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let plot = OutputFile::create_opt("--plot", args.plot.value.as_deref())?;
    let blocksize = args.blocksize.value.as_ref().map(|g| g.value);
    let erasesize = args.erasesize.value.as_ref().map(|g| g.value);
    let open_au_nr = args
        .open_au_nr
        .as_deref()
        .map(flashbench::parse_open_au_nr_list)
        .transpose()?;
    let params = AnalyzeParams {
        files: args.files.clone(),
        blocksize,
        erasesize,
        open_au_nr,
        plot,
    };
    out.emit(&analyze::run(&params)?);
    Ok(Verdict::Ok)
}
