//! Targets: parse a device spec, open it with the safety policy, and say what it is.
//!
//! A spec is a path (block device or regular file) or `sim:PRESET[,key=value...]`.

pub mod emmc;
pub mod hostpath;
pub mod mmc;
pub mod scr;
pub mod sysfs;

use crate::backend::sim::{SimConfig, SimDevice};
use crate::backend::{Backend, SyncBackend};
use crate::platform::mounts;
use crate::vocab::Warning;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// What a target spec names.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// A block device or regular file.
    Path(PathBuf),
    /// The built-in simulated flash device.
    Sim(Box<SimConfig>),
}

/// A target as the user named it, parsed once at the CLI edge (or from a journal) and
/// passed down: its text for messages and documents, and what it names. Nothing below the
/// CLI parses a spec again.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetSpec {
    text: String,
    names: Spec,
}

impl TargetSpec {
    /// Parse a device spec: `sim:PRESET[,key=value...]` or a path.
    pub fn parse(text: &str) -> Result<TargetSpec> {
        let names = if let Some(rest) = text.strip_prefix("sim:") {
            Spec::Sim(Box::new(SimConfig::parse(rest)?))
        } else if text.is_empty() {
            return Err(Error::usage(
                "empty target: give a block device, a file or sim:PRESET",
            ));
        } else {
            Spec::Path(PathBuf::from(text))
        };
        Ok(TargetSpec {
            text: text.to_string(),
            names,
        })
    }

    /// A path flashscope chose itself (a test file it made, a descriptor's
    /// `/proc/self/fd/N`): nothing to parse.
    pub fn of_path(path: PathBuf) -> TargetSpec {
        TargetSpec {
            text: path.to_string_lossy().into_owned(),
            names: Spec::Path(path),
        }
    }

    /// The spec as given, for messages and documents.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// What the spec names.
    pub fn names(&self) -> &Spec {
        &self.names
    }

    /// The path of a block device or file; `None` for `sim:`.
    pub fn path(&self) -> Option<&Path> {
        match &self.names {
            Spec::Path(p) => Some(p),
            Spec::Sim(_) => None,
        }
    }

    /// True for a `sim:` spec: the simulated card lives in this process, so there is
    /// nothing to preserve, journal or restore after the process ends.
    pub fn is_sim(&self) -> bool {
        matches!(self.names, Spec::Sim(_))
    }

    /// The kind of target the spec names, from the path's metadata (no open). A path that
    /// cannot be examined counts as a file: opening it reports why.
    pub fn kind(&self) -> TargetKind {
        let Spec::Path(path) = &self.names else {
            return TargetKind::Sim;
        };
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => TargetKind::Directory,
            Ok(m) if m.file_type().is_block_device() => TargetKind::Block,
            _ => TargetKind::File,
        }
    }
}

impl std::fmt::Display for TargetSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for TargetSpec {
    type Err = Error;
    fn from_str(text: &str) -> Result<TargetSpec> {
        TargetSpec::parse(text)
    }
}

/// What a target is. It decides which safety checks apply, whether preserve mode can
/// journal it, and which identity fields a journal records. Serialised as today's JSON
/// strings: "block", "file", "sim", "directory".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// A block device (`/dev/sdb`, `/dev/loop3`).
    Block,
    /// A regular file (an image, or a file on a flash filesystem).
    #[default]
    File,
    /// The built-in simulated card (`sim:...`): it lives in this process.
    Sim,
    /// A directory on a mounted filesystem: tests write only their own new files there.
    Directory,
}

