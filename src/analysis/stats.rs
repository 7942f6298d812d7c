//! Robust statistics, the one place for them: medians (of floats, of integer
//! nanoseconds, and which sample is the median), and quantiles. Pure functions; NaN-free
//! inputs give NaN-free outputs, and an empty input says so (`None` or NaN) rather than
//! panicking.

/// Median of `v` (reordered in place), the mean of the middle two for an even count;
/// `None` when empty.
pub fn median(v: &mut [f64]) -> Option<f64> {
    let n = v.len();
    if n == 0 {
        return None;
    }
    let (_, &mut hi, _) = v.select_nth_unstable_by(n / 2, |a, b| a.total_cmp(b));
    if n % 2 == 1 {
        Some(hi)
    } else {
        let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(0.5 * (lo + hi))
    }
}

/// Sort floats ascending by [`f64::total_cmp`]: the one sort of plain floats, so it is
/// compiled once (an unstable sort: floats equal under `total_cmp` are the same bits, so
/// the result is the stable sort's).
pub fn sort_f64(v: &mut [f64]) {
    v.sort_unstable_by(f64::total_cmp);
}

/// [`median`] of an owned vector, NaN when empty (NaN fails every comparison, so a
/// missing median cannot pass a threshold).
pub fn median_nan(mut v: Vec<f64>) -> f64 {
    median(&mut v).unwrap_or(f64::NAN)
}

/// [`median`] of integer durations (ns), as f64; NaN for none.
pub fn median_ns(v: &[u64]) -> f64 {
    median_nan(v.iter().map(|&x| x as f64).collect())
}

/// The index of the median sample of `values` (the lower middle one for an even count),
/// for picking the whole record a median stands for; `None` when empty.
pub fn median_index(values: &[f64]) -> Option<usize> {
    if values.is_empty() {
        return None;
    }
    let mut order: Vec<usize> = (0..values.len()).collect();
    // Ties in index order, as a stable sort leaves them (indices are unique).
    order.sort_unstable_by(|&a, &b| values[a].total_cmp(&values[b]).then(a.cmp(&b)));
    Some(order[(order.len() - 1) / 2])
}

/// The `q` quantile (0 ≤ q ≤ 1, clamped) of a sorted, non-empty slice by nearest rank
/// (`(n-1)·q` rounded): the sample itself rather than an interpolation.
fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let q = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The quantiles `qs` of `v` (nearest rank, as above), with one sort; `None` when empty.
pub fn quantiles<const N: usize>(v: &[f64], qs: [f64; N]) -> Option<[f64; N]> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    sort_f64(&mut s);
    Some(qs.map(|q| quantile_sorted(&s, q)))
}

/// `ln n!`: exact sums up to 20, Stirling's series above (error below 1e-12).
fn ln_factorial(n: u64) -> f64 {
    if n <= 20 {
        return (2..=n).map(|k| (k as f64).ln()).sum();
    }
    let x = n as f64;
    x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x * x * x)
}

