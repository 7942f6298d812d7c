//! Hostile input, table-driven (issue 17): every subcommand, every option that takes a
//! value, and the inputs a reliability harness throws (empty values, negative numbers,
//! words where numbers go, FIFOs, /dev/zero, repeated keys). Each case must end with its
//! documented exit code, a message that names the option (or the file) and no panic, and
//! none may hang: every run has a deadline.

use crate::common;

use clap::CommandFactory;
use std::path::Path;

/// What a case must give: exit code and the words stderr must contain.
struct Case {
    args: Vec<String>,
    code: i32,
    says: Vec<String>,
}

fn case(args: &[&str], code: i32, says: &[&str]) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        code,
        says: says.iter().map(|s| s.to_string()).collect(),
    }
}

/// Run one case with a deadline; return a description of what went wrong, if anything.
fn check(c: &Case, state: &Path) -> Option<String> {
    let mut cmd = common::bin();
    cmd.args(&c.args)
        .env("XDG_STATE_HOME", state)
        // In the temporary directory: an option that takes a file name (--csv) and
        // accepts a bad value as one writes it there, not into the checkout.
        .current_dir(state);
    let Some((code, err)) = common::run_with_deadline(&mut cmd, 20) else {
        return Some(format!("{:?}: still running after 20 s (a hang)", c.args));
    };
    let problem = if err.contains("panicked") || err.contains("RUST_BACKTRACE") {
        Some("panicked".to_string())
    } else if code != c.code {
        Some(format!("exit {code}, expected {}", c.code))
    } else {
        c.says
            .iter()
            .find(|w| !err.contains(w.as_str()))
            .map(|w| format!("the message does not say '{w}'"))
    };
    problem.map(|p| format!("{:?}: {p}\n    stderr: {}", c.args, err.trim()))
}

fn run_all(cases: &[Case]) {
    let state = tempfile::tempdir().unwrap();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| check(c, state.path()))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!("{} hostile-input cases passed", cases.len());
}

/// Options whose value is free text (a name, a path, a list the command checks itself):
/// an empty or odd value there is not necessarily wrong.
const FREE_TEXT: &[&str] = &[
    "name",
    "plot",
    "output",
    "journal",
    "state",
    "target",
    "media",
    "part",
    "history",
    "o",
    "csv",
    "plot-prefix", // a file name prefix: any text is one
    "device",      // an input file: a missing one is exit 1 in every command (missing_input)
    "ext-csd",
];

/// Options where an empty value has a meaning (`--rate ''`: no cap).
const EMPTY_OK: &[&str] = &["rate"];

/// The arguments of a complete `model` invocation (after the subcommand).
const MODEL: &[&str] = common::NOR.split_at(1).1;

/// A valid invocation of each (sub)command, less `option`, to which one bad value of
/// `option` is added.
fn baseline(path: &[&str], dir: &str, log: &str, option: &str) -> Vec<String> {
    let model: Vec<&str> = MODEL
        .chunks(2)
        .filter(|kv| kv[0] != option)
        .flatten()
        .copied()
        .collect();
    let v: Vec<&str> = match path {
        ["analyze"] => vec![log],
        ["fs", _] => vec![dir],
        ["sim", "serve"] => vec!["sim:sd-16g", dir],
        ["sim", _] => vec![],
        ["history", "show"] => vec!["1"],
        ["history", "import"] => vec![log],
        ["history", _] => vec![],
        ["restore"] => vec!["/nonexistent/journal"],
        ["model"] => model,
        _ => vec!["sim:sd-16g"],
    };
    path.iter().chain(v.iter()).map(|s| s.to_string()).collect()
}

/// Every option of every subcommand that takes a value, with values that no option
/// accepts: clap's or flashscope's own check must refuse them with exit 2 and name the
/// option.
fn generated_cases(dir: &str, log: &str) -> Vec<Case> {
    let mut out = Vec::new();
    let root = flashscope::cli::Cli::command();
    let mut stack: Vec<(Vec<String>, &clap::Command)> = root
        .get_subcommands()
        .map(|s| (vec![s.get_name().to_string()], s))
        .collect();
    while let Some((path, cmd)) = stack.pop() {
        if cmd.has_subcommands() {
            for s in cmd.get_subcommands() {
                let mut p = path.clone();
                p.push(s.get_name().to_string());
                stack.push((p, s));
            }
            continue;
        }
        let p: Vec<&str> = path.iter().map(String::as_str).collect();
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let takes_value = arg.get_action().takes_values();
            if !takes_value || FREE_TEXT.contains(&long) || long == "help" {
                continue;
            }
            let option = format!("--{long}");
            for bad in ["", "-5", "abc", "1x1"] {
                // A few options take lists or signed figures: "-5" may be a valid value.
                if bad == "-5" && ["cpus", "expect"].contains(&long) {
                    continue;
                }
                if bad.is_empty() && EMPTY_OK.contains(&long) {
                    continue;
                }
                let mut args = baseline(&p, dir, log, &option);
                args.push(format!("{option}={bad}"));
                out.push(Case {
                    args,
                    code: 2,
                    says: vec![option.clone()],
                });
                // The same after a space: a value, not an unknown flag (except where an
                // optional value only ever follows '=', e.g. `fs matrix --sync=none`).
                if bad == "-5" && !arg.is_require_equals_set() {
                    let mut args = baseline(&p, dir, log, &option);
                    args.extend([option.clone(), bad.to_string()]);
                    out.push(Case {
                        args,
                        code: 2,
                        says: vec![option.clone()],
                    });
                }
            }
        }
    }
    out
}

