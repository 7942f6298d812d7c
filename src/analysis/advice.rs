//! What to do about the measured geometry: partition alignment and mkfs options.
//! Pure: findings in, advice out. Every command is one the real tools accept
//! (tests/e2e/advice_tools.rs runs them through sfdisk, mkfs.ext4, mkfs.vfat and mkfs.f2fs on
//! loop devices); the placeholders [`DEVICE`], [`PARTITION`] and `MOUNTPOINT` are the only
//! words a person replaces.

use crate::vocab::units::{format_bytes, gcd};
use serde::{Deserialize, Serialize};

/// The whole device in a command (e.g. /dev/sdX or /dev/mmcblk0): a placeholder, never a
/// guessed path, because the line erases the partition table.
pub const DEVICE: &str = "DEVICE";
/// The partition [`partition`]'s command makes (e.g. /dev/sdX1 or /dev/mmcblk0p1).
pub const PARTITION: &str = "PARTITION";

/// What the tests found that advice depends on; `None` where unknown or inconclusive.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub size_bytes: u64,
    pub logical_sector_bytes: u32,
    pub erase_block_bytes: Option<u64>,
    pub page_bytes: Option<u64>,
    pub open_au: Option<u64>,
    /// Real usable capacity (a fake card holds less than it announces).
    pub usable_bytes: Option<u64>,
    /// The geometry test ran, so an unknown erase block or page was inconclusive rather
    /// than not measured (the advice then says what would help, not "run align").
    pub geometry_measured: bool,
}

/// One recommendation: the topic, why, and the command that carries it out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Advice {
    pub topic: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

const MIB: u64 = 1 << 20;
/// The filesystem block size the ext4 advice uses (and the smallest FAT cluster worth
/// having on a page of 4 KiB or more).
const BLOCK: u64 = 4096;
/// FAT clusters: at most 128 sectors and at most 64 KiB (larger ones are not portable).
const MAX_CLUSTER: u64 = 64 << 10;
/// f2fs segments are 2 MiB; a section is a whole number of them.
const F2FS_SEGMENT: u64 = 2 * MIB;
/// mkfs.f2fs refuses a volume of too few sections (it failed at 10 and 20 in trials and
/// passed at 21 and 32); 32 leaves a margin.
const F2FS_MIN_SECTIONS: u64 = 32;
/// An MBR (dos) partition ends below 2^32 sectors.
const MBR_MAX_SECTORS: u64 = 1 << 32;

/// The partition alignment when the erase block is unknown: a multiple of every
/// power-of-two erase block up to 4 MiB (not of a 3·2^n one such as 6 or 12 MiB).
pub const DEFAULT_ALIGN: u64 = 4 * MIB;

/// Why the partition gets MBR type c: the one type choice for every card.
pub const PARTITION_TYPE_REASON: &str = "type c (FAT32 LBA), which cameras, phones and Windows look for; Linux ignores the type and mounts ext4 or f2fs from it all the same";

/// One partition on the device: start and length are whole multiples of the alignment,
/// and it ends within the usable capacity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub start_bytes: u64,
    pub size_bytes: u64,
    /// The unit of sfdisk's `start=` and `size=`: the device's logical sector.
    pub sector_bytes: u64,
    pub align_bytes: u64,
    /// Why this alignment, in words.
    pub basis: String,
    /// The partition was shortened to fit an MBR table.
    pub mbr_limited: bool,
}

impl Partition {
    /// The one sfdisk line (shared by `probe` and `auto`): a fresh dos label with this
    /// one partition on [`DEVICE`].
    pub fn command(&self) -> String {
        format!(
            "echo 'start={}, size={}, type=c' | sfdisk --label dos {DEVICE}",
            self.start_bytes / self.sector_bytes,
            self.size_bytes / self.sector_bytes
        )
    }
}

fn lcm(a: u64, b: u64) -> Option<u64> {
    (a / gcd(a, b).max(1)).checked_mul(b)
}

