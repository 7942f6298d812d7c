//! The SD Configuration Register (SCR, 64 bits, SD cards only): which version of the SD
//! Physical Layer specification the card implements and the bus widths it takes. Linux
//! prints it in sysfs `scr` as 16 lowercase hex digits, most significant first (QEMU's SD
//! card: `0225000000000000`).
//!
//! Bit numbers are the SD Physical Layer Simplified Specification's (SCR, table 5-17):
//! SCR_STRUCTURE [63:60], SD_SPEC [59:56], DATA_STAT_AFTER_ERASE [55], SD_SECURITY
//! [54:52], SD_BUS_WIDTHS [51:48], SD_SPEC3 [47], EX_SECURITY [46:43], SD_SPEC4 [42],
//! SD_SPECX [41:38], CMD_SUPPORT [33:32] (the two bits Linux reads).

use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// The decoded SCR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ScrInfo {
    /// The register as read (16 hex digits).
    pub raw: String,
    /// SCR_STRUCTURE: 0 is the only version defined.
    pub structure: u8,
    /// The specification version SD_SPEC, SD_SPEC3, SD_SPEC4 and SD_SPECX name together
    /// ("1.0x", "1.10", "2.00", "3.0x", "4.xx" ... "9.xx"); `None` for a combination the
    /// specification does not define.
    pub spec_version: Option<String>,
    /// SD_SPEC3: the card implements version 3.00 or later (where UHS-I came in).
    pub sd_spec3: bool,
    /// SD_SPEC4.
    pub sd_spec4: bool,
    /// SD_SPECX (0: none of 5.xx and later).
    pub sd_specx: u8,
    /// The data bus widths the card takes, in bits (SD_BUS_WIDTHS: 1 and 4).
    pub bus_widths_bits: Vec<u8>,
    /// CMD_SUPPORT bit 33: SET_BLOCK_COUNT (CMD23).
    pub cmd23: bool,
    /// CMD_SUPPORT bit 32: speed class control (CMD20).
    pub cmd20: bool,
}

impl ScrInfo {
    /// The spec version as a number for comparisons ("3.0x" → 3); `None` when undefined.
    pub fn major_version(&self) -> Option<u8> {
        self.spec_version
            .as_deref()
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.parse().ok())
    }
}

/// Decode the sysfs `scr` text (`place` names the file for messages). A text that is not
/// 16 hex digits is an error naming the file; a version combination the specification
/// leaves undefined decodes to `spec_version: None`.
pub fn decode_scr(place: &str, text: &str) -> Result<ScrInfo> {
    let t = text.trim();
    let digits = t.strip_prefix("0x").unwrap_or(t);
    if digits.len() != 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::usage(format!(
            "{place}: the SCR register is {}, not 16 hex digits",
            super::mmc::quote(t)
        )));
    }
    let v = u64::from_str_radix(digits, 16)
        .map_err(|e| Error::usage(format!("{place}: the SCR register: {e}")))?;
    let bits = |hi: u32, lo: u32| ((v >> lo) & ((1u64 << (hi - lo + 1)) - 1)) as u8;
    let sd_spec = bits(59, 56);
    let sd_spec3 = bits(47, 47) == 1;
    let sd_spec4 = bits(42, 42) == 1;
    let sd_specx = bits(41, 38);
    let spec_version = match (sd_spec, sd_spec3, sd_spec4, sd_specx) {
        (0, false, false, 0) => Some("1.0x".to_string()),
        (1, false, false, 0) => Some("1.10".to_string()),
        (2, false, false, 0) => Some("2.00".to_string()),
        (2, true, false, 0) => Some("3.0x".to_string()),
        (2, true, true, 0) => Some("4.xx".to_string()),
        (2, true, _, x @ 1..=5) => Some(format!("{}.xx", x + 4)),
        _ => None,
    };
    let widths = bits(51, 48);
    let bus_widths_bits = [(0b0001, 1), (0b0100, 4)]
        .into_iter()
        .filter(|(mask, _)| widths & mask != 0)
        .map(|(_, w)| w)
        .collect();
    Ok(ScrInfo {
        raw: digits.to_ascii_lowercase(),
        structure: bits(63, 60),
        spec_version,
        sd_spec3,
        sd_spec4,
        sd_specx,
        bus_widths_bits,
        cmd23: bits(33, 33) == 1,
        cmd20: bits(32, 32) == 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qemu_sd_card_scr_is_an_sd_2_00_card_with_1_and_4_bit_buses() {
        // QEMU 7.2's sd-card under sdhci-pci, Linux 6.1 (issue 47).
        let s = decode_scr("scr", "0225000000000000\n").unwrap();
        assert_eq!(s.spec_version.as_deref(), Some("2.00"));
        assert_eq!(s.major_version(), Some(2));
        assert_eq!(s.bus_widths_bits, vec![1, 4]);
        assert!(!s.sd_spec3 && !s.sd_spec4 && !s.cmd23);
    }

    #[test]
    fn scr_versions_follow_the_spec_bits() {
        // SD_SPEC 2 + SD_SPEC3 (bit 47) + CMD23 (bit 33): a 3.0x card, as most UHS-I are.
        let s = decode_scr("scr", "0235800200000000").unwrap();
        assert_eq!(s.spec_version.as_deref(), Some("3.0x"));
        assert!(s.sd_spec3 && s.cmd23 && !s.cmd20);
        // + SD_SPEC4 (bit 42): 4.xx.
        let s = decode_scr("scr", "0235840300000000").unwrap();
        assert_eq!(s.spec_version.as_deref(), Some("4.xx"));
        assert!(s.cmd20);
        // SD_SPECX 2 (bits 41:38 = 0010: bit 39, the top bit of the fourth byte): 6.xx.
        let s = decode_scr("scr", "0235808000000000").unwrap();
        assert_eq!(s.sd_specx, 2);
        assert_eq!(s.spec_version.as_deref(), Some("6.xx"));
        assert_eq!(s.major_version(), Some(6));
        // SD_SPEC3 on a 1.10 card is no combination the specification defines.
        let s = decode_scr("scr", "0135800000000000").unwrap();
        assert_eq!(s.spec_version, None);
        assert_eq!(s.major_version(), None);
    }

    #[test]
    fn a_malformed_scr_is_an_error_naming_the_file() {
        for bad in ["", "0225", "02250000000000000", "zz25000000000000"] {
            let e = decode_scr("/sys/x/scr", bad).unwrap_err().to_string();
            assert!(e.contains("/sys/x/scr"), "{e}");
        }
    }
}
