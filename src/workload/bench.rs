//! `bench`: the everyday speed test (KDiskMark's four lines, read and write) and the pure
//! analysis of its figures — SD speed classes, application performance classes, and
//! `--expect` checks.

use super::offsets::Dir;
use super::spec::RwMode;
use super::sysstat::CpuLoad;
use crate::vocab::units::{format_decimal_rate, format_rate, is_decimal_rate};
use crate::vocab::warning::{FigureNoise, NoiseEffect};
use crate::vocab::{Check, Inference, Metric, Warning};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// One line of the bench: a pattern, a block size and a queue depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchLine {
    /// Short name used in metric names: `seq`, `seq_q1`, `rand`, `rand_q1`.
    pub key: &'static str,
    /// KDiskMark's label.
    pub label: &'static str,
    pub random: bool,
    pub bs: u64,
    pub iodepth: u32,
}

/// The four lines, in the order they run.
pub const LINES: [BenchLine; 4] = [
    BenchLine {
        key: "seq",
        label: "SEQ1M Q8T1",
        random: false,
        bs: 1 << 20,
        iodepth: 8,
    },
    BenchLine {
        key: "seq_q1",
        label: "SEQ1M Q1T1",
        random: false,
        bs: 1 << 20,
        iodepth: 1,
    },
    BenchLine {
        key: "rand",
        label: "RND4K Q32T1",
        random: true,
        bs: 4096,
        iodepth: 32,
    },
    BenchLine {
        key: "rand_q1",
        label: "RND4K Q1T1",
        random: true,
        bs: 4096,
        iodepth: 1,
    },
];

impl BenchLine {
    /// fio's `rw` for this line in direction `dir`.
    pub fn rw(&self, dir: Dir) -> RwMode {
        match (self.random, dir) {
            (false, Dir::Read) => RwMode::Read,
            (false, Dir::Write) => RwMode::Write,
            (true, Dir::Read) => RwMode::RandRead,
            (true, Dir::Write) => RwMode::RandWrite,
        }
    }

    /// The metric base name for a direction: `seq_read`, `rand_write_q1`, …
    pub fn metric(&self, dir: Dir) -> String {
        let d = if dir == Dir::Read { "read" } else { "write" };
        match self.key.split_once('_') {
            Some((kind, q)) => format!("{kind}_{d}_{q}"),
            None => format!("{}_{d}", self.key),
        }
    }
}

/// What one bench test measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BenchFigure {
    /// Metric base name (`seq_write`, `rand_read_q1`, …).
    pub metric: String,
    pub label: String,
    /// "read" or "write".
    pub dir: String,
    pub bw_bytes: f64,
    pub iops: f64,
    pub p99_ns: Option<u64>,
    pub mean_ns: f64,
    /// Standard deviation of the completion latency, ns.
    pub stddev_ns: f64,
    /// Completed I/Os counted.
    pub ios: u64,
    /// Per-second bandwidth samples (bytes/s) of the counting time.
    pub per_second_bw: Vec<f64>,
    /// How far the per-second rate strayed from its median, relative: half the range from
    /// its 10th to its 90th percentile over the median (None below 3 samples).
    pub per_second_spread: Option<f64>,
    /// Share of the counting time the test thread waited for a CPU while runnable (other
    /// processes on its CPU); None on the virtual clock or without schedstat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runq_wait_share: Option<f64>,
}

/// The share of `window_ns` (the wall time the wait was counted over) the thread waited
/// for a CPU: at most 1 (the two clocks are read a few µs apart, so a wait can exceed its
/// window by that much); None without a window.
pub fn wait_share(wait_ns: u64, window_ns: u64) -> Option<f64> {
    (window_ns > 0).then(|| (wait_ns as f64 / window_ns as f64).min(1.0))
}

/// Relative half-range of the 10th to 90th percentile of `samples` around their median:
/// 0.05 means the per-second rate stayed within about ±5 %. None below 3 samples.
pub fn relative_spread(samples: &[f64]) -> Option<f64> {
    if samples.len() < 3 {
        return None;
    }
    let [p10, median, p90] = crate::analysis::stats::quantiles(samples, [0.1, 0.5, 0.9])?;
    (median > 0.0).then(|| (p90 - p10) / 2.0 / median)
}

/// A `noisy_environment` warning when the machine was busy while a real device was
/// measured (the load at the end, steal time between `before` and `after`): a run slowed
/// evenly by other programs looks steady, so its spread alone would not show it.
pub fn busy_warning(before: Option<CpuLoad>, after: Option<CpuLoad>) -> Option<Warning> {
    after?;
    let env = crate::analysis::noise::Environment {
        // Not the CPU pressure: bench's own engine threads and the kernel's I/O workers
        // wait for the CPUs at queue depth, so the pressure would blame the machine for
        // the test itself; the load average at the end decides.
        cpu_wait_share: None,
        ..CpuLoad::machine(before, after, false)
    };
    let causes = crate::analysis::noise::busy_causes(&env);
    (!causes.is_empty()).then_some(Warning::NoisyEnvironment {
        causes,
        effect: NoiseEffect::Figures,
    })
}

/// A figure whose per-second rate strays more than this is flagged as noise.
pub const NOISY_SPREAD: f64 = 0.10;

/// A figure whose thread waited for a CPU longer than this share of its time is flagged:
/// a process beside it slows every second alike, which the spread does not show.
pub const NOISY_RUNQ_WAIT: f64 = 0.02;

/// Whether a class verdict could go either way: the requirement lies inside the range the
/// figure varied over (the figure ± `spread` of it). `margin` is measured / required − 1,
/// `spread` is relative to the measured figure, so the two are compared on one scale: the
/// range from (1 + margin)(1 − spread) − 1 to (1 + margin)(1 + spread) − 1 of the
/// requirement must hold 0. (3 IOPS against 2000 with a ±100 % spread is 0–6 IOPS: far
/// from the line, not "either way".)
pub fn margin_within_spread(margin: f64, spread: f64) -> bool {
    let measured = 1.0 + margin;
    spread > 0.0 && measured * (1.0 - spread) < 1.0 && measured * (1.0 + spread) > 1.0
}

