//! `flashscope align TARGET`: find the erase block and page size from read timings.

use super::{Outcome, Output};
use crate::analysis::align::{self, AlignInference, AlignPoint};
use crate::error::EXIT_OK;
use crate::probe::align::{self as probe, AlignConfig, AlignRun};
use crate::report::charts;
use crate::report::progress::Progress;
use crate::report::results::{AlignParameters, AlignResult, AlignSample};
use crate::report::table::Table;
use crate::report::{Body, Document, Metric, Warning};
use crate::target::{self, OpenRequest};
use crate::units::{format_bytes, format_ns, parse_duration_ns, parse_size};
use crate::{Error, Result};
use std::collections::BTreeMap;

/// Arguments of `align`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope align sim:sd-16g\n  flashscope align /dev/mmcblk0 --plot align.svg\n  flashscope align sim:usb-32g --blocksize 4K --count 4 --json\n  flashscope align /dev/mmcblk0 --realtime\n\nRead-only. Reads a block just before, across and just after every multiple of each\nalignment (2^n and 3 × 2^n) and repeats where the answer is still in doubt, until it is\nconfident or the time budget ends. Each alignment is read at least 8 times and stands for\nits fast reads, so a busy machine (late reads) makes answers inconclusive, not wrong; a\nnoisy_environment warning names the cause (load, steal time, stalled reads)."
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Read size; repeat for several (default: 2, 8 and 32 logical sectors, i.e. 1K, 4K, 16K).
    #[arg(long = "blocksize", short = 'b', value_name = "SIZE", value_parser = crate::units::size_arg)]
    pub blocksize: Vec<String>,
    /// Stop repeating after this long (device time; virtual for sim:).
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = crate::units::duration_arg)]
    pub time_budget: String,
    /// Exactly N full rounds instead of adaptive repetition (each round reads every
    /// alignment at least 8 times: fewer positions are repeated).
    #[arg(long, value_name = "N")]
    pub count: Option<u32>,
    /// Positions per alignment.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub positions: usize,
    /// Write an SVG plot of boundary cost against alignment.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<String>,
    /// Read at real-time priority (SCHED_FIFO 10, as flashbench does), so other programs
    /// do not preempt a timed read; needs root or CAP_SYS_NICE (refused: a warning, and
    /// the run goes on at normal priority).
    #[arg(long)]
    pub realtime: bool,
}

/// Parse `--blocksize` values, or the default sweep for this sector size.
pub fn block_sizes(given: &[String], sector: u32) -> Result<Vec<u64>> {
    if given.is_empty() {
        return Ok(probe::default_block_sizes(sector));
    }
    let mut v = Vec::new();
    for g in given {
        v.push(parse_size(g)?);
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<i32> {
    execute(args)?.emit(out)
}

/// More positions per alignment than this only repeat reads: flashbench uses 8.
const MAX_POSITIONS: usize = 1024;

/// Measure and infer without printing (shared with `auto`).
pub fn execute(args: &Args) -> Result<Outcome> {
    let t0 = crate::backend::monotonic_ns();
    if args.count == Some(0) {
        return Err(Error::usage("--count must be at least 1"));
    }
    if args.positions == 0 || args.positions > MAX_POSITIONS {
        return Err(Error::usage(format!(
            "--positions {}: give 1 to {MAX_POSITIONS} positions per alignment (default 8)",
            args.positions
        )));
    }
    let budget = parse_duration_ns(&args.time_budget)?;
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    let mut opened = target::open(&args.target, &req)?;
    let dev = &mut opened.backend;
    let size = dev.size_bytes();
    let sizes = block_sizes(&args.blocksize, dev.logical_sector_bytes())?;
    probe::validate(size, dev.logical_sector_bytes(), &sizes)?;
    let flashbench_reads: u64 = sizes
        .iter()
        .map(|&b| probe::flashbench_align_reads(size, b))
        .sum();
    let config = AlignConfig {
        block_sizes: sizes.clone(),
        positions: args.positions,
        count: args.count,
        time_budget_ns: budget,
        max_reads: flashbench_reads,
    };
    let load_before = crate::workload::sysstat::CpuLoad::now();
    let mut progress = Progress::new("align");
    let realtime = args.realtime && crate::sys::try_realtime(10);
    let run = probe::run(
        dev.as_mut(),
        &config,
        &mut |cells, reads| align::decide(cells, reads, flashbench_reads),
        &mut progress.callback(),
    );
    if realtime {
        crate::sys::normal_priority();
    }
    let run = run?;
    progress.finish();
    let points = align::points(&run.cells);
    let inf = align::infer(&points);

    let mut env = environment(&run, load_before);
    if opened.info.kind == crate::target::TargetKind::Sim {
        // The simulated card runs on a virtual clock: other programs cannot slow its
        // reads, so the machine's load and steal time are no cause (its own stalls are).
        env.load1 = 0.0;
        env.steal = 0.0;
    }
    let noisy = align::noisy_environment(&env);
    let body = AlignResult {
        parameters: AlignParameters {
            block_sizes: sizes.clone(),
            positions: args.positions,
            count: args.count,
            time_budget_ns: budget,
            reads: run.reads,
            flashbench_reads,
            rounds: run.rounds,
            stop_reason: run.stop_reason.clone(),
            io_time_ns: run.io_time_ns,
            device_elapsed_ns: run.elapsed_ns,
            realtime,
        },
        samples: samples(&run, &points),
        environment: env,
        steps: inf.steps.clone(),
    };
    let mut doc = Document::for_target(&opened.info, Body::Align(body));
    doc.warnings = opened.warnings;
    if args.realtime && !realtime {
        doc.warnings.push(Warning::RealtimeRefused);
    }
    if inf.erase_block_bytes.value.is_none() && run.stop_reason != "confident" {
        doc.warnings.push(Warning::AlignUnsettled {
            stop_reason: run.stop_reason.clone(),
            reads: run.reads,
        });
    }
    insert_inferences(&mut doc.inferences, &inf);
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
    if let Some(path) = &args.plot {
        let svg =
            charts::align(&points, &doc.inferences, &format!("align: {}", args.target)).to_svg();
        std::fs::write(path, svg).map_err(|e| Error::io(format!("writing plot {path}"), e))?;
    }
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    let text = render(&points, &inf, &run, flashbench_reads);
    Ok(Outcome::new(doc, text, EXIT_OK))
}

/// The machine's load over the run and the stalls the reads themselves show.
fn environment(
    run: &AlignRun,
    before: Option<crate::workload::sysstat::CpuLoad>,
) -> align::Environment {
    let after = crate::workload::sysstat::CpuLoad::now();
    let st = align::stall_stats(&run.cells);
    align::Environment {
        load1: after.map_or(0.0, |a| a.load1),
        cpus: after.map_or(0, |a| a.cpus),
        steal: match (before, after) {
            (Some(b), Some(a)) => b.steal_since(&a),
            _ => 0.0,
        },
        stalled_reads: st.stalled,
        reads: st.reads,
        worst_stall_ns: st.worst_extra_ns,
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
            }
        })
        .collect()
}

