//! Every command's `--json` document reads back into the typed `Document` and is written
//! out again byte for byte: the types hold every field the commands write, under the
//! names and in the order they write them (schema flashscope/1).

use crate::common;
use common::{flashscope_in, killed_file_run, Loop};
use flashscope::report::{Body, Document};

#[test]
fn every_commands_document_reads_back_into_its_type_and_writes_out_the_same() {
    let mut seen = Vec::new();
    let mut fields = std::collections::BTreeSet::new();
    let state = tempfile::tempdir().unwrap();
    let st = state.path().display().to_string();
    for (args, code) in common::RUNS {
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
/// order, numbers), and the same typed value when read once more; the document validates
/// against the schema.
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
    // And it is a document the schema describes (schema/flashscope-1.schema.json).
    crate::schema::assert_valid(&[(args.join(" "), v.clone())]);
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
