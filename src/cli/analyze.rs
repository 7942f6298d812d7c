//! `flashscope analyze FILE...`: flashbench logs through the same inference as live tests.

use super::Output;
use crate::analysis::capacity_tools;
use crate::analysis::flashbench::{self, FlashbenchLog, LogData};
use crate::analysis::logs;
use crate::input;
use crate::report::charts;
use crate::report::output_file::OutputFile;
use crate::report::results::{
    AnalyzeParameters, AnalyzeResult, CapacityReportSample, LogSample, LogsTarget,
};
use crate::report::{Body, Document, Target};
use crate::vocab::error::Verdict;
use crate::vocab::units::parse_size_option;
use crate::vocab::Warning;
use crate::Result;
use std::path::Path;

/// Arguments of `analyze`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope analyze align-1k.txt align-4k.txt align-16k.txt\n  flashscope analyze interval.txt --json\n  flashscope analyze openau.txt --erase-size 4M --open-au-nr 2\n  flashscope analyze openau-loop.txt --erase-size 4M --open-au-nr 1,2,8,9\n\nReads flashbench output (align -a, interval -i, open-au -O, find-fat -f) as pasted: a\ncommand line after any shell prompt, CRLF, tabs, a BOM, a cut last line (left out, with\na warning). A file with several runs is split at command lines and where the sizes start\nagain. Several align logs are taken as one card measured with different block sizes.\nRaw -O runs without command lines: --open-au-nr 1,2,8,9 gives their counts in order;\nwithout it they are taken as 1, 2, 3, ... and open_au is at most tentative.\nA log is a regular file of at most 64 MiB (- reads standard input). Exit code 2 for a\nlog flashscope cannot read as flashbench output, a FIFO or device, or an impossible\nvalue (named by file and line); 1 for a file it cannot open.\nPublished commands are read as written: $[4*1024*1024] and $((...)) in option values, a\nbackslash continuation, and ^C (the run ends there, with a warning). A pasted result of\nanother capacity test (a probe's Device geometry block, a Data OK / Data LOST summary, a\nfill-and-verify window in English or German) is restated with its blind spots."
)]
pub struct Args {
    /// flashbench log files (regular files of at most 64 MiB; `-` reads standard input).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    /// Block size for logs whose command line does not give one.
    #[arg(long, short = 'b', value_name = "SIZE", allow_hyphen_values = true)]
    pub blocksize: Option<String>,
    /// Erase block size for open-au / find-fat logs without one.
    #[arg(
        long = "erase-size",
        alias = "erasesize",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub erasesize: Option<String>,
    /// Open erase blocks for open-au runs without --open-au-nr on a command line: one count
    /// for all of them, or one per run in the order they appear (e.g. 1,2,8,9).
    #[arg(long, value_name = "N[,N...]", allow_hyphen_values = true)]
    pub open_au_nr: Option<String>,
    /// Write an SVG plot (align: boundary cost against alignment; interval: time against size).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<String>,
}

/// Read and parse the files, each into its runs (a file with several runs gives
/// `FILE:LINE` names); errors name the file.
pub fn load(files: &[String]) -> Result<Vec<(String, FlashbenchLog)>> {
    Ok(load_all(files)?.0)
}

