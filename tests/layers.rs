//! The house's rules (docs/ARCHITECTURE.md), read from `src/` itself.
//!
//! The layering: every top-level module of `src/` is a room on a floor, and a room may
//! import only the rooms its row of [`ALLOWED`] names. Arrows point down, so no two rooms
//! import each other, directly or around a circle. The imports are read from the source
//! text, test code included: every path through `crate::` (also inside `use crate::{a,
//! b::c}` groups), every `super::` that climbs out of its room, and every name the crate
//! root re-exports (`crate::Error` is an import of `vocab`).
//!
//! The other rules read the crate as the compiler does: the files `mod` reaches from
//! `lib.rs` and `main.rs`, parsed into items (syn). An item or module that carries
//! `#[cfg(test)]` is test code; every other item is product code, wherever it sits in its
//! file. Only the command line prints or ends the process; only `cli::say` writes stderr;
//! only what opens or serves a target sees the simulator; only `commands/` builds a
//! document. Each scanner is also run on small sources that must be flagged.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};

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
/// or a message is not an import); their line breaks are kept, so lines keep their numbers.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let breaks = |from: usize, to: usize| {
        "\n".repeat(
            b[from..to.min(b.len())]
                .iter()
                .filter(|&&c| c == b'\n')
                .count(),
        )
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let from = i;
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
            out.push_str(&breaks(from, i));
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
            let from = i;
            i += 2 + hashes;
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
            out.push_str(&breaks(from, i));
        } else if b[i] == b'"' {
            let from = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
            out.push_str(&breaks(from, i));
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

/// Every top-level module a file's code names, each with one line where it does. A name
/// the crate root re-exports (`crate::Error`, `roots`: name → room) names its room.
fn imports(
    code: &str,
    module: &[String],
    rooms: &BTreeSet<String>,
    roots: &BTreeMap<String, String>,
) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    let room_of = |h: &str| {
        if rooms.contains(h) {
            Some(h.to_string())
        } else {
            roots.get(h).cloned()
        }
    };
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
            if let Some(r) = room_of(&h) {
                found.entry(r).or_insert(line_of(at));
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
            if let Some(r) = room_of(ident_at(rest)) {
                found.entry(r).or_insert(line_of(at));
            }
        }
    }
    found
}

/// The names the crate root (`lib.rs`) brings in with `use`, each with the room it comes
/// from: `crate::NAME` reaches that room as surely as `crate::ROOM::NAME` does. A glob
/// (`pub use cli::*`) would hide which names it brings, so it fails here.
fn root_exports(lib: &syn::File, rooms: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for item in &lib.items {
        let syn::Item::Use(u) = item else { continue };
        let mut paths = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut paths);
        for p in paths {
            let names: Vec<&str> = p.iter().map(|(s, _)| s.as_str()).collect();
            let names = match names[..] {
                ["crate" | "self", ref rest @ ..] => rest,
                ref all => all,
            };
            let Some(room) = names.first().filter(|r| rooms.contains(**r)) else {
                continue;
            };
            let is_glob = matches!(&u.tree, syn::UseTree::Glob(_)) || {
                let mut t = &u.tree;
                loop {
                    match t {
                        syn::UseTree::Path(p) => t = &p.tree,
                        syn::UseTree::Glob(_) => break true,
                        _ => break false,
                    }
                }
            };
            assert!(
                !is_glob && names.len() > 1,
                "src/lib.rs re-exports all of `{room}` with a glob: name what it brings"
            );
            out.insert(names[names.len() - 1].to_string(), room.to_string());
        }
    }
    out
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
    let roots = root_exports(&parse(&root.join("lib.rs")), &rooms);
    let mut out = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        let module = module_path(rel);
        let room = module[0].clone();
        if room == "lib" || room == "main" {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for (to, line) in imports(&code, &module, &rooms, &roots) {
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
    let none = BTreeMap::new();
    let got: Vec<String> = imports(&code, &m, &rooms, &none).into_keys().collect();
    assert_eq!(got, ["cli", "device", "report", "vocab"]);
    // One `super::` from a/b.rs stays in room a.
    let got = imports(&code_only("use super::cli::x;"), &m, &rooms, &none);
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn a_re_export_through_the_crate_root_is_an_import_of_its_room() {
    let rooms: BTreeSet<String> = ["vocab", "cli", "device"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let lib = syn::parse_file(
        "pub mod cli;\npub use vocab::error::{Error, Result};\n\
         pub use crate::cli::{Output as Out, say};\nuse std::fmt;\n",
    )
    .unwrap();
    let roots = root_exports(&lib, &rooms);
    assert_eq!(
        roots
            .iter()
            .map(|(n, r)| format!("{n}>{r}"))
            .collect::<Vec<_>>(),
        ["Error>vocab", "Out>cli", "Result>vocab", "say>cli"]
    );
    let m = ["device".to_string(), "x".to_string()];
    let code = code_only("use crate::{Out, Result};\nfn f() { super::super::say(\"\"); }");
    let got: Vec<String> = imports(&code, &m, &rooms, &roots).into_keys().collect();
    assert_eq!(got, ["cli", "vocab"]);
    // A glob hides what it brings: refused.
    let glob = syn::parse_file("pub use cli::*;").unwrap();
    assert!(std::panic::catch_unwind(|| root_exports(&glob, &rooms)).is_err());
}

// The crate read as the compiler reads it: files reached through `mod` declarations from
// src/lib.rs and src/main.rs, each parsed into items (syn). Code is test code when the
// item itself, or a module around it, carries `#[cfg(test)]`; every other item is product
// code, wherever it sits in its file.

/// `#[cfg(test)]` (or `#[cfg(all(test, ...))]`): the item is compiled in test builds only.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let syn::Meta::List(l) = &a.meta else {
            return false;
        };
        let t: String = l.tokens.to_string().split_whitespace().collect();
        l.path.is_ident("cfg") && (t == "test" || t.starts_with("all(test,") || t == "all(test)")
    })
}

