//! The write-safety policy, once: every command that writes to a target goes through here.
//!
//! How a command uses it:
//! 1. flatten [`WriteFlags`] (`--write`, `--destructive`, `--journal`) into its arguments,
//!    and [`Budgets`] (`--write-budget`, `--time-budget`) where it takes them;
//! 2. describe what it will write in a [`WriteIntent`] (the region, the bytes, the time,
//!    one sentence, the budgets it resolved with [`Budgets`]);
//! 3. call [`open_for_write`]`(spec, &flags, &intent)`, which decides everything: the
//!    refusal without `--write`/`--destructive`, the mounted / held / read-only / swap /
//!    loop-backing-file refusals (in `device::open`), the journal's place and room, an
//!    unrestored or in-use journal for the same target, and that a `sim:` target is never
//!    journaled (`preserve.mode = "simulated"`). It prints the plan and returns a
//!    [`WriteSession`];
//! 4. run the test on `session.dev` through [`WriteSession::run`], or end a test that
//!    drives the device itself with [`WriteSession::conclude`] (bench's engine, which
//!    counts its own bytes: [`WriteSession::conclude_counted`]); the session restores and
//!    verifies in preserve mode, whatever the result, makes a signal's stop
//!    [`Verdict::Stopped`], and [`WriteSession::fill`] fills the document's `target`,
//!    `journal`, `preserve`, `bytes_written` and `elapsed_ns`.
//!
//! A command that writes only new files in a directory (verify DIR, bench DIR) calls
//! [`permit`] alone (or its first step, [`check_allowed`]): the same gate, no device
//! stack. A workload engine that still writes through descriptors of its own, past the
//! stack, claims its region with [`WriteSession::claim_region`] so preserve mode saves and
//! restores all of it; [`WriteIntent::workload`] describes such a run.
//!
//! The device stack is `Timed<TimeBudget<WriteBudget<Guarded>>>`, where `Guarded` is the
//! target in `Preserve` (default) or bare (`--destructive`, `sim:`). The budgets sit above
//! preserve mode, so restoring is never refused for want of budget; restored bytes are
//! counted apart.

use crate::backend::{Backend, TimeBudget, Timed, WriteBudget};
use crate::device::TargetInfo;
use crate::device::TargetSpec;
use crate::device::{self, OpenRequest, TargetKind};
use crate::journal::{self, Identity, Preserve, RestoreSummary};
use crate::report::Document;
use crate::signals;
use crate::vocab::error::Verdict;
use crate::vocab::units::{format_bytes, format_ns, short_size, Given};
use crate::vocab::Warning;
use crate::{Error, Result};
use std::io;
use std::path::PathBuf;

pub mod estimate;
pub mod plan;
pub use estimate::Rates;
pub use plan::{LivePlan, Measured, Metered};

/// The write policy's switches of a command that writes to a target (the CLI's
/// `--write`, `--destructive`, `--journal`, converted once at the edge).
#[derive(Debug, Clone, Default)]
pub struct WriteFlags {
    /// Allow the test to write (preserve mode on a block device or file).
    pub write: bool,
    /// Allow writing without saving: data in the written regions is lost (no journal).
    pub destructive: bool,
    /// Journal file for preserve mode (default: a new file in the user's state directory).
    pub journal: Option<PathBuf>,
    /// The caller printed the plan of this test already (`auto`'s plan): the session says
    /// one line for the step (with its journal) instead of describing it again.
    pub planned: bool,
    /// Where the session's notices go (the CLI prints them on stderr).
    pub notices: Notices,
}

impl WriteFlags {
    /// `--write` or `--destructive` was given.
    pub fn allowed(&self) -> bool {
        self.write || self.destructive
    }
}

