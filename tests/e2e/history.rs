//! The run history (issue 21): measuring commands store their document and metrics in
//! SQLite; `history list|show|export|import|table` read it. Every test gives its own
//! database (`--history PATH` in a temporary directory) or its own XDG_DATA_HOME.

use crate::common;
use common::flashscope;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Run flashscope with `args` against the history `db`; (exit code, stdout, stderr).
fn run(db: &Path, args: &[&str]) -> (i32, String, String) {
    let out = flashscope()
        .args(args)
        .arg("--history")
        .arg(db)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(db: &Path, args: &[&str]) -> String {
    let (code, stdout, stderr) = run(db, args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    stdout
}

/// stdout of a run that stores nothing (the helpers turn history off).
fn unrecorded(args: &[&str]) -> String {
    let out = flashscope().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn runs_in(db: &Path) -> Vec<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_str(&ok(db, &["history", "list", "--json", "--limit", "1000"])).unwrap();
    v["samples"].as_array().unwrap().clone()
}

#[test]
fn the_test_helpers_keep_the_default_history_untouched_and_without_them_it_is_on() {
    let home = tempfile::tempdir().unwrap();
    flashscope()
        .args(["align", "sim:sd-16g"])
        .env("XDG_DATA_HOME", home.path())
        .assert()
        .success();
    assert!(
        !home.path().join("flashscope").exists(),
        "a test run wrote to the default history"
    );
    // Without FLASHSCOPE_HISTORY=off the run lands in $XDG_DATA_HOME/flashscope.
    flashscope()
        .args(["align", "sim:sd-16g"])
        .env_remove("FLASHSCOPE_HISTORY")
        .env("XDG_DATA_HOME", home.path())
        .assert()
        .success();
    let db = home.path().join("flashscope/history.sqlite");
    let runs = runs_in(&db);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["command"], "align");
    assert_eq!(runs[0]["device"], "sim:sd-16g");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&home.path().join("flashscope")), 0o700);
    // --no-history stores nothing, and a command that does not measure is not stored.
    for args in [
        &["align", "sim:sd-16g", "--no-history"][..],
        &["info", "sim:sd-16g"][..],
        &["sim", "list"][..],
    ] {
        flashscope()
            .args(args)
            .env_remove("FLASHSCOPE_HISTORY")
            .env("XDG_DATA_HOME", home.path())
            .assert()
            .success();
    }
    assert_eq!(runs_in(&db).len(), 1);
}

#[test]
fn a_stored_run_is_the_whole_document_with_its_metrics() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.sqlite");
    let printed: serde_json::Value = serde_json::from_str(&ok(
        &db,
        &["bench", "sim:sd-16g,seed=7", "--quick", "--write", "--json"],
    ))
    .unwrap();
    let runs = runs_in(&db);
    assert_eq!(runs.len(), 1);
    let id = runs[0]["id"].as_i64().unwrap().to_string();
    let shown: serde_json::Value =
        serde_json::from_str(&ok(&db, &["history", "show", &id, "--json"])).unwrap();
    assert_eq!(shown, printed, "the stored document is the one printed");
    let (code, text, err) = run(&db, &["history", "show", &id]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.starts_with(&format!("run {id}: bench on sim:sd-16g,seed=7")),
        "{text}"
    );
    // The run's own warnings are listed in the text, not given as this command's.
    let warned = printed["warnings"].as_array().unwrap();
    assert!(
        !warned.is_empty(),
        "a quick bench on sim warns (noisy RND4K write)"
    );
    assert!(text.contains("warnings of that run:"), "{text}");
    assert!(!err.contains("warning:"), "{err}");
    // The metrics table answers plain SQL: one row per metric of the document.
    let c = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT count(*) FROM metrics WHERE run_id = ?1",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n as usize, printed["metrics"].as_array().unwrap().len());
    let v: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, flashscope::history::SCHEMA_VERSION);
}

