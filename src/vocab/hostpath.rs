//! The words of the host path, the link between a card and the machine: an MMC/SD bus
//! timing mode as the Linux MMC core names it. Spoken by the reader of debugfs `ios`
//! (device), the ceiling table (analysis) and the document.

use serde::{Deserialize, Serialize};

/// An MMC/SD bus timing mode (`ios->timing` in Linux), told by the words the kernel prints
/// in parentheses on the `timing spec:` line of debugfs `mmcN/ios`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Timing {
    /// Default speed (SD up to 25 MHz, MMC up to 26 MHz).
    Legacy,
    /// MMC high-speed (up to 52 MHz, single data rate).
    MmcHighSpeed,
    /// SD high-speed (up to 50 MHz, 3.3 V signalling).
    SdHighSpeed,
    /// UHS-I SDR12 (up to 25 MHz, 1.8 V).
    UhsSdr12,
    /// UHS-I SDR25 (up to 50 MHz, 1.8 V).
    UhsSdr25,
    /// UHS-I SDR50 (up to 100 MHz, 1.8 V).
    UhsSdr50,
    /// UHS-I SDR104 (up to 208 MHz, 1.8 V).
    UhsSdr104,
    /// UHS-I DDR50 (up to 50 MHz, both clock edges).
    UhsDdr50,
    /// eMMC DDR52 (up to 52 MHz, both clock edges).
    MmcDdr52,
    /// eMMC HS200 (up to 200 MHz, single data rate).
    MmcHs200,
    /// eMMC HS400 (up to 200 MHz, both edges, 8 bits), with or without enhanced strobe.
    MmcHs400,
}

impl Timing {
    /// The mode the kernel's words name; `None` for "invalid" or words no kernel prints.
    /// Kernels before 4.x named HS200 "mmc high-speed SDR200" and HS400 "mmc high-speed
    /// HS400" or "mmc high-speed DDR200"; newer ones "mmc HS200", "mmc HS400" and "mmc
    /// HS400 enhanced strobe".
    pub fn from_words(words: &str) -> Option<Timing> {
        Some(match words.trim() {
            "legacy" => Timing::Legacy,
            "mmc high-speed" => Timing::MmcHighSpeed,
            "sd high-speed" => Timing::SdHighSpeed,
            "sd uhs SDR12" => Timing::UhsSdr12,
            "sd uhs SDR25" => Timing::UhsSdr25,
            "sd uhs SDR50" => Timing::UhsSdr50,
            "sd uhs SDR104" => Timing::UhsSdr104,
            "sd uhs DDR50" => Timing::UhsDdr50,
            "mmc DDR52" => Timing::MmcDdr52,
            "mmc HS200" | "mmc high-speed SDR200" => Timing::MmcHs200,
            "mmc HS400"
            | "mmc HS400 enhanced strobe"
            | "mmc high-speed HS400"
            | "mmc high-speed DDR200" => Timing::MmcHs400,
            _ => return None,
        })
    }

