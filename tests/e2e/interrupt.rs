//! Ctrl-C and SIGTERM in the commands that make files in a directory (issue 19 point 4):
//! `verify DIR` and `bench DIR` stop, remove their test files and exit 128 + signal.

use rustix::process::{kill_process, Pid, Signal};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The flashscope files in `dir` (verify's `flashscope-verify-*.bin`, bench's
/// `flashscope-bench-*`).
fn test_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("flashscope"))
        .collect()
}

/// Run flashscope with `args` in `dir`, send `sig` once its test file exists and it has
/// been writing for a moment, and return its exit code and stderr.
fn interrupt(args: &[&str], dir: &Path, sig: Signal) -> (Option<i32>, String) {
    let child = crate::common::bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while test_files(dir).is_empty() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!test_files(dir).is_empty(), "{args:?} made no test file");
    std::thread::sleep(Duration::from_millis(300));
    let pid = Pid::from_raw(child.id() as i32).unwrap();
    kill_process(pid, sig).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ctrl_c_in_verify_dir_removes_its_files_and_exits_130() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let (code, stderr) = interrupt(
        &["verify", dir, "--write", "--size", "2G"],
        d.path(),
        Signal::INT,
    );
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("removed"), "{stderr}");
    assert!(
        test_files(d.path()).is_empty(),
        "{:?}",
        test_files(d.path())
    );
}

#[test]
fn ctrl_c_or_sigterm_in_bench_dir_removes_its_test_file_and_exits_128_plus_signal() {
    for (sig, code) in [(Signal::INT, 130), (Signal::TERM, 143)] {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_str().unwrap();
        let (got, stderr) = interrupt(&["bench", dir, "--write", "--size", "64M"], d.path(), sig);
        assert_eq!(got, Some(code), "{stderr}");
        assert!(
            test_files(d.path()).is_empty(),
            "{:?}",
            test_files(d.path())
        );
    }
}

/// A run started under `nohup` keeps SIGHUP ignored, as asked: a dropped session does not
/// stop it, and it finishes and cleans up as usual (docs/safety.md, the README's Signals).
#[test]
fn a_run_started_under_nohup_ignores_sighup_and_finishes() {
    if !crate::common::has_tool("nohup") {
        crate::common::skip("nohup is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let child = Command::new("nohup")
        .arg(assert_cmd::cargo::cargo_bin("flashscope"))
        .env("FLASHSCOPE_HISTORY", "off")
        .args(["bench", dir, "--write", "--size", "64M", "--quick"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while test_files(d.path()).is_empty() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!test_files(d.path()).is_empty(), "bench made no test file");
    std::thread::sleep(Duration::from_millis(300));
    let pid = Pid::from_raw(child.id() as i32).unwrap();
    kill_process(pid, Signal::HUP).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("signal"), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("SEQ"),
        "{stderr}"
    );
    assert!(
        test_files(d.path()).is_empty(),
        "{:?}",
        test_files(d.path())
    );
}
