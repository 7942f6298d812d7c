//! The JSON Schema (draft 2020-12) of the `flashscope/1` document, generated from the
//! result types and kept in `schema/flashscope-1.schema.json` (issue 46.5).
//!
//! Built only in the library's unit tests: every `Serialize` type of the document carries
//! `#[cfg_attr(test, derive(schemars::JsonSchema))]` (schemars reads its serde attributes:
//! renames, `skip_serializing_if`, `flatten`, tagged and untagged enums), so the release
//! binary holds none of it. [`super::Document`] is serialized by hand (the common fields,
//! then the command's and the preserve record's at the top level), so its schema is
//! composed here from its parts' schemas:
//!
//! - the envelope: the fields every document has, typed, with `schema` the constant
//!   `flashscope/1` and `command` one of [`super::Body::COMMANDS`];
//! - per command (an `if`/`then` on `command`): that command's own fields, with
//!   `parameters` `{}` and `samples` `[]` when its body has none (as the document writes
//!   them);
//! - `unevaluatedProperties: false` at the top, and `additionalProperties: false` on every
//!   struct's object: a renamed or an extra field is refused, at any depth.
//!
//! Where the document holds free-form JSON the schema says only its JSON type: fio's
//! `jobs` (objects, kept as fio writes them), `auto`'s step `parameters` (each step's own
//! command's parameters, an object) and an inference's `value` (a number, a string, a boolean
//! — `program`'s `write_pattern_sensitive`, `slc`'s `slc_cache_recovered` — a list or null).
//!
//! ```text
//! FLASHSCOPE_UPDATE_SCHEMA=1 cargo test --lib report::schema
//! ```
//! rewrites the file after an intended change of the document.

use serde_json::{json, Map, Value};

use super::{Body, Target, WriteRecord};
use crate::vocab::{Check, Inference, Metric, Warning};

/// Set (to anything but empty or 0) to write the schema file from today's types.
const UPDATE: &str = "FLASHSCOPE_UPDATE_SCHEMA";

/// The file, from the crate's root.
const FILE: &str = "schema/flashscope-1.schema.json";

/// Every part of a document, so that one generator gives all their definitions.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
struct Parts {
    target: Target,
    inferences: std::collections::BTreeMap<String, Inference>,
    warnings: Vec<Warning>,
    checks: Vec<Check>,
    metrics: Vec<Metric>,
    timing: super::Timing,
    session: WriteRecord,
    body: Body,
}

/// `jobs`: fio's `--output-format=json` jobs, objects kept as fio's JSON (free-form by
/// design: tools that read fio's output read them).
pub(crate) fn fio_jobs(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "array", "items": { "type": "object" } })
}

/// `auto`'s record of a step's `parameters`: the step's own command's parameters.
pub(crate) fn json_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "object" })
}

