//! The engine interface, in the shape fio's I/O engines have: requests are *queued*, a
//! batch is *committed* to the device, and completions are *reaped*. One job loop
//! (`workload::engine`) drives every engine through it:
//!
//! - `UringQueue` (backend/uring.rs): io_uring on a file descriptor, many requests in
//!   flight, registered buffers, one `io_uring_enter` per batch;
//! - `BackendQueue`: any `Backend` behind a queue, one request at a time in order of issue
//!   (pread/pwrite on `SyncBackend`, the simulator on its virtual clock, `NullBackend`,
//!   or a whole wrapper stack);
//! - `Claimed`: a queue on a device's fast path whose writes are first claimed on the
//!   device's backend stack (`Backend::claim_writes`), so `Timed`, `WriteBudget`, a time
//!   budget and `Preserve` see every write the fast engines do, before it reaches the device.

use super::{AlignedBuf, Backend};
use crate::{Error, Result};
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

/// Direction of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
}

/// One request: `len` bytes at `offset`, to or from the queue's buffer `buf` from byte
/// `at` of it; `tag` comes back with its completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub op: Op,
    pub offset: u64,
    pub len: usize,
    pub buf: usize,
    pub at: usize,
    pub tag: u64,
}

/// A finished request: its tag and the bytes moved, or the error.
#[derive(Debug)]
pub struct Completion {
    pub tag: u64,
    pub result: io::Result<usize>,
}

/// An I/O engine: queue, commit, reap. The queue owns its buffers (`buf`), `buffers` of
/// `buffer_len` bytes each, so an engine can register them with the kernel; a buffer must
/// not be touched while a request on it is in flight.
pub trait IoQueue: Send {
    /// Requests the queue can hold in flight.
    fn depth(&self) -> usize;
    /// Buffer `i` (`i < buffers` given at construction).
    fn buf(&mut self, i: usize) -> &mut [u8];
    /// Add a request to the next batch (nothing reaches the device yet).
    fn queue(&mut self, req: Request) -> io::Result<()>;
    /// Hand the batch to the device. An engine may defer the system call to the next
    /// `reap` (io_uring submits and waits in one `io_uring_enter`).
    fn commit(&mut self) -> io::Result<()>;
    /// Start what was committed now rather than at the next `reap`, for a caller with CPU
    /// work to do before it reaps (the default: nothing to do).
    fn kick(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Wait for at least `min` completions (fewer when fewer are in flight) and append
    /// every one available to `out`.
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()>;
    /// Requests queued or committed and not yet reaped.
    fn in_flight(&self) -> usize;
    /// Make completed writes durable.
    fn flush(&mut self) -> io::Result<()>;
    /// The device's clock, ns (virtual on the simulator).
    fn clock_ns(&self) -> u64;
    /// Let the device sit idle (a rate cap's wait).
    fn idle(&mut self, ns: u64);
}

/// How to open a target for a queue of its own.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenFlags {
    /// Open read-write (else read-only).
    pub read_write: bool,
    /// O_DIRECT.
    pub direct: bool,
    /// O_SYNC.
    pub sync: bool,
    /// O_DSYNC.
    pub dsync: bool,
}

/// Open `path` for an engine's own queue with `flags`: every engine that does not go
/// through `device::open` (the fast path of `io` and `bench`) opens the target here.
pub fn open_file(path: &Path, flags: OpenFlags) -> Result<File> {
    let mut custom = 0;
    if flags.direct {
        custom |= libc::O_DIRECT;
    }
    if flags.sync {
        custom |= libc::O_SYNC;
    }
    if flags.dsync {
        custom |= libc::O_DSYNC;
    }
    OpenOptions::new()
        .read(true)
        .write(flags.read_write)
        .custom_flags(custom)
        .open(path)
        .map_err(|e| {
            if flags.direct && e.raw_os_error() == Some(libc::EINVAL) {
                Error::usage(format!(
                    "{} does not support O_DIRECT (--direct); use --direct=0 to go through the page cache",
                    path.display()
                ))
            } else {
                Error::io(format!("opening {}", path.display()), e)
            }
        })
}

/// Buffers of one size in one slab (huge pages for large ones, see `AlignedBuf::for_io`).
pub struct Slab {
    mem: AlignedBuf,
    len: usize,
}