fn item_attrs(i: &syn::Item) -> &[syn::Attribute] {
    use syn::Item as I;
    match i {
        I::Const(x) => &x.attrs,
        I::Enum(x) => &x.attrs,
        I::ExternCrate(x) => &x.attrs,
        I::Fn(x) => &x.attrs,
        I::ForeignMod(x) => &x.attrs,
        I::Impl(x) => &x.attrs,
        I::Macro(x) => &x.attrs,
        I::Mod(x) => &x.attrs,
        I::Static(x) => &x.attrs,
        I::Struct(x) => &x.attrs,
        I::Trait(x) => &x.attrs,
        I::TraitAlias(x) => &x.attrs,
        I::Type(x) => &x.attrs,
        I::Union(x) => &x.attrs,
        I::Use(x) => &x.attrs,
        _ => &[],
    }
}

fn impl_item_attrs(i: &syn::ImplItem) -> &[syn::Attribute] {
    use syn::ImplItem as I;
    match i {
        I::Const(x) => &x.attrs,
        I::Fn(x) => &x.attrs,
        I::Type(x) => &x.attrs,
        I::Macro(x) => &x.attrs,
        _ => &[],
    }
}

fn trait_item_attrs(i: &syn::TraitItem) -> &[syn::Attribute] {
    use syn::TraitItem as I;
    match i {
        I::Const(x) => &x.attrs,
        I::Fn(x) => &x.attrs,
        I::Type(x) => &x.attrs,
        I::Macro(x) => &x.attrs,
        _ => &[],
    }
}

/// A file of `src/` as the compiler reaches it.
struct SrcFile {
    /// Below `src/`.
    rel: PathBuf,
    /// Its room: the first module of its path, or `lib` / `main` for the crate roots.
    room: String,
    /// Reached through a `#[cfg(test)]` module: all of it is test code.
    test_only: bool,
    ast: syn::File,
}

fn parse(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path).unwrap();
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file both crates are built from, following `mod NAME;` from the roots.
fn crate_files() -> Vec<SrcFile> {
    let root = src();
    let mut out = Vec::new();
    for top in ["lib.rs", "main.rs"] {
        let rel = PathBuf::from(top);
        let ast = parse(&root.join(&rel));
        modules(&root, Path::new(""), &ast.items, &[], false, &mut out);
        out.push(SrcFile {
            room: top.trim_end_matches(".rs").to_string(),
            rel,
            test_only: false,
            ast,
        });
    }
    out
}