/// Warnings for figures that are noise: each figure whose per-second rate strayed more
/// than ±10 %, and each class verdict whose margin is inside its figure's spread (it
/// could go either way).
pub fn noise_warnings(figures: &[BenchFigure], classes: &[ClassCheck]) -> Vec<Warning> {
    let mut out = Vec::new();
    for f in figures {
        if let Some(w) = f.runq_wait_share.filter(|&w| w > NOISY_RUNQ_WAIT) {
            out.push(Warning::NoisyFigure {
                label: f.label.to_string(),
                dir: f.dir.to_string(),
                noise: FigureNoise::RunqWait { share: w },
            });
            continue;
        }
        let Some(sp) = f.per_second_spread.filter(|&s| s > NOISY_SPREAD) else {
            continue;
        };
        let (lo, hi) = f
            .per_second_bw
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        out.push(Warning::NoisyFigure {
            label: f.label.to_string(),
            dir: f.dir.to_string(),
            noise: FigureNoise::Spread {
                spread: sp,
                lo_bytes_per_s: lo,
                hi_bytes_per_s: hi,
            },
        });
    }
    let spread_of = |metric: &str| {
        figures
            .iter()
            .find(|f| f.metric == metric)
            .and_then(|f| f.per_second_spread)
    };
    for c in classes {
        let metrics: &[&str] = if APP_CLASSES.iter().any(|a| a.0 == c.class) {
            &["rand_read", "rand_write", "seq_write"]
        } else {
            &["seq_write"]
        };
        let spread = metrics
            .iter()
            .filter_map(|m| spread_of(m))
            .fold(0.0, f64::max);
        if margin_within_spread(c.margin, spread) {
            out.push(Warning::VerdictWithinNoise {
                class: c.class.to_string(),
                pass: c.pass,
                margin: c.margin,
                spread,
            });
        }
    }
    out
}

impl BenchFigure {
    /// Relative standard error of the rate: from the per-second samples when there are at
    /// least three, else from the spread of the completion latencies over the I/Os
    /// counted (the rate is the inverse of the mean service time); 0.1 when neither says.
    pub fn rel_stderr(&self) -> f64 {
        let n = self.per_second_bw.len();
        if n < 3 {
            if self.ios >= 10 && self.mean_ns > 0.0 {
                return (self.stddev_ns / self.mean_ns / (self.ios as f64).sqrt()).max(0.01);
            }
            return 0.1;
        }
        let mean = self.per_second_bw.iter().sum::<f64>() / n as f64;
        if mean <= 0.0 {
            return 1.0;
        }
        let var = self
            .per_second_bw
            .iter()
            .map(|x| (x - mean).powi(2))
            .sum::<f64>()
            / (n - 1) as f64;
        var.sqrt() / mean / (n as f64).sqrt()
    }

    /// True when the rate fell by more than 10 % from the first third to the last (a write
    /// cache running out): the figure is then not a sustained one.
    pub fn declining(&self) -> bool {
        let n = self.per_second_bw.len();
        if n < 3 {
            return false;
        }
        let k = n / 3;
        let first = self.per_second_bw[..k].iter().sum::<f64>() / k as f64;
        let last = self.per_second_bw[n - k..].iter().sum::<f64>() / k as f64;
        last < first * 0.9
    }
}

/// One class requirement checked against a figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ClassCheck {
    pub class: String,
    /// The requirement in words, e.g. "sequential write ≥ 9.54 MiB/s (10 MB/s)".
    pub requirement: String,
    pub pass: bool,
    /// Measured / required − 1 of the tightest requirement (negative when failing).
    pub margin: f64,
    /// A failed class the host path keeps from being measured: why (not measurable on
    /// this host, rather than failed by the card).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_limited: Option<String>,
}

const MB: f64 = 1e6;

/// SD speed classes by the sustained sequential write they promise (MB/s, 10^6 bytes),
/// highest first within each family.
pub const SPEED_CLASSES: [(&str, f64); 11] = [
    ("V90", 90.0),
    ("V60", 60.0),
    ("V30", 30.0),
    ("U3", 30.0),
    ("V10", 10.0),
    ("U1", 10.0),
    ("C10", 10.0),
    ("V6", 6.0),
    ("C6", 6.0),
    ("C4", 4.0),
    ("C2", 2.0),
];

/// Application performance classes: (name, random read IOPS, random write IOPS, sequential
/// write MB/s).
pub const APP_CLASSES: [(&str, f64, f64, f64); 2] =
    [("A2", 4000.0, 2000.0, 10.0), ("A1", 1500.0, 500.0, 10.0)];

/// Every speed class checked against the sequential write figure.
pub fn speed_class_checks(seq_write_bw: f64) -> Vec<ClassCheck> {
    SPEED_CLASSES
        .iter()
        .map(|&(name, mbs)| ClassCheck {
            class: name.into(),
            requirement: format!("sequential write ≥ {}", format_decimal_rate(mbs * MB)),
            pass: seq_write_bw >= mbs * MB,
            margin: seq_write_bw / (mbs * MB) - 1.0,
            host_limited: None,
        })
        .collect()
}

/// Both application classes checked against random 4 KiB read and write IOPS (QD32) and
/// sequential write.
pub fn app_class_checks(
    rand_read_iops: f64,
    rand_write_iops: f64,
    seq_write_bw: f64,
) -> Vec<ClassCheck> {
    APP_CLASSES
        .iter()
        .map(|&(name, rr, rw, sw)| {
            let margins = [
                rand_read_iops / rr - 1.0,
                rand_write_iops / rw - 1.0,
                seq_write_bw / (sw * MB) - 1.0,
            ];
            let margin = margins.iter().copied().fold(f64::INFINITY, f64::min);
            ClassCheck {
                class: name.into(),
                requirement: format!(
                    "random 4 KiB read ≥ {rr} IOPS, random 4 KiB write ≥ {rw} IOPS, sequential write ≥ {}",
                    format_decimal_rate(sw * MB)
                ),
                pass: margin >= 0.0,
                margin,
                host_limited: None,
            }
        })
        .collect()
}

/// Every speed and application class checked against the figures that were measured
/// (none without the sequential write test).
pub fn class_checks(figures: &[BenchFigure]) -> Vec<ClassCheck> {
    let find = |m: &str| figures.iter().find(|f| f.metric == m);
    let mut classes = Vec::new();
    if let Some(sw) = find("seq_write") {
        classes.extend(speed_class_checks(sw.bw_bytes));
        if let (Some(rr), Some(rw)) = (find("rand_read"), find("rand_write")) {
            classes.extend(app_class_checks(rr.iops, rw.iops, sw.bw_bytes));
        }
    }
    classes
}

/// The highest class met in each family (C, U, V, A), e.g. ["C10", "U3", "V60"].
pub fn met_marks(classes: &[ClassCheck]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for family in ["C", "U", "V", "A"] {
        // Both tables list the highest class first.
        if let Some(c) = classes
            .iter()
            .find(|c| c.pass && c.class.starts_with(family))
        {
            out.push(c.class.clone());
        }
    }
    out
}

