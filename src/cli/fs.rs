//! `flashscope fs seq|files|matrix DIR`: measurements through a mounted filesystem, with the
//! page cache's share shown. These write only their own test files in DIR (removed
//! afterwards unless --keep), so they need no --write.

use super::Output;
use crate::commands::fs::{self as command, CommonParams, FilesParams, MatrixParams, SeqParams};
use crate::fs::seq::SeqMode;
use crate::fs::{files, parse_size_list, Pattern};
use crate::vocab::error::Verdict;
use crate::vocab::units::parse_size_option;
use crate::Result;
use clap::Subcommand;
use std::path::PathBuf;

/// Filesystem subcommands.
#[derive(Debug, Subcommand)]
pub enum FsCommand {
    /// Sequential write and read of one file in each dd mode (buffered, fdatasync, dsync,
    /// sync, direct), cold and warm, with the page cache sampled every 100 ms.
    #[command(after_help = SEQ_HELP)]
    Seq(SeqArgs),
    /// File-size sweep: write --total as files of each size (create + write + fsync),
    /// read them back cold; MB/s and files/s per size.
    #[command(after_help = FILES_HELP)]
    Files(FilesArgs),
    /// iozone-style matrix: file sizes × record sizes; write, rewrite, read, reread,
    /// random read, random write.
    #[command(after_help = MATRIX_HELP)]
    Matrix(MatrixArgs),
}

const SEQ_HELP: &str = "\
Examples:
  flashscope fs seq /mnt/emmc                     all five modes, default size
  flashscope fs seq /mnt/sd --size 256M --plot seq.svg
  flashscope fs seq /data --mode buffered,fdatasync --drop-caches --json

The default size is 1 GiB or a tenth of the free space, whichever is smaller; a file
smaller than RAM lets the page cache answer buffered writes and warm reads, and a warning
says so. Exit codes: 0 ok, 1 runtime error (missing or unwritable directory, I/O error),
2 usage error or not enough free space (nothing written).";

const FILES_HELP: &str = "\
Examples:
  flashscope fs files /mnt/sd                        16 MiB down to 1 KiB, 100 MiB each
  flashscope fs files /mnt/sd --sizes 1M,64K,4K --total 16M --plot files.svg

Exit codes: 0 ok, 1 runtime error, 2 usage error (e.g. a zero or unparsable --sizes entry)
or not enough free space.";

const MATRIX_HELP: &str = "\
Examples:
  flashscope fs matrix /mnt/sd --max-file 64M --csv matrix.csv --plot matrix
  flashscope fs matrix /mnt/sd --sync --max-file 16M      (iozone -o, as vendor guides run it)
  flashscope fs matrix /mnt/sd --direct --max-file 16M    (iozone -I: no page cache)

Like iozone -a, file sizes run 64 KiB … 512 MiB and record sizes 4 KiB … 16 MiB (record ≤
file). Nothing is flushed between tests unless --sync, --fsync or --direct: cells with files
smaller than RAM show the page cache. --plot PREFIX writes PREFIX-<test>.svg heatmaps.";

/// Arguments common to the filesystem tests.
#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    /// Directory on the filesystem to test (its own test files are created and removed).
    pub dir: PathBuf,
    /// Data written: random (incompressible), zeros (what dd if=/dev/zero writes), ones or
    /// a byte like 0x5a.
    #[arg(long, default_value = "random", value_parser = Pattern::parse)]
    pub pattern: Pattern,
    /// Leave the test files in DIR.
    #[arg(long)]
    pub keep: bool,
    /// Seed for the random pattern and random offsets.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Arguments of `fs seq`.
#[derive(Debug, clap::Args)]
pub struct SeqArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Test file size (default: 1 GiB or 10% of the free space, whichever is smaller).
    #[arg(long, allow_hyphen_values = true)]
    pub size: Option<String>,
    /// Block size of each write and read (dd's bs).
    #[arg(
        long = "blocksize",
        short = 'b',
        alias = "bs",
        value_name = "SIZE",
        default_value = "1M",
        allow_hyphen_values = true
    )]
    pub bs: String,
    /// Modes to run, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["buffered", "fdatasync", "dsync", "sync", "direct"])]
    pub mode: Vec<ModeArg>,
    /// Drop the whole page cache before cold reads (root; writes /proc/sys/vm/drop_caches).
    #[arg(long)]
    pub drop_caches: bool,
    /// Runs per mode, interleaved across modes; the table shows the median and the range.
    #[arg(long, default_value_t = 1)]
    pub runs: u32,
    /// Untimed warm-up write before the first mode (default: the test file's size; 0 for
    /// none), so the first mode does not pay for reclaiming the page cache.
    #[arg(long, allow_hyphen_values = true)]
    pub warmup: Option<String>,
    /// Write an SVG of throughput and Dirty/Writeback/Cached over time.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// Arguments of `fs files`.
#[derive(Debug, clap::Args)]
pub struct FilesArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// File sizes, comma-separated (default 16M,8M,…,2K,1K).
    #[arg(long, allow_hyphen_values = true)]
    pub sizes: Option<String>,
    /// Bytes written per file size.
    #[arg(long, default_value = "100M", allow_hyphen_values = true)]
    pub total: String,
    /// Drop the whole page cache before each read pass (root).
    #[arg(long)]
    pub drop_caches: bool,
    /// Write an SVG line plot (log-2 x axis) of MB/s and files/s per size.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// Arguments of `fs matrix`.
