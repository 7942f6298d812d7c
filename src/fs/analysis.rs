//! Pure analysis of filesystem samples: the page cache's share of the buffered figure, the
//! rate the medium sustains, and the warnings that follow. No I/O here.

use super::files::FilesSizeResult;
use super::seq::{SeqMode, SeqModeResult};
use crate::vocab::units::{format_bytes, format_rate};
use crate::vocab::warning::DirectFallback;
use crate::vocab::Inference;
use crate::vocab::Warning;
use std::collections::BTreeMap;

/// Ratio above which a buffered figure is called inflated by the page cache.
pub const INFLATED_RATIO: f64 = 2.0;

/// Below this file size a synced write rate says more about per-call latency and the
/// drive's own cache than about sustained speed, so it is only tentative.
pub const SUSTAINED_MIN_FILE: u64 = 64 << 20;

fn write_rate(results: &[SeqModeResult], mode: SeqMode) -> Option<f64> {
    results
        .iter()
        .find(|r| r.mode == mode && r.supported)
        .and_then(|r| r.write.as_ref())
        .map(|w| w.bytes_per_s)
        .filter(|r| r.is_finite() && *r > 0.0)
}

/// `x` rounded to `digits` significant digits (0 stays 0).
pub fn round_significant(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    if !scale.is_finite() || scale == 0.0 {
        return x;
    }
    (x * scale).round() / scale
}

/// The synced reference: fdatasync if it ran (what `conv=fdatasync` reports), else the
/// first of direct, dsync, sync that ran.
fn synced_reference(results: &[SeqModeResult]) -> Option<(SeqMode, f64)> {
    [
        SeqMode::Fdatasync,
        SeqMode::Direct,
        SeqMode::Dsync,
        SeqMode::Sync,
    ]
    .into_iter()
    .find_map(|m| write_rate(results, m).map(|r| (m, r)))
}

/// True when the cold read of `r` began with more than a tenth of the file cached.
fn cold_read_was_cached(r: &SeqModeResult, file_bytes: u64) -> bool {
    r.cached_at_cold_start_bytes
        .is_some_and(|c| c > file_bytes / 10)
}

/// Inferences of `fs seq`: `sustained_write_bytes_per_s` (the synced write rate),
/// `cache_inflation` (buffered ÷ synced write rate) and `cold_read_bytes_per_s`.
/// `memory_backed` (tmpfs, ramfs, zram) makes the medium figures inconclusive: no flash
/// was measured.
pub fn seq_inferences(
    results: &[SeqModeResult],
    file_bytes: u64,
    memory_backed: bool,
) -> BTreeMap<String, Inference> {
    let mut out = BTreeMap::new();
    let synced = synced_reference(results);
    const IN_RAM: &str =
        "the directory is on a filesystem in RAM (tmpfs, ramfs or zram): no flash was measured";
    out.insert(
        "sustained_write_bytes_per_s".to_string(),
        match synced {
            Some(_) if memory_backed => Inference::inconclusive(IN_RAM),
            Some((mode, r)) => {
                let small = file_bytes < SUSTAINED_MIN_FILE;
                Inference::new(
                    r.round() as u64,
                    if small { 0.6 } else { 0.9 },
                    format!(
                        "{} written in mode {} ({}), the clock stopping only once the data was on the medium: {}{}",
                        format_bytes(file_bytes),
                        mode.name(),
                        mode.dd_flags(),
                        format_rate(r),
                        if small {
                            format!("; a file under {} shows latency and the drive's own cache more than sustained speed, so this is tentative", format_bytes(SUSTAINED_MIN_FILE))
                        } else {
                            String::new()
                        }
                    ),
                )
            }
            None => Inference::inconclusive("no synced mode (fdatasync, direct, dsync, sync) ran"),
        },
    );
    let buffered = write_rate(results, SeqMode::Buffered);
    out.insert(
        "cache_inflation".to_string(),
        match (buffered, synced) {
            (Some(b), Some((mode, s))) => {
                let ratio = round_significant(b / s, 3);
                Inference::new(
                    ratio,
                    0.9,
                    format!(
                        "buffered write {} against {} with {}: the page cache makes the buffered figure {ratio:.2} x the synced one",
                        format_rate(b),
                        format_rate(s),
                        mode.name()
                    ),
                )
            }
            _ => Inference::inconclusive(
                "needs both the buffered mode and a synced mode (fdatasync, direct, dsync or sync)",
            ),
        },
    );
    let cold = [
        SeqMode::Direct,
        SeqMode::Fdatasync,
        SeqMode::Buffered,
        SeqMode::Dsync,
        SeqMode::Sync,
    ]
    .into_iter()
    .find_map(|m| {
        results
            .iter()
            .find(|r| r.mode == m && r.supported && !cold_read_was_cached(r, file_bytes))
            .and_then(|r| Some((m, r.cold_read.as_ref()?, r.cold_method.clone()?)))
    });
    let any_read = results.iter().any(|r| r.cold_read.is_some());
    out.insert(
        "cold_read_bytes_per_s".to_string(),
        match cold {
            _ if memory_backed => Inference::inconclusive(IN_RAM),
            None if any_read => Inference::inconclusive(
                "every cold read began with the file still in the page cache (mincore), so none measured the medium",
            ),
            Some((mode, t, method)) => Inference::new(
                t.bytes_per_s.round() as u64,
                0.9,
                format!(
                    "{} read after the {} file's pages were dropped ({method}): {}",
                    format_bytes(t.bytes),
                    mode.name(),
                    format_rate(t.bytes_per_s)
                ),
            ),
            None => Inference::inconclusive("no mode ran to completion, so nothing was read"),
        },
    );
    out
}

