//! The exact bytes ccc emits, each format with one encoder and its mirror
//! decoder. See `docs/wire-format.md` for the field tables.

pub mod bytes;
pub mod ctrl_spad;
pub mod ctrl_word;
pub mod neff_configs;
pub mod slot_spad;
pub mod tp;

pub use bytes::{DecodeError, DecodeErrorKind, EncodeError};
