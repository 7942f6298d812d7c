//! The sides of a comparison: what one side measured, read from a saved flashscope
//! `bench` or `io` document or from fio's `--output-format=json`, as throughput figures
//! keyed by their workload (rw, block size, queue depth, jobs, direct I/O).

use super::Workload;
use crate::input;
use crate::report::results::{BenchResult, IoResult};
use crate::report::{Body, Document};
use crate::vocab::Metric;
use crate::workload::bench::BenchFigure;
use crate::workload::job::SecondSample;
use crate::workload::{Dir, RwMode};
use crate::{Error, Result};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where a side comes from, as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SideSpec {
    /// A saved `flashscope … --json` document or a fio JSON output (`-`: standard input).
    File(PathBuf),
    /// One stored run of the history database `db` (`#ID` or `ID` as `history list`
    /// shows it).
    History { db: PathBuf, id: i64 },
    /// Every stored bench run of a device (its identity as `history list` shows it, e.g.
    /// `sim:sd-16g` or `mmc:0x03/0x5344/SD32G/0x1234abcd`): its runs are the repetitions.
    Device { db: PathBuf, key: String },
}

impl SideSpec {
    /// What the command line's word names: an existing file (or `-`) first, then a history
    /// id (`#12` or `12`), then a device of the history (a word with `:`), else a file. `history` is the database
    /// (`None`: history is off, so only files).
    pub fn parse(text: &str, history: Option<&Path>) -> Result<SideSpec> {
        if text.is_empty() {
            return Err(Error::usage(
                "compare: an empty side: give a saved --json document, a fio JSON file, a history id or a device of the history",
            ));
        }
        let path = Path::new(text);
        if text == "-" || path.exists() {
            return Ok(SideSpec::File(path.to_path_buf()));
        }
        if let Some(db) = history {
            let id = text.strip_prefix('#').unwrap_or(text);
            if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
                let id = id.parse::<i64>().map_err(|_| {
                    Error::usage(format!("compare: history id '{text}' is out of range"))
                })?;
                return Ok(SideSpec::History {
                    db: db.to_path_buf(),
                    id,
                });
            }
            // Device identities are `kind:…` (sim:sd-16g, mmc:…, usb:…, disk:…).
            if text.contains(':') && !text.ends_with(".json") {
                return Ok(SideSpec::Device {
                    db: db.to_path_buf(),
                    key: text.to_string(),
                });
            }
        }
        // A file that is not there: reading it says so.
        Ok(SideSpec::File(path.to_path_buf()))
    }

    /// How messages name this side.
    pub fn name(&self) -> String {
        match self {
            SideSpec::File(p) if p.as_os_str() == "-" => "standard input".into(),
            SideSpec::File(p) => p.display().to_string(),
            SideSpec::History { id, .. } => format!("history run #{id}"),
            SideSpec::Device { key, .. } => format!("device {key} (history)"),
        }
    }
}

/// One throughput figure of a side: its workload, the figure, and the data its interval
/// comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    pub workload: Workload,
    /// Bytes per second over the whole counting time (all runs).
    pub bw_bytes: f64,
    /// Per-second rates (bytes/s) in time order, runs one after another.
    pub per_second: Vec<f64>,
    /// Each run's figure (bytes/s) when the side repeated the test; empty otherwise.
    pub runs: Vec<f64>,
}

/// What one side measured.
#[derive(Debug, Clone)]
pub struct Side {
    pub spec: SideSpec,
    /// "bench", "io" or "fio".
    pub kind: String,
    /// The target the figures were measured on, as the side records it.
    pub target: String,
    pub measures: Vec<Measure>,
    /// The device and inode of a file side, to tell a run compared with itself.
    pub file_id: Option<(u64, u64)>,
    /// SHA-256 of the side's bytes: the same run under two names is the same run.
    pub digest: [u8; 32],
}

const WHAT: &str = "side of compare (a flashscope --json document or fio JSON)";

/// Read and interpret one side; every error names it (exit 2 for anything but a missing
/// or unreadable file).
pub fn load(spec: &SideSpec) -> Result<Side> {
    let path = match spec {
        SideSpec::File(path) => path,
        SideSpec::History { db, id } => return load_history_run(spec, db, *id),
        SideSpec::Device { db, key } => return load_device(spec, db, key),
    };
    let (bytes, file_id) = if path.as_os_str() == "-" {
        (input::read_stdin(WHAT, input::DOCUMENT_CAP_BYTES)?, None)
    } else {
        use std::io::Read;
        use std::os::unix::fs::MetadataExt;
        let (file, meta) = input::open_regular(path, WHAT, input::DOCUMENT_CAP_BYTES)?;
        let mut buf = Vec::with_capacity(meta.len() as usize);
        file.take(input::DOCUMENT_CAP_BYTES)
            .read_to_end(&mut buf)
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        (buf, Some((meta.dev(), meta.ino())))
    };
    let digest = digest_of(&bytes);
    let name = spec.name();
    let mut side = from_bytes(&name, bytes)?;
    side.spec = spec.clone();
    side.file_id = file_id;
    side.digest = digest;
    Ok(side)
}

