//! Symmetry: when every member of a group runs member 0's program moved
//! to its own index, member 0's run stands for every member's.
//!
//! A group's indices move under its `action::Action` (rings of its
//! digits, or XOR under recursive halving and doubling).
//!
//! A group is *symmetric* (invariant under its action) when, at every
//! step, member `m`'s transfers are member 0's, in the same order, with
//! every member index and every block moved by `m` under the action, and
//! nothing else changed (but the display-only `neigh` label). A ring is:
//! member `m` sends block `m - s` to `m + 1` at step `s`.
//!
//! [`Bases`] lists member 0's transfers of every group before any rank is
//! lowered, and each rank's watch ([`Bases::watch_rank`], after lowering)
//! says per collective whether the rank runs them moved ([`Seen`]); a
//! group is symmetric when every member's watch says so. It is found two
//! ways:
//!
//! - **By phase**, where the collective's phases decide it (`by_phase`):
//!   every phase's scope is one run of the action, its blocks narrowed
//!   to match, and its generator names peers and blocks only relative to
//!   the member's position (rings, meshes, RDH over a power of two). Then
//!   every member's transfers are member 0's moved, and no step of any
//!   rank is walked: the watch costs O(collectives) per rank.
//! - **By steps** elsewhere (rooted, peer-map and all-to-all phases, RDH
//!   with a prologue, scopes the action cuts): the rank's step graph is
//!   walked and a [`Watch`] compares each step's transfers with member
//!   0's, moved, from the transfers themselves, not from what the
//!   algorithm is called; the walk stops at the first step that is not
//!   (nothing after it can make the collective symmetric for the rank),
//!   and is not taken when the middle step of some phase is not (a
//!   rooted chain's member would walk its idle steps up to its place
//!   along the chain first: 8.1 M steps over a 4,096-rank broadcast's
//!   ranks). This is also the reference the phases are tested
//!   against (`Bases::watch_steps`, every collective walked), as is
//!   `orbit`, which walks every member.
//!
//! Invariance is what lets the postcondition proof execute member 0
//! alone: if the buffers start invariant (member `m`'s block `b` holds
//! member 0's block `b - m` with every contributor moved by `m`), every
//! step keeps them so, since every member reads and writes the same cells
//! relative to itself. Checking invariance by steps costs a comparison per
//! transfer of the world, by phase a look at each phase; the symbolic
//! execution it saves costs a buffer of `n` x `n` cells and a fold per
//! block moved in the world.

use super::action::{Action, is_moved_by, is_moved_with};
use super::by_phase::phases_move;
use super::transfers::{AsBuilt, TransferSource, walk};
use crate::schedule::{CollectivePlan, Schedule, Transfer};
use crate::step_graph::{NodeView, walk_collective};
use crate::valid::GroupMember;
use ccc_ir::id::Rank;
#[cfg(test)]
use rayon::prelude::*;
use std::borrow::Cow;

/// The symmetric groups of every collective of a schedule, found
/// once and shared by both provers: member 0's transfers, borrowed from
/// the [`Bases`] they were found with (owned when found by a walk).
#[derive(Debug)]
pub(crate) struct Symmetry<'b> {
    /// `[collective][group]`.
    orbits: Vec<Vec<Option<Cow<'b, Orbit>>>>,
    /// How many of them the phases' structure showed invariant (the others
    /// were watched step by step).
    by_phase: u64,
}

impl Symmetry<'_> {
    /// Finds the symmetric groups of the schedule as built.
    #[cfg(test)]
    pub(crate) fn find(schedule: &Schedule) -> Symmetry<'static> {
        Symmetry::find_with(schedule, &AsBuilt)
    }

    /// Finds them from `source`'s transfers.
    #[cfg(test)]
    pub(crate) fn find_with<S: TransferSource + ?Sized>(schedule: &Schedule, source: &S) -> Symmetry<'static> {
        let orbits = schedule
            .collectives
            .iter()
            .map(|plan| (0..plan.groups.group_n()).map(|g| orbit(schedule, plan, g, source).map(Cow::Owned)).collect())
            .collect();
        Symmetry { orbits, by_phase: 0 }
    }

    /// No group taken as invariant: every proof runs in full.
    pub(crate) fn none() -> Symmetry<'static> {
        Symmetry { orbits: Vec::new(), by_phase: 0 }
    }

    /// Member 0's transfers of `group` of `collective`, if it is invariant.
    pub(crate) fn orbit(&self, collective: u32, group: u32) -> Option<&Orbit> {
        self.orbits.get(collective as usize)?.get(group as usize)?.as_deref()
    }

    /// How many groups, over every collective, are symmetric.
    pub(crate) fn symmetric_groups(&self) -> u64 {
        self.orbits.iter().flatten().filter(|r| r.is_some()).count() as u64
    }

    /// How many of them the phases' structure showed invariant.
    pub(crate) fn by_phase(&self) -> u64 {
        self.by_phase
    }

    /// Whether both take the same groups as invariant, with the same
    /// member 0's transfers (however they were found).
    #[cfg(test)]
    pub(crate) fn same_groups(&self, other: &Symmetry<'_>) -> bool {
        self.orbits == other.orbits
    }
}