/// Every class mark a card's label or its SSR can claim: the speed classes, then the
/// application classes.
pub fn class_marks() -> Vec<&'static str> {
    SPEED_CLASSES
        .iter()
        .map(|c| c.0)
        .chain(APP_CLASSES.iter().map(|c| c.0))
        .collect()
}

/// Parse the class marks printed on a card or stick (`--label "U3 V30 A2"`): marks separated
/// by spaces or commas, in any case, each once.
pub fn parse_label(text: &str) -> Result<Vec<String>> {
    let known = class_marks();
    let mut marks: Vec<String> = Vec::new();
    for term in text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
    {
        let mark = term.to_ascii_uppercase();
        if !known.contains(&mark.as_str()) {
            return Err(Error::usage(format!(
                "--label: '{term}' is not an SD class mark; give the marks printed on the card, e.g. \"U3 V30 A2\" (known: {})",
                known.join(" ")
            )));
        }
        if !marks.contains(&mark) {
            marks.push(mark);
        }
    }
    if marks.is_empty() {
        return Err(Error::usage(
            "--label is empty: give the class marks printed on the card, e.g. \"U3 V30 A2\"",
        ));
    }
    Ok(marks)
}

/// The name of the check `command` makes of a claimed class mark: `COMMAND.class_MARK`.
pub fn class_check_name(command: &str, mark: &str) -> String {
    format!("{command}.class_{mark}")
}

/// A requirement of a class mark: what, the measured figure, the required one, its units.
type Need = (&'static str, f64, f64, &'static str);

/// Every requirement of `mark` with its measured figure; `None` for a mark unknown or
/// whose figures were not measured.
fn needs_of(mark: &str, figures: &[BenchFigure]) -> Option<Vec<Need>> {
    let find = |m: &str| figures.iter().find(|f| f.metric == m);
    let sw = find("seq_write")?;
    if let Some(&(_, mbs)) = SPEED_CLASSES.iter().find(|c| c.0 == mark) {
        return Some(vec![("sequential write", sw.bw_bytes, mbs * MB, "bytes/s")]);
    }
    let &(_, rr, rw, mbs) = APP_CLASSES.iter().find(|c| c.0 == mark)?;
    let (r, w) = (find("rand_read")?, find("rand_write")?);
    Some(vec![
        ("random 4 KiB read", r.iops, rr, "IOPS"),
        ("random 4 KiB write", w.iops, rw, "IOPS"),
        ("sequential write", sw.bw_bytes, mbs * MB, "bytes/s"),
    ])
}

/// What the host path explains of each unmet requirement of `mark`, when it explains
/// every one (`None` when the mark is met or the card holds itself back): a sequential
/// figure at the path's ceiling, and A2's random I/O through a host that sends one
/// command at a time, from a card that does at least A1's figures without a queue.
fn host_explains(
    mark: &str,
    needs: &[Need],
    h: &crate::analysis::hostpath::HostLimits,
) -> Option<Vec<String>> {
    if needs.iter().all(|n| n.1 >= n.2) {
        return None;
    }
    needs
        .iter()
        .filter(|n| n.1 < n.2)
        .map(|&(what, got, need, units)| {
            if units == "IOPS" {
                // Queueing overlaps command time (3,200 against 5,000 read IOPS for one
                // A2 card without and with it): a card under A1's figure is held back by
                // itself, not by the missing queue.
                let a1 = APP_CLASSES
                    .iter()
                    .find(|c| c.0 == "A1")
                    .map_or(f64::INFINITY, |c| if what.contains("read") { c.1 } else { c.2 });
                let why = h.no_queue.as_ref().filter(|_| mark == "A2" && got >= a1)?;
                return Some(format!(
                    "{what} ({got:.0} IOPS against {need:.0}) needs the host to queue commands, and {why}"
                ));
            }
            let (at, ceiling) = h.ceiling.as_ref()?;
            // A card well under the path's ceiling is limited by itself, not the host.
            (got >= *at).then(|| {
                format!(
                    "{what} {} against {} is at the path's ceiling ({ceiling})",
                    format_rate(got),
                    format_decimal_rate(need),
                )
            })
        })
        .collect()
}

/// Mark the failed classes the host path explains (`ClassCheck::host_limited`).
pub fn mark_host_limited(
    classes: &mut [ClassCheck],
    figures: &[BenchFigure],
    host: &crate::analysis::hostpath::HostLimits,
) {
    for c in classes.iter_mut().filter(|c| !c.pass) {
        c.host_limited = needs_of(&c.class, figures)
            .and_then(|needs| host_explains(&c.class, &needs, host))
            .map(|why| why.join("; "));
    }
}

/// Each claimed class mark judged against the measured figures: a check named
/// `COMMAND.class_MARK` with the figure that decided it (the one with the least margin).
/// A claim whose figures were not measured gets no check. With the host path's limits
/// (`host`), a mark whose every unmet requirement the host explains is "not measurable on
/// this host (limited by …)", undecided rather than failed: a sequential figure at the
/// path's ceiling (`HostLimits::ceiling`), and A2's random I/O
/// through a host that sends one command at a time.
pub fn claim_checks(
    command: &str,
    claimed: &[String],
    figures: &[BenchFigure],
    host: Option<&crate::analysis::hostpath::HostLimits>,
) -> Vec<Check> {
    let mut out = Vec::new();
    for mark in claimed {
        let Some(needs) = needs_of(mark, figures) else {
            continue;
        };
        let Some(&(what, measured, required, units)) = needs
            .iter()
            .min_by(|a, b| (a.1 / a.2).total_cmp(&(b.1 / b.2)))
        else {
            continue;
        };
        let passed = needs.iter().all(|n| n.1 >= n.2);
        let limited = host.and_then(|h| host_explains(mark, &needs, h));
        if let Some(why) = limited {
            out.push(Check {
                inconclusive: true,
                threshold: None,
                name: class_check_name(command, mark),
                passed: false,
                measurement: Some(measured),
                units: Some(units.to_string()),
                message: format!(
                    "{mark} not measurable on this host (limited by the host path): {}",
                    why.join("; ")
                ),
            });
            continue;
        }
        // The measured figure in MiB/s; the requirement (SD's 10^6 B/s) as well, with its
        // own decimal figure after it.
        let show = |v: f64, required: bool| {
            if units == "IOPS" {
                format!("{v:.0} IOPS")
            } else if required {
                format_decimal_rate(v)
            } else {
                format_rate(v)
            }
        };
        out.push(Check {
            inconclusive: false,
            threshold: None,
            name: class_check_name(command, mark),
            passed,
            measurement: Some(measured),
            units: Some(units.to_string()),
            message: format!(
                "{mark} {}: {what} {} against the {} it needs",
                if passed { "met" } else { "NOT met" },
                show(measured, false),
                show(required, true)
            ),
        });
    }
    out
}