impl TargetKind {
    /// The JSON string: "block", "file", "sim" or "directory".
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Block => "block",
            TargetKind::File => "file",
            TargetKind::Sim => "sim",
            TargetKind::Directory => "directory",
        }
    }

    /// Whether the target holds data that outlives this process (a block device or a
    /// file): what preserve mode can journal and `restore` can put back.
    pub fn holds_data(self) -> bool {
        matches!(self, TargetKind::Block | TargetKind::File)
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The model a simulated card reports (`info`, the exporters' `model` label).
pub const SIM_MODEL: &str = "flashscope simulated flash device";

/// Open `spec` read-only to learn its size and sector before planning a test (no I/O).
pub fn peek(spec: &TargetSpec) -> Result<TargetInfo> {
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    Ok(open(spec, &req)?.info)
}

/// What a test needs from the target.
#[derive(Debug, Clone, Copy)]
pub struct OpenRequest {
    /// The test writes: the mounted / held / read-only / swap / loop-backing-file checks
    /// apply. [`write::open_for_write`] asks for it once the policy has allowed the write.
    pub write: bool,
    /// O_DIRECT is required (raw tests). When false, a filesystem that refuses O_DIRECT
    /// is opened buffered with a warning.
    pub require_direct: bool,
}

impl OpenRequest {
    pub fn read_only() -> Self {
        OpenRequest {
            write: false,
            require_direct: true,
        }
    }

    pub fn read_write() -> Self {
        OpenRequest {
            write: true,
            require_direct: true,
        }
    }
}

/// An opened target: what it is, the backend to do I/O on, and warnings found on the way.
pub struct OpenTarget {
    pub info: TargetInfo,
    pub backend: Box<dyn Backend>,
    pub warnings: Vec<Warning>,
    /// The block device's kernel name (e.g. `sdb`), for sysfs statistics; `None` otherwise.
    pub block_name: Option<String>,
    /// `fstat` of the opened descriptor (device and inode numbers), so who the target is
    /// is known from what was opened, not from its path; `None` for `sim:`.
    pub stat: Option<std::fs::Metadata>,
}

/// Open a target described by `spec` for the given request, enforcing the safety policy.
pub fn open(spec: &TargetSpec, req: &OpenRequest) -> Result<OpenTarget> {
    match spec.names() {
        Spec::Sim(cfg) => Ok(open_sim(spec.as_str(), (**cfg).clone())),
        Spec::Path(path) => open_path(spec.as_str(), path, req),
    }
}

fn open_sim(spec: &str, cfg: SimConfig) -> OpenTarget {
    let info = TargetInfo {
        spec: spec.to_string(),
        kind: TargetKind::Sim,
        size_bytes: cfg.size,
        logical_sector_bytes: cfg.sector,
        physical_sector_bytes: cfg.sector,
        rotational: Some(false),
        removable: None,
        read_only: Some(false),
        direct_io: Some(true),
        filesystem: None,
        model: Some(SIM_MODEL.to_string()),
        serial: None,
    };
    OpenTarget {
        info,
        backend: Box::new(SimDevice::new(cfg)),
        warnings: Vec::new(),
        block_name: None,
        stat: None,
    }
}

fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

fn open_error(spec: &str, e: io::Error, write: bool) -> Error {
    match errno_of(&e) {
        libc::ENOENT => Error::runtime(format!("target '{spec}' does not exist")),
        // Root refused: not a matter of users and groups, so "run as root" would not help.
        libc::EACCES | libc::EPERM if crate::sys::euid() == 0 => Error::runtime(format!(
            "cannot open target '{spec}': permission denied even to root ({e}): a security module (SELinux, AppArmor), a container or sandbox, or the device itself refuses it"
        )),
        libc::EACCES | libc::EPERM if write => Error::Refused(format!(
            "target '{spec}' is not writable by this user (permission denied): run as root or choose a writable target"
        )),
        libc::EACCES | libc::EPERM => Error::runtime(format!(
            "cannot read target '{spec}': permission denied (run as root or add yourself to the disk group)"
        )),
        libc::EROFS => Error::Refused(format!(
            "target '{spec}' is read-only (write-protect switch or read-only filesystem); this test needs to write"
        )),
        libc::EBUSY => Error::Refused(format!(
            "target '{spec}' is in use (exclusive open failed: mounted, swap or held by another user); release it first"
        )),
        libc::ENXIO | libc::ENODEV | libc::ENOMEDIUM => {
            Error::runtime(format!("target '{spec}' has no medium or has gone away ({e})"))
        }
        _ => Error::io(format!("opening target '{spec}'"), e),
    }
}

fn try_open(path: &Path, write: bool, flags: i32) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(path)
}

fn open_path(spec: &str, path: &Path, req: &OpenRequest) -> Result<OpenTarget> {
    let meta = std::fs::metadata(path).map_err(|e| open_error(spec, e, req.write))?;
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(Error::usage(format!(
            "target '{spec}' is a directory: raw tests need a block device or a file (for a mounted filesystem use `flashscope fs ... {spec}`)"
        )));
    }
    let is_block = ft.is_block_device();
    if !is_block && !ft.is_file() {
        return Err(Error::usage(format!(
            "target '{spec}' is neither a block device nor a regular file"
        )));
    }
    let mut warnings = Vec::new();
    let mut block_name = None;
    // One writer per file: held by the backend, so as long as the test writes.
    let mut writer_lock = None;
    if req.write && !is_block {
        writer_lock = Some(lock_writer(spec, path, &meta)?);
        check_loops_not_busy(spec, &meta, None)?;
    }
    if is_block {
        match sysfs::block_name(&meta) {
            Some(name) => {
                if req.write {
                    check_not_busy(spec, &name)?;
                    check_loops_not_busy(spec, &meta, Some(&name))?;
                    if let Some(file) = sysfs::read_attr(&name, "loop/backing_file") {
                        // A loop device and its backing file are the same bytes: one
                        // writer through either.
                        let backing = Path::new(file.trim());
                        if let Ok(m) = std::fs::metadata(backing) {
                            writer_lock = Some(lock_writer(spec, backing, &m)?);
                        }
                    }
                    if sysfs::read_flag(&name, "ro") == Some(true) {
                        return Err(Error::Refused(format!(
                            "target '{spec}' is read-only (sysfs ro=1: write-protect switch or read-only device); this test needs to write"
                        )));
                    }
                }
                block_name = Some(name);
            }
            None => {
                // A board without /sys mounted: reading works (sizes come from ioctls),
                // writing does not, since partitions and holders cannot be checked.
                let report = crate::platform::sysfs_block(&crate::platform::Roots::system(), "");
                if report.mounted {
                    return Err(Error::runtime(format!(
                        "cannot find '{spec}' in /sys/class/block"
                    )));
                }
                let why = report.message(spec).unwrap_or_default();
                if req.write {
                    return Err(Error::Refused(format!(
                        "refusing to write to '{spec}': {why}; the safety policy needs sysfs to find its partitions and holders"
                    )));
                }
                warnings.push(Warning::NoSysfs { why });
            }
        }
    }
    let mut flags = crate::sys::O_DIRECT | libc::O_CLOEXEC;
    if req.write && is_block {
        flags |= libc::O_EXCL;
    }
    let mut direct = true;
    let file = match try_open(path, req.write, flags) {
        Ok(f) => f,
        Err(e) if errno_of(&e) == libc::EINVAL && !is_block => {
            if req.require_direct {
                return Err(Error::runtime(format!(
                    "the filesystem holding '{spec}' refuses O_DIRECT, so reads would come from the page cache; put the file on a filesystem that supports direct I/O"
                )));
            }
            direct = false;
            warnings.push(Warning::DirectIoRefused {
                target: Some(spec.to_string()),
                fallback: crate::vocab::warning::DirectFallback::Buffered,
            });
            try_open(path, req.write, libc::O_CLOEXEC)
                .map_err(|e| open_error(spec, e, req.write))?
        }
        Err(e) => return Err(open_error(spec, e, req.write)),
    };
    // What was opened must be what was checked above (mounts, holders, sysfs name).
    let stat = file
        .metadata()
        .map_err(|e| Error::io(format!("examining the opened target '{spec}'"), e))?;
    if (stat.dev(), stat.ino(), stat.rdev()) != (meta.dev(), meta.ino(), meta.rdev()) {
        return Err(Error::Refused(format!(
            "target '{spec}' changed while it was being opened (another file or device now has its name): nothing was done; check what '{spec}' is and rerun"
        )));
    }
    let (size, logical, physical) = if is_block {
        block_sizes(&file).map_err(|e| Error::io(format!("reading the size of '{spec}'"), e))?
    } else {
        let align = crate::sys::dio_alignment(path).unwrap_or(512);
        (meta.len(), align, align.max(4096))
    };
    let mut filesystem = None;
    if !is_block {
        if let Some(t) = crate::sys::statfs_magic(path) {
            filesystem = Some(crate::sys::fs_label(t));
            if let Some(name) = crate::sys::fs_name(t).filter(|_| crate::sys::memory_fs(t)) {
                warnings.push(Warning::MemoryFilesystem {
                    fs_type: name.to_string(),
                    place: crate::vocab::warning::MemoryPlace::TargetFile(spec.to_string()),
                });
            }
        }
    }
    if size == 0 {
        return Err(Error::usage(format!(
            "target '{spec}' is empty (0 bytes): nothing to measure"
        )));
    }
    if !is_block {
        if let Some(unbacked) = unbacked_bytes(&file, size) {
            warnings.push(Warning::SparseTarget {
                spec: spec.to_string(),
                unbacked_bytes: unbacked,
                size_bytes: size,
            });
        }
    }
    let (rotational, removable, read_only) = match &block_name {
        Some(n) => (
            sysfs::read_flag(n, "queue/rotational"),
            sysfs::read_flag(n, "removable"),
            sysfs::read_flag(n, "ro"),
        ),
        None => (None, None, None),
    };
    let disk = block_name
        .as_ref()
        .map(|n| sysfs::whole_disk_name(n).unwrap_or_else(|| n.clone()));
    let info = TargetInfo {
        model: disk.as_deref().and_then(sysfs::disk_model),
        serial: disk.as_deref().and_then(sysfs::disk_serial),
        spec: spec.to_string(),
        kind: if is_block {
            TargetKind::Block
        } else {
            TargetKind::File
        },
        size_bytes: size,
        logical_sector_bytes: logical,
        physical_sector_bytes: physical,
        rotational,
        removable,
        read_only,
        direct_io: Some(direct),
        filesystem,
    };
    let backend = SyncBackend::new(file, size, logical, is_block).holding(writer_lock);
    Ok(OpenTarget {
        info,
        backend: Box::new(backend),
        warnings,
        block_name,
        stat: Some(stat),
    })
}

