//! `flashscope smartctl` (issue 47 point 5): Scrutiny's collector's three calls
//! (`--scan --json`, `--info --json DEV`, `--xall --json [--device TYPE] DEV`) on `sim:`
//! cards and recorded sysfs trees (the hidden `--sysfs-root`, as `health`'s tests), the
//! keys checked against real smartctl JSON (tests/data/smartctl/README.md), smartctl's
//! exit bits, the hand-over of other disks to the real smartctl, and flashscope run as
//! `smartctl` through a symbolic link.

use crate::common;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn data(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
        .display()
        .to_string()
}

/// `flashscope smartctl ARGS` with `path` as PATH (None: an empty directory, so no real
/// smartctl takes part): exit code, stdout parsed as JSON, stderr.
fn smartctl(args: &[&str], path: Option<&Path>) -> (i32, Value, String) {
    let empty = tempfile::tempdir().unwrap();
    let out = common::flashscope_abs()
        .arg("smartctl")
        .args(args)
        .env("PATH", path.unwrap_or(empty.path()))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("smartctl {args:?}: stdout is not JSON ({e}): {stdout}"));
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn board(args: &[&str]) -> (i32, Value, String) {
    let root = data("smartctl/sysfs/board");
    let mut all = args.to_vec();
    all.extend(["--sysfs-root", &root]);
    smartctl(&all, None)
}

/// A stub `smartctl` in a new directory: it records its arguments in `args` and prints
/// `fixture` (a path), exiting `code`.
fn stub(fixture: &str, code: i32) -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let args = dir.path().join("args");
    let script = dir.path().join("smartctl");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\n/bin/cat '{fixture}'\nexit {code}\n",
            args.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, args)
}

/// Scrutiny's collector reads these; a missing `local_time.time_t` dates the reading 1970,
/// and a protocol other than ATA, NVMe or SCSI drops every attribute.
fn scrutiny_reads(v: &Value) {
    assert_eq!(v["device"]["protocol"], "NVMe", "{v}");
    assert!(
        v["local_time"]["time_t"].as_u64().unwrap() > 1_600_000_000,
        "{v}"
    );
    assert_eq!(v["json_format_version"], serde_json::json!([1, 0]), "{v}");
}

#[test]
fn scrutinys_three_calls_on_a_simulated_emmc() {
    let (code, info, err) = smartctl(&["--info", "--json", "sim:emmc-8g"], None);
    assert_eq!(code, 0, "{info}");
    assert!(err.is_empty(), "Scrutiny reads stderr with stdout: {err}");
    scrutiny_reads(&info);
    assert_eq!(info["model_name"], "flashscope simulated flash device");
    assert_eq!(info["user_capacity"]["bytes"], 8u64 << 30);
    assert!(
        info.get("nvme_smart_health_information_log").is_none(),
        "{info}"
    );
    assert!(info.get("smart_status").is_none(), "{info}");
    // Scrutiny keeps smart_support from the --info answer.
    assert_eq!(info["smart_support"]["available"], true, "{info}");
    // Scrutiny adds --device TYPE from the info answer's device.type.
    let kind = info["device"]["type"].as_str().unwrap().to_string();
    let (code, x, err) = smartctl(
        &["--xall", "--json", "--device", &kind, "sim:emmc-8g"],
        None,
    );
    assert_eq!(code, 0, "{x}");
    assert!(err.is_empty(), "{err}");
    scrutiny_reads(&x);
    let log = &x["nvme_smart_health_information_log"];
    // sim:emmc-8g: life_time 0x02/0x01 (10-20 % and 0-10 %), pre-EOL normal.
    assert_eq!(log["percentage_used"], 20, "{x}");
    assert!(
        log["percentage_used"].is_u64(),
        "Scrutiny reads an int64: {x}"
    );
    assert_eq!(log["available_spare"], 100);
    assert_eq!(log["available_spare_threshold"], 20);
    assert_eq!(log["critical_warning"], 0);
    assert_eq!(x["smart_status"]["passed"], true);
    assert_eq!(x["smartctl"]["exit_status"], 0);
    // What an eMMC does not report is left out, not given as 0.
    for absent in ["temperature", "power_on_time", "power_cycle_count"] {
        assert!(x.get(absent).is_none(), "{absent}: {x}");
    }
    assert!(log.get("media_errors").is_none(), "{x}");
}

