//! What the system saw during a run: the block device's own counters (`/sys/block/DEV/stat`,
//! as iostat -x reads them), the page cache (`/proc/meminfo`) and the CPU time of the
//! io_uring worker threads that serve a job ([`IoWorkerCpu`]). The job thread's own CPU
//! time (getrusage) is [`crate::sys::thread_cpu_ns`].

use crate::analysis::noise::Environment;
use crate::sys::proc_text;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Nanoseconds the calling thread has spent runnable but waiting for a CPU
/// (`/proc/thread-self/schedstat`, second field); `None` where the kernel has no schedstat.
pub(crate) fn thread_runq_wait_ns() -> Option<u64> {
    let text = proc_text("/proc/thread-self/schedstat", 256)?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// How often [`IoWorkerCpu`] reads the workers' clocks: well inside the 5 s an io_uring
/// worker stays idle before it exits (the kernel's `WORKER_IDLE_TIMEOUT`), so every
/// worker is read after its last work and before it is gone.
pub(crate) const WORKER_SAMPLE_NS: u64 = 1_000_000_000;

/// The CPU time of the threads that serve one job thread's io_uring requests, which the
/// job thread's own time (`getrusage(RUSAGE_THREAD)`) leaves out: the kernel hands a
/// request that would block (a read of zram, a buffered write) to a worker thread of this
/// process named `iou-wrk-TID` after the thread that submitted it (`iou-sqp-TID` for a
/// submission-polling thread), and on such devices the workers use most of the job's CPU.
///
/// Workers come and go while the job runs (an idle worker exits after 5 s), and an exited
/// thread's time can no longer be read on its own: so each worker's clock is read when it
/// is first seen and then every [`WORKER_SAMPLE_NS`] ([`IoWorkerCpu::poll`]), and an exited
/// worker keeps what its last reading counted, all of it from before its 5 s of idling.
/// The total never goes backwards: a worker's part is its latest reading less its first
/// (nothing for one started after [`IoWorkerCpu::start`]).
pub(crate) struct IoWorkerCpu {
    /// The names of the owner's workers.
    names: [String; 2],
    /// Threads seen that are not the owner's workers (each one's name is read once).
    others: HashSet<u32>,
    /// The owner's workers by thread id: CPU time at the start (0 for one started since)
    /// and at the latest reading.
    workers: HashMap<u32, (u64, u64)>,
    /// What the workers that have exited used within the window.
    gone_ns: u64,
    /// When the next reading is due (`monotonic_ns`).
    next_ns: u64,
}

impl IoWorkerCpu {
    /// Start counting the workers of the calling thread: their CPU time so far is left out.
    pub(crate) fn start() -> Self {
        Self::start_for(crate::sys::thread_id())
    }

    /// Start counting the workers of the thread `owner` of this process.
    pub(crate) fn start_for(owner: u32) -> Self {
        let mut w = IoWorkerCpu {
            names: [format!("iou-wrk-{owner}"), format!("iou-sqp-{owner}")],
            others: HashSet::new(),
            workers: HashMap::new(),
            gone_ns: 0,
            next_ns: 0,
        };
        w.read(true);
        w
    }

    /// Read the workers' clocks when a reading is due at `now_ns` (`monotonic_ns`).
    pub(crate) fn poll(&mut self, now_ns: u64) {
        if now_ns >= self.next_ns {
            self.read(false);
        }
    }

    /// Read every worker's clock now and return the CPU time the workers used since the
    /// start, in ns.
    pub(crate) fn total_ns(&mut self) -> u64 {
        self.read(false);
        self.gone_ns
            + self
                .workers
                .values()
                .map(|&(first, last)| last.saturating_sub(first))
                .sum::<u64>()
    }

    /// One reading: list the process's threads, name the new ones, read the workers'
    /// clocks; a worker no longer listed (or whose clock cannot be read) has exited and
    /// keeps its last reading. `starting`: the readings are the baseline.
    fn read(&mut self, starting: bool) {
        let listed: HashSet<u32> = crate::sys::own_threads().into_iter().collect();
        // An exited thread's id may be given to a new thread: forget the ids that left.
        self.others.retain(|t| listed.contains(t));
        let mut gone = Vec::new();
        for (&tid, (first, last)) in self.workers.iter_mut() {
            match crate::sys::task_cpu_ns(tid).filter(|_| listed.contains(&tid)) {
                // A clock that went back is another thread that took the id: what the
                // exited one used is kept, and the new one counts from 0.
                Some(ns) if ns < *last => {
                    self.gone_ns += last.saturating_sub(*first);
                    (*first, *last) = (0, ns);
                }
                Some(ns) => *last = ns,
                None => gone.push(tid),
            }
        }
        for tid in gone {
            if let Some((first, last)) = self.workers.remove(&tid) {
                self.gone_ns += last.saturating_sub(first);
            }
        }
        for &tid in &listed {
            if self.others.contains(&tid) || self.workers.contains_key(&tid) {
                continue;
            }
            let ours = crate::sys::own_thread_name(tid).is_some_and(|n| self.names.contains(&n));
            if !ours {
                self.others.insert(tid);
                continue;
            }
            if let Some(ns) = crate::sys::task_cpu_ns(tid) {
                let first = if starting { ns } else { 0 };
                self.workers.insert(tid, (first, ns));
            }
        }
        self.next_ns = crate::sys::monotonic_ns().saturating_add(WORKER_SAMPLE_NS);
    }
}

/// The counters of `/sys/block/DEV/stat` (Documentation/block/stat.rst).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct DiskCounters {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
}

