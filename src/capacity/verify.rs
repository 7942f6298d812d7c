//! The full-surface verify engine: write stamps over a range, read everything back and
//! classify every unit, merging what went wrong into extents.
//!
//! Stamps are generated and checked while the engine's queue keeps requests at the
//! device, so the device, not the CPU, sets the pace. The run's state (salt, phase, position,
//! extents so far) is small and serialisable: `--resume` continues from it.

use super::extent::{Extent, ExtentKind, ExtentList};
use crate::backend::queue::{BackendQueue, Claimed, Completion, IoQueue, Op, Request, Stack};
use crate::backend::Backend;
use crate::pattern::{Stamper, UnitClass, UNIT};
use crate::vocab::error::is_vanished;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Write,
    Read,
    Done,
}

/// Throughput of one stretch of the device in one phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    /// `verify DIR` in a directory others can write: the random part of its file names
    /// (`flashscope-verify-NNNN-<tag>.bin`), so a later pass finds them again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_tag: Option<u32>,
    /// The write pass ended here: the filesystem had no more room (the range to read
    /// back ends here too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_space: Option<OutOfSpace>,
}

/// Where a filesystem refused verify's writes for want of room: not a bad medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OutOfSpace {
    /// The first byte not written (every byte before it in the range was written).
    pub at: u64,
    /// EDQUOT (the user's quota), not ENOSPC.
    pub quota: bool,
}

/// A write refused because the filesystem is full or the quota spent.
fn out_of_space(e: &std::io::Error) -> Option<bool> {
    match e.raw_os_error() {
        Some(libc::ENOSPC) => Some(false),
        Some(libc::EDQUOT) => Some(true),
        _ => None,
    }
}

/// The bytes a fresh run writes and reads at once.
pub const CHUNK_BYTES: u64 = 1 << 20;

impl VerifyState {
    /// A fresh run over `[start, start+length)`, in chunks of [`CHUNK_BYTES`].
    pub fn new(identity: String, size_bytes: u64, start: u64, length: u64, salt: u64) -> Self {
        VerifyState {
            version: 1,
            target_identity: identity,
            size_bytes,
            salt,
            start,
            length,
            chunk: CHUNK_BYTES,
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
            file_tag: None,
            out_of_space: None,
        }
    }

    pub fn end(&self) -> u64 {
        self.start + self.length
    }

    /// The end of what is written and read back: the range's end, or where the
    /// filesystem ran out of space.
    pub fn written_end(&self) -> u64 {
        self.out_of_space.map_or(self.end(), |o| o.at)
    }

    /// Check every field of a state read back from a file (a damaged or hand-written one
    /// must be refused, not loop forever on a zero chunk or overflow on a huge one): the
    /// field that is wrong and why, or `Ok`.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.version != 1 {
            return Err(format!(
                "version {} (this flashscope writes 1)",
                self.version
            ));
        }
        if !(512..=64 << 20).contains(&self.chunk) || self.chunk % 512 != 0 {
            return Err(format!(
                "chunk {} (a multiple of 512 bytes up to 64 MiB)",
                self.chunk
            ));
        }
        let end = self
            .start
            .checked_add(self.length)
            .filter(|&e| e <= self.size_bytes);
        let Some(end) = end.filter(|_| self.length > 0) else {
            return Err(format!(
                "start {} + length {} (a non-empty range within size_bytes {})",
                self.start, self.length, self.size_bytes
            ));
        };
        if !(self.start..=end).contains(&self.next) {
            return Err(format!(
                "next {} (between start and start + length)",
                self.next
            ));
        }
        for e in self.extents.extents.iter().chain(&self.unwritable.extents) {
            let inside = e
                .offset
                .checked_add(e.length)
                .is_some_and(|x| e.offset >= self.start && x <= end && e.length > 0);
            if !inside {
                return Err(format!(
                    "extent at {} of {} bytes (within the range)",
                    e.offset, e.length
                ));
            }
        }
        if let Some(o) = self
            .out_of_space
            .filter(|o| !(self.start..=end).contains(&o.at))
        {
            return Err(format!(
                "out_of_space at {} (between start and start + length)",
                o.at
            ));
        }
        if self.good_bytes > self.length {
            return Err(format!("good_bytes {} (at most length)", self.good_bytes));
        }
        Ok(())
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
/// Both passes run on the one engine interface (`backend::queue`): on a device with a fast
/// path, an io_uring queue of `ctl.iodepth` requests on its descriptor, every write claimed
/// on `dev`'s stack first (preserve mode saves each chunk just before it is overwritten,
/// the budget counts it); elsewhere (the simulator, a directory) `dev` itself, one request
/// at a time, so the order of I/O, hence the simulated clock, is exact. One thread stamps
/// the next chunk or checks the last one while the queue keeps the device busy; one
/// buffer more than the depth circulates, which bounds the memory.
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
    let mut dev = dev;
    let dev: &mut dyn Backend = &mut dev;
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
    /// The filesystem had no room from here on (write pass).
    full: Option<OutOfSpace>,
}

