//! Figures the docs state about flashscope itself come from a script (issue 31 point 10):
//! every `scripts/NAME` the README and docs name exists, the memory table of docs/board.md
//! lists exactly the commands and budgets `scripts/board-figures` checks, the budgets the
//! docs give for the history are the ones `scripts/ci-figures` passes to
//! `scripts/history-bench`, and each peer-benchmark table says it is dated and names the
//! command that reproduces it. The figures themselves are measured by `scripts/ci-figures`
//! (CI's figures phase), not here: a timed test would be at the mercy of the machine.

use crate::readme::documents;
use std::collections::BTreeMap;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Text with every run of whitespace (line breaks included) made one space, so a phrase
/// the docs wrap over two lines is still found.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `scripts/NAME` words of a text.
fn script_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("scripts/") {
        let tail = &rest[i + "scripts/".len()..];
        let name: String = tail
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect();
        let name = name.trim_end_matches('.').to_string();
        // `tests/data/.../scripts/` or a path ending in a slash names no script.
        let before = &rest[..i];
        if !name.is_empty() && !before.ends_with('/') {
            out.push(name);
        }
        rest = &rest[i + "scripts/".len()..];
    }
    out
}

#[test]
fn every_script_the_docs_name_exists() {
    let mut missing = Vec::new();
    let mut named = 0;
    for (doc, text) in documents() {
        for name in script_names(&text) {
            named += 1;
            if !root().join("scripts").join(&name).is_file() {
                missing.push(format!("{doc}: scripts/{name}"));
            }
        }
    }
    assert!(
        named >= 10,
        "the docs name only {named} scripts: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "the docs name scripts that do not exist: {missing:?}"
    );
}

#[test]
fn script_names_are_read_as_a_reader_sees_them() {
    assert_eq!(
        script_names("run `scripts/board-figures dist` and scripts/release. Then x/scripts/y"),
        ["board-figures", "release"]
    );
}

/// `rss BUDGET_MIB COMMAND...` lines of scripts/board-figures: command → budget.
fn script_budgets() -> BTreeMap<String, u32> {
    read("scripts/board-figures")
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("rss ")?;
            let (budget, command) = rest.split_once(' ')?;
            Some((command.trim().to_string(), budget.parse().ok()?))
        })
        .collect()
}

/// The rows of docs/board.md's memory table: `command` → budget in MiB.
fn doc_budgets(board: &str) -> BTreeMap<String, u32> {
    let start = board
        .find("| command | peak RSS under |")
        .expect("docs/board.md has lost its memory table (| command | peak RSS under |)");
    board[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let command = cells[1]
                .split('`')
                .nth(1)
                .unwrap_or_else(|| panic!("row {l}"));
            let budget = cells[2]
                .strip_suffix(" MiB")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("budget of row {l}"));
            (command.to_string(), budget)
        })
        .collect()
}

#[test]
fn the_board_memory_table_is_what_board_figures_checks() {
    let board = read("docs/board.md");
    let script = script_budgets();
    assert!(script.len() >= 10, "scripts/board-figures: {script:?}");
    assert_eq!(
        doc_budgets(&board),
        script,
        "docs/board.md's table and scripts/board-figures' `rss BUDGET COMMAND` lines differ"
    );
    let flat_board = flat(&board);
    assert!(flat_board.contains("`scripts/board-figures` measures them all against it"));
    let ci = read("scripts/ci-figures");
    assert!(
        ci.contains("CHECK=1 FLASHSCOPE=\"$bin\" scripts/board-figures"),
        "{ci}"
    );
}

#[test]
fn the_probe_time_the_docs_state_is_the_one_ci_checks() {
    let ci = read("scripts/ci-figures");
    assert!(
        ci.contains("-le 30000000000"),
        "scripts/ci-figures: probe's 30 s check"
    );
    let capacity = flat(&read("docs/capacity.md"));
    assert!(capacity
        .contains("in under 30 s of the simulated card's time; `scripts/ci-figures` checks it"));
}

#[test]
fn the_quick_bench_time_the_docs_state_is_the_one_ci_checks() {
    let ci = read("scripts/ci-figures");
    assert!(ci.contains("-ge 12000000000") && ci.contains("-le 18000000000"));
    let fleet = flat(&read("docs/fleet.md"));
    assert!(fleet.contains("about 15 s of reads, `scripts/ci-figures` checks it"));
}

#[test]
fn the_history_budgets_the_docs_state_are_the_ones_ci_checks() {
    let ci = read("scripts/ci-figures");
    assert!(
        ci.contains("CHECK=1 RUNS=20000 MAX_RSS_MIB=16 MAX_SECONDS=10"),
        "scripts/ci-figures no longer checks the history at the docs' budget"
    );
    let board = flat(&read("docs/board.md"));
    assert!(
        board.contains("over 20,000 stored runs")
            && board.contains("each peak under 16 MiB and take under 10 s"),
        "docs/board.md no longer states the history budget scripts/ci-figures checks"
    );
    let history = flat(&read("docs/history.md"));
    assert!(history.contains("over 20,000 runs each history command peaks under 16 MiB"));
}

/// The section (from its `#` heading to the next) of `doc` holding `marker`.
fn section<'a>(doc: &'a str, marker: &str) -> &'a str {
    let at = doc
        .find(marker)
        .unwrap_or_else(|| panic!("the table {marker:?} is gone"));
    let start = doc[..at].rfind("\n#").map_or(0, |i| i + 1);
    let end = doc[at..].find("\n#").map_or(doc.len(), |i| at + i);
    &doc[start..end]
}

#[test]
fn each_benchmark_table_is_dated_and_names_its_command() {
    // (doc, the table's header, what the section must also hold)
    let tables = [
        (
            "docs/peer-comparison.md",
            "| device | job | flashscope | fio |",
            ["dated benchmark", "scripts/bench-vs-fio"],
        ),
        (
            "docs/geometry.md",
            "| load | flashscope before | flashscope after |",
            ["dated benchmark", "scripts/align-under-load"],
        ),
        (
            "docs/geometry.md",
            "| served card | quiet, 3 runs | time quiet |",
            ["dated benchmark", "scripts/align-four-cards"],
        ),
        (
            "docs/serve.md",
            "| what | figure |",
            ["dated benchmark", "cargo test --test serve -- --nocapture"],
        ),
    ];
    for (doc, header, needs) in tables {
        let text = read(doc);
        let sec = flat(section(&text, header)).to_lowercase();
        for need in needs {
            assert!(
                sec.contains(&need.to_lowercase()),
                "{doc}: the section of the table {header:?} no longer says {need:?}"
            );
        }
    }
}
