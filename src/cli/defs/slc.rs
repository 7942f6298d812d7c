// The clap definition of `slc` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{Offset, Plot, Use};
#[allow(unused_imports)]
use super::write_args::{BudgetArgs, WriteArgs};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `slc`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope slc sim:sd-a2-64g --write\n  \
  flashscope slc /dev/sdb --destructive --write-budget 8G --plot slc.svg\n\n\
The budget defaults to the smaller of 25% of the device and 32 GiB; the test stops earlier\n\
once the speed has dropped and stayed down. In preserve mode the journal must hold the\n\
whole region (budget + the recovery write): use --destructive on a blank device to skip it.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    #[command(flatten)]
    pub offset: Offset<SlcOffset>,
    /// Idle time before probing whether the cache recovered (0 skips it).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration_ns)]
    pub recover: u64,
    /// Write pseudo-random data instead of zeros (for controllers that compress).
    #[arg(long)]
    pub random_data: bool,
    #[command(flatten)]
    pub plot: Plot<SlcPlot>,
    #[command(flatten)]
    pub flags: WriteArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
}

pub struct SlcPlot;
impl Use for SlcPlot {
    const HELP: &'static str = "Write an SVG plot of throughput against bytes written to this file";
}

pub struct SlcOffset;
impl Use for SlcOffset {
    const HELP: &'static str = "Start of the sustained write";
    const DEFAULT: Option<&'static str> = Some("16M");
}
