//! `verify`: write stamps over the whole surface (or a range), read everything back and
//! list what did not survive; through a mounted filesystem with 1 GiB files for a
//! directory. The resume state (`--state`, `--resume`, `--pass`) is kept here, with the
//! same trust checks as journals: a file root reads or writes cannot be turned against it.

use crate::backend::Backend;
use crate::capacity::extent::Extent;
use crate::capacity::fileset::{plan_bytes, FileSet};
use crate::capacity::locate::LocatedExtent;
use crate::capacity::probe::{modulus_of, AliasHit};
use crate::capacity::verify::{self, Phase, ThroughputSample, VerifyControl, VerifyState};
use crate::commands::write_probe::Finished;
use crate::device::TargetInfo;
use crate::device::TargetSpec;
use crate::device::{self, sysfs, OpenRequest, OpenTarget};
use crate::pattern::Stamper;
use crate::report::output_file::OutputFile;
use crate::report::progress::Progress;
use crate::report::results::{DeviceTarget, OutOfSpaceRecord, VerifyParameters, VerifyResult};
use crate::report::{Body, Document, Target};
use crate::session::{
    estimate, open_for_write, Notice, Notices, Ran, Rates, WriteFlags, WriteIntent, WriteMode,
};
use crate::vocab::error::Verdict;
use crate::vocab::units::format_bytes;
use crate::vocab::warning::{out_of_space_reason, DirectFallback, MemoryPlace};
use crate::vocab::{Check, Inference, Metric, Warning};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// What `verify` is asked to do (the command line's options, as given).
#[derive(Debug, Clone)]
pub struct VerifyParams {
    /// Whole block device, regular file, sim:PRESET[,key=value...], or a directory on a
    /// mounted filesystem.
    pub target: TargetSpec,
    pub flags: WriteFlags,
    /// `--range OFFSET+LEN`: the offset and the length, in bytes.
    pub range: Option<(u64, u64)>,
    /// Directory mode: this much instead of all free space, in bytes.
    pub size: Option<u64>,
    /// Directory mode: keep the files afterwards.
    pub keep: bool,
    /// Continue the interrupted run recorded in the state file.
    pub resume: bool,
    /// Where progress is saved for `--resume` (default: the user's state directory).
    pub state: Option<PathBuf>,
    /// `--time-budget`, in ns.
    pub time_budget_ns: Option<u64>,
    /// Write an SVG plot of read and write throughput over the position (created before
    /// the run writes anything).
    pub plot: Option<OutputFile>,
    /// Verify a partition although a fake is only visible on the whole device.
    pub partition_ok: bool,
    pub pass: Pass,
    /// Requests in flight at the device.
    pub iodepth: u32,
}

/// Which passes to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Write,
    Read,
    Both,
}

/// A stable description of what the target is, so a state file is not resumed on another.
fn identity(opened: &OpenTarget, spec: &TargetSpec) -> String {
    let mut id = format!("{}:{}:{}", opened.info.kind, spec, opened.info.size_bytes);
    if let Some(name) = &opened.block_name {
        for attr in ["device/model", "device/serial", "serial", "device/cid"] {
            if let Some(v) = sysfs::read_attr(name, attr) {
                id.push_str(&format!(":{v}"));
            }
        }
        if let Some(v) = sysfs::read_attr(name, "loop/backing_file") {
            id.push_str(&format!(":{v}"));
        }
    } else if opened.info.kind == crate::device::TargetKind::File {
        use std::os::unix::fs::MetadataExt;
        if let Some(Ok(m)) = spec.path().map(std::fs::metadata) {
            id.push_str(&format!(":dev{}:ino{}", m.dev(), m.ino()));
        }
    }
    id
}

/// Largest resume state read (a state is a few KiB; its extent list grows with damage).
const MAX_STATE_BYTES: u64 = 64 << 20;

/// The resume state's default place: the user's state directory, as journals (never the
/// shared temporary directory, where another user could plant a file or symlink there).
fn default_state_path(spec: &str) -> Result<PathBuf> {
    let name: String = spec
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(80)
        .collect();
    crate::journal::state_file(&format!("verify-{name}.state.json"))
}

