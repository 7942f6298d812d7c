//! `flashscope auto TARGET`: the one-command answer — identity, geometry, speed, real
//! capacity (with --write) and what to do about it.

use super::{align, bench, fat, open_au, probe, slc, Outcome, Output};
use crate::analysis::advice::{
    advise, erase_unknown, Advice, Findings, DEFAULT_ALIGN, DEVICE, PARTITION,
};
use crate::auto::{
    Allowance, Pipeline, BENCH_BYTES, BENCH_NS, NEEDS_ERASE, SLC_BYTES, SLC_MIN_BYTES,
};
use crate::error::{EXIT_CHECK_FAILED, EXIT_OK};
use crate::probe::write_test::capacity::MAKE_USABLE;
use crate::report::results::{AutoParameters, AutoPlan, AutoResult, ClassesRecord, StepRecord};
use crate::report::{Body, Document, Inference, Status};
use crate::target::write::{Budgets, WriteFlags};
use crate::units::{format_bytes, format_ns};
use crate::workload::bench::{claim_checks, class_checks, met_marks, parse_label};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Arguments of `auto`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  flashscope auto sim:sd-16g
  flashscope auto sim:fake-64g --write
  flashscope auto /dev/mmcblk0 --verbose
  flashscope auto /dev/mmcblk0 --json > card.json
  flashscope auto /dev/mmcblk0 --write -o card.html
  flashscope auto /dev/sdb --write --label 'U3 V30 A2'

Read-only unless --write is given. Runs align to find the geometry (and with --write the
fake-capacity probe, open erase blocks, the FAT area, a write-cache test of at most 256 MiB
and a short bench, each fed the erase block align found), then prints a short
verdict: real capacity, classes, geometry, and the sfdisk and mkfs lines that fit it
(DEVICE is the whole card, PARTITION the partition sfdisk makes). The classes an SD
card's SSR claims, or --label for a card or stick whose label is all there is, are
checked against the bench; without --write they are \"not measured\". --verbose adds each
step's measurements and the reason for every line; -o FILE.html writes the run's report
(every step's document with its charts, as `flashscope report` does). Exit 3 when the
probe finds a fake or a claimed class is not met. --time-budget and --write-budget are
the whole run's: each step gets what is left; a step they no longer cover is skipped, and
the verdict block says which.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Time budget of the whole run, in device time (virtual for sim:): each step gets what
    /// is left, and a step that no longer fits is skipped (said so) [default: 30s for align,
    /// the write steps unbounded].
    #[arg(long, value_name = "DURATION", value_parser = crate::units::duration_arg)]
    pub time_budget: Option<String>,
    /// Write budget of the whole run (e.g. 512M): each writing step gets what is left as its
    /// cap; once it is spent the remaining steps are skipped (said so).
    #[arg(long, value_name = "SIZE", value_parser = crate::units::size_arg)]
    pub write_budget: Option<String>,
    /// `--write` also runs the write tests (the fake-capacity probe and the open erase
    /// blocks), each through the write-safety policy.
    #[command(flatten)]
    pub flags: WriteFlags,
    /// Also print each step's measurements (align, probe, open-au) and the reason for every
    /// advice line.
    #[arg(long)]
    pub verbose: bool,
    /// Also write this run's HTML report (auto's verdict and every step's document with
    /// its charts) to FILE.html, as `flashscope report` does.
    #[arg(long, short = 'o', value_name = "FILE.html")]
    pub output: Option<PathBuf>,
    /// The class marks printed on the card or stick, e.g. "U3 V30 A2" (C2 C4 C6 C10 U1 U3
    /// V6 V10 V30 V60 V90 A1 A2), checked with --write against a short bench [default: the
    /// marks an SD card's SSR register claims].
    #[arg(long, value_name = "MARKS")]
    pub label: Option<String>,
}

fn confident_u64(inf: Option<&Inference>) -> Option<u64> {
    inf.filter(|i| i.status == Status::Confident)
        .and_then(|i| i.as_u64())
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    if let Some(page) = &args.output {
        check_output(page)?;
    }
    use std::io::IsTerminal;
    let (outcome, steps) = execute(args, !out.json || std::io::stderr().is_terminal())?;
    let Some(doc) = &outcome.doc else {
        return outcome.emit(out);
    };
    if let Some(page) = &args.output {
        let mut docs = vec![doc.clone()];
        docs.extend(steps);
        super::report::write_page(&docs, page)?;
        if !out.json {
            eprintln!("flashscope auto: report in {}", page.display());
        }
    }
    outcome.emit(out)
}

