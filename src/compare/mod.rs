//! `compare`: is B faster than A, by how much, and how sure is that? Each side is a saved
//! `bench` or `io` document or fio's JSON (`side`); figures are paired by workload, what
//! measures different things is refused unless forced (`Workload::differences`), and each
//! pair gets the ratio of B to A with a 95 % interval from the per-second samples or from
//! repeated runs (`stats`). Pure: sides in, rows, their summaries and the verdict out;
//! `commands::compare` builds the document from them.

pub mod side;
pub mod stats;

pub use side::{load, Measure, Side, SideSpec};

use crate::report::rows::Row;
use crate::vocab::units::format_bytes;
use crate::vocab::Warning;
use crate::workload::bench::LINES;
use crate::workload::{Dir, RwMode};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// What a throughput figure measured: the access pattern, the direction counted, block
/// size, queue depth, jobs and whether the page cache was bypassed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Workload {
    pub rw: RwMode,
    /// "read" or "write": the direction this figure counts (both exist for rw / randrw).
    pub dir: String,
    pub bs: u64,
    pub bs_max: u64,
    pub iodepth: u32,
    pub numjobs: u32,
    /// O_DIRECT (true) or through the page cache.
    pub direct: bool,
}

impl Workload {
    fn direction(&self) -> Dir {
        if self.dir == "read" {
            Dir::Read
        } else {
            Dir::Write
        }
    }

    /// bench's metric name where a bench test measures exactly this (`rand_write`,
    /// `seq_read_q1`, …), else `RW_BS_qDEPTH[_jJOBS]_DIR`, e.g. `randrw_64k_q4_write`.
    pub fn metric(&self) -> String {
        let pure = matches!(
            self.rw,
            RwMode::Read | RwMode::Write | RwMode::RandRead | RwMode::RandWrite
        );
        if pure && self.numjobs == 1 && self.bs == self.bs_max {
            if let Some(l) = LINES.iter().find(|l| {
                l.rw(self.direction()) == self.rw && l.bs == self.bs && l.iodepth == self.iodepth
            }) {
                return l.metric(self.direction());
            }
        }
        let bs = crate::vocab::units::short_size(self.bs).to_ascii_lowercase();
        let jobs = if self.numjobs > 1 {
            format!("_j{}", self.numjobs)
        } else {
            String::new()
        };
        format!(
            "{}_{bs}_q{}{jobs}_{}",
            self.rw.name(),
            self.iodepth,
            self.dir
        )
    }

    /// In words: "4 KiB random write, QD32", "1 MiB sequential read, QD1, buffered".
    pub fn words(&self) -> String {
        let bs = if self.bs == self.bs_max {
            format_bytes(self.bs)
        } else {
            format!("{}–{}", format_bytes(self.bs), format_bytes(self.bs_max))
        };
        let pattern = match self.rw {
            RwMode::RandRead | RwMode::RandWrite => "random",
            RwMode::Read | RwMode::Write => "sequential",
            RwMode::RandRw => "mixed random",
            RwMode::Rw => "mixed sequential",
        };
        let mut s = format!("{bs} {pattern} {}, QD{}", self.dir, self.iodepth);
        if self.numjobs > 1 {
            s += &format!(" × {} jobs", self.numjobs);
        }
        if !self.direct {
            s += ", buffered";
        }
        s
    }

    /// Why a figure of `self` and one of `other` measure different things (empty when
    /// they measure the same).
    pub fn differences(&self, other: &Workload) -> Vec<String> {
        let mut out = Vec::new();
        if self.dir != other.dir {
            out.push(format!("{} vs {}", self.dir, other.dir));
        } else if self.rw != other.rw {
            out.push(format!(
                "access pattern {} vs {}",
                self.rw.name(),
                other.rw.name()
            ));
        }
        if (self.bs, self.bs_max) != (other.bs, other.bs_max) {
            out.push(format!(
                "block size {} vs {}",
                format_bytes(self.bs),
                format_bytes(other.bs)
            ));
        }
        if self.iodepth != other.iodepth {
            out.push(format!("queue depth {} vs {}", self.iodepth, other.iodepth));
        }
        if self.numjobs != other.numjobs {
            out.push(format!("jobs {} vs {}", self.numjobs, other.numjobs));
        }
        if self.direct != other.direct {
            let word = |d: bool| if d { "direct" } else { "buffered" };
            out.push(format!(
                "{} vs {} I/O (the page cache answers buffered I/O)",
                word(self.direct),
                word(other.direct)
            ));
        }
        out
    }

