//! The journal's trust model (issue 17): a damaged journal is never "restored", and a
//! failing journal never becomes a verdict.

mod common;
use common::{Loop, Mounted};

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

fn flashscope(state: &Path) -> Command {
    let mut c = Command::cargo_bin("flashscope").unwrap();
    c.env("XDG_STATE_HOME", state);
    c
}

fn run_in(state: &Path, cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = flashscope(state)
        .current_dir(cwd)
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run(state: &Path, args: &[&str]) -> (i32, String, String) {
    run_in(state, state, args)
}

fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    use rand::{Rng, SeedableRng};
    let mut v = vec![0u8; len];
    rand_pcg::Pcg64::seed_from_u64(seed).fill(&mut v[..]);
    v
}

/// A file target of random bytes and a journal for it that a killed test left: regions at
/// 0 and 1 MiB (64 KiB each) saved, then overwritten with zeros. Returns the image's
/// original content.
fn killed_file_run(dir: &Path, seed: u64) -> (PathBuf, PathBuf, Vec<u8>) {
    use flashscope::backend::{AlignedBuf, Backend};
    let img = dir.join("card.img");
    let original = random_bytes(4 << 20, seed);
    std::fs::write(&img, &original).unwrap();
    let spec = img.to_str().unwrap();
    let opened =
        flashscope::target::open(spec, &flashscope::target::OpenRequest::read_write()).unwrap();
    let id = flashscope::journal::Identity::of(spec, &opened, "test");
    let j = dir.join("killed.fsjournal");
    let mut p = flashscope::journal::Preserve::new(opened.backend, &j, &id).unwrap();
    let zeros = AlignedBuf::new(64 << 10);
    p.write_at(&zeros, 0).unwrap();
    p.write_at(&zeros, 1 << 20).unwrap();
    drop(p); // as a SIGKILL leaves it: journal kept, regions overwritten
    assert_ne!(std::fs::read(&img).unwrap(), original);
    (img, j, original)
}

#[test]
fn restore_of_a_fifo_or_a_symlink_is_refused_at_once() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path();
    let fifo = dir.join("j.fsjournal");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let t0 = Instant::now();
    let (code, _, err) = run(dir, &["restore", fifo.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a FIFO, not a regular file"), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(30));
    let (_, j, _) = killed_file_run(dir, 2);
    let link = dir.join("link.fsjournal");
    std::os::unix::fs::symlink(&j, &link).unwrap();
    let (code, _, err) = run(dir, &["restore", link.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("symbolic link"), "{err}");
}

// ------------------------------------------------------- 5: a damaged journal is refused

#[test]
fn a_damaged_last_record_is_refused_with_nothing_written_and_the_journal_kept() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path();
    let (img, j, original) = killed_file_run(dir, 5);
    let damaged = std::fs::read(&img).unwrap();
    let intact = std::fs::read(&j).unwrap();
    let n = intact.len();
    let jp = j.to_str().unwrap();
    // One bit of the last record's data; then its last byte cut off.
    let mut flipped = intact.clone();
    flipped[n - 32 - 100] ^= 0x04;
    for (what, bytes) in [
        ("bit flip", &flipped[..]),
        ("cut last byte", &intact[..n - 1]),
    ] {
        std::fs::write(&j, bytes).unwrap();
        let (code, out, err) = run(dir, &["restore", jp]);
        assert_eq!(code, 1, "{what}: {out}{err}");
        assert!(err.contains("corrupt"), "{what}: {err}");
        assert!(!out.contains("restored"), "{what}: {out}");
        assert!(j.exists(), "{what}: the journal is kept");
        assert_eq!(
            std::fs::read(&img).unwrap(),
            damaged,
            "{what}: nothing written"
        );
    }
    std::fs::write(&j, &intact).unwrap();
    let (code, _, err) = run(dir, &["restore", jp]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&img).unwrap(), original);
}

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