/// Read a resume state: not through a symlink, a regular file of bounded size, written by
/// this user or root and by nobody else; anything unreadable is a bad --state (exit 2).
fn load_state(path: &Path) -> Result<VerifyState> {
    use crate::journal::trust;
    use std::io::Read;
    let what = "the --state file";
    let file = trust::open_nofollow(path).map_err(|e| {
        trust::open_error(what, path, e).unwrap_or_else(|| {
            Error::usage(format!(
                "--resume: no state file at '{}': nothing to resume (start without --resume, or give --state FILE)",
                path.display()
            ))
        })
    })?;
    let meta = crate::input::check_regular(&file, path, "--state file", MAX_STATE_BYTES)?;
    trust::check_owner(&meta, what, path)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&file)
        .take(MAX_STATE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("reading {what} '{}'", path.display()), e))?;
    let state: VerifyState = serde_json::from_slice(&bytes).map_err(|e| {
        Error::usage(format!(
            "--state '{}' is not a flashscope verify state ({e}): give the state file an interrupted verify printed, or start afresh without --resume",
            path.display()
        ))
    })?;
    state.validate().map_err(|why| {
        Error::usage(format!(
            "--state '{}' is damaged: its {why}; start afresh without --resume",
            path.display()
        ))
    })?;
    Ok(state)
}

/// Refuse to replace a file given as `--state` that is not a verify state (a typo must
/// not cost a file); a missing file is fine.
fn check_state_target(path: &Path) -> Result<()> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    load_state(path).map(|_| ()).map_err(|e| {
        Error::usage(format!(
            "{e}. It would be replaced by this run's state: give --state a new path"
        ))
    })
}

/// Checks of `--pass` and `--state` before anything is opened for writing: a read pass
/// continues a written run, and a `--state` file for a new run must be new or a state.
fn check_pass(args: &VerifyParams, state_path: &Path) -> Result<()> {
    if args.state.is_some() {
        // Judged before anything is written, as the journal's place is: the state is
        // renamed into that directory after every step.
        crate::journal::trust::trusted_parent(state_path, "--state", STATE_REMEDY)?;
    }
    if !args.resume && args.state.is_some() {
        check_state_target(state_path)?;
    }
    if args.pass == Pass::Read && !args.resume {
        return Err(Error::usage(
            "--pass read checks a run written earlier with --pass write: add --resume (and --state FILE if one was given)",
        ));
    }
    Ok(())
}

/// The saved run to continue: it must belong to this target (`id`, and `size` when known)
/// and, for `--pass read`, have finished writing.
fn resume_state(
    args: &VerifyParams,
    state_path: &Path,
    id: &str,
    size: Option<u64>,
) -> Result<VerifyState> {
    let st = load_state(state_path)?;
    if st.target_identity != id || size.is_some_and(|s| s != st.size_bytes) {
        return Err(Error::Refused(format!(
            "the state file '{}' belongs to another device or directory ({}), not to '{}' ({id}): resuming would report garbage. Start afresh without --resume",
            state_path.display(),
            st.target_identity,
            args.target
        )));
    }
    if args.pass == Pass::Read && st.phase == Phase::Write {
        return Err(Error::usage(format!(
            "the run in '{}' has not finished writing: continue it with --resume --pass write (or both)",
            state_path.display()
        )));
    }
    Ok(st)
}

/// Save the state atomically: a new private file (O_EXCL, O_NOFOLLOW, 0600) renamed over
/// the old one, so a planted symlink is replaced, never written through.
fn save_state(path: &Path, st: &VerifyState) -> Result<()> {
    let text = serde_json::to_vec(st).map_err(|e| Error::runtime(e.to_string()))?;
    crate::journal::trust::replace_private(path, &text, "--state", STATE_REMEDY)
}

/// What to do about a `--state` path another user could redirect.
const STATE_REMEDY: &str = "give --state a path in a directory only you or root can write";