#[test]
fn concurrent_runs_all_land() {
    // Several processes finishing at once on a new database (the first opens race to set
    // it up: WAL mode, the schema) and on one that exists; every run must be stored.
    let d = tempfile::tempdir().unwrap();
    for round in 0..3 {
        let db = d.path().join(format!("h{round}.sqlite"));
        let children: Vec<_> = (0..6)
            .map(|i| {
                let mut c = common::flashscope_abs();
                if i % 2 == 0 {
                    c.args(["align", &format!("sim:sd-16g,seed={i}")]);
                } else {
                    c.args([
                        "bench",
                        &format!("sim:sd-16g,seed={i}"),
                        "--quick",
                        "--write",
                    ]);
                }
                c.arg("--history")
                    .arg(&db)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{stderr}");
            assert!(
                !stderr.contains("history is off"),
                "round {round}: {stderr}"
            );
        }
        let mut devices: Vec<String> = runs_in(&db)
            .iter()
            .map(|r| r["device"].as_str().unwrap().to_string())
            .collect();
        devices.sort();
        assert_eq!(
            devices,
            (0..6)
                .map(|i| format!("sim:sd-16g,seed={i}"))
                .collect::<Vec<_>>(),
            "round {round}"
        );
    }
}

/// The measurement's own output and exit code, and one warning that history is off.
fn measured_despite(db: &Path, why: &str) -> String {
    let (code, stdout, stderr) = run(db, &["align", "sim:sd-16g"]);
    assert_eq!(code, 0, "{why}: {stderr}");
    assert!(stdout.contains("erase block"), "{why}: {stdout}");
    assert_eq!(
        stderr
            .matches("warning: history is off for this run")
            .count(),
        1,
        "{why}: {stderr}"
    );
    stderr
}

#[test]
fn a_corrupt_or_locked_database_never_fails_the_measurement() {
    let d = tempfile::tempdir().unwrap();
    let corrupt = d.path().join("corrupt.sqlite");
    std::fs::write(&corrupt, vec![0x5a; 8192]).unwrap();
    let e = measured_despite(&corrupt, "corrupt");
    assert!(e.contains("not a usable SQLite database"), "{e}");
    assert_eq!(std::fs::read(&corrupt).unwrap(), vec![0x5a; 8192]);

    let locked = d.path().join("locked.sqlite");
    ok(&locked, &["align", "sim:sd-16g"]);
    let mut c = rusqlite::Connection::open(&locked).unwrap();
    let tx = c
        .transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)
        .unwrap();
    let t0 = std::time::Instant::now();
    let e = measured_despite(&locked, "locked");
    assert!(e.contains("locked"), "{e}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(30));
    drop(tx);
    assert_eq!(runs_in(&locked).len(), 1);
}

/// A database that cannot be written is still read: `history list`, `show`, `table`,
/// `export`, and `compare` by id; `import` says why it cannot store.
fn readable_read_only(db: &Path) {
    let list = ok(db, &["history", "list"]);
    assert!(
        list.contains("1 run in") && list.contains("align"),
        "{list}"
    );
    let shown = ok(db, &["history", "show", "1"]);
    assert!(
        shown.contains("erase block: ") && shown.contains("Boundary cost"),
        "{shown}"
    );
    ok(db, &["history", "table"]);
    assert!(ok(db, &["history", "export", "--format", "csv"]).contains("align"));
    let (code, _, e) = run(db, &["compare", "1", "1"]);
    assert_eq!(code, 2, "{e}");
    // The run was read (an align run has no figures to compare).
    assert!(e.contains("history run #1: 'align' documents"), "{e}");
    let d = tempfile::tempdir().unwrap();
    let doc = d.path().join("a.json");
    std::fs::write(
        &doc,
        unrecorded(&["bench", "sim:sd-16g", "--runtime", "1s", "--json"]),
    )
    .unwrap();
    let (code, _, e) = run(db, &["history", "import", doc.to_str().unwrap()]);
    assert_ne!(code, 0, "import into a read-only history: {e}");
    assert!(!e.contains("panicked") && e.contains("h.sqlite"), "{e}");
}

/// A database on a read-only filesystem (root: a tmpfs remounted read-only; otherwise a
/// file and directory without write permission) never fails the measurement either, its
/// runs stay as they were, and the reading commands still read it.
#[test]
fn a_read_only_database_never_fails_the_measurement() {
    if common::is_root() {
        let Some(m) = common::Mounted::new(&["-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs"])
        else {
            return;
        };
        let db = m.path().join("h.sqlite");
        ok(&db, &["align", "sim:sd-16g"]);
        let st = std::process::Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(m.path())
            .status()
            .unwrap();
        assert!(st.success(), "remount read-only failed");
        measured_despite(&db, "read-only filesystem");
        readable_read_only(&db);
        let st = std::process::Command::new("mount")
            .args(["-o", "remount,rw"])
            .arg(m.path())
            .status()
            .unwrap();
        assert!(st.success(), "remount read-write failed");
        assert_eq!(runs_in(&db).len(), 1);
    } else {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("h");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let db = dir.join("h.sqlite");
        ok(&db, &["align", "sim:sd-16g"]);
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o400)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o500)).unwrap();
        measured_despite(&db, "read-only file");
        readable_read_only(&db);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(runs_in(&db).len(), 1);
    }
}

