//! `flashscope probe TARGET --destructive`: is the card fake, and how much of it is real?

use super::{Outcome, Output};
use crate::capacity::probe::{ProbeConfig, DEFAULT_CACHE_CEILING};
use crate::capacity::stamp::Stamper;
use crate::probe::write_test::{self, capacity::CapacityTest, drive};
use crate::report::TargetInfo;
use crate::target::write::{Budgets, WriteFlags, WriteIntent};
use crate::target::{self, OpenRequest};
use crate::units::parse_size;
use crate::{Error, Result};

/// Arguments of `probe`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  flashscope probe sim:fake-64g --write
  flashscope probe /dev/sdb --write --json               non-destructive (journal)
  flashscope probe /dev/sdb --destructive --time-budget 2m

Writes 4 KiB stamps and reads them back: a reference read at every power-of-two distance
(the common wrap), a bisection to the sector where data is lost (limbo), and on a card
that holds them a wide span with an alias scan (wraps at other sizes) and up to
--max-cache of filler to push a controller write cache out; a cache that hid lost data is
bracketed (write_cache_bytes). An OK is never confident: a cache larger than the filler
is not ruled out (raise --max-cache). The banner's byte count is never exceeded: the
probe stops, incomplete, first. The first and last MiB (partition tables) are never
written. With --write every overwritten region is saved to a journal first and restored
and verified at the end. Exit 3 when the device is fake or damaged.")]
pub struct Args {
    /// Whole block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    #[command(flatten)]
    pub flags: WriteFlags,
    #[command(flatten)]
    pub budgets: Budgets,
    /// The largest controller write cache to push out before calling a device honest (an
    /// OK says a larger one is not ruled out; up to 4 times this is written behind a cache).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = crate::units::size_arg)]
    pub max_cache: String,
    /// Probe a partition although a fake is only visible on the whole device.
    #[arg(long)]
    pub partition_ok: bool,
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    execute(args)?.emit(out)
}

/// Probe and infer without printing (shared with `auto`).
pub fn execute(args: &Args) -> Result<Outcome> {
    let max_cache = parse_size(&args.max_cache).map_err(|_| {
        Error::usage(format!(
            "--max-cache '{}' is not a size: use e.g. 1G or 256M",
            args.max_cache
        ))
    })?;
    let time_budget_ns = args.budgets.time_budget_ns().map_err(|_| {
        Error::usage(format!(
            "--time-budget '{}' is not a duration: use e.g. 90s or 5m",
            args.budgets.time_budget.as_deref().unwrap_or("")
        ))
    })?;
    let finished = drive(&args.target, &args.flags, &args.budgets, |info| {
        test(args, info, max_cache, time_budget_ns)
    })?;
    Ok(Outcome::from(finished))
}

/// What the probe would write on the target, without writing (for `auto`'s plan).
pub fn plan(args: &Args) -> Result<WriteIntent> {
    let max_cache = parse_size(&args.max_cache)?;
    write_test::plan(&args.target, |info| test(args, info, max_cache, None))
}

fn test(
    args: &Args,
    info: &TargetInfo,
    max_cache: u64,
    time_budget_ns: Option<u64>,
) -> Result<CapacityTest> {
    // A partition hides a fake: check on a read-only open before anything is written.
    let peeked = target::open(
        &args.target,
        &OpenRequest {
            write: false,
            require_direct: false,
        },
    )?;
    let partition_warning =
        super::verify::partition_check(&peeked, &args.target, args.partition_ok)?;
    let mut test = CapacityTest {
        config: ProbeConfig {
            max_cache,
            // Following a cache past --max-cache moves up to 4 GiB more through the
            // low region; in preserve mode that would all go to the journal, so there
            // it is left to a larger --max-cache (the verdict says when a faster cache
            // still answered).
            cache_ceiling: if args.flags.destructive || target::is_sim_spec(&args.target) {
                DEFAULT_CACHE_CEILING
            } else {
                max_cache
            },
            time_budget_ns,
            salt: Stamper::random_salt(),
            restore_guards: true,
            max_bytes: None,
        },
        logical_sector_bytes: info.logical_sector_bytes,
        size_bytes: info.size_bytes,
        destructive: args.flags.destructive,
        partition_warning,
    };
    // The probe stops, incomplete, rather than write more than announced.
    test.config.max_bytes = Some(test.max_bytes());
    Ok(test)
}
