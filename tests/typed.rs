//! Every command's `--json` document reads back into the typed `Document` and is written
//! out again byte for byte: the types hold every field the commands write, under the
//! names and in the order they write them (schema flashscope/1).

mod common;
use common::json_code;
use flashscope::report::{Body, Document};

/// (arguments, exit code); `DIR` is replaced by a fresh temporary directory, `STATE` by
/// one directory all runs share: each document is saved there as `COMMAND-N.json` (the
/// Nth of its command, spaces as `_`) for the runs that read documents (compare), and the
/// runs given `--history STATE/h.db` are recorded there for `history`.
const RUNS: &[(&[&str], i32)] = &[
    (&["info", "sim:sd-16g"], 0),
    (&["health", "sim:emmc-8g"], 0),
    (&["probe", "sim:fake-64g", "--write"], 3),
    (&["probe", "sim:sd-16g", "--write"], 0),
    (
        &["verify", "sim:fake-64g,size=256M,real=128M", "--write"],
        3,
    ),
    (&["sim", "list"], 0),
    (
        &[
            "io",
            "sim:sd-16g",
            "--rw",
            "randread",
            "--runtime",
            "1s",
            "--size",
            "16M",
        ],
        0,
    ),
    (&["bench", "sim:sd-16g", "--write", "--quick"], 0),
    (
        &[
            "bench",
            "sim:sd-16g",
            "--write",
            "--quick",
            "--runs",
            "2",
            "--history",
            "STATE/h.db",
        ],
        0,
    ),
    (&["compare", "STATE/bench-0.json", "STATE/bench-1.json"], 0),
    (&["history", "list", "--history", "STATE/h.db"], 0),
    (&["history", "table", "--history", "STATE/h.db"], 0),
    (&["align", "sim:sd-16g"], 0),
    (&["auto", "sim:sd-16g"], 0),
    (&["auto", "sim:fake-64g", "--write"], 3),
    (&["scatter", "sim:sd-16g"], 0),
    (&["interval", "sim:sd-16g"], 0),
    (&["analyze", "tests/data/flashbench/seed-align-01.txt"], 0),
    (
        &["analyze", "tests/data/flashbench/readme-openau-01.txt"],
        0,
    ),
    (&["fs", "seq", "DIR", "--size", "4M"], 0),
    (
        &["fs", "files", "DIR", "--sizes", "64K,4K", "--total", "1M"],
        0,
    ),
    (
        &[
            "fs",
            "matrix",
            "DIR",
            "--max-file",
            "256K",
            "--max-record",
            "64K",
        ],
        0,
    ),
    (&common::NOR, 0),
    (&["model", "--reference"], 0),
    (&["open-au", "sim:sd-16g", "--write"], 0),
    (&["fat", "sim:sd-16g", "--write"], 0),
    (&["program", "sim:sd-16g", "--write"], 0),
    (
        &["program", "sim:sd-16g", "--write", "--time-budget", "10s"],
        0,
    ),
    (&["slc", "sim:sd-a2-64g", "--write"], 0),
];

#[test]
fn every_commands_document_reads_back_into_its_type_and_writes_out_the_same() {
    let mut seen = Vec::new();
    let mut fields = std::collections::BTreeSet::new();
    let state = tempfile::tempdir().unwrap();
    let st = state.path().display().to_string();
    for (args, code) in RUNS {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("DIR", &d).replace("STATE", &st))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let v = json_code(&args, *code);
        let command = v["command"].as_str().unwrap().replace(' ', "_");
        let n = seen
            .iter()
            .filter(|c: &&&str| c.replace(' ', "_") == command)
            .count();
        std::fs::write(
            state.path().join(format!("{command}-{n}.json")),
            v.to_string(),
        )
        .unwrap();
        fields.extend(v.as_object().unwrap().keys().cloned());
        let text = serde_json::to_string_pretty(&v).unwrap();
        let doc = Document::from_json("stdout", text.as_bytes())
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(doc.command(), v["command"].as_str().unwrap(), "{args:?}");
        let again: serde_json::Value = serde_json::from_str(&doc.to_json()).unwrap();
        assert_eq!(
            again, v,
            "{args:?}: the document changed on the way through its type"
        );
        // The order of the fields as written, too (schema, command, target first).
        assert_eq!(
            doc.to_json(),
            Document::from_json("again", doc.to_json().as_bytes())
                .unwrap()
                .to_json()
        );
        seen.push(doc.command());
    }
    // Every command but `sim serve` (it needs FUSE; its own tests cover it) and `restore`
    // (its document needs a journal left by a crash) was read back.
    for c in Body::COMMANDS {
        assert!(
            seen.contains(c) || ["sim serve", "restore"].contains(c),
            "no run of {c}"
        );
    }
    // The fields only some runs write were among those read back.
    for f in [
        "started_at",
        "time_budget",
        "runs",
        "sides",
        "verdict",
        "journal",
    ] {
        assert!(fields.contains(f), "no document had {f}");
    }
}
