//! `flashscope model`: theoretical sequential speed from datasheet figures, each term
//! printed; `--reference` prints the vendor's measured table beside it.

use super::Output;
use crate::commands::model::{self, ModelParams, ReferenceFilter};
use crate::model::reference::EmpiricalRow;
use crate::model::{as_whole_ns, DatasheetText, Estimate, FlashKind, Term};
use crate::report::results::ModelParameters;
use crate::report::table::{Align, Table};
use crate::report::{Body, Document};
use crate::vocab::error::Verdict;
use crate::vocab::units::{format_bytes, format_ns, format_rate};
use crate::Result;

const HELP: &str = "\
Examples:
  flashscope model --kind spi-nor --erase-time 0.15s --erase-size 64K --program-time 0.25ms \\
                   --page 256 --bus-clock 100MHz --bus-lines 4 --size 32M
  flashscope model --kind spi-nand --erase-time 3ms --erase-size 128K --program-time 0.4ms \\
                   --page 2K --bus-clock 100MHz --bus-lines 4 --cmd-bytes 5
  flashscope model --reference --media spi-nand

write time = erase time × erase blocks + program time × pages + total ÷ bus rate
             (+ command bytes per page on the command lines), bus rate = clock × lines ÷ 8.
Exit codes: 0 ok, 2 a missing, unparsable or non-positive figure, or a filter that
matches no row.";

/// Arguments of `model`.
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// Kind of flash and bus.
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// Block erase time (tBE), e.g. 3ms.
    #[arg(long, allow_hyphen_values = true)]
    pub erase_time: Option<String>,
    /// Erase block size, e.g. 128K.
    #[arg(
        long = "erase-size",
        alias = "erase-block",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub erase_block: Option<String>,
    /// Page program time (tPP, tPROG), e.g. 400us.
    #[arg(long, allow_hyphen_values = true)]
    pub program_time: Option<String>,
    /// Page size, e.g. 2K.
    #[arg(long, allow_hyphen_values = true)]
    pub page: Option<String>,
    /// Bus clock, e.g. 100MHz.
    #[arg(long, allow_hyphen_values = true)]
    pub bus_clock: Option<String>,
    /// Data lines: 1, 2 or 4 for SPI, 8 or 16 for raw NAND.
    #[arg(long, allow_hyphen_values = true)]
    pub bus_lines: Option<String>,
    /// Command + address + dummy bytes per command (default 0).
    #[arg(long, allow_hyphen_values = true)]
    pub cmd_bytes: Option<String>,
    /// Amount written for the model (default 128M).
    #[arg(
        long = "size",
        alias = "total",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub total: Option<String>,
    /// Bytes per read command (default: a page for NAND, the whole total for NOR).
    #[arg(long, allow_hyphen_values = true)]
    pub read_chunk: Option<String>,
    /// Print the vendor's measured figures (filter with --media, --part).
    #[arg(long)]
    pub reference: bool,
    /// Reference filter: media, e.g. spi-nand, raw-nand, mmc.
    #[arg(long, requires = "reference")]
    pub media: Option<String>,
    /// Reference filter: part number (substring), e.g. GD5F.
    #[arg(long, requires = "reference")]
    pub part: Option<String>,
}

/// `--kind`: [`FlashKind`] on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KindArg {
    /// Serial NOR: commands on one line, data on 1, 2 or 4; reads continue across pages.
    SpiNor,
    /// Serial NAND: commands on one line, data on 1, 2 or 4; one read command per page.
    SpiNand,
    /// Parallel NAND: commands, addresses and data on the 8- or 16-bit bus; one read per page.
    RawNand,
}

impl From<KindArg> for FlashKind {
    fn from(k: KindArg) -> Self {
        match k {
            KindArg::SpiNor => FlashKind::SpiNor,
            KindArg::SpiNand => FlashKind::SpiNand,
            KindArg::RawNand => FlashKind::RawNand,
        }
    }
}

impl Args {
    fn text(&self) -> DatasheetText {
        DatasheetText {
            kind: self.kind.map(FlashKind::from),
            erase_time: self.erase_time.clone(),
            erase_block: self.erase_block.clone(),
            program_time: self.program_time.clone(),
            page: self.page.clone(),
            bus_clock: self.bus_clock.clone(),
            bus_lines: self.bus_lines.clone(),
            cmd_bytes: self.cmd_bytes.clone(),
            total: self.total.clone(),
            read_chunk: self.read_chunk.clone(),
        }
    }

