//! `TimeBudget`: the `--time-budget` of every test as one wrapper, as `WriteBudget` is for
//! bytes. Once the device's clock has passed the deadline, reads and writes are refused
//! with an error that `is_time_budget_reached` recognises, so a probe stops where it is
//! and keeps what it measured. Announcing a write (`prepare_write`) and idling pass.

use super::{forward, Backend};
use std::io;

/// Refuses reads and writes once `limit_ns` of the device's clock has passed since it was
/// made (`None`: never).
pub struct TimeBudget<B> {
    inner: B,
    /// The device clock at which reads and writes stop, if any.
    end_ns: Option<u64>,
    limit_ns: Option<u64>,
}

impl<B: Backend> TimeBudget<B> {
    /// Start the budget now, on `inner`'s clock.
    pub fn new(inner: B, limit_ns: Option<u64>) -> Self {
        let end_ns = limit_ns.map(|l| inner.clock_ns().saturating_add(l));
        TimeBudget {
            inner,
            end_ns,
            limit_ns,
        }
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut B {
        &mut self.inner
    }

    fn check(&self) -> io::Result<()> {
        match (self.end_ns, self.limit_ns) {
            (Some(end), Some(limit)) if self.inner.clock_ns() >= end => {
                Err(io::Error::other(TimeBudgetReached(limit)))
            }
            _ => Ok(()),
        }
    }
}

/// What `TimeBudget` refuses with, carrying the budget in ns. A type of its own, so that a
/// device's own timeout (ETIMEDOUT) is never taken for the budget.
#[derive(Debug)]
pub struct TimeBudgetReached(pub u64);

impl std::fmt::Display for TimeBudgetReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "time budget of {} reached",
            crate::units::format_ns(self.0 as f64)
        )
    }
}

impl std::error::Error for TimeBudgetReached {}

/// True for the error `TimeBudget` returns once the time is spent.
pub fn is_time_budget_reached(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|x| x.is::<TimeBudgetReached>())
}

impl<B: Backend> Backend for TimeBudget<B> {
    forward!(inner: size_bytes, logical_sector_bytes, flush, discard, clock_ns, idle, prepare_write);
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.check()?;
        self.inner.read_at(buf, offset)
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.check()?;
        self.inner.write_at(buf, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sim::{SimConfig, SimDevice};
    use crate::backend::AlignedBuf;

    #[test]
    fn stops_reads_and_writes_once_the_device_clock_passes() {
        let sim = SimDevice::new(SimConfig::parse("sd-16g").unwrap());
        let mut dev = TimeBudget::new(sim, Some(1_000_000_000));
        let buf = AlignedBuf::new(1 << 20);
        dev.write_at(&buf, 0).unwrap();
        dev.idle(2_000_000_000);
        let e = dev.write_at(&buf, 1 << 20).unwrap_err();
        assert!(is_time_budget_reached(&e), "{e}");
        assert!(e.to_string().contains("time budget"), "{e}");
        let mut buf = AlignedBuf::new(512);
        assert!(is_time_budget_reached(
            &dev.read_at(&mut buf, 0).unwrap_err()
        ));
        let mut free = TimeBudget::new(SimDevice::new(SimConfig::parse("sd-16g").unwrap()), None);
        free.idle(u64::MAX / 2);
        free.read_at(&mut buf, 0).unwrap();
    }
}
