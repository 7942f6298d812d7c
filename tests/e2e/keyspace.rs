//! The whole-key-space sweep (issue 43.7): simulated cards drawn over every simulator key
//! that changes what a probe sees (geometry including 3·2^n sizes, page and erase costs
//! down to none at all, read caches, prefetch, wake-up costs, noise and outliers, 512 and
//! 4096-byte sectors, 1 to 16 open erase blocks, FAT areas, SLC caches, fakes of every mode
//! behind fast, slow or no write caches, host paths of SD modes and USB readers), each run through `align`, `open-au`, `probe` or
//! `auto` as a user runs them (the binary, `--json`, on the virtual clock).
//!
//! The invariant: no answer is confidently wrong. Every answer is the card's truth (known
//! here from the spec, never to the analysis), or inconclusive, or tentative; a
//! confidently wrong value, a confident "no erase-block structure" on a card whose
//! boundaries cost at least 5 % of a read, a FAKE verdict on an honest card, or an OK
//! (exit 0) on a fake whose write cache is within the size probe says it rules out is a
//! failure, printed with its spec so it can become a named test. Floors of right answers
//! where the structure is plainly visible are asserted too (a sweep that answers
//! "inconclusive" everywhere would pass the invariant and be useless).
//!
//! `KEYSPACE_CASES` (default 520) and `KEYSPACE_SEED` explore more draws; the counts per
//! command are printed (`keyspace sweep: …`) for the closing notes.

use crate::common::bin;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;

const K: u64 = 1 << 10;
const M: u64 = 1 << 20;
const G: u64 = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmd {
    Align,
    OpenAu,
    Probe,
    Auto,
}

impl Cmd {
    fn name(self) -> &'static str {
        match self {
            Cmd::Align => "align",
            Cmd::OpenAu => "open-au",
            Cmd::Probe => "probe",
            Cmd::Auto => "auto",
        }
    }
}

/// What the drawn card is, from its spec: the ground truth the answers are held against.
#[derive(Clone, Debug)]
struct Truth {
    size: u64,
    erase: u64,
    page: u64,
    /// The erase-block boundary costs at least 5 % of a 1 KiB read (and no read cache
    /// is drawn): a card on which align should see the step.
    erase_plain: bool,
    /// The erase-block boundary costs anything at all.
    erase_any: bool,
    page_any: bool,
    open_au: u32,
    /// Real capacity of a fake (None: honest).
    real: Option<u64>,
    /// The fake's write cache, bytes (0: none).
    fake_cache: u64,
    read_cache: u64,
}

#[derive(Clone, Debug)]
struct Case {
    cmd: Cmd,
    spec: String,
    truth: Truth,
}

fn pick<T: Copy>(rng: &mut impl Rng, v: &[T]) -> T {
    // Drawn as u64 so every architecture draws the same cases.
    v[rng.gen_range(0..v.len() as u64) as usize]
}

