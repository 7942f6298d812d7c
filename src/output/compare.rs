//! `compare`'s text, drawn from its document alone.

use crate::compare::{self};
use crate::report::table::{Align, Table};
use crate::report::Document;
use crate::vocab::units::short_number;

/// The sides, a table of figures and differences, one sentence per figure, the methods.
pub fn render(doc: &Document) -> String {
    let crate::report::Body::Compare(c) = &doc.body else {
        return String::new();
    };
    let (sides, rows) = (&c.sides, &c.samples);
    let mut s = format!("{}\n\n", c.verdict);
    for side in sides {
        s += &format!(
            "{}: {} ({} on {}{})\n",
            crate::input::printable(&side.label),
            crate::input::printable(&side.source),
            crate::input::printable(&side.kind),
            crate::input::printable(&side.target),
            if side.runs > 1 {
                format!(", {} runs", side.runs)
            } else {
                String::new()
            }
        );
    }
    s += "\n";
    let many = sides.len() > 2;
    let mut t = if many {
        Table::new(&[
            "test",
            "side",
            "A MiB/s",
            "side MiB/s",
            "vs A",
            "95% CI",
            "from",
        ])
        .align(1, Align::Left)
    } else {
        Table::new(&["test", "A MiB/s", "B MiB/s", "B vs A", "95% CI", "from"])
    };
    let mut bases: Vec<&str> = Vec::new();
    for r in rows {
        let mut cells = vec![r.test.clone()];
        if many {
            cells.push(r.side.clone());
        }
        cells.extend([
            short_number(r.a_bytes_per_s / crate::vocab::units::MIB_PER_S),
            short_number(r.b_bytes_per_s / crate::vocab::units::MIB_PER_S),
            compare::signed_pct(r.difference),
            match (r.ci_low, r.ci_high) {
                (Some(lo), Some(hi)) => {
                    format!("{} … {}", compare::signed_pct(lo), compare::signed_pct(hi))
                }
                _ => "-".into(),
            },
            match r.basis.as_str() {
                "runs" => format!("{}+{} runs", r.a_samples, r.b_samples),
                "per_second" => format!("{}+{} s", r.a_samples, r.b_samples),
                _ => "-".into(),
            },
        ]);
        t.row(cells);
        if !bases.contains(&r.basis.as_str()) {
            bases.push(&r.basis);
        }
    }
    s += &t.render();
    s += "\n";
    for r in rows {
        s += &format!("{}.\n", r.sentence);
    }
    s += "\n";
    for b in bases {
        s += match b {
            "runs" => "runs: the interval of B / A from each run's figure (Welch's t on the log ratio; bench --runs interleaves its runs, so drift falls on every test alike)\n",
            "per_second" => "s: the interval of B / A from each side's per-second rates (a circular block bootstrap, blocks as long as the seconds stay correlated, and a t quantile that counts blocks)\n",
            _ => "-: no interval (the sentence says why)\n",
        };
    }
    s
}
