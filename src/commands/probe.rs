//! `probe`: is the card fake, and how much of it is real? Stamps written and read back
//! (`capacity::probe`), the verdict from `capacity::analysis`.

use super::write_probe::{Findings, Request, WriteTest};
use crate::analysis::advice;
use crate::backend::Backend;
use crate::capacity::analysis::{analyse, FakeKind, Verdict};
use crate::capacity::probe::{
    probe, slow_cache_floor, write_bounds, ProbeConfig, ProbeRecord, DEFAULT_CACHE_CEILING,
    DEFAULT_FILLER_TIME_NS, DEFAULT_MAX_CACHE,
};
use crate::device::TargetInfo;
use crate::device::TargetSpec;
use crate::device::{self, OpenRequest};
use crate::pattern::{Stamper, UNIT};
use crate::report::results::{
    ProbeParameters, ProbeResult, ProbeSample, ProbeSummary, ScanSummary,
};
use crate::report::Body;
use crate::session::{Budgets, Measured, Rates, WriteFlags, WriteIntent, WriteMode};
use crate::vocab::units::format_bytes;
use crate::vocab::{Check, Metric, Warning};
use crate::{Error, Result};
use std::io;

/// `probe`'s parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapacityParams {
    /// The largest controller write cache to push out before calling a device honest.
    pub max_cache_bytes: u64,
    /// Probe a partition although a fake is only visible on the whole device.
    pub partition_ok: bool,
    /// The time cap of the filler for a cache as slow as the medium (`--max-cache` not
    /// given: a slow card still gets its answer in about a minute).
    pub filler_time_ns: Option<u64>,
}

impl CapacityParams {
    /// `probe`'s parameters with `--max-cache` as given (`None`: the default, whose filler
    /// behind a cache as slow as the medium stops at its time cap once
    /// [`slow_cache_floor`] is ruled out); `auto` runs the probe with `new(None, false)`.
    pub const fn new(max_cache: Option<u64>, partition_ok: bool) -> Self {
        match max_cache {
            Some(bytes) => CapacityParams {
                max_cache_bytes: bytes,
                partition_ok,
                filler_time_ns: None,
            },
            None => CapacityParams {
                max_cache_bytes: DEFAULT_MAX_CACHE,
                partition_ok,
                filler_time_ns: Some(DEFAULT_FILLER_TIME_NS),
            },
        }
    }
}

impl Request for CapacityParams {
    type Test = CapacityTest;

    fn build(
        &self,
        spec: &TargetSpec,
        flags: &WriteFlags,
        budgets: &Budgets,
        info: &TargetInfo,
    ) -> Result<CapacityTest> {
        test(spec, self, flags, info, budgets.time_ns)
    }
}

fn test(
    spec: &TargetSpec,
    params: &CapacityParams,
    flags: &WriteFlags,
    info: &TargetInfo,
    time_budget_ns: Option<u64>,
) -> Result<CapacityTest> {
    // A partition hides a fake: check on a read-only open before anything is written.
    let req = OpenRequest {
        write: false,
        require_direct: false,
    };
    let peeked = device::open(spec, &req)?;
    let partition_warning = crate::capacity::partition_check(&peeked, spec, params.partition_ok)?;
    let max_cache = params.max_cache_bytes;
    let mut test = CapacityTest {
        config: ProbeConfig {
            max_cache,
            // Following a cache past --max-cache moves up to 4 GiB more through the
            // low region; in preserve mode that would all go to the journal, so there
            // it is left to a larger --max-cache (the verdict says when a faster cache
            // still answered).
            cache_ceiling: if !crate::session::WriteMode::of(spec, flags).journaled() {
                DEFAULT_CACHE_CEILING
            } else {
                max_cache
            },
            time_budget_ns,
            salt: Stamper::random_salt(),
            restore_guards: true,
            max_bytes: None,
            filler_time_ns: params.filler_time_ns,
        },
        logical_sector_bytes: info.logical_sector_bytes,
        size_bytes: info.size_bytes,
        destructive: flags.destructive,
        partition_warning,
        filling: Default::default(),
    };
    // The probe stops, incomplete, rather than write more than announced.
    test.config.max_bytes = Some(test.max_bytes());
    Ok(test)
}