fn draw(rng: &mut rand_pcg::Pcg64, cmd: Cmd) -> Case {
    let erases = [
        128 * K,
        256 * K,
        384 * K,
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
    let pages = [
        2 * K,
        4 * K,
        8 * K,
        12 * K,
        16 * K,
        24 * K,
        32 * K,
        48 * K,
        64 * K,
    ];
    let erase = pick(rng, &erases);
    // A 4 KiB-sector card has no page below its sector.
    let sector = if rng.gen_bool(0.3) { 4096 } else { 512 };
    let page = loop {
        let p = pick(rng, &pages);
        if erase % p == 0 && p < erase && p >= sector {
            break p;
        }
    };
    let mut keys: Vec<String> = Vec::new();
    let size = match cmd {
        // A fake's announced size must hold the real one many times over.
        Cmd::Probe | Cmd::Auto => pick(rng, &[G, 2 * G, 4 * G, 8 * G, 16 * G, 32 * G, 64 * G]),
        _ => pick(rng, &[512 * M, G, 2 * G, 4 * G, 8 * G, 16 * G]),
    }
    .max(erase * 16);
    keys.push(format!("size={size}"));
    keys.push(format!("erase={erase}"));
    keys.push(format!("page={page}"));
    // Boundary costs against align's smallest read at the default 650 µs and 22 MiB/s:
    // 1 KiB, or 8 KiB on a 4 KiB-sector card (its straddling read starts half a block
    // before the boundary, on a sector).
    let base = if sector == 4096 {
        1_005_000.0
    } else {
        694_000.0
    };
    let geometry = rng.gen_range(0..10u32);
    let (erase_frac, page_frac): (f64, f64) = match geometry {
        0 => (0.0, 0.0),                      // no geometry at all (an SSD-like remapper)
        1 => (rng.gen_range(0.0..0.05), 0.0), // a faint erase step, no page step
        _ => (
            rng.gen_range(0.05..0.5),
            if rng.gen_bool(0.2) {
                0.0
            } else {
                rng.gen_range(0.03..0.2)
            },
        ),
    };
    keys.push(format!("erase_cost={}ns", (erase_frac * base) as u64));
    keys.push(format!("page_cost={}ns", (page_frac * base) as u64));
    let read_cache = if rng.gen_bool(0.3) {
        let rc = pick(rng, &[4 * K, 16 * K, 64 * K, 256 * K, M, 4 * M]);
        keys.push(format!("read_cache={rc}"));
        keys.push(format!("read_hit={}us", rng.gen_range(5..100u64)));
        if rng.gen_bool(0.5) {
            keys.push(format!("prefetch={}", pick(rng, &[4 * K, 16 * K, 64 * K])));
        }
        rc
    } else {
        0
    };
    if rng.gen_bool(0.25) {
        keys.push(format!("wake={}us", rng.gen_range(20..500u64)));
    }
    keys.push(format!("noise={:.3}", rng.gen_range(0.0..0.15)));
    if rng.gen_bool(0.3) {
        keys.push(format!("outliers={:.4}", rng.gen_range(0.0..0.01)));
    }
    if sector == 4096 {
        keys.push("sector=4096".into());
    }
    let open_au = rng.gen_range(1..=16u32);
    keys.push(format!("open_au={open_au}"));
    keys.push(format!("fat_au={}", rng.gen_range(0..=3u32)));
    if rng.gen_bool(0.2) {
        keys.push(format!("slc={}", pick(rng, &[16 * M, 64 * M, 256 * M])));
    }
    let (real, fake_cache) = if matches!(cmd, Cmd::Probe | Cmd::Auto) && rng.gen_bool(0.5) {
        let real = size >> rng.gen_range(1..=4u32);
        keys.push(format!("real={real}"));
        keys.push(format!(
            "fake_mode={}",
            pick(rng, &["wrap", "limbo", "chain"])
        ));
        let cache = match rng.gen_range(0..3u32) {
            0 => 0,
            _ => pick(rng, &[16 * M, 64 * M, 256 * M, 512 * M, G, 3 * G / 2]).min(real / 2),
        };
        if cache > 0 {
            keys.push(format!("cache={cache}"));
            if rng.gen_bool(0.5) {
                // A cache faster than the medium (timing can see it) or, left out, one
                // read at the medium's own speed (only capacity written past it can).
                keys.push("cache_bw=200M".into());
            }
        }
        (Some(real), cache)
    } else {
        (None, 0)
    };
    keys.push(format!("seed={}", rng.gen::<u32>()));
    // The host path the card sits behind (issue 47.2): it caps transfers and the command
    // queue, never a boundary's cost, so every answer must hold through it.
    if rng.gen_bool(0.2) {
        keys.push(
            pick(
                rng,
                &[
                    "host_timing=sd-hs",
                    "host_timing=sdr50",
                    "host_timing=sdr104,host_cmdq=1",
                    "usb=2.0",
                    "usb=3.0,uas=1",
                ],
            )
            .to_string(),
        );
    }
    Case {
        cmd,
        spec: format!("sim:custom,{}", keys.join(",")),
        truth: Truth {
            size,
            erase,
            page,
            erase_plain: erase_frac >= 0.05,
            erase_any: erase_frac > 0.0,
            page_any: page_frac > 0.0,
            open_au,
            real,
            fake_cache,
            read_cache,
        },
    }
}

/// How one answer compares with the truth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grade {
    Right,
    Inconclusive,
    /// A wrong value stated as tentative: allowed, counted.
    Tentative,
    /// A wrong value stated as confident (or a verdict that is wrong): a failure.
    Wrong,
}

fn status(inf: &serde_json::Value) -> &str {
    inf["status"].as_str().unwrap_or("inconclusive")
}

