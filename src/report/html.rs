//! The HTML report: one or more result documents in one self-contained page (inline CSS
//! and SVG, no script, no network), readable on screen and on paper. Output only.
//!
//! Charts are drawn from each command's typed samples ([`super::Body`]); the fio-shaped
//! `jobs` of `bench` and `io` (fio's JSON, free-form by design) are read into fio's latency
//! percentiles ([`charts::FioJobLatency`]).

use super::charts::{self, FioJobLatency};
use super::results::ProbeSample;
use super::svg::escape;
use super::Document;
use crate::device::TargetInfo;
use crate::vocab::units::{format_bytes, format_ns, format_rate};
use crate::vocab::{Inference, Status};
use serde::de::DeserializeOwned;
use std::fmt::Write;

/// The document's top-level JSON fields: the page shows any command's parameters, raw
/// samples and other fields generically, as tables and folded JSON. Of the samples only
/// the first [`RAW_ROWS`] become JSON values.
fn view(d: &Document) -> super::fields::TopLevel {
    super::fields::top_level(d, RAW_ROWS).unwrap_or(super::fields::TopLevel {
        fields: serde_json::Map::new(),
        samples: 0,
        first_samples: Vec::new(),
    })
}

/// Rows of a raw sample table shown before the rest is left out (the JSON has them all).
pub const RAW_ROWS: usize = 1000;

