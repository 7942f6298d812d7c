//! Sentences that talk about figures say what the figures say (issue 31.4): each test runs
//! a command on a `sim:` target or on files in a private temp dir and fails when a sentence
//! contradicts the figure it is about.

use crate::common;
use common::run_in;

/// A probe of a `sim:` card saves nothing (its session says so), so no warning may say the
/// partition-table regions' saved content was written back.
#[test]
fn a_simulated_probe_never_says_saved_content_was_written_back() {
    let state = tempfile::tempdir().unwrap();
    let (code, out, err) = run_in(state.path(), &["probe", "sim:fake-64g", "--write"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(err.contains("nothing is saved or restored"), "{err}");
    assert!(
        !out.contains("written back") && !err.contains("written back"),
        "{out}{err}"
    );
    assert!(out.contains("(nothing to restore)"), "{out}");
}

/// The fake verdict's text says each sentence once: no line, and no clause of a line, is
/// printed twice.
#[test]
fn the_fake_verdict_says_each_sentence_once() {
    let state = tempfile::tempdir().unwrap();
    let (code, out, err) = run_in(state.path(), &["probe", "sim:fake-64g", "--write"]);
    assert_eq!(code, 3, "{out}{err}");
    let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
    for (i, l) in lines.iter().enumerate() {
        assert!(!lines[..i].contains(l), "repeated line {l:?} in {out}");
        let clauses: Vec<&str> = l
            .split(['.', ';'])
            .map(str::trim)
            .filter(|c| c.len() > 20)
            .collect();
        for (j, c) in clauses.iter().enumerate() {
            assert!(!clauses[..j].contains(c), "repeated clause {c:?} in {l:?}");
        }
    }
    assert_eq!(out.matches("FAKE:").count(), 1, "{out}");
}

/// slc's table note uses English ordinals ("every 2nd", never "every 2th").
#[test]
fn the_slc_table_note_uses_english_ordinals() {
    let state = tempfile::tempdir().unwrap();
    let (code, out, err) = run_in(state.path(), &["slc", "sim:sd-a2-64g", "--write"]);
    assert_eq!(code, 0, "{out}{err}");
    let note = out
        .lines()
        .find(|l| l.starts_with("(every "))
        .unwrap_or_else(|| panic!("no note in {out}"));
    let word = note.split(' ').nth(1).unwrap();
    let n: u64 = word
        .trim_end_matches(|c: char| c.is_alphabetic())
        .parse()
        .unwrap();
    assert_eq!(word, flashscope::vocab::units::ordinal(n), "{note}");
    assert!(
        !note.contains("2th") && !note.contains("1th") && !note.contains("3th"),
        "{note}"
    );
}
