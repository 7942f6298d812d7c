// The manual page and the completion scripts from a command tree. Self-contained (clap,
// clap_mangen and clap_complete only): `build.rs` includes this file too, so the page a
// package installs and the one `flashscope man` prints are made by the same code.

/// The manual page (roff) of `cmd`: the top level, then each subcommand's usage,
/// description and options in a section of its own, so one page documents every option.
pub fn man_page(cmd: clap::Command) -> Vec<u8> {
    let mut cmd = cmd;
    cmd.build();
    let mut page = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = clap_mangen::Man::new(cmd.clone()).render(&mut page);
    let mut sections = Vec::new();
    for sub in cmd.get_subcommands() {
        leaf_sections(
            sub,
            &format!("{} {}", cmd.get_name(), sub.get_name()),
            &mut sections,
        );
    }
    if !sections.is_empty() {
        page.extend_from_slice(b".SH \"COMMANDS IN DETAIL\"\n");
        page.extend_from_slice(&sections);
    }
    ascii_roff(&page)
}

/// The page with every character outside ASCII written as groff's `\[uXXXX]`: groff reads
/// its input as Latin-1 unless a preprocessor (man-db's preconv) converts it, so a raw
/// em dash or multiplication sign would print as mojibake, with a warning, elsewhere.
fn ascii_roff(page: &[u8]) -> Vec<u8> {
    let mut out = String::with_capacity(page.len());
    for c in String::from_utf8_lossy(page).chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", c as u32));
        }
    }
    out.into_bytes()
}

/// `cmd`'s usage, description and options under a subsection named `path`, then its
/// subcommands'.
fn leaf_sections(cmd: &clap::Command, path: &str, out: &mut Vec<u8>) {
    if cmd.is_hide_set() {
        return;
    }
    out.extend_from_slice(format!(".SS \"{path}\"\n").as_bytes());
    let man = clap_mangen::Man::new(cmd.clone().bin_name(path));
    let mut part = Vec::new();
    let _ = man.render_synopsis_section(&mut part);
    let _ = man.render_description_section(&mut part);
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        let _ = man.render_options_section(&mut part);
    }
    let _ = man.render_extra_section(&mut part);
    // Each rendered part opens a section (.SH NAME); within one command it reads as a
    // paragraph heading instead, so the page keeps one section per topic.
    let text = String::from_utf8_lossy(&part);
    for line in text.lines() {
        if let Some(title) = line.strip_prefix(".SH ") {
            out.extend_from_slice(format!(".TP\n.B {}\n", title.trim_matches('"')).as_bytes());
            out.extend_from_slice(b".PP\n");
        } else {
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
    }
    for sub in cmd.get_subcommands() {
        leaf_sections(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

/// `shell`'s completion script for `cmd`.
pub fn completion(shell: clap_complete::Shell, cmd: clap::Command) -> Vec<u8> {
    let mut cmd = cmd;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "flashscope", &mut script);
    script
}
