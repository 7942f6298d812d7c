//! End-to-end tests of `auto`, the one-command answer.

use crate::common;
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
            .starts_with("echo 'start=8192,")
            && part["command"]
                .as_str()
                .unwrap()
                .ends_with("| sfdisk --label dos DEVICE"),
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
    assert!(advice[0]["text"].as_str().unwrap().contains("inconclusive"));
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

/// `flashscope auto ARGS` with its own state directory (nothing journaled elsewhere).
fn run_auto(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    flashscope()
        .env("XDG_STATE_HOME", dir.path())
        .arg("auto")
        .args(args)
        .output()
        .unwrap()
}

/// The `command` of each entry of a list (steps, skipped, plan steps).
fn commands(list: &serde_json::Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| s["command"].as_str().unwrap())
        .collect()
}

/// The `--json` document of a run.
fn doc_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The text is a verdict block of a few lines, each command once; --verbose adds the steps.
fn auto_text(args: &[&str], code: i32) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = flashscope()
        .env("XDG_STATE_HOME", dir.path())
        .arg("auto")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn assert_short_block(text: &str) {
    assert!(text.lines().count() < 15, "{text}");
    assert_eq!(text.matches("| sfdisk").count(), 1, "{text}");
    assert!(!text.contains("Boundary cost"), "{text}");
    assert!(text.contains("--verbose"), "{text}");
}

#[test]
fn auto_text_is_a_verdict_block_and_verbose_adds_each_step() {
    let text = auto_text(&["sim:sd-16g"], 0);
    assert_short_block(&text);
    assert!(text.contains("capacity: not checked"), "{text}");
    let text = auto_text(&["sim:fake-64g", "--write"], 3);
    assert_short_block(&text);
    assert!(
        text.starts_with("FAKE: announces 64 GiB, holds 8 GiB"),
        "{text}"
    );
    assert_eq!(text.matches("FAKE:").count(), 1, "{text}");
    assert!(
        text.contains("mount -o active_logs=2 PARTITION MOUNTPOINT"),
        "{text}"
    );
    let verbose = auto_text(&["sim:fake-64g", "--write", "--verbose"], 3);
    for part in [
        "Geometry (align):",
        "Real capacity (probe):",
        "Open erase blocks (open-au):",
        "FAT area (fat): erase blocks that behave differently",
        "Write cache (slc, at most 256 MiB): slc cache bytes",
        "Speed (bench --quick):",
        "Why:",
    ] {
        assert!(verbose.contains(part), "{part}: {verbose}");
    }
    assert_eq!(verbose.matches("| sfdisk").count(), 1, "{verbose}");
    assert_eq!(verbose.matches("FAKE:").count(), 1, "{verbose}");
}

#[test]
fn auto_on_a_loop_device_gives_the_block_and_what_would_help() {
    let Some(lp) = common::Loop::attach(64 << 20, &[]) else {
        return;
    };
    let text = auto_text(&[&lp.dev, "--time-budget", "5s"], 0);
    assert_short_block(&text);
    assert!(!text.contains("run `flashscope align`"), "{text}");
}

#[test]
fn auto_output_writes_one_page_with_every_steps_section_and_charts() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("card.html");
    let out = flashscope()
        .env("XDG_STATE_HOME", dir.path())
        .args(["auto", "sim:usb-32g", "--write", "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    for step in ["auto", "align", "probe", "open-au", "fat", "slc", "bench"] {
        assert!(
            html.contains(&format!("<h2>{step} on sim:usb-32g</h2>")),
            "{step} section missing"
        );
    }
    assert!(html.contains("<svg"), "no chart");
    assert!(!html.contains("<script"), "a script in the page");
    // The text on stdout is the same verdict block as without -o.
    let text = String::from_utf8(out.stdout).unwrap();
    assert_short_block(&text);
}

