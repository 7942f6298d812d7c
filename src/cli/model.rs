//! `flashscope model`: theoretical sequential speed from datasheet figures, each term
//! printed; `--reference` prints the vendor's measured table beside it.

pub use super::defs::model::*;

use super::Output;
use crate::commands::model::{self, ModelParams, ReferenceFilter};
use crate::model::{DatasheetFigures, FlashKind};
use crate::vocab::error::Verdict;
use crate::Result;

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
    fn figures(&self) -> DatasheetFigures {
        DatasheetFigures {
            kind: self.kind.map(FlashKind::from),
            erase_ns: self.erase_time,
            erase_block_bytes: self.erase_block.value.as_ref().map(|g| g.value),
            program_ns: self.program_time,
            page_bytes: self.page,
            bus_clock_hz: self.bus_clock,
            // Checked to be 1, 2, 4, 8 or 16 by its parser.
            bus_lines: self.bus_lines.map(|n| n as u32),
            cmd_bytes: self.cmd_bytes,
            total_bytes: self.total.value.as_ref().map(|g| g.value),
            read_chunk_bytes: self.read_chunk,
        }
    }
}

/// Run `model`: the estimate, the reference table, or both; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let figures = args.figures();
    let params = ModelParams {
        datasheet: if !args.reference || figures.any_given() {
            Some(figures.datasheet()?)
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
