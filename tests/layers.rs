//! The house's layering (docs/ARCHITECTURE.md): every top-level module of `src/` is a
//! room on a floor, and a room may import only the rooms its row of [`ALLOWED`] names.
//! Arrows point down, so no two rooms import each other, directly or around a circle.
//!
//! The imports are read from the source text: every path through `crate::` (also inside
//! `use crate::{a, b::c}` groups) and every `super::` that climbs out of its room. Code
//! after a file's `#[cfg(test)]` is test code and is held to the same table.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each room, lowest floor first, with the rooms it may import. A room missing from this
/// table fails the test: a new room takes its place here on purpose.
const ALLOWED: &[(&str, &[&str])] = &[
    // The vocabulary: units, errors, Inference/Status/Check/Metric/Warning. A leaf.
    ("vocab", &[]),
    // The operating system: syscalls and ioctls, signals, bounded input, /proc and /sys.
    ("sys", &["vocab"]),
    ("input", &["vocab"]),
    ("signals", &["vocab", "sys"]),
    ("platform", &["vocab", "sys", "input"]),
    // Devices and their I/O: the one stamp pattern, backends (the simulator among them),
    // opening a target, the journal that keeps what a write test overwrites.
    ("pattern", &["vocab"]),
    (
        "backend",
        &["vocab", "sys", "input", "signals", "platform", "pattern"],
    ),
    (
        "device",
        &["vocab", "sys", "input", "signals", "platform", "backend"],
    ),
    (
        "journal",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "device",
        ],
    ),
    // Pure decisions, and the workload engine that drives I/O and times it.
    ("analysis", &["vocab"]),
    ("model", &["vocab", "input"]),
    (
        "workload",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "pattern", "analysis",
        ],
    ),
    // Probes: I/O and timing into samples.
    (
        "probe",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "pattern", "device",
            "analysis", "workload",
        ],
    ),
    (
        "capacity",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "pattern", "device",
            "analysis",
        ],
    ),
    (
        "fs",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "pattern", "device",
            "analysis", "workload",
        ],
    ),
    ("health", &["vocab", "sys", "input", "platform", "device"]),
    (
        "serve",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "pattern", "device",
            "workload",
        ],
    ),
    // The document (schema flashscope/1) and its renderings: text, SVG, HTML, exports.
    (
        "report",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "pattern", "device",
            "journal", "analysis", "model", "workload", "probe", "capacity", "fs", "health",
            "serve",
        ],
    ),
    // The write policy and the session every writing command runs in.
    (
        "session",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "device", "journal",
            "analysis", "report",
        ],
    ),
    // Below the commands, reading documents: the run history and compare (the
    // `history` and `compare` commands build their documents from them).
    (
        "history",
        &[
            "vocab", "sys", "input", "platform", "device", "journal", "analysis", "report",
        ],
    ),
    (
        "compare",
        &[
            "vocab", "input", "analysis", "workload", "report", "history",
        ],
    ),
    // The commands: typed parameters in, a document out; the only place documents are built.
    (
        "commands",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "pattern", "device",
            "journal", "analysis", "model", "workload", "probe", "capacity", "fs", "health",
            "serve", "report", "session", "history", "compare",
        ],
    ),
    // The text renderers: each command's text from its document alone. Above the
    // commands, so no command can reach a renderer; they read documents (and the history's
    // and compare's rows), never run a command or a session.
    (
        "output",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "pattern", "device",
            "journal", "analysis", "model", "workload", "probe", "capacity", "fs", "health",
            "serve", "report", "history", "compare",
        ],
    ),
    // The command line: clap, arguments into parameters, dispatch, exit codes.
    (
        "cli",
        &[
            "vocab", "sys", "input", "signals", "platform", "backend", "pattern", "device",
            "journal", "analysis", "model", "workload", "probe", "capacity", "fs", "health",
            "serve", "report", "session", "commands", "history", "compare", "output",
        ],
    ),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file below `src/`: `a/b.rs` and `a/b/mod.rs` are `[a, b]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

/// The text with comments, string and char literals blanked (so a path in a doc comment
/// or a message is not an import).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'r' && (b[i..].starts_with(b"r\"") || b[i..].starts_with(b"r#")) {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            i += 2 + hashes;
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3;
            out.push_str("' '");
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            i += 2;
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first path segment of each item of a `{a, b::c, d::{e, f}}` group starting after
/// its `{`.
fn group_heads(s: &str) -> Vec<String> {
    let (mut depth, mut start, mut heads) = (0usize, 0usize, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                heads.push(ident_at(s[start..i].trim()).to_string());
                return heads;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(ident_at(s[start..i].trim()).to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    heads
}

/// Every top-level module a file's code names, each with one line where it does.
fn imports(code: &str, module: &[String], rooms: &BTreeSet<String>) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let word_start = |at: usize| {
        at == 0 || {
            let p = code.as_bytes()[at - 1];
            !(p.is_ascii_alphanumeric() || p == b'_' || p == b':')
        }
    };
    for (at, _) in code.match_indices("crate::") {
        if !word_start(at) || (at > 0 && code.as_bytes()[at - 1] == b'$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        let heads = match rest.strip_prefix('{') {
            Some(group) => group_heads(group),
            None => vec![ident_at(rest).to_string()],
        };
        for h in heads {
            if rooms.contains(&h) {
                found.entry(h).or_insert(line_of(at));
            }
        }
    }
    // `super::super::x` from `a/b.rs` reaches the crate root: `x` is a room.
    for (at, _) in code.match_indices("super::") {
        if !word_start(at) {
            continue;
        }
        let mut rest = &code[at..];
        let mut up = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            up += 1;
            rest = r;
        }
        if up >= module.len() {
            let h = ident_at(rest).to_string();
            if rooms.contains(&h) {
                found.entry(h).or_insert(line_of(at));
            }
        }
    }
    found
}

/// (room, imported room, file, line) for every import in the tree.
fn edges() -> Vec<(String, String, String, usize)> {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let rooms: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_path(f.strip_prefix(&root).unwrap()).first().cloned())
        .filter(|r| r != "lib" && r != "main")
        .collect();
    let mut out = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        let module = module_path(rel);
        let room = module[0].clone();
        if room == "lib" || room == "main" {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for (to, line) in imports(&code, &module, &rooms) {
            if to != room {
                out.push((room.clone(), to, rel.display().to_string(), line));
            }
        }
    }
    out
}

#[test]
fn every_import_points_down_the_table() {
    let allowed: BTreeMap<&str, BTreeSet<&str>> = ALLOWED
        .iter()
        .map(|(r, a)| (*r, a.iter().copied().collect()))
        .collect();
    let mut bad = Vec::new();
    let mut seen_rooms = BTreeSet::new();
    for (from, to, file, line) in edges() {
        seen_rooms.insert(from.clone());
        match allowed.get(from.as_str()) {
            None => bad.push(format!(
                "src/{file}: room `{from}` is not in tests/layers.rs's table: give it a floor"
            )),
            Some(a) if !a.contains(to.as_str()) => bad.push(format!(
                "src/{file}:{line}: `{from}` imports `{to}`, which its row of the table does not allow"
            )),
            _ => {}
        }
    }
    assert!(
        bad.is_empty(),
        "imports against the layering:\n{}",
        bad.join("\n")
    );
    assert!(
        seen_rooms.len() >= 15,
        "the scan found too few rooms: {seen_rooms:?}"
    );
}

#[test]
fn the_table_itself_points_down() {
    // Each room may import only rooms listed above it in the table, so the allowed
    // imports can never close a circle.
    let mut earlier = BTreeSet::new();
    for (room, allowed) in ALLOWED {
        for a in *allowed {
            assert!(
                earlier.contains(a),
                "`{room}` may import `{a}`, which is not on a floor below it in the table"
            );
        }
        assert!(earlier.insert(*room), "`{room}` is in the table twice");
    }
}

#[test]
fn every_room_of_src_is_in_the_table() {
    let root = src();
    let listed: BTreeSet<&str> = ALLOWED.iter().map(|(r, _)| *r).collect();
    for e in std::fs::read_dir(&root).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let room = name.trim_end_matches(".rs");
        if room == "lib" || room == "main" {
            continue;
        }
        assert!(
            listed.contains(room),
            "src/{name} has no row in tests/layers.rs"
        );
    }
}

#[test]
fn the_scanner_sees_imports_in_every_form() {
    let rooms: BTreeSet<String> = ["vocab", "report", "cli", "device"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let code = code_only(
        "use crate::{vocab::Warning, report::{Document, Body}};\n\
         // crate::cli in a comment\n\
         let s = \"crate::cli in a string\";\n\
         fn f() -> crate::device::TargetInfo { super::super::cli::x() }\n",
    );
    let m = ["probe".to_string(), "align".to_string()];
    let got: Vec<String> = imports(&code, &m, &rooms).into_keys().collect();
    assert_eq!(got, ["cli", "device", "report", "vocab"]);
    // One `super::` from a/b.rs stays in room a.
    let got = imports(&code_only("use super::cli::x;"), &m, &rooms);
    assert!(got.is_empty(), "{got:?}");
}

/// The product code of `text` (its `#[cfg(test)]` modules cut), comments and literals
/// blanked.
fn product_code(text: &str) -> String {
    let code = code_only(text);
    match code.find("#[cfg(test)]") {
        Some(i) => code[..i].to_string(),
        None => code,
    }
}

/// Below the command line nothing prints or ends the process: results go up as values,
/// events to an observer, and only `cli` and `main` write to the terminal and decide the
/// exit code (issue 32). Test modules may print their own diagnostics.
#[test]
fn only_the_command_line_prints_or_exits() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let forbidden = [
        "println!",
        "eprintln!",
        "print!",
        "eprint!",
        "process::exit",
        "dbg!",
    ];
    let mut bad = Vec::new();
    let mut scanned = 0;
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        let room = module_path(rel).first().cloned().unwrap_or_default();
        if room == "cli" || room == "main" {
            continue;
        }
        scanned += 1;
        let code = product_code(&std::fs::read_to_string(f).unwrap());
        for (n, line) in code.lines().enumerate() {
            for word in forbidden {
                // `eprintln!` contains `println!`: match whole names only.
                let hit = line.match_indices(word).any(|(i, _)| {
                    !line[..i]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if hit {
                    bad.push(format!("src/{}:{}: {word}", rel.display(), n + 1));
                }
            }
        }
    }
    assert!(scanned > 50, "only {scanned} files scanned");
    assert!(
        bad.is_empty(),
        "printing or exiting below the command line (return a value or tell the observer):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_print_scan_sees_a_print_and_skips_tests() {
    let code = product_code(
        "fn a() { eprintln!(\"x\"); }\n// println!(\"y\")\n#[cfg(test)]\nmod tests { fn b() { println!(); } }\n",
    );
    assert!(code.contains("eprintln!"));
    // The commented one and the test module's are not product code.
    assert_eq!(code.matches("println!").count(), 1, "{code}");
    assert!(!code.contains("fn b"));
}

/// Every line on stderr goes through one function, `cli::say`, which shows control
/// characters as text (issue 44.6): in `cli` and `main` no `eprint!`/`eprintln!` and no
/// other write to stderr; only `say` takes stderr's lock.
#[test]
fn every_stderr_line_goes_through_say() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut bad = Vec::new();
    let mut writers = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        let room = module_path(rel).first().cloned().unwrap_or_default();
        if room != "cli" && room != "main" {
            continue;
        }
        let code = product_code(&std::fs::read_to_string(f).unwrap());
        for (n, line) in code.lines().enumerate() {
            if line.contains("eprint!") || line.contains("eprintln!") {
                bad.push(format!("src/{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
            if line.contains("stderr().lock()") || line.contains("stderr().write") {
                writers.push(format!("src/{}:{}", rel.display(), n + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "stderr written around cli::say (its text is not made printable):\n{}",
        bad.join("\n")
    );
    assert_eq!(
        writers.len(),
        1,
        "one writer of stderr, cli::say: {writers:?}"
    );
    assert!(writers[0].starts_with("src/cli/mod.rs:"), "{writers:?}");
}

/// One decision for the write mode (issue 44.10): `session::WriteMode::of` (through
/// `session::decide` and `permit`) decides from the target and the flags whether a test's
/// writes are journaled; no command works it out again from the target's kind and
/// `--destructive` (two formulas disagreed on a directory).
#[test]
fn no_command_decides_the_write_mode_again() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root.join("commands"), &mut files);
    assert!(files.len() > 10, "{files:?}");
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        let code = product_code(&std::fs::read_to_string(f).unwrap());
        for (n, line) in code.lines().enumerate() {
            let squeezed: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
            let recomputes = squeezed.contains("holds_data")
                || squeezed.contains("is_sim()")
                || ["destructive &&", "destructive ||", "!p.flags.destructive"]
                    .iter()
                    .any(|w| squeezed.contains(w))
                || (squeezed.contains("destructive")
                    && (squeezed.contains("&& !") || squeezed.contains("|| ")));
            if recomputes {
                bad.push(format!("src/{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the write mode decided again outside session::WriteMode::of:\n{}",
        bad.join("\n")
    );
}

/// Every file of the repository a reader follows: README.md, docs/, src/, tests/, scripts/
/// and .ci/.
fn cited_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![root.join("README.md"), root.join(".ci/run")];
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                // Test data holds other people's texts, cited as they wrote them.
                if p.file_name().is_some_and(|n| n != "data") {
                    walk(&p, out);
                }
            } else {
                out.push(p);
            }
        }
    }
    for d in ["docs", "src", "tests", "scripts"] {
        walk(&root.join(d), &mut out);
    }
    out
}

/// The `docs/NAME.md` paths `text` cites (`docs/` followed by a file name ending in `.md`).
fn docs_cited(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("docs/") {
        let tail = &rest[i + 5..];
        let name: String = tail
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            .collect();
        // A URL's path (".../docs/x.md") is another site's: only bare paths count.
        let bare = !rest[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '/');
        if bare && name.ends_with(".md") {
            out.push(format!("docs/{name}"));
        }
        rest = tail;
    }
    out
}

/// Issue 46 point 8: the repository is read without the design notes beside it (a fresh
/// clone has no directory of design notes beside it), so nothing in it cites them
/// (`DESIGN.md`, a file in that sibling directory, `shared/reference/`), and every
/// `docs/NAME.md` it cites exists.
#[test]
fn the_repository_cites_only_documents_it_has() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut bad = Vec::new();
    for f in cited_files() {
        if f.ends_with("tests/layers.rs") {
            continue; // the names below
        }
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue; // not text
        };
        let rel = f.strip_prefix(root).unwrap_or(&f).display().to_string();
        for (n, line) in text.lines().enumerate() {
            // (The second name is spelled in two parts so that this file does not cite it itself.)
            for outside in ["DESIGN.md", concat!("..", "/shared/"), "shared/reference/"] {
                if line.contains(outside) {
                    bad.push(format!("{rel}:{}: cites {outside}", n + 1));
                }
            }
            for doc in docs_cited(line) {
                if !root.join(&doc).is_file() {
                    bad.push(format!(
                        "{rel}:{}: cites {doc}, which does not exist",
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_citation_scan_sees_docs_paths_and_skips_urls() {
    assert_eq!(
        docs_cited("see docs/auto.md, (docs/reference.md \"Exit codes\") and docs/"),
        ["docs/auto.md", "docs/reference.md"]
    );
    assert!(docs_cited("https://example.org/docs/x.md and mydocs/y.md").is_empty());
}

/// Issue 46 point 8: docs/development.md's count of the test binaries `cargo test` builds
/// is the real one: the library's, the command-line binary's and one per `tests/*.rs` or
/// `tests/*/main.rs`.
#[test]
fn the_development_guide_counts_the_test_binaries_there_are() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 2; // src/lib.rs and src/main.rs
    for e in std::fs::read_dir(root.join("tests")).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "rs") || p.join("main.rs").is_file() {
            n += 1;
        }
    }
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    ];
    let guide = std::fs::read_to_string(root.join("docs/development.md")).unwrap();
    let said = format!("`cargo test` builds {} test binaries", words[n.min(9)]);
    assert!(
        guide.contains(&said),
        "docs/development.md should say \"{said}\" ({n} test binaries)"
    );
}