/// What a write session (or a writing command) tells the user as it goes: the plan
/// before the first write, how the overwritten data is treated, a stop by a signal. The
/// text is [`Notice`]'s `Display`, one line each; the observer decides where it goes.
#[derive(Debug, Clone)]
pub enum Notice {
    /// A step `auto` planned, in preserve mode: one line with its journal.
    PlannedPreserve {
        command: &'static str,
        journal: PathBuf,
    },
    /// A step `auto` planned, on a simulated card or destructive.
    PlannedDirect {
        command: &'static str,
        simulated: bool,
    },
    /// The plan of a test, in words ([`WriteIntent::describe`]).
    Plan { command: &'static str, what: String },
    /// The plan worked out again from the device's own rates, once the run's first
    /// measurement had them, when it moved by more than the first plan's uncertainty:
    /// device ns and uncertainty of each ([`LivePlan::notice`]).
    Replanned {
        command: &'static str,
        /// What the first plan came before: "wrote", or "read" for a read-only run.
        before: &'static str,
        first: (u64, f64),
        now: (u64, f64),
        /// When it was worked out, device ns into the run (not said: `auto` reads it).
        at_ns: u64,
    },
    /// Preserve mode: up to `bytes` of `spec` are saved to `journal` first; saving and
    /// restoring take about `cost_ns` more ([`WriteIntent::preserve_ns`]); `None`: timed
    /// on the test's first writes and said then ([`WriteIntent::timed_first`]).
    Preserving {
        bytes: u64,
        cost_ns: Option<u64>,
        /// What the cost assumes ([`Rates::assumption`]).
        basis: String,
        spec: String,
        journal: PathBuf,
    },
    /// A `sim:` target: nothing saved or restored.
    Simulated,
    /// `--destructive`: nothing saved.
    Destructive,
    /// An earlier run's empty journal for `spec` was removed.
    RemovedEmptyJournal { spec: String, path: PathBuf },
    /// A signal stopped the test after `written` bytes; the saved regions were restored.
    StoppedBySignal {
        signal: i32,
        written: u64,
        restored: RestoreSummary,
    },
    /// No `--erase-size`: align measures it first.
    MeasuringEraseSize,
    /// bench on a directory stopped by a signal.
    BenchStopped,
    /// verify's write pass is done (`--pass write`): the state file to resume from.
    VerifyWritePassDone { state: PathBuf },
    /// verify stopped before the end (a budget): where, and the state to resume from.
    VerifyStoppedAt {
        done: u64,
        total: u64,
        phase: &'static str,
        state: PathBuf,
    },
    /// verify stopped in its write pass before reading anything back.
    VerifyCheckedNothing,
    /// verify on a directory stopped by a signal: what became of its files.
    VerifyDirStopped { files: &'static str },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::PlannedPreserve { command, journal } => write!(
                f,
                "flashscope {command}: running, as auto planned; journal {} (after a crash: flashscope restore {})",
                journal.display(),
                journal.display()
            ),
            Notice::PlannedDirect { command, simulated } => write!(
                f,
                "flashscope {command}: running, as auto planned{}",
                if *simulated {
                    ""
                } else {
                    " (destructive: the data in its region is not saved)"
                }
            ),
            Notice::Plan { command, what } => write!(f, "flashscope {command}: {what}"),
            Notice::Replanned {
                command,
                before,
                first,
                now,
                ..
            } => write!(
                f,
                "flashscope {command}: planned again from the device's own rates measured so far: {} in all (the plan before it {before} said {})",
                plan::plan_text(now.0, now.1),
                plan::plan_text(first.0, first.1)
            ),
            Notice::Preserving {
                bytes,
                cost_ns,
                basis,
                spec,
                journal,
            } => write!(
                f,
                "preserve mode: saving up to {} of {spec} to the journal {} before overwriting (saving and restoring {}); Ctrl-C stops after the current write, restores and exits 130 (SIGTERM: 143, SIGHUP from a closed terminal: 129). After a crash: flashscope restore {}",
                format_bytes(*bytes),
                journal.display(),
                match cost_ns {
                    Some(ns) => format!("add about {} {basis}", format_ns(*ns as f64)),
                    None => "are timed with the test's first writes, and said then".to_string(),
                },
                journal.display()
            ),
            Notice::Simulated => f.write_str(
                "simulated card: it lives in this process, so nothing is saved or restored (no journal)",
            ),
            Notice::Destructive => f.write_str(
                "destructive mode: the data in that region is NOT saved and will be lost",
            ),
            Notice::RemovedEmptyJournal { spec, path } => write!(
                f,
                "flashscope: removed {}: an earlier run on {spec} stopped before its first write, so it held nothing to restore",
                path.display()
            ),
            Notice::StoppedBySignal {
                signal,
                written,
                restored,
            } => write!(
                f,
                "flashscope: stopped by {} after {} written; restored and verified {} regions ({}); journal removed",
                signals::name(*signal),
                format_bytes(*written),
                restored.regions,
                format_bytes(restored.bytes)
            ),
            Notice::MeasuringEraseSize => f.write_str(
                "no --erase-size: measuring the erase block size with align (read-only)...",
            ),
            Notice::BenchStopped => {
                f.write_str("flashscope bench: stopped by a signal; its test file was removed")
            }
            Notice::VerifyWritePassDone { state } => write!(
                f,
                "write pass done; check it later with --pass read --resume (state in {})",
                state.display()
            ),
            Notice::VerifyStoppedAt {
                done,
                total,
                phase,
                state,
            } => write!(
                f,
                "verify stopped at {} of {} ({phase} phase); continue with --resume (state in {})",
                format_bytes(*done),
                format_bytes(*total),
                state.display()
            ),
            Notice::VerifyCheckedNothing => f.write_str(
                "verify checked nothing: it stopped during the write pass, before any byte was read back (raise --time-budget, or narrow --range)",
            ),
            Notice::VerifyDirStopped { files } => {
                write!(f, "flashscope verify: stopped by a signal; {files}")
            }
        }
    }
}

/// The observer of a session's [`Notice`]s: none (silent) unless the caller gives one.
#[derive(Clone, Default)]
pub struct Notices(Option<std::sync::Arc<Observer>>);

/// Something that takes a session's notices (the CLI prints them).
pub type Observer = dyn Fn(&Notice) + Send + Sync;

impl Notices {
    /// Notices go to `observer`.
    pub fn to(observer: impl Fn(&Notice) + Send + Sync + 'static) -> Self {
        Notices(Some(std::sync::Arc::new(observer)))
    }

    /// Tell the observer, if there is one, with the progress bar on screen cleared
    /// meanwhile (a notice said during a run is not drawn into the bar's line).
    pub fn say(&self, notice: Notice) {
        if let Some(o) = &self.0 {
            crate::report::progress::suspend(|| o(&notice));
        }
    }
}

impl std::fmt::Debug for Notices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Notices(observed)"
        } else {
            "Notices(none)"
        })
    }
}

/// The write and time budgets of a test, parsed once at the CLI edge.
#[derive(Debug, Clone, Default)]
pub struct Budgets {
    /// Stop once this much has been written (`--write-budget`, bytes).
    pub write: Option<Given<u64>>,
    /// Stop after this much device time (`--time-budget`, ns).
    pub time_ns: Option<u64>,
}