#[test]
fn wear_past_the_limit_sets_the_disk_failing_bit() {
    // (spec, expected exit status, percentage_used, available_spare)
    let cases = [
        (
            "sim:custom,card=mmc,life_time=0x02/0x03,pre_eol=1",
            0,
            Some(30),
            Some(100),
        ),
        (
            "sim:custom,card=mmc,life_time=0x02/0x08,pre_eol=1",
            8,
            Some(80),
            Some(100),
        ),
        (
            "sim:custom,card=mmc,life_time=0x0b/0x01,pre_eol=1",
            8,
            Some(100),
            Some(100),
        ),
        (
            "sim:custom,card=mmc,life_time=0x01/0x01,pre_eol=2",
            8,
            Some(10),
            Some(15),
        ),
        (
            "sim:custom,card=mmc,life_time=0x01/0x01,pre_eol=3",
            8,
            Some(10),
            Some(5),
        ),
        (
            "sim:custom,card=mmc,life_time=0x00/0x00,pre_eol=2",
            8,
            None,
            Some(15),
        ),
    ];
    for (spec, want, used, spare) in cases {
        let (code, x, _) = smartctl(&["-x", "-j", spec], None);
        assert_eq!(code, want, "{spec}: {x}");
        assert_eq!(x["smartctl"]["exit_status"], want, "{spec}");
        assert_eq!(x["smart_status"]["passed"], want == 0, "{spec}: {x}");
        let log = &x["nvme_smart_health_information_log"];
        assert_eq!(log["percentage_used"].as_u64(), used, "{spec}: {x}");
        assert_eq!(log["available_spare"].as_u64(), spare, "{spec}: {x}");
        assert_eq!(
            log["critical_warning"] != 0,
            spare < Some(20),
            "{spec}: {x}"
        );
    }
    // The limit is health's --max-wear.
    let spec = "sim:custom,card=mmc,life_time=0x02/0x08,pre_eol=1";
    let (code, x, _) = smartctl(&["-x", "-j", "--max-wear", "90%", spec], None);
    assert_eq!(code, 0, "{x}");
    // --info alone asks for no verdict: no failing bit.
    let (code, _, _) = smartctl(&["-i", "-j", spec], None);
    assert_eq!(code, 0);
}

#[test]
fn a_card_without_wear_data_says_so_and_claims_no_status() {
    for spec in [
        "sim:sd-16g",
        "sim:usb-32g",
        "sim:custom,card=mmc,ext_csd_rev=6,life_time=0x05/0x05",
    ] {
        let (code, x, _) = smartctl(&["--xall", "--json", spec], None);
        assert_eq!(code, 4, "{spec}: {x}");
        assert!(x.get("smart_status").is_none(), "{spec}: {x}");
        assert!(
            x.get("nvme_smart_health_information_log").is_none(),
            "{spec}: {x}"
        );
        assert_eq!(x["smart_support"]["available"], false);
        assert_eq!(x["smartctl"]["messages"][0]["severity"], "error", "{x}");
    }
}

#[test]
fn recorded_trees_answer_as_health_reads_them() {
    let (code, x, _) = board(&["--xall", "--json", "/dev/mmcblk0"]);
    assert_eq!(code, 0, "{x}");
    scrutiny_reads(&x);
    assert_eq!(x["model_name"], "8GTF4R");
    assert_eq!(x["serial_number"], "0x7a3c91d2");
    assert_eq!(x["firmware_version"], "0x0300000000000000");
    assert_eq!(x["user_capacity"]["bytes"], 15_269_888u64 * 512);
    assert_eq!(
        x["nvme_smart_health_information_log"]["percentage_used"],
        20
    );
    let (code, x, _) = board(&["--xall", "--json", "/dev/mmcblk3"]);
    assert_eq!(code, 8, "{x}");
    assert_eq!(
        x["nvme_smart_health_information_log"]["percentage_used"],
        90
    );
    assert_eq!(
        x["nvme_smart_health_information_log"]["critical_warning"],
        1
    );
    assert_eq!(x["smart_status"]["passed"], false);
    for (disk, code_wanted) in [("/dev/mmcblk1", 4), ("/dev/mmcblk2", 4), ("/dev/loop0", 2)] {
        let (code, x, _) = board(&["--xall", "--json", disk]);
        assert_eq!(code, code_wanted, "{disk}: {x}");
        assert!(x.get("smart_status").is_none(), "{disk}: {x}");
    }
    // health's own trees: the same figures health gives.
    let tree = data("health/sysfs/emmc-5.1");
    let (code, x, _) = smartctl(&["-a", "-j", "--sysfs-root", &tree, "/dev/mmcblk0"], None);
    assert_eq!(code, 0, "{x}");
    assert_eq!(
        x["nvme_smart_health_information_log"]["percentage_used"],
        20
    );
    let tree = data("health/sysfs/emmc-malformed");
    let (code, x, _) = smartctl(&["-a", "-j", "--sysfs-root", &tree, "/dev/mmcblk0"], None);
    assert_eq!(code, 2, "{x}");
    assert!(
        x["smartctl"]["messages"][0]["string"]
            .as_str()
            .unwrap()
            .contains("life_time"),
        "{x}"
    );
}

