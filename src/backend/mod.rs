//! Backends: the one place where bytes move. A backend knows nothing about tests.
//!
//! Backends compose as wrappers, in the manner of f3's libdevs:
//! `Timed<WriteBudget<SimDevice>>` times every call, counts and caps the bytes written, and
//! sends the I/O to the simulated card; the same probe runs unchanged on `SyncBackend`.

pub mod buffer;
pub mod null;
pub mod queue;
pub mod sim;
pub mod sync;
pub mod uring;

pub use buffer::AlignedBuf;
pub use null::NullBackend;
pub use sync::SyncBackend;

use std::io;

/// A device that can be read and written at byte offsets, with its own clock.
///
/// Offsets and lengths of `read_at` / `write_at` must be multiples of
/// `logical_sector_bytes()`, and buffers should be `AlignedBuf`s (O_DIRECT needs both).
pub trait Backend: Send {
    /// The device's size in bytes.
    fn size_bytes(&self) -> u64;
    /// The smallest unit of I/O (alignment of offsets and lengths).
    fn logical_sector_bytes(&self) -> u32;
    /// Read exactly `buf.len()` bytes at `offset`.
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Write exactly `buf.len()` bytes at `offset`.
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Make written data durable (fsync / flush the write cache).
    fn flush(&mut self) -> io::Result<()>;
    /// Discard (trim / erase) a range; `Unsupported` where the device cannot.
    fn discard(&mut self, _offset: u64, _len: u64) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "discard is not supported",
        ))
    }
    /// Nanoseconds on this device's clock: CLOCK_MONOTONIC_RAW for real devices, the
    /// virtual clock for the simulator. Only differences are meaningful.
    fn clock_ns(&self) -> u64;
    /// Let the device sit idle for `ns` nanoseconds (sleeps on real devices; advances the
    /// simulator's virtual clock).
    fn idle(&mut self, ns: u64);
    /// Announce that `[offset, offset+len)` is about to be written, so a wrapper can do its
    /// work (preserve mode saves the region) before, not inside, the timed writes.
    fn prepare_write(&mut self, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }
    /// These regions are about to be written by an engine on the device's fast path (a
    /// `backend::queue::Claimed` queue: io_uring or pread/pwrite on a descriptor of its
    /// own), not through `write_at`: do everything `write_at` does except moving the bytes
    /// (count them, cap them, save them). An error refuses the whole batch. A device at
    /// the bottom of the stack has nothing to do: the default announces each region.
    fn claim_writes(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
        for &(offset, len) in regions {
            self.prepare_write(offset, len)?;
        }
        Ok(())
    }
    /// A queue on this device's fast path (io_uring on its descriptor) with `depth`
    /// requests in flight and `buffers` buffers of `buffer_len` bytes. Wrappers pass it
    /// through unchanged, so whoever writes through it claims the writes on the stack
    /// first (`queue::Claimed`). `None` where the stack is the only path (the simulator, a
    /// directory of files).
    fn fast_queue(
        &self,
        _depth: usize,
        _buffers: usize,
        _buffer_len: usize,
    ) -> Option<Box<dyn queue::IoQueue>> {
        None
    }
    /// The host has `outstanding` requests queued on this device, the next `read_at` or
    /// `write_at` being one of them (a queue that serves them in order says so before each
    /// one; 1 = one at a time, what every other caller means). A device with a command
    /// queue may overlap their command overheads; it applies to that next request only.
    /// Wrappers pass it on.
    fn queued(&mut self, _outstanding: usize) {}
}

