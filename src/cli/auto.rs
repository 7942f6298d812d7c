//! `flashscope auto TARGET`: the one-command answer — identity, geometry, speed, real
//! capacity (with --write) and what to do about it. The pipeline is the library's
//! (`crate::commands::auto::run`); here the arguments become `AutoParams` and the verdict is drawn.

pub use super::defs::auto::*;

use super::Output;
use crate::commands::auto::{AutoFinished, AutoParams, AutoRun};
use crate::report::output_file::OutputFile;
use crate::session::WriteFlags;
use crate::vocab::error::Verdict;
use crate::vocab::units::Given;
use crate::Result;

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let page = OutputFile::create_opt("--output", args.output.value.as_deref())?;
    use std::io::IsTerminal;
    let announce = !out.json || std::io::stderr().is_terminal();
    let params = AutoParams {
        target: args.target.clone(),
        write_budget: args.write_budget.clone(),
        time_budget: args.time_budget.value.clone(),
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
            super::say(&crate::output::auto::plan_text(made));
        }
    })?;
    let mut run = match finished {
        AutoFinished::Done(run) => run,
        AutoFinished::Stopped { verdict } => return Ok(verdict),
    };
    // The host path is read once for the run; every step ran on the same target.
    crate::commands::host_path::attach(&mut run.doc);
    if let crate::report::Target::Device(d) = &run.doc.target {
        for step in &mut run.steps {
            if let crate::report::Target::Device(s) = &mut step.target {
                s.host_path.clone_from(&d.host_path);
            }
        }
    }
    let text = crate::output::auto::render_run(args.verbose, &run.doc, &run.steps);
    let AutoRun {
        doc,
        verdict,
        steps,
        failed,
    } = run;
    if let Some(page) = &page {
        let mut docs = vec![doc.clone()];
        docs.extend(steps);
        crate::report::html::write_page(&docs, page)?;
        if !out.json {
            super::say(&format!(
                "flashscope auto: report in {}",
                page.path().display()
            ));
        }
    }
    out.emit_text(&doc, |_| text);
    // Exit code precedence (docs/reference.md, "Exit codes"): a failed check (FAKE, a class not met) first,
    // then a step's error, then the verdict.
    match failed {
        Some(e) if verdict != Verdict::CheckFailed => Err(e),
        _ => Ok(verdict),
    }
}
