//! Sparse data store: only written data costs memory, so a 1 TiB simulated card costs
//! what was written to it. Chunks that hold only zeros are not kept (reads give zeros).
//!
//! Runs of block stamps (the units `probe` and `verify` write, see
//! [`crate::pattern`]) are kept as a description instead of bytes: "the units at
//! physical `[p, p+len)` are the stamps of offsets `x, x+512, …` with salt `s`", and are
//! regenerated when read. The offset kept is the one each stamp carries, not its physical
//! position, so data a fake card aliases elsewhere reads back as written. This is only a
//! storage encoding: reads return exactly the bytes written, whatever they are, and a
//! verify of a whole 16 GiB card costs a few bytes instead of 16 GiB.

use crate::pattern::{self, UNIT};
use std::collections::{BTreeMap, HashMap};

const CHUNK: usize = 4096;
const UNIT_U64: u64 = UNIT as u64;

/// One chunk of zeros to compare against (slice equality is a memcmp, fast even in debug
/// builds, which GiB-scale simulated writes need).
static ZEROS: [u8; 1 << 16] = [0u8; 1 << 16];

fn is_zero(data: &[u8]) -> bool {
    data.chunks(ZEROS.len()).all(|c| c == &ZEROS[..c.len()])
}

/// Consecutive stamp units stored as their description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StampRun {
    /// Bytes covered, a multiple of `UNIT`.
    len: u64,
    /// The offset embedded in the run's first unit (the logical offset it was written
    /// for, which on a fake card differs from where it landed).
    stamp_offset: u64,
    salt: u64,
}

/// Memory one run costs in the map, counted as held data.
const RUN_BYTES: usize = std::mem::size_of::<(u64, StampRun)>();

/// Bytes at physical offsets: stamp runs as descriptions, everything else in 4 KiB chunks.
///
/// Invariants: runs do not overlap and start and end on `UNIT` boundaries; chunk bytes
/// under a run are zero (a chunk holding nothing else is dropped).
#[derive(Default)]
pub struct SparseStore {
    chunks: HashMap<u64, Box<[u8]>>,
    /// Physical start → run.
    runs: BTreeMap<u64, StampRun>,
}

impl SparseStore {
    pub fn new() -> Self {
        SparseStore::default()
    }

    /// Bytes of data held: chunk bytes plus the size of the run descriptions (excluding
    /// the maps' own bookkeeping).
    pub fn resident_bytes(&self) -> u64 {
        (self.chunks.len() * CHUNK + self.runs.len() * RUN_BYTES) as u64
    }

    /// Copy `buf.len()` bytes from physical offset `pos`; never-written bytes read as zero.
    pub fn read(&self, pos: u64, buf: &mut [u8]) {
        self.read_chunks(pos, buf);
        if self.runs.is_empty() || buf.is_empty() {
            return;
        }
        let end = pos.saturating_add(buf.len() as u64);
        let first = self.run_at_or_before(pos).unwrap_or(pos);
        for (&start, run) in self.runs.range(first..end) {
            let run_end = start + run.len;
            if run_end <= pos {
                continue;
            }
            let s = start.max(pos);
            let e = run_end.min(end);
            let within = s - start;
            let unit = within - within % UNIT_U64;
            pattern::regenerate(
                &mut buf[(s - pos) as usize..(e - pos) as usize],
                run.stamp_offset + unit,
                run.salt,
                (within - unit) as usize,
            );
        }
    }

