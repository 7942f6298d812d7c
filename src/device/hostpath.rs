//! The host path: what the link between the medium and the machine negotiated, read from
//! sysfs and debugfs. For an MMC/SD card: the bus timing mode, clock, bus width and signal
//! voltage from debugfs `mmcN/ios`, the card's own abilities from its SCR, and `cmdq_en`
//! (eMMC); for a USB disk: the link speed, the transport (bulk-only or UAS) and the bound
//! driver. Facts only: the ceiling they imply is `analysis::hostpath`'s.
//!
//! Every fact may be missing: debugfs unmounted or root-only, a trimmed kernel. A fact
//! that cannot be read is absent with "… unknown, because …" in `unknown`, never guessed.

use super::mmc::CardAttrs;
use super::scr::{decode_scr, ScrInfo};
use crate::vocab::hostpath::Timing;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// debugfs `ios` is a dozen short lines; anything much larger is not one.
const IOS_CAP_BYTES: u64 = 16 << 10;
/// How far up the device tree the USB device may sit above a disk (interface, host,
/// target, SCSI device: five levels on a real tree).
const MAX_ANCESTORS: usize = 12;

/// What debugfs `mmcN/ios` says the host and card negotiated.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Ios {
    /// The timing mode the words on `timing spec:` name; `None` for "invalid" or words
    /// this build does not know (then `timing_words` holds them).
    pub timing: Option<Timing>,
    /// The words in parentheses on the `timing spec:` line, as printed.
    pub timing_words: String,
    /// `clock:`, the clock the core asked for, in Hz.
    pub clock_hz: u64,
    /// `actual clock:`, the clock the controller made (only some drivers say), in Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_clock_hz: Option<u64>,
    /// `bus width:` in bits, from its words ("(4 bits)").
    pub bus_width_bits: Option<u8>,
    /// `signal voltage:` from its words ("3.30 V", "1.80 V", "1.20 V"); `None` on
    /// kernels before 3.x, which have no such line, or for "invalid".
    pub signal_voltage: Option<String>,
}

/// The value after `key:` on `line`, when the line has that key.
fn value_of<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let (k, v) = line.split_once(':')?;
    (k.trim() == key).then(|| v.trim())
}

/// The words in the last parentheses of `value` ("2 (sd high-speed)" → "sd high-speed").
fn words_of(value: &str) -> Option<&str> {
    let open = value.find('(')?;
    let close = value.rfind(')')?;
    (close > open).then(|| value[open + 1..close].trim())
}

/// "50000000 Hz" → 50000000.
fn hertz(value: &str) -> Option<u64> {
    value.strip_suffix("Hz")?.trim().parse().ok()
}

/// Parse the text of debugfs `mmcN/ios` (`place` names the file in messages). The words
/// in parentheses decide, not the numbers: older kernels print the chip select's number on
/// the signal voltage line. A text without a `clock:` or `timing spec:` line, or with one
/// of the lines it reads in another shape, is an error naming the file (exit 2).
pub fn parse_ios(place: &str, text: &str) -> Result<Ios> {
    let bad = |why: String| Error::usage(format!("{place} is not an MMC ios report: {why}"));
    let mut clock = None;
    let mut ios = Ios::default();
    let mut timing_words = None;
    for line in text.lines() {
        if let Some(v) = value_of(line, "clock") {
            clock = Some(hertz(v).ok_or_else(|| {
                bad(format!(
                    "its clock line {} is not \"N Hz\"",
                    super::mmc::quote(v)
                ))
            })?);
        } else if let Some(v) = value_of(line, "actual clock") {
            ios.actual_clock_hz = Some(hertz(v).ok_or_else(|| {
                bad(format!(
                    "its actual clock line {} is not \"N Hz\"",
                    super::mmc::quote(v)
                ))
            })?);
        } else if let Some(v) = value_of(line, "bus width") {
            let w = words_of(v)
                .and_then(|w| w.strip_suffix("bits"))
                .and_then(|n| n.trim().parse::<u8>().ok())
                .filter(|n| matches!(n, 1 | 4 | 8));
            ios.bus_width_bits = Some(w.ok_or_else(|| {
                bad(format!(
                    "its bus width line {} does not end in \"(1|4|8 bits)\"",
                    super::mmc::quote(v)
                ))
            })?);
        } else if let Some(v) = value_of(line, "timing spec") {
            let w = words_of(v).ok_or_else(|| {
                bad(format!(
                    "its timing spec line {} has no words in parentheses",
                    super::mmc::quote(v)
                ))
            })?;
            timing_words = Some(crate::input::printable(w).into_owned());
        } else if let Some(v) = value_of(line, "signal voltage") {
            ios.signal_voltage = words_of(v)
                .filter(|w| w.ends_with(" V"))
                .map(|w| crate::input::printable(w).into_owned());
        }
    }
    ios.clock_hz = clock.ok_or_else(|| bad("it has no \"clock:\" line".into()))?;
    let words = timing_words.ok_or_else(|| bad("it has no \"timing spec:\" line".into()))?;
    ios.timing = Timing::from_words(&words);
    ios.timing_words = words;
    Ok(ios)
}

/// An MMC/SD card's host path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MmcLink {
    /// The host controller's name (`mmc0`).
    pub host: String,
    /// The debugfs file the link was read from.
    pub ios_file: String,
    /// What `ios` says; `None` when it could not be read (the reason is in `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ios: Option<Ios>,
    /// The card's SD Configuration Register (SD cards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scr: Option<ScrInfo>,
    /// sysfs `cmdq_en` (eMMC, Linux 4.19 and later): the command queue is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdq_enabled: Option<bool>,
    /// The bus timing from the kernel log's "new … card" line, when `ios` could not be
    /// read: the mode at card insertion only (no clock, width or voltage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_kernel_log: Option<LogTiming>,
}

/// What the kernel's "mmcN: new … card at address …" line (drivers/mmc/core/bus.c,
/// `mmc_add_card`) says of the mode a card was set to when it was inserted.
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogTiming {
    /// The mode the words name; `None` for words this build does not know.
    pub timing: Option<Timing>,
    /// The speed words as printed ("ultra high speed SDR104", "high speed", "" for
    /// default speed).
    pub words: String,
    /// The card type as printed ("SDHC", "SDXC", "MMC").
    pub card_type: String,
    /// The line, as read (escaped).
    pub line: String,
    /// "from the kernel log (at card insertion)".
    pub source: String,
}

