//! `flashscope info TARGET`: what a target is, from what the device itself exposes.

use super::Output;
use crate::commands::info;
use crate::vocab::error::Verdict;
use crate::Result;

/// Arguments of `info`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope info sim:sd-16g\n  flashscope info /dev/mmcblk0 --json\n  flashscope info disk.img"
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: crate::device::TargetSpec,
}

/// Describe the target and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    out.emit(&info::measure(&args.target)?);
    Ok(Verdict::Ok)
}
