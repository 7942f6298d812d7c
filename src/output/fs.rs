//! `fs`'s text, drawn from its document alone.

use crate::fs::env::fs_line;
use crate::fs::env::FsInfo;
use crate::fs::matrix::MatrixTest;
use crate::fs::seq::{self};
use crate::report::table::Table;
use crate::report::{Body, Document, Target};
use crate::vocab::units::{format_bytes, format_ns, format_rate};

/// The median rate, with the range of the runs when there was more than one.
fn rate_cell(t: Option<&seq::Timing>, runs: &[f64]) -> String {
    let Some(t) = t else {
        return "-".into();
    };
    let median = format_rate(t.bytes_per_s);
    if runs.len() < 2 {
        return median;
    }
    let lo = runs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = runs.iter().copied().fold(0.0, f64::max);
    format!("{median} ({}–{})", format_rate(lo), format_rate(hi))
}

/// The filesystem of an `fs` document's target (`None` for a document of another kind).
fn fs_of(d: &Document) -> Option<&FsInfo> {
    match &d.target {
        Target::Filesystem(t) => Some(&t.fs),
        _ => None,
    }
}

/// `fs seq`'s text from its document: the verdict, the filesystem, one row per dd mode.
pub fn render_seq(d: &Document) -> String {
    let (Body::FsSeq(seq), Some(fs)) = (&d.body, fs_of(d)) else {
        return String::new();
    };
    let (file, bs) = (seq.parameters.file_bytes, seq.parameters.block_bytes);
    let mut s = String::new();
    let inf = |k: &str| d.inferences.get(k).and_then(|i| i.as_u64());
    let ratio = d
        .inferences
        .get("cache_inflation")
        .and_then(|i| i.value.as_ref())
        .and_then(|v| v.as_f64());
    let synced = match d.inferences.get("sustained_write_bytes_per_s") {
        Some(i) if i.status == crate::vocab::Status::Tentative => "synced; tentative, small file",
        _ => "synced",
    };
    match (inf("sustained_write_bytes_per_s"), ratio) {
        (Some(w), Some(r)) => s.push_str(&format!(
            "sustained write {} ({synced}); buffered dd would report {:.1} x that; cold read {}\n",
            format_rate(w as f64),
            r,
            inf("cold_read_bytes_per_s")
                .map(|v| format_rate(v as f64))
                .unwrap_or_else(|| "-".into())
        )),
        (Some(w), None) => s.push_str(&format!(
            "sustained write {} ({synced})\n",
            format_rate(w as f64)
        )),
        _ => s.push_str(&format!(
            "no sustained write figure: {}\n",
            d.inferences
                .get("sustained_write_bytes_per_s")
                .map(|i| i.evidence.as_str())
                .unwrap_or("no synced mode ran")
        )),
    }
    s.push_str(&format!(
        "{}: {} file, {} blocks{}, {} written in {}\n\n",
        fs_line(fs),
        format_bytes(file),
        format_bytes(bs),
        match seq.samples.iter().map(|r| r.runs).max() {
            Some(n) if n > 1 => format!(", median of {n} runs (range)"),
            _ => String::new(),
        },
        format_bytes(d.bytes_written),
        format_ns(d.elapsed_ns as f64)
    ));
    let peaks = &seq.dirty_peak_bytes;
    let mut t = Table::new(&[
        "mode",
        "dd flags",
        "write",
        "dirty peak",
        "cold read",
        "warm read",
        "note",
    ])
    .align(1, crate::report::table::Align::Left)
    .align(6, crate::report::table::Align::Left);
    for r in &seq.samples {
        let note = if !r.supported {
            format!(
                "unsupported: {}",
                r.unsupported_reason.clone().unwrap_or_default()
            )
        } else if let Some(ns) = r.sync_after_write_ns {
            format!(
                "fsync afterwards took {}; cold by {}",
                format_ns(ns as f64),
                r.cold_method.clone().unwrap_or_default()
            )
        } else {
            format!("cold by {}", r.cold_method.clone().unwrap_or_default())
        };
        t.row(vec![
            r.mode.name().into(),
            r.dd.clone(),
            rate_cell(r.write.as_ref(), &r.write_runs),
            peaks
                .get(&format!("{} write", r.mode.name()))
                .map(|b| format_bytes(*b))
                .unwrap_or_else(|| "-".into()),
            rate_cell(r.cold_read.as_ref(), &r.cold_read_runs),
            rate_cell(r.warm_read.as_ref(), &r.warm_read_runs),
            note,
        ]);
    }
    s.push_str(&t.render());
    s.push_str(
        "\ndirty peak: the most Dirty + Writeback (/proc/meminfo, whole system, 100 ms samples) while the write ran\n",
    );
    s
}

/// `fs files`' text from its document: the small-file verdict and one row per file size.
pub fn render_files(d: &Document) -> String {
    let (Body::FsFiles(files), Some(fs)) = (&d.body, fs_of(d)) else {
        return String::new();
    };
    let mut s = String::new();
    match d.inferences.get("small_file_write_ratio") {
        Some(i) if i.value.is_some() => s.push_str(&format!("{}\n", i.evidence)),
        _ => s.push_str("file-size sweep\n"),
    }
    s.push_str(&format!(
        "{}: {} written in {}\n\n",
        fs_line(fs),
        format_bytes(d.bytes_written),
        format_ns(d.elapsed_ns as f64)
    ));
    let mut t = Table::new(&[
        "file size",
        "files",
        "write",
        "write files/s",
        "cold read",
        "read files/s",
    ]);
    for r in &files.samples {
        t.row(vec![
            format_bytes(r.file_bytes),
            r.files.to_string(),
            format_rate(r.write_bytes_per_s),
            format!("{:.0}", r.write_files_per_s),
            format_rate(r.read_bytes_per_s),
            format!("{:.0}", r.read_files_per_s),
        ]);
    }
    s.push_str(&t.render());
    s
}

/// `fs matrix`' text from its document: one table per test, file size down, record across.
pub fn render_matrix(d: &Document) -> String {
    let (Body::FsMatrix(m), Some(fs)) = (&d.body, fs_of(d)) else {
        return String::new();
    };
    let cfg = &m.parameters;
    let mut s = format!(
        "iozone-style matrix, {} cells{}: {} written in {}\n{}\n",
        m.samples.len(),
        if cfg.direct {
            " with O_DIRECT"
        } else if cfg.sync {
            " with O_SYNC"
        } else if cfg.fsync {
            " with fsync in the write timings"
        } else {
            ""
        },
        format_bytes(d.bytes_written),
        format_ns(d.elapsed_ns as f64),
        fs_line(fs)
    );
    for t in MatrixTest::ALL {
        s.push_str(&format!(
            "\n{} (MiB/s), file size down, record size across\n",
            t.name()
        ));
        let mut header = vec!["file".to_string()];
        header.extend(cfg.record_sizes.iter().map(|r| format_bytes(*r)));
        let h: Vec<&str> = header.iter().map(|x| x.as_str()).collect();
        let mut table = Table::new(&h);
        let grid = m.grid(t);
        for (f, row) in cfg.file_sizes.iter().zip(grid) {
            let mut cells = vec![format_bytes(*f)];
            cells.extend(row.iter().map(|v| {
                v.map(|v| format!("{:.1}", v / 1048576.0))
                    .unwrap_or_default()
            }));
            table.row(cells);
        }
        s.push_str(&table.render());
    }
    s
}
