//! The FUSE filesystem: a root directory holding `flash.img` (the simulated card, opened
//! with FOPEN_DIRECT_IO so the page cache never answers) and `stats` (the server's
//! counters as JSON).
//!
//! One thread (fuser's event loop) takes each request, runs it through the model at once
//! and queues its reply with a real-time deadline; a second thread (the completer) sends
//! each reply when its deadline comes. The event loop is therefore free to take the next
//! request while the card is "busy", and requests that queue up are scheduled back to back
//! on the card's timeline, as on hardware.

use super::pacer::{wait_until, Pacer};
use super::stats::{Counters, ServeStats};
use crate::backend::sim::SimDevice;
use crate::backend::{monotonic_ns, Backend};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, WriteFlags,
};
use std::ffi::OsStr;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// The file that is the simulated card.
pub const IMAGE_NAME: &str = "flash.img";
/// The file with the server's counters.
pub const STATS_NAME: &str = "stats";

/// A file of zeros, reachable only while the server starts, that answers every read
/// `CALIBRATE_MODEL_NS` after it arrives without touching the card: timing reads of it
/// through the same way (loop device and FUSE) measures what the way itself adds.
pub const CALIBRATE_NAME: &str = ".calibrate";
/// The time a calibration read is held, as a card's command would be: the wake-ups after
/// a sleep this long are part of what the way adds.
pub const CALIBRATE_MODEL_NS: u64 = 250_000;
/// The calibration file's size.
pub const CALIBRATE_BYTES: u64 = 1 << 20;

const IMAGE_INO: INodeNo = INodeNo(2);
const STATS_INO: INodeNo = INodeNo(3);
const CALIBRATE_INO: INodeNo = INodeNo(4);
const TTL: Duration = Duration::from_secs(1);

const FALLOC_FL_KEEP_SIZE: i32 = 0x01;
const FALLOC_FL_PUNCH_HOLE: i32 = 0x02;
const FALLOC_FL_ZERO_RANGE: i32 = 0x10;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn errno(e: &io::Error) -> Errno {
    match e.raw_os_error() {
        Some(code) => Errno::from_i32(code),
        None if e.kind() == io::ErrorKind::UnexpectedEof => Errno::EINVAL,
        None => Errno::EIO,
    }
}

/// The model and its real-time queue: one lock, so a request's model time and its slot in
/// the queue are decided together.
struct Card {
    dev: SimDevice,
    pacer: Pacer,
}

/// What the event loop, the completer and the stats reader share.
pub struct Shared {
    card: Mutex<Card>,
    counters: Mutex<Counters>,
    /// Read buffers handed back by the completer, so large reads do not fault in fresh
    /// memory every time.
    pool: Mutex<Vec<Vec<u8>>>,
    /// While set, `CALIBRATE_NAME` can be looked up (see [`CALIBRATE_MODEL_NS`]).
    calibrating: AtomicBool,
    started_ns: u64,
    pub size: u64,
    pub sector: u32,
}

impl Shared {
    pub fn new(dev: SimDevice) -> Self {
        let now = monotonic_ns();
        let size = dev.size_bytes();
        let sector = dev.logical_sector_bytes();
        Shared {
            card: Mutex::new(Card {
                dev,
                pacer: Pacer::new(now),
            }),
            counters: Mutex::new(Counters::default()),
            pool: Mutex::new(Vec::new()),
            calibrating: AtomicBool::new(false),
            started_ns: now,
            size,
            sector,
        }
    }

    /// A snapshot of the counters and percentiles.
    pub fn stats(&self) -> ServeStats {
        let c = lock(&self.counters).clone();
        c.snapshot(monotonic_ns().saturating_sub(self.started_ns))
    }

    fn buffer(&self, len: usize) -> Vec<u8> {
        let mut b = lock(&self.pool).pop().unwrap_or_default();
        b.resize(len, 0);
        b
    }

    fn give_back(&self, b: Vec<u8>) {
        let mut pool = lock(&self.pool);
        if pool.len() < 64 {
            pool.push(b);
        }
    }

    /// Run one operation on the model at `arrival_ns`: credit the idle time since the
    /// card was last busy, measure the model time the operation adds, and queue it.
    fn on_card<T>(
        &self,
        arrival_ns: u64,
        op: impl FnOnce(&mut SimDevice) -> io::Result<T>,
    ) -> (io::Result<T>, u64, u64) {
        let mut card = lock(&self.card);
        let idle = card.pacer.idle_before(arrival_ns);
        if idle > 0 {
            card.dev.idle(idle);
        }
        // What the host has outstanding, as `io`'s queue tells the model in-process: a
        // card with a command queue overlaps their command time.
        let outstanding = card.pacer.outstanding(arrival_ns);
        card.dev.queued(outstanding);
        let before = card.dev.clock_ns();
        let result = op(&mut card.dev);
        let model_ns = card.dev.clock_ns().saturating_sub(before);
        let slot = card.pacer.schedule(arrival_ns, model_ns);
        (result, slot.reply_ns, model_ns)
    }

