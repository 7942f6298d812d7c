//! `fs seq`: sequential write then read of one test file in each mode `dd` offers, so the
//! page cache's share of a figure can be seen side by side with the medium's.

use super::env::{self, drop_all_caches, drop_file_cache};
use super::monitor::{MemSample, Monitor, ProgressCounters};
use super::{io_err, rate, read_all, Pattern, PatternBuf, TestFiles};
use crate::backend::{monotonic_ns, AlignedBuf};
use crate::sys::reopen;
use crate::vocab::units::format_bytes;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How the test file is written, named after what dd does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum SeqMode {
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

impl SeqMode {
    /// Every mode, in the order the table shows them.
    pub const ALL: [SeqMode; 5] = [
        SeqMode::Buffered,
        SeqMode::Fdatasync,
        SeqMode::Dsync,
        SeqMode::Sync,
        SeqMode::Direct,
    ];

    /// The mode's name on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            SeqMode::Buffered => "buffered",
            SeqMode::Fdatasync => "fdatasync",
            SeqMode::Dsync => "dsync",
            SeqMode::Sync => "sync",
            SeqMode::Direct => "direct",
        }
    }

    /// The dd flags that measure the same thing.
    pub fn dd_flags(self) -> &'static str {
        match self {
            SeqMode::Buffered => "(no flags)",
            SeqMode::Fdatasync => "conv=fdatasync",
            SeqMode::Dsync => "oflag=dsync",
            SeqMode::Sync => "oflag=sync",
            SeqMode::Direct => "oflag=direct",
        }
    }

    fn open_flags(self) -> i32 {
        match self {
            SeqMode::Buffered | SeqMode::Fdatasync => 0,
            SeqMode::Dsync => libc::O_DSYNC,
            SeqMode::Sync => libc::O_SYNC,
            SeqMode::Direct => crate::sys::O_DIRECT,
        }
    }
}

/// What `fs seq` is asked to do.
#[derive(Debug, Clone)]
pub struct SeqConfig {
    pub dir: PathBuf,
    /// Size of the test file (a multiple of `block_bytes`).
    pub file_bytes: u64,
    /// Size of each write and read (dd's bs).
    pub block_bytes: u64,
    pub modes: Vec<SeqMode>,
    pub pattern: Pattern,
    /// Drop the whole page cache before cold reads (root only), not just the file's pages.
    pub drop_caches: bool,
    /// Leave the test files in place.
    pub keep: bool,
    /// Interval of the /proc/meminfo sampler (100 ms).
    pub sample_interval: Duration,
    pub seed: u64,
    /// Runs per mode (interleaved across modes); each figure is the median run.
    pub runs: u32,
    /// Bytes of the untimed warm-up file written (and removed) before the first mode,
    /// rounded down to whole blocks; 0 for none. `default_warmup_bytes` gives the default.
    pub warmup_bytes: u64,
}

/// Default warm-up: as large as the test file. Measured on a 2-core VM, a smaller one
/// (16 MiB) left the first 512 MiB mode at 350 MiB/s against 970 MiB/s for the same mode
/// run second: the first large write pays for reclaiming page cache.
pub fn default_warmup_bytes(file_bytes: u64) -> u64 {
    file_bytes
}

/// Default file size: 1 GiB or a tenth of the free space, whichever is smaller, rounded
/// down to whole blocks and at least one block.
pub fn default_file_bytes(free_bytes: Option<u64>, block_bytes: u64) -> u64 {
    let mut size = 1u64 << 30;
    if let Some(free) = free_bytes {
        size = size.min(free / 10);
    }
    let bs = block_bytes.max(1);
    (size / bs * bs).max(bs)
}

/// One timed phase: bytes moved, nanoseconds taken, and when it started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Timing {
    pub bytes: u64,
    pub ns: u64,
    pub bytes_per_s: f64,
    /// Start, in ns since the run started (the timeline's clock).
    pub start_ns: u64,
}

impl Timing {
    fn new(bytes: u64, ns: u64, start_ns: u64) -> Self {
        Timing {
            bytes,
            ns,
            bytes_per_s: rate(bytes, ns),
            start_ns,
        }
    }
}

