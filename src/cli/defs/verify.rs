// The clap definition of `verify` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{IoDepth, Plot, Size, TimeBudget, Use};
#[allow(unused_imports)]
use super::write_args::{BudgetArgs, WriteArgs};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `verify`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  flashscope verify sim:sd-16g,size=256M --write
  flashscope verify /dev/sdb --destructive --plot sdb.svg
  flashscope verify /dev/sdb --destructive --resume      continue an interrupted run
  flashscope verify /dev/sdb --write --range 1G+256M      preserve mode: data kept
  flashscope verify /media/card --write --size 4G         through the filesystem
  flashscope verify /media/card --write --pass write      write now; unplug, plug in, then:
  flashscope verify /media/card --write --pass read --resume

Every byte of a device, file or --range is overwritten with stamps:
  --destructive  the data there is lost (the fast way to check a whole card; resumable).
  --write        preserve mode: each 1 MiB is saved to a journal on another device before
                 it is overwritten, and everything is written back and checked at the end
                 (Ctrl-C too; after a crash: flashscope restore JOURNAL). The journal
                 needs as much free space as the range, so it suits a --range rather than
                 a whole card, and it is slower: every byte is read, saved, written, read
                 and restored. Not resumable.
A simulated card or a directory only needs --write (in a directory only new files are
written, removed afterwards unless --keep; a file that holds bad data is kept, and each bad
extent names its file, the offset in it and, by FIEMAP, the device offset). Exit 2 when refused (no --write or
--destructive, journal space, partition, mounted, range), 1 when the target cannot be opened
or read (missing, no read permission, I/O error), 3 when anything did not read back as
written (in preserve mode also bytes the restore wrote back: named by offset, the journal
kept). A directory whose filesystem runs out of room (another writer, a quota) is not a
bad medium: the write pass ends there and what was written is read back (exit 0 when
intact).")]
pub struct Args {
    /// Whole block device, regular file, sim:PRESET[,key=value...], or a directory on a
    /// mounted filesystem.
    pub target: TargetSpec,
    /// --write: sim: targets and directories directly, devices and files in preserve mode
    /// (saved to a journal first, restored afterwards); --destructive: overwrite every byte
    /// of the range of a device or file without saving it.
    #[command(flatten)]
    pub flags: WriteArgs,
    /// Only this range: OFFSET+LENGTH, e.g. 1G+512M.
    #[arg(long, value_name = "OFFSET+LEN", value_parser = range_arg)]
    pub range: Option<(u64, u64)>,
    #[command(flatten)]
    pub size: Size<VerifySize>,
    /// Directory mode: keep the files afterwards (files that hold bad data are always kept).
    #[arg(long)]
    pub keep: bool,
    /// Continue the interrupted run recorded in the state file.
    #[arg(long)]
    pub resume: bool,
    /// Where progress is saved for --resume [default: verify-TARGET.state.json under
    /// $XDG_STATE_HOME/flashscope/ or ~/.local/state/flashscope/, private to the user].
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    #[command(flatten)]
    pub time_budget: TimeBudget<VerifyBudget>,
    #[command(flatten)]
    pub plot: Plot<VerifyPlot>,
    /// Verify a partition although a fake is only visible on the whole device.
    #[arg(long)]
    pub partition_ok: bool,
    /// Run only the write pass (state saved; a directory's files kept) or only the read
    /// pass of a written run; in between the card can be unplugged so that no cache can
    /// answer.
    #[arg(long, value_enum, default_value = "both")]
    pub pass: PassArg,
    #[command(flatten)]
    pub iodepth: IoDepth<VerifyIoDepth>,
}

/// `--pass`: a [`verify::Pass`] on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PassArg {
    Write,
    Read,
    Both,
}

pub struct VerifyBudget;
impl Use for VerifyBudget {
    const HELP: &'static str =
        "Stop after this much device time (e.g. 10m); resume later with --resume";
}

pub struct VerifyPlot;
impl Use for VerifyPlot {
    const HELP: &'static str = "Write an SVG plot of read and write throughput over the position";
}

pub struct VerifySize;
impl Use for VerifySize {
    const HELP: &'static str = "Directory mode: verify this much instead of all free space";
}

pub struct VerifyIoDepth;
impl Use for VerifyIoDepth {
    const HELP: &'static str = "Requests in flight at the device (1-8, 1 MiB each). 2 keeps the device busy while stamps are generated and checked; 1 issues one request at a time, like fio's psync engine. Simulated cards and directories use 1";
    const DEFAULT: Option<&'static str> = Some(IODEPTH);
}

/// `verify --iodepth`'s default (the library's `capacity::verify::DEFAULT_IODEPTH`; the
/// test `shared_options_keep_each_commands_meaning` holds them equal).
pub const IODEPTH: &str = "2";
