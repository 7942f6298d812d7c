//! The engines that move the bytes: `sync` (pread/pwrite), `uring` (io_uring with
//! registered buffers and batched submission), `null` (no I/O: the harness alone), and the
//! queue model that runs any `Backend` — the simulator — on its own clock.
//!
//! Real targets run one thread per job on a raw file descriptor; simulated targets run all
//! jobs in one thread on the simulator's virtual clock. The simulated device serves one
//! request at a time, in order of issue: with `iodepth` × `numjobs` requests outstanding,
//! throughput is what one request at a time gives and each request's latency includes its
//! wait behind the others. Queue depth changes the accounting, not the device's speed.

use super::job::{Io, JobCtl, JobResult, Next};
use super::offsets::Dir;
use super::spec::{EngineKind, JobSpec, SyncMode};
use super::sysstat::thread_cpu_ns;
use super::verify::{self, VerifyReport};
use crate::backend::{monotonic_ns, AlignedBuf, Backend};
use crate::error::is_vanished;
use crate::report::Warning;
use crate::{Error, Result};
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Open `path` with the flags the job needs (O_DIRECT, O_SYNC/O_DSYNC, read-write only
/// when it writes).
pub fn open_for_job(path: &Path, spec: &JobSpec) -> Result<File> {
    let mut flags = 0;
    if spec.direct {
        flags |= crate::sys::O_DIRECT;
    }
    match spec.sync {
        SyncMode::None => {}
        SyncMode::Sync => flags |= libc::O_SYNC,
        SyncMode::Dsync => flags |= libc::O_DSYNC,
    }
    let mut o = OpenOptions::new();
    o.read(true)
        .write(spec.rw.writes() || spec.verify)
        .custom_flags(flags);
    o.open(path).map_err(|e| {
        if spec.direct && e.raw_os_error() == Some(libc::EINVAL) {
            Error::usage(format!(
                "{} does not support O_DIRECT (--direct 1); use --direct 0 to go through the page cache",
                path.display()
            ))
        } else {
            Error::io(format!("opening {}", path.display()), e)
        }
    })
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

/// Sleep on the real clock for a rate cap.
fn sleep_ns(ns: u64) {
    std::thread::sleep(std::time::Duration::from_nanos(ns.min(1_000_000_000)));
}

/// The write buffer for one I/O: the job's pattern, or stamps when verifying.
fn write_source<'a>(buf: &'a mut [u8], io: &Io, spec: &JobSpec, run_id: u64) -> &'a [u8] {
    let b = &mut buf[..io.len as usize];
    if spec.verify {
        verify::stamp(b, io.offset, run_id);
    }
    b
}

/// The outcome of one engine loop: an error that ended it early, whether the target
/// vanished, and the thread's CPU time when the job's clocks started.
#[derive(Default)]
struct Ending {
    error: Option<String>,
    vanished: bool,
    cpu0: (u64, u64),
}

impl Ending {
    /// The engine is set up (buffers faulted in, ring registered): start the job's clocks
    /// now, so neither its runtime nor its CPU figures include the set-up, which for a
    /// large slab of buffers takes hundreds of ms (1 GiB: 0.6 s here), and a short
    /// `--runtime` is not used up before the first I/O.
    fn ready(&mut self, ctl: &mut JobCtl) {
        self.cpu0 = thread_cpu_ns();
        ctl.restart(monotonic_ns());
    }

    fn fail(&mut self, ctl: &mut JobCtl, e: &io::Error, io: &Io) {
        if self.error.is_none() {
            let (msg, vanished) = describe(e, io);
            self.error = Some(msg);
            self.vanished = vanished;
        }
        ctl.stop();
    }
}

/// The sync engine: one pread/pwrite at a time (fio's psync).
fn sync_loop(ctl: &mut JobCtl, file: &File, run_id: u64) -> Ending {
    let spec = ctl.spec.clone();
    let bs = spec.bs_max as usize;
    // One slab for the read and the write buffer: with 1 MiB blocks it is one huge page.
    let mut slab = AlignedBuf::for_io(2 * bs);
    let (rbuf, wbuf) = slab.split_at_mut(bs);
    spec.pattern.fill(wbuf, spec.seed ^ u64::from(ctl.index));
    let mut end = Ending::default();
    end.ready(ctl);
    loop {
        let now = monotonic_ns();
        let io = match ctl.next(now) {
            Next::Done => break,
            Next::Wait(ns) => {
                sleep_ns(ns);
                continue;
            }
            Next::Io(io) => io,
        };
        let len = io.len as usize;
        let t0 = monotonic_ns();
        let r = match io.dir {
            Dir::Read => file.read_exact_at(&mut rbuf[..len], io.offset),
            Dir::Write => file.write_all_at(write_source(wbuf, &io, &spec, run_id), io.offset),
        };
        let t1 = monotonic_ns();
        if let Err(e) = r {
            end.fail(ctl, &e, &io);
            break;
        }
        ctl.complete(io, t1 - t0, t1);
        if ctl.take_fsync_due() {
            if let Err(e) = file.sync_data() {
                end.fail(ctl, &e, &io);
                break;
            }
        }
    }
    end
}

