//! `auto`'s policy: which writing steps run, how the whole run's `--write-budget` and
//! `--time-budget` are shared between them, what is skipped and why, and what the plan
//! adds up to — and the pipeline itself (`run`): each step's library entry point called
//! with parameters built from auto's. The CLI (`cli::auto`) turns arguments into
//! `AutoParams` and renders the verdict block; it decides none of this.

use crate::analysis::advice::{advise, Findings};
use crate::commands::align::{self, AlignParams};
use crate::commands::bench::{self, BenchParams};
use crate::commands::fat::FatRequest;
use crate::commands::open_au::OpenAuRequest;
use crate::commands::probe::CapacityParams;
use crate::commands::slc::SlcRequest;
use crate::commands::write_probe::{self, Finished};
use crate::device::TargetSpec;
use crate::report::results::{
    AutoParameters, AutoPlan, AutoResult, ClassesRecord, PlanAnnounced, PlannedStep, SkippedStep,
    StepRecord,
};
use crate::report::{Body, Document};
use crate::session::{Budgets, LivePlan, Rates, WriteFlags, WriteIntent, WriteMode};
use crate::vocab::error::Verdict;
use crate::vocab::units::Given;
use crate::vocab::units::{format_bytes, format_ns};
use crate::vocab::Inference;
use crate::workload::bench::{claim_checks, met_marks};
use crate::workload::EngineKind;
use crate::{Error, Result};
use std::sync::{Arc, Mutex};

pub use crate::report::results::AUTO_SLC_BYTES as SLC_BYTES;
/// The least it can measure with: four intervals of 1 MiB.
pub const SLC_MIN_BYTES: u64 = 4 << 20;
/// Device time the short bench needs (`bench --quick`).
pub const BENCH_NS: u64 = 15_000_000_000;
/// The least the short bench writes to give a write figure: one queue of its first test
/// (eight 1 MiB writes).
pub const BENCH_BYTES: u64 = 8 << 20;
/// Where auto's plan samples the read rate: the low region every writing step writes
/// (from 16 MiB, past a FAT area), see `session::estimate`.
pub const PLAN_SAMPLE: (u64, u64) = (16 << 20, 256 << 20);
/// Why open-au and fat do not run without a confident erase block size.
pub const NEEDS_ERASE: &str = "it needs the erase block, and align was not confident about it";

/// What is left of the run's budgets for one step (`None`: unbounded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allowance {
    pub write_bytes: Option<u64>,
    pub time_ns: Option<u64>,
}

/// The run's budgets and what the steps spent of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pipeline {
    /// The whole run's write budget in bytes and time budget in device ns.
    pub write: Option<u64>,
    pub time_ns: Option<u64>,
    pub spent_bytes: u64,
    pub spent_ns: u64,
    /// Steps not run and why.
    pub skipped: Vec<SkippedStep>,
}

impl Pipeline {
    /// A run with these budgets, nothing spent.
    pub fn new(write: Option<u64>, time_ns: Option<u64>) -> Self {
        Pipeline {
            write,
            time_ns,
            ..Pipeline::default()
        }
    }

    /// Count a finished step's writes and device time.
    pub fn spend(&mut self, step: &Document) {
        self.spent_bytes += step.bytes_written;
        // align reports its wall time as elapsed_ns and its device time apart.
        self.spent_ns += match &step.body {
            Body::Align(a) => a.parameters.device_elapsed_ns,
            _ => step.elapsed_ns,
        };
    }

    /// Record a step that does not run.
    pub fn skip(&mut self, step: &str, why: impl Into<String>) {
        self.skipped.push(SkippedStep {
            command: step.to_string(),
            why: why.into(),
        });
    }

    /// Why `step` was skipped, if it was.
    pub fn skipped_why(&self, step: &str) -> Option<&str> {
        self.skipped
            .iter()
            .find(|s| s.command == step)
            .map(|s| s.why.as_str())
    }

    /// The budgets a writing step gets (what is left), or `None` when it does not run: a
    /// read-only run, or a budget spent (recorded in `skipped`). `needs_bytes`, `needs_ns`:
    /// the least the step can give a figure with (open-au: one erase block).
    pub fn admit(
        &mut self,
        writes: bool,
        step: &str,
        needs_bytes: u64,
        needs_ns: u64,
    ) -> Option<Allowance> {
        if !writes {
            return None;
        }
        let left_bytes = self.write.map(|w| w.saturating_sub(self.spent_bytes));
        let left_ns = self.time_ns.map(|t| t.saturating_sub(self.spent_ns));
        let spent =
            |what: &str, total: String, left: u64, needs: u64, show: &dyn Fn(u64) -> String| {
                if left == 0 {
                    format!("the {what} budget of {total} was spent")
                } else {
                    format!(
                    "the {what} budget of {total} was nearly spent ({} left, it needs at least {})",
                    show(left),
                    show(needs)
                )
                }
            };
        let why = match (self.write, left_bytes, self.time_ns, left_ns) {
            (Some(w), Some(l), ..) if l == 0 || l < needs_bytes => Some(spent(
                "write",
                format_bytes(w),
                l,
                needs_bytes,
                &format_bytes,
            )),
            (.., Some(t), Some(l)) if l == 0 || l < needs_ns => {
                Some(spent("time", format_ns(t as f64), l, needs_ns, &|n| {
                    format_ns(n as f64)
                }))
            }
            _ => None,
        };
        if let Some(why) = why {
            self.skip(step, why);
            return None;
        }
        Some(Allowance {
            write_bytes: left_bytes,
            time_ns: left_ns,
        })
    }
}

