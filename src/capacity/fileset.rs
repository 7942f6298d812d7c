//! A directory as a device: `verify DIR` fills free space with 1 GiB files
//! (`flashscope-verify-NNNN.bin`, H2testw / f3write style) and this backend maps one
//! logical byte range onto them, so the same verify engine runs through a filesystem.
//!
//! Ctrl-C or SIGTERM stops the run at the next I/O (it fails with `Interrupted`) and the
//! files go with the set (unless kept): `create` installs the signal handler.
//!
//! At the end, `settle` names where each bad extent lives (file, offset, device ranges by
//! FIEMAP) while the files are still open, and keeps the files that hold bad data.
//!
//! Reads never come from the page cache: files are opened with O_DIRECT where the
//! filesystem allows it; otherwise `flush` fsyncs every file and drops its cached pages
//! (POSIX_FADV_DONTNEED) before the read pass.

use super::extent::Extent;
use super::locate::{locate, BackingDevice, LocatedExtent, PlacedFile};
use crate::backend::{monotonic_ns, Backend};
use crate::sys::dir::Dir;
use crate::{Error, Result};
use rustix::fs::OFlags;
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Bytes per file.
pub const FILE_BYTES: u64 = 1 << 30;
const RESERVE: u64 = 16 << 20;
/// Most FIEMAP extents read per file (a 1 GiB file in 4 KiB fragments has 262,144).
const MAX_FILE_EXTENTS: usize = 1 << 19;

/// The verify files of one run in a directory, each created, opened and removed
/// relative to the directory's descriptor (never by a path another user could re-point).
pub struct FileSet {
    dir: Dir,
    /// Each file's name in `dir`, and the path shown for it.
    names: Vec<OsString>,
    paths: Vec<PathBuf>,
    files: Vec<File>,
    total: u64,
    direct: bool,
    /// Per file: left in place when the set is dropped.
    kept: Vec<bool>,
    /// The random part of the names (a directory others can write), see [`file_path`].
    tag: Option<u32>,
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
                    crate::vocab::units::format_bytes(free)
                )));
            }
            Ok(usable)
        }
    }
}

/// Open an existing verify file (a run to resume) in `dir` without following a symbolic
/// link.
fn open_file(dir: &Dir, name: &OsString, direct: bool) -> io::Result<File> {
    let flags = OFlags::RDWR;
    dir.open_file(
        name,
        if direct {
            flags | OFlags::DIRECT
        } else {
            flags
        },
    )
}

/// The name of the `index`th verify file: `flashscope-verify-NNNN.bin`, and in a
/// directory others can write `flashscope-verify-NNNN-<random>.bin` (`tag`), a name nobody
/// can plant anything at beforehand.
fn file_name(index: u64, tag: Option<u32>) -> OsString {
    match tag {
        None => format!("flashscope-verify-{index:04}.bin").into(),
        Some(t) => format!("flashscope-verify-{index:04}-{t:08x}.bin").into(),
    }
}

/// Whether another user could create names in `dir` (then the files get a random part in
/// their names) and why another user could rename or remove this user's files there
/// (then no later pass may find them by name), judged on the open directory.
pub(crate) fn shared_dir(dir: &Dir) -> (bool, Option<String>) {
    let node = dir.node();
    let theirs = !node.ours();
    (
        theirs || dir.shared(),
        crate::sys::dir::rename_risk(node.uid, node.mode),
    )
}

