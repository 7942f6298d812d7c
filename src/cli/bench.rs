//! `flashscope bench TARGET`: the everyday speed test — sequential 1 MiB at QD8 and QD1,
//! random 4 KiB at QD32 and QD1, read (and write with `--write`) — with SD speed-class and
//! A1/A2 verdicts and `--expect` checks for CI.

use super::{Outcome, Output};
use crate::error::{EXIT_CHECK_FAILED, EXIT_OK, EXIT_RUNTIME};
use crate::report::results::{BenchParameters, BenchResult};
use crate::report::table::Table;
use crate::report::wear_line;
use crate::report::{Body, Document, Warning};
use crate::target::write::{open_for_write, WriteFlags, WriteIntent, WriteSession};
use crate::target::{self, OpenRequest, TargetKind};
use crate::units::{format_bytes, format_ns, parse_size};
use crate::workload::bench::{self, evaluate, parse_expect, BenchFigure, BenchLine, LINES};
use crate::workload::spec::parse_cpus;
use crate::workload::{self, Dir, EngineKind, JobSpec, RunTarget, WorkloadResult};
use crate::{Error, Result};
use serde_json::json;
use std::path::Path;

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  flashscope bench sim:sd-16g --write
  flashscope bench /dev/mmcblk0                        read tests only
  flashscope bench /dev/mmcblk0 --write                saves the test region, restores it
  flashscope bench /media/card --write                 uses a 256 MiB test file there
  flashscope bench /dev/sdb --destructive --expect 'seq_write>=10MB/s,rand_read_iops>=1500'

Metrics for --expect: seq_read, seq_write (1 MiB QD8), seq_read_q1, seq_write_q1,
rand_read, rand_write (4 KiB QD32), rand_read_q1, rand_write_q1; each as bandwidth
(MB/s, MiB/s, ...), with _iops (a count) or _p99 (a duration), e.g. rand_write_iops>=500,
rand_read_q1_p99<=5ms. Exit codes: 0 ok, 1 runtime error, 2 usage or refused, 3 an --expect
check failed.")]
pub struct Args {
    /// Block device, regular file, directory (a test file is made there), or sim:PRESET.
    pub target: String,
    /// --write runs the write tests too: on a block device or a file each region is saved
    /// to a journal just before it is first overwritten, and everything is restored and
    /// verified afterwards (preserve mode); --destructive overwrites without saving.
    #[command(flatten)]
    pub flags: WriteFlags,
    /// About 15 s in total instead of about a minute.
    #[arg(long)]
    pub quick: bool,
    /// Counting time of each test (plain number = seconds); overrides the default split.
    #[arg(long, value_parser = crate::units::duration_arg)]
    pub runtime: Option<String>,
    /// Size of the test region or test file.
    #[arg(long, default_value = "256M", value_parser = crate::units::size_arg)]
    pub size: String,
    /// Engine for the queued tests: uring (default, falls back to sync) or sync.
    #[arg(long, default_value = "uring")]
    pub engine: String,
    /// Pin the test thread to these CPUs (e.g. 0).
    #[arg(long)]
    pub cpus: Option<String>,
    /// Checks, e.g. 'seq_write>=10MB/s,rand_read_iops>=1500' (exit 3 when one fails).
    #[arg(long)]
    pub expect: Option<String>,
    /// Repeat the whole set of tests N times, interleaved (each test once per round), so
    /// a drifting device or machine does not masquerade as a difference; each run's
    /// figures are kept (JSON `runs`) for `compare`. Takes N times as long.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,
    /// A cap on the bytes written (set by `auto` from its write budget): a test the cap
    /// stops is not a figure, and the tests after it do not run.
    #[arg(skip)]
    pub write_budget: Option<u64>,
}