/// Writes the `Backend` methods a wrapper passes on unchanged to the backend in one of its
/// fields, so a wrapper spells out only what it changes:
/// `forward!(inner: size_bytes, logical_sector_bytes, flush);` inside `impl Backend for W`.
macro_rules! forward {
    ($f:ident: $($m:ident),+ $(,)?) => { $( $crate::backend::forward!(@ $f $m); )+ };
    (@ $f:ident size_bytes) => {
        fn size_bytes(&self) -> u64 { self.$f.size_bytes() }
    };
    (@ $f:ident logical_sector_bytes) => {
        fn logical_sector_bytes(&self) -> u32 { self.$f.logical_sector_bytes() }
    };
    (@ $f:ident read_at) => {
        fn read_at(&mut self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
            self.$f.read_at(buf, offset)
        }
    };
    (@ $f:ident flush) => {
        fn flush(&mut self) -> std::io::Result<()> { self.$f.flush() }
    };
    (@ $f:ident discard) => {
        fn discard(&mut self, offset: u64, len: u64) -> std::io::Result<()> {
            self.$f.discard(offset, len)
        }
    };
    (@ $f:ident clock_ns) => {
        fn clock_ns(&self) -> u64 { self.$f.clock_ns() }
    };
    (@ $f:ident idle) => {
        fn idle(&mut self, ns: u64) { self.$f.idle(ns) }
    };
    (@ $f:ident prepare_write) => {
        fn prepare_write(&mut self, offset: u64, len: u64) -> std::io::Result<()> {
            self.$f.prepare_write(offset, len)
        }
    };
    (@ $f:ident fast_queue) => {
        fn fast_queue(
            &self,
            depth: usize,
            buffers: usize,
            buffer_len: usize,
        ) -> Option<Box<dyn $crate::backend::queue::IoQueue>> {
            self.$f.fast_queue(depth, buffers, buffer_len)
        }
    };
    (@ $f:ident queued) => {
        fn queued(&mut self, outstanding: usize) { self.$f.queued(outstanding) }
    };
    (@ $f:ident claim_writes) => {
        fn claim_writes(&mut self, regions: &[(u64, u64)]) -> std::io::Result<()> {
            self.$f.claim_writes(regions)
        }
    };
}
pub(crate) use forward;

/// `Backend` for a pointer to one (`Box<B>`, `&mut B`): every method goes to the pointee.
macro_rules! pointer_backend {
    ($($ptr:ty),+) => { $(
        impl<B: Backend + ?Sized> Backend for $ptr {
            fn size_bytes(&self) -> u64 {
                (**self).size_bytes()
            }
            fn logical_sector_bytes(&self) -> u32 {
                (**self).logical_sector_bytes()
            }
            fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
                (**self).read_at(buf, offset)
            }
            fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
                (**self).write_at(buf, offset)
            }
            fn flush(&mut self) -> io::Result<()> {
                (**self).flush()
            }
            fn discard(&mut self, offset: u64, len: u64) -> io::Result<()> {
                (**self).discard(offset, len)
            }
            fn clock_ns(&self) -> u64 {
                (**self).clock_ns()
            }
            fn idle(&mut self, ns: u64) {
                (**self).idle(ns)
            }
            fn prepare_write(&mut self, offset: u64, len: u64) -> io::Result<()> {
                (**self).prepare_write(offset, len)
            }
            fn claim_writes(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
                (**self).claim_writes(regions)
            }
            fn fast_queue(
                &self,
                depth: usize,
                buffers: usize,
                buffer_len: usize,
            ) -> Option<Box<dyn queue::IoQueue>> {
                (**self).fast_queue(depth, buffers, buffer_len)
            }
            fn queued(&mut self, outstanding: usize) {
                (**self).queued(outstanding)
            }
        }
    )+ };
}
pointer_backend!(Box<B>, &mut B);

pub use crate::sys::monotonic_ns;

/// Times every call on the inner backend's clock and keeps totals.
pub struct Timed<B> {
    inner: B,
    /// Duration of the most recent read or write, in ns.
    pub last_ns: u64,
    /// Total time spent inside reads and writes, in ns.
    pub busy_ns: u64,
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
}

impl<B: Backend> Timed<B> {
    pub fn new(inner: B) -> Self {
        Timed {
            inner,
            last_ns: 0,
            busy_ns: 0,
            reads: 0,
            writes: 0,
            bytes_read: 0,
        }
    }

