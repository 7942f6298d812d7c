//! Each command's chart, from its typed samples, through the one SVG writer
//! ([`super::svg`]): what `--plot` writes and what the HTML report shows inline.
//! Output only: these functions never measure and never decide.

use super::results::FsMatrixResult;
use super::svg::{self, AxisFormat, Cell, Chart};
use super::Inference;
use crate::analysis::align::AlignPoint;
use crate::analysis::interval::IntervalPoint;
use crate::analysis::slc::SlcInterval;
use crate::capacity::extent::{Extent, ExtentKind};
use crate::capacity::probe::{AliasHit, SpanSample};
use crate::capacity::verify::{Phase, ThroughputSample};
use crate::fs::files::FilesSizeResult;
use crate::fs::matrix::MatrixTest;
use crate::fs::monitor::{throughput_series, MemSample};
use crate::fs::seq::SeqModeResult;
use crate::probe::fat::FatProbeSample;
use crate::probe::open_au::OpenAuSample;
use crate::probe::program::ProgramSample;
use crate::probe::scatter::ScatterPoint;
use crate::vocab::units::{format_bytes, format_rate};
use crate::workload::bench::BenchFigure;
use crate::workload::job::SecondSample;
use std::collections::BTreeMap;
use std::path::Path;

/// Every rate axis is in MiB/s (the units module's rate rule).
const MIB: f64 = crate::vocab::units::MIB_PER_S;