/// Run `verify` on `args.target`: the document and the verdict (check failed when anything
/// did not read back as written), or stopped by a signal.
pub fn measure(args: &VerifyParams) -> Result<Finished> {
    let flags = &args.flags;
    let plan = if matches!(
        WriteMode::of(&args.target, flags),
        WriteMode::Directory | WriteMode::Simulated
    ) {
        "verify writes stamps over the whole range (a directory: new files filling its free space), then reads them back"
    } else {
        "verify overwrites every byte of the device (or --range) with stamps, then reads them back; with --write the data is saved to a journal first and restored, with --destructive it is lost"
    };
    let mode = crate::session::decide(&args.target, flags, plan)?;
    let time_budget_ns = args.time_budget_ns;
    if let (WriteMode::Directory, Some(path)) = (mode, args.target.path()) {
        return run_dir(args, path, time_budget_ns);
    }
    if mode == WriteMode::Preserve {
        return run_preserve(args, time_budget_ns);
    }
    let opened = device::open(&args.target, &OpenRequest::read_write())?;
    let mut warnings = opened.warnings.clone();
    if let Some(w) = crate::capacity::partition_check(&opened, &args.target, args.partition_ok)? {
        warnings.push(w);
    }
    let size = opened.info.size_bytes;
    let (start, len) = checked_range(args, &opened.info)?;
    let id = identity(&opened, &args.target);
    let state_path = match &args.state {
        Some(p) => p.clone(),
        // A simulated card's state is never saved (the card dies with the process).
        None if mode == WriteMode::Simulated && !args.resume => PathBuf::new(),
        None => default_state_path(args.target.as_str())?,
    };
    check_pass(args, &state_path)?;
    if args.pass == Pass::Write && mode == WriteMode::Simulated {
        return Err(Error::usage(
            "--pass write keeps nothing on a simulated card (it lives only in this process): run both passes",
        ));
    }
    let state = if args.resume {
        let st = resume_state(args, &state_path, &id, Some(size))?;
        if args.range.is_some() && (st.start, st.length) != (start, len) {
            return Err(Error::usage(format!(
                "--range {start}+{len} differs from the interrupted run's {}+{}",
                st.start, st.length
            )));
        }
        st
    } else {
        VerifyState::new(id, size, start, len, Stamper::random_salt())
    };
    let info = opened.info.clone();
    let is_sim_target = info.kind == crate::device::TargetKind::Sim;
    let mut dev = opened.backend;
    let saved_at = (!is_sim_target).then_some(state_path.as_path());
    let (state, verdict, iodepth) = drive(
        &mut *dev,
        state,
        time_budget_ns,
        saved_at,
        args.pass == Pass::Write,
        args.iodepth as usize,
        &args.flags.notices,
    )?;
    let doc = document(Target::from(&info), &state, warnings, args, None, iodepth)?;
    Ok(Finished::Done { doc, verdict })
}

/// The range to verify: `--range` or the whole target, inside it and on sector boundaries.
fn checked_range(args: &VerifyParams, info: &crate::device::TargetInfo) -> Result<(u64, u64)> {
    let size = info.size_bytes;
    let sector = (info.logical_sector_bytes as u64).max(512);
    let (start, len) = match &args.range {
        Some(r) => *r,
        None if size % sector != 0 => {
            return Err(Error::usage(format!(
                "'{}' is {size} bytes, not a whole number of {sector}-byte sectors: give --range 0+{} to verify its whole sectors",
                args.target,
                size / sector * sector
            )))
        }
        None => (0, size),
    };
    if start.checked_add(len).is_none_or(|end| end > size) {
        return Err(Error::usage(format!(
            "--range {start}+{len} reaches beyond the end of '{}' ({size} bytes)",
            args.target
        )));
    }
    if start % sector != 0 || len % sector != 0 {
        return Err(Error::usage(format!(
            "--range {start}+{len} must start and end on a {sector}-byte sector boundary"
        )));
    }
    Ok((start, len))
}

