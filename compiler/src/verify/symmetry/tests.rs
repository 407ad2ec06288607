//! Tests of symmetry: which groups the walks find invariant (rings, a
//! two-level ring, RDH by XOR, a mesh), how exactly transfers and block
//! sets move under an action, and that each rank's watch finds the groups
//! a walk of every member finds.

use super::*;
use crate::build::build;
use crate::schedule::{BlockSet, Transfer};
use crate::testing::Case;
use crate::verify::action::{Action, blocks_moved, is_moved_by};
use crate::verify::transfers::walk;
use ccc_ir::enums::{AlgType, OpType};

fn orbit_of(case: &Case) -> Option<Orbit> {
    let schedule = build(&case.valid()).unwrap();
    orbit(&schedule, &schedule.collectives[0], 0, &AsBuilt)
}

#[test]
fn a_flat_ring_is_rotation_invariant() {
    for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter] {
        let rot = orbit_of(&Case::flat(op, AlgType::Ring, 6, 2)).unwrap_or_else(|| panic!("{op:?}"));
        // Member 0 sends one block to member 1 and receives one from member 5.
        let first = rot.step(0);
        assert_eq!(first.len(), 2, "{op:?}: {first:?}");
        assert!(first.iter().any(|t| t.from == 0 && t.to == 1), "{op:?}: {first:?}");
        assert!(first.iter().any(|t| t.from == 5 && t.to == 0), "{op:?}: {first:?}");
    }
}

/// A ring all-reduce inside 3 nodes of 4, across them, and inside again.
fn two_level_ring() -> Case {
    use ccc_ir::spec::Leg::{InterAllReduce, IntraAllGather, IntraReduceScatter};
    let legs = [IntraReduceScatter, InterAllReduce, IntraAllGather].map(|leg| (leg, AlgType::Ring));
    Case::hier(OpType::AllReduce, &legs, 12, 4)
}

/// Within a node, member 3's successor is member 0 of its node, not
/// member 4: a two-level ring is not invariant under the flat rotation,
/// but it is under the runs [local] and [node, pod], which its scopes
/// cut.
#[test]
fn a_two_level_ring_turns_node_and_cross_rings_at_once() {
    let case = two_level_ring();
    let schedule = build(&case.valid()).unwrap();
    let plan = &schedule.collectives[0];
    let rot = orbit_of(&case).expect("invariant under its runs");
    assert_eq!(rot.action, Action::of(plan));
    assert!(!rot.action.is_cyclic());
    // Member 5 = local 1 of node 1; moved by member 7 = local 3, node 1:
    // local 0, node 2 = member 8.
    assert_eq!(rot.action.add(5, 7), 8);
    assert_eq!(rot.action.add(rot.action.add(5, 7), rot.action.inverse(7)), 5);
    let mut flat = rot;
    flat.action = Action::cyclic(12);
    let walk_one = |m: u32| {
        let mut out = Vec::new();
        walk(&schedule, plan, 0, m, &AsBuilt, |_, list| {
            out.extend_from_slice(list);
            true
        });
        out
    };
    let (zero, three) = (walk_one(0), walk_one(3));
    assert!(!three.iter().zip(&zero).all(|(x, b)| is_moved_by(x, b, 3, &flat.action)));
}

/// Under a two-level action, every transfer of every member is member
/// 0's moved, and none is once its receiver, first block or halves
/// change.
#[test]
fn two_level_moves_are_exact() {
    let case = two_level_ring();
    let schedule = build(&case.valid()).unwrap();
    let plan = &schedule.collectives[0];
    let rot = orbit_of(&case).unwrap();
    assert!(!rot.action.is_cyclic());
    let (mut accepted, mut refused) = (0, 0);
    for m in 0..12 {
        let mut k = 0;
        walk(&schedule, plan, 0, m, &AsBuilt, |_, list| {
            for x in list {
                let base = &rot.transfers()[k];
                let other = |mut t: Transfer, edit: &dyn Fn(&mut Transfer)| {
                    edit(&mut t);
                    t
                };
                let variants = [
                    *x,
                    other(*x, &|t| t.to = (t.to + 1) % 12),
                    other(*x, &|t| t.src.start = (t.src.start + 1) % 12),
                    other(*x, &|t| t.halves = crate::schedule::Halves::Only(ccc_ir::enums::HalfChunk::H1)),
                ];
                for (i, v) in variants.iter().enumerate() {
                    let moved = is_moved_by(v, base, m, &rot.action);
                    assert_eq!(moved, i == 0 || v == x, "member {m}, transfer {k}, variant {i}");
                    if moved { accepted += 1 } else { refused += 1 }
                }
                k += 1;
            }
            true
        });
    }
    assert!(accepted > 0 && refused > 0);
}

