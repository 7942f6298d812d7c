//! `bench`'s text, drawn from its document alone.

use crate::report::results::BenchResult;
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::vocab::units::format_ns;
use crate::workload::bench::LINES;
use crate::workload::Dir;

/// `bench`'s text from its document: the class verdicts, the figures, the class table,
/// the `--expect` checks (also `auto --verbose`'s speed section).
pub fn render(doc: &Document) -> String {
    let Body::Bench(b) = &doc.body else {
        return String::new();
    };
    let (figures, classes) = (&b.samples, &b.classes);
    let (checks, failure) = (b.expect.as_deref(), b.error.as_deref());
    let mut s = String::new();
    let verdict = |k: &str| {
        doc.inferences
            .get(k)
            .map_or("?".to_string(), |i| match &i.value {
                Some(v) => format!("{} ({})", v.as_str().unwrap_or("?"), i.status_word()),
                None => "inconclusive".to_string(),
            })
    };
    s += &format!(
        "speed class: {}, app class: {}\n\n",
        verdict("speed_class"),
        verdict("app_class")
    );
    let mut t = Table::new(&[
        "test",
        "read MiB/s",
        "read IOPS",
        "read p99",
        "write MiB/s",
        "write IOPS",
        "write p99",
    ]);
    for line in LINES {
        let cell = |dir: Dir| -> [String; 3] {
            match figures.iter().find(|f| f.metric == line.metric(dir)) {
                Some(f) => [
                    format!("{:.2}", f.bw_bytes / crate::vocab::units::MIB_PER_S),
                    match f.per_second_spread {
                        Some(sp) => format!("{:.0} ±{:.0}%", f.iops, sp * 100.0),
                        None => format!("{:.0}", f.iops),
                    },
                    f.p99_ns.map_or("-".into(), |n| format_ns(n as f64)),
                ],
                None => ["-".into(), "-".into(), "-".into()],
            }
        };
        let [a, b, c] = cell(Dir::Read);
        let [d, e, f] = cell(Dir::Write);
        t.row(vec![line.label.to_string(), a, b, c, d, e, f]);
    }
    s += &t.render();
    for k in ["speed_class", "app_class"] {
        if let Some(i) = doc.inferences.get(k) {
            s += &format!("\n{k}: {}", i.evidence);
        }
    }
    s += "\n";
    if !classes.is_empty() {
        let mut t = Table::new(&["class", "result", "margin", "requirement"])
            .align(3, crate::report::table::Align::Left);
        for c in classes {
            t.row(vec![
                c.class.clone(),
                match (c.pass, &c.host_limited) {
                    (true, _) => "pass",
                    (false, Some(_)) => "host-limited",
                    (false, None) => "fail",
                }
                .into(),
                format!("{:+.0} %", c.margin * 100.0),
                c.requirement.clone(),
            ]);
        }
        s += "\n";
        s += &t.render();
        for c in classes {
            if let Some(why) = &c.host_limited {
                s += &format!(
                    "{}: not measurable on this host (limited by the host path): {}\n",
                    c.class,
                    crate::input::printable(why)
                );
            }
        }
    }
    if let Some(c) = checks {
        s += "\n";
        for r in c {
            s += &format!("{} {}\n", if r.pass { "ok  " } else { "FAIL" }, r.message);
        }
    }
    if let Body::Bench(BenchResult {
        runs: Some(runs), ..
    }) = &doc.body
    {
        s += &format!(
            "\neach figure is over {} interleaved runs (each run's figures: --json, runs; compare them with `flashscope compare`)\n",
            runs.len()
        );
    }
    if let Some(e) = failure {
        s += &format!("\nstopped early: {e}\n");
    }
    s
}