impl DiskCounters {
    /// Parse the whitespace-separated fields of a `stat` file.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|w| w.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        if f.len() < 11 {
            return None;
        }
        Some(DiskCounters {
            read_ios: f[0],
            read_merges: f[1],
            read_sectors: f[2],
            read_ticks_ms: f[3],
            write_ios: f[4],
            write_merges: f[5],
            write_sectors: f[6],
            write_ticks_ms: f[7],
            in_flight: f[8],
            io_ticks_ms: f[9],
            time_in_queue_ms: f[10],
        })
    }
}

/// The block device's statistics over a run, with fio's `disk_util` names and iostat -x's
/// derived figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DiskUtil {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_sectors: u64,
    pub write_sectors: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    /// Average queue size (iostat's aqu-sz): time in queue / elapsed.
    pub aqu_sz: f64,
    /// Percentage of the run the device had I/O in flight (iostat's %util).
    pub util: f64,
}

/// Compute the delta between two snapshots over `elapsed_ns`.
pub(crate) fn disk_delta(
    name: &str,
    a: &DiskCounters,
    b: &DiskCounters,
    elapsed_ns: u64,
) -> DiskUtil {
    let ms = (elapsed_ns as f64 / 1e6).max(1e-9);
    let d = |x: u64, y: u64| y.saturating_sub(x);
    let in_queue = d(a.time_in_queue_ms, b.time_in_queue_ms);
    let ticks = d(a.io_ticks_ms, b.io_ticks_ms);
    DiskUtil {
        name: name.to_string(),
        read_ios: d(a.read_ios, b.read_ios),
        write_ios: d(a.write_ios, b.write_ios),
        read_merges: d(a.read_merges, b.read_merges),
        write_merges: d(a.write_merges, b.write_merges),
        read_sectors: d(a.read_sectors, b.read_sectors),
        write_sectors: d(a.write_sectors, b.write_sectors),
        read_ticks: d(a.read_ticks_ms, b.read_ticks_ms),
        write_ticks: d(a.write_ticks_ms, b.write_ticks_ms),
        in_queue,
        aqu_sz: in_queue as f64 / ms,
        util: (ticks as f64 / ms * 100.0).min(100.0),
    }
}

/// The sysfs `stat` file of the block device holding `path` (the device itself for a
/// block device node, the partition or disk under a file), with the device's name.
pub(crate) fn disk_stat_path(path: &Path) -> Option<(String, PathBuf)> {
    use std::os::unix::fs::FileTypeExt;
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path).ok()?;
    let dev = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    // SAFETY: major/minor are pure arithmetic on a dev_t.
    let (maj, min) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let sys = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let stat = sys.join("stat");
    if !stat.exists() {
        return None;
    }
    let name = std::fs::canonicalize(&sys)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| format!("{maj}:{min}"));
    Some((name, stat))
}

/// Read a `stat` file.
pub(crate) fn read_disk_counters(stat: &Path) -> Option<DiskCounters> {
    DiskCounters::parse(&proc_text(stat, 4096)?)
}

/// Page-cache state from `/proc/meminfo`, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PageCache {
    pub dirty_bytes: u64,
    pub writeback_bytes: u64,
}

