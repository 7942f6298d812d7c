//! `flashscope program TARGET --write`: the flashbench program matrix — per block size,
//! linear and random writes of zeros, ones and 0x5a, and reads.

use super::Output;
use crate::analysis::program::{infer_program, COLUMNS};
use crate::probe::program::{self, ProgramParams, ProgramSamples};
use crate::report::table::Table;
use crate::report::wear_line;
use crate::report::Document;
use crate::target;
use crate::target::write::{
    estimate_ns, open_for_write, stopped_early, Budgets, Ran, WriteFlags, WriteIntent,
};
use crate::units::{format_bytes, format_rate, parse_size};
use crate::{Error, Result};

/// Arguments of `program`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope program sim:sd-16g --write\n  \
  flashscope program /dev/mmcblk0 --offset 64M --write --json")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Start of the region written.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = crate::units::size_arg)]
    pub offset: String,
    /// Size of the region written (an erase block or more).
    #[arg(long, value_name = "SIZE", default_value = "4M", value_parser = crate::units::size_arg)]
    pub size: String,
    /// Largest block size.
    #[arg(long, value_name = "SIZE", default_value = "2M", value_parser = crate::units::size_arg)]
    pub max_blocksize: String,
    /// Smallest block size.
    #[arg(long, value_name = "SIZE", default_value = "512", value_parser = crate::units::size_arg)]
    pub blocksize: String,
    #[command(flatten)]
    pub flags: WriteFlags,
    #[command(flatten)]
    pub budgets: Budgets,
}

fn params(args: &Args, size: u64, sector: u64) -> Result<ProgramParams> {
    let mut p = ProgramParams::new();
    p.offset_bytes = parse_size(&args.offset)?;
    p.region_bytes = parse_size(&args.size)?;
    p.largest_bytes = parse_size(&args.max_blocksize)?;
    p.smallest_bytes = parse_size(&args.blocksize)?;
    p.time_budget_ns = args.budgets.time_budget_ns()?;
    for (option, text, v) in [
        ("--blocksize", &args.blocksize, p.smallest_bytes),
        ("--max-blocksize", &args.max_blocksize, p.largest_bytes),
    ] {
        if v < sector || v % sector != 0 {
            return Err(Error::usage(format!(
                "{option} {text}: block sizes must be whole {sector}-byte sectors, e.g. {sector} or 4K"
            )));
        }
    }
    if p.smallest_bytes > p.largest_bytes {
        return Err(Error::usage(format!(
            "--blocksize {} is above --max-blocksize {}: give the smaller one to --blocksize",
            args.blocksize, args.max_blocksize
        )));
    }
    if p.offset_bytes % sector != 0 || p.region_bytes % sector != 0 || p.region_bytes == 0 {
        return Err(Error::usage(format!(
            "--offset {} and --size {} must be multiples of the {sector}-byte sector (size above 0)",
            p.offset_bytes, p.region_bytes
        )));
    }
    if p.offset_bytes + p.region_bytes > size {
        return Err(Error::usage(format!(
            "--offset {} + --size {} reach beyond the end of the device ({})",
            format_bytes(p.offset_bytes),
            format_bytes(p.region_bytes),
            format_bytes(size)
        )));
    }
    if p.sizes(sector).is_empty() {
        return Err(Error::usage(format!(
            "no block size between --blocksize {} and --max-blocksize {} fits the {}-byte sectors and the region",
            p.smallest_bytes, p.largest_bytes, sector
        )));
    }
    Ok(p)
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    let info = target::peek(&args.target)?;
    let sector = info.logical_sector_bytes as u64;
    let p = params(args, info.size_bytes, sector)?;
    let bytes = p.bytes(sector);
    let ops: u64 = p.sizes(sector).iter().map(|&bs| 8 * p.ops(bs)).sum();
    let plan = WriteIntent {
        command: "program",
        region: (p.offset_bytes, p.region_bytes),
        max_bytes: bytes,
        typical_bytes: None,
        estimated_ns: estimate_ns(bytes, ops),
        what: format!(
            "program writes zeros, ones and 0x5a in order and at random at block sizes from {} to {}",
            format_bytes(p.sizes(sector).first().copied().unwrap_or(0)),
            format_bytes(p.sizes(sector).last().copied().unwrap_or(0))
        ),
        smaller: "lower --write-budget",
        budget_bytes: args.budgets.write_budget_bytes(info.size_bytes)?,
        time_budget_ns: p.time_budget_ns,
    };
    let mut session = open_for_write(&args.target, &args.flags, &plan)?;
    let (samples, mut doc) =
        match session.run("program", |dev, progress| program::run(dev, &p, progress))? {
            Ran::Done(samples, doc) => (samples, doc),
            Ran::Stopped(code) => return Ok(code),
        };
    doc.parameters = serde_json::to_value(&p).unwrap_or_default();
    doc.parameters["columns"] = serde_json::json!(COLUMNS);
    doc.samples = serde_json::to_value(&samples.samples).unwrap_or_default();
    doc.inferences.extend(infer_program(&samples.rows()));
    if let Some(why) = &samples.stopped {
        doc.warnings.push(stopped_early(why));
    }
    out.emit(&doc, |d| render(d, &samples));
    Ok(0)
}

fn render(doc: &Document, s: &ProgramSamples) -> String {
    let mut text = String::new();
    for (k, inf) in &doc.inferences {
        let v = inf
            .value
            .as_ref()
            .map(|v| v.to_string())
            .unwrap_or_else(|| "?".into());
        text.push_str(&format!(
            "{}: {v} ({}) - {}\n",
            k.replace('_', " "),
            inf.status_word(),
            inf.evidence
        ));
    }
    text.push('\n');
    let mut t = Table::new(&[
        "block size",
        "write 00",
        "write ff",
        "write 5a",
        "read",
        "rnd write 00",
        "rnd write ff",
        "rnd write 5a",
        "rnd read",
    ]);
    for x in &s.samples {
        let mut row = vec![format_bytes(x.block_bytes)];
        row.extend(x.bytes_per_s.iter().map(|&r| format_rate(r)));
        t.row(row);
    }
    text.push_str(&t.render());
    text.push('\n');
    text.push_str(&wear_line(doc));
    text
}
