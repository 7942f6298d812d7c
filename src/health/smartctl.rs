//! What `flashscope smartctl` answers: an eMMC's or SD card's [`Health`] in the JSON shape
//! of smartmontools' `smartctl --json` (7.x), so fleet tools that run smartctl (Scrutiny's
//! collector) read eMMC wear; and `--scan`'s list of the cards health has wear data for.
//! The choices are explained in docs/smartctl.md; in short:
//!
//! - `device.protocol` is `"NVMe"` and the wear goes into
//!   `nvme_smart_health_information_log`: Scrutiny refuses any protocol but ATA, NVMe and
//!   SCSI, and of those only NVMe's health log has a life-used percentage and a spare
//!   level, which is what an eMMC reports. `device.type` is `"mmc"`, which is what it is.
//! - `percentage_used` is the upper bound of the worse life-time band (A or B) — the
//!   figure `health` judges, so a monitor warns no later than `health` does; 0x0B
//!   (exceeded) is 100.
//! - `available_spare` is a level, not a measurement: pre-EOL normal 100, warning 15,
//!   urgent 5 (the middle of the 10–20 % and 0–10 % of reserved blocks left), with
//!   `available_spare_threshold` 20, the eMMC's own warning level; `critical_warning`
//!   bit 0 (spare below threshold) is set at warning and urgent.
//! - `smart_status.passed` is false when `health` finds the device worn or at its end of
//!   life, and is left out when there is no wear data (smartctl leaves it out when it
//!   cannot tell).
//! - What an eMMC does not report (temperature, power-on time, power cycles, media errors)
//!   is left out, never given as 0.

use super::{Health, Status};
use crate::device::emmc::PreEol;
use crate::platform::Roots;
use serde_json::{json, Map, Value};

/// smartctl's exit status bits (smartctl(8), RETURN VALUES).
pub mod exit_bit {
    /// Bit 0: the command line did not parse.
    pub const COMMAND_LINE: u8 = 1;
    /// Bit 1: the device could not be opened or did not identify itself.
    pub const DEVICE_OPEN: u8 = 1 << 1;
    /// Bit 2: a SMART (here: wear) query failed.
    pub const SMART_FAILED: u8 = 1 << 2;
    /// Bit 3: the SMART status says "DISK FAILING".
    pub const DISK_FAILING: u8 = 1 << 3;
}

/// The protocol the answer reports (see the module's notes).
pub const PROTOCOL: &str = "NVMe";
/// The device type the answer reports, and `--scan` lists.
pub const DEVICE_TYPE: &str = "mmc";
/// `available_spare` per pre-EOL level: normal, warning, urgent.
pub const SPARE_NORMAL: u8 = 100;
pub const SPARE_WARNING: u8 = 15;
pub const SPARE_URGENT: u8 = 5;
/// `available_spare_threshold`: pre-EOL warns when 80 % of the reserved blocks are used.
pub const SPARE_THRESHOLD: u8 = 20;

/// What the caller asked for: identity (`--info`), the health verdict and wear
/// (`--health`, `--attributes`; `--all` and `--xall` are both).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Want {
    pub info: bool,
    pub health: bool,
}

/// A device's identity as smartctl prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// `/dev/mmcblk0`, or the `sim:` spec.
    pub name: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    pub capacity_bytes: Option<u64>,
    /// `device.type` and `device.protocol`: [`DEVICE_TYPE`] and [`PROTOCOL`] for a card;
    /// a simulated device without one (a USB stick) is `scsi` / `SCSI`, as Linux sees one.
    pub device_type: &'static str,
    pub protocol: &'static str,
}

impl Identity {
    /// A card named `name`, nothing else known yet.
    pub fn card(name: &str) -> Identity {
        Identity {
            name: name.to_string(),
            model: None,
            serial: None,
            firmware: None,
            capacity_bytes: None,
            device_type: DEVICE_TYPE,
            protocol: PROTOCOL,
        }
    }
}

/// The top of every answer: `json_format_version`, `smartctl` (with flashscope's name in
/// `build_info`: this is not smartmontools) and `local_time` at `unix_s`.
pub fn envelope(argv: &[String], unix_s: u64, status: u8, messages: &[(String, bool)]) -> Value {
    let mut smartctl = Map::new();
    smartctl.insert(
        "build_info".into(),
        format!(
            "(flashscope {} answering in smartctl's JSON shape; not smartmontools)",
            env!("CARGO_PKG_VERSION")
        )
        .into(),
    );
    smartctl.insert("argv".into(), json!(argv));
    if !messages.is_empty() {
        let m: Vec<Value> = messages
            .iter()
            .map(|(text, error)| {
                json!({
                    "string": crate::input::printable(text),
                    "severity": if *error { "error" } else { "warning" },
                })
            })
            .collect();
        smartctl.insert("messages".into(), m.into());
    }
    smartctl.insert("exit_status".into(), status.into());
    json!({
        "json_format_version": [1, 0],
        "smartctl": smartctl,
        "local_time": { "time_t": unix_s, "asctime": asctime(unix_s) },
    })
}

