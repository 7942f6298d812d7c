//! `flashscope info TARGET`: what a target is, from what the device itself exposes.

use super::Output;
use crate::device::TargetInfo;
use crate::device::{self, sysfs, OpenRequest};
use crate::report::results::{BlockInfo, InfoIdentity, InfoResult, SimIdentity};
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::error::EXIT_OK;
use crate::vocab::units::format_bytes;
use crate::Result;

/// Arguments of `info`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope info sim:sd-16g\n  flashscope info /dev/mmcblk0 --json\n  flashscope info disk.img"
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    let t0 = crate::backend::monotonic_ns();
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    let opened = device::open(&args.target, &req)?;
    let identity = match &opened.block_name {
        Some(name) => {
            let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
            let id = sysfs::identity(name, &mountinfo);
            let mmc = id
                .device_dir
                .as_deref()
                .and_then(crate::device::mmc::decode_card_dir);
            InfoIdentity::Block(Box::new(BlockInfo {
                discard_supported: id.discard_supported(),
                mmc_summary: mmc.as_ref().map(mmc_summary),
                mmc,
                sysfs: id,
            }))
        }
        None if opened.info.kind == crate::device::TargetKind::Sim => {
            InfoIdentity::Sim(SimIdentity {
                model: crate::device::SIM_MODEL.into(),
                discard_supported: true,
            })
        }
        None => InfoIdentity::default(),
    };
    let mut doc = Document::for_target(&opened.info, Body::Info(InfoResult { identity }));
    doc.warnings = opened.warnings;
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    out.emit(&doc);
    Ok(EXIT_OK)
}

/// One line on an MMC/SD card's identity: maker, product, date, capacity, classes, AU.
fn mmc_summary(m: &crate::device::mmc::MmcIdentity) -> String {
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

/// A list's cell: its items by `; `, or "none".
fn list(items: Vec<String>) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join("; ")
    }
}

/// `info`'s text from its document: the target's line, then the identity's rows.
pub fn render(doc: &Document) -> String {
    match (&doc.body, doc.target.info()) {
        (Body::Info(i), Some(t)) => render_identity(t, &i.identity),
        _ => String::new(),
    }
}

fn render_identity(t: &TargetInfo, identity: &InfoIdentity) -> String {
    use crate::device::TargetKind;
    let kind = match t.kind {
        TargetKind::Block => "block device",
        TargetKind::File => "file",
        _ => "simulated flash device",
    };
    let mut traits = Vec::new();
    if let Some(r) = t.removable {
        traits.push(if r { "removable" } else { "fixed" });
    }
    if let Some(r) = t.rotational {
        traits.push(if r { "rotational" } else { "not rotational" });
    }
    if t.read_only == Some(true) {
        traits.push("read-only");
    }
    let mut s = format!(
        "{}: {} {} ({} bytes), {} logical / {} physical sectors{}\n\n",
        t.spec,
        format_bytes(t.size_bytes),
        kind,
        t.size_bytes,
        format_bytes(t.logical_sector_bytes as u64),
        format_bytes(t.physical_sector_bytes as u64),
        if traits.is_empty() {
            String::new()
        } else {
            format!(", {}", traits.join(", "))
        }
    );
    let mut table = Table::new(&["property", "value"]).align(1, crate::report::table::Align::Left);
    if let Some(fs) = &t.filesystem {
        table.row(vec!["filesystem".into(), fs.into()]);
    }
    // The rows by name, as the document's `identity` has them (the registers apart).
    let mut rows: Vec<(&str, String)> = Vec::new();
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
    match identity {
        InfoIdentity::Block(b) => {
            let id = &b.sysfs;
            let text = |k: &'static str, v: &Option<String>| v.clone().map(|v| (k, v));
            let bytes = |k: &'static str, v: Option<u64>| v.map(|v| (k, format_bytes(v)));
            rows.extend(bytes(
                "discard_granularity_bytes",
                id.discard_granularity_bytes,
            ));
            rows.extend(bytes("discard_max_bytes", id.discard_max_bytes));
            rows.extend(
                b.discard_supported
                    .map(|d| ("discard_supported", yes_no(d))),
            );
            rows.extend(text("mmc_summary", &b.mmc_summary));
            rows.extend(text("model", &id.model));
            rows.push(("mount_points", list(id.mount_points.clone())));
            rows.push(("name", id.name.clone()));
            let partitions = id.partitions.iter().map(|p| {
                let mounted = if p.mount_points.is_empty() {
                    String::new()
                } else {
                    format!(" mounted on {}", p.mount_points.join(", "))
                };
                format!(
                    "{} at {} size {}{mounted}",
                    p.name,
                    format_bytes(p.start_bytes),
                    format_bytes(p.size_bytes)
                )
            });
            rows.push(("partitions", list(partitions.collect())));
            rows.extend(text("scheduler", &id.scheduler));
            rows.extend(text("serial", &id.serial));
            rows.extend(text("vendor", &id.vendor));
            rows.extend(text("whole_disk", &id.whole_disk));
        }
        InfoIdentity::Sim(sim) => {
            rows.push(("discard_supported", yes_no(sim.discard_supported)));
            rows.push(("model", sim.model.clone()));
        }
        InfoIdentity::None(_) => {}
    }
    for (k, text) in rows {
        table.row(vec![k.replace('_', " "), text]);
    }
    s.push_str(&table.render());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mmc_summary_names_maker_date_capacity_classes_and_au() {
        // The SanDisk SC16G registers from src/target/mmc.rs's tests (a real card's sysfs).
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