/// The result of one mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SeqModeResult {
    pub mode: SeqMode,
    /// The dd flags that measure the same thing.
    pub dd: String,
    /// False when the filesystem refused the mode (O_DIRECT); `unsupported_reason` says why.
    pub supported: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<Timing>,
    /// Buffered mode only: how long the fdatasync after the timed write took, i.e. the
    /// work the buffered figure left for later.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_after_write_ns: Option<u64>,
    /// Read with the file's pages dropped first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_read: Option<Timing>,
    /// How the cold read was made cold: "posix_fadvise", "drop_caches" or "O_DIRECT".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_method: Option<String>,
    /// Bytes of the file still in the page cache when the cold read began (mincore; the
    /// largest over the runs); near 0 shows the read was cold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_at_cold_start_bytes: Option<u64>,
    /// Read again right after the cold read, from the page cache (none for direct).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm_read: Option<Timing>,
    /// Runs that were made; `write`, `cold_read` and `warm_read` are each the median run.
    pub runs: u32,
    /// The rate of every run, bytes per second, in the order they ran.
    pub write_runs: Vec<f64>,
    pub cold_read_runs: Vec<f64>,
    pub warm_read_runs: Vec<f64>,
}

/// The median run of one phase (the lower middle one for an even count).
fn median_timing(mut v: Vec<Timing>) -> Option<Timing> {
    let rates: Vec<f64> = v.iter().map(|t| t.bytes_per_s).collect();
    let mid = crate::analysis::stats::median_index(&rates)?;
    Some(v.swap_remove(mid))
}

/// Fold the runs of one mode into one result: each phase's median run, and every run's
/// rate. An unsupported first run stands for the mode.
pub fn combine_runs(runs: Vec<SeqModeResult>) -> Option<SeqModeResult> {
    let first = runs.first()?.clone();
    if !first.supported {
        return Some(first);
    }
    let ok: Vec<&SeqModeResult> = runs.iter().filter(|r| r.supported).collect();
    let rates = |f: fn(&SeqModeResult) -> Option<&Timing>| -> Vec<f64> {
        ok.iter()
            .filter_map(|r| f(r))
            .map(|t| t.bytes_per_s)
            .collect()
    };
    let med = |f: fn(&SeqModeResult) -> Option<&Timing>| -> Option<Timing> {
        median_timing(ok.iter().filter_map(|r| f(r)).cloned().collect())
    };
    let mut syncs: Vec<u64> = ok.iter().filter_map(|r| r.sync_after_write_ns).collect();
    syncs.sort_unstable();
    Some(SeqModeResult {
        write: med(|r| r.write.as_ref()),
        cold_read: med(|r| r.cold_read.as_ref()),
        warm_read: med(|r| r.warm_read.as_ref()),
        sync_after_write_ns: syncs.get(syncs.len().saturating_sub(1) / 2).copied(),
        cached_at_cold_start_bytes: ok.iter().filter_map(|r| r.cached_at_cold_start_bytes).max(),
        runs: ok.len() as u32,
        write_runs: rates(|r| r.write.as_ref()),
        cold_read_runs: rates(|r| r.cold_read.as_ref()),
        warm_read_runs: rates(|r| r.warm_read.as_ref()),
        ..first
    })
}

/// Everything `fs seq` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SeqRun {
    pub results: Vec<SeqModeResult>,
    /// Bytes of the untimed warm-up file (written, synced and removed before the first
    /// mode, so the first mode does not pay for cold allocator and filesystem state);
    /// included in `bytes_written`.
    pub warmup_bytes: u64,
    /// /proc/meminfo and /proc/vmstat every sample interval.
    pub timeline: Vec<MemSample>,
    pub bytes_written: u64,
    pub elapsed_ns: u64,
    /// Why --drop-caches failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_caches_error: Option<String>,
}

/// Check a configuration before anything is written; errors name the value and the fix.
pub fn validate(cfg: &SeqConfig) -> Result<()> {
    if cfg.block_bytes == 0 {
        return Err(Error::usage("--blocksize must be at least 1 byte, e.g. 1M"));
    }
    if cfg.file_bytes < cfg.block_bytes {
        return Err(Error::usage(format!(
            "--size {} is smaller than --blocksize {}: give a size of at least one block",
            format_bytes(cfg.file_bytes),
            format_bytes(cfg.block_bytes)
        )));
    }
    if cfg.file_bytes % cfg.block_bytes != 0 {
        return Err(Error::usage(format!(
            "--size {} is not a whole number of --blocksize {} blocks: give a multiple of --blocksize",
            format_bytes(cfg.file_bytes),
            format_bytes(cfg.block_bytes)
        )));
    }
    if cfg.block_bytes > 1 << 30 {
        return Err(Error::usage(format!(
            "--blocksize {} is more than 1 GiB: give a smaller block size, e.g. 1M",
            format_bytes(cfg.block_bytes)
        )));
    }
    if cfg.modes.is_empty() {
        return Err(Error::usage("no --mode given: name at least one mode"));
    }
    if cfg.runs == 0 || cfg.runs > 100 {
        return Err(Error::usage(format!(
            "--runs {} is out of range: give 1 to 100 runs per mode",
            cfg.runs
        )));
    }
    Ok(())
}

