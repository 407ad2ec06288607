//! # ccc-compiler: from a collective spec to the bytes every rank loads
//!
//! The pipeline, one pass per file, a typed value between passes:
//!
//! ```text
//!  &str ──parse──▶ Program ──validate──▶ ValidProgram ──build──▶ Schedule
//!                                                                  │
//!        images ◀──encode── Lowered ◀──lower── (Schedule, ranks) ◀─┘
//!          │                   │
//!          │                   └──verify──▶ Proof (postcondition + protocol + round trip)
//!          └──sign──▶ Signature
//! ```
//!
//! - [`parse`] reads RON into the spec types of [`ccc_ir::spec`], with
//!   line/column errors.
//! - [`validate`] checks every rule of the spec at once and resolves
//!   defaults into a [`valid::ValidProgram`].
//! - [`algorithms`] knows which op each algorithm serves, what structure it
//!   needs, and composes it into phases; [`build`] makes the [`schedule::Schedule`].
//! - [`step_graph`] is the data-flow graph of the schedule; [`lower`] walks
//!   one rank's nodes into typed records per TOP_SP; [`encode`] packs them.
//!   [`placement`] is the one home of device placement: which channels run
//!   on which TOP_SP, the TOP_SPs a program uses, the semaphore map and the
//!   device barrier's reach; lowering, the proof, certificates and
//!   validation all ask it.
//! - [`verify`] proves the postcondition of every collective on the step
//!   graph and the protocol of the lowered records, and round-trips images.
//! - [`sign`] computes the collective signature; [`diagnose`] explains why
//!   signatures differ between ranks; [`manifest`] is what a compile wrote,
//!   and [`output`] writes it into a folder without losing a user's file.
//! - [`pipeline::compile`] runs them in order; it is the library entry point.
//! - [`hlo`] is a second front end: it imports the collectives of an XLA
//!   HLO module (what JAX and PyTorch/XLA emit) into a `Program` for a
//!   target machine, ready for `validate` (`docs/hlo.md`).
//! - [`prelude`] is everything a caller needs in one import:
//!   `use ccc_compiler::prelude::*;` (the spec types with their builder,
//!   `parse`, `validate`, `compile`, `Options`, the error).
//!
//! Library code never panics, prints or exits: every failure is a typed
//! error that names what was wrong and where.
//!
//! ## Public surface
//!
//! [`prelude`] is the door for a caller that compiles specs. Every pass
//! module is public as well, on purpose: each has users outside this crate
//! (the `ccc` binary, the backends render [`schedule`], [`step_graph`] and
//! [`lower`] output, the tests and the bench run one stage at a time). What
//! a module keeps to itself is `pub(crate)` or private inside it (the
//! algorithm composer, the verifier's set algebra, the output folder's
//! bookkeeping), so the public items are the ones a stage hands to the next.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout))]

// The passes (their order is the diagram above). Each is public: a caller can run and
// inspect one stage at a time (tests snapshot the intermediate values).
pub mod accepted;
pub mod algorithms;
pub mod build;
pub mod cost;
pub mod encode;
pub mod hlo;
pub mod lower;
pub mod parse;
pub mod placement;
pub mod schedule;
pub mod sign;
pub mod step_graph;
pub mod valid;
pub mod validate;
pub mod verify;

// Running them, and what a compile leaves behind.
mod compiled;
pub mod diagnose;
pub mod explain;
pub mod manifest;
pub mod output;
pub mod pipeline;
pub mod prelude;

#[cfg(test)]
pub(crate) mod testing;
