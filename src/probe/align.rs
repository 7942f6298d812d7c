//! The align probe: timed reads just before, across and just after multiples of each
//! alignment, for one or several block sizes. Returns samples; never prints or decides.
//!
//! For alignment `A` and block size `bs`, at each position `P = A·k` the probe reads `bs`
//! bytes at `P − bs` (pre), `P − bs/2` (on, straddling `P`) and `P` (post). The `k` are
//! odd and not multiples of 3, spread over the device, so a boundary of size `X` (2^n or
//! 3 × 2^n) lies at `P` exactly when `X` divides `A`; the step pattern then reads directly
//! as a divisibility pattern (see `analysis::align`).
//!
//! What controllers and hosts do to reads must not make a step (issue 33: on zram the
//! rows whose one position was re-read answered from a cache, the rows of eight positions
//! paid a slow first read, and the difference looked like an erase block). So:
//! - every row has the same number of distinct positions (alignments with fewer multiples
//!   on the device are not measured);
//! - each visit to a row first reads every position's whole neighbourhood `[P − bs,
//!   P + bs)` once (the first access, in a random order); those times are kept apart
//!   (`AlignCell::first`) and never enter a boundary cost, so pre, on and post are all
//!   repeats whatever a cache or a wake-up does to a first access;
//! - then pre, on and post each sweep every position in a random order, the kinds in a
//!   random order, and no read follows one at the same position (a controller's page
//!   register cannot answer it), as flashbench interleaves its positions.

use crate::analysis::align::{cached_repeats, candidate_sizes, MIN_SAMPLES};
pub use crate::analysis::align::{AlignCell, Next};
use crate::backend::{AlignedBuf, Backend};
use crate::vocab::units::format_bytes;
use crate::{Error, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;

/// What to measure and how long.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AlignConfig {
    pub block_sizes: Vec<u64>,
    /// Distinct positions of every alignment measured (an alignment with fewer multiples
    /// on the device is not measured).
    pub positions: usize,
    /// A fixed number of full rounds (no adaptivity) when set.
    pub count: Option<u32>,
    /// Stop adaptive rounds when this much time (backend clock) has passed.
    pub time_budget_ns: u64,
    /// Stop adaptive rounds before exceeding this many timed reads (pre, on, post; the
    /// first accesses, one per position and visit, come on top).
    pub max_reads: u64,
}

/// The samples of a run and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AlignRun {
    pub cells: Vec<AlignCell>,
    pub reads: u64,
    pub rounds: u32,
    /// Time spent inside reads (backend clock).
    pub io_time_ns: u64,
    /// Time from the first read to the last (backend clock).
    pub elapsed_ns: u64,
    /// Why the run ended: "confident", "count", "time budget", "read budget".
    pub stop_reason: String,
    /// Whether the repeats of the first visits were answered by a read cache, so the run
    /// was read again spread (every round one pass over all its cells' positions).
    pub spread: bool,
}

/// Reads `flashbench -a -b BS` does on a device of `size` bytes: 8 tries × 3 reads × 7
/// positions at every power of two from 2 × BS to the first one reaching size / 7.
pub fn flashbench_align_reads(size: u64, block: u64) -> u64 {
    if block == 0 {
        return 0;
    }
    let mut max = block.saturating_mul(2);
    while max < size / 7 {
        max = max.saturating_mul(2);
    }
    let mut n = 0;
    let mut a = max;
    while a >= block.saturating_mul(2) && a > 0 {
        n += 1;
        a /= 2;
    }
    8 * 3 * 7 * n
}

/// The default read sizes: 2, 8 and 32 logical sectors (of at least 512 bytes).
pub fn default_block_sizes(sector: u32) -> Vec<u64> {
    let s = sector.max(512) as u64;
    vec![2 * s, 8 * s, 32 * s]
}

/// Largest single read the geometry probes allocate a buffer for.
pub const MAX_READ_BYTES: u64 = 64 << 20;

