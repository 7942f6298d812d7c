//! Wear and end of life, read from what the device reports — never measured, never
//! guessed: eMMC `life_time` / `pre_eol_info` (sysfs, else the EXT_CSD register), SD cards
//! (which have no standard wear counter: said so), and SMART through `smartctl --json`
//! for SATA, NVMe, SAS and USB-bridged disks.
//!
//! The device's attributes are read through [`CardAttrs`]: a sysfs directory below an
//! injectable root ([`Roots`], so recorded trees test every path), or the attribute map a
//! simulated card presents. The verdict rules live in [`verdict`].

pub mod projection;
pub mod smart;
pub mod smartctl;

use crate::device::emmc::{self, EmmcWear, ExtCsd, LifeTime, PreEol};
use crate::device::mmc::{self, CardAttrs, CardKind};
use crate::device::TargetSpec;
use crate::platform::Roots;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use smart::SmartWear;
use std::path::{Path, PathBuf};

/// The health verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// Used at or past `--max-wear`, or the reserved blocks at the warning level.
    Worn,
    /// A life-time band exceeded, the reserved blocks urgent, the drive's own SMART
    /// assessment failed, or 100 % of the rated life used.
    EndOfLife,
    /// No source of wear data.
    Unknown,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Worn => "worn",
            Status::EndOfLife => "end_of_life",
            Status::Unknown => "unknown",
        }
    }

    /// The `health_status` metric: 0 ok, 1 worn, 2 end of life, -1 unknown.
    pub fn metric(self) -> f64 {
        match self {
            Status::Ok => 0.0,
            Status::Worn => 1.0,
            Status::EndOfLife => 2.0,
            Status::Unknown => -1.0,
        }
    }

    /// Whether the device failed the check (exit 3).
    pub fn failed(self) -> bool {
        matches!(self, Status::Worn | Status::EndOfLife)
    }
}

/// What `health` is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// Used percent at or above which the device counts as worn (1-100).
    pub max_wear_percent: f64,
    /// An EXT_CSD dump to decode instead of reading the device's own attributes.
    pub ext_csd: Option<PathBuf>,
    /// Where `/sys` is (a recorded tree in tests).
    pub roots: Roots,
}

/// Parse `--max-wear`: a percentage from 1 to 100, with or without `%` (`80%` or `80`).
/// Fractions such as `0.8` are refused rather than read as 0.8 %.
pub fn parse_max_wear(text: &str) -> Result<f64> {
    let t = text.trim();
    let digits = t.strip_suffix('%').unwrap_or(t).trim();
    match digits.parse::<f64>() {
        Ok(p) if p.is_finite() && (1.0..=100.0).contains(&p) => Ok(p),
        _ => Err(Error::usage(format!(
            "--max-wear '{text}' must be a percentage from 1 to 100, e.g. 80% or 80 (a fraction like 0.8 is not accepted)"
        ))),
    }
}

/// What an SD card's registers claim (there is no wear counter to read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SdFacts {
    pub manufacturer: Option<String>,
    pub product: Option<String>,
    pub made: Option<String>,
    /// The logo marks the SD Status register claims (C10, U3, V30, A2).
    pub claims: Vec<String>,
    pub au_bytes: Option<u64>,
    /// Whether the kernel exposed the SD Status register (`ssr`, Linux 5.x and later).
    pub ssr_read: bool,
}

/// The health of one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Health {
    /// The target as given.
    pub spec: String,
    /// What the device is, in words ("eMMC (mmcblk0, SanDisk SEM16G)").
    pub device: String,
    pub status: Status,
    /// The used percent the verdict judged (upper band bound for eMMC).
    pub worst_used_percent: Option<f64>,
    pub max_wear_percent: f64,
    /// Why the verdict, one sentence each.
    pub reasons: Vec<String>,
    /// For `unknown`: which source of wear data the device lacks and what would give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lacks: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emmc: Option<EmmcWear>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smart: Option<SmartWear>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sd: Option<SdFacts>,
    /// Things met on the way (a reversed dump, a reserved code, smartctl's messages).
    pub notes: Vec<String>,
    /// The device's model and serial as its sysfs attributes give them (below the same
    /// root as the wear data, so a recorded tree labels its own device).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// When each area reaches `max_wear_percent`, from this reading and the stored runs of
    /// the same device ([`projection`]); empty when none could be made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projection: Vec<projection::WearProjection>,
    /// Why there is no projection (one reading, readings too close, no steady rate, no
    /// history), or that the limit is reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection_note: Option<String>,
}

impl Health {
    fn new(spec: &str, device: String, opts: &Options) -> Health {
        Health {
            spec: spec.to_string(),
            device,
            status: Status::Unknown,
            worst_used_percent: None,
            max_wear_percent: opts.max_wear_percent,
            reasons: Vec::new(),
            lacks: None,
            emmc: None,
            smart: None,
            sd: None,
            notes: Vec::new(),
            model: None,
            serial: None,
            projection: Vec::new(),
            projection_note: None,
        }
    }

