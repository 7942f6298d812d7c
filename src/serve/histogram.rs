//! A log-linear latency histogram (fio's habit): percentiles in fixed memory, whatever
//! the number of requests, to within 1/16 of the value.

use serde::Serialize;

/// Sub-buckets per power of two: values are kept to within 1/`SUB` of themselves.
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
const GROUPS: usize = 64 - SUB_BITS as usize + 1;

/// Counts of nanosecond values in log-linear buckets.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    total: u64,
    max: u64,
    sum: u128,
}

/// The percentiles a report shows, in nanoseconds (upper bounds of their buckets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let group = 63 - v.leading_zeros(); // >= SUB_BITS
    let sub = (v >> (group - SUB_BITS)) & (SUB - 1);
    ((group - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// The largest value that falls in bucket `i`.
fn bucket_upper(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let group = (i / SUB) as u32 + SUB_BITS - 1;
    let sub = i % SUB;
    let low = (SUB + sub) << (group - SUB_BITS);
    low.saturating_add((1u64 << (group - SUB_BITS)) - 1)
}

impl LatencyHistogram {
    pub fn new() -> Self {
        LatencyHistogram {
            counts: vec![0; GROUPS * SUB as usize],
            total: 0,
            max: 0,
            sum: 0,
        }
    }

    /// Count one value.
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.total += 1;
        self.max = self.max.max(ns);
        self.sum += ns as u128;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The value below which a fraction `q` (0..=1) of the recorded values lie; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_upper(i).min(self.max);
            }
        }
        self.max
    }

    pub fn percentiles(&self) -> Percentiles {
        Percentiles {
            count: self.total,
            mean_ns: if self.total == 0 {
                0
            } else {
                (self.sum / self.total as u128) as u64
            },
            p50_ns: self.quantile(0.50),
            p90_ns: self.quantile(0.90),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            max_ns: self.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut prev = 0;
        for v in (0..100_000u64).chain([1 << 40, u64::MAX / 3, u64::MAX]) {
            let b = bucket(v);
            assert!(b >= prev, "bucket order broken at {v}");
            prev = b;
            let up = bucket_upper(b);
            assert!(up >= v, "{v} above its bucket's bound {up}");
            assert!(up - v <= v / SUB, "{v}: bound {up} too loose");
        }
    }

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = LatencyHistogram::new();
        assert_eq!(h.percentiles().p50_ns, 0, "empty gives 0, never panics");
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let p = h.percentiles();
        assert_eq!(p.count, 1000);
        assert_eq!(p.max_ns, 1_000_000);
        assert_eq!(p.mean_ns, 500_500);
        for (got, want) in [
            (p.p50_ns, 500_000),
            (p.p90_ns, 900_000),
            (p.p99_ns, 990_000),
        ] {
            assert!(got >= want && got <= want + want / 16, "{got} vs {want}");
        }
    }
}
