//! The block stamp: every 512-byte unit written by `probe`, `verify` and `io --verify`
//! carries its own byte offset, the run's random salt, a check word and a pseudo-random
//! payload derived from both, so a unit read back can be classified on its own as good, changed (a few bit
//! flips), overwritten (a valid stamp of another offset: aliasing, and from where) or bad.
//!
//! Layout of one unit, little-endian 64-bit words:
//! `[0]` offset, `[1]` salt, `[2]` check = mix(offset, salt), `[3..64]` payload, where
//! payload word `i` is a counter-based multiply-xorshift mix of a per-unit key and `i`.
//! Generation and checking are a handful of multiplies per 8 bytes: several GB/s per core
//! (see `examples/stamp_bench.rs`).
//!
//! This module is a leaf (it uses nothing else of the crate), because the simulator's
//! store uses [`recognise`] and [`regenerate`] to keep stamps it is given in compact form.
//! The release profile builds flashscope for size (Cargo.toml); on x86-64 the payload loops
//! are spelled out in SSE2 below, so they stay vectorised whatever the level.

/// Bytes per stamp unit (one classic sector; a 4096-byte sector holds eight units).
pub const UNIT: usize = 512;
const HEADER: usize = 3;
/// A unit within this many differing bits of its expected content is "changed", not bad:
/// one flipped bit in 64 is far from the ~50% a foreign or blank unit differs by.
pub(crate) const CHANGED_MAX_BITS: u32 = (UNIT as u32 * 8) / 8;

const K0: u64 = 0xa076_1d64_78bd_642f;
const K1: u64 = 0xe703_7ed1_a0b4_28db;
const K2: u64 = 0x8ebc_6af0_9c88_c6e3;

#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

#[inline(always)]
fn check_word(offset: u64, salt: u64) -> u64 {
    fold_mul(offset ^ K0, salt ^ K1)
}

#[inline(always)]
fn unit_key(offset: u64, salt: u64) -> u64 {
    fold_mul(offset ^ K2, salt.rotate_left(29) ^ K0)
}

/// Payload word `i` of the unit with `key`: an xorshift of a counter offset by the key.
/// Shifts, xors and adds only (no multiply, no dependency between words), so compilers
/// vectorise it even for baseline x86-64 and the CPU keeps up with RAM-speed devices.
/// The unit's identity lives in the header; the payload only has to differ from blank,
/// stale and other units' data, which it does in about half its bits.
#[inline(always)]
fn payload_word(key: u64, i: usize) -> u64 {
    let mut x = key.wrapping_add((i as u64).wrapping_mul(K1));
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// The payload (words `HEADER..UNIT / 8`) two words at a time in SSE2 registers, which
/// every x86-64 has: the same arithmetic as [`payload_word`], spelled out so that the
/// loops are vectorised whatever the optimisation level (the board binaries build
/// flashscope for size, and under fat LTO that level reaches these loops too).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use super::{payload_word, HEADER, K1, UNIT};
    use std::arch::x86_64::*;

    const WORDS: usize = UNIT / 8;
    // Word HEADER (3) alone, then the pairs (4, 5) .. (62, 63).
    const PAIRS: usize = (WORDS - HEADER - 1) / 2;

    /// Payload words `2 * n + 4` and `2 * n + 5` of `key`, for the counters `c`.
    #[inline(always)]
    fn pair(key: __m128i, c: __m128i) -> __m128i {
        // SAFETY: SSE2 is enabled (the cfg above); these only compute on registers.
        unsafe {
            let mut x = _mm_add_epi64(key, c);
            x = _mm_xor_si128(x, _mm_slli_epi64::<13>(x));
            x = _mm_xor_si128(x, _mm_srli_epi64::<7>(x));
            _mm_xor_si128(x, _mm_slli_epi64::<17>(x))
        }
    }

    /// Write the payload of the unit with `key` into `words` (one unit's words, native
    /// order, which on x86-64 is little-endian).
    pub(super) fn fill(words: &mut [u64; WORDS], key: u64) {
        words[HEADER] = payload_word(key, HEADER);
        // SAFETY: SSE2 is enabled; every store is an unaligned 16-byte store inside
        // `words[4..64]` (PAIRS pairs from word 4).
        unsafe {
            let k = _mm_set1_epi64x(key as i64);
            let step = _mm_set1_epi64x(K1.wrapping_mul(2) as i64);
            let mut c = _mm_set_epi64x(K1.wrapping_mul(5) as i64, K1.wrapping_mul(4) as i64);
            let p = words.as_mut_ptr().add(HEADER + 1) as *mut __m128i;
            for n in 0..PAIRS {
                _mm_storeu_si128(p.add(n), pair(k, c));
                c = _mm_add_epi64(c, step);
            }
        }
    }

    /// The bits in which `words` (one unit's words, native order) differ from the
    /// payload of `key`, or-ed together: zero when the payload is exact.
    pub(super) fn payload_diff(words: &[u64; WORDS], key: u64) -> u64 {
        let first = words[HEADER] ^ payload_word(key, HEADER);
        // SAFETY: SSE2 is enabled; every load is an unaligned 16-byte load inside
        // `words[4..64]`; the transmute reads the two lanes of a 128-bit register.
        unsafe {
            let k = _mm_set1_epi64x(key as i64);
            let step = _mm_set1_epi64x(K1.wrapping_mul(2) as i64);
            let mut c = _mm_set_epi64x(K1.wrapping_mul(5) as i64, K1.wrapping_mul(4) as i64);
            let p = words.as_ptr().add(HEADER + 1) as *const __m128i;
            let mut acc = _mm_setzero_si128();
            for n in 0..PAIRS {
                acc = _mm_or_si128(acc, _mm_xor_si128(_mm_loadu_si128(p.add(n)), pair(k, c)));
                c = _mm_add_epi64(c, step);
            }
            let lanes: [u64; 2] = std::mem::transmute(acc);
            first | lanes[0] | lanes[1]
        }
    }
}

