//! End-to-end tests of `flashscope fs seq|files|matrix`: on a temp directory on the
//! machine's disk, and (as root) on a loop device formatted ext4, on ramfs (which refuses
//! O_DIRECT), on a read-only and on a tiny tmpfs. Sizes stay at a few MiB.

use crate::common;
use common::{fails_with, flashscope, is_root, json, warning_kinds, Loop, Mounted};
use predicates::prelude::*;
use std::path::Path;
use std::process::Command as StdCommand;

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The write rate of one mode in a `fs seq` document.
fn write_rate(doc: &serde_json::Value, mode: &str) -> f64 {
    doc["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["mode"] == mode)
        .and_then(|s| s["write"]["bytes_per_s"].as_f64())
        .unwrap_or_else(|| panic!("no write figure for {mode}: {doc}"))
}

#[test]
fn seq_on_a_temp_dir_measures_every_mode_and_the_cache_effect() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let v = json(&["fs", "seq", dir, "--size", "8M", "--runs", "3"]);
    assert_eq!(v["schema"], "flashscope/1");
    assert_eq!(v["command"], "fs seq");
    assert_eq!(v["target"]["kind"], "directory");
    assert_eq!(v["parameters"]["file_bytes"], 8 << 20);
    assert_eq!(v["parameters"]["runs"], 3);
    let samples = v["samples"].as_array().unwrap();
    let modes: Vec<&str> = samples
        .iter()
        .map(|s| s["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["buffered", "fdatasync", "dsync", "sync", "direct"]);
    // Five modes three times each and the untimed warm-up file, every byte counted.
    assert_eq!(v["parameters"]["warmup_bytes"], 8 << 20);
    assert_eq!(v["bytes_written"], 16 * (8 << 20));
    for s in samples {
        assert_eq!(s["cold_read"]["bytes"], 8 << 20, "{s}");
        assert_eq!(s["runs"], 3);
        assert_eq!(s["write_runs"].as_array().unwrap().len(), 3);
    }
    // The page cache's effect, as measured (median of three runs): the buffered write
    // returns before the data is on the disk, so it reports more than a mode that waits
    // for every write.
    let buffered = write_rate(&v, "buffered");
    assert!(
        buffered > write_rate(&v, "dsync") && buffered > write_rate(&v, "sync"),
        "buffered {buffered} not above the synced modes: {}",
        v["samples"]
    );
    // The timeline sampled /proc/meminfo while it ran.
    let timeline = v["timeline"].as_array().unwrap();
    assert!(!timeline.is_empty());
    assert!(timeline[0]["dirty_bytes"].is_u64());
    assert!(timeline[0]["vmstat"]["nr_dirtied"].is_u64());
    assert!(warning_kinds(&v).contains(&"file_smaller_than_ram".to_string()));
    assert!(v["inferences"]["sustained_write_bytes_per_s"]["value"].is_u64());
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn seq_text_is_a_table_of_modes_and_the_plot_is_svg() {
    let d = tempfile::tempdir().unwrap();
    let plot = d.path().join("seq.svg");
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    flashscope()
        .args(["fs", "seq", work.to_str().unwrap(), "--size", "2M"])
        .args([
            "--mode",
            "buffered,fdatasync",
            "--plot",
            plot.to_str().unwrap(),
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("sustained write"))
        .stdout(predicate::str::contains("conv=fdatasync"))
        .stdout(predicate::str::contains("dirty peak"))
        .stdout(predicate::str::contains("direct").not())
        .stderr(predicate::str::contains("smaller than RAM"));
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Dirty") && svg.contains("Writeback"));
}

#[test]
fn seq_keep_leaves_the_test_files() {
    let d = tempfile::tempdir().unwrap();
    json(&[
        "fs",
        "seq",
        d.path().to_str().unwrap(),
        "--size",
        "1M",
        "--mode",
        "buffered,direct",
        "--keep",
    ]);
    let e = entries(d.path());
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(e.iter().all(|n| n.starts_with("flashscope-seq-")));
    assert_eq!(
        std::fs::metadata(d.path().join(&e[0])).unwrap().len(),
        1 << 20
    );
}

#[test]
fn seq_on_a_loop_device_with_ext4_shows_the_cache_effect() {
    if !is_root() {
        common::skip("needs root for losetup and mount");
        return;
    }
    let Some(lo) = Loop::attach(96 << 20, &[]) else {
        return;
    };
    let mkfs = StdCommand::new("mkfs.ext4")
        .args(["-q", "-F", &lo.dev])
        .status();
    if !mkfs.is_ok_and(|s| s.success()) {
        common::skip("mkfs.ext4 failed");
        return;
    }
    let Some(m) = Mounted::new(&[&lo.dev]) else {
        return;
    };
    let v = json(&[
        "fs",
        "seq",
        m.path().to_str().unwrap(),
        "--size",
        "8M",
        "--runs",
        "3",
        "--drop-caches",
    ]);
    assert_eq!(v["target"]["fs_type"], "ext4");
    assert_eq!(v["target"]["mount_source"], lo.dev);
    let buffered = write_rate(&v, "buffered");
    for synced in ["dsync", "sync"] {
        let s = write_rate(&v, synced);
        assert!(
            buffered > s,
            "buffered {buffered} B/s not above {synced} {s} B/s on ext4 over a loop device"
        );
    }
    let samples = v["samples"].as_array().unwrap();
    assert!(
        samples.iter().all(|s| s["supported"] == true),
        "{samples:?}"
    );
    assert_eq!(samples[0]["cold_method"], "drop_caches");
    assert_eq!(samples[4]["cold_method"], "O_DIRECT");
    assert_eq!(entries(m.path()), vec!["lost+found".to_string()]);
    drop(m);
}

#[test]
fn a_filesystem_refusing_o_direct_reports_that_mode_unsupported_and_runs_the_others() {
    if !is_root() {
        common::skip("needs root to mount ramfs");
        return;
    }
    let Some(m) = Mounted::new(&["-t", "ramfs", "ramfs"]) else {
        return;
    };
    let v = json(&["fs", "seq", m.path().to_str().unwrap(), "--size", "2M"]);
    let samples = v["samples"].as_array().unwrap();
    for s in samples {
        if s["mode"] == "direct" {
            assert_eq!(s["supported"], false);
            assert!(s["unsupported_reason"]
                .as_str()
                .unwrap()
                .contains("O_DIRECT"));
        } else {
            assert_eq!(s["supported"], true, "{s}");
            assert!(s["write"]["bytes_per_s"].as_f64().unwrap() > 0.0);
        }
    }
    let kinds = warning_kinds(&v);
    assert!(
        kinds.contains(&"memory_filesystem".to_string()),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&"direct_unsupported".to_string()),
        "{kinds:?}"
    );
    assert_eq!(v["bytes_written"], 5 * (2 << 20));
}

#[test]
fn a_missing_or_unwritable_directory_is_a_runtime_error() {
    fails_with(
        &["fs", "seq", "/nonexistent/flashscope", "--size", "1M"],
        1,
        "does not exist",
    );
    fails_with(&["fs", "files", "/nonexistent/x"], 1, "does not exist");
    fails_with(&["fs", "matrix", "/nonexistent/x"], 1, "does not exist");
    let f = tempfile::NamedTempFile::new().unwrap();
    fails_with(
        &["fs", "seq", f.path().to_str().unwrap()],
        2,
        "is not a directory",
    );
    if !is_root() {
        common::skip("(the read-only part) needs root to mount");
        return;
    }
    let Some(m) = Mounted::new(&["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"]) else {
        return;
    };
    fails_with(
        &["fs", "seq", m.path().to_str().unwrap(), "--size", "1M"],
        1,
        "is not writable (it is on a read-only filesystem)",
    );
}

#[test]
fn not_enough_free_space_is_refused_before_writing() {
    if !is_root() {
        common::skip("needs root to mount a small tmpfs");
        return;
    }
    let Some(m) = Mounted::new(&["-t", "tmpfs", "-o", "size=4m", "tmpfs"]) else {
        return;
    };
    let dir = m.path().to_str().unwrap();
    fails_with(
        &["fs", "seq", dir, "--size", "16M"],
        2,
        "free but this test needs 16 MiB",
    );
    fails_with(
        &["fs", "files", dir, "--sizes", "1M", "--total", "32M"],
        2,
        "give a smaller --total",
    );
    fails_with(
        &["fs", "matrix", dir, "--max-file", "8M"],
        2,
        "lower --max-file",
    );
    assert!(entries(m.path()).is_empty());
}

#[test]
fn bad_sizes_are_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    fails_with(&["fs", "files", dir, "--sizes", "4K,0"], 2, "is zero");
    fails_with(
        &["fs", "files", dir, "--sizes", "4K,banana"],
        2,
        "'banana' is not a size",
    );
    fails_with(&["fs", "files", dir, "--sizes", "4K,,8K"], 2, "empty entry");
    fails_with(
        &["fs", "files", dir, "--total", "0"],
        2,
        "--total 0 is zero",
    );
    fails_with(
        &["fs", "seq", dir, "--size", "3M", "--blocksize", "2M"],
        2,
        "multiple of --blocksize",
    );
    fails_with(
        &["fs", "seq", dir, "--blocksize", "0"],
        2,
        "--blocksize 0 is zero",
    );
    fails_with(
        &["fs", "seq", dir, "--size", "-4M"],
        2,
        "--size -4M is negative",
    );
    fails_with(
        &["fs", "files", dir, "--sizes", "-4K"],
        2,
        "'-4K' is not a size",
    );
    fails_with(&["fs", "seq", dir, "--mode", "turbo"], 2, "turbo");
    fails_with(
        &["fs", "seq", dir, "--warmup", "lots"],
        2,
        "--warmup: 'lots' is not a size",
    );
    fails_with(
        &["fs", "seq", dir, "--size", "1M", "--runs", "0"],
        2,
        "--runs 0 is out of range",
    );
    fails_with(&["fs", "matrix", dir, "--max-file", "4K"], 2, "64 KiB");
    fails_with(&["fs", "matrix", dir, "--max-record", "1K"], 2, "4 KiB");
    assert!(entries(d.path()).is_empty());
}

#[test]
fn files_sweep_reports_mb_and_files_per_second_per_size() {
    let d = tempfile::tempdir().unwrap();
    let plot = tempfile::NamedTempFile::new().unwrap();
    let v = json(&[
        "fs",
        "files",
        d.path().to_str().unwrap(),
        "--sizes",
        "256K,16K,4K",
        "--total",
        "1M",
        "--plot",
        plot.path().to_str().unwrap(),
    ]);
    assert_eq!(v["command"], "fs files");
    let s = v["samples"].as_array().unwrap();
    let files: Vec<u64> = s.iter().map(|r| r["files"].as_u64().unwrap()).collect();
    assert_eq!(files, vec![4, 64, 256]);
    assert_eq!(v["bytes_written"], 3 << 20);
    for r in s {
        assert!(r["write_bytes_per_s"].as_f64().unwrap() > 0.0);
        assert!(r["read_files_per_s"].as_f64().unwrap() > 0.0);
    }
    assert!(v["inferences"]["small_file_write_ratio"]["value"].is_f64());
    let svg = std::fs::read_to_string(plot.path()).unwrap();
    assert_eq!(svg.matches("<polyline").count(), 4);
    assert!(entries(d.path()).is_empty());
}

#[test]
fn matrix_csv_parses_back_to_the_json_numbers() {
    let d = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let csv = out.path().join("m.csv");
    let prefix = out.path().join("heat");
    let v = json(&[
        "fs",
        "matrix",
        d.path().to_str().unwrap(),
        "--max-file",
        "256K",
        "--max-record",
        "64K",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        prefix.to_str().unwrap(),
    ]);
    assert_eq!(v["command"], "fs matrix");
    let cells = v["samples"].as_array().unwrap();
    // files 64K, 128K, 256K × records 4K … 64K.
    assert_eq!(cells.len(), 15);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "file_bytes",
            "record_bytes",
            "write",
            "rewrite",
            "read",
            "reread",
            "random_read",
            "random_write"
        ]
    );
    let rows: Vec<Vec<u64>> = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), cells.len());
    for (row, cell) in rows.iter().zip(cells) {
        assert_eq!(row[0], cell["file_bytes"].as_u64().unwrap());
        assert_eq!(row[1], cell["record_bytes"].as_u64().unwrap());
        for (i, test) in header[2..].iter().enumerate() {
            assert_eq!(
                row[i + 2],
                cell[*test]["bytes_per_s"].as_u64().unwrap(),
                "{test} of {cell}"
            );
            assert!(row[i + 2] > 0);
        }
    }
    for t in header[2..].iter() {
        let svg = std::fs::read_to_string(out.path().join(format!("heat-{t}.svg"))).unwrap();
        assert!(svg.contains("log colour scale"), "{t}");
    }
    assert!(warning_kinds(&v).contains(&"file_smaller_than_ram".to_string()));
    assert!(entries(d.path()).is_empty());
}

