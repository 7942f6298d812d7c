//! The job loop: one loop drives every engine through the queue interface
//! (`backend::queue::IoQueue`: queue / commit / reap, as fio's engines have): io_uring
//! (registered buffers, batched submission), sync (pread/pwrite), null (no I/O: the
//! harness alone) and any `Backend` — the simulator on its own clock.
//!
//! Real targets run one thread per job, each with a queue on a descriptor of its own;
//! their writes are claimed on the target's backend stack first (`backend::queue::Claimed`),
//! so the budgets and preserve mode see every write while the fast path keeps its speed.
//! Simulated targets run all jobs in one thread on the simulator's virtual clock, through
//! the stack itself. The simulated device serves one request at a time, in order of issue:
//! with `iodepth` × `numjobs` requests outstanding, throughput is what one request at a
//! time gives and each request's latency includes its wait behind the others. Queue depth
//! changes the accounting, not the device's speed, except that a card with a command queue
//! (`cmd_queue`) is told how many requests are outstanding and overlaps their command time.

use super::job::{Io, JobCtl, JobResult, Next};
use super::offsets::Dir;
use super::spec::{EngineKind, JobSpec, SyncMode};
use super::sysstat::{thread_runq_wait_ns, IoWorkerCpu};
use super::verify::{self, VerifyReport};
use crate::backend::queue::{
    self, BackendQueue, Claimed, Completion, IoQueue, Op, OpenFlags, Request, Stack,
};
use crate::backend::uring::{self, UringQueue};
use crate::backend::{monotonic_ns, AlignedBuf, Backend, NullBackend, SyncBackend};
use crate::sys::thread_cpu_ns;
use crate::vocab::error::is_vanished;
use crate::vocab::Warning;
use crate::Result;
use std::fs::File;
use std::io;
use std::path::Path;

/// Open `path` with the flags the job needs (O_DIRECT, O_SYNC/O_DSYNC, read-write only
/// when it writes).
pub fn open_for_job(path: &Path, spec: &JobSpec) -> Result<File> {
    queue::open_file(
        path,
        OpenFlags {
            read_write: spec.rw.writes() || spec.verify,
            direct: spec.direct,
            sync: spec.sync == SyncMode::Sync,
            dsync: spec.sync == SyncMode::Dsync,
        },
    )
}

/// Describe an I/O error for the report, and whether it means the target vanished.
fn describe(e: &io::Error, io: &Io) -> (String, bool) {
    let what = match io.dir {
        Dir::Read => "reading",
        Dir::Write => "writing",
    };
    if is_vanished(e) {
        (
            format!(
                "the target vanished while {what} {} bytes at offset {}: {e}",
                io.len, io.offset
            ),
            true,
        )
    } else {
        (
            format!("{what} {} bytes at offset {}: {e}", io.len, io.offset),
            false,
        )
    }
}

/// The warning for a job that asked for io_uring where `io_uring_setup` failed with
/// `setup_error`: the cause in words (missing kernel support, `kernel.io_uring_disabled`,
/// a seccomp filter; see `platform::explain_io_uring`) and the fallback. `roots` and
/// `privileged` describe the system, so every case is testable.
pub fn uring_fallback_warning(
    setup_error: io::Error,
    roots: &crate::platform::Roots,
    privileged: bool,
    iodepth: u32,
) -> Warning {
    let why = crate::platform::explain_io_uring(
        &Err(setup_error),
        crate::platform::io_uring_disabled_level(roots),
        privileged,
    )
    .message()
    .unwrap_or_else(|| "io_uring could not be set up".into());
    Warning::UringUnavailable { why, iodepth }
}

