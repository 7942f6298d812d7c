//! `verify`'s text, drawn from its document alone.

use crate::capacity::extent::Extent;
use crate::capacity::locate::LocatedExtent;
use crate::report::results::VerifyResult;
use crate::report::{Body, Document, Target};
use crate::vocab::units::{format_bytes, format_rate};
use serde::Deserialize;

/// The verify fields of a document `document` made.
fn verified(doc: &Document) -> Option<&VerifyResult> {
    match &doc.body {
        Body::Verify(v) => Some(v),
        _ => None,
    }
}

/// A bad extent as a verify document lists it: where it is in the run's range and, for a
/// directory run, in which file and where on the device.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Listed {
    Located(LocatedExtent),
    Plain(Extent),
}

impl Listed {
    fn extent(&self) -> &Extent {
        match self {
            Listed::Located(l) => &l.extent,
            Listed::Plain(e) => e,
        }
    }
}

/// When the bad extents show a wrap-around fake: what that means and `probe`'s line that
/// makes the real part usable (a user could otherwise partition the wrong end).
fn wrap_lines(doc: &Document) -> String {
    let Some(m) = doc
        .inferences
        .get("wrap_modulus_bytes")
        .and_then(|i| i.as_u64())
    else {
        return String::new();
    };
    let Some(info) = doc.target.info() else {
        return String::new();
    };
    let mut s = format!(
        "a wrap-around fake: addresses {} apart share storage, so only its first {} hold data (`flashscope probe` confirms it in seconds)\n",
        format_bytes(m),
        format_bytes(m)
    );
    if let Some(c) = crate::analysis::advice::usable_partition_command(
        info.size_bytes,
        m,
        info.logical_sector_bytes,
    ) {
        s.push_str(&format!("{}{c}\n", super::probe::MAKE_USABLE));
    }
    s
}

/// `verify`'s text from its document: the verdict, what was checked, the first bad extents
/// (with their files and device places for a directory run) and the rates.
pub fn render(doc: &Document) -> String {
    let ext: Vec<Listed> = doc
        .inferences
        .get("bad_extents")
        .and_then(|i| i.value.as_ref())
        .and_then(|v| Vec::<Listed>::deserialize(v).ok())
        .unwrap_or_default();
    let spec = doc.target.info().map_or("?", |t| t.spec.as_str());
    let unfinished = verified(doc).is_some_and(|v| v.checked_bytes < v.planned_bytes);
    let written_only = written_only(doc);
    let mut s = if ext.is_empty() && written_only {
        // "all of" only when the stamps cover the whole target, as its size says.
        let planned = verified(doc).map_or(0, |v| v.planned_bytes);
        let whole = doc.target.info().is_some_and(|t| t.size_bytes == planned);
        format!(
            "WRITTEN: stamps over {} {spec}, nothing checked yet (--pass read --resume checks them)\n",
            if whole {
                format!("all {} of", format_bytes(planned))
            } else {
                format!("{} of", format_bytes(planned))
            }
        )
    } else if let (true, Some(&(first, _))) = (ext.is_empty(), unrestored(doc).first()) {
        // The stamps read back, but bytes the restore wrote back did not.
        format!(
            "FAILED: {} that the restore wrote back to {spec} did not read back as written (first at {first})\n",
            format_bytes(unrestored(doc).iter().map(|r| r.1).sum())
        )
    } else if let (true, Some((o, v))) = (
        ext.is_empty(),
        verified(doc).and_then(|v| Some((v.out_of_space.as_ref()?, v))),
    ) {
        // A full filesystem is not a bad medium: what was written is what was checked.
        let written = format_bytes(o.written_bytes);
        if v.checked_bytes == 0 {
            format!(
                "INCOMPLETE: the filesystem of {spec} ran out of space ({}) before verify wrote anything: nothing checked\n",
                o.reason
            )
        } else {
            format!(
                "OK: the filesystem of {spec} ran out of space ({}) after {written} written; those {written} read back intact, the other {} were never written\n",
                o.reason,
                format_bytes(v.planned_bytes.saturating_sub(o.written_bytes))
            )
        }
    } else if ext.is_empty() && unfinished {
        format!("INCOMPLETE: nothing read back wrong so far, but not all of {spec} was checked\n")
    } else if ext.is_empty() {
        format!("OK: every byte of {spec} that was written read back intact\n")
    } else {
        let total: u64 = ext.iter().map(|e| e.extent().length).sum();
        format!(
            "FAILED: {} in {} extents of {spec} did not read back as written (first at {})\n",
            format_bytes(total),
            ext.len(),
            ext[0].extent().offset
        )
    };
    s.push_str(&wrap_lines(doc));
    s.push_str(&checked_line(doc));
    for listed in ext.iter().take(20) {
        let e = listed.extent();
        s.push_str(&format!(
            "  {:>14} +{:<12} {}{}\n",
            e.offset,
            e.length,
            e.kind.name(),
            e.from
                .map(|f| format!(" (holds the data written at {f})"))
                .unwrap_or_default()
        ));
        if let Listed::Located(l) = listed {
            s.push_str(&place_lines(l, doc));
        }
    }
    if ext.len() > 20 {
        s.push_str(&format!("  … {} more (see --json)\n", ext.len() - 20));
    }
    if doc.session.is_some() {
        s.push_str(&crate::report::wear_line(doc));
    }
    for (k, label) in [("write_bytes_per_s", "write"), ("read_bytes_per_s", "read")] {
        if let Some(v) = doc.inferences.get(k).and_then(|i| i.as_u64()) {
            s.push_str(&format!("  {label}: {}\n", format_rate(v as f64)));
        }
    }
    s
}

