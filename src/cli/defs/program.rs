// The clap definition of `program` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{BlockSize, Use};
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
    /// Start of the region written.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = given(parse_size))]
    pub offset: Given<u64>,
    /// Size of the region written (an erase block or more).
    #[arg(long, value_name = "SIZE", default_value = "4M", value_parser = given(parse_size))]
    pub size: Given<u64>,
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
