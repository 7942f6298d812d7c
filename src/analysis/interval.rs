//! Access time and throughput from read time versus request size (least squares, pure).

use crate::vocab::units::{format_bytes, format_ns, format_rate};
use crate::vocab::Inference;
use serde::{Deserialize, Serialize};

/// Read times of one request size (ns): the minimum, average and maximum over positions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IntervalPoint {
    pub bytes: u64,
    pub min_ns: f64,
    pub avg_ns: f64,
    pub max_ns: f64,
}

/// The fitted line `time = access + bytes / throughput` and its two inferences.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IntervalInference {
    pub access_time_ns: Inference,
    pub throughput_bytes_per_s: Inference,
    /// Smallest request size used in the fit.
    pub fit_from_bytes: u64,
    /// Intercept (ns) and slope (ns per byte) of the fit, when there was one.
    pub line: Option<(f64, f64)>,
}

/// Sizes below this are left out of the fit: on cards, tiny reads cost a fixed command
/// overhead that does not fall on the line (flashbench also skips its three smallest).
pub const FIT_FROM_BYTES: u64 = 4096;

/// Least-squares line through (x, y): (intercept, slope, se of intercept, se of slope).
pub fn least_squares(xy: &[(f64, f64)]) -> Option<(f64, f64, f64, f64)> {
    let n = xy.len() as f64;
    if xy.len() < 3 {
        return None;
    }
    let mx = xy.iter().map(|p| p.0).sum::<f64>() / n;
    let my = xy.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = xy.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let sse: f64 = xy
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    let s2 = sse / (n - 2.0);
    let se_slope = (s2 / sxx).sqrt();
    let se_int = (s2 * (1.0 / n + mx * mx / sxx)).sqrt();
    Some((intercept, slope, se_int, se_slope))
}

/// The (request size, minimum read time) pairs the line is fitted to.
fn fit_xy(points: &[IntervalPoint]) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter(|p| p.bytes >= FIT_FROM_BYTES && p.min_ns.is_finite())
        .map(|p| (p.bytes as f64, p.min_ns))
        .collect()
}

/// Halves of a run whose throughputs differ by more than this share (and by more than two
/// standard errors) were not measured on a steady device.
pub const UNSTEADY_SHARE: f64 = 0.10;

/// Whether the device kept its speed through the run: the line fitted to the first half
/// of the rounds (`first`) against the one fitted to the second half (`second`). A
/// throughput's standard error comes from one run's rounds; on a device whose speed
/// drifts (a loop over a disk file gave 879 to 3,424 MB/s in six runs, five "confident"
/// at ± 1–5 %, issue 43) it says nothing of the next run. `(first, second)` throughputs in
/// bytes/s when their slopes differ by more than two standard errors and more than
/// `UNSTEADY_SHARE`; None when they agree or a half gives no line.
pub fn unsteady(first: &[IntervalPoint], second: &[IntervalPoint]) -> Option<(f64, f64)> {
    let slope = |pts: &[IntervalPoint]| {
        least_squares(&fit_xy(pts)).and_then(|(_, b, _, se)| (b > 0.0).then_some((b, se)))
    };
    let (b1, se1) = slope(first)?;
    let (b2, se2) = slope(second)?;
    let diff = (b1 - b2).abs();
    (diff > 2.0 * (se1 * se1 + se2 * se2).sqrt() && diff > UNSTEADY_SHARE * b1.min(b2))
        .then(|| (1e9 / b1, 1e9 / b2))
}

/// A run whose halves disagree (`unsteady`): its figures are at most tentative and say
/// that their ± covers this run only.
pub fn steadiness_caps(inf: &mut IntervalInference, halves: Option<(f64, f64)>) {
    let Some((a, b)) = halves else {
        return;
    };
    let why = format!(
        "covers this run only; the device was not steady (first half {}, second half {})",
        format_rate(a),
        format_rate(b)
    );
    this_run_only(inf, &why);
}

