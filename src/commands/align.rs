//! The align test, once for `align`, `auto` and the writing tests that measure their erase
//! block first: open the target read-only, run the align probe with its controller
//! (`analysis::align::decide`), infer, and build the document. It never prints; the text
//! is the output room's (`output::align::render`).

use crate::analysis::align::{self, AlignPoint};
use crate::device::TargetSpec;
use crate::device::{self, OpenRequest, TargetKind};
use crate::probe::align::{self as probe, AlignConfig, AlignRun};
use crate::report::charts;
use crate::report::output_file::OutputFile;
use crate::report::progress::Progress;
use crate::report::results::{AlignParameters, AlignResult, AlignSample};
use crate::report::{Body, Document};
use crate::session::{LivePlan, Notices, Rates};
use crate::vocab::units::{format_bytes, format_ns};
use crate::vocab::{Metric, Warning};
use crate::{Error, Result};
use std::path::Path;

/// More positions per alignment than this only repeat reads: flashbench uses 8.
pub const MAX_POSITIONS: usize = 1024;

/// Distinct positions of every alignment by default: every row must have the same number
/// (see `probe::align`), so an alignment with fewer multiples on the device is not
/// measured; four (k = 1, 5, 7, 11) keep alignments up to a twelfth of the device, each
/// row read twice per round.
pub const DEFAULT_POSITIONS: usize = 4;

/// What `align` measures and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlignParams {
    /// Read sizes; empty: 2, 8 and 32 logical sectors (`probe::align::default_block_sizes`).
    pub block_sizes: Vec<u64>,
    /// Positions per alignment.
    pub positions: usize,
    /// Exactly this many full rounds instead of adaptive repetition.
    pub count: Option<u32>,
    /// Stop repeating after this much device time (virtual on `sim:`).
    pub time_budget_ns: u64,
    /// Whether to read at real-time priority.
    pub priority: Priority,
}

/// The scheduling priority `align` reads at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Priority {
    /// Real-time (SCHED_FIFO 10) where the kernel grants it (root or CAP_SYS_NICE), else
    /// normal priority without a word; never for a `sim:` target, whose virtual clock no
    /// other program can slow.
    #[default]
    Auto,
    /// `--realtime`: as `Auto`, but a refusal is a warning.
    Realtime,
    /// `--no-realtime`: normal priority.
    Normal,
}

impl Default for AlignParams {
    /// `align`'s defaults: the default read sizes, 4 positions, adaptive for up to 60 s.
    fn default() -> Self {
        AlignParams {
            block_sizes: Vec::new(),
            positions: DEFAULT_POSITIONS,
            count: None,
            time_budget_ns: 60_000_000_000,
            priority: Priority::Auto,
        }
    }
}

