//! What the machine around a test directory looks like: the filesystem (type, free space,
//! mount options, compression), memory (/proc/meminfo, /proc/vmstat) and the CPU frequency
//! governor. These facts decide which warnings a filesystem result needs.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// `statfs.f_type` of tmpfs.
pub const TMPFS_MAGIC: i64 = 0x0102_1994;
/// `statfs.f_type` of ramfs.
pub const RAMFS_MAGIC: i64 = 0x8584_58f6_u32 as i64;
/// `statfs.f_type` of btrfs.
pub const BTRFS_MAGIC: i64 = 0x9123_683e_u32 as i64;
/// `statfs.f_type` of UBIFS.
pub const UBIFS_MAGIC: i64 = 0x2405_1905;
/// `statfs.f_type` of ext2/3/4.
pub const EXT4_MAGIC: i64 = 0xef53;
/// `statfs.f_type` of F2FS.
pub const F2FS_MAGIC: i64 = 0xf2f5_2010_u32 as i64;
/// `statfs.f_type` of XFS.
pub const XFS_MAGIC: i64 = 0x5846_5342;
/// `statfs.f_type` of ZFS.
pub const ZFS_MAGIC: i64 = 0x2fc1_2fc1;

/// The filesystem a test directory lives on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FsInfo {
    /// The directory as given, made absolute.
    pub dir: PathBuf,
    /// `statfs.f_type`.
    pub magic: i64,
    /// Filesystem type by name (from the mount table, else from the magic number).
    pub fs_type: String,
    /// Mount point and device of the mount that holds `dir`, when the mount table says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mount_point: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mount_source: Option<String>,
    /// Mount and superblock options joined by commas.
    pub mount_options: String,
    /// Bytes an unprivileged user may still write; `None` where the filesystem does not
    /// report a size (ramfs).
    pub free_bytes: Option<u64>,
    /// Fundamental block size.
    pub block_bytes: u64,
    /// True for tmpfs, ramfs or a zram / ram-disk block device: no flash involved.
    pub memory_backed: bool,
    /// True when the filesystem compresses data it writes (btrfs with compress, UBIFS unless
    /// compr=none, F2FS with compress_algorithm); `None` when it cannot be told (ZFS).
    pub compresses: Option<bool>,
}

/// Check that `dir` exists, is a directory and accepts a new file; all before any test
/// data is written. A probe file of zero bytes is created and removed at once.
pub fn check_dir(dir: &Path) -> Result<PathBuf> {
    let meta = std::fs::metadata(dir).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            Error::runtime(format!(
                "directory {} does not exist: create it or give an existing directory on the filesystem to test",
                dir.display()
            ))
        } else {
            Error::io(format!("looking at {}", dir.display()), e)
        }
    })?;
    if !meta.is_dir() {
        return Err(Error::usage(format!(
            "{} is not a directory: give a directory on the filesystem to test",
            dir.display()
        )));
    }
    let abs = std::fs::canonicalize(dir)
        .map_err(|e| Error::io(format!("resolving {}", dir.display()), e))?;
    let probe = abs.join(format!(".flashscope-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(abs)
        }
        Err(e) => {
            let why = match e.raw_os_error() {
                Some(libc::EROFS) => "it is on a read-only filesystem".to_string(),
                Some(libc::EACCES) | Some(libc::EPERM) => {
                    "you may not create files there".to_string()
                }
                Some(libc::ENOSPC) => "the filesystem is full".to_string(),
                _ => e.to_string(),
            };
            Err(Error::runtime(format!(
                "directory {} is not writable ({why}): choose a directory you can write to, or fix its permissions",
                abs.display()
            )))
        }
    }
}

/// Refuse, before anything is written, a test that needs more room than the filesystem has.
/// `need` is the most test data that exists at once; 1% of it (at least 1 MiB) is kept
/// spare for metadata.
pub fn check_free_space(fs: &FsInfo, need: u64, hint: &str) -> Result<()> {
    let Some(free) = fs.free_bytes else {
        return Ok(());
    };
    let margin = (need / 100).max(1 << 20);
    if need.saturating_add(margin) > free {
        return Err(Error::Refused(format!(
            "{} has {} free but this test needs {} (plus {} spare): {hint}",
            fs.dir.display(),
            crate::units::format_bytes(free),
            crate::units::format_bytes(need),
            crate::units::format_bytes(margin),
        )));
    }
    Ok(())
}