/// A report path whose directory does not exist fails before anything is measured.
fn check_output(page: &Path) -> Result<()> {
    let dir = match page.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if page.file_name().is_none() || !dir.is_dir() {
        return Err(Error::usage(format!(
            "--output {}: not a file in an existing directory",
            page.display()
        )));
    }
    Ok(())
}

/// Run the steps and combine their documents; also returns each step's own document (for
/// the HTML report, which charts their samples). `announce`: print the plan on stderr.
pub fn execute(args: &Args, announce: bool) -> Result<(Outcome, Vec<Document>)> {
    let t0 = crate::backend::monotonic_ns();
    let claim = claimed(args)?;
    let given = Budgets {
        write_budget: args.write_budget.clone(),
        time_budget: args.time_budget.clone(),
    };
    let mut budget = Pipeline::new(
        given.write_budget_bytes(crate::target::peek(&args.target)?.size_bytes)?,
        given.time_budget_ns()?,
    );
    let align_budget = args.time_budget.clone().unwrap_or_else(|| "30s".into());
    let geometry = align::execute(&align::Args {
        target: args.target.clone(),
        blocksize: Vec::new(),
        time_budget: align_budget.clone(),
        count: None,
        positions: 8,
        plot: None,
        realtime: false,
    })?;
    let Some(g) = &geometry.doc else {
        return Ok((geometry, Vec::new()));
    };
    let info = g.target.info().cloned().unwrap_or_default();
    let size = info.size_bytes;
    let erase = confident_u64(g.inferences.get("erase_block_bytes"));
    let mut steps = vec![StepRecord {
        command: "align".to_string(),
        elapsed_ns: g.elapsed_ns,
        parameters: g.body.parameters_json(),
        bytes_written: None,
    }];
    let mut auto_plan = None;
    let mut verdict = None;
    let mut doc = Document::new(g.target.clone(), Body::Info(Default::default()));
    doc.inferences = g.inferences.clone();
    doc.warnings = g.warnings.clone();
    doc.metrics = g.metrics.clone();
    doc.bytes_written = g.bytes_written;
    budget.spend(g);
    let mut step_docs = vec![g.clone()];
    let mut probe_text = String::new();
    let mut open_au_text = String::new();
    let mut bench_text = String::new();
    let mut code = EXIT_OK;
    let writes = args.flags.allowed();
    if writes {
        let (plan, text) = plan(args, erase, &budget)?;
        if announce {
            eprint!("{text}");
        }
        auto_plan = Some(plan);
    }
    if let Some(allowance) = budget.admit(writes, "probe", 0, 0) {
        let p = probe::execute(&probe_args(args, budgets(allowance)))?;
        let Some(pd) = p.doc else {
            return Ok((p, step_docs));
        };
        code = code.max(p.code);
        absorb(&mut doc, &mut steps, &mut budget, &pd);
        if let Body::Probe(r) = &pd.body {
            verdict = Some(r.verdict.clone());
        }
        // The verdict and the partition line are in the verdict block already.
        for line in p.text.lines() {
            if Some(line) != verdict.as_deref() && !line.starts_with(MAKE_USABLE) {
                probe_text.push_str(line);
                probe_text.push('\n');
            }
        }
        step_docs.push(pd);
    }
    if writes {
        match erase {
            Some(e) => {
                if let Some(allowance) = budget.admit(writes, "open-au", e, 0) {
                    let o = open_au::execute(&open_au_args(args, e, budgets(allowance)))?;
                    let Some(od) = o.doc else {
                        return Ok((o, step_docs));
                    };
                    absorb(&mut doc, &mut steps, &mut budget, &od);
                    open_au_text = o.text;
                    step_docs.push(od);
                }
            }
            None => budget.skip("open-au", NEEDS_ERASE),
        }
    }
    // The FAT area and a bounded write-cache test: one line each in --verbose and the report.
    let mut more_text = String::new();
    if writes && erase.is_none() {
        budget.skip("fat", NEEDS_ERASE);
    }
    if let Some((e, allowance)) = erase.and_then(|e| Some((e, budget.admit(writes, "fat", e, 0)?)))
    {
        let f = fat::execute(&fat_args(args, e, budgets(allowance)))?;
        let Some(fd) = f.doc else {
            return Ok((f, step_docs));
        };
        code = code.max(f.code);
        absorb(&mut doc, &mut steps, &mut budget, &fd);
        more_text.push_str(&format!("FAT area (fat): {}\n", result_line(&f.text)));
        step_docs.push(fd);
    }
    if let Some(allowance) = budget.admit(writes, "slc", SLC_MIN_BYTES, 0) {
        let s = slc::execute(&slc_args(args, budgets(allowance)))?;
        let Some(sd) = s.doc else {
            return Ok((s, step_docs));
        };
        code = code.max(s.code);
        absorb(&mut doc, &mut steps, &mut budget, &sd);
        more_text.push_str(&format!(
            "Write cache (slc, at most {}): {}\n",
            format_bytes(SLC_BYTES),
            result_line(&s.text)
        ));
        step_docs.push(sd);
    }
    // A short bench: the speed and application classes, and the claimed ones checked.
    let mut classes = None;
    if let Some(allowance) = budget.admit(writes, "bench", BENCH_BYTES, BENCH_NS) {
        let cap = budget.write.map(|_| allowance.write_bytes.unwrap_or(0));
        let b = bench::execute(&bench_args(args, cap), false)?;
        let Some(bd) = b.outcome.doc else {
            return Ok((b.outcome, step_docs));
        };
        code = code.max(b.outcome.code);
        absorb(&mut doc, &mut steps, &mut budget, &bd);
        let checks = claim_checks("auto", &claim.marks, &b.figures);
        if checks.iter().any(|c| !c.passed) {
            code = code.max(EXIT_CHECK_FAILED);
        }
        doc.checks.extend(checks.iter().cloned());
        let met = class_checks(&b.figures);
        classes = Some(Measured {
            met: (!met.is_empty()).then(|| met_marks(&met)),
            checks,
            failure: b.failure,
        });
        bench_text = b.outcome.text;
        step_docs.push(bd);
    }
    for s in &budget.skipped {
        doc.warnings.push(crate::report::Warning::StepSkipped {
            step: s.command.to_string(),
            why: s.why.clone(),
        });
    }
    let classes_line = classes_line(&claim, classes.as_ref(), budget.skipped_why("bench"));
    let findings = Findings {
        size_bytes: size,
        logical_sector_bytes: info.logical_sector_bytes,
        erase_block_bytes: erase,
        page_bytes: confident_u64(g.inferences.get("page_bytes")),
        open_au: confident_u64(doc.inferences.get("open_au")),
        usable_bytes: confident_u64(doc.inferences.get("usable_bytes")),
        geometry_measured: true,
    };
    let advice = advise(&findings);
    doc.body = Body::Auto(AutoResult {
        parameters: AutoParameters {
            time_budget: align_budget,
            run_time_budget_ns: budget.time_ns,
            write_budget: budget.write,
            write: args.flags.write,
            destructive: args.flags.destructive,
            label: args.label.clone(),
        },
        steps,
        plan: auto_plan,
        verdict: verdict.clone(),
        skipped: budget.skipped.clone(),
        classes: ClassesRecord {
            claimed: claim.marks.clone(),
            claimed_by: claim.source.map(str::to_string),
            met: classes.as_ref().and_then(|c| c.met.clone()),
        },
        advice: advice.clone(),
    });
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);

    dedup_warnings(&mut doc.warnings);

    let describe = |key: &str| -> String {
        match g.inferences.get(key) {
            Some(i) if i.value.is_some() => format!(
                "{} ({})",
                i.as_u64().map(format_bytes).unwrap_or_else(|| "?".into()),
                i.status_word()
            ),
            Some(_) => "inconclusive".to_string(),
            None => "not measured".to_string(),
        }
    };
    // The verdict block: capacity, geometry, what to do; details only with --verbose.
    let mut text = String::new();
    if let Some(v) = &verdict {
        text.push_str(&format!("{v}\n"));
    }
    text.push_str(&format!(
        "{}: {}; erase block {}, page {}",
        args.target,
        format_bytes(size),
        describe("erase_block_bytes"),
        describe("page_bytes")
    ));
    if let Some(i) = doc.inferences.get("open_au") {
        text.push_str(&format!(
            ", open erase blocks {}",
            i.value
                .as_ref()
                .map_or("inconclusive".to_string(), |v| format!(
                    "{v} ({})",
                    i.status_word()
                ))
        ));
    }
    text.push('\n');
    if !writes {
        text.push_str("capacity: not checked (read-only run); --write adds the fake-capacity probe and the open-erase-block test, and saves and restores what they overwrite\n");
    }
    let budget_skips: Vec<&str> = budget
        .skipped
        .iter()
        .filter(|s| s.why.contains("budget"))
        .map(|s| s.command.as_str())
        .collect();
    if let Some(s) = budget.skipped.iter().find(|s| s.why.contains("budget")) {
        text.push_str(&format!(
            "skipped: {} ({})\n",
            budget_skips.join(", "),
            s.why
        ));
    }
    if let Some(l) = &classes_line {
        text.push_str(l);
        text.push('\n');
    }
    text.push_str(&actions(&advice, erase.is_some()));
    if args.verbose {
        text.push_str("\nGeometry (align):\n");
        text.push_str(&geometry.text);
        if writes {
            text.push_str("\nReal capacity (probe):\n");
            text.push_str(&probe_text);
        }
        if !open_au_text.is_empty() {
            text.push_str("\nOpen erase blocks (open-au):\n");
            text.push_str(&open_au_text);
        }
        if !more_text.is_empty() {
            text.push('\n');
            text.push_str(&more_text);
        }
        if !bench_text.is_empty() {
            text.push_str("\nSpeed (bench --quick):\n");
            text.push_str(&bench_text);
        }
        // The commands are in the verdict block: here only why, each once.
        text.push_str("\nWhy:\n");
        for a in &advice {
            text.push_str(&format!("- {}: {}\n", a.topic, a.text));
        }
    } else {
        text.push_str("details: --verbose (each step's measurements, the reason for each line), --json (all of it)\n");
    }
    Ok((Outcome::new(doc, text, code), step_docs))
}