/// Measure `spec`'s read timings across boundaries and infer its erase block and page: the
/// document (its samples give the boundary costs again, `AlignResult::points`).
///
/// Its plan (issue 45.6, `Document::timing`): one full round at the assumed rates before
/// anything is read, up to the read budget; worked out again from this device's own read
/// times as the first round goes ([`probe::run_planned`]), said on `notices` when it moves
/// by more than the first plan's uncertainty.
pub fn measure(spec: &TargetSpec, params: &AlignParams, notices: &Notices) -> Result<Document> {
    let t0 = crate::backend::monotonic_ns();
    if params.count == Some(0) {
        return Err(Error::usage("--count must be at least 1"));
    }
    if params.positions == 0 || params.positions > MAX_POSITIONS {
        return Err(Error::usage(format!(
            "--positions {}: give 1 to {MAX_POSITIONS} positions per alignment (default {DEFAULT_POSITIONS})",
            params.positions
        )));
    }
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    let mut opened = device::open(spec, &req)?;
    let dev = &mut opened.backend;
    let size = dev.size_bytes();
    let sector = dev.logical_sector_bytes();
    let sizes = if params.block_sizes.is_empty() {
        probe::default_block_sizes(sector)
    } else {
        let mut v = params.block_sizes.clone();
        v.sort_unstable();
        v.dedup();
        v
    };
    probe::validate(size, sector, &sizes)?;
    let flashbench_reads: u64 = sizes
        .iter()
        .map(|&b| probe::flashbench_align_reads(size, b))
        .sum();
    let config = AlignConfig {
        block_sizes: sizes.clone(),
        positions: params.positions,
        count: params.count,
        time_budget_ns: params.time_budget_ns,
        max_reads: flashbench_reads,
    };
    let load_before = crate::workload::sysstat::CpuLoad::now();
    let mut progress = Progress::new("align");
    // Real-time priority keeps other programs from preempting a timed read. It cannot
    // starve the machine: every read of a device waits for its I/O (the thread sleeps, so
    // the CPU is free meanwhile); a target that answers from RAM without sleeping (zram, a
    // file in the page cache) answers the whole read budget in well under a second; the
    // run ends at its read and time budgets; and the kernel's real-time throttling leaves
    // other programs a share of every second. A simulated card runs on a virtual clock
    // that no other program can slow: it keeps normal priority.
    let ask = match params.priority {
        Priority::Normal => false,
        Priority::Realtime => true,
        Priority::Auto => opened.info.kind != TargetKind::Sim,
    };
    let realtime = ask && crate::sys::try_realtime(10);
    // The plan before anything is read: the first round's reads at the assumed rates
    // (nothing measured yet), up to the read budget's (or `count` rounds).
    let assumed = Rates::assumed();
    let cells = probe::plan_cells(size, &config, false);
    let round = probe::round_ns(&cells, &|b| assumed.read_ns(b, 1));
    let rounds = match params.count {
        Some(c) => (c as u64, c as u64),
        None => (
            1,
            flashbench_reads
                .div_ceil(probe::round_reads(&cells).max(1))
                .max(1),
        ),
    };
    let mut live = LivePlan::reads(round * rounds.0, round * rounds.1);
    let run = probe::run_planned(
        dev.as_mut(),
        &config,
        &mut |cells, reads| align::decide(cells, reads, flashbench_reads),
        &mut progress.callback(),
        &mut |ns, at| {
            let said = live.notice("align").is_some();
            live.revise(ns, at);
            if !said {
                if let Some(n) = live.notice("align") {
                    notices.say(n);
                }
            }
        },
    );
    if realtime {
        crate::sys::normal_priority();
    }
    let run = run?;
    progress.finish();
    let points = align::points(&run.cells);
    let mut inf = align::infer(&points);
    let note = device_note(spec, &opened.info);
    if let Some(n) = note.as_ref().filter(|n| n.bounds_steps) {
        // A device without a medium of its own bounds a positive answer too: a step
        // there is the host's.
        align::bound_by_device(&mut inf, &n.words);
    }
    if inf.erase_block_structure.value.is_some() && inf.erase_block_bytes.value.is_none() {
        // No erase block shows: say what the device is, where that explains it.
        if let Some(n) = note {
            let s = &mut inf.erase_block_structure;
            s.evidence = format!("{}; {}", n.words, s.evidence);
        }
    }

    let cached = align::cached_repeats(&run.cells);
    if run.spread || cached.is_some() {
        let how = match cached {
            Some((bs, repeat, first)) => format!(
                "repeated reads are answered by a cache (a repeated {} read took {} against {} for the first access of twice the bytes)",
                format_bytes(bs),
                format_ns(repeat),
                format_ns(first)
            ),
            None => "the first repeats were answered by a read cache (align then read every position once per pass)".to_string(),
        };
        align::cache_may_hide_half(&mut inf, &points, &how);
    }
    if let Some(cached) = cached {
        align::read_cache_caps(&mut inf, cached);
    }
    // The simulated card runs on a virtual clock: other programs cannot slow its reads, so
    // the machine is no cause there (its own stalls are).
    let env = environment(&run, load_before, opened.info.kind == TargetKind::Sim);
    let noisy = crate::analysis::noise::noisy_environment(&env);
    if noisy.is_some() {
        align::busy_machine_caps(&mut inf, align::waited_share(&run.cells));
    }
    let body = AlignResult {
        parameters: AlignParameters {
            block_sizes: sizes,
            positions: params.positions,
            count: params.count,
            time_budget_ns: params.time_budget_ns,
            reads: run.reads,
            flashbench_reads,
            rounds: run.rounds,
            stop_reason: run.stop_reason.clone(),
            io_time_ns: run.io_time_ns,
            device_elapsed_ns: run.elapsed_ns,
            realtime,
            spread_for_read_cache: run.spread,
        },
        samples: samples(&run, &points),
        environment: env,
        steps: inf.steps.clone(),
    };
    let mut doc = Document::for_target(&opened.info, Body::Align(body));
    doc.timing = Some(live.timing(run.elapsed_ns));
    doc.warnings = opened.warnings;
    if params.priority == Priority::Realtime && !realtime {
        doc.warnings.push(Warning::RealtimeRefused);
    }
    if inf.erase_block_bytes.value.is_none()
        && inf.erase_block_structure.status != crate::vocab::Status::Confident
        && run.stop_reason != "confident"
    {
        doc.warnings.push(Warning::AlignUnsettled {
            stop_reason: run.stop_reason.clone(),
            reads: run.reads,
        });
    }
    align::insert_inferences(&mut doc.inferences, &inf);
    for (name, help, i) in [
        (
            "erase_block_bytes",
            "Erase block size inferred from read timings (absent when inconclusive)",
            &inf.erase_block_bytes,
        ),
        (
            "page_bytes",
            "Page size inferred from read timings (absent when inconclusive)",
            &inf.page_bytes,
        ),
    ] {
        if let Some(v) = i.as_u64() {
            doc.metrics.push(Metric::new(name, help, v as f64, &[]));
        }
    }
    doc.warnings.extend(inf.warnings.iter().cloned());
    doc.warnings.extend(noisy);
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    Ok(doc)
}

