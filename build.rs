//! Generates the man page and the shell completions from the command line's definition
//! (`src/cli/defs/`) at build time: a cross build cannot run the binary it builds.
//!
//! Contract (the packaging relies on it): with `FLASHSCOPE_GEN_DIR` set, it writes
//! `$FLASHSCOPE_GEN_DIR/flashscope.1` and `$FLASHSCOPE_GEN_DIR/completions/`
//! `flashscope.bash`, `_flashscope` (zsh) and `flashscope.fish`; otherwise the same tree
//! under `$OUT_DIR/gen`. The binary's `man` and `completions` commands render the same
//! bytes from its own definition at run time (`src/cli/gen.rs`, included below), and
//! `tests/e2e/man.rs` (`generated_page_is_the_binarys_own`) fails on any difference. The
//! files are not embedded in the binary: the page and the five shells' scripts are about
//! 600 KB, a tenth of the boards' 6 MiB budget.

use std::path::{Path, PathBuf};

/// The crate's `cli` module as far as the definitions see it: the definitions, and
/// stand-ins for the value types and parsers they name (a build never parses a value, and
/// the page shows names, help and defaults only). The test
/// `generated_page_is_the_binarys_own` renders the binary's own definition and fails on
/// any difference from the page written here.
#[allow(dead_code, clippy::all)]
mod cli {
    pub mod values {
        pub use clap::{Parser, Subcommand};
        pub use std::path::PathBuf;
        type Parsed<T> = Result<T, String>;

        /// Stand-in: a value and the text it was given as.
        #[derive(Debug, Clone)]
        pub struct Given<T> {
            pub value: T,
            pub text: String,
        }
        /// Stand-in for the crate's `device::TargetSpec` (parsed by `FromStr`).
        #[derive(Debug, Clone)]
        pub struct TargetSpec;
        impl std::str::FromStr for TargetSpec {
            type Err = String;
            fn from_str(_: &str) -> Parsed<Self> {
                Ok(TargetSpec)
            }
        }
        #[derive(Debug, Clone, Copy)]
        pub struct Pattern;
        #[derive(Debug, Clone, Copy)]
        pub struct SyncMode;
        #[derive(Debug, Clone, Copy)]
        pub struct EngineKind;
        #[derive(Debug, Clone, Copy)]
        pub enum Figure {
            EraseTime,
            EraseSize,
            ProgramTime,
            Page,
            BusClock,
            BusLines,
            CmdBytes,
            Size,
            ReadChunk,
        }

        pub fn parse_size(_: &str) -> Parsed<u64> {
            Ok(0)
        }
        pub fn parse_duration_ns(_: &str) -> Parsed<u64> {
            Ok(0)
        }
        pub fn parse_block_size(_: &str) -> Parsed<u64> {
            Ok(0)
        }
        pub fn parse_pattern(_: &str) -> Parsed<Pattern> {
            Ok(Pattern)
        }
        pub fn parse_size_arg(_: &str) -> Parsed<u64> {
            Ok(0)
        }
        pub fn parse_erase_size(_: &str) -> Parsed<u64> {
            Ok(0)
        }
        pub fn parse_sync_mode(_: &str) -> Parsed<SyncMode> {
            Ok(SyncMode)
        }
        pub fn parse_iodepth(_: &str) -> Parsed<u32> {
            Ok(1)
        }
        pub fn parse_engine(_: &str) -> Parsed<EngineKind> {
            Ok(EngineKind)
        }
        pub fn parse_cpus(_: &str) -> Parsed<Vec<usize>> {
            Ok(Vec::new())
        }
        pub fn parse_bsrange(_: &str) -> Parsed<(u64, u64)> {
            Ok((0, 0))
        }
        pub fn given<T: Clone + Send + Sync + 'static>(
            parse: fn(&str) -> Parsed<T>,
        ) -> impl Fn(&str) -> Parsed<Given<T>> + Clone + Send + Sync + 'static {
            move |text| {
                parse(text).map(|value| Given {
                    value,
                    text: text.to_string(),
                })
            }
        }
        pub fn whole(_: Figure) -> impl Fn(&str) -> Parsed<u64> + Clone + Send + Sync + 'static {
            |_| Ok(0)
        }
        pub fn hz(_: Figure) -> impl Fn(&str) -> Parsed<f64> + Clone + Send + Sync + 'static {
            |_| Ok(0.0)
        }
        pub fn range_arg(_: &str) -> Parsed<(u64, u64)> {
            Ok((0, 0))
        }
        pub fn max_cache_arg(_: &str) -> Parsed<u64> {
            Ok(0)
        }
        pub fn bool01_arg(_: &str) -> Parsed<bool> {
            Ok(true)
        }
    }

    /// The same files as `src/cli/defs/mod.rs` lists (a missing one fails this build).
    pub mod defs {
        macro_rules! defs {
            ($($name:ident),* $(,)?) => {
                $(pub mod $name {
                    include!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/cli/defs/", stringify!($name), ".rs"));
                })*
            };
        }
        defs!(
            align,
            analyze,
            auto,
            bench,
            compare,
            completions,
            fat,
            fs,
            health,
            history,
            info,
            interval,
            io,
            model,
            open_au,
            options,
            probe,
            program,
            report,
            restore,
            scatter,
            serve,
            sim,
            slc,
            smartctl,
            top,
            verify,
            write_args,
        );
    }
}

/// The renderer `flashscope man` and `completions` use.
#[allow(dead_code)]
mod gen {
    include!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/cli/gen.rs"));
}

fn main() {
    println!("cargo:rerun-if-changed=src/cli/defs");
    println!("cargo:rerun-if-changed=src/cli/gen.rs");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=FLASHSCOPE_GEN_DIR");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let gen = match std::env::var_os("FLASHSCOPE_GEN_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => out.join("gen"),
    };
    let cmd = <cli::defs::top::Cli as clap::CommandFactory>::command();
    if let Err(e) = generate(cmd, &gen) {
        panic!("flashscope build: cannot write to {}: {e}", gen.display());
    }
}

/// The man page and the bash, zsh and fish completions under `dir`.
fn generate(cmd: clap::Command, dir: &Path) -> std::io::Result<()> {
    use clap_complete::Shell;
    let completions = dir.join("completions");
    std::fs::create_dir_all(&completions)?;
    std::fs::write(dir.join("flashscope.1"), gen::man_page(cmd.clone()))?;
    for (shell, file) in [
        (Shell::Bash, "flashscope.bash"),
        (Shell::Zsh, "_flashscope"),
        (Shell::Fish, "flashscope.fish"),
    ] {
        std::fs::write(completions.join(file), gen::completion(shell, cmd.clone()))?;
    }
    Ok(())
}
