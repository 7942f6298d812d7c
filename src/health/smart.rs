//! SMART wear from `smartctl --json` (smartmontools 7.0 and later), for SATA, NVMe, SAS
//! and USB-bridged disks. flashscope runs smartctl as a program and reads its JSON; it
//! does not issue SMART commands itself.
//!
//! What is mapped, and how:
//! - NVMe (`nvme_smart_health_information_log`, NVMe base specification, log page 02h):
//!   `percentage_used` (vendor estimate of life used, may exceed 100), `available_spare`
//!   and `available_spare_threshold` (percent), `media_errors` (unrecovered data
//!   integrity errors), `critical_warning` (bit 0 spare below threshold, bit 2
//!   reliability degraded, bit 3 read-only).
//! - ATA: first the standard Device Statistics "Percentage Used Endurance Indicator"
//!   (ACS-3 log 04h page 07h, `ata_device_statistics`), used when its valid flag is set.
//!   Without it, the first of these vendor attributes present, whose *normalised* value
//!   counts down from 100 (new) to 0 (worn), so used = 100 - normalised: 177
//!   Wear_Leveling_Count (Samsung), 233 Media_Wearout_Indicator (Intel), 231
//!   SSD_Life_Left (Kingston, SandForce), 202 Percent_Lifetime_Remain (Crucial/Micron;
//!   its raw value is the used percent, its normalised value the remainder). A
//!   normalised value above 100 is on another scale and is not used. The raw values of
//!   these attributes are vendor-specific (177's raw is an erase count) and are not read
//!   as percentages. Media errors: Device Statistics "Number of Reported Uncorrectable
//!   Errors", else attribute 187 Reported_Uncorrect's raw value.
//! - SCSI/SAS: `scsi_percentage_used_endurance_indicator`.
//! - Every protocol: `smart_status.passed` (the drive's own overall assessment).

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A figure and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Sourced {
    pub value: f64,
    /// The smartctl field or attribute it was read from.
    pub source: String,
}

/// What smartctl's JSON says about wear.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SmartWear {
    /// "NVMe", "ATA", "SCSI" (smartctl's `device.protocol`).
    pub protocol: Option<String>,
    pub model: Option<String>,
    /// The drive's overall SMART assessment.
    pub passed: Option<bool>,
    /// Percent of the rated life used (NVMe may report more than 100).
    pub percentage_used: Option<Sourced>,
    /// Remaining spare capacity, percent (NVMe).
    pub available_spare: Option<Sourced>,
    /// The spare level below which the drive warns, percent (NVMe).
    pub available_spare_threshold: Option<f64>,
    /// Unrecovered media / data integrity errors over the drive's life.
    pub media_errors: Option<Sourced>,
    /// NVMe critical warning bits.
    pub critical_warning: Option<u8>,
    /// smartctl's exit status (a bit mask, see smartctl(8)).
    pub exit_status: Option<i64>,
    /// smartctl's own messages (errors and warnings it printed into the JSON).
    pub messages: Vec<String>,
}

impl SmartWear {
    /// True when any wear figure or the overall assessment is present.
    pub fn any_figure(&self) -> bool {
        self.percentage_used.is_some()
            || self.available_spare.is_some()
            || self.media_errors.is_some()
            || self.passed.is_some()
    }
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    cur.as_f64()
}

/// The ATA vendor wear attributes, in the order they are tried.
const ATA_WEAR_ATTRIBUTES: [(u64, &str); 4] = [
    (177, "Wear_Leveling_Count"),
    (233, "Media_Wearout_Indicator"),
    (231, "SSD_Life_Left"),
    (202, "Percent_Lifetime_Remain"),
];

