//! Where a bad extent of `verify DIR` lives, in places a user can find after the run: the
//! file and the offset in it, and the ranges of the filesystem's block device the
//! filesystem put those bytes on (FIEMAP), plus the whole-disk offset on a partition.
//!
//! The arithmetic is pure (extents in, places out); `FileSet::settle` gathers the FIEMAP
//! lists on the open files before any is removed.

use super::extent::Extent;
use crate::sys::{fiemap_flags, FileExtent};
use serde::{Deserialize, Serialize};

/// A range of the filesystem's block device; `disk_offset_bytes` adds the partition's start
/// on its whole disk, when the filesystem is on a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DeviceRange {
    pub offset_bytes: u64,
    pub length_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_offset_bytes: Option<u64>,
}

/// The block device a directory's files live on (their `st_dev`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BackingDevice {
    pub major: u32,
    pub minor: u32,
    /// Kernel name (`sdb1`); `None` when `st_dev` is no block device (tmpfs, btrfs).
    pub name: Option<String>,
    /// The mount's source (`/dev/sdb1`), from the mount table.
    pub source: Option<String>,
    /// The whole disk (`sdb`) when `name` is a partition, and where the partition starts.
    pub whole_disk: Option<String>,
    pub partition_start_bytes: Option<u64>,
}

impl BackingDevice {
    /// How the text names it: the mount source, else `/dev/NAME`, else `MAJ:MIN`.
    pub fn label(&self) -> String {
        match (&self.source, &self.name) {
            (Some(s), _) if s.starts_with('/') => s.clone(),
            (_, Some(n)) => format!("/dev/{n}"),
            _ => format!("{}:{}", self.major, self.minor),
        }
    }
}

/// A file's extents as FIEMAP gave them, or why its device offsets are unknown.
pub type Placement = std::result::Result<Vec<FileExtent>, String>;

/// One of the verify files: its path, whether it stays after the run, its placement.
#[derive(Debug, Clone)]
pub struct PlacedFile {
    pub path: String,
    pub kept: bool,
    pub placement: Placement,
}

/// One bad extent of a directory run, inside one file. `offset`/`length` (flattened from
/// the extent) are in the run's logical range, as for a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LocatedExtent {
    #[serde(flatten)]
    pub extent: Extent,
    pub file: String,
    pub file_offset_bytes: u64,
    /// False when the file was removed at the end of the run.
    pub file_kept: bool,
    /// The block device `device_offsets` are on (its mount source or node).
    pub device: String,
    pub device_offsets: Vec<DeviceRange>,
    /// Why (part of) the extent has no device offset; never a guessed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_offset_unknown_reason: Option<String>,
}

/// Why FIEMAP's place for an extent with `flags` is not a device offset, if it is not.
pub fn unknown_reason(flags: u32) -> Option<String> {
    use fiemap_flags::*;
    let why: Vec<&str> = [
        (
            UNKNOWN,
            "the filesystem does not know where the data is (FIEMAP_EXTENT_UNKNOWN)",
        ),
        (DELALLOC, "the data is not placed yet (delayed allocation)"),
        (
            ENCODED,
            "the data is stored encoded or compressed, not byte for byte",
        ),
        (
            DATA_INLINE,
            "the data is stored inline in the filesystem's metadata",
        ),
        (
            DATA_TAIL,
            "the data is packed into a block shared with other files",
        ),
        (NOT_ALIGNED, "the data is not at a block-aligned place"),
    ]
    .iter()
    .filter(|(f, _)| flags & f != 0)
    .map(|(_, w)| *w)
    .collect();
    (!why.is_empty()).then(|| why.join("; "))
}

/// `[offset, offset+length)` of a file mapped on its extents: the device ranges
/// (`(device offset, length)`, neighbours merged) and the pieces with no device offset
/// (`(file offset, length, reason)`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapped {
    pub ranges: Vec<(u64, u64)>,
    pub unknown: Vec<(u64, u64, String)>,
}

