//! `flashscope fat TARGET --write`: which of the first erase blocks behave differently
//! (the FAT area; flashbench's find-fat). The partition table lives there, so preserve
//! mode is mandatory unless `--destructive`.

use super::open_au::erase_size_arg;
use super::{Outcome, Output};
use crate::probe::fat::FatParams;
use crate::probe::write_common::check_geometry;
use crate::probe::write_test::{self, drive, fat::FatTest};
use crate::report::TargetInfo;
use crate::target::write::{Budgets, WriteFlags, WriteIntent};
use crate::units::{format_bytes, parse_size};
use crate::{Error, Result};

/// Arguments of `fat`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope fat sim:sd-16g --erase-size 4M --write\n  \
  flashscope fat /dev/mmcblk0 --erase-size 4M --nr 8 --write --json\n\n\
The first erase blocks hold the partition table and boot data: with --write every region\n\
is saved to the journal first and restored and verified afterwards.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Erase block (allocation unit) size, e.g. 4M [default: measured by `align` first,
    /// read-only; it must be confident].
    #[arg(long, value_name = "SIZE", value_parser = crate::units::size_arg)]
    pub erase_size: Option<String>,
    /// Smallest block size written (below the page size page-mapped areas show).
    #[arg(long, short = 'b', value_name = "SIZE", default_value = "512", value_parser = crate::units::size_arg)]
    pub blocksize: String,
    /// Erase blocks measured from the start of the device.
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub nr: u32,
    #[command(flatten)]
    pub flags: WriteFlags,
    #[command(flatten)]
    pub budgets: Budgets,
}

fn params(args: &Args, size: u64, sector: u64, erase: u64) -> Result<FatParams> {
    let block = parse_size(&args.blocksize)?;
    check_geometry(erase, block, size, sector)?;
    if args.nr < 3 {
        return Err(Error::usage(format!(
            "--nr {} is too few: at least 3 erase blocks are needed to tell which differ",
            args.nr
        )));
    }
    if args.nr as u64 * erase > size {
        return Err(Error::usage(format!(
            "--nr {}: {} erase blocks of {} do not fit in the device ({}); use --nr {} or less",
            args.nr,
            args.nr,
            format_bytes(erase),
            format_bytes(size),
            size / erase
        )));
    }
    let mut p = FatParams::new(erase);
    p.block_bytes = block;
    p.nr = args.nr;
    p.time_budget_ns = args.budgets.time_budget_ns()?;
    Ok(p)
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    execute(args)?.emit(out)
}

/// Measure and infer without printing (shared with `auto`).
pub fn execute(args: &Args) -> Result<Outcome> {
    let finished = drive(&args.target, &args.flags, &args.budgets, |info| {
        test(args, info)
    })?;
    Ok(Outcome::from(finished))
}

/// What the test would write on the target, without writing (for `auto`'s plan).
pub fn plan(args: &Args) -> Result<WriteIntent> {
    write_test::plan(&args.target, |info| test(args, info))
}

fn test(args: &Args, info: &TargetInfo) -> Result<FatTest> {
    let sector = info.logical_sector_bytes as u64;
    let (erase, source) = erase_size_arg(
        &args.erase_size,
        &args.target,
        &args.flags,
        &format!(
            "fat writes the first {} erase blocks (the partition table lives there)",
            args.nr
        ),
    )?;
    Ok(FatTest {
        params: params(args, info.size_bytes, sector, erase)?,
        erase_size_source: source,
    })
}