/// Parse smartctl's JSON output (`smartctl --json ...`); `name` names the output in
/// messages. Output that is not a JSON object is an error (exit 1) quoting its start.
pub fn parse(name: &str, text: &[u8]) -> Result<SmartWear> {
    let v: Value = serde_json::from_slice(text).map_err(|e| {
        let head: String = String::from_utf8_lossy(text).chars().take(80).collect();
        Error::runtime(format!(
            "{name} is not smartctl JSON ({e}); it begins {head:?} — smartmontools 7.0 or later is needed for --json"
        ))
    })?;
    if !v.is_object() {
        return Err(Error::runtime(format!(
            "{name} is not smartctl JSON: the top level is not an object"
        )));
    }
    let mut w = SmartWear {
        protocol: v
            .pointer("/device/protocol")
            .and_then(Value::as_str)
            .map(shown),
        model: v
            .get("model_name")
            .or_else(|| v.get("scsi_model_name"))
            .and_then(Value::as_str)
            .map(shown),
        passed: v.pointer("/smart_status/passed").and_then(Value::as_bool),
        exit_status: v.pointer("/smartctl/exit_status").and_then(Value::as_i64),
        messages: v
            .pointer("/smartctl/messages")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|m| m.get("string").and_then(Value::as_str))
                    .take(64)
                    .map(shown)
                    .collect()
            })
            .unwrap_or_default(),
        ..SmartWear::default()
    };
    let sourced = |value: f64, source: &str| Sourced {
        value,
        source: source.to_string(),
    };
    if let Some(log) = v.get("nvme_smart_health_information_log") {
        let log_field = |k: &str| num(log, &[k]);
        w.percentage_used = log_field("percentage_used")
            .map(|p| sourced(p, "nvme_smart_health_information_log.percentage_used"));
        w.available_spare = log_field("available_spare")
            .map(|p| sourced(p, "nvme_smart_health_information_log.available_spare"));
        w.available_spare_threshold = log_field("available_spare_threshold");
        w.media_errors = log_field("media_errors")
            .map(|p| sourced(p, "nvme_smart_health_information_log.media_errors"));
        w.critical_warning = log_field("critical_warning").map(|c| c as u8);
    }
    // ATA Device Statistics (standard), then the vendor attributes.
    let stats: Vec<&Value> = v
        .pointer("/ata_device_statistics/pages")
        .and_then(Value::as_array)
        .map(|pages| {
            pages
                .iter()
                .filter_map(|p| p.get("table").and_then(Value::as_array))
                .flatten()
                .collect()
        })
        .unwrap_or_default();
    let stat = |name: &str| {
        stats
            .iter()
            .filter(|e| e.get("name").and_then(Value::as_str) == Some(name))
            .filter(|e| e.pointer("/flags/valid").and_then(Value::as_bool) != Some(false))
            .find_map(|e| num(e, &["value"]))
    };
    if w.percentage_used.is_none() {
        w.percentage_used = stat("Percentage Used Endurance Indicator").map(|p| {
            sourced(
                p,
                "ATA Device Statistics: Percentage Used Endurance Indicator",
            )
        });
    }
    let attrs: Vec<&Value> = v
        .pointer("/ata_smart_attributes/table")
        .and_then(Value::as_array)
        .map(|t| t.iter().collect())
        .unwrap_or_default();
    let attr = |id: u64| {
        attrs
            .iter()
            .find(|a| a.get("id").and_then(Value::as_u64) == Some(id))
    };
    if w.percentage_used.is_none() {
        for (id, known) in ATA_WEAR_ATTRIBUTES {
            let Some(a) = attr(id) else { continue };
            let Some(norm) = num(a, &["value"]) else {
                continue;
            };
            let label = a.get("name").and_then(Value::as_str).unwrap_or(known);
            if norm > 100.0 {
                w.messages.push(format!(
                    "ATA attribute {id} {label} has normalised value {norm}, above 100: on a vendor scale flashscope does not know, so not read as a percentage"
                ));
                continue;
            }
            w.percentage_used = Some(sourced(
                100.0 - norm,
                &format!("ATA attribute {id} {label}: 100 - normalised value {norm}"),
            ));
            break;
        }
    }
    if w.media_errors.is_none() {
        w.media_errors = stat("Number of Reported Uncorrectable Errors").map(|n| {
            sourced(
                n,
                "ATA Device Statistics: Number of Reported Uncorrectable Errors",
            )
        });
    }
    if w.media_errors.is_none() {
        w.media_errors = attr(187)
            .and_then(|a| num(a, &["raw", "value"]))
            .map(|n| sourced(n, "ATA attribute 187 Reported_Uncorrect (raw)"));
    }
    if w.percentage_used.is_none() {
        w.percentage_used = num(&v, &["scsi_percentage_used_endurance_indicator"])
            .map(|p| sourced(p, "scsi_percentage_used_endurance_indicator"));
    }
    Ok(w)
}

/// The result of trying to run smartctl.
#[derive(Debug)]
pub enum Run {
    /// smartctl is not installed (not on PATH, or the only one there is flashscope itself).
    NotInstalled,
    /// It ran; its stdout.
    Output(Vec<u8>),
}

/// A string the device or smartctl gave, made printable: shown, never obeyed.
fn shown(s: &str) -> String {
    crate::input::printable(s).into_owned()
}

/// The cap on smartctl's output (a full `-x` report is tens of kilobytes).
const OUTPUT_CAP_BYTES: u64 = 8 << 20;
/// How long smartctl may take (a USB bridge that does not answer can block it).
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The first `smartctl` on PATH that is not this very program. flashscope answers as
/// smartctl when invoked under that name (`flashscope smartctl`): a symbolic link named
/// smartctl early on PATH would otherwise have `health` (and the smartctl mode's hand-over
/// for SATA and NVMe disks) run flashscope again, and again, without end.
pub fn find_smartctl() -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok());
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("smartctl"))
        .filter(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .find(|p| me.is_none() || std::fs::canonicalize(p).ok() != me)
}

/// Run `smartctl --json=c -x DEVICE` (read-only: identity, SMART data and logs) with a
/// time limit and an output cap.
pub fn run_smartctl(device: &str) -> Result<Run> {
    let args = ["--json=c", "-x", device].map(String::from);
    Ok(match run_with(&args)? {
        None => Run::NotInstalled,
        Some((out, _)) => Run::Output(out),
    })
}

