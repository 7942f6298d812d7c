// The clap definition of `health` (see [`super`]: no crate path but `crate::cli::values`).

#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `health`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  flashscope health sim:emmc-8g
  flashscope health /dev/mmcblk0 --max-wear 70%
  flashscope health --ext-csd ext_csd.txt     a dump of /sys/kernel/debug/mmc0/mmc0:0001/ext_csd
  flashscope health /dev/sda --json           SMART through smartctl (smartmontools)

Sources: eMMC sysfs life_time and pre_eol_info (else the EXT_CSD register, read as root);
SD cards have no standard wear counter (said so); SATA, NVMe, SAS and USB disks through
`smartctl --json` when smartmontools is installed.
Verdict: end of life when a life-time band is exceeded (0x0B), pre-EOL is urgent, SMART
failed or 100 % is used; worn at --max-wear or pre-EOL warning; unknown with no source.
Exit 3 when worn or at end of life; 0 for ok and unknown.")]
pub struct Args {
    /// Block device (/dev/mmcblk0, /dev/sda, /dev/nvme0n1) or sim:PRESET[,key=value...].
    pub target: Option<TargetSpec>,
    /// Used percentage at which the device counts as worn: 1 to 100, e.g. 80% or 80.
    #[arg(long, default_value = "80%", value_name = "PERCENT")]
    pub max_wear: String,
    /// Decode this EXT_CSD dump instead: 512 bytes binary, or the 1024 hex digits that
    /// /sys/kernel/debug/mmc0/mmc0:0001/ext_csd prints.
    #[arg(long, value_name = "FILE")]
    pub ext_csd: Option<PathBuf>,
    /// Read sysfs below DIR instead of /sys (recorded trees, for tests).
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysfs_root: Option<PathBuf>,
}
