//! The host path's ceiling, and whether the link was negotiated below what the card can
//! do: pure decisions on the facts `device::hostpath` reads.
//!
//! A ceiling has two parts, kept apart: the theory (the bus's raw rate from its clock,
//! width and data rate: an upper bound no transfer reaches) and, where published, what one
//! card measured through that mode, with its source. USB 2.0's often-quoted ~42 MB/s for
//! bulk-only is no measurement and is not used.

use crate::vocab::hostpath::Timing;
use crate::vocab::Inference;
use serde::{Deserialize, Serialize};

/// How fast a host path can move data at most.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Ceiling {
    /// The mode, in words ("SD high-speed at 26 MHz, 4 bits").
    pub mode: String,
    /// The bus's raw rate in bytes per second: theory, an upper bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theory_bytes_per_s: Option<u64>,
    /// How the theory was reckoned, labelled as theory.
    pub theory: String,
    /// What one card measured through this mode at this clock, in bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_bytes_per_s: Option<u64>,
    /// The measurement and its source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<String>,
    /// A published observation that is not a ceiling, or why a measurement does not apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One published measurement of a mode's ceiling: the mode, the clock it was measured at,
/// MB/s (as published), and where.
struct Measured {
    timing: Timing,
    clock_hz: u64,
    mb_per_s: f64,
    source: &'static str,
}

/// Measured ceilings per mode (issue 47): one card read through each mode on the same host.
const MEASURED: &[Measured] = &[
    Measured {
        timing: Timing::SdHighSpeed,
        clock_hz: 50_000_000,
        mb_per_s: 22.4,
        source: "micropython PR #19623",
    },
    Measured {
        timing: Timing::UhsSdr50,
        clock_hz: 100_000_000,
        mb_per_s: 43.5,
        source: "micropython PR #19623",
    },
    Measured {
        timing: Timing::UhsSdr104,
        clock_hz: 208_000_000,
        mb_per_s: 83.3,
        source: "micropython PR #19623",
    },
];

fn mb(bytes_per_s: f64) -> String {
    format!("{:.1} MB/s", bytes_per_s / 1e6)
}

fn mhz(hz: u64) -> String {
    let m = hz as f64 / 1e6;
    if (m - m.round()).abs() < 0.05 {
        format!("{m:.0} MHz")
    } else {
        format!("{m:.1} MHz")
    }
}

/// The ceiling of an MMC/SD link from its `ios` facts: the clock the controller made
/// (else the one asked for), the bus width and the mode's data rate. `None` when the
/// mode or the width is unknown (no theory can be reckoned).
pub fn mmc_ceiling(
    timing: Option<Timing>,
    clock_hz: u64,
    actual_clock_hz: Option<u64>,
    width_bits: Option<u8>,
) -> Option<Ceiling> {
    let timing = timing?;
    let width = width_bits?;
    let clock = actual_clock_hz.unwrap_or(clock_hz);
    let edges = if timing.double_data_rate() { 2 } else { 1 };
    let theory = clock as f64 * width as f64 * edges as f64 / 8.0;
    let which = if actual_clock_hz.is_some() {
        "actual"
    } else {
        "requested"
    };
    let mut c = Ceiling {
        mode: format!("{} at {} ({which}), {width} bits", timing.name(), mhz(clock)),
        theory_bytes_per_s: (clock > 0).then_some(theory as u64),
        theory: format!(
            "theory: {} x {width} bits{} / 8 = {}, the bus's raw rate before command overhead: an upper bound",
            mhz(clock),
            if edges == 2 { " x 2 edges" } else { "" },
            mb(theory)
        ),
        measured_bytes_per_s: None,
        measured: None,
        note: None,
    };
    if let Some(m) = MEASURED.iter().find(|m| m.timing == timing) {
        let at = format!(
            "{} MB/s measured at {} {} ({})",
            m.mb_per_s,
            mhz(m.clock_hz),
            timing.name(),
            m.source
        );
        // A measurement holds for the clock it was made at; a host that runs the mode
        // slower is not bound by it (QEMU's SD high-speed at 26 MHz).
        if clock * 100 >= m.clock_hz * 95 {
            c.measured_bytes_per_s = Some((m.mb_per_s * 1e6) as u64);
            c.measured = Some(format!("one card: {at}"));
        } else {
            c.note = Some(format!(
                "{at} does not apply: this link runs at {}",
                mhz(clock)
            ));
        }
    }
    Some(c)
}

