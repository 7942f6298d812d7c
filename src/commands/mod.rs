//! The commands: each takes typed parameters, runs its probes and analyses, and is the
//! place its result document is built. The CLI above turns arguments into parameters and
//! renders what comes back; the rooms below measure and decide (docs/ARCHITECTURE.md).

pub mod align;
pub mod analyze;
pub mod auto;
pub mod bench;
pub(crate) mod compare;
pub mod fat;
pub mod fs;
pub mod health;
pub(crate) mod history;
pub mod host_path;
pub mod info;
pub mod interval;
pub(crate) mod io;
pub mod model;
pub mod open_au;
pub mod probe;
pub mod program;
pub mod restore;
pub mod scatter;
pub(crate) mod sim;
pub mod slc;
pub mod smartctl;
pub mod verify;
pub mod write_probe;
