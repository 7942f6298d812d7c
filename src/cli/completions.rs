//! `flashscope man` and `flashscope completions SHELL`: the manual page and the shell
//! completions, rendered from the command line's definition exactly as `build.rs` renders
//! them for packages.

pub use super::defs::completions::*;

use crate::vocab::error::Verdict;
use crate::Result;
use std::io::Write;

/// Print the manual page.
pub fn man() -> Result<Verdict> {
    print(&super::gen::man_page(super::command_tree()))
}

/// Print `args.shell`'s completion script.
pub fn run(args: &Args) -> Result<Verdict> {
    print(&super::gen::completion(
        shell(args.shell),
        super::command_tree(),
    ))
}

fn shell(s: Shell) -> clap_complete::Shell {
    match s {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::Elvish => clap_complete::Shell::Elvish,
        Shell::Powershell => clap_complete::Shell::PowerShell,
    }
}

/// Write `bytes` to stdout; a closed stdout (`| head`) is not an error.
fn print(bytes: &[u8]) -> Result<Verdict> {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(bytes).and_then(|_| stdout.flush());
    Ok(Verdict::Ok)
}
