//! The bench test, for `bench` and `auto`: sequential 1 MiB at QD8 and QD1, random 4 KiB
//! at QD32 and QD1, read (and write through the write policy) on a device, a file, a
//! simulated card or a test file made in a directory; the figures, the SD speed and
//! application classes and the `--expect` checks in one document. It never prints; the
//! text is the output room's (`output::bench::render`).

use crate::device::TargetSpec;
use crate::device::{self, OpenRequest, TargetKind};
use crate::report::results::{BenchParameters, BenchResult};
use crate::report::{Body, Document};
use crate::session::{open_for_write, LivePlan, Ran, Rates, WriteFlags, WriteIntent, WriteSession};
use crate::vocab::error::Verdict;
use crate::vocab::units::{format_bytes, format_ns};
use crate::vocab::Warning;
use crate::workload::bench::{self, evaluate, BenchFigure, BenchLine, ClassCheck, Expect, LINES};
use crate::workload::{self, Dir, EngineKind, JobSpec, RunTarget, WorkloadResult};
use crate::{Error, Result};
use serde_json::json;
use std::path::Path;

/// What `bench` measures.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchParams {
    /// About 15 s in total instead of about a minute.
    pub quick: bool,
    /// Counting time of each test; overrides the default split.
    pub runtime_ns: Option<u64>,
    /// Size of the test region or test file.
    pub size_bytes: u64,
    /// Engine for the queued tests.
    pub engine: EngineKind,
    /// Pin the test thread to these CPUs.
    pub cpus: Vec<usize>,
    /// Checks (exit 3 when one fails).
    pub expect: Option<Vec<Expect>>,
    /// Repeat the whole set of tests this many times, interleaved.
    pub runs: u32,
    /// A cap on the bytes written (`auto`'s write budget): a test the cap stops is not a
    /// figure, and the tests after it do not run.
    pub write_budget: Option<u64>,
    /// Draw the progress bar on stderr (on a terminal); off inside `auto`.
    pub progress: bool,
}

/// What the write tests write: sequential and random blocks over the first `region`,
/// each test for `per_test_ns`.
fn intent(region: u64, per_test_ns: u64, runs: u32, rates: &Rates) -> WriteIntent {
    let tests = LINES.len() as u64 * u64::from(runs);
    let mut intent = WriteIntent::workload(
        "bench",
        (0, region),
        per_test_ns * tests,
        format!(
            "bench writes sequential 1 MiB and random 4 KiB blocks over the first {} ({tests} tests of {} each)",
            format_bytes(region),
            format_ns(per_test_ns as f64)
        ),
        "bench a smaller --size",
    );
    // As many read tests as write tests.
    intent.reads_ns = per_test_ns * tests;
    let (bytes, places) = overwritten(region, per_test_ns, runs, rates);
    intent.overwritten_bytes = Some(bytes);
    intent.places = places;
    // Random writes reach every 32 MiB window of the region: all of it is saved.
    intent.saved_bytes = Some(region);
    intent.rates = *rates;
    intent
}

/// What the write tests overwrite at `rates`, for preserve mode's cost: the sequential
/// tests write for their time (wrapping in the region), the random ones 4 KiB each
/// (at a flash page's cost, [`Rates::blocks_ns`]); restored in pieces of up to 1 MiB
/// (bytes, pieces).
pub fn overwritten(region: u64, per_test_ns: u64, runs: u32, rates: &Rates) -> (u64, u64) {
    let mut bytes = 0u64;
    for line in LINES.iter() {
        let one = rates.blocks_ns(line.bs, 1).max(1);
        let ops = per_test_ns * u64::from(runs) / one;
        bytes = bytes.saturating_add(ops * line.bs);
    }
    let bytes = bytes.min(region);
    (bytes, bytes.div_ceil(1 << 20))
}

