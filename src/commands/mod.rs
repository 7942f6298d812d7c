//! The commands: each takes typed parameters, runs its probes and analyses, and is the
//! place its result document is built. The CLI above turns arguments into parameters and
//! renders what comes back; the rooms below measure and decide (docs/ARCHITECTURE.md).

pub mod auto;
