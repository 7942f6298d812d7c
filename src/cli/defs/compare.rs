// The clap definition of `compare` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{OutputFile, Use};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `compare`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  flashscope bench sim:sd-16g --write --runtime 10s --json > a.json
  flashscope bench sim:sd-16g,write_bw=13.2M --write --runtime 10s --json > b.json
  flashscope compare a.json b.json
  flashscope compare a.json b.json -o compare.html
  fio --name=w --rw=randwrite --bs=4k --iodepth=32 --ioengine=io_uring --direct=1 --size=256M --runtime=10 --time_based --filename=/media/card/fio.tmp --output-format=json > fio.json
  flashscope compare fio.json b.json
  flashscope compare 12 15
  flashscope compare mmc:0x15/0x0100/8GTF4R/0x9bd0e311 mmc:0x1b/0x534d/EB1QT/0x2e1a4f07

Each SIDE is a saved `flashscope bench --json` or `io --json` document or fio's
--output-format=json output (- reads standard input once), a run of the history by its
id (12 or #12, as `flashscope history list` shows it), or a device of the history by its
identity (a word with ':', as `history list` shows it): its stored bench runs are the
repetitions. Figures are paired by
workload (rw, block size, queue depth, jobs); each side is compared with the first.
The 95 % interval of B / A comes from each side's runs when both repeated the tests
(bench --runs N), else from the per-second samples by a circular block bootstrap (the
seconds are correlated); the method is printed with each figure. fio's JSON keeps no
per-second rates: a fio side needs repeated jobs (stonewall) for an interval.
Figures of different block size, queue depth, jobs, direction or direct vs buffered
I/O are refused unless --force. Exit codes: 0 compared, 1 a file cannot be read or -o
written, 2 a side that is not a complete document or fio JSON (named), a run compared
with itself, fewer than two sides, or figures that are not comparable.")]
pub struct Args {
    /// Saved bench / io `--json` documents, fio JSON outputs, history ids or devices of the
    /// history; the first is the baseline.
    #[arg(value_name = "SIDE")]
    pub sides: Vec<String>,
    /// Compare figures that measure different things (block size, queue depth, jobs,
    /// direction, direct vs buffered): each such row says what differs.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: OutputFile<CompareOutput>,
}

pub struct CompareOutput;
impl Use for CompareOutput {
    const HELP: &'static str = "Also write the comparison as a self-contained HTML page (with a chart of the differences and their intervals)";
}
