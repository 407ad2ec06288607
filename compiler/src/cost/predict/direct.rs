//! A direct (mesh) step's load, named from the pattern instead of
//! generated: the shortcut that keeps `Auto`'s prediction of the mesh
//! algorithms cheap (`docs/cost-model.md` §7).
//!
//! A direct step has every member of a scope of `k` talk to every other
//! (`algorithms/mesh.rs`), so walking it generates `2(k - 1)` transfers
//! per member. Here each peer costs only its rank, its relation to the
//! member and, on the member's node, its ring distance; the bytes and
//! descriptors of a block set are computed once per distinct set. The
//! peers are visited in the generator's order and every value is added
//! to the same accumulator as [`LoadCx::add`] adds it, so the load is
//! the walked one to the bit (`cost/tests.rs` compares both over random
//! specs).

use super::load::{LoadCx, bytes_of, ring_hops};
use super::{HEARD, Hop, SENT, StepLoad};
use crate::schedule::{BlockSet, Halves, OpKind, Phase, PhaseKind, ScopeInstance, relation};

/// Member `me`'s load at the single step of direct `phase`, or `None`
/// when `phase` is not a direct reduce-scatter, all-gather, all-reduce,
/// broadcast or reduce (or the op is an all-to-all, whose block sizes
/// depend on the member): walk it.
pub(super) fn load(cx: &LoadCx<'_>, phase: &Phase, me: u32) -> Option<StepLoad> {
    use PhaseKind as K;
    if phase.step_n != 1 || matches!(cx.plan.kind, OpKind::AllToAll) {
        return None;
    }
    let inst = cx.plan.instance(phase, me);
    let scope = inst.scope;
    let (k, p) = (scope.k, scope.pos);
    let u = inst.universe;
    let piece = |q: u32| BlockSet { start: u.start + q * u.stride, stride: u.stride * k, count: inst.per_piece };
    // The peers in the generator's order: sent to `p + d`, heard from `p - d`.
    let ahead = move |d: u32| (p + d) % k;
    let behind = move |d: u32| (p + k - d) % k;
    let mut side = Sides { cx, me, member: scope.base + p * scope.stride, memo: None, load: StepLoad::default() };
    let (to_all, from_all) = ((1..k).map(ahead), (1..k).map(behind));
    match phase.kind {
        K::DirectReduceScatter => {
            side.add(to_all.map(|q| (q, piece(q))), &scope, Side::Send);
            side.add(from_all.map(|q| (q, piece(p))), &scope, Side::Hear { fold: true });
        }
        K::DirectAllGather => {
            side.add(to_all.map(|q| (q, piece(p))), &scope, Side::Send);
            side.add(from_all.map(|q| (q, piece(q))), &scope, Side::Hear { fold: false });
        }
        K::DirectAllReduce => {
            side.add(to_all.map(|q| (q, u)), &scope, Side::Send);
            side.add(from_all.map(|q| (q, u)), &scope, Side::Hear { fold: true });
        }
        K::DirectBroadcast { root } if p == root => side.add(to_all.map(|q| (q, u)), &scope, Side::Send),
        K::DirectBroadcast { root } => side.add(std::iter::once((root, u)), &scope, Side::Hear { fold: false }),
        K::DirectReduce { root } if p == root => side.add(from_all.map(|q| (q, u)), &scope, Side::Hear { fold: true }),
        K::DirectReduce { root } => side.add(std::iter::once((root, u)), &scope, Side::Send),
        _ => return None,
    }
    let mut load = side.load;
    load.finish();
    Some(load)
}

/// One member's load as its sends and receives are added.
struct Sides<'a> {
    cx: &'a LoadCx<'a>,
    /// The member costed, as `step_load` names it.
    me: u32,
    /// Its group index from its scope (`me` in a built plan).
    member: u32,
    /// The last block set's bytes and descriptors.
    memo: Option<(BlockSet, f64, u64)>,
    load: StepLoad,
}

impl Sides<'_> {
    /// Bytes and descriptors of `blocks` of the member's buffer (every
    /// member's block of a position holds the same elements but in an
    /// all-to-all).
    fn of(&mut self, blocks: BlockSet) -> (f64, u64) {
        match self.memo {
            Some((b, bytes, desc)) if b == blocks => (bytes, desc),
            _ => {
                let bytes = bytes_of(self.cx.plan, self.member, blocks, Halves::Both);
                let desc = self.cx.table.count(self.me, blocks, Halves::Both);
                self.memo = Some((blocks, bytes, desc));
                (bytes, desc)
            }
        }
    }

    /// The hop of the transfer from group member `from` to `to`, and, on
    /// one node, its ring direction and capped links (as [`LoadCx::add`]).
    fn route(&self, from: u32, to: u32) -> Option<(Hop, usize, f64)> {
        let cx = self.cx;
        let (a, b) = (cx.plan.rank(0, from)?, cx.plan.rank(0, to)?);
        let hop = Hop::of(relation(&cx.schedule.shape, a, b));
        if hop != Hop::Intra {
            return Some((hop, 0, 0.0));
        }
        let (dir, hops) = ring_hops(cx.schedule.shape.local_rank_n, a.0, b.0);
        Some((hop, dir, hops.min(cx.params.hops_max.max(1.0))))
    }

    /// The member sends to (`Side::Send`) or hears from each `(position,
    /// blocks)` of `peers`.
    fn add(&mut self, peers: impl Iterator<Item = (u32, BlockSet)>, scope: &ScopeInstance, side: Side) {
        let size = self.cx.plan.dtype.size() as f64;
        let s = if side == Side::Send { SENT } else { HEARD };
        for (q, blocks) in peers {
            let peer = scope.base + q * scope.stride;
            let (from, to) = if side == Side::Send { (self.member, peer) } else { (peer, self.member) };
            let Some((hop, dir, hops)) = self.route(from, to) else { continue };
            self.load.hop = self.load.hop.max(Some(hop));
            if self.member != self.me {
                continue;
            }
            let (bytes, desc) = self.of(blocks);
            let load = &mut self.load;
            load.add_side(s, hop, dir, hops, bytes, desc);
            if let Side::Hear { fold } = side {
                if fold {
                    load.folded += bytes / size;
                }
                load.sender_n += 1;
            }
        }
    }
}

/// Which way a direct step's transfers go, seen from the member.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Send,
    /// Heard, and folded when `fold`.
    Hear {
        fold: bool,
    },
}
