//! The one way flashscope writes a file the user named (plots, CSV, TSV, HTML pages,
//! exports): opened before anything is measured, never through what another user put at
//! the path.
//!
//! [`OutputFile::create`] walks the path's directory component by component
//! ([`crate::sys::dir::Dir::open_trusted`]: each directory owned by this user or root and
//! not writable by others unless sticky, no link owned by another user) and keeps it open;
//! everything after that is relative to that descriptor, so swapping a directory or a link
//! on the way after the check changes nothing. Then, by what is at the name:
//!
//! - nothing, a regular file, a hard link, or a link of this user's or root's that leads to
//!   a regular file, nothing or a directory: a temporary file is created beside it
//!   (`O_CREAT | O_EXCL | O_NOFOLLOW`, random name) and [`OutputFile::write`] renames it
//!   over the name, so a reader sees the old file or the whole new one, and a linked file
//!   is never written through. Mode 0644 less the umask: these files are meant to be
//!   handed on (journals and state, which are private, use `journal::trust`);
//! - a character device, a FIFO (`/dev/null`, a terminal, a pipe), or a descriptor's name
//!   (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`): written through as a stream, never
//!   replaced. It is opened `O_WRONLY | O_NONBLOCK` at once, so a FIFO with no reader is
//!   refused (exit 2) instead of waiting; `-` is standard output;
//! - a directory, a block device, a socket, or in a directory others can write (sticky)
//!   anything another user owns: refused (exit 2, naming the option and the path).
//!
//! An output that is never written (the run failed) leaves nothing behind.

use crate::sys::dir::{Dir, Node};
use crate::{Error, Result};
use rustix::fs::{FileType, OFlags};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A file the run will write, already opened: a temporary file beside its path, or the
/// stream it names. Cloning shares it; the first [`OutputFile::write`] puts it in place.
#[derive(Clone)]
pub struct OutputFile(Arc<Inner>);

struct Inner {
    option: String,
    path: PathBuf,
    sink: Mutex<Option<Sink>>,
}

/// Where the bytes go.
enum Sink {
    /// A new file in `dir`, renamed from `tmp` over `name` when written.
    Replace {
        dir: Dir,
        name: OsString,
        tmp: OsString,
        file: File,
    },
    /// Written through: a device, a FIFO, standard output.
    Stream(File),
}

impl std::fmt::Debug for OutputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OutputFile({} {})", self.0.option, self.0.path.display())
    }
}

/// The same file: one creation, shared by its clones.
impl PartialEq for OutputFile {
    fn eq(&self, other: &OutputFile) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for OutputFile {}

impl Drop for Inner {
    fn drop(&mut self) {
        let sink = self.sink.get_mut().map(|f| f.take()).unwrap_or(None);
        if let Some(Sink::Replace { dir, tmp, .. }) = sink {
            let _ = dir.remove(&tmp);
        }
    }
}

/// What the name leads to, when it is to be written through.
enum Found {
    /// Nothing to stream to: replace the name with a new file.
    Replace,
    /// Opened: write through it.
    Stream(File),
}

impl OutputFile {
    /// Open the output `path` (see the module's comment), named by `option` in errors
    /// (`--plot`, `-o`). A path that names no file, a directory, a file in a missing or
    /// unwritable directory, or a path another user could redirect is refused (exit 2).
    pub fn create(option: &str, path: &Path) -> Result<OutputFile> {
        let lossy = path.to_string_lossy();
        let shown = crate::input::printable(&lossy);
        let bad = |why: String| Error::usage(format!("{option} '{shown}': {why}"));
        let refused = |why: String| Error::Refused(format!("{option} '{shown}': {why}"));
        let sink = if path.as_os_str() == "-" {
            let out = io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| bad(format!("standard output cannot be used ({e})")))?;
            Sink::Stream(File::from(out))
        } else {
            let (dir, name) = match Dir::parent_of(path) {
                None => return Err(bad("names no file: give a file name".into())),
                Some(Err(e)) if e.untrusted() => {
                    return Err(refused(format!(
                        "{}; write it in a directory of your own (or give - and redirect standard output)",
                        crate::input::printable(&e.to_string())
                    )))
                }
                Some(Err(e)) => {
                    return Err(bad(format!(
                        "{}: create it first, or choose a directory you can write",
                        crate::input::printable(&e.to_string())
                    )))
                }
                Some(Ok(found)) => found,
            };
            match examine(&dir, &name, 0).map_err(|why| match why {
                Refusal::Usage(w) => bad(w),
                Refusal::Refused(w) => refused(w),
            })? {
                Found::Stream(f) => Sink::Stream(f),
                Found::Replace => {
                    let (tmp, file) = dir.create_temp(&name, 0o644).map_err(|e| {
                        bad(format!(
                            "cannot create a file in '{}' ({e}): choose a writable directory",
                            crate::input::printable(&dir.path().to_string_lossy())
                        ))
                    })?;
                    Sink::Replace {
                        dir,
                        name,
                        tmp,
                        file,
                    }
                }
            }
        };
        Ok(OutputFile(Arc::new(Inner {
            option: option.to_string(),
            path: path.to_path_buf(),
            sink: Mutex::new(Some(sink)),
        })))
    }