/// The history database named by a side; a missing one says so (exit 2) instead of
/// creating it.
fn open_history(spec: &SideSpec, db: &Path) -> Result<crate::history::Store> {
    if !db.exists() {
        return Err(Error::usage(format!(
            "{}: no such file, and no history database at {} to look it up in (measuring commands create it; or give --history PATH)",
            spec_word(spec),
            db.display()
        )));
    }
    crate::history::Store::open_to_read(db)
}

/// The word the user gave for a history side.
fn spec_word(spec: &SideSpec) -> String {
    match spec {
        SideSpec::File(p) => p.display().to_string(),
        SideSpec::History { id, .. } => format!("#{id}"),
        SideSpec::Device { key, .. } => key.clone(),
    }
}

/// A side from one stored run; "the same run" is told by the stored document's bytes.
fn load_history_run(spec: &SideSpec, db: &Path, id: i64) -> Result<Side> {
    let store = open_history(spec, db)?;
    let doc = store.run(id)?;
    let name = spec.name();
    let digest = digest_of(doc.to_json().as_bytes());
    let mut side = from_document(&name, doc)?;
    side.spec = spec.clone();
    side.digest = digest;
    Ok(side)
}

/// A side from every stored bench run of a device: each run is one repetition (its
/// figure), the per-second samples are the runs' one after another.
fn load_device(spec: &SideSpec, db: &Path, key: &str) -> Result<Side> {
    let store = open_history(spec, db)?;
    let runs = store.runs_for_device(key)?;
    if runs.is_empty() {
        return Err(Error::usage(format!(
            "{key}: no such file, history id or device with stored runs in {}; `flashscope history list` shows the devices and ids",
            db.display()
        )));
    }
    let name = spec.name();
    let mut sides = Vec::new();
    let mut ids = Vec::new();
    let stored = runs.len();
    for (id, doc) in runs {
        if doc.command() == "bench" {
            sides.push(from_document(&format!("{name}, run #{id}"), doc)?);
            ids.push(id.to_string());
        }
    }
    if sides.is_empty() {
        return Err(Error::usage(format!(
            "{key}: the history has {stored} runs of this device but no bench run: run `flashscope bench {key} …` (or compare saved documents)"
        )));
    }
    let target = sides[0].target.clone();
    let mut side = empty_side("bench", target, merge_runs(sides));
    side.spec = spec.clone();
    side.digest = digest_of(format!("device {key}: runs {}", ids.join(",")).as_bytes());
    Ok(side)
}

/// The measures of several runs of one device as one side: per workload, each run's
/// figure (or the figures of its own `--runs`) is one repetition; the figure is their mean.
fn merge_runs(sides: Vec<Side>) -> Vec<Measure> {
    let mut out: Vec<Measure> = Vec::new();
    for side in sides {
        for m in side.measures {
            let reps = if m.runs.is_empty() {
                vec![m.bw_bytes]
            } else {
                m.runs.clone()
            };
            match out.iter_mut().find(|o| o.workload == m.workload) {
                Some(o) => {
                    o.runs.extend(reps);
                    o.per_second.extend(m.per_second);
                }
                None => out.push(Measure { runs: reps, ..m }),
            }
        }
    }
    for o in &mut out {
        o.bw_bytes = o.runs.iter().sum::<f64>() / o.runs.len() as f64;
        if o.runs.len() < 2 {
            o.runs.clear(); // one run: its interval comes from its seconds
        }
    }
    out
}

fn digest_of(bytes: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).into()
}

