//! The open-AU probe (flashbench `--open-au`, made automatic): write small blocks to N
//! erase blocks in turn and see at which N the throughput collapses.
//!
//! Detection runs at the smallest block size over counts 1, 2, … 8, then doubling to
//! `max_au`, stops at the first collapse and bisects to the exact cut-off, then repeats
//! both sides once. Each measurement writes `rounds` blocks into each erase block (the
//! first round, which opens the blocks, is not timed); the rate is the block size over the
//! slowest erase block's median write time, so a rare garbage-collection pause does not
//! decide but one erase block that pays for every write does. Finally the
//! whole block-size ladder (erase size down) is measured at the two counts around the
//! cut-off, as flashbench shows it. The probe decides only where to measure next.

use super::write_common::{ladder, permutation, random_buffer, stop_reason, Deadline};
use crate::analysis::openau::{classify, Class, OpenAuPoint};
use crate::analysis::stats::median_ns;
use crate::backend::{AlignedBuf, Backend, Timed};
use serde::{Deserialize, Serialize};
use std::io;

/// What to measure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenAuParams {
    pub erase_bytes: u64,
    /// Smallest block size (the detection size).
    pub block_bytes: u64,
    pub max_au: u32,
    /// Start of the first erase block used (a multiple of the erase size).
    pub offset_bytes: u64,
    /// Also measure random order inside each erase block.
    pub random: bool,
    /// Blocks written into each erase block per detection measurement.
    pub rounds: u32,
    pub seed: u64,
    pub time_budget_ns: Option<u64>,
    /// Measure the block-size ladder around the cut-off (the table); off, only detection.
    pub ladder: bool,
    /// Write zeros instead of pseudo-random data (cheaper for the simulator to hold).
    pub zeros: bool,
}

impl OpenAuParams {
    /// Defaults for a device with `erase` byte erase blocks: 16 KiB blocks, up to 32 open,
    /// starting past the FAT area (`default_offset`).
    pub fn new(erase: u64) -> Self {
        OpenAuParams {
            erase_bytes: erase,
            block_bytes: 16384.min(erase),
            max_au: 32,
            offset_bytes: default_offset(erase),
            random: false,
            rounds: 16,
            seed: 1,
            time_budget_ns: None,
            ladder: true,
            zeros: false,
        }
    }

    /// The detection block size: the smallest size of the ladder.
    pub fn detect_bytes(&self, sector: u64) -> u64 {
        ladder(self.erase_bytes, self.block_bytes, sector)
            .last()
            .copied()
            .unwrap_or(self.erase_bytes)
    }

    /// Blocks per erase block at block size `bs` in the ladder phase.
    pub fn ladder_rounds(&self, bs: u64) -> u64 {
        ((1u64 << 20) / bs)
            .clamp(1, 16)
            .min(self.erase_bytes / bs)
            .max(1)
    }

    /// Bytes the probe writes at most (the counts it may measure, both orders).
    pub fn max_bytes(&self, sector: u64) -> u64 {
        let det = self.detect_bytes(sector) * self.rounds as u64;
        let counts = sweep_counts(self.max_au);
        let m = self.max_au as u64;
        let detection = (counts.iter().map(|&c| c as u64).sum::<u64>() + 8 * m) * det;
        let per_au: u64 = ladder(self.erase_bytes, self.block_bytes, sector)
            .iter()
            .map(|&bs| bs * self.ladder_rounds(bs))
            .sum();
        let ladders = (2 * m + 1) * per_au;
        (detection + ladders) * if self.random { 2 } else { 1 }
    }

    /// Bytes a device with `open_au` open blocks makes the probe write (for the plan text).
    pub fn typical_bytes(&self, sector: u64, open_au: u32) -> u64 {
        let det = self.detect_bytes(sector) * self.rounds as u64;
        let n = open_au.min(self.max_au) as u64;
        let detection = ((1..=n + 1).sum::<u64>() + 2 * n + 1) * det;
        let per_au: u64 = ladder(self.erase_bytes, self.block_bytes, sector)
            .iter()
            .map(|&bs| bs * self.ladder_rounds(bs))
            .sum();
        (detection + (2 * n + 1) * per_au) * if self.random { 2 } else { 1 }
    }

    /// The region the probe may write: `max_au` erase blocks from the offset.
    pub fn region(&self) -> (u64, u64) {
        (self.offset_bytes, self.max_au as u64 * self.erase_bytes)
    }
}

