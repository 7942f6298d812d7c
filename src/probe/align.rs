//! The align probe: timed reads just before, across and just after multiples of each
//! alignment, for one or several block sizes. Returns samples; never prints or decides.
//!
//! For alignment `A` and block size `bs`, at each position `P = A·k` the probe reads `bs`
//! bytes at `P − bs` (pre), `P − bs/2` (on, straddling `P`) and `P` (post). The `k` are
//! odd and not multiples of 3, spread over the device, so a boundary of size `X` (2^n or
//! 3 × 2^n) lies at `P` exactly when `X` divides `A`; the step pattern then reads directly
//! as a divisibility pattern (see `analysis::align`). Like flashbench, all pre reads of an
//! alignment come first, then all on reads, then all post reads, so no read follows one
//! that overlaps it.

use crate::analysis::align::{candidate_sizes, AlignPoint};
use crate::backend::{AlignedBuf, Backend};
use crate::units::format_bytes;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Every read of one (block size, alignment) cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlignCell {
    pub block_bytes: u64,
    pub align_bytes: u64,
    /// The boundaries `A·k` the on-reads straddle.
    pub positions: Vec<u64>,
    /// One entry per position and repetition: `[position index, pre ns, on ns, post ns]`.
    pub reads: Vec<[u64; 4]>,
}

impl AlignCell {
    /// Paired boundary costs `on − (pre + post)/2`, one per position and repetition.
    pub fn diffs(&self) -> Vec<f64> {
        self.reads
            .iter()
            .map(|r| r[2] as f64 - 0.5 * (r[1] as f64 + r[3] as f64))
            .collect()
    }

    /// flashbench's view of the cell: per position the minimum over repetitions, then the
    /// average over positions, as (pre, on, post) in ns.
    pub fn flashbench_times(&self) -> (f64, f64, f64) {
        let n = self.positions.len();
        let mut mins = vec![[u64::MAX; 3]; n];
        for r in &self.reads {
            if let Some(m) = mins.get_mut(r[0] as usize) {
                for j in 0..3 {
                    m[j] = m[j].min(r[j + 1]);
                }
            }
        }
        let seen: Vec<&[u64; 3]> = mins.iter().filter(|m| m[0] != u64::MAX).collect();
        if seen.is_empty() {
            return (f64::NAN, f64::NAN, f64::NAN);
        }
        let avg = |j: usize| seen.iter().map(|m| m[j] as f64).sum::<f64>() / seen.len() as f64;
        (avg(0), avg(1), avg(2))
    }
}

/// 20 % trimmed mean and the winsorized standard deviation of `v` (reordered in place;
/// linear time, since cells can hold thousands of repetitions).
fn trimmed(v: &mut [f64]) -> (f64, f64) {
    let n = v.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let g = (n as f64 * 0.2).floor() as usize;
    let (lo, hi) = if g == 0 {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    } else {
        let lo = *v.select_nth_unstable_by(g, |a, b| a.total_cmp(b)).1;
        let hi = *v[g..]
            .select_nth_unstable_by(n - 1 - 2 * g, |a, b| a.total_cmp(b))
            .1;
        (lo, hi)
    };
    // Trimmed mean over sorted ranks g ..= n−1−g, with ties at the edges counted by rank.
    let mut sum = 0.0;
    let (mut below, mut at_lo, mut at_hi, mut above) = (0usize, 0usize, 0usize, 0usize);
    for &x in v.iter() {
        if x < lo {
            below += 1;
        } else if x > hi {
            above += 1;
        } else if x == lo {
            at_lo += 1;
        } else if x == hi {
            at_hi += 1;
        } else {
            sum += x;
        }
    }
    let keep = n - 2 * g;
    let mean = if lo == hi {
        lo
    } else {
        let kept_lo = at_lo.saturating_sub(g.saturating_sub(below));
        let kept_hi = at_hi.saturating_sub(g.saturating_sub(above));
        (sum + lo * kept_lo as f64 + hi * kept_hi as f64) / keep.max(1) as f64
    };
    if n < 2 {
        return (mean, f64::NAN);
    }
    let wm = v.iter().map(|x| x.clamp(lo, hi)).sum::<f64>() / n as f64;
    let var = v
        .iter()
        .map(|x| (x.clamp(lo, hi) - wm).powi(2))
        .sum::<f64>()
        / (n - 1) as f64;
    (mean, var.sqrt())
}