/// Inspect the filesystem holding `dir` (statfs, statvfs and the mount table).
pub fn fs_info(dir: &Path) -> Result<FsInfo> {
    let file = File::open(dir).map_err(|e| Error::io(format!("opening {}", dir.display()), e))?;
    let fd = file.as_raw_fd();
    // SAFETY: statfs is plain old data; zeroed is a valid value.
    let mut sfs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open for the call and sfs is a valid, writable statfs.
    if unsafe { libc::fstatfs(fd, &mut sfs) } != 0 {
        return Err(Error::io(
            format!("statfs on {}", dir.display()),
            io::Error::last_os_error(),
        ));
    }
    // SAFETY: as above, for statvfs.
    let mut svfs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open for the call and svfs is a valid, writable statvfs.
    if unsafe { libc::fstatvfs(fd, &mut svfs) } != 0 {
        return Err(Error::io(
            format!("statvfs on {}", dir.display()),
            io::Error::last_os_error(),
        ));
    }
    // Through u32: f_type is a signed 32-bit field on 32-bit ARM, and btrfs', ramfs' and
    // F2FS' magic numbers have the top bit set.
    let magic = i64::from(sfs.f_type as u32);
    let frsize = svfs.f_frsize as u64;
    let free_bytes = if svfs.f_blocks == 0 {
        None
    } else {
        Some((svfs.f_bavail as u64).saturating_mul(frsize))
    };
    let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mount = std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|text| find_mount(&text, &abs));
    let (fs_type, mount_point, mount_source, mount_options) = match mount {
        Some(m) => (m.fs_type, Some(m.mount_point), Some(m.source), m.options),
        None => (magic_name(magic).to_string(), None, None, String::new()),
    };
    let memory_backed = magic == TMPFS_MAGIC
        || magic == RAMFS_MAGIC
        || mount_source
            .as_deref()
            .is_some_and(|s| s.starts_with("/dev/zram") || s.starts_with("/dev/ram"));
    let compresses = compression(magic, &mount_options);
    Ok(FsInfo {
        dir: abs,
        magic,
        fs_type,
        mount_point,
        mount_source,
        mount_options,
        free_bytes,
        block_bytes: sfs.f_bsize as u64,
        memory_backed,
        compresses,
    })
}

/// Name of a filesystem by its statfs magic number.
pub fn magic_name(magic: i64) -> &'static str {
    match magic {
        TMPFS_MAGIC => "tmpfs",
        RAMFS_MAGIC => "ramfs",
        BTRFS_MAGIC => "btrfs",
        UBIFS_MAGIC => "ubifs",
        EXT4_MAGIC => "ext4",
        F2FS_MAGIC => "f2fs",
        XFS_MAGIC => "xfs",
        ZFS_MAGIC => "zfs",
        0x4d44 => "vfat",
        0x5346_544e => "ntfs",
        0x2011_bab0 => "exfat",
        _ => "unknown",
    }
}

/// Whether a filesystem compresses written data, from its type and mount options.
pub fn compression(magic: i64, options: &str) -> Option<bool> {
    let opts: Vec<&str> = options.split(',').collect();
    match magic {
        BTRFS_MAGIC => Some(opts.iter().any(|o| {
            (o.starts_with("compress") && !o.ends_with("=no") && !o.ends_with("=none"))
                || *o == "compress"
        })),
        // UBIFS compresses with LZO unless told compr=none.
        UBIFS_MAGIC => Some(!opts.contains(&"compr=none")),
        F2FS_MAGIC => Some(opts.iter().any(|o| o.starts_with("compress_algorithm="))),
        ZFS_MAGIC => None,
        _ => Some(false),
    }
}

/// One line of /proc/self/mountinfo that matters here.
#[derive(Debug, Clone, PartialEq)]
pub struct MountEntry {
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    /// Per-mount and superblock options, joined by commas.
    pub options: String,
}

/// The mount whose mount point is the longest prefix of `path` (the last one wins among
/// equals, as later mounts hide earlier ones).
pub fn find_mount(mountinfo: &str, path: &Path) -> Option<MountEntry> {
    let mut best: Option<MountEntry> = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 6 || r.len() < 2 {
            continue;
        }
        let mount_point = unescape_mount(l[4]);
        if !path.starts_with(&mount_point) {
            continue;
        }
        let longer = best
            .as_ref()
            .is_none_or(|b| mount_point.len() >= b.mount_point.len());
        if longer {
            let super_opts = r.get(2).copied().unwrap_or("");
            best = Some(MountEntry {
                mount_point,
                fs_type: r[0].to_string(),
                source: unescape_mount(r[1]),
                options: format!("{},{}", l[5], super_opts),
            });
        }
    }
    best
}

