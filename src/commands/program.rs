//! `program`: the flashbench program matrix.

use super::write_probe::{Findings, Request, WriteTest};
use crate::analysis::program::{infer_program, COLUMNS};
use crate::backend::Backend;
use crate::device::TargetInfo;
use crate::device::TargetSpec;
use crate::probe::program::{self, ProgramParams, ProgramSamples};
use crate::report::results::{ProgramParameters, ProgramResult};
use crate::report::Body;
use crate::session::{Budgets, Rates, WriteFlags, WriteIntent};
use crate::vocab::units::format_bytes;
use crate::vocab::units::Given;
use crate::{Error, Result};
use std::io;

/// What `program` is asked: the region and the block sizes, as given.
#[derive(Debug, Clone)]
pub struct ProgramRequest {
    pub offset: Given<u64>,
    pub size: Given<u64>,
    pub max_blocksize: Given<u64>,
    pub blocksize: Given<u64>,
}

impl Request for ProgramRequest {
    type Test = ProgramTest;

    fn build(
        &self,
        _spec: &TargetSpec,
        _flags: &WriteFlags,
        budgets: &Budgets,
        info: &TargetInfo,
    ) -> Result<ProgramTest> {
        let sector = info.logical_sector_bytes as u64;
        Ok(ProgramTest {
            params: params(self, budgets, info.size_bytes, sector)?,
        })
    }
}

/// The matrix's parameters, checked against the target's `size` and `sector`.
fn params(r: &ProgramRequest, budgets: &Budgets, size: u64, sector: u64) -> Result<ProgramParams> {
    let mut p = ProgramParams::new();
    p.offset_bytes = r.offset.value;
    p.region_bytes = r.size.value;
    p.largest_bytes = r.max_blocksize.value;
    p.smallest_bytes = r.blocksize.value;
    p.time_budget_ns = budgets.time_ns;
    for (option, text, v) in [
        ("--blocksize", &r.blocksize.text, p.smallest_bytes),
        ("--max-blocksize", &r.max_blocksize.text, p.largest_bytes),
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
            r.blocksize.text, r.max_blocksize.text
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
