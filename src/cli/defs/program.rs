// The clap definition of `program` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{BlockSize, Offset, Size, Use};
#[allow(unused_imports)]
use super::write_args::{BudgetArgs, WriteArgs};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `program`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope program sim:sd-16g --write\n  \
  flashscope program /dev/mmcblk0 --offset 64M --write --json")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    #[command(flatten)]
    pub offset: Offset<ProgramOffset>,
    #[command(flatten)]
    pub size: Size<ProgramSize>,
    /// Largest block size.
    #[arg(long, value_name = "SIZE", default_value = "2M", value_parser = given(parse_size))]
    pub max_blocksize: Given<u64>,
    #[command(flatten)]
    pub blocksize: BlockSize<ProgramBlockSize>,
    #[command(flatten)]
    pub flags: WriteArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
}

pub struct ProgramBlockSize;
impl Use for ProgramBlockSize {
    const HELP: &'static str = "Smallest block size";
    const DEFAULT: Option<&'static str> = Some(BLOCKSIZE);
}

/// `program --blocksize`'s default.
pub const BLOCKSIZE: &str = "512";

pub struct ProgramSize;
impl Use for ProgramSize {
    const HELP: &'static str = "Size of the region written (an erase block or more)";
    const DEFAULT: Option<&'static str> = Some(SIZE);
}

/// `program --size`'s default.
pub const SIZE: &str = "4M";

pub struct ProgramOffset;
impl Use for ProgramOffset {
    const HELP: &'static str = "Start of the region written";
    const DEFAULT: Option<&'static str> = Some("16M");
}
