//! `flashscope slc TARGET --write`: the write-cache cliff — how much a sustained write
//! gets at cache speed before the native speed, and whether the cache recovers.

use super::Output;
use crate::analysis::slc::{infer_recovery, infer_slc, SlcInterval};
use crate::probe::slc::{self, default_budget, SlcParams, SlcSamples};
use crate::report::table::Table;
use crate::report::wear_line;
use crate::report::Document;
use crate::target;
use crate::target::write::{estimate_ns, open_for_write, Budgets, Ran, WriteFlags, WriteIntent};
use crate::units::{format_bytes, format_rate, parse_duration_ns, parse_size};
use crate::{Error, Result};
use std::path::PathBuf;

/// Arguments of `slc`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
  flashscope slc sim:sd-a2-64g --write\n  \
  flashscope slc /dev/sdb --destructive --write-budget 8G --plot slc.svg\n\n\
The budget defaults to the smaller of 25% of the device and 32 GiB; the test stops earlier\n\
once the speed has dropped and stayed down. In preserve mode the journal must hold the\n\
whole region (budget + the recovery write): use --destructive on a blank device to skip it.")]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Start of the sustained write.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = crate::units::size_arg)]
    pub offset: String,
    /// Idle time before probing whether the cache recovered (0 skips it).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = crate::units::duration_arg)]
    pub recover: String,
    /// Write pseudo-random data instead of zeros (for controllers that compress).
    #[arg(long)]
    pub random_data: bool,
    /// Write an SVG plot of throughput against bytes written to this file.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub flags: WriteFlags,
    #[command(flatten)]
    pub budgets: Budgets,
}

fn params(args: &Args, size: u64, sector: u64) -> Result<SlcParams> {
    let offset = parse_size(&args.offset)?;
    let requested = args.budgets.write_budget_bytes(size)?;
    let budget = requested.unwrap_or_else(|| default_budget(size));
    let mut p = SlcParams::new(size, budget);
    p.offset_bytes = offset;
    p.recover_ns = parse_duration_ns(&args.recover)?;
    if p.recover_ns == 0 {
        p.recovery_bytes = 0;
    }
    p.random_data = args.random_data;
    p.time_budget_ns = args.budgets.time_budget_ns()?;
    if offset % sector != 0 {
        return Err(Error::usage(format!(
            "--offset {offset} is not a multiple of the {sector}-byte sector"
        )));
    }
    let room = size.saturating_sub(offset);
    p.budget_bytes =
        budget.min(room.saturating_sub(p.recovery_bytes)) / p.block_bytes * p.block_bytes;
    if p.budget_bytes < 4 * p.interval_bytes {
        return Err(Error::usage(format!(
            "a write budget of {} from offset {} on a {} device leaves fewer than 4 intervals of {}: raise --write-budget or lower --offset",
            format_bytes(p.budget_bytes),
            format_bytes(offset),
            format_bytes(size),
            format_bytes(p.interval_bytes)
        )));
    }
    Ok(p)
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    let info = target::peek(&args.target)?;
    let sector = info.logical_sector_bytes as u64;
    let p = params(args, info.size_bytes, sector)?;
    let max = p.budget_bytes + p.recovery_bytes;
    let plan = WriteIntent {
        command: "slc",
        region: p.region(),
        max_bytes: max,
        typical_bytes: None,
        estimated_ns: estimate_ns(max, max / p.block_bytes) + p.recover_ns,
        what: format!(
            "slc writes {} sequentially in 1 MiB blocks until the speed drops and stays down, idles {} s, then writes {} more",
            format_bytes(p.budget_bytes),
            p.recover_ns / 1_000_000_000,
            format_bytes(p.recovery_bytes)
        ),
        smaller: "lower --write-budget",
        // The recovery write comes on top of the budget the sustained write may use.
        budget_bytes: Some(max),
        time_budget_ns: p.time_budget_ns,
    };
    let mut session = open_for_write(&args.target, &args.flags, &plan)?;
    let (samples, mut doc) =
        match session.run("slc", |dev, progress| slc::run(dev, &p, progress))? {
            Ran::Done(samples, doc) => (samples, doc),
            Ran::Stopped(code) => return Ok(code),
        };
    doc.parameters = serde_json::to_value(&p).unwrap_or_default();
    doc.samples = serde_json::to_value(&samples.intervals).unwrap_or_default();
    doc.extra.insert(
        "recovery".into(),
        serde_json::to_value(samples.recovery).unwrap_or_default(),
    );
    doc.extra
        .insert("stopped".into(), samples.stopped.clone().into());
    let inf = infer_slc(&samples.intervals, &samples.stopped);
    let recovered = infer_recovery(&inf, samples.recovery.as_ref(), p.recover_ns);
    doc.inferences
        .insert("slc_cache_bytes".into(), inf.slc_cache_bytes);
    doc.inferences
        .insert("cached_bytes_per_s".into(), inf.cached_bytes_per_s);
    doc.inferences
        .insert("native_bytes_per_s".into(), inf.native_bytes_per_s);
    doc.inferences
        .insert("slc_cache_recovered".into(), recovered);
    if let Some(path) = &args.plot {
        std::fs::write(path, plot_svg(&samples))
            .map_err(|e| Error::io(format!("writing the plot {}", path.display()), e))?;
        doc.extra
            .insert("plot".into(), path.display().to_string().into());
    }
    out.emit(&doc, |d| render(d, &samples));
    Ok(0)
}

