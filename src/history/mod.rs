//! The run history: every measuring command's document and its metrics in one SQLite
//! database (docs/history.md has the schema and example SQL), so runs can be listed,
//! exported, compared and summarised per part.
//!
//! History never fails a measurement: the CLI records after the result is printed, and a
//! database that cannot be used (corrupt, read-only, locked past the busy timeout, in an
//! untrusted place) turns history off for that run with one warning.
//!
//! The database file is trusted as journals are (`journal::trust`): its directory is
//! private to the user (created 0700, not a symlink, owned by the user or root, not
//! writable by group or others), no directory on the way is a symlink in a directory
//! others may write, the file is opened with `O_NOFOLLOW` and checked on the descriptor
//! (regular, owned by the user or root, not group/world-writable), and SQLite must open
//! that same file (device and inode compared).

pub mod identity;
pub mod table;

use crate::report::rows::{RunSummary, StoredMetric};
use crate::report::Document;
use crate::{Error, Result};
use identity::DeviceIdentity;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The schema version this build writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 2;

/// The schema, as ordered steps: step `i` takes a database from version `i` to `i + 1`.
/// A step is never edited once released; a change is a new step.
pub const MIGRATIONS: [&str; 2] = [
    // v1: runs and their metrics.
    "CREATE TABLE runs (
        id       INTEGER PRIMARY KEY,
        time     TEXT NOT NULL,
        command  TEXT NOT NULL,
        host     TEXT,
        version  TEXT NOT NULL,
        device   TEXT NOT NULL,
        model    TEXT,
        target   TEXT NOT NULL,
        document TEXT NOT NULL
    );
    CREATE INDEX runs_by_device ON runs(device, id);
    CREATE TABLE metrics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        metric TEXT NOT NULL,
        value  REAL NOT NULL,
        unit   TEXT NOT NULL,
        labels TEXT NOT NULL
    );
    CREATE INDEX metrics_by_run ON metrics(run_id);",
    // v2: where a run came from (measured here or imported from a file), and a digest of
    // its document so importing the same file twice stores it once.
    "ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'measured';
    ALTER TABLE runs ADD COLUMN digest TEXT;
    CREATE INDEX runs_by_digest ON runs(digest);
    CREATE INDEX metrics_by_metric ON metrics(metric, run_id);",
];

/// How long a writer waits for another one (two runs finishing at once) before giving up.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The commands whose runs are stored: those that measure a device or a filesystem.
/// Not stored: `info` (what the device says, no measurement), `model` (a calculator),
/// `analyze` (another tool's logs), `report`, `restore`, `sim`, `history` itself.
pub const MEASURING_COMMANDS: [&str; 16] = [
    "align",
    "auto",
    "bench",
    "fat",
    "fs files",
    "fs matrix",
    "fs seq",
    "health",
    "interval",
    "io",
    "open-au",
    "probe",
    "program",
    "scatter",
    "slc",
    "verify",
];

/// Whether runs of `command` (a document's `command`) are stored.
pub fn is_measuring(command: &str) -> bool {
    MEASURING_COMMANDS.contains(&command)
}

/// Where the history is: `$XDG_DATA_HOME/flashscope/history.sqlite`, else
/// `~/.local/share/flashscope/history.sqlite`; `None` without either variable.
pub fn default_path() -> Option<PathBuf> {
    let abs = |v: std::ffi::OsString| {
        let p = PathBuf::from(v);
        p.is_absolute().then_some(p)
    };
    let base = std::env::var_os("XDG_DATA_HOME")
        .and_then(abs)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(abs)
                .map(|h| h.join(".local/share"))
        })?;
    Some(base.join("flashscope").join("history.sqlite"))
}

/// Whether and where this run is recorded, from `--history PATH`, `--no-history` and
/// `FLASHSCOPE_HISTORY` (`off` turns recording off; an explicit `--history PATH` still
/// records). `Err` carries the reason recording is off when that is worth a warning.
pub fn recording_place(
    option: Option<&Path>,
    no_history: bool,
    env: Option<&str>,
) -> std::result::Result<Option<PathBuf>, String> {
    if no_history {
        return Ok(None);
    }
    if let Some(p) = option {
        return Ok(Some(p.to_path_buf()));
    }
    match env.map(|v| v.trim().to_ascii_lowercase()) {
        Some(v) if v == "off" => return Ok(None),
        Some(v) if v.is_empty() || v == "on" => {}
        Some(v) => {
            return Err(format!(
                "FLASHSCOPE_HISTORY={v} is not understood (use off or on)"
            ))
        }
        None => {}
    }
    match default_path() {
        Some(p) => Ok(Some(p)),
        None => Err(
            "neither XDG_DATA_HOME nor HOME is set to an absolute path: give --history PATH".into(),
        ),
    }
}

/// The database the `history` commands (and `compare`'s history sides) read:
/// `--history PATH` or the default; `--no-history` is refused there.
pub fn reading_place(option: Option<&Path>, no_history: bool) -> Result<PathBuf> {
    if no_history {
        return Err(Error::usage(
            "--no-history: the history commands read the history; give --history PATH to read another one",
        ));
    }
    match option {
        Some(p) => Ok(p.to_path_buf()),
        None => default_path().ok_or_else(|| {
            Error::usage("neither XDG_DATA_HOME nor HOME is set: give --history PATH")
        }),
    }
}

