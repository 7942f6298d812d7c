//! `flashscope program TARGET --write`: the flashbench program matrix — per block size,
//! linear and random writes of zeros, ones and 0x5a, and reads.

use super::{emit_finished, Output};
use crate::cli::write_args::{given, BudgetArgs, WriteArgs};
use crate::commands::program::ProgramRequest;
use crate::commands::write_probe;
use crate::session::{Budgets, WriteFlags};
use crate::vocab::error::Verdict;
use crate::vocab::units::parse_size;
use crate::vocab::units::Given;
use crate::Result;

/// Arguments of `program`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope program sim:sd-16g --write\n  \
  flashscope program /dev/mmcblk0 --offset 64M --write --json")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: crate::device::TargetSpec,
    /// Start of the region written.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = given(parse_size))]
    pub offset: Given<u64>,
    /// Size of the region written (an erase block or more).
    #[arg(long, value_name = "SIZE", default_value = "4M", value_parser = given(parse_size))]
    pub size: Given<u64>,
    /// Largest block size.
    #[arg(long, value_name = "SIZE", default_value = "2M", value_parser = given(parse_size))]
    pub max_blocksize: Given<u64>,
    /// Smallest block size.
    #[arg(long, short = 'b', value_name = "SIZE", default_value = "512", value_parser = given(parse_size))]
    pub blocksize: Given<u64>,
    #[command(flatten)]
    pub flags: WriteArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
}

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let request = ProgramRequest {
        offset: args.offset.clone(),
        size: args.size.clone(),
        max_blocksize: args.max_blocksize.clone(),
        blocksize: args.blocksize.clone(),
    };
    let finished = write_probe::measure(
        &args.target,
        &request,
        &WriteFlags::from(&args.flags),
        &Budgets::from(&args.budgets),
    )?;
    emit_finished(finished, out)
}
