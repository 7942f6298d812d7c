//! `flashscope restore JOURNAL`: put back every region a preserve-mode test saved, after
//! a crash, a power loss or a vanished device. Idempotent; refuses a foreign target.

use super::Output;
use crate::device::{self, OpenRequest};
use crate::journal::{self, Identity, Journal};
use crate::report::results::{JournalRegion, RestoreParameters, RestoreResult, SpecTarget};
use crate::report::table::Table;
use crate::report::{Body, Document, Target};
use crate::vocab::error::EXIT_OK;
use crate::vocab::units::format_bytes;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Arguments of `restore`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope restore ~/.local/state/flashscope/fat-1790000000-4242.fsjournal\n  \
  flashscope restore J.fsjournal --target /dev/sdc          (the card got a new name)\n  \
  flashscope restore J.fsjournal --target card.img --ignore-identity   (onto an image copy)\n\n\
Trust: the journal must be a regular file (symlinks and FIFOs are refused), owned by you or\n\
root and not writable by group or others; check one that is not with --list, which writes\n\
nothing. Every identity field the target has (device number, serial, model, loop backing\n\
file; a file's device and inode) must be in the journal and equal.\n\n\
Exit codes: 0 restored and verified, 1 corrupt journal (a complete record with a bad\n\
checksum, or a cut last record whose region was overwritten) or I/O error, 2 the journal\n\
is not trusted, does not belong to the target (identity or size), is not a journal, or the\n\
target is in use.")]
pub struct Args {
    /// The journal file printed before the test started.
    pub journal: PathBuf,
    /// Restore onto this target instead of the one recorded in the journal.
    #[arg(long, value_name = "SPEC")]
    pub target: Option<String>,
    /// Skip the identity check (serial, device number, file); the size must still match.
    /// For restoring onto an image copy of the device.
    #[arg(long)]
    pub ignore_identity: bool,
    /// Keep the journal after a verified restore (by default it is removed).
    #[arg(long)]
    pub keep: bool,
    /// Only check the journal and list its regions; write nothing.
    #[arg(long)]
    pub list: bool,
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    let t0 = crate::backend::monotonic_ns();
    // Opened once, without following a symlink or blocking on a FIFO; a regular file.
    let journal = Journal::open(&args.journal)?;
    // Its content decides what is written where, as this user (often root): trust only a
    // journal this user or root wrote and nobody else can change, as sudo and ssh do.
    // `--list` writes nothing, so it may show an untrusted journal, with a warning.
    let untrusted = match journal::trust::check_owner(&journal.meta, "journal", &args.journal) {
        Ok(()) => None,
        Err(e) if !args.list => return Err(e),
        Err(e) => Some(e.to_string()),
    };
    // Held while restoring: the test that writes this journal must not be running.
    match journal.try_lock() {
        Ok(false) if !args.list => {
            return Err(Error::Refused(format!(
                "the test that writes {} is still running: it restores the device itself when it ends (Ctrl-C stops it early); nothing was written",
                args.journal.display()
            )))
        }
        _ => {}
    }
    let spec = match &args.target {
        Some(s) => s.clone(),
        // Journals store an absolute spec; one from an older flashscope may be relative.
        None => match &journal.identity.path {
            Some(p) if Path::new(&journal.identity.spec).is_relative() => p.clone(),
            _ => journal.identity.spec.clone(),
        },
    };
    let mut result = RestoreResult {
        parameters: RestoreParameters {
            journal: args.journal.display().to_string(),
            ignore_identity: args.ignore_identity,
            keep: args.keep,
            list: args.list,
        },
        samples: journal
            .records
            .iter()
            .map(|r| JournalRegion {
                offset_bytes: r.offset,
                length_bytes: r.length,
            })
            .collect(),
        journal: args.journal.display().to_string(),
        journal_identity: journal.identity.clone(),
        restored: false,
        summary: None,
        journal_removed: None,
    };
    let mut doc = Document::new(
        Target::Spec(SpecTarget { spec: spec.clone() }),
        Body::Restore(result.clone()),
    );
    if journal.torn_tail_bytes > 0 {
        doc.warnings.push(crate::vocab::Warning::TornJournalTail {
            bytes: journal.torn_tail_bytes,
        });
    }
    if let Some(why) = untrusted {
        doc.warnings
            .push(crate::vocab::Warning::UntrustedJournal { why });
    }
    if args.list {
        doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
        out.emit(&doc);
        return Ok(EXIT_OK);
    }
    if args.target.is_none() && journal.identity.kind == crate::device::TargetKind::Sim {
        return Err(Error::usage(format!(
            "the journal was written for the simulated target {}, which does not outlive its process: give --target FILE --ignore-identity to restore onto an image of the same size",
            journal.identity.spec
        )));
    }
    let mut opened = device::open(&spec, &OpenRequest::read_write())?;
    let current = Identity::of(&spec, &opened, "restore");
    if let Some(why) = journal::mismatch(&journal.identity, &current, args.ignore_identity) {
        return Err(Error::Refused(format!(
            "journal {} does not belong to {spec}: {why}. The journal names {}; the target is {}. Nothing was written{}",
            args.journal.display(),
            journal.identity.describe(),
            current.describe(),
            if args.ignore_identity {
                ""
            } else {
                " (use --ignore-identity only for an image copy of the same device)"
            }
        )));
    }
    let summary = journal::restore_records(&journal, &mut opened.backend).map_err(|e| {
        Error::runtime(format!(
            "{e}. The journal {} is kept; nothing in it was changed",
            args.journal.display()
        ))
    })?;
    let mut removed = false;
    if !args.keep {
        journal::format::remove(&args.journal).map_err(|e| {
            Error::io(
                format!(
                    "restored and verified, but removing journal {}",
                    args.journal.display()
                ),
                e,
            )
        })?;
        removed = true;
    }
    doc.target = Target::from(&opened.info);
    doc.warnings.extend(opened.warnings);
    doc.bytes_written = summary.bytes;
    result.restored = true;
    result.summary = Some(summary);
    result.journal_removed = Some(removed);
    doc.body = Body::Restore(result);
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    out.emit(&doc);
    Ok(EXIT_OK)
}

/// `restore`'s text from its document: what was restored (or, with `--list`, what the
/// journal holds) and its regions.
pub fn render(doc: &Document) -> String {
    let Body::Restore(r) = &doc.body else {
        return String::new();
    };
    let mut s = match (&r.summary, r.restored) {
        (Some(sum), true) => format!(
            "restored {} regions ({}) onto {} and verified each by checksum; journal {}\n\n",
            sum.regions,
            format_bytes(sum.bytes),
            doc.target.info().map_or("?", |t| t.spec.as_str()),
            if r.journal_removed == Some(true) {
                "removed"
            } else {
                "kept"
            }
        ),
        _ => format!(
            "journal {} is intact: {} regions ({}) saved from {}; nothing written\n\n",
            r.journal,
            r.samples.len(),
            format_bytes(r.samples.iter().map(|x| x.length_bytes).sum()),
            r.journal_identity.describe()
        ),
    };
    let mut t = Table::new(&["region offset", "length"]);
    for x in r.samples.iter().take(40) {
        t.row(vec![
            x.offset_bytes.to_string(),
            format_bytes(x.length_bytes),
        ]);
    }
    s.push_str(&t.render());
    if r.samples.len() > 40 {
        s.push_str(&format!(
            "... and {} more (all in --json)\n",
            r.samples.len() - 40
        ));
    }
    s
}
