// The clap definition of `open_au` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{BlockSize, EraseSize, Offset, Use};
#[allow(unused_imports)]
use super::write_args::{BudgetArgs, WriteArgs};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `open-au`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope open-au sim:sd-16g --erase-size 4M --write\n  \
  flashscope open-au /dev/mmcblk0 --erase-size 4M --write --random --json\n\n\
Counts 1, 2, 3 ... 8, then doubling up to --max-au, stopping at the first collapse and\n\
bisecting to the exact cut-off; the block-size table is measured around the cut-off.\n\
Preserve mode (the default with --write) saves every written region to a journal first.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    #[command(flatten)]
    pub erase_size: EraseSize<MeasuredEraseSize>,
    #[command(flatten)]
    pub blocksize: BlockSize<OpenAuBlockSize>,
    /// Most erase blocks written concurrently [default: 32, or as many as fit past the
    /// offset on a smaller device].
    #[arg(long, value_name = "N")]
    pub max_au: Option<u32>,
    #[command(flatten)]
    pub offset: Offset<OpenAuOffset>,
    /// Also measure random order inside each erase block (`inferences.open_au_random`).
    #[arg(long)]
    pub random: bool,
    #[command(flatten)]
    pub flags: WriteArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
}

pub struct OpenAuBlockSize;
impl Use for OpenAuBlockSize {
    const HELP: &'static str = "Smallest block size written (the size whose collapse decides)";
    const DEFAULT: Option<&'static str> = Some(BLOCKSIZE);
}

/// `open-au --blocksize`'s default.
pub const BLOCKSIZE: &str = "16K";

pub struct MeasuredEraseSize;
impl Use for MeasuredEraseSize {
    const HELP: &'static str = "Erase block (allocation unit) size, e.g. 4M [default: measured by `align` first, read-only; it must be confident]";
}

pub struct OpenAuOffset;
impl Use for OpenAuOffset {
    const HELP: &'static str = "Where the first erase block starts [default: past 16 MiB and past 4 erase blocks, so the FAT area stays out; a FAT area reaching further adds to the count]";
}