/// Recursive halving and doubling over a power of two pairs members
/// by their bits: invariant under XOR, and its aligned block ranges
/// and contribution intervals move as such; with a prologue (not a
/// power of two) it is not invariant at all.
#[test]
fn recursive_halving_moves_by_xor() {
    let case = Case::for_alg(OpType::AllReduce, AlgType::InterRdh, 8).unwrap();
    let rot = orbit_of(&case).expect("invariant under XOR");
    assert_eq!((rot.action.run_n, rot.action.xor[0]), (1, true));
    assert_eq!(rot.action.add(5, 3), 6);
    assert_eq!(rot.action.inverse(5), 5);
    // Blocks 4..8 moved by 6: 2..4 and 0..2 swapped, as a set 0..4.
    let upper = BlockSet { start: 4, stride: 1, count: 4 };
    assert!(blocks_moved(BlockSet { start: 0, stride: 1, count: 4 }, upper, &rot.action.by(6)));
    assert!(!blocks_moved(BlockSet { start: 2, stride: 1, count: 4 }, upper, &rot.action.by(6)));
    let mut sets = crate::verify::sets::Sets::new(8);
    let pair = sets.union(sets.single(2), sets.single(3)).unwrap();
    let moved = sets.translate(pair, 5, &rot.action);
    assert_eq!(sets.members(moved), vec![6, 7]);
    assert!(orbit_of(&Case::for_alg(OpType::AllReduce, AlgType::InterRdh, 6).unwrap()).is_none());
}

/// Every position, moved by the flat ring, is every position again: a
/// mesh that sends its whole buffer to every peer is symmetric.
#[test]
fn the_whole_buffer_moves_to_itself() {
    let ring = Action::cyclic(8);
    let all = BlockSet::all(8);
    assert!(blocks_moved(all, all, &ring.by(3)));
    assert!(!blocks_moved(BlockSet { start: 1, stride: 1, count: 7 }, BlockSet::all(7), &ring.by(3)));
    let case = Case::for_alg(OpType::AllReduce, AlgType::SingleStepMesh, 6).unwrap();
    assert!(orbit_of(&case).is_some());
}

#[test]
fn whole_runs_move_as_sets() {
    // 4 locals x 3 nodes; the set {1, 5, 9} is local 1 of every node.
    let case = two_level_ring();
    let schedule = build(&case.valid()).unwrap();
    let action = Action::of(&schedule.collectives[0]);
    let set = BlockSet { start: 1, stride: 4, count: 3 };
    assert_eq!(action.whole_runs(set), Some(1..2));
    // Moved by member 6 (local 2, node 1): local 3 of every node.
    assert!(blocks_moved(BlockSet { start: 3, stride: 4, count: 3 }, set, &action.by(6)));
    assert!(!blocks_moved(BlockSet { start: 2, stride: 4, count: 3 }, set, &action.by(6)));
    // Not a whole run: positions compare one by one.
    let part = BlockSet { start: 1, stride: 4, count: 2 };
    assert_eq!(action.whole_runs(part), None);
    assert!(blocks_moved(BlockSet { start: 7, stride: 4, count: 2 }, part, &action.by(6)));
}