    /// Everything but direct I/O: what pairs figures across sides.
    fn same_test(&self, other: &Workload) -> bool {
        Workload {
            direct: other.direct,
            ..self.clone()
        } == *other
    }
}

use crate::vocab::units::pct;
/// The percentages compare prints (one formatting with the HTML report's).
pub use crate::vocab::units::signed_pct;

/// The least variance of the log of `m`'s figure its counting allows: whole I/Os of its
/// block size over its seconds.
fn resolution(m: &Measure, by_runs: bool) -> f64 {
    let seconds = m.per_second.len() as f64;
    if seconds == 0.0 {
        return 0.0; // fio: no seconds known; its runs' spread stands alone
    }
    stats::resolution_variance(
        m.workload.bs as f64,
        seconds,
        if by_runs { m.runs.len() } else { 1 },
        m.bw_bytes,
    )
}

/// Compare `b` with `a` (the baseline): the ratio and its interval, from runs when both
/// sides repeated the test, else from the per-second samples.
pub fn compare_measures(
    a: &Measure,
    b: &Measure,
    labels: (&str, &str),
    kinds: (&str, &str),
    forced: Vec<String>,
) -> Row {
    let (la, lb) = labels;
    let by_runs = a.runs.len() >= 2 && b.runs.len() >= 2;
    let floor = (resolution(a, by_runs), resolution(b, by_runs));
    let (interval, basis, na, nb) = if by_runs {
        (
            stats::runs_ratio(&a.runs, &b.runs, floor),
            "runs",
            a.runs.len(),
            b.runs.len(),
        )
    } else {
        (
            stats::bootstrap_ratio(&a.per_second, &b.per_second, floor),
            "per_second",
            a.per_second.len(),
            b.per_second.len(),
        )
    };
    let figure_ratio = b.bw_bytes / a.bw_bytes;
    let test = a.workload.words();
    let mut row = Row {
        metric: a.workload.metric(),
        test: test.clone(),
        baseline: la.into(),
        side: lb.into(),
        a_bytes_per_s: a.bw_bytes,
        b_bytes_per_s: b.bw_bytes,
        difference: figure_ratio - 1.0,
        ci_low: None,
        ci_high: None,
        significant: None,
        basis: if interval.is_ok() { basis } else { "none" }.into(),
        a_samples: na,
        b_samples: nb,
        method: String::new(),
        sentence: String::new(),
        forced,
    };
    let at = if row.forced.is_empty() {
        test
    } else {
        format!("{test} against {}", b.workload.words())
    };
    match interval {
        _ if !(figure_ratio.is_finite() && figure_ratio > 0.0) => {
            row.method = "no interval: a figure is zero".into();
            row.sentence = format!("{lb} against {la} at {at}: cannot say, a figure is zero");
        }
        Err(mut why) => {
            // What would give an interval, said for the kind of document each side is:
            // bench's --runs for bench, --runtime for io, repeated jobs for fio.
            let mut remedies: Vec<String> = Vec::new();
            for (l, m, kind) in [(la, a, kinds.0), (lb, b, kinds.1)] {
                if m.per_second.is_empty() {
                    why += &format!("; {l} has no per-second rates{}", match kind {
                        "fio" => " (fio's JSON keeps none: run its job several times, stonewalled, for runs)",
                        _ => " (its test counted for less than a second)",
                    });
                }
                let remedy = match kind {
                    "bench" => "give each test a longer --runtime, or repeat it (bench --runs N)",
                    "io" => "give the io run a longer --runtime",
                    _ => "run fio's job several times, stonewalled, for runs",
                };
                if !remedies.iter().any(|r| r == remedy) {
                    remedies.push(remedy.to_string());
                }
            }
            if !by_runs && a.runs.len().max(b.runs.len()) >= 2 {
                why += &format!(
                    "; runs need at least 2 on each side ({la} has {}, {lb} {})",
                    a.runs.len(),
                    b.runs.len()
                );
            }
            why += &format!(": {}", remedies.join("; "));
            row.method = format!("no interval: {why}");
            row.sentence = format!(
                "{lb} {} against {la} at {at}: not known how sure (no interval: {why})",
                signed_pct(row.difference)
            );
        }
        Ok(iv) => {
            // The interval belongs to the estimate from the same data; carried over to
            // the figures' own ratio (they differ by the seconds cut at the ends).
            let shift = figure_ratio / iv.ratio;
            let (lo, hi) = (iv.low * shift - 1.0, iv.high * shift - 1.0);
            row.ci_low = Some(lo);
            row.ci_high = Some(hi);
            row.method = iv.method;
            let significant = lo > 0.0 || hi < 0.0;
            row.significant = Some(significant);
            row.sentence = if !significant {
                format!(
                    "no significant difference at {at} ({lb} {} against {la}, 95% CI {} to {})",
                    signed_pct(row.difference),
                    signed_pct(lo),
                    signed_pct(hi)
                )
            } else if row.difference > 0.0 {
                format!(
                    "{lb} is {}% faster than {la} at {at} (95% CI {}–{}%)",
                    pct(row.difference),
                    pct(lo),
                    pct(hi)
                )
            } else {
                format!(
                    "{lb} is {}% slower than {la} at {at} (95% CI {}–{}%)",
                    pct(-row.difference),
                    pct(-hi),
                    pct(-lo)
                )
            };
        }
    }
    if !row.forced.is_empty() {
        row.sentence += &format!(
            " — compared with --force although they differ: {}",
            row.forced.join("; ")
        );
    }
    row
}

