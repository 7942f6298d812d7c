//! `open-au`: how many erase blocks the card can write to at once.

use super::write_probe::{erase_size, Findings, Request, WriteTest};
use crate::analysis::openau::{
    collapse_on_a_busy_machine, decide, fast_blocks_in_collapse, infer_linear, infer_open_au,
    linear_reference,
};
use crate::backend::Backend;
use crate::device::TargetInfo;
use crate::device::TargetSpec;
use crate::probe::open_au::{self, OpenAuParams, OpenAuSamples};
use crate::probe::write_common::{align_up, check_geometry, ladder};
use crate::report::results::{OpenAuResult, WithEraseSource};
use crate::report::Body;
use crate::session::{Budgets, Measured, Rates, WriteFlags, WriteIntent};
use crate::vocab::units::{format_bytes, short_size};
use crate::{Error, Result};
use std::io;

/// `open-au`'s parameters as asked for: the erase block size (`None`: measured by align
/// first, read-only, and then it must be confident) and where the first one starts
/// (`None`: [`open_au::default_offset`]) are settled on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAuRequest {
    pub erase_bytes: Option<u64>,
    /// Smallest block size written (the size whose collapse decides).
    pub block_bytes: u64,
    /// Most erase blocks written concurrently (`None`: [`DEFAULT_MAX_AU`], or as many as
    /// fit past the offset on a smaller device).
    pub max_au: Option<u32>,
    pub offset_bytes: Option<u64>,
    /// Also measure random order inside each erase block.
    pub random: bool,
}

impl Request for OpenAuRequest {
    type Test = OpenAuTest;

    fn build(
        &self,
        spec: &TargetSpec,
        flags: &WriteFlags,
        budgets: &Budgets,
        info: &TargetInfo,
    ) -> Result<OpenAuTest> {
        let sector = info.logical_sector_bytes as u64;
        let (erase, source) = erase_size(
            self.erase_bytes,
            spec,
            flags,
            &format!(
                "open-au writes {} blocks into up to {} erase blocks",
                short_size(self.block_bytes),
                self.max_au.unwrap_or(DEFAULT_MAX_AU)
            ),
        )?;
        let mut params = params(self, budgets, info.size_bytes, sector, erase)?;
        params.watch_machine = info.kind != crate::device::TargetKind::Sim;
        Ok(OpenAuTest {
            params,
            erase_size_source: source,
            detected: Default::default(),
        })
    }
}

/// Parameters checked against the device.
fn params(
    req: &OpenAuRequest,
    budgets: &Budgets,
    size: u64,
    sector: u64,
    erase: u64,
) -> Result<OpenAuParams> {
    let block = req.block_bytes;
    check_geometry(erase, block, size, sector)?;
    if req.max_au == Some(0) {
        return Err(Error::usage("--max-au must be at least 1"));
    }
    let mut p = OpenAuParams::new(erase);
    p.block_bytes = block;
    p.random = req.random;
    p.time_budget_ns = budgets.time_ns;
    p.offset_bytes = match req.offset_bytes {
        Some(o) => {
            if o % erase != 0 {
                return Err(Error::usage(format!(
                    "--offset {o} is not a multiple of the erase size {erase}: use e.g. {}",
                    align_up(o, erase)
                )));
            }
            o
        }
        None => open_au::default_offset(erase),
    };
    let fit = size.saturating_sub(p.offset_bytes) / erase;
    // The default is bounded by the device: a user who gave no --max-au is never told
    // to change it.
    p.max_au = req.max_au.unwrap_or_else(|| {
        DEFAULT_MAX_AU
            .min(u32::try_from(fit).unwrap_or(u32::MAX))
            .max(1)
    });
    let need = p.offset_bytes + p.max_au as u64 * erase;
    if need > size {
        if fit == 0 {
            return Err(Error::usage(format!(
                "--offset {}: no erase block of {} fits between it and the end of the device ({}); give a smaller --offset, e.g. {}",
                req.offset_bytes.map(short_size).unwrap_or_default(),
                format_bytes(erase),
                format_bytes(size),
                short_size(open_au::default_offset(erase))
            )));
        }
        return Err(Error::usage(format!(
            "--max-au {}: {} erase blocks of {} from offset {} need {} but the device has {}; use --max-au {fit} or less",
            p.max_au,
            p.max_au,
            format_bytes(erase),
            format_bytes(p.offset_bytes),
            format_bytes(need),
            format_bytes(size)
        )));
    }
    Ok(p)
}

/// The most erase blocks open-au writes at once when `--max-au` is not given (fewer on a
/// device where fewer fit past the offset).
pub const DEFAULT_MAX_AU: u32 = 32;

/// The open erase blocks a plan counts on: a card's usual few (its run finds the real
/// count).
pub const TYPICAL_OPEN_AU: u32 = 4;

