//! `flashscope fs seq|files|matrix DIR`: measurements through a mounted filesystem, with the
//! page cache's share shown. These write only their own test files in DIR (removed
//! afterwards unless --keep), so they need no --write.

use super::Output;
use crate::commands::fs::{
    self as command, fs_line, CommonParams, FilesParams, MatrixParams, SeqParams,
};
use crate::fs::env::FsInfo;
use crate::fs::matrix::MatrixTest;
use crate::fs::seq::{self, SeqMode};
use crate::fs::{files, parse_size_list, Pattern};
use crate::report::table::Table;
use crate::report::{Body, Document, Target};
use crate::vocab::error::Verdict;
use crate::vocab::units::{format_bytes, format_ns, format_rate, parse_size_option};
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
            eprintln!("{text}");
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
            eprintln!("flashscope: {e}");
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

/// The median rate, with the range of the runs when there was more than one.
fn rate_cell(t: Option<&seq::Timing>, runs: &[f64]) -> String {
    let Some(t) = t else {
        return "-".into();
    };
    let median = format_rate(t.bytes_per_s);
    if runs.len() < 2 {
        return median;
    }
    let lo = runs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = runs.iter().copied().fold(0.0, f64::max);
    format!("{median} ({}–{})", format_rate(lo), format_rate(hi))
}

/// The filesystem of an `fs` document's target (`None` for a document of another kind).
fn fs_of(d: &Document) -> Option<&FsInfo> {
    match &d.target {
        Target::Filesystem(t) => Some(&t.fs),
        _ => None,
    }
}