/// The align chart: boundary cost against alignment per block size, with the inferred
/// erase block, page and multi-plane size (from `inferences`) marked.
pub fn align(
    points: &[AlignPoint],
    inferences: &BTreeMap<String, Inference>,
    title: &str,
) -> Chart {
    let mut sizes: Vec<u64> = points.iter().map(|p| p.block_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut chart = Chart::new(
        title,
        "alignment (reads straddle multiples of it)",
        "boundary cost: on − (pre + post)/2",
    )
    .log2_x()
    .x_format(AxisFormat::Bytes)
    .y_format(AxisFormat::Nanoseconds);
    // Powers of two as lines; the 3 × 2^n alignments as dots of their own, since a
    // boundary of 2^n does not divide them and a zigzag would hide the staircase.
    for b in sizes {
        let pick = |pow2: bool| -> Vec<(f64, f64)> {
            points
                .iter()
                .filter(|p| p.block_bytes == b && p.align_bytes.is_power_of_two() == pow2)
                .map(|p| (p.align_bytes as f64, p.diff_ns))
                .collect()
        };
        chart = chart.series(&format!("{} reads", format_bytes(b)), pick(true));
        let tlc = pick(false);
        if !tlc.is_empty() {
            chart = chart.scatter(&format!("{} reads, 3 × 2^n", format_bytes(b)), tlc);
        }
    }
    for (what, key) in [
        ("erase block", "erase_block_bytes"),
        ("page", "page_bytes"),
        ("multi-plane", "multi_plane_bytes"),
    ] {
        if let Some((v, i)) = inferences.get(key).and_then(|i| Some((i.as_u64()?, i))) {
            chart = chart.marker(
                v as f64,
                &format!("{what} {} ({})", format_bytes(v), i.status_word()),
            );
        }
    }
    chart
}

/// Read time against request size, with the fitted line `access + bytes × ns_per_byte`
/// when there is one.
pub fn interval(points: &[IntervalPoint], line: Option<(f64, f64)>, title: &str) -> Chart {
    let mut c = Chart::new(title, "request size", "read time")
        .log2_x()
        .x_format(AxisFormat::Bytes)
        .y_format(AxisFormat::Nanoseconds)
        .series(
            "fastest read",
            points.iter().map(|p| (p.bytes as f64, p.min_ns)).collect(),
        )
        .series(
            "average",
            points.iter().map(|p| (p.bytes as f64, p.avg_ns)).collect(),
        );
    if let Some((a, b)) = line {
        c = c.series(
            "least-squares line",
            points
                .iter()
                .map(|p| (p.bytes as f64, a + b * p.bytes as f64))
                .collect(),
        );
    }
    c
}

/// flashbench's scatter plot: the fastest read time at each offset.
pub fn scatter(points: &[ScatterPoint], read_bytes: u64, title: &str) -> Chart {
    Chart::new(title, "offset (MiB)", "fastest read time")
        .y_format(AxisFormat::Nanoseconds)
        .y_zero(false)
        .scatter(
            &format!("{} reads", format_bytes(read_bytes)),
            points
                .iter()
                .map(|p| (p.offset as f64 / 1048576.0, p.min_ns as f64))
                .collect(),
        )
}

/// Throughput over the position, one line per phase (verify).
pub fn verify_throughput(samples: &[ThroughputSample], start: u64, len: u64) -> Chart {
    let phase = |p: Phase| -> Vec<(f64, f64)> {
        samples
            .iter()
            .filter(|s| s.phase == p)
            .map(|s| ((s.offset + s.bytes / 2) as f64, s.bytes_per_s / MIB))
            .collect()
    };
    let mut chart = Chart::new("verify throughput", "position", "MiB/s")
        .x_format(AxisFormat::Bytes)
        .x_range(start as f64, (start + len) as f64)
        .y_zero(true);
    for (p, name) in [(Phase::Write, "write"), (Phase::Read, "read")] {
        let points = phase(p);
        if !points.is_empty() {
            chart = chart.series(name, points);
        }
    }
    chart
}

/// The write-cache curve: throughput (MiB/s) against bytes written (GiB).
pub fn slc(intervals: &[SlcInterval]) -> Chart {
    let pts: Vec<(f64, f64)> = intervals
        .iter()
        .map(|i| {
            (
                (i.start_bytes + i.bytes) as f64 / (1u64 << 30) as f64,
                i.bytes_per_s() / 1048576.0,
            )
        })
        .filter(|p| p.1.is_finite())
        .collect();
    Chart::new(
        "Sustained write throughput (flashscope slc)",
        "written (GiB)",
        "MiB/s",
    )
    .y_zero(true)
    .series("write", pts)
}

/// Each bench test's per-second throughput over its counting time.
pub fn bench_per_second(figures: &[BenchFigure]) -> Chart {
    let mut c = Chart::new(
        "bench: throughput each second",
        "second of the test",
        "MiB/s",
    )
    .y_format(AxisFormat::Short)
    .log_y();
    for f in figures.iter().filter(|f| !f.per_second_bw.is_empty()) {
        c = c.series(
            &format!("{} {}", f.label, f.dir),
            f.per_second_bw
                .iter()
                .enumerate()
                .map(|(i, b)| ((i + 1) as f64, b / MIB))
                .collect(),
        );
    }
    c
}

/// The number of `metric` in compare's chart and table: its place among the rows'
/// metrics in row order, from 1.
pub fn compare_number(rows: &[crate::report::rows::Row], metric: &str) -> usize {
    let mut metrics: Vec<&str> = Vec::new();
    for r in rows {
        if !metrics.contains(&r.metric.as_str()) {
            metrics.push(&r.metric);
        }
    }
    metrics
        .iter()
        .position(|m| *m == metric)
        .map_or(0, |i| i + 1)
}

/// `compare`: each figure's difference from the baseline (B / A − 1, %) with its 95 %
/// interval as a whisker, one series per side, figures numbered along x in row order
/// (the caption names them). Figures without an interval are drawn as dots alone.
pub fn compare(rows: &[crate::report::rows::Row]) -> Chart {
    let mut c = Chart::new(
        "compare: difference from A with its 95 % interval",
        "figure (numbered as in the table)",
        "difference from A (%)",
    )
    .y_format(AxisFormat::Short);
    let figures = rows
        .iter()
        .map(|r| r.metric.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    c = c.x_range(0.5, figures as f64 + 0.5);
    let mut sides: Vec<&str> = rows.iter().map(|r| r.side.as_str()).collect();
    sides.dedup();
    for side in sides {
        let x = |r: &crate::report::rows::Row| compare_number(rows, &r.metric) as f64;
        let mine = || rows.iter().filter(|r| r.side == side);
        let with: Vec<(f64, f64, f64, f64)> = mine()
            .filter_map(|r| {
                let (lo, hi) = (r.ci_low?, r.ci_high?);
                Some((x(r), r.difference * 100.0, lo * 100.0, hi * 100.0))
            })
            .collect();
        c = c.whiskers(&format!("{side} vs A"), with);
        let without: Vec<(f64, f64)> = mine()
            .filter(|r| r.ci_low.is_none())
            .map(|r| (x(r), r.difference * 100.0))
            .collect();
        if !without.is_empty() {
            c = c.scatter(&format!("{side} vs A (no interval)"), without);
        }
    }
    c
}

/// A job's completion-latency percentiles in fio's JSON (`jobs[].read.clat_ns.percentile`),
/// the part of it the report charts.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct FioJobLatency {
    #[serde(default)]
    pub jobname: String,
    #[serde(default)]
    pub read: FioDirLatency,
    #[serde(default)]
    pub write: FioDirLatency,
}

/// One direction of a fio job: its completion latency.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct FioDirLatency {
    #[serde(default)]
    pub clat_ns: FioClat,
}

