//! `restore`: put back every region a preserve-mode test saved, after a crash, a power
//! loss or a vanished device. Idempotent; refuses a foreign target or an untrusted journal.

use crate::device::TargetSpec;
use crate::device::{self, OpenRequest};
use crate::journal::format::RestoreLock;
use crate::journal::{self, Identity, Journal};
use crate::report::results::{JournalRegion, RestoreParameters, RestoreResult, SpecTarget};
use crate::report::{Body, Document, Target};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// What `restore` does.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoreParams {
    /// The journal file.
    pub journal: PathBuf,
    /// Restore onto this target instead of the one recorded in the journal.
    pub target: Option<TargetSpec>,
    /// Skip the identity check (the size must still match).
    pub ignore_identity: bool,
    /// Keep the journal after a verified restore.
    pub keep: bool,
    /// Only check the journal and list its regions; write nothing.
    pub list: bool,
}

/// Check the journal and, unless `list`, put its regions back onto the target it names
/// (or `target`), verify each, and remove the journal unless `keep`.
pub fn restore(args: &RestoreParams) -> Result<Document> {
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
    // Held while restoring: the test that writes this journal must not be running, and
    // another restore of it is waited for. `--list` only reads.
    let lock = if args.list {
        RestoreLock::Held
    } else {
        journal
            .lock_for_restore()
            .map_err(|e| Error::io(format!("locking journal {}", args.journal.display()), e))?
    };
    if lock == RestoreLock::TestRunning {
        return Err(Error::Refused(format!(
            "the test that writes {} is still running: it restores the device itself when it ends (Ctrl-C stops it early); nothing was written",
            args.journal.display()
        )));
    }
    // Another restore put the regions back and removed the journal while this one
    // waited: they are read back and compared, nothing is written.
    let meanwhile = lock == RestoreLock::RestoredMeanwhile;
    let spec = match &args.target {
        Some(s) => s.clone(),
        // Journals store an absolute spec; one from an older flashscope may be relative.
        None => TargetSpec::parse(match &journal.identity.path {
            Some(p) if Path::new(&journal.identity.spec).is_relative() => p,
            _ => &journal.identity.spec,
        })?,
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
        restored_meanwhile: false,
    };
    let mut doc = Document::new(
        Target::Spec(SpecTarget {
            spec: spec.to_string(),
        }),
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
        return Ok(doc);
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
    if meanwhile {
        // Only read: the target may be opened read-write above, it is never written.
        let summary = journal::verify_records(&journal, &mut opened.backend).map_err(|e| {
            Error::runtime(format!(
                "another restore of {} ended while this one waited and removed the journal, but {e}",
                args.journal.display()
            ))
        })?;
        doc.target = Target::from(&opened.info);
        doc.warnings.extend(opened.warnings);
        result.restored = true;
        result.summary = Some(summary);
        result.journal_removed = Some(true);
        result.restored_meanwhile = true;
        doc.body = Body::Restore(result);
        doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
        return Ok(doc);
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
    Ok(doc)
}
