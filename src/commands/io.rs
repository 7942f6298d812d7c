//! `flashscope io TARGET`: a fio-style job run on the target, read-only or in a write
//! session, into the `io` document (fio-shaped jobs, per-second samples, the `--verify`
//! check) and its verdict. The CLI (`cli::io`) turns fio's options into the [`JobSpec`].

use crate::commands::write_probe::Finished;
use crate::device::TargetInfo;
use crate::device::{self, OpenRequest, TargetKind};
use crate::report::results::{IoResult, PageCacheChange};
use crate::report::{Body, Document};
use crate::session::{estimate_ns, open_for_write, Ran, WriteFlags, WriteIntent};
use crate::vocab::error::Verdict;
use crate::vocab::units::format_bytes;
use crate::vocab::{Check, Metric, Warning};
use crate::workload::{self, GroupTotals, JobSpec, Pattern, RunTarget, WorkloadResult};
use crate::{Error, Result};

/// `io`'s parameters: the target, the write flags, and the job. The job's default
/// `--size` (`size_given` false) is the rest of the target from its offset, set once the
/// target is known; `pattern_given`: the job's data pattern was asked for (a simulated
/// target otherwise writes zeros); `bs_text`: `--blocksize` as written, for messages.
pub(crate) struct IoParams<'a> {
    pub target: &'a str,
    pub flags: WriteFlags,
    pub pattern_given: bool,
    pub job: JobSpec,
    pub size_given: bool,
    pub bs_text: &'a str,
}

/// The job on a target of `target_size` bytes: without --size, the rest of the target
/// from --offset, which must hold one block.
fn job_on(p: &IoParams, target_size: u64) -> Result<JobSpec> {
    let mut job = p.job.clone();
    if !p.size_given {
        let (offset, rest) = (job.offset, target_size.saturating_sub(job.offset));
        if offset < target_size && rest < job.bs_max {
            return Err(Error::usage(format!(
                "{} holds {rest} bytes from --offset {offset}: less than one block (--blocksize {}); give a smaller --blocksize",
                p.target, p.bs_text
            )));
        }
        job.size = rest;
    }
    Ok(job)
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
    let mut spec = job_on(p, info.size_bytes)?;
    let simulated = info.kind == TargetKind::Sim;
    if simulated && !p.pattern_given {
        spec.pattern = Pattern::Zeros;
    }
    spec.validate(info.size_bytes, info.logical_sector_bytes)?;
    if !p.job.rw.writes() {
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
            workload::run(&spec, RunTarget::Path(std::path::Path::new(p.target)))?
        };
        let mut doc = document(&result, &opened.info);
        doc.warnings.splice(0..0, opened.warnings.iter().cloned());
        let verdict = verdict(&result);
        return Ok((Finished::Done { doc, verdict }, false));
    }
    let bytes = spec.size.saturating_mul(u64::from(spec.numjobs));
    let timed = spec.time_based && spec.runtime_ns.is_some();
    let intent = WriteIntent {
        command: "io",
        region: (spec.offset, spec.size),
        max_bytes: if timed { u64::MAX } else { bytes },
        typical_bytes: None,
        estimated_ns: match spec.runtime_ns {
            Some(r) if timed => r,
            _ => estimate_ns(bytes, bytes / spec.bs_min.max(1)),
        },
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
    };
    let mut session = open_for_write(p.target, &p.flags, &intent)?;
    spec.stop_on_signal = session.journal.is_some();
    let path = std::path::Path::new(p.target);
    let ran = session.run("io", |dev, _| {
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