impl PageCache {
    /// Parse the `Dirty:` and `Writeback:` lines (kB).
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let mut dirty = None;
        let mut wb = None;
        for line in text.lines() {
            let mut it = line.split_whitespace();
            let key = it.next();
            let val = it.next().and_then(|v| v.parse::<u64>().ok());
            match key {
                Some("Dirty:") => dirty = val.map(|v| v * 1024),
                Some("Writeback:") => wb = val.map(|v| v * 1024),
                _ => {}
            }
        }
        Some(PageCache {
            dirty_bytes: dirty?,
            writeback_bytes: wb?,
        })
    }

    /// The current state, when `/proc/meminfo` is readable.
    pub(crate) fn now() -> Option<Self> {
        Self::parse(&proc_text("/proc/meminfo", 64 << 10)?)
    }
}

/// How busy the machine is: the 1-minute load average (`/proc/loadavg`) and the CPU time
/// counters of `/proc/stat` (all CPUs, in ticks), for steal time between two snapshots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CpuLoad {
    pub load1: f64,
    pub total_ticks: u64,
    pub steal_ticks: u64,
    /// CPUs this process may run on.
    pub cpus: usize,
    /// The kernel's CPU pressure total ("some": time any task waited for a CPU) and the
    /// monotonic clock when it was read, for the share of a run the machine was short of
    /// CPU; `None` where the kernel keeps no pressure figures.
    #[serde(skip)]
    pub cpu_wait_ns: Option<u64>,
    #[serde(skip)]
    pub at_ns: u64,
}

impl CpuLoad {
    /// Parse `/proc/loadavg` and the `cpu ` line of `/proc/stat`.
    pub(crate) fn parse(loadavg: &str, stat: &str, cpus: usize) -> Option<Self> {
        let load1 = loadavg.split_whitespace().next()?.parse().ok()?;
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is
        // already inside user, so the total is the first eight.
        let total_ticks = v.iter().take(8).sum();
        Some(CpuLoad {
            load1,
            total_ticks,
            steal_ticks: v.get(7).copied().unwrap_or(0),
            cpus,
            cpu_wait_ns: None,
            at_ns: 0,
        })
    }

    /// The machine now, when `/proc` is readable.
    pub(crate) fn now() -> Option<Self> {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut load = Self::parse(
            &proc_text("/proc/loadavg", 256)?,
            &proc_text("/proc/stat", 1 << 20)?,
            cpus,
        )?;
        load.cpu_wait_ns = crate::sys::cpu_pressure_some_ns();
        load.at_ns = crate::backend::monotonic_ns();
        Some(load)
    }

    /// Share of the time between `self` and a later snapshot that some task waited for a
    /// CPU (the kernel's pressure figure), when both snapshots have it.
    pub(crate) fn cpu_wait_share_since(&self, later: &CpuLoad) -> Option<f64> {
        let waited = later.cpu_wait_ns?.saturating_sub(self.cpu_wait_ns?);
        let t = later.at_ns.saturating_sub(self.at_ns);
        (t > 0).then(|| (waited as f64 / t as f64).min(1.0))
    }

    /// What the machine did between `before` and `after` (the end of a run), for a run's
    /// [`Environment`]: the load at the end, steal time and the share of the run some task
    /// waited for a CPU. A simulated card runs on a virtual clock, so the machine is no
    /// cause there (`sim`: all zero). The run's own stalled reads are the caller's.
    pub(crate) fn machine(
        before: Option<CpuLoad>,
        after: Option<CpuLoad>,
        sim: bool,
    ) -> Environment {
        let Some(after) = after else {
            return Environment::default();
        };
        if sim {
            return Environment {
                cpus: after.cpus,
                ..Environment::default()
            };
        }
        Environment {
            load1: after.load1,
            cpus: after.cpus,
            steal: before.map_or(0.0, |b| b.steal_since(&after)),
            cpu_wait_share: before.and_then(|b| b.cpu_wait_share_since(&after)),
            ..Environment::default()
        }
    }

