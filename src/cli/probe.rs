//! `flashscope probe TARGET --destructive`: is the card fake, and how much of it is real?

use super::{Outcome, Output};
use crate::capacity::analysis::{analyse, safe_partition, FakeKind, Verdict};
use crate::capacity::probe::{probe, ProbeConfig};
use crate::capacity::stamp::Stamper;
use crate::report::progress::Progress;
use crate::report::wear_line;
use crate::report::{Document, Warning};
use crate::target::write::{estimate_ns, open_for_write, Budgets, WriteFlags, WriteIntent};
use crate::target::{self, OpenRequest};
use crate::units::{format_bytes, parse_size};
use crate::{Error, Result};

/// Arguments of `probe`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  flashscope probe sim:fake-64g --write
  flashscope probe /dev/sdb --write --json               non-destructive (journal)
  flashscope probe /dev/sdb --destructive --time-budget 2m

Writes 4 KiB stamps and reads them back: a reference read at every power-of-two distance
(the common wrap), a bisection to the sector where data is lost (limbo), and on a card
that holds them a wide span with an alias scan (wraps at other sizes) and up to
--max-cache of filler to push a controller write cache out; a cache that hid lost data is
bracketed (write_cache_bytes). An OK is never confident: a cache larger than the filler
is not ruled out (raise --max-cache). The banner's byte count is never exceeded: the
probe stops, incomplete, first. The first and last MiB (partition tables) are never
written. With --write every overwritten region is saved to a journal first and restored
and verified at the end. Exit 3 when the device is fake or damaged.")]
pub struct Args {
    /// Whole block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    #[command(flatten)]
    pub flags: WriteFlags,
    #[command(flatten)]
    pub budgets: Budgets,
    /// The largest controller write cache to push out before calling a device honest (an
    /// OK says a larger one is not ruled out; up to 4 times this is written behind a cache).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = crate::units::size_arg)]
    pub max_cache: String,
    /// Probe a partition although a fake is only visible on the whole device.
    #[arg(long)]
    pub partition_ok: bool,
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    execute(args)?.emit(out)
}