/// Member 0's transfers of every group that can be symmetric (two
/// members or more, one block per member), listed before any rank is
/// lowered, and per collective whether its phases move under its action
/// (`by_phase`): what each rank's watch ([`Bases::watch_rank`], in
/// `Prover::watch`, after lowering) decides from. The result is the one
/// walking every member (`Symmetry::find`) gives.
#[derive(Debug)]
pub(crate) struct Bases {
    /// `[collective][group]`.
    orbits: Vec<Vec<Option<Orbit>>>,
    /// Per collective: every member of a group with a base runs member
    /// 0's transfers moved, as its phases show (see `by_phase`).
    by_phase: Vec<bool>,
}

impl Bases {
    /// Member 0's transfers of every candidate group of the schedule as built.
    pub(crate) fn new(schedule: &Schedule) -> Bases {
        let orbits: Vec<Vec<Option<Orbit>>> = schedule
            .collectives
            .iter()
            .map(|plan| (0..plan.groups.group_n()).map(|g| base(schedule, plan, g, &AsBuilt)).collect())
            .collect();
        let by_phase = schedule
            .collectives
            .iter()
            .zip(&orbits)
            .map(|(plan, groups)| match groups.iter().flatten().next() {
                Some(orbit) => phases_move(plan, &orbit.action),
                None => false,
            })
            .collect();
        Bases { orbits, by_phase }
    }

    /// A watch for rank `rank`'s step graph.
    fn watch(&self, rank: Rank) -> Watch<'_> {
        Watch { bases: self, seen: Seen { rank, steps: vec![Some(0); self.orbits.len()] } }
    }

    /// What `rank` runs, collective by collective: every step member 0's
    /// moved when the collective's phases show it and its group has a base
    /// (no step walked); otherwise what a watch sees of its step graph,
    /// walked step by step.
    pub(crate) fn watch_rank(&self, schedule: &Schedule, rank: Rank) -> Seen {
        let decided = |plan: &CollectivePlan| self.by_phase.get(plan.index as usize).copied().unwrap_or(false);
        self.watch_where(schedule, rank, decided, true)
    }

    /// What a watch sees of `rank`'s step graph, every collective walked
    /// step by step: the reference [`Bases::watch_rank`] is tested against.
    #[cfg(test)]
    pub(crate) fn watch_steps(&self, schedule: &Schedule, rank: Rank) -> Seen {
        self.watch_where(schedule, rank, |_| false, false)
    }

    /// [`Bases::watch_rank`], with the collectives `decided` says the
    /// phases decide; with `probe`, a collective is first looked at in the
    /// middle step of each phase, and not walked when one is not member
    /// 0's moved (the walk would stop there or before: a rooted chain's
    /// member idles until its window opens, so a walk from step 0 costs
    /// it as many steps as its place along the chain).
    fn watch_where(
        &self,
        schedule: &Schedule,
        rank: Rank,
        decided: impl Fn(&CollectivePlan) -> bool,
        probe: bool,
    ) -> Seen {
        let mut watch = self.watch(rank);
        for plan in &schedule.collectives {
            // A rank the groups do not hold has no nodes to see.
            let Some(at) = plan.groups.locate(rank) else { continue };
            if decided(plan) {
                let based = self.orbit(plan.index, at.group()).is_some();
                if let Some(steps) = watch.seen.steps.get_mut(plan.index as usize) {
                    *steps = based.then_some(plan.step_n);
                }
                continue;
            }
            // Once a step is not member 0's moved the collective is not
            // symmetric for this rank, whatever follows: the walk stops
            // there (at once when the group has no base to compare with).
            let base = self.orbit(plan.index, at.group());
            if base.is_none_or(|base| probe && !base.moves_at_middles(schedule, plan, at)) {
                if let Some(steps) = watch.seen.steps.get_mut(plan.index as usize) {
                    *steps = None;
                }
                continue;
            }
            let _stopped: Result<(), ()> = walk_collective(schedule, plan, at, |node| {
                watch.see(plan, &node);
                if watch.broken(plan) { Err(()) } else { Ok(()) }
            });
        }
        watch.finish()
    }

    /// Member 0's transfers of `group` of `collective`, if it can be
    /// symmetric.
    pub(crate) fn orbit(&self, collective: u32, group: u32) -> Option<&Orbit> {
        self.orbits.get(collective as usize)?.get(group as usize)?.as_ref()
    }

    /// The invariant groups: every member of the group was watched, and at
    /// every step of the collective its transfers were member 0's moved.
    /// A rank missing from `seen` leaves its groups not invariant.
    pub(crate) fn symmetry(&self, schedule: &Schedule, seen: &[Seen]) -> Symmetry<'_> {
        let mut by_rank: Vec<Option<&Seen>> = vec![None; schedule.shape.rank_n as usize];
        for s in seen {
            if let Some(slot) = by_rank.get_mut(s.rank.0 as usize) {
                *slot = Some(s);
            }
        }
        let mut by_phase = 0;
        let orbits = self
            .orbits
            .iter()
            .zip(&schedule.collectives)
            .map(|(groups, plan)| {
                let whole = |g: u32| {
                    (0..plan.groups.size()).all(|m| {
                        let seen = plan.rank(g, m).and_then(|r| by_rank.get(r.0 as usize).copied().flatten());
                        seen.is_some_and(|s| s.all_moved(plan))
                    })
                };
                let groups: Vec<Option<Cow<'_, Orbit>>> = groups
                    .iter()
                    .enumerate()
                    .map(|(g, o)| o.as_ref().filter(|_| whole(g as u32)).map(Cow::Borrowed))
                    .collect();
                if self.by_phase.get(plan.index as usize).copied().unwrap_or(false) {
                    by_phase += groups.iter().flatten().count() as u64;
                }
                groups
            })
            .collect();
        Symmetry { orbits, by_phase }
    }
}

