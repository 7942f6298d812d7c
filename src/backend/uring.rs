//! The io_uring engine behind `IoQueue`: requests in flight up to the ring's depth, the
//! queue's buffers registered with the kernel (no per-request page pinning), the file
//! registered, every queued request submitted and every available completion reaped in one
//! `io_uring_enter` per batch.

use super::monotonic_ns;
use super::queue::{Completion, IoQueue, Op, Request, Slab};
use io_uring::{opcode, types, IoUring};
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

/// io_uring on one open file.
pub struct UringQueue {
    ring: IoUring,
    /// The buffers the kernel reads and writes; `None` once given up (see `Drop`).
    slab: Option<Slab>,
    file: File,
    depth: usize,
    fixed_bufs: bool,
    fixed_file: bool,
    /// Pushed to the submission ring, not yet submitted.
    unsubmitted: usize,
    in_flight: usize,
}

/// Whether this kernel lets the process set up a ring at all (the error says why not).
pub fn available() -> io::Result<()> {
    IoUring::new(2).map(drop)
}

impl UringQueue {
    /// A ring of `depth` entries on `file` with `buffers` buffers of `buffer_len` bytes.
    /// `register_file` registers the descriptor with the ring (one lookup less per
    /// request); not for a descriptor that holds a device exclusively: a registered file
    /// lives until the kernel has torn the ring down, which it does asynchronously after
    /// the process is gone, so a `restore` right after a SIGKILL would find the device
    /// still held.
    pub fn new(
        file: File,
        depth: usize,
        buffers: usize,
        buffer_len: usize,
        register_file: bool,
    ) -> io::Result<Self> {
        let depth = depth.max(1);
        let entries = (depth as u32).next_power_of_two().max(2);
        // One thread submits and reaps: let the kernel run completion work only when we
        // wait (no cross-CPU wake-ups); kernels before 6.1 refuse these flags, so fall back.
        let ring = match IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
        {
            Ok(r) => r,
            Err(_) => IoUring::new(entries)?,
        };
        let mut slab = Slab::new(buffers, buffer_len);
        let base = slab.as_mut_ptr();
        let iovecs: Vec<libc::iovec> = (0..buffers)
            .map(|i| libc::iovec {
                iov_base: base.wrapping_add(i * buffer_len) as *mut libc::c_void,
                iov_len: buffer_len,
            })
            .collect();
        // SAFETY: the iovecs point into `slab`, which this queue owns and keeps until the
        // buffers are unregistered and nothing is in flight (see `Drop`).
        let fixed_bufs = buffers <= u16::MAX as usize
            && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let fixed_file =
            register_file && ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
        Ok(UringQueue {
            ring,
            slab: Some(slab),
            file,
            depth,
            fixed_bufs,
            fixed_file,
            unsubmitted: 0,
            in_flight: 0,
        })
    }

    fn submit(&mut self, wait: usize) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(wait) {
                Ok(_) => {
                    self.unsubmitted = 0;
                    return Ok(());
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl IoQueue for UringQueue {
    fn depth(&self) -> usize {
        self.depth
    }

    fn buf(&mut self, i: usize) -> &mut [u8] {
        match self.slab.as_mut() {
            Some(s) => s.get(i),
            None => &mut [],
        }
    }

    #[inline]
    fn queue(&mut self, req: Request) -> io::Result<()> {
        let Some(slab) = self.slab.as_mut() else {
            return Err(io::Error::other("the ring's buffers were given up"));
        };
        let bs = slab.buffer_len();
        if req.at + req.len > bs {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("request of {} bytes in buffers of {bs}", req.len),
            ));
        }
        let ptr = slab.as_mut_ptr().wrapping_add(req.buf * bs + req.at);
        let len = req.len as u32;
        let fd = types::Fd(self.file.as_raw_fd());
        let index = req.buf as u16;
        let entry = match (req.op, self.fixed_bufs, self.fixed_file) {
            (Op::Read, true, true) => opcode::ReadFixed::new(types::Fixed(0), ptr, len, index)
                .offset(req.offset)
                .build(),
            (Op::Read, true, false) => opcode::ReadFixed::new(fd, ptr, len, index)
                .offset(req.offset)
                .build(),
            (Op::Write, true, true) => opcode::WriteFixed::new(types::Fixed(0), ptr, len, index)
                .offset(req.offset)
                .build(),
            (Op::Write, true, false) => opcode::WriteFixed::new(fd, ptr, len, index)
                .offset(req.offset)
                .build(),
            (Op::Read, false, _) => opcode::Read::new(fd, ptr, len).offset(req.offset).build(),
            (Op::Write, false, _) => opcode::Write::new(fd, ptr, len).offset(req.offset).build(),
        }
        .user_data(req.tag);
        // SAFETY: the entry's buffer lies in the slab, which stays allocated while the
        // request is in flight (`Drop` drains or leaks it); the caller does not touch a
        // buffer while a request on it is in flight (the `IoQueue` contract).
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            // The ring is full: submit what is there and try once more.
            self.submit(0)?;
            // SAFETY: as above.
            unsafe { self.ring.submission().push(&entry) }
                .map_err(|_| io::Error::other("the submission ring is full"))?;
        }
        self.unsubmitted += 1;
        self.in_flight += 1;
        Ok(())
    }

    /// The batch is submitted with the next `reap`, in the same system call (or `kick`).
    #[inline]
    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn kick(&mut self) -> io::Result<()> {
        if self.unsubmitted > 0 {
            self.submit(0)?;
        }
        Ok(())
    }

    #[inline]
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let wait = min.min(self.in_flight);
        if wait > 0 || self.unsubmitted > 0 {
            self.submit(wait)?;
        }
        for cqe in self.ring.completion() {
            self.in_flight = self.in_flight.saturating_sub(1);
            let res = cqe.result();
            out.push(Completion {
                tag: cqe.user_data(),
                result: if res < 0 {
                    Err(io::Error::from_raw_os_error(-res))
                } else {
                    Ok(res as usize)
                },
            });
        }
        Ok(())
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    #[inline]
    fn clock_ns(&self) -> u64 {
        monotonic_ns()
    }

    fn idle(&mut self, ns: u64) {
        std::thread::sleep(std::time::Duration::from_nanos(ns.min(1_000_000_000)));
    }
}

impl Drop for UringQueue {
    fn drop(&mut self) {
        // Let whatever is in flight finish before the buffers can be freed.
        let mut tries = 0;
        while self.in_flight > 0 && tries < 1000 {
            tries += 1;
            if self.ring.submit_and_wait(1).is_err() {
                continue;
            }
            let n = self.ring.completion().count();
            self.in_flight = self.in_flight.saturating_sub(n);
        }
        if self.fixed_bufs {
            let _ = self.ring.submitter().unregister_buffers();
        }
        if self.in_flight > 0 {
            // The kernel may still write into these buffers: never free them.
            if let Some(slab) = self.slab.take() {
                std::mem::forget(slab.into_mem());
            }
        }
    }
}
