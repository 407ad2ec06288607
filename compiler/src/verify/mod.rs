//! verify: prove a compiled schedule implements its collective and cannot
//! deadlock, before a byte is emitted. One door, [`prove`]; a compile
//! drives the same checks rank by rank through the crate's `Prover`
//! (`prover.rs`), which holds only member 0's transfers across ranks.
//!
//! # What is proven
//!
//! For every collective, on the step graph (the transfers every member
//! lists at every step, `postcondition`):
//!
//! 1. every transfer a member lists involves it, names members of its
//!    group and blocks of its buffer, and (but for all-to-all) keeps every
//!    block at its position;
//! 2. at every step every receive is matched to exactly one identical send
//!    by its sender, and no send is left unmatched (whichever halves it
//!    moves);
//! 3. sender and receiver agree on every block's size, on every channel;
//! 4. no contribution is folded into a cell twice, and an all-to-all fold
//!    meets the chunk it belongs to;
//! 5. after the last step every cell the op defines holds exactly what the
//!    op promises (every contribution once, the right chunk).
//!
//! For every rank's lowered records, per TOP_SP (`protocol`):
//!
//! 6. the chain: one record per phase of every collective that uses the
//!    TOP_SP, in order, covering its steps; `trigger_next` runs each into
//!    the next and stops at the last; every `ring_wait_complete` has a
//!    signal before it and every `ring_send_complete` a waiter; the END
//!    mark carries the TOP_SP's completion semaphore; `channel_list` is
//!    exactly the collective's channels there; fields match the phase;
//! 7. semaphores: mesh events inside the mesh window and in table order,
//!    channel semaphores inside theirs, send credits in 1..=511 (so the
//!    9-bit net index never aliases);
//! 8. step by step, every record posts exactly the M2S and S2M descriptors
//!    the rank's transfers need, and each mesh event waits for exactly the
//!    increments its peer sends;
//! 9. the host's counts: `op_num` is the notifications the records post,
//!    and the EXEC config's counts, flags and event table match the chain.
//!
//! For every image emitted (`roundtrip`):
//!
//! 10. it decodes back to exactly the records lowered.
//!
//! **No deadlock** follows from 2 and 8 with 6 and 7: every connection
//! delivers at every step exactly the increments its receiver waits for,
//! and every wait is on the rank's own previous step or on transfers of
//! the same step (see `protocol`). The wait-for graph's edges all go from
//! step `s - 1` to step `s` (`step_graph`), so it is acyclic by
//! construction and the induction over steps is the argument; a graph
//! search (petgraph's `toposort`) over every (rank, step) node would only
//! re-derive that order at the cost of the world's nodes and edges, so the
//! proof builds no graph. [`crate::step_graph::StepGraph`] materializes it
//! for chosen ranks (DOT output), and its test checks that order with
//! petgraph's `toposort`.
//!
//! **Symmetry** (`symmetry`, `action`, `by_phase`): when every member of a
//! group runs member 0's program moved to its index, checks 1–5 run on
//! member 0 alone and 8 from member 0's needs moved; the figures are the
//! same as the full run's (the tests compare both on every algorithm).
//! Where the collective's phases show it (each one's scope a run of the
//! action, its generator relative to the member), no rank's steps are
//! walked to know it; elsewhere each rank's step graph is watched.
//!
//! **Paths** (`postcondition/paths.rs`): a group that is not symmetric
//! (rooted ops, recursive halving with a prologue) runs checks 1–3 as the
//! full run does but keeps a counter per (member, block), and proves 4–5
//! from each contribution's path: folded once into one cell per block,
//! then copied on; anything it cannot accept goes to the full run, which
//! names the defect.
//!
//! **Runs** (`algorithms/step_runs.rs`, `postcondition/step_runs.rs`,
//! `protocol/steps.rs`): where a phase's generator has a closed form (the
//! pipelined ring chains of broadcast and reduce), the schedule as built
//! lists a member's transfers as runs of steps, each its first step's
//! transfers with the blocks one piece further a step, and idle runs.
//! The path run then makes checks 1–2 once per pair of overlapping runs
//! (each holds at every step of the pair when it holds at the first, the
//! range at the last) and applies the runs a member at a time where each
//! cell meets at most one landing and one read, the landing first
//! (`postcondition/member_major.rs`: each move then meets the state and
//! value it meets step by step), else step by step; the protocol
//! takes a run's steps at once when every block costs the same (their
//! needs are then the same at every step). Like `by_phase`, this is an
//! argument from the generator's structure, held equal place by place to
//! the step generator by tests on every pairing and random specs; the
//! tests' mutated sources have no runs (but `SeededRuns`, which seeds
//! defects into the runs themselves), so they are asked at every site
//! and their defects are found, and named, as before. Runs that do not
//! cover a phase's steps in order decide nothing: the phase is then
//! listed step by step.
//!
//! # Defects
//!
//! A failed proof is [`VerifyError::Defects`]: every defect found, each a
//! [`Defect`] naming the collective, group, rank, TOP_SP, record, step and
//! chunk where things go wrong, the first [`MAX_LISTED`] listed. Each
//! group's run, each (rank, TOP_SP) chain and each rank's steps of one
//! collective report their first defect (what follows would echo it).
//!
//! # Files
//!
//! `defect.rs` (what a failure says), `options.rs` (tuning), `prover.rs`
//! (the state across ranks), `postcondition/` (`full.rs`: every member's
//! buffer; `orbit.rs`: member 0 alone; `paths.rs`: contributions' paths,
//! `window.rs` its listing, `step_runs.rs` its checks run by run,
//! `member_major.rs` its cells moved run by run, `counters.rs` and
//! `runs.rs` its counters),
//! `protocol/` (`chain.rs`: part 1; `steps.rs`: part 2; `profile.rs`:
//! member 0's needs, `exceptions.rs` their fold per member when blocks
//! differ in size), `roundtrip.rs`, `symmetry.rs`, `by_phase.rs` and
//! `action.rs`, `sets.rs` (contributor sets), `transfers.rs` (where
//! transfers come from), `figures.rs` (a proof's figures without
//! proving, for certificates). Modules import only downward: `transfers`,
//! `action`, `defect` and `options` import no other verify module; none
//! imports this file. The chain check and the round trip run once per
//! distinct TOP_SP program (`lower/distinct.rs`).

