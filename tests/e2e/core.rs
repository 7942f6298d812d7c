//! End-to-end tests of the binary for the core: info, sim list, specs and bad input.

use crate::common;
use common::{fails_with, flashscope, json, Loop, Mounted};

use predicates::prelude::*;
use std::process::Command as StdCommand;

#[test]
fn info_on_the_simulated_card_prints_the_contract_document() {
    let v = json(&["info", "sim:sd-16g"]);
    assert_eq!(v["schema"], "flashscope/1");
    assert_eq!(v["command"], "info");
    assert_eq!(v["target"]["size_bytes"], 17179869184u64);
    assert_eq!(v["target"]["logical_sector_bytes"], 512);
    for key in [
        "parameters",
        "samples",
        "inferences",
        "bytes_written",
        "elapsed_ns",
        "warnings",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    // Only what a real device exposes: no hidden geometry.
    let text = v.to_string();
    assert!(
        !text.contains("open_au") && !text.contains("erase"),
        "{text}"
    );
}

#[test]
fn documents_say_when_the_run_started_from_the_real_clock() {
    let now = || {
        let s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        flashscope::vocab::units::format_rfc3339_utc(s)
    };
    let before = now();
    let v = json(&["info", "sim:sd-16g"]);
    let after = now();
    // RFC 3339 UTC strings of one shape order as the instants do.
    let t = v["started_at"].as_str().expect("started_at");
    assert!(
        before.as_str() <= t && t <= after.as_str(),
        "{before} {t} {after}"
    );
}

#[test]
fn info_text_starts_with_a_one_line_summary() {
    flashscope()
        .args(["info", "sim:fake-64g"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "sim:fake-64g: 64 GiB simulated flash device",
        ));
}

#[test]
fn info_on_a_file_takes_the_size_from_fstat() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("card.img");
    std::fs::write(&p, vec![0u8; 3 << 20]).unwrap();
    let v = json(&["info", p.to_str().unwrap()]);
    assert_eq!(v["target"]["size_bytes"], 3 << 20);
    assert_eq!(v["target"]["kind"], "file");
}

#[test]
fn sim_list_shows_every_preset_and_its_keys_round_trip() {
    let v = json(&["sim", "list"]);
    let presets = v["presets"].as_array().unwrap();
    for name in [
        "sd-16g",
        "sd-a2-64g",
        "sd-a2-fake-64g",
        "emmc-8g",
        "usb-32g",
        "fake-64g",
        "spinand-128m",
    ] {
        let p = presets
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name}"));
        // The printed keys describe the same device as the preset name.
        let keys: Vec<String> = p["keys"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap().replace(' ', "")))
            .collect();
        let spec = format!("sim:custom,{}", keys.join(","));
        let a = json(&["info", &spec]);
        let b = json(&["info", &format!("sim:{name}")]);
        assert_eq!(
            a["target"]["size_bytes"], b["target"]["size_bytes"],
            "{spec}"
        );
    }
}

#[test]
fn bad_specs_are_usage_errors_naming_the_value() {
    fails_with(&["info", "sim:custom,size=banana"], 2, "banana");
    fails_with(
        &["info", "sim:custom,colour=red"],
        2,
        "unknown sim key 'colour'",
    );
    fails_with(
        &["info", "sim:custom,erase=5M"],
        2,
        "erase=5242880 is neither a power of two nor 3 x",
    );
    fails_with(&["info", "sim:custom,page=8M"], 2, "larger than erase");
    fails_with(&["info", "sim:custom,page=12K"], 2, "does not divide");
    fails_with(&["info", "sim:custom,real=32G"], 2, "larger than size");
    fails_with(
        &["info", "sim:custom,size=1M"],
        2,
        "smaller than one erase block",
    );
    fails_with(
        &["info", "sim:nosuch"],
        2,
        "unknown simulator preset 'nosuch'",
    );
    fails_with(&["info", "sim:custom,fault=eio@1T+4K"], 2, "beyond the end");
}