/// The plan of a writing run from what each step would write (`intents`, in order) and
/// the bench's region and device time: the totals on top of the device time already
/// spent (`spent_ns`, align's), and the journal room preserve mode needs (`journaled`:
/// false on a simulated card or with `--destructive`).
pub fn plan(
    intents: &[WriteIntent],
    bench: (&WriteIntent, u64),
    spent_ns: u64,
    journaled: bool,
) -> AutoPlan {
    let (bench_intent, bench_ns) = bench;
    let mut steps = Vec::new();
    let (mut typical, mut time_ns, mut slow_ns) = (0u64, spent_ns, spent_ns);
    // Preserve mode saves what each step overwrites and writes it back after it.
    let preserve = |i: &WriteIntent| journaled.then(|| i.preserve_ns());
    let preserve_slow = |i: &WriteIntent| if journaled { i.preserve_slow_ns() } else { 0 };
    for i in intents {
        let t = i.typical_bytes.unwrap_or(i.max_bytes);
        typical = typical.saturating_add(t);
        time_ns = time_ns
            .saturating_add(i.estimated_ns)
            .saturating_add(preserve(i).unwrap_or(0));
        slow_ns = slow_ns
            .saturating_add(i.slow_or_estimated_ns())
            .saturating_add(preserve_slow(i));
        steps.push(PlannedStep {
            command: i.command.to_string(),
            max_bytes: Some(i.max_bytes),
            typical_bytes: Some(t),
            region_bytes: i.region.1,
            estimated_ns: i.estimated_ns,
            preserve_ns: preserve(i),
            estimated_slow_ns: Some(i.slow_or_estimated_ns()),
        });
    }
    time_ns = time_ns
        .saturating_add(bench_ns)
        .saturating_add(preserve(bench_intent).unwrap_or(0));
    slow_ns = slow_ns
        .saturating_add(bench_ns)
        .saturating_add(preserve_slow(bench_intent));
    steps.push(PlannedStep {
        command: "bench".to_string(),
        max_bytes: None,
        typical_bytes: None,
        region_bytes: bench_intent.region.1,
        estimated_ns: bench_ns,
        preserve_ns: preserve(bench_intent),
        // It runs for a set time.
        estimated_slow_ns: Some(bench_ns),
    });
    let rates = intents.first().map_or(bench_intent.rates, |i| i.rates);
    let journal_bytes = journaled.then(|| {
        intents
            .iter()
            .chain([bench_intent])
            .map(|i| i.region.1)
            .max()
            .unwrap_or(0)
    });
    AutoPlan {
        steps,
        typical_bytes: typical,
        estimated_ns: time_ns,
        journal_bytes,
        estimated_slow_ns: Some(slow_ns.max(time_ns)),
        read_bytes_per_s: rates.measured.then_some(rates.read_bps),
    }
}

/// What `auto` is asked to do.
#[derive(Debug, Clone)]
pub struct AutoParams {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    /// The whole run's write budget (`--write-budget`): each step gets what is left.
    pub write_budget: Option<Given<u64>>,
    /// The whole run's time budget (`--time-budget`, device ns): each step gets what is
    /// left; align's own budget (its spelling is the document's `time_budget`).
    pub time_budget: Option<Given<u64>>,
    /// `--write` also runs the write steps, each through the write policy.
    pub flags: WriteFlags,
    /// The class marks printed on the card (`--label`, parsed), else the SSR's.
    pub label: Option<Given<Vec<String>>>,
}

impl AutoParams {
    /// A read-only run on `target` with no budgets and no label.
    pub fn new(target: TargetSpec) -> AutoParams {
        AutoParams {
            target,
            write_budget: None,
            time_budget: None,
            flags: WriteFlags::default(),
            label: None,
        }
    }
}

/// The class marks claimed for the card and who claims them.
#[derive(Debug, Clone)]
pub struct Claim {
    pub marks: Vec<String>,
    /// "label" (`--label`), "ssr" (the card's SD Status register) or null.
    pub source: Option<&'static str>,
    /// What the host path lets the bench show (`None`: no host path known).
    pub host: Option<crate::analysis::hostpath::HostLimits>,
}

/// A finished `auto` run.
#[derive(Debug)]
pub struct AutoRun {
    /// auto's document (`Body::Auto`) with every step's findings.
    pub doc: Document,
    pub verdict: Verdict,
    /// Each step's own document, align's first (for `--verbose` and the HTML report).
    pub steps: Vec<Document>,
    /// The error of the step that failed, if one did: the document holds every step
    /// before it. It decides the exit code unless a check failed (a FAKE outranks it).
    pub failed: Option<Error>,
}

/// How an `auto` run ended.
#[allow(clippy::large_enum_variant)]
pub enum AutoFinished {
    Done(AutoRun),
    /// A signal stopped a step after its regions were restored ([`Verdict::Stopped`]).
    Stopped {
        verdict: Verdict,
    },
}