#[test]
fn every_option_refuses_values_no_option_accepts_and_names_itself() {
    let dir = tempfile::tempdir().unwrap();
    let log = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/flashbench/seed-align-01.txt"
    );
    let cases = generated_cases(dir.path().to_str().unwrap(), log);
    assert!(cases.len() > 200, "only {} generated cases", cases.len());
    run_all(&cases);
}

#[test]
fn the_harness_list_gets_the_documented_exit_codes_and_names_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let odd = d.join("odd.img");
    std::fs::write(&odd, vec![0u8; 1_000_001]).unwrap();
    let card = d.join("card.img");
    std::fs::write(&card, vec![0u8; 64 << 20]).unwrap();
    let card = card.to_str().unwrap();
    let tiny = d.join("tiny.img");
    std::fs::write(&tiny, vec![0u8; 1000]).unwrap();
    let empty = d.join("empty.img");
    std::fs::write(&empty, b"").unwrap();
    let (odd, tiny, empty) = (
        odd.to_str().unwrap(),
        tiny.to_str().unwrap(),
        empty.to_str().unwrap(),
    );
    // Every figure but --bus-lines, which the cases below give.
    let model: Vec<&str> = std::iter::once("model")
        .chain(
            MODEL
                .chunks(2)
                .filter(|kv| kv[0] != "--bus-lines")
                .flatten()
                .copied(),
        )
        .collect();
    fn with<'a>(model: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        model.iter().chain(extra).copied().collect()
    }
    let cases = vec![
        // Simulator specs.
        case(
            &["info", "sim:custom,fake_mode=wrap"],
            2,
            &["fake_mode", "real="],
        ),
        case(
            &["info", "sim:custom,size=1G,size=2G"],
            2,
            &["size", "twice"],
        ),
        case(
            &["info", "sim:sd-16g,erase=4M,erase=8M"],
            2,
            &["erase", "twice"],
        ),
        case(&["info", "sim:nonesuch"], 2, &["nonesuch"]),
        case(&["info", "sim:custom,size="], 2, &["size"]),
        case(&["info", "sim:custom,size=0"], 2, &["size"]),
        case(&["info", "sim:custom,bogus=1"], 2, &["bogus"]),
        case(&["info", "sim:custom,erase=5M"], 2, &["erase"]),
        case(&["info", "sim:custom,noise"], 2, &["noise"]),
        case(&["info", ""], 2, &["empty target"]),
        // The target is parsed once, as clap parses every value: the refusal names it.
        case(
            &["bench", "sim:nonesuch"],
            2,
            &["'sim:nonesuch' for '<TARGET>'"],
        ),
        case(
            &["restore", "j.fsjournal", "--target", "sim:x"],
            2,
            &["'sim:x' for '--target <SPEC>'", "unknown simulator preset"],
        ),
        case(
            &["sim", "serve", "sim:custom,size=0", "mnt"],
            2,
            &["for '<SPEC>'", "size"],
        ),
        // Counts and sizes with no meaning.
        case(
            &["align", "sim:sd-16g", "--positions", "99999999999"],
            2,
            &["--positions"],
        ),
        case(
            &["align", "sim:sd-16g", "--positions", "0"],
            2,
            &["--positions"],
        ),
        case(&["align", "sim:sd-16g", "--count", "0"], 2, &["--count"]),
        case(
            &["align", "sim:sd-16g", "--blocksize", "-5"],
            2,
            &["--blocksize", "-5"],
        ),
        case(
            &["align", "sim:sd-16g", "-b", "4k", "-b", ""],
            2,
            &["--blocksize"],
        ),
        case(
            &["program", "sim:sd-16g", "--blocksize", "0", "--write"],
            2,
            &["--blocksize 0"],
        ),
        case(
            &["program", "sim:sd-16g", "--blocksize", "3", "--write"],
            2,
            &["--blocksize 3"],
        ),
        case(
            &["program", "sim:sd-16g", "--blocksize", "4M", "--write"],
            2,
            &["--max-blocksize"],
        ),
        case(
            &with(&model, &["--bus-lines", "3"]),
            2,
            &["--bus-lines '3'"],
        ),
        case(&with(&model, &["--bus-lines", "0"]), 2, &["--bus-lines"]),
        case(&with(&model, &["--bus-lines", "-4"]), 2, &["--bus-lines"]),
        case(&["model", "--kind", "spi-nor"], 2, &["--erase-time"]),
        // Budgets.
        case(
            &["slc", "sim:sd-16g", "--write-budget", "17G", "--write"],
            2,
            &["--write-budget 17G", "16G"],
        ),
        case(
            &["probe", "sim:sd-16g", "--write-budget", "0", "--write"],
            2,
            &["--write-budget"],
        ),
        case(
            &["fat", "sim:sd-16g", "--time-budget", "", "--write"],
            2,
            &["--time-budget"],
        ),
        case(
            &["slc", "sim:sd-16g", "--recover=-1s", "--write"],
            2,
            &["--recover"],
        ),
        // Journals: a sim: card is never journaled; a journal is a new regular file.
        case(
            &["program", "sim:sd-16g", "--write", "--journal", "/tmp/x.j"],
            2,
            &["--journal", "simulated"],
        ),
        case(
            &[
                "fat",
                card,
                "--write",
                "--erase-size",
                "4M",
                "--journal",
                "/dev/null",
            ],
            2,
            &["--journal /dev/null", "not a regular file"],
        ),
        case(
            &[
                "open-au",
                "sim:sd-16g",
                "--write",
                "--offset",
                "16G",
                "--erase-size",
                "4M",
            ],
            2,
            &["--offset 16G", "smaller --offset"],
        ),
        case(
            &[
                "open-au",
                "sim:sd-16g",
                "--write",
                "--offset",
                "5M",
                "--erase-size",
                "4M",
            ],
            2,
            &["--offset"],
        ),
        // Targets whose size the user never gave: the message names the target, not an
        // option the user did not type.
        case(&["verify", odd, "--write"], 2, &[odd, "--range 0+999936"]),
        case(&["io", tiny], 2, &[tiny, "--blocksize"]),
        case(&["bench", odd], 2, &[odd, "1 MiB"]),
        case(&["io", empty], 2, &["empty"]),
        case(&["verify", empty, "--write"], 2, &["empty"]),
        case(&["io", tiny, "--size", "1000"], 2, &["--size"]),
        case(&["io", odd, "--offset", "2M"], 2, &["--offset"]),
        case(
            &["slc", "sim:sd-16g", "--recover", "-1", "--write"],
            2,
            &["--recover"],
        ),
        // Missing things are runtime errors (1); kinds that cannot be used are usage (2).
        case(&["info", "/nonexistent/card.img"], 1, &["does not exist"]),
        case(&["align", "/nonexistent/card.img"], 1, &["does not exist"]),
        case(&["info", "/"], 2, &["directory"]),
        case(
            &["info", "/dev/null"],
            2,
            &["neither a block device nor a regular file"],
        ),
        // Writing without permission.
        case(&["probe", "sim:sd-16g"], 2, &["--write"]),
        case(&["slc", odd], 2, &["--write"]),
        case(&["verify", odd], 2, &["--write"]),
        case(
            &[
                "fat",
                card,
                "--erase-size",
                "1M",
                "--destructive",
                "--journal",
                "/tmp/j",
            ],
            2,
            &["--journal"],
        ),
        // Unknown words.
        case(&["frobnicate"], 2, &["frobnicate"]),
        case(&["info", "sim:sd-16g", "--bogus"], 2, &["--bogus"]),
        case(&["sim", "list", "extra"], 2, &["extra"]),
        // compare needs two sides, and bench's repetitions a count.
        case(&["compare"], 2, &["at least two sides"]),
        case(&["bench", "sim:sd-16g", "--runs", "0"], 2, &["--runs"]),
    ];
    run_all(&cases);
}

