//! `fat`: which of the first erase blocks behave differently (the FAT area).

use super::write_probe::{erase_size, Findings, Request, WriteTest};
use crate::analysis::fat::infer_fat;
use crate::backend::Backend;
use crate::device::TargetInfo;
use crate::device::TargetSpec;
use crate::probe::fat::{self, FatParams, FatSamples};
use crate::probe::write_common::check_geometry;
use crate::report::results::{FatResult, WithEraseSource};
use crate::report::Body;
use crate::session::{Budgets, Rates, WriteFlags, WriteIntent};
use crate::vocab::units::format_bytes;
use crate::{Error, Result};
use std::io;

/// `fat`'s parameters as asked for: the erase block size (`None`: measured by align
/// first, read-only, and then it must be confident) is settled on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatRequest {
    pub erase_bytes: Option<u64>,
    /// Smallest block size written (`None`: the device's logical sector, 512 B on most
    /// cards, 4 KiB on some).
    pub block_bytes: Option<u64>,
    /// Erase blocks measured from the start of the device.
    pub nr: u32,
}

impl Request for FatRequest {
    type Test = FatTest;

    fn build(
        &self,
        spec: &TargetSpec,
        flags: &WriteFlags,
        budgets: &Budgets,
        info: &TargetInfo,
    ) -> Result<FatTest> {
        let sector = info.logical_sector_bytes as u64;
        let (erase, source) = erase_size(
            self.erase_bytes,
            spec,
            flags,
            &format!(
                "fat writes the first {} erase blocks (the partition table lives there)",
                self.nr
            ),
        )?;
        Ok(FatTest {
            params: params(self, budgets, info.size_bytes, sector, erase)?,
            erase_size_source: source,
        })
    }
}

/// Parameters checked against the device.
fn params(
    req: &FatRequest,
    budgets: &Budgets,
    size: u64,
    sector: u64,
    erase: u64,
) -> Result<FatParams> {
    let block = req.block_bytes.unwrap_or(sector);
    check_geometry(erase, block, size, sector)?;
    if req.nr < 3 {
        return Err(Error::usage(format!(
            "--nr {} is too few: at least 3 erase blocks are needed to tell which differ",
            req.nr
        )));
    }
    if req.nr as u64 * erase > size {
        return Err(Error::usage(format!(
            "--nr {}: {} erase blocks of {} do not fit in the device ({}); use --nr {} or less",
            req.nr,
            req.nr,
            format_bytes(erase),
            format_bytes(size),
            size / erase
        )));
    }
    let mut p = FatParams::new(erase);
    p.block_bytes = block;
    p.nr = req.nr;
    p.time_budget_ns = budgets.time_ns;
    Ok(p)
}

/// How long the FAT-area test takes at `rates`: each of its passes (block size, order)
/// writes `rounds` blocks into each of the `nr` erase blocks, and a block smaller than a
/// flash page costs a page ([`Rates::blocks_ns`]).
pub fn estimate_ns(p: &FatParams, sector: u64, rates: &Rates) -> u64 {
    p.passes(sector)
        .iter()
        .map(|&(bs, _)| rates.blocks_ns(bs, p.rounds(bs) * p.nr as u64))
        .sum()
}

/// The FAT-area test: its parameters and where the erase size came from.
pub struct FatTest {
    pub params: FatParams,
    /// "--erase-size" or the align inference that measured it (stated in the output).
    pub erase_size_source: String,
}

impl WriteTest for FatTest {
    type Samples = FatSamples;
    const COMMAND: &'static str = "fat";

    fn plan(&self, sector: u64, rates: &Rates) -> WriteIntent {
        let p = &self.params;
        let bytes = p.bytes(sector);
        WriteIntent {
            command: Self::COMMAND,
            region: p.region(),
            max_bytes: bytes,
            typical_bytes: None,
            estimated_ns: estimate_ns(p, sector, rates),
            places: p.nr as u64,
            what: format!(
                "fat writes the first {} erase blocks of {} (the partition table lives there) at block sizes down to {}",
                p.nr,
                format_bytes(p.erase_bytes),
                format_bytes(p.block_bytes)
            ),
            smaller: "lower --write-budget",
            ..WriteIntent::default()
        }
    }

    fn run(
        &self,
        dev: &mut dyn Backend,
        progress: &mut dyn FnMut(u64, u64),
    ) -> io::Result<FatSamples> {
        // One bar in bytes over all passes, named by the pass's block size.
        let sector = u64::from(dev.logical_sector_bytes());
        let p = &self.params;
        let mut ends = Vec::new();
        let mut sum = 0;
        for (bs, random) in p.passes(sector) {
            sum += bs * p.rounds(bs) * p.nr as u64;
            ends.push((sum, bs, random));
        }
        crate::report::progress::phase("writing", true);
        let mut shown = None;
        fat::run(dev, p, &mut |done, total| {
            if let Some(&(_, bs, random)) = ends.iter().find(|(end, ..)| done < *end) {
                if shown != Some((bs, random)) {
                    shown = Some((bs, random));
                    crate::report::progress::message(&format!(
                        "writing {}{}",
                        crate::vocab::units::format_bytes(bs),
                        if random { " random" } else { "" }
                    ));
                }
            }
            progress(done, total)
        })
    }

    fn infer(&self, s: &FatSamples) -> Findings {
        let mut f = Findings::default();
        f.add("fat_area_erase_blocks", infer_fat(&s.points()));
        f
    }

    fn stopped<'a>(&self, s: &'a FatSamples) -> Option<&'a str> {
        s.stopped.as_deref()
    }

    fn document(&self, s: &FatSamples, _findings: &Findings) -> Result<Body> {
        Ok(Body::Fat(FatResult {
            parameters: WithEraseSource {
                params: self.params.clone(),
                erase_size_source: self.erase_size_source.clone(),
            },
            samples: s.samples.clone(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::estimate::PAGE_BYTES;

    #[test]
    fn the_estimate_counts_each_pass_and_a_page_for_a_small_block() {
        let mut p = FatParams::new(1 << 20);
        p.block_bytes = 512;
        let r = Rates::from_sample((1 << 20, 10_000_000), None).unwrap();
        let passes = p.passes(512);
        assert!(passes.iter().any(|&(bs, _)| bs < PAGE_BYTES));
        let want: u64 = passes
            .iter()
            .map(|&(bs, _)| {
                let n = p.rounds(bs) * p.nr as u64;
                r.write_ns(bs.max(PAGE_BYTES) * n, n)
            })
            .sum();
        assert_eq!(estimate_ns(&p, 512, &r), want);
        // More than the bytes alone would take: the small blocks cost pages.
        assert!(want > r.write_ns(p.bytes(512), 0));
    }
}
