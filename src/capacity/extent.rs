//! Extents: runs of units that came back the same wrong way, merged so a report lists a
//! few ranges instead of millions of sectors.

use serde::{Deserialize, Serialize};

/// What went wrong with a range of the medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExtentKind {
    /// Read back with a few bits flipped.
    Changed,
    /// Holds the data written to another offset (aliasing, fake capacity).
    Overwritten,
    /// Blank, stale or garbage data: what was written did not survive.
    Bad,
    /// The device returned an I/O error when reading.
    Unreadable,
    /// The device returned an I/O error when writing.
    Unwritable,
}

impl ExtentKind {
    pub fn name(self) -> &'static str {
        match self {
            ExtentKind::Changed => "changed",
            ExtentKind::Overwritten => "overwritten",
            ExtentKind::Bad => "bad",
            ExtentKind::Unreadable => "unreadable",
            ExtentKind::Unwritable => "unwritable",
        }
    }
}

/// A byte range of one kind; `from` is where an overwritten range's data was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Extent {
    pub offset: u64,
    pub length: u64,
    pub kind: ExtentKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<u64>,
}

impl Extent {
    pub fn end(&self) -> u64 {
        self.offset + self.length
    }
}

/// Collects ranges in increasing offset order and merges neighbours of the same kind
/// (overwritten ranges only when they alias by the same distance). Keeps at most `cap`
/// extents; beyond that it counts what it dropped, so memory stays bounded on a dead card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ExtentList {
    pub extents: Vec<Extent>,
    pub dropped: u64,
    cap: usize,
}

impl Default for ExtentList {
    fn default() -> Self {
        ExtentList::new(100_000)
    }
}

impl ExtentList {
    pub fn new(cap: usize) -> Self {
        ExtentList {
            extents: Vec::new(),
            dropped: 0,
            cap: cap.max(1),
        }
    }

    /// Add `[offset, offset+length)` of `kind`.
    pub fn push(&mut self, offset: u64, length: u64, kind: ExtentKind, from: Option<u64>) {
        if length == 0 {
            return;
        }
        if let Some(last) = self.extents.last_mut() {
            let same_shift = match (last.from, from) {
                (Some(a), Some(b)) => last.offset.wrapping_sub(a) == offset.wrapping_sub(b),
                (None, None) => true,
                _ => false,
            };
            if last.kind == kind && last.end() == offset && same_shift {
                last.length += length;
                return;
            }
        }
        if self.extents.len() >= self.cap {
            self.dropped += 1;
            return;
        }
        self.extents.push(Extent {
            offset,
            length,
            kind,
            from,
        });
    }

    /// Append another list that starts at or after this one's end.
    pub fn extend(&mut self, other: &ExtentList) {
        for e in &other.extents {
            self.push(e.offset, e.length, e.kind, e.from);
        }
        self.dropped += other.dropped;
    }

    pub fn is_empty(&self) -> bool {
        self.extents.is_empty()
    }

    /// Sort by offset and merge again (after parallel collection out of order).
    pub fn normalise(&mut self) {
        let mut all = std::mem::take(&mut self.extents);
        all.sort_by_key(|e| e.offset);
        let dropped = self.dropped;
        self.dropped = 0;
        for e in all {
            self.push(e.offset, e.length, e.kind, e.from);
        }
        self.dropped += dropped;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_of_one_kind_merge_and_others_do_not() {
        let mut l = ExtentList::new(10);
        l.push(0, 512, ExtentKind::Bad, None);
        l.push(512, 512, ExtentKind::Bad, None);
        l.push(1024, 512, ExtentKind::Changed, None);
        l.push(4096, 512, ExtentKind::Changed, None);
        l.push(8192, 512, ExtentKind::Overwritten, Some(0));
        l.push(8704, 512, ExtentKind::Overwritten, Some(512));
        l.push(9216, 512, ExtentKind::Overwritten, Some(9999 * 512));
        let got: Vec<_> = l.extents.iter().map(|e| (e.offset, e.length)).collect();
        assert_eq!(
            got,
            vec![
                (0, 1024),
                (1024, 512),
                (4096, 512),
                (8192, 1024),
                (9216, 512)
            ]
        );
    }

    #[test]
    fn the_cap_bounds_memory_and_counts_what_it_dropped() {
        let mut l = ExtentList::new(2);
        for i in 0..5u64 {
            l.push(i * 4096, 512, ExtentKind::Bad, None);
        }
        assert_eq!(l.extents.len(), 2);
        assert_eq!(l.dropped, 3);
    }

    #[test]
    fn normalise_sorts_and_merges() {
        let mut l = ExtentList::new(10);
        l.push(1024, 512, ExtentKind::Bad, None);
        l.push(0, 1024, ExtentKind::Bad, None);
        l.normalise();
        assert_eq!(l.extents.len(), 1);
        assert_eq!(l.extents[0].length, 1536);
    }
}
