//! A run's plan, held against what the run takes (issue 45.6): one mechanism for every
//! measuring command.
//!
//! Before a run its plan can only read the target ([`super::estimate`]): the writes are
//! assumed, so the first plan says a wide uncertainty. As soon as the run's first
//! measurement has the device's own rates (its first writes, metered by [`Metered`]), the
//! command works its plan out again with them ([`LivePlan::replan`]), and that plan says
//! [`REPLAN_UNCERTAINTY`]. The document's `timing` ([`LivePlan::timing`]) records both
//! plans, when the second was made, and the device time the run took, so that anyone can
//! hold the plans against the run.

use super::estimate::Rates;
use crate::backend::{forward, Backend};
use crate::report::Timing;
use crate::vocab::units::format_ns;
use std::io;
use std::sync::Mutex;

/// The uncertainty a plan worked out from the device's own rates says (either way).
pub const REPLAN_UNCERTAINTY: f64 = 0.3;
/// The least uncertainty a plan made before anything was written says: its writes are
/// assumed.
pub const FIRST_PLAN_UNCERTAINTY: f64 = 0.5;
/// The first measurement of a run's writes: at least this many writes...
pub const FIRST_WRITES: u64 = 4;
/// ...of at least this many bytes in all, metered before a plan is worked out again...
pub const FIRST_WRITE_BYTES: u64 = 4 << 20;
/// ...each at least this large: the rate a run's bytes go at (a small write's time is
/// its command's and its page's, which the read sample and the page size account for).
pub const LARGE_WRITE: u64 = 64 << 10;

/// What the run's I/O did so far, on the device's clock.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measured {
    /// Writes of at least [`LARGE_WRITE`], their bytes and time.
    pub writes: u64,
    pub write_bytes: u64,
    pub write_ns: u64,
    /// Every write's time.
    pub all_write_ns: u64,
    pub reads: u64,
    pub read_bytes: u64,
    pub read_ns: u64,
}

impl Measured {
    /// What was measured after `earlier` (a snapshot of the same meter).
    pub fn since(&self, earlier: &Measured) -> Measured {
        Measured {
            writes: self.writes.saturating_sub(earlier.writes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            write_ns: self.write_ns.saturating_sub(earlier.write_ns),
            all_write_ns: self.all_write_ns.saturating_sub(earlier.all_write_ns),
            reads: self.reads.saturating_sub(earlier.reads),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            read_ns: self.read_ns.saturating_sub(earlier.read_ns),
        }
    }

    /// The device time of the run's I/O so far.
    pub fn device_ns(&self) -> u64 {
        self.all_write_ns + self.read_ns
    }

    /// Enough writes to tell the device's write rate ([`FIRST_WRITES`],
    /// [`FIRST_WRITE_BYTES`]).
    pub fn has_write_rate(&self) -> bool {
        self.writes >= FIRST_WRITES && self.write_bytes >= FIRST_WRITE_BYTES && self.write_ns > 0
    }

    /// `rates` with the write rate these writes ran at: their bytes over their time less
    /// one command's cost each (the command's cost from `rates`' read sample).
    pub fn rates(&self, rates: &Rates) -> Rates {
        if !self.has_write_rate() {
            return *rates;
        }
        let commands = self.writes as f64 * rates.op_ns;
        let transfer = (self.write_ns as f64 - commands).max(self.write_ns as f64 / 2.0);
        Rates {
            write_bps: self.write_bytes as f64 * 1e9 / transfer,
            measured: true,
            ..*rates
        }
    }
}

/// A backend whose reads and writes are metered into a shared [`Measured`], which the
/// run's progress callback reads between two I/Os (the device is the test's meanwhile).
pub struct Metered<'a, B> {
    inner: B,
    meter: &'a Mutex<Measured>,
}

impl<'a, B: Backend> Metered<'a, B> {
    pub fn new(inner: B, meter: &'a Mutex<Measured>) -> Self {
        Metered { inner, meter }
    }

