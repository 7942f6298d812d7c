//! The interval probe: read time versus request size, from 512 bytes up to
//! 512 × 2^(order − 1), each size at `positions` places spaced nine requests apart (as
//! flashbench does, so no read continues the previous one). Returns samples only.

use crate::analysis::interval::{self, IntervalPoint};
use crate::analysis::openau::at_most_tentative;
use crate::analysis::{align, noise};
use crate::backend::{AlignedBuf, Backend};
use crate::vocab::units::format_bytes;
use crate::vocab::warning::NoiseEffect;
use crate::vocab::Warning;
use crate::workload::sysstat::CpuLoad;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Every read time of one request size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IntervalSample {
    pub bytes: u64,
    /// Offsets read.
    pub offsets: Vec<u64>,
    /// Per offset, the read times of each repetition (ns).
    pub times_ns: Vec<Vec<u64>>,
}

impl IntervalSample {
    /// Per offset the minimum over repetitions; then min, average and max over offsets.
    pub fn point(&self) -> IntervalPoint {
        self.point_of_rounds(0..usize::MAX)
    }

    /// `point` from the repetitions (rounds) in `rounds` only.
    pub fn point_of_rounds(&self, rounds: std::ops::Range<usize>) -> IntervalPoint {
        let mins: Vec<f64> = self
            .times_ns
            .iter()
            .filter_map(|t| {
                let end = rounds.end.min(t.len());
                t.get(rounds.start.min(end)..end)?
                    .iter()
                    .min()
                    .map(|&m| m as f64)
            })
            .collect();
        let n = mins.len().max(1) as f64;
        IntervalPoint {
            bytes: self.bytes,
            min_ns: mins.iter().copied().fold(f64::INFINITY, f64::min),
            avg_ns: mins.iter().sum::<f64>() / n,
            max_ns: mins.iter().copied().fold(0.0, f64::max),
        }
    }
}

/// The request sizes of an interval run: 512 × 2^i for i < order.
pub fn sizes(order: u32) -> Vec<u64> {
    (0..order).map(|i| 512u64 << i).collect()
}

/// Check that the largest request fits `positions` times nine over on the device.
pub fn validate(size: u64, sector: u32, order: u32, positions: u32) -> Result<()> {
    if order == 0 || order > 18 {
        return Err(Error::usage(format!(
            "--order {order} is out of range: use 1 to 18 (largest request 512 B × 2^(order−1), at most 64 MiB)"
        )));
    }
    let largest = 512u64 << (order - 1);
    if largest < sector as u64 {
        return Err(Error::usage(format!(
            "--order {order}: its largest request ({}) is below the device's logical sector ({sector} bytes), which is the smallest read it takes; use a larger --order",
            format_bytes(largest)
        )));
    }
    let need = largest * 9 * positions as u64;
    if need > size {
        let mut fit = order;
        while fit > 1 && (512u64 << (fit - 1)) * 9 * positions as u64 > size {
            fit -= 1;
        }
        return Err(Error::usage(format!(
            "--order {order} is too large for this {} target: its {} requests at {positions} places nine apart need {}; use --order {fit} or less",
            format_bytes(size),
            format_bytes(largest),
            format_bytes(need)
        )));
    }
    Ok(())
}

/// Read every size `count` times at each position; `progress(done, total)` counts reads.
pub fn run<B: Backend + ?Sized>(
    dev: &mut B,
    order: u32,
    positions: u32,
    count: u32,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Vec<IntervalSample>, u64)> {
    validate(
        dev.size_bytes(),
        dev.logical_sector_bytes(),
        order,
        positions,
    )?;
    let largest = 512usize << (order - 1);
    let mut buf = AlignedBuf::new(largest);
    let total = sizes(order)
        .iter()
        .filter(|&&b| b >= u64::from(dev.logical_sector_bytes().max(512)))
        .count() as u64
        * positions as u64
        * count.max(1) as u64;
    let mut done = 0;
    let mut io_ns = 0;
    // Requests start at the logical sector: a 4 KiB-sector device refuses smaller reads.
    let sector = u64::from(dev.logical_sector_bytes().max(512));
    let mut out: Vec<IntervalSample> = sizes(order)
        .into_iter()
        .filter(|&bytes| bytes >= sector)
        .map(|bytes| IntervalSample {
            bytes,
            offsets: (0..positions as u64).map(|i| i * 9 * bytes).collect(),
            times_ns: vec![Vec::new(); positions as usize],
        })
        .collect();
    for _ in 0..count.max(1) {
        for s in out.iter_mut() {
            let b = &mut buf[..s.bytes as usize];
            for (i, &off) in s.offsets.iter().enumerate() {
                let t0 = dev.clock_ns();
                dev.read_at(b, off).map_err(|e| {
                    Error::io(
                        format!("reading {} at offset {off}", format_bytes(s.bytes)),
                        e,
                    )
                })?;
                let t = dev.clock_ns().saturating_sub(t0);
                io_ns += t;
                s.times_ns[i].push(t);
                done += 1;
                progress(done, total);
            }
        }
    }
    Ok((out, io_ns))
}

/// Stalled reads per request size, by align's rule ([`align::StallStats::add_row`]).
pub fn stall_stats(samples: &[IntervalSample]) -> align::StallStats {
    let mut st = align::StallStats::default();
    for s in samples {
        st.add_row(s.times_ns.iter().flatten().copied().collect());
    }
    st
}

