//! `flashscope slc TARGET --write`: the write-cache cliff — how much a sustained write
//! gets at cache speed before the native speed, and whether the cache recovers.

use super::{Outcome, Output};
use crate::probe::slc::{default_budget, SlcParams};
use crate::probe::write_test::{self, drive, slc::SlcTest};
use crate::report::TargetInfo;
use crate::target::write::{Budgets, WriteFlags, WriteIntent};
use crate::units::{format_bytes, parse_duration_ns, parse_size};
use crate::{Error, Result};
use std::path::PathBuf;

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
    pub target: String,
    /// Start of the sustained write.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = crate::units::size_arg)]
    pub offset: String,
    /// Idle time before probing whether the cache recovered (0 skips it).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = crate::units::duration_arg)]
    pub recover: String,
    /// Write pseudo-random data instead of zeros (for controllers that compress).
    #[arg(long)]
    pub random_data: bool,
    /// Write an SVG plot of throughput against bytes written to this file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub flags: WriteFlags,
    #[command(flatten)]
    pub budgets: Budgets,
}

fn params(args: &Args, size: u64, sector: u64) -> Result<SlcParams> {
    let offset = parse_size(&args.offset)?;
    let requested = args.budgets.write_budget_bytes(size)?;
    let budget = requested.unwrap_or_else(|| default_budget(size));
    let mut p = SlcParams::new(size, budget);
    p.offset_bytes = offset;
    p.recover_ns = parse_duration_ns(&args.recover)?;
    if p.recover_ns == 0 {
        p.recovery_bytes = 0;
    }
    p.random_data = args.random_data;
    p.time_budget_ns = args.budgets.time_budget_ns()?;
    if offset % sector != 0 {
        return Err(Error::usage(format!(
            "--offset {offset} is not a multiple of the {sector}-byte sector"
        )));
    }
    let room = size.saturating_sub(offset);
    p.budget_bytes =
        budget.min(room.saturating_sub(p.recovery_bytes)) / p.block_bytes * p.block_bytes;
    if p.budget_bytes < 4 * p.interval_bytes {
        return Err(Error::usage(format!(
            "a write budget of {} from offset {} on a {} device leaves fewer than 4 intervals of {}: raise --write-budget or lower --offset",
            format_bytes(p.budget_bytes),
            format_bytes(offset),
            format_bytes(size),
            format_bytes(p.interval_bytes)
        )));
    }
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

fn test(args: &Args, info: &TargetInfo) -> Result<SlcTest> {
    Ok(SlcTest {
        params: params(args, info.size_bytes, info.logical_sector_bytes as u64)?,
        plot: args.plot.clone(),
    })
}
