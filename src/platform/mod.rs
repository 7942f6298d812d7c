//! What the running kernel and userland offer, for boards with old or trimmed kernels.
//!
//! A busybox board may lack io_uring (not built in, or switched off with
//! `kernel.io_uring_disabled`), may not mount `/proc` or `/sys`, and its kernel may omit
//! sysfs attributes. Each check here reads files below an injectable [`Roots`] (so tests
//! can build a fake `/proc` and `/sys` in a temporary directory), says in words what is
//! missing, and names the fallback flashscope uses. The checks never fail: absence is an
//! answer. System calls live in [`crate::sys`].

pub mod mounts;

use mounts::{parse_mountinfo, unescape, MountEntry};
use std::io;
use std::path::{Path, PathBuf};

/// Where `/proc` and `/sys` are: the real ones, or a directory tree a test built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// The procfs root (`/proc`).
    pub proc: PathBuf,
    /// The sysfs root (`/sys`).
    pub sys: PathBuf,
}

impl Roots {
    /// The running system's `/proc` and `/sys`.
    pub fn system() -> Self {
        Roots {
            proc: PathBuf::from("/proc"),
            sys: PathBuf::from("/sys"),
        }
    }

    /// `DIR/proc` and `DIR/sys`: a fake system for tests.
    pub fn under(dir: &Path) -> Self {
        Roots {
            proc: dir.join("proc"),
            sys: dir.join("sys"),
        }
    }
}

/// Whether a facility can be used, and if not, why and what is used instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Usable as is.
    Available,
    /// Not usable; `reason` names what is missing, `fallback` what flashscope does instead
    /// (`None` where nothing can stand in).
    Missing {
        reason: String,
        fallback: Option<String>,
    },
}

impl Availability {
    /// True when the facility can be used.
    pub fn is_available(&self) -> bool {
        matches!(self, Availability::Available)
    }

    /// One sentence for a warning: what is missing and what happens instead.
    pub fn message(&self) -> Option<String> {
        match self {
            Availability::Available => None,
            Availability::Missing { reason, fallback } => Some(match fallback {
                Some(f) => format!("{reason}; {f}"),
                None => reason.clone(),
            }),
        }
    }
}

const URING_FALLBACK: &str =
    "using the sync engine (pread/pwrite, one I/O in flight per job) instead";

