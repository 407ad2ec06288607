//! The context every phase generator writes its transfers through.

use crate::schedule::{BlockSet, CollectivePlan, Halves, PhaseInstance, Transfer, relation};
use crate::valid::Shape;
use ccc_ir::enums::{Neigh, ReductionType};

/// One member's view of one phase at one step.
pub(crate) struct Gen<'a> {
    pub plan: &'a CollectivePlan,
    pub shape: &'a Shape,
    pub group: u32,
    pub inst: PhaseInstance,
    pub out: &'a mut Vec<Transfer>,
}

/// `x mod k` for a signed `x`, in `0..k`. Generators only ask for
/// positions a few scope sizes away from `0..k`, so a couple of additions or
/// subtractions replace the division on the hot path.
pub(crate) fn md(x: i64, k: u32) -> u32 {
    let k = i64::from(k.max(1));
    let mut v = x;
    for _ in 0..4 {
        if v < 0 {
            v += k;
        } else if v >= k {
            v -= k;
        } else {
            // 0 <= v < k <= u32::MAX.
            return v as u32;
        }
    }
    // rem_euclid of a positive modulus is in 0..k, so it fits in u32.
    x.rem_euclid(k) as u32
}

impl Gen<'_> {
    /// Scope size.
    pub fn k(&self) -> u32 {
        self.inst.scope.k
    }
    /// The member's position in the scope.
    pub fn p(&self) -> u32 {
        self.inst.scope.pos
    }
    /// Position `p + d` around the scope.
    pub fn at(&self, d: i64) -> u32 {
        md(i64::from(self.p()) + d, self.k())
    }
    /// Piece `q` (in `0..k`) of the universe.
    pub fn piece(&self, q: u32) -> BlockSet {
        let u = self.inst.universe;
        BlockSet { start: u.start + q * u.stride, stride: u.stride * self.k(), count: self.inst.per_piece }
    }
    /// The whole universe.
    pub fn universe(&self) -> BlockSet {
        self.inst.universe
    }
    /// Group index of scope position `q` (in `0..k`).
    pub fn idx(&self, q: u32) -> u32 {
        self.inst.scope.base + q * self.inst.scope.stride
    }
    /// The relation between two scope positions' ranks.
    pub fn rel(&self, from: u32, to: u32) -> Neigh {
        self.members_rel(self.idx(from), self.idx(to))
    }
    /// The relation between two group members' ranks. Every member a
    /// generator names is in the group (`build` makes the radices multiply
    /// to the group size); one that is not, which only a plan built by
    /// hand can name, relates as the farthest, `PeerRmtv2`, and the
    /// verifier refuses its transfer as out of range.
    pub fn members_rel(&self, a: u32, b: u32) -> Neigh {
        match (self.plan.rank(self.group, a), self.plan.rank(self.group, b)) {
            (Some(a), Some(b)) => relation(self.shape, a, b),
            _ => Neigh::PeerRmtv2,
        }
    }

    /// Records a transfer between scope positions that moves the same
    /// positions on both sides.
    pub fn push(
        &mut self,
        from: u32,
        to: u32,
        blocks: BlockSet,
        halves: Halves,
        fold: Option<ReductionType>,
        neigh: Neigh,
    ) {
        let (from, to) = (self.idx(from), self.idx(to));
        self.out.push(Transfer { from, to, src: blocks, dst: blocks, halves, fold, neigh });
    }

    /// Records a transfer between scope positions with a non-ring neighbour
    /// kind derived from the ranks' relation.
    pub fn push_rel(&mut self, from: u32, to: u32, blocks: BlockSet, fold: Option<ReductionType>) {
        let neigh = self.rel(from, to);
        self.push(from, to, blocks, Halves::Both, fold, neigh);
    }

    /// Records a transfer between group indices with distinct source and
    /// destination positions.
    pub fn push_moved(&mut self, from: u32, to: u32, src: BlockSet, dst: BlockSet, neigh: Neigh) {
        self.out.push(Transfer { from, to, src, dst, halves: Halves::Both, fold: None, neigh });
    }
}