/// What the write tests write: sequential and random blocks over the first `region`,
/// each test for `per_test_ns`.
fn intent(region: u64, per_test_ns: u64, runs: u32) -> WriteIntent {
    let tests = LINES.len() as u64 * u64::from(runs);
    WriteIntent::workload(
        "bench",
        (0, region),
        per_test_ns * tests,
        format!(
            "bench writes sequential 1 MiB and random 4 KiB blocks over the first {} ({tests} tests of {} each)",
            format_bytes(region),
            format_ns(per_test_ns as f64)
        ),
        "bench a smaller --size",
    )
}

/// What `--write` would write on the target, without writing (for `auto`'s plan), and the
/// device time of all the tests, reads included.
pub fn plan(args: &Args) -> Result<(WriteIntent, u64)> {
    let info = target::peek(&args.target)?;
    let region = parse_size(&args.size)?.min(info.size_bytes);
    let tests = LINES.len() * 2;
    let (runtime_ns, ramp_ns) = timing(args, tests)?;
    Ok((
        intent(region, runtime_ns + ramp_ns, args.runs),
        (runtime_ns + ramp_ns) * tests as u64 * u64::from(args.runs),
    ))
}

/// Per-test counting time and ramp, from the options.
fn timing(args: &Args, tests: usize) -> Result<(u64, u64)> {
    const S: u64 = 1_000_000_000;
    if let Some(r) = &args.runtime {
        let rt = crate::units::parse_duration_ns(r)?;
        if rt == 0 {
            return Err(Error::usage(
                "--runtime 0: give a positive time per test, e.g. 5s",
            ));
        }
        return Ok((rt, (rt / 5).min(S)));
    }
    let total = if args.quick { 15 * S } else { 60 * S };
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
            let runtime: u64 = jobs().map(|j| j.runtime_ns).sum();
            waits
                .filter(|_| runtime > 0)
                .map(|w| w as f64 / runtime as f64)
        },
    }
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    // The bar draws only on a terminal (report::progress), never on stdout.
    let b = execute(args, true)?;
    let code = b.outcome.emit(out)?;
    if let Some(w) = b.wear.filter(|_| !out.json) {
        eprint!("{w}");
    }
    if let Some(f) = b.failure {
        eprintln!("flashscope: error: {f} (the figures above cover the tests done until then)");
    }
    Ok(code)
}

/// What a bench run measured, for `bench` and for `auto`.
pub struct Bench {
    pub outcome: Outcome,
    /// The figures, one per test run (also the document's samples).
    pub figures: Vec<BenchFigure>,
    /// What the write session wrote and restored, for stderr after the result.
    pub wear: Option<String>,
    /// The test that failed, when one did (the figures cover the tests until then).
    pub failure: Option<String>,
}

