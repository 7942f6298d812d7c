//! `flashscope info TARGET`: what a target is, from what the device itself exposes.

pub use super::defs::info::*;

use super::Output;
use crate::commands::info;
use crate::vocab::error::Verdict;
use crate::Result;

/// Describe the target and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    out.emit(&info::measure(&args.target)?);
    Ok(Verdict::Ok)
}
