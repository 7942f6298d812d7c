//! eMMC registers and wear: the kernel's sysfs `life_time` and `pre_eol_info`, and the same fields
//! decoded from the EXT_CSD register (a dump file, or read live with MMC_IOC_CMD).
//!
//! Field positions (JEDEC JESD84-B50/B51 EXT_CSD; Linux `include/linux/mmc/mmc.h`):
//! byte 192 EXT_CSD_REV, 194 CSD_STRUCTURE, 267 PRE_EOL_INFO, 268
//! DEVICE_LIFE_TIME_EST_TYP_A, 269 DEVICE_LIFE_TIME_EST_TYP_B, 504 S_CMD_SET. The wear
//! fields exist from revision 7 (eMMC 5.0); Linux (`mmc_decode_ext_csd`) copies them only
//! then and prints 0x00 (not defined) below it, in `life_time` as `0x%02x 0x%02x` and in
//! `pre_eol_info` as `0x%02x` (some vendor kernels print `%02x`, without `0x`).

use super::mmc::quote;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// EXT_CSD byte positions.
pub const EXT_CSD_REV: usize = 192;
pub const EXT_CSD_STRUCTURE: usize = 194;
pub const EXT_CSD_PRE_EOL_INFO: usize = 267;
pub const EXT_CSD_LIFE_TIME_EST_TYP_A: usize = 268;
pub const EXT_CSD_LIFE_TIME_EST_TYP_B: usize = 269;
pub const EXT_CSD_S_CMD_SET: usize = 504;
/// The first EXT_CSD revision with the wear fields (eMMC 5.0).
pub const FIRST_REV_WITH_WEAR: u8 = 7;

/// The eMMC version an EXT_CSD revision belongs to (JESD84 EXT_CSD_REV table).
pub fn revision_name(rev: u8) -> &'static str {
    match rev {
        0 => "MMC 4.0",
        1 => "MMC 4.1",
        2 => "MMC 4.2",
        3 => "MMC 4.3",
        4 => "obsolete revision 4",
        5 => "MMC 4.41",
        6 => "MMC 4.5/4.51",
        7 => "MMC 5.0/5.01",
        8 => "MMC 5.1",
        _ => "a revision newer than this tool knows",
    }
}

/// One DEVICE_LIFE_TIME_EST band, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "meaning", rename_all = "snake_case")]
pub enum LifeTime {
    /// 0x01..0x0A: between `min` and `max` percent of the estimated life used.
    Used {
        raw: u8,
        min_percent: u8,
        max_percent: u8,
    },
    /// 0x0B: the estimated device life is exceeded.
    Exceeded { raw: u8 },
    /// 0x00: the device does not define it.
    NotDefined { raw: u8 },
    /// The EXT_CSD revision has no such field (below 7).
    NotProvided { rev: u8 },
    /// A code the standard reserves (0x0C and up).
    Reserved { raw: u8 },
}

impl LifeTime {
    /// Decode a band `raw` read from a device of revision `rev` (unknown: `None`).
    pub fn decode(raw: u8, rev: Option<u8>) -> LifeTime {
        match (raw, rev) {
            (_, Some(r)) if r < FIRST_REV_WITH_WEAR => LifeTime::NotProvided { rev: r },
            (0, _) => LifeTime::NotDefined { raw },
            (1..=10, _) => LifeTime::Used {
                raw,
                min_percent: (raw - 1) * 10,
                max_percent: raw * 10,
            },
            (11, _) => LifeTime::Exceeded { raw },
            _ => LifeTime::Reserved { raw },
        }
    }

    /// The used fraction at the band's upper bound (0x0B counts as 1.0); `None` when
    /// there is no figure.
    pub fn used_ratio(&self) -> Option<f64> {
        match self {
            LifeTime::Used { max_percent, .. } => Some(f64::from(*max_percent) / 100.0),
            LifeTime::Exceeded { .. } => Some(1.0),
            _ => None,
        }
    }

    /// Short words: "10-20% used", "exceeded", "not defined".
    pub fn short(&self) -> String {
        match self {
            LifeTime::Used {
                min_percent,
                max_percent,
                ..
            } => format!("{min_percent}–{max_percent}% used"),
            LifeTime::Exceeded { .. } => "life time exceeded".to_string(),
            LifeTime::NotDefined { .. } => "not defined".to_string(),
            LifeTime::NotProvided { .. } => "not provided".to_string(),
            LifeTime::Reserved { raw } => format!("reserved code 0x{raw:02x}"),
        }
    }

