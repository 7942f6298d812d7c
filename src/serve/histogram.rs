//! The server's overhead percentiles, kept in the workload engine's log-linear histogram
//! (one histogram implementation for the whole tool: fixed memory whatever the count).

use serde::{Deserialize, Serialize};

pub use crate::workload::histogram::LatencyHistogram;

/// The percentiles a report shows, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Percentiles {
    pub count: u64,
    pub mean_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

/// Summarise a histogram; an empty one gives zeros.
pub fn percentiles(h: &LatencyHistogram) -> Percentiles {
    let p = |q: f64| h.percentile(q).unwrap_or(0);
    Percentiles {
        count: h.count(),
        mean_ns: if h.count() == 0 {
            0
        } else {
            h.mean().round() as u64
        },
        p50_ns: p(50.0),
        p90_ns: p(90.0),
        p99_ns: p(99.0),
        p999_ns: p(99.9),
        max_ns: if h.count() == 0 { 0 } else { h.max() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = LatencyHistogram::new();
        assert_eq!(percentiles(&h).p50_ns, 0, "empty gives 0, never panics");
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let p = percentiles(&h);
        assert_eq!(p.count, 1000);
        assert_eq!(p.max_ns, 1_000_000);
        assert_eq!(p.mean_ns, 500_500);
        for (got, want) in [
            (p.p50_ns, 500_000u64),
            (p.p90_ns, 900_000),
            (p.p99_ns, 990_000),
        ] {
            assert!(got.abs_diff(want) <= want / 16, "{got} vs {want}");
        }
    }
}
