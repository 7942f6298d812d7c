//! The full-surface verify engine: write stamps over a range, read everything back and
//! classify every unit, merging what went wrong into extents.
//!
//! Stamps are generated and checked on a second thread while the calling thread does the
//! I/O, so the device, not the CPU, sets the pace. The run's state (salt, phase, position,
//! extents so far) is small and serialisable: `--resume` continues from it.

use super::extent::{Extent, ExtentKind, ExtentList};
use super::stamp::{Stamper, UnitClass, UNIT};
use crate::backend::{AlignedBuf, Backend};
use crate::error::is_vanished;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

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

const BUFFERS: usize = 4;

/// Run (or continue) a verify described by `state` on `dev`.
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
        write_phase(dev, state, ctl, sector, t0)?;
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
        read_phase(dev, state, ctl, sector, t0)?;
    }
    Ok(())
}

fn write_phase<B: Backend + ?Sized>(
    dev: &mut B,
    state: &mut VerifyState,
    ctl: &mut VerifyControl,
    sector: u64,
    t0: u64,
) -> Result<()> {
    let stamper = Stamper::new(state.salt);
    let chunk = state.chunk;
    let end = state.end();
    let from = state.next;
    let (tx_full, rx_full) = sync_channel::<(u64, usize, AlignedBuf)>(BUFFERS);
    let (tx_empty, rx_empty) = sync_channel::<AlignedBuf>(BUFFERS);
    for _ in 0..BUFFERS {
        let _ = tx_empty.send(AlignedBuf::new(chunk as usize));
    }
    let mut result = Ok(());
    std::thread::scope(|s| {
        s.spawn(move || generate(stamper, from, end, chunk, rx_empty, tx_full));
        let phase_start = dev.clock_ns();
        let mut iv = Interval {
            offset: from,
            bytes: 0,
            started: phase_start,
        };
        let mut since_save = 0;
        for (off, n, buf) in rx_full.iter() {
            let r = dev.write_at(&buf[..n], off);
            match r {
                Ok(()) => state.bytes_written += n as u64,
                Err(e) if is_vanished(&e) || crate::backend::is_budget_exhausted(&e) => {
                    result = Err(Error::io(format!("writing at offset {off}"), e));
                    break;
                }
                Err(_) => {
                    // Find the sectors that refuse writes, one by one.
                    for (i, piece) in buf[..n].chunks(sector as usize).enumerate() {
                        let at = off + i as u64 * sector;
                        match dev.write_at(piece, at) {
                            Ok(()) => state.bytes_written += sector,
                            Err(_) => {
                                state
                                    .unwritable
                                    .push(at, sector, ExtentKind::Unwritable, None)
                            }
                        }
                    }
                }
            }
            state.next = off + n as u64;
            iv.bytes += n as u64;
            let now = dev.clock_ns();
            iv.flush(
                Phase::Write,
                &mut state.samples,
                now,
                false,
                ctl.sample_bytes,
            );
            (ctl.progress)(Phase::Write, state.next - state.start, state.length);
            let _ = tx_empty.send(buf);
            since_save += n as u64;
            if since_save >= ctl.save_every {
                since_save = 0;
                if let Err(e) = (ctl.save)(state) {
                    result = Err(e);
                    break;
                }
            }
            if ctl
                .time_budget_ns
                .is_some_and(|b| dev.clock_ns().saturating_sub(t0) > b)
            {
                break;
            }
        }
        drop(rx_full);
        drop(tx_empty);
        let now = dev.clock_ns();
        iv.flush(
            Phase::Write,
            &mut state.samples,
            now,
            true,
            ctl.sample_bytes,
        );
        state.write_ns += now.saturating_sub(phase_start);
    });
    result?;
    if state.next >= end {
        state.phase = Phase::Read;
    }
    (ctl.save)(state)
}

fn generate(
    stamper: Stamper,
    from: u64,
    end: u64,
    chunk: u64,
    empty: Receiver<AlignedBuf>,
    full: SyncSender<(u64, usize, AlignedBuf)>,
) {
    let mut off = from;
    while off < end {
        let Ok(mut buf) = empty.recv() else {
            return;
        };
        let n = (end - off).min(chunk) as usize;
        stamper.fill(&mut buf[..n], off);
        if full.send((off, n, buf)).is_err() {
            return;
        }
        off += n as u64;
    }
}

/// A chunk read back, with the sector ranges that could not be read.
type ReadChunk = (u64, usize, AlignedBuf, Vec<(u64, u64)>);
/// A checked chunk: its buffer back, the extents found, and the good bytes.
type Checked = (u64, usize, AlignedBuf, Vec<Extent>, u64);

