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

use super::write_common::{ladder, permutation, random_buffer};
use crate::analysis::openau::{sweep_counts, Next, OpenAuPoint, BUSY_SHARE, UNCLEAR_TRIES};
use crate::analysis::stats::median_ns;
use crate::backend::{stop_reason, AlignedBuf, Backend, Timed};
use serde::{Deserialize, Serialize};
use std::io;

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    /// `--time-budget` as given, for the document: the session's `TimeBudget` enforces it.
    pub time_budget_ns: Option<u64>,
    /// Measure the block-size ladder around the cut-off (the table); off, only detection.
    pub ladder: bool,
    /// Write zeros instead of pseudo-random data (cheaper for the simulator to hold).
    pub zeros: bool,
    /// Watch the machine's CPU pressure during each detection measurement and measure a
    /// busy one again (real devices; the simulator's clock does not see the machine).
    #[serde(skip)]
    pub watch_machine: bool,
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
            watch_machine: false,
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
        // On a busy machine each detection measurement may be taken up to BUSY_ATTEMPTS
        // times (see `measure_detect`): the bound counts every attempt.
        let attempts = if self.watch_machine {
            BUSY_ATTEMPTS as u64
        } else {
            1
        };
        // A count of the sweep is measured up to UNCLEAR_TRIES times while it is unclear.
        let sweep = counts.iter().map(|&c| c as u64).sum::<u64>() * UNCLEAR_TRIES as u64;
        let detection = (sweep + 8 * m) * det * attempts;
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

/// One measurement: `open_aus` erase blocks written in turn at one block size and order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    /// Share of the measurement's time in which the machine was short of CPU (some task
    /// waited for one: this probe, the loop device's kernel workers, a card's server);
    /// absent on the simulator's clock and where the kernel has no pressure information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_stall_share: Option<f64>,
    /// Measured again because the machine was busy, and a faster attempt kept instead: a
    /// busy machine only makes writes look slower, never faster.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub superseded: bool,
}

/// Attempts at one detection measurement on a busy machine.
pub const BUSY_ATTEMPTS: usize = 3;

/// Everything the probe measured, and why it stopped early (if it did).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OpenAuSamples {
    pub samples: Vec<OpenAuSample>,
    pub stopped: Option<String>,
}

impl OpenAuSamples {
    /// The detection points of one order, for the analysis.
    pub fn points(&self, random: bool) -> Vec<OpenAuPoint> {
        self.detection(random)
            .map(|s| OpenAuPoint {
                open_aus: s.open_aus,
                bytes_per_s: s.bytes_per_s,
            })
            .collect()
    }

    /// Each detection measurement's per-erase-block median write times, in the order of
    /// [`OpenAuSamples::points`].
    pub fn block_median_ns(&self, random: bool) -> Vec<&[f64]> {
        self.detection(random)
            .map(|s| s.block_median_ns.as_slice())
            .collect()
    }

    /// The detection measurements of one order that count (not superseded), in the order
    /// measured.
    pub fn detection(&self, random: bool) -> impl Iterator<Item = &OpenAuSample> {
        self.samples
            .iter()
            .filter(move |s| s.phase == "detect" && s.random == random && !s.superseded)
    }
}

/// The detection phase's controller: from the linear points so far and, while random
/// order is measured, its points, the count to measure next (`analysis::openau::decide`).
pub type Controller<'a> = dyn FnMut(&[OpenAuPoint], Option<&[OpenAuPoint]>) -> Next + 'a;

struct Run<'a, B: Backend> {
    dev: Timed<B>,
    p: &'a OpenAuParams,
    out: OpenAuSamples,
    next: &'a mut Controller<'a>,
    progress: &'a mut dyn FnMut(u64, u64),
    total_hint: u64,
}

/// Signals the sweep to stop (budget or time), carried as an error internally.
enum Stop {
    Budget(String),
    Io(io::Error),
}

