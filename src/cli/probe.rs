//! `flashscope probe TARGET --destructive`: is the card fake, and how much of it is real?

use super::{Outcome, Output};
use crate::probe::write_test::{self, capacity::CapacityParams};
use crate::target::write::{Budgets, WriteFlags};
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
    let params = params(args)?;
    let finished = write_test::measure(&args.target, &params, &args.flags, &args.budgets)?;
    Outcome::from(finished).emit(out)
}

/// The probe's parameters from the arguments.
fn params(args: &Args) -> Result<CapacityParams> {
    let max_cache_bytes = parse_size(&args.max_cache).map_err(|_| {
        Error::usage(format!(
            "--max-cache '{}' is not a size: use e.g. 1G or 256M",
            args.max_cache
        ))
    })?;
    Ok(CapacityParams {
        max_cache_bytes,
        partition_ok: args.partition_ok,
    })
}
