//! `fs seq|files|matrix`: measurements through a mounted filesystem, with the page cache's
//! share shown. Each checks the directory, runs its test (writing only its own test files,
//! removed afterwards unless `keep`), writes the files asked for and builds the document.
//! It never prints: what it is about to write goes to the caller's `announce`.

use crate::fs::analysis::{dirty_peaks, files_inferences, seq_inferences, seq_warnings};
use crate::fs::env::{self, fs_line, FsInfo};
use crate::fs::files::{self, FilesConfig};
use crate::fs::matrix::{self, MatrixConfig, MatrixTest};
use crate::fs::monitor::ProgressCounters;
use crate::fs::seq::{self, SeqConfig, SeqMode};
use crate::fs::warn::environment_warnings;
use crate::fs::Pattern;
use crate::platform::MemInfo;
use crate::report::charts;
use crate::report::output_file::OutputFile;
use crate::report::results::{
    CpuGovernor, FilesystemTarget, FsFilesParameters, FsFilesResult, FsMatrixParameters,
    FsMatrixResult, FsSeqParameters, FsSeqResult,
};
use crate::report::{Body, Document, Target};
use crate::vocab::units::format_bytes;
use crate::vocab::Warning;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What every filesystem test takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommonParams {
    /// Directory on the filesystem to test.
    pub dir: PathBuf,
    pub pattern: Pattern,
    /// Leave the test files in the directory.
    pub keep: bool,
    /// Seed for the random pattern and random offsets.
    pub seed: u64,
}

/// `fs seq`'s parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeqParams {
    pub common: CommonParams,
    /// Test file size; `None`: 1 GiB or a tenth of the free space, whichever is smaller.
    pub file_bytes: Option<u64>,
    pub block_bytes: u64,
    /// Modes in the order asked (a repeated one runs once).
    pub modes: Vec<SeqMode>,
    pub drop_caches: bool,
    pub runs: u32,
    /// Untimed warm-up write; `None`: the test file's size.
    pub warmup_bytes: Option<u64>,
    /// Where to write the SVG of throughput and the page cache over time.
    pub plot: Option<PathBuf>,
}

/// `fs files`' parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilesParams {
    pub common: CommonParams,
    pub sizes: Vec<u64>,
    pub total_bytes: u64,
    pub drop_caches: bool,
    pub plot: Option<PathBuf>,
}

/// `fs matrix`' parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixParams {
    pub common: CommonParams,
    /// Largest file size (`None`: 512 MiB).
    pub max_file: Option<u64>,
    /// Largest record size (`None`: 16 MiB).
    pub max_record: Option<u64>,
    pub sync: bool,
    pub fsync: bool,
    pub direct: bool,
    pub csv: Option<PathBuf>,
    /// Heat maps are written as PREFIX-<test>.svg.
    pub plot_prefix: Option<PathBuf>,
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
    env::fs_info(abs.path())
}

/// Run `fs seq`: each dd mode's write and reads with the page cache sampled.
pub fn seq(p: &SeqParams, announce: &mut dyn FnMut(&str)) -> Result<Document> {
    let block_bytes = p.block_bytes;
    let fs = prepare(&p.common.dir)?;
    let plot_file = OutputFile::create_opt("--plot", p.plot.as_deref())?;
    let file_bytes = p
        .file_bytes
        .unwrap_or_else(|| seq::default_file_bytes(fs.free_bytes, block_bytes));
    let mut modes = Vec::new();
    for m in &p.modes {
        if !modes.contains(m) {
            modes.push(*m);
        }
    }
    let cfg = SeqConfig {
        dir: fs.dir.clone(),
        file_bytes,
        block_bytes,
        modes,
        pattern: p.common.pattern,
        drop_caches: p.drop_caches,
        keep: p.common.keep,
        sample_interval: Duration::from_millis(100),
        seed: p.common.seed,
        runs: p.runs,
        warmup_bytes: p
            .warmup_bytes
            .unwrap_or_else(|| seq::default_warmup_bytes(file_bytes)),
    };
    seq::validate(&cfg)?;
    let mem = MemInfo::read();
    let governors = env::cpu_governors();
    announce(&format!(
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
    ));
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
        file.write(charts::fs_seq(&run.results, &run.timeline, &fs.dir).as_bytes())?;
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
    Ok(doc)
}

