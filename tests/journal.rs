//! The journal's trust model (issue 17): a failing journal never becomes a verdict.

mod common;
use common::{Loop, Mounted};

use std::path::Path;
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

// ------------------------------------------------- 6: a failing journal is not a verdict

/// Fill the filesystem holding `dir` (while others write to it too), then free about
/// `leave` bytes.
fn fill(dir: &Path, leave: u64) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk: i64 = 1 << 20;
    let mut len: i64 = 0;
    // SAFETY: fallocate on a descriptor this test owns.
    while unsafe { libc::posix_fallocate(f.as_raw_fd(), len as libc::off_t, chunk as libc::off_t) }
        == 0
    {
        len += chunk;
    }
    f.set_len((len as u64).saturating_sub(leave)).unwrap();
}

#[test]
fn a_full_journal_filesystem_ends_the_test_with_exit_1_and_no_verdict() {
    let Some(lo) = Loop::random(96 << 20, 6) else {
        return;
    };
    let before = lo.hash();
    let Some(tmpfs) = Mounted::new(&["-t", "tmpfs", "-o", "size=100m", "tmpfs"]) else {
        return;
    };
    let runs: [&[&str]; 2] = [
        &["verify", &lo.dev, "--write", "--range", "0+64M"],
        &["probe", &lo.dev, "--write", "--max-cache", "8M"],
    ];
    for args in runs {
        let j = tmpfs.path().join("j.fsjournal");
        let _ = std::fs::remove_file(tmpfs.path().join("filler"));
        let child = <StdCommand as assert_cmd::cargo::CommandCargoExt>::cargo_bin("flashscope")
            .unwrap()
            .env("XDG_STATE_HOME", lo.dir())
            .args(args)
            .arg("--journal")
            .arg(&j)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Mid-run (once the journal exists), someone fills its filesystem.
        let start = Instant::now();
        while !j.exists() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(1));
        }
        fill(tmpfs.path(), 3 << 20);
        let out = child.wait_with_output().unwrap();
        let (stdout, err) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}{err}");
        assert!(err.contains(j.to_str().unwrap()), "names the file: {err}");
        assert!(err.contains("No space left"), "says why: {err}");
        assert!(err.contains("no result"), "{err}");
        assert!(stdout.is_empty(), "no verdict: {stdout}");
        assert!(!j.exists(), "restored and removed");
        assert_eq!(lo.hash(), before, "{args:?}: restored what was saved");
    }
}
