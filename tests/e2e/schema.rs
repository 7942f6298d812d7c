//! The documents the commands write validate against schema/flashscope-1.schema.json
//! (issue 46.5), read by a validator that is not the one the schema was generated with:
//! Python's `jsonschema` (Debian's python3-jsonschema), draft 2020-12. The schema file
//! itself is held to the result types by the library's unit test
//! `report::schema::tests::the_schema_file_is_the_one_the_result_types_give`.

use crate::common;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};

/// Reads the schema (argv[1]) and a list of `[name, document]` on stdin; prints, per
/// document, `[name, [error, ...]]` with each error's path in the document.
const VALIDATE: &str = r#"
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
v = Draft202012Validator(schema)
out = []
for name, doc in json.load(sys.stdin):
    errs = sorted(v.iter_errors(doc), key=lambda e: str(list(e.absolute_path)))
    out.append([name, ["/" + "/".join(map(str, e.absolute_path)) + ": " + e.message[:400]
                       for e in errs]])
print(json.dumps(out))
"#;

/// A Python that has jsonschema: the one on PATH, or Debian's (where python3-jsonschema
/// installs it) when another Python comes first. Skips (a failure under
/// FLASHSCOPE_NO_SKIP) without one.
fn python() -> Option<&'static str> {
    let python = ["python3", "/usr/bin/python3"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "from jsonschema import Draft202012Validator"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if python.is_none() {
        common::skip("python3-jsonschema is not installed (apt-get install python3-jsonschema)");
    }
    python
}

fn schema_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/flashscope-1.schema.json")
}

