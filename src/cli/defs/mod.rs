//! The command line's definition: every subcommand, option, help text and default, and
//! nothing else. These files name nothing of the crate but `crate::cli::values`, so
//! `build.rs` includes them too (with stand-ins for the value types) and generates the man
//! page and shell completions from them at build time, as a cross build cannot run the
//! binary it builds. A file added here is added to `build.rs`'s list as well.

pub mod align;
pub mod analyze;
pub mod auto;
pub mod bench;
pub mod compare;
pub mod completions;
pub mod fat;
pub mod fs;
pub mod health;
pub mod history;
pub mod info;
pub mod interval;
pub mod io;
pub mod model;
pub mod open_au;
pub mod options;
pub mod probe;
pub mod program;
pub mod report;
pub mod restore;
pub mod scatter;
pub mod serve;
pub mod sim;
pub mod slc;
pub mod smartctl;
pub mod top;
pub mod verify;
pub mod write_args;
