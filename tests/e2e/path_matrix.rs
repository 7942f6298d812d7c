//! Issue 44 point 11: the path-shape matrix. For every option that names a file root
//! writes or reads, every shape of path another local user (nobody) can arrange: the
//! outcome is written, streamed, or refused with exit 2 naming the path; the root-only
//! victims (a file and a directory) are unchanged (content, mode, owner, inode), and
//! nothing runs past 5 s. `/dev/stdout` is tried inside a private mount namespace with a
//! /dev of its own, so the machine's /dev is never at stake.

use crate::common::{self, is_root};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

const NOBODY: u32 = 65534;
/// Longest a single run may take.
const DEADLINE_S: u64 = 5;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    /// The option names a file root writes.
    Write,
    /// A file root reads.
    Read,
    /// A directory root writes test files in.
    Dir,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    New,
    Regular,
    LinkToRootOnly,
    OthersLinkedParent,
    ParentOthersWritable,
    ParentOthersWritableSticky,
    Fifo,
    CharDevice,
    DevStdout,
    HardLinkToRootOnly,
    Directory,
    Dangling,
    OverLong,
    NonUtf8,
    SwappedDuringRun,
}

const SHAPES: [Shape; 15] = [
    Shape::New,
    Shape::Regular,
    Shape::LinkToRootOnly,
    Shape::OthersLinkedParent,
    Shape::ParentOthersWritable,
    Shape::ParentOthersWritableSticky,
    Shape::Fifo,
    Shape::CharDevice,
    Shape::DevStdout,
    Shape::HardLinkToRootOnly,
    Shape::Directory,
    Shape::Dangling,
    Shape::OverLong,
    Shape::NonUtf8,
    Shape::SwappedDuringRun,
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    Written,
    Streamed,
    Refused,
    /// A read of a path that names nothing (nothing there, a dangling link, a name too
    /// long, or swapped away at that instant): exit 1 naming it, as `bad_input.rs` pins
    /// for a missing target or file.
    Absent,
}

struct Fixture {
    top: PathBuf,
    doc: PathBuf,
    doc2: PathBuf,
    log: PathBuf,
    work: PathBuf,
    secret: PathBuf,
    secret_dir: PathBuf,
}

/// An option and how to run it with the path in question.
struct Opt {
    name: &'static str,
    role: Role,
    args: fn(&Fixture, &Path, &OsStr) -> Vec<OsString>,
}

fn v(items: &[&dyn AsRef<OsStr>]) -> Vec<OsString> {
    items.iter().map(|s| s.as_ref().to_os_string()).collect()
}

fn options() -> Vec<Opt> {
    vec![
        Opt {
            name: "report -o",
            role: Role::Write,
            args: |f, _, p| v(&[&"report", &f.doc, &"-o", &p]),
        },
        Opt {
            name: "analyze --plot",
            role: Role::Write,
            args: |f, _, p| v(&[&"analyze", &f.log, &"--plot", &p]),
        },
        Opt {
            name: "fs matrix --csv",
            role: Role::Write,
            args: |f, _, p| {
                v(&[
                    &"fs",
                    &"matrix",
                    &f.work,
                    &"--max-file",
                    &"64K",
                    &"--max-record",
                    &"64K",
                    &"--csv",
                    &p,
                ])
            },
        },
        Opt {
            name: "--prometheus",
            role: Role::Write,
            args: |_, _, p| v(&[&"align", &"sim:sd-16g", &"--prometheus", &p]),
        },
        Opt {
            name: "--junit",
            role: Role::Write,
            args: |_, _, p| v(&[&"align", &"sim:sd-16g", &"--junit", &p]),
        },
        Opt {
            name: "--history",
            role: Role::Write,
            args: |_, _, p| v(&[&"align", &"sim:sd-16g", &"--history", &p]),
        },
        Opt {
            name: "verify --journal",
            role: Role::Write,
            args: |_, case, p| v(&[&"verify", &case.join("img"), &"--write", &"--journal", &p]),
        },
        Opt {
            name: "verify --state",
            role: Role::Write,
            args: |_, case, p| {
                v(&[
                    &"verify",
                    &case.join("img"),
                    &"--destructive",
                    &"--state",
                    &p,
                ])
            },
        },
        Opt {
            name: "report DOC",
            role: Role::Read,
            args: |_, case, p| v(&[&"report", &p, &"-o", &case.join("out.html")]),
        },
        Opt {
            name: "compare DOC",
            role: Role::Read,
            args: |f, case, p| v(&[&"compare", &p, &f.doc2, &"-o", &case.join("out.html")]),
        },
        Opt {
            name: "analyze LOG",
            role: Role::Read,
            args: |_, _, p| v(&[&"analyze", &p]),
        },
        Opt {
            name: "fs files DIR",
            role: Role::Dir,
            args: |_, _, p| v(&[&"fs", &"files", &p, &"--sizes", &"4K", &"--total", &"16K"]),
        },
        Opt {
            name: "verify DIR",
            role: Role::Dir,
            args: |_, _, p| v(&[&"verify", &p, &"--write", &"--size", &"1M"]),
        },
    ]
}