/// Each document's errors against the schema (empty when it validates), by name.
fn errors(python: &str, docs: &[(String, Value)]) -> Vec<(String, Vec<String>)> {
    let mut child = Command::new(python)
        .args(["-c", VALIDATE])
        .arg(schema_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(docs).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(&input).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "the validator failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every document validates; the failures are listed by name with their errors.
pub fn assert_valid(docs: &[(String, Value)]) {
    let Some(python) = python() else { return };
    let bad: Vec<String> = errors(python, docs)
        .into_iter()
        .filter(|(_, e)| !e.is_empty())
        .map(|(name, e)| format!("{name}:\n  {}", e.join("\n  ")))
        .collect();
    assert!(
        bad.is_empty(),
        "{} of {} documents do not validate against schema/flashscope-1.schema.json:\n{}",
        bad.len(),
        docs.len(),
        bad.join("\n")
    );
}

/// The JSON documents of the corpus (tests/data/corpus/*.json.txt: stdout of each
/// `--json` run that wrote one), with the host's figures the corpus masks as `"<host>"`
/// (all of them numbers) given back as 0.
fn corpus_documents() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json.txt"))
        .collect();
    names.sort();
    let mut docs = Vec::new();
    for name in names {
        let text = std::fs::read_to_string(dir.join(&name)).unwrap();
        let Some((_, stdout)) = text.split_once("\n=== stdout\n") else {
            continue;
        };
        let stdout = stdout.split("\n=== ").next().unwrap();
        if !stdout.starts_with('{') {
            continue;
        }
        let doc: Value = serde_json::from_str(&stdout.replace("\"<host>\"", "0"))
            .unwrap_or_else(|e| panic!("{name}: not one JSON document: {e}"));
        docs.push((name, doc));
    }
    docs
}

#[test]
fn every_corpus_document_validates_against_the_schema() {
    let docs = corpus_documents();
    // Every command the corpus runs with a document, none quietly left out.
    let commands: std::collections::BTreeSet<&str> = docs
        .iter()
        .filter_map(|(_, d)| d["command"].as_str())
        .collect();
    assert!(docs.len() >= 35, "{} corpus documents", docs.len());
    assert!(commands.len() >= 18, "{commands:?}");
    assert_valid(&docs);
}

/// The commands that write a document on a simulated card, each run on presets of
/// every kind of medium the simulator has besides the corpus's (sd-16g).
#[test]
fn every_commands_document_on_other_presets_validates_against_the_schema() {
    let presets = ["emmc-8g", "usb-32g", "nogeo-1g", "sd-a2-fake-64g"];
    let commands: &[&[&str]] = &[
        &["info"],
        &["health"],
        &["probe", "--write"],
        &["verify", "--write", "--range", "0+64M"],
        &["align", "--time-budget", "5s"],
        &["scatter"],
        &["interval"],
        &["bench", "--write", "--quick"],
        &["open-au", "--write"],
        &["fat", "--write"],
        &["program", "--write"],
        &["slc", "--write"],
    ];
    let runs: Vec<Vec<String>> = presets
        .iter()
        .flat_map(|p| {
            commands.iter().map(move |c| {
                let mut a = vec![c[0].to_string(), format!("sim:{p}")];
                a.extend(c[1..].iter().map(|s| s.to_string()));
                a.push("--json".into());
                a
            })
        })
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let docs = std::sync::Mutex::new(Vec::new());
    let failed = std::sync::Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(args) = runs.get(k) else { break };
                let out = common::flashscope().args(args).output().unwrap();
                let line = args.join(" ");
                match serde_json::from_slice::<Value>(&out.stdout) {
                    // A device that fails a check (exit 3) still writes its document.
                    Ok(doc) if matches!(out.status.code(), Some(0 | 3)) => {
                        docs.lock().unwrap().push((line, doc))
                    }
                    _ => failed.lock().unwrap().push(format!(
                        "{line}: exit {:?}, no document: {}",
                        out.status.code(),
                        String::from_utf8_lossy(&out.stderr)
                    )),
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    // A card without erase-block geometry (nogeo) gives align no step: open-au and fat
    // refuse (exit 2) and ask for --erase-size rather than guess it.
    let failed: Vec<&String> = failed
        .iter()
        .filter(|f| {
            !((f.starts_with("open-au sim:nogeo-1g ") || f.starts_with("fat sim:nogeo-1g "))
                && f.contains("exit Some(2)")
                && f.contains("give --erase-size"))
        })
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    let mut docs = docs.into_inner().unwrap();
    docs.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(
        docs.len() >= presets.len() * (commands.len() - 1),
        "{} documents",
        docs.len()
    );
    assert_valid(&docs);
}

/// The schema refuses what a changed document would hold: the validation can fail.
#[test]
fn the_schema_refuses_renamed_fields_wrong_types_and_broken_rules() {
    let Some(python) = python() else { return };
    let docs = corpus_documents();
    let find = |name: &str| docs.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let health = find("health_sim_emmc-8g.json.txt");
    let probe = find("probe_sim_fake-64g_--write.json.txt");
    let bench = find("bench_sim_sd-16g_--write_--quick.json.txt");
    type Mutation = (&'static str, Value, fn(&mut Value));
    let cases: Vec<Mutation> = vec![
        ("unchanged", health.clone(), |_| {}),
        ("a top-level field renamed", health.clone(), |d| {
            let v = d.as_object_mut().unwrap().remove("bytes_written").unwrap();
            d["bytes_writen"] = v;
        }),
        ("a field of the target renamed", health.clone(), |d| {
            let v = d["target"]
                .as_object_mut()
                .unwrap()
                .remove("device")
                .unwrap();
            d["target"]["devices"] = v;
        }),
        ("a field of a check renamed", health.clone(), |d| {
            let c = d["checks"][0].as_object_mut().unwrap();
            let v = c.remove("passed").unwrap();
            c.insert("pass".into(), v);
        }),
        ("a number written as a string", health.clone(), |d| {
            d["elapsed_ns"] = json!("12");
        }),
        ("a negative byte count", health.clone(), |d| {
            d["bytes_written"] = json!(-1)
        }),
        ("a parameter of another type", health.clone(), |d| {
            d["parameters"]["max_wear_percent"] = json!("80")
        }),
        ("a command that does not exist", health.clone(), |d| {
            d["command"] = json!("healthy")
        }),
        ("another schema", health.clone(), |d| {
            d["schema"] = json!("flashscope/2")
        }),
        ("a value while inconclusive", health.clone(), |d| {
            d["inferences"]["status"]["status"] = json!("inconclusive")
        }),
        ("an unknown status", health.clone(), |d| {
            d["inferences"]["status"]["status"] = json!("sure")
        }),
        ("a warning without its message", health.clone(), |d| {
            d["warnings"] = json!([{ "kind": "stopped_early" }])
        }),
        ("a sample of another kind", probe.clone(), |d| {
            d["samples"][0]["type"] = json!("spin")
        }),
        ("a field left out of a sample", probe.clone(), |d| {
            let s = d["samples"][0].as_object_mut().unwrap();
            let k = s.keys().find(|k| *k != "type").unwrap().clone();
            s.remove(&k);
        }),
        ("a field of another command", bench.clone(), |d| {
            d["verdict"] = json!("fine")
        }),
        (
            "a required field of the command left out",
            bench.clone(),
            |d| {
                d.as_object_mut().unwrap().remove("classes");
            },
        ),
    ];
    let docs: Vec<(String, Value)> = cases
        .iter()
        .map(|(what, doc, change)| {
            let mut d = doc.clone();
            change(&mut d);
            (what.to_string(), d)
        })
        .collect();
    for (what, errs) in errors(python, &docs) {
        if what == "unchanged" {
            assert!(errs.is_empty(), "{what}: {errs:?}");
        } else {
            assert!(!errs.is_empty(), "{what}: accepted by the schema");
        }
    }
}

/// Integers above 2^53 are written as JSON integers, digit for digit (docs/reference.md,
/// "Integers above 2^53"): a fake card announcing 2^62 + 512 bytes (4096 PiB), a size no
/// f64 holds (the doubles there are 1024 apart), so a writer that went through f64 would
/// round it; its probe's scans read at offsets above 2^53 too.
#[test]
fn a_fake_announcing_more_than_2_pow_53_bytes_is_written_in_exact_integers_and_validates() {
    let size: u64 = (1 << 62) + 512;
    assert_ne!(size as f64 as u64, size);
    let spec = format!("sim:fake-64g,size={size}");
    let out = common::flashscope()
        .args(["probe", &spec, "--write", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("\"size_bytes\": {size},")),
        "size_bytes is not the integer {size}: {text}"
    );
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["target"]["size_bytes"].as_u64(), Some(size));
    // The alias scan read far beyond 2^53, each offset an exact integer in the text.
    let far: Vec<u64> = doc["probe"]["alias_hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["read_at"].as_u64())
        .filter(|&o| o > 1 << 53)
        .collect();
    assert!(!far.is_empty(), "no read above 2^53: {text}");
    for o in &far {
        assert!(text.contains(&format!("\"read_at\": {o}")), "{o}");
    }
    assert_valid(&[("probe of a fake announcing 2^62 + 512 bytes".into(), doc)]);
}
