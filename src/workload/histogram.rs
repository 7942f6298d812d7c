//! Log-linear latency histogram: constant memory per job, no allocation when recording.
//!
//! Values below `2 × SUB` ns are counted exactly; above, each power of two is split into
//! `SUB` equal buckets, so a bucket's width is at most 1/`SUB` (1.6 %) of its value. This is
//! the scheme fio uses for its completion-latency percentiles, so percentiles computed from
//! the same I/O agree with fio's to within a bucket.

/// Bits of linear resolution inside each power of two.
const SUB_BITS: u32 = 6;
/// Buckets per power of two.
const SUB: u64 = 1 << SUB_BITS;
/// Highest power of two kept apart (2^40 ns ≈ 18 minutes); larger values share the top group.
const MAX_EXP: u32 = 40;
/// Number of buckets.
const BUCKETS: usize = ((MAX_EXP - SUB_BITS + 2) as usize) * SUB as usize;

/// The percentiles fio prints by default (and flashscope with it).
pub const DEFAULT_PERCENTILES: [f64; 9] = [1.0, 5.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99];

/// A latency histogram in nanoseconds with running min, max, mean and variance.
#[derive(Clone)]
pub struct LatencyHistogram {
    counts: Box<[u64; BUCKETS]>,
    n: u64,
    min: u64,
    max: u64,
    mean: f64,
    m2: f64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyHistogram")
            .field("n", &self.n)
            .field("min", &self.min)
            .field("max", &self.max)
            .field("mean", &self.mean)
            .finish()
    }
}

/// Bucket index of a value.
fn index_of(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    if msb > MAX_EXP {
        return BUCKETS - 1;
    }
    let shift = msb - SUB_BITS;
    let group = (shift + 1) as u64;
    (group * SUB + ((v >> shift) & (SUB - 1))) as usize
}

/// The smallest value that falls into bucket `i`, and the bucket's width.
fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < 2 * SUB {
        return (i, 1);
    }
    let group = i / SUB;
    let shift = group - 1;
    let lo = (SUB + (i % SUB)) << shift;
    (lo, 1 << shift)
}

impl LatencyHistogram {
    /// An empty histogram (about 18 KiB, allocated once).
    pub fn new() -> Self {
        LatencyHistogram {
            counts: Box::new([0; BUCKETS]),
            n: 0,
            min: u64::MAX,
            max: 0,
            mean: 0.0,
            m2: 0.0,
        }
    }

    /// Count one latency of `ns` nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[index_of(ns)] += 1;
        self.n += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        let x = ns as f64;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Smallest value (0 when empty).
    pub fn min(&self) -> u64 {
        if self.n == 0 {
            0
        } else {
            self.min
        }
    }

    /// Largest value (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Arithmetic mean (0 when empty).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sample standard deviation (0 with fewer than two values).
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }

    /// The value at percentile `p` (0–100): the middle of the bucket holding the
    /// `ceil(p/100 × n)`-th smallest value, clamped to the observed min and max. `None` when
    /// empty.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.n == 0 || !p.is_finite() {
            return None;
        }
        let rank = ((p.clamp(0.0, 100.0) / 100.0) * self.n as f64)
            .ceil()
            .max(1.0) as u64;
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, width) = bucket_range(i);
                let mid = lo + (width - 1) / 2;
                return Some(mid.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// Add another histogram's counts (jobs summed into a group, as fio's group reporting).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.n == 0 {
            return;
        }
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += *b;
        }
        let n = self.n + other.n;
        let d = other.mean - self.mean;
        let mean = self.mean + d * other.n as f64 / n as f64;
        self.m2 += other.m2 + d * d * self.n as f64 * other.n as f64 / n as f64;
        self.mean = mean;
        self.n = n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Forget everything (end of the ramp time).
    pub fn reset(&mut self) {
        self.counts.fill(0);
        self.n = 0;
        self.min = u64::MAX;
        self.max = 0;
        self.mean = 0.0;
        self.m2 = 0.0;
    }
}

/// fio's key for a percentile: `99.000000`.
pub fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

