//! Bounded reading of the small files flashscope reads (flashbench logs, journals, state
//! files): one place that refuses what is not a regular file and caps the size, so that no
//! input can block forever (a FIFO) or eat the machine (`/dev/zero`).
//!
//! The file is opened with `O_NONBLOCK | O_NOCTTY` (opening a FIFO without a writer returns
//! at once instead of waiting), and its kind and size are checked with `fstat` on the opened
//! descriptor, not on the path, so there is no window between the check and the read. The
//! read itself stops one byte past the cap, so a file that grows after the check is still
//! bounded.

use crate::{Error, Result};
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The size cap for a flashbench log: real logs are kilobytes.
pub const LOG_CAP_BYTES: u64 = 64 << 20;

/// The size cap for a saved `--json` document (`report`, `compare`, `history import`).
/// Documents flashscope writes are kilobytes to a few MiB (a verify keeps 256 throughput
/// samples, a bench its per-second figures). Reading one takes at most about 3.5 times
/// its size in memory (each field read straight into its type, no tree of the document;
/// `scripts/document-memory`, which CI runs), so the cap keeps any accepted input under
/// about 230 MiB on a small board.
pub const DOCUMENT_CAP_BYTES: u64 = 64 << 20;

/// The most values the lists of one document may hold together (issue 44.9): a document
/// of nothing but tiny per-second values ("0,") would otherwise become 4 times its text
/// in `f64` (256 MiB of them in a 64 MiB document, per side of a `compare`). 4 Mi values
/// are 48 days of per-second samples, and 32 MiB of `f64`.
pub const DOCUMENT_MAX_VALUES: u64 = 4 << 20;

/// The most text a document's free-form `jobs` (fio's JSON, read as a tree) may take:
/// a tree is about 16 times its text. A bench's are about 13 KiB a run, an io's a few
/// KiB a job.
pub const DOCUMENT_JOBS_CAP_BYTES: u64 = 4 << 20;

/// How many values the lists (JSON arrays) of the JSON text `bytes` hold together, at
/// any depth, counted on the text (no tree is built): `[1,[2,3],{"a":[]}]` holds 3 + 2.
/// Text that is not JSON is counted as far as it goes (the parser says what is wrong).
pub fn json_list_values(bytes: &[u8]) -> u64 {
    // Whether each open container is a list, one bit a level.
    let mut lists: Vec<u64> = Vec::new();
    let mut depth = 0usize;
    let is_list = |lists: &[u64], depth: usize| {
        depth > 0
            && lists
                .get((depth - 1) / 64)
                .is_some_and(|w| (w >> ((depth - 1) % 64)) & 1 == 1)
    };
    let mut count = 0u64;
    let mut fresh = false;
    let mut in_string = false;
    let mut escaped = false;
    for &c in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            continue;
        }
        if c.is_ascii_whitespace() {
            continue;
        }
        if fresh {
            fresh = false;
            if c != b']' {
                count += 1;
            }
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                let (word, bit) = ((depth - 1) / 64, (depth - 1) % 64);
                if lists.len() <= word {
                    lists.push(0);
                }
                if c == b'[' {
                    lists[word] |= 1 << bit;
                    fresh = true;
                } else {
                    lists[word] &= !(1 << bit);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if is_list(&lists, depth) => count += 1,
            _ => {}
        }
    }
    count
}

/// What kind of file `meta` describes, in words ("a directory", "a FIFO (named pipe)", …).
pub fn kind_in_words(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

fn not_regular(path: &Path, what: &str, meta: &Metadata) -> Error {
    Error::usage(format!(
        "{}: a {what} must be a regular file, and this is {}; give the file itself (save a stream to a file first)",
        path.display(),
        kind_in_words(meta)
    ))
}

fn too_large(path: &Path, what: &str, size: u64, cap: u64) -> Error {
    Error::usage(format!(
        "{}: {} is larger than the {} a {what} may have; is it the right file?",
        path.display(),
        crate::vocab::units::format_bytes(size),
        crate::vocab::units::format_bytes(cap)
    ))
}

/// Open `path` for reading if it is a regular file of at most `cap` bytes; `what` names the
/// file's role in messages ("flashbench log", "journal"). Returns the file and its `fstat`
/// metadata (owner, mode, device and inode are there for callers that check trust).
///
/// Errors: not a regular file (FIFO, device, directory, socket) or larger than `cap` → a
/// usage error (exit 2) naming the file and why; missing or unreadable → an I/O error
/// (exit 1). Symbolic links are followed; the checks apply to the file opened.
pub fn open_regular(path: &Path, what: &str, cap: u64) -> Result<(File, Metadata)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| {
            // A socket cannot be opened at all (ENXIO); say what it is rather than
            // reporting a vanished device.
            match std::fs::metadata(path) {
                Ok(m) if !m.is_file() => not_regular(path, what, &m),
                _ => Error::Io {
                    context: format!("reading {what} {}", path.display()),
                    source: e,
                },
            }
        })?;
    let meta = check_regular(&file, path, what, cap)?;
    Ok((file, meta))
}

