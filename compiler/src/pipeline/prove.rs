//! The whole proof of a compile: every rank lowered (the ranks asked for
//! first, then the others, which only the proof needs), each rank's step
//! graph watched for symmetry as lowering walks it, then the postcondition,
//! the protocol over every rank's records and the round trip of the images
//! encoded.

use super::{CompileError, Options, Proof, Stage, Ticker, first_error_early};
use crate::encode::RankImages;
use crate::lower::{LowerError, RankProgram, lower, lower_watched};
use crate::schedule::Schedule;
use crate::verify::symmetry::{Bases, Seen, Symmetry};
use crate::verify::{ProverOptions, VerifyError, postcondition, protocol, roundtrip};
use ccc_ir::id::Rank;
use std::time::{Duration, Instant};

/// The ranks asked for, lowered under watch: their programs, and what the
/// proof continues from.
pub(super) struct Asked<'a> {
    /// The programs of the ranks asked for, in rank order.
    pub(super) programs: Vec<RankProgram>,
    /// Member 0's transfers of each group (symmetry on).
    bases: Option<Bases>,
    /// What each lowered rank's watch saw.
    seen: Vec<Seen>,
    /// The time listing the bases took.
    bases_time: Duration,
    /// Ranks lowered, of every rank.
    lowering: Ticker<'a>,
}

/// Lowers the ranks asked for, each rank's step graph shown to a watch
/// (see `verify::symmetry::Bases`) as it is lowered: compile work first.
pub(super) fn lower_asked<'a>(
    schedule: &Schedule,
    wanted: &[Rank],
    prover: &ProverOptions,
    options: &'a Options,
) -> Result<Asked<'a>, LowerError> {
    // Member 0's transfers of each group, for the watches: proof work.
    let t = Instant::now();
    let bases = prover.symmetry.then(|| Bases::new(schedule));
    let bases_time = t.elapsed();
    let lowering = Ticker::start(options, Stage::Lower, u64::from(schedule.shape.rank_n));
    let (programs, seen) = lower_ranks_watched(schedule, wanted, bases.as_ref(), &lowering)?;
    Ok(Asked { programs, bases, seen, bases_time, lowering })
}

/// Proves the schedule: the postcondition over the step graph, the protocol
/// over every rank's records (lowering the ranks not asked for), and the
/// round trip of the images that were encoded.
pub(super) fn prove(
    schedule: &Schedule,
    wanted: &[Rank],
    asked: Asked<'_>,
    images: &[RankImages],
    prover: &ProverOptions,
    options: &Options,
) -> Result<(Vec<RankProgram>, Proof), CompileError> {
    let rank_n = schedule.shape.rank_n;
    // The protocol proof checks every rank's records: lower the ranks not
    // asked for now (proof work, watched like the others), and put the
    // ones asked for in their places.
    let t = Instant::now();
    let Asked { programs, bases, mut seen, bases_time, lowering } = asked;
    let others: Vec<Rank> = (0..rank_n).map(Rank).filter(|r| wanted.binary_search(r).is_err()).collect();
    let (others, others_seen) = lower_ranks_watched(schedule, &others, bases.as_ref(), &lowering)?;
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
        protocol::prove_reporting(schedule, &programs, &symmetry, &tick)?
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
    let images_checked = prove_roundtrips(&programs, images, options)?;
    let proof = Proof {
        postcondition: post,
        protocol,
        images_checked,
        postcondition_time,
        protocol_time,
        roundtrip_time: t.elapsed(),
        symmetric_groups,
        certified: false,
    };
    Ok((programs, proof))
}

/// [`lower_ranks`](super::lower_ranks), each rank's step graph shown to a watch of `bases` as
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
