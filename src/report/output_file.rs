//! The one way flashscope writes a file the user named (plots, CSV, TSV, HTML pages,
//! exports): created before anything is measured, never through what is at the path.
//!
//! [`OutputFile::create`] checks the directory and creates a temporary file beside the
//! named one, `O_CREAT | O_EXCL | O_NOFOLLOW` with a random name, so a bad path fails
//! (exit 2, naming the option) before a run that may take hours, and nothing another user
//! planted is opened: a symbolic link, a hard link or a FIFO at the path is replaced by
//! the rename, never written through or waited on. [`OutputFile::write`] writes the
//! content to the temporary file, syncs it and renames it over the path, so a reader sees
//! the old file or the whole new one. An output that is never written (the run failed)
//! leaves nothing behind. Mode 0644 less the umask: these files are meant to be handed on
//! (journals and state, which are private, have their own mechanism in `journal::trust`).

use crate::{Error, Result};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A file the run will write, already created as a temporary file beside its path.
/// Cloning shares it; the first [`OutputFile::write`] puts it in place.
#[derive(Clone)]
pub struct OutputFile(Arc<Inner>);

struct Inner {
    option: String,
    path: PathBuf,
    tmp: PathBuf,
    file: Mutex<Option<File>>,
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
        let file = self.file.get_mut().map(|f| f.take()).unwrap_or(None);
        if file.is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

impl OutputFile {
    /// Create the temporary file for `path`, named by `option` in errors (`--plot`,
    /// `-o`). A path that names no file, a directory, or a file in a missing or
    /// unwritable directory is a usage error (exit 2).
    pub fn create(option: &str, path: &Path) -> Result<OutputFile> {
        let lossy = path.to_string_lossy();
        let shown = crate::input::printable(&lossy);
        let bad = |why: String| Error::usage(format!("{option} '{shown}': {why}"));
        if path.file_name().is_none() {
            return Err(bad("names no file: give a file name".into()));
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(bad(format!(
                    "'{}' is not a directory",
                    crate::input::printable(&dir.to_string_lossy())
                )))
            }
            Err(e) => {
                return Err(bad(format!(
                    "its directory '{}' cannot be used ({e}): create it first",
                    crate::input::printable(&dir.to_string_lossy())
                )))
            }
        }
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err(bad("is a directory: give a file name in it".into()));
        }
        let (tmp, file) = crate::sys::create_beside(path, 0o644).map_err(|e| {
            bad(format!(
                "cannot create a file in '{}' ({e}): choose a writable directory",
                crate::input::printable(&dir.to_string_lossy())
            ))
        })?;
        Ok(OutputFile(Arc::new(Inner {
            option: option.to_string(),
            path: path.to_path_buf(),
            tmp,
            file: Mutex::new(Some(file)),
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

    /// Put `bytes` at the path: written, synced, renamed into place. An error names the
    /// option and the file (exit 1).
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
        let mut slot = inner.file.lock().unwrap_or_else(|p| p.into_inner());
        let Some(mut file) = slot.take() else {
            return Err(what(io::Error::other("already written")));
        };
        let written = {
            let mut w = io::BufWriter::new(&mut file);
            fill(&mut w).and_then(|_| w.flush())
        };
        let done = written
            .and_then(|_| file.sync_all())
            .and_then(|_| std::fs::rename(&inner.tmp, &inner.path));
        drop(file);
        if let Err(e) = done {
            let _ = std::fs::remove_file(&inner.tmp);
            return Err(what(e));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn links_and_fifos_at_the_path_are_replaced_never_written_through() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        // A symbolic link, a hard link and a FIFO at the output path.
        let sym = d.path().join("sym.svg");
        std::os::unix::fs::symlink(&victim, &sym).unwrap();
        let hard = d.path().join("hard.svg");
        std::fs::hard_link(&victim, &hard).unwrap();
        let fifo = crate::input::test_fifo(d.path(), "fifo.svg");
        for p in [&sym, &hard, &fifo] {
            let out = OutputFile::create("--plot", p).unwrap();
            out.write(b"<svg/>").unwrap();
            let meta = std::fs::symlink_metadata(p).unwrap();
            assert!(meta.file_type().is_file(), "{}", p.display());
            assert_eq!(std::fs::read(p).unwrap(), b"<svg/>");
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
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
