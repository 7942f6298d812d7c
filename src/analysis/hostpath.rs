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