/// The null engine: every I/O completes at once, nothing moves; measures the harness.
fn null_loop(ctl: &mut JobCtl) -> Ending {
    let mut end = Ending::default();
    end.ready(ctl);
    loop {
        let now = monotonic_ns();
        let io = match ctl.next(now) {
            Next::Done => break,
            Next::Wait(ns) => {
                sleep_ns(ns);
                continue;
            }
            Next::Io(io) => io,
        };
        let t0 = monotonic_ns();
        std::hint::black_box(&io);
        let t1 = monotonic_ns();
        ctl.complete(io, t1 - t0, t1);
        let _ = ctl.take_fsync_due();
    }
    end
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
    let depth = if iodepth > 1 {
        format!("; --iodepth {iodepth} is not applied")
    } else {
        String::new()
    };
    Warning::new("uring_unavailable", format!("{why}{depth}"))
}

/// The io_uring engine: `iodepth` slots with registered buffers, all free slots filled and
/// submitted in one `io_uring_enter`, all available completions reaped per wake-up.
fn uring_loop(
    ctl: &mut JobCtl,
    file: &File,
    run_id: u64,
) -> std::result::Result<Ending, io::Error> {
    use io_uring::{opcode, types, IoUring};
    let spec = ctl.spec.clone();
    let qd = spec.iodepth as usize;
    let bs = spec.bs_max as usize;
    let entries = (qd as u32).next_power_of_two().max(2);
    // One thread submits and reaps: let the kernel run completion work only when we wait
    // (no cross-CPU wake-ups); kernels before 6.1 refuse these flags, so fall back.
    let mut ring = match IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
    {
        Ok(r) => r,
        Err(_) => IoUring::new(entries)?,
    };
    // One buffer per slot plus one shared write-pattern buffer (the kernel only reads it).
    let mut slab = AlignedBuf::for_io(bs * (qd + 1));
    spec.pattern
        .fill(&mut slab[bs * qd..], spec.seed ^ u64::from(ctl.index));
    let iovecs: Vec<libc::iovec> = (0..=qd)
        .map(|i| libc::iovec {
            // SAFETY: i * bs is within the slab, which outlives the ring's use of it.
            iov_base: unsafe { slab.as_mut_ptr().add(i * bs) } as *mut libc::c_void,
            iov_len: bs,
        })
        .collect();
    // SAFETY: the iovecs point into `slab`, which lives until after the ring is dropped at
    // the end of this function (declared before it is used, dropped after `ring` goes out of
    // use: we unregister explicitly below).
    let fixed_bufs = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
    let fixed_file = ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
    let raw_fd = types::Fd(file.as_raw_fd());
    let base = slab.as_mut_ptr();
    let shared_write = qd;

    let mut slot_io: Vec<Option<(Io, u64)>> = vec![None; qd];
    let mut free: Vec<usize> = (0..qd).rev().collect();
    let mut batch: Vec<usize> = Vec::with_capacity(qd);
    let mut inflight = 0usize;
    let mut end = Ending::default();
    end.ready(ctl);
    loop {
        // Fill every free slot the job has work for.
        let now = monotonic_ns();
        batch.clear();
        let mut wait_ns = 0u64;
        while let Some(&slot) = free.last() {
            let io = match ctl.next(now) {
                Next::Io(io) => io,
                Next::Wait(ns) => {
                    wait_ns = ns;
                    break;
                }
                Next::Done => break,
            };
            free.pop();
            let len = io.len as u32;
            let (buf_index, ptr) = match io.dir {
                Dir::Read => (slot, base.wrapping_add(slot * bs)),
                Dir::Write if spec.verify => {
                    // SAFETY: the slot's buffer is not in flight (the slot is free).
                    let b = unsafe { std::slice::from_raw_parts_mut(base.add(slot * bs), bs) };
                    verify::stamp(&mut b[..io.len as usize], io.offset, run_id);
                    (slot, base.wrapping_add(slot * bs))
                }
                Dir::Write => (shared_write, base.wrapping_add(shared_write * bs)),
            };
            let entry = match (io.dir, fixed_bufs, fixed_file) {
                (Dir::Read, true, true) => {
                    opcode::ReadFixed::new(types::Fixed(0), ptr, len, buf_index as u16)
                        .offset(io.offset)
                        .build()
                }
                (Dir::Read, true, false) => {
                    opcode::ReadFixed::new(raw_fd, ptr, len, buf_index as u16)
                        .offset(io.offset)
                        .build()
                }
                (Dir::Write, true, true) => {
                    opcode::WriteFixed::new(types::Fixed(0), ptr, len, buf_index as u16)
                        .offset(io.offset)
                        .build()
                }
                (Dir::Write, true, false) => {
                    opcode::WriteFixed::new(raw_fd, ptr, len, buf_index as u16)
                        .offset(io.offset)
                        .build()
                }
                (Dir::Read, false, _) => opcode::Read::new(raw_fd, ptr, len)
                    .offset(io.offset)
                    .build(),
                (Dir::Write, false, _) => opcode::Write::new(raw_fd, ptr, len)
                    .offset(io.offset)
                    .build(),
            }
            .user_data(slot as u64);
            // SAFETY: the entry's buffer stays valid and untouched until its completion
            // (the slot is not reused before then; the shared write buffer is never written
            // after setup).
            if unsafe { ring.submission().push(&entry) }.is_err() {
                free.push(slot);
                break;
            }
            slot_io[slot] = Some((io, 0));
            batch.push(slot);
            inflight += 1;
        }
        if inflight == 0 {
            if wait_ns > 0 && end.error.is_none() {
                sleep_ns(wait_ns);
                continue;
            }
            break;
        }
        let t_submit = monotonic_ns();
        for &s in &batch {
            if let Some((_, t)) = slot_io[s].as_mut() {
                *t = t_submit;
            }
        }
        if let Err(e) = ring.submit_and_wait(1) {
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if end.error.is_none() {
                end.error = Some(format!("io_uring_enter: {e}"));
                end.vanished = is_vanished(&e);
            }
            ctl.stop();
            break;
        }
        let now = monotonic_ns();
        let mut fsync = false;
        for cqe in ring.completion() {
            let slot = cqe.user_data() as usize;
            let Some((io, issued)) = slot_io.get_mut(slot).and_then(|s| s.take()) else {
                continue;
            };
            inflight -= 1;
            free.push(slot);
            let res = cqe.result();
            if res < 0 {
                end.fail(ctl, &io::Error::from_raw_os_error(-res), &io);
                continue;
            }
            if res as u64 != io.len {
                let e = io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("short transfer: {res} of {} bytes", io.len),
                );
                end.fail(ctl, &e, &io);
                continue;
            }
            ctl.complete(io, now.saturating_sub(issued), now);
            fsync |= ctl.take_fsync_due();
        }
        if fsync {
            // Flushes what has completed so far (fio's fsync=N issues the same barrier).
            if let Err(e) = file.sync_data() {
                let io = Io {
                    dir: Dir::Write,
                    offset: 0,
                    len: 0,
                };
                end.fail(ctl, &e, &io);
            }
        }
    }
    // Drain whatever is still in flight before the buffers can be freed.
    let mut tries = 0;
    while inflight > 0 && tries < 1000 {
        tries += 1;
        if ring.submit_and_wait(1).is_err() {
            continue;
        }
        inflight = inflight.saturating_sub(ring.completion().count());
    }
    if fixed_bufs {
        let _ = ring.submitter().unregister_buffers();
    }
    drop(ring);
    if inflight > 0 {
        // The kernel may still write into these buffers: never free them.
        std::mem::forget(slab);
    }
    Ok(end)
}

