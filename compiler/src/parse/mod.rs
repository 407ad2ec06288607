//! parse: RON text into a [`Program`], with line/column errors.
//!
//! A spec file holds either one `Collective(...)` (the struct name is
//! optional, as RON allows) or a `Program(collectives: [...])`. Which one is
//! decided by the first significant token — whitespace, `//` and `/* */`
//! comments and `#![enable(...)]` attributes are skipped — so that an error
//! inside a program is reported against the program's schema and not as
//! "expected `Collective`". `implicit_some` is on, so `root: 0` and
//! `groups: [[...]]` need no `Some(...)`.
//!
//! Positions are lost once parsing succeeds (RON has no `Spanned<T>`): later
//! passes locate problems by field path instead.
//!
//! A leading UTF-8 byte-order mark ([`BOM`]) is skipped: some editors write
//! one, and it is not part of the spec. Positions count from the char after
//! it, as an editor shows them.
//!
//! Errors stay small whatever the input: a token longer than
//! [`QUOTE_MAX_CHARS`] is quoted as an excerpt with its length
//! (`` `aaaa…` (4194304 bytes) ``), and a message is cut after
//! [`MESSAGE_MAX_BYTES`].

mod error;
mod scan;

pub use error::{
    MESSAGE_MAX_BYTES, ParseError, ParseErrorKind, QUOTE_MAX_CHARS, SourceSpan, bound_message, chosen_auto,
    chosen_auto_help, names_of, nearest, quote, whole_number_accepted, whole_number_help,
};
pub use scan::LineCol;

use ccc_ir::spec::{Collective, Program};
use error::error_from_ron;
use ron::extensions::Extensions;
use scan::skip_trivia;

/// The byte-order mark some editors write at the start of a UTF-8 file.
pub const BOM: char = '\u{feff}';

/// The largest spec ccc reads: 16 MiB. A spec is a page of RON; even a
/// replica group list over a million ranks is under 8 MiB. The CLI reads a
/// spec file under this cap, and the Python module refuses longer text.
pub const SPEC_MAX_BYTES: u64 = 16 << 20;

/// `src` without one leading [`BOM`].
pub fn strip_bom(src: &str) -> &str {
    src.strip_prefix(BOM).unwrap_or(src)
}

/// What the file held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecForm {
    /// One `Collective(...)` (or an anonymous `(...)`).
    Collective,
    /// A `Program(collectives: [...])`.
    Program,
}

impl SpecForm {
    /// The struct name the file is parsed as.
    pub const fn struct_name(self) -> &'static str {
        match self {
            SpecForm::Collective => "Collective",
            SpecForm::Program => "Program",
        }
    }
}

/// A parsed spec: always a [`Program`] (a lone collective becomes a program
/// of one), and the form the file was written in (for error paths).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedSpec {
    /// The collectives.
    pub program: Program,
    /// How the file was written.
    pub form: SpecForm,
}

/// The RON options every spec is read with: `implicit_some` on.
fn options() -> ron::Options {
    ron::Options::default().with_default_extension(Extensions::IMPLICIT_SOME)
}

/// Parses a spec file's text.
///
/// # Errors
///
/// [`ParseError`] with RON's message and the span of the offending token
/// when the text is not RON, or not of the spec schema (unknown field or
/// variant, missing field, wrong struct name, trailing text, ...).
pub fn parse(src: &str) -> Result<ParsedSpec, ParseError> {
    let src = strip_bom(src);
    let form = detect_form(src);
    let program = match form {
        SpecForm::Collective => read::<Collective>(src).map(Program::from),
        SpecForm::Program => read::<Program>(src),
    }
    .map_err(|e| {
        let (e, path) = *e;
        error_from_ron(src, form, "the spec", e, path)
    })?;
    Ok(ParsedSpec { program, form })
}

/// `src` read as a `T` written in a spec's RON (an HLO target, the
/// command line's `--algorithm`): a problem is said as [`parse`] says one
/// of a collective's fields, its path from `T`'s root (`model.launch_ns`),
/// and the whole named `text` (`the target`: `the target is empty`).
///
/// # Errors
///
/// [`ParseError`], as [`parse`]'s.
pub fn parse_part<T: serde::de::DeserializeOwned>(src: &str, text: &str) -> Result<T, ParseError> {
    let src = strip_bom(src);
    read::<T>(src).map_err(|e| {
        let (e, path) = *e;
        error_from_ron(src, SpecForm::Collective, text, e, path)
    })
}

/// `src` as a `T`, as [`ron::Options::from_str`] reads it, tracking the
/// path of the value being read: on failure, RON's error and that path
/// (`collectives[1].topology`; `None` before any value is entered), boxed.
fn read<T: serde::de::DeserializeOwned>(src: &str) -> Result<T, Box<(ron::error::SpannedError, Option<String>)>> {
    let mut de = ron::Deserializer::from_str_with_options(src, &options()).map_err(|e| Box::new((e, None)))?;
    let mut track = serde_path_to_error::Track::new();
    let value = T::deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track));
    let value = value.map_err(|e| {
        let path = track.path().to_string();
        Box::new((de.span_error(e), (path != ".").then_some(path)))
    })?;
    de.end().map_err(|e| Box::new((de.span_error(e), None)))?;
    Ok(value)
}

/// The form of a spec, from its first significant token: the identifier
/// `Program` makes it a program, anything else a collective.
pub fn detect_form(src: &str) -> SpecForm {
    let rest = skip_trivia(src, true);
    let ident_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    if rest.get(..ident_len) == Some("Program") { SpecForm::Program } else { SpecForm::Collective }
}

#[cfg(test)]
mod tests;
