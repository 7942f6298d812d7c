//! `flashscope smartctl`: answer fleet tools that run smartctl (Scrutiny's collector) in
//! smartctl's JSON shape. eMMC and SD cards (and `sim:` targets) are answered from
//! `health`; SATA, SCSI, USB and NVMe disks are handed to the real smartctl with the same
//! arguments, whose output and exit status pass through unchanged. Builds no flashscope
//! document: the answer is smartctl's shape, by design (docs/smartctl.md).

use crate::health::smartctl::{self as shape, exit_bit, Identity, Want};
use crate::health::{self, SmartctlKind};
use crate::platform::Roots;
use serde_json::Value;

/// What was asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `--scan`: the devices flashscope or smartctl can answer for.
    Scan,
    /// `--info`, `--health`, `--xall` … on one device.
    Device { want: Want, target: String },
}

/// The parsed command line of the smartctl mode.
#[derive(Debug, Clone)]
pub struct Params {
    /// smartctl's `argv` as it is echoed in the answer (`smartctl` first).
    pub argv: Vec<String>,
    pub action: Action,
    /// `-d TYPE` as given (passed on to the real smartctl; a card is answered whatever it is).
    pub device_type: Option<String>,
    /// The wear at which a device counts as failing (health's `--max-wear`).
    pub max_wear_percent: f64,
    /// Where `/sys` is (a recorded tree in tests).
    pub roots: Roots,
    /// The arguments without flashscope's own options: what the real smartctl is given.
    pub pass_on: Vec<String>,
}

/// The answer: what goes to stdout, and the exit status (smartctl's bit mask).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub stdout: Vec<u8>,
    pub exit_status: u8,
}

/// A command line that did not parse: smartctl's JSON with the message, exit bit 0.
pub fn refused(argv: &[String], message: &str) -> Answer {
    finish(
        shape::envelope(
            argv,
            now(),
            exit_bit::COMMAND_LINE,
            &[(message.into(), true)],
        ),
        exit_bit::COMMAND_LINE,
    )
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn finish(mut doc: Value, status: u8) -> Answer {
    if let Some(s) = doc.pointer_mut("/smartctl/exit_status") {
        *s = status.into();
    }
    let mut stdout = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    stdout.push(b'\n');
    Answer {
        stdout,
        exit_status: status,
    }
}

/// Answer `p`.
pub fn answer(p: &Params) -> Answer {
    match &p.action {
        Action::Scan => scan(p),
        Action::Device { want, target } => device(p, *want, target),
    }
}

fn health_options(p: &Params) -> health::Options {
    health::Options {
        max_wear_percent: p.max_wear_percent,
        ext_csd: None,
        roots: p.roots.clone(),
    }
}

/// `--scan`: the MMC cards health has wear data for (an SD card, or an eMMC without
/// life-time fields, is left out with a message: Scrutiny reads a missing SMART status as
/// failed), then the disks the real smartctl's own scan lists.
fn scan(p: &Params) -> Answer {
    let opts = health_options(p);
    let mut devices = Vec::new();
    let mut messages = Vec::new();
    for disk in shape::mmc_disks(&p.roots) {
        if !shape::is_card(&p.roots, &disk) {
            continue;
        }
        let name = format!("/dev/{disk}");
        let Ok(spec) = crate::device::TargetSpec::parse(&name) else {
            continue;
        };
        match health::assess(Some(&spec), &opts) {
            Ok(h) if h.status != health::Status::Unknown => devices.push(shape::scan_entry(
                &name,
                shape::DEVICE_TYPE,
                shape::PROTOCOL,
            )),
            Ok(h) => messages.push((
                format!(
                    "{name} is left out: no wear data ({})",
                    h.lacks.unwrap_or_default()
                ),
                false,
            )),
            Err(e) => messages.push((format!("{name} is left out: {e}"), false)),
        }
    }
    match health::smart::run_with(&["--scan".to_string(), "--json".to_string()]) {
        Ok(Some((out, _))) => {
            let theirs: Value = serde_json::from_slice(&out).unwrap_or(Value::Null);
            for d in theirs
                .get("devices")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = d.get("name").and_then(Value::as_str).unwrap_or("");
                if !name.starts_with("/dev/mmcblk") && d.is_object() {
                    devices.push(d.clone());
                }
            }
        }
        Ok(None) => {}
        Err(e) => messages.push((format!("smartctl --scan: {e}"), false)),
    }
    let mut doc = shape::envelope(&p.argv, now(), 0, &messages);
    if !devices.is_empty() {
        if let Some(o) = doc.as_object_mut() {
            o.insert("devices".into(), devices.into());
        }
    }
    finish(doc, 0)
}