/// The fake-capacity test.
pub struct CapacityTest {
    pub config: ProbeConfig,
    /// The device's logical sector (the unit of the sfdisk command).
    pub logical_sector_bytes: u32,
    pub size_bytes: u64,
    /// `--destructive` (a parameter in the document).
    pub destructive: bool,
    /// The partition warning from the read-only look before writing, if any.
    pub partition_warning: Option<Warning>,
    /// The run reached its filler, and the meter when it did (for the plan worked out
    /// again from the filler's own writes: the stamps before it are scattered and small).
    pub filling: std::sync::Mutex<(bool, Option<Measured>)>,
}

impl CapacityTest {
    /// The filler an honest card takes at `rates`: `--max-cache` (at most the device), cut
    /// at the filler's time cap once [`slow_cache_floor`] is written; its steps are 25 %
    /// apart, so the last one ends past the cap (an eighth on average).
    pub fn filler_bytes(&self, rates: &Rates) -> u64 {
        let most = self
            .config
            .max_cache
            .min(self.size_bytes.saturating_sub(2 << 20));
        match self.config.filler_time_ns {
            Some(cap) => {
                let in_cap = (rates.write_bps * cap as f64 / 1e9 * 1.125) as u64;
                most.min(in_cap.max(slow_cache_floor(self.size_bytes)))
            }
            None => most,
        }
    }

    /// How long the probe takes on an honest card (the long case) at `rates`: about 8192
    /// alias-scan reads of a sector, the filler in 1 MiB writes, and the span read again
    /// after each of the filler's steps (about 25, 25 % apart from 16 MiB) and timed.
    pub fn estimate_ns(&self, rates: &Rates) -> u64 {
        let unit = (self.logical_sector_bytes as u64).max(UNIT as u64);
        let scan = rates.read_ns(8192 * unit, 8192);
        let filler = self.filler_bytes(rates);
        let steps =
            ((filler as f64 / (16u64 << 20) as f64).max(1.0).ln() / 1.25f64.ln()).ceil() as u64 + 1;
        let span = (self.size_bytes / 8192)
            .next_power_of_two()
            .clamp(64 << 10, 64 << 20);
        // The stamps: a few dozen places and the span, written and read back.
        let stamps = rates.write_ns(span + 64 * unit, 64) + rates.read_ns(span + 64 * unit, 64);
        let confirm = rates.read_ns(steps * span, steps * 2) + rates.read_ns(9 * unit, 9);
        scan + stamps + rates.write_ns(filler, filler.div_ceil(1 << 20)) + confirm
    }

    /// The bytes the probe may write at most (see [`write_bounds`]).
    pub fn max_bytes(&self) -> u64 {
        write_bounds(&self.config, self.size_bytes).1
    }
}

impl WriteTest for CapacityTest {
    type Samples = ProbeRecord;
    const COMMAND: &'static str = "probe";

    fn plan(&self, _sector: u64, rates: &Rates) -> WriteIntent {
        let max_cache = self.config.max_cache;
        // The filler always covers the same low region, so a journal saves at most that.
        let (region, max_bytes, typical) = write_bounds(&self.config, self.size_bytes);
        let filler = self.filler_bytes(rates);
        WriteIntent {
            command: Self::COMMAND,
            region: (1 << 20, region),
            max_bytes,
            // An honest card is the long case: the cache filler, the wide span and one read
            // for each of about 8k alias-scan places and 40 filler steps.
            typical_bytes: Some(typical.min(filler + (64 << 20))),
            estimated_ns: self.estimate_ns(rates),
            // Each filler step starts again at the low end: the largest step (the last,
            // a fifth of all) is what the filler overwrites; the stamps are a few MiB.
            overwritten_bytes: Some(filler / 5 + (4 << 20)),
            places: 64,
            what: format!(
                "probe writes 4 KiB stamps at a few dozen places (a fake usually ends there, within seconds and a few MiB) and, on a card that holds them, a wide span and up to {} of zeros to push a write cache out (up to {} while reads show a cache faster than the medium, and up to 3 times more behind a cache that hid lost data), never touching the first and last MiB",
                format_bytes(max_cache),
                format_bytes(self.config.cache_ceiling.max(max_cache))
            ),
            smaller: "lower --write-budget",
            ..WriteIntent::default()
        }
    }