/// The value of `kernel.io_uring_disabled` (Linux 6.6+), `None` where the file is absent
/// (an older kernel, one without io_uring, or `/proc` not mounted).
pub fn io_uring_disabled_level(roots: &Roots) -> Option<u32> {
    std::fs::read_to_string(roots.proc.join("sys/kernel/io_uring_disabled"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Explain an io_uring set-up result: `setup` is the outcome of `io_uring_setup` (see
/// [`probe_io_uring_setup`]), `disabled` the `io_uring_disabled` level, `privileged`
/// whether this process has CAP_SYS_ADMIN (root). Pure, so every kernel is testable.
pub fn explain_io_uring(
    setup: &io::Result<()>,
    disabled: Option<u32>,
    privileged: bool,
) -> Availability {
    let missing = |reason: String| Availability::Missing {
        reason,
        fallback: Some(URING_FALLBACK.to_string()),
    };
    match (setup, disabled) {
        (Ok(()), _) => Availability::Available,
        (Err(_), Some(2)) => missing(
            "io_uring is switched off on this kernel (kernel.io_uring_disabled = 2; \
             `sysctl kernel.io_uring_disabled=0` as root turns it back on)"
                .to_string(),
        ),
        (Err(_), Some(1)) if !privileged => missing(
            "io_uring is restricted to root and the io_uring_group on this kernel \
             (kernel.io_uring_disabled = 1); run as root or set kernel.io_uring_group"
                .to_string(),
        ),
        (Err(e), _) if e.raw_os_error() == Some(libc::ENOSYS) => missing(
            "this kernel has no io_uring (io_uring_setup: ENOSYS; it needs Linux 5.1+ \
             built with CONFIG_IO_URING, and emulators such as qemu-user lack it)"
                .to_string(),
        ),
        (Err(e), _) if e.raw_os_error() == Some(libc::EPERM) => missing(format!(
            "io_uring is not permitted for this process (io_uring_setup: EPERM{}; a seccomp \
             filter of a container or a hardened kernel)",
            disabled.map_or(String::new(), |d| format!(
                ", kernel.io_uring_disabled = {d}"
            ))
        )),
        (Err(e), _) => missing(format!("io_uring cannot be set up here: {e}")),
    }
}

/// Try `io_uring_setup` with a one-entry ring and close it again: the only reliable test,
/// since a kernel may be built without io_uring and a seccomp filter may refuse it.
pub fn probe_io_uring_setup() -> io::Result<()> {
    io_uring::IoUring::new(1).map(drop)
}

/// Whether the io_uring engine can run here, with the reason and fallback if not.
pub fn io_uring(roots: &Roots) -> Availability {
    let privileged = crate::sys::is_root();
    explain_io_uring(
        &probe_io_uring_setup(),
        io_uring_disabled_level(roots),
        privileged,
    )
}

/// Where the mount table came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MountSource {
    /// `/proc/self/mountinfo`: device numbers and escaped paths (the complete source).
    Mountinfo,
    /// `/proc/mounts` (old or trimmed kernels): source paths only; device numbers are
    /// taken from `stat` of each `/dev/...` source.
    ProcMounts,
    /// Neither could be read: whether anything is mounted is unknown.
    Unknown,
}

/// The mount table as the safety policy needs it, with how it was obtained.
#[derive(Debug, Clone)]
pub struct MountTable {
    pub source: MountSource,
    pub entries: Vec<MountEntry>,
    /// What is missing and what was used instead; `None` for mountinfo.
    pub note: Option<String>,
}

impl MountTable {
    /// Availability of a complete mount table, for the safety policy: when unknown, a
    /// write to a block device cannot be proven safe.
    pub fn availability(&self) -> Availability {
        match self.source {
            MountSource::Mountinfo => Availability::Available,
            MountSource::ProcMounts => Availability::Missing {
                reason: self.note.clone().unwrap_or_default(),
                fallback: Some("using /proc/mounts instead".to_string()),
            },
            MountSource::Unknown => Availability::Missing {
                reason: self.note.clone().unwrap_or_default(),
                fallback: None,
            },
        }
    }
}

/// Parse `/proc/mounts` lines (`source mountpoint fstype options 0 0`); `dev_of` gives the
/// device number of a source path (stat's st_rdev), where it is a device node.
pub fn parse_proc_mounts(
    text: &str,
    dev_of: impl Fn(&str) -> Option<(u32, u32)>,
) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let (source, mount_point, fs_type) = (f.next()?, f.next()?, f.next()?);
            let options = f.next().unwrap_or("").to_string();
            let source = unescape(source);
            // No device number known: u32::MAX matches no real device, so only the
            // source path can match.
            let (major, minor) = dev_of(&source).unwrap_or((u32::MAX, u32::MAX));
            Some(MountEntry {
                major,
                minor,
                mount_point: unescape(mount_point),
                fs_type: fs_type.to_string(),
                source,
                options,
            })
        })
        .collect()
}

/// The device number of a block-device node, from `stat`.
fn rdev_of(path: &str) -> Option<(u32, u32)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    if !path.starts_with('/') {
        return None;
    }
    let meta = std::fs::metadata(path).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    let rdev = meta.rdev();
    Some((rustix::fs::major(rdev), rustix::fs::minor(rdev)))
}

/// Read the mount table: `/proc/self/mountinfo`, else `/proc/mounts`, else say that it is
/// unknown (with the command that fixes it).
pub fn mount_table(roots: &Roots) -> MountTable {
    let mountinfo = roots.proc.join("self/mountinfo");
    if let Ok(text) = std::fs::read_to_string(&mountinfo) {
        return MountTable {
            source: MountSource::Mountinfo,
            entries: parse_mountinfo(&text),
            note: None,
        };
    }
    let mounts = roots.proc.join("mounts");
    if let Ok(text) = std::fs::read_to_string(&mounts) {
        return MountTable {
            source: MountSource::ProcMounts,
            entries: parse_proc_mounts(&text, rdev_of),
            note: Some(format!(
                "{} is missing (a kernel older than 2.6.26 or a trimmed procfs)",
                mountinfo.display()
            )),
        };
    }
    MountTable {
        source: MountSource::Unknown,
        entries: Vec::new(),
        note: Some(format!(
            "neither {} nor {} can be read, so whether a device is mounted is unknown \
             (mount procfs: `mount -t proc proc {}`)",
            mountinfo.display(),
            mounts.display(),
            roots.proc.display()
        )),
    }
}

