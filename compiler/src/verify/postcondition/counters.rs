//! The path run's counters, whatever holds them: what the run reads and
//! lands through ([`Counters`]), and what a group's counters are
//! ([`Extent`]), and the moves a transfer makes on them (`spend`, `fold`,
//! `copy`: `paths` says which are allowed, and why). `paths` holds one
//! per cell, `runs` each row as runs of equal ones; both hold every
//! cell's state exactly.

use crate::schedule::{BlockSet, CollectivePlan, OpKind};

/// An empty cell's state.
pub(super) const EMPTY: u32 = 0;

/// A spent cell's state (above every count).
pub(super) const SPENT: u32 = u32::MAX;

/// Where the path run keeps its counters: one per cell (`Cells`, in
/// `paths`), or each member's row as runs of equal ones (`Runs`, in
/// `runs`). The run reads and lands through this alone, and every store
/// holds each cell's state exactly, so what the run finds does not depend
/// on the store.
pub(super) trait Counters {
    /// What a read yields: a cell's state, or a run of equal ones.
    type Read: Copy + Send;
    /// Members, blocks per member, and what a complete cell counts.
    fn extent(&self) -> Extent;
    /// Appends member `m`'s states of `set`, in the set's order (the set
    /// is in range: the shape checks come first).
    fn read(&self, m: u32, set: BlockSet, out: &mut Vec<Self::Read>);
    /// Moves member `m`'s cells of `set`, in the set's order, each to
    /// `new(old, value)`, `value` the next of `read` (0 past its end),
    /// which also says whether the move is allowed: `false` when one is
    /// not. Every cell is moved before the answer is known (a refused run
    /// is dropped whole).
    fn land(&mut self, m: u32, set: BlockSet, read: &[Self::Read], new: impl Fn(u32, u32) -> (u32, bool)) -> bool;
    /// Whether every cell the op defines is complete.
    fn done(&self, plan: &CollectivePlan) -> bool;
}

/// The counters of one group: members x blocks, each block's
/// contributors (what a complete cell counts).
#[derive(Clone, Copy, Debug)]
pub(super) struct Extent {
    pub(super) n: u32,
    pub(super) block_n: u32,
    pub(super) total: u32,
}

impl Extent {
    /// One group of `plan`'s.
    pub(super) fn of(plan: &CollectivePlan) -> Extent {
        let reduces = matches!(plan.kind, OpKind::Reduce | OpKind::AllReduce | OpKind::ReduceScatter);
        let n = plan.groups.size();
        Extent { n, block_n: plan.layout().block_n(), total: if reduces { n } else { 1 } }
    }
}

/// A fold's sender's move, a block's count `total` being complete: the
/// cell is spent, allowed from a live, incomplete cell (a cell spent
/// already at this step is a second fold of it).
pub(super) fn spend(total: u32) -> impl Fn(u32, u32) -> (u32, bool) + Copy {
    move |s, _| (SPENT, s != EMPTY && s != SPENT && s != total)
}

/// A fold's receiver's move, from its old state and the count read: the
/// sum, allowed into an empty or live, incomplete cell.
pub(super) fn fold(total: u32) -> impl Fn(u32, u32) -> (u32, bool) + Copy {
    move |s, value| (s.wrapping_add(value), s != SPENT && s != total)
}

/// A copy's receiver's move: the value read, allowed from a complete cell
/// into any cell but a live, incomplete one.
pub(super) fn copy(total: u32) -> impl Fn(u32, u32) -> (u32, bool) + Copy {
    move |s, value| (value, value == total && (s == EMPTY || s == SPENT || s == total))
}
