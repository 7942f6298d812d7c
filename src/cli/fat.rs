//! `flashscope fat TARGET --write`: which of the first erase blocks behave differently
//! (the FAT area; flashbench's find-fat). The partition table lives there, so preserve
//! mode is mandatory unless `--destructive`.

pub use super::defs::fat::*;

use super::{emit_finished, Output};
use crate::commands::fat::FatRequest;
use crate::commands::write_probe;
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
fn request(args: &Args) -> Result<FatRequest> {
    Ok(FatRequest {
        erase_bytes: args.erase_size.value.as_ref().map(|g| g.value),
        block_bytes: args.blocksize.value.as_ref().map(|g| g.value),
        nr: args.nr,
    })
}