/// How much of a regular file of `size` bytes has no data on a medium: holes and
/// unwritten (preallocated) extents, from FIEMAP. `None` when all of it is written, when
/// less than 1 MiB and 1 % is not, or when the filesystem cannot say (tmpfs: its own
/// warning covers it).
fn unbacked_bytes(file: &File, size: u64) -> Option<u64> {
    use crate::sys::fiemap_flags::UNWRITTEN;
    const MAX_EXTENTS: usize = 1 << 16;
    let extents = crate::sys::file_extents(file, size, MAX_EXTENTS).ok()?;
    if extents.len() >= MAX_EXTENTS {
        return None; // more pieces than were read: what the rest holds is not known
    }
    let written: u64 = extents
        .iter()
        .filter(|e| e.flags & UNWRITTEN == 0)
        .map(|e| e.length.min(size.saturating_sub(e.logical)))
        .sum();
    let unbacked = size.saturating_sub(written);
    (unbacked >= 1 << 20 || unbacked > size / 100).then_some(unbacked)
}

/// Refuse when the device or any of its partitions is mounted, swap, or held.
fn check_not_busy(spec: &str, name: &str) -> Result<()> {
    match busy(name)? {
        Some(why) => Err(Error::Refused(format!(
            "refusing to write to '{spec}': {why}"
        ))),
        None => Ok(()),
    }
}

