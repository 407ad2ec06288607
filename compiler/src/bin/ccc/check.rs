//! `ccc check` (stub; being written).

use crate::Failure;
use crate::args::SpecArg;
use std::process::ExitCode;

/// Runs `ccc check`.
pub fn run(_args: &SpecArg) -> Result<ExitCode, Failure> {
    Err(Failure::input(miette::miette!("ccc check is not built yet")))
}
