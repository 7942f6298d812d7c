//! `flashscope align TARGET`: find the erase block and page size from read timings.

pub use super::defs::align::*;

use super::Output;
use crate::commands::align::{self, AlignParams, Priority};
use crate::vocab::error::Verdict;
use crate::Result;

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let plot = args.plot.value.as_deref();
    out.emit(&super::with_host_path(align::run(
        &args.target,
        &params(args)?,
        plot,
        &super::write_args::stderr_notices(),
    )?));
    Ok(Verdict::Ok)
}

/// The test's parameters from the arguments.
fn params(args: &Args) -> Result<AlignParams> {
    Ok(AlignParams {
        block_sizes: args.blocksize.value.iter().map(|g| g.value).collect(),
        positions: super::defaulted(&args.positions.value, "--positions")?,
        count: args.count,
        time_budget_ns: super::defaulted(&args.time_budget.value, "--time-budget")?.value,
        priority: if args.no_realtime {
            Priority::Normal
        } else if args.realtime {
            Priority::Realtime
        } else {
            Priority::Auto
        },
    })
}
