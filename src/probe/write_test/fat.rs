//! `fat`: which of the first erase blocks behave differently (the FAT area).

use super::{value_text, Findings, WriteTest};
use crate::analysis::fat::infer_fat;
use crate::backend::Backend;
use crate::probe::fat::{self, FatParams, FatSamples};
use crate::probe::write_common::ladder;
use crate::report::results::{FatResult, WithEraseSource};
use crate::report::table::Table;
use crate::report::{Body, Document};
use crate::target::write::{estimate_ns, WriteIntent};
use crate::units::{format_bytes, format_rate};
use crate::Result;
use std::io;

/// The FAT-area test: its parameters and where the erase size came from.
pub struct FatTest {
    pub params: FatParams,
    /// "--erase-size" or the align inference that measured it (stated in the output).
    pub erase_size_source: String,
}

impl WriteTest for FatTest {
    type Samples = FatSamples;
    const COMMAND: &'static str = "fat";

    fn plan(&self, sector: u64) -> WriteIntent {
        let p = &self.params;
        let bytes = p.bytes(sector);
        let ops: u64 = ladder(p.erase_bytes, p.block_bytes, sector)
            .iter()
            .map(|&bs| p.rounds(bs))
            .sum::<u64>()
            * p.nr as u64;
        WriteIntent {
            command: Self::COMMAND,
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
            ..WriteIntent::default()
        }
    }

    fn run(
        &self,
        dev: &mut dyn Backend,
        progress: &mut dyn FnMut(u64, u64),
    ) -> io::Result<FatSamples> {
        fat::run(dev, &self.params, progress)
    }

    fn infer(&self, s: &FatSamples) -> Findings {
        let mut f = Findings::default();
        f.add("fat_area_erase_blocks", infer_fat(&s.points()));
        f
    }

    fn stopped<'a>(&self, s: &'a FatSamples) -> Option<&'a str> {
        s.stopped.as_deref()
    }

    fn document(&self, s: &FatSamples, _findings: &Findings) -> Result<Body> {
        Ok(Body::Fat(FatResult {
            parameters: WithEraseSource {
                params: self.params.clone(),
                erase_size_source: self.erase_size_source.clone(),
            },
            samples: s.samples.clone(),
        }))
    }

    fn render(&self, doc: &Document, s: &FatSamples) -> String {
        let nr = self.params.nr;
        let mut text = format!(
            "erase block {} (from {})\n",
            format_bytes(self.params.erase_bytes),
            self.erase_size_source
        );
        if let Some(inf) = doc.inferences.get("fat_area_erase_blocks") {
            text.push_str(&format!(
                "erase blocks that behave differently (FAT area): {} ({}) - {}\n\n",
                value_text(inf),
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
        text
    }
}