/// Map a file range on `extents` (in file order, as FIEMAP lists them), splitting it where
/// it crosses extents; holes and flagged extents become unknown pieces with the reason.
pub fn map_range(extents: &[FileExtent], offset: u64, length: u64) -> Mapped {
    let mut m = Mapped::default();
    let end = offset.saturating_add(length);
    let unknown = |m: &mut Mapped, at: u64, len: u64, why: String| match m.unknown.last_mut() {
        Some((o, l, w)) if *o + *l == at && *w == why => *l += len,
        _ => m.unknown.push((at, len, why)),
    };
    let first = extents.partition_point(|e| e.logical.saturating_add(e.length) <= offset);
    let mut pos = offset;
    for e in &extents[first..] {
        if pos >= end || e.logical >= end {
            break;
        }
        let e_end = e.logical.saturating_add(e.length);
        if e_end <= pos {
            continue;
        }
        if e.logical > pos {
            unknown(
                &mut m,
                pos,
                e.logical - pos,
                "a hole in the file: no blocks allocated there".into(),
            );
            pos = e.logical;
        }
        let stop = e_end.min(end);
        match unknown_reason(e.flags) {
            Some(why) => unknown(&mut m, pos, stop - pos, why),
            None => {
                let dev = e.physical + (pos - e.logical);
                match m.ranges.last_mut() {
                    Some((d, l)) if *d + *l == dev => *l += stop - pos,
                    _ => m.ranges.push((dev, stop - pos)),
                }
            }
        }
        pos = stop;
    }
    if pos < end {
        unknown(
            &mut m,
            pos,
            end - pos,
            "FIEMAP listed no extent there (a hole, or beyond the extents read)".into(),
        );
    }
    m
}