#[test]
fn scan_lists_the_cards_with_wear_data_then_smartctls_own() {
    let (code, s, err) = board(&["--scan", "--json"]);
    assert_eq!(code, 0, "{s}");
    assert!(err.is_empty(), "{err}");
    let names: Vec<&str> = s["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    // Not the boot, RPMB or partition devices, not the SD card or the revision-6 eMMC
    // (no wear data: Scrutiny would read the missing status as failed), not loop0.
    assert_eq!(names, ["/dev/mmcblk0", "/dev/mmcblk3"], "{s}");
    for d in s["devices"].as_array().unwrap() {
        assert_eq!(d["type"], "mmc");
        assert_eq!(d["protocol"], "NVMe");
        assert_eq!(d["info_name"], d["name"]);
    }
    let said = s["smartctl"]["messages"].to_string();
    assert!(said.contains("/dev/mmcblk1 is left out"), "{said}");
    assert!(said.contains("/dev/mmcblk2 is left out"), "{said}");
    // With smartmontools installed, its own scan follows.
    let (dir, args) = stub(&data("smartctl/scan-nvme-scrutiny.json"), 0);
    let root = data("smartctl/sysfs/board");
    let (_, s, _) = smartctl(
        &["--scan", "--json", "--sysfs-root", &root],
        Some(dir.path()),
    );
    let names: Vec<&str> = s["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["/dev/mmcblk0", "/dev/mmcblk3", "/dev/nvme0"], "{s}");
    assert_eq!(
        std::fs::read_to_string(args).unwrap().trim(),
        "--scan --json"
    );
}

#[test]
fn other_disks_go_to_the_real_smartctl_unchanged() {
    let fixture = data("smartctl/xall-nvme-intel-660p.json");
    let tree = data("health/sysfs/nvme");
    for code_given in [0, 4] {
        let (dir, args) = stub(&fixture, code_given);
        let out = common::flashscope_abs()
            .args(["smartctl", "--xall", "--json", "--sysfs-root", &tree])
            .args(["--device", "nvme", "/dev/nvme0n1"])
            .env("PATH", dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code_given));
        assert_eq!(out.stdout, std::fs::read(&fixture).unwrap());
        // flashscope's own options are not passed on.
        assert_eq!(
            std::fs::read_to_string(&args).unwrap().trim(),
            "--xall --json --device nvme /dev/nvme0n1"
        );
    }
    // No smartctl installed: said in JSON, exit bit 1 (the device could not be read).
    let (code, x, _) = smartctl(&["-x", "-j", "--sysfs-root", &tree, "/dev/nvme0n1"], None);
    assert_eq!(code, 2, "{x}");
    assert!(x["smartctl"]["messages"][0]["string"]
        .as_str()
        .unwrap()
        .contains("not installed"));
}

#[test]
fn command_lines_smartctl_would_refuse_exit_with_bit_0_in_json() {
    for args in [
        vec!["--bogus", "--json", "sim:emmc-8g"],
        vec!["--xall", "sim:emmc-8g"],
        vec!["--xall", "--json"],
        vec!["--xall", "--json", "sim:emmc-8g", "sim:emmc-8g"],
        vec!["--json", "sim:emmc-8g"],
        vec!["--xall", "--json", "-d"],
        vec!["--json=q", "-x", "sim:emmc-8g"],
        vec!["--scan", "--json", "sim:emmc-8g"],
        vec!["-x", "-j", "sim:nosuchpreset"],
        vec!["-x", "-j", "--max-wear", "0.8", "sim:emmc-8g"],
    ] {
        let (code, v, err) = smartctl(&args, None);
        assert_eq!(code, 1, "{args:?}: {v}");
        assert!(err.is_empty(), "{args:?}: {err}");
        assert_eq!(v["smartctl"]["exit_status"], 1);
        assert_eq!(v["smartctl"]["messages"][0]["severity"], "error");
    }
    // The shapes smartctl accepts, all answered.
    for args in [
        vec!["-ij", "sim:emmc-8g"],
        vec!["--json=c", "--info", "sim:emmc-8g"],
        vec!["-j", "-d", "mmc", "-a", "sim:emmc-8g"],
        vec!["-j", "-dnvme", "-H", "sim:emmc-8g"],
        vec!["--device=mmc", "--nocheck=standby", "-xj", "sim:emmc-8g"],
        vec!["-n", "standby", "--json", "--xall", "sim:emmc-8g"],
    ] {
        let (code, v, _) = smartctl(&args, None);
        assert_eq!(code, 0, "{args:?}: {v}");
    }
    let out = common::flashscope()
        .args(["smartctl", "-h"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("--xall"));
}

/// Every key path in `v` (objects' keys joined by `.`, array items as `[]`) with the JSON
/// type of its value.
fn key_types(v: &Value, path: &str, out: &mut BTreeMap<String, &'static str>) {
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if !path.is_empty() {
        out.insert(path.to_string(), kind);
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                key_types(x, &p, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                key_types(x, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_key_is_one_real_smartctl_prints_with_its_type() {
    let mut real = BTreeMap::new();
    let mut files = 0;
    for dir in ["smartctl", "health/smartctl"] {
        for e in std::fs::read_dir(data(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "json") {
                let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
                key_types(&v, "", &mut real);
                files += 1;
            }
        }
    }
    assert!(files >= 10, "{files} real smartctl files");
    let mut ours = BTreeMap::new();
    for args in [
        vec!["--xall", "--json", "/dev/mmcblk0"],
        vec!["--xall", "--json", "/dev/mmcblk3"],
        vec!["--info", "--json", "/dev/mmcblk0"],
        vec!["--xall", "--json", "/dev/mmcblk1"],
        vec!["--scan", "--json"],
        vec!["--bogus", "--json"],
    ] {
        key_types(&board(&args).1, "", &mut ours);
    }
    key_types(
        &smartctl(&["-x", "-j", "sim:emmc-8g"], None).1,
        "",
        &mut ours,
    );
    let mut bad = Vec::new();
    for (k, t) in &ours {
        match real.get(k) {
            Some(r) if r == t => {}
            Some(r) => bad.push(format!("{k}: ours {t}, smartctl's {r}")),
            None => bad.push(format!("{k}: no real smartctl output has it")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // And the keys Scrutiny reads for wear are among them.
    for k in [
        "nvme_smart_health_information_log.percentage_used",
        "nvme_smart_health_information_log.available_spare",
        "smart_status.passed",
        "devices[].protocol",
    ] {
        assert!(ours.contains_key(k), "{k}");
    }
}

/// The binary under test run through a symbolic link named `link` in a new directory.
fn linked_as(link: &str) -> (tempfile::TempDir, std::process::Command) {
    let dir = tempfile::tempdir().unwrap();
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_flashscope"));
    let linked = dir.path().join(link);
    std::os::unix::fs::symlink(&exe, &linked).unwrap();
    // Under a cross runner (qemu-user) the runner starts the link.
    let c = common::bin();
    let runner: Vec<_> = c.get_args().map(|a| a.to_os_string()).collect();
    let cmd = if runner.iter().any(|a| Path::new(a) == exe) {
        let mut cmd = std::process::Command::new(c.get_program());
        cmd.args(runner.iter().map(|a| {
            if Path::new(a) == exe {
                linked.clone().into_os_string()
            } else {
                a.clone()
            }
        }));
        cmd
    } else {
        std::process::Command::new(&linked)
    };
    (dir, cmd)
}

#[test]
fn run_as_smartctl_through_a_symbolic_link() {
    let (_dir, mut cmd) = linked_as("smartctl");
    let out = cmd
        .args(["--xall", "--json", "sim:emmc-8g"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["nvme_smart_health_information_log"]["percentage_used"],
        20
    );
    assert_eq!(v["smartctl"]["argv"][0], "smartctl");
    // Any other name is flashscope as usual.
    let (_dir, mut cmd) = linked_as("flash");
    let out = cmd
        .args(["--xall", "--json", "sim:emmc-8g"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// With flashscope linked as `smartctl` first on PATH, `health` runs the next smartctl
/// there, never flashscope again (which would call itself without end).
#[test]
fn health_skips_a_smartctl_that_is_flashscope_itself() {
    let (link_dir, _) = linked_as("smartctl");
    let (stub_dir, args) = stub(&data("health/smartctl/nvme-intel-660p.json"), 0);
    let path = std::env::join_paths([link_dir.path(), stub_dir.path()]).unwrap();
    let out = common::flashscope_abs()
        .args(["health", "/dev/nvme0n1", "--json", "--sysfs-root"])
        .arg(data("health/sysfs/nvme"))
        .env("PATH", &path)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{v}");
    assert_eq!(v["health"]["smart"]["percentage_used"]["value"], 0.0, "{v}");
    assert!(std::fs::read_to_string(args)
        .unwrap()
        .contains("/dev/nvme0n1"));
}
