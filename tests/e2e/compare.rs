//! `compare` calibrated on simulated cards whose truth the test knows (issue 21 point 4):
//! cards whose `write_bw` differs by 10 % must differ significantly, with the right sign,
//! and the 95 % interval must hold the true ratio in at least 9 of 10 pairs; two seeds
//! of the same card must show no significant difference in at least 9 of 10. The truth
//! comes from long noise-free runs of the same cards (the test may know the simulator's
//! parameters; the analysis never does). Bad input ends with exit 2 naming the file.
//!
//! The simulator's noise is per operation (2 % jitter, rare outliers): its per-second
//! samples are nearly independent, and the per-second figure wobbles mostly by how many
//! 1 MiB writes (~12 a second) complete inside each second. Served cards through the real
//! I/O path are in tests/serve.rs (`compare_on_served_cards_…`).

use crate::common;

use common::{flashscope, json};
use std::path::{Path, PathBuf};

const FAST: &str = "write_bw=13.2M";

/// Run `flashscope ARGS --json` and save its document in `dir/name`.
fn save(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let v = json(args);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    path
}

/// `compare` of the saved sides as JSON.
fn compare(sides: &[&Path], extra: &[&str]) -> serde_json::Value {
    let mut args: Vec<&str> = vec!["compare"];
    args.extend(sides.iter().map(|p| p.to_str().unwrap()));
    args.extend(extra);
    json(&args)
}

/// The row of `metric` in a compare document.
fn row<'a>(doc: &'a serde_json::Value, metric: &str) -> &'a serde_json::Value {
    doc["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} row in {doc}"))
}

/// 1 MiB sequential writes for `runtime` on `card`.
fn io_write(card: &str, runtime: &str) -> Vec<String> {
    [
        "io",
        card,
        "--rw",
        "write",
        "--blocksize",
        "1M",
        "--runtime",
        runtime,
        "--write",
    ]
    .map(String::from)
    .to_vec()
}

/// What 1 MiB sequential writes for `runtime` give on `card` without noise: the figure
/// the noisy runs of the same test scatter around. (Not a long run's: on the simulator a
/// test's first seconds write faster than its long-run rate — 13.37 against 13.09 MiB/s
/// over 3 s at 13.2 MiB/s — so a 10 s test's truth is a 10 s test's.)
fn true_bw(card: &str, runtime: &str) -> f64 {
    let spec = format!("{card},noise=0,outliers=0");
    let args = io_write(&spec, runtime);
    let v = json(&args.iter().map(String::as_str).collect::<Vec<_>>());
    v["jobs"][0]["write"]["bw_bytes"].as_f64().unwrap()
}

/// The same for bench's 1 MiB QD1 write test with `--runtime`.
fn true_bench_bw(card: &str, runtime: &str) -> f64 {
    let spec = format!("{card},noise=0,outliers=0");
    let v = json(&["bench", &spec, "--write", "--runtime", runtime]);
    v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["metric"] == "seq_write_q1")
        .unwrap()["bw_bytes"]
        .as_f64()
        .unwrap()
}

/// What a calibration found over its pairs: how many were significant with B faster, held
/// the truth in their interval, or showed no significant difference; a line for each.
#[derive(Default)]
struct Tally {
    lines: Vec<String>,
    right: usize,
    covered: usize,
    same: usize,
}

impl Tally {
    /// Count the compare row `r` of pair `label` against the true ratio `truth`.
    fn add(&mut self, label: String, r: &serde_json::Value, truth: f64) {
        let f = |k: &str| 1.0 + r[k].as_f64().unwrap_or(f64::NAN);
        let (ratio, lo, hi) = (f("difference"), f("ci_low"), f("ci_high"));
        self.right += usize::from(r["significant"] == true && ratio > 1.0);
        self.covered += usize::from(lo <= truth && truth <= hi);
        self.same += usize::from(r["significant"] == false);
        self.lines.push(format!(
            "{label}: {ratio:.4} in [{lo:.4}, {hi:.4}] (truth {truth:.4}): {}",
            r["sentence"].as_str().unwrap_or("?")
        ));
    }

    fn check(&self, what: &str, count: usize, need: usize) {
        let of = self.lines.len();
        eprintln!("{what}: {count} of {of}\n  {}", self.lines.join("\n  "));
        assert!(
            count >= need,
            "{what}: {count} of {of}, need {need}:\n  {}",
            self.lines.join("\n  ")
        );
    }
}