    /// Store `data` at physical offset `pos`.
    pub fn write(&mut self, pos: u64, data: &[u8]) {
        if self.chunks.is_empty() && self.runs.is_empty() && is_zero(data) {
            return; // zeros over never-written space: nothing to keep
        }
        // Split into runs of consecutive stamps on unit boundaries and the bytes between.
        let mut raw_from = 0;
        let mut at = ((UNIT_U64 - pos % UNIT_U64) % UNIT_U64) as usize;
        while at + UNIT <= data.len() {
            let Some((offset, salt)) = pattern::recognise(&data[at..at + UNIT]) else {
                at += UNIT;
                continue;
            };
            let start = at;
            at += UNIT;
            let mut next = offset.checked_add(UNIT_U64);
            while at + UNIT <= data.len()
                && next.is_some()
                && pattern::recognise(&data[at..at + UNIT]) == next.map(|n| (n, salt))
            {
                at += UNIT;
                next = next.and_then(|n| n.checked_add(UNIT_U64));
            }
            if raw_from < start {
                self.write_raw(pos + raw_from as u64, &data[raw_from..start]);
            }
            self.put_run(pos + start as u64, (at - start) as u64, offset, salt);
            raw_from = at;
        }
        if raw_from < data.len() {
            self.write_raw(pos + raw_from as u64, &data[raw_from..]);
        }
    }

    /// Forget `[pos, pos+len)` (an erase): it reads as zeros afterwards.
    pub fn erase(&mut self, pos: u64, len: u64) {
        let end = pos.saturating_add(len);
        self.cut_runs(pos, end);
        self.clear_chunks(pos, end);
    }

    /// Start of the run that contains `pos`, if any.
    fn run_at_or_before(&self, pos: u64) -> Option<u64> {
        self.runs
            .range(..=pos)
            .next_back()
            .filter(|(&s, r)| s + r.len > pos)
            .map(|(&s, _)| s)
    }

    fn read_chunks(&self, mut pos: u64, buf: &mut [u8]) {
        if self.chunks.is_empty() {
            buf.fill(0);
            return;
        }
        let mut done = 0;
        while done < buf.len() {
            let idx = pos / CHUNK as u64;
            let within = (pos % CHUNK as u64) as usize;
            let n = (CHUNK - within).min(buf.len() - done);
            match self.chunks.get(&idx) {
                Some(c) => buf[done..done + n].copy_from_slice(&c[within..within + n]),
                None => buf[done..done + n].fill(0),
            }
            done += n;
            pos += n as u64;
        }
    }

    /// Store bytes that are kept as they are, replacing any run under them.
    fn write_raw(&mut self, pos: u64, data: &[u8]) {
        self.cut_runs(pos, pos + data.len() as u64);
        if self.chunks.is_empty() && is_zero(data) {
            return;
        }
        self.write_chunks(pos, data);
    }

    fn write_chunks(&mut self, mut pos: u64, data: &[u8]) {
        let mut done = 0;
        while done < data.len() {
            let idx = pos / CHUNK as u64;
            let within = (pos % CHUNK as u64) as usize;
            let n = (CHUNK - within).min(data.len() - done);
            let part = &data[done..done + n];
            let zero = is_zero(part);
            if n == CHUNK && zero {
                self.chunks.remove(&idx);
            } else if let Some(c) = self.chunks.get_mut(&idx) {
                c[within..within + n].copy_from_slice(part);
                if zero && is_zero(c) {
                    self.chunks.remove(&idx);
                }
            } else if !zero {
                let mut c = vec![0u8; CHUNK].into_boxed_slice();
                c[within..within + n].copy_from_slice(part);
                self.chunks.insert(idx, c);
            }
            done += n;
            pos += n as u64;
        }
    }

    /// Zero the chunk bytes of `[pos, end)`, dropping chunks that become all zero.
    fn clear_chunks(&mut self, pos: u64, end: u64) {
        let mut p = pos;
        while p < end && !self.chunks.is_empty() {
            let idx = p / CHUNK as u64;
            let within = (p % CHUNK as u64) as usize;
            let n = (CHUNK as u64 - within as u64).min(end - p);
            if n == CHUNK as u64 {
                self.chunks.remove(&idx);
            } else if let Some(c) = self.chunks.get_mut(&idx) {
                c[within..within + n as usize].fill(0);
                if is_zero(c) {
                    self.chunks.remove(&idx);
                }
            }
            p += n;
        }
    }

