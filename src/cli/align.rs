//! `flashscope align TARGET`: find the erase block and page size from read timings.

use super::Output;
use crate::commands::align::{self, AlignParams, Priority};
use crate::vocab::error::Verdict;
use crate::Result;

/// Arguments of `align`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope align sim:sd-16g\n  flashscope align /dev/mmcblk0 --plot align.svg\n  flashscope align sim:usb-32g --blocksize 4K --count 4 --json\n  flashscope align /dev/mmcblk0 --no-realtime\n\nRead-only. Reads a block just before, across and just after every multiple of each\nalignment (2^n and 3 × 2^n) and repeats where the answer is still in doubt, until it is\nconfident or the time budget ends. Each alignment is read at least 8 times and stands for\nits fast reads, so a busy machine (late reads) makes answers inconclusive, not wrong; a\nnoisy_environment warning names the cause (load, steal time, stalled reads). As root\n(or with CAP_SYS_NICE) it reads at real-time priority (SCHED_FIFO 10), so other\nprograms do not preempt a timed read; the read and time budgets bound how long it\nholds it (--no-realtime: normal priority)."
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: crate::device::TargetSpec,
    /// Read size; repeat for several (default: 2, 8 and 32 logical sectors, i.e. 1K, 4K, 16K).
    #[arg(long = "blocksize", short = 'b', value_name = "SIZE", value_parser = crate::vocab::units::parse_size)]
    pub blocksize: Vec<u64>,
    /// Stop repeating after this long (device time; virtual for sim:).
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = crate::vocab::units::parse_duration_ns)]
    pub time_budget: u64,
    /// Exactly N full rounds instead of adaptive repetition (each round reads every
    /// alignment at least 8 times: fewer positions are repeated).
    #[arg(long, value_name = "N")]
    pub count: Option<u32>,
    /// Distinct positions per alignment, the same for every alignment (one with fewer
    /// multiples on the device is not measured).
    #[arg(long, default_value_t = crate::commands::align::DEFAULT_POSITIONS, value_name = "N")]
    pub positions: usize,
    /// Write an SVG plot of boundary cost against alignment.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
    /// Insist on real-time priority (SCHED_FIFO 10), which align takes by default where
    /// permitted: a refusal (without root or CAP_SYS_NICE) is then a warning, and the run
    /// goes on at normal priority.
    #[arg(long, conflicts_with = "no_realtime")]
    pub realtime: bool,
    /// Read at normal priority (by default align reads at real-time priority, SCHED_FIFO
    /// 10, where permitted, so other programs do not preempt a timed read).
    #[arg(long)]
    pub no_realtime: bool,
}

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let plot = args.plot.as_deref();
    out.emit(&align::run(&args.target, &params(args)?, plot)?);
    Ok(Verdict::Ok)
}

/// The test's parameters from the arguments.
fn params(args: &Args) -> Result<AlignParams> {
    Ok(AlignParams {
        block_sizes: args.blocksize.clone(),
        positions: args.positions,
        count: args.count,
        time_budget_ns: args.time_budget,
        priority: if args.no_realtime {
            Priority::Normal
        } else if args.realtime {
            Priority::Realtime
        } else {
            Priority::Auto
        },
    })
}