/// How long the probe takes on a card that keeps `open_au` erase blocks open, at `rates`:
/// what its run does (see `probe::open_au`). Detection measures the counts 1 to
/// `open_au + 1` and both sides of the cut-off again, `rounds` blocks into each erase
/// block; the ladder measures every block size at `open_au` and `open_au + 1`. A write
/// to more erase blocks than the card keeps open makes it copy one: a whole erase
/// block's write ([`Rates::write_ns`]) for each such write of less than an erase block.
pub fn estimate_ns(p: &OpenAuParams, sector: u64, rates: &Rates, open_au: u32) -> u64 {
    let n = open_au.min(p.max_au) as u64;
    let over = (n + 1).min(p.max_au as u64);
    let det = p.detect_bytes(sector);
    let rounds = p.rounds as u64;
    let copy = |count: u64| count * rates.copy_ns(p.erase_bytes);
    // Detection: counts 1..=n and n again fit; n + 1, measured twice, does not.
    let fitting = ((1..=n).sum::<u64>() + n) * rounds;
    let mut ns = rates.blocks_ns(det, fitting);
    let collapsed = if over > n { 2 * over * rounds } else { 0 };
    ns += if det < p.erase_bytes {
        copy(collapsed)
    } else {
        rates.blocks_ns(det, collapsed)
    };
    if p.ladder {
        for bs in ladder(p.erase_bytes, p.block_bytes, sector) {
            let r = p.ladder_rounds(bs);
            ns += rates.blocks_ns(bs, n * r);
            if over > n {
                ns += if bs < p.erase_bytes {
                    copy(over * r)
                } else {
                    rates.blocks_ns(bs, over * r)
                };
            }
        }
    }
    if p.random {
        ns *= 2;
    }
    ns
}

/// What detection in order found, for the plan worked out again: the counts the ladder
/// measures (with whether each collapsed) and one detection write's time at the last
/// count that held and at the first that collapsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Detected {
    pub counts: Vec<(u32, bool)>,
    pub fit_ns: f64,
    pub collapse_ns: f64,
}

impl Detected {
    /// From detection's points when it is done (`found`: the counts around the cut-off).
    fn new(
        points: &[crate::analysis::openau::OpenAuPoint],
        found: Option<(u32, u32)>,
        det: u64,
    ) -> Option<Self> {
        let at = |n: u32| {
            points
                .iter()
                .find(|x| x.open_aus == n && x.bytes_per_s > 0.0)
                .map(|x| det as f64 * 1e9 / x.bytes_per_s)
        };
        match found {
            Some((lo, hi)) => Some(Detected {
                counts: vec![(lo, false), (hi, true)],
                fit_ns: at(lo)?,
                collapse_ns: at(hi)?,
            }),
            None => {
                let most = points.iter().map(|x| x.open_aus).max()?;
                let fit_ns = at(most)?;
                let mut counts = vec![(1, false), (most, false)];
                counts.dedup();
                Some(Detected {
                    counts,
                    fit_ns,
                    collapse_ns: fit_ns,
                })
            }
        }
    }

    /// The ladder's device time (see `probe::open_au`): each block size at each count,
    /// a write costing a command and its bytes at detection's rate, and at a count that
    /// collapsed what a collapsed detection write cost beyond a fitting one (the copy) for
    /// each write smaller than an erase block. `skip_first`: less its first measurement.
    fn ladder_ns(&self, p: &OpenAuParams, sector: u64, op_ns: f64, skip_first: bool) -> f64 {
        let det = p.detect_bytes(sector) as f64;
        let per_byte = (self.fit_ns - op_ns).max(self.fit_ns / 2.0) / det;
        let copy = (self.collapse_ns - self.fit_ns).max(0.0);
        let mut ns = 0.0;
        let mut first = skip_first;
        for &(n, collapsed) in &self.counts {
            for bs in ladder(p.erase_bytes, p.block_bytes, sector) {
                let writes = (n as u64 * p.ladder_rounds(bs)) as f64;
                let copies = collapsed && bs < p.erase_bytes;
                let one = op_ns + bs as f64 * per_byte + if copies { copy } else { 0.0 };
                if std::mem::take(&mut first) {
                    continue;
                }
                ns += writes * one;
            }
        }
        ns
    }
}

/// The open-AU test: its parameters and where the erase size came from.
pub struct OpenAuTest {
    pub params: OpenAuParams,
    /// "--erase-size" or the align inference that measured it (stated in the output).
    pub erase_size_source: String,
    /// What detection in order found, once it is done (for the plan worked out again).
    pub detected: std::sync::Mutex<Option<Detected>>,
}

impl WriteTest for OpenAuTest {
    type Samples = OpenAuSamples;
    const COMMAND: &'static str = "open-au";

