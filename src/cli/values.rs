//! What the clap definitions in [`super::defs`] name: the value types and parsers of the
//! command line, each the crate's own. `build.rs` includes the definitions with stand-ins
//! of the same names (it generates the man page and completions, and never parses a
//! value), so the definitions name nothing of the crate but this module; the test
//! `generated_page_is_the_binarys_own` fails when the two disagree on anything the page
//! shows.

pub use crate::device::TargetSpec;
pub use crate::fs::Pattern;
pub use crate::model::Figure;
pub use crate::vocab::units::{parse_duration_ns, parse_size, Given};
pub use crate::workload::spec::parse_cpus;
pub use crate::workload::{EngineKind, JobSpec, SyncMode};
pub use clap::{Parser, Subcommand};
pub use std::path::PathBuf;

/// clap's parser of an option whose spelling a message needs: `parse`'s value, and the
/// text given. (Where no message needs it, `value_parser = parse_size` takes the value.)
pub fn given<T: 'static>(
    parse: fn(&str) -> crate::Result<T>,
) -> impl Fn(&str) -> crate::Result<Given<T>> + Clone + Send + Sync + 'static {
    move |text| {
        parse(text).map(|value| Given {
            value,
            text: text.to_string(),
        })
    }
}

/// clap's parser of a fill pattern (`fs --pattern`).
pub fn parse_pattern(text: &str) -> crate::Result<Pattern> {
    Pattern::parse(text)
}

/// clap's parser of `io --blocksize-range`: LOW-HIGH in bytes.
pub fn parse_bsrange(text: &str) -> crate::Result<(u64, u64)> {
    JobSpec::parse_bsrange(text)
}

/// clap's parser of a datasheet figure: its value in ns, bytes or lines.
pub fn whole(
    f: Figure,
) -> impl Fn(&str) -> std::result::Result<u64, String> + Clone + Send + Sync + 'static {
    move |t| f.parse(t).map(|v| v.whole()).map_err(|e| e.to_string())
}

/// clap's parser of a frequency figure, in Hz.
pub fn hz(
    f: Figure,
) -> impl Fn(&str) -> std::result::Result<f64, String> + Clone + Send + Sync + 'static {
    move |t| f.parse(t).map(|v| v.real()).map_err(|e| e.to_string())
}

/// clap's parser of `--range`: offset and length in bytes (a bad one is refused before
/// anything).
pub fn range_arg(text: &str) -> std::result::Result<(u64, u64), String> {
    super::verify::parse_range(text).map_err(|e| e.to_string())
}

/// clap's parser of `--max-cache`: its bytes. A plain number is refused: a cache is
/// megabytes or gigabytes, so it is most likely not meant as bytes.
pub fn max_cache_arg(text: &str) -> std::result::Result<u64, String> {
    if text.trim().parse::<f64>().is_ok() {
        return Err(format!(
            "--max-cache '{text}' has no unit: a cache is megabytes or gigabytes, so a plain number is most likely not meant as bytes; write e.g. {}M or 1G",
            text.trim()
        ));
    }
    crate::vocab::units::parse_size(text).map_err(|e| e.to_string())
}

/// clap's parser for a flag that also takes fio's `--direct=1` / `--direct=0`.
pub fn bool01_arg(text: &str) -> std::result::Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err("use 1 or 0".to_string()),
    }
}

/// clap's parser of a block size (`--blocksize`): bytes, neither zero nor negative.
pub fn parse_block_size(text: &str) -> crate::Result<u64> {
    crate::vocab::units::parse_size_option("--blocksize", text, false)
}

/// clap's parser of `--size`: bytes, neither zero nor negative.
pub fn parse_size_arg(text: &str) -> crate::Result<u64> {
    crate::vocab::units::parse_size_option("--size", text, false)
}

/// clap's parser of `--erase-size`: bytes, neither zero nor negative.
pub fn parse_erase_size(text: &str) -> crate::Result<u64> {
    crate::vocab::units::parse_size_option("--erase-size", text, false)
}

/// clap's parser of `--sync`: none, sync or dsync.
pub fn parse_sync_mode(text: &str) -> crate::Result<SyncMode> {
    SyncMode::parse(text)
}

/// clap's parser of `--iodepth`: a whole number, at least 1.
pub fn parse_iodepth(text: &str) -> crate::Result<u32> {
    match text.trim().parse::<u32>() {
        Ok(0) => Err(crate::Error::usage(
            "--iodepth 0: the queue depth must be at least 1",
        )),
        Ok(n) => Ok(n),
        Err(_) => Err(crate::Error::usage(format!(
            "--iodepth '{text}' is not a whole number: give the requests in flight, e.g. 32"
        ))),
    }
}

/// clap's parser of `--engine`: sync, uring or null.
pub fn parse_engine(text: &str) -> crate::Result<EngineKind> {
    EngineKind::parse(text)
}
