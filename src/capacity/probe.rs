//! The fast fake-capacity probe: find where written data stops surviving, with a few MiB
//! of writes instead of a full fill.
//!
//! The search (flashscope's own design; f3probe's sampling search was read as a reference):
//! 1. **Power-of-two aliases.** One 4 KiB reference unit is written at `lim_lo` and read
//!    back at `lim_lo + 2^k` for every power of two: the common wrap (the controller
//!    drops high address bits) returns it there. A modulus from one hit is a multiple of
//!    the real one; the unit is looked for again at its fractions until none divides it.
//! 2. **Top probe → bisection.** A 4 KiB stamp just below the upper bound `hi`; if it is
//!    lost, a bisection with 15 points a round (writes, then reads in random order)
//!    narrows the boundary to the sector, and the reference unit is looked for at the
//!    boundary's fractions (a chain fake wraps below where data is first lost). A span
//!    whose head is lost but whose tail reads back is the signature of a write cache:
//!    from then on every read-back is preceded by more writes than the cache holds.
//! 3. **Wide span + alias scan**, only when nothing bounded the size so far: a span of
//!    stamps below `hi`, then one sector read every span-width across the device in
//!    random order. A wrap at any size stores the span at `hi mod real`, so some read
//!    returns a stamp that names another offset. Reads of never-written sectors cannot be
//!    answered by a write cache.
//! 4. **Cache escalation.** When the span survives and nothing aliases, the device is
//!    either honest or a fake hidden by a cache. The span's reads are timed against a
//!    never-written sector's right after it was written: markedly faster means a faster
//!    cache (a controller's RAM) holds it. Filler is written in steps 25% apart, the span
//!    read again at each; the step at which it is lost brackets the cache. Behind a faster
//!    cache the steps go on (up to `cache_ceiling`) until the span reads at the medium's
//!    speed again (two timings agreeing); one that still answers at the ceiling leaves the
//!    verdict "not proven". Without one they go to `max_cache` (a cache as slow as the
//!    medium shows in no timing), or stop at `filler_time_ns`. Behind a cache that hid
//!    lost data, each bisection round pays a flush as large as the cache: 63 points a
//!    round, written in address order, and once the gap is at most half the flush one
//!    stamped span over all of it. Never more than `max_bytes` is written: the probe
//!    stops, incomplete, first.
//!
//! The first and last `guard` bytes (partition tables: MBR, GPT and its backup) are never
//! written; in destructive mode their content is saved in memory at the start and put
//! back at the end if an aliased write changed it (under a preserve journal the journal
//! restores every overwritten cell instead). Once the wrap modulus is known, later spans
//! avoid storage that an earlier span already used through another address, so a journal
//! restores each cell from one record.
//!
//! Limits: a fake that loses less than the top span plus the tail guard (a few MiB) is
//! not seen; two bisection points of a chain fake may still share storage by chance.

use crate::backend::{AlignedBuf, Backend};
use crate::pattern::{Stamper, UnitClass, UNIT};
use crate::vocab::error::is_vanished;
use crate::vocab::units::gcd;
use crate::{Error, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// How the probe runs.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    /// The largest write cache to defeat before calling a device honest.
    pub max_cache: u64,
    /// Past `max_cache`, filler goes on up to this many bytes while the span's reads come
    /// markedly faster than the medium's (a RAM cache still answers for it).
    pub cache_ceiling: u64,
    /// Stop after this many ns on the device's clock (the result is then partial).
    pub time_budget_ns: Option<u64>,
    /// Salt of this run's stamps.
    pub salt: u64,
    /// Save the guard regions in memory and write them back if aliasing changed them.
    /// Off under a preserve journal, which restores every overwritten cell itself.
    pub restore_guards: bool,
    /// Never write more than this many bytes in all (the budget announced before the
    /// run); the probe stops, incomplete, rather than exceed it.
    pub max_bytes: Option<u64>,
    /// When no faster cache shows in the timing, the filler for a cache as slow as the
    /// medium stops after this many ns of it, once it has pushed out a cache of
    /// [`slow_cache_floor`] (or `max_cache`, if smaller): `--max-cache` not given, a slow
    /// card is answered in a minute or two; the verdict names the size ruled out.
    pub filler_time_ns: Option<u64>,
}

/// The least filler written behind a span before an honest verdict, whatever the time cap.
pub const MIN_CACHE: u64 = 256 << 20;

/// The largest write cache pushed out before calling a device honest when `--max-cache` is
/// not given (the one definition of that default).
pub const DEFAULT_MAX_CACHE: u64 = 1 << 30;

/// The write cache as slow as the medium that the default always rules out on a device
/// of `size` bytes, however slow its writes: the smaller of [`DEFAULT_MAX_CACHE`] and a
/// sixteenth of the device (fakes announce 8 to 16 times what they hold, and their caches
/// are a fraction of that), never less than [`MIN_CACHE`]. The time cap
/// (`filler_time_ns`) only ends the filler past it.
pub fn slow_cache_floor(size: u64) -> u64 {
    (size / 16).clamp(MIN_CACHE, DEFAULT_MAX_CACHE)
}

/// The default time cap of the filler for a cache as slow as the medium (40 s).
pub const DEFAULT_FILLER_TIME_NS: u64 = 40_000_000_000;

/// How far filler goes behind a cache that timing shows (at least 4 GiB, as f3probe's
/// largest caches of real fakes).
pub const DEFAULT_CACHE_CEILING: u64 = 4 << 30;

/// A span's reads against the medium's, timed at one filler step (min of several reads).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CacheTiming {
    /// Filler written after the span when these reads were made.
    pub written_after: u64,
    /// Fastest read of one unit of the span, ns.
    pub span_ns: u64,
    /// Fastest read of one never-written unit (the medium), ns.
    pub medium_ns: u64,
}

