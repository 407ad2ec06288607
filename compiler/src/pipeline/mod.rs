//! The passes in order, readable top to bottom: the one call a framework
//! (or the CLI) makes to turn a spec into images.
//!
//! Beside the flow in this file: [`Options`] and progress reports in
//! `options.rs`, the errors in `error.rs`, the checks made before any
//! world-sized work in `budget.rs`, the world streamed through lowering,
//! encoding and the proof a chunk of ranks at a time in `stream.rs` (with
//! the parallel, first-error-in-order map in `ranks.rs`), compiling under
//! an earlier compile's proof ([`Options::certificate`]) in
//! `certificate.rs`, and where the wall time went ([`Times`]) in
//! `times.rs`.

use crate::build::build;
pub use crate::compiled::Compiled;
use crate::cost::auto::legal::exceeded_built;
use crate::lower::{LowerError, LowerErrorKind};
use crate::parse::{ParsedSpec, parse};
use crate::sign::sign;
use crate::valid::ValidProgram;
use crate::validate::validate;
pub use crate::verify::Proof;
use ccc_ir::id::Rank;

mod budget;
mod certificate;
mod error;
mod options;
mod ranks;
mod stream;
mod times;

pub use crate::accepted::accepted_in;
pub use error::{CertificateError, CompileError, MemoryError, UnloweredError, WayOut};
pub use options::{CHUNK_CACHE_BYTES, DEFAULT_CHUNK_RANKS};
pub use options::{CallerHolds, Cancel, DEFAULT_MEMORY_BUDGET, Options, PROGRESS_REPORTS, Progress, ProgressFn, Stage};
use options::{ProofSource, Ticker};
pub use ranks::lower_ranks;
pub use times::Times;
use times::{Ledger, Part};