#[test]
fn fifos_devices_and_huge_files_are_refused_at_once_and_pastes_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other preconditions.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let fifo = fifo.to_str().unwrap();
    let huge = dir.path().join("huge.txt");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    let huge = huge.to_str().unwrap();
    let pastes = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/flashbench/pastes/");
    let paste = |f: &str| format!("{pastes}{f}");
    let (bom, prompt, root_prompt, two) = (
        paste("bom-seed-align-03.txt"),
        paste("prompt-tilde-seed-align-01.txt"),
        paste("prompt-root-readme-align-01.txt"),
        paste("two-commands-seed-align-05-06.txt"),
    );
    let cases = vec![
        case(&["analyze", fifo], 2, &[fifo, "FIFO"]),
        case(&["analyze", "/dev/zero"], 2, &["/dev/zero", "regular file"]),
        case(&["analyze", huge], 2, &[huge]),
        case(&["restore", fifo], 2, &[fifo]),
        case(&["restore", "/dev/zero"], 2, &["/dev/zero"]),
        case(&["restore", huge], 2, &[huge]),
        case(&["compare", fifo, huge], 2, &[fifo, "FIFO"]),
        case(&["compare", huge, "/dev/zero"], 2, &[huge]),
        case(&["compare", &bom, &prompt], 2, &[bom.as_str(), "not JSON"]),
        case(
            &["verify", "sim:sd-16g,size=64M", "--write", "--state", fifo],
            2,
            &["--state", fifo],
        ),
        case(
            &[
                "verify",
                "sim:sd-16g,size=64M",
                "--write",
                "--state",
                "/dev/zero",
            ],
            2,
            &["--state"],
        ),
        case(&["analyze", &bom], 0, &[]),
        case(&["analyze", &prompt], 0, &[]),
        case(&["analyze", &root_prompt], 0, &[]),
        case(&["analyze", &two], 0, &[]),
    ];
    run_all(&cases);
}

