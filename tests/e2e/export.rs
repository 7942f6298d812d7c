//! The exporters end to end: `--prometheus` checked by `promtool check metrics`, the alert
//! rules by `promtool check rules`, `--junit` read by Python's junitparser, the LAVA test
//! definition's steps run with a recording `lava-test-case`, and export paths that
//! cannot be written refused before anything is measured.

use crate::common;
use common::{flashscope, has_tool, skip};
use std::path::{Path, PathBuf};
use std::process::Command;

const RULES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/contrib/prometheus/flashscope-rules.yml"
);
const LAVA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/lava/flashscope.yaml");

/// Run flashscope with `args` in `dir` (its state directory too): exit code, stdout.
fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = flashscope()
        .current_dir(dir)
        .env("XDG_STATE_HOME", dir)
        .args(args)
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn promtool() -> bool {
    if has_tool("promtool") {
        return true;
    }
    skip("promtool is not installed (apt-get install prometheus)");
    false
}

/// `promtool check metrics` on a file: (success, what it said).
fn check_metrics(path: &Path) -> (bool, String) {
    let out = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(path).unwrap())
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn prometheus_files_of_the_measuring_commands_pass_promtool() {
    if !promtool() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], i32, &[&str]); 7] = [
        (
            "health.prom",
            &["health", "sim:emmc-8g"],
            0,
            &[
                r#"flashscope_health_status{device="sim:emmc-8g",model="flashscope simulated flash device"} 0"#,
                r#"flashscope_emmc_life_used_ratio{device="sim:emmc-8g",model="flashscope simulated flash device",area="A"} 0.2"#,
                r#",area="B"} 0.1"#,
                "flashscope_pre_eol_info{",
                r#"check="health.wear"} 1"#,
            ],
        ),
        (
            "health-worn.prom",
            &[
                "health",
                "sim:emmc-8g,life_time=0x09/0x0B,pre_eol=3",
                "--max-wear",
                "80%",
            ],
            3,
            &[
                "flashscope_health_status{",
                "} 2\n",
                ",area=\"B\"} 1\n",
                r#"check="health.wear"} 0"#,
            ],
        ),
        (
            "probe.prom",
            &["probe", "sim:fake-64g", "--write"],
            3,
            &[
                r#"flashscope_usable_bytes{device="sim:fake-64g",model="flashscope simulated flash device"} 8589934592"#,
                r#"flashscope_announced_bytes{device="sim:fake-64g",model="flashscope simulated flash device"} 68719476736"#,
                "flashscope_fake_capacity{",
                r#"check="probe.capacity"} 0"#,
            ],
        ),
        (
            "bench.prom",
            &[
                "bench",
                "sim:sd-16g",
                "--runtime",
                "1s",
                "--expect",
                "seq_read>=1MB/s",
            ],
            0,
            &[
                r#"job="rand_read_q1"}"#,
                "# TYPE flashscope_bench_bandwidth_bytes_per_second gauge",
                r#"flashscope_bench_latency_p99_seconds{device="sim:sd-16g",model="flashscope simulated flash device",job="seq_read"}"#,
                r#"check="bench.expect.seq_read"} 1"#,
            ],
        ),
        (
            "io.prom",
            &[
                "io",
                "sim:sd-16g",
                "--rw",
                "randread",
                "--blocksize",
                "4k",
                "--runtime",
                "1s",
            ],
            0,
            &[
                r#"flashscope_io_iops{device="sim:sd-16g",model="flashscope simulated flash device",rw="read"}"#,
                "# TYPE flashscope_io_latency_p50_seconds gauge",
                "# HELP flashscope_io_bandwidth_bytes_per_second ",
            ],
        ),
        (
            "verify.prom",
            &[
                "verify",
                "sim:custom,size=64M,erase=1M,fault=flip@5M+512",
                "--write",
            ],
            3,
            &[
                "flashscope_verify_bad_bytes{",
                "} 512\n",
                "flashscope_verify_checked_bytes{",
            ],
        ),
        (
            "align.prom",
            &["align", "sim:sd-16g"],
            0,
            &["flashscope_erase_block_bytes{", "} 4194304\n"],
        ),
    ];
    let mut all = String::new();
    for (file, args, code, wanted) in cases {
        let path = dir.path().join(file);
        let mut a = args.to_vec();
        a.extend(["--prometheus", path.to_str().unwrap()]);
        let (got, _) = run(dir.path(), &a);
        assert_eq!(got, code, "{a:?}");
        let text = std::fs::read_to_string(&path).unwrap();
        let (ok, said) = check_metrics(&path);
        assert!(ok, "promtool check metrics on {a:?}: {said}\n{text}");
        for w in wanted {
            assert!(text.contains(w), "{a:?}: no {w:?} in\n{text}");
        }
        all.push_str(&text);
    }
    // Only the exports are left: no temporary file beside them.
    assert_eq!(
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count(),
        0
    );
    // The rules' metrics outside `health` are the names the commands write.
    let rules = std::fs::read_to_string(RULES).unwrap();
    for name in [
        "flashscope_fake_capacity",
        "flashscope_verify_bad_bytes",
        "flashscope_check_passed",
        "flashscope_health_status",
        "flashscope_emmc_life_used_ratio",
    ] {
        assert!(
            rules.contains(name) && all.contains(&format!("{name}{{")),
            "{name}"
        );
    }
}

