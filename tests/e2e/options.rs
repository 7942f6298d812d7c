//! One option name per idea across subcommands (issue 20 point 2), checked on clap's
//! command tree: the "Options" table of docs/reference.md is what these tests hold.

use clap::{CommandFactory, Parser};
use flashscope::cli::{Cli, Command};
use std::collections::{BTreeMap, BTreeSet};

/// Every argument of every (sub)command, with the command's path.
fn all_args() -> Vec<(String, clap::Arg)> {
    fn walk(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Arg)>) {
        for a in cmd.get_arguments() {
            out.push((path.clone(), a.clone()));
        }
        for s in cmd.get_subcommands() {
            walk(s, format!("{path} {}", s.get_name()), out);
        }
    }
    let mut out = Vec::new();
    walk(&Cli::command(), "flashscope".into(), &mut out);
    out
}

fn normal(name: &str) -> String {
    name.replace(['-', '_'], "")
}

#[test]
fn one_spelling_per_name() {
    // erasesize / erase-size: two canonical spellings of one name are the defect.
    let mut spellings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, a) in all_args() {
        if let Some(long) = a.get_long() {
            spellings
                .entry(normal(long))
                .or_default()
                .insert(format!("--{long} ({path})"));
        }
    }
    for (key, names) in &spellings {
        let distinct: BTreeSet<_> = names
            .iter()
            .map(|n| n.split(' ').next().unwrap().to_string())
            .collect();
        assert_eq!(
            distinct.len(),
            1,
            "one idea '{key}', several names: {names:?}"
        );
    }
}

#[test]
fn retired_spellings_are_hidden_aliases_only() {
    let retired = ["bs", "bsrange", "erasesize", "erase-block", "cpu"];
    let args = all_args();
    for (path, a) in &args {
        if let Some(long) = a.get_long() {
            assert!(
                !retired.contains(&long),
                "{path}: --{long} is a retired spelling"
            );
        }
        let shown = a.get_visible_aliases().unwrap_or_default();
        assert!(
            shown.is_empty(),
            "{path}: aliases {shown:?} shown in --help"
        );
    }
    for r in retired {
        assert!(
            args.iter()
                .any(|(_, a)| a.get_all_aliases().unwrap_or_default().contains(&r)),
            "--{r} is accepted nowhere any more: old scripts would break"
        );
    }
}

#[test]
fn short_options_mean_one_thing() {
    let mut blocksize = 0;
    for (path, a) in all_args() {
        match (a.get_long(), a.get_short()) {
            (Some("blocksize"), s) => {
                blocksize += 1;
                assert_eq!(s, Some('b'), "{path}: --blocksize without -b");
            }
            (Some("output"), s) => assert_eq!(s, Some('o'), "{path}: --output without -o"),
            (long, Some('b')) => panic!("{path}: -b is --{long:?}, not --blocksize"),
            (long, Some('o')) => panic!("{path}: -o is --{long:?}, not --output"),
            _ => {}
        }
    }
    assert!(blocksize >= 8, "only {blocksize} --blocksize options found");
}

fn io(args: &[&str]) -> Box<flashscope::cli::io::Args> {
    let mut argv = vec!["flashscope", "io", "sim:sd-16g"];
    argv.extend_from_slice(args);
    match Cli::try_parse_from(argv).unwrap().command {
        Command::Io(a) => a,
        c => panic!("{c:?}"),
    }
}

#[test]
fn direct_is_a_flag_that_takes_fios_values() {
    assert!(io(&[]).direct, "io is O_DIRECT by default");
    assert!(io(&["--direct"]).direct);
    assert!(io(&["--direct=1"]).direct);
    assert!(!io(&["--direct=0"]).direct);
    assert!(!io(&["--direct", "0"]).direct, "io's old shape still works");
    assert!(io(&["--direct", "--rw", "read"]).direct);
    // A bare --direct never eats the next word.
    assert!(Cli::try_parse_from(["flashscope", "fs", "matrix", "--direct", "/mnt"]).is_ok());
    let e = Cli::try_parse_from(["flashscope", "io", "x", "--direct=maybe"]).unwrap_err();
    assert!(e.to_string().contains("--direct"), "{e}");
}

#[test]
fn old_spellings_still_parse() {
    let bs = io(&["--bs", "8k"]).bs.value.unwrap();
    assert_eq!((bs.value, bs.text.as_str()), (8 << 10, "8k"));
    assert_eq!(io(&["-b", "16k"]).bs.value.unwrap().value, 16 << 10);
    assert_eq!(
        io(&["--bsrange", "4k-8k"]).bsrange.map(|r| r.value),
        Some((4 << 10, 8 << 10))
    );
    let cli = Cli::try_parse_from(["flashscope", "analyze", "log.txt", "--erasesize", "4M"]);
    match cli.unwrap().command {
        Command::Analyze(a) => {
            let e = a.erasesize.value.unwrap();
            assert_eq!((e.value, e.text.as_str()), (4 << 20, "4M"));
        }
        c => panic!("{c:?}"),
    }
}

