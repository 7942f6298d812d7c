//! Access time and throughput from read time versus request size (least squares, pure).

use crate::vocab::units::{format_bytes, format_ns, format_rate};
use crate::vocab::Inference;
use serde::{Deserialize, Serialize};

/// Read times of one request size (ns): the minimum, average and maximum over positions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalPoint {
    pub bytes: u64,
    pub min_ns: f64,
    pub avg_ns: f64,
    pub max_ns: f64,
}

/// The fitted line `time = access + bytes / throughput` and its two inferences.
#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// Fit the minimum read time against request size (sizes from `FIT_FROM_BYTES` up).
pub fn infer(points: &[IntervalPoint]) -> IntervalInference {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.bytes >= FIT_FROM_BYTES && p.min_ns.is_finite())
        .map(|p| (p.bytes as f64, p.min_ns))
        .collect();
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