/// Undo the octal escapes (`\040` for a space) the kernel uses in the mount table.
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() {
            if let Some(v) = std::str::from_utf8(&b[i + 1..i + 4])
                .ok()
                .and_then(|oct| u8::from_str_radix(oct, 8).ok())
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Memory figures from /proc/meminfo, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MemInfo {
    pub total_bytes: u64,
    pub available_bytes: u64,
    pub cached_bytes: u64,
    pub dirty_bytes: u64,
    pub writeback_bytes: u64,
}

impl MemInfo {
    /// Parse the text of /proc/meminfo ("Dirty:  1234 kB" lines).
    pub fn parse(text: &str) -> MemInfo {
        let mut m = MemInfo::default();
        for line in text.lines() {
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let mut parts = rest.split_whitespace();
            let Some(Ok(v)) = parts.next().map(str::parse::<u64>) else {
                continue;
            };
            let bytes = if parts.next() == Some("kB") {
                v.saturating_mul(1024)
            } else {
                v
            };
            match key {
                "MemTotal" => m.total_bytes = bytes,
                "MemAvailable" => m.available_bytes = bytes,
                "Cached" => m.cached_bytes = bytes,
                "Dirty" => m.dirty_bytes = bytes,
                "Writeback" => m.writeback_bytes = bytes,
                _ => {}
            }
        }
        m
    }

    /// Read /proc/meminfo; zeros where it cannot be read.
    pub fn read() -> MemInfo {
        std::fs::read_to_string("/proc/meminfo")
            .map(|t| MemInfo::parse(&t))
            .unwrap_or_default()
    }
}

/// The /proc/vmstat counters kept in the timeline: pages dirtied and written back, and the
/// KiB paged in and out.
pub const VMSTAT_KEYS: [&str; 6] = [
    "nr_dirty",
    "nr_writeback",
    "nr_dirtied",
    "nr_written",
    "pgpgin",
    "pgpgout",
];

/// Parse the selected counters of /proc/vmstat.
pub fn parse_vmstat(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        if let (Some(k), Some(v)) = (parts.next(), parts.next()) {
            if VMSTAT_KEYS.contains(&k) {
                if let Ok(v) = v.parse() {
                    out.insert(k.to_string(), v);
                }
            }
        }
    }
    out
}

/// The scaling governor of every CPU frequency policy, e.g. `[("policy0", "schedutil")]`;
/// empty where the kernel exposes no cpufreq (many VMs).
pub fn cpu_governors() -> Vec<(String, String)> {
    cpu_governors_in(Path::new("/sys/devices/system/cpu/cpufreq"))
}

/// As `cpu_governors`, under another sysfs root (for tests).
pub fn cpu_governors_in(root: &Path) -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with("policy") {
                return None;
            }
            let gov = std::fs::read_to_string(e.path().join("scaling_governor")).ok()?;
            Some((name, gov.trim().to_string()))
        })
        .collect();
    out.sort();
    out
}

/// Drop the file's pages from the page cache (they must be clean: fsync first), so the
/// next read comes from the medium.
pub fn drop_file_cache(file: &File) -> io::Result<()> {
    // SAFETY: plain syscall on an fd we own; no pointers.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Bytes of the file's first `len` bytes that are in the page cache now (mmap + mincore),
/// so a "cold" read can show it was cold.
pub fn resident_bytes(file: &File, len: u64) -> io::Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page = if page > 0 { page as u64 } else { 4096 };
    let len_usize = usize::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large to map"))?;
    // SAFETY: a read-only shared mapping of an open file descriptor; the result is
    // checked for MAP_FAILED and unmapped below; the memory is never dereferenced.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len_usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let pages = len.div_ceil(page) as usize;
    let mut vec = vec![0u8; pages];
    // SAFETY: addr..addr+len is the mapping made above and vec has one byte per page.
    let rc = unsafe { libc::mincore(addr, len_usize, vec.as_mut_ptr()) };
    let err = io::Error::last_os_error();
    // SAFETY: unmapping exactly the mapping made above.
    unsafe { libc::munmap(addr, len_usize) };
    if rc != 0 {
        return Err(err);
    }
    let resident = vec.iter().filter(|b| **b & 1 == 1).count() as u64;
    Ok((resident * page).min(len))
}

/// Write back all dirty data and drop the whole page cache, dentries and inodes
/// (`echo 3 > /proc/sys/vm/drop_caches`); needs root.
pub fn drop_all_caches() -> io::Result<()> {
    // SAFETY: sync() takes no arguments and cannot fail.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", b"3\n")
}