    /// Send replies this long before the card's deadlines (the measured transport time).
    pub fn set_lead(&self, lead_ns: u64) {
        lock(&self.card).pacer.set_lead(lead_ns);
        lock(&self.counters).lead_ns = lead_ns;
    }

    /// Whether the calibration file is reachable (only while the server calibrates).
    pub fn set_calibrating(&self, on: bool) {
        self.calibrating.store(on, Ordering::SeqCst);
    }
}

/// A reply waiting for its deadline.
enum Completion {
    Data(ReplyData, Vec<u8>, std::ops::Range<usize>),
    Written(ReplyWrite, u32),
    Done(ReplyEmpty),
    DataError(ReplyData, Errno),
    WriteError(ReplyWrite, Errno),
    EmptyError(ReplyEmpty, Errno),
}

struct Job {
    /// When the reply leaves (the card's deadline less the transport lead).
    reply_ns: u64,
    completion: Completion,
}

/// Send replies at their deadlines, in order, and record how late each one left.
fn complete(shared: Arc<Shared>, jobs: mpsc::Receiver<Job>, spin_ns: u64) {
    super::pacer::tighten_timer_slack();
    while let Ok(job) = jobs.recv() {
        let now = wait_until(job.reply_ns, spin_ns);
        match job.completion {
            Completion::Data(reply, buf, range) => {
                reply.data(buf.get(range).unwrap_or(&[]));
                shared.give_back(buf);
            }
            Completion::Written(reply, n) => reply.written(n),
            Completion::Done(reply) => reply.ok(),
            Completion::DataError(reply, e) => reply.error(e),
            Completion::WriteError(reply, e) => reply.error(e),
            Completion::EmptyError(reply, e) => reply.error(e),
        }
        lock(&shared.counters).late.record(now - job.reply_ns);
    }
}

/// The FUSE filesystem serving the card.
pub struct CardFs {
    shared: Arc<Shared>,
    jobs: mpsc::Sender<Job>,
    uid: u32,
    gid: u32,
}

impl CardFs {
    /// The filesystem and its completer thread (which ends when the filesystem is dropped).
    pub fn new(
        shared: Arc<Shared>,
        spin_ns: u64,
    ) -> io::Result<(Self, std::thread::JoinHandle<()>)> {
        let (tx, rx) = mpsc::channel();
        let s = shared.clone();
        let completer = std::thread::Builder::new()
            .name("serve-complete".into())
            .spawn(move || complete(s, rx, spin_ns))?;
        let (uid, gid) = (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw(),
        );
        Ok((
            CardFs {
                shared,
                jobs: tx,
                uid,
                gid,
            },
            completer,
        ))
    }

    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, perm, size, nlink) = match ino {
            INodeNo::ROOT => (FileType::Directory, 0o755, 0, 2),
            IMAGE_INO => (FileType::RegularFile, 0o600, self.shared.size, 1),
            STATS_INO => (FileType::RegularFile, 0o444, 4096, 1),
            CALIBRATE_INO if self.shared.calibrating.load(Ordering::SeqCst) => {
                (FileType::RegularFile, 0o600, CALIBRATE_BYTES, 1)
            }
            _ => return None,
        };
        let t = SystemTime::UNIX_EPOCH;
        Some(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: t,
            mtime: t,
            ctime: t,
            crtime: t,
            kind,
            perm,
            nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    fn queue(&self, reply_ns: u64, completion: Completion) {
        // The completer only stops when this sender is dropped, so sending cannot fail
        // while the filesystem lives; if it ever did, the reply is dropped and fuser
        // answers the kernel with an error.
        let _ = self.jobs.send(Job {
            reply_ns,
            completion,
        });
    }

    fn record(&self, arrival_ns: u64, model_ns: u64, update: impl FnOnce(&mut Counters)) {
        let handled = monotonic_ns().saturating_sub(arrival_ns);
        let mut c = lock(&self.shared.counters);
        c.model_ns += model_ns;
        c.handler.record(handled);
        update(&mut c);
    }
}

