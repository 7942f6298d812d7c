//! `flashscope verify TARGET`: write stamps over the whole surface (or `--range`), read
//! everything back and list what did not survive. `verify DIR` does the same through a
//! mounted filesystem with 1 GiB files. The run is the library's
//! (`commands::verify::measure`); here the arguments become its parameters and the
//! result is drawn.

use super::Output;
use crate::capacity::verify as verify_io;
use crate::cli::write_args::WriteArgs;
use crate::commands::verify::{self, VerifyParams};
use crate::report::output_file::OutputFile;
use crate::session::WriteFlags;
use crate::vocab::error::Verdict;
use crate::vocab::units::parse_size;
use crate::vocab::units::Given;
use crate::{Error, Result};
use std::path::PathBuf;

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
    pub target: crate::device::TargetSpec,
    /// --write: sim: targets and directories directly, devices and files in preserve mode
    /// (saved to a journal first, restored afterwards); --destructive: overwrite every byte
    /// of the range of a device or file without saving it.
    #[command(flatten)]
    pub flags: WriteArgs,
    /// Only this range: OFFSET+LENGTH, e.g. 1G+512M.
    #[arg(long, value_name = "OFFSET+LEN", value_parser = range_arg)]
    pub range: Option<(u64, u64)>,
    /// Directory mode: verify this much instead of all free space.
    #[arg(long, value_name = "SIZE", value_parser = crate::vocab::units::parse_size)]
    pub size: Option<u64>,
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
    /// Stop after this long (e.g. 10m); resume later with --resume.
    #[arg(long, value_name = "DURATION", value_parser = crate::cli::write_args::given(crate::vocab::units::parse_duration_ns))]
    pub time_budget: Option<Given<u64>>,
    /// Write an SVG plot of read and write throughput over the position.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Verify a partition although a fake is only visible on the whole device.
    #[arg(long)]
    pub partition_ok: bool,
    /// Run only the write pass (state saved; a directory's files kept) or only the read
    /// pass of a written run; in between the card can be unplugged so that no cache can
    /// answer.
    #[arg(long, value_enum, default_value = "both")]
    pub pass: PassArg,
    /// Requests in flight at the device (1-8, 1 MiB each). 2 keeps the device busy while
    /// stamps are generated and checked; 1 issues one request at a time, like fio's psync
    /// engine. Simulated cards and directories use 1.
    #[arg(long, value_name = "N", default_value_t = verify_io::DEFAULT_IODEPTH as u32,
          value_parser = clap::value_parser!(u32).range(1..=verify_io::MAX_IODEPTH as i64))]
    pub iodepth: u32,
}

/// clap's parser of `--range`: offset and length in bytes (a bad one is refused before
/// anything).
fn range_arg(text: &str) -> std::result::Result<(u64, u64), String> {
    parse_range(text).map_err(|e| e.to_string())
}

/// Parse `OFFSET+LEN`.
pub fn parse_range(text: &str) -> Result<(u64, u64)> {
    let bad = || {
        Error::usage(format!(
            "--range '{text}' is not OFFSET+LENGTH, e.g. 1G+512M or 0+64M"
        ))
    };
    let (o, l) = text.split_once('+').ok_or_else(bad)?;
    let o = parse_size(o.trim()).map_err(|_| bad())?;
    let l = parse_size(l.trim()).map_err(|_| bad())?;
    if l == 0 {
        return Err(Error::usage(format!("--range '{text}' has length 0")));
    }
    Ok((o, l))
}

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let params = VerifyParams {
        target: args.target.clone(),
        flags: WriteFlags::from(&args.flags),
        range: args.range,
        size: args.size,
        keep: args.keep,
        resume: args.resume,
        state: args.state.clone(),
        time_budget_ns: args.time_budget.as_ref().map(|g| g.value),
        plot: OutputFile::create_opt("--plot", args.plot.as_deref())?,
        partition_ok: args.partition_ok,
        pass: args.pass.into(),
        iodepth: args.iodepth,
    };
    super::emit_finished(verify::measure(&params)?, out)
}

/// `--pass`: a [`verify::Pass`] on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PassArg {
    Write,
    Read,
    Both,
}

impl From<PassArg> for verify::Pass {
    fn from(p: PassArg) -> Self {
        match p {
            PassArg::Write => verify::Pass::Write,
            PassArg::Read => verify::Pass::Read,
            PassArg::Both => verify::Pass::Both,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_name_the_bad_value() {
        assert_eq!(parse_range("1G+512M").unwrap(), (1 << 30, 512 << 20));
        assert!(parse_range("1G").unwrap_err().to_string().contains("1G"));
        assert!(parse_range("x+1M").is_err());
        assert!(parse_range("0+0").is_err());
    }
}