#[test]
fn auto_output_in_a_missing_directory_is_refused_before_measuring() {
    flashscope()
        .args(["auto", "sim:sd-16g", "--output", "/nonexistent-dir/r.html"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicates::str::contains(
            "--output '/nonexistent-dir/r.html': /nonexistent-dir does not exist",
        ));
}

/// `auto --write --label`: each claimed mark is a check judged by the figure bench measured.
#[test]
fn auto_checks_the_claimed_classes_against_the_measured_figures() {
    let out = run_auto(&["sim:sd-a2-64g", "--write", "--label", "A2 V30", "--json"]);
    let v = doc_of(&out);
    assert_eq!(v["classes"]["claimed"], serde_json::json!(["A2", "V30"]));
    assert_eq!(v["classes"]["claimed_by"], "label");
    let bench = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["command"] == "bench");
    assert!(bench.is_some(), "{}", v["steps"]);
    let check = |name: &str| {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {}", v["checks"]))
            .clone()
    };
    // V30: sequential write against 30 MB/s, the figure bench measured.
    let v30 = check("auto.class_V30");
    assert_eq!(v30["units"], "bytes/s");
    let seq_write = v30["measurement"].as_f64().unwrap();
    assert_eq!(v30["passed"], seq_write >= 30e6, "{v30}");
    // A2: the least-margin figure of 4000 read IOPS, 2000 write IOPS, 10 MB/s.
    let a2 = check("auto.class_A2");
    let app = v["inferences"]["app_class"]["evidence"].as_str().unwrap();
    let iops = |what: &str| -> f64 {
        app.split(&format!("{what} "))
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{what} in {app}"))
    };
    let (read, write) = (iops("read"), iops("write"));
    let met = read >= 4000.0 && write >= 2000.0 && seq_write >= 10e6;
    assert_eq!(a2["passed"], met, "{a2} / {app}");
    let failed = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["passed"] == false);
    assert_eq!(out.status.code(), Some(if failed { 3 } else { 0 }));
    // The text's verdict block says each mark with its figure, in one line.
    let text = auto_text(
        &["sim:sd-a2-64g", "--write", "--label", "A2 V30"],
        if failed { 3 } else { 0 },
    );
    assert_short_block(&text);
    let line = text
        .lines()
        .find(|l| l.starts_with("classes: claimed A2 V30 (by --label): "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(&format!(
            "V30 {}",
            if seq_write >= 30e6 { "met" } else { "NOT met" }
        )),
        "{line}"
    );
    assert!(
        line.contains(&format!("A2 {}", if met { "met" } else { "NOT met" })),
        "{line}"
    );
}

#[test]
fn auto_without_write_says_the_claimed_classes_were_not_measured() {
    let text = auto_text(&["sim:sd-16g", "--label", "u1,c10"], 0);
    assert!(
        text.contains("classes: claimed U1 C10 (by --label): not measured — add --write"),
        "{text}"
    );
    assert_short_block(&text);
    // Without a claim and without --write nothing is said about classes.
    assert!(!auto_text(&["sim:sd-16g"], 0).contains("classes:"));
}

#[test]
fn auto_with_write_and_no_claim_says_what_it_meets() {
    let v = {
        let out = run_auto(&["sim:sd-16g", "--write", "--json"]);
        doc_of(&out)
    };
    let met = v["classes"]["met"].as_array().unwrap();
    let speed = v["inferences"]["speed_class"]["value"].as_str().unwrap();
    assert!(
        met.iter().any(|m| m == speed) || speed == "none",
        "{met:?} {speed}"
    );
    assert!(v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| !c["name"].as_str().unwrap().starts_with("auto.class_")));
}

#[test]
fn auto_refuses_a_bad_label_naming_the_term() {
    use predicates::prelude::*;
    for (label, term) in [
        ("U3 X9", "'X9'"),
        ("V31", "'V31'"),
        (" , ", "--label is empty"),
    ] {
        flashscope()
            .args(["auto", "sim:sd-16g", "--label", label])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains("--label").and(predicates::str::contains(term)));
    }
}

