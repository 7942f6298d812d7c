//! One driver for the writing tests (`fat`, `open-au`, `program`, `slc`): each test says
//! what it plans to write, how it measures, what the samples mean and how they read; the
//! driver does the rest the same way for all of them — peek at the target, plan, open the
//! write session (the `--write` gate, preserve mode, budgets), run, end and restore,
//! document.
//!
//! A test's `run` is its probe with the probe's controller (the analysis that decides
//! where to measure next, as `analysis::align::next_round` is for align); `infer` is pure
//! analysis. [`measure`] takes a test's typed parameters (a [`Request`]) and returns the
//! driver's `Finished`; its text is the output room's.

use crate::backend::Backend;
use crate::device::TargetInfo;
use crate::device::TargetSpec;
use crate::report::{Body, Document};
use crate::session::{
    check_allowed, estimate, open_for_write, stopped_early, time_budget_use, Budgets, LivePlan,
    Measured, Metered, Ran, Rates, WriteFlags, WriteIntent, WriteMode,
};
use crate::vocab::error::Verdict;
use crate::vocab::{Check, Inference, Metric, Status, Warning};
use crate::{Error, Result};
use std::io;

/// A test that writes to its target.
pub trait WriteTest {
    /// What the probe measured.
    type Samples;
    /// The subcommand and the document's `command`.
    const COMMAND: &'static str;

    /// What the test is about to write, for the banner and the refusal without `--write`
    /// (the driver sets the budgets), its time worked out at `rates` (what its run does:
    /// its bytes, its commands, what the card does about them).
    fn plan(&self, sector: u64, rates: &Rates) -> WriteIntent;
    /// The session's write budget, from `--write-budget` (`requested`).
    fn write_budget(&self, requested: Option<u64>) -> Option<u64> {
        requested
    }
    /// The session's time budget, from `--time-budget` (`requested`).
    fn time_budget(&self, requested: Option<u64>) -> Option<u64> {
        requested
    }
    /// The session is open; `journaled`: preserve mode saves what the test overwrites;
    /// `mode`: how the data the test overwrites is treated.
    fn opened(&mut self, _journaled: bool, _mode: WriteMode) {}
    /// Measure on the session's device stack; `progress(done, total)` feeds the progress
    /// line. A budget's refusal ends the probe early with its samples, not with an error.
    fn run(
        &self,
        dev: &mut dyn Backend,
        progress: &mut dyn FnMut(u64, u64),
    ) -> io::Result<Self::Samples>;
    /// What the samples say (pure: the analysis).
    fn infer(&self, samples: &Self::Samples) -> Findings;
    /// Why the probe stopped before its plan was done, if it did.
    fn stopped<'a>(&self, samples: &'a Self::Samples) -> Option<&'a str>;
    /// The test's own fields of the document (parameters, samples, extras), with what
    /// the analysis found (`findings`); writes the `--plot` file if asked.
    fn document(&self, samples: &Self::Samples, findings: &Findings) -> Result<Body>;
    /// The probe's own clock, when it keeps one (simulated time on `sim:` targets).
    fn elapsed_ns(&self, _samples: &Self::Samples) -> Option<u64> {
        None
    }
    /// The test's time worked out again once its first measurement has the device's own
    /// rates (`rates`, with the write rate `measured` ran at), or `None` until it has
    /// them: by default [`WriteTest::plan`] at those rates once the first writes are
    /// metered ([`Measured::has_write_rate`]). A test whose time turns on something
    /// else it measures (open-au: how many erase blocks the card keeps open) waits for it.
    fn replan(&self, sector: u64, rates: &Rates, measured: &Measured) -> Option<u64> {
        measured
            .has_write_rate()
            .then(|| self.plan(sector, rates).estimated_ns)
    }
}

/// The inferences of a test, the warnings the analysis adds, and whether the device failed the check (exit 3).
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub inferences: Vec<(String, Inference)>,
    pub warnings: Vec<Warning>,
    pub failed: bool,
    /// The test ran but could not decide (neither a pass nor a failure): exit 1, as a
    /// check that could not check what it was asked.
    pub inconclusive: bool,
    /// The pass/fail checks and the figures to watch, for the document.
    pub checks: Vec<Check>,
    pub metrics: Vec<Metric>,
}

impl Findings {
    /// Add an inference under its JSON key.
    pub fn add(&mut self, key: &str, inference: Inference) {
        self.inferences.push((key.to_string(), inference));
    }