/// A budget's refusal stops the sweep with its reason; any other error is an error.
fn stop(e: io::Error) -> Stop {
    match stop_reason(&e) {
        Some(r) => Stop::Budget(r),
        None => Stop::Io(e),
    }
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
        for i in 0..n as u64 {
            self.dev
                .prepare_write(p.offset_bytes + i * p.erase_bytes, rounds * bs)
                .map_err(stop)?;
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
        let watch = (phase == "detect" && p.watch_machine)
            .then(|| crate::sys::cpu_pressure_some_ns().map(|s| (s, crate::sys::monotonic_ns())))
            .flatten();
        for (round, &pos) in order.iter().enumerate() {
            for i in 0..n as u64 {
                let off = p.offset_bytes + i * p.erase_bytes + pos as u64 * bs;
                let t = self.dev.write_timed(&buf, off).map_err(stop)?;
                writes += 1;
                bytes += bs;
                if round > 0 || rounds == 1 {
                    times[i as usize].push(t);
                    busy += t;
                }
            }
        }
        // Each erase block's median write time (a rare pause does not count); the slowest
        // block decides (one block that pays for every write is what a cut-off looks like).
        let cpu_stall_share = watch.and_then(|(s0, t0)| {
            let stall = crate::sys::cpu_pressure_some_ns()?.saturating_sub(s0);
            let wall = crate::sys::monotonic_ns().saturating_sub(t0).max(1);
            Some((stall as f64 / wall as f64).min(1.0))
        });
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
            cpu_stall_share,
            superseded: false,
        };
        let rate = sample.bytes_per_s;
        self.out.samples.push(sample);
        let done: u64 = self.out.samples.iter().map(|s| s.bytes).sum();
        (self.progress)(done.min(self.total_hint), self.total_hint);
        Ok(rate)
    }

    /// Measure the counts the controller asks for at the detection size until it is
    /// done. Returns the counts around the cut-off (last fast, first slow) when found.
    fn detect(&mut self, random: bool) -> Result<Option<(u32, u32)>, Stop> {
        let bs = self.p.detect_bytes(self.dev.logical_sector_bytes() as u64);
        let rounds = self.p.rounds.max(2) as u64;
        loop {
            let linear = self.out.points(false);
            let own = random.then(|| self.out.points(true));
            match (self.next)(&linear, own.as_deref()) {
                Next::Measure(n) => self.measure_detect(n, bs, rounds, random)?,
                Next::Done(found) => return Ok(found),
            }
        }
    }

    /// One detection measurement; while the machine is busy (CPU pressure over
    /// [`BUSY_SHARE`] of its time) measured again, up to [`BUSY_ATTEMPTS`] in all, and the
    /// fastest attempt kept: a busy machine makes writes look slower (the probe or the
    /// loop device's workers wait for a CPU), so a slow attempt on a busy machine is no
    /// evidence of a collapse while a faster one is. The others stay in the document,
    /// marked superseded.
    fn measure_detect(&mut self, n: u32, bs: u64, rounds: u64, random: bool) -> Result<(), Stop> {
        let first = self.out.samples.len();
        for attempt in 1..=BUSY_ATTEMPTS {
            self.measure("detect", n, bs, rounds, random)?;
            let busy = self.out.samples.last().and_then(|s| s.cpu_stall_share);
            if attempt == BUSY_ATTEMPTS || !busy.is_some_and(|b| b > BUSY_SHARE) {
                break;
            }
        }
        let tries = &mut self.out.samples[first..];
        if tries.len() > 1 {
            let best = (0..tries.len())
                .max_by(|&a, &b| tries[a].bytes_per_s.total_cmp(&tries[b].bytes_per_s))
                .unwrap_or(0);
            for (i, s) in tries.iter_mut().enumerate() {
                s.superseded = i != best;
            }
        }
        Ok(())
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
        let counts = match self.detect(random)? {
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

/// Run the open-AU probe. `next(linear points, random points)` is the controller that
/// says which count to measure next in the detection phase (`analysis::openau::decide`;
/// the random points are `None` while linear order is measured). I/O errors other than an exhausted budget are returned; a budget
/// ends the probe early with `stopped` set.
pub fn run(
    dev: &mut dyn Backend,
    p: &OpenAuParams,
    next: &mut Controller,
    progress: &mut dyn FnMut(u64, u64),
) -> io::Result<OpenAuSamples> {
    let sector = dev.logical_sector_bytes() as u64;
    let total_hint = p.typical_bytes(sector, 8);
    let mut run = Run {
        dev: Timed::new(dev),
        p,
        out: OpenAuSamples::default(),
        next,
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
    use crate::analysis::openau::{
        decide, fast_blocks_in_collapse, infer_open_au, linear_reference,
    };
    use crate::backend::sim::{SimConfig, SimDevice};
    use crate::backend::{TimeBudget, WriteBudget};

    fn sim(spec: &str) -> SimDevice {
        SimDevice::new(SimConfig::parse(spec).unwrap())
    }

    /// The probe with the analysis' controller.
    fn probe(dev: &mut dyn Backend, p: &OpenAuParams) -> OpenAuSamples {
        run(dev, p, &mut |l, r| decide(p.max_au, l, r), &mut |_, _| {}).unwrap()
    }

    fn fast_blocks(s: &OpenAuSamples) -> Vec<usize> {
        fast_blocks_in_collapse(&s.points(false), &s.block_median_ns(false))
    }

    #[test]
    fn finds_the_presets_open_au_linear_and_random() {
        let mut dev = sim("sd-a2-64g");
        let mut p = OpenAuParams::new(8 << 20);
        p.random = true;
        let s = probe(&mut dev, &p);
        assert_eq!(infer_open_au(&s.points(false), None).as_u64(), Some(8));
        let random = infer_open_au(&s.points(true), linear_reference(&s.points(false)));
        assert_eq!(random.as_u64(), Some(4), "{}", random.evidence);
        assert!(s.stopped.is_none());
    }

    #[test]
    fn the_write_bound_counts_the_attempts_of_a_busy_machine() {
        let p = OpenAuParams::new(4 << 20);
        let mut watched = p.clone();
        watched.watch_machine = true;
        let det = p.detect_bytes(512) * p.rounds as u64;
        let detection = (sweep_counts(p.max_au)
            .iter()
            .map(|&c| c as u64)
            .sum::<u64>()
            * UNCLEAR_TRIES as u64
            + 8 * p.max_au as u64)
            * det;
        let extra = (BUSY_ATTEMPTS as u64 - 1) * detection;
        assert_eq!(watched.max_bytes(512), p.max_bytes(512) + extra);
    }

    #[test]
    fn sd16g_defaults_stay_within_the_wear_bound() {
        let mut dev = sim("sd-16g");
        let p = OpenAuParams::new(4 << 20);
        let s = probe(&mut dev, &p);
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
        let s = probe(&mut dev, &p);
        assert_eq!(fast_blocks(&s), vec![0, 1]);
        let mut clean = sim("sd-16g");
        let s = probe(&mut clean, &p);
        assert!(fast_blocks(&s).is_empty());
    }

    #[test]
    fn a_write_budget_stops_it_early_with_a_reason() {
        let mut dev = WriteBudget::new(sim("sd-16g"), Some(2 << 20));
        let s = probe(&mut dev, &OpenAuParams::new(4 << 20));
        assert!(s.stopped.unwrap().contains("budget"));
        assert!(dev.bytes_written <= 2 << 20);
        let mut dev = TimeBudget::new(sim("sd-16g"), Some(1_000_000_000));
        let s = probe(&mut dev, &OpenAuParams::new(4 << 20));
        assert_eq!(s.stopped.as_deref(), Some("time budget reached"));
        assert!(!s.samples.is_empty());
    }
}