    /// Once its filler (the run's long part, sequential 1 MiB writes) has written a few
    /// MiB: the plan at the rate those writes ran.
    fn replan(&self, _sector: u64, rates: &Rates, measured: &Measured) -> Option<u64> {
        let mut f = self.filling.lock().unwrap_or_else(|p| p.into_inner());
        if !f.0 {
            return None;
        }
        let start = *f.1.get_or_insert(*measured);
        let filler = measured.since(&start);
        filler
            .has_write_rate()
            .then(|| self.estimate_ns(&filler.rates(rates)))
    }

    /// The probe keeps its own deadline: it must still read and restore its guard regions
    /// after it (the result is then partial).
    fn time_budget(&self, _requested: Option<u64>) -> Option<u64> {
        None
    }

    /// Under a journal the session restores every overwritten cell; without one the probe
    /// saves its guard regions itself, except on a `sim:` card, where nothing is saved or
    /// restored (so no warning may say their saved content was written back).
    fn opened(&mut self, journaled: bool, mode: WriteMode) {
        self.config.restore_guards = !journaled && mode != WriteMode::Simulated;
    }

    fn run(
        &self,
        dev: &mut dyn Backend,
        progress: &mut dyn FnMut(u64, u64),
    ) -> io::Result<ProbeRecord> {
        let mut cb = |p: crate::capacity::probe::ProbeProgress| {
            // The filler counts bytes; the scan counts points; each phase has its own bar.
            let filler = p.phase.starts_with("flushing");
            if filler {
                self.filling.lock().unwrap_or_else(|p| p.into_inner()).0 = true;
            }
            crate::report::progress::phase(p.phase, filler);
            progress(p.done, p.total)
        };
        match probe(dev, &self.config, &mut cb) {
            Ok(r) => Ok(r),
            Err(Error::Io { source, .. }) => Err(source),
            Err(e) => Err(io::Error::other(e.to_string())),
        }
    }

    fn infer(&self, rec: &ProbeRecord) -> Findings {
        let verdict = analyse(rec);
        let mut f = Findings::default();
        f.add("usable_bytes", verdict.usable.clone());
        f.add("fake_kind", verdict.fake_kind.clone());
        if let Some(c) = &verdict.cache {
            f.add("write_cache_bytes", c.clone());
        }
        if verdict.wrap_modulus.is_some() {
            f.add("wrap_modulus_bytes", verdict.modulus.clone());
        }
        f.warnings.extend(self.partition_warning.clone());
        if !rec.complete {
            f.warnings.push(Warning::CapacityPartial);
        }
        f.warnings
            .extend(guard_warning(rec.guard_restored, &verdict));
        f.failed = verdict.failed();
        // No fake seen, but no verdict either: a cache it could not see past, or a budget
        // that stopped it before one. Neither is a pass (exit 1, the check not decided).
        let undecided = !verdict.failed() && (verdict.not_proven() || !rec.complete);
        f.inconclusive = undecided;
        f.checks.push(
            Check {
                inconclusive: false,
                threshold: None,
                name: "probe.capacity".into(),
                passed: !verdict.failed(),
                measurement: Some(verdict.usable_bytes as f64),
                units: Some("bytes".into()),
                message: verdict_line(&verdict),
            }
            .undecided_if(undecided),
        );
        f.metrics.push(Metric::new(
            "announced_bytes",
            "Capacity the device announces",
            verdict.announced_bytes as f64,
            &[],
        ));
        // A probe a budget stopped on a device that looked honest so far has no verdict:
        // its usable bytes are only a lower bound, so neither figure is exported; nor when
        // a cache it could not see past may have answered for the stamps.
        if (verdict.complete || verdict.failed()) && !verdict.not_proven() {
            f.metrics.extend([
                Metric::new(
                    "usable_bytes",
                    "Bytes the capacity probe showed to hold data (all of it on an honest device)",
                    verdict.usable_bytes as f64,
                    &[],
                ),
                Metric::new(
                    "fake_capacity",
                    "1 when the capacity probe found the device fake or losing data, else 0",
                    if verdict.failed() { 1.0 } else { 0.0 },
                    &[],
                ),
            ]);
        }
        f
    }

