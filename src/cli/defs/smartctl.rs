// The clap definition of `smartctl` (see [`super`]: no crate path but `crate::cli::values`).
// clap only names it for --help, the man page and completions: `main` parses smartctl's
// own argument shapes by hand before clap runs (src/cli/smartctl.rs).

#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `smartctl`: smartctl's own, as fleet tools give them.
#[derive(Debug, clap::Args)]
#[command(
    disable_help_flag = true,
    after_help = "\
Examples:
  flashscope smartctl --scan --json                    the eMMCs with wear data, then smartctl's own scan
  flashscope smartctl --info --json /dev/mmcblk0       model, serial, firmware, capacity
  flashscope smartctl --xall --json sim:emmc-8g        wear in smartctl's NVMe health log
  flashscope smartctl -x -j -d mmc /dev/mmcblk0        as Scrutiny calls it for a scanned card

Run under the name `smartctl` (a symbolic link, e.g. /opt/flashscope/smartctl), flashscope
answers the same way, so a fleet tool's configured smartctl binary can be flashscope
(Scrutiny: commands.metrics_smartctl_bin: /opt/flashscope/smartctl).
eMMC and SD cards are answered from `flashscope health`; SATA, SCSI, USB and NVMe disks are
handed to the real smartctl (the first on PATH that is not flashscope) with the same
arguments. The wear is reported with protocol NVMe in nvme_smart_health_information_log:
percentage_used is the upper bound of the worse life-time band, available_spare 100, 15 or 5
for pre-EOL normal, warning or urgent (threshold 20). Exit status: smartctl's bits (1 command
line, 2 device, 4 no wear data, 8 worn or at end of life). See docs/smartctl.md."
)]
pub struct Args {
    /// smartctl's options and the device: --scan, --info, --xall, --json, -d TYPE ...
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub args: Vec<String>,
}
