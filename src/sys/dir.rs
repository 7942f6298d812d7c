//! Directories opened once and used through their descriptor: the one way flashscope
//! creates, renames and opens a file at a path it was given (outputs, journals, resume
//! state, history, the `fs` tests' files).
//!
//! [`Dir::open_trusted`] walks a path one component at a time from `/`, each opened with
//! `O_PATH | O_DIRECTORY | O_NOFOLLOW` and judged on the descriptor (`fstat`) as ssh judges
//! the path to `~/.ssh`: owned by this user or root, and not writable by group or others
//! unless sticky (`/tmp`). A symbolic link on the way is followed only when this user or
//! root owns it (the directory holding it has been judged already), and what it leads to
//! is judged in turn. Whatever is done to the names afterwards, every later operation is
//! relative to the directory that was checked (`openat`, `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it, `renameat`,
//! `linkat`, `unlinkat`), so a swap after the check changes nothing.

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Most symbolic links followed in one walk (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// What `fstat` says about a file, in the fields the checks use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Node {
    pub kind: FileType,
    pub uid: u32,
    /// Permission bits with set-id and sticky (`st_mode & 0o7777`).
    pub mode: u32,
    pub dev: u64,
    pub ino: u64,
}

impl Node {
    // The stat fields' types differ between architectures (and rustix's backends).
    #[allow(clippy::unnecessary_cast)]
    fn of(st: &rustix::fs::Stat) -> Node {
        Node {
            kind: FileType::from_raw_mode(st.st_mode as _),
            uid: st.st_uid,
            mode: st.st_mode as u32 & 0o7777,
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
        }
    }

    /// Owned by this user or root.
    pub(crate) fn ours(&self) -> bool {
        self.uid == super::euid() || self.uid == 0
    }

    /// The same file as `other` (device and inode).
    pub(crate) fn same(&self, other: &Node) -> bool {
        (self.dev, self.ino) == (other.dev, other.ino)
    }

    /// This kind in words, for messages ("a FIFO").
    pub(crate) fn kind_in_words(&self) -> &'static str {
        match self.kind {
            FileType::RegularFile => "a regular file",
            FileType::Directory => "a directory",
            FileType::Symlink => "a symbolic link",
            FileType::Fifo => "a FIFO",
            FileType::Socket => "a socket",
            FileType::CharacterDevice => "a character device",
            FileType::BlockDevice => "a block device",
            FileType::Unknown => "a file of unknown kind",
        }
    }
}

/// Why a user other than this one and root could rename or remove what is in a directory
/// of owner `uid` and permission bits `mode`: theirs, or writable by group or others
/// without the sticky bit. `None` when only this user and root can.
pub(crate) fn rename_risk(uid: u32, mode: u32) -> Option<String> {
    let me = super::euid();
    let mode = mode & 0o7777;
    if uid != me && uid != 0 {
        Some(format!(
            "is owned by uid {uid}, not by you (uid {me}) or root"
        ))
    } else if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        Some(format!("is writable by group or others (mode {mode:04o})"))
    } else {
        None
    }
}

/// Why [`Dir::open_trusted`] stopped.
#[derive(Debug)]
pub(crate) enum Why {
    /// A component does not exist (and was not to be created).
    Missing,
    /// A component is not a directory (or a link to one).
    NotDir,
    /// Another user could rename in the directory, or owns the link: the reason.
    Untrusted(String),
    /// More than [`MAX_LINKS`] symbolic links.
    TooManyLinks,
    /// The system refused an operation (permission, a name too long, ...).
    Io(io::Error),
}

/// A walk that stopped: at which component, on the way to which path, and why.
#[derive(Debug)]
pub(crate) struct WalkError {
    /// The component the walk stopped at, as resolved so far.
    pub at: PathBuf,
    /// The path asked for.
    pub path: PathBuf,
    /// The symbolic link (as written) that led there, if any.
    pub via: Option<PathBuf>,
    pub why: Why,
}

impl WalkError {
    /// True when the path is refused for trust (exit 2 everywhere), not for a missing or
    /// unusable directory.
    pub(crate) fn untrusted(&self) -> bool {
        matches!(self.why, Why::Untrusted(_))
    }
}