impl CacheTiming {
    /// How much faster the span answered than the medium, ns (negative: slower). A delay
    /// common to both reads (a busy CPU, the I/O path) cancels out of the difference.
    pub fn gap_ns(&self) -> i64 {
        self.medium_ns as i64 - self.span_ns as i64
    }

    /// Right after the span was written: it answered markedly faster than the medium
    /// (by more than an eighth of the medium's time), so a faster cache holds written data.
    pub fn shows_fast_cache(&self) -> bool {
        self.gap_ns() > (self.medium_ns / 8).max(1000) as i64
    }

    /// Later: the span still answers faster than the medium by at least half of what
    /// `fresh` (the timing right after it was written) showed: the cache still holds it.
    pub fn still_cached(&self, fresh: &CacheTiming) -> bool {
        self.gap_ns() > fresh.gap_ns() / 2
    }
}

/// What a probe of `size` bytes may write, for the banner and the journal, from its
/// configuration: (the low region its filler covers, the most bytes it writes, the bytes
/// an honest card typically takes). A cache that hid lost data costs up to three more
/// rounds of filler as large as the cache.
pub fn write_bounds(cfg: &ProbeConfig, size: u64) -> (u64, u64, u64) {
    let cache = cfg.max_cache.max(cfg.cache_ceiling);
    // Filler starts at the device's low end each time; behind a cache that hid lost data
    // each bisection round writes as much as the cache from there.
    let region = (cache + (256 << 20)).min(size);
    let max_bytes = cache
        .saturating_mul(4)
        .saturating_add(256 << 20)
        .min(size.saturating_mul(4));
    (region, max_bytes, cfg.max_cache.min(size) + (64 << 20))
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            max_cache: DEFAULT_MAX_CACHE,
            cache_ceiling: DEFAULT_CACHE_CEILING,
            time_budget_ns: None,
            salt: Stamper::random_salt(),
            restore_guards: true,
            max_bytes: None,
            filler_time_ns: None,
        }
    }
}

/// What one span of stamps looked like when read back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SpanSample {
    /// "top", "bisect", "confirm" or "chain".
    pub phase: String,
    pub offset: u64,
    pub length: u64,
    /// Bytes written after the span and before it was read back (cache defeat).
    pub written_after: u64,
    pub good_bytes: u64,
    /// Offset of the first unit that did not read back as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_lost: Option<u64>,
    /// Units that read back blank/stale/foreign.
    pub lost_units: u64,
    /// Units with a few bit flips.
    pub changed_units: u64,
    /// Units holding another offset's stamp.
    pub overwritten_units: u64,
    /// Good units after the first lost one (a write cache answering, or a boundary).
    pub good_after_lost: u64,
    /// An I/O error happened on the span.
    pub io_error: bool,
    /// Device clock when the read-back finished.
    pub at_ns: u64,
}

impl SpanSample {
    pub fn end(&self) -> u64 {
        self.offset + self.length
    }

    /// Every unit came back exactly as written.
    pub fn all_good(&self) -> bool {
        self.good_bytes == self.length && !self.io_error
    }
}

/// One read of the alias scan that returned a stamp written to another offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AliasHit {
    /// Where it was read.
    pub read_at: u64,
    /// The offset the stamp was written to.
    pub written_at: u64,
}

/// Summary of one alias scan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ScanSample {
    pub from: u64,
    pub to: u64,
    pub stride: u64,
    pub reads: u64,
    pub hits: Vec<AliasHit>,
    pub elapsed_ns: u64,
}

/// Everything the probe saw: the input of `analyse`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProbeRecord {
    pub announced_bytes: u64,
    pub guard_bytes: u64,
    pub max_cache: u64,
    pub spans: Vec<SpanSample>,
    pub scans: Vec<ScanSample>,
    /// Reads that returned another offset's stamp (sorted, at most 4096).
    pub alias_hits: Vec<AliasHit>,
    /// Cache-defeating filler written in total.
    pub filler_bytes: u64,
    /// The most bytes written after a stamped unit before it was read back (how large a
    /// write cache the read-backs saw through).
    pub flush_bytes: u64,
    /// The search's final upper bound: `[0, hi)` is where data was shown to survive.
    pub hi: u64,
    /// Highest end of a span known to hold data.
    pub lo: u64,
    /// The search ran to the end (false: time budget or write budget).
    pub complete: bool,
    pub bytes_written: u64,
    pub elapsed_ns: u64,
    /// The guard regions were changed by aliasing and written back.
    pub guard_restored: bool,
    /// A volatile write cache seen hiding lost data: (bytes it held, bytes it did not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_bytes: Option<(u64, u64)>,
    /// The span's read times against the medium's: right after it was written (the
    /// first, `written_after` 0), then at the filler steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_timing: Vec<CacheTiming>,
    /// A faster cache still held the span when the filler stopped (at its ceiling): an
    /// intact span proves nothing, and the verdict is "not proven".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_unresolved: bool,
}

impl ProbeRecord {
    /// The timing right after the span was written, when it showed a faster cache.
    pub fn fast_cache(&self) -> Option<&CacheTiming> {
        self.cache_timing
            .first()
            .filter(|t| t.written_after == 0 && t.shows_fast_cache())
    }
}

/// How far a running probe has come, for the CLI's stderr line.
#[derive(Debug, Clone, Copy)]
pub struct ProbeProgress<'a> {
    pub phase: &'a str,
    pub done: u64,
    pub total: u64,
}