/// Read back every block the job wrote and check its stamps.
fn verify_fd(ctl: &JobCtl, file: &File, run_id: u64) -> std::result::Result<VerifyReport, String> {
    let mut report = VerifyReport::default();
    let Some(map) = ctl.written.as_ref() else {
        return Ok(report);
    };
    let mut buf = AlignedBuf::new(1 << 20);
    for (off, len) in map.runs(1 << 20) {
        let b = &mut buf[..len as usize];
        file.read_exact_at(b, off)
            .map_err(|e| format!("verify: reading {len} bytes at offset {off}: {e}"))?;
        report.check_block(b, off, run_id);
    }
    Ok(report)
}

fn verify_backend(
    ctl: &JobCtl,
    backend: &mut dyn Backend,
    run_id: u64,
) -> std::result::Result<VerifyReport, String> {
    let mut report = VerifyReport::default();
    let Some(map) = ctl.written.as_ref() else {
        return Ok(report);
    };
    let mut buf = AlignedBuf::new(1 << 20);
    for (off, len) in map.runs(1 << 20) {
        let b = &mut buf[..len as usize];
        backend
            .read_at(b, off)
            .map_err(|e| format!("verify: reading {len} bytes at offset {off}: {e}"))?;
        report.check_block(b, off, run_id);
    }
    Ok(report)
}

