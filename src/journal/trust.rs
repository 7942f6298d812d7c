//! Files flashscope reads or writes on a user's behalf, often as root: journals and
//! `verify`'s resume state. The rules are those sudo, ssh and systemd apply to their own
//! files:
//!
//! - created with `O_EXCL | O_NOFOLLOW` and mode 0600, in a private directory, and
//!   renamed into place (a planted symlink or file is never written through);
//! - opened for reading with `O_NOFOLLOW | O_NONBLOCK`, then checked on the descriptor
//!   (`fstat`): a regular file (a FIFO would block forever, a device would never end) of
//!   bounded size;
//! - trusted only when owned by the invoking user or root and not writable by group or
//!   others: a file someone else could write is not what flashscope wrote.

use crate::{Error, Result};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The effective user id: the user flashscope acts as.
pub fn euid() -> u32 {
    crate::sys::euid()
}

/// Open `path` read-only without following a symlink in its last component and without
/// blocking (a FIFO with no writer would otherwise hang the open). Check the result with
/// [`crate::input::check_regular`].
pub fn open_nofollow(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    Ok(f)
}

/// The error for an [`open_nofollow`] that failed, for `what` (e.g. "journal") at `path`;
/// `None` for "not found", which each caller words itself.
pub fn open_error(what: &str, path: &Path, e: io::Error) -> Option<Error> {
    if e.kind() == io::ErrorKind::NotFound {
        return None;
    }
    Some(if e.raw_os_error() == Some(libc::ELOOP) {
        Error::usage(format!(
            "{what} {} is a symbolic link: give the file itself (links are not followed, so nobody can aim one at another file)",
            path.display()
        ))
    } else {
        Error::io(format!("opening {what} {}", path.display()), e)
    })
}

/// Refuse (exit 2) a file that is not owned by the invoking user or root, or that group or
/// others may write: its content decides what flashscope writes, as this user.
pub fn check_owner(meta: &Metadata, what: &str, path: &Path) -> Result<()> {
    let me = euid();
    let owner = meta.uid();
    if owner != me && owner != 0 {
        return Err(Error::Refused(format!(
            "{what} {} is owned by uid {owner}, not by you (uid {me}) or root: flashscope only acts on files you or root wrote. Nothing was written. If you have checked it and trust it, take it over (`chown {me} {}`) and rerun",
            path.display(),
            path.display()
        )));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(Error::Refused(format!(
            "{what} {} is writable by group or others (mode {mode:04o}): anyone could have changed it. Nothing was written. If you have checked it and trust it, `chmod go-w {}` and rerun",
            path.display(),
            path.display()
        )));
    }
    Ok(())
}

/// Create `dir` (and its parents) private to this user (mode 0700 for what is created),
/// and refuse a directory that is a symlink, belongs to another user or that group or
/// others may write: files are created and renamed in it.
pub fn private_dir(dir: &Path) -> Result<()> {
    private_dir_for(
        dir,
        "its journals and state",
        "point XDG_STATE_HOME at a directory of your own (as root: `sudo -H`), or give --journal PATH",
    )
}

/// [`private_dir`] for a directory that holds `what` ("the run history"); `remedy` says
/// what the user can do instead ("give --history PATH").
pub fn private_dir_for(dir: &Path, what: &str, remedy: &str) -> Result<()> {
    trusted_ancestors(dir, remedy)?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io(format!("creating the directory {}", dir.display()), e))?;
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| Error::io(format!("examining the directory {}", dir.display()), e))?;
    if !meta.file_type().is_dir() {
        return Err(Error::Refused(format!(
            "{} is {}, not a directory: flashscope keeps {what} in a directory of its own; remove it, or {remedy}",
            dir.display(),
            crate::input::kind_in_words(&meta)
        )));
    }
    // Under `sudo` with the user's HOME kept, this is the user's directory: root must not
    // create and rename files where that user can plant links.
    check_owner(&meta, "the directory", dir)
        .map_err(|e| Error::Refused(format!("{e}; or {remedy}")))
}

/// Check every directory above `dir` that exists, as ssh checks the path to `~/.ssh`:
/// resolved (a symbolic link on the way is judged by where it leads), each component
/// must be owned by this user or root and not writable by group or others, unless it is
/// sticky (`/tmp`: others cannot rename or remove what is not theirs there). Otherwise
/// whoever can write one of them could move flashscope's directory away and plant their
/// own; the error names the component.
pub fn trusted_ancestors(dir: &Path, remedy: &str) -> Result<()> {
    let mut existing = dir;
    while std::fs::symlink_metadata(existing).is_err() {
        match existing.parent() {
            Some(p) if !p.as_os_str().is_empty() => existing = p,
            _ => return Ok(()), // a relative path below a missing directory: created fresh
        }
    }
    let real = existing
        .canonicalize()
        .map_err(|e| Error::io(format!("resolving {}", existing.display()), e))?;
    // The path as written too: a symbolic link on the way can be changed by whoever can
    // write the directory it is in, so that directory is checked as well (a link to a
    // root-owned place inside another user's tree is theirs to repoint).
    let lexical = if existing.is_absolute() {
        existing.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| Error::io("finding the current directory".to_string(), e))?
            .join(existing)
    };
    for comp in real.ancestors().chain(lexical.ancestors()) {
        let meta = std::fs::metadata(comp)
            .map_err(|e| Error::io(format!("examining {}", comp.display()), e))?;
        if let Some(why) = crate::sys::others_can_rename(&meta) {
            let via = if real == existing {
                String::new()
            } else {
                format!(" (where {} leads)", existing.display())
            };
            return Err(Error::Refused(format!(
                "{} is on the way to {}{via} and {why}: whoever can write it could replace what flashscope keeps there; {remedy}",
                comp.display(),
                dir.display(),
            )));
        }
    }
    Ok(())
}