/// The outcome of one job: an error that ended it early, whether the target vanished,
/// and the thread's CPU time when the job's clocks started.
#[derive(Default)]
struct Ending {
    error: Option<String>,
    /// The error was the write budget being spent.
    budget_spent: bool,
    vanished: bool,
    cpu0: (u64, u64),
    /// The job runs on io_uring in a thread of its own: the CPU time of the kernel's
    /// worker threads serving its requests is the job's too ([`IoWorkerCpu`]).
    count_workers: bool,
    /// Counting them, from when the clocks started.
    workers: Option<IoWorkerCpu>,
    /// The thread's run-queue wait when the clocks started, and when that was.
    runq0: Option<u64>,
    runq_t0: u64,
}

impl Ending {
    /// The engine is set up (buffers faulted in, ring registered): start the job's CPU and
    /// run-queue clocks, so neither its CPU figures nor its wait include the set-up, which
    /// for a large slab of buffers takes hundreds of ms (1 GiB: 0.6 s here). The counting
    /// clock starts after this ([`JobCtl::restart`]), so the wait's window holds the whole
    /// counting time however long these readings take.
    fn ready(&mut self) {
        if self.count_workers {
            self.workers = Some(IoWorkerCpu::start());
        }
        self.cpu0 = thread_cpu_ns();
        self.runq_t0 = monotonic_ns();
        self.runq0 = thread_runq_wait_ns();
    }

    fn fail(&mut self, ctl: &mut JobCtl, e: &io::Error, io: &Io) {
        if self.error.is_none() {
            let (msg, vanished) = describe(e, io);
            self.error = Some(msg);
            self.budget_spent = crate::backend::is_budget_exhausted(e);
            self.vanished = vanished;
        }
        ctl.stop();
    }

    /// The CPU time the job's io_uring workers used since the clocks started (they run in
    /// the kernel only: system time), read now; 0 when not counted.
    fn workers_ns(&mut self) -> u64 {
        self.workers.as_mut().map_or(0, IoWorkerCpu::total_ns)
    }

    /// The job's result; `cpu1` is the CPU time of the thread (and `workers_ns` of its
    /// io_uring workers) at the end, shared by `jobs` jobs.
    fn result(
        self,
        ctl: JobCtl,
        cpu1: (u64, u64),
        workers_ns: u64,
        jobs: u64,
        verify: Option<VerifyReport>,
    ) -> JobResult {
        let jobs = jobs.max(1);
        let mut r = ctl.finish(
            (
                cpu1.0.saturating_sub(self.cpu0.0) / jobs,
                (cpu1.1.saturating_sub(self.cpu0.1) + workers_ns) / jobs,
            ),
            self.error,
            self.vanished,
            verify,
        );
        r.budget_spent = self.budget_spent;
        r
    }
}

/// A request in flight: its job, the I/O and when it was committed.
#[derive(Clone, Copy)]
struct InFlight {
    job: usize,
    io: Io,
    issued: u64,
}

