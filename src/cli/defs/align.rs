// The clap definition of `align` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{BlockSizes, Plot, Positions, TimeBudget, Use};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `align`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope align sim:sd-16g\n  flashscope align /dev/mmcblk0 --plot align.svg\n  flashscope align sim:usb-32g --blocksize 4K --count 4 --json\n  flashscope align /dev/mmcblk0 --no-realtime\n\nRead-only. Reads a block just before, across and just after every multiple of each\nalignment (2^n and 3 × 2^n) and repeats where the answer is still in doubt, until it is\nconfident or the time budget ends. Each alignment is read at least 8 times and stands for\nits fast reads, so a busy machine (late reads) makes answers inconclusive, not wrong; a\nnoisy_environment warning names the cause (load, steal time, stalled reads). As root\n(or with CAP_SYS_NICE) it reads at real-time priority (SCHED_FIFO 10), so other\nprograms do not preempt a timed read; the read and time budgets bound how long it\nholds it (--no-realtime: normal priority)."
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    #[command(flatten)]
    pub blocksize: BlockSizes<ReadSizes>,
    #[command(flatten)]
    pub time_budget: TimeBudget<AlignBudget>,
    /// Exactly N full rounds instead of adaptive repetition (each round reads every
    /// alignment at least 8 times: fewer positions are repeated).
    #[arg(long, value_name = "N")]
    pub count: Option<u32>,
    #[command(flatten)]
    pub positions: Positions<AlignPositions>,
    #[command(flatten)]
    pub plot: Plot<AlignPlot>,
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

/// `align --time-budget`'s default.
pub const TIME_BUDGET: &str = "60s";

pub struct ReadSizes;
impl Use for ReadSizes {
    const HELP: &'static str = "Read size; repeat for several [default: 2, 8 and 32 logical \
        sectors: 1K, 4K and 16K on a 512-byte-sector device]";
}

pub struct AlignBudget;
impl Use for AlignBudget {
    const HELP: &'static str = "Stop repeating after this much device time (virtual for \
        sim:); what is still in doubt then is inconclusive";
    const DEFAULT: Option<&'static str> = Some(TIME_BUDGET);
}

/// `align --positions`' default (the library's `commands::align::DEFAULT_POSITIONS`; the
/// test `align_defaults_are_one_constant` holds them equal).
pub const POSITIONS: &str = "4";

pub struct AlignPositions;
impl Use for AlignPositions {
    const HELP: &'static str = "Distinct positions per alignment, the same for every alignment (one with fewer multiples on the device is not measured)";
    const DEFAULT: Option<&'static str> = Some(POSITIONS);
}

pub struct AlignPlot;
impl Use for AlignPlot {
    const HELP: &'static str = "Write an SVG plot of boundary cost against alignment";
}