/// Write `bytes` to `path` atomically: a new file beside it (`O_EXCL | O_NOFOLLOW`, mode
/// 0600) is written, synced and renamed over `path`. A symlink at `path` is replaced,
/// never followed.
pub fn replace_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (tmp, mut f) = crate::sys::create_beside(path, 0o600)?;
    let r = f
        .write_all(bytes)
        .and_then(|_| f.sync_all())
        .and_then(|_| std::fs::rename(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn fifos_symlinks_and_big_files_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = crate::input::test_fifo(d.path(), "fifo");
        let f = open_nofollow(&fifo).unwrap(); // O_NONBLOCK: returns at once
        let e = crate::input::check_regular(&f, &fifo, "journal", 1 << 20).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let real = d.path().join("real");
        std::fs::write(&real, b"12345").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = open_error("journal", &link, open_nofollow(&link).unwrap_err()).unwrap();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let f = open_nofollow(&real).unwrap();
        assert!(crate::input::check_regular(&f, &real, "state file", 4)
            .unwrap_err()
            .to_string()
            .contains("5 B is larger than the 4 B"));
        crate::input::check_regular(&f, &real, "state file", 5).unwrap();
    }

    #[test]
    fn group_writable_files_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j");
        std::fs::write(&p, b"x").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o620)).unwrap();
        let e = check_owner(&std::fs::metadata(&p).unwrap(), "journal", &p).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("chmod go-w"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        check_owner(&std::fs::metadata(&p).unwrap(), "journal", &p).unwrap();
    }

    #[test]
    fn a_replaced_symlink_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let state = d.path().join("state.json");
        std::os::unix::fs::symlink(&victim, &state).unwrap();
        replace_private(&state, b"{}").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&state).unwrap(), b"{}");
        let meta = std::fs::symlink_metadata(&state).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            2,
            "no tmp left"
        );
    }

    #[test]
    fn private_dirs_are_created_0700_and_others_refused() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("a/b");
        private_dir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(private_dir(&dir).unwrap_err().exit_code(), 2);
        let link = d.path().join("l");
        std::os::unix::fs::symlink(d.path().join("a"), &link).unwrap();
        assert!(private_dir(&link)
            .unwrap_err()
            .to_string()
            .contains("symbolic link"));
    }

    #[test]
    fn every_directory_on_the_way_is_checked_and_the_bad_one_named() {
        let d = tempfile::tempdir().unwrap();
        // A HOME others can write (or, as root, another user's), with the state directory
        // still to be created below it: refused before anything is created.
        let home = d.path().join("home");
        std::fs::create_dir(&home).unwrap();
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        let state = home.join(".local/state/flashscope");
        let e = private_dir(&state).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string()
                .contains(&format!("{} is on the way", home.display())),
            "{e}"
        );
        assert!(!home.join(".local").exists(), "nothing created");
        // Through a symbolic link: judged by where it leads.
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::os::unix::fs::symlink(&open, home.join(".local")).unwrap();
        let e = private_dir(&state).unwrap_err();
        assert!(e.to_string().contains("where"), "{e}");
        // A sticky directory (as /tmp) is fine: others cannot move what is not theirs.
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        private_dir(&state).unwrap();
        // A link to a safe place, in a directory others can write (issue 30: a symlinked
        // ~/.local/state): they can repoint the link, so the directory holding it counts.
        let home2 = d.path().join("home2");
        let local = home2.join(".local");
        std::fs::create_dir_all(&local).unwrap();
        std::fs::set_permissions(&local, std::fs::Permissions::from_mode(0o777)).unwrap();
        let safe = d.path().join("safe");
        std::fs::create_dir(&safe).unwrap();
        std::fs::set_permissions(&safe, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(&safe, local.join("state")).unwrap();
        let e = private_dir(&local.join("state/flashscope")).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("{} is on the way", local.display())),
            "{e}"
        );
        assert!(!safe.join("flashscope").exists(), "nothing created");
        if euid() == 0 {
            let theirs = d.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
            let e = private_dir(&theirs.join("x")).unwrap_err();
            assert!(e.to_string().contains("owned by uid 65534"), "{e}");
        }
    }
}