/// The device time of bench's tests (`tests`, in the order they run): each its time and
/// ramp (`per_test_ns`), and for a write test the writes still in flight when its time
/// ends (its queue depth), each at `write_ns(block size)`: on a card that copies an erase
/// block for a random write, a queue of 32 of them takes many seconds to drain.
fn tests_ns(tests: &[(BenchLine, Dir)], per_test_ns: u64, write_ns: impl Fn(u64) -> f64) -> u64 {
    tests
        .iter()
        .map(|(line, dir)| {
            let drain = match dir {
                Dir::Write => f64::from(line.iodepth) * write_ns(line.bs),
                Dir::Read => 0.0,
            };
            per_test_ns + drain as u64
        })
        .sum()
}

/// What `--write` would write on `spec`, without writing (for `auto`'s plan), and the
/// device time of all the tests, reads included.
pub fn plan(spec: &TargetSpec, params: &BenchParams, rates: &Rates) -> Result<(WriteIntent, u64)> {
    let info = device::peek(spec)?;
    let region = params.size_bytes.min(info.size_bytes);
    let tests = LINES.len() * 2;
    let (runtime_ns, ramp_ns) = timing(params, tests)?;
    Ok((
        intent(region, runtime_ns + ramp_ns, params.runs, rates),
        (runtime_ns + ramp_ns) * tests as u64 * u64::from(params.runs),
    ))
}

/// Per-test counting time and ramp, from the options.
fn timing(params: &BenchParams, tests: usize) -> Result<(u64, u64)> {
    const S: u64 = 1_000_000_000;
    if let Some(rt) = params.runtime_ns {
        if rt == 0 {
            return Err(Error::usage(
                "--runtime 0: give a positive time per test, e.g. 5s",
            ));
        }
        return Ok((rt, (rt / 5).min(S)));
    }
    let total = if params.quick { 15 * S } else { 60 * S };
    let per = total / tests.max(1) as u64;
    let ramp = (per / 5).min(S);
    Ok((per - ramp, ramp))
}

/// One test's figure over the runs that measured it (`runs`, in order): bytes and I/Os
/// over the summed counting time, the latencies of all, the per-second rates in sequence.
fn figure(line_label: &str, metric: String, dir: Dir, runs: &[WorkloadResult]) -> BenchFigure {
    let mut t = workload::DirSummary::default();
    for r in runs {
        let one = r.total(dir);
        t.io_bytes += one.io_bytes;
        t.ios += one.ios;
        t.runtime_ns += one.runtime_ns;
        t.clat.merge(&one.clat);
    }
    let per_second_bw: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.samples())
        .filter_map(|s| s.rate(dir))
        .collect();
    BenchFigure {
        metric,
        label: line_label.to_string(),
        dir: if dir == Dir::Read { "read" } else { "write" }.into(),
        bw_bytes: t.bw_bytes(),
        iops: t.iops(),
        p99_ns: t.clat.percentile(99.0),
        mean_ns: t.clat.mean(),
        stddev_ns: t.clat.stddev(),
        ios: t.ios,
        per_second_spread: bench::relative_spread(&per_second_bw),
        per_second_bw,
        runq_wait_share: {
            let jobs = || runs.iter().flat_map(|r| &r.jobs);
            let waits: Option<u64> = jobs().map(|j| j.runq_wait_ns).sum();
            let window: u64 = jobs().map(|j| j.runq_window_ns).sum();
            waits.and_then(|w| bench::wait_share(w, window))
        },
    }
}

/// What a bench run measured, for `bench` and for `auto`.
pub struct Bench {
    /// `None`: a signal stopped it before anything could be reported.
    pub doc: Option<Document>,
    /// Ok; check failed when an `--expect` check failed; incomplete when a test failed;
    /// stopped by a signal.
    pub verdict: Verdict,
    /// The figures, one per test run (also the document's samples).
    pub figures: Vec<BenchFigure>,
    /// The classes the figures meet or miss (none where the target is no card).
    pub classes: Vec<ClassCheck>,
    /// A write session ran and ended: its wear line belongs on stderr after the result.
    pub wear: bool,
    /// The test that failed, when one did (the figures cover the tests until then).
    pub failure: Option<String>,
}