    /// One sentence on what the band means.
    pub fn meaning(&self, area: &str) -> String {
        match self {
            LifeTime::Used {
                raw,
                min_percent,
                max_percent,
            } => format!(
                "0x{raw:02x}: {min_percent}–{max_percent} % of the {area}'s estimated life is used"
            ),
            LifeTime::Exceeded { raw } => format!(
                "0x{raw:02x}: the {area} has used more than its estimated life; data may be lost — replace the device"
            ),
            LifeTime::NotDefined { raw } => format!(
                "0x{raw:02x}: the device does not report an estimate for the {area}"
            ),
            LifeTime::NotProvided { rev } => format!(
                "not provided by this revision: EXT_CSD revision {rev} ({}) has no life-time estimate; it came with revision 7 (eMMC 5.0)",
                revision_name(*rev)
            ),
            LifeTime::Reserved { raw } => format!(
                "0x{raw:02x} is a code the JEDEC standard reserves, so it says nothing about the {area}"
            ),
        }
    }
}

/// PRE_EOL_INFO, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "meaning", rename_all = "snake_case")]
pub enum PreEol {
    Normal {
        raw: u8,
    },
    /// 80 % of the reserved blocks consumed.
    Warning {
        raw: u8,
    },
    /// 90 % of the reserved blocks consumed.
    Urgent {
        raw: u8,
    },
    NotDefined {
        raw: u8,
    },
    NotProvided {
        rev: u8,
    },
    Reserved {
        raw: u8,
    },
}

impl PreEol {
    pub fn decode(raw: u8, rev: Option<u8>) -> PreEol {
        match (raw, rev) {
            (_, Some(r)) if r < FIRST_REV_WITH_WEAR => PreEol::NotProvided { rev: r },
            (0, _) => PreEol::NotDefined { raw },
            (1, _) => PreEol::Normal { raw },
            (2, _) => PreEol::Warning { raw },
            (3, _) => PreEol::Urgent { raw },
            _ => PreEol::Reserved { raw },
        }
    }

    /// The raw register value where it has a defined meaning.
    pub fn defined(&self) -> Option<u8> {
        match self {
            PreEol::Normal { raw } | PreEol::Warning { raw } | PreEol::Urgent { raw } => Some(*raw),
            _ => None,
        }
    }

    pub fn short(&self) -> String {
        match self {
            PreEol::Normal { .. } => "normal".to_string(),
            PreEol::Warning { .. } => "warning".to_string(),
            PreEol::Urgent { .. } => "urgent".to_string(),
            PreEol::NotDefined { .. } => "not defined".to_string(),
            PreEol::NotProvided { .. } => "not provided".to_string(),
            PreEol::Reserved { raw } => format!("reserved code 0x{raw:02x}"),
        }
    }

    pub fn meaning(&self) -> String {
        match self {
            PreEol::Normal { raw } => format!("0x{raw:02x}: normal — the reserved (spare) blocks are not running low"),
            PreEol::Warning { raw } => format!("0x{raw:02x}: warning — 80 % of the reserved (spare) blocks are consumed"),
            PreEol::Urgent { raw } => format!("0x{raw:02x}: urgent — 90 % of the reserved (spare) blocks are consumed; the device is near its end of life"),
            PreEol::NotDefined { raw } => format!("0x{raw:02x}: the device does not report its reserved blocks"),
            PreEol::NotProvided { rev } => format!(
                "not provided by this revision: EXT_CSD revision {rev} ({}) has no pre-EOL information; it came with revision 7 (eMMC 5.0)",
                revision_name(*rev)
            ),
            PreEol::Reserved { raw } => format!("0x{raw:02x} is a code the JEDEC standard reserves"),
        }
    }
}

/// The eMMC wear fields from one source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct EmmcWear {
    /// Where they came from, in words ("sysfs life_time and pre_eol_info", "EXT_CSD dump
    /// FILE", "EXT_CSD read with MMC_IOC_CMD").
    pub source: String,
    /// EXT_CSD_REV, where known.
    pub ext_csd_rev: Option<u8>,
    /// Type A memory (in most parts the SLC / enhanced area).
    pub life_time_a: LifeTime,
    /// Type B memory (the MLC/TLC main area).
    pub life_time_b: LifeTime,
    pub pre_eol: PreEol,
}

