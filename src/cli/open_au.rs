//! `flashscope open-au TARGET --write`: how many erase blocks the card can write to at
//! once (flashbench's open-AU test, automatic).

pub use super::defs::open_au::*;

use super::{emit_finished, Output};
use crate::commands::open_au::OpenAuRequest;
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
fn request(args: &Args) -> Result<OpenAuRequest> {
    Ok(OpenAuRequest {
        erase_bytes: args.erase_size.value.as_ref().map(|g| g.value),
        block_bytes: super::defaulted(&args.blocksize.value, "--blocksize")?.value,
        max_au: args.max_au,
        offset_bytes: args.offset.value.as_ref().map(|g| g.value),
        random: args.random,
    })
}
