//! `flashscope open-au TARGET --write`: how many erase blocks the card can write to at
//! once (flashbench's open-AU test, automatic).

use super::{Outcome, Output};
use crate::analysis::openau::infer_open_au;
use crate::probe::open_au::{self, OpenAuParams, OpenAuSamples};
use crate::probe::write_common::{align_up, check_geometry};
use crate::report::progress::Progress;
use crate::report::table::Table;
use crate::report::wear_line;
use crate::report::Document;
use crate::target;
use crate::target::write::{
    estimate_ns, open_for_write, stopped_early, Budgets, Ran, WriteFlags, WriteIntent,
};
use crate::units::{format_bytes, format_rate, parse_size};
use crate::{Error, Result};

/// Arguments of `open-au`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope open-au sim:sd-16g --erase-size 4M --write\n  \
  flashscope open-au /dev/mmcblk0 --erase-size 4M --write --random --json\n\n\
Counts 1, 2, 3 ... 8, then doubling up to --max-au, stopping at the first collapse and\n\
bisecting to the exact cut-off; the block-size table is measured around the cut-off.\n\
Preserve mode (the default with --write) saves every written region to a journal first.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Erase block (allocation unit) size, e.g. 4M [default: measured by `align` first,
    /// read-only; it must be confident].
    #[arg(long, value_name = "SIZE", value_parser = crate::units::size_arg)]
    pub erase_size: Option<String>,
    /// Smallest block size written (the size whose collapse decides).
    #[arg(long, value_name = "SIZE", default_value = "16K", value_parser = crate::units::size_arg)]
    pub blocksize: String,
    /// Most erase blocks written concurrently.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_au: u32,
    /// Where the first erase block starts [default: past 16 MiB and past 4 erase blocks,
    /// so the FAT area stays out; a FAT area reaching further adds to the count].
    #[arg(long, value_name = "SIZE", value_parser = crate::units::size_arg)]
    pub offset: Option<String>,
    /// Also measure random order inside each erase block (`inferences.open_au_random`).
    #[arg(long)]
    pub random: bool,
    #[command(flatten)]
    pub flags: WriteFlags,
    #[command(flatten)]
    pub budgets: Budgets,
}

/// The erase size: `--erase-size`, or measured by `align` (read-only) when omitted, which
/// must then be confident. Returns the size and where it came from (stated in the output).
/// Without `--write` nothing is measured: the refusal explains the plan.
pub fn erase_size_arg(
    arg: &Option<String>,
    target: &str,
    flags: &WriteFlags,
    what: &str,
) -> Result<(u64, String)> {
    if let Some(s) = arg {
        return Ok((parse_size(s)?, "--erase-size".to_string()));
    }
    crate::target::write::check_allowed(
        target,
        flags,
        &format!("{what}; the erase block size is first measured with `align` (read-only) since --erase-size was not given"),
    )?;
    eprintln!("no --erase-size: measuring the erase block size with align (read-only)...");
    let (size, inf) = align_erase_size(target)?;
    match size {
        Some(e) if inf.status == crate::report::Status::Confident => Ok((
            e,
            format!("align ({}, {})", inf.status_word(), inf.evidence),
        )),
        _ => Err(Error::usage(format!(
            "align could not settle the erase block size of {target} ({}: {}); give --erase-size",
            inf.status_word(),
            inf.evidence
        ))),
    }
}

/// Run the align probe with its defaults and return the erase-block inference.
fn align_erase_size(target: &str) -> Result<(Option<u64>, crate::report::Inference)> {
    use crate::probe::align as probe;
    let req = crate::target::OpenRequest {
        write: false,
        require_direct: false,
    };
    let mut opened = crate::target::open(target, &req)?;
    let dev = &mut opened.backend;
    let size = dev.size_bytes();
    let sizes = super::align::block_sizes(&[], dev.logical_sector_bytes())?;
    probe::validate(size, dev.logical_sector_bytes(), &sizes)?;
    let max_reads: u64 = sizes
        .iter()
        .map(|&b| probe::flashbench_align_reads(size, b))
        .sum();
    let config = probe::AlignConfig {
        block_sizes: sizes,
        positions: 8,
        count: None,
        time_budget_ns: 60_000_000_000,
        max_reads,
    };
    let mut progress = Progress::new("align");
    let run = probe::run(
        dev.as_mut(),
        &config,
        &mut |cells, reads| super::align::decide(cells, reads, max_reads),
        &mut progress.callback(),
    )?;
    progress.finish();
    let inf = crate::analysis::align::infer(&probe::points(&run.cells));
    Ok((inf.erase_block_bytes.as_u64(), inf.erase_block_bytes))
}

