//! The fio-style workload engine behind `io` and `bench`: a job spec in fio's words,
//! offset generators, the sync / io_uring / null engines and the simulator's queue model,
//! log-linear latency histograms, per-second samples, CPU time, the block device's own
//! statistics and the page cache, and verify stamps.
//!
//! On the simulator (`sim:` targets) the device serves one request at a time on its virtual
//! clock; a queue depth above 1 adds waiting time to each request's latency, and makes the
//! device faster only by what a card with a command queue (`cmd_queue`) overlaps of the
//! command time (see `engine`).

pub mod bench;
pub mod engine;
pub mod histogram;
pub mod job;
pub mod offsets;
pub mod spec;
pub mod sysstat;
pub mod verify;

pub use job::{DirStats, JobResult, SecondSample};
pub use offsets::Dir;
pub use spec::{EngineKind, JobSpec, Pattern, RateLimit, RwMode, SyncMode};

use crate::backend::{monotonic_ns, Backend};
use crate::vocab::Warning;
use crate::Result;
use histogram::LatencyHistogram;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::Path;
use sysstat::{DiskUtil, PageCache};
use verify::VerifyReport;

/// Where a workload runs.
pub enum RunTarget<'a> {
    /// A file or block device, opened by the engine with the job's flags, with no backend
    /// stack to pass its writes (reads, and the library's own tests on scratch files).
    Path(&'a Path),
    /// A file or block device on its fast path (each job's engine opens it with the job's
    /// flags), every write first claimed on `stack`, the target's backend stack
    /// (`Backend::claim_writes`: budgets, preserve mode).
    Guarded {
        path: &'a Path,
        stack: &'a mut dyn Backend,
    },
    /// A backend with its own clock (the simulator, or its wrapper stack): every request
    /// goes through it.
    Backend(&'a mut dyn Backend),
}

/// Everything a workload run measured.
#[derive(Debug, Clone)]
pub struct WorkloadResult {
    pub spec: JobSpec,
    pub jobs: Vec<JobResult>,
    /// The engine that ran ("sim" when a backend ran through the queue model).
    pub engine: String,
    /// "monotonic" for real devices, "virtual" for the simulator.
    pub clock: &'static str,
    pub disk: Option<DiskUtil>,
    /// Page cache before and after, for buffered (non-direct) runs.
    pub page_cache: Option<(PageCache, PageCache)>,
    pub elapsed_ns: u64,
    pub warnings: Vec<Warning>,
}

/// Totals of one direction over all jobs (fio's group reporting).
#[derive(Debug, Clone, Default)]
pub struct DirSummary {
    pub io_bytes: u64,
    pub ios: u64,
    /// The longest job's counting time, ns.
    pub runtime_ns: u64,
    pub clat: LatencyHistogram,
}

/// `count` per second of `runtime_ns` (0 when nothing was counted).
fn per_second(count: u64, runtime_ns: u64) -> f64 {
    if runtime_ns == 0 {
        0.0
    } else {
        count as f64 * 1e9 / runtime_ns as f64
    }
}

impl DirSummary {
    /// Bytes per second over the counting time.
    pub fn bw_bytes(&self) -> f64 {
        per_second(self.io_bytes, self.runtime_ns)
    }

    /// I/O operations per second.
    pub fn iops(&self) -> f64 {
        per_second(self.ios, self.runtime_ns)
    }

    /// What a saved result keeps: the counts and the latency's figures.
    pub fn totals(&self) -> DirTotals {
        DirTotals {
            io_bytes: self.io_bytes,
            ios: self.ios,
            runtime_ns: self.runtime_ns,
            clat_ns: self.clat.summary(),
        }
    }
}

/// One direction over all jobs as a document keeps it ([`DirSummary`] with the latency's
/// figures instead of its histogram).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DirTotals {
    pub io_bytes: u64,
    pub ios: u64,
    /// The longest job's counting time, ns.
    pub runtime_ns: u64,
    pub clat_ns: histogram::ClatSummary,
}

impl DirTotals {
    /// Bytes per second over the counting time.
    pub fn bw_bytes(&self) -> f64 {
        per_second(self.io_bytes, self.runtime_ns)
    }

    /// I/O operations per second.
    pub fn iops(&self) -> f64 {
        per_second(self.ios, self.runtime_ns)
    }
}

/// All jobs together, as fio's group reporting sums them: the figures `io`'s text prints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct GroupTotals {
    /// Each direction that completed I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<DirTotals>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<DirTotals>,
    /// CPU time of all jobs, user and system, ns.
    pub usr_ns: u64,
    pub sys_ns: u64,
    /// The longest job's counting time, ns (what the CPU time is a share of).
    pub runtime_ns: u64,
}