    /// Remove runs from `[a, b)`. A unit only partly inside is written out as bytes first,
    /// so its bytes outside `[a, b)` survive; the caller then overwrites `[a, b)`.
    fn cut_runs(&mut self, a: u64, b: u64) {
        if self.runs.is_empty() || a >= b {
            return;
        }
        let first = self.run_at_or_before(a).unwrap_or(a);
        let hit: Vec<(u64, StampRun)> = self
            .runs
            .range(first..b)
            .filter(|(&s, r)| s + r.len > a)
            .map(|(&s, &r)| (s, r))
            .collect();
        for (s, run) in hit {
            self.runs.remove(&s);
            let e = s + run.len;
            let a0 = a - a % UNIT_U64; // start of the unit holding a
            let b0 = b - b % UNIT_U64; // start of the unit holding b
            if s < a {
                if a0 > s {
                    self.runs.insert(s, StampRun { len: a0 - s, ..run });
                }
                if a0 < a {
                    self.materialise(s, run, a0);
                }
            }
            if b < e {
                if b0 < b {
                    self.materialise(s, run, b0); // may be a0 again: same bytes
                }
                let b1 = if b0 < b { b0 + UNIT_U64 } else { b };
                if b1 < e {
                    self.runs.insert(
                        b1,
                        StampRun {
                            len: e - b1,
                            stamp_offset: run.stamp_offset + (b1 - s),
                            ..run
                        },
                    );
                }
            }
        }
    }

    /// Write the unit of `run` (starting at physical `s`) at physical `unit` as bytes.
    fn materialise(&mut self, s: u64, run: StampRun, unit: u64) {
        let mut bytes = [0u8; UNIT];
        pattern::regenerate(&mut bytes, run.stamp_offset + (unit - s), run.salt, 0);
        self.write_chunks(unit, &bytes);
    }

    /// Record `[pos, pos+len)` (unit-aligned) as the stamps of `offset..` with `salt`,
    /// merging with neighbouring runs that continue it.
    fn put_run(&mut self, pos: u64, len: u64, offset: u64, salt: u64) {
        self.cut_runs(pos, pos + len);
        self.clear_chunks(pos, pos + len);
        let mut start = pos;
        let mut run = StampRun {
            len,
            stamp_offset: offset,
            salt,
        };
        if let Some((&ls, &left)) = self.runs.range(..pos).next_back() {
            if ls + left.len == pos
                && left.salt == salt
                && left.stamp_offset.checked_add(left.len) == Some(offset)
            {
                self.runs.remove(&ls);
                start = ls;
                run = StampRun {
                    len: left.len + len,
                    stamp_offset: left.stamp_offset,
                    salt,
                };
            }
        }
        let end = pos + len;
        if let Some(&right) = self.runs.get(&end) {
            if right.salt == salt && offset.checked_add(len) == Some(right.stamp_offset) {
                self.runs.remove(&end);
                run.len += right.len;
            }
        }
        self.runs.insert(start, run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_round_trip_and_zero_chunks_free_memory() {
        let mut s = SparseStore::new();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8 + 1).collect();
        s.write(1 << 40, &data);
        let mut back = vec![0u8; data.len()];
        s.read(1 << 40, &mut back);
        assert_eq!(back, data);
        assert!(s.resident_bytes() <= 4 * 4096);
        s.write(1 << 40, &vec![0u8; 12288]);
        s.erase((1 << 40) + 12288, 4096);
        assert_eq!(s.resident_bytes(), 0);
        let mut unwritten = vec![7u8; 100];
        s.read(12345, &mut unwritten);
        assert!(unwritten.iter().all(|&b| b == 0));
    }

    use crate::pattern::Stamper;
    use rand::{Rng, SeedableRng};

    fn stamps(salt: u64, offset: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        Stamper::new(salt).fill(&mut v, offset);
        v
    }

    fn read(s: &SparseStore, pos: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0xeeu8; len];
        s.read(pos, &mut v);
        v
    }

