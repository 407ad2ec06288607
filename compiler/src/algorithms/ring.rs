//! The ring family: Ring, Kangaring, SingleCycleRing, and the ring forms of
//! broadcast, reduce and all-to-all. See `docs/algorithms.md`.
//!
//! With `k` members at positions `0..k` and the universe cut into `k`
//! interleaved pieces, member `p` at step `t` of a reduce-scatter sends piece
//! `p - t - 1` to `p + 1` and folds piece `p - t - 2` arriving from `p - 1`;
//! after `k - 1` steps it holds piece `p` reduced over every member. The
//! all-gather then circulates the finished pieces for `k - 1` more steps.
//! Kangaring runs the same in both directions at once: half H0 clockwise,
//! half H1 counter-clockwise.

use super::step_gen::{Gen, md};
use super::{Composer, ScopeOp, Unsupported};
use crate::schedule::{BlockSet, Halves};
use crate::schedule::{PhaseKind, Scope};
use ccc_ir::enums::AlgType;
use ccc_ir::enums::{HalfChunk, Neigh, ReductionType};
use ccc_ir::spec::Leg;

/// One step of a ring reduce-scatter.
pub(crate) fn reduce_scatter<const L: bool>(g: &mut Gen<'_, L>, t: u32, bidir: bool, fold: ReductionType) {
    let (p, t) = (i64::from(g.p()), i64::from(t));
    let cw = if bidir { Halves::Only(HalfChunk::H0) } else { Halves::Both };
    let (next, prev) = (g.at(1), g.at(-1));
    let send = g.piece(md(p - t - 1, g.k()));
    let recv = g.piece(md(p - t - 2, g.k()));
    g.push(g.p(), next, send, cw, Some(fold), Neigh::Next);
    g.push(prev, g.p(), recv, cw, Some(fold), Neigh::Next);
    if bidir {
        let ccw = Halves::Only(HalfChunk::H1);
        let send = g.piece(md(p + t + 1, g.k()));
        let recv = g.piece(md(p + t + 2, g.k()));
        g.push(g.p(), prev, send, ccw, Some(fold), Neigh::Prev);
        g.push(next, g.p(), recv, ccw, Some(fold), Neigh::Prev);
    }
}

/// One step of a ring all-gather.
pub(crate) fn all_gather<const L: bool>(g: &mut Gen<'_, L>, t: u32, bidir: bool) {
    let (p, t) = (i64::from(g.p()), i64::from(t));
    let cw = if bidir { Halves::Only(HalfChunk::H0) } else { Halves::Both };
    let (next, prev) = (g.at(1), g.at(-1));
    let send = g.piece(md(p - t, g.k()));
    let recv = g.piece(md(p - t - 1, g.k()));
    g.push(g.p(), next, send, cw, None, Neigh::Next);
    g.push(prev, g.p(), recv, cw, None, Neigh::Next);
    if bidir {
        let ccw = Halves::Only(HalfChunk::H1);
        let send = g.piece(md(p + t, g.k()));
        let recv = g.piece(md(p + t + 1, g.k()));
        g.push(g.p(), prev, send, ccw, None, Neigh::Prev);
        g.push(next, g.p(), recv, ccw, None, Neigh::Prev);
    }
}

/// One step of the single-cycle ring all-reduce: the reduce-scatter steps,
/// then the all-gather steps, in one cycle, folding 2R2W.
pub(crate) fn all_reduce_fused<const L: bool>(g: &mut Gen<'_, L>, t: u32) {
    let rs_steps = g.k() - 1;
    if t < rs_steps {
        reduce_scatter(g, t, false, ReductionType::Ring2R2W);
    } else {
        all_gather(g, t - rs_steps, false);
    }
}

/// One step of the pipelined ring broadcast: the chain runs from the root
/// along NEXT; the member at chain position `j` forwards piece `t - j`.
pub(crate) fn broadcast<const L: bool>(g: &mut Gen<'_, L>, t: u32, root: u32) {
    let j = chain_position(g.p(), g.k(), root, false);
    chain_step(g, t, j, None);
}

/// One step of the pipelined ring reduce: the chain starts after the root
/// and ends at it; each member folds what arrives and forwards it.
pub(crate) fn reduce<const L: bool>(g: &mut Gen<'_, L>, t: u32, root: u32) {
    let j = chain_position(g.p(), g.k(), root, true);
    chain_step(g, t, j, Some(ReductionType::Ring2R1W));
}

/// The chain position of scope position `p` in a pipelined broadcast
/// (the chain starts at the root) or reduce (it ends at the root), over a
/// scope of `k`: what [`broadcast`] and [`reduce`] hand [`chain_step`].
pub(crate) fn chain_position(p: u32, k: u32, root: u32, reduce: bool) -> i64 {
    let behind = i64::from(p) - i64::from(root) - i64::from(reduce);
    i64::from(md(behind, k))
}

