//! `flashscope auto TARGET`: the one-command answer — identity, geometry, speed, real
//! capacity (with --write) and what to do about it. The pipeline is the library's
//! (`crate::commands::auto::run`); here the arguments become `AutoParams` and the verdict is drawn.

use super::Output;
use crate::cli::write_args::WriteArgs;
use crate::commands::auto::{AutoFinished, AutoParams, AutoRun, PlanMade};
use crate::report::output_file::OutputFile;
use crate::session::{Given, WriteFlags};
use crate::vocab::error::Verdict;
use crate::vocab::units::{format_bytes, format_ns};
use crate::Result;
use std::path::PathBuf;

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
    #[arg(long, value_name = "DURATION", value_parser = crate::cli::write_args::duration_given)]
    pub time_budget: Option<Given<u64>>,
    /// Write budget of the whole run (e.g. 512M): each writing step gets what is left as its
    /// cap; once it is spent the remaining steps are skipped (said so).
    #[arg(long, value_name = "SIZE", value_parser = crate::cli::write_args::size_given)]
    pub write_budget: Option<Given<u64>>,
    /// `--write` also runs the write tests (the fake-capacity probe and the open erase
    /// blocks), each through the write-safety policy.
    #[command(flatten)]
    pub flags: WriteArgs,
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

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let page = OutputFile::create_opt("--output", args.output.as_deref())?;
    use std::io::IsTerminal;
    let announce = !out.json || std::io::stderr().is_terminal();
    let params = AutoParams {
        target: args.target.clone(),
        write_budget: args.write_budget.clone(),
        time_budget: args.time_budget.clone(),
        flags: WriteFlags::from(&args.flags),
        label: args
            .label
            .as_deref()
            .map(|l| -> Result<Given<Vec<String>>> {
                Ok(Given {
                    value: crate::workload::bench::parse_label(l)?,
                    text: l.to_string(),
                })
            })
            .transpose()?,
    };
    let finished = crate::commands::auto::run(&params, &mut |made| {
        if announce {
            eprint!("{}", plan_text(&args.target, args.flags.destructive, made));
        }
    })?;
    let run = match finished {
        AutoFinished::Done(run) => run,
        AutoFinished::Stopped { verdict } => return Ok(verdict),
    };
    let text = crate::output::auto::render_run(args.verbose, &run.doc, &run.steps);
    let AutoRun {
        doc,
        verdict,
        steps,
        ..
    } = run;
    if let Some(page) = &page {
        let mut docs = vec![doc.clone()];
        docs.extend(steps);
        super::report::write_page(&docs, page)?;
        if !out.json {
            eprintln!("flashscope auto: report in {}", page.path().display());
        }
    }
    out.emit_text(&doc, |_| text);
    Ok(verdict)
}

/// The writing steps' plan as auto prints it on stderr before the first of them writes:
/// per step what it writes and for how long, the journal room preserve mode needs (one
/// step's region at a time), the budgets.
fn plan_text(target: &str, destructive: bool, made: &PlanMade) -> String {
    let (plan, budget) = (made.plan, made.pipeline);
    let (bench_intent, bench_ns) = made.bench;
    let mut text = format!(
        "flashscope auto: the plan for {} (align, read-only, is done: {} of device time):\n",
        target,
        format_ns(budget.spent_ns as f64)
    );
    let saving = |command: &str| {
        plan.steps
            .iter()
            .find(|s| s.command == command)
            .and_then(|s| s.preserve_ns)
            .map_or(String::new(), |ns| {
                format!(" + {} saving and restoring", format_ns(ns as f64))
            })
    };
    for i in made.intents {
        let t = i.typical_bytes.unwrap_or(i.max_bytes);
        text.push_str(&format!(
            "  {:<8} writes up to {}{} inside {}, about {}{}\n",
            i.command,
            format_bytes(i.max_bytes),
            if t < i.max_bytes {
                format!(" (typically {})", format_bytes(t))
            } else {
                String::new()
            },
            format_bytes(i.region.1),
            format_ns(i.estimated_ns as f64),
            saving(i.command)
        ));
    }
    if !made.erase_known {
        text.push_str("  open-au, fat skipped: they need the erase block, and align was not confident about it\n");
    }
    text.push_str(&format!(
        "  bench    writes for {} inside the first {} (how many bytes depends on the card's speed), {} with its read tests{}\n",
        format_ns(bench_intent.estimated_ns as f64),
        format_bytes(bench_intent.region.1),
        format_ns(bench_ns as f64),
        saving("bench")
    ));
    text.push_str(&format!(
        "  in all: typically {} written plus bench's, {}; journal: {}\n",
        format_bytes(plan.typical_bytes),
        crate::session::estimate::range_text(
            plan.estimated_ns,
            plan.estimated_slow_ns.unwrap_or(plan.estimated_ns)
        ),
        match plan.journal_bytes {
            Some(j) => format!("room for up to {} (one step's region at a time; each journal is removed after its step)", format_bytes(j)),
            None if destructive => "none (--destructive: nothing is saved)".into(),
            None => "none (a simulated card)".into(),
        }
    ));
    text.push_str(&format!("  times {}\n", bench_intent.rates.assumption()));
    if budget.write.is_some() || budget.time_ns.is_some() {
        text.push_str(&format!(
            "  budgets: write {}, time {}; a step they no longer cover is skipped\n",
            budget.write.map_or("unbounded".into(), format_bytes),
            budget
                .time_ns
                .map_or("unbounded".into(), |t| format_ns(t as f64))
        ));
    }
    text
}
