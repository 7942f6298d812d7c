//! Identity of block devices from sysfs: names, flags, vendor/model, partitions.
//! Every attribute may be missing on a trimmed kernel; absent means `None`, never an error.

use serde::{Deserialize, Serialize};
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const SYS_BLOCK: &str = "/sys/class/block";

/// The kernel name (e.g. `sdb1`) of the block device a stat result describes.
pub fn block_name(meta: &Metadata) -> Option<String> {
    let rdev = meta.rdev();
    dev_name(rustix::fs::major(rdev), rustix::fs::minor(rdev))
}

/// The kernel name of block device `major:minor` (`/sys/dev/block/MAJ:MIN`); `None` when
/// it is no block device (the anonymous device of tmpfs, btrfs, overlay, FUSE).
pub fn dev_name(major: u32, minor: u32) -> Option<String> {
    let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let target = std::fs::canonicalize(&link).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

/// Where partition `name` starts on its whole disk, in bytes (sysfs `start`, in 512-byte
/// units whatever the sector size); `None` when `name` is not a partition.
pub fn partition_start_bytes(name: &str) -> Option<u64> {
    whole_disk_name(name)?;
    read_u64(name, "start")?.checked_mul(512)
}

/// The whole disk a partition belongs to (`sdb` for `sdb1`); `None` if not a partition.
pub fn whole_disk_name(name: &str) -> Option<String> {
    let dir = Path::new(SYS_BLOCK).join(name);
    if !dir.join("partition").exists() {
        return None;
    }
    let real = std::fs::canonicalize(&dir).ok()?;
    Some(real.parent()?.file_name()?.to_string_lossy().into_owned())
}

/// A sysfs attribute of block device `name`, trimmed (`rel` like `queue/rotational`).
pub fn read_attr(name: &str, rel: &str) -> Option<String> {
    let s = std::fs::read_to_string(Path::new(SYS_BLOCK).join(name).join(rel)).ok()?;
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The model of whole disk `disk`: `device/model` (SCSI, USB, NVMe) or `device/name`
/// (MMC/SD). The one reader, for `info` and for journal identities alike.
pub fn disk_model(disk: &str) -> Option<String> {
    read_attr(disk, "device/model")
        .or_else(|| read_attr(disk, "device/name"))
        .map(|m| crate::input::printable(&m).into_owned())
}

/// The serial number of whole disk `disk`, the first the kernel offers: `device/serial`
/// (MMC/SD), `serial` (NVMe, virtio), `device/wwid` (SCSI).
pub fn disk_serial(disk: &str) -> Option<String> {
    read_attr(disk, "device/serial")
        .or_else(|| read_attr(disk, "serial"))
        .or_else(|| read_attr(disk, "device/wwid"))
        .map(|m| crate::input::printable(&m).into_owned())
}

/// A 0/1 sysfs attribute.
pub fn read_flag(name: &str, rel: &str) -> Option<bool> {
    match read_attr(name, rel)?.as_str() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

fn read_u64(name: &str, rel: &str) -> Option<u64> {
    read_attr(name, rel)?.parse().ok()
}

/// A partition of a block device and where it is mounted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Partition {
    pub name: String,
    pub start_bytes: u64,
    pub size_bytes: u64,
    pub mount_points: Vec<String>,
}

/// What sysfs says about a block device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BlockIdentity {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whole_disk: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discard_granularity_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discard_max_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    pub partitions: Vec<Partition>,
    pub mount_points: Vec<String>,
    /// The sysfs `device/` directory, where MMC/SD registers live.
    #[serde(skip)]
    pub device_dir: Option<PathBuf>,
}

impl BlockIdentity {
    /// Whether the device supports discard (a non-zero discard_max_bytes).
    pub fn discard_supported(&self) -> Option<bool> {
        self.discard_max_bytes.map(|m| m > 0)
    }
}

/// Gather the identity of block device `name` (mounts from mountinfo text).
pub fn identity(name: &str, mountinfo: &str) -> BlockIdentity {
    let mounts = super::mounts::parse_mountinfo(mountinfo);
    let mounted_at = |n: &super::mounts::DeviceNode| -> Vec<String> {
        let dev = format!("/dev/{}", n.name);
        mounts
            .iter()
            .filter(|m| (m.major == n.major && m.minor == n.minor) || m.source == dev)
            .map(|m| m.mount_point.clone())
            .collect()
    };
    let whole = whole_disk_name(name);
    let disk = whole.clone().unwrap_or_else(|| name.to_string());
    let nodes = super::mounts::sysfs_nodes(Path::new(SYS_BLOCK), name);
    let mut id = BlockIdentity {
        name: name.to_string(),
        whole_disk: whole,
        vendor: read_attr(&disk, "device/vendor"),
        model: disk_model(&disk),
        serial: disk_serial(&disk),
        discard_granularity_bytes: read_u64(&disk, "queue/discard_granularity"),
        discard_max_bytes: read_u64(&disk, "queue/discard_max_bytes"),
        scheduler: read_attr(&disk, "queue/scheduler"),
        ..Default::default()
    };
    for n in &nodes {
        if n.name == name {
            id.mount_points = mounted_at(n);
        } else {
            id.partitions.push(Partition {
                name: n.name.clone(),
                start_bytes: read_u64(&format!("{name}/{}", n.name), "start").unwrap_or(0) * 512,
                size_bytes: read_u64(&format!("{name}/{}", n.name), "size").unwrap_or(0) * 512,
                mount_points: mounted_at(n),
            });
        }
    }
    id.partitions.sort_by_key(|p| p.start_bytes);
    id.device_dir = device_dir(&disk);
    id
}

/// The sysfs `device/` directory of whole disk `disk`, where MMC/SD registers live.
pub fn device_dir(disk: &str) -> Option<PathBuf> {
    let dir = Path::new(SYS_BLOCK).join(disk).join("device");
    dir.exists().then_some(dir)
}

/// The USB device a disk sits on: vendor and product ids (4 hex digits), its serial and
/// product name when it has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsbIds {
    pub vendor_id: String,
    pub product_id: String,
    pub serial: Option<String>,
    pub product: Option<String>,
}