/// Percentile (fio's key, e.g. "99.000000") to latency in ns.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct FioClat {
    #[serde(default)]
    pub percentile: BTreeMap<String, u64>,
}

/// Latency percentiles per job and direction, on a "nines" axis (1 = p90, 2 = p99,
/// 3 = p99.9) so the tail is spread out; log latency axis.
pub fn latency_percentiles(jobs: &[FioJobLatency], title: &str) -> Chart {
    let mut c = Chart::new(
        title,
        "percentile in nines: 0.3 = p50, 1 = p90, 2 = p99, 3 = p99.9, 4 = p99.99",
        "completion latency",
    )
    .y_format(AxisFormat::Nanoseconds)
    .log_y();
    for j in jobs {
        for (dir, d) in [("read", &j.read), ("write", &j.write)] {
            let mut pts: Vec<(f64, f64)> = d
                .clat_ns
                .percentile
                .iter()
                .filter_map(|(k, &v)| {
                    let p: f64 = k.parse().ok()?;
                    (p > 0.0 && p < 100.0 && v > 0).then(|| (-(1.0 - p / 100.0).log10(), v as f64))
                })
                .collect();
            super::svg::sort_by_x(&mut pts);
            if !pts.is_empty() {
                let name = if j.jobname.contains(dir) {
                    j.jobname.clone()
                } else {
                    format!("{} {dir}", j.jobname)
                };
                c = c.series(&name, pts);
            }
        }
    }
    c
}

/// Per-second read and write throughput of an `io` run.
pub fn io_per_second(samples: &[SecondSample]) -> Chart {
    let rate =
        |bytes: u64, s: &SecondSample| bytes as f64 * 1000.0 / s.interval_ms.max(1) as f64 / MIB;
    let mut c = Chart::new("io: throughput each interval", "time (s)", "MiB/s");
    for (name, pick) in [
        (
            "read",
            (|s: &SecondSample| s.read_bytes) as fn(&SecondSample) -> u64,
        ),
        ("write", |s: &SecondSample| s.write_bytes),
    ] {
        if samples.iter().any(|s| pick(s) > 0) {
            c = c.series(
                name,
                samples
                    .iter()
                    .map(|s| (s.t_ms as f64 / 1000.0, rate(pick(s), s)))
                    .collect(),
            );
        }
    }
    c
}