    fn plan(&self, sector: u64, rates: &Rates) -> WriteIntent {
        let p = &self.params;
        let typical = p.typical_bytes(sector, TYPICAL_OPEN_AU);
        let touched = (TYPICAL_OPEN_AU.min(p.max_au) as u64 + 1).min(p.max_au as u64);
        WriteIntent {
            command: Self::COMMAND,
            region: p.region(),
            max_bytes: p.max_bytes(sector),
            typical_bytes: Some(typical),
            estimated_ns: estimate_ns(p, sector, rates, TYPICAL_OPEN_AU),
            overwritten_bytes: Some(touched * p.erase_bytes),
            places: touched,
            what: format!(
                "open-au writes {} blocks into up to {} erase blocks of {}{} (the time counts a card that keeps {TYPICAL_OPEN_AU} open and copies an erase block for each write past them)",
                format_bytes(p.detect_bytes(sector)),
                p.max_au,
                format_bytes(p.erase_bytes),
                if p.random {
                    ", in order and in random order"
                } else {
                    ""
                }
            ),
            smaller: "lower --write-budget",
            ..WriteIntent::default()
        }
    }

    fn run(
        &self,
        dev: &mut dyn Backend,
        progress: &mut dyn FnMut(u64, u64),
    ) -> io::Result<OpenAuSamples> {
        let max_au = self.params.max_au;
        let det = self.params.detect_bytes(dev.logical_sector_bytes() as u64);
        crate::report::progress::phase("writing", true);
        open_au::run(
            dev,
            &self.params,
            &mut |linear, random| {
                let next = decide(max_au, linear, random);
                if let (crate::analysis::openau::Next::Done(found), None) = (&next, random) {
                    let mut d = self.detected.lock().unwrap_or_else(|p| p.into_inner());
                    if d.is_none() {
                        *d = Detected::new(linear, *found, det);
                    }
                }
                next
            },
            progress,
        )
    }

    /// Once detection in order is done, its time so far and the ladder at the counts it
    /// found, at the write times it measured (the card's own rates and open erase
    /// blocks); random order, when measured, is counted as long again.
    fn replan(&self, sector: u64, rates: &Rates, measured: &Measured) -> Option<u64> {
        let d = self
            .detected
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        let p = &self.params;
        let order = measured.device_ns() as f64
            + if p.ladder {
                d.ladder_ns(p, sector, rates.op_ns, true)
            } else {
                0.0
            };
        let ns = if p.random { 2.0 * order } else { order };
        Some(ns as u64)
    }

    fn infer(&self, s: &OpenAuSamples) -> Findings {
        let stall = |random: bool| -> Vec<(u32, f64)> {
            s.detection(random)
                .filter_map(|x| x.cpu_stall_share.map(|b| (x.open_aus, b)))
                .collect()
        };
        let linear = s.points(false);
        let fast = fast_blocks_in_collapse(&linear, &s.block_median_ns(false));
        let (open, warning) = infer_linear(&linear, &fast, self.params.offset_bytes);
        let mut f = Findings::default();
        f.add("open_au", collapse_on_a_busy_machine(open, &stall(false)));
        f.warnings.extend(warning);
        if self.params.random {
            let random = infer_open_au(&s.points(true), linear_reference(&linear));
            f.add(
                "open_au_random",
                collapse_on_a_busy_machine(random, &stall(true)),
            );
        }
        f
    }

    fn stopped<'a>(&self, s: &'a OpenAuSamples) -> Option<&'a str> {
        s.stopped.as_deref()
    }

    fn document(&self, s: &OpenAuSamples, _findings: &Findings) -> Result<Body> {
        Ok(Body::OpenAu(OpenAuResult {
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

    #[test]
    fn the_estimate_counts_the_fitting_writes_and_an_erase_block_copy_past_them() {
        let mut p = OpenAuParams::new(64 << 10);
        p.block_bytes = 16 << 10;
        p.rounds = 2;
        p.max_au = 8;
        p.ladder = false;
        let r = Rates::from_sample((1 << 20, 10_000_000), None).unwrap();
        // A card keeping 2 open: counts 1, 2 and 2 again fit (5 erase blocks' rounds,
        // 10 writes of 16 KiB); 3, measured twice, does not: 12 writes each copying
        // an erase block of 64 KiB.
        let want = r.blocks_ns(16 << 10, 10) + 12 * r.copy_ns(64 << 10);
        assert_eq!(estimate_ns(&p, 512, &r, 2), want);
        // Both orders: twice the time.
        p.random = true;
        assert_eq!(estimate_ns(&p, 512, &r, 2), 2 * want);
        // The ladder adds every block size at both counts.
        p.random = false;
        p.ladder = true;
        assert!(estimate_ns(&p, 512, &r, 2) > want);
        // Slower writes, a longer estimate.
        let slow = r.slower_writes(4.0);
        assert!(estimate_ns(&p, 512, &slow, 2) > estimate_ns(&p, 512, &r, 2));
    }
}