/// The one job loop. `ctls` share `q` (one job per thread on real devices, every job on the
/// simulator); each keeps up to `spec.iodepth` requests in flight (at most the queue's
/// depth shared out). The queue's buffers: one per slot, then one write-pattern buffer per
/// job (the device only reads it). Fill every free slot the jobs have work for, commit the
/// batch, reap what completed, account it; stop when no job has more to do.
fn drive(ctls: &mut [JobCtl], ends: &mut [Ending], q: &mut dyn IoQueue, run_id: u64) {
    let jobs = ctls.len();
    if jobs == 0 {
        return;
    }
    let spec = ctls[0].spec.clone();
    let per_job = (spec.iodepth as usize).min(q.depth() / jobs).max(1);
    let slots = per_job * jobs;
    let bs = spec.bs_max as usize;
    for (j, ctl) in ctls.iter().enumerate() {
        let b = q.buf(slots + j);
        let n = bs.min(b.len());
        spec.pattern
            .fill(&mut b[..n], spec.seed ^ u64::from(ctl.index));
    }
    for end in ends.iter_mut() {
        end.ready();
    }
    // The counting starts now, so a short `--runtime` is not used up before the first I/O.
    let now = q.clock_ns();
    for ctl in ctls.iter_mut() {
        ctl.restart(now);
    }
    let mut free: Vec<usize> = (0..slots).rev().collect();
    let mut slot_io: Vec<Option<InFlight>> = vec![None; slots];
    let mut busy = vec![0usize; jobs];
    let mut waiting: Vec<Option<u64>> = vec![None; jobs];
    let mut batch: Vec<usize> = Vec::with_capacity(slots);
    let mut done: Vec<Completion> = Vec::with_capacity(slots);
    let mut fsync = vec![false; jobs];
    let mut broken: Option<io::Error> = None;
    // One clock read per round: the time of the last reap is the time the next batch is
    // queued (a deeper queue reads it again at submission, as its batches take longer to
    // queue); a null or sync job at depth 1 then costs one read per I/O.
    let deep = slots > 1;
    let mut now = q.clock_ns();
    loop {
        // Fill every free slot the jobs have work for.
        batch.clear();
        for j in 0..jobs {
            if waiting[j].is_some_and(|t| t > now) {
                continue;
            }
            waiting[j] = None;
            while busy[j] < per_job {
                let Some(&slot) = free.last() else { break };
                let io = match ctls[j].next(now) {
                    Next::Io(io) => io,
                    Next::Wait(ns) => {
                        waiting[j] = Some(now + ns);
                        break;
                    }
                    Next::Done => break,
                };
                let (op, buf) = match io.dir {
                    Dir::Read => (Op::Read, slot),
                    Dir::Write if spec.verify => {
                        // The slot's buffer is not in flight (the slot is free).
                        verify::stamp(&mut q.buf(slot)[..io.len as usize], io.offset, run_id);
                        (Op::Write, slot)
                    }
                    Dir::Write => (Op::Write, slots + j),
                };
                let req = Request {
                    op,
                    offset: io.offset,
                    len: io.len as usize,
                    buf,
                    at: 0,
                    tag: slot as u64,
                };
                if let Err(e) = q.queue(req) {
                    ends[j].fail(&mut ctls[j], &e, &io);
                    break;
                }
                free.pop();
                busy[j] += 1;
                slot_io[slot] = Some(InFlight {
                    job: j,
                    io,
                    issued: now,
                });
                batch.push(slot);
            }
        }
        if q.in_flight() == 0 {
            // Nothing in flight: either all done or every job waits for its rate cap.
            match waiting.iter().flatten().min() {
                Some(&t) => {
                    q.idle(t.saturating_sub(q.clock_ns()).max(1));
                    now = q.clock_ns();
                    continue;
                }
                None => break,
            }
        }
        if !batch.is_empty() {
            if let Err(e) = q.commit() {
                // Nothing of a refused batch reached the device (a claim failed: the
                // budget, a signal, the journal); its slots are free again.
                for &s in &batch {
                    if let Some(f) = slot_io[s].take() {
                        free.push(s);
                        busy[f.job] -= 1;
                        ends[f.job].fail(&mut ctls[f.job], &e, &f.io);
                    }
                }
                if q.in_flight() == 0 {
                    now = q.clock_ns();
                    continue;
                }
            }
            if deep {
                let t_submit = q.clock_ns();
                for &s in &batch {
                    if let Some(f) = slot_io[s].as_mut() {
                        f.issued = t_submit;
                    }
                }
            }
        }
        if let Err(e) = q.reap(1, &mut done) {
            broken = Some(e);
            break;
        }
        now = q.clock_ns();
        for end in ends.iter_mut() {
            if let Some(w) = end.workers.as_mut() {
                w.poll(monotonic_ns());
            }
        }
        for c in done.drain(..) {
            let slot = c.tag as usize;
            let Some(f) = slot_io.get_mut(slot).and_then(|s| s.take()) else {
                continue;
            };
            free.push(slot);
            busy[f.job] -= 1;
            let j = f.job;
            match c.result {
                Ok(n) if n as u64 == f.io.len => {
                    ctls[j].complete(f.io, now.saturating_sub(f.issued), now);
                    fsync[j] |= ctls[j].take_fsync_due();
                }
                Ok(n) => {
                    let e = io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("short transfer: {n} of {} bytes", f.io.len),
                    );
                    ends[j].fail(&mut ctls[j], &e, &f.io);
                }
                Err(e) if is_vanished(&e) => {
                    // A vanished device ends every job.
                    for (c, end) in ctls.iter_mut().zip(ends.iter_mut()) {
                        end.fail(c, &e, &f.io);
                    }
                }
                Err(e) => ends[j].fail(&mut ctls[j], &e, &f.io),
            }
        }
        for j in 0..jobs {
            if std::mem::take(&mut fsync[j]) {
                // Flushes what has completed so far (fio's fsync=N issues the same barrier).
                if let Err(e) = q.flush() {
                    let io = Io {
                        dir: Dir::Write,
                        offset: 0,
                        len: 0,
                    };
                    ends[j].fail(&mut ctls[j], &e, &io);
                }
            }
        }
    }
    if let Some(e) = broken {
        for (c, end) in ctls.iter_mut().zip(ends.iter_mut()) {
            if end.error.is_none() {
                end.error = Some(format!("the I/O engine failed: {e}"));
                end.budget_spent = crate::backend::is_budget_exhausted(&e);
                end.vanished = is_vanished(&e);
            }
            c.stop();
        }
    }
}