#[test]
fn missing_and_wrong_kinds_of_targets() {
    fails_with(&["info", "/nonexistent/card.img"], 1, "does not exist");
    let dir = tempfile::tempdir().unwrap();
    fails_with(&["info", dir.path().to_str().unwrap()], 2, "is a directory");
    fails_with(
        &["info", "/dev/null"],
        2,
        "neither a block device nor a regular file",
    );
    let empty = dir.path().join("empty.img");
    std::fs::write(&empty, b"").unwrap();
    fails_with(&["info", empty.to_str().unwrap()], 2, "is empty");
}

#[test]
fn unknown_arguments_are_usage_errors() {
    flashscope().args(["info"]).assert().code(2);
    flashscope().args(["frobnicate"]).assert().code(2);
    flashscope()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:"));
}

#[test]
fn a_path_without_permission_is_a_runtime_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("secret.img");
    std::fs::write(&p, vec![0u8; 1 << 20]).unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let Some((_bin, mut cmd)) = common::as_nobody(&["info", p.to_str().unwrap()]) else {
        return;
    };
    let out = cmd.output().expect("setpriv runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("permission denied"), "{stderr}");
}

#[test]
fn info_on_a_loop_device_reads_size_and_sectors_by_ioctl() {
    let Some(lo) = Loop::attach(48 << 20, &["--sector-size", "4096"]) else {
        common::skip("needs root and loop devices");
        return;
    };
    let v = json(&["info", &lo.dev]);
    assert_eq!(v["target"]["kind"], "block");
    assert_eq!(v["target"]["size_bytes"], 48u64 << 20);
    assert_eq!(v["target"]["logical_sector_bytes"], 4096);
    assert_eq!(v["identity"]["name"], lo.dev.trim_start_matches("/dev/"));
}

#[test]
fn a_read_only_device_is_refused_for_writing() {
    let Some(lo) = Loop::attach(8 << 20, &["--read-only"]) else {
        common::skip("needs root and loop devices");
        return;
    };
    let err = flashscope::device::open(
        &common::target_spec(&lo.dev),
        &flashscope::device::OpenRequest::read_write(),
    )
    .err()
    .expect("refused");
    assert_eq!(err.exit_code(), 2, "{err}");
    assert!(err.to_string().contains("read-only"), "{err}");
}

