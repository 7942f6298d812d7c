//! `flashscope io TARGET`: a fio-style job run on the target, read-only or in a write
//! session, into the `io` document (fio-shaped jobs, per-second samples, the `--verify`
//! check) and its verdict. The CLI (`cli::io`) turns fio's options into the [`JobSpec`].

use crate::backend::Backend;
use crate::commands::write_probe::Finished;
use crate::device::TargetInfo;
use crate::device::TargetSpec;
use crate::device::{self, OpenRequest, TargetKind};
use crate::report::results::{IoResult, PageCacheChange};
use crate::report::{Body, Document};
use crate::session::{estimate, open_for_write, Ran, Rates, WriteFlags, WriteIntent};
use crate::vocab::error::Verdict;
use crate::vocab::units::format_bytes;
use crate::vocab::{Check, Metric, Warning};
use crate::workload::{self, GroupTotals, JobSpec, Pattern, RunTarget, RwMode, WorkloadResult};
use crate::Result;

/// `io`'s parameters: the target, the write flags, and the job; `pattern_given`: the
/// job's data pattern was asked for (a simulated target otherwise writes zeros).
pub(crate) struct IoParams<'a> {
    pub target: &'a TargetSpec,
    pub flags: WriteFlags,
    pub pattern_given: bool,
    /// The job; its `size` is `size`'s.
    pub job: JobSpec,
    pub size: JobSize,
}

/// The bytes each job covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JobSize {
    /// `--size`, as the job has it.
    Given,
    /// Not given: from `--offset` to the end of the target, once the target is known.
    /// `blocksize` is `--blocksize` as given, for the refusal when less than a block is
    /// left there.
    RestOfTarget { blocksize: String },
}

impl JobSize {
    /// The job's size on a target of `target_size` bytes.
    fn of(&self, job: &JobSpec, target: &TargetSpec, target_size: u64) -> Result<u64> {
        let JobSize::RestOfTarget { blocksize } = self else {
            return Ok(job.size);
        };
        let offset = job.offset;
        let rest = target_size.saturating_sub(offset);
        if offset < target_size && rest < job.bs_max {
            return Err(crate::Error::usage(format!(
                "{target} holds {rest} bytes from --offset {offset}: less than one block (--blocksize {blocksize}); give a smaller --blocksize"
            )));
        }
        Ok(rest)
    }
}

/// The run's progress on a real target: wall time against --ramp-time + --runtime when
/// --runtime bounds it (a run that finishes its --size first ends sooner), elapsed time
/// alone otherwise. Simulated runs take virtual time and end at once: no bar.
fn progress(spec: &workload::JobSpec) -> crate::report::progress::Ticker {
    let planned_ms = spec
        .runtime_ns
        .map_or(0, |r| r.saturating_add(spec.ramp_ns) / 1_000_000);
    let start = std::time::Instant::now();
    crate::report::progress::Progress::ticking("io", move || {
        let ms = start.elapsed().as_millis() as u64;
        (ms, planned_ms)
    })
}

/// Run the job: read-only jobs open the target for reading; writing jobs run in the
/// write session (preserve mode: each region saved just before it is first overwritten,
/// restored and verified at the end; the budgets; Ctrl-C). Also whether the job wrote
/// (ran in a write session).
pub(crate) fn run(p: &IoParams) -> Result<(Finished, bool)> {
    let info = device::peek(p.target)?;
    let mut spec = p.job.clone();
    spec.size = p.size.of(&p.job, p.target, info.size_bytes)?;
    let simulated = info.kind == TargetKind::Sim;
    if simulated && !p.pattern_given {
        spec.pattern = Pattern::Zeros;
    }
    spec.validate(info.size_bytes, info.logical_sector_bytes)?;
    if !spec.rw.writes() {
        let mut opened = device::open(
            p.target,
            &OpenRequest {
                write: false,
                require_direct: spec.direct,
            },
        )?;
        let result = if simulated {
            workload::run(&spec, RunTarget::Backend(&mut *opened.backend))?
        } else {
            let _progress = progress(&spec);
            workload::run(
                &spec,
                RunTarget::Path(std::path::Path::new(p.target.as_str())),
            )?
        };
        let mut doc = document(&result, &opened.info);
        doc.warnings.splice(0..0, opened.warnings.iter().cloned());
        let verdict = verdict(&result);
        return Ok((Finished::Done { doc, verdict }, false));
    }
    // The plan's rates: a short read sample of the job's region (reads only), as every
    // writing test's plan (`session::estimate`); nothing is opened without permission.
    let rates = if p.flags.allowed() {
        Rates::sample_target(p.target, (spec.offset, spec.size))
    } else {
        Rates::assumed()
    };
    let intent = intent(&spec, &rates);
    let mut session = open_for_write(p.target, &p.flags, &intent)?;
    spec.stop_on_signal = session.journal.is_some();
    let path = std::path::Path::new(p.target.as_str());
    let ran = session.run("io", |dev, _| {
        // A sequential job announces its region, so preserve mode saves it ahead of the
        // writes in large pieces (at once up to 64 MiB, else 32 MiB at a time as the
        // writes reach it) with a journal sync each, not one per write; it restores only
        // what was written either way. Random writes are saved one by one: a window
        // saved ahead of a few writes over a large region would read far more.
        if !spec.rw.is_random() {
            dev.prepare_write(spec.offset, spec.size)?;
        }
        Ok(if simulated {
            workload::run(&spec, RunTarget::Backend(dev))
        } else {
            let _progress = progress(&spec);
            workload::run(&spec, RunTarget::Guarded { path, stack: dev })
        })
    })?;
    let (result, ending) = match ran {
        Ran::Done(r, ending) => (r?, ending),
        Ran::Stopped(verdict, _) => return Ok((Finished::Stopped { verdict }, true)),
    };
    let mut doc = document(&result, &session.info);
    session.fill(&mut doc, &ending);
    let verdict = verdict(&result);
    Ok((Finished::Done { doc, verdict }, true))
}