/// How a unit read back compares with what was written there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitClass {
    /// Exactly the stamp written at this offset.
    Good,
    /// This offset's stamp with `bits` flipped (bit rot, a marginal cell).
    Changed { bits: u32 },
    /// A valid stamp of this run for another offset: the medium aliased the two.
    Overwritten { from: u64 },
    /// Anything else: blank, stale, foreign or heavily damaged data.
    Bad,
}

/// Stamps of one run: every unit depends on its offset and this salt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamper {
    pub salt: u64,
}

impl Stamper {
    pub fn new(salt: u64) -> Self {
        Stamper { salt }
    }

    /// A salt from the clock and the process id: a new one for every run, so stamps left
    /// by an earlier run never pass as fresh ones.
    pub fn random_salt() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        // A per-process counter makes two calls in the same nanosecond differ too.
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let n = CALLS.fetch_add(1, Ordering::Relaxed);
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        fold_mul(
            n.wrapping_mul(K2) ^ K0,
            wall ^ ((std::process::id() as u64) << 32) ^ K1,
        ) | 1
    }

    /// Fill `buf` (a multiple of `UNIT` bytes) with the stamps of the units starting at
    /// byte `offset` (a multiple of `UNIT`).
    /// Not inlined, like [`Stamper::exact_run`]: it keeps this crate's optimisation.
    #[inline(never)]
    pub fn fill(&self, buf: &mut [u8], offset: u64) {
        for (n, unit) in buf.chunks_exact_mut(UNIT).enumerate() {
            let off = offset + (n * UNIT) as u64;
            self.fill_unit(unit, off);
        }
    }

    #[inline]
    fn fill_unit(&self, unit: &mut [u8], off: u64) {
        let key = unit_key(off, self.salt);
        let head = [off, self.salt, check_word(off, self.salt)];
        // SAFETY: every bit pattern is a valid u64 and a valid u8; align_to_mut only
        // reinterprets the aligned middle of the slice.
        let (pre, words, post) = unsafe { unit.align_to_mut::<u64>() };
        if pre.is_empty() && post.is_empty() && words.len() == UNIT / 8 {
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            if let Ok(words) = <&mut [u64; UNIT / 8]>::try_from(&mut *words) {
                words[..HEADER].copy_from_slice(&head);
                sse2::fill(words, key);
                return;
            }
            for (i, w) in words.iter_mut().enumerate() {
                *w = if i < HEADER {
                    head[i]
                } else {
                    payload_word(key, i)
                }
                .to_le();
            }
            return;
        }
        for (i, w) in unit.chunks_exact_mut(8).enumerate() {
            let v = if i < HEADER {
                head[i]
            } else {
                payload_word(key, i)
            };
            w.copy_from_slice(&v.to_le_bytes());
        }
    }

    /// Bits in which `unit` differs from the stamp of `off`.
    fn distance(&self, unit: &[u8], off: u64) -> u32 {
        let key = unit_key(off, self.salt);
        let mut bits = 0;
        for (i, w) in unit.chunks_exact(8).enumerate() {
            let got = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            let want = match i {
                0 => off,
                1 => self.salt,
                2 => check_word(off, self.salt),
                _ => payload_word(key, i),
            };
            bits += (got ^ want).count_ones();
        }
        bits
    }

    /// True when `unit` is exactly the stamp of `off` (the fast path of every check).
    #[inline]
    fn is_exact(&self, unit: &[u8], off: u64) -> bool {
        let key = unit_key(off, self.salt);
        let head = [off, self.salt, check_word(off, self.salt)];
        // SAFETY: every bit pattern is a valid u64; align_to only reinterprets the aligned
        // middle of the slice.
        let (pre, words, post) = unsafe { unit.align_to::<u64>() };
        let mut diff = 0u64;
        if pre.is_empty() && post.is_empty() && words.len() == UNIT / 8 {
            for (i, w) in words.iter().enumerate().take(HEADER) {
                diff |= u64::from_le(*w) ^ head[i];
            }
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            if let Ok(words) = <&[u64; UNIT / 8]>::try_from(words) {
                return diff | sse2::payload_diff(words, key) == 0;
            }
            for (i, w) in words.iter().enumerate().skip(HEADER) {
                diff |= u64::from_le(*w) ^ payload_word(key, i);
            }
            return diff == 0;
        }
        for (i, w) in unit.chunks_exact(8).enumerate() {
            let got = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            diff |= got
                ^ if i < HEADER {
                    head[i]
                } else {
                    payload_word(key, i)
                };
        }
        diff == 0
    }

    /// True when `bytes` (at most one unit) are exactly the first `bytes.len()` bytes of
    /// the stamp of `off`: a whole unit, or the part of one a short block holds.
    pub fn is_prefix_of_stamp(&self, bytes: &[u8], off: u64) -> bool {
        if bytes.len() == UNIT {
            return self.is_exact(bytes, off);
        }
        if bytes.len() > UNIT {
            return false;
        }
        let mut unit = [0u8; UNIT];
        self.fill_unit(&mut unit, off);
        bytes == &unit[..bytes.len()]
    }

    /// The offset a unit claims to be the stamp of, when its header is a valid stamp
    /// header of this run (cheap: three words; the payload is not checked).
    pub fn claimed_offset(&self, unit: &[u8]) -> Option<u64> {
        if unit.len() < HEADER * 8 {
            return None;
        }
        let word = |i: usize| {
            let w = &unit[i * 8..i * 8 + 8];
            u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
        };
        (word(1) == self.salt && word(2) == check_word(word(0), self.salt)).then(|| word(0))
    }

    /// Classify one unit read back from byte offset `off`.
    pub fn classify_unit(&self, unit: &[u8], off: u64) -> UnitClass {
        if unit.len() != UNIT {
            return UnitClass::Bad;
        }
        if self.is_exact(unit, off) {
            return UnitClass::Good;
        }
        let bits = self.distance(unit, off);
        if bits <= CHANGED_MAX_BITS {
            return UnitClass::Changed { bits };
        }
        let word = |i: usize| {
            let w = &unit[i * 8..i * 8 + 8];
            u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
        };
        let (from, salt, check) = (word(0), word(1), word(2));
        if salt == self.salt
            && from != off
            && from % UNIT as u64 == 0
            && check == check_word(from, salt)
            && self.distance(unit, from) <= CHANGED_MAX_BITS
        {
            return UnitClass::Overwritten { from };
        }
        UnitClass::Bad
    }

    /// Check a buffer read from byte `offset`; calls `report(unit_offset, class)` for every
    /// unit that is not good, and returns how many were good.
    pub fn check(&self, buf: &[u8], offset: u64, mut report: impl FnMut(u64, UnitClass)) -> usize {
        // The generic part (instantiated, and optimised, in the calling crate) only walks
        // from one unit that is not exact to the next; the scan in between is `exact_run`,
        // compiled here.
        let whole = buf.len() / UNIT * UNIT;
        let mut good = 0;
        let mut at = 0;
        while at < whole {
            let run = self.exact_run(&buf[at..whole], offset + at as u64);
            good += run;
            at += run * UNIT;
            if at >= whole {
                break;
            }
            let off = offset + at as u64;
            match self.classify_unit(&buf[at..at + UNIT], off) {
                UnitClass::Good => good += 1,
                other => report(off, other),
            }
            at += UNIT;
        }
        good
    }

    /// How many whole units from the start of `buf` (read from byte `offset`) are exactly
    /// their stamps: the hot loop of every check. Not inlined, so that it keeps this
    /// crate's optimisation (Cargo.toml) whatever its callers are built with.
    #[inline(never)]
    pub fn exact_run(&self, buf: &[u8], offset: u64) -> usize {
        buf.chunks_exact(UNIT)
            .enumerate()
            .take_while(|(n, unit)| self.is_exact(unit, offset + (n * UNIT) as u64))
            .count()
    }
}

