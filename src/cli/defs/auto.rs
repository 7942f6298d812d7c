// The clap definition of `auto` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{OutputFile, TimeBudget, Use};
#[allow(unused_imports)]
use super::write_args::{BudgetArgs, WriteArgs};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `auto`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  flashscope auto sim:sd-16g
  flashscope auto sim:fake-64g --write
  flashscope auto /dev/mmcblk0 --verbose
  flashscope auto /dev/mmcblk0 --json > card.json
  flashscope auto /dev/mmcblk0 --write -o card.html
  flashscope auto /dev/sdb --write --label 'U3 V30 A2'

Read-only unless --write is given. Runs align to find the geometry (and with --write the
fake-capacity probe, open erase blocks, the FAT area, a write-cache test of at most 256 MiB
and a short bench, each fed the erase block align found), then prints a short
verdict: real capacity, classes, geometry, and the sfdisk and mkfs lines that fit it
(DEVICE is the whole card, PARTITION the partition sfdisk makes). The classes an SD
card's SSR claims, or --label for a card or stick whose label is all there is, are
checked against the bench; without --write they are \"not measured\". --verbose adds each
step's measurements and the reason for every line; -o FILE.html writes the run's report
(every step's document with its charts, as `flashscope report` does). Exit 3 when the
probe finds a fake or a claimed class is not met. --time-budget and --write-budget are
the whole run's: each step gets what is left; a step they no longer cover is skipped, and
the verdict block says which.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    #[command(flatten)]
    pub time_budget: TimeBudget<AutoBudget>,
    /// Write budget of the whole run (e.g. 512M): each writing step gets what is left as its
    /// cap; once it is spent the remaining steps are skipped (said so).
    #[arg(long, value_name = "SIZE", value_parser = given(parse_size))]
    pub write_budget: Option<Given<u64>>,
    /// `--write` also runs the write tests (the fake-capacity probe and the open erase
    /// blocks), each through the write-safety policy.
    #[command(flatten)]
    pub flags: WriteArgs,
    /// Also print each step's measurements (align, probe, open-au) and the reason for every
    /// advice line.
    #[arg(long)]
    pub verbose: bool,
    #[command(flatten)]
    pub output: OutputFile<AutoOutput>,
    /// The class marks printed on the card or stick, e.g. "U3 V30 A2" (C2 C4 C6 C10 U1 U3
    /// V6 V10 V30 V60 V90 A1 A2), checked with --write against a short bench [default: the
    /// marks an SD card's SSR register claims].
    #[arg(long, value_name = "MARKS")]
    pub label: Option<String>,
}

pub struct AutoBudget;
impl Use for AutoBudget {
    const HELP: &'static str =
        "Time budget of the whole run, in device time (virtual for sim:): each step gets what \
        is left, and a step that no longer fits is skipped (said so) [default: 30s for align, \
        the write steps unbounded]";
}

pub struct AutoOutput;
impl Use for AutoOutput {
    const HELP: &'static str = "Also write this run's HTML report (auto's verdict and every step's document with its charts) to FILE, as `flashscope report` does";
}