/// The bytes the run will write and read, for progress.
fn planned_bytes(cfg: &SeqConfig) -> u64 {
    cfg.runs as u64
        * cfg
            .modes
            .iter()
            .map(|m| {
                if *m == SeqMode::Direct {
                    2 * cfg.file_bytes
                } else {
                    3 * cfg.file_bytes
                }
            })
            .sum::<u64>()
}

/// Run every mode in turn on a fresh test file in `cfg.dir`. Checks the directory and the
/// free space first; the test files are removed unless `keep`.
pub fn run(cfg: &SeqConfig, progress: Arc<ProgressCounters>) -> Result<SeqRun> {
    validate(cfg)?;
    let mut files = TestFiles::new(env::check_dir(&cfg.dir)?, cfg.keep);
    let dir = files.dir_path().to_path_buf();
    let fs = env::fs_info(&dir)?;
    let need = if cfg.keep {
        // Later runs overwrite the same file, so only one file per mode stays.
        cfg.file_bytes.saturating_mul(cfg.modes.len() as u64)
    } else {
        cfg.file_bytes
    }
    .max(warmup_size(cfg));
    env::check_free_space(&fs, need, "give a smaller --size or another directory")?;
    if fs.free_bytes.is_none() {
        // ramfs reports no size: do not fill RAM past what is available.
        let avail = crate::platform::MemInfo::read().available_bytes;
        if avail > 0 && need > avail / 2 {
            return Err(Error::Refused(format!(
                "{} is in RAM with {} available; {} would fill it: give a smaller --size",
                dir.display(),
                format_bytes(avail),
                format_bytes(need)
            )));
        }
    }
    progress.set_total(planned_bytes(cfg) + warmup_size(cfg));
    let t0 = monotonic_ns();
    let monitor = Monitor::start(progress.clone(), cfg.sample_interval, t0);
    let mut wbuf = PatternBuf::new(cfg.block_bytes as usize, cfg.pattern, cfg.seed);
    let mut rbuf = AlignedBuf::new(cfg.block_bytes as usize);
    let mut bytes_written = 0u64;
    let mut drop_caches_error = None;
    let warmup_bytes = match warm_up(cfg, &mut files, &mut wbuf, &progress) {
        Ok(n) => n,
        Err(e) => {
            drop(monitor);
            return Err(e);
        }
    };
    bytes_written += warmup_bytes;
    // Runs are interleaved across modes (all modes once, then again), so slow drift in
    // the device or the machine does not land on one mode.
    let mut per_mode: Vec<Vec<SeqModeResult>> = vec![Vec::new(); cfg.modes.len()];
    for _ in 0..cfg.runs {
        for (i, &mode) in cfg.modes.iter().enumerate() {
            if per_mode[i].first().is_some_and(|r| !r.supported) {
                continue;
            }
            let r = run_mode(
                cfg,
                mode,
                &mut files,
                t0,
                &mut wbuf,
                &mut rbuf,
                &progress,
                &mut bytes_written,
                &mut drop_caches_error,
            );
            // One test file exists at a time (the free-space check counts one).
            files.remove_now();
            match r {
                Ok(res) => per_mode[i].push(res),
                Err(e) => {
                    drop(monitor);
                    return Err(e);
                }
            }
        }
    }
    let results: Vec<SeqModeResult> = per_mode.into_iter().filter_map(combine_runs).collect();
    let timeline = monitor.finish();
    Ok(SeqRun {
        results,
        warmup_bytes,
        timeline,
        bytes_written,
        elapsed_ns: monotonic_ns().saturating_sub(t0),
        drop_caches_error,
    })
}