impl Slab {
    pub fn new(buffers: usize, len: usize) -> Self {
        Slab {
            mem: AlignedBuf::for_io(buffers.max(1) * len),
            len,
        }
    }

    pub fn get(&mut self, i: usize) -> &mut [u8] {
        &mut self.mem[i * self.len..(i + 1) * self.len]
    }

    pub fn buffer_len(&self) -> usize {
        self.len
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.mem.as_mut_ptr()
    }

    pub(crate) fn into_mem(self) -> AlignedBuf {
        self.mem
    }
}

/// Any `Backend` as a queue: requests run one at a time, in order of issue, when reaped
/// (fio's synchronous engines complete each request as it is queued; here it waits in
/// the queue so that its latency includes the wait behind the requests before it, which
/// is what a deeper queue means on a device that serves one request at a time). Before
/// each request the device is told how many are outstanding (`Backend::queued`), so a
/// simulated card with a command queue can overlap their command overheads.
pub struct BackendQueue<B> {
    dev: B,
    slab: Slab,
    depth: usize,
    pending: VecDeque<Request>,
}

impl<B: Backend> BackendQueue<B> {
    /// `depth` requests in flight at most, `buffers` buffers of `buffer_len` bytes.
    pub fn new(dev: B, depth: usize, buffers: usize, buffer_len: usize) -> Self {
        BackendQueue {
            dev,
            slab: Slab::new(buffers, buffer_len),
            depth: depth.max(1),
            pending: VecDeque::with_capacity(depth.max(1)),
        }
    }

    pub fn device(&mut self) -> &mut B {
        &mut self.dev
    }
}

impl<B: Backend> IoQueue for BackendQueue<B> {
    fn depth(&self) -> usize {
        self.depth
    }
    fn buf(&mut self, i: usize) -> &mut [u8] {
        self.slab.get(i)
    }
    #[inline]
    fn queue(&mut self, req: Request) -> io::Result<()> {
        self.pending.push_back(req);
        Ok(())
    }
    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }
    #[inline]
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        for _ in 0..min.max(1) {
            let Some(req) = self.pending.pop_front() else {
                break;
            };
            let buf = &mut self.slab.get(req.buf)[req.at..req.at + req.len];
            // This request and those still waiting behind it.
            self.dev.queued(self.pending.len() + 1);
            let r = match req.op {
                Op::Read => self.dev.read_at(buf, req.offset),
                Op::Write => self.dev.write_at(buf, req.offset),
            };
            out.push(Completion {
                tag: req.tag,
                result: r.map(|()| req.len),
            });
        }
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.pending.len()
    }
    fn flush(&mut self) -> io::Result<()> {
        self.dev.flush()
    }
    #[inline]
    fn clock_ns(&self) -> u64 {
        self.dev.clock_ns()
    }
    fn idle(&mut self, ns: u64) {
        self.dev.idle(ns)
    }
}

/// The backend stack that claims a fast engine's writes, shared by the job threads.
pub type Stack<'a> = Mutex<&'a mut dyn Backend>;

/// A queue whose writes are claimed on the device's backend stack before they reach the
/// device: `commit` claims the batch's writes in one call (preserve mode saves them with
/// one journal sync; the budgets count and cap them), then queues and commits the batch on
/// the engine. Reads pass straight to the engine, but every commit asks the stack (an
/// empty claim for a batch of reads), so a stop that preserve mode asks for (Ctrl-C) ends
/// a read pass too. When the claim fails (budget spent, a signal, the journal failed)
/// nothing of the batch reaches the device.
pub struct Claimed<'a, 'b, Q> {
    inner: Q,
    stack: &'a Stack<'b>,
    held: Vec<Request>,
    regions: Vec<(u64, u64)>,
}

impl<'a, 'b, Q: IoQueue> Claimed<'a, 'b, Q> {
    pub fn new(inner: Q, stack: &'a Stack<'b>) -> Self {
        let depth = inner.depth();
        Claimed {
            inner,
            stack,
            held: Vec::with_capacity(depth),
            regions: Vec::with_capacity(depth),
        }
    }
}