/// Parameters checked against the device.
fn params(args: &Args, size: u64, sector: u64, erase: u64) -> Result<OpenAuParams> {
    let block = parse_size(&args.blocksize)?;
    check_geometry(erase, block, size, sector)?;
    if args.max_au == 0 {
        return Err(Error::usage("--max-au must be at least 1"));
    }
    let mut p = OpenAuParams::new(erase);
    p.block_bytes = block;
    p.max_au = args.max_au;
    p.random = args.random;
    p.time_budget_ns = args.budgets.time_budget_ns()?;
    p.offset_bytes = match &args.offset {
        Some(o) => {
            let o = parse_size(o)?;
            if o % erase != 0 {
                return Err(Error::usage(format!(
                    "--offset {o} is not a multiple of the erase size {erase}: use e.g. {}",
                    align_up(o, erase)
                )));
            }
            o
        }
        None => open_au::default_offset(erase),
    };
    let need = p.offset_bytes + p.max_au as u64 * erase;
    if need > size {
        let fit = size.saturating_sub(p.offset_bytes) / erase;
        if fit == 0 {
            return Err(Error::usage(format!(
                "--offset {}: no erase block of {} fits between it and the end of the device ({}); give a smaller --offset, e.g. {}",
                args.offset.as_deref().unwrap_or_default(),
                format_bytes(erase),
                format_bytes(size),
                crate::units::short_size(open_au::default_offset(erase))
            )));
        }
        return Err(Error::usage(format!(
            "--max-au {}: {} erase blocks of {} from offset {} need {} but the device has {}; use --max-au {fit} or less",
            p.max_au,
            p.max_au,
            format_bytes(erase),
            format_bytes(p.offset_bytes),
            format_bytes(need),
            format_bytes(size)
        )));
    }
    Ok(p)
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    execute(args)?.emit(out)
}

