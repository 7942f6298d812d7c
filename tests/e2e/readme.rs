//! The README's examples stay true: every `$ flashscope ...` line in a console block that
//! runs on a simulated card is run, and the first line the README shows under it must be
//! the first line flashscope prints (the simulator is seeded, so these are exact). Other
//! examples (devices, directories, servers) are covered by their own end-to-end tests.

use crate::common;
use common::flashscope;

/// Split a command line like a shell would for the README's simple quoting ('...').
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            _ => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// (command line, first line of output shown) for each runnable example.
fn examples(readme: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut in_console = false;
    let mut lines = readme.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with("```") {
            in_console = line.trim() == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        let Some(cmd) = line.strip_prefix("$ flashscope ") else {
            continue;
        };
        // Continued lines, devices, directories and files are not self-contained, nor
        // redirections into files (tests/e2e/report.rs runs the Reports example through sh).
        if cmd.ends_with('\\')
            || !cmd.contains("sim:")
            || cmd.contains('/')
            || cmd.split_whitespace().any(|w| w == ">")
        {
            continue;
        }
        let shown = lines
            .peek()
            .filter(|l| !l.starts_with('$') && !l.starts_with("```") && l.trim() != "...")
            .map(|l| l.to_string());
        out.push((cmd.to_string(), shown));
    }
    out
}

#[test]
fn the_readme_examples_on_simulated_cards_print_what_the_readme_shows() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let examples = examples(&readme);
    assert!(
        examples.len() >= 6,
        "expected the README's sim: examples, found {examples:?}"
    );
    let state_dir = tempfile::tempdir().unwrap();
    for (cmd, shown) in &examples {
        let args = words(cmd);
        let mut c = flashscope();
        // In a directory of its own: an example's relative paths (`--history runs.sqlite`)
        // land there, not in the checkout.
        c.args(&args).current_dir(state_dir.path());
        if args.iter().any(|a| a == "--write") {
            c.env("XDG_STATE_HOME", state_dir.path());
        }
        let out = c.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // 0, or 3 where the example shows a finding (a fake card, a failed check).
        let code = out.status.code();
        assert!(
            code == Some(0) || code == Some(3),
            "`flashscope {cmd}` exited {code:?}: {stderr}"
        );
        if let Some(first) = shown {
            assert_eq!(
                stdout.lines().next().unwrap_or(""),
                first,
                "`flashscope {cmd}`: the README shows another first line; update one of them"
            );
        }
    }
}

#[test]
fn readme_words_split_like_a_shell() {
    assert_eq!(
        words("verify 'sim:custom,size=64M,fault=flip@5M+512' --write"),
        vec!["verify", "sim:custom,size=64M,fault=flip@5M+512", "--write"]
    );
}