/// Interpret bytes as a flashscope document (it has `"schema"`) or fio's JSON (it has
/// `"fio version"` or `jobs`). fio may print notes before its JSON: they are skipped.
/// The bytes are let go once read, and the figures moved out of the document, so a side
/// near the size cap is held once, not three times.
pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<Side> {
    let bad = |why: String| Error::usage(format!("{name}: {why}"));
    // A flashscope document is read straight into its types (Document::from_json builds
    // no tree of it); only fio's free-form output is read as a tree, and fio's JSON is
    // kilobytes, so more than FIO_CAP_BYTES of it is refused rather than parsed.
    if Document::has_schema(&bytes) {
        let doc = Document::from_json(name, &bytes)?;
        drop(bytes);
        return checked(name, from_document(name, doc)?);
    }
    if bytes.len() > FIO_CAP_BYTES {
        return Err(bad(format!(
            "{} is more than a fio --output-format=json output holds ({} at most) and not a flashscope document (no \"schema\")",
            crate::vocab::units::format_bytes(bytes.len() as u64),
            crate::vocab::units::format_bytes(FIO_CAP_BYTES as u64)
        )));
    }
    // A fio document's strings (job names, errors) show their control characters too.
    let shown = crate::input::json_controls_shown(&bytes);
    let bytes = shown.as_deref().unwrap_or(&bytes);
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(first) => {
            // fio writes notes ("note: both iodepth >= 1 and synchronous I/O engine …")
            // on stdout before the JSON: read from the first line that opens an object.
            let text = String::from_utf8_lossy(bytes);
            let start = text.find("\n{").map(|i| i + 1);
            match start.and_then(|s| serde_json::from_str::<Value>(&text[s..]).ok()) {
                Some(v) => v,
                None if first.is_eof() => {
                    return Err(bad(format!("the JSON ends early (truncated?): {first}")))
                }
                None => {
                    return Err(bad(format!(
                        "not JSON ({first}): give a flashscope --json document or fio --output-format=json output"
                    )))
                }
            }
        }
    };
    if value.get("schema").is_some() {
        let doc = Document::from_json(name, bytes)?;
        return checked(name, from_document(name, doc)?);
    }
    if value.get("fio version").is_some() || value.get("jobs").is_some() {
        return checked(name, from_fio(name, &value)?);
    }
    Err(bad(
        "neither a flashscope --json document (no \"schema\") nor fio --output-format=json output (no \"fio version\" or \"jobs\")".into(),
    ))
}

/// The largest fio output read: fio's JSON for a job file is kilobytes (megabytes with
/// per-second logs).
const FIO_CAP_BYTES: usize = 32 << 20;

/// The fastest rate a side may state: 10 TB/s, far beyond any storage device today.
const MAX_RATE_BYTES_PER_S: f64 = 1e13;

/// Every figure of a side is a rate a device can have (finite, not negative, below
/// [`MAX_RATE_BYTES_PER_S`]): a hand-edited or damaged input is refused naming the figure,
/// instead of a negative speed or a 309-digit number in the comparison.
fn checked(name: &str, side: Side) -> Result<Side> {
    for m in &side.measures {
        let all = std::iter::once(&m.bw_bytes)
            .chain(&m.per_second)
            .chain(&m.runs);
        if let Some(v) = all
            .copied()
            .find(|v| !(0.0..=MAX_RATE_BYTES_PER_S).contains(v))
        {
            return Err(Error::usage(format!(
                "{name}: {} {} bandwidth {v} bytes/s is not a rate a device can have (0 to 1e13)",
                m.workload.rw.name(),
                m.workload.dir
            )));
        }
    }
    Ok(side)
}

fn empty_side(kind: &str, target: String, measures: Vec<Measure>) -> Side {
    Side {
        spec: SideSpec::File(PathBuf::new()),
        kind: kind.into(),
        target,
        measures,
        file_id: None,
        digest: [0; 32],
    }
}

/// A part of fio's JSON (free-form: fio's, not flashscope's) as the type it is read into.
fn typed<T: DeserializeOwned>(name: &str, what: &str, v: Option<&Value>) -> Result<T> {
    let v = v.ok_or_else(|| Error::usage(format!("{name}: the document has no {what}")))?;
    T::deserialize(v).map_err(|e| {
        Error::usage(format!(
            "{name}: its {what} are not in the shape this flashscope writes: {e}"
        ))
    })
}

/// The figures of a `bench` or `io` document.
pub fn from_document(name: &str, doc: Document) -> Result<Side> {
    let target = doc.target.name();
    let command = doc.command().to_string();
    let measures = match doc.body {
        Body::Bench(b) => bench_measures(name, b)?,
        Body::Io(b) => io_measures(&b, &doc.metrics),
        _ => {
            return Err(Error::usage(format!(
                "{name}: '{command}' documents have no throughput figures to compare: give bench or io documents (or fio JSON)"
            )));
        }
    };
    if measures.is_empty() {
        return Err(Error::usage(format!(
            "{name}: this {command} document holds no figure (did the run stop before its first test?)"
        )));
    }
    Ok(empty_side(&command, target, measures))
}

