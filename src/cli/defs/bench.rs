// The clap definition of `bench` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{Cpus, Engine, Size, Use};
#[allow(unused_imports)]
use super::write_args::{BudgetArgs, WriteArgs};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  flashscope bench sim:sd-16g --write
  flashscope bench /dev/mmcblk0                        read tests only
  flashscope bench /dev/mmcblk0 --write                saves the test region, restores it
  flashscope bench /media/card --write                 uses a 256 MiB test file there
  flashscope bench /dev/sdb --destructive --expect 'seq_write>=10MB/s,rand_read_iops>=1500'

Metrics for --expect: seq_read, seq_write (1 MiB QD8), seq_read_q1, seq_write_q1,
rand_read, rand_write (4 KiB QD32), rand_read_q1, rand_write_q1; each as bandwidth
(MB/s, MiB/s, ...), with _iops (a count) or _p99 (a duration), e.g. rand_write_iops>=500,
rand_read_q1_p99<=5ms. Exit codes: 0 ok, 1 runtime error, 2 usage or refused, 3 an --expect
check failed.")]
pub struct Args {
    /// Block device, regular file, directory (a test file is made there), or sim:PRESET.
    pub target: TargetSpec,
    /// --write runs the write tests too: on a block device or a file each region is saved
    /// to a journal just before it is first overwritten, and everything is restored and
    /// verified afterwards (preserve mode); --destructive overwrites without saving.
    #[command(flatten)]
    pub flags: WriteArgs,
    /// 15 s of test time shared by the tests instead of 60 s.
    #[arg(long)]
    pub quick: bool,
    /// Counting time of each test (plain number = seconds); overrides the default split.
    #[arg(long, value_parser = parse_duration_ns)]
    pub runtime: Option<u64>,
    #[command(flatten)]
    pub size: Size<BenchSize>,
    #[command(flatten)]
    pub engine: Engine<BenchEngine>,
    #[command(flatten)]
    pub cpus: Cpus<BenchCpus>,
    /// Checks, e.g. 'seq_write>=10MB/s,rand_read_iops>=1500' (exit 3 when one fails).
    #[arg(long)]
    pub expect: Option<String>,
    /// Repeat the whole set of tests N times, interleaved (each test once per round), so
    /// a drifting device or machine does not masquerade as a difference; each run's
    /// figures are kept (JSON `runs`) for `compare`. Takes N times as long.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,
}

pub struct BenchSize;
impl Use for BenchSize {
    const HELP: &'static str = "Size of the test region or test file";
    const DEFAULT: Option<&'static str> = Some(SIZE);
}

/// `bench --size`'s default.
pub const SIZE: &str = "256M";

pub struct BenchEngine;
impl Use for BenchEngine {
    const HELP: &'static str = "Engine for the queued tests: uring (falls back to sync) or sync";
    const DEFAULT: Option<&'static str> = Some("uring");
}

pub struct BenchCpus;
impl Use for BenchCpus {
    const HELP: &'static str = "Pin the test thread to these CPUs (e.g. 0)";
}