/// Refuse writing to a file that backs a busy loop device, or to a loop device whose
/// backing file also backs a busy one: the same bytes, reached another way. `meta` is the
/// target file's, `name` the target's kernel name when it is a block device.
fn check_loops_not_busy(spec: &str, meta: &std::fs::Metadata, name: Option<&str>) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let (dev, ino) = match name {
        None => (meta.dev(), meta.ino()),
        Some(n) => {
            let Some(file) = sysfs::read_attr(n, "loop/backing_file") else {
                return Ok(());
            };
            match std::fs::metadata(file.trim()) {
                Ok(m) => (m.dev(), m.ino()),
                Err(_) => return Ok(()), // deleted backing file: no other path reaches it
            }
        }
    };
    for other in loops_over(dev, ino) {
        if Some(other.as_str()) == name {
            continue;
        }
        let busy_now = match busy(&other)? {
            Some(why) => Some(why),
            // Held open exclusively (a test writing it, a partitioning tool): in use.
            None => OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_EXCL | libc::O_CLOEXEC | libc::O_NONBLOCK)
                .open(format!("/dev/{other}"))
                .err()
                .filter(|e| e.raw_os_error() == Some(libc::EBUSY))
                .map(|_| format!("/dev/{other} is held open exclusively by another process")),
        };
        if let Some(why) = busy_now {
            let how = match name {
                None => format!("it is the backing file of /dev/{other}"),
                Some(n) => format!("/dev/{n} and /dev/{other} are loop devices over the same file"),
            };
            return Err(Error::Refused(format!(
                "refusing to write to '{spec}': {how}, and {why}"
            )));
        }
    }
    Ok(())
}

