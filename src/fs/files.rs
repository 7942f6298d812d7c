//! `fs files`: the file-size sweep of Windows FlashBench. For each file size, write a total
//! amount as files of that size (create + write + fsync each), then read them back cold;
//! shows how throughput collapses as files get small.

use super::env::{self, drop_all_caches, drop_file_cache};
use super::monitor::ProgressCounters;
use super::{io_err, powers_of_two_down, rate, read_all, test_name, Pattern, PatternBuf};
use crate::backend::{monotonic_ns, AlignedBuf};
use crate::sys::dir::Dir;
use crate::vocab::units::format_bytes;
use crate::{Error, Result};
use rustix::fs::OFlags;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Largest write or read call; bigger files are written in chunks of this size.
const CHUNK: u64 = 1 << 20;

/// Default sizes: 16 MiB down to 1 KiB, powers of two.
pub fn default_sizes() -> Vec<u64> {
    powers_of_two_down(16 << 20, 1024)
}

/// What `fs files` is asked to do.
#[derive(Debug, Clone)]
pub struct FilesConfig {
    pub dir: PathBuf,
    /// File sizes, in the order they run.
    pub sizes: Vec<u64>,
    /// Bytes to write per size (as `total / size` files; at least one file).
    pub total_bytes: u64,
    pub pattern: Pattern,
    pub drop_caches: bool,
    pub keep: bool,
    pub seed: u64,
}

/// The result for one file size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FilesSizeResult {
    pub file_bytes: u64,
    pub files: u64,
    /// Bytes written (and read back) for this size.
    pub write_bytes: u64,
    /// Time to create, write and fsync every file.
    pub write_ns: u64,
    /// Time to open and read every file, cold.
    pub read_ns: u64,
    pub write_bytes_per_s: f64,
    pub read_bytes_per_s: f64,
    pub write_files_per_s: f64,
    pub read_files_per_s: f64,
}

/// Everything `fs files` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FilesRun {
    pub results: Vec<FilesSizeResult>,
    pub bytes_written: u64,
    pub elapsed_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_caches_error: Option<String>,
}

/// Number of files written for one size.
pub fn files_for(size: u64, total: u64) -> u64 {
    (total / size.max(1)).max(1)
}

/// Check a configuration before anything is written.
pub fn validate(cfg: &FilesConfig) -> Result<()> {
    if cfg.sizes.is_empty() {
        return Err(Error::usage(
            "--sizes is empty: give at least one size, e.g. 1M,4K",
        ));
    }
    if let Some(z) = cfg.sizes.iter().find(|s| **s == 0) {
        return Err(Error::usage(format!(
            "--sizes has a zero entry ({z}): every size must be at least 1 byte"
        )));
    }
    if cfg.total_bytes == 0 {
        return Err(Error::usage("--total must be at least 1 byte, e.g. 100M"));
    }
    let most = cfg
        .sizes
        .iter()
        .map(|s| files_for(*s, cfg.total_bytes))
        .max()
        .unwrap_or(0);
    if most > 10_000_000 {
        return Err(Error::usage(format!(
            "--total {} as files of {} would be {most} files: give a larger size or a smaller --total",
            format_bytes(cfg.total_bytes),
            format_bytes(cfg.sizes.iter().copied().min().unwrap_or(1))
        )));
    }
    Ok(())
}