    fn add(&self, write: bool, bytes: u64, ns: u64) {
        let mut m = self.meter.lock().unwrap_or_else(|p| p.into_inner());
        if write {
            m.all_write_ns += ns;
            if bytes >= LARGE_WRITE {
                m.writes += 1;
                m.write_bytes += bytes;
                m.write_ns += ns;
            }
        } else {
            m.reads += 1;
            m.read_bytes += bytes;
            m.read_ns += ns;
        }
    }
}

impl<B: Backend> Backend for Metered<'_, B> {
    forward!(inner: size_bytes, logical_sector_bytes, flush, discard, clock_ns, idle, prepare_write, fast_queue, queued, claim_writes);
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let t0 = self.inner.clock_ns();
        self.inner.read_at(buf, offset)?;
        let ns = self.inner.clock_ns().saturating_sub(t0);
        self.add(false, buf.len() as u64, ns);
        Ok(())
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let t0 = self.inner.clock_ns();
        self.inner.write_at(buf, offset)?;
        let ns = self.inner.clock_ns().saturating_sub(t0);
        self.add(true, buf.len() as u64, ns);
        Ok(())
    }
}

/// A run's plans and where its device time started.
#[derive(Debug, Clone, PartialEq)]
pub struct LivePlan {
    planned_ns: u64,
    planned_uncertainty: f64,
    /// The plan worked out again: its time, its uncertainty, when (device ns into the run).
    replanned: Option<(u64, f64, u64)>,
    /// A run that only reads: its first plan came before it read, not before it wrote.
    reads_only: bool,
}

impl LivePlan {
    /// The plan stated before the run: `low` at the assumed rates, `high` with slower
    /// writes; its uncertainty covers both, and at least [`FIRST_PLAN_UNCERTAINTY`].
    pub fn new(low: u64, high: u64) -> Self {
        let spread = if low > 0 {
            (high.max(low) as f64 / low as f64) - 1.0
        } else {
            0.0
        };
        LivePlan {
            planned_ns: low,
            planned_uncertainty: spread.max(FIRST_PLAN_UNCERTAINTY),
            replanned: None,
            reads_only: false,
        }
    }

    /// A plan worked out from rates measured on the device before the run (reads only:
    /// align), which says [`REPLAN_UNCERTAINTY`] from the start.
    pub fn measured(ns: u64) -> Self {
        LivePlan {
            planned_ns: ns,
            planned_uncertainty: REPLAN_UNCERTAINTY,
            replanned: None,
            reads_only: false,
        }
    }

    /// A read-only run's plan before it read anything (align): one full round at the
    /// assumed rates (`low`), up to its read budget (`high`); its uncertainty covers both.
    /// Its notice says "before it read".
    pub fn reads(low: u64, high: u64) -> Self {
        LivePlan {
            reads_only: true,
            ..LivePlan::new(low, high)
        }
    }

    /// The plan worked out again, replacing an earlier one (align, whose first round
    /// prices its own reads and then tells what rounds follow: the later plan knows more,
    /// and `timing` says when it was made).
    pub fn revise(&mut self, ns: u64, at_ns: u64) {
        self.replanned = Some((ns, REPLAN_UNCERTAINTY, at_ns));
    }

    /// The plan the run's first measurement gave, `at_ns` into the run: kept once made
    /// (later measurements do not move the plan the run is held against).
    pub fn replan(&mut self, ns: u64, at_ns: u64) {
        if self.replanned.is_none() {
            self.replanned = Some((ns, REPLAN_UNCERTAINTY, at_ns));
        }
    }

    /// The line that says the plan worked out again, when it moved from the first plan by
    /// more than the first plan's uncertainty (issue 45.6); `None` otherwise.
    pub fn notice(&self, command: &'static str) -> Option<super::Notice> {
        let (ns, u, at_ns) = self.replanned?;
        let moved = (ns as f64 / self.planned_ns.max(1) as f64 - 1.0).abs();
        (moved > self.planned_uncertainty).then_some(super::Notice::Replanned {
            command,
            before: if self.reads_only { "read" } else { "wrote" },
            first: (self.planned_ns, self.planned_uncertainty),
            now: (ns, u),
            at_ns,
        })
    }