/// `--write-budget` is the whole run's: each writing step gets what is left, and the steps
/// it no longer covers are skipped and named, in the verdict block and the JSON.
#[test]
fn auto_stops_the_pipeline_when_the_write_budget_is_spent() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "sim:sd-16g",
            "--write",
            "--write-budget",
            "64M",
            "--label",
            "U1",
        ];
        args.extend(extra);
        let out = run_auto(&args);
        // The budget stops the probe before its verdict: not decided, exit 1.
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        out
    };
    let v = doc_of(&run(&["--json"]));
    assert!(
        v["bytes_written"].as_u64().unwrap() <= 64 << 20,
        "{}",
        v["bytes_written"]
    );
    let skipped: Vec<&str> = commands(&v["skipped"]);
    let ran: Vec<&str> = commands(&v["steps"]);
    assert!(skipped.contains(&"bench"), "{skipped:?}");
    for s in &skipped {
        assert!(!ran.contains(s), "{s} both ran and was skipped");
    }
    assert!(v["skipped"][0]["why"]
        .as_str()
        .unwrap()
        .contains("write budget of 64 MiB"));
    assert!(v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["name"] != "auto.class_U1"));
    let text = String::from_utf8(run(&[]).stdout).unwrap();
    assert_short_block(&text);
    let line = text
        .lines()
        .find(|l| l.starts_with("skipped: "))
        .unwrap_or_else(|| panic!("{text}"));
    for s in &skipped {
        assert!(line.contains(s), "{line}");
    }
    assert!(text.contains("classes: claimed U1 (by --label): not measured: the bench was skipped (the write budget"), "{text}");
}

#[test]
fn auto_time_budget_is_the_whole_runs() {
    let v = {
        let out = run_auto(&["sim:sd-16g", "--write", "--time-budget", "20s", "--json"]);
        doc_of(&out)
    };
    let steps = v["steps"].as_array().unwrap();
    // align took its device time from the 20 s; probe got what was left.
    let align = &steps[0]["parameters"];
    assert_eq!(align["time_budget_ns"], 20_000_000_000u64);
    let probe = steps.iter().find(|s| s["command"] == "probe").unwrap();
    assert_eq!(
        probe["parameters"]["time_budget_ns"].as_u64().unwrap(),
        20_000_000_000 - align["device_elapsed_ns"].as_u64().unwrap()
    );
    // The probe outlasts it on this card: the steps after it are skipped, and said so.
    let skipped: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["why"].as_str().unwrap().contains("time budget of 20 s"))
        .map(|s| s["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        skipped,
        ["open-au", "fat", "slc", "bench"],
        "{}",
        v["skipped"]
    );
}

/// With --write the plan comes first (stderr): each writing step, the time, the bytes,
/// the journal room; the JSON keeps it under `plan`.
#[test]
fn auto_with_write_prints_the_plan_before_the_first_write() {
    let out = run_auto(&["sim:sd-16g", "--write", "--write-budget", "2G"]);
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    let plan_at = err
        .find("flashscope auto: the plan for sim:sd-16g")
        .expect(&err);
    let first_write = err.find("flashscope probe: ").expect(&err);
    assert!(plan_at < first_write, "{err}");
    let plan = &err[plan_at..first_write];
    for part in [
        "  probe ",
        "  open-au ",
        "  fat ",
        "  slc ",
        "  bench ",
        "in all: typically",
        "journal: none (a simulated card)",
        "budgets: write 2 GiB",
    ] {
        assert!(plan.contains(part), "{part}: {plan}");
    }
    // With --json the plan is in the document, and on stderr only when that is a terminal.
    let out = run_auto(&["sim:sd-16g", "--write", "--write-budget", "2G", "--json"]);
    assert!(!String::from_utf8(out.stderr.clone())
        .unwrap()
        .contains("the plan"));
    let v = doc_of(&out);
    let steps: Vec<&str> = commands(&v["plan"]["steps"]);
    assert_eq!(steps, ["probe", "open-au", "fat", "slc", "bench"]);
    assert!(v["plan"]["typical_bytes"].as_u64().unwrap() > 0);
    // A read-only run has no plan to announce.
    let out = flashscope().args(["auto", "sim:sd-16g"]).output().unwrap();
    assert!(!String::from_utf8(out.stderr).unwrap().contains("the plan"));
}