    fn stopped<'a>(&self, _rec: &'a ProbeRecord) -> Option<&'a str> {
        None
    }

    fn document(&self, rec: &ProbeRecord, _findings: &Findings) -> Result<Body> {
        let verdict = analyse(rec);
        // Samples: every span read back and every alias scan, in the order they happened.
        let samples = rec
            .spans
            .iter()
            .cloned()
            .map(ProbeSample::Span)
            .chain(rec.scans.iter().map(|sc| {
                ProbeSample::Scan(ScanSummary {
                    from: sc.from,
                    to: sc.to,
                    stride: sc.stride,
                    reads: sc.reads,
                    hits: sc.hits.len(),
                    elapsed_ns: sc.elapsed_ns,
                })
            }))
            .collect();
        Ok(Body::Probe(ProbeResult {
            parameters: ProbeParameters {
                max_cache_bytes: self.config.max_cache,
                time_budget_ns: self.config.time_budget_ns,
                destructive: self.destructive,
                guard_bytes: rec.guard_bytes,
            },
            samples,
            probe: ProbeSummary {
                alias_hits: rec.alias_hits.iter().take(64).copied().collect(),
                alias_hit_count: rec.alias_hits.len(),
                filler_bytes: rec.filler_bytes,
                flush_bytes: rec.flush_bytes,
                complete: rec.complete,
            },
            verdict: verdict_line(&verdict),
            partition_command: partition_command(&verdict, self.logical_sector_bytes),
        }))
    }

    /// The probe's own clock: simulated time on sim: targets.
    fn elapsed_ns(&self, rec: &ProbeRecord) -> Option<u64> {
        Some(rec.elapsed_ns)
    }
}

/// The warning when the partition-table regions read back changed at the end: it names
/// the cause the verdict found, never one it did not (aliasing only when addresses aliased).
pub fn guard_warning(restored: bool, v: &Verdict) -> Option<Warning> {
    if !restored {
        return None;
    }
    use crate::vocab::warning::GuardCause;
    let cause = if v.wrap_modulus.is_some() {
        GuardCause::Aliasing
    } else if v.kind == FakeKind::Limbo {
        GuardCause::Limbo
    } else {
        GuardCause::CardChanged
    };
    Some(Warning::GuardRestored { cause })
}

/// The one-line verdict a person reads first.
pub fn verdict_line(v: &Verdict) -> String {
    let announced = format_bytes(v.announced_bytes);
    let holds = format_bytes(v.usable_bytes);
    let part = advice::partition(&fake_findings(v, 512))
        .map(|p| {
            format!(
                "usable with a partition of at most {}",
                format_bytes_floor(p.size_bytes)
            )
        })
        .unwrap_or_else(|| "not usable".to_string());
    match v.kind {
        FakeKind::None if v.not_proven() => format!(
            "NOT PROVEN: announces {announced}; every stamp read back intact, but a write cache faster than the medium still answered for them after {} written to push it out, so this proves nothing; rerun with --max-cache {} (writes up to 4 times that), or check every byte with `flashscope verify --write`",
            format_bytes(v.flush_bytes),
            format_bytes((2 * v.flush_bytes).next_power_of_two().max(1 << 30))
        ),
        FakeKind::None if !v.complete => format!(
            "INCOMPLETE: announces {announced}; stopped by a budget before a verdict, with data shown to survive below {holds} and no sign of a fake so far"
        ),
        FakeKind::None => format!(
            "OK: announces {announced} and holds all of it; a write cache of up to {} is ruled out (that much was written before the stamps were read back), a larger one no faster than the medium could still hide a fake (--max-cache SIZE rules out more)",
            format_bytes(v.flush_bytes)
        ),
        FakeKind::Wrap => format!(
            "FAKE: announces {announced}, holds {holds} (wrap-around every {}); {part}",
            format_bytes(v.wrap_modulus.unwrap_or(0))
        ),
        FakeKind::Chain => format!(
            "FAKE: announces {announced}, holds {holds} (beyond it, regions alternately wrap around every {} and lose data); {part}",
            format_bytes(v.wrap_modulus.unwrap_or(0))
        ),
        FakeKind::Limbo => format!(
            "FAKE: announces {announced}, holds {holds} (data written beyond it is lost); {part}"
        ),
        FakeKind::Bad => format!(
            "DAMAGED: announces {announced}, but returned I/O errors or flipped bits; run `flashscope verify` for the full list"
        ),
    }
}

