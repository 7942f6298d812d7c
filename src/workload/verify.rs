//! Verify stamps: every 512-byte unit of a written block carries the block stamp of
//! [`crate::pattern`] (its own offset, the run's id as the salt, a check word and a payload
//! derived from both). Reading it back proves the device stored *this* write at *this*
//! place: a card that drops writes, returns stale data or aliases addresses cannot look
//! fast (KDiskMark issue #38).

use serde::{Deserialize, Serialize};

use crate::pattern::{self, Stamper};

/// Bytes stamped as one unit.
pub use crate::pattern::UNIT as STAMP_UNIT;

/// Fill `buf` (written at `offset`) with stamps for this run; a last partial unit holds
/// the first bytes of its unit's stamp.
pub(crate) fn stamp(buf: &mut [u8], offset: u64, run_id: u64) {
    pattern::regenerate(buf, offset, run_id, 0);
}

/// Check `buf` (read from `offset`); the offset of the first unit that is wrong.
pub fn check(buf: &[u8], offset: u64, run_id: u64) -> Option<u64> {
    let stamper = Stamper::new(run_id);
    buf.chunks(STAMP_UNIT)
        .enumerate()
        .map(|(i, unit)| (offset + (i * STAMP_UNIT) as u64, unit))
        .find(|&(at, unit)| !stamper.is_prefix_of_stamp(unit, at))
        .map(|(at, _)| at)
}

/// Which blocks of a region were written (one bit per `unit` bytes).
pub struct WrittenMap {
    start: u64,
    unit: u64,
    bits: Vec<u64>,
}

impl WrittenMap {
    pub fn new(start: u64, size: u64, unit: u64) -> Self {
        let unit = unit.max(1);
        let n = size.div_ceil(unit);
        WrittenMap {
            start,
            unit,
            bits: vec![0; n.div_ceil(64) as usize],
        }
    }

    /// Mark `[offset, offset + len)` as written.
    pub(crate) fn mark(&mut self, offset: u64, len: u64) {
        let first = (offset - self.start) / self.unit;
        let last = (offset + len - self.start).div_ceil(self.unit);
        for b in first..last {
            if let Some(w) = self.bits.get_mut((b / 64) as usize) {
                *w |= 1 << (b % 64);
            }
        }
    }

    /// Runs of written units as (offset, len), each at most `max_len` bytes.
    pub(crate) fn runs(&self, max_len: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let per = (max_len / self.unit).max(1);
        let total = self.bits.len() as u64 * 64;
        let mut b = 0;
        while b < total {
            let set = self.bits[(b / 64) as usize] & (1 << (b % 64)) != 0;
            if !set {
                b += 1;
                continue;
            }
            let s = b;
            while b < total && b - s < per && self.bits[(b / 64) as usize] & (1 << (b % 64)) != 0 {
                b += 1;
            }
            out.push((self.start + s * self.unit, (b - s) * self.unit));
        }
        out
    }
}

/// What the verify pass found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct VerifyReport {
    /// Bytes read back and checked.
    pub bytes_checked: u64,
    /// Units (512 bytes) that did not hold what was written.
    pub bad_units: u64,
    /// Offset of the first bad unit.
    pub first_bad_offset: Option<u64>,
}

impl VerifyReport {
    /// Check one block read back from `offset`, counting every bad unit.
    pub(crate) fn check_block(&mut self, buf: &[u8], offset: u64, run_id: u64) {
        self.bytes_checked += buf.len() as u64;
        let mut at = 0usize;
        while at < buf.len() {
            let end = (at + STAMP_UNIT).min(buf.len());
            if let Some(bad) = check(&buf[at..end], offset + at as u64, run_id) {
                self.bad_units += 1;
                self.first_bad_offset = Some(self.first_bad_offset.map_or(bad, |f| f.min(bad)));
            }
            at = end;
        }
    }

    /// Combine the reports of several jobs.
    pub(crate) fn merge(&mut self, other: &VerifyReport) {
        self.bytes_checked += other.bytes_checked;
        self.bad_units += other.bad_units;
        self.first_bad_offset = match (self.first_bad_offset, other.first_bad_offset) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_check_only_at_their_offset_and_run() {
        let mut b = vec![0u8; 4096];
        stamp(&mut b, 8192, 42);
        assert_eq!(check(&b, 8192, 42), None);
        assert_eq!(check(&b, 4096, 42), Some(4096), "aliased data must fail");
        assert_eq!(
            check(&b, 8192, 43),
            Some(8192),
            "stale data from another run must fail"
        );
        b[1000] ^= 1;
        assert_eq!(check(&b, 8192, 42), Some(8192 + 512));
        let mut r = VerifyReport::default();
        r.check_block(&b, 8192, 42);
        assert_eq!(r.bad_units, 1);
        assert_eq!(r.first_bad_offset, Some(8192 + 512));
    }

    #[test]
    fn short_blocks_at_unaligned_offsets_are_stamped_and_checked_to_the_last_byte() {
        // A buffered job with --blocksize 1000: two whole units would not cover it.
        let mut b = vec![0u8; 1000];
        stamp(&mut b, 1000, 9);
        assert_eq!(check(&b, 1000, 9), None);
        assert_eq!(
            &b[..8],
            &1000u64.to_le_bytes(),
            "the unit carries its offset"
        );
        b[999] ^= 1;
        assert_eq!(
            check(&b, 1000, 9),
            Some(1512),
            "the partial unit is checked too"
        );
        b[999] ^= 1;
        assert_eq!(check(&b, 1512, 9), Some(1512));
        let mut r = VerifyReport::default();
        r.check_block(&b[..600], 1000, 9);
        assert_eq!((r.bytes_checked, r.bad_units), (600, 0));
    }

    #[test]
    fn written_map_coalesces_runs() {
        let mut m = WrittenMap::new(4096, 1 << 20, 4096);
        m.mark(4096, 8192);
        m.mark(12288, 4096);
        m.mark(65536, 4096);
        assert_eq!(m.runs(1 << 20), vec![(4096, 12288), (65536, 4096)]);
        assert_eq!(
            m.runs(8192),
            vec![(4096, 8192), (12288, 4096), (65536, 4096)]
        );
    }
}