impl Budgets {
    /// `--write-budget` in bytes, if given: above 0 and at most the device's `size`.
    pub fn write_budget_bytes(&self, size: u64) -> Result<Option<u64>> {
        self.write
            .as_ref()
            .map(|g| {
                let (b, s) = (g.value, &g.text);
                if b == 0 {
                    return Err(Error::usage(format!(
                        "--write-budget {s}: must be above 0, e.g. 512M"
                    )));
                }
                if b > size {
                    return Err(Error::usage(format!(
                        "--write-budget {s} is more than the whole device ({}): give at most {}",
                        format_bytes(size),
                        short_size(size)
                    )));
                }
                Ok(b)
            })
            .transpose()
    }
}

/// What a test is about to write: shown before it starts and in the refusal without
/// `--write`, and the budgets its session enforces.
#[derive(Debug, Clone, Default)]
pub struct WriteIntent {
    pub command: &'static str,
    /// The region the test may write: (offset, length). Preserve mode saves at most this,
    /// and the journal must have room for it.
    pub region: (u64, u64),
    /// Bytes the test writes at most; `u64::MAX` for a test that writes for a set time
    /// (the bytes then depend on the device's speed).
    pub max_bytes: u64,
    /// Bytes it writes on a typical device, when less than the maximum.
    pub typical_bytes: Option<u64>,
    /// Rough duration of the test's own I/O at `rates` (preserve mode apart).
    pub estimated_ns: u64,
    /// The same with writes [`estimate::SLOW_WRITES`] times slower than `rates` assume:
    /// the plan's upper figure (0: not worked out, the same as `estimated_ns`).
    pub slow_ns: u64,
    /// The rates the estimates are worked out from: measured on the target before the
    /// plan is printed, or the fixed assumption (see [`estimate`]).
    pub rates: Rates,
    /// Bytes preserve mode typically saves and writes back, when the test knows them
    /// better than what it writes bounded by its region (open-au rewrites a few erase
    /// blocks many times); `None`: [`WriteIntent::preserve_bytes`]' rule.
    pub overwritten_bytes: Option<u64>,
    /// Bytes preserve mode reads to save, when more than it writes back (scattered
    /// writes make it save the whole windows around them); `None`: as many.
    pub saved_bytes: Option<u64>,
    /// Device time of the run's tests that write nothing (bench's read tests), said in
    /// the plan so that it adds up to the whole run.
    pub reads_ns: u64,
    /// Separate places the test overwrites (each is written back and verified with a
    /// command of its own); 0: one per 32 MiB.
    pub places: u64,
    /// The test times its first writes before it runs and says its measured figure then
    /// (random writes, whose cost only writing tells: [`estimate::WriteSample`]). Until
    /// then its time is bounds, `estimated_ns` (a flash page a write) to `slow_ns` (an
    /// erase block copied a write), never "about", and preserve mode's cost is not given.
    pub timed_first: bool,
    /// One sentence: what is written where.
    pub what: String,
    /// How to make the test write less, offered when the journal has no room for the
    /// region, e.g. "lower --write-budget".
    pub smaller: &'static str,
    /// The session's write cap (`WriteBudget`): usually `--write-budget`
    /// ([`Budgets::write_budget_bytes`]); a test may set its own (slc: its budget plus the
    /// recovery write). `None`: counted, not capped.
    pub budget_bytes: Option<u64>,
    /// The session's time cap (`TimeBudget`), in device time: usually `--time-budget`.
    /// Reads and writes after it fail with a "time budget reached" error the test turns
    /// into a `stopped-early` warning. `None` for a test that keeps its own deadline
    /// because it must do I/O after it (probe puts its guard regions back).
    pub time_budget_ns: Option<u64>,
}

impl WriteIntent {
    /// A workload that writes inside `region` for about `estimated_ns` (at any queue
    /// depth): how many bytes depends on the device's speed (io, bench).
    pub fn workload(
        command: &'static str,
        region: (u64, u64),
        estimated_ns: u64,
        what: String,
        smaller: &'static str,
    ) -> Self {
        WriteIntent {
            command,
            region,
            max_bytes: u64::MAX,
            estimated_ns,
            what,
            smaller,
            ..WriteIntent::default()
        }
    }

    /// Bytes preserve mode saves and writes back: what the test typically writes, at
    /// most its region (a test that writes for a time may write all of its region).
    pub fn preserve_bytes(&self) -> u64 {
        self.overwritten_bytes
            .unwrap_or_else(|| self.typical_bytes.unwrap_or(self.max_bytes))
            .min(self.region.1)
    }

    /// Preserve mode's time on top of [`WriteIntent::estimated_ns`], at the same rates:
    /// saving reads what the test overwrites (and appends it to the journal), restoring
    /// writes it back and reads it again to verify ([`Rates::preserve_ns`]).
    pub fn preserve_ns(&self) -> u64 {
        self.preserve_at(&self.rates)
    }

    /// [`WriteIntent::preserve_ns`] with writes [`estimate::SLOW_WRITES`] times slower.
    pub fn preserve_slow_ns(&self) -> u64 {
        self.preserve_at(&self.rates.slower_writes(estimate::SLOW_WRITES))
    }

    fn preserve_at(&self, rates: &Rates) -> u64 {
        let bytes = self.preserve_bytes();
        let saved = self.saved_bytes.unwrap_or(0).max(bytes).min(self.region.1);
        let places = self.places.max(bytes.div_ceil(32 << 20)).max(1);
        rates.preserve_ns(saved, bytes, places)
    }

    /// The plan's upper figure of the test's own I/O ([`WriteIntent::slow_ns`]).
    pub fn slow_or_estimated_ns(&self) -> u64 {
        self.slow_ns.max(self.estimated_ns)
    }

