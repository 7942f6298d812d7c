//! Every advice line is accepted by the real tools: for several geometries the sfdisk line
//! runs on a loop device of the advised device's size (a sparse file), the partition it
//! makes is checked against the line, and each mkfs line runs on that partition
//! (sfdisk from fdisk, mkfs.ext4 from e2fsprogs, mkfs.vfat from dosfstools, mkfs.f2fs from
//! f2fs-tools; root for the loop devices).

use crate::common;
use common::{flashscope, has_tool, skip, Loop, PartitionNode};
use flashscope::analysis::advice::{advise, Findings, DEVICE, PARTITION};
use serde_json::Value;
use std::process::Command;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The tools are here and the test may make loop devices; otherwise one skip line.
fn ready() -> bool {
    for (tool, package) in [
        ("sfdisk", "fdisk"),
        ("mkfs.ext4", "e2fsprogs"),
        ("mkfs.vfat", "dosfstools"),
        ("mkfs.f2fs", "f2fs-tools"),
        ("wipefs", "util-linux"),
    ] {
        if !has_tool(tool) {
            skip(&format!(
                "{tool} is not installed (apt-get install {package})"
            ));
            return false;
        }
    }
    true
}

/// `sh -c LINE`, which must exit 0.
fn run(line: &str) {
    let out = Command::new("sh").args(["-c", line]).output().unwrap();
    assert!(
        out.status.success(),
        "`{line}` failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `key=N` in the sfdisk line.
fn num(line: &str, key: &str) -> u64 {
    let at = line.find(key).unwrap() + key.len();
    line[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Run the advice (topic, command) for a device of `size` bytes (`extra`: losetup options,
/// e.g. a sector size): the sfdisk line on the loop device, then each mkfs line on a
/// freshly wiped target. Returns the number of commands run.
fn apply(name: &str, size: u64, extra: &[&str], advice: &[(String, Option<String>)]) -> usize {
    // --partscan: the kernel re-reads the table sfdisk writes, and drops the partition
    // when the loop device is detached (one added with partx alone outlives it).
    let args: Vec<&str> = ["--partscan"].iter().chain(extra).copied().collect();
    let Some(lp) = Loop::attach(size, &args) else {
        return 0;
    };
    let mut ran = 0;
    let mut target = lp.dev.clone();
    let mut _node = None;
    for (topic, command) in advice {
        let Some(c) = command else { continue };
        if topic == "partition alignment" {
            let line = c.replace(DEVICE, &lp.dev);
            run(&line);
            let part = format!("{}p1", lp.dev);
            let Some(node) = PartitionNode::create(&lp.dev, &part) else {
                skip(&format!(
                    "{name}: the kernel made no partition on {}",
                    lp.dev
                ));
                return ran;
            };
            _node = Some(node);
            // The kernel's partition is exactly the line's (sysfs counts 512-byte units).
            let sector = std::fs::read_to_string(format!(
                "/sys/class/block/{}/queue/logical_block_size",
                lp.dev.trim_start_matches("/dev/")
            ))
            .unwrap()
            .trim()
            .parse::<u64>()
            .unwrap();
            let sys = |f: &str| -> u64 {
                std::fs::read_to_string(format!(
                    "/sys/class/block/{}/{f}",
                    part.trim_start_matches("/dev/")
                ))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
            };
            assert_eq!(sys("start") * 512, num(c, "start=") * sector, "{name}: {c}");
            assert_eq!(sys("size") * 512, num(c, "size=") * sector, "{name}: {c}");
            target = part;
            ran += 1;
        } else if c.starts_with("mkfs.") {
            let on = if c.ends_with(PARTITION) {
                &target
            } else {
                &lp.dev
            };
            run(&format!("wipefs -q -a {on}"));
            run(&c.replace(PARTITION, on).replace(DEVICE, on));
            ran += 1;
        }
    }
    ran
}

/// The advice in an `auto --json` document, as (topic, command).
fn advice_of(v: &Value) -> Vec<(String, Option<String>)> {
    v["advice"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["topic"].as_str().unwrap().to_string(),
                a["command"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn auto(args: &[&str], code: i32) -> Value {
    let state = tempfile::tempdir().unwrap();
    let out = flashscope()
        .env("XDG_STATE_HOME", state.path())
        .args(["auto", "--json"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn auto_advice_for_the_simulated_cards_is_accepted_by_sfdisk_and_mkfs() {
    if !ready() {
        return;
    }
    for (args, code, commands) in [
        (&["sim:sd-16g"][..], 0, 4),
        (&["sim:usb-32g"][..], 0, 4), // 12 MiB erase blocks, 24 KiB pages
        (&["sim:spinand-128m"][..], 0, 3), // the page is only tentative
        (&["sim:emmc-8g"][..], 0, 4),
        (&["sim:fake-64g", "--write"][..], 3, 4), // ends within the real 8 GiB
    ] {
        let v = auto(args, code);
        let size = v["target"]["size_bytes"].as_u64().unwrap();
        let advice = advice_of(&v);
        let ran = apply(args[0], size, &[], &advice);
        if ran == 0 {
            return; // skipped: no loop device
        }
        assert_eq!(ran, commands, "{args:?}: {advice:?}");
    }
}

#[test]
fn advice_for_odd_geometries_is_accepted_by_sfdisk_and_mkfs() {
    if !ready() {
        return;
    }
    let card = |size, erase, page| Findings {
        size_bytes: size,
        logical_sector_bytes: 512,
        erase_block_bytes: erase,
        page_bytes: page,
        open_au: None,
        usable_bytes: None,
        geometry_measured: true,
    };
    for (name, f, extra, commands) in [
        // 1.5 MiB erase blocks and 12 KiB pages: 3 MiB alignment, 4 KiB clusters.
        (
            "tlc",
            card(2 * GIB, Some(3 * MIB / 2), Some(12 << 10)),
            &[][..],
            4,
        ),
        // A limbo fake that ends at an odd sector.
        (
            "limbo",
            Findings {
                usable_bytes: Some(GIB - 12345 * 512),
                ..card(4 * GIB, Some(4 * MIB), Some(16 << 10))
            },
            &[][..],
            4,
        ),
        // 4 KiB logical sectors: sfdisk counts in them, mkfs.vfat's -s too.
        (
            "4k-sectors",
            Findings {
                logical_sector_bytes: 4096,
                ..card(GIB, Some(4 * MIB), Some(16 << 10))
            },
            &["--sector-size", "4096"][..],
            4,
        ),
        // Too small to partition: ext4 on the whole device.
        (
            "tiny",
            card(6 * MIB, Some(4 * MIB), Some(16 << 10)),
            &[][..],
            1,
        ),
        // A 128 MiB device: FAT16, no f2fs.
        (
            "small",
            card(128 * MIB, Some(4 * MIB), Some(16 << 10)),
            &[][..],
            3,
        ),
        // The erase block unknown: the default alignment and no mkfs lines.
        ("unknown", card(GIB, None, None), &[][..], 1),
    ] {
        let advice: Vec<_> = advise(&f)
            .into_iter()
            .map(|a| (a.topic, a.command))
            .collect();
        let ran = apply(name, f.size_bytes, extra, &advice);
        if ran == 0 {
            return;
        }
        assert_eq!(ran, commands, "{name}: {advice:?}");
    }
}
