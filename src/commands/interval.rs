//! `interval`: read time against request size, the access time and throughput fitted to it
//! (read-only).

use crate::analysis::interval::{self, IntervalPoint};
use crate::device::TargetSpec;
use crate::device::{self, OpenRequest};
use crate::probe::interval as probe;
use crate::report::output_file::OutputFile;
use crate::report::progress::Progress;
use crate::report::results::{IntervalParameters, IntervalResult, IntervalRow};
use crate::report::{Body, Document};
use crate::{Error, Result};
use std::path::Path;

/// What `interval` measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntervalParams {
    /// Number of request sizes (largest 512 B × 2^(order − 1)).
    pub order: u32,
    /// Places each size is read at.
    pub positions: u32,
    /// Rounds; each place keeps its fastest read.
    pub count: u32,
    /// Where to write the SVG of read time against request size.
    pub plot: Option<String>,
}

/// Time reads of each request size on `spec` and fit access time and throughput.
pub fn measure(spec: &TargetSpec, params: &IntervalParams) -> Result<Document> {
    let t0 = crate::backend::monotonic_ns();
    let plot = OutputFile::create_opt("--plot", params.plot.as_deref().map(Path::new))?;
    if params.count == 0 || params.positions == 0 {
        return Err(Error::usage("--count and --positions must be at least 1"));
    }
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    let mut opened = device::open(spec, &req)?;
    let mut progress = Progress::new("interval");
    let load_before = crate::workload::sysstat::CpuLoad::now();
    let run_t0 = crate::backend::monotonic_ns();
    let (samples, io_ns) = probe::run(
        opened.backend.as_mut(),
        params.order,
        params.positions,
        params.count,
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
    // The first half of the rounds against the second: a device whose speed drifted gives
    // a ± that covers this run only (issue 43).
    let half = params.count as usize / 2;
    if half > 0 {
        let of = |r: std::ops::Range<usize>| -> Vec<IntervalPoint> {
            samples
                .iter()
                .map(|s| s.point_of_rounds(r.clone()))
                .collect()
        };
        interval::steadiness_caps(
            &mut inf,
            interval::unsteady(&of(0..half), &of(half..usize::MAX)),
        );
    }
    // A run of milliseconds on a real clock says nothing of the next run (issue 43.5); the
    // simulator's virtual clock has no run-to-run drift.
    if opened.info.kind != crate::device::TargetKind::Sim {
        interval::short_run_caps(
            &mut inf,
            crate::backend::monotonic_ns().saturating_sub(run_t0),
        );
    }
    let body = IntervalResult {
        environment: Some(environment),
        parameters: IntervalParameters {
            order: params.order,
            positions: params.positions,
            count: params.count,
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
        let svg = crate::report::charts::interval(&points, inf.line, &format!("interval: {spec}"))
            .to_svg();
        file.write(svg.as_bytes())?;
    }
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    Ok(doc)
}
