//! A directory as a device: `verify DIR` fills free space with 1 GiB files
//! (`flashscope-verify-NNNN.bin`, H2testw / f3write style) and this backend maps one
//! logical byte range onto them, so the same verify engine runs through a filesystem.
//!
//! Ctrl-C or SIGTERM stops the run at the next I/O (it fails with `Interrupted`) and the
//! files go with the set (unless kept): `create` installs the signal handler.
//!
//! Reads never come from the page cache: files are opened with O_DIRECT where the
//! filesystem allows it; otherwise `flush` fsyncs every file and drops its cached pages
//! (POSIX_FADV_DONTNEED) before the read pass.

use crate::backend::{monotonic_ns, Backend};
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Bytes per file.
pub const FILE_BYTES: u64 = 1 << 30;
const RESERVE: u64 = 16 << 20;

/// The verify files of one run in a directory.
pub struct FileSet {
    paths: Vec<PathBuf>,
    files: Vec<File>,
    total: u64,
    direct: bool,
    keep: bool,
}

/// How many bytes `verify DIR` will use: `asked`, or the free space less a small reserve.
pub fn plan_bytes(dir: &Path, asked: Option<u64>) -> Result<u64> {
    let free = crate::sys::fs_stats(dir)
        .map_err(|e| Error::io(format!("reading the free space of '{}'", dir.display()), e))?
        .free_bytes
        .unwrap_or(0);
    let mib = 1u64 << 20;
    match asked {
        Some(a) => {
            crate::sys::check_room(
                dir,
                Some(free),
                "the size asked with --size",
                a,
                0,
                "free some space or ask for less",
            )?;
            if a < mib {
                return Err(Error::usage(format!(
                    "--size {a} is below 1 MiB: nothing worth verifying"
                )));
            }
            Ok(a / mib * mib)
        }
        None => {
            let usable = free.saturating_sub(RESERVE) / mib * mib;
            if usable < mib {
                return Err(Error::Refused(format!(
                    "'{}' has only {} free: nothing to verify",
                    dir.display(),
                    crate::units::format_bytes(free)
                )));
            }
            Ok(usable)
        }
    }
}

fn open_file(path: &Path, create: bool, direct: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(create).truncate(false);
    if direct {
        o.custom_flags(crate::sys::O_DIRECT | libc::O_CLOEXEC);
    }
    o.open(path)
}

impl FileSet {
    /// Create the files for `total` bytes in `dir` (must not exist yet).
    pub fn create(dir: &Path, total: u64, keep: bool) -> Result<FileSet> {
        crate::signals::install(crate::signals::Second::Terminate);
        let count = total.div_ceil(FILE_BYTES).max(1);
        let mut set = FileSet {
            paths: Vec::new(),
            files: Vec::new(),
            total,
            direct: true,
            keep,
        };
        for i in 0..count {
            let path = dir.join(format!("flashscope-verify-{i:04}.bin"));
            if path.exists() {
                return Err(Error::Refused(format!(
                    "'{}' exists (left by an earlier run with --keep?): remove it or verify another directory",
                    path.display()
                )));
            }
            let file = match open_file(&path, true, set.direct) {
                Ok(f) => f,
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) && i == 0 => {
                    set.direct = false;
                    let _ = std::fs::remove_file(&path);
                    open_file(&path, true, false).map_err(|e| create_error(dir, e))?
                }
                Err(e) => return Err(create_error(dir, e)),
            };
            set.paths.push(path);
            set.files.push(file);
        }
        Ok(set)
    }

    /// Whether reads bypass the page cache with O_DIRECT (otherwise pages are dropped).
    pub fn direct(&self) -> bool {
        self.direct
    }

    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    fn locate(&self, offset: u64) -> (usize, u64) {
        ((offset / FILE_BYTES) as usize, offset % FILE_BYTES)
    }

    /// Run `io` on each file's piece of `[offset, offset + len)`: the file, the offset in
    /// it and the range of the caller's buffer. A pending signal stops it first.
    fn each_piece(
        &self,
        offset: u64,
        len: usize,
        mut io: impl FnMut(&File, u64, std::ops::Range<usize>) -> io::Result<()>,
    ) -> io::Result<()> {
        crate::signals::check_io()?;
        let mut done = 0usize;
        while done < len {
            let (i, at) = self.locate(offset + done as u64);
            let n = ((FILE_BYTES - at) as usize).min(len - done);
            let f = self
                .files
                .get(i)
                .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
            io(f, at, done..done + n)?;
            done += n;
        }
        Ok(())
    }
}

fn create_error(dir: &Path, e: io::Error) -> Error {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => Error::Refused(format!(
            "cannot create files in '{}' ({e}): choose a writable directory on the card",
            dir.display()
        )),
        _ => Error::io(
            format!("creating the verify files in '{}'", dir.display()),
            e,
        ),
    }
}

impl Drop for FileSet {
    fn drop(&mut self) {
        if !self.keep {
            for p in &self.paths {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

impl Backend for FileSet {
    fn size_bytes(&self) -> u64 {
        self.total
    }
    fn logical_sector_bytes(&self) -> u32 {
        4096
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.each_piece(offset, buf.len(), |f, at, r| {
            f.read_exact_at(&mut buf[r], at)
        })
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.each_piece(offset, buf.len(), |f, at, r| f.write_all_at(&buf[r], at))
    }
    /// fsync every file, then drop its cached pages so the read pass hits the medium.
    fn flush(&mut self) -> io::Result<()> {
        crate::signals::check_io()?;
        for f in &self.files {
            f.sync_all()?;
            // Advice only: a filesystem that ignores it still got its fsync.
            let _ = crate::sys::drop_file_cache(f);
        }
        Ok(())
    }
    fn clock_ns(&self) -> u64 {
        monotonic_ns()
    }
    fn idle(&mut self, ns: u64) {
        std::thread::sleep(std::time::Duration::from_nanos(ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::AlignedBuf;

    #[test]
    fn files_map_one_range_and_disappear_unless_kept() {
        let dir = tempfile::tempdir().unwrap();
        let paths;
        {
            let mut set = FileSet::create(dir.path(), 3 << 20, false).unwrap();
            let mut w = AlignedBuf::new(1 << 20);
            w.fill(7);
            set.write_at(&w, 2 << 20).unwrap();
            set.flush().unwrap();
            let mut r = AlignedBuf::new(1 << 20);
            set.read_at(&mut r, 2 << 20).unwrap();
            assert!(r.iter().all(|&b| b == 7));
            paths = set.paths().to_vec();
            assert_eq!(paths.len(), 1);
            assert!(paths[0].exists());
            assert!(
                FileSet::create(dir.path(), 1 << 20, false).is_err(),
                "exists"
            );
        }
        assert!(!paths[0].exists());
        assert!(plan_bytes(dir.path(), Some(1 << 50)).is_err());
        assert_eq!(
            plan_bytes(dir.path(), Some((5 << 20) + 7)).unwrap(),
            5 << 20
        );
    }
}
