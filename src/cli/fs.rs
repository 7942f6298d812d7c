//! `flashscope fs seq|files|matrix DIR`: measurements through a mounted filesystem, with the
//! page cache's share shown. These write only their own test files in DIR (removed
//! afterwards unless --keep), so they need no --write.

use super::Output;
use crate::fs::analysis::{dirty_peaks, files_inferences, seq_inferences, seq_warnings};
use crate::fs::env::{self, FsInfo};
use crate::fs::files::{self, FilesConfig, FilesRun};
use crate::fs::matrix::{self, MatrixCell, MatrixConfig, MatrixRun, MatrixTest};
use crate::fs::monitor::{throughput_series, ProgressCounters};
use crate::fs::seq::{self, SeqConfig, SeqMode, SeqRun};
use crate::fs::warn::environment_warnings;
use crate::fs::{parse_size_list, Pattern};
use crate::platform::MemInfo;
use crate::report::output_file::OutputFile;
use crate::report::results::{
    CpuGovernor, FilesystemTarget, FsFilesParameters, FsFilesResult, FsMatrixParameters,
    FsMatrixResult, FsSeqParameters, FsSeqResult,
};
use crate::report::svg::{self, AxisFormat, Chart};
use crate::report::table::Table;
use crate::report::{Body, Document, Target};
use crate::vocab::error::EXIT_OK;
use crate::vocab::units::{format_bytes, format_ns, format_rate, parse_size_option};
use crate::vocab::Warning;
use crate::{Error, Result};
use clap::Subcommand;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

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
    pub mode: Vec<SeqMode>,
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
pub fn run(cmd: &FsCommand, out: &Output) -> Result<i32> {
    crate::signals::install(crate::signals::Second::Terminate);
    match cmd {
        FsCommand::Seq(a) => run_seq(a, out),
        FsCommand::Files(a) => run_files(a, out),
        FsCommand::Matrix(a) => run_matrix(a, out),
    }
}

/// The shared progress bar, drawn from the test's counters until dropped.
fn ticker(label: &str, progress: Arc<ProgressCounters>) -> crate::report::progress::Ticker {
    crate::report::progress::Progress::ticking(label, move || (progress.done(), progress.total()))
}

/// The directory as a document target: the filesystem facts plus spec and kind.
fn fs_target(fs: &FsInfo) -> Target {
    Target::Filesystem(FilesystemTarget {
        spec: fs.dir.display().to_string(),
        kind: crate::device::TargetKind::Directory,
        fs: fs.clone(),
    })
}

/// Check the directory and inspect its filesystem, before anything is written.
fn prepare(dir: &Path) -> Result<FsInfo> {
    let abs = env::check_dir(dir)?;
    env::fs_info(&abs)
}

fn announce(out: &Output, text: &str) {
    if !out.json || std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("{text}");
    }
}

fn fs_line(fs: &FsInfo) -> String {
    let mut s = format!("{} ({}", fs.dir.display(), fs.fs_type);
    if let Some(src) = &fs.mount_source {
        s.push_str(&format!(" on {src}"));
    }
    if let Some(free) = fs.free_bytes {
        s.push_str(&format!(", {} free", format_bytes(free)));
    }
    s.push(')');
    s
}

// ---------------------------------------------------------------- fs seq