/// Read back every block the job wrote and check its stamps.
fn verify_pass(
    ctl: &JobCtl,
    dev: &mut dyn Backend,
    run_id: u64,
) -> std::result::Result<VerifyReport, String> {
    let mut report = VerifyReport::default();
    let Some(map) = ctl.written.as_ref() else {
        return Ok(report);
    };
    let mut buf = AlignedBuf::new(1 << 20);
    for (off, len) in map.runs(1 << 20) {
        let b = &mut buf[..len as usize];
        dev.read_at(b, off)
            .map_err(|e| format!("verify: reading {len} bytes at offset {off}: {e}"))?;
        report.check_block(b, off, run_id);
    }
    Ok(report)
}

/// The engine a job runs on a real target (or on nothing, for `null`): a queue on a
/// descriptor of its own, with `per_job` slots and one write-pattern buffer.
fn job_queue(
    engine: EngineKind,
    file: Option<&File>,
    spec: &JobSpec,
) -> io::Result<Box<dyn IoQueue>> {
    let bs = spec.bs_max as usize;
    let qd = spec.iodepth.max(1) as usize;
    Ok(match (engine, file) {
        (EngineKind::Null, _) | (_, None) => Box::new(BackendQueue::new(
            NullBackend::new(u64::MAX, 512),
            qd,
            qd + 1,
            bs,
        )),
        (EngineKind::Sync, Some(f)) => Box::new(BackendQueue::new(
            SyncBackend::new(f.try_clone()?, u64::MAX, 512, false),
            1,
            2,
            bs,
        )),
        (EngineKind::Uring, Some(f)) => {
            Box::new(UringQueue::new(f.try_clone()?, qd, qd + 1, bs, true)?)
        }
    })
}

