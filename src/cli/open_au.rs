//! `flashscope open-au TARGET --write`: how many erase blocks the card can write to at
//! once (flashbench's open-AU test, automatic).

use super::{Outcome, Output};
use crate::probe::open_au::{self, OpenAuParams};
use crate::probe::write_common::{align_up, check_geometry};
use crate::probe::write_test::{self, drive, erase_size, open_au::OpenAuTest};
use crate::report::TargetInfo;
use crate::target::write::{Budgets, WriteFlags, WriteIntent};
use crate::units::{format_bytes, parse_size};
use crate::{Error, Result};

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
    pub target: String,
    /// Erase block (allocation unit) size, e.g. 4M [default: measured by `align` first,
    /// read-only; it must be confident].
    #[arg(long, value_name = "SIZE", value_parser = crate::units::size_arg)]
    pub erase_size: Option<String>,
    /// Smallest block size written (the size whose collapse decides).
    #[arg(long, short = 'b', value_name = "SIZE", default_value = "16K", value_parser = crate::units::size_arg)]
    pub blocksize: String,
    /// Most erase blocks written concurrently.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_au: u32,
    /// Where the first erase block starts [default: past 16 MiB and past 4 erase blocks,
    /// so the FAT area stays out; a FAT area reaching further adds to the count].
    #[arg(long, value_name = "SIZE", value_parser = crate::units::size_arg)]
    pub offset: Option<String>,
    /// Also measure random order inside each erase block (`inferences.open_au_random`).
    #[arg(long)]
    pub random: bool,
    #[command(flatten)]
    pub flags: WriteFlags,
    #[command(flatten)]
    pub budgets: Budgets,
}

/// The erase size: `--erase-size`, or measured by `align` (read-only) when omitted.
/// Returns the size and where it came from.
pub fn erase_size_arg(
    arg: &Option<String>,
    target: &str,
    flags: &WriteFlags,
    what: &str,
) -> Result<(u64, String)> {
    let given = arg.as_deref().map(parse_size).transpose()?;
    erase_size(given, target, flags, what)
}

/// Parameters checked against the device.
fn params(args: &Args, size: u64, sector: u64, erase: u64) -> Result<OpenAuParams> {
    let block = parse_size(&args.blocksize)?;
    check_geometry(erase, block, size, sector)?;
    if args.max_au == 0 {
        return Err(Error::usage("--max-au must be at least 1"));
    }
    let mut p = OpenAuParams::new(erase);
    p.block_bytes = block;
    p.max_au = args.max_au;
    p.random = args.random;
    p.time_budget_ns = args.budgets.time_budget_ns()?;
    p.offset_bytes = match &args.offset {
        Some(o) => {
            let o = parse_size(o)?;
            if o % erase != 0 {
                return Err(Error::usage(format!(
                    "--offset {o} is not a multiple of the erase size {erase}: use e.g. {}",
                    align_up(o, erase)
                )));
            }
            o
        }
        None => open_au::default_offset(erase),
    };
    let need = p.offset_bytes + p.max_au as u64 * erase;
    if need > size {
        let fit = size.saturating_sub(p.offset_bytes) / erase;
        if fit == 0 {
            return Err(Error::usage(format!(
                "--offset {}: no erase block of {} fits between it and the end of the device ({}); give a smaller --offset, e.g. {}",
                args.offset.as_deref().unwrap_or_default(),
                format_bytes(erase),
                format_bytes(size),
                crate::units::short_size(open_au::default_offset(erase))
            )));
        }
        return Err(Error::usage(format!(
            "--max-au {}: {} erase blocks of {} from offset {} need {} but the device has {}; use --max-au {fit} or less",
            p.max_au,
            p.max_au,
            format_bytes(erase),
            format_bytes(p.offset_bytes),
            format_bytes(need),
            format_bytes(size)
        )));
    }
    Ok(p)
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    execute(args)?.emit(out)
}

/// Measure and infer without printing (shared with `auto`).
pub fn execute(args: &Args) -> Result<Outcome> {
    let finished = drive(&args.target, &args.flags, &args.budgets, |info| {
        test(args, info)
    })?;
    Ok(Outcome::from(finished))
}

/// What the test would write on the target, without writing (for `auto`'s plan).
pub fn plan(args: &Args) -> Result<WriteIntent> {
    write_test::plan(&args.target, |info| test(args, info))
}

fn test(args: &Args, info: &TargetInfo) -> Result<OpenAuTest> {
    let sector = info.logical_sector_bytes as u64;
    let (erase, source) = erase_size_arg(
        &args.erase_size,
        &args.target,
        &args.flags,
        &format!(
            "open-au writes {} blocks into up to {} erase blocks",
            args.blocksize, args.max_au
        ),
    )?;
    Ok(OpenAuTest {
        params: params(args, info.size_bytes, sector, erase)?,
        erase_size_source: source,
    })
}
