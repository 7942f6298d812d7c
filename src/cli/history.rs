//! `flashscope history list|show|export|import|table`: the stored runs (src/history).

pub use super::defs::history::*;

use super::Output;
use crate::commands::history;
use crate::history::table::By;
use crate::history::Store;
use crate::output;
use crate::output::history::ListRequest;
use crate::vocab::error::Verdict;
use crate::{Error, Result};
use std::path::Path;

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