/// The advice as the verdict block shows it: the partition line, the mkfs lines to choose
/// from, the mount options; the reasons are in --verbose.
fn actions(advice: &[Advice], erase_known: bool) -> String {
    let mut s = format!(
        "what to do ({DEVICE}: the whole card; {PARTITION}: the partition sfdisk makes, e.g. /dev/sdX1):\n"
    );
    let is_format = |a: &&Advice| {
        a.command.is_some()
            && !matches!(
                a.topic.as_str(),
                "partition alignment" | "open erase blocks"
            )
    };
    let first = if advice.iter().filter(is_format).count() > 1 {
        "then one of:"
    } else {
        "then:"
    };
    let mut formats = 0;
    for a in advice {
        let label = match (a.topic.as_str(), &a.command) {
            ("partition alignment", Some(c)) => {
                s.push_str(&format!("  {c}\n"));
                if !erase_known {
                    s.push_str(&format!(
                        "  (aligned to a {} default, no mkfs tuning: the erase block is {})\n",
                        format_bytes(DEFAULT_ALIGN),
                        erase_unknown(true)
                    ));
                }
                continue;
            }
            (_, None) => {
                s.push_str(&format!("  {}\n", a.text));
                continue;
            }
            ("open erase blocks", Some(_)) => "mount f2fs:",
            _ => {
                formats += 1;
                if formats == 1 {
                    first
                } else {
                    ""
                }
            }
        };
        s.push_str(&format!(
            "  {label:<13} {}\n",
            a.command.as_deref().unwrap_or_default()
        ));
    }
    s
}

