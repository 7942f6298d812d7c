//! Shared pieces of the write probes: block-size ladders, data patterns. The budgets are
//! backend wrappers (`WriteBudget`, `TimeBudget`); `backend::stop_reason` names their stop.

use crate::backend::AlignedBuf;
use crate::vocab::units::{format_bytes, is_pow2_or_3x};
use crate::{Error, Result};
use rand::{Rng, SeedableRng};

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
    }
}
