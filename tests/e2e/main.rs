//! The end-to-end tests, one module per area, linked into one test binary (issue 29:
//! one link of the crate instead of one per file). The real-time served-card suite is
//! its own binary, tests/serve.rs, so nothing else runs beside its timing.

mod common;

mod advice_tools;
mod auto;
mod bad_input;
mod board;
mod capacity;
mod compare;
#[path = "core.rs"]
mod core_commands;
mod corpus;
mod export;
mod figures;
mod files_root_writes;
mod fs;
mod geometry;
mod grafana;
mod health;
mod help_examples;
mod history;
mod interrupt;
mod journal;
mod keyspace;
mod man;
mod model;
mod options;
mod packaging;
mod path_matrix;
mod plans;
mod preserve_wear;
mod presets;
mod progress;
mod readme;
mod render;
mod report;
mod schema;
mod sentences;
mod smartctl;
mod typed;
mod workload;
mod write_policy;
mod write_properties;
mod writes;
