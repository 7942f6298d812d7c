// The clap definition of `serve` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{Cpus, Use};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `sim serve`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  mkdir -p /tmp/card && flashscope sim serve sim:sd-16g /tmp/card --loop --cpus 1
      serves /tmp/card/flash.img and prints the loop device (e.g. /dev/loop3)
  cat /tmp/card/stats     requests served, model time added, server overhead
  kill -INT PID           detaches the loop device, unmounts, prints the totals

Each request takes the model's time, spent for real, after the previous one ends; the
model is told the host's queue depth (an A2 card's command queue overlaps), and replies
leave ahead by the served path's own round trip, measured at start, so a client sees the
model's figures. Pin the server with --cpus for the best timing accuracy.")]
pub struct Args {
    /// The simulated card: sim:PRESET[,key=value...] (see `flashscope sim list`).
    pub spec: TargetSpec,
    /// An empty directory to mount on; the card appears as MOUNTPOINT/flash.img.
    pub mountpoint: PathBuf,
    /// Attach a loop device with direct I/O and print its path on stdout (needs root).
    #[arg(long = "loop")]
    pub attach_loop: bool,
    #[command(flatten)]
    pub cpu: Cpus<ServeCpu>,
    /// Spin (instead of sleeping) for this last part of every wait.
    #[arg(long, value_name = "TIME", default_value = "50us", value_parser = parse_duration_ns)]
    pub spin: u64,
    /// Do not ask for real-time (SCHED_FIFO) priority; by default the server asks for it
    /// and runs without it if refused.
    #[arg(long)]
    pub no_realtime: bool,
}

pub struct ServeCpu;
impl Use for ServeCpu {
    const HELP: &'static str =
        "Pin the server's threads to this CPU, one number (sched_setaffinity)";
    const ALIASES: &'static [&'static str] = &["cpu"];
}