impl EmmcWear {
    /// The fields from raw register values.
    pub fn from_raw(source: String, rev: Option<u8>, a: u8, b: u8, pre_eol: u8) -> EmmcWear {
        EmmcWear {
            source,
            ext_csd_rev: rev,
            life_time_a: LifeTime::decode(a, rev),
            life_time_b: LifeTime::decode(b, rev),
            pre_eol: PreEol::decode(pre_eol, rev),
        }
    }

    /// True when at least one field carries a defined figure.
    pub fn any_defined(&self) -> bool {
        self.life_time_a.used_ratio().is_some()
            || self.life_time_b.used_ratio().is_some()
            || self.pre_eol.defined().is_some()
    }
}

/// One hex byte as the kernel prints it: `0x` optional, one or two hex digits.
fn hex_byte(attribute: &str, whole: &str, token: &str) -> Result<u8> {
    let digits = token
        .strip_prefix("0x")
        .or_else(|| token.strip_prefix("0X"))
        .unwrap_or(token);
    if digits.is_empty() || digits.len() > 2 || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(malformed(
            attribute,
            whole,
            &format!("{} is not a hex byte", quote(token)),
        ));
    }
    u8::from_str_radix(digits, 16).map_err(|_| {
        malformed(
            attribute,
            whole,
            &format!("{} is not a hex byte", quote(token)),
        )
    })
}

fn malformed(attribute: &str, text: &str, why: &str) -> Error {
    Error::runtime(format!(
        "sysfs attribute {attribute} is malformed: {} ({why})",
        quote(text)
    ))
}

/// Parse the sysfs `life_time` text, e.g. `0x02 0x01`: the type A and type B bands.
pub fn parse_life_time(text: &str) -> Result<(u8, u8)> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    match tokens.as_slice() {
        [a, b] => Ok((
            hex_byte("life_time", text, a)?,
            hex_byte("life_time", text, b)?,
        )),
        _ => Err(malformed(
            "life_time",
            text,
            &format!(
                "expected two hex bytes, type A and type B, like \"0x01 0x02\"; found {} field(s)",
                tokens.len()
            ),
        )),
    }
}

/// Parse the sysfs `pre_eol_info` text, e.g. `0x01`.
pub fn parse_pre_eol(text: &str) -> Result<u8> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    match tokens.as_slice() {
        [one] => hex_byte("pre_eol_info", text, one),
        _ => Err(malformed(
            "pre_eol_info",
            text,
            &format!(
                "expected one hex byte like \"0x01\"; found {} field(s)",
                tokens.len()
            ),
        )),
    }
}

/// Parse the sysfs `rev` text (`0x%x`), e.g. `0x8`.
pub fn parse_rev(text: &str) -> Result<u8> {
    let t = text.trim();
    let digits = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    u8::from_str_radix(digits, 16).map_err(|_| {
        malformed(
            "rev",
            text,
            "expected the EXT_CSD revision as hex, like \"0x8\"",
        )
    })
}

/// A 512-byte EXT_CSD register, in register order (byte 0 first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtCsd {
    pub bytes: [u8; 512],
    /// The dump was printed from byte 511 down to byte 0, as older Linux debugfs did
    /// (`mmc_ext_csd_open`'s `for (i = 511; i >= 0; i--)`), and was turned round.
    pub reversed: bool,
}

/// Whether `bytes` look like an EXT_CSD register in this order: CSD_STRUCTURE (194) is a
/// defined version (0-2) and S_CMD_SET (504) lists the standard MMC command set (bit 0).
fn plausible(bytes: &[u8; 512]) -> bool {
    bytes[EXT_CSD_STRUCTURE] <= 2 && bytes[EXT_CSD_S_CMD_SET] & 1 == 1
}

