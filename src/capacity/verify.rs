//! The full-surface verify engine: write stamps over a range, read everything back and
//! classify every unit, merging what went wrong into extents.
//!
//! Stamps are generated and checked by several lanes while another lane's request is at
//! the device, so the device, not the CPU, sets the pace. The run's state (salt, phase, position,
//! extents so far) is small and serialisable: `--resume` continues from it.

use super::extent::{Extent, ExtentKind, ExtentList};
use super::stamp::{Stamper, UnitClass, UNIT};
use crate::backend::{AlignedBuf, Backend};
use crate::error::is_vanished;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::mpsc::{sync_channel, SyncSender};

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Write,
    Read,
    Done,
}

/// Throughput of one stretch of the device in one phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ThroughputSample {
    pub phase: Phase,
    pub offset: u64,
    pub bytes: u64,
    /// Wall time (device clock) these bytes took, including any wait for the CPU, so the
    /// rate is what a user gets, comparable with fio's.
    pub ns: u64,
    pub bytes_per_s: f64,
}

/// Everything needed to report or to resume a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyState {
    pub version: u32,
    /// What the run was on: spec and identity (size, model, serial or inode).
    pub target_identity: String,
    pub size_bytes: u64,
    pub salt: u64,
    pub start: u64,
    pub length: u64,
    pub chunk: u64,
    pub phase: Phase,
    /// Next offset to write (write phase) or to read (read phase).
    pub next: u64,
    pub extents: ExtentList,
    pub unwritable: ExtentList,
    pub bytes_written: u64,
    pub bytes_read: u64,
    pub good_bytes: u64,
    pub write_ns: u64,
    pub read_ns: u64,
    pub samples: Vec<ThroughputSample>,
}

impl VerifyState {
    /// A fresh run over `[start, start+length)`.
    pub fn new(identity: String, size_bytes: u64, start: u64, length: u64, salt: u64) -> Self {
        VerifyState {
            version: 1,
            target_identity: identity,
            size_bytes,
            salt,
            start,
            length,
            chunk: 1 << 20,
            phase: Phase::Write,
            next: start,
            extents: ExtentList::default(),
            unwritable: ExtentList::default(),
            bytes_written: 0,
            bytes_read: 0,
            good_bytes: 0,
            write_ns: 0,
            read_ns: 0,
            samples: Vec::new(),
        }
    }

    pub fn end(&self) -> u64 {
        self.start + self.length
    }

    /// All extents (write errors and read-back findings), sorted and merged.
    pub fn all_extents(&self) -> Vec<Extent> {
        let mut all = self.extents.clone();
        for e in &self.unwritable.extents {
            all.push(e.offset, e.length, e.kind, e.from);
        }
        all.normalise();
        all.extents
    }
}

/// How a run is driven.
pub struct VerifyControl<'a> {
    /// Stop (state saved, resumable) after this many ns of the device's clock.
    pub time_budget_ns: Option<u64>,
    /// Bytes per throughput sample (rounded up to whole chunks).
    pub sample_bytes: u64,
    /// Called with the state every `save_every` bytes and when the run stops.
    pub save_every: u64,
    pub save: &'a mut dyn FnMut(&VerifyState) -> Result<()>,
    /// Stop once everything is written (the read pass runs later, e.g. after the card was
    /// unplugged and plugged in again, so no cache can answer).
    pub stop_after_write: bool,
    pub progress: &'a mut dyn FnMut(Phase, u64, u64),
    /// Requests in flight at the device (1..=`MAX_IODEPTH`; see `run`). On return, the
    /// depth actually used (1 where the device has no second handle).
    pub iodepth: usize,
}

struct Interval {
    offset: u64,
    bytes: u64,
    started: u64,
}

