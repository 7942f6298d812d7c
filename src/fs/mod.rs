//! Filesystem-level tests: what `dd`, FlashBench and iozone measure through a mounted
//! filesystem, with the page cache shown instead of hidden.
//!
//! - `seq`: sequential write and read of one file in each mode dd offers (buffered,
//!   fdatasync, dsync, sync, direct), cold and warm reads, with a /proc/meminfo timeline;
//! - `files`: the file-size sweep (many small files, create + write + fsync each);
//! - `matrix`: iozone's file size × record size matrix.
//!
//! Probes here do I/O and timing and return serialisable samples; `analysis` turns them
//! into inferences and warnings; printing is the CLI's job.

pub mod analysis;
pub mod env;
pub mod files;
pub mod matrix;
pub mod monitor;
pub mod seq;
pub mod warn;

use crate::backend::AlignedBuf;
use crate::vocab::units::parse_size;
use crate::{Error, Result};
use rand::{RngCore, SeedableRng};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The data written to test files: the one pattern type, shared with `io` and `bench`.
pub use crate::workload::Pattern;

/// A page-aligned write buffer holding the pattern; random buffers get the chunk number
/// stamped into every 4 KiB so no two chunks are identical (no deduplication).
pub struct PatternBuf {
    buf: AlignedBuf,
    pattern: Pattern,
}

impl PatternBuf {
    /// A buffer of `len` bytes of `pattern`, seeded for reproducibility.
    pub fn new(len: usize, pattern: Pattern, seed: u64) -> Self {
        let mut buf = AlignedBuf::new(len);
        match pattern {
            Pattern::Random => rand_pcg::Pcg64::seed_from_u64(seed).fill_bytes(&mut buf),
            fixed => fixed.fill(&mut buf, seed),
        }
        PatternBuf { buf, pattern }
    }