/// The files `items`' `mod NAME;` declarations reach, a declaration's file looked up in
/// `dir` (the directory of a crate root or `mod.rs`, or `a/b/` for `a/b.rs`).
fn modules(
    root: &Path,
    dir: &Path,
    items: &[syn::Item],
    module: &[String],
    test: bool,
    out: &mut Vec<SrcFile>,
) {
    for i in items {
        let syn::Item::Mod(m) = i else {
            continue;
        };
        assert!(
            !m.attrs.iter().any(|a| a.path().is_ident("path")),
            "src/{}: `#[path]` on mod {}: the scan finds files by their module path",
            dir.display(),
            m.ident
        );
        let name = m.ident.to_string();
        let test = test || test_only(&m.attrs);
        let sub: Vec<String> = module.iter().cloned().chain([name.clone()]).collect();
        match &m.content {
            Some((_, inner)) => modules(root, &dir.join(&name), inner, &sub, test, out),
            None => {
                let flat = dir.join(format!("{name}.rs"));
                let rel = if root.join(&flat).is_file() {
                    flat
                } else {
                    dir.join(&name).join("mod.rs")
                };
                let ast = parse(&root.join(&rel));
                let below = if rel.ends_with("mod.rs") {
                    rel.parent().unwrap().to_path_buf()
                } else {
                    rel.with_extension("")
                };
                modules(root, &below, &ast.items, &sub, test, out);
                out.push(SrcFile {
                    room: sub[0].clone(),
                    rel,
                    test_only: test,
                    ast,
                });
            }
        }
    }
}

/// A forbidden thing found in product code.
struct Hit {
    line: usize,
    column: usize,
    /// `fn NAME` it is in, or `item level`.
    within: String,
    what: String,
}

/// The printing macros; `write!`/`writeln!` count when their first argument names a
/// standard stream.
const PRINTS: [&str; 5] = ["println", "eprintln", "print", "eprint", "dbg"];
/// Paths that end the process or reach a standard stream: (segment, next segment).
const STREAMS_AND_ENDS: [(&str, &str); 4] = [
    ("process", "exit"),
    ("process", "abort"),
    ("io", "stderr"),
    ("io", "stdout"),
];

/// Walks product items (an item with `#[cfg(test)]` is skipped with all it holds) and
/// records every printing macro, every write to a standard stream, and every path to
/// `process::exit`/`abort` or `io::stderr`/`stdout`, in code and inside macros' tokens.
#[derive(Default)]
struct Scan {
    /// The path pairs looked for (`STREAMS_AND_ENDS` unless told); `("", x)` is a path
    /// that starts with `x`.
    pairs: &'static [(&'static str, &'static str)],
    /// Whether printing macros and writes to a standard stream are looked for.
    prints: bool,
    /// Types whose struct literals (`Name { .. }`) are looked for.
    structs: &'static [&'static str],
    fns: Vec<String>,
    hits: Vec<Hit>,
    /// (line, column) of each `io::stderr` that is only asked whether it is a terminal.
    asked: BTreeSet<(usize, usize)>,
}

type Seg = (String, proc_macro2::Span);

impl Scan {
    fn hit(&mut self, span: proc_macro2::Span, what: String) {
        let within = match self.fns.last() {
            Some(f) => format!("fn {f}"),
            None => "item level".to_string(),
        };
        let (line, column) = (span.start().line, span.start().column);
        self.hits.push(Hit {
            line,
            column,
            within,
            what,
        });
    }

    /// The last pair of `segs`, a path read so far.
    fn path_end(&mut self, segs: &[Seg]) {
        let pair = match segs {
            [(b, span)] => Some(("", b, span)),
            [.., (a, _), (b, span)] => Some((a.as_str(), b, span)),
            _ => None,
        };
        if let Some((a, b, span)) = pair {
            if self.pairs.contains(&(a, b.as_str())) {
                let what = if a.is_empty() {
                    b.clone()
                } else {
                    format!("{a}::{b}")
                };
                self.hit(*span, what);
            }
        }
    }

    fn path(&mut self, segs: &[Seg]) {
        // (A lone segment is no path: `sim` alone is a name, `sim::x` a path.)
        if segs.len() > 1 {
            self.path_end(&segs[..1]);
        }
        for n in 2..=segs.len() {
            self.path_end(&segs[..n]);
        }
    }

    fn mac(&mut self, name: &str, span: proc_macro2::Span, args: &proc_macro2::TokenStream) {
        if !self.prints {
            return;
        }
        if PRINTS.contains(&name) {
            self.hit(span, format!("{name}!"));
        }
        if name == "write" || name == "writeln" {
            if let Some(stream) = first_arg_names_a_stream(args) {
                self.hit(span, format!("{name}! to {stream}"));
            }
        }
    }

