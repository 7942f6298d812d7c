//! FAT area: erase blocks near the start of a card that the controller treats differently
//! (typically faster small writes, where the FAT of the factory filesystem lives).
//!
//! Input: write throughput per erase block and block size, from the live `fat` probe or
//! flashbench `--find-fat` logs. Pure.

use crate::report::Inference;
use std::collections::BTreeMap;

/// Write throughput of erase block `erase_block` (index from the start) at one block size,
/// in order or (`random`) in random order inside the erase block.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FatSample {
    pub erase_block: u32,
    pub block_bytes: u64,
    #[serde(default)]
    pub random: bool,
    pub bytes_per_s: f64,
}

/// A block size and whether the order was random.
type SizeKey = (u64, bool);

/// Smallest throughput ratio between two groups of erase blocks that counts as different.
pub const MIN_STEP: f64 = 1.08;
/// Without any split, blocks within this ratio of each other count as alike.
pub const UNIFORM_SPREAD: f64 = 1.3;
/// The step must exceed the spread inside each group by this factor.
pub const STEP_OVER_SPREAD: f64 = 4.0;

/// At one block size: the erase blocks in the faster of two clearly separated groups.
fn faster_group(rates: &[(u32, f64)]) -> Option<Vec<u32>> {
    if rates.len() < 2 {
        return None;
    }
    let mut v: Vec<(u32, f64)> = rates.iter().map(|&(i, r)| (i, r.ln())).collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (mut best_gap, mut at) = (0.0, 0);
    for k in 1..v.len() {
        let gap = v[k].1 - v[k - 1].1;
        if gap > best_gap {
            best_gap = gap;
            at = k;
        }
    }
    let spread = |g: &[(u32, f64)]| match (g.first(), g.last()) {
        (Some(a), Some(b)) => b.1 - a.1,
        _ => 0.0,
    };
    let inner = spread(&v[..at]).max(spread(&v[at..])).max(0.01);
    if best_gap < MIN_STEP.ln() || best_gap < STEP_OVER_SPREAD * inner {
        return None;
    }
    let mut fast: Vec<u32> = v[at..].iter().map(|x| x.0).collect();
    fast.sort_unstable();
    Some(fast)
}

/// Infer which erase blocks behave differently (are faster) than the rest.
///
/// At each block size the blocks are split where the throughput steps most; a split counts
/// only when the step is at least `MIN_STEP` and well above the spread inside each group.
/// The answer is the faster group that the block sizes agree on. No split at any size
/// gives an empty list, tentatively (a difference only at untested sizes cannot be ruled out).
pub fn infer_fat(samples: &[FatSample]) -> Inference {
    let mut by_size: BTreeMap<SizeKey, Vec<(u32, f64)>> = BTreeMap::new();
    for s in samples {
        if s.bytes_per_s.is_finite() && s.bytes_per_s > 0.0 {
            by_size
                .entry((s.block_bytes, s.random))
                .or_default()
                .push((s.erase_block, s.bytes_per_s));
        }
    }
    let sizes: Vec<(SizeKey, Vec<(u32, f64)>)> =
        by_size.into_iter().filter(|(_, v)| v.len() >= 3).collect();
    if sizes.is_empty() {
        return Inference::inconclusive(
            "fewer than three erase blocks measured at any block size; nothing to compare",
        );
    }
    let mut votes: BTreeMap<Vec<u32>, Vec<SizeKey>> = BTreeMap::new();
    let mut max_spread: f64 = 0.0;
    for (size, rates) in &sizes {
        match faster_group(rates) {
            Some(g) => votes.entry(g).or_default().push(*size),
            None => {
                let lo = rates.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
                let hi = rates.iter().map(|r| r.1).fold(0.0, f64::max);
                max_spread = max_spread.max(hi / lo);
            }
        }
    }
    let splits: usize = votes.values().map(Vec::len).sum();
    if splits == 0 {
        if max_spread < UNIFORM_SPREAD {
            return Inference::new(
                Vec::<u32>::new(),
                0.7,
                format!(
                    "all {} erase blocks write alike at all {} block sizes (within x{max_spread:.2}); a difference at sizes not tested cannot be ruled out",
                    sizes[0].1.len(),
                    sizes.len()
                ),
            );
        }
        return Inference::inconclusive(format!(
            "erase blocks differ by up to x{max_spread:.2} but without a clean split into groups: noise; run again"
        ));
    }
    let Some((group, at_sizes)) = votes.iter().max_by_key(|(_, v)| v.len()) else {
        return Inference::inconclusive("no split found");
    };
    let agree = at_sizes.len() as f64 / splits as f64;
    let conf = if at_sizes.len() >= 2 && agree >= 0.999 {
        0.95
    } else if at_sizes.len() >= 2 && agree >= 2.0 / 3.0 {
        0.75
    } else if splits == 1 {
        0.6
    } else {
        0.3
    };
    let sizes_text: Vec<String> = at_sizes
        .iter()
        .map(|&(s, random)| {
            format!(
                "{}{}",
                crate::units::format_bytes(s),
                if random { " random" } else { "" }
            )
        })
        .collect();
    let total = sizes.len();
    Inference::new(
        group.clone(),
        conf,
        format!(
            "erase block(s) {group:?} write faster than the others in {} of {total} block sizes and orders ({}){}",
            at_sizes.len(),
            sizes_text.join(", "),
            if agree < 0.999 {
                format!(
                    "; {} other size(s) split differently",
                    splits - at_sizes.len()
                )
            } else {
                String::new()
            }
        ),
    )
}