/// Read the files: flashbench logs into their runs, and pasted results of other capacity
/// tests into their reports (each file is one or the other).
#[allow(clippy::type_complexity)]
pub fn load_all(
    files: &[String],
) -> Result<(Vec<(String, FlashbenchLog)>, Vec<CapacityReportSample>)> {
    let mut v = Vec::new();
    let mut reports = Vec::new();
    for f in files {
        // One pass, line by line, for both readers: the text is never held whole (a
        // 64 MiB log costs its rows, not three copies of its lines).
        let mut log = flashbench::LogReader::new(f);
        let mut pasted = capacity_tools::Reader::default();
        let path = (f != "-").then(|| Path::new(f));
        let ends_cleanly =
            input::read_lines(path, "flashbench log", input::LOG_CAP_BYTES, |n, line| {
                log.line(n, line);
                pasted.line(n, line);
            })?;
        if let Some(report) = pasted.finish() {
            reports.push(CapacityReportSample {
                file: f.clone(),
                kind: "capacity-test-output".into(),
                report,
            });
            continue;
        }
        v.extend(log.finish(ends_cleanly)?);
    }
    Ok((v, reports))
}

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let t0 = crate::backend::monotonic_ns();
    let plot_file = OutputFile::create_opt("--plot", args.plot.as_deref().map(Path::new))?;
    let blocksize = args
        .blocksize
        .as_deref()
        .map(|v| parse_size_option("--blocksize", v, false))
        .transpose()?;
    let erasesize = args
        .erasesize
        .as_deref()
        .map(|v| parse_size_option("--erase-size", v, false))
        .transpose()?;
    let open_au_nr = args
        .open_au_nr
        .as_deref()
        .map(flashbench::parse_open_au_nr_list)
        .transpose()?;
    let (mut logs, capacity_reports) = load_all(&args.files)?;
    let mut warnings = match &open_au_nr {
        Some(counts) => flashbench::apply_open_au_nr(&mut logs, counts)?,
        None => Vec::new(),
    };
    for (_, l) in logs.iter_mut() {
        warnings.append(&mut l.warnings.clone());
        match &mut l.data {
            LogData::OpenAu(o) => {
                o.erase_bytes = o.erase_bytes.or(erasesize);
                o.block_bytes = o.block_bytes.or(blocksize);
            }
            LogData::FindFat(f) => f.erase_bytes = f.erase_bytes.or(erasesize),
            _ => {}
        }
    }
    let found = logs::infer(&logs, blocksize);
    let mut inferences = found.inferences;
    // Each capacity report's restated figures; the first file that gives a key keeps it.
    for c in &capacity_reports {
        for (key, inf) in capacity_tools::inferences(&c.report) {
            inferences.entry(key.to_string()).or_insert(inf);
        }
    }
    // The chart of the align logs, else of the interval logs (drawn only when asked for;
    // the points are then let go before the document is written).
    let plot = plot_file.is_some().then(|| {
        if !found.align_points.is_empty() {
            Some(
                charts::align(&found.align_points, &inferences, "align (flashbench logs)").to_svg(),
            )
        } else if !found.interval_points.is_empty() {
            Some(
                charts::interval(
                    &found.interval_points,
                    found.interval_line,
                    "interval (flashbench log)",
                )
                .to_svg(),
            )
        } else {
            None
        }
    });
    drop((found.align_points, found.interval_points));
    let kind = if logs.is_empty() && !capacity_reports.is_empty() {
        "capacity test output"
    } else {
        "flashbench logs"
    };
    // The logs move into the document: a long log's rows are held once.
    let body = AnalyzeResult {
        parameters: AnalyzeParameters {
            kinds: logs.iter().map(|(_, l)| l.kind()).collect(),
            blocksize,
            erasesize,
            open_au_nr,
        },
        samples: logs
            .into_iter()
            .map(|(file, log)| LogSample { file, log })
            .collect(),
        steps: found.steps,
        capacity_reports,
    };
    let mut doc = Document::new(
        Target::Logs(LogsTarget {
            files: args.files.clone(),
            kind: kind.to_string(),
        }),
        Body::Analyze(body),
    );
    doc.warnings.extend(warnings);
    doc.inferences = inferences;
    doc.warnings.extend(found.warnings);
    if let Some(file) = &plot_file {
        match plot.flatten() {
            Some(svg) => file.write(svg.as_bytes())?,
            None => doc.warnings.push(Warning::NoPlot),
        }
    }
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    out.emit(&doc);
    Ok(Verdict::Ok)
}
