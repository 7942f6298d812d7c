//! `flashscope io TARGET`: a fio-style job (same option names where they mean the same
//! thing), with fio-compatible JSON for the per-job figures.

pub use super::defs::io::*;

use super::Output;
use crate::commands::io::{self, IoParams, JobSize};
use crate::commands::write_probe::Finished;
use crate::report::wear_line;
use crate::report::Body;
use crate::session::WriteFlags;
use crate::vocab::error::Verdict;
use crate::workload::{EngineKind, JobSpec, Pattern, RateLimit, RwMode, SyncMode};
use crate::{Error, Result};

/// Build the job from the arguments: its size is `--size`, or (not given) the rest of the
/// target from `--offset`, known once the target is.
fn job_spec(args: &Args) -> Result<(JobSpec, JobSize)> {
    let bs = super::defaulted(&args.bs.value, "--blocksize")?;
    let (bs_min, bs_max) = args
        .bsrange
        .as_ref()
        .map_or((bs.value, bs.value), |r| r.value);
    let iodepth = super::defaulted(&args.iodepth.value, "--iodepth")?;
    let engine = match args.engine.value {
        Some(e) => e,
        None if iodepth > 1 => EngineKind::Uring,
        None => EngineKind::Sync,
    };
    let runtime_ns = args.runtime;
    if runtime_ns == Some(0) {
        return Err(Error::usage("--runtime 0: give a positive time, e.g. 10s"));
    }
    let size = match args.size.value {
        Some(_) => JobSize::Given,
        None => JobSize::RestOfTarget {
            blocksize: match &args.bsrange {
                Some(r) => ("--blocksize-range", r.text.clone()),
                None => ("--blocksize", bs.text.clone()),
            },
        },
    };
    let job = JobSpec {
        name: args.name.clone(),
        rw: RwMode::parse(&args.rw)?,
        rwmixread: args.rwmixread,
        bs_min,
        bs_max,
        iodepth,
        numjobs: args.numjobs,
        offset: super::defaulted(&args.offset.value, "--offset")?.value,
        size: args.size.value.as_ref().map_or(0, |g| g.value),
        runtime_ns,
        time_based: args.time_based,
        ramp_ns: args.ramp_time.unwrap_or(0),
        direct: args.direct,
        sync: args.sync.value.unwrap_or(SyncMode::None),
        fsync: args.fsync.value.unwrap_or(0),
        engine,
        rate: args
            .rate
            .as_deref()
            .map(RateLimit::parse)
            .transpose()?
            .unwrap_or_default(),
        verify: args.verify,
        pattern: args.pattern.value.unwrap_or(Pattern::Random),
        cpus: args.cpus.value.clone().unwrap_or_default(),
        seed: args.seed,
        stop_on_signal: false,
    };
    Ok((job, size))
}

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let (job, size) = job_spec(args)?;
    let params = IoParams {
        target: &args.target,
        flags: WriteFlags::from(&args.flags),
        pattern_given: args.pattern.value.is_some(),
        job,
        size,
    };
    let (doc, verdict) = match io::run(&params)? {
        (Finished::Done { doc, verdict }, wrote) => {
            let doc = super::with_host_path(doc);
            out.emit(&doc);
            if wrote && !out.json {
                super::say(&wear_line(&doc));
            }
            (doc, verdict)
        }
        (Finished::Stopped { verdict }, _) => return Ok(verdict),
    };
    if let (Verdict::Incomplete, Body::Io(r)) = (verdict, &doc.body) {
        if let Some(e) = &r.error {
            super::say(&format!(
                "flashscope: error: {e} (the figures above cover the I/O done until then)"
            ));
        }
    }
    Ok(verdict)
}
