//! The per-job state machine every engine drives: which I/O comes next, when to stop,
//! ramp time, rate caps, fsync cadence, and the statistics of completed I/O.
//!
//! Engines only move bytes and read the clock; the decisions live here, so the sync,
//! io_uring, null and simulator engines count and stop the same way.

use super::histogram::LatencyHistogram;
use super::offsets::{Dir, OffsetGen};
use super::spec::{JobSpec, RwMode};
use super::verify::{VerifyReport, WrittenMap};
use serde::{Deserialize, Serialize};

const NS_PER_S: u64 = 1_000_000_000;

/// One I/O the job wants done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    pub dir: Dir,
    pub offset: u64,
    pub len: u64,
}

/// What the job wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Io(Io),
    /// The rate cap says wait this many ns before issuing more.
    Wait(u64),
    /// Nothing more to issue (completions may still be outstanding).
    Done,
}

/// Completed-I/O statistics of one direction.
#[derive(Debug, Clone, Default)]
pub struct DirStats {
    pub io_bytes: u64,
    pub ios: u64,
    pub clat: LatencyHistogram,
}

/// Counts of one per-second interval (the last may be shorter).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SecondSample {
    /// End of the interval, ms since counting began.
    pub t_ms: u64,
    /// Length of the interval in ms.
    pub interval_ms: u64,
    pub read_bytes: u64,
    pub read_ios: u64,
    pub write_bytes: u64,
    pub write_ios: u64,
}

impl SecondSample {
    /// Bytes per second in direction `dir`; None for an interval shorter than half a
    /// second (the run's last, which counts too few I/Os to be a rate).
    pub fn rate(&self, dir: Dir) -> Option<f64> {
        let bytes = match dir {
            Dir::Read => self.read_bytes,
            Dir::Write => self.write_bytes,
        };
        (self.interval_ms >= 500).then(|| bytes as f64 * 1000.0 / self.interval_ms as f64)
    }
}

/// Everything one job measured.
#[derive(Debug, Clone)]
pub struct JobResult {
    pub name: String,
    pub index: u32,
    pub read: DirStats,
    pub write: DirStats,
    /// Counting time: from the end of the ramp to the last completion, ns.
    pub runtime_ns: u64,
    pub samples: Vec<SecondSample>,
    /// CPU time of the job's thread while it counted, ns; on io_uring `sys_ns` also holds
    /// the time of the kernel's worker threads that served its requests (see
    /// `sysstat::IoWorkerCpu`).
    pub usr_ns: u64,
    pub sys_ns: u64,
    /// Time the job's thread spent runnable but waiting for a CPU while it counted (other
    /// processes on its CPU); `None` on the virtual clock or without schedstat.
    pub runq_wait_ns: Option<u64>,
    /// The wall time `runq_wait_ns` was counted over (the ramp and any preserve-mode
    /// saving included, which `runtime_ns` leaves out), ns: the wait's share is taken of
    /// this, so it cannot exceed 100 %.
    pub runq_window_ns: u64,
    /// Bytes written to the target, including the ramp and the verify-free part.
    pub bytes_written: u64,
    /// Why the job ended early, when it did; the statistics up to then are kept.
    pub error: Option<String>,
    /// That error was the session's write budget being spent (a stop, not a failure).
    pub budget_spent: bool,
    /// The target went away mid-run (ENODEV / ENXIO).
    pub vanished: bool,
    pub verify: Option<VerifyReport>,
}

/// The job's decision state; see the module documentation.
pub struct JobCtl {
    pub spec: JobSpec,
    pub index: u32,
    gen: OffsetGen,
    measure_start: u64,
    deadline: Option<u64>,
    in_ramp: bool,
    issued_bytes: u64,
    rated_bytes: [u64; 2],
    rate_start: u64,
    writes_since_fsync: u32,
    fsync_due: bool,
    pub stats: [DirStats; 2],
    window: [u64; 4],
    window_start: u64,
    next_sample: u64,
    pub samples: Vec<SecondSample>,
    last_completion: u64,
    pub bytes_written: u64,
    pub written: Option<WrittenMap>,
    stop: bool,
}