    /// The used life this reading gives, as a band of percent for each area that reports
    /// one: eMMC type A and B (10 % steps), a drive's rated life (a whole percent).
    pub fn wear_bands(&self) -> Vec<(&'static str, f64, f64)> {
        let mut out = Vec::new();
        if let Some(w) = &self.emmc {
            for (area, band) in [
                ("type A memory", &w.life_time_a),
                ("type B memory", &w.life_time_b),
            ] {
                if let LifeTime::Used {
                    min_percent,
                    max_percent,
                    ..
                } = band
                {
                    out.push((area, f64::from(*min_percent), f64::from(*max_percent)));
                }
            }
        }
        if let Some(p) = self.smart.as_ref().and_then(|s| s.percentage_used.as_ref()) {
            out.push(("rated life", p.value, p.value + 1.0));
        }
        out
    }

    fn unknown(mut self, lacks: String) -> Health {
        self.status = Status::Unknown;
        self.lacks = Some(lacks);
        self
    }
}

/// The verdict on eMMC fields: end of life at band 0x0B or pre-EOL urgent; worn when a
/// band's upper bound reaches `max_wear` or pre-EOL warns; ok when some figure is defined;
/// else unknown. Returns the status, the worst used percent and the reasons.
pub fn emmc_verdict(w: &EmmcWear, max_wear: f64) -> (Status, Option<f64>, Vec<String>) {
    let mut j = Judge::default();
    let worst = [w.life_time_a.used_ratio(), w.life_time_b.used_ratio()]
        .into_iter()
        .flatten()
        .map(|r| r * 100.0)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    for (area, lt) in [("type A", &w.life_time_a), ("type B", &w.life_time_b)] {
        match lt {
            LifeTime::Exceeded { .. } => j.raise(
                Status::EndOfLife,
                format!("{area} memory has exceeded its estimated life (0x0B)"),
            ),
            LifeTime::Used { max_percent, .. } if f64::from(*max_percent) >= max_wear => j.raise(
                Status::Worn,
                format!(
                    "{area} memory is up to {max_percent} % used, at or past the {max_wear} % limit (--max-wear)"
                ),
            ),
            _ => {}
        }
    }
    match w.pre_eol {
        PreEol::Urgent { .. } => j.raise(
            Status::EndOfLife,
            "pre-EOL is urgent: 90 % of the reserved blocks are consumed".to_string(),
        ),
        PreEol::Warning { .. } => j.raise(
            Status::Worn,
            "pre-EOL warns: 80 % of the reserved blocks are consumed".to_string(),
        ),
        _ => {}
    }
    if !w.any_defined() {
        return (Status::Unknown, None, j.reasons);
    }
    (j.status, worst, j.reasons)
}

/// The verdict on SMART figures: end of life when the drive's assessment failed, 100 % or
/// more used, or NVMe critical warning bit 2 (reliability degraded) or 3 (read-only);
/// worn at `max_wear` or when the spare fell below its threshold (bit 0).
pub fn smart_verdict(w: &SmartWear, max_wear: f64) -> (Status, Option<f64>, Vec<String>) {
    let mut j = Judge::default();
    if w.passed == Some(false) {
        j.raise(
            Status::EndOfLife,
            "the drive's own SMART assessment FAILED".to_string(),
        );
    }
    let used = w.percentage_used.as_ref().map(|p| p.value);
    if let Some(u) = used {
        if u >= 100.0 {
            j.raise(
                Status::EndOfLife,
                format!("{u} % of the rated life is used"),
            );
        } else if u >= max_wear {
            j.raise(
                Status::Worn,
                format!("{u} % of the rated life is used, at or past the {max_wear} % limit (--max-wear)"),
            );
        }
    }
    if let Some(c) = w.critical_warning {
        if c & 0b1100 != 0 {
            j.raise(
                Status::EndOfLife,
                format!("NVMe critical warning 0x{c:02x}: reliability degraded or media read-only"),
            );
        } else if c & 1 != 0 {
            j.raise(
                Status::Worn,
                format!("NVMe critical warning 0x{c:02x}: available spare below its threshold"),
            );
        }
    }
    if !w.any_figure() {
        return (Status::Unknown, None, j.reasons);
    }
    (j.status, used, j.reasons)
}

/// A verdict being built: the worst status raised so far and every reason.
struct Judge {
    status: Status,
    reasons: Vec<String>,
}

impl Default for Judge {
    fn default() -> Self {
        Judge {
            status: Status::Ok,
            reasons: Vec::new(),
        }
    }
}

impl Judge {
    fn raise(&mut self, s: Status, why: String) {
        self.reasons.push(why);
        if rank(s) > rank(self.status) {
            self.status = s;
        }
    }
}

fn rank(s: Status) -> u8 {
    match s {
        Status::Unknown => 0,
        Status::Ok => 1,
        Status::Worn => 2,
        Status::EndOfLife => 3,
    }
}

/// The sysfs root and kernel name a path target resolves to.
struct BlockTarget {
    /// Whole-disk kernel name (`mmcblk0`, `sda`, `nvme0n1`).
    disk: String,
    /// `SYS/class/block/DISK`.
    dir: PathBuf,
}

