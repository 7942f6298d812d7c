//! Write-cache cliff: how many bytes a sustained sequential write keeps the fast (SLC
//! cache) speed before dropping to the native speed, and both speeds. Pure.

use crate::vocab::units::{format_bytes, format_rate};
use crate::vocab::Inference;

/// One interval of a sustained write: `bytes` written from `start_bytes` in `ns`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SlcInterval {
    pub start_bytes: u64,
    pub bytes: u64,
    pub ns: u64,
}

impl SlcInterval {
    pub fn bytes_per_s(&self) -> f64 {
        if self.ns == 0 {
            return f64::NAN;
        }
        self.bytes as f64 * 1e9 / self.ns as f64
    }
}

/// The three inferences of the write-cache test.
#[derive(Debug, Clone, PartialEq)]
pub struct SlcInference {
    pub slc_cache_bytes: Inference,
    pub cached_bytes_per_s: Inference,
    pub native_bytes_per_s: Inference,
}

/// Smallest cached/native speed ratio that counts as a cliff.
pub const MIN_STEP: f64 = 1.3;

/// A write that never slows down says "no cache" only when it covered at least this share
/// of the device (1/5: `slc`'s default budget, a quarter, passes with room for a run cut a
/// little short): dynamic SLC caches take a large part of the free space, so a shorter
/// flat write cannot rule one out.
pub const FLAT_MIN_SHARE: u64 = 5;
/// Fewest intervals after the cliff that must stay down.
pub const MIN_AFTER: usize = 3;

/// Where the speed steps down: the split of the log-rates into a before and an after
/// segment with the least squared error, with both segments' medians. `None` when too few
/// intervals.
pub fn best_step(rates: &[f64]) -> Option<(usize, f64, f64)> {
    let n = rates.len();
    if n < MIN_AFTER + 1 {
        return None;
    }
    let logs: Vec<f64> = rates.iter().map(|r| r.ln()).collect();
    let mut pre = vec![(0.0, 0.0); n + 1];
    for i in 0..n {
        pre[i + 1] = (pre[i].0 + logs[i], pre[i].1 + logs[i] * logs[i]);
    }
    let sse = |a: usize, b: usize| {
        let k = (b - a) as f64;
        let s = pre[b].0 - pre[a].0;
        let q = pre[b].1 - pre[a].1;
        q - s * s / k
    };
    let mut best = (f64::INFINITY, 0);
    for k in 1..n {
        let e = sse(0, k) + sse(k, n);
        if e < best.0 {
            best = (e, k);
        }
    }
    let k = best.1;
    Some((
        k,
        super::median_nan(rates[..k].to_vec()),
        super::median_nan(rates[k..].to_vec()),
    ))
}

/// The stop rule of the sustained write: true when the intervals so far show a drop
/// (at least 1.5 times) that has stayed down long enough (6 intervals, and a quarter of
/// those before it).
pub fn cliff_confirmed(intervals: &[SlcInterval]) -> bool {
    let rates: Vec<f64> = intervals.iter().map(|i| i.bytes_per_s()).collect();
    let Some((k, fast, slow)) = best_step(&rates) else {
        return false;
    };
    let after = rates.len() - k;
    let threshold = (fast * slow).sqrt();
    fast / slow >= 1.5 && after >= 6.max(k / 4) && rates[k..].iter().all(|&r| r < threshold)
}