impl WorkloadResult {
    /// The sum of all jobs in one direction.
    pub fn total(&self, dir: Dir) -> DirSummary {
        let mut s = DirSummary::default();
        for j in &self.jobs {
            let d = match dir {
                Dir::Read => &j.read,
                Dir::Write => &j.write,
            };
            s.io_bytes += d.io_bytes;
            s.ios += d.ios;
            s.runtime_ns = s.runtime_ns.max(j.runtime_ns);
            s.clat.merge(&d.clat);
        }
        s
    }

    /// All jobs together: each direction that did I/O and the CPU time.
    pub fn group_totals(&self) -> GroupTotals {
        let dir = |d| {
            Some(self.total(d))
                .filter(|t| t.ios > 0)
                .map(|t| t.totals())
        };
        GroupTotals {
            read: dir(Dir::Read),
            write: dir(Dir::Write),
            usr_ns: self.jobs.iter().map(|j| j.usr_ns).sum(),
            sys_ns: self.jobs.iter().map(|j| j.sys_ns).sum(),
            runtime_ns: self.jobs.iter().map(|j| j.runtime_ns).max().unwrap_or(0),
        }
    }

    /// The first error that ended a job early.
    pub fn error(&self) -> Option<&str> {
        self.jobs.iter().find_map(|j| j.error.as_deref())
    }

    /// The first error that ended a job early, when it was the write budget being spent
    /// (the run stopped at its cap; what it measured up to then is not a full figure).
    pub fn budget_stop(&self) -> Option<&str> {
        self.error().filter(|_| {
            self.jobs
                .iter()
                .find(|j| j.error.is_some())
                .is_some_and(|j| j.budget_spent)
        })
    }

    /// True when the target went away mid-run.
    pub fn vanished(&self) -> bool {
        self.jobs.iter().any(|j| j.vanished)
    }

    /// Bytes written to the target, ramp included.
    pub fn bytes_written(&self) -> u64 {
        self.jobs.iter().map(|j| j.bytes_written).sum()
    }

    /// The verify pass over all jobs, when verifying.
    pub fn verify(&self) -> Option<VerifyReport> {
        let mut out: Option<VerifyReport> = None;
        for j in &self.jobs {
            if let Some(v) = &j.verify {
                out.get_or_insert_with(VerifyReport::default).merge(v);
            }
        }
        out
    }

    /// Per-second samples summed over jobs (by interval index).
    pub fn samples(&self) -> Vec<SecondSample> {
        let mut out: Vec<SecondSample> = Vec::new();
        for j in &self.jobs {
            for (i, s) in j.samples.iter().enumerate() {
                if out.len() <= i {
                    out.push(SecondSample {
                        t_ms: s.t_ms,
                        interval_ms: s.interval_ms,
                        ..SecondSample::default()
                    });
                }
                let o = &mut out[i];
                o.read_bytes += s.read_bytes;
                o.read_ios += s.read_ios;
                o.write_bytes += s.write_bytes;
                o.write_ios += s.write_ios;
            }
        }
        out
    }

    /// The `jobs` array in fio's JSON shape (names and units as fio's `--output-format=json`).
    pub fn fio_jobs_json(&self) -> Value {
        Value::Array(self.fio_jobs())
    }

    /// One job each in fio's JSON shape.
    pub fn fio_jobs(&self) -> Vec<Value> {
        self.jobs
            .iter()
            .map(|j| fio_job_json(j, &self.spec, &self.engine))
            .collect()
    }
}

/// fio's per-direction object.
pub fn fio_dir_json(d: &DirStats, runtime_ns: u64) -> Value {
    let secs = runtime_ns as f64 / 1e9;
    let (bw_bytes, iops) = if runtime_ns == 0 {
        (0.0, 0.0)
    } else {
        (d.io_bytes as f64 / secs, d.ios as f64 / secs)
    };
    json!({
        "io_bytes": d.io_bytes,
        "io_kbytes": d.io_bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        "iops": iops,
        "runtime": runtime_ns / 1_000_000,
        "total_ios": d.ios,
        "clat_ns": d.clat.summary(),
    })
}

/// CPU time as a percentage of a job's counting time (fio's `usr_cpu`); 0 when nothing
/// was counted.
pub fn cpu_percent(cpu_ns: u64, runtime_ns: u64) -> f64 {
    if runtime_ns == 0 {
        0.0
    } else {
        cpu_ns as f64 / runtime_ns as f64 * 100.0
    }
}