/// Run the tests on `spec` (the write tests through the write policy, `flags`) and build
/// the document.
pub fn measure(spec: &TargetSpec, params: &BenchParams, flags: &WriteFlags) -> Result<Bench> {
    let load_before = crate::workload::sysstat::CpuLoad::now();
    let expects = params.expect.as_ref();
    let size = params.size_bytes;
    let engine = params.engine;
    let cpus = params.cpus.clone();
    let writes = flags.allowed();
    if let Some(ex) = expects {
        if let Some(e) = ex.iter().find(|e| e.metric.contains("write") && !writes) {
            return Err(Error::usage(format!(
                "--expect term '{}' needs the write tests: add --write",
                e.term
            )));
        }
    }
    let is_dir = spec.kind() == TargetKind::Directory;
    let mut _test_file = None;
    let mut target_spec = spec.clone();
    let mut shown_spec: Option<String> = None;
    if let (true, Some(dir)) = (is_dir, spec.path()) {
        // A name nobody can guess beforehand (created O_EXCL | O_NOFOLLOW all the same).
        let name = crate::fs::test_name("bench");
        let path = dir.join(&name);
        crate::session::check_allowed(
            spec,
            &WriteFlags {
                journal: None,
                ..flags.clone()
            },
            &format!(
                "bench on a directory makes a {} test file there ({}), and removes it afterwards",
                format_bytes(size),
                path.display()
            ),
        )?;
        let made = crate::fs::make_test_file(dir, name, size);
        if let Some(sig) = crate::signals::pending() {
            return Ok(Bench::stopped(sig));
        }
        let (guard, file) = made?;
        // Measured through the descriptor bench created, never the name: another user
        // who can write the directory may swap the name for a link meanwhile.
        use std::os::fd::AsRawFd;
        target_spec = TargetSpec::of_path(format!("/proc/self/fd/{}", file.as_raw_fd()).into());
        shown_spec = Some(path.to_string_lossy().into_owned());
        _test_file = Some((guard, file));
    }
    let mut probe = device::open(&target_spec, &OpenRequest::read_only())?;
    if let Some(shown) = &shown_spec {
        probe.info.spec = shown.clone();
    }
    let simulated = probe.info.kind == TargetKind::Sim;
    // What the host path lets the tests show, read before anything is measured.
    let host = super::host_path::limits(&target_spec, probe.block_name.as_deref())?;
    let region = size.min(probe.info.size_bytes);
    if region < 1 << 20 {
        return Err(Error::usage(format!(
            "{} holds {} ({} bytes): bench's sequential test needs at least one 1 MiB block; measure a larger target, or use `flashscope io` with a smaller --blocksize",
            spec,
            format_bytes(region),
            region
        )));
    }
    // The write mode as the policy decides it for the target named (a directory's test
    // file bench made itself is not preserved): a --journal it has no use for is refused.
    if writes {
        crate::session::mode_for(spec, flags)?;
    } else if flags.journal.is_some() {
        return Err(Error::usage(
            "--journal is for the preserve mode of write tests on a device or file (--write without --destructive): drop it",
        ));
    }
    let dirs: Vec<Dir> = if writes {
        vec![Dir::Read, Dir::Write]
    } else {
        vec![Dir::Read]
    };
    let n_tests = LINES.len() * dirs.len();
    let runs = params.runs.max(1) as usize;
    let (runtime_ns, ramp_ns) = timing(params, n_tests)?;
    // The write tests go through the write session: on a block device or a file the
    // engine claims each write on the session's stack, so preserve mode saves each region
    // just before its first overwrite (restored and verified at the end) and the budget
    // counts it; a simulated card is written through the stack directly. The session keeps
    // a device open with O_EXCL, so nothing can mount it meanwhile; the engine opens its
    // own descriptors. Only the test file bench made itself in a directory is not guarded.
    let mut session: Option<WriteSession> = None;
    let mut info = probe.info.clone();
    let mut warnings = probe.warnings.clone();
    let no_card = not_a_card(&probe.warnings, &probe.info, spec);
    // Preserve mode's cost from a short read sample of the region (reads only).
    let rates = if writes && !is_dir {
        Rates::sample(&mut *probe.backend, (0, region))
    } else {
        Rates::assumed()
    };
    let mut sim_dev = None;
    if writes && !is_dir {
        drop(probe);
        let mut intent = intent(region, runtime_ns + ramp_ns, params.runs, &rates);
        intent.budget_bytes = params.write_budget;
        let s = open_for_write(&target_spec, flags, &intent)?;
        info = s.info.clone();
        warnings = s.warnings.clone();
        session = Some(s);
    } else if simulated {
        // The simulated card lives in the probe's backend: read on it.
        sim_dev = Some(probe.backend);
    } else {
        drop(probe);
    }
    let preserving = session.as_ref().is_some_and(|s| s.journal.is_some());
    // Each test's result in every run that measured it, in test order; each run's figures.
    let mut measured: Vec<(&BenchLine, Dir, Vec<WorkloadResult>)> = Vec::new();
    let mut run_figures: Vec<Vec<BenchFigure>> = Vec::new();
    let mut done = 0;
    let mut jobs = Vec::new();
    let mut bytes_written = 0;
    let mut elapsed_ns = 0;
    let mut failure: Option<String> = None;
    let mut interrupted = false;
    // The plan: every test's time, and the queued writes' drain, from a flash page a write
    // to an erase block copied a write (slow writes); worked out again from random writes
    // timed on the card before the first random write test (the device's own rate).
    let order: Vec<(BenchLine, Dir)> = (0..runs)
        .flat_map(|_| {
            dirs.iter()
                .flat_map(|&d| LINES.iter().map(move |l| (*l, d)))
        })
        .collect();
    let per_test_ns = runtime_ns + ramp_ns;
    let slow = rates.slower_writes(crate::session::estimate::SLOW_WRITES);
    let low = tests_ns(&order, per_test_ns, |bs| rates.blocks_ns(bs, 1) as f64);
    let live_slow_ns = tests_ns(&order, per_test_ns, |bs| {
        if bs < crate::session::estimate::ERASE_BYTES {
            slow.copy_ns(crate::session::estimate::ERASE_BYTES) as f64
        } else {
            slow.blocks_ns(bs, 1) as f64
        }
    });
    // Read tests alone run for their set time: a plan that needs no write rate.
    let mut live = if !writes {
        LivePlan::measured(low)
    } else {
        LivePlan::new(low, live_slow_ns)
    };
    let mut sample_ns = 0u64;
    let mut progress = if params.progress {
        crate::report::progress::Progress::new("bench")
    } else {
        crate::report::progress::Progress::hidden("bench")
    };
    'tests: for run in 0..runs {
        run_figures.push(Vec::new());
        for &dir in &dirs {
            for (i, line) in LINES.iter().enumerate() {
                if (preserving || is_dir) && crate::signals::pending().is_some() {
                    interrupted = true;
                    break 'tests;
                }
                progress.update(done as u64, (n_tests * runs) as u64);
                progress.message(&format!(
                    "{} {}",
                    line.label,
                    if dir == Dir::Read { "read" } else { "write" },
                ));
                let spec = JobSpec {
                    name: format!(
                        "{} {}",
                        line.label,
                        if dir == Dir::Read { "read" } else { "write" }
                    ),
                    rw: line.rw(dir),
                    bs_min: line.bs,
                    bs_max: line.bs,
                    iodepth: line.iodepth,
                    size: region,
                    runtime_ns: Some(runtime_ns),
                    time_based: true,
                    ramp_ns,
                    engine: if line.iodepth == 1 {
                        EngineKind::Sync
                    } else {
                        engine
                    },
                    cpus: cpus.clone(),
                    seed: 0x5eed_f1a5 + i as u64 + 16 * run as u64,
                    // The simulator's timing does not depend on the data, and it keeps only
                    // non-zero data in memory.
                    pattern: if simulated {
                        crate::workload::Pattern::Zeros
                    } else {
                        crate::workload::Pattern::Random
                    },
                    stop_on_signal: preserving || is_dir,
                    ..JobSpec::default()
                };
                spec.validate(info.size_bytes, info.logical_sector_bytes)?;
                // Before the first random write test, not the first write test: the
                // sample's random writes leave a card's open allocation units and
                // mapping as random writes do, and the sequential tests after them measured
                // that (sim:sd-16g's SEQ1M Q8T1 write 10.88 MB/s against 12.14 unsampled).
                if dir == Dir::Write && line.random && !live.replanned() {
                    if let Some(s) = session.as_mut() {
                        // Random 4 KiB writes timed on the card, each writing back what it
                        // read there (nothing changes; preserve mode saves them first).
                        // From k = 1: k = 0 is the region's first sector, which a card's
                        // FAT area may write faster than any other.
                        let places = (1..=crate::session::estimate::SAMPLE_WRITES).map(|k| {
                            let blocks = (region / 4096).max(1);
                            (
                                (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) % blocks * 4096,
                                4096,
                            )
                        });
                        let min_ns =
                            (runtime_ns / 10).min(crate::session::estimate::SAMPLE_WRITES_MAX_NS);
                        // Until the writes settle (a card's first random writes pay half
                        // of what the test's will), within a tenth of the slow plan.
                        let max_ns = (live_slow_ns / 10).max(min_ns);
                        // An error here (a signal, a budget) is the write test's to meet
                        // and report: the plan then stays the first.
                        let sample = crate::session::estimate::WriteSample::take_settled(
                            &mut s.dev, places, min_ns, max_ns,
                        );
                        if let Ok(Some(w)) = sample {
                            sample_ns = w.device_ns;
                            let small = w.write_ns();
                            let left = &order[done..];
                            let ahead = tests_ns(left, per_test_ns, |bs| {
                                if bs <= 4096 {
                                    small
                                } else {
                                    rates.blocks_ns(bs, 1) as f64
                                }
                            });
                            live.replan(elapsed_ns + sample_ns + ahead, elapsed_ns + sample_ns);
                            if let Some(n) = live.notice("bench") {
                                s.notices.say(n);
                            }
                        }
                    }
                }
                let path = Path::new(target_spec.as_str());
                let r = match (session.as_mut(), sim_dev.as_mut()) {
                    (Some(s), _) if simulated => {
                        workload::run(&spec, RunTarget::Backend(&mut s.dev))?
                    }
                    (Some(s), _) if dir == Dir::Write => workload::run(
                        &spec,
                        RunTarget::Guarded {
                            path,
                            stack: &mut s.dev,
                        },
                    )?,
                    (_, Some(dev)) => workload::run(&spec, RunTarget::Backend(&mut **dev))?,
                    _ => workload::run(&spec, RunTarget::Path(path))?,
                };
                for w in workload::run_warnings(&r) {
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
                }
                bytes_written += r.bytes_written();
                elapsed_ns += r.elapsed_ns;
                if (preserving || is_dir) && crate::signals::pending().is_some() {
                    // A test cut short by a signal is not a figure.
                    interrupted = true;
                    break 'tests;
                }
                if let Some(e) = r.budget_stop() {
                    // Nor is one the write budget cut short.
                    warnings.push(crate::session::stopped_early(e));
                    break 'tests;
                }
                let metric = line.metric(dir);
                if let Some(mut j) = r
                    .fio_jobs_json()
                    .as_array()
                    .and_then(|a| a.first().cloned())
                {
                    j["test"] = json!(line.label);
                    j["metric"] = json!(metric);
                    if runs > 1 {
                        j["run"] = json!(run + 1);
                    }
                    jobs.push(j);
                }
                let this_run = figure(line.label, metric.clone(), dir, std::slice::from_ref(&r));
                if let Some(f) = run_figures.last_mut() {
                    f.push(this_run);
                }
                let error = r.error().map(|e| format!("{} {}: {e}", line.label, metric));
                match measured.iter_mut().find(|m| m.0 == line && m.1 == dir) {
                    Some(m) => m.2.push(r),
                    None => measured.push((line, dir, vec![r])),
                }
                done += 1;
                if let Some(e) = error {
                    failure = Some(e);
                    break 'tests;
                }
            }
        }
    }
    let figures: Vec<BenchFigure> = measured
        .iter()
        .map(|(line, dir, rs)| figure(line.label, line.metric(*dir), *dir, rs))
        .collect();
    run_figures.retain(|f| !f.is_empty());
    // A directory's test file goes with a signal (the guard), and nothing is reported.
    if let Some(sig) = crate::signals::pending().filter(|_| is_dir && interrupted) {
        drop(_test_file);
        flags.notices.say(crate::session::Notice::BenchStopped);
        return Ok(Bench::stopped(sig));
    }
    // Restore and verify (preserve mode) before anything is reported, as every writing
    // command ends; a signal's stop is said there. In preserve mode the tests stop at a
    // signal, and the session's end sees it (still pending) and restores.
    let (ending, stopped) = match session.as_mut() {
        Some(s) => match s.conclude_counted(Ok(()), bytes_written, &mut progress)? {
            Ran::Done((), e) => (Some(e), None),
            Ran::Stopped(verdict, e) => (Some(e), Some(verdict)),
        },
        None => {
            progress.finish();
            (None, None)
        }
    };
    let find = |m: &str| figures.iter().find(|f| f.metric == m);
    let parameters = BenchParameters {
        size: region,
        runtime_ns_per_test: runtime_ns,
        ramp_ns_per_test: ramp_ns,
        engine: engine.name().to_string(),
        write: writes,
        quick: params.quick,
        cpus: cpus.clone(),
        clock: if simulated { "virtual" } else { "monotonic" }.to_string(),
        runs,
    };
    let mut doc = Document::for_target(
        &info,
        Body::Bench(BenchResult {
            parameters,
            samples: figures.clone(),
            jobs,
            classes: Vec::new(),
            expect: None,
            error: failure.clone(),
            // Each run's figures, in run order (the samples are over all runs).
            runs: (runs > 1).then_some(run_figures),
        }),
    );
    if let (Some(s), Some(e)) = (&session, &ending) {
        s.fill(&mut doc, e);
    } else {
        doc.bytes_written = bytes_written;
    }
    doc.elapsed_ns = elapsed_ns;
    doc.timing = Some(live.timing(elapsed_ns + sample_ns));
    doc.inferences.insert(
        "speed_class".into(),
        bench::speed_class(find("seq_write"), writes),
    );
    doc.inferences.insert(
        "app_class".into(),
        bench::app_class(
            find("rand_read"),
            find("rand_write"),
            find("seq_write"),
            writes,
        ),
    );
    let mut classes = bench::class_checks(&figures);
    if let Some(h) = &host {
        bench::mark_host_limited(&mut classes, &figures, h);
        // The speed and application classes met here are this host's: a class the path
        // keeps from being measured makes the answer a lower bound, not the card's class.
        let limited: Vec<String> = classes
            .iter()
            .filter_map(|c| Some(format!("{} ({})", c.class, c.host_limited.as_ref()?)))
            .collect();
        for (k, family) in [("speed_class", "UVC"), ("app_class", "A")] {
            let theirs: Vec<&String> = limited
                .iter()
                .filter(|l| family.contains(&l[..1]))
                .collect();
            if let (Some(i), false) = (doc.inferences.get_mut(k), theirs.is_empty()) {
                if let Some(v) = i.value.clone() {
                    *i = crate::vocab::Inference::new(
                        v,
                        i.confidence.min(0.7),
                        format!(
                            "{} Not measurable on this host (limited by the host path), so the card may meet more on a faster one: {}.",
                            i.evidence,
                            theirs.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")
                        ),
                    );
                }
            }
        }
    }
    // A class is a card's: where the target has no flash medium of its own, the figures
    // are the host's memory or disk, and no class is claimed for them.
    if let Some(why) = &no_card {
        for k in ["speed_class", "app_class"] {
            doc.inferences.insert(
                k.into(),
                crate::vocab::Inference::inconclusive(format!(
                    "{why}: a speed or application class is a card's, and these timings are not a card's"
                )),
            );
        }
        classes.clear();
    }
    if !writes {
        warnings.push(Warning::ReadOnlyBench);
    }
    warnings.extend(bench::noise_warnings(&figures, &classes));
    // The simulator's clock is virtual: other programs cannot slow it.
    if !simulated {
        warnings.extend(bench::busy_warning(
            load_before,
            crate::workload::sysstat::CpuLoad::now(),
        ));
    }
    let checks = expects.map(|e| evaluate(e, &figures));
    if let (Some(e), Some(c)) = (expects, &checks) {
        if let Body::Bench(b) = &mut doc.body {
            b.expect = Some(c.clone());
        }
        doc.checks = bench::expect_checks(e, c);
    }
    doc.metrics = bench::metrics(&figures, &classes);
    if let Body::Bench(b) = &mut doc.body {
        b.classes = classes.clone();
    }
    doc.warnings = warnings;
    // A write session that ended without a signal wore the device: its wear line follows.
    let wear = ending.is_some() && stopped.is_none();
    let verdict = if let Some(v) = stopped {
        v
    } else if failure.is_some() {
        Verdict::Incomplete
    } else if checks.is_some_and(|c| c.iter().any(|r| !r.pass)) {
        Verdict::CheckFailed
    } else {
        Verdict::Ok
    };
    let failure = failure.filter(|_| verdict == Verdict::Incomplete);
    Ok(Bench {
        doc: Some(doc),
        verdict,
        figures,
        classes,
        wear,
        failure,
    })
}

