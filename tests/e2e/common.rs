//! Helpers shared by the end-to-end tests. Each test file uses some of them.
#![allow(dead_code)]

use std::process::Command as StdCommand;

/// Make sure the partition's device node exists (no udev in minimal containers): ask the
/// kernel to add the partition, then create the node from sysfs if needed; removed on drop
/// only if this test created it.
pub struct PartitionNode {
    created: Option<String>,
}

impl PartitionNode {
    /// Give `disk` one partition from 1 MiB to its end (`sfdisk`) and make sure its node
    /// exists. Returns the partition's path; `None` after a skip line where sfdisk is
    /// missing or the kernel made no partition.
    pub fn first_of(disk: &str) -> Option<(String, PartitionNode)> {
        use std::io::Write;
        if !has_tool("sfdisk") {
            skip("sfdisk is not installed (not on PATH, nor in /usr/sbin or /sbin: apt-get install fdisk)");
            return None;
        }
        let mut sfdisk = tool_command("sfdisk")
            .args(["-q", disk])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("sfdisk starts");
        let mut stdin = sfdisk.stdin.take().unwrap();
        stdin.write_all(b"start=2048, type=83\n").unwrap();
        drop(stdin);
        assert!(sfdisk.wait().unwrap().success(), "sfdisk {disk} failed");
        let part = format!("{disk}p1");
        match PartitionNode::create(disk, &part) {
            Some(node) => Some((part, node)),
            None => {
                skip(&format!("the kernel did not create a partition for {disk}"));
                None
            }
        }
    }

