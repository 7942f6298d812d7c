//! The flashscope binary: parse the command line, run, map errors to exit codes.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = flashscope::cli::Cli::parse_args();
    match flashscope::cli::run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("flashscope: error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
