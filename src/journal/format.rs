//! The journal file format: a header naming the target, then one record per saved region.
//!
//! ```text
//! header  = "FLSCJRNL" | version u32 | json_len u32 | identity JSON | sha256(JSON) (32)
//! record  = "FSR1" | offset u64 | length u64 | head_sum u64 | data[length]
//!           | sha256(offset | length | data)
//! ```
//! Integers are little-endian; `head_sum` is the first 8 bytes of the SHA-256 of the 20
//! bytes before it, so a damaged length is caught before it is trusted.
//!
//! Every record is complete and fsynced before the region it saves is overwritten. So the
//! one damage a restore may skip is a torn tail that the format proves: the last record's
//! header is intact and its length field runs past the end of the file (a crash while
//! appending); its region was never overwritten. Even then the restore first compares the
//! data the file does hold with the target (see `restore_records`): a cut that follows an
//! overwrite shows there as a difference and is refused. Anything else is corruption and
//! refused with nothing written: a complete record (the last one too) whose checksum fails,
//! a damaged record header, a file that ends inside a record header (no length field to
//! prove anything), or a file longer than any journal of its target.

use super::identity::Identity;
use super::trust;
use crate::{Error, Result};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file's first eight bytes.
pub const MAGIC: &[u8; 8] = b"FLSCJRNL";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
const RECORD_MAGIC: &[u8; 4] = b"FSR1";
const RECORD_HEAD: u64 = 4 + 8 + 8 + 8;
const SUM: u64 = 32;
/// Largest header JSON accepted (a header is a few hundred bytes).
const MAX_HEADER: u32 = 1 << 20;
/// Largest region one record holds; larger regions are split (bounds memory on restore).
pub const MAX_RECORD: u64 = 8 << 20;

fn head_sum(head: &[u8]) -> [u8; 8] {
    let d = Sha256::digest(&head[..20]);
    let mut out = [0u8; 8];
    out.copy_from_slice(&d[..8]);
    out
}

fn record_sum(offset: u64, data: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(offset.to_le_bytes());
    h.update((data.len() as u64).to_le_bytes());
    h.update(data);
    h.finalize().into()
}

/// Appends records to a new journal file; every `sync` makes them durable.
pub struct JournalWriter {
    file: File,
    path: PathBuf,
    /// Bytes of region data appended so far.
    pub bytes_saved: u64,
    pub records: u64,
}

fn sync_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