/// The USB ids of the device whose sysfs `device/` directory is `dev_dir`: the nearest
/// ancestor in the device tree with `idVendor` and `idProduct` (the USB device above the
/// SCSI disk and its interface); `None` when the disk is not on USB.
pub fn usb_ids(dev_dir: &Path) -> Option<UsbIds> {
    let real = std::fs::canonicalize(dev_dir).ok()?;
    let attr = |dir: &Path, name: &str| {
        let s = std::fs::read_to_string(dir.join(name)).ok()?;
        let t = s.trim();
        (!t.is_empty()).then(|| t.to_string())
    };
    real.ancestors().take(12).find_map(|dir| {
        Some(UsbIds {
            vendor_id: attr(dir, "idVendor")?,
            product_id: attr(dir, "idProduct")?,
            serial: attr(dir, "serial"),
            product: attr(dir, "product"),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usb_ids_come_from_the_usb_device_above_the_disk() {
        let d = tempfile::tempdir().unwrap();
        let usb = d.path().join("usb1/1-1");
        let dev = usb.join("1-1:1.0/host0/target0:0:0/0:0:0:0");
        std::fs::create_dir_all(&dev).unwrap();
        for (name, value) in [
            ("idVendor", "0781\n"),
            ("idProduct", "5583\n"),
            ("serial", "4C530001\n"),
            ("product", " Ultra Fit\n"),
        ] {
            std::fs::write(usb.join(name), value).unwrap();
        }
        let ids = usb_ids(&dev).unwrap();
        assert_eq!(
            ids,
            UsbIds {
                vendor_id: "0781".into(),
                product_id: "5583".into(),
                serial: Some("4C530001".into()),
                product: Some("Ultra Fit".into()),
            }
        );
        let other = d.path().join("platform/mmc0");
        std::fs::create_dir_all(&other).unwrap();
        assert_eq!(usb_ids(&other), None);
    }
}