/// Inference points from cells: the trimmed mean of the paired costs per cell, with a
/// standard error from the scatter pooled over the block size's cells (shrunk towards
/// the cell's own scatter as its repetitions grow).
pub fn points(cells: &[AlignCell]) -> Vec<AlignPoint> {
    let mut sizes: Vec<u64> = cells.iter().map(|c| c.block_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut out = Vec::new();
    for bs in sizes {
        let mut stats = Vec::new();
        for c in cells
            .iter()
            .filter(|c| c.block_bytes == bs && !c.reads.is_empty())
        {
            let mut d = c.diffs();
            let (m, s) = trimmed(&mut d);
            let mut base: Vec<f64> = c
                .reads
                .iter()
                .map(|r| 0.5 * (r[1] as f64 + r[3] as f64))
                .collect();
            let (b, _) = trimmed(&mut base);
            stats.push((c.align_bytes, m, s, d.len(), b));
        }
        let mut sds: Vec<f64> = stats
            .iter()
            .filter(|s| s.3 >= 4 && s.2.is_finite())
            .map(|s| s.2)
            .collect();
        sds.sort_by(|a, b| a.total_cmp(b));
        let pooled = if sds.is_empty() {
            f64::NAN
        } else {
            sds[sds.len() / 2]
        };
        for (a, m, s, n, b) in stats {
            let own = if s.is_finite() { s } else { pooled };
            let sd = if pooled.is_finite() {
                let w0 = 8.0;
                ((n as f64 * own * own + w0 * pooled * pooled) / (n as f64 + w0)).sqrt()
            } else {
                own
            };
            // A 20 % trimmed mean loses a little efficiency against the plain mean.
            let se = if sd.is_finite() {
                sd / (0.85 * (n as f64).sqrt())
            } else {
                0.0
            };
            out.push(AlignPoint {
                block_bytes: bs,
                align_bytes: a,
                diff_ns: m,
                se_ns: se,
                base_ns: b,
            });
        }
    }
    out
}

/// What to measure and how long.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlignConfig {
    pub block_sizes: Vec<u64>,
    /// Positions per alignment (fewer where the device holds fewer multiples).
    pub positions: usize,
    /// A fixed number of full rounds (no adaptivity) when set.
    pub count: Option<u32>,
    /// Stop adaptive rounds when this much time (backend clock) has passed.
    pub time_budget_ns: u64,
    /// Stop adaptive rounds before exceeding this many reads.
    pub max_reads: u64,
}

/// The next step of an adaptive run, chosen by the caller from the analysis.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// The answer is settled.
    Stop,
    /// Repeat every cell.
    Full,
    /// Repeat the cells at these alignments (all block sizes).
    Focus(Vec<u64>),
}

/// The samples of a run and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
/// spread evenly over the device.
fn positions(size: u64, align: u64, block: u64, n: usize) -> Vec<u64> {
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
        let i = if want == 1 {
            0
        } else {
            j * (total - 1) / (want - 1)
        };
        ks.push(nth(i));
    }
    ks.dedup();
    ks.into_iter().map(|k| k * align).collect()
}