fn render(doc: &Document, s: &SlcSamples) -> String {
    let mut text = String::new();
    for k in [
        "slc_cache_bytes",
        "cached_bytes_per_s",
        "native_bytes_per_s",
        "slc_cache_recovered",
    ] {
        if let Some(inf) = doc.inferences.get(k) {
            let v = match (&inf.value, k) {
                (Some(v), "slc_cache_bytes") => format_bytes(v.as_u64().unwrap_or(0)),
                (Some(v), k) if k.ends_with("_per_s") => format_rate(v.as_f64().unwrap_or(0.0)),
                (Some(v), _) => v.to_string(),
                (None, _) => "?".into(),
            };
            text.push_str(&format!(
                "{}: {v} ({}) - {}\n",
                k.replace('_', " "),
                inf.status_word(),
                inf.evidence
            ));
        }
    }
    text.push('\n');
    let mut t = Table::new(&["written before", "interval", "throughput"]);
    let step = (s.intervals.len() / 32).max(1);
    for iv in s.intervals.iter().step_by(step) {
        t.row(vec![
            format_bytes(iv.start_bytes),
            format_bytes(iv.bytes),
            format_rate(iv.bytes_per_s()),
        ]);
    }
    if let Some(r) = &s.recovery {
        t.row(vec![
            "after idle".into(),
            format_bytes(r.bytes),
            format_rate(r.bytes_per_s()),
        ]);
    }
    text.push_str(&t.render());
    if step > 1 {
        text.push_str(&format!(
            "(every {step}th of {} intervals shown; all in --json or --plot)\n",
            s.intervals.len()
        ));
    }
    text.push('\n');
    text.push_str(&wear_line(doc));
    text
}

/// An SVG line plot of throughput (MiB/s) against bytes written (GiB), drawn directly.
pub fn plot_svg(s: &SlcSamples) -> String {
    let (w, h, m) = (800.0, 400.0, 60.0);
    let pts: Vec<(f64, f64)> = s
        .intervals
        .iter()
        .map(|i: &SlcInterval| {
            (
                (i.start_bytes + i.bytes) as f64 / (1u64 << 30) as f64,
                i.bytes_per_s() / 1048576.0,
            )
        })
        .filter(|p| p.1.is_finite())
        .collect();
    let xmax = pts.iter().map(|p| p.0).fold(0.0, f64::max).max(1e-9);
    let ymax = pts.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-9) * 1.1;
    let x = |v: f64| m + v / xmax * (w - 2.0 * m);
    let y = |v: f64| h - m - v / ymax * (h - 2.0 * m);
    let line: Vec<String> = pts
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1)))
        .collect();
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">Sustained write throughput (flashscope slc)</text>\n\
<line x1=\"{m}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n\
<line x1=\"{m}\" y1=\"{m}\" x2=\"{m}\" y2=\"{}\" stroke=\"black\"/>\n\
<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">written (GiB), max {xmax:.2}</text>\n\
<text x=\"15\" y=\"{}\" transform=\"rotate(-90 15 {})\" text-anchor=\"middle\">MiB/s, max {:.1}</text>\n",
        w / 2.0,
        h - m,
        w - m,
        h - m,
        h - m,
        w / 2.0,
        h - 20.0,
        h / 2.0,
        h / 2.0,
        ymax / 1.1
    );
    for k in 0..=4 {
        let v = ymax / 1.1 * k as f64 / 4.0;
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{v:.0}</text>\n",
            m - 5.0,
            y(v) + 4.0
        ));
    }
    svg.push_str(&format!(
        "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"{}\"/>\n</svg>\n",
        line.join(" ")
    ));
    svg
}
