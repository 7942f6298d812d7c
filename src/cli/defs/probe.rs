// The clap definition of `probe` (see [`super`]: no crate path but `crate::cli::values`).

#[allow(unused_imports)]
use super::write_args::{BudgetArgs, WriteArgs};
#[allow(unused_imports)]
use crate::cli::values::*;

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
bracketed (write_cache_bytes). A cache faster than the medium (reads of fresh stamps
come quicker than the medium's) is followed up to 4 GiB; one that still answers there
gives NOT PROVEN (exit 1), never an OK. A cache as slow as the medium of up to the smaller
of 1 GiB and a sixteenth of the device is always ruled out (a 16 GiB card: 1 GiB written);
an OK names the size ruled out and is never confident: a larger cache as slow as the
medium is not ruled out (raise --max-cache). The banner's byte count is never exceeded: the
probe stops, incomplete, first. The first and last MiB (partition tables) are never
written. With --write every overwritten region is saved to a journal first and restored
and verified at the end. Exit 3 when the device is fake or damaged.")]
pub struct Args {
    /// Whole block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    #[command(flatten)]
    pub flags: WriteArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
    /// The largest controller write cache to push out before calling a device honest (an
    /// OK says a larger one is not ruled out; up to 4 times this is written behind a cache).
    /// Default 1G; when the timing shows no cache faster than the medium, the filler stops
    /// after 40 s of writing, but never before it has ruled out a cache of the smaller of
    /// 1 GiB and a sixteenth of the device (at least 256 MiB); the OK names the size.
    #[arg(long, value_name = "SIZE", value_parser = max_cache_arg)]
    pub max_cache: Option<u64>,
    /// Probe a partition although a fake is only visible on the whole device.
    #[arg(long)]
    pub partition_ok: bool,
}
