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
