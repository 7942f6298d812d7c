//! `health`: the document of a wear assessment ([`crate::health::assess`]): the
//! `health` inferences, the `health.wear` check (when there is a verdict) and the
//! metrics exporters read.

use crate::device::emmc::LifeTime;
use crate::health::*;
use crate::report::Document;
use crate::vocab::{Check, Inference, Metric};

/// The sources `--ext-csd` and `--sysfs-root` name, checked before anything is read:
/// each names itself when what it points at is not there (a missing dump is a missing
/// input file, exit 1 as in every command; a sysfs root that is no directory, a usage
/// error).
pub fn sources(
    ext_csd: Option<&std::path::Path>,
    sysfs_root: Option<&std::path::Path>,
) -> crate::Result<(Option<std::path::PathBuf>, crate::platform::Roots)> {
    if let Some(p) = ext_csd {
        if let Err(e) = std::fs::metadata(p) {
            let text = format!(
                "--ext-csd {}: {e}: give a dump file (512 bytes binary, or the 1024 hex digits debugfs prints)",
                p.display()
            );
            return Err(if e.kind() == std::io::ErrorKind::NotFound {
                crate::Error::runtime(text)
            } else {
                crate::Error::usage(text)
            });
        }
    }
    let mut roots = crate::platform::Roots::system();
    if let Some(dir) = sysfs_root {
        if !dir.is_dir() {
            return Err(crate::Error::usage(format!(
                "--sysfs-root {}: not a directory (give the root of a recorded sysfs tree)",
                dir.display()
            )));
        }
        roots.sys = dir.to_path_buf();
    }
    Ok((ext_csd.map(|p| p.to_path_buf()), roots))
}

/// Assess `target`'s wear (or the EXT_CSD dump / recorded sysfs `opts` names): the
/// document and the verdict (the check failed when worn or at end of life).
///
/// With `history` (the run history to read), each area's wear is projected from this
/// reading and the stored health runs of the same device.
pub fn measure(
    target: Option<&crate::device::TargetSpec>,
    opts: &Options,
    history: Option<&std::path::Path>,
) -> crate::Result<(Document, crate::vocab::error::Verdict)> {
    let t0 = crate::backend::monotonic_ns();
    let mut h = assess(target, opts)?;
    if let Some(db) = history {
        let doc = document(&h);
        project(&mut h, &doc, db);
    }
    let mut doc = document(&h);
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);
    let verdict = if h.status.failed() {
        crate::vocab::error::Verdict::CheckFailed
    } else {
        crate::vocab::error::Verdict::Ok
    };
    Ok((doc, verdict))
}

/// Project each area's wear from `h`'s reading (its document `doc`, which names the device
/// and the time) and the health runs of the same device stored in the history at `db`.
/// A history that is not there yet holds no runs; one that cannot be read is said in the
/// note, never an error of the health check.
fn project(h: &mut Health, doc: &Document, db: &std::path::Path) {
    use crate::health::projection::{self as pj, Outcome, Reading};
    use crate::vocab::units::parse_rfc3339_utc;
    let bands = h.wear_bands();
    if bands.is_empty() {
        return;
    }
    let Some(now) = doc.started_at.as_deref().and_then(parse_rfc3339_utc) else {
        h.projection_note = Some("this run has no start time (the clock is set before 1970), so no reading can be placed in time".into());
        return;
    };
    let key = crate::history::identity::of_live(doc).key;
    let stored = if db.exists() {
        match crate::history::Store::open_to_read(db).and_then(|s| s.runs_for_device(&key)) {
            Ok(runs) => runs,
            Err(e) => {
                h.projection_note = Some(format!(
                    "the run history could not be read ({e}), so this reading is the only one"
                ));
                return;
            }
        }
    } else {
        Vec::new()
    };
    let mut readings: std::collections::BTreeMap<&str, Vec<Reading>> = Default::default();
    for (area, lo, hi) in bands {
        readings
            .entry(area)
            .or_default()
            .push(Reading { at_s: now, lo, hi });
    }
    for (_, d) in &stored {
        let (crate::report::Body::Health(b), Some(at_s)) =
            (&d.body, d.started_at.as_deref().and_then(parse_rfc3339_utc))
        else {
            continue;
        };
        for (area, lo, hi) in b.health.wear_bands() {
            if let Some(v) = readings.get_mut(area) {
                v.push(Reading { at_s, lo, hi });
            }
        }
    }
    let mut notes = Vec::new();
    for (area, r) in readings {
        match pj::project(area, &r, h.max_wear_percent) {
            Outcome::Projected(p) => h.projection.push(p),
            Outcome::Reached => notes.push(format!(
                "the {area} is at or past the {} % limit already",
                h.max_wear_percent
            )),
            Outcome::Inconclusive(why) => notes.push(why),
        }
    }
    if h.projection.is_empty() {
        h.projection_note = Some(notes.join("; "));
    }
}