/// Probe and infer without printing (shared with `auto`).
pub fn execute(args: &Args) -> Result<Outcome> {
    let max_cache = parse_size(&args.max_cache).map_err(|_| {
        Error::usage(format!(
            "--max-cache '{}' is not a size: use e.g. 1G or 256M",
            args.max_cache
        ))
    })?;
    let time_budget_ns = args.budgets.time_budget_ns().map_err(|_| {
        Error::usage(format!(
            "--time-budget '{}' is not a duration: use e.g. 90s or 5m",
            args.budgets.time_budget.as_deref().unwrap_or("")
        ))
    })?;
    let info = target::peek(&args.target)?;
    let size = info.size_bytes;
    let write_budget = args.budgets.write_budget_bytes(size)?;
    // A partition hides a fake: check on a read-only open before anything is written.
    let mut warnings = Vec::new();
    let peeked = target::open(
        &args.target,
        &OpenRequest {
            write: false,
            require_direct: false,
        },
    )?;
    if let Some(w) = super::verify::partition_check(&peeked, &args.target, args.partition_ok)? {
        warnings.push(w);
    }
    drop(peeked);
    // Stamps (a wide span of at most 64 MiB, bisection points of 4 KiB) plus filler: up
    // to --max-cache to push a cache out, and, behind a cache that hid lost data, the
    // same again for each of at most three bisection rounds. The filler always covers
    // the same low region, so a journal saves at most `region` bytes. The probe stops
    // (incomplete) rather than write more than announced.
    let region = (max_cache + (256 << 20)).min(size);
    let max_bytes = max_cache
        .saturating_mul(4)
        .saturating_add(256 << 20)
        .min(size.saturating_mul(4));
    let plan = WriteIntent {
        command: "probe",
        region: (1 << 20, region),
        max_bytes,
        // An honest card is the long case: the cache filler, the wide span and one read
        // for each of about 16k alias-scan places and 40 filler steps.
        typical_bytes: Some(max_cache.min(size) + (64 << 20)),
        estimated_ns: estimate_ns(max_cache.min(size) + (64 << 20), 16384 + 64),
        what: format!(
            "probe writes 4 KiB stamps at a few dozen places (a fake usually ends there, within seconds and a few MiB) and, on a card that holds them, a wide span and up to {} of zeros to push a write cache out (up to 3 times more behind a cache that hid lost data), never touching the first and last MiB",
            format_bytes(max_cache)
        ),
        smaller: "lower --write-budget",
        budget_bytes: write_budget,
        // The probe keeps its own deadline: it must still read and restore its guard
        // regions after it.
        time_budget_ns: None,
    };
    let mut session = open_for_write(&args.target, &args.flags, &plan)?;
    let cfg = ProbeConfig {
        max_cache,
        time_budget_ns,
        salt: Stamper::random_salt(),
        restore_guards: session.journal.is_none(),
        max_bytes: Some(max_bytes),
    };
    let mut bar = Progress::new("probe");
    let result = {
        let mut cb = |p: crate::capacity::probe::Progress| bar.update(p.done, p.total);
        match probe(&mut session.dev, &cfg, &mut cb) {
            Ok(r) => Ok(r),
            Err(Error::Io { source, .. }) => Err(source),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        }
    };
    bar.finish();
    let (rec, ending) = session.end(result)?;
    let Some(rec) = rec else {
        let code = session.interrupted_exit(&ending, ending.interrupted.unwrap_or(libc::SIGINT));
        return Ok(Outcome::stopped("probe", code));
    };
    let verdict = analyse(&rec);
    let mut doc = Document::new("probe", serde_json::Value::Null);
    session.fill(&mut doc, &ending);
    doc.parameters = serde_json::json!({
        "max_cache_bytes": max_cache,
        "time_budget_ns": time_budget_ns,
        "destructive": args.flags.destructive,
        "guard_bytes": rec.guard_bytes,
    });
    // Samples: every span read back and every alias scan, in the order they happened.
    let mut samples: Vec<serde_json::Value> = Vec::new();
    for sp in &rec.spans {
        let mut v = serde_json::to_value(sp).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("type".into(), "span".into());
        }
        samples.push(v);
    }
    for sc in &rec.scans {
        samples.push(serde_json::json!({
            "type": "scan", "from": sc.from, "to": sc.to, "stride": sc.stride,
            "reads": sc.reads, "hits": sc.hits.len(), "elapsed_ns": sc.elapsed_ns,
        }));
    }
    doc.samples = samples.into();
    doc.extra.insert(
        "probe".into(),
        serde_json::json!({
            "alias_hits": rec.alias_hits.iter().take(64).collect::<Vec<_>>(),
            "alias_hit_count": rec.alias_hits.len(),
            "filler_bytes": rec.filler_bytes,
            "flush_bytes": rec.flush_bytes,
            "complete": rec.complete,
        }),
    );
    doc.inferences
        .insert("usable_bytes".into(), verdict.usable.clone());
    doc.inferences
        .insert("fake_kind".into(), verdict.fake_kind.clone());
    if let Some(c) = &verdict.cache {
        doc.inferences.insert("write_cache_bytes".into(), c.clone());
    }
    if verdict.wrap_modulus.is_some() {
        doc.inferences
            .insert("wrap_modulus_bytes".into(), verdict.modulus.clone());
    }
    // The probe's own clock: simulated time on sim: targets.
    doc.elapsed_ns = rec.elapsed_ns;
    if !rec.complete {
        warnings.push(Warning::new(
            "partial",
            "the probe stopped before it finished (time or write budget): the usable size is only what was shown to hold data so far",
        ));
    }
    if let Some(w) = guard_warning(rec.guard_restored, &verdict) {
        warnings.push(w);
    }
    doc.warnings.extend(warnings);
    let line = verdict_line(&verdict);
    let command = partition_command(&verdict, &args.target);
    doc.extra.insert("verdict".into(), line.clone().into());
    if let Some(c) = &command {
        doc.extra
            .insert("partition_command".into(), c.clone().into());
    }
    let mut text = render(&doc, &line, command.as_deref());
    text.push_str(&wear_line(&doc));
    let code = if verdict.failed() { 3 } else { 0 };
    Ok(Outcome::new(doc, text, code))
}

