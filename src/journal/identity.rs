//! Who a target is, as written into a journal's header and checked before a restore.

use crate::target::{sysfs, OpenTarget};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// The identity of a target: enough to refuse restoring a journal onto the wrong device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The spec as the user gave it.
    pub spec: String,
    /// "block", "file" or "sim".
    pub kind: String,
    pub size_bytes: u64,
    pub logical_sector_bytes: u32,
    /// Canonical path of a block device or file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Block device number, "major:minor".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The file behind a loop device (sysfs `loop/backing_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_backing_file: Option<String>,
    /// Filesystem device and inode of a regular-file target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_dev_ino: Option<(u64, u64)>,
    /// The test that wrote the journal (not compared).
    #[serde(default)]
    pub command: String,
    /// When the journal was created, seconds since the Unix epoch (not compared).
    #[serde(default)]
    pub created_unix_s: u64,
}

impl Identity {
    /// The identity of an opened target (`spec` as given to `target::open`).
    pub fn of(spec: &str, opened: &OpenTarget, command: &str) -> Identity {
        let mut id = Identity {
            spec: spec.to_string(),
            kind: opened.info.kind.clone(),
            size_bytes: opened.info.size_bytes,
            logical_sector_bytes: opened.info.logical_sector_bytes,
            command: command.to_string(),
            created_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            ..Identity::default()
        };
        if opened.info.kind == "sim" {
            return id;
        }
        let path = Path::new(spec);
        id.path = std::fs::canonicalize(path)
            .ok()
            .map(|p| p.to_string_lossy().into_owned());
        if let Ok(meta) = std::fs::metadata(path) {
            if meta.file_type().is_block_device() {
                let rdev = meta.rdev();
                id.device = Some(format!("{}:{}", libc::major(rdev), libc::minor(rdev)));
            } else {
                id.file_dev_ino = Some((meta.dev(), meta.ino()));
            }
        }
        if let Some(name) = &opened.block_name {
            let disk = sysfs::whole_disk_name(name).unwrap_or_else(|| name.clone());
            id.serial = sysfs::read_attr(&disk, "device/serial")
                .or_else(|| sysfs::read_attr(&disk, "serial"))
                .or_else(|| sysfs::read_attr(&disk, "device/wwid"));
            id.model = sysfs::read_attr(&disk, "device/model")
                .or_else(|| sysfs::read_attr(&disk, "device/name"));
            id.loop_backing_file = sysfs::read_attr(&disk, "loop/backing_file");
        }
        id
    }

    /// A one-line description for messages.
    pub fn describe(&self) -> String {
        let mut s = format!("{} ({}, {} bytes", self.spec, self.kind, self.size_bytes);
        if let Some(d) = &self.device {
            s.push_str(&format!(", device {d}"));
        }
        if let Some(m) = &self.model {
            s.push_str(&format!(", model {m}"));
        }
        if let Some(x) = &self.serial {
            s.push_str(&format!(", serial {x}"));
        }
        if let Some(b) = &self.loop_backing_file {
            s.push_str(&format!(", loop over {b}"));
        }
        s.push(')');
        s
    }
}

