//! `flashscope info TARGET`: what a target is, from what the device itself exposes.

use super::Output;
use crate::error::EXIT_OK;
use crate::report::results::InfoResult;
use crate::report::table::Table;
use crate::report::{Body, Document, TargetInfo};
use crate::target::{self, sysfs, OpenRequest};
use crate::units::format_bytes;
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
    let opened = target::open(&args.target, &req)?;
    let mut identity = serde_json::Map::new();
    match &opened.block_name {
        Some(name) => {
            let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
            let id = sysfs::identity(name, &mountinfo);
            if let Some(d) = id.discard_supported() {
                identity.insert("discard_supported".into(), d.into());
            }
            let mmc = id
                .device_dir
                .as_deref()
                .and_then(crate::target::mmc::decode_card_dir);
            if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&id) {
                identity.extend(m);
            }
            if let Some(mmc) = &mmc {
                identity.insert("mmc_summary".into(), mmc_summary(mmc).into());
                identity.insert("mmc".into(), serde_json::to_value(mmc).unwrap_or_default());
            }
        }
        None if opened.info.kind == crate::target::TargetKind::Sim => {
            identity.insert("model".into(), crate::target::SIM_MODEL.into());
            identity.insert("discard_supported".into(), true.into());
        }
        None => {}
    }
    let mut doc = Document::for_target(
        &opened.info,
        Body::Info(InfoResult {
            identity: identity.clone(),
        }),
    );
    doc.warnings = opened.warnings;
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    out.emit(&doc, |_| render(&opened.info, &identity));
    Ok(EXIT_OK)
}

/// One line on an MMC/SD card's identity: maker, product, date, capacity, classes, AU.
fn mmc_summary(m: &crate::target::mmc::MmcIdentity) -> String {
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

fn render(t: &TargetInfo, identity: &serde_json::Map<String, serde_json::Value>) -> String {
    use crate::target::TargetKind;
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
    for (k, v) in identity.iter().filter(|(k, _)| k.as_str() != "mmc") {
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(a) if a.is_empty() => "none".into(),
            serde_json::Value::Array(a) => a
                .iter()
                .map(|p| match p {
                    serde_json::Value::Object(o) => format!(
                        "{} at {} size {}{}",
                        o.get("name").and_then(|v| v.as_str()).unwrap_or("?"),
                        format_bytes(o.get("start_bytes").and_then(|v| v.as_u64()).unwrap_or(0)),
                        format_bytes(o.get("size_bytes").and_then(|v| v.as_u64()).unwrap_or(0)),
                        o.get("mount_points")
                            .and_then(|m| m.as_array())
                            .filter(|m| !m.is_empty())
                            .map(|m| format!(
                                " mounted on {}",
                                m.iter()
                                    .filter_map(|x| x.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ))
                            .unwrap_or_default()
                    ),
                    other => other
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| other.to_string()),
                })
                .collect::<Vec<_>>()
                .join("; "),
            serde_json::Value::Number(n) if k.ends_with("_bytes") => {
                format_bytes(n.as_u64().unwrap_or(0))
            }
            serde_json::Value::Bool(x) => if *x { "yes" } else { "no" }.into(),
            other => other.to_string(),
        };
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
        let m = crate::target::mmc::decode_sysfs(dir.path());
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
    }
}