/// A step's write flags: auto's, with its plan already shown (one line per step).
fn step_flags(args: &Args) -> WriteFlags {
    WriteFlags {
        planned: true,
        ..args.flags.clone()
    }
}

/// probe as auto runs it.
fn probe_args(args: &Args, budgets: Budgets) -> probe::Args {
    probe::Args {
        target: args.target.clone(),
        flags: step_flags(args),
        budgets,
        max_cache: "1G".into(),
        partition_ok: false,
    }
}

/// open-au as auto runs it, on the erase block align found.
fn open_au_args(args: &Args, erase: u64, budgets: Budgets) -> open_au::Args {
    open_au::Args {
        target: args.target.clone(),
        erase_size: Some(erase.to_string()),
        blocksize: "16K".into(),
        max_au: 32,
        offset: None,
        random: false,
        flags: step_flags(args),
        budgets,
    }
}

/// fat as auto runs it, on the erase block align found.
fn fat_args(args: &Args, erase: u64, budgets: Budgets) -> fat::Args {
    fat::Args {
        target: args.target.clone(),
        erase_size: Some(erase.to_string()),
        blocksize: "512".into(),
        nr: 6,
        flags: step_flags(args),
        budgets,
    }
}

/// The write-cache test auto runs: at most `SLC_BYTES` (or what the write budget leaves),
/// no idle recovery probe.
fn slc_args(args: &Args, mut budgets: Budgets) -> slc::Args {
    let left = budgets
        .write_budget
        .as_deref()
        .and_then(|b| b.parse::<u64>().ok())
        .unwrap_or(u64::MAX);
    budgets.write_budget = Some(left.min(SLC_BYTES).to_string());
    slc::Args {
        target: args.target.clone(),
        offset: "16M".into(),
        recover: "0".into(),
        random_data: false,
        plot: None,
        flags: step_flags(args),
        budgets,
    }
}