/// Compiles a validated program: build, lower, encode, prove, sign.
///
/// The proof is what [`Options`] asks: the whole proof, none, or the
/// world's taken from a certificate with the ranks emitted checked alone.
/// Everything that can be known before world-sized work is checked first
/// (`budget.rs`); then the ranks asked for (every rank when proving) are
/// streamed through lowering, encoding and the proof a chunk at a time
/// (`stream.rs`), stopping at the first rank that fails, and kept when
/// [`Options::emit`] asks. Named ranks compiled without a proof have the
/// others judged on the schedule against the limits that depend on the
/// algorithm ([`UnloweredError`]). [`Compiled::times`] says where the wall
/// time went.
///
/// # Errors
///
/// The first failing pass's error; [`CompileError::Cancelled`] once
/// [`Options::cancel`] is set. Nothing is returned half-done.
pub fn compile(valid: &ValidProgram, options: &Options) -> Result<Compiled, CompileError> {
    let source = options.proof_source();
    let mut ledger = Ledger::start(!matches!(source, ProofSource::Skip));
    if let ProofSource::Certificate(certificate) = source {
        certificate::check_intact(certificate)?;
    }
    options.go_on()?;
    // A rank the world does not have is refused before the schedule is
    // built (a framework's mistake costs nothing, whatever the world).
    let wanted = wanted_ranks(valid.topology().rank_n, &options.ranks)?;
    let schedule = build(valid)?;
    options.go_on()?;
    let signature = sign(valid, &schedule);
    if let ProofSource::Certificate(certificate) = source {
        certificate::check_vouches(certificate, &schedule, &signature)?;
    }
    let probe_bytes = budget::check(&schedule, &wanted, source, options).map_err(|e| provable(valid, options, e))?;
    options.go_on()?;
    ledger.lap(Part::Build);
    let chunk_ranks = stream::chunk_ranks(options, probe_bytes);
    let streamed = stream::stream(&schedule, &wanted, source, options, chunk_ranks, &mut ledger)
        .map_err(|e| provable(valid, options, e))?;
    if matches!(source, ProofSource::Skip) && wanted.len() < schedule.shape.rank_n as usize {
        // The ranks named lowered; the others, which neither lowering nor
        // a proof reached, are judged on the schedule as `ccc check`
        // judges them (cheap unless the program comes near a limit).
        if let Some(exceeded) = exceeded_built(valid, &schedule) {
            return Err(UnloweredError { exceeded, arch: valid.arch() }.into());
        }
    }
    // A cancel set while the postcondition proof ran (it runs to its end)
    // is honoured once it ends: no result is returned after one.
    options.go_on()?;
    let (programs, images, proof) = (streamed.programs, streamed.images, streamed.proof);
    Ok(Compiled { schedule, signature, programs, images, proof, times: ledger.finish() })
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

/// `e`, and when it is a collective too large to prove whose algorithm
/// `Auto` chose, with the cheapest of its other choices the prover holds
/// (by prediction, then floor, in the tie-break order): a default compile
/// of a large world can then be proven by writing that choice, where
/// skipping the proof was the only way out it was told.
fn provable(valid: &ValidProgram, options: &Options, e: CompileError) -> CompileError {
    use crate::cost::auto::{Machine, build_alone};
    use crate::verify::VerifyError;
    let CompileError::Verify(VerifyError::TooLarge { collective, cells, limit, provable: None }) = e else { return e };
    let Some(c) = valid.collectives.get(collective as usize) else { return e };
    let Some(choice) = c.auto() else { return e };
    let machine = Machine::of(valid);
    let mut others: Vec<_> = choice.alternatives.iter().filter(|a| a.algorithm != c.algorithm).collect();
    others.sort_by_key(|a| (a.predicted_ns.unwrap_or(u64::MAX), a.floor_ns));
    let provable = others
        .into_iter()
        .find(|a| {
            build_alone(c, machine, &a.algorithm)
                .is_some_and(|s| crate::verify::postcondition::check_cells(&s, &options.prover).is_ok())
        })
        .map(|a| a.algorithm.spec_text());
    VerifyError::TooLarge { collective, cells, limit, provable }.into()
}

/// The ranks to emit, ascending and once each (every rank when none is
/// named).
fn wanted_ranks(rank_n: u32, ranks: &[Rank]) -> Result<Vec<Rank>, LowerError> {
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

#[cfg(test)]
mod tests {
    use super::{Cancel, CompileError, Options, Stage, accepted_in, compile_source};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A ring all-reduce of 4,096 ranks: eight chunks of 512 to stream.
    const WORLD: &str = "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 1048576, arch: Cayman, \
                         topology: (rank_n: 4096, local_rank_n: 16), channels: 2, algorithm: Ring)";

    /// A flag set before the compile stops it before any work; one set
    /// while the world streams (from the progress report of the first
    /// rank lowered) stops it at the next chunk: no rank of a later chunk
    /// is lowered, and the answer is `Cancelled`, not a result.
    #[test]
    fn a_cancelled_compile_stops_at_its_next_chunk() {
        let cancel = Cancel::new();
        cancel.cancel();
        let options = Options { cancel: Some(cancel), ..Options::default() };
        assert!(matches!(compile_source(WORLD, &options), Err(CompileError::Cancelled)));

        let cancel = Cancel::new();
        let lowered = Arc::new(AtomicU64::new(0));
        let (flag, seen) = (cancel.clone(), Arc::clone(&lowered));
        let progress = move |p: super::Progress| {
            if p.stage == Stage::Lower && p.done > 0 {
                seen.fetch_max(p.done, Ordering::Relaxed);
                flag.cancel();
            }
        };
        let options = Options { cancel: Some(cancel), progress: Some(Arc::new(progress)), ..Options::default() };
        assert!(matches!(compile_source(WORLD, &options), Err(CompileError::Cancelled)));
        let done = lowered.load(Ordering::Relaxed);
        assert!((1..=512).contains(&done), "{done} ranks lowered, of 4096");

        // Set while the postcondition proof runs (it runs to its end): the
        // answer is still `Cancelled` (it was the whole result).
        let cancel = Cancel::new();
        let flag = cancel.clone();
        let progress = move |p: super::Progress| {
            if p.stage == Stage::Postcondition {
                flag.cancel();
            }
        };
        let options = Options { cancel: Some(cancel), progress: Some(Arc::new(progress)), ..Options::default() };
        assert!(matches!(compile_source(WORLD, &options), Err(CompileError::Cancelled)));

        // Never set, the same options compile.
        let options = Options { cancel: Some(Cancel::new()), ..Options::default() };
        assert!(compile_source(WORLD, &options).is_ok());
    }

    /// What a failed compile says would be accepted, as data: a parse
    /// error's, a validation's of one problem (each of several has its
    /// own); none for a cancelled compile.
    #[test]
    fn a_compile_error_says_what_would_be_accepted() {
        let spec = |fields: &str| {
            format!(
                "Collective(op: AllReduce, dtype: Bf16, reduce: Add, arch: Cayman, topology: (rank_n: 8, \
                 local_rank_n: 8), algorithm: Ring, {fields})"
            )
        };
        let accepted =
            |fields: &str| compile_source(&spec(fields), &Options::default()).err().and_then(|e| e.accepted());
        assert_eq!(accepted("count: 64, channels: 33").as_deref(), Some("1..=32"));
        assert_eq!(accepted("count: 1.5").as_deref(), Some("a whole number"));
        // Out of an integer's bounds, or not a number: the field's range
        // (it was none).
        assert_eq!(accepted("count: 64, channels: -1").as_deref(), Some("a whole number from 1 to 32"));
        let count = Some("a whole number from 1, of at most 2^64 - 1 bytes of its dtype");
        assert_eq!(accepted("count: 99999999999999999999").as_deref(), count);
        assert_eq!(accepted("count: 1e6").as_deref(), count);
        assert_eq!(accepted("count: 64, channels: nan").as_deref(), Some("a whole number from 1 to 32"));
        let misspelt = accepted("count: 64, chanels: 2").unwrap_or_default();
        assert!(misspelt.starts_with("one of `op`, `dtype`") && misspelt.contains("`channels`"), "{misspelt}");
        // Two problems: each its own.
        let Err(CompileError::Validate(two)) = compile_source(&spec("count: 0, channels: 33"), &Options::default())
        else {
            panic!("two problems");
        };
        let each: Vec<Option<String>> = two.0.iter().map(|e| e.accepted()).collect();
        assert_eq!(each, [Some("1..=32".to_owned()), Some("1..=9223372036854775807".to_owned())]);
        assert_eq!(CompileError::Validate(two).accepted(), None);
        assert_eq!(CompileError::Cancelled.accepted(), None);
        // RON's wording for a variant: between `expected ` and ` instead`,
        // and never from inside "Unexpected".
        assert_eq!(accepted_in("Unexpected variant `X`, expected `A` or `B` instead").as_deref(), Some("`A` or `B`"));
        assert_eq!(accepted_in("Unexpected end"), None);
        // Outside a parse error, only ccc's own `accepted: ` counts: a
        // failed proof's "where 4 are expected (and 2 more defects)" is
        // not what would be accepted.
        assert_eq!(crate::accepted::accepted_after("16 elements where 4 are expected (and 2 more defects)"), None);
    }
}
