//! `flashscope interval TARGET`: read time against request size → access time and throughput.

use super::Output;
use crate::commands::interval::{self, IntervalParams};
use crate::vocab::error::Verdict;
use crate::Result;

/// Arguments of `interval`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope interval sim:sd-16g\n  flashscope interval /dev/mmcblk0 --order 13 --plot interval.svg\n\nRead-only. Request sizes run from 512 bytes to 512 × 2^(order−1)."
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: crate::device::TargetSpec,
    /// Number of request sizes (largest 512 B × 2^(order − 1)).
    #[arg(long, default_value_t = 13, value_name = "N")]
    pub order: u32,
    /// Places each size is read at (nine requests apart).
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub positions: u32,
    /// Rounds; each place keeps its fastest read.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub count: u32,
    /// Write an SVG plot of read time against request size with the fitted line.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<String>,
}

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let params = IntervalParams {
        order: args.order,
        positions: args.positions,
        count: args.count,
        plot: args.plot.clone(),
    };
    out.emit(&interval::measure(&args.target, &params)?);
    Ok(Verdict::Ok)
}
