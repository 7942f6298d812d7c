//! `flashscope probe TARGET --destructive`: is the card fake, and how much of it is real?

pub use super::defs::probe::*;

use super::{emit_finished, Output};
use crate::commands::probe::CapacityParams;
use crate::commands::write_probe::{self};
use crate::session::{Budgets, WriteFlags};
use crate::vocab::error::Verdict;
use crate::Result;

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let params = params(args);
    let finished = write_probe::measure(
        &args.target,
        &params,
        &WriteFlags::from(&args.flags),
        &Budgets::from(&args.budgets),
    )?;
    emit_finished(finished, out)
}

/// The probe's parameters from the arguments.
fn params(args: &Args) -> CapacityParams {
    CapacityParams::new(args.max_cache, args.partition_ok)
}
