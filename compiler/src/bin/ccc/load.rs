//! Reading a spec file: read, parse, validate. Every verb that takes a spec
//! starts here, so every verb reports a bad spec the same way (exit 2).

use crate::Failure;
use crate::report::{parse_report, validation_report};
use ccc_compiler::parse::{ParsedSpec, parse};
use ccc_compiler::valid::ValidProgram;
use ccc_compiler::validate::validate;
use std::path::Path;

/// Reads, parses and validates the spec at `path`.
///
/// # Errors
///
/// A bad-input [`Failure`] (exit 2): the file cannot be read (naming the
/// path and the OS error), is not RON of the spec schema (a snippet with the
/// token marked), or breaks a rule (every problem, by field path).
pub fn load_spec(path: &Path) -> Result<(ParsedSpec, ValidProgram), Failure> {
    let name = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| Failure::input(miette::miette!("cannot read {name}: {e}")))?;
    let parsed = parse(&src).map_err(|e| Failure::input(parse_report(&name, &src, &e)))?;
    let valid =
        validate(parsed.program.clone()).map_err(|e| Failure::input(validation_report(&name, parsed.form, &e)))?;
    Ok((parsed, valid))
}