/// Samples from a flashbench `--find-fat` log (column i = erase block i).
pub fn samples_from_flashbench(log: &crate::analysis::flashbench::FindFatLog) -> Vec<FatSample> {
    log.rows
        .iter()
        .flat_map(|r| {
            r.bytes_per_s
                .iter()
                .enumerate()
                .map(move |(i, &rate)| FatSample {
                    erase_block: i as u32,
                    block_bytes: r.size_bytes,
                    random: false,
                    bytes_per_s: rate,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Status;

    fn table(rows: &[(u64, &[f64])]) -> Vec<FatSample> {
        let mut v = Vec::new();
        for &(size, rates) in rows {
            for (i, &r) in rates.iter().enumerate() {
                v.push(FatSample {
                    erase_block: i as u32,
                    block_bytes: size,
                    random: false,
                    bytes_per_s: r,
                });
            }
        }
        v
    }

    #[test]
    fn one_fast_block_at_every_size_is_confident() {
        let s = table(&[
            (4 << 20, &[16.7, 32.2, 16.7, 16.8, 16.7, 16.7]),
            (1 << 20, &[16.8, 29.9, 16.7, 16.8, 16.8, 16.7]),
            (16 << 10, &[8.89, 9.97, 8.92, 8.95, 8.97, 8.96]),
        ]);
        let inf = infer_fat(&s);
        assert_eq!(inf.value, Some(serde_json::json!([1])));
        assert_eq!(inf.status, Status::Confident);
    }

    #[test]
    fn a_majority_of_fast_blocks_is_still_the_fast_group() {
        let s = table(&[
            (4096, &[2.0, 2.02, 1.98, 2.01, 1.0, 1.01]),
            (8192, &[1.5, 1.52, 1.49, 1.51, 1.0, 1.01]),
            (16384, &[1.0, 1.0, 1.01, 0.99, 1.0, 1.0]),
        ]);
        let inf = infer_fat(&s);
        assert_eq!(inf.value, Some(serde_json::json!([0, 1, 2, 3])));
        assert_eq!(inf.status, Status::Confident);
    }

    #[test]
    fn uniform_blocks_give_an_empty_list_tentatively() {
        let s = table(&[
            (4096, &[1.0, 1.02, 0.98, 1.01, 1.0, 1.01]),
            (8192, &[1.5, 1.52, 1.49, 1.51, 1.5, 1.51]),
        ]);
        let inf = infer_fat(&s);
        assert_eq!(inf.value, Some(serde_json::json!([])));
        assert_eq!(inf.status, Status::Tentative);
    }

    #[test]
    fn scattered_noise_is_not_a_fat_area() {
        let s = table(&[
            (4096, &[1.0, 1.3, 0.8, 1.1, 0.7, 1.2]),
            (8192, &[1.2, 0.9, 1.1, 0.75, 1.3, 1.0]),
        ]);
        let inf = infer_fat(&s);
        assert_ne!(inf.status, Status::Confident);
        let disagreeing = table(&[
            (4096, &[2.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
            (8192, &[1.0, 1.0, 2.0, 1.0, 1.0, 1.0]),
            (16384, &[1.0, 1.0, 1.0, 1.0, 2.0, 1.0]),
        ]);
        assert_eq!(infer_fat(&disagreeing).status, Status::Inconclusive);
        assert_eq!(infer_fat(&[]).status, Status::Inconclusive);
    }
}