/// The plan announces each writing step once; running it adds one line, not the step's
/// own description and mode line again.
#[test]
fn auto_with_write_announces_each_step_once() {
    let out = run_auto(&["sim:sd-16g", "--write"]);
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    for (step, described) in [
        ("probe", "probe writes 4 KiB stamps"),
        ("open-au", "open-au writes"),
        ("fat", "fat writes"),
        ("slc", "slc writes"),
        ("bench", "bench writes"),
    ] {
        let own: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with(&format!("flashscope {step}: ")))
            .collect();
        assert_eq!(own.len(), 1, "{step}: {err}");
        assert!(own[0].contains("as auto planned"), "{step}: {err}");
        assert!(!err.contains(described), "{step} described again: {err}");
    }
    assert!(!err.contains("simulated card: it lives"), "{err}");
    // Run on its own, a step still describes what it writes.
    let out = flashscope()
        .args(["fat", "sim:sd-16g", "--erase-size", "4M", "--write"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("flashscope fat: fat writes"), "{err}");
    assert!(err.contains("simulated card: it lives"), "{err}");
}

/// auto's write-cache test is bounded: at most 256 MiB, never more than the budget leaves.
#[test]
fn auto_bounds_the_write_cache_test() {
    let out = run_auto(&["sim:sd-16g", "--write", "--json"]);
    let v = doc_of(&out);
    let slc = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["command"] == "slc")
        .unwrap_or_else(|| panic!("{}", v["steps"]));
    assert!(slc["bytes_written"].as_u64().unwrap() <= 256 << 20, "{slc}");
    assert!(v["inferences"].get("slc_cache_bytes").is_some());
    assert!(v["inferences"].get("fat_area_erase_blocks").is_some());
    // Without a confident erase block fat is skipped, and said so.
    let out = run_auto(&["sim:ssd-256g", "--write", "--json"]);
    let v = doc_of(&out);
    let skipped: Vec<&str> = commands(&v["skipped"]);
    assert!(
        skipped.contains(&"fat") && skipped.contains(&"open-au"),
        "{skipped:?}"
    );
}

