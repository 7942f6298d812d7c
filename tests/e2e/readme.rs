//! The README's and docs/'s examples stay true: every `$ flashscope ...` line in a console
//! block of README.md or docs/*.md that runs on a simulated card is run, and the first line
//! the document shows under it must be the first line flashscope prints (the simulator is
//! seeded, so these are exact). Other examples (devices, directories, servers) are covered
//! by their own end-to-end tests. The README's "On a fresh machine" block holds the two commands a
//! newcomer runs, checked here too.

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
        // A shell comment after the command, and `| head -1` (the first line is what is
        // shown either way).
        let cmd = cmd.split(" #").next().unwrap_or(cmd).trim_end();
        let cmd = cmd.split(" | head").next().unwrap_or(cmd).trim_end();
        // Continued lines, devices, directories and files are not self-contained, nor
        // redirections into files (tests/e2e/report.rs runs the Reports example through sh).
        // Logs in tests/data/ are part of the checkout: those examples run too.
        let local = cmd
            .split_whitespace()
            .all(|w| !w.contains('/') || w.starts_with("tests/data/"));
        if cmd.ends_with('\\')
            || !(cmd.contains("sim:") || cmd.contains("tests/data/"))
            || !local
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

/// README.md and every docs/*.md, (name, text).
pub(crate) fn documents() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![(
        "README.md".to_string(),
        std::fs::read_to_string(root.join("README.md")).expect("README.md"),
    )];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    for p in docs {
        let name = format!("docs/{}", p.file_name().unwrap().to_string_lossy());
        out.push((name, std::fs::read_to_string(&p).unwrap()));
    }
    out
}

#[test]
fn the_readme_and_docs_examples_on_simulated_cards_print_what_they_show() {
    let mut all = Vec::new();
    for (name, text) in documents() {
        // An unclosed block would swallow the rest of the page (and its examples).
        let fences = text.lines().filter(|l| l.starts_with("```")).count();
        assert!(fences % 2 == 0, "{name}: a code block is not closed");
        let found = examples(&text);
        if name == "README.md" {
            assert!(
                found.len() >= 2,
                "expected the README's sim: examples, found {found:?}"
            );
        }
        all.extend(found.into_iter().map(|(c, s)| (name.clone(), c, s)));
    }
    assert!(
        all.len() >= 15,
        "expected the README's and docs' sim: examples, found {all:?}"
    );
    let state_dir = tempfile::tempdir().unwrap();
    for (doc, cmd, shown) in &all {
        let args: Vec<String> = words(cmd).iter().flat_map(|w| in_checkout(w)).collect();
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
            "{doc}: `flashscope {cmd}` exited {code:?}: {stderr}"
        );
        if let Some(first) = shown {
            assert_eq!(
                stdout.lines().next().unwrap_or(""),
                first,
                "{doc}: `flashscope {cmd}`: the document shows another first line; update one of them"
            );
        }
    }
}

/// A `tests/data/...` word as the absolute path(s) it names in the checkout, a `*` in its
/// file name expanded as a shell would (sorted); any other word as itself.
fn in_checkout(word: &str) -> Vec<String> {
    if !word.starts_with("tests/data/") {
        return vec![word.to_string()];
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(word);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let Some((prefix, suffix)) = name.split_once('*') else {
        return vec![path.to_string_lossy().into_owned()];
    };
    let dir = path.parent().unwrap();
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix) && n.ends_with(suffix))
        .map(|n| dir.join(n).to_string_lossy().into_owned())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "`{word}` matches no file");
    out
}

#[test]
fn readme_words_split_like_a_shell() {
    assert_eq!(
        words("verify 'sim:custom,size=64M,fault=flip@5M+512' --write"),
        vec!["verify", "sim:custom,size=64M,fault=flip@5M+512", "--write"]
    );
}

/// The README's `sh` block under "On a fresh machine": the build-and-run command on the simulated card and the
/// command that runs every test (.ci/run runs `cargo test --locked`, the same tests).
#[test]
fn the_readme_starts_with_the_two_commands_of_a_fresh_machine() {
    let readme = &documents()[0].1;
    let block = readme
        .split("## On a fresh machine")
        .nth(1)
        .expect("an 'On a fresh machine' section")
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("an sh block in the README");
    let commands: Vec<&str> = block
        .lines()
        .map(|l| l.split(" #").next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert!(
        commands.contains(&"cargo run --release -- auto sim:sd-16g")
            && commands.contains(&"cargo test"),
        "the README's first sh block is {commands:?}"
    );
    // Its first two runnable commands are these; the auto run itself is the README's
    // first console example, run above.
    assert!(readme.contains("$ flashscope auto sim:sd-16g\n"));
}

/// The README's first screen tells the truth (issue 46 point 7): its Install section
/// promises no download and no git URL that do not exist, gives the `cargo install` line
/// that works in a checkout and the script that builds binaries and packages (which
/// exists and writes the .deb files), and the test line gives its duration as root and as
/// a normal user.
#[test]
fn the_readme_install_section_and_test_line_tell_the_truth() {
    let readme = &documents()[0].1;
    let install = readme
        .split("## Install\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("an Install section");
    // The section starts on the first screen (within its first 20 lines).
    let at = readme.lines().position(|l| l == "## Install").unwrap();
    assert!(at < 20, "the Install section starts at line {}", at + 1);
    let flat = install.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        !flat.contains("--git URL") && !flat.to_lowercase().contains("prebuilt"),
        "the Install section promises a URL or prebuilt download that does not exist"
    );
    assert!(
        flat.contains("no download site and no public git URL"),
        "the Install section does not say there is no download site or git URL yet"
    );
    assert!(install.contains("\ncargo install --locked --path ."));
    assert!(flat.contains("`scripts/release [DIST]`"));
    let release = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/release"),
    )
    .unwrap();
    assert!(
        release.contains("scripts/deb "),
        "the README says scripts/release builds packages; it does not call scripts/deb"
    );
    for arch in ["amd64", "arm64", "armhf"] {
        assert!(
            flat.contains(&format!("flashscope_VERSION-1_{arch}.deb")),
            "no {arch} package named"
        );
    }

    // The test line's duration, as root and not.
    let fresh = readme
        .split("## On a fresh machine\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap();
    let fresh = fresh.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        fresh.contains("about 15 minutes as root")
            && fresh.contains("about 5 minutes to run as a normal user"),
        "the README gives no duration for cargo test as root and not: {fresh}"
    );
}