    /// "about 12 s (up to 41 s if ...) at the 180 MiB/s its reads ran ...": the test's
    /// time as a range and what it assumes.
    pub fn time_text(&self) -> String {
        if self.timed_first {
            return format!(
                "{} {}; its first writes are timed before it runs, for a measured figure",
                estimate::bounds_text(self.estimated_ns, self.slow_or_estimated_ns()),
                self.rates.assumption()
            );
        }
        format!(
            "{} {}",
            estimate::range_text(self.estimated_ns, self.slow_or_estimated_ns()),
            self.rates.assumption()
        )
    }

    /// The plan in words, for the refusal and the banner.
    pub fn describe(&self) -> String {
        let typical = match self.typical_bytes {
            Some(t) if t < self.max_bytes => format!(" (typically {})", format_bytes(t)),
            _ => String::new(),
        };
        if self.max_bytes == u64::MAX {
            let reads = if self.reads_ns > 0 {
                format!(
                    "; its read tests take about {} more",
                    format_ns(self.reads_ns as f64)
                )
            } else {
                String::new()
            };
            return format!(
                "{}; it writes for about {} (how many bytes depends on the device's speed) inside {} at offset {}{reads}",
                self.what,
                format_ns(self.estimated_ns as f64),
                format_bytes(self.region.1),
                self.region.0
            );
        }
        format!(
            "{}; it writes up to {}{typical} inside {} at offset {}, taking {}",
            self.what,
            format_bytes(self.max_bytes),
            format_bytes(self.region.1),
            self.region.0,
            self.time_text()
        )
    }
}

/// How the data a test overwrites is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Saved to a journal before it is overwritten, restored and verified afterwards.
    Preserve,
    /// Not saved (`--destructive`).
    Destructive,
    /// A `sim:` card: it lives in this process, so nothing is saved or restored.
    Simulated,
    /// A directory: only new files are written there (and removed afterwards).
    Directory,
}

impl WriteMode {
    /// The JSON name (`preserve.mode`).
    pub fn name(self) -> &'static str {
        match self {
            WriteMode::Preserve => "preserve",
            WriteMode::Destructive => "destructive",
            WriteMode::Simulated => "simulated",
            WriteMode::Directory => "directory",
        }
    }
}

/// The policy's decision for one command on one target.
#[derive(Debug, Clone)]
pub struct Permit {
    pub kind: TargetKind,
    pub mode: WriteMode,
    /// The journal to create (preserve mode only): checked not to be on the target and
    /// not to exist yet.
    pub journal: Option<PathBuf>,
}

/// The gate alone: without `--write` or `--destructive`, explain `plan` (what the test
/// would write) and refuse (exit 2). [`permit`] starts with it; a command that must refuse
/// before it can describe its plan in full (e.g. before measuring a size) calls it first.
pub fn check_allowed(spec: &TargetSpec, flags: &WriteFlags, plan: &str) -> Result<()> {
    if flags.allowed() {
        return Ok(());
    }
    let how = match spec.kind() {
        TargetKind::Block | TargetKind::File => {
            "Rerun with --write to allow it (data in the regions is saved and restored), or --destructive to skip the backup"
        }
        TargetKind::Sim => {
            "Rerun with --write to allow it (a simulated card: nothing to save or restore)"
        }
        TargetKind::Directory => "Rerun with --write to allow it (only new files are written there)",
    };
    Err(Error::Refused(format!(
        "this test writes to '{spec}': {plan}. Nothing was written. {how}"
    )))
}

impl WriteMode {
    /// The one decision of how a test treats the data it overwrites, from the target and
    /// the flags alone (issue 44.10): every command asks this, before it plans, and none
    /// works it out again. A `sim:` card lives in this process, so a journal could never
    /// be restored onto it; a directory gets only new files; a device or a file is
    /// preserved unless `--destructive`.
    pub fn of(spec: &TargetSpec, flags: &WriteFlags) -> WriteMode {
        match spec.kind() {
            TargetKind::Sim => WriteMode::Simulated,
            TargetKind::Directory => WriteMode::Directory,
            TargetKind::Block | TargetKind::File if flags.destructive => WriteMode::Destructive,
            TargetKind::Block | TargetKind::File => WriteMode::Preserve,
        }
    }

    /// Whether a journal saves what the test overwrites.
    pub fn journaled(self) -> bool {
        self == WriteMode::Preserve
    }
}

/// The policy's decision for a test that writes, before it plans: the `--write` gate
/// (`plan` says what the test would write), the mode ([`WriteMode::of`]) and a
/// `--journal` that mode has no use for refused. Refusals exit 2 and say that nothing was
/// written. [`permit`] adds the journal's place.
pub fn decide(spec: &TargetSpec, flags: &WriteFlags, plan: &str) -> Result<WriteMode> {
    check_allowed(spec, flags, plan)?;
    mode_for(spec, flags)
}

/// [`decide`] once the test is known to be allowed to write: the mode, and a `--journal`
/// it has no use for refused.
pub fn mode_for(spec: &TargetSpec, flags: &WriteFlags) -> Result<WriteMode> {
    let mode = WriteMode::of(spec, flags);
    match (mode, &flags.journal) {
        (WriteMode::Preserve, _) | (_, None) => Ok(mode),
        (WriteMode::Simulated, Some(_)) => Err(Error::usage(format!(
            "--journal: {spec} is a simulated card in this process, so nothing is saved or journaled: drop --journal"
        ))),
        (WriteMode::Directory, Some(_)) => Err(Error::usage(format!(
            "--journal: {spec} is a directory, where only new files are written, so nothing is saved or journaled: drop --journal"
        ))),
        (WriteMode::Destructive, Some(_)) => Err(Error::usage(
            "--journal has no effect with --destructive (nothing is saved): drop one of them",
        )),
    }
}