impl JobCtl {
    /// A job starting at `now` on the engine's clock.
    pub fn new(spec: &JobSpec, index: u32, now: u64) -> Self {
        let seed = spec
            .seed
            .wrapping_add(u64::from(index).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let gen = OffsetGen::new(
            spec.offset,
            spec.size,
            spec.bs_min,
            spec.bs_max,
            spec.rw.is_random(),
            seed,
        );
        let measure_start = now + spec.ramp_ns;
        let expected_secs = spec.runtime_ns.map_or(16, |r| r / NS_PER_S + 2).min(4096);
        JobCtl {
            spec: spec.clone(),
            index,
            gen,
            measure_start,
            deadline: spec.runtime_ns.map(|r| measure_start + r),
            in_ramp: spec.ramp_ns > 0,
            issued_bytes: 0,
            rated_bytes: [0, 0],
            rate_start: now,
            writes_since_fsync: 0,
            fsync_due: false,
            stats: [DirStats::default(), DirStats::default()],
            window: [0; 4],
            window_start: measure_start,
            next_sample: measure_start + NS_PER_S,
            samples: Vec::with_capacity(expected_secs as usize),
            last_completion: measure_start,
            bytes_written: 0,
            written: spec
                .verify
                .then(|| WrittenMap::new(spec.offset, spec.size, spec.bs_min)),
            stop: false,
        }
    }

    /// Start the job afresh at `now`: its deadline, ramp, rate and samples count from
    /// here. For an engine whose set-up took time before it issued anything.
    pub fn restart(&mut self, now: u64) {
        debug_assert_eq!(self.issued_bytes, 0, "restart before the first I/O only");
        *self = JobCtl::new(&self.spec, self.index, now);
    }

    /// Stop issuing (an error or a signal).
    pub fn stop(&mut self) {
        self.stop = true;
    }

    /// The next I/O to issue at `now`, a wait for the rate cap, or done.
    #[inline]
    pub fn next(&mut self, now: u64) -> Next {
        if self.stop {
            return Next::Done;
        }
        if self.spec.stop_on_signal && crate::signals::pending().is_some() {
            self.stop = true;
            return Next::Done;
        }
        if let Some(d) = self.deadline {
            if now >= d {
                return Next::Done;
            }
        }
        if !self.spec.time_based && self.issued_bytes >= self.spec.size {
            return Next::Done;
        }
        let dir = match self.spec.rw {
            RwMode::Read | RwMode::RandRead => Dir::Read,
            RwMode::Write | RwMode::RandWrite => Dir::Write,
            RwMode::Rw | RwMode::RandRw => self.gen.mixed_dir(self.spec.rwmixread),
        };
        let cap = match dir {
            Dir::Read => self.spec.rate.read,
            Dir::Write => self.spec.rate.write,
        };
        if let Some(rate) = cap {
            // Bytes allowed so far at `rate`; wait until the issued bytes fit.
            let allowed_ns =
                (self.rated_bytes[dir as usize] as u128 * NS_PER_S as u128 / rate as u128) as u64;
            let elapsed = now.saturating_sub(self.rate_start);
            if allowed_ns > elapsed {
                return Next::Wait(allowed_ns - elapsed);
            }
        }
        let left = if self.spec.time_based {
            u64::MAX
        } else {
            self.spec.size - self.issued_bytes
        };
        let (offset, len) = self.gen.next(dir, left);
        self.issued_bytes += len;
        self.rated_bytes[dir as usize] += len;
        Next::Io(Io { dir, offset, len })
    }

    /// Account a completed I/O that took `lat_ns`, finishing at `now`.
    #[inline]
    pub fn complete(&mut self, io: Io, lat_ns: u64, now: u64) {
        if io.dir == Dir::Write {
            self.bytes_written += io.len;
            if let Some(m) = self.written.as_mut() {
                m.mark(io.offset, io.len);
            }
            if self.spec.fsync > 0 {
                self.writes_since_fsync += 1;
                if self.writes_since_fsync >= self.spec.fsync {
                    self.writes_since_fsync = 0;
                    self.fsync_due = true;
                }
            }
        }
        if self.in_ramp {
            if now <= self.measure_start {
                return;
            }
            self.in_ramp = false;
            self.stats = [DirStats::default(), DirStats::default()];
            self.window = [0; 4];
        }
        while now > self.next_sample {
            self.push_sample(self.next_sample);
        }
        let s = &mut self.stats[io.dir as usize];
        s.io_bytes += io.len;
        s.ios += 1;
        s.clat.record(lat_ns);
        let w = io.dir as usize * 2;
        self.window[w] += io.len;
        self.window[w + 1] += 1;
        self.last_completion = now;
    }

    fn push_sample(&mut self, end: u64) {
        let start_ms = self.window_start.saturating_sub(self.measure_start) / 1_000_000;
        let end_ms = end.saturating_sub(self.measure_start) / 1_000_000;
        self.samples.push(SecondSample {
            t_ms: end_ms,
            interval_ms: end_ms - start_ms,
            read_bytes: self.window[0],
            read_ios: self.window[1],
            write_bytes: self.window[2],
            write_ios: self.window[3],
        });
        self.window = [0; 4];
        self.window_start = end;
        self.next_sample = end + NS_PER_S;
    }

    /// True once when an fsync is due (every `--fsync` writes).
    #[inline]
    pub fn take_fsync_due(&mut self) -> bool {
        std::mem::take(&mut self.fsync_due)
    }

    /// Close the job: the last partial sample, the counting time, and the result.
    pub fn finish(
        mut self,
        cpu: (u64, u64),
        error: Option<String>,
        vanished: bool,
        verify: Option<VerifyReport>,
    ) -> JobResult {
        let end = self.last_completion;
        // A short tail (an I/O completing just past the last full second) is not a sample
        // of its own unless it is all there is.
        let tail = end.saturating_sub(self.window_start);
        if !self.in_ramp
            && tail > 0
            && self.window.iter().any(|&x| x > 0)
            && (tail >= NS_PER_S / 2 || self.samples.is_empty())
        {
            self.push_sample(end);
        }
        let [read, write] = self.stats;
        JobResult {
            name: self.spec.name.clone(),
            index: self.index,
            read,
            write,
            runtime_ns: if self.in_ramp {
                0
            } else {
                end.saturating_sub(self.measure_start)
            },
            samples: self.samples,
            usr_ns: cpu.0,
            sys_ns: cpu.1,
            runq_wait_ns: None,
            runq_window_ns: 0,
            bytes_written: self.bytes_written,
            error,
            budget_spent: false,
            vanished,
            verify,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::spec::RateLimit;

    fn spec(rw: RwMode) -> JobSpec {
        JobSpec {
            rw,
            size: 64 * 4096,
            ..JobSpec::default()
        }
    }

    #[test]
    fn size_based_job_issues_exactly_size_bytes() {
        let mut j = JobCtl::new(&spec(RwMode::Read), 0, 0);
        let mut n = 0;
        let mut t = 0;
        while let Next::Io(io) = j.next(t) {
            t += 1000;
            j.complete(io, 1000, t);
            n += 1;
        }
        assert_eq!(n, 64);
        let r = j.finish((0, 0), None, false, None);
        assert_eq!(r.read.io_bytes, 64 * 4096);
        assert_eq!(r.read.ios, 64);
        assert_eq!(r.runtime_ns, 64_000);
        assert_eq!(r.read.clat.mean(), 1000.0);
    }

    #[test]
    fn ramp_is_not_counted_and_time_based_stops_at_the_deadline() {
        let s = JobSpec {
            time_based: true,
            runtime_ns: Some(3 * NS_PER_S),
            ramp_ns: NS_PER_S,
            ..spec(RwMode::RandRead)
        };
        let mut j = JobCtl::new(&s, 0, 0);
        let mut t = 0;
        while let Next::Io(io) = j.next(t) {
            t += 1_000_000; // 1 ms per I/O: 1000 IOPS
            j.complete(io, 1_000_000, t);
        }
        let r = j.finish((0, 0), None, false, None);
        assert_eq!(r.read.ios, 3000, "only the 3 s after the ramp count");
        assert_eq!(r.samples.len(), 3);
        assert!(
            r.samples.iter().all(|s| s.read_ios == 1000),
            "{:?}",
            r.samples
        );
    }

    #[test]
    fn restart_moves_the_deadline_and_the_start_of_counting() {
        let s = JobSpec {
            time_based: true,
            runtime_ns: Some(NS_PER_S),
            ..spec(RwMode::Read)
        };
        let mut j = JobCtl::new(&s, 0, 0);
        // Set-up took 5 s: without a restart the job would be over before it began.
        assert_eq!(j.next(5 * NS_PER_S), Next::Done);
        j.restart(5 * NS_PER_S);
        let mut t = 5 * NS_PER_S;
        while let Next::Io(io) = j.next(t) {
            t += NS_PER_S / 10;
            j.complete(io, NS_PER_S / 10, t);
        }
        let r = j.finish((0, 0), None, false, None);
        assert_eq!(r.read.ios, 10);
        assert_eq!(r.runtime_ns, NS_PER_S);
    }

    #[test]
    fn rate_cap_asks_to_wait() {
        let s = JobSpec {
            rate: RateLimit {
                read: Some(4096 * 10),
                write: None,
            },
            time_based: true,
            runtime_ns: Some(10 * NS_PER_S),
            ..spec(RwMode::Read)
        };
        let mut j = JobCtl::new(&s, 0, 0);
        assert!(matches!(j.next(0), Next::Io(_)));
        match j.next(0) {
            Next::Wait(ns) => assert_eq!(ns, NS_PER_S / 10),
            other => panic!("expected a wait, got {other:?}"),
        }
        assert!(matches!(j.next(NS_PER_S / 10), Next::Io(_)));
    }

    #[test]
    fn fsync_every_n_writes() {
        let s = JobSpec {
            fsync: 3,
            ..spec(RwMode::Write)
        };
        let mut j = JobCtl::new(&s, 0, 0);
        let mut dues = 0;
        for _ in 0..9 {
            if let Next::Io(io) = j.next(0) {
                j.complete(io, 1, 1);
            }
            if j.take_fsync_due() {
                dues += 1;
            }
        }
        assert_eq!(dues, 3);
    }
}