/// What a long option is, wherever it appears: its value type, value name, short name and
/// whether it takes a value (issue 46 point 1: one definition per option name).
fn shape(a: &clap::Arg) -> String {
    format!(
        "{:?} {:?} {:?} takes_values={}",
        a.get_value_parser().type_id(),
        a.get_value_names().unwrap_or_default(),
        a.get_short(),
        a.get_action().takes_values()
    )
}

/// Option names that still have more than one definition: each must shrink away, never
/// grow (a new name here fails the test, and so does one that became consistent).
const STILL_DIVERGENT: &[&str] = &[];

#[test]
fn one_option_one_definition() {
    let mut shapes: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (path, a) in all_args() {
        let Some(long) = a.get_long() else { continue };
        if matches!(long, "help" | "version") {
            continue;
        }
        shapes
            .entry(long.to_string())
            .or_default()
            .entry(shape(&a))
            .or_default()
            .push(path);
    }
    let divergent: BTreeMap<_, _> = shapes.into_iter().filter(|(_, s)| s.len() > 1).collect();
    let names: Vec<&str> = divergent.keys().map(String::as_str).collect();
    assert_eq!(
        names, STILL_DIVERGENT,
        "long options defined more than one way (value type, value name, short, arity):\n{divergent:#?}"
    );
    // The three the issue named are one definition each.
    for long in ["time-budget", "plot", "blocksize"] {
        assert!(!names.contains(&long), "--{long} has several definitions");
    }
}

