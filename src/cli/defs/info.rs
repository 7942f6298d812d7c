// The clap definition of `info` (see [`super`]: no crate path but `crate::cli::values`).

#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `info`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope info sim:sd-16g\n  flashscope info /dev/mmcblk0 --json\n  flashscope info disk.img"
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
}
