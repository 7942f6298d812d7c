//! The scatter probe (flashbench's `-s`): read `span` blocks at each of 2^order positions
//! one block apart, in a pseudo-random order, and keep the minimum time per position over
//! `count` rounds. The plot of time against offset shows erase-block-sized patterns such as
//! a faster FAT area. Returns samples only.

use crate::backend::{AlignedBuf, Backend};
use crate::vocab::units::format_bytes;
use crate::{Error, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

/// One position of the scatter test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ScatterPoint {
    pub offset: u64,
    /// Minimum read time over the rounds (ns).
    pub min_ns: u64,
}

/// Check that 2^order positions of `block` bytes plus the span fit on the device.
pub fn validate(size: u64, sector: u32, block: u64, order: u32, span: u32) -> Result<()> {
    if block == 0 || block % sector as u64 != 0 {
        return Err(Error::usage(format!(
            "block size {block} bytes is not a multiple of the device's {sector}-byte logical sector: use e.g. --blocksize 16K"
        )));
    }
    if order > 24 {
        return Err(Error::usage(format!(
            "--order {order} is too large: use at most 24 (16 million positions)"
        )));
    }
    if span == 0 {
        return Err(Error::usage("--span must be at least 1 block"));
    }
    let read = block.saturating_mul(span as u64);
    if read > crate::probe::align::MAX_READ_BYTES {
        return Err(Error::usage(format!(
            "reads of {} (--blocksize × --span) are larger than the {} this test reads at once",
            format_bytes(read),
            format_bytes(crate::probe::align::MAX_READ_BYTES)
        )));
    }
    let need = ((1u64 << order) + span as u64 - 1).saturating_mul(block);
    if need > size {
        let mut fit = order;
        while fit > 0 && ((1u64 << fit) + span as u64 - 1) * block > size {
            fit -= 1;
        }
        return Err(Error::usage(format!(
            "--order {order} is too large for this {} target: 2^{order} positions of {} need {}; use --order {fit} or less or a smaller --blocksize",
            format_bytes(size),
            format_bytes(block),
            format_bytes(need)
        )));
    }
    Ok(())
}

/// Run the scatter test; the order of positions is a fixed pseudo-random permutation.
pub fn run<B: Backend + ?Sized>(
    dev: &mut B,
    block: u64,
    order: u32,
    span: u32,
    count: u32,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Vec<ScatterPoint>, u64)> {
    validate(
        dev.size_bytes(),
        dev.logical_sector_bytes(),
        block,
        order,
        span,
    )?;
    let n = 1usize << order;
    let len = block * span as u64;
    let mut buf = AlignedBuf::new(len as usize);
    let mut order_v: Vec<usize> = (0..n).collect();
    order_v.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(0x5ca7));
    let mut min = vec![u64::MAX; n];
    let total = n as u64 * count.max(1) as u64;
    let mut done = 0;
    let mut io_ns = 0;
    for _ in 0..count.max(1) {
        for &i in &order_v {
            let off = i as u64 * block;
            let t0 = dev.clock_ns();
            dev.read_at(&mut buf, off).map_err(|e| {
                Error::io(format!("reading {} at offset {off}", format_bytes(len)), e)
            })?;
            let t = dev.clock_ns().saturating_sub(t0);
            io_ns += t;
            min[i] = min[i].min(t);
            done += 1;
            progress(done, total);
        }
    }
    Ok((
        min.into_iter()
            .enumerate()
            .map(|(i, m)| ScatterPoint {
                offset: i as u64 * block,
                min_ns: m,
            })
            .collect(),
        io_ns,
    ))
}

/// The gnuplot-readable TSV flashbench writes: offset in MiB, time in ms.
pub fn to_tsv(points: &[ScatterPoint]) -> String {
    let mut s = String::from("# offset_MiB\ttime_ms\n");
    for p in points {
        s.push_str(&format!(
            "{:.6}\t{:.6}\n",
            p.offset as f64 / 1048576.0,
            p.min_ns as f64 / 1e6
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sim::{SimConfig, SimDevice};

    #[test]
    fn reads_straddling_an_erase_block_stand_out() {
        let mut dev = SimDevice::new(
            SimConfig::parse("custom,size=64M,erase=1M,page=16K,noise=0,outliers=0").unwrap(),
        );
        // span 2 × 512 KiB blocks: every other position straddles a 1 MiB boundary.
        let (pts, _) = run(&mut dev, 512 * 1024, 5, 2, 1, &mut |_, _| {}).unwrap();
        assert_eq!(pts.len(), 32);
        assert!(pts[1].min_ns > pts[0].min_ns, "{:?}", &pts[..2]);
        let tsv = to_tsv(&pts);
        assert!(tsv.lines().nth(2).unwrap().starts_with("0.500000\t"));
    }

    #[test]
    fn order_too_large_is_a_usage_error() {
        let e = validate(1 << 20, 512, 16384, 9, 1).unwrap_err();
        assert!(e.to_string().contains("--order 6 or less"), "{e}");
    }
}
