//! Shared pieces of the write probes: block-size ladders, stop conditions, data patterns.

use crate::backend::sim::config::is_pow2_or_3x;
use crate::backend::{AlignedBuf, Backend, Timed};
use crate::units::format_bytes;
use crate::{Error, Result};
use rand::{Rng, SeedableRng};
use std::io;

/// Why a probe stopped before its plan was done (`None` in samples: it finished).
pub fn stop_reason(e: &io::Error) -> Option<String> {
    crate::backend::stop_reason(e)
}

/// A deadline on the device's clock for `--time-budget`.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    end_ns: Option<u64>,
}

impl Deadline {
    pub fn start<B: Backend>(dev: &Timed<B>, budget_ns: Option<u64>) -> Self {
        Deadline {
            end_ns: budget_ns.map(|b| dev.clock_ns().saturating_add(b)),
        }
    }

    pub fn passed<B: Backend>(&self, dev: &Timed<B>) -> bool {
        self.end_ns.is_some_and(|e| dev.clock_ns() >= e)
    }
}

/// Block sizes from `erase` down to `smallest`, halving (`erase / 2^k`), each a multiple
/// of `sector`.
pub fn ladder(erase: u64, smallest: u64, sector: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut bs = erase;
    while bs >= smallest.max(1) && bs % sector.max(1) == 0 {
        v.push(bs);
        if bs % 2 != 0 {
            break;
        }
        bs /= 2;
    }
    v
}

/// Check an erase-block size and block size against the device (usage errors name the
/// value and the fix).
pub fn check_geometry(erase: u64, block: u64, size: u64, sector: u64) -> Result<()> {
    if !is_pow2_or_3x(erase) {
        return Err(Error::usage(format!(
            "--erase-size {erase} is neither a power of two nor 3 x a power of two: use e.g. 4M or 12M (run `flashscope align` to measure it)"
        )));
    }
    if erase > size {
        return Err(Error::usage(format!(
            "--erase-size {} is larger than the device ({})",
            format_bytes(erase),
            format_bytes(size)
        )));
    }
    if erase % sector != 0 {
        return Err(Error::usage(format!(
            "--erase-size {erase} is not a multiple of the {sector}-byte sector"
        )));
    }
    if block == 0 || block % sector != 0 || block > erase {
        return Err(Error::usage(format!(
            "--blocksize {block} must be a multiple of the {sector}-byte sector and at most the erase size ({})",
            format_bytes(erase)
        )));
    }
    Ok(())
}

/// `value` rounded up to a multiple of `unit`.
pub fn align_up(value: u64, unit: u64) -> u64 {
    value.div_ceil(unit.max(1)) * unit.max(1)
}

/// A buffer of `len` bytes filled with seeded pseudo-random data (what real files look
/// like to a controller; zeros could be compressed or special-cased).
pub fn random_buffer(len: usize, seed: u64) -> AlignedBuf {
    let mut b = AlignedBuf::new(len);
    rand_pcg::Pcg64::seed_from_u64(seed).fill(&mut b[..]);
    b
}

/// A seeded permutation of `0..n`.
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    use rand::seq::SliceRandom;
    let mut v: Vec<usize> = (0..n).collect();
    v.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(seed));
    v
}

/// Median of integers (ns), as f64; NaN for none.
pub fn median_ns(v: &[u64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_unstable();
    let n = s.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => s[n / 2] as f64,
        _ => (s[n / 2 - 1] + s[n / 2]) as f64 / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladders_halve_down_to_the_smallest() {
        assert_eq!(
            ladder(4 << 20, 1 << 20, 512),
            vec![4 << 20, 2 << 20, 1 << 20]
        );
        assert_eq!(
            ladder(12 << 20, 3 << 20, 512),
            vec![12 << 20, 6 << 20, 3 << 20]
        );
        assert_eq!(ladder(4096, 512, 512).len(), 4);
    }

    #[test]
    fn bad_geometry_names_the_value() {
        let e = check_geometry(5 << 20, 16384, 1 << 30, 512).unwrap_err();
        assert!(e.to_string().contains("5242880"), "{e}");
        assert!(check_geometry(4 << 30, 16384, 1 << 30, 512)
            .unwrap_err()
            .to_string()
            .contains("larger than the device"));
        assert!(check_geometry(4 << 20, 100, 1 << 30, 512).is_err());
        check_geometry(12 << 20, 16384, 1 << 30, 512).unwrap();
    }

    #[test]
    fn permutations_are_seeded() {
        assert_eq!(permutation(16, 3), permutation(16, 3));
        let mut p = permutation(16, 3);
        p.sort_unstable();
        assert_eq!(p, (0..16).collect::<Vec<_>>());
        assert!(median_ns(&[]).is_nan());
        assert_eq!(median_ns(&[3, 1, 2]), 2.0);
    }
}