fn warmup_size(cfg: &SeqConfig) -> u64 {
    cfg.warmup_bytes / cfg.block_bytes.max(1) * cfg.block_bytes
}

/// Write, sync and remove an untimed file first: the first timed mode would otherwise pay
/// for cold page allocation and filesystem metadata, which biases whichever mode runs first.
fn warm_up(
    cfg: &SeqConfig,
    files: &mut TestFiles,
    wbuf: &mut PatternBuf,
    progress: &ProgressCounters,
) -> Result<u64> {
    if warmup_size(cfg) == 0 {
        return Ok(0);
    }
    progress.set_phase("warm-up");
    let (path, mut f) = files.create_scratch("seq-warmup")?;
    let blocks = warmup_size(cfg) / cfg.block_bytes;
    for i in 0..blocks {
        crate::signals::check()?;
        f.write_all(wbuf.chunk(u64::MAX - i, cfg.block_bytes as usize))
            .map_err(io_err("writing", &path))?;
        progress.add(cfg.block_bytes);
    }
    f.sync_all().map_err(io_err("fsync on", &path))?;
    drop(f);
    files.remove_now();
    Ok(blocks * cfg.block_bytes)
}

fn unsupported(mode: SeqMode, reason: String) -> SeqModeResult {
    SeqModeResult {
        mode,
        dd: mode.dd_flags().to_string(),
        supported: false,
        unsupported_reason: Some(reason),
        write: None,
        sync_after_write_ns: None,
        cold_read: None,
        cold_method: None,
        cached_at_cold_start_bytes: None,
        warm_read: None,
        runs: 0,
        write_runs: Vec::new(),
        cold_read_runs: Vec::new(),
        warm_read_runs: Vec::new(),
    }
}

/// EINVAL on open or first write with O_DIRECT means the filesystem refuses direct I/O.
fn direct_refused(mode: SeqMode, e: &io::Error) -> bool {
    mode == SeqMode::Direct && e.raw_os_error() == Some(libc::EINVAL)
}

