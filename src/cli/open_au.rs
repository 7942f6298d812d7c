//! `flashscope open-au TARGET --write`: how many erase blocks the card can write to at
//! once (flashbench's open-AU test, automatic).

use super::{Outcome, Output};
use crate::cli::write_args::{BudgetArgs, WriteArgs};
use crate::commands::open_au::OpenAuRequest;
use crate::commands::write_probe::{self, value_text};
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::session::{Budgets, WriteFlags};
use crate::vocab::error::Verdict;
use crate::vocab::units::{format_bytes, format_rate};
use crate::Result;

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
    #[arg(long, value_name = "SIZE", value_parser = crate::cli::write_args::size_bytes)]
    pub erase_size: Option<u64>,
    /// Smallest block size written (the size whose collapse decides).
    #[arg(long, short = 'b', value_name = "SIZE", default_value = "16K", value_parser = crate::cli::write_args::size_bytes)]
    pub blocksize: u64,
    /// Most erase blocks written concurrently.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_au: u32,
    /// Where the first erase block starts [default: past 16 MiB and past 4 erase blocks,
    /// so the FAT area stays out; a FAT area reaching further adds to the count].
    #[arg(long, value_name = "SIZE", value_parser = crate::cli::write_args::size_bytes)]
    pub offset: Option<u64>,
    /// Also measure random order inside each erase block (`inferences.open_au_random`).
    #[arg(long)]
    pub random: bool,
    #[command(flatten)]
    pub flags: WriteArgs,
    #[command(flatten)]
    pub budgets: BudgetArgs,
}

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let finished = write_probe::measure(
        &args.target,
        &request(args)?,
        &WriteFlags::from(&args.flags),
        &Budgets::from(&args.budgets),
    )?;
    Outcome::from(finished).emit(out)
}

/// The test's parameters from the arguments.
fn request(args: &Args) -> Result<OpenAuRequest> {
    Ok(OpenAuRequest {
        erase_bytes: args.erase_size,
        block_bytes: args.blocksize,
        max_au: args.max_au,
        offset_bytes: args.offset,
        random: args.random,
    })
}

/// `open-au`'s text from its document (the wear line apart: `cli::render` adds it).
pub fn render(doc: &Document) -> String {
    let Body::OpenAu(r) = &doc.body else {
        return String::new();
    };
    let mut text = format!(
        "erase block {} (from {})\n",
        format_bytes(r.parameters.params.erase_bytes),
        r.parameters.erase_size_source
    );
    for (key, label) in [("open_au", "in order"), ("open_au_random", "random order")] {
        if let Some(inf) = doc.inferences.get(key) {
            text.push_str(&format!(
                "open erase blocks ({label}): {} ({}) - {}\n",
                value_text(inf),
                inf.status_word(),
                inf.evidence
            ));
        }
    }
    text.push('\n');
    for random in [false, true] {
        let ladder: Vec<_> = r
            .samples
            .iter()
            .filter(|x| x.phase == "ladder" && x.random == random)
            .collect();
        let det: Vec<_> = r
            .samples
            .iter()
            .filter(|x| x.phase == "detect" && x.random == random && !x.superseded)
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
    text
}
