//! The interval of a ratio of two throughputs: from per-second samples through a circular
//! block bootstrap (they are autocorrelated: a device's background work spans seconds),
//! or from repeated runs' figures; both as Welch's t on the logarithm of the ratio. Pure,
//! deterministic (a fixed seed).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Confidence level of every interval `compare` reports.
pub const LEVEL: f64 = 0.95;
/// Bootstrap resamples per interval.
pub const RESAMPLES: usize = 4000;
/// The bootstrap's fixed seed: the same inputs give the same interval.
pub const SEED: u64 = 0xc0_4a2e_5eed;
/// Fewest per-second samples a side needs for the bootstrap to mean anything.
pub const MIN_SECONDS: usize = 5;

/// Said in the method when a side's spread was below its counting resolution.
const FLOORED: &str =
    "; a side's spread was below the counting resolution of whole I/Os, which is used instead";

/// The least variance of the log of a side's mean rate that its counting allows: the rate
/// over `seconds` counts whole I/Os of `io_bytes`, so where the window's ends fall
/// between completions moves the mean by up to ±`io_bytes / seconds` (uniform: variance of
/// that half-width squared over 3). The I/Os in flight at the ends (queue depth) shift
/// both sides of a comparison alike and are not counted here. Over `runs` runs sharing
/// `seconds` the errors of the runs' figures average down by √runs.
pub fn resolution_variance(io_bytes: f64, seconds: f64, runs: usize, mean_rate: f64) -> f64 {
    if !(io_bytes > 0.0 && seconds > 0.0 && mean_rate > 0.0) {
        return 0.0;
    }
    let runs = runs.max(1) as f64;
    // Each run counts seconds / runs: its error is runs× larger, averaged over √runs.
    let half = io_bytes * runs.sqrt() / seconds / mean_rate;
    half * half / 3.0
}

/// An interval of the ratio B / A and how it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioInterval {
    /// The point estimate of B / A from the same data.
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// The method in words, e.g. "circular block bootstrap of 12 and 12 per-second
    /// samples (blocks of 3 s, 4000 resamples)".
    pub method: String,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Lag-1 autocorrelation of `v` (0 for fewer than 3 samples or no variance).
pub fn lag1_autocorrelation(v: &[f64]) -> f64 {
    if v.len() < 3 {
        return 0.0;
    }
    let m = mean(v);
    let var: f64 = v.iter().map(|x| (x - m).powi(2)).sum();
    if var <= 0.0 {
        return 0.0;
    }
    let cov: f64 = v.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
    cov / var
}

/// Block length for `n` samples: n^(1/3) (the rate that balances the bias and variance of
/// a block bootstrap's variance estimate), stretched for correlated series to twice the
/// decorrelation time ((1 + ρ) / (1 − ρ) seconds for lag-1 correlation ρ: a block must
/// hold most of the correlation it is to keep), at most n / 2.
pub fn block_length(v: &[f64]) -> usize {
    let n = v.len();
    if n < 2 {
        return 1;
    }
    let base = (n as f64).cbrt();
    let rho = lag1_autocorrelation(v).clamp(0.0, 0.95);
    let decorrelation = 2.0 * (1.0 + rho) / (1.0 - rho);
    (base.max(decorrelation).round() as usize).clamp(1, (n / 2).max(1))
}

/// A series read circularly, with its prefix sums: the sum of any run of it (wrapping
/// round the end) in one step, so a resample costs its number of blocks, not of seconds
/// (4000 resamples of a million seconds took minutes, issue 44 point 9).
struct Circular {
    /// `prefix[i]` = v[0] + … + v[i-1].
    prefix: Vec<f64>,
}

impl Circular {
    fn new(v: &[f64]) -> Circular {
        let mut prefix = Vec::with_capacity(v.len() + 1);
        let mut sum = 0.0;
        prefix.push(sum);
        for x in v {
            sum += x;
            prefix.push(sum);
        }
        Circular { prefix }
    }

    fn len(&self) -> usize {
        self.prefix.len() - 1
    }

    /// The sum of the `k` ≤ n values from `start`, wrapping round the end.
    fn run_sum(&self, start: usize, k: usize) -> f64 {
        let (n, p) = (self.len(), &self.prefix);
        let end = start + k;
        if end <= n {
            p[end] - p[start]
        } else {
            (p[n] - p[start]) + p[end - n]
        }
    }
}

