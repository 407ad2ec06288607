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
//! - **By steps** elsewhere (rooted and peer-map phases, RDH
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
//! **Groups no watch can serve.** A rank's [`Seen`] has two readers:
//! [`Bases::symmetry`], which takes a group as symmetric only when every
//! member's watch saw it moved at every step; and the protocol proof,
//! which checks a rank from member 0's needs when its watch saw it moved
//! and its group has member 0's profile (`protocol::Profiles`), else from
//! its own step graph. So in a group without a profile whose watch of one
//! member already sees a step that is not member 0's moved, no watch of
//! any member can change what either reader concludes: the group is not
//! symmetric whatever the others see, and the protocol proof checks each
//! member from its own step graph, with the same figures, either way.
//! [`Bases::deny_unneeded`] (in `Prover::new`, once per schedule) runs the
//! watch of a few members of each such group not decided by its phases
//! (the last, the middle one and the second: recursive halving with a
//! prologue shows it on its last member, which idles while member 0
//! sends) and marks the group denied when one sees a step not moved; its
//! ranks are then not watched, and read as seen not moved. A group the
//! sample does not deny is watched as before. On the InterRdh all-reduce
//! of 3,072 ranks this saves every rank's watch (13.6 M instructions).
//!
//! Invariance is what lets the postcondition proof execute member 0
//! alone: if the buffers start invariant (member `m`'s block `b` holds
//! member 0's block `b - m` with every contributor moved by `m`), every
//! step keeps them so, since every member reads and writes the same cells
//! relative to itself. Checking invariance by steps costs a comparison per
//! transfer of the world, by phase a look at each phase; the symbolic
//! execution it saves costs a buffer of `n` x `n` cells and a fold per
//! block moved in the world.
//!
//! This file holds the symmetry found and each rank's watch;
//! `orbit.rs` member 0's transfers ([`Orbit`]) and the walks that compare
//! other members with them (`orbit`, [`sampled`]); `tests.rs` the tests.

mod orbit;
#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use orbit::orbit;
pub(crate) use orbit::{
    BaseSize, Orbit, base, base_size, sampled, sampled_holds, sampled_holds_sized, walk_moved_by_phase,
};

use super::by_phase::phases_move;
use super::transfers::AsBuilt;
#[cfg(test)]
use super::transfers::TransferSource;
use crate::schedule::{CollectivePlan, Schedule};
use crate::step_graph::{NodeView, walk_collective};
use crate::valid::GroupMember;
use ccc_ir::id::Rank;
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
/// members or more, one block per member or an all-to-all's two), listed before any rank is
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
    /// `[collective][group]`: no rank's watch is needed, the group being
    /// not symmetric (see [`Bases::deny_unneeded`]); empty until then.
    denied: Vec<Vec<bool>>,
}

/// The members whose watches [`Bases::deny_unneeded`] asks, in order, of
/// a group of `n` (two or more): the last, the middle one and the second,
/// each once. A group that is not symmetric mostly shows it on one of
/// them (RDH with a prologue: the last member idles while member 0 sends).
fn sample_members(n: u32) -> impl Iterator<Item = u32> {
    let members = [n - 1, n / 2, 1];
    members.into_iter().enumerate().filter(move |&(i, m)| m > 0 && !members[..i].contains(&m)).map(|(_, m)| m)
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
        Bases { orbits, by_phase, denied: Vec::new() }
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
    /// phases decide; with `probe`, a group [`Bases::deny_unneeded`]
    /// denied is not watched, and a collective is first looked at in the
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
                watch.set(plan, based.then_some(plan.step_n));
                continue;
            }
            // A group a member's watch denied (see `Bases::deny_unneeded`)
            // is not watched again.
            if probe && self.denied(plan.index, at.group()) {
                watch.set(plan, None);
                continue;
            }
            watch.collective(schedule, plan, at, probe);
        }
        watch.finish()
    }

    /// Marks denied the groups no rank's watch can serve (see the module
    /// overview): those `needed` does not ask for, not decided by their
    /// phases, where the watch of one of a few members (`sample_members`)
    /// already sees a step that is not member 0's moved, so that the group
    /// is not symmetric whatever its other members' watches see. The
    /// ranks of a denied group are then not watched ([`Bases::watch_rank`]
    /// sees none of their steps moved). `needed(collective, group)`: some
    /// reader of a member's [`Seen`] other than [`Bases::symmetry`] uses
    /// it (the protocol proof, when it holds member 0's needs).
    /// The groups are taken on every core (each decided on its own, in
    /// group order: the same for any thread count).
    pub(crate) fn deny_unneeded(&mut self, schedule: &Schedule, needed: impl Fn(u32, u32) -> bool + Sync) {
        let mut denied: Vec<Vec<bool>> = Vec::with_capacity(schedule.collectives.len());
        for plan in &schedule.collectives {
            let decided = self.by_phase.get(plan.index as usize).copied().unwrap_or(false);
            let n = plan.groups.size();
            let deny = |g: u32| {
                let undecided = !decided && self.orbit(plan.index, g).is_some() && !needed(plan.index, g);
                undecided && sample_members(n).any(|m| self.member_denies(schedule, plan, g, m))
            };
            denied.push((0..plan.groups.group_n()).into_par_iter().map(deny).collect());
        }
        self.denied = denied;
    }

    /// Whether member `m` of group `g`'s watch sees a step of `plan` that
    /// is not member 0's moved: what [`Bases::watch_rank`] would see of it.
    fn member_denies(&self, schedule: &Schedule, plan: &CollectivePlan, g: u32, m: u32) -> bool {
        let Some(at) = plan.rank(g, m).and_then(|r| plan.groups.locate(r)) else { return false };
        let mut watch = self.watch(at.rank());
        watch.collective(schedule, plan, at, true);
        !watch.seen.all_moved(plan)
    }

    /// Whether [`Bases::deny_unneeded`] denied `group` of `collective`.
    fn denied(&self, collective: u32, group: u32) -> bool {
        self.denied.get(collective as usize).and_then(|g| g.get(group as usize)).copied().unwrap_or(false)
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

    /// What the rank runs of `plan` (which it is a member of, at `at`),
    /// walked step by step: the walk stops at the first step that is not
    /// member 0's moved, whatever follows (at once when the group has no
    /// base to compare with); with `probe`, it is not taken when the middle
    /// step of some phase is not.
    fn collective(&mut self, schedule: &Schedule, plan: &CollectivePlan, at: GroupMember, probe: bool) {
        let base = self.bases.orbit(plan.index, at.group());
        if base.is_none_or(|base| probe && !base.moves_at_middles(schedule, plan, at)) {
            self.set(plan, None);
            return;
        }
        let _stopped: Result<(), ()> = walk_collective(schedule, plan, at, |node| {
            self.see(plan, &node);
            if self.broken(plan) { Err(()) } else { Ok(()) }
        });
    }

    /// Sets what was seen of `plan`: `steps` moved in a row from step 0,
    /// or `None`.
    fn set(&mut self, plan: &CollectivePlan, steps: Option<u32>) {
        if let Some(seen) = self.seen.steps.get_mut(plan.index as usize) {
            *seen = steps;
        }
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
