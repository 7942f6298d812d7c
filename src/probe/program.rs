//! The program matrix (flashbench `-p`): for each block size from 2 MiB down to 512 B,
//! linear writes of zeros, ones and 0x5a, a linear read, random-order writes of the three
//! patterns and a random read, all inside one region.

use super::write_common::permutation;
use crate::analysis::program::ProgramRow;
use crate::backend::{stop_reason, AlignedBuf, Backend, Timed};
use serde::{Deserialize, Serialize};
use std::io;

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProgramParams {
    pub offset_bytes: u64,
    pub region_bytes: u64,
    pub largest_bytes: u64,
    pub smallest_bytes: u64,
    /// Most blocks per operation and size (small sizes would otherwise take long).
    pub max_ops: u64,
    pub seed: u64,
    /// `--time-budget` as given, for the document: the session's `TimeBudget` enforces it.
    pub time_budget_ns: Option<u64>,
}

impl ProgramParams {
    /// Defaults: a 4 MiB region 16 MiB into the device, 2 MiB down to 512 B.
    pub fn new() -> Self {
        ProgramParams {
            offset_bytes: 16 << 20,
            region_bytes: 4 << 20,
            largest_bytes: 2 << 20,
            smallest_bytes: 512,
            max_ops: 256,
            seed: 1,
            time_budget_ns: None,
        }
    }

    /// The block sizes, largest first.
    pub fn sizes(&self, sector: u64) -> Vec<u64> {
        let mut v = Vec::new();
        let mut bs = self.largest_bytes.min(self.region_bytes);
        while bs >= self.smallest_bytes.max(sector) && bs > 0 {
            if bs % sector == 0 {
                v.push(bs);
            }
            bs /= 2;
        }
        v
    }

    /// Blocks per operation at size `bs`: up to 1 MiB (or one block), at most `max_ops`.
    pub fn ops(&self, bs: u64) -> u64 {
        let fit = self.region_bytes / bs;
        ((1u64 << 20) / bs).max(1).min(self.max_ops).min(fit).max(1)
    }

    /// Bytes written (six write passes per size).
    pub fn bytes(&self, sector: u64) -> u64 {
        self.sizes(sector)
            .iter()
            .map(|&bs| 6 * bs * self.ops(bs))
            .sum()
    }
}

impl Default for ProgramParams {
    fn default() -> Self {
        Self::new()
    }
}

/// The eight rates of one block size and the time each took.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProgramSample {
    pub block_bytes: u64,
    pub ops: u64,
    /// In `analysis::program::COLUMNS` order.
    pub bytes_per_s: [f64; 8],
    pub busy_ns: [u64; 8],
}

/// Everything measured, and why it stopped early (if it did).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProgramSamples {
    pub samples: Vec<ProgramSample>,
    pub stopped: Option<String>,
}

impl ProgramSamples {
    pub fn rows(&self) -> Vec<ProgramRow> {
        self.samples
            .iter()
            .map(|s| ProgramRow {
                block_bytes: s.block_bytes,
                bytes_per_s: s.bytes_per_s,
            })
            .collect()
    }
}

/// Run the matrix; an exhausted budget (bytes or time: the `WriteBudget` and `TimeBudget`
/// wrappers) ends it early with `stopped` set.
pub fn run(
    dev: &mut dyn Backend,
    p: &ProgramParams,
    progress: &mut dyn FnMut(u64, u64),
) -> io::Result<ProgramSamples> {
    let sector = dev.logical_sector_bytes() as u64;
    let sizes = p.sizes(sector);
    let mut dev = Timed::new(dev);
    let mut out = ProgramSamples::default();
    dev.prepare_write(p.offset_bytes, p.region_bytes)?;
    for (k, &bs) in sizes.iter().enumerate() {
        let ops = p.ops(bs);
        let slots = (p.region_bytes / bs) as usize;
        let linear: Vec<u64> = (0..ops).collect();
        let random: Vec<u64> = permutation(slots, p.seed ^ bs)
            .into_iter()
            .take(ops as usize)
            .map(|x| x as u64)
            .collect();
        let mut rates = [0.0; 8];
        let mut busy = [0u64; 8];
        let mut buf = AlignedBuf::new(bs as usize);
        for col in 0..8 {
            let order = if col < 4 { &linear } else { &random };
            let write = col % 4 != 3;
            if write {
                buf.fill([0x00, 0xff, 0x5a][col % 4]);
            }
            let mut total = 0u64;
            for &slot in order {
                let off = p.offset_bytes + slot * bs;
                let r = if write {
                    dev.write_timed(&buf, off)
                } else {
                    dev.read_timed(&mut buf, off)
                };
                match r {
                    Ok(t) => total += t,
                    Err(e) => match stop_reason(&e) {
                        Some(why) => {
                            out.stopped = Some(why);
                            return Ok(out);
                        }
                        None => return Err(e),
                    },
                }
            }
            busy[col] = total;
            rates[col] = (ops * bs) as f64 * 1e9 / total.max(1) as f64;
        }
        out.samples.push(ProgramSample {
            block_bytes: bs,
            ops,
            bytes_per_s: rates,
            busy_ns: busy,
        });
        progress(k as u64 + 1, sizes.len() as u64);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::program::infer_program;
    use crate::backend::sim::{SimConfig, SimDevice};

    #[test]
    fn the_matrix_shows_the_page_size_on_the_simulator() {
        let mut dev = SimDevice::new(SimConfig::parse("sd-16g,noise=0.01").unwrap());
        let p = ProgramParams::new();
        let s = run(&mut dev, &p, &mut |_, _| {}).unwrap();
        assert_eq!(s.samples.len(), 13);
        let inf = infer_program(&s.rows());
        assert_eq!(
            inf["write_pattern_sensitive"].value,
            Some(serde_json::json!(false))
        );
        // Below the 16 KiB page, each write programs a whole page: throughput drops.
        let eff = inf["efficient_write_block_bytes"].as_u64().unwrap();
        assert!(eff >= 16384, "{eff}");
        assert!(p.bytes(512) < 100 << 20, "{}", p.bytes(512));
    }
}