fn resolve_block(spec: &TargetSpec, path: &Path, roots: &Roots) -> Result<Option<BlockTarget>> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let class = roots.sys.join("class/block");
    let injected = roots.sys != Path::new("/sys");
    let name = match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => {
            let (maj, min) = (rustix::fs::major(m.rdev()), rustix::fs::minor(m.rdev()));
            std::fs::canonicalize(roots.sys.join(format!("dev/block/{maj}:{min}")))
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .or_else(|| path.file_name().map(|n| n.to_string_lossy().into_owned()))
        }
        Ok(_) => return Ok(None),
        // A recorded tree describes devices this machine does not have: the name is
        // the path's last component.
        Err(_) if injected => path.file_name().map(|n| n.to_string_lossy().into_owned()),
        Err(e) => {
            return Err(Error::io(format!("examining target '{spec}'"), e));
        }
    };
    let Some(name) = name else {
        return Err(Error::usage(format!(
            "target '{spec}' names no block device"
        )));
    };
    let mut dir = class.join(&name);
    if !dir.exists() {
        return Err(Error::runtime(format!(
            "target '{spec}': no {} in sysfs, so nothing says what the device is",
            dir.display()
        )));
    }
    let mut disk = name;
    if dir.join("partition").exists() {
        if let Some(parent) = std::fs::canonicalize(&dir)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
        {
            if let Some(n) = parent.file_name() {
                disk = n.to_string_lossy().into_owned();
                dir = class.join(&disk);
            }
        }
    }
    Ok(Some(BlockTarget { disk, dir }))
}

/// Assess the wear of `target` (a device path or `sim:` spec; `None` with `--ext-csd`
/// alone). Reads only: sysfs attributes, an EXT_CSD dump or register, smartctl's report.
pub fn assess(target: Option<&TargetSpec>, opts: &Options) -> Result<Health> {
    let dump = match &opts.ext_csd {
        Some(p) => Some((p.clone(), read_dump(p)?)),
        None => None,
    };
    if let Some((path, x)) = &dump {
        let label = match target {
            Some(t) => format!("eMMC {t} (EXT_CSD dump)"),
            None => format!("eMMC EXT_CSD dump {}", path.display()),
        };
        let spec = target.map_or_else(|| path.display().to_string(), |t| t.to_string());
        let mut h = Health::new(&spec, label, opts);
        if x.reversed {
            h.notes.push(format!(
                "{} lists the register from byte 511 down to 0, as older Linux kernels' debugfs printed it; it was read in that order",
                path.display()
            ));
        }
        let wear = x.wear(format!("EXT_CSD dump {}", path.display()));
        return Ok(with_emmc(h, wear, opts));
    }
    let Some(target) = target else {
        return Err(Error::usage(
            "health needs a TARGET (a device or sim:PRESET) or --ext-csd FILE",
        ));
    };
    match target.names() {
        crate::device::Spec::Sim(cfg) => {
            let attrs = cfg.card_attributes();
            let what = match attrs.get("type").map(String::as_str) {
                Some("MMC") => "simulated eMMC",
                Some("SD") => "simulated SD card",
                _ => "simulated flash device",
            };
            let h = Health::new(target.as_str(), format!("{what} ({target})"), opts);
            if attrs.is_empty() {
                return Ok(h.unknown(
                    "it presents no MMC/SD registers (card=none: a USB stick, SSD or raw NAND) and a simulated device has no SMART data, so there is no source of wear data".to_string(),
                ));
            }
            card(h, &attrs, ReadNow::default(), opts)
        }
        crate::device::Spec::Path(path) => {
            let meta = std::fs::metadata(path);
            let is_dir = meta.as_ref().is_ok_and(|m| m.is_dir());
            let Some(block) = resolve_block(target, path, &opts.roots)? else {
                let what = if is_dir {
                    "a directory"
                } else {
                    "a regular file"
                };
                let h = Health::new(target.as_str(), format!("{what} ({target})"), opts);
                return Ok(h.unknown(format!(
                    "{what} has no wear data of its own: it lives on a device; run health on that device (e.g. /dev/mmcblk0, /dev/sda)"
                )));
            };
            block_device(target, &block, opts)
        }
    }
}

fn read_dump(path: &Path) -> Result<ExtCsd> {
    // A hex dump with line breaks is a little over 1 KiB; anything much larger is not one.
    let data = crate::input::read_regular(path, "EXT_CSD dump", 64 << 10)?;
    ExtCsd::parse(&path.display().to_string(), &data)
}

/// What a device is, where that explains or bounds what read timings can show of a flash
/// geometry (`geometry_note`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeometryNote {
    /// In words, e.g. "zram0, a RAM-backed block device (zram), has no flash medium of its
    /// own".
    pub words: String,
    /// A step in the read timings cannot be a boundary of the device's own medium: zram,
    /// or a loop device over a file that a kernel filesystem maps onto the host's memory or
    /// disk. A geometry found there is the host's, so no answer may name one. Not set for a
    /// loop over a block device (it passes reads through), over a file on FUSE (the
    /// program serving it decides what a read costs, e.g. `sim serve`'s card), nor for
    /// device-mapper or RAID devices (they may sit on flash) or an NVMe SSD.
    pub bounds_steps: bool,
}

