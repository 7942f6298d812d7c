//! FAT area: erase blocks near the start of a card that the controller treats differently
//! (typically faster small writes, where the FAT of the factory filesystem lives).
//!
//! Input: write throughput per erase block and block size, from the live `fat` probe or
//! flashbench `--find-fat` logs. Pure.

use crate::vocab::Inference;
use std::collections::BTreeMap;

/// Write throughput of erase block `erase_block` (index from the start) at one block size,
/// in order or (`random`) in random order inside the erase block.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    infer_fat_from(samples.iter().cloned())
}

/// [`infer_fat`] on samples as they are made (a long `--find-fat` log's are never all held).
pub fn infer_fat_from(samples: impl IntoIterator<Item = FatSample>) -> Inference {
    let mut by_size: BTreeMap<SizeKey, Vec<(u32, f64)>> = BTreeMap::new();
    for s in samples {
        if usable(&s) {
            by_size
                .entry((s.block_bytes, s.random))
                .or_default()
                .push((s.erase_block, s.bytes_per_s));
        }
    }
    let mut tally = Tally::default();
    for (size, rates) in by_size {
        tally.add(size, &rates, true);
    }
    tally.infer()
}

/// [`infer_fat_from`] on samples that can be walked twice, such as a `--find-fat` log's
/// rows: when each block size comes as one run and the sizes rise or fall throughout
/// (as flashbench prints them), each size is judged as it passes and nothing is grouped
/// in memory; otherwise the samples are grouped as [`infer_fat_from`] does. The answer is
/// the same either way.
pub fn infer_fat_from_runs<I: IntoIterator<Item = FatSample>>(
    samples: impl Fn() -> I,
) -> Inference {
    let keys = || {
        samples()
            .into_iter()
            .filter(usable)
            .map(|s| (s.block_bytes, s.random))
    };
    // Each size one run, the runs in one direction: Some(ascending) (None when not).
    let mut order: Option<Option<bool>> = Some(None);
    let mut last: Option<SizeKey> = None;
    for k in keys() {
        match last {
            Some(l) if l == k => {}
            Some(l) => {
                let up = k > l;
                order = match order {
                    Some(None) => Some(Some(up)),
                    Some(Some(dir)) if dir == up => Some(Some(dir)),
                    _ => None,
                };
                if order.is_none() {
                    break;
                }
            }
            None => {}
        }
        last = Some(k);
    }
    let Some(order) = order else {
        return infer_fat_from(samples());
    };
    let ascending = order.unwrap_or(true);
    let mut tally = Tally::default();
    let mut run: Vec<(u32, f64)> = Vec::new();
    let mut at: Option<SizeKey> = None;
    for s in samples().into_iter().filter(usable) {
        let k = (s.block_bytes, s.random);
        if at != Some(k) {
            if let Some(size) = at {
                tally.add(size, &run, ascending);
            }
            run.clear();
            at = Some(k);
        }
        run.push((s.erase_block, s.bytes_per_s));
    }
    if let Some(size) = at {
        tally.add(size, &run, ascending);
    }
    if !ascending {
        for list in tally.votes.values_mut().chain(tally.slower.values_mut()) {
            list.reverse();
        }
    }
    tally.infer()
}

fn usable(s: &FatSample) -> bool {
    s.bytes_per_s.is_finite() && s.bytes_per_s > 0.0
}

/// What the block sizes say, one size at a time.
#[derive(Default)]
struct Tally {
    votes: BTreeMap<Vec<u32>, Vec<SizeKey>>,
    /// Splits where the blocks that stand out are slower than the rest: a block being
    /// cleaned up or worn, not a FAT area.
    slower: BTreeMap<Vec<u32>, Vec<SizeKey>>,
    max_spread: f64,
    /// Block sizes with at least three erase blocks, and the erase blocks of the
    /// smallest of them.
    total: usize,
    smallest_len: usize,
}

impl Tally {
    /// One block size's rates; `ascending` says whether sizes come smallest first.
    fn add(&mut self, size: SizeKey, rates: &[(u32, f64)], ascending: bool) {
        if rates.len() < 3 {
            return;
        }
        self.total += 1;
        if !ascending || self.total == 1 {
            self.smallest_len = rates.len();
        }
        match faster_group(rates) {
            Some(g) => match slower_odd_ones(&g, rates) {
                Some(slow) => self.slower.entry(slow).or_default().push(size),
                None => self.votes.entry(g).or_default().push(size),
            },
            None => {
                let lo = rates.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
                let hi = rates.iter().map(|r| r.1).fold(0.0, f64::max);
                self.max_spread = self.max_spread.max(hi / lo);
            }
        }
    }