/// Check the request against the device; errors name the value and the fix.
pub fn validate(size: u64, sector: u32, block_sizes: &[u64]) -> Result<()> {
    if block_sizes.is_empty() {
        return Err(Error::usage("no block size given: use e.g. --blocksize 4K"));
    }
    for &bs in block_sizes {
        if bs > MAX_READ_BYTES {
            return Err(Error::usage(format!(
                "block size {} is larger than the {} this test reads at once: use e.g. --blocksize 16K",
                format_bytes(bs),
                format_bytes(MAX_READ_BYTES)
            )));
        }
        if bs == 0 || bs % sector as u64 != 0 || bs % 2 != 0 {
            return Err(Error::usage(format!(
                "block size {bs} bytes is not a multiple of the device's {sector}-byte logical sector: use e.g. --blocksize {}",
                sector as u64 * 2
            )));
        }
        if bs / 2 % sector as u64 != 0 {
            return Err(Error::usage(format!(
                "block size {} is too small: the straddling read starts half a block before the boundary, which must be a multiple of the {sector}-byte sector; use at least --blocksize {}",
                format_bytes(bs),
                2 * sector as u64
            )));
        }
        if size < bs.saturating_mul(4) {
            return Err(Error::usage(format!(
                "the target ({}) is smaller than 4 × the block size {}: use a smaller --blocksize",
                format_bytes(size),
                format_bytes(bs)
            )));
        }
    }
    Ok(())
}

/// Multipliers k (odd, not a multiple of 3) with `A·k + bs ≤ size`, up to `n` of them
/// spread evenly over the device: from the first to the last, or with a `phase` (0 to 1),
/// each at that phase of its share of the candidates. Spread rounds (`run`) give cells
/// different phases, so the positions of different alignments do not bunch up at the same
/// few places (every alignment's first multiple near the start): a read-ahead after one
/// cell's read would answer another cell's read there.
fn positions(size: u64, align: u64, block: u64, n: usize, phase: Option<f64>) -> Vec<u64> {
    let kmax = size.saturating_sub(block) / align;
    let mut ks: Vec<u64> = Vec::new();
    // Walk candidates without materialising huge ranges: step through 6j ± 1.
    let total = {
        // count of k <= kmax with k ≡ 1 or 5 (mod 6)
        let full = kmax / 6;
        let rem = kmax % 6;
        full * 2 + u64::from(rem >= 1) + u64::from(rem >= 5)
    };
    if total == 0 {
        return ks;
    }
    let nth = |i: u64| -> u64 {
        // i-th (0-based) number ≡ 1 or 5 mod 6
        6 * (i / 2) + if i % 2 == 0 { 1 } else { 5 }
    };
    let want = (n as u64).min(total);
    for j in 0..want {
        let i = match phase {
            Some(p) => (((j as f64 + p.clamp(0.0, 1.0)) * total as f64 / want as f64) as u64)
                .min(total - 1),
            None if want == 1 => 0,
            None => j * (total - 1) / (want - 1),
        };
        ks.push(nth(i));
    }
    ks.dedup();
    ks.into_iter().map(|k| k * align).collect()
}

/// The cells of a sweep: every alignment 2^n and 3 × 2^n from 2 × bs to the largest with
/// `config.positions` distinct positions on the device, for each block size; with `spread`,
/// each cell's positions at its own golden-ratio phase (see `positions`).
pub fn plan_cells(size: u64, config: &AlignConfig, spread: bool) -> Vec<AlignCell> {
    let mut cells = Vec::new();
    let n = config.positions.max(1);
    let mut phase = 0.0f64;
    for &bs in &config.block_sizes {
        for a in candidate_sizes(2 * bs, size.saturating_sub(bs))
            .into_iter()
            .rev()
        {
            phase = (phase + 0.618_033_988_749_895) % 1.0;
            let pos = positions(size, a, bs, n, spread.then_some(phase));
            if pos.len() < n {
                continue;
            }
            cells.push(AlignCell {
                block_bytes: bs,
                align_bytes: a,
                positions: pos,
                reads: Vec::new(),
                first: Vec::new(),
            });
        }
    }
    cells
}

/// Fewest alignments per block size a sweep needs: a step needs alignments below it and
/// at least two above.
pub const MIN_ALIGNMENTS: usize = 4;

