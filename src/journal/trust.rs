//! Files flashscope reads or writes on a user's behalf, often as root: journals and
//! `verify`'s resume state. The rules are those sudo, ssh and systemd apply to their own
//! files:
//!
//! - created with `O_EXCL | O_NOFOLLOW` and mode 0600, in a directory every component of
//!   whose path was judged and which is then used through its descriptor
//!   (`sys::dir::Dir`, the same mechanism as every output file), and renamed into place
//!   there (a planted symlink or file is never written through);
//! - opened for reading with `O_NOFOLLOW | O_NONBLOCK`, then checked on the descriptor
//!   (`fstat`): a regular file (a FIFO would block forever, a device would never end) of
//!   bounded size;
//! - trusted only when owned by the invoking user or root and not writable by group or
//!   others: a file someone else could write is not what flashscope wrote.

pub(crate) use crate::sys::dir::Dir;
use crate::{Error, Result};
use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
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
/// others may write: files are created and renamed in it. Returns it open.
pub(crate) fn private_dir(dir: &Path) -> Result<Dir> {
    private_dir_for(
        dir,
        "its journals and state",
        "point XDG_STATE_HOME at a directory of your own (as root: `sudo -H`), or give --journal PATH",
    )
}

/// [`private_dir`] for a directory that holds `what` ("the run history"); `remedy` says
/// what the user can do instead ("give --history PATH"). Every directory on the way is
/// judged ([`walk`]); the directory itself must also not be a link, and not
/// writable by group or others even with the sticky bit.
pub(crate) fn private_dir_for(dir: &Path, what: &str, remedy: &str) -> Result<Dir> {
    let (parent, name) = match (dir.parent(), dir.file_name()) {
        (Some(p), Some(n)) => (
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            },
            Some(n),
        ),
        _ => (dir, None),
    };
    let parent = walk(parent, Some(0o700), remedy)?;
    let d = match name {
        None => parent,
        Some(name) => {
            match parent.stat(name) {
                Ok(n) if n.kind == rustix::fs::FileType::Directory => {}
                Ok(n) => {
                    return Err(Error::Refused(format!(
                        "{} is {}, not a directory: flashscope keeps {what} in a directory of its own; remove it, or {remedy}",
                        shown(dir),
                        n.kind_in_words()
                    )))
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    match parent.make_dir(name, 0o700) {
                        Ok(d) => return Ok(d),
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(e) => {
                            return Err(Error::io(
                                format!("creating the directory {}", shown(dir)),
                                e,
                            ))
                        }
                    }
                }
                Err(e) => {
                    return Err(Error::io(
                        format!("examining the directory {}", shown(dir)),
                        e,
                    ))
                }
            }
            parent
                .sub_dir(name)
                .map_err(|e| Error::io(format!("opening the directory {}", shown(dir)), e))?
        }
    };
    // Under `sudo` with the user's HOME kept, this is the user's directory: root must not
    // create and rename files where that user can plant links.
    let n = d.node();
    let me = euid();
    if n.uid != me && n.uid != 0 {
        return Err(Error::Refused(format!(
            "the directory {} is owned by uid {}, not by you (uid {me}) or root: flashscope only keeps {what} where you or root do; {remedy}",
            shown(dir),
            n.uid
        )));
    }
    if n.mode & 0o022 != 0 {
        return Err(Error::Refused(format!(
            "the directory {} is writable by group or others (mode {:04o}): anyone could replace {what}. If you have checked it, `chmod go-w {}`; or {remedy}",
            shown(dir),
            n.mode,
            shown(dir)
        )));
    }
    Ok(d)
}

fn shown(p: &Path) -> String {
    crate::input::printable(&p.to_string_lossy()).into_owned()
}

/// Open `dir` after judging every directory on the way as ssh judges the path to
/// `~/.ssh` ([`Dir::open_trusted`]): each must be owned by this user or root and not
/// writable by group or others, unless it is sticky (`/tmp`: others cannot rename or
/// remove what is not theirs there), and a symbolic link on the way must be this user's or
/// root's (what it leads to is judged in turn). Otherwise whoever can write one of them
/// could move flashscope's directory away and plant their own; the error names the
/// component (exit 2). `create`: missing directories are made with this mode.
fn walk(dir: &Path, create: Option<u32>, remedy: &str) -> Result<Dir> {
    Dir::open_trusted(dir, create).map_err(|e| {
        let text = crate::input::printable(&e.to_string()).into_owned();
        if e.untrusted() {
            Error::Refused(format!("{text}; {remedy}"))
        } else {
            Error::usage(format!("{text}: create it, or {remedy}"))
        }
    })
}

/// The trusted directory `path` is in (see [`walk`]) and its file name; `what`
/// names the file in errors ("--state").
pub(crate) fn trusted_parent(path: &Path, what: &str, remedy: &str) -> Result<(Dir, OsString)> {
    match Dir::parent_of(path) {
        None => Err(Error::usage(format!(
            "{what} '{}' names no file: give a file name",
            shown(path)
        ))),
        Some(Err(e)) => {
            let text = crate::input::printable(&e.to_string()).into_owned();
            Err(if e.untrusted() {
                Error::Refused(format!("{what} '{}': {text}; {remedy}", shown(path)))
            } else {
                Error::usage(format!("{what} '{}': {text}", shown(path)))
            })
        }
        Some(Ok((dir, name))) => match dir.stat(&name) {
            // A name the filesystem cannot hold (too long) is refused now, not when the
            // file is first written.
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Error::usage(format!(
                "{what} '{}' cannot be used ({e}): give another name",
                shown(path)
            ))),
            _ => Ok((dir, name)),
        },
    }
}

/// Write `bytes` to `path` atomically: a new file beside it (`O_EXCL | O_NOFOLLOW`, mode
/// 0600), created, synced and renamed in the directory judged on the way
/// ([`trusted_parent`]). A symlink at `path` is replaced, never followed. `what` names the
/// file in errors ("--state").
pub fn replace_private(path: &Path, bytes: &[u8], what: &str, remedy: &str) -> Result<()> {
    let (dir, name) = trusted_parent(path, what, remedy)?;
    let (tmp, mut f) = dir
        .create_temp(&name, 0o600)
        .map_err(|e| Error::io(format!("creating {what} '{}'", shown(path)), e))?;
    let r = f
        .write_all(bytes)
        .and_then(|_| f.sync_all())
        .and_then(|_| dir.rename(&tmp, &name));
    if r.is_err() {
        let _ = dir.remove(&tmp);
    }
    r.map_err(|e| Error::io(format!("saving {what} '{}'", shown(path)), e))
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
        replace_private(&state, b"{}", "--state", "r").unwrap();
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