/// What the job writes and how long it takes at `rates` (the plan), preserve mode's
/// saving and restoring worked out from what it overwrites; the upper figure with writes
/// [`estimate::SLOW_WRITES`] times slower.
fn intent(spec: &JobSpec, rates: &Rates) -> WriteIntent {
    let job = JobTime::of(spec, rates);
    let timed = spec.time_based && spec.runtime_ns.is_some();
    WriteIntent {
        command: "io",
        region: (spec.offset, spec.size),
        max_bytes: if timed {
            u64::MAX
        } else {
            spec.size.saturating_mul(u64::from(spec.numjobs))
        },
        typical_bytes: None,
        estimated_ns: job.ns,
        slow_ns: JobTime::of(spec, &rates.slower_writes(estimate::SLOW_WRITES)).ns,
        rates: *rates,
        overwritten_bytes: Some(job.overwritten_bytes),
        saved_bytes: Some(if spec.rw.is_random() {
            job.overwritten_bytes
        } else {
            // Saved ahead in windows of 32 MiB (see `run`).
            job.overwritten_bytes
                .div_ceil(32 << 20)
                .saturating_mul(32 << 20)
        }),
        places: job.overwritten_places,
        what: format!(
            "io runs {} with {} blocks over {} at offset {}{}",
            spec.rw.name(),
            format_bytes(spec.bs_max),
            format_bytes(spec.size),
            spec.offset,
            if spec.verify {
                ", stamped for --verify"
            } else {
                ""
            }
        ),
        smaller: "give a smaller --size",
        ..WriteIntent::default()
    }
}

/// A job's device time at some rates, and what it overwrites (for preserve mode's cost).
#[derive(Debug, Clone, Copy, PartialEq)]
struct JobTime {
    /// The run: the ramp and the counting time, the --verify pass's reads included.
    ns: u64,
    /// Bytes written at least once.
    overwritten_bytes: u64,
    /// Separate pieces of them (each restored and checked with a command of its own).
    overwritten_places: u64,
}

impl JobTime {
    /// The job's time at `rates`: its reads and writes of the mean block size, one command
    /// each (a random write below a flash page costing a page, [`Rates::blocks_ns`]), the
    /// device serving one at a time; a time-based job runs for its --ramp-time +
    /// --runtime, another until its --size is done or --runtime ends; a --rate cap
    /// slows it to the cap. Random writes land uniformly, some on the same block: of
    /// `n` writes over `m` blocks, m·(1 − e^(−n/m)) blocks are written, in about that
    /// many · (1 − the share written) separate pieces.
    fn of(spec: &JobSpec, rates: &Rates) -> Self {
        let jobs = u64::from(spec.numjobs.max(1));
        let bs = ((spec.bs_min + spec.bs_max) / 2).max(1);
        let write_share = match spec.rw {
            RwMode::Read | RwMode::RandRead => 0.0,
            RwMode::Write | RwMode::RandWrite => 1.0,
            RwMode::RandRw | RwMode::Rw => 1.0 - f64::from(spec.rwmixread.min(100)) / 100.0,
        };
        let write_ns = if spec.rw.is_random() {
            rates.blocks_ns(bs, 1)
        } else {
            rates.write_ns(bs, 1)
        } as f64;
        let op_ns =
            (write_share * write_ns + (1.0 - write_share) * rates.read_ns(bs, 1) as f64).max(1.0);
        let run_ns = spec.runtime_ns.map(|r| r.saturating_add(spec.ramp_ns));
        let sized_ops = (spec.size.saturating_mul(jobs) / bs) as f64;
        let ops = match run_ns {
            Some(r) if spec.time_based => r as f64 / op_ns,
            Some(r) => sized_ops.min(r as f64 / op_ns),
            None => sized_ops,
        };
        let mut ns = match run_ns {
            Some(r) if spec.time_based => r as f64,
            _ => ops * op_ns,
        };
        // A --rate cap (per job): no faster than it lets each job move its bytes.
        for (cap, share) in [
            (spec.rate.write, write_share),
            (spec.rate.read, 1.0 - write_share),
        ] {
            if let Some(cap) = cap.filter(|&c| c > 0) {
                ns = ns.max(ops * share * bs as f64 / jobs as f64 / cap as f64 * 1e9);
            }
        }
        let writes = ops * write_share;
        let blocks = (spec.size / bs).max(1) as f64;
        let (written, places) = if spec.rw.is_random() {
            let hit = blocks * (1.0 - (-writes / blocks).exp());
            (hit * bs as f64, (hit * (1.0 - hit / blocks)).max(1.0))
        } else {
            let w = (writes * bs as f64).min(spec.size as f64);
            (w, (w / 1048576.0).ceil())
        };
        let written = written.min(spec.size as f64) as u64;
        if spec.verify {
            // Read back in runs of up to 1 MiB.
            ns += rates.read_ns(written, written.div_ceil(1 << 20).max(places as u64)) as f64;
        }
        JobTime {
            ns: ns as u64,
            overwritten_bytes: written,
            overwritten_places: (places as u64).max(1),
        }
    }
}

