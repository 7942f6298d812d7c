//! What flashbench logs say, through the same inference as the live tests: the erase
//! block and page from align logs, access time and throughput from interval logs, open
//! erase blocks from open-au logs and the FAT area from find-fat logs (`flashscope
//! analyze`). Pure functions of the parsed logs.

use crate::analysis::align::{self, AlignPoint, Step};
use crate::analysis::fat::{infer_fat_from_runs, samples_from_flashbench};
use crate::analysis::flashbench::{FlashbenchLog, LogData, LogKind, OpenAuLog, OpenAuNrSource};
use crate::analysis::interval::{self, IntervalPoint};
use crate::analysis::openau::{
    at_most_tentative, classify, infer_open_au, per_count, points_from_flashbench, Class,
    OpenAuPoint,
};
use crate::vocab::units::{format_bytes, format_rate};
use crate::vocab::{Inference, Warning};
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
    let (align_points, pooled) = pool_align_runs(logs, blocksize);
    let mut f = Findings {
        align_points,
        interval_points: interval_points(logs),
        warnings: pooled,
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

/// One flashbench log read by `analyze`, as its document keeps it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LogSample {
    pub file: String,
    pub log: FlashbenchLog,
}

/// A log with its name: as `analyze` reads them (`(name, log)`) and as its document
/// keeps them ([`LogSample`]), so the points are drawn from either without a copy.
pub trait NamedLog {
    fn log(&self) -> &FlashbenchLog;
}

impl NamedLog for (String, FlashbenchLog) {
    fn log(&self) -> &FlashbenchLog {
        &self.1
    }
}

impl NamedLog for LogSample {
    fn log(&self) -> &FlashbenchLog {
        &self.log
    }
}

/// Align points from every align log (block size: command line, then `--blocksize`,
/// then half the smallest alignment, as flashbench starts at twice the block size).
/// Several runs with one block size are one card measured again: see [`pool_align_runs`].
pub fn align_points<L: NamedLog>(logs: &[L], blocksize: Option<u64>) -> Vec<AlignPoint> {
    pool_align_runs(logs, blocksize).0
}

/// The block size `align_points` reads an align log with.
fn align_block_size(l: &FlashbenchLog, blocksize: Option<u64>) -> u64 {
    let from_cmd = l.command.as_ref().and_then(|c| c.block_bytes);
    let has_cmd = l.command.is_some();
    let derived = l.align_block_bytes();
    // flashbench's default block size is 16 KiB when its command line gives none; a
    // log that goes below 32 KiB alignments had a smaller one (the pasted command was
    // shortened, e.g. `flashbench -a <device>`).
    from_cmd
        .or(blocksize)
        .or(if has_cmd {
            Some(derived.map_or(16384, |d| d.min(16384)))
        } else {
            None
        })
        .or(derived)
        .unwrap_or(16384)
}