/// The partition alignment and what it is: the erase block rounded up to a whole MiB
/// multiple (the usual tools' grain), or [`DEFAULT_ALIGN`] with the reason the erase block
/// is unknown.
fn alignment(f: &Findings) -> (u64, String) {
    let sector = sector_bytes(f);
    match f.erase_block_bytes.and_then(|e| lcm(lcm(e, MIB)?, sector)) {
        Some(a) if Some(a) == f.erase_block_bytes => (a, "the erase block".to_string()),
        Some(a) => (
            a,
            format!(
                "the smallest whole number of erase blocks ({}) that is whole MiB",
                format_bytes(f.erase_block_bytes.unwrap_or(a))
            ),
        ),
        None => (
            DEFAULT_ALIGN,
            format!(
                "a default, a multiple of every power-of-two erase block up to it: the erase block is {}",
                erase_unknown(f.geometry_measured)
            ),
        ),
    }
}

/// Why the erase block is unknown, and what would help.
pub fn erase_unknown(measured: bool) -> &'static str {
    if measured {
        "inconclusive: a quiet machine and a longer --time-budget give align more rounds, though some devices show no boundary in read timings at all"
    } else {
        "not measured: `flashscope align` finds it"
    }
}

fn sector_bytes(f: &Findings) -> u64 {
    u64::from(f.logical_sector_bytes.max(512))
}

fn usable(f: &Findings) -> u64 {
    f.usable_bytes.unwrap_or(f.size_bytes).min(f.size_bytes)
}

fn is_fake(f: &Findings) -> bool {
    usable(f) < f.size_bytes
}

/// The one partition to make: from one alignment unit to the last whole unit within the
/// usable capacity (and below the MBR limit). `None` when fewer than two units are usable.
pub fn partition(f: &Findings) -> Option<Partition> {
    let (align, basis) = alignment(f);
    let sector = sector_bytes(f);
    let mbr_end = (MBR_MAX_SECTORS - 1).saturating_mul(sector) / align * align;
    let usable_end = usable(f) / align * align;
    let end = usable_end.min(mbr_end);
    if end < 2 * align {
        return None;
    }
    Some(Partition {
        start_bytes: align,
        size_bytes: end - align,
        sector_bytes: sector,
        align_bytes: align,
        basis,
        mbr_limited: end < usable_end,
    })
}

/// The partition advice: the sfdisk line and why, or why there is none.
pub fn partition_advice(f: &Findings) -> Advice {
    let topic = "partition alignment".to_string();
    let Some(p) = partition(f) else {
        let (align, basis) = alignment(f);
        return Advice {
            topic,
            text: format!(
                "the device ({} usable) is too small for a partition aligned to {} ({basis}; it needs {}); use it whole",
                format_bytes(usable(f)),
                format_bytes(align),
                format_bytes(2 * align)
            ),
            command: None,
        };
    };
    let mut text = format!(
        "one partition that starts at {align} and is a whole number of {align} long, {align} being {}; {}",
        p.basis,
        PARTITION_TYPE_REASON,
        align = format_bytes(p.align_bytes),
    );
    if is_fake(f) {
        text.push_str(&format!(
            "; it ends within the {} that really hold data",
            format_bytes(usable(f))
        ));
    }
    if p.mbr_limited {
        text.push_str(&format!(
            "; an MBR partition ends below 2^32 sectors, so it stops at {}",
            format_bytes(p.start_bytes + p.size_bytes)
        ));
    }
    Advice {
        topic,
        text,
        command: Some(p.command()),
    }
}

