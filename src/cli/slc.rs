//! `flashscope slc TARGET --write`: the write-cache cliff — how much a sustained write
//! gets at cache speed before the native speed, and whether the cache recovers.

pub use super::defs::slc::*;

use super::{emit_finished, Output};
use crate::commands::slc::SlcRequest;
use crate::commands::write_probe::{self};
use crate::report::output_file::OutputFile;
use crate::session::{Budgets, WriteFlags};
use crate::vocab::error::Verdict;
use crate::Result;

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let finished = write_probe::measure(
        &args.target,
        &request(args)?,
        &WriteFlags::from(&args.flags),
        &Budgets::from(&args.budgets),
    )?;
    emit_finished(finished, out)
}

/// The test's parameters from the arguments.
fn request(args: &Args) -> Result<SlcRequest> {
    Ok(SlcRequest {
        offset_bytes: super::defaulted(&args.offset.value, "--offset")?.value,
        recover_ns: args.recover,
        random_data: args.random_data,
        plot: OutputFile::create_opt("--plot", args.plot.value.as_deref())?,
    })
}
