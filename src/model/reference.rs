//! The vendor's measured figures (sequential read / write, 4 KiB random IOPS) for SPI NOR,
//! SPI NAND, raw NAND and eMMC parts on its SoCs, embedded from `data/empirical.csv` (the
//! vendor's storage-performance guide's table), so a measurement can be set beside them.

use serde::{Deserialize, Serialize};

/// The embedded table.
pub const EMPIRICAL_CSV: &str = include_str!("../../data/empirical.csv");

/// One measured row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct EmpiricalRow {
    pub soc: String,
    pub media: String,
    pub part: String,
    /// As printed by the vendor, e.g. "40M/s".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq_read: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq_write: Option<String>,
    /// The same in bytes per second, reading the vendor's K and M as KiB and MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq_read_bytes_per_s: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq_write_bytes_per_s: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rand_read_iops: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rand_write_iops: Option<u64>,
    pub notes: String,
}

/// Parse a vendor rate like "40M/s", "5.6M/s", "270KB/s" into bytes per second (K and M
/// as powers of 1024); `None` for anything else.
pub fn parse_vendor_rate(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_suffix("/s")?;
    let t = t.strip_suffix('b').unwrap_or(t);
    let (num, mult) = if let Some(n) = t.strip_suffix('k') {
        (n, 1024.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1048576.0)
    } else if let Some(n) = t.strip_suffix('g') {
        (n, 1073741824.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * mult).round() as u64)
}

fn opt(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Parse the CSV (header `soc,media,part,seq_read,seq_write,rand_read_iops,rand_write_iops,notes`;
/// the notes column may contain no commas). Malformed lines are skipped.
pub fn parse(csv: &str) -> Vec<EmpiricalRow> {
    csv.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.splitn(8, ',').collect();
            if f.len() < 7 {
                return None;
            }
            Some(EmpiricalRow {
                soc: f[0].trim().to_string(),
                media: f[1].trim().to_string(),
                part: f[2].trim().to_string(),
                seq_read: opt(f[3]),
                seq_write: opt(f[4]),
                seq_read_bytes_per_s: parse_vendor_rate(f[3]),
                seq_write_bytes_per_s: parse_vendor_rate(f[4]),
                rand_read_iops: f[5].trim().parse().ok(),
                rand_write_iops: f[6].trim().parse().ok(),
                notes: f.get(7).map(|s| s.trim().to_string()).unwrap_or_default(),
            })
        })
        .collect()
}

/// The embedded table.
pub fn table() -> Vec<EmpiricalRow> {
    parse(EMPIRICAL_CSV)
}

fn normalise(s: &str) -> String {
    s.to_ascii_lowercase().replace(['-', '_'], " ")
}

/// Rows whose media contains `media` (case-insensitive; `spi-nand` matches "spi nand",
/// `mmc` matches "mmc" and "emmc") and whose part contains `part`.
pub fn filter(rows: &[EmpiricalRow], media: Option<&str>, part: Option<&str>) -> Vec<EmpiricalRow> {
    rows.iter()
        .filter(|r| media.is_none_or(|m| normalise(&r.media).contains(&normalise(m))))
        .filter(|r| {
            part.is_none_or(|p| {
                r.part
                    .to_ascii_lowercase()
                    .contains(&p.to_ascii_lowercase())
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_parses_with_its_figures() {
        let rows = table();
        assert_eq!(rows.len(), EMPIRICAL_CSV.lines().count() - 1);
        let first = &rows[0];
        assert_eq!(first.part, "K9F4G08U0F");
        assert_eq!(first.seq_read_bytes_per_s, Some(40 << 20));
        assert_eq!(
            first.seq_write_bytes_per_s,
            Some((5.6 * 1048576.0f64).round() as u64)
        );
        assert_eq!(first.rand_read_iops, None);
        let nor = rows.iter().find(|r| r.part == "GD25F256").unwrap();
        assert_eq!(nor.seq_write_bytes_per_s, Some(270 * 1024));
        assert_eq!(nor.notes, "quad 100MHz");
        let r = rows.iter().find(|r| r.part == "F50L1G41LB").unwrap();
        assert_eq!(
            (r.rand_read_iops, r.rand_write_iops),
            (Some(959), Some(266))
        );
    }

    #[test]
    fn filters_match_media_and_part_loosely() {
        let rows = table();
        let nand = filter(&rows, Some("spi-nand"), None);
        assert!(!nand.is_empty());
        assert!(nand.iter().all(|r| r.media == "spi nand"));
        let mmc = filter(&rows, Some("MMC"), None);
        assert!(mmc.iter().any(|r| r.media == "emmc") && mmc.iter().any(|r| r.media == "mmc"));
        let gd = filter(&rows, Some("spi nand"), Some("gd5f"));
        assert_eq!(gd.len(), 2);
        assert!(filter(&rows, Some("floppy"), None).is_empty());
        assert_eq!(filter(&rows, None, None).len(), rows.len());
    }

    #[test]
    fn vendor_rates_parse() {
        assert_eq!(
            parse_vendor_rate("165.56M/s"),
            Some((165.56 * 1048576.0f64).round() as u64)
        );
        assert_eq!(parse_vendor_rate("270KB/s"), Some(276480));
        assert_eq!(parse_vendor_rate(""), None);
        assert_eq!(parse_vendor_rate("fast"), None);
    }
}
