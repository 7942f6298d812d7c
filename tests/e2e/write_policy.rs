//! The write-safety policy, once (issue 19 point 1): a simulated card is never journaled,
//! whichever command writes to it, and `--journal` on one is a usage error.

use crate::common;

use std::path::Path;

/// Run with a private state directory; returns (exit code, stdout, stderr).
fn run(state: &Path, args: &[&str]) -> (i32, String, String) {
    let out = common::flashscope()
        .env("XDG_STATE_HOME", state)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn journals_in(state: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(state.join("flashscope"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn writing_commands_never_announce_or_make_a_journal_for_a_sim_card() {
    let state = tempfile::tempdir().unwrap();
    let cases: [&[&str]; 4] = [
        &["auto", "sim:fake-64g", "--write", "--time-budget", "5s"],
        &["verify", "sim:sd-16g,size=64M", "--write"],
        &["bench", "sim:sd-16g", "--write", "--quick"],
        &["slc", "sim:sd-16g", "--write", "--write-budget", "256M"],
    ];
    for args in cases {
        let mut args = args.to_vec();
        args.push("--json");
        let (code, out, err) = run(state.path(), &args);
        // auto and probe exit 3 on the fake card: the check ran and it failed.
        assert!(code == 0 || code == 3, "{args:?}: exit {code}: {err}");
        assert!(
            !err.contains("to the journal") && !err.contains("preserve mode:"),
            "{args:?} announced a journal for a simulated card:\n{err}"
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v["journal"].is_null(), "{args:?}: {}", v["journal"]);
        if let Some(mode) = v["preserve"]["mode"].as_str() {
            assert_eq!(mode, "simulated", "{args:?}");
        }
        assert!(
            journals_in(state.path()).is_empty(),
            "{args:?} made {:?}",
            journals_in(state.path())
        );
    }
}

#[test]
fn a_journal_for_a_sim_card_is_a_usage_error_and_nothing_is_written() {
    let state = tempfile::tempdir().unwrap();
    let j = state.path().join("j.fsjournal");
    let j = j.to_str().unwrap();
    for args in [
        &[
            "fat",
            "sim:sd-16g",
            "--erase-size",
            "4M",
            "--write",
            "--journal",
            j,
        ][..],
        &["slc", "sim:sd-16g", "--write", "--journal", j],
        &["auto", "sim:sd-16g", "--write", "--journal", j],
    ] {
        let (code, out, err) = run(state.path(), args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}");
        assert!(err.contains("--journal"), "{args:?}: {err}");
    }
    assert!(journals_in(state.path()).is_empty());
}
