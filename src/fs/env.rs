//! What the machine around a test directory looks like: the filesystem (type, free space,
//! mount options, compression), memory (/proc/meminfo, /proc/vmstat) and the CPU frequency
//! governor. These facts decide which warnings a filesystem result needs.

use crate::platform::mounts::{mount_of, parse_mountinfo};
use crate::sys::magic;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The filesystem a test directory lives on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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

/// Open the directory a test writes its files in (`fs`, `verify DIR`) by
/// [`crate::sys::dir::Dir::open_under_test`]: the directories on the way may be anybody's (a card mounted
/// for another user), but a symbolic link on the way must be this user's or root's, or the
/// test is refused (exit 2) before anything is written: another user's link could lead
/// root's test files into a directory of root's.
pub(crate) fn test_dir(dir: &Path) -> Result<crate::sys::dir::Dir> {
    crate::sys::dir::Dir::open_under_test(dir).map_err(|e| {
        let text = crate::input::printable(&e.to_string()).into_owned();
        match e.why {
            crate::sys::dir::Why::Untrusted(_) => Error::Refused(format!(
                "{text}. Nothing was written: give the directory by its own path, not through another user's symbolic link"
            )),
            crate::sys::dir::Why::Missing => Error::runtime(format!(
                "{text}: create it or give an existing directory on the filesystem to test"
            )),
            crate::sys::dir::Why::NotDir => Error::usage(format!(
                "{text}: give a directory on the filesystem to test"
            )),
            _ => Error::runtime(text),
        }
    })
}

/// Check that `dir` exists, is a directory and accepts a new file; all before any test
/// data is written. A probe file of zero bytes is created and removed at once. Returns the
/// directory opened ([`test_dir`]): the test makes and removes its files through it
/// ([`super::TestFiles`]), never through the path, whose directories may be swapped after
/// this check by whoever can write them.
pub(crate) fn check_dir(dir: &Path) -> Result<crate::sys::dir::Dir> {
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
    // Walked one component at a time: a link of another user's on the way is refused.
    let top = test_dir(dir)?;
    // At a random hidden name (`.flashscope-probe.<random>.tmp`), `O_EXCL | O_NOFOLLOW`:
    // nobody can plant a link or file at it beforehand (a name from the pid could be).
    let probe = top
        .create_temp(std::ffi::OsStr::new("flashscope-probe"), 0o600)
        .map(|(tmp, _)| tmp);
    match probe {
        Ok(tmp) => {
            let _ = top.remove(&tmp);
            Ok(top)
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
                top.path().display()
            )))
        }
    }
}

/// Refuse, before anything is written, a test that needs more room than the filesystem has.
/// `need` is the most test data that exists at once; 1% of it (at least 1 MiB) is kept
/// spare for metadata.
pub fn check_free_space(fs: &FsInfo, need: u64, hint: &str) -> Result<()> {
    let margin = (need / 100).max(1 << 20);
    crate::sys::check_room(&fs.dir, fs.free_bytes, "this test", need, margin, hint)
}

/// Inspect the filesystem holding `dir` (statfs, statvfs and the mount table).
pub fn fs_info(dir: &Path) -> Result<FsInfo> {
    let file = File::open(dir).map_err(|e| Error::io(format!("opening {}", dir.display()), e))?;
    let st = crate::sys::fs_stats_fd(&file)
        .map_err(|e| Error::io(format!("statfs on {}", dir.display()), e))?;
    let magic = i64::from(st.magic);
    let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mount = std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|text| mount_of(&parse_mountinfo(&text), &abs));
    let (fs_type, mount_point, mount_source, mount_options) = match mount {
        Some(m) => (m.fs_type, Some(m.mount_point), Some(m.source), m.options),
        None => (
            crate::sys::fs_name(st.magic)
                .unwrap_or("unknown")
                .to_string(),
            None,
            None,
            String::new(),
        ),
    };
    let memory_backed = matches!(st.magic, magic::TMPFS | magic::RAMFS)
        || mount_source
            .as_deref()
            .is_some_and(|s| s.starts_with("/dev/zram") || s.starts_with("/dev/ram"));
    let compresses = compression(st.magic, &mount_options);
    Ok(FsInfo {
        dir: abs,
        magic,
        fs_type,
        mount_point,
        mount_source,
        mount_options,
        free_bytes: st.free_bytes,
        block_bytes: st.block_bytes,
        memory_backed,
        compresses,
    })
}

/// Whether a filesystem compresses written data, from its type and mount options.
pub fn compression(f_type: u32, options: &str) -> Option<bool> {
    let opts: Vec<&str> = options.split(',').collect();
    match f_type {
        magic::BTRFS => Some(opts.iter().any(|o| {
            (o.starts_with("compress") && !o.ends_with("=no") && !o.ends_with("=none"))
                || *o == "compress"
        })),
        // UBIFS compresses with LZO unless told compr=none.
        magic::UBIFS => Some(!opts.contains(&"compr=none")),
        magic::F2FS => Some(opts.iter().any(|o| o.starts_with("compress_algorithm="))),
        magic::ZFS => None,
        _ => Some(false),
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

pub use crate::sys::{drop_all_caches, drop_file_cache, resident_bytes};

/// The directory, its filesystem, device and free space on one line (also the text's).
pub fn fs_line(fs: &FsInfo) -> String {
    let mut s = format!("{} ({}", fs.dir.display(), fs.fs_type);
    if let Some(src) = &fs.mount_source {
        s.push_str(&format!(" on {src}"));
    }
    if let Some(free) = fs.free_bytes {
        s.push_str(&format!(
            ", {} free",
            crate::vocab::units::format_bytes(free)
        ));
    }
    s.push(')');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::MemInfo;

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
        let find_mount = |text: &str, p: &Path| mount_of(&parse_mountinfo(text), p);
        let m = find_mount(text, Path::new("/mnt/data/sub")).unwrap();
        assert_eq!(m.fs_type, "btrfs");
        assert_eq!(m.mount_point, "/mnt/data");
        assert!(m.options.contains("compress=zstd:3"));
        assert_eq!(compression(magic::BTRFS, &m.options), Some(true));
        let r = find_mount(text, Path::new("/home")).unwrap();
        assert_eq!(r.fs_type, "ext4");
        let s = find_mount(text, Path::new("/mnt/data x/f")).unwrap();
        assert_eq!(s.fs_type, "tmpfs");
    }

    #[test]
    fn compression_follows_type_and_options() {
        assert_eq!(compression(magic::BTRFS, "rw,space_cache"), Some(false));
        assert_eq!(
            compression(magic::BTRFS, "rw,compress-force=lzo"),
            Some(true)
        );
        assert_eq!(compression(magic::UBIFS, "rw"), Some(true));
        assert_eq!(compression(magic::UBIFS, "rw,compr=none"), Some(false));
        assert_eq!(
            compression(magic::F2FS, "rw,compress_algorithm=lz4"),
            Some(true)
        );
        assert_eq!(compression(magic::EXT4, "rw,compress"), Some(false));
        assert_eq!(compression(magic::ZFS, ""), None);
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
        assert!(ok.path().is_absolute());
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