/// The ceiling of a USB link from its speed in Mb/s (1.5, 12, 480, 5000, 10000, 20000)
/// and transport ("bulk-only", "UAS"). The theory takes the line code off (8b/10b at 5
/// Gb/s, 128b/132b above); no measured figure is claimed.
pub fn usb_ceiling(speed_mbps: f64, transport: Option<&str>) -> Option<Ceiling> {
    if !(speed_mbps.is_finite() && speed_mbps > 0.0) {
        return None;
    }
    let (name, code, code_words) = match speed_mbps {
        s if s <= 1.5 => ("USB 1.x low speed", 1.0, ""),
        s if s <= 12.0 => ("USB 1.x full speed", 1.0, ""),
        s if s <= 480.0 => ("USB 2.0 high speed", 1.0, ""),
        s if s <= 5000.0 => ("USB 3.x 5 Gb/s", 0.8, " x 8/10 (8b/10b)"),
        s if s <= 10000.0 => ("USB 3.x 10 Gb/s", 128.0 / 132.0, " x 128/132"),
        _ => ("USB 3.2 20 Gb/s", 128.0 / 132.0, " x 128/132"),
    };
    let theory = speed_mbps * 1e6 * code / 8.0;
    let transport_words = match transport {
        Some(t) => format!(", {t}"),
        None => String::new(),
    };
    let mut note = None;
    if speed_mbps <= 480.0 {
        note = Some(
            "not a ceiling but one observation: the same card read 11.1 MB/s through a USB 2 card reader and 42.9 MB/s on USB 3 (raspberrypi/usbboot#68)".to_string(),
        );
    } else if transport == Some("bulk-only") {
        note = Some(
            "bulk-only transport runs one command at a time: no command queueing over USB, so random I/O at depth gains nothing (UAS queues)".to_string(),
        );
    }
    Some(Ceiling {
        mode: format!("{name} ({speed_mbps} Mb/s{transport_words})"),
        theory_bytes_per_s: Some(theory as u64),
        theory: format!(
            "theory: {speed_mbps} Mb/s{code_words} / 8 = {}, the signalling rate before protocol overhead: an upper bound",
            mb(theory)
        ),
        measured_bytes_per_s: None,
        measured: None,
        note,
    })
}

/// What a host path lets a measurement show of the card behind it, for class verdicts
/// that blame the right part (issue 47 point 2).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostLimits {
    /// From what figure a measurement counts as held back by the path (bytes per
    /// second), and the ceiling that says so in words: 80 % of a measured ceiling, else
    /// half the theory (protocol overhead keeps every transfer well under a bus's raw
    /// rate: 22.4 of SD high-speed's 25 MB/s, and USB 2.0 mass storage far under its 60).
    pub ceiling: Option<(f64, String)>,
    /// Why the host sends the card one command at a time, when it does: a card's queued
    /// random I/O (A2's) cannot be measured through it.
    pub no_queue: Option<String>,
}

/// The limits of a host path from its ceiling and what it says of command queueing:
/// `cmdq_en` (eMMC, and SD on kernels that queue to SD cards), whether the card is an SD
/// card, and the USB transport.
pub fn limits(
    ceiling: Option<&Ceiling>,
    cmdq_en: Option<bool>,
    is_sd: bool,
    usb_transport: Option<&str>,
) -> HostLimits {
    let ceiling = ceiling.and_then(|c| match (c.measured_bytes_per_s, c.theory_bytes_per_s) {
        (Some(m), _) => Some((
            0.8 * m as f64,
            format!("{:.1} MB/s, measured through {}", m as f64 / 1e6, c.mode),
        )),
        (None, Some(t)) => Some((
            0.5 * t as f64,
            format!(
                "{:.1} MB/s in theory through {}, which no transfer reaches",
                t as f64 / 1e6,
                c.mode
            ),
        )),
        _ => None,
    });
    let no_queue = match (cmdq_en, usb_transport) {
        (_, Some("bulk-only")) => Some(
            "the USB reader speaks bulk-only transport, one command at a time".to_string(),
        ),
        (Some(false), _) => Some("the host has command queueing off (cmdq_en is 0)".to_string()),
        (None, None) if is_sd => Some(
            "the host does not queue commands to SD cards (mainline Linux has no SD command queueing, and the card shows no cmdq_en)"
                .to_string(),
        ),
        _ => None,
    };
    HostLimits { ceiling, no_queue }
}