/// The policy's gate, without opening the target: [`decide`], and in preserve mode the
/// journal's place.
pub fn permit(spec: &TargetSpec, flags: &WriteFlags, intent: &WriteIntent) -> Result<Permit> {
    let kind = spec.kind();
    let mode = decide(spec, flags, &intent.describe())?;
    let journal = match mode {
        WriteMode::Preserve => {
            let p = match &flags.journal {
                Some(p) => p.clone(),
                None => journal::default_path(intent.command)?,
            };
            journal::check_location(&p, spec)?;
            Some(p)
        }
        _ => None,
    };
    Ok(Permit {
        kind,
        mode,
        journal,
    })
}

/// The target, bare or in preserve mode.
// One per session, reached on every I/O: boxing the larger variant would only add an
// indirection there.
#[allow(clippy::large_enum_variant)]
pub enum Guarded {
    Preserve(Preserve<Box<dyn Backend>>),
    Direct(Box<dyn Backend>),
}

macro_rules! guarded {
    ($self:ident, $b:ident => $e:expr) => {
        match $self {
            Guarded::Preserve($b) => $e,
            Guarded::Direct($b) => $e,
        }
    };
}

impl Backend for Guarded {
    fn size_bytes(&self) -> u64 {
        guarded!(self, b => b.size_bytes())
    }
    fn logical_sector_bytes(&self) -> u32 {
        guarded!(self, b => b.logical_sector_bytes())
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        guarded!(self, b => b.read_at(buf, offset))
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        guarded!(self, b => b.write_at(buf, offset))
    }
    fn flush(&mut self) -> io::Result<()> {
        guarded!(self, b => b.flush())
    }
    fn discard(&mut self, offset: u64, len: u64) -> io::Result<()> {
        guarded!(self, b => b.discard(offset, len))
    }
    fn clock_ns(&self) -> u64 {
        guarded!(self, b => b.clock_ns())
    }
    fn idle(&mut self, ns: u64) {
        guarded!(self, b => b.idle(ns))
    }
    fn prepare_write(&mut self, offset: u64, len: u64) -> io::Result<()> {
        guarded!(self, b => b.prepare_write(offset, len))
    }
    fn queued(&mut self, outstanding: usize) {
        guarded!(self, b => b.queued(outstanding))
    }
    fn claim_writes(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
        guarded!(self, b => b.claim_writes(regions))
    }
    fn fast_queue(
        &self,
        depth: usize,
        buffers: usize,
        buffer_len: usize,
    ) -> Option<Box<dyn crate::backend::queue::IoQueue>> {
        guarded!(self, b => b.fast_queue(depth, buffers, buffer_len))
    }
}

/// The device stack a write test runs on.
pub type SessionDevice = Timed<TimeBudget<WriteBudget<Guarded>>>;

/// A running write test: the device stack and what is needed to end it safely.
pub struct WriteSession {
    pub dev: SessionDevice,
    pub info: TargetInfo,
    pub warnings: Vec<Warning>,
    pub mode: WriteMode,
    /// The journal (preserve mode).
    pub journal: Option<PathBuf>,
    pub t0: u64,
    /// Where the session's notices go (from [`WriteFlags::notices`]).
    pub notices: Notices,
}

/// Decide, open and print the plan: the one entry of the write-safety policy (see the
/// module's documentation). Nothing is written before it returns.
pub fn open_for_write(
    spec: &TargetSpec,
    flags: &WriteFlags,
    intent: &WriteIntent,
) -> Result<WriteSession> {
    let permit = permit(spec, flags, intent)?;
    if permit.mode == WriteMode::Directory {
        return Err(Error::usage(format!(
            "target '{spec}' is a directory: raw tests need a block device or a file (for a mounted filesystem use `flashscope fs ... {spec}`)"
        )));
    }
    let t0 = crate::backend::monotonic_ns();
    let opened = device::open(spec, &OpenRequest::read_write())?;
    let info = opened.info.clone();
    let warnings = opened.warnings.clone();
    let save = intent.region.1;
    let guarded = match &permit.journal {
        Some(path) => {
            let identity = Identity::of(spec, &opened, intent.command);
            check_leftovers(spec, &identity, &flags.notices)?;
            journal::check_space(path, save).map_err(|e| {
                Error::Refused(format!("{e}, or {}; nothing was written", intent.smaller))
            })?;
            let say = &flags.notices;
            if flags.planned {
                say.say(Notice::PlannedPreserve {
                    command: intent.command,
                    journal: path.clone(),
                });
            } else {
                say.say(Notice::Plan {
                    command: intent.command,
                    what: intent.describe(),
                });
                say.say(Notice::Preserving {
                    bytes: save,
                    cost_ns: (!intent.timed_first).then(|| intent.preserve_ns()),
                    basis: if intent.rates.measured {
                        "at the rates above".to_string()
                    } else {
                        intent.rates.assumption()
                    },
                    spec: spec.to_string(),
                    journal: path.clone(),
                });
            }
            // Record Ctrl-C from before the journal exists, so no signal can leave it empty.
            signals::install(signals::Second::Record);
            let command = intent.command;
            let p = Preserve::new(opened.backend, path, &identity)?
                .with_stop_check(Box::new(signals::pending))
                .with_progress(Box::new(move |step| {
                    // Saving's total is the region the test may write: what it can save.
                    let step = step.map(|(phase, done, total)| {
                        let total = if total == 0 { save.max(done) } else { total };
                        (phase, done, total)
                    });
                    crate::report::progress::overlay(command, step)
                }));
            Guarded::Preserve(p)
        }
        None => {
            let say = &flags.notices;
            let simulated = permit.mode == WriteMode::Simulated;
            if flags.planned {
                say.say(Notice::PlannedDirect {
                    command: intent.command,
                    simulated,
                });
            } else {
                say.say(Notice::Plan {
                    command: intent.command,
                    what: intent.describe(),
                });
                say.say(if simulated {
                    Notice::Simulated
                } else {
                    Notice::Destructive
                });
            }
            Guarded::Direct(opened.backend)
        }
    };
    let budgeted = WriteBudget::new(guarded, intent.budget_bytes);
    Ok(WriteSession {
        dev: Timed::new(TimeBudget::new(budgeted, intent.time_budget_ns)),
        info,
        warnings,
        mode: permit.mode,
        journal: permit.journal,
        t0,
        notices: flags.notices.clone(),
    })
}