#[test]
fn the_alert_rules_pass_promtool() {
    if !promtool() {
        return;
    }
    let out = Command::new("promtool")
        .args(["check", "rules", RULES])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let rules = std::fs::read_to_string(RULES).unwrap();
    for alert in [
        "FlashWorn",
        "FlashEndOfLife",
        "FlashFakeCapacity",
        "FlashSpeedBelowClass",
    ] {
        assert!(rules.contains(&format!("alert: {alert}\n")), "{alert}");
    }
}

/// junitparser's reading of a JUnit file: per suite `[name, tests, failures]`, per case
/// `[suite, name, result, message, system_out]`, as JSON.
const READ_JUNIT: &str = r#"
import json, sys
from junitparser import JUnitXml, Failure
xml = JUnitXml.fromfile(sys.argv[1])
suites, cases = [], []
for s in xml:
    suites.append([s.name, s.tests, s.failures])
    for c in s:
        failed = [r for r in c.result if isinstance(r, Failure)]
        cases.append([s.name, c.name, "fail" if failed else "pass",
                      failed[0].message if failed else None, c.system_out])
print(json.dumps({"suites": suites, "cases": cases}))
"#;

/// A Python that has junitparser: the one on PATH, or Debian's (where
/// python3-junitparser installs it) when another Python (pyenv, a venv) comes first.
fn junitparser() -> Option<&'static str> {
    let python = ["python3", "/usr/bin/python3"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import junitparser"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if python.is_none() {
        skip("python3-junitparser is not installed (apt-get install python3-junitparser)");
    }
    python
}