#[test]
fn a_symlinked_database_or_a_shared_directory_is_not_used() {
    let d = tempfile::tempdir().unwrap();
    // A symlink at the database's name is not followed: its target stays as it was.
    let victim = d.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let link = d.path().join("h.sqlite");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let e = measured_despite(&link, "symlinked database");
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");

    // A directory anyone may write (as /tmp): nothing is created there.
    let shared = d.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = measured_despite(&shared.join("h.sqlite"), "world-writable directory");
    assert!(e.contains("writable by group or others"), "{e}");
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);

    // A symlinked directory inside a shared, sticky one (a link planted in /tmp).
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let mine = d.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::os::unix::fs::symlink(&mine, shared.join("planted")).unwrap();
    let e = measured_despite(&shared.join("planted/h.sqlite"), "planted link");
    assert!(e.contains("goes through the symbolic link"), "{e}");
    assert_eq!(std::fs::read_dir(&mine).unwrap().count(), 0);
}

#[test]
fn bad_ids_and_bad_documents_are_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.sqlite");
    ok(&db, &["align", "sim:sd-16g"]);
    let (code, _, e) = run(&db, &["history", "show", "42"]);
    assert_eq!(code, 2, "{e}");
    assert!(e.contains("there is no run 42"), "{e}");
    let (code, _, _) = run(&db, &["history", "show", "abc"]);
    assert_eq!(code, 2);
    let (code, _, e) = run(&d.path().join("none.sqlite"), &["history", "list"]);
    assert_eq!(code, 2, "{e}");
    assert!(e.contains("no such database yet"), "{e}");

    let doc = unrecorded(&["align", "sim:sd-16g", "--json"]);
    let cases: [(&str, Vec<u8>, &str); 5] = [
        (
            "text.json",
            b"erase block 4 MiB\n".to_vec(),
            "not a JSON document",
        ),
        (
            "truncated.json",
            doc.as_bytes()[..doc.len() / 2].to_vec(),
            "ends early",
        ),
        (
            "other.json",
            doc.replace("flashscope/1", "fio/3").into_bytes(),
            "schema 'fio/3'",
        ),
        (
            "list.json",
            unrecorded(&["sim", "list", "--json"]).into_bytes(),
            "not a measurement",
        ),
        ("empty.json", Vec::new(), "ends early"),
    ];
    for (name, bytes, needle) in cases {
        let f = d.path().join(name);
        std::fs::write(&f, bytes).unwrap();
        let (code, _, e) = run(&db, &["history", "import", f.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {e}");
        assert!(e.contains(needle), "{name}: {e}");
        assert!(e.contains(name), "{name}: the message names the file: {e}");
    }
    assert_eq!(runs_in(&db).len(), 1, "nothing was imported");
}

#[test]
fn import_export_and_the_table_agree_with_the_documents() {
    let d = tempfile::tempdir().unwrap();
    let farm = d.path().join("farm.sqlite");
    // Documents saved on "other machines", two runs of card a, one of card b.
    let mut files = Vec::new();
    let mut seq_read: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for (i, spec) in [
        "sim:sd-16g,seed=1",
        "sim:sd-16g,seed=1,noise=0.2",
        "sim:usb-32g",
    ]
    .iter()
    .enumerate()
    {
        let doc = unrecorded(&["bench", spec, "--quick", "--write", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&doc).unwrap();
        let bw = v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| {
                m["name"] == "bench_bandwidth_bytes_per_second" && m["labels"]["job"] == "seq_read"
            })
            .unwrap()["value"]
            .as_f64()
            .unwrap();
        seq_read.entry(spec.to_string()).or_default().push(bw);
        let f = d.path().join(format!("run{i}.json"));
        std::fs::write(&f, doc).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let mut args = vec!["history", "import"];
    args.extend(files.iter().map(String::as_str));
    let said = ok(&farm, &args);
    assert!(said.starts_with("imported 3 runs"), "{said}");
    let again = ok(&farm, &args);
    assert!(
        again.contains("imported 0 runs") && again.contains("3 already stored"),
        "{again}"
    );
    let runs = runs_in(&farm);
    assert_eq!(runs.len(), 3);
    assert!(runs
        .iter()
        .all(|r| r["source"].as_str().unwrap().starts_with("import:run")));
    assert!(runs.iter().all(|r| r["host"].is_null()));

    // The table's figures are the documents' own.
    let t: serde_json::Value = serde_json::from_str(&ok(
        &farm,
        &["history", "table", "--by", "device", "--json"],
    ))
    .unwrap();
    let rows = t["samples"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for row in rows {
        let part = row["part"].as_str().unwrap();
        let want = &seq_read[part];
        let cell = &row["seq_read_bytes_per_s"];
        assert_eq!(cell["runs"], 1);
        assert_eq!(cell["median"].as_f64().unwrap(), want[0], "{part}");
        assert!(row["seq_write_bytes_per_s"]["median"].as_f64().unwrap() > 0.0);
        assert!(row["rand_write_iops"]["median"].as_f64().unwrap() > 0.0);
    }
    let text = ok(&farm, &["history", "table"]);
    assert!(text.contains("seq read MiB/s"), "{text}");

    // CSV: one line per metric; JSON: every run with its whole document.
    let csv = ok(&farm, &["history", "export", "--format", "csv"]);
    let metrics: i64 = rusqlite::Connection::open(&farm)
        .unwrap()
        .query_row("SELECT count(*) FROM metrics", [], |r| r.get(0))
        .unwrap();
    assert_eq!(csv.lines().count() as i64, metrics + 1, "{csv}");
    assert!(csv.starts_with(
        "run_id,time,command,host,version,device,model,target,source,metric,value,unit,labels\n"
    ));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&farm, &["history", "export", "--format", "json"])).unwrap();
    let arr = json.as_array().unwrap();
    assert_eq!(arr.len(), 3);
    assert_eq!(arr[0]["document"]["schema"], "flashscope/1");
    assert_eq!(
        arr[0]["document"],
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&files[0]).unwrap())
            .unwrap()
    );
}