/// Run `fs files`: the file-size sweep.
pub fn files(p: &FilesParams, announce: &mut dyn FnMut(&str)) -> Result<Document> {
    let total_bytes = p.total_bytes;
    let fs = prepare(&p.common.dir)?;
    let plot_file = OutputFile::create_opt("--plot", p.plot.as_deref())?;
    let cfg = FilesConfig {
        dir: fs.dir.clone(),
        sizes: p.sizes.clone(),
        total_bytes,
        pattern: p.common.pattern,
        drop_caches: p.drop_caches,
        keep: p.common.keep,
        seed: p.common.seed,
    };
    files::validate(&cfg)?;
    let governors = env::cpu_governors();
    announce(&format!(
        "fs files: writing {} as files of {} sizes in {}",
        format_bytes(total_bytes),
        cfg.sizes.len(),
        fs_line(&fs)
    ));
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
        file.write(charts::fs_files(&run.results, &fs.dir).as_bytes())?;
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
    Ok(doc)
}

/// Run `fs matrix`: file sizes × record sizes, each of the six tests.
pub fn matrix(p: &MatrixParams, announce: &mut dyn FnMut(&str)) -> Result<Document> {
    let max_file = p.max_file.unwrap_or(512 << 20);
    let max_record = p.max_record.unwrap_or(16 << 20);
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
    let fs = prepare(&p.common.dir)?;
    let csv_file = OutputFile::create_opt("--csv", p.csv.as_deref())?;
    let mut plot_files = Vec::new();
    if let Some(prefix) = &p.plot_prefix {
        for t in MatrixTest::ALL {
            let path = PathBuf::from(format!("{}-{}.svg", prefix.display(), t.name()));
            plot_files.push((t, OutputFile::create("--plot", &path)?));
        }
    }
    let cfg = MatrixConfig {
        dir: fs.dir.clone(),
        file_sizes,
        record_sizes,
        sync: p.sync,
        fsync: p.fsync,
        direct: p.direct,
        pattern: p.common.pattern,
        keep: p.common.keep,
        seed: p.common.seed,
    };
    matrix::validate(&cfg)?;
    let mem = MemInfo::read();
    let governors = env::cpu_governors();
    let cells = matrix::cell_list(&cfg.file_sizes, &cfg.record_sizes);
    announce(&format!(
        "fs matrix: {} cells, files up to {} in {}",
        cells.len(),
        format_bytes(max_file.min(512 << 20)),
        fs_line(&fs)
    ));
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
    let mut result = FsMatrixResult {
        parameters: FsMatrixParameters {
            file_sizes: cfg.file_sizes.clone(),
            record_sizes: cfg.record_sizes.clone(),
            sync: cfg.sync,
            fsync: cfg.fsync,
            direct: cfg.direct,
            pattern: cfg.pattern,
            keep: cfg.keep,
            ram_bytes: mem.total_bytes,
        },
        samples: run.cells.clone(),
        csv: None,
        plots: None,
    };
    if let Some(file) = &csv_file {
        file.write(matrix::to_csv(&run.cells).as_bytes())?;
        result.csv = Some(file.path().display().to_string());
    }
    if !plot_files.is_empty() {
        let mut written = Vec::new();
        for (t, file) in &plot_files {
            file.write(charts::fs_matrix(&result, *t).as_bytes())?;
            written.push(file.path().display().to_string());
        }
        result.plots = Some(written);
    }
    let mut doc = Document::new(fs_target(&fs), Body::FsMatrix(result));
    doc.bytes_written = run.bytes_written;
    doc.elapsed_ns = run.elapsed_ns;
    doc.warnings = warnings;
    Ok(doc)
}