/// The highest system-wide Dirty + Writeback seen while each phase ran (phase name →
/// bytes), from the meminfo timeline; a phase shorter than the sampling interval may have
/// no sample and so no entry.
pub fn dirty_peaks(timeline: &[super::monitor::MemSample]) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for s in timeline {
        if s.phase.is_empty() {
            continue;
        }
        let v = s.dirty_bytes.saturating_add(s.writeback_bytes);
        let e = out.entry(s.phase.clone()).or_insert(0);
        *e = (*e).max(v);
    }
    out
}

/// Warnings that follow from the results of `fs seq`: file smaller than RAM, buffered more
/// than twice the synced rate, O_DIRECT refused, --drop-caches failed.
pub fn seq_warnings(
    results: &[SeqModeResult],
    file_bytes: u64,
    ram_bytes: u64,
    drop_caches_error: Option<&str>,
) -> Vec<Warning> {
    let mut out = Vec::new();
    if ram_bytes > 0 && file_bytes < ram_bytes {
        out.push(Warning::SmallerThanRam {
            file_bytes,
            ram_bytes,
            matrix: false,
        });
    }
    if let (Some(b), Some((_, s))) = (
        write_rate(results, SeqMode::Buffered),
        synced_reference(results),
    ) {
        if b > INFLATED_RATIO * s {
            out.push(Warning::BufferedInflated {
                ratio: b / s,
                buffered_bytes_per_s: b,
                synced_bytes_per_s: s,
            });
        }
    }
    for r in results {
        if let Some(c) = r.cached_at_cold_start_bytes {
            if c > file_bytes / 10 {
                out.push(Warning::ColdReadNotCold {
                    mode: r.mode.name().to_string(),
                    cached_bytes: c,
                    file_bytes,
                });
            }
        }
        if r.mode == SeqMode::Direct && !r.supported {
            out.push(Warning::DirectIoRefused {
                target: None,
                fallback: DirectFallback::ModeSkipped {
                    reason: r.unsupported_reason.clone().unwrap_or_default(),
                },
            });
        }
    }
    if let Some(e) = drop_caches_error {
        out.push(Warning::DropCachesFailed {
            reason: e.to_string(),
        });
    }
    out
}

/// Inferences of `fs files`: how far small-file write throughput falls below the largest
/// size's (`small_file_write_ratio`: smallest size's MB/s ÷ largest size's MB/s).
pub fn files_inferences(results: &[FilesSizeResult]) -> BTreeMap<String, Inference> {
    let mut out = BTreeMap::new();
    let largest = results.iter().max_by_key(|r| r.file_bytes);
    let smallest = results.iter().min_by_key(|r| r.file_bytes);
    let inf = match (largest, smallest) {
        (Some(l), Some(s)) if l.file_bytes > s.file_bytes && l.write_bytes_per_s > 0.0 => {
            let ratio = s.write_bytes_per_s / l.write_bytes_per_s;
            Inference::new(
                ratio,
                0.9,
                format!(
                    "files of {} wrote at {} ({:.0} files/s), files of {} at {}: small files reach {}% of the large-file throughput",
                    format_bytes(s.file_bytes),
                    format_rate(s.write_bytes_per_s),
                    s.write_files_per_s,
                    format_bytes(l.file_bytes),
                    format_rate(l.write_bytes_per_s),
                    crate::vocab::units::short_number(ratio * 100.0)
                ),
            )
        }
        _ => Inference::inconclusive("needs at least two different file sizes"),
    };
    out.insert("small_file_write_ratio".to_string(), inf);
    out
}