/// Measure and infer without printing (shared with `auto`).
pub fn execute(args: &Args) -> Result<Outcome> {
    let info = target::peek(&args.target)?;
    let sector = info.logical_sector_bytes as u64;
    let (erase, source) = erase_size_arg(
        &args.erase_size,
        &args.target,
        &args.flags,
        &format!(
            "open-au writes {} blocks into up to {} erase blocks",
            args.blocksize, args.max_au
        ),
    )?;
    let p = params(args, info.size_bytes, sector, erase)?;
    let max = p.max_bytes(sector);
    let typical = p.typical_bytes(sector, 4);
    let plan = WriteIntent {
        command: "open-au",
        region: p.region(),
        max_bytes: max,
        typical_bytes: Some(typical),
        estimated_ns: estimate_ns(typical, typical / p.detect_bytes(sector).max(1)),
        what: format!(
            "open-au writes {} blocks into up to {} erase blocks of {}{}",
            format_bytes(p.detect_bytes(sector)),
            p.max_au,
            format_bytes(p.erase_bytes),
            if p.random {
                ", in order and in random order"
            } else {
                ""
            }
        ),
        smaller: "lower --write-budget",
        budget_bytes: args.budgets.write_budget_bytes(info.size_bytes)?,
        time_budget_ns: p.time_budget_ns,
    };
    let mut session = open_for_write(&args.target, &args.flags, &plan)?;
    let (samples, mut doc) =
        match session.run("open-au", |dev, progress| open_au::run(dev, &p, progress))? {
            Ran::Done(samples, doc) => (samples, doc),
            Ran::Stopped(code) => return Ok(Outcome::stopped("open-au", code)),
        };
    doc.parameters = serde_json::to_value(&p).unwrap_or_default();
    doc.parameters["erase_size_source"] = source.clone().into();
    doc.samples = serde_json::to_value(&samples.samples).unwrap_or_default();
    let mut open = infer_open_au(&samples.points(false), None);
    let odd = samples.fast_blocks_in_collapse();
    if !odd.is_empty() {
        let msg = format!(
            "{} of the tested erase blocks (number {:?} from the offset {}) stayed fast when the others collapsed: they keep no open block (a FAT area reaching into the range?), so the count may be too high by {}; rerun with a larger --offset",
            odd.len(),
            odd,
            p.offset_bytes,
            odd.len()
        );
        if let Some(v) = open.value.clone() {
            open = crate::report::Inference::new(
                v,
                open.confidence.min(0.6),
                format!("{}; but {msg}", open.evidence),
            );
        }
        doc.warnings
            .push(crate::report::Warning::new("uneven-erase-blocks", msg));
    }
    doc.inferences.insert("open_au".into(), open);
    if p.random {
        doc.inferences.insert(
            "open_au_random".into(),
            infer_open_au(&samples.points(true), samples.linear_reference()),
        );
    }
    if let Some(why) = &samples.stopped {
        doc.warnings.push(stopped_early(why));
    }
    let text = format!(
        "erase block {} (from {source})\n{}",
        format_bytes(p.erase_bytes),
        render(&doc, &samples)
    );
    Ok(Outcome::new(doc, text, 0))
}

fn render(doc: &Document, s: &OpenAuSamples) -> String {
    let mut text = String::new();
    for (key, label) in [("open_au", "in order"), ("open_au_random", "random order")] {
        if let Some(inf) = doc.inferences.get(key) {
            let v = inf
                .value
                .as_ref()
                .map(|v| v.to_string())
                .unwrap_or_else(|| "?".into());
            text.push_str(&format!(
                "open erase blocks ({label}): {v} ({}) - {}\n",
                inf.status_word(),
                inf.evidence
            ));
        }
    }
    text.push('\n');
    for random in [false, true] {
        let ladder: Vec<_> = s
            .samples
            .iter()
            .filter(|x| x.phase == "ladder" && x.random == random)
            .collect();
        let det: Vec<_> = s
            .samples
            .iter()
            .filter(|x| x.phase == "detect" && x.random == random)
            .collect();
        if det.is_empty() {
            continue;
        }
        let order = if random { "random" } else { "linear" };
        let mut t = Table::new(&["open erase blocks", "small-block write", "mean", "order"]);
        for x in &det {
            t.row(vec![
                x.open_aus.to_string(),
                format_rate(x.bytes_per_s),
                format_rate(x.mean_bytes_per_s),
                order.into(),
            ]);
        }
        text.push_str(&t.render());
        let mut counts: Vec<u32> = ladder.iter().map(|x| x.open_aus).collect();
        counts.sort_unstable();
        counts.dedup();
        if !counts.is_empty() {
            let mut header = vec!["block size".to_string()];
            header.extend(counts.iter().map(|c| format!("{c} open ({order})")));
            let refs: Vec<&str> = header.iter().map(String::as_str).collect();
            let mut t = Table::new(&refs);
            let mut sizes: Vec<u64> = ladder.iter().map(|x| x.block_bytes).collect();
            sizes.sort_unstable_by(|a, b| b.cmp(a));
            sizes.dedup();
            for bs in sizes {
                let mut row = vec![format_bytes(bs)];
                for c in &counts {
                    let r = ladder
                        .iter()
                        .find(|x| x.block_bytes == bs && x.open_aus == *c)
                        .map(|x| format_rate(x.mean_bytes_per_s))
                        .unwrap_or_default();
                    row.push(r);
                }
                t.row(row);
            }
            text.push('\n');
            text.push_str(&t.render());
        }
        text.push('\n');
    }
    text.push_str(&wear_line(doc));
    text
}
