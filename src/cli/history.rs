//! `flashscope history list|show|export|import|table`: the stored runs (src/history).

use super::Output;
use crate::history::table::{self, By, COLUMNS};
use crate::history::{self as hist, identity, Store};
use crate::output::history::{list_cells, list_table};
use crate::report::results::{
    HistoryListResult, HistoryTableParameters, HistoryTableResult, HistoryTarget, TableColumn,
};
use crate::report::table::csv_field;
use crate::report::{Body, Document, Target};
use crate::vocab::error::Verdict;
use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

const AFTER_HELP: &str = "\
Examples:
  flashscope bench sim:sd-16g --history runs.sqlite
  flashscope history list --history runs.sqlite
  flashscope history show 1 --history runs.sqlite
  flashscope history table --by device --history runs.sqlite
  flashscope history export --format csv --history runs.sqlite
  flashscope history import results/*.json --history runs.sqlite

Every measuring command (align, auto, bench, fat, fs, health, interval, io, open-au,
probe, program, scatter, slc, verify) stores its --json document and metrics in
$XDG_DATA_HOME/flashscope/history.sqlite (default ~/.local/share/...), or in --history
PATH; --no-history or FLASHSCOPE_HISTORY=off stops that. The schema and example SQL are
in docs/history.md. Exit code 2 for an id that does not exist or a FILE that is not a
complete flashscope/1 document of a measuring command.";

/// The `history` subcommands.
#[derive(Debug, clap::Subcommand)]
#[command(after_help = AFTER_HELP)]
pub enum HistoryCommand {
    /// The stored runs: id, when, device, command and its leading figure.
    #[command(after_help = AFTER_HELP)]
    List(ListArgs),
    /// One stored run as its command printed it, or with --json its document as printed.
    #[command(after_help = AFTER_HELP)]
    Show(ShowArgs),
    /// Every run: CSV (one line per metric) or JSON (an array of runs with their documents).
    #[command(after_help = AFTER_HELP)]
    Export(ExportArgs),
    /// Store --json documents saved elsewhere (another machine, a test farm).
    #[command(after_help = AFTER_HELP)]
    Import(ImportArgs),
    /// The empirical table: per part, bench's sequential MiB/s and 4 KiB random IOPS,
    /// median and range over runs, as the vendor's table (`model --reference`) lays it out.
    #[command(after_help = AFTER_HELP)]
    Table(TableArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only the runs of this device (its identity, as `list` and `table --by device` show).
    #[arg(long)]
    pub device: Option<String>,
    /// At most this many runs, the latest.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub limit: u64,
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The run's id (`history list`).
    pub id: i64,
}

/// `history export` formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Csv,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// csv: one line per metric with its run's columns; json: an array of runs, each with
    /// its whole document.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: ExportFormat,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Saved `--json` documents of measuring commands (`-` reads standard input).
    #[arg(required = true, value_name = "FILE.json")]
    pub files: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct TableArgs {
    /// One row per part (model: maker and product or model name) or per device.
    #[arg(long, value_enum, default_value = "model")]
    pub by: ByArg,
}

/// `--by`: [`By`] on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ByArg {
    /// The part: maker and product (CID) or model; devices without one by their identity.
    Model,
    /// Each device (its identity: CID, USB ids and serial, or model, serial and size).
    Device,
}

impl From<ByArg> for By {
    fn from(b: ByArg) -> Self {
        match b {
            ByArg::Model => By::Model,
            ByArg::Device => By::Device,
        }
    }
}

/// The history database the `history` commands read: `--history PATH` or the default.
pub fn database(option: Option<&Path>, no_history: bool) -> Result<PathBuf> {
    if no_history {
        return Err(Error::usage(
            "--no-history: the history commands read the history; give --history PATH to read another one",
        ));
    }
    match option {
        Some(p) => Ok(p.to_path_buf()),
        None => hist::default_path().ok_or_else(|| {
            Error::usage("neither XDG_DATA_HOME nor HOME is set: give --history PATH")
        }),
    }
}

pub fn run(cmd: &HistoryCommand, db: &Path, out: &Output) -> Result<Verdict> {
    if !matches!(cmd, HistoryCommand::Import(_)) {
        // Only a database that is not there is "not yet": one that cannot be looked at
        // (a directory on the way this user may not enter) says so.
        match std::fs::symlink_metadata(db) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::usage(format!(
                    "history {}: no such database yet; measuring commands create it (or give --history PATH)",
                    db.display()
                )))
            }
            Err(e) => {
                return Err(Error::io(
                    format!("history {}: cannot be looked at", db.display()),
                    e,
                ))
            }
        }
    }
    // Only import writes; the others also read a database they cannot write.
    let read = || Store::open_to_read(db);
    match cmd {
        HistoryCommand::List(a) => list(&read()?, a, out),
        HistoryCommand::Show(a) => show(&read()?, a, out),
        HistoryCommand::Export(a) => export(&read()?, a),
        HistoryCommand::Import(a) => import(&mut Store::open(db)?, a),
        HistoryCommand::Table(a) => table_cmd(&read()?, a, out),
    }
}

fn list(store: &Store, a: &ListArgs, out: &Output) -> Result<Verdict> {
    if out.plain() {
        return store.snapshot(|store| list_streamed(store, a, out.json));
    }
    // Exports or --lava take the document whole.
    let runs = store.list(a.device.as_deref(), a.limit)?;
    let doc = Document::new(
        history_target(store),
        Body::HistoryList(HistoryListResult {
            parameters: Default::default(),
            samples: runs,
        }),
    );
    out.emit(&doc);
    Ok(Verdict::Ok)
}

/// `history list` written as the runs are read, never all held (`--limit 1000000`): the
/// same bytes as its document's JSON or text. The JSON is the document without runs, its
/// `"samples": []` opened and each run written into it as the whole document would write
/// it; the text reads the runs twice, for the table's widths and then its rows.
fn list_streamed(store: &Store, a: &ListArgs, json: bool) -> Result<Verdict> {
    use std::io::Write;
    let doc = Document::new(
        history_target(store),
        Body::HistoryList(HistoryListResult::default()),
    );
    let device = a.device.as_deref();
    let mut w = std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    // A closed standard output (`| head`) ends the listing quietly, as `emit` does.
    let mut closed = false;
    let mut put = |w: &mut std::io::BufWriter<_>, bytes: &[u8]| {
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
            let runs = store.list(device, a.limit)?;
            let doc = Document::new(
                history_target(store),
                Body::HistoryList(HistoryListResult {
                    parameters: Default::default(),
                    samples: runs,
                }),
            );
            let _ = doc.write_json(&mut w);
            return Ok(Verdict::Ok);
        };
        let indent = &whole[whole[..at].rfind('\n').map_or(0, |i| i + 1)..at];
        let inner = format!("{indent}  ");
        put(&mut w, &whole.as_bytes()[..at + open.len() - 1]);
        let mut n = 0usize;
        let r = store.for_each_listed(device, a.limit, |run| {
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
            if put(&mut w, s.as_bytes()) {
                return Err(stop());
            }
            Ok(())
        });
        if n > 0 {
            put(&mut w, format!("\n{indent}").as_bytes());
        }
        put(&mut w, &whole.as_bytes()[at + open.len() - 1..]);
        put(&mut w, b"\n");
        r
    } else {
        let Target::History(h) = &doc.target else {
            return Ok(Verdict::Ok);
        };
        let mut t = list_table();
        let mut n = 0usize;
        store.for_each_listed(device, a.limit, |run| {
            t.fit(&list_cells(&run));
            n += 1;
            Ok(())
        })?;
        if n == 0 {
            put(
                &mut w,
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
            put(&mut w, crate::input::printable_text(&head).as_bytes());
            store.for_each_listed(device, a.limit, |run| {
                let line = t.line(&list_cells(&run));
                if put(&mut w, crate::input::printable_text(&line).as_bytes()) {
                    return Err(stop());
                }
                Ok(())
            })
        }
    };
    let _ = w.flush();
    match result {
        Err(_) if closed => Ok(Verdict::Ok),
        Err(e) => Err(e),
        Ok(()) => Ok(Verdict::Ok),
    }
}

fn show(store: &Store, a: &ShowArgs, out: &Output) -> Result<Verdict> {
    let doc = store.run(a.id)?;
    let summary = store.summary(a.id)?;
    if out.json {
        out.emit(&doc);
    } else {
        // The run's warnings are part of what was stored, listed in the text; on stderr
        // they would read as warnings about this `history show`.
        let text = crate::output::history::render_run(a.id, summary.as_ref(), &doc);
        let mut shown = doc;
        shown.warnings.clear();
        out.emit_text(&shown, |_| text);
    }
    Ok(Verdict::Ok)
}

fn export(store: &Store, a: &ExportArgs) -> Result<Verdict> {
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    // A closed stdout (`| head`) ends the export quietly.
    let io = |e: std::io::Error| Error::io("writing the export to standard output", e);
    let result = match a.format {
        ExportFormat::Csv => {
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
        ExportFormat::Json => {
            let mut first = true;
            let r = write!(w, "[").map_err(io).and_then(|_| {
                store.for_each_run(|r| {
                    let document: serde_json::Value =
                        serde_json::from_str(&r.document).unwrap_or(serde_json::Value::Null);
                    let mut v = serde_json::to_value(r).unwrap_or_default();
                    if let Some(o) = v.as_object_mut() {
                        o.insert("document".into(), document);
                    }
                    let sep = if first { "\n" } else { ",\n" };
                    first = false;
                    write!(w, "{sep}{v}").map_err(io)
                })
            });
            r.and_then(|_| writeln!(w, "\n]").map_err(io))
        }
    };
    match result.and_then(|_| w.flush().map_err(io)) {
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(Verdict::Ok)
        }
        Err(e) => Err(e),
        Ok(()) => Ok(Verdict::Ok),
    }
}

fn import(store: &mut Store, a: &ImportArgs) -> Result<Verdict> {
    if a.files.iter().filter(|f| *f == "-").count() > 1 {
        return Err(Error::usage(
            "standard input (-) can be read once: give it as one FILE only",
        ));
    }
    // Every file is read and checked before anything is stored.
    let docs = super::report::load(&a.files)?;
    for (f, d) in a.files.iter().zip(&docs) {
        if !hist::is_measuring(d.command()) {
            return Err(Error::usage(format!(
                "{f}: a '{}' document is not a measurement; history stores the runs of {}",
                d.command(),
                hist::MEASURING_COMMANDS.join(", ")
            )));
        }
    }
    let (mut added, mut known) = (Vec::new(), 0);
    for (f, d) in a.files.iter().zip(&docs) {
        let name = Path::new(f)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "stdin".into());
        let (id, new) = store.record(
            d,
            &identity::of_document(d),
            None,
            &format!("import:{name}"),
        )?;
        if new {
            added.push(id);
        } else {
            known += 1;
        }
    }
    let ids: Vec<String> = added.iter().map(|i| i.to_string()).collect();
    println!(
        "imported {} run{} into {}{}{}",
        added.len(),
        if added.len() == 1 { "" } else { "s" },
        store.path().display(),
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
    );
    Ok(Verdict::Ok)
}

fn table_cmd(store: &Store, a: &TableArgs, out: &Output) -> Result<Verdict> {
    let by = By::from(a.by);
    let rows = table::table(store, by)?;
    let doc = Document::new(
        history_target(store),
        Body::HistoryTable(HistoryTableResult {
            parameters: HistoryTableParameters {
                by: match by {
                    By::Model => "model",
                    By::Device => "device",
                }
                .to_string(),
                columns: COLUMNS
                    .iter()
                    .map(|(k, m, j)| TableColumn {
                        key: k.to_string(),
                        metric: m.to_string(),
                        job: j.to_string(),
                    })
                    .collect(),
            },
            samples: rows.clone(),
        }),
    );
    out.emit(&doc);
    Ok(Verdict::Ok)
}

/// The database a `history` document is about.
fn history_target(store: &Store) -> Target {
    Target::History(HistoryTarget {
        history: store.path().display().to_string(),
    })
}