    /// [`OutputFile::create`] for an optional path.
    pub fn create_opt(option: &str, path: Option<&Path>) -> Result<Option<OutputFile>> {
        path.map(|p| OutputFile::create(option, p)).transpose()
    }

    /// The path the file is put at.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// True when the output is written through (a device, a FIFO, standard output)
    /// rather than put at its path as a new file.
    pub fn is_stream(&self) -> bool {
        let slot = self.0.sink.lock().unwrap_or_else(|p| p.into_inner());
        matches!(*slot, Some(Sink::Stream(_)))
    }

    /// Put `bytes` at the path: written, synced, renamed into place (or written through a
    /// stream). An error names the option and the file (exit 1).
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        self.write_with(|w| w.write_all(bytes))
    }

    /// [`OutputFile::write`] with the content written by `fill`.
    pub fn write_with(&self, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
        let inner = &self.0;
        let what = |e: io::Error| {
            Error::io(
                format!(
                    "{} {}: writing the file",
                    inner.option,
                    crate::input::printable(&inner.path.to_string_lossy())
                ),
                e,
            )
        };
        let mut slot = inner.sink.lock().unwrap_or_else(|p| p.into_inner());
        let Some(sink) = slot.take() else {
            return Err(what(io::Error::other("already written")));
        };
        match sink {
            Sink::Stream(mut file) => {
                let mut w = io::BufWriter::new(&mut file);
                fill(&mut w).and_then(|_| w.flush()).map_err(what)
            }
            Sink::Replace {
                dir,
                name,
                tmp,
                mut file,
            } => {
                let written = {
                    let mut w = io::BufWriter::new(&mut file);
                    fill(&mut w).and_then(|_| w.flush())
                };
                let done = written
                    .and_then(|_| file.sync_all())
                    .and_then(|_| dir.rename(&tmp, &name));
                drop(file);
                if let Err(e) = done {
                    let _ = dir.remove(&tmp);
                    return Err(what(e));
                }
                Ok(())
            }
        }
    }
}

/// Why an output path is refused: a usage error or the trust policy (both exit 2).
enum Refusal {
    Usage(String),
    Refused(String),
}

/// Most links from one output name to the stream it names (`/dev/stdout` takes two).
const MAX_STREAM_LINKS: u32 = 8;

/// Decide what to do with `name` in the trusted `dir` (see the module's comment).
fn examine(dir: &Dir, name: &OsStr, depth: u32) -> std::result::Result<Found, Refusal> {
    let node = match dir.stat(name) {
        Ok(n) => n,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Replace),
        Err(e) => return Err(Refusal::Usage(format!("cannot be used ({e})"))),
    };
    if dir.shared() && !node.ours() {
        return Err(Refusal::Refused(format!(
            "{} owned by uid {} is there, in a directory others can write: it is not yours to replace or write through; choose another name",
            node.kind_in_words(),
            node.uid
        )));
    }
    match node.kind {
        FileType::RegularFile => Ok(Found::Replace),
        FileType::Directory => Err(Refusal::Usage(
            "is a directory: give a file name in it".into(),
        )),
        FileType::Symlink => follow(dir, name, &node, depth),
        FileType::CharacterDevice | FileType::Fifo => open_stream(dir, name, &node, false),
        FileType::BlockDevice => Err(Refusal::Refused(
            "is a block device: a report is never written over a device's data; give a file name"
                .into(),
        )),
        _ => Err(Refusal::Usage(format!(
            "is {}, which cannot be written to: give a file name",
            node.kind_in_words()
        ))),
    }
}