/// Why the target is no card, when it has no flash medium of its own: a file on a memory
/// filesystem, or a block device whose read timings are the host's (zram, a loop over a
/// file on a kernel filesystem: `health::GeometryNote::bounds_steps`). `None` for a card,
/// a simulated or served card (a loop over a FUSE file) and a file on a real filesystem.
fn not_a_card(
    warnings: &[Warning],
    info: &crate::device::TargetInfo,
    spec: &TargetSpec,
) -> Option<String> {
    if let Some(fs) = warnings.iter().find_map(|w| match w {
        Warning::MemoryFilesystem { fs_type, .. } => Some(fs_type),
        _ => None,
    }) {
        return Some(format!(
            "the target is on {}, a filesystem in memory",
            crate::input::printable(fs)
        ));
    }
    (info.kind == TargetKind::Block)
        .then(|| crate::health::geometry_note(spec))
        .flatten()
        .filter(|n| n.bounds_steps)
        .map(|n| n.words)
}

impl Bench {
    /// Stopped by a signal before anything could be reported.
    fn stopped(signal: i32) -> Self {
        Bench {
            doc: None,
            verdict: Verdict::Stopped { signal },
            figures: Vec::new(),
            classes: Vec::new(),
            wear: false,
            failure: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preserve_mode_writes_back_what_the_tests_reach_in_1_mib_pieces() {
        let r = Rates::from_sample((1 << 20, 10_000_000), None).unwrap();
        // A fast card's writes for 1.9 s per test cover a small region whole.
        let (bytes, places) = overwritten(16 << 20, 1_875_000_000, 1, &r);
        assert_eq!((bytes, places), (16 << 20, 16));
        // A slow card's cover part of a large one.
        let slow = r.slower_writes(100.0);
        let (bytes, places) = overwritten(1 << 30, 1_875_000_000, 1, &slow);
        assert!(bytes < 1 << 30 && bytes > 0, "{bytes}");
        assert_eq!(places, bytes.div_ceil(1 << 20));
        // The plan says the read tests' time, so that it adds up to the run.
        let i = intent(256 << 20, 1_875_000_000, 1, &r);
        assert_eq!(i.reads_ns, 4 * 1_875_000_000);
        assert!(i
            .describe()
            .contains("its read tests take about 7.5 s more"));
        assert_eq!(i.saved_bytes, Some(256 << 20));
    }
}