/// `fstat` an opened `file` (the descriptor, not the path: no window between check and
/// use) and refuse anything but a regular file of at most `cap` bytes (exit 2, naming
/// `path`, its role `what` and what it is instead), so no reader blocks on a FIFO or reads
/// a device without end.
pub fn check_regular(file: &File, path: &Path, what: &str, cap: u64) -> Result<Metadata> {
    let meta = file.metadata().map_err(|e| Error::Io {
        context: format!("examining {what} {}", path.display()),
        source: e,
    })?;
    if !meta.is_file() {
        return Err(not_regular(path, what, &meta));
    }
    if meta.len() > cap {
        return Err(too_large(path, what, meta.len(), cap));
    }
    Ok(meta)
}

/// Read a regular file of at most `cap` bytes (see [`open_regular`] for what is refused).
pub fn read_regular(path: &Path, what: &str, cap: u64) -> Result<Vec<u8>> {
    let (file, meta) = open_regular(path, what, cap)?;
    let mut buf = Vec::with_capacity(meta.len() as usize);
    file.take(cap.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| Error::Io {
            context: format!("reading {what} {}", path.display()),
            source: e,
        })?;
    if buf.len() as u64 > cap {
        return Err(too_large(path, what, buf.len() as u64, cap));
    }
    Ok(buf)
}

/// Read standard input to its end, at most `cap` bytes (for `-` as a file name).
pub fn read_stdin(what: &str, cap: u64) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(cap.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| Error::Io {
            context: format!("reading {what} from standard input"),
            source: e,
        })?;
    if buf.len() as u64 > cap {
        return Err(stdin_too_large(what, cap));
    }
    Ok(buf)
}

fn stdin_too_large(what: &str, cap: u64) -> Error {
    Error::usage(format!(
        "standard input: more than the {} a {what} may have; is it the right input?",
        crate::vocab::units::format_bytes(cap)
    ))
}

/// The longest line [`read_lines`] passes on. Lines of the texts read line by line
/// (flashbench logs, pasted results) are under a few hundred bytes; one past this is no
/// such text, and the bound keeps what one line costs to split small.
pub const LINE_CAP_BYTES: usize = 1 << 20;

/// Read `path` (a regular file of at most `cap` bytes, refused as [`open_regular`] does),
/// or standard input when `path` is `None`, one line at a time without holding the text:
/// `f` gets each line (split at `\n`, invalid UTF-8 replaced as
/// `String::from_utf8_lossy` does; a last empty line after a final `\n` is not given)
/// numbered from 1. Returns whether the input ends with `\n`.
///
/// The input is read to its end before an error is returned, so one past `cap` is always
/// that error (exit 2); then a line longer than [`LINE_CAP_BYTES`] (exit 2, naming it; `f`
/// gets no lines after it). A read error is an I/O error (exit 1).
pub fn read_lines(
    path: Option<&Path>,
    what: &str,
    cap: u64,
    mut f: impl FnMut(usize, &str),
) -> Result<bool> {
    let shown = path.map_or_else(|| "standard input".to_string(), |p| p.display().to_string());
    let io = |e: std::io::Error| Error::Io {
        context: match path {
            Some(p) => format!("reading {what} {}", p.display()),
            None => format!("reading {what} from standard input"),
        },
        source: e,
    };
    let source: Box<dyn Read> = match path {
        Some(p) => Box::new(open_regular(p, what, cap)?.0),
        None => Box::new(std::io::stdin().lock()),
    };
    let mut reader =
        std::io::BufReader::with_capacity(64 << 10, source.take(cap.saturating_add(1)));
    let mut line = Vec::new();
    let (mut lineno, mut total, mut last_byte) = (0usize, 0u64, None);
    let mut too_long = None;
    loop {
        let chunk = std::io::BufRead::fill_buf(&mut reader).map_err(io)?;
        if chunk.is_empty() {
            break;
        }
        let end = memchr::memchr(b'\n', chunk);
        let part = &chunk[..end.unwrap_or(chunk.len())];
        if too_long.is_none() {
            if line.len() + part.len() > LINE_CAP_BYTES {
                too_long = Some(lineno + 1);
                line = Vec::new();
            } else {
                line.extend_from_slice(part);
            }
        }
        let used = end.map_or(chunk.len(), |i| i + 1);
        last_byte = Some(chunk[used - 1]);
        total += used as u64;
        std::io::BufRead::consume(&mut reader, used);
        if end.is_some() {
            lineno += 1;
            if too_long.is_none() {
                f(lineno, &String::from_utf8_lossy(&line));
            }
            line.clear();
        }
    }
    if total > cap {
        return Err(match path {
            Some(p) => too_large(p, what, total, cap),
            None => stdin_too_large(what, cap),
        });
    }
    if let Some(n) = too_long {
        return Err(Error::usage(format!(
            "{shown}, line {n}: longer than {}, and a {what} has short lines; is it the right file?",
            crate::vocab::units::format_bytes(LINE_CAP_BYTES as u64)
        )));
    }
    if !line.is_empty() {
        f(lineno + 1, &String::from_utf8_lossy(&line));
    }
    Ok(last_byte == Some(b'\n'))
}

