//! Symmetry by phase: a collective whose every phase moves under its
//! group's action ([`phases_move`]) is invariant in every group whose
//! member 0 runs its steps in order, without looking at any other member's
//! steps.
//!
//! A member's transfers at a step are its phase's generator (see
//! `algorithms`) applied to the phase placed around it (its scope instance
//! and the blocks it works on). The argument has two halves:
//!
//! 1. **The placements move.** When a phase's scope is exactly one run of
//!    the action (same place value and size), member `m`'s scope is member
//!    0's moved by `m`: its scope position `q` is member 0's position `q`
//!    moved in that run (`q + pos` as a ring, `q ^ pos` by XOR), its other
//!    digits are `m`'s. When the scopes that narrowed the blocks tile the
//!    lowest digits in order, member `m`'s universe is the blocks whose
//!    digits there are `m`'s: member 0's moved by `m`. A generator that
//!    reads pieces of the universe also needs the narrowing to end where
//!    the scope starts, so that piece `q` is the blocks whose scope digit
//!    is `q` and lands on piece `q` moved; one that reads ranges of it
//!    (recursive halving and doubling), also that the scope be the top
//!    run, so that the universe has one block per scope position.
//! 2. **The generators are equivariant.** The generators admitted here
//!    ([`moves`]) name peers and pieces only relative to the member's
//!    position (ring patterns: `p + d`; recursive halving and doubling over
//!    a power of two: `p ^ 2^r`), so the transfers generated from a moved
//!    placement are the transfers generated from member 0's, moved. This
//!    is a property of the generator code, held by tests: the tests below
//!    compare this decision with the step watch (`Bases::watch_steps`)
//!    and with the walk of every member (`symmetry::orbit`) on every
//!    pairing and on random specs the validator accepts.
//!
//! A rooted, peer-map or prologue phase, or a scope that is not
//! one run of the action, leaves the collective undecided here: its ranks
//! are then watched step by step, as before.

use super::action::{Action, blocks_move};
use crate::schedule::{CollectivePlan, Phase, PhaseKind};

/// How a generator names peers and blocks relative to the member's own
/// position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Moves {
    /// Peers `p + d` around the scope, blocks piece `q` of the universe
    /// (`q` relative to `p`) or the whole universe: equivariant under a
    /// ring.
    Ring { pieces: bool },
    /// Peers `p ^ 2^r`, blocks aligned ranges of the universe: under XOR.
    Xor,
}

/// The phase kinds whose generators are equivariant, and under what.
/// Admitted kinds name every field, so a field added later must be
/// judged here before it compiles.
fn moves(kind: PhaseKind) -> Option<Moves> {
    use PhaseKind as K;
    match kind {
        K::RingReduceScatter { bidir: _ }
        | K::RingAllGather { bidir: _ }
        | K::RingAllReduceFused
        | K::DirectReduceScatter
        | K::DirectAllGather => Some(Moves::Ring { pieces: true }),
        K::DirectAllReduce => Some(Moves::Ring { pieces: false }),
        // Peers `p + d`, blocks named by the member's own index and its
        // peer's (input `i`, output `n + i`): they move with the member.
        K::RingAllToAll | K::DirectAllToAll => Some(Moves::Ring { pieces: false }),
        K::RdhHalving { round: _, balanced: _ } | K::RdhDoubling { round: _, balanced: _ } => Some(Moves::Xor),
        K::RingBroadcast { .. }
        | K::RingReduce { .. }
        | K::DirectBroadcast { .. }
        | K::DirectReduce { .. }
        | K::PointToPoint
        | K::RdhPrologue { .. }
        | K::RdhEpilogue { .. }
        | K::BinomialBroadcast { .. }
        | K::BinomialReduce { .. } => None,
    }
}

/// Whether every phase of `plan` moves under `action` (its groups'
/// action): then in every group whose member 0 runs the collective's steps
/// in order, one block per member, every member's transfers at every step
/// are member 0's moved by its index (see the module overview). `false`
/// decides nothing.
pub(crate) fn phases_move(plan: &CollectivePlan, action: &Action) -> bool {
    let n = plan.groups.size();
    n >= 2 && blocks_move(plan) && plan.phases.iter().all(|phase| phase_moves(plan, action, phase))
}