/// The result document: `health` inferences, the `health.wear` check (when there is a
/// verdict) and the metrics exporters read.
pub fn document(h: &Health) -> Document {
    use crate::report::results::{HealthParameters, HealthResult, HealthTarget};
    let mut doc = Document::new(
        crate::report::Target::Health(HealthTarget {
            spec: h.spec.clone(),
            device: h.device.clone(),
        }),
        crate::report::Body::Health(HealthResult {
            parameters: HealthParameters {
                max_wear_percent: h.max_wear_percent,
            },
            health: h.clone(),
        }),
    );
    let sure = |v: serde_json::Value, why: String| Inference::new(v, 1.0, why);
    let mut metric = |name: &str, help: &str, value: f64| {
        doc.metrics.push(Metric {
            name: name.to_string(),
            help: help.to_string(),
            value,
            labels: Default::default(),
        });
    };
    metric(
        "health_status",
        "Wear verdict: 0 ok, 1 worn, 2 end of life, -1 unknown (no wear data)",
        h.status.metric(),
    );
    if let Some(w) = &h.emmc {
        if let Some(p) = w.pre_eol.defined() {
            metric(
                "pre_eol_info",
                "eMMC PRE_EOL_INFO: 1 normal, 2 warning (80 % of reserved blocks used), 3 urgent",
                f64::from(p),
            );
        }
    }
    if let Some(s) = &h.smart {
        if let Some(p) = &s.percentage_used {
            metric(
                "smart_percentage_used_ratio",
                "SMART: fraction of the rated life used (may exceed 1)",
                p.value / 100.0,
            );
        }
        if let Some(p) = &s.available_spare {
            metric(
                "smart_available_spare_ratio",
                "SMART: remaining spare capacity",
                p.value / 100.0,
            );
        }
        if let Some(p) = &s.media_errors {
            metric(
                "smart_media_errors_total",
                "SMART: unrecovered media / data integrity errors over the drive's life",
                p.value,
            );
        }
    }
    if let Some(w) = &h.emmc {
        // One family, the memory area as a label: type A (usually the SLC / enhanced
        // area, DEVICE_LIFE_TIME_EST_TYP_A) and type B (the MLC/TLC main area, _TYP_B).
        for (area, band) in [("A", &w.life_time_a), ("B", &w.life_time_b)] {
            if let Some(r) = band.used_ratio() {
                doc.metrics.push(Metric {
                    name: "emmc_life_used_ratio".to_string(),
                    help: "eMMC memory life used by area (A: SLC/enhanced, B: MLC/TLC main), upper bound of the reported 10 % band (DEVICE_LIFE_TIME_EST_TYP_A/B)".to_string(),
                    value: r,
                    labels: [("area".to_string(), area.to_string())].into(),
                });
            }
        }
        doc.inferences.insert(
            "wear_type_a".into(),
            band_inference(&w.life_time_a, "type A memory", &w.source),
        );
        doc.inferences.insert(
            "wear_type_b".into(),
            band_inference(&w.life_time_b, "type B memory", &w.source),
        );
        let pe = match w.pre_eol.defined() {
            Some(_) => sure(
                w.pre_eol.short().into(),
                format!("{} ({})", w.pre_eol.meaning(), w.source),
            ),
            None => Inference::inconclusive(format!("{} ({})", w.pre_eol.meaning(), w.source)),
        };
        doc.inferences.insert("pre_eol".into(), pe);
    }
    if let Some(s) = &h.smart {
        let fig = |f: &Option<smart::Sourced>, what: &str| match f {
            Some(p) => sure(
                p.value.into(),
                format!("{what}: {} (from {})", p.value, p.source),
            ),
            None => Inference::inconclusive(format!("smartctl reports no {what}")),
        };
        doc.inferences.insert(
            "percentage_used".into(),
            fig(&s.percentage_used, "percentage of rated life used"),
        );
        doc.inferences.insert(
            "available_spare".into(),
            fig(&s.available_spare, "available spare percent"),
        );
        doc.inferences.insert(
            "media_errors".into(),
            fig(&s.media_errors, "media error count"),
        );
    }
    // The area that reaches the limit first, by its earliest possible day.
    if let Some(first) = h
        .projection
        .iter()
        .min_by(|a, b| a.days_min.total_cmp(&b.days_min))
    {
        let why: Vec<String> = h.projection.iter().map(|p| p.sentence()).collect();
        // Tentative at best: the bands bound the rate only while the workload stays as it
        // was, which no reading can show.
        doc.inferences.insert(
            "wear_projection_days".into(),
            Inference::new(
                serde_json::Value::from((first.days_min * 10.0).floor() / 10.0),
                0.6,
                why.join("; "),
            ),
        );
    } else if let Some(n) = &h.projection_note {
        doc.inferences.insert(
            "wear_projection_days".into(),
            Inference::inconclusive(n.clone()),
        );
    }
    for p in &h.projection {
        doc.metrics.push(Metric {
            name: "wear_limit_days_min".to_string(),
            help: "Days until the area reaches the --max-wear limit at the fastest steady rate its readings allow (a lower bound)".to_string(),
            value: p.days_min,
            labels: [("area".to_string(), area_label(&p.area).to_string())].into(),
        });
    }
    let status = if h.status == Status::Unknown {
        Inference::inconclusive(h.lacks.clone().unwrap_or_default())
    } else {
        sure(
            h.status.name().into(),
            if h.reasons.is_empty() {
                format!(
                    "every reported figure is below the {} % limit and no end-of-life flag is set",
                    h.max_wear_percent
                )
            } else {
                h.reasons.join("; ")
            },
        )
    };
    doc.inferences.insert("status".into(), status);
    if h.status != Status::Unknown {
        doc.checks.push(Check {
            inconclusive: false,
            threshold: None,
            name: "health.wear".to_string(),
            passed: !h.status.failed(),
            measurement: h.worst_used_percent,
            units: h.worst_used_percent.map(|_| "percent".to_string()),
            message: format!(
                "wear {} (limit {} % used{}){}",
                h.status.name().replace('_', " "),
                h.max_wear_percent,
                h.worst_used_percent
                    .map_or(String::new(), |w| format!(", worst {w} %")),
                if h.reasons.is_empty() {
                    String::new()
                } else {
                    format!(": {}", h.reasons.join("; "))
                }
            ),
        });
    }
    doc
}

