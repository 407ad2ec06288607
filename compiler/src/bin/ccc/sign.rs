//! `ccc sign`: the collective signature, 32 lower-case hex digits and a
//! newline, nothing else.

use crate::Failure;
use crate::args::SpecArg;
use crate::compile::compile_failure;
use crate::load::load_spec;
use ccc_compiler::build::build;
use std::process::ExitCode;

/// Runs `ccc sign`.
pub fn run(args: &SpecArg) -> Result<ExitCode, Failure> {
    let (_, valid) = load_spec(&args.spec, &args.hlo)?;
    let schedule = build(&valid).map_err(|e| compile_failure(&args.spec, e.into()))?;
    crate::check::refuse_unlowerable(&args.spec, &valid, Some(&schedule))?;
    crate::out::emit(&format!("{}\n", ccc_compiler::sign::sign(&valid, &schedule).digest))?;
    Ok(ExitCode::SUCCESS)
}