/// What each rank's watch sees of its own step graph gives the groups
/// a walk of every member finds, on every flat pairing, every Hier composition and
/// replica groups; a rank not watched leaves its group out.
#[test]
fn watching_each_rank_finds_what_a_walk_finds() {
    let cases = Case::pairings(&[2, 5, 8]);
    let mut invariant = 0;
    for case in &cases {
        let schedule = build(&case.valid()).unwrap();
        let bases = Bases::new(&schedule);
        let seen: Vec<Seen> = (0..schedule.shape.rank_n).map(|r| bases.watch_steps(&schedule, Rank(r))).collect();
        let walked = Symmetry::find(&schedule);
        invariant += walked.symmetric_groups();
        let missing = bases.symmetry(&schedule, &seen[1..]);
        assert_eq!(bases.symmetry(&schedule, &seen).orbits, walked.orbits, "{:?} {:?}", case.op, case.alg);
        for plan in &schedule.collectives {
            let home = plan.groups.locate(Rank(0)).unwrap().group();
            for g in 0..plan.groups.group_n() {
                let want = g != home && walked.orbit(plan.index, g).is_some();
                assert_eq!(missing.orbit(plan.index, g).is_some(), want, "{:?} {:?} group {g}", case.op, case.alg);
            }
        }
    }
    assert!(invariant > 10, "{invariant}");
}

/// Member 0's walk must run steps 0..step_n once each: a plan whose
/// phases run one step more than it says is not taken as symmetric (a
/// reviewer's counterexample; the full run executes every phase step).
#[test]
fn a_walk_past_the_collective_steps_is_not_symmetric() {
    let case = Case::for_alg(OpType::AllReduce, AlgType::SingleStepMesh, 4).unwrap();
    let mut schedule = build(&case.valid()).unwrap();
    assert!(orbit(&schedule, &schedule.collectives[0], 0, &AsBuilt).is_some());
    schedule.collectives[0].phases[0].step_n += 1;
    assert!(orbit(&schedule, &schedule.collectives[0], 0, &AsBuilt).is_none());
    assert_eq!(Symmetry::find(&schedule).symmetric_groups(), 0);
}

#[test]
fn shifts_wrap_members_and_blocks() {
    let base = Transfer {
        from: 3,
        to: 0,
        src: BlockSet::one(2),
        dst: BlockSet::one(2),
        halves: crate::schedule::Halves::Both,
        fold: None,
        neigh: ccc_ir::enums::Neigh::Local,
    };
    let four = Action::cyclic(4);
    let x = Transfer { from: 1, to: 2, src: BlockSet::one(0), dst: BlockSet::one(0), ..base };
    assert!(is_moved_by(&x, &base, 2, &four));
    assert!(!is_moved_by(&x, &base, 1, &four));
    let moved = Transfer { dst: BlockSet::one(1), ..x };
    assert!(!is_moved_by(&moved, &base, 2, &four));
    // A one-block set's stride names nothing.
    let strided = Transfer { src: BlockSet { start: 0, stride: 4, count: 1 }, ..x };
    assert!(is_moved_by(&strided, &base, 2, &four));
}