/// The mean of one circular block resample of `v` with blocks of `len`.
fn resampled_mean(v: &Circular, len: usize, rng: &mut Pcg64) -> f64 {
    let n = v.len();
    let mut sum = 0.0;
    let mut taken = 0;
    while taken < n {
        // Drawn as u64: `gen_range` over usize draws u32s on 32-bit targets, and the
        // armv7 build would resample other blocks than x86_64's and print another interval.
        let start = rng.gen_range(0..n as u64) as usize;
        let k = len.min(n - taken);
        sum += v.run_sum(start, k);
        taken += k;
    }
    sum / n as f64
}

/// Variance of log(mean) of `v` over circular block resamples of blocks of `len`.
fn bootstrap_log_variance(v: &[f64], len: usize, rng: &mut Pcg64) -> Option<f64> {
    let v = Circular::new(v);
    let logs: Vec<f64> = (0..RESAMPLES)
        .map(|_| resampled_mean(&v, len, rng).ln())
        .filter(|x| x.is_finite())
        .collect();
    if logs.len() < RESAMPLES / 2 {
        return None;
    }
    let m = mean(&logs);
    Some(logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (logs.len() - 1) as f64)
}

/// The 95 % interval of mean(b) / mean(a) from each side's per-second samples: the
/// standard error of each side's log mean from a circular block bootstrap (blocks of
/// [`block_length`], so the correlation between neighbouring seconds stays in), and a t
/// quantile with Welch's degrees of freedom counting blocks, not seconds (n / len − 1 per
/// side: a few long blocks know less than many seconds). `Err` says why there is none.
///
/// `floor` is each side's least variance of its log mean: the counting resolution (see
/// [`resolution_variance`]). Per-second rates are counts of whole I/Os: a steady device
/// gives the same count every second, and a zero spread would claim an exact figure.
pub fn bootstrap_ratio(a: &[f64], b: &[f64], floor: (f64, f64)) -> Result<RatioInterval, String> {
    if a.len() < MIN_SECONDS || b.len() < MIN_SECONDS {
        return Err(format!(
            "too few per-second samples ({} and {}; the interval needs at least {MIN_SECONDS} on each side)",
            a.len(),
            b.len()
        ));
    }
    if a.iter().chain(b).any(|x| !x.is_finite() || *x < 0.0) {
        return Err("a per-second sample is not a finite, non-negative rate".into());
    }
    let (ma, mb) = (mean(a), mean(b));
    if ma <= 0.0 || mb <= 0.0 {
        return Err("a side moved no data in its counting time".into());
    }
    let (la, lb) = (block_length(a), block_length(b));
    let mut rng = Pcg64::seed_from_u64(SEED);
    let (Some(va), Some(vb)) = (
        bootstrap_log_variance(a, la, &mut rng),
        bootstrap_log_variance(b, lb, &mut rng),
    ) else {
        return Err("most resamples of a side moved no data".into());
    };
    let dfa = (a.len() as f64 / la as f64 - 1.0).max(1.0);
    let dfb = (b.len() as f64 / lb as f64 - 1.0).max(1.0);
    let floored = va < floor.0 || vb < floor.1;
    let (va, vb) = (va.max(floor.0), vb.max(floor.1));
    Ok(welch_interval(mb / ma, (va, dfa), (vb, dfb), |df| {
        format!(
            "circular block bootstrap of {} and {} per-second samples (blocks of {la} and {lb} s, {RESAMPLES} resamples), t interval with {df:.1} degrees of freedom{}",
            a.len(),
            b.len(),
            if floored { FLOORED } else { "" }
        )
    }))
}

/// The 95 % interval of `ratio` from each side's variance of its log mean and its degrees
/// of freedom: Welch–Satterthwaite, a t quantile, symmetric on the log scale. `method`
/// words it, given the degrees of freedom.
fn welch_interval(
    ratio: f64,
    (va, dfa): (f64, f64),
    (vb, dfb): (f64, f64),
    method: impl FnOnce(f64) -> String,
) -> RatioInterval {
    let df = if va + vb > 0.0 {
        (va + vb).powi(2) / (va * va / dfa + vb * vb / dfb)
    } else {
        dfa + dfb
    };
    let half = t975(df) * (va + vb).sqrt();
    RatioInterval {
        ratio,
        low: ratio * (-half).exp(),
        high: ratio * half.exp(),
        method: method(df),
    }
}

/// Two-sided 97.5 % quantile of Student's t with `df` degrees of freedom (table to 30,
/// then 1.96 + 2.5 / df, within 0.003 of the exact value).
pub fn t975(df: f64) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if df.is_nan() || df < 1.0 {
        return T[0];
    }
    // Fractional (Welch) degrees of freedom round down: the wider interval.
    let d = df.floor() as usize;
    if d <= 30 {
        T[d - 1]
    } else {
        1.96 + 2.5 / df
    }
}