fn check(stamper: Stamper, rx: Receiver<ReadChunk>, tx: SyncSender<Checked>) {
    for (off, n, buf, unreadable) in rx.iter() {
        let mut list = ExtentList::new(usize::MAX);
        let mut good = 0u64;
        let mut pos = off;
        let end = off + n as u64;
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
                            UnitClass::Overwritten { from } => {
                                (ExtentKind::Overwritten, Some(from))
                            }
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
        if tx.send((off, n, buf, list.extents, good)).is_err() {
            return;
        }
    }
}

fn read_phase<B: Backend + ?Sized>(
    dev: &mut B,
    state: &mut VerifyState,
    ctl: &mut VerifyControl,
    sector: u64,
    t0: u64,
) -> Result<()> {
    let stamper = Stamper::new(state.salt);
    let chunk = state.chunk;
    let end = state.end();
    let (tx_read, rx_read) = sync_channel::<ReadChunk>(BUFFERS);
    let (tx_done, rx_done) = sync_channel::<Checked>(BUFFERS);
    let mut pool: Vec<AlignedBuf> = (0..BUFFERS)
        .map(|_| AlignedBuf::new(chunk as usize))
        .collect();
    let mut result = Ok(());
    std::thread::scope(|s| {
        s.spawn(move || check(stamper, rx_read, tx_done));
        let phase_start = dev.clock_ns();
        let mut iv = Interval {
            offset: state.next,
            bytes: 0,
            started: phase_start,
        };
        let mut since_save = 0u64;
        let mut off = state.next;
        let mut in_flight = 0usize;
        let mut stopping = false;
        loop {
            // Keep the checker busy: read while buffers are free.
            while !stopping && off < end {
                let Some(mut buf) = pool.pop() else { break };
                let n = (end - off).min(chunk) as usize;
                let r = dev.read_at(&mut buf[..n], off);
                let mut unreadable = Vec::new();
                match r {
                    Ok(()) => {}
                    Err(e) if is_vanished(&e) => {
                        result = Err(Error::io(format!("reading at offset {off}"), e));
                        stopping = true;
                        pool.push(buf);
                        break;
                    }
                    Err(_) => {
                        for i in 0..(n as u64 / sector) {
                            let at = off + i * sector;
                            let lo = (i * sector) as usize;
                            let piece = &mut buf[lo..lo + sector as usize];
                            if dev.read_at(piece, at).is_err() {
                                piece.fill(0);
                                match unreadable.last_mut() {
                                    Some((o, l)) if *o + *l == at => *l += sector,
                                    _ => unreadable.push((at, sector)),
                                }
                            }
                        }
                    }
                }
                state.bytes_read += n as u64;
                iv.bytes += n as u64;
                let now = dev.clock_ns();
                iv.flush(
                    Phase::Read,
                    &mut state.samples,
                    now,
                    false,
                    ctl.sample_bytes,
                );
                if tx_read.send((off, n, buf, unreadable)).is_err() {
                    stopping = true;
                    break;
                }
                in_flight += 1;
                off += n as u64;
                if ctl
                    .time_budget_ns
                    .is_some_and(|b| dev.clock_ns().saturating_sub(t0) > b)
                {
                    stopping = true;
                }
            }
            if in_flight == 0 {
                break;
            }
            let Ok((coff, n, buf, extents, good)) = rx_done.recv() else {
                break;
            };
            in_flight -= 1;
            for e in extents {
                state.extents.push(e.offset, e.length, e.kind, e.from);
            }
            state.good_bytes += good;
            state.next = coff + n as u64;
            pool.push(buf);
            (ctl.progress)(Phase::Read, state.next - state.start, state.length);
            since_save += n as u64;
            if since_save >= ctl.save_every {
                since_save = 0;
                if let Err(e) = (ctl.save)(state) {
                    result = Err(e);
                    stopping = true;
                }
            }
        }
        drop(tx_read);
        let now = dev.clock_ns();
        iv.flush(Phase::Read, &mut state.samples, now, true, ctl.sample_bytes);
        state.read_ns += now.saturating_sub(phase_start);
    });
    result?;
    if state.next >= end {
        state.phase = Phase::Done;
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
        };
        run(&mut dev, &mut resumed, &mut ctl).unwrap();
        assert_eq!(resumed.phase, Phase::Done);
        assert_eq!(resumed.good_bytes, 32 << 20);
        assert!(resumed.all_extents().is_empty());
        assert!(!saved.is_empty());
    }
}
