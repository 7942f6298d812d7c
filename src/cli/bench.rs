//! `flashscope bench TARGET`: the everyday speed test — sequential 1 MiB at QD8 and QD1,
//! random 4 KiB at QD32 and QD1, read (and write with `--write`) — with SD speed-class and
//! A1/A2 verdicts and `--expect` checks for CI.

use super::Output;
use crate::cli::write_args::WriteArgs;
use crate::commands::bench::{self, BenchParams};
use crate::report::wear_line;
use crate::session::WriteFlags;
use crate::vocab::error::Verdict;
use crate::workload::bench::parse_expect;
use crate::workload::spec::parse_cpus;
use crate::workload::EngineKind;
use crate::Result;

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
    pub target: crate::device::TargetSpec,
    /// --write runs the write tests too: on a block device or a file each region is saved
    /// to a journal just before it is first overwritten, and everything is restored and
    /// verified afterwards (preserve mode); --destructive overwrites without saving.
    #[command(flatten)]
    pub flags: WriteArgs,
    /// 15 s of test time shared by the tests instead of 60 s.
    #[arg(long)]
    pub quick: bool,
    /// Counting time of each test (plain number = seconds); overrides the default split.
    #[arg(long, value_parser = crate::vocab::units::parse_duration_ns)]
    pub runtime: Option<u64>,
    /// Size of the test region or test file.
    #[arg(long, default_value = "256M", value_parser = crate::vocab::units::parse_size)]
    pub size: u64,
    /// Engine for the queued tests: uring (default, falls back to sync) or sync.
    #[arg(long, default_value = "uring")]
    pub engine: String,
    /// Pin the test thread to these CPUs (e.g. 0).
    #[arg(long)]
    pub cpus: Option<String>,
    /// Checks, e.g. 'seq_write>=10MB/s,rand_read_iops>=1500' (exit 3 when one fails).
    #[arg(long)]
    pub expect: Option<String>,
    /// Repeat the whole set of tests N times, interleaved (each test once per round), so
    /// a drifting device or machine does not masquerade as a difference; each run's
    /// figures are kept (JSON `runs`) for `compare`. Takes N times as long.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,
}

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let b = bench::measure(&args.target, &params(args)?, &WriteFlags::from(&args.flags))?;
    let Some(doc) = b.doc else {
        return Ok(b.verdict);
    };
    let wear = b.wear.then(|| wear_line(&doc));
    out.emit(&doc);
    let verdict = b.verdict;
    if let Some(w) = wear.filter(|_| !out.json) {
        super::say(&w);
    }
    if let Some(f) = b.failure {
        super::say(&format!(
            "flashscope: error: {f} (the figures above cover the tests done until then)"
        ));
    }
    Ok(verdict)
}

/// The test's parameters from the arguments; the bar draws only on a terminal
/// (report::progress), never on stdout.
fn params(args: &Args) -> Result<BenchParams> {
    let expect = args.expect.as_deref().map(parse_expect).transpose()?;
    let size_bytes = args.size;
    let engine = EngineKind::parse(&args.engine)?;
    let cpus = args
        .cpus
        .as_deref()
        .map(parse_cpus)
        .transpose()?
        .unwrap_or_default();
    Ok(BenchParams {
        quick: args.quick,
        runtime_ns: args.runtime,
        size_bytes,
        engine,
        cpus,
        expect,
        runs: args.runs,
        // Only auto caps bench's bytes (from its write budget).
        write_budget: None,
        progress: true,
    })
}