    /// Fraction of CPU time stolen by the hypervisor between `self` and a later snapshot.
    pub(crate) fn steal_since(&self, later: &CpuLoad) -> f64 {
        let t = later.total_ticks.saturating_sub(self.total_ticks);
        if t == 0 {
            return 0.0;
        }
        later.steal_ticks.saturating_sub(self.steal_ticks) as f64 / t as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Spend `ms` of the calling thread's CPU time; returns its CPU time after.
    fn burn(ms: u64) -> u64 {
        let cpu = || {
            let (u, s) = crate::sys::thread_cpu_ns();
            u + s
        };
        let until = cpu() + ms * 1_000_000;
        let mut x = 0u64;
        while cpu() < until {
            for i in 0..10_000u64 {
                x = x.wrapping_add(i * i);
            }
            std::hint::black_box(x);
        }
        cpu()
    }

    /// A thread named `name` that burns `before` ms, says so, waits, burns `after` ms,
    /// says its CPU time, waits, and exits.
    struct Fake {
        said: mpsc::Receiver<u64>,
        go: mpsc::Sender<()>,
        handle: std::thread::JoinHandle<()>,
    }

    impl Fake {
        fn start(name: String, before: u64, after: u64) -> Fake {
            let (say, said) = mpsc::channel();
            let (go, wait) = mpsc::channel::<()>();
            let handle = std::thread::Builder::new()
                .name(name)
                .spawn(move || {
                    say.send(burn(before)).unwrap();
                    wait.recv().unwrap();
                    say.send(burn(after)).unwrap();
                    let _ = wait.recv();
                })
                .unwrap();
            Fake { said, go, handle }
        }
    }

    #[test]
    fn workers_are_counted_from_the_start_and_kept_after_they_exit() {
        let me = crate::sys::thread_id();
        // A worker of this thread that ran before the count starts (its first 40 ms are
        // left out), a stranger and another thread's worker (never counted).
        let old = Fake::start(format!("iou-wrk-{me}"), 40, 30);
        old.said.recv().unwrap();
        let stranger = Fake::start("flashscope-x".into(), 0, 40);
        let other = Fake::start(format!("iou-wrk-{}", me + 1), 0, 40);
        stranger.said.recv().unwrap();
        other.said.recv().unwrap();
        let mut w = IoWorkerCpu::start_for(me);
        // A worker that starts after the count: all of its time counts.
        let new = Fake::start(format!("iou-sqp-{me}"), 25, 25);
        new.said.recv().unwrap();
        for f in [&old, &stranger, &other, &new] {
            f.go.send(()).unwrap();
        }
        let new_cpu = new.said.recv().unwrap();
        old.said.recv().unwrap();
        stranger.said.recv().unwrap();
        other.said.recv().unwrap();
        // Read while the workers idle, then let them exit: what they used is kept.
        w.poll(u64::MAX);
        let live = w.total_ns();
        for f in [old, stranger, other, new] {
            f.go.send(()).unwrap();
            f.handle.join().unwrap();
        }
        let gone = w.total_ns();
        assert!(gone >= live, "went back: {live} -> {gone}");
        // The new worker's whole life (≥ 50 ms) and the old one's last 30 ms (less a
        // millisecond: getrusage's microseconds); not the old one's first 40 ms, nor the
        // 40 ms of the stranger or of the other thread's worker.
        let want = new_cpu + 29_000_000;
        assert!(gone >= want, "{gone} < {want}");
        assert!(
            gone < want + 25_000_000,
            "{gone} counts more than the workers: {want}"
        );
    }

    #[test]
    fn load_and_steal_parse() {
        let a = CpuLoad::parse(
            "3.20 2.10 1.00 4/300 1234\n",
            "cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n",
            2,
        )
        .unwrap();
        assert_eq!(a.load1, 3.2);
        assert_eq!((a.total_ticks, a.steal_ticks), (1000, 40));
        let b = CpuLoad::parse("1 1 1", "cpu  200 0 50 800 10 0 0 140 0 0\n", 2).unwrap();
        assert!((a.steal_since(&b) - 0.5).abs() < 1e-9);
        assert!(CpuLoad::parse("", "cpu 1", 2).is_none());
    }

    #[test]
    fn disk_stat_parses_and_derives_like_iostat() {
        let a = DiskCounters::parse("100 0 800 50 10 1 80 20 0 60 70 0 0 0 0").unwrap();
        let b = DiskCounters::parse("1100 5 8800 550 10 1 80 20 0 560 1070 0 0 0 0").unwrap();
        let u = disk_delta("zram0", &a, &b, 1_000_000_000);
        assert_eq!(u.read_ios, 1000);
        assert_eq!(u.read_merges, 5);
        assert_eq!(u.write_ios, 0);
        assert!((u.util - 50.0).abs() < 1e-9);
        assert!((u.aqu_sz - 1.0).abs() < 1e-9);
        assert!(DiskCounters::parse("1 2 3").is_none());
    }

    #[test]
    fn meminfo_dirty_and_writeback() {
        let p = PageCache::parse("MemTotal: 100 kB\nDirty:   12 kB\nWriteback:  3 kB\n").unwrap();
        assert_eq!(p.dirty_bytes, 12 * 1024);
        assert_eq!(p.writeback_bytes, 3 * 1024);
        assert!(PageCache::parse("MemTotal: 1 kB\n").is_none());
    }
}
