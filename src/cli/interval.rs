//! `flashscope interval TARGET`: read time against request size → access time and throughput.

pub use super::defs::interval::*;

use super::Output;
use crate::commands::interval::{self, IntervalParams};
use crate::vocab::error::Verdict;
use crate::Result;

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let params = IntervalParams {
        order: args.order,
        positions: u32::try_from(super::defaulted(&args.positions.value, "--positions")?)
            .map_err(|_| crate::Error::usage("--positions: give at most 4294967295 places"))?,
        count: args.count,
        plot: super::utf8_path(&args.plot.value, "--plot")?,
    };
    out.emit(&super::with_host_path(interval::measure(
        &args.target,
        &params,
    )?));
    Ok(Verdict::Ok)
}