    /// A macro's arguments, which are tokens rather than code: the macros called and the
    /// paths named in them, at any depth.
    fn tokens(&mut self, ts: proc_macro2::TokenStream) {
        use proc_macro2::TokenTree as T;
        let tts: Vec<T> = ts.into_iter().collect();
        let mut segs: Vec<Seg> = Vec::new();
        let mut after_colons = false;
        let mut i = 0;
        while i < tts.len() {
            match &tts[i] {
                T::Group(g) => {
                    self.tokens(g.stream());
                    segs.clear();
                }
                T::Ident(id) => {
                    let name = id.to_string();
                    if let (Some(T::Punct(p)), Some(T::Group(g))) = (tts.get(i + 1), tts.get(i + 2))
                    {
                        if p.as_char() == '!' {
                            self.mac(&name, id.span(), &g.stream());
                        }
                    }
                    if !after_colons {
                        segs.clear();
                    }
                    segs.push((name, id.span()));
                    if segs.len() > 1 {
                        self.path_end(&segs);
                    }
                    if segs.len() == 1
                        && matches!(tts.get(i + 1), Some(T::Punct(p)) if p.as_char() == ':')
                    {
                        self.path_end(&segs);
                    }
                    after_colons = false;
                    i += 1;
                    continue;
                }
                T::Punct(p)
                    if p.as_char() == ':'
                        && matches!(tts.get(i + 1), Some(T::Punct(q)) if q.as_char() == ':') =>
                {
                    after_colons = true;
                    i += 2;
                    continue;
                }
                _ => segs.clear(),
            }
            after_colons = false;
            i += 1;
        }
    }
}

/// The standard stream (`stderr` or `stdout`) the first argument of `write!`/`writeln!`
/// names, if any.
fn first_arg_names_a_stream(args: &proc_macro2::TokenStream) -> Option<&'static str> {
    fn names(ts: proc_macro2::TokenStream, top: bool) -> Option<&'static str> {
        use proc_macro2::TokenTree as T;
        for t in ts {
            match t {
                T::Punct(p) if top && p.as_char() == ',' => return None,
                T::Ident(i) => {
                    let s = i.to_string().to_lowercase();
                    for stream in ["stderr", "stdout"] {
                        if s.contains(stream) {
                            return Some(stream);
                        }
                    }
                }
                T::Group(g) => {
                    if let Some(s) = names(g.stream(), false) {
                        return Some(s);
                    }
                }
                _ => {}
            }
        }
        None
    }
    names(args.clone(), true)
}

/// Every path of a `use` tree, segment by segment (a renamed one ends with its new name).
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    use syn::UseTree as U;
    match tree {
        U::Path(p) => {
            prefix.push((p.ident.to_string(), p.ident.span()));
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        U::Name(n) => out.push([&prefix[..], &[(n.ident.to_string(), n.ident.span())]].concat()),
        // `a::b as c`: the path, then the name it is bound to.
        U::Rename(r) => out.push(
            [
                &prefix[..],
                &[
                    (r.ident.to_string(), r.ident.span()),
                    (r.rename.to_string(), r.rename.span()),
                ],
            ]
            .concat(),
        ),
        U::Glob(_) => out.push(prefix.clone()),
        U::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

fn is_stderr_call(e: &syn::Expr) -> Option<proc_macro2::Span> {
    let e = match e {
        syn::Expr::Reference(r) => &*r.expr,
        e => e,
    };
    let syn::Expr::Call(c) = e else { return None };
    let syn::Expr::Path(p) = &*c.func else {
        return None;
    };
    let segs: Vec<&syn::Ident> = p.path.segments.iter().map(|s| &s.ident).collect();
    match segs[..] {
        [.., a, b] if a == "io" && b == "stderr" => Some(b.span()),
        _ => None,
    }
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        if !test_only(item_attrs(i)) {
            visit::visit_item(self, i);
        }
    }
    fn visit_impl_item(&mut self, i: &'ast syn::ImplItem) {
        if !test_only(impl_item_attrs(i)) {
            visit::visit_impl_item(self, i);
        }
    }
    fn visit_trait_item(&mut self, i: &'ast syn::TraitItem) {
        if !test_only(trait_item_attrs(i)) {
            visit::visit_trait_item(self, i);
        }
    }
    fn visit_local(&mut self, l: &'ast syn::Local) {
        if !test_only(&l.attrs) {
            visit::visit_local(self, l);
        }
    }
    fn visit_stmt_macro(&mut self, s: &'ast syn::StmtMacro) {
        if !test_only(&s.attrs) {
            visit::visit_stmt_macro(self, s);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.fns.push(f.sig.ident.to_string());
        visit::visit_item_fn(self, f);
        self.fns.pop();
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.fns.push(f.sig.ident.to_string());
        visit::visit_impl_item_fn(self, f);
        self.fns.pop();
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        self.fns.push(f.sig.ident.to_string());
        visit::visit_trait_item_fn(self, f);
        self.fns.pop();
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Some(last) = m.path.segments.last() {
            self.mac(&last.ident.to_string(), last.ident.span(), &m.tokens);
        }
        self.tokens(m.tokens.clone());
        visit::visit_macro(self, m);
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<Seg> = p
            .segments
            .iter()
            .map(|s| (s.ident.to_string(), s.ident.span()))
            .collect();
        self.path(&segs);
        visit::visit_path(self, p);
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut paths);
        for p in paths {
            self.path(&p);
        }
    }
    fn visit_expr_struct(&mut self, e: &'ast syn::ExprStruct) {
        if let Some(last) = e.path.segments.last() {
            if self.structs.iter().any(|t| last.ident == t) {
                self.hit(last.ident.span(), format!("{} {{ .. }}", last.ident));
            }
        }
        visit::visit_expr_struct(self, e);
    }
    // `io::stderr().is_terminal()` and `IsTerminal::is_terminal(&io::stderr())` ask,
    // they do not write.
    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        if c.method == "is_terminal" {
            if let Some(s) = is_stderr_call(&c.receiver) {
                self.asked.insert((s.start().line, s.start().column));
            }
        }
        visit::visit_expr_method_call(self, c);
    }
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        let asks = matches!(&*c.func, syn::Expr::Path(p)
            if p.path.segments.last().is_some_and(|s| s.ident == "is_terminal"));
        if asks {
            for a in &c.args {
                if let Some(s) = is_stderr_call(a) {
                    self.asked.insert((s.start().line, s.start().column));
                }
            }
        }
        visit::visit_expr_call(self, c);
    }
}

