//! Preserve mode never costs more wear than the test (issue 19 point 5): for every writing
//! test on a file target, the restore writes at most what the test wrote (rounded up to the
//! sector), and the file is bit-identical afterwards. Each run is cut short by a budget, the
//! case where saving the announced region up front once restored three times the test.

use crate::common;
use common::sha256_of;

use std::path::Path;

/// A file of `size` bytes whose first 96 MiB are random (what the tests write there).
fn random_image(dir: &Path, size: u64) -> std::path::PathBuf {
    use rand::{RngCore, SeedableRng};
    let path = dir.join("card.img");
    let mut data = vec![0u8; 96 << 20];
    rand_pcg::Pcg64::seed_from_u64(19).fill_bytes(&mut data);
    std::fs::write(&path, &data).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(size).unwrap();
    path
}

fn run_json(state: &Path, args: &[&str]) -> serde_json::Value {
    let out = common::flashscope()
        .env("XDG_STATE_HOME", state)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {err}"))
}

#[test]
fn every_write_test_restores_at_most_what_it_wrote_and_leaves_the_data_bit_identical() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let img = random_image(dir.path(), 256 << 20);
    let spec = img.to_str().unwrap();
    let before = sha256_of(&img);
    let cases: [&[&str]; 6] = [
        &["slc", spec, "--recover", "0", "--time-budget", "20ms"],
        &["slc", spec, "--recover", "1s", "--write-budget", "24M"],
        &[
            "fat",
            spec,
            "--erase-size",
            "1M",
            "--nr",
            "4",
            "--write-budget",
            "3M",
        ],
        &[
            "open-au",
            spec,
            "--erase-size",
            "1M",
            "--max-au",
            "8",
            "--write-budget",
            "2M",
        ],
        &["program", spec, "--size", "4M", "--write-budget", "5M"],
        &["probe", spec, "--max-cache", "16M", "--write-budget", "20M"],
    ];
    for case in cases {
        let mut args = case.to_vec();
        args.push("--write");
        let v = run_json(state.path(), &args);
        let p = &v["preserve"];
        assert_eq!(p["mode"], "preserve", "{case:?}: {p}");
        assert_eq!(p["journal_removed"], true, "{case:?}: {p}");
        let sector = v["target"]["logical_sector_bytes"].as_u64().unwrap().max(1);
        let test = p["test_bytes_written"].as_u64().unwrap();
        let restored = p["restore_bytes_written"].as_u64().unwrap();
        assert!(test > 0, "{case:?} wrote nothing: {p}");
        assert!(
            restored <= test.div_ceil(sector) * sector,
            "{case:?}: restored {restored} bytes for a test that wrote {test}: {p}"
        );
        assert_eq!(
            v["bytes_written"].as_u64().unwrap(),
            test + restored,
            "{case:?}"
        );
        assert_eq!(sha256_of(&img), before, "{case:?} changed the data");
    }
    let left: Vec<_> = std::fs::read_dir(state.path().join("flashscope"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "journals left behind: {left:?}");
}
