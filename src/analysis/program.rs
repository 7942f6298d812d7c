//! The program matrix (flashbench `-p`): throughput per block size for linear and random
//! writes of three data patterns and reads. Pure.

use crate::vocab::units::{format_bytes, format_rate};
use crate::vocab::Inference;
use std::collections::BTreeMap;

/// The columns of one row, in flashbench's order.
pub const COLUMNS: [&str; 8] = [
    "write_zeros",
    "write_ones",
    "write_5a",
    "read",
    "random_write_zeros",
    "random_write_ones",
    "random_write_5a",
    "random_read",
];

/// Throughput (bytes/s) of the eight operations at one block size.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProgramRow {
    pub block_bytes: u64,
    pub bytes_per_s: [f64; 8],
}

/// `efficient_write_block_bytes` (the smallest block size whose linear writes reach half
/// the best linear write speed) and `write_pattern_sensitive` (whether zeros, ones and
/// 0x5a write at different speeds, as on compressing controllers).
pub fn infer_program(rows: &[ProgramRow]) -> BTreeMap<String, Inference> {
    let mut out = BTreeMap::new();
    let mut rows: Vec<ProgramRow> = rows
        .iter()
        .copied()
        .filter(|r| r.bytes_per_s[..3].iter().all(|x| x.is_finite() && *x > 0.0))
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.block_bytes));
    if rows.len() < 2 {
        let why = "fewer than two block sizes measured";
        out.insert(
            "efficient_write_block_bytes".into(),
            Inference::inconclusive(why),
        );
        out.insert(
            "write_pattern_sensitive".into(),
            Inference::inconclusive(why),
        );
        return out;
    }
    let linear: Vec<f64> = rows
        .iter()
        .map(|r| super::median_nan(r.bytes_per_s[..3].to_vec()))
        .collect();
    let best = linear.iter().copied().fold(0.0, f64::max);
    let mut k = 0;
    while k + 1 < rows.len() && linear[k + 1] >= 0.5 * best {
        k += 1;
    }
    let efficient = if k + 1 == rows.len() {
        Inference::new(
            rows[k].block_bytes,
            0.6,
            format!(
                "even the smallest size measured ({}) writes at {} of the best {}; smaller sizes were not tested",
                format_bytes(rows[k].block_bytes),
                format_rate(linear[k]),
                format_rate(best)
            ),
        )
    } else {
        let clear = linear[k + 1] < 0.4 * best;
        Inference::new(
            rows[k].block_bytes,
            if clear { 0.9 } else { 0.7 },
            format!(
                "linear writes of {} reach {} (best {}); {} drop to {}",
                format_bytes(rows[k].block_bytes),
                format_rate(linear[k]),
                format_rate(best),
                format_bytes(rows[k + 1].block_bytes),
                format_rate(linear[k + 1])
            ),
        )
    };
    out.insert("efficient_write_block_bytes".into(), efficient);
    let spreads: Vec<f64> = rows
        .iter()
        .map(|r| {
            let p = &r.bytes_per_s[..3];
            p.iter().copied().fold(0.0, f64::max) / p.iter().copied().fold(f64::INFINITY, f64::min)
        })
        .collect();
    let m = super::median_nan(spreads);
    let pattern = if m >= 1.25 {
        Inference::new(
            true,
            if m >= 1.5 { 0.9 } else { 0.7 },
            format!("zeros, ones and 0x5a differ by x{m:.2} (median over block sizes)"),
        )
    } else if m < 1.1 {
        Inference::new(
            false,
            0.9,
            format!("zeros, ones and 0x5a write alike (within x{m:.2}, median over block sizes)"),
        )
    } else {
        Inference::inconclusive(format!(
            "patterns differ by x{m:.2} (median): between noise and a real effect"
        ))
    };
    out.insert("write_pattern_sensitive".into(), pattern);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Status;

    fn row(bs: u64, w: f64) -> ProgramRow {
        ProgramRow {
            block_bytes: bs,
            bytes_per_s: [w, w * 1.01, w * 0.99, 30e6, w / 3.0, w / 3.0, w / 3.0, 30e6],
        }
    }

    #[test]
    fn the_drop_below_the_page_size_is_found() {
        let rows = [
            row(65536, 13e6),
            row(32768, 11e6),
            row(16384, 9.9e6),
            row(8192, 3.7e6),
            row(4096, 1.5e6),
        ];
        let inf = infer_program(&rows);
        assert_eq!(inf["efficient_write_block_bytes"].as_u64(), Some(16384));
        assert_eq!(inf["efficient_write_block_bytes"].status, Status::Confident);
        assert_eq!(
            inf["write_pattern_sensitive"].value,
            Some(serde_json::json!(false))
        );
    }

    #[test]
    fn compressing_controllers_are_pattern_sensitive() {
        let mut rows = vec![row(65536, 13e6), row(32768, 11e6)];
        for r in &mut rows {
            r.bytes_per_s[0] *= 3.0; // zeros compress
        }
        let inf = infer_program(&rows);
        assert_eq!(
            inf["write_pattern_sensitive"].value,
            Some(serde_json::json!(true))
        );
        assert_eq!(
            infer_program(&[])
                .get("write_pattern_sensitive")
                .unwrap()
                .status,
            Status::Inconclusive
        );
    }
}
