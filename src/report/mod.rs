//! Result types (schema "flashscope/1") and their text renderings. Output code never measures.

pub mod charts;
pub mod export;
pub(crate) mod fields;
pub mod html;
pub mod output_file;
pub mod progress;
pub mod results;
pub mod rows;
#[cfg(test)]
pub(crate) mod schema;
pub mod svg;
pub mod table;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;

use crate::device::TargetInfo;
use crate::vocab::{Check, Inference, Metric, Warning};

pub use results::{Body, Target, Timing, WriteRecord};

/// The fields every command's document has, in the order they are written; the
/// command's own fields follow by name.
pub const COMMON_FIELDS: &[&str] = &[
    "schema",
    "command",
    "started_at",
    "target",
    "parameters",
    "samples",
    "inferences",
    "bytes_written",
    "elapsed_ns",
    "warnings",
    "checks",
    "metrics",
    "timing",
];

/// The schema name every JSON document carries.
pub const SCHEMA: &str = "flashscope/1";

/// When this run started, RFC 3339 UTC, read from the real clock once: at the first call,
/// which `cli::run` makes before anything is measured. `None` when the clock is set before
/// 1970 (no true time to give).
pub fn run_started_at() -> Option<&'static str> {
    static STARTED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    STARTED
        .get_or_init(|| {
            let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            since
                .ok()
                .map(|d| crate::vocab::units::format_rfc3339_utc(d.as_secs()))
        })
        .as_deref()
}

/// One command's result document (docs/reference.md, "JSON output"): the fields every
/// command has, its [`Target`] and its own fields ([`Body`], tagged by `command`).
///
/// The JSON is schema `flashscope/1` with the fields in this order: `schema`, `command`,
/// `target`, `parameters`, `samples`, `inferences`, `bytes_written`, `elapsed_ns`,
/// `warnings`, `checks`, `metrics`, then the command's other fields by name.
///
/// Read with [`Document::from_json`]: the top-level fields are split as slices of the
/// text and each is read straight into its type, so no tree of the document is built.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub schema: String,
    /// When the run started, RFC 3339 UTC from the real clock (e.g. `2026-11-25T16:40:00Z`):
    /// the same for every document of one run ([`run_started_at`]). Absent in documents
    /// saved before it existed.
    pub started_at: Option<String>,
    pub target: Target,
    pub inferences: BTreeMap<String, Inference>,
    pub bytes_written: u64,
    pub elapsed_ns: u64,
    pub warnings: Vec<Warning>,
    /// The pass/fail checks the command made (`--expect`, the fake verdict, verify, the
    /// classes, health): what JUnit and LAVA report and what makes exit code 3.
    pub checks: Vec<Check>,
    /// The figures worth watching over time (Prometheus textfile, history), typed by the
    /// command that measured them; device labels are added at export from `target`.
    pub metrics: Vec<Metric>,
    /// The command's own fields: `command`, `parameters`, `samples` and its extras (every
    /// top-level field that is not one of the above; `restore`'s own `journal`, the file
    /// it restored from, reaches the body too).
    pub body: Body,
    /// A writing test's preserve-mode record (`journal`, `preserve` and `time_budget` at
    /// the top level; present when `preserve` is).
    pub session: Option<WriteRecord>,
    /// The run's plan against the device time it took (measuring commands; absent in
    /// documents saved before it existed).
    pub timing: Option<Timing>,
}