struct Prober<'a, B: Backend + ?Sized> {
    dev: &'a mut B,
    stamper: Stamper,
    rng: Pcg64,
    sector: u64,
    align: u64,
    n: u64,
    lim_lo: u64,
    lim_hi: u64,
    cfg: ProbeConfig,
    rec: ProbeRecord,
    t0: u64,
    progress: &'a mut dyn FnMut(ProbeProgress),
    stop: bool,
    /// Spans written so far (not the filler).
    written: Vec<(u64, u64)>,
    /// The highest end of a filler write so far (`lim_hi` once it wrapped).
    filler_top: u64,
}

/// Errors that end the probe: the device is gone, or the user interrupted (Ctrl-C in
/// preserve mode stops after the current write).
fn fatal(e: &std::io::Error) -> bool {
    is_vanished(e) || e.kind() == std::io::ErrorKind::Interrupted
}

fn align_down(x: u64, a: u64) -> u64 {
    x - x % a
}

/// The wrap modulus the alias hits imply: gcd of the distances between the offsets that
/// share storage. `None` without hits.
pub fn modulus_of(hits: &[AliasHit]) -> Option<u64> {
    let mut g = 0;
    for h in hits {
        g = gcd(g, h.read_at.abs_diff(h.written_at));
    }
    // Two reads that returned the same stamp share storage with each other too.
    for pair in hits.windows(2) {
        if pair[0].written_at == pair[1].written_at {
            g = gcd(g, pair[0].read_at.abs_diff(pair[1].read_at));
        }
    }
    (g > 0).then_some(g)
}

