//! Geometry discovery: the align probe + inference on simulated cards (property sweep over
//! random geometries), golden tests on public flashbench logs, and end-to-end tests.

use crate::common;
use common::{flashscope, json, Loop};
use flashscope::analysis::align::{self, AlignInference};
use flashscope::backend::sim::{SimConfig, SimDevice};
use flashscope::backend::Backend;
use flashscope::probe::align::{self as probe, AlignConfig, Next};
use rand::{Rng, SeedableRng};

static INFER_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
const K: u64 = 1024;
const M: u64 = 1024 * 1024;

/// The sweep's configuration: flashbench's read count as the budget, the default positions.
fn sweep_config(size: u64, block_sizes: &[u64]) -> (AlignConfig, u64) {
    let max_reads: u64 = block_sizes
        .iter()
        .map(|&b| probe::flashbench_align_reads(size, b))
        .sum();
    let config = AlignConfig {
        block_sizes: block_sizes.to_vec(),
        positions: flashscope::commands::align::DEFAULT_POSITIONS,
        count: None,
        time_budget_ns: 60_000_000_000,
        max_reads,
    };
    (config, max_reads)
}

/// Run the adaptive align sweep on a simulated device and infer.
fn sweep(spec: &str, block_sizes: &[u64]) -> (AlignInference, probe::AlignRun, u64) {
    let cfg = SimConfig::parse(spec).unwrap();
    let mut dev = SimDevice::new(cfg);
    let size = dev.size_bytes();
    let (config, max_reads) = sweep_config(size, block_sizes);
    let mut next = |cells: &[probe::AlignCell], reads: u64| {
        INFER_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pts = align::points(cells);
        let inf = align::infer(&pts);
        match align::next_round(&inf, &pts, reads, max_reads) {
            None => Next::Stop,

            Some(f) => Next::Focus(f),
        }
    };
    let run = probe::run(&mut dev, &config, &mut next, &mut |_, _| {}).unwrap();
    let inf = align::infer(&align::points(&run.cells));
    (inf, run, max_reads)
}

fn pick<T: Copy>(rng: &mut impl Rng, v: &[T]) -> T {
    // Drawn as u64, not usize: rand samples usize ranges differently on 32-bit targets,
    // and every architecture must test the same geometries (CI runs this on armv7 too).
    v[rng.gen_range(0..v.len() as u64) as usize]
}