/// Confidence that a figure lies on the side of `threshold` it was measured on: high when
/// the distance is many standard errors (and at least 3 %), lower near the line.
fn side_confidence(value: f64, threshold: f64, rel_stderr: f64) -> f64 {
    if value <= 0.0 || threshold <= 0.0 {
        return 0.95;
    }
    let dist = (value - threshold).abs() / value;
    let noise = rel_stderr.max(0.01);
    if dist >= (3.0 * noise).max(0.03) {
        0.95
    } else if dist >= noise {
        0.7
    } else {
        0.3
    }
}

/// The SD speed class the sequential write figure supports: the highest mark met ("V30",
/// "V10", "V6", "C4", "C2" or "none").
/// `writes`: the write tests were asked for (a missing figure then means they did not
/// finish, not that they need --write).
pub fn speed_class(seq_write: Option<&BenchFigure>, writes: bool) -> Inference {
    let Some(f) = seq_write else {
        return Inference::inconclusive(if writes {
            "the sequential write test did not finish"
        } else {
            "the sequential write test did not run (it needs --write)"
        });
    };
    let bw = f.bw_bytes;
    let value = ["V90", "V60", "V30", "V10", "V6", "C4", "C2"]
        .iter()
        .find(|name| {
            SPEED_CLASSES
                .iter()
                .any(|&(n, mbs)| n == **name && bw >= mbs * MB)
        })
        .copied()
        .unwrap_or("none");
    // The nearest class line decides how sure we are.
    let rel = f.rel_stderr();
    let mut conf = SPEED_CLASSES
        .iter()
        .map(|&(_, mbs)| side_confidence(bw, mbs * MB, rel))
        .fold(1.0, f64::min);
    let mut caveat = String::new();
    if conf < 0.9 {
        let (near, mbs) = SPEED_CLASSES
            .iter()
            .copied()
            .min_by(|a, b| {
                let da = (bw - a.1 * MB).abs();
                let db = (bw - b.1 * MB).abs();
                da.total_cmp(&db)
            })
            .unwrap_or(("C2", 2.0));
        caveat = format!(
            " That is within the measurement noise of the {near} line ({}), so which side it is on is not certain; a longer --runtime narrows the noise.",
            format_decimal_rate(mbs * MB)
        );
    }
    if f.declining() {
        conf = conf.min(0.7);
        caveat += " The rate fell during the test (a write cache running out?), so a longer --runtime may give a lower sustained figure.";
    }
    let passed: Vec<&str> = SPEED_CLASSES
        .iter()
        .filter(|&&(_, mbs)| bw >= mbs * MB)
        .map(|&(n, _)| n)
        .collect();
    Inference::new(
        value,
        conf,
        format!(
            "sequential 1 MiB write at QD8 gave {} (±{:.1} %), which meets {}.{caveat}",
            format_rate(bw),
            rel * 100.0,
            if passed.is_empty() {
                format!(
                    "no SD speed class (C2 needs {})",
                    format_decimal_rate(2.0 * MB)
                )
            } else {
                passed.join(", ")
            }
        ),
    )
}

/// The application performance class ("A2", "A1" or "none") from random 4 KiB read and
/// write IOPS at QD32 and sequential write.
pub fn app_class(
    rand_read: Option<&BenchFigure>,
    rand_write: Option<&BenchFigure>,
    seq_write: Option<&BenchFigure>,
    writes: bool,
) -> Inference {
    let (Some(rr), Some(rw), Some(sw)) = (rand_read, rand_write, seq_write) else {
        return Inference::inconclusive(if writes {
            "A1/A2 need random read, random write and sequential write figures; not every one of those tests finished"
        } else {
            "A1/A2 need random read, random write and sequential write figures; the write tests did not run (they need --write)"
        });
    };
    let checks = app_class_checks(rr.iops, rw.iops, sw.bw_bytes);
    let value = checks
        .iter()
        .find(|c| c.pass)
        .map_or("none", |c| c.class.as_str())
        .to_string();
    let sw_needed = format_decimal_rate(APP_CLASSES[0].3 * MB);
    let mut conf: f64 = 1.0;
    for &(_, r, w, s) in &APP_CLASSES {
        conf = conf
            .min(side_confidence(rr.iops, r, rr.rel_stderr()))
            .min(side_confidence(rw.iops, w, rw.rel_stderr()))
            .min(side_confidence(sw.bw_bytes, s * MB, sw.rel_stderr()));
    }
    Inference::new(
        value,
        conf,
        format!(
            "random 4 KiB at QD32: read {:.0} IOPS, write {:.0} IOPS; sequential write {}; A1 needs 1500 / 500 IOPS and {sw_needed}, A2 4000 / 2000 IOPS and {sw_needed}{}",
            rr.iops,
            rw.iops,
            format_rate(sw.bw_bytes),
            if conf < 0.9 {
                "; a figure lies within its measurement noise of a class line, so the verdict is not certain (a longer --runtime narrows the noise)"
            } else {
                ""
            }
        ),
    )
}

/// A comparison in an `--expect` term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum Op {
    Ge,
    Gt,
    Le,
    Lt,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Le => "<=",
            Op::Lt => "<",
        }
    }

    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Ge => a >= b,
            Op::Gt => a > b,
            Op::Le => a <= b,
            Op::Lt => a < b,
        }
    }
}

/// What a metric measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum Quantity {
    /// Bytes per second.
    Bandwidth,
    Iops,
    /// 99th percentile completion latency, ns.
    P99,
}

/// One `--expect` term: `metric op value`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Expect {
    pub term: String,
    /// Metric base name (`seq_write`).
    pub metric: String,
    pub quantity: Quantity,
    pub op: Op,
    pub value: f64,
}

/// Every metric base name the bench produces.
pub fn metric_names() -> Vec<String> {
    let mut v = Vec::new();
    for l in LINES {
        for d in [Dir::Read, Dir::Write] {
            v.push(l.metric(d));
        }
    }
    v
}