fn shown(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The names as they are: a caller shows the text through `input::printable`.
impl fmt::Display for WalkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = shown(&self.at);
        let path = shown(&self.path);
        let via = match &self.via {
            Some(l) => format!(" (where {} leads)", shown(l)),
            None => String::new(),
        };
        match &self.why {
            Why::Missing => write!(f, "{at}{via} does not exist"),
            Why::NotDir => write!(f, "{at}{via} is not a directory"),
            Why::Untrusted(why) => write!(
                f,
                "{at} is on the way to {path}{via} and {why}: whoever can write it could swap what flashscope writes or reads there"
            ),
            Why::TooManyLinks => write!(f, "{path}: more than {MAX_LINKS} symbolic links on the way"),
            Why::Io(e) => write!(f, "{at}{via} cannot be used ({e})"),
        }
    }
}

/// An open directory; every file operation is relative to its descriptor.
#[derive(Debug)]
pub(crate) struct Dir {
    fd: OwnedFd,
    /// The directory as resolved (for messages and the paths handed to other programs).
    path: PathBuf,
    node: Node,
}

fn o_path_dir(dirfd: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        dirfd,
        name,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// `openat(dirfd, name)` for a single name without following a link anywhere:
/// `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, or
/// `openat` with `O_NOFOLLOW` on a kernel without it (before 5.6, or a filter that
/// refuses it).
fn open_beneath(dirfd: BorrowedFd<'_>, name: &OsStr, flags: OFlags, mode: u32) -> io::Result<File> {
    check_name(name)?;
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
    let mode = Mode::from_raw_mode(mode as _);
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let fd = match rustix::fs::openat2(dirfd, name, flags, mode, resolve) {
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM | rustix::io::Errno::INVAL) => {
            rustix::fs::openat(dirfd, name, flags, mode)?
        }
        r => r?,
    };
    Ok(File::from(fd))
}

/// A name inside a directory: one component, not `.` or `..`.
fn check_name(name: &OsStr) -> io::Result<()> {
    let b = name.as_bytes();
    if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a single file name",
        ));
    }
    Ok(())
}

impl Dir {
    /// Open `path`, the directory a test is to write in (`fs`, `verify DIR`), walking it
    /// as [`Dir::open_trusted`] does but without judging who may write the directories on
    /// the way (the directory under test may well be another user's, a card mounted for
    /// them): a symbolic link on the way is still followed only when this user or root
    /// owns it, so another user cannot lead the test into a directory of this user's
    /// (`att/d -> /root-only`), and everything later is relative to the descriptor.
    pub(crate) fn open_under_test(path: &Path) -> Result<Dir, WalkError> {
        Dir::walk(path, None, false)
    }

    /// Walk `path` from `/` (a relative path from the current directory), judging each
    /// directory on the way and following only links this user or root owns (see the
    /// module's comment). `create`: missing directories are made with this mode (and
    /// judged as made); otherwise a missing one stops the walk.
    pub(crate) fn open_trusted(path: &Path, create: Option<u32>) -> Result<Dir, WalkError> {
        Dir::walk(path, create, true)
    }