/// `fs seq`'s text from its document: the verdict, the filesystem, one row per dd mode.
pub fn render_seq(d: &Document) -> String {
    let (Body::FsSeq(seq), Some(fs)) = (&d.body, fs_of(d)) else {
        return String::new();
    };
    let (file, bs) = (seq.parameters.file_bytes, seq.parameters.block_bytes);
    let mut s = String::new();
    let inf = |k: &str| d.inferences.get(k).and_then(|i| i.as_u64());
    let ratio = d
        .inferences
        .get("cache_inflation")
        .and_then(|i| i.value.as_ref())
        .and_then(|v| v.as_f64());
    let synced = match d.inferences.get("sustained_write_bytes_per_s") {
        Some(i) if i.status == crate::vocab::Status::Tentative => "synced; tentative, small file",
        _ => "synced",
    };
    match (inf("sustained_write_bytes_per_s"), ratio) {
        (Some(w), Some(r)) => s.push_str(&format!(
            "sustained write {} ({synced}); buffered dd would report {:.1} x that; cold read {}\n",
            format_rate(w as f64),
            r,
            inf("cold_read_bytes_per_s")
                .map(|v| format_rate(v as f64))
                .unwrap_or_else(|| "-".into())
        )),
        (Some(w), None) => s.push_str(&format!(
            "sustained write {} ({synced})\n",
            format_rate(w as f64)
        )),
        _ => s.push_str(&format!(
            "no sustained write figure: {}\n",
            d.inferences
                .get("sustained_write_bytes_per_s")
                .map(|i| i.evidence.as_str())
                .unwrap_or("no synced mode ran")
        )),
    }
    s.push_str(&format!(
        "{}: {} file, {} blocks{}, {} written in {}\n\n",
        fs_line(fs),
        format_bytes(file),
        format_bytes(bs),
        match seq.samples.iter().map(|r| r.runs).max() {
            Some(n) if n > 1 => format!(", median of {n} runs (range)"),
            _ => String::new(),
        },
        format_bytes(d.bytes_written),
        format_ns(d.elapsed_ns as f64)
    ));
    let peaks = &seq.dirty_peak_bytes;
    let mut t = Table::new(&[
        "mode",
        "dd flags",
        "write",
        "dirty peak",
        "cold read",
        "warm read",
        "note",
    ])
    .align(1, crate::report::table::Align::Left)
    .align(6, crate::report::table::Align::Left);
    for r in &seq.samples {
        let note = if !r.supported {
            format!(
                "unsupported: {}",
                r.unsupported_reason.clone().unwrap_or_default()
            )
        } else if let Some(ns) = r.sync_after_write_ns {
            format!(
                "fsync afterwards took {}; cold by {}",
                format_ns(ns as f64),
                r.cold_method.clone().unwrap_or_default()
            )
        } else {
            format!("cold by {}", r.cold_method.clone().unwrap_or_default())
        };
        t.row(vec![
            r.mode.name().into(),
            r.dd.clone(),
            rate_cell(r.write.as_ref(), &r.write_runs),
            peaks
                .get(&format!("{} write", r.mode.name()))
                .map(|b| format_bytes(*b))
                .unwrap_or_else(|| "-".into()),
            rate_cell(r.cold_read.as_ref(), &r.cold_read_runs),
            rate_cell(r.warm_read.as_ref(), &r.warm_read_runs),
            note,
        ]);
    }
    s.push_str(&t.render());
    s.push_str(
        "\ndirty peak: the most Dirty + Writeback (/proc/meminfo, whole system, 100 ms samples) while the write ran\n",
    );
    s
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

/// `fs files`' text from its document: the small-file verdict and one row per file size.
pub fn render_files(d: &Document) -> String {
    let (Body::FsFiles(files), Some(fs)) = (&d.body, fs_of(d)) else {
        return String::new();
    };
    let mut s = String::new();
    match d.inferences.get("small_file_write_ratio") {
        Some(i) if i.value.is_some() => s.push_str(&format!("{}\n", i.evidence)),
        _ => s.push_str("file-size sweep\n"),
    }
    s.push_str(&format!(
        "{}: {} written in {}\n\n",
        fs_line(fs),
        format_bytes(d.bytes_written),
        format_ns(d.elapsed_ns as f64)
    ));
    let mut t = Table::new(&[
        "file size",
        "files",
        "write",
        "write files/s",
        "cold read",
        "read files/s",
    ]);
    for r in &files.samples {
        t.row(vec![
            format_bytes(r.file_bytes),
            r.files.to_string(),
            format_rate(r.write_bytes_per_s),
            format!("{:.0}", r.write_files_per_s),
            format_rate(r.read_bytes_per_s),
            format!("{:.0}", r.read_files_per_s),
        ]);
    }
    s.push_str(&t.render());
    s
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

/// `fs matrix`' text from its document: one table per test, file size down, record across.
pub fn render_matrix(d: &Document) -> String {
    let (Body::FsMatrix(m), Some(fs)) = (&d.body, fs_of(d)) else {
        return String::new();
    };
    let cfg = &m.parameters;
    let mut s = format!(
        "iozone-style matrix, {} cells{}: {} written in {}\n{}\n",
        m.samples.len(),
        if cfg.direct {
            " with O_DIRECT"
        } else if cfg.sync {
            " with O_SYNC"
        } else if cfg.fsync {
            " with fsync in the write timings"
        } else {
            ""
        },
        format_bytes(d.bytes_written),
        format_ns(d.elapsed_ns as f64),
        fs_line(fs)
    );
    for t in MatrixTest::ALL {
        s.push_str(&format!(
            "\n{} (MiB/s), file size down, record size across\n",
            t.name()
        ));
        let mut header = vec!["file".to_string()];
        header.extend(cfg.record_sizes.iter().map(|r| format_bytes(*r)));
        let h: Vec<&str> = header.iter().map(|x| x.as_str()).collect();
        let mut table = Table::new(&h);
        let grid = m.grid(t);
        for (f, row) in cfg.file_sizes.iter().zip(grid) {
            let mut cells = vec![format_bytes(*f)];
            cells.extend(row.iter().map(|v| {
                v.map(|v| format!("{:.1}", v / 1048576.0))
                    .unwrap_or_default()
            }));
            table.row(cells);
        }
        s.push_str(&table.render());
    }
    s
}
