//! `flashscope interval TARGET`: read time against request size → access time and throughput.

use super::Output;
use crate::analysis::interval::{self, IntervalPoint};
use crate::device::{self, OpenRequest};
use crate::probe::interval as probe;
use crate::report::output_file::OutputFile;
use crate::report::progress::Progress;
use crate::report::results::{IntervalParameters, IntervalResult, IntervalRow};
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::error::EXIT_OK;
use crate::vocab::units::{format_bytes, format_ns, format_rate};
use crate::vocab::Inference;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// Arguments of `interval`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope interval sim:sd-16g\n  flashscope interval /dev/mmcblk0 --order 13 --plot interval.svg\n\nRead-only. Request sizes run from 512 bytes to 512 × 2^(order−1)."
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Number of request sizes (largest 512 B × 2^(order − 1)).
    #[arg(long, default_value_t = 13, value_name = "N")]
    pub order: u32,
    /// Places each size is read at (nine requests apart).
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub positions: u32,
    /// Rounds; each place keeps its fastest read.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub count: u32,
    /// Write an SVG plot of read time against request size with the fitted line.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<String>,
}

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<i32> {
    let t0 = crate::backend::monotonic_ns();
    let plot = OutputFile::create_opt("--plot", args.plot.as_deref().map(Path::new))?;
    if args.count == 0 || args.positions == 0 {
        return Err(Error::usage("--count and --positions must be at least 1"));
    }
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    let mut opened = device::open(&args.target, &req)?;
    let mut progress = Progress::new("interval");
    let load_before = crate::workload::sysstat::CpuLoad::now();
    let (samples, io_ns) = probe::run(
        opened.backend.as_mut(),
        args.order,
        args.positions,
        args.count,
        &mut progress.callback(),
    )?;
    progress.finish();
    let points: Vec<IntervalPoint> = samples.iter().map(|s| s.point()).collect();
    let mut inf = interval::infer(&points);
    let (environment, noisy) = probe::environment(
        &samples,
        load_before,
        crate::workload::sysstat::CpuLoad::now(),
        opened.info.kind == crate::device::TargetKind::Sim,
    );
    probe::temper(&mut inf, noisy.as_ref());
    let body = IntervalResult {
        environment: Some(environment),
        parameters: IntervalParameters {
            order: args.order,
            positions: args.positions,
            count: args.count,
            reads: samples
                .iter()
                .map(|s| s.times_ns.iter().map(|t| t.len()).sum::<usize>())
                .sum(),
            io_time_ns: io_ns,
            fit_from_bytes: inf.fit_from_bytes,
        },
        samples: samples
            .iter()
            .zip(&points)
            .map(|(s, p)| IntervalRow {
                bytes: s.bytes,
                min_ns: p.min_ns.round() as u64,
                avg_ns: p.avg_ns.round() as u64,
                max_ns: p.max_ns.round() as u64,
                offsets: s.offsets.clone(),
                times_ns: s.times_ns.clone(),
            })
            .collect(),
    };
    let mut doc = Document::for_target(&opened.info, Body::Interval(body));
    doc.warnings = opened.warnings;
    doc.warnings.extend(noisy);
    interval::insert_inferences(&mut doc.inferences, &inf);
    if let Some(file) = &plot {
        let svg = crate::report::charts::interval(
            &points,
            inf.line,
            &format!("interval: {}", args.target),
        )
        .to_svg();
        file.write(svg.as_bytes())?;
    }
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    out.emit(&doc);
    Ok(EXIT_OK)
}

/// `interval`'s text from its document (also `history show`'s).
pub fn render(doc: &Document) -> String {
    let Body::Interval(iv) = &doc.body else {
        return String::new();
    };
    let points: Vec<IntervalPoint> = iv
        .samples
        .iter()
        .map(|r| IntervalPoint {
            bytes: r.bytes,
            min_ns: r.min_ns as f64,
            avg_ns: r.avg_ns as f64,
            max_ns: r.max_ns as f64,
        })
        .collect();
    text(&points, &doc.inferences)
}

/// One-line answer and the table from the points and the document's `access_time_ns` and
/// `throughput_bytes_per_s` (shared with `analyze`).
pub fn text(points: &[IntervalPoint], inferences: &BTreeMap<String, Inference>) -> String {
    let (Some(access), Some(rate)) = (
        inferences.get("access_time_ns"),
        inferences.get("throughput_bytes_per_s"),
    ) else {
        return String::new();
    };
    let head = match (access.as_u64(), rate.as_u64()) {
        (Some(a), Some(t)) => format!(
            "access time {}, throughput {} — {}",
            format_ns(a as f64),
            format_rate(t as f64),
            if access.status_word() == "confident" && rate.status_word() == "confident" {
                "confident"
            } else {
                "tentative"
            }
        ),
        (None, Some(t)) => format!(
            "throughput {} — access time inconclusive",
            format_rate(t as f64)
        ),
        _ => "access time and throughput inconclusive".to_string(),
    };
    let mut t = Table::new(&["request", "min", "avg", "max", "rate at min"]);
    for p in points {
        t.row(vec![
            format_bytes(p.bytes),
            format_ns(p.min_ns),
            format_ns(p.avg_ns),
            format_ns(p.max_ns),
            format_rate(p.bytes as f64 * 1e9 / p.min_ns),
        ]);
    }
    format!(
        "{head}\n\n{}\naccess time: {}\nthroughput: {}\n",
        t.render(),
        access.evidence,
        rate.evidence
    )
}