#[test]
fn matrix_text_has_one_table_per_test() {
    let d = tempfile::tempdir().unwrap();
    flashscope()
        .args(["fs", "matrix", d.path().to_str().unwrap()])
        .args(["--max-file", "64K", "--max-record", "16K", "--sync"])
        .assert()
        .success()
        .stdout(predicate::str::contains("with O_SYNC"))
        .stdout(predicate::str::contains("random_write (MiB/s)"))
        .stdout(predicate::str::contains("16 KiB"));
}

#[test]
fn zeros_on_a_plain_filesystem_needs_no_compression_warning() {
    let d = tempfile::tempdir().unwrap();
    let v = json(&[
        "fs",
        "seq",
        d.path().to_str().unwrap(),
        "--size",
        "1M",
        "--mode",
        "buffered",
        "--pattern",
        "zeros",
    ]);
    assert_eq!(v["parameters"]["pattern"], "zeros");
    let kinds = warning_kinds(&v);
    assert!(
        !kinds.iter().any(|k| k.contains("compress")),
        "{kinds:?} on {}",
        v["target"]["fs_type"]
    );
}

/// Run the binary as nobody (uid 65534); `None` (after a skip line) where that cannot be.
fn as_nobody(args: &[&str]) -> Option<std::process::Output> {
    let (_bin, mut cmd) = common::as_nobody(args)?;
    cmd.output().ok()
}