    #[test]
    fn stamps_round_trip_byte_identical_in_a_few_bytes() {
        let mut s = SparseStore::new();
        // 64 MiB written in 1 MiB pieces, as verify does: one run.
        for i in 0..64u64 {
            s.write(i << 20, &stamps(9, i << 20, 1 << 20));
        }
        assert_eq!(s.runs.len(), 1);
        assert!(s.chunks.is_empty());
        assert!(s.resident_bytes() < 100, "{}", s.resident_bytes());
        for (pos, len) in [
            (0, 1 << 20),
            ((7 << 20) - 300, 5000),
            (12345, 1),
            (63 << 20, 1 << 20),
        ] {
            let mut want = stamps(9, pos - pos % 512, len + 1024);
            want.drain(..(pos % 512) as usize);
            want.truncate(len);
            assert_eq!(read(&s, pos, len), want, "at {pos}+{len}");
        }
        // Reads beyond the run give zeros; the run does not leak past its end.
        assert_eq!(read(&s, (64 << 20) - 512, 1024)[512..], [0u8; 512]);
        // Zeros written over the run (with no other data held) replace it.
        s.write(1 << 20, &[0u8; 4096]);
        assert!(read(&s, 1 << 20, 4096).iter().all(|&b| b == 0));
        assert_eq!(
            read(&s, (1 << 20) + 4096, 512),
            stamps(9, (1 << 20) + 4096, 512)
        );
    }

    #[test]
    fn mixed_stamp_and_other_data_keeps_only_the_other_data_as_bytes() {
        let mut s = SparseStore::new();
        let mut data = stamps(3, 1 << 30, 64 * 1024);
        data[8192..12288].fill(0x5a); // one 4 KiB chunk of foreign data
        data[40000] ^= 1; // one flipped bit: that unit must be kept as bytes
        s.write(1 << 30, &data);
        assert_eq!(read(&s, 1 << 30, data.len()), data);
        assert_eq!(
            s.chunks.len(),
            2,
            "the foreign chunk and the flipped unit's chunk"
        );
        assert_eq!(s.runs.len(), 3);
        // Another run's stamps (salt) in the middle are a separate run, not a merge.
        let other = stamps(4, 1 << 30, 512);
        s.write((1 << 30) + 20480, &other);
        data[20480..20992].copy_from_slice(&other);
        assert_eq!(read(&s, 1 << 30, data.len()), data);
        // Stamps that continue a run's offsets but with another salt do not extend it.
        let mut want = stamps(1, 0, 1536);
        want[512..1024].copy_from_slice(&stamps(2, 512, 512));
        for order in [[0, 512, 1024], [1024, 0, 512]] {
            let mut t = SparseStore::new();
            for at in order {
                t.write(at, &want[at as usize..at as usize + 512]);
            }
            assert_eq!(read(&t, 0, 1536), want, "written in order {order:?}");
        }
    }

    #[test]
    fn partial_overwrites_split_a_run_and_keep_its_other_bytes() {
        let mut s = SparseStore::new();
        let mut want = stamps(5, 0, 16 * 512);
        s.write(0, &want);
        // Inside one unit, across a unit boundary, and whole units.
        for (at, len, byte) in [
            (100, 10, 1u8),
            (1000, 100, 2),
            (4096, 1024, 3),
            (7 * 512 + 511, 1, 4),
        ] {
            s.write(at, &vec![byte; len]);
            want[at as usize..at as usize + len].fill(byte);
            assert_eq!(read(&s, 0, want.len()), want, "after {at}+{len}");
        }
        // Zeros over part of a run, then an erase of another part.
        s.write(6 * 512 + 3, &[0u8; 700]);
        want[6 * 512 + 3..6 * 512 + 703].fill(0);
        s.erase(10 * 512 + 17, 2000);
        want[10 * 512 + 17..10 * 512 + 2017].fill(0);
        assert_eq!(read(&s, 0, want.len()), want);
        // Stamps written again over everything leave nothing else behind.
        s.write(0, &stamps(5, 0, 16 * 512));
        assert_eq!((s.runs.len(), s.chunks.len()), (1, 0));
        s.erase(0, 16 * 512);
        assert_eq!(s.resident_bytes(), 0);
        assert!(read(&s, 0, 16 * 512).iter().all(|&b| b == 0));
    }