/// One rank's watch: per collective, how many steps in a row its
/// transfers were its group's base moved by its index.
pub(crate) struct Watch<'a> {
    bases: &'a Bases,
    seen: Seen,
}

/// What a [`Watch`] saw of one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    rank: Rank,
    /// Per collective: steps seen moved, in order from step 0; `None`
    /// once one was not.
    steps: Vec<Option<u32>>,
}

impl Seen {
    /// Nothing seen of `rank` (no watch: symmetry off).
    pub(crate) fn unwatched(rank: Rank) -> Seen {
        Seen { rank, steps: Vec::new() }
    }

    /// Whether at every step of `plan` the rank's transfers were member
    /// 0's moved to it.
    pub(crate) fn all_moved(&self, plan: &CollectivePlan) -> bool {
        self.steps.get(plan.index as usize) == Some(&Some(plan.step_n))
    }
}

impl Watch<'_> {
    /// One node of the rank's step graph, as the proof walks it.
    #[inline]
    pub(crate) fn see(&mut self, plan: &CollectivePlan, node: &NodeView<'_>) {
        let Some(steps) = self.seen.steps.get_mut(plan.index as usize) else { return };
        // Steps come in order from 0; once broken, never counted again.
        if *steps != Some(node.step) {
            *steps = None;
            return;
        }
        let base = self.bases.orbits.get(plan.index as usize).and_then(|g| g.get(node.group as usize));
        let moved =
            base.and_then(Option::as_ref).is_some_and(|base| base.moves_to(node.step, node.member, node.transfers));
        *steps = moved.then_some(node.step + 1);
    }

    /// Whether some step of `plan` was seen not moved (nothing after it
    /// can count).
    fn broken(&self, plan: &CollectivePlan) -> bool {
        self.seen.steps.get(plan.index as usize).is_some_and(Option::is_none)
    }

    /// What it saw.
    pub(crate) fn finish(self) -> Seen {
        self.seen
    }
}

/// Member 0's transfers of a group, step by step, with the action that
/// moves them to every member: in a symmetric group every member's
/// transfers are their orbit under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Orbit {
    /// How the group's indices move.
    pub(crate) action: Action,
    transfers: Vec<Transfer>,
    /// Step `s`'s transfers are `transfers[at[s]..at[s + 1]]`.
    at: Vec<usize>,
}

impl Orbit {
    /// Whether `transfers`, a member's at collective step `step`, are
    /// member 0's moved to `member`, in order (what a watch asks of each
    /// node).
    fn moves_to(&self, step: u32, member: u32, transfers: &[Transfer]) -> bool {
        let (first, end) = self.span(step);
        end - first == transfers.len() && {
            let by = self.action.by(member);
            transfers.iter().zip(&self.transfers[first..end]).all(|(x, b)| is_moved_with(x, b, &by))
        }
    }