/// The kernel's card types a storage card's line ends with (SDIO cards carry no disk).
const LOG_CARD_TYPES: &[&str] = &[
    "MMC",
    "SD",
    "SDHC",
    "SDXC",
    "SDUC",
    "SD-combo",
    "SDHC-combo",
];

/// The mode a "new … card" line's words name: the UHS bus speed after "ultra high
/// speed", HS200/HS400 (eMMC), "high speed DDR" (eMMC DDR52), "high speed" (SD or MMC by
/// the type), none (default speed).
fn log_timing(words: &str, card_type: &str) -> Option<Timing> {
    let mmc = card_type == "MMC";
    Some(match words {
        "" => Timing::Legacy,
        "ultra high speed SDR12" => Timing::UhsSdr12,
        "ultra high speed SDR25" => Timing::UhsSdr25,
        "ultra high speed SDR50" => Timing::UhsSdr50,
        "ultra high speed SDR104" => Timing::UhsSdr104,
        "ultra high speed DDR50" => Timing::UhsDdr50,
        "high speed" if mmc => Timing::MmcHighSpeed,
        "high speed" => Timing::SdHighSpeed,
        "high speed DDR" if mmc => Timing::MmcDdr52,
        "HS200" if mmc => Timing::MmcHs200,
        "HS400" | "HS400 Enhanced strobe" if mmc => Timing::MmcHs400,
        _ => return None,
    })
}

/// The last "HOST: new … card at address …" line for `host` in `text` (kmsg records
/// "6,123,456,-;mmc0: new …" or dmesg's "[ 2.3] mmc0: new …"), decoded.
pub fn last_new_card_line(host: &str, text: &str) -> Option<LogTiming> {
    text.lines()
        .filter_map(|l| new_card_line(host, l))
        .next_back()
}

fn new_card_line(host: &str, line: &str) -> Option<LogTiming> {
    let key = format!("{host}: new ");
    let at = line.find(&key)?;
    // "mmc0" must not be the tail of "mmc10".
    let before = line[..at].chars().next_back();
    if before.is_some_and(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let rest = &line[at + key.len()..];
    let (head, _) = rest.split_once(" card at address ")?;
    let (words, card_type) = match head.rsplit_once(' ') {
        Some((w, t)) => (w.trim(), t),
        None => ("", head),
    };
    if !LOG_CARD_TYPES.contains(&card_type) {
        return None;
    }
    Some(LogTiming {
        timing: log_timing(words, card_type),
        words: crate::input::printable(words).into_owned(),
        card_type: card_type.to_string(),
        line: crate::input::printable(line.trim()).into_owned(),
        source: "from the kernel log (at card insertion)".to_string(),
    })
}

/// The most of the kernel log read, in bytes and in records: a ring buffer is at most a
/// few MiB, and only the last matching line is kept.
const LOG_CAP_BYTES: usize = 8 << 20;
const LOG_CAP_RECORDS: usize = 65_536;
/// One kmsg record is at most about 1 KiB; a longer line is cut.
const LOG_LINE_CAP: usize = 8 << 10;

/// Read the kernel log at `path` (`/dev/kmsg`) without blocking: record by record from
/// the oldest kept, to its end (EAGAIN) or the caps, keeping only the last "new … card"
/// line for `host`. `Err` is the reason in words (not readable, not root).
pub fn read_kernel_log(path: &Path, host: &str) -> std::result::Result<Option<LogTiming>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::PermissionDenied => format!(
                "reading {} needs root (or kernel.dmesg_restrict=0)",
                path.display()
            ),
            io::ErrorKind::NotFound => format!("{} does not exist", path.display()),
            _ => format!("reading {} failed: {e}", path.display()),
        })?;
    let mut buf = vec![0u8; LOG_LINE_CAP];
    let mut carry: Vec<u8> = Vec::new();
    let (mut bytes, mut records) = (0usize, 0usize);
    let mut found = None;
    let take = |line: &[u8], found: &mut Option<LogTiming>| {
        if let Some(t) = new_card_line(host, &String::from_utf8_lossy(line)) {
            *found = Some(t);
        }
    };
    while bytes < LOG_CAP_BYTES && records < LOG_CAP_RECORDS {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                bytes += n;
                records += 1;
                carry.extend_from_slice(&buf[..n]);
                while let Some(end) = carry.iter().position(|&b| b == b'\n') {
                    take(&carry[..end], &mut found);
                    carry.drain(..=end);
                }
                if carry.len() > LOG_LINE_CAP {
                    carry.clear();
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            // A record overwritten while read (EPIPE), or a signal: go on.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reading {} failed: {e}", path.display())),
        }
    }
    if !carry.is_empty() {
        take(&carry, &mut found);
    }
    Ok(found)
}

/// A USB disk's host path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct UsbLink {
    /// The USB device's sysfs name (`2-1`).
    pub device: String,
    /// sysfs `speed` as printed, in Mb/s ("480", "5000"); `None` when unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<String>,
    /// `speed` as a number of Mb/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<f64>,
    /// The interface's `bInterfaceProtocol` (0x50 bulk-only, 0x62 UAS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface_protocol: Option<u8>,
    /// "bulk-only" or "UAS" from the protocol; `None` for another or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// The driver bound to the interface (`uas`, `usb-storage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
}

/// An NVMe disk's PCIe link, from its PCI function's sysfs attributes. The kernel prints
/// a speed as "8.0 GT/s PCIe" (older kernels "8 GT/s"), "Unknown" when the function has
/// no PCIe link to read (a conventional PCI slot, as QEMU's `pc` machine gives).
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PcieLink {
    /// The PCI function (`0000:01:00.0`).
    pub function: String,
    /// `current_link_speed` as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_link_speed: Option<String>,
    /// `current_link_speed` in GT/s per lane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_gts: Option<f64>,
    /// `current_link_width`: lanes in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_link_width: Option<u8>,
    /// `max_link_speed` as printed: the device's own top speed (its link capabilities).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_link_speed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_gts: Option<f64>,
    /// `max_link_width`: the device's own lanes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_link_width: Option<u8>,
}

/// A SATA disk's link, from libata's `/sys/class/ata_link/linkN`: speeds as the kernel
/// prints them ("1.5 Gbps", "3.0 Gbps", "6.0 Gbps", or "<unknown>").
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SataLink {
    /// The ATA link (`link1`).
    pub link: String,
    /// `sata_spd`: the speed negotiated, as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sata_spd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gbps: Option<f64>,
    /// `sata_spd_limit`: the limit the kernel set (lowered after link errors), as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sata_spd_limit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_gbps: Option<f64>,
    /// `hw_sata_spd_limit`: the port's own limit, as printed ("<unknown>" when the port's
    /// SControl sets none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_sata_spd_limit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_limit_gbps: Option<f64>,
}