/// Where the tested erase blocks start by default: past the first 16 MiB (as flashbench)
/// and past the first 4 erase blocks, whichever is further, so that a FAT area (which
/// keeps no open blocks and would add one to the count) stays out of the test.
pub fn default_offset(erase: u64) -> u64 {
    super::write_common::align_up((16u64 << 20).max(4 * erase), erase)
}

/// Counts of the upward sweep: 1 … 8, then doubling, up to `max_au`.
pub fn sweep_counts(max_au: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=8.min(max_au)).collect();
    let mut n = 16;
    while n <= max_au {
        v.push(n);
        n *= 2;
    }
    if max_au > 8 && v.last() != Some(&max_au) {
        v.push(max_au);
    }
    v
}

/// One measurement: `open_aus` erase blocks written in turn at one block size and order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OpenAuSample {
    /// "detect" (the count sweep at the smallest size) or "ladder".
    pub phase: String,
    pub random: bool,
    pub open_aus: u32,
    pub block_bytes: u64,
    pub writes: u64,
    pub bytes: u64,
    /// Sum of the timed writes.
    pub busy_ns: u64,
    /// The slowest erase block's median write time.
    pub median_write_ns: f64,
    /// Block size over `median_write_ns` (robust to rare pauses, not to a slow block).
    pub bytes_per_s: f64,
    /// Bytes over the total time (flashbench's figure).
    pub mean_bytes_per_s: f64,
    /// Each erase block's median write time, in the order written.
    #[serde(default)]
    pub block_median_ns: Vec<f64>,
}

/// Everything the probe measured, and why it stopped early (if it did).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct OpenAuSamples {
    pub samples: Vec<OpenAuSample>,
    pub stopped: Option<String>,
}

impl OpenAuSamples {
    /// The detection points of one order, for the analysis.
    pub fn points(&self, random: bool) -> Vec<OpenAuPoint> {
        self.samples
            .iter()
            .filter(|s| s.phase == "detect" && s.random == random)
            .map(|s| OpenAuPoint {
                open_aus: s.open_aus,
                bytes_per_s: s.bytes_per_s,
            })
            .collect()
    }

    /// Erase blocks (index from the offset) that stayed fast in the first collapsed linear
    /// measurement: they keep no open block (a FAT area in the range?), so the count would
    /// be too high by as many. Empty when the collapse was uniform.
    pub fn fast_blocks_in_collapse(&self) -> Vec<usize> {
        let det: Vec<&OpenAuSample> = self
            .samples
            .iter()
            .filter(|s| s.phase == "detect" && !s.random)
            .collect();
        let best = det.iter().map(|s| s.bytes_per_s).fold(0.0, f64::max);
        let Some(collapsed) = det
            .iter()
            .filter(|s| classify(s.bytes_per_s, best) == Class::Slow)
            .min_by_key(|s| s.open_aus)
        else {
            return Vec::new();
        };
        let slowest = collapsed
            .block_median_ns
            .iter()
            .copied()
            .fold(0.0, f64::max);
        collapsed
            .block_median_ns
            .iter()
            .enumerate()
            .filter(|(_, &t)| t * 10.0 < slowest)
            .map(|(i, _)| i)
            .collect()
    }