fn run_seq(a: &SeqArgs, out: &Output) -> Result<i32> {
    let block_bytes = parse_size_option("--blocksize", &a.bs, false)?;
    let fs = prepare(&a.common.dir)?;
    let plot_file = OutputFile::create_opt("--plot", a.plot.as_deref())?;
    let file_bytes = match &a.size {
        Some(s) => parse_size_option("--size", s, false)?,
        None => seq::default_file_bytes(fs.free_bytes, block_bytes),
    };
    let mut modes = Vec::new();
    for m in &a.mode {
        if !modes.contains(m) {
            modes.push(*m);
        }
    }
    let cfg = SeqConfig {
        dir: fs.dir.clone(),
        file_bytes,
        block_bytes,
        modes,
        pattern: a.common.pattern,
        drop_caches: a.drop_caches,
        keep: a.common.keep,
        sample_interval: Duration::from_millis(100),
        seed: a.common.seed,
        runs: a.runs,
        warmup_bytes: match &a.warmup {
            Some(w) => parse_size_option("--warmup", w, true)?,
            None => seq::default_warmup_bytes(file_bytes),
        },
    };
    seq::validate(&cfg)?;
    let mem = MemInfo::read();
    let governors = env::cpu_governors();
    announce(
        out,
        &format!(
            "fs seq: writing {} test file(s) of {} ({} in all, warm-up included) in {} ({} blocks, pattern {}){}",
            cfg.modes.len(),
            format_bytes(file_bytes),
            format_bytes(
                file_bytes
                    .saturating_mul(cfg.modes.len() as u64 * cfg.runs as u64)
                    .saturating_add(cfg.warmup_bytes / block_bytes * block_bytes)
            ),
            fs_line(&fs),
            format_bytes(block_bytes),
            cfg.pattern.name(),
            if cfg.keep {
                ", kept"
            } else {
                ", each removed afterwards"
            }
        ),
    );
    let progress = ProgressCounters::new();
    let run = {
        let _ticker = ticker("fs seq", progress.clone());
        seq::run(&cfg, progress)?
    };
    let mut warnings = environment_warnings(&fs, cfg.pattern, &governors);
    warnings.extend(seq_warnings(
        &run.results,
        file_bytes,
        mem.total_bytes,
        run.drop_caches_error.as_deref(),
    ));
    let parameters = FsSeqParameters {
        file_bytes,
        block_bytes,
        modes: cfg.modes.clone(),
        pattern: cfg.pattern,
        drop_caches: cfg.drop_caches,
        keep: cfg.keep,
        sample_interval_ns: cfg.sample_interval.as_nanos() as u64,
        runs: cfg.runs,
        warmup_bytes: run.warmup_bytes,
        ram_bytes: mem.total_bytes,
        cpu_governors: governors
            .iter()
            .map(|(policy, governor)| CpuGovernor {
                policy: policy.clone(),
                governor: governor.clone(),
            })
            .collect(),
    };
    let mut plot = None;
    if let Some(file) = &plot_file {
        file.write(seq_plot(&run, &fs).as_bytes())?;
        plot = Some(file.path().display().to_string());
    }
    let mut doc = Document::new(
        fs_target(&fs),
        Body::FsSeq(FsSeqResult {
            parameters,
            samples: run.results.clone(),
            timeline: run.timeline.clone(),
            dirty_peak_bytes: dirty_peaks(&run.timeline),
            plot,
        }),
    );
    doc.inferences = seq_inferences(&run.results, file_bytes, fs.memory_backed);
    doc.bytes_written = run.bytes_written;
    doc.elapsed_ns = run.elapsed_ns;
    doc.warnings = warnings;
    out.emit(&doc);
    Ok(EXIT_OK)
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

fn mib(v: u64) -> f64 {
    v as f64 / 1048576.0
}

fn seq_plot(run: &SeqRun, fs: &FsInfo) -> String {
    let secs = |ns: u64| ns as f64 / 1e9;
    let tp: Vec<(f64, f64)> = throughput_series(&run.timeline)
        .into_iter()
        .map(|(t, r)| (secs(t), r / 1048576.0))
        .collect();
    let series = |f: fn(&crate::fs::monitor::MemSample) -> u64| -> Vec<(f64, f64)> {
        run.timeline
            .iter()
            .map(|s| (secs(s.t_ns), mib(f(s))))
            .collect()
    };
    // A dashed line where each phase (mode × write / cold read / warm read) begins,
    // labelled on the top panel.
    let mut markers: Vec<(f64, String)> = Vec::new();
    for r in &run.results {
        for (what, t) in [
            ("write", &r.write),
            ("cold read", &r.cold_read),
            ("warm read", &r.warm_read),
        ] {
            if let Some(t) = t {
                markers.push((secs(t.start_ns), format!("{} {what}", r.mode.name())));
            }
        }
    }
    let end = run.timeline.last().map(|s| secs(s.t_ns)).unwrap_or(1.0);
    let panel = |title: &str, y_label: &str, labelled: bool| {
        let mut c = Chart::new(title, "time (s)", y_label)
            .size(900.0, 340.0)
            .x_range(0.0, end)
            .y_format(AxisFormat::Short);
        for (t, label) in &markers {
            c = c.marker(*t, if labelled { label } else { "" });
        }
        c
    };
    svg::stack(&[
        panel(
            &format!(
                "fs seq on {}: throughput (all modes in turn)",
                fs.dir.display()
            ),
            "MiB/s",
            true,
        )
        .series("read + write", tp),
        panel(
            "page cache: Dirty and Writeback (/proc/meminfo)",
            "MiB",
            false,
        )
        .series("Dirty", series(|s| s.dirty_bytes))
        .series("Writeback", series(|s| s.writeback_bytes)),
        panel("page cache: Cached", "MiB", false).series("Cached", series(|s| s.cached_bytes)),
    ])
}

// ---------------------------------------------------------------- fs files

fn run_files(a: &FilesArgs, out: &Output) -> Result<i32> {
    let sizes = match &a.sizes {
        Some(s) => parse_size_list(s, "--sizes")?,
        None => files::default_sizes(),
    };
    let total_bytes = parse_size_option("--total", &a.total, false)?;
    let fs = prepare(&a.common.dir)?;
    let plot_file = OutputFile::create_opt("--plot", a.plot.as_deref())?;
    let cfg = FilesConfig {
        dir: fs.dir.clone(),
        sizes,
        total_bytes,
        pattern: a.common.pattern,
        drop_caches: a.drop_caches,
        keep: a.common.keep,
        seed: a.common.seed,
    };
    files::validate(&cfg)?;
    let governors = env::cpu_governors();
    announce(
        out,
        &format!(
            "fs files: writing {} as files of {} sizes in {}",
            format_bytes(total_bytes),
            cfg.sizes.len(),
            fs_line(&fs)
        ),
    );
    let progress = ProgressCounters::new();
    let run = {
        let _ticker = ticker("fs files", progress.clone());
        files::run(&cfg, progress)?
    };
    let mut warnings = environment_warnings(&fs, cfg.pattern, &governors);
    for s in &cfg.sizes {
        if *s > total_bytes {
            warnings.push(Warning::TotalBelowSize {
                file_bytes: *s,
                total_bytes,
            });
        }
    }
    if let Some(e) = &run.drop_caches_error {
        warnings.push(Warning::DropCachesFailed { reason: e.clone() });
    }
    let parameters = FsFilesParameters {
        sizes: cfg.sizes.clone(),
        total_bytes,
        pattern: cfg.pattern,
        drop_caches: cfg.drop_caches,
        keep: cfg.keep,
    };
    let mut plot = None;
    if let Some(file) = &plot_file {
        file.write(files_plot(&run, &fs).as_bytes())?;
        plot = Some(file.path().display().to_string());
    }
    let mut doc = Document::new(
        fs_target(&fs),
        Body::FsFiles(FsFilesResult {
            parameters,
            samples: run.results.clone(),
            plot,
        }),
    );
    doc.inferences = files_inferences(&run.results);
    doc.bytes_written = run.bytes_written;
    doc.elapsed_ns = run.elapsed_ns;
    doc.warnings = warnings;
    out.emit(&doc);
    Ok(EXIT_OK)
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

fn files_plot(run: &FilesRun, fs: &FsInfo) -> String {
    let pts = |f: fn(&files::FilesSizeResult) -> f64| -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = run
            .results
            .iter()
            .map(|r| (r.file_bytes as f64, f(r)))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let panel = |title: &str, y_label: &str| {
        Chart::new(title, "file size", y_label)
            .size(900.0, 400.0)
            .log2_x()
            .log_y()
            .x_format(AxisFormat::Bytes)
            .y_format(AxisFormat::Short)
    };
    svg::stack(&[
        panel(
            &format!("fs files on {}: throughput per file size", fs.dir.display()),
            "MiB/s",
        )
        .series("write", pts(|r| r.write_bytes_per_s / 1048576.0))
        .series("cold read", pts(|r| r.read_bytes_per_s / 1048576.0)),
        panel("files per second", "files/s")
            .series("write", pts(|r| r.write_files_per_s))
            .series("cold read", pts(|r| r.read_files_per_s)),
    ])
}

// ---------------------------------------------------------------- fs matrix

fn run_matrix(a: &MatrixArgs, out: &Output) -> Result<i32> {
    let max_file = match &a.max_file {
        Some(s) => parse_size_option("--max-file", s, false)?,
        None => 512 << 20,
    };
    let max_record = match &a.max_record {
        Some(s) => parse_size_option("--max-record", s, false)?,
        None => 16 << 20,
    };
    let file_sizes: Vec<u64> = matrix::default_file_sizes()
        .into_iter()
        .filter(|f| *f <= max_file)
        .collect();
    if file_sizes.is_empty() {
        return Err(Error::usage(format!(
            "--max-file {} is below the smallest matrix file size of 64 KiB: give 64K or more",
            format_bytes(max_file)
        )));
    }
    let record_sizes: Vec<u64> = matrix::default_record_sizes()
        .into_iter()
        .filter(|r| *r <= max_record)
        .collect();
    if record_sizes.is_empty() {
        return Err(Error::usage(format!(
            "--max-record {} is below the smallest record size of 4 KiB: give 4K or more",
            format_bytes(max_record)
        )));
    }
    let fs = prepare(&a.common.dir)?;
    let csv_file = OutputFile::create_opt("--csv", a.csv.as_deref())?;
    let mut plot_files = Vec::new();
    if let Some(prefix) = &a.plot {
        for t in MatrixTest::ALL {
            let path = PathBuf::from(format!("{}-{}.svg", prefix.display(), t.name()));
            plot_files.push((t, OutputFile::create("--plot", &path)?));
        }
    }
    let cfg = MatrixConfig {
        dir: fs.dir.clone(),
        file_sizes,
        record_sizes,
        sync: a.sync,
        fsync: a.fsync,
        direct: a.direct,
        pattern: a.common.pattern,
        keep: a.common.keep,
        seed: a.common.seed,
    };
    matrix::validate(&cfg)?;
    let mem = MemInfo::read();
    let governors = env::cpu_governors();
    let cells = matrix::cell_list(&cfg.file_sizes, &cfg.record_sizes);
    announce(
        out,
        &format!(
            "fs matrix: {} cells, files up to {} in {}",
            cells.len(),
            format_bytes(max_file.min(512 << 20)),
            fs_line(&fs)
        ),
    );
    let progress = ProgressCounters::new();
    let run = {
        let _ticker = ticker("fs matrix", progress.clone());
        matrix::run(&cfg, progress)?
    };
    let mut warnings = environment_warnings(&fs, cfg.pattern, &governors);
    let largest = cfg.file_sizes.iter().copied().max().unwrap_or(0);
    if !cfg.direct && mem.total_bytes > 0 && largest < mem.total_bytes {
        warnings.push(Warning::SmallerThanRam {
            file_bytes: largest,
            ram_bytes: mem.total_bytes,
            matrix: true,
        });
    }
    let parameters = FsMatrixParameters {
        file_sizes: cfg.file_sizes.clone(),
        record_sizes: cfg.record_sizes.clone(),
        sync: cfg.sync,
        fsync: cfg.fsync,
        direct: cfg.direct,
        pattern: cfg.pattern,
        keep: cfg.keep,
        ram_bytes: mem.total_bytes,
    };
    let mut csv = None;
    if let Some(file) = &csv_file {
        file.write(matrix::to_csv(&run.cells).as_bytes())?;
        csv = Some(file.path().display().to_string());
    }
    let mut plots = None;
    if !plot_files.is_empty() {
        let mut written = Vec::new();
        for (t, file) in &plot_files {
            file.write(matrix_heatmap(&run, &cfg, *t).as_bytes())?;
            written.push(file.path().display().to_string());
        }
        plots = Some(written);
    }
    let mut doc = Document::new(
        fs_target(&fs),
        Body::FsMatrix(FsMatrixResult {
            parameters,
            samples: run.cells.clone(),
            csv,
            plots,
        }),
    );
    doc.bytes_written = run.bytes_written;
    doc.elapsed_ns = run.elapsed_ns;
    doc.warnings = warnings;
    out.emit(&doc);
    Ok(EXIT_OK)
}

/// One test's rates, a row per file size and a column per record size (`None`: no cell).
fn matrix_grid(
    cells: &[MatrixCell],
    file_sizes: &[u64],
    record_sizes: &[u64],
    t: MatrixTest,
) -> Vec<Vec<Option<f64>>> {
    file_sizes
        .iter()
        .map(|f| {
            record_sizes
                .iter()
                .map(|r| {
                    cells
                        .iter()
                        .find(|c| c.file_bytes == *f && c.record_bytes == *r)
                        .map(|c| c.get(t).bytes_per_s as f64)
                })
                .collect()
        })
        .collect()
}

fn matrix_heatmap(run: &MatrixRun, cfg: &MatrixConfig, t: MatrixTest) -> String {
    let cols: Vec<String> = cfg.record_sizes.iter().map(|r| format_bytes(*r)).collect();
    let rows: Vec<String> = cfg.file_sizes.iter().map(|f| format_bytes(*f)).collect();
    svg::heatmap(
        &format!(
            "fs matrix: {}{}",
            t.name(),
            if cfg.direct {
                " (O_DIRECT)"
            } else if cfg.sync {
                " (O_SYNC)"
            } else {
                ""
            }
        ),
        "record size (log 2)",
        "file size (log 2)",
        &cols,
        &rows,
        &matrix_grid(&run.cells, &cfg.file_sizes, &cfg.record_sizes, t),
        format_rate,
    )
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
        let grid = matrix_grid(&m.samples, &cfg.file_sizes, &cfg.record_sizes, t);
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