/// `io_write` on `card` for 10 s, saved as `dir/name`.
fn save_io(dir: &Path, name: &str, card: &str) -> PathBuf {
    let args = io_write(card, "10s");
    save(
        dir,
        name,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    )
}

/// Ten pairs of 10 s `io` runs: A on `sim:sd-16g` (seeds 1–10), B on `b_card(seed)`;
/// each pair's 1 MiB write row counted against `truth`.
fn io_pairs(b_card: impl Fn(u32) -> String, truth: f64) -> Tally {
    let dir = tempfile::tempdir().unwrap();
    let mut t = Tally::default();
    for seed in 1..=10 {
        let a = save_io(
            dir.path(),
            &format!("a{seed}.json"),
            &format!("sim:sd-16g,seed={seed}"),
        );
        let b = save_io(dir.path(), &format!("b{seed}.json"), &b_card(seed));
        let doc = compare(&[&a, &b], &[]);
        t.add(format!("seed {seed}"), row(&doc, "seq_write_q1"), truth);
    }
    t
}

#[test]
fn cards_10_percent_apart_differ_significantly_and_the_interval_holds_the_truth() {
    let truth = true_bw(&format!("sim:sd-16g,{FAST}"), "10s") / true_bw("sim:sd-16g", "10s");
    assert!((1.05..1.13).contains(&truth), "true ratio {truth}");
    let t = io_pairs(
        |seed| format!("sim:sd-16g,{FAST},seed={}", seed + 100),
        truth,
    );
    t.check("significant with the right sign", t.right, 9);
    t.check("interval holds the true ratio", t.covered, 9);
}

#[test]
fn two_seeds_of_the_same_card_show_no_significant_difference() {
    let t = io_pairs(|seed| format!("sim:sd-16g,seed={}", seed + 200), 1.0);
    t.check("no significant difference", t.same, 9);
}

#[test]
fn runs_of_bench_give_the_interval_and_it_holds_the_truth() {
    // bench --runs 3 on both sides: every figure's interval comes from the runs.
    let dir = tempfile::tempdir().unwrap();
    let truth =
        true_bench_bw(&format!("sim:sd-16g,{FAST}"), "3s") / true_bench_bw("sim:sd-16g", "3s");
    let mut t = Tally::default();
    for seed in 1..=10 {
        let bench = |name: &str, card: String| {
            save(
                dir.path(),
                &format!("{name}{seed}.json"),
                &["bench", &card, "--write", "--runtime", "3s", "--runs", "3"],
            )
        };
        let a = bench("a", format!("sim:sd-16g,seed={seed}"));
        let b = bench("b", format!("sim:sd-16g,{FAST},seed={}", seed + 100));
        let doc = compare(&[&a, &b], &[]);
        assert_eq!(doc["sides"][0]["runs"], 3, "{}", doc["sides"]);
        let r = row(&doc, "seq_write_q1");
        assert_eq!(r["basis"], "runs", "{r}");
        t.add(format!("seed {seed}"), r, truth);
    }
    t.check("runs: significant with the right sign", t.right, 9);
    t.check("runs: interval holds the true ratio", t.covered, 9);
}