/// The steps a run makes, in order, for the progress line's `[k/n] step`; cleared from
/// the line when dropped (the run ended, however).
struct Steps(Vec<&'static str>);

impl Steps {
    /// The steps of a run that writes or not, all of them planned.
    fn new(writes: bool) -> Self {
        Steps(if writes {
            vec!["align", "probe", "open-au", "fat", "slc", "bench"]
        } else {
            vec!["align"]
        })
    }

    /// A step that will not run (skipped before the count is shown).
    fn drop_step(&mut self, name: &str) {
        self.0.retain(|s| *s != name);
    }

    /// `name` starts: the line shows `[k/n]`.
    fn start(&self, name: &str) {
        let k = self.0.iter().position(|s| *s == name);
        crate::report::progress::set_step(k.map(|k| (k + 1, self.0.len())));
    }
}

impl Drop for Steps {
    fn drop(&mut self) {
        crate::report::progress::set_step(None);
    }
}

/// An inference's value when it is confident.
pub fn confident_u64(inf: Option<&Inference>) -> Option<u64> {
    inf.and_then(Inference::confident_u64)
}

/// Run the pipeline: align, then with `--write` probe, open-au, fat, a bounded slc and a
/// short bench, each fed what the steps before it found and the budgets left; combine
/// their documents. `on_plan` gets the writing steps' plan before the first write.
pub fn run(params: &AutoParams, on_plan: &mut dyn FnMut(&PlanAnnounced)) -> Result<AutoFinished> {
    let t0 = crate::backend::monotonic_ns();
    let spec = &params.target;
    let claim = claimed(params)?;
    let given = Budgets {
        write: params.write_budget.clone(),
        time_ns: params.time_budget.as_ref().map(|g| g.value),
    };
    // Every step's own write cap is bounded by the device and by the run's budget.
    let size = crate::device::peek(spec)?.size_bytes;
    let mut budget = Pipeline::new(given.write_budget_bytes(size)?, given.time_ns);
    let align_budget = params.time_budget.clone().unwrap_or(Given {
        value: 30_000_000_000,
        text: "30s".into(),
    });
    let mut shown = Steps::new(params.flags.allowed());
    shown.start("align");
    let aligned = align::measure(
        spec,
        &AlignParams {
            time_budget_ns: align_budget.value,
            ..AlignParams::default()
        },
        &params.flags.notices,
    )?;
    let g = &aligned;
    let info = g.target.info().cloned().unwrap_or_default();
    let erase = confident_u64(g.inferences.get("erase_block_bytes"));
    if erase.is_none() {
        shown.drop_step("open-au");
        shown.drop_step("fat");
    }
    let mut steps = vec![StepRecord {
        command: "align".to_string(),
        elapsed_ns: g.elapsed_ns,
        parameters: g.body.parameters_json(),
        bytes_written: None,
    }];
    let mut auto_plan = None;
    // auto's own plan over its writing steps (`None` read-only: align's is the run's).
    let mut clock: Option<Arc<Mutex<AutoClock>>> = None;
    let mut verdict = None;
    let mut doc = Document::new(g.target.clone(), Body::Info(Default::default()));
    doc.inferences = g.inferences.clone();
    doc.warnings = g.warnings.clone();
    doc.metrics = g.metrics.clone();
    doc.bytes_written = g.bytes_written;
    budget.spend(g);
    let mut step_docs = vec![g.clone()];
    let mut outcome = Verdict::Ok;
    let writes = params.flags.allowed();
    let mut flags = WriteFlags {
        planned: true,
        ..params.flags.clone()
    };
    if writes {
        // One read sample of the low region every step writes, for all their estimates.
        let rates = Rates::sample_target(spec, PLAN_SAMPLE);
        let (intents, bench_intent, bench_ns) = intents(spec, size, &flags, erase, &rates)?;
        let journaled = WriteMode::of(spec, &params.flags).journaled();
        let made = plan(
            &intents,
            (&bench_intent, bench_ns),
            budget.spent_ns,
            journaled,
        );
        let time_text = crate::session::estimate::range_text(
            made.estimated_ns,
            made.estimated_slow_ns.unwrap_or(made.estimated_ns),
        );
        on_plan(&PlanAnnounced {
            target: spec.as_str(),
            plan: &made,
            spent_ns: budget.spent_ns,
            write_budget: budget.write,
            time_budget_ns: budget.time_ns,
            erase_known: erase.is_some(),
            destructive: params.flags.destructive,
            bench_write_ns: bench_intent.estimated_ns,
            time_text: &time_text,
            assumption: &bench_intent.rates.assumption(),
        });
        let c = Arc::new(Mutex::new(AutoClock::new(
            &made,
            params.flags.notices.clone(),
        )));
        // The steps' own plans, worked out again, reach auto's as they are said.
        let heard = c.clone();
        let said = params.flags.notices.clone();
        flags.notices = crate::session::Notices::to(move |n| {
            if let crate::session::Notice::Replanned {
                command,
                now,
                at_ns,
                ..
            } = n
            {
                lock(&heard).step_replanned(command, now.0, *at_ns);
            }
            said.say(n.clone());
        });
        clock = Some(c);
        auto_plan = Some(made);
    }
    // The step that failed, with its error: the steps before it keep their results,
    // the ones after it do not run, and the run still ends with its document.
    let mut failed: Option<(&'static str, Error)> = None;
    macro_rules! done {
        ($out:lifetime, $name:expr, $finished:expr) => {
            match $finished {
                Ok(Finished::Done { doc, verdict }) => (doc, verdict),
                Ok(Finished::Stopped { verdict }) => return Ok(AutoFinished::Stopped { verdict }),
                // A usage error or a refusal is about the request, not a fault met on the
                // way: nothing of the run is reported, as for any refused command.
                Err(e) if e.exit_code() == 2 => return Err(e),
                Err(e) => {
                    failed = Some(($name, e));
                    break $out;
                }
            }
        };
    }
    let (mut met, mut failure) = (None, None);
    'steps: {
        if let Some(allowance) = budget.admit(writes, "probe", 0, 0) {
            shown.start("probe");
            run_left(&clock);
            let (pd, c) = done!(
                'steps,
                "probe",
                write_probe::measure(spec, &PROBE, &flags, &budgets(allowance, size))
            );
            outcome = outcome.worst(c);
            absorb(&mut doc, &mut steps, &mut budget, &pd);
            if let Some(k) = &clock {
                lock(k).finished(pd.command(), step_device_ns(&pd), c == Verdict::CheckFailed);
            }
            if let Body::Probe(r) = &pd.body {
                verdict = Some(r.verdict.clone());
            }
            step_docs.push(pd);
        }
        if writes {
            match erase {
                Some(e) => {
                    if let Some(allowance) = budget.admit(writes, "open-au", e, 0) {
                        shown.start("open-au");
                        run_left(&clock);
                        let (od, _) = done!(
                            'steps,
                            "open-au",
                            write_probe::measure(
                                spec,
                                &open_au_request(e),
                                &flags,
                                &budgets(allowance, size)
                            )
                        );
                        absorb(&mut doc, &mut steps, &mut budget, &od);
                        if let Some(c) = &clock {
                            lock(c).finished(od.command(), step_device_ns(&od), false);
                        }
                        step_docs.push(od);
                    }
                }
                None => budget.skip("open-au", NEEDS_ERASE),
            }
        }
        if writes && erase.is_none() {
            budget.skip("fat", NEEDS_ERASE);
        }
        if let Some((e, allowance)) =
            erase.and_then(|e| Some((e, budget.admit(writes, "fat", e, 0)?)))
        {
            shown.start("fat");
            run_left(&clock);
            let (fd, c) = done!(
                'steps,
                "fat",
                write_probe::measure(spec, &fat_request(e), &flags, &budgets(allowance, size))
            );
            outcome = outcome.worst(c);
            absorb(&mut doc, &mut steps, &mut budget, &fd);
            if let Some(c) = &clock {
                lock(c).finished(fd.command(), step_device_ns(&fd), false);
            }
            step_docs.push(fd);
        }
        if let Some(allowance) = budget.admit(writes, "slc", SLC_MIN_BYTES, 0) {
            shown.start("slc");
            run_left(&clock);
            let (sd, c) = done!(
                'steps,
                "slc",
                write_probe::measure(
                    spec,
                    &slc_request(),
                    &flags,
                    &slc_budgets(budgets(allowance, size), size)
                )
            );
            outcome = outcome.worst(c);
            absorb(&mut doc, &mut steps, &mut budget, &sd);
            if let Some(c) = &clock {
                lock(c).finished(sd.command(), step_device_ns(&sd), false);
            }
            step_docs.push(sd);
        }
        // A short bench: the speed and application classes, and the claimed ones checked.
        // The highest class met in each family (`None` without write figures) and why the
        // bench stopped early, if it did; the claimed marks' checks go into the document.
        if let Some(allowance) = budget.admit(writes, "bench", BENCH_BYTES, BENCH_NS) {
            shown.start("bench");
            run_left(&clock);
            let cap = budget.write.map(|_| allowance.write_bytes.unwrap_or(0));
            let b = match bench::measure(spec, &bench_params(cap), &flags) {
                Ok(b) => b,
                Err(e) if e.exit_code() == 2 => return Err(e),
                Err(e) => {
                    failed = Some(("bench", e));
                    break 'steps;
                }
            };
            let Some(bd) = b.doc else {
                return Ok(AutoFinished::Stopped { verdict: b.verdict });
            };
            outcome = outcome.worst(b.verdict);
            absorb(&mut doc, &mut steps, &mut budget, &bd);
            if let Some(c) = &clock {
                lock(c).finished(bd.command(), step_device_ns(&bd), false);
            }
            let checks = claim_checks("auto", &claim.marks, &b.figures, claim.host.as_ref());
            // A mark the host keeps from being measured is undecided (exit 1), one the
            // card fails is failed (exit 3).
            if checks.iter().any(|c| !c.passed && !c.inconclusive) {
                outcome = outcome.worst(Verdict::CheckFailed);
            } else if checks.iter().any(|c| c.inconclusive) {
                outcome = outcome.worst(Verdict::Incomplete);
            }
            doc.checks.extend(checks);
            met = (!b.classes.is_empty()).then(|| met_marks(&b.classes));
            failure = b.failure;
            step_docs.push(bd);
        }
    }
    if let Some((step, e)) = &failed {
        doc.warnings.push(crate::vocab::Warning::StepFailed {
            step: step.to_string(),
            error: crate::input::printable(&e.to_string()).into_owned(),
        });
        // What a failed step leaves unrun is said once, as the failure.
        let order = ["probe", "open-au", "fat", "slc", "bench"];
        let after = order.iter().skip_while(|s| *s != step).skip(1);
        for later in after {
            if !budget.skipped.iter().any(|s| s.command == *later) {
                doc.warnings.push(crate::vocab::Warning::StepSkipped {
                    step: later.to_string(),
                    why: format!("{step} failed before it"),
                });
            }
        }
    }
    for s in &budget.skipped {
        doc.warnings.push(crate::vocab::Warning::StepSkipped {
            step: s.command.to_string(),
            why: s.why.clone(),
        });
    }
    let findings = Findings {
        size_bytes: info.size_bytes,
        logical_sector_bytes: info.logical_sector_bytes,
        erase_block_bytes: erase,
        page_bytes: confident_u64(g.inferences.get("page_bytes")),
        open_au: confident_u64(doc.inferences.get("open_au")),
        usable_bytes: confident_u64(doc.inferences.get("usable_bytes")),
        geometry_measured: true,
    };
    doc.body = Body::Auto(AutoResult {
        parameters: AutoParameters {
            time_budget: align_budget.text,
            run_time_budget_ns: budget.time_ns,
            write_budget: budget.write,
            write: params.flags.write,
            destructive: params.flags.destructive,
            label: params.label.as_ref().map(|l| l.text.clone()),
        },
        steps,
        plan: auto_plan,
        verdict,
        skipped: budget.skipped.clone(),
        classes: ClassesRecord {
            claimed: claim.marks.clone(),
            claimed_by: claim.source.map(str::to_string),
            met,
            failure,
        },
        advice: advise(&findings),
    });
    if let Some(why) = crate::device::in_use(spec) {
        doc.warnings
            .push(crate::vocab::Warning::DeviceInUse { why });
    }
    // The run's plan against the device time its steps took (issue 45.6): read-only,
    // align's; with --write, the sum of the steps' plans, worked out again as they ran.
    doc.timing = match &clock {
        Some(c) => {
            let c = lock(c);
            Some(c.live.timing(c.done_ns))
        }
        None => g.timing.clone(),
    };
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    dedup_warnings(&mut doc.warnings);
    Ok(AutoFinished::Done(AutoRun {
        doc,
        verdict: outcome,
        steps: step_docs,
        failed: failed.map(|(_, e)| e),
    }))
}

/// The probe as auto runs it: `probe`'s defaults.
const PROBE: CapacityParams = CapacityParams::new(None, false);

/// open-au as auto runs it, on the erase block align found.
fn open_au_request(erase: u64) -> OpenAuRequest {
    OpenAuRequest {
        erase_bytes: Some(erase),
        block_bytes: 16 << 10,
        max_au: None,
        offset_bytes: None,
        random: false,
    }
}

/// fat as auto runs it, on the erase block align found.
fn fat_request(erase: u64) -> FatRequest {
    FatRequest {
        erase_bytes: Some(erase),
        block_bytes: None,
        nr: 6,
    }
}

/// The write-cache test auto runs: no idle recovery probe.
fn slc_request() -> SlcRequest {
    SlcRequest {
        offset_bytes: 16 << 20,
        recover_ns: 0,
        random_data: false,
        plot: None,
    }
}

/// slc's budgets on a device of `size` bytes: at most `SLC_BYTES` and slc's own default
/// for the device (a quarter of it), or what the write budget leaves.
fn slc_budgets(mut budgets: Budgets, size: u64) -> Budgets {
    let left = budgets.write.as_ref().map_or(u64::MAX, |g| g.value);
    let cap = SLC_BYTES.min(crate::probe::slc::default_budget(size));
    budgets.write = Some(Given::number(left.min(cap)));
    budgets
}

/// The short bench as auto runs it (`bench --quick`); `write_budget`: its cap.
fn bench_params(write_budget: Option<u64>) -> BenchParams {
    BenchParams {
        quick: true,
        runtime_ns: None,
        size_bytes: 256 << 20,
        engine: EngineKind::Uring,
        cpus: Vec::new(),
        expect: None,
        runs: 1,
        write_budget,
        progress: true,
    }
}

/// What each writing step would write (open-au's and fat's on the erase block align
/// found), and the bench's intent and device time.
fn intents(
    spec: &TargetSpec,
    size: u64,
    flags: &WriteFlags,
    erase: Option<u64>,
    rates: &Rates,
) -> Result<(Vec<WriteIntent>, WriteIntent, u64)> {
    let none = Budgets::default();
    let mut intents = vec![write_probe::plan(spec, &PROBE, flags, &none, rates)?];
    if let Some(e) = erase {
        intents.push(write_probe::plan(
            spec,
            &open_au_request(e),
            flags,
            &none,
            rates,
        )?);
        intents.push(write_probe::plan(
            spec,
            &fat_request(e),
            flags,
            &none,
            rates,
        )?);
    }
    intents.push(write_probe::plan(
        spec,
        &slc_request(),
        flags,
        &slc_budgets(none.clone(), size),
        rates,
    )?);
    let (bench_intent, bench_ns) = bench::plan(spec, &bench_params(None), rates)?;
    Ok((intents, bench_intent, bench_ns))
}

/// A step's share of the run's budgets as its own `--write-budget` and `--time-budget`, its
/// write cap at most the device's `size` bytes (a step refuses a budget above the device).
fn budgets(a: Allowance, size: u64) -> Budgets {
    Budgets {
        write: a.write_bytes.map(|b| Given::number(b.min(size))),
        time_ns: a.time_ns,
    }
}

/// A step's findings in auto's document, its summary in `steps`, its cost on the budget.
fn absorb(doc: &mut Document, steps: &mut Vec<StepRecord>, budget: &mut Pipeline, step: &Document) {
    doc.inferences.extend(step.inferences.clone());
    doc.warnings.extend(step.warnings.clone());
    doc.checks.extend(step.checks.clone());
    doc.metrics.extend(step.metrics.clone());
    doc.bytes_written += step.bytes_written;
    budget.spend(step);
    steps.push(StepRecord {
        command: step.command().to_string(),
        elapsed_ns: step.elapsed_ns,
        parameters: step.body.parameters_json(),
        bytes_written: Some(step.bytes_written),
    });
}

/// What auto's plan leaves of the run as a step starts, for the progress line's ETA.
fn run_left(clock: &Option<Arc<Mutex<AutoClock>>>) {
    let left = clock.as_ref().map(|c| {
        let c = lock(c);
        c.live.timing(0).last_plan().0.saturating_sub(c.done_ns)
    });
    crate::report::progress::set_run_left(left);
}

/// The device time a step took: its `timing`'s span, else (align) its reads'.
fn step_device_ns(step: &Document) -> u64 {
    match (&step.timing, &step.body) {
        (Some(t), _) => t.device_ns,
        (None, Body::Align(a)) => a.parameters.device_elapsed_ns,
        (None, _) => step.elapsed_ns,
    }
}

/// auto's own plan with `--write` (issue 45.6): the sum of its steps' plans (auto's
/// announced plan, align's device time in it), worked out again as the run goes: when a
/// step finishes (the steps done at the device time they took, the writing steps left at
/// their plans scaled by how the steps done ran against theirs: every writing step's first
/// plan assumes the same write rate, which the steps done measured; bench at its set time)
/// and when a step says it worked its own plan out again (that step's new plan in place of
/// its first). The first such plan stands until one moves by more than its ±30 %; `timing`
/// records the plan that stood last and when it was made.
struct AutoClock {
    live: LivePlan,
    notices: crate::session::Notices,
    /// Device time of the steps that finished, align's included.
    done_ns: u64,
    /// The writing steps not finished yet and their plans (device ns).
    left: Vec<(String, u64)>,
    /// The finished writing steps' plans and the device time they took (those that ran
    /// their course: a probe that found a fake in its first seconds says nothing of rates).
    planned_done: u64,
    took_done: u64,
}

/// Lock auto's clock, whatever a panicking holder left.
fn lock(c: &Mutex<AutoClock>) -> std::sync::MutexGuard<'_, AutoClock> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

impl AutoClock {
    fn new(plan: &AutoPlan, notices: crate::session::Notices) -> Self {
        let left: Vec<(String, u64)> = plan
            .steps
            .iter()
            .map(|s| {
                (
                    s.command.clone(),
                    s.estimated_ns + s.preserve_ns.unwrap_or(0),
                )
            })
            .collect();
        let steps_ns: u64 = left.iter().map(|l| l.1).sum();
        AutoClock {
            live: LivePlan::new(
                plan.estimated_ns,
                plan.estimated_slow_ns.unwrap_or(plan.estimated_ns),
            ),
            notices,
            done_ns: plan.estimated_ns.saturating_sub(steps_ns),
            left,
            planned_done: 0,
            took_done: 0,
        }
    }

    /// The plan of the steps left but `except`, the steps done having taken `ratio` of
    /// their plans.
    fn left_ns(&self, ratio: f64, except: &str) -> u64 {
        self.left
            .iter()
            .filter(|(c, _)| c != except)
            .map(|(c, ns)| {
                if c == "bench" {
                    *ns
                } else {
                    (*ns as f64 * ratio) as u64
                }
            })
            .sum()
    }

    /// How the finished writing steps ran against their plans (1 before any finished).
    fn ratio(&self) -> f64 {
        if self.planned_done > 0 {
            self.took_done as f64 / self.planned_done as f64
        } else {
            1.0
        }
    }

    /// A plan of the whole run, `at_ns` into it: it stands if none does yet or it moves
    /// from the one standing by more than that one's uncertainty; said on stderr when it
    /// moved from the first plan by more than the first plan's uncertainty.
    fn consider(&mut self, ns: u64, at_ns: u64) {
        let standing = self.live.timing(0).last_plan();
        let moved = (ns as f64 / standing.0.max(1) as f64 - 1.0).abs() > standing.1;
        if self.live.replanned() && !moved {
            return;
        }
        self.live.revise(ns, at_ns);
        if let Some(n) = self.live.notice("auto") {
            self.notices.say(n);
        }
    }

    /// The step `name` finished, having taken `took` device ns (`early`: on a finding,
    /// before its planned course).
    fn finished(&mut self, name: &str, took: u64, early: bool) {
        self.done_ns += took;
        if let Some(k) = self.left.iter().position(|l| l.0 == name) {
            let (_, planned) = self.left.remove(k);
            if name != "bench" && !early {
                self.planned_done += planned;
                self.took_done += took;
            }
        }
        if !self.left.is_empty() {
            let ns = self.done_ns + self.left_ns(self.ratio(), "");
            self.consider(ns, self.done_ns);
        }
    }

    /// The running step `command` worked its own plan out again: `ns` in all, `at_ns`
    /// into the step.
    fn step_replanned(&mut self, command: &str, ns: u64, at_ns: u64) {
        if !self.left.iter().any(|l| l.0 == command) {
            return;
        }
        let plan = self.done_ns + ns + self.left_ns(self.ratio(), command);
        self.consider(plan, self.done_ns + at_ns);
    }
}

/// `--label`'s marks, else those the card's SSR claims; checked before anything is measured.
fn claimed(params: &AutoParams) -> Result<Claim> {
    if let Some(l) = &params.label {
        let opened = crate::device::open(&params.target, &crate::device::OpenRequest::read_only())?;
        return Ok(Claim {
            marks: l.value.clone(),
            source: Some("label"),
            host: super::host_path::limits(&params.target, opened.block_name.as_deref())?,
        });
    }
    let opened = crate::device::open(&params.target, &crate::device::OpenRequest::read_only())?;
    let marks = opened
        .block_name
        .as_deref()
        .and_then(crate::device::mmc::claimed_marks)
        .unwrap_or_default();
    Ok(Claim {
        source: (!marks.is_empty()).then_some("ssr"),
        marks,
        host: super::host_path::limits(&params.target, opened.block_name.as_deref())?,
    })
}

/// The steps share some warnings (a busy machine): each is said once.
fn dedup_warnings(warnings: &mut Vec<crate::vocab::Warning>) {
    let mut seen = Vec::new();
    warnings.retain(|w| {
        let key = w.clone();
        let new = !seen.contains(&key);
        if new {
            seen.push(key);
        }
        new
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim_sd16() -> TargetSpec {
        TargetSpec::parse("sim:sd-16g").unwrap()
    }

    fn done(finished: AutoFinished) -> AutoRun {
        match finished {
            AutoFinished::Done(run) => run,
            AutoFinished::Stopped { verdict } => panic!("stopped: {verdict:?}"),
        }
    }

    #[test]
    fn auto_s_plan_stands_until_a_step_moves_it_by_more_than_30_percent() {
        let step = |c: &str, ns: u64| PlannedStep {
            command: c.to_string(),
            max_bytes: None,
            typical_bytes: None,
            region_bytes: 0,
            estimated_ns: ns,
            preserve_ns: None,
            estimated_slow_ns: None,
        };
        let s = 1_000_000_000u64;
        // align took 1 s; probe and open-au planned at 10 s each, bench 15 s.
        let plan = AutoPlan {
            steps: vec![
                step("probe", 10 * s),
                step("open-au", 10 * s),
                step("bench", 15 * s),
            ],
            typical_bytes: 0,
            estimated_ns: 36 * s,
            journal_bytes: None,
            estimated_slow_ns: Some(72 * s),
            read_bytes_per_s: None,
        };
        let mut c = AutoClock::new(&plan, Default::default());
        assert_eq!(c.live.timing(0).planned_ns, 36 * s);
        // probe took twice its plan: open-au is planned at twice its own, bench not.
        c.finished("probe", 20 * s, false);
        assert_eq!(c.live.timing(0).last_plan(), (56 * s, 0.3));
        // open-au's own plan, 30 s into it: 80 s; 21 + 80 + 15 moves 56 by more than 30 %.
        c.step_replanned("open-au", 80 * s, 30 * s);
        let t = c.live.timing(0);
        assert_eq!(
            (t.replanned_ns, t.replanned_at_ns),
            (Some(116 * s), Some(51 * s))
        );
        // It took 90 s: 21 + 90 + 15 = 126 is within 116's ±30 %, so 116 stands.
        c.finished("open-au", 90 * s, false);
        c.step_replanned("bench", 16 * s, 10 * s);
        c.finished("bench", 16 * s, false);
        let t = c.live.timing(c.done_ns);
        assert_eq!((t.replanned_ns, t.device_ns), (Some(116 * s), 127 * s));
        // A probe that ended on its finding says nothing of the write rate.
        let mut c = AutoClock::new(&plan, Default::default());
        c.finished("probe", s / 2, true);
        assert_eq!(c.live.timing(0).last_plan(), (s + s / 2 + 25 * s, 0.3));
    }

    #[test]
    fn a_read_only_run_is_align_alone_and_plans_no_writes() {
        let params = AutoParams::new(sim_sd16());
        let mut plans = 0;
        let run = done(super::run(&params, &mut |_| plans += 1).unwrap());
        assert_eq!(plans, 0);
        let commands: Vec<&str> = run.steps.iter().map(|d| d.command()).collect();
        assert_eq!(commands, ["align"]);
        let Body::Auto(a) = &run.doc.body else {
            panic!("{:?}", run.doc.command());
        };
        assert!(a.plan.is_none() && a.verdict.is_none());
        assert_eq!(a.parameters.time_budget, "30s");
        assert_eq!(
            confident_u64(run.doc.inferences.get("erase_block_bytes")),
            Some(4 << 20)
        );
        assert_eq!(run.doc.bytes_written, 0);
    }

    #[test]
    fn a_writing_run_feeds_align_s_erase_block_to_open_au_and_fat() {
        let params = AutoParams {
            flags: WriteFlags {
                write: true,
                ..WriteFlags::default()
            },
            ..AutoParams::new(sim_sd16())
        };
        let mut planned = Vec::new();
        let run = done(
            super::run(&params, &mut |m| {
                planned = m.plan.steps.iter().map(|s| s.command.clone()).collect();
                assert!(m.erase_known);
            })
            .unwrap(),
        );
        assert_eq!(planned, ["probe", "open-au", "fat", "slc", "bench"]);
        let commands: Vec<&str> = run.steps.iter().map(|d| d.command()).collect();
        assert_eq!(
            commands,
            ["align", "probe", "open-au", "fat", "slc", "bench"]
        );
        let erase = |command: &str| match &run
            .steps
            .iter()
            .find(|d| d.command() == command)
            .unwrap()
            .body
        {
            Body::OpenAu(o) => o.parameters.params.erase_bytes,
            Body::Fat(f) => f.parameters.params.erase_bytes,
            _ => 0,
        };
        assert_eq!(erase("open-au"), 4 << 20);
        assert_eq!(erase("fat"), 4 << 20);
        let written: u64 = run.steps.iter().map(|d| d.bytes_written).sum();
        assert!(written > 0);
        assert_eq!(run.doc.bytes_written, written);
        assert!(run.steps.iter().any(|d| d.command() == "bench"));
    }

    #[test]
    fn a_spent_budget_skips_the_step_and_says_which_budget() {
        let mut p = Pipeline::new(Some(10 << 20), None);
        assert_eq!(
            p.admit(true, "open-au", 4 << 20, 0),
            Some(Allowance {
                write_bytes: Some(10 << 20),
                time_ns: None
            })
        );
        p.spent_bytes = 8 << 20;
        assert_eq!(p.admit(true, "fat", 4 << 20, 0), None);
        let why = p.skipped_why("fat").unwrap();
        assert!(
            why.contains("write budget of 10 MiB was nearly spent"),
            "{why}"
        );
        assert!(why.contains("2 MiB left"), "{why}");
        p.spent_bytes = 10 << 20;
        assert_eq!(p.admit(true, "slc", 0, 0), None);
        assert!(p.skipped_why("slc").unwrap().ends_with("was spent"));
        // A read-only run admits nothing and skips nothing.
        let mut r = Pipeline::new(None, None);
        assert_eq!(r.admit(false, "probe", 0, 0), None);
        assert!(r.skipped.is_empty());
    }

    #[test]
    fn the_time_budget_counts_device_time() {
        let mut p = Pipeline::new(None, Some(20_000_000_000));
        p.spent_ns = 10_000_000_000;
        assert_eq!(p.admit(true, "bench", 0, BENCH_NS), None);
        assert!(p.skipped_why("bench").unwrap().contains("time budget"));
        assert!(p.admit(true, "slc", SLC_MIN_BYTES, 0).is_some());
    }

    #[test]
    fn the_plan_adds_up_the_steps_and_journals_the_largest_region() {
        let step = |command, max, typical, region, ns| WriteIntent {
            command,
            region: (0, region),
            max_bytes: max,
            typical_bytes: typical,
            estimated_ns: ns,
            ..WriteIntent::default()
        };
        let intents = [
            step("probe", 100, Some(40), 1000, 5),
            step("slc", 50, None, 3000, 7),
        ];
        let bench = step("bench", 0, None, 2000, 0);
        let p = plan(&intents, (&bench, 11), 3, true);
        assert_eq!(p.typical_bytes, 90);
        // Preserve mode saves and restores what each step overwrites (bench: its region).
        let saving: u64 = [&intents[0], &intents[1], &bench]
            .iter()
            .map(|i| i.preserve_ns())
            .sum();
        // At the rates of the intents (here the fixed assumption): each saved, written
        // back and verified in one piece.
        let r = Rates::assumed();
        let each: u64 = [40, 50, 0].iter().map(|&b| r.preserve_ns(b, b, 1)).sum();
        assert_eq!(saving, each);
        assert_eq!(p.estimated_ns, 3 + 5 + 7 + 11 + saving);
        // The upper figure (slower writes) is never below it.
        assert!(p.estimated_slow_ns.unwrap() >= p.estimated_ns);
        assert_eq!(p.read_bytes_per_s, None, "nothing measured");
        assert_eq!(p.steps[0].preserve_ns, Some(intents[0].preserve_ns()));
        assert_eq!(p.journal_bytes, Some(3000));
        assert_eq!(p.steps.len(), 3);
        assert_eq!(p.steps[2].max_bytes, None);
        let unjournaled = plan(&intents, (&bench, 11), 3, false);
        assert_eq!(unjournaled.journal_bytes, None);
        assert_eq!(unjournaled.estimated_ns, 3 + 5 + 7 + 11);
        assert!(unjournaled.steps.iter().all(|s| s.preserve_ns.is_none()));
    }
}