impl Serialize for Document {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        // The body's and the preserve record's fields go to the top level, each written
        // straight from its type: `command`, `parameters` and `samples` in their places,
        // the others after the common fields in the order of their names.
        let body = fields::names(&self.body).map_err(S::Error::custom)?;
        let session = match &self.session {
            Some(w) => fields::names(w).map_err(S::Error::custom)?,
            None => Vec::new(),
        };
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("schema", &self.schema)?;
        fields::write_one(&self.body, "command", &mut m)?;
        if let Some(t) = &self.started_at {
            m.serialize_entry("started_at", t)?;
        }
        m.serialize_entry("target", &fields::AsValue(&self.target))?;
        for (name, empty) in [("parameters", "{}"), ("samples", "[]")] {
            if body.contains(&name) {
                fields::write_one(&self.body, name, &mut m)?;
            } else {
                let empty: serde_json::Value =
                    serde_json::from_str(empty).map_err(S::Error::custom)?;
                m.serialize_entry(name, &empty)?;
            }
        }
        m.serialize_entry("inferences", &self.inferences)?;
        m.serialize_entry("bytes_written", &self.bytes_written)?;
        m.serialize_entry("elapsed_ns", &self.elapsed_ns)?;
        m.serialize_entry("warnings", &self.warnings)?;
        if !self.checks.is_empty() {
            m.serialize_entry("checks", &self.checks)?;
        }
        if !self.metrics.is_empty() {
            m.serialize_entry("metrics", &self.metrics)?;
        }
        if let Some(t) = &self.timing {
            m.serialize_entry("timing", t)?;
        }
        let mut rest: Vec<(&str, bool)> = body
            .iter()
            .filter(|n| !BODY_FIELDS.contains(n))
            .map(|n| (*n, true))
            .filter(|(n, _)| !session.contains(n))
            .chain(session.iter().map(|n| (*n, false)))
            .collect();
        rest.sort();
        for (name, in_body) in rest {
            match (&self.session, in_body) {
                (Some(w), false) => fields::write_one(w, name, &mut m)?,
                _ => fields::write_one(&self.body, name, &mut m)?,
            }
        }
        m.end()
    }
}

/// The common fields that come from the command's body; every other common field is the
/// document's own.
const BODY_FIELDS: &[&str] = &["command", "parameters", "samples"];

/// Whether a top-level field is the document's own rather than its command's.
fn is_own_field(key: &str) -> bool {
    COMMON_FIELDS.contains(&key) && !BODY_FIELDS.contains(&key)
}

/// The most top-level fields a document may have: every command has fewer than 30.
const MAX_FIELDS: usize = 256;

/// A JSON object's top-level fields in order, each value a slice of the text (no tree).
struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Fields<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a flashscope document (a JSON object)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                use serde::de::Error as _;
                let mut fields: Vec<(String, &'de RawValue)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
                    if fields.iter().any(|(x, _)| *x == k) {
                        return Err(A::Error::custom(format!("duplicate field `{k}`")));
                    }
                    if fields.len() == MAX_FIELDS {
                        return Err(A::Error::custom(format!(
                            "more than {MAX_FIELDS} top-level fields"
                        )));
                    }
                    fields.push((k, v));
                }
                Ok(Fields(fields))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// A document nested in another (`auto`'s steps) is read the way [`Document::from_json`]
/// reads one, after its checks.
impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let fields = Fields::deserialize(d)?;
        Document::from_fields(fields.0).map_err(D::Error::custom)
    }
}

impl Document {
    /// A document of `body` on `target`, with nothing measured yet.
    pub fn new(target: Target, body: Body) -> Self {
        Document {
            schema: SCHEMA.to_string(),
            started_at: run_started_at().map(str::to_string),
            target,
            inferences: BTreeMap::new(),
            bytes_written: 0,
            elapsed_ns: 0,
            warnings: Vec::new(),
            checks: Vec::new(),
            metrics: Vec::new(),
            session: None,
            timing: None,
            body,
        }
    }

    /// A document of `body` on a device, file or simulated card.
    pub fn for_target(info: &TargetInfo, body: Body) -> Self {
        Document::new(Target::from(info), body)
    }