fn fio_job_json(j: &JobResult, spec: &JobSpec, engine: &str) -> Value {
    let cpu_pct = |ns: u64| cpu_percent(ns, j.runtime_ns);
    let mut v = json!({
        "jobname": j.name,
        "groupid": 0,
        "job_index": j.index,
        "error": if j.error.is_some() { 1 } else { 0 },
        "job options": {
            "rw": spec.rw.name(),
            "bs": if spec.bs_min == spec.bs_max { spec.bs_min.to_string() } else { format!("{}-{}", spec.bs_min, spec.bs_max) },
            "iodepth": spec.iodepth.to_string(),
            "ioengine": engine,
            "direct": if spec.direct { "1" } else { "0" },
            "size": spec.size.to_string(),
            "offset": spec.offset.to_string(),
        },
        "read": fio_dir_json(&j.read, j.runtime_ns),
        "write": fio_dir_json(&j.write, j.runtime_ns),
        "usr_cpu": cpu_pct(j.usr_ns),
        "sys_cpu": cpu_pct(j.sys_ns),
        "job_runtime": j.runtime_ns / 1_000_000,
        "samples": j.samples,
    });
    if let Some(e) = &j.error {
        v["error_message"] = json!(e);
    }
    if let Some(r) = &j.verify {
        v["verify"] = json!(r);
    }
    v
}

/// Run a workload: validate, snapshot the system, run the engine, snapshot again.
/// I/O errors mid-run end the affected jobs and are reported in the result (what was
/// measured until then is kept); setup errors are returned as errors.
pub fn run(spec: &JobSpec, target: RunTarget<'_>) -> Result<WorkloadResult> {
    let run_id = monotonic_ns() ^ (u64::from(std::process::id()) << 32) | 1;
    let mut warnings = Vec::new();
    if !spec.cpus.is_empty() {
        let allowed = allowed_cpus_or_all();
        if let Some(bad) = spec.cpus.iter().find(|c| !allowed.contains(c)) {
            return Err(crate::Error::usage(format!(
                "--cpus: CPU {bad} is not available here (allowed: {allowed:?})"
            )));
        }
    }
    match target {
        RunTarget::Backend(backend) if spec.engine == EngineKind::Null => {
            // No device time would pass on the simulator's clock: run the harness alone.
            spec.validate(backend.size_bytes(), backend.logical_sector_bytes())?;
            let t0 = monotonic_ns();
            let (jobs, _) = engine::run_on_file(Path::new(""), spec, run_id, &mut warnings, None)?;
            Ok(WorkloadResult {
                spec: spec.clone(),
                jobs,
                engine: "null".into(),
                clock: "monotonic",
                disk: None,
                page_cache: None,
                elapsed_ns: monotonic_ns().saturating_sub(t0),
                warnings,
            })
        }
        RunTarget::Backend(backend) => {
            spec.validate(backend.size_bytes(), backend.logical_sector_bytes())?;
            let t0 = backend.clock_ns();
            let jobs = engine::run_on_backend(backend, spec, run_id);
            let elapsed_ns = backend.clock_ns().saturating_sub(t0);
            Ok(WorkloadResult {
                spec: spec.clone(),
                jobs,
                engine: "sim".into(),
                clock: "virtual",
                disk: None,
                page_cache: None,
                elapsed_ns,
                warnings,
            })
        }
        RunTarget::Path(path) => run_on_path(spec, path, None, run_id, warnings),
        RunTarget::Guarded { path, stack } => {
            // `elapsed_ns` is the device time of the job's I/O, as on the other targets:
            // the stack's clock, which leaves out preserve mode saving each region before
            // its first overwrite (wall time the writes wait for, not the device's).
            let t0 = stack.clock_ns();
            let stack = std::sync::Mutex::new(stack);
            let mut r = run_on_path(spec, path, Some(&stack), run_id, warnings)?;
            let stack = stack.into_inner().unwrap_or_else(|e| e.into_inner());
            r.elapsed_ns = r.elapsed_ns.min(stack.clock_ns().saturating_sub(t0));
            Ok(r)
        }
    }
}