/// Store a measuring command's document at `place` ([`recording_place`]'s answer):
/// nothing for another command or when recording is off; why it is off as the error.
pub fn record_run(
    place: &std::result::Result<Option<PathBuf>, String>,
    doc: &Document,
) -> Result<()> {
    if !is_measuring(doc.command()) {
        return Ok(());
    }
    match place {
        Ok(None) => Ok(()),
        Ok(Some(path)) => record_measured(path, doc).map(|_| ()),
        Err(why) => Err(Error::usage(why.clone())),
    }
}

/// One run in full, as `history export` writes it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct StoredRun {
    pub id: i64,
    pub time: String,
    pub command: String,
    pub host: Option<String>,
    pub version: String,
    pub device: String,
    pub model: Option<String>,
    pub target: String,
    pub source: String,
    /// The document as stored (compact JSON).
    pub document: String,
}

/// The unit of a metric, from the suffix its name carries (Prometheus naming).
pub fn unit_of(metric: &str) -> &'static str {
    const SUFFIXES: [(&str, &str); 6] = [
        ("_bytes_per_second", "B/s"),
        ("_seconds", "s"),
        ("_bytes", "B"),
        ("_ratio", "ratio"),
        ("_iops", "IOPS"),
        ("_met", "bool"),
    ];
    SUFFIXES
        .iter()
        .find(|(s, _)| metric.ends_with(s))
        .map(|(_, u)| *u)
        .unwrap_or("")
}

/// An open history database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// Put the database in WAL mode: readers and one writer work at once, a second writer
/// waits (busy timeout). Switching the mode of a new database takes a lock for which
/// SQLite does not wait when several processes open it at once, so a busy answer is
/// retried until [`BUSY_TIMEOUT`]. A corrupt file fails here (the header is read).
fn set_wal(conn: &Connection, path: &Path) -> Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())) {
            Ok(()) => return Ok(()),
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                ) =>
            {
                if std::time::Instant::now() >= deadline {
                    return Err(db_error(path, "locked by another writer", e));
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => return Err(db_error(path, "not a usable SQLite database", e)),
        }
    }
}

/// The columns of a run's summary (its headline metric: its first stored), for [`run_summary`].
const SUMMARY_SELECT: &str =
    "SELECT r.id, r.time, r.command, r.host, r.device, r.model, r.target, r.source,
            m.metric, m.value, m.unit, m.labels
     FROM runs r
     LEFT JOIN metrics m ON m.rowid =
         (SELECT min(rowid) FROM metrics WHERE run_id = r.id)";

/// A row of [`SUMMARY_SELECT`].
fn run_summary(r: &rusqlite::Row) -> rusqlite::Result<RunSummary> {
    let metric: Option<String> = r.get(8)?;
    Ok(RunSummary {
        id: r.get(0)?,
        time: r.get(1)?,
        command: r.get(2)?,
        host: r.get(3)?,
        device: r.get(4)?,
        model: r.get(5)?,
        target: r.get(6)?,
        source: r.get(7)?,
        headline: match metric {
            Some(metric) => Some(StoredMetric {
                metric,
                value: r.get(9)?,
                unit: r.get(10)?,
                labels: r.get(11)?,
            }),
            None => None,
        },
    })
}

/// Turn off what a database file could make this process run: SQLite's defensive mode
/// (no writes to the schema, no shadow tables) and `trusted_schema = OFF` (a view,
/// trigger or default in the file may not call functions with side effects). Set before
/// the file's schema is first read.
fn harden(conn: &Connection, path: &Path) -> Result<()> {
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)
        .map_err(|e| db_error(path, "setting defensive mode", e))?;
    conn.execute_batch("PRAGMA trusted_schema = OFF")
        .map_err(|e| db_error(path, "setting trusted_schema", e))?;
    Ok(())
}

/// One object of a database's schema, its SQL with runs of white space as one space.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SchemaObject {
    kind: String,
    name: String,
    table: String,
    sql: Option<String>,
}

/// How many objects of a database's schema are read at most: the schema flashscope
/// makes has six, so one more is already foreign.
const SCHEMA_OBJECTS_READ: usize = 64;

