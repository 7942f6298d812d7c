//! `flashscope verify TARGET`: write stamps over the whole surface (or `--range`), read
//! everything back and list what did not survive. `verify DIR` does the same through a
//! mounted filesystem with 1 GiB files. The run is the library's
//! (`commands::verify::measure`); here the arguments become its parameters and the
//! result is drawn.

pub use super::defs::verify::*;

use super::Output;
use crate::commands::verify::{self, VerifyParams};
use crate::report::output_file::OutputFile;
use crate::session::WriteFlags;
use crate::vocab::error::Verdict;
use crate::vocab::units::parse_size;
use crate::{Error, Result};

/// Parse `OFFSET+LEN`.
pub fn parse_range(text: &str) -> Result<(u64, u64)> {
    let bad = || {
        Error::usage(format!(
            "--range '{text}' is not OFFSET+LENGTH, e.g. 1G+512M or 0+64M"
        ))
    };
    let (o, l) = text.split_once('+').ok_or_else(bad)?;
    let o = parse_size(o.trim()).map_err(|_| bad())?;
    let l = parse_size(l.trim()).map_err(|_| bad())?;
    if l == 0 {
        return Err(Error::usage(format!("--range '{text}' has length 0")));
    }
    Ok((o, l))
}

/// `--iodepth`: at most [`crate::capacity::verify::MAX_IODEPTH`] requests in flight.
fn verify_iodepth(given: &Option<u32>) -> Result<u32> {
    let n = super::defaulted(given, "--iodepth")?;
    if n as usize > crate::capacity::verify::MAX_IODEPTH {
        return Err(crate::Error::usage(format!(
            "--iodepth {n}: verify keeps 1 to {} requests in flight",
            crate::capacity::verify::MAX_IODEPTH
        )));
    }
    Ok(n)
}

/// Run the command and print its document; returns the exit code.
pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let params = VerifyParams {
        target: args.target.clone(),
        flags: WriteFlags::from(&args.flags),
        range: args.range,
        size: args.size.value.as_ref().map(|g| g.value),
        keep: args.keep,
        resume: args.resume,
        state: args.state.clone(),
        time_budget_ns: args.time_budget.value.as_ref().map(|g| g.value),
        plot: OutputFile::create_opt("--plot", args.plot.value.as_deref())?,
        partition_ok: args.partition_ok,
        pass: args.pass.into(),
        iodepth: verify_iodepth(&args.iodepth.value)?,
    };
    super::emit_finished(verify::measure(&params)?, out)
}

impl From<PassArg> for verify::Pass {
    fn from(p: PassArg) -> Self {
        match p {
            PassArg::Write => verify::Pass::Write,
            PassArg::Read => verify::Pass::Read,
            PassArg::Both => verify::Pass::Both,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_name_the_bad_value() {
        assert_eq!(parse_range("1G+512M").unwrap(), (1 << 30, 512 << 20));
        assert!(parse_range("1G").unwrap_err().to_string().contains("1G"));
        assert!(parse_range("x+1M").is_err());
        assert!(parse_range("0+0").is_err());
    }
}