/// A link of this user's or root's (another user's was refused by [`examine`]): a stream
/// where it leads to one, otherwise the link is replaced by the new file.
fn follow(dir: &Dir, name: &OsStr, link: &Node, depth: u32) -> std::result::Result<Found, Refusal> {
    if !link.ours() {
        return Err(Refusal::Refused(format!(
            "is a symbolic link owned by uid {}: not followed; remove it or choose another name",
            link.uid
        )));
    }
    // A descriptor's name in /proc (`/proc/self/fd/1`): its "target" is no path but the
    // open file itself, so it is opened as the kernel resolves it.
    if dir.fs_magic() == Some(crate::sys::magic::PROC) {
        return open_stream(dir, name, link, true);
    }
    if depth >= MAX_STREAM_LINKS {
        return Ok(Found::Replace);
    }
    let Ok(target) = dir.read_link(name) else {
        return Ok(Found::Replace);
    };
    let target = dir.path().join(target);
    // Where it leads is judged as the output's own directory was; a link that leads
    // nowhere usable is replaced as before.
    match Dir::parent_of(&target) {
        Some(Ok((d, n))) => match examine(&d, &n, depth + 1)? {
            Found::Stream(f) => Ok(Found::Stream(f)),
            Found::Replace => Ok(Found::Replace),
        },
        Some(Err(e)) if e.untrusted() => Err(Refusal::Refused(format!(
            "is a link to {}: {}",
            crate::input::printable(&target.to_string_lossy()),
            crate::input::printable(&e.to_string())
        ))),
        _ => Ok(Found::Replace),
    }
}