/// The `(offset, salt)` whose stamp `unit` is exactly, of any run; `None` for anything
/// else. The header is checked first (three words and one multiply), so data that is not a
/// stamp costs next to nothing; only a valid header pays for comparing the payload.
pub fn recognise(unit: &[u8]) -> Option<(u64, u64)> {
    if unit.len() != UNIT {
        return None;
    }
    let word = |i: usize| {
        let w = &unit[i * 8..i * 8 + 8];
        u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
    };
    let (offset, salt) = (word(0), word(1));
    if word(2) != check_word(offset, salt) {
        return None;
    }
    Stamper::new(salt)
        .is_exact(unit, offset)
        .then_some((offset, salt))
}

/// Write into `buf` the bytes of the stamps of `salt` starting at stamp offset `offset`
/// (a unit boundary), skipping the first `skip` bytes (`skip < UNIT`): `buf` then holds
/// bytes `[offset + skip, offset + skip + buf.len())` of that run of stamps. The inverse
/// of [`recognise`] for runs of consecutive units.
pub fn regenerate(buf: &mut [u8], offset: u64, salt: u64, skip: usize) {
    let stamper = Stamper::new(salt);
    let mut off = offset;
    let mut rest = buf;
    if skip > 0 || rest.len() < UNIT {
        let mut unit = [0u8; UNIT];
        stamper.fill_unit(&mut unit, off);
        let skip = skip.min(UNIT);
        let n = (UNIT - skip).min(rest.len());
        rest[..n].copy_from_slice(&unit[skip..skip + n]);
        rest = &mut rest[n..];
        off = off.wrapping_add(UNIT as u64); // past the last unit only when nothing is left
    }
    let whole = rest.len() / UNIT * UNIT;
    let (body, tail) = rest.split_at_mut(whole);
    stamper.fill(body, off);
    if !tail.is_empty() {
        let mut unit = [0u8; UNIT];
        stamper.fill_unit(&mut unit, off + whole as u64);
        let n = tail.len();
        tail.copy_from_slice(&unit[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_round_trip_and_differ_by_offset_and_salt() {
        let s = Stamper::new(42);
        let mut a = vec![0u8; 4096];
        s.fill(&mut a, 1 << 30);
        assert_eq!(s.check(&a, 1 << 30, |_, c| panic!("{c:?}")), 8);
        let mut b = vec![0u8; 4096];
        s.fill(&mut b, (1 << 30) + 4096);
        assert_ne!(a, b);
        let mut c = vec![0u8; 4096];
        Stamper::new(43).fill(&mut c, 1 << 30);
        assert_ne!(a, c);
        assert_eq!(u64::from_le_bytes(a[0..8].try_into().unwrap()), 1 << 30);
    }

    #[test]
    fn units_are_classified_good_changed_overwritten_bad() {
        let s = Stamper::new(7);
        let mut unit = vec![0u8; UNIT];
        s.fill(&mut unit, 8192);
        assert_eq!(s.classify_unit(&unit, 8192), UnitClass::Good);
        // A few bit flips, even in the header, are "changed".
        let mut flipped = unit.clone();
        flipped[0] ^= 1;
        flipped[100] ^= 0x80;
        flipped[511] ^= 0x10;
        assert_eq!(
            s.classify_unit(&flipped, 8192),
            UnitClass::Changed { bits: 3 }
        );
        // A valid stamp of another offset says where it came from.
        assert_eq!(
            s.classify_unit(&unit, 8192 + (1 << 33)),
            UnitClass::Overwritten { from: 8192 }
        );
        // Blank, erased, stale (other salt) and random data are bad.
        assert_eq!(s.classify_unit(&[0u8; UNIT], 8192), UnitClass::Bad);
        assert_eq!(s.classify_unit(&[0xffu8; UNIT], 8192), UnitClass::Bad);
        let mut stale = vec![0u8; UNIT];
        Stamper::new(8).fill(&mut stale, 8192);
        assert_eq!(s.classify_unit(&stale, 8192), UnitClass::Bad);
        let mut torn = unit.clone();
        torn[256..].fill(0);
        assert_eq!(s.classify_unit(&torn, 8192), UnitClass::Bad);
        assert_eq!(s.classify_unit(&unit[..100], 8192), UnitClass::Bad);
        assert_eq!(s.claimed_offset(&unit), Some(8192));
        assert_eq!(s.claimed_offset(&[0u8; UNIT]), None);
        assert_eq!(s.claimed_offset(&stale), None);
    }

    #[test]
    fn check_reports_only_the_units_that_are_not_good() {
        let s = Stamper::new(99);
        let mut buf = vec![0u8; 8 * UNIT];
        s.fill(&mut buf, 0);
        buf[3 * UNIT + 17] ^= 4;
        buf[5 * UNIT..6 * UNIT].fill(0);
        let mut seen = Vec::new();
        let good = s.check(&buf, 0, |off, c| seen.push((off, c)));
        assert_eq!(good, 6);
        assert_eq!(
            seen,
            vec![
                (3 * UNIT as u64, UnitClass::Changed { bits: 1 }),
                (5 * UNIT as u64, UnitClass::Bad)
            ]
        );
    }

    #[test]
    fn another_offsets_stamp_is_never_mistaken_for_a_few_flipped_bits() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        let s = Stamper::new(rng.gen());
        let mut unit = vec![0u8; UNIT];
        for _ in 0..2000 {
            let y = rng.gen_range(0..1u64 << 40) / UNIT as u64 * UNIT as u64;
            // Neighbours, powers of two apart (typical wrap moduli) and random distances.
            let d = match rng.gen_range(0..3) {
                0 => UNIT as u64,
                1 => 1u64 << rng.gen_range(9..40),
                _ => rng.gen_range(1..1u64 << 30) * UNIT as u64,
            };
            let x = y.wrapping_add(d) % (1 << 41);
            s.fill(&mut unit, y);
            if x != y {
                assert_eq!(
                    s.classify_unit(&unit, x),
                    UnitClass::Overwritten { from: y }
                );
            }
            let mut noise = vec![0u8; UNIT];
            rng.fill(&mut noise[..]);
            assert_eq!(s.classify_unit(&noise, x), UnitClass::Bad);
        }
    }

    #[test]
    fn recognise_finds_exact_stamps_of_any_run_and_nothing_else() {
        let s = Stamper::new(0x1234_5678_9abc_def1);
        let mut buf = vec![0u8; 4 * UNIT];
        s.fill(&mut buf, 3 << 30);
        for (n, unit) in buf.chunks(UNIT).enumerate() {
            assert_eq!(
                recognise(unit),
                Some(((3 << 30) + (n * UNIT) as u64, s.salt))
            );
        }
        // One flipped bit anywhere (header or payload) is not a stamp any more.
        for byte in [0, 8, 16, 24, 300, UNIT - 1] {
            let mut bad = buf[..UNIT].to_vec();
            bad[byte] ^= 0x40;
            assert_eq!(recognise(&bad), None, "flip in byte {byte}");
        }
        assert_eq!(recognise(&[0u8; UNIT]), None);
        assert_eq!(recognise(&[0xffu8; UNIT]), None);
        assert_eq!(recognise(&buf[..UNIT - 8]), None);
        assert_eq!(recognise(&buf[1..UNIT + 1]), None);
    }

    #[test]
    fn regenerate_gives_any_byte_range_of_a_run() {
        let s = Stamper::new(77);
        let mut full = vec![0u8; 6 * UNIT];
        s.fill(&mut full, 1 << 20);
        for (skip, len) in [(0, 6 * UNIT), (0, 100), (5, 3), (511, 1), (100, 5 * UNIT)] {
            let mut out = vec![0u8; len];
            regenerate(&mut out, 1 << 20, 77, skip);
            assert_eq!(out, &full[skip..skip + len], "skip {skip} len {len}");
        }
        let mut out = vec![0u8; 2 * UNIT + 7];
        regenerate(&mut out[3..3 + 2 * UNIT], (1 << 20) + UNIT as u64, 77, 0);
        assert_eq!(&out[3..3 + 2 * UNIT], &full[UNIT..3 * UNIT]);
    }

    #[test]
    fn exact_run_stops_at_the_first_unit_that_is_not_its_stamp() {
        let s = Stamper::new(7);
        let mut buf = vec![0u8; 8 * UNIT + 100];
        s.fill(&mut buf[..8 * UNIT], 4096);
        assert_eq!(s.exact_run(&buf, 4096), 8, "the partial tail is not a unit");
        assert_eq!(s.exact_run(&buf, 4096 + UNIT as u64), 0);
        buf[5 * UNIT + 300] ^= 1;
        assert_eq!(s.exact_run(&buf, 4096), 5);
        let mut bad = Vec::new();
        assert_eq!(s.check(&buf, 4096, |o, c| bad.push((o, c))), 7);
        assert_eq!(
            bad,
            [(4096 + 5 * UNIT as u64, UnitClass::Changed { bits: 1 })]
        );
    }

    /// The payload as `payload_word` defines it, word by word, against what `fill` and
    /// `is_exact` do on aligned and unaligned buffers (the SIMD path and the plain one).
    #[test]
    fn every_word_of_a_stamp_is_payload_word_and_only_it_passes() {
        let s = Stamper::new(0x5eed_0123_4567_89ab);
        let mut backing = vec![0u8; 4 * UNIT + 16];
        let base = backing.as_ptr().align_offset(16);
        for shift in [0usize, 1, 8] {
            let buf = &mut backing[base + shift..base + shift + 3 * UNIT];
            s.fill(buf, 7 * UNIT as u64);
            for (n, unit) in buf.chunks_exact(UNIT).enumerate() {
                let off = (7 + n) as u64 * UNIT as u64;
                let key = unit_key(off, s.salt);
                for (i, w) in unit.chunks_exact(8).enumerate() {
                    let want = match i {
                        0 => off,
                        1 => s.salt,
                        2 => check_word(off, s.salt),
                        _ => payload_word(key, i),
                    };
                    assert_eq!(w, want.to_le_bytes(), "shift {shift} unit {n} word {i}");
                }
                assert!(s.is_exact(unit, off), "shift {shift} unit {n}");
            }
            // One flipped bit in each word position is seen.
            for i in 0..UNIT / 8 {
                buf[i * 8 + 3] ^= 0x10;
                assert!(
                    !s.is_exact(&buf[..UNIT], 7 * UNIT as u64),
                    "shift {shift} word {i}"
                );
                buf[i * 8 + 3] ^= 0x10;
            }
        }
    }

    #[test]
    fn random_salts_differ() {
        assert_ne!(Stamper::random_salt(), Stamper::random_salt());
    }
}