    /// The walk of [`Dir::open_trusted`]; `judge_dirs: false` judges only the links.
    fn walk(path: &Path, create: Option<u32>, judge_dirs: bool) -> Result<Dir, WalkError> {
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|e| WalkError {
                    at: PathBuf::from("."),
                    path: path.to_path_buf(),
                    via: None,
                    why: Why::Io(e),
                })?
                .join(path)
        };
        let fail = |at: &Path, via: &Option<PathBuf>, why: Why| WalkError {
            at: at.to_path_buf(),
            path: path.to_path_buf(),
            via: via.clone(),
            why,
        };
        let root = |via: &Option<PathBuf>| -> Result<(OwnedFd, Node), WalkError> {
            let fd = rustix::fs::openat(
                rustix::fs::CWD,
                "/",
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| fail(Path::new("/"), via, Why::Io(e.into())))?;
            let node = Node::of(
                &rustix::fs::fstat(&fd)
                    .map_err(|e| fail(Path::new("/"), via, Why::Io(e.into())))?,
            );
            Ok((fd, node))
        };
        let judge = |at: &Path, node: &Node, via: &Option<PathBuf>| -> Result<(), WalkError> {
            if !judge_dirs {
                return Ok(());
            }
            match rename_risk(node.uid, node.mode) {
                Some(why) => Err(fail(at, via, Why::Untrusted(why))),
                None => Ok(()),
            }
        };
        let mut via: Option<PathBuf> = None;
        let (mut cur, mut node) = root(&via)?;
        judge(Path::new("/"), &node, &via)?;
        let mut at = PathBuf::from("/");
        let mut pending: Vec<OsString> = components(&abs);
        pending.reverse(); // popped from the end
        let mut links = 0usize;
        while let Some(name) = pending.pop() {
            if name == ".." {
                let fd = o_path_dir(cur.as_fd(), OsStr::new(".."))
                    .map_err(|e| fail(&at, &via, Why::Io(e)))?;
                let n = Node::of(
                    &rustix::fs::fstat(&fd).map_err(|e| fail(&at, &via, Why::Io(e.into())))?,
                );
                at.pop();
                judge(&at, &n, &via)?;
                (cur, node) = (fd, n);
                continue;
            }
            let here = at.join(&name);
            let st = match rustix::fs::statat(&cur, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => Node::of(&st),
                Err(rustix::io::Errno::NOENT) => match create {
                    Some(mode) => {
                        match rustix::fs::mkdirat(
                            &cur,
                            name.as_os_str(),
                            Mode::from_raw_mode(mode as _),
                        ) {
                            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                            Err(e) => return Err(fail(&here, &via, Why::Io(e.into()))),
                        }
                        pending.push(name);
                        continue;
                    }
                    None => return Err(fail(&here, &via, Why::Missing)),
                },
                Err(e) => return Err(fail(&here, &via, Why::Io(e.into()))),
            };
            match st.kind {
                FileType::Symlink => {
                    // The link itself, opened and judged on its descriptor, then read
                    // through it: one swapped in after the stat is not the one followed.
                    let link = rustix::fs::openat(
                        &cur,
                        name.as_os_str(),
                        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(|e| fail(&here, &via, Why::Io(e.into())))?;
                    let st = Node::of(
                        &rustix::fs::fstat(&link)
                            .map_err(|e| fail(&here, &via, Why::Io(e.into())))?,
                    );
                    if st.kind != FileType::Symlink {
                        return Err(fail(
                            &here,
                            &via,
                            Why::Io(io::Error::other("it changed while it was looked at")),
                        ));
                    }
                    if !st.ours() {
                        return Err(fail(
                            &here,
                            &via,
                            Why::Untrusted(format!(
                                "is a symbolic link owned by uid {}, not by you (uid {}) or root: not followed",
                                st.uid,
                                super::euid()
                            )),
                        ));
                    }
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(fail(&here, &via, Why::TooManyLinks));
                    }
                    let target = rustix::fs::readlinkat(&link, "", Vec::new())
                        .map_err(|e| fail(&here, &via, Why::Io(e.into())))?;
                    let target = PathBuf::from(OsStr::from_bytes(target.as_bytes()));
                    via = Some(here.clone());
                    let mut more = components(&target);
                    more.reverse();
                    pending.extend(more);
                    if target.is_absolute() {
                        (cur, node) = root(&via)?;
                        at = PathBuf::from("/");
                    }
                }
                FileType::Directory => {
                    let fd = o_path_dir(cur.as_fd(), &name)
                        .map_err(|e| fail(&here, &via, Why::Io(e)))?;
                    let n = Node::of(
                        &rustix::fs::fstat(&fd)
                            .map_err(|e| fail(&here, &via, Why::Io(e.into())))?,
                    );
                    judge(&here, &n, &via)?;
                    (cur, node) = (fd, n);
                    at = here;
                }
                _ => return Err(fail(&here, &via, Why::NotDir)),
            }
        }
        // A descriptor that can be synced (O_PATH cannot); kept as O_PATH where this user
        // may not read the directory.
        let fd = rustix::fs::openat(
            &cur,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap_or(cur);
        Ok(Dir { fd, path: at, node })
    }

    /// The trusted directory `path` is in and its file name; `None` for a path that names
    /// no file (`/`, `..`, ending in `.`).
    pub(crate) fn parent_of(path: &Path) -> Option<Result<(Dir, OsString), WalkError>> {
        let name = path.file_name()?.to_os_string();
        if path.as_os_str().as_bytes().ends_with(b"/.") {
            return None;
        }
        let parent = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Some(Dir::open_trusted(parent, None).map(|d| (d, name)))
    }

    /// The directory as resolved.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The directory itself.
    pub(crate) fn node(&self) -> Node {
        self.node
    }

    /// Group or others may create names in it (a sticky shared directory such as `/tmp`):
    /// a name there that is not this user's or root's was put there by someone else.
    pub(crate) fn shared(&self) -> bool {
        self.node.mode & 0o022 != 0
    }

    /// The filesystem's magic number (`fstatfs`).
    pub(crate) fn fs_magic(&self) -> Option<u32> {
        super::fs_stats_fd(&self.fd).ok().map(|s| s.magic)
    }

    /// What is at `name`, the link itself when it is one.
    pub(crate) fn stat(&self, name: &OsStr) -> io::Result<Node> {
        check_name(name)?;
        Ok(Node::of(&rustix::fs::statat(
            &self.fd,
            name,
            AtFlags::SYMLINK_NOFOLLOW,
        )?))
    }

    /// The text of the symbolic link `name`.
    pub(crate) fn read_link(&self, name: &OsStr) -> io::Result<PathBuf> {
        let t = rustix::fs::readlinkat(&self.fd, name, Vec::new())?;
        Ok(PathBuf::from(OsStr::from_bytes(t.as_bytes())))
    }

    /// Create the new file `name`: `O_CREAT | O_EXCL | O_NOFOLLOW` with `mode`, opened
    /// with `access` (`OFlags::WRONLY` or `RDWR`).
    pub(crate) fn create_new(&self, name: &OsStr, access: OFlags, mode: u32) -> io::Result<File> {
        open_beneath(
            self.fd.as_fd(),
            name,
            access | OFlags::CREATE | OFlags::EXCL,
            mode,
        )
    }

    /// Create a new file to be renamed over `name`: hidden, named after it with a random
    /// suffix nobody can plant anything at beforehand, [`Dir::create_new`]. Returns the
    /// temporary name and the file.
    pub(crate) fn create_temp(&self, name: &OsStr, mode: u32) -> io::Result<(OsString, File)> {
        check_name(name)?;
        // Without the file's extension (a textfile collector ignores it); a long name is
        // cut so the temporary name stays within NAME_MAX.
        let mut tmp = OsString::from(".");
        let b = name.as_bytes();
        tmp.push(OsStr::from_bytes(&b[..b.len().min(200)]));
        tmp.push(format!(".{:016x}.tmp", rand::random::<u64>()));
        let f = self.create_new(&tmp, OFlags::WRONLY, mode)?;
        Ok((tmp, f))
    }

    /// Open the existing `name` without following a link (`O_NOFOLLOW` and no link on
    /// the way), with `flags` (add `OFlags::NONBLOCK` where a FIFO could be).
    pub(crate) fn open_file(&self, name: &OsStr, flags: OFlags) -> io::Result<File> {
        open_beneath(self.fd.as_fd(), name, flags, 0)
    }

    /// Open `name` (not through a link), creating it with `mode` when `flags` has
    /// `OFlags::CREATE` and it is missing.
    pub(crate) fn open_or_create(
        &self,
        name: &OsStr,
        flags: OFlags,
        mode: u32,
    ) -> io::Result<File> {
        open_beneath(self.fd.as_fd(), name, flags, mode)
    }

    /// Open `name` following what is there (a descriptor's magic link in /proc), with
    /// `flags`; only for names [`Dir::stat`] has shown to be this user's or root's links
    /// in a directory only they can write.
    pub(crate) fn open_following(&self, name: &OsStr, flags: OFlags) -> io::Result<File> {
        check_name(name)?;
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            flags | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        )?;
        Ok(File::from(fd))
    }

    /// Rename `from` to `to`, both in this directory.
    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        check_name(from)?;
        check_name(to)?;
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    /// Hard-link `from` as `to` (fails when `to` exists).
    pub(crate) fn link(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        check_name(from)?;
        check_name(to)?;
        Ok(rustix::fs::linkat(
            &self.fd,
            from,
            &self.fd,
            to,
            AtFlags::empty(),
        )?)
    }

    /// Remove the file `name`.
    pub(crate) fn remove(&self, name: &OsStr) -> io::Result<()> {
        check_name(name)?;
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }

    /// Remove the empty directory `name`.
    pub(crate) fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
        check_name(name)?;
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR)?)
    }

    /// Make the directory `name` with `mode` and open it (not through a link). A
    /// directory that is not the one made (someone swapped the name meanwhile) is an error.
    pub(crate) fn make_dir(&self, name: &OsStr, mode: u32) -> io::Result<Dir> {
        check_name(name)?;
        rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode as _))?;
        let d = self.sub_dir(name)?;
        if d.node.uid != super::euid() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "the directory made was replaced by one of uid {}",
                    d.node.uid
                ),
            ));
        }
        Ok(d)
    }

    /// Open the sub-directory `name` (not through a link).
    pub(crate) fn sub_dir(&self, name: &OsStr) -> io::Result<Dir> {
        let f = open_beneath(self.fd.as_fd(), name, OFlags::RDONLY | OFlags::DIRECTORY, 0)?;
        let fd = OwnedFd::from(f);
        let node = Node::of(&rustix::fs::fstat(&fd)?);
        Ok(Dir {
            fd,
            path: self.path.join(name),
            node,
        })
    }

    /// Make what was created or renamed in it durable.
    pub(crate) fn sync(&self) -> io::Result<()> {
        Ok(rustix::fs::fsync(&self.fd)?)
    }
}

