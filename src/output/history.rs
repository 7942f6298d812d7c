//! `history`'s text, drawn from its document alone.

use crate::history::{self as hist};
use crate::report::rows::{RunSummary, StoredMetric};
use crate::report::table::Table;
use crate::report::{Body, Document, Target};
use crate::vocab::units::{format_bytes, format_ns, format_rate, short_number};

/// A metric's value in words, by its unit.
pub(crate) fn figure(m: &StoredMetric) -> String {
    let job = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&m.labels)
        .ok()
        .map(|l| {
            l.iter()
                .map(|(_, v)| v.as_str().unwrap_or_default().to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .filter(|s| !s.is_empty());
    let v = match m.unit.as_str() {
        "B/s" => format_rate(m.value),
        "B" if m.value >= 0.0 => format_bytes(m.value.round() as u64),
        "s" => format_ns(m.value * 1e9),
        "IOPS" => format!("{} IOPS", short_number(m.value)),
        u => format!("{} {u}", short_number(m.value))
            .trim_end()
            .to_string(),
    };
    let name = m.metric.as_str();
    match job {
        Some(j) => format!("{name}[{j}] {v}"),
        None => format!("{name} {v}"),
    }
}

/// `history list`'s table, without rows.
pub(crate) fn list_table() -> Table {
    use crate::report::table::Align;
    Table::new(&["id", "when (UTC)", "device", "command", "leading figure"])
        .align(0, Align::Right)
        .align(1, Align::Left)
        .align(2, Align::Left)
        .align(3, Align::Left)
        .align(4, Align::Left)
}

/// One run's cells in `history list`'s table.
pub(crate) fn list_cells(r: &RunSummary) -> Vec<String> {
    vec![
        r.id.to_string(),
        r.time.clone(),
        r.device.clone(),
        r.command.clone(),
        r.headline.as_ref().map(figure).unwrap_or_default(),
    ]
}

/// `history list`'s text from its document.
pub fn render_list(doc: &Document) -> String {
    let (Body::HistoryList(l), Target::History(h)) = (&doc.body, &doc.target) else {
        return String::new();
    };
    let (runs, db) = (&l.samples, &h.history);
    if runs.is_empty() {
        return format!("no runs stored in {db}\n");
    }
    let mut t = list_table();
    for r in runs {
        t.row(list_cells(r));
    }
    let n = runs.len();
    format!(
        "{n} run{} in {}\n\n{}",
        if n == 1 { "" } else { "s" },
        db,
        t.render()
    )
}

/// A stored run as text: where and when, then the text its command printed (drawn from
/// the stored document as the command draws it; for a command without one, the
/// inferences, checks and metrics), then the run's warnings.
pub(crate) fn render_run(id: i64, s: Option<&RunSummary>, doc: &Document) -> String {
    // Every field of a stored run came from a document someone may have written.
    use crate::input::printable;
    let mut o = format!("run {id}: {}", doc.command());
    if let Some(s) = s {
        o.push_str(&format!(
            " on {} ({}), {}, host {}, {}",
            printable(&s.target),
            printable(&s.device),
            printable(&s.time),
            printable(s.host.as_deref().unwrap_or("unknown")),
            printable(&s.source)
        ));
    }
    o.push_str("\n\n");
    let text = super::render(doc);
    if !text.is_empty() {
        o.push_str(&text);
    } else {
        o.push_str(&figures(doc));
    }
    if !doc.warnings.is_empty() {
        o.push_str("\nwarnings of that run:\n");
        for w in &doc.warnings {
            o.push_str(&format!("- {}\n", printable(&w.to_string())));
        }
    }
    o
}

/// A document's inferences, checks and metrics as tables.
fn figures(doc: &Document) -> String {
    let mut o = String::new();
    if !doc.inferences.is_empty() {
        let mut t = Table::new(&["inference", "value", "status", "evidence"])
            .align(2, crate::report::table::Align::Left)
            .align(3, crate::report::table::Align::Left);
        for (name, inf) in &doc.inferences {
            t.row(vec![
                name.clone(),
                inf.value
                    .as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "-".into()),
                inf.status_word().to_string(),
                inf.evidence.clone(),
            ]);
        }
        o.push_str(&t.render());
        o.push('\n');
    }
    for c in &doc.checks {
        o.push_str(&format!(
            "check {}: {} — {}\n",
            c.name,
            if c.passed { "passed" } else { "FAILED" },
            c.message
        ));
    }
    if !doc.metrics.is_empty() {
        let mut t = Table::new(&["metric", "value"]).align(1, crate::report::table::Align::Left);
        for m in &doc.metrics {
            let stored = StoredMetric {
                metric: m.name.clone(),
                value: m.value,
                unit: hist::unit_of(&m.name).to_string(),
                labels: serde_json::to_string(&m.labels).unwrap_or_default(),
            };
            let f = figure(&stored);
            let (name, value) = f.split_once(' ').unwrap_or((&f, ""));
            t.row(vec![name.to_string(), value.to_string()]);
        }
        o.push_str(&t.render());
    }
    o
}

/// `history table`'s text from its document.
pub fn render_table(doc: &Document) -> String {
    let Body::HistoryTable(tb) = &doc.body else {
        return String::new();
    };
    let (rows, by_model) = (&tb.samples, tb.parameters.by == "model");
    if rows.is_empty() {
        return "no bench runs stored: `flashscope bench TARGET` (with --write for the write figures) measures them\n".into();
    }
    let mut t = Table::new(&[
        if by_model { "part" } else { "device" },
        "runs",
        "seq read MiB/s",
        "seq write MiB/s",
        "rand read IOPS",
        "rand write IOPS",
    ]);
    for r in rows {
        let runs = r
            .cells()
            .iter()
            .filter_map(|c| c.as_ref().map(|c| c.runs))
            .max()
            .unwrap_or(0);
        let mut cells = vec![r.part.clone(), runs.to_string()];
        for (i, c) in r.cells().iter().enumerate() {
            let scale = if i < 2 { 1.0 / 1048576.0 } else { 1.0 };
            cells.push(match c {
                None => "-".into(),
                Some(c) if c.runs == 1 => short_number(c.median * scale),
                Some(c) => format!(
                    "{} ({}–{})",
                    short_number(c.median * scale),
                    short_number(c.min * scale),
                    short_number(c.max * scale)
                ),
            });
        }
        t.row(cells);
    }
    format!(
        "{}\nmedian (min–max) over runs of bench: SEQ1M Q8 read and write, RND4K Q32 read and write;\nthe vendor's figures per part: flashscope model --reference\n",
        t.render()
    )
}
