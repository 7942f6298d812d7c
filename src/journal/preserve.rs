//! `Preserve<B>`: a backend wrapper that saves every region to the journal before it is
//! first overwritten, and writes it all back at the end (f3's "safe device" idea).

use super::format::{self, Journal, JournalWriter, MAX_RECORD};
use super::identity::Identity;
use super::intervals::IntervalSet;
use crate::backend::{AlignedBuf, Backend};
use crate::{Error, Result};
use std::io;
use std::path::{Path, PathBuf};

/// Why saving stopped: a signal asked it to, or the journal or target failed.
enum Stop {
    Signal(io::Error),
    Failed(String, io::Error),
}

/// A check called before every I/O: `Some(signal)` asks the test to stop.
pub type StopCheck = Box<dyn Fn() -> Option<i32> + Send>;

/// Told how saving, restoring and verifying go: `Some((phase, bytes done, bytes in all))`
/// as they run (`phase` is "saving", "restoring" or "verifying"; saving's total is 0, not
/// known here), `None` when the phase ends. For the progress line.
pub type ProgressHook = Box<dyn FnMut(Option<(&'static str, u64, u64)>) + Send>;

/// A save of at least this many bytes at once is told to the [`ProgressHook`]; smaller
/// ones (a probe's scattered writes) would only make the line flicker.
const TOLD_SAVE_BYTES: u64 = 4 << 20;

/// What a restore did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RestoreSummary {
    pub regions: u64,
    pub bytes: u64,
    /// Regions read back and found equal to the journal.
    pub verified: u64,
}

/// Regions announced with `prepare_write` up to this size are saved at once, before the
/// test's timed writes; larger ones are saved as the writes reach them.
const EAGER_SAVE_BYTES: u64 = 64 << 20;

/// How far ahead of a write into an announced region the save reaches, so a sequential
/// test reads and fsyncs the journal once per window rather than once per write.
const SAVE_AHEAD_BYTES: u64 = 32 << 20;

/// Wraps a backend so that nothing it overwrites is lost: each region is read and
/// appended (fsynced) to a journal before its first overwrite; `finish` writes back what
/// was overwritten, verifies it and removes the journal.
///
/// Preserve mode never costs more wear than the test: `finish` writes back only the
/// sectors the test wrote (a region saved ahead but never reached is left alone), so the
/// restore writes at most the test's bytes, rounded to whole sectors. The time spent
/// saving is hidden from `clock_ns`, so timings and time budgets see the test's I/O only.
pub struct Preserve<B> {
    inner: B,
    writer: Option<JournalWriter>,
    path: PathBuf,
    saved: IntervalSet,
    /// Sectors the test wrote or discarded through this wrapper: what `finish` restores.
    written: IntervalSet,
    /// Large regions announced with `prepare_write`, saved as the writes reach them.
    announced: IntervalSet,
    /// Device time spent saving, taken out of `clock_ns`.
    hidden_ns: u64,
    stop: Option<StopCheck>,
    progress: Option<ProgressHook>,
    /// Bytes written to the device by the restore (wear the test also causes).
    pub restored_bytes: u64,
    /// The first journal or target write error: it ends the test (every later I/O fails
    /// with it) and the session reports it instead of a result.
    failure: Option<String>,
    /// What `finish` wrote back that did not read back as saved.
    unrestored: Vec<(u64, u64)>,
}

impl<B: Backend> Preserve<B> {
    /// Start a new journal at `path` for the target `identity` describes.
    pub fn new(inner: B, path: &Path, identity: &Identity) -> Result<Self> {
        let writer = JournalWriter::create(path, identity)?;
        Ok(Preserve {
            inner,
            writer: Some(writer),
            path: path.to_path_buf(),
            saved: IntervalSet::new(),
            written: IntervalSet::new(),
            announced: IntervalSet::new(),
            hidden_ns: 0,
            stop: None,
            progress: None,
            restored_bytes: 0,
            failure: None,
            unrestored: Vec::new(),
        })
    }

    /// Check `stop` before every I/O and fail it with `ErrorKind::Interrupted` once it
    /// reports a signal (see `signals`).
    pub fn with_stop_check(mut self, stop: StopCheck) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Tell `hook` how long saves, the restore and its verification go.
    pub fn with_progress(mut self, hook: ProgressHook) -> Self {
        self.progress = Some(hook);
        self
    }

    /// After [`Preserve::finish`]: the byte ranges (offset, length) written back that read
    /// back different from the journal, in 512-byte units; empty when all were restored.
    pub fn unrestored(&self) -> &[(u64, u64)] {
        &self.unrestored
    }

    pub fn journal_path(&self) -> &Path {
        &self.path
    }

    /// Bytes of the device saved in the journal so far.
    pub fn bytes_saved(&self) -> u64 {
        self.saved.covered_bytes()
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut B {
        &mut self.inner
    }

    fn check_stop(&self) -> io::Result<()> {
        if let Some(f) = &self.failure {
            return Err(io::Error::other(f.clone()));
        }
        if let Some(sig) = self.stop.as_ref().and_then(|f| f()) {
            return Err(crate::signals::interrupted_error(sig));
        }
        Ok(())
    }

    /// The journal or target write error that ended the test, if one did: which file
    /// failed, doing what, and why. A test that met one has no result.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Remember the first failure (what failed, and why) and return the error as it was,
    /// so a caller still sees e.g. a vanished device for what it is.
    fn fail(&mut self, what: String, e: io::Error) -> io::Error {
        self.failure.get_or_insert_with(|| format!("{what}: {e}"));
        e
    }

    /// Save `[offset, offset+len)` (widened to whole sectors) unless already saved, and
    /// make the journal durable before returning.
    pub fn save(&mut self, offset: u64, len: u64) -> io::Result<()> {
        self.save_all(&[(offset, len)])
    }

    /// Bytes the test overwrote through this wrapper (whole sectors): what `finish` writes
    /// back.
    pub fn bytes_overwritten(&self) -> u64 {
        self.written.covered_bytes()
    }

    /// `[offset, offset+len)` widened to whole sectors, within the device.
    fn sectors(&self, offset: u64, len: u64) -> (u64, u64) {
        let sector = self.inner.logical_sector_bytes().max(1) as u64;
        let start = offset / sector * sector;
        let end = offset.saturating_add(len).div_ceil(sector) * sector;
        (start, end.min(self.inner.size_bytes()))
    }

    /// Save before overwriting `[offset, offset+len)`, and record it as written. When
    /// part of it is unsaved, also save up to `SAVE_AHEAD_BYTES` of the announced region
    /// behind it, in the same fsync.
    fn save_for_write(&mut self, offset: u64, len: u64) -> io::Result<()> {
        let (start, end) = self.sectors(offset, len);
        if !self.saved.gaps(start, end).is_empty() {
            let mut regions = vec![(start, end - start)];
            let ahead = self
                .announced
                .covered(end, end.saturating_add(SAVE_AHEAD_BYTES));
            regions.extend(ahead.into_iter().map(|(s, e)| (s, e - s)));
            self.save_all(&regions)?;
        }
        self.written.insert(start, end);
        Ok(())
    }

    /// Save `[offset, offset+len)` now and count all of it as overwritten, for a test that
    /// writes the region through descriptors of its own, past this wrapper: `finish` then
    /// writes all of it back.
    pub fn save_claimed(&mut self, offset: u64, len: u64) -> io::Result<()> {
        self.save(offset, len)?;
        let (start, end) = self.sectors(offset, len);
        self.written.insert(start, end);
        Ok(())
    }

    /// Save several regions with one fsync at the end (the plan of a test, before it runs).
    /// The device time this takes is hidden from `clock_ns`.
    pub fn save_all(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
        if let Some(f) = &self.failure {
            return Err(io::Error::other(f.clone()));
        }
        let t0 = self.inner.clock_ns();
        let saved = self.save_regions(regions);
        self.hidden_ns += self.inner.clock_ns().saturating_sub(t0);
        match saved {
            Ok(()) => Ok(()),
            Err(Stop::Signal(e)) => Err(e),
            Err(Stop::Failed(what, e)) => Err(self.fail(what, e)),
        }
    }

    fn save_regions(&mut self, regions: &[(u64, u64)]) -> std::result::Result<(), Stop> {
        let path = self.path.display().to_string();
        let journal = |e| Stop::Failed(format!("writing the journal {path}"), e);
        let Some(writer) = self.writer.as_mut() else {
            return Err(Stop::Failed(
                "saving a region".into(),
                io::Error::other("the journal is already finished; no more writes are preserved"),
            ));
        };
        let sector = self.inner.logical_sector_bytes().max(1) as u64;
        let size = self.inner.size_bytes();
        let mut appended = false;
        let gaps: u64 = regions
            .iter()
            .map(|&(offset, len)| {
                let start = offset / sector * sector;
                let end = (offset.saturating_add(len).div_ceil(sector) * sector).min(size);
                let gaps = self.saved.gaps(start, end);
                gaps.iter().map(|(s, e)| e - s).sum::<u64>()
            })
            .sum();
        let mut tell = self.progress.as_mut().filter(|_| gaps >= TOLD_SAVE_BYTES);
        let before = self.saved.covered_bytes();
        let mut done = 0;
        for &(offset, len) in regions {
            let start = offset / sector * sector;
            let end = offset.saturating_add(len).div_ceil(sector) * sector;
            let end = end.min(size);
            for (gs, ge) in self.saved.gaps(start, end) {
                let mut pos = gs;
                while pos < ge {
                    if let Some(sig) = self.stop.as_ref().and_then(|f| f()) {
                        // Keep what is saved consistent: record it and make it durable.
                        self.saved.insert(gs, pos);
                        writer.sync().map_err(journal)?;
                        return Err(Stop::Signal(crate::signals::interrupted_error(sig)));
                    }
                    let n = (ge - pos).min(MAX_RECORD);
                    let mut buf = AlignedBuf::new(n as usize);
                    self.inner.read_at(&mut buf, pos).map_err(|e| {
                        Stop::Failed(format!("reading the target at {pos} to save it"), e)
                    })?;
                    writer.append(pos, &buf).map_err(journal)?;
                    appended = true;
                    pos += n;
                    done += n;
                    if let Some(t) = tell.as_mut() {
                        t(Some(("saving", before + done, 0)));
                    }
                }
                // Made durable below; a failed sync ends the test before any overwrite.
                self.saved.insert(gs, ge);
            }
        }
        if appended {
            writer.sync().map_err(journal)?;
        }
        if let Some(t) = tell.as_mut() {
            t(None);
        }
        Ok(())
    }

    /// Write every saved region back, verify it by checksum, flush the device and remove
    /// the journal. On failure the journal is kept and the error says how to restore.
    /// Bytes written back that read back different (a card that does not hold them) do
    /// not stop it: the other regions are restored and verified, the journal is kept and
    /// [`Preserve::unrestored`] names them.
    pub fn finish(&mut self) -> Result<RestoreSummary> {
        let Some(mut writer) = self.writer.take() else {
            return Err(Error::runtime("the journal was already restored"));
        };
        writer
            .sync()
            .map_err(|e| Error::io(format!("syncing journal {}", self.path.display()), e))?;
        drop(writer);
        let journal = Journal::open(&self.path)?;
        let mut none = |_: Option<(&'static str, u64, u64)>| {};
        let hook: &mut dyn FnMut(Option<(&'static str, u64, u64)>) = match self.progress.as_mut() {
            Some(h) => h,
            None => &mut none,
        };
        let summary = restore(&journal, &mut self.inner, Some(&self.written), true, hook);
        if let Some(h) = self.progress.as_mut() {
            h(None);
        }
        let (summary, differ) = summary.map_err(|e| {
            Error::runtime(format!(
                "{e}. The journal is kept at {}: run `flashscope restore {}` once the target is back",
                self.path.display(),
                self.path.display()
            ))
        })?;
        self.restored_bytes += summary.bytes;
        if !differ.is_empty() {
            // Every region was written back; these bytes do not read back as the journal
            // holds them. The journal, the only record of what they held, stays.
            self.unrestored = differ;
            return Ok(summary);
        }
        format::remove(&self.path).map_err(|e| {
            Error::io(
                format!(
                    "restored and verified, but removing journal {}",
                    self.path.display()
                ),
                e,
            )
        })?;
        Ok(summary)
    }
}

/// The unit a restore names bytes that read back different in: the smallest sector.
const UNIT_BYTES: usize = 512;

/// Largest write a restore merges touching pieces into.
const RESTORE_RUN_BYTES: usize = 4 << 20;

/// What a restore does with each write of a run: its offset, its bytes, and whether it
/// starts a region (rather than continuing one cut at `RESTORE_RUN_BYTES`).
type PieceFn<'a> = dyn FnMut(u64, &[u8], bool) -> Result<()> + 'a;

/// The order a restore writes a journal's `records` back in: by offset when no two overlap
/// (as in every journal `Preserve` writes, since it saves only bytes no record holds
/// yet), else as they were saved (the first record of a byte holds what it was). A test
/// that wrote to random places saved them in that random order; written back by offset,
/// a card that copies an erase block for a write outside the few it keeps open copies
/// each block once for all the pieces in it, not once per piece.
fn restore_order(records: &[format::Record]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| records[i].offset);
    let disjoint = order.windows(2).all(|w| {
        let (a, b) = (&records[w[0]], &records[w[1]]);
        a.offset.saturating_add(a.length) <= b.offset
    });
    if !disjoint {
        order.sort_unstable();
    }
    order
}

/// Write every record of `journal` to `dev`, flush, then read each region back and
/// compare its checksum. Idempotent: running it again writes the same bytes.
///
/// Nothing is written unless every record fits the target's sectors and a torn last
/// record (see `format::TornRecord`) is shown harmless: the target must still hold, in
/// that region, the bytes the journal holds of it (the overwrite waits for the record to
/// be complete, so after a crash while appending they are equal; a record cut after its
/// region was overwritten differs, and is refused as corruption).
pub fn restore_records<D: Backend + ?Sized>(
    journal: &Journal,
    dev: &mut D,
) -> Result<RestoreSummary> {
    restore(journal, dev, None, true, &mut |_| {}).and_then(all_restored)
}

/// Read back every region of the journal from `dev` and compare it with the journal,
/// writing nothing: what a restore checks after another restore of the same journal put
/// the regions back (`summary.bytes` is 0, `verified` counts the regions read).
pub fn verify_records<D: Backend + ?Sized>(
    journal: &Journal,
    dev: &mut D,
) -> Result<RestoreSummary> {
    restore(journal, dev, None, false, &mut |_| {}).and_then(all_restored)
}

/// [`restore_records`], writing back only the parts of the records inside `only` (the
/// sectors a test overwrote) when given.
fn restore<D: Backend + ?Sized>(
    journal: &Journal,
    dev: &mut D,
    only: Option<&IntervalSet>,
    write_back: bool,
    progress: &mut dyn FnMut(Option<(&'static str, u64, u64)>),
) -> Result<(RestoreSummary, Vec<(u64, u64)>)> {
    let sector = dev.logical_sector_bytes().max(1) as u64;
    let torn = journal.torn.iter().map(|t| (t.offset, t.length));
    let regions = journal.records.iter().map(|r| (r.offset, r.length));
    for (offset, length) in regions.chain(torn) {
        if offset % sector != 0 || length % sector != 0 {
            return Err(Error::runtime(format!(
                "the region at {offset} ({length} bytes) is not aligned to the target's {sector}-byte sectors; nothing was written"
            )));
        }
    }
    if let Some(t) = journal.torn.filter(|t| t.data_present > 0) {
        let mut now = AlignedBuf::new(t.length as usize);
        dev.read_at(&mut now, t.offset).map_err(|e| {
            Error::io(
                format!(
                    "reading the region at {} to check the journal's torn last record",
                    t.offset
                ),
                e,
            )
        })?;
        let mut saved = vec![0u8; t.data_present as usize];
        journal.read_at(&mut saved, t.data_pos)?;
        if now[..saved.len()] != saved[..] {
            return Err(journal.torn_overwritten(&t));
        }
    }
    // Each piece to put back (all of every record, or what the test overwrote), with the
    // journal's bytes for it: written first, then, after a flush, read back and compared.
    // In offset order, pieces that touch merged into one write (see `restore_order`), in
    // one aligned buffer of RESTORE_RUN_BYTES written from in place: a record larger than
    // it (a whole 8 MiB record) goes in pieces, so a restore holds one record and one run,
    // never the record three times over. `f` is told whether a write starts a region (a
    // piece or pieces merged) or continues one cut at the buffer's size.
    let order = restore_order(&journal.records);
    let each_piece = |f: &mut PieceFn| -> Result<()> {
        let mut run = AlignedBuf::new(RESTORE_RUN_BYTES);
        let (mut at, mut len, mut starts) = (0u64, 0usize, true);
        for &i in &order {
            let rec = &journal.records[i];
            let end = rec.offset + rec.length;
            let parts = match only {
                None => vec![(rec.offset, end)],
                Some(set) => set.covered(rec.offset, end),
            };
            if parts.is_empty() {
                continue;
            }
            let mut saved = AlignedBuf::new(rec.length as usize);
            journal.read_record(rec, &mut saved)?;
            for (s, e) in parts {
                let mut s = s;
                let mut continues = false;
                while s < e {
                    let n = ((e - s) as usize).min(RESTORE_RUN_BYTES);
                    let from = (s - rec.offset) as usize;
                    let joins = len > 0 && at + len as u64 == s && len + n <= RESTORE_RUN_BYTES;
                    if !joins {
                        if len > 0 {
                            f(at, &run[..len], starts)?;
                        }
                        (at, len, starts) = (s, 0, !continues);
                    }
                    run[len..len + n].copy_from_slice(&saved[from..from + n]);
                    len += n;
                    s += n as u64;
                    continues = true;
                }
            }
        }
        if len > 0 {
            f(at, &run[..len], starts)?;
        }
        Ok(())
    };
    let total: u64 = journal
        .records
        .iter()
        .map(|rec| match only {
            None => rec.length,
            Some(set) => set
                .covered(rec.offset, rec.offset + rec.length)
                .iter()
                .map(|(s, e)| e - s)
                .sum(),
        })
        .sum();
    let mut summary = RestoreSummary::default();
    let mut differ: Vec<(u64, u64)> = Vec::new();
    let mut done = 0;
    if write_back {
        progress(Some(("restoring", 0, total)));
        each_piece(&mut |at, data, starts| {
            // `data` starts the aligned run buffer: written as it is.
            dev.write_at(data, at)
                .map_err(|e| Error::io(format!("writing back the region at {at}"), e))?;
            summary.regions += u64::from(starts);
            summary.bytes += data.len() as u64;
            progress(Some(("restoring", summary.bytes, total)));
            Ok(())
        })?;
        progress(Some(("verifying", 0, total)));
        dev.flush()
            .map_err(|e| Error::io("flushing the target after the restore", e))?;
    } else {
        progress(Some(("verifying", 0, total)));
    }
    // A region counts as verified when every write of it read back the same.
    let mut region_ok: Option<bool> = None;
    each_piece(&mut |at, data, starts| {
        let mut now = AlignedBuf::new(data.len());
        dev.read_at(&mut now, at)
            .map_err(|e| Error::io(format!("reading back the region at {at}"), e))?;
        let same = now[..] == data[..];
        if starts {
            summary.verified += u64::from(region_ok == Some(true));
            region_ok = Some(same);
        } else {
            region_ok = region_ok.map(|ok| ok && same);
        }
        if !same {
            // Named to the unit, and the other regions still put back and checked.
            for (i, (a, b)) in now
                .chunks(UNIT_BYTES)
                .zip(data.chunks(UNIT_BYTES))
                .enumerate()
            {
                if a != b {
                    let unit = at + (i * UNIT_BYTES) as u64;
                    match differ.last_mut() {
                        Some((o, l)) if *o + *l == unit => *l += a.len() as u64,
                        _ => differ.push((unit, a.len() as u64)),
                    }
                }
            }
        }
        done += data.len() as u64;
        progress(Some(("verifying", done, total)));
        Ok(())
    })?;
    summary.verified += u64::from(region_ok == Some(true));
    Ok((summary, differ))
}

/// The byte ranges a restore put back that read back different from the journal, as
/// text: "512 B at 104857600" (the first few, then how many more).
pub fn describe_unrestored(ranges: &[(u64, u64)]) -> String {
    let mut parts: Vec<String> = ranges
        .iter()
        .take(8)
        .map(|&(o, l)| format!("{} at {o}", crate::vocab::units::format_bytes(l)))
        .collect();
    if ranges.len() > 8 {
        parts.push(format!("{} more ranges", ranges.len() - 8));
    }
    parts.join(", ")
}

/// A restore whose regions did not all read back as the journal holds them is an error
/// for `restore` (its whole job): the ranges named by offset.
fn all_restored((summary, differ): (RestoreSummary, Vec<(u64, u64)>)) -> Result<RestoreSummary> {
    if differ.is_empty() {
        return Ok(summary);
    }
    let bytes: u64 = differ.iter().map(|r| r.1).sum();
    Err(Error::runtime(format!(
        "{} read back different from the journal after the restore ({}): the target does not hold what was written there",
        crate::vocab::units::format_bytes(bytes),
        describe_unrestored(&differ)
    )))
}

impl<B: Backend> Backend for Preserve<B> {
    crate::backend::forward!(inner: size_bytes, logical_sector_bytes, flush, queued);
    /// One request at a time: an io_uring request still in flight after a SIGKILL keeps
    /// the device held (and could land) until the kernel tears the ring down, while a
    /// `restore` must find the device free and final.
    fn fast_queue(
        &self,
        _depth: usize,
        buffers: usize,
        buffer_len: usize,
    ) -> Option<Box<dyn crate::backend::queue::IoQueue>> {
        self.inner.fast_queue(1, buffers, buffer_len)
    }
    fn clock_ns(&self) -> u64 {
        self.inner.clock_ns().saturating_sub(self.hidden_ns)
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.check_stop()?;
        self.inner.read_at(buf, offset)
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.check_stop()?;
        self.save_for_write(offset, buf.len() as u64)?;
        self.inner
            .write_at(buf, offset)
            .map_err(|e| self.fail(format!("writing to the target at {offset}"), e))
    }
    fn discard(&mut self, offset: u64, len: u64) -> io::Result<()> {
        self.check_stop()?;
        self.save_for_write(offset, len)?;
        self.inner.discard(offset, len)
    }
    fn prepare_write(&mut self, offset: u64, len: u64) -> io::Result<()> {
        self.check_stop()?;
        if len <= EAGER_SAVE_BYTES {
            return self.save(offset, len);
        }
        let (start, end) = self.sectors(offset, len);
        self.announced.insert(start, end);
        Ok(())
    }
    fn claim_writes(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
        self.check_stop()?;
        // One journal sync for the whole batch (with what is announced just behind it),
        // before any of it reaches the device; recorded as written, so `finish` puts it
        // back.
        let mut save = Vec::with_capacity(regions.len());
        for &(offset, len) in regions {
            let (start, end) = self.sectors(offset, len);
            if !self.saved.gaps(start, end).is_empty() {
                save.push((start, end - start));
                let ahead = self
                    .announced
                    .covered(end, end.saturating_add(SAVE_AHEAD_BYTES));
                save.extend(ahead.into_iter().map(|(s, e)| (s, e - s)));
            }
        }
        if !save.is_empty() {
            self.save_all(&save)?;
        }
        for &(offset, len) in regions {
            let (start, end) = self.sectors(offset, len);
            self.written.insert(start, end);
        }
        self.inner.claim_writes(regions)
    }
    fn idle(&mut self, ns: u64) {
        // Sleep in slices so a signal is noticed within 50 ms on real devices; the
        // simulator's virtual clock makes this free.
        let slice = 50_000_000;
        let mut left = ns;
        while left > 0 {
            if self.check_stop().is_err() {
                return;
            }
            let n = left.min(slice);
            self.inner.idle(n);
            left -= n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sim::{SimConfig, SimDevice};
    use rand::{Rng, SeedableRng};
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::Arc;

    fn sim(extra: &str) -> SimDevice {
        SimDevice::new(
            SimConfig::parse(&format!("custom,size=64M,erase=1M,page=16K,noise=0{extra}")).unwrap(),
        )
    }

    fn ident() -> Identity {
        Identity {
            spec: "sim:test".into(),
            kind: crate::device::TargetKind::Sim,
            size_bytes: 64 << 20,
            logical_sector_bytes: 512,
            ..Identity::default()
        }
    }

    /// Fill `[0, len)` with seeded random bytes and return them.
    fn fill_random<B: Backend>(d: &mut B, len: usize, seed: u64) -> Vec<u8> {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let mut buf = AlignedBuf::new(len);
        rng.fill(&mut buf[..]);
        d.write_at(&buf, 0).unwrap();
        buf.to_vec()
    }

    fn read_all<B: Backend>(d: &mut B, len: usize) -> Vec<u8> {
        let mut buf = AlignedBuf::new(len);
        d.read_at(&mut buf, 0).unwrap();
        buf.to_vec()
    }

    #[test]
    fn overwrites_are_undone_and_the_journal_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut dev = sim("");
        let original = fill_random(&mut dev, 4 << 20, 1);
        let mut p = Preserve::new(dev, &path, &ident()).unwrap();
        let junk = AlignedBuf::new(64 << 10);
        for off in [0u64, 4096, 1 << 20, (3 << 20) + 512, 100] {
            let off = off / 512 * 512;
            p.write_at(&junk, off).unwrap();
        }
        assert!(p.bytes_saved() >= 64 << 10);
        assert!(
            p.bytes_saved() < 5 * (64 << 10),
            "saved once: {}",
            p.bytes_saved()
        );
        assert_ne!(read_all(p.inner_mut(), 4 << 20), original);
        let s = p.finish().unwrap();
        assert_eq!(s.regions, s.verified);
        assert_eq!(read_all(p.inner_mut(), 4 << 20), original);
        assert!(!path.exists());
        assert!(p.finish().is_err(), "a second finish is refused");
    }

    /// Issue 45 point 2: bytes that read back different after the restore (a card whose
    /// reads there are corrupt) do not end the restore: every other region is put back and
    /// verified, and the bytes that were not are named by offset, to the unit; the journal,
    /// the only record of what they held, is kept.
    #[test]
    fn bytes_that_do_not_read_back_after_the_restore_are_named_and_the_rest_restored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut dev = sim(",fault=flip@2M+512");
        let original = fill_random(&mut dev, 4 << 20, 9);
        let mut p = Preserve::new(dev, &path, &ident()).unwrap();
        let junk = AlignedBuf::new(1 << 20);
        for i in 0..4u64 {
            p.write_at(&junk, i << 20).unwrap();
        }
        let s = p
            .finish()
            .expect("the restore goes on past a region that differs");
        assert_eq!(s.bytes, 4 << 20);
        assert_eq!(p.unrestored(), &[(2 << 20, 512)]);
        assert!(s.verified < s.regions, "{s:?}");
        assert!(path.exists(), "the journal is kept");
        let back = read_all(p.inner_mut(), 4 << 20);
        let flip = (2 << 20)..(2 << 20) + 512;
        assert_eq!(&back[..flip.start], &original[..flip.start]);
        assert_eq!(&back[flip.end..], &original[flip.end..]);
    }

    #[test]
    fn the_restore_writes_back_only_what_the_test_overwrote() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut dev = sim("");
        let original = fill_random(&mut dev, 64 << 20, 7);
        let mut p = Preserve::new(dev, &path, &ident()).unwrap();
        // A test announces 60 MiB (small: saved at once) and stops after 3 MiB.
        p.prepare_write(1 << 20, 60 << 20).unwrap();
        assert_eq!(p.bytes_saved(), 60 << 20);
        let junk = AlignedBuf::new(1 << 20);
        for i in 1..4u64 {
            p.write_at(&junk, i << 20).unwrap();
        }
        // Rewriting a region costs one restore, not two.
        p.write_at(&junk, 1 << 20).unwrap();
        let s = p.finish().unwrap();
        assert_eq!(s.bytes, 3 << 20);
        assert_eq!(s.verified, s.regions);
        assert_eq!(read_all(p.inner_mut(), 64 << 20), original);
    }

    #[test]
    fn a_large_announced_region_is_saved_as_the_writes_reach_it_off_the_clock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let cfg = SimConfig::parse("custom,size=128M,erase=1M,page=16K,noise=0").unwrap();
        let mut dev = SimDevice::new(cfg);
        let original = fill_random(&mut dev, 64 << 20, 8);
        let mut p = Preserve::new(dev, &path, &ident()).unwrap();
        p.prepare_write(0, 128 << 20).unwrap();
        assert_eq!(p.bytes_saved(), 0, "nothing read before the first write");
        let junk = AlignedBuf::new(1 << 20);
        let t0 = p.clock_ns();
        p.write_at(&junk, 0).unwrap();
        let first = p.clock_ns() - t0;
        assert!(p.bytes_saved() > 1 << 20, "saved ahead in the same fsync");
        assert!(p.bytes_saved() <= (1 << 20) + SAVE_AHEAD_BYTES);
        let t1 = p.clock_ns();
        p.write_at(&junk, 1 << 20).unwrap();
        let second = p.clock_ns() - t1;
        // The first write read 33 MiB to save it; the clock shows the write alone.
        assert!(first < 2 * second, "{first} vs {second}");
        let s = p.finish().unwrap();
        assert_eq!(s.bytes, 2 << 20);
        assert_eq!(read_all(p.inner_mut(), 64 << 20), original);
    }

    #[test]
    fn a_region_is_saved_before_its_first_overwrite_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut dev = sim("");
        let original = fill_random(&mut dev, 1 << 20, 2);
        let mut p = Preserve::new(dev, &path, &ident()).unwrap();
        let mut a = AlignedBuf::new(8192);
        a.fill(0xaa);
        p.write_at(&a, 0).unwrap();
        p.write_at(&a, 0).unwrap(); // the second overwrite must not save 0xaa
        let j = Journal::open(&path).unwrap();
        assert_eq!(j.records.len(), 1);
        assert_eq!(j.bytes_saved(), 8192);
        p.finish().unwrap();
        assert_eq!(read_all(p.inner_mut(), 1 << 20), original);
    }

    #[test]
    fn a_stop_request_fails_the_next_io_and_finish_still_restores() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut dev = sim("");
        let original = fill_random(&mut dev, 1 << 20, 3);
        let flag = Arc::new(AtomicI32::new(0));
        let f2 = flag.clone();
        let mut p = Preserve::new(dev, &path, &ident())
            .unwrap()
            .with_stop_check(Box::new(move || match f2.load(Ordering::SeqCst) {
                0 => None,
                s => Some(s),
            }));
        let junk = AlignedBuf::new(4096);
        p.write_at(&junk, 0).unwrap();
        flag.store(libc::SIGINT, Ordering::SeqCst);
        let e = p.write_at(&junk, 8192).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Interrupted);
        p.finish().unwrap();
        assert_eq!(read_all(p.inner_mut(), 1 << 20), original);
    }

    #[test]
    fn records_go_back_by_offset_unless_two_overlap() {
        let rec = |offset, length| format::Record {
            offset,
            length,
            data_pos: 0,
            sum: [0; 32],
        };
        assert_eq!(
            restore_order(&[rec(8192, 4096), rec(0, 4096), rec(4096, 4096)]),
            vec![1, 2, 0]
        );
        // A journal no `Preserve` wrote: the first record of a byte holds what it was, so
        // they go back as they were saved.
        assert_eq!(
            restore_order(&[rec(8192, 4096), rec(0, 4096), rec(2048, 4096)]),
            vec![0, 1, 2]
        );
    }

    #[test]
    fn a_random_test_is_put_back_in_offset_order() {
        // 400 random 4 KiB writes over 16 MiB of a card that keeps 2 of its 1 MiB erase
        // blocks open: in the order they were saved, each write back would land outside
        // the open blocks and cost what the test's own writes cost; by offset, each block
        // is opened once for all the pieces in it.
        let dir = tempfile::tempdir().unwrap();
        let mut dev = sim(",open_au=2");
        let original = fill_random(&mut dev, 16 << 20, 7);
        let mut p = Preserve::new(dev, &dir.path().join("j"), &ident()).unwrap();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let junk = AlignedBuf::new(4096);
        let t0 = p.clock_ns();
        for _ in 0..400 {
            p.write_at(&junk, rng.gen_range(0..4096u64) * 4096).unwrap();
        }
        let test_ns = p.clock_ns() - t0;
        let r0 = p.inner_mut().clock_ns();
        let s = p.finish().unwrap();
        let restore_ns = p.inner_mut().clock_ns() - r0;
        assert_eq!(read_all(p.inner_mut(), 16 << 20), original);
        assert_eq!(s.regions, s.verified);
        assert!(
            restore_ns * 4 < test_ns,
            "restore {restore_ns} ns against the test's {test_ns} ns"
        );
    }

    /// The largest write a restore makes and the largest read it checks with.
    struct Largest {
        inner: SimDevice,
        write: usize,
        read: usize,
    }

    impl Backend for Largest {
        crate::backend::forward!(inner: size_bytes, logical_sector_bytes, flush, clock_ns, idle);
        fn read_at(&mut self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
            self.read = self.read.max(buf.len());
            self.inner.read_at(buf, offset)
        }
        fn write_at(&mut self, buf: &[u8], offset: u64) -> std::io::Result<()> {
            self.write = self.write.max(buf.len());
            self.inner.write_at(buf, offset)
        }
    }

    /// Issue 46 point 6 (`fat card.img --write --erase-size 4M` peaked over its 28 MiB):
    /// a restore put each whole 8 MiB record into its merged run and copied the run again
    /// to write it, three copies of one record at once. Now no write or read-back of a
    /// restore is larger than RESTORE_RUN_BYTES, and a record cut into several writes
    /// still counts as one region restored and verified.
    #[test]
    fn a_restore_writes_large_records_in_runs_of_at_most_its_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let mut inner = sim("");
        let original = fill_random(&mut inner, 24 << 20, 11);
        let dev = Largest {
            inner,
            write: 0,
            read: 0,
        };
        let mut p = Preserve::new(dev, &dir.path().join("j"), &ident()).unwrap();
        let junk = AlignedBuf::new(MAX_RECORD as usize);
        for i in 0..3 {
            p.write_at(&junk, i * MAX_RECORD).unwrap();
        }
        p.write_at(&AlignedBuf::new(4096), 40 << 20).unwrap();
        assert!(RESTORE_RUN_BYTES < MAX_RECORD as usize);
        let d = p.inner_mut();
        (d.write, d.read) = (0, 0);
        let s = p.finish().unwrap();
        assert_eq!(read_all(&mut p.inner_mut().inner, 24 << 20), original);
        let d = p.inner_mut();
        assert!(d.write <= RESTORE_RUN_BYTES, "a write of {} bytes", d.write);
        assert!(d.read <= RESTORE_RUN_BYTES, "a read of {} bytes", d.read);
        // The three touching records merge into one region per run of the buffer's size
        // at most; the stray 4 KiB write far from them is a region of its own.
        assert_eq!(s.bytes, (24 << 20) + 4096);
        assert_eq!(s.regions, s.verified);
        assert_eq!(s.regions, 4, "{s:?}");
    }

    #[test]
    fn a_torn_last_record_is_skipped_only_while_the_target_still_holds_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut dev = sim("");
        let original = fill_random(&mut dev, 1 << 20, 5);
        let mut p = Preserve::new(dev, &path, &ident()).unwrap();
        let junk = AlignedBuf::new(64 << 10);
        p.write_at(&junk, 0).unwrap();
        p.write_at(&junk, 256 << 10).unwrap();
        p.save(512 << 10, 64 << 10).unwrap(); // saved, never overwritten
        let full = std::fs::read(&path).unwrap();
        let last = 28 + (64 << 10) + 32;
        // The record of an overwritten region, cut by one byte after the fact: refused,
        // nothing written (the region at 0 keeps the test's junk).
        std::fs::write(&path, &full[..full.len() - last - 1]).unwrap();
        let j = Journal::open(&path).unwrap();
        assert_eq!(j.torn.unwrap().offset, 256 << 10);
        let e = restore_records(&j, p.inner_mut()).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert!(
            e.to_string().contains("overwritten after the record"),
            "{e}"
        );
        assert!(read_all(p.inner_mut(), 64 << 10).iter().all(|&b| b == 0));
        // A crash while appending the last record: its region still holds what it saved.
        std::fs::write(&path, &full[..full.len() - 1]).unwrap();
        let j = Journal::open(&path).unwrap();
        assert_eq!(j.torn.unwrap().offset, 512 << 10);
        let s = restore_records(&j, p.inner_mut()).unwrap();
        assert_eq!((s.regions, s.verified), (2, 2));
        assert_eq!(read_all(p.inner_mut(), 1 << 20), original);
    }

    #[test]
    fn a_journal_write_error_ends_the_test_and_every_later_io() {
        // Appends fail as on a full filesystem (the writer's descriptor is made read-only).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut dev = sim("");
        let original = fill_random(&mut dev, 1 << 20, 6);
        let mut p = Preserve::new(dev, &path, &ident()).unwrap();
        let junk = AlignedBuf::new(64 << 10);
        p.write_at(&junk, 0).unwrap();
        p.writer.as_mut().unwrap().break_for_test();
        p.write_at(&junk, 256 << 10).unwrap_err();
        let f = p.failure().unwrap().to_string();
        assert!(f.contains("writing the journal"), "{f}");
        assert!(f.contains(&path.display().to_string()), "{f}");
        assert!(p.read_at(&mut AlignedBuf::new(512), 0).is_err(), "sticky");
        assert!(p.write_at(&junk, 0).is_err(), "sticky");
        // The region it could not save was not written; what was saved is restored.
        p.finish().unwrap();
        assert_eq!(read_all(p.inner_mut(), 1 << 20), original);
    }

    #[test]
    fn a_vanished_device_keeps_the_journal_which_restores_a_damaged_copy() {
        // The device is filled, then vanishes in the middle of a test; the journal must
        // restore every touched region of a copy, however those regions were damaged.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut dev = sim(",fault=vanish@40");
        let original = fill_random(&mut dev, 8 << 20, 4);
        let mut p = Preserve::new(dev, &path, &ident()).unwrap();
        let junk = AlignedBuf::new(256 << 10);
        let mut failed = None;
        for i in 0..32u64 {
            if let Err(e) = p.write_at(&junk, i * (256 << 10)) {
                failed = Some(e);
                break;
            }
        }
        assert!(crate::vocab::error::is_vanished(
            &failed.expect("the device vanished")
        ));
        let e = p.finish().unwrap_err().to_string();
        assert!(e.contains("journal is kept"), "{e}");
        assert!(path.exists());

        let journal = Journal::open(&path).unwrap();
        assert!(!journal.records.is_empty());
        let mut copy = sim("");
        fill_random(&mut copy, 8 << 20, 4);
        let mut scribble = AlignedBuf::new(8 << 20);
        scribble.fill(0x5a);
        copy.write_at(&scribble, 0).unwrap(); // worse than the test: every byte damaged
        restore_records(&journal, &mut copy).unwrap();
        let back = read_all(&mut copy, 8 << 20);
        let saved = journal.bytes_saved() as usize;
        assert_eq!(
            &back[..saved],
            &original[..saved],
            "touched regions restored"
        );
        assert!(
            back[saved..].iter().all(|&b| b == 0x5a),
            "nothing else written"
        );
    }
}
