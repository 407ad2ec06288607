//! # ccc-ir: the vocabulary of the collective schedule compiler
//!
//! A collective on a Trainium-class accelerator is not code: each TOP_SP's
//! sync core walks a chain of 8-byte scheduler words (`spad_ctrl_entry`),
//! each op word one step group of a ring or mesh algorithm, chained with
//! `trigger_next` and closed by END marks, each driving a list of DMA
//! tail-pointer increments (`tp_inc_steps`), all configured by a 3592-byte
//! `neff_configs` block. This crate names every piece of that:
//!
//! - [`spec`]: what the user asks for — a [`spec::Collective`] or a
//!   [`spec::Program`] of them; its serde form is the RON schema. In code,
//!   `Collective::new(op, dtype, count, arch, topology)` and chained setters
//!   build one (`.algorithm(AlgType::Ring)`, `.algorithm(HierLegs::new()
//!   .intra_reduce_scatter(AlgType::Ring) ...)`): [`enums::AlgType`] is the
//!   one name of an algorithm, flat or a Hier leg.
//! - [`enums`]: the vendor's wire enums with their exact discriminants. Mind
//!   the three algorithm axes: [`enums::DevicePattern`] is the only one on the
//!   wire, [`enums::AlgType`] is the host's choice, [`enums::MetaringType`] is
//!   derived.
//! - [`arch`]: the per-architecture table (TOP_SPs, region sizes, mesh event
//!   limits) and semaphore addresses.
//! - [`id`]: typed identifiers that print the same everywhere (`rank 5`).
//! - [`noun`]: counted nouns that agree with their number (`1 rank`, `2 ranks`).
//! - [`wire`]: the exact bytes — the CTRL SPAD word ([`wire::ctrl_word`]), the CTRL
//!   SPAD chain ([`wire::ctrl_spad`]), `tp_inc_steps` ([`wire::tp`]) and the
//!   SLOT SPAD image ([`wire::slot_spad`]), the `neff_configs` block
//!   ([`wire::neff_configs`]), over an offset-aware reader/writer
//!   ([`wire::bytes`]). Every encoder has a mirror-image decoder; decoders
//!   refuse reserved bits and name the byte offset.
//!
//! Byte facts are tagged in `docs/wire-format.md`: \[seed\] (confirmed),
//! \[resolved\] and \[project\] (ccc's own, stable under [`FORMAT_VERSION`]).
//!
//! Nothing here panics, prints or allocates globally; every failure is a
//! typed error that carries its values.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout))]

pub mod arch;
mod builder;
pub mod enums;
pub mod id;
mod leg;
pub mod model;
pub mod noun;
pub mod spec;
pub mod wire;

/// The one integer that changes whenever a \[project\] byte layout, or a
/// lowering decision that changes the bytes emitted for the same spec,
/// changes (wire-contract §9). It is written into `manifest.json` and into
/// the signature preimage.
pub const FORMAT_VERSION: u32 = 1;