/// The host path's facts for one disk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HostFacts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmc: Option<MmcLink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usb: Option<UsbLink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme: Option<PcieLink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sata: Option<SataLink>,
    /// Facts that could not be read, each "… unknown, because …".
    pub unknown: Vec<String>,
}

/// Read the host path of the disk whose sysfs `device` directory is `dev_dir`
/// (`/sys/class/block/sda/device`), with debugfs at `debugfs` (`/sys/kernel/debug`).
/// `None` for a disk on none of MMC, USB, SATA and NVMe (virtio, SCSI: not read).
pub fn read(dev_dir: &Path, debugfs: &Path) -> Option<HostFacts> {
    read_with_log(dev_dir, debugfs, Path::new(KMSG))
}

/// Where the kernel log is read from.
const KMSG: &str = "/dev/kmsg";

/// [`read`] with the kernel log at `kmsg` (a test's recorded log).
pub fn read_with_log(dev_dir: &Path, debugfs: &Path, kmsg: &Path) -> Option<HostFacts> {
    if super::mmc::is_card_dir(dev_dir) {
        return Some(read_mmc(dev_dir, debugfs, kmsg));
    }
    read_usb(dev_dir)
        .or_else(|| read_sata(dev_dir))
        .or_else(|| read_nvme(dev_dir))
}