impl FileSet {
    /// Create the files for `total` bytes in `dir` (must not exist yet), each new
    /// (`O_EXCL | O_NOFOLLOW` relative to the directory, [`Dir::create_new`]): nothing
    /// planted at a name is opened or written. In a directory others can write the names
    /// get a random part (kept in the resume state: [`FileSet::tag`]).
    pub(crate) fn create(dir: Dir, total: u64, keep: bool) -> Result<FileSet> {
        let tag = shared_dir(&dir).0.then(rand::random::<u32>);
        FileSet::with_files(dir, total, keep, tag, true, |d, _, name, path, direct| {
            if d.stat(name).is_ok() {
                let err = Error::Refused(format!(
                    "'{}' exists (left by an earlier run with --keep or --pass write?): remove it or verify another directory",
                    path.display()
                ));
                return Err((err, None));
            }
            let fail = |e: io::Error| (create_error(d.path(), &e), e.raw_os_error());
            let file = d.create_new(name, OFlags::RDWR, 0o600).map_err(fail)?;
            if !direct {
                return Ok(file);
            }
            let mut o = OpenOptions::new();
            o.read(true)
                .write(true)
                .custom_flags(libc::O_CLOEXEC | crate::sys::O_DIRECT);
            crate::sys::reopen(&file, &mut o).map_err(fail)
        })
    }

    /// Open the files an earlier run (`--pass write`) left for `total` bytes in `dir`, to
    /// continue it: each must be a regular file (no symlink), holding its part of the
    /// first `written` bytes (what the write pass wrote: all of `total`, or less where the
    /// filesystem ran out of space; 0 before the read pass).
    pub(crate) fn open(
        dir: Dir,
        total: u64,
        keep: bool,
        written: u64,
        tag: Option<u32>,
    ) -> Result<FileSet> {
        FileSet::with_files(dir, total, keep, tag, false, |d, i, name, path, direct| {
            let file = open_file(d, name, direct).map_err(|e| {
                let err = Error::usage(format!(
                    "cannot open '{}' ({e}), a file of the run to resume: it was removed or moved; verify the directory afresh without --resume",
                    path.display()
                ));
                (err, e.raw_os_error())
            })?;
            let meta = file.metadata().map_err(|e| {
                (
                    Error::io(format!("looking at '{}'", path.display()), e),
                    None,
                )
            })?;
            let want = written.saturating_sub(i * FILE_BYTES).min(FILE_BYTES);
            // A second name (a hard link planted in its place) is another file's: writing
            // the rest of the run into it would change that file.
            if meta.nlink() != 1 {
                let err = Error::Refused(format!(
                    "'{}' has {} names (hard links): it is not the file the run to resume made alone; nothing was written. Verify the directory afresh without --resume",
                    path.display(),
                    meta.nlink()
                ));
                return Err((err, None));
            }
            if !meta.is_file() || meta.len() < want {
                let err = Error::usage(format!(
                    "'{}' is not the {want}-byte file the run to resume wrote ({} bytes): verify the directory afresh without --resume",
                    path.display(),
                    meta.len()
                ));
                return Err((err, None));
            }
            Ok(file)
        })
    }

    /// The set of files for `total` bytes in `dir`, each opened by `open(dir, index, name,
    /// path, direct)`; when the first refuses O_DIRECT (EINVAL) the set falls back to buffered
    /// I/O (a file just created for the try is removed first).
    fn with_files(
        dir: Dir,
        total: u64,
        keep: bool,
        tag: Option<u32>,
        create: bool,
        mut open: impl FnMut(
            &Dir,
            u64,
            &OsString,
            &Path,
            bool,
        ) -> std::result::Result<File, (Error, Option<i32>)>,
    ) -> Result<FileSet> {
        crate::signals::install(crate::signals::Second::Terminate);
        let count = total.div_ceil(FILE_BYTES).max(1);
        let mut set = FileSet {
            dir,
            names: Vec::new(),
            paths: Vec::new(),
            files: Vec::new(),
            total,
            direct: true,
            kept: vec![keep; count as usize],
            tag,
        };
        for i in 0..count {
            let name = file_name(i, tag);
            let path = set.dir.path().join(&name);
            let file = match open(&set.dir, i, &name, &path, set.direct) {
                Ok(f) => f,
                Err((_, Some(libc::EINVAL))) if i == 0 => {
                    set.direct = false;
                    if create {
                        let _ = set.dir.remove(&name);
                    }
                    open(&set.dir, i, &name, &path, false).map_err(|(err, _)| err)?
                }
                Err((err, _)) => return Err(err),
            };
            set.names.push(name);
            set.paths.push(path);
            set.files.push(file);
        }
        Ok(set)
    }