/// Errors that end the run rather than mark sectors bad: the device vanished, a signal
/// asked preserve mode to stop and restore, or the write budget is spent.
fn is_fatal(e: &std::io::Error) -> bool {
    is_vanished(e)
        || e.kind() == std::io::ErrorKind::Interrupted
        || crate::backend::is_budget_exhausted(e)
}

/// A chunk in flight or completed and not yet applied: its buffer and the result.
struct Slot {
    buf: usize,
    len: usize,
    result: Option<(std::io::Result<usize>, u64)>,
}

/// One pass on a queue: chunks issued in ascending order, applied in that order.
struct Pass<'q> {
    q: &'q mut dyn IoQueue,
    op: Op,
    free: Vec<usize>,
    /// By offset: chunks issued and not yet applied.
    slots: BTreeMap<u64, Slot>,
    reaped: Vec<Completion>,
}

/// Tags of the sector-by-sector retries (chunk tags are offsets, far below).
const RETRY_TAG: u64 = u64::MAX;

impl Pass<'_> {
    /// Move completions into their slots; a retry's result is returned.
    fn take_reaped(&mut self) -> Option<std::io::Result<usize>> {
        let now = self.q.clock_ns();
        let mut retry = None;
        for c in self.reaped.drain(..) {
            if c.tag == RETRY_TAG {
                retry = Some(c.result);
            } else if let Some(s) = self.slots.get_mut(&c.tag) {
                s.result = Some((c.result, now));
            }
        }
        retry
    }

    /// One request on its own, waiting for it (the chunks in flight go on meanwhile).
    fn one(
        &mut self,
        op: Op,
        offset: u64,
        buf: usize,
        at: usize,
        len: usize,
    ) -> std::io::Result<()> {
        let req = Request {
            op,
            offset,
            len,
            buf,
            at,
            tag: RETRY_TAG,
        };
        self.q.queue(req)?;
        self.q.commit()?;
        loop {
            self.q.reap(1, &mut self.reaped)?;
            if let Some(r) = self.take_reaped() {
                return match r {
                    Ok(n) if n == len => Ok(()),
                    Ok(n) => Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("short transfer: {n} of {len} bytes"),
                    )),
                    Err(e) => Err(e),
                };
            }
        }
    }

    /// A chunk whose write failed: write it sector by sector to find the sectors that
    /// refuse writes.
    fn write_retry(&mut self, off: u64, buf: usize, len: usize, sector: u64, done: &mut Done) {
        let mut bad = ExtentList::new(usize::MAX);
        for at in (0..len).step_by(sector as usize) {
            let n = (len - at).min(sector as usize);
            match self.one(Op::Write, off + at as u64, buf, at, n) {
                Ok(()) => done.written += n as u64,
                Err(e) if is_fatal(&e) => {
                    done.fatal = Some(e);
                    return;
                }
                Err(e) if out_of_space(&e).is_some() => {
                    done.full = out_of_space(&e).map(|quota| OutOfSpace {
                        at: off + at as u64,
                        quota,
                    });
                    break;
                }
                Err(_) => bad.push(off + at as u64, sector, ExtentKind::Unwritable, None),
            }
        }
        done.extents = bad.extents;
    }

    /// A chunk whose read failed: read it sector by sector; the sectors that cannot be
    /// read are zeroed and returned.
    fn read_retry(
        &mut self,
        off: u64,
        buf: usize,
        len: usize,
        sector: u64,
        done: &mut Done,
    ) -> Vec<(u64, u64)> {
        let mut unreadable: Vec<(u64, u64)> = Vec::new();
        for at in (0..len).step_by(sector as usize) {
            let n = (len - at).min(sector as usize);
            let pos = off + at as u64;
            match self.one(Op::Read, pos, buf, at, n) {
                Ok(()) => {}
                Err(e) if is_fatal(&e) => {
                    done.fatal = Some(e);
                    break;
                }
                Err(_) => {
                    self.q.buf(buf)[at..at + n].fill(0);
                    match unreadable.last_mut() {
                        Some((o, l)) if *o + *l == pos => *l += n as u64,
                        _ => unreadable.push((pos, n as u64)),
                    }
                }
            }
        }
        unreadable
    }
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