/// Recommendations for partitioning and formatting the device: the partition first, then
/// one line per filesystem that fits the geometry, then mount options.
pub fn advise(f: &Findings) -> Vec<Advice> {
    let mut out = vec![partition_advice(f)];
    // The filesystem goes on the partition, or on the whole device when it is too small
    // to partition (never on a fake's whole device: its end does not hold data).
    let (target, fs_bytes) = match partition(f) {
        Some(p) => (PARTITION, p.size_bytes),
        None if !is_fake(f) => (DEVICE, f.size_bytes),
        None => return out,
    };
    out.extend(ext4(f, target));
    out.extend(f2fs(f, target, fs_bytes));
    out.extend(fat(f, target, fs_bytes));
    if let Some(open) = f.open_au {
        if open < 6 {
            let logs = if open >= 4 { 4 } else { 2 };
            out.push(Advice {
                topic: "open erase blocks".into(),
                text: format!(
                    "the card writes to only {open} erase block{} at a time without garbage collection; f2fs writes 6 logs by default, so limit it to {logs}, and avoid many files written at once",
                    if open == 1 { "" } else { "s" }
                ),
                command: Some(format!("mount -o active_logs={logs} {target} MOUNTPOINT")),
            });
        }
    }
    out
}

/// ext4's stripe-width is the erase block in 4 KiB blocks; its stride the page, only where
/// the page is a whole number of blocks (never a made-up stride).
fn ext4(f: &Findings, target: &str) -> Option<Advice> {
    let erase = f.erase_block_bytes?;
    if erase < BLOCK || erase % BLOCK != 0 {
        return None;
    }
    let width = erase / BLOCK;
    let (stride, page_note) = match f.page_bytes {
        Some(p) if p % BLOCK == 0 => (
            Some(p / BLOCK),
            format!("stride = the page ({}), ", format_bytes(p)),
        ),
        Some(p) if BLOCK % p == 0 => (
            None,
            format!(
                "no stride: the page ({}) is smaller than a 4 KiB block, so every block is whole pages; ",
                format_bytes(p)
            ),
        ),
        Some(p) => (
            None,
            format!(
                "no stride: the page ({}) is not a whole number of 4 KiB blocks; ",
                format_bytes(p)
            ),
        ),
        None => (
            None,
            format!(
                "no stride: the page is {}; ",
                if f.geometry_measured {
                    "inconclusive"
                } else {
                    "not measured"
                }
            ),
        ),
    };
    let options = match stride {
        Some(s) => format!("stride={s},stripe-width={width}"),
        None => format!("stripe-width={width}"),
    };
    Some(Advice {
        topic: "ext4".into(),
        text: format!(
            "{page_note}stripe-width = the erase block ({}), in 4 KiB blocks, so ext4's allocator keeps files inside erase blocks",
            format_bytes(erase)
        ),
        command: Some(format!("mkfs.ext4 -b 4096 -E {options} {target}")),
    })
}

/// f2fs: a section of whole 2 MiB segments that is a whole number of erase blocks.
fn f2fs(f: &Findings, target: &str, fs_bytes: u64) -> Option<Advice> {
    let erase = f.erase_block_bytes?;
    let section = lcm(erase, F2FS_SEGMENT)?;
    let segments = section / F2FS_SEGMENT;
    if segments > 64 || fs_bytes < F2FS_MIN_SECTIONS.saturating_mul(section) {
        return None;
    }
    let blocks = section / erase;
    let (text, command) = if segments == 1 {
        (
            format!(
                "f2fs's 2 MiB segments are already whole erase blocks ({})",
                format_bytes(erase)
            ),
            format!("mkfs.f2fs {target}"),
        )
    } else {
        (
            format!(
                "make one f2fs section {segments} × 2 MiB segments = {} erase block{} ({})",
                blocks,
                if blocks == 1 { "" } else { "s" },
                format_bytes(erase)
            ),
            format!("mkfs.f2fs -s {segments} {target}"),
        )
    };
    Some(Advice {
        topic: "f2fs".into(),
        text,
        command: Some(command),
    })
}