    /// The linear one-block detection rate: the reference for random order.
    pub fn linear_reference(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .samples
            .iter()
            .filter(|s| s.phase == "detect" && !s.random && s.open_aus == 1)
            .map(|s| s.bytes_per_s)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

struct Run<'a, B: Backend> {
    dev: &'a mut Timed<B>,
    p: &'a OpenAuParams,
    deadline: Deadline,
    out: OpenAuSamples,
    progress: &'a mut dyn FnMut(u64, u64),
    total_hint: u64,
}

/// Signals the sweep to stop (budget or time), carried as an error internally.
enum Stop {
    Budget(String),
    Io(io::Error),
}

impl<B: Backend> Run<'_, B> {
    fn measure(
        &mut self,
        phase: &str,
        n: u32,
        bs: u64,
        rounds: u64,
        random: bool,
    ) -> Result<f64, Stop> {
        let p = self.p;
        if self.deadline.passed(self.dev) {
            return Err(Stop::Budget("time budget reached".into()));
        }
        for i in 0..n as u64 {
            self.dev
                .prepare_write(p.offset_bytes + i * p.erase_bytes, rounds * bs)
                .map_err(Stop::Io)?;
        }
        let buf = if p.zeros {
            AlignedBuf::new(bs as usize)
        } else {
            random_buffer(bs as usize, p.seed ^ bs)
        };
        let order: Vec<usize> = if random {
            permutation(rounds as usize, p.seed.wrapping_add(n as u64 * 7919 + bs))
        } else {
            (0..rounds as usize).collect()
        };
        let mut times: Vec<Vec<u64>> = vec![Vec::with_capacity(rounds as usize); n as usize];
        let (mut busy, mut bytes, mut writes) = (0u64, 0u64, 0u64);
        for (round, &pos) in order.iter().enumerate() {
            for i in 0..n as u64 {
                let off = p.offset_bytes + i * p.erase_bytes + pos as u64 * bs;
                let t = match self.dev.write_timed(&buf, off) {
                    Ok(t) => t,
                    Err(e) => {
                        return Err(match stop_reason(&e) {
                            Some(r) => Stop::Budget(r),
                            None => Stop::Io(e),
                        })
                    }
                };
                writes += 1;
                bytes += bs;
                if round > 0 || rounds == 1 {
                    times[i as usize].push(t);
                    busy += t;
                }
            }
            if self.deadline.passed(self.dev) && round + 1 < order.len() {
                return Err(Stop::Budget("time budget reached".into()));
            }
        }
        // Each erase block's median write time (a rare pause does not count); the slowest
        // block decides (one block that pays for every write is what a cut-off looks like).
        let block_median_ns: Vec<f64> = times.iter().map(|t| median_ns(t)).collect();
        let med = block_median_ns.iter().copied().fold(0.0, f64::max);
        let timed_bytes = times.iter().map(|t| t.len() as u64).sum::<u64>() * bs;
        let sample = OpenAuSample {
            phase: phase.to_string(),
            random,
            open_aus: n,
            block_bytes: bs,
            writes,
            bytes,
            busy_ns: busy,
            median_write_ns: med,
            bytes_per_s: bs as f64 * 1e9 / med,
            mean_bytes_per_s: timed_bytes as f64 * 1e9 / busy.max(1) as f64,
            block_median_ns,
        };
        let rate = sample.bytes_per_s;
        self.out.samples.push(sample);
        let done: u64 = self.out.samples.iter().map(|s| s.bytes).sum();
        (self.progress)(done.min(self.total_hint), self.total_hint);
        Ok(rate)
    }

    /// Sweep counts upward, bisect to the cut-off, repeat both sides. Returns the counts
    /// around the cut-off (last fast, first slow) when found.
    fn detect(&mut self, random: bool, reference: Option<f64>) -> Result<Option<(u32, u32)>, Stop> {
        let bs = self.p.detect_bytes(self.dev.logical_sector_bytes() as u64);
        let rounds = self.p.rounds.max(2) as u64;
        let mut best: f64 = 0.0;
        let mut last_fast = 0u32;
        let mut first_slow = None;
        let class_of = |rate: f64, best: &mut f64| {
            *best = best.max(rate);
            classify(rate, reference.unwrap_or(*best))
        };
        for n in sweep_counts(self.p.max_au) {
            let r = self.measure("detect", n, bs, rounds, random)?;
            match class_of(r, &mut best) {
                Class::Fast => last_fast = n,
                Class::Slow => {
                    first_slow = Some(n);
                    break;
                }
                Class::Unclear => {
                    let again = self.measure("detect", n, bs, rounds, random)?;
                    match class_of(again, &mut best) {
                        Class::Fast => last_fast = n,
                        Class::Slow => {
                            first_slow = Some(n);
                            break;
                        }
                        Class::Unclear => return Ok(None),
                    }
                }
            }
        }
        let Some(mut hi) = first_slow else {
            return Ok(None);
        };
        let mut lo = last_fast;
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let r = self.measure("detect", mid, bs, rounds, random)?;
            match class_of(r, &mut best) {
                Class::Fast => lo = mid,
                Class::Slow => hi = mid,
                Class::Unclear => return Ok(None),
            }
        }
        // Repeat both sides: the analysis takes the median of repeats.
        if lo > 0 {
            self.measure("detect", lo, bs, rounds, random)?;
        }
        self.measure("detect", hi, bs, rounds, random)?;
        Ok(Some((lo, hi)))
    }

    fn ladder(&mut self, counts: &[u32], random: bool) -> Result<(), Stop> {
        let sector = self.dev.logical_sector_bytes() as u64;
        for &n in counts.iter().filter(|&&n| n > 0) {
            for bs in ladder(self.p.erase_bytes, self.p.block_bytes, sector) {
                let rounds = self.p.ladder_rounds(bs);
                self.measure("ladder", n, bs, rounds, random)?;
            }
        }
        Ok(())
    }

    fn order(&mut self, random: bool) -> Result<(), Stop> {
        let reference = if random {
            self.out.linear_reference()
        } else {
            None
        };
        let counts = match self.detect(random, reference)? {
            Some((lo, hi)) => vec![lo, hi],
            None => {
                let tested: Vec<u32> = self
                    .out
                    .samples
                    .iter()
                    .filter(|s| s.random == random)
                    .map(|s| s.open_aus)
                    .collect();
                vec![1, tested.into_iter().max().unwrap_or(1)]
            }
        };
        let mut counts = counts;
        counts.dedup();
        if !self.p.ladder {
            return Ok(());
        }
        self.ladder(&counts, random)
    }
}

