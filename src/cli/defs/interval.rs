// The clap definition of `interval` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{Plot, Positions, Use};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `interval`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope interval sim:sd-16g\n  flashscope interval /dev/mmcblk0 --order 13 --plot interval.svg\n\nRead-only. Request sizes run from 512 bytes to 512 × 2^(order−1)."
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    /// Number of request sizes (largest 512 B × 2^(order − 1)).
    #[arg(long, default_value_t = 13, value_name = "N")]
    pub order: u32,
    #[command(flatten)]
    pub positions: Positions<IntervalPositions>,
    /// Rounds; each place keeps its fastest read.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub count: u32,
    #[command(flatten)]
    pub plot: Plot<IntervalPlot>,
}

pub struct IntervalPlot;
impl Use for IntervalPlot {
    const HELP: &'static str =
        "Write an SVG plot of read time against request size with the fitted line";
}

pub struct IntervalPositions;
impl Use for IntervalPositions {
    const HELP: &'static str = "Places each size is read at (nine requests apart)";
    const DEFAULT: Option<&'static str> = Some(POSITIONS);
}

/// `interval --positions`' default.
pub const POSITIONS: &str = "8";