const CSS: &str = r#"
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1100px; color: #111; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #444; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-bottom: 0.3em; }
.meta { color: #444; }
.verdict { font-size: 1.15em; font-weight: bold; background: #f3f3f3; border-left: 6px solid #555; padding: 0.5em 0.8em; }
.verdict.failed { border-left-color: #d62728; }
table { border-collapse: collapse; margin: 0.4em 0 1em; font-size: 0.92em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.confident { color: #176117; font-weight: bold; }
.tentative { color: #8a5a00; font-weight: bold; }
.inconclusive { color: #8b1c1c; font-weight: bold; }
.pass { color: #176117; font-weight: bold; }
.fail { color: #8b1c1c; font-weight: bold; }
ul.warnings li { color: #8a5a00; }
figure.chart { margin: 0.8em 0; }
figure.chart svg { max-width: 100%; height: auto; border: 1px solid #ddd; }
figure.chart figcaption { font-size: 0.9em; color: #444; }
details { margin: 0.4em 0; }
summary { cursor: pointer; font-weight: bold; }
pre { white-space: pre-wrap; word-break: break-all; font-size: 0.85em; background: #f8f8f8; padding: 0.5em; }
nav ul { columns: 2; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  nav { display: none; }
  section.document { break-before: page; }
  section.document:first-of-type { break-before: auto; }
  figure.chart, table, .verdict { break-inside: avoid; }
  figure.chart svg { border: none; }
  details > summary { list-style: none; }
  a { color: inherit; text-decoration: none; }
}
"#;

/// Render `docs` as one HTML page into `out`, created before the run measured anything
/// and renamed into place now; an error names the file (exit 1).
pub fn write_page(docs: &[Document], out: &super::output_file::OutputFile) -> crate::Result<()> {
    out.write(render(docs).as_bytes())
}

/// Render `docs` into one HTML page. Every string that came from a document is escaped.
pub fn render(docs: &[Document]) -> String {
    let mut h = String::new();
    let targets: Vec<String> = docs.iter().map(|d| d.target.name()).collect();
    let mut unique = targets.clone();
    unique.sort();
    unique.dedup();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        h,
        "<title>flashscope report: {}</title>\n<style>{CSS}</style>\n</head>\n<body>",
        escape(&unique.join(", "))
    );
    let _ = writeln!(
        h,
        "<header><h1>flashscope report</h1><p class=\"meta\">flashscope {} · rendered {} · target{}: {} · {} document{}</p></header>",
        env!("CARGO_PKG_VERSION"),
        utc_now(),
        if unique.len() == 1 { "" } else { "s" },
        escape(&unique.join(", ")),
        docs.len(),
        if docs.len() == 1 { "" } else { "s" }
    );
    if docs.len() > 1 {
        h.push_str("<nav><ul>\n");
        for (i, (d, t)) in docs.iter().zip(&targets).enumerate() {
            let _ = writeln!(
                h,
                "<li><a href=\"#doc{i}\">{} on {}</a></li>",
                escape(d.command()),
                escape(t)
            );
        }
        h.push_str("</ul></nav>\n");
    }
    for (i, d) in docs.iter().enumerate() {
        document(&mut h, i, d);
    }
    h.push_str("</body>\n</html>\n");
    h
}

fn document(h: &mut String, i: usize, d: &Document) {
    let _ = writeln!(
        h,
        "<section class=\"document\" id=\"doc{i}\">\n<h2>{} on {}</h2>",
        escape(d.command()),
        escape(&d.target.name())
    );
    let target: TargetInfo = d.target.info().cloned().unwrap_or_default();
    // A document about saved results (compare) has no device to describe.
    let device = if target.size_bytes > 0 {
        format!(
            "{} announced, {}-byte logical sectors · ",
            format_bytes(target.size_bytes),
            target.logical_sector_bytes
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        h,
        "<p class=\"meta\">{device}{} · wrote {}</p>",
        escape(&elapsed_words(d)),
        format_bytes(d.bytes_written)
    );
    let failed = d.checks.iter().any(|c| !c.passed);
    let _ = writeln!(
        h,
        "<p class=\"verdict{}\">{}</p>",
        if failed { " failed" } else { "" },
        escape(&headline(d))
    );
    match &d.body {
        super::Body::Compare(c) => compare_table(h, &c.samples),
        _ => inferences(h, d),
    }
    checks(h, d);
    if !d.warnings.is_empty() {
        h.push_str("<h3>Warnings</h3>\n<ul class=\"warnings\">\n");
        for w in &d.warnings {
            let _ = writeln!(
                h,
                "<li><b>{}</b>: {}</li>",
                escape(w.kind()),
                escape(&w.to_string())
            );
        }
        h.push_str("</ul>\n");
    }
    if let super::Body::Auto(a) = &d.body {
        if !a.advice.is_empty() {
            h.push_str("<h3>What to do</h3>\n<ul>\n");
            for a in &a.advice {
                let _ = write!(h, "<li><b>{}</b>: {}", escape(&a.topic), escape(&a.text));
                if let Some(c) = &a.command {
                    let _ = write!(h, "<br><code>{}</code>", escape(c));
                }
                h.push_str("</li>\n");
            }
            h.push_str("</ul>\n");
        }
    }
    let figures = charts_of(d, &target);
    if !figures.is_empty() {
        h.push_str("<h3>Charts</h3>\n");
    }
    for f in figures {
        match f {
            Ok(Figure { svg, caption }) if caption.is_empty() => {
                let _ = writeln!(h, "<figure class=\"chart\">{svg}</figure>");
            }
            Ok(Figure { svg, caption }) => {
                let _ = writeln!(
                    h,
                    "<figure class=\"chart\">{svg}<figcaption>{}</figcaption></figure>",
                    escape(&caption)
                );
            }
            Err(e) => {
                let _ = writeln!(h, "<p class=\"fail\">no chart: {}</p>", escape(&e));
            }
        }
    }
    let fields = view(d);
    plan(h, d, &fields.fields);
    raw(h, &fields);
    h.push_str("</section>\n");
}

/// Which clock a document's `elapsed_ns` was counted on, by the command that wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Elapsed {
    /// The time of the test's own I/O on the device's clock (virtual on `sim:`): bench
    /// (its tests summed; preparing, saving and restoring not counted), probe, verify
    /// (its write and read phases) and io.
    DeviceIo,
    /// Wall time from the command's start to its document: every other command.
    Wall,
}

/// What `d.elapsed_ns` counts (see [`Elapsed`]).
pub(crate) fn elapsed_clock(d: &Document) -> Elapsed {
    match d.command() {
        "bench" | "probe" | "verify" | "io" => Elapsed::DeviceIo,
        _ => Elapsed::Wall,
    }
}

/// The meta line's duration, named for what it is: "wall time 48.9 ms", or "device
/// time of the test I/O 7.5 s (simulated clock)" — never a bare "took" beside a figure
/// of another clock.
fn elapsed_words(d: &Document) -> String {
    let t = format_ns(d.elapsed_ns as f64);
    let simulated = d
        .target
        .info()
        .is_some_and(|i| matches!(i.kind, crate::device::TargetKind::Sim));
    let mut s = match elapsed_clock(d) {
        Elapsed::DeviceIo if simulated => {
            format!("device time of the test I/O {t} (simulated clock)")
        }
        Elapsed::DeviceIo => format!("device time of the test I/O {t}"),
        Elapsed::Wall => format!("wall time {t}"),
    };
    if let super::Body::Align(a) = &d.body {
        if a.parameters.device_elapsed_ns > 0 {
            s += &format!(
                " · device time of the test I/O {}",
                format_ns(a.parameters.device_elapsed_ns as f64)
            );
        }
    }
    s
}

/// The document's one-line answer: its verdict when it has one, else its inferences.
fn headline(d: &Document) -> String {
    let failed: Vec<&str> = d
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.message.as_str())
        .collect();
    let verdict = match &d.body {
        super::Body::Probe(p) => Some(p.verdict.as_str()),
        super::Body::Auto(a) => a.verdict.as_deref(),
        // compare's answer is its text's first line; its inferences are differences.
        super::Body::Compare(c) => Some(c.verdict.as_str()),
        _ => None,
    };
    if let Some(v) = verdict {
        // A failed check (a claimed class not met) is part of the answer too: a page
        // whose verdict box said only "OK" would hide it. A check whose message the
        // verdict already says (probe's FAKE banner is both) is not said twice.
        let more: Vec<&str> = failed.into_iter().filter(|m| !v.contains(m)).collect();
        return match more.is_empty() {
            true => v.to_string(),
            false => format!("{v} — failed: {}", more.join("; ")),
        };
    }
    let found: Vec<String> = d
        .inferences
        .iter()
        .filter(|(_, i)| i.status != Status::Inconclusive)
        .map(|(k, i)| format!("{} {} ({})", words(k), value_text(k, i), i.status_word()))
        .collect();
    let failed: Vec<&str> = d
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.as_str())
        .collect();
    let mut s = if found.is_empty() {
        if d.inferences.is_empty() {
            format!(
                "{}: measurements only (this command infers nothing)",
                d.command()
            )
        } else {
            format!("{}: inconclusive (see the evidence below)", d.command())
        }
    } else {
        found.join("; ")
    };
    if !failed.is_empty() {
        s.push_str(&format!(" — failed: {}", failed.join(", ")));
    }
    s
}

/// `erase_block_bytes` → "erase block".
fn words(key: &str) -> String {
    let k = ["_bytes_per_s", "_bytes", "_ns"]
        .iter()
        .find_map(|s| key.strip_suffix(s))
        .unwrap_or(key);
    k.replace('_', " ")
}

/// An inference's value in units its name gives (`_bytes`, `_bytes_per_s`, `_ns`).
fn value_text(key: &str, i: &Inference) -> String {
    let Some(v) = &i.value else {
        return "—".into();
    };
    match v.as_f64() {
        Some(n) if key.ends_with("_bytes_per_s") => format_rate(n),
        Some(n) if key.ends_with("_bytes") && n >= 0.0 => format_bytes(n as u64),
        Some(n) if key.ends_with("_ns") => format_ns(n),
        _ => match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        },
    }
}

/// compare's figures as its text prints them (rates in MiB/s, the difference as a signed
/// percentage), one numbered row per metric and side in the order the chart numbers them,
/// with the sentence that says how sure each difference is.
fn compare_table(h: &mut String, rows: &[crate::report::rows::Row]) {
    if rows.is_empty() {
        return;
    }
    let many = rows.iter().any(|r| r.side != rows[0].side);
    h.push_str("<h3>Figures</h3>\n<table class=\"compare\">\n<tr><th>#</th><th>test</th>");
    if many {
        h.push_str("<th>side</th>");
    }
    h.push_str("<th>A MiB/s</th><th>side MiB/s</th><th>side vs A</th><th>95 % interval</th><th>what it means</th></tr>\n");
    for r in rows {
        let n = charts::compare_number(rows, &r.metric);
        let _ = write!(
            h,
            "<tr><td class=\"num\">{n}</td><td>{}</td>",
            escape(&r.test)
        );
        if many {
            let _ = write!(h, "<td>{}</td>", escape(&r.side));
        }
        let mib = |v: f64| crate::vocab::units::short_number(v / crate::vocab::units::MIB_PER_S);
        let ci = match (r.ci_low, r.ci_high) {
            (Some(lo), Some(hi)) => format!(
                "{} … {}",
                crate::vocab::units::signed_pct(lo),
                crate::vocab::units::signed_pct(hi)
            ),
            _ => "-".into(),
        };
        let _ = writeln!(
            h,
            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            mib(r.a_bytes_per_s),
            mib(r.b_bytes_per_s),
            escape(&crate::vocab::units::signed_pct(r.difference)),
            escape(&ci),
            escape(&r.sentence)
        );
    }
    h.push_str("</table>\n");
}

fn inferences(h: &mut String, d: &Document) {
    if d.inferences.is_empty() {
        return;
    }
    h.push_str("<h3>Inferences</h3>\n<table class=\"inferences\">\n<tr><th>what</th><th>value</th><th>status</th><th>confidence</th><th>evidence</th></tr>\n");
    for (k, i) in &d.inferences {
        let status = i.status_word();
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"{status}\">{status}</td><td class=\"num\">{:.2}</td><td>{}</td></tr>",
            escape(k),
            escape(&value_text(k, i)),
            i.confidence,
            escape(&i.evidence)
        );
    }
    h.push_str("</table>\n");
}

fn checks(h: &mut String, d: &Document) {
    if d.checks.is_empty() {
        return;
    }
    h.push_str("<h3>Checks</h3>\n<table class=\"checks\">\n<tr><th>check</th><th>result</th><th>figure</th><th>what was required and found</th></tr>\n");
    for c in &d.checks {
        let figure = match (c.measurement, c.units.as_deref()) {
            (Some(m), Some("bytes/s")) => format_rate(m),
            (Some(m), Some("bytes")) if m >= 0.0 => format_bytes(m as u64),
            (Some(m), Some("seconds")) => format_ns(m * 1e9),
            (Some(m), Some(u)) => format!("{} {u}", crate::vocab::units::short_number(m)),
            (Some(m), None) => crate::vocab::units::short_number(m),
            _ => String::new(),
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"{}\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            escape(&c.name),
            if c.passed { "pass" } else { "fail" },
            c.outcome_word(),
            escape(&figure),
            escape(&c.message)
        );
    }
    h.push_str("</table>\n");
}

/// A free-form part of a document (fio's jobs, an inference's value) as the type it holds.
fn typed<T: DeserializeOwned>(v: Option<&serde_json::Value>, what: &str) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("the document has no {what}"))?;
    T::deserialize(v)
        .map_err(|e| format!("the {what} are not in the shape this flashscope writes: {e}"))
}

/// A chart and what to read under it.
struct Figure {
    svg: String,
    caption: String,
}

impl From<String> for Figure {
    fn from(svg: String) -> Self {
        Figure {
            svg,
            caption: String::new(),
        }
    }
}

/// The SVG of every chart the document's command has, or why one could not be drawn.
fn charts_of(d: &Document, target: &TargetInfo) -> Vec<Result<Figure, String>> {
    use super::Body;
    let title = |what: &str| format!("{what}: {}", target.spec);
    let mut out = Vec::new();
    match &d.body {
        Body::Align(a) if !a.samples.is_empty() => {
            let points = a.points();
            out.push(Ok(charts::align(&points, &d.inferences, &title("align"))
                .to_svg()
                .into()));
        }
        Body::Scatter(sc) if !sc.samples.is_empty() => {
            let read = sc.parameters.block_bytes * sc.parameters.span as u64;
            out.push(Ok(charts::scatter(&sc.samples, read, &title("scatter"))
                .to_svg()
                .into()));
        }
        Body::Interval(iv) if !iv.samples.is_empty() => {
            let points: Vec<_> = iv
                .samples
                .iter()
                .map(|r| crate::probe::interval::IntervalSample {
                    bytes: r.bytes,
                    offsets: r.offsets.clone(),
                    times_ns: r.times_ns.clone(),
                })
                .map(|s| s.point())
                .collect();
            // The fitted line from the two inferences it gave (none when inconclusive).
            let access = d
                .inferences
                .get("access_time_ns")
                .and_then(|i| i.value.as_ref()?.as_f64());
            let rate = d
                .inferences
                .get("throughput_bytes_per_s")
                .and_then(|i| i.value.as_ref()?.as_f64())
                .filter(|r| *r > 0.0);
            let line = access.zip(rate).map(|(a, r)| (a, 1e9 / r));
            out.push(Ok(charts::interval(&points, line, &title("interval"))
                .to_svg()
                .into()));
        }
        Body::Slc(s) if !s.samples.is_empty() => {
            out.push(Ok(charts::slc(&s.samples).to_svg().into()));
        }
        Body::Bench(b) if !b.samples.is_empty() => {
            out.push(Ok(charts::bench_per_second(&b.samples).to_svg().into()));
            out.push(
                typed::<Vec<FioJobLatency>>(Some(&serde_json::json!(b.jobs)), "jobs").map(|j| {
                    charts::latency_percentiles(&j, &title("bench: latency percentiles"))
                        .to_svg()
                        .into()
                }),
            );
        }
        Body::Io(b) if !b.samples.is_empty() => {
            out.push(Ok(charts::io_per_second(&b.samples).to_svg().into()));
            out.push(
                typed::<Vec<FioJobLatency>>(Some(&serde_json::json!(b.jobs)), "jobs").map(|j| {
                    charts::latency_percentiles(&j, &title("io: latency percentiles"))
                        .to_svg()
                        .into()
                }),
            );
        }
        Body::Compare(c) => {
            let rows = &c.samples;
            // Numbered as the Figures table above numbers them (charts::compare_number).
            let mut seen: Vec<&crate::report::rows::Row> = Vec::new();
            for r in rows {
                if !seen.iter().any(|s| s.metric == r.metric) {
                    seen.push(r);
                }
            }
            let names: Vec<String> = seen
                .iter()
                .map(|r| format!("{} = {}", charts::compare_number(rows, &r.metric), r.test))
                .collect();
            out.push(Ok(Figure {
                svg: charts::compare(rows).to_svg(),
                caption: format!(
                    "Figures as numbered in the table above: {}.",
                    names.join("; ")
                ),
            }));
        }
        Body::Probe(p) if !p.samples.is_empty() => {
            let (mut spans, mut scans) = (Vec::new(), Vec::new());
            for x in &p.samples {
                match x {
                    ProbeSample::Span(sp) => spans.push(sp.clone()),
                    ProbeSample::Scan(sc) => scans.push(format!(
                        "{} reads between {} and {}, {} returning another offset's stamp",
                        sc.reads,
                        format_bytes(sc.from),
                        format_bytes(sc.to),
                        sc.hits
                    )),
                }
            }
            out.push(Ok(Figure {
                svg: charts::probe_surface(target.size_bytes, &spans, &p.probe.alias_hits),
                caption: format!(
                    "Cells hold the spans written and read back and the first alias hits; the alias scans ({}) record no other positions, so their reads are not drawn.",
                    if scans.is_empty() { "none".to_string() } else { scans.join("; ") }
                ),
            }));
        }
        Body::Verify(v) if !v.samples.is_empty() => {
            let extents: Result<Vec<crate::capacity::extent::Extent>, String> = match d
                .inferences
                .get("bad_extents")
                .and_then(|i| i.value.as_ref())
            {
                Some(v) => typed(Some(v), "bad extents"),
                None => Ok(Vec::new()),
            };
            out.push(Ok(charts::verify_throughput(
                &v.samples,
                v.parameters.range_offset,
                v.parameters.range_length,
            )
            .to_svg()
            .into()));
            out.push(
                extents.map(|e| charts::verify_surface(target.size_bytes, &v.samples, &e).into()),
            );
        }
        Body::OpenAu(o) if !o.samples.is_empty() => {
            let n = d.inferences.get("open_au").and_then(|i| i.as_u64());
            out.push(Ok(charts::open_au(&o.samples, n).to_svg().into()));
        }
        Body::Fat(f) if !f.samples.is_empty() => {
            out.push(Ok(charts::fat(&f.samples).to_svg().into()));
        }
        Body::Program(p) if !p.samples.is_empty() => {
            out.push(Ok(charts::program(&p.samples).to_svg().into()));
        }
        Body::FsSeq(s) if !s.timeline.is_empty() => {
            if let super::Target::Filesystem(t) = &d.target {
                out.push(Ok(charts::fs_seq(&s.samples, &s.timeline, &t.fs.dir).into()));
            }
        }
        Body::FsFiles(f) if !f.samples.is_empty() => {
            if let super::Target::Filesystem(t) = &d.target {
                out.push(Ok(charts::fs_files(&f.samples, &t.fs.dir).into()));
            }
        }
        Body::FsMatrix(m) if !m.samples.is_empty() => {
            for t in crate::fs::matrix::MatrixTest::ALL {
                out.push(Ok(charts::fs_matrix(m, t).into()));
            }
        }
        _ => {}
    }
    out
}

/// The plan (parameters) against what was written (bytes, the preserve block).
fn plan(h: &mut String, d: &Document, fields: &serde_json::Map<String, serde_json::Value>) {
    h.push_str("<h3>Plan and what was written</h3>\n<table class=\"plan\">\n");
    let _ = writeln!(
        h,
        "<tr><th>bytes written</th><td class=\"num\">{} ({} bytes)</td></tr>",
        format_bytes(d.bytes_written),
        d.bytes_written
    );
    if let Some(p) = fields.get("preserve").and_then(|p| p.as_object()) {
        for (k, v) in p {
            let _ = writeln!(
                h,
                "<tr><th>preserve: {}</th><td class=\"num\">{}</td></tr>",
                escape(k),
                escape(&scalar(k, v))
            );
        }
    }
    if let Some(j) = fields.get("journal").and_then(|j| j.as_str()) {
        let _ = writeln!(h, "<tr><th>journal</th><td>{}</td></tr>", escape(j));
    }
    if let Some(p) = fields.get("parameters").and_then(|p| p.as_object()) {
        for (k, v) in p {
            let _ = writeln!(
                h,
                "<tr><th>{}</th><td class=\"num\">{}</td></tr>",
                escape(k),
                escape(&scalar(k, v))
            );
        }
    }
    h.push_str("</table>\n");
}

/// A JSON value for a table cell: sizes and times in units by the field's name.
fn scalar(key: &str, v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "—".into(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => match n.as_u64() {
            Some(u) if key.ends_with("_bytes_per_s") => format_rate(u as f64),
            Some(u) if key.ends_with("bytes") && u >= 1024 => format!("{} ({u})", format_bytes(u)),
            Some(u) if key.ends_with("_ns") => format_ns(u as f64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// The raw samples as a folded table, and the rest of the document as folded JSON.
fn raw(h: &mut String, view: &super::fields::TopLevel) {
    let fields = &view.fields;
    let rows = &view.first_samples;
    if !rows.is_empty() {
        let mut cols: Vec<&str> = Vec::new();
        for r in rows.iter().take(RAW_ROWS) {
            if let Some(o) = r.as_object() {
                for k in o.keys() {
                    if !cols.contains(&k.as_str()) {
                        cols.push(k);
                    }
                }
            }
        }
        let _ = writeln!(
            h,
            "<details><summary>Raw samples ({} rows{})</summary>\n<table class=\"raw\">",
            view.samples,
            if view.samples > RAW_ROWS {
                format!(", the first {RAW_ROWS} shown; the JSON has them all")
            } else {
                String::new()
            }
        );
        if cols.is_empty() {
            for r in rows.iter().take(RAW_ROWS) {
                let _ = writeln!(h, "<tr><td>{}</td></tr>", escape(&r.to_string()));
            }
        } else {
            h.push_str("<tr>");
            for c in &cols {
                let _ = write!(h, "<th>{}</th>", escape(c));
            }
            h.push_str("</tr>\n");
            for r in rows.iter().take(RAW_ROWS) {
                h.push_str("<tr>");
                for c in &cols {
                    let cell = match r.get(c) {
                        None | Some(serde_json::Value::Null) => String::new(),
                        Some(serde_json::Value::String(s)) => s.clone(),
                        Some(v) => short(&v.to_string()),
                    };
                    let _ = write!(h, "<td>{}</td>", escape(&cell));
                }
                h.push_str("</tr>\n");
            }
        }
        h.push_str("</table>\n</details>\n");
    }
    let rest: serde_json::Map<String, serde_json::Value> = fields
        .iter()
        .filter(|(k, _)| !super::COMMON_FIELDS.contains(&k.as_str()))
        .filter(|(k, _)| !matches!(k.as_str(), "verdict" | "advice" | "preserve" | "journal"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !rest.is_empty() {
        let _ = writeln!(
            h,
            "<details><summary>Other fields of the document</summary>\n<pre>{}</pre>\n</details>",
            escape(&serde_json::to_string_pretty(&rest).unwrap_or_default())
        );
    }
}

/// A long cell cut to a readable length (lists of raw reads).
fn short(s: &str) -> String {
    const MAX: usize = 120;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The current time in UTC, `YYYY-MM-DD HH:MM UTC` (wall clock: it only labels the page).
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // 2026-11-25T16:40:00Z as 2026-11-25 16:40 UTC.
    let t = crate::vocab::units::format_rfc3339_utc(secs);
    format!("{} {} UTC", &t[..10], &t[11..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{Check, Warning};

    use crate::report::results::{IoResult, ScatterParameters, ScatterResult, SpecTarget};
    use crate::report::{Body, Target};

    const EVIL: &str = "<script>alert('x')</script>&\"";

    fn device(spec: &str) -> TargetInfo {
        TargetInfo {
            spec: spec.to_string(),
            size_bytes: 1 << 30,
            ..TargetInfo::default()
        }
    }

    /// A scatter document with hostile text everywhere text goes, and one good sample.
    fn hostile() -> Document {
        let evil = EVIL;
        let mut d = Document::for_target(
            &device(&format!("sim:sd-16g{evil}")),
            Body::Scatter(ScatterResult {
                parameters: ScatterParameters {
                    block_bytes: 16384,
                    order: 0,
                    span: 1,
                    count: 1,
                    reads: 1,
                    io_time_ns: 1,
                },
                samples: vec![crate::probe::scatter::ScatterPoint {
                    offset: 0,
                    min_ns: 1000,
                }],
                output: None,
                plot: None,
            }),
        );
        d.inferences.insert(
            format!("page_bytes{evil}"),
            Inference::new(4096, 0.95, format!("evidence {evil}")),
        );
        d.warnings.push(Warning::Recorded {
            kind: evil.into(),
            message: evil.into(),
        });
        d.checks.push(Check {
            inconclusive: false,
            threshold: None,
            name: evil.into(),
            passed: false,
            measurement: Some(1.0),
            units: Some(evil.into()),
            message: evil.into(),
        });
        d
    }

    /// An `auto` document on `spec` with this verdict and advice.
    fn auto(spec: &str, verdict: &str, advice: Vec<crate::analysis::advice::Advice>) -> Document {
        use crate::report::results::{AutoParameters, AutoResult, ClassesRecord};
        Document::new(
            Target::Spec(SpecTarget { spec: spec.into() }),
            Body::Auto(AutoResult {
                parameters: AutoParameters {
                    time_budget: "30s".into(),
                    run_time_budget_ns: None,
                    write_budget: None,
                    write: false,
                    destructive: false,
                    label: Some(spec.into()),
                },
                steps: Vec::new(),
                plan: None,
                verdict: Some(verdict.into()),
                skipped: Vec::new(),
                classes: ClassesRecord {
                    claimed: vec![spec.into()],
                    claimed_by: None,
                    met: None,
                    failure: None,
                },
                advice,
            }),
        )
    }

    /// An `auto` document with hostile text in its verdict, advice and parameters, and an
    /// `io` one with hostile text in its strings and its fio jobs.
    fn hostile_auto() -> Vec<Document> {
        let evil = EVIL;
        let advice = vec![crate::analysis::advice::Advice {
            topic: evil.into(),
            text: evil.into(),
            command: Some(evil.into()),
        }];
        let io = Document::new(
            Target::Spec(SpecTarget { spec: evil.into() }),
            Body::Io(IoResult {
                parameters: crate::workload::JobSpec {
                    name: evil.into(),
                    ..Default::default()
                },
                samples: Vec::new(),
                engine: evil.into(),
                clock: evil.into(),
                jobs: vec![serde_json::json!({ evil: evil })],
                disk_util: None,
                page_cache: None,
                verify: None,
                error: Some(evil.into()),
                totals: None,
            }),
        );
        vec![auto(evil, evil, advice), io]
    }

    #[test]
    fn every_string_from_a_document_is_escaped() {
        let mut docs = vec![hostile()];
        docs.extend(hostile_auto());
        let h = render(&docs);
        assert!(!h.contains("<script"), "{h}");
        assert!(!h.contains("alert('x')"));
        assert!(h.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"));
        // The scatter chart is drawn from its one sample; auto has none of its own.
        assert_eq!(h.matches("<svg").count(), 1);
    }

    #[test]
    fn the_page_references_nothing_outside_itself() {
        let mut docs = vec![hostile()];
        docs.extend(hostile_auto());
        let d = Document::for_target(
            &device("https://example.invalid/x"),
            Body::Slc(crate::report::results::SlcResult {
                parameters: crate::probe::slc::SlcParams {
                    offset_bytes: 0,
                    budget_bytes: 1 << 20,
                    block_bytes: 1 << 20,
                    interval_bytes: 1 << 20,
                    recovery_bytes: 0,
                    recover_ns: 0,
                    random_data: false,
                    time_budget_ns: None,
                },
                samples: vec![crate::analysis::slc::SlcInterval {
                    start_bytes: 0,
                    bytes: 1 << 20,
                    ns: 1_000_000,
                }],
                recovery: None,
                stopped: "done".into(),
                plot: None,
            }),
        );
        docs.push(d);
        let h = render(&docs);
        let svg_ns = "http://www.w3.org/2000/svg";
        let outside = h.replace(&format!("xmlns=\"{svg_ns}\""), "");
        for attr in [
            "src=",
            "href=\"http",
            "href='http",
            "url(",
            "@import",
            "<link",
            "<iframe",
        ] {
            assert!(!outside.contains(attr), "{attr} in the page");
        }
        // A URL from a document is text, not a reference.
        assert!(outside.contains("<h2>slc on https://example.invalid/x</h2>"));
        assert!(!outside.contains("<script"));
        assert_eq!(h.matches(svg_ns).count(), 2, "the SVG namespace only");
    }

    #[test]
    fn a_failed_check_joins_a_verdict_that_says_ok_and_figures_are_formatted() {
        let mut d = auto("x", "OK: holds all of it", Vec::new());
        d.checks.push(crate::vocab::Check {
            inconclusive: false,
            threshold: None,
            name: "auto.class_A2".into(),
            passed: false,
            measurement: Some(4.318974666286121),
            units: Some("IOPS".into()),
            message: "A2 NOT met: 4 IOPS against 2000".into(),
        });
        d.checks.push(crate::vocab::Check {
            inconclusive: false,
            threshold: None,
            name: "auto.class_V30".into(),
            passed: true,
            measurement: Some(62054539.73444591),
            units: Some("bytes/s".into()),
            message: "V30 met".into(),
        });
        assert_eq!(
            headline(&d),
            "OK: holds all of it — failed: A2 NOT met: 4 IOPS against 2000"
        );
        let h = render(&[d]);
        assert!(h.contains("4.32 IOPS"), "{h}");
        assert!(!h.contains("62054539.73"), "{h}");
    }

    #[test]
    fn samples_out_of_shape_are_refused_when_read_and_an_empty_document_renders() {
        let good = hostile().to_json();
        let bad = good.replace("\"min_ns\": 1000", "\"min_ns\": \"many\"");
        assert_ne!(good, bad);
        let e = Document::from_json("s.json", bad.as_bytes()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("out of shape"), "{e}");
        // A document with no target and no samples renders too.
        let h = render(&[Document::new(Target::None, Body::Info(Default::default()))]);
        assert!(h.contains("(unknown target)") && !h.contains("<svg"));
    }

    #[test]
    fn documents_are_read_only_when_whole_and_flashscope_1() {
        let good = Document::new(
            Target::Spec(SpecTarget { spec: "x".into() }),
            Body::Info(Default::default()),
        )
        .to_json();
        assert!(Document::from_json("a.json", good.as_bytes()).is_ok());
        let cut = &good.as_bytes()[..good.len() / 2];
        let e = Document::from_json("a.json", cut).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().contains("a.json") && e.to_string().contains("ends early"),
            "{e}"
        );
        let e = Document::from_json("b.json", br#"{"schema":"x/9"}"#).unwrap_err();
        assert!(
            e.to_string().contains("b.json") && e.to_string().contains("x/9"),
            "{e}"
        );
        let e = Document::from_json("c.json", b"[1]").unwrap_err();
        assert!(e.to_string().contains("no \"schema\""), "{e}");
        let unknown = good.replace("\"command\": \"info\"", "\"command\": \"defrag\"");
        let e = Document::from_json("d.json", unknown.as_bytes()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().contains("d.json") && e.to_string().contains("'defrag'"),
            "{e}"
        );
    }

    #[test]
    fn value_words_and_units_follow_the_field_name() {
        assert_eq!(words("erase_block_bytes"), "erase block");
        assert_eq!(words("throughput_bytes_per_s"), "throughput");
        let i = Inference::new(4194304, 0.95, "e");
        assert_eq!(value_text("erase_block_bytes", &i), "4 MiB");
        assert_eq!(
            value_text("access_time_ns", &Inference::new(675000, 0.95, "e")),
            "675 µs"
        );
        assert_eq!(
            value_text("fake_kind", &Inference::new("wrap", 0.95, "e")),
            "wrap"
        );
        assert_eq!(value_text("x", &Inference::inconclusive("e")), "—");
        assert!(utc_now().ends_with(" UTC") && utc_now().len() == 20);
    }
}