/// `align` as the command runs it: [`measure`], then the chart of boundary cost against
/// alignment written to `plot` (created before anything is read).
pub fn run(
    spec: &TargetSpec,
    params: &AlignParams,
    plot: Option<&Path>,
    notices: &Notices,
) -> Result<Document> {
    let plot = OutputFile::create_opt("--plot", plot)?;
    let doc = measure(spec, params, notices)?;
    if let (Some(file), Body::Align(a)) = (&plot, &doc.body) {
        let svg = charts::align(&a.points(), &doc.inferences, &format!("align: {spec}")).to_svg();
        file.write(svg.as_bytes())?;
    }
    Ok(doc)
}

/// What the target is, where that explains reads without erase blocks: a virtual block
/// device or an NVMe SSD (`health::geometry_note`), or a file (in RAM on a memory
/// filesystem). `None` for a simulated card and any other device. A file on a kernel
/// filesystem bounds what may be named (`GeometryNote::bounds_steps`): the filesystem
/// places its bytes, so a step at a file offset is not a boundary of a medium at that
/// offset; a file on FUSE does not (the program serving it decides, e.g. `sim serve`).
fn device_note(
    spec: &TargetSpec,
    info: &crate::device::TargetInfo,
) -> Option<crate::health::GeometryNote> {
    match info.kind {
        TargetKind::Block => crate::health::geometry_note(spec),
        TargetKind::File => Some(crate::health::GeometryNote {
            words: match &info.filesystem {
                Some(fs) => format!(
                    "the target is a file on {}: reads go through that filesystem and the page cache, not straight to a flash medium",
                    crate::input::printable(fs)
                ),
                None => "the target is a file: reads go through its filesystem and the page cache, not straight to a flash medium".to_string(),
            },
            bounds_steps: info.filesystem.as_deref().is_some_and(|fs| fs != "fuse"),
        }),
        _ => None,
    }
}

/// The machine's load over the run and the stalls the reads themselves show.
fn environment(
    run: &AlignRun,
    before: Option<crate::workload::sysstat::CpuLoad>,
    sim: bool,
) -> crate::analysis::noise::Environment {
    let after = crate::workload::sysstat::CpuLoad::now();
    let st = align::stall_stats(&run.cells);
    crate::analysis::noise::Environment {
        stalled_reads: st.stalled,
        reads: st.reads,
        worst_stall_ns: st.worst_extra_ns,
        ..crate::workload::sysstat::CpuLoad::machine(before, after, sim)
    }
}

fn samples(run: &AlignRun, points: &[AlignPoint]) -> Vec<AlignSample> {
    run.cells
        .iter()
        .filter(|c| !c.reads.is_empty())
        .map(|c| {
            let (pre, on, post) = c.flashbench_times();
            let p = points
                .iter()
                .find(|p| p.block_bytes == c.block_bytes && p.align_bytes == c.align_bytes);
            AlignSample {
                block_bytes: c.block_bytes,
                align_bytes: c.align_bytes,
                pre_ns: pre.round() as i64,
                on_ns: on.round() as i64,
                post_ns: post.round() as i64,
                diff_ns: p.map(|p| p.diff_ns.round() as i64),
                diff_se_ns: p.map(|p| p.se_ns.round() as i64),
                positions: c.positions.clone(),
                reads: c.reads.clone(),
                first_reads: c.first.clone(),
            }
        })
        .collect()
}
