//! Who a run measured: the device identity history groups runs by, and the one place
//! that reads a stored document's `target` JSON back into the typed [`TargetInfo`].
//!
//! The identity is the most specific one the device offers:
//! 1. an SD/eMMC card's CID: manufacturer, OEM, product name and serial
//!    (`mmc:SanDisk/SD/SN64G/0x71016b8d`), the same card in any reader;
//! 2. a USB device's vendor and product ids and serial (`usb:0781:5583/4C53000…`);
//! 3. otherwise the model, serial (when sysfs has one) and size (`disk:Model/SERIAL/SIZE`);
//! 4. a `sim:` spec as itself, a file or directory by its absolute path.
//!
//! A live run reads the card's registers and the USB ids through sysfs; an imported
//! document (another machine's run) is identified from what the document carries, never
//! from this machine's sysfs.

use crate::device::TargetInfo;
use crate::device::{mmc, sysfs, TargetKind};
use crate::report::{Body, Document, Target};
use serde::Serialize;
use std::path::Path;

/// A device's identity in history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DeviceIdentity {
    /// The key runs of one device share (`history table --by device`, `runs_for_device`).
    pub key: String,
    /// The part: maker and product name, or the model (`history table --by model`); `None`
    /// when the target names none.
    pub model: Option<String>,
}

/// The document's target, typed: the device, file or simulated card ([`Document::target_info`]),
/// or for a directory's filesystem what it names (spec and kind). `None` for a target that
/// names no device (logs, a datasheet, the sides of a comparison).
pub fn target_info(doc: &Document) -> Option<TargetInfo> {
    if let Some(info) = doc.target_info() {
        return Some(info);
    }
    match &doc.target {
        Target::Filesystem(f) => Some(TargetInfo {
            spec: f.spec.clone(),
            kind: f.kind,
            ..TargetInfo::default()
        }),
        _ => None,
    }
}

/// The identity of the device a run on this machine measured (reads sysfs for a block
/// device: the MMC/SD CID, the USB ids).
pub fn of_live(doc: &Document) -> DeviceIdentity {
    let Some(t) = target_info(doc) else {
        return of_document(doc);
    };
    if t.kind == TargetKind::Block {
        if let Some(id) = block_identity(&t) {
            return id;
        }
    }
    from_target(&t)
}

/// The identity of the device a document describes, from the document alone (an imported
/// run from another machine): an `info` document's decoded CID, else model, serial, size.
pub fn of_document(doc: &Document) -> DeviceIdentity {
    let cid = match &doc.body {
        Body::Info(i) => i.identity.mmc().and_then(|m| m.cid.as_ref()),
        _ => None,
    };
    if let Some(cid) = cid {
        return card_identity(cid);
    }
    match target_info(doc) {
        Some(t) => from_target(&t),
        None => DeviceIdentity {
            key: "unknown".into(),
            model: None,
        },
    }
}

/// An MMC/SD card by its CID: maker, OEM id, product name and serial number.
fn card_identity(cid: &mmc::CidInfo) -> DeviceIdentity {
    let (maker, oem, product, serial) = (
        cid.manufacturer_label(),
        cid.oem_id,
        &cid.product_name,
        cid.serial,
    );
    DeviceIdentity {
        key: format!("mmc:{maker}/0x{oem:04x}/{product}/0x{serial:08x}"),
        model: Some(format!("{maker} {product}")),
    }
}

/// A simulated card's part for `history table --by model`: its spec without the `seed`
/// key, so the seeds of one preset are copies of one part, while a preset with other
/// keys (`sim:sd-16g,write_bw=13.2M`) is another part.
fn sim_part(spec: &str) -> String {
    spec.split(',')
        .filter(|k| !k.trim_start().starts_with("seed="))
        .collect::<Vec<_>>()
        .join(",")
}

/// What the typed target alone says: a `sim:` spec as itself, a file or directory by its
/// path, a device by model, serial and size.
fn from_target(t: &TargetInfo) -> DeviceIdentity {
    match t.kind {
        TargetKind::Sim => DeviceIdentity {
            key: t.spec.clone(),
            model: Some(sim_part(&t.spec)),
        },
        TargetKind::File | TargetKind::Directory => {
            let path = std::path::absolute(Path::new(&t.spec))
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| t.spec.clone());
            DeviceIdentity {
                key: format!("{}:{path}", t.kind.name()),
                model: t.model.clone(),
            }
        }
        TargetKind::Block => match (&t.model, &t.serial) {
            (None, None) => DeviceIdentity {
                key: format!("block:{}/{}", t.spec, t.size_bytes),
                model: None,
            },
            (model, serial) => DeviceIdentity {
                key: format!(
                    "disk:{}/{}/{}",
                    model.as_deref().unwrap_or("?"),
                    serial.as_deref().unwrap_or("?"),
                    t.size_bytes
                ),
                model: model.clone(),
            },
        },
    }
}