/// Bytes in binary units rounded down to two decimals (`7.99 GiB`), so a size shown as
/// a limit is never above the limit.
pub fn format_bytes_floor(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut unit = 0;
    let mut scale = 1024u64;
    while unit + 1 < UNITS.len() && bytes / scale >= 1024 {
        scale *= 1024;
        unit += 1;
    }
    let hundredths = (bytes as u128 * 100 / scale as u128) as u64;
    let text = format!("{}.{:02}", hundredths / 100, hundredths % 100);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {}", UNITS[unit])
}

/// What the probe knows for partition advice: the announced and the usable size (the
/// erase block is not measured here, so the partition takes the stated default alignment).
fn fake_findings(v: &Verdict, logical_sector_bytes: u32) -> advice::Findings {
    advice::Findings {
        size_bytes: v.announced_bytes,
        logical_sector_bytes,
        usable_bytes: Some(v.usable_bytes),
        ..advice::Findings::default()
    }
}

/// The sfdisk command that makes a fake usable: one partition inside the real part, the
/// same line `auto` gives ([`advice::partition`]).
fn partition_command(v: &Verdict, logical_sector_bytes: u32) -> Option<String> {
    if !matches!(v.kind, FakeKind::Wrap | FakeKind::Limbo | FakeKind::Chain) {
        return None;
    }
    advice::usable_partition_command(v.announced_bytes, v.usable_bytes, logical_sector_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn honest(size: u64, max_cache: u64) -> CapacityTest {
        CapacityTest {
            config: ProbeConfig {
                max_cache,
                filler_time_ns: Some(40_000_000_000),
                ..ProbeConfig::default()
            },
            logical_sector_bytes: 512,
            size_bytes: size,
            destructive: false,
            partition_warning: None,
            filling: Default::default(),
        }
    }

    fn rates(read_mib_s: f64, op_ns: f64) -> Rates {
        Rates::from_sample(((1 << 20) * 1000, (1000.0 / read_mib_s * 1e9) as u64), None)
            .map(|r| Rates { op_ns, ..r })
            .unwrap()
    }

    #[test]
    fn the_filler_is_cut_at_its_time_cap_past_the_least() {
        let t = honest(16 << 30, 1 << 30);
        // Writes at 100 MiB/s (reads at 200): 40 s hold 4.4 GiB, so all of --max-cache.
        assert_eq!(t.filler_bytes(&rates(200.0, 0.0)), 1 << 30);
        // At 1 MiB/s the cap ends it at the least filler: a sixteenth of the device, up
        // to 1 GiB (issue 43 point 4), so here all of it.
        assert_eq!(t.filler_bytes(&rates(2.0, 0.0)), 1 << 30);
        assert_eq!(
            honest(8 << 30, 1 << 30).filler_bytes(&rates(2.0, 0.0)),
            512 << 20
        );
        // Never below MIN_CACHE on a small card.
        let t = honest(2 << 30, 1 << 30);
        assert_eq!(
            t.filler_bytes(&rates(2.0, 0.0)),
            crate::capacity::probe::MIN_CACHE
        );
        // At 10 MiB/s: 40 s and an eighth of a step more.
        assert_eq!(t.filler_bytes(&rates(20.0, 0.0)), 450 << 20);
        // Never more than the device.
        assert_eq!(
            honest(512 << 20, 1 << 30).filler_bytes(&rates(200.0, 0.0)),
            510 << 20
        );
    }

    #[test]
    fn the_estimate_counts_the_scan_s_commands_and_the_filler() {
        let t = honest(1 << 30, 1 << 30);
        let r = rates(200.0, 1e6);
        let ns = t.estimate_ns(&r);
        // 8192 scan reads of 1 ms each, 1 GiB at 100 MiB/s (10.24 s) in 1024 commands.
        let floor = 8192 * 1_000_000 + 10_240_000_000 + 1024 * 1_000_000;
        assert!(ns >= floor && ns < floor + 1_000_000_000, "{ns} {floor}");
        // Commands free: the scan is almost nothing, the filler the rest.
        let free = t.estimate_ns(&Rates { op_ns: 0.0, ..r });
        assert!(free < 10_500_000_000, "{free}");
    }

    #[test]
    fn limits_are_rounded_down() {
        assert_eq!(format_bytes_floor((8 << 30) - (1 << 20)), "7.99 GiB");
        assert_eq!(format_bytes_floor(8 << 30), "8 GiB");
        assert_eq!(format_bytes_floor(1536), "1.5 KiB");
        assert_eq!(format_bytes_floor(100), "100 B");
    }
}
