//! One driver for the writing tests (`fat`, `open-au`, `program`, `slc`): each test says
//! what it plans to write, how it measures, what the samples mean and how they read; the
//! driver does the rest the same way for all of them — peek at the target, plan, open the
//! write session (the `--write` gate, preserve mode, budgets), run, end and restore,
//! document, render.
//!
//! A test's `run` is its probe with the probe's controller (the analysis that decides
//! where to measure next, as `analysis::align::next_round` is for align); `infer` is pure
//! analysis. The CLI turns arguments into a test and prints what the driver returns.

pub mod fat;
pub mod open_au;
pub mod program;
pub mod slc;

use crate::backend::{Backend, TimeBudget};
use crate::cli::guard::{self, Ran, WriteFlags, WritePlan};
use crate::report::{Document, Inference, TargetInfo, Warning};
use crate::Result;
use std::io;

/// A test that writes to its target.
pub trait WriteTest {
    /// What the probe measured.
    type Samples;
    /// The subcommand and the document's `command`.
    const COMMAND: &'static str;

    /// What the test is about to write, for the banner and the refusal without `--write`.
    fn plan(&self, sector: u64) -> WritePlan;
    /// The session's write budget, from `--write-budget` (`requested`).
    fn write_budget(&self, requested: Option<u64>) -> Option<u64> {
        requested
    }
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
    /// The test's own fields of the document: parameters, samples, extras.
    fn document(&self, samples: &Self::Samples, doc: &mut Document) -> Result<()>;
    /// The text output above the wear line.
    fn render(&self, doc: &Document, samples: &Self::Samples) -> String;
}

/// The inferences of a test and the warnings the analysis raised.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub inferences: Vec<(String, Inference)>,
    pub warnings: Vec<Warning>,
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
    /// It ran: the document and its text rendering.
    Done { doc: Document, text: String },
    /// A signal stopped it after the regions were restored: the exit code (130 or 143).
    Stopped { command: &'static str, code: i32 },
}

/// Run a writing test on `spec`: peek at the target (read-only) and `build` the test
/// from what it is (parameters are checked against its size and sector), then plan,
/// open the write session, run under the time budget, end (restore and verify in
/// preserve mode), document and render.
pub fn drive<T: WriteTest>(
    spec: &str,
    flags: &WriteFlags,
    build: impl FnOnce(&TargetInfo) -> Result<T>,
) -> Result<Finished> {
    let info = guard::peek(spec)?;
    let test = build(&info)?;
    let plan = test.plan(info.logical_sector_bytes as u64);
    let budget = test.write_budget(flags.write_budget_bytes(info.size_bytes)?);
    let time_budget = flags.time_budget_ns()?;
    let mut session = guard::begin(spec, flags, &plan, budget)?;
    let ran = session.run(T::COMMAND, |dev, progress| {
        let mut dev = TimeBudget::new(dev as &mut dyn Backend, time_budget);
        test.run(&mut dev, progress)
    })?;
    let (samples, mut doc) = match ran {
        Ran::Done(samples, doc) => (samples, doc),
        Ran::Stopped(code) => {
            return Ok(Finished::Stopped {
                command: T::COMMAND,
                code,
            })
        }
    };
    test.document(&samples, &mut doc)?;
    let findings = test.infer(&samples);
    doc.inferences.extend(findings.inferences);
    doc.warnings.extend(findings.warnings);
    if let Some(why) = test.stopped(&samples) {
        doc.warnings.push(guard::stopped_early(why));
    }
    let mut text = test.render(&doc, &samples);
    text.push_str(&guard::wear_line(&doc));
    Ok(Finished::Done { doc, text })
}

/// `value` of an inference as text, `?` when inconclusive.
pub fn value_text(inf: &Inference) -> String {
    inf.value
        .as_ref()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "?".into())
}