/// The objects of `conn`'s main schema, at most `limit`.
fn schema_objects(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<SchemaObject>> {
    let mut st = conn.prepare(
        "SELECT type, name, tbl_name, sql FROM main.sqlite_schema ORDER BY type, name LIMIT ?1",
    )?;
    let rows = st.query_map([limit as i64], |r| {
        let sql: Option<String> = r.get(3)?;
        Ok(SchemaObject {
            kind: r.get(0)?,
            name: r.get(1)?,
            table: r.get(2)?,
            sql: sql.map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")),
        })
    })?;
    rows.collect()
}

/// The objects the first `version` migration steps make, read from a database in memory
/// that ran them.
fn made_by_migrations(version: usize) -> Result<Vec<SchemaObject>> {
    let here = Path::new(":memory:");
    let conn = Connection::open_in_memory().map_err(|e| db_error(here, "cannot open", e))?;
    for step in &MIGRATIONS[..version] {
        conn.execute_batch(step)
            .map_err(|e| db_error(here, "building the expected schema", e))?;
    }
    schema_objects(&conn, SCHEMA_OBJECTS_READ)
        .map_err(|e| db_error(here, "reading the expected schema", e))
}

fn db_error(path: &Path, what: &str, e: rusqlite::Error) -> Error {
    Error::runtime(format!("history {}: {what}: {e}", path.display()))
}

impl Store {
    /// Open (creating if needed) the history at `path` after the trust checks, and bring
    /// its schema up to [`SCHEMA_VERSION`]. A database of a newer schema is refused.
    pub fn open(path: &Path) -> Result<Store> {
        let (dev, ino) = trusted_file(path, true)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| db_error(path, "cannot open", e))?;
        same_file(path, (dev, ino))?;
        Store::setup(conn, path.to_path_buf())
    }

    /// Open the history to read it: as [`Store::open`] where the file can be written, and
    /// read-only where it cannot (a read-only filesystem, another user's database), so
    /// `history list` and `compare 12 15` still work there. A read-only database must
    /// have this version's schema: it cannot be migrated.
    pub fn open_to_read(path: &Path) -> Result<Store> {
        // Asked of the kernel for this process's effective ids; nothing is opened before
        // the trust checks.
        let writable = rustix::fs::accessat(
            rustix::fs::CWD,
            path,
            rustix::fs::Access::WRITE_OK,
            rustix::fs::AtFlags::EACCESS,
        );
        match writable {
            Err(rustix::io::Errno::ROFS | rustix::io::Errno::ACCESS | rustix::io::Errno::PERM) => {
                Store::open_read_only(path)
            }
            _ => Store::open(path),
        }
    }

    fn open_read_only(path: &Path) -> Result<Store> {
        let id = trusted_file(path, false)?;
        // Without write access SQLite cannot make the WAL index beside the file, so it is
        // read as immutable: right on a read-only filesystem; for another user's database
        // that its owner writes at this moment, a query may miss or half-see that run.
        let uri = format!("file:{}?immutable=1", uri_path(path));
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags)
            .map_err(|e| db_error(path, "cannot open (read-only)", e))?;
        same_file(path, id)?;
        harden(&conn, path)?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        let version = store.schema_version().map_err(|e| {
            Error::runtime(format!("{e} (read-only: the file cannot be written here)"))
        })?;
        if version != SCHEMA_VERSION {
            return Err(Error::runtime(format!(
                "history {}: schema version {version}, this flashscope reads {SCHEMA_VERSION}, and the file cannot be written here to update it: open it once where it is writable",
                path.display()
            )));
        }
        store.check_schema()?;
        Ok(store)
    }

    /// A history in memory (tests, and `compare` on documents alone).
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory()
            .map_err(|e| db_error(Path::new(":memory:"), "cannot open", e))?;
        Store::setup(conn, PathBuf::from(":memory:"))
    }

    fn setup(conn: Connection, path: PathBuf) -> Result<Store> {
        harden(&conn, &path)?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| db_error(&path, "setting the busy timeout", e))?;
        set_wal(&conn, &path)?;
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
            .map_err(|e| db_error(&path, "setting it up", e))?;
        let mut store = Store { conn, path };
        // Before the migration writes anything, and after it.
        store.check_schema()?;
        store.migrate_to(SCHEMA_VERSION)?;
        store.check_schema()?;
        Ok(store)
    }

    /// The database holds exactly the objects flashscope's migrations made for its schema
    /// version (issue 44.7): a trigger, a view, an index or a table of anyone else would run
    /// or be read inside root's insert or query (an insert trigger of millions of rows, a
    /// delete trigger wiping the older runs), so any other object is refused, named,
    /// before a statement touches the tables. A new database (version 0) holds none yet.
    fn check_schema(&self) -> Result<()> {
        // One snapshot: another process's migration cannot fall between the two reads.
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(|e| db_error(&self.path, "reading its schema", e))?;
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| db_error(&self.path, "reading the schema version", e))?;
        let have = schema_objects(&tx, SCHEMA_OBJECTS_READ)
            .map_err(|e| db_error(&self.path, "reading its schema", e))?;
        drop(tx);
        let want = match usize::try_from(version) {
            Ok(0) => Vec::new(),
            Ok(v) if v <= MIGRATIONS.len() => {
                // A view or nothing where a table is kept, named as such.
                self.check_tables()?;
                made_by_migrations(v)?
            }
            // migrate_to and open_read_only refuse these with their own message.
            _ => return Ok(()),
        };
        let foreign: Vec<&SchemaObject> = have.iter().filter(|o| !want.contains(o)).collect();
        let missing: Vec<&SchemaObject> = want.iter().filter(|o| !have.contains(o)).collect();
        if foreign.is_empty() && missing.is_empty() {
            return Ok(());
        }
        let name = |o: &&SchemaObject| {
            format!(
                "{} '{}'",
                crate::input::printable(&o.kind),
                crate::input::printable(&o.name)
            )
        };
        let what = if !foreign.is_empty() {
            let changed = |o: &&SchemaObject| {
                want.iter()
                    .any(|w| (&w.kind, &w.name) == (&o.kind, &o.name))
            };
            let shown: Vec<String> = foreign.iter().take(5).map(name).collect();
            format!(
                "it holds {}{} that flashscope did not make{}",
                shown.join(", "),
                if foreign.len() > shown.len() {
                    ", …"
                } else {
                    ""
                },
                if foreign.iter().any(changed) {
                    " as it is"
                } else {
                    ""
                }
            )
        } else {
            format!("its {} is missing", name(&missing[0]))
        };
        Err(Error::usage(format!(
            "history {}: {what} (schema version {version}; a damaged or foreign database, and its objects would run inside this run's queries); use another --history",
            self.path.display()
        )))
    }

    /// The database's `runs` and `metrics` are plain tables, as the migrations made them:
    /// a view in their place (another program's, or an attacker's recursive one that
    /// never ends) is refused before any query runs.
    fn check_tables(&self) -> Result<()> {
        for table in ["runs", "metrics"] {
            let kind: Option<String> = self
                .conn
                .query_row(
                    "SELECT type FROM sqlite_master WHERE name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| db_error(&self.path, "reading its schema", e))?;
            if kind.as_deref() != Some("table") {
                return Err(Error::usage(format!(
                    "history {}: '{table}' is {} where flashscope keeps a table (a damaged or foreign database); use another --history",
                    self.path.display(),
                    match &kind {
                        Some(k) => format!("a {}", crate::input::printable(k)),
                        None => "missing".to_string(),
                    }
                )));
            }
        }
        Ok(())
    }

    /// Where the database is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the database (`PRAGMA user_version`).
    pub fn schema_version(&self) -> Result<i64> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| db_error(&self.path, "reading the schema version", e))
    }

    /// Apply the migration steps up to `version`, each in its own transaction that first
    /// takes the write lock, so two processes opening a new database at once migrate it
    /// once.
    pub fn migrate_to(&mut self, version: i64) -> Result<()> {
        let path = self.path.clone();
        loop {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| db_error(&path, "locking it to update the schema", e))?;
            let have: i64 = tx
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(|e| db_error(&path, "not a usable SQLite database", e))?;
            if have > SCHEMA_VERSION {
                return Err(Error::usage(format!(
                    "history {}: schema version {have} is newer than this flashscope's {SCHEMA_VERSION}; use a newer flashscope or another --history",
                    path.display()
                )));
            }
            if have < 0 {
                return Err(Error::usage(format!(
                    "history {}: schema version {have} is not one flashscope writes (a damaged or foreign database); use another --history",
                    path.display()
                )));
            }
            if have >= version {
                return Ok(());
            }
            let step = MIGRATIONS[have as usize];
            tx.execute_batch(step)
                .and_then(|_| tx.execute_batch(&format!("PRAGMA user_version = {}", have + 1)))
                .and_then(|_| tx.commit())
                .map_err(|e| db_error(&path, &format!("migrating to schema {}", have + 1), e))?;
        }
    }

    /// Store one run: the whole document and its metrics, in one transaction. `source` is
    /// `measured` or `import:FILE`; `host` is this machine for a measured run, `None`
    /// for an imported one (the document does not say). Returns the run's id and `true`;
    /// for an import of a document already stored, its id and `false` (a measured run is
    /// always a new run, even when its document is identical to an earlier one).
    pub fn record(
        &mut self,
        doc: &Document,
        device: &DeviceIdentity,
        host: Option<&str>,
        source: &str,
    ) -> Result<(i64, bool)> {
        use sha2::Digest;
        let path = self.path.clone();
        let text = doc
            .to_compact_json()
            .map_err(|e| Error::runtime(format!("history: serialising the document: {e}")))?;
        if text.len() as u64 > crate::input::DOCUMENT_CAP_BYTES {
            return Err(Error::usage(format!(
                "history {}: the run's document is {}, more than the {} a document may have; not stored",
                path.display(),
                crate::vocab::units::format_bytes(text.len() as u64),
                crate::vocab::units::format_bytes(crate::input::DOCUMENT_CAP_BYTES)
            )));
        }
        let digest = format!("{:x}", sha2::Sha256::digest(text.as_bytes()));
        let target = identity::target_info(doc)
            .map(|t| t.spec)
            .unwrap_or_default();
        let err = |e| db_error(&path, "storing the run", e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let existing: Option<i64> = if source == "measured" {
            None
        } else {
            tx.query_row(
                "SELECT id FROM runs WHERE digest = ?1",
                params![digest],
                |r| r.get(0),
            )
            .optional()
            .map_err(err)?
        };
        if let Some(id) = existing {
            return Ok((id, false));
        }
        tx.execute(
            "INSERT INTO runs (time, command, host, version, device, model, target, document, source, digest)
             VALUES (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                doc.command(),
                host,
                env!("CARGO_PKG_VERSION"),
                device.key,
                device.model,
                target,
                text,
                source,
                digest
            ],
        )
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO metrics (run_id, metric, value, unit, labels) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(err)?;
            for m in doc.metrics.iter().filter(|m| m.value.is_finite()) {
                let labels = serde_json::to_string(&m.labels).unwrap_or_else(|_| "{}".into());
                insert
                    .execute(params![id, m.name, m.value, unit_of(&m.name), labels])
                    .map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        Ok((id, true))
    }

    /// The document of run `id`; a missing id is a usage error (exit 2), as is one larger
    /// than the document cap.
    pub fn run(&self, id: i64) -> Result<Document> {
        let row: Option<(Option<String>, i64)> = self
            .conn
            .query_row(
                &format!("SELECT {} FROM runs WHERE id = ?1", capped_document(2)),
                params![id, DOCUMENT_CAP],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| db_error(&self.path, "reading a run", e))?;
        let (text, size) = row.ok_or_else(|| {
            Error::usage(format!(
                "history {}: there is no run {id}; `flashscope history list` shows the ids",
                self.path.display()
            ))
        })?;
        let text = self.within_cap(id, text, size)?;
        parse_stored(&self.path, id, &text)
    }

    /// A stored document as [`capped_document`] reads it: the text, or the refusal of one over the
    /// document cap (stored before the cap, or by other means than flashscope), naming the
    /// run and the cap (exit 2).
    fn within_cap(&self, id: i64, text: Option<String>, size: i64) -> Result<String> {
        text.ok_or_else(|| {
            Error::usage(format!(
                "history {}: run {id}'s stored document is {}, more than the {} a document may have; it is not read (delete the run, or export others with `history export --format csv`)",
                self.path.display(),
                crate::vocab::units::format_bytes(size.max(0) as u64),
                crate::vocab::units::format_bytes(crate::input::DOCUMENT_CAP_BYTES)
            ))
        })
    }

    /// Every run of the device with identity key `device`, oldest first.
    pub fn runs_for_device(&self, device: &str) -> Result<Vec<(i64, Document)>> {
        let err = |e| db_error(&self.path, "reading runs", e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT id, {} FROM runs WHERE device = ?1 ORDER BY id",
                capped_document(2)
            ))
            .map_err(err)?;
        let rows = stmt
            .query_map(params![device, DOCUMENT_CAP], |r| {
                Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(err)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, text, size) = row.map_err(err)?;
            let text = self.within_cap(id, text, size)?;
            out.push((id, parse_stored(&self.path, id, &text)?));
        }
        Ok(out)
    }

    /// The summary of run `id` (time, device, …), `None` when there is none.
    pub fn summary(&self, id: i64) -> Result<Option<RunSummary>> {
        Ok(self.summaries(Some(id), None, 1)?.pop())
    }

    /// The last `limit` runs (of `device` when given), oldest first, each with its
    /// headline metric.
    pub fn list(&self, device: Option<&str>, limit: u64) -> Result<Vec<RunSummary>> {
        let mut v = self.summaries(None, device, limit)?;
        v.reverse();
        Ok(v)
    }

    fn summaries(
        &self,
        id: Option<i64>,
        device: Option<&str>,
        limit: u64,
    ) -> Result<Vec<RunSummary>> {
        let err = |e| db_error(&self.path, "listing runs", e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "{SUMMARY_SELECT}
                 WHERE (?1 IS NULL OR r.id = ?1) AND (?2 IS NULL OR r.device = ?2)
                 ORDER BY r.id DESC LIMIT ?3"
            ))
            .map_err(err)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map(params![id, device, limit], run_summary)
            .map_err(err)?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(err)
    }

    /// [`Store::list`] one run at a time, oldest first: `f` gets each summary, and they are
    /// never all held (`history list --limit 1000000`). An error from `f` ends the walk.
    pub fn for_each_listed(
        &self,
        device: Option<&str>,
        limit: u64,
        mut f: impl FnMut(RunSummary) -> Result<()>,
    ) -> Result<()> {
        let err = |e| db_error(&self.path, "listing runs", e);
        if limit == 0 {
            return Ok(());
        }
        // The oldest of the last `limit` runs (none: fewer runs than that, all of them).
        let offset = i64::try_from(limit - 1).unwrap_or(i64::MAX);
        let oldest: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM runs WHERE (?1 IS NULL OR device = ?1)
                 ORDER BY id DESC LIMIT 1 OFFSET ?2",
                params![device, offset],
                |r| r.get(0),
            )
            .optional()
            .map_err(err)?;
        let mut stmt = self
            .conn
            .prepare(&format!(
                "{SUMMARY_SELECT}
                 WHERE (?1 IS NULL OR r.id >= ?1) AND (?2 IS NULL OR r.device = ?2)
                 ORDER BY r.id"
            ))
            .map_err(err)?;
        let mut rows = stmt.query(params![oldest, device]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            f(run_summary(r).map_err(err)?)?;
        }
        Ok(())
    }

    /// Run `f` on one snapshot of the database: what it reads twice (a table's widths,
    /// then its rows) is the same, whatever another process stores meanwhile.
    pub fn snapshot<T>(&self, f: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(|e| db_error(&self.path, "reading", e))?;
        let r = f(self);
        // A read-only transaction: ending it cannot lose anything.
        let _ = tx.rollback();
        r
    }

    /// Call `f` with every run, oldest first, one at a time (the database is never read
    /// into memory whole).
    /// A run whose document is over the cap refuses the walk before `f` sees any run (an
    /// export is not cut off half way).
    pub fn for_each_run(&self, mut f: impl FnMut(&StoredRun) -> Result<()>) -> Result<()> {
        let err = |e| db_error(&self.path, "reading runs", e);
        let over: Option<(i64, i64)> = self
            .conn
            .query_row(
                "SELECT id, octet_length(document) FROM runs WHERE octet_length(document) > ?1
                 ORDER BY id LIMIT 1",
                params![DOCUMENT_CAP],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(err)?;
        if let Some((id, size)) = over {
            self.within_cap(id, None, size)?;
        }
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT id, time, command, host, version, device, model, target, source, {}
                 FROM runs ORDER BY id",
                capped_document(1)
            ))
            .map_err(err)?;
        let mut rows = stmt.query(params![DOCUMENT_CAP]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let mut run = stored_run(r).map_err(err)?;
            let text = r.get(9).map_err(err)?;
            run.document = self.within_cap(run.id, text, r.get(10).map_err(err)?)?;
            f(&run)?;
        }
        Ok(())
    }

    /// Call `f` with every metric row of every run, ordered by run, one at a time.
    pub fn for_each_metric(
        &self,
        mut f: impl FnMut(&StoredRun, &StoredMetric) -> Result<()>,
    ) -> Result<()> {
        let err = |e| db_error(&self.path, "reading metrics", e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.time, r.command, r.host, r.version, r.device, r.model, r.target,
                        r.source, m.metric, m.value, m.unit, m.labels
                 FROM metrics m JOIN runs r ON r.id = m.run_id ORDER BY m.run_id, m.rowid",
            )
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let run = stored_run(r).map_err(err)?;
            let m = StoredMetric {
                metric: r.get(9).map_err(err)?,
                value: r.get(10).map_err(err)?,
                unit: r.get(11).map_err(err)?,
                labels: r.get(12).map_err(err)?,
            };
            f(&run, &m)?;
        }
        Ok(())
    }

    /// The connection, for the table's aggregation queries.
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// Two columns: the stored document when it is within the document cap (else NULL) and
/// its size in bytes, the cap being the query's parameter `?N`: an over-cap document is
/// never read into memory (`octet_length` does not load it), whatever put it there.
fn capped_document(cap_parameter: usize) -> String {
    format!("CASE WHEN octet_length(document) <= ?{cap_parameter} THEN document END, octet_length(document)")
}