/// Denying the groups no watch can serve (`Bases::deny_unneeded`, as the
/// prover does: groups without member 0's profile) changes no reader of a
/// watch: the symmetric groups are those the step watch of every rank
/// finds, and a member of a group with a profile is seen as before. On
/// every pairing, uneven blocks too (no profile where transfers move
/// ranges of blocks of two sizes), Hier compositions and recursive halving
/// with a prologue, whose groups are denied. Asked to deny every group it
/// can (no profile needed, no collective decided by its phases: every
/// symmetric group watched step by step), it still denies no symmetric
/// one.
#[test]
fn denied_groups_change_no_reader_of_a_watch() {
    let mut cases = Case::pairings(&[2, 3, 5, 8, 12]);
    for count in [4096 + 1, 4096 + 7] {
        cases.extend(Case::pairings(&[5, 8, 12]).into_iter().map(|mut c| {
            c.count = count;
            c
        }));
    }
    cases.extend(Case::hier_choices().into_iter().map(|(op, choice)| Case::hier(op, &choice, 16, 4)));
    for n in [6, 12, 24] {
        let mut rdh = Case::for_alg(OpType::AllReduce, AlgType::InterRdh, n).unwrap();
        rdh.count = 4099;
        cases.push(rdh);
    }
    // (denied, members of profiled groups, symmetric groups watched
    // step by step) with the profiles asked for, and without them or the
    // phases.
    let mut counts = [[0u32; 3]; 2];
    for case in &cases {
        let Ok(schedule) = build(&case.valid()) else { continue };
        let plain = Bases::new(&schedule);
        let profiles = crate::verify::protocol::Profiles::new(&schedule, Some(&plain));
        let ranks = 0..schedule.shape.rank_n;
        let stepped: Vec<Seen> = ranks.clone().map(|r| plain.watch_steps(&schedule, Rank(r))).collect();
        let reference = plain.symmetry(&schedule, &stepped);
        for (asked, [denied, profiled, undecided]) in [true, false].into_iter().zip(&mut counts) {
            let needed = |c, g| asked && profiles.has(c, g);
            let mut bases = Bases::new(&schedule);
            if !asked {
                bases.by_phase.iter_mut().for_each(|d| *d = false);
            }
            bases.deny_unneeded(&schedule, needed);
            let watched: Vec<Seen> = ranks.clone().map(|r| bases.watch_rank(&schedule, Rank(r))).collect();
            assert!(bases.symmetry(&schedule, &watched).same_groups(&reference), "{case:?} asked {asked}");
            for plan in &schedule.collectives {
                let decided = bases.by_phase[plan.index as usize];
                for g in 0..plan.groups.group_n() {
                    *denied += u32::from(bases.denied(plan.index, g));
                    *undecided += u32::from(!decided && reference.orbit(plan.index, g).is_some());
                }
                for (w, s) in watched.iter().zip(&stepped) {
                    let Some(at) = plan.groups.locate(w.rank) else { continue };
                    if needed(plan.index, at.group()) {
                        *profiled += 1;
                        assert_eq!(w.all_moved(plan), s.all_moved(plan), "{case:?} rank {}", w.rank.0);
                    }
                }
            }
        }
    }
    let [[denied, profiled, _], [denied_all, _, undecided]] = counts;
    assert!(denied > 20 && profiled > 1000 && denied_all > denied && undecided > 20, "{counts:?}");
}

/// What the memory budget counts of a base without holding it is what the
/// base holds: member 0's transfers and steps, and the bytes of its
/// vectors' room, over every flat pair and a two-level ring; and it counts
/// one where `base` makes one, and only there; and `sampled_holds` (and
/// with a size counted, `sampled_holds_sized`) says what `sampled` finds.
#[test]
fn a_base_counted_is_the_base_held() {
    let mut cases: Vec<Case> = Case::flat_pairs().filter_map(|(op, alg)| Case::for_alg(op, alg, 24)).collect();
    cases.push(two_level_ring());
    let (mut counted, mut decided) = (0, 0);
    for case in &cases {
        let schedule = build(&case.valid()).unwrap();
        for plan in &schedule.collectives {
            let (held, size) = (base(&schedule, plan, 0, &AsBuilt), base_size(&schedule, plan, 0));
            assert_eq!(held.is_some(), size.is_some(), "{case:?}");
            if let (Some(held), Some(size)) = (held, size) {
                assert_eq!((size.transfers, size.steps), (held.transfers().len(), plan.step_n as usize), "{case:?}");
                assert_eq!(size.footprint(), held.footprint(), "{case:?}");
                let found = sampled(&schedule, plan, 0).is_some();
                assert_eq!(sampled_holds_sized(&schedule, plan, 0, size), found, "{case:?}");
                decided += usize::from(size.by_phase);
                counted += 1;
            }
            assert_eq!(sampled_holds(&schedule, plan, 0), sampled(&schedule, plan, 0).is_some(), "{case:?}");
        }
    }
    // The phases decide some, and not all: both ways are asked.
    assert!(counted >= 10 && decided > 0 && decided < counted, "{decided} of {counted}");
}
