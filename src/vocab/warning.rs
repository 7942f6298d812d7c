//! The crate's one warnings enum: each condition a reader must know to trust a result is
//! one variant with the data it needs, and its `Display` gives the cause and then the
//! remedy, as hyperfine's warnings do. In JSON a warning stays
//! `{"kind": "...", "message": "..."}`: `kind` is a stable name ([`Warning::kind`]),
//! `message` the `Display` text.
//!
//! Kinds are snake_case. Three older spellings are kept because tests and the README pin
//! them: `stopped-early`, `untrusted-journal`, and `memory-filesystem` for a raw target
//! file (`memory_filesystem` everywhere else: one condition, [`Warning::MemoryFilesystem`]).

use crate::vocab::units::{format_bytes, format_ns, format_rate};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A signed share as a percentage, one decimal below 10 % so a small margin is not
/// rounded to "+0 %" or "-0 %": `+5.2 %`, `-12 %`.
fn signed_percent(share: f64) -> String {
    let p = share * 100.0;
    if p.abs() < 9.95 {
        format!("{p:+.1} %")
    } else {
        format!("{p:+.0} %")
    }
}

/// Something about a result that a reader must know to trust it: what happened, and what
/// to do about it.
#[derive(Debug, Clone)]
pub enum Warning {
    // Runs, budgets, steps.
    /// A test stopped before its plan was done (a budget, a deadline); its inferences use
    /// what was measured.
    StoppedEarly { why: String },
    /// The run took clearly longer than `--time-budget` (device time): the test could not
    /// stop sooner, or checked its deadline too seldom.
    OverTimeBudget { budget_ns: u64, used_ns: u64 },
    /// The capacity probe stopped before it finished: the usable size is only a lower
    /// bound. Kind `partial`.
    CapacityPartial,
    /// A step of `auto` did not run.
    StepSkipped { step: String, why: String },
    /// A step of `auto` failed; the steps before it kept their results. Kind
    /// `step_failed`.
    StepFailed { step: String, error: String },
    /// The device auto advises about is in use (mounted, swap, held): the partition and
    /// mkfs lines would destroy what it holds. Kind `in_use`.
    DeviceInUse { why: String },
    /// align stopped (by its time budget or read limit) before the erase block was
    /// settled. Kind `budget`.
    AlignUnsettled { stop_reason: String, reads: u64 },
    /// verify stopped before it checked the whole range. Kind `incomplete`.
    VerifyIncomplete {
        phase: String,
        at_bytes: u64,
        /// The state to continue from is still there (`--resume` works).
        resumable: bool,
    },
    /// verify's write pass ended where the filesystem refused more (ENOSPC, or EDQUOT when
    /// `quota`): not a bad medium; what was written was read back. Kind `out_of_space`.
    OutOfSpace {
        written_bytes: u64,
        planned_bytes: u64,
        quota: bool,
    },
    /// The target went away during an `io` run.
    TargetVanished,

    // The target and the machine.
    /// `/sys` is not mounted: sizes come from ioctls, partitions and holders are unknown.
    NoSysfs { why: String },
    /// O_DIRECT was refused; `fallback` says what the test did instead.
    DirectIoRefused {
        /// The target or directory, when known.
        target: Option<String>,
        fallback: DirectFallback,
    },
    /// The file or directory is on a filesystem that keeps files in memory.
    MemoryFilesystem { fs_type: String, place: MemoryPlace },
    /// The target file has holes or unwritten extents: reads of them never reach a
    /// medium (the filesystem answers zeros at memory speed).
    SparseTarget {
        spec: String,
        unbacked_bytes: u64,
        size_bytes: u64,
    },
    /// The target is a partition: a fake card shows itself only on the whole device.
    Partition { spec: String, disk: String },
    /// The partition-table regions the capacity probe saved had changed and were written
    /// back.
    GuardRestored { cause: GuardCause },
    /// `--realtime` was refused by the kernel.
    RealtimeRefused,
    /// Other programs took time from the measurement.
    NoisyEnvironment {
        /// What made the machine busy, in words (`analysis::noise::busy_causes`).
        causes: Vec<String>,
        effect: NoiseEffect,
    },
    /// A CPU frequency policy is not `performance` (policy, governor).
    CpuGovernor { policies: Vec<(String, String)> },

    // Workloads and bench.
    /// io_uring could not be set up; the sync engine ran instead.
    UringUnavailable {
        /// Why, from `platform::explain_io_uring`.
        why: String,
        iodepth: u32,
    },
    /// `--iodepth` above 1 with the sync engine, which does one I/O at a time.
    IodepthIgnored { iodepth: u32 },
    /// A `--rate` cap the device did not reach.
    RateNotMet {
        /// "read" or "write".
        dir: String,
        cap_bytes_per_s: f64,
        got_bytes_per_s: f64,
    },
    /// `io --direct=0`: the I/O went through the page cache.
    Buffered,
    /// bench ran only its read tests (no `--write`).
    ReadOnlyBench,
    /// One bench figure is noise.
    NoisyFigure {
        label: String,
        dir: String,
        noise: FigureNoise,
    },
    /// A class verdict whose margin lies inside its figures' spread.
    VerdictWithinNoise {
        class: String,
        pass: bool,
        margin: f64,
        spread: f64,
    },

    /// `compare`: a figure one side has and the other lacks, left out.
    UnmatchedFigure {
        /// The side's label and where it came from (bench, io, fio).
        side: String,
        source: String,
        metric: String,
        /// The workload in words.
        words: String,
        /// The other side's label.
        other: String,
    },

    // Journals and serving.
    /// A journal ends in a partial record (a crash while saving).
    TornJournalTail { bytes: u64 },
    /// `restore --list` on a journal not owned by the user or root, or writable by others.
    UntrustedJournal { why: String },
    /// `sim serve` could not clean up something it made.
    Cleanup { what: String },