/// The label of the side at `index`: A, B, … Z, then S27, S28, …
pub fn label(index: usize) -> String {
    if index < 26 {
        char::from(b'A' + index as u8).to_string()
    } else {
        format!("S{}", index + 1)
    }
}

/// Every side against the first: paired figures, and what one side has and the other
/// lacks as warnings. Refused (exit 2, naming the files): fewer than two sides, a run
/// compared with itself, sides with nothing in common, and — unless `force` — figures
/// that measure different things.
pub fn compare(sides: &[Side], force: bool) -> Result<(Vec<Row>, Vec<Warning>)> {
    if sides.len() < 2 {
        return Err(Error::usage(format!(
            "compare needs at least two sides (got {}): give A and B, e.g. `flashscope compare a.json b.json`",
            sides.len()
        )));
    }
    for (i, a) in sides.iter().enumerate() {
        for b in &sides[i + 1..] {
            if side::same_run(a, b) {
                return Err(Error::usage(format!(
                    "{} and {} are the same run: comparing a run with itself says nothing; give two different runs",
                    a.spec.name(),
                    b.spec.name()
                )));
            }
        }
    }
    let a = &sides[0];
    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    let mut refusals = Vec::new();
    for (i, b) in sides.iter().enumerate().skip(1) {
        let (la, lb) = (label(0), label(i));
        let mut pairs: Vec<(&Measure, &Measure)> = Vec::new();
        for ma in &a.measures {
            if let Some(mb) = b
                .measures
                .iter()
                .find(|mb| ma.workload.same_test(&mb.workload))
            {
                pairs.push((ma, mb));
            }
        }
        if pairs.is_empty() {
            if let ([ma], [mb]) = (a.measures.as_slice(), b.measures.as_slice()) {
                pairs.push((ma, mb));
            } else {
                let list = |s: &Side| {
                    s.measures
                        .iter()
                        .map(|m| m.workload.metric())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(Error::usage(format!(
                    "{la} ({}) and {lb} ({}) measured nothing in common: {la} has {}; {lb} has {}",
                    a.spec.name(),
                    b.spec.name(),
                    list(a),
                    list(b)
                )));
            }
        }
        for (ma, mb) in &pairs {
            let diff = ma.workload.differences(&mb.workload);
            if !diff.is_empty() && !force {
                refusals.push(format!(
                    "{la}'s {} ({}) and {lb}'s {} ({}) differ: {}",
                    ma.workload.words(),
                    a.spec.name(),
                    mb.workload.words(),
                    b.spec.name(),
                    diff.join("; ")
                ));
                continue;
            }
            rows.push(compare_measures(
                ma,
                mb,
                (&la, &lb),
                (&a.kind, &b.kind),
                diff,
            ));
        }
        for (s, l, other) in [(a, &la, b), (b, &lb, a)] {
            for m in &s.measures {
                if !pairs
                    .iter()
                    .any(|p| std::ptr::eq(p.0, m) || std::ptr::eq(p.1, m))
                    && !other.measures.is_empty()
                {
                    warnings.push(Warning::UnmatchedFigure {
                        side: l.to_string(),
                        source: s.spec.name().to_string(),
                        metric: m.workload.metric().to_string(),
                        words: m.workload.words().to_string(),
                        other: if std::ptr::eq(s, a) { &lb } else { &la }.to_string(),
                    });
                }
            }
        }
    }
    if !refusals.is_empty() {
        return Err(Error::Refused(format!(
            "not comparable: {}. Their figures measure different things; give runs of the same test, or --force to compare them anyway",
            refusals.join(". ")
        )));
    }
    Ok((rows, warnings))
}

/// One line per comparison: each side against A, how many figures are faster, slower,
/// not different, and without an interval.
pub fn verdict(rows: &[Row]) -> String {
    let mut sides: Vec<&str> = rows.iter().map(|r| r.side.as_str()).collect();
    sides.dedup();
    let parts: Vec<String> = sides
        .iter()
        .map(|side| {
            let mine: Vec<&Row> = rows.iter().filter(|r| r.side == *side).collect();
            let count = |f: &dyn Fn(&Row) -> bool| mine.iter().filter(|r| f(r)).count();
            let faster = count(&|r| r.significant == Some(true) && r.difference > 0.0);
            let slower = count(&|r| r.significant == Some(true) && r.difference < 0.0);
            let same = count(&|r| r.significant == Some(false));
            let unknown = count(&|r| r.significant.is_none());
            let mut s = format!(
                "{side} vs A: faster at {faster}, slower at {slower}, no significant difference at {same}"
            );
            if unknown > 0 {
                s += &format!(", no interval at {unknown}");
            }
            s + &format!(" of {} figures", mine.len())
        })
        .collect();
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wl(rw: RwMode, dir: &str, bs: u64, qd: u32, direct: bool) -> Workload {
        Workload {
            rw,
            dir: dir.into(),
            bs,
            bs_max: bs,
            iodepth: qd,
            numjobs: 1,
            direct,
        }
    }

    fn measure(w: Workload, level: f64, seed: u64) -> Measure {
        // Per-second rates with ±2 % wiggle, deterministic.
        let per_second: Vec<f64> = (0..12)
            .map(|i| level * (1.0 + 0.02 * (((i * 7 + seed) % 5) as f64 - 2.0) / 2.0))
            .collect();
        Measure {
            workload: w,
            bw_bytes: per_second.iter().sum::<f64>() / 12.0,
            per_second,
            runs: Vec::new(),
        }
    }

    fn side(name: &str, measures: Vec<Measure>) -> Side {
        Side {
            spec: SideSpec::File(name.into()),
            kind: "io".into(),
            target: "sim:sd-16g".into(),
            measures,
            file_id: None,
            digest: {
                use sha2::{Digest, Sha256};
                Sha256::digest(name.as_bytes()).into()
            },
        }
    }

    #[test]
    fn metric_names_follow_bench_and_fall_back_to_the_workload() {
        assert_eq!(
            wl(RwMode::RandWrite, "write", 4096, 32, true).metric(),
            "rand_write"
        );
        assert_eq!(
            wl(RwMode::Read, "read", 1 << 20, 1, true).metric(),
            "seq_read_q1"
        );
        assert_eq!(
            wl(RwMode::RandRw, "write", 65536, 4, true).metric(),
            "randrw_64k_q4_write"
        );
        assert_eq!(
            wl(RwMode::RandWrite, "write", 4096, 32, false).words(),
            "4 KiB random write, QD32, buffered"
        );
    }

    #[test]
    fn a_faster_side_is_significant_with_the_right_sign_and_words() {
        let w = wl(RwMode::RandWrite, "write", 4096, 32, true);
        let (rows, warnings) = compare(
            &[
                // 4 KiB I/Os at ~100 MB/s: the counting resolution is far below the spread.
                side("a.json", vec![measure(w.clone(), 100e6, 0)]),
                side("b.json", vec![measure(w, 123e6, 3)]),
            ],
            false,
        )
        .unwrap();
        assert!(warnings.is_empty());
        let r = &rows[0];
        assert_eq!(r.significant, Some(true));
        assert!(
            r.ci_low.unwrap() > 0.15 && r.ci_high.unwrap() < 0.30,
            "{r:?}"
        );
        assert!(
            r.sentence
                .starts_with("B is 23% faster than A at 4 KiB random write, QD32 (95% CI "),
            "{}",
            r.sentence
        );
        assert!(r.method.contains("block bootstrap"), "{}", r.method);
    }

    #[test]
    fn what_measures_different_things_is_refused_unless_forced() {
        let a = side(
            "a.json",
            vec![measure(
                wl(RwMode::RandWrite, "write", 4096, 32, true),
                100.0,
                0,
            )],
        );
        let b = side(
            "b.json",
            vec![measure(
                wl(RwMode::RandWrite, "write", 65536, 1, false),
                100.0,
                1,
            )],
        );
        let e = compare(&[a.clone(), b.clone()], false).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let m = e.to_string();
        for needle in [
            "a.json",
            "b.json",
            "block size 4 KiB vs 64 KiB",
            "queue depth 32 vs 1",
            "direct vs buffered",
            "--force",
        ] {
            assert!(m.contains(needle), "{needle}: {m}");
        }
        let (rows, _) = compare(&[a, b], true).unwrap();
        assert_eq!(rows[0].forced.len(), 3);
        assert!(rows[0].sentence.contains("--force"), "{}", rows[0].sentence);
    }

    #[test]
    fn bad_pairs_are_refused_naming_the_files() {
        let w = wl(RwMode::Read, "read", 1 << 20, 8, true);
        let a = side("a.json", vec![measure(w.clone(), 100.0, 0)]);
        let e = compare(std::slice::from_ref(&a), false).unwrap_err();
        assert!(e.to_string().contains("at least two sides (got 1)"), "{e}");
        let e = compare(
            &[a.clone(), side("a.json", vec![measure(w.clone(), 1.0, 0)])],
            false,
        )
        .unwrap_err();
        assert!(e.to_string().contains("same run"), "{e}");
        let two = |n| {
            side(
                n,
                vec![
                    measure(wl(RwMode::Write, "write", 4096, 1, true), 1.0, 0),
                    measure(wl(RwMode::Write, "write", 8192, 1, true), 1.0, 0),
                ],
            )
        };
        let e = compare(
            &[
                side(
                    "x.json",
                    vec![
                        measure(w.clone(), 1.0, 0),
                        measure(wl(RwMode::RandRead, "read", 4096, 1, true), 1.0, 0),
                    ],
                ),
                two("y.json"),
            ],
            true,
        )
        .unwrap_err();
        assert!(e.to_string().contains("nothing in common"), "{e}");
        // A figure only one side has is named, not silently dropped.
        let (rows, w) = compare(
            &[
                side("p.json", vec![measure(w.clone(), 1.0, 0)]),
                side(
                    "q.json",
                    vec![
                        measure(w, 1.0, 1),
                        measure(wl(RwMode::Write, "write", 4096, 1, true), 1.0, 0),
                    ],
                ),
            ],
            false,
        )
        .unwrap();
        assert_eq!(rows.len(), 1);
        assert!(
            w[0].to_string()
                .contains("B (q.json) has write_4k_q1_write"),
            "{w:?}"
        );
    }

    #[test]
    fn equal_sides_are_no_significant_difference_and_runs_are_used_when_present() {
        let w = wl(RwMode::Write, "write", 1 << 20, 8, true);
        let mut a = measure(w.clone(), 100.0, 0);
        let mut b = measure(w, 100.0, 2);
        let r = compare_measures(&a, &b, ("A", "B"), ("bench", "bench"), Vec::new());
        assert_eq!(r.significant, Some(false), "{r:?}");
        assert!(
            r.sentence.starts_with("no significant difference"),
            "{}",
            r.sentence
        );
        a.runs = vec![100.0, 101.0, 99.0];
        b.runs = vec![90.0, 91.0, 89.5];
        let r = compare_measures(&a, &b, ("A", "B"), ("bench", "bench"), Vec::new());
        assert!(r.method.contains("Welch"), "{}", r.method);
        // Too few seconds and no runs: the figures, and why there is no interval.
        b.runs.clear();
        b.per_second.truncate(2);
        let r = compare_measures(&a, &b, ("A", "B"), ("bench", "bench"), Vec::new());
        assert_eq!(r.significant, None);
        assert!(
            r.sentence.contains("too few per-second samples"),
            "{}",
            r.sentence
        );
    }
}