/// The `area` label of a projected area, as `emmc_life_used_ratio` spells it (A, B), and
/// `rated` for a drive's rated life.
fn area_label(area: &str) -> &str {
    match area {
        "type A memory" => "A",
        "type B memory" => "B",
        "rated life" => "rated",
        other => other,
    }
}

fn band_inference(lt: &LifeTime, area: &str, source: &str) -> Inference {
    let why = format!("{} ({source})", lt.meaning(area));
    match lt {
        LifeTime::Used {
            min_percent,
            max_percent,
            ..
        } => Inference::new(format!("{min_percent}-{max_percent}%"), 1.0, why),
        LifeTime::Exceeded { .. } => Inference::new("exceeded", 1.0, why),
        _ => Inference::inconclusive(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::test_options as opts;

    #[test]
    fn the_document_carries_checks_and_metrics() {
        let h = assess(
            Some(&crate::device::test_spec(
                "sim:custom,card=mmc,life_time=0x09/0x02,pre_eol=2",
            )),
            &opts(),
        )
        .unwrap();
        assert_eq!(h.status, Status::Worn);
        let d = document(&h);
        assert_eq!(d.checks.len(), 1);
        assert_eq!(d.checks[0].name, "health.wear");
        assert!(!d.checks[0].passed);
        assert_eq!(d.checks[0].measurement, Some(90.0));
        let m = |n: &str| d.metrics.iter().find(|m| m.name == n).map(|m| m.value);
        let area = |a: &str| {
            d.metrics
                .iter()
                .find(|m| m.name == "emmc_life_used_ratio" && m.labels["area"] == a)
                .map(|m| m.value)
        };
        assert_eq!(m("health_status"), Some(1.0));
        assert_eq!(area("A"), Some(0.9));
        assert_eq!(area("B"), Some(0.2));
        assert_eq!(m("pre_eol_info"), Some(2.0));
        assert_eq!(d.inferences["status"].value, Some("worn".into()));
        let u = document(&assess(Some(&crate::device::test_spec("sim:sd-16g")), &opts()).unwrap());
        assert!(u.checks.is_empty());
        assert_eq!(u.metrics.len(), 1);
        assert_eq!(u.inferences["status"].value, None);
    }
}