/// A loop device's backing file in words, and whether it lies on a kernel filesystem (in
/// memory or on the host's disk) rather than being a block device or a file on FUSE.
fn loop_backing(dir: &Path) -> Option<(String, bool)> {
    let file = std::fs::read_to_string(dir.join("loop/backing_file")).ok()?;
    let file = file.trim();
    let shown = crate::input::printable(file);
    // sysfs loop/dio: 1 when the loop reads its file with direct I/O (no page cache).
    let dio = std::fs::read_to_string(dir.join("loop/dio")).is_ok_and(|d| d.trim() == "1");
    let path = Path::new(file);
    if std::fs::metadata(path).is_ok_and(|m| {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_block_device()
    }) {
        return Some((
            format!("a loop device over the block device {shown}"),
            false,
        ));
    }
    let magic = crate::sys::statfs_magic(path);
    let fs = magic.map(crate::sys::fs_label);
    let on = fs.as_deref().map_or(String::new(), |f| {
        format!(" on {}", crate::input::printable(f))
    });
    let how = if dio {
        "direct I/O: reads go through that filesystem to where it keeps the file, not through the page cache"
    } else {
        "reads go through that filesystem and the page cache"
    };
    let fuse = magic == Some(crate::sys::magic::FUSE);
    Some((
        format!("a loop device over the file {shown}{on} ({how})"),
        !fuse,
    ))
}

/// What a block device is when sysfs gives it no hardware device (a loop, zram,
/// device-mapper or RAID device), in words: e.g. "zram0, a RAM-backed block device
/// (zram)"; `None` when it has hardware of its own. The one test `health` and `align` use.
fn virtual_kind(block: &BlockTarget) -> Option<GeometryNote> {
    if block.dir.join("device").exists() {
        return None;
    }
    let disk = crate::input::printable(&block.disk);
    let (what, bounds_steps) = if block.disk.starts_with("zram") {
        ("a RAM-backed block device (zram)".to_string(), true)
    } else if block.disk.starts_with("loop") {
        loop_backing(&block.dir).unwrap_or_else(|| ("a loop device".to_string(), false))
    } else if block.disk.starts_with("dm-") {
        ("a device-mapper device".to_string(), false)
    } else if block.disk.starts_with("md") {
        ("a software RAID device".to_string(), false)
    } else {
        ("a virtual block device".to_string(), false)
    };
    Some(GeometryNote {
        words: format!("{disk}, {what}, has no flash medium of its own"),
        bounds_steps,
    })
}

/// What the device behind `spec` is, when that explains why reads show no flash geometry:
/// a virtual block device (RAM-backed, a loop, device-mapper, RAID) or an NVMe SSD (its
/// controller maps pages, so reads show no erase blocks). `None` for anything else, and
/// for a target that is no block device or cannot be examined.
pub fn geometry_note(spec: &TargetSpec) -> Option<GeometryNote> {
    geometry_note_in(spec, &Roots::system())
}

/// [`geometry_note`] with `/sys` (and `/proc`) where `roots` says.
pub fn geometry_note_in(spec: &TargetSpec, roots: &Roots) -> Option<GeometryNote> {
    let block = resolve_block(spec, spec.path()?, roots).ok()??;
    if let Some(v) = virtual_kind(&block) {
        return Some(v);
    }
    block.disk.starts_with("nvme").then(|| GeometryNote {
        words: format!(
            "{} is an NVMe SSD: its controller maps pages behind a large mapping, so reads show no erase blocks",
            crate::input::printable(&block.disk)
        ),
        bounds_steps: false,
    })
}

/// What a target is to `flashscope smartctl`: which ones flashscope answers itself and
/// which it hands to the real smartctl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SmartctlKind {
    /// A simulated device: answered from its card attributes.
    Sim,
    /// An MMC or SD card (`disk`, e.g. `mmcblk0`): answered from `health`.
    Card { disk: String },
    /// A disk with hardware of its own that is no MMC/SD card (SATA, SCSI, USB, NVMe):
    /// its SMART data is the real smartctl's.
    Disk { disk: String },
    /// A regular file, directory or virtual block device: no device, no wear data.
    NoDevice,
}

/// Which [`SmartctlKind`] `spec` is, reading sysfs below `roots`. Errors as `health`'s
/// (no such target, no sysfs entry).
pub fn smartctl_kind(spec: &TargetSpec, roots: &Roots) -> Result<SmartctlKind> {
    let Some(path) = spec.path() else {
        return Ok(SmartctlKind::Sim);
    };
    let Some(block) = resolve_block(spec, path, roots)? else {
        return Ok(SmartctlKind::NoDevice);
    };
    if virtual_kind(&block).is_some() {
        return Ok(SmartctlKind::NoDevice);
    }
    let disk = block.disk;
    Ok(if smartctl::is_card(roots, &disk) {
        SmartctlKind::Card { disk }
    } else {
        SmartctlKind::Disk { disk }
    })
}

