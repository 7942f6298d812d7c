//! `flashscope open-au TARGET --write`: how many erase blocks the card can write to at
//! once (flashbench's open-AU test, automatic).

use super::{emit_finished, Output};
use crate::cli::write_args::{BudgetArgs, WriteArgs};
use crate::commands::open_au::OpenAuRequest;
use crate::commands::write_probe;
use crate::session::{Budgets, WriteFlags};
use crate::vocab::error::Verdict;
use crate::Result;

/// Arguments of `open-au`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope open-au sim:sd-16g --erase-size 4M --write\n  \
  flashscope open-au /dev/mmcblk0 --erase-size 4M --write --random --json\n\n\
Counts 1, 2, 3 ... 8, then doubling up to --max-au, stopping at the first collapse and\n\
bisecting to the exact cut-off; the block-size table is measured around the cut-off.\n\
Preserve mode (the default with --write) saves every written region to a journal first.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: crate::device::TargetSpec,
    /// Erase block (allocation unit) size, e.g. 4M [default: measured by `align` first,
    /// read-only; it must be confident].
    #[arg(long, value_name = "SIZE", value_parser = crate::vocab::units::parse_size)]
    pub erase_size: Option<u64>,
    /// Smallest block size written (the size whose collapse decides).
    #[arg(long, short = 'b', value_name = "SIZE", default_value = "16K", value_parser = crate::vocab::units::parse_size)]
    pub blocksize: u64,
    /// Most erase blocks written concurrently [default: 32, or as many as fit past the
    /// offset on a smaller device].
    #[arg(long, value_name = "N")]
    pub max_au: Option<u32>,
    /// Where the first erase block starts [default: past 16 MiB and past 4 erase blocks,
    /// so the FAT area stays out; a FAT area reaching further adds to the count].
    #[arg(long, value_name = "SIZE", value_parser = crate::vocab::units::parse_size)]
    pub offset: Option<u64>,
    /// Also measure random order inside each erase block (`inferences.open_au_random`).
    #[arg(long)]
    pub random: bool,
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
fn request(args: &Args) -> Result<OpenAuRequest> {
    Ok(OpenAuRequest {
        erase_bytes: args.erase_size,
        block_bytes: args.blocksize,
        max_au: args.max_au,
        offset_bytes: args.offset,
        random: args.random,
    })
}
