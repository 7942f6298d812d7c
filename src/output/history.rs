//! `history`'s text, drawn from its document alone.

use crate::history::Store;
use crate::history::{self as hist};
use crate::report::rows::{RunSummary, StoredMetric};
use crate::report::table::csv_field;
use crate::report::table::Table;
use crate::report::{Body, Document, Target};
use crate::vocab::units::{format_bytes, format_ns, format_rate, short_number};
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

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
            c.outcome_word(),
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

/// Which runs `history list` lists, and as JSON or text.
pub(crate) struct ListRequest<'a> {
    pub device: Option<&'a str>,
    pub limit: u64,
    pub json: bool,
}

/// `history list` written as the runs are read, never all held (`--limit 1000000`): the
/// same bytes as its document's JSON or text. The JSON is the document without runs, its
/// `"samples": []` opened and each run written into it as the whole document would write
/// it; the text reads the runs twice, for the table's widths and then its rows. `doc`:
/// the document with no runs; `whole_doc`: the whole one, should `doc` not be of the shape
/// this writes into.
pub(crate) fn write_list(
    doc: &Document,
    store: &Store,
    listed: &ListRequest,
    whole_doc: &dyn Fn() -> Result<Document>,
    w: &mut dyn Write,
) -> Result<()> {
    let (device, json) = (listed.device, listed.json);
    // A closed standard output (`| head`) ends the listing quietly, as `emit` does.
    let mut closed = false;
    let mut put = |w: &mut dyn Write, bytes: &[u8]| {
        if !closed && w.write_all(bytes).is_err() {
            closed = true;
        }
        closed
    };
    let stop = || Error::runtime("standard output closed");
    let result = if json {
        let whole = doc.to_json();
        let open = "\"samples\": []";
        let at = whole
            .find(open)
            .filter(|&i| whole[i + 1..].find(open).is_none());
        let Some(at) = at else {
            // Not the shape this writes into (a bug): the document whole, as before.
            let _ = whole_doc()?.write_json(w);
            return Ok(());
        };
        let indent = &whole[whole[..at].rfind('\n').map_or(0, |i| i + 1)..at];
        let inner = format!("{indent}  ");
        put(w, &whole.as_bytes()[..at + open.len() - 1]);
        let mut n = 0usize;
        let r = store.for_each_listed(device, listed.limit, |run| {
            let one = serde_json::to_string_pretty(&crate::report::fields::AsValue(&run))
                .map_err(|e| Error::runtime(e.to_string()))?;
            let mut s = String::from(if n == 0 { "\n" } else { ",\n" });
            for (i, l) in one.split('\n').enumerate() {
                if i > 0 {
                    s.push('\n');
                }
                s.push_str(&inner);
                s.push_str(l);
            }
            n += 1;
            if put(w, s.as_bytes()) {
                return Err(stop());
            }
            Ok(())
        });
        if n > 0 {
            put(w, format!("\n{indent}").as_bytes());
        }
        put(w, &whole.as_bytes()[at + open.len() - 1..]);
        put(w, b"\n");
        r
    } else {
        let Target::History(h) = &doc.target else {
            return Ok(());
        };
        let mut t = list_table();
        let mut n = 0usize;
        store.for_each_listed(device, listed.limit, |run| {
            t.fit(&list_cells(&run));
            n += 1;
            Ok(())
        })?;
        if n == 0 {
            put(
                w,
                crate::input::printable_text(&format!("no runs stored in {}\n", h.history))
                    .as_bytes(),
            );
            Ok(())
        } else {
            let head = format!(
                "{n} run{} in {}\n\n{}",
                if n == 1 { "" } else { "s" },
                h.history,
                t.head()
            );
            put(w, crate::input::printable_text(&head).as_bytes());
            store.for_each_listed(device, listed.limit, |run| {
                let line = t.line(&list_cells(&run));
                if put(w, crate::input::printable_text(&line).as_bytes()) {
                    return Err(stop());
                }
                Ok(())
            })
        }
    };
    let _ = w.flush();
    match result {
        Err(_) if closed => Ok(()),
        r => r,
    }
}

