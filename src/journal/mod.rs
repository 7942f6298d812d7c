//! Preserve mode: a crash-safe backup journal of every region a test overwrites, and the
//! restore that puts it back (`flashscope restore JOURNAL`).
//!
//! Layers: `format` (the file: header with the target's identity, checksummed records),
//! `identity` (who the target is), `intervals` (which bytes are saved), `preserve` (the
//! `Preserve<B>` backend wrapper), `signals` (Ctrl-C stops after the current I/O).

pub mod format;
pub mod identity;
pub mod intervals;
pub mod preserve;
pub mod trust;

pub use format::Journal;
pub use identity::{may_be, mismatch, Identity};
pub use preserve::{
    describe_unrestored, restore_records, verify_records, Preserve, RestoreSummary,
};

use crate::device::TargetSpec;
use crate::platform::mounts;
use crate::{Error, Result};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The directory journals go to by default: `$XDG_STATE_HOME/flashscope` or
/// `~/.local/state/flashscope`.
pub fn state_dir() -> Result<PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(h) => PathBuf::from(h).join(".local/state"),
            None => {
                return Err(Error::usage(
                    "neither XDG_STATE_HOME nor HOME is set, so there is no default place for the journal: give --journal PATH",
                ))
            }
        },
    };
    Ok(base.join("flashscope"))
}

/// `name` in the state directory, which is created private to this user (0700) and
/// refused if another user could write it (see `trust::private_dir`). Journals and
/// `verify`'s resume state go here.
pub fn state_file(name: &str) -> Result<PathBuf> {
    let dir = state_dir()?;
    trust::private_dir(&dir)?;
    Ok(dir.join(name))
}

/// A fresh default journal path for `command` (created directories included).
pub fn default_path(command: &str) -> Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    state_file(&format!(
        "{command}-{stamp}-{}.fsjournal",
        std::process::id()
    ))
}

