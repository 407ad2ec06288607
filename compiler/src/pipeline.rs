//! The passes in order, readable top to bottom: the one call a framework
//! (or the CLI) makes to turn a spec into images.

use crate::build::{BuildError, build};
use crate::encode::{ImageError, RankImages, encode};
use crate::lower::{LowerError, LowerErrorKind, RankProgram, lower};
use crate::parse::{ParseError, ParsedSpec, parse};
use crate::schedule::Schedule;
use crate::sign::{Signature, sign};
use crate::valid::ValidProgram;
use crate::validate::{ValidationErrors, validate};
use crate::verify::VerifyError;
use crate::verify::postcondition::{self, AsBuilt, CollectivePostcondition};
use crate::verify::protocol::{self, ProtocolProof};
use crate::verify::roundtrip;
use ccc_ir::id::Rank;
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// What to compile.
#[derive(Clone, Debug)]
pub struct Options {
    /// The ranks to emit images for; empty means every rank.
    pub ranks: Vec<Rank>,
    /// Prove the schedule before emitting (the default).
    pub verify: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { ranks: Vec::new(), verify: true }
    }
}

/// What the proof established, and what it cost.
#[derive(Clone, Debug)]
pub struct Proof {
    /// Per collective: the postcondition proven by symbolic execution.
    pub postcondition: Vec<CollectivePostcondition>,
    /// The protocol replay over every rank's records.
    pub protocol: ProtocolProof,
    /// Images decoded back to their records.
    pub images_checked: u64,
    /// Time spent proving postconditions.
    pub postcondition_time: Duration,
    /// Time spent replaying the protocol (and lowering the ranks that were
    /// not asked for, which only the proof needs).
    pub protocol_time: Duration,
    /// Time spent on round trips.
    pub roundtrip_time: Duration,
}

impl Proof {
    /// Total proof time.
    pub fn time(&self) -> Duration {
        self.postcondition_time + self.protocol_time + self.roundtrip_time
    }
}

/// A compiled program.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The schedule every rank shares.
    pub schedule: Schedule,
    /// The collective signature.
    pub signature: Signature,
    /// The lowered programs of the ranks asked for, in rank order.
    pub programs: Vec<RankProgram>,
    /// Their images, in the same order.
    pub images: Vec<RankImages>,
    /// The proof, unless skipped.
    pub proof: Option<Proof>,
}

/// Any pass's failure.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CompileError {
    /// The text is not a spec.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The spec breaks rules.
    #[error(transparent)]
    Validate(#[from] ValidationErrors),
    /// The algorithms could not be composed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A rank does not fit the device.
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// The proof failed, or could not be attempted.
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// An image does not fit its region.
    #[error(transparent)]
    Image(#[from] ImageError),
}

/// Parses, validates and compiles RON source.
///
/// # Errors
///
/// The first failing pass's error.
pub fn compile_source(src: &str, options: &Options) -> Result<(ParsedSpec, ValidProgram, Compiled), CompileError> {
    let parsed = parse(src)?;
    let valid = validate(parsed.program.clone())?;
    let compiled = compile(&valid, options)?;
    Ok((parsed, valid, compiled))
}

/// Compiles a validated program: build, lower, verify, encode, sign.
///
/// # Errors
///
/// The first failing pass's error. Nothing is returned half-done.
pub fn compile(valid: &ValidProgram, options: &Options) -> Result<Compiled, CompileError> {
    let schedule = build(valid)?;
    let rank_n = schedule.shape.rank_n;
    let mut wanted: Vec<Rank> =
        if options.ranks.is_empty() { (0..rank_n).map(Rank).collect() } else { options.ranks.clone() };
    wanted.sort_unstable();
    wanted.dedup();
    if let Some(&bad) = wanted.iter().find(|r| r.0 >= rank_n) {
        return Err(LowerError {
            rank: bad,
            topsp: None,
            collective: None,
            step: None,
            kind: LowerErrorKind::NoSuchRank { rank_n },
        }
        .into());
    }
    let (programs, mut proof) = if options.verify {
        let t = Instant::now();
        let post = postcondition::prove(&schedule, &AsBuilt)?;
        let postcondition_time = t.elapsed();
        let t = Instant::now();
        let world = lower_ranks(&schedule, &(0..rank_n).map(Rank).collect::<Vec<_>>())?;
        // Lowering the ranks asked for is compile work; lowering the others
        // is proof work (the replay needs every rank's records).
        let unasked = t.elapsed().mul_f64(1.0 - wanted.len() as f64 / f64::from(rank_n.max(1)));
        let t = Instant::now();
        let protocol = protocol::prove(&schedule, &world)?;
        let protocol_time = t.elapsed() + unasked;
        let programs = if wanted.len() == world.len() {
            world
        } else {
            wanted.iter().filter_map(|r| world.get(r.0 as usize).cloned()).collect()
        };
        let proof = Proof {
            postcondition: post,
            protocol,
            images_checked: 0,
            postcondition_time,
            protocol_time,
            roundtrip_time: Duration::ZERO,
        };
        (programs, Some(proof))
    } else {
        (lower_ranks(&schedule, &wanted)?, None)
    };
    let arch = schedule.arch;
    let images = first_error(programs.par_iter().map(|p| encode(p, arch)).collect())?;
    if let Some(proof) = proof.as_mut() {
        let t = Instant::now();
        let checked: Vec<Result<u64, VerifyError>> =
            programs.par_iter().zip(&images).map(|(p, i)| roundtrip::prove(p, i)).collect();
        proof.images_checked = first_error(checked)?.iter().sum();
        proof.roundtrip_time = t.elapsed();
    }
    let signature = sign(valid, &schedule);
    Ok(Compiled { schedule, signature, programs, images, proof })
}

/// Lowers `ranks` in parallel; the result is in the order asked, and the
/// error (if any) is the first in that order, whatever the thread count.
///
/// # Errors
///
/// The first rank's [`LowerError`].
pub fn lower_ranks(schedule: &Schedule, ranks: &[Rank]) -> Result<Vec<RankProgram>, LowerError> {
    first_error(ranks.par_iter().map(|&r| lower(schedule, r)).collect())
}

fn first_error<T, E>(results: Vec<Result<T, E>>) -> Result<Vec<T>, E> {
    results.into_iter().collect()
}