/// Refuse a sweep that cannot find a step: some block size with fewer than
/// `MIN_ALIGNMENTS` alignments holding `positions` distinct positions on the device.
pub fn check_plan(size: u64, config: &AlignConfig, cells: &[AlignCell]) -> Result<()> {
    for &bs in &config.block_sizes {
        let n = cells.iter().filter(|c| c.block_bytes == bs).count();
        if n < MIN_ALIGNMENTS {
            return Err(Error::usage(format!(
                "the target ({}) holds {} distinct positions at only {n} alignments for block size {} (at least {MIN_ALIGNMENTS} are needed): use fewer --positions or a smaller --blocksize",
                format_bytes(size),
                config.positions,
                format_bytes(bs)
            )));
        }
    }
    Ok(())
}

/// Sweeps that make one measurement unit of a cell (one visit): at least `MIN_SAMPLES` reads of
/// each kind.
fn unit_sweeps(cell: &AlignCell) -> u64 {
    MIN_SAMPLES.div_ceil(cell.positions.len().max(1)) as u64
}

/// Timed reads in one measurement unit of a cell (three per position; the first accesses
/// come on top and are not counted against the read budget).
fn unit_cost(cell: &AlignCell) -> u64 {
    3 * cell.positions.len() as u64 * unit_sweeps(cell)
}

fn read_ns<B: Backend + ?Sized>(
    dev: &mut B,
    buf: &mut [u8],
    offset: u64,
    io_time: &mut u64,
) -> Result<u64> {
    let t0 = dev.clock_ns();
    dev.read_at(buf, offset).map_err(|e| {
        Error::io(
            format!(
                "reading {} at offset {offset}",
                format_bytes(buf.len() as u64)
            ),
            e,
        )
    })?;
    let t = dev.clock_ns().saturating_sub(t0);
    *io_time += t;
    Ok(t)
}

/// Measure one visit to a cell: the first access to every position's neighbourhood (kept
/// apart), then `sweeps` times pre, on and post, each over every position in a random
/// order, the kinds in a random order, never twice in a row at one position. One first
/// access serves every sweep of the visit: it puts the neighbourhoods in the state the
/// repeats find them in, and a second one would cost a read of twice the block size per
/// position (about a third of a run's time) for nothing the analysis uses.
fn measure_cell<B: Backend + ?Sized>(
    dev: &mut B,
    cell: &mut AlignCell,
    sweeps: u64,
    buf: &mut AlignedBuf,
    io_time: &mut u64,
    rng: &mut rand_pcg::Pcg64,
) -> Result<u64> {
    let bs = cell.block_bytes;
    let n = cell.positions.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    for &i in &order {
        let t = read_ns(
            dev,
            &mut buf[..2 * bs as usize],
            cell.positions[i] - bs,
            io_time,
        )?;
        cell.first.push([i as u64, t]);
    }
    let buf = &mut buf[..bs as usize];
    let mut last = order.last().copied();
    for _ in 0..sweeps {
        let mut t = vec![[0u64; 3]; n];
        let mut kinds = [(0usize, bs), (1, bs / 2), (2, 0)];
        kinds.shuffle(rng);
        for (j, shift) in kinds {
            order.shuffle(rng);
            if n > 1 && Some(order[0]) == last {
                order.swap(0, 1);
            }
            for &i in &order {
                t[i][j] = read_ns(dev, buf, cell.positions[i] - shift, io_time)?;
            }
            last = order.last().copied();
        }
        for (i, r) in t.into_iter().enumerate() {
            cell.reads.push([i as u64, r[0], r[1], r[2]]);
        }
    }
    Ok((1 + 3 * sweeps) * n as u64)
}