#[cfg(test)]
mod tests {
    use super::super::seq::Timing;
    use super::*;

    fn res(mode: SeqMode, write_bps: Option<f64>) -> SeqModeResult {
        SeqModeResult {
            mode,
            dd: mode.dd_flags().into(),
            supported: write_bps.is_some(),
            unsupported_reason: write_bps.is_none().then(|| "EINVAL".to_string()),
            write: write_bps.map(|r| Timing {
                bytes: 1 << 20,
                ns: 1,
                bytes_per_s: r,
                start_ns: 0,
            }),
            sync_after_write_ns: None,
            cold_read: write_bps.map(|_| Timing {
                bytes: 1 << 20,
                ns: 1,
                bytes_per_s: 50e6,
                start_ns: 0,
            }),
            cold_method: write_bps.map(|_| "posix_fadvise".to_string()),
            cached_at_cold_start_bytes: write_bps.map(|_| 0),
            warm_read: None,
            runs: 1,
            write_runs: write_bps.into_iter().collect(),
            cold_read_runs: Vec::new(),
            warm_read_runs: Vec::new(),
        }
    }

    #[test]
    fn inflation_is_buffered_over_fdatasync() {
        let r = vec![
            res(SeqMode::Buffered, Some(400e6)),
            res(SeqMode::Fdatasync, Some(100e6)),
            res(SeqMode::Direct, None),
        ];
        let inf = seq_inferences(&r, 1 << 30, false);
        assert_eq!(inf["cache_inflation"].value, Some(serde_json::json!(4.0)));
        assert_eq!(
            inf["sustained_write_bytes_per_s"].as_u64(),
            Some(100_000_000)
        );
        assert_eq!(
            inf["sustained_write_bytes_per_s"].status,
            crate::vocab::Status::Confident
        );
        assert_eq!(inf["cold_read_bytes_per_s"].as_u64(), Some(50_000_000));
        // A small file gives only a tentative sustained figure.
        let small = seq_inferences(&r, 4 << 20, false);
        assert_eq!(
            small["sustained_write_bytes_per_s"].status,
            crate::vocab::Status::Tentative
        );
        assert!(small["sustained_write_bytes_per_s"]
            .evidence
            .contains("tentative"));
        // In RAM nothing about flash can be said.
        let ram = seq_inferences(&r, 1 << 30, true);
        assert!(ram["sustained_write_bytes_per_s"].value.is_none());
        assert!(ram["cold_read_bytes_per_s"].evidence.contains("RAM"));
        // The cache ratio is still a fact about what dd would report.
        assert!(ram["cache_inflation"].value.is_some());
        let w = seq_warnings(&r, 1 << 20, 1 << 30, None);
        let kinds: Vec<&str> = w.iter().map(|w| w.kind()).collect();
        assert_eq!(
            kinds,
            vec![
                "file_smaller_than_ram",
                "buffered_inflated_by_cache",
                "direct_unsupported"
            ]
        );
    }

    #[test]
    fn a_cold_read_that_began_cached_is_named_and_not_quoted() {
        let mut r = vec![res(SeqMode::Buffered, Some(100e6))];
        assert!(seq_warnings(&r, 1 << 20, 0, None).is_empty());
        r[0].cached_at_cold_start_bytes = Some(1 << 19);
        let inf = seq_inferences(&r, 1 << 20, false);
        assert!(inf["cold_read_bytes_per_s"].value.is_none());
        assert!(inf["cold_read_bytes_per_s"].evidence.contains("mincore"));
        // A later mode whose read was cold is quoted instead.
        r.push(res(SeqMode::Dsync, Some(10e6)));
        let inf = seq_inferences(&r, 1 << 20, false);
        assert_eq!(inf["cold_read_bytes_per_s"].as_u64(), Some(50_000_000));
        assert!(inf["cold_read_bytes_per_s"].evidence.contains("dsync"));
        let w = seq_warnings(&r, 1 << 20, 0, None);
        let cached = w
            .iter()
            .find(|w| w.kind() == "cold_read_not_cold")
            .expect("a cold_read_not_cold warning");
        assert!(cached.to_string().contains("512 KiB of the 1 MiB"));
        assert!(cached.to_string().contains("mode buffered"));
    }

