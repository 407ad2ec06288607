//! The passes in order, readable top to bottom: the one call a framework
//! (or the CLI) makes to turn a spec into images.
//!
//! Beside the flow in this file: [`Options`] and progress reports in
//! `options.rs`, the errors in `error.rs`, the checks made before any
//! world-sized work in `budget.rs`, the ranks lowered and encoded in
//! parallel in `ranks.rs`, the proof in `prove.rs`, and compiling under an
//! earlier compile's proof ([`Options::certificate`]) in `certificate.rs`.

use crate::build::build;
pub use crate::compiled::Compiled;
use crate::encode::encode;
use crate::lower::{LowerError, LowerErrorKind};
use crate::parse::{ParsedSpec, parse};
use crate::schedule::Schedule;
use crate::sign::sign;
use crate::valid::ValidProgram;
use crate::validate::validate;
pub use crate::verify::Proof;
use ccc_ir::id::Rank;

mod budget;
mod certificate;
mod error;
mod options;
mod prove;
mod ranks;

pub use error::{CertificateError, CompileError, MemoryError, WayOut};
pub use options::{DEFAULT_MEMORY_BUDGET, Options, PROGRESS_REPORTS, Progress, ProgressFn, Stage};
use options::{ProofSource, Ticker};
use ranks::first_error_early;
pub use ranks::lower_ranks;

/// Compiles a validated program: build, lower, encode, prove, sign.
///
/// The proof is what [`Options`] asks: the whole proof, none, or the
/// world's taken from a certificate with the ranks emitted checked alone.
/// Everything that can be known before world-sized work is checked first
/// (`budget.rs`); then the ranks asked for are lowered (every rank when
/// proving), encoded and proven, stopping at the first rank that fails.
///
/// # Errors
///
/// The first failing pass's error. Nothing is returned half-done.
pub fn compile(valid: &ValidProgram, options: &Options) -> Result<Compiled, CompileError> {
    let source = options.proof_source();
    if let ProofSource::Certificate(certificate) = source {
        certificate::check_intact(certificate)?;
    }
    let schedule = build(valid)?;
    let signature = sign(valid, &schedule);
    if let ProofSource::Certificate(certificate) = source {
        certificate::check_vouches(certificate, &schedule, &signature)?;
    }
    let wanted = wanted_ranks(&schedule, &options.ranks)?;
    budget::check(&schedule, &wanted, source, options)?;
    let (programs, images, proof) = match source {
        ProofSource::Prove(prover) => {
            let asked = prove::lower_asked(&schedule, &wanted, prover, options)?;
            let images = first_error_early(&asked.programs, |p| encode(p, schedule.arch))?;
            let (programs, proof) = prove::prove(&schedule, &wanted, asked, &images, options)?;
            (programs, images, Some(proof))
        }
        ProofSource::Certificate(certificate) => {
            let (programs, images) = ranks::lower_and_encode(&schedule, &wanted, options)?;
            let proof = certificate::prove_own_ranks(certificate, &schedule, &programs, &images, options)?;
            (programs, images, Some(proof))
        }
        ProofSource::Skip => {
            let (programs, images) = ranks::lower_and_encode(&schedule, &wanted, options)?;
            (programs, images, None)
        }
    };
    Ok(Compiled { schedule, signature, programs, images, proof })
}

/// Parses, validates and compiles RON source: the three calls a caller
/// holding text makes, kept as one because the README, the examples and
/// the example tests start from text (it adds nothing to [`compile`]).
///
/// # Errors
///
/// The first failing pass's error.
pub fn compile_source(src: &str, options: &Options) -> Result<(ParsedSpec, ValidProgram, Compiled), CompileError> {
    let parsed = parse(src)?;
    let valid = validate(&parsed.program)?;
    let compiled = compile(&valid, options)?;
    Ok((parsed, valid, compiled))
}

/// The ranks to emit, ascending and once each (every rank when none is
/// named).
fn wanted_ranks(schedule: &Schedule, ranks: &[Rank]) -> Result<Vec<Rank>, LowerError> {
    let rank_n = schedule.shape.rank_n;
    let mut wanted: Vec<Rank> = if ranks.is_empty() { (0..rank_n).map(Rank).collect() } else { ranks.to_vec() };
    wanted.sort_unstable();
    wanted.dedup();
    match wanted.iter().find(|r| r.0 >= rank_n) {
        Some(&rank) => {
            let kind = LowerErrorKind::NoSuchRank { rank_n };
            Err(LowerError { rank, topsp: None, collective: None, step: None, kind })
        }
        None => Ok(wanted),
    }
}