#[test]
fn the_text_states_the_method_and_the_page_has_the_chart() {
    let dir = tempfile::tempdir().unwrap();
    let a = save(
        dir.path(),
        "a.json",
        &["bench", "sim:sd-16g", "--runtime", "6s"],
    );
    let b = save(
        dir.path(),
        "b.json",
        &["bench", "sim:sd-16g,read_bw=20M,seed=9", "--runtime", "6s"],
    );
    let page = dir.path().join("compare.html");
    let out = flashscope()
        .args(["compare", a.to_str().unwrap(), b.to_str().unwrap(), "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("B vs A: faster at 0, slower at 4, no significant difference at 0"),
        "{text}"
    );
    assert!(
        text.contains("slower than A at 1 MiB sequential read, QD8 (95% CI "),
        "{text}"
    );
    assert!(text.contains("circular block bootstrap"), "{text}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("compare: difference from A with its 95 % interval"));
    assert!(html.contains("<path d=\"M"), "no whiskers drawn");
    // The document: rows as samples, an inference per figure, the ratio as metrics.
    let doc = compare(&[&a, &b], &[]);
    assert_eq!(doc["command"], "compare");
    assert_eq!(doc["inferences"]["seq_read"]["status"], "confident");
    assert_eq!(doc["inferences"]["rand_read_q1"]["status"], "confident");
    let metrics = doc["metrics"].as_array().unwrap();
    assert!(metrics
        .iter()
        .any(|m| m["name"] == "compare_ratio_ci_low" && m["labels"]["metric"] == "seq_read"));
}

#[test]
fn fio_json_sides_map_by_workload_and_what_differs_is_refused_unless_forced() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/compare");
    let dir = tempfile::tempdir().unwrap();
    // fio 3.33: three stonewalled 2 s runs of randwrite 4k QD1 direct (runs), and one
    // buffered randwrite 4k with iodepth=4 on psync, which fio caps at QD1 (its note
    // saying so comes before the JSON on stdout).
    let runs = data.join("fio-randwrite-4k-3runs.json");
    let buffered = data.join("fio-randwrite-4k-buffered.json");
    let io = save(
        dir.path(),
        "io.json",
        &[
            "io",
            "sim:sd-16g",
            "--rw",
            "randwrite",
            "--runtime",
            "10s",
            "--write",
        ],
    );
    let doc = compare(&[&runs, &io], &[]);
    let r = row(&doc, "rand_write_q1");
    assert_eq!(doc["sides"][0]["kind"], "fio");
    assert_eq!(doc["sides"][0]["runs"], 3);
    assert!(r["significant"].is_null(), "{r}");
    assert!(
        r["sentence"]
            .as_str()
            .unwrap()
            .contains("A has no per-second rates (fio's JSON keeps none"),
        "{r}"
    );
    let out = flashscope()
        .args(["compare", buffered.to_str().unwrap(), io.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "not comparable",
        "fio-randwrite-4k-buffered.json",
        "4 KiB random write, QD1, buffered",
        "buffered vs direct",
        "--force",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    let forced = compare(&[&buffered, &io], &["--force"]);
    assert_eq!(forced["samples"][0]["forced"].as_array().unwrap().len(), 1);
}

#[test]
fn bad_sides_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = save(d, "a.json", &["io", "sim:sd-16g", "--runtime", "6s"]);
    let a_text = std::fs::read(&a).unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_string()
    };
    let truncated = write("truncated.json", &a_text[..a_text.len() / 2]);
    let other = write(
        "other.json",
        br#"{"schema": "kdiskmark/2", "command": "bench"}"#,
    );
    let not_json = write("fio.txt", b"fio: job startup failed\n");
    let no_jobs = write("nojobs.json", br#"{"fio version": "fio-3.33", "jobs": []}"#);
    let copy = write("copy.json", &a_text);
    let align = save(d, "align.json", &["align", "sim:sd-16g"]);
    let a = a.to_str().unwrap();
    let align = align.to_str().unwrap();
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec![a, &truncated], vec!["truncated.json", "ends early"]),
        (vec![&other, a], vec!["other.json", "schema 'kdiskmark/2'"]),
        (vec![a, &not_json], vec!["fio.txt", "not JSON"]),
        (vec![&no_jobs, a], vec!["nojobs.json", "no jobs"]),
        (vec![a, a], vec!["same run"]),
        (vec![a, &copy], vec!["copy.json", "same run"]),
        (vec![a], vec!["at least two sides (got 1)"]),
        (vec![], vec!["at least two sides (got 0)"]),
        (vec![a, align], vec!["align.json", "'align' documents"]),
        (vec![a, "/dev/zero"], vec!["/dev/zero", "regular file"]),
        (vec!["-", "-"], vec!["standard input"]),
    ];
    for (sides, says) in cases {
        let out = flashscope().arg("compare").args(&sides).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sides:?}: {err}");
        assert!(!err.contains("panicked"), "{sides:?}: {err}");
        for s in says {
            assert!(err.contains(s), "{sides:?}: no '{s}' in {err}");
        }
    }
}