    /// Whether every file stays in place when the set is dropped (true while a later pass
    /// needs them); `settle` still keeps the files that hold bad data.
    pub fn set_keep(&mut self, keep: bool) {
        self.kept.iter_mut().for_each(|k| *k = keep);
    }

    /// The random part of the file names, for [`FileSet::open`] to find them again.
    pub fn tag(&self) -> Option<u32> {
        self.tag
    }

    /// Whether file `index` stays after the run.
    pub fn kept(&self, index: usize) -> bool {
        self.kept.get(index).copied().unwrap_or(false)
    }

    /// Name where each of `extents` lives — its file, the offset in it and the device
    /// ranges the filesystem put it on (FIEMAP on the open file, before any file is
    /// removed) — and keep the files that hold bad data, so the places stay findable and
    /// the bad blocks stay out of use.
    pub fn settle(&mut self, extents: &[Extent]) -> (BackingDevice, Vec<LocatedExtent>) {
        let mut bad = vec![false; self.files.len()];
        for e in extents {
            let last = (e.end() - 1) / FILE_BYTES;
            for i in e.offset / FILE_BYTES..=last {
                if let Some(b) = bad.get_mut(i as usize) {
                    *b = true;
                }
            }
        }
        let device = self.backing_device();
        let fs_reason = self.device_reason(&device);
        let mut placed = Vec::with_capacity(self.files.len());
        for (i, (path, file)) in self.paths.iter().zip(&self.files).enumerate() {
            if bad[i] {
                self.kept[i] = true;
            }
            let placement = match (&fs_reason, bad[i]) {
                (_, false) => Err(String::new()),
                (Some(why), true) => Err(why.clone()),
                (None, true) => {
                    let len = (self.total - i as u64 * FILE_BYTES).min(FILE_BYTES);
                    crate::sys::file_extents(file, len, MAX_FILE_EXTENTS).map_err(|e| {
                        let fs = self
                            .dir()
                            .and_then(crate::sys::statfs_magic)
                            .map(crate::sys::fs_label)
                            .unwrap_or_else(|| "this filesystem".into());
                        match e.raw_os_error() {
                            Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) => {
                                format!("{fs} does not map files to device blocks (FIEMAP: {e})")
                            }
                            _ => format!("FIEMAP on '{}' failed: {e}", path.display()),
                        }
                    })
                }
            };
            placed.push(PlacedFile {
                path: path.display().to_string(),
                kept: self.kept[i],
                placement,
            });
        }
        let located = locate(extents, FILE_BYTES, &placed, &device);
        (device, located)
    }

    fn dir(&self) -> Option<&Path> {
        Some(self.dir.path())
    }

    /// The block device the files are on, by `st_dev`: its name, mount source and, on a
    /// partition, the partition's start on the whole disk.
    fn backing_device(&self) -> BackingDevice {
        let dev = self
            .files
            .first()
            .and_then(|f| f.metadata().ok())
            .map_or(0, |m| m.dev());
        let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
        let name = crate::device::sysfs::dev_name(major, minor);
        let table = crate::platform::mount_table(&crate::platform::Roots::system());
        let source = table
            .entries
            .iter()
            .find(|m| (m.major, m.minor) == (major, minor))
            .map(|m| m.source.clone());
        let whole_disk = name
            .as_deref()
            .and_then(crate::device::sysfs::whole_disk_name);
        let partition_start_bytes = name
            .as_deref()
            .and_then(crate::device::sysfs::partition_start_bytes);
        BackingDevice {
            major,
            minor,
            name,
            source,
            whole_disk,
            partition_start_bytes,
        }
    }

    /// Why FIEMAP's addresses would not be offsets on `device`, if they would not.
    fn device_reason(&self, device: &BackingDevice) -> Option<String> {
        let magic = self.dir().and_then(crate::sys::statfs_magic);
        if magic == Some(crate::sys::magic::BTRFS) {
            return Some(
                "btrfs gives FIEMAP addresses in its own logical space, which may span several devices: not an offset on one device".into(),
            );
        }
        if let Some(m) = magic.filter(|&m| crate::sys::memory_fs(m)) {
            return Some(format!(
                "{} keeps its files in memory: no device holds them",
                crate::sys::fs_label(m)
            ));
        }
        if device.name.is_none() {
            return Some(format!(
                "the filesystem is on no block device (st_dev {}:{}), so its addresses name no place on a device",
                device.major, device.minor
            ));
        }
        None
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

fn create_error(dir: &Path, e: &io::Error) -> Error {
    let e = e.raw_os_error().map_or_else(
        || io::Error::new(e.kind(), e.to_string()),
        io::Error::from_raw_os_error,
    );
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
        for (name, kept) in self.names.iter().zip(&self.kept) {
            if !kept {
                let _ = self.dir.remove(name);
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

    fn d(p: &Path) -> Dir {
        Dir::open_under_test(p).unwrap()
    }

    /// Issue 30: in a directory others can write the names are not predictable, a planted
    /// name is never opened, and a run is not continued through a file with a second name.
    #[test]
    fn shared_directories_get_unguessable_names_and_resumes_refuse_hard_links() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let names = |set: &FileSet| {
            set.paths()
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        {
            let set = FileSet::create(d(dir.path()), 1 << 20, false).unwrap();
            assert_eq!(names(&set), ["flashscope-verify-0000.bin"]);
        }
        assert_eq!(shared_dir(&d(dir.path())), (false, None));
        for mode in [0o777, 0o1777, 0o720] {
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
            let (tagged, renamed) = shared_dir(&d(dir.path()));
            assert!(tagged, "{mode:o}");
            assert_eq!(renamed.is_none(), mode == 0o1777, "{mode:o}: {renamed:?}");
            // The predictable name is planted: it is neither opened nor in the way.
            let planted = dir.path().join("flashscope-verify-0000.bin");
            std::fs::write(&planted, b"theirs").unwrap();
            let set = FileSet::create(d(dir.path()), 1 << 20, false).unwrap();
            let n = names(&set);
            let tag = n[0]
                .strip_prefix("flashscope-verify-0000-")
                .and_then(|t| t.strip_suffix(".bin"))
                .unwrap_or_else(|| panic!("{mode:o}: {n:?}"));
            assert!(
                tag.len() == 8 && tag.chars().all(|c| c.is_ascii_hexdigit()),
                "{n:?}"
            );
            assert_eq!(std::fs::read(&planted).unwrap(), b"theirs");
            // A later pass finds them again through the tag.
            let mut set = set;
            set.set_keep(true);
            let tag = set.tag();
            assert!(tag.is_some());
            drop(set);
            let again = FileSet::open(d(dir.path()), 1 << 20, false, 0, tag).unwrap();
            assert_eq!(names(&again), n);
            drop(again);
            std::fs::remove_file(&planted).unwrap();
        }
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        // A run to resume whose file gained a second name (a hard link someone put there
        // in place of it) is refused before anything is written.
        let mut set = FileSet::create(d(dir.path()), 1 << 20, false).unwrap();
        set.set_keep(true);
        let path = set.paths()[0].clone();
        drop(set);
        let victim = dir.path().join("victim");
        std::fs::write(&victim, vec![9u8; 1 << 20]).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::hard_link(&victim, &path).unwrap();
        let e = FileSet::open(d(dir.path()), 1 << 20, true, 0, None)
            .err()
            .expect("a hard link is refused");
        assert!(e.to_string().contains("hard links"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), vec![9u8; 1 << 20]);
    }

    #[test]
    fn files_map_one_range_and_disappear_unless_kept() {
        let dir = tempfile::tempdir().unwrap();
        let paths;
        {
            let mut set = FileSet::create(d(dir.path()), 3 << 20, false).unwrap();
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
                FileSet::create(d(dir.path()), 1 << 20, false).is_err(),
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