    fn infer(self) -> Inference {
        let Tally {
            votes,
            slower,
            max_spread,
            total,
            smallest_len,
        } = self;
        if total == 0 {
            return Inference::inconclusive(
                "fewer than three erase blocks measured at any block size; nothing to compare",
            );
        }
        let size_list = |at: &[SizeKey]| -> String {
            at.iter()
                .map(|&(s, random)| {
                    format!(
                        "{}{}",
                        crate::vocab::units::format_bytes(s),
                        if random { " random" } else { "" }
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let slower_note = || -> String {
            slower
            .iter()
            .max_by_key(|(_, v)| v.len())
            .map(|(g, at)| {
                format!(
                    "; erase block(s) {g:?} write slower than the others in {} of {total} block sizes ({}), and blocks slower than the rest are not a FAT area (a block being cleaned up or worn)",
                    at.len(),
                    size_list(at)
                )
            })
            .unwrap_or_default()
        };
        let fat_splits: usize = votes.values().map(Vec::len).sum();
        if fat_splits == 0 {
            if !slower.is_empty() {
                return Inference::inconclusive(format!(
                    "no erase block writes faster than the others at any block size{}",
                    slower_note()
                ));
            }
            if max_spread < UNIFORM_SPREAD {
                return Inference::new(
                Vec::<u32>::new(),
                0.7,
                format!(
                    "all {} erase blocks write alike at all {} block sizes (within x{max_spread:.2}); a difference at sizes not tested cannot be ruled out",
                    smallest_len,
                    total
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
        let splits = fat_splits + slower.values().map(Vec::len).sum::<usize>();
        let agree = at_sizes.len() as f64 / splits as f64;
        let found = format!(
        "erase block(s) {group:?} write faster than the others in {} of {total} block sizes and orders ({})",
        at_sizes.len(),
        size_list(at_sizes)
    );
        // One block size alone is no FAT area, however clean its split: a FAT area shows at
        // the sizes around it too.
        if at_sizes.len() < 2 {
            return Inference::inconclusive(format!(
                "{found}: a difference at a single block size is no consistent FAT area{}",
                slower_note()
            ));
        }
        // Confident when every split agrees and the split shows at most of the sizes.
        let conf = if agree >= 0.999 && 2 * at_sizes.len() > total {
            0.95
        } else if agree >= 2.0 / 3.0 {
            0.75
        } else {
            0.3
        };
        Inference::new(
            group.clone(),
            conf,
            format!(
                "{found}{}{}",
                if splits > at_sizes.len() {
                    format!(
                        "; {} other size(s) split differently",
                        splits - at_sizes.len()
                    )
                } else {
                    String::new()
                },
                slower_note()
            ),
        )
    }
}

/// When the faster group of a split is really "the rest" with a few slower blocks left
/// out, the slower blocks (`None`: the faster group may be a FAT area). A FAT area is a run
/// of consecutive erase blocks; when it is the larger group it must start at the first
/// block measured (a FAT area lies at the start of the card).
fn slower_odd_ones(fast: &[u32], rates: &[(u32, f64)]) -> Option<Vec<u32>> {
    let mut slow: Vec<u32> = rates
        .iter()
        .map(|r| r.0)
        .filter(|i| !fast.contains(i))
        .collect();
    slow.sort_unstable();
    let consecutive = fast.windows(2).all(|w| w[1] == w[0] + 1);
    let first = rates.iter().map(|r| r.0).min();
    let fat_like = consecutive && (fast.len() <= slow.len() || fast.first().copied() == first);
    (!fat_like).then_some(slow)
}

/// Samples from a flashbench `--find-fat` log (column i = erase block i).
pub fn samples_from_flashbench(
    log: &crate::analysis::flashbench::FindFatLog,
) -> impl Iterator<Item = FatSample> + '_ {
    log.rows.iter().flat_map(|r| {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Status;

    /// Judging each size as it passes gives the answer grouping does, for sizes rising,
    /// falling, repeated and out of order, with and without a FAT-like group.
    #[test]
    fn sizes_judged_in_passing_answer_as_grouped() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        for case in 0..300 {
            let n_sizes = rng.gen_range(0..8usize);
            let mut sizes: Vec<u64> = (0..n_sizes).map(|k| 4096u64 << k).collect();
            match case % 4 {
                0 => {}
                1 => sizes.reverse(),
                2 if n_sizes > 0 => sizes.swap(0, n_sizes - 1),
                2 => {}
                _ => sizes.extend(sizes.clone()),
            }
            let fat = rng.gen_bool(0.5);
            let blocks = rng.gen_range(2..8u32);
            let mut samples = Vec::new();
            for &size in &sizes {
                for b in 0..blocks {
                    let base = if fat && b < 2 { 30e6 } else { 10e6 };
                    let rate = if rng.gen_bool(0.05) {
                        f64::NAN
                    } else {
                        base * rng.gen_range(0.9..1.1)
                    };
                    samples.push(FatSample {
                        erase_block: b,
                        block_bytes: size,
                        random: false,
                        bytes_per_s: rate,
                    });
                }
            }
            let grouped = infer_fat_from(samples.iter().cloned());
            let passing = infer_fat_from_runs(|| samples.iter().cloned());
            assert_eq!(passing, grouped, "case {case}: sizes {sizes:?}");
        }
    }

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

    #[test]
    fn a_split_at_one_block_size_of_nine_names_no_fat_area() {
        let flat: &[f64] = &[16.7, 16.7, 16.8, 16.7, 16.7, 16.8];
        // 16 KiB splits; 32 KiB .. 4 MiB (eight sizes) do not.
        let mut rows: Vec<(u64, &[f64])> = vec![(16 << 10, &[16.7, 29.9, 16.7, 16.8, 16.7, 16.8])];
        rows.extend((1..9).map(|k| ((16u64 << 10) << k, flat)));
        assert_eq!(rows.len(), 9);
        let inf = infer_fat(&table(&rows));
        assert_eq!(inf.status, Status::Inconclusive, "{}", inf.evidence);
        assert!(inf.value.is_none());
        assert!(
            inf.evidence.contains("in 1 of 9 block sizes"),
            "{}",
            inf.evidence
        );
        assert!(
            inf.evidence.contains("single block size"),
            "{}",
            inf.evidence
        );
    }

    #[test]
    fn blocks_slower_than_the_rest_are_not_a_fat_area() {
        // Erase block 2 is slower at every size: the others are not a FAT area.
        let s = table(&[
            (4 << 20, &[16.7, 16.8, 8.1, 16.7, 16.7, 16.8]),
            (1 << 20, &[16.8, 16.7, 8.0, 16.8, 16.8, 16.7]),
            (64 << 10, &[13.0, 12.9, 6.2, 13.0, 13.0, 12.9]),
        ]);
        let inf = infer_fat(&s);
        assert_eq!(inf.status, Status::Inconclusive, "{}", inf.evidence);
        assert!(
            inf.evidence.contains("[2] write slower"),
            "{}",
            inf.evidence
        );
        // The first block slower than the five after it: not a FAT area either.
        let s = table(&[
            (4 << 20, &[8.1, 16.8, 16.7, 16.7, 16.7, 16.8]),
            (1 << 20, &[8.0, 16.7, 16.8, 16.8, 16.8, 16.7]),
        ]);
        assert_eq!(infer_fat(&s).status, Status::Inconclusive);
        // A split that agrees at only some of the sizes is at most tentative.
        let s = table(&[
            (4 << 20, &[16.7, 16.7, 16.8, 16.7, 16.7, 16.8]),
            (2 << 20, &[16.7, 16.7, 16.8, 16.7, 16.7, 16.8]),
            (1 << 20, &[16.7, 16.7, 16.8, 16.7, 16.7, 16.8]),
            (32 << 10, &[11.0, 15.2, 10.8, 11.0, 10.9, 10.9]),
            (16 << 10, &[8.89, 12.0, 8.92, 8.95, 8.97, 8.96]),
        ]);
        let inf = infer_fat(&s);
        assert_ne!(inf.status, Status::Confident, "{}", inf.evidence);
        assert_eq!(inf.value, Some(serde_json::json!([1])));
    }
}