impl ExtCsd {
    /// Parse a dump named `name` (for messages): 512 bytes of binary (as the ioctl or
    /// `dd` gives), or 1024 hex digits with any whitespace (as
    /// `/sys/kernel/debug/mmc0/mmc0:0001/ext_csd` prints). A dump in the old debugfs
    /// order (byte 511 first) is recognised and turned round; one that is plausible in
    /// neither order is refused (exit 2).
    pub fn parse(name: &str, data: &[u8]) -> Result<ExtCsd> {
        let bytes: [u8; 512] = if data.len() == 512 {
            let mut b = [0u8; 512];
            b.copy_from_slice(data);
            b
        } else {
            let digits: Vec<u8> = data
                .iter()
                .copied()
                .filter(|c| !c.is_ascii_whitespace())
                .collect();
            if let Some(pos) = digits.iter().position(|c| !c.is_ascii_hexdigit()) {
                return Err(Error::usage(format!(
                    "{name}: not an EXT_CSD dump: character {} (byte {pos} of the hex text) is not a hex digit; give 512 bytes of binary or the 1024 hex digits debugfs prints",
                    quote(&String::from_utf8_lossy(&digits[pos..(pos + 1)])),
                )));
            }
            if digits.len() != 1024 {
                return Err(Error::usage(format!(
                    "{name}: an EXT_CSD dump is 512 bytes of binary or 1024 hex digits, and this holds {} bytes ({} hex digits){}",
                    data.len(),
                    digits.len(),
                    if digits.len() < 1024 { ": truncated?" } else { "" }
                )));
            }
            let mut b = [0u8; 512];
            for (slot, pair) in b.iter_mut().zip(digits.chunks(2)) {
                let s = std::str::from_utf8(pair).unwrap_or("00");
                *slot = u8::from_str_radix(s, 16).unwrap_or(0);
            }
            b
        };
        if plausible(&bytes) {
            return Ok(ExtCsd {
                bytes,
                reversed: false,
            });
        }
        let mut turned = bytes;
        turned.reverse();
        if data.len() != 512 && plausible(&turned) {
            return Ok(ExtCsd {
                bytes: turned,
                reversed: true,
            });
        }
        Err(Error::usage(format!(
            "{name}: does not look like an EXT_CSD register: CSD_STRUCTURE (byte 194) is 0x{:02x} (0-2 expected) and S_CMD_SET (byte 504) is 0x{:02x} (bit 0, the standard command set, expected)",
            bytes[EXT_CSD_STRUCTURE], bytes[EXT_CSD_S_CMD_SET]
        )))
    }

    pub fn rev(&self) -> u8 {
        self.bytes[EXT_CSD_REV]
    }