/// `path`'s components as names to walk (`.` left out, `..` kept).
fn components(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// A file's node by its descriptor (`fstat`).
pub(crate) fn node_of(f: &impl AsFd) -> io::Result<Node> {
    Ok(Node::of(&rustix::fs::fstat(f)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_walk_opens_what_it_judged_and_names_the_bad_component() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        std::fs::create_dir(&a).unwrap();
        let dir = Dir::open_trusted(&a.join("b/c"), Some(0o700)).unwrap();
        assert_eq!(dir.path(), std::fs::canonicalize(a.join("b/c")).unwrap());
        // Created through the descriptor, renamed in it.
        let (tmp, _f) = dir.create_temp(OsStr::new("x"), 0o600).unwrap();
        dir.rename(&tmp, OsStr::new("x")).unwrap();
        assert!(a.join("b/c/x").is_file());
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = Dir::open_trusted(&a.join("b"), None).unwrap_err();
        assert!(e.untrusted(), "{e}");
        assert!(
            e.to_string()
                .starts_with(&format!("{} is on the way", a.display())),
            "{e}"
        );
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o1777)).unwrap();
        Dir::open_trusted(&a.join("b"), None).unwrap();
        let e = Dir::open_trusted(&a.join("nope/x"), None).unwrap_err();
        assert!(matches!(e.why, Why::Missing), "{e}");
    }

    #[test]
    fn a_swap_after_the_walk_changes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real");
        let other = d.path().join("other");
        std::fs::create_dir(&real).unwrap();
        std::fs::create_dir(&other).unwrap();
        let dir = Dir::open_trusted(&real, None).unwrap();
        // The checked directory is moved away and a link to another put at its name.
        std::fs::rename(&real, d.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&other, &real).unwrap();
        let f = dir
            .create_new(OsStr::new("f"), OFlags::WRONLY, 0o600)
            .unwrap();
        drop(f);
        assert!(d.path().join("moved/f").is_file());
        assert_eq!(std::fs::read_dir(&other).unwrap().count(), 0);
        // No link is followed at the name either.
        std::os::unix::fs::symlink(d.path().join("moved/f"), d.path().join("moved/l")).unwrap();
        let e = dir.open_file(OsStr::new("l"), OFlags::RDONLY).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP), "{e}");
    }

    #[test]
    fn own_links_are_followed_and_judged_where_they_lead() {
        let d = tempfile::tempdir().unwrap();
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::create_dir(open.join("in")).unwrap();
        std::os::unix::fs::symlink(open.join("in"), d.path().join("l")).unwrap();
        let e = Dir::open_trusted(&d.path().join("l"), None).unwrap_err();
        assert!(e.to_string().contains("where"), "{e}");
        std::os::unix::fs::symlink("l2", d.path().join("l1")).unwrap();
        std::os::unix::fs::symlink("l1", d.path().join("l2")).unwrap();
        let e = Dir::open_trusted(&d.path().join("l1"), None).unwrap_err();
        assert!(matches!(e.why, Why::TooManyLinks), "{e}");
        std::os::unix::fs::symlink(".", d.path().join("here")).unwrap();
        let dir = Dir::open_trusted(&d.path().join("here/here"), None).unwrap();
        assert_eq!(
            dir.node().ino,
            node_of(&File::open(d.path()).unwrap()).unwrap().ino
        );
    }
}