/// Write speed against the number of erase blocks written in turn (open-AU detection).
pub fn open_au(samples: &[OpenAuSample], open_au: Option<u64>) -> Chart {
    let mut c = Chart::new(
        "open-au: speed per count of erase blocks written in turn",
        "erase blocks written in turn",
        "MiB/s",
    )
    .y_format(AxisFormat::Short);
    for (random, name) in [(false, "linear order"), (true, "random order")] {
        let pts: Vec<(f64, f64)> = samples
            .iter()
            .filter(|s| s.phase == "detect" && s.random == random && !s.superseded)
            .map(|s| (s.open_aus as f64, s.bytes_per_s / MIB))
            .collect();
        if !pts.is_empty() {
            c = c.series(name, pts);
        }
    }
    if let Some(n) = open_au {
        c = c.marker(n as f64, &format!("open erase blocks: {n}"));
    }
    c
}

/// Write speed per erase block from the start of the device (the FAT area test).
pub fn fat(samples: &[FatProbeSample]) -> Chart {
    let mut keys: Vec<(u64, bool)> = samples.iter().map(|s| (s.block_bytes, s.random)).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut c = Chart::new(
        "fat: write speed per erase block",
        "erase block index from the start",
        "MiB/s",
    )
    .y_format(AxisFormat::Short);
    for (b, random) in keys {
        c = c.series(
            &format!(
                "{} writes{}",
                format_bytes(b),
                if random { ", random" } else { "" }
            ),
            samples
                .iter()
                .filter(|s| s.block_bytes == b && s.random == random)
                .map(|s| (s.erase_block as f64, s.bytes_per_s / MIB))
                .collect(),
        );
    }
    c
}

/// The program matrix: throughput per block size, one line per column (pattern, order).
pub fn program(samples: &[ProgramSample]) -> Chart {
    let mut c = Chart::new("program: throughput per block size", "block size", "MiB/s")
        .log2_x()
        .log_y()
        .x_format(AxisFormat::Bytes)
        .y_format(AxisFormat::Short);
    for (i, name) in crate::analysis::program::COLUMNS.iter().enumerate() {
        c = c.series(
            name,
            samples
                .iter()
                .map(|s| (s.block_bytes as f64, s.bytes_per_s[i] / MIB))
                .collect(),
        );
    }
    c
}

/// What a stretch of the address space showed; the worst wins in a cell of the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Surface {
    NotChecked,
    Good,
    Aliased,
    Bad,
}

impl Surface {
    fn cell(self) -> Cell {
        match self {
            Surface::NotChecked => Cell::new("not checked", "#d9d9d9"),
            Surface::Good => Cell::new("good", "#2ca02c"),
            Surface::Aliased => Cell::new("aliased (holds another offset's data)", "#ff7f0e"),
            Surface::Bad => Cell::new("bad (lost, changed or I/O error)", "#d62728"),
        }
    }
}

/// Cells of a map of `size` bytes: each range marks the cells it touches with its class,
/// the worst class in a cell winning.
fn mark(cells: &mut [Surface], size: u64, offset: u64, length: u64, class: Surface) {
    if size == 0 || cells.is_empty() || length == 0 {
        return;
    }
    let n = cells.len() as u128;
    let first = (offset as u128 * n / size as u128) as usize;
    let last = ((offset.saturating_add(length) - 1) as u128 * n / size as u128) as usize;
    for c in cells.iter_mut().take(last + 1).skip(first) {
        *c = (*c).max(class);
    }
}

/// Cells in the surface maps: 32 rows of 64.
pub const SURFACE_CELLS: usize = 2048;
const SURFACE_COLUMNS: usize = 64;