    /// The subcommand that made it (`align`, `fs seq`, ...).
    pub fn command(&self) -> &'static str {
        self.body.command()
    }

    /// The device, file or simulated card the document is about: the exporters' device,
    /// model and serial labels. `None` for targets that are not one (a directory's
    /// filesystem, a datasheet, logs); for `health`, the device its wear record names.
    pub fn target_info(&self) -> Option<TargetInfo> {
        match (&self.target, &self.body) {
            (Target::Device(d), _) => Some(d.info.clone()),
            (Target::Health(_), Body::Health(h)) => Some(crate::health::target_info(&h.health)),
            _ => None,
        }
    }

    /// Read a saved `--json` document; the error names `name` and says what is wrong (not
    /// JSON, truncated, another schema, a command flashscope does not know) with exit code 2.
    /// Its strings show the control characters they held (see
    /// [`crate::input::json_controls_shown`]): whatever prints them prints no line break or
    /// escape sequence someone put in the file.
    pub fn from_json(name: &str, bytes: &[u8]) -> crate::Result<Document> {
        let shown = crate::input::json_controls_shown(bytes);
        let bytes = shown.as_deref().unwrap_or(bytes);
        let bad = |why: String| crate::Error::usage(format!("{name}: {why}"));
        // Counted on the text before anything is read into memory (issue 44.9).
        let values = crate::input::json_list_values(bytes);
        if values > crate::input::DOCUMENT_MAX_VALUES {
            return Err(bad(format!(
                "{values} values in its lists (per-second samples and the like), more than the {} a document may hold",
                crate::input::DOCUMENT_MAX_VALUES
            )));
        }
        let fields = match serde_json::from_slice::<Fields>(bytes) {
            Ok(f) => f.0,
            Err(e) if e.is_eof() => {
                return Err(bad(format!("the JSON ends early (truncated?): {e}")))
            }
            Err(e) if e.is_syntax() => return Err(bad(format!("not a JSON document: {e}"))),
            // Valid JSON that is not an object (or has a field twice).
            Err(_) => Vec::new(),
        };
        let raw = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
        match raw("schema").and_then(|v| serde_json::from_str::<String>(v.get()).ok()) {
            Some(s) if s == SCHEMA => {}
            Some(other) => {
                return Err(bad(format!(
                    "schema '{}', not {SCHEMA}: only flashscope's own --json documents can be read",
                    crate::input::printable(&other)
                )))
            }
            None => {
                return Err(bad(format!(
                    "no \"schema\": \"{SCHEMA}\" field: only flashscope's own --json documents can be read"
                )))
            }
        }
        match raw("command") {
            Some(v) => match serde_json::from_str::<String>(v.get()) {
                Ok(c) if Body::COMMANDS.contains(&c.as_str()) => {}
                Ok(c) => {
                    return Err(bad(format!(
                        "command '{}' is not one flashscope knows ({})",
                        crate::input::printable(&c),
                        Body::COMMANDS.join(", ")
                    )))
                }
                Err(_) => {
                    let text: String = v.get().chars().take(60).collect();
                    return Err(bad(format!(
                        "a {SCHEMA} document with a field out of shape: \"command\" is {}, not a command name",
                        crate::input::printable(&text)
                    )));
                }
            },
            None => {
                return Err(bad(format!(
                    "a {SCHEMA} document with a field out of shape: no \"command\""
                )))
            }
        }
        if let Some(jobs) = raw("jobs").filter(|j| jobs_over_cap(j)) {
            return Err(bad(jobs_refusal(jobs)));
        }
        Document::from_fields(fields).map_err(|e| {
            bad(format!(
                "a {SCHEMA} document with a field out of shape: {e}"
            ))
        })
    }

    /// Whether `bytes` are a JSON object with a `"schema"` field (a flashscope document,
    /// as opposed to another tool's JSON), read without building a tree of it.
    pub fn has_schema(bytes: &[u8]) -> bool {
        serde_json::from_slice::<Fields>(bytes)
            .is_ok_and(|f| f.0.iter().any(|(k, _)| k == "schema"))
    }

    /// A document from its top-level fields, each a slice of the document's text read
    /// once into its type. Every field that is not one of the document's own goes to the
    /// command's body; the preserve-mode record's fields go to `session` as well.
    fn from_fields(fields: Vec<(String, &RawValue)>) -> serde_json::Result<Document> {
        use serde::de::Error as _;
        fn field<'a, T: Deserialize<'a>>(
            fields: &[(String, &'a RawValue)],
            name: &'static str,
        ) -> serde_json::Result<Option<T>> {
            match fields.iter().find(|(k, _)| k == name) {
                None => Ok(None),
                Some((_, v)) => serde_json::from_str(v.get())
                    .map(Some)
                    .map_err(|e| serde_json::Error::custom(format!("\"{name}\": {e}"))),
            }
        }
        fn required<'a, T: Deserialize<'a>>(
            fields: &[(String, &'a RawValue)],
            name: &'static str,
        ) -> serde_json::Result<T> {
            field(fields, name)?.ok_or_else(|| serde_json::Error::missing_field(name))
        }
        let command: String = required(&fields, "command")?;
        // A nested document's (auto's steps) free-form jobs, capped as a document's are.
        if let Some((_, jobs)) = fields.iter().find(|(k, v)| k == "jobs" && jobs_over_cap(v)) {
            return Err(serde_json::Error::custom(jobs_refusal(jobs)));
        }
        let rest: Vec<(String, &RawValue)> = fields
            .iter()
            .filter(|(k, _)| !is_own_field(k))
            .cloned()
            .collect();
        let session = if fields.iter().any(|(k, _)| k == "preserve") {
            let record = fields
                .iter()
                .filter(|(k, _)| WriteRecord::FIELDS.contains(&k.as_str()))
                .map(|(k, v)| (k.as_str(), *v));
            Some(WriteRecord::deserialize(
                serde::de::value::MapDeserializer::<_, serde_json::Error>::new(record),
            )?)
        } else {
            None
        };
        Ok(Document {
            schema: required(&fields, "schema")?,
            started_at: field(&fields, "started_at")?,
            target: required(&fields, "target")?,
            inferences: required(&fields, "inferences")?,
            bytes_written: required(&fields, "bytes_written")?,
            elapsed_ns: required(&fields, "elapsed_ns")?,
            warnings: required(&fields, "warnings")?,
            checks: field(&fields, "checks")?.unwrap_or_default(),
            metrics: field(&fields, "metrics")?.unwrap_or_default(),
            body: Body::from_fields(&command, &rest)?,
            session,
            timing: field(&fields, "timing")?,
        })
    }

    /// Pretty JSON, one document.
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        self.to_text(true)
            .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Compact JSON (no white space between tokens), one document: the run history's
    /// stored form.
    pub fn to_compact_json(&self) -> serde_json::Result<String> {
        self.to_text(false)
    }

    fn to_text(&self, pretty: bool) -> serde_json::Result<String> {
        let mut out = Vec::with_capacity(4 << 10);
        fields::write_document(self, &mut out, pretty)?;
        // serde_json writes only UTF-8.
        String::from_utf8(out).map_err(serde::ser::Error::custom)
    }

    /// [`Document::to_json`]'s bytes and a line feed, written as they are made: a document
    /// of a large log is never held as one string.
    pub fn write_json(&self, w: impl std::io::Write) -> std::io::Result<()> {
        use std::io::Write;
        let mut w = std::io::BufWriter::with_capacity(64 << 10, w);
        fields::write_document(self, &mut w, true)?;
        w.write_all(b"\n")?;
        w.flush()
    }
}

/// Whether a document's free-form `jobs` (fio's JSON, read as a tree about 16 times its
/// text) are longer than [`crate::input::DOCUMENT_JOBS_CAP_BYTES`] (issue 44.9).
fn jobs_over_cap(jobs: &RawValue) -> bool {
    jobs.get().len() as u64 > crate::input::DOCUMENT_JOBS_CAP_BYTES
}

/// The refusal of `jobs` over the cap: their size and the cap.
fn jobs_refusal(jobs: &RawValue) -> String {
    format!(
        "its \"jobs\" (fio's JSON) take {} bytes, more than the {} a document may hold",
        jobs.get().len(),
        crate::input::DOCUMENT_JOBS_CAP_BYTES
    )
}

/// Read and check each file (`-`: standard input) as a flashscope/1 document, each at
/// most [`crate::input::DOCUMENT_CAP_BYTES`]; errors name the file.
pub fn load_documents(files: &[String]) -> crate::Result<Vec<Document>> {
    use crate::input;
    let what = "flashscope JSON document";
    files
        .iter()
        .map(|f| {
            let bytes = if f == "-" {
                input::read_stdin(what, input::DOCUMENT_CAP_BYTES)?
            } else {
                input::read_regular(std::path::Path::new(f), what, input::DOCUMENT_CAP_BYTES)?
            };
            let name = if f == "-" { "standard input" } else { f };
            Document::from_json(name, &bytes)
        })
        .collect()
}

/// A line for text output: the test's writes and the preserve-mode result (the document's
/// `preserve` and `journal` fields, as `session::WriteSession::fill` sets them).
pub fn wear_line(doc: &Document) -> String {
    use crate::vocab::units::format_bytes;
    let Some(w) = &doc.session else {
        return String::new();
    };
    let p = &w.preserve;
    match &w.journal {
        None if p.mode == "simulated" => format!(
            "wrote {} to the simulated card (nothing to restore)\n",
            format_bytes(p.test_bytes_written)
        ),
        Some(journal) if !p.unrestored.is_empty() => {
            let ranges: Vec<(u64, u64)> = p.unrestored.iter().map(|r| (r.offset, r.length)).collect();
            let bytes: u64 = ranges.iter().map(|r| r.1).sum();
            let journal = crate::input::printable(journal);
            format!(
                "wrote {} for the test and {} to restore {} saved regions; not put back: {} ({}) read back different from the journal after the restore. The journal is kept at {journal}: `flashscope restore {journal}` writes them again; remove it once you no longer need it\n",
                format_bytes(p.test_bytes_written),
                format_bytes(p.restore_bytes_written),
                p.regions_restored,
                format_bytes(bytes),
                crate::journal::describe_unrestored(&ranges)
            )
        }
        Some(_) => format!(
            "wrote {} for the test and {} to restore {} saved regions (verified); journal removed\n",
            format_bytes(p.test_bytes_written),
            format_bytes(p.restore_bytes_written),
            p.regions_restored
        ),
        None => format!(
            "wrote {} (destructive: nothing restored)\n",
            format_bytes(p.test_bytes_written)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of every object in `raw`, in the order they are written, each list
    /// prefixed with its path.
    fn key_orders(raw: &RawValue, path: &str, out: &mut Vec<(String, Vec<String>)>) {
        if let Ok(f) = serde_json::from_str::<Fields>(raw.get()) {
            out.push((
                path.to_string(),
                f.0.iter().map(|(k, _)| k.clone()).collect(),
            ));
            for (k, v) in &f.0 {
                key_orders(v, &format!("{path}.{k}"), out);
            }
        } else if let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(raw.get()) {
            for (i, v) in items.iter().enumerate() {
                key_orders(v, &format!("{path}[{i}]"), out);
            }
        }
    }

    #[test]
    fn a_document_is_written_in_its_field_order_with_nested_keys_by_name_and_reads_back() {
        use crate::capacity::verify::{Phase, ThroughputSample};
        let sample = |phase, offset| ThroughputSample {
            phase,
            offset,
            bytes: 4096,
            ns: 1000,
            bytes_per_s: 4.096e9,
        };
        let mut d = Document::new(
            Target::Spec(results::SpecTarget {
                spec: "sim:sd-16g".into(),
            }),
            Body::Verify(results::VerifyResult {
                samples: vec![sample(Phase::Write, 0), sample(Phase::Read, 4096)],
                checked_bytes: 8192,
                files_kept: Some(true),
                ..Default::default()
            }),
        );
        d.session = Some(WriteRecord {
            journal: Some("/tmp/j".into()),
            ..Default::default()
        });
        let text = d.to_json();
        let raw: &RawValue = serde_json::from_str(&text).unwrap();
        let mut orders = Vec::new();
        key_orders(raw, "", &mut orders);
        let (_, top) = &orders[0];
        let common: Vec<&str> = COMMON_FIELDS
            .iter()
            .copied()
            .filter(|k| {
                !matches!(*k, "started_at" | "checks" | "metrics" | "timing")
                    || top.iter().any(|t| t == k)
            })
            .collect();
        assert_eq!(top[..common.len()], common[..], "{text}");
        let rest = &top[common.len()..];
        assert!(
            rest.windows(2).all(|w| w[0] < w[1]),
            "the rest by name: {rest:?}"
        );
        assert!(rest.iter().any(|k| k == "journal") && rest.iter().any(|k| k == "files_kept"));
        for (path, keys) in &orders[1..] {
            if path.starts_with(".target")
                || path.starts_with(".samples")
                || path.starts_with(".parameters")
                || path.starts_with(".preserve")
            {
                assert!(keys.windows(2).all(|w| w[0] < w[1]), "{path}: {keys:?}");
            }
        }
        assert!(orders.iter().any(|(p, _)| p == ".samples[1]"));
        let back = Document::from_json("d.json", text.as_bytes()).unwrap();
        assert_eq!(back, d);
        assert_eq!(back.to_json(), text);
    }

    #[test]
    fn document_has_the_contract_fields() {
        let mut d = Document::new(
            Target::Spec(results::SpecTarget {
                spec: "sim:sd-16g".into(),
            }),
            Body::Info(Default::default()),
        );
        d.session = Some(WriteRecord {
            journal: Some("/tmp/j".into()),
            ..Default::default()
        });
        let v: serde_json::Value = serde_json::from_str(&d.to_json()).unwrap();
        for key in [
            "schema",
            "command",
            "target",
            "parameters",
            "samples",
            "inferences",
            "bytes_written",
            "elapsed_ns",
            "warnings",
            "journal",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["schema"], "flashscope/1");
        assert_eq!(v["parameters"], serde_json::json!({}));
        assert_eq!(v["samples"], serde_json::json!([]));
        let text = d.to_json();
        let at = |k: &str| text.find(&format!("\"{k}\":")).unwrap();
        assert!(at("schema") < at("command") && at("command") < at("target"));
        assert!(at("warnings") < at("journal"), "{text}");
        // Read back into the same types, and written out the same.
        let back = Document::from_json("d.json", d.to_json().as_bytes()).unwrap();
        assert_eq!(back, d);
        assert_eq!(back.to_json(), d.to_json());
        // The one serializer (fields::write_document) writes, byte for byte, what
        // serde_json's own pretty and compact writers write.
        assert_eq!(d.to_json(), serde_json::to_string_pretty(&d).unwrap());
        assert_eq!(
            d.to_compact_json().unwrap(),
            serde_json::to_string(&d).unwrap()
        );
        let mut streamed = Vec::new();
        d.write_json(&mut streamed).unwrap();
        assert_eq!(streamed, format!("{}\n", d.to_json()).into_bytes());
    }

    #[test]
    fn started_at_is_rfc3339_utc_and_optional_on_read_back() {
        let d = Document::new(Target::None, Body::Info(Default::default()));
        let t = d.started_at.clone().expect("the clock is after 1970");
        // 2026-11-25T16:40:00Z: the shape, and the same instant for every document.
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z') && &t[10..11] == "T", "{t}");
        assert_eq!(
            Document::new(Target::None, Body::SimList(Default::default())).started_at,
            Some(t)
        );
        let mut old: serde_json::Value = serde_json::from_str(&d.to_json()).unwrap();
        old.as_object_mut().unwrap().remove("started_at");
        let back = Document::from_json("old.json", old.to_string().as_bytes()).unwrap();
        assert_eq!(back.started_at, None);
        let again = Document::from_json("new.json", d.to_json().as_bytes()).unwrap();
        assert_eq!(again.started_at, d.started_at);
        // Where main's documents have it: after command, before target.
        let text = d.to_json();
        let at = |k: &str| text.find(&format!("\"{k}\":")).unwrap();
        assert!(at("command") < at("started_at") && at("started_at") < at("target"));
        // Warnings read back as written, a kind from a newer version too.
        old["warnings"] = serde_json::json!([{"kind": "thermal_throttling", "message": "hot"}]);
        let back = Document::from_json("newer.json", old.to_string().as_bytes()).unwrap();
        assert_eq!(back.warnings[0].kind(), "thermal_throttling");
        assert_eq!(
            back.to_json(),
            Document::from_json("x", back.to_json().as_bytes())
                .unwrap()
                .to_json()
        );
    }
}
