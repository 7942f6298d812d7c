//! `flashscope bench TARGET`: the everyday speed test — sequential 1 MiB at QD8 and QD1,
//! random 4 KiB at QD32 and QD1, read (and write with `--write`) — with SD speed-class and
//! A1/A2 verdicts and `--expect` checks for CI.

pub use super::defs::bench::*;

use super::Output;
use crate::commands::bench::{self, BenchParams};
use crate::report::wear_line;
use crate::session::WriteFlags;
use crate::vocab::error::Verdict;
use crate::workload::bench::parse_expect;
use crate::Result;

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let b = bench::measure(&args.target, &params(args)?, &WriteFlags::from(&args.flags))?;
    let Some(doc) = b.doc.map(super::with_host_path) else {
        return Ok(b.verdict);
    };
    let wear = b.wear.then(|| wear_line(&doc));
    out.emit(&doc);
    let verdict = b.verdict;
    if let Some(w) = wear.filter(|_| !out.json) {
        super::say(&w);
    }
    if let Some(f) = b.failure {
        super::say(&format!(
            "flashscope: error: {f} (the figures above cover the tests done until then)"
        ));
    }
    Ok(verdict)
}

/// The test's parameters from the arguments; the bar draws only on a terminal
/// (report::progress), never on stdout.
fn params(args: &Args) -> Result<BenchParams> {
    let expect = args.expect.as_deref().map(parse_expect).transpose()?;
    let size_bytes = super::defaulted(&args.size.value, "--size")?.value;
    let engine = super::defaulted(&args.engine.value, "--engine")?;
    let cpus = args.cpus.value.clone().unwrap_or_default();
    Ok(BenchParams {
        quick: args.quick,
        runtime_ns: args.runtime,
        size_bytes,
        engine,
        cpus,
        expect,
        runs: args.runs,
        // Only auto caps bench's bytes (from its write budget).
        write_budget: None,
        progress: true,
    })
}
