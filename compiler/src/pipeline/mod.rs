//! The passes in order, readable top to bottom: the one call a framework
//! (or the CLI) makes to turn a spec into images.
//!
//! Beside the flow in this file: [`Options`] and progress reports in
//! `options.rs`, the errors in `error.rs`, the checks made before any
//! world-sized work in `budget.rs`, and compiling under an earlier
//! compile's proof ([`compile_certified`]) in `certificate.rs`.

use crate::build::build;
use crate::encode::{RankImages, encode};
use crate::lower::{LowerError, LowerErrorKind, RankProgram, lower, lower_watched};
use crate::parse::{ParsedSpec, parse};
use crate::schedule::Schedule;
use crate::sign::{Signature, sign};
use crate::valid::ValidProgram;
use crate::validate::validate;
use crate::verify::postcondition::{self, CollectivePostcondition};
use crate::verify::protocol::{self, ProtocolProof};
use crate::verify::roundtrip;
use crate::verify::symmetry::{Bases, Seen, Symmetry};
use crate::verify::{ProverOptions, VerifyError};
use ccc_ir::id::Rank;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

mod budget;
mod certificate;
mod error;
mod options;

use budget::{PROBE_FROM, estimate, probe};
pub use certificate::compile_certified;
pub use error::{CertificateError, CompileError, MemoryError, WayOut};
use options::Ticker;
pub use options::{DEFAULT_MEMORY_BUDGET, Options, PROGRESS_REPORTS, Progress, ProgressFn, Stage};