    /// The first `len` bytes, stamped with chunk number `index`.
    pub fn chunk(&mut self, index: u64, len: usize) -> &[u8] {
        let len = len.min(self.buf.len());
        if self.pattern == Pattern::Random {
            let stamp = index.to_le_bytes();
            for start in (0..len).step_by(4096) {
                let end = (start + 8).min(len);
                self.buf[start..end].copy_from_slice(&stamp[..end - start]);
            }
        }
        &self.buf[..len]
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

/// Parse a comma-separated list of sizes (`16M,1M,4K`); zero, empty or unparsable entries
/// are a usage error naming the entry and the option.
pub fn parse_size_list(text: &str, option: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for entry in text.split(',') {
        let e = entry.trim();
        if e.is_empty() {
            return Err(Error::usage(format!(
                "{option} '{text}' has an empty entry: give sizes separated by commas, e.g. 16M,1M,4K"
            )));
        }
        let v = parse_size(e).map_err(|err| Error::usage(format!("{option}: {err}")))?;
        if v == 0 {
            return Err(Error::usage(format!(
                "{option}: size '{e}' is zero: every size must be at least one byte, e.g. 4K"
            )));
        }
        out.push(v);
    }
    Ok(out)
}

/// Powers of two from `hi` down to `lo` (both powers of two), largest first.
pub fn powers_of_two_down(hi: u64, lo: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut s = hi;
    while s >= lo && s > 0 {
        out.push(s);
        s /= 2;
    }
    out
}

/// A rate in bytes per second from bytes and nanoseconds (0 ns counts as 1 ns).
pub fn rate(bytes: u64, ns: u64) -> f64 {
    bytes as f64 * 1e9 / ns.max(1) as f64
}

/// Test files and directories removed when dropped, unless kept (`--keep`); also on error
/// paths, so a failed run leaves nothing behind.
pub struct Cleanup {
    paths: Vec<PathBuf>,
    keep: bool,
}

impl Cleanup {
    pub fn new(keep: bool) -> Self {
        Cleanup {
            paths: Vec::new(),
            keep,
        }
    }

    /// Remember a file or directory to remove.
    pub fn add(&mut self, path: PathBuf) {
        self.paths.push(path);
    }

    /// Remove everything now (unless kept).
    pub fn remove_now(&mut self) {
        if self.keep {
            return;
        }
        for p in self.paths.drain(..).rev() {
            if p.is_dir() {
                let _ = std::fs::remove_dir_all(&p);
            } else {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        self.remove_now();
    }
}

/// Make a test file of `size` bytes of incompressible data, written and synced so reads
/// hit the medium rather than holes ([`create_test_file`]: nothing planted at the name is
/// followed). Returns the guard that removes it when dropped and the open file, through
/// which it is measured ([`reopen`], `/proc/self/fd/N`): whoever can write the directory
/// may rename it or put a link at its name, and the measurement still reads and writes
/// this file alone. Ctrl-C or SIGTERM stop the writing (the handler is installed here)
/// and the file goes too.
pub fn make_test_file(path: &Path, size: u64) -> Result<(Cleanup, File)> {
    use std::io::Write;
    crate::signals::install(crate::signals::Second::Terminate);
    let mut f =
        crate::sys::create_test_file(path).map_err(io_err("creating the test file", path))?;
    let mut guard = Cleanup::new(false);
    guard.add(path.to_path_buf());
    let mut chunk = vec![0u8; 1 << 20];
    crate::workload::Pattern::Random.fill(&mut chunk, 0xbe7c4);
    let mut left = size;
    while left > 0 {
        crate::signals::check()?;
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n])
            .map_err(io_err("writing the test file", path))?;
        left -= n as u64;
    }
    f.sync_all()
        .map_err(io_err("syncing the test file", path))?;
    Ok((guard, f))
}

/// The name of a test file or directory: `flashscope-<what>-<pid>-<random>` in `dir`, a
/// name nobody can guess and plant something at beforehand (it is created with
/// `O_EXCL` all the same: [`create_test_file`]).
pub fn test_path(dir: &Path, what: &str) -> PathBuf {
    dir.join(test_name(what))
}

/// The file name [`test_path`] puts in its directory.
pub fn test_name(what: &str) -> std::ffi::OsString {
    format!(
        "flashscope-{what}-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    )
    .into()
}

/// Read a whole file sequentially in `buf`-sized chunks; returns the bytes read and counts
/// them on `progress`.
pub fn read_all(
    file: &mut File,
    buf: &mut [u8],
    progress: &monitor::ProgressCounters,
) -> io::Result<u64> {
    let mut total = 0u64;
    loop {
        if crate::signals::interrupted() {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "interrupted by a signal",
            ));
        }
        let n = match file.read(buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted && !crate::signals::interrupted() => {
                continue
            }
            Err(e) => return Err(e),
        };
        total += n as u64;
        progress.add(n as u64);
    }
    Ok(total)
}

/// Wrap an I/O error with the file it happened on.
pub fn io_err<'a>(what: &str, path: &'a Path) -> impl FnOnce(io::Error) -> Error + 'a {
    let what = what.to_string();
    move |e| Error::io(format!("{what} {}", path.display()), e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_lists_reject_zero_and_junk() {
        assert_eq!(
            parse_size_list("16M, 4K,1", "--sizes").unwrap(),
            vec![16 << 20, 4096, 1]
        );
        for bad in ["", "4K,,1M", "0", "4K,0", "4Q", "x", "-1K"] {
            let e = parse_size_list(bad, "--sizes").unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert!(e.to_string().contains("--sizes"), "{e}");
        }
    }

    #[test]
    fn powers_of_two_run_downwards() {
        assert_eq!(powers_of_two_down(16, 2), vec![16, 8, 4, 2]);
        assert_eq!(powers_of_two_down(16 << 20, 1024).len(), 15);
    }

    #[test]
    fn random_chunks_differ_and_zeros_stay_zero() {
        let mut b = PatternBuf::new(8192, Pattern::Random, 1);
        let a = b.chunk(1, 8192).to_vec();
        let c = b.chunk(2, 8192).to_vec();
        assert_ne!(a, c);
        assert_eq!(a[8..4096], c[8..4096]);
        let mut z = PatternBuf::new(4096, Pattern::Zeros, 1);
        assert!(z.chunk(7, 100).iter().all(|&x| x == 0));
        assert_eq!(z.chunk(7, 100).len(), 100);
    }

    #[test]
    fn cleanup_removes_unless_kept() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a");
        let sub = d.path().join("sub");
        std::fs::write(&f, b"x").unwrap();
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("b"), b"x").unwrap();
        {
            let mut c = Cleanup::new(false);
            c.add(f.clone());
            c.add(sub.clone());
        }
        assert!(!f.exists() && !sub.exists());
        std::fs::write(&f, b"x").unwrap();
        {
            let mut c = Cleanup::new(true);
            c.add(f.clone());
        }
        assert!(f.exists());
    }
}
