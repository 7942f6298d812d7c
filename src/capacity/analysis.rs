//! Pure analysis of a probe record: usable size, fake kind and wrap modulus, each an
//! `Inference` with its evidence. No I/O.

use super::probe::{modulus_of, CacheTiming, ProbeRecord};
use crate::vocab::units::{format_bytes, format_ns};
use crate::vocab::Inference;
use serde::Serialize;

/// What kind of device the probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FakeKind {
    /// Holds what it announces.
    None,
    /// Addresses beyond the real size alias onto lower ones.
    Wrap,
    /// Data written beyond the real size is lost.
    Limbo,
    /// Both: regions that alias alternate with regions that lose data.
    Chain,
    /// Holds its size but returns errors or corrupted data.
    Bad,
}

impl FakeKind {
    pub fn name(self) -> &'static str {
        match self {
            FakeKind::None => "none",
            FakeKind::Wrap => "wrap",
            FakeKind::Limbo => "limbo",
            FakeKind::Chain => "chain",
            FakeKind::Bad => "bad",
        }
    }
}

/// The probe's conclusions.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// The probe ran to the end (not stopped by a budget).
    pub complete: bool,
    pub usable_bytes: u64,
    pub announced_bytes: u64,
    pub kind: FakeKind,
    pub wrap_modulus: Option<u64>,
    /// The most bytes written after a stamp before it was read back: the largest write
    /// cache the verdict sees through.
    pub flush_bytes: u64,
    pub usable: Inference,
    pub fake_kind: Inference,
    pub modulus: Inference,
    /// The write cache that hid lost data until enough was written after it, if one did.
    pub cache: Option<Inference>,
    /// A cache faster than the medium still answered for the stamps when the filler
    /// stopped: an intact read-back proved nothing (the verdict is "not proven").
    pub cache_unresolved: bool,
}

impl Verdict {
    /// The device failed: fake or damaged (exit 3).
    pub fn failed(&self) -> bool {
        self.kind != FakeKind::None
    }

    /// The device looked honest, but a cache the probe saw and could not see past may hide
    /// a fake: neither an OK nor a failure (exit 1, as a check that could not check).
    pub fn not_proven(&self) -> bool {
        self.kind == FakeKind::None && self.cache_unresolved
    }
}

/// What the span's read times said about a cache faster than the medium, for an OK's
/// evidence ("" when the probe took no timing).
fn timing_note(rec: &ProbeRecord) -> String {
    let (Some(first), Some(last)) = (rec.cache_timing.first(), rec.cache_timing.last()) else {
        return String::new();
    };
    let pair = |t: &CacheTiming| {
        format!(
            "{} against the medium's {}",
            format_ns(t.span_ns as f64),
            format_ns(t.medium_ns as f64)
        )
    };
    match rec.fast_cache() {
        None => format!(
            "; right after it was written the span read no faster than the medium ({}), so no faster cache held it",
            pair(first)
        ),
        Some(_) if rec.cache_unresolved => format!(
            "; a faster cache answered for the span right after it was written ({}) and still did after {} of filler ({})",
            pair(first),
            format_bytes(last.written_after),
            pair(last)
        ),
        Some(_) => format!(
            "; a faster cache answered for the span right after it was written ({}), and no longer did after {} of filler ({})",
            pair(first),
            format_bytes(last.written_after),
            pair(last)
        ),
    }
}

