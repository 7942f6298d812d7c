//! Who is using a block device: mount points (/proc/self/mountinfo), swap (/proc/swaps)
//! and holders (sysfs `holders/`). The safety policy refuses to write to a busy device.

use std::path::{Path, PathBuf};

/// One line of /proc/self/mountinfo, the fields the safety policy needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub major: u32,
    pub minor: u32,
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    /// Per-mount and superblock options, joined by commas.
    pub options: String,
}

/// Undo the octal escapes mountinfo (and /proc/mounts) use for space, tab, newline and
/// backslash.
pub fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let oct = &bytes[i + 1..i + 4];
            if oct.iter().all(|b| (b'0'..=b'7').contains(b)) {
                let v = oct.iter().fold(0u32, |acc, b| acc * 8 + (b - b'0') as u32);
                if let Ok(v) = u8::try_from(v) {
                    out.push(v);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse mountinfo text; malformed lines are skipped, never fatal.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        if fields.len() < 10 {
            continue;
        }
        let Some((maj, min)) = fields[2].split_once(':') else {
            continue;
        };
        let (Ok(major), Ok(minor)) = (maj.parse(), min.parse()) else {
            continue;
        };
        let Some(sep) = fields.iter().skip(6).position(|f| *f == "-") else {
            continue;
        };
        let sep = sep + 6;
        if fields.len() < sep + 3 {
            continue;
        }
        out.push(MountEntry {
            major,
            minor,
            mount_point: unescape(fields[4]),
            fs_type: unescape(fields[sep + 1]),
            source: unescape(fields[sep + 2]),
            options: format!(
                "{},{}",
                fields[5],
                fields.get(sep + 3).copied().unwrap_or("")
            ),
        });
    }
    out
}

/// The mount whose mount point is the longest prefix of `path` (the last one wins among
/// equals, as later mounts hide earlier ones).
pub fn mount_of(mounts: &[MountEntry], path: &Path) -> Option<MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for m in mounts {
        if path.starts_with(&m.mount_point)
            && best.is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best.cloned()
}

/// Devices in use as swap, from /proc/swaps text.
pub fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape)
        .collect()
}

/// A block device (or one of its partitions) as the safety policy sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceNode {
    /// Kernel name, e.g. `sdb1`.
    pub name: String,
    pub major: u32,
    pub minor: u32,
}

/// Why a device may not be written to: the first reason found, in words.
pub fn busy_reason(
    nodes: &[DeviceNode],
    mounts: &[MountEntry],
    swaps: &[String],
    holders: &[(String, Vec<String>)],
) -> Option<String> {
    for n in nodes {
        let dev_path = format!("/dev/{}", n.name);
        if let Some(m) = mounts
            .iter()
            .find(|m| (m.major == n.major && m.minor == n.minor) || m.source == dev_path)
        {
            return Some(format!(
                "{dev_path} is mounted on {} ({}); unmount it first (umount {})",
                m.mount_point, m.fs_type, m.mount_point
            ));
        }
        if swaps.contains(&dev_path) {
            return Some(format!(
                "{dev_path} is in use as swap; run swapoff {dev_path} first"
            ));
        }
    }
    for (name, users) in holders {
        if !users.is_empty() {
            return Some(format!(
                "/dev/{name} is held by {} (sysfs holders: a device-mapper, RAID or loop user); release it first",
                users.join(", ")
            ));
        }
    }
    None
}

/// The kernel name and partitions of a block device from sysfs (`/sys/class/block/NAME`).
pub fn sysfs_nodes(sys_block: &Path, name: &str) -> Vec<DeviceNode> {
    let mut nodes = Vec::new();
    let dir = sys_block.join(name);
    if let Some(n) = read_node(&dir, name) {
        nodes.push(n);
    }
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                let child = e.file_name().to_string_lossy().into_owned();
                if let Some(n) = read_node(&p, &child) {
                    nodes.push(n);
                }
            }
        }
    }
    nodes
}

fn read_node(dir: &Path, name: &str) -> Option<DeviceNode> {
    let dev = std::fs::read_to_string(dir.join("dev")).ok()?;
    let (maj, min) = dev.trim().split_once(':')?;
    Some(DeviceNode {
        name: name.to_string(),
        major: maj.parse().ok()?,
        minor: min.parse().ok()?,
    })
}

/// Holders of each node (`holders/` entries), empty lists where none.
pub fn sysfs_holders(
    sys_block: &Path,
    nodes: &[DeviceNode],
    parent: &str,
) -> Vec<(String, Vec<String>)> {
    nodes
        .iter()
        .map(|n| {
            let dir: PathBuf = if n.name == parent {
                sys_block.join(parent).join("holders")
            } else {
                sys_block.join(parent).join(&n.name).join("holders")
            };
            let users = std::fs::read_dir(dir)
                .map(|rd| {
                    rd.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            (n.name.clone(), users)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real /proc/self/mountinfo lines (this machine and a Raspberry Pi OS system).
    const MOUNTINFO: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
25 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
30 22 179:2 / /media/pi/rootfs\\040copy rw,noatime shared:5 - ext4 /dev/mmcblk0p2 rw
31 22 179:1 / /boot/firmware rw,relatime shared:6 - vfat /dev/mmcblk0p1 rw,fmask=0022,dmask=0022
40 22 0:45 / /mnt/pool rw,relatime shared:20 - btrfs /dev/sdc1 rw,space_cache=v2
bad line
";

    fn node(name: &str, major: u32, minor: u32) -> DeviceNode {
        DeviceNode {
            name: name.into(),
            major,
            minor,
        }
    }

    #[test]
    fn parses_real_mountinfo_with_escapes_and_optional_fields() {
        let m = parse_mountinfo(MOUNTINFO);
        assert_eq!(m.len(), 5);
        assert_eq!(m[2].mount_point, "/media/pi/rootfs copy");
        assert_eq!((m[2].major, m[2].minor), (179, 2));
        assert_eq!(m[3].fs_type, "vfat");
        assert_eq!(m[4].source, "/dev/sdc1");
    }

    #[test]
    fn a_mounted_partition_makes_the_whole_card_busy() {
        let m = parse_mountinfo(MOUNTINFO);
        let card = [
            node("mmcblk0", 179, 0),
            node("mmcblk0p1", 179, 1),
            node("mmcblk0p2", 179, 2),
        ];
        let why = busy_reason(&card, &m, &[], &[]).unwrap();
        assert!(
            why.contains("/boot/firmware") || why.contains("rootfs copy"),
            "{why}"
        );
        // btrfs reports an anonymous device number: match by source path.
        let why = busy_reason(&[node("sdc", 8, 32), node("sdc1", 8, 33)], &m, &[], &[]).unwrap();
        assert!(why.contains("/mnt/pool"), "{why}");
        assert!(busy_reason(&[node("sdb", 8, 16)], &m, &[], &[]).is_none());
    }

    #[test]
    fn swap_and_holders_are_reasons_too() {
        let swaps =
            parse_swaps("Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 4G 0 100\n");
        assert_eq!(swaps, vec!["/dev/zram0".to_string()]);
        let why = busy_reason(&[node("zram0", 252, 0)], &[], &swaps, &[]).unwrap();
        assert!(why.contains("swapoff"));
        let holders = vec![("sdd1".to_string(), vec!["dm-0".to_string()])];
        let why = busy_reason(&[node("sdd", 8, 48)], &[], &[], &holders).unwrap();
        assert!(why.contains("dm-0"));
    }
}