/// [`crate::input::DOCUMENT_CAP_BYTES`] as a query's parameter.
const DOCUMENT_CAP: i64 = crate::input::DOCUMENT_CAP_BYTES as i64;

/// A `runs` row from columns 0–8 (id … source, in [`StoredRun`]'s order), its document
/// left empty.
fn stored_run(r: &rusqlite::Row) -> rusqlite::Result<StoredRun> {
    Ok(StoredRun {
        id: r.get(0)?,
        time: r.get(1)?,
        command: r.get(2)?,
        host: r.get(3)?,
        version: r.get(4)?,
        device: r.get(5)?,
        model: r.get(6)?,
        target: r.get(7)?,
        source: r.get(8)?,
        document: String::new(),
    })
}

fn parse_stored(path: &Path, id: i64, text: &str) -> Result<Document> {
    Document::from_json(
        &format!("history {} run {id}", path.display()),
        text.as_bytes(),
    )
}

/// Record a measured run on this machine in the history at `path`. Only measuring
/// commands are recorded (`Ok(None)` for the others).
pub fn record_measured(path: &Path, doc: &Document) -> Result<Option<i64>> {
    if !is_measuring(doc.command()) {
        return Ok(None);
    }
    let mut store = Store::open(path)?;
    let device = identity::of_live(doc);
    let host = crate::sys::hostname();
    let (id, _) = store.record(doc, &device, host.as_deref(), "measured")?;
    Ok(Some(id))
}

