//! LAVA: one `lava-test-case NAME --result pass|fail [--measurement X --units U]` per
//! check. `--lava` prints these calls; inside a LAVA test shell (where `lava-test-case` is
//! on `PATH`) flashscope runs them itself, one per check, and prints its usual output.

use super::Exporter;
use crate::report::Document;
use crate::vocab::Check;
use crate::{Error, Result};
use std::io::{self, Write};
use std::path::PathBuf;

/// The LAVA test-case lines.
pub struct Lava;

impl Exporter for Lava {
    fn write(&self, doc: &Document, out: &mut dyn Write) -> io::Result<()> {
        for c in &doc.checks {
            writeln!(out, "lava-test-case {}", args(c).join(" "))?;
        }
        Ok(())
    }
}

/// The arguments of `lava-test-case` for one check. LAVA takes letters, digits, `_`, `-`
/// and `.` in a test case name, and units without spaces (`bytes/s`): anything else
/// becomes `_`.
pub fn args(c: &Check) -> Vec<String> {
    let mut a = vec![
        word(&c.name, ""),
        "--result".into(),
        match (c.passed, c.inconclusive) {
            (_, true) => "unknown",
            (true, false) => "pass",
            (false, false) => "fail",
        }
        .into(),
    ];
    if let Some(m) = c.measurement.filter(|m| m.is_finite()) {
        a.push("--measurement".into());
        a.push(m.to_string());
        a.push("--units".into());
        a.push(word(c.units.as_deref().unwrap_or("none"), "/"));
    }
    a
}

fn word(s: &str, also: &str) -> String {
    let w: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) || also.contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if w.is_empty() {
        "_".into()
    } else {
        w
    }
}

/// `lava-test-case` when it is on `PATH` (an executable regular file), as in a LAVA test
/// shell; `None` elsewhere.
pub fn helper_on_path() -> Option<PathBuf> {
    crate::sys::find_on_path("lava-test-case")
}

/// Run `helper` once per check; a call that cannot start or fails is an error.
pub fn call(helper: &std::path::Path, doc: &Document) -> Result<()> {
    for c in &doc.checks {
        let status = std::process::Command::new(helper)
            .args(args(c))
            .status()
            .map_err(|e| Error::io(format!("--lava: running {}", helper.display()), e))?;
        if !status.success() {
            return Err(Error::runtime(format!(
                "--lava: {} {} exited with {status}",
                helper.display(),
                c.name
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::export::tests::sample_doc;

    #[test]
    fn one_line_per_check_with_valid_names() {
        let mut out = Vec::new();
        Lava.write(&sample_doc(), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "lava-test-case probe.capacity --result fail --measurement 8000000000 --units bytes\n\
             lava-test-case bench.expect.seq_write --result pass\n"
        );
        // A check that could not decide is neither a pass nor a fail.
        let undecided = sample_doc().checks[1].clone().undecided_if(true);
        assert_eq!(args(&undecided)[2], "unknown");
        assert_eq!(undecided.outcome_word(), "not decided");
        let c = Check {
            inconclusive: false,
            threshold: None,
            name: "a b\"c".into(),
            passed: true,
            measurement: Some(1.5),
            units: Some("MB s/x".into()),
            message: String::new(),
        };
        assert_eq!(
            args(&c),
            [
                "a_b_c",
                "--result",
                "pass",
                "--measurement",
                "1.5",
                "--units",
                "MB_s/x"
            ]
        );
    }
}