#[test]
fn without_root_the_basic_modes_run_and_drop_caches_falls_back_with_a_warning() {
    if !is_root() {
        common::skip("needs root to switch to another user");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let open = tempfile::tempdir().unwrap();
    std::fs::set_permissions(open.path(), PermissionsExt::from_mode(0o777)).unwrap();
    let Some(out) = as_nobody(&[
        "fs",
        "seq",
        open.path().to_str().unwrap(),
        "--size",
        "1M",
        "--mode",
        "buffered,fdatasync",
        "--drop-caches",
        "--json",
    ]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(warning_kinds(&v).contains(&"drop_caches_failed".to_string()));
    assert!(v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["cold_method"] == "posix_fadvise"));
    assert!(entries(open.path()).is_empty());

    let closed = tempfile::tempdir().unwrap();
    std::fs::set_permissions(closed.path(), PermissionsExt::from_mode(0o755)).unwrap();
    let out = as_nobody(&["fs", "files", closed.path().to_str().unwrap()]).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is not writable (you may not create files there)"),
        "{stderr}"
    );
}

#[test]
fn a_compressing_filesystem_with_zeros_gets_a_warning_and_random_does_not() {
    if !is_root() {
        common::skip("needs root for losetup and mount");
        return;
    }
    let has_mkfs = StdCommand::new("mkfs.btrfs")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_mkfs {
        common::skip("mkfs.btrfs is not installed (btrfs-progs)");
        return;
    }
    let Some(lo) = Loop::attach(128 << 20, &[]) else {
        return;
    };
    let mkfs = StdCommand::new("mkfs.btrfs")
        .args(["-q", "-f", &lo.dev])
        .output();
    if !mkfs.is_ok_and(|o| o.status.success()) {
        common::skip("mkfs.btrfs failed");
        return;
    }
    let Some(m) = Mounted::new(&["-o", "compress=zstd", &lo.dev]) else {
        return;
    };
    let dir = m.path().to_str().unwrap();
    let base = [
        "fs",
        "seq",
        dir,
        "--size",
        "2M",
        "--mode",
        "buffered,fdatasync",
    ];
    let mut zeros = base.to_vec();
    zeros.extend(["--pattern", "zeros"]);
    let v = json(&zeros);
    assert_eq!(v["target"]["fs_type"], "btrfs");
    assert_eq!(v["target"]["compresses"], true);
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "compressing_filesystem")
        .unwrap_or_else(|| panic!("no compression warning: {}", v["warnings"]));
    assert!(w["message"].as_str().unwrap().contains("--pattern random"));
    let v = json(&base);
    assert!(!warning_kinds(&v).iter().any(|k| k.contains("compress")));
    assert!(entries(m.path()).is_empty());
    drop(m);
}