impl Filesystem for CardFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> io::Result<()> {
        // Asynchronous direct I/O lets the loop driver keep many requests in flight (a
        // queue depth above one reaches the server); without it the loop worker waits for
        // each reply in turn.
        let _ = config.add_capabilities(InitFlags::FUSE_ASYNC_DIO);
        let _ = config.set_max_background(128);
        let _ = config.set_congestion_threshold(96);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let ino = match (parent, name.to_str()) {
            (INodeNo::ROOT, Some(IMAGE_NAME)) => IMAGE_INO,
            (INodeNo::ROOT, Some(STATS_NAME)) => STATS_INO,
            (INodeNo::ROOT, Some(CALIBRATE_NAME)) => CALIBRATE_INO,
            _ => return reply.error(Errno::ENOENT),
        };
        match self.attr(ino) {
            Some(a) => reply.entry(&TTL, &a, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let Some(a) = self.attr(ino) else {
            return reply.error(Errno::ENOENT);
        };
        // A card's capacity is fixed: truncating or growing it is refused; everything
        // else (times, modes) is accepted and ignored.
        if size.is_some_and(|s| s != a.size) {
            return reply.error(Errno::EPERM);
        }
        reply.attr(&TTL, &a)
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match ino {
            IMAGE_INO => reply.opened(
                FileHandle(0),
                FopenFlags::FOPEN_DIRECT_IO | FopenFlags::FOPEN_PARALLEL_DIRECT_WRITES,
            ),
            STATS_INO => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            CALIBRATE_INO if self.attr(ino).is_some() => {
                reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO)
            }
            INodeNo::ROOT => reply.error(Errno::EISDIR),
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let arrival = monotonic_ns();
        if ino == STATS_INO {
            let text =
                serde_json::to_string_pretty(&self.shared.stats()).unwrap_or_default() + "\n";
            let bytes = text.as_bytes();
            let start = (offset as usize).min(bytes.len());
            let end = start.saturating_add(size as usize).min(bytes.len());
            return reply.data(&bytes[start..end]);
        }
        if ino == CALIBRATE_INO {
            let len = (size as u64).min(CALIBRATE_BYTES.saturating_sub(offset)) as usize;
            let mut buf = self.shared.buffer(len);
            buf.fill(0);
            let due = arrival + CALIBRATE_MODEL_NS;
            return self.queue(due, Completion::Data(reply, buf, 0..len));
        }
        if ino != IMAGE_INO {
            return reply.error(Errno::ENOENT);
        }
        let card_size = self.shared.size;
        if offset >= card_size || size == 0 {
            return reply.data(&[]);
        }
        let len = (size as u64).min(card_size - offset);
        // The model takes whole sectors; widen an unaligned request and hand back the
        // part asked for.
        let sector = self.shared.sector as u64;
        let start = offset - offset % sector;
        let end = (offset + len).div_ceil(sector) * sector;
        let end = end.min(card_size);
        let mut buf = self.shared.buffer((end - start) as usize);
        let (result, deadline, model_ns) = self
            .shared
            .on_card(arrival, |dev| dev.read_at(&mut buf, start));
        let completion = match result {
            Ok(()) => {
                let from = (offset - start) as usize;
                Completion::Data(reply, buf, from..from + len as usize)
            }
            Err(e) => Completion::DataError(reply, errno(&e)),
        };
        let ok = matches!(completion, Completion::Data(..));
        self.record(arrival, model_ns, |c| {
            c.reads += 1;
            if ok {
                c.bytes_read += len;
            } else {
                c.errors += 1;
            }
        });
        self.queue(deadline, completion);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let arrival = monotonic_ns();
        if ino != IMAGE_INO {
            return reply.error(Errno::EACCES);
        }
        let len = data.len() as u64;
        if offset
            .checked_add(len)
            .is_none_or(|end| end > self.shared.size)
        {
            return reply.error(Errno::ENOSPC);
        }
        let (result, deadline, model_ns) = self
            .shared
            .on_card(arrival, |dev| dev.write_at(data, offset));
        let ok = result.is_ok();
        let completion = match result {
            Ok(()) => Completion::Written(reply, data.len() as u32),
            Err(e) => Completion::WriteError(reply, errno(&e)),
        };
        self.record(arrival, model_ns, |c| {
            c.writes += 1;
            if ok {
                c.bytes_written += len;
            } else {
                c.errors += 1;
            }
        });
        self.queue(deadline, completion);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close(2): nothing reaches the card.
        reply.ok()
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let arrival = monotonic_ns();
        if ino != IMAGE_INO {
            return reply.ok();
        }
        let (result, deadline, model_ns) = self.shared.on_card(arrival, |dev| dev.flush());
        let ok = result.is_ok();
        let completion = match result {
            Ok(()) => Completion::Done(reply),
            Err(e) => Completion::EmptyError(reply, errno(&e)),
        };
        self.record(arrival, model_ns, |c| {
            c.flushes += 1;
            if !ok {
                c.errors += 1;
            }
        });
        self.queue(deadline, completion);
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let arrival = monotonic_ns();
        if ino != IMAGE_INO {
            return reply.error(Errno::EACCES);
        }
        if offset
            .checked_add(length)
            .is_none_or(|end| end > self.shared.size)
        {
            return reply.error(Errno::EINVAL);
        }
        // Plain allocation inside the card: every byte already exists.
        if mode & !FALLOC_FL_KEEP_SIZE == 0 {
            return reply.ok();
        }
        // Hole punching (the loop driver's discard) and zeroing reach the model as an
        // erase; erased flash reads back as zeros in the model.
        let erase = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;
        if mode & erase == 0 || mode & !(erase | FALLOC_FL_KEEP_SIZE) != 0 {
            return reply.error(Errno::from_i32(libc::EOPNOTSUPP));
        }
        let (result, deadline, model_ns) = self
            .shared
            .on_card(arrival, |dev| dev.discard(offset, length));
        let ok = result.is_ok();
        let completion = match result {
            Ok(()) => Completion::Done(reply),
            Err(e) => Completion::EmptyError(reply, errno(&e)),
        };
        self.record(arrival, model_ns, |c| {
            c.discards += 1;
            if ok {
                c.bytes_discarded += length;
            } else {
                c.errors += 1;
            }
        });
        self.queue(deadline, completion);
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (IMAGE_INO, FileType::RegularFile, IMAGE_NAME),
            (STATS_INO, FileType::RegularFile, STATS_NAME),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, (i + 1) as u64, *kind, name) {
                break;
            }
        }
        reply.ok()
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let blocks = self.shared.size / 4096;
        reply.statfs(blocks, 0, 0, 3, 0, 4096, 255, 4096)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sim::SimConfig;