/// A step's result line: the first "value (status) - evidence" line of its text.
fn result_line(text: &str) -> &str {
    text.lines()
        .find(|l| l.contains(" - "))
        .or_else(|| text.lines().next())
        .unwrap_or_default()
}

/// The short bench as auto runs it; `write_budget`: its cap.
fn bench_args(args: &Args, write_budget: Option<u64>) -> bench::Args {
    bench::Args {
        target: args.target.clone(),
        flags: step_flags(args),
        quick: true,
        runtime: None,
        size: "256M".into(),
        engine: "uring".into(),
        cpus: None,
        expect: None,
        runs: 1,
        write_budget,
    }
}

/// The writing steps' plan, printed before the first of them writes (open-au's depends on
/// the erase block align found): per step what it writes and for how long, the journal
/// room preserve mode needs (one step's region at a time), the budgets. JSON and text.
fn plan(args: &Args, erase: Option<u64>, budget: &Pipeline) -> Result<(AutoPlan, String)> {
    let mut intents = vec![probe::plan(&probe_args(args, Budgets::default()))?];
    if let Some(e) = erase {
        intents.push(open_au::plan(&open_au_args(args, e, Budgets::default()))?);
        intents.push(fat::plan(&fat_args(args, e, Budgets::default()))?);
    }
    intents.push(slc::plan(&slc_args(args, Budgets::default()))?);
    let (bench_intent, bench_ns) = bench::plan(&bench_args(args, None))?;
    let journaled = !args.flags.destructive && !crate::target::is_sim_spec(&args.target);
    let plan = crate::auto::plan(
        &intents,
        (&bench_intent, bench_ns),
        budget.spent_ns,
        journaled,
    );
    let mut text = format!(
        "flashscope auto: the plan for {} (align, read-only, is done: {} of device time):\n",
        args.target,
        format_ns(budget.spent_ns as f64)
    );
    for i in &intents {
        let t = i.typical_bytes.unwrap_or(i.max_bytes);
        text.push_str(&format!(
            "  {:<8} writes up to {}{} inside {}, about {} on a 10 MiB/s card\n",
            i.command,
            format_bytes(i.max_bytes),
            if t < i.max_bytes {
                format!(" (typically {})", format_bytes(t))
            } else {
                String::new()
            },
            format_bytes(i.region.1),
            format_ns(i.estimated_ns as f64)
        ));
    }
    if erase.is_none() {
        text.push_str("  open-au, fat skipped: they need the erase block, and align was not confident about it\n");
    }
    text.push_str(&format!(
        "  bench    writes for {} inside the first {} (how many bytes depends on the card's speed), {} with its read tests\n",
        format_ns(bench_intent.estimated_ns as f64),
        format_bytes(bench_intent.region.1),
        format_ns(bench_ns as f64)
    ));
    text.push_str(&format!(
        "  in all: typically {} written plus bench's, about {}; journal: {}\n",
        format_bytes(plan.typical_bytes),
        format_ns(plan.estimated_ns as f64),
        match plan.journal_bytes {
            Some(j) => format!("room for up to {} (one step's region at a time; each journal is removed after its step)", format_bytes(j)),
            None if args.flags.destructive => "none (--destructive: nothing is saved)".into(),
            None => "none (a simulated card)".into(),
        }
    ));
    if budget.write.is_some() || budget.time_ns.is_some() {
        text.push_str(&format!(
            "  budgets: write {}, time {}; a step they no longer cover is skipped\n",
            budget.write.map_or("unbounded".into(), format_bytes),
            budget
                .time_ns
                .map_or("unbounded".into(), |t| format_ns(t as f64))
        ));
    }
    Ok((plan, text))
}