    #[test]
    fn no_inflation_warning_when_close_and_inconclusive_without_synced_mode() {
        let r = vec![
            res(SeqMode::Buffered, Some(150e6)),
            res(SeqMode::Dsync, Some(100e6)),
        ];
        assert!(seq_warnings(&r, 4 << 30, 1 << 30, None).is_empty());
        let only = vec![res(SeqMode::Buffered, Some(150e6))];
        let inf = seq_inferences(&only, 1 << 20, false);
        assert!(inf["cache_inflation"].value.is_none());
        assert!(inf["sustained_write_bytes_per_s"].value.is_none());
        let none = seq_inferences(&[], 1 << 20, false);
        assert!(none["cold_read_bytes_per_s"].value.is_none());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Any rates, including zero, infinite and NaN ones, give inferences whose value is
        /// null exactly when inconclusive, and an inflation warning exactly when buffered
        /// exceeds twice the synced rate.
        #[test]
        fn seq_analysis_is_total_and_consistent(
            rates in proptest::collection::vec(
                proptest::option::of(proptest::prop_oneof![
                    1e-3f64..1e12,
                    proptest::strategy::Just(0.0),
                    proptest::strategy::Just(f64::NAN),
                    proptest::strategy::Just(f64::INFINITY),
                    1e3f64..1e10,
                ]),
                5,
            ),
            file_shift in 10u32..34,
        ) {
            use proptest::prelude::*;
            let results: Vec<SeqModeResult> = SeqMode::ALL
                .iter()
                .zip(&rates)
                .map(|(m, r)| res(*m, *r))
                .collect();
            let inf = seq_inferences(&results, 1 << file_shift, false);
            for i in inf.values() {
                prop_assert_eq!(i.value.is_none(), i.status == crate::vocab::Status::Inconclusive);
            }
            let w = seq_warnings(&results, 1 << file_shift, 1 << 30, None);
            let inflated = w.iter().any(|w| w.kind() == "buffered_inflated_by_cache");
            let b = write_rate(&results, SeqMode::Buffered);
            let s = synced_reference(&results).map(|(_, s)| s);
            prop_assert_eq!(inflated, matches!((b, s), (Some(b), Some(s)) if b > 2.0 * s));
            if let Some(v) = inf["cache_inflation"].value.as_ref() {
                prop_assert!(v.as_f64().is_some_and(|r| r.is_finite() && r > 0.0));
            }
        }
    }

    #[test]
    fn dirty_peaks_are_per_phase_maxima() {
        let s = |phase: &str, dirty: u64, wb: u64| super::super::monitor::MemSample {
            t_ns: 0,
            phase: phase.into(),
            bytes_done: 0,
            cached_bytes: 0,
            dirty_bytes: dirty,
            writeback_bytes: wb,
            vmstat: BTreeMap::new(),
        };
        let p = dirty_peaks(&[
            s("", 99, 0),
            s("buffered write", 10, 5),
            s("buffered write", 30, 0),
            s("dsync write", 1, 1),
        ]);
        assert_eq!(p.len(), 2);
        assert_eq!(p["buffered write"], 30);
        assert_eq!(p["dsync write"], 2);
    }

    #[test]
    fn ratios_keep_three_significant_digits() {
        assert_eq!(round_significant(4.56789, 3), 4.57);
        assert_eq!(round_significant(0.004567, 3), 0.00457);
        assert_eq!(round_significant(1234.5, 3), 1230.0);
        assert_eq!(round_significant(0.0, 3), 0.0);
    }

    #[test]
    fn files_ratio_compares_smallest_with_largest() {
        let mk = |size: u64, bps: f64| FilesSizeResult {
            file_bytes: size,
            files: 1,
            write_bytes: size,
            write_ns: 1,
            read_ns: 1,
            write_bytes_per_s: bps,
            read_bytes_per_s: bps,
            write_files_per_s: 1.0,
            read_files_per_s: 1.0,
        };
        let inf = files_inferences(&[mk(1 << 20, 100e6), mk(4096, 5e6)]);
        assert_eq!(
            inf["small_file_write_ratio"].value,
            Some(serde_json::json!(0.05))
        );
        assert!(inf["small_file_write_ratio"].evidence.contains("5.00%"));
        let tiny = files_inferences(&[mk(1 << 20, 400e6), mk(1024, 166e3)]);
        assert!(
            tiny["small_file_write_ratio"].evidence.contains("0.04%"),
            "{}",
            tiny["small_file_write_ratio"].evidence
        );
        assert!(files_inferences(&[mk(4096, 5e6)])["small_file_write_ratio"]
            .value
            .is_none());
    }
}