/// The FAT cluster for a page: clusters and pages must nest (one a whole multiple of the
/// other), and mkfs.vfat takes a power of two of at most 128 sectors. A 2^n page gets
/// clusters of the page (at least 4 KiB, at most 64 KiB); a 3·2^n page, which no power
/// of two is a multiple of, gets 2^n, so each page is three whole clusters and no cluster
/// straddles a page boundary. `None` where no power of two nests with the page.
pub fn fat_cluster(page: u64, sector: u64) -> Option<u64> {
    if page == 0 {
        return None;
    }
    let pow2 = 1u64 << page.trailing_zeros();
    let cluster = if pow2 == page {
        page.clamp(BLOCK, MAX_CLUSTER)
    } else {
        pow2.min(MAX_CLUSTER)
    }
    .max(sector);
    let nests = cluster % page == 0 || page % cluster == 0;
    (nests && cluster <= MAX_CLUSTER && cluster / sector <= 128).then_some(cluster)
}

/// The FAT width for `fs_bytes` in clusters of `cluster`: FAT32 from 65529 clusters (a
/// FAT32 of fewer is read as FAT16 elsewhere, and mkfs.fat's own limit is there), FAT16
/// from 4085 to 65520. Counted from both sides so the real count is inside: at most one
/// cluster per `cluster` bytes, at least what is left after 1 MiB of reserved sectors,
/// root directory and alignment and the FATs' own entries. `None` near a limit (a window
/// of about 0.2% around 65525 clusters) and where FAT12 or exFAT would be needed.
fn fat_bits(fs_bytes: u64, cluster: u64) -> Option<u32> {
    let most = fs_bytes / cluster;
    let data = fs_bytes.saturating_sub(1 << 20);
    if data / (cluster + 8) >= 65529 && most <= 0x0FFF_FFF5 - 1024 {
        Some(32)
    } else if most <= 65520 && data / (cluster + 4) >= 4085 + 64 {
        Some(16)
    } else {
        None
    }
}

fn fat(f: &Findings, target: &str, fs_bytes: u64) -> Option<Advice> {
    let page = f.page_bytes?;
    let sector = sector_bytes(f);
    let cluster = fat_cluster(page, sector)?;
    // The data area starts at a cluster multiple of the partition; the partition must start
    // at a page multiple for clusters and pages to nest on the device.
    let (align, _) = alignment(f);
    if align % page != 0 {
        return None;
    }
    let bits = fat_bits(fs_bytes, cluster)?;
    let why = if cluster % page == 0 {
        format!(
            "clusters of {} are whole pages ({})",
            format_bytes(cluster),
            format_bytes(page)
        )
    } else {
        format!(
            "clusters of {}: the page ({}) is not a power of two, so no cluster can be whole pages; {} clusters make one page and none straddles a page boundary",
            format_bytes(cluster),
            format_bytes(page),
            page / cluster
        )
    };
    Some(Advice {
        topic: "FAT".into(),
        text: format!("{why}; FAT{bits} for {} clusters", fs_bytes / cluster),
        command: Some(format!(
            "mkfs.vfat -F {bits} -s {} {target}",
            cluster / sector
        )),
    })
}