fn scan(ast: &syn::File) -> Scan {
    let mut s = Scan {
        pairs: &STREAMS_AND_ENDS,
        prints: true,
        ..Scan::default()
    };
    s.visit_file(ast);
    s
}

/// The paths of `ast`'s product code that hold one of `pairs`.
fn scan_for(ast: &syn::File, pairs: &'static [(&'static str, &'static str)]) -> Scan {
    let mut s = Scan {
        pairs,
        ..Scan::default()
    };
    s.visit_file(ast);
    s
}

fn scan_source(text: &str) -> Vec<String> {
    let s = scan(&syn::parse_file(text).unwrap());
    s.hits
        .iter()
        .map(|h| format!("{}:{}", h.line, h.what))
        .collect()
}

#[test]
fn every_file_of_src_is_reached_from_a_crate_root() {
    let root = src();
    let mut on_disk = Vec::new();
    rust_files(&root, &mut on_disk);
    let on_disk: BTreeSet<PathBuf> = on_disk
        .iter()
        .map(|f| f.strip_prefix(&root).unwrap().to_path_buf())
        .collect();
    let reached: BTreeSet<PathBuf> = crate_files().into_iter().map(|f| f.rel).collect();
    assert_eq!(
        on_disk.difference(&reached).collect::<Vec<_>>(),
        Vec::<&PathBuf>::new(),
        "files of src/ no `mod` reaches (the scans would not read them)"
    );
    assert!(reached.len() > 50, "{reached:?}");
}

/// The standard streams' descriptors taken as files, never written to as a terminal:
/// `OutputFile`, the one way an output file is opened, writes `-` (standard output) and a
/// path that leads to flashscope's own stdout or stderr (`/dev/stdout`,
/// `/proc/self/fd/2`) through a copy of that descriptor, where another file would be
/// renamed into place. Only `io::stdout`/`io::stderr`, only in these functions (file below
/// `src/`, function).
const STREAMS_AS_FILES: &[(&str, &str)] = &[
    ("report/output_file.rs", "fn create"),
    ("report/output_file.rs", "fn open_stream"),
];

