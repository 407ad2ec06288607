//! The context every phase generator writes its transfers through.
//!
//! **Unlabelled listing.** A transfer's `neigh` (the link it takes, as
//! the sender sees it) is read by no pass but display (the dot backend):
//! lowering, encoding and every proof read the members, blocks, halves
//! and fold alone (the proofs' comparisons say so: `full::same`,
//! `action::is_moved_with`). Naming it costs two rank lookups and the
//! ranks' node and pod per pairwise transfer, about half of what an RDH
//! step costs to generate, so a caller that never reads it asks for the
//! transfers unlabelled (`Gen<'_, false>`): every generator
//! names a relation through [`Gen::members_rel`] (or [`Gen::rel`], which
//! calls it), which then answers [`UNLABELLED`] without looking the
//! ranks up. Everything else is generated as before, so the unlabelled
//! transfers are the labelled ones but for `neigh` (held by a test over
//! every algorithm and op, on shapes whose transfers cross nodes and
//! pods).

use crate::schedule::{BlockSet, CollectivePlan, Halves, PhaseInstance, Transfer, relation};
use crate::valid::Shape;
use ccc_ir::enums::{Neigh, ReductionType};

/// The `neigh` of every relation an unlabelled listing names: a
/// placeholder that no caller of an unlabelled listing reads.
pub(crate) const UNLABELLED: Neigh = Neigh::Local;

/// One member's view of one phase at one step; `LABELLED`: whether
/// relations are named (`false`: every one is [`UNLABELLED`]; see the
/// module doc). A constant, so that each listing is compiled for its
/// own and the labelled one is the code it was before.
pub(crate) struct Gen<'a, const LABELLED: bool> {
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

impl<const LABELLED: bool> Gen<'_, LABELLED> {
    /// Scope size.
    #[inline(always)]
    pub fn k(&self) -> u32 {
        self.inst.scope.k
    }
    /// The member's position in the scope.
    #[inline(always)]
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
    #[inline(always)]
    pub fn universe(&self) -> BlockSet {
        self.inst.universe
    }
    /// Group index of scope position `q` (in `0..k`).
    #[inline(always)]
    pub fn idx(&self, q: u32) -> u32 {
        self.inst.scope.base + q * self.inst.scope.stride
    }
    /// The relation between two scope positions' ranks.
    #[inline(always)]
    pub fn rel(&self, from: u32, to: u32) -> Neigh {
        self.members_rel(self.idx(from), self.idx(to))
    }
    /// The relation between two group members' ranks. Every member a
    /// generator names is in the group (`build` makes the radices multiply
    /// to the group size); one that is not, which only a plan built by
    /// hand can name, relates as the farthest, `PeerRmtv2`, and the
    /// verifier refuses its transfer as out of range. [`UNLABELLED`],
    /// without a look-up, when the listing is not labelled.
    #[inline(always)]
    pub fn members_rel(&self, a: u32, b: u32) -> Neigh {
        if !LABELLED {
            return UNLABELLED;
        }
        match (self.plan.rank(self.group, a), self.plan.rank(self.group, b)) {
            (Some(a), Some(b)) => relation(self.shape, a, b),
            _ => Neigh::PeerRmtv2,
        }
    }

    /// Records a transfer between scope positions that moves the same
    /// positions on both sides.
    #[inline(always)]
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
    #[inline(always)]
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

#[cfg(test)]
mod tests {
    use super::UNLABELLED;
    use crate::build::build;
    use crate::schedule::Transfer;
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, Neigh, OpType};

    /// Every flat pairing and Hier composition, and flat cases over nodes
    /// and pods: the unlabelled listing of every member's every step is
    /// the labelled one but for `neigh`, which it leaves [`UNLABELLED`]
    /// wherever the labelled one looked a relation up (some transfers do,
    /// across nodes and pods both, so the skip is met and the labels
    /// named).
    #[test]
    fn unlabelled_listings_differ_only_in_neigh() {
        let mut cases = Case::pairings(&[1, 4, 5, 8, 12]);
        for (op, alg) in [
            (OpType::AllReduce, AlgType::InterRdh),
            (OpType::AllGather, AlgType::Ring),
            (OpType::AllToAll, AlgType::Mesh),
            (OpType::AllReduce, AlgType::TwoStepPodMesh),
        ] {
            let mut case = Case::flat(op, alg, 8, 2);
            case.pod_n = 2;
            cases.push(case);
        }
        let (mut skipped, mut remote, mut pods) = (0u64, 0u64, 0u64);
        let (mut labelled, mut unlabelled) = (Vec::new(), Vec::new());
        for case in &cases {
            let schedule = build(&case.valid()).unwrap_or_else(|e| panic!("{case:?}: {e}"));
            for plan in &schedule.collectives {
                for group in 0..plan.groups.group_n() {
                    for m in 0..plan.groups.size() {
                        for phase in &plan.phases {
                            let inst = plan.instance(phase, m);
                            for t in 0..phase.step_n {
                                labelled.clear();
                                unlabelled.clear();
                                schedule.phase_transfers(plan, group, phase, inst, t, &mut labelled);
                                crate::algorithms::transfers::<false>(
                                    plan,
                                    &schedule.shape,
                                    group,
                                    phase,
                                    inst,
                                    t,
                                    &mut unlabelled,
                                );
                                assert_eq!(labelled.len(), unlabelled.len(), "{case:?} {m} {t}");
                                for (a, b) in labelled.iter().zip(&unlabelled) {
                                    assert_eq!(Transfer { neigh: a.neigh, ..*b }, *a, "{case:?} {m} {t}");
                                    assert!(b.neigh == a.neigh || b.neigh == UNLABELLED, "{case:?} {m} {t}");
                                    skipped += u64::from(b.neigh != a.neigh);
                                    remote += u64::from(a.neigh == Neigh::PeerRmtv);
                                    pods += u64::from(a.neigh == Neigh::PeerRmtv2);
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(skipped > 0 && remote > 0 && pods > 0, "{skipped} {remote} {pods}");
    }
}
