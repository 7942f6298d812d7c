//! `flashscope history list|show|export|import|table`: the stored runs (src/history).

use super::Output;
use crate::commands::history;
use crate::history::table::By;
use crate::history::Store;
use crate::output;
use crate::output::history::ListRequest;
use crate::vocab::error::Verdict;
use crate::{Error, Result};
use std::path::Path;

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

pub fn run(cmd: &HistoryCommand, db: &Path, out: &Output) -> Result<Verdict> {
    // Only import writes; the others also read a database they cannot write.
    let read = || history::open_to_read(db);
    match cmd {
        HistoryCommand::List(a) => list(&read()?, a, out),
        HistoryCommand::Show(a) => show(&read()?, a, out),
        HistoryCommand::Export(a) => export(&read()?, a),
        HistoryCommand::Import(a) => import(&mut Store::open(db)?, a),
        HistoryCommand::Table(a) => table_cmd(&read()?, a, out),
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

fn list(store: &Store, a: &ListArgs, out: &Output) -> Result<Verdict> {
    if out.plain() {
        return store.snapshot(|store| {
            let heading = history::list_heading(store);
            let whole = || history::list(store, a.device.as_deref(), a.limit);
            let mut w = std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
            let listed = ListRequest {
                device: a.device.as_deref(),
                limit: a.limit,
                json: out.json,
            };
            output::history::write_list(&heading, store, &listed, &whole, &mut w)?;
            Ok(Verdict::Ok)
        });
    }
    // Exports or --lava take the document whole.
    out.emit(&history::list(store, a.device.as_deref(), a.limit)?);
    Ok(Verdict::Ok)
}

fn export(store: &Store, a: &ExportArgs) -> Result<Verdict> {
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let format = match a.format {
        ExportFormat::Csv => output::history::Export::Csv,
        ExportFormat::Json => output::history::Export::Json,
    };
    output::history::export(store, format, &mut w)?;
    Ok(Verdict::Ok)
}

fn import(store: &mut Store, a: &ImportArgs) -> Result<Verdict> {
    if a.files.iter().filter(|f| *f == "-").count() > 1 {
        return Err(Error::usage(
            "standard input (-) can be read once: give it as one FILE only",
        ));
    }
    // Every file is read and checked before anything is stored.
    let docs = crate::report::load_documents(&a.files)?;
    let history::Imported { added, known } = history::import(store, &a.files, &docs)?;
    println!("{}", output::history::imported(&added, known, store.path()));
    Ok(Verdict::Ok)
}

fn table_cmd(store: &Store, a: &TableArgs, out: &Output) -> Result<Verdict> {
    out.emit(&history::table(store, By::from(a.by))?);
    Ok(Verdict::Ok)
}
