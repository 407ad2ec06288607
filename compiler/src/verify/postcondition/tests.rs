//! The postcondition proof on every algorithm, the orbit run against the
//! full run, and seeded defects (a mutated transfer source) caught with
//! their own messages.

use super::*;
use crate::algorithms::flat_ops;
use crate::build::build;
use crate::testing::Case;
use crate::verify::defect::{Defect, DefectKind, Defects};
use crate::verify::symmetry::orbit as orbit_of;
use crate::verify::transfers::{AsBuilt, Site};
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::id::{Chunk, Rank, Step};

/// The postcondition proof on `source`'s transfers, symmetric groups
/// found from them (symmetry on).
fn prove_with(
    schedule: &Schedule,
    source: &dyn TransferSource,
    options: &ProverOptions,
) -> Result<Vec<CollectivePostcondition>, VerifyError> {
    let symmetry = if options.symmetry { Symmetry::find_with(schedule, source) } else { Symmetry::none() };
    let proven = prove(schedule, source, options, &symmetry, &|_| {})?;
    match Defects::collect(proven.defects) {
        Some(d) => Err(VerifyError::Defects(Box::new(d))),
        None => Ok(proven.collectives),
    }
}

fn prove_on(schedule: &Schedule, source: &dyn TransferSource) -> Result<Vec<CollectivePostcondition>, VerifyError> {
    prove_with(schedule, source, &ProverOptions::default())
}

fn prove_case(case: &Case) -> Result<Vec<CollectivePostcondition>, VerifyError> {
    let schedule = build(&case.valid()).map_err(|e| panic!("{case:?}: {e}")).unwrap();
    prove_on(&schedule, &AsBuilt)
}

fn assert_proven(case: &Case) {
    if let Err(e) = prove_case(case) {
        panic!("{:?} {:?} n={} local={}: {e}", case.op, case.alg, case.rank_n, case.local_rank_n);
    }
}

/// Every flat algorithm on every op it serves, over many group sizes,
/// including sizes that are not powers of two.
#[test]
fn every_flat_pairing_is_proven() {
    for &alg in AlgType::ALL {
        if alg == AlgType::Hier {
            continue;
        }
        for &op in flat_ops(alg) {
            for n in 1..=13u32 {
                let Some(case) = Case::for_alg(op, alg, n) else { continue };
                assert_proven(&case);
            }
        }
    }
}

#[test]
fn every_hier_composition_is_proven() {
    for (op, choice) in Case::hier_choices() {
        let two_step = choice.iter().any(|&(_, alg)| alg == AlgType::TwoStepPodMesh);
        for (rank_n, local, pods) in [(12, 4, 1), (8, 2, 2), (24, 4, 2), (6, 3, 1), (5, 1, 1)] {
            if two_step && pods < 2 {
                continue;
            }
            let mut case = Case::hier(op, &choice, rank_n, local);
            case.pod_n = pods;
            assert_proven(&case);
        }
    }
}

#[test]
fn replica_groups_are_proven_independently() {
    let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
    case.groups = Some(vec![vec![0, 2, 4, 6], vec![7, 5, 3, 1]]);
    assert_proven(&case);
    let mut case = Case::hier(
        OpType::AllReduce,
        &[
            (ccc_ir::spec::Leg::IntraReduceScatter, AlgType::Kangaring),
            (ccc_ir::spec::Leg::InterAllReduce, AlgType::InterRdh),
            (ccc_ir::spec::Leg::IntraAllGather, AlgType::Ring),
        ],
        16,
        4,
    );
    case.groups = Some(vec![vec![0, 1, 4, 5, 8, 9, 12, 13], vec![2, 3, 6, 7, 10, 11, 14, 15]]);
    assert_proven(&case);
}