#[test]
fn random_geometries_are_right_or_inconclusive_never_confidently_wrong() {
    // A fixed seed keeps CI reproducible; GEOMETRY_SWEEP_SEED explores other draws.
    let sweep_seed = std::env::var("GEOMETRY_SWEEP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261122u64);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(sweep_seed);
    let erases: Vec<u64> = vec![
        512 * K,
        768 * K,
        M,
        3 * M / 2,
        2 * M,
        3 * M,
        4 * M,
        6 * M,
        8 * M,
        12 * M,
        16 * M,
        24 * M,
        32 * M,
        48 * M,
        64 * M,
    ];
    let pages: Vec<u64> = vec![
        2 * K,
        3 * K,
        4 * K,
        6 * K,
        8 * K,
        12 * K,
        16 * K,
        24 * K,
        32 * K,
        48 * K,
    ];
    let cases: usize = 200;
    let mut tentative_wrong = 0;
    let (mut right, mut inconclusive, mut wrong, mut eligible, mut eligible_right) =
        (0, 0, 0, 0, 0);
    let mut page_right = 0;
    let mut page_wrong = 0;
    let mut failures = Vec::new();
    let t0 = std::time::Instant::now();
    // Draw every case first (deterministic), then run them on two threads.
    let mut specs = Vec::new();
    for _ in 0..cases {
        let erase = pick(&mut rng, &erases);
        let page = loop {
            let p = pick(&mut rng, &pages);
            if erase % p == 0 {
                break p;
            }
        };
        let size = (erase * 64).max(1 << 30);
        let noise: f64 = rng.gen_range(0.0..0.2);
        // Base read time for 1 KiB: cmd 650 µs + 1 KiB at 22 MiB/s ≈ 694 µs.
        let base = 694_000.0;
        let erase_frac: f64 = if rng.gen_bool(0.15) {
            rng.gen_range(0.0..0.05)
        } else {
            rng.gen_range(0.05..0.5)
        };
        let page_frac: f64 = if rng.gen_bool(0.2) {
            rng.gen_range(0.0..0.03)
        } else {
            rng.gen_range(0.03..0.2)
        };
        let ec = (erase_frac * base) as u64;
        let pc = (page_frac * base) as u64;
        let seed: u64 = rng.gen();
        let spec = format!(
            "custom,size={size},erase={erase},page={page},page_cost={pc}ns,erase_cost={ec}ns,noise={noise:.3},seed={seed}"
        );
        specs.push((spec, erase, page, erase_frac));
    }
    let results: Vec<(AlignInference, u64, u64)> = {
        let chunks: Vec<&[(String, u64, u64, f64)]> = specs.chunks(cases.div_ceil(2)).collect();
        std::thread::scope(|sc| {
            let handles: Vec<_> = chunks
                .iter()
                .map(|chunk| {
                    sc.spawn(move || {
                        chunk
                            .iter()
                            .map(|(spec, ..)| {
                                let (inf, run, max_reads) = sweep(spec, &[1024, 4096, 16384]);
                                (inf, run.reads, max_reads)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        })
    };
    for (case, ((spec, erase, page, erase_frac), (inf, reads, max_reads))) in
        specs.iter().zip(results).enumerate()
    {
        let (erase, page, erase_frac) = (*erase, *page, *erase_frac);
        // The budget counts timed reads; the first accesses (one in four reads) come on top.
        assert!(
            reads / 4 * 3 <= max_reads,
            "{spec}: {reads} reads > {max_reads} timed"
        );
        let got = inf.erase_block_bytes.as_u64();
        let confident = inf.erase_block_bytes.status_word() == "confident";
        match got {
            Some(v) if v == erase => right += 1,
            Some(_) if confident => {
                wrong += 1;
                failures.push(format!("case {case}: {spec} → {:?}", inf.erase_block_bytes));
            }
            Some(_) => tentative_wrong += 1,
            None => inconclusive += 1,
        }
        if erase_frac >= 0.05 {
            eligible += 1;
            if got == Some(erase) {
                eligible_right += 1;
            } else {
                eprintln!(
                    "miss case {case}: {spec} → {} ({} reads)",
                    inf.summary(),
                    reads
                );
            }
        }
        if erase_frac >= 0.05
            && inf.erase_block_structure.status_word() == "confident"
            && inf
                .erase_block_structure
                .value
                .as_ref()
                .and_then(|v| v.as_str())
                == Some(align::NONE_VISIBLE)
        {
            failures.push(format!(
                "case {case}: {spec} → no erase-block structure visible: {:?}",
                inf.erase_block_structure
            ));
        }
        match inf.page_bytes.as_u64() {
            Some(v) if v == page => page_right += 1,
            Some(_) if inf.page_bytes.status_word() == "confident" => {
                page_wrong += 1;
                failures.push(format!("case {case}: {spec} → page {:?}", inf.page_bytes));
            }
            _ => {}
        }
    }
    eprintln!(
        "align property sweep: {cases} cases, erase right {right}, inconclusive {inconclusive}, tentative wrong {tentative_wrong}, confident wrong {wrong}; erase_cost >= 5%: {eligible_right}/{eligible} right; page right {page_right}, page confident wrong {page_wrong}; {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    eprintln!(
        "inference calls: {}",
        INFER_CALLS.load(std::sync::atomic::Ordering::Relaxed)
    );
    assert!(
        failures.is_empty(),
        "confident wrong answers:\n{}",
        failures.join("\n")
    );
    assert!(
        eligible_right as f64 >= 0.95 * eligible as f64,
        "only {eligible_right} of {eligible} right where erase_cost >= 5%"
    );
}

/// Issue 43, the reverted merge (72e99f2): on a 12 MiB / 12 KiB card with 16 % noise the
/// read-cache filter took the 16 KiB reads that noise put below its hit limit (half the
/// command time and the transfer) for cache hits, left their repetitions out and made the
/// erase block inconclusive; the property sweep (seed 20261122, case 121) fell to 163 of
/// 172. There is no cache: the block size's repeats fall below the limit no more often
/// than its first accesses do, nothing is left out, and the erase block is found.
#[test]
fn noisy_medium_reads_are_no_cache_hits() {
    let spec = "custom,size=1073741824,erase=12582912,page=12288,page_cost=118385ns,erase_cost=323632ns,noise=0.156,seed=11893566805174270253";
    let (inf, _, _) = sweep(spec, &[1024, 4096, 16384]);
    assert_eq!(
        inf.erase_block_bytes.as_u64(),
        Some(12 * M),
        "{spec}: {}",
        inf.summary()
    );
}

/// A busy host around a simulated card: during bursts (another process holding the CPU,
/// interrupts, a flush), every read is late by 50 µs to `max_ns`, so the delays come in
/// runs — all the on-reads of a cell can be hit at once, unlike the card's own outliers.
struct BusyHost {
    dev: SimDevice,
    rng: rand_pcg::Pcg64,
    /// Burst every `period_ns` of device time, lasting `burst_ns`.
    period_ns: u64,
    burst_ns: u64,
    max_ns: u64,
    /// Also one 7 ms stall on this read offset, the first time it is read.
    stall_at: Option<u64>,
}

impl Backend for BusyHost {
    fn size_bytes(&self) -> u64 {
        self.dev.size_bytes()
    }
    fn logical_sector_bytes(&self) -> u32 {
        self.dev.logical_sector_bytes()
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.dev.read_at(buf, offset)?;
        let t = self.dev.clock_ns();
        if t % self.period_ns < self.burst_ns {
            let extra = self.rng.gen_range(50_000..self.max_ns);
            self.dev.idle(extra);
        }
        if self.stall_at == Some(offset) {
            self.stall_at = None;
            self.dev.idle(7_000_000);
        }
        Ok(())
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        self.dev.write_at(buf, offset)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.dev.flush()
    }
    fn clock_ns(&self) -> u64 {
        self.dev.clock_ns()
    }
    fn idle(&mut self, ns: u64) {
        self.dev.idle(ns)
    }
}

/// The adaptive sweep on any backend (as `sweep`, for wrapped devices).
fn sweep_on(dev: &mut dyn Backend, block_sizes: &[u64]) -> AlignInference {
    let size = dev.size_bytes();
    let (config, max_reads) = sweep_config(size, block_sizes);
    let mut next = |cells: &[probe::AlignCell], reads: u64| {
        let pts = align::points(cells);
        match align::next_round(&align::infer(&pts), &pts, reads, max_reads) {
            None => Next::Stop,
            Some(f) => Next::Focus(f),
        }
    };
    let run = probe::run(dev, &config, &mut next, &mut |_, _| {}).unwrap();
    align::infer(&align::points(&run.cells))
}

/// The issue 18 card (2 GiB, 8 MiB erase block, 16 KiB page) on a busy host: bursts of
/// late reads of up to 2 ms and one 7 ms stall on the 512 MiB on-read. Never a confident
/// wrong answer; right in most runs.
#[test]
fn a_busy_host_with_bursts_of_late_reads_gives_no_confident_wrong_answer() {
    let mut right = 0;
    let mut failures = Vec::new();
    let runs = 24;
    for seed in 0..runs {
        let spec = format!(
            "custom,size=2G,erase=8M,page=16K,cmd=100us,read_bw=100M,page_cost=60us,erase_cost=150us,noise=0.02,outliers=0,seed={seed}"
        );
        let mut host = BusyHost {
            dev: SimDevice::new(SimConfig::parse(&spec).unwrap()),
            rng: rand_pcg::Pcg64::seed_from_u64(seed),
            period_ns: 40_000_000,
            burst_ns: 8_000_000 + seed * 1_000_000,
            max_ns: 3_000_000,
            stall_at: Some((512 << 20) - 512),
        };
        let inf = sweep_on(&mut host, &[1024]);
        for (what, i, want) in [
            ("erase", &inf.erase_block_bytes, 8 * M),
            ("page", &inf.page_bytes, 16 * K),
        ] {
            if i.status_word() == "confident" && i.as_u64() != Some(want) {
                failures.push(format!("seed {seed}: {what} {:?}", i));
            }
        }
        if inf.erase_block_bytes.as_u64() == Some(8 * M) {
            right += 1;
        }
    }
    eprintln!(
        "busy host: {runs} runs, erase right {right}, confident wrong {}",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(right * 4 >= runs * 3, "only {right} of {runs} right");
}

/// Heavy-tailed stalls, as a busy machine gives them (preemption, interrupts, a read behind
/// a flush): up to 5 % of reads 0.5–20 ms late. The answer must be right or inconclusive,
/// never confidently wrong, and right in most cases with a clear step.
#[test]
fn heavy_tailed_stalls_are_right_or_inconclusive_never_confidently_wrong() {
    let sweep_seed = std::env::var("GEOMETRY_SWEEP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261125u64);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(sweep_seed);
    let erases = [
        M,
        3 * M / 2,
        2 * M,
        4 * M,
        6 * M,
        8 * M,
        12 * M,
        16 * M,
        24 * M,
    ];
    let pages = [4 * K, 8 * K, 12 * K, 16 * K, 24 * K, 32 * K];
    let mut specs = Vec::new();
    for _ in 0..80 {
        let erase = pick(&mut rng, &erases);
        let page = loop {
            let p = pick(&mut rng, &pages);
            if erase % p == 0 {
                break p;
            }
        };
        let size = (erase * 64).max(1 << 30);
        let noise: f64 = rng.gen_range(0.0..0.15);
        let outliers: f64 = rng.gen_range(0.005..0.05);
        // From clear (300 µs on a 694 µs read) down to 3 % of a read.
        let ec = rng.gen_range(20_000..300_000u64);
        let pc = rng.gen_range(10_000..100_000u64);
        let seed: u64 = rng.gen();
        specs.push((
            format!(
                "custom,size={size},erase={erase},page={page},page_cost={pc}ns,erase_cost={ec}ns,noise={noise:.3},outliers={outliers:.3},outlier_max=20ms,seed={seed}"
            ),
            erase,
            page,
        ));
    }
    let results: Vec<AlignInference> = std::thread::scope(|sc| {
        let handles: Vec<_> = specs
            .chunks(specs.len().div_ceil(2))
            .map(|chunk| {
                sc.spawn(move || {
                    chunk
                        .iter()
                        .map(|(spec, ..)| sweep(spec, &[1024, 4096, 16384]).0)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let (mut right, mut inconclusive, mut page_right) = (0, 0, 0);
    let mut failures = Vec::new();
    for ((spec, erase, page), inf) in specs.iter().zip(&results) {
        for (what, i, want) in [
            ("erase", &inf.erase_block_bytes, *erase),
            ("page", &inf.page_bytes, *page),
        ] {
            if i.status_word() == "confident" && i.as_u64() != Some(want) {
                failures.push(format!("{spec}: {what} {:?}", i));
            }
        }
        match inf.erase_block_bytes.as_u64() {
            Some(v) if v == *erase => right += 1,
            None => inconclusive += 1,
            _ => {}
        }
        if inf.page_bytes.as_u64() == Some(*page) {
            page_right += 1;
        }
    }
    eprintln!(
        "heavy-tailed stalls: {} cases, erase right {right}, inconclusive {inconclusive}, page right {page_right}, confident wrong {}",
        specs.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "confident wrong answers:\n{}",
        failures.join("\n")
    );
    assert!(
        right * 10 >= specs.len() * 8,
        "only {right} of {} erase blocks right",
        specs.len()
    );
}

/// Issue 43: a 6 MiB / 12 KiB card's page came out "unclear: block sizes disagree … with
/// 16 KiB reads" in 5 of 6 runs. A 16 KiB read spans two 12 KiB pages before, across and
/// after a 12 KiB boundary alike, so it cannot show that page; only the block sizes that
/// can show a boundary vote on it.
#[test]
fn a_block_size_that_cannot_see_a_page_does_not_vote_against_it() {
    let (mut right, mut wrong) = (0, Vec::new());
    for seed in 1..=6 {
        let spec = format!("custom,size=2G,erase=6M,page=12K,seed={seed}");
        let (inf, ..) = sweep(&spec, &[1024, 4096, 16384]);
        let page = &inf.page_bytes;
        eprintln!("{spec}: {} | {}", inf.summary(), page.evidence);
        match page.as_u64() {
            Some(v) if v == 12 * K => right += 1,
            Some(_) if page.status_word() == "confident" => wrong.push(format!("{spec}: {page:?}")),
            _ => {}
        }
        assert!(!page.evidence.contains("disagree"), "{spec}: {page:?}");
        assert_eq!(
            inf.erase_block_bytes.as_u64(),
            Some(6 * M),
            "{spec}: {inf:?}"
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(right >= 5, "page right in {right} of 6");
}

#[test]
fn ssd_like_device_without_geometry_signal_is_inconclusive() {
    let (inf, run, max_reads) = sweep("ssd-256g,size=4G", &[1024, 4096, 16384]);
    assert!(
        inf.erase_block_bytes.value.is_none(),
        "{:?}",
        inf.erase_block_bytes
    );
    assert!(inf.page_bytes.value.is_none(), "{:?}", inf.page_bytes);
    assert!(
        inf.erase_block_bytes.evidence.contains("no step"),
        "{}",
        inf.erase_block_bytes.evidence
    );
    assert!(run.reads / 4 * 3 <= max_reads);
}

/// Issue 33 negative control: a device with no geometry, whose controller answers repeat
/// reads from a read cache, reads ahead and wakes slowly (`nogeo-1g`, as zram and loops over
/// tmpfs behave). The old read pattern named an erase block here; now no erase block, page
/// or multi-plane unit may be named with confidence, and over the seeds the answer is "no
/// erase-block structure visible".
#[test]
fn a_device_with_read_caches_and_no_geometry_names_no_erase_block_or_page() {
    let (mut none_visible, mut cache_named, mut wrong, mut other) = (0, 0, Vec::new(), Vec::new());
    let runs = 12;
    for seed in 0..runs {
        for (spec, bs) in [
            (
                format!("nogeo-1g,seed={seed},noise=0.05"),
                vec![1024, 4096, 16384],
            ),
            (
                format!("nogeo-1g,seed={seed},sector=4096,read_cache=8M,prefetch=64K"),
                vec![8192, 32768, 131072],
            ),
        ] {
            let (mut inf, run, max_reads) = sweep(&spec, &bs);
            assert!(run.reads / 4 * 3 <= max_reads);
            // As `align` answers (commands/align.rs): repeats a cache answered are named.
            if let Some(cached) = align::cached_repeats(&run.cells) {
                align::read_cache_caps(&mut inf, cached);
            }
            for (what, i) in [
                ("erase", Some(&inf.erase_block_bytes)),
                ("page", Some(&inf.page_bytes)),
                ("multi-plane", inf.multi_plane_bytes.as_ref()),
            ] {
                if let Some(i) = i.filter(|i| i.value.is_some() && i.status_word() == "confident") {
                    wrong.push(format!("{spec}: {what} {i:?}"));
                }
            }
            // The honest negatives: "none visible" where the reads reached the medium, or
            // inconclusive naming the cache that answered them (issue 43.1: never "none
            // visible" through a cache, never a structure blamed on the machine).
            let st = &inf.erase_block_structure;
            let named = st.value.is_none() && st.evidence.contains("answered by a cache");
            if st.value.as_ref().and_then(|v| v.as_str()) == Some(align::NONE_VISIBLE) {
                none_visible += 1;
            } else if named {
                cache_named += 1;
            } else {
                other.push(format!("{spec}: {st:?}"));
            }
        }
    }
    eprintln!(
        "no geometry, read caches: {} runs, confidently wrong {}, none visible {none_visible}, \
         the cache named {cache_named}, other {}",
        2 * runs,
        wrong.len(),
        other.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(other.is_empty(), "{}", other.join("\n"));
}

/// A card with a controller read cache (issue 43.1): read cell by cell, every repeat of a
/// visit's few neighbourhoods was a hit, no boundary cost showed, and the answer was
/// inconclusive (or, before the cache was seen, "none visible", confident). Once the first
/// repeats show the cache, align reads spread over all cells, so caches up to 256 KiB are
/// seen through (erase block right in at least 8 of 10 runs per size and read-ahead);
/// larger ones may stay inconclusive but name the cache; nothing is ever confidently
/// wrong and "none visible" is never said.
#[test]
fn a_card_with_a_read_cache_gets_its_erase_block_or_names_the_cache() {
    let mut wrong = Vec::new();
    let mut counts = Vec::new();
    for (cache, prefetch, seeds, floor) in [
        ("4KiB", "0", 10, 8),
        ("4KiB", "64KiB", 10, 8),
        ("16KiB", "0", 10, 8),
        ("16KiB", "64KiB", 10, 8),
        ("64KiB", "0", 10, 8),
        ("64KiB", "64KiB", 10, 8),
        ("256KiB", "0", 10, 8),
        ("256KiB", "64KiB", 10, 8),
        ("1MiB", "0", 5, 0),
        ("1MiB", "64KiB", 5, 0),
        ("4MiB", "0", 5, 0),
        ("4MiB", "64KiB", 5, 0),
    ] {
        let mut right = 0;
        for seed in 1..=seeds {
            let spec = format!(
                "sim:custom,size=2G,erase=4M,page=16K,read_cache={cache},prefetch={prefetch},read_hit=20us,wake=50us,seed={seed}"
            );
            let doc = json(&["align", &spec]);
            let inf = &doc["inferences"];
            let (erase, structure, page) = (
                &inf["erase_block_bytes"],
                &inf["erase_block_structure"],
                &inf["page_bytes"],
            );
            let confident = |i: &serde_json::Value| i["status"] == "confident";
            if erase["value"] == 4 * M {
                right += 1;
            } else {
                if erase["value"].is_u64() && confident(erase) {
                    wrong.push(format!("{spec}: erase {erase}"));
                }
                if structure["value"] == align::NONE_VISIBLE {
                    wrong.push(format!("{spec}: {structure}"));
                } else if erase["value"].is_null()
                    && !structure["evidence"]
                        .as_str()
                        .unwrap_or("")
                        .contains("cache")
                {
                    wrong.push(format!("{spec}: the cache is not named: {structure}"));
                }
            }
            if page["value"].is_u64() && page["value"] != 16 * K && confident(page) {
                wrong.push(format!("{spec}: page {page}"));
            }
        }
        counts.push(format!("{cache}/{prefetch}: {right}/{seeds}"));
        if right < floor {
            wrong.push(format!(
                "read_cache={cache},prefetch={prefetch}: erase block right in only {right} of {seeds}"
            ));
        }
    }
    eprintln!("read caches, erase block right: {}", counts.join(", "));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The same through the binary: `align` says so in text and JSON, and `auto` gives no
/// geometry-based mkfs line. With its read cache on (the preset's), the repeats are the
/// cache's and the answer names it (issue 43.1); with the cache off, "none visible".
#[test]
fn e2e_align_and_auto_on_a_device_without_geometry_say_none_visible() {
    let v = json(&["align", "sim:nogeo-1g"]);
    let st = &v["inferences"]["erase_block_structure"];
    assert!(st["value"].is_null(), "{st}");
    assert!(
        st["evidence"]
            .as_str()
            .unwrap()
            .contains("answered by a cache"),
        "{st}"
    );
    assert!(v["inferences"]["erase_block_bytes"]["value"].is_null());
    let v = json(&["align", "sim:nogeo-1g,read_cache=0"]);
    let st = &v["inferences"]["erase_block_structure"];
    assert_eq!(st["value"], "none visible", "{st}");
    assert!(v["inferences"]["erase_block_bytes"]["value"].is_null());
    let text = flashscope()
        .args(["align", "sim:nogeo-1g,read_cache=0"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.starts_with("no erase-block structure visible"),
        "{text}"
    );
    let a = json(&["auto", "sim:nogeo-1g"]);
    assert!(a["inferences"]["erase_block_bytes"]["value"].is_null());
    for adv in a["advice"].as_array().unwrap() {
        let c = adv["command"].as_str().unwrap_or("");
        assert!(
            !c.contains("stripe-width") && !c.contains("mkfs.f2fs"),
            "{adv}"
        );
    }
}

#[test]
fn presets_give_their_geometry() {
    for (spec, erase, page) in [
        ("sd-16g", 4 * M, 16 * K),
        ("usb-32g", 12 * M, 24 * K),
        ("emmc-8g", 512 * K, 8 * K),
        ("sd-a2-64g", 8 * M, 16 * K),
        ("sd-a2-fake-64g", 8 * M, 16 * K),
    ] {
        let (inf, run, max_reads) = sweep(spec, &[1024, 4096, 16384]);
        assert_eq!(
            inf.erase_block_bytes.as_u64(),
            Some(erase),
            "{spec}: {}",
            inf.summary()
        );
        assert_eq!(
            inf.page_bytes.as_u64(),
            Some(page),
            "{spec}: {}",
            inf.summary()
        );
        assert!(
            run.reads / 4 * 3 <= max_reads,
            "{spec}: {} > {max_reads}",
            run.reads
        );
    }
}

// ---------- golden tests on public flashbench logs ----------

const REF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/flashbench/");

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(format!("{REF}expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn load(files: &[String]) -> Vec<(String, flashscope::analysis::flashbench::FlashbenchLog)> {
    let paths: Vec<String> = files.iter().map(|f| format!("{REF}{f}")).collect();
    flashscope::commands::analyze::load(&paths).unwrap()
}

/// The inference may agree or be inconclusive; a different value must never be confident.
fn agrees(what: &str, inf: &flashscope::vocab::Inference, want: u64) -> bool {
    match inf.as_u64() {
        None => false,
        Some(v) if v == want => true,
        Some(v) => {
            assert_ne!(
                inf.status_word(),
                "confident",
                "{what}: confident {v}, expected {want}: {}",
                inf.evidence
            );
            false
        }
    }
}

#[test]
fn golden_align_logs_reach_the_stated_geometry_or_stay_inconclusive() {
    let exp = expected();
    let mut checked = 0;
    for card in exp["cards"].as_array().unwrap() {
        if card["kind"] != "align" {
            continue;
        }
        let files: Vec<String> = card["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect();
        let want = &card["expected"];
        // All files of the card together, and each file alone.
        let mut sets = vec![files.clone()];
        sets.extend(files.iter().map(|f| vec![f.clone()]));
        for set in sets {
            let logs = load(&set);
            let inf = align::infer(&flashscope::analysis::logs::align_points(&logs, None));
            let e = agrees(
                "erase",
                &inf.erase_block_bytes,
                want["erase_block_bytes"].as_u64().unwrap(),
            );
            let p = agrees(
                "page",
                &inf.page_bytes,
                want["page_bytes"].as_u64().unwrap(),
            );
            if let Some(mp) = want.get("multi_plane_bytes").and_then(|v| v.as_u64()) {
                if let Some(m) = &inf.multi_plane_bytes {
                    agrees("multi-plane", m, mp);
                }
            }
            if set.len() > 1 || files.len() == 1 {
                // The whole card reaches the stated conclusion.
                assert!(e && p, "{set:?}: {}", inf.summary());
            }
            checked += 1;
        }
    }
    assert!(checked >= 9, "only {checked} align sets checked");
    // The combined seed card reaches its geometry, but flashbench's power-of-two
    // alignments cannot tell 4 MiB from 12 MiB: tentative, with a warning saying so.
    let logs = load(
        &(1..=7)
            .map(|i| format!("seed-align-0{i}.txt"))
            .collect::<Vec<_>>(),
    );
    let inf = align::infer(&flashscope::analysis::logs::align_points(&logs, None));
    assert_eq!(inf.summary(), "erase block 4 MiB, page 16 KiB — tentative");
    assert!(
        inf.warnings
            .iter()
            .any(|w| w.kind() == "power_of_two_only"
                && w.to_string().contains("4 MiB could be 12 MiB")),
        "{:?}",
        inf.warnings
    );
    // The README card shows its 16 KiB multi-plane step.
    let logs = load(&["readme-align-01.txt".to_string()]);
    let inf = align::infer(&flashscope::analysis::logs::align_points(&logs, None));
    assert_eq!(inf.multi_plane_bytes.and_then(|m| m.as_u64()), Some(16 * K));
}

#[test]
fn golden_interval_log_matches_flashbench_regression_or_is_inconclusive() {
    let exp = expected();
    let card = exp["cards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "interval")
        .unwrap();
    let files: Vec<String> = card["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    let logs = load(&files);
    let pts: Vec<flashscope::analysis::interval::IntervalPoint> = logs
        .iter()
        .flat_map(|(_, l)| match &l.data {
            flashscope::analysis::flashbench::LogData::Interval { rows, .. } => rows.clone(),
            _ => Vec::new(),
        })
        .map(|r| flashscope::analysis::interval::IntervalPoint {
            bytes: r.bytes,
            min_ns: r.min_ns,
            avg_ns: r.avg_ns,
            max_ns: r.max_ns,
        })
        .collect();
    let inf = flashscope::analysis::interval::infer(&pts);
    let want_bps = card["expected"]["throughput_mb_s"].as_f64().unwrap() * 1e6;
    let want_access = card["expected"]["access_time_us"].as_f64().unwrap() * 1e3;
    let bps = inf
        .throughput_bytes_per_s
        .as_u64()
        .expect("throughput is decided") as f64;
    assert!((bps / want_bps - 1.0).abs() < 0.02, "{bps} vs {want_bps}");
    if let Some(a) = inf.access_time_ns.as_u64() {
        assert!(
            (a as f64 / want_access - 1.0).abs() < 0.1,
            "{a} vs {want_access}"
        );
    }
}

#[test]
fn golden_open_au_and_find_fat_logs_parse_into_samples() {
    use flashscope::analysis::flashbench::LogData;
    let exp = expected();
    for card in exp["cards"].as_array().unwrap() {
        let kind = card["kind"].as_str().unwrap();
        if kind != "open-au" && kind != "find-fat" {
            continue;
        }
        let files: Vec<String> = card["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect();
        for (i, (f, log)) in load(&files).into_iter().enumerate() {
            match (&log.data, kind) {
                (LogData::OpenAu(o), "open-au") => {
                    assert_eq!(o.erase_bytes, card["erase_block_bytes"].as_u64(), "{f}");
                    assert_eq!(
                        o.open_au_nr.map(u64::from),
                        card["open_au_nr_per_file"][i].as_u64(),
                        "{f}"
                    );
                    assert_eq!(o.random, card["random"].as_bool().unwrap(), "{f}");
                    assert!(
                        o.rows.len() >= 5 && o.rows.iter().all(|r| r.bytes_per_s > 0.0),
                        "{f}"
                    );
                    assert_eq!(o.rows[0].size_bytes, 4 * M, "{f}");
                }
                (LogData::FindFat(ff), "find-fat") => {
                    assert_eq!(ff.erase_bytes, card["erase_block_bytes"].as_u64(), "{f}");
                    assert_eq!(ff.rows.len(), 9, "{f}");
                    assert!(ff.rows.iter().all(|r| r.bytes_per_s.len() == 6), "{f}");
                }
                other => panic!("{f}: parsed as {:?}", other.0),
            }
        }
    }
}

#[test]
fn every_reference_file_is_covered_or_refused_clearly() {
    let exp = expected();
    let listed: Vec<String> = exp["cards"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            c["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap().to_string())
        })
        .collect();
    for entry in std::fs::read_dir(REF).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if !name.ends_with(".txt") {
            continue;
        }
        let text = std::fs::read_to_string(format!("{REF}{name}")).unwrap();
        let parsed = flashscope::analysis::flashbench::parse(&name, &text);
        if listed.contains(&name) {
            assert!(parsed.is_ok(), "{name}: {:?}", parsed.err());
        } else {
            let e = parsed.expect_err("an unlisted log is a kind flashscope does not analyse");
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(&name), "{e}");
        }
    }
}

// ---------- end-to-end tests of the binary ----------

#[test]
fn e2e_align_on_the_simulated_card_gives_the_answer_and_the_read_counts() {
    let v = json(&["align", "sim:sd-16g"]);
    assert_eq!(v["command"], "align");
    assert_eq!(v["inferences"]["erase_block_bytes"]["value"], 4 * M);
    assert_eq!(v["inferences"]["erase_block_bytes"]["status"], "confident");
    assert_eq!(v["inferences"]["page_bytes"]["value"], 16 * K);
    let reads = v["parameters"]["reads"].as_u64().unwrap();
    let fb = v["parameters"]["flashbench_reads"].as_u64().unwrap();
    assert!(reads > 0 && reads <= fb, "{reads} vs {fb}");
    assert!(v["parameters"]["io_time_ns"].as_u64().unwrap() > 0);
    let s = &v["samples"][0];
    for k in [
        "block_bytes",
        "align_bytes",
        "pre_ns",
        "on_ns",
        "post_ns",
        "diff_ns",
        "reads",
    ] {
        assert!(s.get(k).is_some(), "sample lacks {k}");
    }
}

#[test]
fn e2e_align_text_starts_with_the_answer_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("a.svg");
    let out = flashscope()
        .args(["align", "sim:usb-32g", "--plot", svg.to_str().unwrap()])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("erase block 12 MiB, page 24 KiB — confident\n"),
        "{text}"
    );
    assert!(text.contains(" µs"), "diffs carry a unit");
    let plot = std::fs::read_to_string(svg).unwrap();
    assert!(plot.contains("<svg") && plot.contains("erase block 12 MiB"));
}

#[test]
fn e2e_align_ssd_is_inconclusive_and_fixed_count_is_honoured() {
    let v = json(&["align", "sim:ssd-256g", "--count", "2", "--blocksize", "4K"]);
    assert!(v["inferences"]["erase_block_bytes"]["value"].is_null());
    assert_eq!(
        v["inferences"]["erase_block_bytes"]["status"],
        "inconclusive"
    );
    assert_eq!(v["parameters"]["rounds"], 2);
    assert_eq!(v["parameters"]["stop_reason"], "count");
}

#[test]
fn e2e_bad_input_gives_clear_errors_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.img");
    std::fs::write(&small, vec![0u8; 8192]).unwrap();
    let small = small.to_str().unwrap();
    // Target smaller than 4 × block size.
    flashscope()
        .args(["align", small, "--blocksize", "4K"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("smaller than 4 × the block size"));
    // Block size not a multiple of the logical sector.
    flashscope()
        .args(["align", "sim:sd-16g", "--blocksize", "1000"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "not a multiple of the device's 512-byte logical sector",
        ));
    flashscope()
        .args(["align", "sim:sd-16g", "--blocksize", "1T"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("larger than the 64 MiB"));
    // Order too large.
    flashscope()
        .args(["scatter", small, "--order", "9"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--order 9 is too large"));
    flashscope()
        .args(["interval", small, "--order", "13"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--order 13 is too large"));
    // Unreadable log: exit 1.
    flashscope()
        .args(["analyze", dir.path().join("missing.txt").to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("missing.txt"));
    // A log of an unknown kind: exit 2.
    let junk = dir.path().join("junk.txt");
    std::fs::write(&junk, "hello\nworld\n").unwrap();
    flashscope()
        .args(["analyze", junk.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "not a flashbench log of a known kind",
        ));
    let program = format!("{REF}seed-program-01.txt");
    flashscope()
        .args(["analyze", &program])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("program (-p)"));
}

#[test]
fn e2e_analyze_gives_the_same_inferences_as_the_library() {
    let files: Vec<String> = (1..=7)
        .map(|i| format!("{REF}seed-align-0{i}.txt"))
        .collect();
    let mut args = vec!["analyze".to_string()];
    args.extend(files.iter().cloned());
    let v = json(&args.iter().map(|s| s.as_str()).collect::<Vec<_>>());
    let logs = flashscope::commands::analyze::load(&files).unwrap();
    let inf = align::infer(&flashscope::analysis::logs::align_points(&logs, None));
    for (key, lib) in [
        ("erase_block_bytes", &inf.erase_block_bytes),
        ("page_bytes", &inf.page_bytes),
    ] {
        let got = &v["inferences"][key];
        assert_eq!(
            got["value"],
            serde_json::to_value(&lib.value).unwrap(),
            "{key}"
        );
        assert_eq!(got["status"], lib.status_word(), "{key}");
        assert_eq!(got["evidence"], lib.evidence.as_str(), "{key}");
        assert!((got["confidence"].as_f64().unwrap() - lib.confidence).abs() < 1e-12);
    }
}

#[test]
fn e2e_analyze_one_open_au_log_is_inconclusive_not_a_result() {
    // One count of open erase blocks cannot locate a cut-off (writes branch: open-au
    // inference wired into analyze; see tests/e2e/writes.rs for the golden conclusions).
    let f = format!("{REF}readme-openau-02.txt");
    let v = json(&["analyze", &f]);
    assert_eq!(v["inferences"]["open_au"]["status"], "inconclusive");
    assert!(v["inferences"]["open_au"]["value"].is_null());
    assert_eq!(v["samples"][0]["log"]["data"]["open_au_nr"], 3);
    assert_eq!(v["samples"][0]["log"]["data"]["kind"], "open-au");
}

#[test]
fn e2e_interval_and_scatter_on_the_simulated_card() {
    let v = json(&["interval", "sim:sd-16g"]);
    let bps = v["inferences"]["throughput_bytes_per_s"]["value"]
        .as_f64()
        .unwrap();
    assert!((bps / (22.0 * M as f64) - 1.0).abs() < 0.1, "{bps}");
    assert!(v["inferences"]["access_time_ns"]["value"].as_f64().unwrap() > 500_000.0);
    let dir = tempfile::tempdir().unwrap();
    let tsv = dir.path().join("s.tsv");
    let svg = dir.path().join("s.svg");
    flashscope()
        .args([
            "scatter",
            "sim:sd-16g",
            "--order",
            "8",
            "--count",
            "2",
            "-o",
            tsv.to_str().unwrap(),
            "--plot",
            svg.to_str().unwrap(),
        ])
        .assert()
        .success();
    let t = std::fs::read_to_string(tsv).unwrap();
    assert_eq!(t.lines().count(), 257);
    assert!(std::fs::read_to_string(svg).unwrap().contains("<circle"));
}

#[test]
fn e2e_align_on_a_loop_device_with_4k_sectors() {
    let Some(lo) = Loop::attach(64 << 20, &["--sector-size", "4096"]) else {
        common::skip("needs root and loop devices");
        return;
    };
    // The default sweep follows the sector size: 8K, 32K, 128K.
    let v = json(&["align", &lo.dev, "--count", "1"]);
    assert_eq!(
        v["parameters"]["block_sizes"],
        serde_json::json!([8192, 32768, 131072])
    );
    let reads = v["parameters"]["reads"].as_u64().unwrap();
    let cells: u64 = v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["reads"].as_array().unwrap().len() as u64 * 3
                + s["first_reads"].as_array().unwrap().len() as u64
        })
        .sum();
    assert_eq!(reads, cells, "every read is kept in the samples");
    assert!(v["parameters"]["io_time_ns"].as_u64().unwrap() > 0);
    assert!(v["elapsed_ns"].as_u64().unwrap() >= v["parameters"]["io_time_ns"].as_u64().unwrap());
    // A block size below the logical sector is refused.
    flashscope()
        .args(["align", &lo.dev, "--blocksize", "2K"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("4096-byte logical sector"));
}

#[test]
fn e2e_align_on_a_file_in_memory_finds_no_flash_geometry() {
    // A file on tmpfs: reads are memory copies, and the only "boundary" is the CPU's 4 KiB
    // memory page (tens of ns). Naming that a flash page would be a confident wrong answer.
    let Ok(dir) = tempfile::tempdir_in("/dev/shm") else {
        common::skip("no /dev/shm");
        return;
    };
    let img = dir.path().join("card.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let v = json(&["align", img.to_str().unwrap(), "--time-budget", "3s"]);
    let kinds = common::warning_kinds(&v);
    assert!(
        kinds.contains(&"memory-filesystem".to_string()),
        "{kinds:?}"
    );
    for key in ["erase_block_bytes", "page_bytes"] {
        assert_eq!(
            v["inferences"][key]["status"], "inconclusive",
            "{key}: {}",
            v["inferences"][key]
        );
    }
}

#[test]
fn e2e_analyze_refuses_a_fifo_and_a_device_at_once_and_caps_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("log.fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (file, kind) in [
        (fifo.to_str().unwrap(), "FIFO"),
        ("/dev/zero", "character device"),
    ] {
        flashscope()
            .args(["analyze", file])
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!(
                "{file}: a flashbench log must be a regular file, and this is a {kind}"
            )));
    }
    // `-` reads standard input with the same bound.
    let log = std::fs::read_to_string(format!("{REF}seed-align-01.txt")).unwrap();
    flashscope()
        .args(["analyze", "-"])
        .write_stdin(log)
        .assert()
        .success()
        .stdout(predicates::str::contains("erase block 4 MiB"));
    flashscope()
        .args(["analyze", "-"])
        // Blank lines of 1 KiB: the bound is on bytes, and 64 Mi empty lines would only time
        // the line loop.
        .write_stdin(
            std::iter::repeat_n([[b' '; 1023].as_slice(), b"\n"].concat(), 64 << 10)
                .flatten()
                .chain([b' '])
                .collect::<Vec<u8>>(),
        )
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "standard input: more than the 64 MiB",
        ));
}

#[test]
fn e2e_analyze_options_refuse_zero_empty_and_negative_values_by_name() {
    let log = format!("{REF}seed-align-01.txt");
    for (opt, val, want) in [
        (
            "--blocksize",
            "0",
            "--blocksize 0 is zero: give a size such as 4K",
        ),
        (
            "--erase-size",
            "0",
            "--erase-size 0 is zero: give a size such as 4K",
        ),
        (
            "--blocksize",
            "",
            "--blocksize is empty: give a size such as 4K",
        ),
        ("--erase-size", "", "--erase-size is empty"),
        (
            "--blocksize",
            "-5",
            "--blocksize -5 is negative: give a size such as 4K",
        ),
        (
            "--open-au-nr",
            "0",
            "--open-au-nr 0: 0 open erase blocks is not possible",
        ),
        ("--open-au-nr", "-5", "--open-au-nr -5: -5 is negative"),
        ("--open-au-nr", "", "--open-au-nr is empty"),
    ] {
        let out = flashscope()
            .args(["analyze", &log, opt, val])
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{opt} {val:?}: {err}");
        assert!(!err.contains("tip:"), "{opt} {val:?}: {err}");
    }
}

#[test]
fn e2e_analyze_logs_with_impossible_values_exit_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    for (text, want) in [
        (
            "align 8192 pre -785us on 808us post 725us diff 53us\nalign 4096 pre 1ms on 1ms post 1ms diff 0ns\n",
            "neg.txt, line 1",
        ),
        (
            "align 0 pre 785us on 808us post 725us diff 53us\nalign 4096 pre 1ms on 1ms post 1ms diff 0ns\n",
            "alignment 0 is not possible",
        ),
    ] {
        let f = dir.path().join("neg.txt");
        std::fs::write(&f, text).unwrap();
        flashscope()
            .args(["analyze", f.to_str().unwrap()])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(want));
    }
}

/// Each pasted form in tests/data/flashbench/pastes/ (see its README) with its clean
/// original(s) and the options both are analysed with.
const PASTES: &[(&str, &[&str], &[&str])] = &[
    (
        "prompt-tilde-seed-align-01.txt",
        &["seed-align-01.txt"],
        &[],
    ),
    (
        "prompt-root-readme-align-01.txt",
        &["readme-align-01.txt"],
        &[],
    ),
    ("crlf-tabs-seed-align-02.txt", &["seed-align-02.txt"], &[]),
    ("bom-seed-align-03.txt", &["seed-align-03.txt"], &[]),
    ("cut-seed-align-04.txt", &["seed-align-04.txt"], &[]),
    (
        "two-commands-seed-align-05-06.txt",
        &["seed-align-05.txt", "seed-align-06.txt"],
        &[],
    ),
    (
        "raw-seed-openau-01-04.txt",
        &[
            "seed-openau-01.txt",
            "seed-openau-02.txt",
            "seed-openau-03.txt",
            "seed-openau-04.txt",
        ],
        &["--erase-size", "4M", "--open-au-nr", "1,2,8,9"],
    ),
    (
        "latin1-shown-readme-align-01.txt",
        &["readme-align-01.txt"],
        &[],
    ),
    (
        "prompt-crlf-seed-interval-01.txt",
        &["seed-interval-01.txt"],
        &[],
    ),
    ("prompt-seed-fat-01.txt", &["seed-fat-01.txt"], &[]),
];

#[test]
fn pasted_forms_of_golden_logs_reach_the_same_conclusion() {
    let strip = |v: &serde_json::Value| {
        // Value and status of every inference: the conclusion, not the wording.
        v["inferences"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, i)| (k.clone(), i["value"].clone(), i["status"].clone()))
            .collect::<Vec<_>>()
    };
    let mut listed = Vec::new();
    for (paste, originals, opts) in PASTES {
        listed.push(paste.to_string());
        let mut args = vec!["analyze".to_string(), format!("{REF}pastes/{paste}")];
        args.extend(opts.iter().map(|s| s.to_string()));
        let got = json(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let mut args = vec!["analyze".to_string()];
        args.extend(originals.iter().map(|f| format!("{REF}{f}")));
        args.extend(opts.iter().map(|s| s.to_string()));
        let want = json(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(!strip(&want).is_empty(), "{paste}");
        if paste.starts_with("cut-") {
            // The cut line is left out: the paste has one row less than its original, so
            // it may be less sure (inconclusive where the original names a value), never
            // of another value.
            for ((k, v, st), (_, wv, _)) in strip(&got).iter().zip(strip(&want).iter()) {
                assert!(
                    v == wv || st == "inconclusive",
                    "{paste}: {k} {v} ({st}), the original {wv}"
                );
            }
        } else {
            assert_eq!(strip(&got), strip(&want), "{paste}");
        }
        assert_eq!(
            got["samples"].as_array().unwrap().len(),
            originals.len(),
            "{paste}: one run per original"
        );
    }
    // Every fixture is in the table.
    for e in std::fs::read_dir(format!("{REF}pastes")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(
            name == "README.md" || listed.contains(&name),
            "{name} is not tested"
        );
    }
    // The cut line is reported, and the raw runs say where their counts came from.
    let v = json(&["analyze", &format!("{REF}pastes/cut-seed-align-04.txt")]);
    assert!(v["warnings"].to_string().contains("cut_last_line"), "{v}");
    let v = json(&[
        "analyze",
        &format!("{REF}pastes/raw-seed-openau-01-04.txt"),
        "--erase-size",
        "4M",
    ]);
    assert_ne!(v["inferences"]["open_au"]["status"], "confident", "{v}");
    assert!(
        v["warnings"]
            .to_string()
            .contains("their counts were taken from their order (1, 2, ... 4)"),
        "{v}"
    );
    // One warning for all the runs, not one per run (a log of many runs printed one line
    // each).
    assert_eq!(
        v["warnings"]
            .to_string()
            .matches("open_au_nr_from_run_order")
            .count(),
        1,
        "{v}"
    );
    assert_eq!(
        v["samples"][3]["log"]["data"]["open_au_nr_source"],
        "run-order"
    );
}

/// A recorded run of the truth suite (tests/serve.rs) on a served 4 MiB / 16 KiB card,
/// quiet, on the shared VM: most 16 KiB reads and some 4 KiB ones waited a whole scheduler
/// tick (about 4 ms). Rows whose kept reads still held stalls were believed with an error
/// as large as their cost, and together they said "erase block 12 MiB, page 48 KiB —
/// confident". Such rows are not believed now.
#[test]
fn a_recorded_run_whose_reads_waited_a_scheduler_tick_is_not_confidently_wrong() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/align-served-tick-stalls.json"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cells: Vec<probe::AlignCell> = v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| probe::AlignCell {
            block_bytes: s["block_bytes"].as_u64().unwrap(),
            align_bytes: s["align_bytes"].as_u64().unwrap(),
            positions: serde_json::from_value(s["positions"].clone()).unwrap(),
            reads: serde_json::from_value(s["reads"].clone()).unwrap(),
            first: Vec::new(),
        })
        .collect();
    let inf = align::infer(&align::points(&cells));
    for (what, i, want) in [
        ("erase", &inf.erase_block_bytes, 4 * M),
        ("page", &inf.page_bytes, 16 * K),
    ] {
        if i.status_word() == "confident" {
            assert_eq!(i.as_u64(), Some(want), "{what}: {}", inf.summary());
        }
    }
    if let Some(m) = &inf.multi_plane_bytes {
        assert_ne!(m.status_word(), "confident", "{}", inf.summary());
    }
    eprintln!("recorded tick-stall run: {}", inf.summary());
}

/// Issue 33 point 4: every published log an expert read (tests/data/flashbench/readings.tsv,
/// the set scripts/golden-figure counts) is read, never confidently wrong, and the share
/// named right does not fall below what this commit reaches.
#[test]
fn published_logs_are_read_and_never_confidently_wrong() {
    let table = std::fs::read_to_string(format!("{REF}readings.tsv")).unwrap();
    let (mut erase_ok, mut page_ok, mut n) = (0, 0, 0);
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let files: Vec<String> = cols[0].split_whitespace().map(String::from).collect();
        let logs = load(&files);
        let f = flashscope::analysis::logs::infer(&logs, None);
        n += 1;
        for (key, want) in [("erase_block_bytes", cols[1]), ("page_bytes", cols[2])] {
            let inf = &f.inferences[key];
            match want.parse::<u64>() {
                Ok(w) => {
                    if agrees(key, inf, w) {
                        if key == "page_bytes" {
                            page_ok += 1
                        } else {
                            erase_ok += 1
                        }
                    }
                }
                // The expert named none: no confident value.
                Err(_) => assert_ne!(inf.status_word(), "confident", "{line}: {}", inf.evidence),
            }
        }
    }
    assert_eq!(n, 17);
    assert!(
        erase_ok >= 16 && page_ok >= 10,
        "erase {erase_ok}, page {page_ok}"
    );
}

/// Issue 43.6: the published logs the reading was not tuned on. The changes of this
/// issue (pooling runs of one block size; a small group of rows scattered like the
/// well-populated ones relative to their level; the chain search free to swap a member
/// for any size with local evidence) were made looking only at `seed-align-01`,
/// `seed-align-02` and `readme-align-01` (and the forms pasted or published from them).
/// The rest of `readings.tsv` is held out: `seed-align-03` … `07` (2 to 32 KiB reads),
/// the pasted forms of 03 and 04, and the real Patriot stick. On main they gave erase
/// 6 of 8 and page 0 of 7; now 7 of 8 and 3 of 7, never a confident different answer.
#[test]
fn held_out_published_logs_meet_the_floors_never_confidently_wrong() {
    let tuned_on = ["seed-align-01", "seed-align-02", "readme-align-01"];
    let table = std::fs::read_to_string(format!("{REF}readings.tsv")).unwrap();
    let (mut erase, mut page) = ((0, 0), (0, 0));
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        if tuned_on.iter().any(|t| cols[0].contains(t)) {
            continue;
        }
        let files: Vec<String> = cols[0].split_whitespace().map(String::from).collect();
        let f = flashscope::analysis::logs::infer(&load(&files), None);
        for (key, want, tally) in [
            ("erase_block_bytes", cols[1], &mut erase),
            ("page_bytes", cols[2], &mut page),
        ] {
            let inf = &f.inferences[key];
            match want.parse::<u64>() {
                Ok(w) => {
                    tally.1 += 1;
                    if agrees(key, inf, w) {
                        tally.0 += 1;
                    }
                }
                Err(_) => assert_ne!(inf.status_word(), "confident", "{line}: {}", inf.evidence),
            }
        }
    }
    assert_eq!((erase.1, page.1), (8, 7), "the held-out rows");
    assert!(
        erase.0 >= 7 && page.0 >= 3,
        "held out: erase {} of {}, page {} of {}",
        erase.0,
        erase.1,
        page.0,
        page.1
    );
}

/// Issue 33 point 4: a published command (shell arithmetic, a backslash continuation, ^C)
/// gives the same runs as the clean log it was made from.
#[test]
fn published_command_forms_read_like_their_originals() {
    use flashscope::analysis::flashbench::LogData;
    let arith = load(&["published/arith-ctrlc-seed-openau-03-04.txt".to_string()]);
    assert_eq!(arith.len(), 2);
    for ((_, l), (nr, rows)) in arith.iter().zip([(8, 9), (9, 7)]) {
        let LogData::OpenAu(o) = &l.data else {
            panic!("{l:?}")
        };
        assert_eq!(o.erase_bytes, Some(4 * M));
        assert_eq!(o.block_bytes, Some(16 * K));
        assert_eq!(o.open_au_nr, Some(nr));
        assert_eq!(o.rows.len(), rows);
    }
    assert!(arith[1]
        .1
        .warnings
        .iter()
        .any(|w| w.kind() == "interrupted_run"));
    let f = flashscope::analysis::logs::infer(&arith, None);
    assert_eq!(f.inferences["open_au"].as_u64(), Some(8));
    let readme = load(&["published/arith-ctrlc-readme-align-01.txt".to_string()]);
    assert_eq!(readme.len(), 1);
    assert_eq!(readme[0].1.align_block_bytes(), Some(1024));
    let LogData::Align { rows } = &readme[0].1.data else {
        panic!()
    };
    assert_eq!(rows.len(), 16, "the cut 2048 row is left out");
}

/// Issue 33 point 6: interval on 4 KiB-logical-sector devices starts at the sector (it
/// used to fail with "reading 512 B at offset 0: Invalid argument"), on the simulated card
/// and on a real loop device, and records the machine's state for its noise judgement.
#[test]
fn e2e_interval_on_4k_sector_devices_reads_from_the_sector_up() {
    let v = json(&["interval", "sim:sd-16g,sector=4096", "--order", "10"]);
    assert_eq!(v["samples"][0]["bytes"], 4096, "{}", v["samples"]);
    assert_eq!(v["samples"].as_array().unwrap().len(), 7);
    // The run records the machine's state (its stalled reads are the simulated card's own
    // outliers: load and steal are no cause on its virtual clock).
    assert_eq!(v["environment"]["reads"], 7 * 8 * 2, "{}", v["environment"]);
    assert_eq!(v["environment"]["load1"], 0.0);
    let Some(lo) = Loop::attach(64 << 20, &["--sector-size", "4096"]) else {
        common::skip("needs root and loop devices");
        return;
    };
    let v = json(&["interval", &lo.dev, "--order", "10", "--positions", "4"]);
    let sizes: Vec<u64> = v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [4096, 8192, 16384, 32768, 65536, 131072, 262144]);
    assert!(
        v["environment"]["reads"].as_u64().unwrap() > 0,
        "{}",
        v["environment"]
    );
}

/// A CPU hog started by the test (a shell starting one short process after another) and
/// killed by its pid on drop.
struct Hog(std::process::Child);

impl Hog {
    fn start() -> Hog {
        Hog(std::process::Command::new("sh")
            .args(["-c", "while :; do /bin/true; done"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start a CPU hog"))
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Issue 33 negative controls on real devices without erase blocks: zram, loop devices over
/// files in RAM (512-byte and 4 KiB sectors) and over a file on disk, each quiet and beside
/// a CPU hog: no confident erase block, page or multi-plane unit, ever.
#[test]
fn no_confident_geometry_on_zram_or_loops_quiet_and_beside_a_cpu_hog() {
    let Some(zram) = common::Zram::new(256) else {
        return;
    };
    let size = 256 << 20;
    let Some(shm512) = common::Loop::random_in("/dev/shm", size, 1, &[]) else {
        return;
    };
    let Some(shm4k) = common::Loop::random_in("/dev/shm", size, 2, &["--sector-size", "4096"])
    else {
        return;
    };
    let Some(disk) = common::Loop::random_in("/var/tmp", size, 3, &[]) else {
        return;
    };
    let devices = [
        ("zram", zram.dev()),
        ("loop over tmpfs, 512 B sectors", shm512.dev.clone()),
        ("loop over tmpfs, 4 KiB sectors", shm4k.dev.clone()),
        ("loop over a file on disk", disk.dev.clone()),
    ];
    let (mut runs, mut none_visible, mut wrong) = (0, 0, Vec::new());
    for (what, dev) in &devices {
        for hogged in [false, true] {
            let _hog = hogged.then(Hog::start);
            let v = json(&["align", dev, "--time-budget", "20s"]);
            runs += 1;
            let inf = &v["inferences"];
            eprintln!(
                "{what}{}: erase {} ({}), page {} ({}), structure {} ({}), {} reads",
                if hogged { " + CPU hog" } else { "" },
                inf["erase_block_bytes"]["value"],
                inf["erase_block_bytes"]["status"],
                inf["page_bytes"]["value"],
                inf["page_bytes"]["status"],
                inf["erase_block_structure"]["value"],
                inf["erase_block_structure"]["status"],
                v["parameters"]["reads"]
            );
            for key in ["erase_block_bytes", "page_bytes", "multi_plane_bytes"] {
                if inf[key]["status"] == "confident" {
                    wrong.push(format!("{what} (hog: {hogged}): {key} {}", inf[key]));
                }
            }
            none_visible += usize::from(inf["erase_block_structure"]["value"] == "none visible");
        }
    }
    eprintln!(
        "negative controls: {runs} runs, confidently wrong {}, none visible {none_visible}",
        wrong.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // auto on zram: no geometry-based mkfs line.
    let a = json(&["auto", &zram.dev()]);
    for adv in a["advice"].as_array().unwrap() {
        let c = adv["command"].as_str().unwrap_or("");
        assert!(
            !c.contains("stripe-width") && !c.contains("mkfs.f2fs"),
            "{adv}"
        );
    }
}

/// A served 4 MiB / 16 KiB card (with rare 20 ms outliers) read by align beside a CPU hog
/// while other work ran on the machine (CI, 2026-11-27): the noise added an 8 KiB step,
/// the page came out unsettled, and the page's own 16 KiB step was named a confident
/// multi-plane unit. A multi-plane unit is a multiple of the page: never surer than it,
/// and nothing at all without one. The document is the run's own, re-inferred here.
#[test]
fn a_multi_plane_unit_is_never_surer_than_its_page() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/align/busy-hog-4m16k-served.json"
    );
    let doc = flashscope::report::Document::from_json(path, &std::fs::read(path).unwrap()).unwrap();
    let flashscope::report::Body::Align(a) = &doc.body else {
        panic!("not an align document");
    };
    let inf = flashscope::analysis::align::infer(&a.points());
    assert_eq!(inf.erase_block_bytes.as_u64(), Some(4 << 20));
    let page = &inf.page_bytes;
    let mp = inf.multi_plane_bytes.as_ref();
    if let Some(mp) = mp {
        assert!(
            mp.confidence <= page.confidence,
            "multi-plane {mp:?} surer than the page {page:?}"
        );
        if page.value.is_none() {
            assert!(mp.value.is_none(), "multi-plane {mp:?} without a page");
        }
    }
    assert!(
        page.as_u64() == Some(16384) || page.value.is_none(),
        "page {page:?}"
    );
}

/// align reads at real-time priority by default where the kernel grants it (root), never on
/// a `sim:` card, and records whether it did; `--no-realtime` keeps normal priority;
/// `--realtime` insists (a `realtime_refused` warning only then, when refused); the two
/// together are refused as a usage error.
#[test]
fn e2e_align_reads_at_real_time_priority_by_default_where_permitted_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("card.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let img = img.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["align", img, "--count", "1", "--blocksize", "4K"];
        args.extend(extra);
        let v = json(&args);
        let refused = v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "realtime_refused");
        (v["parameters"]["realtime"].as_bool().unwrap(), refused)
    };
    let (default_rt, default_warned) = run(&[]);
    assert!(!default_warned, "the default falls back without a word");
    if common::is_root() {
        assert!(default_rt, "as root align reads at real-time priority");
    }
    assert_eq!(run(&["--no-realtime"]), (false, false));
    let (rt, warned) = run(&["--realtime"]);
    assert_eq!(rt, default_rt);
    assert_eq!(warned, !rt, "--realtime warns exactly when refused");
    let v = json(&["align", "sim:sd-16g", "--count", "1"]);
    assert_eq!(
        v["parameters"]["realtime"], false,
        "a sim: card keeps normal priority"
    );
    flashscope()
        .args(["align", img, "--realtime", "--no-realtime"])
        .assert()
        .code(2);
}
