//! `ccc decode` (stub; being written).

use crate::Failure;
use crate::args::DecodeArgs;
use std::process::ExitCode;

/// Runs `ccc decode`.
pub fn run(_args: &DecodeArgs) -> Result<ExitCode, Failure> {
    Err(Failure::input(miette::miette!("ccc decode is not built yet")))
}
