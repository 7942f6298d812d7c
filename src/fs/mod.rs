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

/// The test files of one run, made in the directory under test through its descriptor
/// ([`env::check_dir`]) and removed through it when dropped, unless kept (`--keep`); also
/// on error paths, so a failed run leaves nothing behind. Whoever can write the directory
/// (or one above it) may rename things or plant links meanwhile: each file is created
/// `O_EXCL | O_NOFOLLOW` at a name nobody can guess ([`test_name`]), measured through its
/// descriptor ([`reopen`](crate::sys::reopen)), and its name removed only while the name
/// still holds that file.
pub struct TestFiles {
    dir: crate::sys::dir::Dir,
    made: Vec<(std::ffi::OsString, crate::sys::dir::Node, bool)>,
    keep: bool,
}

impl TestFiles {
    /// The files of a run in `dir` (checked and opened by [`env::check_dir`]); `keep`
    /// leaves them when the run ends.
    pub(crate) fn new(dir: crate::sys::dir::Dir, keep: bool) -> Self {
        TestFiles {
            dir,
            made: Vec::new(),
            keep,
        }
    }

    /// The directory's path, for messages and for reading its filesystem's figures.
    pub fn dir_path(&self) -> &Path {
        self.dir.path()
    }

    /// Create the new test file `flashscope-<what>-<pid>-<random>`, open for reading and
    /// writing (mode 0600); returns its path (for messages only) and the file.
    pub fn create(&mut self, what: &str) -> Result<(PathBuf, File)> {
        self.create_kept_if(test_name(what), self.keep)
    }

    /// As [`TestFiles::create`], for a file removed at the end even under `--keep` (a
    /// warm-up file).
    pub fn create_scratch(&mut self, what: &str) -> Result<(PathBuf, File)> {
        self.create_kept_if(test_name(what), false)
    }

    fn create_kept_if(&mut self, name: std::ffi::OsString, keep: bool) -> Result<(PathBuf, File)> {
        let path = self.dir.path().join(&name);
        let file = self
            .dir
            .create_new(&name, rustix::fs::OFlags::RDWR, 0o600)
            .map_err(io_err("creating", &path))?;
        let node = crate::sys::dir::node_of(&file).map_err(io_err("looking at", &path))?;
        self.made.push((name, node, keep));
        Ok((path, file))
    }

    /// Remove every file made so far, but those kept.
    pub fn remove_now(&mut self) {
        for (name, node, keep) in self.made.drain(..).rev() {
            if keep {
                continue;
            }
            // Only the file made: not one put at its name since.
            if self.dir.stat(&name).is_ok_and(|n| n.same(&node)) {
                let _ = self.dir.remove(&name);
            }
        }
    }
}

impl Drop for TestFiles {
    fn drop(&mut self) {
        self.remove_now();
    }
}

/// Make the test file `name` ([`test_name`]) of `size` bytes of incompressible data in
/// `dir` (checked first, [`env::check_dir`]), written and synced so reads hit the medium
/// rather than holes. Returns the files' guard (it removes the file when dropped) and the
/// open file, through which it is measured ([`crate::sys::reopen`],
/// `/proc/self/fd/N`): whoever can write the directory may rename it or put a link at its
/// name, and the measurement still reads and writes this file alone. Ctrl-C or SIGTERM
/// stop the writing (the handler is installed here) and the file goes too.
pub fn make_test_file(
    dir: &Path,
    name: std::ffi::OsString,
    size: u64,
) -> Result<(TestFiles, File)> {
    use std::io::Write;
    crate::signals::install(crate::signals::Second::Terminate);
    let mut files = TestFiles::new(env::check_dir(dir)?, false);
    let (path, mut f) = files.create_kept_if(name, false)?;
    let mut chunk = vec![0u8; 1 << 20];
    crate::workload::Pattern::Random.fill(&mut chunk, 0xbe7c4);
    let mut left = size;
    while left > 0 {
        crate::signals::check()?;
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n])
            .map_err(io_err("writing the test file", &path))?;
        left -= n as u64;
    }
    f.sync_all()
        .map_err(io_err("syncing the test file", &path))?;
    Ok((files, f))
}

/// The name of a test file or directory: `flashscope-<what>-<pid>-<random>` in `dir`, a
/// name nobody can guess and plant something at beforehand (it is created with
/// `O_EXCL` all the same: [`TestFiles::create`]).
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
    fn test_files_are_removed_unless_kept_and_only_while_their_name_holds_them() {
        let d = tempfile::tempdir().unwrap();
        let names = || -> Vec<String> {
            let mut v: Vec<String> = std::fs::read_dir(d.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        {
            let mut files = TestFiles::new(env::check_dir(d.path()).unwrap(), false);
            let (a, _) = files.create("a").unwrap();
            assert!(a.starts_with(d.path()) && a.exists());
            files.create("b").unwrap();
            assert_eq!(names().len(), 2);
        }
        assert!(names().is_empty(), "{:?}", names());
        {
            let mut files = TestFiles::new(env::check_dir(d.path()).unwrap(), true);
            files.create("kept").unwrap();
            files.create_scratch("warm").unwrap();
        }
        let left = names();
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].starts_with("flashscope-kept-"), "{left:?}");
        std::fs::remove_file(d.path().join(&left[0])).unwrap();
        // Another file put at a test file's name meanwhile (a writer of the directory
        // renamed ours away and planted its own) is not removed.
        {
            let mut files = TestFiles::new(env::check_dir(d.path()).unwrap(), false);
            let (p, _) = files.create("swapped").unwrap();
            std::fs::rename(&p, d.path().join("moved")).unwrap();
            std::fs::write(&p, b"theirs").unwrap();
        }
        assert_eq!(names().len(), 2, "{:?}", names());
    }

    #[test]
    fn test_files_go_where_the_directory_was_opened_not_where_its_path_leads_later() {
        // The directory under test is swapped for a link after the check: the test's
        // files still go into (and are removed from) the directory checked.
        let d = tempfile::tempdir().unwrap();
        let checked = d.path().join("card");
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir(&checked).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        let mut files = TestFiles::new(env::check_dir(&checked).unwrap(), false);
        std::fs::rename(&checked, d.path().join("card.moved")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &checked).unwrap();
        files.create("after-swap").unwrap();
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        assert_eq!(
            std::fs::read_dir(d.path().join("card.moved"))
                .unwrap()
                .count(),
            1
        );
        drop(files);
        assert_eq!(
            std::fs::read_dir(d.path().join("card.moved"))
                .unwrap()
                .count(),
            0
        );
    }
}