/// The PCIe generation a lane rate belongs to, and its line code (8b/10b up to 5 GT/s,
/// 128b/130b from 8 GT/s; 64 GT/s carries FLITs, whose framing is not counted here).
fn pcie_generation(gts: f64) -> (&'static str, f64, &'static str) {
    match gts {
        g if g <= 2.5 => ("1.x", 0.8, " x 8/10 (8b/10b)"),
        g if g <= 5.0 => ("2.x", 0.8, " x 8/10 (8b/10b)"),
        g if g <= 8.0 => ("3.x", 128.0 / 130.0, " x 128/130"),
        g if g <= 16.0 => ("4.0", 128.0 / 130.0, " x 128/130"),
        g if g <= 32.0 => ("5.0", 128.0 / 130.0, " x 128/130"),
        _ => ("6.0", 1.0, ""),
    }
}

/// The ceiling of a PCIe link (an NVMe disk's) from its lane rate in GT/s and its lanes:
/// theory only, the raw rate less the line code, before packet overhead.
pub fn pcie_ceiling(gts: f64, lanes: u8) -> Option<Ceiling> {
    if !(gts.is_finite() && gts > 0.0 && lanes > 0) {
        return None;
    }
    let (generation, code, code_words) = pcie_generation(gts);
    let theory = gts * 1e9 * lanes as f64 * code / 8.0;
    Some(Ceiling {
        mode: format!("PCIe {generation} x{lanes} ({gts} GT/s)"),
        theory_bytes_per_s: Some(theory as u64),
        theory: format!(
            "theory: {gts} GT/s x {lanes} lanes{code_words} / 8 = {}, the signalling rate before packet overhead: an upper bound",
            mb(theory)
        ),
        measured_bytes_per_s: None,
        measured: None,
        note: None,
    })
}

/// The ceiling of a SATA link from its speed in Gb/s (1.5, 3.0, 6.0): theory, the line
/// rate less 8b/10b, before FIS overhead.
pub fn sata_ceiling(gbps: f64) -> Option<Ceiling> {
    if !(gbps.is_finite() && gbps > 0.0) {
        return None;
    }
    let theory = gbps * 1e9 * 0.8 / 8.0;
    let revision = match gbps {
        g if g <= 1.5 => "SATA 1.5 Gb/s (revision 1)",
        g if g <= 3.0 => "SATA 3 Gb/s (revision 2)",
        _ => "SATA 6 Gb/s (revision 3)",
    };
    Some(Ceiling {
        mode: revision.to_string(),
        theory_bytes_per_s: Some(theory as u64),
        theory: format!(
            "theory: {gbps} Gb/s x 8/10 (8b/10b) / 8 = {}, the line rate before protocol overhead: an upper bound",
            mb(theory)
        ),
        measured_bytes_per_s: None,
        measured: None,
        note: None,
    })
}

/// Whether an NVMe disk's PCIe link runs below what the device can do: a lower lane rate
/// or fewer lanes than its own `max_link_*`. The slot's abilities are not in the
/// device's attributes, so the cause is named as the usual one, tentatively.
pub fn pcie_below(
    current: (Option<f64>, Option<u8>),
    max: (Option<f64>, Option<u8>),
) -> Option<Inference> {
    let slower = matches!((current.0, max.0), (Some(c), Some(m)) if c < m);
    let narrower = matches!((current.1, max.1), (Some(c), Some(m)) if c < m);
    if !(slower || narrower) {
        return None;
    }
    let show = |(g, w): (Option<f64>, Option<u8>)| {
        format!(
            "{} x{}",
            g.map_or("? GT/s".to_string(), |g| format!("{g} GT/s")),
            w.map_or("?".to_string(), |w| w.to_string())
        )
    };
    Some(Inference::new(
        "PCIe",
        0.6,
        format!(
            "negotiated below what the device can do: the link runs at {}, the device can do {}; the usual cause is the slot (fewer lanes wired, an older PCIe generation above it, an M.2 slot behind the chipset, a riser or adapter), or a platform that lowers the link speed while idle; the slot's abilities are not visible here, so this is a possible cause, not a certainty",
            show(current),
            show(max)
        ),
    ))
}

