//! Geometry discovery: the align probe + inference on simulated cards (property sweep over
//! random geometries), golden tests on public flashbench logs, and end-to-end tests.

use flashscope::analysis::align::{self, AlignInference};
use flashscope::backend::sim::{SimConfig, SimDevice};
use flashscope::backend::Backend;
use flashscope::probe::align::{self as probe, AlignConfig, Next};
use rand::{Rng, SeedableRng};

static INFER_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
const K: u64 = 1024;
const M: u64 = 1024 * 1024;

/// Run the adaptive align sweep on a simulated device and infer.
fn sweep(spec: &str, block_sizes: &[u64]) -> (AlignInference, probe::AlignRun, u64) {
    let cfg = SimConfig::parse(spec).unwrap();
    let mut dev = SimDevice::new(cfg);
    let size = dev.size_bytes();
    let max_reads: u64 = block_sizes
        .iter()
        .map(|&b| probe::flashbench_align_reads(size, b))
        .sum();
    let config = AlignConfig {
        block_sizes: block_sizes.to_vec(),
        positions: 8,
        count: None,
        time_budget_ns: 60_000_000_000,
        max_reads,
    };
    let mut next = |cells: &[probe::AlignCell], reads: u64| {
        INFER_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pts = probe::points(cells);
        let inf = align::infer(&pts);
        match align::next_round(&inf, &pts, reads, max_reads) {
            None => Next::Stop,

            Some(f) => Next::Focus(f),
        }
    };
    let run = probe::run(&mut dev, &config, &mut next, &mut |_, _| {}).unwrap();
    let inf = align::infer(&probe::points(&run.cells));
    (inf, run, max_reads)
}

fn pick<T: Copy>(rng: &mut impl Rng, v: &[T]) -> T {
    v[rng.gen_range(0..v.len())]
}

#[test]
fn random_geometries_are_right_or_inconclusive_never_confidently_wrong() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(20261122);
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
    let cases = 200;
    let (mut right, mut inconclusive, mut wrong, mut eligible, mut eligible_right) =
        (0, 0, 0, 0, 0);
    let mut page_right = 0;
    let mut page_wrong = 0;
    let mut failures = Vec::new();
    let t0 = std::time::Instant::now();
    for case in 0..cases {
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
        let (inf, run, max_reads) = sweep(&spec, &[1024, 4096, 16384]);
        assert!(
            run.reads <= max_reads,
            "{spec}: {} reads > {max_reads}",
            run.reads
        );
        let got = inf.erase_block_bytes.as_u64();
        let confident = inf.erase_block_bytes.status_word() == "confident";
        match got {
            Some(v) if v == erase => right += 1,
            Some(_) if confident => {
                wrong += 1;
                failures.push(format!("case {case}: {spec} → {:?}", inf.erase_block_bytes));
            }
            _ => inconclusive += 1,
        }
        if erase_frac >= 0.05 {
            eligible += 1;
            if got == Some(erase) {
                eligible_right += 1;
            } else {
                eprintln!(
                    "miss case {case}: {spec} → {} ({} reads)",
                    inf.summary, run.reads
                );
            }
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
        "align property sweep: {cases} cases, erase right {right}, inconclusive/tentative-wrong {inconclusive}, confident wrong {wrong}; erase_cost >= 5%: {eligible_right}/{eligible} right; page right {page_right}, page confident wrong {page_wrong}; {:.1} s",
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
