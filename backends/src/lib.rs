//! # ccc-backends: renderings of ccc's images for people and tools
//!
//! ccc emits three raw images per (rank, TOP_SP) — the CTRL SPAD slot chain,
//! the SLOT SPAD `tp_inc_steps` and the 3592-byte `neff_configs` block
//! (`docs/wire-format.md`). The `ir` crate decodes each into typed values;
//! this crate turns those values into text, one module per kind of view:
//!
//! | module | view | CTRL SPAD | SLOT SPAD | neff_configs |
//! |---|---|---|---|---|
//! | [`hexdump`] | `offset \| bytes \| meaning`, one line per word or field | [`hexdump::ctrl`] | [`hexdump::slot`] | [`hexdump::neff`] |
//! | [`json`] | the vendor dumper's JSON shape, keys in its order | [`json::ctrl`] | [`json::slot`] | [`json::neff`] |
//! | [`text_log`] | the vendor runtime's log lines, byte for byte | [`text_log::ctrl`] | [`text_log::slot`] | — |
//!
//! [`dot`] renders the compiler's step graph (not an image) in Graphviz DOT.
//!
//! Every renderer has the same small shape: a pure function from a decoded
//! value (plus the few options the view needs: the arch table that names
//! semaphore addresses, the device and TOP_SP a log line carries) to a
//! `String` ending in a newline. Nothing here reads files, prints, knows of
//! terminals or exits: the `ccc` binary picks the view and writes it, and the
//! compiler's snapshot tests call the same functions on the values they
//! produce, so a snapshot and `ccc decode` print the same thing.
//!
//! A CTRL SPAD image is taken as `&[(u64, CtrlWord)]`, each word with its
//! byte offset, as `ccc_ir::wire::ctrl_word::decode_words` returns it: word by
//! word, not the stricter chain parse, so any raw image can be shown.
//!
//! Only [`json`] can fail (serde_json's error type); the text views cannot.
//!
//! [`fuzz`] is the one-input entry point of every fuzz target (`fuzz/`,
//! `docs/fuzzing.md`): this crate sees every layer `ccc` runs on a file —
//! the front end, the decoders and these renderings.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod dot;
pub mod fuzz;
pub mod hexdump;
pub mod json;
pub mod plot;
pub mod text_log;