/// The orbit run proves what the full run proves, with the same
/// figures, for every flat pairing and size, invariant or not.
#[test]
fn symmetry_changes_no_figure() {
    let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
    for &alg in AlgType::ALL {
        if alg == AlgType::Hier {
            continue;
        }
        for &op in flat_ops(alg) {
            for n in 1..=9u32 {
                let Some(case) = Case::for_alg(op, alg, n) else { continue };
                let schedule = build(&case.valid()).unwrap();
                let fast = prove_with(&schedule, &AsBuilt, &ProverOptions::default());
                assert_eq!(fast, prove_with(&schedule, &AsBuilt, &full), "{op:?} {alg:?} n={n}");
            }
        }
    }
}

/// The same on every Hier composition, with and without pods: their
/// groups are invariant under the runs their scopes cut, and the ring
/// and direct compositions are proven on member 0 alone.
#[test]
fn hier_compositions_are_proven_the_same_on_one_member() {
    let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
    let mut orbits = Vec::new();
    for (op, choice) in Case::hier_choices() {
        let two_step = choice.iter().any(|&(_, alg)| alg == AlgType::TwoStepPodMesh);
        for (rank_n, local, pods) in [(12, 4, 1), (16, 4, 1), (24, 4, 2)] {
            if two_step && pods < 2 {
                continue;
            }
            let mut case = Case::hier(op, &choice, rank_n, local);
            case.pod_n = pods;
            let schedule = build(&case.valid()).unwrap();
            let fast = prove_with(&schedule, &AsBuilt, &ProverOptions::default());
            assert_eq!(fast, prove_with(&schedule, &AsBuilt, &full), "{op:?} {choice:?} pods={pods}");
            let plan = &schedule.collectives[0];
            let rot = orbit_of(&schedule, plan, 0, &AsBuilt);
            if rot.is_some_and(|r| orbit::run(plan, &r, HalfChunk::H0).is_some()) {
                orbits.push((op, choice.clone(), rank_n / local / pods, pods));
            }
        }
    }
    let ring = |leg| (leg, AlgType::Ring);
    use ccc_ir::spec::Leg::{InterAllReduce, IntraAllGather, IntraReduceScatter};
    let all_rings = vec![ring(IntraReduceScatter), ring(InterAllReduce), ring(IntraAllGather)];
    assert!(orbits.contains(&(OpType::AllReduce, all_rings.clone(), 3, 1)), "{orbits:?}");
    assert!(orbits.contains(&(OpType::AllReduce, all_rings, 3, 2)), "{orbits:?}");
    // Recursive halving across 4 nodes moves by XOR; across 3 it has a
    // prologue, and is proven in full.
    let rdh = vec![ring(IntraReduceScatter), (InterAllReduce, AlgType::InterRdh), ring(IntraAllGather)];
    assert!(orbits.contains(&(OpType::AllReduce, rdh.clone(), 4, 1)), "{orbits:?}");
    assert!(!orbits.contains(&(OpType::AllReduce, rdh, 3, 1)), "{orbits:?}");
}

/// Rings of every flavour, and recursive halving and doubling over a
/// power of two, are proven on member 0 alone, on each half.
#[test]
fn rings_and_halvings_are_proven_on_one_member() {
    for alg in [AlgType::Ring, AlgType::Kangaring, AlgType::SingleCycleRing, AlgType::InterRdh] {
        for &op in flat_ops(alg) {
            if !matches!(op, OpType::AllReduce | OpType::AllGather | OpType::ReduceScatter) {
                continue;
            }
            let Some(case) = Case::for_alg(op, alg, 8) else { continue };
            let schedule = build(&case.valid()).unwrap();
            let plan = &schedule.collectives[0];
            let rot = orbit_of(&schedule, plan, 0, &AsBuilt).unwrap_or_else(|| panic!("{op:?} {alg:?}: not symmetric"));
            for half in [HalfChunk::H0, HalfChunk::H1] {
                assert!(orbit::run(plan, &rot, half).is_some(), "{op:?} {alg:?} {half:?}");
            }
        }
    }
}