/// True when the process runs as root (needed for --drop-caches).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `access(path, W_OK)`; used only to explain errors.
pub fn writable(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: c is a valid NUL-terminated string for the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_parses_kb_lines() {
        let m = MemInfo::parse(
            "MemTotal:       24684096 kB\nMemAvailable:   100 kB\nCached:   2 kB\nDirty:  3 kB\nWriteback:  0 kB\nHugePages_Total: 0\n",
        );
        assert_eq!(m.total_bytes, 24684096 * 1024);
        assert_eq!(m.available_bytes, 100 * 1024);
        assert_eq!(m.cached_bytes, 2048);
        assert_eq!(m.dirty_bytes, 3072);
        assert_eq!(m.writeback_bytes, 0);
        assert_eq!(
            MemInfo::parse("garbage\n:\nDirty: x kB"),
            MemInfo::default()
        );
    }

    #[test]
    fn live_meminfo_and_vmstat_have_the_fields() {
        let m = MemInfo::read();
        assert!(m.total_bytes > 0);
        let v = parse_vmstat(&std::fs::read_to_string("/proc/vmstat").unwrap());
        assert!(v.contains_key("nr_dirty"), "{v:?}");
        assert!(v.contains_key("pgpgout"));
    }

    #[test]
    fn mountinfo_picks_the_longest_prefix_and_superblock_options() {
        let text = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
30 22 0:40 / /mnt/data rw,noatime - btrfs /dev/sdb1 rw,compress=zstd:3,space_cache
31 22 0:41 / /mnt/data\\040x rw - tmpfs tmpfs rw,size=10k
";
        let m = find_mount(text, Path::new("/mnt/data/sub")).unwrap();
        assert_eq!(m.fs_type, "btrfs");
        assert_eq!(m.mount_point, "/mnt/data");
        assert!(m.options.contains("compress=zstd:3"));
        assert_eq!(compression(BTRFS_MAGIC, &m.options), Some(true));
        let r = find_mount(text, Path::new("/home")).unwrap();
        assert_eq!(r.fs_type, "ext4");
        let s = find_mount(text, Path::new("/mnt/data x/f")).unwrap();
        assert_eq!(s.fs_type, "tmpfs");
    }

    #[test]
    fn compression_follows_type_and_options() {
        assert_eq!(compression(BTRFS_MAGIC, "rw,space_cache"), Some(false));
        assert_eq!(
            compression(BTRFS_MAGIC, "rw,compress-force=lzo"),
            Some(true)
        );
        assert_eq!(compression(UBIFS_MAGIC, "rw"), Some(true));
        assert_eq!(compression(UBIFS_MAGIC, "rw,compr=none"), Some(false));
        assert_eq!(
            compression(F2FS_MAGIC, "rw,compress_algorithm=lz4"),
            Some(true)
        );
        assert_eq!(compression(EXT4_MAGIC, "rw,compress"), Some(false));
        assert_eq!(compression(ZFS_MAGIC, ""), None);
    }

    #[test]
    fn governors_are_read_per_policy() {
        let d = tempfile::tempdir().unwrap();
        for (p, g) in [("policy0", "powersave\n"), ("policy4", "performance\n")] {
            std::fs::create_dir(d.path().join(p)).unwrap();
            std::fs::write(d.path().join(p).join("scaling_governor"), g).unwrap();
        }
        std::fs::create_dir(d.path().join("boost")).unwrap();
        let g = cpu_governors_in(d.path());
        assert_eq!(
            g,
            vec![
                ("policy0".to_string(), "powersave".to_string()),
                ("policy4".to_string(), "performance".to_string())
            ]
        );
        assert!(cpu_governors_in(&d.path().join("missing")).is_empty());
    }

    #[test]
    fn fadvise_drops_a_synced_file_from_the_cache_and_mincore_sees_it() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let mut f = File::create(&p).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let f = File::open(&p).unwrap();
        assert_eq!(resident_bytes(&f, 1 << 20).unwrap(), 1 << 20);
        drop_file_cache(&f).unwrap();
        assert!(resident_bytes(&f, 1 << 20).unwrap() < 1 << 18);
        assert_eq!(resident_bytes(&f, 0).unwrap(), 0);
    }

    #[test]
    fn dir_checks_name_the_problem() {
        let e = check_dir(Path::new("/nonexistent/flashscope")).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert_eq!(e.exit_code(), 1);
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("file");
        std::fs::write(&f, b"x").unwrap();
        assert_eq!(check_dir(&f).unwrap_err().exit_code(), 2);
        let ok = check_dir(d.path()).unwrap();
        assert!(ok.is_absolute());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn free_space_check_refuses_before_writing() {
        let d = tempfile::tempdir().unwrap();
        let fs = fs_info(d.path()).unwrap();
        let free = fs.free_bytes.unwrap();
        assert!(check_free_space(&fs, 1 << 20, "use --size").is_ok());
        let e = check_free_space(&fs, free, "use a smaller --size").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("use a smaller --size"));
    }
}