/// The warning when the partition-table regions read back changed at the end: it names
/// the cause the verdict found, never one it did not (aliasing only when addresses aliased).
pub fn guard_warning(restored: bool, v: &Verdict) -> Option<Warning> {
    if !restored {
        return None;
    }
    let message = if v.wrap_modulus.is_some() {
        "aliased writes reached the partition-table regions; their saved content was written back"
            .to_string()
    } else {
        format!(
            "the partition-table regions read back different at the end than at the start, though no address aliased ({}); their saved content was written back",
            match v.kind {
                FakeKind::Limbo => "this card does not keep data beyond its real size, so the last sectors may not hold it",
                _ => "the card changed them by itself",
            }
        )
    };
    Some(Warning::new("guard-restored", message))
}

/// The one-line verdict a person reads first.
pub fn verdict_line(v: &Verdict) -> String {
    let announced = format_bytes(v.announced_bytes);
    let holds = format_bytes(v.usable_bytes);
    let part = safe_partition(v.usable_bytes)
        .map(|(_, size)| {
            format!(
                "usable with a partition of at most {}",
                format_bytes_floor(size * 512)
            )
        })
        .unwrap_or_else(|| "not usable".to_string());
    match v.kind {
        FakeKind::None if !v.complete => format!(
            "INCOMPLETE: announces {announced}; stopped by a budget before a verdict, with data shown to survive below {holds} and no sign of a fake so far"
        ),
        FakeKind::None => format!(
            "OK: announces {announced} and holds all of it, unless a write cache larger than the {} written to push one out hides a fake (--max-cache rules out a larger one)",
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

/// The sfdisk command that makes a fake usable: one partition inside the real part.
fn partition_command(v: &Verdict, target: &str) -> Option<String> {
    if !matches!(v.kind, FakeKind::Wrap | FakeKind::Limbo | FakeKind::Chain) {
        return None;
    }
    let (start, size) = safe_partition(v.usable_bytes)?;
    let dev = if target::is_sim_spec(target) {
        "/dev/sdX"
    } else {
        target
    };
    Some(format!(
        "echo 'start={start}, size={size}, type=c' | sudo sfdisk {dev}"
    ))
}

fn render(doc: &Document, line: &str, command: Option<&str>) -> String {
    let mut s = format!("{line}\n");
    if let Some(c) = command {
        s.push_str(&format!(
            "make it usable (erases its partition table): {c}\n"
        ));
    }
    for (k, inf) in &doc.inferences {
        s.push_str(&format!(
            "  {k}: {} ({}) — {}\n",
            inf.value
                .as_ref()
                .map(|v| match v.as_u64() {
                    Some(n) if k.ends_with("_bytes") => format!("{} ({n} bytes)", format_bytes(n)),
                    _ => v
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string()),
                })
                .unwrap_or_else(|| "?".to_string()),
            inf.status_word(),
            inf.evidence
        ));
    }
    s.push_str(&format!("  took {:.1} s\n", doc.elapsed_ns as f64 / 1e9));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_rounded_down() {
        assert_eq!(format_bytes_floor((8 << 30) - (1 << 20)), "7.99 GiB");
        assert_eq!(format_bytes_floor(8 << 30), "8 GiB");
        assert_eq!(format_bytes_floor(1536), "1.5 KiB");
        assert_eq!(format_bytes_floor(100), "100 B");
    }
}
