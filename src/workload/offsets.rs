//! Where each I/O goes and how long it is: sequential with wrap-around, or uniformly random
//! over the job's region, aligned to the smallest block size (fio's default `blockalign`).

use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read = 0,
    Write = 1,
}

/// Offsets and lengths for one job; deterministic for a seed.
pub struct OffsetGen {
    start: u64,
    size: u64,
    bs_min: u64,
    /// How many multiples of `bs_min` a block may span (1 for a fixed block size).
    bs_steps: u64,
    random: bool,
    /// Next sequential offset (relative to `start`) per direction.
    pos: [u64; 2],
    rng: Pcg64Mcg,
}

impl OffsetGen {
    /// A generator over `[start, start + size)`; `bs_max` is rounded down to a multiple of
    /// `bs_min`.
    pub fn new(start: u64, size: u64, bs_min: u64, bs_max: u64, random: bool, seed: u64) -> Self {
        let bs_min = bs_min.max(1);
        OffsetGen {
            start,
            size,
            bs_min,
            bs_steps: (bs_max / bs_min).max(1),
            random,
            pos: [0, 0],
            rng: Pcg64Mcg::seed_from_u64(seed),
        }
    }

    /// The next block for direction `dir`: (offset, length), at most `left` bytes long
    /// when `left` ≥ the smallest block (a size-based job ends on its size exactly, as
    /// fio's does). A sequential block that would cross the region's end is cut there,
    /// as fio cuts it, when at least the smallest block fits; otherwise it wraps.
    #[inline]
    pub fn next(&mut self, dir: Dir, left: u64) -> (u64, u64) {
        let len = if self.bs_steps == 1 {
            self.bs_min
        } else {
            self.bs_min * self.rng.gen_range(1..=self.bs_steps)
        };
        let mut len = len.min(self.size);
        if left >= self.bs_min {
            len = len.min(left / self.bs_min * self.bs_min);
        }
        if self.random {
            let slots = (self.size - len) / self.bs_min + 1;
            let k = if slots == 1 {
                0
            } else {
                self.rng.gen_range(0..slots)
            };
            (self.start + k * self.bs_min, len)
        } else {
            let p = &mut self.pos[dir as usize];
            if *p + len > self.size {
                let room = (self.size - *p) / self.bs_min * self.bs_min;
                if room > 0 {
                    len = room;
                } else {
                    *p = 0;
                }
            }
            let off = self.start + *p;
            *p += len;
            (off, len)
        }
    }

    /// Draw a direction for a mixed job: read with probability `rwmixread` %.
    #[inline]
    pub fn mixed_dir(&mut self, rwmixread: u32) -> Dir {
        if self.rng.gen_range(0..100u32) < rwmixread {
            Dir::Read
        } else {
            Dir::Write
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_wraps_inside_the_region() {
        let mut g = OffsetGen::new(4096, 3 * 4096, 4096, 4096, false, 1);
        let offs: Vec<u64> = (0..5).map(|_| g.next(Dir::Read, u64::MAX).0).collect();
        assert_eq!(offs, vec![4096, 8192, 12288, 4096, 8192]);
    }

    #[test]
    fn variable_sequential_blocks_are_cut_at_the_region_end_and_the_job_size() {
        // 4-64 KiB blocks over 1 MiB: one pass covers every byte once, the last block
        // cut to what is left; a size cap cuts a block the same way.
        let mut g = OffsetGen::new(0, 1 << 20, 4096, 65536, false, 5);
        let mut next = 0;
        while next < 1 << 20 {
            let (o, l) = g.next(Dir::Write, u64::MAX);
            assert_eq!(o, next);
            next += l;
        }
        assert_eq!(next, 1 << 20);
        assert_eq!(g.next(Dir::Write, u64::MAX).0, 0, "then it wraps");
        let mut g = OffsetGen::new(0, 1 << 20, 4096, 65536, false, 5);
        let (_, l) = g.next(Dir::Write, 8192);
        assert!((4096..=8192).contains(&l));
    }

    #[test]
    fn random_stays_aligned_and_inside() {
        let mut g = OffsetGen::new(1 << 20, 1 << 20, 4096, 65536, true, 9);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let (o, l) = g.next(Dir::Write, u64::MAX);
            assert_eq!(o % 4096, 0);
            assert_eq!(l % 4096, 0);
            assert!((4096..=65536).contains(&l));
            assert!(o >= 1 << 20 && o + l <= 2 << 20);
            seen.insert(o);
        }
        assert!(seen.len() > 200, "offsets should spread: {}", seen.len());
    }

    #[test]
    fn mix_follows_the_percentage() {
        let mut g = OffsetGen::new(0, 1 << 20, 4096, 4096, true, 3);
        let reads = (0..10_000).filter(|_| g.mixed_dir(70) == Dir::Read).count();
        assert!((6700..7300).contains(&reads), "{reads}");
    }
}