#[derive(Debug, clap::Args)]
pub struct MatrixArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Largest file size (default 512M).
    #[arg(long, allow_hyphen_values = true)]
    pub max_file: Option<String>,
    /// Largest record size (default 16M).
    #[arg(long, allow_hyphen_values = true)]
    pub max_record: Option<String>,
    /// Open files with O_SYNC (iozone -o).
    #[arg(long)]
    pub sync: bool,
    /// Include fsync in the write timings (iozone -e).
    #[arg(long)]
    pub fsync: bool,
    /// Open files with O_DIRECT (iozone -I): no page cache in any cell (--direct=1/0 too).
    #[arg(long, value_name = "0|1", default_value = "0", num_args = 0..=1, require_equals = true, default_missing_value = "1", value_parser = super::bool01_arg)]
    pub direct: bool,
    /// Write the matrix as CSV, one row per cell.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write one SVG heatmap per test as PREFIX-<test>.svg.
    #[arg(long, value_name = "PREFIX")]
    pub plot: Option<PathBuf>,
}

/// Run one `fs` subcommand; returns the exit code.
pub fn run(cmd: &FsCommand, out: &Output) -> Result<Verdict> {
    crate::signals::install(crate::signals::Second::Terminate);
    let mut announce = |text: &str| {
        if !out.json || std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            super::say(text);
        }
    };
    let ran = match cmd {
        FsCommand::Seq(a) => command::seq(&seq_params(a)?, &mut announce),
        FsCommand::Files(a) => command::files(&files_params(a)?, &mut announce),
        FsCommand::Matrix(a) => command::matrix(&matrix_params(a)?, &mut announce),
    };
    // A signal stops the test between blocks and its files are removed: the run ends as
    // every command stopped by a signal does, 128 + its number, not as a failure.
    let doc = match (ran, crate::signals::pending()) {
        (Ok(doc), _) => doc,
        (Err(e), Some(signal)) => {
            super::say(&format!("flashscope: {e}"));
            return Ok(Verdict::Stopped { signal });
        }
        (Err(e), None) => return Err(e),
    };
    out.emit(&doc);
    Ok(Verdict::Ok)
}

fn common(a: &CommonArgs) -> CommonParams {
    CommonParams {
        dir: a.dir.clone(),
        pattern: a.pattern,
        keep: a.keep,
        seed: a.seed,
    }
}

/// An optional size option's value (`allow_zero`: 0 is a value, e.g. no warm-up).
fn size_opt(name: &str, text: &Option<String>, allow_zero: bool) -> Result<Option<u64>> {
    text.as_deref()
        .map(|s| parse_size_option(name, s, allow_zero))
        .transpose()
}

// ---------------------------------------------------------------- fs seq

/// `--mode`: a [`SeqMode`] on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// Plain write(2) into the page cache; the clock stops when the last write returns.
    Buffered,
    /// Buffered, then fdatasync before the clock stops (`conv=fdatasync`).
    Fdatasync,
    /// O_DSYNC: each write returns once its data is on the medium (`oflag=dsync`).
    Dsync,
    /// O_SYNC: as dsync, and metadata too (`oflag=sync`).
    Sync,
    /// O_DIRECT: bypass the page cache (`oflag=direct`).
    Direct,
}

impl From<ModeArg> for SeqMode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Buffered => SeqMode::Buffered,
            ModeArg::Fdatasync => SeqMode::Fdatasync,
            ModeArg::Dsync => SeqMode::Dsync,
            ModeArg::Sync => SeqMode::Sync,
            ModeArg::Direct => SeqMode::Direct,
        }
    }
}

fn seq_params(a: &SeqArgs) -> Result<SeqParams> {
    Ok(SeqParams {
        block_bytes: parse_size_option("--blocksize", &a.bs, false)?,
        file_bytes: size_opt("--size", &a.size, false)?,
        warmup_bytes: size_opt("--warmup", &a.warmup, true)?,
        common: common(&a.common),
        modes: a.mode.iter().map(|&m| SeqMode::from(m)).collect(),
        drop_caches: a.drop_caches,
        runs: a.runs,
        plot: a.plot.clone(),
    })
}

// ---------------------------------------------------------------- fs files

fn files_params(a: &FilesArgs) -> Result<FilesParams> {
    Ok(FilesParams {
        sizes: match &a.sizes {
            Some(s) => parse_size_list(s, "--sizes")?,
            None => files::default_sizes(),
        },
        total_bytes: parse_size_option("--total", &a.total, false)?,
        common: common(&a.common),
        drop_caches: a.drop_caches,
        plot: a.plot.clone(),
    })
}

// ---------------------------------------------------------------- fs matrix

fn matrix_params(a: &MatrixArgs) -> Result<MatrixParams> {
    Ok(MatrixParams {
        max_file: size_opt("--max-file", &a.max_file, false)?,
        max_record: size_opt("--max-record", &a.max_record, false)?,
        common: common(&a.common),
        sync: a.sync,
        fsync: a.fsync,
        direct: a.direct,
        csv: a.csv.clone(),
        plot_prefix: a.plot.clone(),
    })
}