/// `verify DEVICE --write`: preserve mode. Every chunk is saved to the journal before it
/// is overwritten; at the end (or on Ctrl-C) everything is written back and checked.
fn run_preserve(args: &VerifyParams, time_budget_ns: Option<u64>) -> Result<Finished> {
    if args.resume || args.pass != Pass::Both || args.state.is_some() {
        return Err(Error::usage(
            "--resume, --pass and --state need --destructive: preserve mode (--write) restores the data when the run ends, so no written stamps are left to continue from or to read later",
        ));
    }
    let mut peeked = device::open(&args.target, &OpenRequest::read_only())?;
    let mut warnings = Vec::new();
    if let Some(w) = crate::capacity::partition_check(&peeked, &args.target, args.partition_ok)? {
        warnings.push(w);
    }
    let (start, len) = checked_range(args, &peeked.info)?;
    // The plan's rates: a short read sample of the range (reads only), as every writing
    // test's plan (`session::estimate`).
    let rates = Rates::sample(&mut *peeked.backend, (start, len));
    drop(peeked);
    let journal_path = match &args.flags.journal {
        Some(p) => p.clone(),
        None => crate::journal::default_path("verify")?,
    };
    let flags = WriteFlags {
        write: true,
        destructive: false,
        journal: Some(journal_path),
        planned: false,
        notices: args.flags.notices.clone(),
    };
    let plan = WriteIntent {
        command: "verify",
        region: (start, len),
        max_bytes: len,
        typical_bytes: None,
        estimated_ns: own_ns(len, &rates),
        slow_ns: own_ns(len, &rates.slower_writes(estimate::SLOW_WRITES)),
        rates,
        what: "verify writes stamps over every byte of the range and reads them back".into(),
        smaller: "verify a smaller --range (preserve mode saves every byte of it), or use --destructive if the data need not be kept",
        ..WriteIntent::default()
    };
    let mut session = open_for_write(&args.target, &flags, &plan)?;
    let size = session.info.size_bytes;
    let id = format!("{}:{}:{size}:preserve", session.info.kind, args.target);
    let state = VerifyState::new(id, size, start, len, Stamper::random_salt());
    let r = drive(
        &mut session.dev,
        state,
        time_budget_ns,
        None,
        false,
        args.iodepth as usize,
        &args.flags.notices,
    )
    .map_err(|e| match crate::signals::pending() {
        Some(sig) => crate::signals::interrupted_error(sig),
        None => std::io::Error::other(e.to_string()),
    });
    // What the card did with the bytes written back is part of the finding about it.
    let ((state, verdict, iodepth), ending) = match session.conclude_finding(r)? {
        Ran::Done(done, ending) => (done, ending),
        Ran::Stopped(verdict, _) => return Ok(Finished::Stopped { verdict }),
    };
    let mut doc = document(
        Target::from(&session.info),
        &state,
        warnings,
        args,
        None,
        iodepth,
    )?;
    // `elapsed_ns` stays the device time of verify's writing and reading (`document`),
    // not the session's wall time with preserve mode's saving and restoring.
    let device_ns = doc.elapsed_ns;
    session.fill(&mut doc, &ending);
    doc.elapsed_ns = device_ns;
    // Bytes the restore wrote back and the card did not hold: the card failed to keep
    // written data there too (exit 3, whatever the stamps said).
    let verdict = if ending.unrestored.is_empty() {
        verdict
    } else {
        let bytes: u64 = ending.unrestored.iter().map(|r| r.1).sum();
        doc.checks.push(Check {
            inconclusive: false,
            threshold: None,
            name: "verify.restore".into(),
            passed: false,
            measurement: Some(bytes as f64),
            units: Some("bytes".into()),
            message: session.unrestored_text(&ending, ""),
        });
        Verdict::CheckFailed
    };
    Ok(Finished::Done { doc, verdict })
}

/// verify's own time over `len` bytes at `rates`: writing the stamps and reading them
/// back, in chunks of [`VerifyState`]'s size (preserve mode's saving and restoring are the
/// session's, [`WriteIntent::preserve_ns`]).
fn own_ns(len: u64, rates: &Rates) -> u64 {
    let chunks = len.div_ceil(verify::CHUNK_BYTES);
    rates.write_ns(len, chunks) + rates.read_ns(len, chunks)
}

