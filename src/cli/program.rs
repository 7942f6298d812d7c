//! `flashscope program TARGET --write`: the flashbench program matrix — per block size,
//! linear and random writes of zeros, ones and 0x5a, and reads.

use super::{Outcome, Output};
use crate::cli::write_args::{size_given, BudgetArgs, WriteArgs};
use crate::commands::program::ProgramTest;
use crate::commands::write_probe::drive;
use crate::probe::program::ProgramParams;
use crate::session::{Budgets, Given, WriteFlags};
use crate::vocab::error::Verdict;
use crate::vocab::units::format_bytes;
use crate::{Error, Result};

/// Arguments of `program`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope program sim:sd-16g --write\n  \
  flashscope program /dev/mmcblk0 --offset 64M --write --json")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Start of the region written.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = size_given)]
    pub offset: Given<u64>,
    /// Size of the region written (an erase block or more).
    #[arg(long, value_name = "SIZE", default_value = "4M", value_parser = size_given)]
    pub size: Given<u64>,
    /// Largest block size.
    #[arg(long, value_name = "SIZE", default_value = "2M", value_parser = size_given)]
    pub max_blocksize: Given<u64>,
    /// Smallest block size.
    #[arg(long, short = 'b', value_name = "SIZE", default_value = "512", value_parser = size_given)]
    pub blocksize: Given<u64>,
    #[command(flatten)]
    pub flags: WriteArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
}

fn params(args: &Args, size: u64, sector: u64) -> Result<ProgramParams> {
    let mut p = ProgramParams::new();
    p.offset_bytes = args.offset.value;
    p.region_bytes = args.size.value;
    p.largest_bytes = args.max_blocksize.value;
    p.smallest_bytes = args.blocksize.value;
    p.time_budget_ns = Budgets::from(&args.budgets).time_ns;
    for (option, text, v) in [
        ("--blocksize", &args.blocksize.text, p.smallest_bytes),
        ("--max-blocksize", &args.max_blocksize.text, p.largest_bytes),
    ] {
        if v < sector || v % sector != 0 {
            return Err(Error::usage(format!(
                "{option} {text}: block sizes must be whole {sector}-byte sectors, e.g. {sector} or 4K"
            )));
        }
    }
    if p.smallest_bytes > p.largest_bytes {
        return Err(Error::usage(format!(
            "--blocksize {} is above --max-blocksize {}: give the smaller one to --blocksize",
            args.blocksize.text, args.max_blocksize.text
        )));
    }
    if p.offset_bytes % sector != 0 || p.region_bytes % sector != 0 || p.region_bytes == 0 {
        return Err(Error::usage(format!(
            "--offset {} and --size {} must be multiples of the {sector}-byte sector (size above 0)",
            p.offset_bytes, p.region_bytes
        )));
    }
    if p.offset_bytes + p.region_bytes > size {
        return Err(Error::usage(format!(
            "--offset {} + --size {} reach beyond the end of the device ({})",
            format_bytes(p.offset_bytes),
            format_bytes(p.region_bytes),
            format_bytes(size)
        )));
    }
    if p.sizes(sector).is_empty() {
        return Err(Error::usage(format!(
            "no block size between --blocksize {} and --max-blocksize {} fits the {}-byte sectors and the region",
            p.smallest_bytes, p.largest_bytes, sector
        )));
    }
    Ok(p)
}

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let finished = drive(
        &args.target,
        &WriteFlags::from(&args.flags),
        &Budgets::from(&args.budgets),
        |info| {
            let sector = info.logical_sector_bytes as u64;
            Ok(ProgramTest {
                params: params(args, info.size_bytes, sector)?,
            })
        },
    )?;
    Outcome::from(finished).emit(out)
}