/// All-to-all over a ring and over a mesh is proven on member 0 alone,
/// its chunks moving with the members, and reports what the full run
/// does; all-to-all-v (sizes by member) is not symmetric, and runs in
/// full.
#[test]
fn all_to_all_is_proven_on_one_member() {
    let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
    let mut proven = 0;
    for alg in [AlgType::Ring, AlgType::Mesh] {
        for n in [2, 3, 5, 8, 12] {
            let Some(case) = Case::for_alg(OpType::AllToAll, alg, n) else { continue };
            let schedule = build(&case.valid()).unwrap();
            let plan = &schedule.collectives[0];
            let rot = orbit_of(&schedule, plan, 0, &AsBuilt).unwrap_or_else(|| panic!("{alg:?} n={n}: not symmetric"));
            assert!(orbit::run(plan, &rot, HalfChunk::H0).is_some(), "{alg:?} n={n}");
            let fast = prove_with(&schedule, &AsBuilt, &ProverOptions::default());
            assert!(fast.is_ok(), "{alg:?} n={n}: {fast:?}");
            assert_eq!(fast, prove_with(&schedule, &AsBuilt, &full), "{alg:?} n={n}");
            proven += 1;
        }
    }
    assert!(proven >= 8, "{proven}");
    let v = Case::for_alg(OpType::AllToAllV, AlgType::Ring, 8).unwrap();
    let schedule = build(&v.valid()).unwrap();
    assert!(orbit_of(&schedule, &schedule.collectives[0], 0, &AsBuilt).is_none());
}

/// Every member of an all-to-all writing each chunk one output block
/// too far keeps the group invariant: the orbit run refuses it, and the
/// full run names the chunk.
#[test]
fn a_misplaced_all_to_all_chunk_is_left_to_the_full_run() {
    struct Shifted;
    impl TransferSource for Shifted {
        fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
            let first = out.len();
            AsBuilt.transfers(s, plan, site, out);
            let n = plan.groups.size();
            for t in &mut out[first..] {
                t.dst.start = n + (t.dst.start - n + 1) % n;
            }
        }
    }
    let schedule = build(&Case::for_alg(OpType::AllToAll, AlgType::Ring, 6).unwrap().valid()).unwrap();
    let plan = &schedule.collectives[0];
    let rot = orbit_of(&schedule, plan, 0, &Shifted).expect("still invariant");
    assert_eq!(orbit::run(plan, &rot, HalfChunk::H0), None);
    let Err(VerifyError::Defects(d)) = prove_on(&schedule, &Shifted) else { panic!("proven") };
    assert_eq!(d.first.rank, Some(Rank(0)), "{d}");
}

/// A defect every member shares keeps the group invariant: the orbit
/// run refuses it, and the full run names it.
#[test]
fn a_defect_every_member_shares_is_left_to_the_full_run() {
    struct Twice;
    impl TransferSource for Twice {
        fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
            AsBuilt.transfers(s, plan, site, out);
            if site.step == 1 {
                out.extend_from_within(..);
            }
        }
    }
    let schedule = build(&Case::flat(OpType::AllReduce, AlgType::Ring, 6, 2).valid()).unwrap();
    let plan = &schedule.collectives[0];
    let rot = orbit_of(&schedule, plan, 0, &Twice).expect("still invariant");
    assert_eq!(orbit::run(plan, &rot, HalfChunk::H0), None);
    let Err(VerifyError::Defects(d)) = prove_on(&schedule, &Twice) else { panic!("proven") };
    assert!(matches!(d.first.kind, DefectKind::Duplicate { .. }), "{d}");
    assert_eq!((d.first.rank, d.first.step), (Some(Rank(0)), Some(Step(1))), "{d}");
}