/// The probe's surface map: the spans it wrote and read back and the places its alias
/// scan found another offset's stamp; everything else was not checked (the probe samples,
/// it does not read the whole device).
pub fn probe_surface(size: u64, spans: &[SpanSample], alias_hits: &[AliasHit]) -> String {
    let mut cells = vec![Surface::NotChecked; SURFACE_CELLS];
    for s in spans {
        let class = if s.io_error || s.lost_units > 0 || s.changed_units > 0 {
            Surface::Bad
        } else if s.overwritten_units > 0 {
            Surface::Aliased
        } else {
            Surface::Good
        };
        mark(&mut cells, size, s.offset, s.length, class);
    }
    for h in alias_hits {
        mark(&mut cells, size, h.read_at, 1, Surface::Aliased);
    }
    surface_svg("probe: what was checked where", size, &cells)
}

/// The verify surface map: what was read back (good unless an extent says otherwise) and
/// the bad extents by kind; what was not read is not checked.
pub fn verify_surface(size: u64, samples: &[ThroughputSample], extents: &[Extent]) -> String {
    let mut cells = vec![Surface::NotChecked; SURFACE_CELLS];
    for s in samples.iter().filter(|s| s.phase == Phase::Read) {
        mark(&mut cells, size, s.offset, s.bytes, Surface::Good);
    }
    for e in extents {
        let class = match e.kind {
            ExtentKind::Overwritten => Surface::Aliased,
            _ => Surface::Bad,
        };
        mark(&mut cells, size, e.offset, e.length, class);
    }
    surface_svg("verify: the surface read back", size, &cells)
}

fn surface_svg(title: &str, size: u64, cells: &[Surface]) -> String {
    let per_cell = size.div_ceil(cells.len().max(1) as u64);
    let legend = [
        Surface::Good,
        Surface::Aliased,
        Surface::Bad,
        Surface::NotChecked,
    ]
    .map(|s| (s.cell(), cells.iter().filter(|&&c| c == s).count()));
    super::svg::grid(
        title,
        &format!(
            "{} in {} cells of {}, left to right and top to bottom from offset 0; a cell shows the worst it holds",
            format_bytes(size),
            cells.len(),
            format_bytes(per_cell)
        ),
        SURFACE_COLUMNS,
        &cells.iter().map(|c| c.cell()).collect::<Vec<_>>(),
        &legend,
    )
}

/// `fs seq`'s chart: throughput of all modes in turn, then the page cache's Dirty and
/// Writeback, then Cached, over time, with a marker where each phase begins.
pub fn fs_seq(samples: &[SeqModeResult], timeline: &[MemSample], dir: &Path) -> String {
    let mib = |v: u64| v as f64 / 1048576.0;
    let secs = |ns: u64| ns as f64 / 1e9;
    let tp: Vec<(f64, f64)> = throughput_series(timeline)
        .into_iter()
        .map(|(t, r)| (secs(t), r / 1048576.0))
        .collect();
    let series = |f: fn(&MemSample) -> u64| -> Vec<(f64, f64)> {
        timeline.iter().map(|s| (secs(s.t_ns), mib(f(s)))).collect()
    };
    // A dashed line where each phase (mode × write / cold read / warm read) begins,
    // labelled on the top panel.
    let mut markers: Vec<(f64, String)> = Vec::new();
    for r in samples {
        for (what, t) in [
            ("write", &r.write),
            ("cold read", &r.cold_read),
            ("warm read", &r.warm_read),
        ] {
            if let Some(t) = t {
                markers.push((secs(t.start_ns), format!("{} {what}", r.mode.name())));
            }
        }
    }
    let end = timeline.last().map(|s| secs(s.t_ns)).unwrap_or(1.0);
    let panel = |title: &str, y_label: &str, labelled: bool| {
        let mut c = Chart::new(title, "time (s)", y_label)
            .size(900.0, 340.0)
            .x_range(0.0, end)
            .y_format(AxisFormat::Short);
        for (t, label) in &markers {
            c = c.marker(*t, if labelled { label } else { "" });
        }
        c
    };
    svg::stack(&[
        panel(
            &format!(
                "fs seq on {}: throughput (all modes in turn)",
                dir.display()
            ),
            "MiB/s",
            true,
        )
        .series("read + write", tp),
        panel(
            "page cache: Dirty and Writeback (/proc/meminfo)",
            "MiB",
            false,
        )
        .series("Dirty", series(|s| s.dirty_bytes))
        .series("Writeback", series(|s| s.writeback_bytes)),
        panel("page cache: Cached", "MiB", false).series("Cached", series(|s| s.cached_bytes)),
    ])
}