#[test]
fn ctrl_c_stops_the_test_and_removes_its_files() {
    let d = tempfile::tempdir().unwrap();
    let child = common::bin()
        .args(["fs", "seq", d.path().to_str().unwrap()])
        .args([
            "--size",
            "1G",
            "--blocksize",
            "64K",
            "--mode",
            "dsync",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the test file exists, then interrupt.
    let start = std::time::Instant::now();
    while entries(d.path()).is_empty() && start.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: kill with a pid we spawned and a valid signal number.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Stopped by a signal: 128 + SIGINT, as every command (not 1, a failure).
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn tmpfs_is_named_a_memory_filesystem() {
    if !is_root() {
        common::skip("needs root to mount tmpfs");
        return;
    }
    let Some(m) = Mounted::new(&["-t", "tmpfs", "-o", "size=16m", "tmpfs"]) else {
        return;
    };
    let v = json(&[
        "fs",
        "seq",
        m.path().to_str().unwrap(),
        "--size",
        "1M",
        "--mode",
        "buffered,fdatasync",
    ]);
    assert_eq!(v["target"]["fs_type"], "tmpfs");
    assert_eq!(v["target"]["memory_backed"], true);
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "memory_filesystem")
        .unwrap_or_else(|| panic!("{}", v["warnings"]));
    assert!(w["message"].as_str().unwrap().contains("speed of memory"));
}

#[test]
fn a_total_below_the_file_size_writes_one_file_and_says_so() {
    let d = tempfile::tempdir().unwrap();
    let v = json(&[
        "fs",
        "files",
        d.path().to_str().unwrap(),
        "--sizes",
        "2M,512K",
        "--total",
        "1M",
    ]);
    let files: Vec<u64> = v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["files"].as_u64().unwrap())
        .collect();
    assert_eq!(files, vec![1, 2]);
    assert_eq!(v["bytes_written"], (2 << 20) + (1 << 20));
    assert!(warning_kinds(&v).contains(&"total_below_file_size".to_string()));
}

#[test]
fn matrix_direct_bypasses_the_cache_and_ramfs_refuses_it() {
    let d = tempfile::tempdir().unwrap();
    let v = json(&[
        "fs",
        "matrix",
        d.path().to_str().unwrap(),
        "--max-file",
        "128K",
        "--max-record",
        "64K",
        "--direct",
    ]);
    assert_eq!(v["parameters"]["direct"], true);
    assert_eq!(v["samples"].as_array().unwrap().len(), 10);
    // With O_DIRECT nothing is cached, so the RAM caveat does not apply.
    assert!(!warning_kinds(&v).contains(&"file_smaller_than_ram".to_string()));
    if !is_root() {
        common::skip("(the ramfs part) needs root to mount");
        return;
    }
    let Some(m) = Mounted::new(&["-t", "ramfs", "ramfs"]) else {
        return;
    };
    fails_with(
        &[
            "fs",
            "matrix",
            m.path().to_str().unwrap(),
            "--max-file",
            "64K",
            "--direct",
        ],
        1,
        "refused O_DIRECT",
    );
    assert!(entries(m.path()).is_empty());
}
