// The top level of the command line: global options and the subcommands (see [`super`]).

#[allow(unused_imports)]
use crate::cli::values::*;

const EXAMPLES: &str = "\
Examples:
  flashscope info sim:sd-16g              what a simulated 16 GB SD card exposes
  flashscope info /dev/mmcblk0 --json     size, sectors, CID/CSD/SSR of a real card
  flashscope health /dev/mmcblk0          eMMC wear (life time, pre-EOL), SMART via smartctl
  flashscope sim list                     the simulator's presets and keys
  flashscope fs seq /mnt/sd               dd's modes side by side: what the page cache hides
  flashscope model --reference            the vendor's measured figures per flash part

Targets are a block device (/dev/sdb), a regular file, or the built-in simulated card
sim:PRESET[,key=value...] (see `flashscope sim list`). Tests that write need --write;
`fs` tests take a directory and write only their own test files there.

Exit codes: 0 ok, 1 runtime error, 2 usage error or refused by the safety policy,
3 the device failed the check.";

/// flashscope: everything worth knowing about a piece of flash storage.
#[derive(Debug, Parser)]
#[command(name = "flashscope", version, about, after_help = EXAMPLES, arg_required_else_help = true)]
pub struct Cli {
    /// Print one JSON document (schema flashscope/1) on stdout instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Also write the figures for Prometheus' node_exporter textfile collector to FILE
    /// (written to a temporary file in its directory and renamed into place).
    #[arg(long, global = true, value_name = "FILE")]
    pub prometheus: Option<std::path::PathBuf>,
    /// Also write the checks as JUnit XML to FILE: one test case per check with its figure.
    #[arg(long, global = true, value_name = "FILE")]
    pub junit: Option<std::path::PathBuf>,
    /// Report each check to LAVA: run `lava-test-case NAME --result pass|fail --measurement
    /// X --units U` per check when lava-test-case is on PATH (a LAVA test shell) and print
    /// the usual output; elsewhere print those calls instead of the text.
    #[arg(long, global = true, conflicts_with = "json")]
    pub lava: bool,
    /// The run history database (SQLite): measuring commands store their result there,
    /// `history` reads it. Default $XDG_DATA_HOME/flashscope/history.sqlite
    /// (~/.local/share/...); records even when FLASHSCOPE_HISTORY=off.
    #[arg(long, global = true, value_name = "PATH")]
    pub history: Option<std::path::PathBuf>,
    /// Do not store this run in the history (as FLASHSCOPE_HISTORY=off does for all runs).
    #[arg(long, global = true, conflicts_with = "history")]
    pub no_history: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// What a target is: size, sectors, identity, partitions, MMC/SD registers.
    Info(super::info::Args),
    /// Wear and end of life: eMMC life time, SD (none to read), SMART via smartctl (read-only).
    Health(super::health::Args),
    /// Fast fake-capacity probe: usable size, fake kind, wrap modulus.
    Probe(super::probe::Args),
    /// Full-surface verify: write stamps everywhere, read back, list bad extents.
    Verify(super::verify::Args),
    /// The built-in simulated flash device.
    #[command(subcommand)]
    Sim(super::sim::SimCommand),
    /// A fio-style workload: IOPS, bandwidth, latency percentiles, disk statistics.
    Io(Box<super::io::Args>),
    /// The everyday speed test with SD speed-class and A1/A2 verdicts.
    Bench(super::bench::Args),
    /// Erase block and page size from read timings across boundaries (read-only).
    Align(super::align::Args),
    /// The one-command answer: geometry and what to do about it (partitioning, mkfs).
    Auto(super::auto::Args),
    /// flashbench's scatter test: fastest read time at many offsets (read-only).
    Scatter(super::scatter::Args),
    /// Read time against request size: access time and throughput (read-only).
    Interval(super::interval::Args),
    /// Analyse flashbench logs with flashscope's inference.
    Analyze(super::analyze::Args),
    /// Through a mounted filesystem: dd modes and the page cache, file-size sweep, iozone matrix.
    #[command(subcommand)]
    Fs(super::fs::FsCommand),
    /// Theoretical sequential speed from datasheet figures; --reference for measured ones.
    Model(super::model::Args),
    /// How many erase blocks can be written at once (writes; needs --write).
    OpenAu(super::open_au::Args),
    /// Which of the first erase blocks behave differently: the FAT area (writes; needs --write).
    Fat(super::fat::Args),
    /// Program matrix: write and read throughput per block size and data pattern (writes).
    Program(super::program::Args),
    /// The write-cache cliff: bytes at cache speed before the native speed (writes).
    Slc(super::slc::Args),
    /// Saved --json documents of any command in one self-contained HTML page.
    Report(super::report::Args),
    /// Saved bench / io documents or fio JSON side by side: differences with 95 % intervals.
    Compare(super::compare::Args),
    /// Put back the regions a preserve-mode test saved (after a crash or power loss).
    Restore(super::restore::Args),
    /// The run history: list, show, export, import stored runs; the table per part.
    #[command(subcommand)]
    History(super::history::HistoryCommand),
    /// Answer as smartctl does, in its JSON (for Scrutiny and other fleet tools): eMMC/SD wear.
    Smartctl(super::smartctl::Args),
    /// Print the manual page (roff; `flashscope man | man -l -` shows it).
    Man,
    /// Print a shell's completion script for flashscope.
    Completions(super::completions::Args),
}
