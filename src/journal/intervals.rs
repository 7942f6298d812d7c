//! A set of half-open byte ranges, merged as they are added: which regions are saved.

use std::collections::BTreeMap;

/// Disjoint, merged `[start, end)` ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntervalSet {
    /// start → end, no two touching or overlapping.
    ranges: BTreeMap<u64, u64>,
}

impl IntervalSet {
    pub fn new() -> Self {
        IntervalSet::default()
    }

    /// Total bytes covered.
    pub fn covered_bytes(&self) -> u64 {
        self.ranges.iter().map(|(s, e)| e - s).sum()
    }

    /// The ranges, in order.
    pub fn ranges(&self) -> Vec<(u64, u64)> {
        self.ranges.iter().map(|(&s, &e)| (s, e)).collect()
    }

    /// The parts of `[start, end)` that are not yet covered, in order.
    pub fn gaps(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if start >= end {
            return out;
        }
        let mut pos = start;
        // A range that begins before `start` may still cover it.
        if let Some((_, &e)) = self.ranges.range(..=start).next_back() {
            pos = pos.max(e);
        }
        for (&s, &e) in self.ranges.range(start..end) {
            if s > pos {
                out.push((pos, s.min(end)));
            }
            pos = pos.max(e);
            if pos >= end {
                break;
            }
        }
        if pos < end {
            out.push((pos, end));
        }
        out
    }

    /// The parts of `[start, end)` that are covered, in order.
    pub fn covered(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut pos = start;
        for (gs, ge) in self.gaps(start, end) {
            if gs > pos {
                out.push((pos, gs));
            }
            pos = ge;
        }
        if pos < end {
            out.push((pos, end));
        }
        out
    }

    /// Cover `[start, end)`, merging with touching or overlapping ranges.
    pub fn insert(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let mut s = start;
        let mut e = end;
        if let Some((&ps, &pe)) = self.ranges.range(..=start).next_back() {
            if pe >= start {
                s = ps;
                e = e.max(pe);
            }
        }
        let absorbed: Vec<u64> = self
            .ranges
            .range(s..=e)
            .map(|(&rs, _)| rs)
            .collect::<Vec<_>>();
        for rs in absorbed {
            if let Some(re) = self.ranges.remove(&rs) {
                e = e.max(re);
            }
        }
        self.ranges.insert(s, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn gaps_and_merges() {
        let mut s = IntervalSet::new();
        s.insert(10, 20);
        s.insert(30, 40);
        assert_eq!(s.gaps(0, 50), vec![(0, 10), (20, 30), (40, 50)]);
        assert_eq!(s.gaps(12, 18), vec![]);
        assert_eq!(s.gaps(15, 35), vec![(20, 30)]);
        s.insert(20, 30);
        assert_eq!(s.ranges(), vec![(10, 40)]);
        s.insert(5, 12);
        assert_eq!(s.ranges(), vec![(5, 40)]);
        assert_eq!(s.covered_bytes(), 35);
    }

    proptest! {
        #[test]
        fn matches_a_bitmap(ops in proptest::collection::vec((0u64..200, 1u64..40), 0..30),
                            q in (0u64..200, 1u64..60)) {
            let mut set = IntervalSet::new();
            let mut bits = vec![false; 300];
            for (s, l) in ops {
                set.insert(s, s + l);
                for b in &mut bits[s as usize..(s + l) as usize] { *b = true; }
            }
            let (qs, ql) = q;
            let gaps = set.gaps(qs, qs + ql);
            let mut want = Vec::new();
            let mut i = qs;
            while i < qs + ql {
                if !bits[i as usize] {
                    let st = i;
                    while i < qs + ql && !bits[i as usize] { i += 1; }
                    want.push((st, i));
                } else { i += 1; }
            }
            let mut covered = Vec::new();
            let mut pos = qs;
            for &(s, e) in &want {
                if s > pos { covered.push((pos, s)); }
                pos = e;
            }
            if pos < qs + ql { covered.push((pos, qs + ql)); }
            prop_assert_eq!(set.covered(qs, qs + ql), covered);
            prop_assert_eq!(gaps, want);
            prop_assert_eq!(set.covered_bytes(), bits.iter().filter(|&&b| b).count() as u64);
        }
    }
}