/// Run `spec` on a file or block device, one thread per job. Returns each job's result and
/// the engine actually used (io_uring falls back to sync when the kernel refuses it).
pub fn run_on_file(
    path: &Path,
    spec: &JobSpec,
    run_id: u64,
    warnings: &mut Vec<Warning>,
) -> Result<(Vec<JobResult>, EngineKind)> {
    let mut engine = spec.engine;
    if engine == EngineKind::Uring {
        if let Err(e) = io_uring::IoUring::new(2) {
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
        warnings.push(Warning::new(
            "iodepth_ignored",
            format!(
                "the sync engine does one I/O at a time, so --iodepth {} has no effect; use --engine uring for a queue",
                spec.iodepth
            ),
        ));
    }
    let file = if engine == EngineKind::Null {
        None
    } else {
        Some(open_for_job(path, spec)?)
    };
    let start = monotonic_ns();
    let results: Vec<JobResult> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..spec.numjobs)
            .map(|index| {
                let file = file.as_ref();
                let mut s = spec.clone();
                s.engine = engine;
                scope.spawn(move || job_thread(&s, index, file, run_id, start))
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
) -> JobResult {
    if let Err(e) = crate::sys::pin_to(&spec.cpus) {
        return JobCtl::new(spec, index, start).finish(
            (0, 0),
            Some(format!("pinning to CPUs {:?}: {e}", spec.cpus)),
            false,
            None,
        );
    }
    let mut ctl = JobCtl::new(spec, index, monotonic_ns());
    let mut end = match (spec.engine, file) {
        (EngineKind::Null, _) | (_, None) => null_loop(&mut ctl),
        (EngineKind::Sync, Some(f)) => sync_loop(&mut ctl, f, run_id),
        (EngineKind::Uring, Some(f)) => match uring_loop(&mut ctl, f, run_id) {
            Ok(end) => end,
            Err(e) => Ending {
                error: Some(format!("io_uring: {e}")),
                vanished: is_vanished(&e),
                ..Ending::default()
            },
        },
    };
    let cpu1 = thread_cpu_ns();
    let cpu0 = end.cpu0;
    let verify = match (spec.verify, file) {
        (true, Some(f)) if !end.vanished => match verify_fd(&ctl, f, run_id) {
            Ok(r) => Some(r),
            Err(msg) => {
                end.error.get_or_insert(msg);
                None
            }
        },
        _ => None,
    };
    ctl.finish(
        (cpu1.0.saturating_sub(cpu0.0), cpu1.1.saturating_sub(cpu0.1)),
        end.error,
        end.vanished,
        verify,
    )
}

/// Run `spec` on a backend (the simulator) on its own clock: all jobs in this thread, the
/// device serving one request at a time in order of issue (see the module documentation).
pub fn run_on_backend(backend: &mut dyn Backend, spec: &JobSpec, run_id: u64) -> Vec<JobResult> {
    let cpu0 = thread_cpu_ns();
    let bs = spec.bs_max as usize;
    let start = backend.clock_ns();
    let mut ctls: Vec<JobCtl> = (0..spec.numjobs)
        .map(|i| JobCtl::new(spec, i, start))
        .collect();
    let mut ends: Vec<Ending> = (0..spec.numjobs).map(|_| Ending::default()).collect();
    let mut rbuf = AlignedBuf::new(bs);
    let mut wbufs: Vec<AlignedBuf> = (0..spec.numjobs)
        .map(|i| {
            let mut b = AlignedBuf::new(bs);
            spec.pattern.fill(&mut b, spec.seed ^ u64::from(i));
            b
        })
        .collect();
    // Outstanding requests in order of issue: (job, io, issue time).
    let mut queue: VecDeque<(usize, Io, u64)> =
        VecDeque::with_capacity(spec.iodepth as usize * spec.numjobs as usize);
    let mut waiting: Vec<Option<u64>> = vec![None; spec.numjobs as usize];
    let mut wants = vec![spec.iodepth as usize; spec.numjobs as usize];
    let null = spec.engine == EngineKind::Null;
    loop {
        // Top every job up to its queue depth.
        let now = backend.clock_ns();
        for (j, ctl) in ctls.iter_mut().enumerate() {
            if waiting[j].is_some_and(|t| t > now) {
                continue;
            }
            waiting[j] = None;
            while wants[j] > 0 {
                match ctl.next(now) {
                    Next::Io(io) => {
                        queue.push_back((j, io, now));
                        wants[j] -= 1;
                    }
                    Next::Wait(ns) => {
                        waiting[j] = Some(now + ns);
                        break;
                    }
                    Next::Done => break,
                }
            }
        }
        let Some((j, io, issued)) = queue.pop_front() else {
            // Nothing in flight: either all done or every job waits for its rate cap.
            match waiting.iter().flatten().min() {
                Some(&t) => {
                    let now = backend.clock_ns();
                    backend.idle(t.saturating_sub(now).max(1));
                    continue;
                }
                None => break,
            }
        };
        wants[j] += 1;
        let len = io.len as usize;
        let r = if null {
            Ok(())
        } else {
            match io.dir {
                Dir::Read => backend.read_at(&mut rbuf[..len], io.offset),
                Dir::Write => {
                    let src = write_source(&mut wbufs[j], &io, spec, run_id);
                    backend.write_at(src, io.offset)
                }
            }
        };
        let now = backend.clock_ns();
        match r {
            Ok(()) => {
                ctls[j].complete(io, now.saturating_sub(issued), now);
                if ctls[j].take_fsync_due() {
                    if let Err(e) = backend.flush() {
                        ends[j].fail(&mut ctls[j], &e, &io);
                    }
                }
            }
            Err(e) => {
                // A vanished device ends every job; another error ends this one.
                if is_vanished(&e) {
                    for (c, end) in ctls.iter_mut().zip(ends.iter_mut()) {
                        end.fail(c, &e, &io);
                    }
                    queue.clear();
                } else {
                    ends[j].fail(&mut ctls[j], &e, &io);
                    queue.retain(|(k, _, _)| *k != j);
                }
            }
        }
    }
    let cpu1 = thread_cpu_ns();
    let n = u64::from(spec.numjobs.max(1));
    let cpu = (
        cpu1.0.saturating_sub(cpu0.0) / n,
        cpu1.1.saturating_sub(cpu0.1) / n,
    );
    ctls.into_iter()
        .zip(ends)
        .map(|(ctl, mut end)| {
            let verify = if spec.verify && !end.vanished && !null {
                match verify_backend(&ctl, backend, run_id) {
                    Ok(r) => Some(r),
                    Err(msg) => {
                        end.error.get_or_insert(msg);
                        None
                    }
                }
            } else {
                None
            };
            ctl.finish(cpu, end.error, end.vanished, verify)
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
        assert!(w.iter().any(|w| w.kind == "rate_not_met"), "{w:?}");
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
    }

    #[test]
    fn io_uring_refusals_name_the_cause_and_the_fallback() {
        use crate::platform::Roots;
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::under(dir.path());
        let w =
            uring_fallback_warning(io::Error::from_raw_os_error(libc::ENOSYS), &roots, true, 32);
        assert_eq!(w.kind, "uring_unavailable");
        assert!(w.message.contains("no io_uring"), "{}", w.message);
        assert!(w.message.contains("sync engine"), "{}", w.message);
        assert!(w.message.contains("--iodepth 32"), "{}", w.message);
        // A seccomp filter: EPERM with the sysctl allowing io_uring.
        std::fs::create_dir_all(dir.path().join("proc/sys/kernel")).unwrap();
        std::fs::write(dir.path().join("proc/sys/kernel/io_uring_disabled"), "0\n").unwrap();
        let w = uring_fallback_warning(io::Error::from_raw_os_error(libc::EPERM), &roots, true, 1);
        assert!(w.message.contains("seccomp"), "{}", w.message);
        assert!(!w.message.contains("--iodepth"), "{}", w.message);
        // The sysctl switched off.
        std::fs::write(dir.path().join("proc/sys/kernel/io_uring_disabled"), "2\n").unwrap();
        let w = uring_fallback_warning(io::Error::from_raw_os_error(libc::EPERM), &roots, true, 8);
        assert!(
            w.message.contains("sysctl kernel.io_uring_disabled=0"),
            "{}",
            w.message
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