/// A histogram's figures in fio's JSON shape (`clat_ns`): what a saved result keeps of it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ClatSummary {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    #[serde(rename = "N")]
    pub n: u64,
    /// [`DEFAULT_PERCENTILES`] by [`percentile_key`], in ns (none when empty).
    pub percentile: std::collections::BTreeMap<String, u64>,
}

impl ClatSummary {
    /// The value at percentile `p` of [`DEFAULT_PERCENTILES`], when there is one.
    pub fn at(&self, p: f64) -> Option<u64> {
        self.percentile.get(&percentile_key(p)).copied()
    }
}

impl LatencyHistogram {
    /// Min, max, mean, standard deviation, count and the default percentiles.
    pub fn summary(&self) -> ClatSummary {
        ClatSummary {
            min: self.min(),
            max: self.max(),
            mean: self.mean(),
            stddev: self.stddev(),
            n: self.count(),
            percentile: DEFAULT_PERCENTILES
                .iter()
                .filter_map(|&p| self.percentile(p).map(|v| (percentile_key(p), v)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut prev = 0usize;
        for v in (0u64..5000).chain([1 << 20, (1 << 20) + 1, 123_456_789, 1 << 40]) {
            let i = index_of(v);
            let (lo, w) = bucket_range(i);
            assert!(lo <= v && v < lo + w, "v={v} i={i} lo={lo} w={w}");
            if v < 5000 {
                assert!(i >= prev);
                prev = i;
            }
        }
        assert_eq!(index_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_of_a_uniform_run_are_within_a_bucket() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        for p in DEFAULT_PERCENTILES {
            let exact = (p / 100.0 * 100_000.0).ceil() * 10.0;
            let got = h.percentile(p).unwrap() as f64;
            assert!(
                (got - exact).abs() <= exact / SUB as f64 + 1.0,
                "p{p}: {got} vs {exact}"
            );
        }
        assert_eq!(h.min(), 10);
        assert_eq!(h.max(), 1_000_000);
        assert!((h.mean() - 500_005.0).abs() < 1e-6 * 500_005.0);
    }

    #[test]
    fn empty_histogram_has_no_percentiles() {
        let h = LatencyHistogram::new();
        assert_eq!(h.percentile(50.0), None);
        assert_eq!(h.min(), 0);
        assert_eq!(h.stddev(), 0.0);
    }

    #[test]
    fn reset_forgets() {
        let mut h = LatencyHistogram::new();
        h.record(5);
        h.reset();
        assert_eq!(h.count(), 0);
        assert_eq!(h.percentile(50.0), None);
        h.record(7);
        assert_eq!(h.percentile(50.0), Some(7));
    }

    #[test]
    fn percentile_keys_look_like_fio() {
        assert_eq!(percentile_key(99.0), "99.000000");
        assert_eq!(percentile_key(99.99), "99.990000");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn merge_equals_recording_everything(a in proptest::collection::vec(0u64..10_000_000, 1..200),
                                             b in proptest::collection::vec(0u64..10_000_000, 1..200)) {
            let mut ha = LatencyHistogram::new();
            let mut hb = LatencyHistogram::new();
            let mut all = LatencyHistogram::new();
            for &v in &a { ha.record(v); all.record(v); }
            for &v in &b { hb.record(v); all.record(v); }
            ha.merge(&hb);
            prop_assert_eq!(ha.count(), all.count());
            prop_assert_eq!(ha.min(), all.min());
            prop_assert_eq!(ha.max(), all.max());
            prop_assert!((ha.mean() - all.mean()).abs() <= 1e-6 * all.mean().max(1.0));
            prop_assert!((ha.stddev() - all.stddev()).abs() <= 1e-6 * all.stddev().max(1.0));
            for p in DEFAULT_PERCENTILES {
                prop_assert_eq!(ha.percentile(p), all.percentile(p));
            }
            // The percentile is within one bucket of the exact order statistic.
            let mut sorted: Vec<u64> = a.iter().chain(b.iter()).copied().collect();
            sorted.sort_unstable();
            let rank = ((50.0 / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
            let exact = sorted[rank - 1];
            let got = all.percentile(50.0).unwrap();
            prop_assert!(got.abs_diff(exact) <= exact / SUB + 1, "{} vs {}", got, exact);
        }
    }
}