/// Measure one round over the `chosen` cells (a visit to each): the first access to every
/// position's neighbourhood (kept apart), then `sweeps` times pre, on and post, the kinds
/// in a random order. Every pass (the first accesses, and each kind of each sweep) reads
/// every position of every chosen cell once, in one random order kept for the whole
/// round, so between two reads at one position come the reads of every other position:
/// a controller's read cache smaller than what one pass reads (with its read-ahead) has
/// forgotten the position by then, and each timed read is answered by the medium (issue
/// 43: read cell by cell, a 64 KiB cache answered every repeat and hid the erase block).
/// Returns the reads done.
#[allow(clippy::too_many_arguments)]
fn measure_round<B: Backend + ?Sized>(
    dev: &mut B,
    cells: &mut [AlignCell],
    chosen: &[usize],
    sweeps: u64,
    buf: &mut AlignedBuf,
    io_time: &mut u64,
    rng: &mut rand_pcg::Pcg64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<u64> {
    let mut slots: Vec<(usize, usize)> = chosen
        .iter()
        .flat_map(|&c| (0..cells[c].positions.len()).map(move |i| (c, i)))
        .collect();
    slots.shuffle(rng);
    let mut reads = 0u64;
    for &(c, i) in &slots {
        let bs = cells[c].block_bytes;
        let at = cells[c].positions[i] - bs;
        let t = read_ns(dev, &mut buf[..2 * bs as usize], at, io_time)?;
        cells[c].first.push([i as u64, t]);
        reads += 1;
    }
    for _ in 0..sweeps {
        let mut t = vec![[0u64; 3]; slots.len()];
        let mut kinds = [0usize, 1, 2];
        kinds.shuffle(rng);
        for j in kinds {
            for (s, &(c, i)) in slots.iter().enumerate() {
                let bs = cells[c].block_bytes;
                let shift = [bs, bs / 2, 0][j];
                let at = cells[c].positions[i] - shift;
                t[s][j] = read_ns(dev, &mut buf[..bs as usize], at, io_time)?;
            }
            reads += slots.len() as u64;
            progress(slots.len() as u64, *io_time);
        }
        for (&(c, i), r) in slots.iter().zip(t) {
            cells[c].reads.push([i as u64, r[0], r[1], r[2]]);
        }
    }
    Ok(reads)
}

/// The cells a round reads after `plan`, and how many visits to each: a focus round
/// measures the few decisive alignments at every block size (the answer must agree across
/// them), or a longer list at the smallest block size only (the least noisy reads); it
/// repeats its cells so that one round spends about a twelfth of the read budget. Rows not
/// believed yet are read again at their own block size. A full round: every cell, once.
fn round_cells(
    cells: &[AlignCell],
    plan: &Next,
    smallest: u64,
    max_reads: u64,
) -> (Vec<usize>, u64) {
    let none = Vec::new();
    let focus = match plan {
        Next::Focus(aligns) => Some((aligns, &none)),
        Next::FocusRows { aligns, rows } => Some((aligns, rows)),
        Next::Full | Next::Stop => None,
    };
    let (chosen, reps): (Vec<usize>, u64) = match focus {
        Some((aligns, rows)) => {
            let v: Vec<usize> = (0..cells.len())
                .filter(|&i| {
                    let c = &cells[i];
                    ((c.block_bytes == smallest || aligns.len() <= 8)
                        && aligns.contains(&c.align_bytes))
                        || rows.contains(&(c.block_bytes, c.align_bytes))
                })
                .collect();
            let cost: u64 = v.iter().map(|&i| unit_cost(&cells[i])).sum();
            // Rows alone (the answer holds but some rows are not believed yet): one
            // unit each, then look again.
            let reps = if aligns.is_empty() {
                1
            } else {
                (max_reads / 12).checked_div(cost).unwrap_or(1).max(1)
            };
            (v, reps)
        }
        None => (Vec::new(), 1),
    };
    if chosen.is_empty() {
        ((0..cells.len()).collect(), reps)
    } else {
        (chosen, reps)
    }
}

/// A cell's device time in the one visit (or spread round) it was read in: its first
/// accesses and its timed reads, ns.
fn visit_ns(cell: &AlignCell) -> (u64, u64) {
    let first = cell.first.iter().map(|f| f[1]).sum();
    let timed = cell.reads.iter().map(|r| r[1] + r[2] + r[3]).sum();
    (first, timed)
}

/// The plan of the rest of an adaptive run after a round (issue 45.6): the rounds `plan`
/// asks for, repeated until the run's timed reads reach `goal`
/// (`analysis::align::planned_reads`), its read budget or its time budget. After the first
/// round each cell is priced at what its visit took on this device (a spread round reads
/// every chosen cell's first accesses once, then its sweeps); after a focus round, each
/// timed read at what that round's took (`per_read`, ns): a focus round reads few
/// positions over and over, which a read cache may answer where a full round's were not.
/// Device ns.
#[allow(clippy::too_many_arguments)]
fn rest_ns(
    cells: &[AlignCell],
    config: &AlignConfig,
    plan: &Next,
    spread: bool,
    mut timed: u64,
    goal: u64,
    mut elapsed_ns: u64,
    per_read: Option<f64>,
) -> u64 {
    let smallest = config.block_sizes.iter().copied().min().unwrap_or(0);
    let (chosen, reps) = round_cells(cells, plan, smallest, config.max_reads);
    let cost: u64 = chosen.iter().map(|&i| unit_cost(&cells[i])).sum();
    let (first, once): (u64, u64) = chosen
        .iter()
        .map(|&i| visit_ns(&cells[i]))
        .fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1));
    let mut ns = 0u64;
    while timed < goal && elapsed_ns < config.time_budget_ns {
        let reps = reps.min(config.max_reads.saturating_sub(timed) / cost.max(1));
        if reps == 0 || timed + cost > config.max_reads {
            break;
        }
        let round = match per_read {
            Some(r) => (r * (reps * cost) as f64) as u64,
            None if spread => first + reps * once,
            None => reps * (first + once),
        };
        ns += round;
        elapsed_ns += round;
        timed += reps * cost;
    }
    ns
}

