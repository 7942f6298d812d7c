//! `scatter`: flashbench's scatter test, the fastest read time at many offsets, with its
//! raw data and chart (read-only).

use crate::device::TargetSpec;
use crate::device::{self, OpenRequest};
use crate::probe::scatter as probe;
use crate::report::output_file::OutputFile;
use crate::report::progress::Progress;
use crate::report::results::{ScatterParameters, ScatterResult};
use crate::report::{Body, Document};
use crate::{Error, Result};
use std::path::Path;

/// What `scatter` measures and the files it writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScatterParams {
    /// Distance between positions and unit of `span`.
    pub block_bytes: u64,
    /// Read at 2^order positions.
    pub order: u32,
    /// Blocks per read.
    pub span: u32,
    /// Rounds; each position keeps its fastest read.
    pub count: u32,
    /// Where to write the raw data as TSV (offset MiB, time ms).
    pub output: Option<String>,
    /// Where to write the SVG scatter plot.
    pub plot: Option<String>,
}

/// Read `spec` at 2^order positions and keep each one's fastest read.
pub fn measure(spec: &TargetSpec, params: &ScatterParams) -> Result<Document> {
    let t0 = crate::backend::monotonic_ns();
    if params.count == 0 {
        return Err(Error::usage("--count must be at least 1"));
    }
    let block = params.block_bytes;
    let tsv = OutputFile::create_opt("--output", params.output.as_deref().map(Path::new))?;
    let plot = OutputFile::create_opt("--plot", params.plot.as_deref().map(Path::new))?;
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    let mut opened = device::open(spec, &req)?;
    let mut progress = Progress::new("scatter");
    let (points, io_ns) = probe::run(
        opened.backend.as_mut(),
        block,
        params.order,
        params.span,
        params.count,
        &mut progress.callback(),
    )?;
    progress.finish();
    let body = ScatterResult {
        parameters: ScatterParameters {
            block_bytes: block,
            order: params.order,
            span: params.span,
            count: params.count,
            reads: points.len() as u64 * params.count as u64,
            io_time_ns: io_ns,
        },
        samples: points.clone(),
        output: params.output.clone(),
        plot: params.plot.clone(),
    };
    let mut doc = Document::for_target(&opened.info, Body::Scatter(body));
    doc.warnings = opened.warnings;
    if let Some(file) = &tsv {
        file.write(probe::to_tsv(&points).as_bytes())?;
    }
    if let Some(file) = &plot {
        let svg = crate::report::charts::scatter(
            &points,
            block * params.span as u64,
            &format!("scatter: {spec}"),
        )
        .to_svg();
        file.write(svg.as_bytes())?;
    }
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    Ok(doc)
}
