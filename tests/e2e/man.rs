//! The man page and the shell completions (issue 46 point 2): build.rs writes them from
//! the command line's definition, `flashscope man` and `flashscope completions SHELL`
//! print the same; the page renders in groff without a warning and each completion loads
//! in its shell.

use crate::common::{self, flashscope};

/// The tree build.rs wrote (`$OUT_DIR/gen`, or `$FLASHSCOPE_GEN_DIR` when the build had it).
fn gen_dir() -> std::path::PathBuf {
    match option_env!("FLASHSCOPE_GEN_DIR") {
        Some(d) if !d.is_empty() => d.into(),
        _ => std::path::Path::new(env!("OUT_DIR")).join("gen"),
    }
}

fn stdout_of(args: &[&str]) -> Vec<u8> {
    let out = flashscope().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// build.rs includes the definitions with stand-ins for the value types: the page and
/// the scripts it wrote must be the very bytes the binary makes from its own definition.
#[test]
fn generated_page_is_the_binarys_own() {
    let dir = gen_dir();
    for (args, file) in [
        (&["man"][..], "flashscope.1"),
        (&["completions", "bash"][..], "completions/flashscope.bash"),
        (&["completions", "zsh"][..], "completions/_flashscope"),
        (&["completions", "fish"][..], "completions/flashscope.fish"),
    ] {
        let built = std::fs::read(dir.join(file))
            .unwrap_or_else(|e| panic!("build.rs wrote no {}: {e}", dir.join(file).display()));
        assert!(
            built == stdout_of(args),
            "{file} from build.rs differs from `flashscope {}`",
            args.join(" ")
        );
    }
}

/// Every subcommand, and every long option of every subcommand, is on the page.
#[test]
fn the_page_documents_every_option() {
    let page = String::from_utf8(stdout_of(&["man"])).unwrap();
    fn walk(cmd: &clap::Command, page: &str, missing: &mut Vec<String>) {
        for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = a.get_long() {
                // roff writes a hyphen as \-.
                let shown = format!("\\-\\-{}", long.replace('-', "\\-"));
                if !page.contains(&shown) {
                    missing.push(format!("{} --{long}", cmd.get_name()));
                }
            }
        }
        for s in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            if !page.contains(s.get_name()) {
                missing.push(s.get_name().to_string());
            }
            walk(s, page, missing);
        }
    }
    let mut missing = Vec::new();
    walk(&flashscope::cli::command_tree(), &page, &mut missing);
    assert!(missing.is_empty(), "not on the man page: {missing:?}");
}

#[test]
fn the_page_renders_in_groff_without_warnings() {
    if !common::has_tool("groff") {
        return common::skip("groff is not installed");
    }
    let page = std::fs::read(gen_dir().join("flashscope.1")).unwrap();
    let mut child = common::tool_command("groff")
        .args(["-man", "-Tutf8", "-ww"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&page).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.is_empty(), "groff: {err}");
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in ["flashscope", "align", "time-budget", "completions"] {
        assert!(text.contains(needle), "the rendered page lacks {needle}");
    }
}

/// Run `shell -c script` with the completion file as $1; its stdout.
fn in_shell(shell: &str, script: &str, file: &str) -> Option<String> {
    if !common::has_tool(shell) {
        common::skip(&format!("{shell} is not installed"));
        return None;
    }
    let path = gen_dir().join("completions").join(file);
    let out = common::tool_command(shell)
        .arg("-c")
        .arg(script)
        .arg(shell)
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.trim().is_empty(),
        "{shell} could not load {}: {err}",
        path.display()
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn bash_completion_loads() {
    if let Some(out) = in_shell(
        "bash",
        r#"source "$1"; complete -p flashscope"#,
        "flashscope.bash",
    ) {
        assert!(out.contains("flashscope"), "{out}");
    }
}

#[test]
fn zsh_completion_loads() {
    // compinit as a user's .zshrc runs it, then the function defined by the file.
    let script = r#"autoload -U compinit; compinit -u; source "$1"; whence -w _flashscope"#;
    if let Some(out) = in_shell("zsh", script, "_flashscope") {
        assert!(out.contains("_flashscope: function"), "{out}");
    }
}

#[test]
fn fish_completion_completes_a_subcommand() {
    // fish has no $0: the name bash and zsh take as $0 is $argv[1] here, the file $argv[2].
    let script = r#"source $argv[2]; complete -C "flashscope al""#;
    if let Some(out) = in_shell("fish", script, "flashscope.fish") {
        assert!(out.lines().any(|l| l.starts_with("align")), "{out}");
    }
}

#[test]
fn every_shell_clap_supports_gets_a_script() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout_of(&["completions", shell]);
        assert!(
            String::from_utf8_lossy(&script).contains("flashscope"),
            "{shell}: no script"
        );
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error_naming_the_choices() {
    let out = flashscope().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in ["tcsh", "bash", "zsh", "fish", "elvish", "powershell"] {
        assert!(err.contains(needle), "{needle} not in: {err}");
    }
    assert!(out.stdout.is_empty());
}