fn block_device(spec: &TargetSpec, block: &BlockTarget, opts: &Options) -> Result<Health> {
    let device_dir = block.dir.join("device");
    let disk = &block.disk;
    if virtual_kind(block).is_some() {
        let h = Health::new(spec.as_str(), format!("virtual block device {disk}"), opts);
        return Ok(h.unknown(format!(
            "{disk} has no hardware device in sysfs (a loop, zram, device-mapper or RAID device): it has no medium and no wear data of its own; run health on the device underneath"
        )));
    }
    let attrs: PathBuf = device_dir.clone();
    // As device::sysfs reads them for /sys: device/model (SCSI, USB, NVMe) or device/name
    // (MMC/SD); device/serial (MMC/SD) or device/wwid (SCSI).
    // An attribute the kernel refuses to read (a USB disk's `wwid` gives ENXIO or EINVAL)
    // is unknown with its reason, never the end of the assessment (issue 47).
    let mut unread = Vec::new();
    let mut soft = |name: &str| identity_attr(&attrs, name, &mut unread);
    let model = soft("model").or_else(|| soft("name"));
    let serial = soft("serial").or_else(|| soft("wwid"));
    let card_type = soft("type");
    let vendor = soft("vendor");
    if card_type
        .as_deref()
        .and_then(CardKind::from_sysfs_type)
        .is_some()
    {
        let now = ReadNow {
            dev_node: (!injected(opts)).then(|| PathBuf::from(format!("/dev/{disk}"))),
            debugfs: ext_csd_in_debugfs(&device_dir, &opts.roots),
            kernel: true,
        };
        let mut h = Health::new(spec.as_str(), String::new(), opts);
        (h.model, h.serial) = (model, serial);
        h.notes.append(&mut unread);
        return card(h, &attrs, now, opts);
    }
    // Not MMC/SD: SMART through smartctl.
    let words = [vendor, model.clone()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let kind = if disk.starts_with("nvme") {
        "NVMe drive"
    } else if disk.starts_with("sd") {
        "SCSI/SATA/USB disk"
    } else {
        "block device"
    };
    let device = if words.is_empty() {
        format!("{kind} {disk}")
    } else {
        format!("{kind} {disk} ({words})")
    };
    let mut h = Health::new(spec.as_str(), device, opts);
    (h.model, h.serial) = (model, serial);
    h.notes.append(&mut unread);
    let dev = format!("/dev/{disk}");
    match smart::run_smartctl(&dev)? {
        smart::Run::NotInstalled => Ok(h.unknown(format!(
            "{disk} is not an MMC/SD device, so it has no eMMC life-time attributes; its wear is in SMART data, which needs smartctl: install smartmontools (apt-get install smartmontools) and run again, as root"
        ))),
        smart::Run::Output(out) => {
            let w = smart::parse(&format!("smartctl's output for {dev}"), &out)?;
            h.notes.extend(w.messages.iter().map(|m| format!("smartctl: {m}")));
            let (status, worst, reasons) = smart_verdict(&w, opts.max_wear_percent);
            h.status = status;
            h.worst_used_percent = worst;
            h.reasons = reasons;
            if status == Status::Unknown {
                let said = w.messages.first().map_or(String::new(), |m| {
                    format!(" (smartctl: {m})")
                });
                h.lacks = Some(format!(
                    "smartctl returned no SMART health data for {dev}{said}; run as root, and for a USB bridge try smartctl -d sat"
                ));
            } else if w.percentage_used.is_none() && w.available_spare.is_none() {
                h.notes.push(format!(
                    "{dev} reports no wear figure (no percentage used, endurance indicator or known wear attribute): a hard disk, or an SSD whose vendor keeps wear in attributes flashscope does not map; the verdict rests on the drive's overall assessment"
                ));
            }
            h.smart = Some(w);
            Ok(h)
        }
    }
}

/// An identity attribute (model, serial, type, vendor) of a device directory: `None` when
/// absent, and `None` with "NAME unknown, because …" in `unread` when the kernel refuses
/// to read it.
fn identity_attr(attrs: &dyn CardAttrs, name: &str, unread: &mut Vec<String>) -> Option<String> {
    match attrs.attr(name) {
        Ok(v) => v,
        Err(e) => {
            unread.push(format!("{name} unknown, because {e}"));
            None
        }
    }
}

fn injected(opts: &Options) -> bool {
    opts.roots.sys != Path::new("/sys")
}

/// Where an eMMC's EXT_CSD register can be read as it is now, rather than as the kernel
/// read it when it initialised the card.
#[derive(Default)]
struct ReadNow {
    /// The block device, for `MMC_IOC_CMD` (needs root: CAP_SYS_RAWIO).
    dev_node: Option<PathBuf>,
    /// The card's `ext_csd` in debugfs, which the kernel reads again from the card at each
    /// read ([`ext_csd_in_debugfs`]).
    debugfs: Option<PathBuf>,
    /// The attributes are a kernel's (a real or recorded sysfs), not a simulated card's.
    kernel: bool,
}

/// Where debugfs prints this card's EXT_CSD (`/sys/kernel/debug/mmc0/mmc0:0001/ext_csd`):
/// the card's sysfs directory (`device_dir` resolved) is `mmcN:RCA`, under its host `mmcN`.
fn ext_csd_in_debugfs(device_dir: &Path, roots: &crate::platform::Roots) -> Option<PathBuf> {
    let card = std::fs::canonicalize(device_dir).ok()?;
    let name = card.file_name()?.to_str()?;
    let (host, rca) = name.split_once(':')?;
    let host_ok = host
        .strip_prefix("mmc")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let rca_ok = !rca.is_empty() && rca.bytes().all(|b| b.is_ascii_hexdigit());
    (host_ok && rca_ok).then(|| {
        roots
            .sys
            .join("kernel/debug")
            .join(host)
            .join(name)
            .join("ext_csd")
    })
}

/// An MMC or SD card, read through its attributes; `now` says where an eMMC's EXT_CSD
/// register can be read as it is now.
fn card(mut h: Health, attrs: &dyn CardAttrs, now: ReadNow, opts: &Options) -> Result<Health> {
    let id = mmc::decode_attrs(attrs);
    let product = id.cid.as_ref().map(|c| {
        format!("{} {}", c.manufacturer_label(), c.product_name)
            .trim()
            .to_string()
    });
    let place = attrs.place();
    if h.device.is_empty() {
        let what = match id.kind {
            Some(CardKind::Mmc) => "eMMC/MMC",
            _ => "SD card",
        };
        h.device = match &product {
            Some(p) => format!("{what} ({p}) at {place}"),
            None => format!("{what} at {place}"),
        };
    }
    h.notes.extend(id.notes.iter().cloned());
    if id.kind == Some(CardKind::Sd) {
        let cid = id.cid.as_ref();
        h.sd = Some(SdFacts {
            manufacturer: cid.map(|c| c.manufacturer_label()),
            product: cid.map(|c| c.product_name.clone()),
            made: cid.and_then(|c| match (c.year, c.month) {
                (Some(y), Some(m)) => Some(format!("{y}-{m:02}")),
                (Some(y), None) => Some(y.to_string()),
                _ => None,
            }),
            claims: id.ssr.as_ref().map(|s| s.marks.clone()).unwrap_or_default(),
            au_bytes: id.ssr.as_ref().and_then(|s| s.au_bytes),
            ssr_read: id.ssr.is_some(),
        });
        return Ok(h.unknown(
            "an SD card has no standard wear counter: the SD specification's registers (CID, CSD, SD Status) hold identity, capacity and speed classes but no life-time estimate, and Linux exposes none; some industrial cards report wear through vendor commands (CMD56), which flashscope does not send".to_string(),
        ));
    }
    // eMMC. The kernel reads life_time and pre_eol_info once, when it initialises the card
    // (LKML, 2022-03-09): on a board up for months they hold the wear of its boot. So the
    // register is read as it is now first, through MMC_IOC_CMD, else through debugfs (the
    // kernel reads it from the card again at each read); the attributes come last, and
    // say so.
    let rev = match attrs.attr("rev")? {
        Some(t) => Some(emmc::parse_rev(&t)?),
        None => None,
    };
    let mut not_now = Vec::new();
    if let Some(node) = &now.dev_node {
        match std::fs::File::open(node).and_then(|f| crate::sys::mmc_read_ext_csd(&f)) {
            Ok(bytes) => {
                let x = ExtCsd::parse(&node.display().to_string(), &bytes)?;
                let wear = x.wear(format!(
                    "EXT_CSD read now with MMC_IOC_CMD from {}",
                    node.display()
                ));
                return Ok(with_emmc(h, wear, opts));
            }
            Err(e) => not_now.push(format!("MMC_IOC_CMD on {}: {e}", node.display())),
        }
    }
    if let Some(path) = &now.debugfs {
        match read_dump(path) {
            Ok(x) => {
                let wear = x.wear(format!(
                    "EXT_CSD read now from {} (debugfs reads it from the card at each read)",
                    path.display()
                ));
                return Ok(with_emmc(h, wear, opts));
            }
            Err(e) => not_now.push(crate::input::printable(&e.to_string()).into_owned()),
        }
    }
    let life = attrs.attr("life_time")?;
    let pre = attrs.attr("pre_eol_info")?;
    if let (Some(life), Some(pre)) = (&life, &pre) {
        let (a, b) = emmc::parse_life_time(life)?;
        let p = emmc::parse_pre_eol(pre)?;
        let source = if now.kernel {
            h.notes.push(format!(
                "life_time and pre_eol_info are what the kernel read when it initialised the card (at boot or insertion), not now: wear since then is not in them; the register could not be read now ({}). As root with debugfs mounted, or with --ext-csd FILE, the figures are current",
                if not_now.is_empty() {
                    "no device node or debugfs entry for this card".to_string()
                } else {
                    not_now.join("; ")
                }
            ));
            format!("sysfs life_time and pre_eol_info at {place}, as of card init")
        } else {
            format!("sysfs life_time and pre_eol_info at {place}")
        };
        let wear = EmmcWear::from_raw(source, rev, a, b, p);
        return Ok(with_emmc(h, wear, opts));
    }
    let missing = "the kernel exposes no life_time / pre_eol_info (they came with Linux 4.13)";
    Ok(h.unknown(if not_now.is_empty() {
        format!(
            "{missing}, and the EXT_CSD register cannot be read here; give a dump with --ext-csd FILE (e.g. /sys/kernel/debug/mmc0/mmc0:0001/ext_csd)"
        )
    } else {
        format!(
            "{missing}, and reading the EXT_CSD register failed ({}); it needs root (CAP_SYS_RAWIO) or debugfs, or give a dump with --ext-csd FILE",
            not_now.join("; ")
        )
    }))
}

fn with_emmc(mut h: Health, wear: EmmcWear, opts: &Options) -> Health {
    let (status, worst, reasons) = emmc_verdict(&wear, opts.max_wear_percent);
    h.status = status;
    h.worst_used_percent = worst;
    h.reasons = reasons;
    for (name, lt) in [
        ("life_time type A", &wear.life_time_a),
        ("life_time type B", &wear.life_time_b),
    ] {
        if let LifeTime::Reserved { raw } = lt {
            h.notes.push(format!(
                "{name} is 0x{raw:02x}, a code JEDEC reserves: no figure taken from it"
            ));
        }
    }
    if let PreEol::Reserved { raw } = wear.pre_eol {
        h.notes.push(format!(
            "pre_eol_info is 0x{raw:02x}, a code JEDEC reserves: no figure taken from it"
        ));
    }
    if status == Status::Unknown {
        h.lacks = Some(match wear.ext_csd_rev {
            Some(r) if r < emmc::FIRST_REV_WITH_WEAR => format!(
                "this eMMC's EXT_CSD revision {r} ({}) does not provide wear data: life-time estimation and pre-EOL information came with revision 7 (eMMC 5.0)",
                emmc::revision_name(r)
            ),
            _ => "the eMMC reports its life-time and pre-EOL fields as not defined (0x00) or with reserved codes".to_string(),
        });
    }
    h.emmc = Some(wear);
    h
}

/// What the exporters label the figures with: the target as given, its kind, and the
/// model and serial `assess` read with the wear data (the simulated card's model for
/// `sim:`). Nothing is opened or measured here.
pub fn target_info(h: &Health) -> crate::device::TargetInfo {
    use crate::device::TargetKind;
    // The spec a document recorded: read as written, to tell `sim:` from a path.
    let kind = TargetSpec::parse(&h.spec).map_or(TargetKind::File, |s| s.kind());
    let (model, serial) = match kind {
        TargetKind::Sim => (Some(crate::device::SIM_MODEL.to_string()), None),
        _ => (h.model.clone(), h.serial.clone()),
    };
    crate::device::TargetInfo {
        spec: h.spec.clone(),
        kind,
        model,
        serial,
        ..Default::default()
    }
}

/// The options of a test: the real `/sys`, worn at 80 %, no EXT_CSD dump.
#[cfg(test)]
pub(crate) fn test_options() -> Options {
    Options {
        max_wear_percent: 80.0,
        ext_csd: None,
        roots: Roots::system(),
    }
}

#[cfg(test)]
mod tests {
    use super::test_options as opts;
    use super::*;

    /// Issue 43: a loop device read with direct I/O was said to read "through its
    /// filesystem and the page cache", and a step on a loop over a file named an erase
    /// block. The words follow sysfs `loop/dio`, and a file on a kernel filesystem bounds
    /// what the timings may name.
    #[test]
    fn a_loop_over_a_file_says_how_it_reads_and_bounds_a_geometry() {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path().join("sys");
        let lo = sys.join("class/block/loop7/loop");
        std::fs::create_dir_all(&lo).unwrap();
        // The backing file on a real filesystem (statfs reads it).
        let img = dir.path().join("card.img");
        std::fs::write(&img, b"x").unwrap();
        std::fs::write(lo.join("backing_file"), format!("{}\n", img.display())).unwrap();
        let roots = Roots {
            proc: dir.path().join("proc"),
            sys: sys.clone(),
        };
        let spec = TargetSpec::parse(dir.path().join("loop7").to_str().unwrap()).unwrap();
        for (dio, direct) in [("1\n", true), ("0\n", false)] {
            std::fs::write(lo.join("dio"), dio).unwrap();
            let n = geometry_note_in(&spec, &roots).unwrap();
            assert!(n.bounds_steps, "{n:?}");
            assert!(n.words.contains("has no flash medium of its own"), "{n:?}");
            assert_eq!(n.words.contains("direct I/O"), direct, "{n:?}");
            assert_eq!(
                n.words
                    .contains("through that filesystem and the page cache"),
                !direct,
                "{n:?}"
            );
        }
        // A device-mapper device may sit on flash: it explains, it does not bound.
        std::fs::create_dir_all(sys.join("class/block/dm-3")).unwrap();
        let spec = TargetSpec::parse(dir.path().join("dm-3").to_str().unwrap()).unwrap();
        let n = geometry_note_in(&spec, &roots).unwrap();
        assert!(!n.bounds_steps, "{n:?}");
    }

    #[test]
    fn max_wear_takes_percentages_only() {
        assert_eq!(parse_max_wear("80%").unwrap(), 80.0);
        assert_eq!(parse_max_wear("80").unwrap(), 80.0);
        assert_eq!(parse_max_wear("100%").unwrap(), 100.0);
        assert_eq!(parse_max_wear("1").unwrap(), 1.0);
        for bad in ["0.8", "0", "101", "-5", "eighty", "", "80%%", "nan", "inf"] {
            let e = parse_max_wear(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains("--max-wear"), "{e}");
        }
    }

    fn wear(a: u8, b: u8, p: u8) -> EmmcWear {
        EmmcWear::from_raw("t".into(), Some(8), a, b, p)
    }

    #[test]
    fn emmc_verdicts_follow_the_rules() {
        let v = |a, b, p, m| emmc_verdict(&wear(a, b, p), m);
        assert_eq!(v(2, 1, 1, 80.0).0, Status::Ok);
        assert_eq!(v(2, 1, 1, 80.0).1, Some(20.0));
        // Upper band bound 80 % reaches an 80 % limit.
        assert_eq!(v(8, 1, 1, 80.0).0, Status::Worn);
        assert_eq!(v(7, 1, 1, 80.0).0, Status::Ok);
        assert_eq!(v(7, 1, 1, 70.0).0, Status::Worn);
        assert_eq!(v(1, 1, 2, 80.0).0, Status::Worn);
        assert_eq!(v(0x0b, 1, 1, 80.0).0, Status::EndOfLife);
        assert_eq!(v(1, 1, 3, 80.0).0, Status::EndOfLife);
        assert_eq!(v(0x0b, 1, 1, 80.0).1, Some(100.0));
        assert_eq!(v(0, 0, 0, 80.0).0, Status::Unknown);
        assert_eq!(v(0x0c, 0, 4, 80.0).0, Status::Unknown);
        // One defined field suffices for a verdict; the others are left out.
        assert_eq!(v(1, 0, 0, 80.0).0, Status::Ok);
    }

    #[test]
    fn smart_verdicts_follow_the_rules() {
        let mk = |used: Option<f64>, passed: Option<bool>, cw: Option<u8>| SmartWear {
            percentage_used: used.map(|value| smart::Sourced {
                value,
                source: "t".into(),
            }),
            passed,
            critical_warning: cw,
            ..SmartWear::default()
        };
        assert_eq!(
            smart_verdict(&mk(Some(5.0), Some(true), Some(0)), 80.0).0,
            Status::Ok
        );
        assert_eq!(
            smart_verdict(&mk(Some(85.0), None, None), 80.0).0,
            Status::Worn
        );
        assert_eq!(
            smart_verdict(&mk(Some(100.0), None, None), 80.0).0,
            Status::EndOfLife
        );
        assert_eq!(
            smart_verdict(&mk(Some(5.0), Some(false), None), 80.0).0,
            Status::EndOfLife
        );
        assert_eq!(
            smart_verdict(&mk(Some(5.0), None, Some(1)), 80.0).0,
            Status::Worn
        );
        assert_eq!(
            smart_verdict(&mk(Some(5.0), None, Some(4)), 80.0).0,
            Status::EndOfLife
        );
        assert_eq!(
            smart_verdict(&mk(None, None, None), 80.0).0,
            Status::Unknown
        );
        assert_eq!(
            smart_verdict(&mk(None, Some(true), None), 80.0).0,
            Status::Ok
        );
    }

    #[test]
    fn the_simulated_emmc_is_read_through_its_attributes() {
        let h = assess(Some(&crate::device::test_spec("sim:emmc-8g")), &opts()).unwrap();
        assert_eq!(h.status, Status::Ok);
        let w = h.emmc.unwrap();
        assert_eq!(w.life_time_a.used_ratio(), Some(0.2));
        assert_eq!(w.life_time_b.used_ratio(), Some(0.1));
        assert_eq!(w.pre_eol, PreEol::Normal { raw: 1 });
        assert_eq!(w.ext_csd_rev, Some(8));
        let old = assess(
            Some(&crate::device::test_spec(
                "sim:custom,card=mmc,ext_csd_rev=6,life_time=0x05/0x05",
            )),
            &opts(),
        )
        .unwrap();
        assert_eq!(old.status, Status::Unknown);
        assert!(old.lacks.unwrap().contains("revision 6"));
        let sd = assess(Some(&crate::device::test_spec("sim:sd-16g")), &opts()).unwrap();
        assert_eq!(sd.status, Status::Unknown);
        assert!(sd.lacks.unwrap().contains("no standard wear counter"));
        let usb = assess(Some(&crate::device::test_spec("sim:usb-32g")), &opts()).unwrap();
        assert_eq!(usb.status, Status::Unknown);
    }
}
