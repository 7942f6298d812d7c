//! One progress mechanism (issue 20): an indicatif bar on stderr, drawn only on a terminal
//! and never on stdout, so `--json` stays one clean document.

use crate::common;

use common::{flashscope, has_tool, skip};
use std::path::{Path, PathBuf};

/// A 16 MiB sparse file to read (a real target: runs take wall time, unlike `sim:`).
fn image(dir: &Path) -> PathBuf {
    let img = dir.join("x.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    img
}

/// With stderr a pipe (not a terminal) no command draws progress: no carriage return, no
/// escape sequence, no ETA, and stdout is one JSON document.
#[test]
fn no_progress_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path());
    let img = img.to_str().unwrap();
    let d = dir.path().to_str().unwrap();
    let runs: &[&[&str]] = &[
        &[
            "io",
            img,
            "--rw",
            "randread",
            "--runtime",
            "1s",
            "--time-based",
            "--direct=0",
        ],
        &["align", "sim:sd-16g"],
        &["scatter", "sim:sd-16g"],
        &["interval", "sim:sd-16g"],
        &["probe", "sim:sd-16g", "--write"],
        &["verify", "sim:sd-16g,size=64M", "--write"],
        &["bench", "sim:sd-16g", "--write", "--quick"],
        &["fs", "seq", d, "--size", "4M", "--mode", "buffered"],
    ];
    for args in runs {
        let out = flashscope()
            .args(*args)
            .arg("--json")
            .env("XDG_STATE_HOME", dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        for bad in ["\r", "\x1b", "ETA"] {
            assert!(!err.contains(bad), "{args:?}: stderr has {bad:?}: {err:?}");
        }
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON document: {e}"));
    }
}

/// On a terminal (util-linux `script` gives the command a pseudo-terminal) `io` draws its
/// bar with an ETA on stderr, while its `--json` stdout, sent to a file, stays clean.
#[test]
fn io_draws_a_bar_on_a_terminal() {
    if !has_tool("script") {
        return skip("util-linux `script` is not installed (Debian: bsdutils)");
    }
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path());
    let json = dir.path().join("out.json");
    // The binary, through the cross runner (qemu-user) when one is set.
    let c = common::flashscope_abs();
    let bin: Vec<String> = std::iter::once(c.get_program())
        .chain(c.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cmd = format!(
        "{} io {} --rw randread --runtime 1500ms --time-based --direct=0 --json > {}",
        bin.join(" "),
        img.display(),
        json.display()
    );
    // A terminal type the bar draws on, whatever the caller's (CI and the non-root
    // fresh-clone run have none).
    let term = std::env::var("TERM")
        .ok()
        .filter(|t| !t.is_empty() && t != "dumb")
        .unwrap_or_else(|| "xterm".into());
    let out = std::process::Command::new("script")
        .envs(common::HISTORY_OFF)
        .env("TERM", term)
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    assert!(
        tty.contains("io:") && tty.contains("ETA"),
        "no bar drawn: {tty:?}"
    );
    let doc = std::fs::read(&json).unwrap();
    assert!(
        !doc.contains(&b'\r') && !doc.contains(&0x1b),
        "progress on stdout"
    );
    serde_json::from_slice::<serde_json::Value>(&doc).expect("stdout is one JSON document");
}