/// Run the sweep in `cfg.dir`; each size's files go into their own directory, removed
/// after that size unless `keep`.
pub fn run(cfg: &FilesConfig, progress: Arc<ProgressCounters>) -> Result<FilesRun> {
    validate(cfg)?;
    let top = env::check_dir(&cfg.dir)?;
    let dir = top.path().to_path_buf();
    let fs = env::fs_info(&dir)?;
    let per_size: Vec<u64> = cfg
        .sizes
        .iter()
        .map(|s| files_for(*s, cfg.total_bytes) * s)
        .collect();
    let need = if cfg.keep {
        per_size.iter().sum()
    } else {
        per_size.iter().copied().max().unwrap_or(0)
    };
    // Small files take at least a filesystem block each.
    let need_blocks: u64 = cfg
        .sizes
        .iter()
        .map(|s| {
            files_for(*s, cfg.total_bytes)
                * s.div_ceil(fs.block_bytes.max(1))
                * fs.block_bytes.max(1)
        })
        .max()
        .unwrap_or(0);
    env::check_free_space(
        &fs,
        need.max(need_blocks),
        "give a smaller --total or another directory",
    )?;
    progress.set_total(2 * per_size.iter().sum::<u64>());
    let t0 = monotonic_ns();
    let largest = cfg.sizes.iter().copied().max().unwrap_or(1).min(CHUNK);
    let mut wbuf = PatternBuf::new(largest as usize, cfg.pattern, cfg.seed);
    let mut rbuf = AlignedBuf::new(largest as usize);
    let mut results = Vec::new();
    let mut bytes_written = 0u64;
    let mut drop_caches_error = None;
    let mut stamp = 0u64;
    // Everything below happens through this descriptor and those of the directories made
    // in it, never through a name: whoever owns the directory can rename what is in it,
    // but not what is inside the directories flashscope makes there (mode 0700).
    for &size in &cfg.sizes {
        let name = test_name(&format!("files-{size}"));
        let sub_path = dir.join(&name);
        let sub = top
            .make_dir(&name, 0o700)
            .map_err(io_err("creating directory", &sub_path))?;
        let mut guard = SizeDir {
            parent: &top,
            name,
            dir: sub,
            made: 0,
            keep: cfg.keep,
        };
        let files = files_for(size, cfg.total_bytes);
        let file_name = |i: u64| OsString::from(format!("f{i:08}"));

        progress.set_phase(&format!("{} files write", format_bytes(size)));
        let start = monotonic_ns();
        for i in 0..files {
            crate::signals::check()?;
            let p = sub_path.join(file_name(i));
            let mut f = guard
                .dir
                .create_new(&file_name(i), OFlags::WRONLY, 0o600)
                .map_err(io_err("creating", &p))?;
            guard.made = i + 1;
            let mut left = size;
            while left > 0 {
                let n = left.min(CHUNK);
                f.write_all(wbuf.chunk(stamp, n as usize))
                    .map_err(io_err("writing", &p))?;
                stamp += 1;
                left -= n;
                bytes_written += n;
                progress.add(n);
            }
            f.sync_all().map_err(io_err("fsync on", &p))?;
        }
        let write_ns = monotonic_ns() - start;

        // Opened again without following a link or waiting on a FIFO, and checked on the
        // descriptor: the regular file of the size written, or the run stops.
        let open = |i: u64| -> Result<File> {
            let p = sub_path.join(file_name(i));
            let f = guard
                .dir
                .open_file(&file_name(i), OFlags::RDONLY | OFlags::NONBLOCK)
                .map_err(io_err("opening", &p))?;
            let n = crate::sys::dir::node_of(&f).map_err(io_err("examining", &p))?;
            let len = f.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
            if n.kind != rustix::fs::FileType::RegularFile || len != size {
                return Err(Error::runtime(format!(
                    "{} is {} of {len} bytes, not the {size}-byte file written: the files changed under the test",
                    p.display(),
                    n.kind_in_words()
                )));
            }
            Ok(f)
        };
        // Cold: each file's pages dropped (they are clean after the fsync), or all caches.
        let mut dropped_all = false;
        if cfg.drop_caches {
            match drop_all_caches() {
                Ok(()) => dropped_all = true,
                Err(e) => {
                    drop_caches_error.get_or_insert(e.to_string());
                }
            }
        }
        if !dropped_all {
            for i in 0..files {
                let f = open(i)?;
                drop_file_cache(&f).map_err(io_err(
                    "posix_fadvise(DONTNEED) on",
                    &sub_path.join(file_name(i)),
                ))?;
            }
        }
        progress.set_phase(&format!("{} files read", format_bytes(size)));
        let start = monotonic_ns();
        let mut read = 0u64;
        for i in 0..files {
            crate::signals::check()?;
            let mut f = open(i)?;
            read += read_all(&mut f, &mut rbuf, &progress)
                .map_err(io_err("reading", &sub_path.join(file_name(i))))?;
        }
        let read_ns = monotonic_ns() - start;
        if read != files * size {
            return Err(Error::runtime(format!(
                "read back {read} bytes from {} but wrote {}: the files changed under the test",
                sub_path.display(),
                files * size
            )));
        }
        drop(guard);
        results.push(FilesSizeResult {
            file_bytes: size,
            files,
            write_bytes: files * size,
            write_ns,
            read_ns,
            write_bytes_per_s: rate(files * size, write_ns),
            read_bytes_per_s: rate(files * size, read_ns),
            write_files_per_s: files as f64 * 1e9 / write_ns.max(1) as f64,
            read_files_per_s: files as f64 * 1e9 / read_ns.max(1) as f64,
        });
    }
    Ok(FilesRun {
        results,
        bytes_written,
        elapsed_ns: monotonic_ns() - t0,
        drop_caches_error,
    })
}

