// The clap definition of `scatter` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{BlockSize, OutputFile, Plot, Use};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `scatter`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope scatter sim:sd-16g -o scatter.tsv --plot scatter.svg\n  flashscope scatter /dev/mmcblk0 --order 12 --span 2\n\nRead-only. The TSV has two columns, offset in MiB and time in ms, for gnuplot."
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    #[command(flatten)]
    pub blocksize: BlockSize<ScatterBlockSize>,
    /// Read at 2^ORDER positions.
    #[arg(long, default_value_t = 9, value_name = "N")]
    pub order: u32,
    /// Blocks per read.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub span: u32,
    /// Rounds; each position keeps its fastest read.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub count: u32,
    #[command(flatten)]
    pub output: OutputFile<ScatterOutput>,
    #[command(flatten)]
    pub plot: Plot<ScatterPlot>,
}

pub struct ScatterBlockSize;
impl Use for ScatterBlockSize {
    const HELP: &'static str = "Distance between positions and unit of --span";
    const DEFAULT: Option<&'static str> = Some(BLOCKSIZE);
}

/// `scatter --blocksize`'s default.
pub const BLOCKSIZE: &str = "16K";

pub struct ScatterPlot;
impl Use for ScatterPlot {
    const HELP: &'static str = "Write an SVG scatter plot";
}

pub struct ScatterOutput;
impl Use for ScatterOutput {
    const HELP: &'static str = "Write the raw data as TSV (offset MiB, time ms)";
}
