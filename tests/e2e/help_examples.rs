//! Every example in every `--help` stays true: each one parses (its options and values are
//! accepted, as the user would type them), and each one on a simulated card runs and exits
//! 0 (or 3, the documented "the device failed the check", e.g. a fake card found).
//! Examples on devices, directories and files are parsed only; their own end-to-end tests
//! run them.

use crate::common;

use clap::CommandFactory;
use flashscope::cli::Cli;

/// (subcommand path, example line) for every `flashscope ...` line in every after_help.
fn help_examples() -> Vec<(String, String)> {
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<(String, String)>) {
        if let Some(help) = cmd.get_after_help() {
            let text = help.to_string();
            let mut lines = text.lines();
            while let Some(line) = lines.next() {
                let t = line.trim();
                if !t.starts_with("flashscope ") {
                    continue;
                }
                // A line ending in a backslash goes on.
                let mut full = t.to_string();
                while full.ends_with('\\') {
                    full.pop();
                    match lines.next() {
                        Some(next) => full.push_str(next.trim()),
                        None => break,
                    }
                }
                out.push((path.to_string(), full));
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }
    let mut out = Vec::new();
    walk(&Cli::command(), "flashscope", &mut out);
    out
}

/// The command of an example line without its comment (two or more spaces, then words)
/// and without a shell redirection, split like a shell for '...' quoting.
fn example_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any, mut spaces) = (false, false, 0);
    for c in line.chars() {
        if c == ' ' && !quoted {
            spaces += 1;
            if any {
                words.push(std::mem::take(&mut cur));
                any = false;
            }
            continue;
        }
        // Two spaces before a word that is no option: a comment follows.
        if spaces >= 2 && !quoted && c != '-' && !words.is_empty() {
            break;
        }
        spaces = 0;
        if c == '\'' {
            quoted = !quoted;
            any = true;
        } else {
            cur.push(c);
            any = true;
        }
    }
    if any {
        words.push(cur);
    }
    if let Some(i) = words.iter().position(|w| w == ">") {
        words.truncate(i);
    }
    words
}

#[test]
fn example_words_drop_comments_and_redirections() {
    assert_eq!(
        example_words(
            "flashscope probe /dev/sdb --write --json               non-destructive (journal)"
        ),
        ["flashscope", "probe", "/dev/sdb", "--write", "--json"]
    );
    assert_eq!(
        example_words("flashscope bench /dev/sdb --destructive --expect 'seq_write>=10MB/s,rand_read_iops>=1500'"),
        [
            "flashscope",
            "bench",
            "/dev/sdb",
            "--destructive",
            "--expect",
            "seq_write>=10MB/s,rand_read_iops>=1500"
        ]
    );
    assert_eq!(
        example_words("flashscope auto /dev/mmcblk0 --json > card.json"),
        ["flashscope", "auto", "/dev/mmcblk0", "--json"]
    );
}

#[test]
fn every_help_example_parses() {
    let examples = help_examples();
    assert!(
        examples.len() >= 30,
        "found only {} examples in the help texts",
        examples.len()
    );
    let mut bad = Vec::new();
    for (path, line) in &examples {
        let words = example_words(line);
        if let Err(e) = Cli::command()
            .allow_negative_numbers(true)
            .try_get_matches_from(&words)
        {
            bad.push(format!("{path}: `{line}`: {}", e.render()));
        }
    }
    assert!(
        bad.is_empty(),
        "help examples that do not parse:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_help_example_on_a_simulated_card_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut ran = 0;
    let mut bad = Vec::new();
    for (path, line) in help_examples() {
        let words = example_words(&line);
        if !words.iter().any(|w| w.starts_with("sim:"))
            || words.get(1).map(String::as_str) == Some("sim")
                && words.get(2).map(String::as_str) == Some("serve")
        {
            continue;
        }
        let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        let (code, _out, err) = common::run_at(dir.path(), dir.path(), &args);
        ran += 1;
        if !matches!(code, 0 | 3) || err.contains("panicked") {
            bad.push(format!("{path}: `{line}` exited {code}: {err}"));
        }
    }
    assert!(ran >= 10, "ran only {ran} examples on simulated cards");
    assert!(
        bad.is_empty(),
        "help examples that fail:\n{}",
        bad.join("\n")
    );
}