/// Run the engine with progress and state saving; returns the state and the verdict.
fn drive(
    dev: &mut dyn Backend,
    mut state: VerifyState,
    time_budget_ns: Option<u64>,
    state_path: Option<&Path>,
    stop_after_write: bool,
    iodepth: usize,
    notices: &Notices,
) -> Result<(VerifyState, Verdict, usize)> {
    let mut bar = Progress::new("verify");
    let mut save = |st: &VerifyState| match state_path {
        Some(p) if st.phase != Phase::Done => save_state(p, st),
        _ => Ok(()),
    };
    let mut last_phase = state.phase;
    let mut prog = |phase: Phase, done: u64, total: u64| {
        if phase != last_phase {
            last_phase = phase;
        }
        // Writing is the first half of the work, reading the second.
        let half = total;
        let d = if phase == Phase::Read {
            half + done
        } else {
            done
        };
        bar.update(d, 2 * half);
    };
    let mut ctl = VerifyControl {
        time_budget_ns,
        sample_bytes: (state.length / 256).max(state.chunk),
        save_every: 256 << 20,
        save: &mut save,
        stop_after_write,
        progress: &mut prog,
        iodepth,
    };
    let t0 = dev.clock_ns();
    let r = verify::run(dev, &mut state, &mut ctl);
    let _ = t0;
    let iodepth = ctl.iodepth;
    bar.finish();
    r?;
    if state.phase == Phase::Done {
        if let Some(p) = state_path {
            let _ = std::fs::remove_file(p);
        }
    } else if let (true, Phase::Read, Some(p)) = (stop_after_write, state.phase, state_path) {
        notices.say(Notice::VerifyWritePassDone {
            state: p.to_path_buf(),
        });
    } else if let Some(p) = state_path {
        notices.say(Notice::VerifyStoppedAt {
            done: state.next - state.start,
            total: state.length,
            phase: if state.phase == Phase::Write {
                "write"
            } else {
                "read"
            },
            state: p.to_path_buf(),
        });
    }
    // A run that stopped (a budget) before reading anything back has checked nothing:
    // not a pass. A write-only pass (`--pass write`) is what was asked for.
    // Nor has one whose filesystem was full before its first write.
    let checked_nothing = !stop_after_write
        && state.bytes_read == 0
        && (state.phase != Phase::Done || state.out_of_space.is_some());
    let verdict = if !state.all_extents().is_empty() {
        Verdict::CheckFailed
    } else if checked_nothing {
        if state.out_of_space.is_none() {
            notices.say(Notice::VerifyCheckedNothing);
        }
        Verdict::Incomplete
    } else {
        Verdict::Ok
    };
    Ok((state, verdict, iodepth))
}