/// Split `extents` (offsets in the run's logical range, laid over `files` of `file_bytes`
/// each) at file boundaries and name each piece's file, offset and device ranges.
pub fn locate(
    extents: &[Extent],
    file_bytes: u64,
    files: &[PlacedFile],
    device: &BackingDevice,
) -> Vec<LocatedExtent> {
    let mut out = Vec::new();
    let label = device.label();
    for e in extents {
        let mut pos = e.offset;
        while pos < e.end() {
            let index = (pos / file_bytes) as usize;
            let in_file = pos % file_bytes;
            let len = (file_bytes - in_file).min(e.end() - pos);
            let piece = Extent {
                offset: pos,
                length: len,
                kind: e.kind,
                from: e.from.map(|f| f + (pos - e.offset)),
            };
            let (file, kept, placement) = match files.get(index) {
                Some(f) => (f.path.clone(), f.kept, &f.placement),
                None => break,
            };
            let (device_offsets, reason) = match placement {
                Err(why) => (Vec::new(), Some(why.clone())),
                Ok(list) => {
                    let m = map_range(list, in_file, len);
                    let ranges = m
                        .ranges
                        .iter()
                        .map(|&(o, l)| DeviceRange {
                            offset_bytes: o,
                            length_bytes: l,
                            disk_offset_bytes: device.partition_start_bytes.map(|s| s + o),
                        })
                        .collect();
                    let reason = (!m.unknown.is_empty()).then(|| {
                        m.unknown
                            .iter()
                            .map(|(o, l, w)| format!("{l} bytes at file offset {o}: {w}"))
                            .collect::<Vec<_>>()
                            .join("; ")
                    });
                    (ranges, reason)
                }
            };
            out.push(LocatedExtent {
                extent: piece,
                file,
                file_offset_bytes: in_file,
                file_kept: kept,
                device: label.clone(),
                device_offsets,
                device_offset_unknown_reason: reason,
            });
            pos += len;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::extent::ExtentKind;
    use fiemap_flags::*;

    fn fe(logical: u64, physical: u64, length: u64, flags: u32) -> FileExtent {
        FileExtent {
            logical,
            physical,
            length,
            flags,
        }
    }

    #[test]
    fn a_range_inside_one_extent_maps_by_its_offset() {
        let list = [fe(0, 1 << 20, 8192, 0), fe(8192, 9 << 20, 8192, LAST)];
        assert_eq!(
            map_range(&list, 9000, 512),
            Mapped {
                ranges: vec![((9 << 20) + 808, 512)],
                unknown: vec![]
            }
        );
    }

    #[test]
    fn a_range_across_extents_is_split_and_contiguous_ones_merge() {
        // 0..4K at 1M, 4K..8K right after it (merged), 8K..12K elsewhere.
        let list = [
            fe(0, 1 << 20, 4096, 0),
            fe(4096, (1 << 20) + 4096, 4096, 0),
            fe(8192, 5 << 20, 4096, LAST),
        ];
        let m = map_range(&list, 2048, 8192);
        assert_eq!(m.ranges, vec![((1 << 20) + 2048, 6144), (5 << 20, 2048)]);
        assert!(m.unknown.is_empty());
    }

    #[test]
    fn flagged_extents_and_holes_are_unknown_with_the_reason() {
        let list = [
            fe(0, 0, 4096, DELALLOC | UNKNOWN),
            fe(8192, 7 << 20, 4096, 0),
            fe(12288, 0, 4096, DATA_INLINE | NOT_ALIGNED | LAST),
        ];
        let m = map_range(&list, 0, 20480);
        assert_eq!(m.ranges, vec![(7 << 20, 4096)]);
        let u: Vec<_> = m.unknown.iter().map(|(o, l, _)| (*o, *l)).collect();
        assert_eq!(
            u,
            vec![(0, 4096), (4096, 4096), (12288, 4096), (16384, 4096)]
        );
        assert!(m.unknown[0].2.contains("delayed allocation"));
        assert!(m.unknown[0].2.contains("FIEMAP_EXTENT_UNKNOWN"));
        assert!(m.unknown[1].2.contains("hole"));
        assert!(m.unknown[2].2.contains("inline"));
        assert!(m.unknown[3].2.contains("no extent"));
        assert_eq!(unknown_reason(LAST), None);
        assert!(unknown_reason(ENCODED).unwrap().contains("compressed"));
        assert!(unknown_reason(DATA_TAIL).unwrap().contains("shared"));
    }

    #[test]
    fn extents_split_at_file_boundaries_with_disk_offsets() {
        let fb = 1 << 20;
        let device = BackingDevice {
            major: 7,
            minor: 1,
            name: Some("loop0p1".into()),
            source: Some("/dev/loop0p1".into()),
            whole_disk: Some("loop0".into()),
            partition_start_bytes: Some(1 << 20),
        };
        let files = vec![
            PlacedFile {
                path: "d/f0".into(),
                kept: true,
                placement: Ok(vec![fe(0, 32 << 20, fb, LAST)]),
            },
            PlacedFile {
                path: "d/f1".into(),
                kept: false,
                placement: Err("FIEMAP is not supported".into()),
            },
        ];
        // An aliased extent from 1 MiB - 4 KiB to 1 MiB + 4 KiB: two files.
        let ex = [Extent {
            offset: fb - 4096,
            length: 8192,
            kind: ExtentKind::Overwritten,
            from: Some(100 << 20),
        }];
        let l = locate(&ex, fb, &files, &device);
        assert_eq!(l.len(), 2);
        assert_eq!(
            (l[0].file.as_str(), l[0].file_offset_bytes, l[0].file_kept),
            ("d/f0", fb - 4096, true)
        );
        assert_eq!(
            l[0].device_offsets,
            vec![DeviceRange {
                offset_bytes: (32 << 20) + fb - 4096,
                length_bytes: 4096,
                disk_offset_bytes: Some((33 << 20) + fb - 4096),
            }]
        );
        assert_eq!(l[0].device, "/dev/loop0p1");
        assert_eq!(l[0].device_offset_unknown_reason, None);
        assert_eq!(
            (
                l[1].file.as_str(),
                l[1].file_offset_bytes,
                l[1].extent.length
            ),
            ("d/f1", 0, 4096)
        );
        assert_eq!(l[1].extent.from, Some((100 << 20) + 4096));
        assert!(l[1].device_offsets.is_empty());
        assert_eq!(
            l[1].device_offset_unknown_reason.as_deref(),
            Some("FIEMAP is not supported")
        );
    }
}
