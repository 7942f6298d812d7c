//! `flashscope slc TARGET --write`: the write-cache cliff — how much a sustained write
//! gets at cache speed before the native speed, and whether the cache recovers.

use super::{emit_finished, Output};
use crate::cli::write_args::{BudgetArgs, WriteArgs};
use crate::commands::slc::SlcRequest;
use crate::commands::write_probe::{self};
use crate::report::output_file::OutputFile;
use crate::session::{Budgets, WriteFlags};
use crate::vocab::error::Verdict;
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
    pub target: crate::device::TargetSpec,
    /// Start of the sustained write.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = crate::vocab::units::parse_size)]
    pub offset: u64,
    /// Idle time before probing whether the cache recovered (0 skips it).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = crate::vocab::units::parse_duration_ns)]
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
    emit_finished(finished, out)
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