/// What the machine did to an interval run (load and steal between `before` and `after`,
/// stalled reads) and, when it was busy, align's and bench's `noisy_environment` warning.
/// A simulated card runs on a virtual clock, so load and steal are no cause there (`sim`).
pub fn environment(
    samples: &[IntervalSample],
    before: Option<CpuLoad>,
    after: Option<CpuLoad>,
    sim: bool,
) -> (noise::Environment, Option<Warning>) {
    let st = stall_stats(samples);
    let env = noise::Environment {
        stalled_reads: st.stalled,
        reads: st.reads,
        worst_stall_ns: st.worst_extra_ns,
        ..CpuLoad::machine(before, after, sim)
    };
    let w = noise::noisy_environment_with(&env, NoiseEffect::Figures);
    (env, w)
}

/// On a busy machine the access time (the fit's intercept, a small figure beside the
/// transfer times) is at most tentative, and says why; the throughput keeps its own
/// confidence (its spread is in its standard error).
pub fn temper(inf: &mut interval::IntervalInference, noisy: Option<&Warning>) {
    if let Some(Warning::NoisyEnvironment { causes, .. }) = noisy {
        let why = format!("the machine was busy ({})", causes.join("; "));
        inf.access_time_ns = at_most_tentative(inf.access_time_ns.clone(), &why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::interval;
    use crate::backend::sim::{SimConfig, SimDevice};

    /// Issue 33 point 6: a 4 KiB-logical-sector device (the requests below its sector are
    /// skipped; the run starts at 4 KiB instead of failing on a 512-byte read).
    #[test]
    fn a_4k_sector_device_starts_at_4k() {
        let mut dev = SimDevice::new(
            SimConfig::parse("custom,size=1G,sector=4096,noise=0,outliers=0").unwrap(),
        );
        let (samples, _) = run(&mut dev, 13, 4, 1, &mut |_, _| {}).unwrap();
        assert_eq!(samples.first().map(|s| s.bytes), Some(4096));
        assert_eq!(samples.len(), 13 - 3);
        assert!(run(&mut dev, 3, 4, 1, &mut |_, _| {})
            .unwrap_err()
            .to_string()
            .contains("below the device's logical sector"));
    }

    #[test]
    fn the_simulated_card_gives_back_its_bandwidth_and_command_time() {
        let mut dev =
            SimDevice::new(SimConfig::parse("custom,size=1G,noise=0,outliers=0").unwrap());
        let (samples, _) = run(&mut dev, 13, 4, 2, &mut |_, _| {}).unwrap();
        let pts: Vec<_> = samples.iter().map(|s| s.point()).collect();
        let r = interval::infer(&pts);
        let bps = r.throughput_bytes_per_s.as_u64().unwrap() as f64;
        let acc = r.access_time_ns.as_u64().unwrap() as f64;
        // Defaults: 22 MiB/s, 650 µs command; page/erase straddles are rare at these offsets.
        assert!((bps / (22.0 * 1048576.0) - 1.0).abs() < 0.05, "{bps}");
        assert!((acc / 650_000.0 - 1.0).abs() < 0.1, "{acc}");
    }

    #[test]
    fn order_too_large_names_the_largest_that_fits() {
        let e = validate(1 << 20, 512, 13, 8).unwrap_err();
        assert!(e.to_string().contains("--order 5 or less"), "{e}");
    }

    /// Issue 33 point 6: under load the access time is not confident, and the run carries
    /// the same noisy_environment warning as align and bench.
    #[test]
    fn a_busy_run_warns_and_its_access_time_is_at_most_tentative() {
        let mut dev =
            SimDevice::new(SimConfig::parse("custom,size=1G,noise=0,outliers=0").unwrap());
        let (mut samples, _) = run(&mut dev, 13, 8, 2, &mut |_, _| {}).unwrap();
        let pts: Vec<_> = samples.iter().map(|s| s.point()).collect();
        let mut quiet = interval::infer(&pts);
        let (env, w) = environment(&samples, None, None, true);
        assert_eq!(env.stalled_reads, 0);
        assert!(w.is_none());
        temper(&mut quiet, w.as_ref());
        assert_eq!(quiet.access_time_ns.status_word(), "confident");
        // A scheduler tick (4 ms) on every fourth read of every size.
        for s in samples.iter_mut() {
            for (k, t) in s.times_ns.iter_mut().flatten().enumerate() {
                if k % 4 == 0 {
                    *t += 4_000_000;
                }
            }
        }
        let (env, w) = environment(&samples, None, None, false);
        assert!(env.stalled_reads * 10 >= env.reads, "{env:?}");
        let w = w.expect("a busy run warns");
        assert_eq!(w.kind(), "noisy_environment");
        assert!(w.to_string().contains("reads stalled"), "{w}");
        let mut inf = interval::infer(&samples.iter().map(|s| s.point()).collect::<Vec<_>>());
        temper(&mut inf, Some(&w));
        assert_ne!(inf.access_time_ns.status_word(), "confident");
        assert!(inf.access_time_ns.evidence.contains("the machine was busy"));
        // Load alone (a loaded machine, reads evenly slowed) is named too.
        let load = |load1: f64| CpuLoad {
            load1,
            cpus: 2,
            ..Default::default()
        };
        let (_, w) = environment(&[], Some(load(0.1)), Some(load(6.0)), false);
        assert!(w.unwrap().to_string().contains("load average 6.0"));
        let (_, w) = environment(&[], Some(load(0.1)), Some(load(6.0)), true);
        assert!(
            w.is_none(),
            "a simulated card's virtual clock is not slowed by load"
        );
    }
}