mod action;
mod by_phase;
mod defect;
pub(crate) mod figures;
mod options;
pub(crate) mod postcondition;
pub(crate) mod protocol;
mod prover;
mod roundtrip;
mod sets;
pub(crate) mod symmetry;
pub(crate) mod transfers;

pub use defect::{Defect, DefectKind, Defects, MAX_LISTED, RankList, SemaphoreWindow, VerifyError};
pub use options::ProverOptions;
pub use postcondition::CollectivePostcondition;
pub use protocol::{MAX_SEND_CREDITS, NET_INDEX_LOOP, ProtocolProof};
pub use prover::Proof;
pub(crate) use prover::Prover;
pub(crate) use roundtrip::{MEMO_BYTES, Memo};

use crate::encode::RankImages;
use crate::lower::RankProgram;
use crate::schedule::Schedule;
use ccc_ir::id::{CollectiveIdx, Rank};
use rayon::prelude::*;
use std::time::Instant;

/// Proves `schedule` (see the module overview): the postcondition of every
/// collective on its step graph, the protocol of `world` (every rank's
/// lowered program, in rank order), and the round trip of `images` (of any
/// ranks, each decoded against its rank's program).
///
/// # Errors
///
/// [`VerifyError::Defects`] with every defect found (the first what a
/// reader fixes first), among them, before any step is walked, a world
/// that is not one program per rank in rank order and step counts that
/// are not the ones `build` gives its phases (`FieldMismatch`: a
/// `Schedule` edited by hand); [`VerifyError::TooLarge`] when a group
/// that must run in full exceeds the prover's cells.
pub fn prove(
    schedule: &Schedule,
    world: &[RankProgram],
    images: &[RankImages],
    options: &ProverOptions,
) -> Result<Proof, VerifyError> {
    if let Some(defects) = Defects::collect(world_defects(schedule, world)) {
        return Err(VerifyError::Defects(Box::new(defects)));
    }
    let prover = Prover::new(schedule, options);
    let t = Instant::now();
    let seen: Vec<_> = world.par_iter().map(|p| prover.watch(p.rank)).collect();
    let watching_time = t.elapsed();
    let t = Instant::now();
    let post = prover.prove_postconditions(&seen, &|_| {})?;
    let postcondition_time = prover.setup_time + t.elapsed();
    let t = Instant::now();
    let ranks: Vec<_> = world.par_iter().zip(&seen).map(|(p, s)| prover.check_rank(p, s)).collect();
    let protocol_time = t.elapsed();
    let t = Instant::now();
    let mut images_checked = 0;
    let mut roundtrips = Vec::new();
    let memo = Memo::new(schedule.arch);
    for image in images {
        let Some(program) = world.get(image.rank.0 as usize) else {
            let kind = DefectKind::RoundTrip { image: "rank", detail: "no lowered program of this rank".into() };
            roundtrips.push(Defect { rank: Some(image.rank), topsp: None, ..world_defect(0, kind) });
            continue;
        };
        match memo.check_kept(program, image) {
            Ok(n) => images_checked += n,
            Err(d) => roundtrips.push(*d),
        }
    }
    let roundtrip_time = t.elapsed();
    let established = Prover::conclude(post, ranks, roundtrips)?;
    Ok(established.proof(images_checked, [watching_time, postcondition_time, protocol_time, roundtrip_time]))
}