impl Interval {
    fn flush(
        &mut self,
        phase: Phase,
        samples: &mut Vec<ThroughputSample>,
        now: u64,
        force: bool,
        every: u64,
    ) {
        if self.bytes > 0 && (force || self.bytes >= every) {
            let ns = now.saturating_sub(self.started);
            samples.push(ThroughputSample {
                phase,
                offset: self.offset,
                bytes: self.bytes,
                ns,
                bytes_per_s: if ns > 0 {
                    self.bytes as f64 * 1e9 / ns as f64
                } else {
                    0.0
                },
            });
            self.offset += self.bytes;
            self.bytes = 0;
            self.started = now;
        }
    }
}

/// Requests in flight at the device by default. Two keep the device busy while an I/O
/// thread waits for the CPU (on a loaded machine or a small board), as fio does with
/// `iodepth=2`; `1` issues one request at a time, as fio's `psync` engine does.
pub const DEFAULT_IODEPTH: usize = 2;
/// The deepest queue `verify` offers (memory: `iodepth + 2` chunk buffers).
pub const MAX_IODEPTH: usize = 8;

/// Run (or continue) a verify described by `state` on `dev`.
///
/// Each pass has `ctl.iodepth` I/O threads, each with its own handle on the device, that
/// only move bytes: they take chunks in ascending order and issue the next one as soon as
/// the previous completes. One more thread stamps chunks ahead of the writers or checks
/// the chunks behind the readers, so generating and checking never leave the device idle.
/// `iodepth + 2` chunk buffers circulate, which bounds the memory. Depths above one need
/// more handles (`Backend::try_clone_handle`); where there are none (the simulator, a
/// directory) the depth is one and the order of I/O, hence the simulated clock, is exact.
pub fn run<B: Backend + ?Sized>(
    dev: &mut B,
    state: &mut VerifyState,
    ctl: &mut VerifyControl,
) -> Result<()> {
    let sector = (dev.logical_sector_bytes() as u64).max(UNIT as u64);
    if state.start % sector != 0 || state.length % sector != 0 || state.chunk % sector != 0 {
        return Err(Error::usage(format!(
            "verify range {}+{} must be a multiple of the {sector}-byte sector",
            state.start, state.length
        )));
    }
    if state.end() > dev.size_bytes() {
        return Err(Error::usage(format!(
            "verify range {}+{} ends beyond the device ({} bytes)",
            state.start,
            state.length,
            dev.size_bytes()
        )));
    }
    let t0 = dev.clock_ns();
    if state.phase == Phase::Write {
        run_phase(dev, state, ctl, sector, t0, Phase::Write)?;
        if state.phase == Phase::Write {
            return Ok(()); // stopped by the budget; state saved
        }
        dev.flush()
            .map_err(|e| Error::io("flushing the written stamps", e))?;
        state.next = state.start;
        (ctl.save)(state)?;
        if ctl.stop_after_write {
            return Ok(());
        }
    }
    let over = ctl
        .time_budget_ns
        .is_some_and(|b| dev.clock_ns().saturating_sub(t0) > b);
    if state.phase == Phase::Read && !over {
        run_phase(dev, state, ctl, sector, t0, Phase::Read)?;
    }
    Ok(())
}

/// One handle on the device: the caller's, or another one for a deeper queue.
enum Handle<'a, B: ?Sized> {
    Main(&'a mut B),
    Extra(Box<dyn Backend>),
}

impl<B: Backend + ?Sized> Handle<'_, B> {
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        match self {
            Handle::Main(b) => b.read_at(buf, offset),
            Handle::Extra(b) => b.read_at(buf, offset),
        }
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        match self {
            Handle::Main(b) => b.write_at(buf, offset),
            Handle::Extra(b) => b.write_at(buf, offset),
        }
    }
    fn clock_ns(&self) -> u64 {
        match self {
            Handle::Main(b) => b.clock_ns(),
            Handle::Extra(b) => b.clock_ns(),
        }
    }
}

/// The shared part of a pass: buffers, the next chunk to issue, and the stop flag.
struct Queue {
    /// The next chunk to read (read pass) or to stamp (write pass).
    next: u64,
    free: Vec<AlignedBuf>,
    /// Write pass: chunks stamped in ascending order, waiting for an I/O thread.
    filled: std::collections::VecDeque<(u64, u64, AlignedBuf)>,
    /// Write pass: everything up to the end has been stamped.
    all_filled: bool,
    stop: bool,
}