/// `Sat Nov 28 15:23:09 2026 UTC`, as smartctl prints `local_time.asctime` (in UTC).
pub fn asctime(unix_s: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    // "YYYY-MM-DDTHH:MM:SSZ", the crate's one calendar conversion.
    let t = crate::vocab::units::format_rfc3339_utc(unix_s);
    let field = |r: std::ops::Range<usize>| t.get(r).unwrap_or("0").to_string();
    let month = field(5..7).parse::<usize>().unwrap_or(1).clamp(1, 12);
    let day = field(8..10).parse::<u32>().unwrap_or(1);
    format!(
        "{} {} {day:2} {} {}",
        DAYS[((unix_s / 86_400) % 7) as usize],
        MONTHS[month - 1],
        field(11..19),
        field(0..4),
    ) + " UTC"
}

/// Add the identity fields (`device`, `model_name`, `serial_number`, `firmware_version`,
/// `user_capacity`, `logical_block_size`) to `doc`.
pub fn add_identity(doc: &mut Value, id: &Identity) {
    let Some(o) = doc.as_object_mut() else {
        return;
    };
    let shown = |s: &str| crate::input::printable(s).into_owned();
    o.insert(
        "device".into(),
        json!({
            "name": shown(&id.name),
            "info_name": shown(&id.name),
            "type": id.device_type,
            "protocol": id.protocol,
        }),
    );
    if let Some(m) = &id.model {
        o.insert("model_name".into(), shown(m).into());
    }
    if let Some(s) = &id.serial {
        o.insert("serial_number".into(), shown(s).into());
    }
    if let Some(f) = &id.firmware {
        o.insert("firmware_version".into(), shown(f).into());
    }
    if let Some(b) = id.capacity_bytes {
        o.insert(
            "user_capacity".into(),
            json!({ "blocks": b / 512, "bytes": b }),
        );
        o.insert("logical_block_size".into(), 512.into());
    }
}

/// Add `smart_support`: available and enabled when `health` has wear data (smartctl
/// prints it with `--info` too; Scrutiny keeps it from the `--info` answer).
pub fn add_support(doc: &mut Value, h: &Health) {
    if let Some(o) = doc.as_object_mut() {
        let known = h.status != Status::Unknown;
        o.insert(
            "smart_support".into(),
            json!({ "available": known, "enabled": known }),
        );
    }
}

/// Add what `health` found (`smart_support`, `smart_status`, the health log) to `doc`,
/// and return the exit status bits it sets: bit 3 when worn or at end of life, bit 2 when
/// there is no wear data (with `lacks` as a message for the caller).
pub fn add_health(doc: &mut Value, h: &Health) -> (u8, Option<String>) {
    let known = h.status != Status::Unknown;
    add_support(doc, h);
    let Some(o) = doc.as_object_mut() else {
        return (0, None);
    };
    if !known {
        let why = h
            .lacks
            .clone()
            .unwrap_or_else(|| "no source of wear data".to_string());
        return (exit_bit::SMART_FAILED, Some(why));
    }
    o.insert(
        "smart_status".into(),
        json!({ "passed": !h.status.failed() }),
    );
    let mut log = Map::new();
    if let Some(w) = &h.emmc {
        let mut critical = 0u8;
        if let Some(used) = h.worst_used_percent {
            log.insert("percentage_used".into(), (used.round() as u64).into());
        }
        let spare = match w.pre_eol {
            PreEol::Normal { .. } => Some(SPARE_NORMAL),
            PreEol::Warning { .. } => Some(SPARE_WARNING),
            PreEol::Urgent { .. } => Some(SPARE_URGENT),
            _ => None,
        };
        if let Some(s) = spare {
            if s < SPARE_THRESHOLD {
                critical |= 1;
            }
            log.insert("available_spare".into(), s.into());
            log.insert("available_spare_threshold".into(), SPARE_THRESHOLD.into());
        }
        log.insert("critical_warning".into(), critical.into());
    }
    if !log.is_empty() {
        o.insert("nvme_smart_health_information_log".into(), log.into());
    }
    let bits = if h.status.failed() {
        exit_bit::DISK_FAILING
    } else {
        0
    };
    (bits, None)
}

/// The whole-card MMC block devices below `roots` (`mmcblkN`, not its partitions or its
/// boot and RPMB areas), by name, in order.
pub fn mmc_disks(roots: &Roots) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(roots.sys.join("class/block")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            n.strip_prefix("mmcblk")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    names.sort_by_key(|n| (n.len(), n.clone()));
    names
}

