//! `flashscope slc TARGET --write`: the write-cache cliff — how much a sustained write
//! gets at cache speed before the native speed, and whether the cache recovers.

use super::{Outcome, Output};
use crate::cli::write_args::{BudgetArgs, WriteArgs};
use crate::commands::slc::SlcRequest;
use crate::commands::write_probe::{self};
use crate::report::output_file::OutputFile;
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::session::{Budgets, WriteFlags};
use crate::vocab::error::Verdict;
use crate::vocab::units::{format_bytes, format_rate};
use crate::Result;
use std::path::PathBuf;

/// Arguments of `slc`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope slc sim:sd-a2-64g --write\n  \
  flashscope slc /dev/sdb --destructive --write-budget 8G --plot slc.svg\n\n\
The budget defaults to the smaller of 25% of the device and 32 GiB; the test stops earlier\n\
once the speed has dropped and stayed down. In preserve mode the journal must hold the\n\
whole region (budget + the recovery write): use --destructive on a blank device to skip it.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Start of the sustained write.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = crate::cli::write_args::size_bytes)]
    pub offset: u64,
    /// Idle time before probing whether the cache recovered (0 skips it).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = crate::cli::write_args::duration_ns)]
    pub recover: u64,
    /// Write pseudo-random data instead of zeros (for controllers that compress).
    #[arg(long)]
    pub random_data: bool,
    /// Write an SVG plot of throughput against bytes written to this file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub flags: WriteArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
}

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let finished = write_probe::measure(
        &args.target,
        &request(args)?,
        &WriteFlags::from(&args.flags),
        &Budgets::from(&args.budgets),
    )?;
    Outcome::from(finished).emit(out)
}

/// The test's parameters from the arguments.
fn request(args: &Args) -> Result<SlcRequest> {
    Ok(SlcRequest {
        offset_bytes: args.offset,
        recover_ns: args.recover,
        random_data: args.random_data,
        plot: OutputFile::create_opt("--plot", args.plot.as_deref())?,
    })
}

/// `slc`'s text from its document (the wear line apart: `cli::render` adds it).
pub fn render(doc: &Document) -> String {
    let Body::Slc(r) = &doc.body else {
        return String::new();
    };
    let mut text = String::new();
    for k in [
        "slc_cache_bytes",
        "cached_bytes_per_s",
        "native_bytes_per_s",
        "slc_cache_recovered",
    ] {
        if let Some(inf) = doc.inferences.get(k) {
            let v = match (&inf.value, k) {
                (Some(v), "slc_cache_bytes") => format_bytes(v.as_u64().unwrap_or(0)),
                (Some(v), k) if k.ends_with("_per_s") => format_rate(v.as_f64().unwrap_or(0.0)),
                (Some(v), _) => v.to_string(),
                (None, _) => "?".into(),
            };
            text.push_str(&format!(
                "{}: {v} ({}) - {}\n",
                k.replace('_', " "),
                inf.status_word(),
                inf.evidence
            ));
        }
    }
    text.push('\n');
    let mut t = Table::new(&["written before", "interval", "throughput"]);
    let step = (r.samples.len() / 32).max(1);
    for iv in r.samples.iter().step_by(step) {
        t.row(vec![
            format_bytes(iv.start_bytes),
            format_bytes(iv.bytes),
            format_rate(iv.bytes_per_s()),
        ]);
    }
    if let Some(r) = &r.recovery {
        t.row(vec![
            "after idle".into(),
            format_bytes(r.bytes),
            format_rate(r.bytes_per_s()),
        ]);
    }
    text.push_str(&t.render());
    if step > 1 {
        text.push_str(&format!(
            "(every {} of {} intervals shown; all in --json or --plot)\n",
            crate::vocab::units::ordinal(step as u64),
            r.samples.len()
        ));
    }
    text.push('\n');
    text
}
