//! `flashscope scatter TARGET`: flashbench's scatter test, raw data and plot.

use super::Output;
use crate::device::{self, OpenRequest};
use crate::probe::scatter as probe;
use crate::report::output_file::OutputFile;
use crate::report::progress::Progress;
use crate::report::results::{ScatterParameters, ScatterResult};
use crate::report::{Body, Document};
use crate::vocab::error::EXIT_OK;
use crate::vocab::units::{format_bytes, format_ns, parse_size};
use crate::{Error, Result};
use std::path::Path;

/// Arguments of `scatter`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope scatter sim:sd-16g -o scatter.tsv --plot scatter.svg\n  flashscope scatter /dev/mmcblk0 --order 12 --span 2\n\nRead-only. The TSV has two columns, offset in MiB and time in ms, for gnuplot."
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Distance between positions and unit of --span.
    #[arg(long, short = 'b', default_value = "16K", value_name = "SIZE", value_parser = crate::vocab::units::size_arg)]
    pub blocksize: String,
    /// Read at 2^ORDER positions.
    #[arg(long, default_value_t = 9, value_name = "N")]
    pub order: u32,
    /// Blocks per read.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub span: u32,
    /// Rounds; each position keeps its fastest read.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub count: u32,
    /// Write the raw data as TSV (offset MiB, time ms).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<String>,
    /// Write an SVG scatter plot.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<String>,
}

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<i32> {
    let t0 = crate::backend::monotonic_ns();
    if args.count == 0 {
        return Err(Error::usage("--count must be at least 1"));
    }
    let block = parse_size(&args.blocksize)?;
    let tsv = OutputFile::create_opt("--output", args.output.as_deref().map(Path::new))?;
    let plot = OutputFile::create_opt("--plot", args.plot.as_deref().map(Path::new))?;
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    let mut opened = device::open(&args.target, &req)?;
    let mut progress = Progress::new("scatter");
    let (points, io_ns) = probe::run(
        opened.backend.as_mut(),
        block,
        args.order,
        args.span,
        args.count,
        &mut progress.callback(),
    )?;
    progress.finish();
    let body = ScatterResult {
        parameters: ScatterParameters {
            block_bytes: block,
            order: args.order,
            span: args.span,
            count: args.count,
            reads: points.len() as u64 * args.count as u64,
            io_time_ns: io_ns,
        },
        samples: points.clone(),
        output: args.output.clone(),
        plot: args.plot.clone(),
    };
    let mut doc = Document::for_target(&opened.info, Body::Scatter(body));
    doc.warnings = opened.warnings;
    if let Some(file) = &tsv {
        file.write(probe::to_tsv(&points).as_bytes())?;
    }
    if let Some(file) = &plot {
        let svg = crate::report::charts::scatter(
            &points,
            block * args.span as u64,
            &format!("scatter: {}", args.target),
        )
        .to_svg();
        file.write(svg.as_bytes())?;
    }
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    out.emit(&doc);
    Ok(EXIT_OK)
}

/// `scatter`'s text from its document: the range of the fastest read times.
pub fn render(doc: &Document) -> String {
    let Body::Scatter(sc) = &doc.body else {
        return String::new();
    };
    let (points, block) = (&sc.samples, sc.parameters.block_bytes);
    let times = points.iter().map(|p| p.min_ns);
    let min = times.clone().min().unwrap_or(0);
    let max = times.max().unwrap_or(0);
    let mut s = format!(
        "scatter: {} positions of {} over {}, fastest read {} … slowest {}\n",
        points.len(),
        format_bytes(block * sc.parameters.span as u64),
        format_bytes(points.len() as u64 * block),
        format_ns(min as f64),
        format_ns(max as f64)
    );
    if sc.output.is_none() && sc.plot.is_none() {
        s.push_str("(use -o FILE for the raw data and --plot FILE.svg for the chart)\n");
    }
    s
}