/// The schema of a `flashscope/1` document, as the file holds it.
pub fn document() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().for_serialize();
    let root = settings.into_generator().into_root_schema_for::<Parts>();
    let mut root = root.to_value();
    let mut defs = match root.get_mut("$defs").map(Value::take) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let parts = root["properties"].take();
    // Inline a `$ref` beside `properties` (an internally tagged variant: its tag beside
    // its struct), so that each object can be closed by itself.
    let names: Vec<String> = defs.keys().cloned().collect();
    for name in &names {
        let mut def = defs[name].take();
        inline(&mut def, &defs);
        defs[name] = def;
    }
    for def in defs.values_mut() {
        close(def);
    }
    if let Some(inference) = defs.get_mut("Inference") {
        // `value` is null exactly when the status is inconclusive.
        inference["if"] = json!({ "properties": { "status": { "const": "inconclusive" } } });
        inference["then"] = json!({ "properties": { "value": { "type": "null" } } });
        inference["else"] = json!({ "properties": { "value": { "not": { "type": "null" } } } });
    }
    let body = match parts["body"]["$ref"].as_str() {
        Some(r) => defs[r.trim_start_matches("#/$defs/")].clone(),
        None => parts["body"].clone(),
    };
    let defs_value = Value::Object(defs.clone());
    let session = flat(&parts["session"], &defs_value);
    let u64 = json!({ "type": "integer", "format": "uint64", "minimum": 0 });
    let mut envelope = Map::new();
    envelope.insert("schema".into(), json!({ "const": super::SCHEMA }));
    envelope.insert("command".into(), json!({ "enum": Body::COMMANDS }));
    envelope.insert(
        "started_at".into(),
        json!({ "type": "string", "description": "When the run started, RFC 3339 UTC." }),
    );
    envelope.insert("target".into(), parts["target"].clone());
    envelope.insert("parameters".into(), json!({ "type": "object" }));
    envelope.insert("samples".into(), json!({ "type": "array" }));
    for name in ["inferences", "warnings", "checks", "metrics", "timing"] {
        envelope.insert(name.into(), parts[name].clone());
    }
    envelope.insert("bytes_written".into(), u64.clone());
    envelope.insert("elapsed_ns".into(), u64);
    for (name, schema) in &session.0 {
        envelope.insert(name.clone(), schema.clone());
    }
    let required: Vec<&str> = super::COMMON_FIELDS
        .iter()
        .copied()
        .filter(|f| !["started_at", "checks", "metrics", "timing"].contains(f))
        .collect();
    let mut by_command = Vec::new();
    let variants = body["oneOf"]
        .as_array()
        .or_else(|| body["anyOf"].as_array())
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        variants.len(),
        Body::COMMANDS.len(),
        "one schema per command"
    );
    for variant in &variants {
        let (mut props, mut req) = flat(variant, &defs_value);
        let command = props
            .get("command")
            .and_then(|c| c.get("const"))
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("a command's schema without its `command`: {variant}"))
            .to_string();
        if !props.contains_key("parameters") {
            props.insert(
                "parameters".into(),
                json!({ "type": "object", "maxProperties": 0 }),
            );
            req.push("parameters".into());
        }
        if !props.contains_key("samples") {
            props.insert("samples".into(), json!({ "type": "array", "maxItems": 0 }));
            req.push("samples".into());
        }
        props.remove("command");
        req.retain(|r| r != "command");
        req.sort();
        req.dedup();
        by_command.push(json!({
            "if": { "properties": { "command": { "const": command } } },
            "then": { "properties": props, "required": req },
        }));
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "flashscope/1",
        "description": "One flashscope --json document (docs/reference.md, \"JSON output\"). Generated from the result types by `FLASHSCOPE_UPDATE_SCHEMA=1 cargo test --lib report::schema`; do not edit.",
        "type": "object",
        "properties": envelope,
        "required": required,
        // The preserve record's fields come together.
        "dependentRequired": { "preserve": ["journal"], "time_budget": ["preserve"] },
        "allOf": by_command,
        "unevaluatedProperties": false,
        "$defs": defs,
    })
}

/// An object schema's properties and required names, through `$ref` and `allOf` (a
/// flattened struct's, a tagged variant's). Anything else (a choice) is a bug here.
fn flat(schema: &Value, defs: &Value) -> (Map<String, Value>, Vec<String>) {
    let mut props = Map::new();
    let mut req = Vec::new();
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("a local $ref");
        let (p, q) = flat(&defs[name], defs);
        props.extend(p);
        req.extend(q);
    }
    for part in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (p, q) = flat(part, defs);
        props.extend(p);
        req.extend(q);
    }
    assert!(
        schema.get("oneOf").is_none() && schema.get("anyOf").is_none(),
        "a choice where an object's fields were expected: {schema}"
    );
    if let Some(Value::Object(p)) = schema.get("properties") {
        props.extend(p.clone());
    }
    if let Some(Value::Array(q)) = schema.get("required") {
        req.extend(q.iter().filter_map(Value::as_str).map(String::from));
    }
    (props, req)
}

/// Replace every object schema that has `properties` beside a `$ref` or an `allOf` with
/// one object holding all of their fields, at any depth.
fn inline(schema: &mut Value, defs: &Map<String, Value>) {
    let Value::Object(m) = schema else { return };
    let composed =
        m.contains_key("properties") && (m.contains_key("$ref") || m.contains_key("allOf"));
    if composed {
        let (props, mut req) = flat(schema, &Value::Object(defs.clone()));
        req.sort();
        req.dedup();
        let mut out = Map::new();
        if let Some(d) = schema.get("description") {
            out.insert("description".into(), d.clone());
        }
        out.insert("type".into(), json!("object"));
        out.insert("properties".into(), Value::Object(props));
        out.insert("required".into(), json!(req));
        *schema = Value::Object(out);
    }
    each_child(schema, &mut |c| inline(c, defs));
}