/// Run the sweep: full rounds, then whatever `next` asks for after each round, until it
/// says stop or a budget ends (`count` rounds when fixed). `progress(done, total)` gets
/// reads done against the read budget.
///
/// Cells are read one visit at a time (`measure_cell`) while their repeats are answered by
/// the medium. When the first round's repeats are answered by a read cache
/// (`analysis::align::cached_repeats`: a controller's RAM holds a visit's few
/// neighbourhoods, so every timed read is a hit and no boundary cost shows, issue 43), the
/// cells read so far are dropped and the run starts again spread: each round is one pass
/// over all its cells' positions in one random order (`measure_round`), positions at
/// golden-ratio phases, so between two reads at one position come the reads of every
/// other one, more distinct data than a cache of several hundred KiB holds. A device
/// without such a cache is read exactly as before.
pub fn run<B: Backend + ?Sized>(
    dev: &mut B,
    config: &AlignConfig,
    next: &mut dyn FnMut(&[AlignCell], u64) -> Next,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<AlignRun> {
    run_planned(dev, config, next, progress, &mut |_, _| {})
}

/// Device time of one full round over `cells` read cell by cell, each read priced by
/// `price(bytes)` (ns): the first accesses (twice the block size) and the timed reads.
pub fn round_ns(cells: &[AlignCell], price: &dyn Fn(u64) -> u64) -> u64 {
    cells
        .iter()
        .map(|c| {
            c.positions.len() as u64 * price(2 * c.block_bytes)
                + unit_cost(c) * price(c.block_bytes)
        })
        .sum()
}

/// Timed reads of one full round over `cells` (what the read budget counts).
pub fn round_reads(cells: &[AlignCell]) -> u64 {
    cells.iter().map(unit_cost).sum()
}

/// [`run`], working its plan out again from this device's read times (issue 45.6):
/// `replan(total_ns, at_ns)` gets the whole run's device time as planned, `at_ns` into it,
/// (a) once the first round has read a cell of every block size (cell by cell: the rest of
/// the round priced at what each block size's visit took; spread, after a read cache was
/// seen: at what its first two passes took), for the whole round (times `count` when
/// fixed); (b) after the first round when the run goes on: the rounds `next` asks for
/// until the reads the stop rules leave (`analysis::align::planned_reads`), or a budget.
pub fn run_planned<B: Backend + ?Sized>(
    dev: &mut B,
    config: &AlignConfig,
    next: &mut dyn FnMut(&[AlignCell], u64) -> Next,
    progress: &mut dyn FnMut(u64, u64),
    replan: &mut dyn FnMut(u64, u64),
) -> Result<AlignRun> {
    let rounds_fixed = config.count.unwrap_or(1).max(1) as u64;
    let size = dev.size_bytes();
    validate(size, dev.logical_sector_bytes(), &config.block_sizes)?;
    let mut cells = plan_cells(size, config, false);
    check_plan(size, config, &cells)?;
    // Cell by cell until the repeats show a read cache, then spread (see `run`'s doc).
    let mut spread = false;
    let max_bs = config.block_sizes.iter().copied().max().unwrap_or(512) as usize;
    let mut buf = AlignedBuf::new(2 * max_bs);
    // The read order is random but the same for a device of the same size (a run repeats).
    let mut rng = rand_pcg::Pcg64::seed_from_u64(size ^ 0x616c_6967_6e33);
    let start = dev.clock_ns();
    let mut io_time = 0;
    let mut reads = 0u64;
    // Reads that enter a boundary cost (the read budget counts these).
    let mut timed = 0u64;
    let mut rounds = 0u32;
    let smallest = config.block_sizes.iter().copied().min().unwrap_or(0);
    let full_cost: u64 = cells.iter().map(unit_cost).sum();
    let total = match config.count {
        Some(c) => full_cost * c as u64,
        None => config.max_reads,
    };
    let mut plan = Next::Full;
    let stop_reason;
    loop {
        // What this round reads (`round_cells`).
        let (chosen, reps) = round_cells(&cells, &plan, smallest, config.max_reads);
        let cost: u64 = chosen.iter().map(|&i| unit_cost(&cells[i])).sum();
        let reps = if config.count.is_some() {
            1
        } else {
            reps.min(config.max_reads.saturating_sub(timed) / cost.max(1))
        };
        if config.count.is_none() && (reps == 0 || timed + cost > config.max_reads) {
            stop_reason = "read budget".to_string();
            break;
        }
        let round_start = dev.clock_ns().saturating_sub(start);
        let timed_start = timed;
        if spread {
            // Every cell has the same number of positions, so the same sweeps per visit.
            let sweeps = chosen.first().map_or(1, |&i| unit_sweeps(&cells[i])) * reps;
            let io0 = io_time;
            let mut passes: Vec<u64> = Vec::new();
            reads += measure_round(
                dev,
                &mut cells,
                &chosen,
                sweeps,
                &mut buf,
                &mut io_time,
                &mut rng,
                &mut |n, io| {
                    timed += n;
                    passes.push(io - io0);
                    if rounds == 0 && passes.len() == 2 {
                        // The first accesses and one pass, then one pass: the round's
                        // other passes read the same positions.
                        let pass = passes[1] - passes[0];
                        let first = passes[0].saturating_sub(pass);
                        let round = first + 3 * sweeps * pass;
                        replan(round_start + round * rounds_fixed, round_start + passes[1]);
                    }
                    progress(timed, total.max(timed));
                },
            )?;
        } else {
            let mut switch = false;
            // The first cell of the largest block size (cells go by block size).
            let last_size = chosen
                .iter()
                .position(|&i| cells[i].block_bytes as usize == max_bs);
            'visits: for _ in 0..reps {
                for (k, &i) in chosen.iter().enumerate() {
                    let sweeps = unit_sweeps(&cells[i]);
                    let n =
                        measure_cell(dev, &mut cells[i], sweeps, &mut buf, &mut io_time, &mut rng)?;
                    reads += n;
                    timed += 3 * sweeps * cells[i].positions.len() as u64;
                    progress(timed, total.max(timed));
                    if rounds == 0 && Some(k) == last_size {
                        let now = dev.clock_ns().saturating_sub(start);
                        let rest: u64 = chosen[k + 1..]
                            .iter()
                            .map(|&j| {
                                let bs = cells[j].block_bytes;
                                let seen: Vec<u64> = chosen[..=k]
                                    .iter()
                                    .filter(|&&m| cells[m].block_bytes == bs)
                                    .map(|&m| {
                                        let (f, t) = visit_ns(&cells[m]);
                                        f + t
                                    })
                                    .collect();
                                seen.iter().sum::<u64>() / seen.len().max(1) as u64
                            })
                            .sum();
                        let round = now - round_start + rest;
                        replan(round_start + round * rounds_fixed, now);
                    }
                    if rounds == 0 && cached_repeats(&cells).is_some() {
                        switch = true;
                        break 'visits;
                    }
                }
            }
            if switch {
                // The repeats so far were answered by a cache: drop them (their reads
                // stay counted against the budget) and start again spread.
                spread = true;
                cells = plan_cells(size, config, true);
                plan = Next::Full;
                continue;
            }
        }
        rounds += 1;
        let elapsed = dev.clock_ns().saturating_sub(start);
        if let Some(c) = config.count {
            if rounds >= c {
                stop_reason = "count".to_string();
                break;
            }
            plan = Next::Full;
            continue;
        }
        if elapsed >= config.time_budget_ns {
            stop_reason = "time budget".to_string();
            break;
        }
        plan = next(&cells, timed);
        if plan == Next::Stop {
            stop_reason = "confident".to_string();
            break;
        }
        if rounds <= 2 {
            // After the first round, and after the first focus round (priced at its own
            // reads' time).
            let per_read = (rounds == 2).then(|| {
                elapsed.saturating_sub(round_start) as f64
                    / timed.saturating_sub(timed_start).max(1) as f64
            });
            let goal = crate::analysis::align::planned_reads(&cells, config.max_reads);
            let rest = rest_ns(
                &cells, config, &plan, spread, timed, goal, elapsed, per_read,
            );
            replan(elapsed + rest, elapsed);
        }
    }
    Ok(AlignRun {
        cells,
        spread,
        reads,
        rounds,
        io_time_ns: io_time,
        elapsed_ns: dev.clock_ns().saturating_sub(start),
        stop_reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::align::points;
    use crate::backend::sim::{SimConfig, SimDevice};

    #[test]
    fn positions_are_odd_multiples_not_divisible_by_three() {
        let p = positions(1 << 30, 1 << 20, 1024, 8, None);
        assert_eq!(p[0], 1 << 20);
        let q = positions(1 << 30, 1 << 20, 1024, 8, Some(0.3));
        assert_eq!(q.len(), 8);
        assert!(q.iter().all(|x| (x >> 20) % 2 == 1 && (x >> 20) % 3 != 0));
        assert_eq!(p.len(), 8);
        for x in &p {
            let k = x >> 20;
            assert!(k % 2 == 1 && k % 3 != 0, "{k}");
            assert!(x + 1024 <= 1 << 30);
        }
        assert_eq!(positions(4096, 2048, 1024, 8, None), vec![2048]);
        assert_eq!(positions(4096, 2048, 1024, 8, Some(0.9)), vec![2048]);
    }

    #[test]
    fn flashbench_read_count_matches_its_loop() {
        // 16 GiB, 16 KiB blocks: 2^15 .. 2^32 = 18 alignments.
        assert_eq!(flashbench_align_reads(16 << 30, 16384), 8 * 21 * 18);
        assert_eq!(flashbench_align_reads(16 << 30, 0), 0);
    }

    #[test]
    fn bad_requests_are_refused_with_the_fix() {
        assert!(validate(8192, 512, &[4096]).is_err());
        let e = validate(1 << 30, 512, &[1000]).unwrap_err();
        assert!(e.to_string().contains("512-byte"), "{e}");
        let e = validate(1 << 30, 4096, &[4096]).unwrap_err();
        assert!(e.to_string().contains("too small"), "{e}");
    }

    #[test]
    fn straddling_reads_cost_more_on_the_simulated_card() {
        let mut dev =
            SimDevice::new(SimConfig::parse("custom,size=256M,noise=0,outliers=0").unwrap());
        let cfg = AlignConfig {
            block_sizes: vec![1024],
            positions: 4,
            count: Some(1),
            time_budget_ns: u64::MAX,
            max_reads: u64::MAX,
        };
        let run = run(&mut dev, &cfg, &mut |_, _| Next::Stop, &mut |_, _| {}).unwrap();
        let pts = points(&run.cells);
        let at = |a: u64| pts.iter().find(|p| p.align_bytes == a).unwrap().diff_ns;
        assert!((at(4 << 20) - 300_000.0).abs() < 1.0, "{}", at(4 << 20));
        assert!((at(16384) - 80_000.0).abs() < 1.0);
        assert!(at(8192).abs() < 1.0);
        assert!(
            at(6 << 20) - 80_000.0 < 1.0,
            "6 MiB is not a multiple of 4 MiB"
        );
        assert_eq!(
            run.reads,
            run.cells
                .iter()
                .map(|c| c.reads.len() as u64 * 3 + c.first.len() as u64)
                .sum::<u64>()
        );
        assert!(run.cells.iter().all(|c| c.positions.len() == 4));
    }
}