/// What the proof established, and what it cost.
#[derive(Clone, Debug)]
pub struct Proof {
    /// Per collective: the postcondition proven by symbolic execution.
    pub postcondition: Vec<CollectivePostcondition>,
    /// The protocol proof over every rank's records.
    pub protocol: ProtocolProof,
    /// Replica groups whose every member was seen, at every step, to run
    /// member 0's program moved to it (see `verify::symmetry`): both
    /// provers ran on member 0 alone for them (0 when certified: the
    /// certificate does not say).
    pub symmetric_groups: u64,
    /// Images decoded back to their records.
    pub images_checked: u64,
    /// Time spent proving postconditions.
    pub postcondition_time: Duration,
    /// Time spent on the protocol proof, including lowering the ranks that
    /// were not asked for (only the proof needs them).
    pub protocol_time: Duration,
    /// Time spent on round trips.
    pub roundtrip_time: Duration,
    /// `true` when the postcondition and protocol figures come from the
    /// certificate of an earlier compile of the same schedule (see
    /// [`compile_certified`]) and this compile checked only its own ranks'
    /// chains and images.
    pub certified: bool,
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

/// Parses, validates and compiles RON source.
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

/// Compiles a validated program: build, lower, verify, encode, sign.
///
/// # Errors
///
/// The first failing pass's error. Nothing is returned half-done.
pub fn compile(valid: &ValidProgram, options: &Options) -> Result<Compiled, CompileError> {
    compile_tuned(valid, options, &ProverOptions::default())
}

/// [`compile`] with explicit prover tuning (which never changes a result).
///
/// # Errors
///
/// As [`compile`].
pub fn compile_tuned(
    valid: &ValidProgram,
    options: &Options,
    prover: &ProverOptions,
) -> Result<Compiled, CompileError> {
    let schedule = build(valid)?;
    let verify = if options.verify { Verify::Prove(prover) } else { Verify::Skip };
    compile_built(valid, schedule, options, verify)
}

/// How [`compile_built`] checks what it emits.
#[derive(Clone, Copy)]
pub(super) enum Verify<'a> {
    /// The whole proof.
    Prove(&'a ProverOptions),
    /// Nothing (`--no-verify`, or a certificate checked by the caller).
    Skip,
}

/// Lowers, encodes, proves (if asked) and signs a built schedule.
///
/// Everything that can be known before world-sized work is checked first:
/// a few representative ranks ([`probes`]) are lowered and encoded, so a
/// schedule that does not fit the device (mesh events, records, SPAD
/// sizes per TOP_SP) is refused at the cost of those ranks; the full
/// postcondition runs the proof will surely need must fit the prover's
/// cells; and the memory the compile will hold, estimated from the probes,
/// must fit [`Options::memory_budget`]. Only then are the ranks lowered,
/// every rank when proving, stopping at the first that fails.
pub(super) fn compile_built(
    valid: &ValidProgram,
    schedule: Schedule,
    options: &Options,
    verify: Verify<'_>,
) -> Result<Compiled, CompileError> {
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
    let proving = matches!(verify, Verify::Prove(_));
    if proving || wanted.len() >= PROBE_FROM {
        let probed = probe(&schedule, &wanted)?;
        if let Verify::Prove(prover) = verify {
            postcondition::check_cells(&schedule, prover)?;
        }
        let prover = match verify {
            Verify::Prove(prover) => Some(prover),
            Verify::Skip => None,
        };
        let estimate = estimate(&schedule, &probed, wanted.len() as u64, prover);
        if estimate.proof.saturating_add(estimate.emit) > options.memory_budget {
            return Err(MemoryError {
                needed: estimate.proof.saturating_add(estimate.emit),
                budget: options.memory_budget,
                proof: estimate.proof,
                emit: estimate.emit,
                ranks: wanted.len() as u64,
                rank_n,
            }
            .into());
        }
    }
    // Member 0's transfers of each group, for the watches below: proof work.
    let t = Instant::now();
    let bases = match verify {
        Verify::Prove(prover) if prover.symmetry => Some(Bases::new(&schedule)),
        _ => None,
    };
    let bases_time = t.elapsed();
    // Compile work first: lowering and encoding the ranks asked for is what
    // a rank costs. When proving, lowering also shows each rank's step
    // graph to a watch (see `Bases`).
    let lowered = if proving { rank_n as usize } else { wanted.len() };
    let lowering = Ticker::start(options, Stage::Lower, lowered as u64);
    let (programs, seen) = lower_ranks_watched(&schedule, &wanted, bases.as_ref(), &lowering)?;
    let arch = schedule.arch;
    let images = first_error_early(&programs, |p| encode(p, arch))?;
    let proof = match verify {
        Verify::Prove(prover) => {
            let watched = Watched { bases, seen, time: bases_time };
            Some(prove(&schedule, &wanted, &programs, &images, prover, watched, options, &lowering)?)
        }
        Verify::Skip => None,
    };
    let signature = sign(valid, &schedule);
    Ok(Compiled { schedule, signature, programs, images, proof })
}

/// Proves the schedule: the postcondition over the step graph, the protocol
/// over every rank's records (lowering the ranks not asked for), and the
/// round trip of the images that were encoded.
#[allow(clippy::too_many_arguments)]
fn prove(
    schedule: &Schedule,
    wanted: &[Rank],
    programs: &[RankProgram],
    images: &[RankImages],
    prover: &ProverOptions,
    watched: Watched,
    options: &Options,
    lowering: &Ticker<'_>,
) -> Result<Proof, CompileError> {
    let rank_n = schedule.shape.rank_n;
    // The protocol proof checks every rank's records: lower the ranks not
    // asked for now (proof work, watched like the others), and put the
    // ones asked for in their places.
    let t = Instant::now();
    let Watched { bases, mut seen, time: bases_time } = watched;
    let others: Vec<Rank> = (0..rank_n).map(Rank).filter(|r| wanted.binary_search(r).is_err()).collect();
    let (others, others_seen) = lower_ranks_watched(schedule, &others, bases.as_ref(), lowering)?;
    seen.extend(others_seen);
    let lowering_time = t.elapsed();
    // The symmetric groups, from what the watches saw: postcondition
    // work, shared with the protocol proof.
    let t = Instant::now();
    let symmetry = bases.map_or_else(Symmetry::none, |b| b.symmetry(schedule, &seen));
    let symmetric_groups = symmetry.symmetric_groups();
    let members: u64 =
        schedule.collectives.iter().map(|p| u64::from(p.groups.group_n()) * u64::from(p.groups.size())).sum();
    let proving = Ticker::start(options, Stage::Postcondition, members);
    let post = postcondition::prove_as_built_reporting(schedule, &symmetry, prover, &|n| proving.tick(n))?;
    let postcondition_time = bases_time + t.elapsed();
    let t = Instant::now();
    let checking = Ticker::start(options, Stage::Protocol, u64::from(rank_n));
    let tick = || checking.tick(1);
    let protocol = if others.is_empty() {
        protocol::prove_reporting(schedule, programs, &symmetry, &tick)?
    } else {
        let mut lowered = others.into_iter();
        let mut asked = programs.iter();
        let world: Vec<RankProgram> = (0..rank_n)
            .filter_map(|r| if wanted.binary_search(&Rank(r)).is_ok() { asked.next().cloned() } else { lowered.next() })
            .collect();
        protocol::prove_reporting(schedule, &world, &symmetry, &tick)?
    };
    let protocol_time = lowering_time + t.elapsed();
    let t = Instant::now();
    let images_checked = prove_roundtrips(programs, images, options)?;
    Ok(Proof {
        postcondition: post,
        protocol,
        images_checked,
        postcondition_time,
        protocol_time,
        roundtrip_time: t.elapsed(),
        symmetric_groups,
        certified: false,
    })
}

/// What the proof starts from when lowering watched the step graph: member
/// 0's transfers of each group, what each lowered rank's watch saw, and the
/// time listing the bases took.
struct Watched {
    bases: Option<Bases>,
    seen: Vec<Seen>,
    time: Duration,
}

/// [`lower_ranks`], each rank's step graph shown to a watch of `bases` as
/// it is lowered (no watch without bases), each rank lowered counted by
/// `ticker`.
fn lower_ranks_watched(
    schedule: &Schedule,
    ranks: &[Rank],
    bases: Option<&Bases>,
    ticker: &Ticker<'_>,
) -> Result<(Vec<RankProgram>, Vec<Seen>), LowerError> {
    let Some(bases) = bases else {
        let programs = first_error_early(ranks, |&r| {
            let program = lower(schedule, r);
            ticker.tick(1);
            program
        })?;
        return Ok((programs, Vec::new()));
    };
    let lowered = first_error_early(ranks, |&r| {
        let mut watch = bases.watch(r);
        let program = lower_watched(schedule, r, &mut |plan, node| watch.see(plan, node)).map(|p| (p, watch.finish()));
        ticker.tick(1);
        program
    })?;
    Ok(lowered.into_iter().unzip())
}

/// Lowers `ranks` in parallel; the result is in the order asked, and the
/// error (if any) is the first in that order, whatever the thread count.
///
/// # Errors
///
/// The first rank's [`LowerError`].
pub fn lower_ranks(schedule: &Schedule, ranks: &[Rank]) -> Result<Vec<RankProgram>, LowerError> {
    first_error_early(ranks, |&r| lower(schedule, r))
}

/// Decodes each image back and checks it against its program; the number
/// of images checked.
pub(super) fn prove_roundtrips(
    programs: &[RankProgram],
    images: &[RankImages],
    options: &Options,
) -> Result<u64, VerifyError> {
    let ticker = Ticker::start(options, Stage::RoundTrip, programs.len() as u64);
    let pairs: Vec<(&RankProgram, &RankImages)> = programs.iter().zip(images).collect();
    let checked = first_error_early(&pairs, |(p, i)| {
        let checked = roundtrip::prove(p, i);
        ticker.tick(1);
        checked
    })?;
    Ok(checked.iter().sum())
}

/// Maps `items` in parallel, in order, stopping early at a failure: the
/// error returned is the first in input order, whatever the thread count
/// (a parallel collect into `Result` would return whichever failed first
/// in time). Once item `i` has failed, items after it are skipped; every
/// item before the lowest failing index still runs, so that index's error
/// is the first in order.
fn first_error_early<I, T, E, F>(items: &[I], f: F) -> Result<Vec<T>, E>
where
    I: Sync,
    T: Send,
    E: Send,
    F: Fn(&I) -> Result<T, E> + Sync,
{
    let failed = AtomicUsize::new(usize::MAX);
    let results: Vec<Option<Result<T, E>>> = items
        .par_iter()
        .enumerate()
        .map(|(i, item)| {
            if i > failed.load(Ordering::Relaxed) {
                return None;
            }
            let result = f(item);
            if result.is_err() {
                failed.fetch_min(i, Ordering::Relaxed);
            }
            Some(result)
        })
        .collect();
    // An item is skipped only after a failure at a lower index, which
    // comes first here.
    results.into_iter().flatten().collect()
}
