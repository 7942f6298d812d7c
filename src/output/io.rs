//! `io`'s text, drawn from its document alone.

use crate::report::results::PageCacheChange;
use crate::report::{Body, Document};
use crate::vocab::units::{format_bytes, format_ns, format_rate};
use crate::workload::histogram::DEFAULT_PERCENTILES;

/// `io`'s text from its document, fio-like: one block per direction with IOPS,
/// bandwidth, latency and percentiles, then CPU, disk, page cache, verify and any error.
pub fn render(doc: &Document) -> String {
    let Body::Io(r) = &doc.body else {
        return String::new();
    };
    let s = &r.parameters;
    let mut out = format!(
        "{}: rw={}, bs={}, iodepth={}, numjobs={}, engine={}, direct={}{}\n",
        s.name,
        s.rw.name(),
        if s.bs_min == s.bs_max {
            format_bytes(s.bs_min)
        } else {
            format!("{}-{}", format_bytes(s.bs_min), format_bytes(s.bs_max))
        },
        s.iodepth,
        s.numjobs,
        r.engine,
        u8::from(s.direct),
        if r.clock == "virtual" {
            " (simulated device, virtual clock)"
        } else {
            ""
        }
    );
    if let Some(totals) = &r.totals {
        for (name, t) in [("read", &totals.read), ("write", &totals.write)] {
            let Some(t) = t else { continue };
            out += &format!(
                "  {name}: IOPS={:.0}, BW={} ({} in {})\n",
                t.iops(),
                format_rate(t.bw_bytes()),
                format_bytes(t.io_bytes),
                format_ns(t.runtime_ns as f64)
            );
            let c = &t.clat_ns;
            out += &format!(
                "    clat: min={}, avg={}, max={}, stdev={}\n",
                format_ns(c.min as f64),
                format_ns(c.mean),
                format_ns(c.max as f64),
                format_ns(c.stddev)
            );
            let pct: Vec<String> = DEFAULT_PERCENTILES
                .iter()
                .filter_map(|&p| c.at(p).map(|v| format!("{p:.2}th={}", format_ns(v as f64))))
                .collect();
            for chunk in pct.chunks(5) {
                out += &format!("    clat percentiles: {}\n", chunk.join(", "));
            }
        }
        out += &format!(
            "  cpu: usr={:.1}%, sys={:.1}%\n",
            crate::workload::cpu_percent(totals.usr_ns, totals.runtime_ns),
            crate::workload::cpu_percent(totals.sys_ns, totals.runtime_ns)
        );
    }
    if let Some(d) = r.disk_util.as_ref().and_then(|d| d.first()) {
        out += &format!(
            "  disk {}: ios={}/{}, merge={}/{}, aqu-sz={:.2}, util={:.1}%\n",
            d.name, d.read_ios, d.write_ios, d.read_merges, d.write_merges, d.aqu_sz, d.util
        );
    }
    if let Some(PageCacheChange {
        before: a,
        after: b,
    }) = &r.page_cache
    {
        out += &format!(
            "  page cache: Dirty {} -> {}, Writeback {} -> {}\n",
            format_bytes(a.dirty_bytes),
            format_bytes(b.dirty_bytes),
            format_bytes(a.writeback_bytes),
            format_bytes(b.writeback_bytes)
        );
    }
    if let Some(v) = &r.verify {
        out += &if v.bad_units == 0 {
            format!(
                "  verify: {} read back, all stamps correct\n",
                format_bytes(v.bytes_checked)
            )
        } else {
            format!(
                "  verify: FAILED: {} of 512-byte units wrong, first at offset {}\n",
                v.bad_units,
                v.first_bad_offset.unwrap_or(0)
            )
        };
    }
    if let Some(e) = &r.error {
        out += &format!("  stopped early: {e}\n");
    }
    out
}
