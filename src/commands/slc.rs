//! `slc`: the write-cache cliff — how much a sustained write gets at cache speed before
//! the native speed, and whether the cache recovers.

use super::write_probe::{Findings, Request, WriteTest};
use crate::analysis::slc::{cliff_confirmed, infer_recovery, infer_slc};
use crate::backend::Backend;
use crate::device::TargetInfo;
use crate::device::TargetSpec;
use crate::probe::slc::{self, SlcParams, SlcSamples};
use crate::report::output_file::OutputFile;
use crate::report::results::SlcResult;
use crate::report::Body;
use crate::session::{Budgets, Rates, WriteFlags, WriteIntent};
use crate::vocab::units::format_bytes;
use crate::{Error, Result};
use std::io;

/// `slc`'s parameters as asked for; the write budget (`--write-budget`, else
/// [`slc::default_budget`]) and the room on the device settle the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlcRequest {
    /// Start of the sustained write.
    pub offset_bytes: u64,
    /// Idle time before probing whether the cache recovered (0 skips it).
    pub recover_ns: u64,
    /// Write pseudo-random data instead of zeros.
    pub random_data: bool,
    /// Write an SVG plot of throughput against bytes written here (created before the
    /// test writes anything).
    pub plot: Option<OutputFile>,
}

impl Request for SlcRequest {
    type Test = SlcTest;

    fn build(
        &self,
        _spec: &TargetSpec,
        _flags: &WriteFlags,
        budgets: &Budgets,
        info: &TargetInfo,
    ) -> Result<SlcTest> {
        Ok(SlcTest {
            params: params(
                self,
                budgets,
                info.size_bytes,
                info.logical_sector_bytes as u64,
            )?,
            plot: self.plot.clone(),
            device_bytes: info.size_bytes,
        })
    }
}

/// Parameters checked against the device.
fn params(req: &SlcRequest, budgets: &Budgets, size: u64, sector: u64) -> Result<SlcParams> {
    let offset = req.offset_bytes;
    let requested = budgets.write_budget_bytes(size)?;
    let budget = requested.unwrap_or_else(|| slc::default_budget(size));
    let mut p = SlcParams::new(size, budget);
    p.offset_bytes = offset;
    p.recover_ns = req.recover_ns;
    if p.recover_ns == 0 {
        p.recovery_bytes = 0;
    }
    p.random_data = req.random_data;
    p.time_budget_ns = budgets.time_ns;
    if offset % sector != 0 {
        return Err(Error::usage(format!(
            "--offset {offset} is not a multiple of the {sector}-byte sector"
        )));
    }
    let room = size.saturating_sub(offset);
    p.budget_bytes =
        budget.min(room.saturating_sub(p.recovery_bytes)) / p.block_bytes * p.block_bytes;
    if p.budget_bytes < 4 * p.interval_bytes {
        return Err(Error::usage(format!(
            "a write budget of {} from offset {} on a {} device leaves fewer than 4 intervals of {}: raise --write-budget or lower --offset",
            format_bytes(p.budget_bytes),
            format_bytes(offset),
            format_bytes(size),
            format_bytes(p.interval_bytes)
        )));
    }
    Ok(p)
}

/// The write-cache test, and where to draw its plot.
pub struct SlcTest {
    pub params: SlcParams,
    /// Write an SVG plot of throughput against bytes written here (created before the
    /// test writes anything).
    pub plot: Option<OutputFile>,
    /// The device's size: how much of it a write that never slowed down covered.
    pub device_bytes: u64,
}

impl SlcTest {
    /// Bytes written at most: the sustained write and the recovery write.
    fn max_bytes(&self) -> u64 {
        self.params.budget_bytes + self.params.recovery_bytes
    }
}

impl WriteTest for SlcTest {
    type Samples = SlcSamples;
    const COMMAND: &'static str = "slc";

    fn plan(&self, _sector: u64, rates: &Rates) -> WriteIntent {
        let p = &self.params;
        let max = self.max_bytes();
        WriteIntent {
            command: Self::COMMAND,
            region: p.region(),
            max_bytes: max,
            typical_bytes: None,
            // All of it: a card whose cache ends early stops sooner.
            estimated_ns: rates.write_ns(max, max / p.block_bytes) + p.recover_ns,
            what: format!(
                "slc writes {} sequentially in 1 MiB blocks until the speed drops and stays down, idles {} s, then writes {} more",
                format_bytes(p.budget_bytes),
                p.recover_ns / 1_000_000_000,
                format_bytes(p.recovery_bytes)
            ),
            smaller: "lower --write-budget",
            ..WriteIntent::default()
        }
    }

    /// The parameters already hold `--write-budget` (or the default): the session caps
    /// the writes at the sustained write and the recovery write.
    fn write_budget(&self, _requested: Option<u64>) -> Option<u64> {
        Some(self.max_bytes())
    }

    fn run(
        &self,
        dev: &mut dyn Backend,
        progress: &mut dyn FnMut(u64, u64),
    ) -> io::Result<SlcSamples> {
        let mut shown = None;
        slc::run(
            dev,
            &self.params,
            &mut cliff_confirmed,
            &mut |stage, done, total| {
                if shown != Some(stage) {
                    shown = Some(stage);
                    crate::report::progress::phase(stage.name(), stage != slc::Stage::Idling);
                }
                progress(done, total)
            },
        )
    }

    fn infer(&self, s: &SlcSamples) -> Findings {
        let inf = infer_slc(&s.intervals, &s.stopped, self.device_bytes);
        let recovered = infer_recovery(&inf, s.recovery.as_ref(), self.params.recover_ns);
        let mut f = Findings::default();
        f.add("slc_cache_bytes", inf.slc_cache_bytes);
        f.add("cached_bytes_per_s", inf.cached_bytes_per_s);
        f.add("native_bytes_per_s", inf.native_bytes_per_s);
        f.add("slc_cache_recovered", recovered);
        f
    }

    /// The reason is always given, in the document's `stopped`: not a warning.
    /// Its write budget is its plan and the cliff its goal; the time budget cuts it short.
    fn stopped<'a>(&self, s: &'a SlcSamples) -> Option<&'a str> {
        let time = crate::backend::stop_reason(&crate::backend::time_budget_error(0));
        (Some(s.stopped.as_str()) == time.as_deref()).then_some(s.stopped.as_str())
    }

    fn document(&self, s: &SlcSamples, _findings: &Findings) -> Result<Body> {
        if let Some(file) = &self.plot {
            file.write(crate::report::charts::slc(&s.intervals).to_svg().as_bytes())?;
        }
        Ok(Body::Slc(SlcResult {
            parameters: self.params.clone(),
            samples: s.intervals.clone(),
            recovery: s.recovery,
            stopped: s.stopped.clone(),
            plot: self.plot.as_ref().map(|p| p.path().display().to_string()),
        }))
    }
}