/// Run `spec` on a file or block device, one thread per job, each with its own queue on
/// the target; `stack`, the target's backend stack, claims every write first. Returns each
/// job's result and the engine actually used (io_uring falls back to sync when the kernel
/// refuses it).
pub fn run_on_file(
    path: &Path,
    spec: &JobSpec,
    run_id: u64,
    warnings: &mut Vec<Warning>,
    stack: Option<&Stack<'_>>,
) -> Result<(Vec<JobResult>, EngineKind)> {
    let mut engine = spec.engine;
    if engine == EngineKind::Uring {
        if let Err(e) = uring::available() {
            let privileged = crate::sys::is_root();
            warnings.push(uring_fallback_warning(
                e,
                &crate::platform::Roots::system(),
                privileged,
                spec.iodepth,
            ));
            engine = EngineKind::Sync;
        }
    }
    if engine == EngineKind::Sync && spec.iodepth > 1 && spec.engine == EngineKind::Sync {
        warnings.push(Warning::IodepthIgnored {
            iodepth: spec.iodepth,
        });
    }
    let file = if engine == EngineKind::Null {
        None
    } else {
        Some(open_for_job(path, spec)?)
    };
    // The null engine moves nothing, so it has nothing to claim.
    let stack = stack.filter(|_| engine != EngineKind::Null && spec.rw.writes());
    let start = monotonic_ns();
    let results: Vec<JobResult> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..spec.numjobs)
            .map(|index| {
                let file = file.as_ref();
                let mut s = spec.clone();
                s.engine = engine;
                scope.spawn(move || job_thread(&s, index, file, run_id, start, stack))
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(i, h)| {
                h.join().unwrap_or_else(|_| {
                    JobCtl::new(spec, i as u32, start).finish(
                        (0, 0),
                        Some("the job's thread panicked".into()),
                        false,
                        None,
                    )
                })
            })
            .collect()
    });
    Ok((results, engine))
}

fn job_thread(
    spec: &JobSpec,
    index: u32,
    file: Option<&File>,
    run_id: u64,
    start: u64,
    stack: Option<&Stack<'_>>,
) -> JobResult {
    let setup_error =
        |what: String| JobCtl::new(spec, index, start).finish((0, 0), Some(what), false, None);
    if let Err(e) = crate::sys::pin_to(&spec.cpus) {
        return setup_error(format!("pinning to CPUs {:?}: {e}", spec.cpus));
    }
    let q = match job_queue(spec.engine, file, spec) {
        Ok(q) => q,
        Err(e) => {
            return JobCtl::new(spec, index, start).finish(
                (0, 0),
                Some(format!("{}: {e}", spec.engine.name())),
                is_vanished(&e),
                None,
            )
        }
    };
    let mut ctls = [JobCtl::new(spec, index, monotonic_ns())];
    let mut ends = [Ending {
        count_workers: spec.engine == EngineKind::Uring,
        ..Ending::default()
    }];
    match stack {
        Some(stack) => drive(&mut ctls, &mut ends, &mut Claimed::new(q, stack), run_id),
        None => {
            let mut q = q;
            drive(&mut ctls, &mut ends, &mut q, run_id)
        }
    }
    let cpu1 = thread_cpu_ns();
    let workers_ns = ends[0].workers_ns();
    let runq1 = thread_runq_wait_ns();
    let runq_window_ns = monotonic_ns().saturating_sub(ends[0].runq_t0);
    let [ctl] = ctls;
    let [mut end] = ends;
    let runq_wait_ns = end.runq0.zip(runq1).map(|(a, b)| b.saturating_sub(a));
    let verify = match file {
        Some(f) if spec.verify && !end.vanished && spec.engine != EngineKind::Null => {
            let checked = f
                .try_clone()
                .map_err(|e| format!("verify: {e}"))
                .and_then(|f| {
                    verify_pass(&ctl, &mut SyncBackend::new(f, u64::MAX, 512, false), run_id)
                });
            match checked {
                Ok(r) => Some(r),
                Err(msg) => {
                    end.error.get_or_insert(msg);
                    None
                }
            }
        }
        _ => None,
    };
    let mut r = end.result(ctl, cpu1, workers_ns, 1, verify);
    r.runq_wait_ns = runq_wait_ns;
    r.runq_window_ns = runq_window_ns;
    r
}

