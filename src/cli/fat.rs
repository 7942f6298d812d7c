//! `flashscope fat TARGET --write`: which of the first erase blocks behave differently
//! (the FAT area; flashbench's find-fat). The partition table lives there, so preserve
//! mode is mandatory unless `--destructive`.

use super::{emit_finished, Output};
use crate::cli::write_args::{BudgetArgs, WriteArgs};
use crate::commands::fat::FatRequest;
use crate::commands::write_probe;
use crate::session::{Budgets, WriteFlags};
use crate::vocab::error::Verdict;
use crate::Result;

/// Arguments of `fat`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope fat sim:sd-16g --erase-size 4M --write\n  \
  flashscope fat /dev/mmcblk0 --erase-size 4M --nr 8 --write --json\n\n\
The first erase blocks hold the partition table and boot data: with --write every region\n\
is saved to the journal first and restored and verified afterwards.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: crate::device::TargetSpec,
    /// Erase block (allocation unit) size, e.g. 4M [default: measured by `align` first,
    /// read-only; it must be confident].
    #[arg(long, value_name = "SIZE", value_parser = crate::vocab::units::parse_size)]
    pub erase_size: Option<u64>,
    /// Smallest block size written (below the page size page-mapped areas show)
    /// [default: the device's logical sector, 512 B on most cards].
    #[arg(long, short = 'b', value_name = "SIZE", value_parser = crate::vocab::units::parse_size)]
    pub blocksize: Option<u64>,
    /// Erase blocks measured from the start of the device.
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub nr: u32,
    #[command(flatten)]
    pub flags: WriteArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
}

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let finished = write_probe::measure(
        &args.target,
        &request(args)?,
        &WriteFlags::from(&args.flags),
        &Budgets::from(&args.budgets),
    )?;
    emit_finished(finished, out)
}

/// The test's parameters from the arguments.
fn request(args: &Args) -> Result<FatRequest> {
    Ok(FatRequest {
        erase_bytes: args.erase_size,
        block_bytes: args.blocksize,
        nr: args.nr,
    })
}