/// A run shorter than this on a real device says nothing of the next: a loop over a disk
/// file gave 1.71, 1.00, 1.06, 1.52 and 1.18 GB/s in five runs of milliseconds, each at
/// ± 1–2 % (issue 43.5), and a run's halves cannot see a change slower than the run.
pub const MIN_STEADY_RUN_NS: u64 = 1_000_000_000;

/// A run on a real clock shorter than `MIN_STEADY_RUN_NS` (`run_ns`, wall time of the
/// reads): its figures are at most tentative and say their ± covers this run only. The
/// simulator's virtual clock has no run-to-run drift; the caller leaves it out.
pub fn short_run_caps(inf: &mut IntervalInference, run_ns: u64) {
    if run_ns >= MIN_STEADY_RUN_NS {
        return;
    }
    let why = format!(
        "covers this run only ({}); run-to-run spread not measured",
        format_ns(run_ns as f64)
    );
    this_run_only(inf, &why);
}

/// Cap the figures at tentative, adding `why` to their evidence.
fn this_run_only(inf: &mut IntervalInference, why: &str) {
    for i in [&mut inf.access_time_ns, &mut inf.throughput_bytes_per_s] {
        if let Some(v) = i.value.clone() {
            *i = Inference::new(v, i.confidence.min(0.75), format!("{}; {why}", i.evidence));
        }
    }
}

/// Fit the minimum read time against request size (sizes from `FIT_FROM_BYTES` up).
pub fn infer(points: &[IntervalPoint]) -> IntervalInference {
    let xy = fit_xy(points);
    let none = |why: String| IntervalInference {
        access_time_ns: Inference::inconclusive(why.clone()),
        throughput_bytes_per_s: Inference::inconclusive(why),
        fit_from_bytes: FIT_FROM_BYTES,
        line: None,
    };
    let Some((a, b, se_a, se_b)) = least_squares(&xy) else {
        return none(format!(
            "need read times of at least 3 request sizes from {} up; got {}",
            format_bytes(FIT_FROM_BYTES),
            xy.len()
        ));
    };
    if b <= 0.0 {
        return none(format!(
            "read time does not grow with request size (slope {b:.3e} ns/byte): a cache may be answering"
        ));
    }
    let bps = 1e9 / b;
    let rel_b = se_b / b;
    let conf_b = if rel_b < 0.05 {
        0.95
    } else if rel_b < 0.15 {
        0.9 - (rel_b - 0.05) * 3.0
    } else {
        0.4
    };
    let sizes = format!(
        "{} request sizes from {} to {}",
        xy.len(),
        format_bytes(xy[0].0 as u64),
        format_bytes(xy[xy.len() - 1].0 as u64)
    );
    let throughput = Inference::new(
        bps.round() as u64,
        conf_b,
        format!(
            "least-squares line through the minimum read times of {sizes}: {} per byte (± {:.0}%)",
            format_ns(b),
            rel_b * 100.0
        ),
    );
    let conf_a = if a <= 0.0 {
        0.0
    } else if se_a < 0.25 * a {
        0.9_f64.max(conf_b.min(0.95))
    } else if se_a < a {
        0.6
    } else {
        0.3
    };
    let access = if a <= 0.0 {
        Inference::inconclusive(format!(
            "the line through {sizes} meets zero size at {}: the access time is too small to separate from the transfer time",
            format_ns(a)
        ))
    } else {
        Inference::new(
            a.round() as u64,
            conf_a,
            format!(
                "intercept of the least-squares line through {sizes}: {} ± {} at zero size, at {}",
                format_ns(a),
                format_ns(se_a),
                format_rate(bps)
            ),
        )
    };
    IntervalInference {
        access_time_ns: access,
        throughput_bytes_per_s: throughput,
        fit_from_bytes: FIT_FROM_BYTES,
        line: Some((a, b)),
    }
}