impl JournalWriter {
    /// Create the journal at `path` (refusing to replace an existing file) and make its
    /// header durable. The header is written to a new private file beside `path` first
    /// and then linked into place, so a journal never exists without its whole header (a
    /// test killed at any moment leaves either no journal or one `restore` reads).
    pub fn create(path: &Path, identity: &Identity) -> Result<Self> {
        let exists = || {
            Error::Refused(format!(
                "a journal already exists at {}: restore it with `flashscope restore {}` or remove it, then rerun",
                path.display(),
                path.display()
            ))
        };
        // Created as every file flashscope writes is: in the directory judged on the way
        // and then used through its descriptor (`sys::dir::Dir`), `O_EXCL | O_NOFOLLOW` at
        // an unpredictable name beside its place.
        let (dir, name) = super::trust::trusted_parent(
            path,
            "--journal",
            "give --journal a path in a directory of your own",
        )?;
        if dir.stat(&name).is_ok() {
            return Err(exists());
        }
        // The journal holds copies of the user's data: readable by its owner only.
        let (tmp, file) = dir
            .create_temp(&name, 0o600)
            .map_err(|e| Error::io(format!("creating journal {}", path.display()), e))?;
        // Held until the writer is dropped: a journal whose test is still running is never
        // taken for a leftover of a crash (see `lock_leftover`). Taken before the journal
        // appears, so a journal with no lock has no living writer.
        crate::sys::try_lock(&file, true)
            .map_err(|e| Error::io(format!("locking journal {}", path.display()), e))?;
        let json = serde_json::to_vec(identity)
            .map_err(|e| Error::runtime(format!("encoding the journal header: {e}")))?;
        let mut w = JournalWriter {
            file,
            path: path.to_path_buf(),
            bytes_saved: 0,
            records: 0,
        };
        let mut head = Vec::with_capacity(json.len() + 48);
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&(json.len() as u32).to_le_bytes());
        head.extend_from_slice(&json);
        head.extend_from_slice(&Sha256::digest(&json));
        let ctx = || format!("writing journal {}", path.display());
        let r = w
            .file
            .write_all(&head)
            .and_then(|_| w.file.sync_all())
            .map_err(|e| Error::io(ctx(), e))
            .and_then(|_| match dir.link(&tmp, &name) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(exists()),
                // A filesystem without hard links (FAT): rename; the check above makes
                // replacing a file that appeared meanwhile unlikely.
                Err(_) => dir.rename(&tmp, &name).map_err(|e| Error::io(ctx(), e)),
            });
        let _ = dir.remove(&tmp);
        r?;
        dir.sync().map_err(|e| Error::io(ctx(), e))?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one region's saved content (not yet durable: call `sync`). On failure (a
    /// full filesystem) the file is cut back to its last whole record, so a failed append
    /// never leaves a partial record behind it.
    pub fn append(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        use std::io::Seek;
        let before = self.file.stream_position()?;
        let r = self.append_at_end(offset, data);
        if r.is_err() {
            let _ = self
                .file
                .set_len(before)
                .and_then(|_| self.file.seek(io::SeekFrom::Start(before)));
        }
        r
    }

    fn append_at_end(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut head = [0u8; RECORD_HEAD as usize];
        head[..4].copy_from_slice(RECORD_MAGIC);
        head[4..12].copy_from_slice(&offset.to_le_bytes());
        head[12..20].copy_from_slice(&(data.len() as u64).to_le_bytes());
        let hs = head_sum(&head);
        head[20..28].copy_from_slice(&hs);
        self.file.write_all(&head)?;
        self.file.write_all(data)?;
        self.file.write_all(&record_sum(offset, data))?;
        self.bytes_saved += data.len() as u64;
        self.records += 1;
        Ok(())
    }

    /// Make later appends fail (the descriptor is swapped for a read-only one), as a full
    /// filesystem would.
    #[cfg(test)]
    pub fn break_for_test(&mut self) {
        use std::io::Seek;
        let pos = self.file.stream_position().unwrap();
        self.file = File::open(&self.path).unwrap();
        self.file.seek(io::SeekFrom::Start(pos)).unwrap();
    }

    /// Make every appended record durable (fdatasync).
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
}

/// One valid record: where its region is and where its data sits in the journal file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub offset: u64,
    pub length: u64,
    /// Position of the data in the journal file.
    pub data_pos: u64,
    pub sum: [u8; 32],
}

/// The record a journal ends inside of: its header is intact and its length field runs
/// past the end of the file, which proves the append never completed, so (the overwrite
/// waits for the record to be complete and durable) its region was never overwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TornRecord {
    pub offset: u64,
    pub length: u64,
    /// Position of its data in the journal file.
    pub data_pos: u64,
    /// Bytes of its data the file holds (less than `length`, or all of them with the
    /// checksum cut).
    pub data_present: u64,
}

/// What [`Journal::lock_for_restore`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreLock {
    /// Locked: no test and no other restore is using the journal.
    Held,
    /// Locked after another restore of it ended and removed it: its regions are back.
    RestoredMeanwhile,
    /// The test that writes the journal is still running.
    TestRunning,
}

