//! ccc-compiler's integration tests, in one binary (one link step instead
//! of one per file). Run one area with
//! `cargo test -p ccc-compiler --test all <module>::` (the commands in
//! `properties.rs`'s header that name `--test properties` now read
//! `--test all properties::`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod cost;
mod cost_auto;
mod cost_fit;
mod cost_legal;
mod cost_legs;
mod cost_program;
mod early_refusals;
mod module_cycles;
mod mutations;
mod properties;
