//! The node_exporter textfile-collector format (Prometheus text exposition 0.0.4): one
//! HELP and TYPE line per metric family, `flashscope_` names with their unit suffix, the
//! device's labels (`device`, `model`, `serial`) on every sample, and one
//! `flashscope_check_passed{check="..."}` sample per check.

use super::{device_labels, Exporter};
use crate::report::Document;
use std::io::{self, Write};

/// The prefix of every metric name.
pub const PREFIX: &str = "flashscope_";

/// The Prometheus textfile exporter.
pub struct Prometheus;

struct Sample {
    labels: Vec<(String, String)>,
    value: f64,
}

struct Family {
    name: String,
    help: String,
    samples: Vec<Sample>,
}

impl Exporter for Prometheus {
    fn write(&self, doc: &Document, out: &mut dyn Write) -> io::Result<()> {
        let device: Vec<(String, String)> = device_labels(doc)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let mut families: Vec<Family> = Vec::new();
        let mut add = |name: String, help: &str, labels: Vec<(String, String)>, value: f64| {
            let sample = Sample { labels, value };
            match families.iter_mut().find(|f| f.name == name) {
                Some(f) => f.samples.push(sample),
                None => families.push(Family {
                    name,
                    help: help.to_string(),
                    samples: vec![sample],
                }),
            }
        };
        for m in &doc.metrics {
            let mut labels = device.clone();
            labels.extend(m.labels.iter().map(|(k, v)| (label_name(k), v.clone())));
            add(metric_name(&m.name), &m.help, labels, m.value);
        }
        for c in &doc.checks {
            let mut labels = device.clone();
            labels.push(("check".into(), c.name.clone()));
            add(
                metric_name("check_passed"),
                "1 when the check passed, 0 when it did not: the device failed it (JUnit failure, exit code 3) or it could not decide (JUnit error, exit code 1)",
                labels,
                if c.passed { 1.0 } else { 0.0 },
            );
        }
        for f in &families {
            writeln!(out, "# HELP {} {}", f.name, escape_help(&f.help))?;
            // A `_total` name is a count that only grows (media errors): a counter, as
            // the naming convention says and promtool checks; everything else a gauge.
            let kind = if f.name.ends_with("_total") {
                "counter"
            } else {
                "gauge"
            };
            writeln!(out, "# TYPE {} {kind}", f.name)?;
            for s in &f.samples {
                write!(out, "{}", f.name)?;
                if !s.labels.is_empty() {
                    let inner: Vec<String> = s
                        .labels
                        .iter()
                        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                        .collect();
                    write!(out, "{{{}}}", inner.join(","))?;
                }
                writeln!(out, " {}", value(s.value))?;
            }
        }
        Ok(())
    }
}

/// `flashscope_` + the name, with any character Prometheus does not allow as `_`.
fn metric_name(name: &str) -> String {
    format!("{PREFIX}{}", sanitize(name, true))
}

fn label_name(name: &str) -> String {
    let s = sanitize(name, false);
    if s.starts_with(|c: char| c.is_ascii_digit()) || s.starts_with("__") || s.is_empty() {
        format!("l_{s}")
    } else {
        s
    }
}

fn sanitize(name: &str, colon: bool) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// HELP text: backslash and newline escaped.
fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A label value: backslash, double quote and newline escaped.
fn escape_label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A sample value as Prometheus writes it (`+Inf`, `-Inf`, `NaN`).
fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::export::tests::sample_doc;

    fn render(doc: &Document) -> String {
        let mut out = Vec::new();
        Prometheus.write(doc, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn label_values_escape_quotes_backslashes_and_newlines() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(escape_help("x\\y\nz"), "x\\\\y\\nz");
        let text = render(&sample_doc());
        assert!(text.contains(r#"model="Card \"X\" \\ 1\nline""#), "{text}");
        // No raw newline inside a sample line: every line is a comment or a sample.
        for line in text.lines() {
            assert!(
                line.starts_with("# ") || line.starts_with("flashscope_"),
                "{line}"
            );
        }
    }

    #[test]
    fn one_family_per_name_with_device_labels_and_checks() {
        let text = render(&sample_doc());
        assert_eq!(
            text.matches("# TYPE flashscope_bench_iops gauge").count(),
            1
        );
        assert!(text.contains(r#"job="rand_read"} 1208.5"#), "{text}");
        assert!(text.contains(r#"job="rand_write"} 3"#), "{text}");
        assert!(
            text.contains(r#"flashscope_usable_bytes{device="sim:sd-16g","#),
            "{text}"
        );
        assert!(text.contains(r#"check="probe.capacity"} 0"#), "{text}");
        assert!(
            text.contains(r#"check="bench.expect.seq_write"} 1"#),
            "{text}"
        );
    }

    #[test]
    fn names_and_values_are_valid_exposition() {
        assert_eq!(metric_name("a-b.c"), "flashscope_a_b_c");
        assert_eq!(label_name("0x"), "l_0x");
        assert_eq!(value(f64::NAN), "NaN");
        assert_eq!(value(f64::INFINITY), "+Inf");
        assert_eq!(value(1e21), "1000000000000000000000");
        assert_eq!(value(0.000125), "0.000125");
    }
}
