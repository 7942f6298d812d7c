//! End-to-end tests of `auto`, the one-command answer.

mod common;
use common::{flashscope, json};

#[test]
fn auto_finds_the_geometry_and_advises_aligned_partitions() {
    let v = json(&["auto", "sim:sd-16g"]);
    assert_eq!(v["command"], "auto");
    assert_eq!(v["inferences"]["erase_block_bytes"]["value"], 4u64 << 20);
    assert_eq!(v["inferences"]["erase_block_bytes"]["status"], "confident");
    let advice = v["advice"].as_array().unwrap();
    let part = advice
        .iter()
        .find(|a| a["topic"] == "partition alignment")
        .unwrap();
    assert!(
        part["command"]
            .as_str()
            .unwrap()
            .starts_with("echo 'start=8192,"),
        "{part}"
    );
    assert!(advice
        .iter()
        .any(|a| a["command"] == "mkfs.ext4 -b 4096 -E stride=4,stripe-width=1024 PARTITION"));
}

#[test]
fn auto_on_a_device_without_geometry_gives_no_tuned_mkfs_advice() {
    let v = json(&["auto", "sim:ssd-256g"]);
    assert!(
        v["inferences"]["erase_block_bytes"]["value"].is_null(),
        "{}",
        v["inferences"]
    );
    let advice = v["advice"].as_array().unwrap();
    assert_eq!(advice.len(), 1, "{advice:?}");
    assert!(advice[0]["text"].as_str().unwrap().contains("unknown"));
}

#[test]
fn auto_text_leads_with_the_answer() {
    flashscope()
        .args(["auto", "sim:usb-32g"])
        .assert()
        .success()
        .stdout(predicates::str::starts_with(
            "sim:usb-32g: 32 GiB; erase block 12 MiB (confident), page 24 KiB (confident)",
        ));
}

#[test]
fn auto_with_write_adds_the_open_erase_block_count_and_its_advice() {
    let dir = tempfile::tempdir().unwrap();
    let out = flashscope()
        .env("XDG_STATE_HOME", dir.path())
        .args(["auto", "sim:usb-32g", "--write", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["inferences"]["open_au"]["value"], 2);
    assert!(v["bytes_written"].as_u64().unwrap() > 0);
    let advice = v["advice"].as_array().unwrap();
    assert!(
        advice
            .iter()
            .any(|a| a["command"] == "mount -o active_logs=2 PARTITION MOUNTPOINT"),
        "{advice:?}"
    );
    assert_no_journal(dir.path());
}

/// A simulated card lives in the process: nothing is journaled for it (issue 17).
fn assert_no_journal(state: &std::path::Path) {
    let made: Vec<_> = std::fs::read_dir(state.join("flashscope"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(made.is_empty(), "journals made for a sim: target: {made:?}");
}

#[test]
fn auto_without_write_writes_nothing() {
    let v = json(&["auto", "sim:sd-16g"]);
    assert_eq!(v["bytes_written"], 0);
    assert!(v["inferences"].get("open_au").is_none());
}

#[test]
fn auto_with_write_calls_a_fake_card_fake_and_partitions_within_its_real_size() {
    let dir = tempfile::tempdir().unwrap();
    let out = flashscope()
        .env("XDG_STATE_HOME", dir.path())
        .args(["auto", "sim:fake-64g", "--write", "--json"])
        .assert()
        .code(3)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_no_journal(dir.path());
    assert_eq!(v["inferences"]["fake_kind"]["value"], "wrap");
    let usable = v["inferences"]["usable_bytes"]["value"].as_u64().unwrap();
    assert!(usable <= 8 << 30);
    let part = v["advice"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["topic"] == "partition alignment")
        .unwrap();
    let cmd = part["command"].as_str().unwrap();
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
}