/// A journal read back and checked: its header and its complete, valid records.
#[derive(Debug, Clone)]
pub struct Journal {
    pub path: PathBuf,
    pub identity: Identity,
    pub records: Vec<Record>,
    /// The torn record at the end (crash while appending), if any; see [`TornRecord`].
    pub torn: Option<TornRecord>,
    /// Bytes of that torn record.
    pub torn_tail_bytes: u64,
    /// `fstat` of the journal file when it was opened.
    pub meta: std::fs::Metadata,
    /// The journal file, opened once (no symlink followed, a regular file): every read,
    /// and the lock, use this descriptor, so the file cannot be swapped underneath.
    file: Arc<File>,
}

fn corrupt(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::runtime(format!(
        "journal {} is corrupt: {what}. Nothing was written; keep the file and restore from another copy if you have one",
        path.display()
    ))
}

/// The largest journal a target of `size` bytes can have after its header: every byte
/// saved once, in records of at least one 512-byte sector.
fn max_records_bytes(size: u64) -> u64 {
    size.saturating_add((size / 512 + 1).saturating_mul(RECORD_HEAD + SUM))
}

/// Open a journal for reading: no symlink followed, no blocking on a FIFO, a regular file.
fn open_file(path: &Path) -> Result<(File, std::fs::Metadata)> {
    let f = trust::open_nofollow(path).map_err(|e| {
        // A missing input file is a runtime error (exit 1) in every command.
        trust::open_error("journal", path, e).unwrap_or_else(|| {
            Error::runtime(format!(
                "journal {} does not exist (nothing to restore, or a wrong path)",
                path.display()
            ))
        })
    })?;
    let meta = crate::input::check_regular(&f, path, "journal", u64::MAX)?;
    Ok((f, meta))
}