/// The writer's locks this process holds, by file (device, inode): a second open for
/// writing in the same process (a restore after the test, auto's next step) shares the
/// lock instead of refusing itself.
type HeldLock = (u64, u64, std::sync::Weak<File>);
static WRITER_LOCKS: std::sync::Mutex<Vec<HeldLock>> = std::sync::Mutex::new(Vec::new());

/// One writer per target: an exclusive `flock` on the file a write goes to (a regular-file
/// target, or a loop device's backing file), taken on a descriptor open for writing and
/// held while the returned file is (the backend keeps it). Another process writing the
/// same file, directly or through a loop device, is refused (exit 2) with its process
/// named; the kernel drops the lock when the holder exits, crashed or not.
///
/// Only a writer can hold it (issue 44.10): `flock` works on any descriptor, so anyone
/// who may read an image could lock out root's tests. A lock held by a process with no
/// descriptor of the file open for writing is a reader's and refuses nothing; writers
/// then exclude each other with an open-file-description write lock, which the kernel
/// grants only on a descriptor open for writing (a reader's read lock there, the only
/// lock it can take, is not a writer's either).
fn lock_writer(spec: &str, path: &Path, meta: &std::fs::Metadata) -> Result<std::sync::Arc<File>> {
    let key = (meta.dev(), meta.ino());
    let mut held = WRITER_LOCKS.lock().unwrap_or_else(|p| p.into_inner());
    held.retain(|(_, _, w)| w.strong_count() > 0);
    if let Some(lock) = held
        .iter()
        .find(|(d, i, _)| (*d, *i) == key)
        .and_then(|(_, _, w)| w.upgrade())
    {
        return Ok(lock);
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| open_error(spec, e, true))?;
    let opened = file
        .metadata()
        .map_err(|e| Error::io(format!("examining '{spec}'"), e))?;
    if (opened.dev(), opened.ino()) != key {
        return Err(Error::Refused(format!(
            "target '{spec}' changed while it was being opened (another file now has its name): nothing was done; check what '{spec}' is and rerun"
        )));
    }
    if let Err(e) = crate::sys::try_lock(&file, true) {
        let holder = lock_holder(key);
        let reader = holder
            .as_ref()
            .is_some_and(|(pid, _)| !holds_for_writing(*pid, key));
        let blocked = e.raw_os_error() == Some(libc::EWOULDBLOCK);
        // A reader's flock: writers meet on the write lock only they can take.
        let other_writer = if blocked && reader {
            match crate::sys::ofd_write_lock(&file) {
                Ok(()) => None,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    match crate::sys::ofd_write_locked_by_another(&file) {
                        Ok(false) => None,
                        _ => Some("another process".to_string()),
                    }
                }
                Err(e) => return Err(Error::io(format!("locking '{spec}' for writing"), e)),
            }
        } else if blocked {
            Some(
                holder
                    .map(|(pid, cmd)| format!("process {pid} ({cmd})"))
                    .unwrap_or_else(|| "another process".to_string()),
            )
        } else {
            return Err(Error::io(format!("locking '{spec}' for writing"), e));
        };
        if let Some(who) = other_writer {
            let what = if path == Path::new(spec) {
                String::new()
            } else {
                format!(
                    " (through its backing file {})",
                    crate::input::printable(&path.to_string_lossy())
                )
            };
            return Err(Error::Refused(format!(
                "target '{spec}'{what} is being written by {who}: one writer at a time, or the two tests overwrite each other's data and journals; wait for it to finish and rerun"
            )));
        }
    }
    let lock = std::sync::Arc::new(file);
    held.push((key.0, key.1, std::sync::Arc::downgrade(&lock)));
    Ok(lock)
}

