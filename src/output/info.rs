//! `info`'s text, drawn from its document alone.

use crate::device::TargetInfo;
use crate::input::printable;
use crate::report::results::{HostPath, InfoIdentity};
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
            if let Some(h) = &b.host_path {
                rows.extend(host_path_rows(h));
            }
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
            if let Some(h) = &sim.host_path {
                rows.extend(host_path_rows(h));
            }
        }
        InfoIdentity::None(_) => {}
    }
    for (k, text) in rows {
        table.row(vec![k.replace('_', " "), text]);
    }
    s.push_str(&table.render());
    s
}

/// The host path in one line ("host path: …"): the link, its ceiling in figures and the
/// finding, or why it is unknown; for `auto`'s summary. Escaped as the rows are.
pub(crate) fn host_path_line(h: &HostPath) -> String {
    let rows = host_path_rows(h);
    let mut parts: Vec<String> = rows
        .iter()
        .filter(|(k, _)| *k == "host_path")
        .map(|(_, v)| v.clone())
        .collect();
    if let Some(c) = &h.ceiling {
        let mut ceiling = String::from("ceiling");
        if let Some(t) = c.theory_bytes_per_s {
            ceiling.push_str(&format!(
                " {:.1} MB/s in theory (an upper bound)",
                t as f64 / 1e6
            ));
        }
        if let Some(m) = c.measured_bytes_per_s {
            ceiling.push_str(&format!(
                ", {:.1} MB/s measured on one card",
                m as f64 / 1e6
            ));
        }
        if ceiling != "ceiling" {
            parts.push(ceiling);
        }
    }
    if let Some(f) = &h.negotiated_below {
        parts.push(format!(
            "negotiated below what the medium can do ({})",
            f.status_word()
        ));
    }
    if parts.is_empty() {
        parts.push(match h.unknown.first() {
            Some(u) => printable(u.strip_prefix("the host path ").unwrap_or(u)).into_owned(),
            None => "unknown".to_string(),
        });
    }
    format!("host path: {}", parts.join("; "))
}

