//! `flashscope scatter TARGET`: flashbench's scatter test, raw data and plot.

pub use super::defs::scatter::*;

use super::Output;
use crate::commands::scatter::{self, ScatterParams};
use crate::vocab::error::Verdict;
use crate::Result;

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let params = ScatterParams {
        block_bytes: super::defaulted(&args.blocksize.value, "--blocksize")?.value,
        order: args.order,
        span: args.span,
        count: args.count,
        output: super::utf8_path(&args.output.value, "--output")?,
        plot: super::utf8_path(&args.plot.value, "--plot")?,
    };
    out.emit(&super::with_host_path(scatter::measure(
        &args.target,
        &params,
    )?));
    Ok(Verdict::Ok)
}