/// Refuse while an earlier run's journal for the same target is unrestored or in use;
/// remove the empty ones (their run stopped before its first overwrite).
fn check_leftovers(spec: &TargetSpec, identity: &Identity, notices: &Notices) -> Result<()> {
    let leftovers = journal::clear_leftovers(identity);
    for p in &leftovers.removed_empty {
        notices.say(Notice::RemovedEmptyJournal {
            spec: spec.to_string(),
            path: p.clone(),
        });
    }
    if let Some(busy) = leftovers.in_use.first() {
        return Err(Error::Refused(format!(
            "another flashscope test is writing to {spec} now (its journal {} is in use): wait for it to finish, then rerun; nothing was written",
            busy.display()
        )));
    }
    if let Some(first) = leftovers.unrestored.first() {
        return Err(Error::Refused(format!(
            "an unrestored journal for {spec} exists: {} (a test was interrupted by a crash or power loss). Run `flashscope restore {}` first; nothing was written",
            first.display(),
            first.display()
        )));
    }
    Ok(())
}

/// How a write test ended.
#[derive(Debug, Clone, Default)]
pub struct Ending {
    /// The signal that stopped it (the regions were restored).
    pub interrupted: Option<i32>,
    pub restored: Option<RestoreSummary>,
    pub bytes_saved: u64,
    pub test_bytes_written: u64,
    /// Preserve mode: bytes written back that read back different from the journal
    /// (offset, length), the journal kept. Only [`WriteSession::conclude_finding`] lets a
    /// run end with some; every other ending makes them its error.
    pub unrestored: Vec<(u64, u64)>,
}

/// What a write test came to (see [`WriteSession::run`]).
// Made once per command and taken apart at once: boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Ran<T> {
    /// It finished: its samples, and how the session ended (for [`WriteSession::fill`]).
    Done(T, Ending),
    /// A signal stopped it after the regions were restored ([`Verdict::Stopped`]), and how
    /// the session ended (bench still reports the figures measured until the signal).
    Stopped(Verdict, Ending),
}

/// A run may take this share more than its `--time-budget` before it is called over: a
/// budget stops I/O only between operations, and the last one ends after it.
pub const TIME_BUDGET_SLACK: f64 = 0.05;

/// A run's device time against its `--time-budget`, for the document's `time_budget`
/// field and the warning when the run went clearly over it (more than
/// [`TIME_BUDGET_SLACK`]). `None` without a budget.
pub fn time_budget_use(
    budget_ns: Option<u64>,
    used_ns: u64,
) -> Option<(crate::report::results::TimeBudgetUse, Option<Warning>)> {
    let budget_ns = budget_ns?;
    let over = used_ns as f64 > budget_ns as f64 * (1.0 + TIME_BUDGET_SLACK);
    Some((
        crate::report::results::TimeBudgetUse {
            budget_ns,
            used_ns,
            over,
        },
        over.then_some(Warning::OverTimeBudget { budget_ns, used_ns }),
    ))
}

/// The warning for a test that stopped before its plan was done (budget or time).
pub fn stopped_early(why: &str) -> Warning {
    Warning::StoppedEarly {
        why: why.to_string(),
    }
}

impl WriteSession {
    /// Bytes the test wrote to the device so far (restores not counted).
    pub fn test_bytes_written(&self) -> u64 {
        self.dev.inner().inner().bytes_written
    }

    /// For a test that writes `[offset, offset+len)` through descriptors of its own, past
    /// the session's stack: in preserve mode the region is saved now, whole, and restored
    /// whole at the end. Prefer writing through `dev`, which saves only what is written.
    pub fn claim_region(&mut self, offset: u64, len: u64) -> io::Result<()> {
        match self.dev.inner_mut().inner_mut().inner_mut() {
            Guarded::Preserve(p) => p.save_claimed(offset, len),
            Guarded::Direct(_) => Ok(()),
        }
    }

    /// Whether the target is the simulated card (never journaled).
    pub fn simulated(&self) -> bool {
        self.mode == WriteMode::Simulated
    }

    /// Run `test` with a progress line on stderr, end the session (restoring and verifying
    /// in preserve mode, whatever the result) and start the `command` document.
    pub fn run<T>(
        &mut self,
        command: &str,
        test: impl FnOnce(&mut SessionDevice, &mut dyn FnMut(u64, u64)) -> io::Result<T>,
    ) -> Result<Ran<T>> {
        let mut progress = crate::report::progress::Progress::new(command);
        let result = test(&mut self.dev, &mut |d, t| progress.update(d, t));
        self.conclude_shown(result, None, &mut progress)
    }

