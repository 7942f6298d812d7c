//! Issue 30: every file root writes is created safely and every target has one writer.
//! Another user (nobody, when the test runs as root) plants links and FIFOs where root's
//! flashscope will write its outputs and test files; nothing may be written through them,
//! nothing may hang, and a bad output path fails before anything is measured. Two writers
//! on one file, directly or through a loop device, are refused with the first one named.

use crate::common::{self, flashscope, is_root, Loop};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A directory the attacker owns (nobody, when root runs the test; else this user), inside
/// a world-readable temporary directory, and the root-owned victim beside it.
struct Scene {
    _top: tempfile::TempDir,
    dir: PathBuf,
    victim: PathBuf,
}

const PRECIOUS: &[u8] = b"precious root-owned data\n";

impl Scene {
    fn new() -> Scene {
        let top = tempfile::Builder::new()
            .prefix("fs-attack")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(top.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let dir = top.path().join("attacker");
        std::fs::create_dir(&dir).unwrap();
        if is_root() {
            std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        }
        let victim = top.path().join("victim");
        std::fs::write(&victim, PRECIOUS).unwrap();
        Scene {
            _top: top,
            dir,
            victim,
        }
    }

    /// Run `sh -c SCRIPT` as the attacker (nobody when root).
    fn as_attacker(&self, script: &str) {
        let mut cmd = if is_root() && common::has_tool("setpriv") {
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "sh",
                "-c",
            ]);
            c
        } else {
            let mut c = Command::new("sh");
            c.arg("-c");
            c
        };
        let st = cmd.arg(script).current_dir(&self.dir).status().unwrap();
        assert!(st.success(), "attacker script failed: {script}");
    }

    fn victim_intact(&self) {
        assert_eq!(
            std::fs::read(&self.victim).unwrap(),
            PRECIOUS,
            "the root-owned victim was written through a planted link"
        );
    }
}

/// Run flashscope with a deadline (a FIFO must never block it); exit code and stderr.
fn run_bounded(args: &[String], secs: u64) -> (i32, String) {
    common::run_with_deadline(common::flashscope_abs().args(args), secs).unwrap_or_else(|| {
        panic!("flashscope {args:?} hung for {secs} s (a FIFO at an output path?)")
    })
}

/// Every output option, as (args with OUT standing for the output path, the extension).
fn output_cases(scene: &Scene, data: &Path) -> Vec<(Vec<String>, &'static str)> {
    let doc = data.join("doc.json");
    let doc2 = data.join("doc2.json");
    let log = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/flashbench/");
    let align_log = std::fs::read_dir(log)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            std::fs::read_to_string(p).is_ok_and(|t| t.contains("align") && t.contains("pre"))
        })
        .expect("an align log in tests/data/flashbench");
    let fsdir = data.join("fsdir");
    std::fs::create_dir_all(&fsdir).unwrap();
    let fsd = fsdir.to_string_lossy().into_owned();
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let _ = scene;
    vec![
        (v(&["align", "sim:sd-16g", "--plot", "OUT"]), "svg"),
        (
            v(&["scatter", "sim:sd-16g", "--order", "6", "-o", "OUT"]),
            "tsv",
        ),
        (
            v(&["scatter", "sim:sd-16g", "--order", "6", "--plot", "OUT"]),
            "svg",
        ),
        (
            v(&["interval", "sim:sd-16g", "--order", "6", "--plot", "OUT"]),
            "svg",
        ),
        (
            vec![
                "analyze".into(),
                align_log.to_string_lossy().into_owned(),
                "--plot".into(),
                "OUT".into(),
            ],
            "svg",
        ),
        (
            v(&[
                "slc",
                "sim:custom,size=256M,erase=1M",
                "--write",
                "--recover",
                "0",
                "--plot",
                "OUT",
            ]),
            "svg",
        ),
        (
            v(&[
                "verify",
                "sim:custom,size=16M,erase=1M",
                "--write",
                "--plot",
                "OUT",
            ]),
            "svg",
        ),
        (
            v(&["fs", "seq", &fsd, "--size", "1M", "--plot", "OUT"]),
            "svg",
        ),
        (
            v(&[
                "fs", "files", &fsd, "--sizes", "64K", "--total", "256K", "--plot", "OUT",
            ]),
            "svg",
        ),
        (
            v(&[
                "fs",
                "matrix",
                &fsd,
                "--max-file",
                "256K",
                "--max-record",
                "64K",
                "--csv",
                "OUT",
            ]),
            "csv",
        ),
        (
            vec![
                "report".into(),
                doc.to_string_lossy().into_owned(),
                "-o".into(),
                "OUT".into(),
            ],
            "html",
        ),
        (
            vec![
                "compare".into(),
                doc.to_string_lossy().into_owned(),
                doc2.to_string_lossy().into_owned(),
                "-o".into(),
                "OUT".into(),
            ],
            "html",
        ),
        (v(&["auto", "sim:sd-16g", "-o", "OUT"]), "html"),
        (v(&["align", "sim:sd-16g", "--prometheus", "OUT"]), "prom"),
        (v(&["align", "sim:sd-16g", "--junit", "OUT"]), "xml"),
    ]
}