// ------------------------------------------------- issue 30: state, documents, devices

/// A string that fakes a line, sets the terminal's title, clears it, rings and returns
/// the cursor, and is a formula in a spreadsheet.
const INJECT: &str =
    "=HYPERLINK(\"http://x\")\nFAKE-LINE wear OK, 0% used\x1b]0;pwned\x07\x1b[2J\r";

/// One issue-30 case: a command (with environment), the exit code it must give.
struct Shown {
    name: &'static str,
    args: Vec<String>,
    env: Vec<(String, String)>,
    code: i32,
}

/// Run a case with a deadline; stdout and stderr, or what went wrong.
fn shown_output(c: &Shown, dir: &Path) -> Result<(String, String), String> {
    let (code, o, e) = shown_output_any(c, dir)?;
    if code != c.code {
        return Err(format!("{}: exit {code}, expected {}: {e}", c.name, c.code));
    }
    Ok((o, e))
}

/// Run a case within 30 s: its exit code, stdout and stderr; an error for a hang, a panic
/// or a crash.
fn shown_output_any(c: &Shown, dir: &Path) -> Result<(i32, String, String), String> {
    let out = dir.join(format!("{}.out", c.name));
    let err = dir.join(format!("{}.err", c.name));
    let mut cmd = common::flashscope_abs();
    cmd.args(&c.args)
        .envs(common::HISTORY_OFF)
        .env("XDG_STATE_HOME", dir)
        .envs(c.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    let mut child = cmd.spawn().unwrap();
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{}: still running after 30 s (a hang)", c.name));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    let (o, e) = (read(&out), read(&err));
    let code = status.code().unwrap_or(-1);
    if e.contains("panicked") || e.contains("RUST_BACKTRACE") || !(0..=3).contains(&code) {
        return Err(format!(
            "{}: panicked or crashed (exit {code}): {e}",
            c.name
        ));
    }
    Ok((code, o, e))
}

/// Issue 30 points 6 and 8 (and 10's message): trusted-looking state that is damaged is
/// refused with exit 2 and no panic or hang; every string a device, a file or a document
/// gave is printed with its control characters shown — no escape sequence reaches the
/// terminal and no line break in it starts a line of its own — and a CSV cell is never a
/// formula. Prints its case count.
#[test]
fn hostile_state_documents_devices_and_journals_are_refused_or_shown_never_obeyed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |x: &Path| x.to_str().unwrap().to_string();
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut cases = Vec::new();
    let mut must_refuse = Vec::new();

    // Point 6: a history database with a negative schema version, one whose runs is a
    // recursive view.
    let neg = d.join("neg.sqlite");
    rusqlite::Connection::open(&neg)
        .unwrap()
        .execute_batch("PRAGMA user_version = -1")
        .unwrap();
    let view = d.join("view.sqlite");
    rusqlite::Connection::open(&view)
        .unwrap()
        .execute_batch(
            "CREATE TABLE metrics (run_id INTEGER, metric TEXT, value REAL);
             CREATE VIEW runs AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x AS id FROM n;
             PRAGMA user_version = 2;",
        )
        .unwrap();
    for (name, db) in [("history-neg", &neg), ("history-view", &view)] {
        for sub in ["list", "table"] {
            cases.push(Shown {
                name: if sub == "list" { name } else { "history-table" },
                args: v(&["history", sub, "--history", &p(db)]),
                env: vec![],
                code: 2,
            });
        }
        // A measuring command that records into it by default: the result is printed and
        // the database refused with a warning (it aborted after the result, exit 134).
        let home = d.join(format!("home-{name}"));
        std::fs::create_dir_all(home.join("flashscope")).unwrap();
        for x in [home.clone(), home.join("flashscope")] {
            std::fs::set_permissions(&x, std::os::unix::fs::PermissionsExt::from_mode(0o700))
                .unwrap();
        }
        let db_path = home.join("flashscope/history.sqlite");
        std::fs::copy(db, &db_path).unwrap();
        std::fs::set_permissions(
            &db_path,
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
        cases.push(Shown {
            name: "record-into",
            args: v(&["bench", "sim:sd-16g", "--runtime", "0.2"]),
            env: vec![
                ("FLASHSCOPE_HISTORY".into(), "on".into()),
                ("XDG_DATA_HOME".into(), p(&home)),
            ],
            code: 0,
        });
        must_refuse.push(("record-into", "history is off for this run"));
    }
    // A verify state whose chunk is 0 (spun forever) or 2^62 (panicked).
    let img = d.join("v.img");
    std::fs::write(&img, common::random_bytes(4 << 20, 3)).unwrap();
    let state = d.join("state.json");
    let (code, err) = common::run_with_deadline(
        common::flashscope_abs()
            .args([
                "verify",
                &p(&img),
                "--destructive",
                "--pass",
                "write",
                "--state",
                &p(&state),
            ])
            .envs(common::HISTORY_OFF)
            .env("XDG_STATE_HOME", d),
        60,
    )
    .expect("the write pass ends");
    assert_eq!(code, 0, "{err}");
    let good: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    for (name, chunk) in [("verify-chunk-0", 0u64), ("verify-chunk-2^62", 1 << 62)] {
        let mut s = good.clone();
        s["chunk"] = chunk.into();
        let f = d.join(format!("{name}.json"));
        std::fs::write(&f, serde_json::to_vec(&s).unwrap()).unwrap();
        std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        cases.push(Shown {
            name,
            args: v(&[
                "verify",
                &p(&img),
                "--destructive",
                "--resume",
                "--state",
                &p(&f),
            ]),
            env: vec![],
            code: 2,
        });
        must_refuse.push((name, "its chunk"));
    }
    // Point 10: the --state message reads as a sentence.
    cases.push(Shown {
        name: "state-dev-zero",
        args: v(&[
            "verify",
            &p(&img),
            "--destructive",
            "--resume",
            "--state",
            "/dev/zero",
        ]),
        env: vec![],
        code: 2,
    });

    // Point 8: documents whose target names carry the payload.
    for (name, spec) in [("a.json", "sim:sd-16g"), ("b.json", "sim:sd-16g,seed=2")] {
        let out = common::flashscope()
            .args(["bench", spec, "--runtime", "0.3", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["target"]["spec"] = INJECT.into();
        doc["target"]["model"] = INJECT.into();
        std::fs::write(d.join(name), serde_json::to_vec(&doc).unwrap()).unwrap();
    }
    let (a, b) = (p(&d.join("a.json")), p(&d.join("b.json")));
    let hist = p(&d.join("h.sqlite"));
    cases.push(Shown {
        name: "compare",
        args: v(&["compare", &a, &b]),
        env: vec![],
        code: 0,
    });
    cases.push(Shown {
        name: "history-import",
        args: v(&["history", "import", &a, &b, "--history", &hist]),
        env: vec![],
        code: 0,
    });
    for args in [
        v(&["history", "list", "--history", &hist]),
        v(&["history", "show", "1", "--history", &hist]),
        v(&["history", "table", "--history", &hist]),
        v(&["history", "table", "--by", "device", "--history", &hist]),
        v(&["history", "export", "--format", "csv", "--history", &hist]),
    ] {
        cases.push(Shown {
            name: "history-read",
            args,
            env: vec![],
            code: 0,
        });
    }
    // analyze: the offending line quoted in an error, and a log that is none.
    let log = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/flashbench/seed-align-01.txt"
    ))
    .unwrap();
    let mut lines: Vec<&str> = log.lines().collect();
    let bad_line = "align 8192 pre 1.0ms on \x1b]0;pwned\x07\x1b[2J\r post 0.9ms diff 3us";
    lines.insert(3, bad_line);
    std::fs::write(d.join("bad.log"), lines.join("\n") + "\n").unwrap();
    std::fs::write(d.join("none.log"), format!("{INJECT}\n")).unwrap();
    for name in ["bad.log", "none.log"] {
        cases.push(Shown {
            name: "analyze",
            args: v(&["analyze", &p(&d.join(name))]),
            env: vec![],
            code: 2,
        });
    }
    // health: a sysfs tree whose model and vendor carry the payload; a smartctl whose
    // messages and model do.
    let health = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/health");
    let tree = d.join("tree/class/block/sda");
    std::fs::create_dir_all(tree.join("device")).unwrap();
    std::fs::create_dir_all(tree.join("queue")).unwrap();
    std::fs::copy(
        format!("{health}/sysfs/sata-disk/class/block/sda/queue/rotational"),
        tree.join("queue/rotational"),
    )
    .unwrap();
    std::fs::write(tree.join("device/model"), format!("{INJECT}\n")).unwrap();
    std::fs::write(tree.join("device/vendor"), format!("{INJECT}\n")).unwrap();
    let mut smart: serde_json::Value = serde_json::from_slice(
        &std::fs::read(format!("{health}/smartctl/ata-samsung-860-evo.json")).unwrap(),
    )
    .unwrap();
    smart["smartctl"]["messages"] = serde_json::json!([{ "string": INJECT, "severity": "error" }]);
    smart["model_name"] = INJECT.into();
    let stub = d.join("stub");
    std::fs::create_dir(&stub).unwrap();
    std::fs::write(stub.join("smart.json"), serde_json::to_vec(&smart).unwrap()).unwrap();
    std::fs::write(
        stub.join("smartctl"),
        format!(
            "#!/bin/sh\n/bin/cat '{}'\nexit 0\n",
            stub.join("smart.json").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        stub.join("smartctl"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    cases.push(Shown {
        name: "health",
        args: v(&["health", "/dev/sda", "--sysfs-root", &p(&d.join("tree"))]),
        env: vec![("PATH".into(), p(&stub))],
        code: 0,
    });
    // restore --list of a journal someone wrote with the payload in its identity.
    let card = d.join("card.img");
    std::fs::write(&card, common::random_bytes(1 << 20, 5)).unwrap();
    let journal = d.join("evil.fsjournal");
    {
        use flashscope::backend::{AlignedBuf, Backend};
        let spec = card.to_str().unwrap();
        let opened = flashscope::device::open(
            &common::target_spec(spec),
            &flashscope::device::OpenRequest::read_write(),
        )
        .unwrap();
        let mut id = flashscope::journal::Identity::of(&common::target_spec(spec), &opened, "test");
        id.model = Some(INJECT.into());
        id.serial = Some(INJECT.into());
        let mut pr = flashscope::journal::Preserve::new(opened.backend, &journal, &id).unwrap();
        pr.write_at(&AlignedBuf::new(64 << 10), 0).unwrap();
    }
    cases.push(Shown {
        name: "restore-list",
        args: v(&["restore", &p(&journal), "--list"]),
        env: vec![],
        code: 0,
    });

    let mut failures = Vec::new();
    for c in &cases {
        match shown_output(c, d) {
            Err(e) => failures.push(e),
            Ok((out, err)) => {
                let both = format!("{out}{err}");
                if both.contains(['\x1b', '\x07', '\r']) {
                    failures.push(format!(
                        "{}: a control character reached the terminal: {both:?}",
                        c.name
                    ));
                }
                if both
                    .lines()
                    .any(|l| l.trim_start().starts_with("FAKE-LINE"))
                {
                    failures.push(format!(
                        "{}: a line break from the input started a line: {both}",
                        c.name
                    ));
                }
                if c.args.contains(&"csv".to_string())
                    && (both.contains(",=")
                        || both.contains("\"=")
                        || !both.contains("'=HYPERLINK"))
                {
                    failures.push(format!("{}: a formula cell: {both}", c.name));
                }
                if c.name == "state-dev-zero"
                    && (both.contains("a the") || !both.contains("--state"))
                {
                    failures.push(format!("{}: {err}", c.name));
                }
                if let Some((_, says)) = must_refuse.iter().find(|(n, _)| *n == c.name) {
                    if !err.contains(says) {
                        failures.push(format!("{}: does not say '{says}': {err}", c.name));
                    }
                }
                if c.name.starts_with("history-") && c.code == 2 && !err.contains("history") {
                    failures.push(format!("{}: does not name the history: {err}", c.name));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} issue-30 cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!(
        "{} issue-30 hostile state/document/device cases passed",
        cases.len()
    );
}

/// The JSON pointers of the string leaves of `v`, one element per array (the samples of a
/// document are one shape repeated).
fn string_leaves(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(_) => out.push(at),
        serde_json::Value::Array(a) => {
            if let Some(first) = a.first() {
                string_leaves(first, format!("{at}/0"), out);
            }
        }
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let k = k.replace('~', "~0").replace('/', "~1");
                string_leaves(x, format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
}

/// Issue 30 point 8, every field: each string of a saved bench, probe and align document
/// in turn carries the payload (line break, escape sequences, bell, carriage return, a
/// formula), and `compare` and `history show` print it shown, never obeyed, or refuse the
/// document (exit 2) with an error that shows it too. Prints its case count.
#[test]
fn every_string_of_a_saved_document_is_shown_never_obeyed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |x: &Path| x.to_str().unwrap().to_string();
    let doc_of = |args: &[&str], code: i32| -> serde_json::Value {
        let out = common::flashscope().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let docs = [
        (
            "bench",
            doc_of(&["bench", "sim:sd-16g", "--runtime", "0.3", "--json"], 0),
        ),
        (
            "probe",
            doc_of(&["probe", "sim:fake-64g", "--destructive", "--json"], 3),
        ),
        ("align", doc_of(&["align", "sim:sd-16g", "--json"], 0)),
    ];
    let other = d.join("other.json");
    std::fs::write(&other, serde_json::to_vec(&docs[0].1).unwrap()).unwrap();
    let (mut cases, mut refused, mut failures) = (0, 0, Vec::new());
    for (name, doc) in &docs {
        let mut leaves = Vec::new();
        string_leaves(doc, String::new(), &mut leaves);
        assert!(leaves.len() > 10, "{name}: only {} strings", leaves.len());
        for (i, at) in leaves.iter().enumerate() {
            let mut bad = doc.clone();
            let s = bad.pointer_mut(at).unwrap();
            *s = format!("{}{INJECT}", s.as_str().unwrap()).into();
            let f = d.join(format!("{name}-{i}.json"));
            std::fs::write(&f, serde_json::to_vec(&bad).unwrap()).unwrap();
            let hist = d.join(format!("{name}-{i}.sqlite"));
            let runs = [
                vec!["compare".to_string(), p(&f), p(&other)],
                vec![
                    "history".into(),
                    "import".into(),
                    p(&f),
                    "--history".into(),
                    p(&hist),
                ],
                vec![
                    "history".into(),
                    "show".into(),
                    "1".into(),
                    "--history".into(),
                    p(&hist),
                ],
            ];
            for args in runs {
                cases += 1;
                let shown = Shown {
                    name: "document-field",
                    args: args.clone(),
                    env: vec![],
                    code: -1,
                };
                let (code, out, err) = match shown_output_any(&shown, d) {
                    Ok(x) => x,
                    Err(e) => {
                        failures.push(format!("{name} {at}: {e}"));
                        continue;
                    }
                };
                if code == 2 {
                    refused += 1;
                } else if code != 0 && !(code == 3 && args[0] == "compare") {
                    failures.push(format!("{name} {at}: {args:?} exit {code}: {err}"));
                }
                let both = format!("{out}{err}");
                if both.contains(['\x1b', '\x07', '\r']) {
                    failures.push(format!(
                        "{name} {at}: {args:?}: a control character: {both:?}"
                    ));
                }
                if both
                    .lines()
                    .any(|l| l.trim_start().starts_with("FAKE-LINE"))
                {
                    failures.push(format!(
                        "{name} {at}: {args:?}: a line break started a line"
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} document-field cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{cases} document-field cases passed ({refused} refused the document)");
}

/// Issue 44.6: every line on stderr shows a control character as text, whatever gave it:
/// the "history is off" warning quoting a database's path and SQLite's error, clap's
/// message quoting a typed value (clap leaves its escape sequences out), an error quoting a
/// target spec. No ESC, BEL or CR reaches the terminal (progress bars, drawn only on a
/// terminal, are not run here).
#[test]
fn every_stderr_line_shows_control_characters_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |x: &Path| x.to_str().unwrap().to_string();
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let payload = "\x1b]0;pwned\x07\x1b[2J\rX";
    // A history whose directory's name carries the payload and whose file is no database.
    let hdir = d.join(payload);
    std::fs::create_dir(&hdir).unwrap();
    std::fs::set_permissions(&hdir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let db = hdir.join("h.db");
    std::fs::write(&db, vec![b'x'; 8192]).unwrap();
    std::fs::set_permissions(&db, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    // A regular file where the history's directory should be, its name the payload.
    std::fs::write(d.join(format!("file{payload}")), "").unwrap();
    let cases = [
        Shown {
            name: "history-off",
            args: v(&["health", "sim:emmc-8g", "--history", &p(&db)]),
            env: vec![],
            code: 0,
        },
        Shown {
            name: "history-missing-dir",
            args: v(&[
                "health",
                "sim:emmc-8g",
                "--history",
                &p(&d.join(format!("file{payload}/h.db"))),
            ]),
            env: vec![],
            code: 0,
        },
        Shown {
            name: "clap-value",
            args: v(&["align", "sim:sd-16g", "--blocksize", payload]),
            env: vec![],
            code: 2,
        },
        Shown {
            name: "clap-unknown",
            args: v(&["align", "sim:sd-16g", &format!("--{payload}")]),
            env: vec![],
            code: 2,
        },
        Shown {
            name: "spec",
            args: v(&["info", &format!("sim:sd-16g,seed={payload}")]),
            env: vec![],
            code: 2,
        },
    ];
    let mut failures = Vec::new();
    for c in &cases {
        match shown_output_any(c, d) {
            Err(e) => failures.push(e),
            Ok((code, _, err)) => {
                if code != c.code {
                    failures.push(format!("{}: exit {code}, not {}: {err}", c.name, c.code));
                }
                if err.contains(['\x1b', '\x07', '\r']) {
                    failures.push(format!(
                        "{}: a control character reached stderr: {err:?}",
                        c.name
                    ));
                }
                // Shown as text, or (clap) left out with its escape sequences; the rest of
                // the message is there.
                if !err.contains("\\u{1b}") && !err.contains("\\rX") {
                    failures.push(format!("{}: the payload is not shown: {err:?}", c.name));
                }
                if c.name.starts_with("history") && !err.contains("history is off for this run") {
                    failures.push(format!("{}: no warning: {err:?}", c.name));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 43 point 5: `align --positions 0` said "(default 8)" while the default (and
/// `--help`) is 4. The refusal interpolates the one definition, so it says what the help says.
#[test]
fn the_positions_refusal_names_the_default_the_help_states() {
    let help = common::flashscope()
        .args(["align", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let after = &help[help.find("--positions").expect("--positions in the help")..];
    let default = after
        .split("[default: ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .expect("a default in the help")
        .to_string();
    let out = common::flashscope()
        .args(["align", "sim:sd-16g", "--positions", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("(default {default})")), "{err}");
}

/// Issue 43 point 5: `analyze` refused a log of more than 10,000 runs (a 2 MiB log) while
/// its help promised files of up to 64 MiB. Every run is kept for the document, so the cap
/// stays (a 64 MiB log of tiny runs would cost a GiB); the help states it, with the number
/// the refusal names.
#[test]
fn analyze_help_states_the_run_cap_its_refusal_names() {
    use flashscope::analysis::flashbench::MAX_RUNS;
    let help = common::flashscope()
        .args(["analyze", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout).replace('\n', " ");
    assert!(
        help.contains(&format!("at most 64 MiB and {MAX_RUNS} runs")),
        "{help}"
    );
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("runs.txt");
    std::fs::write(&log, "4MiB 8.1M/s\n2MiB 7.9M/s\n".repeat(MAX_RUNS + 2)).unwrap();
    let out = common::flashscope()
        .args(["analyze", log.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("more than {MAX_RUNS} runs")), "{err}");
}

/// Issue 45 point 7: a missing input file has one exit code in every command that reads
/// one, the runtime error's 1 (docs/reference.md: "a missing, unreadable or vanished
/// target"), and the message names the path. `restore` said 2 and `report` 1.
#[test]
fn a_missing_input_file_exits_1_in_every_command_that_reads_one() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("missing");
    let m = missing.to_str().unwrap();
    let html = d.path().join("r.html");
    let db = d.path().join("h.db");
    let runs: Vec<Vec<&str>> = vec![
        vec!["restore", m],
        vec!["restore", m, "--list"],
        vec!["report", m, "-o", html.to_str().unwrap()],
        vec!["analyze", m],
        vec!["compare", m, m],
        vec!["history", "import", m, "--history", db.to_str().unwrap()],
        vec!["health", "--ext-csd", m],
        vec!["info", m],
        vec!["align", m],
        vec!["io", m],
    ];
    let mut wrong = Vec::new();
    for args in &runs {
        let out = crate::common::flashscope_in(d.path())
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(1) || !err.contains(m) {
            wrong.push(format!("{args:?}: exit {:?}: {err}", out.status.code()));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