/// The directory a journal file will live in (its parent, or the current directory).
fn parent_dir(journal: &Path) -> PathBuf {
    match journal.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Refuse a journal that would live on the target itself (the test would overwrite its
/// own backup), or that is the target file. Also checks the directory exists.
pub fn check_location(journal: &Path, target_spec: &TargetSpec) -> Result<()> {
    check_not_on_target(journal, target_spec)?;
    // As `verify`'s `--state` and the default journal directory: in a directory another
    // user can rename in (or reached through one, or through their link), they could move
    // the journal away mid-run and `restore` would find nothing.
    trust::trusted_parent(
        journal,
        "--journal",
        "give --journal a path in a directory only you or root can write",
    )?;
    // A journal is always a new regular file; an existing one is a leftover to restore.
    if let Ok(meta) = std::fs::symlink_metadata(journal) {
        return Err(Error::Refused(if meta.file_type().is_file() {
            format!(
                "--journal {}: a file is there already (a journal of an earlier run?): restore it with `flashscope restore {}`, or choose a new path",
                journal.display(),
                journal.display()
            )
        } else {
            format!(
                "--journal {}: it exists and is not a regular file; a journal is a new regular file: give a path that does not exist yet",
                journal.display()
            )
        }));
    }
    Ok(())
}

fn check_not_on_target(journal: &Path, target_spec: &TargetSpec) -> Result<()> {
    let dir = parent_dir(journal);
    let dir_meta = std::fs::metadata(&dir).map_err(|e| {
        Error::usage(format!(
            "--journal {}: the journal directory {} cannot be used ({e}): create it or choose another --journal",
            journal.display(),
            dir.display()
        ))
    })?;
    let Some(target) = target_spec.path() else {
        return Ok(()); // a simulated card
    };
    let Ok(tmeta) = std::fs::metadata(target) else {
        return Ok(()); // device::open reports a missing target
    };
    if tmeta.file_type().is_block_device() {
        let rdev = tmeta.rdev();
        let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
        let dev = dir_meta.dev();
        let (jmaj, jmin) = (rustix::fs::major(dev), rustix::fs::minor(dev));
        let mut on_target = (jmaj, jmin) == (major, minor);
        if let Ok(link) = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")) {
            if let Some(name) = link.file_name().map(|n| n.to_string_lossy().into_owned()) {
                let disk = crate::device::sysfs::whole_disk_name(&name).unwrap_or(name);
                let nodes = mounts::sysfs_nodes(Path::new("/sys/class/block"), &disk);
                on_target |= nodes.iter().any(|n| (n.major, n.minor) == (jmaj, jmin));
            }
        }
        if on_target {
            return Err(Error::Refused(format!(
                "the journal {} would be on the target {target_spec} itself (device {jmaj}:{jmin}): the test could overwrite its own backup. Give --journal a path on another device",
                journal.display()
            )));
        }
    } else {
        let same_inode = std::fs::metadata(journal)
            .map(|j| j.dev() == tmeta.dev() && j.ino() == tmeta.ino())
            .unwrap_or(false);
        let canon_target = std::fs::canonicalize(target).ok();
        let canon_journal = std::fs::canonicalize(&dir)
            .ok()
            .and_then(|d| journal.file_name().map(|f| d.join(f)));
        if same_inode || (canon_target.is_some() && canon_target == canon_journal) {
            return Err(Error::Refused(format!(
                "the journal {} is the target file {target_spec} itself: give --journal another path",
                journal.display()
            )));
        }
    }
    Ok(())
}

/// Refuse when the journal's filesystem lacks room for `bytes` of saved data (with a
/// margin for headers), so a test never stops half-saved for want of space.
pub fn check_space(journal: &Path, bytes: u64) -> Result<()> {
    let dir = parent_dir(journal);
    let free = crate::sys::fs_stats(&dir).ok().and_then(|s| s.free_bytes);
    crate::sys::check_room(
        &dir,
        free,
        "the journal",
        bytes + bytes / 64,
        1 << 20,
        "choose --journal on a filesystem with more room",
    )
}

/// Journals in the default directory that were written for `identity`'s target and never
/// restored (a crash or power loss).
#[derive(Debug, Default)]
pub struct Leftovers {
    /// Journals holding saved regions: a new test must not run until they are restored.
    pub unrestored: Vec<PathBuf>,
    /// Journals whose test is running now (their writer holds the journal's lock).
    pub in_use: Vec<PathBuf>,
    /// Journals that held no saved region, removed: their run stopped before its first
    /// overwrite (every region is saved and made durable before it is written), so there
    /// was nothing to put back. A torn last record without data is such a region: its
    /// write never began.
    pub removed_empty: Vec<PathBuf>,
}

/// Find the leftover journals for `identity`'s target and remove the empty ones.
pub fn clear_leftovers(identity: &Identity) -> Leftovers {
    let mut out = Leftovers::default();
    let Ok(dir) = state_dir() else {
        return out;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "fsjournal") {
            continue;
        }
        let Some(j) = Journal::read_identity(&p) else {
            continue;
        };
        if identity.kind == crate::device::TargetKind::Sim || !may_be(&j, identity) {
            continue;
        }
        let _lock = match format::lock_leftover(&p) {
            Ok(Some(f)) => f,
            Ok(None) => {
                out.in_use.push(p);
                continue;
            }
            Err(_) => {
                out.unrestored.push(p);
                continue;
            }
        };
        match Journal::open(&p) {
            // A torn record with data is left to `restore`, which checks it on the target.
            Ok(j)
                if j.records.is_empty()
                    && j.torn.is_none_or(|t| t.data_present == 0)
                    && format::remove(&p).is_ok() =>
            {
                out.removed_empty.push(p)
            }
            _ => out.unrestored.push(p),
        }
    }
    out.in_use.sort();
    out.unrestored.sort();
    out.removed_empty.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_cannot_be_the_target_file() {
        let d = tempfile::tempdir().unwrap();
        let img = d.path().join("disk.img");
        std::fs::write(&img, vec![0u8; 4096]).unwrap();
        let e = check_location(&img, &crate::device::test_spec(img.to_str().unwrap())).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("itself"), "{e}");
        let dotted = d.path().join(".").join("disk.img");
        assert!(check_location(&dotted, &crate::device::test_spec(img.to_str().unwrap())).is_err());
        check_location(
            &d.path().join("j"),
            &crate::device::test_spec(img.to_str().unwrap()),
        )
        .unwrap();
        check_location(&d.path().join("j"), &crate::device::test_spec("sim:sd-16g")).unwrap();
        let e = check_location(
            Path::new("/nonexistent-dir/j"),
            &crate::device::test_spec("sim:sd-16g"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir"), "{e}");
    }

    /// Issue 44 point 4: a journal in a directory another user can rename in is refused
    /// as `--state` is (they could move it away mid-run); a sticky one is fine.
    #[test]
    fn a_journal_where_others_can_rename_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let shared = d.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let sim = crate::device::test_spec("sim:sd-16g");
        let e = check_location(&shared.join("j.fsjournal"), &sim).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(e.to_string().contains("--journal"), "{e}");
        assert!(e.to_string().contains("writable by group or others"), "{e}");
        // Below it too, and through a link in it.
        std::fs::create_dir(shared.join("sub")).unwrap();
        assert_eq!(
            check_location(&shared.join("sub/j"), &sim)
                .unwrap_err()
                .exit_code(),
            2
        );
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        check_location(&shared.join("j.fsjournal"), &sim).unwrap();
        let ident = Identity {
            spec: "test".into(),
            ..Default::default()
        };
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = format::JournalWriter::create(&shared.join("k"), &ident)
            .err()
            .expect("refused");
        assert_eq!(e.exit_code(), 2, "{e}");
        assert_eq!(
            std::fs::read_dir(&shared).unwrap().count(),
            1,
            "nothing created"
        );
    }

    #[test]
    fn space_check_refuses_absurd_sizes() {
        let d = tempfile::tempdir().unwrap();
        check_space(&d.path().join("j"), 4096).unwrap();
        let e = check_space(&d.path().join("j"), 1 << 62).unwrap_err();
        assert!(e.to_string().contains("free"), "{e}");
    }
}