/// Whether process `pid` has the file `dev`:`ino` open for writing (its descriptors in
/// /proc, their open flags in fdinfo). Unknown (another user's process seen without
/// privilege) counts as writing: only a lock shown to be a reader's is passed over.
fn holds_for_writing(pid: u32, key: (u64, u64)) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return true;
    };
    for fd in fds.flatten() {
        let Ok(meta) = std::fs::metadata(fd.path()) else {
            continue;
        };
        if (meta.dev(), meta.ino()) != key {
            continue;
        }
        let info = std::fs::read_to_string(format!(
            "/proc/{pid}/fdinfo/{}",
            fd.file_name().to_string_lossy()
        ));
        let flags = info.ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .and_then(|f| i32::from_str_radix(f.trim(), 8).ok())
        });
        match flags {
            Some(f) if f & libc::O_ACCMODE == libc::O_RDONLY => {}
            _ => return true,
        }
    }
    false
}

/// The process holding a `flock` on the file `dev`:`ino` (from /proc/locks) and its
/// command line, printable.
fn lock_holder((dev, ino): (u64, u64)) -> Option<(u32, String)> {
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let want = format!("{major:02x}:{minor:02x}:{ino}");
    let pid: u32 = locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(1) == Some(&"FLOCK") && f.get(5) == Some(&want.as_str()))
            .then(|| f.get(4)?.parse().ok())
            .flatten()
    })?;
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            let b = &b[..b.len().min(512)];
            String::from_utf8_lossy(b)
                .trim_end_matches('\0')
                .replace('\0', " ")
        })
        .unwrap_or_default();
    Some((pid, crate::input::printable(&cmd).into_owned()))
}

/// The loop devices (kernel names) whose backing file is the file `dev`:`ino`.
fn loops_over(dev: u64, ino: u64) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("loop"))
        .filter(|n| {
            sysfs::read_attr(n, "loop/backing_file")
                .and_then(|f| std::fs::metadata(f.trim()).ok())
                .is_some_and(|m| m.dev() == dev && m.ino() == ino)
        })
        .collect()
}

/// Why the block device behind `spec` is in use (it or a partition of it mounted, used as
/// swap, or held), in words; `None` for one that is not, and for anything that is no
/// block device or cannot be examined. For advice that would destroy what it holds.
pub fn in_use(spec: &TargetSpec) -> Option<String> {
    let meta = std::fs::metadata(spec.path()?).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    busy(&sysfs::block_name(&meta)?).ok().flatten()
}