/// Block-device attributes flashscope reads from sysfs, with what each is for.
pub const BLOCK_ATTRIBUTES: &[(&str, &str)] = &[
    ("dev", "matching mounts by device number"),
    ("ro", "the read-only flag"),
    ("removable", "telling a card reader from a fixed disk"),
    ("queue/rotational", "telling flash from a spinning disk"),
    (
        "queue/discard_max_bytes",
        "knowing whether discard is supported",
    ),
    ("holders", "finding device-mapper, RAID and loop users"),
    ("device", "the card's CID/CSD/SSR registers (MMC/SD)"),
];

/// What sysfs says (or cannot say) about block device `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysfsReport {
    /// `SYS/class/block` exists (sysfs is mounted and has the block class).
    pub mounted: bool,
    /// Attributes of [`BLOCK_ATTRIBUTES`] that are absent, with what they are for.
    pub missing: Vec<(&'static str, &'static str)>,
}

impl SysfsReport {
    /// One warning sentence when anything is absent, naming what is then unknown.
    pub fn message(&self, name: &str) -> Option<String> {
        if !self.mounted {
            return Some(format!(
                "sysfs is not mounted (no /sys/class/block), so identity, partitions and \
                 holders of {name} are unknown; size and sector sizes come from ioctls \
                 (mount it: `mount -t sysfs sysfs /sys`)"
            ));
        }
        if self.missing.is_empty() {
            return None;
        }
        let list: Vec<String> = self
            .missing
            .iter()
            .map(|(attr, why)| format!("{attr} ({why})"))
            .collect();
        Some(format!(
            "this kernel's sysfs has no {} for {name}; those facts are reported as unknown",
            list.join(", ")
        ))
    }
}

/// Check which of [`BLOCK_ATTRIBUTES`] exist for block device `name` (a kernel name such
/// as `mmcblk0`; partitions are looked up under their disk by sysfs' own symlinks).
pub fn sysfs_block(roots: &Roots, name: &str) -> SysfsReport {
    let class = roots.sys.join("class/block");
    if !class.is_dir() {
        return SysfsReport {
            mounted: false,
            missing: BLOCK_ATTRIBUTES.to_vec(),
        };
    }
    let dir = class.join(name);
    let missing = BLOCK_ATTRIBUTES
        .iter()
        .filter(|(attr, _)| !dir.join(attr).exists())
        .copied()
        .collect();
    SysfsReport {
        mounted: true,
        missing,
    }
}