fn bench_measures(name: &str, b: BenchResult) -> Result<Vec<Measure>> {
    let runs: &[Vec<BenchFigure>] = b.runs.as_deref().unwrap_or_default();
    let mut out = Vec::new();
    for f in b.samples {
        let line = crate::workload::bench::LINES.iter().find_map(|l| {
            [Dir::Read, Dir::Write]
                .into_iter()
                .find(|&d| l.metric(d) == f.metric)
                .map(|d| (l, d))
        });
        let Some((line, dir)) = line else {
            return Err(Error::usage(format!(
                "{name}: bench figure '{}' is not one of bench's tests",
                f.metric
            )));
        };
        // Each run's figure for this test, when every run measured it.
        let per_run: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.iter().find(|g| g.metric == f.metric).map(|g| g.bw_bytes))
            .collect();
        out.push(Measure {
            workload: Workload {
                rw: line.rw(dir),
                dir: dir_name(dir).into(),
                bs: line.bs,
                bs_max: line.bs,
                iodepth: line.iodepth,
                numjobs: 1,
                direct: true,
            },
            bw_bytes: f.bw_bytes,
            per_second: f.per_second_bw,
            runs: if per_run.len() == runs.len() && per_run.len() >= 2 {
                per_run
            } else {
                Vec::new()
            },
        });
    }
    Ok(out)
}

fn dir_name(dir: Dir) -> &'static str {
    match dir {
        Dir::Read => "read",
        Dir::Write => "write",
    }
}

fn io_measures(b: &IoResult, metrics: &[Metric]) -> Vec<Measure> {
    let p = &b.parameters;
    let mut out = Vec::new();
    for dir in [Dir::Read, Dir::Write] {
        let bw = metrics.iter().find(|m| {
            m.name == "io_bandwidth_bytes_per_second"
                && m.labels.get("rw").map(String::as_str) == Some(dir_name(dir))
        });
        let Some(bw) = bw else { continue };
        out.push(Measure {
            workload: Workload {
                rw: p.rw,
                dir: dir_name(dir).into(),
                bs: p.bs_min,
                bs_max: p.bs_max,
                iodepth: p.iodepth,
                numjobs: p.numjobs,
                direct: p.direct,
            },
            bw_bytes: bw.value,
            per_second: b.samples.iter().filter_map(|s| s.rate(dir)).collect(),
            runs: Vec::new(),
        });
    }
    out
}

/// fio's sizes: powers of 1024 whatever the suffix (its default `kb_base=1024`).
fn fio_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| {
            t.strip_suffix('b')
                .filter(|s| s.ends_with(['k', 'm', 'g', 't']))
        })
        .unwrap_or(&t);
    crate::vocab::units::parse_size(t).ok()
}

/// One fio option as text, the job's own over the global one.
fn fio_option<'a>(job: &'a Value, global: &'a Value, key: &str) -> Option<&'a str> {
    job.get("job options")
        .and_then(|o| o.get(key))
        .or_else(|| global.get(key))
        .and_then(|v| v.as_str())
}

