//! Analysis: pure functions from samples to inferences; no I/O.

pub mod advice;
pub mod align;
pub mod fat;
pub mod flashbench;
pub mod interval;
pub mod openau;
pub mod program;
pub mod slc;

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

/// [`median`] of an owned vector, NaN when empty (NaN fails every comparison, so a
/// missing median cannot pass a threshold).
pub fn median_nan(mut v: Vec<f64>) -> f64 {
    median(&mut v).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&mut [5.0, 5.0, 1.0, 9.0]), Some(5.0));
        assert_eq!(median(&mut []), None);
    }
}