/// Run the write or the read pass from `state.next` until the end, the time budget, or a
/// fatal error, on the device's fast queue when it has one, else on `dev` itself.
fn run_phase(
    dev: &mut dyn Backend,
    state: &mut VerifyState,
    ctl: &mut VerifyControl,
    sector: u64,
    t0: u64,
    phase: Phase,
) -> Result<()> {
    let depth = ctl.iodepth.clamp(1, MAX_IODEPTH);
    let chunk = state.chunk as usize;
    match dev.fast_queue(depth, depth + 1, chunk) {
        Some(fast) => {
            let stack: Stack<'_> = Mutex::new(dev);
            let mut q = Claimed::new(fast, &stack);
            ctl.iodepth = q.depth();
            run_pass(&mut q, state, ctl, sector, t0, phase)
        }
        None => {
            let mut q = BackendQueue::new(dev, 1, 2, chunk);
            ctl.iodepth = 1;
            run_pass(&mut q, state, ctl, sector, t0, phase)
        }
    }
}

fn run_pass(
    q: &mut dyn IoQueue,
    state: &mut VerifyState,
    ctl: &mut VerifyControl,
    sector: u64,
    t0: u64,
    phase: Phase,
) -> Result<()> {
    let stamper = Stamper::new(state.salt);
    let chunk = state.chunk;
    let end = state.written_end();
    let deadline = ctl.time_budget_ns.map(|b| t0.saturating_add(b));
    let depth = q.depth();
    let phase_start = q.clock_ns();
    let mut iv = Interval {
        offset: state.next,
        bytes: 0,
        started: phase_start,
    };
    let op = if phase == Phase::Write {
        Op::Write
    } else {
        Op::Read
    };
    let mut pass = Pass {
        q,
        op,
        // One buffer more than the depth: the next chunk is issued into it while the one
        // just completed is checked.
        free: (0..=depth).rev().collect(),
        slots: BTreeMap::new(),
        reaped: Vec::with_capacity(depth + 1),
    };
    let mut issue = state.next;
    let mut in_flight = 0usize;
    let mut stopping = false;
    // The filesystem ran out of room: nothing after it is applied.
    let mut filled = false;
    let mut result = Ok(());
    let mut since_save = 0u64;
    let mut clock = phase_start;
    loop {
        // Keep `depth` chunks in flight.
        let mut queued = false;
        while !stopping && issue < end && in_flight < depth {
            let Some(buf) = pass.free.pop() else { break };
            let n = (end - issue).min(chunk) as usize;
            if phase == Phase::Write {
                stamper.fill(&mut pass.q.buf(buf)[..n], issue);
            }
            let req = Request {
                op: pass.op,
                offset: issue,
                len: n,
                buf,
                at: 0,
                tag: issue,
            };
            if let Err(e) = pass.q.queue(req) {
                result = Err(Error::io(format!("queueing I/O at offset {issue}"), e));
                stopping = true;
                pass.free.push(buf);
                break;
            }
            pass.slots.insert(
                issue,
                Slot {
                    buf,
                    len: n,
                    result: None,
                },
            );
            issue += n as u64;
            in_flight += 1;
            queued = true;
        }
        if queued {
            let committed = pass.q.commit().and_then(|()| pass.q.kick());
            if let Err(e) = committed {
                // A refused claim (a signal, the budget, the journal) or a failed submit:
                // what did not reach the device stays undone in the state.
                let what = if phase == Phase::Write {
                    "writing"
                } else {
                    "reading"
                };
                let at = state.next;
                result = Err(Error::io(format!("{what} at offset {at}"), e));
                break;
            }
        }
        // Apply the completed chunks in order, so `next` always marks a prefix that is
        // completely done.
        while let Some(slot) = pass.slots.first_entry() {
            if slot.get().result.is_none() {
                break;
            }
            let (off, mut s) = slot.remove_entry();
            let Some((r, at_clock)) = s.result.take() else {
                break;
            };
            in_flight -= 1;
            let mut done = Done {
                offset: off,
                len: s.len as u64,
                clock: at_clock,
                written: 0,
                extents: Vec::new(),
                good: 0,
                fatal: None,
                full: None,
            };
            let mut unreadable = Vec::new();
            match r {
                Ok(n) if n == s.len => {
                    if phase == Phase::Write {
                        done.written = n as u64;
                    }
                }
                Err(e) if is_fatal(&e) => done.fatal = Some(e),
                Err(e) if phase == Phase::Write && out_of_space(&e).is_some() => {
                    done.full = out_of_space(&e).map(|quota| OutOfSpace { at: off, quota });
                }
                _ if phase == Phase::Write => {
                    pass.write_retry(off, s.buf, s.len, sector, &mut done);
                }
                _ => unreadable = pass.read_retry(off, s.buf, s.len, sector, &mut done),
            }
            if phase == Phase::Read && done.fatal.is_none() {
                let data = &pass.q.buf(s.buf)[..s.len];
                (done.extents, done.good) = check_chunk(&stamper, data, off, &unreadable);
            }
            pass.free.push(s.buf);
            if phase == Phase::Write {
                state.bytes_written += done.written;
            }
            if let Some(e) = done.fatal {
                let what = if phase == Phase::Write {
                    "writing"
                } else {
                    "reading"
                };
                result = Err(Error::io(format!("{what} at offset {}", done.offset), e));
                stopping = true;
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
            if let Some(full) = done.full {
                // The range ends where the room did: what is beyond was never written,
                // and what is still in flight past it is not counted.
                state.out_of_space = Some(full);
                state.next = full.at;
                (ctl.progress)(phase, state.next - state.start, state.length);
                stopping = true;
                filled = true;
                break;
            }
            state.next = done.offset + done.len;
            clock = clock.max(done.clock);
            iv.bytes += done.len;
            iv.flush(phase, &mut state.samples, clock, false, ctl.sample_bytes);
            (ctl.progress)(phase, state.next - state.start, state.length);
            if deadline.is_some_and(|d| done.clock > d) {
                stopping = true;
            }
            since_save += done.len;
            if since_save >= ctl.save_every {
                since_save = 0;
                if let Err(e) = (ctl.save)(state) {
                    result = Err(e);
                    stopping = true;
                    break;
                }
            }
        }
        if result.is_err() || filled {
            break;
        }
        if in_flight == 0 && (stopping || issue >= end) {
            break;
        }
        if let Err(e) = pass.q.reap(1, &mut pass.reaped) {
            result = Err(Error::io("waiting for the device", e));
            break;
        }
        pass.take_reaped();
    }
    // Later chunks stay undone in the state (a resume redoes them); let what is still in
    // flight finish before the buffers go.
    let mut tries = 0;
    while pass.q.in_flight() > 0 && tries < 1000 {
        tries += 1;
        if pass.q.reap(1, &mut pass.reaped).is_err() {
            break;
        }
        pass.reaped.clear();
    }
    let now = pass.q.clock_ns();
    iv.flush(phase, &mut state.samples, now, true, ctl.sample_bytes);
    match phase {
        Phase::Write => state.write_ns += now.saturating_sub(phase_start),
        _ => state.read_ns += now.saturating_sub(phase_start),
    }
    result?;
    if state.next >= state.written_end() {
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
        run_whole(&mut dev, &mut st);
        st
    }

    /// Both passes with the defaults, no budget, nothing saved.
    fn run_whole<B: Backend>(dev: &mut B, st: &mut VerifyState) {
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
        run(dev, st, &mut ctl).unwrap();
    }

    /// A filesystem that fills up under the run: every write that reaches past `room`
    /// bytes fails as a full filesystem (or a spent quota) does.
    struct Filling {
        dev: SimDevice,
        room: u64,
        errno: i32,
    }

    impl Backend for Filling {
        crate::backend::forward!(dev: size_bytes, logical_sector_bytes, flush, clock_ns, idle);
        fn read_at(&mut self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
            self.dev.read_at(buf, offset)
        }
        fn write_at(&mut self, buf: &[u8], offset: u64) -> std::io::Result<()> {
            if offset + buf.len() as u64 > self.room {
                return Err(std::io::Error::from_raw_os_error(self.errno));
            }
            self.dev.write_at(buf, offset)
        }
    }

    /// Issue 45 point 3: running out of space is not a bad medium. The write pass ends
    /// where the filesystem refused more, nothing past it is counted bad, and what was
    /// written is read back and checked.
    #[test]
    fn a_full_filesystem_ends_the_write_pass_and_what_was_written_is_verified() {
        for errno in [libc::ENOSPC, libc::EDQUOT] {
            let cfg = SimConfig::parse("custom,size=64M,erase=1M,page=16K").unwrap();
            let mut dev = Filling {
                dev: SimDevice::new(cfg),
                room: (20 << 20) + (512 << 10),
                errno,
            };
            let mut st = VerifyState::new("fs".into(), 64 << 20, 0, 64 << 20, 5);
            run_whole(&mut dev, &mut st);
            assert_eq!(st.phase, Phase::Done, "errno {errno}");
            assert!(st.all_extents().is_empty(), "{:?}", st.all_extents());
            let full = st.out_of_space.expect("the full filesystem is recorded");
            assert_eq!(full.at, 20 << 20, "the last whole chunk written");
            assert_eq!(full.quota, errno == libc::EDQUOT);
            assert_eq!(st.bytes_read, 20 << 20, "only what was written is read");
            assert_eq!(st.good_bytes, 20 << 20);
        }
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
            assert!(dev.fast_queue(2, 3, 1 << 20).is_some());
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
