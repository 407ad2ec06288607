//! The mesh family's single-step patterns: every member talks to every
//! other member of the scope at once. Mesh, SingleStepMesh, LatencyOptMesh,
//! TwoStepPodMesh and BwOptMesh are compositions of these over different
//! scopes (see `compose` below). Peers are visited in cyclic order
//! starting after the member, so a member's incoming contributions arrive
//! in ring order.

use super::step_gen::Gen;
use super::{Composer, ScopeOp, Unsupported};
use crate::schedule::BlockSet;
use crate::schedule::{PhaseKind, Scope};
use ccc_ir::enums::AlgType;
use ccc_ir::enums::{Neigh, ReductionType};
use ccc_ir::spec::Leg;

const FOLD: Option<ReductionType> = Some(ReductionType::KangaringNR1W);

/// Direct reduce-scatter: piece `q` goes to member `q`, which folds all of them.
pub(crate) fn reduce_scatter<const L: bool>(g: &mut Gen<'_, L>) {
    let p = g.p();
    for d in 1..i64::from(g.k()) {
        let to = g.at(d);
        let piece = g.piece(to);
        g.push_rel(p, to, piece, FOLD);
    }
    let mine = g.piece(p);
    for d in 1..i64::from(g.k()) {
        let from = g.at(-d);
        g.push_rel(from, p, mine, FOLD);
    }
}

/// Direct all-gather: member `p`'s piece goes to every other member.
pub(crate) fn all_gather<const L: bool>(g: &mut Gen<'_, L>) {
    let p = g.p();
    let mine = g.piece(p);
    for d in 1..i64::from(g.k()) {
        let to = g.at(d);
        g.push_rel(p, to, mine, None);
    }
    for d in 1..i64::from(g.k()) {
        let from = g.at(-d);
        let theirs = g.piece(from);
        g.push_rel(from, p, theirs, None);
    }
}

/// Direct all-reduce: everything to everyone, each folds all.
pub(crate) fn all_reduce<const L: bool>(g: &mut Gen<'_, L>) {
    let p = g.p();
    let all = g.universe();
    for d in 1..i64::from(g.k()) {
        let to = g.at(d);
        g.push_rel(p, to, all, FOLD);
    }
    for d in 1..i64::from(g.k()) {
        let from = g.at(-d);
        g.push_rel(from, p, all, FOLD);
    }
}

/// Direct broadcast: the root sends everything to every other member.
pub(crate) fn broadcast<const L: bool>(g: &mut Gen<'_, L>, root: u32) {
    let all = g.universe();
    if g.p() == root {
        for d in 1..i64::from(g.k()) {
            let to = g.at(d);
            g.push_rel(root, to, all, None);
        }
    } else {
        g.push_rel(root, g.p(), all, None);
    }
}

/// Direct reduce: every other member sends everything to the root, which folds.
pub(crate) fn reduce<const L: bool>(g: &mut Gen<'_, L>, root: u32) {
    let all = g.universe();
    if g.p() == root {
        for d in 1..i64::from(g.k()) {
            let from = g.at(-d);
            g.push_rel(from, root, all, FOLD);
        }
    } else {
        g.push_rel(g.p(), root, all, FOLD);
    }
}

/// Direct all-to-all over the whole group: input block `q` goes to member
/// `q`'s output block `n + p`; the own block is copied locally.
pub(crate) fn all_to_all<const L: bool>(g: &mut Gen<'_, L>) {
    let n = g.plan.groups.size();
    let me = g.idx(g.p());
    g.push_moved(me, me, BlockSet::one(me), BlockSet::one(n + me), Neigh::Local);
    for d in 1..i64::from(g.k()) {
        let to = g.at(d);
        let to_idx = g.idx(to);
        let neigh = g.rel(g.p(), to);
        g.push_moved(me, to_idx, BlockSet::one(to_idx), BlockSet::one(n + me), neigh);
    }
    for d in 1..i64::from(g.k()) {
        let from = g.at(-d);
        let from_idx = g.idx(from);
        let neigh = g.rel(from, g.p());
        g.push_moved(from_idx, me, BlockSet::one(me), BlockSet::one(n + from_idx), neigh);
    }
}