struct Pipeline {
    queue: std::sync::Mutex<Queue>,
    changed: std::sync::Condvar,
}

impl Pipeline {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // A thread that panicked poisons the lock; the queue it guards stays consistent.
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait until `ready` says what to do: `Some(Some(t))` go on with `t`, `Some(None)`
    /// nothing is left for this thread, `None` not yet. Returns `None` also when the pass
    /// stops (time budget, fatal error, a thread gone).
    fn wait_for<T>(&self, mut ready: impl FnMut(&mut Queue) -> Option<Option<T>>) -> Option<T> {
        let mut q = self.lock();
        loop {
            if q.stop {
                return None;
            }
            if let Some(next) = ready(&mut q) {
                drop(q);
                self.changed.notify_all();
                return next;
            }
            q = self.changed.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The next chunk in ascending order (offset, length, a free buffer), waiting for a
    /// buffer; `None` at `end` or when the pass stops.
    fn next_chunk(&self, end: u64, chunk: u64) -> Option<(u64, u64, AlignedBuf)> {
        self.wait_for(|q| {
            if q.next >= end {
                return Some(None);
            }
            let buf = q.free.pop()?;
            let off = q.next;
            let n = (end - off).min(chunk);
            q.next += n;
            Some(Some((off, n, buf)))
        })
    }

    fn give_back(&self, buf: AlignedBuf, stop: bool) {
        let mut q = self.lock();
        q.free.push(buf);
        q.stop |= stop;
        drop(q);
        self.changed.notify_all();
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// What became of one chunk.
struct Done {
    offset: u64,
    len: u64,
    /// The device's clock when the I/O completed.
    clock: u64,
    /// Bytes the device accepted (write pass).
    written: u64,
    /// Units that were not good, sectors that refused writes or reads.
    extents: Vec<Extent>,
    good: u64,
    /// The device vanished or the write budget ran out: the run cannot go on.
    fatal: Option<std::io::Error>,
}

impl Done {
    fn new(offset: u64, len: u64) -> Self {
        Done {
            offset,
            len,
            clock: 0,
            written: 0,
            extents: Vec::new(),
            good: 0,
            fatal: None,
        }
    }
}

/// Errors that end the run rather than mark sectors bad: the device vanished, or a
/// signal asked preserve mode to stop and restore.
fn is_fatal(e: &std::io::Error) -> bool {
    is_vanished(e) || e.kind() == std::io::ErrorKind::Interrupted
}

/// Write one chunk; a chunk that fails is retried sector by sector to find the sectors
/// that refuse writes.
fn write_chunk<B: Backend + ?Sized>(
    h: &mut Handle<'_, B>,
    buf: &[u8],
    off: u64,
    sector: u64,
    done: &mut Done,
) {
    match h.write_at(buf, off) {
        Ok(()) => done.written = buf.len() as u64,
        Err(e) if is_fatal(&e) || crate::backend::is_budget_exhausted(&e) => {
            done.fatal = Some(e);
        }
        Err(_) => {
            let mut bad = ExtentList::new(usize::MAX);
            for (i, piece) in buf.chunks(sector as usize).enumerate() {
                let at = off + i as u64 * sector;
                match h.write_at(piece, at) {
                    Ok(()) => done.written += piece.len() as u64,
                    Err(_) => bad.push(at, sector, ExtentKind::Unwritable, None),
                }
            }
            done.extents = bad.extents;
        }
    }
}

/// Read one chunk; a chunk that fails is retried sector by sector, and the sectors that
/// cannot be read are zeroed and returned.
fn read_chunk<B: Backend + ?Sized>(
    h: &mut Handle<'_, B>,
    buf: &mut [u8],
    off: u64,
    sector: u64,
    done: &mut Done,
) -> Vec<(u64, u64)> {
    let mut unreadable: Vec<(u64, u64)> = Vec::new();
    match h.read_at(buf, off) {
        Ok(()) => {}
        Err(e) if is_fatal(&e) => done.fatal = Some(e),
        Err(_) => {
            for (i, piece) in buf.chunks_mut(sector as usize).enumerate() {
                let at = off + i as u64 * sector;
                if h.read_at(piece, at).is_err() {
                    piece.fill(0);
                    match unreadable.last_mut() {
                        Some((o, l)) if *o + *l == at => *l += sector,
                        _ => unreadable.push((at, sector)),
                    }
                }
            }
        }
    }
    unreadable
}

/// Classify every unit of a chunk read back from `off`, skipping the unreadable ranges
/// (which become extents of their own); returns the extents and the good bytes.
fn check_chunk(
    stamper: &Stamper,
    buf: &[u8],
    off: u64,
    unreadable: &[(u64, u64)],
) -> (Vec<Extent>, u64) {
    let mut list = ExtentList::new(usize::MAX);
    let mut good = 0u64;
    let mut pos = off;
    let end = off + buf.len() as u64;
    let mut skips = unreadable.iter().peekable();
    while pos < end {
        // Checked stretch up to the next unreadable range.
        let stop = skips.peek().map_or(end, |&&(o, _)| o.min(end));
        if stop > pos {
            let lo = (pos - off) as usize;
            let hi = (stop - off) as usize;
            good += UNIT as u64
                * stamper.check(&buf[lo..hi], pos, |at, class| {
                    let (kind, from) = match class {
                        UnitClass::Changed { .. } => (ExtentKind::Changed, None),
                        UnitClass::Overwritten { from } => (ExtentKind::Overwritten, Some(from)),
                        _ => (ExtentKind::Bad, None),
                    };
                    list.push(at, UNIT as u64, kind, from);
                }) as u64;
        }
        if let Some(&(o, l)) = skips.next() {
            list.push(o, l, ExtentKind::Unreadable, None);
            pos = o + l;
        } else {
            pos = end;
        }
    }
    (list.extents, good)
}

/// A chunk read, on its way to the checker: its buffer and the sector ranges that could
/// not be read.
type ReadBack = (Done, AlignedBuf, Vec<(u64, u64)>);

/// An I/O thread of the read pass: read the next chunk into a free buffer, as soon as
/// there is one, and pass it on to be checked.
fn reader<B: Backend + ?Sized>(
    pipe: &Pipeline,
    mut h: Handle<'_, B>,
    end: u64,
    chunk: u64,
    sector: u64,
    deadline: Option<u64>,
    tx: SyncSender<ReadBack>,
) {
    while let Some((off, n, mut buf)) = pipe.next_chunk(end, chunk) {
        let mut done = Done::new(off, n);
        let unreadable = read_chunk(&mut h, &mut buf[..n as usize], off, sector, &mut done);
        done.clock = h.clock_ns();
        if deadline.is_some_and(|d| done.clock > d) || done.fatal.is_some() {
            pipe.stop();
        }
        if tx.send((done, buf, unreadable)).is_err() {
            pipe.stop();
            return;
        }
    }
}

/// The CPU side of the read pass: check each chunk read, give its buffer back.
fn checker(
    pipe: &Pipeline,
    stamper: Stamper,
    rx: std::sync::mpsc::Receiver<ReadBack>,
    tx: SyncSender<Done>,
) {
    for (mut done, buf, unreadable) in rx.iter() {
        if done.fatal.is_none() {
            let data = &buf[..done.len as usize];
            (done.extents, done.good) = check_chunk(&stamper, data, done.offset, &unreadable);
        }
        pipe.give_back(buf, false);
        if tx.send(done).is_err() {
            pipe.stop();
            return;
        }
    }
}

/// The CPU side of the write pass: stamp chunks in ascending order into free buffers.
fn stamper_thread(pipe: &Pipeline, stamper: Stamper, end: u64, chunk: u64) {
    while let Some((off, n, mut buf)) = pipe.next_chunk(end, chunk) {
        stamper.fill(&mut buf[..n as usize], off);
        let mut q = pipe.lock();
        q.filled.push_back((off, n, buf));
        drop(q);
        pipe.changed.notify_all();
    }
    pipe.lock().all_filled = true;
    pipe.changed.notify_all();
}

/// An I/O thread of the write pass: write the stamped chunks in order, as soon as they
/// are ready.
fn writer<B: Backend + ?Sized>(
    pipe: &Pipeline,
    mut h: Handle<'_, B>,
    sector: u64,
    deadline: Option<u64>,
    tx: SyncSender<Done>,
) {
    while let Some((off, n, buf)) = pipe.wait_for(|q| match q.filled.pop_front() {
        Some(c) => Some(Some(c)),
        None if q.all_filled => Some(None),
        None => None,
    }) {
        let mut done = Done::new(off, n);
        write_chunk(&mut h, &buf[..n as usize], off, sector, &mut done);
        done.clock = h.clock_ns();
        let stop = deadline.is_some_and(|d| done.clock > d) || done.fatal.is_some();
        pipe.give_back(buf, stop);
        if tx.send(done).is_err() {
            pipe.stop();
            return;
        }
    }
}

/// Run the write or the read pass from `state.next` until the end, the time budget, or a
/// fatal error; completed chunks are applied to the state in order.
fn run_phase<B: Backend + ?Sized>(
    dev: &mut B,
    state: &mut VerifyState,
    ctl: &mut VerifyControl,
    sector: u64,
    t0: u64,
    phase: Phase,
) -> Result<()> {
    let stamper = Stamper::new(state.salt);
    let chunk = state.chunk;
    let end = state.end();
    let from = state.next;
    let deadline = ctl.time_budget_ns.map(|b| t0.saturating_add(b));
    let depth = ctl.iodepth.clamp(1, MAX_IODEPTH);
    let mut handles = Vec::with_capacity(depth);
    while handles.len() + 1 < depth {
        match dev.try_clone_handle() {
            Some(h) => handles.push(Handle::Extra(h)),
            None => break,
        }
    }
    ctl.iodepth = handles.len() + 1;
    let phase_start = dev.clock_ns();
    let mut iv = Interval {
        offset: from,
        bytes: 0,
        started: phase_start,
    };
    let mut result = Ok(());
    {
        handles.push(Handle::Main(&mut *dev));
        let pipe = Pipeline {
            queue: std::sync::Mutex::new(Queue {
                next: from,
                free: (0..handles.len() + 2)
                    .map(|_| AlignedBuf::new(chunk as usize))
                    .collect(),
                filled: Default::default(),
                all_filled: false,
                stop: false,
            }),
            changed: std::sync::Condvar::new(),
        };
        let (tx, rx) = sync_channel::<Done>(handles.len() + 2);
        std::thread::scope(|s| {
            let pipe = &pipe;
            if phase == Phase::Write {
                s.spawn(move || stamper_thread(pipe, stamper, end, chunk));
                for h in handles {
                    let tx = tx.clone();
                    s.spawn(move || writer(pipe, h, sector, deadline, tx));
                }
            } else {
                let (to_check, checks) = sync_channel(handles.len() + 2);
                let tx = tx.clone();
                s.spawn(move || checker(pipe, stamper, checks, tx));
                for h in handles {
                    let to_check = to_check.clone();
                    s.spawn(move || reader(pipe, h, end, chunk, sector, deadline, to_check));
                }
                drop(to_check); // the checker ends when the last reader does
            }
            drop(tx);
            // Chunks finish out of order at depths above one: apply them in order, so
            // `next` always marks a prefix that is completely done.
            let mut pending = std::collections::BTreeMap::new();
            let mut failed = false;
            let mut since_save = 0u64;
            let mut clock = phase_start;
            for done in rx.iter() {
                if phase == Phase::Write {
                    state.bytes_written += done.written;
                }
                pending.insert(done.offset, done);
                while let Some(done) = pending.remove(&state.next) {
                    if let Some(e) = done.fatal {
                        let what = if phase == Phase::Write {
                            "writing"
                        } else {
                            "reading"
                        };
                        result = Err(Error::io(format!("{what} at offset {}", done.offset), e));
                        failed = true;
                        pipe.stop();
                        break;
                    }
                    let target = if phase == Phase::Write {
                        &mut state.unwritable
                    } else {
                        state.bytes_read += done.len;
                        &mut state.extents
                    };
                    for e in done.extents {
                        target.push(e.offset, e.length, e.kind, e.from);
                    }
                    state.good_bytes += done.good;
                    state.next = done.offset + done.len;
                    clock = clock.max(done.clock);
                    iv.bytes += done.len;
                    iv.flush(phase, &mut state.samples, clock, false, ctl.sample_bytes);
                    (ctl.progress)(phase, state.next - state.start, state.length);
                    since_save += done.len;
                    if since_save >= ctl.save_every {
                        since_save = 0;
                        if let Err(e) = (ctl.save)(state) {
                            result = Err(e);
                            failed = true;
                            pipe.stop();
                            break;
                        }
                    }
                }
                if failed {
                    // Later chunks stay undone in the state; a resume redoes them.
                    pending.clear();
                }
            }
        });
    }
    let now = dev.clock_ns();
    iv.flush(phase, &mut state.samples, now, true, ctl.sample_bytes);
    match phase {
        Phase::Write => state.write_ns += now.saturating_sub(phase_start),
        _ => state.read_ns += now.saturating_sub(phase_start),
    }
    result?;
    if state.next >= end {
        state.phase = if phase == Phase::Write {
            Phase::Read
        } else {
            Phase::Done
        };
    }
    (ctl.save)(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sim::{SimConfig, SimDevice};

    fn run_sim(spec: &str, start: u64, len: u64) -> VerifyState {
        let mut dev = SimDevice::new(SimConfig::parse(spec).unwrap());
        let mut st = VerifyState::new("sim".into(), dev.size_bytes(), start, len, 77);
        let mut save = |_: &VerifyState| Ok(());
        let mut prog = |_, _, _| {};
        let mut ctl = VerifyControl {
            time_budget_ns: None,
            sample_bytes: 4 << 20,
            save_every: 16 << 20,
            save: &mut save,
            stop_after_write: false,
            progress: &mut prog,
            iodepth: DEFAULT_IODEPTH,
        };
        run(&mut dev, &mut st, &mut ctl).unwrap();
        st
    }

    #[test]
    fn an_honest_card_verifies_clean() {
        let st = run_sim("custom,size=64M,erase=1M,page=16K", 0, 64 << 20);
        assert_eq!(st.phase, Phase::Done);
        assert!(st.all_extents().is_empty());
        assert_eq!(st.good_bytes, 64 << 20);
        assert_eq!(st.bytes_written, 64 << 20);
        assert!(st.samples.iter().any(|s| s.phase == Phase::Read));
        assert!(st.samples.iter().all(|s| s.bytes_per_s > 0.0));
    }

    #[test]
    fn flips_errors_and_aliases_become_exact_extents() {
        let st = run_sim(
            "custom,size=64M,erase=1M,page=16K,fault=flip@5M+8K;eio@9M+1K",
            0,
            64 << 20,
        );
        let ex = st.all_extents();
        let summary: Vec<_> = ex.iter().map(|e| (e.offset, e.length, e.kind)).collect();
        assert_eq!(
            summary,
            vec![
                (5 << 20, 8192, ExtentKind::Changed),
                (9 << 20, 1024, ExtentKind::Unreadable),
                (9 << 20, 1024, ExtentKind::Unwritable),
            ]
        );
        let wrap = run_sim(
            "custom,size=64M,erase=1M,page=16K,real=48M,fake_mode=wrap",
            0,
            64 << 20,
        );
        let ex = wrap.all_extents();
        // The first 16 MiB hold the data written to 48..64 MiB; 48..64 MiB read the same.
        assert_eq!(ex[0].offset, 0);
        assert_eq!(ex[0].length, 16 << 20);
        assert_eq!(ex[0].kind, ExtentKind::Overwritten);
        assert_eq!(ex[0].from, Some(48 << 20));
        assert_eq!(ex.len(), 1, "48..64 MiB read back their own stamps: {ex:?}");
    }

    #[test]
    fn a_stopped_run_resumes_where_it_stopped() {
        let mut dev =
            SimDevice::new(SimConfig::parse("custom,size=64M,erase=1M,page=16K").unwrap());
        let mut st = VerifyState::new("sim".into(), dev.size_bytes(), 0, 32 << 20, 5);
        let mut saved = Vec::new();
        {
            let mut save = |s: &VerifyState| {
                saved.push(s.clone());
                Ok(())
            };
            let mut prog = |_, _, _| {};
            let mut ctl = VerifyControl {
                time_budget_ns: Some(100_000_000),
                sample_bytes: 1 << 20,
                save_every: 4 << 20,
                save: &mut save,
                stop_after_write: false,
                progress: &mut prog,
                iodepth: DEFAULT_IODEPTH,
            };
            run(&mut dev, &mut st, &mut ctl).unwrap();
        }
        assert_eq!(
            st.phase,
            Phase::Write,
            "0.1 s of simulated time writes ~1 MiB"
        );
        assert!(st.next > 0 && st.next < 32 << 20);
        let mut resumed: VerifyState =
            serde_json::from_str(&serde_json::to_string(&st).unwrap()).unwrap();
        let mut save = |_: &VerifyState| Ok(());
        let mut prog = |_, _, _| {};
        let mut ctl = VerifyControl {
            time_budget_ns: None,
            sample_bytes: 1 << 20,
            save_every: 4 << 20,
            save: &mut save,
            stop_after_write: false,
            progress: &mut prog,
            iodepth: DEFAULT_IODEPTH,
        };
        run(&mut dev, &mut resumed, &mut ctl).unwrap();
        assert_eq!(resumed.phase, Phase::Done);
        assert_eq!(resumed.good_bytes, 32 << 20);
        assert!(resumed.all_extents().is_empty());
        assert!(!saved.is_empty());
    }

    #[test]
    fn deeper_queues_on_a_file_apply_chunks_in_order_and_find_a_flip() {
        use crate::backend::SyncBackend;
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("card.img");
        let size = 24u64 << 20;
        std::fs::File::create(&path).unwrap().set_len(size).unwrap();
        let open = || {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .unwrap();
            SyncBackend::new(f, size, 512, false)
        };
        for depth in [1, 3, MAX_IODEPTH] {
            let mut dev = open();
            assert!(dev.try_clone_handle().is_some());
            // Not a whole number of chunks: the last one is short.
            let len = size - (1 << 20) - 4096;
            let mut st = VerifyState::new("file".into(), size, 4096, len, depth as u64);
            let mut save = |_: &VerifyState| Ok(());
            let mut prog = |_, _, _| {};
            let mut ctl = VerifyControl {
                time_budget_ns: None,
                sample_bytes: 2 << 20,
                save_every: 4 << 20,
                save: &mut save,
                stop_after_write: true,
                progress: &mut prog,
                iodepth: depth,
            };
            run(&mut dev, &mut st, &mut ctl).unwrap();
            assert_eq!(
                (st.phase, st.next, st.bytes_written),
                (Phase::Read, 4096, len)
            );
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.write_all_at(&[0xa5], 4096 + (7 << 20) + 1000).unwrap();
            drop(f);
            ctl.stop_after_write = false;
            run(&mut dev, &mut st, &mut ctl).unwrap();
            assert_eq!(st.phase, Phase::Done);
            let ex = st.all_extents();
            assert_eq!(ex.len(), 1, "depth {depth}: {ex:?}");
            assert_eq!(
                (ex[0].offset, ex[0].length),
                (4096 + (7 << 20) + 512, 512),
                "depth {depth}"
            );
            assert_eq!(st.good_bytes, len - 512);
            let sampled: u64 = st
                .samples
                .iter()
                .filter(|s| s.phase == Phase::Read)
                .map(|s| s.bytes)
                .sum();
            assert_eq!(sampled, len, "samples cover the read pass once");
        }
    }
}