/// Run the open-AU probe. I/O errors other than an exhausted budget are returned; a
/// budget or deadline ends the probe early with `stopped` set.
pub fn run<B: Backend>(
    dev: &mut Timed<B>,
    p: &OpenAuParams,
    progress: &mut dyn FnMut(u64, u64),
) -> io::Result<OpenAuSamples> {
    let sector = dev.logical_sector_bytes() as u64;
    let total_hint = p.typical_bytes(sector, 8);
    let deadline = Deadline::start(dev, p.time_budget_ns);
    let mut run = Run {
        dev,
        p,
        deadline,
        out: OpenAuSamples::default(),
        progress,
        total_hint,
    };
    let mut result = run.order(false);
    if result.is_ok() && p.random {
        result = run.order(true);
    }
    match result {
        Ok(()) => Ok(run.out),
        Err(Stop::Budget(why)) => {
            run.out.stopped = Some(why);
            Ok(run.out)
        }
        Err(Stop::Io(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::openau::infer_open_au;
    use crate::backend::sim::{SimConfig, SimDevice};
    use crate::backend::WriteBudget;

    fn sim(spec: &str) -> Timed<SimDevice> {
        Timed::new(SimDevice::new(SimConfig::parse(spec).unwrap()))
    }

    #[test]
    fn sweep_counts_double_after_eight() {
        assert_eq!(sweep_counts(32), vec![1, 2, 3, 4, 5, 6, 7, 8, 16, 32]);
        assert_eq!(sweep_counts(3), vec![1, 2, 3]);
        assert_eq!(sweep_counts(20), vec![1, 2, 3, 4, 5, 6, 7, 8, 16, 20]);
    }

    #[test]
    fn finds_the_presets_open_au_linear_and_random() {
        let mut dev = sim("sd-a2-64g");
        let mut p = OpenAuParams::new(8 << 20);
        p.random = true;
        let s = run(&mut dev, &p, &mut |_, _| {}).unwrap();
        assert_eq!(infer_open_au(&s.points(false), None).as_u64(), Some(8));
        let random = infer_open_au(&s.points(true), s.linear_reference());
        assert_eq!(random.as_u64(), Some(4), "{}", random.evidence);
        assert!(s.stopped.is_none());
    }

    #[test]
    fn sd16g_defaults_stay_within_the_wear_bound() {
        let mut dev = sim("sd-16g");
        let p = OpenAuParams::new(4 << 20);
        let s = run(&mut dev, &p, &mut |_, _| {}).unwrap();
        let written: u64 = s.samples.iter().map(|x| x.bytes).sum();
        assert_eq!(infer_open_au(&s.points(false), None).as_u64(), Some(4));
        assert!(written <= p.max_bytes(512), "{written}");
        assert!(written < 160 << 20, "{written}");
    }

    #[test]
    fn a_fat_area_inside_the_range_is_noticed() {
        let mut dev = sim("sd-16g,fat_au=6");
        let mut p = OpenAuParams::new(4 << 20);
        p.offset_bytes = 16 << 20; // erase blocks 4 and 5 are in the FAT area
        p.ladder = false;
        let s = run(&mut dev, &p, &mut |_, _| {}).unwrap();
        assert_eq!(s.fast_blocks_in_collapse(), vec![0, 1]);
        let mut clean = sim("sd-16g");
        let s = run(&mut clean, &p, &mut |_, _| {}).unwrap();
        assert!(s.fast_blocks_in_collapse().is_empty());
    }

    #[test]
    fn a_write_budget_stops_it_early_with_a_reason() {
        let mut dev = Timed::new(WriteBudget::new(
            SimDevice::new(SimConfig::parse("sd-16g").unwrap()),
            Some(2 << 20),
        ));
        let s = run(&mut dev, &OpenAuParams::new(4 << 20), &mut |_, _| {}).unwrap();
        assert!(s.stopped.unwrap().contains("budget"));
        assert!(dev.inner().bytes_written <= 2 << 20);
    }
}