/// `world` must be every rank's program, rank `r`'s at `r`.
fn world_defects(schedule: &Schedule, world: &[RankProgram]) -> Vec<Defect> {
    let at = world_defect;
    let mismatch = |field, found, expected| DefectKind::FieldMismatch { field, found, expected };
    let mut defects: Vec<Defect> = (0..world.len() as u32)
        .filter(|&r| world[r as usize].rank != Rank(r))
        .map(|r| at(r, mismatch("rank of the program", u64::from(world[r as usize].rank.0), u64::from(r))))
        .collect();
    let rank_n = schedule.shape.rank_n;
    if world.len() != rank_n as usize {
        let kind = mismatch("ranks lowered", world.len() as u64, u64::from(rank_n));
        defects.push(at(world.len() as u32, kind));
    }
    // The step counts the proof walks are the ones `build` gives: a
    // schedule edited past them (its fields are public) would have the
    // proof walk, and count per step, billions of steps.
    for (c, plan) in schedule.collectives.iter().enumerate() {
        let mut first = 0u64;
        for phase in &plan.phases {
            let expected = crate::algorithms::phase_steps(phase.kind, phase.scope.size(&plan.radices));
            if phase.step_n != expected {
                defects.push(Defect {
                    collective: CollectiveIdx(c as u32),
                    ..at(0, mismatch("steps of a phase", u64::from(phase.step_n), u64::from(expected)))
                });
            }
            if u64::from(phase.first_step) != first {
                defects.push(Defect {
                    collective: CollectiveIdx(c as u32),
                    ..at(0, mismatch("first step of a phase", u64::from(phase.first_step), first))
                });
            }
            first += u64::from(expected);
        }
        if u64::from(plan.step_n) != first {
            defects.push(Defect {
                collective: CollectiveIdx(c as u32),
                ..at(0, mismatch("steps of a collective", u64::from(plan.step_n), first))
            });
        }
    }
    defects
}

/// A defect of rank `rank`'s place in the world.
fn world_defect(rank: u32, kind: DefectKind) -> Defect {
    Defect {
        collective: CollectiveIdx(0),
        group: 0,
        rank: Some(Rank(rank)),
        topsp: Some(ccc_ir::id::TopSp(0)),
        record: None,
        step: None,
        chunk: None,
        kind,
    }
}
