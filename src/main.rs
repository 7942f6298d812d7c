//! The flashscope binary: parse the command line, run, map the verdict or the error to
//! the exit code.

use flashscope::vocab::error::EXIT_RUNTIME;
use std::process::ExitCode;

fn main() -> ExitCode {
    // `flashscope smartctl …`, or flashscope run as `smartctl`: smartctl's shapes, not clap's.
    if let Some(status) = flashscope::cli::smartctl::intercept() {
        return ExitCode::from(status);
    }
    let cli = flashscope::cli::Cli::parse_args();
    let code = match flashscope::cli::run(cli) {
        Ok(verdict) => verdict.exit_code(),
        Err(e) => {
            // An error may quote a file's line or a device's string: shown, never obeyed.
            flashscope::cli::say(&format!("flashscope: error: {e}"));
            e.exit_code()
        }
    };
    // Every code flashscope returns fits a byte (0-3, 128 + signal); anything else is a bug
    // reported as a runtime error rather than a wrapped-around number.
    ExitCode::from(u8::try_from(code).unwrap_or(EXIT_RUNTIME as u8))
}