#[test]
fn writing_to_a_mounted_device_or_one_with_a_mounted_partition_is_refused() {
    // One partition from 1 MiB to the end.
    let Some(mut disk) = common::Ext4Partition::attach(64 << 20) else {
        return;
    };
    let (lo, part) = (&disk.lo, disk.part.clone());
    let mount_point = disk.dir();
    for target in [&lo.dev, &part] {
        let err = flashscope::device::open(
            &common::target_spec(target),
            &flashscope::device::OpenRequest::read_write(),
        )
        .err()
        .unwrap_or_else(|| panic!("{target} opened for writing while mounted"));
        assert_eq!(err.exit_code(), 2);
        let msg = err.to_string();
        assert!(msg.contains(&mount_point) && msg.contains(&part), "{msg}");
    }
    // Reading stays allowed.
    assert!(flashscope::device::open(
        &common::target_spec(&lo.dev),
        &flashscope::device::OpenRequest::read_only()
    )
    .is_ok());
    let v = json(&["info", &lo.dev]);
    let parts = v["identity"]["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0]["start_bytes"], 1 << 20);
    assert_eq!(parts[0]["mount_points"][0], mount_point.as_str());
    let dev = lo.dev.clone();
    drop(disk.mount.take());
    assert!(flashscope::device::open(
        &common::target_spec(&dev),
        &flashscope::device::OpenRequest::read_write()
    )
    .is_ok());
}

#[test]
fn the_backing_file_of_a_mounted_loop_device_and_a_second_loop_over_it_are_refused() {
    let Some(lo) = Loop::attach(64 << 20, &[]) else {
        return;
    };
    let Some(m) = Mounted::ext4(&lo.dev, "rw") else {
        return;
    };
    let img = lo.img.to_str().unwrap().to_string();
    let Some(second) = Loop::over(&lo.img) else {
        return;
    };
    let journal = lo.dir().join("j");
    for (target, names) in [
        (&img, vec![lo.dev.as_str()]),
        (&second.dev, vec![lo.dev.as_str(), second.dev.as_str()]),
    ] {
        let out = flashscope()
            .args(["program", target, "--write", "--journal"])
            .arg(&journal)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{target}: {err}");
        assert!(err.contains(m.path().to_str().unwrap()), "{err}");
        for n in names {
            assert!(err.contains(n), "{target}: names {n}: {err}");
        }
        assert!(!journal.exists(), "nothing may start: {err}");
    }
    // Unmounted, the same file and the second loop device may be written again.
    drop(m);
    assert!(flashscope::device::open(
        &common::target_spec(&img),
        &flashscope::device::OpenRequest::read_write()
    )
    .is_ok());
    assert!(flashscope::device::open(
        &common::target_spec(&second.dev),
        &flashscope::device::OpenRequest::read_write()
    )
    .is_ok());
}

#[test]
fn a_device_that_vanishes_mid_command_is_a_clear_runtime_error() {
    flashscope()
        .args(["align", "sim:sd-16g,fault=vanish@50"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("the device went away"))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn a_closed_stdout_pipe_is_not_a_panic() {
    let cmd = common::bin();
    let argv: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| format!("'{}'", a.to_string_lossy()))
        .collect();
    // `true` exits at once, so the write meets a pipe without a reader (EPIPE).
    let script = format!(
        "sleep 0.05 | {{ {} sim list --json; echo exit=$? >&2; }} | true",
        argv.join(" ")
    );
    let out = StdCommand::new("bash")
        .envs(common::HISTORY_OFF)
        .args(["-c", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim(), "exit=0", "{stderr}");
}

#[test]
fn a_write_test_on_a_read_only_device_is_refused_by_the_binary() {
    let Some(lo) = Loop::attach(64 << 20, &["--read-only"]) else {
        common::skip("needs root and loop devices");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.fsjournal");
    flashscope()
        .args([
            "open-au",
            &lo.dev,
            "--write",
            "--erase-size",
            "1M",
            "--offset",
            "4M",
            "--max-au",
            "4",
        ])
        .args(["--journal", journal.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("read-only"))
        .stderr(predicate::str::contains("panicked").not());
}

/// Issue 47 point 1: a measuring command's document carries its block device's host path
/// in `target.host_path`, and `auto`'s summary says it in one line. A loop device has no
/// link of its own: its host path names it virtual and says why nothing is known, never a
/// guessed link. A simulated card has none at all (negative control).
#[test]
fn a_measuring_command_on_a_loop_device_carries_its_host_path() {
    let Some(lo) = Loop::attach(32 << 20, &[]) else {
        common::skip("needs root and loop devices");
        return;
    };
    let name = lo.dev.trim_start_matches("/dev/");
    let v = json(&["align", &lo.dev, "--time-budget", "2s"]);
    let h = &v["target"]["host_path"];
    assert_eq!(h["bus"], "virtual", "{v}");
    let why = h["unknown"][0].as_str().unwrap();
    assert!(
        why.contains(name) && why.contains("virtual block device"),
        "{why}"
    );
    assert!(h.get("ceiling").is_none(), "no ceiling is guessed: {h}");
    let out = flashscope()
        .args(["auto", &lo.dev, "--time-budget", "2s"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "host path: unknown, because {name} is a virtual block device"
        )),
        "{text}"
    );
    let sim = json(&["align", "sim:sd-16g"]);
    assert!(
        sim["target"].get("host_path").is_none(),
        "{}",
        sim["target"]
    );
}