/// The op's peer pairs, one step: each source sends its buffer to its target.
pub(crate) fn point_to_point<const L: bool>(g: &mut Gen<'_, L>, reduce: bool) {
    let me = g.idx(g.p());
    let fold = reduce.then_some(ReductionType::Ring2R1W);
    let (send, recv) = g.plan.peers.of(me);
    for (s, t) in send.into_iter().chain(recv) {
        let neigh = g.members_rel(s, t);
        g.out.push(crate::schedule::Transfer {
            from: s,
            to: t,
            src: BlockSet::all(1),
            dst: BlockSet::all(1),
            halves: crate::schedule::Halves::Both,
            fold,
            neigh,
        });
    }
}

/// Mesh, SingleStepMesh, LatencyOptMesh, TwoStepPodMesh and BwOptMesh as
/// compositions of the direct patterns over scopes (§3.5–3.9).
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
        AlgType::Mesh => match op {
            ScopeOp::AllReduce => {
                c.push(K::DirectReduceScatter, alg, leg, scope, narrow);
                c.push(K::DirectAllGather, alg, leg, scope, narrow);
            }
            ScopeOp::ReduceScatter => c.push(K::DirectReduceScatter, alg, leg, scope, narrow),
            ScopeOp::AllGather => c.push(K::DirectAllGather, alg, leg, scope, narrow),
            ScopeOp::Broadcast { root } => c.push(K::DirectBroadcast { root }, alg, leg, scope, narrow),
            ScopeOp::Reduce { root } => c.push(K::DirectReduce { root }, alg, leg, scope, narrow),
            ScopeOp::AllToAll => c.push(K::DirectAllToAll, alg, leg, scope, narrow),
            ScopeOp::PointToPoint => c.push(K::PointToPoint, alg, leg, scope, narrow),
        },
        AlgType::SingleStepMesh => match op {
            ScopeOp::AllReduce => c.push(K::DirectAllReduce, alg, leg, scope, narrow),
            _ => return unsupported,
        },
        AlgType::LatencyOptMesh => match op {
            ScopeOp::AllReduce => {
                c.push(K::DirectAllReduce, alg, leg, scope.node_part(), narrow);
                c.push(K::DirectAllReduce, alg, leg, scope.cross_part(), narrow);
            }
            _ => return unsupported,
        },
        AlgType::TwoStepPodMesh => match op {
            ScopeOp::AllReduce => {
                c.push(K::DirectAllReduce, alg, leg, scope.pod_part(), narrow);
                c.push(K::DirectAllReduce, alg, leg, scope.cross_pod_part(), narrow);
            }
            _ => return unsupported,
        },
        AlgType::BwOptMesh => {
            let (node, cross) = (scope.node_part(), scope.cross_part());
            let inner: Vec<Scope> = narrow.iter().copied().chain(std::iter::once(node)).collect();
            match op {
                ScopeOp::AllReduce => {
                    c.push(K::DirectReduceScatter, alg, leg, node, narrow);
                    c.push(K::DirectReduceScatter, alg, leg, cross, &inner);
                    c.push(K::DirectAllGather, alg, leg, cross, &inner);
                    c.push(K::DirectAllGather, alg, leg, node, narrow);
                }
                ScopeOp::ReduceScatter => {
                    c.push(K::DirectReduceScatter, alg, leg, node, narrow);
                    c.push(K::DirectReduceScatter, alg, leg, cross, &inner);
                }
                ScopeOp::AllGather => {
                    c.push(K::DirectAllGather, alg, leg, cross, &inner);
                    c.push(K::DirectAllGather, alg, leg, node, narrow);
                }
                _ => return unsupported,
            }
        }
        _ => return unsupported,
    }
    Ok(())
}
