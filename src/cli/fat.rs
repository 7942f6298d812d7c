//! `flashscope fat TARGET --write`: which of the first erase blocks behave differently
//! (the FAT area; flashbench's find-fat). The partition table lives there, so preserve
//! mode is mandatory unless `--destructive`.

use super::open_au::erase_size_arg;
use super::Output;
use crate::analysis::fat::infer_fat;
use crate::probe::fat::{self, FatParams, FatSamples};
use crate::probe::write_common::check_geometry;
use crate::report::table::Table;
use crate::report::wear_line;
use crate::report::Document;
use crate::target;
use crate::target::write::{
    estimate_ns, open_for_write, stopped_early, Budgets, Ran, WriteFlags, WriteIntent,
};
use crate::units::{format_bytes, format_rate, parse_size};
use crate::{Error, Result};

/// Arguments of `fat`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope fat sim:sd-16g --erase-size 4M --write\n  \
  flashscope fat /dev/mmcblk0 --erase-size 4M --nr 8 --write --json\n\n\
The first erase blocks hold the partition table and boot data: with --write every region\n\
is saved to the journal first and restored and verified afterwards.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Erase block (allocation unit) size, e.g. 4M [default: measured by `align` first,
    /// read-only; it must be confident].
    #[arg(long, value_name = "SIZE", value_parser = crate::units::size_arg)]
    pub erase_size: Option<String>,
    /// Smallest block size written (below the page size page-mapped areas show).
    #[arg(long, value_name = "SIZE", default_value = "512", value_parser = crate::units::size_arg)]
    pub blocksize: String,
    /// Erase blocks measured from the start of the device.
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub nr: u32,
    #[command(flatten)]
    pub flags: WriteFlags,
    #[command(flatten)]
    pub budgets: Budgets,
}

fn params(args: &Args, size: u64, sector: u64, erase: u64) -> Result<FatParams> {
    let block = parse_size(&args.blocksize)?;
    check_geometry(erase, block, size, sector)?;
    if args.nr < 3 {
        return Err(Error::usage(format!(
            "--nr {} is too few: at least 3 erase blocks are needed to tell which differ",
            args.nr
        )));
    }
    if args.nr as u64 * erase > size {
        return Err(Error::usage(format!(
            "--nr {}: {} erase blocks of {} do not fit in the device ({}); use --nr {} or less",
            args.nr,
            args.nr,
            format_bytes(erase),
            format_bytes(size),
            size / erase
        )));
    }
    let mut p = FatParams::new(erase);
    p.block_bytes = block;
    p.nr = args.nr;
    p.time_budget_ns = args.budgets.time_budget_ns()?;
    Ok(p)
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    let info = target::peek(&args.target)?;
    let sector = info.logical_sector_bytes as u64;
    let (erase, source) = erase_size_arg(
        &args.erase_size,
        &args.target,
        &args.flags,
        &format!(
            "fat writes the first {} erase blocks (the partition table lives there)",
            args.nr
        ),
    )?;
    let p = params(args, info.size_bytes, sector, erase)?;
    let bytes = p.bytes(sector);
    let ops: u64 = crate::probe::write_common::ladder(p.erase_bytes, p.block_bytes, sector)
        .iter()
        .map(|&bs| p.rounds(bs))
        .sum::<u64>()
        * p.nr as u64;
    let plan = WriteIntent {
        command: "fat",
        region: p.region(),
        max_bytes: bytes,
        typical_bytes: None,
        estimated_ns: estimate_ns(bytes, ops),
        what: format!(
            "fat writes the first {} erase blocks of {} (the partition table lives there) at block sizes down to {}",
            p.nr,
            format_bytes(p.erase_bytes),
            format_bytes(p.block_bytes)
        ),
        smaller: "lower --write-budget",
        budget_bytes: args.budgets.write_budget_bytes(info.size_bytes)?,
        time_budget_ns: p.time_budget_ns,
    };
    let mut session = open_for_write(&args.target, &args.flags, &plan)?;
    let (samples, mut doc) =
        match session.run("fat", |dev, progress| fat::run(dev, &p, progress))? {
            Ran::Done(samples, doc) => (samples, doc),
            Ran::Stopped(code) => return Ok(code),
        };
    doc.parameters = serde_json::to_value(&p).unwrap_or_default();
    doc.parameters["erase_size_source"] = source.clone().into();
    doc.samples = serde_json::to_value(&samples.samples).unwrap_or_default();
    doc.inferences
        .insert("fat_area_erase_blocks".into(), infer_fat(&samples.points()));
    if let Some(why) = &samples.stopped {
        doc.warnings.push(stopped_early(why));
    }
    out.emit(&doc, |d| {
        format!(
            "erase block {} (from {source})\n{}",
            format_bytes(p.erase_bytes),
            render(d, &samples, p.nr)
        )
    });
    Ok(0)
}

fn render(doc: &Document, s: &FatSamples, nr: u32) -> String {
    let mut text = String::new();
    if let Some(inf) = doc.inferences.get("fat_area_erase_blocks") {
        let v = inf
            .value
            .as_ref()
            .map(|v| v.to_string())
            .unwrap_or_else(|| "?".into());
        text.push_str(&format!(
            "erase blocks that behave differently (FAT area): {v} ({}) - {}\n\n",
            inf.status_word(),
            inf.evidence
        ));
    }
    let mut header = vec!["block size".to_string()];
    header.extend((0..nr).map(|i| format!("block {i}")));
    let refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&refs);
    let mut sizes: Vec<u64> = s.samples.iter().map(|x| x.block_bytes).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    for bs in sizes {
        let mut row = vec![format_bytes(bs)];
        for i in 0..nr {
            row.push(
                s.samples
                    .iter()
                    .find(|x| x.block_bytes == bs && x.erase_block == i)
                    .map(|x| format_rate(x.bytes_per_s))
                    .unwrap_or_default(),
            );
        }
        t.row(row);
    }
    text.push_str(&t.render());
    text.push('\n');
    text.push_str(&wear_line(doc));
    text
}