/// Put the interval inferences into a document's map (`interval`, `analyze`).
pub fn insert_inferences(
    map: &mut std::collections::BTreeMap<String, Inference>,
    inf: &IntervalInference,
) {
    map.insert("access_time_ns".into(), inf.access_time_ns.clone());
    map.insert(
        "throughput_bytes_per_s".into(),
        inf.throughput_bytes_per_s.clone(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(access: f64, bps: f64, noise: f64) -> Vec<IntervalPoint> {
        (0..13)
            .map(|i| {
                let bytes = 512u64 << i;
                let t = access + bytes as f64 * 1e9 / bps;
                let wobble = if i % 2 == 0 { 1.0 + noise } else { 1.0 - noise };
                IntervalPoint {
                    bytes,
                    min_ns: t * wobble,
                    avg_ns: t * wobble,
                    max_ns: t * wobble,
                }
            })
            .collect()
    }

    /// Issue 43.5: the halves of a run at 40 and 30 MB/s are not one device's speed;
    /// halves that differ by their noise alone are.
    #[test]
    fn halves_at_different_speeds_are_not_steady() {
        let (a, b) = unsteady(&line(60_000.0, 40e6, 0.01), &line(60_000.0, 30e6, 0.01))
            .expect("40 against 30 MB/s is not steady");
        assert!((a - 40e6).abs() < 2e6 && (b - 30e6).abs() < 2e6, "{a} {b}");
        assert_eq!(
            unsteady(&line(60_000.0, 40e6, 0.01), &line(60_000.0, 41e6, 0.01)),
            None,
            "2.5 % apart is steady"
        );
        assert_eq!(
            unsteady(&line(60_000.0, 40e6, 0.3), &line(60_000.0, 34e6, 0.3)),
            None,
            "within two standard errors of very noisy halves"
        );
        let mut inf = infer(&line(60_000.0, 40e6, 0.01));
        assert_eq!(inf.throughput_bytes_per_s.status_word(), "confident");
        steadiness_caps(&mut inf, Some((40e6, 30e6)));
        let t = &inf.throughput_bytes_per_s;
        assert_eq!(t.status_word(), "tentative");
        assert!(
            t.evidence
                .contains("covers this run only; the device was not steady (first half"),
            "{}",
            t.evidence
        );
    }

    /// Issue 43.5: a run of milliseconds on a real device is no measure of the next run:
    /// at most tentative, saying so; a run of a second or more keeps its confidence.
    #[test]
    fn a_short_run_covers_this_run_only() {
        let mut inf = infer(&line(60_000.0, 40e6, 0.01));
        assert_eq!(inf.throughput_bytes_per_s.status_word(), "confident");
        let long = inf.clone();
        assert!(long.throughput_bytes_per_s.value.is_some());
        short_run_caps(&mut inf, 200_000_000);
        let named = [&inf.throughput_bytes_per_s, &inf.access_time_ns];
        for i in named.into_iter().filter(|i| i.value.is_some()) {
            assert_eq!(i.status_word(), "tentative");
            assert!(
                i.evidence
                    .contains("covers this run only (200 ms); run-to-run spread not measured"),
                "{}",
                i.evidence
            );
        }
        let mut kept = long.clone();
        short_run_caps(&mut kept, MIN_STEADY_RUN_NS);
        assert_eq!(kept, long);
    }

    #[test]
    fn a_clean_line_gives_access_time_and_throughput() {
        let r = infer(&line(60_000.0, 40e6, 0.0));
        let a = r.access_time_ns.as_u64().unwrap() as f64;
        let t = r.throughput_bytes_per_s.as_u64().unwrap() as f64;
        assert!((a - 60_000.0).abs() < 10.0, "{a}");
        assert!((t - 40e6).abs() < 1e3, "{t}");
        assert_eq!(r.throughput_bytes_per_s.status_word(), "confident");
    }

    #[test]
    fn a_flat_line_is_inconclusive() {
        let pts: Vec<IntervalPoint> = (0..10)
            .map(|i| IntervalPoint {
                bytes: 512 << i,
                min_ns: 1000.0,
                avg_ns: 1000.0,
                max_ns: 1000.0,
            })
            .collect();
        let r = infer(&pts);
        assert!(r.throughput_bytes_per_s.value.is_none());
        assert!(r.access_time_ns.evidence.contains("cache"));
    }

    #[test]
    fn too_few_sizes_is_inconclusive() {
        let r = infer(&line(60_000.0, 40e6, 0.0)[..4]);
        assert!(r.access_time_ns.value.is_none());
    }
}
