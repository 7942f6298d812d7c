//! `flashscope fs seq|files|matrix DIR`: measurements through a mounted filesystem, with the
//! page cache's share shown. These write only their own test files in DIR (removed
//! afterwards unless --keep), so they need no --write.

pub use super::defs::fs::*;

use super::Output;
use crate::commands::fs::{self as command, CommonParams, FilesParams, MatrixParams, SeqParams};
use crate::fs::seq::SeqMode;
use crate::fs::{files, parse_size_list};
use crate::vocab::error::Verdict;
use crate::vocab::units::parse_size_option;
use crate::workload::SyncMode;
use crate::Result;

/// Run one `fs` subcommand; returns the exit code.
pub fn run(cmd: &FsCommand, out: &Output) -> Result<Verdict> {
    crate::signals::install(crate::signals::Second::Terminate);
    let mut announce = |text: &str| {
        if !out.json || std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            super::say(text);
        }
    };
    let ran = match cmd {
        FsCommand::Seq(a) => command::seq(&seq_params(a)?, &mut announce),
        FsCommand::Files(a) => command::files(&files_params(a)?, &mut announce),
        FsCommand::Matrix(a) => command::matrix(&matrix_params(a)?, &mut announce),
    };
    // A signal stops the test between blocks and its files are removed: the run ends as
    // every command stopped by a signal does, 128 + its number, not as a failure.
    let doc = match (ran, crate::signals::pending()) {
        (Ok(doc), _) => doc,
        (Err(e), Some(signal)) => {
            super::say(&format!("flashscope: {e}"));
            return Ok(Verdict::Stopped { signal });
        }
        (Err(e), None) => return Err(e),
    };
    out.emit(&doc);
    Ok(Verdict::Ok)
}

fn common(a: &CommonArgs) -> Result<CommonParams> {
    Ok(CommonParams {
        dir: a.dir.clone(),
        pattern: super::defaulted(&a.pattern.value, "--pattern")?,
        keep: a.keep,
        seed: a.seed,
    })
}

/// An optional size option's value (`allow_zero`: 0 is a value, e.g. no warm-up).
fn size_opt(name: &str, text: &Option<String>, allow_zero: bool) -> Result<Option<u64>> {
    text.as_deref()
        .map(|s| parse_size_option(name, s, allow_zero))
        .transpose()
}

// ---------------------------------------------------------------- fs seq

impl From<ModeArg> for SeqMode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Buffered => SeqMode::Buffered,
            ModeArg::Fdatasync => SeqMode::Fdatasync,
            ModeArg::Dsync => SeqMode::Dsync,
            ModeArg::Sync => SeqMode::Sync,
            ModeArg::Direct => SeqMode::Direct,
        }
    }
}

fn seq_params(a: &SeqArgs) -> Result<SeqParams> {
    Ok(SeqParams {
        block_bytes: super::defaulted(&a.bs.value, "--blocksize")?.value,
        file_bytes: a.size.value.as_ref().map(|g| g.value),
        warmup_bytes: size_opt("--warmup", &a.warmup, true)?,
        common: common(&a.common)?,
        modes: a.mode.iter().map(|&m| SeqMode::from(m)).collect(),
        drop_caches: a.drop_caches,
        runs: a.runs,
        plot: a.plot.value.clone(),
    })
}

// ---------------------------------------------------------------- fs files

fn files_params(a: &FilesArgs) -> Result<FilesParams> {
    Ok(FilesParams {
        sizes: match &a.sizes {
            Some(s) => parse_size_list(s, "--sizes")?,
            None => files::default_sizes(),
        },
        total_bytes: parse_size_option("--total", &a.total, false)?,
        common: common(&a.common)?,
        drop_caches: a.drop_caches,
        plot: a.plot.value.clone(),
    })
}

// ---------------------------------------------------------------- fs matrix

/// `fs matrix --sync`: O_SYNC or not (iozone -o); O_DSYNC is `fs seq --mode dsync`.
fn matrix_sync(mode: Option<SyncMode>) -> Result<bool> {
    match mode.unwrap_or(SyncMode::None) {
        SyncMode::None => Ok(false),
        SyncMode::Sync => Ok(true),
        SyncMode::Dsync => Err(crate::Error::usage(
            "fs matrix --sync=dsync: the matrix opens its files with O_SYNC (--sync) or without (--sync=none); O_DSYNC writes are `fs seq --mode dsync`",
        )),
    }
}

/// `fs matrix --fsync`: one fsync per file in the write timings (iozone -e), or none.
fn matrix_fsync(every: Option<u32>) -> Result<bool> {
    match every.unwrap_or(0) {
        0 => Ok(false),
        1 => Ok(true),
        n => Err(crate::Error::usage(format!(
            "fs matrix --fsync={n}: the matrix fsyncs each file once inside its write timing (--fsync) or not at all (--fsync=0); an fsync every N writes is `io --fsync N`"
        ))),
    }
}

fn matrix_params(a: &MatrixArgs) -> Result<MatrixParams> {
    Ok(MatrixParams {
        max_file: size_opt("--max-file", &a.max_file, false)?,
        max_record: size_opt("--max-record", &a.max_record, false)?,
        common: common(&a.common)?,
        sync: matrix_sync(a.sync.value)?,
        fsync: matrix_fsync(a.fsync.value)?,
        direct: a.direct,
        csv: a.csv.clone(),
        plot_prefix: a.plot_prefix.clone(),
    })
}