    /// Read and return how long it took, in ns.
    pub fn read_timed(&mut self, buf: &mut [u8], offset: u64) -> io::Result<u64> {
        self.read_at(buf, offset)?;
        Ok(self.last_ns)
    }

    /// Write and return how long it took, in ns.
    pub fn write_timed(&mut self, buf: &[u8], offset: u64) -> io::Result<u64> {
        self.write_at(buf, offset)?;
        Ok(self.last_ns)
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut B {
        &mut self.inner
    }

    pub fn into_inner(self) -> B {
        self.inner
    }
}

impl<B: Backend> Backend for Timed<B> {
    forward!(inner: size_bytes, logical_sector_bytes, flush, discard, clock_ns, idle, prepare_write, fast_queue, queued);
    fn claim_writes(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
        self.inner.claim_writes(regions)?;
        self.writes += regions.len() as u64;
        Ok(())
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let t0 = self.inner.clock_ns();
        let r = self.inner.read_at(buf, offset);
        self.last_ns = self.inner.clock_ns().saturating_sub(t0);
        self.busy_ns += self.last_ns;
        self.reads += 1;
        if r.is_ok() {
            self.bytes_read += buf.len() as u64;
        }
        r
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let t0 = self.inner.clock_ns();
        let r = self.inner.write_at(buf, offset);
        self.last_ns = self.inner.clock_ns().saturating_sub(t0);
        self.busy_ns += self.last_ns;
        self.writes += 1;
        r
    }
}

/// Counts every byte written and refuses writes beyond a budget (flash wears out).
pub struct WriteBudget<B> {
    inner: B,
    /// Bytes the inner device accepted.
    pub bytes_written: u64,
    /// Cap on `bytes_written`; `None` counts without a cap.
    pub limit: Option<u64>,
}

impl<B: Backend> WriteBudget<B> {
    pub fn new(inner: B, limit: Option<u64>) -> Self {
        WriteBudget {
            inner,
            bytes_written: 0,
            limit,
        }
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut B {
        &mut self.inner
    }
}

/// The error a write beyond the budget gets; `is_budget_exhausted` recognises it.
pub fn budget_error(limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::QuotaExceeded,
        format!(
            "{BUDGET_SPENT} {} exhausted",
            crate::vocab::units::format_bytes(limit)
        ),
    )
}

const BUDGET_SPENT: &str = "write budget of";

/// True for the error `WriteBudget` returns when the budget is spent (not a
/// filesystem's disk quota, EDQUOT, which has the same kind).
pub fn is_budget_exhausted(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::QuotaExceeded && e.raw_os_error().is_none()
}

impl<B: Backend> Backend for WriteBudget<B> {
    forward!(inner: size_bytes, logical_sector_bytes, read_at, flush, discard, clock_ns, idle, prepare_write, fast_queue, queued);
    fn claim_writes(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
        let bytes: u64 = regions.iter().map(|r| r.1).sum();
        if let Some(limit) = self.limit {
            if self.bytes_written + bytes > limit {
                return Err(budget_error(limit));
            }
        }
        self.inner.claim_writes(regions)?;
        self.bytes_written += bytes;
        Ok(())
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        if let Some(limit) = self.limit {
            if self.bytes_written + buf.len() as u64 > limit {
                return Err(budget_error(limit));
            }
        }
        self.inner.write_at(buf, offset)?;
        self.bytes_written += buf.len() as u64;
        Ok(())
    }
}

/// Ends reads and writes once the device's clock has passed a budget since the wrapper was
/// made (`--time-budget`, in device time: virtual on `sim:`). The error says "time budget
/// reached"; [`stop_reason`] turns it into the test's stopped-early reason.
pub struct TimeBudget<B> {
    inner: B,
    /// The device time at which I/O stops; `None`: no limit.
    end_ns: Option<u64>,
    limit_ns: u64,
}

impl<B: Backend> TimeBudget<B> {
    pub fn new(inner: B, limit_ns: Option<u64>) -> Self {
        let end_ns = limit_ns.map(|l| inner.clock_ns().saturating_add(l));
        TimeBudget {
            inner,
            end_ns,
            limit_ns: limit_ns.unwrap_or(0),
        }
    }

