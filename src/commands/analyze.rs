//! `flashscope analyze LOG...`: published flashbench logs and pasted results of other
//! capacity tests read into samples, inferred as the probes' own samples are, into the
//! `analyze` document (and its `--plot` chart). The CLI (`cli::analyze`) parses the options.

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
use crate::vocab::Warning;
use crate::Result;
use std::path::Path;

/// `analyze`'s parameters: the log files (`-` is standard input), the sizes and counts for
/// logs whose command lines do not give them, and the `--plot` file.
pub(crate) struct AnalyzeParams {
    pub files: Vec<String>,
    pub blocksize: Option<u64>,
    pub erasesize: Option<u64>,
    pub open_au_nr: Option<Vec<u32>>,
    pub plot: Option<OutputFile>,
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

/// Read the logs, infer, and build the document (writing the `--plot` chart if asked).
pub(crate) fn run(p: &AnalyzeParams) -> Result<Document> {
    let t0 = crate::backend::monotonic_ns();
    let (mut logs, capacity_reports) = load_all(&p.files)?;
    let mut warnings = match &p.open_au_nr {
        Some(counts) => flashbench::apply_open_au_nr(&mut logs, counts)?,
        None => Vec::new(),
    };
    for (_, l) in logs.iter_mut() {
        warnings.append(&mut l.warnings.clone());
        match &mut l.data {
            LogData::OpenAu(o) => {
                o.erase_bytes = o.erase_bytes.or(p.erasesize);
                o.block_bytes = o.block_bytes.or(p.blocksize);
            }
            LogData::FindFat(f) => f.erase_bytes = f.erase_bytes.or(p.erasesize),
            _ => {}
        }
    }
    let found = logs::infer(&logs, p.blocksize);
    let mut inferences = found.inferences;
    // Each capacity report's restated figures; the first file that gives a key keeps it.
    for c in &capacity_reports {
        for (key, inf) in capacity_tools::inferences(&c.report) {
            inferences.entry(key.to_string()).or_insert(inf);
        }
    }
    // The chart of the align logs, else of the interval logs (drawn only when asked for;
    // the points are then let go before the document is written).
    let plot = p.plot.is_some().then(|| {
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
            blocksize: p.blocksize,
            erasesize: p.erasesize,
            open_au_nr: p.open_au_nr.clone(),
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
            files: p.files.clone(),
            kind: kind.to_string(),
        }),
        Body::Analyze(body),
    );
    doc.warnings.extend(warnings);
    doc.inferences = inferences;
    doc.warnings.extend(found.warnings);
    if let Some(file) = &p.plot {
        match plot.flatten() {
            Some(svg) => file.write(svg.as_bytes())?,
            None => doc.warnings.push(Warning::NoPlot),
        }
    }
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    Ok(doc)
}