    /// The inference under `key`, if the test made one.
    pub fn get(&self, key: &str) -> Option<&Inference> {
        self.inferences
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, i)| i)
    }
}

/// How a test ended.
// Made once per command and taken apart at once: boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Finished {
    /// It ran: the document and the verdict (ok, incomplete when an answer is
    /// inconclusive, or check failed).
    Done { doc: Document, verdict: Verdict },
    /// A signal stopped it after the regions were restored ([`Verdict::Stopped`]).
    Stopped { verdict: Verdict },
}

/// A writing test's parameters as asked for (`probe`'s, `open-au`'s, `fat`'s, `slc`'s),
/// made into the test once the target is known: checked against its size and sector,
/// open-au's and fat's erase block measured by align when not given.
pub trait Request {
    type Test: WriteTest;

    /// The test on the target `spec` described by `info`, with the session's `flags` and
    /// `budgets`.
    fn build(
        &self,
        spec: &TargetSpec,
        flags: &WriteFlags,
        budgets: &Budgets,
        info: &TargetInfo,
    ) -> Result<Self::Test>;
}

/// Run the writing test `req` asks for on `spec` through the write policy (`flags`,
/// `budgets`): the library entry point of `probe`, `open-au`, `fat` and `slc`.
pub fn measure<R: Request>(
    spec: &TargetSpec,
    req: &R,
    flags: &WriteFlags,
    budgets: &Budgets,
) -> Result<Finished> {
    drive(spec, flags, budgets, |info| {
        req.build(spec, flags, budgets, info)
    })
}

/// What the test `req` asks for would write on `spec` with `budgets`, without writing:
/// [`drive`]'s peek, build and plan alone (for `auto`'s plan).
pub fn plan<R: Request>(
    spec: &TargetSpec,
    req: &R,
    flags: &WriteFlags,
    budgets: &Budgets,
    rates: &Rates,
) -> Result<WriteIntent> {
    let info = crate::device::peek(spec)?;
    let test = req.build(spec, flags, budgets, &info)?;
    Ok(planned(&test, info.logical_sector_bytes as u64, rates))
}

/// The test's plan at `rates`, with its upper figure (writes [`estimate::SLOW_WRITES`]
/// times slower) and the rates it assumes.
pub fn planned<T: WriteTest>(test: &T, sector: u64, rates: &Rates) -> WriteIntent {
    let slow = test
        .plan(sector, &rates.slower_writes(estimate::SLOW_WRITES))
        .estimated_ns;
    let mut intent = test.plan(sector, rates);
    intent.slow_ns = slow;
    intent.rates = *rates;
    intent
}

/// The rates a test's plan is worked out from: with `--write` or `--destructive`, a short
/// read sample of the region it will write (see [`estimate`]); without, nothing is
/// opened and the plan says it assumes a 10 MiB/s card.
pub fn rates_for<T: WriteTest>(
    spec: &TargetSpec,
    flags: &WriteFlags,
    test: &T,
    sector: u64,
) -> Rates {
    if !flags.allowed() {
        return Rates::assumed();
    }
    Rates::sample_target(spec, test.plan(sector, &Rates::assumed()).region)
}