/// The cells of a sweep: every alignment 2^n and 3 × 2^n from 2 × bs to the largest with
/// a position on the device, for each block size.
pub fn plan_cells(size: u64, config: &AlignConfig) -> Vec<AlignCell> {
    let mut cells = Vec::new();
    for &bs in &config.block_sizes {
        for a in candidate_sizes(2 * bs, size.saturating_sub(bs))
            .into_iter()
            .rev()
        {
            let pos = positions(size, a, bs, config.positions);
            if pos.is_empty() {
                continue;
            }
            cells.push(AlignCell {
                block_bytes: bs,
                align_bytes: a,
                positions: pos,
                reads: Vec::new(),
            });
        }
    }
    cells
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

/// Measure one repetition of a cell (pre at every position, then on, then post).
fn measure_cell<B: Backend + ?Sized>(
    dev: &mut B,
    cell: &mut AlignCell,
    buf: &mut AlignedBuf,
    io_time: &mut u64,
) -> Result<u64> {
    let bs = cell.block_bytes;
    let buf = &mut buf[..bs as usize];
    let n = cell.positions.len();
    let mut t = vec![[0u64; 3]; n];
    for (j, shift) in [(0usize, bs), (1, bs / 2), (2, 0)] {
        for (i, &p) in cell.positions.iter().enumerate() {
            t[i][j] = read_ns(dev, buf, p - shift, io_time)?;
        }
    }
    for (i, r) in t.into_iter().enumerate() {
        cell.reads.push([i as u64, r[0], r[1], r[2]]);
    }
    Ok(3 * n as u64)
}

/// Run the sweep: full rounds, then whatever `next` asks for after each round, until it
/// says stop or a budget ends (`count` rounds when fixed). `progress(done, total)` gets
/// reads done against the read budget.
pub fn run<B: Backend + ?Sized>(
    dev: &mut B,
    config: &AlignConfig,
    next: &mut dyn FnMut(&[AlignCell], u64) -> Next,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<AlignRun> {
    let size = dev.size_bytes();
    validate(size, dev.logical_sector_bytes(), &config.block_sizes)?;
    let mut cells = plan_cells(size, config);
    let max_bs = config.block_sizes.iter().copied().max().unwrap_or(512) as usize;
    let mut buf = AlignedBuf::new(max_bs);
    let start = dev.clock_ns();
    let mut io_time = 0;
    let mut reads = 0u64;
    let mut rounds = 0u32;
    let smallest = config.block_sizes.iter().copied().min().unwrap_or(0);
    let full_cost: u64 = cells.iter().map(|c| 3 * c.positions.len() as u64).sum();
    let total = match config.count {
        Some(c) => full_cost * c as u64,
        None => config.max_reads,
    };
    let mut plan = Next::Full;
    let stop_reason;
    loop {
        // A focus round measures the few decisive alignments at every block size (the
        // answer must agree across them), or a longer list at the smallest block size only
        // (the least noisy reads); it repeats its cells so that one round spends about a
        // twelfth of the read budget.
        let (chosen, reps): (Vec<usize>, u64) = match &plan {
            Next::Focus(aligns) => {
                let v: Vec<usize> = (0..cells.len())
                    .filter(|&i| {
                        (cells[i].block_bytes == smallest || aligns.len() <= 8)
                            && aligns.contains(&cells[i].align_bytes)
                    })
                    .collect();
                let cost: u64 = v.iter().map(|&i| 3 * cells[i].positions.len() as u64).sum();
                let reps = (config.max_reads / 12)
                    .checked_div(cost)
                    .unwrap_or(1)
                    .max(1);
                (v, reps)
            }
            _ => (Vec::new(), 1),
        };
        let chosen = if chosen.is_empty() {
            (0..cells.len()).collect()
        } else {
            chosen
        };
        let cost: u64 = chosen
            .iter()
            .map(|&i| 3 * cells[i].positions.len() as u64)
            .sum();
        let reps = if config.count.is_some() {
            1
        } else {
            reps.min(config.max_reads.saturating_sub(reads) / cost.max(1))
        };
        if config.count.is_none() && (reps == 0 || reads + cost > config.max_reads) {
            stop_reason = "read budget".to_string();
            break;
        }
        for _ in 0..reps {
            for &i in &chosen {
                reads += measure_cell(dev, &mut cells[i], &mut buf, &mut io_time)?;
                progress(reads, total.max(reads));
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
        plan = next(&cells, reads);
        if plan == Next::Stop {
            stop_reason = "confident".to_string();
            break;
        }
    }
    Ok(AlignRun {
        cells,
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
    use crate::backend::sim::{SimConfig, SimDevice};

    #[test]
    fn trimmed_mean_drops_a_fifth_at_each_end() {
        let mut v: Vec<f64> = vec![1.0, 2.0, 3.0, 4.0, 100.0];
        let (m, s) = trimmed(&mut v);
        assert!((m - 3.0).abs() < 1e-12, "{m}");
        assert!(s.is_finite());
        let mut v: Vec<f64> = (0..10).map(|i| if i < 2 { -1e9 } else { 5.0 }).collect();
        assert_eq!(trimmed(&mut v).0, 5.0);
        let mut v = vec![7.0];
        assert_eq!(trimmed(&mut v).0, 7.0);
        let mut v: Vec<f64> = vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0];
        assert!((trimmed(&mut v).0 - 2.0).abs() < 1e-12);
        let mut v: Vec<f64> = (0..20).map(|i| i as f64).collect();
        assert!((trimmed(&mut v).0 - 9.5).abs() < 1e-12);
    }

    #[test]
    fn positions_are_odd_multiples_not_divisible_by_three() {
        let p = positions(1 << 30, 1 << 20, 1024, 8);
        assert_eq!(p.len(), 8);
        for x in &p {
            let k = x >> 20;
            assert!(k % 2 == 1 && k % 3 != 0, "{k}");
            assert!(x + 1024 <= 1 << 30);
        }
        assert_eq!(positions(4096, 2048, 1024, 8), vec![2048]);
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
                .map(|c| c.reads.len() as u64 * 3)
                .sum::<u64>()
        );
    }
}