    /// End a test that ran beside the session's stack as [`WriteSession::run`] ends one:
    /// bench's workload engine writes through descriptors of its own and counts the bytes
    /// (`written`, what the document and the stop notice say were written), and its bar
    /// (`progress`) stays over the restore and its verification, then is cleared.
    pub fn conclude_counted<T>(
        &mut self,
        result: io::Result<T>,
        written: u64,
        progress: &mut crate::report::progress::Progress,
    ) -> Result<Ran<T>> {
        self.conclude_shown(result, Some(written), progress)
    }

    /// End the session under the test's bar, which is cleared before the ending is said.
    fn conclude_shown<T>(
        &mut self,
        result: io::Result<T>,
        written: Option<u64>,
        progress: &mut crate::report::progress::Progress,
    ) -> Result<Ran<T>> {
        // The restore and its verification show over the test's bar, then it is cleared.
        let ended = self.end(result).map(|(value, mut ending)| {
            if let Some(w) = written {
                ending.test_bytes_written = w;
            }
            (value, ending)
        });
        progress.finish();
        self.settle(ended)
    }

    /// End the session with the test's `result` ([`WriteSession::end`]) and say what it
    /// came to: its value and the ending, or the verdict of the signal that stopped it.
    pub fn conclude<T>(&mut self, result: io::Result<T>) -> Result<Ran<T>> {
        let ended = self.end(result);
        self.settle(ended)
    }

    /// [`WriteSession::conclude`] for a test whose finding is about the target's data
    /// (verify): bytes the restore wrote back that do not read back as saved are part of
    /// that finding ([`Ending::unrestored`]), not an error that hides it.
    pub fn conclude_finding<T>(&mut self, result: io::Result<T>) -> Result<Ran<T>> {
        let ended = self.end(result);
        match ended {
            Ok((Some(value), ending)) => Ok(Ran::Done(value, ending)),
            other => self.settle(other),
        }
    }

    /// What an ended session came to (see [`WriteSession::conclude`]).
    fn settle<T>(&mut self, ended: Result<(Option<T>, Ending)>) -> Result<Ran<T>> {
        let (value, ending) = ended?;
        if !ending.unrestored.is_empty() {
            return Err(Error::runtime(
                self.unrestored_text(&ending, "restoring failed: "),
            ));
        }
        let Some(value) = value else {
            let sig = ending.interrupted.unwrap_or(libc::SIGINT);
            return Ok(Ran::Stopped(self.stopped_by_signal(&ending, sig), ending));
        };
        Ok(Ran::Done(value, ending))
    }