/// The sfdisk command for a fake that announces `announced` bytes and holds the first
/// `usable`: `probe`'s line, also given by `verify` when its bad extents show a wrap.
pub fn usable_partition_command(
    announced: u64,
    usable: u64,
    logical_sector_bytes: u32,
) -> Option<String> {
    let f = Findings {
        size_bytes: announced,
        logical_sector_bytes,
        usable_bytes: Some(usable),
        ..Findings::default()
    };
    partition(&f).map(|p| p.command())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1 << 10;
    const GIB: u64 = 1 << 30;

    fn card() -> Findings {
        Findings {
            size_bytes: 16 * GIB,
            logical_sector_bytes: 512,
            erase_block_bytes: Some(4 * MIB),
            page_bytes: Some(16 * KIB),
            open_au: Some(4),
            usable_bytes: None,
            geometry_measured: true,
        }
    }

    fn cmd(a: &[Advice], topic: &str) -> Option<String> {
        a.iter()
            .find(|x| x.topic == topic)
            .and_then(|x| x.command.clone())
    }

    /// `key=N` in a command line.
    fn num(cmd: &str, key: &str) -> Option<u64> {
        let at = cmd.find(key)? + key.len();
        cmd[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    }

    /// What every advice list must hold, whatever the geometry: a partition that starts
    /// and ends on the alignment within the usable part, FAT clusters a power of two of at
    /// most 128 sectors that nest with the page, an ext4 stripe-width that is the erase
    /// block and a stride that divides it, an f2fs section of whole erase blocks.
    fn well_formed(f: &Findings) -> Vec<Advice> {
        let a = advise(f);
        let sector = u64::from(f.logical_sector_bytes.max(512));
        let usable = f.usable_bytes.unwrap_or(f.size_bytes);
        assert_eq!(a[0].topic, "partition alignment");
        if let Some(p) = cmd(&a, "partition alignment") {
            let start = num(&p, "start=").unwrap() * sector;
            let size = num(&p, "size=").unwrap() * sector;
            assert!(p.ends_with("| sfdisk --label dos DEVICE"), "{p}");
            assert!(start >= MIB && start % MIB == 0, "{p}");
            if let Some(e) = f.erase_block_bytes {
                assert_eq!(start % e, 0, "{p}");
                assert_eq!(size % e, 0, "{p}");
            }
            assert_eq!(size % start, 0, "{p}");
            assert!(start + size <= usable, "{p}");
            if !partition(f).is_some_and(|p| p.mbr_limited) {
                assert!(start + size > usable.saturating_sub(2 * start), "{p}");
            }
        }
        if let Some(c) = cmd(&a, "FAT") {
            let s = num(&c, "-s ").unwrap();
            assert!(s.is_power_of_two() && s <= 128, "{c}");
            let cluster = s * sector;
            let page = f.page_bytes.unwrap();
            assert!(cluster % page == 0 || page % cluster == 0, "{c}");
            assert!(c.contains("-F 32 ") || c.contains("-F 16 "), "{c}");
        }
        if let Some(c) = cmd(&a, "ext4") {
            let width = num(&c, "stripe-width=").unwrap();
            assert_eq!(width * 4096, f.erase_block_bytes.unwrap(), "{c}");
            if let Some(stride) = num(&c, "stride=") {
                assert_eq!(stride * 4096, f.page_bytes.unwrap(), "{c}");
                assert_eq!(width % stride, 0, "{c}");
            }
        }
        if let Some(c) = cmd(&a, "f2fs") {
            let segments = num(&c, "-s ").unwrap_or(1);
            assert_eq!(segments * 2 * MIB % f.erase_block_bytes.unwrap(), 0, "{c}");
        }
        for x in &a {
            if let Some(c) = &x.command {
                assert!(!x.text.is_empty() && !c.contains("  "), "{x:?}");
            }
        }
        a
    }

    #[test]
    fn a_known_geometry_gives_aligned_partitions_and_mkfs_options() {
        let a = well_formed(&card());
        assert_eq!(
            cmd(&a, "partition alignment").unwrap(),
            format!(
                "echo 'start=8192, size={}, type=c' | sfdisk --label dos DEVICE",
                (16 * GIB - 4 * MIB) / 512
            )
        );
        assert_eq!(
            cmd(&a, "ext4").unwrap(),
            "mkfs.ext4 -b 4096 -E stride=4,stripe-width=1024 PARTITION"
        );
        assert_eq!(cmd(&a, "f2fs").unwrap(), "mkfs.f2fs -s 2 PARTITION");
        assert_eq!(cmd(&a, "FAT").unwrap(), "mkfs.vfat -F 32 -s 32 PARTITION");
        assert_eq!(
            cmd(&a, "open erase blocks").unwrap(),
            "mount -o active_logs=4 PARTITION MOUNTPOINT"
        );
    }

    #[test]
    fn tlc_geometries_of_three_times_a_power_of_two_get_nesting_clusters_and_sections() {
        let a = well_formed(&Findings {
            size_bytes: 32 * GIB,
            erase_block_bytes: Some(12 * MIB),
            page_bytes: Some(24 * KIB),
            ..card()
        });
        let p = cmd(&a, "partition alignment").unwrap();
        assert!(p.contains(&format!("start={},", 12 * MIB / 512)), "{p}");
        assert_eq!(cmd(&a, "f2fs").unwrap(), "mkfs.f2fs -s 6 PARTITION");
        // 24 KiB = 3 × 8 KiB: 8 KiB clusters, never 48 sectors (mkfs.fat rejects it).
        assert_eq!(cmd(&a, "FAT").unwrap(), "mkfs.vfat -F 32 -s 16 PARTITION");
        assert!(a
            .iter()
            .any(|x| x.text.contains("3 clusters make one page")));
        assert_eq!(
            cmd(&a, "ext4").unwrap(),
            "mkfs.ext4 -b 4096 -E stride=6,stripe-width=3072 PARTITION"
        );
        // 3 MiB and 1.5 MiB erase blocks: whole erase blocks per partition unit and section.
        for erase in [3 * MIB, 3 * MIB / 2, 6 * MIB, 384 * KIB] {
            let a = well_formed(&Findings {
                erase_block_bytes: Some(erase),
                page_bytes: Some(12 * KIB),
                ..card()
            });
            assert!(cmd(&a, "partition alignment").is_some(), "{a:?}");
            assert_eq!(cmd(&a, "FAT").unwrap(), "mkfs.vfat -F 32 -s 8 PARTITION");
        }
    }

    #[test]
    fn fat_clusters_are_powers_of_two_that_nest_with_the_page() {
        for (page, cluster) in [
            (2 * KIB, 4 * KIB),
            (4 * KIB, 4 * KIB),
            (16 * KIB, 16 * KIB),
            (128 * KIB, 64 * KIB),
            (24 * KIB, 8 * KIB),
            (48 * KIB, 16 * KIB),
            (6 * KIB, 2 * KIB),
            (192 * KIB, 64 * KIB),
        ] {
            assert_eq!(fat_cluster(page, 512), Some(cluster), "page {page}");
        }
        // 4 KiB sectors: a 6 KiB page nests with no cluster of whole sectors.
        assert_eq!(fat_cluster(6 * KIB, 4096), None);
        assert_eq!(fat_cluster(16 * KIB, 4096), Some(16 * KIB));
    }

    #[test]
    fn fat_widths_keep_inside_the_cluster_counts_either_side_of_65525() {
        let c = 16 * KIB;
        assert_eq!(fat_bits(GIB - 12 * MIB, c), Some(16));
        assert_eq!(fat_bits(65520 * c, c), Some(16));
        assert_eq!(fat_bits(65521 * c, c), None);
        assert_eq!(fat_bits(65529 * (c + 8) + MIB, c), Some(32));
        assert_eq!(fat_bits(2 * GIB, c), Some(32));
        assert_eq!(fat_bits(16 * MIB, c), None, "FAT12 territory");
        assert_eq!(fat_bits(4 << 40, 512), None, "too many clusters for FAT32");
    }

    #[test]
    fn an_unknown_page_gives_only_the_erase_block_to_ext4_and_no_fat_clusters() {
        let a = well_formed(&Findings {
            size_bytes: 128 * MIB,
            erase_block_bytes: Some(128 * KIB),
            page_bytes: None,
            ..card()
        });
        assert_eq!(
            cmd(&a, "ext4").unwrap(),
            "mkfs.ext4 -b 4096 -E stripe-width=32 PARTITION"
        );
        assert!(a
            .iter()
            .any(|x| x.topic == "ext4" && x.text.contains("page is inconclusive")));
        assert!(cmd(&a, "FAT").is_none());
        // A page smaller than a block: every block is whole pages, so no stride either.
        let a = well_formed(&Findings {
            page_bytes: Some(2 * KIB),
            ..card()
        });
        assert_eq!(
            cmd(&a, "ext4").unwrap(),
            "mkfs.ext4 -b 4096 -E stripe-width=1024 PARTITION"
        );
    }

    #[test]
    fn an_unknown_erase_block_says_why_and_gives_no_mkfs_tuning() {
        let inconclusive = Findings {
            erase_block_bytes: None,
            page_bytes: None,
            open_au: None,
            ..card()
        };
        let a = well_formed(&inconclusive);
        assert_eq!(a.len(), 1, "{a:?}");
        assert!(a[0].text.contains("inconclusive"), "{}", a[0].text);
        assert!(a[0].text.contains("--time-budget"), "{}", a[0].text);
        assert!(!a[0].text.contains("flashscope align"), "{}", a[0].text);
        assert!(a[0].command.as_deref().unwrap().contains("start=8192,"));
        let unmeasured = advise(&Findings {
            geometry_measured: false,
            ..inconclusive
        });
        assert!(unmeasured[0].text.contains("`flashscope align`"));
    }

    #[test]
    fn a_fake_card_partition_ends_within_the_real_capacity() {
        let usable = 8 * GIB;
        let f = Findings {
            size_bytes: 64 * GIB,
            usable_bytes: Some(usable),
            ..card()
        };
        let a = well_formed(&f);
        assert!(a[0].text.contains("8 GiB"));
        assert_eq!(
            partition(&f).unwrap().size_bytes,
            usable - 4 * MIB,
            "the last whole erase block below the real end"
        );
        // An odd usable size (a limbo fake ends anywhere).
        well_formed(&Findings {
            usable_bytes: Some(usable - 12345 * 512),
            ..f.clone()
        });
        // Too little real capacity for a partition: no filesystem on the whole device.
        let a = well_formed(&Findings {
            usable_bytes: Some(6 * MIB),
            ..f
        });
        assert_eq!(a.len(), 1, "{a:?}");
        assert!(a[0].command.is_none());
    }

    #[test]
    fn tiny_devices_are_used_whole_with_fitting_filesystems() {
        let a = well_formed(&Findings {
            size_bytes: 6 * MIB,
            ..card()
        });
        assert!(a[0].command.is_none());
        assert!(a
            .iter()
            .skip(1)
            .all(|x| x.command.as_deref().is_some_and(|c| c.contains(" DEVICE"))));
        // No f2fs on 6 MiB, and no FAT of too few clusters.
        assert!(cmd(&a, "f2fs").is_none());
        assert!(cmd(&a, "FAT").is_none());
        // A 128 MiB device with 4 MiB erase blocks: too few sections for f2fs, FAT16.
        let a = well_formed(&Findings {
            size_bytes: 128 * MIB,
            ..card()
        });
        assert!(cmd(&a, "f2fs").is_none());
        assert_eq!(cmd(&a, "FAT").unwrap(), "mkfs.vfat -F 16 -s 32 PARTITION");
    }

    #[test]
    fn four_kib_sectors_and_huge_devices_keep_the_units_and_the_mbr_limit() {
        let a = well_formed(&Findings {
            logical_sector_bytes: 4096,
            ..card()
        });
        assert!(cmd(&a, "partition alignment")
            .unwrap()
            .starts_with("echo 'start=1024,"));
        assert_eq!(cmd(&a, "FAT").unwrap(), "mkfs.vfat -F 32 -s 4 PARTITION");
        let f = Findings {
            size_bytes: 4 << 40,
            ..card()
        };
        let p = partition(&f).unwrap();
        assert!(p.mbr_limited);
        assert!((p.start_bytes + p.size_bytes) / 512 < 1 << 32);
        well_formed(&f);
    }
}