    #[test]
    fn the_stamps_own_offset_is_kept_not_the_physical_position() {
        let mut s = SparseStore::new();
        // A wrapping fake: logical 40 MiB lands at physical 8 MiB; a stamp of logical
        // 8 MiB was already there and one of 24 MiB arrives just after it.
        s.write(8 << 20, &stamps(1, 8 << 20, 8192));
        s.write(8 << 20, &stamps(1, 40 << 20, 4096));
        s.write((8 << 20) + 4096, &stamps(1, 24 << 20, 4096));
        let back = read(&s, 8 << 20, 8192);
        assert_eq!(back[..4096], stamps(1, 40 << 20, 4096)[..]);
        assert_eq!(back[4096..], stamps(1, 24 << 20, 4096)[..]);
        assert_eq!(
            Stamper::new(1).classify_unit(&back[..512], 8 << 20),
            crate::pattern::UnitClass::Overwritten { from: 40 << 20 }
        );
        assert_eq!(s.runs.len(), 2, "not one run: the offsets do not continue");
        // Stamps at a physical position that is not on a unit boundary are stored as bytes.
        let odd = stamps(1, 0, 2048);
        s.write(100, &odd);
        assert_eq!(read(&s, 100, 2048), odd);
        // A stamp claiming the last unit of the offset space does not overflow anything.
        let last = stamps(1, u64::MAX - 511, 512);
        s.write(1 << 20, &last);
        assert_eq!(read(&s, (1 << 20) + 100, 10), last[100..110]);
        s.write((1 << 20) + 200, &[9u8; 5]);
        assert_eq!(read(&s, 1 << 20, 200), last[..200]);
    }

    /// Random writes of stamps (whole, shifted, damaged), other data and zeros, and
    /// erases, against a plain byte array.
    #[test]
    fn random_operations_read_back_like_a_plain_array() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        const SPACE: usize = 64 * 1024;
        for round in 0..40 {
            let mut s = SparseStore::new();
            let mut model = vec![0u8; SPACE];
            for op in 0..60 {
                let len = rng.gen_range(1..8 * 1024);
                let pos = if rng.gen_bool(0.6) {
                    rng.gen_range(0..(SPACE - len) / 512) * 512
                } else {
                    rng.gen_range(0..SPACE - len)
                };
                let mut data = vec![0u8; len];
                match rng.gen_range(0..6) {
                    0..=2 => {
                        let off = rng.gen_range(0..1u64 << 34) / 512 * 512;
                        let salt = rng.gen_range(1..3);
                        let mut full = stamps(salt, off, len + 512);
                        let skip = if rng.gen_bool(0.8) {
                            0
                        } else {
                            rng.gen_range(0..512)
                        };
                        data.copy_from_slice(&full.split_off(skip)[..len]);
                        if rng.gen_bool(0.2) {
                            let i = rng.gen_range(0..len);
                            data[i] ^= 1 << rng.gen_range(0..8);
                        }
                    }
                    3 => rng.fill(&mut data[..]),
                    4 => {}
                    _ => {
                        s.erase(pos as u64, len as u64);
                        model[pos..pos + len].fill(0);
                        continue;
                    }
                }
                s.write(pos as u64, &data);
                model[pos..pos + len].copy_from_slice(&data);
                assert_eq!(read(&s, 0, SPACE), model, "round {round} op {op}");
                let a = rng.gen_range(0..SPACE);
                let b = rng.gen_range(a..=SPACE);
                assert_eq!(
                    read(&s, a as u64, b - a),
                    model[a..b],
                    "round {round} op {op}"
                );
                for (&start, run) in &s.runs {
                    assert!(start % 512 == 0 && run.len % 512 == 0 && run.len > 0);
                }
                let ends: Vec<_> = s.runs.iter().map(|(&st, r)| (st, st + r.len)).collect();
                assert!(ends.windows(2).all(|w| w[0].1 <= w[1].0), "runs overlap");
            }
        }
    }

    #[test]
    fn partial_chunk_writes_keep_neighbours() {
        let mut s = SparseStore::new();
        s.write(0, &[1u8; 4096]);
        s.write(100, &[2u8; 10]);
        let mut b = [0u8; 4096];
        s.read(0, &mut b);
        assert_eq!(b[99], 1);
        assert_eq!(b[100], 2);
        assert_eq!(b[110], 1);
    }
}