fn run_dir(args: &VerifyParams, dir: &Path, time_budget_ns: Option<u64>) -> Result<Finished> {
    if args.range.is_some() {
        return Err(Error::usage(
            "--range applies to devices and files; verify a directory with --size to limit it",
        ));
    }
    let asked = args.size;
    // Walked one component at a time and used through its descriptor from here on: a
    // symbolic link of another user's on the way is refused (exit 2).
    let top = crate::fs::env::test_dir(dir)?;
    let canonical = top.path().to_path_buf();
    let id = format!("dir:{}", canonical.display());
    // A run split into passes (or continued) keeps its files and its state between them.
    let saved = args.resume || args.pass != Pass::Both;
    let state_path = match &args.state {
        Some(p) => p.clone(),
        None if saved => default_state_path(&id)?,
        None => PathBuf::new(),
    };
    check_pass(args, &state_path)?;
    // A later pass finds the files again by name; in a directory another user can write,
    // they could have put something else there by then (issue 30).
    if saved {
        if let (_, Some(why)) = crate::capacity::fileset::shared_dir(&top) {
            return Err(Error::Refused(format!(
                "'{}' {why}: a run split into passes (--pass, --resume) finds its files again by name, and whoever can write there could replace them in between. Nothing was written. Verify it in one run (without --pass and --resume), or in a directory only you and root can write (or a sticky one, as /tmp)",
                canonical.display()
            )));
        }
    }
    let (state, mut set) = if args.resume {
        let st = resume_state(args, &state_path, &id, None)?;
        if asked.is_some_and(|a| a / (1 << 20) * (1 << 20) != st.size_bytes) {
            return Err(Error::usage(format!(
                "--size differs from the interrupted run's {}: drop --size to continue it",
                format_bytes(st.size_bytes)
            )));
        }
        // The read pass needs every byte the write pass wrote.
        let written = if st.phase == Phase::Write {
            0
        } else {
            st.written_end()
        };
        let set = FileSet::open(top, st.size_bytes, args.keep, written, st.file_tag)?;
        (st, set)
    } else {
        let total = plan_bytes(&canonical, asked)?;
        let mut st = VerifyState::new(id, total, 0, total, Stamper::random_salt());
        let set = FileSet::create(top, total, args.keep)?;
        st.file_tag = set.tag();
        (st, set)
    };
    if saved {
        // Kept even when a signal stops the run: --resume continues it.
        set.set_keep(true);
    }
    let total = state.size_bytes;
    let mut warnings = Vec::new();
    if !set.direct() {
        warnings.push(Warning::DirectIoRefused {
            target: Some(dir.display().to_string()),
            fallback: DirectFallback::DropCachedPages,
        });
    }
    let fs = crate::sys::statfs_magic(dir).map(crate::sys::fs_label);
    if matches!(fs.as_deref(), Some("tmpfs") | Some("ramfs")) {
        warnings.push(Warning::MemoryFilesystem {
            fs_type: fs.clone().unwrap_or_default(),
            place: MemoryPlace::VerifiedDirectory(dir.display().to_string()),
        });
    }
    let driven = drive(
        &mut set,
        state,
        time_budget_ns,
        saved.then_some(state_path.as_path()),
        args.pass == Pass::Write,
        args.iodepth as usize,
        &args.flags.notices,
    );
    if let Some(sig) = crate::signals::pending() {
        drop(set);
        args.flags.notices.say(Notice::VerifyDirStopped {
            files: if saved {
                "its files were kept: continue with --resume"
            } else if args.keep {
                "its files were kept (--keep)"
            } else {
                "its files were removed"
            },
        });
        return Ok(Finished::Stopped {
            verdict: Verdict::Stopped { signal: sig },
        });
    }
    let (state, verdict, iodepth) = driven?;
    // Stopped by the budget or after the write pass, the next pass needs every file; a
    // finished run leaves only what --keep asks for (and, below, the files with bad data).
    set.set_keep(args.keep || (saved && state.phase != Phase::Done));
    // Where each bad extent lives, asked of the files before any is removed.
    let (device, located) = set.settle(&state.all_extents());
    let files: Vec<String> = set
        .paths()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let kept: Vec<String> = (0..files.len())
        .filter(|&i| set.kept(i))
        .map(|i| files[i].clone())
        .collect();
    drop(set);
    let target = TargetInfo {
        spec: args.target.to_string(),
        kind: crate::device::TargetKind::Directory,
        size_bytes: total,
        logical_sector_bytes: 4096,
        physical_sector_bytes: 4096,
        filesystem: fs,
        ..TargetInfo::default()
    };
    let dir_result = DirResult {
        files,
        kept,
        located,
        resumable: saved,
    };
    let target = Target::Device(DeviceTarget {
        info: target,
        device: Some(device),
        host_path: None,
    });
    let doc = document(target, &state, warnings, args, Some(dir_result), iodepth)?;
    Ok(Finished::Done { doc, verdict })
}

fn rate(samples: &[ThroughputSample], phase: Phase) -> Option<f64> {
    let (b, ns) = samples
        .iter()
        .filter(|s| s.phase == phase)
        .fold((0u64, 0u64), |(b, n), s| (b + s.bytes, n + s.ns));
    (ns > 0).then(|| b as f64 * 1e9 / ns as f64)
}

/// What a directory run adds to its document: its files, those left in place, and where
/// each bad extent lives (split at file boundaries).
struct DirResult {
    files: Vec<String>,
    kept: Vec<String>,
    located: Vec<LocatedExtent>,
    /// Its state was saved and its files kept, so `--resume` continues it.
    resumable: bool,
}