fn with_out(args: &[String], out: &Path) -> Vec<String> {
    args.iter()
        .map(|a| {
            if a == "OUT" {
                out.to_string_lossy().into_owned()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// Issue 44 replaced issue 30's rule for another user's directory: an output there is
/// refused (exit 2, naming it) before anything is measured, since its owner could swap
/// anything in it; in one's own directory a planted link or hard link is replaced and a
/// FIFO nobody reads is refused at once. Never written through, never waited on.
#[test]
fn outputs_at_planted_links_and_fifos_are_replaced_or_refused_never_written_through() {
    let scene = Scene::new();
    let data = tempfile::tempdir().unwrap();
    for (name, spec) in [
        ("doc.json", "sim:sd-16g"),
        ("doc2.json", "sim:sd-16g,seed=2"),
    ] {
        let out = flashscope()
            .args(["bench", spec, "--runtime", "1", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::write(data.path().join(name), &out.stdout).unwrap();
    }
    let cases = output_cases(&scene, data.path());
    let (mut replaced, mut refused) = (0, 0);
    for (i, (args, ext)) in cases.iter().enumerate() {
        let sym = scene.dir.join(format!("sym{i}.{ext}"));
        let fifo = scene.dir.join(format!("fifo{i}.{ext}"));
        scene.as_attacker(&format!(
            "ln -s {} sym{i}.{ext} && mkfifo fifo{i}.{ext}",
            scene.victim.display()
        ));
        let hard = data.path().join(format!("hard{i}.{ext}"));
        std::fs::hard_link(&scene.victim, &hard).unwrap();
        for target in [&sym, &fifo, &hard] {
            let before = std::fs::symlink_metadata(target).unwrap();
            let (code, err) = run_bounded(&with_out(args, target), 120);
            scene.victim_intact();
            let meta = std::fs::symlink_metadata(target).unwrap();
            let name = target.file_name().unwrap().to_string_lossy().into_owned();
            // In the attacker's directory (root's run), or a FIFO nobody reads: refused.
            if (is_root() && target.starts_with(&scene.dir)) || target == &fifo {
                assert_eq!(code, 2, "{:?}: {err}", with_out(args, target));
                assert!(err.contains(&name), "the refusal names {name}: {err}");
                assert_eq!(meta.ino(), before.ino(), "{name} left as it was");
                assert_eq!(
                    meta.file_type(),
                    before.file_type(),
                    "{name} left as it was"
                );
                refused += 1;
            } else {
                assert!(
                    code == 0 || code == 3,
                    "{:?} exited {code}: {err}",
                    with_out(args, target)
                );
                assert!(
                    meta.file_type().is_file(),
                    "{} is a regular file",
                    target.display()
                );
                assert_ne!(meta.ino(), std::fs::metadata(&scene.victim).unwrap().ino());
                assert!(meta.len() > 0, "{} written", target.display());
                replaced += 1;
            }
        }
    }
    assert_eq!(replaced + refused, cases.len() * 3);
    eprintln!("output paths: {} planted links and FIFOs (of {} outputs): {replaced} replaced, {refused} refused, none written through, none hung", replaced + refused, cases.len());
    // Nothing was left behind: no temporary files beside the outputs.
    let leftovers: Vec<_> = std::fs::read_dir(&scene.dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// `fs matrix --plot PREFIX` writes six files, PREFIX-<test>.svg: links and FIFOs planted
/// at each name are replaced or refused, never written through or waited on.
#[test]
fn fs_matrix_plot_files_replace_planted_links_and_fifos() {
    let scene = Scene::new();
    let data = tempfile::tempdir().unwrap();
    let tests = [
        "write",
        "rewrite",
        "read",
        "reread",
        "random_read",
        "random_write",
    ];
    let mut checked = 0;
    for (k, kind) in ["sym", "fifo"].iter().enumerate() {
        let prefix = scene.dir.join(format!("m{k}"));
        let plant: Vec<String> = tests
            .iter()
            .map(|t| match *kind {
                "sym" => format!("ln -s {} m{k}-{t}.svg", scene.victim.display()),
                _ => format!("mkfifo m{k}-{t}.svg"),
            })
            .collect();
        scene.as_attacker(&plant.join(" && "));
        let args: Vec<String> = [
            "fs",
            "matrix",
            data.path().to_str().unwrap(),
            "--max-file",
            "256K",
            "--max-record",
            "64K",
            "--plot",
            prefix.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (code, err) = run_bounded(&args, 300);
        scene.victim_intact();
        if is_root() || *kind == "fifo" {
            // The attacker's directory (root's run), or FIFOs nobody reads: refused
            // before measuring, the planted names left as they were.
            assert_eq!(code, 2, "{args:?}: {err}");
            for t in tests {
                let f = scene.dir.join(format!("m{k}-{t}.svg"));
                let meta = std::fs::symlink_metadata(&f).unwrap();
                assert!(
                    !meta.file_type().is_file(),
                    "{} left as it was",
                    f.display()
                );
                checked += 1;
            }
            continue;
        }
        assert!(code == 0 || code == 3, "{args:?}: {err}");
        for t in tests {
            let f = scene.dir.join(format!("m{k}-{t}.svg"));
            let meta = std::fs::symlink_metadata(&f).unwrap();
            assert!(
                meta.file_type().is_file() && meta.len() > 0,
                "{} is a written regular file",
                f.display()
            );
            checked += 1;
        }
    }
    eprintln!("fs matrix --plot PREFIX: {checked} planted links and FIFOs replaced or refused, none written through, none hung");
}

#[test]
fn an_output_that_cannot_be_written_fails_before_anything_is_measured() {
    let data = tempfile::tempdir().unwrap();
    let missing = data.path().join("no/such/dir/out.svg");
    let m = missing.to_string_lossy().into_owned();
    let mut cases = 0;
    // slc on a big simulated card writes gigabytes: refused at once instead.
    for args in [
        vec!["slc", "sim:sd-16g", "--write", "--plot", &m],
        vec!["verify", "sim:sd-16g", "--write", "--plot", &m],
        vec!["align", "sim:sd-16g", "--plot", &m],
        vec!["auto", "sim:sd-16g", "--write", "-o", &m],
    ] {
        let t0 = Instant::now();
        let out = flashscope().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("create it first"), "{args:?}: {err}");
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{args:?} measured before failing on its output ({:?})",
            t0.elapsed()
        );
        cases += 1;
    }
    eprintln!("unwritable outputs: {cases} refused before measuring");
}

#[test]
fn fs_test_files_have_unguessable_names_and_planted_links_are_not_followed() {
    let scene = Scene::new();
    let pid_max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(32768);
    // The old names: DIR/flashscope-seq-<mode>-<pid>. Plant a link for every pid near
    // ours (the next processes' pids) for every mode, as the attacker did.
    let me = std::process::id();
    let lo = me.saturating_sub(50);
    let hi = (me + 2000).min(pid_max);
    scene.as_attacker(&format!(
        "i={lo}; while [ $i -lt {hi} ]; do for m in warmup buffered fdatasync dsync sync direct; do ln -s {v} flashscope-seq-$m-$i; done; ln -s {v} flashscope-matrix-262144-65536-$i; i=$((i+1)); done",
        v = scene.victim.display()
    ));
    if is_root() {
        // root writes into the attacker's directory, as on a card automounted with uid=.
        std::fs::set_permissions(&scene.dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let dir = scene.dir.to_string_lossy().into_owned();
    let planted = std::fs::read_dir(&scene.dir).unwrap().count();
    let mut cases = 0;
    for args in [
        vec!["fs", "seq", &dir, "--size", "1M", "--keep"],
        vec![
            "fs",
            "matrix",
            &dir,
            "--max-file",
            "256K",
            "--max-record",
            "64K",
            "--keep",
        ],
    ] {
        let (code, err) = run_bounded(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>(), 300);
        assert_eq!(code, 0, "{args:?}: {err}");
        scene.victim_intact();
        cases += 1;
    }
    eprintln!(
        "fs seq/matrix test files: {cases} runs beside {planted} planted links, none followed"
    );
    // The kept files: regular files with a random part after the pid.
    let kept: Vec<String> = std::fs::read_dir(&scene.dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!kept.is_empty());
    for n in &kept {
        let last = n.rsplit('-').next().unwrap();
        assert!(
            last.len() == 8 && last.chars().all(|c| c.is_ascii_hexdigit()),
            "{n}: no random part"
        );
    }
}

/// `verify DIR` in a directory another user owns: a link planted at the old predictable
/// name is not followed (the files get a random part), and a run split into passes, which
/// would find its files again by name, is refused before anything is written (issue 30).
#[test]
fn verify_dir_in_another_users_directory_never_writes_through_a_planted_name() {
    let scene = Scene::new();
    // Another user's directory (nobody's, as root) that others may write too.
    std::fs::set_permissions(&scene.dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    scene.as_attacker(&format!(
        "for i in 0000 0001; do ln -s {v} flashscope-verify-$i.bin; done",
        v = scene.victim.display()
    ));
    let dir = scene.dir.to_string_lossy().into_owned();
    let state = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut cmd = common::flashscope_abs();
        cmd.args(args)
            .envs(common::HISTORY_OFF)
            .env("XDG_STATE_HOME", state.path());
        common::run_with_deadline(&mut cmd, 120).expect("verify DIR ended")
    };
    let (code, err) = run(&["verify", &dir, "--write", "--size", "2M", "--keep"]);
    assert_eq!(code, 0, "{err}");
    scene.victim_intact();
    let kept: Vec<String> = std::fs::read_dir(&scene.dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let tag = kept[0]
        .strip_prefix("flashscope-verify-0000-")
        .and_then(|t| t.strip_suffix(".bin"))
        .unwrap_or_else(|| panic!("no random part: {kept:?}"));
    assert!(
        tag.len() == 8 && tag.chars().all(|c| c.is_ascii_hexdigit()),
        "{kept:?}"
    );
    let (code, err) = run(&["verify", &dir, "--write", "--size", "2M", "--pass", "write"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("Verify it in one run"), "{err}");
    scene.victim_intact();
    eprintln!("verify DIR in another user's directory: 2 cases, 0 written through");
}

#[test]
fn bench_on_a_directory_measures_the_file_it_made_even_when_its_name_is_swapped() {
    let scene = Scene::new();
    if is_root() {
        std::fs::set_permissions(&scene.dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // The attacker's loop: as soon as bench's test file appears, move it away and put a
    // link to the victim at its name.
    let watcher = {
        let (dir, victim) = (scene.dir.clone(), scene.victim.clone());
        let (stop, swapped) = (stop.clone(), swapped.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for e in std::fs::read_dir(&dir).unwrap().flatten() {
                    let n = e.file_name().to_string_lossy().into_owned();
                    if n.starts_with("flashscope-bench-") && e.file_type().unwrap().is_file() {
                        let _ = std::fs::rename(e.path(), dir.join("moved-away"));
                        let _ = std::os::unix::fs::symlink(&victim, e.path());
                        swapped.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let dir = scene.dir.to_string_lossy().into_owned();
    let args: Vec<String> = ["bench", &dir, "--write", "--size", "8M", "--runtime", "0.3"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (code, err) = run_bounded(&args, 300);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    watcher.join().unwrap();
    assert!(
        swapped.load(std::sync::atomic::Ordering::Relaxed),
        "the swap never happened: the test checked nothing"
    );
    assert_eq!(code, 0, "{err}");
    scene.victim_intact();
    eprintln!("bench DIR with its file swapped for a link: 1 case, not written through");
}

/// Start a long preserve-mode writer on `target` (its journal in `state`) and wait until
/// it holds the target.
fn start_writer(target: &str, state: &Path) -> std::process::Child {
    // About 10 s of writing (8 tests of 1 s, preserve mode's saving and restoring): the
    // refusals the callers check take well under a second each, even on a busy machine.
    let mut child = common::flashscope_abs()
        .args(["bench", target, "--write", "--runtime", "1", "--size", "4M"])
        .envs(common::HISTORY_OFF)
        .env("XDG_STATE_HOME", state)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The lock shows in /proc/locks once the writer opened the target.
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(30) {
        let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
        if locks
            .lines()
            .any(|l| l.contains("FLOCK") && l.contains(&format!(" {} ", child.id())))
        {
            return child;
        }
        if child.try_wait().unwrap().is_some() {
            panic!("the first writer ended before it held {target}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the first writer never locked {target}");
}

fn second_writer_refused(target: &str, first: u32) {
    for args in [
        vec!["verify", target, "--write", "--range", "0+1M"],
        vec![
            "program", target, "--write", "--offset", "0", "--size", "1M",
        ],
    ] {
        let out = flashscope().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("one writer at a time") && err.contains(&format!("process {first}")),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_second_writer_on_a_file_is_refused_naming_the_first_and_the_data_survives() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("card.img");
    std::fs::write(&f, common::random_bytes(16 << 20, 7)).unwrap();
    let before = common::sha256_of(&f);
    let spec = f.to_string_lossy().into_owned();
    let mut first = start_writer(&spec, d.path());
    second_writer_refused(&spec, first.id());
    let st = first.wait().unwrap();
    assert!(st.success(), "the first writer: {st:?}");
    assert_eq!(common::sha256_of(&f), before, "the file is bit-identical");
    // Once the first has finished, the file can be written again.
    flashscope()
        .args(["verify", &spec, "--write", "--range", "0+1M"])
        .assert()
        .success();
    assert_eq!(common::sha256_of(&f), before);
    eprintln!("one writer on a file: 2 refused, 0 data lost");
}

/// Issue 44.10: only a writer can hold a target's writer lock. A process that merely
/// reads an image (another user who may read it) and takes its `flock` blocks no test,
/// and writers still exclude each other then; with a read lock beside it no test is
/// blocked either. A lock held on a descriptor open for writing still refuses, naming
/// the process.
#[test]
fn a_reader_of_an_image_cannot_hold_its_writer_lock() {
    use std::os::fd::AsRawFd;
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("card.img");
    std::fs::write(&f, common::random_bytes(16 << 20, 9)).unwrap();
    let before = common::sha256_of(&f);
    let spec = f.to_string_lossy().into_owned();
    let verify = || {
        flashscope()
            .args(["verify", &spec, "--write", "--range", "0+1M"])
            .env("XDG_STATE_HOME", d.path())
            .output()
            .unwrap()
    };
    {
        let reader = std::fs::File::open(&f).unwrap();
        // SAFETY: flock on a descriptor we own.
        let locked = unsafe { libc::flock(reader.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(locked, 0);
        let out = verify();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "a reader's flock refused a test: {err}"
        );
        assert_eq!(common::sha256_of(&f), before);
        // Two writers while the reader holds the flock: still one at a time.
        let mut first = start_writer_any(&spec, d.path());
        let out = verify();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("one writer at a time"), "{err}");
        assert!(first.wait().unwrap().success());
        assert_eq!(common::sha256_of(&f), before);
        // A read lock beside it, the only other lock a reader can take: no test blocked.
        // SAFETY: fcntl on a descriptor we own with our flock struct.
        let read_locked = unsafe {
            let mut lock: libc::flock = std::mem::zeroed();
            lock.l_type = libc::F_RDLCK as libc::c_short;
            lock.l_whence = libc::SEEK_SET as libc::c_short;
            libc::fcntl(reader.as_raw_fd(), libc::F_OFD_SETLK, &mut lock)
        };
        assert_eq!(read_locked, 0);
        let out = verify();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "a reader's locks refused a test: {err}"
        );
        assert_eq!(common::sha256_of(&f), before);
    }
    // A writer's descriptor holding the flock: refused, this process named.
    let writer = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&f)
        .unwrap();
    // SAFETY: flock on a descriptor we own.
    assert_eq!(
        unsafe { libc::flock(writer.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let out = verify();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("one writer at a time")
            && err.contains(&format!("process {}", std::process::id())),
        "{err}"
    );
    drop(writer);
    assert_eq!(common::sha256_of(&f), before);
}

/// [`start_writer`] for a target whose `flock` a reader holds: the writer shows as an
/// open-file-description write lock on the target's own device and inode (its pid not
/// shown in /proc/locks; any other test's writer holds such a lock on another file).
fn start_writer_any(target: &str, state: &Path) -> std::process::Child {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(target).unwrap();
    let want = format!(
        "{:02x}:{:02x}:{}",
        libc::major(meta.dev()),
        libc::minor(meta.dev()),
        meta.ino()
    );
    let mut child = common::flashscope_abs()
        .args(["bench", target, "--write", "--runtime", "1", "--size", "4M"])
        .envs(common::HISTORY_OFF)
        .env("XDG_STATE_HOME", state)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(30) {
        let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
        if locks.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.get(1) == Some(&"OFDLCK") && f.get(3) == Some(&"WRITE") && f.get(5) == Some(&&*want)
        }) {
            return child;
        }
        if child.try_wait().unwrap().is_some() {
            panic!("the first writer ended before it held {target}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the first writer never locked {target}");
}

#[test]
fn a_loop_device_and_its_backing_file_have_one_writer_between_them() {
    let Some(lp) = Loop::random(16 << 20, 11) else {
        return;
    };
    let before = lp.hash();
    let backing = lp.img.to_string_lossy().into_owned();
    let state = tempfile::tempdir().unwrap();
    // Through the loop device first, then through the backing file first.
    let mut first = start_writer(&lp.dev, state.path());
    second_writer_refused(&backing, first.id());
    assert!(first.wait().unwrap().success());
    let mut first = start_writer(&backing, state.path());
    second_writer_refused(&lp.dev, first.id());
    assert!(first.wait().unwrap().success());
    assert_eq!(lp.hash(), before, "bit-identical after both");
    eprintln!("one-writer cases on a loop device and its backing file: 4 refused, 0 data lost");
}

/// Issue 30 point 4, crashes: a writer SIGKILLed mid-test on a file or a loop device
/// leaves its journal; a second writer then runs on the same bytes (the file, the loop
/// device or its backing file) and, while it writes, `restore` of the first one's journal
/// is refused naming it; once it has ended, the restore puts every byte back. Each
/// interleaving ends bit-identical to the start.
#[test]
fn a_crashed_writer_a_second_writer_and_a_restore_end_bit_identical() {
    use std::os::unix::fs::FileExt;
    let Some(lp) = Loop::random(48 << 20, 13) else {
        return;
    };
    let before = lp.hash();
    let backing = lp.img.to_string_lossy().into_owned();
    let mut cases = 0;
    for (a, b) in [
        (&backing, &backing),
        (&lp.dev, &backing),
        (&backing, &lp.dev),
        (&lp.dev, &lp.dev),
    ] {
        let state = tempfile::tempdir().unwrap();
        let j = state.path().join("crashed.fsjournal");
        let last = (16u64 << 20) + (15 << 20);
        let overwritten = || {
            let mut buf = vec![0u8; 4096];
            let f = std::fs::File::open(&lp.img).unwrap();
            f.read_exact_at(&mut buf, last).unwrap();
            buf.iter().all(|&x| x == 0)
        };
        let args = [
            "slc",
            a.as_str(),
            "--write",
            "--write-budget",
            "32M",
            "--recover",
            "20s",
            "--journal",
            j.to_str().unwrap(),
        ];
        let (code, err) = common::signal_when(
            state.path(),
            state.path(),
            &args,
            &common::Stop::mid_test(libc::SIGKILL),
            overwritten,
        );
        assert_eq!(code, None, "{a}: the first writer was killed: {err}");
        assert!(j.exists(), "{a}: the killed writer's journal is kept");
        assert_ne!(lp.hash(), before, "{a}: it had overwritten data");
        // The second writer on the same bytes, and the first one's restore meanwhile.
        let mut second = start_writer(b, state.path());
        let out = flashscope()
            .env("XDG_STATE_HOME", state.path())
            .args(["restore", j.to_str().unwrap()])
            .output()
            .unwrap();
        let rerr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a} then {b}: {rerr}");
        assert!(
            rerr.contains("one writer at a time")
                && rerr.contains(&format!("process {}", second.id())),
            "{a} then {b}: {rerr}"
        );
        assert!(
            second.wait().unwrap().success(),
            "{a} then {b}: the second writer"
        );
        assert!(
            j.exists(),
            "{a} then {b}: the refused restore kept the journal"
        );
        let out = flashscope()
            .env("XDG_STATE_HOME", state.path())
            .args(["restore", j.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{a} then {b}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(lp.hash(), before, "{a} then {b}: bit-identical");
        cases += 1;
    }
    eprintln!("crash interleavings on a file, a loop device and its backing file: {cases} bit-identical, 0 data lost");
}

/// A history behind a directory this user may not enter is "cannot be looked at", not
/// "no such database yet" (issue 30).
#[test]
fn an_unreadable_history_directory_is_not_an_empty_history() {
    let d = tempfile::Builder::new()
        .prefix("fs-hist")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let private = d.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let db = private.join("h.sqlite");
    let Some((_bin, mut cmd)) =
        common::as_nobody(&["history", "list", "--history", db.to_str().unwrap()])
    else {
        return;
    };
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot be looked at"), "{err}");
    assert!(!err.contains("no such database yet"), "{err}");
}

/// A target even root may not open (an immutable file: EPERM for root too) is not told
/// "run as root" (issue 33 point 6).
#[test]
fn a_target_root_cannot_open_is_not_told_to_run_as_root() {
    if !is_root() {
        common::skip("needs root to see what root is refused");
        return;
    }
    if !common::has_tool("chattr") {
        common::skip("chattr is not installed (apt-get install e2fsprogs)");
        return;
    }
    let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let f = d.path().join("immutable.img");
    std::fs::write(&f, vec![0u8; 4 << 20]).unwrap();
    let set = crate::common::tool_command("chattr")
        .arg("+i")
        .arg(&f)
        .status()
        .unwrap();
    if !set.success() {
        common::skip("this filesystem has no immutable attribute");
        return;
    }
    let out = flashscope()
        .args(["verify", f.to_str().unwrap(), "--write"])
        .output()
        .unwrap();
    let _ = crate::common::tool_command("chattr")
        .arg("-i")
        .arg(&f)
        .status();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("even to root"), "{err}");
    assert!(!err.contains("run as root"), "{err}");
}
