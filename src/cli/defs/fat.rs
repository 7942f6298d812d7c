// The clap definition of `fat` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{BlockSize, EraseSize, Use};
#[allow(unused_imports)]
use super::write_args::{BudgetArgs, WriteArgs};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `fat`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope fat sim:sd-16g --erase-size 4M --write\n  \
  flashscope fat /dev/mmcblk0 --erase-size 4M --nr 8 --write --json\n\n\
The first erase blocks hold the partition table and boot data: with --write every region\n\
is saved to the journal first and restored and verified afterwards.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    #[command(flatten)]
    pub erase_size: EraseSize<MeasuredEraseSize>,
    #[command(flatten)]
    pub blocksize: BlockSize<FatBlockSize>,
    /// Erase blocks measured from the start of the device.
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub nr: u32,
    #[command(flatten)]
    pub flags: WriteArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
}

pub struct FatBlockSize;
impl Use for FatBlockSize {
    const HELP: &'static str =
        "Smallest block size written (below the page size page-mapped areas show) \
        [default: the device's logical sector, 512 B on most cards]";
}

pub struct MeasuredEraseSize;
impl Use for MeasuredEraseSize {
    const HELP: &'static str = "Erase block (allocation unit) size, e.g. 4M [default: measured by `align` first, read-only; it must be confident]";
}