/// Whether a SATA link runs below what its port can do: `sata_spd` under the port's own
/// limit, or under a limit the kernel lowered. The drive's own top speed is not in
/// sysfs: an older drive explains a slower link as well.
pub fn sata_below(
    speed: Option<f64>,
    kernel_limit: Option<f64>,
    port_limit: Option<f64>,
) -> Option<Inference> {
    let speed = speed?;
    let port_below = port_limit.is_some_and(|p| speed < p);
    let lowered = matches!((kernel_limit, port_limit), (Some(k), Some(p)) if k < p)
        || (kernel_limit.is_some() && port_limit.is_none());
    if !(port_below || lowered) {
        return None;
    }
    let mut why = format!("the link runs at {speed} Gb/s");
    if let Some(p) = port_limit {
        why.push_str(&format!(", the port can do {p} Gb/s"));
    }
    if let Some(k) = kernel_limit.filter(|_| lowered) {
        why.push_str(&format!(
            ", and the kernel limits it to {k} Gb/s (libata lowers the limit after link errors: a cable, connector or power problem)"
        ));
    }
    Some(Inference::new(
        "SATA",
        0.6,
        format!(
            "negotiated below what the port can do: {why}; the other usual causes are a drive or cable of an older SATA generation; the drive's own top speed is not in sysfs, so this is a possible cause, not a certainty"
        ),
    ))
}

/// What an SD card says it can do, for [`negotiated_below`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CardAbility {
    /// The SCR's spec version ("2.00", "3.0x", …), when read.
    pub scr_version: Option<String>,
    /// SCR SD_SPEC3: version 3.00 or later, where UHS-I came in.
    pub sd_spec3: Option<bool>,
    /// The UHS speed grade the SD Status claims ("U1", "U3"), if any.
    pub uhs_grade: Option<String>,
}