/// A block set whose stride wraps past `u32::MAX` names positions out
/// of order: the full run refuses it as out of range, and the orbit run
/// must not accept it as the same set as an ascending one (a reviewer's
/// counterexample: 2 ranks, member 0 sends blocks "1, 0").
#[test]
fn a_wrapping_block_set_is_refused_by_both_runs() {
    struct Wrapping;
    impl TransferSource for Wrapping {
        fn transfers(&self, _: &Schedule, _: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
            if site.step != 0 {
                return;
            }
            let ascending = crate::schedule::BlockSet { start: 0, stride: 1, count: 2 };
            let wrapping = crate::schedule::BlockSet { start: 1, stride: u32::MAX, count: 2 };
            let t = |from, to, blocks| Transfer {
                from,
                to,
                src: blocks,
                dst: blocks,
                halves: Halves::Both,
                fold: Some(ccc_ir::enums::ReductionType::Ring2R1W),
                neigh: ccc_ir::enums::Neigh::Next,
            };
            let (me, peer) = (site.index, 1 - site.index);
            out.push(t(me, peer, if me == 0 { wrapping } else { ascending }));
            out.push(t(peer, me, ascending));
        }
    }
    let schedule = build(&Case::flat(OpType::AllReduce, AlgType::Ring, 2, 1).valid()).unwrap();
    let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
    let fast = prove_with(&schedule, &Wrapping, &ProverOptions::default());
    assert!(
        matches!(&fast, Err(VerifyError::Defects(d)) if matches!(d.first.kind, DefectKind::OutOfRange { .. })),
        "{fast:?}"
    );
    assert_eq!(fast, prove_with(&schedule, &Wrapping, &full));
}

#[test]
fn a_large_ring_is_proven() {
    let case = Case::flat(OpType::AllReduce, AlgType::Ring, 256, 16);
    let proof = prove_case(&case).unwrap();
    assert_eq!(proof[0].transfers, 2 * 255 * 256);
}

/// An 8-rank ring all-reduce on two nodes, two channels on two TOP_SPs.
const RING: &str = "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 65536, arch: Cayman,
    topology: (rank_n: 8, local_rank_n: 4), channels: 2, algorithm: Ring)";

fn ring() -> Schedule {
    build(&crate::validate::validate(&crate::parse::parse(RING).unwrap().program).unwrap()).unwrap()
}

fn defect(result: Result<Vec<CollectivePostcondition>, VerifyError>) -> Defect {
    match result {
        Err(VerifyError::Defects(d)) => {
            assert_eq!(d.total(), 1, "{d}");
            d.first
        }
        other => panic!("expected a defect, got {other:?}"),
    }
}

/// Wraps the schedule's transfers with an edit of (member, step, list).
pub(super) struct Mutated<F: Fn(u32, u32, &mut Vec<Transfer>) + Sync>(pub(super) F);

impl<F: Fn(u32, u32, &mut Vec<Transfer>) + Sync> TransferSource for Mutated<F> {
    fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
        AsBuilt.transfers(s, plan, site, out);
        (self.0)(site.index, site.step, out);
    }
}

#[test]
fn a_dropped_step_leaves_contributions_missing() {
    let s = ring();
    prove_on(&s, &AsBuilt).unwrap();
    // Nobody runs step 3 (a reduce-scatter step): both sides agree, so
    // every transfer matches, but the contributions it carried never arrive.
    let d = defect(prove_on(
        &s,
        &Mutated(|_, step, out: &mut Vec<Transfer>| {
            if step == 3 {
                out.clear();
            }
        }),
    ));
    assert!(matches!(&d.kind, DefectKind::Missing { contributors } if !contributors.is_empty()), "{d}");
    // Located after the collective's last step (step 13 of 14).
    assert_eq!((d.rank, d.step, d.chunk), (Some(Rank(0)), Some(Step(13)), Some(Chunk(0))));
    assert!(
        d.to_string().starts_with("collective 0, rank 0, step 13, chunk 0: ends without the contribution of rank"),
        "{d}"
    );
}

