//! `flashscope auto TARGET`: the one-command answer — identity, geometry, speed, real
//! capacity (with --write) and what to do about it.

use super::{align, Outcome, Output};
use crate::analysis::advice::{advise, Findings};
use crate::report::{Document, Inference, Status};
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
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub time_budget: String,
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
    })?;
    let g = &geometry.doc;
    let size = g.target["size_bytes"].as_u64().unwrap_or(0);
    let findings = Findings {
        size_bytes: size,
        logical_sector_bytes: g.target["logical_sector_bytes"].as_u64().unwrap_or(512) as u32,
        erase_block_bytes: confident_u64(g.inferences.get("erase_block_bytes")),
        page_bytes: confident_u64(g.inferences.get("page_bytes")),
        open_au: None,
        usable_bytes: None,
    };
    let advice = advise(&findings);

    let mut doc = Document::new("auto", g.target.clone());
    doc.parameters = serde_json::json!({ "time_budget": args.time_budget });
    doc.inferences = g.inferences.clone();
    doc.warnings = g.warnings.clone();
    doc.bytes_written = g.bytes_written;
    doc.extra.insert(
        "steps".into(),
        serde_json::json!([{ "command": "align", "elapsed_ns": g.elapsed_ns, "parameters": g.parameters }]),
    );
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
        "{}: {}; erase block {}, page {}\n\n",
        args.target,
        format_bytes(size),
        describe("erase_block_bytes"),
        describe("page_bytes")
    );
    text.push_str("Geometry (align):\n");
    text.push_str(&geometry.text);
    text.push_str("\nWhat to do:\n");
    for a in &advice {
        text.push_str(&format!("- {}: {}\n", a.topic, a.text));
        if let Some(c) = &a.command {
            text.push_str(&format!("    {c}\n"));
        }
    }
    Ok(Outcome { doc, text, code: 0 })
}