/// Whether an SD card's link runs below what the card can do: a non-UHS timing (default
/// or high-speed at 3.3 V) on a card that claims a UHS speed grade, or whose SCR says SD
/// 3.00 or later. The host's own abilities are not in sysfs, so this is a possible cause
/// with its confidence, never a certainty. `None` when nothing says the card could do
/// more (an SD 2.00 card at high-speed runs at its best; QEMU's card is one).
pub fn negotiated_below(
    timing: Timing,
    voltage: Option<&str>,
    card: &CardAbility,
) -> Option<Inference> {
    if !matches!(timing, Timing::Legacy | Timing::SdHighSpeed) {
        return None;
    }
    let at = format!(
        "the bus runs {}{}",
        timing.name(),
        voltage.map_or(String::new(), |v| format!(" at {v}"))
    );
    let cause = "the usual cause is the host: a controller, board or device tree without 1.8 V signalling or UHS modes (sd-uhs-*, vqmmc-supply), or a voltage switch that failed at insertion (re-inserting the card or rebooting may get UHS-I); the host's abilities are not visible in sysfs, so this is a possible cause, not a certainty";
    if let Some(grade) = &card.uhs_grade {
        return Some(Inference::new(
            "UHS-I",
            0.7,
            format!(
                "negotiated below what the card can do: its SD Status claims {grade}, a UHS-I speed grade, yet {at}; {cause}"
            ),
        ));
    }
    if card.sd_spec3 == Some(true) {
        let v = card.scr_version.as_deref().unwrap_or("3.00 or later");
        return Some(Inference::new(
            "UHS-I",
            0.4,
            format!(
                "possibly negotiated below what the card can do: its SCR says SD {v}, the version UHS-I came with, yet {at}; SD 3.00 does not require UHS-I and the card claims no UHS speed grade, so this is inconclusive; {cause}"
            ),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qemu_card_ceiling_is_the_26_mhz_theory_not_the_50_mhz_measurement() {
        let c = mmc_ceiling(
            Some(Timing::SdHighSpeed),
            50_000_000,
            Some(26_000_000),
            Some(4),
        )
        .unwrap();
        assert_eq!(c.theory_bytes_per_s, Some(13_000_000));
        assert!(
            c.theory
                .starts_with("theory: 26 MHz x 4 bits / 8 = 13.0 MB/s"),
            "{}",
            c.theory
        );
        assert_eq!(c.measured_bytes_per_s, None);
        assert!(c.note.unwrap().contains("does not apply"));
        // At its full 50 MHz the measured 22.4 MB/s applies, beside the 25 MB/s theory.
        let c = mmc_ceiling(
            Some(Timing::SdHighSpeed),
            50_000_000,
            Some(50_000_000),
            Some(4),
        )
        .unwrap();
        assert_eq!(c.theory_bytes_per_s, Some(25_000_000));
        assert_eq!(c.measured_bytes_per_s, Some(22_400_000));
        assert!(c.measured.unwrap().contains("micropython PR #19623"));
    }

    #[test]
    fn ceilings_per_mode_count_width_and_edges() {
        let sdr104 = mmc_ceiling(Some(Timing::UhsSdr104), 208_000_000, None, Some(4)).unwrap();
        assert_eq!(sdr104.theory_bytes_per_s, Some(104_000_000));
        assert_eq!(sdr104.measured_bytes_per_s, Some(83_300_000));
        let sdr50 = mmc_ceiling(
            Some(Timing::UhsSdr50),
            100_000_000,
            Some(99_999_999),
            Some(4),
        )
        .unwrap();
        assert_eq!(sdr50.measured_bytes_per_s, Some(43_500_000));
        let hs400 = mmc_ceiling(
            Some(Timing::MmcHs400),
            200_000_000,
            Some(200_000_000),
            Some(8),
        )
        .unwrap();
        assert_eq!(hs400.theory_bytes_per_s, Some(400_000_000));
        assert!(hs400.theory.contains("x 2 edges"));
        assert_eq!(hs400.measured, None);
        // Unknown mode or width: no ceiling at all.
        assert_eq!(mmc_ceiling(None, 50_000_000, None, Some(4)), None);
        assert_eq!(
            mmc_ceiling(Some(Timing::SdHighSpeed), 50_000_000, None, None),
            None
        );
    }

    #[test]
    fn usb_ceilings_are_theory_with_no_claimed_measurement() {
        let u2 = usb_ceiling(480.0, Some("bulk-only")).unwrap();
        assert_eq!(u2.theory_bytes_per_s, Some(60_000_000));
        assert_eq!(u2.measured_bytes_per_s, None);
        assert!(u2.note.unwrap().contains("raspberrypi/usbboot#68"));
        let u3 = usb_ceiling(5000.0, Some("UAS")).unwrap();
        assert_eq!(u3.theory_bytes_per_s, Some(500_000_000));
        assert!(u3.mode.contains("UAS"));
        let bot = usb_ceiling(5000.0, Some("bulk-only")).unwrap();
        assert!(bot.note.unwrap().contains("no command queueing"));
        assert_eq!(usb_ceiling(f64::NAN, None), None);
        assert_eq!(usb_ceiling(0.0, None), None);
    }

    #[test]
    fn pcie_and_sata_ceilings_are_theory_by_generation_and_lanes() {
        let g3x4 = pcie_ceiling(8.0, 4).unwrap();
        // 8 GT/s x 4 x 128/130 / 8 = 3.94 GB/s.
        assert_eq!(g3x4.theory_bytes_per_s, Some(3_938_461_538));
        assert!(g3x4.mode.starts_with("PCIe 3.x x4"), "{}", g3x4.mode);
        assert!(g3x4.theory.starts_with("theory:"), "{}", g3x4.theory);
        assert_eq!(g3x4.measured, None);
        let g2x1 = pcie_ceiling(5.0, 1).unwrap();
        assert_eq!(g2x1.theory_bytes_per_s, Some(500_000_000));
        assert_eq!(pcie_ceiling(8.0, 0), None);
        assert_eq!(pcie_ceiling(f64::NAN, 4), None);
        for (gbps, bytes) in [(1.5, 150_000_000), (3.0, 300_000_000), (6.0, 600_000_000)] {
            let c = sata_ceiling(gbps).unwrap();
            assert_eq!(c.theory_bytes_per_s, Some(bytes), "{gbps}");
            assert!(c.theory.contains("8b/10b"), "{}", c.theory);
        }
        assert_eq!(sata_ceiling(0.0), None);
    }

    #[test]
    fn pcie_and_sata_below_need_a_known_higher_ability() {
        // Fewer lanes than the device has: tentative, naming both.
        let f = pcie_below((Some(8.0), Some(2)), (Some(8.0), Some(4))).unwrap();
        assert_eq!(f.status_word(), "tentative");
        assert!(
            f.evidence.contains("8 GT/s x2") && f.evidence.contains("8 GT/s x4"),
            "{}",
            f.evidence
        );
        assert!(pcie_below((Some(2.5), Some(4)), (Some(8.0), Some(4))).is_some());
        // At its best, or nothing known: no finding (negative controls).
        assert_eq!(pcie_below((Some(8.0), Some(4)), (Some(8.0), Some(4))), None);
        assert_eq!(pcie_below((None, None), (None, None)), None);
        assert_eq!(pcie_below((Some(8.0), None), (None, Some(4))), None);
        // SATA at 3 Gb/s on a 6 Gb/s port; a kernel-lowered limit is named.
        let f = sata_below(Some(3.0), None, Some(6.0)).unwrap();
        assert!(
            f.evidence.contains("the port can do 6 Gb/s"),
            "{}",
            f.evidence
        );
        let f = sata_below(Some(1.5), Some(1.5), Some(6.0)).unwrap();
        assert!(
            f.evidence.contains("libata lowers the limit"),
            "{}",
            f.evidence
        );
        let f = sata_below(Some(3.0), Some(3.0), None).unwrap();
        assert!(
            f.evidence.contains("kernel limits it to 3 Gb/s"),
            "{}",
            f.evidence
        );
        // No limit set anywhere (the usual "<unknown>"), or at the port's top: none.
        assert_eq!(sata_below(Some(6.0), None, None), None);
        assert_eq!(sata_below(Some(6.0), None, Some(6.0)), None);
        assert_eq!(sata_below(None, Some(1.5), Some(6.0)), None);
    }

    #[test]
    fn negotiated_below_needs_a_card_that_could_do_more() {
        // QEMU's SD 2.00 card at high-speed: its best mode, no finding (negative control).
        let sd2 = CardAbility {
            scr_version: Some("2.00".into()),
            sd_spec3: Some(false),
            uhs_grade: None,
        };
        assert_eq!(
            negotiated_below(Timing::SdHighSpeed, Some("3.30 V"), &sd2),
            None
        );
        // A U3 card stuck at high-speed: a tentative finding naming the host.
        let u3 = CardAbility {
            scr_version: Some("3.0x".into()),
            sd_spec3: Some(true),
            uhs_grade: Some("U3".into()),
        };
        let f = negotiated_below(Timing::SdHighSpeed, Some("3.30 V"), &u3).unwrap();
        assert_eq!(f.status_word(), "tentative");
        assert!(
            f.evidence.contains("U3") && f.evidence.contains("3.30 V"),
            "{}",
            f.evidence
        );
        assert!(f.evidence.contains("possible cause"), "{}", f.evidence);
        // The same card at SDR104: nothing to say.
        assert_eq!(
            negotiated_below(Timing::UhsSdr104, Some("1.80 V"), &u3),
            None
        );
        // SD 3.0x without a UHS grade: said, but inconclusive (no value).
        let sd3 = CardAbility {
            uhs_grade: None,
            ..u3
        };
        let f = negotiated_below(Timing::SdHighSpeed, None, &sd3).unwrap();
        assert_eq!(f.status_word(), "inconclusive");
        assert_eq!(f.value, None);
        // An eMMC mode is not judged here.
        assert_eq!(negotiated_below(Timing::MmcHighSpeed, None, &sd3), None);
    }
}