/// Incomplete when the run was cut short (the document's `error` says why) or --verify
/// read nothing back, check failed when --verify found bad data.
fn verdict(r: &WorkloadResult) -> Verdict {
    if r.verify().is_some_and(|v| v.bad_units > 0) {
        return Verdict::CheckFailed;
    }
    // Cut short, or asked to verify and nothing was read back: not checked, not a pass.
    if r.error().is_some() || r.verify().is_some_and(|v| v.bytes_checked == 0) {
        return Verdict::Incomplete;
    }
    Verdict::Ok
}

/// The `io` document: fio-shaped `jobs`, per-second samples, disk and page-cache state.
pub(crate) fn document(r: &WorkloadResult, target: &TargetInfo) -> Document {
    let verify = r.verify();
    let totals = r.group_totals();
    let mut doc = Document::for_target(
        target,
        Body::Io(IoResult {
            parameters: r.spec.clone(),
            samples: r.samples(),
            engine: r.engine.clone(),
            clock: r.clock.to_string(),
            jobs: r.fio_jobs(),
            disk_util: r.disk.clone().map(|d| vec![d]),
            page_cache: r
                .page_cache
                .map(|(before, after)| PageCacheChange { before, after }),
            verify: verify.clone(),
            error: r.error().map(str::to_string),
            totals: Some(totals.clone()),
        }),
    );
    doc.bytes_written = r.bytes_written();
    doc.elapsed_ns = r.elapsed_ns;
    doc.warnings = workload::run_warnings(r);
    if let Some(v) = &verify {
        let bad = v.bad_units * crate::workload::verify::STAMP_UNIT as u64;
        doc.checks.push(
            Check {
                inconclusive: false,
                threshold: None,
                name: "io.verify".into(),
                passed: v.bad_units == 0,
                measurement: Some(bad as f64),
                units: Some("bytes".into()),
                message: format!(
                    "{bad} of {} bytes read back did not hold the stamp written there",
                    v.bytes_checked
                ),
            }
            .undecided_if(v.bytes_checked == 0),
        );
    }
    doc.metrics.extend(metrics(&totals));
    if r.error().is_some() && r.vanished() {
        doc.warnings.push(Warning::TargetVanished);
    }
    doc
}