/// Infer the cache size and both speeds from the intervals of one sustained write on a
/// device of `device_bytes`. `stop_reason` says why the write ended (budget, time, the
/// cliff confirmed).
///
/// A write whose speed never drops cannot tell "no cache" from "a cache larger than what
/// was written". Only a write of at least [`FLAT_MIN_SHARE`] of the device says "no
/// cache", and tentatively; a shorter one (auto's bounded step) is inconclusive, so a
/// short flat write on a card with a large cache does not report its cache speed as the
/// native one.
pub fn infer_slc(intervals: &[SlcInterval], stop_reason: &str, device_bytes: u64) -> SlcInference {
    let valid: Vec<SlcInterval> = intervals
        .iter()
        .copied()
        .filter(|i| i.bytes > 0 && i.ns > 0)
        .collect();
    let rates: Vec<f64> = valid.iter().map(|i| i.bytes_per_s()).collect();
    let total: u64 = valid.iter().map(|i| i.bytes).sum();
    let none = |why: String| SlcInference {
        slc_cache_bytes: Inference::inconclusive(why.clone()),
        cached_bytes_per_s: Inference::inconclusive(why.clone()),
        native_bytes_per_s: Inference::inconclusive(why),
    };
    let Some((k, fast, slow)) = best_step(&rates) else {
        return none(format!(
            "only {} intervals written ({}); at least {} are needed",
            valid.len(),
            format_bytes(total),
            MIN_AFTER + 1
        ));
    };
    let all = super::median_nan(rates.clone());
    let spread = {
        let mut dev: Vec<f64> = rates.iter().map(|r| (r / all).ln().abs()).collect();
        super::stats::sort_f64(&mut dev);
        dev[dev.len() * 9 / 10]
    };
    let ratio = fast / slow;
    let after = rates.len() - k;
    let threshold = (fast * slow).sqrt();
    let after_down = rates[k..].iter().filter(|&&r| r < threshold).count();
    let before_up = rates[..k].iter().filter(|&&r| r >= threshold).count();
    let clean = ratio >= MIN_STEP
        && after >= MIN_AFTER
        && after_down as f64 >= 0.9 * after as f64
        && before_up as f64 >= 0.9 * k as f64;
    if !clean {
        if ratio >= MIN_STEP && (after < MIN_AFTER || (after_down as f64) < 0.9 * after as f64) {
            return none(format!(
                "the speed drops from {} to {} after {} but does not stay down for {MIN_AFTER} intervals ({stop_reason}); run with a larger --write-budget",
                format_rate(fast),
                format_rate(slow),
                format_bytes(valid[k].start_bytes.saturating_sub(valid[0].start_bytes))
            ));
        }
        if ratio < MIN_STEP && spread < (MIN_STEP.ln() / 3.0) {
            let flat = format!(
                "the speed stays at {} (within {:.0}%) over all {} written ({stop_reason}): no cache, or one larger than that",
                format_rate(all),
                (spread.exp() - 1.0) * 100.0,
                format_bytes(total)
            );
            if total < device_bytes / FLAT_MIN_SHARE {
                return none(format!(
                    "{flat}; that is less than a fifth of the device ({}), too little to rule a cache out: `flashscope slc --write` with its default budget (a quarter of the device) tells more",
                    format_bytes(device_bytes)
                ));
            }
            return SlcInference {
                slc_cache_bytes: Inference::new(0, 0.6, flat.clone()),
                cached_bytes_per_s: Inference::inconclusive(flat.clone()),
                native_bytes_per_s: Inference::new(all.round(), 0.6, flat),
            };
        }
        return none(format!(
            "the speed varies (median {}, x{ratio:.2} at the best split) without dropping and staying down; run with a larger --write-budget or on an idle device",
            format_rate(all)
        ));
    }
    // The interval that holds the cliff is a mix: solve for its cached part.
    let (tf, ts) = (1e9 / fast, 1e9 / slow); // ns per byte
    let mut cached: f64 = valid[..k].iter().map(|i| i.bytes as f64).sum();
    for idx in [k - 1, k] {
        let iv = valid[idx];
        let b = iv.bytes as f64;
        let a = ((iv.ns as f64 - b * ts) / (tf - ts)).clamp(0.0, b);
        if idx == k - 1 {
            cached -= b - a;
        } else {
            cached += a;
        }
    }
    let cache_bytes = cached.max(0.0).round() as u64;
    let conf = if ratio >= 2.0 && after >= 2 * MIN_AFTER {
        0.95
    } else if ratio >= 1.5 {
        0.8
    } else {
        0.6
    };
    let ev = format!(
        "{} at {} then {} (x{ratio:.1} slower) for the remaining {} intervals ({stop_reason})",
        format_bytes(cache_bytes),
        format_rate(fast),
        format_rate(slow),
        after
    );
    SlcInference {
        slc_cache_bytes: Inference::new(cache_bytes, conf, ev.clone()),
        cached_bytes_per_s: Inference::new(fast.round(), conf, ev.clone()),
        native_bytes_per_s: Inference::new(slow.round(), conf, ev),
    }
}