/// Open a device, FIFO or descriptor name to write through it: `O_WRONLY | O_NONBLOCK`
/// (a FIFO with no reader fails at once, ENXIO), then checked on the descriptor.
fn open_stream(
    dir: &Dir,
    name: &OsStr,
    node: &Node,
    following: bool,
) -> std::result::Result<Found, Refusal> {
    let flags = OFlags::WRONLY | OFlags::NONBLOCK;
    let opened = if following {
        dir.open_following(name, flags)
    } else {
        dir.open_file(name, flags)
    };
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
            return Err(Refusal::Usage(format!(
                "is {} that nothing reads (or a device with no driver): it is not waited on; start its reader first or give a file name",
                if following { "a name of a FIFO or socket" } else { node.kind_in_words() }
            )))
        }
        Err(e) => return Err(Refusal::Usage(format!("cannot be opened for writing ({e})"))),
    };
    let opened = crate::sys::dir::node_of(&file)
        .map_err(|e| Refusal::Usage(format!("cannot be examined ({e})")))?;
    if !following && !opened.same(node) {
        return Err(Refusal::Refused(
            "changed while it was opened: give a name nobody else can change".into(),
        ));
    }
    let append = match opened.kind {
        FileType::CharacterDevice | FileType::Fifo | FileType::Socket => false,
        // A descriptor that names a regular file (`> out.txt`): written at its end, as
        // the shell's own output would be; standard output itself is shared.
        FileType::RegularFile if following => true,
        _ => {
            return Err(Refusal::Refused(format!(
                "leads to {}, which is not written through: give a file name",
                opened.kind_in_words()
            )))
        }
    };
    for fd in [io::stdout().as_fd(), io::stderr().as_fd()] {
        if crate::sys::dir::node_of(&fd).is_ok_and(|n| n.same(&opened)) {
            let own = fd
                .try_clone_to_owned()
                .map_err(|e| Refusal::Usage(format!("cannot be used ({e})")))?;
            return Ok(Found::Stream(File::from(own)));
        }
    }
    // Blocking again from here: a reader that is slow is waited for.
    let mut fl = rustix::fs::fcntl_getfl(&file)
        .map_err(|e| Refusal::Usage(format!("cannot be used ({e})")))?;
    fl.remove(OFlags::NONBLOCK);
    if append {
        fl.insert(OFlags::APPEND);
    }
    rustix::fs::fcntl_setfl(&file, fl)
        .map_err(|e| Refusal::Usage(format!("cannot be used ({e})")))?;
    Ok(Found::Stream(file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn links_are_replaced_never_written_through() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        // A symbolic link and a hard link at the output path.
        let sym = d.path().join("sym.svg");
        std::os::unix::fs::symlink(&victim, &sym).unwrap();
        let hard = d.path().join("hard.svg");
        std::fs::hard_link(&victim, &hard).unwrap();
        let dangling = d.path().join("dangling.svg");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        for p in [&sym, &hard, &dangling] {
            let out = OutputFile::create("--plot", p).unwrap();
            assert!(!out.is_stream());
            out.write(b"<svg/>").unwrap();
            let meta = std::fs::symlink_metadata(p).unwrap();
            assert!(meta.file_type().is_file(), "{}", p.display());
            assert_eq!(std::fs::read(p).unwrap(), b"<svg/>");
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!d.path().join("nowhere").exists());
    }

    /// Issue 44 point 1: a FIFO or a device at the path is written through, never
    /// replaced by a regular file; a FIFO nobody reads is refused at once, not waited on.
    #[test]
    fn special_files_at_the_path_are_streamed_never_replaced() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let d = tempfile::tempdir().unwrap();
        let fifo = crate::input::test_fifo(d.path(), "fifo.svg");
        let t0 = std::time::Instant::now();
        let e = OutputFile::create("--plot", &fifo).unwrap_err();
        assert!(t0.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("nothing reads"), "{e}");
        assert!(e.to_string().contains("fifo.svg"), "{e}");
        // With a reader: streamed, and still a FIFO afterwards.
        let reader_path = fifo.clone();
        let reader = std::thread::spawn(move || {
            // A blocking open: it waits for the writer, and counts as a reader meanwhile.
            let mut f = std::fs::File::open(&reader_path).unwrap();
            let mut got = Vec::new();
            f.read_to_end(&mut got).unwrap();
            got
        });
        let mut out = None;
        for _ in 0..200 {
            match OutputFile::create("--plot", &fifo) {
                Ok(o) => {
                    out = Some(o);
                    break;
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
        let out = out.expect("the FIFO opens once its reader is there");
        assert!(out.is_stream());
        out.write(b"<svg/>").unwrap();
        drop(out);
        assert_eq!(reader.join().unwrap(), b"<svg/>");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            1,
            "no temporary file"
        );
        // A character device (a null device made here, as root): written through.
        if crate::sys::is_root() {
            let null = d.path().join("null");
            rustix::fs::mknodat(
                rustix::fs::CWD,
                &null,
                FileType::CharacterDevice,
                rustix::fs::Mode::from_raw_mode(0o666),
                rustix::fs::makedev(1, 3),
            )
            .unwrap();
            let link = d.path().join("to-null");
            std::os::unix::fs::symlink(&null, &link).unwrap();
            for p in [&null, &link] {
                let out = OutputFile::create("-o", p).unwrap();
                assert!(out.is_stream(), "{}", p.display());
                out.write(&[b'x'; 100_000]).unwrap();
            }
            assert!(std::fs::metadata(&null)
                .unwrap()
                .file_type()
                .is_char_device());
            assert!(std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
        }
        // A directory is refused.
        let e = OutputFile::create("-o", d.path()).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
    }

    /// Issue 44 point 2: another user's link on the way is not followed, and a directory
    /// swapped after the check does not move the output.
    #[test]
    fn another_users_symlinked_parent_is_refused_and_a_later_swap_changes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let private = d.path().join("private");
        std::fs::create_dir(&private).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(private.join("index.html"), b"precious").unwrap();
        let att = d.path().join("att");
        std::fs::create_dir(&att).unwrap();
        std::os::unix::fs::symlink(&private, att.join("d")).unwrap();
        if crate::sys::is_root() {
            // The attacker's directory and link: owned by nobody.
            std::os::unix::fs::lchown(att.join("d"), Some(65534), Some(65534)).unwrap();
            std::os::unix::fs::chown(&att, Some(65534), Some(65534)).unwrap();
        } else {
            std::fs::set_permissions(&att, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        let e = OutputFile::create("-o", &att.join("d/index.html")).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(e.to_string().contains("att/d/index.html"), "{e}");
        assert!(e.to_string().contains("is on the way"), "{e}");
        assert_eq!(
            std::fs::read(private.join("index.html")).unwrap(),
            b"precious"
        );
        assert_eq!(std::fs::read_dir(&private).unwrap().count(), 1);
        // Checked, then the directory is moved away and a link put in its place.
        let mine = d.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        let out = OutputFile::create("-o", &mine.join("index.html")).unwrap();
        std::fs::rename(&mine, d.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&private, &mine).unwrap();
        out.write(b"report").unwrap();
        assert_eq!(
            std::fs::read(d.path().join("moved/index.html")).unwrap(),
            b"report"
        );
        assert_eq!(
            std::fs::read(private.join("index.html")).unwrap(),
            b"precious"
        );
        assert_eq!(std::fs::read_dir(&private).unwrap().count(), 1);
    }

    #[test]
    fn a_bad_path_fails_at_creation_naming_the_option_and_a_failed_run_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let e = OutputFile::create("--csv", &d.path().join("no/such/x.csv")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().starts_with("--csv '"), "{e}");
        assert!(e.to_string().contains("create it first"), "{e}");
        let e = OutputFile::create("-o", d.path()).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        {
            let _out = OutputFile::create("--plot", &d.path().join("p.svg")).unwrap();
            assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        }
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "temporary file removed"
        );
    }

    #[test]
    fn written_once_with_the_usual_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("page.html");
        let out = OutputFile::create("-o", &p).unwrap();
        out.clone().write(b"one").unwrap();
        assert!(out.write(b"two").is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o600, 0o600);
        assert_eq!(
            mode & 0o044,
            0o044 & !umask(),
            "readable by others unless the umask says no"
        );
    }

    fn umask() -> u32 {
        let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
        rustix::process::umask(old);
        old.bits()
    }
}