impl<B: Backend + ?Sized> Prober<'_, B> {
    fn out_of_time(&mut self) -> bool {
        if let Some(b) = self.cfg.time_budget_ns {
            if self.dev.clock_ns().saturating_sub(self.t0) > b {
                self.stop = true;
            }
        }
        self.stop
    }

    /// Whether `n` more bytes fit in the announced write budget; stops the probe if not.
    fn may_write(&mut self, n: u64) -> bool {
        let fits = self
            .cfg
            .max_bytes
            .is_none_or(|cap| self.rec.bytes_written + n <= cap);
        if !fits {
            self.stop = true;
        }
        fits
    }

    fn io_err(&self, what: &str, offset: u64, e: std::io::Error) -> Error {
        Error::io(format!("{what} at offset {offset}"), e)
    }

    /// Write stamps over `[offset, offset+len)`; `Ok(false)` when the device refused
    /// (I/O error: counted as damage) or the write budget ran out.
    fn write_span(&mut self, offset: u64, len: u64) -> Result<bool> {
        self.written.push((offset, len));
        let chunk = (4u64 << 20).min(len) as usize;
        let mut buf = AlignedBuf::new(chunk);
        let mut pos = offset;
        while pos < offset + len {
            let n = (offset + len - pos).min(chunk as u64) as usize;
            self.stamper.fill(&mut buf[..n], pos);
            if !self.may_write(n as u64) {
                return Ok(false);
            }
            match self.dev.write_at(&buf[..n], pos) {
                Ok(()) => self.rec.bytes_written += n as u64,
                Err(e) if crate::backend::is_budget_exhausted(&e) => {
                    self.stop = true;
                    return Ok(false);
                }
                Err(e) if fatal(&e) => return Err(self.io_err("writing", pos, e)),
                Err(_) => return Ok(false),
            }
            pos += n as u64;
        }
        Ok(true)
    }

    /// Read a span back and classify it; alias hits inside it are returned too.
    fn read_span(
        &mut self,
        phase: &str,
        offset: u64,
        len: u64,
        written_ok: bool,
        written_after: u64,
    ) -> Result<(SpanSample, Vec<AliasHit>)> {
        let mut s = SpanSample {
            phase: phase.to_string(),
            offset,
            length: len,
            written_after,
            io_error: !written_ok,
            ..Default::default()
        };
        let mut hits = Vec::new();
        let chunk = (4u64 << 20).min(len) as usize;
        let mut buf = AlignedBuf::new(chunk);
        let mut pos = offset;
        while pos < offset + len {
            let n = (offset + len - pos).min(chunk as u64) as usize;
            match self.dev.read_at(&mut buf[..n], pos) {
                Ok(()) => {
                    for (i, unit) in buf[..n].chunks_exact(UNIT).enumerate() {
                        let at = pos + (i * UNIT) as u64;
                        let class = self.stamper.classify_unit(unit, at);
                        if class == UnitClass::Good {
                            s.good_bytes += UNIT as u64;
                            if s.first_lost.is_some() {
                                s.good_after_lost += 1;
                            }
                            continue;
                        }
                        if s.first_lost.is_none() {
                            s.first_lost = Some(at);
                        }
                        match class {
                            UnitClass::Changed { .. } => s.changed_units += 1,
                            UnitClass::Overwritten { from } => {
                                s.overwritten_units += 1;
                                hits.push(AliasHit {
                                    read_at: at,
                                    written_at: from,
                                });
                            }
                            _ => s.lost_units += 1,
                        }
                    }
                }
                Err(e) if fatal(&e) => return Err(self.io_err("reading", pos, e)),
                Err(_) => {
                    s.io_error = true;
                    if s.first_lost.is_none() {
                        s.first_lost = Some(pos);
                    }
                }
            }
            pos += n as u64;
        }
        s.at_ns = self.dev.clock_ns().saturating_sub(self.t0);
        Ok((s, hits))
    }

    /// Time the span's first unit against a unit the probe never wrote (between the
    /// filler's reach and the span), after `written_after` bytes of filler: the fastest of
    /// `reads` reads of each, taken in turn so a passing delay (a busy CPU) hits both.
    /// `None` when no such unit exists (the filler covered the device) or a read failed.
    fn time_span(&mut self, span: u64, written_after: u64, reads: usize) -> Option<CacheTiming> {
        let below = self.filler_top.max(self.lim_lo);
        if span < below + 4 * self.align {
            return None;
        }
        let mut at = align_down(below + (span - below) / 2, self.align);
        while self
            .written
            .iter()
            .any(|&(o, l)| at < o + l && o < at + self.align)
        {
            at += self.align;
            if at + self.align > span {
                return None;
            }
        }
        let mut buf = AlignedBuf::new(self.align as usize);
        let (mut span_ns, mut medium_ns) = (u64::MAX, u64::MAX);
        for _ in 0..reads {
            for (x, best) in [(at, &mut medium_ns), (span, &mut span_ns)] {
                let t = self.dev.clock_ns();
                self.dev.read_at(&mut buf, x).ok()?;
                *best = (*best).min(self.dev.clock_ns().saturating_sub(t));
            }
        }
        Some(CacheTiming {
            written_after,
            span_ns,
            medium_ns,
        })
    }

    /// Write `amount` bytes of zeros over the low part of the device, skipping `exclude`,
    /// so a write cache of up to that size no longer holds the spans. Returns bytes written.
    fn filler(&mut self, amount: u64, exclude: &[(u64, u64)]) -> Result<u64> {
        let chunk = 1u64 << 20;
        let buf = AlignedBuf::new(chunk as usize);
        let mut done = 0;
        let mut pos = self.lim_lo;
        let mut wrapped = 0;
        // The deadline is checked for every chunk: a filler of a few GiB takes minutes.
        while done < amount && !self.out_of_time() {
            if pos + chunk > self.lim_hi {
                pos = self.lim_lo;
                self.filler_top = self.lim_hi;
                wrapped += 1;
                if wrapped > 64 {
                    break;
                }
            }
            if exclude.iter().any(|&(o, l)| pos < o + l && o < pos + chunk) {
                pos += chunk;
                continue;
            }
            let n = (amount - done).min(chunk).div_ceil(self.align) * self.align;
            if !self.may_write(n) {
                break;
            }
            match self.dev.write_at(&buf[..n as usize], pos) {
                Ok(()) => {
                    self.rec.bytes_written += n;
                    self.filler_top = self.filler_top.max(pos + n);
                    done += n;
                }
                Err(e) if crate::backend::is_budget_exhausted(&e) => self.stop = true,
                Err(e) if fatal(&e) => return Err(self.io_err("writing filler", pos, e)),
                Err(_) => {}
            }
            pos += chunk;
            (self.progress)(ProbeProgress {
                phase: "flushing cache",
                done,
                total: amount,
            });
        }
        self.rec.filler_bytes += done;
        Ok(done)
    }

    /// Where the spans written so far are stored if addresses wrap every `m` bytes.
    fn cells(&self, m: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for &(o, l) in &self.written {
            let start = o % m;
            let first = l.min(m - start);
            out.push((start, first));
            if first < l {
                out.push((0, (l - first).min(m)));
            }
        }
        out
    }

    /// The highest span `[e - w, e)` with `e <= end` whose storage (addresses wrapping every
    /// `m`) no earlier span used: a second write to the same cell through another address
    /// would make a journal restore them in the wrong order.
    fn free_span_below(&self, end: u64, w: u64, m: u64) -> u64 {
        let cells = self.cells(m);
        let mut e = align_down(end, self.align);
        while e >= self.lim_lo + w {
            let s = e - w;
            match cells
                .iter()
                .filter(|&&(o, l)| s < o + l && o < e)
                .map(|&(o, _)| o)
                .min()
            {
                Some(o) => e = align_down(o, self.align),
                None => return s,
            }
        }
        align_down(end - w, self.align)
    }

    /// The span width and scan stride for a bound: about 8192 scan reads per device (a
    /// wrap stores the span, as wide as the stride, where one of them reads it).
    fn stride(&self, hi: u64) -> u64 {
        let raw = (hi.saturating_sub(self.lim_lo) / 8192).max(1);
        let p2 = raw.next_power_of_two();
        p2.clamp(64 << 10, 64 << 20).max(self.align)
    }

    /// Read one sector every `stride` bytes of `[lim_lo, to)` except `skip`, in random
    /// order, and collect the stamps that name another offset. (A span below `to` that
    /// aliases is stored at its offset modulo the real size, which is below `to` too.)
    fn scan(&mut self, stride: u64, to: u64, skip: (u64, u64)) -> Result<ScanSample> {
        let t = self.dev.clock_ns();
        let io = self.sector.max(UNIT as u64);
        let mut points: Vec<u64> = (0..)
            .map(|k| self.lim_lo + k * stride)
            .take_while(|&x| x + io <= to)
            .filter(|&x| !(x + io > skip.0 && x < skip.0 + skip.1))
            .collect();
        points.shuffle(&mut self.rng);
        let mut sample = ScanSample {
            from: self.lim_lo,
            to,
            stride,
            ..Default::default()
        };
        let mut buf = AlignedBuf::new(io as usize);
        let total = points.len() as u64;
        for (i, &x) in points.iter().enumerate() {
            if i % 256 == 0 {
                (self.progress)(ProbeProgress {
                    phase: "scanning",
                    done: i as u64,
                    total,
                });
                if self.out_of_time() {
                    break;
                }
            }
            match self.dev.read_at(&mut buf, x) {
                Ok(()) => {
                    sample.reads += 1;
                    self.alias_hits_in(&buf, x, &mut sample.hits);
                }
                Err(e) if fatal(&e) => return Err(self.io_err("reading", x, e)),
                Err(_) => sample.reads += 1,
            }
        }
        sample.hits.sort_by_key(|h| (h.written_at, h.read_at));
        sample.elapsed_ns = self.dev.clock_ns().saturating_sub(t);
        Ok(sample)
    }

    /// The stamps in `buf` (read at `x`) that name another offset: aliases.
    fn alias_hits_in(&self, buf: &[u8], x: u64, hits: &mut Vec<AliasHit>) {
        for (j, unit) in buf.chunks_exact(UNIT).enumerate() {
            let at = x + (j * UNIT) as u64;
            // Most reads hit never-written space: check the header first.
            if self.stamper.claimed_offset(unit).is_none_or(|o| o == at) {
                continue;
            }
            if let UnitClass::Overwritten { from } = self.stamper.classify_unit(unit, at) {
                hits.push(AliasHit {
                    read_at: at,
                    written_at: from,
                });
            }
        }
    }

    /// Read one unit at `lim_lo + d` for each distance `d` and collect the stamps there
    /// that name another offset. Only the reference unit at `lim_lo` was written near
    /// these places, so a hit is an alias of it, and no write cache answers for them.
    fn alias_reads(&mut self, dists: &[u64]) -> Result<Vec<AliasHit>> {
        let io = self.align;
        let mut buf = AlignedBuf::new(io as usize);
        let mut hits = Vec::new();
        let t = self.dev.clock_ns();
        let mut sample = ScanSample {
            from: self.lim_lo,
            to: self.lim_hi,
            stride: 0,
            ..Default::default()
        };
        for &d in dists {
            let x = self.lim_lo + d;
            if d < io || x + io > self.lim_hi {
                continue;
            }
            match self.dev.read_at(&mut buf, x) {
                Ok(()) => {
                    sample.reads += 1;
                    self.alias_hits_in(&buf, x, &mut hits);
                }
                Err(e) if fatal(&e) => return Err(self.io_err("reading", x, e)),
                Err(_) => sample.reads += 1,
            }
        }
        sample.hits.clone_from(&hits);
        sample.elapsed_ns = self.dev.clock_ns().saturating_sub(t);
        self.rec.scans.push(sample);
        Ok(hits)
    }

    /// The wrap modulus the hits imply, refined: one distance between aliased offsets is
    /// some multiple of the modulus, so look for the reference unit again at the
    /// distance's fractions (a hit there divides it) until none divides it further.
    fn settle_modulus(&mut self, hits: &mut Vec<AliasHit>) -> Result<Option<u64>> {
        let Some(mut m) = modulus_of(hits) else {
            return Ok(None);
        };
        for _ in 0..8 {
            if self.stop {
                break;
            }
            let dists: Vec<u64> = (2..=64u64)
                .filter(|&k| m % k == 0 && (m / k) % self.sector == 0)
                .map(|k| m / k)
                .filter(|&d| d >= 2 * self.align)
                .collect();
            if dists.is_empty() {
                break;
            }
            hits.extend(self.alias_reads(&dists)?);
            let g = modulus_of(hits).unwrap_or(m);
            if g == m {
                break;
            }
            m = g;
        }
        Ok(Some(m))
    }

    /// Narrow `(lo, hi]` (data survives below `lo`, is lost at `hi`) to the sector by
    /// writing sample spans, flushing `flush` bytes, and reading them back in random order.
    fn bisect(&mut self, mut lo: u64, mut hi: u64, flush: u64) -> Result<(u64, Vec<AliasHit>)> {
        let mut hits_all = Vec::new();
        // Every round behind a cache costs the flush, and every point in an erase block of
        // its own costs a write of that block on most cards (random 4 KiB writes run at a
        // few a second on them): a round samples 63 points, and once the gap is at most
        // half the flush (and 256 MiB), one stamped span over the whole gap ends the search
        // in one more round, for less than another flush.
        let points_per_round: u64 = if flush > 0 { 63 } else { 15 };
        let sec = self.sector;
        while hi > lo && !self.out_of_time() {
            let gap = hi - lo;
            let mut spans = Vec::new();
            if flush > 0 && gap <= (flush / 2).min(256 << 20) && gap / sec > points_per_round {
                spans.push((lo, gap));
            } else if gap / sec <= points_per_round {
                // Few sectors left: try each of them, and the boundary is exact.
                let mut p = lo;
                while p + sec <= hi {
                    spans.push((p, sec));
                    p += sec;
                }
            } else {
                let width = align_down((gap / (points_per_round + 1) / 2).min(4096), sec).max(sec);
                for i in 1..=points_per_round {
                    let p = align_down(lo + gap * i / (points_per_round + 1), sec);
                    if p >= lo
                        && p + width <= hi
                        && spans.last().is_none_or(|&(q, _)| p >= q + width)
                    {
                        spans.push((p, width));
                    }
                }
            }
            if spans.is_empty() {
                break;
            }
            // Written in address order (cards write in order fastest), read back in
            // random order.
            let mut order = spans.clone();
            let mut ok = Vec::new();
            for &(p, w) in &order {
                ok.push(((p, w), self.write_span(p, w)?));
            }
            if self.stop {
                break; // the write budget ran out: these points were not all written
            }
            let written_after = if flush > 0 {
                self.filler(flush, &spans)?
            } else {
                0
            };
            if self.stop {
                // The filler was cut short: a cache may still answer for these points.
                break;
            }
            self.rec.flush_bytes = self.rec.flush_bytes.max(written_after);
            order.shuffle(&mut self.rng);
            let mut results = Vec::new();
            for &(p, w) in &order {
                let wrote = ok
                    .iter()
                    .find(|(s, _)| *s == (p, w))
                    .is_none_or(|(_, k)| *k);
                let (s, hits) = self.read_span("bisect", p, w, wrote, written_after)?;
                hits_all.extend(hits);
                results.push(s);
            }
            results.sort_by_key(|s| s.offset);
            let mut new_lo = lo;
            let mut new_hi = hi;
            for s in &results {
                if s.all_good() {
                    new_lo = new_lo.max(s.end());
                } else {
                    let first = s.first_lost.unwrap_or(s.offset);
                    // A lost head with a good tail is a cache, not a boundary: trust only
                    // the prefix before the first lost unit.
                    if first > s.offset {
                        new_lo = new_lo.max(first);
                    }
                    new_hi = first;
                    break;
                }
            }
            self.rec.spans.extend(results);
            (self.progress)(ProbeProgress {
                phase: "bisecting",
                done: 0,
                total: 0,
            });
            if new_lo == lo && new_hi == hi {
                break; // no progress possible (device refuses writes there)
            }
            lo = new_lo;
            hi = new_hi.max(lo);
        }
        Ok((lo, hits_all))
    }

    fn run(&mut self) -> Result<()> {
        let mut hi = self.lim_hi;
        let mut lo = self.lim_lo;
        let mut flush: u64 = 0;
        let mut escalated = false;
        let mut modulus: Option<u64> = None;
        // The common wrap drops high address bits: a reference unit at `lim_lo` shows up
        // again at `lim_lo + 2^k` for every 2^k at or above the real size. One write and
        // a few dozen reads find it before anything else is written.
        let wrote_ref = self.write_span(self.lim_lo, self.align)?;
        let mut hits: Vec<AliasHit> = Vec::new();
        if wrote_ref && !self.stop {
            let dists: Vec<u64> = (0..64)
                .map(|k| 1u64 << k)
                .filter(|&d| d >= 2 * self.align && d < self.n)
                .collect();
            hits = self.alias_reads(&dists)?;
            if let Some(m) = self.settle_modulus(&mut hits)? {
                modulus = Some(m);
                hi = hi.min(align_down(m, UNIT as u64));
            }
        }
        // The wide span and the alias scan over the whole device run once, and only when
        // nothing else bounds the usable size (no lost data, no alias found so far): they
        // are what finds a wrap at a size that is not a power of two.
        let mut scan_next = false;
        let mut scanned = false;
        for _round in 0..24 {
            if self.out_of_time() {
                break;
            }
            let general = scan_next && !scanned;
            // The general round's span ends one unit below `hi`: the unit just below `hi`
            // was written by the round before (each cell is written once, for a journal).
            let top = if general { hi - self.align } else { hi };
            let w = if general { self.stride(hi) } else { self.align }
                .min(align_down(top.saturating_sub(self.lim_lo), self.align));
            if w == 0 {
                break;
            }
            let span = match modulus {
                Some(m) if top <= m => self.free_span_below(top, w, m),
                _ => align_down(top - w, self.align),
            };
            // Up to `top`, unless the span had to move below storage used before.
            let span_len = if span + w >= align_down(top, self.align) {
                top - span
            } else {
                w
            };
            let wrote = self.write_span(span, span_len)?;
            if self.stop {
                break; // the write budget ran out: nothing to read back
            }
            let after = if flush > 0 {
                self.filler(flush, &[(span, span_len)])?
            } else {
                0
            };
            if self.stop {
                break; // the filler was cut short: a cache may still answer for the span
            }
            self.rec.flush_bytes = self.rec.flush_bytes.max(after);
            let (s, span_hits) = self.read_span("top", span, span_len, wrote, after)?;
            hits.extend(span_hits);
            if general {
                scanned = true;
                let scan = self.scan(w, hi, (span, span_len))?;
                hits.extend(scan.hits.iter().copied());
                self.rec.scans.push(scan);
            }
            let good = s.all_good();
            let first_lost = s.first_lost;
            let cache_sign = s.good_after_lost > 0 && s.lost_units > 0;
            self.rec.spans.push(s);
            if let Some(m) = self.settle_modulus(&mut hits)? {
                let m = modulus.map_or(m, |old| gcd(old, m));
                modulus = Some(m);
                if m < hi {
                    hi = align_down(m, UNIT as u64);
                    lo = lo.min(hi);
                    continue;
                }
            }
            if !good {
                let first = first_lost.unwrap_or(span);
                if cache_sign && flush == 0 {
                    // Lost head, good tail: a cache of about the good tail plus the writes
                    // after it answered; flush twice that from now on.
                    flush = 2 * (hi - first) + (1 << 20);
                }
                // The span's intact head (if any) is known good already.
                let from = if first > span { first } else { lo.min(first) };
                let (l, bh) = self.bisect(from, first, flush)?;
                hits.extend(bh);
                (lo, hi) = (l, l);
                // A chain fake wraps below the place where data is first lost (at twice
                // the real size in the common layout): look for the reference unit at the
                // fractions of that place.
                if modulus.is_none() && !self.stop && wrote_ref {
                    let dists: Vec<u64> = (2..=8u64)
                        .map(|k| align_down(l / k, self.sector))
                        .filter(|&d| d > 0)
                        .collect();
                    hits.extend(self.alias_reads(&dists)?);
                }
                match self.settle_modulus(&mut hits)? {
                    Some(m) if modulus != Some(m) => {
                        modulus = Some(m);
                        hi = hi.min(align_down(m, UNIT as u64));
                        lo = lo.min(hi);
                        continue;
                    }
                    // The bisection read back the sector just below `l` intact and found
                    // the one at `l` lost: the boundary is exact.
                    _ => break,
                }
            }
            if hi == self.lim_hi && modulus.is_none() && !scanned {
                scan_next = true;
                continue;
            }
            if !escalated && modulus.is_none() && hi == self.lim_hi {
                escalated = true;
                // Filler in steps 25% apart: each step costs one read of the span, and the
                // step at which the span is lost brackets the cache's size.
                // The span's reads against the medium's, right after it was written, tell
                // whether a faster cache (a controller's RAM) holds written data. If one
                // does, the filler follows it up to the ceiling until the span answers at
                // the medium's speed; a cache that still holds it there leaves the
                // verdict unproven. A cache as slow as the medium shows in no timing: the
                // filler goes to --max-cache for it (or stops at the time cap).
                let ceiling = self.cfg.cache_ceiling.max(self.cfg.max_cache);
                let fresh = self.time_span(span, 0, 9);
                self.rec.cache_timing.extend(fresh);
                let fast = fresh.filter(|t| t.shows_fast_cache());
                // The slow cache always ruled out, whatever the time cap: a step of its own.
                let least = slow_cache_floor(self.n).min(self.cfg.max_cache);
                let mut steps = vec![16u64 << 20];
                while *steps.last().unwrap_or(&0) < ceiling {
                    let next = steps.last().map_or(0, |&x| x + x / 4);
                    let next = align_down(next, 1 << 20);
                    let last = *steps.last().unwrap_or(&0);
                    for mark in [least, self.cfg.max_cache] {
                        if last < mark && next > mark {
                            steps.push(mark);
                        }
                    }
                    steps.push(next.min(ceiling));
                }
                steps.sort_unstable();
                steps.dedup();
                let mut cached = fast.is_some();
                let mut total = 0;
                let mut revealed = None;
                let filler_t0 = self.dev.clock_ns();
                // Writes after the span's first unit at the last read that found it intact.
                let mut held = span_len - UNIT as u64;
                for target in steps {
                    // Past --max-cache only behind a faster cache that still holds the span
                    // (the first step is taken whatever --max-cache: it may be below it).
                    if target > self.cfg.max_cache && !cached && total > 0 {
                        break;
                    }
                    // A cache as slow as the medium: the time cap, once a cache of `least`
                    // is ruled out (`held`: what the last intact read saw through).
                    let slow_for = self.dev.clock_ns().saturating_sub(filler_t0);
                    if !cached
                        && held >= least
                        && self.cfg.filler_time_ns.is_some_and(|cap| slow_for > cap)
                    {
                        break;
                    }
                    // Evict even the span's first unit: writes after it must exceed the cache.
                    let need = (target + self.align).saturating_sub(span_len);
                    if need <= total {
                        continue;
                    }
                    total += self.filler(need - total, &[(span, span_len)])?;
                    // What the span's first unit has had written after it.
                    let after_first = total + span_len - UNIT as u64;
                    self.rec.flush_bytes = self.rec.flush_bytes.max(after_first);
                    let (s, h) = self.read_span("confirm", span, span_len, wrote, total)?;
                    hits.extend(h);
                    let bad = !s.all_good();
                    let first = s.first_lost;
                    self.rec.spans.push(s);
                    if bad {
                        revealed = Some((target, first.unwrap_or(span)));
                        // A cache that held `held` bytes written after the first unit and
                        // no longer holds `after_first`.
                        self.rec.cache_bytes = Some((held, after_first));
                        break;
                    }
                    held = after_first;
                    if self.stop {
                        break;
                    }
                    if let (Some(f), true) = (fast, cached) {
                        // Still faster than the medium? A "no" is taken only when a second,
                        // longer timing agrees: a wrong "no" would end the chase too soon.
                        let t = self.time_span(span, total, 9);
                        self.rec.cache_timing.extend(t);
                        cached = t.is_none_or(|t| t.still_cached(&f));
                        if !cached {
                            let t = self.time_span(span, total, 27);
                            self.rec.cache_timing.extend(t);
                            cached = t.is_none_or(|t| t.still_cached(&f));
                        }
                    }
                    if target >= ceiling {
                        break;
                    }
                }
                // The chase ended at the ceiling (or with the device covered) while the
                // faster cache still answered for the span: nothing is proven.
                if revealed.is_none() && cached && !self.stop {
                    self.rec.cache_unresolved = true;
                }
                if let Some((cache, first)) = revealed {
                    flush = cache + (span_len) + self.align;
                    let (l, bh) = self.bisect(lo.min(first), first, flush)?;
                    hits.extend(bh);
                    (lo, hi) = (l, l);
                    if let Some(m) = self.settle_modulus(&mut hits)? {
                        modulus = Some(m);
                        hi = hi.min(align_down(m, UNIT as u64));
                        lo = lo.min(hi);
                        continue;
                    }
                    // The bisection read the sector below `l` intact and the one at `l`
                    // lost, both after the flush: the boundary is exact, and another span
                    // there would only cost one more flush.
                    break;
                }
            }
            // The span below `hi` survived and aliased nothing; that proves `[0, hi)` only
            // if the scan and the cache check ran to the end.
            if !self.stop {
                lo = hi;
            }
            break;
        }
        hits.sort_by_key(|h| (h.written_at, h.read_at));
        hits.dedup();
        hits.truncate(4096);
        self.rec.alias_hits.clone_from(&hits);
        self.rec.complete = !self.stop && lo == hi;
        self.rec.lo = lo;
        self.rec.hi = hi;
        // A fake that wraps may alternate with regions that lose data (chain): write into
        // the second region and look for the stamp where a wrap would have put it. That
        // address was never written, so no write cache can answer for it.
        if let Some(m) = modulus {
            let w = (64u64 << 10).max(self.align);
            let mut cell = align_down(m / 2, self.align).max(self.lim_lo);
            let used = self.cells(m);
            while self
                .written
                .iter()
                .chain(used.iter())
                .any(|&(o, l)| cell < o + l && o < cell + w)
            {
                cell += w;
            }
            let at = 2 * m + cell;
            if self.rec.complete && cell + w <= m && at + w <= self.lim_hi && !self.out_of_time() {
                let wrote = self.write_span(at, w)?;
                if self.stop {
                    return Ok(());
                }
                let (s, h) = self.read_span("chain", cell, w, wrote, 0)?;
                hits.extend(h);
                self.rec.spans.push(s);
                hits.sort_by_key(|h| (h.written_at, h.read_at));
                hits.dedup();
                hits.truncate(4096);
                self.rec.alias_hits = hits;
            }
        }
        Ok(())
    }
}