/// Run the tests (`progress`: the progress bar on stderr, on a terminal; off inside `auto`) and build the document.
pub fn execute(args: &Args, progress: bool) -> Result<Bench> {
    let load_before = crate::workload::sysstat::CpuLoad::now();
    let expects = args.expect.as_deref().map(parse_expect).transpose()?;
    let size = parse_size(&args.size)?;
    let engine = EngineKind::parse(&args.engine)?;
    let cpus = args
        .cpus
        .as_deref()
        .map(parse_cpus)
        .transpose()?
        .unwrap_or_default();
    let flags = &args.flags;
    let writes = flags.write || flags.destructive;
    if let Some(ex) = &expects {
        if let Some(e) = ex.iter().find(|e| e.metric.contains("write") && !writes) {
            return Err(Error::usage(format!(
                "--expect term '{}' needs the write tests: add --write",
                e.term
            )));
        }
    }
    let is_dir = TargetKind::of_spec(&args.target) == TargetKind::Directory;
    let mut _test_file = None;
    let mut target_spec = args.target.clone();
    if is_dir {
        let path =
            Path::new(&args.target).join(format!(".flashscope-bench-{}.tmp", std::process::id()));
        crate::target::write::check_allowed(
            &args.target,
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
        let made = crate::fs::make_test_file(&path, size);
        if let Some(sig) = crate::signals::pending() {
            return Ok(Bench::stopped(crate::signals::exit_code(sig)));
        }
        _test_file = Some(made?);
        target_spec = path.to_string_lossy().into_owned();
    }
    let probe = target::open(&target_spec, &OpenRequest::read_only())?;
    let simulated = probe.info.kind == TargetKind::Sim;
    let region = size.min(probe.info.size_bytes);
    if region < 1 << 20 {
        return Err(Error::usage(format!(
            "{} holds {} ({} bytes): bench's sequential test needs at least one 1 MiB block; measure a larger target, or use `flashscope io` with a smaller --blocksize",
            args.target,
            format_bytes(region),
            region
        )));
    }
    // Block devices and files the user named hold data: their write tests are preserved
    // (or --destructive). Only a test file bench made itself in a directory is not.
    let holds_data = probe.info.kind != TargetKind::Sim;
    if flags.journal.is_some() && !(holds_data && flags.write && !flags.destructive) {
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
    let runs = args.runs.max(1) as usize;
    let (runtime_ns, ramp_ns) = timing(args, n_tests)?;
    // The write tests go through the write session: on a block device or a file the
    // engine claims each write on the session's stack, so preserve mode saves each region
    // just before its first overwrite (restored and verified at the end) and the budget
    // counts it; a simulated card is written through the stack directly. The session keeps
    // a device open with O_EXCL, so nothing can mount it meanwhile; the engine opens its
    // own descriptors. Only the test file bench made itself in a directory is not guarded.
    let mut session: Option<WriteSession> = None;
    let mut info = probe.info.clone();
    let mut warnings = probe.warnings.clone();
    drop(probe);
    let mut sim_dev = None;
    if writes && !is_dir {
        let mut intent = intent(region, runtime_ns + ramp_ns, args.runs);
        intent.budget_bytes = args.write_budget;
        let s = open_for_write(&target_spec, flags, &intent)?;
        info = s.info.clone();
        warnings = s.warnings.clone();
        session = Some(s);
    } else if simulated {
        sim_dev = Some(target::open(&target_spec, &OpenRequest::read_only())?.backend);
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
    let mut progress = if progress {
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
                    "{} {} ({}/{})",
                    line.label,
                    if dir == Dir::Read { "read" } else { "write" },
                    done + 1,
                    n_tests * runs
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
                let path = Path::new(&target_spec);
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
                if let Some(e) = r.error().filter(|e| crate::backend::is_budget_message(e)) {
                    // Nor is one the write budget cut short.
                    warnings.push(crate::target::write::stopped_early(e));
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
        eprintln!("flashscope bench: stopped by a signal; its test file was removed");
        return Ok(Bench::stopped(crate::signals::exit_code(sig)));
    }
    // Restore and verify (preserve mode) before anything is reported.
    let mut ending = None;
    if let Some(s) = session.as_mut() {
        let (_, mut e) = s.end(Ok(()))?;
        e.test_bytes_written = bytes_written;
        if interrupted && e.interrupted.is_none() {
            e.interrupted = crate::signals::pending().or(Some(libc::SIGINT));
        }
        ending = Some(e);
    }
    progress.finish();
    let find = |m: &str| figures.iter().find(|f| f.metric == m);
    let parameters = BenchParameters {
        size: region,
        runtime_ns_per_test: runtime_ns,
        ramp_ns_per_test: ramp_ns,
        engine: engine.name().to_string(),
        write: writes,
        quick: args.quick,
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
    doc.inferences
        .insert("speed_class".into(), bench::speed_class(find("seq_write")));
    doc.inferences.insert(
        "app_class".into(),
        bench::app_class(find("rand_read"), find("rand_write"), find("seq_write")),
    );
    let classes = bench::class_checks(&figures);
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
    let checks = expects.as_ref().map(|e| evaluate(e, &figures));
    if let (Some(e), Some(c)) = (&expects, &checks) {
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
    let text = render(
        &doc,
        &figures,
        &classes,
        checks.as_deref(),
        failure.as_deref(),
    );
    let mut wear = None;
    let code = if let Some(sig) = ending.as_ref().and_then(|e| e.interrupted) {
        match (&session, &ending) {
            (Some(s), Some(e)) => s.interrupted_exit(e, sig),
            _ => crate::signals::exit_code(sig),
        }
    } else if failure.is_some() {
        EXIT_RUNTIME
    } else if checks.is_some_and(|c| c.iter().any(|r| !r.pass)) {
        EXIT_CHECK_FAILED
    } else {
        EXIT_OK
    };
    if session.is_some() && ending.as_ref().is_some_and(|e| e.interrupted.is_none()) {
        wear = Some(wear_line(&doc));
    }
    let failure = failure.filter(|_| code == EXIT_RUNTIME);
    Ok(Bench {
        outcome: Outcome::new(doc, text, code),
        figures,
        wear,
        failure,
    })
}

impl Bench {
    /// Stopped by a signal before anything could be reported.
    fn stopped(code: i32) -> Self {
        Bench {
            outcome: Outcome::stopped(code),
            figures: Vec::new(),
            wear: None,
            failure: None,
        }
    }
}

fn render(
    doc: &Document,
    figures: &[BenchFigure],
    classes: &[bench::ClassCheck],
    checks: Option<&[bench::ExpectResult]>,
    failure: Option<&str>,
) -> String {
    let mut s = String::new();
    let verdict = |k: &str| {
        doc.inferences
            .get(k)
            .map_or("?".to_string(), |i| match &i.value {
                Some(v) => format!("{} ({})", v.as_str().unwrap_or("?"), i.status_word()),
                None => "inconclusive".to_string(),
            })
    };
    s += &format!(
        "speed class: {}, app class: {}\n\n",
        verdict("speed_class"),
        verdict("app_class")
    );
    let mut t = Table::new(&[
        "test",
        "read MB/s",
        "read IOPS",
        "read p99",
        "write MB/s",
        "write IOPS",
        "write p99",
    ]);
    for line in LINES {
        let cell = |dir: Dir| -> [String; 3] {
            match figures.iter().find(|f| f.metric == line.metric(dir)) {
                Some(f) => [
                    format!("{:.2}", f.bw_bytes / 1e6),
                    match f.per_second_spread {
                        Some(sp) => format!("{:.0} ±{:.0}%", f.iops, sp * 100.0),
                        None => format!("{:.0}", f.iops),
                    },
                    f.p99_ns.map_or("-".into(), |n| format_ns(n as f64)),
                ],
                None => ["-".into(), "-".into(), "-".into()],
            }
        };
        let [a, b, c] = cell(Dir::Read);
        let [d, e, f] = cell(Dir::Write);
        t.row(vec![line.label.to_string(), a, b, c, d, e, f]);
    }
    s += &t.render();
    for k in ["speed_class", "app_class"] {
        if let Some(i) = doc.inferences.get(k) {
            s += &format!("\n{k}: {}", i.evidence);
        }
    }
    s += "\n";
    if !classes.is_empty() {
        let mut t = Table::new(&["class", "result", "margin", "requirement"])
            .align(3, crate::report::table::Align::Left);
        for c in classes {
            t.row(vec![
                c.class.clone(),
                if c.pass { "pass" } else { "fail" }.into(),
                format!("{:+.0} %", c.margin * 100.0),
                c.requirement.clone(),
            ]);
        }
        s += "\n";
        s += &t.render();
    }
    if let Some(c) = checks {
        s += "\n";
        for r in c {
            s += &format!("{} {}\n", if r.pass { "ok  " } else { "FAIL" }, r.message);
        }
    }
    if let Body::Bench(BenchResult {
        runs: Some(runs), ..
    }) = &doc.body
    {
        s += &format!(
            "\neach figure is over {} interleaved runs (each run's figures: --json, runs; compare them with `flashscope compare`)\n",
            runs.len()
        );
    }
    if let Some(e) = failure {
        s += &format!("\nstopped early: {e}\n");
    }
    s
}
