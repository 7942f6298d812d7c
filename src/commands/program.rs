//! `program`: the flashbench program matrix.

use super::write_probe::{Findings, WriteTest};
use crate::analysis::program::{infer_program, COLUMNS};
use crate::backend::Backend;
use crate::probe::program::{self, ProgramParams, ProgramSamples};
use crate::report::results::{ProgramParameters, ProgramResult};
use crate::report::Body;
use crate::session::{Rates, WriteIntent};
use crate::vocab::units::format_bytes;
use crate::Result;
use std::io;

/// The program-matrix test.
pub struct ProgramTest {
    pub params: ProgramParams,
}

impl WriteTest for ProgramTest {
    type Samples = ProgramSamples;
    const COMMAND: &'static str = "program";

    fn plan(&self, sector: u64, rates: &Rates) -> WriteIntent {
        let p = &self.params;
        let bytes = p.bytes(sector);
        let sizes = p.sizes(sector);
        let ops: u64 = sizes.iter().map(|&bs| 8 * p.ops(bs)).sum();
        WriteIntent {
            command: Self::COMMAND,
            region: (p.offset_bytes, p.region_bytes),
            max_bytes: bytes,
            typical_bytes: None,
            estimated_ns: rates.write_ns(bytes, ops),
            what: format!(
                "program writes zeros, ones and 0x5a in order and at random at block sizes from {} to {}",
                format_bytes(sizes.first().copied().unwrap_or(0)),
                format_bytes(sizes.last().copied().unwrap_or(0))
            ),
            smaller: "lower --write-budget",
            ..WriteIntent::default()
        }
    }

    fn run(
        &self,
        dev: &mut dyn Backend,
        progress: &mut dyn FnMut(u64, u64),
    ) -> io::Result<ProgramSamples> {
        program::run(dev, &self.params, progress)
    }

    fn infer(&self, s: &ProgramSamples) -> Findings {
        Findings {
            inferences: infer_program(&s.rows()).into_iter().collect(),
            ..Findings::default()
        }
    }

    fn stopped<'a>(&self, s: &'a ProgramSamples) -> Option<&'a str> {
        s.stopped.as_deref()
    }

    fn document(&self, s: &ProgramSamples, _findings: &Findings) -> Result<Body> {
        Ok(Body::Program(ProgramResult {
            parameters: ProgramParameters {
                params: self.params.clone(),
                columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
            },
            samples: s.samples.clone(),
        }))
    }
}
