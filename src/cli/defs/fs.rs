// The clap definition of `fs` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{BlockSize, Fsync, PatternOpt, Plot, Size, Sync, Use};
#[allow(unused_imports)]
use crate::cli::values::*;

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
  flashscope fs matrix /mnt/sd --max-file 64M --csv matrix.csv --plot-prefix matrix
  flashscope fs matrix /mnt/sd --sync --max-file 16M      (iozone -o, as vendor guides run it)
  flashscope fs matrix /mnt/sd --direct --max-file 16M    (iozone -I: no page cache)

Like iozone -a, file sizes run 64 KiB … 512 MiB and record sizes 4 KiB … 16 MiB (record ≤
file). Nothing is flushed between tests unless --sync, --fsync or --direct: cells with files
smaller than RAM show the page cache. --plot-prefix PREFIX writes PREFIX-<test>.svg heatmaps.";

/// Arguments common to the filesystem tests.
#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    /// Directory on the filesystem to test (its own test files are created and removed).
    pub dir: PathBuf,
    #[command(flatten)]
    pub pattern: PatternOpt<FsPattern>,
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
    #[command(flatten)]
    pub size: Size<SeqSize>,
    #[command(flatten)]
    pub bs: BlockSize<SeqBlockSize>,
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
    #[command(flatten)]
    pub plot: Plot<SeqPlot>,
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
    #[command(flatten)]
    pub plot: Plot<FilesPlot>,
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
    #[command(flatten)]
    pub sync: Sync<MatrixSync>,
    #[command(flatten)]
    pub fsync: Fsync<MatrixFsync>,
    /// Open files with O_DIRECT (iozone -I): no page cache in any cell (--direct=1/0 too).
    #[arg(long, value_name = "0|1", default_value = "0", num_args = 0..=1, require_equals = true, default_missing_value = "1", value_parser = bool01_arg)]
    pub direct: bool,
    /// Write the matrix as CSV, one row per cell.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write one SVG heatmap per test as PREFIX-<test>.svg (six files; `--plot PREFIX`,
    /// its name until 0.1, still works).
    #[arg(long, value_name = "PREFIX", alias = "plot")]
    pub plot_prefix: Option<PathBuf>,
}

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

pub struct SeqBlockSize;
impl Use for SeqBlockSize {
    const HELP: &'static str = "Block size of each write and read (dd's bs)";
    const DEFAULT: Option<&'static str> = Some(SEQ_BLOCKSIZE);
}

/// `fs seq --blocksize`'s default.
pub const SEQ_BLOCKSIZE: &str = "1M";

pub struct SeqPlot;
impl Use for SeqPlot {
    const HELP: &'static str = "Write an SVG of throughput and Dirty/Writeback/Cached over time";
}

pub struct FilesPlot;
impl Use for FilesPlot {
    const HELP: &'static str = "Write an SVG line plot (log-2 x axis) of MB/s and files/s per size";
}

pub struct FsPattern;
impl Use for FsPattern {
    const HELP: &'static str = "Data written: random (incompressible), zeros (what dd if=/dev/zero writes), ones or a byte like 0x5a";
    const DEFAULT: Option<&'static str> = Some("random");
}

pub struct SeqSize;
impl Use for SeqSize {
    const HELP: &'static str =
        "Test file size (default: 1 GiB or 10% of the free space, whichever is smaller)";
}

pub struct MatrixSync;
impl Use for MatrixSync {
    const HELP: &'static str =
        "Open files with O_SYNC (iozone -o); --sync=none is the default, without it";
    const REQUIRE_EQUALS: bool = true;
}

pub struct MatrixFsync;
impl Use for MatrixFsync {
    const HELP: &'static str =
        "Include an fsync of each file in the write timings (iozone -e); --fsync=0 leaves it out";
    const REQUIRE_EQUALS: bool = true;
}