/// What identifies a victim: content, mode, owner, inode (or a directory's entries).
fn snapshot(p: &Path) -> (Vec<u8>, u32, u32, u64, Vec<OsString>) {
    let m = std::fs::symlink_metadata(p).unwrap();
    let (content, mut entries) = if m.is_dir() {
        (
            Vec::new(),
            std::fs::read_dir(p)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect::<Vec<_>>(),
        )
    } else {
        (std::fs::read(p).unwrap_or_default(), Vec::new())
    };
    entries.sort();
    (content, m.mode(), m.uid(), m.ino(), entries)
}

fn sh(script: &str, dir: &Path, as_nobody: bool) {
    let mut c = if as_nobody {
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
    let st = c.arg(script).current_dir(dir).status().unwrap();
    assert!(st.success(), "{script}");
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Content a regular file at the path starts with, so reading it can succeed.
fn seed_content(fx: &Fixture, opt: &Opt) -> Vec<u8> {
    match opt.name {
        "report DOC" | "compare DOC" => std::fs::read(&fx.doc).unwrap(),
        "analyze LOG" => std::fs::read(&fx.log).unwrap(),
        _ => b"old content\n".to_vec(),
    }
}

/// Build `shape` in the fresh directory `case`: the path to give, and a process to stop
/// after the run (the swapper).
fn build(
    fx: &Fixture,
    opt: &Opt,
    case: &Path,
    shape: Shape,
) -> (PathBuf, Option<std::process::Child>) {
    let ext = "out";
    let p = |name: &str| case.join(format!("{name}.{ext}"));
    let dir_role = opt.role == Role::Dir;
    let mut child = None;
    let path = match shape {
        Shape::New => p("new"),
        Shape::Regular => {
            let q = p("reg");
            if dir_role {
                std::fs::create_dir(&q).unwrap();
            } else {
                std::fs::write(&q, seed_content(fx, opt)).unwrap();
            }
            q
        }
        Shape::LinkToRootOnly => {
            // Planted by nobody in a sticky shared directory.
            chmod(case, 0o1777);
            let target = if dir_role { &fx.secret_dir } else { &fx.secret };
            sh(
                &format!("ln -s {} link.{ext}", target.display()),
                case,
                true,
            );
            p("link")
        }
        Shape::OthersLinkedParent => {
            let att = case.join("att");
            std::fs::create_dir(&att).unwrap();
            std::os::unix::fs::chown(&att, Some(NOBODY), Some(NOBODY)).unwrap();
            sh(&format!("ln -s {} d", fx.secret_dir.display()), &att, true);
            // Reads find root's own file there (made before the snapshot); a directory
            // is the root-only directory itself.
            if dir_role {
                att.join("d")
            } else {
                att.join(format!("d/x.{ext}"))
            }
        }
        Shape::ParentOthersWritable | Shape::ParentOthersWritableSticky => {
            let shared = case.join("shared");
            std::fs::create_dir(&shared).unwrap();
            chmod(
                &shared,
                if shape == Shape::ParentOthersWritable {
                    0o777
                } else {
                    0o1777
                },
            );
            let q = shared.join(format!("x.{ext}"));
            if opt.role != Role::Write {
                // Another user's file or directory there, for root to read or test in.
                if dir_role {
                    std::fs::create_dir(&q).unwrap();
                    chmod(&q, 0o777);
                } else {
                    std::fs::write(&q, seed_content(fx, opt)).unwrap();
                }
                std::os::unix::fs::chown(&q, Some(NOBODY), Some(NOBODY)).unwrap();
            }
            q
        }
        Shape::Fifo => {
            sh(&format!("mkfifo fifo.{ext}"), case, false);
            p("fifo")
        }
        Shape::CharDevice => {
            // A null device made here: writing to it changes nothing.
            sh(&format!("mknod -m 666 null.{ext} c 1 3"), case, false);
            p("null")
        }
        Shape::DevStdout => PathBuf::from("/dev/stdout"),
        Shape::HardLinkToRootOnly => {
            let q = p("hard");
            std::fs::hard_link(&fx.secret, &q).unwrap();
            q
        }
        Shape::Directory => {
            let q = p("dir");
            std::fs::create_dir(&q).unwrap();
            q
        }
        Shape::Dangling => {
            let q = p("dangling");
            std::os::unix::fs::symlink(case.join("nowhere"), &q).unwrap();
            q
        }
        Shape::OverLong => case.join("x".repeat(300)),
        Shape::NonUtf8 => {
            let mut name = b"bad-\xff-name.".to_vec();
            name.extend_from_slice(ext.as_bytes());
            let q = case.join(OsString::from_vec(name));
            if opt.role != Role::Write {
                if dir_role {
                    std::fs::create_dir(&q).unwrap();
                } else {
                    std::fs::write(&q, seed_content(fx, opt)).unwrap();
                }
            }
            q
        }
        Shape::SwappedDuringRun => {
            // nobody's directory, whose `d` they keep swapping between a directory and a
            // link to the root-only directory while root runs.
            let att = case.join("att");
            std::fs::create_dir(&att).unwrap();
            std::os::unix::fs::chown(&att, Some(NOBODY), Some(NOBODY)).unwrap();
            sh("mkdir d && chmod 777 d", &att, true);
            if opt.role == Role::Read {
                std::fs::write(att.join("d/x.out"), seed_content(fx, opt)).unwrap();
            }
            let script = format!(
                "while :; do mv d d.real; ln -s {} d; mv -T d.real d 2>/dev/null || {{ rm -f d; mv d.real d; }}; done",
                fx.secret_dir.display()
            );
            child = Some(
                Command::new("setpriv")
                    .args([
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        "sh",
                        "-c",
                    ])
                    .arg(script)
                    .current_dir(&att)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap(),
            );
            if dir_role {
                att.join("d")
            } else {
                att.join(format!("d/x.{ext}"))
            }
        }
    };
    (path, child)
}

/// Run flashscope with `args` (through a private mount namespace with its own /dev for
/// `/dev/stdout`): exit code and stderr, or a panic past the deadline.
fn run(args: &[OsString], shape: Shape) -> (i32, String) {
    let mut cmd = if shape == Shape::DevStdout {
        let bin = common::flashscope_abs();
        let mut c = Command::new("unshare");
        c.args(["-m", "--propagation", "private", "sh", "-c"])
            .arg(
                "mount -t tmpfs flashscope-dev /dev && ln -s /proc/self/fd/1 /dev/stdout && \
                 ln -s /proc/self/fd/2 /dev/stderr && mknod -m 666 /dev/null c 1 3 && \
                 \"$0\" \"$@\"; rc=$?; [ -L /dev/stdout ] || { echo '/dev/stdout was replaced' >&2; exit 99; }; exit $rc",
            )
            .arg(bin.get_program())
            .args(bin.get_args());
        c.envs(common::HISTORY_OFF);
        c
    } else {
        common::flashscope_abs()
    };
    cmd.args(args);
    common::run_with_deadline(&mut cmd, DEADLINE_S)
        .unwrap_or_else(|| panic!("flashscope {args:?} ran past {DEADLINE_S} s"))
}

/// The part of a path's last component a refusal must show (before any byte that is not
/// plain ASCII; at most 40 characters).
fn needle(path: &Path) -> String {
    let name = path.file_name().unwrap_or(path.as_os_str()).as_bytes();
    let plain: Vec<u8> = name
        .iter()
        .copied()
        .take_while(|b| b.is_ascii_graphic())
        .take(40)
        .collect();
    String::from_utf8(plain).unwrap()
}

#[test]
fn every_path_shape_is_written_streamed_or_refused_and_nothing_else_changes() {
    if !is_root() {
        common::skip(
            "the path matrix plays another user (nobody) and makes device nodes: needs root",
        );
        return;
    }
    for tool in ["setpriv", "unshare", "mknod", "mkfifo"] {
        if !common::has_tool(tool) {
            common::skip(&format!(
                "{tool} is not installed (apt-get install util-linux coreutils)"
            ));
            return;
        }
    }
    let t0 = std::time::Instant::now();
    let top = tempfile::Builder::new()
        .prefix("fs-matrix")
        .tempdir_in("/tmp")
        .unwrap();
    chmod(top.path(), 0o755);
    let data = top.path().join("data");
    std::fs::create_dir(&data).unwrap();
    for (name, spec) in [
        ("doc.json", "sim:sd-16g"),
        ("doc2.json", "sim:sd-16g,seed=2"),
    ] {
        let out = common::flashscope()
            .args(["bench", spec, "--runtime", "1", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::write(data.join(name), &out.stdout).unwrap();
    }
    let secret_dir = top.path().join("root-only");
    std::fs::create_dir(&secret_dir).unwrap();
    chmod(&secret_dir, 0o700);
    let secret = secret_dir.join("secret");
    std::fs::write(&secret, b"root's secret\n").unwrap();
    chmod(&secret, 0o600);
    let root_doc = secret_dir.join("x.out");
    std::fs::write(&root_doc, std::fs::read(data.join("doc.json")).unwrap()).unwrap();
    chmod(&root_doc, 0o600);
    // A second name for the secret outside its directory, for hard links next to cases.
    let secret_hard = top.path().join("secret-hard");
    std::fs::hard_link(&secret, &secret_hard).unwrap();
    let work = top.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let fx = Fixture {
        top: top.path().to_path_buf(),
        doc: data.join("doc.json"),
        doc2: data.join("doc2.json"),
        log: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/flashbench/seed-align-01.txt"
        )),
        work,
        secret: secret_hard,
        secret_dir: secret_dir.clone(),
    };
    let victims = [
        secret.clone(),
        root_doc.clone(),
        secret_dir.clone(),
        PathBuf::from("/dev/null"),
    ];
    let before: Vec<_> = victims.iter().map(|p| snapshot(p)).collect();
    let dev_stdout = std::fs::symlink_metadata("/dev/stdout")
        .map(|m| m.ino())
        .ok();

    let (mut written, mut streamed, mut refused, mut absent) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    let opts = options();
    let mut n = 0;
    for opt in &opts {
        for &shape in &SHAPES {
            n += 1;
            let case = fx.top.join(format!("c{n}"));
            std::fs::create_dir(&case).unwrap();
            chmod(&case, 0o755);
            std::fs::write(case.join("img"), vec![0u8; 1 << 20]).unwrap();
            let (path, swapper) = build(&fx, opt, &case, shape);
            let before_node = std::fs::symlink_metadata(&path).ok();
            let args = (opt.args)(&fx, &case, path.as_os_str());
            let (code, err) = run(&args, shape);
            if let Some(mut c) = swapper {
                let _ = c.kill();
                let _ = c.wait();
            }
            let after_node = std::fs::symlink_metadata(&path).ok();
            let special = |m: &Option<std::fs::Metadata>| {
                m.as_ref().is_some_and(|m| {
                    let t = m.file_type();
                    t.is_fifo() || t.is_char_device() || t.is_symlink()
                })
            };
            let absent_shape = matches!(
                shape,
                Shape::New | Shape::Dangling | Shape::OverLong | Shape::SwappedDuringRun
            );
            let outcome = match code {
                2 if err.contains(&needle(&path)) => Some(Outcome::Refused),
                // Reads take their paths as text (clap), which cannot show a name that is
                // not UTF-8: refused before anything is opened.
                2 if shape == Shape::NonUtf8
                    && opt.role != Role::Write
                    && err.contains("invalid UTF-8") =>
                {
                    Some(Outcome::Refused)
                }
                1 if opt.role != Role::Write && absent_shape && err.contains(&needle(&path)) => {
                    Some(Outcome::Absent)
                }
                // The history's own rule (tests/e2e/history.rs): an untrusted history turns
                // it off for the run with one warning naming it; the measurement stands.
                0 if opt.name == "--history"
                    && err.contains("history is off for this run")
                    && err.contains(&needle(&path))
                    && (shape == Shape::SwappedDuringRun
                        || after_node.as_ref().map(|m| (m.ino(), m.file_type()))
                            == before_node.as_ref().map(|m| (m.ino(), m.file_type()))) =>
                {
                    Some(Outcome::Refused)
                }
                0 | 3 => {
                    if matches!(shape, Shape::Fifo | Shape::CharDevice | Shape::DevStdout)
                        && opt.role == Role::Write
                    {
                        // Written through, the node kept (the namespace's /dev/stdout is
                        // checked inside it).
                        let kept = shape == Shape::DevStdout
                            || (special(&before_node)
                                && after_node.as_ref().map(|m| m.ino())
                                    == before_node.as_ref().map(|m| m.ino()));
                        kept.then_some(Outcome::Streamed)
                    } else {
                        Some(Outcome::Written)
                    }
                }
                _ => None,
            };
            // Shapes another user controls may never be written for root; nor may a
            // directory root tests in be reached through another user's link.
            let must_refuse = (opt.role == Role::Dir
                && matches!(shape, Shape::OthersLinkedParent | Shape::LinkToRootOnly))
                || opt.role == Role::Write
                    && matches!(
                        shape,
                        Shape::OthersLinkedParent
                            | Shape::ParentOthersWritable
                            | Shape::SwappedDuringRun
                            | Shape::Fifo
                            | Shape::Directory
                            | Shape::OverLong
                    );
            if std::env::var_os("FLASHSCOPE_MATRIX_SHOW").is_some() {
                eprintln!("{:<18} {shape:<28?} exit {code}: {outcome:?}", opt.name);
            }
            match outcome {
                Some(Outcome::Written) if must_refuse => failures.push(format!(
                    "{} at {shape:?}: written (exit {code}), must be refused: {err}",
                    opt.name
                )),
                Some(Outcome::Written) => written += 1,
                Some(Outcome::Streamed) => streamed += 1,
                Some(Outcome::Refused) => refused += 1,
                Some(Outcome::Absent) => absent += 1,
                None => failures.push(format!(
                    "{} at {shape:?} ({}): exit {code}, not written, streamed or refused naming the path: {}",
                    opt.name,
                    path.display(),
                    err.trim()
                )),
            }
            for (p, b) in victims.iter().zip(&before) {
                if &snapshot(p) != b {
                    failures.push(format!("{} at {shape:?} changed {}", opt.name, p.display()));
                }
            }
        }
    }
    assert_eq!(
        std::fs::symlink_metadata("/dev/stdout")
            .map(|m| m.ino())
            .ok(),
        dev_stdout
    );
    let cases = opts.len() * SHAPES.len();
    eprintln!(
        "path matrix: {cases} cases ({} options x {} shapes): {written} written (or read), {streamed} streamed, {refused} refused, {absent} absent (a read of nothing); {} failures; {:.1} s",
        opts.len(),
        SHAPES.len(),
        failures.len(),
        t0.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(written + streamed + refused + absent, cases);
}