/// Whether `phase`'s placement around member `m` is member 0's moved by
/// `m` (for every `m`), under a generator that moves with it.
fn phase_moves(plan: &CollectivePlan, action: &Action, phase: &Phase) -> bool {
    let Some(moves) = moves(phase.kind) else { return false };
    let radices = &plan.radices;
    let place = radices.span(0, phase.scope.lo);
    let k = phase.scope.size(radices);
    let one_run = action.run_xor(place, k) == Some(moves == Moves::Xor);
    // The narrowing scopes, in order, each starting at the place value
    // where the previous one ended: member m's universe is the blocks whose
    // digits below `below` are m's, member 0's moved.
    let mut below = 1u64;
    for narrow in &phase.narrow {
        if u64::from(radices.span(0, narrow.lo)) != below {
            return false;
        }
        below *= u64::from(narrow.size(radices));
    }
    // Pieces and ranges: the universe's positions are the scope's digit
    // (and the digits above it, for pieces), so piece or range `q` moves
    // with position `q`.
    let below_scope = below == u64::from(place);
    let top = u64::from(place) * u64::from(k) == u64::from(plan.groups.size());
    let blocks = match moves {
        Moves::Ring { pieces } => below_scope || !pieces,
        Moves::Xor => below_scope && top,
    };
    one_run && blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::schedule::Schedule;
    use crate::testing::Case;
    use crate::verify::symmetry::{Bases, Seen, orbit};
    use crate::verify::transfers::AsBuilt;
    use ccc_ir::enums::{AlgType, OpType};
    use ccc_ir::id::Rank;

    /// Per collective: decided by phase; and whether every group with a
    /// base is symmetric by the walk of every member (the reference).
    fn decisions(schedule: &Schedule) -> Vec<(bool, bool)> {
        schedule
            .collectives
            .iter()
            .map(|plan| {
                let by_phase = phases_move(plan, &Action::of(plan));
                let walked = (0..plan.groups.group_n()).all(|g| {
                    crate::verify::symmetry::base(schedule, plan, g, &AsBuilt).is_none()
                        || orbit(schedule, plan, g, &AsBuilt).is_some()
                });
                (by_phase, walked)
            })
            .collect()
    }

    /// What the production watch (phases, then steps where undecided) and
    /// the step watch of every rank find: the same symmetric groups.
    fn same_as_the_step_watch(schedule: &Schedule) {
        let bases = Bases::new(schedule);
        let ranks = 0..schedule.shape.rank_n;
        let by_phase: Vec<Seen> = ranks.clone().map(|r| bases.watch_rank(schedule, Rank(r))).collect();
        let by_steps: Vec<Seen> = ranks.map(|r| bases.watch_steps(schedule, Rank(r))).collect();
        assert_eq!(by_phase, by_steps);
        assert!(bases.symmetry(schedule, &by_phase).same_groups(&bases.symmetry(schedule, &by_steps)));
    }

    /// Every pairing the tests know and every Hier composition: a
    /// collective decided by phase is symmetric in each group by the walk of
    /// every member, and the watches agree; the ring family, RDH over a
    /// power of two and the Hier compositions of the scale rows are decided.
    #[test]
    fn the_phases_decide_what_the_walk_finds() {
        let mut cases = Case::pairings(&[2, 5, 8, 12]);
        cases.extend(Case::hier_choices().into_iter().map(|(op, choice)| Case::hier(op, &choice, 16, 4)));
        let mut decided = 0;
        for case in &cases {
            let schedule = build(&case.valid()).unwrap();
            for (by_phase, walked) in decisions(&schedule) {
                assert!(!by_phase || walked, "{:?} {:?}: the phases claim what the walk denies", case.op, case.alg);
                decided += u32::from(by_phase);
            }
            same_as_the_step_watch(&schedule);
        }
        assert!(decided > 40, "{decided}");
        use ccc_ir::spec::Leg::{InterAllReduce, IntraAllGather, IntraReduceScatter};
        let scale = [
            (IntraReduceScatter, AlgType::Kangaring),
            (InterAllReduce, AlgType::InterRdh),
            (IntraAllGather, AlgType::Ring),
        ];
        for case in [
            Case::flat(OpType::AllReduce, AlgType::Ring, 16, 4),
            Case::hier(OpType::AllReduce, &scale, 32, 4),
            Case::for_alg(OpType::AllReduce, AlgType::InterRdh, 8).unwrap(),
        ] {
            assert_eq!(decisions(&build(&case.valid()).unwrap()), vec![(true, true)], "{:?}", case.alg);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 1024, ..Default::default() })]

        /// Random specs the validator accepts (every op and algorithm,
        /// Hier legs, replica groups, uneven shapes): the phases never
        /// claim a symmetry the walk of every member denies, and the watch
        /// that asks the phases first finds what the step watch finds.
        #[test]
        fn the_phases_never_claim_what_the_steps_deny(draw in crate::lower::tests::any_draw(1..9, 1..9)) {
            let program = ccc_ir::spec::Program::from(draw.spec());
            if let Ok(schedule) = crate::validate::validate(&program).map_err(drop).and_then(|v| build(&v).map_err(drop)) {
                for (by_phase, walked) in decisions(&schedule) {
                    proptest::prop_assert!(!by_phase || walked, "{:?}", draw.spec());
                }
                same_as_the_step_watch(&schedule);
            }
        }
    }
}
