//! Who a target is, as written into a journal's header and checked before a restore.

use crate::device::TargetSpec;
use crate::device::{sysfs, OpenTarget, TargetKind};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

/// The identity of a target: enough to refuse restoring a journal onto the wrong device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Identity {
    /// The spec as the user gave it.
    pub spec: String,
    pub kind: TargetKind,
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
    /// The identity of an opened target (`spec` as given to `device::open`). Device and
    /// inode numbers come from `fstat` on the opened descriptor, not from the path, and a
    /// relative path is stored absolute (a restore may run from another directory).
    pub fn of(spec: &TargetSpec, opened: &OpenTarget, command: &str) -> Identity {
        let mut id = Identity {
            spec: spec.to_string(),
            kind: opened.info.kind,
            size_bytes: opened.info.size_bytes,
            logical_sector_bytes: opened.info.logical_sector_bytes,
            command: command.to_string(),
            created_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            ..Identity::default()
        };
        let (TargetKind::Block | TargetKind::File | TargetKind::Directory, Some(path)) =
            (opened.info.kind, spec.path())
        else {
            return id;
        };
        if let Ok(abs) = std::path::absolute(path) {
            id.spec = abs.to_string_lossy().into_owned();
        }
        id.path = std::fs::canonicalize(path)
            .ok()
            .map(|p| p.to_string_lossy().into_owned());
        if let Some(meta) = &opened.stat {
            if meta.file_type().is_block_device() {
                let rdev = meta.rdev();
                id.device = Some(format!(
                    "{}:{}",
                    rustix::fs::major(rdev),
                    rustix::fs::minor(rdev)
                ));
            } else {
                id.file_dev_ino = Some((meta.dev(), meta.ino()));
            }
        }
        if let Some(name) = &opened.block_name {
            let disk = sysfs::whole_disk_name(name).unwrap_or_else(|| name.clone());
            id.serial = sysfs::disk_serial(&disk);
            id.model = sysfs::disk_model(&disk);
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
/// The size must always match. Otherwise every identity field the target's kind has must
/// be recorded in the journal and equal: for a block device its device number, serial and
/// model (where sysfs has them) and a loop device's backing file; for a file the device
/// and inode it lives on. A field the journal lacks is a mismatch, not a pass. With
/// `ignore_identity` (restoring onto an image copy, or a replugged device that shows a new
/// number) only the size and sector size are compared.
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
    let field = |what: &str, j: Option<String>, c: Option<String>| -> Option<String> {
        match (j, c) {
            (Some(x), Some(y)) if x != y => Some(format!(
                "{what} differs (the journal has {x}, the target {y})"
            )),
            (None, Some(y)) => Some(format!(
                "the journal does not record {what} (the target's is {y}), so it cannot be shown to belong to this target"
            )),
            (Some(x), None) => Some(format!(
                "the journal records {what} {x}, which the target does not have"
            )),
            _ => None,
        }
    };
    match journal.kind {
        TargetKind::Block => field(
            "the device number",
            journal.device.clone(),
            current.device.clone(),
        )
        .or_else(|| {
            field(
                "the serial number",
                journal.serial.clone(),
                current.serial.clone(),
            )
        })
        .or_else(|| field("the model", journal.model.clone(), current.model.clone()))
        .or_else(|| {
            field(
                "the loop device's backing file",
                journal.loop_backing_file.clone(),
                current.loop_backing_file.clone(),
            )
        }),
        TargetKind::File => {
            let di = |x: Option<(u64, u64)>| x.map(|(d, i)| format!("device {d} inode {i}"));
            field(
                "the file's device and inode",
                di(journal.file_dev_ino),
                di(current.file_dev_ino),
            )
        }
        _ => (journal.spec != current.spec).then(|| {
            format!(
                "the journal was written for {} but the target is {}",
                journal.spec, current.spec
            )
        }),
    }
}

/// Whether `current` may be the target `journal` was written for, matching any one strong
/// field (a serial number survives replugging, a loop device is its backing file, a file
/// its inode or path). For finding leftover journals before a new test, where missing one
/// is worse than a false match; a restore needs [`mismatch`].
pub fn may_be(journal: &Identity, current: &Identity) -> bool {
    if journal.size_bytes != current.size_bytes || journal.kind != current.kind {
        return false;
    }
    let same = |a: &Option<String>, b: &Option<String>| a.is_some() && a == b;
    match journal.kind {
        TargetKind::Block => {
            same(&journal.serial, &current.serial)
                || same(&journal.loop_backing_file, &current.loop_backing_file)
                || same(&journal.device, &current.device)
        }
        TargetKind::File => {
            (journal.file_dev_ino.is_some() && journal.file_dev_ino == current.file_dev_ino)
                || same(&journal.path, &current.path)
        }
        _ => journal.spec == current.spec,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(serial: Option<&str>, dev: &str) -> Identity {
        Identity {
            spec: "/dev/sdx".into(),
            kind: TargetKind::Block,
            size_bytes: 1 << 30,
            logical_sector_bytes: 512,
            device: Some(dev.into()),
            serial: serial.map(str::to_string),
            model: Some("Card".into()),
            ..Identity::default()
        }
    }

    #[test]
    fn every_block_field_must_be_recorded_and_equal_and_size_always() {
        let j = block(Some("0x1234"), "8:16");
        assert_eq!(mismatch(&j, &block(Some("0x1234"), "8:16"), false), None);
        let replugged = block(Some("0x1234"), "8:32");
        assert!(mismatch(&j, &replugged, false)
            .unwrap()
            .contains("device number"));
        assert_eq!(mismatch(&j, &replugged, true), None, "--ignore-identity");
        assert!(may_be(&j, &replugged), "a leftover of the same card");
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
        assert!(may_be(&lo, &reattached));
        assert!(mismatch(&lo, &reattached, false).is_some());
        reattached.device = Some("7:3".into());
        assert_eq!(mismatch(&lo, &reattached, false), None);
        reattached.loop_backing_file = Some("/tmp/other.img".into());
        assert!(mismatch(&lo, &reattached, false)
            .unwrap()
            .contains("backing file"));
    }

    #[test]
    fn a_journal_missing_a_field_the_target_has_is_refused() {
        // The attack of issue 17: a hand-made header with only spec, kind and size.
        let bare = Identity {
            spec: "/dev/loop0".into(),
            kind: TargetKind::Block,
            size_bytes: 1 << 30,
            ..Identity::default()
        };
        let mut target = block(None, "7:0");
        target.model = None;
        let why = mismatch(&bare, &target, false).unwrap();
        assert!(why.contains("does not record the device number"), "{why}");
        let mut lo = target.clone();
        lo.loop_backing_file = Some("/tmp/card.img".into());
        let mut j = bare.clone();
        j.device = Some("7:0".into());
        let why = mismatch(&j, &lo, false).unwrap();
        assert!(why.contains("backing file"), "{why}");
        let file = Identity {
            spec: "/tmp/a.img".into(),
            kind: TargetKind::File,
            size_bytes: 4096,
            file_dev_ino: Some((1, 2)),
            ..Identity::default()
        };
        let mut j = file.clone();
        j.file_dev_ino = None;
        let why = mismatch(&j, &file, false).unwrap();
        assert!(why.contains("device and inode"), "{why}");
    }

    #[test]
    fn files_match_by_inode_and_kinds_must_agree() {
        let f = Identity {
            spec: "a.img".into(),
            kind: TargetKind::File,
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
        sim.kind = TargetKind::Sim;
        assert!(mismatch(&f, &sim, false).unwrap().contains("sim"));
        assert_eq!(mismatch(&f, &sim, true), None);
    }
}
