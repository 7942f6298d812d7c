//! The write-cache (SLC) probe: a sustained sequential write in 1 MiB blocks, timed per
//! interval, until the speed drops and stays down or the budget is spent; then the device
//! idles and a short write shows whether the cache recovered.

use super::write_common::random_buffer;
use crate::analysis::slc::SlcInterval;
use crate::backend::{stop_reason, AlignedBuf, Backend, Timed};
use serde::{Deserialize, Serialize};
use std::io;

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SlcParams {
    pub offset_bytes: u64,
    pub block_bytes: u64,
    /// Bytes of the sustained write at most.
    pub budget_bytes: u64,
    /// Bytes per timed interval.
    pub interval_bytes: u64,
    /// Idle time before the recovery write.
    pub recover_ns: u64,
    /// Bytes of the recovery write (0: none).
    pub recovery_bytes: u64,
    /// Write pseudo-random data instead of zeros.
    pub random_data: bool,
    /// `--time-budget` as given, for the document: the session's `TimeBudget` enforces it.
    pub time_budget_ns: Option<u64>,
}

/// The default budget: the smaller of 25% of the device and 32 GiB.
pub fn default_budget(size: u64) -> u64 {
    (size / 4).min(32 << 30)
}

impl SlcParams {
    /// Defaults for a device of `size` bytes: start 16 MiB in, 1 MiB blocks, about 256
    /// intervals over the budget, 30 s to recover, two intervals to probe recovery.
    pub fn new(size: u64, budget: u64) -> Self {
        let block = 1u64 << 20;
        let interval = (budget / 256).clamp(4 << 20, 256 << 20) / block * block;
        SlcParams {
            offset_bytes: 16 << 20,
            block_bytes: block,
            budget_bytes: budget.min(size.saturating_sub(16 << 20)),
            interval_bytes: interval.max(block),
            recover_ns: 30_000_000_000,
            recovery_bytes: 2 * interval.max(block),
            random_data: false,
            time_budget_ns: None,
        }
    }

    /// The region written: the sustained write and the recovery write after it.
    pub fn region(&self) -> (u64, u64) {
        (self.offset_bytes, self.budget_bytes + self.recovery_bytes)
    }
}

/// What the probe measured.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SlcSamples {
    pub intervals: Vec<SlcInterval>,
    /// The write after idling, if it ran.
    pub recovery: Option<SlcInterval>,
    /// "speed dropped and stayed down", "write budget reached", "time budget reached".
    pub stopped: String,
}

fn write_interval<B: Backend>(
    dev: &mut Timed<B>,
    buf: &AlignedBuf,
    offset: u64,
    start_bytes: u64,
    bytes: u64,
) -> (SlcInterval, Option<io::Error>) {
    let bs = buf.len() as u64;
    let mut iv = SlcInterval {
        start_bytes,
        bytes: 0,
        ns: 0,
    };
    while iv.bytes + bs <= bytes {
        match dev.write_timed(buf, offset + iv.bytes) {
            Ok(t) => {
                iv.ns += t;
                iv.bytes += bs;
            }
            Err(e) => return (iv, Some(e)),
        }
    }
    (iv, None)
}

/// What the probe is doing, for the progress line: the sustained write, the idle that lets
/// a cache recover, the write after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Writing,
    Idling,
    WritingAgain,
}

impl Stage {
    /// The phase's name on the progress line.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Writing => "writing",
            Stage::Idling => "idling",
            Stage::WritingAgain => "writing after idle",
        }
    }
}

/// Run the probe. After each interval `dropped(intervals so far)` says whether the
/// speed has dropped and stayed down (the controller: `analysis::slc::cliff_confirmed`);
/// an exhausted budget (bytes or time: the `WriteBudget` and `TimeBudget` wrappers) ends
/// it with `stopped` saying so.
pub fn run(
    dev: &mut dyn Backend,
    p: &SlcParams,
    dropped: &mut dyn FnMut(&[SlcInterval]) -> bool,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> io::Result<SlcSamples> {
    let (start, len) = p.region();
    dev.prepare_write(start, len)?;
    let buf = if p.random_data {
        random_buffer(p.block_bytes as usize, 1)
    } else {
        AlignedBuf::new(p.block_bytes as usize)
    };
    let mut dev = Timed::new(dev);
    let mut out = SlcSamples::default();
    let mut written = 0u64;
    out.stopped = "write budget reached".into();
    while written + p.block_bytes <= p.budget_bytes {
        let n = p.interval_bytes.min(p.budget_bytes - written);
        let (iv, err) = write_interval(&mut dev, &buf, p.offset_bytes + written, written, n);
        written += iv.bytes;
        if iv.bytes > 0 {
            out.intervals.push(iv);
        }
        progress(Stage::Writing, written, p.budget_bytes);
        if let Some(e) = err {
            match stop_reason(&e) {
                Some(why) => {
                    out.stopped = why;
                    return Ok(out);
                }
                None => return Err(e),
            }
        }
        if dropped(&out.intervals) {
            out.stopped = "speed dropped and stayed down".into();
            break;
        }
    }
    if p.recovery_bytes >= p.block_bytes {
        progress(Stage::Idling, 0, 0);
        dev.idle(p.recover_ns);
        progress(Stage::WritingAgain, 0, p.recovery_bytes);
        let (iv, err) = write_interval(
            &mut dev,
            &buf,
            p.offset_bytes + written,
            written,
            p.recovery_bytes,
        );
        if let Some(e) = err {
            if stop_reason(&e).is_none() {
                return Err(e);
            }
        }
        progress(Stage::WritingAgain, iv.bytes, p.recovery_bytes);
        if iv.bytes > 0 {
            out.recovery = Some(iv);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::slc::{cliff_confirmed, infer_slc};
    use crate::backend::sim::{SimConfig, SimDevice};

    #[test]
    fn finds_a_one_gib_cache_and_its_recovery() {
        let cfg = SimConfig::parse("custom,size=16G,slc=1G,write_bw=40M,native_bw=12M").unwrap();
        let mut dev = SimDevice::new(cfg);
        let p = SlcParams::new(16 << 30, 4 << 30);
        let s = run(
            &mut dev,
            &p,
            &mut |iv| cliff_confirmed(iv),
            &mut |_, _, _| {},
        )
        .unwrap();
        assert_eq!(s.stopped, "speed dropped and stayed down");
        let inf = infer_slc(&s.intervals, &s.stopped, 16 << 30);
        let got = inf.slc_cache_bytes.as_u64().unwrap();
        assert!(got.abs_diff(1 << 30) < 32 << 20, "{got}");
        let rec = s.recovery.unwrap().bytes_per_s();
        assert!(
            rec > 30e6,
            "after 30 s idle the cache has drained enough: {rec}"
        );
        let written: u64 = s.intervals.iter().map(|i| i.bytes).sum();
        assert!(
            written < (3 << 30) / 2,
            "stops soon after the cliff: {written}"
        );
    }
}