    // Geometry and flashbench logs.
    /// Only power-of-two alignments were measured (a flashbench log): a 3 × 2^n size
    /// cannot be told from its power-of-two part.
    PowerOfTwoOnly {
        /// "4 MiB could be 12 MiB", for each size found.
        alternatives: Vec<String>,
    },
    /// Some erase blocks stayed fast while the others collapsed in the open-AU test.
    UnevenEraseBlocks {
        fast_blocks: Vec<usize>,
        offset_bytes: u64,
    },
    /// `analyze --plot` on a log it cannot draw.
    NoPlot,
    /// An open-au log with no count on its command line and none given.
    OpenAuNrUnknown { file: String },
    /// Open-au runs' counts taken from their order: `runs` runs from `run` on, counted
    /// from `count` (one warning for all of them).
    OpenAuNrFromRunOrder {
        run: String,
        count: u32,
        runs: usize,
    },
    /// `--open-au-nr` given but not needed.
    OpenAuNrUnused { any_open_au: bool },
    /// A flashbench diff column cut by its 7-character field, recovered from the others.
    DiffRecovered {
        file: String,
        line: usize,
        field: String,
        read_ns: f64,
        recomputed_ns: f64,
    },
    /// A flashbench command line with no results after it.
    CommandWithoutResults {
        file: String,
        line: usize,
        command: String,
    },
    /// The last line of a log was cut off (`what` says how).
    CutLastLine {
        file: String,
        line_no: usize,
        line: String,
        what: String,
    },
    /// A flashbench run was interrupted (`^C` in the log): the run ends there, with the
    /// rows before it.
    InterruptedRun { file: String, line: usize },
    /// Several align runs with one block size were read as one card: each alignment's
    /// boundary cost is the median over the runs, its spread their standard error; runs
    /// whose rows repeat another's were counted once.
    AlignRunsPooled {
        block_bytes: u64,
        runs: usize,
        duplicates: usize,
    },

    // Filesystem tests.
    /// The test file (or the matrix's largest) is smaller than RAM: buffered figures can
    /// be the page cache's.
    SmallerThanRam {
        file_bytes: u64,
        ram_bytes: u64,
        /// `fs matrix`, which never flushes between its cells (iozone's caveat).
        matrix: bool,
    },
    /// Buffered writes reported more than twice the synced rate.
    BufferedInflated {
        ratio: f64,
        buffered_bytes_per_s: f64,
        synced_bytes_per_s: f64,
    },
    /// The filesystem compresses and the pattern is compressible.
    CompressingFilesystem { fs_type: String, pattern: String },
    /// The filesystem may compress (not readable from its options), and the pattern is
    /// compressible.
    MaybeCompressing { fs_type: String, pattern: String },
    /// `--drop-caches` failed; each file's pages were dropped instead.
    DropCachesFailed { reason: String },
    /// A "cold" read began with much of the file still cached.
    ColdReadNotCold {
        mode: String,
        cached_bytes: u64,
        file_bytes: u64,
    },
    /// `--total` below the file size: one file was written.
    TotalBelowSize { file_bytes: u64, total_bytes: u64 },

    /// A warning read back from a saved document (only its kind and words are stored), or
    /// of a kind a newer flashscope knows: kept as written, never a failed read.
    Recorded { kind: String, message: String },
}

/// What a test did when O_DIRECT was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum DirectFallback {
    /// The test ran buffered: the page cache may answer.
    Buffered,
    /// verify fsyncs its files and drops their cached pages before reading back.
    DropCachedPages,
    /// `fs seq`'s `direct` mode has no figure (kind `direct_unsupported`).
    ModeSkipped { reason: String },
}

/// Where a memory filesystem was met.
#[derive(Debug, Clone, PartialEq)]
pub enum MemoryPlace {
    /// A raw test's target file (kind `memory-filesystem`, as tests pin it).
    TargetFile(String),
    /// The directory a filesystem test measures.
    MeasuredDirectory,
    /// The directory `verify` fills.
    VerifiedDirectory(String),
}

/// Why the probe's partition-table regions had changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GuardCause {
    /// Aliased writes reached them.
    Aliasing,
    /// No address aliased, and the card loses data beyond its real size.
    Limbo,
    /// No address aliased: the card changed them itself.
    CardChanged,
}

/// What a busy machine does to a result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoiseEffect {
    /// align's answers: late reads are recognised, but more may be inconclusive.
    AlignAnswers,
    /// Throughput figures may be lower than the device gives.
    Figures,
}

/// Why one bench figure is noise.
#[derive(Debug, Clone, PartialEq)]
pub enum FigureNoise {
    /// The test waited for a CPU this share of its time.
    RunqWait { share: f64 },
    /// The per-second rate strayed by ±`spread` (bytes/s from `lo` to `hi`).
    Spread {
        spread: f64,
        lo_bytes_per_s: f64,
        hi_bytes_per_s: f64,
    },
}

/// What the system said when a filesystem refused a write for want of room: ENOSPC, or
/// EDQUOT (`quota`).
pub fn out_of_space_reason(quota: bool) -> &'static str {
    if quota {
        "disk quota exceeded"
    } else {
        "no space left on device"
    }
}