/// A default a help text states ("[default: X]", "(default X)") is the option's default
/// as clap applies it, wherever clap has one; clap also prints it from there.
#[test]
fn stated_defaults_are_the_defaults() {
    let stated = |help: &str| -> Vec<String> {
        let mut out = Vec::new();
        for pat in ["[default: ", "(default: ", "(default "] {
            let mut rest = help;
            while let Some(i) = rest.find(pat) {
                rest = &rest[i + pat.len()..];
                let end = rest.find([']', ')', ',', ';', ' ']).unwrap_or(rest.len());
                out.push(rest[..end].to_string());
            }
        }
        out
    };
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (path, a) in all_args() {
        let defaults: Vec<String> = a
            .get_default_values()
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect();
        let help = format!(
            "{} {}",
            a.get_help().map(|h| h.to_string()).unwrap_or_default(),
            a.get_long_help().map(|h| h.to_string()).unwrap_or_default()
        );
        for s in stated(&help) {
            if defaults.is_empty() {
                continue;
            }
            checked += 1;
            if !defaults.contains(&s) {
                wrong.push(format!(
                    "{path} {:?}: help says default {s}, clap's is {defaults:?}",
                    a.get_id()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    let _ = checked;
    // Every default parses with its option's own parser.
    Cli::command().debug_assert();
}

/// `align --time-budget`'s default is the one constant, and the library's default run
/// (auto, the tests) takes the same.
#[test]
fn align_defaults_are_one_constant() {
    use flashscope::cli::defs::align::TIME_BUDGET;
    let params = flashscope::commands::align::AlignParams::default();
    assert_eq!(
        flashscope::vocab::units::parse_duration_ns(TIME_BUDGET).unwrap(),
        params.time_budget_ns
    );
    let cmd = Cli::command();
    let align = cmd.find_subcommand("align").unwrap();
    let default_of = |id: &str| {
        align
            .get_arguments()
            .find(|a| a.get_id() == id)
            .map(|a| {
                a.get_default_values()
                    .iter()
                    .map(|d| d.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
            })
            .unwrap()
    };
    assert_eq!(default_of("time_budget"), [TIME_BUDGET]);
    assert_eq!(default_of("positions"), [params.positions.to_string()]);
    // The error names the default clap applies.
    let out = crate::common::flashscope()
        .args(["align", "sim:sd-16g", "--positions", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("(default {})", params.positions)),
        "{err}"
    );
}

/// The options issue 46 point 1 left with several definitions, each one now: a name that
/// meant two things keeps both meanings compatibly (one value type, each command's old
/// spellings still parse), and a value a command cannot honour is refused with exit 2.
#[test]
fn shared_options_keep_each_commands_meaning() {
    let parses = |argv: &[&str]| Cli::try_parse_from(argv).map_err(|e| e.to_string());
    // --sync: io's mode (after = or a space), fs matrix's flag (a bare flag never eats
    // the directory that follows it).
    use flashscope::workload::SyncMode;
    assert_eq!(io(&["--sync", "dsync"]).sync.value, Some(SyncMode::Dsync));
    assert_eq!(io(&["--sync"]).sync.value, Some(SyncMode::Sync));
    assert_eq!(io(&[]).sync.value, Some(SyncMode::None));
    let matrix = |args: &[&str]| {
        let mut argv = vec!["flashscope", "fs", "matrix"];
        argv.extend_from_slice(args);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Fs(flashscope::cli::fs::FsCommand::Matrix(m)) => m,
            c => panic!("{c:?}"),
        }
    };
    let m = matrix(&["--sync", "--fsync", "/mnt"]);
    assert_eq!(m.common.dir, std::path::PathBuf::from("/mnt"));
    assert_eq!(
        (m.sync.value, m.fsync.value),
        (Some(SyncMode::Sync), Some(1))
    );
    let m = matrix(&["/mnt"]);
    assert_eq!((m.sync.value, m.fsync.value), (None, None));
    // --fsync: io's count; bare = after every write.
    assert_eq!(io(&["--fsync", "8"]).fsync.value, Some(8));
    assert_eq!(io(&["--fsync"]).fsync.value, Some(1));
    assert_eq!(io(&[]).fsync.value, Some(0));
    // --cpus: one list parser; serve's old --cpu still parses.
    assert_eq!(io(&["--cpus", "0-1,3"]).cpus.value, Some(vec![0, 1, 3]));
    match parses(&[
        "flashscope",
        "sim",
        "serve",
        "sim:sd-16g",
        "/mnt",
        "--cpu",
        "1",
    ])
    .unwrap()
    .command
    {
        Command::Sim(flashscope::cli::sim::SimCommand::Serve(a)) => {
            assert_eq!(a.cpu.value, Some(vec![1]))
        }
        c => panic!("{c:?}"),
    }
    let e = parses(&["flashscope", "io", "x", "--cpus", "one"]).unwrap_err();
    assert!(e.contains("is not a CPU list"), "{e}");
    // --engine, --pattern: parsed once, for every command.
    use flashscope::workload::{EngineKind, Pattern};
    assert_eq!(
        io(&["--engine", "io_uring"]).engine.value,
        Some(EngineKind::Uring)
    );
    assert_eq!(
        io(&["--pattern", "0x5a"]).pattern.value,
        Some(Pattern::Byte(0x5a))
    );
    let e = parses(&["flashscope", "bench", "x", "--engine", "aio"]).unwrap_err();
    assert!(e.contains("--engine 'aio' is not an engine"), "{e}");
    // --size, --erase-size: one parser, whose refusal names the option.
    for (argv, want) in [
        (
            &["flashscope", "io", "x", "--size", "0"][..],
            "--size 0 is zero",
        ),
        (
            &["flashscope", "bench", "x", "--size", "-4M"][..],
            "--size -4M is negative",
        ),
        (
            &["flashscope", "model", "--total", "0"][..],
            "--size 0 is zero",
        ),
        (
            &["flashscope", "open-au", "x", "--erase-size", "0"][..],
            "--erase-size 0 is zero",
        ),
        (
            &["flashscope", "analyze", "x", "--erasesize", "-1"][..],
            "--erase-size -1 is negative",
        ),
    ] {
        let e = parses(argv).unwrap_err();
        assert!(e.contains(want), "{argv:?}: {e}");
    }
    // verify's --iodepth default is the library's; its ceiling is refused by name.
    let verify = |extra: &[&str]| {
        let mut argv = vec!["flashscope", "verify", "sim:sd-16g"];
        argv.extend_from_slice(extra);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Verify(v) => v.iodepth.value,
            c => panic!("{c:?}"),
        }
    };
    assert_eq!(
        verify(&[]),
        Some(flashscope::capacity::verify::DEFAULT_IODEPTH as u32)
    );
    assert_eq!(io(&[]).iodepth.value, Some(1));
    let e = parses(&["flashscope", "io", "x", "--iodepth", "0"]).unwrap_err();
    assert!(e.contains("--iodepth"), "{e}");
    // --offset: one parser; 0 is the start.
    assert_eq!(io(&["--offset", "1M"]).offset.value.unwrap().value, 1 << 20);
    // --output: one path type, -o everywhere; report still needs it.
    assert!(parses(&["flashscope", "report", "a.json"]).is_err());
    assert!(parses(&["flashscope", "scatter", "x", "-o", "s.tsv"]).is_ok());
}

/// What a command cannot honour of a shared option is refused (exit 2) before anything runs.
#[test]
fn a_shared_option_a_command_cannot_honour_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (args, want) in [
        (
            vec!["fs", "matrix", d, "--sync=dsync"],
            "fs seq --mode dsync",
        ),
        (vec!["fs", "matrix", d, "--fsync=4"], "io --fsync N"),
        (
            vec!["sim", "serve", "sim:sd-16g", d, "--cpus", "0-1"],
            "takes one CPU",
        ),
        (
            vec!["interval", "sim:sd-16g", "--positions", "5000000000"],
            "--positions",
        ),
        (
            vec!["verify", "sim:sd-16g", "--write", "--iodepth", "9"],
            "--iodepth 9",
        ),
    ] {
        let out = crate::common::flashscope().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
