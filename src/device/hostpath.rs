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

/// The host path's facts for one disk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct HostFacts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmc: Option<MmcLink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usb: Option<UsbLink>,
    /// Facts that could not be read, each "… unknown, because …".
    pub unknown: Vec<String>,
}

/// Read the host path of the disk whose sysfs `device` directory is `dev_dir`
/// (`/sys/class/block/sda/device`), with debugfs at `debugfs` (`/sys/kernel/debug`).
/// `None` for a disk on neither MMC nor USB (SATA, NVMe, virtio: not read yet).
pub fn read(dev_dir: &Path, debugfs: &Path) -> Option<HostFacts> {
    if super::mmc::is_card_dir(dev_dir) {
        return Some(read_mmc(dev_dir, debugfs));
    }
    read_usb(dev_dir)
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

fn read_mmc(dev_dir: &Path, debugfs: &Path) -> HostFacts {
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
        Err(why) => facts.unknown.push(format!("{what} unknown, because {why}")),
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
                        link.transport = match p {
                            0x50 => Some("bulk-only".into()),
                            0x62 => Some("UAS".into()),
                            _ => None,
                        };
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
        let f = read(&dev, &debugfs).unwrap();
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
        let f = read(&dev, &root.path().join("nowhere")).unwrap();
        assert!(f.unknown[0].contains("does not exist"), "{:?}", f.unknown);
        // Mounted, with another host only.
        std::fs::create_dir_all(debugfs.join("mmc1")).unwrap();
        let f = read(&dev, &debugfs).unwrap();
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
        let f = read(&dev, &debugfs).unwrap();
        assert!(f.unknown.is_empty(), "{:?}", f.unknown);
        let ios = f.mmc.unwrap().ios.unwrap();
        assert_eq!(ios.timing, Some(Timing::SdHighSpeed));
        // Malformed: unknown, with the parse error naming the file.
        std::fs::write(debugfs.join("mmc0/ios"), "clock: fast\n").unwrap();
        let f = read(&dev, &debugfs).unwrap();
        assert!(
            f.unknown[0].contains(&format!("{}", debugfs.join("mmc0/ios").display())),
            "{:?}",
            f.unknown
        );
        assert_eq!(f.mmc.unwrap().ios, None);
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
        let f = read(&dev, &debugfs).unwrap();
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
    fn a_disk_on_neither_mmc_nor_usb_has_no_host_path_here() {
        let root = tempfile::tempdir().unwrap();
        let dev = root
            .path()
            .join("sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0");
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("type"), "0\n").unwrap();
        assert_eq!(read(&dev, root.path()), None);
    }
}