/// `history export`'s formats.
pub(crate) enum Export {
    /// One line per metric with its run's columns.
    Csv,
    /// An array of runs, each with its whole document.
    Json,
}

/// Every stored run written to `w` as `format` (flushed); a closed reader (`| head`)
/// ends the export quietly.
pub(crate) fn export(store: &Store, format: Export, w: &mut dyn Write) -> Result<()> {
    match export_all(store, format, w) {
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// One run as `history export --format json` writes it: its columns, keys in name order,
/// and the stored document as it is stored (checked to be JSON, never parsed into a tree:
/// a tree of a document near the cap took ten times its size; `null` if it is not JSON).
#[derive(serde::Serialize)]
struct ExportedRun<'a> {
    command: &'a str,
    device: &'a str,
    document: Option<&'a serde_json::value::RawValue>,
    host: &'a Option<String>,
    id: i64,
    model: &'a Option<String>,
    source: &'a str,
    target: &'a str,
    time: &'a str,
    version: &'a str,
}

impl<'a> ExportedRun<'a> {
    fn of(r: &'a crate::history::StoredRun) -> ExportedRun<'a> {
        ExportedRun {
            command: &r.command,
            device: &r.device,
            document: serde_json::from_str(&r.document).ok(),
            host: &r.host,
            id: r.id,
            model: &r.model,
            source: &r.source,
            target: &r.target,
            time: &r.time,
            version: &r.version,
        }
    }
}

/// Every stored run written to `w` as `format` (flushed).
fn export_all(store: &Store, format: Export, w: &mut dyn Write) -> Result<()> {
    let io = |e: std::io::Error| Error::io("writing the export to standard output", e);
    let result = match format {
        Export::Csv => {
            let r = writeln!(
                w,
                "run_id,time,command,host,version,device,model,target,source,metric,value,unit,labels"
            )
            .map_err(io);
            r.and_then(|_| {
                store.for_each_metric(|r, m| {
                    let cols = [
                        r.id.to_string(),
                        r.time.clone(),
                        r.command.clone(),
                        r.host.clone().unwrap_or_default(),
                        r.version.clone(),
                        r.device.clone(),
                        r.model.clone().unwrap_or_default(),
                        r.target.clone(),
                        r.source.clone(),
                        m.metric.clone(),
                        m.value.to_string(),
                        m.unit.clone(),
                        m.labels.clone(),
                    ];
                    let line: Vec<_> = cols.iter().map(|c| csv_field(c)).collect();
                    writeln!(w, "{}", line.join(",")).map_err(io)
                })
            })
        }
        Export::Json => {
            let mut first = true;
            let r = write!(w, "[").map_err(io).and_then(|_| {
                store.for_each_run(|r| {
                    let sep = if first { "\n" } else { ",\n" };
                    first = false;
                    write!(w, "{sep}").map_err(io)?;
                    serde_json::to_writer(&mut *w, &ExportedRun::of(r)).map_err(|e| io(e.into()))
                })
            });
            r.and_then(|_| writeln!(w, "\n]").map_err(io))
        }
    };
    result.and_then(|_| w.flush().map_err(io))
}

/// `history import`'s line: how many runs it stored into `db` (their ids) and skipped.
pub(crate) fn imported(added: &[i64], known: usize, db: &Path) -> String {
    let ids: Vec<String> = added.iter().map(|i| i.to_string()).collect();
    format!(
        "imported {} run{} into {}{}{}",
        added.len(),
        if added.len() == 1 { "" } else { "s" },
        db.display(),
        if ids.is_empty() {
            String::new()
        } else {
            format!(" (ids {})", ids.join(" "))
        },
        if known > 0 {
            format!("; {known} already stored, skipped")
        } else {
            String::new()
        }
    )
}