/// Check the place of the database file at `path` and open (or create, mode 0600) it
/// without following a symlink; returns its device and inode from the descriptor.
/// SQLite opened by path: it must be the file checked on the descriptor.
fn same_file(path: &Path, (dev, ino): (u64, u64)) -> Result<()> {
    let now = std::fs::symlink_metadata(path)
        .map_err(|e| Error::io(format!("examining the history {}", path.display()), e))?;
    if (now.dev(), now.ino()) != (dev, ino) {
        return Err(Error::Refused(format!(
            "history {}: the file changed while it was opened; not used",
            path.display()
        )));
    }
    Ok(())
}

/// `path` for a SQLite `file:` URI: `%`, `?` and `#` escaped.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// The checks on the history file before SQLite opens it (`write`: open it for writing,
/// creating it if missing; otherwise read-only, and it must exist).
fn trusted_file(path: &Path, write: bool) -> Result<(u64, u64)> {
    let remedy = "give --history PATH in a directory of your own, or --no-history";
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = std::path::absolute(&dir)
        .map_err(|e| Error::io(format!("examining the directory {}", dir.display()), e))?;
    // Each refusal names the database as well as the component on its way.
    let named = |e: Error| match e {
        Error::Refused(m) => Error::Refused(format!(
            "{}: {m}",
            crate::input::printable(&path.to_string_lossy())
        )),
        e => e,
    };
    no_shared_symlinks(&dir, remedy).map_err(named)?;
    // The file is opened in the directory judged on the way (its descriptor, not its
    // name); SQLite then opens it by name and `same_file` checks it is this one.
    let dir =
        crate::journal::trust::private_dir_for(&dir, "the run history", remedy).map_err(named)?;
    let name = path
        .file_name()
        .ok_or_else(|| Error::usage(format!("--history {}: names no file", path.display())))?;
    let access = if write {
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CREATE
    } else {
        rustix::fs::OFlags::RDONLY
    };
    let file = dir
        .open_or_create(name, access | rustix::fs::OFlags::NONBLOCK, 0o600)
        .map_err(|e| {
            crate::journal::trust::open_error("the history", path, e)
                .unwrap_or_else(|| Error::runtime(format!("{}: not found", path.display())))
        })?;
    let meta = crate::input::check_regular(&file, path, "history database", u64::MAX)?;
    crate::journal::trust::check_owner(&meta, "the history", path)
        .map_err(|e| Error::Refused(format!("{e}; or {remedy}")))?;
    Ok((meta.dev(), meta.ino()))
}

