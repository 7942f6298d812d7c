//! The safety harness every writing test runs in: the `--write` gate, preserve mode (the
//! journal, Ctrl-C, restore and verify), budgets, and the plan printed before starting.
//!
//! Backends stack as `Timed<WriteBudget<Guarded>>`, where `Guarded` is the target wrapped
//! in `Preserve` (default) or bare (`--destructive`). The budget sits above preserve mode,
//! so restoring is never refused for want of budget; restored bytes are counted apart.

use crate::backend::{Backend, Timed, WriteBudget};
use crate::journal::{self, signals, Identity, Preserve, RestoreSummary};
use crate::report::{Document, TargetInfo, Warning};
use crate::target::{self, OpenRequest};
use crate::units::{format_bytes, format_ns, parse_duration_ns, parse_size, short_size};
use crate::{Error, Result};
use std::io;
use std::path::PathBuf;

/// Flags shared by the writing tests.
#[derive(Debug, Clone, clap::Args)]
pub struct WriteFlags {
    /// Allow the test to write. Each region is saved to a journal first and restored and
    /// verified afterwards (preserve mode).
    #[arg(long)]
    pub write: bool,
    /// Allow writing without saving: data in the written regions is lost (no journal).
    #[arg(long)]
    pub destructive: bool,
    /// Journal file for preserve mode [default: a new file under
    /// $XDG_STATE_HOME/flashscope/ or ~/.local/state/flashscope/]. Must not be on the target.
    #[arg(long, value_name = "PATH")]
    pub journal: Option<PathBuf>,
    /// Stop once this much has been written (e.g. 512M, 4G); results so far are analysed.
    #[arg(long, value_name = "SIZE", value_parser = crate::units::size_arg)]
    pub write_budget: Option<String>,
    /// Stop after this much device time (e.g. 600s); results so far are analysed.
    #[arg(long, value_name = "DURATION", value_parser = crate::units::duration_arg)]
    pub time_budget: Option<String>,
}