/// The 95 % interval of mean(b) / mean(a) from repeated runs' figures: Welch's t on the
/// log of the ratio (delta method: each side's relative standard error of its mean).
/// `floor` as for [`bootstrap_ratio`].
pub fn runs_ratio(a: &[f64], b: &[f64], floor: (f64, f64)) -> Result<RatioInterval, String> {
    if a.len() < 2 || b.len() < 2 {
        return Err(format!(
            "{} and {} runs: an interval from runs needs at least 2 on each side",
            a.len(),
            b.len()
        ));
    }
    if a.iter().chain(b).any(|x| !x.is_finite() || *x <= 0.0) {
        return Err("a run's figure is not a positive rate".into());
    }
    let rel_var = |v: &[f64]| {
        let m = mean(v);
        let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
        var / (m * m) / v.len() as f64
    };
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (rel_var(a), rel_var(b));
    let floored = va < floor.0 || vb < floor.1;
    Ok(welch_interval(
        mean(b) / mean(a),
        (va.max(floor.0), na - 1.0),
        (vb.max(floor.1), nb - 1.0),
        |df| {
            format!(
                "Welch's t on the log ratio of {} and {} runs' figures ({df:.1} degrees of freedom){}",
                a.len(),
                b.len(),
                if floored { FLOORED } else { "" }
            )
        },
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn steady_counts_give_the_counting_resolution_not_an_exact_figure() {
        // Every second counts 12 and 13 whole MiB: no spread at all.
        let a = vec![12.0 * 1048576.0; 6];
        let b = vec![13.0 * 1048576.0; 6];
        let exact = bootstrap_ratio(&a, &b, (0.0, 0.0)).unwrap();
        assert!(exact.high - exact.low < 1e-9, "no floor: {exact:?}");
        let floor = (
            resolution_variance(1048576.0, 6.0, 1, 12.0 * 1048576.0),
            resolution_variance(1048576.0, 6.0, 1, 13.0 * 1048576.0),
        );
        let i = bootstrap_ratio(&a, &b, floor).unwrap();
        assert!(
            i.low < 13.0 / 12.0 * 0.98 && i.high > 13.0 / 12.0 * 1.02,
            "{i:?}"
        );
        assert!(i.method.contains("counting resolution"), "{}", i.method);
        let r = runs_ratio(&a[..3], &b[..3], floor).unwrap();
        assert!(r.high - r.low > 0.02, "{r:?}");
    }

    use super::*;
    use rand_distr_free::normal;

    /// A tiny normal sampler, so the tests need no extra crate.
    mod rand_distr_free {
        use rand::Rng;
        pub fn normal(rng: &mut impl Rng) -> f64 {
            let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
            let u2: f64 = rng.gen();
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        }
    }

    /// An AR(1) series around `level` with relative noise `sd` and correlation `rho`.
    pub(super) fn ar1(n: usize, level: f64, sd: f64, rho: f64, seed: u64) -> Vec<f64> {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut e = 0.0;
        (0..n)
            .map(|_| {
                e = rho * e + (1.0 - rho * rho).sqrt() * normal(&mut rng);
                level * (1.0 + sd * e)
            })
            .collect()
    }

    #[test]
    fn block_length_grows_with_n_and_with_correlation() {
        assert_eq!(block_length(&ar1(27, 1.0, 0.1, 0.0, 1)), 3);
        assert!(block_length(&ar1(64, 1.0, 0.1, 0.0, 2)) <= 5);
        let strong = block_length(&ar1(64, 1.0, 0.1, 0.9, 3));
        assert!(strong >= 8, "{strong}");
        assert_eq!(block_length(&[1.0]), 1);
    }

    #[test]
    fn the_bootstrap_interval_covers_the_true_ratio_of_correlated_series() {
        // 200 pairs of AR(1) series (ρ = 0.6, 5 % noise) whose true ratio is 1.10: a 95 %
        // interval must cover it in about 95 % of them (an i.i.d. bootstrap covers ~75 %).
        let mut covered = 0;
        for seed in 0..200u64 {
            let a = ar1(40, 100.0, 0.05, 0.6, seed * 2);
            let b = ar1(40, 110.0, 0.05, 0.6, seed * 2 + 1);
            let i = bootstrap_ratio(&a, &b, (0.0, 0.0)).unwrap();
            assert!(i.low <= i.ratio && i.ratio <= i.high, "{i:?}");
            if i.low <= 1.10 && 1.10 <= i.high {
                covered += 1;
            }
        }
        assert!((170..=200).contains(&covered), "covered {covered} of 200");
    }

    #[test]
    fn the_bootstrap_is_deterministic_and_refuses_too_few_or_empty_samples() {
        let a = ar1(20, 100.0, 0.05, 0.0, 7);
        let b = ar1(20, 100.0, 0.05, 0.0, 8);
        assert_eq!(
            bootstrap_ratio(&a, &b, (0.0, 0.0)),
            bootstrap_ratio(&a, &b, (0.0, 0.0))
        );
        let e = bootstrap_ratio(&a[..3], &b, (0.0, 0.0)).unwrap_err();
        assert!(e.contains("too few per-second samples (3 and 20"), "{e}");
        let zeros = vec![0.0; 10];
        assert!(bootstrap_ratio(&zeros, &b, (0.0, 0.0))
            .unwrap_err()
            .contains("no data"));
    }

    /// The same inputs give the same interval on every target: `scripts/ci-cross` runs
    /// this under aarch64 and armv7 (32-bit usize), whose draws once differed from x86_64's
    /// and moved a README figure by a rounding step.
    /// Issue 44 point 9: a resample sums its blocks from prefix sums; each run's sum is
    /// the one added value by value, wrapping round the end.
    #[test]
    fn a_circular_run_sum_is_the_sum_of_its_values() {
        let v: Vec<f64> = (0..37).map(|i| ((i * 7919) % 101) as f64 * 1.5e6).collect();
        let c = Circular::new(&v);
        for start in 0..v.len() {
            for k in 0..=v.len() {
                let direct: f64 = (0..k).map(|j| v[(start + j) % v.len()]).sum();
                let got = c.run_sum(start, k);
                assert!(
                    (got - direct).abs() <= 1e-9 * direct.max(1.0),
                    "{start}+{k}: {got} {direct}"
                );
            }
        }
    }

    /// Issue 44 point 9: a long run (200,000 seconds a side) goes through the prefix-sum
    /// bootstrap to the right ratio and an interval around it. How long a document near
    /// the size cap takes is a benchmark, not a unit test: `scripts/document-memory`
    /// (CI) holds `compare` of two such documents to 30 s on the release binary.
    #[test]
    fn the_bootstrap_of_a_long_run_gives_the_ratio_and_an_interval_around_it() {
        let a: Vec<f64> = (0..200_000u64)
            .map(|i| 2.0e7 + ((i * 7919) % 1000) as f64)
            .collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.1).collect();
        let r = bootstrap_ratio(&a, &b, (0.0, 0.0)).unwrap();
        assert!(
            (r.ratio - 1.1).abs() < 1e-9 && r.low <= 1.1 && r.high >= 1.1,
            "{r:?}"
        );
    }

    #[test]
    fn the_bootstrap_interval_is_the_same_on_every_target() {
        let a = [
            22.1, 22.9, 22.4, 23.2, 22.7, 22.5, 23.0, 22.2, 22.8, 22.6, 23.1, 22.3,
        ];
        let b = [
            22.6, 23.3, 22.9, 23.5, 22.8, 23.0, 23.4, 22.7, 23.1, 22.9, 23.6, 22.8,
        ];
        let r = bootstrap_ratio(&a, &b, (0.0, 0.0)).unwrap();
        let pinned = (1.017_660_044_150, 1.007_683_907_399, 1.027_734_945_309);
        for (got, want) in [(r.ratio, pinned.0), (r.low, pinned.1), (r.high, pinned.2)] {
            assert!(
                (got - want).abs() < 1e-9,
                "{got:.12} is not {want:.12}: {r:?}"
            );
        }
    }

    #[test]
    fn runs_give_a_welch_interval_that_covers_the_true_ratio() {
        let mut covered = 0;
        for seed in 0..200u64 {
            let a = ar1(4, 100.0, 0.03, 0.0, 1000 + seed * 2);
            let b = ar1(4, 90.0, 0.03, 0.0, 1001 + seed * 2);
            let i = runs_ratio(&a, &b, (0.0, 0.0)).unwrap();
            if i.low <= 0.9 && 0.9 <= i.high {
                covered += 1;
            }
        }
        assert!((180..=200).contains(&covered), "covered {covered} of 200");
        assert!(runs_ratio(&[1.0], &[1.0, 2.0], (0.0, 0.0))
            .unwrap_err()
            .contains("1 and 2 runs"));
        assert!((t975(10.7) - 2.228).abs() < 1e-9);
        assert!((t975(60.0) - 2.0).abs() < 0.003);
    }
}
