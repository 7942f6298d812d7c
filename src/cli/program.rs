//! `flashscope program TARGET --write`: the flashbench program matrix — per block size,
//! linear and random writes of zeros, ones and 0x5a, and reads.

pub use super::defs::program::*;

use super::{emit_finished, Output};
use crate::commands::program::ProgramRequest;
use crate::commands::write_probe;
use crate::session::{Budgets, WriteFlags};
use crate::vocab::error::Verdict;
use crate::Result;

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let request = ProgramRequest {
        offset: super::defaulted(&args.offset.value, "--offset")?,
        size: super::defaulted(&args.size.value, "--size")?,
        max_blocksize: args.max_blocksize.clone(),
        blocksize: super::defaulted(&args.blocksize.value, "--blocksize")?,
    };
    let finished = write_probe::measure(
        &args.target,
        &request,
        &WriteFlags::from(&args.flags),
        &Budgets::from(&args.budgets),
    )?;
    emit_finished(finished, out)
}
