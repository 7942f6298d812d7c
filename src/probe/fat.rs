//! The FAT-area probe (flashbench `--find-fat`): write throughput of each of the first
//! `nr` erase blocks at block sizes from the erase size down.
//!
//! Each (erase block, size) measurement writes `rounds` blocks in order from the block's
//! start (random order was tried and dropped: on cards with random-capable open blocks it
//! singles out those blocks, not the FAT area); the rate is the block size over the median write time when there are at least
//! three writes (one write that opens a block and pays for closing another does not
//! decide), else bytes over time. Sizes of 1 MiB and more cover the whole erase block.

use super::write_common::{ladder, random_buffer};
use crate::analysis::stats::median_ns;

use crate::analysis::fat::FatSample;
use crate::backend::{stop_reason, AlignedBuf, Backend, Timed};
use serde::{Deserialize, Serialize};
use std::io;

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FatParams {
    pub erase_bytes: u64,
    /// Smallest block size.
    pub block_bytes: u64,
    /// Erase blocks measured from the start of the device.
    pub nr: u32,
    pub seed: u64,
    /// `--time-budget` as given, for the document: the session's `TimeBudget` enforces it.
    pub time_budget_ns: Option<u64>,
    /// Write zeros instead of pseudo-random data (cheaper for the simulator to hold).
    pub zeros: bool,
}

impl FatParams {
    /// Defaults: the first 6 erase blocks, down to 512-byte blocks (well below the page
    /// size, where page-mapped FAT areas show most).
    pub fn new(erase: u64) -> Self {
        FatParams {
            erase_bytes: erase,
            block_bytes: 512.min(erase),
            nr: 6,
            seed: 1,
            time_budget_ns: None,
            zeros: false,
        }
    }

    /// Blocks written per erase block at block size `bs`.
    pub fn rounds(&self, bs: u64) -> u64 {
        let whole = self.erase_bytes / bs;
        if bs >= 1 << 20 {
            whole.max(1)
        } else {
            whole.min(((1u64 << 20) / bs).clamp(4, 32)).max(1)
        }
    }

    /// The measurements: (block size, random order), largest first; all in order.
    pub fn passes(&self, sector: u64) -> Vec<(u64, bool)> {
        ladder(self.erase_bytes, self.block_bytes, sector)
            .into_iter()
            .map(|bs| (bs, false))
            .collect()
    }

    /// Bytes the probe writes.
    pub fn bytes(&self, sector: u64) -> u64 {
        self.passes(sector)
            .iter()
            .map(|&(bs, _)| bs * self.rounds(bs))
            .sum::<u64>()
            * self.nr as u64
    }

    /// The region written: the first `nr` erase blocks.
    pub fn region(&self) -> (u64, u64) {
        (0, self.nr as u64 * self.erase_bytes)
    }
}

/// One measurement.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FatProbeSample {
    pub erase_block: u32,
    pub block_bytes: u64,
    pub random: bool,
    pub writes: u64,
    pub busy_ns: u64,
    pub median_write_ns: f64,
    pub bytes_per_s: f64,
}

/// Everything measured, and why it stopped early (if it did).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FatSamples {
    pub samples: Vec<FatProbeSample>,
    pub stopped: Option<String>,
}

impl FatSamples {
    /// The samples the analysis takes.
    pub fn points(&self) -> Vec<FatSample> {
        self.samples
            .iter()
            .map(|s| FatSample {
                erase_block: s.erase_block,
                block_bytes: s.block_bytes,
                random: s.random,
                bytes_per_s: s.bytes_per_s,
            })
            .collect()
    }
}

/// Run the probe; an exhausted budget (bytes or time: the `WriteBudget` and `TimeBudget`
/// wrappers) ends it early with `stopped` set.
pub fn run(
    dev: &mut dyn Backend,
    p: &FatParams,
    progress: &mut dyn FnMut(u64, u64),
) -> io::Result<FatSamples> {
    let sector = dev.logical_sector_bytes() as u64;
    let total = p.bytes(sector);
    let mut dev = Timed::new(dev);
    let mut out = FatSamples::default();
    let (start, len) = p.region();
    dev.prepare_write(start, len)?;
    let mut done = 0;
    for (bs, random) in p.passes(sector) {
        let buf = if p.zeros {
            AlignedBuf::new(bs as usize)
        } else {
            random_buffer(bs as usize, p.seed ^ bs)
        };
        let rounds = p.rounds(bs);
        let order: Vec<u64> = if random {
            super::write_common::permutation(rounds as usize, p.seed ^ bs)
                .into_iter()
                .map(|x| x as u64)
                .collect()
        } else {
            (0..rounds).collect()
        };
        for au in 0..p.nr {
            let base = au as u64 * p.erase_bytes;
            let mut times = Vec::with_capacity(rounds as usize);
            for &r in &order {
                match dev.write_timed(&buf, base + r * bs) {
                    Ok(t) => times.push(t),
                    Err(e) => match stop_reason(&e) {
                        Some(why) => {
                            out.stopped = Some(why);
                            return Ok(out);
                        }
                        None => return Err(e),
                    },
                }
            }
            let busy: u64 = times.iter().sum();
            let med = median_ns(&times);
            let rate = if times.len() >= 3 {
                bs as f64 * 1e9 / med
            } else {
                (bs * times.len() as u64) as f64 * 1e9 / busy.max(1) as f64
            };
            out.samples.push(FatProbeSample {
                erase_block: au,
                block_bytes: bs,
                random,
                writes: rounds,
                busy_ns: busy,
                median_write_ns: med,
                bytes_per_s: rate,
            });
            done += rounds * bs;
            progress(done, total);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fat::infer_fat;
    use crate::backend::sim::{SimConfig, SimDevice};
    use crate::vocab::Status;

    #[test]
    fn finds_the_fat_area_of_the_presets() {
        for (spec, want) in [
            ("sd-16g", vec![0u32]),
            ("usb-32g", vec![0]),
            ("emmc-8g", vec![]),
        ] {
            let cfg = SimConfig::parse(spec).unwrap();
            let erase = cfg.erase;
            let mut dev = SimDevice::new(cfg);
            let s = run(&mut dev, &FatParams::new(erase), &mut |_, _| {}).unwrap();
            let inf = infer_fat(&s.points());
            assert_eq!(
                inf.value,
                Some(serde_json::json!(want)),
                "{spec}: {}",
                inf.evidence
            );
            assert_ne!(inf.status, Status::Inconclusive);
        }
    }

    #[test]
    fn sd16g_default_wear() {
        let p = FatParams::new(4 << 20);
        assert!(p.bytes(512) < 128 << 20, "{}", p.bytes(512));
    }
}