/// Preserve mode: the ranges the restore wrote back that read back different.
fn unrestored(doc: &Document) -> Vec<(u64, u64)> {
    doc.session.as_ref().map_or_else(Vec::new, |w| {
        w.preserve
            .unrestored
            .iter()
            .map(|r| (r.offset, r.length))
            .collect()
    })
}

/// True after a `--pass write`: every stamp written, none read back yet.
fn written_only(doc: &Document) -> bool {
    verified(doc).is_some_and(|v| v.checked_bytes == 0 && v.planned_bytes == doc.bytes_written)
}

/// "checked X of Y", and where a `--range` or the run's end left part of the target out.
fn checked_line(doc: &Document) -> String {
    let Some(v) = verified(doc) else {
        return String::new();
    };
    let (checked, planned) = (v.checked_bytes, v.planned_bytes);
    let mut s = format!(
        "  checked {} of {}",
        format_bytes(checked),
        format_bytes(planned)
    );
    let size = doc.target.info().map(|t| t.size_bytes);
    let start = v.parameters.range_offset;
    if let Some(size) = size.filter(|&z| z != planned) {
        s.push_str(&format!(
            " (--range {}+{} of {})",
            format_bytes(start),
            format_bytes(planned),
            format_bytes(size)
        ));
    }
    if checked < planned && !written_only(doc) {
        s.push_str(": the run stopped early (see the warning)");
    }
    s.push('\n');
    s
}

/// For an extent of a directory run: the file, the offset in it, and the device offsets
/// (or why they are unknown).
fn place_lines(e: &LocatedExtent, doc: &Document) -> String {
    let mut s = format!(
        "      in {} at {} ({})\n",
        e.file,
        e.file_offset_bytes,
        if e.file_kept { "kept" } else { "removed" }
    );
    let disk = match &doc.target {
        Target::Device(d) => d.device.as_ref().and_then(|d| d.whole_disk.as_deref()),
        _ => None,
    };
    if !e.device_offsets.is_empty() {
        let at: Vec<String> = e
            .device_offsets
            .iter()
            .map(|r| {
                let mut t = format!("{} +{}", r.offset_bytes, r.length_bytes);
                if let (Some(d), Some(name)) = (r.disk_offset_bytes, disk) {
                    t.push_str(&format!(" (/dev/{name} at {d})"));
                }
                t
            })
            .collect();
        s.push_str(&format!("      device {} at {}\n", e.device, at.join(", ")));
    }
    if let Some(why) = &e.device_offset_unknown_reason {
        s.push_str(&format!("      device offset unknown: {why}\n"));
    }
    s
}