/// The README's compare example, run as written through `sh` in a temporary directory:
/// every line it shows under `compare` (the `...` elisions apart) is printed, in order.
#[test]
fn the_readme_compare_example_runs_as_written_and_prints_what_it_shows() {
    let block = common::readme_console_block("## Comparing runs");
    let dir = tempfile::tempdir().unwrap();
    let mut shown: Vec<&str> = Vec::new();
    let mut printed = String::new();
    for line in block.lines() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            let out = common::sh_example(dir.path(), cmd);
            assert_eq!(out.status.code(), Some(0), "`{cmd}`: {out:?}");
            printed += &String::from_utf8_lossy(&out.stdout);
        } else if line != "..." {
            shown.push(line);
        }
    }
    assert!(shown.len() > 5, "{shown:?}");
    let mut rest = printed.lines();
    for want in shown {
        assert!(
            rest.any(|l| l == want),
            "the README shows '{want}' and compare does not print it (in this order):\n{printed}"
        );
    }
}

/// Sides from the history (issue 21 point 3): a stored run by its id, and a device by its
/// identity, whose stored bench runs are the repetitions; a run with itself, an id that
/// does not exist and a device without runs are refused with exit 2.
#[test]
fn history_ids_and_devices_are_sides() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    let slow = "sim:sd-16g,seed=7";
    let fast = format!("sim:sd-16g,{FAST},seed=8");
    for card in [slow, fast.as_str()] {
        for _ in 0..3 {
            flashscope()
                .args(["--history", db, "bench", card, "--write", "--runtime", "6s"])
                .assert()
                .success();
        }
    }
    // Runs 1-3 are the slow card, 4-6 the fast one.
    let v = json(&["--history", db, "compare", "#1", "4"]);
    assert_eq!(v["sides"][0]["source"], "history run #1", "{}", v["sides"]);
    let r = row(&v, "seq_write_q1");
    assert_eq!(r["basis"], "per_second", "{r}");
    assert_eq!(r["significant"], true, "{r}");
    assert!(r["difference"].as_f64().unwrap() > 0.0, "{r}");
    // The simulated card writes whole 1 MiB I/Os at a steady pace: every second counts
    // the same bytes. The interval is still as wide as that counting allows (it was
    // 9.0–9.0 % before, and the true difference is 9.9 %).
    let width = r["ci_high"].as_f64().unwrap() - r["ci_low"].as_f64().unwrap();
    assert!(width > 0.01, "{r}");
    assert!(
        r["method"]
            .as_str()
            .unwrap()
            .contains("counting resolution"),
        "{r}"
    );

    let v = json(&["--history", db, "compare", slow, &fast]);
    assert_eq!(v["sides"][0]["runs"], 3, "{}", v["sides"]);
    assert_eq!(v["sides"][1]["runs"], 3, "{}", v["sides"]);
    let r = row(&v, "seq_write_q1");
    assert_eq!(r["basis"], "runs", "{r}");
    assert_eq!(r["significant"], true, "{r}");
    assert!(r["difference"].as_f64().unwrap() > 0.0, "{r}");

    for (sides, says) in [
        (vec!["#2", "2"], "same run"),
        (vec!["#1", "#99"], "there is no run 99"),
        (vec!["#1", "sim:usb-32g"], "sim:usb-32g"),
    ] {
        let out = flashscope()
            .args(["--history", db, "compare"])
            .args(&sides)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sides:?}: {err}");
        assert!(err.contains(says), "{sides:?}: no '{says}' in {err}");
    }
    // Without a history database, an id names nothing.
    let out = flashscope()
        .args(["--history", "/nonexistent/h.sqlite", "compare", "#1", "#2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no history database"));
}

/// A fio side whose bandwidth is negative or absurd (1e308) is refused naming the figure,
/// not compared into a negative speed or a 309-digit number (issue 30).
#[test]
fn impossible_rates_in_a_side_are_refused() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/compare");
    let good = std::fs::read_to_string(data.join("fio-randwrite-4k-3runs.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for bad in ["-5000", "1e308"] {
        let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
        v["jobs"][0]["write"]["bw_bytes"] = serde_json::from_str(bad).unwrap();
        let p = dir.path().join("bad.json");
        std::fs::write(&p, v.to_string()).unwrap();
        let out = flashscope()
            .args(["compare"])
            .arg(data.join("fio-randwrite-4k-3runs.json"))
            .arg(&p)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("is not a rate a device can have"),
            "{bad}: {err}"
        );
    }
}