/// One-sided Fisher exact test: the chance, were both groups drawn alike, that the first
/// group (`k1` of `n1` with some property) holds at least `k1` of the `k1 + k0` that have it
/// when the second holds `k0` of `n0` (the hypergeometric upper tail). Near 0 when the
/// first group has the property clearly more often; 1 for empty groups or counts out of range.
pub fn fisher_greater(k1: u64, n1: u64, k0: u64, n0: u64) -> f64 {
    if k1 > n1 || k0 > n0 || n1 == 0 || n0 == 0 {
        return 1.0;
    }
    let (n, k) = (n1 + n0, k1 + k0);
    let ln_choose = |a: u64, b: u64| ln_factorial(a) - ln_factorial(b) - ln_factorial(a - b);
    let denom = ln_choose(n, n1);
    let mut p = 0.0;
    for x in k1..=k.min(n1) {
        if k - x > n0 {
            continue;
        }
        let term = (ln_choose(k, x) + ln_choose(n - k, n1 - x) - denom).exp();
        p += term;
        // Past the mode the terms only fall: stop when they no longer count.
        if term < 1e-17 * p && (x as f64) > (k as f64) * (n1 as f64) / (n as f64) {
            break;
        }
    }
    p.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fisher_greater_of_known_tables() {
        // 3 of 3 against 0 of 3: C(3,3)·C(3,0)/C(6,3) = 1/20.
        assert!((fisher_greater(3, 3, 0, 3) - 0.05).abs() < 1e-12);
        // Equal shares are no evidence; the reverse direction is none either.
        assert!(fisher_greater(10, 100, 10, 100) > 0.5);
        assert!(fisher_greater(0, 100, 50, 100) > 0.999);
        // 12 % against 12 % over thousands of repeats and a hundred controls: no evidence;
        // 60 % against 12 %: overwhelming.
        assert!(fisher_greater(360, 3000, 15, 128) > 0.3);
        assert!(fisher_greater(1800, 3000, 15, 128) < 1e-12);
        assert_eq!(fisher_greater(1, 0, 0, 3), 1.0);
        assert!((ln_factorial(30) - (1..=30).map(|k| (k as f64).ln()).sum::<f64>()).abs() < 1e-9);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&mut [5.0, 5.0, 1.0, 9.0]), Some(5.0));
        assert_eq!(median(&mut []), None);
        assert!(median_nan(Vec::new()).is_nan());
        assert!(median_ns(&[]).is_nan());
        assert_eq!(median_ns(&[3, 1, 2]), 2.0);
        assert_eq!(median_ns(&[4, 1, 3, 2]), 2.5);
    }

    #[test]
    fn median_index_and_quantiles_of_known_samples() {
        assert_eq!(median_index(&[30.0, 10.0, 20.0]), Some(2));
        // The lower middle of an even count.
        assert_eq!(median_index(&[40.0, 10.0, 30.0, 20.0]), Some(3));
        assert_eq!(median_index(&[]), None);
        let v: Vec<f64> = (0..=10).map(f64::from).collect();
        assert_eq!(quantiles(&v, [0.1, 0.9]), Some([1.0, 9.0]));
        assert_eq!(quantiles(&v, [0.0, 0.5, 1.0]), Some([0.0, 5.0, 10.0]));
        assert_eq!(quantiles(&[], [0.5]), None);
    }

    proptest! {
        #[test]
        fn median_lies_between_the_middle_samples(v in proptest::collection::vec(-1e12f64..1e12, 1..60)) {
            let mut s = v.clone();
            s.sort_by(f64::total_cmp);
            let n = s.len();
            let m = median(&mut v.clone()).unwrap();
            prop_assert!(m >= s[(n - 1) / 2] && m <= s[n / 2], "{m} not between the middle of {s:?}");
            // Integers agree with floats.
            let ints: Vec<u64> = v.iter().map(|x| x.abs() as u64).collect();
            let as_f: Vec<f64> = ints.iter().map(|&x| x as f64).collect();
            prop_assert_eq!(median_ns(&ints), median_nan(as_f));
        }

        #[test]
        fn the_median_index_points_at_a_middle_sample(v in proptest::collection::vec(-1e6f64..1e6, 1..60)) {
            let i = median_index(&v).unwrap();
            let below = v.iter().filter(|&&x| x < v[i]).count();
            let above = v.iter().filter(|&&x| x > v[i]).count();
            prop_assert!(below <= v.len() / 2 && above <= v.len() / 2, "{i} in {v:?}");
        }

        #[test]
        fn quantiles_are_samples_ordered_by_q(v in proptest::collection::vec(-1e6f64..1e6, 1..60), a in 0.0f64..1.0, b in 0.0f64..1.0) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let [x, y, min, max] = quantiles(&v, [lo, hi, 0.0, 1.0]).unwrap();
            prop_assert!(x <= y);
            prop_assert!(v.contains(&x) && v.contains(&y));
            prop_assert_eq!(min, v.iter().copied().fold(f64::INFINITY, f64::min));
            prop_assert_eq!(max, v.iter().copied().fold(f64::NEG_INFINITY, f64::max));
            prop_assert_eq!(quantiles(&v, [lo]), Some([x]));
        }
    }
}