#[test]
fn a_swapped_peer_leaves_a_receive_unmatched() {
    let s = ring();
    prove_on(&s, &AsBuilt).unwrap();
    // At step 2, rank 5 sends to rank 7 instead of its ring neighbour 6.
    let d = defect(prove_on(
        &s,
        &Mutated(|index, step, out: &mut Vec<Transfer>| {
            if index == 5 && step == 2 {
                for t in out.iter_mut().filter(|t| t.from == 5) {
                    t.to = 7;
                }
            }
        }),
    ));
    assert_eq!(d.kind, DefectKind::UnmatchedReceive { from: Rank(5) }, "{d}");
    assert_eq!((d.rank, d.step), (Some(Rank(6)), Some(Step(2))));
    assert_eq!(
        d.to_string(),
        "collective 0, rank 6, step 2, chunk 2: waits for this chunk from rank 5, which does not send it at this step"
    );
}

#[test]
fn a_chunk_reduced_twice_is_a_duplicate_contribution() {
    let s = ring();
    prove_on(&s, &AsBuilt).unwrap();
    // At step 1, the fold from rank 2 into rank 3 is listed twice on both
    // sides: every transfer still matches, but rank 3 would fold the same
    // partial sum in twice.
    let d = defect(prove_on(
        &s,
        &Mutated(|index, step, out: &mut Vec<Transfer>| {
            if step == 1
                && (index == 2 || index == 3)
                && let Some(t) = out.iter().find(|t| t.from == 2 && t.to == 3).copied()
            {
                out.push(t);
            }
        }),
    ));
    assert!(matches!(d.kind, DefectKind::Duplicate { from: Rank(2), .. }), "{d}");
    assert_eq!((d.rank, d.step), (Some(Rank(3)), Some(Step(1))));
    assert!(d.to_string().contains("a second time (arriving from rank 2)"), "{d}");
}

/// Each group reports its own first defect: a defect seeded in both
/// groups of a replica-grouped ring is reported twice, the first group's
/// first, with the count in the message.
#[test]
fn every_group_reports_its_defect() {
    let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
    case.groups = Some(vec![vec![0, 2, 4, 6], vec![7, 5, 3, 1]]);
    let s = build(&case.valid()).unwrap();
    prove_on(&s, &AsBuilt).unwrap();
    let dropped = Mutated(|_, step, out: &mut Vec<Transfer>| {
        if step == 1 {
            out.clear();
        }
    });
    let Err(VerifyError::Defects(d)) = prove_on(&s, &dropped) else { panic!("proven") };
    assert_eq!(d.total(), 2, "{d}");
    assert_eq!((d.first.group, d.more[0].group), (0, 1), "{d}");
    assert!(d.to_string().ends_with(" (and 1 more defect)"), "{d}");
}

/// No proof of a postcondition reads a transfer's `neigh` (which is why
/// the schedule's transfers are listed unlabelled, see
/// `verify::transfers`): with every `neigh` scrambled, every pairing is
/// proven as it is unlabelled, with the same figures, orbit run or full.
#[test]
fn no_postcondition_reads_neigh() {
    use ccc_ir::enums::Neigh;
    struct Scrambled;
    impl TransferSource for Scrambled {
        fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
            let labels = [Neigh::Prev, Neigh::Gateway, Neigh::PeerRmtv2, Neigh::NextPeerRmtv, Neigh::PeerLocal];
            s.phase_transfers(plan, site.group, site.phase, site.inst, site.t, out);
            for (i, tr) in out.iter_mut().enumerate() {
                tr.neigh = labels[(site.index as usize + site.step as usize + i) % labels.len()];
            }
        }
    }
    let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
    for case in Case::pairings(&[4, 5, 8]) {
        let schedule = build(&case.valid()).unwrap_or_else(|e| panic!("{case:?}: {e}"));
        for options in [ProverOptions::default(), full] {
            let proven = prove_with(&schedule, &AsBuilt, &options);
            assert!(proven.is_ok(), "{case:?}");
            assert_eq!(prove_with(&schedule, &Scrambled, &options), proven, "{case:?}");
        }
    }
}