/// Run the probe on `dev`. Writes only between the guards; the guards are saved first and
/// written back at the end if aliasing changed them.
pub fn probe<B: Backend + ?Sized>(
    dev: &mut B,
    cfg: &ProbeConfig,
    progress: &mut dyn FnMut(ProbeProgress),
) -> Result<ProbeRecord> {
    let n = dev.size_bytes();
    let sector = (dev.logical_sector_bytes() as u64).max(UNIT as u64);
    let align = sector.max(4096);
    let guard = if n >= 256 << 20 {
        1 << 20
    } else {
        align_down(n / 256, align).max(align)
    };
    let lim_lo = guard;
    let lim_hi = align_down(n.saturating_sub(guard), align);
    if lim_hi <= lim_lo + 4 * align {
        return Err(Error::usage(format!(
            "the target holds {n} bytes: too small to probe (at least {} needed)",
            lim_lo + 4 * align + guard
        )));
    }
    let t0 = dev.clock_ns();
    let mut head = AlignedBuf::new(guard as usize);
    let mut tail = AlignedBuf::new((n - lim_hi) as usize);
    dev.read_at(&mut head, 0)
        .map_err(|e| Error::io("saving the first sectors (partition table)", e))?;
    dev.read_at(&mut tail, lim_hi)
        .map_err(|e| Error::io("saving the last sectors (backup GPT)", e))?;
    let mut p = Prober {
        dev,
        stamper: Stamper::new(cfg.salt),
        rng: Pcg64::seed_from_u64(cfg.salt),
        sector,
        align,
        n,
        lim_lo,
        lim_hi,
        // A cache larger than the whole announced capacity is not worth pushing out.
        cfg: ProbeConfig {
            max_cache: cfg.max_cache.min(n),
            cache_ceiling: cfg.cache_ceiling.max(cfg.max_cache).min(n),
            ..cfg.clone()
        },
        rec: ProbeRecord {
            announced_bytes: n,
            guard_bytes: guard,
            max_cache: cfg.max_cache.min(n),
            ..Default::default()
        },
        t0,
        progress,
        stop: false,
        written: Vec::new(),
        filler_top: lim_lo,
    };
    let outcome = p.run();
    // Put the guards back whatever happened (aliased writes may have reached them).
    let (head_back, tail_back) = if cfg.restore_guards {
        (
            restore_guard(p.dev, &head, 0)?,
            restore_guard(p.dev, &tail, lim_hi)?,
        )
    } else {
        (0, 0)
    };
    p.rec.guard_restored = head_back + tail_back > 0;
    p.rec.bytes_written += head_back + tail_back;
    outcome?;
    p.rec.elapsed_ns = p.dev.clock_ns().saturating_sub(t0);
    let _ = p.n;
    Ok(p.rec)
}