/// The steps where chain position `j`'s transfers in [`chain_step`]
/// change shape, over `k` pieces: where its receive window `j-1..j-1+k`
/// and its send window `j..j+k` open and close (whether or not the
/// position has such a window). Between two of them every step lists
/// the previous step's transfers, each piece one further (`t - j` and
/// `t - j + 1` both grow by one, and stay in `0..k`, so no piece wraps),
/// or nothing.
pub(crate) fn chain_edges(j: i64, k: u32) -> [i64; 4] {
    let k = i64::from(k);
    [j - 1, j, j - 1 + k, j + k]
}

/// A pipelined chain of `k` members over `k` pieces: chain position `j`
/// sends piece `t - j` to `j + 1` while it has one.
fn chain_step<const L: bool>(g: &mut Gen<'_, L>, t: u32, j: i64, fold: Option<ReductionType>) {
    let k = i64::from(g.k());
    let t = i64::from(t);
    let (next, prev) = (g.at(1), g.at(-1));
    let in_range = |c: i64| (0..k).contains(&c);
    if j <= k - 2 && in_range(t - j) {
        let piece = g.piece(md(t - j, g.k()));
        g.push(g.p(), next, piece, Halves::Both, fold, Neigh::Next);
    }
    if j >= 1 && in_range(t - (j - 1)) {
        let piece = g.piece(md(t - (j - 1), g.k()));
        g.push(prev, g.p(), piece, Halves::Both, fold, Neigh::Next);
    }
}

/// One step of the shifted pairwise all-to-all over the whole group: at
/// step `t` member `p` sends its input block for `p + t + 1` there and
/// receives from `p - t - 1`; step 0 also copies its own block locally.
/// Input blocks are positions `0..n`, output blocks `n..2n`.
pub(crate) fn all_to_all<const L: bool>(g: &mut Gen<'_, L>, t: u32) {
    let n = g.plan.groups.size();
    let me = g.idx(g.p());
    if t == 0 {
        g.push_moved(me, me, BlockSet::one(me), BlockSet::one(n + me), Neigh::Local);
    }
    if g.k() == 1 {
        return;
    }
    let s = i64::from(t) + 1;
    let to = g.at(s);
    let from = g.at(-s);
    let (to_idx, from_idx) = (g.idx(to), g.idx(from));
    let neigh_to = g.rel(g.p(), to);
    let neigh_from = g.rel(from, g.p());
    g.push_moved(me, to_idx, BlockSet::one(to_idx), BlockSet::one(n + me), neigh_to);
    g.push_moved(from_idx, me, BlockSet::one(me), BlockSet::one(n + from_idx), neigh_from);
}

/// Ring, Kangaring and SingleCycleRing as phases (`docs/algorithms.md` §3.1–3.3).
pub(super) fn compose(
    c: &mut Composer<'_>,
    op: ScopeOp,
    alg: AlgType,
    scope: Scope,
    narrow: &[Scope],
    leg: Option<Leg>,
) -> Result<(), Unsupported> {
    use PhaseKind as K;
    let unsupported = Err(Unsupported { alg, op });
    match alg {
        AlgType::Ring | AlgType::Kangaring => {
            let bidir = alg == AlgType::Kangaring;
            match op {
                ScopeOp::AllReduce => {
                    c.push(K::RingReduceScatter { bidir }, alg, leg, scope, narrow);
                    c.push(K::RingAllGather { bidir }, alg, leg, scope, narrow);
                }
                ScopeOp::ReduceScatter => c.push(K::RingReduceScatter { bidir }, alg, leg, scope, narrow),
                ScopeOp::AllGather => c.push(K::RingAllGather { bidir }, alg, leg, scope, narrow),
                ScopeOp::Broadcast { root } if !bidir => c.push(K::RingBroadcast { root }, alg, leg, scope, narrow),
                ScopeOp::Reduce { root } if !bidir => c.push(K::RingReduce { root }, alg, leg, scope, narrow),
                ScopeOp::AllToAll if !bidir => c.push(K::RingAllToAll, alg, leg, scope, narrow),
                ScopeOp::PointToPoint if !bidir => c.push(K::PointToPoint, alg, leg, scope, narrow),
                _ => return unsupported,
            }
        }
        AlgType::SingleCycleRing => match op {
            ScopeOp::AllReduce => c.push(K::RingAllReduceFused, alg, leg, scope, narrow),
            _ => return unsupported,
        },
        _ => return unsupported,
    }
    Ok(())
}