/// fio's JSON: each job's read and write figures keyed by its options (`rw`, `bs`,
/// `iodepth`, `numjobs`, `direct`; fio's defaults where absent: read, 4k, 1, 1, 0; the
/// queue depth of a synchronous engine, fio's default psync among them, is 1). Jobs
/// with the same workload in one group ran together (`numjobs` clones, or jobs fio
/// started at once): their figures add up, and `numjobs` counts them. The same workload
/// in several groups (one after another: `stonewall`) is repeated runs. fio's JSON keeps
/// no per-second rates; flashscope `io --json` writes its jobs in fio's shape with them
/// (`samples`).
pub fn from_fio(name: &str, v: &Value) -> Result<Side> {
    let bad = |why: String| Error::usage(format!("{name}: {why}"));
    let jobs = v
        .get("jobs")
        .and_then(|j| j.as_array())
        .ok_or_else(|| bad("fio JSON without a \"jobs\" array".into()))?;
    if jobs.is_empty() {
        return Err(bad(
            "fio JSON with no jobs (did fio run any? check its job file)".into(),
        ));
    }
    let empty = Value::Null;
    let global = v.get("global options").unwrap_or(&empty);
    // Per group and workload: the summed figure and how many jobs ran together.
    let mut groups: Vec<(u64, Measure, u32)> = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let opt = |k: &str| fio_option(job, global, k);
        let jobname = job
            .get("jobname")
            .and_then(|n| n.as_str())
            .unwrap_or("")
            .to_string();
        let what = |k: &str, t: &str| {
            bad(format!(
                "job {} ('{jobname}'): {k} '{t}' is not understood",
                i + 1
            ))
        };
        let rw_text = opt("rw").or_else(|| opt("readwrite")).unwrap_or("read");
        let rw = RwMode::parse(rw_text).map_err(|_| what("rw", rw_text))?;
        let bs_text = opt("bs").or_else(|| opt("blocksize")).unwrap_or("4k");
        // "bs=4k,64k" gives reads and writes their own sizes.
        let (bs_read, bs_write) = match bs_text.split_once(',') {
            Some((r, w)) => (fio_size(r), fio_size(if w.is_empty() { r } else { w })),
            None => (fio_size(bs_text), fio_size(bs_text)),
        };
        let num = |k: &str, default: u32| -> Result<u32> {
            match opt(k) {
                None => Ok(default),
                Some(t) => t.trim().parse().map_err(|_| what(k, t)),
            }
        };
        // A synchronous engine (fio's default, psync) has one I/O in flight whatever
        // iodepth says: fio caps it at 1 ("queue depth will be capped at 1").
        let engine = opt("ioengine").unwrap_or("psync");
        let synchronous = ["sync", "psync", "vsync", "pvsync", "pvsync2"].contains(&engine);
        let iodepth = if synchronous { 1 } else { num("iodepth", 1)? };
        let numjobs = num("numjobs", 1)?;
        let direct = match opt("direct").map(str::trim) {
            None | Some("0") | Some("false") => false,
            Some("1") | Some("true") => true,
            Some(t) => return Err(what("direct", t)),
        };
        let group = job.get("groupid").and_then(|g| g.as_u64()).unwrap_or(0);
        let samples: Vec<SecondSample> = match job.get("samples") {
            Some(s) => typed(name, "jobs' samples", Some(s))?,
            None => Vec::new(),
        };
        for (dir, bs) in [(Dir::Read, bs_read), (Dir::Write, bs_write)] {
            let d = dir_name(dir);
            let Some(section) = job.get(d) else { continue };
            let io_bytes = section
                .get("io_bytes")
                .and_then(|b| b.as_u64())
                .unwrap_or(0);
            if io_bytes == 0 {
                continue;
            }
            let bs = bs.ok_or_else(|| what("bs", bs_text))?;
            let bw = section
                .get("bw_bytes")
                .and_then(|b| b.as_f64())
                .ok_or_else(|| bad(format!("job {} ('{jobname}'): no {d}.bw_bytes", i + 1)))?;
            let per_second: Vec<f64> = samples.iter().filter_map(|s| s.rate(dir)).collect();
            let workload = Workload {
                rw,
                dir: d.into(),
                bs,
                bs_max: bs,
                iodepth,
                numjobs,
                direct,
            };
            match groups
                .iter_mut()
                .find(|g| g.0 == group && g.1.workload == workload)
            {
                // Jobs that ran together: the rates add up, second by second.
                Some((_, m, n)) => {
                    m.bw_bytes += bw;
                    let len = m.per_second.len().min(per_second.len());
                    m.per_second.truncate(len);
                    for (a, b) in m.per_second.iter_mut().zip(&per_second) {
                        *a += b;
                    }
                    *n += 1;
                }
                None => groups.push((
                    group,
                    Measure {
                        workload,
                        bw_bytes: bw,
                        per_second,
                        runs: Vec::new(),
                    },
                    1,
                )),
            }
        }
    }
    // Jobs with the same workload (one after another: stonewall) are runs of it.
    let mut measures: Vec<Measure> = Vec::new();
    for (_, mut m, together) in groups {
        m.workload.numjobs = m.workload.numjobs.max(together);
        match measures.iter_mut().find(|x| x.workload == m.workload) {
            Some(x) => {
                if x.runs.is_empty() {
                    x.runs.push(x.bw_bytes);
                }
                x.runs.push(m.bw_bytes);
                x.bw_bytes = x.runs.iter().sum::<f64>() / x.runs.len() as f64;
                x.per_second.extend(m.per_second);
            }
            None => measures.push(m),
        }
    }
    if measures.is_empty() {
        return Err(bad(
            "fio JSON whose jobs moved no data (every read and write io_bytes is 0)".into(),
        ));
    }
    let target = fio_option(&jobs[0], global, "filename")
        .unwrap_or("(fio target)")
        .to_string();
    Ok(empty_side("fio", target, measures))
}

/// True when two sides are the same run: the same file, or the same bytes.
pub fn same_run(a: &Side, b: &Side) -> bool {
    (a.file_id.is_some() && a.file_id == b.file_id) || a.digest == b.digest
}
