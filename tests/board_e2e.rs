//! The end-to-end modules the emulated armv7 run needs (scripts/ci-cross: where 32-bit
//! offsets, journals and the history can break), linked without the rest of tests/e2e:
//! the whole e2e binary built for armv7 was the longest of the board builds (16 min 40 s
//! beside the native tests, 2026-11-28). Not built or run by a plain `cargo test`
//! (Cargo.toml: `test = false`); the same modules run natively in tests/e2e/main.rs.

// The helpers the other e2e modules use are not all used by these four.
#[allow(dead_code)]
#[path = "e2e/common.rs"]
mod common;

#[path = "e2e/board.rs"]
mod board;
#[path = "e2e/capacity.rs"]
mod capacity;
#[path = "e2e/history.rs"]
mod history;
#[path = "e2e/journal.rs"]
mod journal;