/// `s` made safe to print on a terminal, in a CSV cell or a log line: every control
/// character (C0, DEL, C1: newlines, escape sequences, carriage returns that hide what is
/// before them) shown as a visible escape (`\n`, `\t`, `\u{1b}`). Strings that came from a
/// device, a file or a document go through this before they are printed.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A whole text output made safe for a terminal: its line breaks and tabs kept, every
/// other control character (escape sequences, carriage returns, bells, C1 codes) shown as
/// [`printable`] shows it. The last line of defence for text output; single strings from
/// a device or a document go through [`printable`] where they are read, so a line break
/// in them cannot fake a line either.
pub fn printable_text(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for line in s.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        for part in body.split('\t').enumerate() {
            if part.0 > 0 {
                out.push('\t');
            }
            out.push_str(&printable(part.1));
        }
        out.push_str(nl);
    }
    std::borrow::Cow::Owned(out)
}

/// A FIFO named `name` in `dir`, for the tests that check no reader blocks on one.
/// JSON text whose strings show their control characters instead of holding them: each
/// escape of one inside a string (`\n`, `\r`, `\t`, `\b`, `\f`, `\u0000`–`\u001f`,
/// `\u007f`–`\u009f`) becomes the escape's own text, and a raw DEL or C1 character (which
/// JSON lets through unescaped) its `\u00XX` text. A document read from a file or a database
/// then cannot carry a line break, an escape sequence or a carriage return to whatever
/// prints one of its strings (issue 30.8). `None` when there is none: the usual document is
/// not copied.
pub fn json_controls_shown(bytes: &[u8]) -> Option<Vec<u8>> {
    let hex_control = |h: &[u8]| {
        std::str::from_utf8(h)
            .ok()
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .is_some_and(|v| v < 0x20 || (0x7f..=0x9f).contains(&v))
    };
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let (shown, skip): (Option<Vec<u8>>, usize) = match bytes[i] {
            b'\\' => match bytes.get(i + 1) {
                Some(b'n' | b'r' | b't' | b'b' | b'f') => (Some(b"\\\\".to_vec()), 1),
                Some(b'u') if bytes.get(i + 2..i + 6).is_some_and(hex_control) => {
                    (Some(b"\\\\".to_vec()), 1)
                }
                // `\\`, `\"` and the rest: the escaped character is skipped with it.
                _ => (None, 2),
            },
            0x7f => (Some(b"\\\\u007f".to_vec()), 1),
            0xc2 if bytes.get(i + 1).is_some_and(|b| (0x80..=0x9f).contains(b)) => {
                (Some(format!("\\\\u00{:02x}", bytes[i + 1]).into_bytes()), 2)
            }
            _ => (None, 1),
        };
        if let Some(text) = shown {
            let o = out.get_or_insert_with(|| Vec::with_capacity(bytes.len() + 64));
            o.extend_from_slice(&bytes[copied..i]);
            o.extend_from_slice(&text);
            // A shown escape keeps its letter (and hex digits) as text after the backslash
            // added; a raw character is replaced whole.
            copied = if bytes[i] == b'\\' { i + 1 } else { i + skip };
        }
        i += skip;
    }
    out.map(|mut o| {
        o.extend_from_slice(&bytes[copied..]);
        o
    })
}

#[cfg(test)]
pub(crate) fn test_fifo(dir: &Path, name: &str) -> std::path::PathBuf {
    let fifo = dir.join(name);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    fifo
}