/// Run a writing test on `spec`: peek at the target (read-only) and `build` the test
/// from what it is (parameters are checked against its size and sector), then plan,
/// open the write session (the policy, with the write and time budgets), run, end
/// (restore and verify in preserve mode) and document.
pub fn drive<T: WriteTest>(
    spec: &TargetSpec,
    flags: &WriteFlags,
    budgets: &Budgets,
    build: impl FnOnce(&TargetInfo) -> Result<T>,
) -> Result<Finished> {
    let info = crate::device::peek(spec)?;
    let mut test = build(&info)?;
    let sector = info.logical_sector_bytes as u64;
    let rates = rates_for(spec, flags, &test, sector);
    let mut intent = planned(&test, sector, &rates);
    intent.budget_bytes = test.write_budget(budgets.write_budget_bytes(info.size_bytes)?);
    let time_budget_ns = budgets.time_ns;
    intent.time_budget_ns = test.time_budget(time_budget_ns);
    let mut session = open_for_write(spec, flags, &intent)?;
    test.opened(session.journal.is_some(), session.mode);
    let device_t0 = session.dev.clock_ns();
    // The plan stated, preserve mode's saving and restoring included when it journals;
    // worked out again from the device's own rates once the run's first measurement has
    // them (`WriteTest::replan`).
    let journaled = session.journal.is_some();
    let with_preserve = |i: &WriteIntent, slow: bool| -> u64 {
        let own = if slow {
            i.slow_or_estimated_ns()
        } else {
            i.estimated_ns
        };
        own + match (journaled, slow) {
            (false, _) => 0,
            (true, false) => i.preserve_ns(),
            (true, true) => i.preserve_slow_ns(),
        }
    };
    let mut live = LivePlan::new(with_preserve(&intent, false), with_preserve(&intent, true));
    let meter = std::sync::Mutex::new(Measured::default());
    let notices = session.notices.clone();
    let ran = session.run(T::COMMAND, |dev, progress| {
        let mut metered = Metered::new(&mut *dev, &meter);
        let test = &test;
        test.run(&mut metered, &mut |done, total| {
            if !live.replanned() {
                let m = *meter.lock().unwrap_or_else(|p| p.into_inner());
                let now = m.rates(&rates);
                if let Some(ns) = test.replan(sector, &now, &m) {
                    let mut i = test.plan(sector, &now);
                    i.estimated_ns = ns;
                    i.rates = now;
                    live.replan(with_preserve(&i, false), m.device_ns());
                    if let Some(n) = live.notice(T::COMMAND) {
                        notices.say(n);
                    }
                }
            }
            progress(done, total)
        })
    })?;
    // Device time (virtual on `sim:`), as the budget counts it, the restore included.
    let used_ns = session.dev.clock_ns().saturating_sub(device_t0);
    let (samples, ending) = match ran {
        Ran::Done(samples, ending) => (samples, ending),
        Ran::Stopped(verdict, _) => return Ok(Finished::Stopped { verdict }),
    };
    let findings = test.infer(&samples);
    let mut doc = Document::for_target(&info, test.document(&samples, &findings)?);
    session.fill(&mut doc, &ending);
    doc.timing = Some(live.timing(used_ns));
    if let Some(ns) = test.elapsed_ns(&samples) {
        doc.elapsed_ns = ns;
    }
    doc.inferences.extend(findings.inferences);
    doc.warnings.extend(findings.warnings);
    doc.checks.extend(findings.checks);
    doc.metrics.extend(findings.metrics);
    if let Some(why) = test.stopped(&samples) {
        doc.warnings.push(stopped_early(why));
    }
    if let Some((used, over)) = time_budget_use(time_budget_ns, used_ns) {
        if let Some(w) = doc.session.as_mut() {
            w.time_budget = Some(used);
        }
        doc.warnings.extend(over);
    }
    let verdict = if findings.failed {
        Verdict::CheckFailed
    } else if findings.inconclusive {
        Verdict::Incomplete
    } else {
        Verdict::Ok
    };
    Ok(Finished::Done { doc, verdict })
}

/// The erase block size a test writes by: `given` (`--erase-size`), or measured by the
/// align probe (read-only, with its defaults) when not given, which must then be
/// confident. Returns the size and where it came from (stated in the output). Without
/// `--write` nothing is measured: the refusal explains the plan (`what`).
pub fn erase_size(
    given: Option<u64>,
    spec: &TargetSpec,
    flags: &WriteFlags,
    what: &str,
) -> Result<(u64, String)> {
    if let Some(e) = given {
        return Ok((e, "--erase-size".to_string()));
    }
    check_allowed(
        spec,
        flags,
        &format!("{what}; the erase block size is first measured with `align` (read-only) since --erase-size was not given"),
    )?;
    flags
        .notices
        .say(crate::session::Notice::MeasuringEraseSize);
    let params = crate::commands::align::AlignParams::default();
    // Its plan is not this test's: measured quietly (the test says its own).
    let inf = crate::commands::align::measure(spec, &params, &Default::default())?
        .inferences
        .remove("erase_block_bytes")
        .unwrap_or_else(|| Inference::inconclusive("align gave no erase block inference"));
    match inf.as_u64() {
        Some(e) if inf.status == Status::Confident => Ok((
            e,
            format!("align ({}, {})", inf.status_word(), inf.evidence),
        )),
        _ => Err(Error::usage(format!(
            "align could not settle the erase block size of {spec} ({}: {}); give --erase-size",
            inf.status_word(),
            inf.evidence
        ))),
    }
}