    /// Whether the budget is spent.
    pub fn passed(&self) -> bool {
        self.end_ns.is_some_and(|e| self.inner.clock_ns() >= e)
    }

    fn check(&self) -> io::Result<()> {
        if self.passed() {
            return Err(time_budget_error(self.limit_ns));
        }
        Ok(())
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut B {
        &mut self.inner
    }
}

impl<B: Backend> Backend for TimeBudget<B> {
    forward!(inner: size_bytes, logical_sector_bytes, flush, clock_ns, idle, prepare_write, fast_queue, queued);
    fn claim_writes(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
        self.check()?;
        self.inner.claim_writes(regions)
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.check()?;
        self.inner.read_at(buf, offset)
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.check()?;
        self.inner.write_at(buf, offset)
    }
    fn discard(&mut self, offset: u64, len: u64) -> io::Result<()> {
        self.check()?;
        self.inner.discard(offset, len)
    }
}

/// The error I/O gets once `TimeBudget`'s budget is spent.
pub fn time_budget_error(limit_ns: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "time budget of {} reached",
            crate::vocab::units::format_ns(limit_ns as f64)
        ),
    )
}

/// True for the error `TimeBudget` returns when the budget is spent.
pub fn is_time_budget_reached(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::TimedOut
}

/// The stopped-early reason for an error a budget wrapper returned ("write budget
/// reached (...)", "time budget reached"); `None` for any other error.
pub fn stop_reason(e: &io::Error) -> Option<String> {
    if is_budget_exhausted(e) {
        Some(format!("write budget reached ({e})"))
    } else if is_time_budget_reached(e) {
        Some("time budget reached".to_string())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_counts_and_caps_writes() {
        let mut b = WriteBudget::new(NullBackend::new(1 << 20, 512), Some(4096));
        let buf = AlignedBuf::new(2048);
        b.write_at(&buf, 0).unwrap();
        b.write_at(&buf, 2048).unwrap();
        let e = b.write_at(&buf, 4096).unwrap_err();
        assert!(is_budget_exhausted(&e));
        assert_eq!(b.bytes_written, 4096);
    }

    #[test]
    fn timed_measures_on_the_inner_clock() {
        let mut t = Timed::new(NullBackend::new(1 << 20, 512));
        let mut buf = AlignedBuf::new(512);
        t.read_timed(&mut buf, 0).unwrap();
        t.read_timed(&mut buf, 512).unwrap();
        assert_eq!(t.reads, 2);
        assert_eq!(t.bytes_read, 1024);
    }

    #[test]
    fn time_budget_stops_io_once_device_time_passes() {
        let cfg = sim::SimConfig::parse("custom,size=64M,noise=0").unwrap();
        let mut t = TimeBudget::new(sim::SimDevice::new(cfg), Some(1_000_000_000));
        let buf = AlignedBuf::new(1 << 20);
        let mut stopped = None;
        for i in 0..1000u64 {
            if let Err(e) = t.write_at(&buf, (i % 64) << 20) {
                stopped = Some(e);
                break;
            }
        }
        let e = stopped.expect("1 s of device time ends within 1000 MiB of writes");
        assert_eq!(stop_reason(&e).as_deref(), Some("time budget reached"));
        assert!(t.passed());
        let mut r = AlignedBuf::new(4096);
        assert!(is_time_budget_reached(&t.read_at(&mut r, 0).unwrap_err()));
        let mut free = TimeBudget::new(NullBackend::new(1 << 20, 512), None);
        free.write_at(&buf[..4096], 0).unwrap();
    }

    #[test]
    fn monotonic_clock_advances() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(b >= a);
    }
}