impl Journal {
    /// Read and check a journal: the header must be intact and every record complete with
    /// a matching checksum, except a last record that the file provably ends inside of
    /// (see [`TornRecord`]). Any complete record with a bad checksum is corruption.
    pub fn open(path: &Path) -> Result<Journal> {
        let (file, meta) = open_file(path)?;
        let mut f = &file;
        let file_len = meta.len();
        let ctx = || format!("reading journal {}", path.display());
        let mut fixed = [0u8; 16];
        if file_len < 16 {
            return Err(not_a_journal(path));
        }
        f.read_exact(&mut fixed).map_err(|e| Error::io(ctx(), e))?;
        if &fixed[..8] != MAGIC {
            return Err(not_a_journal(path));
        }
        let version = u32::from_le_bytes([fixed[8], fixed[9], fixed[10], fixed[11]]);
        if version != VERSION {
            return Err(Error::usage(format!(
                "journal {} has format version {version}; this flashscope reads version {VERSION}: use the flashscope that wrote it",
                path.display()
            )));
        }
        let json_len = u32::from_le_bytes([fixed[12], fixed[13], fixed[14], fixed[15]]);
        if json_len > MAX_HEADER || 16 + json_len as u64 + SUM > file_len {
            return Err(corrupt(
                path,
                "the header is truncated or has an impossible length",
            ));
        }
        let mut json = vec![0u8; json_len as usize];
        f.read_exact(&mut json).map_err(|e| Error::io(ctx(), e))?;
        let mut sum = [0u8; 32];
        f.read_exact(&mut sum).map_err(|e| Error::io(ctx(), e))?;
        if Sha256::digest(&json).as_slice() != sum {
            return Err(corrupt(path, "the header checksum does not match"));
        }
        let identity: Identity = serde_json::from_slice(&json)
            .map_err(|e| corrupt(path, format!("the header cannot be decoded ({e})")))?;
        let mut pos = 16 + json_len as u64 + SUM;
        let cap = pos.saturating_add(max_records_bytes(identity.size_bytes));
        if file_len > cap {
            return Err(corrupt(
                path,
                format!(
                    "it is {file_len} bytes, more than a journal of a {}-byte target can hold ({cap} bytes)",
                    identity.size_bytes
                ),
            ));
        }
        let mut records = Vec::new();
        let mut torn = None;
        let mut torn_tail_bytes = 0;
        let mut data = Vec::new();
        while pos < file_len {
            let remaining = file_len - pos;
            if remaining < RECORD_HEAD {
                // No length field to prove the record torn: which region it saved, and
                // whether that region was overwritten, cannot be known.
                return Err(corrupt(
                    path,
                    format!(
                        "it ends {remaining} bytes into a {RECORD_HEAD}-byte record header at byte {pos}, so the region that record saved cannot be known"
                    ),
                ));
            }
            let mut head = [0u8; RECORD_HEAD as usize];
            f.read_exact(&mut head).map_err(|e| Error::io(ctx(), e))?;
            let offset = u64::from_le_bytes(head[4..12].try_into().unwrap_or([0; 8]));
            let length = u64::from_le_bytes(head[12..20].try_into().unwrap_or([0; 8]));
            if &head[..4] != RECORD_MAGIC || head_sum(&head) != head[20..28] {
                return Err(corrupt(
                    path,
                    format!("the record header at byte {pos} of the journal is damaged"),
                ));
            }
            if length > MAX_RECORD
                || offset
                    .checked_add(length)
                    .is_none_or(|end| end > identity.size_bytes)
            {
                return Err(corrupt(
                    path,
                    format!(
                        "the record at byte {pos} names a region ({offset}+{length}) outside the {}-byte target",
                        identity.size_bytes
                    ),
                ));
            }
            if RECORD_HEAD + length + SUM > remaining {
                // The intact length field runs past the end of the file: the append never
                // completed, so the region's overwrite (which waits for it) never began.
                torn = Some(TornRecord {
                    offset,
                    length,
                    data_pos: pos + RECORD_HEAD,
                    data_present: (remaining - RECORD_HEAD).min(length),
                });
                torn_tail_bytes = remaining;
                break;
            }
            data.resize(length as usize, 0);
            f.read_exact(&mut data).map_err(|e| Error::io(ctx(), e))?;
            let mut sum = [0u8; 32];
            f.read_exact(&mut sum).map_err(|e| Error::io(ctx(), e))?;
            if record_sum(offset, &data) != sum {
                return Err(corrupt(
                    path,
                    format!(
                        "the record at byte {pos} of the journal (region at {offset}, {length} bytes) is complete but fails its checksum"
                    ),
                ));
            }
            records.push(Record {
                offset,
                length,
                data_pos: pos + RECORD_HEAD,
                sum,
            });
            pos += RECORD_HEAD + length + SUM;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            identity,
            records,
            torn,
            torn_tail_bytes,
            meta,
            file: Arc::new(file),
        })
    }

    /// Read only the header's identity (cheap even for a huge journal); `None` when the
    /// file is not an intact journal (or not a regular file).
    pub fn read_identity(path: &Path) -> Option<Identity> {
        let (file, _) = open_file(path).ok()?;
        let mut f = &file;
        let mut fixed = [0u8; 16];
        f.read_exact(&mut fixed).ok()?;
        if &fixed[..8] != MAGIC || fixed[8..12] != VERSION.to_le_bytes() {
            return None;
        }
        let json_len = u32::from_le_bytes([fixed[12], fixed[13], fixed[14], fixed[15]]);
        if json_len > MAX_HEADER {
            return None;
        }
        let mut json = vec![0u8; json_len as usize];
        f.read_exact(&mut json).ok()?;
        let mut sum = [0u8; 32];
        f.read_exact(&mut sum).ok()?;
        if Sha256::digest(&json).as_slice() != sum {
            return None;
        }
        serde_json::from_slice(&json).ok()
    }

    /// Bytes of saved region data in valid records.
    pub fn bytes_saved(&self) -> u64 {
        self.records.iter().map(|r| r.length).sum()
    }

    /// Lock the journal (the descriptor it was read from) against a running test: `false`
    /// when its test is still running (the writer holds the lock). Held while `self` lives.
    pub fn try_lock(&self) -> io::Result<bool> {
        match lock_leftover_file(&self.file) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Lock the journal for `restore` (issue 44.8). The test that writes a journal holds
    /// its `flock` for as long as it runs; a restore holds it too, and marks its
    /// descriptor ([`crate::sys::ofd_mark`]) first, so a second restore of the same
    /// journal can tell the two apart: it waits for another restore to end, however long
    /// that takes, and refuses at once (after the usual half second) when a test holds it.
    /// Once locked, a journal that is no longer linked was restored and removed by the
    /// restore it waited for.
    pub fn lock_for_restore(&self) -> io::Result<RestoreLock> {
        use std::os::unix::fs::MetadataExt;
        // A mark is a hint for others; without one (a filesystem without OFD locks) a
        // second restore is refused as if a test held the journal.
        let _ = crate::sys::ofd_mark(&self.file);
        loop {
            match lock_leftover_file(&self.file) {
                Ok(()) => {
                    let linked = self.file.metadata()?.nlink() > 0;
                    return Ok(if linked {
                        RestoreLock::Held
                    } else {
                        RestoreLock::RestoredMeanwhile
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !crate::sys::ofd_marked_by_another(&self.file).unwrap_or(false) {
                        return Ok(RestoreLock::TestRunning);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Read `buf.len()` bytes of the journal file at `pos`.
    pub fn read_at(&self, buf: &mut [u8], pos: u64) -> Result<()> {
        use std::os::unix::fs::FileExt;
        self.file
            .read_exact_at(buf, pos)
            .map_err(|e| Error::io(format!("reading journal {}", self.path.display()), e))
    }

    /// Read one record's data into `buf` (its length) and check it again.
    pub fn read_record(&self, rec: &Record, buf: &mut [u8]) -> Result<()> {
        self.read_at(buf, rec.data_pos)?;
        if record_sum(rec.offset, buf) != rec.sum {
            return Err(corrupt(
                &self.path,
                format!(
                    "the record for the region at {} changed while it was being restored",
                    rec.offset
                ),
            ));
        }
        Ok(())
    }

    /// The error for a torn last record whose region the target no longer holds as saved:
    /// the record was complete when the region was overwritten and was cut afterwards.
    pub fn torn_overwritten(&self, t: &TornRecord) -> Error {
        corrupt(
            &self.path,
            format!(
                "its last record (the region at {}, {} bytes) is cut short, and the target no longer holds the bytes it saved there, so the region was overwritten after the record was complete: the file was damaged after the test saved it",
                t.offset, t.length
            ),
        )
    }

    /// True when `data` is exactly what the record saved for its region.
    pub fn matches(rec: &Record, data: &[u8]) -> bool {
        record_sum(rec.offset, data) == rec.sum
    }
}

fn not_a_journal(path: &Path) -> Error {
    Error::usage(format!(
        "{} is not a flashscope journal (wrong magic bytes): give the file `flashscope` printed before the test",
        path.display()
    ))
}

/// Lock a journal that is not being written, waiting up to half a second: a process
/// forked (by another thread) while the writer had it open shares the lock until it
/// execs, which must not make a finished journal look in use.
fn lock_leftover_file(file: &File) -> io::Result<()> {
    let mut waited = 0;
    loop {
        match crate::sys::try_lock(file, true) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && waited < 500 => {
                std::thread::sleep(std::time::Duration::from_millis(20));
                waited += 20;
            }
            r => return r,
        }
    }
}

/// Open a journal left on disk and lock it, so no running test is using it: `Ok(None)`
/// when its test is still running (the writer holds the lock). The lock lasts as long
/// as the returned file is open.
pub fn lock_leftover(path: &Path) -> io::Result<Option<File>> {
    let f = trust::open_nofollow(path)?;
    match lock_leftover_file(&f) {
        Ok(()) => Ok(Some(f)),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e),
    }
}

/// Remove a journal file and make the removal durable.
pub fn remove(path: &Path) -> io::Result<()> {
    std::fs::remove_file(path)?;
    sync_dir(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn ident() -> Identity {
        Identity {
            spec: "test".into(),
            kind: crate::device::TargetKind::File,
            size_bytes: 1 << 20,
            logical_sector_bytes: 512,
            ..Identity::default()
        }
    }

    fn write_journal(dir: &Path, regions: &[(u64, u8, usize)]) -> PathBuf {
        let p = dir.join("j");
        let mut w = JournalWriter::create(&p, &ident()).unwrap();
        for &(off, fill, len) in regions {
            w.append(off, &vec![fill; len]).unwrap();
        }
        w.sync().unwrap();
        p
    }

    #[test]
    fn round_trip() {
        let d = tempfile::tempdir().unwrap();
        let p = write_journal(d.path(), &[(0, 1, 512), (4096, 2, 1024)]);
        let j = Journal::open(&p).unwrap();
        assert_eq!(j.identity, ident());
        assert_eq!(Journal::read_identity(&p), Some(ident()));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "owner-only: {mode:o}");
        assert_eq!(j.records.len(), 2);
        assert_eq!(j.records[1].offset, 4096);
        assert_eq!(j.bytes_saved(), 1536);
        assert_eq!(j.torn_tail_bytes, 0);
        let mut buf = vec![0u8; 1024];
        j.read_record(&j.records[1], &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 2));
    }

    #[test]
    fn refuses_to_replace_an_existing_journal() {
        let d = tempfile::tempdir().unwrap();
        let p = write_journal(d.path(), &[]);
        let e = JournalWriter::create(&p, &ident()).err().unwrap();
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn a_torn_tail_is_skipped_only_when_its_length_field_runs_past_the_end() {
        let d = tempfile::tempdir().unwrap();
        let p = write_journal(d.path(), &[(0, 1, 512), (4096, 2, 1024)]);
        let full = std::fs::read(&p).unwrap();
        let second = full.len() - (28 + 1024 + 32);
        // Cut anywhere after the second record's intact header: provably torn.
        let cuts = (second + 28..full.len())
            .step_by(13)
            .chain([second + 28, full.len() - 1]);
        for cut in cuts {
            std::fs::write(&p, &full[..cut]).unwrap();
            let j = Journal::open(&p).unwrap();
            assert_eq!(j.records.len(), 1, "cut at {cut}");
            assert_eq!(j.torn_tail_bytes, (cut - second) as u64);
            let t = j.torn.unwrap();
            assert_eq!((t.offset, t.length), (4096, 1024));
            assert_eq!(t.data_present, ((cut - second - 28) as u64).min(1024));
        }
        // Cut inside the header: no length field proves anything, so it is corruption.
        for cut in second + 1..second + 28 {
            std::fs::write(&p, &full[..cut]).unwrap();
            let e = Journal::open(&p).unwrap_err();
            assert_eq!(e.exit_code(), 1, "cut at {cut}");
            assert!(e.to_string().contains("record header"), "{e}");
        }
        std::fs::write(&p, &full[..second]).unwrap();
        let j = Journal::open(&p).unwrap();
        assert_eq!((j.records.len(), j.torn), (1, None));
    }

    #[test]
    fn a_cut_last_byte_is_a_torn_record_whose_data_is_all_there() {
        // Whether it may be skipped is decided against the target (restore_records): the
        // file alone cannot tell a crash while appending from a cut after the overwrite.
        let d = tempfile::tempdir().unwrap();
        let p = write_journal(d.path(), &[(0, 1, 512), (4096, 2, 1024)]);
        let full = std::fs::read(&p).unwrap();
        std::fs::write(&p, &full[..full.len() - 1]).unwrap();
        let j = Journal::open(&p).unwrap();
        assert_eq!(j.records.len(), 1);
        assert_eq!(j.torn.unwrap().data_present, 1024);
    }

    #[test]
    fn a_bit_flip_in_the_last_records_data_is_corruption() {
        let d = tempfile::tempdir().unwrap();
        let p = write_journal(d.path(), &[(0, 1, 512), (4096, 2, 1024)]);
        let mut full = std::fs::read(&p).unwrap();
        let n = full.len();
        full[n - 40] ^= 0x01;
        std::fs::write(&p, &full).unwrap();
        let e = Journal::open(&p).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert!(
            e.to_string().contains("complete but fails its checksum"),
            "{e}"
        );
        // A flip in its checksum, too.
        full[n - 40] ^= 0x01;
        full[n - 1] ^= 0x80;
        std::fs::write(&p, &full).unwrap();
        assert_eq!(Journal::open(&p).unwrap_err().exit_code(), 1);
    }

    #[test]
    fn a_journal_longer_than_its_target_allows_is_refused_unread() {
        let d = tempfile::tempdir().unwrap();
        let p = write_journal(d.path(), &[(0, 1, 512)]);
        let f = OpenOptions::new().write(true).open(&p).unwrap();
        f.set_len(4 << 20).unwrap(); // the target is 1 MiB
        let e = Journal::open(&p).unwrap_err();
        assert!(e.to_string().contains("more than a journal"), "{e}");
    }

    #[test]
    fn a_fifo_is_refused_at_once() {
        let d = tempfile::tempdir().unwrap();
        let fifo = crate::input::test_fifo(d.path(), "j.fsjournal");
        let e = Journal::open(&fifo).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert_eq!(Journal::read_identity(&fifo), None);
    }

    #[test]
    fn corruption_before_the_end_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = write_journal(d.path(), &[(0, 1, 512), (4096, 2, 1024)]);
        let mut full = std::fs::read(&p).unwrap();
        let first_data = full.len() - (28 + 1024 + 32) - 32 - 100;
        full[first_data] ^= 0x01;
        std::fs::write(&p, &full).unwrap();
        let e = Journal::open(&p).unwrap_err();
        assert!(e.to_string().contains("fails its checksum"), "{e}");
        assert_eq!(e.exit_code(), 1);
    }

    #[test]
    fn a_damaged_length_in_an_earlier_record_is_refused_not_taken_for_a_torn_tail() {
        let d = tempfile::tempdir().unwrap();
        let p = write_journal(d.path(), &[(0, 1, 512), (4096, 2, 1024)]);
        let mut full = std::fs::read(&p).unwrap();
        let first_head = full.len() - (28 + 1024 + 32) - (28 + 512 + 32);
        full[first_head + 13] ^= 0x10; // length field of the first record
        std::fs::write(&p, &full).unwrap();
        let e = Journal::open(&p).unwrap_err();
        assert!(e.to_string().contains("damaged"), "{e}");
    }

    #[test]
    fn header_damage_and_foreign_files_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = write_journal(d.path(), &[(0, 1, 512)]);
        let mut full = std::fs::read(&p).unwrap();
        full[20] ^= 0x01;
        std::fs::write(&p, &full).unwrap();
        assert!(Journal::open(&p)
            .unwrap_err()
            .to_string()
            .contains("header checksum"));
        std::fs::write(&p, b"hello, this is not a journal at all").unwrap();
        let e = Journal::open(&p).unwrap_err();
        assert!(e.to_string().contains("not a flashscope journal"), "{e}");
        std::fs::write(&p, b"").unwrap();
        assert!(Journal::open(&p).is_err());
        // A missing input file: exit 1 in every command (docs/reference.md).
        assert_eq!(
            Journal::open(&d.path().join("missing"))
                .unwrap_err()
                .exit_code(),
            1
        );
    }

    #[test]
    fn a_journal_is_locked_while_its_writer_lives() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j.fsjournal");
        let w = JournalWriter::create(&p, &ident()).unwrap();
        assert!(lock_leftover(&p).unwrap().is_none(), "the writer holds it");
        drop(w);
        let held = lock_leftover(&p).unwrap();
        assert!(held.is_some(), "no writer: a leftover can be locked");
        assert!(lock_leftover(&p).unwrap().is_none(), "one holder at a time");
    }
}