/// The align points of every run, several runs of one block size pooled: a flashbench log
/// gives one figure per alignment and no spread, so one run cannot say how far a row is
/// from its neighbours by chance; two or more runs can. Each alignment's boundary cost is
/// the median over the runs that measured it, its standard error the runs' spread
/// (1.4826 · MAD / √n; no spread known from a single distinct figure), and the base read
/// time the median too. A run whose rows repeat an earlier run's (the same log pasted
/// twice, or a cut copy of it) adds no measurement: its repeated rows count once. Returns
/// the points and a warning per pooled block size.
pub fn pool_align_runs<L: NamedLog>(
    logs: &[L],
    blocksize: Option<u64>,
) -> (Vec<AlignPoint>, Vec<Warning>) {
    // Per block size, in the order first seen: the runs' points.
    let mut by_block: Vec<(u64, Vec<Vec<AlignPoint>>)> = Vec::new();
    for l in logs
        .iter()
        .map(L::log)
        .filter(|l| l.kind() == LogKind::Align)
    {
        let bs = align_block_size(l, blocksize);
        let pts = l.align_points(bs);
        match by_block.iter_mut().find(|(b, _)| *b == bs) {
            Some((_, runs)) => runs.push(pts),
            None => by_block.push((bs, vec![pts])),
        }
    }
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for (bs, runs) in by_block {
        if runs.len() == 1 {
            out.extend(runs.into_iter().flatten());
            continue;
        }
        // A run every row of which earlier runs already hold is a copy, not a measurement
        // (a real run repeats no earlier figure in every row: each is pre, on and post to
        // three digits).
        let key = |p: &AlignPoint| (p.align_bytes, p.diff_ns.to_bits(), p.base_ns.to_bits());
        let mut seen: std::collections::HashSet<(u64, u64, u64)> = Default::default();
        let mut kept = 0;
        let mut duplicates = 0;
        // Per alignment, one figure (diff, base) per kept run; identical figures from
        // different runs count once.
        let mut cells: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
        for r in &runs {
            if kept > 0 && r.iter().all(|p| seen.contains(&key(p))) {
                duplicates += 1;
                continue;
            }
            kept += 1;
            seen.extend(r.iter().map(key));
            // A run that lists an alignment twice gives its median.
            let mut mine: BTreeMap<u64, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
            for p in r {
                let e = mine.entry(p.align_bytes).or_default();
                e.0.push(p.diff_ns);
                e.1.push(p.base_ns);
            }
            for (a, (mut d, mut b)) in mine {
                if let (Some(d), Some(b)) = (super::median(&mut d), super::median(&mut b)) {
                    let cell = cells.entry(a).or_default();
                    if !cell.contains(&(d, b)) {
                        cell.push((d, b));
                    }
                }
            }
        }
        for (a, cell) in cells {
            let mut d: Vec<f64> = cell.iter().map(|c| c.0).collect();
            let mut b: Vec<f64> = cell.iter().map(|c| c.1).collect();
            let (Some(diff), Some(base)) = (super::median(&mut d), super::median(&mut b)) else {
                continue;
            };
            let n = d.len();
            let se = if n >= 2 {
                let mut dev: Vec<f64> = d.iter().map(|x| (x - diff).abs()).collect();
                1.4826 * super::median(&mut dev).unwrap_or(0.0) / (n as f64).sqrt()
            } else {
                0.0
            };
            out.push(AlignPoint {
                block_bytes: bs,
                align_bytes: a,
                diff_ns: diff,
                se_ns: if se.is_finite() { se } else { 0.0 },
                base_ns: base,
            });
        }
        if kept >= 2 || duplicates > 0 {
            warnings.push(Warning::AlignRunsPooled {
                block_bytes: bs,
                runs: kept,
                duplicates,
            });
        }
    }
    (out, warnings)
}