impl WriteFlags {
    /// `--write-budget` in bytes, if given: above 0 and at most the device's `size`.
    pub fn write_budget_bytes(&self, size: u64) -> Result<Option<u64>> {
        self.write_budget
            .as_deref()
            .map(|s| {
                let b = parse_size(s).map_err(|e| Error::usage(format!("--write-budget: {e}")))?;
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

    /// `--time-budget` in ns, if given.
    pub fn time_budget_ns(&self) -> Result<Option<u64>> {
        self.time_budget
            .as_deref()
            .map(parse_duration_ns)
            .transpose()
    }
}

/// What a test is about to do, shown before it starts and in the refusal without `--write`.
#[derive(Debug, Clone)]
pub struct WritePlan {
    pub command: &'static str,
    /// The region the test may write: (offset, length). Preserve mode saves at most this.
    pub region: (u64, u64),
    /// Bytes the test writes at most; `u64::MAX` for a test that writes for a set time
    /// (the bytes then depend on the device's speed).
    pub max_bytes: u64,
    /// Bytes it writes on a typical device, when less than the maximum.
    pub typical_bytes: Option<u64>,
    /// Rough duration on a 10 MiB/s card.
    pub estimated_ns: u64,
    /// One sentence: what is written where.
    pub what: String,
    /// How to make the test write less, offered when the journal has no room for the
    /// region, e.g. "lower --write-budget".
    pub smaller: &'static str,
}

/// Rough time to write `bytes` in `ops` operations on a 10 MiB/s card with 1 ms commands.
pub fn estimate_ns(bytes: u64, ops: u64) -> u64 {
    (bytes as f64 / (10.0 * 1048576.0) * 1e9) as u64 + ops.saturating_mul(1_000_000)
}

impl WritePlan {
    /// The plan in words, for the refusal and the banner.
    pub fn describe(&self) -> String {
        let typical = match self.typical_bytes {
            Some(t) if t < self.max_bytes => format!(" (typically {})", format_bytes(t)),
            _ => String::new(),
        };
        if self.max_bytes == u64::MAX {
            return format!(
                "{}; it writes for about {} (how many bytes depends on the device's speed) inside {} at offset {}",
                self.what,
                format_ns(self.estimated_ns as f64),
                format_bytes(self.region.1),
                self.region.0
            );
        }
        format!(
            "{}; it writes up to {}{typical} inside {} at offset {}, taking about {} on a 10 MiB/s card",
            self.what,
            format_bytes(self.max_bytes),
            format_bytes(self.region.1),
            self.region.0,
            format_ns(self.estimated_ns as f64)
        )
    }
}

/// The target, bare or in preserve mode.
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

/// A running write test: the device stack and what is needed to end it safely.
pub struct WriteSession {
    pub dev: Timed<WriteBudget<Guarded>>,
    pub info: TargetInfo,
    pub warnings: Vec<Warning>,
    pub journal: Option<PathBuf>,
    /// A `sim:` target: written directly, never journaled.
    pub simulated: bool,
    pub t0: u64,
}

/// Open `spec` read-only to learn its size and sector before planning (no I/O).
pub fn peek(spec: &str) -> Result<TargetInfo> {
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    Ok(target::open(spec, &req)?.info)
}

/// Check permission, place the journal, open the target for writing and print the plan.
/// `budget` caps the test's writes (`WriteBudget`).
pub fn begin(
    spec: &str,
    flags: &WriteFlags,
    plan: &WritePlan,
    budget: Option<u64>,
) -> Result<WriteSession> {
    super::require_write_permission(flags.write || flags.destructive, spec, &plan.describe())?;
    let t0 = crate::backend::monotonic_ns();
    // A simulated card lives in this process: a journal could never be restored onto it.
    let simulated = target::is_sim_spec(spec);
    if simulated && flags.journal.is_some() {
        return Err(Error::usage(format!(
            "--journal: {spec} is a simulated card in this process, so nothing is saved or journaled: drop --journal"
        )));
    }
    let preserve = !flags.destructive && !simulated;
    let journal_path = if preserve {
        let p = match &flags.journal {
            Some(p) => p.clone(),
            None => journal::default_path(plan.command)?,
        };
        journal::check_location(&p, spec)?;
        Some(p)
    } else {
        if flags.journal.is_some() {
            return Err(Error::usage(
                "--journal has no effect with --destructive (nothing is saved): drop one of them",
            ));
        }
        None
    };
    let opened = target::open(spec, &OpenRequest::read_write())?;
    let info = opened.info.clone();
    let warnings = opened.warnings.clone();
    let identity = Identity::of(spec, &opened, plan.command);
    let save = plan.region.1;
    let guarded = match &journal_path {
        Some(path) => {
            let leftovers = journal::clear_leftovers(&identity);
            for p in &leftovers.removed_empty {
                eprintln!(
                    "flashscope: removed {}: an earlier run on {spec} stopped before its first write, so it held nothing to restore",
                    p.display()
                );
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
            journal::check_space(path, save).map_err(|e| {
                Error::Refused(format!("{e}, or {}; nothing was written", plan.smaller))
            })?;
            eprintln!("flashscope {}: {}", plan.command, plan.describe());
            eprintln!(
                "preserve mode: saving up to {} of {spec} to the journal {} before overwriting; Ctrl-C stops after the current write, restores and exits 130 (SIGTERM: 143). After a crash: flashscope restore {}",
                format_bytes(save),
                path.display(),
                path.display()
            );
            // Record Ctrl-C from before the journal exists, so no signal can leave it empty.
            signals::install();
            let p = Preserve::new(opened.backend, path, &identity)?
                .with_stop_check(Box::new(signals::pending));
            Guarded::Preserve(p)
        }
        None => {
            eprintln!("flashscope {}: {}", plan.command, plan.describe());
            if simulated {
                eprintln!("simulated card: it lives in this process, so nothing is saved or restored (no journal)");
            } else {
                eprintln!(
                    "destructive mode: the data in that region is NOT saved and will be lost"
                );
            }
            Guarded::Direct(opened.backend)
        }
    };
    Ok(WriteSession {
        dev: Timed::new(WriteBudget::new(guarded, budget)),
        info,
        warnings,
        journal: journal_path,
        simulated,
        t0,
    })
}

/// How a write test ended.
#[derive(Debug, Clone, Default)]
pub struct Ending {
    /// The signal that stopped it (the regions were restored).
    pub interrupted: Option<i32>,
    pub restored: Option<RestoreSummary>,
    pub bytes_saved: u64,
    pub test_bytes_written: u64,
}

/// What a write test came to (see [`WriteSession::run`]).
// Made once per command and taken apart at once: boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Ran<T> {
    /// It finished: its samples, and a document with the common fields filled.
    Done(T, Document),
    /// A signal stopped it after the regions were restored: the exit code (130 or 143).
    Stopped(i32),
}

/// The warning for a test that stopped before its plan was done (budget or time).
pub fn stopped_early(why: &str) -> Warning {
    Warning::new(
        "stopped-early",
        format!("the test stopped early: {why}; the inference uses what was measured"),
    )
}

impl WriteSession {
    /// Run `test` with a progress line on stderr, end the session (restoring and verifying
    /// in preserve mode, whatever the result) and start the `command` document.
    pub fn run<T>(
        &mut self,
        command: &str,
        test: impl FnOnce(&mut Timed<WriteBudget<Guarded>>, &mut dyn FnMut(u64, u64)) -> io::Result<T>,
    ) -> Result<Ran<T>> {
        let mut progress = crate::report::progress::Progress::new(command);
        let result = test(&mut self.dev, &mut |d, t| progress.update(d, t));
        progress.finish();
        let (value, ending) = self.end(result)?;
        let Some(value) = value else {
            let sig = ending.interrupted.unwrap_or(libc::SIGINT);
            return Ok(Ran::Stopped(self.interrupted_exit(&ending, sig)));
        };
        let mut doc = Document::new(command, serde_json::Value::Null);
        self.fill(&mut doc, &ending);
        Ok(Ran::Done(value, doc))
    }

    /// End the test: restore and verify (preserve mode), whatever the probe's result.
    /// Returns the probe's value, or `None` when a signal stopped it; an I/O error of the
    /// probe or a failed restore becomes the error (exit 1), naming the journal if kept.
    pub fn end<T>(&mut self, result: io::Result<T>) -> Result<(Option<T>, Ending)> {
        let mut ending = Ending {
            test_bytes_written: self.dev.inner().bytes_written,
            ..Ending::default()
        };
        let mut failure = None;
        let restore = match self.dev.inner_mut().inner_mut() {
            Guarded::Preserve(p) => {
                ending.bytes_saved = p.bytes_saved();
                failure = p.failure().map(str::to_string);
                Some(p.finish())
            }
            Guarded::Direct(b) => {
                let _ = b.flush();
                None
            }
        };
        let restore_note = match &restore {
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

    /// Fill the document's common fields: target, warnings, journal, bytes written, time.
    pub fn fill(&self, doc: &mut Document, ending: &Ending) {
        doc.target = serde_json::to_value(&self.info).unwrap_or_default();
        doc.warnings.extend(self.warnings.iter().cloned());
        let restored = ending.restored.map(|r| r.bytes).unwrap_or(0);
        doc.bytes_written = ending.test_bytes_written + restored;
        doc.extra.insert(
            "journal".into(),
            match &self.journal {
                Some(p) => p.display().to_string().into(),
                None => serde_json::Value::Null,
            },
        );
        doc.extra.insert(
            "preserve".into(),
            serde_json::json!({
                "mode": match (&self.journal, self.simulated) {
                    (Some(_), _) => "preserve",
                    (None, true) => "simulated",
                    (None, false) => "destructive",
                },
                "bytes_saved": ending.bytes_saved,
                "test_bytes_written": ending.test_bytes_written,
                "restore_bytes_written": restored,
                "regions_restored": ending.restored.map(|r| r.regions).unwrap_or(0),
                "regions_verified": ending.restored.map(|r| r.verified).unwrap_or(0),
                "journal_removed": ending.restored.is_some(),
            }),
        );
        doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(self.t0);
    }

    /// The exit code and message for a run a signal stopped.
    pub fn interrupted_exit(&self, ending: &Ending, sig: i32) -> i32 {
        let name = if sig == libc::SIGTERM {
            "SIGTERM"
        } else {
            "SIGINT"
        };
        let r = ending.restored.unwrap_or_default();
        eprintln!(
            "flashscope: stopped by {name} after {} written; restored and verified {} regions ({}); journal removed",
            format_bytes(ending.test_bytes_written),
            r.regions,
            format_bytes(r.bytes)
        );
        signals::exit_code(sig)
    }
}

/// A line for text output: the test's writes and the preserve-mode result.
pub fn wear_line(doc: &Document) -> String {
    let p = doc.extra.get("preserve");
    let g = |k: &str| {
        p.and_then(|v| v.get(k))
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    };
    let mode = p.and_then(|v| v.get("mode")).and_then(|v| v.as_str());
    match doc.extra.get("journal").and_then(|j| j.as_str()) {
        None if mode == Some("simulated") => format!(
            "wrote {} to the simulated card (nothing to restore)\n",
            format_bytes(g("test_bytes_written"))
        ),
        Some(_) => format!(
            "wrote {} for the test and {} to restore {} saved regions (verified); journal removed\n",
            format_bytes(g("test_bytes_written")),
            format_bytes(g("restore_bytes_written")),
            g("regions_restored")
        ),
        None => format!(
            "wrote {} (destructive: nothing restored)\n",
            format_bytes(g("test_bytes_written"))
        ),
    }
}