impl Warning {
    /// The stable machine-readable name in the JSON `kind` field.
    pub fn kind(&self) -> &str {
        use Warning::*;
        match self {
            StoppedEarly { .. } => "stopped-early",
            OverTimeBudget { .. } => "over_time_budget",
            CapacityPartial => "partial",
            StepSkipped { .. } => "skipped",
            StepFailed { .. } => "step_failed",
            DeviceInUse { .. } => "in_use",
            AlignUnsettled { .. } => "budget",
            VerifyIncomplete { .. } => "incomplete",
            OutOfSpace { .. } => "out_of_space",
            TargetVanished => "target_vanished",
            NoSysfs { .. } => "no_sysfs",
            DirectIoRefused {
                fallback: DirectFallback::ModeSkipped { .. },
                ..
            } => "direct_unsupported",
            DirectIoRefused { .. } => "no_direct_io",
            MemoryFilesystem {
                place: MemoryPlace::TargetFile(_),
                ..
            } => "memory-filesystem",
            MemoryFilesystem { .. } => "memory_filesystem",
            SparseTarget { .. } => "sparse_target",
            Partition { .. } => "partition",
            GuardRestored { .. } => "guard_restored",
            RealtimeRefused => "realtime_refused",
            NoisyEnvironment { .. } => "noisy_environment",
            CpuGovernor { .. } => "cpu_governor",
            UringUnavailable { .. } => "uring_unavailable",
            IodepthIgnored { .. } => "iodepth_ignored",
            RateNotMet { .. } => "rate_not_met",
            Buffered => "buffered",
            ReadOnlyBench => "read_only_bench",
            NoisyFigure { .. } => "noisy_figure",
            VerdictWithinNoise { .. } => "verdict_within_noise",
            UnmatchedFigure { .. } => "unmatched_figure",
            TornJournalTail { .. } => "torn_journal_tail",
            UntrustedJournal { .. } => "untrusted-journal",
            Cleanup { .. } => "cleanup",
            PowerOfTwoOnly { .. } => "power_of_two_only",
            UnevenEraseBlocks { .. } => "uneven_erase_blocks",
            NoPlot => "no_plot",
            OpenAuNrUnknown { .. } => "open_au_nr_unknown",
            OpenAuNrFromRunOrder { .. } => "open_au_nr_from_run_order",
            OpenAuNrUnused { .. } => "open_au_nr_unused",
            DiffRecovered { .. } => "diff_recovered",
            CommandWithoutResults { .. } => "command_without_results",
            CutLastLine { .. } => "cut_last_line",
            InterruptedRun { .. } => "interrupted_run",
            AlignRunsPooled { .. } => "align_runs_pooled",
            SmallerThanRam { .. } => "file_smaller_than_ram",
            BufferedInflated { .. } => "buffered_inflated_by_cache",
            CompressingFilesystem { .. } => "compressing_filesystem",
            MaybeCompressing { .. } => "maybe_compressing_filesystem",
            DropCachesFailed { .. } => "drop_caches_failed",
            ColdReadNotCold { .. } => "cold_read_not_cold",
            TotalBelowSize { .. } => "total_below_file_size",
            Recorded { kind, .. } => kind,
        }
    }