    /// Whether the plan was worked out again.
    pub fn replanned(&self) -> bool {
        self.replanned.is_some()
    }

    /// The plan stated before the run, device ns.
    pub fn planned_ns(&self) -> u64 {
        self.planned_ns
    }

    /// The document's `timing` for a run that took `device_ns`.
    pub fn timing(&self, device_ns: u64) -> Timing {
        Timing {
            planned_ns: self.planned_ns,
            planned_uncertainty: self.planned_uncertainty,
            replanned_ns: self.replanned.map(|r| r.0),
            replanned_uncertainty: self.replanned.map(|r| r.1),
            replanned_at_ns: self.replanned.map(|r| r.2),
            device_ns,
        }
    }
}

/// A plan in words: "about 90 s (±30 %)".
pub fn plan_text(ns: u64, uncertainty: f64) -> String {
    format!(
        "about {} (±{:.0} %)",
        format_ns(ns as f64),
        uncertainty * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_plan_says_its_spread_and_a_replan_thirty_percent() {
        let p = LivePlan::new(10_000_000_000, 30_000_000_000);
        let t = p.timing(12_000_000_000);
        assert_eq!(t.planned_uncertainty, 2.0);
        assert_eq!(t.replanned_ns, None);
        assert_eq!(LivePlan::new(10, 11).timing(0).planned_uncertainty, 0.5);
        let mut p = LivePlan::new(10, 11);
        p.replan(40, 3);
        p.replan(99, 9);
        let t = p.timing(42);
        assert_eq!(
            (t.replanned_ns, t.replanned_at_ns, t.replanned_uncertainty),
            (Some(40), Some(3), Some(0.3))
        );
        assert_eq!(t.last_plan(), (40, 0.3));
        // 40 against 10 (±50 %): said on stderr; 14 against 10 is within it: not said.
        let said = p.notice("open-au").map(|n| n.to_string()).unwrap();
        assert!(
            said.starts_with("flashscope open-au: planned again"),
            "{said}"
        );
        let mut close = LivePlan::new(10_000_000_000, 11_000_000_000);
        assert!(close.notice("x").is_none(), "nothing worked out again");
        close.replan(14_000_000_000, 1);
        assert!(close.notice("x").is_none(), "within the first plan's ±50 %");
        assert_eq!(plan_text(90_000_000_000, 0.3), "about 90 s (±30 %)");
    }

    #[test]
    fn a_read_only_plan_is_revised_and_says_before_it_read() {
        // align: one round at the assumed rates, up to four rounds of its read budget.
        let mut p = LivePlan::reads(5_000_000_000, 20_000_000_000);
        assert_eq!(p.timing(0).planned_uncertainty, 3.0);
        p.revise(30_000_000_000, 1);
        p.revise(3_000_000_000, 2);
        let t = p.timing(3_100_000_000);
        assert_eq!(
            (t.replanned_ns, t.replanned_at_ns),
            (Some(3_000_000_000), Some(2))
        );
        // 3 s against 5 s (±300 %): within it, not said.
        assert!(p.notice("align").is_none());
        p.revise(30_000_000_000, 3);
        let said = p.notice("align").map(|n| n.to_string()).unwrap();
        assert!(said.contains("the plan before it read said"), "{said}");
    }

    #[test]
    fn metered_writes_give_the_device_s_write_rate() {
        let r = Rates {
            read_bps: 100.0 * 1048576.0,
            write_bps: 50.0 * 1048576.0,
            op_ns: 0.0,
            measured: true,
        };
        let mut m = Measured::default();
        assert_eq!(m.rates(&r), r, "nothing measured: the rates as they were");
        // 64 writes of 64 KiB (4 MiB) in 1 s: 4 MiB/s.
        m.writes = 64;
        m.all_write_ns = 1_000_000_000;
        m.write_bytes = 4 << 20;
        m.write_ns = 1_000_000_000;
        let w = m.rates(&r);
        assert!((w.write_bps / 1048576.0 - 4.0).abs() < 1e-9, "{w:?}");
        assert_eq!(w.read_bps, r.read_bps);
    }
}