/// Write back the 4 KiB pieces of a guard region that changed; returns the bytes written.
fn restore_guard<B: Backend + ?Sized>(dev: &mut B, saved: &[u8], at: u64) -> Result<u64> {
    let mut now = AlignedBuf::new(saved.len());
    dev.read_at(&mut now, at)
        .map_err(|e| Error::io(format!("re-reading the guard region at {at}"), e))?;
    let piece = 4096.min(saved.len());
    let mut buf = AlignedBuf::new(piece);
    let mut written = 0;
    for (i, (was, is)) in saved.chunks(piece).zip(now.chunks(piece)).enumerate() {
        if was == is {
            continue;
        }
        let off = at + (i * piece) as u64;
        buf[..was.len()].copy_from_slice(was);
        dev.write_at(&buf[..was.len()], off)
            .map_err(|e| Error::io(format!("restoring the guard region at {off}"), e))?;
        written += was.len() as u64;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sim::{SimConfig, SimDevice};
    use crate::backend::WriteBudget;
    use crate::capacity::analysis::{analyse, FakeKind};

    fn run_spec(spec: &str) -> (ProbeRecord, crate::capacity::analysis::Verdict) {
        let cfg = SimConfig::parse(spec).unwrap();
        let mut dev = WriteBudget::new(SimDevice::new(cfg), None);
        let pc = ProbeConfig {
            salt: 12345,
            ..Default::default()
        };
        let rec = probe(&mut dev, &pc, &mut |_| {}).unwrap();
        assert_eq!(rec.bytes_written, dev.bytes_written);
        let v = analyse(&rec);
        (rec, v)
    }

    #[test]
    fn fake_64g_is_a_wrap_at_8g() {
        let (rec, v) = run_spec("fake-64g");
        assert!(rec.complete);
        assert_eq!(v.kind, FakeKind::Wrap);
        assert_eq!(v.usable_bytes, 8 << 30);
        assert_eq!(v.wrap_modulus, Some(8 << 30));
    }

    #[test]
    fn a_max_cache_below_the_first_step_still_writes_its_filler() {
        // --max-cache 8M: the first filler step (16 MiB) is still written and read back.
        let cfg = SimConfig::parse("custom,size=96M,erase=1M").unwrap();
        let mut dev = WriteBudget::new(SimDevice::new(cfg), None);
        let pc = ProbeConfig {
            salt: 7,
            max_cache: 8 << 20,
            cache_ceiling: 8 << 20,
            ..Default::default()
        };
        let rec = probe(&mut dev, &pc, &mut |_| {}).unwrap();
        assert!(rec.flush_bytes >= 8 << 20, "{}", rec.flush_bytes);
        assert_eq!(analyse(&rec).kind, FakeKind::None);
    }
}