    /// Whether `at`'s transfers at the middle step of each phase of
    /// `plan` are member 0's moved to it: when not, some step of the
    /// collective is not, and a walk of its steps finds so.
    fn moves_at_middles(&self, schedule: &Schedule, plan: &CollectivePlan, at: GroupMember) -> bool {
        let mut transfers = Vec::new();
        plan.phases.iter().filter(|p| p.step_n > 0).all(|p| {
            let t = p.step_n / 2;
            transfers.clear();
            schedule.phase_transfers(plan, at.group(), p, plan.instance(p, at.index()), t, &mut transfers);
            self.moves_to(p.first_step + t, at.index(), &transfers)
        })
    }

    /// Member 0's transfers, of every step in order.
    pub(crate) fn transfers(&self) -> &[Transfer] {
        &self.transfers
    }

    /// Where member 0's transfers of step `s` start and end among all of
    /// them (an empty span past the last step).
    #[inline(always)]
    pub(crate) fn span(&self, s: u32) -> (usize, usize) {
        let s = s as usize;
        match (self.at.get(s), self.at.get(s + 1)) {
            (Some(&a), Some(&b)) => (a, b),
            _ => (0, 0),
        }
    }

    /// Member 0's transfers at step `s` of the collective.
    pub(crate) fn step(&self, s: u32) -> &[Transfer] {
        let (a, b) = self.span(s);
        &self.transfers[a..b]
    }
}

/// Member 0's transfers, if every member of `group` lists, at every step,
/// exactly member 0's moved by its index; `None` at the first member and
/// step that does not (or for a group of fewer than two members, or whose
/// blocks are not one per member, where moving means nothing). The tests'
/// reference: a compile finds the same groups with [`Watch`]es.
#[cfg(test)]
pub(crate) fn orbit<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    source: &S,
) -> Option<Orbit> {
    let n = plan.groups.size();
    let base = base(schedule, plan, group, source)?;
    let same = (1..n).into_par_iter().with_min_len(8).all(|m| {
        let mut step = 0u32;
        walk(schedule, plan, group, m, source, |_, list| {
            let want = base.step(step);
            step += 1;
            list.len() == want.len() && list.iter().zip(want).all(|(x, b)| is_moved_by(x, b, m, &base.action))
        })
    });
    same.then_some(base)
}

/// Members a [`sampled`] check compares with member 0.
const SAMPLES: u32 = 16;

/// Member 0's transfers, if a sample of the group's members (the second,
/// the last and [`SAMPLES`] spread between) each list, at every step,
/// exactly member 0's moved to them: a necessary condition of
/// `orbit` at the cost of a few members' walks. `None` proves the
/// group is not symmetric; `Some` only says the sample did not show it.
/// Where the phases decide (`by_phase`), no member past 0 is walked.
pub(crate) fn sampled(schedule: &Schedule, plan: &CollectivePlan, group: u32) -> Option<Orbit> {
    let n = plan.groups.size();
    let base = base(schedule, plan, group, &AsBuilt)?;
    if phases_move(plan, &base.action) {
        return Some(base);
    }
    let mut members: Vec<u32> =
        (0..SAMPLES).map(|i| 1 + (u64::from(n - 1) * u64::from(i) / u64::from(SAMPLES)) as u32).collect();
    members.push(n - 1);
    members.sort_unstable();
    members.dedup();
    let same = members.iter().all(|&m| {
        let mut step = 0u32;
        walk(schedule, plan, group, m, &AsBuilt, |_, list| {
            let want = base.step(step);
            step += 1;
            list.len() == want.len() && list.iter().zip(want).all(|(x, b)| is_moved_by(x, b, m, &base.action))
        })
    });
    same.then_some(base)
}

/// Member 0's transfers, step by step, for a group that can be invariant:
/// two members or more, one block per member (elsewhere rotation means
/// nothing).
pub(crate) fn base<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    source: &S,
) -> Option<Orbit> {
    let n = plan.groups.size();
    if n < 2 || plan.layout().block_n() != n {
        return None;
    }
    let mut base = Orbit { action: Action::of(plan), transfers: Vec::new(), at: vec![0] };
    // The phases must run steps 0..step_n, once each, in order: what both
    // the full run and the orbit run execute.
    let ordered = walk(schedule, plan, group, 0, source, |step, list| {
        if step as usize + 1 != base.at.len() {
            return false;
        }
        base.transfers.extend_from_slice(list);
        base.at.push(base.transfers.len());
        true
    });
    (ordered && base.at.len() == plan.step_n as usize + 1).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::schedule::BlockSet;
    use crate::testing::Case;
    use crate::verify::action::blocks_moved;
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
                    let base = &rot.transfers[k];
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
}