/// Whether the cache came back after idling: the recovery write's speed against the
/// cached and native speeds (`slc_cache_recovered`, a boolean).
pub fn infer_recovery(
    slc: &SlcInference,
    recovery: Option<&SlcInterval>,
    idle_ns: u64,
) -> Inference {
    let (Some(fast), Some(slow)) = (
        slc.cached_bytes_per_s
            .value
            .as_ref()
            .and_then(|v| v.as_f64()),
        slc.native_bytes_per_s
            .value
            .as_ref()
            .and_then(|v| v.as_f64()),
    ) else {
        return Inference::inconclusive("no cache cliff was found, so there is nothing to recover");
    };
    if slc.slc_cache_bytes.as_u64() == Some(0) {
        return Inference::inconclusive("no cache cliff was found, so there is nothing to recover");
    }
    let Some(r) = recovery.filter(|r| r.bytes > 0 && r.ns > 0) else {
        return Inference::inconclusive(
            "the recovery write did not run (--recover 0 or budget spent)",
        );
    };
    let rate = r.bytes_per_s();
    let secs = idle_ns as f64 / 1e9;
    let ev = |word: &str| {
        format!(
            "after {secs:.0} s idle, {} wrote at {} ({word}; cached {}, native {})",
            format_bytes(r.bytes),
            format_rate(rate),
            format_rate(fast),
            format_rate(slow)
        )
    };
    if rate >= 0.8 * fast {
        Inference::new(true, 0.9, ev("cache speed"))
    } else if rate <= 1.2 * slow {
        Inference::new(false, 0.9, ev("still native speed"))
    } else {
        Inference::new(true, 0.6, ev("between the two: partly recovered"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Status;

    const MIB: u64 = 1 << 20;

    /// Intervals of `step` bytes of a device with `cache` bytes at `fast`, then `slow`.
    fn synth(
        total: u64,
        step: u64,
        cache: u64,
        fast: f64,
        slow: f64,
        noise: &[f64],
    ) -> Vec<SlcInterval> {
        let mut v = Vec::new();
        let mut pos = 0;
        let mut i = 0;
        while pos < total {
            let c = cache.saturating_sub(pos).min(step) as f64;
            let ns = (c / fast + (step as f64 - c) / slow) * 1e9;
            let j = noise.get(i % noise.len().max(1)).copied().unwrap_or(0.0);
            v.push(SlcInterval {
                start_bytes: pos,
                bytes: step,
                ns: (ns * (1.0 + j)) as u64,
            });
            pos += step;
            i += 1;
        }
        v
    }

    #[test]
    fn finds_the_cliff_inside_an_interval() {
        let iv = synth(
            4096 * MIB,
            32 * MIB,
            1000 * MIB,
            60e6,
            20e6,
            &[0.01, -0.02, 0.0, 0.015],
        );
        let r = infer_slc(&iv, "budget reached", 8 << 30);
        let got = r.slc_cache_bytes.as_u64().unwrap();
        assert!(got.abs_diff(1000 * MIB) < 16 * MIB, "{got}");
        assert_eq!(r.slc_cache_bytes.status, Status::Confident);
        let native = r.native_bytes_per_s.value.unwrap().as_f64().unwrap();
        assert!((native - 20e6).abs() < 1e6);
    }

    #[test]
    fn a_flat_write_of_a_quarter_of_the_device_is_zero_tentatively() {
        let iv = synth(2048 * MIB, 32 * MIB, 0, 20e6, 20e6, &[0.01, -0.01, 0.02]);
        let r = infer_slc(&iv, "budget reached", 8 << 30);
        assert_eq!(r.slc_cache_bytes.as_u64(), Some(0));
        assert_eq!(r.slc_cache_bytes.status, Status::Tentative);
        assert_eq!(r.cached_bytes_per_s.status, Status::Inconclusive);
    }

    /// A short flat write (auto's bounded step: 256 MiB of a 64 GiB card) cannot tell no
    /// cache from a larger one: no size and no "native" speed, which may be the cache's.
    #[test]
    fn a_short_flat_write_says_nothing_of_the_cache() {
        let iv = synth(256 * MIB, 4 * MIB, 0, 60e6, 60e6, &[0.01, -0.01, 0.02]);
        let r = infer_slc(&iv, "write budget reached", 64 << 30);
        assert_eq!(r.slc_cache_bytes.status, Status::Inconclusive);
        assert_eq!(r.native_bytes_per_s.status, Status::Inconclusive);
        assert!(
            r.slc_cache_bytes
                .evidence
                .contains("too little to rule a cache out"),
            "{}",
            r.slc_cache_bytes.evidence
        );
    }

    #[test]
    fn a_cliff_too_close_to_the_end_or_noise_is_inconclusive() {
        let late = synth(1024 * MIB, 32 * MIB, 960 * MIB, 60e6, 20e6, &[0.0]);
        assert_eq!(
            infer_slc(&late, "budget", 4 << 30).slc_cache_bytes.status,
            Status::Inconclusive
        );
        let noisy = synth(
            1024 * MIB,
            32 * MIB,
            0,
            20e6,
            20e6,
            &[0.5, -0.3, 0.4, -0.4, 0.0, 0.6],
        );
        assert_ne!(
            infer_slc(&noisy, "budget", 4 << 30).slc_cache_bytes.status,
            Status::Confident
        );
        assert_eq!(
            infer_slc(&[], "x", 4 << 30).slc_cache_bytes.status,
            Status::Inconclusive
        );
    }
}