    /// What happened and what it means for the result.
    pub fn cause(&self) -> String {
        use Warning::*;
        match self {
            StoppedEarly { why } => {
                format!("the test stopped early: {why}; the inference uses what was measured")
            }
            OverTimeBudget { budget_ns, used_ns } => format!(
                "the run took {} of device time against a --time-budget of {}: the test could not stop sooner (one long step, or the restore after it)",
                format_ns(*used_ns as f64),
                format_ns(*budget_ns as f64)
            ),
            CapacityPartial => "the probe stopped before it finished (time or write budget): the usable size is only what was shown to hold data so far".into(),
            StepSkipped { step, why } => format!("{step} was skipped: {why}"),
            DeviceInUse { why } => format!(
                "{why}: the partition and mkfs lines auto gives would destroy what it holds"
            ),
            StepFailed { step, error } => format!(
                "{step} failed: {error}; the steps before it kept their results, the ones after it did not run"
            ),
            AlignUnsettled { stop_reason, reads } => format!(
                "stopped by the {stop_reason} after {reads} reads before the erase block was settled"
            ),
            VerifyIncomplete { phase, at_bytes, .. } => format!(
                "the run stopped in the {phase} phase at {}: the rest of the range was not checked",
                format_bytes(*at_bytes)
            ),
            OutOfSpace { written_bytes, planned_bytes, quota } => format!(
                "the filesystem ran out of space ({}) after {} of the {} planned were written: another writer took the room, or it had less free than it said. Running out of space is not a bad medium: the {} written were read back and checked; the rest was never written and is not counted",
                out_of_space_reason(*quota),
                format_bytes(*written_bytes),
                format_bytes(*planned_bytes),
                format_bytes(*written_bytes)
            ),
            TargetVanished => "the target went away during the run; the figures cover the I/O done until then".into(),
            NoSysfs { why } => format!("{why}: sizes come from ioctls, and partitions and holders cannot be checked"),
            DirectIoRefused { target, fallback } => {
                let who = match target {
                    Some(t) => format!("the filesystem holding '{t}'"),
                    None => "the filesystem".to_string(),
                };
                match fallback {
                    DirectFallback::Buffered => format!(
                        "{who} refuses O_DIRECT: this test runs buffered, so the page cache may answer reads meant for the medium (and hide the boundaries align looks for)"
                    ),
                    DirectFallback::DropCachedPages => format!(
                        "{who} refuses O_DIRECT: files are fsynced and their cached pages dropped before reading back"
                    ),
                    DirectFallback::ModeSkipped { reason } => format!(
                        "{who} refused O_DIRECT ({reason}), so the 'direct' mode has no figure; the other modes ran. Filesystems in RAM and some FUSE or network filesystems do this"
                    ),
                }
            }
            MemoryFilesystem { fs_type, place } => match place {
                MemoryPlace::TargetFile(spec) => format!(
                    "'{spec}' is on {fs_type}, which keeps files in memory (and silently ignores O_DIRECT): timings measure RAM, not a medium"
                ),
                MemoryPlace::MeasuredDirectory => format!(
                    "the directory is on {fs_type}, which lives in RAM: every figure is the speed of memory, not of flash"
                ),
                MemoryPlace::VerifiedDirectory(dir) => format!(
                    "'{dir}' is on {fs_type}, which keeps files in memory: this verifies RAM, not a card"
                ),
            },
            SparseTarget {
                spec,
                unbacked_bytes,
                size_bytes,
            } => format!(
                "'{spec}' has {} of its {} in holes or unwritten extents: reading them reaches no medium (the filesystem returns zeros at memory speed), so read figures there are not the device's",
                format_bytes(*unbacked_bytes),
                format_bytes(*size_bytes)
            ),
            Partition { spec, disk } => format!(
                "'{spec}' is a partition of /dev/{disk}: a fake card is only visible on the whole device, because the partition may end before the real capacity does"
            ),
            GuardRestored { cause } => match cause {
                GuardCause::Aliasing => "aliased writes reached the partition-table regions; their saved content was written back".into(),
                GuardCause::Limbo => "the partition-table regions read back different at the end than at the start, though no address aliased (this card does not keep data beyond its real size, so the last sectors may not hold it); their saved content was written back".into(),
                GuardCause::CardChanged => "the partition-table regions read back different at the end than at the start, though no address aliased (the card changed them by itself); their saved content was written back".into(),
            },
            RealtimeRefused => "--realtime: the kernel refused real-time priority (it needs root or CAP_SYS_NICE); the reads ran at normal priority".into(),
            NoisyEnvironment { causes, effect } => format!(
                "the machine was busy during the measurement: {}. {}",
                causes.join("; "),
                match effect {
                    NoiseEffect::AlignAnswers => "Each row is taken from its fast reads and late reads are recognised, so the answers stand as stated, but more of them may be inconclusive",
                    NoiseEffect::Figures => "Other programs took time from the test, so its figures may be lower than the device gives",
                }
            ),
            CpuGovernor { policies } => {
                let list: Vec<String> = policies.iter().map(|(p, g)| format!("{p}={g}")).collect();
                format!(
                    "the CPU frequency governor is not 'performance' ({}): a slow or changing clock lowers small-block and synced figures and makes runs disagree",
                    list.join(", ")
                )
            }
            UringUnavailable { why, iodepth } => {
                if *iodepth > 1 {
                    format!("{why}; --iodepth {iodepth} is not applied")
                } else {
                    why.clone()
                }
            }
            IodepthIgnored { iodepth } => format!(
                "the sync engine does one I/O at a time, so --iodepth {iodepth} has no effect"
            ),
            RateNotMet { dir, cap_bytes_per_s, got_bytes_per_s } => format!(
                "the {dir} rate cap of {} was not reached: the device gave {} ({:.0} %); the figures are the device's, not the cap's",
                format_rate(*cap_bytes_per_s),
                format_rate(*got_bytes_per_s),
                got_bytes_per_s / cap_bytes_per_s * 100.0
            ),
            Buffered => "--direct=0: I/O went through the page cache, so the figures include the cache; the page cache's Dirty/Writeback before and after are in `page_cache`".into(),
            ReadOnlyBench => "only the read tests ran: there are no write figures and no SD class verdicts".into(),
            NoisyFigure { label, dir, noise } => match noise {
                FigureNoise::RunqWait { share } => format!(
                    "{label} {dir}: the test waited for a CPU {:.0} % of its time, behind other processes on its CPU, so this figure may be lower than the device gives",
                    share * 100.0
                ),
                FigureNoise::Spread { spread, lo_bytes_per_s, hi_bytes_per_s } => format!(
                    "{label} {dir}: the rate varied ±{:.0} % from second to second ({} to {}): the device or the machine was not steady, or too few I/Os completed each second to count finely, so this figure may be off by as much",
                    spread * 100.0,
                    format_rate(*lo_bytes_per_s),
                    format_rate(*hi_bytes_per_s)
                ),
            },
            VerdictWithinNoise { class, pass, margin, spread } => {
                // The range the figure varied over, on the margin's scale (of the
                // requirement): it holds 0 exactly when the verdict could go either way.
                let measured = 1.0 + margin;
                format!(
                    "{class} {} by {}; its figures varied ±{:.0} % from second to second, from {} to {} of the requirement: the verdict could go either way",
                    if *pass { "passes" } else { "fails" },
                    signed_percent(*margin),
                    spread * 100.0,
                    signed_percent(measured * (1.0 - spread) - 1.0),
                    signed_percent(measured * (1.0 + spread) - 1.0)
                )
            }
            UnmatchedFigure { side, source, metric, words, other } => format!(
                "{side} ({source}) has {metric} ({words}) and {other} has no such figure: not compared"
            ),
            TornJournalTail { bytes } => format!(
                "the journal ends in {bytes} bytes of a record whose length runs past the end of the file, skipped: a crash while saving leaves one, and its region was never overwritten (the overwrite waits for the record to be complete and on disk)"
            ),
            UntrustedJournal { why } => format!("{why}: listed only, since listing writes nothing"),
            Cleanup { what } => format!("cleaning up after the served card failed: {what}"),
            PowerOfTwoOnly { alternatives } => format!(
                "the data holds only power-of-two alignments (as flashbench -a measures), which cannot tell a size of 3 × 2^n from its power-of-two part: TLC media use 1.5, 3, 6, 12 MiB erase blocks and 24 KiB pages{}; confidence is capped below confident",
                if alternatives.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", alternatives.join(", "))
                }
            ),
            UnevenEraseBlocks { fast_blocks, offset_bytes } => format!(
                "{} of the tested erase blocks (number {:?} from the offset {}) stayed fast when the others collapsed: they keep no open block (a FAT area reaching into the range?), so the count may be too high by {}",
                fast_blocks.len(),
                fast_blocks,
                offset_bytes,
                fast_blocks.len()
            ),
            NoPlot => "--plot draws align and interval logs only; no plot was written".into(),
            OpenAuNrUnknown { file } => format!(
                "{file}: no --open-au-nr on its command line and none given with --open-au-nr; the log is not used"
            ),
            OpenAuNrFromRunOrder { run, count, runs } => format!(
                "{run} and the {} open-au runs after it: no --open-au-nr on a command line; their counts were taken from their order ({count}, {}, ... {}); an open_au inference on them is at most tentative",
                runs - 1,
                count + 1,
                *count as usize + runs - 1
            ),
            OpenAuNrUnused { any_open_au } => if *any_open_au {
                "--open-au-nr was not used: every open-au run has its count on its command line"
            } else {
                "--open-au-nr was not used: there is no open-au run"
            }
            .into(),
            DiffRecovered { file, line, field, read_ns, recomputed_ns } => format!(
                "{file}, line {line}: diff '{field}' was cut by flashbench's 7-character field; read as {read_ns} ns, which on - (pre + post) / 2 = {} ns supports",
                recomputed_ns.round()
            ),
            CommandWithoutResults { file, line, command } => format!(
                "{file}, line {line}: '{command}' has no results after it; it was left out"
            ),
            CutLastLine { file, line_no, line, what } => format!(
                "{file}, line {line_no}: the last line '{line}' {what}; it was left out and the lines before it were used"
            ),
            InterruptedRun { file, line } => format!(
                "{file}, line {line}: the run was interrupted (^C); it ends there and the rows before it were used (the sizes it did not reach are missing)"
            ),
            AlignRunsPooled { block_bytes, runs: 1, duplicates } => format!(
                "{duplicates} further align run(s) with {} reads repeat the first one's rows (the same log pasted again, or a cut copy) and were counted once",
                format_bytes(*block_bytes)
            ),
            AlignRunsPooled { block_bytes, runs, duplicates } => format!(
                "{runs} align runs with {} reads were read as one card: each alignment's boundary cost is the median over the runs and their spread its uncertainty (the table shows the medians){}",
                format_bytes(*block_bytes),
                if *duplicates > 0 {
                    format!("; {duplicates} further run(s) repeating another's rows were counted once")
                } else {
                    String::new()
                }
            ),
            SmallerThanRam { file_bytes, ram_bytes, matrix: false } => format!(
                "the test file ({}) is smaller than RAM ({}): the kernel can hold all of it in the page cache, so a buffered write may finish before the data reaches the flash and a warm read never touches it",
                format_bytes(*file_bytes),
                format_bytes(*ram_bytes)
            ),
            SmallerThanRam { file_bytes, ram_bytes, matrix: true } => format!(
                "the largest file in the matrix ({}) is smaller than RAM ({}): like iozone, the matrix does not flush between tests, so its read and reread cells (and its write cells unless --sync or --fsync is given) show the page cache rather than the flash",
                format_bytes(*file_bytes),
                format_bytes(*ram_bytes)
            ),
            BufferedInflated { ratio, buffered_bytes_per_s, synced_bytes_per_s } => format!(
                "buffered writes reported {} but with fdatasync at the end only {} ({ratio:.1} x): the difference is the page cache, not the flash",
                format_rate(*buffered_bytes_per_s),
                format_rate(*synced_bytes_per_s)
            ),
            CompressingFilesystem { fs_type, pattern } => format!(
                "{fs_type} compresses data and the pattern '{pattern}' compresses to almost nothing: the figures count bytes the flash never received"
            ),
            MaybeCompressing { fs_type, pattern } => format!(
                "{fs_type} may compress data (a property that cannot be read from the mount options) and the pattern '{pattern}' is compressible"
            ),
            DropCachesFailed { reason } => format!(
                "--drop-caches could not write /proc/sys/vm/drop_caches ({reason}); each test file's own pages were dropped with posix_fadvise instead, which is enough for that file but leaves metadata cached"
            ),
            ColdReadNotCold { mode, cached_bytes, file_bytes } => format!(
                "the cold read of mode {mode} began with {} of the {} file still in the page cache (mincore): its figure is partly the cache's. The filesystem keeps data in memory or ignored posix_fadvise",
                format_bytes(*cached_bytes),
                format_bytes(*file_bytes)
            ),
            TotalBelowSize { file_bytes, total_bytes } => format!(
                "--total {} is smaller than the file size {}: one file of that size was written instead",
                format_bytes(*total_bytes),
                format_bytes(*file_bytes)
            ),
            Recorded { message, .. } => message.clone(),
        }
    }

    /// What to do about it: an imperative ("use …", "run …", "give …"). Empty only for a
    /// [`Warning::Recorded`] one, whose words already hold it.
    pub fn remedy(&self) -> String {
        use Warning::*;
        match self {
            StoppedEarly { .. } => "give a larger --time-budget or --write-budget to let it finish".into(),
            OverTimeBudget { .. } => "give a larger --time-budget, or expect runs this long on this device".into(),
            CapacityPartial => "rerun with a larger --time-budget or --write-budget for a verdict".into(),
            StepSkipped { .. } => "run that step on its own, or give auto the budget or the erase block it needs".into(),
            StepFailed { step, .. } => format!("mend what the error names, then run `flashscope {step}` on its own or auto again"),
            DeviceInUse { .. } => "run those lines only on a card you mean to wipe, after unmounting it".into(),
            AlignUnsettled { .. } => "give a larger --time-budget or --count to settle the answer".into(),
            VerifyIncomplete { resumable: true, .. } => "continue with --resume".into(),
            VerifyIncomplete { resumable: false, .. } => "verify again: its files are gone (a long run can be split with --pass write, then --pass read --resume)".into(),
            OutOfSpace { quota: false, .. } => "remove files (or let the other writer finish) and verify again to check the rest, or give a smaller --size".into(),
            OutOfSpace { quota: true, .. } => "raise the quota, or give a --size within it, and verify again to check the rest".into(),
            TargetVanished => "check the device's cable, power and `dmesg`, then rerun".into(),
            NoSysfs { .. } => "mount it (`mount -t sysfs sysfs /sys`) for the safety checks writing needs".into(),
            DirectIoRefused { fallback: DirectFallback::Buffered, .. } => "put the file on a filesystem with direct I/O (ext4, xfs, f2fs), or test the block device".into(),
            DirectIoRefused { fallback: DirectFallback::DropCachedPages, .. } => "trust the result, or verify the block device for reads straight from the card".into(),
            DirectIoRefused { fallback: DirectFallback::ModeSkipped { .. }, .. } => "use a filesystem on the flash device itself for a direct figure".into(),
            MemoryFilesystem { place, .. } => match place {
                MemoryPlace::TargetFile(_) => "put the file on a real device".into(),
                MemoryPlace::MeasuredDirectory => "give a directory on the flash filesystem you want to measure".into(),
                MemoryPlace::VerifiedDirectory(_) => "verify a directory on the card's filesystem".into(),
            },
            SparseTarget { .. } => "test the block device itself, or fill the whole file first (dd if=/dev/urandom of=FILE bs=1M count=N conv=notrunc,fsync)".into(),
            Partition { disk, .. } => format!("test /dev/{disk} for the fake-capacity verdict"),
            GuardRestored { .. } => "check the partition table (`sfdisk -d`) before using the card".into(),
            RealtimeRefused => "run as root (or with CAP_SYS_NICE) for real-time priority".into(),
            NoisyEnvironment { effect: NoiseEffect::AlignAnswers, .. } => "rerun on a quiet machine (or as root, where align reads at real-time priority, `taskset` away from busy CPUs) for sharper answers".into(),
            NoisyEnvironment { effect: NoiseEffect::Figures, .. } => "rerun on a quiet machine".into(),
            CpuGovernor { .. } => "set it with 'echo performance | tee /sys/devices/system/cpu/cpufreq/policy*/scaling_governor' (as root) before measuring, for comparable numbers".into(),
            UringUnavailable { .. } => "use --engine sync to choose it yourself, or turn io_uring back on as the message says".into(),
            IodepthIgnored { .. } => "use --engine uring for a queue".into(),
            RateNotMet { .. } => "lower the --rate cap below what the device gives, or leave it out".into(),
            Buffered => "use --direct=1 for the medium's own figures".into(),
            ReadOnlyBench => "add --write (on a device or file the test region is saved and restored; --destructive skips that) for write figures and the SD class verdicts".into(),
            NoisyFigure { noise: FigureNoise::RunqWait { .. }, .. } => "rerun on a quiet machine or pin the test (--cpus) to a CPU nothing else uses".into(),
            NoisyFigure { noise: FigureNoise::Spread { .. }, .. } => "rerun on a quiet machine or with a longer --runtime".into(),
            VerdictWithinNoise { .. } => "rerun on a quiet machine or with a longer --runtime".into(),
            UnmatchedFigure { .. } => "run the same test on both sides to compare that figure".into(),
            TornJournalTail { .. } => "restore as usual: a restore first checks that the target still holds the bytes the file has of that region".into(),
            UntrustedJournal { .. } => "restore it only as its owner or root once you trust it (`chown`, `chmod go-w`)".into(),
            Cleanup { .. } => "remove what is left by hand (`umount`, `losetup -d` on the named paths)".into(),
            PowerOfTwoOnly { .. } => "run `flashscope align` on the card, which also reads at 3 × 2^n alignments".into(),
            UnevenEraseBlocks { .. } => "rerun with a larger --offset".into(),
            NoPlot => "leave out --plot for this log".into(),
            OpenAuNrUnknown { .. } => "give --open-au-nr with the count each run used".into(),
            OpenAuNrFromRunOrder { .. } => "give --open-au-nr with one count per run, e.g. 1,2,8,9, if they were others".into(),
            OpenAuNrUnused { .. } => "leave out --open-au-nr".into(),
            DiffRecovered { .. } => "check that line against the log if the figure matters".into(),
            CommandWithoutResults { .. } => "rerun that flashbench command if its results are wanted".into(),
            CutLastLine { .. } => "rerun flashbench to completion if the last row matters".into(),
            InterruptedRun { .. } => "rerun flashbench to completion if the missing sizes matter".into(),
            AlignRunsPooled { .. } => "run analyze on each run alone to see how far they agree".into(),
            SmallerThanRam { ram_bytes, matrix: false, .. } => format!(
                "trust the synced rows (fdatasync, dsync, sync, direct) and the cold reads, or give --size {} or more for an honest buffered figure",
                format_bytes(ram_bytes.saturating_mul(2))
            ),
            SmallerThanRam { matrix: true, .. } => "use files larger than RAM, --sync or --fsync, or fs seq for cold reads, for the medium's figures".into(),
            BufferedInflated { .. } => "quote the synced figure, which is what the medium sustains, and use conv=fdatasync or oflag=direct when you measure with dd".into(),
            CompressingFilesystem { .. } => "use --pattern random (the default) for the medium's speed".into(),
            MaybeCompressing { .. } => "use --pattern random unless compression is known to be off".into(),
            DropCachesFailed { .. } => "run as root, or leave out --drop-caches".into(),
            ColdReadNotCold { .. } => "try --drop-caches as root, or a filesystem on the flash itself".into(),
            TotalBelowSize { .. } => "raise --total for more than one file per size".into(),
            Recorded { .. } => String::new(),
        }
    }
}