/// A block device's CID or USB identity from sysfs; `None` when it has neither.
fn block_identity(t: &TargetInfo) -> Option<DeviceIdentity> {
    let meta = std::fs::metadata(&t.spec).ok()?;
    let name = sysfs::block_name(&meta)?;
    let disk = sysfs::whole_disk_name(&name).unwrap_or(name);
    let dir = sysfs::device_dir(&disk)?;
    if let Some(cid) = mmc::decode_card_dir(&dir).and_then(|m| m.cid) {
        return Some(card_identity(&cid));
    }
    let usb = sysfs::usb_ids(&dir)?;
    Some(DeviceIdentity {
        key: format!(
            "usb:{}:{}/{}",
            usb.vendor_id,
            usb.product_id,
            usb.serial.as_deref().unwrap_or("?")
        ),
        model: t.model.clone().or(usb.product),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_on(info: TargetInfo) -> Document {
        Document::for_target(&info, Body::Info(Default::default()))
    }

    #[test]
    fn sim_specs_are_themselves_and_devices_are_model_serial_size() {
        let sim = doc_on(TargetInfo {
            spec: "sim:sd-16g,seed=3".into(),
            kind: TargetKind::Sim,
            model: Some("flashscope simulated flash device".into()),
            ..Default::default()
        });
        assert_eq!(of_document(&sim).key, "sim:sd-16g,seed=3");
        // The seeds of one preset are one part; other keys make another.
        assert_eq!(of_document(&sim).model.as_deref(), Some("sim:sd-16g"));
        let other = doc_on(TargetInfo {
            spec: "sim:sd-16g,write_bw=13.2M,seed=2".into(),
            kind: TargetKind::Sim,
            ..Default::default()
        });
        assert_eq!(
            of_document(&other).model.as_deref(),
            Some("sim:sd-16g,write_bw=13.2M")
        );
        let disk = doc_on(TargetInfo {
            spec: "/dev/sdz".into(),
            kind: TargetKind::Block,
            size_bytes: 64 << 30,
            model: Some("Ultra Fit".into()),
            serial: Some("4C530001".into()),
            ..Default::default()
        });
        let id = of_document(&disk);
        assert_eq!(id.key, format!("disk:Ultra Fit/4C530001/{}", 64u64 << 30));
        assert_eq!(id.model.as_deref(), Some("Ultra Fit"));
    }

    #[test]
    fn a_directory_is_its_path() {
        let json = |target: serde_json::Value| {
            let mut v: serde_json::Value = serde_json::from_str(
                &Document::new(Target::None, Body::Info(Default::default())).to_json(),
            )
            .unwrap();
            // Only the target decides: an empty info body on each kind of target.
            v["target"] = target;
            Document::from_json("d.json", v.to_string().as_bytes()).unwrap()
        };
        let d = json(serde_json::json!({
            "spec": "/mnt/sd", "kind": "directory", "dir": "/mnt/sd", "magic": 0x4d44,
            "fs_type": "vfat", "mount_options": "rw", "block_bytes": 4096, "memory_backed": false
        }));
        assert!(matches!(d.target, Target::Filesystem(_)), "{:?}", d.target);
        assert_eq!(of_document(&d).key, "directory:/mnt/sd");
        let d = json(serde_json::json!({"files": ["a.txt"], "kind": "flashbench logs"}));
        assert_eq!(of_document(&d).key, "unknown");
    }

    #[test]
    fn an_info_document_is_identified_by_its_cid() {
        let mut d = doc_on(TargetInfo {
            spec: "/dev/mmcblk0".into(),
            kind: TargetKind::Block,
            ..Default::default()
        });
        let cid =
            mmc::decode_cid("035344534e363447867e650771016b8d", mmc::CardKind::Sd, None).unwrap();
        if let Body::Info(i) = &mut d.body {
            // As an info document on an SD card has it: sysfs's fields, the registers.
            i.identity = serde_json::from_value(serde_json::json!({
                "name": "mmcblk0", "partitions": [], "mount_points": [],
                "mmc": { "type": "SD", "notes": [], "cid": cid },
            }))
            .unwrap();
        }
        let d = Document::from_json("info.json", d.to_json().as_bytes()).unwrap();
        let id = of_document(&d);
        assert_eq!(id.key, "mmc:SanDisk/0x5344/SN64G/0x7e650771");
        assert_eq!(id.model.as_deref(), Some("SanDisk SN64G"));
    }
}
