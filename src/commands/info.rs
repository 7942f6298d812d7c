//! `info`: what a target is, from what the device itself exposes (read-only).

use crate::device::mmc::MmcIdentity;
use crate::device::TargetSpec;
use crate::device::{self, sysfs, OpenRequest};
use crate::report::results::{BlockInfo, InfoIdentity, InfoResult, SimIdentity};
use crate::report::{Body, Document};
use crate::vocab::units::format_bytes;
use crate::Result;

/// Open `spec` read-only and describe it: size, sectors, identity, partitions, registers.
pub fn measure(spec: &TargetSpec) -> Result<Document> {
    let t0 = crate::backend::monotonic_ns();
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    let opened = device::open(spec, &req)?;
    let identity = match &opened.block_name {
        Some(name) => {
            let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
            let id = sysfs::identity(name, &mountinfo);
            let mmc = id
                .device_dir
                .as_deref()
                .and_then(crate::device::mmc::decode_card_dir);
            let host_path = Some(super::host_path::of_block(
                &id.name,
                id.device_dir.as_deref(),
                mmc.as_ref(),
            ));
            InfoIdentity::Block(Box::new(BlockInfo {
                discard_supported: id.discard_supported(),
                mmc_summary: mmc.as_ref().map(mmc_summary),
                mmc,
                host_path,
                sysfs: id,
            }))
        }
        None if opened.info.kind == crate::device::TargetKind::Sim => {
            let host_path = super::host_path::of_sim(spec)?.map(Box::new);
            InfoIdentity::Sim(SimIdentity {
                model: crate::device::SIM_MODEL.into(),
                discard_supported: true,
                host_path,
            })
        }
        None => InfoIdentity::default(),
    };
    let mut doc = Document::for_target(&opened.info, Body::Info(InfoResult { identity }));
    doc.warnings = opened.warnings;
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    Ok(doc)
}

/// One line on an MMC/SD card's identity: maker, product, date, capacity, classes, AU.
fn mmc_summary(m: &MmcIdentity) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &m.card_type {
        parts.push(t.clone());
    }
    if let Some(cid) = &m.cid {
        parts.push(format!(
            "{} {} rev {}",
            cid.manufacturer_label(),
            cid.product_name,
            cid.revision
        ));
        parts.push(format!("serial 0x{:08x}", cid.serial));
        match (cid.year, cid.month) {
            (Some(y), Some(mo)) => parts.push(format!("made {y}-{mo:02}")),
            (Some(y), None) => parts.push(format!("made {y}")),
            _ => {}
        }
    }
    if let Some(cap) = m.csd.as_ref().and_then(|c| c.capacity_bytes) {
        parts.push(format!("CSD capacity {}", format_bytes(cap)));
    }
    if let Some(ssr) = &m.ssr {
        if !ssr.marks.is_empty() {
            parts.push(format!("claims {}", ssr.marks.join(" ")));
        }
        if let Some(au) = ssr.au_bytes {
            parts.push(format!("AU {}", format_bytes(au)));
        }
    }
    if let Some(pe) = m.preferred_erase_size {
        parts.push(format!("preferred erase size {}", format_bytes(pe)));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mmc_summary_names_maker_date_capacity_classes_and_au() {
        // The SanDisk SC16G registers from src/device/mmc.rs's tests (a real card's sysfs).
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("type", "SD"),
            ("cid", "035344534331364780ecf4c851011b85"),
            ("csd", "400e00325b59000076b27f800a404013"),
            ("ssr", "0000000004000000040090000f051a00000000000001000000000000000000000000000000000000000000000000000000000000000000000000000000000000"),
            ("preferred_erase_size", "4194304"),
        ];
        for (name, text) in files {
            std::fs::write(dir.path().join(name), format!("{text}\n")).unwrap();
        }
        let m = crate::device::mmc::decode_sysfs(dir.path());
        let s = mmc_summary(&m);
        for needle in [
            "SD",
            "SanDisk SC16G rev 8.0",
            "made 2017-11",
            "CSD capacity 14.8 GiB",
            "claims C10",
            "AU 4 MiB",
        ] {
            assert!(s.contains(needle), "{needle} missing from: {s}");
        }
        // The card's document reads back into the same registers.
        let identity = InfoIdentity::Block(Box::new(BlockInfo {
            sysfs: sysfs::BlockIdentity {
                name: "mmcblk0".into(),
                ..Default::default()
            },
            discard_supported: Some(true),
            mmc_summary: Some(s),
            mmc: Some(m),
            host_path: None,
        }));
        let doc = Document::new(
            crate::report::Target::None,
            Body::Info(InfoResult { identity }),
        );
        let again = Document::from_json("info.json", doc.to_json().as_bytes()).unwrap();
        assert_eq!(again, doc);
        assert!(again.to_json().contains("\"product_name\": \"SC16G\""));
    }
}
