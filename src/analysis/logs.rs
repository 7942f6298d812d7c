//! What flashbench logs say, through the same inference as the live tests: the erase
//! block and page from align logs, access time and throughput from interval logs, open
//! erase blocks from open-au logs and the FAT area from find-fat logs (`flashscope
//! analyze`). Pure functions of the parsed logs.

use crate::analysis::align::{self, AlignPoint, Step};
use crate::analysis::fat::{infer_fat, samples_from_flashbench};
use crate::analysis::flashbench::{FlashbenchLog, LogData, LogKind, OpenAuLog, OpenAuNrSource};
use crate::analysis::interval::{self, IntervalPoint};
use crate::analysis::openau::{
    at_most_tentative, infer_open_au, per_count, points_from_flashbench,
};
use crate::report::{Inference, Warning};
use crate::units::format_bytes;
use std::collections::BTreeMap;

const ASSUMED: &str = "the open-AU counts were taken from the order of the runs, not from command lines (give --open-au-nr to state them)";

/// What the logs gave.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    /// `erase_block_bytes`, `page_bytes` (`multi_plane_bytes`), `access_time_ns`,
    /// `throughput_bytes_per_s`, `open_au`, `open_au_random`, `fat_area_erase_blocks`: those
    /// the logs there are can tell.
    pub inferences: BTreeMap<String, Inference>,
    /// What the data cannot tell (power-of-two alignments only, unknown open-AU counts).
    pub warnings: Vec<Warning>,
    /// The align fit's staircase, when there were align logs.
    pub steps: Option<Vec<Step>>,
    /// The boundary costs of the align logs (empty without them).
    pub align_points: Vec<AlignPoint>,
    /// The interval logs' rows and the fitted line (intercept ns, slope ns per byte).
    pub interval_points: Vec<IntervalPoint>,
    pub interval_line: Option<(f64, f64)>,
}

/// Infer what every kind of log there is can tell; `blocksize` is the block size for align
/// logs whose command line does not give one.
pub fn infer(logs: &[(String, FlashbenchLog)], blocksize: Option<u64>) -> Findings {
    let mut f = Findings {
        align_points: align_points(logs, blocksize),
        interval_points: interval_points(logs),
        ..Findings::default()
    };
    if !f.align_points.is_empty() {
        let inf = align::infer(&f.align_points);
        align::insert_inferences(&mut f.inferences, &inf);
        f.warnings.extend(inf.warnings.iter().cloned());
        f.steps = Some(inf.steps);
    }
    if !f.interval_points.is_empty() {
        let inf = interval::infer(&f.interval_points);
        interval::insert_inferences(&mut f.inferences, &inf);
        f.interval_line = inf.line;
    }
    open_au_and_fat(logs, &mut f.inferences, &mut f.warnings);
    f
}

/// Align points from every align log (block size: command line, then `--blocksize`,
/// then half the smallest alignment, as flashbench starts at twice the block size).
pub fn align_points(logs: &[(String, FlashbenchLog)], blocksize: Option<u64>) -> Vec<AlignPoint> {
    let mut pts = Vec::new();
    for (_, l) in logs.iter().filter(|(_, l)| l.kind() == LogKind::Align) {
        let from_cmd = l.command.as_ref().and_then(|c| c.block_bytes);
        let has_cmd = l.command.is_some();
        let derived = l.align_block_bytes();
        // flashbench's default block size is 16 KiB when its command line gives none; a
        // log that goes below 32 KiB alignments had a smaller one (the pasted command was
        // shortened, e.g. `flashbench -a <device>`).
        let bs = from_cmd
            .or(blocksize)
            .or(if has_cmd {
                Some(derived.map_or(16384, |d| d.min(16384)))
            } else {
                None
            })
            .or(derived)
            .unwrap_or(16384);
        pts.extend(l.align_points(bs));
    }
    pts
}

/// The interval logs' rows as points.
pub fn interval_points(logs: &[(String, FlashbenchLog)]) -> Vec<IntervalPoint> {
    logs.iter()
        .filter_map(|(_, l)| match &l.data {
            LogData::Interval { rows, .. } => Some(rows),
            _ => None,
        })
        .flatten()
        .map(|r| IntervalPoint {
            bytes: r.bytes,
            min_ns: r.min_ns,
            avg_ns: r.avg_ns,
            max_ns: r.max_ns,
        })
        .collect()
}

/// Infer `open_au` (linear logs), `open_au_random` (random logs, against the linear
/// one-block rate when present) and `fat_area_erase_blocks` from the logs there are.
fn open_au_and_fat(
    logs: &[(String, FlashbenchLog)],
    inferences: &mut BTreeMap<String, Inference>,
    warnings: &mut Vec<Warning>,
) {
    let open: Vec<(&str, &OpenAuLog)> = logs
        .iter()
        .filter_map(|(f, l)| match &l.data {
            LogData::OpenAu(o) => Some((f.as_str(), o)),
            _ => None,
        })
        .collect();
    for (f, o) in &open {
        if o.open_au_nr.is_none() {
            warnings.push(Warning::OpenAuNrUnknown {
                file: f.to_string(),
            });
        }
    }
    // Counts assumed from the order of the runs may be wrong: no confident answer on them.
    let assumed = |logs: &[&OpenAuLog]| {
        logs.iter()
            .any(|o| o.open_au_nr_source == Some(OpenAuNrSource::RunOrder))
    };
    let linear: Vec<&OpenAuLog> = open
        .iter()
        .filter(|(_, o)| !o.random)
        .map(|x| x.1)
        .collect();
    let random: Vec<&OpenAuLog> = open.iter().filter(|(_, o)| o.random).map(|x| x.1).collect();
    let mut lin_ref = None;
    if !linear.is_empty() {
        let (pts, size) = points_from_flashbench(&linear);
        let mut inf = infer_open_au(&pts, None);
        if assumed(&linear) {
            inf = at_most_tentative(inf, ASSUMED);
        }
        if let Some(sz) = size {
            inf.evidence = format!("at {} writes: {}", format_bytes(sz), inf.evidence);
            lin_ref = per_count(&pts)
                .into_iter()
                .find(|&(n, _)| n == 1)
                .map(|(_, r)| (sz, r));
        }
        inferences.insert("open_au".into(), inf);
    }
    if !random.is_empty() {
        let (pts, size) = points_from_flashbench(&random);
        let reference = match (lin_ref, size) {
            (Some((ls, r)), Some(rs)) if ls == rs => Some(r),
            _ => None,
        };
        let mut inf = infer_open_au(&pts, reference);
        if assumed(&random) {
            inf = at_most_tentative(inf, ASSUMED);
        }
        if let Some(sz) = size {
            inf.evidence = format!(
                "at {} random-order writes: {}",
                format_bytes(sz),
                inf.evidence
            );
        }
        inferences.insert("open_au_random".into(), inf);
    }
    let fat: Vec<_> = logs
        .iter()
        .filter_map(|(_, l)| match &l.data {
            LogData::FindFat(f) => Some(samples_from_flashbench(f)),
            _ => None,
        })
        .flatten()
        .collect();
    if logs
        .iter()
        .any(|(_, l)| matches!(l.data, LogData::FindFat(_)))
    {
        let inf = infer_fat(&fat);
        inferences.insert("fat_area_erase_blocks".into(), inf);
    }
}