/// Why the device `name` (or a partition of it) may not be written: mounted, swap, held.
fn busy(name: &str) -> Result<Option<String>> {
    let sys = Path::new("/sys/class/block");
    let parent = sysfs::whole_disk_name(name).unwrap_or_else(|| name.to_string());
    let nodes = mounts::sysfs_nodes(sys, &parent);
    let nodes: Vec<_> = if parent == name {
        nodes
    } else {
        nodes.into_iter().filter(|n| n.name == name).collect()
    };
    // Without /proc/self/mountinfo fall back to /proc/mounts; without either, refuse:
    // a write cannot be proven safe when the mount table is unknown.
    let table = crate::platform::mount_table(&crate::platform::Roots::system());
    if table.source == crate::platform::MountSource::Unknown {
        return Err(Error::Refused(format!(
            "refusing to write to /dev/{name}: {}",
            table.note.unwrap_or_default()
        )));
    }
    let mounts = table.entries;
    let swaps = mounts::parse_swaps(&std::fs::read_to_string("/proc/swaps").unwrap_or_default());
    let holders = mounts::sysfs_holders(sys, &nodes, &parent);
    Ok(mounts::busy_reason(&nodes, &mounts, &swaps, &holders))
}

/// Size, logical and physical sector size of an open block device.
fn block_sizes(file: &File) -> io::Result<(u64, u32, u32)> {
    let size = crate::sys::block_device_bytes(file)?;
    let (logical, physical) = crate::sys::sector_sizes(file);
    Ok((size, logical, physical))
}

/// What is known about a target before any test runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TargetInfo {
    pub spec: String,
    pub kind: TargetKind,
    pub size_bytes: u64,
    pub logical_sector_bytes: u32,
    pub physical_sector_bytes: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direct_io: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    /// The whole disk's model and serial number as sysfs gives them (`sysfs::disk_model`,
    /// `sysfs::disk_serial`); the simulator's model for `sim:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
}

/// A spec for a unit test, as the CLI would parse it.
#[cfg(test)]
pub(crate) fn test_spec(text: &str) -> TargetSpec {
    TargetSpec::parse(text).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let sim = TargetSpec::parse("sim:sd-16g").unwrap();
        assert!(matches!(sim.names(), Spec::Sim(_)));
        assert!(sim.is_sim() && sim.path().is_none() && sim.kind() == TargetKind::Sim);
        assert_eq!(sim.to_string(), "sim:sd-16g");
        let dev = TargetSpec::parse("/dev/sdb").unwrap();
        assert!(matches!(dev.names(), Spec::Path(_)));
        assert_eq!(dev.path(), Some(Path::new("/dev/sdb")));
        assert!(TargetSpec::parse("").is_err());
        assert!(TargetSpec::parse("sim:custom,size=banana")
            .unwrap_err()
            .to_string()
            .contains("banana"));
    }

    #[test]
    fn files_open_with_size_from_fstat() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("img");
        std::fs::write(&p, vec![0u8; 1 << 20]).unwrap();
        let t = open(
            &crate::device::test_spec(p.to_str().unwrap()),
            &OpenRequest {
                write: false,
                require_direct: false,
            },
        )
        .unwrap();
        assert_eq!(t.info.size_bytes, 1 << 20);
        assert_eq!(t.info.kind, TargetKind::File);
    }

    #[test]
    fn missing_targets_are_runtime_errors_and_directories_usage_errors() {
        let e = open(
            &crate::device::test_spec("/nonexistent/flashscope-test"),
            &OpenRequest::read_only(),
        )
        .err()
        .unwrap();
        assert_eq!(e.exit_code(), 1);
        let dir = tempfile::tempdir().unwrap();
        let e = open(
            &crate::device::test_spec(dir.path().to_str().unwrap()),
            &OpenRequest::read_only(),
        )
        .err()
        .unwrap();
        assert_eq!(e.exit_code(), 2);
    }
}
