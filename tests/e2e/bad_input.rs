//! Hostile input, table-driven (issue 17): every subcommand, every option that takes a
//! value, and the inputs a reliability harness throws (empty values, negative numbers,
//! words where numbers go, FIFOs, /dev/zero, repeated keys). Each case must end with its
//! documented exit code, a message that names the option (or the file) and no panic, and
//! none may hang: every run has a deadline.

use crate::common;

use clap::CommandFactory;
use std::path::Path;
use std::process::Command;

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
    // Through the cross runner (qemu-user) when CARGO_TARGET_<triple>_RUNNER is set.
    let mut cmd = <Command as assert_cmd::cargo::CommandCargoExt>::cargo_bin("flashscope").unwrap();
    cmd.args(&c.args)
        .envs(common::HISTORY_OFF)
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
    "name", "plot", "output", "journal", "state", "target", "media", "part", "history", "o", "csv",
    "device",
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
                if bad == "-5" {
                    // The same after a space: a value, not an unknown flag.
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