fn read_junit(python: &str, path: &Path) -> serde_json::Value {
    let out = Command::new(python)
        .args(["-c", READ_JUNIT])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn junit_files_read_by_junitparser_hold_each_check_and_its_figure() {
    let Some(python) = junitparser() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A fake card: one failing case whose figure is the usable size in the document.
    let path = dir.path().join("probe.xml");
    let (code, stdout) = run(
        dir.path(),
        &[
            "probe",
            "sim:fake-64g",
            "--write",
            "--json",
            "--junit",
            path.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 3);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let usable = doc["inferences"]["usable_bytes"]["value"].as_u64().unwrap();
    let r = read_junit(python, &path);
    assert_eq!(r["suites"], serde_json::json!([["flashscope probe", 1, 1]]));
    let case = &r["cases"][0];
    assert_eq!(case[1], "probe.capacity");
    assert_eq!(case[2], "fail");
    assert!(
        case[3]
            .as_str()
            .unwrap()
            .starts_with("FAKE: announces 64 GiB"),
        "{case}"
    );
    assert!(
        case[4]
            .as_str()
            .unwrap()
            .contains(&format!("measurement: {usable} bytes")),
        "{case}"
    );

    // health on a worn eMMC: one failing case with the worst band's upper bound.
    let path = dir.path().join("health.xml");
    let (code, _) = run(
        dir.path(),
        &[
            "health",
            "sim:emmc-8g,life_time=0x09/0x02",
            "--junit",
            path.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 3);
    let r = read_junit(python, &path);
    assert_eq!(
        r["suites"],
        serde_json::json!([["flashscope health", 1, 1]])
    );
    assert_eq!(r["cases"][0][1], "health.wear");
    assert_eq!(r["cases"][0][2], "fail");
    assert!(
        r["cases"][0][4]
            .as_str()
            .unwrap()
            .contains("measurement: 90 percent"),
        "{}",
        r["cases"][0]
    );

    // bench --expect: one term met, one not, each with the figure the document measured.
    let path = dir.path().join("bench.xml");
    let (code, stdout) = run(
        dir.path(),
        &[
            "bench",
            "sim:sd-16g",
            "--runtime",
            "1s",
            "--json",
            "--expect",
            "seq_read>=1MB/s,rand_read_iops>=1000000",
            "--junit",
            path.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 3);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let r = read_junit(python, &path);
    assert_eq!(r["suites"], serde_json::json!([["flashscope bench", 2, 1]]));
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases[0][1], "bench.expect.seq_read");
    assert_eq!(cases[0][2], "pass");
    assert_eq!(cases[1][1], "bench.expect.rand_read_iops");
    assert_eq!(cases[1][2], "fail");
    for (i, case) in cases.iter().enumerate() {
        let measured = doc["expect"][i]["measured"].as_f64().unwrap();
        let out = case[4].as_str().unwrap();
        assert!(
            out.contains(&format!("measurement: {measured} ")),
            "{case} vs {measured}"
        );
    }
}

#[test]
fn an_export_path_that_cannot_be_written_is_refused_before_anything_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    // A file target: verify --destructive would overwrite all of it.
    let target = dir.path().join("card.img");
    std::fs::write(&target, vec![0u8; 4 << 20]).unwrap();
    let not_a_dir = dir.path().join("card.img/out.prom");
    let missing = dir.path().join("no/such/dir/out.xml");
    for (option, path) in [("--prometheus", &not_a_dir), ("--junit", &missing)] {
        let t0 = std::time::Instant::now();
        let out = flashscope()
            .env("XDG_STATE_HOME", dir.path())
            .args(["verify", target.to_str().unwrap(), "--destructive", option])
            .arg(path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(option) && stderr.contains(path.to_str().unwrap()),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
        assert!(t0.elapsed() < std::time::Duration::from_secs(20));
        // Not one byte written: the target is still all zeros.
        assert!(
            std::fs::read(&target).unwrap().iter().all(|&b| b == 0),
            "{option}"
        );
    }
}

/// The definition's `run: steps:` (each a single-quoted line, as its header asks) and its
/// `params:` (`NAME: 'value'`).
fn lava_definition() -> (Vec<String>, Vec<(String, String)>) {
    let text = std::fs::read_to_string(LAVA).unwrap();
    assert!(text.contains("format: Lava-Test-Shell Test Definition 1.0"));
    let unquote = |s: &str| -> String {
        let s = s.trim();
        assert!(
            s.len() >= 2 && s.starts_with('\'') && s.ends_with('\''),
            "not single-quoted: {s}"
        );
        s[1..s.len() - 1].replace("''", "'")
    };
    let (mut steps, mut params) = (Vec::new(), Vec::new());
    let mut section = "";
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            section = line.trim_end_matches(':');
            continue;
        }
        match section {
            "run" if line.trim() == "steps:" => {}
            "run" => steps.push(unquote(
                line.trim().strip_prefix("- ").expect("a list item"),
            )),
            "params" => {
                let (k, v) = line.trim().split_once(':').unwrap();
                params.push((k.to_string(), unquote(v)));
            }
            _ => {}
        }
    }
    (steps, params)
}

/// A `sh` word for `s`.
fn quoted(s: &std::ffi::OsStr) -> String {
    format!("'{}'", s.to_string_lossy().replace('\'', r"'\''"))
}

#[test]
fn the_lava_definition_reports_every_check_through_lava_test_case() {
    use std::os::unix::fs::PermissionsExt;
    let (steps, params) = lava_definition();
    assert!(steps
        .iter()
        .any(|s| s.contains("bench ") && s.contains("--expect")));
    assert!(params.iter().any(|(k, _)| k == "DEVICE"));
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let calls = dir.path().join("calls");
    let exe = |name: &str, body: String| {
        let p: PathBuf = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    exe(
        "lava-test-case",
        format!("printf '%s\\n' \"$*\" >> {}", quoted(calls.as_os_str())),
    );
    // flashscope on PATH: the binary under test (through the cross runner when set).
    let cmd = common::bin();
    let mut line = vec![quoted(cmd.get_program())];
    line.extend(cmd.get_args().map(quoted));
    exe("flashscope", format!("exec {} \"$@\"", line.join(" ")));
    // As LAVA runs them: the parameters as shell variables (DEVICE and EXPECT as the job
    // would set them), then every step in one script, going on after a failing step.
    let mut script = String::new();
    for (k, v) in &params {
        let v = match k.as_str() {
            "DEVICE" => "sim:sd-16g".to_string(),
            "EXPECT" => "seq_read>=1MB/s,rand_read_iops>=1000000".to_string(),
            _ => v.clone(),
        };
        script.push_str(&format!("{k}={}\n", quoted(v.as_ref())));
    }
    for s in &steps {
        script.push_str(s);
        script.push('\n');
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .envs(common::HISTORY_OFF)
        .arg("-c")
        .arg(&script)
        .current_dir(dir.path())
        .env("PATH", path)
        .env("XDG_STATE_HOME", dir.path())
        .output()
        .unwrap();
    let recorded = std::fs::read_to_string(&calls).unwrap_or_default();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("lava-test-case "),
        "with the helper on PATH flashscope calls it: {stdout}"
    );
    let lines: Vec<&str> = recorded.lines().collect();
    let find = |name: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| {
                panic!(
                    "no call for {name} in {recorded}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
            .split(' ')
            .collect::<Vec<_>>()
    };
    // auto --write: the capacity probe on an honest card passes, with its usable bytes.
    let p = find("probe.capacity");
    assert_eq!(p[1..3], ["--result", "pass"]);
    assert_eq!(p[3], "--measurement");
    assert!(p[4].parse::<f64>().unwrap() > 16e9, "{p:?}");
    assert_eq!(p[5..], ["--units", "bytes"]);
    let s = find("bench.expect.seq_read");
    assert_eq!(s[1..3], ["--result", "pass"]);
    assert!(s[4].parse::<f64>().unwrap() > 1e6);
    assert_eq!(s[5..], ["--units", "bytes/s"]);
    let r = find("bench.expect.rand_read_iops");
    assert_eq!(r[1..3], ["--result", "fail"]);
    assert!(r[4].parse::<f64>().unwrap() < 1e6);
    assert_eq!(r[5..], ["--units", "IOPS"]);
    // health on an SD card: no standard wear counter, so no check (a pass would be
    // untrue); on the eMMC preset, the wear check with its worst band.
    assert!(
        !lines.iter().any(|l| l.starts_with("health.wear ")),
        "{recorded}"
    );
    // Every call is a valid LAVA test case: a name of letters, digits, _ - . and a result.
    for l in &lines {
        let w: Vec<&str> = l.split(' ').collect();
        assert!(
            w[0].chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)),
            "{l}"
        );
        assert!(
            w[1] == "--result" && (w[2] == "pass" || w[2] == "fail"),
            "{l}"
        );
    }
}

#[test]
fn lava_mode_without_the_helper_prints_the_calls() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout) = run(dir.path(), &["probe", "sim:fake-64g", "--write", "--lava"]);
    assert_eq!(code, 3);
    assert_eq!(
        stdout,
        "lava-test-case probe.capacity --result fail --measurement 8589934592 --units bytes\n"
    );
}