    /// The wear fields, decoded with the register's own revision.
    pub fn wear(&self, source: String) -> EmmcWear {
        EmmcWear::from_raw(
            source,
            Some(self.rev()),
            self.bytes[EXT_CSD_LIFE_TIME_EST_TYP_A],
            self.bytes[EXT_CSD_LIFE_TIME_EST_TYP_B],
            self.bytes[EXT_CSD_PRE_EOL_INFO],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_band_value_decodes() {
        assert_eq!(
            LifeTime::decode(0, Some(8)),
            LifeTime::NotDefined { raw: 0 }
        );
        for raw in 1u8..=10 {
            let lt = LifeTime::decode(raw, Some(8));
            assert_eq!(
                lt,
                LifeTime::Used {
                    raw,
                    min_percent: (raw - 1) * 10,
                    max_percent: raw * 10
                }
            );
            assert_eq!(lt.used_ratio(), Some(f64::from(raw) / 10.0));
            assert!(lt
                .meaning("type A memory")
                .contains(&format!("{} %", raw * 10)));
        }
        assert_eq!(
            LifeTime::decode(0x0b, Some(7)),
            LifeTime::Exceeded { raw: 0x0b }
        );
        assert_eq!(LifeTime::decode(0x0b, None).used_ratio(), Some(1.0));
        for raw in [0x0c, 0x10, 0xff] {
            let lt = LifeTime::decode(raw, Some(8));
            assert_eq!(lt, LifeTime::Reserved { raw });
            assert_eq!(lt.used_ratio(), None);
        }
        // Below revision 7 the byte means nothing, whatever it holds.
        let lt = LifeTime::decode(0x05, Some(6));
        assert_eq!(lt, LifeTime::NotProvided { rev: 6 });
        assert!(
            lt.meaning("x").contains("not provided by this revision"),
            "{}",
            lt.meaning("x")
        );
        assert!(lt.meaning("x").contains("MMC 4.5"));
    }

    #[test]
    fn pre_eol_values_and_out_of_range() {
        assert_eq!(PreEol::decode(0, Some(8)), PreEol::NotDefined { raw: 0 });
        assert_eq!(PreEol::decode(1, Some(8)).defined(), Some(1));
        assert_eq!(PreEol::decode(2, Some(8)), PreEol::Warning { raw: 2 });
        assert_eq!(PreEol::decode(3, Some(8)), PreEol::Urgent { raw: 3 });
        assert_eq!(PreEol::decode(4, Some(8)), PreEol::Reserved { raw: 4 });
        assert_eq!(PreEol::decode(4, Some(8)).defined(), None);
        assert_eq!(PreEol::decode(2, Some(5)), PreEol::NotProvided { rev: 5 });
    }

    #[test]
    fn sysfs_texts_parse_and_bad_ones_name_the_attribute() {
        assert_eq!(parse_life_time("0x02 0x01\n").unwrap(), (2, 1));
        assert_eq!(parse_life_time("0x0B 0x0a").unwrap(), (11, 10));
        assert_eq!(parse_pre_eol("0x01\n").unwrap(), 1);
        assert_eq!(parse_pre_eol("03").unwrap(), 3);
        assert_eq!(parse_rev("0x8\n").unwrap(), 8);
        for (text, needle) in [
            ("0xZZ 0x01", "\"0xZZ\" is not a hex byte"),
            ("0x01", "found 1 field(s)"),
            ("", "found 0 field(s)"),
            ("0x01 0x02 0x03", "found 3 field(s)"),
            ("0x001 0x02", "is not a hex byte"),
            ("0x 0x02", "is not a hex byte"),
        ] {
            let e = parse_life_time(text).unwrap_err();
            assert_eq!(e.exit_code(), 1);
            let m = e.to_string();
            assert!(m.contains("sysfs attribute life_time is malformed"), "{m}");
            assert!(m.contains(needle), "{text:?}: {m}");
        }
        let long = "0x01 ".repeat(200);
        let m = parse_life_time(&long).unwrap_err().to_string();
        assert!(
            m.contains("found 200 field(s)") && m.contains("characters)"),
            "{m}"
        );
        for text in ["", "banana", "0x01 0x01", "-1"] {
            let m = parse_pre_eol(text).unwrap_err().to_string();
            assert!(
                m.contains("sysfs attribute pre_eol_info is malformed"),
                "{m}"
            );
        }
        assert!(parse_rev("eight")
            .unwrap_err()
            .to_string()
            .contains("attribute rev"));
    }

    fn register(rev: u8, a: u8, b: u8, pre: u8) -> [u8; 512] {
        let mut r = [0u8; 512];
        r[EXT_CSD_REV] = rev;
        r[EXT_CSD_STRUCTURE] = 2;
        r[EXT_CSD_S_CMD_SET] = 1;
        r[EXT_CSD_LIFE_TIME_EST_TYP_A] = a;
        r[EXT_CSD_LIFE_TIME_EST_TYP_B] = b;
        r[EXT_CSD_PRE_EOL_INFO] = pre;
        r
    }

    #[test]
    fn ext_csd_binary_and_hex_decode_with_the_revision() {
        let bin = register(8, 3, 1, 2);
        let x = ExtCsd::parse("bin", &bin).unwrap();
        let w = x.wear("dump".into());
        assert_eq!(w.ext_csd_rev, Some(8));
        assert_eq!(w.life_time_a.used_ratio(), Some(0.3));
        assert_eq!(w.pre_eol, PreEol::Warning { raw: 2 });
        let hex: String = bin.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            ExtCsd::parse("hex", format!("{hex}\n").as_bytes()).unwrap(),
            x
        );
        // Old debugfs order: byte 511 printed first.
        let rev: String = bin.iter().rev().map(|b| format!("{b:02x}")).collect();
        let r = ExtCsd::parse("old", rev.as_bytes()).unwrap();
        assert!(r.reversed);
        assert_eq!(r.bytes, bin);
        // Revision 6: the bytes are not wear fields.
        let w6 = ExtCsd::parse("r6", &register(6, 3, 3, 3))
            .unwrap()
            .wear("d".into());
        assert_eq!(w6.life_time_a, LifeTime::NotProvided { rev: 6 });
        assert_eq!(w6.pre_eol, PreEol::NotProvided { rev: 6 });
        assert!(!w6.any_defined());
    }

    #[test]
    fn bad_ext_csd_dumps_name_the_file() {
        let hex: String = register(8, 1, 1, 1)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let e = ExtCsd::parse("dump.txt", &hex.as_bytes()[..1000]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().starts_with("dump.txt: "), "{e}");
        assert!(e.to_string().contains("1000 hex digits"), "{e}");
        let e = ExtCsd::parse("d.bin", &[0u8; 100]).unwrap_err();
        assert!(e.to_string().contains("d.bin"), "{e}");
        let mut bad = hex.clone();
        bad.replace_range(10..11, "g");
        assert!(ExtCsd::parse("g.txt", bad.as_bytes())
            .unwrap_err()
            .to_string()
            .contains("not a hex digit"));
        let e = ExtCsd::parse("zero.bin", &[0u8; 512]).unwrap_err();
        assert!(
            e.to_string().contains("does not look like an EXT_CSD"),
            "{e}"
        );
    }
}
