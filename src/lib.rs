//! flashscope: everything worth knowing about a piece of flash storage.
//!
//! One pipeline: target → backend → probe → samples → analysis → result → output.
//! Probes do I/O and timing and return samples; analysis is pure; output never measures.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod analysis;
pub mod backend;
pub mod capacity;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod device;
pub mod fs;
pub mod health;
pub mod history;
pub mod input;
pub mod journal;
pub mod model;
pub mod output;
pub mod pattern;
pub mod platform;
pub mod probe;
pub mod report;
pub mod serve;
pub mod session;
pub mod signals;
pub mod sys;
pub mod vocab;
pub mod workload;

pub use vocab::error::{Error, Result};