/// Memory figures from /proc/meminfo, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn errno(n: i32) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(n))
    }

    #[test]
    fn io_uring_disabled_2_is_named_with_the_sysctl_that_fixes_it() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "proc/sys/kernel/io_uring_disabled", "2\n");
        let roots = Roots::under(dir.path());
        assert_eq!(io_uring_disabled_level(&roots), Some(2));
        let a = explain_io_uring(&errno(libc::EPERM), io_uring_disabled_level(&roots), true);
        let msg = a.message().unwrap();
        assert!(msg.contains("io_uring_disabled = 2"), "{msg}");
        assert!(msg.contains("sysctl kernel.io_uring_disabled=0"), "{msg}");
        assert!(msg.contains("sync engine"), "{msg}");
    }

    #[test]
    fn io_uring_level_1_matters_only_without_root() {
        let a = explain_io_uring(&errno(libc::EPERM), Some(1), false);
        assert!(a.message().unwrap().contains("restricted to root"));
        // Root is refused anyway: then it is something else (seccomp) and says so.
        let a = explain_io_uring(&errno(libc::EPERM), Some(1), true);
        let msg = a.message().unwrap();
        assert!(msg.contains("EPERM") && msg.contains("seccomp"), "{msg}");
    }

    #[test]
    fn io_uring_missing_from_the_kernel_and_working_kernels() {
        let dir = tempfile::tempdir().unwrap();
        // An old kernel has no io_uring_disabled file at all.
        assert_eq!(io_uring_disabled_level(&Roots::under(dir.path())), None);
        let a = explain_io_uring(&errno(libc::ENOSYS), None, true);
        assert!(!a.is_available());
        assert!(a
            .message()
            .unwrap()
            .contains("no io_uring (io_uring_setup: ENOSYS"));
        // A working set-up wins over a stale sysctl reading.
        assert!(explain_io_uring(&Ok(()), Some(0), false).is_available());
        let a = explain_io_uring(&errno(libc::ENOMEM), Some(0), true);
        assert!(a.message().unwrap().contains("cannot be set up"));
    }

    #[test]
    fn the_live_probe_agrees_with_the_explanation() {
        // Whatever this kernel (or emulator) offers, the probe and the explanation agree.
        let live = probe_io_uring_setup();
        let a = io_uring(&Roots::system());
        assert_eq!(live.is_ok(), a.is_available(), "{live:?} vs {a:?}");
    }

    const MOUNTS: &str = "\
/dev/root / ext4 rw,relatime 0 0
proc /proc proc rw,nosuid 0 0
/dev/mmcblk0p1 /boot\\040fw vfat rw,relatime 0 0
";

    #[test]
    fn without_mountinfo_proc_mounts_is_used_and_said() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "proc/mounts", MOUNTS);
        let t = mount_table(&Roots::under(dir.path()));
        assert_eq!(t.source, MountSource::ProcMounts);
        assert_eq!(t.entries.len(), 3);
        assert_eq!(t.entries[2].mount_point, "/boot fw");
        assert_eq!(t.entries[2].source, "/dev/mmcblk0p1");
        let msg = t.availability().message().unwrap();
        assert!(
            msg.contains("self/mountinfo is missing") && msg.contains("/proc/mounts instead"),
            "{msg}"
        );
        // The fallback still makes the card busy for the safety policy (by source path).
        let card = [crate::platform::mounts::DeviceNode {
            name: "mmcblk0p1".into(),
            major: 179,
            minor: 1,
        }];
        let why = crate::platform::mounts::busy_reason(&card, &t.entries, &[], &[]).unwrap();
        assert!(why.contains("/boot fw"), "{why}");
    }

    #[test]
    fn proc_mounts_takes_device_numbers_from_stat_where_it_can() {
        let e = parse_proc_mounts(MOUNTS, |s| (s == "/dev/root").then_some((254, 0)));
        assert_eq!((e[0].major, e[0].minor), (254, 0));
        assert_eq!(e[1].major, u32::MAX);
    }

    #[test]
    fn with_mountinfo_it_is_preferred_and_without_either_it_is_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::under(dir.path());
        let t = mount_table(&roots);
        assert_eq!(t.source, MountSource::Unknown);
        assert!(t.entries.is_empty());
        let a = t.availability();
        assert!(matches!(a, Availability::Missing { fallback: None, .. }));
        assert!(a.message().unwrap().contains("mount -t proc proc"));
        write(
            dir.path(),
            "proc/self/mountinfo",
            "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n",
        );
        write(dir.path(), "proc/mounts", MOUNTS);
        let t = mount_table(&roots);
        assert_eq!(t.source, MountSource::Mountinfo);
        assert_eq!(t.entries.len(), 1);
        assert!(t.availability().is_available());
    }

    #[test]
    fn sysfs_missing_entirely_or_attribute_by_attribute() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::under(dir.path());
        let r = sysfs_block(&roots, "mmcblk0");
        assert!(!r.mounted);
        assert!(r
            .message("mmcblk0")
            .unwrap()
            .contains("mount -t sysfs sysfs /sys"));
        // A trimmed kernel: the device is there, without queue/ attributes or device/.
        write(dir.path(), "sys/class/block/mmcblk0/dev", "179:0\n");
        write(dir.path(), "sys/class/block/mmcblk0/ro", "0\n");
        write(dir.path(), "sys/class/block/mmcblk0/removable", "0\n");
        std::fs::create_dir_all(dir.path().join("sys/class/block/mmcblk0/holders")).unwrap();
        let r = sysfs_block(&roots, "mmcblk0");
        assert!(r.mounted);
        let names: Vec<&str> = r.missing.iter().map(|(a, _)| *a).collect();
        assert_eq!(
            names,
            ["queue/rotational", "queue/discard_max_bytes", "device"]
        );
        let msg = r.message("mmcblk0").unwrap();
        assert!(msg.contains("queue/rotational (telling flash"), "{msg}");
        // A complete one says nothing.
        write(
            dir.path(),
            "sys/class/block/mmcblk0/queue/rotational",
            "0\n",
        );
        write(
            dir.path(),
            "sys/class/block/mmcblk0/queue/discard_max_bytes",
            "0\n",
        );
        std::fs::create_dir_all(dir.path().join("sys/class/block/mmcblk0/device")).unwrap();
        assert_eq!(sysfs_block(&roots, "mmcblk0").message("mmcblk0"), None);
    }
}
