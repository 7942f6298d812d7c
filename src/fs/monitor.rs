//! Progress counters shared between a running filesystem test, the cache monitor and the
//! progress line, and the monitor thread that samples /proc/meminfo and /proc/vmstat every
//! 100 ms so the page cache can be seen filling and draining.

use super::env::parse_vmstat;
use crate::backend::monotonic_ns;
use crate::platform::MemInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How far a test has come: bytes moved so far, bytes planned, and the phase it is in.
/// Written by the probe, read by the monitor and by the progress line on stderr.
#[derive(Debug, Default)]
pub struct ProgressCounters {
    done: AtomicU64,
    total: AtomicU64,
    phase: Mutex<String>,
    start_ns: AtomicU64,
}

impl ProgressCounters {
    /// A shared counter with nothing done yet.
    pub fn new() -> Arc<ProgressCounters> {
        let p = ProgressCounters::default();
        p.start_ns.store(monotonic_ns(), Ordering::Relaxed);
        Arc::new(p)
    }

    /// Set the number of bytes the whole test will move (writes plus reads).
    pub(crate) fn set_total(&self, bytes: u64) {
        self.total.store(bytes, Ordering::Relaxed);
    }

    /// Count `bytes` more as moved.
    pub(crate) fn add(&self, bytes: u64) {
        self.done.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Enter a named phase ("buffered write", "files 4 KiB read").
    pub(crate) fn set_phase(&self, phase: &str) {
        if let Ok(mut p) = self.phase.lock() {
            phase.clone_into(&mut p);
        }
    }

    pub(crate) fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    pub(crate) fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    pub(crate) fn phase(&self) -> String {
        self.phase.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Nanoseconds since the counter was made.
    pub fn elapsed_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.start_ns.load(Ordering::Relaxed))
    }
}

/// One sample of the memory counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MemSample {
    /// Nanoseconds since the monitor started.
    pub t_ns: u64,
    /// The test's phase at that moment.
    pub phase: String,
    /// Bytes the test had moved by then (throughput over time is its slope).
    pub bytes_done: u64,
    pub cached_bytes: u64,
    pub dirty_bytes: u64,
    pub writeback_bytes: u64,
    /// Selected /proc/vmstat counters (see `env::VMSTAT_KEYS`).
    pub vmstat: BTreeMap<String, u64>,
}

/// A thread sampling the memory counters at a fixed interval until stopped.
pub(crate) struct Monitor {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Vec<MemSample>>>,
}

impl Monitor {
    /// Start sampling every `interval` (100 ms for the tests), tagging samples with the
    /// progress of `progress`; sample times count from `t0_ns` (a `monotonic_ns` value).
    pub(crate) fn start(
        progress: Arc<ProgressCounters>,
        interval: Duration,
        t0_ns: u64,
    ) -> Monitor {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let handle = std::thread::Builder::new()
            .name("flashscope-meminfo".into())
            .spawn(move || {
                let t0 = t0_ns;
                let mut out = Vec::new();
                loop {
                    out.push(sample(&progress, monotonic_ns().saturating_sub(t0)));
                    if stop2.load(Ordering::Relaxed) {
                        break;
                    }
                    // Sleep in short steps so stopping is prompt.
                    let step = Duration::from_millis(10);
                    let mut slept = Duration::ZERO;
                    while slept < interval && !stop2.load(Ordering::Relaxed) {
                        std::thread::sleep(step);
                        slept += step;
                    }
                }
                out
            })
            .ok();
        Monitor { stop, handle }
    }

    /// Stop the thread and return the timeline (empty if the thread could not start).
    pub fn finish(mut self) -> Vec<MemSample> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn sample(progress: &ProgressCounters, t_ns: u64) -> MemSample {
    let m = MemInfo::read();
    let vmstat = std::fs::read_to_string("/proc/vmstat")
        .map(|t| parse_vmstat(&t))
        .unwrap_or_default();
    MemSample {
        t_ns,
        phase: progress.phase(),
        bytes_done: progress.done(),
        cached_bytes: m.cached_bytes,
        dirty_bytes: m.dirty_bytes,
        writeback_bytes: m.writeback_bytes,
        vmstat,
    }
}

/// Throughput between consecutive samples, bytes per second, at the later sample's time.
pub(crate) fn throughput_series(timeline: &[MemSample]) -> Vec<(u64, f64)> {
    timeline
        .windows(2)
        .filter_map(|w| {
            let dt = w[1].t_ns.checked_sub(w[0].t_ns)?;
            if dt == 0 {
                return None;
            }
            let db = w[1].bytes_done.saturating_sub(w[0].bytes_done);
            Some((w[1].t_ns, db as f64 * 1e9 / dt as f64))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_samples_every_interval_and_sees_progress() {
        let p = ProgressCounters::new();
        p.set_total(100);
        let m = Monitor::start(p.clone(), Duration::from_millis(20), monotonic_ns());
        p.set_phase("write");
        p.add(50);
        std::thread::sleep(Duration::from_millis(130));
        let t = m.finish();
        assert!(t.len() >= 4, "{} samples", t.len());
        assert!(t.windows(2).all(|w| w[1].t_ns > w[0].t_ns));
        assert!(t.iter().all(|s| s.vmstat.contains_key("nr_dirty")));
        assert_eq!(t.last().unwrap().bytes_done, 50);
        assert_eq!(t.last().unwrap().phase, "write");
    }

    #[test]
    fn throughput_is_the_slope_of_bytes_done() {
        let s = |t_ns, bytes_done| MemSample {
            t_ns,
            phase: String::new(),
            bytes_done,
            cached_bytes: 0,
            dirty_bytes: 0,
            writeback_bytes: 0,
            vmstat: BTreeMap::new(),
        };
        let series = throughput_series(&[s(0, 0), s(100_000_000, 10 << 20), s(100_000_000, 0)]);
        assert_eq!(series, vec![(100_000_000, (100u64 << 20) as f64)]);
    }
}
