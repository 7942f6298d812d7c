//! `flashscope auto TARGET`: the one-command answer — identity, geometry, speed, real
//! capacity (with --write) and what to do about it.

use super::{align, open_au, probe, Outcome, Output};
use crate::analysis::advice::{advise, Findings};
use crate::error::EXIT_OK;
use crate::report::{Document, Inference, Status};
use crate::target::write::{Budgets, WriteFlags};
use crate::units::format_bytes;
use crate::Result;

/// Arguments of `auto`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  flashscope auto sim:sd-16g\n  flashscope auto /dev/mmcblk0 --json > card.json\n\nRead-only unless --write is given. Runs align to find the geometry, then gives\npartitioning and mkfs advice from what it found."
)]
pub struct Args {
    /// Block device, regular file, or sim:PRESET[,key=value...].
    pub target: String,
    /// Time budget for the geometry search (device time; virtual for sim:).
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = crate::units::duration_arg)]
    pub time_budget: String,
    /// `--write` also runs the write tests (the fake-capacity probe and the open erase
    /// blocks), each through the write-safety policy.
    #[command(flatten)]
    pub flags: WriteFlags,
}

fn confident_u64(inf: Option<&Inference>) -> Option<u64> {
    inf.filter(|i| i.status == Status::Confident)
        .and_then(|i| i.as_u64())
}

pub fn run(args: &Args, out: &Output) -> Result<i32> {
    execute(args)?.emit(out)
}

/// Run the steps and combine their documents.
pub fn execute(args: &Args) -> Result<Outcome> {
    let t0 = crate::backend::monotonic_ns();
    let geometry = align::execute(&align::Args {
        target: args.target.clone(),
        blocksize: Vec::new(),
        time_budget: args.time_budget.clone(),
        count: None,
        positions: 8,
        plot: None,
        realtime: false,
    })?;
    let g = &geometry.doc;
    let size = g.target["size_bytes"].as_u64().unwrap_or(0);
    let erase = confident_u64(g.inferences.get("erase_block_bytes"));
    let mut steps = vec![
        serde_json::json!({ "command": "align", "elapsed_ns": g.elapsed_ns, "parameters": g.parameters }),
    ];
    let mut doc = Document::new("auto", g.target.clone());
    doc.target_info = g.target_info.clone();
    doc.inferences = g.inferences.clone();
    doc.warnings = g.warnings.clone();
    doc.metrics = g.metrics.clone();
    doc.bytes_written = g.bytes_written;
    let mut write_text = String::new();
    let mut code = EXIT_OK;
    let writes = args.flags.allowed();
    if writes {
        let p = probe::execute(&probe::Args {
            target: args.target.clone(),
            flags: args.flags.clone(),
            budgets: Budgets::default(),
            max_cache: "1G".into(),
            partition_ok: false,
        })?;
        if p.quiet {
            return Ok(p);
        }
        code = code.max(p.code);
        doc.inferences.extend(p.doc.inferences.clone());
        doc.warnings.extend(p.doc.warnings.clone());
        doc.checks.extend(p.doc.checks.clone());
        doc.metrics.extend(p.doc.metrics.clone());
        doc.bytes_written += p.doc.bytes_written;
        steps.push(serde_json::json!({ "command": "probe", "elapsed_ns": p.doc.elapsed_ns, "bytes_written": p.doc.bytes_written }));
        if let Some(v) = p.doc.extra.get("verdict") {
            doc.extra.insert("verdict".into(), v.clone());
        }
        write_text.push_str("\nReal capacity (probe):\n");
        write_text.push_str(&p.text);
    }
    if writes {
        match erase {
            Some(e) => {
                let o = open_au::execute(&open_au::Args {
                    target: args.target.clone(),
                    erase_size: Some(e.to_string()),
                    blocksize: "16K".into(),
                    max_au: 32,
                    offset: None,
                    random: false,
                    flags: args.flags.clone(),
                    budgets: Budgets::default(),
                })?;
                if o.quiet {
                    return Ok(o);
                }
                doc.inferences.extend(o.doc.inferences.clone());
                doc.warnings.extend(o.doc.warnings.clone());
                doc.checks.extend(o.doc.checks.clone());
                doc.metrics.extend(o.doc.metrics.clone());
                doc.bytes_written += o.doc.bytes_written;
                steps.push(serde_json::json!({ "command": "open-au", "elapsed_ns": o.doc.elapsed_ns, "parameters": o.doc.parameters, "bytes_written": o.doc.bytes_written }));
                write_text.push_str("\nOpen erase blocks (open-au):\n");
                write_text.push_str(&o.text);
            }
            None => doc.warnings.push(crate::report::Warning::new(
                "skipped",
                "open-au was skipped: it needs the erase block, and align was not confident about it",
            )),
        }
    }
    let findings = Findings {
        size_bytes: size,
        logical_sector_bytes: g.target["logical_sector_bytes"].as_u64().unwrap_or(512) as u32,
        erase_block_bytes: erase,
        page_bytes: confident_u64(g.inferences.get("page_bytes")),
        open_au: confident_u64(doc.inferences.get("open_au")),
        usable_bytes: confident_u64(doc.inferences.get("usable_bytes")),
    };
    let advice = advise(&findings);
    doc.parameters = serde_json::json!({ "time_budget": args.time_budget, "write": args.flags.write, "destructive": args.flags.destructive });
    doc.extra.insert("steps".into(), steps.into());
    doc.extra.insert(
        "advice".into(),
        serde_json::to_value(&advice).unwrap_or_default(),
    );
    doc.elapsed_ns = crate::backend::monotonic_ns().saturating_sub(t0);

    let describe = |key: &str| -> String {
        match g.inferences.get(key) {
            Some(i) if i.value.is_some() => format!(
                "{} ({})",
                i.as_u64().map(format_bytes).unwrap_or_else(|| "?".into()),
                i.status_word()
            ),
            Some(_) => "inconclusive".to_string(),
            None => "not measured".to_string(),
        }
    };
    let mut text = format!(
        "{}: {}; erase block {}, page {}",
        args.target,
        format_bytes(size),
        describe("erase_block_bytes"),
        describe("page_bytes")
    );
    if let Some(v) = doc.extra.get("verdict").and_then(|v| v.as_str()) {
        text = format!("{v}\n{text}");
    }
    if let Some(i) = doc.inferences.get("open_au") {
        text.push_str(&format!(
            ", open erase blocks {}",
            i.value
                .as_ref()
                .map_or("inconclusive".to_string(), |v| format!(
                    "{v} ({})",
                    i.status_word()
                ))
        ));
    }
    text.push_str("\n\nGeometry (align):\n");
    text.push_str(&geometry.text);
    text.push_str(&write_text);
    if !writes {
        text.push_str("\n(read-only run: add --write for the fake-capacity probe and the open-erase-block test; what they overwrite is saved and restored)\n");
    }
    text.push_str("\nWhat to do:\n");
    for a in &advice {
        text.push_str(&format!("- {}: {}\n", a.topic, a.text));
        if let Some(c) = &a.command {
            text.push_str(&format!("    {c}\n"));
        }
    }
    Ok(Outcome::new(doc, text, code))
}
