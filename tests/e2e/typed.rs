//! Every command's `--json` document reads back into the typed `Document` and is written
//! out again byte for byte: the types hold every field the commands write, under the
//! names and in the order they write them (schema flashscope/1).

use crate::common;
use common::{flashscope_in, killed_file_run, Loop};
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
    (
        &[
            "io",
            "sim:sd-16g",
            "--rw",
            "randwrite",
            "--runtime",
            "1s",
            "--size",
            "16M",
            "--write",
            "--verify",
        ],
        0,
    ),
    (&["info", "tests/data/flashbench/seed-align-01.txt"], 0),
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
    (
        &[
            "analyze",
            "tests/data/flashbench/seed-align-01.txt",
            "tests/data/flashbench/seed-openau-02.txt",
            "--blocksize",
            "4096",
            "--erasesize",
            "4M",
        ],
        0,
    ),
    (
        &["fs", "seq", "DIR", "--size", "4M", "--plot", "DIR/seq.svg"],
        0,
    ),
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
        let (v, doc) = round_trip(&args, *code);
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
        seen.push(doc.command());
    }
    // The datasheet model with the reference rows of one medium.
    let model: Vec<&str> = common::NOR
        .iter()
        .copied()
        .chain(["--reference", "--media", "emmc"])
        .collect();
    let (v, _) = round_trip(&model, 0);
    fields.extend(v.as_object().unwrap().keys().cloned());
    // io through the page cache on a file: the disk's statistics and the page cache.
    let img = state.path().join("io.img");
    std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
    let (v, _) = round_trip(&common::io_buffered(img.to_str().unwrap()), 0);
    fields.extend(v.as_object().unwrap().keys().cloned());
    // A journal a killed test left, listed and then restored.
    let (_, journal, _) = killed_file_run(state.path(), 3);
    let j = journal.display().to_string();
    for args in [vec!["restore", &j, "--list", "--keep"], vec!["restore", &j]] {
        let (v, doc) = round_trip(&args, 0);
        fields.extend(v.as_object().unwrap().keys().cloned());
        seen.push(doc.command());
    }
    // Every command but `sim serve` (it needs FUSE: results.rs reads back a constructed
    // one) was read back.
    for c in Body::COMMANDS {
        assert!(seen.contains(c) || *c == "sim serve", "no run of {c}");
    }
    // The fields only some runs write were among those read back.
    for f in [
        "started_at",
        "time_budget",
        "runs",
        "sides",
        "verdict",
        "journal",
        "journal_identity",
        "summary",
        "verify",
        "steps",
        "estimate",
        "reference",
        "timeline",
        "identity",
        "page_cache",
        "totals",
    ] {
        assert!(fields.contains(f), "no document had {f}");
    }
}

/// Run `flashscope ARGS --json` (exit `code`), read its document into the typed
/// `Document` and write it out again: the same bytes as the command printed (field names,
/// order, numbers), and the same typed value when read once more.
fn round_trip(args: &[&str], code: i32) -> (serde_json::Value, Document) {
    let state = tempfile::tempdir().unwrap();
    let out = flashscope_in(state.path())
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"));
    let doc = Document::from_json("stdout", stdout.as_bytes())
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert_eq!(doc.command(), v["command"].as_str().unwrap(), "{args:?}");
    let again = doc.to_json();
    let changed = again
        .lines()
        .zip(stdout.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b);
    assert!(
        changed.is_none() && again.lines().count() == stdout.trim_end().lines().count(),
        "{args:?}: the document changed on the way through its type: line {changed:?}"
    );
    assert_eq!(
        Document::from_json("again", doc.to_json().as_bytes()).unwrap(),
        doc,
        "{args:?}: read again, another typed value"
    );
    (v, doc)
}

#[test]
fn info_on_a_block_device_reads_back_with_what_sysfs_says() {
    let Some(lo) = Loop::attach(8 << 20, &[]) else {
        return;
    };
    let (v, doc) = round_trip(&["info", &lo.dev], 0);
    let Body::Info(info) = &doc.body else {
        panic!("{v}");
    };
    let flashscope::report::results::InfoIdentity::Block(b) = &info.identity else {
        panic!("a loop device is a block device: {}", v["identity"]);
    };
    assert_eq!(
        format!("/dev/{}", b.sysfs.name),
        lo.dev,
        "{}",
        v["identity"]
    );
}