fn device(p: &Params, want: Want, target: &str) -> Answer {
    let fail = |bits: u8, message: String| {
        finish(
            shape::envelope(&p.argv, now(), bits, &[(message, true)]),
            bits,
        )
    };
    let spec = match crate::device::TargetSpec::parse(target) {
        Ok(s) => s,
        Err(e) => return fail(exit_bit::COMMAND_LINE, e.to_string()),
    };
    let kind = match health::smartctl_kind(&spec, &p.roots) {
        Ok(k) => k,
        Err(e) => return fail(exit_bit::DEVICE_OPEN, e.to_string()),
    };
    let mut id = Identity::card(target);
    match &kind {
        SmartctlKind::Disk { disk } => return hand_over(p, disk),
        SmartctlKind::NoDevice => {
            return fail(
                exit_bit::DEVICE_OPEN,
                format!("{target}: not an MMC/SD card or disk (a file or a virtual block device has no wear data of its own)"),
            )
        }
        SmartctlKind::Card { disk } => {
            id.firmware = shape::block_attr(&p.roots, disk, "device/fwrev");
            id.capacity_bytes = shape::block_attr(&p.roots, disk, "size")
                .and_then(|s| s.parse::<u64>().ok())
                .map(|sectors| sectors.saturating_mul(512));
        }
        SmartctlKind::Sim => {
            if let crate::device::Spec::Sim(cfg) = spec.names() {
                id.capacity_bytes = Some(cfg.size);
                if cfg.card_attributes().is_empty() {
                    (id.device_type, id.protocol) = ("scsi", "SCSI");
                }
            }
        }
    }
    let h = match health::assess(Some(&spec), &health_options(p)) {
        Ok(h) => h,
        Err(e) => return fail(exit_bit::DEVICE_OPEN, e.to_string()),
    };
    let info = health::target_info(&h);
    (id.model, id.serial) = (info.model, info.serial);
    let mut bits = 0;
    let mut messages = Vec::new();
    let mut body = Value::Object(Default::default());
    shape::add_identity(&mut body, &id);
    shape::add_support(&mut body, &h);
    if want.health {
        let (b, why) = shape::add_health(&mut body, &h);
        bits |= b;
        if let Some(why) = why {
            messages.push((format!("{target}: {why}"), true));
        }
    }
    let mut doc = shape::envelope(&p.argv, now(), bits, &messages);
    if let (Some(o), Value::Object(b)) = (doc.as_object_mut(), body) {
        o.extend(b);
    }
    finish(doc, bits)
}

/// A disk that is no MMC/SD card: the real smartctl answers, unchanged.
fn hand_over(p: &Params, disk: &str) -> Answer {
    match health::smart::run_with(&p.pass_on) {
        Ok(Some((stdout, code))) => Answer {
            stdout,
            // A smartctl a signal ended: its output may be cut; say "SMART command failed".
            exit_status: code
                .and_then(|c| u8::try_from(c).ok())
                .unwrap_or(exit_bit::SMART_FAILED),
        },
        Ok(None) => {
            let bits = exit_bit::DEVICE_OPEN;
            finish(
                shape::envelope(
                    &p.argv,
                    now(),
                    bits,
                    &[(format!("{disk} is not an MMC/SD card: its SMART data needs smartmontools' smartctl, which is not installed (apt-get install smartmontools)"), true)],
                ),
                bits,
            )
        }
        Err(e) => {
            let bits = exit_bit::SMART_FAILED;
            finish(
                shape::envelope(&p.argv, now(), bits, &[(e.to_string(), true)]),
                bits,
            )
        }
    }
}