/// Run `spec` on a backend (the simulator, through its wrapper stack) on its own clock:
/// all jobs in this thread, the device serving one request at a time in order of issue
/// (see the module documentation).
pub fn run_on_backend(backend: &mut dyn Backend, spec: &JobSpec, run_id: u64) -> Vec<JobResult> {
    let start = backend.clock_ns();
    let jobs = spec.numjobs.max(1) as usize;
    let qd = spec.iodepth.max(1) as usize;
    let mut ctls: Vec<JobCtl> = (0..spec.numjobs)
        .map(|i| JobCtl::new(spec, i, start))
        .collect();
    let mut ends: Vec<Ending> = (0..spec.numjobs).map(|_| Ending::default()).collect();
    let mut q = BackendQueue::new(
        &mut *backend,
        qd * jobs,
        qd * jobs + jobs,
        spec.bs_max as usize,
    );
    drive(&mut ctls, &mut ends, &mut q, run_id);
    drop(q);
    let cpu1 = thread_cpu_ns();
    ctls.into_iter()
        .zip(ends)
        .map(|(ctl, mut end)| {
            let verify = if spec.verify && !end.vanished {
                match verify_pass(&ctl, backend, run_id) {
                    Ok(r) => Some(r),
                    Err(msg) => {
                        end.error.get_or_insert(msg);
                        None
                    }
                }
            } else {
                None
            };
            end.result(ctl, cpu1, 0, jobs as u64, verify)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sim::{SimConfig, SimDevice};
    use crate::workload::spec::{RateLimit, RwMode};
    use crate::workload::{run, RunTarget};

    const S: u64 = 1_000_000_000;

    fn sim(spec: &str) -> SimDevice {
        SimDevice::new(SimConfig::parse(spec).unwrap())
    }

    fn job(rw: RwMode, bs: u64, qd: u32, secs: u64) -> JobSpec {
        JobSpec {
            rw,
            bs_min: bs,
            bs_max: bs,
            iodepth: qd,
            size: 256 << 20,
            runtime_ns: Some(secs * S),
            time_based: true,
            ..JobSpec::default()
        }
    }

    #[test]
    fn sim_random_read_iops_match_the_model() {
        let mut dev = sim("sd-16g,noise=0,outliers=0");
        let cfg = dev.config().clone();
        let service = cfg.cmd as f64 + 4096.0 * 1e9 / cfg.read_bw as f64;
        let r = run(
            &job(RwMode::RandRead, 4096, 1, 2),
            RunTarget::Backend(&mut dev),
        )
        .unwrap();
        let t = r.total(Dir::Read);
        let want = 1e9 / service;
        assert!(
            (t.iops() / want - 1.0).abs() < 0.03,
            "{} vs {want}",
            t.iops()
        );
        assert!((t.clat.mean() / service - 1.0).abs() < 0.03);
        assert_eq!(r.clock, "virtual");
    }

    #[test]
    fn sim_queue_depth_adds_waiting_not_speed() {
        let mut dev = sim("sd-16g,noise=0,outliers=0");
        let cfg = dev.config().clone();
        let service = cfg.cmd as f64 + 4096.0 * 1e9 / cfg.read_bw as f64;
        let r = run(
            &job(RwMode::RandRead, 4096, 8, 2),
            RunTarget::Backend(&mut dev),
        )
        .unwrap();
        let t = r.total(Dir::Read);
        assert!(
            (t.iops() * service / 1e9 - 1.0).abs() < 0.03,
            "{}",
            t.iops()
        );
        // Each request waits behind the seven others: latency ≈ 8 × service.
        let p50 = t.clat.percentile(50.0).unwrap() as f64;
        assert!(
            (p50 / (8.0 * service) - 1.0).abs() < 0.05,
            "{p50} vs {}",
            8.0 * service
        );
    }

    #[test]
    fn sim_sequential_write_follows_the_write_bandwidth() {
        let mut dev = sim("sd-16g,noise=0,outliers=0");
        let cfg = dev.config().clone();
        let r = run(
            &job(RwMode::Write, 1 << 20, 1, 3),
            RunTarget::Backend(&mut dev),
        )
        .unwrap();
        let bw = r.total(Dir::Write).bw_bytes();
        let model = (1u64 << 20) as f64
            / (cfg.cmd as f64 / 1e9 + (1u64 << 20) as f64 / cfg.write_bw as f64);
        assert!((bw / model - 1.0).abs() < 0.05, "{bw} vs {model}");
        assert_eq!(r.bytes_written(), r.jobs[0].bytes_written);
        assert!(r.bytes_written() >= r.total(Dir::Write).io_bytes);
    }

    #[test]
    fn two_jobs_share_one_simulated_device() {
        let mut dev = sim("sd-16g,noise=0,outliers=0");
        let mut spec = job(RwMode::RandRead, 4096, 1, 2);
        spec.numjobs = 2;
        let r = run(&spec, RunTarget::Backend(&mut dev)).unwrap();
        let one = r.jobs[0].read.ios as f64;
        let two = r.jobs[1].read.ios as f64;
        assert!((one / two - 1.0).abs() < 0.02);
        let cfg = dev.config().clone();
        let service = cfg.cmd as f64 + 4096.0 * 1e9 / cfg.read_bw as f64;
        assert!((r.total(Dir::Read).iops() * service / 1e9 - 1.0).abs() < 0.03);
    }

    #[test]
    fn a_vanishing_device_keeps_what_was_measured() {
        let mut dev = sim("sd-16g,noise=0,fault=vanish@100");
        let r = run(
            &job(RwMode::RandRead, 4096, 4, 2),
            RunTarget::Backend(&mut dev),
        )
        .unwrap();
        assert!(r.vanished());
        assert!(r.error().unwrap().contains("vanished"), "{:?}", r.error());
        assert_eq!(r.total(Dir::Read).ios, 100);
    }

    #[test]
    fn an_io_error_ends_the_job_with_its_offset() {
        let mut dev = sim("sd-16g,noise=0,fault=eio@1M+4K");
        let mut spec = job(RwMode::Read, 4096, 1, 2);
        spec.time_based = false;
        let r = run(&spec, RunTarget::Backend(&mut dev)).unwrap();
        assert!(!r.vanished());
        assert!(
            r.error().unwrap().contains("offset 1048576"),
            "{:?}",
            r.error()
        );
        assert_eq!(r.total(Dir::Read).ios, 256);
    }

    #[test]
    fn verify_catches_a_card_that_aliases_writes() {
        // 8 MiB announced, 4 MiB real: the second half overwrites the first.
        let mut dev = sim("custom,size=8M,real=4M,fake_mode=wrap,noise=0,erase=1M,page=16K");
        let mut spec = job(RwMode::Write, 1 << 20, 1, 1);
        spec.size = 8 << 20;
        spec.time_based = false;
        spec.runtime_ns = None;
        spec.verify = true;
        let r = run(&spec, RunTarget::Backend(&mut dev)).unwrap();
        let v = r.verify().unwrap();
        assert_eq!(v.bytes_checked, 8 << 20);
        assert_eq!(v.bad_units, (4 << 20) / 512, "{v:?}");
        assert_eq!(v.first_bad_offset, Some(0));
        // An honest card passes the same job.
        let mut honest = sim("custom,size=8M,noise=0,erase=1M,page=16K");
        let r = run(&spec, RunTarget::Backend(&mut honest)).unwrap();
        assert_eq!(r.verify().unwrap().bad_units, 0);
    }

    #[test]
    fn rate_cap_holds_on_the_virtual_clock() {
        let mut dev = sim("sd-16g,noise=0,outliers=0");
        let mut spec = job(RwMode::RandRead, 4096, 1, 4);
        spec.rate = RateLimit {
            read: Some(1 << 20),
            write: None,
        };
        let r = run(&spec, RunTarget::Backend(&mut dev)).unwrap();
        let bw = r.total(Dir::Read).bw_bytes();
        assert!((bw / (1u64 << 20) as f64 - 1.0).abs() < 0.03, "{bw}");
        assert!(crate::workload::run_warnings(&r).is_empty());
        // A cap above what the device can do is reported as not met.
        spec.rate.read = Some(100 << 20);
        let r = run(&spec, RunTarget::Backend(&mut dev)).unwrap();
        let w = crate::workload::run_warnings(&r);
        assert!(w.iter().any(|w| w.kind() == "rate_not_met"), "{w:?}");
    }

    #[test]
    fn null_engine_does_no_io() {
        // On a simulated target the null engine runs on the real clock too (no device time
        // would ever pass otherwise).
        let mut dev = sim("sd-16g,fault=vanish@0");
        let mut spec = job(RwMode::RandRead, 4096, 4, 1);
        spec.engine = EngineKind::Null;
        spec.runtime_ns = Some(S / 20);
        let r = run(&spec, RunTarget::Backend(&mut dev)).unwrap();
        assert_eq!(r.engine, "null");
        assert!(
            r.error().is_none(),
            "the device was never touched: {:?}",
            r.error()
        );
        assert!(
            r.total(Dir::Read).iops() > 100_000.0,
            "{}",
            r.total(Dir::Read).iops()
        );
    }

    fn file_roundtrip(engine: EngineKind, qd: u32) {
        let file = tempfile::NamedTempFile::new_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        file.as_file().set_len(4 << 20).unwrap();
        let spec = JobSpec {
            rw: RwMode::RandRw,
            bs_min: 4096,
            bs_max: 16384,
            iodepth: qd,
            size: 4 << 20,
            engine,
            verify: true,
            ..JobSpec::default()
        };
        let r = run(&spec, RunTarget::Path(file.path())).unwrap();
        assert!(r.error().is_none(), "{:?}", r.error());
        let v = r.verify().unwrap();
        assert!(v.bytes_checked > 0);
        assert_eq!(v.bad_units, 0);
        let rd = r.total(Dir::Read);
        let wr = r.total(Dir::Write);
        assert_eq!(rd.io_bytes + wr.io_bytes, 4 << 20);
        assert!(rd.ios > 0 && wr.ios > 0);
        assert!(rd.clat.min() > 0);
        // The CPU wait's window holds the counting time (and the ramp before it), so the
        // wait's share of it is a share of time that passed, never above 100 %.
        for j in &r.jobs {
            assert!(j.runq_window_ns >= j.runtime_ns, "{j:?}");
        }
    }

    #[test]
    fn io_uring_refusals_name_the_cause_and_the_fallback() {
        use crate::platform::Roots;
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::under(dir.path());
        let w =
            uring_fallback_warning(io::Error::from_raw_os_error(libc::ENOSYS), &roots, true, 32);
        assert_eq!(w.kind(), "uring_unavailable");
        assert!(w.to_string().contains("no io_uring"), "{w}");
        assert!(w.to_string().contains("sync engine"), "{w}");
        assert!(w.to_string().contains("--iodepth 32"), "{w}");
        // A seccomp filter: EPERM with the sysctl allowing io_uring.
        std::fs::create_dir_all(dir.path().join("proc/sys/kernel")).unwrap();
        std::fs::write(dir.path().join("proc/sys/kernel/io_uring_disabled"), "0\n").unwrap();
        let w = uring_fallback_warning(io::Error::from_raw_os_error(libc::EPERM), &roots, true, 1);
        assert!(w.to_string().contains("seccomp"), "{w}");
        assert!(!w.to_string().contains("--iodepth"), "{w}");
        // The sysctl switched off.
        std::fs::write(dir.path().join("proc/sys/kernel/io_uring_disabled"), "2\n").unwrap();
        let w = uring_fallback_warning(io::Error::from_raw_os_error(libc::EPERM), &roots, true, 8);
        assert!(
            w.to_string().contains("sysctl kernel.io_uring_disabled=0"),
            "{}",
            w.to_string()
        );
    }

    #[test]
    fn sync_engine_round_trips_data_on_a_file() {
        file_roundtrip(EngineKind::Sync, 1);
    }

    #[test]
    fn uring_engine_round_trips_data_on_a_file() {
        file_roundtrip(EngineKind::Uring, 8);
    }
}