/// The host path's rows: the link, its ceiling, the finding, what is unknown. Every
/// string read from sysfs or debugfs is escaped again here (a document may come from a
/// file).
fn host_path_rows(h: &HostPath) -> Vec<(&'static str, String)> {
    let esc = |t: &str| printable(t).into_owned();
    let mut rows = Vec::new();
    let mhz = |hz: u64| format!("{:.1} MHz", hz as f64 / 1e6);
    if let Some(m) = &h.mmc {
        let mut parts = Vec::new();
        if let Some(ios) = &m.ios {
            let mode = ios.timing.map_or_else(
                || format!("timing \"{}\" (unknown mode)", esc(&ios.timing_words)),
                |t| t.name().to_string(),
            );
            parts.push(mode);
            let mut clock = format!("{} asked", mhz(ios.clock_hz));
            if let Some(a) = ios.actual_clock_hz {
                clock.push_str(&format!(", {} actual", mhz(a)));
            }
            parts.push(clock);
            if let Some(w) = ios.bus_width_bits {
                parts.push(format!("{w} bits"));
            }
            if let Some(v) = &ios.signal_voltage {
                parts.push(esc(v));
            }
            parts.push(format!("from {}", esc(&m.ios_file)));
        } else if !m.host.is_empty() {
            parts.push(format!("MMC host {}", esc(&m.host)));
        }
        if let Some(t) = &m.from_kernel_log {
            let mode = t.timing.map_or_else(
                || format!("\"{}\" (unknown mode)", esc(&t.words)),
                |t| t.name().to_string(),
            );
            parts.push(format!("{mode} {}: {}", esc(&t.source), esc(&t.line)));
        }
        if let Some(scr) = &m.scr {
            let widths: Vec<String> = scr.bus_widths_bits.iter().map(|w| w.to_string()).collect();
            parts.push(format!(
                "card: SD {} (SCR), {} bit buses",
                scr.spec_version.as_deref().unwrap_or("version undefined"),
                widths.join(" and ")
            ));
        }
        if let Some(q) = m.cmdq_enabled {
            parts.push(format!("command queue {}", if q { "on" } else { "off" }));
        }
        rows.push(("host_path", parts.join(", ")));
    }
    if let Some(u) = &h.usb {
        let mut parts = vec![format!("USB device {}", esc(&u.device))];
        if let Some(s) = &u.speed {
            parts.push(format!("{} Mb/s", esc(s)));
        }
        match (&u.transport, u.interface_protocol) {
            (Some(t), Some(p)) => parts.push(format!("{} (protocol 0x{p:02x})", esc(t))),
            (None, Some(p)) => parts.push(format!("protocol 0x{p:02x}")),
            _ => {}
        }
        if let Some(d) = &u.driver {
            parts.push(format!("driver {}", esc(d)));
        }
        rows.push(("host_path", parts.join(", ")));
    }
    if let Some(p) = &h.nvme {
        let mut parts = vec![format!("NVMe on PCI function {}", esc(&p.function))];
        let show = |speed: &Option<String>, width: Option<u8>| {
            format!(
                "{} x{}",
                speed.as_deref().map_or("?".to_string(), esc),
                width.map_or("?".to_string(), |w| w.to_string())
            )
        };
        parts.push(format!(
            "link {}",
            show(&p.current_link_speed, p.current_link_width)
        ));
        parts.push(format!(
            "device's own {}",
            show(&p.max_link_speed, p.max_link_width)
        ));
        rows.push(("host_path", parts.join(", ")));
    }
    if let Some(a) = &h.sata {
        let mut parts = vec![format!("SATA {}", esc(&a.link))];
        for (what, v) in [
            ("link", &a.sata_spd),
            ("kernel limit", &a.sata_spd_limit),
            ("port limit", &a.hw_sata_spd_limit),
        ] {
            if let Some(v) = v {
                parts.push(format!("{what} {}", esc(v)));
            }
        }
        rows.push(("host_path", parts.join(", ")));
    }
    if let Some(c) = &h.ceiling {
        let mut text = format!("{}: {}", esc(&c.mode), esc(&c.theory));
        if let Some(m) = &c.measured {
            text.push_str(&format!("; {}", esc(m)));
        }
        if let Some(n) = &c.note {
            text.push_str(&format!("; {}", esc(n)));
        }
        rows.push(("host_path_ceiling", text));
    }
    if let Some(f) = &h.negotiated_below {
        rows.push((
            "host_path_finding",
            format!(
                "{} ({:.0} %): {}",
                f.status_word(),
                f.confidence * 100.0,
                esc(&f.evidence)
            ),
        ));
    }
    if !h.unknown.is_empty() {
        rows.push((
            "host_path_unknown",
            h.unknown
                .iter()
                .map(|u| esc(u))
                .collect::<Vec<_>>()
                .join("; "),
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::hostpath::{Ios, MmcLink, UsbLink};
    use crate::report::results::{BlockInfo, InfoResult};

    fn doc_with(host_path: HostPath) -> Document {
        let info = TargetInfo {
            spec: "/dev/mmcblk0".into(),
            kind: crate::device::TargetKind::Block,
            ..Default::default()
        };
        let identity = InfoIdentity::Block(Box::new(BlockInfo {
            sysfs: crate::device::sysfs::BlockIdentity {
                name: "mmcblk0".into(),
                ..Default::default()
            },
            discard_supported: None,
            mmc_summary: None,
            mmc: None,
            host_path: Some(host_path),
        }));
        Document::for_target(&info, Body::Info(InfoResult { identity }))
    }

    #[test]
    fn host_path_rows_show_the_link_and_escape_what_the_kernel_printed() {
        let h = HostPath {
            bus: "mmc".into(),
            mmc: Some(MmcLink {
                host: "mmc0".into(),
                ios_file: "/sys/kernel/debug/mmc0/ios".into(),
                ios: Some(Ios {
                    timing: None,
                    timing_words: "sd \u{1b}[2J uhs-II".into(),
                    clock_hz: 50_000_000,
                    actual_clock_hz: Some(26_000_000),
                    bus_width_bits: Some(4),
                    signal_voltage: Some("3.30 V".into()),
                }),
                scr: crate::device::scr::decode_scr("scr", "0225000000000000").ok(),
                cmdq_enabled: None,
                from_kernel_log: None,
            }),
            usb: None,
            nvme: None,
            sata: None,
            ceiling: crate::analysis::hostpath::mmc_ceiling(
                Some(crate::vocab::hostpath::Timing::SdHighSpeed),
                50_000_000,
                Some(26_000_000),
                Some(4),
            ),
            negotiated_below: None,
            unknown: vec!["the card's SCR unknown, because \u{7}".into()],
        };
        let text = render(&doc_with(h));
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
        for needle in [
            "host path",
            "(unknown mode)",
            "50.0 MHz asked, 26.0 MHz actual, 4 bits, 3.30 V",
            "card: SD 2.00 (SCR), 1 and 4 bit buses",
            "host path ceiling",
            "theory: 26 MHz x 4 bits / 8 = 13.0 MB/s",
            "host path unknown",
        ] {
            assert!(text.contains(needle), "{needle} missing from:\n{text}");
        }
        let usb = HostPath {
            bus: "usb".into(),
            mmc: None,
            usb: Some(UsbLink {
                device: "2-1".into(),
                speed: Some("480".into()),
                speed_mbps: Some(480.0),
                interface_protocol: Some(0x50),
                transport: Some("bulk-only".into()),
                driver: Some("usb-storage".into()),
            }),
            nvme: None,
            sata: None,
            ceiling: crate::analysis::hostpath::usb_ceiling(480.0, Some("bulk-only")),
            negotiated_below: None,
            unknown: vec![],
        };
        let text = render(&doc_with(usb));
        assert!(
            text.contains(
                "USB device 2-1, 480 Mb/s, bulk-only (protocol 0x50), driver usb-storage"
            ),
            "{text}"
        );
        assert!(text.contains("raspberrypi/usbboot#68"), "{text}");
    }
}
