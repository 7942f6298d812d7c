//! `info`'s text, drawn from its document alone.

use crate::device::TargetInfo;
use crate::report::results::InfoIdentity;
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::units::format_bytes;

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