    fn shared() -> Shared {
        let cfg = SimConfig::parse(
            "custom,size=64M,erase=1M,page=16K,cmd=100us,read_bw=22M,page_cost=0ns,erase_cost=300us,noise=0,outliers=0",
        )
        .unwrap();
        Shared::new(SimDevice::new(cfg))
    }

    #[test]
    fn each_request_is_due_its_model_time_after_the_card_is_free() {
        let s = shared();
        let t0 = monotonic_ns() + 1_000_000;
        let mut buf = vec![0u8; 1024];
        let (r, d1, m1) = s.on_card(t0, |dev| dev.read_at(&mut buf, 4 << 20));
        assert!(r.is_ok());
        let inside = 100_000 + (1024.0f64 * 1e9 / (22.0 * 1048576.0)).round() as u64;
        assert!(m1.abs_diff(inside) <= 1, "{m1} vs {inside}");
        assert_eq!(d1, t0 + m1);
        // Arrives before the first is done: queued behind it, and pays the boundary.
        let (_, d2, m2) = s.on_card(t0 + 10, |dev| dev.read_at(&mut buf, (4 << 20) - 512));
        assert!(m2.abs_diff(inside + 300_000) <= 1, "{m2}");
        assert_eq!(d2, d1 + m2);
        // A model error still takes its slot (zero time) and is reported.
        let (r, d3, m3) = s.on_card(t0 + 20, |dev| dev.read_at(&mut buf[..100], 0));
        assert!(r.is_err());
        assert_eq!((d3, m3), (d2, 0));
    }

    #[test]
    fn a_command_queue_overlaps_requests_the_host_has_outstanding_as_in_process() {
        let cfg = SimConfig::parse(
            "custom,size=64M,erase=1M,page=16K,cmd=200us,read_bw=22M,page_cost=0ns,erase_cost=0ns,noise=0,outliers=0,cmd_queue=2",
        )
        .unwrap();
        let s = Shared::new(SimDevice::new(cfg));
        s.set_lead(50_000);
        let t0 = monotonic_ns() + 1_000_000;
        let mut buf = vec![0u8; 4096];
        let (_, r1, alone) = s.on_card(t0, |dev| dev.read_at(&mut buf, 0));
        // Arrives before the first reply left: two outstanding, half the command time.
        let (_, _, queued) = s.on_card(t0 + 10, |dev| dev.read_at(&mut buf, 1 << 20));
        assert_eq!(alone - queued, 100_000);
        // Arrives once both replies left: alone again.
        let later = r1 + 10_000_000;
        let (_, r3, again) = s.on_card(later, |dev| dev.read_at(&mut buf, 2 << 20));
        assert_eq!(again, alone);
        // Its reply leaves the lead ahead of the card's deadline.
        assert_eq!(r3, later + alone - 50_000);
        assert_eq!(s.stats().lead_ns, 50_000);
    }

    #[test]
    fn the_stats_count_what_the_card_did() {
        let s = shared();
        lock(&s.counters).reads = 2;
        lock(&s.counters).model_ns = 5;
        let st = s.stats();
        assert_eq!((st.reads, st.requests, st.model_ns), (2, 2, 5));
        assert_eq!(
            errno(&io::Error::from_raw_os_error(libc::ENODEV)),
            Errno::ENODEV
        );
        assert_eq!(
            errno(&io::Error::new(io::ErrorKind::UnexpectedEof, "end")),
            Errno::EINVAL
        );
    }
}