/// A run on a file or block device: the system's counters before and after.
fn run_on_path(
    spec: &JobSpec,
    path: &Path,
    stack: Option<&crate::backend::queue::Stack<'_>>,
    run_id: u64,
    mut warnings: Vec<Warning>,
) -> Result<WorkloadResult> {
    {
        {
            spec.check_buffer_memory(crate::platform::MemInfo::read().available_bytes)?;
            let stat = sysstat::disk_stat_path(path);
            let before = stat
                .as_ref()
                .and_then(|(_, p)| sysstat::read_disk_counters(p));
            let cache_before = if spec.direct { None } else { PageCache::now() };
            let t0 = monotonic_ns();
            let (jobs, engine) = engine::run_on_file(path, spec, run_id, &mut warnings, stack)?;
            let elapsed_ns = monotonic_ns().saturating_sub(t0);
            let disk = match (&stat, before) {
                (Some((name, p)), Some(a)) => sysstat::read_disk_counters(p)
                    .map(|b| sysstat::disk_delta(name, &a, &b, elapsed_ns)),
                _ => None,
            };
            let page_cache = cache_before.and_then(|a| PageCache::now().map(|b| (a, b)));
            let r = WorkloadResult {
                spec: spec.clone(),
                jobs,
                engine: engine.name().into(),
                clock: "monotonic",
                disk,
                page_cache,
                elapsed_ns,
                warnings,
            };
            Ok(r)
        }
    }
}

fn allowed_cpus_or_all() -> Vec<usize> {
    let a = crate::sys::allowed_cpus();
    if a.is_empty() {
        (0..1024).collect()
    } else {
        a
    }
}

/// Warnings about how the run went: a rate cap that was not met, a buffered run.
pub fn run_warnings(r: &WorkloadResult) -> Vec<Warning> {
    let mut w = r.warnings.clone();
    for (dir, cap) in [
        (Dir::Read, r.spec.rate.read),
        (Dir::Write, r.spec.rate.write),
    ] {
        let wants = match dir {
            Dir::Read => r.spec.rw.reads(),
            Dir::Write => r.spec.rw.writes(),
        };
        if let (true, Some(rate)) = (wants, cap) {
            let got = r.total(dir).bw_bytes();
            if got < rate as f64 * 0.9 {
                w.push(Warning::RateNotMet {
                    dir: if dir == Dir::Read { "read" } else { "write" }.to_string(),
                    cap_bytes_per_s: rate as f64,
                    got_bytes_per_s: got,
                });
            }
        }
    }
    if !r.spec.direct {
        w.push(Warning::Buffered);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;

    /// A stack that spends `save_ns` of wall time on each claimed batch, as preserve mode
    /// does saving a region before its first overwrite, and leaves that time out of its
    /// clock as preserve mode does.
    struct SavingStack {
        size: u64,
        save_ns: u64,
        hidden_ns: u64,
    }

    impl Backend for SavingStack {
        fn size_bytes(&self) -> u64 {
            self.size
        }
        fn logical_sector_bytes(&self) -> u32 {
            512
        }
        fn read_at(&mut self, _: &mut [u8], _: u64) -> std::io::Result<()> {
            Err(std::io::Error::other("not through the stack"))
        }
        fn write_at(&mut self, _: &[u8], _: u64) -> std::io::Result<()> {
            Err(std::io::Error::other("not through the stack"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
        fn clock_ns(&self) -> u64 {
            monotonic_ns().saturating_sub(self.hidden_ns)
        }
        fn idle(&mut self, _: u64) {}
        fn claim_writes(&mut self, _: &[(u64, u64)]) -> std::io::Result<()> {
            let t0 = monotonic_ns();
            std::thread::sleep(std::time::Duration::from_nanos(self.save_ns));
            self.hidden_ns += monotonic_ns() - t0;
            Ok(())
        }
    }

    #[test]
    fn a_guarded_run_s_elapsed_time_leaves_out_the_stack_s_saving() {
        // 16 writes, each claimed with 10 ms of saving: at least 160 ms of wall time the
        // device does not spend, which `elapsed_ns` (device time of the job's I/O, as
        // on the other targets) must not count.
        let file = tempfile::NamedTempFile::new_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        file.as_file().set_len(64 << 10).unwrap();
        let mut stack = SavingStack {
            size: 64 << 10,
            save_ns: 10_000_000,
            hidden_ns: 0,
        };
        let spec = JobSpec {
            rw: RwMode::Write,
            size: 64 << 10,
            direct: false,
            ..JobSpec::default()
        };
        let t0 = monotonic_ns();
        let r = run(
            &spec,
            RunTarget::Guarded {
                path: file.path(),
                stack: &mut stack,
            },
        )
        .unwrap();
        let wall = monotonic_ns() - t0;
        assert_eq!(r.bytes_written(), 64 << 10);
        assert!(stack.hidden_ns >= 160_000_000, "{}", stack.hidden_ns);
        assert!(
            r.elapsed_ns + stack.hidden_ns <= wall,
            "elapsed {} + saving {} > wall {wall}",
            r.elapsed_ns,
            stack.hidden_ns
        );
    }
}