#[cfg(test)]
mod tests {
    #[test]
    fn list_values_are_counted_on_the_text_at_every_depth() {
        use super::json_list_values as n;
        assert_eq!(n(br#"[1,[2,3],{"a":[]}]"#), 5);
        assert_eq!(n(b"[]"), 0);
        assert_eq!(n(b"[ ]"), 0);
        assert_eq!(
            n(br#"{"a":1,"b":2}"#),
            0,
            "an object's fields are not list values"
        );
        // Commas and brackets inside strings are text.
        assert_eq!(n(br#"["a,b]","c\"],[",{"x":"[1,2]"}]"#), 3);
        assert_eq!(n(br#"{"per_second_bw":[0,0,0,0]}"#), 4);
        // Deeper than 64 levels: one bit a level, past a word.
        let deep = format!("{}1,2{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(n(deep.as_bytes()), 199 + 2);
        // Not JSON: counted as far as it goes, never a panic.
        assert_eq!(n(b"]]]}},,,["), 0);
    }

    #[test]
    fn printable_shows_every_control_character() {
        assert_eq!(super::printable("SanDisk Ultra"), "SanDisk Ultra");
        assert_eq!(
            super::printable("a\nwear OK\x1b]0;t\x07\r\u{9b}2J"),
            "a\\nwear OK\\u{1b}]0;t\\u{7}\\r\\u{9b}2J"
        );
        assert!(!super::printable("x\x7f\u{85}")
            .chars()
            .any(char::is_control));
    }

    use super::*;

    /// Lines are given one at a time as `split('\n')` would give them (no last empty one),
    /// whether the text ends with a line feed is said, a line past LINE_CAP_BYTES is
    /// refused naming it, and the size cap still wins over it.
    #[test]
    fn lines_are_read_one_at_a_time_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let read = |bytes: &[u8], cap: u64| {
            let f = dir.path().join("log.txt");
            std::fs::write(&f, bytes).unwrap();
            let mut lines = Vec::new();
            read_lines(Some(&f), "flashbench log", cap, |n, l| {
                lines.push((n, l.to_string()))
            })
            .map(|end| (lines, end))
        };
        let (lines, end) = read(b"a\r\n\nb\xff\nc", 100).unwrap();
        assert_eq!(
            lines,
            [
                (1, "a\r".to_string()),
                (2, String::new()),
                (3, "b\u{fffd}".into()),
                (4, "c".into())
            ]
        );
        assert!(!end);
        assert!(read(b"a\n", 100).unwrap().1);
        let mut long = vec![b'x'; LINE_CAP_BYTES + 1];
        long.extend_from_slice(b"\nalign\n");
        let e = read(&long, 64 << 20).unwrap_err().to_string();
        assert!(e.contains("line 1: longer than 1 MiB"), "{e}");
        let e = read(&long, 100).unwrap_err().to_string();
        assert!(e.contains("larger than"), "{e}");
    }
    use std::time::{Duration, Instant};

    #[test]
    fn a_fifo_is_refused_at_once_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = crate::input::test_fifo(dir.path(), "log.fifo");
        let t0 = Instant::now();
        let e = read_regular(&fifo, "flashbench log", LOG_CAP_BYTES).unwrap_err();
        assert!(t0.elapsed() < Duration::from_secs(5));
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert!(e.to_string().contains("log.fifo"), "{e}");
    }

    #[test]
    fn devices_and_directories_are_refused_and_say_what_they_are() {
        let e = read_regular(Path::new("/dev/zero"), "flashbench log", LOG_CAP_BYTES).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(
            e.to_string().contains(
                "/dev/zero: a flashbench log must be a regular file, and this is a character device"
            ),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let e = read_regular(dir.path(), "journal", 10).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
    }

    #[test]
    fn the_cap_is_enforced_and_a_missing_file_is_a_runtime_error() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big.txt");
        std::fs::write(&f, vec![b'x'; 101]).unwrap();
        let e = read_regular(&f, "flashbench log", 100).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("larger than the 100 B"), "{e}");
        assert_eq!(read_regular(&f, "log", 101).unwrap().len(), 101);
        let e = read_regular(&dir.path().join("none"), "log", 100).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert!(e.to_string().contains("none"), "{e}");
    }

    #[test]
    fn json_strings_show_their_control_characters() {
        let shown = |t: &str| {
            let b = json_controls_shown(t.as_bytes());
            let text = b.map(|b| String::from_utf8(b).unwrap());
            let v: String = serde_json::from_str(text.as_deref().unwrap_or(t)).unwrap();
            v
        };
        assert_eq!(
            shown(r#""a\nb\r\t\u001b]0;x\u0007 \u009b""#),
            r"a\nb\r\t\u001b]0;x\u0007 \u009b"
        );
        // Raw DEL and C1, which JSON lets through unescaped.
        assert_eq!(shown("\"x\u{7f}y\u{9b}z\""), r"x\u007fy\u009bz");
        // Escaped backslashes and quotes, and other \u escapes, stay what they were.
        assert_eq!(
            shown(r#""c:\\new \"q\" \u00e9 \u0041""#),
            "c:\\new \"q\" é A"
        );
        assert!(json_controls_shown(br#"{"a":"plain \\n text","b":[1,2]}"#).is_none());
        assert!(json_controls_shown(b"").is_none());
        // A cut escape at the end is left to the parser.
        assert!(json_controls_shown(b"\"\\").is_none());
    }
}