/// `fs files`' chart: MiB/s and files/s against file size (log 2).
pub fn fs_files(samples: &[FilesSizeResult], dir: &Path) -> String {
    let pts = |f: fn(&FilesSizeResult) -> f64| -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = samples
            .iter()
            .map(|r| (r.file_bytes as f64, f(r)))
            .collect();
        super::svg::sort_by_x(&mut v);
        v
    };
    let panel = |title: &str, y_label: &str| {
        Chart::new(title, "file size", y_label)
            .size(900.0, 400.0)
            .log2_x()
            .log_y()
            .x_format(AxisFormat::Bytes)
            .y_format(AxisFormat::Short)
    };
    svg::stack(&[
        panel(
            &format!("fs files on {}: throughput per file size", dir.display()),
            "MiB/s",
        )
        .series("write", pts(|r| r.write_bytes_per_s / 1048576.0))
        .series("cold read", pts(|r| r.read_bytes_per_s / 1048576.0)),
        panel("files per second", "files/s")
            .series("write", pts(|r| r.write_files_per_s))
            .series("cold read", pts(|r| r.read_files_per_s)),
    ])
}

/// `fs matrix`' heat map of one test: file size down, record size across.
pub fn fs_matrix(m: &FsMatrixResult, t: MatrixTest) -> String {
    let p = &m.parameters;
    let cols: Vec<String> = p.record_sizes.iter().map(|r| format_bytes(*r)).collect();
    let rows: Vec<String> = p.file_sizes.iter().map(|f| format_bytes(*f)).collect();
    svg::heatmap(
        &format!(
            "fs matrix: {}{}",
            t.name(),
            if p.direct {
                " (O_DIRECT)"
            } else if p.sync {
                " (O_SYNC)"
            } else {
                ""
            }
        ),
        "record size (log 2)",
        "file size (log 2)",
        &cols,
        &rows,
        &m.grid(t),
        format_rate,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_touch_every_cell_of_a_range_and_the_worst_wins() {
        let mut cells = vec![Surface::NotChecked; 8];
        mark(&mut cells, 800, 150, 200, Surface::Good);
        assert_eq!(
            &cells[..5],
            &[
                Surface::NotChecked,
                Surface::Good,
                Surface::Good,
                Surface::Good,
                Surface::NotChecked
            ]
        );
        mark(&mut cells, 800, 200, 1, Surface::Bad);
        mark(&mut cells, 800, 210, 1, Surface::Good);
        assert_eq!(cells[2], Surface::Bad);
        mark(&mut cells, 800, 799, 1, Surface::Aliased);
        assert_eq!(cells[7], Surface::Aliased);
        mark(&mut cells, 0, 0, 1, Surface::Bad);
        mark(&mut cells, 800, u64::MAX - 1, 10, Surface::Bad);
    }

    #[test]
    fn the_verify_map_shows_each_class_and_a_legend() {
        let samples = [ThroughputSample {
            phase: Phase::Read,
            offset: 0,
            bytes: 1 << 20,
            ns: 1,
            bytes_per_s: 1.0,
        }];
        let extents = [Extent {
            offset: 512 << 10,
            length: 1024,
            kind: ExtentKind::Overwritten,
            from: Some(0),
        }];
        let svg = verify_surface(2 << 20, &samples, &extents);
        assert!(svg.contains("#2ca02c") && svg.contains("#ff7f0e") && svg.contains("#d9d9d9"));
        assert!(svg.contains("not checked"));
        assert_eq!(
            svg.matches("<rect").count(),
            SURFACE_CELLS + 4 + 1,
            "cells, legend, background"
        );
    }
}