fn document(
    target: Target,
    st: &VerifyState,
    warnings: Vec<Warning>,
    args: &VerifyParams,
    dir: Option<DirResult>,
    iodepth: usize,
) -> Result<Document> {
    let mut result = VerifyResult {
        parameters: VerifyParameters {
            range_offset: st.start,
            range_length: st.length,
            chunk_bytes: st.chunk,
            iodepth,
            resumed: args.resume,
        },
        samples: st.samples.clone(),
        checked_bytes: 0,
        planned_bytes: st.length,
        files_kept: None,
        files: None,
        kept_files: None,
        plot: None,
        out_of_space: st.out_of_space.map(|o| OutOfSpaceRecord {
            written_bytes: o.at - st.start,
            reason: out_of_space_reason(o.quota).into(),
        }),
    };
    let mut doc = Document::new(target, Body::Verify(Default::default()));
    let extents: Vec<Extent> = st.all_extents();
    let done = st.phase == Phase::Done;
    // The passes this run was asked for are over: `--pass write` ends, finished, at the
    // start of the read phase, and must not be called stopped there.
    let passes_done = done || (args.pass == Pass::Write && st.phase != Phase::Write);
    let verified = if st.phase == Phase::Read || done {
        st.next - st.start
    } else {
        0
    };
    let conf = if done { 0.99 } else { 0.6 };
    let bad_bytes: u64 = extents.iter().map(|e| e.length).sum();
    // A write-only pass reads nothing back: it has no surface check to pass or fail (its
    // read pass has), and no finding about bad extents.
    let write_only = args.pass == Pass::Write && verified == 0;
    // The check exit code 3 stands for: every unit read back so far held its stamp.
    let surface = Check {
        inconclusive: false,
        threshold: None,
        name: "verify.surface".into(),
        passed: extents.is_empty(),
        measurement: Some(bad_bytes as f64),
        units: Some("bytes".into()),
        message: format!(
            "{bad_bytes} bytes in {} extents of {verified} bytes read back did not hold what was written{}",
            extents.len(),
            if passes_done { "" } else { " (the run stopped before the end)" }
        ),
    }
    // Nothing read back (a budget ended the write pass) is no check at all.
    .undecided_if(verified == 0);
    if !write_only {
        doc.checks.push(surface);
    }
    doc.metrics.push(Metric::new(
        "verify_checked_bytes",
        "Bytes written with stamps and read back by verify",
        verified as f64,
        &[],
    ));
    doc.metrics.push(Metric::new(
        "verify_bad_bytes",
        "Bytes verify read back that did not hold what was written",
        bad_bytes as f64,
        &[],
    ));
    let nothing_read = if write_only {
        "the write pass reads nothing back: --pass read --resume checks the stamps"
    } else {
        "the run stopped before reading anything back"
    };
    doc.inferences.insert(
        "bad_extents".into(),
        if verified == 0 && extents.is_empty() {
            Inference::inconclusive(nothing_read)
        } else {
            Inference::new(
            match &dir {
                Some(d) => serde_json::to_value(&d.located),
                None => serde_json::to_value(&extents),
            }
            .unwrap_or_default(),
            conf,
            format!(
                "{} of {} read back and checked unit by unit: {} good, {} in {} extents not as written{}",
                format_bytes(verified),
                format_bytes(st.length),
                format_bytes(st.good_bytes),
                format_bytes(extents.iter().map(|e| e.length).sum()),
                extents.len(),
                if st.extents.dropped > 0 {
                    format!(" ({} more extents not listed)", st.extents.dropped)
                } else {
                    String::new()
                }
            ),
            )
        },
    );
    // Bad extents that hold data written a fixed distance above them: a wrap-around fake
    // (the probe's modulus, from the same pairs of offsets that share storage).
    let aliases: Vec<AliasHit> = extents
        .iter()
        .filter_map(|e| {
            e.from.map(|from| AliasHit {
                read_at: e.offset,
                written_at: from,
            })
        })
        .collect();
    if let Some(m) = modulus_of(&aliases).filter(|&m| m >= 1 << 20) {
        doc.inferences.insert(
            "wrap_modulus_bytes".into(),
            Inference::new(
                m,
                if aliases.len() >= 2 { 0.97 } else { 0.8 },
                format!(
                    "{} bad extents hold data written at a multiple of {} above them: the addresses wrap around, so only the first {} are real storage",
                    aliases.len(),
                    format_bytes(m),
                    format_bytes(m)
                ),
            ),
        );
    }
    doc.inferences.insert(
        "first_bad_offset".into(),
        match extents.first() {
            Some(e) => Inference::new(
                e.offset,
                conf,
                format!(
                    "the first extent is {} {} bytes long",
                    e.kind.name(),
                    e.length
                ),
            ),
            None if done => {
                Inference::inconclusive("every byte read back as written: there is no bad offset")
            }
            None if verified == 0 => Inference::inconclusive(nothing_read),
            None => Inference::inconclusive("the run stopped before reading everything back"),
        },
    );
    if let Some(r) = rate(&st.samples, Phase::Write) {
        doc.inferences.insert(
            "write_bytes_per_s".into(),
            Inference::new(
                r.round() as u64,
                0.95,
                format!(
                    "{} written sequentially in {} requests, {iodepth} in flight, wall time per phase",
                    format_bytes(st.bytes_written),
                    format_bytes(st.chunk)
                ),
            ),
        );
    }
    if let Some(r) = rate(&st.samples, Phase::Read) {
        doc.inferences.insert(
            "read_bytes_per_s".into(),
            Inference::new(
                r.round() as u64,
                0.95,
                format!(
                    "{} read sequentially in {} requests, {iodepth} in flight, wall time per phase",
                    format_bytes(st.bytes_read),
                    format_bytes(st.chunk)
                ),
            ),
        );
    }
    doc.bytes_written = st.bytes_written;
    doc.elapsed_ns = st.write_ns + st.read_ns;
    let mut warnings = warnings;
    if let Some(o) = st.out_of_space {
        warnings.push(Warning::OutOfSpace {
            written_bytes: o.at - st.start,
            planned_bytes: st.length,
            quota: o.quota,
        });
    }
    if !passes_done {
        warnings.push(Warning::VerifyIncomplete {
            phase: if st.phase == Phase::Write {
                "write"
            } else {
                "read"
            }
            .to_string(),
            at_bytes: st.next,
            resumable: dir.as_ref().is_none_or(|d| d.resumable),
        });
    }
    doc.warnings = warnings;
    result.checked_bytes = verified;
    if let Some(d) = dir {
        result.files_kept = Some(!d.files.is_empty() && d.kept.len() == d.files.len());
        result.files = Some(d.files);
        result.kept_files = Some(d.kept);
    }
    if let Some(file) = &args.plot {
        let svg =
            crate::report::charts::verify_throughput(&st.samples, st.start, st.length).to_svg();
        file.write(svg.as_bytes())?;
        result.plot = Some(file.path().display().to_string());
    }
    doc.body = Body::Verify(result);
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_state_is_refused_naming_the_field_never_a_hang_or_a_panic() {
        let d = tempfile::tempdir().unwrap();
        let good = VerifyState::new("x".into(), 64 << 20, 0, 64 << 20, 7);
        let p = d.path().join("s.json");
        type Spoil = fn(&mut VerifyState);
        let cases: [(&str, Spoil); 6] = [
            ("chunk 0", |s| s.chunk = 0),
            ("chunk 4611686018427387904", |s| s.chunk = 1 << 62),
            ("start", |s| s.start = u64::MAX),
            ("start", |s| s.length = 0),
            ("next", |s| s.next = 1 << 40),
            ("version", |s| s.version = 9),
        ];
        for (field, spoil) in cases {
            let mut st = good.clone();
            spoil(&mut st);
            std::fs::write(&p, serde_json::to_vec(&st).unwrap()).unwrap();
            let e = load_state(&p).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{e}");
            assert!(
                e.to_string().contains(&format!("its {field}")),
                "{field}: {e}"
            );
        }
        std::fs::write(&p, serde_json::to_vec(&good).unwrap()).unwrap();
        assert_eq!(load_state(&p).unwrap(), good);
    }

    #[test]
    fn the_plot_has_a_line_per_phase() {
        let s = |phase, offset| ThroughputSample {
            phase,
            offset,
            bytes: 1 << 20,
            ns: 1_000_000,
            bytes_per_s: 1e9,
        };
        let svg = crate::report::charts::verify_throughput(
            &[
                s(Phase::Write, 0),
                s(Phase::Write, 1 << 20),
                s(Phase::Read, 0),
                s(Phase::Read, 1 << 20),
            ],
            0,
            2 << 20,
        )
        .to_svg();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains(">write<") && svg.contains(">read<"), "{svg}");
    }
}