/// Below the command line nothing prints or ends the process: results go up as values,
/// events to an observer, and only `cli` and `main` write to the terminal and decide the
/// exit code (issue 32). Every product item is read, wherever it sits in its file; test
/// code (an item or module with `#[cfg(test)]`) may print its own diagnostics.
#[test]
fn only_the_command_line_prints_or_exits() {
    let mut bad = Vec::new();
    let mut scanned = 0;
    for f in crate_files() {
        if f.test_only || f.room == "cli" || f.room == "main" {
            continue;
        }
        scanned += 1;
        for h in scan(&f.ast).hits {
            let file = f.rel.to_string_lossy();
            let as_file = STREAMS_AS_FILES.contains(&(file.as_ref(), h.within.as_str()))
                && (h.what == "io::stdout" || h.what == "io::stderr");
            if as_file {
                continue;
            }
            bad.push(format!(
                "src/{}:{} ({}): {}",
                f.rel.display(),
                h.line,
                h.within,
                h.what
            ));
        }
    }
    assert!(scanned > 50, "only {scanned} files scanned");
    assert!(
        bad.is_empty(),
        "printing, a standard stream or an exit below the command line (return a value or tell the observer):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_print_scan_reads_items_not_lines() {
    // After an early test-only item, the rest of the file is still product code.
    let got = scan_source(
        "#[cfg(test)]\nfn helper() { println!(\"test\"); }\n\
         fn a() { eprintln!(\"x\"); }\n// println!(\"y\")\n\
         #[cfg(test)]\nmod tests { fn b() { println!(); } }\n\
         impl S { #[cfg(test)] fn c() { dbg!(1); } fn d() { print!(\"{}\", 1) } }\n",
    );
    assert_eq!(got, ["3:eprintln!", "7:print!"]);
    // A write to a standard stream, in any spelling, also inside another macro.
    let got = scan_source(
        "use std::io::Write;\nfn a() { let _ = writeln!(std::io::stderr().lock(), \"x\"); }\n\
         fn b(stdout: &mut dyn Write) { write!(stdout, \"y\").ok(); }\n\
         fn c(out: &mut dyn Write) { writeln!(out, \"fine\").ok(); }\n\
         fn d() { assert!(x, \"{}\", { eprint!(\"z\"); 1 }); }\n",
    );
    assert_eq!(
        got,
        [
            "2:writeln! to stderr",
            "2:io::stderr",
            "3:write! to stdout",
            "5:eprint!"
        ]
    );
    // Ending the process, by a path, a `use` or inside a macro.
    let got = scan_source(
        "fn a() { std::process::abort() }\nuse std::process::exit;\n\
         fn b() { use std::process; process::exit(1) }\n\
         macro_rules! m { () => { ::std::process::abort() } }\n\
         fn c() { let _ = std::io::stdout(); }\n",
    );
    assert_eq!(
        got,
        [
            "1:process::abort",
            "2:process::exit",
            "3:process::exit",
            "4:process::abort",
            "5:io::stdout"
        ]
    );
    // Asking whether stderr is a terminal is not a write (the command line may ask).
    let s = scan(
        &syn::parse_file(
            "fn a() -> bool { std::io::stderr().is_terminal() }\n\
             fn b() -> bool { IsTerminal::is_terminal(&io::stderr()) }\n\
             fn c() { io::stderr().lock(); }",
        )
        .unwrap(),
    );
    let asked: Vec<bool> = s
        .hits
        .iter()
        .map(|h| s.asked.contains(&(h.line, h.column)))
        .collect();
    assert_eq!(asked, [true, true, false]);
}

/// Every line on stderr goes through one function, `cli::say`, which shows control
/// characters as text (issue 44.6): in `cli` and `main` no `eprint!`/`eprintln!`, no
/// `write!` to stderr, and no other `io::stderr()` than `say`'s (asking whether stderr is a
/// terminal is not writing to it).
#[test]
fn every_stderr_line_goes_through_say() {
    let mut bad = Vec::new();
    let mut writers = Vec::new();
    for f in crate_files() {
        if f.test_only || (f.room != "cli" && f.room != "main") {
            continue;
        }
        let s = scan(&f.ast);
        for h in &s.hits {
            let at = format!("src/{}:{} ({})", f.rel.display(), h.line, h.within);
            if h.what.starts_with("eprint") || h.what.ends_with("! to stderr") {
                bad.push(format!("{at}: {}", h.what));
            }
        }
        // The `io::stderr` paths not only asked `is_terminal`.
        for h in &s.hits {
            if h.what == "io::stderr" && !s.asked.contains(&(h.line, h.column)) {
                writers.push(format!("src/{}:{} ({})", f.rel.display(), h.line, h.within));
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
    assert!(
        writers[0].starts_with("src/cli/mod.rs:") && writers[0].ends_with("(fn say)"),
        "{writers:?}"
    );
}

/// The product code that may reach the simulator (`backend::sim`), each with why: what
/// opens or serves a `sim:` target, or lists the simulator's presets and keys. A probe,
/// an analysis, a session or a report never sees it: it sees timings and data only.
const SIM_USERS: &[(&str, &str)] = &[
    ("device/mod.rs", "opens a sim: target"),
    (
        "serve/mod.rs",
        "serves the simulated card behind a block device",
    ),
    (
        "serve/fs.rs",
        "serves the simulated card behind a block device",
    ),
    (
        "commands/sim.rs",
        "`sim list`'s document and `sim serve`'s card",
    ),
    (
        "output/sim.rs",
        "`sim list`'s text names each preset's keys",
    ),
];

/// Reaching `backend::sim` from outside it: `backend::sim` anywhere, and in the rest of
/// the backend room `sim::`, `super::sim` and `self::sim`.
const SIM_PATHS: [(&str, &str); 1] = [("backend", "sim")];
const SIM_PATHS_IN_BACKEND: [(&str, &str); 4] = [
    ("backend", "sim"),
    ("super", "sim"),
    ("self", "sim"),
    ("", "sim"),
];

/// Probes never see the simulator (issue 46 point 8): outside `src/backend/sim/` only the
/// product code in [`SIM_USERS`] names it; test code may build simulated cards.
#[test]
fn only_what_opens_or_serves_a_target_sees_the_simulator() {
    let mut bad = Vec::new();
    let mut users = BTreeSet::new();
    for f in crate_files() {
        if f.test_only || f.rel.starts_with("backend/sim") {
            continue;
        }
        let pairs: &'static [(&str, &str)] = if f.room == "backend" {
            &SIM_PATHS_IN_BACKEND
        } else {
            &SIM_PATHS
        };
        let file = f.rel.to_string_lossy().to_string();
        for h in scan_for(&f.ast, pairs).hits {
            if !h.what.ends_with("sim") {
                continue;
            }
            if SIM_USERS.iter().any(|(u, _)| *u == file) {
                users.insert(file.clone());
            } else {
                bad.push(format!("src/{file}:{} ({}): {}", h.line, h.within, h.what));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the simulator seen outside what opens or serves a target (take the helper down to vocab/ or analysis/):\n{}",
        bad.join("\n")
    );
    // Each named user still uses it (a stale name would let a new user in unseen).
    let named: BTreeSet<String> = SIM_USERS.iter().map(|(u, _)| u.to_string()).collect();
    assert_eq!(users, named);
}

#[test]
fn the_simulator_scan_sees_each_way_in() {
    let hits = |text: &str, pairs: &'static [(&'static str, &'static str)]| {
        let s = scan_for(&syn::parse_file(text).unwrap(), pairs);
        s.hits.iter().map(|h| h.line).collect::<Vec<_>>()
    };
    let code = "use crate::backend::sim::config::is_pow2_or_3x;\n\
                use crate::backend::{sim::SimConfig, Backend};\n\
                fn f() -> bool { crate::backend::sim::config::x() }\n\
                #[cfg(test)]\nmod tests { use crate::backend::sim::SimDevice; }\n\
                fn g() { m!(crate::backend::sim::X) }\nfn h() { let sim = 1; sim.max(2); }\n";
    assert_eq!(hits(code, &SIM_PATHS), [1, 2, 3, 6]);
    let in_backend = "use super::sim::SimDevice;\nfn f() { sim::SimConfig::default(); }\n\
                      fn g(sim: u8) -> u8 { sim }\n";
    assert_eq!(hits(in_backend, &SIM_PATHS_IN_BACKEND), [1, 2]);
}

/// A document's envelope (schema, target, started_at) is made by `report::Document::new`
/// and `Document::for_target` (in report/mod.rs, with the literal they hold).
const ENVELOPE: [(&str, &str); 2] = [("Document", "new"), ("Document", "for_target")];

/// Documents are built in `src/commands/` only (docs/ARCHITECTURE.md): a command's
/// parameters in, its document out. Below it (compare, history, report's renderings) code
/// computes rows and figures; reading a saved document (`Document::from_json`) is not
/// building one. Test code may build documents to feed what it tests.
#[test]
fn only_the_commands_build_documents() {
    let mut bad = Vec::new();
    let mut builders = BTreeSet::new();
    for f in crate_files() {
        if f.test_only || f.rel == Path::new("report/mod.rs") {
            continue;
        }
        let mut s = Scan {
            pairs: &ENVELOPE,
            structs: &["Document"],
            ..Scan::default()
        };
        s.visit_file(&f.ast);
        for h in s.hits {
            if f.rel.starts_with("commands") && h.what.starts_with("Document::") {
                builders.insert(f.rel.display().to_string());
            } else {
                bad.push(format!(
                    "src/{}:{} ({}): {}",
                    f.rel.display(),
                    h.line,
                    h.within,
                    h.what
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a document built outside src/commands/ (return the rows; the command builds the document):\n{}",
        bad.join("\n")
    );
    assert!(
        builders.len() > 15,
        "the scan found too few commands building documents: {builders:?}"
    );
}

#[test]
fn the_document_scan_sees_a_document_built() {
    let mut s = Scan {
        pairs: &ENVELOPE,
        structs: &["Document"],
        ..Scan::default()
    };
    s.visit_file(
        &syn::parse_file(
            "fn a() -> Document { let mut d = Document::new(t, b); d }\n\
             fn b() -> report::Document { report::Document { schema: x, ..y } }\n\
             fn c() { let d = Document::from_json(n, &bytes); Document::for_target(&i, b); }\n\
             #[cfg(test)]\nfn t() { Document::new(t, b); }\n",
        )
        .unwrap(),
    );
    let got: Vec<String> = s
        .hits
        .iter()
        .map(|h| format!("{}:{}", h.line, h.what))
        .collect();
    assert_eq!(
        got,
        [
            "1:Document::new",
            "2:Document { .. }",
            "3:Document::for_target"
        ]
    );
}

/// The product code of `text`, comments and literals blanked, and every line of a
/// `#[cfg(test)]` item blank (lines keep their numbers).
fn product_code(text: &str) -> String {
    use syn::spanned::Spanned;
    #[derive(Default)]
    struct Tests(Vec<(usize, usize)>);
    impl Tests {
        fn test(&mut self, attrs: &[syn::Attribute], span: proc_macro2::Span) -> bool {
            let t = test_only(attrs);
            if t {
                self.0.push((span.start().line, span.end().line));
            }
            t
        }
    }
    impl<'ast> Visit<'ast> for Tests {
        fn visit_item(&mut self, i: &'ast syn::Item) {
            if !self.test(item_attrs(i), i.span()) {
                visit::visit_item(self, i);
            }
        }
        fn visit_impl_item(&mut self, i: &'ast syn::ImplItem) {
            if !self.test(impl_item_attrs(i), i.span()) {
                visit::visit_impl_item(self, i);
            }
        }
        fn visit_trait_item(&mut self, i: &'ast syn::TraitItem) {
            if !self.test(trait_item_attrs(i), i.span()) {
                visit::visit_trait_item(self, i);
            }
        }
    }
    let mut t = Tests::default();
    t.visit_file(&syn::parse_file(text).unwrap());
    code_only(text)
        .lines()
        .enumerate()
        .map(|(n, l)| {
            if t.0.iter().any(|&(a, b)| (a..=b).contains(&(n + 1))) {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn product_code_blanks_test_items_only() {
    let code = product_code(
        "#[cfg(test)]\nfn early() {}\nfn a() { let x = 1; }\n/* two\nlines */\n\
         #[cfg(test)]\nmod tests {\n fn b() {}\n}\nfn c() {}\n",
    );
    let lines: Vec<&str> = code.lines().collect();
    assert_eq!(lines[2], "fn a() { let x = 1; }");
    assert!(!code.contains("early") && !code.contains("fn b"), "{code}");
    assert_eq!(lines[9], "fn c() {}", "{code}");
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

/// build.rs's comments name only directories under `$OUT_DIR` it writes (issue 46 point
/// 8: `$OUT_DIR/embed` was named, and nothing wrote it).
#[test]
fn build_rs_names_only_the_directories_it_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("build.rs")).unwrap();
    let mut named = 0;
    for (at, _) in text.match_indices("$OUT_DIR/") {
        let name = ident_at(&text[at + "$OUT_DIR/".len()..]);
        named += 1;
        assert!(
            text.contains(&format!("out.join(\"{name}\")")),
            "build.rs names $OUT_DIR/{name}, which it does not write"
        );
    }
    assert!(named > 0, "build.rs names no directory of $OUT_DIR");
}

/// Issue 46 point 8: docs/development.md's count of the test binaries `cargo test` builds
/// is the real one: the library's, the command-line binary's and one per `tests/*.rs` or
/// `tests/*/main.rs`.
#[test]
fn the_development_guide_counts_the_test_binaries_there_are() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Test targets Cargo.toml declares with `test = false` (tests/board_e2e.rs) are built
    // only when named, not by a plain `cargo test`.
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let not_built: Vec<&str> = manifest
        .split("[[test]]")
        .skip(1)
        .map(|block| block.split("\n[").next().unwrap_or(""))
        .filter(|block| block.lines().any(|l| l.replace(' ', "") == "test=false"))
        .filter_map(|block| {
            let line = block.lines().find(|l| l.trim_start().starts_with("path"))?;
            Some(line.split('"').nth(1)?.trim_start_matches("tests/"))
        })
        .collect();
    assert!(not_built.contains(&"board_e2e.rs"), "{not_built:?}");
    let mut n = 2; // src/lib.rs and src/main.rs
    for e in std::fs::read_dir(root.join("tests")).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if not_built.contains(&name.as_str()) {
            continue;
        }
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