/// Put the geometry inferences into a document's map (shared with `analyze`).
pub fn insert_inferences(
    map: &mut BTreeMap<String, crate::report::Inference>,
    inf: &AlignInference,
) {
    map.insert("erase_block_bytes".into(), inf.erase_block_bytes.clone());
    map.insert("page_bytes".into(), inf.page_bytes.clone());
    if let Some(m) = &inf.multi_plane_bytes {
        map.insert("multi_plane_bytes".into(), m.clone());
    }
}

/// The diff table: one row per alignment, one column per block size (shared with `analyze`).
pub fn table(points: &[AlignPoint]) -> String {
    let mut sizes: Vec<u64> = points.iter().map(|p| p.block_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut aligns: Vec<u64> = points.iter().map(|p| p.align_bytes).collect();
    aligns.sort_unstable();
    aligns.dedup();
    let header: Vec<String> = std::iter::once("alignment".to_string())
        .chain(
            sizes
                .iter()
                .map(|b| format!("diff, {} reads", format_bytes(*b))),
        )
        .collect();
    let hdr: Vec<&str> = header.iter().map(|s| s.as_str()).collect();
    let mut t = Table::new(&hdr);
    for a in aligns.iter().rev() {
        let mut row = vec![format_bytes(*a)];
        for b in &sizes {
            row.push(
                match points
                    .iter()
                    .find(|p| p.block_bytes == *b && p.align_bytes == *a)
                {
                    Some(p) if p.se_ns > 0.0 => {
                        format!("{} ± {}", format_ns(p.diff_ns), format_ns(p.se_ns))
                    }
                    Some(p) => format_ns(p.diff_ns),
                    None => String::new(),
                },
            );
        }
        t.row(row);
    }
    t.render()
}

/// Evidence lines under the table (shared with `analyze`).
pub fn evidence_lines(inf: &AlignInference) -> String {
    let mut s = String::new();
    let mut line = |what: &str, i: &crate::report::Inference| {
        let v = i
            .as_u64()
            .map(format_bytes)
            .unwrap_or_else(|| "?".to_string());
        s.push_str(&format!(
            "{what}: {v} ({}, {:.2}): {}\n",
            i.status_word(),
            i.confidence,
            i.evidence
        ));
    };
    line("erase block", &inf.erase_block_bytes);
    line("page", &inf.page_bytes);
    if let Some(m) = &inf.multi_plane_bytes {
        line("multi-plane", m);
    }
    s
}

fn render(points: &[AlignPoint], inf: &AlignInference, run: &AlignRun, fb: u64) -> String {
    format!(
        "{}\n\nBoundary cost (on − (pre + post)/2; higher means the read straddled a boundary):\n{}\n{}reads: {}, rounds: {}, stopped: {}; flashbench -a would do {} reads for these block sizes; time in reads {}\n",
        inf.summary,
        table(points),
        evidence_lines(inf),
        run.reads,
        run.rounds,
        run.stop_reason,
        fb,
        format_ns(run.io_time_ns as f64),
    )
}