/// Conclude from a probe record.
pub fn analyse(rec: &ProbeRecord) -> Verdict {
    let n = rec.announced_bytes;
    let modulus = modulus_of(&rec.alias_hits);
    // A span the device refused to write proves damage, not lost capacity.
    let lost = rec.spans.iter().any(|s| s.lost_units > 0 && !s.io_error);
    let damaged = rec.spans.iter().any(|s| s.io_error || s.changed_units > 0);
    let usable_bytes = if rec.complete { rec.hi } else { rec.lo };
    let shrunk = rec.hi < n.saturating_sub(rec.guard_bytes);
    let kind = match (modulus, lost && shrunk) {
        (Some(_), true) => FakeKind::Chain,
        (Some(_), false) => FakeKind::Wrap,
        (None, true) => FakeKind::Limbo,
        (None, false) if damaged => FakeKind::Bad,
        (None, false) => FakeKind::None,
    };
    // An honest device keeps its announced size; the guards were not written but a fake
    // would have shown itself below them.
    let usable_bytes = if kind == FakeKind::None && rec.complete {
        n
    } else {
        usable_bytes
    };
    let unresolved = kind == FakeKind::None && rec.cache_unresolved;
    let reads: u64 = rec.scans.iter().map(|s| s.reads).sum();
    let cache_note = if modulus.is_some() {
        "aliasing shows in reads of never-written sectors, which no write cache can answer"
            .to_string()
    } else if kind == FakeKind::None {
        // Writing can only push out a cache smaller than what was written: a larger one
        // is never ruled out, so an honest verdict says how far it was measured.
        format!(
            "read back after writing {} more, which pushes out a write cache up to that size{}; a fake behind a larger cache is not ruled out (--max-cache SIZE writes that much to rule it out)",
            format_bytes(rec.flush_bytes),
            timing_note(rec)
        )
    } else if rec.flush_bytes >= rec.max_cache {
        format!(
            "read back after writing {} more (defeats a write cache up to that size)",
            format_bytes(rec.flush_bytes)
        )
    } else {
        // A fake is shown already, found by where stamps stop reading back: the size is
        // exact on the assumption the sentence states, which --max-cache can widen.
        format!(
            "read back after {} more writes, which pushes out a write cache up to that size; the size assumes no larger cache held data the card lost (--max-cache SIZE writes that much to rule one out)",
            format_bytes(rec.flush_bytes)
        )
    };
    let spans_good = rec.spans.iter().filter(|s| s.all_good()).count();
    let confidence = match (rec.complete, kind) {
        (false, _) => 0.6,
        // Never confident: a cache larger than the filler could hide a fake.
        (true, FakeKind::None) => 0.7,
        _ => 0.97,
    };
    let usable = if unresolved {
        Inference::inconclusive(format!(
            "not proven: the stamps may have been read back from a cache that still held them after {} of filler (a larger --max-cache follows it further)",
            format_bytes(rec.flush_bytes)
        ))
    } else {
        Inference::new(
        usable_bytes,
        confidence,
        match kind {
            FakeKind::None => format!(
                "{} stamped spans read back intact and {reads} alias-scan reads found no stamp at a foreign offset; {cache_note}",
                spans_good
            ),
            _ => format!(
                "data written below {} survived ({} of {} spans intact); at and beyond it data was {}; {cache_note}",
                format_bytes(usable_bytes),
                spans_good,
                rec.spans.len(),
                match modulus {
                    Some(m) => format!("aliased every {}", format_bytes(m)),
                    None if lost => "lost".to_string(),
                    None => "damaged (I/O errors or bit flips)".to_string(),
                }
            ),
        },
    )
    };
    let fake_kind = if unresolved {
        Inference::inconclusive(format!(
            "not proven: every stamp read back intact, but a write cache faster than the medium still answered for them after {} of filler{}",
            format_bytes(rec.flush_bytes),
            timing_note(rec)
        ))
    } else if !rec.complete && kind == FakeKind::None {
        Inference::inconclusive(format!(
            "the probe stopped (time or write budget) before it could tell; data was shown to survive below {}",
            format_bytes(usable_bytes)
        ))
    } else {
        Inference::new(
        kind.name(),
        confidence,
        match kind {
            FakeKind::None => format!(
                "no span lost data and no read returned another offset's stamp, after {} written to push out a write cache{}; a larger cache could still hide a fake (--max-cache)",
                format_bytes(rec.flush_bytes),
                timing_note(rec)
            ),
            FakeKind::Wrap => format!(
                "{} reads returned stamps written elsewhere, all at distances that are multiples of {}",
                rec.alias_hits.len(),
                format_bytes(modulus.unwrap_or(0))
            ),
            FakeKind::Limbo => "data written beyond the boundary read back blank or stale; no address aliased".to_string(),
            FakeKind::Chain => "some addresses beyond the boundary alias onto lower ones and others lose their data".to_string(),
            FakeKind::Bad => "the announced size holds, but spans returned I/O errors or flipped bits".to_string(),
        },
    )
    };
    let modulus_inf = match modulus {
        Some(m) => Inference::new(
            m,
            if rec.alias_hits.len() >= 2 { 0.97 } else { 0.8 },
            format!(
                "gcd of the distances between {} pairs of offsets that returned the same stamp",
                rec.alias_hits.len()
            ),
        ),
        None => Inference::inconclusive("no address aliased another: there is no wrap-around"),
    };
    Verdict {
        complete: rec.complete,
        usable_bytes,
        announced_bytes: n,
        kind,
        wrap_modulus: modulus,
        flush_bytes: rec.flush_bytes,
        cache: rec.cache_bytes.map(|(held, lost)| {
            Inference::new(
                lost,
                0.8,
                format!(
                    "stamped data read back intact after {} more was written and was lost after {}: a volatile write cache of more than {} and at most {} hid the loss",
                    format_bytes(held),
                    format_bytes(lost),
                    format_bytes(held),
                    format_bytes(lost)
                ),
            )
        }),
        usable,
        fake_kind,
        modulus: modulus_inf,
        cache_unresolved: unresolved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::probe::{AliasHit, SpanSample};

    fn rec(hi: u64, complete: bool) -> ProbeRecord {
        ProbeRecord {
            announced_bytes: 64 << 30,
            guard_bytes: 1 << 20,
            max_cache: 1 << 30,
            flush_bytes: 1 << 30,
            hi,
            lo: hi,
            complete,
            ..Default::default()
        }
    }

    fn span(offset: u64, lost: u64) -> SpanSample {
        SpanSample {
            offset,
            length: 65536,
            good_bytes: 65536 - lost * 512,
            lost_units: lost,
            ..Default::default()
        }
    }

    #[test]
    fn alias_hits_give_a_wrap_and_its_modulus() {
        let mut r = rec(8 << 30, true);
        r.spans.push(span((8 << 30) - 65536, 0));
        r.alias_hits = vec![
            AliasHit {
                read_at: 4 << 20,
                written_at: (16 << 30) + (4 << 20),
            },
            AliasHit {
                read_at: (8 << 30) + (4 << 20),
                written_at: (16 << 30) + (4 << 20),
            },
        ];
        let v = analyse(&r);
        assert_eq!(v.kind, FakeKind::Wrap);
        assert_eq!(v.wrap_modulus, Some(8 << 30));
        assert_eq!(v.usable_bytes, 8 << 30);
        assert!(v.failed());
        assert_eq!(v.fake_kind.value, Some("wrap".into()));
    }

    #[test]
    fn lost_spans_without_aliases_are_limbo_and_both_are_chain() {
        let mut r = rec(3 << 30, true);
        r.spans.push(span(5 << 30, 128));
        assert_eq!(analyse(&r).kind, FakeKind::Limbo);
        r.alias_hits.push(AliasHit {
            read_at: 1 << 20,
            written_at: (3 << 30) + (1 << 20),
        });
        let v = analyse(&r);
        assert_eq!(v.kind, FakeKind::Chain);
        assert_eq!(v.modulus.status_word(), "tentative", "one hit only");
    }

    /// A fake's usable size never stands beside a sentence that says it may be wrong:
    /// short of --max-cache its evidence states the assumption it rests on.
    #[test]
    fn a_fakes_usable_size_states_its_cache_assumption_never_doubts_itself() {
        for flush in [64 << 20, (1 << 30) - 1, 1 << 30, 2 << 30] {
            let mut r = rec(3 << 30, true);
            r.flush_bytes = flush;
            r.spans.push(span(5 << 30, 128));
            let v = analyse(&r);
            assert_eq!(v.kind, FakeKind::Limbo);
            // Confident sizes state their assumption; none says it could be wrong.
            let e = &v.usable.evidence;
            assert!(!e.contains("could still") && !e.contains("may be"), "{e}");
            assert_eq!(
                e.contains("assumes no larger cache"),
                flush < r.max_cache,
                "{e}"
            );
            assert_eq!(v.usable.status, crate::vocab::Status::Confident, "{e}");
        }
    }

    #[test]
    fn an_intact_device_is_honest_but_never_confidently_past_the_filler() {
        let mut r = rec((64 << 30) - (1 << 20), true);
        r.spans.push(span(1 << 30, 0));
        let v = analyse(&r);
        assert_eq!(v.kind, FakeKind::None);
        assert_eq!(v.usable_bytes, 64 << 30);
        assert!(!v.failed());
        // Writing 1 GiB rules out only caches up to 1 GiB: never a confident OK.
        assert_eq!(v.usable.status_word(), "tentative");
        assert_eq!(v.fake_kind.status_word(), "tentative");
        assert!(
            v.usable.evidence.contains("--max-cache"),
            "{}",
            v.usable.evidence
        );
        r.flush_bytes = 16 << 20;
        assert_eq!(analyse(&r).usable.status_word(), "tentative");
    }

    #[test]
    fn flipped_bits_on_a_full_size_device_are_bad() {
        let mut r = rec((64 << 30) - (1 << 20), true);
        let mut s = span(1 << 30, 0);
        s.changed_units = 3;
        s.good_bytes -= 3 * 512;
        r.spans.push(s);
        assert_eq!(analyse(&r).kind, FakeKind::Bad);
    }

    #[test]
    fn an_interrupted_probe_reports_only_what_it_proved() {
        let mut r = rec(10 << 30, false);
        r.lo = 2 << 30;
        r.spans.push(span(12 << 30, 128));
        let v = analyse(&r);
        assert_eq!(v.usable_bytes, 2 << 30);
        assert_eq!(v.usable.status_word(), "tentative");
        // Stopped before any evidence: the kind is not claimed.
        let mut quiet = rec(10 << 30, false);
        quiet.lo = 3 << 30;
        let v = analyse(&quiet);
        assert_eq!(v.kind, FakeKind::None);
        assert_eq!(v.fake_kind.status_word(), "inconclusive");
        assert_eq!(v.usable_bytes, 3 << 30);
    }
}
