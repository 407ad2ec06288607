//! The whole proof of a compile, through the verifier's `Prover`: every
//! rank lowered (the ranks asked for first, then the others, which only
//! the proof needs), each rank's step graph watched for symmetry as
//! lowering walks it; then the postcondition, the protocol of every rank's
//! records and the round trip of the images encoded.

use super::{CompileError, Options, Proof, Stage, Ticker, first_error_early};
use crate::encode::RankImages;
use crate::lower::{LowerError, RankProgram};
use crate::schedule::Schedule;
use crate::verify::symmetry::Seen;
use crate::verify::{Defect, Prover, ProverOptions};
use ccc_ir::id::Rank;
use rayon::prelude::*;
use std::time::Instant;

/// The ranks asked for, lowered under watch, and what the proof goes on
/// from.
pub(super) struct Asked<'a, 's> {
    /// The programs of the ranks asked for, in rank order.
    pub(super) programs: Vec<RankProgram>,
    /// What each one's watch saw.
    seen: Vec<Seen>,
    prover: Prover<'s>,
    /// Ranks lowered, of every rank.
    lowering: Ticker<'a>,
}

/// Lowers the ranks asked for under watch: compile work first.
pub(super) fn lower_asked<'a, 's>(
    schedule: &'s Schedule,
    wanted: &[Rank],
    prover: &ProverOptions,
    options: &'a Options,
) -> Result<Asked<'a, 's>, LowerError> {
    let prover = Prover::new(schedule, prover);
    let lowering = Ticker::start(options, Stage::Lower, u64::from(schedule.shape.rank_n));
    let lowered = first_error_early(wanted, |&r| {
        let lowered = prover.lower(r);
        lowering.tick(1);
        lowered
    })?;
    let (programs, seen) = lowered.into_iter().unzip();
    Ok(Asked { programs, seen, prover, lowering })
}

/// Proves the schedule: lowers the ranks not asked for, then the
/// postcondition over the step graph, the protocol over every rank's
/// records and the round trip of `images` (the asked ranks'). Returns the
/// asked ranks' programs with the proof.
pub(super) fn prove(
    schedule: &Schedule,
    wanted: &[Rank],
    asked: Asked<'_, '_>,
    images: &[RankImages],
    options: &Options,
) -> Result<(Vec<RankProgram>, Proof), CompileError> {
    let Asked { programs, seen, prover, lowering } = asked;
    let rank_n = schedule.shape.rank_n;
    // The protocol proof checks every rank's records: lower the others
    // (proof work), and put every rank in its place.
    let t = Instant::now();
    let others: Vec<Rank> = (0..rank_n).map(Rank).filter(|r| wanted.binary_search(r).is_err()).collect();
    let lowered = first_error_early(&others, |&r| {
        let lowered = prover.lower(r);
        lowering.tick(1);
        lowered
    })?;
    let (others, others_seen): (Vec<RankProgram>, Vec<Seen>) = lowered.into_iter().unzip();
    let (world, world_seen) = in_rank_order(rank_n, wanted, (programs.iter(), seen), (others.iter(), others_seen));
    let lowering_time = t.elapsed();
    let t = Instant::now();
    let members: u64 =
        schedule.collectives.iter().map(|p| u64::from(p.groups.group_n()) * u64::from(p.groups.size())).sum();
    let proving = Ticker::start(options, Stage::Postcondition, members);
    let post = prover.prove_postconditions(&world_seen, &|n| proving.tick(n))?;
    let postcondition_time = prover.setup_time + t.elapsed();
    let t = Instant::now();
    let checking = Ticker::start(options, Stage::Protocol, u64::from(rank_n));
    let ranks: Vec<_> = world
        .par_iter()
        .zip(&world_seen)
        .with_min_len(4)
        .map(|(program, seen)| {
            let checked = prover.check_rank(program, seen);
            checking.tick(1);
            checked
        })
        .collect();
    let protocol_time = lowering_time + t.elapsed();
    let t = Instant::now();
    let (images_checked, roundtrips) = roundtrips(&programs, images, options);
    let roundtrip_time = t.elapsed();
    let established = Prover::conclude(post, ranks, roundtrips)?;
    Ok((programs, established.proof(images_checked, [postcondition_time, protocol_time, roundtrip_time])))
}

/// The asked and the other ranks, each in rank order, merged into the
/// world's order.
fn in_rank_order<'p, A, O>(
    rank_n: u32,
    wanted: &[Rank],
    asked: (A, Vec<Seen>),
    others: (O, Vec<Seen>),
) -> (Vec<&'p RankProgram>, Vec<Seen>)
where
    A: Iterator<Item = &'p RankProgram>,
    O: Iterator<Item = &'p RankProgram>,
{
    let mut asked = asked.0.zip(asked.1);
    let mut others = others.0.zip(others.1);
    (0..rank_n)
        .filter_map(|r| if wanted.binary_search(&Rank(r)).is_ok() { asked.next() } else { others.next() })
        .unzip()
}

/// Decodes each image back and checks it against its program, on every
/// core: the images checked, and the defects in rank order.
pub(super) fn roundtrips(programs: &[RankProgram], images: &[RankImages], options: &Options) -> (u64, Vec<Defect>) {
    let ticker = Ticker::start(options, Stage::RoundTrip, programs.len() as u64);
    let checked: Vec<_> = programs
        .par_iter()
        .zip(images)
        .map(|(p, i)| {
            let checked = Prover::check_images(p, i);
            ticker.tick(1);
            checked
        })
        .collect();
    let mut defects = Vec::new();
    let mut images_checked = 0;
    for c in checked {
        match c {
            Ok(n) => images_checked += n,
            Err(d) => defects.push(*d),
        }
    }
    (images_checked, defects)
}