    fn any_figure(&self) -> bool {
        self.kind.is_some()
            || [
                &self.erase_time,
                &self.erase_block,
                &self.program_time,
                &self.page,
                &self.bus_clock,
                &self.bus_lines,
                &self.cmd_bytes,
                &self.total,
                &self.read_chunk,
            ]
            .iter()
            .any(|o| o.is_some())
    }
}

/// Run `model`: the estimate, the reference table, or both; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let params = ModelParams {
        datasheet: if !args.reference || args.any_figure() {
            Some(args.text().parse()?)
        } else {
            None
        },
        reference: args.reference.then(|| ReferenceFilter {
            media: args.media.clone(),
            part: args.part.clone(),
        }),
    };
    out.emit(&model::model(&params)?);
    Ok(Verdict::Ok)
}

/// `model`'s text from its document: the estimate with its terms, then the reference rows.
pub fn render(doc: &Document) -> String {
    let Body::Model(m) = &doc.body else {
        return String::new();
    };
    let mut text = String::new();
    if let (Some(e), ModelParameters::Datasheet(d)) = (&m.estimate, &m.parameters) {
        text.push_str(&render_estimate(e, d.kind, d.total_bytes));
    }
    if let Some(rows) = &m.reference {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&render_reference(rows));
    }
    text
}

/// A model time as the document holds it (whole ns), so live and saved runs print alike.
fn ns_text(ns: f64) -> String {
    format_ns(as_whole_ns(ns) as f64)
}

fn term_row(t: &mut Table, term: &Term) {
    t.row(vec![
        term.name.clone(),
        term.count.to_string(),
        ns_text(term.each_ns),
        ns_text(term.total_ns),
        term.formula.clone(),
    ]);
}

fn render_estimate(e: &Estimate, kind: FlashKind, total: u64) -> String {
    let mut s = format!(
        "{}: sequential write at most {}, sequential read at most {} (bus {})\n\n",
        kind.name(),
        format_rate(e.write_bytes_per_s),
        format_rate(e.read_bytes_per_s),
        format_rate(e.bus_bytes_per_s)
    );
    s.push_str(&format!("writing {}:\n", format_bytes(total)));
    let mut t = Table::new(&["term", "count", "each", "total", "how"]).align(4, Align::Left);
    for term in &e.write_terms {
        term_row(&mut t, term);
    }
    t.row(vec![
        "= time".into(),
        String::new(),
        String::new(),
        ns_text(e.write_ns),
        format!("→ {}", format_rate(e.write_bytes_per_s)),
    ]);
    s.push_str(&t.render());
    s.push_str(&format!(
        "\nreading {} (bus-limited):\n",
        format_bytes(total)
    ));
    let mut t = Table::new(&["term", "count", "each", "total", "how"]).align(4, Align::Left);
    for term in &e.read_terms {
        term_row(&mut t, term);
    }
    t.row(vec![
        "= time".into(),
        String::new(),
        String::new(),
        ns_text(e.read_ns),
        format!("→ {}", format_rate(e.read_bytes_per_s)),
    ]);
    s.push_str(&t.render());
    s
}

fn render_reference(rows: &[EmpiricalRow]) -> String {
    let mut s = String::from(
        "measured by the vendor (4 KiB random IOPS; the vendor's K/s and M/s read as KiB/s and MiB/s):\n",
    );
    let mut t = Table::new(&[
        "soc",
        "media",
        "part",
        "seq read",
        "seq write",
        "rand read",
        "rand write",
        "notes",
    ])
    .align(1, Align::Left)
    .align(2, Align::Left)
    .align(7, Align::Left);
    // A rate in the tool's one unit (MiB/s); the vendor's text when it is not a rate.
    let o = |bytes_per_s: Option<u64>, v: &Option<String>| {
        bytes_per_s
            .map(|b| crate::vocab::units::format_rate(b as f64))
            .or_else(|| v.clone())
            .unwrap_or_else(|| "-".into())
    };
    let n = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
    for r in rows {
        t.row(vec![
            r.soc.clone(),
            r.media.clone(),
            r.part.clone(),
            o(r.seq_read_bytes_per_s, &r.seq_read),
            o(r.seq_write_bytes_per_s, &r.seq_write),
            n(r.rand_read_iops),
            n(r.rand_write_iops),
            r.notes.clone(),
        ]);
    }
    s.push_str(&t.render());
    s
}