/// One size's directory, made in the tested directory: its files and then itself removed
/// when dropped (unless kept), through the descriptors, so a name swapped meanwhile
/// removes nothing else.
struct SizeDir<'a> {
    parent: &'a Dir,
    name: OsString,
    dir: Dir,
    /// Files f00000000.. made so far.
    made: u64,
    keep: bool,
}

impl Drop for SizeDir<'_> {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        for i in 0..self.made {
            let _ = self.dir.remove(&OsString::from(format!("f{i:08}")));
        }
        // Only the directory made: not one put at its name since.
        if self
            .parent
            .stat(&self.name)
            .is_ok_and(|n| n.same(&self.dir.node()))
        {
            let _ = self.parent.remove_dir(&self.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_writes_total_per_size_and_cleans_up() {
        let d = tempfile::tempdir().unwrap();
        let cfg = FilesConfig {
            dir: d.path().to_path_buf(),
            sizes: vec![256 << 10, 4096, 3000],
            total_bytes: 512 << 10,
            pattern: Pattern::Random,
            drop_caches: false,
            keep: false,
            seed: 3,
        };
        let run = run(&cfg, ProgressCounters::new()).unwrap();
        let files: Vec<u64> = run.results.iter().map(|r| r.files).collect();
        assert_eq!(files, vec![2, 128, 174]);
        assert_eq!(run.bytes_written, 2 * (256 << 10) + 128 * 4096 + 174 * 3000);
        for r in &run.results {
            assert!(r.write_bytes_per_s > 0.0 && r.read_files_per_s > 0.0);
        }
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn keep_leaves_the_files() {
        let d = tempfile::tempdir().unwrap();
        let cfg = FilesConfig {
            dir: d.path().to_path_buf(),
            sizes: vec![8192],
            total_bytes: 16384,
            pattern: Pattern::Zeros,
            drop_caches: false,
            keep: true,
            seed: 3,
        };
        run(&cfg, ProgressCounters::new()).unwrap();
        let sub = std::fs::read_dir(d.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(std::fs::read_dir(sub.path()).unwrap().count(), 2);
    }

    /// Issue 44 point 3: whoever owns the directory swaps the size's sub-directory for a
    /// link to another directory during the run; nothing is created, read or left there.
    #[test]
    fn a_swapped_sub_directory_changes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().join("card");
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir(&top).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        let cfg = FilesConfig {
            dir: top.clone(),
            sizes: vec![4096],
            total_bytes: 16 << 20,
            pattern: Pattern::Zeros,
            drop_caches: false,
            keep: false,
            seed: 3,
        };
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let attacker = {
            let (top, elsewhere, stop) = (top.clone(), elsewhere.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let Some(sub) = std::fs::read_dir(&top)
                        .unwrap()
                        .filter_map(|e| e.ok())
                        .find(|e| {
                            e.file_name()
                                .to_string_lossy()
                                .starts_with("flashscope-files")
                        })
                    else {
                        continue;
                    };
                    let moved = top.join("moved");
                    if std::fs::rename(sub.path(), &moved).is_ok() {
                        std::os::unix::fs::symlink(&elsewhere, sub.path()).unwrap();
                        return Some(moved);
                    }
                }
                None
            })
        };
        let r = run(&cfg, ProgressCounters::new());
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let moved = attacker
            .join()
            .unwrap()
            .expect("the swap happened during the run");
        let run = r.unwrap();
        assert_eq!(run.results[0].files, 4096);
        assert_eq!(
            std::fs::read_dir(&elsewhere).unwrap().count(),
            0,
            "nothing created in the directory the link leads to"
        );
        // The files went to (and were removed from) the directory made for them.
        assert_eq!(std::fs::read_dir(&moved).unwrap().count(), 0);
    }

    #[test]
    fn sizes_default_to_16m_down_to_1k() {
        let s = default_sizes();
        assert_eq!(s.first(), Some(&(16 << 20)));
        assert_eq!(s.last(), Some(&1024));
        assert_eq!(files_for(16 << 20, 1 << 20), 1);
    }
}