/// Run the real smartctl ([`find_smartctl`]) with `args`, a time limit and an output cap:
/// its stdout and exit code (`None` when a signal ended it), or `None` when there is no
/// smartctl to run.
pub fn run_with(args: &[String]) -> Result<Option<(Vec<u8>, Option<i32>)>> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let what = format!("smartctl {}", args.join(" "));
    let Some(smartctl) = find_smartctl() else {
        return Ok(None);
    };
    let mut child = match Command::new(smartctl)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        // Its own process group: whatever it starts is stopped with it, so nothing can
        // keep the output pipe open after it (which would block the reader forever).
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("starting smartctl", e)),
    };
    let Some(stdout) = child.stdout.take() else {
        return Err(Error::runtime("smartctl started without an output pipe"));
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let r = stdout.take(OUTPUT_CAP_BYTES + 1).read_to_end(&mut out);
        let _ = tx.send(r.map(|_| out));
    });
    let group = child.id();
    // The process group this function started.
    let stop_group = || crate::sys::kill_process_group(group);
    let t0 = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if t0.elapsed() > TIMEOUT => {
                stop_group();
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::runtime(format!(
                    "{what} did not finish within {} s and was stopped (a USB bridge that does not pass SMART through can hang it; try smartctl -d sat)",
                    TIMEOUT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(e) => return Err(Error::io("waiting for smartctl", e)),
        }
    };
    // smartctl has exited: what it started goes too, and the rest of its output is read
    // within a few seconds or not at all.
    stop_group();
    let out = match rx.recv_timeout(std::time::Duration::from_secs(5)) {
        Ok(r) => r.map_err(|e| Error::io("reading smartctl's output", e))?,
        Err(_) => {
            return Err(Error::runtime(format!(
                "{what} exited, but its output stayed open (a process it started still holds it); nothing was read"
            )))
        }
    };
    if out.len() as u64 > OUTPUT_CAP_BYTES {
        return Err(Error::runtime(format!(
            "{what} printed more than {}; that is not a SMART report",
            crate::vocab::units::format_bytes(OUTPUT_CAP_BYTES)
        )));
    }
    Ok(Some((out, status.code())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/health/smartctl")
                .join(name),
        )
        .unwrap()
    }

    #[test]
    fn nvme_log_maps_used_spare_and_media_errors() {
        let w = parse("x", &fixture("nvme-intel-660p.json")).unwrap();
        assert_eq!(w.protocol.as_deref(), Some("NVMe"));
        assert_eq!(w.percentage_used.as_ref().unwrap().value, 0.0);
        assert_eq!(w.available_spare.as_ref().unwrap().value, 100.0);
        assert_eq!(w.available_spare_threshold, Some(10.0));
        assert_eq!(w.media_errors.as_ref().unwrap().value, 0.0);
        assert_eq!(w.passed, Some(true));
        let f = parse("x", &fixture("nvme-samsung-970-media-errors.json")).unwrap();
        assert_eq!(f.percentage_used.unwrap().value, 3.0);
        assert_eq!(f.media_errors.unwrap().value, 7.0);
    }

    #[test]
    fn ata_ssd_prefers_device_statistics_and_falls_back_to_attribute_177() {
        let text = fixture("ata-samsung-860-evo.json");
        let w = parse("x", &text).unwrap();
        let used = w.percentage_used.unwrap();
        assert_eq!(used.value, 19.0);
        assert!(used.source.contains("Device Statistics"), "{}", used.source);
        // Without the statistics page the attribute gives the same figure: 100 - 81.
        let mut v: Value = serde_json::from_slice(&text).unwrap();
        v.as_object_mut().unwrap().remove("ata_device_statistics");
        let w = parse("x", v.to_string().as_bytes()).unwrap();
        let used = w.percentage_used.unwrap();
        assert_eq!(used.value, 19.0);
        assert!(
            used.source.contains("177 Wear_Leveling_Count"),
            "{}",
            used.source
        );
        assert_eq!(w.media_errors.unwrap().value, 0.0);
    }

    #[test]
    fn a_disk_without_wear_attributes_gives_no_percentage() {
        let w = parse("x", &fixture("ata-wdc-hdd-no-wear.json")).unwrap();
        assert_eq!(w.protocol.as_deref(), Some("ATA"));
        assert!(w.percentage_used.is_none());
        assert!(w.available_spare.is_none());
        assert_eq!(w.passed, Some(true));
    }

    #[test]
    fn vendor_scales_above_100_are_not_read_as_percentages() {
        let j = r#"{"device":{"protocol":"ATA"},"ata_smart_attributes":{"table":[
            {"id":231,"name":"SSD_Life_Left","value":200,"raw":{"value":0}},
            {"id":202,"name":"Percent_Lifetime_Remain","value":96,"raw":{"value":4}}]}}"#;
        let w = parse("x", j.as_bytes()).unwrap();
        assert_eq!(w.percentage_used.as_ref().unwrap().value, 4.0);
        assert!(w.percentage_used.unwrap().source.contains("202"));
        assert!(w.messages[0].contains("above 100"));
    }

    #[test]
    fn malformed_output_is_an_error_quoting_it() {
        let e = parse("smartctl output", &fixture("malformed.txt")).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert!(e.to_string().contains("is not smartctl JSON"), "{e}");
        assert!(parse("x", b"[1,2]").is_err());
    }
}
