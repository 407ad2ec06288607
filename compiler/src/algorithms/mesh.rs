//! The mesh family's single-step patterns: every member talks to every
//! other member of the scope at once. Mesh, SingleStepMesh, LatencyOptMesh,
//! TwoStepPodMesh and BwOptMesh are compositions of these over different
//! scopes (see `algorithms::compose`). Peers are visited in cyclic order
//! starting after the member, so a member's incoming contributions arrive
//! in ring order.

use super::step_gen::Gen;
use crate::schedule::BlockSet;
use ccc_ir::enums::{Neigh, ReductionType};

const FOLD: Option<ReductionType> = Some(ReductionType::KangaringNR1W);

/// Direct reduce-scatter: piece `q` goes to member `q`, which folds all of them.
pub(crate) fn reduce_scatter(g: &mut Gen<'_>) {
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
pub(crate) fn all_gather(g: &mut Gen<'_>) {
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
pub(crate) fn all_reduce(g: &mut Gen<'_>) {
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
pub(crate) fn broadcast(g: &mut Gen<'_>, root: u32) {
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
pub(crate) fn reduce(g: &mut Gen<'_>, root: u32) {
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
pub(crate) fn all_to_all(g: &mut Gen<'_>) {
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
pub(crate) fn point_to_point(g: &mut Gen<'_>, reduce: bool) {
    let me = g.idx(g.p());
    let fold = reduce.then_some(ReductionType::Ring2R1W);
    let (send, recv) = g.plan.peers.of(me);
    let shape = g.shape;
    for (s, t) in send.into_iter().chain(recv) {
        let a = g.plan.rank(g.group, s);
        let b = g.plan.rank(g.group, t);
        let neigh = crate::schedule::relation(shape, a, b);
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