/// Refuse a path through a symlink that sits in a directory others may write (`/tmp`):
/// whoever planted it decides where the history goes.
fn no_shared_symlinks(dir: &Path, remedy: &str) -> Result<()> {
    let mut so_far = PathBuf::new();
    for part in dir.components() {
        let parent = so_far.clone();
        so_far.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&so_far) else {
            // Not there yet: created private below.
            return Ok(());
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        let shared = std::fs::metadata(&parent)
            .map(|m| m.mode() & 0o022 != 0)
            .unwrap_or(true);
        let me = crate::sys::euid();
        if shared || (meta.uid() != me && meta.uid() != 0) {
            return Err(Error::Refused(format!(
                "the history's path goes through the symbolic link {}, in a directory others can write or owned by someone else: it is not followed; {remedy}",
                so_far.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Metric;

    /// A bench document on `info` with no figures yet (the tests add the metrics).
    pub(crate) fn empty_bench(info: &crate::device::TargetInfo) -> Document {
        use crate::report::results::{BenchParameters, BenchResult};
        Document::for_target(
            info,
            crate::report::Body::Bench(BenchResult {
                parameters: BenchParameters {
                    size: 0,
                    runtime_ns_per_test: 0,
                    ramp_ns_per_test: 0,
                    engine: "sync".into(),
                    write: false,
                    quick: true,
                    cpus: Vec::new(),
                    clock: "virtual".into(),
                    runs: 1,
                },
                samples: Vec::new(),
                jobs: Vec::new(),
                classes: Vec::new(),
                expect: None,
                error: None,
                runs: None,
            }),
        )
    }

    fn bench_doc(spec: &str, seq_read: f64) -> Document {
        let info = crate::device::TargetInfo {
            spec: spec.into(),
            kind: crate::device::TargetKind::Sim,
            ..Default::default()
        };
        let mut d = empty_bench(&info);
        d.metrics.push(Metric::new(
            "bench_bandwidth_bytes_per_second",
            "h",
            seq_read,
            &[("job", "seq_read")],
        ));
        d
    }

    #[test]
    fn a_run_round_trips_with_its_metrics() {
        let mut s = Store::open_in_memory().unwrap();
        let d = bench_doc("sim:sd-16g", 22.5e6);
        let dev = identity::of_document(&d);
        let (id, new) = s.record(&d, &dev, Some("h1"), "measured").unwrap();
        assert!(new);
        let back = s.run(id).unwrap();
        assert_eq!(back.metrics, d.metrics);
        assert_eq!(back.target_info().unwrap().spec, "sim:sd-16g");
        assert_eq!(s.runs_for_device("sim:sd-16g").unwrap().len(), 1);
        assert_eq!(s.record(&d, &dev, None, "import:x").unwrap(), (id, false));
        let l = s.list(None, 10).unwrap();
        assert_eq!(l.len(), 1);
        let h = l[0].headline.as_ref().unwrap();
        assert_eq!((h.unit.as_str(), h.value), ("B/s", 22.5e6));
        assert_eq!(s.run(id + 1).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn a_version_1_database_is_migrated() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("h.sqlite");
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.execute_batch("PRAGMA user_version = 1").unwrap();
            c.execute(
                "INSERT INTO runs (time, command, host, version, device, target, document)
                 VALUES ('2026-01-01T00:00:00Z', 'bench', 'old', '0.0.1', 'sim:sd-16g', 'sim:sd-16g', ?1)",
                params![serde_json::to_string(&bench_doc("sim:sd-16g", 1e6)).unwrap()],
            )
            .unwrap();
        }
        let s = Store::open(&p).unwrap();
        assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
        let l = s.list(None, 10).unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].source, "measured");
        assert_eq!(s.run(l[0].id).unwrap().command(), "bench");
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("h.sqlite");
        Connection::open(&p)
            .unwrap()
            .execute_batch("PRAGMA user_version = 99")
            .unwrap();
        let e = Store::open(&p).unwrap_err();
        assert!(e.to_string().contains("newer"), "{e}");
    }

    #[test]
    fn a_negative_schema_version_or_a_view_for_a_table_is_refused_not_a_panic_or_a_hang() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("neg.sqlite");
        Connection::open(&p)
            .unwrap()
            .execute_batch("PRAGMA user_version = -1")
            .unwrap();
        let e = Store::open(&p).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("schema version -1"), "{e}");
        // A database whose runs is a recursive view: refused before any query.
        let p = d.path().join("view.sqlite");
        Store::open(&p).unwrap();
        Connection::open(&p)
            .unwrap()
            .execute_batch(
                "DROP TABLE metrics; DROP TABLE runs;
                 CREATE TABLE metrics (run_id INTEGER, metric TEXT, value REAL);
                 CREATE VIEW runs AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x AS id FROM n;",
            )
            .unwrap();
        let t0 = std::time::Instant::now();
        let e = Store::open(&p).unwrap_err();
        assert!(e.to_string().contains("'runs' is a view"), "{e}");
        let e = Store::open_read_only(&p).unwrap_err();
        assert!(e.to_string().contains("'runs' is a view"), "{e}");
        assert!(t0.elapsed() < std::time::Duration::from_secs(10));
    }

    /// Issue 44.7: a trigger, a view, a table or an index flashscope did not make (or made
    /// otherwise) is refused, named, before anything runs inside this process's queries;
    /// the file is left as it was and the trigger never fires. A database flashscope made
    /// (new, or at version 1 and migrated) opens, defensive and with an untrusted schema.
    #[test]
    fn a_database_with_objects_flashscope_did_not_make_is_refused_before_they_run() {
        let d = tempfile::tempdir().unwrap();
        let made = |name: &str| {
            let p = d.path().join(name);
            let mut s = Store::open(&p).unwrap();
            let doc = bench_doc("sim:sd-16g", 1e6);
            s.record(&doc, &identity::of_live(&doc), None, "measured")
                .unwrap();
            p
        };
        let planted = [
            (
                "insert-trigger",
                "CREATE TABLE log (x); CREATE TRIGGER slow AFTER INSERT ON runs BEGIN INSERT INTO log VALUES (1); END;",
                "trigger 'slow'",
            ),
            (
                "delete-trigger",
                "CREATE TRIGGER wipe AFTER INSERT ON metrics BEGIN DELETE FROM runs WHERE id < NEW.run_id; END;",
                "trigger 'wipe'",
            ),
            ("table", "CREATE TABLE extra (x);", "table 'extra'"),
            (
                "view",
                "CREATE VIEW \"\x1b[2Jv\" AS SELECT 1;",
                "view '\\u{1b}[2Jv'",
            ),
            (
                "changed-index",
                "DROP INDEX runs_by_device; CREATE INDEX runs_by_device ON runs(target);",
                "index 'runs_by_device' that flashscope did not make as it is",
            ),
            (
                "missing-index",
                "DROP INDEX metrics_by_run;",
                "index 'metrics_by_run' is missing",
            ),
        ];
        for (name, sql, says) in planted {
            let p = made(name);
            Connection::open(&p).unwrap().execute_batch(sql).unwrap();
            let before = std::fs::read(&p).unwrap();
            for opened in [Store::open(&p), Store::open_read_only(&p)] {
                let e = opened.unwrap_err();
                assert_eq!(e.exit_code(), 2, "{name}: {e}");
                assert!(e.to_string().contains(says), "{name}: {e}");
                assert!(!e.to_string().contains('\x1b'), "{name}: {e}");
            }
            let doc = bench_doc("sim:sd-16g", 2e6);
            assert!(record_measured(&p, &doc).is_err(), "{name}");
            assert_eq!(
                std::fs::read(&p).unwrap(),
                before,
                "{name}: the file changed"
            );
        }
        // A version-1 database with a trigger is refused before its migration.
        let p = d.path().join("v1.sqlite");
        let c = Connection::open(&p).unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.execute_batch(
            "PRAGMA user_version = 1; CREATE TRIGGER t AFTER INSERT ON runs BEGIN SELECT 1; END;",
        )
        .unwrap();
        drop(c);
        let e = Store::open(&p).unwrap_err();
        assert!(e.to_string().contains("trigger 't'"), "{e}");
        // A new database, and flashscope's own, open hardened.
        let s = Store::open(&made("good")).unwrap();
        let trusted: i64 = s
            .conn()
            .query_row("PRAGMA trusted_schema", [], |r| r.get(0))
            .unwrap();
        assert_eq!(trusted, 0);
        assert!(s
            .conn()
            .db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE)
            .unwrap());
        assert_eq!(s.list(None, 10).unwrap().len(), 1);
    }

    #[test]
    fn the_place_is_chosen_from_option_flag_and_environment() {
        let p = Path::new("/x/h.sqlite");
        assert_eq!(recording_place(Some(p), true, None), Ok(None));
        assert_eq!(
            recording_place(Some(p), false, Some("off")),
            Ok(Some(p.to_path_buf()))
        );
        assert_eq!(recording_place(None, false, Some("OFF")), Ok(None));
        assert!(recording_place(None, false, Some("maybe")).is_err());
    }

    #[test]
    fn units_follow_the_metric_names() {
        assert_eq!(unit_of("bench_bandwidth_bytes_per_second"), "B/s");
        assert_eq!(unit_of("bench_iops"), "IOPS");
        assert_eq!(unit_of("io_latency_p99_seconds"), "s");
        assert_eq!(unit_of("probe_usable_bytes"), "B");
    }
}