    /// What the restore could not put back, as the error or the finding says it: the
    /// bytes by offset and the journal kept.
    pub fn unrestored_text(&self, ending: &Ending, lead: &str) -> String {
        let bytes: u64 = ending.unrestored.iter().map(|r| r.1).sum();
        let journal = self
            .journal
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_string());
        format!(
            "{lead}{} written back read back different from the journal ({}): {} does not hold them. The journal is kept at {journal} (what those bytes held before): `flashscope restore {journal}` writes them again; remove it once you no longer need it",
            format_bytes(bytes),
            journal::describe_unrestored(&ending.unrestored),
            self.info.spec
        )
    }

    /// End the test: restore and verify (preserve mode), whatever the probe's result.
    /// Returns the probe's value, or `None` when a signal stopped it; an I/O error of the
    /// probe or a failed restore becomes the error (exit 1), naming the journal if kept.
    fn end<T>(&mut self, result: io::Result<T>) -> Result<(Option<T>, Ending)> {
        let mut ending = Ending {
            test_bytes_written: self.test_bytes_written(),
            ..Ending::default()
        };
        let mut failure = None;
        let restore = match self.dev.inner_mut().inner_mut().inner_mut() {
            Guarded::Preserve(p) => {
                ending.bytes_saved = p.bytes_saved();
                failure = p.failure().map(str::to_string);
                let finished = p.finish();
                ending.unrestored = p.unrestored().to_vec();
                Some(finished)
            }
            Guarded::Direct(b) => {
                let _ = b.flush();
                None
            }
        };
        let restore_note = match &restore {
            Some(Ok(_)) if !ending.unrestored.is_empty() => format!(
                "; {}",
                self.unrestored_text(&ending, "every saved region was written back, but ")
            ),
            Some(Ok(s)) => format!(
                "; every saved region ({} in {} regions) was restored and verified",
                format_bytes(s.bytes),
                s.regions
            ),
            _ => String::new(),
        };
        match restore {
            Some(Ok(s)) => ending.restored = Some(s),
            Some(Err(e)) => {
                let what = match (&failure, &result) {
                    (Some(f), _) => format!("the test stopped ({f}) and "),
                    (None, Err(p)) => format!("the test failed ({p}) and "),
                    (None, Ok(_)) => String::new(),
                };
                return Err(Error::runtime(format!("{what}restoring failed: {e}")));
            }
            None => {}
        }
        // A journal or target write error ends the test with no result, whatever the
        // test made of the failed I/O (it may have counted it as a finding).
        if let Some(f) = failure {
            return Err(Error::runtime(format!(
                "{f}. The test stopped there and gives no result{restore_note}"
            )));
        }
        match result {
            Ok(v) => {
                if let Some(sig) = signals::pending().filter(|_| self.journal.is_some()) {
                    ending.interrupted = Some(sig);
                    return Ok((None, ending));
                }
                Ok((Some(v), ending))
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                ending.interrupted = signals::pending().or(Some(libc::SIGINT));
                Ok((None, ending))
            }
            Err(e) => Err(Error::io(
                format!(
                    "writing to {} after {}{restore_note}",
                    self.info.spec,
                    format_bytes(ending.test_bytes_written)
                ),
                e,
            )),
        }
    }

    /// Fill the document's common fields: target, warnings, journal, bytes written, and
    /// `elapsed_ns` as the session's wall time (saving and restoring in it); the commands
    /// whose `elapsed_ns` is the device time of their own I/O (bench, probe, verify, io:
    /// `report::html::Elapsed`) set it again after this.
    pub fn fill(&self, doc: &mut Document, ending: &Ending) {
        doc.target = crate::report::Target::from(&self.info);
        doc.warnings.extend(self.warnings.iter().cloned());
        let restored = ending.restored.map(|r| r.bytes).unwrap_or(0);
        doc.bytes_written = ending.test_bytes_written + restored;
        doc.session = Some(crate::report::WriteRecord {
            journal: self.journal.as_ref().map(|p| p.display().to_string()),
            preserve: crate::report::results::PreserveRecord {
                mode: self.mode.name().to_string(),
                bytes_saved: ending.bytes_saved,
                test_bytes_written: ending.test_bytes_written,
                restore_bytes_written: restored,
                regions_restored: ending.restored.map(|r| r.regions).unwrap_or(0),
                regions_verified: ending.restored.map(|r| r.verified).unwrap_or(0),
                journal_removed: ending.restored.is_some() && ending.unrestored.is_empty(),
                unrestored: ending
                    .unrestored
                    .iter()
                    .map(|&(offset, length)| crate::report::results::ByteRange { offset, length })
                    .collect(),
            },
            time_budget: None,
        });
        doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(self.t0);
    }

    /// The verdict and message for a run a signal stopped.
    pub fn stopped_by_signal(&self, ending: &Ending, sig: i32) -> Verdict {
        self.notices.say(Notice::StoppedBySignal {
            signal: sig,
            written: ending.test_bytes_written,
            restored: ending.restored.unwrap_or_default(),
        });
        Verdict::Stopped { signal: sig }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent() -> WriteIntent {
        WriteIntent {
            command: "test",
            region: (0, 1 << 20),
            max_bytes: 1 << 20,
            what: "test writes 1 MiB".into(),
            ..WriteIntent::default()
        }
    }

    fn flags(write: bool, destructive: bool, journal: Option<&str>) -> WriteFlags {
        WriteFlags {
            write,
            destructive,
            journal: journal.map(PathBuf::from),
            ..WriteFlags::default()
        }
    }

    #[test]
    fn a_run_clearly_over_its_time_budget_is_named() {
        assert!(time_budget_use(None, 99).is_none());
        let (field, over) = time_budget_use(Some(17_000_000_000), 17_800_000_000).unwrap();
        assert!(!field.over, "within the slack of one last operation");
        assert!(over.is_none());
        let (field, over) = time_budget_use(Some(17_000_000_000), 98_863_300_495).unwrap();
        assert_eq!(field.budget_ns, 17_000_000_000u64);
        assert_eq!(field.used_ns, 98_863_300_495u64);
        assert!(field.over);
        let w = over.unwrap();
        assert_eq!(w.kind(), "over_time_budget");
        assert!(
            w.to_string().contains("98.9 s") && w.to_string().contains("17 s"),
            "{w}"
        );
    }

    #[test]
    fn without_write_nothing_is_permitted_and_the_plan_is_explained() {
        let e = permit(
            &crate::device::test_spec("sim:sd-16g"),
            &flags(false, false, None),
            &intent(),
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let msg = e.to_string();
        assert!(msg.contains("test writes 1 MiB") && msg.contains("Nothing was written"));
    }

    #[test]
    fn a_sim_card_is_never_journaled() {
        for f in [flags(true, false, None), flags(false, true, None)] {
            let p = permit(&crate::device::test_spec("sim:sd-16g"), &f, &intent()).unwrap();
            assert_eq!(p.mode, WriteMode::Simulated);
            assert!(p.journal.is_none());
        }
        let e = permit(
            &crate::device::test_spec("sim:sd-16g"),
            &flags(true, false, Some("/tmp/j")),
            &intent(),
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let s = open_for_write(
            &crate::device::test_spec("sim:sd-16g"),
            &flags(true, false, None),
            &intent(),
        )
        .unwrap();
        assert_eq!(s.mode, WriteMode::Simulated);
        assert!(s.journal.is_none());
    }

    #[test]
    fn files_are_preserved_unless_destructive_and_directories_take_no_journal() {
        let d = tempfile::tempdir().unwrap();
        let img = d.path().join("img");
        std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
        let spec = img.to_str().unwrap();
        let j = d.path().join("j.fsjournal");
        let p = permit(
            &crate::device::test_spec(spec),
            &flags(true, false, j.to_str()),
            &intent(),
        )
        .unwrap();
        assert_eq!((p.kind, p.mode), (TargetKind::File, WriteMode::Preserve));
        assert_eq!(p.journal.as_deref(), Some(j.as_path()));
        let p = permit(
            &crate::device::test_spec(spec),
            &flags(true, true, None),
            &intent(),
        )
        .unwrap();
        assert_eq!(p.mode, WriteMode::Destructive);
        let e = permit(
            &crate::device::test_spec(spec),
            &flags(false, true, j.to_str()),
            &intent(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("--journal has no effect"), "{e}");
        let dir = d.path().to_str().unwrap();
        let p = permit(
            &crate::device::test_spec(dir),
            &flags(true, false, None),
            &intent(),
        )
        .unwrap();
        assert_eq!(p.mode, WriteMode::Directory);
        assert!(permit(
            &crate::device::test_spec(dir),
            &flags(true, false, j.to_str()),
            &intent()
        )
        .is_err());
    }
}