/// Why `current` is not the target `journal` was written for; `None` when it is.
///
/// The size must always match. With `ignore_identity` (restoring onto an image copy or a
/// replugged device that shows a new number) only the size and sector size are compared.
pub fn mismatch(journal: &Identity, current: &Identity, ignore_identity: bool) -> Option<String> {
    if journal.size_bytes != current.size_bytes {
        return Some(format!(
            "the journal was written for {} bytes but the target has {} bytes",
            journal.size_bytes, current.size_bytes
        ));
    }
    if current.logical_sector_bytes > 0
        && journal.logical_sector_bytes > 0
        && current.logical_sector_bytes > journal.logical_sector_bytes
    {
        return Some(format!(
            "the target's {}-byte sectors are larger than the journal's {}-byte ones",
            current.logical_sector_bytes, journal.logical_sector_bytes
        ));
    }
    if ignore_identity {
        return None;
    }
    if journal.kind != current.kind {
        return Some(format!(
            "the journal was written for a {} target but this is a {}",
            journal.kind, current.kind
        ));
    }
    let differs = |what: &str, a: &Option<String>, b: &Option<String>| -> Option<String> {
        match (a, b) {
            (Some(x), Some(y)) if x != y => Some(format!("{what} differs ({x} vs {y})")),
            (Some(x), None) => Some(format!("{what} {x} is not present on the target")),
            _ => None,
        }
    };
    match journal.kind.as_str() {
        "block" => {
            if journal.serial.is_some() {
                // A serial number survives replugging; the device number may not.
                return differs("the serial number", &journal.serial, &current.serial)
                    .or_else(|| differs("the model", &journal.model, &current.model));
            }
            if journal.loop_backing_file.is_some() {
                // A loop device is its backing file, whatever number it is attached as.
                return differs(
                    "the loop device's backing file",
                    &journal.loop_backing_file,
                    &current.loop_backing_file,
                );
            }
            differs("the device number", &journal.device, &current.device)
                .or_else(|| differs("the model", &journal.model, &current.model))
        }
        "file" => {
            let same_inode =
                journal.file_dev_ino.is_some() && journal.file_dev_ino == current.file_dev_ino;
            if same_inode || (journal.path.is_some() && journal.path == current.path) {
                None
            } else {
                Some(format!(
                    "the journal was written for the file {} but the target is {}",
                    journal.path.as_deref().unwrap_or(&journal.spec),
                    current.path.as_deref().unwrap_or(&current.spec)
                ))
            }
        }
        _ => (journal.spec != current.spec).then(|| {
            format!(
                "the journal was written for {} but the target is {}",
                journal.spec, current.spec
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(serial: Option<&str>, dev: &str) -> Identity {
        Identity {
            spec: "/dev/sdx".into(),
            kind: "block".into(),
            size_bytes: 1 << 30,
            logical_sector_bytes: 512,
            device: Some(dev.into()),
            serial: serial.map(str::to_string),
            model: Some("Card".into()),
            ..Identity::default()
        }
    }

    #[test]
    fn serial_decides_for_block_devices_and_size_always() {
        let j = block(Some("0x1234"), "8:16");
        assert_eq!(mismatch(&j, &block(Some("0x1234"), "8:32"), false), None);
        assert!(mismatch(&j, &block(Some("0x9999"), "8:16"), false)
            .unwrap()
            .contains("serial"));
        let mut small = block(Some("0x1234"), "8:16");
        small.size_bytes -= 512;
        assert!(mismatch(&j, &small, true).unwrap().contains("bytes"));
        let j = block(None, "7:3");
        assert!(mismatch(&j, &block(None, "7:4"), false)
            .unwrap()
            .contains("device number"));
        assert_eq!(mismatch(&j, &block(None, "7:4"), true), None);
        let mut lo = block(None, "7:3");
        lo.loop_backing_file = Some("/tmp/card.img".into());
        let mut reattached = block(None, "7:5");
        reattached.loop_backing_file = Some("/tmp/card.img".into());
        assert_eq!(mismatch(&lo, &reattached, false), None);
        reattached.loop_backing_file = Some("/tmp/other.img".into());
        assert!(mismatch(&lo, &reattached, false)
            .unwrap()
            .contains("backing file"));
    }

    #[test]
    fn files_match_by_path_or_inode_and_kinds_must_agree() {
        let f = Identity {
            spec: "a.img".into(),
            kind: "file".into(),
            size_bytes: 4096,
            path: Some("/tmp/a.img".into()),
            file_dev_ino: Some((1, 2)),
            ..Identity::default()
        };
        let mut moved = f.clone();
        moved.path = Some("/tmp/b.img".into());
        assert_eq!(mismatch(&f, &moved, false), None, "same inode, renamed");
        moved.file_dev_ino = Some((1, 3));
        assert!(mismatch(&f, &moved, false).is_some());
        let mut sim = f.clone();
        sim.kind = "sim".into();
        assert!(mismatch(&f, &sim, false).unwrap().contains("sim"));
        assert_eq!(mismatch(&f, &sim, true), None);
    }
}