fn parse_count(v: &str) -> Option<f64> {
    let l = v.trim().to_ascii_lowercase();
    let l = l.strip_suffix("iops").unwrap_or(&l).trim();
    let (num, mult) = match l.strip_suffix('k') {
        Some(n) => (n, 1e3),
        None => (l, 1.0),
    };
    let x: f64 = num.trim().parse().ok()?;
    (x.is_finite() && x >= 0.0).then_some(x * mult)
}

/// Parse `--expect 'seq_write>=10MB/s,rand_read_iops>=1500,rand_read_q1_p99<=5ms'`.
/// Bandwidths take B/s, KB/s, MB/s, GB/s (powers of 1000) or KiB/s, MiB/s, GiB/s;
/// IOPS a number (`1.5k` allowed); `_p99` a duration (ns, us, ms, s).
pub fn parse_expect(text: &str) -> Result<Vec<Expect>> {
    let mut out = Vec::new();
    for raw in text.split(',') {
        let term = raw.trim();
        if term.is_empty() {
            continue;
        }
        let bad = |why: &str| {
            Error::usage(format!(
                "--expect term '{term}': {why}; write e.g. seq_write>=10MB/s or rand_read_iops>=1500 (metrics: {}, each also with _iops or _p99)",
                metric_names().join(", ")
            ))
        };
        let (pos, op, oplen) = [(">=", Op::Ge), ("<=", Op::Le), (">", Op::Gt), ("<", Op::Lt)]
            .iter()
            .find_map(|&(s, op)| term.find(s).map(|p| (p, op, s.len())))
            .ok_or_else(|| bad("no comparison (>=, >, <=, <)"))?;
        let name = term[..pos].trim().to_ascii_lowercase();
        let value = term[pos + oplen..].trim();
        let (base, quantity) = if let Some(b) = name.strip_suffix("_p99") {
            (b.to_string(), Quantity::P99)
        } else if let Some(b) = name.strip_suffix("_iops") {
            (b.to_string(), Quantity::Iops)
        } else if let Some(b) = name.strip_suffix("_iops_q1") {
            (format!("{b}_q1"), Quantity::Iops)
        } else {
            (name.clone(), Quantity::Bandwidth)
        };
        if !metric_names().contains(&base) {
            return Err(bad(&format!("unknown metric '{name}'")));
        }
        // A rate or a latency without a unit is a guess at what was meant (30 read as
        // 30 bytes/s passes any card): refused, naming the fix.
        let plain = !value.is_empty() && value.trim().parse::<f64>().is_ok();
        if plain && quantity != Quantity::Iops {
            let example = match quantity {
                Quantity::Bandwidth => format!("{name}>={value}MB/s (or MiB/s, KB/s, GB/s)"),
                _ => format!("{name}<={value}ms (or us, s)"),
            };
            return Err(bad(&format!("'{value}' has no unit; write e.g. {example}")));
        }
        let v = match quantity {
            Quantity::Bandwidth => crate::vocab::units::parse_rate(value)
                .ok()
                .filter(|r| *r >= 0.0),
            Quantity::Iops => parse_count(value),
            Quantity::P99 => crate::vocab::units::parse_duration_ns(value)
                .ok()
                .map(|n| n as f64),
        }
        .ok_or_else(|| bad(&format!("'{value}' is not a value for {name}")))?;
        out.push(Expect {
            term: term.to_string(),
            metric: base,
            quantity,
            op,
            value: v,
        });
    }
    if out.is_empty() {
        return Err(Error::usage(
            "--expect is empty; write e.g. seq_write>=10MB/s",
        ));
    }
    Ok(out)
}

/// The outcome of one `--expect` term.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ExpectResult {
    pub term: String,
    pub measured: Option<f64>,
    pub pass: bool,
    pub message: String,
}

/// Check every term against the figures; a term whose test did not run fails, saying so.
pub fn evaluate(expects: &[Expect], figures: &[BenchFigure]) -> Vec<ExpectResult> {
    expects
        .iter()
        .map(|e| {
            let f = figures.iter().find(|f| f.metric == e.metric);
            let measured = f.and_then(|f| match e.quantity {
                Quantity::Bandwidth => Some(f.bw_bytes),
                Quantity::Iops => Some(f.iops),
                Quantity::P99 => f.p99_ns.map(|n| n as f64),
            });
            match measured {
                None => ExpectResult {
                    term: e.term.clone(),
                    measured: None,
                    pass: false,
                    message: format!("{}: the {} test did not run", e.term, e.metric),
                },
                Some(m) => {
                    let pass = e.op.holds(m, e.value);
                    let decimal = e
                        .term
                        .rsplit(['>', '<', '='])
                        .next()
                        .is_some_and(is_decimal_rate);
                    let shown = |v: f64, threshold: bool| match e.quantity {
                        // A threshold written `10MB/s` is shown with its decimal figure
                        // beside the MiB/s one.
                        Quantity::Bandwidth if decimal && threshold => format_decimal_rate(v),
                        Quantity::Bandwidth => format_rate(v),
                        Quantity::Iops => format!("{v:.0} IOPS"),
                        Quantity::P99 => crate::vocab::units::format_ns(v),
                    };
                    ExpectResult {
                        term: e.term.clone(),
                        measured: Some(m),
                        pass,
                        message: format!(
                            "{}: measured {} {} {} {}",
                            e.term,
                            shown(m, false),
                            if pass { "passes" } else { "fails" },
                            e.op.symbol(),
                            shown(e.value, true)
                        ),
                    }
                }
            }
        })
        .collect()
}