/// A card attribute of block device `disk` below `roots` (`fwrev`, `size`), trimmed;
/// `None` when absent or unreadable.
pub fn block_attr(roots: &Roots, disk: &str, rel: &str) -> Option<String> {
    let p = roots.sys.join("class/block").join(disk).join(rel);
    let bytes = crate::input::read_regular(&p, rel, 4096).ok()?;
    let t = String::from_utf8_lossy(&bytes).trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// Whether block device `disk` below `roots` is an MMC or SD card (its `device/type`).
pub fn is_card(roots: &Roots, disk: &str) -> bool {
    block_attr(roots, disk, "device/type")
        .as_deref()
        .and_then(crate::device::mmc::CardKind::from_sysfs_type)
        .is_some()
}

/// One device of `--scan`'s list.
pub fn scan_entry(name: &str, kind: &str, protocol: &str) -> Value {
    json!({ "name": name, "info_name": name, "type": kind, "protocol": protocol })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::emmc::EmmcWear;
    use crate::health::{emmc_verdict, smart, smart_verdict, test_options};

    fn health_of(a: u8, b: u8, p: u8) -> Health {
        let wear = EmmcWear::from_raw("t".into(), Some(8), a, b, p);
        let mut h = Health::new("sim:emmc-8g", "t".into(), &test_options());
        let (status, worst, reasons) = emmc_verdict(&wear, 80.0);
        (h.status, h.worst_used_percent, h.reasons) = (status, worst, reasons);
        h.emmc = Some(wear);
        h
    }

    /// The answer, read back as smartctl's JSON by flashscope's own SMART mapping,
    /// passes or fails exactly where the eMMC verdict does, and is unknown exactly where
    /// it is unknown, over every life-time and pre-EOL code.
    #[test]
    fn the_nvme_shaped_answer_keeps_the_emmc_verdict() {
        for a in 0..=12u8 {
            for b in [0u8, 1, 5, 8, 10, 11, 12] {
                for p in 0..=4u8 {
                    let h = health_of(a, b, p);
                    let mut doc = envelope(&[], 0, 0, &[]);
                    add_health(&mut doc, &h);
                    let w = smart::parse("x", doc.to_string().as_bytes()).unwrap();
                    let (s, _, _) = smart_verdict(&w, 80.0);
                    let case = format!("a={a:#x} b={b:#x} pre_eol={p}: {doc}");
                    assert_eq!(s == Status::Unknown, h.status == Status::Unknown, "{case}");
                    assert_eq!(s.failed(), h.status.failed(), "{case}");
                    assert_eq!(
                        doc.pointer("/smart_status/passed").and_then(Value::as_bool),
                        (h.status != Status::Unknown).then(|| !h.status.failed()),
                        "{case}"
                    );
                }
            }
        }
    }

    #[test]
    fn used_is_the_upper_band_bound_and_spare_a_documented_level() {
        let mut doc = envelope(&[], 0, 0, &[]);
        let (bits, _) = add_health(&mut doc, &health_of(0x03, 0x07, 2));
        let log = &doc["nvme_smart_health_information_log"];
        assert_eq!(log["percentage_used"], 70);
        assert_eq!(log["available_spare"], SPARE_WARNING);
        assert_eq!(log["available_spare_threshold"], SPARE_THRESHOLD);
        assert_eq!(log["critical_warning"], 1);
        assert_eq!(bits, exit_bit::DISK_FAILING);
        let mut doc = envelope(&[], 0, 0, &[]);
        let (bits, _) = add_health(&mut doc, &health_of(0x01, 0x02, 1));
        let log = &doc["nvme_smart_health_information_log"];
        assert_eq!(log["percentage_used"], 20);
        assert_eq!(log["available_spare"], SPARE_NORMAL);
        assert_eq!(log["critical_warning"], 0);
        assert_eq!(doc["smart_status"]["passed"], true);
        assert_eq!(bits, 0);
        // Nothing defined: no log, no status, bit 2; never a made-up 0 % used.
        let mut doc = envelope(&[], 0, 0, &[]);
        let (bits, why) = add_health(&mut doc, &health_of(0, 0, 0));
        assert!(
            doc.get("nvme_smart_health_information_log").is_none(),
            "{doc}"
        );
        assert!(doc.get("smart_status").is_none(), "{doc}");
        assert_eq!(doc["smart_support"]["available"], false);
        assert_eq!(bits, exit_bit::SMART_FAILED);
        assert!(why.is_some());
    }

    #[test]
    fn asctime_is_smartctls_calendar_line() {
        // smartctl 7.3 printed this pair on this machine (tests/data/smartctl).
        assert_eq!(asctime(1_795_879_389), "Sat Nov 28 15:23:09 2026 UTC");
        assert_eq!(asctime(0), "Thu Jan  1 00:00:00 1970 UTC");
    }
}