    pub fn create(disk: &str, part: &str) -> Option<PartitionNode> {
        let _ = StdCommand::new("partx")
            .args(["-a", disk])
            .stderr(std::process::Stdio::null())
            .status();
        let name = part.trim_start_matches("/dev/");
        let sys = format!("/sys/class/block/{name}/dev");
        let mut dev = None;
        for _ in 0..100 {
            if let Ok(d) = std::fs::read_to_string(&sys) {
                dev = Some(d.trim().to_string());
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let dev = dev?;
        if std::path::Path::new(part).exists() {
            return Some(PartitionNode { created: None });
        }
        let (maj, min) = dev.split_once(':')?;
        let ok = StdCommand::new("mknod")
            .args([part, "b", maj, min])
            .status()
            .ok()?
            .success();
        ok.then(|| PartitionNode {
            created: Some(part.to_string()),
        })
    }
}

impl Drop for PartitionNode {
    fn drop(&mut self) {
        if let Some(p) = &self.created {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A directory holding a `smartctl` that prints `fixture` (a file in
/// tests/data/health/smartctl) and exits `code`, and records its arguments next to itself
/// (the second path).
pub fn stub_smartctl(fixture: &str, code: i32) -> (tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("smartctl");
    let args = dir.path().join("args");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/health/smartctl");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\n/bin/cat '{data}/{fixture}'\nexit {code}\n",
            args.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, args)
}

/// `io` on the file `img` through the page cache, reading and writing for 1 s: a run whose
/// document has the disk's statistics and the page cache's change.
pub fn io_buffered(img: &str) -> [&str; 10] {
    [
        "io",
        img,
        "--rw",
        "randrw",
        "--size",
        "8M",
        "--runtime",
        "1s",
        "--direct=0",
        "--write",
    ]
}

/// A complete `flashscope model` invocation: the SPI NOR worked example of the
/// datasheet model (every figure given, so one changed value is the only thing wrong).
pub const NOR: [&str; 17] = [
    "model",
    "--kind",
    "spi-nor",
    "--erase-time",
    "0.15s",
    "--erase-size",
    "64K",
    "--program-time",
    "0.25ms",
    "--page",
    "256",
    "--bus-clock",
    "100MHz",
    "--bus-lines",
    "4",
    "--size",
    "32M",
];

/// One run of every command that can run without hardware: typed.rs reads each `--json`
/// document back into its type, corpus.rs records each run's output as it is today.
/// (arguments, exit code); `DIR` is replaced by a fresh temporary directory, `STATE` by
/// one directory all runs share: each document is saved there as `COMMAND-N.json` (the
/// Nth of its command, spaces as `_`) for the runs that read documents (compare), and the
/// runs given `--history STATE/h.db` are recorded there for `history`.
pub const RUNS: &[(&[&str], i32)] = &[
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
    (&NOR, 0),
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

/// The environment every flashscope a test starts gets: the run history off, so the
/// hundreds of test runs never land in the user's (or CI's) history. A test of the
/// history gives `--history PATH`, which records even so. Tests that start flashscope
/// through a shell, `script` or `taskset` set it on that command (children inherit it).
pub const HISTORY_OFF: [(&str, &str); 1] = [("FLASHSCOPE_HISTORY", "off")];

/// The flashscope binary under test as a command (through the cross runner, qemu-user,
/// when CARGO_TARGET_<triple>_RUNNER is set), with the run history off. Every test starts
/// flashscope through this (or the helpers built on it).
///
/// A test run started from a non-interactive shell's background job (`.ci/run &`,
/// `nohup cargo test`) inherits SIGINT and SIGQUIT ignored, and so would every flashscope
/// it starts: the tests of Ctrl-C would then measure the shell, not flashscope. The first
/// call gives this process the default actions back, as a terminal gives them.
pub fn bin() -> StdCommand {
    static DEFAULT_SIGNALS: std::sync::Once = std::sync::Once::new();
    DEFAULT_SIGNALS.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGQUIT] {
            // SAFETY: sigaction reads the disposition into zeroed memory of the right type;
            // only an inherited SIG_IGN is replaced (by the default action), no handler.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
                {
                    libc::signal(sig, libc::SIG_DFL);
                }
            }
        }
    });
    let mut c =
        <StdCommand as assert_cmd::cargo::CommandCargoExt>::cargo_bin("flashscope").unwrap();
    c.envs(HISTORY_OFF);
    c
}

/// The flashscope binary under test (see [`bin`]).
pub fn flashscope() -> assert_cmd::Command {
    assert_cmd::Command::from_std(bin())
}

/// The binary under test as a plain command whose program is an absolute path: the
/// binary itself, or the cross runner (qemu-user) found on this PATH, so a test that
/// replaces PATH (stub tools) still starts it.
pub fn flashscope_abs() -> StdCommand {
    let c = bin();
    let prog = std::path::PathBuf::from(c.get_program());
    let prog = if prog.components().count() > 1 {
        prog
    } else {
        std::env::var_os("PATH")
            .and_then(|p| {
                std::env::split_paths(&p)
                    .map(|d| d.join(&prog))
                    .find(|f| f.is_file())
            })
            .unwrap_or(prog)
    };
    let mut cmd = StdCommand::new(prog);
    cmd.args(c.get_args());
    cmd.envs(HISTORY_OFF);
    cmd
}

/// The first ```console block of the section whose heading starts with `heading` (e.g.
/// "## Reports") in README.md or, where the README links to it, in docs/*.md: the example
/// a test runs as written.
pub fn readme_console_block(heading: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts = vec![std::fs::read_to_string(root.join("README.md")).unwrap()];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    texts.extend(docs.iter().map(|p| std::fs::read_to_string(p).unwrap()));
    let part = texts
        .iter()
        .find_map(|t| t.split(&format!("\n{heading}")).nth(1))
        .unwrap_or_else(|| panic!("neither the README nor docs/ has a '{heading}' section"));
    part.split("```console\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap_or_else(|| panic!("no console block under '{heading}'"))
        .to_string()
}

/// Run one example `line` through `sh` in `dir` as a user types it: `flashscope` on PATH
/// is the binary under test, the state directory is `dir`.
pub fn sh_example(dir: &std::path::Path, line: &str) -> std::process::Output {
    StdCommand::new("sh")
        .envs(HISTORY_OFF)
        .args(["-c", line])
        .current_dir(dir)
        .env("PATH", path_with_flashscope(dir))
        .env("XDG_STATE_HOME", dir)
        .output()
        .unwrap()
}

/// A PATH on which `flashscope` is the binary under test (through the cross runner when
/// one is set): a wrapper script in `dir/bin`, before the caller's PATH.
fn path_with_flashscope(dir: &std::path::Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let c = flashscope_abs();
    let words: Vec<String> = std::iter::once(c.get_program())
        .chain(c.get_args())
        .map(|a| format!("'{}'", a.to_string_lossy().replace('\'', "'\\''")))
        .collect();
    let exe = bin.join("flashscope");
    std::fs::write(
        &exe,
        format!("#!/bin/sh\nexec {} \"$@\"\n", words.join(" ")),
    )
    .unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The binary with its state directory (journals, verify state) in `state`.
pub fn flashscope_in(state: &std::path::Path) -> assert_cmd::Command {
    let mut c = flashscope();
    c.env("XDG_STATE_HOME", state);
    c
}

/// The `kind` of each warning in a document, in order.
pub fn warning_kinds(doc: &serde_json::Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Run flashscope with `args` and `--json`, expect exit 0, parse stdout as one document.
pub fn json(args: &[&str]) -> serde_json::Value {
    json_code(args, 0)
}

/// Run flashscope with `args` and `--json`, expect exit `code` (stderr shown when not),
/// parse stdout as one document.
pub fn json_code(args: &[&str], code: i32) -> serde_json::Value {
    let out = flashscope().args(args).arg("--json").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Run flashscope with `args`, its state directory in `state`: (exit code or -1, stdout,
/// stderr).
pub fn run_in(state: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    run_at(state, std::path::Path::new("."), args)
}

/// [`run_in`] with `cwd` as the working directory.
pub fn run_at(
    state: &std::path::Path,
    cwd: &std::path::Path,
    args: &[&str],
) -> (i32, String, String) {
    let out = flashscope_in(state)
        .current_dir(cwd)
        .args(args)
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Expect `flashscope ARGS` to exit `code` with `needle` on stderr and no panic.
pub fn fails_with(args: &[&str], code: i32, needle: &str) {
    use predicates::prelude::*;
    flashscope()
        .args(args)
        .assert()
        .code(code)
        .stderr(predicate::str::contains(needle))
        .stderr(predicate::str::contains("panicked").not());
}

/// When and how [`signal_when`] stops a run.
pub struct Stop {
    /// The signal to send (SIGINT, SIGTERM, SIGKILL).
    pub sig: i32,
    /// How long to wait for the run to be ready.
    pub wait: std::time::Duration,
    /// How long to let it go on once ready, before the signal.
    pub settle: std::time::Duration,
    /// A run that ends or does not become ready within `wait` fails the test.
    pub must_be_ready: bool,
}

impl Stop {
    /// `sig` once the run is mid-test (within a minute), 100 ms after it got there.
    pub fn mid_test(sig: i32) -> Stop {
        Stop {
            sig,
            wait: std::time::Duration::from_secs(60),
            settle: std::time::Duration::from_millis(100),
            must_be_ready: true,
        }
    }

    /// `sig` when ready or after `wait`, whichever is first; unless the run ended before.
    pub fn after(sig: i32, wait: std::time::Duration) -> Stop {
        Stop {
            sig,
            wait,
            settle: std::time::Duration::ZERO,
            must_be_ready: false,
        }
    }
}

/// Start `flashscope ARGS` (state directory `state`, working directory `cwd`), wait until
/// `ready()` says it is mid-test, then stop it as `stop` says. Returns its exit code
/// (`None` when the signal killed it) and its stderr.
pub fn signal_when(
    state: &std::path::Path,
    cwd: &std::path::Path,
    args: &[&str],
    stop: &Stop,
    ready: impl Fn() -> bool,
) -> (Option<i32>, String) {
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};
    let mut cmd = bin();
    cmd.env("XDG_STATE_HOME", state)
        .current_dir(cwd)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // The test relies on the signal's default disposition in the child: a test run
    // under `nohup` (or a shell's background job) would hand it on ignored, and the
    // run would then rightly keep ignoring it.
    let sig = stop.sig;
    // SAFETY: between fork and exec only signal(2), which is async-signal-safe; an
    // error (SIGKILL's disposition cannot change) is left to the kernel.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(sig, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let (mut ended, mut was_ready) = (false, false);
    loop {
        if ready() {
            was_ready = true;
            std::thread::sleep(stop.settle);
            break;
        }
        ended = child.try_wait().unwrap().is_some();
        if ended || start.elapsed() > stop.wait {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    if !ended {
        // SAFETY: kill(2) on our own child's pid, not yet reaped, so the pid is still its.
        unsafe { libc::kill(child.id() as i32, stop.sig) };
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stop.must_be_ready || was_ready,
        "{args:?} never reached the point to signal it (ended first: {ended}): {err}"
    );
    (out.status.code(), err)
}

/// The variable that turns every skip into a failure (`.ci/run` sets it: CI has every tool
/// and privilege the tests need, so a skip there hides a broken set-up).
pub const NO_SKIP: &str = "FLASHSCOPE_NO_SKIP";

/// Skip the rest of a test whose facility this machine lacks: one line naming what is
/// missing and how to get it. Under `FLASHSCOPE_NO_SKIP=1` this is a failure instead.
pub fn skip(why: &str) {
    let strict = std::env::var(NO_SKIP).is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(!strict, "{NO_SKIP} is set, so this may not skip: {why}");
    // Straight to the process's stderr, past the test harness's capture: a skip is shown
    // in a normal `cargo test` run, not only when the test fails.
    use std::io::Write;
    let name = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let _ = writeln!(std::io::stderr(), "skipped {name}: {why}");
}

/// Where a tool is: on PATH, or in the system directories a normal user's PATH often
/// lacks (`sfdisk`, `filefrag`, `chattr` live in /usr/sbin or /sbin). The one place a
/// test finds a tool; a test runs the tool through the path it returns.
pub fn tool(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(
            ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"]
                .iter()
                .map(std::path::PathBuf::from),
        )
        .map(|d| d.join(name))
        .find(|f| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(f).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// True when `tool` is installed (see [`tool`]).
pub fn has_tool(name: &str) -> bool {
    tool(name).is_some()
}

/// A command for the tool `name` by its full path where [`tool`] finds it (else by name,
/// and starting it fails with the reason).
pub fn tool_command(name: &str) -> StdCommand {
    StdCommand::new(tool(name).unwrap_or_else(|| name.into()))
}

/// `flashscope ARGS` run as the unprivileged user nobody (uid 65534) through `setpriv`,
/// from a copy of the binary in a world-readable temporary directory (the build directory
/// may be private, as under /root). `None`, after a skip line, when not root or without
/// setpriv. Keep the returned directory alive while the command runs.
pub fn as_nobody(args: &[&str]) -> Option<(tempfile::TempDir, StdCommand)> {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() {
        skip("needs root to run flashscope as another user");
        return None;
    }
    if !has_tool("setpriv") {
        skip("setpriv is not installed (apt-get install util-linux)");
        return None;
    }
    let dir = tempfile::Builder::new()
        .prefix("fs-nobody")
        .tempdir_in("/tmp")
        .ok()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).ok()?;
    let copy = dir.path().join("flashscope");
    std::fs::copy(env!("CARGO_BIN_EXE_flashscope"), &copy).ok()?;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).ok()?;
    let bin = bin();
    let swap = |s: &std::ffi::OsStr| {
        if std::path::Path::new(s) == std::path::Path::new(env!("CARGO_BIN_EXE_flashscope")) {
            copy.clone().into_os_string()
        } else {
            s.to_os_string()
        }
    };
    let mut cmd = StdCommand::new("setpriv");
    cmd.envs(HISTORY_OFF)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(swap(bin.get_program()))
        .args(bin.get_args().map(swap))
        .args(args);
    Some((dir, cmd))
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// SHA-256 of a file, as `sha256sum` prints it.
pub fn sha256_of(path: &std::path::Path) -> String {
    let out = StdCommand::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string()
}

/// A loop device with direct I/O over a file in a temporary directory under /var/tmp (a
/// real filesystem, not tmpfs), detached by its exact name on drop. `None` (with the
/// reason on stderr) when not root or losetup fails, so tests can skip.
pub struct Loop {
    pub dev: String,
    pub img: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Loop {
    /// Over a sparse file of `size` zero bytes; `extra` are more losetup options.
    pub fn attach(size: u64, extra: &[&str]) -> Option<Loop> {
        Self::attach_with(extra, |img| {
            std::fs::File::create(img)?.set_len(size)?;
            Ok(())
        })
    }

    /// Over a file of `size` pseudo-random bytes from `seed`.
    pub fn random(size: usize, seed: u64) -> Option<Loop> {
        use rand::{Rng, SeedableRng};
        Self::attach_with(&[], |img| {
            let mut data = vec![0u8; size];
            rand_pcg::Pcg64::seed_from_u64(seed).fill(&mut data[..]);
            std::fs::write(img, &data)
        })
    }

    /// A second loop device over an existing file (no direct I/O), detached on drop; it
    /// holds a temporary directory of its own that stays empty.
    pub fn over(img: &std::path::Path) -> Option<Loop> {
        Self::attach_with(&[], |own| std::os::unix::fs::symlink(img, own))
    }

    /// Over a file of `size` pseudo-random bytes in a private directory under `base`
    /// (e.g. /dev/shm for a file in RAM); `extra` are more losetup options.
    pub fn random_in(base: &str, size: usize, seed: u64, extra: &[&str]) -> Option<Loop> {
        use rand::{Rng, SeedableRng};
        Self::attach_in(base, extra, |img| {
            let mut data = vec![0u8; size];
            rand_pcg::Pcg64::seed_from_u64(seed).fill(&mut data[..]);
            std::fs::write(img, &data)
        })
    }

    fn attach_with(
        extra: &[&str],
        fill: impl FnOnce(&std::path::Path) -> std::io::Result<()>,
    ) -> Option<Loop> {
        Self::attach_in("/var/tmp", extra, fill)
    }

    fn attach_in(
        base: &str,
        extra: &[&str],
        fill: impl FnOnce(&std::path::Path) -> std::io::Result<()>,
    ) -> Option<Loop> {
        if !is_root() {
            skip("loop devices need root (CI runs the tests as root)");
            return None;
        }
        let dir = tempfile::tempdir_in(base).ok()?;
        let img = dir.path().join("card.img");
        fill(&img).ok()?;
        // A timeout: losetup can block on a busy loop-control under load.
        let out = StdCommand::new("timeout")
            .args(["30", "losetup", "--find", "--show", "--direct-io=on"])
            .args(extra)
            .arg(&img)
            .output()
            .ok()?;
        if !out.status.success() {
            skip(&format!(
                "losetup failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
            return None;
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Some(Loop {
            dev,
            img,
            _dir: dir,
        })
    }

    /// The temporary directory that holds the backing file (room for journals and state).
    pub fn dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    /// The first `n` bytes of the backing file.
    pub fn head(&self, n: usize) -> Vec<u8> {
        use std::io::Read;
        let mut buf = vec![0u8; n];
        std::fs::File::open(&self.img)
            .and_then(|mut f| f.read_exact(&mut buf))
            .unwrap();
        buf
    }

    /// SHA-256 of the backing file as seen through the device (flushes the loop's cache).
    pub fn hash(&self) -> String {
        let _ = StdCommand::new("blockdev")
            .args(["--flushbufs", &self.dev])
            .status();
        sha256_of(&self.img)
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = StdCommand::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// A zram device hot-added by a test, filled with random data, removed on drop.
pub struct Zram {
    n: String,
}

impl Zram {
    pub fn new(mib: u64) -> Option<Zram> {
        if !is_root() {
            skip("zram needs root (CI runs the tests as root)");
            return None;
        }
        let Ok(n) = std::fs::read_to_string("/sys/class/zram-control/hot_add") else {
            skip("no zram (modprobe zram)");
            return None;
        };
        let z = Zram {
            n: n.trim().to_string(),
        };
        if let Err(e) = std::fs::write(
            format!("/sys/block/zram{}/disksize", z.n),
            format!("{mib}M"),
        ) {
            skip(&format!("zram{}: setting its size failed: {e}", z.n));
            return None;
        }
        let ok = std::process::Command::new("dd")
            .args([
                "if=/dev/urandom",
                &format!("of={}", z.dev()),
                "bs=1M",
                &format!("count={mib}"),
                "oflag=direct",
                "status=none",
            ])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "filling {}", z.dev());
        Some(z)
    }

    pub fn dev(&self) -> String {
        format!("/dev/zram{}", self.n)
    }
}

impl Zram {
    /// Reset and remove the device, retrying while something still holds it (the
    /// kernel's io_uring workers outlive the process that queued on them for a moment):
    /// `Err` with the reason when it is still there after `wait`.
    pub fn remove(&self, wait: std::time::Duration) -> Result<(), String> {
        let sys = format!("/sys/block/zram{}", self.n);
        let t0 = std::time::Instant::now();
        loop {
            if !std::path::Path::new(&sys).exists() {
                return Ok(());
            }
            // A reset frees the memory; both fail with EBUSY while the device is open.
            let reset = std::fs::write(format!("{sys}/reset"), "1");
            let removed = std::fs::write("/sys/class/zram-control/hot_remove", &self.n);
            if removed.is_ok() {
                return Ok(());
            }
            if t0.elapsed() > wait {
                return Err(format!(
                    "zram{} is still there after {:?}: reset {reset:?}, hot_remove {removed:?}",
                    self.n, wait
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// A test removes what it creates: waiting until it can, and failing when it cannot
/// (a zram device left behind holds its memory until the machine reboots).
impl Drop for Zram {
    fn drop(&mut self) {
        if let Err(e) = self.remove(std::time::Duration::from_secs(10)) {
            if std::thread::panicking() {
                eprintln!("{e}");
            } else {
                panic!("{e}");
            }
        }
    }
}

/// A mount on a temporary directory, unmounted by its exact path on drop.
pub struct Mounted {
    dir: tempfile::TempDir,
}

impl Mounted {
    /// `mount ARGS DIR`, e.g. `["-t", "tmpfs", "-o", "size=4m", "tmpfs"]` or `[dev]`.
    /// `None` after one skip line when not root (no "must be superuser" from mount) or
    /// when mount fails (with mount's own words).
    pub fn new(args: &[&str]) -> Option<Mounted> {
        if !is_root() {
            skip(&format!(
                "mount {args:?} needs root (CI runs the tests as root)"
            ));
            return None;
        }
        let dir = tempfile::tempdir().ok()?;
        let out = StdCommand::new("mount")
            .args(args)
            .arg(dir.path())
            .stderr(std::process::Stdio::piped())
            .output()
            .ok()?;
        if !out.status.success() {
            skip(&format!(
                "mount {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            return None;
        }
        Some(Mounted { dir })
    }

    /// A fresh ext4 on `dev`, mounted with `opts` (e.g. "rw").
    pub fn ext4(dev: &str, opts: &str) -> Option<Mounted> {
        let ok = tool_command("mkfs.ext4")
            .args(["-q", "-F", dev])
            .status()
            .ok()?
            .success();
        if !ok {
            skip(&format!(
                "mkfs.ext4 {dev} failed (apt-get install e2fsprogs)"
            ));
            return None;
        }
        Self::new(&["-o", opts, dev])
    }

    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount").arg(self.dir.path()).status();
    }
}

/// A loop device of `size` bytes with one partition from 1 MiB to its end, formatted ext4
/// and mounted. Fields drop in order: unmounted, the node removed, the device detached.
pub struct Ext4Partition {
    /// `None` once a test unmounted it (`take()`).
    pub mount: Option<Mounted>,
    _node: PartitionNode,
    pub part: String,
    pub lo: Loop,
}

impl Ext4Partition {
    /// `None`, after a skip line, without root, loop devices, sfdisk or mkfs.ext4.
    pub fn attach(size: u64) -> Option<Ext4Partition> {
        // Each helper prints its own skip line.
        let lo = Loop::attach(size, &["--partscan"])?;
        let (part, node) = PartitionNode::first_of(&lo.dev)?;
        let mount = Mounted::ext4(&part, "rw")?;
        Some(Ext4Partition {
            mount: Some(mount),
            _node: node,
            part,
            lo,
        })
    }

    /// The mount point, as text.
    pub fn dir(&self) -> String {
        self.mount
            .as_ref()
            .map(|m| m.path().to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Bytes from a seeded generator (the same for the same seed).
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    use rand::{Rng, SeedableRng};
    let mut v = vec![0u8; len];
    rand_pcg::Pcg64::seed_from_u64(seed).fill(&mut v[..]);
    v
}

/// A file target of random bytes and a journal for it that a killed test left: regions at
/// 0 and 1 MiB (64 KiB each) saved, then overwritten with zeros. Returns the image's
/// original content.
pub fn killed_file_run(
    dir: &std::path::Path,
    seed: u64,
) -> (std::path::PathBuf, std::path::PathBuf, Vec<u8>) {
    use flashscope::backend::{AlignedBuf, Backend};
    let img = dir.join("card.img");
    let original = random_bytes(4 << 20, seed);
    std::fs::write(&img, &original).unwrap();
    let spec = img.to_str().unwrap();
    let opened = flashscope::device::open(
        &target_spec(spec),
        &flashscope::device::OpenRequest::read_write(),
    )
    .unwrap();
    let id = flashscope::journal::Identity::of(&target_spec(spec), &opened, "test");
    let j = dir.join("killed.fsjournal");
    let mut p = flashscope::journal::Preserve::new(opened.backend, &j, &id).unwrap();
    let zeros = AlignedBuf::new(64 << 10);
    p.write_at(&zeros, 0).unwrap();
    p.write_at(&zeros, 1 << 20).unwrap();
    drop(p); // as a SIGKILL leaves it: journal kept, regions overwritten
    assert_ne!(std::fs::read(&img).unwrap(), original);
    (img, j, original)
}

/// Run `cmd` (stdout discarded, stderr kept) with a deadline: its exit code (-1 when a
/// signal ended it) and stderr, or `None` when it was still running after `secs` (a hang;
/// it is killed and reaped). The one bounded runner of the hostile-input tables.
pub fn run_with_deadline(cmd: &mut StdCommand, secs: u64) -> Option<(i32, String)> {
    use std::io::Read;
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read stderr meanwhile, so a chatty child never blocks on a full pipe.
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut err = String::new();
        let _ = pipe.read_to_string(&mut err);
        err
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    Some((
        status.code().unwrap_or(-1),
        reader.join().unwrap_or_default(),
    ))
}

/// A target spec as the CLI parses it, for the library calls tests make.
pub fn target_spec(text: &str) -> flashscope::device::TargetSpec {
    flashscope::device::TargetSpec::parse(text).unwrap()
}