/// `additionalProperties: false` on every object schema with `properties` and no rule of
/// its own for other fields (a struct's: serde writes exactly its fields), at any depth;
/// and no `null` for a field that is not required (an `Option` that
/// `skip_serializing_if` leaves out when it is `None`: serde never writes it as null).
fn close(schema: &mut Value) {
    each_child(schema, &mut close);
    let Value::Object(m) = schema else { return };
    if !m.contains_key("properties") {
        return;
    }
    if !m.contains_key("additionalProperties") {
        m.insert("additionalProperties".into(), json!(false));
    }
    let required: Vec<String> = m
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        for (name, p) in props.iter_mut() {
            if !required.contains(name) {
                drop_null(p);
            }
        }
    }
}

/// `schema` without `null` among what it admits.
fn drop_null(schema: &mut Value) {
    let Value::Object(m) = schema else { return };
    if let Some(Value::Array(types)) = m.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types[0].clone();
            m.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = m.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(any)) = m.get_mut("anyOf") {
        any.retain(|s| *s != json!({ "type": "null" }));
        if let [Value::Object(only)] = any.as_slice() {
            let only = only.clone();
            m.remove("anyOf");
            for (k, v) in only {
                m.entry(k).or_insert(v);
            }
        }
    }
}

/// Call `f` on each subschema of `schema` (one level down).
fn each_child(schema: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    let Value::Object(m) = schema else { return };
    for key in ["properties", "$defs", "patternProperties"] {
        if let Some(Value::Object(p)) = m.get_mut(key) {
            p.values_mut().for_each(&mut *f);
        }
    }
    for key in ["items", "additionalProperties", "not", "if", "then", "else"] {
        if let Some(v @ Value::Object(_)) = m.get_mut(key) {
            f(v);
        }
    }
    for key in ["allOf", "anyOf", "oneOf", "prefixItems"] {
        if let Some(Value::Array(a)) = m.get_mut(key) {
            a.iter_mut().for_each(&mut *f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed schema is the one today's types give: a field changed without the
    /// schema changed fails here (rewrite with FLASHSCOPE_UPDATE_SCHEMA=1).
    #[test]
    fn the_schema_file_is_the_one_the_result_types_give() {
        let text = serde_json::to_string_pretty(&document()).unwrap() + "\n";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE);
        if std::env::var(UPDATE).is_ok_and(|v| !v.is_empty() && v != "0") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
            return;
        }
        let saved = std::fs::read_to_string(&path).unwrap_or_default();
        if saved != text {
            let line = saved
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(saved.lines().count().min(text.lines().count()));
            panic!(
                "{FILE} is not the schema the result types give (first difference at line {}: \
                 saved {:?}, now {:?}); after an intended change of the document run \
                 {UPDATE}=1 cargo test --lib report::schema and commit the file",
                line + 1,
                saved.lines().nth(line),
                text.lines().nth(line)
            );
        }
    }

    /// Every command has its fields in the schema, and the envelope is closed.
    #[test]
    fn every_command_is_in_the_schema_and_the_document_is_closed() {
        let s = document();
        assert_eq!(s["unevaluatedProperties"], json!(false));
        let commands: Vec<&str> = s["allOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["if"]["properties"]["command"]["const"].as_str().unwrap())
            .collect();
        assert_eq!(commands, Body::COMMANDS);
        // A struct is closed (every definition with properties, whatever the names
        // schemars gives types that share one); a map (inferences, a preset's keys) is not
        // made one.
        let defs = s["$defs"].as_object().unwrap();
        let structs: Vec<&String> = defs
            .iter()
            .filter(|(_, d)| d.get("properties").is_some())
            .map(|(k, _)| k)
            .collect();
        assert!(structs.len() > 100, "{structs:?}");
        for k in structs {
            assert_eq!(defs[k]["additionalProperties"], json!(false), "{k}");
        }
        assert!(s["properties"]["inferences"]["additionalProperties"].is_object());
    }
}
