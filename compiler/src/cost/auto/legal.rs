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
//! point-to-point step. [`events_needed`] sums each phase's most over the
//! members and is done when that fits (or when every phase is the same for
//! every member); only otherwise does it count member by member, naming
//! the senders of the phases that differ by generating their one step's
//! transfers, as lowering does. A test holds [`phase_events`] equal to
//! what lowering gives every mesh record (`compiler/tests/cost_legal.rs`).
//!
//! Each collective is judged alone: a TOP_SP's table serves the whole
//! program, so a program whose collectives each fit can still need more
//! in all, and lowering still refuses it with `Limit::MeshEvents`.

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
        (lo, hi) if lo == hi => lo,
        _ => senders(shape, plan, phase, member, out),
    }
}

/// The most mesh events any member of a group needs on a TOP_SP over
/// `phases` (each with its plan: a hierarchical combination's legs may be
/// planned apart), when that is more than `max`; `None` when it fits.
/// Cheap when it fits by the phases' own bounds: each phase's most over
/// the members, summed.
pub fn events_over(shape: &Shape, phases: &[(&CollectivePlan, &Phase)], max: u32) -> Option<u32> {
    let (mut lo, mut hi) = (0u32, 0u32);
    for &(plan, phase) in phases {
        let (l, h) = bounds(plan, phase);
        lo = lo.saturating_add(l);
        hi = hi.saturating_add(h);
    }
    if hi <= max {
        return None;
    }
    let needed = if lo == hi { hi } else { events_needed(shape, phases) };
    (needed > max).then_some(needed)
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
/// its pattern alone (`(n, n)` when every member needs `n`).
fn bounds(plan: &CollectivePlan, phase: &Phase) -> (u32, u32) {
    use PhaseKind as K;
    if phase.alg.pattern() != Some(DevicePattern::Mesh) {
        return (0, 0);
    }
    // Every member's scope has the same size.
    let others = plan.instance(phase, 0).scope.k.saturating_sub(1);
    match phase.kind {
        K::DirectReduceScatter | K::DirectAllGather | K::DirectAllReduce | K::DirectAllToAll => (others, others),
        K::DirectBroadcast { .. } => (0, others.min(1)),
        K::PointToPoint
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
    }
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