impl fmt::Display for Warning {
    /// The cause, then the remedy: "…: use X".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let remedy = self.remedy();
        if remedy.is_empty() {
            write!(f, "{}", self.cause())
        } else {
            write!(f, "{}: {remedy}", self.cause())
        }
    }
}

/// Two warnings are the same when they say the same thing: a warning read back from a
/// document (`Recorded`) equals the one that was written.
impl PartialEq for Warning {
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind() && self.to_string() == other.to_string()
    }
}

/// The JSON form, `{"kind": "...", "message": "..."}`.
#[derive(Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct Written {
    kind: String,
    message: String,
}

impl Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Written {
            kind: self.kind().to_string(),
            message: self.to_string(),
        }
        .serialize(s)
    }
}

/// The schema of the JSON form (schema/flashscope-1.schema.json): written by hand as
/// [`Written`]'s, because `Serialize` is.
#[cfg(test)]
impl schemars::JsonSchema for Warning {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Warning".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Written::json_schema(generator)
    }
}

impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let written = Written::deserialize(d)?;
        Ok(Warning::Recorded {
            kind: written.kind,
            message: written.message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One warning of every variant and every kind a variant can have (a new variant
    /// belongs here: the count below says how many there are).
    fn every() -> Vec<Warning> {
        use Warning::*;
        let s = |x: &str| x.to_string();
        vec![
            StoppedEarly {
                why: s("time budget reached"),
            },
            OverTimeBudget {
                budget_ns: 17_000_000_000,
                used_ns: 98_000_000_000,
            },
            CapacityPartial,
            StepSkipped {
                step: s("fat"),
                why: s("the write budget is spent"),
            },
            AlignUnsettled {
                stop_reason: s("time budget"),
                reads: 900,
            },
            VerifyIncomplete {
                phase: s("write"),
                at_bytes: 1 << 20,
                resumable: true,
            },
            VerifyIncomplete {
                phase: s("read"),
                at_bytes: 1 << 20,
                resumable: false,
            },
            OutOfSpace {
                written_bytes: 300 << 20,
                planned_bytes: 2 << 30,
                quota: false,
            },
            OutOfSpace {
                written_bytes: 300 << 20,
                planned_bytes: 2 << 30,
                quota: true,
            },
            TargetVanished,
            NoSysfs {
                why: s("/sys is not mounted"),
            },
            DirectIoRefused {
                target: Some(s("card.img")),
                fallback: DirectFallback::Buffered,
            },
            DirectIoRefused {
                target: None,
                fallback: DirectFallback::DropCachedPages,
            },
            DirectIoRefused {
                target: None,
                fallback: DirectFallback::ModeSkipped {
                    reason: s("EINVAL"),
                },
            },
            MemoryFilesystem {
                fs_type: s("tmpfs"),
                place: MemoryPlace::TargetFile(s("card.img")),
            },
            MemoryFilesystem {
                fs_type: s("tmpfs"),
                place: MemoryPlace::MeasuredDirectory,
            },
            MemoryFilesystem {
                fs_type: s("ramfs"),
                place: MemoryPlace::VerifiedDirectory(s("/mnt")),
            },
            SparseTarget {
                spec: s("f.img"),
                unbacked_bytes: 1 << 30,
                size_bytes: 1 << 30,
            },
            Partition {
                spec: s("/dev/sdb1"),
                disk: s("sdb"),
            },
            GuardRestored {
                cause: GuardCause::Aliasing,
            },
            GuardRestored {
                cause: GuardCause::Limbo,
            },
            GuardRestored {
                cause: GuardCause::CardChanged,
            },
            RealtimeRefused,
            NoisyEnvironment {
                causes: vec![s("load average 9.0 on 2 CPUs")],
                effect: NoiseEffect::AlignAnswers,
            },
            NoisyEnvironment {
                causes: vec![s("load average 9.0 on 2 CPUs")],
                effect: NoiseEffect::Figures,
            },
            CpuGovernor {
                policies: vec![(s("policy0"), s("powersave"))],
            },
            UringUnavailable {
                why: s("io_uring is disabled"),
                iodepth: 32,
            },
            IodepthIgnored { iodepth: 32 },
            RateNotMet {
                dir: s("write"),
                cap_bytes_per_s: 5e8,
                got_bytes_per_s: 1e7,
            },
            Buffered,
            ReadOnlyBench,
            NoisyFigure {
                label: s("SEQ1M"),
                dir: s("read"),
                noise: FigureNoise::RunqWait { share: 0.1 },
            },
            NoisyFigure {
                label: s("SEQ1M"),
                dir: s("read"),
                noise: FigureNoise::Spread {
                    spread: 0.3,
                    lo_bytes_per_s: 1e6,
                    hi_bytes_per_s: 2e6,
                },
            },
            VerdictWithinNoise {
                class: s("A2"),
                pass: true,
                margin: 0.02,
                spread: 0.1,
            },
            UnmatchedFigure {
                side: s("A"),
                source: s("bench"),
                metric: s("seq_read"),
                words: s("SEQ1M Q8T1 read"),
                other: s("B"),
            },
            TornJournalTail { bytes: 12 },
            UntrustedJournal {
                why: s("the journal is owned by uid 65534"),
            },
            Cleanup {
                what: s("umount /mnt: busy"),
            },
            PowerOfTwoOnly {
                alternatives: vec![s("4 MiB could be 12 MiB")],
            },
            UnevenEraseBlocks {
                fast_blocks: vec![0, 1],
                offset_bytes: 0,
            },
            NoPlot,
            OpenAuNrUnknown { file: s("au.log") },
            OpenAuNrFromRunOrder {
                run: s("au.log#2"),
                count: 2,
                runs: 4,
            },
            OpenAuNrUnused { any_open_au: true },
            DiffRecovered {
                file: s("a.log"),
                line: 3,
                field: s("-1.23e"),
                read_ns: -1230.0,
                recomputed_ns: -1229.6,
            },
            CommandWithoutResults {
                file: s("a.log"),
                line: 1,
                command: s("flashbench -a"),
            },
            CutLastLine {
                file: s("a.log"),
                line_no: 9,
                line: s("align 4"),
                what: s("is cut off"),
            },
            InterruptedRun {
                file: s("a.log"),
                line: 12,
            },
            AlignRunsPooled {
                block_bytes: 1024,
                runs: 3,
                duplicates: 1,
            },
            SmallerThanRam {
                file_bytes: 1 << 28,
                ram_bytes: 1 << 33,
                matrix: false,
            },
            SmallerThanRam {
                file_bytes: 1 << 28,
                ram_bytes: 1 << 33,
                matrix: true,
            },
            BufferedInflated {
                ratio: 4.0,
                buffered_bytes_per_s: 4e8,
                synced_bytes_per_s: 1e8,
            },
            CompressingFilesystem {
                fs_type: s("btrfs"),
                pattern: s("zeros"),
            },
            MaybeCompressing {
                fs_type: s("zfs"),
                pattern: s("zeros"),
            },
            DropCachesFailed {
                reason: s("EACCES"),
            },
            ColdReadNotCold {
                mode: s("buffered"),
                cached_bytes: 1 << 20,
                file_bytes: 1 << 24,
            },
            TotalBelowSize {
                file_bytes: 1 << 24,
                total_bytes: 1 << 20,
            },
        ]
    }

    /// The variant's name, for the kind table: its `Debug` form up to the data.
    fn variant(w: &Warning) -> String {
        let debug = format!("{w:?}");
        debug
            .split([' ', '{', '('])
            .next()
            .unwrap_or_default()
            .to_string()
    }

    /// The words a remedy may start with: each is something a person can do.
    const REMEDY_VERBS: &[&str] = &[
        "add", "check", "continue", "give", "leave", "lower", "mount", "put", "quote", "raise",
        "remove", "rerun", "restore", "run", "set", "test", "trust", "try", "turn", "use",
        "verify",
    ];

    #[test]
    fn every_warning_names_its_cause_and_a_remedy() {
        for w in every() {
            let (cause, remedy) = (w.cause(), w.remedy());
            assert!(!cause.is_empty(), "{w:?}");
            let verb = remedy.split_whitespace().next().unwrap_or("");
            assert!(
                REMEDY_VERBS.contains(&verb),
                "{}: remedy '{remedy}'",
                w.kind()
            );
            assert_eq!(w.to_string(), format!("{cause}: {remedy}"));
        }
    }

    #[test]
    fn kinds_are_unique_per_condition_and_stable() {
        let mut seen = std::collections::BTreeMap::new();
        for w in every() {
            let v = variant(&w);
            let before = seen.insert(w.kind().to_string(), v.clone());
            assert!(
                before.as_ref().is_none_or(|b| *b == v),
                "{} is the kind of {v} and {before:?}",
                w.kind()
            );
        }
        // Every variant is in `every` (Recorded aside): a kind for each condition.
        let variants: std::collections::BTreeSet<&String> = seen.values().collect();
        assert_eq!(variants.len(), 46, "{variants:?}");
        // The kinds are part of the JSON contract: this list changes only on purpose.
        let kinds: Vec<&str> = seen.keys().map(|k| k.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "align_runs_pooled",
                "budget",
                "buffered",
                "buffered_inflated_by_cache",
                "cleanup",
                "cold_read_not_cold",
                "command_without_results",
                "compressing_filesystem",
                "cpu_governor",
                "cut_last_line",
                "diff_recovered",
                "direct_unsupported",
                "drop_caches_failed",
                "file_smaller_than_ram",
                "guard_restored",
                "incomplete",
                "interrupted_run",
                "iodepth_ignored",
                "maybe_compressing_filesystem",
                "memory-filesystem",
                "memory_filesystem",
                "no_direct_io",
                "no_plot",
                "no_sysfs",
                "noisy_environment",
                "noisy_figure",
                "open_au_nr_from_run_order",
                "open_au_nr_unknown",
                "open_au_nr_unused",
                "out_of_space",
                "over_time_budget",
                "partial",
                "partition",
                "power_of_two_only",
                "rate_not_met",
                "read_only_bench",
                "realtime_refused",
                "skipped",
                "sparse_target",
                "stopped-early",
                "target_vanished",
                "torn_journal_tail",
                "total_below_file_size",
                "uneven_erase_blocks",
                "unmatched_figure",
                "untrusted-journal",
                "uring_unavailable",
                "verdict_within_noise",
            ]
        );
        for k in kinds {
            let snake = k.chars().all(|c| c.is_ascii_lowercase() || c == '_');
            let pinned = ["stopped-early", "untrusted-journal", "memory-filesystem"];
            assert!(snake || pinned.contains(&k), "{k}");
        }
    }

    #[test]
    fn json_is_kind_and_message_and_reads_back_as_the_same_warning() {
        for w in every() {
            let v = serde_json::to_value(&w).unwrap();
            assert_eq!(
                v,
                serde_json::json!({ "kind": w.kind(), "message": w.to_string() })
            );
            let back: Warning = serde_json::from_value(v).unwrap();
            assert_eq!(back, w);
            assert!(matches!(back, Warning::Recorded { .. }));
        }
        // A kind from a newer flashscope is kept, not refused.
        let newer: Warning =
            serde_json::from_str(r#"{"kind": "thermal_throttling", "message": "hot"}"#).unwrap();
        assert_eq!(newer.kind(), "thermal_throttling");
        assert_eq!(newer.to_string(), "hot");
        assert!(serde_json::from_str::<Warning>(r#"{"kind": "x"}"#).is_err());
    }
}
