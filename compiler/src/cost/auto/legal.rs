//! Which of `Auto`'s candidates lower: a candidate whose schedule needs
//! more mesh events on a TOP_SP than the arch has (`mesh_event_max`, 50
//! on Sunda, 108 elsewhere) is not legal for `Auto`, so it is dropped
//! before it is costed (`docs/cost-model.md` §4).
//!
//! Lowering gives every MESH record one event per peer that sends to the
//! rank in the record's phase, on every TOP_SP that hosts one of the
//! collective's channels (each hosts at least one, so each gets the same
//! events), and a TOP_SP's events add up over its records
//! (`lower/mod.rs`, `Limit::MeshEvents`). So a candidate needs, on each
//! TOP_SP it uses, the most any member of a group needs: the sum over its
//! mesh phases of the member's sending peers ([`phase_events`]). Every
//! mesh phase is one step (`algorithms`), and its senders follow from its
//! pattern: `k - 1` for every member of a direct reduce-scatter,
//! all-gather, all-reduce or all-to-all over a scope of `k`; `k - 1` for a
//! direct reduce's root and none for the others; one for a direct
//! broadcast's non-roots; at most one in an RDH or binomial round or a
//! point-to-point step. [`Bounds`] sums each phase's fewest and most over
//! the members, which settles it when the most fits (or when every phase
//! is the same for every member); only otherwise does [`events_needed`]
//! count member by member, naming
//! the senders of the phases that differ by generating their one step's
//! transfers, as lowering does. A test holds [`phase_events`] equal to
//! what lowering gives every mesh record (`compiler/tests/cost_legal.rs`).
//!
//! A TOP_SP's table serves the whole program, so a candidate is held to
//! what the program's collectives before it leave
//! ([`Machine::mesh_event_room`](super::Machine::mesh_event_room); the
//! sum is kept by validation's `ProgramAuto`).

use crate::algorithms::transfers;
use crate::schedule::{CollectivePlan, Phase, PhaseKind, Transfer};
use crate::valid::Shape;
use ccc_ir::enums::DevicePattern;

/// The mesh events member `member` of a group of `plan` waits on in
/// `phase`, on every TOP_SP the collective uses: one per peer that sends
/// to it in the phase, as lowering counts them (`out` is scratch). None
/// for a phase that is not lowered to MESH records.
pub fn phase_events(shape: &Shape, plan: &CollectivePlan, phase: &Phase, member: u32, out: &mut Vec<Transfer>) -> u32 {
    match bounds(plan, phase) {
        Bounds { lo, hi } if lo == hi => lo,
        _ => senders(shape, plan, phase, member, out),
    }
}

/// The most mesh events any member of a group needs on a TOP_SP over
/// `phases` (each with its plan: a hierarchical combination's legs may be
/// planned apart), when that is more than `max`; `None` when it fits.
/// Cheap when the phases' own bounds settle it ([`Bounds::over`]).
pub fn events_over(shape: &Shape, phases: &[(&CollectivePlan, &Phase)], max: u32) -> Option<u32> {
    Bounds::of(phases.iter().copied()).over(max, || events_needed(shape, phases))
}

/// The fewest and the most mesh events a member of a group needs on a
/// TOP_SP over some phases: each phase's fewest and most over the
/// members, from its pattern alone, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bounds {
    /// At most what every member needs.
    pub lo: u32,
    /// At least what any member needs.
    pub hi: u32,
}

impl Bounds {
    /// The bounds of `phases`, summed.
    pub fn of<'p>(phases: impl IntoIterator<Item = (&'p CollectivePlan, &'p Phase)>) -> Bounds {
        phases.into_iter().fold(Bounds::default(), |sum, (plan, phase)| sum + bounds(plan, phase))
    }

    /// The most events any member needs when more than `max`, `None` when
    /// it fits: settled by the bounds when the most fits or every member
    /// needs the same, else by `exact` (the count member by member,
    /// [`events_needed`]).
    pub fn over(self, max: u32, exact: impl FnOnce() -> u32) -> Option<u32> {
        if self.hi <= max {
            return None;
        }
        let needed = if self.lo == self.hi { self.hi } else { exact() };
        (needed > max).then_some(needed)
    }
}

impl Bounds {
    /// The mesh events to judge a candidate by against `max`: the bounds'
    /// most when it fits (at least what any member needs), else what the
    /// most-needing member needs (the bounds' when every member needs the
    /// same, else `exact`). More than `max` exactly when [`Bounds::over`]
    /// says it is over.
    pub fn need(self, max: u32, exact: impl FnOnce() -> u32) -> u32 {
        if self.hi <= max || self.lo == self.hi { self.hi } else { exact() }
    }
}

impl std::ops::Add for Bounds {
    type Output = Bounds;

    fn add(self, other: Bounds) -> Bounds {
        Bounds { lo: self.lo.saturating_add(other.lo), hi: self.hi.saturating_add(other.hi) }
    }
}

/// The most mesh events any member of a group needs on a TOP_SP over
/// `phases`, counted member by member where the phases' bounds do not
/// settle it.
pub fn events_needed(shape: &Shape, phases: &[(&CollectivePlan, &Phase)]) -> u32 {
    let Some(&(first, _)) = phases.first() else { return 0 };
    let mut out = Vec::new();
    let mut most = 0;
    for member in 0..first.groups.size() {
        let mut n = 0u32;
        for &(plan, phase) in phases {
            n = n.saturating_add(phase_events(shape, plan, phase, member, &mut out));
        }
        most = most.max(n);
    }
    most
}

/// The fewest and the most mesh events a member needs in `phase`, from
/// its pattern alone (equal when every member needs the same).
fn bounds(plan: &CollectivePlan, phase: &Phase) -> Bounds {
    use PhaseKind as K;
    if phase.alg.pattern() != Some(DevicePattern::Mesh) {
        return Bounds::default();
    }
    // Every member's scope has this size.
    let others = phase.scope.size(&plan.radices).saturating_sub(1);
    let (lo, hi) = match phase.kind {
        K::DirectReduceScatter | K::DirectAllGather | K::DirectAllReduce | K::DirectAllToAll => (others, others),
        K::DirectBroadcast { .. }
        | K::PointToPoint
        | K::RdhPrologue { .. }
        | K::RdhHalving { .. }
        | K::RdhDoubling { .. }
        | K::RdhEpilogue { .. }
        | K::BinomialBroadcast { .. }
        | K::BinomialReduce { .. } => (0, others.min(1)),
        // A direct reduce's root hears from every other member; no mesh
        // algorithm composes ring phases, but were one to, its senders
        // are still members of its scope.
        _ => (0, others),
    };
    Bounds { lo, hi }
}

/// The peers that send to `member` in any step of `phase`, counted from
/// the transfers lowering posts (`out` is scratch).
fn senders(shape: &Shape, plan: &CollectivePlan, phase: &Phase, member: u32, out: &mut Vec<Transfer>) -> u32 {
    let inst = plan.instance(phase, member);
    out.clear();
    for t in 0..phase.step_n {
        transfers::<false>(plan, shape, 0, phase, inst, t, out);
    }
    let mut from: Vec<u32> = out.iter().filter(|t| t.to == member && t.from != member).map(|t| t.from).collect();
    from.sort_unstable();
    from.dedup();
    from.len() as u32
}
