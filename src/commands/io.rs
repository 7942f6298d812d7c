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
use crate::session::{
    estimate, open_for_write, Notice, Ran, Rates, WriteFlags, WriteIntent, WriteMode,
};
use crate::vocab::error::Verdict;
use crate::vocab::units::{format_bytes, format_ns};
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
    /// `blocksize` is the block size option the user gave and its text (`--blocksize`
    /// or `--blocksize-range`), for the refusal when less than a block is left there.
    RestOfTarget { blocksize: (&'static str, String) },
}

impl JobSize {
    /// The job's size on a target of `target_size` bytes.
    fn of(&self, job: &JobSpec, target: &TargetSpec, target_size: u64) -> Result<u64> {
        let JobSize::RestOfTarget {
            blocksize: (option, given),
        } = self
        else {
            return Ok(job.size);
        };
        let offset = job.offset;
        let rest = target_size.saturating_sub(offset);
        if offset < target_size && rest < job.bs_max {
            return Err(crate::Error::usage(format!(
                "{target} holds {rest} bytes from --offset {offset}: less than one block ({option} {given}); give a smaller {option}"
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
    // Preserve mode, as the policy decides it.
    let preserve = WriteMode::of(p.target, &p.flags).journaled();
    let intent = intent(&spec, &rates, preserve);
    let mut session = open_for_write(p.target, &p.flags, &intent)?;
    spec.stop_on_signal = session.journal.is_some();
    let preserving = session.journal.is_some();
    let notices = p.flags.notices.clone();
    let path = std::path::Path::new(p.target.as_str());
    let ran = session.run("io", |dev, _| {
        if intent.timed_first {
            if let Some(what) = time_first_writes(
                &spec,
                &rates,
                sample_writes(&spec, intent.slow_ns, preserve),
                dev,
                preserving,
            )? {
                notices.say(Notice::Plan {
                    command: "io",
                    what,
                });
            }
        }
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
    // `elapsed_ns` is the device time of the job's I/O, as read-only runs and bench
    // report it (virtual on `sim:`), not the session's wall time with preserve mode's
    // saving and restoring.
    doc.elapsed_ns = result.elapsed_ns;
    let verdict = verdict(&result);
    Ok((Finished::Done { doc, verdict }, true))
}

/// The job writes to random places: what such a write costs depends on whether the card
/// must copy an erase block for it, which no read and no sequential rate tells, so its
/// first writes are timed before it runs ([`estimate::WriteSample`]).
fn writes_randomly(spec: &JobSpec) -> bool {
    spec.rw.is_random() && spec.rw.writes() && !(spec.rw == RwMode::RandRw && spec.rwmixread >= 100)
}

/// What the job writes and how long it takes at `rates` (the plan), preserve mode's
/// saving and restoring worked out from what it overwrites; the upper figure with writes
/// [`estimate::SLOW_WRITES`] times slower. A job that writes randomly gets bounds instead
/// (a flash page to an erase block copied a write) and its first writes timed before it
/// runs ([`WriteIntent::timed_first`]); its bytes count that sample's.
fn intent(spec: &JobSpec, rates: &Rates, preserve: bool) -> WriteIntent {
    let random = writes_randomly(spec);
    let job = JobTime::of(spec, rates, None);
    let slow = rates.slower_writes(estimate::SLOW_WRITES);
    let slow_ns = JobTime::of(
        spec,
        &slow,
        random.then(|| slow.copy_ns(estimate::ERASE_BYTES) as f64),
    )
    .ns;
    let timed = spec.time_based && spec.runtime_ns.is_some();
    let sample = if random {
        sample_writes(spec, slow_ns, preserve)
    } else {
        0
    };
    let sample_bytes = sample.saturating_mul(spec.bs_max);
    WriteIntent {
        command: "io",
        region: (spec.offset, spec.size),
        max_bytes: if timed {
            u64::MAX
        } else {
            spec.size
                .saturating_mul(u64::from(spec.numjobs))
                .saturating_add(sample_bytes)
        },
        typical_bytes: None,
        estimated_ns: job.ns,
        slow_ns,
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
        timed_first: sample > 0,
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

/// How many random writes the plan times before the job ([`time_first_writes`]): at most
/// [`estimate::SAMPLE_WRITES`] and an eighth of the job's own (a small job is not
/// doubled by its sample); none when even the slow bound (`slow_ns`) is under
/// [`estimate::SAMPLE_WORTH_NS`], where the bounds are plan enough, unless preserve mode
/// (`preserve`) saves each place on its own at a cost only timing tells.
fn sample_writes(spec: &JobSpec, slow_ns: u64, preserve: bool) -> u64 {
    if slow_ns < estimate::SAMPLE_WORTH_NS && !preserve {
        return 0;
    }
    if spec.time_based && spec.runtime_ns.is_some() {
        return estimate::SAMPLE_WRITES;
    }
    let bs = ((spec.bs_min + spec.bs_max) / 2).max(1);
    let job_writes = spec.size.saturating_mul(u64::from(spec.numjobs)) / bs;
    (job_writes / 8).clamp(1, estimate::SAMPLE_WRITES)
}

/// Time the job's first random writes ([`estimate::WriteSample`], at places drawn as the
/// job draws its own, in its region) and say what the run will take at their cost, and in
/// preserve mode (`preserving`) what saving and restoring add: the measured plan. At
/// most [`estimate::SAMPLE_WRITES_MAX_NS`], and a tenth of a --runtime.
fn time_first_writes(
    spec: &JobSpec,
    rates: &Rates,
    sample_writes: u64,
    dev: &mut dyn Backend,
    preserving: bool,
) -> std::io::Result<Option<String>> {
    let mut places = workload::offsets::OffsetGen::new(
        spec.offset,
        spec.size,
        spec.bs_min,
        spec.bs_max,
        true,
        spec.seed ^ 0x5a3c_1e0f,
    );
    let max_ns = spec.runtime_ns.map_or(estimate::SAMPLE_WRITES_MAX_NS, |r| {
        (r / 10).min(estimate::SAMPLE_WRITES_MAX_NS)
    });
    let places = std::iter::repeat_with(|| places.next(workload::offsets::Dir::Write, u64::MAX))
        .take(sample_writes as usize);
    let Some(sample) = estimate::WriteSample::take(dev, places, max_ns)? else {
        return Ok(None);
    };
    let job = JobTime::of(spec, rates, Some(sample.write_ns()));
    let mut text = format!(
        "its first {} ({}) took {}, timed just now ({} back what it read): the run takes about {}",
        if sample.count == 1 {
            "random write".to_string()
        } else {
            format!("{} random writes", sample.count)
        },
        format_bytes(sample.bytes),
        format_ns(sample.write_ns()) + if sample.count == 1 { "" } else { " each" },
        if sample.count == 1 {
            "it wrote"
        } else {
            "each wrote"
        },
        format_ns(job.ns as f64)
    );
    if preserving {
        text += &format!(
            ", and preserve mode's saving ({} a write) and restoring about {} more",
            format_ns(sample.save_ns()),
            format_ns(random_preserve_ns(spec, rates, &sample, &job) as f64)
        );
    }
    Ok(Some(text))
}

/// Preserve mode's time for a job that writes randomly, at the cost its first writes were
/// timed at: each place is saved before its first overwrite on its own (a read, a
/// journal append and a sync: the sample's saving time, each). Restoring writes them back
/// in offset order, touching pieces as one write (`journal`'s restore): the first write
/// into each erase block touched ([`estimate::ERASE_BYTES`] assumed) costs what a random
/// write was timed at (the card opens that block), the rest go at the write rate; and
/// verifying reads the pieces again. The sample's own places count too.
fn random_preserve_ns(
    spec: &JobSpec,
    rates: &Rates,
    sample: &estimate::WriteSample,
    job: &JobTime,
) -> u64 {
    let bs = ((spec.bs_min + spec.bs_max) / 2).max(1);
    let places = job.overwritten_bytes.div_ceil(bs) + sample.count;
    let pieces = job.overwritten_places + sample.count;
    let written = job.overwritten_bytes + sample.bytes;
    let blocks = (spec.size / estimate::ERASE_BYTES).max(1) as f64;
    let opened = blocks * (1.0 - (-(pieces as f64) / blocks).exp());
    let saving = places as f64 * sample.save_ns();
    let restoring = opened * sample.write_ns() + rates.write_ns(written, pieces) as f64;
    let verifying = rates.read_ns(written, pieces) as f64;
    (saving + restoring + verifying) as u64
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
    /// each (a random write below a flash page costing a page, [`Rates::blocks_ns`], or
    /// `random_write_ns` each, its measured or assumed cost), the
    /// device serving one at a time; a time-based job runs for its --ramp-time +
    /// --runtime, another until its --size is done or --runtime ends; a --rate cap
    /// slows it to the cap. Random writes land uniformly, some on the same block: of
    /// `n` writes over `m` blocks, m·(1 − e^(−n/m)) blocks are written, in about that
    /// many · (1 − the share written) separate pieces.
    fn of(spec: &JobSpec, rates: &Rates, random_write_ns: Option<f64>) -> Self {
        let jobs = u64::from(spec.numjobs.max(1));
        let bs = ((spec.bs_min + spec.bs_max) / 2).max(1);
        let write_share = match spec.rw {
            RwMode::Read | RwMode::RandRead => 0.0,
            RwMode::Write | RwMode::RandWrite => 1.0,
            RwMode::RandRw | RwMode::Rw => 1.0 - f64::from(spec.rwmixread.min(100)) / 100.0,
        };
        let write_ns = if spec.rw.is_random() {
            random_write_ns.unwrap_or_else(|| rates.blocks_ns(bs, 1) as f64)
        } else {
            rates.write_ns(bs, 1) as f64
        };
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
        let t = JobTime::of(&job(RwMode::Write, MIB, 64 * MIB), &rates(), None);
        assert_eq!(t.ns, 1_280_000_000);
        assert_eq!((t.overwritten_bytes, t.overwritten_places), (64 * MIB, 64));
        // Half reads (at 100 MiB/s): 0.32 s + 0.64 s.
        let mut mixed = job(RwMode::Rw, MIB, 64 * MIB);
        mixed.rwmixread = 50;
        assert_eq!(JobTime::of(&mixed, &rates(), None).ns, 960_000_000);
        // --verify reads back what was written: 0.64 s more.
        let mut v = job(RwMode::Write, MIB, 64 * MIB);
        v.verify = true;
        assert_eq!(JobTime::of(&v, &rates(), None).ns, 1_920_000_000);
        // A --rate cap of 16 MiB/s: 4 s.
        let mut capped = job(RwMode::Write, MIB, 64 * MIB);
        capped.rate.write = Some(16 * MIB);
        assert_eq!(JobTime::of(&capped, &rates(), None).ns, 4_000_000_000);
        // --runtime ends it first: 0.5 s, 25 MiB.
        let mut short = job(RwMode::Write, MIB, 64 * MIB);
        short.runtime_ns = Some(500_000_000);
        let t = JobTime::of(&short, &rates(), None);
        assert_eq!((t.ns, t.overwritten_bytes), (500_000_000, 25 * MIB));
    }

    #[test]
    fn a_time_based_job_takes_its_time_and_overwrites_what_it_reaches() {
        let mut t = job(RwMode::Write, MIB, 256 * MIB);
        t.runtime_ns = Some(2_000_000_000);
        t.ramp_ns = 1_000_000_000;
        t.time_based = true;
        let r = JobTime::of(&t, &rates(), None);
        // 3 s at 50 MiB/s: 150 MiB of the 256.
        assert_eq!((r.ns, r.overwritten_bytes), (3_000_000_000, 150 * MIB));
        // Writes 4 times slower reach a quarter as far in the same time.
        let slow = JobTime::of(&t, &rates().slower_writes(4.0), None);
        assert_eq!(slow.ns, r.ns);
        assert_eq!(slow.overwritten_bytes, 75 * MIB);
    }

    #[test]
    fn random_writes_cost_a_page_each_and_overwrite_less_than_they_write() {
        // 4096 writes of 4 KiB over 16 MiB, each costing a 16 KiB page at 50 MiB/s.
        let t = JobTime::of(&job(RwMode::RandWrite, 4096, 16 * MIB), &rates(), None);
        assert_eq!(t.ns, 4096 * 312_500);
        // 1 − 1/e of the blocks, in about (1 − 1/e)/e of them as separate pieces.
        let share = 1.0 - (-1.0f64).exp();
        let hit = t.overwritten_bytes as f64 / (16 * MIB) as f64;
        assert!((hit - share).abs() < 0.01, "{hit}");
        let pieces = t.overwritten_places as f64 / 4096.0;
        assert!((pieces - share * (1.0 - share)).abs() < 0.01, "{pieces}");
    }

    /// The served open-AU card of the truth suites (`scripts/plan-vs-run`): 3 erase blocks
    /// of 1 MiB kept open, so a random write elsewhere copies a whole one.
    const OPEN_AU_CARD: &str = "custom,cmd=50us,read_bw=200M,write_bw=100M,native_bw=100M,size=512M,page=16K,erase=1M,open_au=3,open_au_random=0,noise=0";

    #[test]
    fn a_random_write_job_is_planned_as_bounds_then_timed() {
        let r = rates();
        let i = intent(&job(RwMode::RandWrite, 4096, 16 * MIB), &r, false);
        assert!(i.timed_first);
        let t = i.time_text();
        assert!(
            !t.contains("about"),
            "only a measured figure says about: {t}"
        );
        assert!(t.contains("timed before it runs"), "{t}");
        // The upper bound: a 4 MiB erase block copied a write, at a quarter of the reads.
        let copy = r
            .slower_writes(estimate::SLOW_WRITES)
            .copy_ns(estimate::ERASE_BYTES);
        assert_eq!(i.slow_ns, 4096 * copy, "{i:?}");
        assert!(i.estimated_ns < i.slow_ns);
        // The sample's writes are in the bytes it may write.
        assert_eq!(i.max_bytes, 16 * MIB + estimate::SAMPLE_WRITES * 4096);
        // Sequential writes and random reads keep a figure from the read sample.
        for rw in [RwMode::Write, RwMode::RandRead] {
            let i = intent(&job(rw, 4096, 16 * MIB), &r, false);
            assert!(!i.timed_first, "{rw:?}");
        }
        let mut reads_only = job(RwMode::RandRw, 4096, 16 * MIB);
        reads_only.rwmixread = 100;
        assert!(!intent(&reads_only, &r, false).timed_first);
        // A job whose slow bound is short keeps its bounds: no writes of its own to time.
        let small = intent(&job(RwMode::RandWrite, 4096, 64 * 1024), &r, false);
        assert!(small.slow_ns < estimate::SAMPLE_WORTH_NS, "{small:?}");
        assert!(
            !small.timed_first && small.max_bytes == 64 * 1024,
            "{small:?}"
        );
        // A sample is at most an eighth of the job's own writes.
        let mut mid = job(RwMode::RandWrite, 4096, 0);
        mid.size = 16 * MIB;
        assert_eq!(sample_writes(&mid, u64::MAX, false), 128);
        mid.size = 256 * 4096;
        assert_eq!(sample_writes(&mid, u64::MAX, false), 32);
        assert_eq!(sample_writes(&mid, estimate::SAMPLE_WORTH_NS - 1, false), 0);
        // Preserve mode's one-by-one saving is timed however short the job.
        assert_eq!(sample_writes(&mid, estimate::SAMPLE_WORTH_NS - 1, true), 32);
        let small = intent(&job(RwMode::RandWrite, 4096, 64 * 1024), &r, true);
        assert!(
            small.timed_first && small.max_bytes == 64 * 1024 + 2 * 4096,
            "{small:?}"
        );
    }

    #[test]
    fn random_writes_timed_first_give_the_run_within_a_third_on_an_open_au_card() {
        use crate::backend::sim::{SimConfig, SimDevice};
        // Before: a plan from the read rate said 0.85 s for a 42 s run (50 times less).
        let mut dev = SimDevice::new(SimConfig::parse(OPEN_AU_CARD).unwrap());
        let mut spec = job(RwMode::RandWrite, 4096, 16 * MIB);
        spec.pattern = Pattern::Zeros;
        let rates = Rates::sample(&mut dev, (spec.offset, spec.size));
        let plan = intent(&spec, &rates, false);
        let text = time_first_writes(&spec, &rates, estimate::SAMPLE_WRITES, &mut dev, false)
            .unwrap()
            .unwrap();
        assert!(
            text.starts_with("its first 128 random writes (512 KiB) took"),
            "{text}"
        );
        assert!(!text.contains("preserve"), "no preserve mode here: {text}");
        let about = text.rsplit("about ").next().unwrap().to_string();
        let ran = workload::run(&spec, RunTarget::Backend(&mut dev)).unwrap();
        let run = ran.elapsed_ns as f64;
        // The measured figure, as printed.
        let (n, unit) = about.split_once(' ').unwrap();
        let planned = n.parse::<f64>().unwrap()
            * match unit {
                "s" => 1e9,
                "ms" => 1e6,
                u => panic!("{u}"),
            };
        assert!(
            (0.7..1.3).contains(&(run / planned)),
            "run {run} ns, planned {text}"
        );
        // The bounds before the sample hold the run.
        assert!(
            (plan.estimated_ns as f64) < run && run < plan.slow_ns as f64,
            "{plan:?} {run}"
        );
    }

    #[test]
    fn preserve_mode_of_random_writes_saves_each_place_and_restores_by_offset() {
        let r = rates();
        let spec = job(RwMode::RandWrite, 4096, 16 * MIB);
        // 64 writes: 10 ms each on the device, 1 ms each saving (read, append, sync).
        let sample = estimate::WriteSample {
            count: 64,
            bytes: 64 * 4096,
            device_ns: 640_000_000,
            saving_ns: 64_000_000,
        };
        let job = JobTime::of(&spec, &r, Some(sample.write_ns()));
        assert_eq!(job.ns, 4096 * 10_000_000);
        // Each place saved on its own, with a sync of its own: far more than the pieces'
        // sequential rates say.
        let places = job.overwritten_bytes.div_ceil(4096) + 64;
        let saving = places * 1_000_000;
        let i = intent(&spec, &r, true);
        assert!(saving > 4 * i.preserve_ns(), "{saving} {}", i.preserve_ns());
        // Written back by offset: the 16 MiB's four erase blocks are each opened once at a
        // random write's cost, not once per piece.
        let pieces = job.overwritten_places + 64;
        assert!(pieces > 600, "{pieces}");
        let total = random_preserve_ns(&spec, &r, &sample, &job);
        let opening = total
            - saving
            - r.write_ns(job.overwritten_bytes + 64 * 4096, pieces)
            - r.read_ns(job.overwritten_bytes + 64 * 4096, pieces);
        assert!(
            (39_000_000..=40_000_000).contains(&opening),
            "four blocks opened at 10 ms: {opening}"
        );
        // In preserve mode the measured plan says both, on a simulated card too.
        use crate::backend::sim::{SimConfig, SimDevice};
        let mut dev = SimDevice::new(SimConfig::parse(OPEN_AU_CARD).unwrap());
        let text = time_first_writes(&spec, &r, estimate::SAMPLE_WRITES, &mut dev, true)
            .unwrap()
            .unwrap();
        assert!(
            text.contains("preserve mode's saving (0 ns a write) and restoring about"),
            "{text}"
        );
    }

    #[test]
    fn the_refusal_of_less_than_a_block_names_the_option_given() {
        let size = |option: &'static str, given: &str| JobSize::RestOfTarget {
            blocksize: (option, given.to_string()),
        };
        let mut j = job(RwMode::Read, 4096, 0);
        j.bs_min = 4096;
        j.bs_max = 8192;
        j.offset = MIB - 4096;
        for (option, given) in [("--blocksize", "8k"), ("--blocksize-range", "4k-8k")] {
            let e = size(option, given)
                .of(&j, &crate::device::test_spec("t.img"), MIB)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("({option} {given}); give a smaller {option}")),
                "{e}"
            );
        }
        let e = size("--blocksize-range", "4k-8k")
            .of(&j, &crate::device::test_spec("t.img"), MIB)
            .unwrap_err();
        assert!(!e.to_string().contains("--blocksize "), "{e}");
        // A block fits: the rest of the target.
        j.offset = MIB - 8192;
        assert_eq!(
            size("--blocksize", "8k")
                .of(&j, &crate::device::test_spec("t.img"), MIB)
                .unwrap(),
            8192
        );
    }

    #[test]
    fn the_plan_counts_preserve_mode_from_what_the_job_overwrites() {
        let i = intent(&job(RwMode::Write, MIB, 64 * MIB), &rates(), false);
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
        let i = intent(&t, &rates(), false);
        assert_eq!(i.max_bytes, u64::MAX);
        assert_eq!(i.preserve_bytes(), 50 * MIB);
    }
}