/// A numeric inference against `truth`: right, inconclusive, or wrong by its status.
fn grade_value(inf: &serde_json::Value, truth: Option<u64>) -> Grade {
    match (inf["value"].as_u64(), truth) {
        (None, _) => Grade::Inconclusive,
        (Some(v), Some(t)) if v == t => Grade::Right,
        _ if status(inf) == "confident" => Grade::Wrong,
        _ => Grade::Tentative,
    }
}

#[derive(Default)]
struct Tally {
    right: usize,
    inconclusive: usize,
    tentative: usize,
    wrong: usize,
}

impl Tally {
    fn add(&mut self, g: Grade) {
        match g {
            Grade::Right => self.right += 1,
            Grade::Inconclusive => self.inconclusive += 1,
            Grade::Tentative => self.tentative += 1,
            Grade::Wrong => self.wrong += 1,
        }
    }
    fn line(&self) -> String {
        format!(
            "{} right, {} inconclusive, {} tentative wrong, {} confidently wrong",
            self.right, self.inconclusive, self.tentative, self.wrong
        )
    }
}

/// What one run said, graded answer by answer (name, grade, what was said).
struct Graded {
    answers: Vec<(&'static str, Grade, String)>,
}

fn geometry_grades(doc: &serde_json::Value, t: &Truth, out: &mut Graded) {
    let inf = &doc["inferences"];
    let erase_inf = &inf["erase_block_bytes"];
    let erase_truth = t.erase_any.then_some(t.erase);
    out.answers.push((
        "erase_block",
        grade_value(erase_inf, erase_truth),
        erase_inf.to_string(),
    ));
    let page_inf = &inf["page_bytes"];
    out.answers.push((
        "page",
        grade_value(page_inf, t.page_any.then_some(t.page)),
        page_inf.to_string(),
    ));
    let structure = &inf["erase_block_structure"];
    if structure.is_object() {
        let none = structure["value"]
            .as_str()
            .is_some_and(|v| v.contains("none"));
        let g = match (none, status(structure)) {
            (true, "confident") if t.erase_plain => Grade::Wrong,
            (true, _) if t.erase_plain => Grade::Tentative,
            (true, _) if !t.erase_any => Grade::Right,
            (false, _) if structure["value"].is_null() => Grade::Inconclusive,
            (false, "confident") if !t.erase_any => Grade::Wrong,
            (false, _) if !t.erase_any => Grade::Tentative,
            _ => Grade::Right,
        };
        out.answers.push(("structure", g, structure.to_string()));
    }
}

fn open_au_grade(doc: &serde_json::Value, t: &Truth, out: &mut Graded) {
    let inf = &doc["inferences"]["open_au"];
    if inf.is_object() {
        out.answers.push((
            "open_au",
            grade_value(inf, Some(t.open_au as u64)),
            inf.to_string(),
        ));
    }
}

/// The capacity verdict: FAKE on an honest card, or OK on a fake whose cache probe's
/// default rules out, is wrong; a usable size above the real one loses data.
fn capacity_grades(code: i32, doc: &serde_json::Value, t: &Truth, out: &mut Graded) {
    let verdict = doc["verdict"].as_str().unwrap_or("").to_string();
    let fake_said = verdict.starts_with("FAKE") || code == 3 && verdict.contains("FAKE");
    let ruled_out = G.min(t.size / 16);
    let g = match t.real {
        None if fake_said => Grade::Wrong,
        None => Grade::Right,
        Some(_) if fake_said => Grade::Right,
        Some(_) if code == 0 && t.fake_cache <= ruled_out => Grade::Wrong,
        // A cache larger than the default rules out: the OK line must say so.
        Some(_) if code == 0 => Grade::Tentative,
        Some(_) => Grade::Inconclusive,
    };
    out.answers.push(("capacity", g, verdict));
    let usable = &doc["inferences"]["usable_bytes"];
    if let (Some(v), Some(real)) = (usable["value"].as_u64(), t.real) {
        let g = if v > real {
            if status(usable) == "confident" {
                Grade::Wrong
            } else {
                Grade::Tentative
            }
        } else if v + 4 * M >= real {
            Grade::Right
        } else {
            // Conservative: less than the card holds, never data lost.
            Grade::Inconclusive
        };
        out.answers.push(("usable", g, usable.to_string()));
    }
}

fn run_case(case: &Case) -> Result<Graded, String> {
    let mut cmd = bin();
    cmd.arg(case.cmd.name()).arg(&case.spec).arg("--json");
    if case.cmd != Cmd::Align {
        cmd.arg("--write");
    }
    let out = cmd
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("panicked") {
        return Err(format!("panic (exit {code}): {stderr}"));
    }
    let mut graded = Graded {
        answers: Vec::new(),
    };
    let doc: serde_json::Value = match serde_json::from_slice(&out.stdout) {
        Ok(d) => d,
        // open-au and auto need the erase block: when align could not settle it they
        // stop (exit 2: give --erase-size) and say so — an honest inconclusive.
        Err(_) if code == 2 && stderr.contains("could not settle the erase block") => {
            graded
                .answers
                .push(("erase_block", Grade::Inconclusive, "stopped".into()));
            return Ok(graded);
        }
        Err(e) => {
            return Err(format!(
                "exit {code}, stdout not one JSON document ({e}); stderr: {}",
                stderr.lines().last().unwrap_or("")
            ))
        }
    };
    if !matches!(code, 0 | 3) {
        return Err(format!(
            "exit {code}: {}",
            stderr.lines().last().unwrap_or("")
        ));
    }
    let t = &case.truth;
    match case.cmd {
        Cmd::Align => geometry_grades(&doc, t, &mut graded),
        Cmd::OpenAu => open_au_grade(&doc, t, &mut graded),
        Cmd::Probe => capacity_grades(code, &doc, t, &mut graded),
        Cmd::Auto => {
            capacity_grades(code, &doc, t, &mut graded);
            // Beyond a fake's real capacity the geometry is the aliased card's, still
            // the same erase block; open-au runs inside the first GiB.
            geometry_grades(&doc, t, &mut graded);
            open_au_grade(&doc, t, &mut graded);
        }
    }
    Ok(graded)
}

#[test]
fn every_simulator_key_is_answered_right_or_inconclusive_never_confidently_wrong() {
    let seed = std::env::var("KEYSPACE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261127u64);
    let cases: usize = std::env::var("KEYSPACE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(520);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    // Align is the cheapest and has the most keys that change what it sees: half the
    // cases; the writing commands share the rest.
    let plan = [
        Cmd::Align,
        Cmd::Align,
        Cmd::OpenAu,
        Cmd::Align,
        Cmd::Probe,
        Cmd::Align,
        Cmd::Probe,
        Cmd::Auto,
    ];
    let all: Vec<Case> = (0..cases)
        .map(|i| draw(&mut rng, plan[i % plan.len()]))
        .collect();
    let t0 = std::time::Instant::now();
    let results: Vec<Result<Graded, String>> = std::thread::scope(|sc| {
        let chunks: Vec<&[Case]> = all.chunks(cases.div_ceil(2).max(1)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| sc.spawn(move || chunk.iter().map(run_case).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut tallies: std::collections::BTreeMap<(&str, &str), Tally> = Default::default();
    let mut failures = String::new();
    // Floors: where the step is plain (>= 5 % of a read, no read cache, noise under
    // 15 %), align's erase block; where a fake has no cache, probe's FAKE.
    let (mut plain, mut plain_right) = (0, 0);
    let (mut bare_fakes, mut bare_fakes_caught) = (0, 0);
    for (case, r) in all.iter().zip(&results) {
        match r {
            Err(e) => {
                let _ = writeln!(failures, "{} {}: {e}", case.cmd.name(), case.spec);
            }
            Ok(g) => {
                for (what, grade, said) in &g.answers {
                    tallies
                        .entry((case.cmd.name(), what))
                        .or_default()
                        .add(*grade);
                    if *grade == Grade::Wrong {
                        let _ = writeln!(
                            failures,
                            "{} {}: {what} confidently wrong: {said}",
                            case.cmd.name(),
                            case.spec
                        );
                    }
                    if case.cmd == Cmd::Align
                        && *what == "erase_block"
                        && case.truth.erase_plain
                        && case.truth.read_cache == 0
                    {
                        plain += 1;
                        plain_right += (*grade == Grade::Right) as usize;
                    }
                    if *what == "capacity"
                        && case.truth.real.is_some()
                        && case.truth.fake_cache == 0
                    {
                        bare_fakes += 1;
                        bare_fakes_caught += (*grade == Grade::Right) as usize;
                    }
                }
            }
        }
    }
    eprintln!(
        "keyspace sweep: {cases} cases (seed {seed}) in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    for ((cmd, what), t) in &tallies {
        eprintln!("  {cmd} {what}: {}", t.line());
    }
    eprintln!(
        "  floors: align erase block right in {plain_right} of {plain} plain cases; probe/auto caught {bare_fakes_caught} of {bare_fakes} fakes without a write cache"
    );
    assert!(
        failures.is_empty(),
        "confidently wrong or failed:\n{failures}"
    );
    // Floors, below what the sweep gives so a noisier draw passes, far above what a
    // sweep that answered "inconclusive" everywhere would give: a plain step is what
    // flashbench users read by eye; a fake with no cache is what every peer catches.
    assert!(
        plain_right * 10 >= plain * 8,
        "align found the erase block in only {plain_right} of {plain} plain cases"
    );
    assert_eq!(
        bare_fakes_caught, bare_fakes,
        "a fake with no write cache passed"
    );
}

// Named regression tests: each is a case the sweep found.

/// A card with 4 KiB logical sectors: auto's FAT step wrote 512-byte blocks and the run
/// stopped with "--blocksize 512 must be a multiple of the 4096-byte sector", an option
/// the user never gave. The step's block now defaults to the device's sector.
#[test]
fn auto_write_on_a_4k_sector_card_runs_every_step() {
    let spec = "sim:custom,size=8G,erase=4M,page=16K,sector=4096,seed=7";
    let doc = crate::common::json(&["auto", spec, "--write"]);
    assert_eq!(doc["inferences"]["erase_block_bytes"]["value"], 4u64 << 20);
    assert_eq!(doc["inferences"]["open_au"]["value"], 4u64);
    let fat = crate::common::json(&["fat", spec, "--write"]);
    assert_eq!(fat["parameters"]["block_bytes"], 4096u64, "{fat}");
}

/// A 2 GiB card with 64 MiB erase blocks: 32 of them past the default offset do not fit,
/// and open-au refused with "--max-au 32: … use --max-au 28 or less" though the user
/// gave no --max-au. The default is bounded by the device; a given value still is not.
#[test]
fn open_au_without_max_au_fits_its_default_to_the_device() {
    let spec = "sim:custom,size=2G,erase=64M,page=16K,open_au=8,seed=3";
    let doc = crate::common::json(&["open-au", spec, "--write"]);
    assert_eq!(doc["inferences"]["open_au"]["value"], 8u64, "{doc}");
    crate::common::fails_with(
        &["open-au", spec, "--write", "--max-au", "32"],
        2,
        "use --max-au 28 or less",
    );
}

/// Issue 43.1: a controller read cache answered align's repeats and the boundary cost
/// vanished: "erase-block structure: none visible (confident)" on a card with 4 MiB erase
/// blocks (45 of 50 runs with caches of 64 KiB or more). Now the erase block is found
/// through the cache where the reads the medium answered show it, and where the repeats
/// are the cache's the answer is inconclusive and names the cache; never "none visible".
#[test]
fn a_read_cache_never_gives_a_confident_none_visible() {
    let (mut named, mut right, mut small, mut small_right) = (0, 0, 0, 0);
    for cache in ["64K", "256K", "1M", "4M"] {
        for prefetch in ["0", "64K"] {
            for seed in 1..=3 {
                let spec = format!(
                    "sim:custom,size=2G,erase=4M,page=16K,read_cache={cache},prefetch={prefetch},read_hit=20us,wake=50us,seed={seed}"
                );
                let doc = crate::common::json(&["align", &spec]);
                let st = &doc["inferences"]["erase_block_structure"];
                assert!(st["value"] != "none visible", "{spec}: {st}");
                let erase = &doc["inferences"]["erase_block_bytes"];
                assert!(
                    erase["value"].is_null() || erase["value"] == 4u64 << 20,
                    "{spec}: {erase}"
                );
                let is_named = st["evidence"]
                    .as_str()
                    .is_some_and(|e| e.contains("answered by a cache"));
                let is_right = erase["value"] == 4u64 << 20;
                assert!(
                    is_named || is_right,
                    "{spec}: neither found nor named: {st}"
                );
                named += is_named as usize;
                right += is_right as usize;
                if cache == "64K" || cache == "256K" {
                    small += 1;
                    small_right += is_right as usize;
                }
            }
        }
    }
    eprintln!("read caches: erase block right in {right} of 24, the cache named in {named}");
    // Each run is right or names the cache (above). With the repeats a cache answered left
    // out of the rows, the erase block is found in 21 of 24 runs (the 4 MiB cache without
    // read-ahead is named instead): hold it at 3 in 4.
    assert!(
        right >= 18,
        "the erase block was right in only {right} of 24 runs"
    );
    // The floor: caches up to 256 KiB, the erase block right in 8 of 10.
    assert!(
        small_right * 10 >= small * 8,
        "the erase block was right in only {small_right} of {small} runs with caches up to 256 KiB"
    );
}

/// A 12 KiB page on a 4 KiB-sector card: align's 8 KiB reads start at 16 KiB alignments,
/// so 12 KiB is never measured and a step at 24 KiB was named with confidence ("page 24
/// KiB (confident)"). A boundary every 12 KiB makes the same rows pay: at most tentative.
#[test]
fn a_page_whose_half_was_not_measured_is_not_named_with_confidence() {
    for seed in [2047805710u64, 1839203621, 7] {
        let spec = format!(
            "sim:custom,size=2G,erase=6M,page=12K,erase_cost=221443ns,page_cost=58272ns,noise=0.059,sector=4096,seed={seed}"
        );
        let doc = crate::common::json(&["align", &spec]);
        let page = &doc["inferences"]["page_bytes"];
        assert!(
            page["value"].is_null() || page["value"] == 12288 || page["status"] != "confident",
            "{spec}: {page}"
        );
    }
}

/// Issue 43.1: a 4 KiB read cache with no read-ahead answers some of align's 1 KiB repeats
/// and not others, by the order of the reads; a hit pays no command time, so hits beside
/// a boundary and none across it made a step of a whole read and named a 4 KiB page
/// (tentative) on a 16 KiB-page card in 3 of 10 runs. Now the repetitions a cache answered
/// are left out, and the page is right or inconclusive.
#[test]
fn a_4k_read_cache_names_no_wrong_page() {
    let mut right = 0;
    for seed in 1..=12 {
        let spec = format!("sim:custom,size=2G,erase=4M,page=16K,read_cache=4KiB,seed={seed}");
        let doc = crate::common::json(&["align", &spec]);
        let page = &doc["inferences"]["page_bytes"];
        assert!(
            page["value"].is_null() || page["value"] == 16384,
            "{spec}: {page}"
        );
        let erase = &doc["inferences"]["erase_block_bytes"];
        assert!(
            erase["value"].is_null() || erase["value"] == 4u64 << 20,
            "{spec}: {erase}"
        );
        right += (page["value"] == 16384) as usize;
    }
    // The 4 KiB and 16 KiB reads see the page through so small a cache.
    assert!(right >= 8, "the page was right in only {right} of 12 runs");
}

/// Issue 43.1: where a read cache still answers align's repeats, the message names the
/// cache and states no size for it. A floor from the timings (the fast repeats against the
/// bytes read at other positions between two reads of one position) counted noisy medium
/// reads as hits and stated "at least 2.07 MiB" for a 1 MiB cache; with the read-cache
/// filter it stated a size for the 4 and 8 MiB caches that no test could show was sound.
#[test]
fn a_named_read_cache_states_no_size() {
    let mut named = 0;
    for cache in ["1M", "4M", "8M"] {
        for seed in 1..=2 {
            let spec = format!(
                "sim:custom,size=2G,erase=4M,page=16K,read_cache={cache},prefetch=0,read_hit=20us,seed={seed}"
            );
            let doc = crate::common::json(&["align", &spec]);
            let ev = doc["inferences"]["erase_block_structure"]["evidence"]
                .as_str()
                .unwrap_or("")
                .to_string();
            if !ev.contains("answered by a cache") {
                continue;
            }
            named += 1;
            assert!(
                !ev.contains("a cache of at least") && !ev.contains("could not bound"),
                "{spec}: {ev}"
            );
        }
    }
    // Without read-ahead the 4 and 8 MiB caches answer the spread repeats too: named there
    // (the 1 MiB cache's misses show the erase block).
    assert!(named >= 4, "the cache was named only {named} times");
}

/// The throughput inference of `interval` on `spec` (the binary, `--json`).
fn interval_throughput(spec: &str) -> serde_json::Value {
    let doc = crate::common::json(&["interval", spec]);
    doc["inferences"]["throughput_bytes_per_s"].clone()
}

/// Issue 43.5: `interval` on a loop over a disk file gave 879 to 3,424 MB/s in six runs,
/// five "confident" at ± 1–5 %: one run's standard error said nothing of the next. A
/// simulated card whose speed drifts during the run (`drift`, faster or slower) now gets
/// no confident figure, and says its ± covers this run only and why.
#[test]
fn a_drifting_device_gets_no_confident_narrow_interval() {
    for drift in ["0.3", "1", "-0.2"] {
        for seed in 1..=3 {
            let spec = format!("sim:sd-16g,drift={drift},seed={seed}");
            let t = interval_throughput(&spec);
            assert_ne!(t["status"], "confident", "{spec}: {t}");
            let ev = t["evidence"].as_str().unwrap_or("");
            assert!(
                t["value"].is_null()
                    || ev.contains("covers this run only; the device was not steady (first half"),
                "{spec}: {t}"
            );
        }
    }
}

/// The negative control of the test above: a steady card keeps its confident interval.
#[test]
fn a_steady_device_keeps_its_confident_interval() {
    for seed in 1..=5 {
        let spec = format!("sim:sd-16g,seed={seed}");
        let t = interval_throughput(&spec);
        assert_eq!(t["status"], "confident", "{spec}: {t}");
        assert!(
            !t["evidence"].as_str().unwrap_or("").contains("not steady"),
            "{spec}: {t}"
        );
    }
}

/// The erase block and page `align` names on `spec` are `erase` and `page` or inconclusive:
/// a tentative value may be wrong, a confident one may not.
fn align_right_or_inconclusive(spec: &str, erase: u64, page: u64) {
    let doc = crate::common::json(&["align", spec]);
    for (what, truth) in [("erase_block_bytes", erase), ("page_bytes", page)] {
        let i = &doc["inferences"][what];
        assert!(
            i["value"].is_null() || i["value"] == truth || i["status"] != "confident",
            "{spec}: {what} {i}"
        );
    }
}

// Found by the sweep (KEYSPACE_CASES=1000 KEYSPACE_SEED=43007, before the repetitions a
// read cache answered were left out of the rows): confidently wrong through read caches.

/// A 1 MiB read cache with 4 KiB read-ahead on a 768 KiB / 24 KiB card, 11 % noise: "erase
/// block 48 MiB (confident)".
#[test]
fn sweep_a_1m_read_cache_names_no_48m_erase_block() {
    align_right_or_inconclusive(
        "sim:custom,size=2147483648,erase=786432,page=24576,erase_cost=346782ns,page_cost=22420ns,read_cache=1048576,read_hit=73us,prefetch=4096,noise=0.114,open_au=3,fat_au=3,seed=1656012589",
        768 << 10,
        24 << 10,
    );
}

/// A 4 MiB read cache on a 4 MiB / 64 KiB card with 4 KiB sectors: "erase block 12 MiB
/// (confident)".
#[test]
fn sweep_a_4m_read_cache_names_no_12m_erase_block() {
    align_right_or_inconclusive(
        "sim:custom,size=536870912,erase=4194304,page=65536,erase_cost=211362ns,page_cost=140911ns,read_cache=4194304,read_hit=81us,noise=0.051,sector=4096,open_au=7,fat_au=0,seed=1530159474",
        4 << 20,
        64 << 10,
    );
}

/// A 4 KiB read cache on a 128 KiB / 16 KiB card: "page 4 KiB (confident)".
#[test]
fn sweep_a_4k_read_cache_names_no_4k_page() {
    align_right_or_inconclusive(
        "sim:custom,size=8589934592,erase=131072,page=16384,erase_cost=146377ns,page_cost=115306ns,read_cache=4096,read_hit=40us,noise=0.077,open_au=11,fat_au=0,seed=1912316379",
        128 << 10,
        16 << 10,
    );
}

/// Found by the sweep after the change above (KEYSPACE_CASES=1000 KEYSPACE_SEED=43007):
/// a 4 MiB read cache on a 12 MiB / 12 KiB card with 4 KiB sectors and 12 % noise gave
/// "erase block 1.5 MiB (confident)": the repetitions the cache answered were left out
/// only where they were a minority, and the 8 KiB rows up to 768 KiB were 9 in 10 hits
/// (no cost) against the 1.5 MiB row's misses (a 12 KiB page's cost). Now every
/// repetition a cache answered is left out, and the rows it emptied are no points.
#[test]
fn sweep_a_4m_read_cache_names_no_1_5m_erase_block() {
    align_right_or_inconclusive(
        "sim:custom,size=4294967296,erase=12582912,page=12288,erase_cost=128626ns,page_cost=172374ns,read_cache=4194304,read_hit=94us,noise=0.117,sector=4096,open_au=8,fat_au=1,slc=268435456,seed=2780316507",
        12 << 20,
        12 << 10,
    );
}

/// Found by the CI-default sweep (seed 20261127) once every repetition with a hit was
/// left out: a 4 MiB read cache on a 24 MiB / 16 KiB card whose transfers outweigh its
/// command time gave "erase block 48 MiB (confident)". A 32 KiB hit took 1.5 ms against
/// 2.1 ms from the medium, 43 % of the first access, so no hit was seen at 32 and 128 KiB
/// and the rows read over and over showed no cost at 24 MiB. Hits are now told by the
/// medium's command time and time per byte from the first accesses.
#[test]
fn sweep_a_4m_read_cache_names_no_48m_erase_block_where_transfers_dominate() {
    align_right_or_inconclusive(
        "sim:custom,size=17179869184,erase=25165824,page=16384,erase_cost=200440ns,page_cost=0ns,read_cache=4194304,read_hit=85us,prefetch=4096,noise=0.053,sector=4096,open_au=6,fat_au=1,seed=2978841310",
        24 << 20,
        16 << 10,
    );
}

// Found by a 1500-case sweep (KEYSPACE_CASES=1500 KEYSPACE_SEED=18954, 2026-11-28): two
// erase blocks named at twice their size, confidently, behind 4 MiB read caches; both
// through `auto --write`, whose align step reads as `align` does.

/// A 4 MiB read cache on a 32 MiB / 32 KiB card with 4 KiB sectors: "erase block 64 MiB
/// (confident)". At multiples of 32 MiB the 8 KiB reads paid the full cost (571 µs ±
/// 36 µs) while the 32 KiB reads, which the cache answered there, cost 138 µs less than
/// the reads beside them.
#[test]
fn sweep_a_4m_read_cache_names_no_64m_erase_block_on_a_32m_card() {
    align_right_or_inconclusive(
        "sim:custom,size=34359738368,erase=33554432,page=32768,erase_cost=483736ns,page_cost=66254ns,read_cache=4194304,read_hit=54us,prefetch=4096,noise=0.103,sector=4096,open_au=13,fat_au=1,seed=4291635369",
        32 << 20,
        32 << 10,
    );
}

/// A 4 MiB read cache with 64 KiB read-ahead on a 64 MiB / 16 KiB fake (512 MiB real,
/// limbo): "erase block 128 MiB (confident)". No block size showed the cost at 64 MiB,
/// and the 32 KiB reads there cost 96 µs less than the reads beside them, which no medium
/// does.
#[test]
fn sweep_a_4m_read_cache_names_no_128m_erase_block_on_a_64m_fake() {
    align_right_or_inconclusive(
        "sim:custom,size=4294967296,erase=67108864,page=16384,erase_cost=469870ns,page_cost=149743ns,read_cache=4194304,read_hit=65us,prefetch=65536,noise=0.095,outliers=0.0033,sector=4096,open_au=9,fat_au=2,real=536870912,fake_mode=limbo,cache=268435456,seed=135679192",
        64 << 20,
        16 << 10,
    );
}

/// Found by the key-space sweep (issue 43): a 1 MiB read cache on a 64 MiB / 32 KiB card
/// with 4 KiB sectors gave "erase block 32 MiB (confident, 0.91)". The 64 MiB row (the
/// largest alignment, which can be no step of its own) cost 411 µs for 8 KiB reads, the
/// 32 MiB row 195 µs there, the page's cost alone; only the 32 and 128 KiB reads were
/// raised at 32 MiB. An erase block of 32 MiB would cost the same at 32 and 64 MiB.
#[test]
fn sweep_a_1m_read_cache_on_4k_sectors_names_no_32m_erase_block_on_a_64m_card() {
    align_right_or_inconclusive(
        "sim:custom,size=1073741824,erase=67108864,page=32768,erase_cost=233450ns,page_cost=194135ns,read_cache=1048576,read_hit=36us,wake=181us,noise=0.047,outliers=0.0026,sector=4096,open_au=16,fat_au=3,seed=1367662377",
        64 << 20,
        32 << 10,
    );
}
