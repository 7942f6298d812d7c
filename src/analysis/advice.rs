//! What to do about the measured geometry: partition alignment and mkfs options.
//! Pure: findings in, advice out.

use crate::units::format_bytes;
use serde::Serialize;

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
}

/// One recommendation: the topic, why, and the command that carries it out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Advice {
    pub topic: String,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

const MIB: u64 = 1 << 20;

/// Recommendations for partitioning and formatting the device.
pub fn advise(f: &Findings) -> Vec<Advice> {
    let mut out = Vec::new();
    let sector = u64::from(f.logical_sector_bytes.max(512));
    // Align partitions to the erase block, and never below 1 MiB (the usual tools' default)
    // nor 4 MiB when the erase block is unknown (a safe multiple of the common sizes).
    let (align, basis) = match f.erase_block_bytes {
        Some(e) if e >= MIB => (e, format!("the erase block ({})", format_bytes(e))),
        Some(e) => (MIB, format!("1 MiB, a multiple of the erase block ({})", format_bytes(e))),
        None => (4 * MIB, "4 MiB (the erase block is unknown; 4 MiB is a multiple of the common sizes up to 4 MiB — run `flashscope align` to know)".to_string()),
    };
    let usable = f.usable_bytes.unwrap_or(f.size_bytes).min(f.size_bytes);
    let fake = usable < f.size_bytes;
    if usable > 2 * align {
        let start = align / sector;
        let length = (usable - align) / align * align / sector;
        let why = if fake {
            format!(
                "start the first partition at {basis} and end it within the {} that really hold data",
                format_bytes(usable)
            )
        } else {
            format!("start every partition at a multiple of {basis}, so filesystem blocks never straddle an erase block")
        };
        out.push(Advice {
            topic: "partition alignment".into(),
            text: why,
            command: Some(format!(
                "echo 'start={start}, size={length}, type=83' | sfdisk DEVICE"
            )),
        });
    } else {
        out.push(Advice {
            topic: "partition alignment".into(),
            text: format!(
                "the device ({}) is too small to align partitions to {basis}; use it whole",
                format_bytes(usable)
            ),
            command: None,
        });
    }
    if let Some(erase) = f.erase_block_bytes {
        let block = 4096u64;
        let stride = f.page_bytes.map_or(1, |p| (p / block).max(1));
        let width = (erase / block).max(1);
        out.push(Advice {
            topic: "ext4".into(),
            text: format!(
                "tell ext4 the page ({}) and erase block ({}) so its allocator keeps writes inside erase blocks",
                f.page_bytes.map_or("unknown".to_string(), format_bytes),
                format_bytes(erase)
            ),
            command: Some(format!("mkfs.ext4 -b 4096 -E stride={stride},stripe-width={width} PARTITION")),
        });
        if erase >= 2 * MIB && erase % (2 * MIB) == 0 {
            let sections = erase / (2 * MIB);
            out.push(Advice {
                topic: "f2fs".into(),
                text: format!(
                    "make one f2fs section ({sections} × 2 MiB segments) one erase block"
                ),
                command: Some(format!("mkfs.f2fs -s {sections} PARTITION")),
            });
        }
        if let Some(page) = f.page_bytes {
            let cluster_sectors = (page / 512).clamp(8, 128);
            out.push(Advice {
                topic: "FAT".into(),
                text: format!(
                    "use clusters of {} (the page size, at least 4 KiB) so each cluster write programs whole pages",
                    format_bytes(cluster_sectors * 512)
                ),
                command: Some(format!("mkfs.vfat -F 32 -s {cluster_sectors} PARTITION")),
            });
        }
    }
    if let Some(open) = f.open_au {
        if open < 6 {
            let logs = if open >= 4 { 4 } else { 2 };
            out.push(Advice {
                topic: "open erase blocks".into(),
                text: format!(
                    "the card writes to only {open} erase block{} at a time without garbage collection; f2fs writes 6 logs by default, so limit it to {logs}, and avoid many files written at once",
                    if open == 1 { "" } else { "s" }
                ),
                command: Some(format!("mount -o active_logs={logs} PARTITION MOUNTPOINT")),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card() -> Findings {
        Findings {
            size_bytes: 16 << 30,
            logical_sector_bytes: 512,
            erase_block_bytes: Some(4 * MIB),
            page_bytes: Some(16 << 10),
            open_au: Some(4),
            usable_bytes: None,
        }
    }

    #[test]
    fn a_known_geometry_gives_aligned_partitions_and_mkfs_options() {
        let a = advise(&card());
        let cmd = |topic: &str| {
            a.iter()
                .find(|x| x.topic == topic)
                .and_then(|x| x.command.clone())
                .unwrap()
        };
        assert_eq!(
            cmd("partition alignment"),
            format!(
                "echo 'start=8192, size={}, type=83' | sfdisk DEVICE",
                ((16u64 << 30) - 4 * MIB) / 512
            )
        );
        assert_eq!(
            cmd("ext4"),
            "mkfs.ext4 -b 4096 -E stride=4,stripe-width=1024 PARTITION"
        );
        assert_eq!(cmd("f2fs"), "mkfs.f2fs -s 2 PARTITION");
        assert_eq!(cmd("FAT"), "mkfs.vfat -F 32 -s 32 PARTITION");
        assert_eq!(
            cmd("open erase blocks"),
            "mount -o active_logs=4 PARTITION MOUNTPOINT"
        );
    }

    #[test]
    fn tlc_erase_blocks_align_to_their_own_size() {
        let a = advise(&Findings {
            erase_block_bytes: Some(12 * MIB),
            page_bytes: Some(24 << 10),
            ..card()
        });
        let p = a[0].command.clone().unwrap();
        assert!(p.contains(&format!("start={}", 12 * MIB / 512)), "{p}");
        assert!(
            a.iter()
                .all(|x| x.topic != "f2fs"
                    || x.command.as_deref() == Some("mkfs.f2fs -s 6 PARTITION"))
        );
    }

    #[test]
    fn unknown_geometry_says_so_and_gives_no_mkfs_tuning() {
        let a = advise(&Findings {
            erase_block_bytes: None,
            page_bytes: None,
            open_au: None,
            ..card()
        });
        assert_eq!(a.len(), 1);
        assert!(a[0].text.contains("unknown"));
        assert!(a[0].command.as_deref().unwrap().contains("start=8192"));
    }

    #[test]
    fn a_fake_card_partition_ends_within_the_real_capacity() {
        let usable = 8u64 << 30;
        let a = advise(&Findings {
            size_bytes: 64 << 30,
            usable_bytes: Some(usable),
            ..card()
        });
        let cmd = a[0].command.clone().unwrap();
        let size: u64 = cmd
            .split("size=")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((8192 + size) * 512 <= usable, "{cmd}");
        assert!(a[0].text.contains("8 GiB"));
    }

    #[test]
    fn tiny_devices_are_not_partitioned() {
        let a = advise(&Findings {
            size_bytes: 6 * MIB,
            ..card()
        });
        assert!(a[0].command.is_none());
    }
}
