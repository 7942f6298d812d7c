//! The `history` commands' documents: the stored runs listed, the empirical table, and
//! documents saved elsewhere stored (`import`). The CLI (`cli::history`) opens the
//! database, parses the options and prints.

use crate::history::table::{self, By, COLUMNS};
use crate::history::{self as hist, identity, Store};
use crate::report::results::{
    HistoryListResult, HistoryTableParameters, HistoryTableResult, HistoryTarget, TableColumn,
};
use crate::report::{Body, Document, Target};
use crate::{Error, Result};
use std::path::Path;

/// The history at `db` opened to read (every `history` command but `import`): one that is
/// not there is "not yet" (a usage error), one that cannot be looked at says so.
pub(crate) fn open_to_read(db: &Path) -> Result<Store> {
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
    Store::open_to_read(db)
}

/// The database a `history` document is about.
pub(crate) fn target(store: &Store) -> Target {
    Target::History(HistoryTarget {
        history: store.path().display().to_string(),
    })
}

/// `history list`'s document with no runs in it (what a streamed listing writes into).
pub(crate) fn list_heading(store: &Store) -> Document {
    Document::new(
        target(store),
        Body::HistoryList(HistoryListResult::default()),
    )
}

/// `history list`'s document: the latest `limit` runs (of `device` only, when given).
pub(crate) fn list(store: &Store, device: Option<&str>, limit: u64) -> Result<Document> {
    let runs = store.list(device, limit)?;
    Ok(Document::new(
        target(store),
        Body::HistoryList(HistoryListResult {
            parameters: Default::default(),
            samples: runs,
        }),
    ))
}

/// `history table`'s document: per part (or per device), bench's figures over its runs.
pub(crate) fn table(store: &Store, by: By) -> Result<Document> {
    let rows = table::table(store, by)?;
    Ok(Document::new(
        target(store),
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
    ))
}

/// What `history import` stored: the new runs' ids, and how many were stored already.
pub(crate) struct Imported {
    pub added: Vec<i64>,
    pub known: usize,
}

/// Store `docs` (read from `files`, in order): each must be a measuring command's; none
/// is stored unless all are.
pub(crate) fn import(store: &mut Store, files: &[String], docs: &[Document]) -> Result<Imported> {
    for (f, d) in files.iter().zip(docs) {
        if !hist::is_measuring(d.command()) {
            return Err(Error::usage(format!(
                "{f}: a '{}' document is not a measurement; history stores the runs of {}",
                d.command(),
                hist::MEASURING_COMMANDS.join(", ")
            )));
        }
    }
    let (mut added, mut known) = (Vec::new(), 0);
    for (f, d) in files.iter().zip(docs) {
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
    Ok(Imported { added, known })
}