/// Per direction (`rw` label): IOPS, bandwidth, median and 99th percentile latency.
fn metrics(totals: &GroupTotals) -> Vec<Metric> {
    let mut out = Vec::new();
    for (name, t) in [("read", &totals.read), ("write", &totals.write)] {
        let Some(t) = t else { continue };
        let labels = [("rw", name)];
        out.push(Metric::new(
            "io_iops",
            "I/O operations per second of the io job, per direction",
            t.iops(),
            &labels,
        ));
        out.push(Metric::new(
            "io_bandwidth_bytes_per_second",
            "Bytes per second of the io job, per direction",
            t.bw_bytes(),
            &labels,
        ));
        for (name, help, p) in [
            (
                "io_latency_p50_seconds",
                "Median completion latency of the io job, per direction",
                50.0,
            ),
            (
                "io_latency_p99_seconds",
                "99th percentile completion latency of the io job, per direction",
                99.0,
            ),
        ] {
            if let Some(ns) = t.clat_ns.at(p) {
                out.push(Metric::new(name, help, ns as f64 / 1e9, &labels));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// Reads at 100 MiB/s, writes at 50, no command cost.
    fn rates() -> Rates {
        Rates {
            read_bps: 100.0 * MIB as f64,
            write_bps: 50.0 * MIB as f64,
            op_ns: 0.0,
            measured: true,
        }
    }

    fn job(rw: RwMode, bs: u64, size: u64) -> JobSpec {
        JobSpec {
            rw,
            bs_min: bs,
            bs_max: bs,
            size,
            ..JobSpec::default()
        }
    }

    #[test]
    fn a_sized_job_takes_its_bytes_at_the_rates() {
        // 64 MiB written at 50 MiB/s: 1.28 s, all of it overwritten in 64 pieces.
        let t = JobTime::of(&job(RwMode::Write, MIB, 64 * MIB), &rates());
        assert_eq!(t.ns, 1_280_000_000);
        assert_eq!((t.overwritten_bytes, t.overwritten_places), (64 * MIB, 64));
        // Half reads (at 100 MiB/s): 0.32 s + 0.64 s.
        let mut mixed = job(RwMode::Rw, MIB, 64 * MIB);
        mixed.rwmixread = 50;
        assert_eq!(JobTime::of(&mixed, &rates()).ns, 960_000_000);
        // --verify reads back what was written: 0.64 s more.
        let mut v = job(RwMode::Write, MIB, 64 * MIB);
        v.verify = true;
        assert_eq!(JobTime::of(&v, &rates()).ns, 1_920_000_000);
        // A --rate cap of 16 MiB/s: 4 s.
        let mut capped = job(RwMode::Write, MIB, 64 * MIB);
        capped.rate.write = Some(16 * MIB);
        assert_eq!(JobTime::of(&capped, &rates()).ns, 4_000_000_000);
        // --runtime ends it first: 0.5 s, 25 MiB.
        let mut short = job(RwMode::Write, MIB, 64 * MIB);
        short.runtime_ns = Some(500_000_000);
        let t = JobTime::of(&short, &rates());
        assert_eq!((t.ns, t.overwritten_bytes), (500_000_000, 25 * MIB));
    }

    #[test]
    fn a_time_based_job_takes_its_time_and_overwrites_what_it_reaches() {
        let mut t = job(RwMode::Write, MIB, 256 * MIB);
        t.runtime_ns = Some(2_000_000_000);
        t.ramp_ns = 1_000_000_000;
        t.time_based = true;
        let r = JobTime::of(&t, &rates());
        // 3 s at 50 MiB/s: 150 MiB of the 256.
        assert_eq!((r.ns, r.overwritten_bytes), (3_000_000_000, 150 * MIB));
        // Writes 4 times slower reach a quarter as far in the same time.
        let slow = JobTime::of(&t, &rates().slower_writes(4.0));
        assert_eq!(slow.ns, r.ns);
        assert_eq!(slow.overwritten_bytes, 75 * MIB);
    }

    #[test]
    fn random_writes_cost_a_page_each_and_overwrite_less_than_they_write() {
        // 4096 writes of 4 KiB over 16 MiB, each costing a 16 KiB page at 50 MiB/s.
        let t = JobTime::of(&job(RwMode::RandWrite, 4096, 16 * MIB), &rates());
        assert_eq!(t.ns, 4096 * 312_500);
        // 1 − 1/e of the blocks, in about (1 − 1/e)/e of them as separate pieces.
        let share = 1.0 - (-1.0f64).exp();
        let hit = t.overwritten_bytes as f64 / (16 * MIB) as f64;
        assert!((hit - share).abs() < 0.01, "{hit}");
        let pieces = t.overwritten_places as f64 / 4096.0;
        assert!((pieces - share * (1.0 - share)).abs() < 0.01, "{pieces}");
    }

    #[test]
    fn the_plan_counts_preserve_mode_from_what_the_job_overwrites() {
        let i = intent(&job(RwMode::Write, MIB, 64 * MIB), &rates());
        assert_eq!(i.max_bytes, 64 * MIB);
        assert_eq!(i.preserve_bytes(), 64 * MIB);
        assert!(i.slow_ns > i.estimated_ns);
        assert!(i.rates.measured);
        // Saving reads and journals it, restoring writes it back and reads it again.
        let r = rates();
        assert_eq!(
            i.preserve_ns(),
            r.preserve_ns(64 * MIB, 64 * MIB, 64),
            "{i:?}"
        );
        // A time-based job that reaches a tenth of its region saves that tenth, not all.
        let mut t = job(RwMode::Write, MIB, 500 * MIB);
        t.runtime_ns = Some(1_000_000_000);
        t.time_based = true;
        let i = intent(&t, &rates());
        assert_eq!(i.max_bytes, u64::MAX);
        assert_eq!(i.preserve_bytes(), 50 * MIB);
    }
}
