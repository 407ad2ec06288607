//! ccc-ir's integration tests, in one binary (one link step instead of
//! one per file): golden bytes written from the contract, and round trips.
//! Run one area with `cargo test -p ccc-ir --test all <module>::`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod chain_golden;
mod common;
mod ctrl_word_golden;
mod neff_configs_golden;
mod roundtrip;
