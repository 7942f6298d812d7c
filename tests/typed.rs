//! Every command's `--json` document reads back into the typed `Document` and is written
//! out again byte for byte: the types hold every field the commands write, under the
//! names and in the order they write them (schema flashscope/1).

mod common;
use common::json_code;
use flashscope::report::{Body, Document};

/// (arguments, exit code); `DIR` is replaced by a fresh temporary directory.
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
    (&["slc", "sim:sd-a2-64g", "--write"], 0),
];

#[test]
fn every_commands_document_reads_back_into_its_type_and_writes_out_the_same() {
    let mut seen = Vec::new();
    for (args, code) in RUNS {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        let args: Vec<&str> = args
            .iter()
            .map(|a| if *a == "DIR" { d.as_str() } else { a })
            .collect();
        let v = json_code(&args, *code);
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
}