#[allow(clippy::too_many_arguments)]
fn run_mode(
    cfg: &SeqConfig,
    mode: SeqMode,
    files: &mut TestFiles,
    t0: u64,
    wbuf: &mut PatternBuf,
    rbuf: &mut AlignedBuf,
    progress: &ProgressCounters,
    bytes_written: &mut u64,
    drop_caches_error: &mut Option<String>,
) -> Result<SeqModeResult> {
    if mode == SeqMode::Direct && cfg.block_bytes % 4096 != 0 {
        return Ok(unsupported(
            mode,
            format!(
                "--blocksize {} is not a multiple of 4 KiB, which O_DIRECT needs",
                format_bytes(cfg.block_bytes)
            ),
        ));
    }
    progress.set_phase(&format!("{} write", mode.name()));
    let blocks = cfg.file_bytes / cfg.block_bytes;
    // Created new (nothing planted at the name is followed or truncated); every open
    // below, the timed one included, goes through this descriptor, never the name.
    let (path, anchor) = files.create(&format!("seq-{}", mode.name()))?;
    let path = path.as_path();
    let start = monotonic_ns();
    let mut file = match reopen(
        &anchor,
        OpenOptions::new()
            .write(true)
            .custom_flags(mode.open_flags()),
    ) {
        Ok(f) => f,
        Err(e) if direct_refused(mode, &e) => {
            return Ok(unsupported(mode, format!("open with O_DIRECT: {e}")));
        }
        Err(e) => return Err(io_err("creating", path)(e)),
    };
    for i in 0..blocks {
        crate::signals::check()?;
        let chunk = wbuf.chunk(i, cfg.block_bytes as usize);
        match file.write_all(chunk) {
            Ok(()) => {}
            Err(e) if i == 0 && direct_refused(mode, &e) => {
                return Ok(unsupported(mode, format!("write with O_DIRECT: {e}")));
            }
            Err(e) => {
                return Err(Error::io(
                    format!(
                        "writing {} at offset {}",
                        path.display(),
                        i * cfg.block_bytes
                    ),
                    e,
                ))
            }
        }
        *bytes_written += cfg.block_bytes;
        progress.add(cfg.block_bytes);
    }
    if mode == SeqMode::Fdatasync {
        file.sync_data().map_err(io_err("fdatasync on", path))?;
    }
    let end = monotonic_ns();
    let write = Timing::new(cfg.file_bytes, end - start, start - t0);
    // Everything on the medium before reading, so the cold read cannot be served by dirty
    // pages; for buffered mode this is the work its figure left undone.
    let sync_start = monotonic_ns();
    file.sync_all().map_err(io_err("fsync on", path))?;
    let sync_ns = monotonic_ns() - sync_start;
    drop(file);

    progress.set_phase(&format!("{} cold read", mode.name()));
    let (mut rfile, method) = if mode == SeqMode::Direct {
        let f = reopen(
            &anchor,
            OpenOptions::new()
                .read(true)
                .custom_flags(crate::sys::O_DIRECT),
        )
        .map_err(io_err("opening with O_DIRECT", path))?;
        (f, "O_DIRECT")
    } else {
        let f = reopen(&anchor, OpenOptions::new().read(true)).map_err(io_err("opening", path))?;
        let mut method = "posix_fadvise";
        if cfg.drop_caches {
            match drop_all_caches() {
                Ok(()) => method = "drop_caches",
                Err(e) => {
                    if drop_caches_error.is_none() {
                        *drop_caches_error = Some(e.to_string());
                    }
                }
            }
        }
        drop_file_cache(&f).map_err(io_err("posix_fadvise(DONTNEED) on", path))?;
        (f, method)
    };
    let cached = if mode == SeqMode::Direct {
        None
    } else {
        env::resident_bytes(&rfile, cfg.file_bytes).ok()
    };
    let start = monotonic_ns();
    crate::signals::check()?;
    let n = read_all(&mut rfile, rbuf, progress).map_err(io_err("reading", path))?;
    let cold = Timing::new(n, monotonic_ns() - start, start - t0);
    drop(rfile);

    let warm = if mode == SeqMode::Direct {
        None
    } else {
        progress.set_phase(&format!("{} warm read", mode.name()));
        let mut f =
            reopen(&anchor, OpenOptions::new().read(true)).map_err(io_err("opening", path))?;
        let start = monotonic_ns();
        crate::signals::check()?;
        let n = read_all(&mut f, rbuf, progress).map_err(io_err("reading", path))?;
        Some(Timing::new(n, monotonic_ns() - start, start - t0))
    };
    Ok(SeqModeResult {
        mode,
        dd: mode.dd_flags().to_string(),
        supported: true,
        unsupported_reason: None,
        write: Some(write),
        sync_after_write_ns: (mode == SeqMode::Buffered).then_some(sync_ns),
        cold_read: Some(cold),
        cold_method: Some(method.to_string()),
        cached_at_cold_start_bytes: cached,
        warm_read: warm,
        runs: 1,
        write_runs: Vec::new(),
        cold_read_runs: Vec::new(),
        warm_read_runs: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(dir: &std::path::Path) -> SeqConfig {
        SeqConfig {
            dir: dir.to_path_buf(),
            file_bytes: 4 << 20,
            block_bytes: 1 << 20,
            modes: SeqMode::ALL.to_vec(),
            pattern: Pattern::Random,
            drop_caches: false,
            keep: false,
            sample_interval: Duration::from_millis(100),
            seed: 1,
            runs: 1,
            warmup_bytes: 4 << 20,
        }
    }

    #[test]
    fn default_size_is_a_tenth_of_free_space_capped_at_1g() {
        assert_eq!(default_file_bytes(Some(100 << 30), 1 << 20), 1 << 30);
        assert_eq!(default_file_bytes(Some(1 << 30), 1 << 20), 102 << 20);
        assert_eq!(default_file_bytes(Some(0), 1 << 20), 1 << 20);
        assert_eq!(default_file_bytes(None, 1 << 20), 1 << 30);
    }

    #[test]
    fn bad_configurations_are_usage_errors() {
        let d = tempfile::tempdir().unwrap();
        let mut c = cfg(d.path());
        c.file_bytes = 3 << 19;
        assert!(validate(&c).unwrap_err().to_string().contains("multiple"));
        c.file_bytes = 1024;
        assert!(validate(&c)
            .unwrap_err()
            .to_string()
            .contains("smaller than --blocksize"));
        c.block_bytes = 0;
        assert_eq!(validate(&c).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn every_mode_runs_on_a_temp_dir_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let run = run(&cfg(d.path()), ProgressCounters::new()).unwrap();
        assert_eq!(run.results.len(), 5);
        assert_eq!(run.warmup_bytes, 4 << 20);
        assert_eq!(run.bytes_written, 6 * (4 << 20));
        for r in &run.results {
            assert!(r.supported, "{r:?}");
            let w = r.write.as_ref().unwrap();
            assert_eq!(w.bytes, 4 << 20);
            assert!(w.ns > 0 && w.bytes_per_s > 0.0);
            assert_eq!(r.cold_read.as_ref().unwrap().bytes, 4 << 20);
            assert_eq!(r.warm_read.is_some(), r.mode != SeqMode::Direct);
            if r.mode != SeqMode::Direct {
                // The cold read began with (almost) none of the file cached.
                assert!(r.cached_at_cold_start_bytes.unwrap() < 1 << 20, "{r:?}");
            }
        }
        assert!(run.results[0].sync_after_write_ns.is_some());
        assert!(!run.timeline.is_empty());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn runs_fold_into_the_median_with_every_rate_kept() {
        let t = |r: f64| Timing {
            bytes: 1,
            ns: 1,
            bytes_per_s: r,
            start_ns: 0,
        };
        let mk = |w: f64, c: f64| SeqModeResult {
            write: Some(t(w)),
            cold_read: Some(t(c)),
            sync_after_write_ns: Some(w as u64),
            ..unsupported(SeqMode::Buffered, String::new())
        };
        let mut a = mk(300.0, 10.0);
        a.supported = true;
        let mut b = mk(100.0, 30.0);
        b.supported = true;
        let mut c = mk(200.0, 20.0);
        c.supported = true;
        let r = combine_runs(vec![a, b, c]).unwrap();
        assert_eq!(r.runs, 3);
        assert_eq!(r.write.unwrap().bytes_per_s, 200.0);
        assert_eq!(r.cold_read.unwrap().bytes_per_s, 20.0);
        assert_eq!(r.write_runs, vec![300.0, 100.0, 200.0]);
        assert_eq!(r.sync_after_write_ns, Some(200));
        assert!(r.warm_read.is_none() && r.warm_read_runs.is_empty());
        let u = combine_runs(vec![unsupported(SeqMode::Direct, "EINVAL".into())]).unwrap();
        assert!(!u.supported && u.runs == 0);
        assert!(combine_runs(vec![]).is_none());
    }

    #[test]
    fn three_runs_per_mode_are_interleaved_and_counted() {
        let d = tempfile::tempdir().unwrap();
        let mut c = cfg(d.path());
        c.file_bytes = 1 << 20;
        c.warmup_bytes = 1 << 20;
        c.modes = vec![SeqMode::Buffered, SeqMode::Fdatasync];
        c.runs = 3;
        let run = run(&c, ProgressCounters::new()).unwrap();
        for r in &run.results {
            assert_eq!(r.runs, 3);
            assert_eq!(r.write_runs.len(), 3);
            assert_eq!(r.warm_read_runs.len(), 3);
        }
        // 1 MiB warm-up + 2 modes × 3 runs × 1 MiB.
        assert_eq!(run.bytes_written, 7 << 20);
        // Interleaved: the fdatasync runs do not all start after the last buffered run.
        let w = |m: usize| run.results[m].write.as_ref().unwrap().start_ns;
        assert!(w(0) > 0 && w(1) > 0);
    }

    #[test]
    fn no_warm_up_when_asked_for_none() {
        let d = tempfile::tempdir().unwrap();
        let mut c = cfg(d.path());
        c.file_bytes = 1 << 20;
        c.warmup_bytes = 0;
        c.modes = vec![SeqMode::Buffered];
        let run = run(&c, ProgressCounters::new()).unwrap();
        assert_eq!(run.warmup_bytes, 0);
        assert_eq!(run.bytes_written, 1 << 20);
    }

    #[test]
    fn direct_with_unaligned_block_is_reported_unsupported() {
        let d = tempfile::tempdir().unwrap();
        let mut c = cfg(d.path());
        c.block_bytes = 1000;
        c.file_bytes = 4000;
        c.modes = vec![SeqMode::Buffered, SeqMode::Direct];
        let run = run(&c, ProgressCounters::new()).unwrap();
        assert!(run.results[0].supported);
        assert!(!run.results[1].supported);
        assert!(run.results[1]
            .unsupported_reason
            .as_ref()
            .unwrap()
            .contains("4 KiB"));
    }
}
