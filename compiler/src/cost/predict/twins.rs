//! Sampled members whose load at every step of a phase is, to the bit,
//! that of a sampled member costed before them, so that a prediction need
//! not cost them (`docs/cost-model-revisions.md`).
//!
//! A step's load of member `m` is read from the transfers the pattern
//! generates around `m`'s placement (`PhaseInstance`): its scope's size,
//! stride and `m`'s position in it, and the blocks its universe holds.
//! Two members placed alike but for where their scope starts (the same
//! size, stride, position, universe block count and stride, and blocks a
//! piece) get the same transfers, every group index moved by the members'
//! distance `d` and every block set by their universes' distance (the
//! generators name scope positions and block sets relative to the
//! universe, and an all-to-all's blocks by those group indices). On world
//! groups (group index = rank) the load then differs in nothing:
//!
//! - a transfer's bytes and descriptors depend on its block count and
//!   halves alone when the layout is position-free
//!   ([`DescTable::position_free`]: every block of every member holds the
//!   same elements);
//! - its hop (`relation`) is kept when every rank of the transfers moves
//!   by the same number of nodes, which holds when `d` is a whole number of
//!   nodes, or when the scope's stride is (every member of the scope, hence
//!   every rank a transfer names, sits at the same place in its node, so
//!   every one crosses the same node boundaries), and when that number of
//!   nodes is a whole number of pods or there is one pod;
//! - an intra-node transfer's ring distance depends on the two ranks'
//!   difference alone ([`ring_hops`](super::load::ring_hops));
//! - the member's distinct senders are counted alike (the move is one to
//!   one).
//!
//! (On the plans ccc builds the node and pod conditions decide nothing:
//! world groups' radices follow the shape's digits, so members placed
//! alike already cross the same node and pod boundaries; dropping either
//! fails no test. They are kept for the argument's sake, which does not
//! lean on how the radices are chosen.)
//!
//! The point-to-point pattern is left out: its peers are a map of group
//! indices, not of scope positions. A step's cost is its most expensive
//! member's (the first on a tie), the most any sends and the widest hop,
//! so a member whose load equals an earlier one's changes none of them.
//! `cost/predict/tests.rs` holds every member's load equal to that of the
//! first member it is found a twin of, for every step of every phase of
//! its grid; the cost tests compare the predictions with the walk that
//! costs every member.

use crate::schedule::{CollectivePlan, DescTable, Phase, PhaseInstance, PhaseKind};
use crate::valid::Shape;

/// Whether member `b` (placed `ib`) has, at every step of `phase`, the
/// load of member `a` (placed `ia`), by the argument of the module doc,
/// in a phase where [`may_have_twins`] holds.
pub(super) fn alike(shape: &Shape, (a, ia): (u32, PhaseInstance), (b, ib): (u32, PhaseInstance)) -> bool {
    let (sa, sb) = (ia.scope, ib.scope);
    let placed_alike = sa.k == sb.k
        && sa.stride == sb.stride
        && sa.pos == sb.pos
        && ia.universe.count == ib.universe.count
        && ia.universe.stride == ib.universe.stride
        && ia.per_piece == ib.per_piece;
    if !placed_alike {
        return false;
    }
    let local = shape.local_rank_n.max(1);
    // Every rank the transfers name moves by the same number of nodes.
    let same_nodes = a.abs_diff(b).is_multiple_of(local) || sa.stride.is_multiple_of(local);
    // And their pods with them.
    let nodes = (a / local).abs_diff(b / local);
    same_nodes && (shape.pod_n <= 1 || nodes.is_multiple_of(shape.nodes_per_pod.max(1)))
}

/// Whether a walk may look for twins among its members in a phase: world
/// groups, a position-free layout and a pattern whose peers are scope
/// positions (the module doc).
pub(super) fn may_have_twins(plan: &CollectivePlan, table: &DescTable<'_>, phase: &Phase) -> bool {
    !plan.groups.is_explicit() && table.position_free() && !matches!(phase.kind, PhaseKind::PointToPoint)
}

/// The costed members (`members`, placed `insts`) that are twins of an
/// earlier one ([`alike`]), as a bit mask by position: bit `i` set when
/// member `i` need not be costed. The first member never is a twin; at
/// most [`MAX_MEMBERS`] members are looked at (a walk costs every member
/// of an irregular group of up to 512; those past the first 32 are costed,
/// not looked at).
pub(super) fn of(shape: &Shape, members: &[u32], insts: &[PhaseInstance]) -> u32 {
    let mut twins = 0u32;
    for (j, (&b, &ib)) in members.iter().zip(insts).enumerate().take(MAX_MEMBERS).skip(1) {
        let mut earlier = members.iter().zip(insts).take(j);
        if earlier.any(|(&a, &ia)| alike(shape, (a, ia), (b, ib))) {
            twins |= 1 << j;
        }
    }
    twins
}

/// The most members [`of`] looks at (a mask of `u32`).
pub(super) const MAX_MEMBERS: usize = 32;

/// Whether member `i` is a twin in `mask` (from [`of`]).
pub(super) fn is_set(mask: u32, i: usize) -> bool {
    u32::try_from(i).ok().and_then(|i| 1u32.checked_shl(i)).is_some_and(|bit| mask & bit != 0)
}
