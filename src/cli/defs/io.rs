// The clap definition of `io` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{
    BlockSize, Cpus, Engine, Fsync, IoDepth, Offset, PatternOpt, Size, Sync, Use,
};
#[allow(unused_imports)]
use super::write_args::{BudgetArgs, WriteArgs};
#[allow(unused_imports)]
use crate::cli::values::*;

/// Arguments of `io` (fio's names).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  flashscope io sim:sd-16g --rw randread --blocksize 4k --iodepth 32 --runtime 10s
  flashscope io /dev/zram0 --rw randread --blocksize 4k --iodepth 32 --engine uring --cpus 0 --runtime 10
  flashscope io disk.img --rw randwrite --blocksize 4k --size 64M --write --verify
  flashscope io /dev/sdb --rw write --blocksize 1M --size 1G --destructive --json

Writes need --write: on a block device or a file each region is saved to a journal just
before it is first overwritten, and everything is restored and verified at the end
(preserve mode; Ctrl-C restores; after a crash `flashscope restore JOURNAL`); --destructive
overwrites without saving. I/O buffers (--blocksize x (--iodepth + 1) x
--numjobs) may take at most 1 GiB and half of the available memory; buffers of 1 MiB and
more use transparent huge pages where the kernel has them. Exit codes: 0 ok, 1 runtime
error (what was measured is still reported), 2 usage or refused, 3 --verify found bad data.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: TargetSpec,
    /// read, write, randread, randwrite, randrw or rw.
    #[arg(long, default_value = "read")]
    pub rw: String,
    /// Percentage of reads in randrw / rw.
    #[arg(long, default_value_t = 50)]
    pub rwmixread: u32,
    #[command(flatten)]
    pub bs: BlockSize<IoBlockSize>,
    /// Random block sizes in LOW-HIGH (multiples of LOW), instead of --blocksize.
    #[arg(long = "blocksize-range", alias = "bsrange", value_name = "LOW-HIGH", value_parser = given(parse_bsrange))]
    pub bsrange: Option<Given<(u64, u64)>>,
    #[command(flatten)]
    pub iodepth: IoDepth<IoIoDepth>,
    /// Parallel jobs (one thread each on real devices).
    #[arg(long, default_value_t = 1)]
    pub numjobs: u32,
    #[command(flatten)]
    pub size: Size<IoSize>,
    #[command(flatten)]
    pub offset: Offset<IoOffset>,
    /// Stop after this long (plain number = seconds; also ms, us).
    #[arg(long, value_parser = parse_duration_ns)]
    pub runtime: Option<u64>,
    /// Keep going over the region until --runtime ends.
    #[arg(long)]
    pub time_based: bool,
    /// Run this long before counting.
    #[arg(long, value_parser = parse_duration_ns)]
    pub ramp_time: Option<u64>,
    /// O_DIRECT, the default: bypass the page cache; --direct=0 goes through it. (Here a
    /// value may also follow after a space, as io has always taken it: --direct 0.)
    #[arg(long, value_name = "0|1", default_value = "1", num_args = 0..=1, default_missing_value = "1", value_parser = bool01_arg)]
    pub direct: bool,
    #[command(flatten)]
    pub sync: Sync<IoSync>,
    #[command(flatten)]
    pub fsync: Fsync<IoFsync>,
    #[command(flatten)]
    pub engine: Engine<IoEngine>,
    /// Bandwidth cap in bytes/s: BOTH or READ,WRITE (e.g. 10M or ,5M).
    #[arg(long)]
    pub rate: Option<String>,
    /// Stamp every written block and read it all back at the end (exit 3 on bad data).
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub pattern: PatternOpt<IoPattern>,
    #[command(flatten)]
    pub cpus: Cpus<IoCpus>,
    /// Job name in the report.
    #[arg(long, default_value = "job")]
    pub name: String,
    /// Random seed for offsets and mixes.
    #[arg(long, default_value_t = 0x5eed_f1a5)]
    pub seed: u64,
    #[command(flatten)]
    pub flags: WriteArgs,
}

pub struct IoBlockSize;
impl Use for IoBlockSize {
    const HELP: &'static str = "Block size (K, M = powers of 1024)";
    const DEFAULT: Option<&'static str> = Some(BLOCKSIZE);
}

/// `io --blocksize`'s default.
pub const BLOCKSIZE: &str = "4k";

pub struct IoSize;
impl Use for IoSize {
    const HELP: &'static str =
        "Bytes of the region each job covers (default: from --offset to the end)";
}

pub struct IoSync;
impl Use for IoSync {
    const HELP: &'static str = "none, sync (O_SYNC; the bare flag) or dsync (O_DSYNC)";
    const DEFAULT: Option<&'static str> = Some("none");
}

pub struct IoFsync;
impl Use for IoFsync {
    const HELP: &'static str =
        "fsync after every N writes (0 = never; the bare flag: after every write)";
    const DEFAULT: Option<&'static str> = Some("0");
}

pub struct IoEngine;
impl Use for IoEngine {
    const HELP: &'static str = "sync, uring or null; default: uring when --iodepth > 1, else sync";
}

pub struct IoPattern;
impl Use for IoPattern {
    const HELP: &'static str = "Written data: zeros, ones, random or a byte like 0x5a (default: random; zeros on sim: targets, whose timing does not depend on the data and which keep only non-zero data in memory)";
}

pub struct IoCpus;
impl Use for IoCpus {
    const HELP: &'static str =
        "Pin the job threads to these CPUs (e.g. 0 or 0-1), fio's cpus_allowed";
}

pub struct IoIoDepth;
impl Use for IoIoDepth {
    const HELP: &'static str =
        "I/Os in flight per job (needs --engine uring above 1 on real devices)";
    const DEFAULT: Option<&'static str> = Some("1");
}

pub struct IoOffset;
impl Use for IoOffset {
    const HELP: &'static str = "Start of the region";
    const DEFAULT: Option<&'static str> = Some("0");
}