/// Issue 43 point 5: `auto --write` refused every device under 256 MiB, the built-in
/// `spinand-128m` included, with "--write-budget 268435456 is more than the whole device"
/// (slc's own 256 MiB cap, an option the user never gave), and the same with
/// `--write-budget 16M`. Each step's cap is bounded by the device and the run's budget.
#[test]
fn auto_write_runs_on_a_device_under_256_mib_with_and_without_a_budget() {
    let out = flashscope()
        .args(["auto", "sim:spinand-128m", "--write", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("more than the whole device"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps: Vec<(String, u64)> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["command"].as_str().unwrap().to_string(),
                s["bytes_written"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    // Every writing step ran, slc within a quarter of the 128 MiB device.
    for step in ["probe", "open-au", "fat", "slc", "bench"] {
        assert!(steps.iter().any(|(c, _)| c == step), "{step}: {steps:?}");
    }
    let slc = steps.iter().find(|(c, _)| c == "slc").unwrap().1;
    assert!(slc > 0 && slc <= 32 << 20, "{slc}");
    // A budget the user gives: never refused for a step's sake, never exceeded.
    let out = flashscope()
        .args([
            "auto",
            "sim:spinand-128m",
            "--write",
            "--write-budget",
            "16M",
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("268435456"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["bytes_written"].as_u64().unwrap() <= 16 << 20);
}

/// A later step's I/O error (here slc's, on a bad area at 200 MiB) keeps every finished
/// step: on a fake, the FAKE found first decides the exit code (3) and the JSON and the
/// report are written; on an honest card the run exits 1 with the same document. Was:
/// exit 1, a 0-byte JSON, no report.
#[test]
fn a_later_step_failing_keeps_the_fake_verdict_the_document_and_the_report() {
    let d = tempfile::tempdir().unwrap();
    let page = d.path().join("eio.html");
    let out = crate::common::flashscope()
        .args([
            "auto",
            "sim:fake-64g,fault=eio@200M+4K",
            "--write",
            "--json",
            "-o",
        ])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["verdict"].as_str().unwrap().starts_with("FAKE"),
        "{doc}"
    );
    let kinds = crate::common::warning_kinds(&doc);
    assert!(kinds.contains(&"step_failed".to_string()), "{kinds:?}");
    assert!(std::fs::metadata(&page).unwrap().len() > 1000);
    let msg = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "step_failed")
        .unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(msg.contains("Input/output error"), "{msg}");

    let out = crate::common::flashscope()
        .args(["auto", "sim:sd-16g,fault=eio@200M+4K", "--write", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["inferences"]["open_au"]["value"], 4u64, "{doc}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("error: writing to"));
}

/// The classes line is as sure as the JSON: a sequential write within its noise of the
/// V6 line leaves `speed_class` inconclusive, and the text says so instead of "meets C6
/// V6 (measured)".
#[test]
fn the_classes_line_carries_the_status_the_json_has() {
    let spec = "sim:custom,size=4G,write_bw=5900K,native_bw=5900K,noise=0.1";
    let doc = crate::common::json(&["auto", spec, "--write"]);
    let status = doc["inferences"]["speed_class"]["status"].as_str().unwrap();
    assert_ne!(status, "confident", "{}", doc["inferences"]["speed_class"]);
    let out = crate::common::flashscope()
        .args(["auto", spec, "--write"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("classes:")).unwrap();
    assert!(line.contains(status), "{line}");
    assert!(!line.ends_with("(measured)"), "{line}");
}

/// A bench of a file in RAM (tmpfs) states no class: a class is a card's, and those
/// timings are the host memory's. Was: "V90 (confident), A2 (confident)" beside the
/// warning that the timings measure RAM.
#[test]
fn bench_on_a_memory_filesystem_claims_no_class() {
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let img = d.path().join("img");
    std::fs::write(&img, vec![0u8; 64 << 20]).unwrap();
    let doc = crate::common::json(&[
        "bench",
        img.to_str().unwrap(),
        "--write",
        "--destructive",
        "--quick",
    ]);
    for k in ["speed_class", "app_class"] {
        let inf = &doc["inferences"][k];
        assert_eq!(inf["status"], "inconclusive", "{k}: {inf}");
        assert!(
            inf["evidence"].as_str().unwrap().contains("in memory"),
            "{inf}"
        );
    }
    assert_eq!(doc["classes"], serde_json::json!([]), "{}", doc["classes"]);
}

/// Read-only auto on a mounted device says it is mounted before the sfdisk and mkfs
/// lines that would destroy its filesystem.
#[test]
fn read_only_auto_on_a_mounted_device_warns_before_its_advice() {
    let Some(lo) = crate::common::Loop::attach(64 << 20, &[]) else {
        return;
    };
    let Some(m) = crate::common::Mounted::ext4(&lo.dev, "rw") else {
        return;
    };
    let out = crate::common::flashscope()
        .args(["auto", &lo.dev, "--time-budget", "5s"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let caution = text
        .lines()
        .position(|l| l.starts_with("CAUTION:") && l.contains("is mounted on"))
        .unwrap_or_else(|| panic!("no CAUTION line: {text}"));
    if let Some(advice) = text.lines().position(|l| l.starts_with("what to do")) {
        assert!(caution < advice, "{text}");
    }
    drop(m);
}

/// Issue 47.2: verdicts that blame the right part, end to end on simulated host paths.
/// The same A2 card behind an SD high-speed host (22.4 MB/s, no command queueing): V30
/// and A2 are "not measurable on this host", undecided (exit 1), never "NOT met"; behind
/// SDR104 with a host that queues, both are met (exit 0). A card that is slow by itself
/// behind the same slow host still fails (exit 3), and a card under A1's figures behind a
/// host without a queue fails A2: the host is blamed only for what it explains.
#[test]
fn class_verdicts_blame_the_host_path_only_for_what_it_caps() {
    let a2 = "sim:sd-a2-64g";
    let verdict = |spec: &str, label: &str| {
        let out = run_auto(&[spec, "--write", "--label", label, "--json"]);
        let v = doc_of(&out);
        let checks: Vec<(String, bool, bool, String)> = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"].as_str().unwrap().starts_with("auto.class_"))
            .map(|c| {
                (
                    c["name"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches("auto.class_")
                        .to_string(),
                    c["passed"].as_bool().unwrap(),
                    c["inconclusive"].as_bool().unwrap_or(false),
                    c["message"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        (out.status.code(), checks, v)
    };
    // Behind SD high-speed: the card is capped at the path's 22.4 MB/s.
    let (code, checks, v) = verdict(&format!("{a2},host_timing=sd-hs"), "V30 A2");
    assert_eq!(code, Some(1), "{checks:?}");
    for (mark, passed, undecided, message) in &checks {
        assert!(!passed && *undecided, "{mark}: {message}");
        assert!(message.contains("not measurable on this host"), "{message}");
    }
    assert!(
        checks[0]
            .3
            .contains("22.4 MB/s, measured through SD high-speed"),
        "{checks:?}"
    );
    assert!(checks[1].3.contains("queue commands"), "{checks:?}");
    // The host path is in the document (info's identity for a simulated card).
    let bench = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["command"] == "bench");
    assert!(bench.is_some());
    // The same card behind SDR104 with command queueing: both met.
    let (code, checks, _) = verdict(&format!("{a2},host_timing=sdr104,host_cmdq=1"), "V30 A2");
    assert_eq!(code, Some(0), "{checks:?}");
    assert!(checks.iter().all(|c| c.1 && !c.2), "{checks:?}");
    // A card slow by itself (12 MiB/s writes) behind SD high-speed: V30 NOT met.
    let (code, checks, _) = verdict("sim:sd-16g,host_timing=sd-hs", "V30");
    assert_eq!(code, Some(3), "{checks:?}");
    assert!(
        !checks[0].1 && !checks[0].2 && checks[0].3.contains("NOT met"),
        "{checks:?}"
    );
    // A card without a queue or small-write area (5 write IOPS): A2 NOT met, whatever
    // the host's queue.
    let (code, checks, _) = verdict("sim:sd-a2-fake-64g,host_timing=sdr104", "A2");
    assert_eq!(code, Some(3), "{checks:?}");
    assert!(checks[0].3.contains("A2 NOT met"), "{checks:?}");
    // The card alone (no host path): as before, nothing is blamed on a host.
    let (code, checks, _) = verdict(a2, "V30 A2");
    assert!(checks.iter().all(|c| !c.2), "{checks:?}");
    assert_ne!(code, Some(1));
}

/// Issue 47.2: bench behind a capped host path marks the classes the path keeps from
/// being measured, and its class answers are tentative lower bounds, not the card's.
#[test]
fn bench_marks_classes_the_host_path_caps() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = common::run_in(
        dir.path(),
        &[
            "bench",
            "sim:sd-a2-64g,host_timing=sd-hs",
            "--write",
            "--quick",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let classes = v["classes"].as_array().unwrap();
    let limited: Vec<&str> = classes
        .iter()
        .filter(|c| c["host_limited"].is_string())
        .map(|c| c["class"].as_str().unwrap())
        .collect();
    assert_eq!(limited, ["V90", "V60", "V30", "U3", "A2"], "{classes:?}");
    assert_eq!(v["inferences"]["speed_class"]["status"], "tentative");
    let (code, out, _) = common::run_in(
        dir.path(),
        &["bench", "sim:sd-a2-64g", "--write", "--quick", "--json"],
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["host_limited"].is_null()));
}