/// Every ```sql block in docs/history.md runs on a history with runs in it and answers.
#[test]
fn the_documented_sql_runs() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/history.md")).unwrap();
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in doc.lines() {
        match (&mut cur, line.trim()) {
            (None, "```sql") => cur = Some(String::new()),
            (Some(b), "```") => {
                blocks.push(std::mem::take(b));
                cur = None;
            }
            (Some(b), _) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    assert!(blocks.len() >= 3, "docs/history.md has its example SQL");
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.sqlite");
    for spec in ["sim:sd-16g", "sim:sd-16g", "sim:usb-32g"] {
        ok(&db, &["bench", spec, "--quick", "--write"]);
    }
    let (code, _, e) = run(&db, &["probe", "sim:fake-64g", "--write"]);
    assert_eq!(
        code, 3,
        "a fake card fails the check, and its run is stored: {e}"
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    for sql in &blocks {
        let mut stmt = c.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let n = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        let mut count = 0;
        while let Some(r) = rows.next().unwrap() {
            for i in 0..n {
                let _: rusqlite::types::Value = r.get(i).unwrap();
            }
            count += 1;
        }
        assert!(count > 0, "no rows from {sql}");
    }
}

/// `history show` prints a stored run as its command printed it: under a header line, the
/// very text the command gave, drawn again from the stored document alone (one renderer
/// per command, no in-memory state of the run).
#[test]
fn history_show_prints_a_stored_run_as_its_command_printed_it() {
    let d = tempfile::tempdir().unwrap();
    let runs: &[&[&str]] = &[
        &["align", "sim:sd-16g"],
        &["interval", "sim:sd-16g"],
        &["scatter", "sim:sd-16g", "--count", "2"],
        &["auto", "sim:sd-16g"],
        &["auto", "sim:fake-64g", "--write"],
        &["probe", "sim:fake-64g", "--write"],
        &["open-au", "sim:sd-16g", "--erase-size", "4M", "--write"],
        &["fat", "sim:sd-16g", "--erase-size", "4M", "--write"],
        &["slc", "sim:sd-16g", "--write", "--time-budget", "5s"],
        &["bench", "sim:sd-16g", "--runtime", "1s"],
    ];
    for (i, args) in runs.iter().enumerate() {
        let db = d.path().join(format!("h{i}.sqlite"));
        let (code, printed, e) = run(&db, args);
        assert!(code == 0 || code == 3, "{args:?}: {e}");
        assert!(!printed.is_empty(), "{args:?}");
        let shown = ok(&db, &["history", "show", "1"]);
        let (head, body) = shown.split_once("\n\n").unwrap();
        assert!(
            head.starts_with(&format!("run 1: {} on ", args[0])),
            "{args:?}: {head}"
        );
        let body = body.split("\nwarnings of that run:\n").next().unwrap();
        assert_eq!(body, printed, "{args:?}: history show differs from the run");
    }
}

/// Issue 44 point 9: a stored document larger than the document cap (stored before the
/// cap existed, or by SQL) is not read by `history show`, `history export --format json`
/// or `compare #ID`: each refuses naming the run and the cap (exit 2), in bounded memory;
/// the runs within the cap are still shown.
#[test]
fn a_stored_document_over_the_cap_is_refused_naming_the_run_and_the_cap() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.sqlite");
    ok(&db, &["bench", "sim:sd-16g,seed=7", "--quick", "--write"]);
    ok(&db, &["bench", "sim:sd-16g,seed=8", "--quick", "--write"]);
    let c = rusqlite::Connection::open(&db).unwrap();
    // 65 MiB of JSON (a string), over the 64 MiB cap, in place of run 2's document.
    c.execute(
        "UPDATE runs SET document = '\"' || hex(zeroblob(34078720)) || '\"' WHERE id = 2",
        [],
    )
    .unwrap();
    drop(c);
    for args in [
        &["history", "show", "2"][..],
        &["history", "show", "2", "--json"],
        &["history", "export", "--format", "json"],
        &["compare", "#1", "#2"],
    ] {
        let (code, out, err) = run(&db, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("run 2") && err.contains("65 MiB") && err.contains("64 MiB"),
            "{args:?}: {err}"
        );
        assert!(out.len() < 4096, "{args:?} printed {} bytes", out.len());
    }
    // Run 1 is within the cap: shown as ever.
    assert!(ok(&db, &["history", "show", "1"]).starts_with("run 1: bench"));
}