    /// The mode's usual name ("SD high-speed", "UHS-I SDR104", "HS200").
    pub fn name(self) -> &'static str {
        match self {
            Timing::Legacy => "default speed (legacy)",
            Timing::MmcHighSpeed => "MMC high-speed",
            Timing::SdHighSpeed => "SD high-speed",
            Timing::UhsSdr12 => "UHS-I SDR12",
            Timing::UhsSdr25 => "UHS-I SDR25",
            Timing::UhsSdr50 => "UHS-I SDR50",
            Timing::UhsSdr104 => "UHS-I SDR104",
            Timing::UhsDdr50 => "UHS-I DDR50",
            Timing::MmcDdr52 => "eMMC DDR52",
            Timing::MmcHs200 => "eMMC HS200",
            Timing::MmcHs400 => "eMMC HS400",
        }
    }

    /// The words the kernel prints for the mode (today's kernels' words).
    pub fn kernel_words(self) -> &'static str {
        match self {
            Timing::Legacy => "legacy",
            Timing::MmcHighSpeed => "mmc high-speed",
            Timing::SdHighSpeed => "sd high-speed",
            Timing::UhsSdr12 => "sd uhs SDR12",
            Timing::UhsSdr25 => "sd uhs SDR25",
            Timing::UhsSdr50 => "sd uhs SDR50",
            Timing::UhsSdr104 => "sd uhs SDR104",
            Timing::UhsDdr50 => "sd uhs DDR50",
            Timing::MmcDdr52 => "mmc DDR52",
            Timing::MmcHs200 => "mmc HS200",
            Timing::MmcHs400 => "mmc HS400",
        }
    }

    /// The kernel's number for the mode (`MMC_TIMING_*`), printed before its words.
    pub fn kernel_code(self) -> u8 {
        match self {
            Timing::Legacy => 0,
            Timing::MmcHighSpeed => 1,
            Timing::SdHighSpeed => 2,
            Timing::UhsSdr12 => 3,
            Timing::UhsSdr25 => 4,
            Timing::UhsSdr50 => 5,
            Timing::UhsSdr104 => 6,
            Timing::UhsDdr50 => 7,
            Timing::MmcDdr52 => 8,
            Timing::MmcHs200 => 9,
            Timing::MmcHs400 => 10,
        }
    }

    /// The names the simulator's `host_timing` key takes, in the order of the modes.
    pub const SIM_NAMES: [&'static str; 11] = [
        "legacy", "mmc-hs", "sd-hs", "sdr12", "sdr25", "sdr50", "sdr104", "ddr50", "ddr52",
        "hs200", "hs400",
    ];

    const ALL: [Timing; 11] = [
        Timing::Legacy,
        Timing::MmcHighSpeed,
        Timing::SdHighSpeed,
        Timing::UhsSdr12,
        Timing::UhsSdr25,
        Timing::UhsSdr50,
        Timing::UhsSdr104,
        Timing::UhsDdr50,
        Timing::MmcDdr52,
        Timing::MmcHs200,
        Timing::MmcHs400,
    ];

    /// The mode a `host_timing` name gives.
    pub fn from_sim_name(name: &str) -> Option<Timing> {
        let i = Self::SIM_NAMES.iter().position(|n| *n == name)?;
        Some(Self::ALL[i])
    }

    /// The `host_timing` name of the mode.
    pub fn sim_name(self) -> &'static str {
        let i = Self::ALL.iter().position(|t| *t == self).unwrap_or(0);
        Self::SIM_NAMES[i]
    }

    /// Whether data moves on both clock edges.
    pub fn double_data_rate(self) -> bool {
        matches!(self, Timing::UhsDdr50 | Timing::MmcDdr52 | Timing::MmcHs400)
    }

    /// Whether the mode is one of UHS-I's (SD at 1.8 V).
    pub fn uhs(self) -> bool {
        matches!(
            self,
            Timing::UhsSdr12
                | Timing::UhsSdr25
                | Timing::UhsSdr50
                | Timing::UhsSdr104
                | Timing::UhsDdr50
        )
    }
}

/// What the simulated host path presents, as the kernel prints it: the text of debugfs
/// `mmcN/ios`, sysfs `cmdq_en`, and the USB device's `speed`, the interface's
/// `bInterfaceProtocol` and its driver's name. The simulator presents them (`sim:…,host_timing=…`);
/// a reader decodes them as it decodes a real tree (`device::hostpath::presented`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PresentedHost {
    /// The card behind the path is an SD card (its `type` would read SD).
    pub sd_card: bool,
    pub ios: Option<String>,
    pub cmdq_en: Option<String>,
    pub usb_speed: Option<String>,
    pub usb_protocol: Option<String>,
    pub usb_driver: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_words_old_and_new_name_the_same_modes() {
        assert_eq!(
            Timing::from_words("sd high-speed"),
            Some(Timing::SdHighSpeed)
        );
        assert_eq!(Timing::from_words("sd uhs SDR104"), Some(Timing::UhsSdr104));
        for hs200 in ["mmc HS200", "mmc high-speed SDR200"] {
            assert_eq!(Timing::from_words(hs200), Some(Timing::MmcHs200), "{hs200}");
        }
        for hs400 in [
            "mmc HS400",
            "mmc HS400 enhanced strobe",
            "mmc high-speed HS400",
            "mmc high-speed DDR200",
        ] {
            assert_eq!(Timing::from_words(hs400), Some(Timing::MmcHs400), "{hs400}");
        }
        assert_eq!(Timing::from_words("invalid"), None);
        assert_eq!(Timing::from_words("SD HIGH-SPEED"), None);
        assert!(Timing::MmcHs400.double_data_rate());
        assert!(!Timing::SdHighSpeed.uhs());
    }
}