/// The `--expect` results as checks (`bench.expect.seq_write`, `bench.expect.rand_read_iops`,
/// `bench.expect.rand_read_q1_p99`; a second term on the same figure gets `_2`), each
/// with its figure in base units.
pub fn expect_checks(expects: &[Expect], results: &[ExpectResult]) -> Vec<Check> {
    let mut out: Vec<Check> = Vec::new();
    for (e, r) in expects.iter().zip(results) {
        let (suffix, units, scale) = match e.quantity {
            Quantity::Bandwidth => ("", "bytes/s", 1.0),
            Quantity::Iops => ("_iops", "IOPS", 1.0),
            Quantity::P99 => ("_p99", "seconds", 1e-9),
        };
        let base = format!("bench.expect.{}{suffix}", e.metric);
        let mut name = base.clone();
        let mut n = 1;
        while out.iter().any(|c| c.name == name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        out.push(Check {
            inconclusive: false,
            threshold: Some(e.value * scale),
            name,
            passed: r.pass,
            measurement: r.measured.map(|m| m * scale),
            units: Some(units.to_string()),
            message: r.message.clone(),
        });
    }
    out
}

/// The figures worth watching: per test (`job` label, e.g. `seq_write`) bandwidth, IOPS,
/// mean and 99th percentile latency; per class (`class` label) whether it was met and by what margin.
pub fn metrics(figures: &[BenchFigure], classes: &[ClassCheck]) -> Vec<Metric> {
    let mut out = Vec::new();
    for f in figures {
        let job = [("job", f.metric.as_str())];
        out.push(Metric::new(
            "bench_bandwidth_bytes_per_second",
            "Bytes per second of each bench test",
            f.bw_bytes,
            &job,
        ));
        out.push(Metric::new(
            "bench_iops",
            "I/O operations per second of each bench test",
            f.iops,
            &job,
        ));
        out.push(Metric::new(
            "bench_latency_mean_seconds",
            "Mean completion latency of each bench test",
            f.mean_ns / 1e9,
            &job,
        ));
        if let Some(p) = f.p99_ns {
            out.push(Metric::new(
                "bench_latency_p99_seconds",
                "99th percentile completion latency of each bench test",
                p as f64 / 1e9,
                &job,
            ));
        }
    }
    for c in classes {
        let class = [("class", c.class.as_str())];
        out.push(Metric::new(
            "bench_class_met",
            "1 when the measured figures meet the SD speed or application class, else 0",
            if c.pass { 1.0 } else { 0.0 },
            &class,
        ));
        out.push(Metric::new(
            "bench_class_margin_ratio",
            "Measured over required minus 1 for the class's tightest requirement",
            c.margin,
            &class,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Status;

    fn fig(metric: &str, bw: f64, iops: f64, per_s: Vec<f64>) -> BenchFigure {
        BenchFigure {
            metric: metric.into(),
            label: String::new(),
            dir: "write".into(),
            bw_bytes: bw,
            iops,
            p99_ns: Some(2_000_000),
            mean_ns: 1e6,
            stddev_ns: 1e6,
            ios: 5,
            per_second_spread: relative_spread(&per_s),
            per_second_bw: per_s,
            runq_wait_share: None,
        }
    }

    #[test]
    fn a_figure_whose_thread_waited_for_a_cpu_is_flagged_though_it_was_steady() {
        let steady = vec![1e6, 1e6, 1e6, 1e6];
        let mut f = fig("rand_read_q1", 1e6, 250.0, steady);
        f.runq_wait_share = Some(0.01);
        assert!(noise_warnings(&[f.clone()], &[]).is_empty(), "1 % is quiet");
        f.runq_wait_share = Some(0.3);
        let w = noise_warnings(&[f], &[]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].kind(), "noisy_figure");
        assert!(
            w[0].to_string().contains("waited for a CPU 30 %"),
            "{}",
            w[0].to_string()
        );
    }

    #[test]
    fn a_busy_machine_is_named_and_a_quiet_one_is_not() {
        let load = |load1: f64, total_ticks: u64, steal_ticks: u64| CpuLoad {
            load1,
            total_ticks,
            steal_ticks,
            cpus: 2,
            ..CpuLoad::default()
        };
        assert!(busy_warning(Some(load(0.5, 100, 0)), Some(load(0.8, 200, 1))).is_none());
        let w = busy_warning(Some(load(0.5, 100, 0)), Some(load(4.0, 200, 0))).unwrap();
        assert_eq!(w.kind(), "noisy_environment");
        assert!(
            w.to_string().contains("load average 4.0 on 2 CPUs"),
            "{}",
            w.to_string()
        );
        let w = busy_warning(Some(load(0.5, 100, 0)), Some(load(0.5, 200, 20))).unwrap();
        assert!(
            w.to_string().contains("20 % of CPU time stolen"),
            "{}",
            w.to_string()
        );
        assert!(busy_warning(None, None).is_none());
    }

    #[test]
    fn spread_is_the_half_range_of_the_middle_80_percent_over_the_median() {
        assert_eq!(relative_spread(&[1.0, 2.0]), None);
        assert_eq!(relative_spread(&[5.0; 10]), Some(0.0));
        let s = relative_spread(&[90.0, 95.0, 100.0, 105.0, 110.0]).unwrap();
        assert!((s - 0.10).abs() < 1e-12, "{s}");
    }

    #[test]
    fn a_steady_figure_gives_no_warning_and_a_noisy_one_near_a_line_two() {
        // seq_write at 10.5 MB/s: C10 passes by +5 %.
        let steady = fig("seq_write", 10.5e6, 10.0, vec![10.5e6; 10]);
        let classes = speed_class_checks(steady.bw_bytes);
        assert!(noise_warnings(&[steady], &classes).is_empty());
        // The same figure from seconds between 8 and 13 MB/s: the figure is noise, and
        // the C10/U1/V10 verdicts (+5 %) are inside it.
        let per_s: Vec<f64> = (0..10).map(|i| 8e6 + 5e6 * i as f64 / 9.0).collect();
        let noisy = fig("seq_write", 10.5e6, 10.0, per_s);
        let w = noise_warnings(&[noisy], &classes);
        assert_eq!(w[0].kind(), "noisy_figure", "{w:?}");
        assert!(w[0].to_string().contains("±"), "{w:?}");
        let within: Vec<_> = w
            .iter()
            .filter(|w| w.kind() == "verdict_within_noise")
            .collect();
        assert!(
            within
                .iter()
                .any(|w| w.to_string().starts_with("C10 passes by +5.0 %")),
            "{w:?}"
        );
        // Classes far from the figure (V90 fails by -88 %) are not flagged.
        assert!(
            !within.iter().any(|w| w.to_string().starts_with("V90")),
            "{w:?}"
        );
    }

    /// The "either way" sentence appears only when the requirement lies inside the range
    /// the figure varied over, for margins across ±1000 % and spreads up to ±200 %; and
    /// the range the sentence states holds 0 whenever it appears.
    #[test]
    fn either_way_only_when_the_requirement_is_inside_the_figure_range() {
        let required = 2000.0;
        for m in -1000..=1000 {
            // Margins of -100 % or less would be a negative figure.
            let margin = (m as f64 / 100.0).max(-0.999);
            let measured = required * (1.0 + margin);
            for s in [0.0, 0.01, 0.05, 0.1, 0.3, 0.5, 1.0, 1.5, 2.0] {
                let per_s = measured * (1.0 - s)..=measured * (1.0 + s);
                let straddles = *per_s.start() < required && *per_s.end() > required;
                assert_eq!(
                    margin_within_spread(margin, s),
                    straddles,
                    "margin {margin}, spread {s}"
                );
                if straddles {
                    let w = Warning::VerdictWithinNoise {
                        class: "A2".into(),
                        pass: margin >= 0.0,
                        margin,
                        spread: s,
                    }
                    .to_string();
                    assert!(w.contains("either way"), "{w}");
                }
            }
        }
        // The case a user saw: 3 IOPS against 2000, ±100 % per second (0–6 IOPS).
        assert!(!margin_within_spread(3.0 / 2000.0 - 1.0, 1.0));
        let per_s: Vec<f64> = [0.0, 1.5, 3.0, 4.5, 6.0]
            .iter()
            .map(|x| x * 4096.0)
            .collect();
        let figures = [fig("rand_read", 3.0 * 4096.0, 3.0, per_s)];
        assert!(figures[0].per_second_spread.unwrap() >= 0.5, "{figures:?}");
        let classes = app_class_checks(3.0, 1e5, 100e6);
        assert!(classes.iter().all(|c| !c.pass), "{classes:?}");
        assert!(
            !noise_warnings(&figures, &classes)
                .iter()
                .any(|w| w.kind() == "verdict_within_noise"),
            "{classes:?}"
        );
    }

    /// The CPU-wait sentence is never above 100 %: its share is of the window the wait
    /// was counted over, whatever the counting time (a preserve-mode save can make the
    /// window far longer than the counting time).
    #[test]
    fn the_cpu_wait_share_is_never_above_100_percent() {
        for window in [0u64, 1, 1_000, 1_000_000_000] {
            for wait in [0u64, 1, 999, 1_000, 2_600_000_000, u64::MAX] {
                let Some(share) = wait_share(wait, window) else {
                    assert_eq!(window, 0);
                    continue;
                };
                assert!((0.0..=1.0).contains(&share), "{wait} of {window}: {share}");
                let text = Warning::NoisyFigure {
                    label: "RND4K".into(),
                    dir: "write".into(),
                    noise: FigureNoise::RunqWait { share },
                }
                .to_string();
                let pct: f64 = text
                    .split("waited for a CPU ")
                    .nth(1)
                    .and_then(|t| t.split(' ').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{text}"));
                assert!(pct <= 100.0, "{text}");
            }
        }
    }

    #[test]
    fn metric_names_follow_the_lines() {
        assert_eq!(LINES[0].metric(Dir::Write), "seq_write");
        assert_eq!(LINES[3].metric(Dir::Read), "rand_read_q1");
    }

    #[test]
    fn speed_class_is_the_highest_mark_met() {
        let steady = |bw: f64| fig("seq_write", bw, bw / 1048576.0, vec![bw; 10]);
        let f = steady(45e6);
        let i = speed_class(Some(&f), true);
        assert_eq!(i.value, Some("V30".into()));
        assert_eq!(i.status, Status::Confident);
        assert!(i.evidence.contains("42.9 MiB/s") && i.evidence.contains("U3"));
        assert_eq!(
            speed_class(Some(&steady(12e6)), true).value,
            Some("V10".into())
        );
        assert_eq!(
            speed_class(Some(&steady(1e6)), true).value,
            Some("none".into())
        );
        assert_eq!(speed_class(None, false).status, Status::Inconclusive);
        // A write run that did not finish is not told it needs --write.
        assert!(!speed_class(None, true).evidence.contains("--write"));
        assert!(!app_class(None, None, None, true)
            .evidence
            .contains("--write"));
    }

    #[test]
    fn near_a_class_line_with_noise_is_not_confident() {
        // 10.1 MB/s with ±20 % per-second noise: C10 or not cannot be told apart.
        let per_s: Vec<f64> = (0..6)
            .map(|i| if i % 2 == 0 { 12.1e6 } else { 8.1e6 })
            .collect();
        let f = fig("seq_write", 10.1e6, 10.0, per_s);
        let i = speed_class(Some(&f), true);
        assert_ne!(i.status, Status::Confident, "{i:?}");
    }

    #[test]
    fn a_falling_rate_is_at_most_tentative() {
        let per_s = vec![60e6, 60e6, 60e6, 20e6, 20e6, 20e6];
        let f = fig("seq_write", 40e6, 40.0, per_s);
        let i = speed_class(Some(&f), true);
        assert_eq!(i.status, Status::Tentative);
        assert!(i.evidence.contains("fell"));
        // Near a line, the evidence says which line and why the verdict is withheld.
        let near = fig("seq_write", 61e6, 61.0, vec![50e6, 72e6, 61e6, 55e6, 67e6]);
        let i = speed_class(Some(&near), true);
        assert_ne!(i.status, Status::Confident);
        assert!(i.evidence.contains("V60 line"), "{}", i.evidence);
    }

    #[test]
    fn short_runs_take_their_noise_from_the_latencies() {
        let mut f = fig("seq_write", 12.7e6, 12.0, vec![12.7e6]);
        assert_eq!(f.rel_stderr(), 0.1, "too few I/Os to say");
        f.ios = 100;
        f.stddev_ns = 0.05e6; // 5 % spread over 100 I/Os: 0.5 % → floor of 1 %
        assert!((f.rel_stderr() - 0.01).abs() < 1e-12);
        assert_eq!(speed_class(Some(&f), true).status, Status::Confident);
    }

    #[test]
    fn app_class_needs_all_three_figures() {
        let rr = fig("rand_read", 0.0, 5000.0, vec![]);
        let rw = fig("rand_write", 0.0, 800.0, vec![]);
        let sw = fig("seq_write", 20e6, 20.0, vec![]);
        let i = app_class(Some(&rr), Some(&rw), Some(&sw), true);
        assert_eq!(i.value, Some("A1".into()));
        let checks = app_class_checks(5000.0, 800.0, 20e6);
        assert!(!checks[0].pass && checks[1].pass);
        assert!((checks[1].margin - 0.6).abs() < 1e-9, "{checks:?}");
        assert_eq!(
            app_class(Some(&rr), None, Some(&sw), true).status,
            Status::Inconclusive
        );
    }

    #[test]
    fn expect_parses_units_and_names_bad_terms() {
        let e =
            parse_expect("seq_write>=10MB/s, rand_read_iops>=1.5k,rand_read_q1_p99<=5ms").unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].value, 10e6);
        assert_eq!(e[1].quantity, Quantity::Iops);
        assert_eq!(e[1].value, 1500.0);
        assert_eq!(e[2].value, 5e6);
        let err = parse_expect("seq_write>=10MB/s,warp_speed>=9").unwrap_err();
        assert!(err.to_string().contains("warp_speed"), "{err}");
        assert_eq!(err.exit_code(), 2);
        let err = parse_expect("seq_write>=fast").unwrap_err();
        assert!(err.to_string().contains("'fast'"));
        assert!(parse_expect("seq_write 10").is_err());
    }

    #[test]
    fn expect_evaluates_against_figures() {
        let figs = vec![fig("seq_write", 12e6, 12.0, vec![])];
        let e = parse_expect("seq_write>=10MB/s,seq_write>=20MB/s,rand_read_iops>=1").unwrap();
        let r = evaluate(&e, &figs);
        assert!(r[0].pass);
        assert!(!r[1].pass);
        assert!(!r[2].pass && r[2].message.contains("did not run"));
    }

    #[test]
    fn label_marks_parse_in_any_case_once_and_bad_terms_name_themselves() {
        assert_eq!(
            parse_label("u3, V30 a2 U3").unwrap(),
            vec!["U3", "V30", "A2"]
        );
        let e = parse_label("U3 V31").unwrap_err().to_string();
        assert!(e.contains("--label") && e.contains("'V31'"), "{e}");
        assert!(parse_label(" ,").unwrap_err().to_string().contains("empty"));
    }

    /// Issue 47.2: a mark the host path keeps from being measured is "not measurable on
    /// this host", undecided and not failed; a card held back by itself still fails.
    #[test]
    fn a_mark_the_host_path_caps_is_not_measurable_and_a_slow_card_still_fails() {
        use crate::analysis::hostpath::{limits, mmc_ceiling};
        use crate::vocab::hostpath::Timing;
        let marks = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // SD high-speed at 50 MHz: 22.4 MB/s measured; an SD host without cmdq_en.
        let hs = mmc_ceiling(
            Some(Timing::SdHighSpeed),
            50_000_000,
            Some(50_000_000),
            Some(4),
        );
        let host = limits(hs.as_ref(), None, true, None);
        assert!(host
            .no_queue
            .as_deref()
            .unwrap()
            .contains("SD command queueing"));
        let at_ceiling = vec![
            fig("seq_write", 21.6 * 1_048_576.0, 21.6, vec![]),
            fig("rand_read", 9e6, 2300.0, vec![]),
            fig("rand_write", 4e6, 900.0, vec![]),
        ];
        let c = claim_checks(
            "auto",
            &marks(&["V30", "A2", "A1"]),
            &at_ceiling,
            Some(&host),
        );
        for check in &c[..2] {
            assert!(!check.passed && check.inconclusive, "{check:?}");
            assert!(
                check.message.contains("not measurable on this host"),
                "{check:?}"
            );
        }
        assert!(
            c[0].message
                .contains("22.4 MB/s, measured through SD high-speed"),
            "{:?}",
            c[0]
        );
        assert!(c[1].message.contains("queue commands"), "{:?}", c[1]);
        // A1 needs no queue and its figures are met: a plain pass.
        assert!(c[2].passed && !c[2].inconclusive, "{:?}", c[2]);
        // The same figures without a host path: failed, as before.
        let bare = claim_checks("auto", &marks(&["V30", "A2"]), &at_ceiling, None);
        assert!(
            bare.iter().all(|c| !c.passed && !c.inconclusive),
            "{bare:?}"
        );
        // A card far under the ceiling, or under A1's figures, is held back by itself.
        let slow = vec![
            fig("seq_write", 12.0 * 1_048_576.0, 12.0, vec![]),
            fig("rand_read", 9e6, 2300.0, vec![]),
            fig("rand_write", 20e3, 5.0, vec![]),
        ];
        let c = claim_checks("auto", &marks(&["V30", "A2"]), &slow, Some(&host));
        assert!(c.iter().all(|c| !c.passed && !c.inconclusive), "{c:?}");
        assert!(c[0].message.contains("NOT met"), "{:?}", c[0]);
        // A host that queues: A2's random figures are the card's.
        let queued = limits(hs.as_ref(), Some(true), true, None);
        let c = claim_checks("auto", &marks(&["A2"]), &at_ceiling, Some(&queued));
        assert!(!c[0].passed && !c[0].inconclusive, "{c:?}");
        // USB 2.0 bulk-only: half the 60 MB/s theory counts as the ceiling, no queue.
        let usb = crate::analysis::hostpath::usb_ceiling(480.0, Some("bulk-only"));
        let usb = limits(usb.as_ref(), None, true, Some("bulk-only"));
        let through_usb = vec![
            fig("seq_write", 33.0 * 1_048_576.0, 33.0, vec![]),
            fig("rand_read", 6e6, 1600.0, vec![]),
            fig("rand_write", 6e6, 1600.0, vec![]),
        ];
        let c = claim_checks(
            "auto",
            &marks(&["V30", "V60", "A2"]),
            &through_usb,
            Some(&usb),
        );
        assert!(c[0].passed, "{c:?}");
        assert!(
            c[1].inconclusive && c[1].message.contains("in theory"),
            "{c:?}"
        );
        assert!(
            c[2].inconclusive && c[2].message.contains("bulk-only"),
            "{c:?}"
        );
    }

    #[test]
    fn claimed_marks_are_judged_by_their_tightest_figure() {
        let figures = vec![
            fig("seq_write", 35e6, 35.0, vec![]),
            fig("rand_read", 20e6, 5000.0, vec![]),
            fig("rand_write", 2e6, 600.0, vec![]),
        ];
        let claimed: Vec<String> = ["V30", "A2", "A1", "V60"].map(String::from).to_vec();
        let c = claim_checks("auto", &claimed, &figures, None);
        let get = |n: &str| c.iter().find(|c| c.name == n).unwrap();
        assert!(get("auto.class_V30").passed);
        assert_eq!(get("auto.class_V30").measurement, Some(35e6));
        // A2 fails on random write (600 of 2000 IOPS), the figure with the least margin.
        let a2 = get("auto.class_A2");
        assert!(!a2.passed);
        assert_eq!(
            (a2.measurement, a2.units.as_deref()),
            (Some(600.0), Some("IOPS"))
        );
        assert!(
            a2.message.contains("random 4 KiB write 600 IOPS"),
            "{}",
            a2.message
        );
        assert!(get("auto.class_A1").passed);
        assert!(!get("auto.class_V60").passed);
        assert_eq!(
            met_marks(&class_checks(&figures)),
            vec!["C10", "U3", "V30", "A1"]
        );
        // Without the write figures nothing is judged.
        assert!(claim_checks("auto", &claimed, &figures[1..2], None).is_empty());
        assert!(class_checks(&figures[1..2]).is_empty());
    }
}