/// The interval logs' rows as points.
pub fn interval_points<L: NamedLog>(logs: &[L]) -> Vec<IntervalPoint> {
    logs.iter()
        .filter_map(|l| match &l.log().data {
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

/// When every count's small-write rate in `pts` is at most `SLOW_RATIO` of the runs' own
/// largest-size (whole erase block) rate, the sentence that says so.
fn slow_against_whole_blocks(runs: &[&OpenAuLog], pts: &[OpenAuPoint]) -> Option<String> {
    let whole = runs
        .iter()
        .filter_map(|o| o.rows.iter().max_by_key(|r| r.size_bytes))
        .map(|r| (r.size_bytes, r.bytes_per_s))
        .filter(|r| r.1.is_finite() && r.1 > 0.0)
        .max_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))?;
    let rates = per_count(pts);
    let all_slow = !rates.is_empty()
        && rates
            .iter()
            .all(|&(_, r)| classify(r, whole.1) == Class::Slow);
    let worst_first = rates.first()?;
    all_slow.then(|| {
        format!(
            "small random-order writes are slow at every count measured, from the first ({} with {} open, against {} for whole {} writes): the collapse that marks the open erase block limit cannot show at this size; a linear (-O without -r) run at the same size gives the reference",
            format_rate(worst_first.1),
            worst_first.0,
            format_rate(whole.1),
            format_bytes(whole.0)
        )
    })
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
        let mut inf = match (reference, slow_against_whole_blocks(&random, &pts)) {
            // No linear run to compare with, and the small random-order writes are slow
            // at every count against the runs' own whole-erase-block writes: no count can
            // be read here (and "no collapse" would be false).
            (None, Some(why)) => Inference::inconclusive(why),
            _ => infer_open_au(&pts, reference),
        };
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
    if logs
        .iter()
        .any(|(_, l)| matches!(l.data, LogData::FindFat(_)))
    {
        let fat = || {
            logs.iter()
                .filter_map(|(_, l)| match &l.data {
                    LogData::FindFat(f) => Some(samples_from_flashbench(f)),
                    _ => None,
                })
                .flatten()
        };
        let inf = infer_fat_from_runs(fat);
        inferences.insert("fat_area_erase_blocks".into(), inf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::flashbench::parse_all;

    fn golden(name: &str) -> Vec<(String, FlashbenchLog)> {
        let path = format!(
            "{}/tests/data/flashbench/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        parse_all(name, &std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// Issue 43.6: several runs of one card with one block size are pooled: one point per
    /// alignment, the median of the runs, with the runs' spread as its standard error; the
    /// same log pasted twice is one measurement (no spread invented, the same answer as
    /// once), and the pooling is said.
    #[test]
    fn runs_of_one_block_size_pool_into_medians_and_a_copy_counts_once() {
        let one = golden("seed-align-01.txt");
        let two = [one.clone(), golden("seed-align-02.txt")].concat();
        let (pts, w) = pool_align_runs(&two, None);
        assert_eq!(pts.len(), 21, "one point per alignment, not per run");
        let at = |a: u64| pts.iter().find(|p| p.align_bytes == a).unwrap();
        // 2 GiB: 230 µs and 235 µs in the two runs.
        assert_eq!(at(1 << 31).diff_ns, 232_500.0);
        assert!(at(1 << 31).se_ns > 0.0);
        assert!(matches!(
            w.as_slice(),
            [Warning::AlignRunsPooled {
                block_bytes: 1024,
                runs: 2,
                duplicates: 0
            }]
        ));
        // The same log twice: the rows of the first run, no spread, one warning.
        let twice = [one.clone(), one.clone()].concat();
        let (mut pts2, w2) = pool_align_runs(&twice, None);
        let mut pts1 = pool_align_runs(&one, None).0;
        pts1.sort_by_key(|p| p.align_bytes);
        pts2.sort_by_key(|p| p.align_bytes);
        assert_eq!(pts2, pts1);
        assert!(pts2.iter().all(|p| p.se_ns == 0.0));
        assert!(matches!(
            w2.as_slice(),
            [Warning::AlignRunsPooled {
                runs: 1,
                duplicates: 1,
                ..
            }]
        ));
        let (a, b) = (infer(&one, None), infer(&twice, None));
        for k in ["erase_block_bytes", "page_bytes"] {
            assert_eq!(a.inferences[k], b.inferences[k], "{k}");
        }
        // Pooled, the two runs name what the seed article's author read.
        let f = infer(&two, None);
        assert_eq!(f.inferences["erase_block_bytes"].as_u64(), Some(4 << 20));
        assert_eq!(f.inferences["page_bytes"].as_u64(), Some(16 << 10));
    }

    /// An 8 MiB text of raw open-AU runs (a shell loop's output without command lines):
    /// every run is its own count, the case that was quadratic in the number of runs.
    fn many_runs(bytes: usize) -> (String, usize) {
        let run = "4MiB 8.1M/s\n2MiB 7.9M/s\n1MiB 7.5M/s\n512KiB 7M/s\n256KiB 6.5M/s\n128KiB 6M/s\n64KiB 5M/s\n32KiB 4M/s\n16KiB 3M/s\n";
        let n = bytes / run.len();
        (run.repeat(n), n)
    }

    /// Issue 33 point 6: analyze is linear in the number of open-AU runs. Checked by the
    /// work done, not by time: every run is parsed once into one log, and the inference
    /// reads one point per run (per_count groups by sorting, not by a scan per count).
    /// Before, per_count scanned all points for each count. A log holds at most
    /// `MAX_RUNS` runs (about 1 MiB of them); `scripts/analyze-scaling` times it.
    #[test]
    fn a_log_of_nearly_the_most_open_au_runs_is_read_in_one_pass() {
        let (text, n) = many_runs(1 << 20);
        assert!(
            (9_000..=crate::analysis::flashbench::MAX_RUNS).contains(&n),
            "{n}"
        );
        let logs = parse_all("loop.txt", &text).unwrap();
        assert_eq!(logs.len(), n);
        let (pts, size) = points_from_flashbench(
            &logs
                .iter()
                .filter_map(|(_, l)| match &l.data {
                    LogData::OpenAu(o) => Some(o),
                    _ => None,
                })
                .collect::<Vec<_>>(),
        );
        assert_eq!((pts.len(), size), (n, Some(16 << 10)));
        assert_eq!(per_count(&pts).len(), n);
        let f = infer(&logs, None);
        // Counts from the run order, every one fast: no collapse, and never confident.
        let inf = &f.inferences["open_au"];
        assert_ne!(inf.status_word(), "confident", "{}", inf.evidence);
    }
}
