//! Plans held against the runs (issue 45.6): every measuring command (and `align`, and
//! `auto`'s plan over its steps, read-only and `--write`) on every built-in preset, on the virtual clock (no noise to blame), records its plan, its uncertainty and
//! the device time the run took in the document's `timing`; the plan the run holds once
//! its first measurement gave the device's own rates says ±30 % and holds within it.

use crate::common;

/// Runs whose plan is known to miss by more than its uncertainty, with what was seen.
/// Kept exact: a run on this list that starts to hold fails the test as much as a new
/// miss, so the list stays true. Empty since bench times its random-write sample until the
/// writes settle: `bench --quick --write` on usb-32g planned 25.2 s and took 50.9 s,
/// fake-64g 20.7 against 36.2, sd-a2-fake-64g 17.2 against 23.2, when a sample stopped
/// at its time bound saw only a card's first writes, which pay half.
const KNOWN_OFF: &[(&str, &str)] = &[];

/// The presets `sim list` names, with each one's erase block as `--erase-size` takes it.
fn presets(state: &std::path::Path) -> Vec<(String, String)> {
    let (code, out, err) = common::run_in(state, &["sim", "list", "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    doc["presets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let erase = p["keys"]["erase"].as_str().unwrap().replace(" MiB", "M");
            let erase = erase.replace(" KiB", "K");
            (p["name"].as_str().unwrap().to_string(), erase)
        })
        .collect()
}

#[test]
fn plans_hold_within_30_percent_on_the_virtual_clock_for_every_preset() {
    let state = tempfile::tempdir().unwrap();
    let presets = presets(state.path());
    assert!(presets.len() >= 9, "{presets:?}");
    let commands: &[&str] = &[
        "open-au --write",
        "probe --write",
        "bench --quick --write",
        "bench --quick",
        "align",
        "auto",
        "auto --write",
    ];
    let mut misses = Vec::new();
    let mut table = String::new();
    for cmd in commands {
        for (preset, erase) in &presets {
            let spec = format!("sim:{preset}");
            let mut args: Vec<&str> = cmd.split(' ').collect();
            args.insert(1, &spec);
            if args[0] == "open-au" {
                // Presets without a geometry align could settle are given the erase block.
                args.extend(["--erase-size", erase]);
            }
            args.push("--json");
            let (code, out, err) = common::run_in(state.path(), &args);
            assert!(code == 0 || code == 3, "{args:?}: exit {code}: {err}");
            let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
            let t = &doc["timing"];
            assert!(t.is_object(), "{args:?}: no timing in the document");
            let device = t["device_ns"].as_u64().unwrap() as f64;
            let first = t["planned_ns"].as_u64().unwrap() as f64;
            let first_u = t["planned_uncertainty"].as_f64().unwrap();
            assert!(first > 0.0 && first_u >= 0.3, "{args:?}: {t}");
            let (plan, u) = match t["replanned_ns"].as_u64() {
                Some(ns) => {
                    let at = t["replanned_at_ns"].as_u64().unwrap() as f64;
                    // Worked out again while the run went on, not at its end: in the first
                    // three quarters of the run; bench replans from its random-write sample,
                    // taken just before its random write tests (taken before the sequential
                    // write tests, its random writes slowed them by 10-17 % in --quick, as
                    // workload::bench_sequential_write_is_not_measured_after_its_random_write_sample
                    // shows), so there it comes before the random write tests run.
                    let before = if args[0] == "bench" {
                        let ramp = doc["parameters"]["ramp_ns_per_test"].as_f64().unwrap();
                        let random_writes: f64 = doc["jobs"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .filter(|j| {
                                let n = j["jobname"].as_str().unwrap_or("");
                                n.starts_with("RND") && n.ends_with("write")
                            })
                            .map(|j| j["job_runtime"].as_f64().unwrap() * 1e6 + ramp)
                            .sum();
                        if random_writes > 0.0 {
                            device - 0.9 * random_writes
                        } else {
                            0.75 * device
                        }
                    } else {
                        0.75 * device
                    };
                    assert!(
                        at < before,
                        "{args:?}: replanned at {at} of {device} (must be before {before})"
                    );
                    // Said on stderr exactly when it moved by more than the first plan's
                    // uncertainty (issue 45.6).
                    let moved = (ns as f64 / first - 1.0).abs() > first_u;
                    // auto's steps say their own; auto's line names auto.
                    let line = format!(
                        "flashscope {}: planned again from the device's own rates",
                        args[0]
                    );
                    assert_eq!(
                        err.contains(&line),
                        moved,
                        "{args:?}: first {first} ±{first_u}, now {ns}: {err}"
                    );
                    (ns as f64, t["replanned_uncertainty"].as_f64().unwrap())
                }
                None => {
                    let line = format!("flashscope {}: planned again", args[0]);
                    assert!(!err.contains(&line), "{args:?}: {err}");
                    (first, first_u)
                }
            };
            table.push_str(&format!(
                "{cmd:24} {preset:15} first {:8.1} s (±{:.0} %)  plan {:8.1} s (±{:.0} %)  took {:8.1} s\n",
                first / 1e9,
                first_u * 100.0,
                plan / 1e9,
                u * 100.0,
                device / 1e9
            ));
            if code == 3 {
                // The run ended on its finding (a fake found in its first seconds): its
                // plan, of the long case, is an upper bound.
                assert!(device <= plan * (1.0 + u), "{args:?}: {t}");
                continue;
            }
            assert!(
                u <= 0.3,
                "{args:?}: a plan of ±{u} after its first measurement"
            );
            if (device / plan - 1.0).abs() > 0.3 {
                misses.push((cmd.to_string(), preset.clone()));
            }
        }
    }
    eprintln!("{table}");
    let mut known: Vec<(String, String)> = KNOWN_OFF
        .iter()
        .map(|(c, p)| (c.to_string(), p.to_string()))
        .collect();
    known.sort();
    misses.sort();
    assert_eq!(
        misses, known,
        "plans off by more than 30 % (left) against the known list (right):\n{table}"
    );
}