/// A step's share of the run's budgets as its own `--write-budget` and `--time-budget`.
fn budgets(a: Allowance) -> Budgets {
    Budgets {
        write_budget: a.write_bytes.map(|b| b.to_string()),
        time_budget: a.time_ns.map(|n| format!("{n}ns")),
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

/// The class marks claimed for the card and who claims them.
struct Claim {
    marks: Vec<String>,
    /// "label" (`--label`), "ssr" (the card's SD Status register) or null.
    source: Option<&'static str>,
}

/// `--label`'s marks, else those the card's SSR claims; checked before anything is measured.
fn claimed(args: &Args) -> Result<Claim> {
    if let Some(l) = &args.label {
        return Ok(Claim {
            marks: parse_label(l)?,
            source: Some("label"),
        });
    }
    let opened = crate::target::open(&args.target, &crate::target::OpenRequest::read_only())?;
    let marks = opened
        .block_name
        .as_deref()
        .and_then(crate::target::mmc::claimed_marks)
        .unwrap_or_default();
    Ok(Claim {
        source: (!marks.is_empty()).then_some("ssr"),
        marks,
    })
}

/// What the short bench found about the classes.
struct Measured {
    /// The highest class met in each family; `None` without write figures.
    met: Option<Vec<String>>,
    /// Each claimed mark judged.
    checks: Vec<crate::report::Check>,
    /// Why the bench stopped early, if it did.
    failure: Option<String>,
}

/// The classes line of the verdict block: the claimed marks met or not with the figure
/// that decided, or what the bench met; `None` with nothing claimed and nothing measured.
/// `skipped`: why the bench did not run on a writing run.
fn classes_line(
    claim: &Claim,
    measured: Option<&Measured>,
    skipped: Option<&str>,
) -> Option<String> {
    let claimed = (!claim.marks.is_empty()).then(|| {
        let who = match claim.source {
            Some("ssr") => "by the card's SSR",
            _ => "by --label",
        };
        format!("claimed {} ({who}): ", claim.marks.join(" "))
    });
    let line = match (measured, claimed) {
        (None, None) => return None,
        (None, Some(c)) => match skipped {
            Some(why) => format!("{c}not measured: the bench was skipped ({why})"),
            None => format!("{c}not measured — add --write"),
        },
        (
            Some(Measured {
                met: None, failure, ..
            }),
            c,
        ) => format!(
            "{}not measured: bench {}",
            c.unwrap_or_default(),
            failure.as_deref().unwrap_or("gave no write figures")
        ),
        (Some(Measured { met: Some(met), .. }), None) if met.is_empty() => {
            "meets none (sequential write below C2's 2 MB/s)".to_string()
        }
        (Some(Measured { met: Some(met), .. }), None) => {
            format!("meets {} (measured)", met.join(" "))
        }
        (Some(m), Some(c)) => {
            let mut parts: Vec<String> = m.checks.iter().map(|c| c.message.clone()).collect();
            // A mark whose figures the bench did not give (it stopped early).
            for mark in &claim.marks {
                if !m
                    .checks
                    .iter()
                    .any(|c| c.name.ends_with(&format!("_{mark}")))
                {
                    parts.push(format!("{mark} not measured"));
                }
            }
            format!("{c}{}", parts.join("; "))
        }
    };
    Some(format!("classes: {line}"))
}

/// The steps share some warnings (a busy machine): each is said once.
fn dedup_warnings(warnings: &mut Vec<crate::report::Warning>) {
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
