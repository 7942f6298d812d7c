//! `flashscope info TARGET`: what a target is, from what the device itself exposes.

use super::Output;
use crate::report::table::Table;
use crate::report::Document;
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
            if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&id) {
                identity.extend(m);
            }
        }
        None if opened.info.kind == "sim" => {
            identity.insert("model".into(), "flashscope simulated flash device".into());
            identity.insert("discard_supported".into(), true.into());
        }
        None => {}
    }
    let mut doc = Document::new(
        "info",
        serde_json::to_value(&opened.info).unwrap_or_default(),
    );
    doc.warnings = opened.warnings;
    doc.extra.insert("identity".into(), identity.clone().into());
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    out.emit(&doc, |d| render(d, &identity));
    Ok(0)
}

fn render(doc: &Document, identity: &serde_json::Map<String, serde_json::Value>) -> String {
    let t = &doc.target;
    let u = |k: &str| t.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
    let b = |k: &str| t.get(k).and_then(|v| v.as_bool());
    let kind = match t.get("kind").and_then(|v| v.as_str()) {
        Some("block") => "block device",
        Some("file") => "file",
        _ => "simulated flash device",
    };
    let mut traits = Vec::new();
    if let Some(r) = b("removable") {
        traits.push(if r { "removable" } else { "fixed" });
    }
    if let Some(r) = b("rotational") {
        traits.push(if r { "rotational" } else { "not rotational" });
    }
    if b("read_only") == Some(true) {
        traits.push("read-only");
    }
    let mut s = format!(
        "{}: {} {} ({} bytes), {} logical / {} physical sectors{}\n\n",
        t.get("spec").and_then(|v| v.as_str()).unwrap_or("?"),
        format_bytes(u("size_bytes")),
        kind,
        u("size_bytes"),
        format_bytes(u("logical_sector_bytes")),
        format_bytes(u("physical_sector_bytes")),
        if traits.is_empty() {
            String::new()
        } else {
            format!(", {}", traits.join(", "))
        }
    );
    let mut table = Table::new(&["property", "value"]).align(1, crate::report::table::Align::Left);
    if let Some(fs) = t.get("filesystem").and_then(|v| v.as_str()) {
        table.row(vec!["filesystem".into(), fs.into()]);
    }
    for (k, v) in identity {
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
