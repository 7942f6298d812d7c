//! `flashscope scatter TARGET`: flashbench's scatter test, raw data and plot.

use super::Output;
use crate::commands::scatter::{self, ScatterParams};
use crate::vocab::error::Verdict;
use crate::Result;

/// Arguments of `scatter`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope scatter sim:sd-16g -o scatter.tsv --plot scatter.svg\n  flashscope scatter /dev/mmcblk0 --order 12 --span 2\n\nRead-only. The TSV has two columns, offset in MiB and time in ms, for gnuplot."
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: crate::device::TargetSpec,
    /// Distance between positions and unit of --span.
    #[arg(long, short = 'b', default_value = "16K", value_name = "SIZE", value_parser = crate::vocab::units::parse_size)]
    pub blocksize: u64,
    /// Read at 2^ORDER positions.
    #[arg(long, default_value_t = 9, value_name = "N")]
    pub order: u32,
    /// Blocks per read.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub span: u32,
    /// Rounds; each position keeps its fastest read.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub count: u32,
    /// Write the raw data as TSV (offset MiB, time ms).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<String>,
    /// Write an SVG scatter plot.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<String>,
}

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let params = ScatterParams {
        block_bytes: args.blocksize,
        order: args.order,
        span: args.span,
        count: args.count,
        output: args.output.clone(),
        plot: args.plot.clone(),
    };
    out.emit(&scatter::measure(&args.target, &params)?);
    Ok(Verdict::Ok)
}