/// "8.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" → GT/s per lane; `None` for "Unknown" and the like.
pub fn parse_gts(text: &str) -> Option<f64> {
    let n = text.trim().split_once(" GT/s")?.0;
    n.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// "6.0 Gbps" → 6.0; `None` for "<unknown>" and the like.
pub fn parse_gbps(text: &str) -> Option<f64> {
    let n = text.trim().strip_suffix("Gbps")?;
    n.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// A link width the kernel printed: 1 to 32 lanes; 0 and 255 mean it could not read one.
fn parse_width(text: &str) -> Option<u8> {
    text.trim()
        .parse::<u8>()
        .ok()
        .filter(|w| (1..=32).contains(w))
}

/// Read one speed-like attribute into (as printed, parsed), noting why it is unknown.
fn speed_attr(
    attrs: &PathBuf,
    name: &str,
    what: &str,
    parse: fn(&str) -> Option<f64>,
    unknown: &mut Vec<String>,
) -> (Option<String>, Option<f64>) {
    match attrs.attr(name) {
        Ok(Some(t)) => {
            let v = parse(&t);
            if v.is_none() {
                unknown.push(format!(
                    "{what} unknown, because {}{name} says {}",
                    attrs.place(),
                    super::mmc::quote(&t)
                ));
            }
            (Some(t), v)
        }
        Ok(None) => {
            unknown.push(format!(
                "{what} unknown, because {}{name} does not exist",
                attrs.place()
            ));
            (None, None)
        }
        Err(e) => {
            unknown.push(format!("{what} unknown, because {e}"));
            (None, None)
        }
    }
}

/// The ATA port (`ataN`) among the ancestors of a SCSI disk's device directory, as libata
/// places it: `…/ata1/host0/target0:0:0/0:0:0:0`.
fn ata_port(real: &Path) -> Option<(PathBuf, String)> {
    real.ancestors().take(MAX_ANCESTORS).find_map(|dir| {
        let name = dir.file_name()?.to_str()?;
        let n = name.strip_prefix("ata")?;
        (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .then(|| (dir.to_path_buf(), n.to_string()))
    })
}

/// Read the SATA link above a disk on libata: `ataN/linkN/ata_link/linkN/` (the directory
/// `/sys/class/ata_link/linkN` names). `None` off libata.
pub fn read_sata(dev_dir: &Path) -> Option<HostFacts> {
    let real = std::fs::canonicalize(dev_dir).ok()?;
    let (port, n) = ata_port(&real)?;
    let mut facts = HostFacts::default();
    let link_name = format!("link{n}");
    let mut link = SataLink {
        link: link_name.clone(),
        ..SataLink::default()
    };
    let dir = port.join(&link_name).join("ata_link").join(&link_name);
    if !dir.is_dir() {
        facts.unknown.push(format!(
            "the SATA link speed unknown, because {} does not exist (a parallel ATA port, or a kernel without libata's transport class)",
            dir.display()
        ));
        facts.sata = Some(link);
        return Some(facts);
    }
    let u = &mut facts.unknown;
    (link.sata_spd, link.gbps) = speed_attr(&dir, "sata_spd", "the SATA link speed", parse_gbps, u);
    (link.sata_spd_limit, link.limit_gbps) = speed_attr(
        &dir,
        "sata_spd_limit",
        "the kernel's SATA speed limit",
        parse_gbps,
        u,
    );
    (link.hw_sata_spd_limit, link.hw_limit_gbps) = speed_attr(
        &dir,
        "hw_sata_spd_limit",
        "the SATA port's top speed",
        parse_gbps,
        u,
    );
    facts.sata = Some(link);
    Some(facts)
}

/// Read the PCIe link of an NVMe disk: its controller (`…/0000:01:00.0/nvme/nvme0`, the
/// block device's `device`) sits under the PCI function that has the link attributes.
/// `None` for a disk that is no NVMe controller's.
pub fn read_nvme(dev_dir: &Path) -> Option<HostFacts> {
    let real = std::fs::canonicalize(dev_dir).ok()?;
    let ctrl = real.file_name()?.to_str()?;
    let in_class = real.parent()?.file_name()? == "nvme";
    let transport = real.join("transport");
    if !(ctrl.starts_with("nvme") && (in_class || transport.exists())) {
        return None;
    }
    let mut facts = HostFacts::default();
    let attrs = real.clone();
    if let Ok(Some(t)) = attrs.attr("transport") {
        if t != "pcie" {
            facts.unknown.push(format!(
                "the NVMe link unknown, because {ctrl}'s transport is {} (NVMe over a network or fabric: no PCIe link to read)",
                super::mmc::quote(&t)
            ));
            facts.nvme = Some(PcieLink::default());
            return Some(facts);
        }
    }
    let Some(function) = real.parent().and_then(Path::parent).filter(|_| in_class) else {
        facts.unknown.push(format!(
            "the PCIe link unknown, because {} sits under no PCI function",
            real.display()
        ));
        facts.nvme = Some(PcieLink::default());
        return Some(facts);
    };
    let f = function.to_path_buf();
    let mut link = PcieLink {
        function: function
            .file_name()
            .map(|n| crate::input::printable(&n.to_string_lossy()).into_owned())
            .unwrap_or_default(),
        ..PcieLink::default()
    };
    let u = &mut facts.unknown;
    (link.current_link_speed, link.current_gts) = speed_attr(
        &f,
        "current_link_speed",
        "the PCIe link speed",
        parse_gts,
        u,
    );
    (link.max_link_speed, link.max_gts) = speed_attr(
        &f,
        "max_link_speed",
        "the device's top PCIe speed",
        parse_gts,
        u,
    );
    for (name, what, slot) in [
        (
            "current_link_width",
            "the PCIe link width",
            &mut link.current_link_width,
        ),
        (
            "max_link_width",
            "the device's PCIe lanes",
            &mut link.max_link_width,
        ),
    ] {
        match f.attr(name) {
            Ok(Some(t)) => {
                *slot = parse_width(&t);
                if slot.is_none() {
                    u.push(format!(
                        "{what} unknown, because {}{name} says {}",
                        f.place(),
                        super::mmc::quote(&t)
                    ));
                }
            }
            Ok(None) => u.push(format!(
                "{what} unknown, because {}{name} does not exist",
                f.place()
            )),
            Err(e) => u.push(format!("{what} unknown, because {e}")),
        }
    }
    // "Unknown" is what the kernel prints for a function it reads no PCIe link of.
    for entry in u.iter_mut() {
        if entry.ends_with("speed says \"Unknown\"") {
            entry.push_str(
                ", as the kernel prints for a PCI function without a PCIe link to read (a conventional PCI slot, such as QEMU's pc machine gives) or a link that is down",
            );
        }
    }
    facts.nvme = Some(link);
    Some(facts)
}

/// The MMC host a card directory sits on: its parent in the device tree
/// (`…/mmc_host/mmc0/mmc0:aaaa`), else the card name's part before `:`.
fn mmc_host_name(card: &Path) -> Option<String> {
    let parent = card.parent()?.file_name()?.to_string_lossy().into_owned();
    if parent.starts_with("mmc") && !parent.contains(':') {
        return Some(parent);
    }
    let name = card.file_name()?.to_string_lossy().into_owned();
    let (host, _) = name.split_once(':')?;
    host.starts_with("mmc").then(|| host.to_string())
}

fn read_mmc(dev_dir: &Path, debugfs: &Path, kmsg: &Path) -> HostFacts {
    let mut facts = HostFacts::default();
    let card = std::fs::canonicalize(dev_dir).unwrap_or_else(|_| dev_dir.to_path_buf());
    let attrs: PathBuf = card.clone();
    let mut link = MmcLink::default();
    match attrs.attr("scr") {
        Ok(Some(t)) => match decode_scr(&format!("{}scr", attrs.place()), &t) {
            Ok(s) => link.scr = Some(s),
            Err(e) => facts
                .unknown
                .push(format!("the card's SCR unknown, because {e}")),
        },
        Ok(None) => {}
        Err(e) => facts
            .unknown
            .push(format!("the card's SCR unknown, because {e}")),
    }
    match attrs.attr("cmdq_en") {
        Ok(Some(t)) => link.cmdq_enabled = Some(t == "1"),
        Ok(None) => {}
        Err(e) => facts
            .unknown
            .push(format!("command queueing unknown, because {e}")),
    }
    let what = "bus timing, clock, bus width and signal voltage";
    let Some(host) = mmc_host_name(&card) else {
        facts.unknown.push(format!(
            "{what} unknown, because {} sits on no MMC host the device tree names",
            card.display()
        ));
        facts.mmc = Some(link);
        return facts;
    };
    let ios_file = debugfs.join(&host).join("ios");
    link.ios_file = ios_file.display().to_string();
    link.host = host;
    match read_ios(&ios_file, debugfs) {
        Ok(ios) => link.ios = Some(ios),
        Err(why) => match read_kernel_log(kmsg, &link.host) {
            Ok(Some(t)) => {
                facts.unknown.push(format!(
                    "clock, bus width and signal voltage unknown, because {why}; the bus timing is the kernel log's, at card insertion"
                ));
                link.from_kernel_log = Some(t);
            }
            Ok(None) => facts.unknown.push(format!(
                "{what} unknown, because {why}, and the kernel log holds no \"{}: new … card\" line (it may have wrapped since the card was inserted)",
                link.host
            )),
            Err(log) => facts.unknown.push(format!(
                "{what} unknown, because {why}, and the kernel log cannot be read ({log})"
            )),
        },
    }
    facts.mmc = Some(link);
    facts
}

/// Read and parse `ios_file`; the error is the reason in words: debugfs not mounted,
/// root only, no such file, or the parse error naming the file.
fn read_ios(ios_file: &Path, debugfs: &Path) -> std::result::Result<Ios, String> {
    let mounted = std::fs::read_dir(debugfs).map(|mut d| d.next().is_some());
    match mounted {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(format!(
                "debugfs ({}) is readable by root only (permission denied)",
                debugfs.display()
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!(
                "debugfs is not mounted ({} does not exist)",
                debugfs.display()
            ))
        }
        Ok(false) => {
            return Err(format!(
                "debugfs is not mounted at {} (as root: mount -t debugfs none {})",
                debugfs.display(),
                debugfs.display()
            ))
        }
        _ => {}
    }
    let bytes = match crate::input::read_regular(ios_file, "MMC ios report", IOS_CAP_BYTES) {
        Ok(b) => b,
        Err(Error::Io { source, .. }) => {
            return Err(match source.kind() {
                io::ErrorKind::NotFound => format!(
                "{} does not exist (a kernel without CONFIG_DEBUG_FS for MMC, or the host is gone)",
                ios_file.display()
            ),
                io::ErrorKind::PermissionDenied => format!(
                    "reading {} needs root (permission denied)",
                    ios_file.display()
                ),
                _ => format!("reading {} failed: {source}", ios_file.display()),
            })
        }
        Err(e) => return Err(e.to_string()),
    };
    parse_ios(
        &ios_file.display().to_string(),
        &String::from_utf8_lossy(&bytes),
    )
    .map_err(|e| e.to_string())
}

/// The USB mass-storage transport a `bInterfaceProtocol` names.
fn transport_of(protocol: u8) -> Option<String> {
    match protocol {
        0x50 => Some("bulk-only".into()),
        0x62 => Some("UAS".into()),
        _ => None,
    }
}

/// The host path a simulated card presents (`sim:…,host_timing=…` or `usb=…`), decoded
/// as a kernel's files are: its `ios` text by [`parse_ios`], the USB attributes as
/// [`read_usb`] reads them. `None` for a simulated card without a host path.
pub fn presented(p: &crate::vocab::hostpath::PresentedHost) -> Result<Option<HostFacts>> {
    let mut facts = HostFacts::default();
    if let Some(text) = &p.ios {
        let place = "the simulated host's mmc0/ios";
        facts.mmc = Some(MmcLink {
            host: "mmc0".into(),
            ios_file: place.into(),
            ios: Some(parse_ios(place, text)?),
            scr: None,
            cmdq_enabled: p.cmdq_en.as_deref().map(|v| v.trim() == "1"),
            from_kernel_log: None,
        });
    } else if let Some(speed) = &p.usb_speed {
        let protocol = p
            .usb_protocol
            .as_deref()
            .and_then(|t| u8::from_str_radix(t.trim(), 16).ok());
        facts.usb = Some(UsbLink {
            device: "sim".into(),
            speed: Some(speed.clone()),
            speed_mbps: speed.trim().parse::<f64>().ok().filter(|v| *v > 0.0),
            interface_protocol: protocol,
            transport: protocol.and_then(transport_of),
            driver: p.usb_driver.clone(),
        });
    } else {
        return Ok(None);
    }
    Ok(Some(facts))
}

/// Read the USB link above the disk whose `device` directory is `dev_dir`: the nearest
/// ancestor with `bInterfaceProtocol` is the interface (its `driver` link names the
/// driver), the nearest with `speed` and `idVendor` the USB device. `None` off USB.
pub fn read_usb(dev_dir: &Path) -> Option<HostFacts> {
    let real = std::fs::canonicalize(dev_dir).ok()?;
    let mut facts = HostFacts::default();
    let mut link = UsbLink::default();
    let mut on_usb = false;
    for dir in real.ancestors().take(MAX_ANCESTORS) {
        let attrs = dir.to_path_buf();
        if link.interface_protocol.is_none() && dir.join("bInterfaceProtocol").exists() {
            on_usb = true;
            match attrs.attr("bInterfaceProtocol") {
                Ok(Some(t)) => match u8::from_str_radix(t.trim_start_matches("0x"), 16) {
                    Ok(p) => {
                        link.interface_protocol = Some(p);
                        link.transport = transport_of(p);
                    }
                    Err(_) => facts.unknown.push(format!(
                        "the USB transport unknown, because {}bInterfaceProtocol is {}, not a hex byte",
                        attrs.place(),
                        super::mmc::quote(&t)
                    )),
                },
                Ok(None) => {}
                Err(e) => facts
                    .unknown
                    .push(format!("the USB transport unknown, because {e}")),
            }
            link.driver = std::fs::read_link(dir.join("driver"))
                .ok()
                .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()))
                .map(|n| crate::input::printable(&n).into_owned());
        }
        if dir.join("idVendor").exists() && dir.join("speed").exists() {
            on_usb = true;
            link.device = dir
                .file_name()
                .map(|n| crate::input::printable(&n.to_string_lossy()).into_owned())
                .unwrap_or_default();
            match attrs.attr("speed") {
                Ok(Some(t)) => {
                    link.speed_mbps = t.parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0);
                    if link.speed_mbps.is_none() {
                        facts.unknown.push(format!(
                            "the USB link speed unknown, because {}speed is {}",
                            attrs.place(),
                            super::mmc::quote(&t)
                        ));
                    }
                    link.speed = Some(t);
                }
                Ok(None) => {}
                Err(e) => facts
                    .unknown
                    .push(format!("the USB link speed unknown, because {e}")),
            }
            break;
        }
    }
    if !on_usb {
        return None;
    }
    if link.speed.is_none() && link.device.is_empty() {
        facts.unknown.push(
            "the USB link speed unknown, because no USB device with a speed sits above the interface".into(),
        );
    }
    facts.usb = Some(link);
    Some(facts)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn data(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/hostpath")
            .join(rel)
    }

    fn ios_of(rel: &str) -> Ios {
        let p = data(rel);
        parse_ios(
            &p.display().to_string(),
            &std::fs::read_to_string(&p).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn recorded_ios_reports_decode_by_their_words() {
        let q = ios_of("ios/qemu-sdhci-sd-high-speed.txt");
        assert_eq!(q.timing, Some(Timing::SdHighSpeed));
        assert_eq!(q.clock_hz, 50_000_000);
        assert_eq!(q.actual_clock_hz, Some(26_000_000));
        assert_eq!(q.bus_width_bits, Some(4));
        assert_eq!(q.signal_voltage.as_deref(), Some("3.30 V"));

        let u = ios_of("ios/sd-uhs-sdr104.txt");
        assert_eq!(u.timing, Some(Timing::UhsSdr104));
        assert_eq!(u.clock_hz, 208_000_000);
        assert_eq!(u.signal_voltage.as_deref(), Some("1.80 V"));

        let e = ios_of("ios/emmc-hs400-enhanced-strobe.txt");
        assert_eq!(e.timing, Some(Timing::MmcHs400));
        assert_eq!(e.bus_width_bits, Some(8));

        // An older kernel: HS200 in its old words, and the chip select's number on the
        // signal voltage line; the words decide.
        let old = ios_of("ios/emmc-hs200-old-kernel.txt");
        assert_eq!(old.timing, Some(Timing::MmcHs200));
        assert_eq!(old.timing_words, "mmc high-speed SDR200");
        assert_eq!(old.signal_voltage.as_deref(), Some("1.80 V"));
        assert_eq!(old.actual_clock_hz, None);

        // Published dumps (tests/data/hostpath/README.md), spaces for tabs as printed.
        let sdr50 = ios_of("ios/s905x2-sd-uhs-sdr50-published.txt");
        assert_eq!(sdr50.timing, Some(Timing::UhsSdr50));
        assert_eq!(sdr50.actual_clock_hz, Some(99_999_999));
        let stuck = ios_of("ios/s905x2-sd-high-speed-published.txt");
        assert_eq!(stuck.timing, Some(Timing::SdHighSpeed));
        assert_eq!(stuck.signal_voltage.as_deref(), Some("3.30 V"));
        // Every recorded dump names a mode this build knows.
        for entry in std::fs::read_dir(data("ios")).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(ios_of(&format!("ios/{name}")).timing.is_some(), "{name}");
        }
    }

    #[test]
    fn a_malformed_ios_is_an_error_naming_the_file() {
        let good = std::fs::read_to_string(data("ios/qemu-sdhci-sd-high-speed.txt")).unwrap();
        let cases = [
            String::new(),
            "not an ios file\n".to_string(),
            good.replace("50000000 Hz", "fifty MHz"),
            good.replace("(sd high-speed)", "sd high-speed"),
            good.replace("(4 bits)", "(4 lanes)"),
            good.lines()
                .filter(|l| !l.starts_with("timing"))
                .collect::<Vec<_>>()
                .join("\n"),
        ];
        for text in cases {
            let e = parse_ios("/sys/kernel/debug/mmc0/ios", &text).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{e}");
            assert!(e.to_string().contains("/sys/kernel/debug/mmc0/ios"), "{e}");
        }
        // Words no kernel prints: no mode, the words kept.
        let odd = good.replace("(sd high-speed)", "(sd uhs-II FD156)");
        let ios = parse_ios("ios", &odd).unwrap();
        assert_eq!(ios.timing, None);
        assert_eq!(ios.timing_words, "sd uhs-II FD156");
    }

    /// A recorded SD card tree: `sys/devices/…/mmc_host/mmc0/mmc0:aaaa` with the files
    /// given, `sys/class/block/mmcblk0` linked to it; returns the block's `device` path.
    pub(crate) fn sd_tree(root: &Path, files: &[(&str, &str)]) -> PathBuf {
        let card = root.join("sys/devices/pci0000:00/0000:00:04.0/mmc_host/mmc0/mmc0:aaaa");
        let block = card.join("block/mmcblk0");
        std::fs::create_dir_all(&block).unwrap();
        for (name, text) in files {
            std::fs::write(card.join(name), text).unwrap();
        }
        symlink("../../../mmc0:aaaa", block.join("device")).unwrap();
        let class = root.join("sys/class/block");
        std::fs::create_dir_all(&class).unwrap();
        symlink(&block, class.join("mmcblk0")).unwrap();
        class.join("mmcblk0/device")
    }

    #[test]
    fn an_sd_card_reads_ios_scr_and_says_why_debugfs_is_unknown() {
        let root = tempfile::tempdir().unwrap();
        let dev = sd_tree(
            root.path(),
            &[("type", "SD\n"), ("scr", "0225000000000000\n")],
        );
        let debugfs = root.path().join("sys/kernel/debug");
        // Not mounted: the directory is empty.
        std::fs::create_dir_all(&debugfs).unwrap();
        let f = read_with_log(&dev, &debugfs, Path::new(NO_LOG)).unwrap();
        let m = f.mmc.as_ref().unwrap();
        assert_eq!(m.host, "mmc0");
        assert_eq!(m.ios, None);
        assert_eq!(
            m.scr.as_ref().unwrap().spec_version.as_deref(),
            Some("2.00")
        );
        assert!(
            f.unknown[0].starts_with("bus timing, clock, bus width and signal voltage unknown, because debugfs is not mounted"),
            "{:?}",
            f.unknown
        );
        // Missing altogether.
        let f = read_with_log(&dev, &root.path().join("nowhere"), Path::new(NO_LOG)).unwrap();
        assert!(f.unknown[0].contains("does not exist"), "{:?}", f.unknown);
        // Mounted, with another host only.
        std::fs::create_dir_all(debugfs.join("mmc1")).unwrap();
        let f = read_with_log(&dev, &debugfs, Path::new(NO_LOG)).unwrap();
        assert!(
            f.unknown[0].contains("mmc0/ios does not exist"),
            "{:?}",
            f.unknown
        );
        // Mounted and readable.
        std::fs::create_dir_all(debugfs.join("mmc0")).unwrap();
        std::fs::copy(
            data("ios/qemu-sdhci-sd-high-speed.txt"),
            debugfs.join("mmc0/ios"),
        )
        .unwrap();
        let f = read_with_log(&dev, &debugfs, Path::new(NO_LOG)).unwrap();
        assert!(f.unknown.is_empty(), "{:?}", f.unknown);
        let ios = f.mmc.unwrap().ios.unwrap();
        assert_eq!(ios.timing, Some(Timing::SdHighSpeed));
        // Malformed: unknown, with the parse error naming the file.
        std::fs::write(debugfs.join("mmc0/ios"), "clock: fast\n").unwrap();
        let f = read_with_log(&dev, &debugfs, Path::new(NO_LOG)).unwrap();
        assert!(
            f.unknown[0].contains(&format!("{}", debugfs.join("mmc0/ios").display())),
            "{:?}",
            f.unknown
        );
        assert_eq!(f.mmc.unwrap().ios, None);
    }

    /// No kernel log: the SD tests read none of this machine's.
    const NO_LOG: &str = "/nonexistent/kmsg";

    /// Lines composed in the kernel's format (drivers/mmc/core/bus.c, `mmc_add_card`),
    /// as /dev/kmsg gives them and as dmesg prints them: a Pi whose card came up at SDR25
    /// first and at SDR104 after re-insertion (issue 47), an eMMC on mmc1, an SDIO Wi-Fi
    /// on mmc10 and a line for another host.
    const LOG: &str = "6,812,2101234,-;mmc0: new ultra high speed SDR25 SDXC card at address 59b4
6,813,2101300,-;mmcblk0: mmc0:59b4 EB1QT 29.8 GiB
6,900,3101234,-;mmc1: new HS200 MMC card at address 0001
6,950,4101234,-;mmc10: new high speed SDIO card at address 0001
6,990,9101234,-;mmc0: card 59b4 removed
[   95.123456] mmc0: new ultra high speed SDR104 SDXC card at address 59b4
6,1001,96101234,-;mmc2: new high speed SDHC card at address aaaa
";

    #[test]
    fn the_kernel_logs_last_new_card_line_names_the_mode_at_insertion() {
        let t = last_new_card_line("mmc0", LOG).unwrap();
        assert_eq!(t.timing, Some(Timing::UhsSdr104), "the last line wins");
        assert_eq!(t.words, "ultra high speed SDR104");
        assert_eq!(t.card_type, "SDXC");
        assert_eq!(t.source, "from the kernel log (at card insertion)");
        let e = last_new_card_line("mmc1", LOG).unwrap();
        assert_eq!(e.timing, Some(Timing::MmcHs200));
        let hs = last_new_card_line("mmc2", LOG).unwrap();
        assert_eq!(hs.timing, Some(Timing::SdHighSpeed));
        // mmc10's SDIO card is no disk, and "mmc0" is not the tail of "mmc10".
        assert_eq!(last_new_card_line("mmc10", LOG), None);
        assert_eq!(last_new_card_line("mmc3", LOG), None);
        for (line, mode) in [
            ("mmc0: new SDHC card at address 0007", Some(Timing::Legacy)),
            (
                "mmc0: new high speed DDR MMC card at address 0001",
                Some(Timing::MmcDdr52),
            ),
            (
                "mmc0: new high speed MMC card at address 0001",
                Some(Timing::MmcHighSpeed),
            ),
            (
                "mmc0: new HS400 Enhanced strobe MMC card at address 0001",
                Some(Timing::MmcHs400),
            ),
            (
                "mmc0: new ultra high speed DDR50 SDHC card at address 1234",
                Some(Timing::UhsDdr50),
            ),
            // Words no kernel prints: the line is kept, no mode guessed.
            ("mmc0: new warp speed SDXC card at address 1234", None),
        ] {
            let t = last_new_card_line("mmc0", line).unwrap();
            assert_eq!(t.timing, mode, "{line}");
        }
        assert_eq!(last_new_card_line("mmc0", "mmc0: new SDHC card"), None);
        assert_eq!(last_new_card_line("mmc0", ""), None);
    }

    #[test]
    fn without_debugfs_the_kernel_log_gives_the_mode_or_says_why_not() {
        let root = tempfile::tempdir().unwrap();
        let dev = sd_tree(root.path(), &[("type", "SD\n")]);
        let debugfs = root.path().join("nowhere");
        let log = root.path().join("kmsg");
        std::fs::write(&log, LOG).unwrap();
        let f = read_with_log(&dev, &debugfs, &log).unwrap();
        let m = f.mmc.as_ref().unwrap();
        assert_eq!(m.ios, None);
        let t = m.from_kernel_log.as_ref().unwrap();
        assert_eq!(t.timing, Some(Timing::UhsSdr104));
        assert!(
            f.unknown[0].starts_with(
                "clock, bus width and signal voltage unknown, because debugfs is not mounted"
            ) && f.unknown[0].ends_with("the kernel log's, at card insertion"),
            "{:?}",
            f.unknown
        );
        // A log with no line for this host: unknown, saying the log may have wrapped.
        std::fs::write(&log, "6,1,1,-;mmc1: new HS200 MMC card at address 0001\n").unwrap();
        let f = read_with_log(&dev, &debugfs, &log).unwrap();
        assert_eq!(f.mmc.as_ref().unwrap().from_kernel_log, None);
        assert!(f.unknown[0].contains("may have wrapped"), "{:?}", f.unknown);
        // No log at all: unknown with both reasons.
        let f = read_with_log(&dev, &debugfs, Path::new(NO_LOG)).unwrap();
        assert!(
            f.unknown[0].contains("debugfs is not mounted")
                && f.unknown[0].contains("the kernel log cannot be read"),
            "{:?}",
            f.unknown
        );
        // A line longer than a record is cut, never read without bound.
        let long = format!(
            "{}\nmmc0: new high speed SDHC card at address 0001\n",
            "x".repeat(100_000)
        );
        std::fs::write(&log, long).unwrap();
        let f = read_with_log(&dev, &debugfs, &log).unwrap();
        let t = f.mmc.unwrap().from_kernel_log.unwrap();
        assert_eq!(t.timing, Some(Timing::SdHighSpeed));
    }

    #[test]
    fn permission_denied_on_debugfs_is_unknown_with_its_reason() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let dev = sd_tree(root.path(), &[("type", "SD\n")]);
        let debugfs = root.path().join("debug");
        std::fs::create_dir_all(debugfs.join("mmc0")).unwrap();
        std::fs::write(debugfs.join("mmc0/ios"), "x").unwrap();
        std::fs::set_permissions(&debugfs, std::fs::Permissions::from_mode(0o000)).unwrap();
        let denied = std::fs::read_dir(&debugfs).is_err();
        let f = read_with_log(&dev, &debugfs, Path::new(NO_LOG)).unwrap();
        std::fs::set_permissions(&debugfs, std::fs::Permissions::from_mode(0o755)).unwrap();
        if denied {
            assert!(f.unknown[0].contains("root only"), "{:?}", f.unknown);
        } else {
            // Root reads through mode 000: the permission case cannot be made here.
            eprintln!("skipped the permission case: this user reads a mode-000 directory");
        }
        assert_eq!(f.mmc.unwrap().ios, None);
    }

    /// A recorded USB disk tree shaped like the kernel's: `/sys/block/sdX` links to
    /// `../devices/pci…/usbN/N-1/N-1:1.0/hostM/targetM:0:0/M:0:0:0/block/sdX`.
    pub(crate) fn usb_tree(root: &Path, speed: &str, protocol: &str, driver: &str) -> PathBuf {
        let usb = root.join("sys/devices/pci0000:00/0000:00:05.0/usb2/2-1");
        let intf = usb.join("2-1:1.0");
        let scsi = intf.join("host0/target0:0:0/0:0:0:0");
        let block = scsi.join("block/sda");
        std::fs::create_dir_all(&block).unwrap();
        for (dir, name, text) in [
            (&usb, "idVendor", "46f4\n"),
            (&usb, "idProduct", "0001\n"),
            (&usb, "speed", speed),
            (&intf, "bInterfaceProtocol", protocol),
            (&scsi, "type", "0\n"),
            (&scsi, "rev", "2.5+\n"),
        ] {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let drivers = root.join("sys/bus/usb/drivers").join(driver);
        std::fs::create_dir_all(&drivers).unwrap();
        symlink(&drivers, intf.join("driver")).unwrap();
        let bus = root.join("sys/bus/scsi");
        std::fs::create_dir_all(&bus).unwrap();
        symlink(&bus, scsi.join("subsystem")).unwrap();
        symlink("../../../0:0:0:0", block.join("device")).unwrap();
        let class = root.join("sys/block");
        std::fs::create_dir_all(&class).unwrap();
        symlink(&block, class.join("sda")).unwrap();
        class.join("sda/device")
    }

    #[test]
    fn a_usb_disk_reads_link_speed_transport_and_driver() {
        let root = tempfile::tempdir().unwrap();
        let dev = usb_tree(root.path(), "5000\n", "62\n", "uas");
        let f = read(&dev, &root.path().join("debug")).unwrap();
        assert!(f.mmc.is_none(), "a SCSI disk is no card");
        assert!(f.unknown.is_empty(), "{:?}", f.unknown);
        let u = f.usb.unwrap();
        assert_eq!(u.device, "2-1");
        assert_eq!(u.speed_mbps, Some(5000.0));
        assert_eq!(u.interface_protocol, Some(0x62));
        assert_eq!(u.transport.as_deref(), Some("UAS"));
        assert_eq!(u.driver.as_deref(), Some("uas"));

        let root = tempfile::tempdir().unwrap();
        let dev = usb_tree(root.path(), "480\n", "50\n", "usb-storage");
        let u = read(&dev, Path::new("/nonexistent")).unwrap().usb.unwrap();
        assert_eq!(u.speed_mbps, Some(480.0));
        assert_eq!(u.transport.as_deref(), Some("bulk-only"));
        assert_eq!(u.driver.as_deref(), Some("usb-storage"));

        // A speed the kernel calls "unknown" is unknown with its reason.
        let root = tempfile::tempdir().unwrap();
        let dev = usb_tree(root.path(), "unknown\n", "50\n", "usb-storage");
        let f = read(&dev, Path::new("/nonexistent")).unwrap();
        assert_eq!(f.usb.unwrap().speed_mbps, None);
        assert!(
            f.unknown[0].contains("link speed unknown"),
            "{:?}",
            f.unknown
        );
    }

    #[test]
    fn a_disk_on_none_of_the_buses_read_has_no_host_path_here() {
        let root = tempfile::tempdir().unwrap();
        // A virtio disk: `…/virtio1/block/vda`'s device is `virtio1`.
        let dev = root
            .path()
            .join("sys/devices/pci0000:00/0000:00:06.0/virtio1");
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("features"), "0110\n").unwrap();
        assert_eq!(read(&dev, root.path()), None);
    }

    /// A SATA disk as libata lays it out: `…/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0`
    /// with the link's attributes in `ata1/link1/ata_link/link1/`; `files` are written
    /// there (none: the link directory is left out).
    pub(crate) fn sata_tree(root: &Path, files: &[(&str, &str)]) -> PathBuf {
        let port = root.join("sys/devices/pci0000:00/0000:00:1f.2/ata1");
        let dev = port.join("host0/target0:0:0/0:0:0:0");
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("type"), "0\n").unwrap();
        if !files.is_empty() {
            let link = port.join("link1/ata_link/link1");
            std::fs::create_dir_all(&link).unwrap();
            for (name, text) in files {
                std::fs::write(link.join(name), text).unwrap();
            }
        }
        dev
    }

    /// An NVMe disk as the kernel lays it out: the block device's `device` is the
    /// controller `…/0000:01:00.0/nvme/nvme0`; the link attributes are the PCI function's.
    pub(crate) fn nvme_tree(root: &Path, function: &[(&str, &str)]) -> PathBuf {
        let f = root.join("sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0");
        let ctrl = f.join("nvme/nvme0");
        std::fs::create_dir_all(ctrl.join("nvme0n1")).unwrap();
        std::fs::write(ctrl.join("transport"), "pcie\n").unwrap();
        for (name, text) in function {
            std::fs::write(f.join(name), text).unwrap();
        }
        symlink("../../nvme0", ctrl.join("nvme0n1/device")).unwrap();
        ctrl.join("nvme0n1/device")
    }

    #[test]
    fn a_sata_disk_reads_its_link_speed_and_limits_in_the_kernels_words() {
        let root = tempfile::tempdir().unwrap();
        let dev = sata_tree(
            root.path(),
            &[
                ("sata_spd", "3.0 Gbps\n"),
                ("sata_spd_limit", "<unknown>\n"),
                ("hw_sata_spd_limit", "6.0 Gbps\n"),
            ],
        );
        let f = read(&dev, root.path()).unwrap();
        let a = f.sata.as_ref().unwrap();
        assert_eq!(a.link, "link1");
        assert_eq!(a.gbps, Some(3.0));
        assert_eq!(a.sata_spd.as_deref(), Some("3.0 Gbps"));
        assert_eq!(a.limit_gbps, None);
        assert_eq!(a.hw_limit_gbps, Some(6.0));
        assert!(f.mmc.is_none() && f.usb.is_none() && f.nvme.is_none());
        assert_eq!(f.unknown.len(), 1, "{:?}", f.unknown);
        assert!(
            f.unknown[0].contains("sata_spd_limit says \"<unknown>\""),
            "{:?}",
            f.unknown
        );
        // No link directory: the speed unknown with the reason, never guessed.
        let root = tempfile::tempdir().unwrap();
        let dev = sata_tree(root.path(), &[]);
        let f = read(&dev, root.path()).unwrap();
        assert_eq!(f.sata.unwrap().gbps, None);
        assert!(
            f.unknown[0].contains("link1/ata_link/link1 does not exist"),
            "{:?}",
            f.unknown
        );
    }

    #[test]
    fn an_nvme_disk_reads_its_pcie_link_in_the_kernels_words() {
        let root = tempfile::tempdir().unwrap();
        let dev = nvme_tree(
            root.path(),
            &[
                ("current_link_speed", "8.0 GT/s PCIe\n"),
                ("current_link_width", "2\n"),
                ("max_link_speed", "8.0 GT/s PCIe\n"),
                ("max_link_width", "4\n"),
            ],
        );
        let f = read(&dev, root.path()).unwrap();
        assert!(f.unknown.is_empty(), "{:?}", f.unknown);
        let p = f.nvme.unwrap();
        assert_eq!(p.function, "0000:01:00.0");
        assert_eq!((p.current_gts, p.current_link_width), (Some(8.0), Some(2)));
        assert_eq!((p.max_gts, p.max_link_width), (Some(8.0), Some(4)));
        // Older kernels print "5 GT/s" without "PCIe".
        assert_eq!(parse_gts("5 GT/s"), Some(5.0));
        assert_eq!(parse_gts("16.0 GT/s PCIe"), Some(16.0));
        assert_eq!(parse_gts("Unknown"), None);
        assert_eq!(parse_gbps("1.5 Gbps"), Some(1.5));
        assert_eq!(parse_gbps("<unknown>"), None);
        assert_eq!(parse_width("255"), None);
        assert_eq!(parse_width("0"), None);
        assert_eq!(parse_width("16"), Some(16));
    }
}
