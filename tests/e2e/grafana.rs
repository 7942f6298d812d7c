//! contrib/grafana/flashscope-health.json (issue 47 point 5): every metric and label the
//! dashboard queries is one `health --prometheus` writes — run here on `sim:emmc-8g` (eMMC
//! wear) and on a recorded NVMe tree with a stub smartctl (the SMART figures).

use crate::common;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn dashboard() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/grafana/flashscope-health.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Every query text of the dashboard: panel targets' `expr`, variables' `query` and
/// `definition`; and every legend.
fn queries(v: &Value, exprs: &mut Vec<String>, legends: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("expr" | "definition" | "query", Value::String(s)) => exprs.push(s.clone()),
                    ("legendFormat", Value::String(s)) => legends.push(s.clone()),
                    _ => queries(x, exprs, legends),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| queries(x, exprs, legends)),
        _ => {}
    }
}

/// The `flashscope_…` names in a query text.
fn metric_names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("flashscope_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        out.insert(tail[..end].to_string());
        rest = &tail[end..];
    }
    out
}

/// The label names a query matches on (`{name=…}`, `{name=~…}`) and a legend prints
/// (`{{name}}`).
fn label_names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for part in text.split(['{', ',']) {
        let part = part.trim_start_matches('{').trim();
        if let Some(i) = part.find(['=', '!', '}']) {
            let name = part[..i].trim();
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// The metric and label names of a Prometheus text file.
fn written(text: &str, names: &mut BTreeSet<String>, labels: &mut BTreeSet<String>) {
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let name_end = line.find(['{', ' ']).unwrap_or(line.len());
        names.insert(line[..name_end].to_string());
        if let (Some(a), Some(b)) = (line.find('{'), line.rfind('}')) {
            for pair in line[a + 1..b].split("\",") {
                if let Some((k, _)) = pair.split_once('=') {
                    labels.insert(k.trim().to_string());
                }
            }
        }
    }
}

/// What the dashboard asks for that the exporter does not write: (metrics, labels).
fn unknown(
    dash: &Value,
    names: &BTreeSet<String>,
    labels: &BTreeSet<String>,
) -> (Vec<String>, Vec<String>) {
    let (mut exprs, mut legends) = (Vec::new(), Vec::new());
    queries(dash, &mut exprs, &mut legends);
    let asked: BTreeSet<String> = exprs.iter().flat_map(|e| metric_names(e)).collect();
    // Prometheus adds `instance` and `job` when it scrapes node_exporter.
    let asked_labels: BTreeSet<String> = exprs
        .iter()
        .chain(legends.iter())
        .flat_map(|e| label_names(e))
        .collect();
    (
        asked.difference(names).cloned().collect(),
        asked_labels
            .into_iter()
            .filter(|l| !labels.contains(l) && l != "instance" && l != "job")
            .collect(),
    )
}

fn exporter_output() -> (BTreeSet<String>, BTreeSet<String>) {
    let dir = tempfile::tempdir().unwrap();
    let (mut names, mut labels) = (BTreeSet::new(), BTreeSet::new());
    let emmc = dir.path().join("emmc.prom");
    let out = common::flashscope_abs()
        .args(["health", "sim:emmc-8g", "--prometheus"])
        .arg(&emmc)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    written(
        &std::fs::read_to_string(&emmc).unwrap(),
        &mut names,
        &mut labels,
    );
    let (stub, _) = common::stub_smartctl("nvme-intel-660p.json", 0);
    let nvme = dir.path().join("nvme.prom");
    let tree = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/health/sysfs/nvme");
    let out = common::flashscope_abs()
        .args([
            "health",
            "/dev/nvme0n1",
            "--sysfs-root",
            tree,
            "--prometheus",
        ])
        .arg(&nvme)
        .env("PATH", stub.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    written(
        &std::fs::read_to_string(&nvme).unwrap(),
        &mut names,
        &mut labels,
    );
    (names, labels)
}

#[test]
fn the_grafana_dashboard_queries_only_what_health_exports() {
    let dash = dashboard();
    let (names, labels) = exporter_output();
    for n in [
        "flashscope_health_status",
        "flashscope_emmc_life_used_ratio",
        "flashscope_smart_percentage_used_ratio",
    ] {
        assert!(names.contains(n), "{n} not written: {names:?}");
    }
    let (metrics, bad_labels) = unknown(&dash, &names, &labels);
    assert!(
        metrics.is_empty(),
        "queried, never written: {metrics:?} (written: {names:?})"
    );
    assert!(
        bad_labels.is_empty(),
        "labels never written: {bad_labels:?} (written: {labels:?})"
    );
    // Every panel queries something, through the dashboard's one data source input.
    let panels = dash["panels"].as_array().unwrap();
    assert!(panels.len() >= 5);
    let mut ids = BTreeSet::new();
    for p in panels {
        assert!(
            ids.insert(p["id"].as_u64().unwrap()),
            "duplicate panel id: {p}"
        );
        assert_eq!(p["datasource"]["uid"], "${DS_PROMETHEUS}", "{p}");
        let expr = p["targets"][0]["expr"].as_str().unwrap();
        assert!(!metric_names(expr).is_empty(), "{expr}");
    }
    assert_eq!(dash["__inputs"][0]["name"], "DS_PROMETHEUS");
    // Negative control: a misspelt metric or label is caught.
    let mut doctored = dash.clone();
    doctored["panels"][0]["targets"][0]["expr"] = "flashscope_health_state{devce=\"x\"}".into();
    let (metrics, bad_labels) = unknown(&doctored, &names, &labels);
    assert_eq!(metrics, ["flashscope_health_state"]);
    assert_eq!(bad_labels, ["devce"]);
}

#[test]
fn query_texts_split_into_metric_and_label_names() {
    assert_eq!(
        metric_names("increase(flashscope_smart_media_errors_total{device=~\"$d\"}[1d])"),
        BTreeSet::from(["flashscope_smart_media_errors_total".to_string()])
    );
    assert_eq!(
        label_names("flashscope_check_passed{check=\"health.wear\", instance=~\"$i\"}"),
        BTreeSet::from(["check".to_string(), "instance".to_string()])
    );
    assert_eq!(
        label_names("{{instance}} {{device}} area {{area}}"),
        BTreeSet::from(["instance".into(), "device".into(), "area".into()])
    );
}