impl<Q: IoQueue> IoQueue for Claimed<'_, '_, Q> {
    fn depth(&self) -> usize {
        self.inner.depth()
    }
    fn buf(&mut self, i: usize) -> &mut [u8] {
        self.inner.buf(i)
    }
    fn queue(&mut self, req: Request) -> io::Result<()> {
        self.held.push(req);
        Ok(())
    }
    fn commit(&mut self) -> io::Result<()> {
        self.regions.clear();
        self.regions.extend(
            self.held
                .iter()
                .filter(|r| r.op == Op::Write)
                .map(|r| (r.offset, r.len as u64)),
        );
        let mut stack = self.stack.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = stack.claim_writes(&self.regions) {
            self.held.clear();
            return Err(e);
        }
        drop(stack);
        for req in self.held.drain(..) {
            self.inner.queue(req)?;
        }
        self.inner.commit()
    }
    fn kick(&mut self) -> io::Result<()> {
        self.inner.kick()
    }
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        self.inner.reap(min, out)
    }
    fn in_flight(&self) -> usize {
        self.inner.in_flight() + self.held.len()
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
    /// The stack's clock, which leaves out the time preserve mode spent saving regions,
    /// so a job's figures are the device's own.
    fn clock_ns(&self) -> u64 {
        self.stack
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clock_ns()
    }
    fn idle(&mut self, ns: u64) {
        self.inner.idle(ns)
    }
}

impl<Q: IoQueue + ?Sized> IoQueue for Box<Q> {
    fn depth(&self) -> usize {
        (**self).depth()
    }
    fn buf(&mut self, i: usize) -> &mut [u8] {
        (**self).buf(i)
    }
    #[inline]
    fn queue(&mut self, req: Request) -> io::Result<()> {
        (**self).queue(req)
    }
    #[inline]
    fn commit(&mut self) -> io::Result<()> {
        (**self).commit()
    }
    fn kick(&mut self) -> io::Result<()> {
        (**self).kick()
    }
    #[inline]
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        (**self).reap(min, out)
    }
    #[inline]
    fn in_flight(&self) -> usize {
        (**self).in_flight()
    }
    fn flush(&mut self) -> io::Result<()> {
        (**self).flush()
    }
    #[inline]
    fn clock_ns(&self) -> u64 {
        (**self).clock_ns()
    }
    fn idle(&mut self, ns: u64) {
        (**self).idle(ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{NullBackend, Timed, WriteBudget};

    fn write(offset: u64, tag: u64) -> Request {
        Request {
            op: Op::Write,
            offset,
            len: 4096,
            buf: 0,
            at: 0,
            tag,
        }
    }

    #[test]
    fn a_backend_queue_serves_requests_in_order_of_issue() {
        let mut q = BackendQueue::new(NullBackend::new(1 << 20, 512), 4, 1, 4096);
        for t in 0..3 {
            q.queue(write(t * 4096, t)).unwrap();
        }
        q.commit().unwrap();
        assert_eq!(q.in_flight(), 3);
        let mut out = Vec::new();
        q.reap(1, &mut out).unwrap();
        q.reap(2, &mut out).unwrap();
        let tags: Vec<u64> = out.iter().map(|c| c.tag).collect();
        assert_eq!(tags, [0, 1, 2]);
        assert_eq!(q.in_flight(), 0);
    }

    #[test]
    fn claimed_writes_pass_the_stack_and_a_refused_claim_writes_nothing() {
        let mut stack = Timed::new(WriteBudget::new(NullBackend::new(1 << 20, 512), Some(8192)));
        {
            let shared: Stack<'_> = Mutex::new(&mut stack);
            let mut q = Claimed::new(
                BackendQueue::new(NullBackend::new(1 << 20, 512), 2, 1, 4096),
                &shared,
            );
            q.queue(write(0, 0)).unwrap();
            q.queue(write(4096, 1)).unwrap();
            q.commit().unwrap();
            assert_eq!(q.in_flight(), 2);
            let mut out = Vec::new();
            q.reap(2, &mut out).unwrap();
            q.queue(write(8192, 2)).unwrap();
            let e = q.commit().unwrap_err();
            assert!(crate::backend::is_budget_exhausted(&e));
            assert_eq!(
                q.in_flight(),
                0,
                "the refused write never reached the device"
            );
        }
        assert_eq!(stack.writes, 2);
        assert_eq!(stack.inner().bytes_written, 8192);
    }
}
