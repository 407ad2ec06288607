//! A direct (mesh) step's load, named from the pattern instead of
//! generated: the shortcut that keeps `Auto`'s prediction of the mesh
//! algorithms cheap (`docs/cost-model-revisions.md`).
//!
//! A direct step has every member of a scope of `k` talk to every other
//! (`algorithms/mesh.rs`), so walking it generates `2(k - 1)` transfers
//! per member. Here each peer costs only its rank, its relation to the
//! member and, on the member's node, its ring distance; the bytes and
//! descriptors of a block set are computed once per distinct set. The
//! peers are visited in the generator's order and every value is added
//! to the same accumulator as [`LoadCx::add`] adds it, so the load is
//! the walked one to the bit (`cost/tests.rs` compares both over random
//! specs). On world groups with a position-free layout the peers need not
//! be visited at all while the sums stay exact (`sums_exact`): those off
//! the member's node are counted per hop, those on it summed per ring
//! direction ([`on_node_links`]), each a whole number of bytes times a
//! whole count (`cost/predict/tests.rs` compares them with the generated
//! transfers).

use super::load::{CLOCKWISE, EITHER_WAY, LoadCx, ring_hops, shorter_way};
use super::{HEARD, Hop, SENT, StepLoad};
use crate::schedule::{
    BlockSet, CollectivePlan, Halves, OpKind, Phase, PhaseInstance, PhaseKind, ScopeInstance, relation,
};

/// Member `me`'s load at the single step of direct `phase` (`inst`: the
/// phase placed around it), or `None` when `phase` is not a direct
/// reduce-scatter, all-gather, all-reduce, broadcast or reduce (or the op
/// is an all-to-all, whose block sizes depend on the member): walk it.
pub(super) fn load(cx: &LoadCx<'_>, phase: &Phase, me: u32, inst: PhaseInstance) -> Option<StepLoad> {
    use PhaseKind as K;
    if !names(cx.plan, phase) {
        return None;
    }
    let scope = inst.scope;
    let (k, p) = (scope.k, scope.pos);
    let u = inst.universe;
    let piece = |q: u32| BlockSet { start: u.start + q * u.stride, stride: u.stride * k, count: inst.per_piece };
    // The peers in the generator's order: sent to `p + d`, heard from `p - d`.
    let ahead = move |d: u32| (p + d) % k;
    let behind = move |d: u32| (p + k - d) % k;
    let mut side = Sides { cx, me, member: scope.base + p * scope.stride, memo: None, load: StepLoad::default() };
    let (to_all, from_all) = ((1..k).map(ahead), (1..k).map(behind));
    // Every piece of a position-free layout costs alike: on world groups
    // the peers of a side that reaches every other member may be counted
    // instead of visited (`Sides::add_all`; a prediction only when the
    // counted sums are exact, `sums_exact`).
    let counted = !cx.plan.groups.is_explicit() && cx.table.position_free() && side.member == me;
    let send = Side::Send;
    let (hear, hear_folded) = (Side::Hear { fold: false }, Side::Hear { fold: true });
    match phase.kind {
        K::DirectReduceScatter => {
            side.add_all(to_all.map(|q| (q, piece(q))), piece(p), &scope, send, counted);
            side.add_all(from_all.map(|q| (q, piece(p))), piece(p), &scope, hear_folded, counted);
        }
        K::DirectAllGather => {
            side.add_all(to_all.map(|q| (q, piece(p))), piece(p), &scope, send, counted);
            side.add_all(from_all.map(|q| (q, piece(q))), piece(p), &scope, hear, counted);
        }
        K::DirectAllReduce => {
            side.add_all(to_all.map(|q| (q, u)), u, &scope, send, counted);
            side.add_all(from_all.map(|q| (q, u)), u, &scope, hear_folded, counted);
        }
        K::DirectBroadcast { root } if p == root => side.add_all(to_all.map(|q| (q, u)), u, &scope, send, counted),
        K::DirectBroadcast { root } => side.add(std::iter::once((root, u)), &scope, hear),
        K::DirectReduce { root } if p == root => {
            side.add_all(from_all.map(|q| (q, u)), u, &scope, hear_folded, counted);
        }
        K::DirectReduce { root } => side.add(std::iter::once((root, u)), &scope, send),
        _ => return None,
    }
    let mut load = side.load;
    load.finish();
    Some(load)
}

/// Whether [`load`] names `phase`'s load (else it answers `None` for every
/// member): a direct reduce-scatter, all-gather, all-reduce, broadcast or
/// reduce of one step, the op not an all-to-all. A walk asks once a phase.
pub(super) fn names(plan: &CollectivePlan, phase: &Phase) -> bool {
    use PhaseKind as K;
    let direct = matches!(
        phase.kind,
        K::DirectReduceScatter
            | K::DirectAllGather
            | K::DirectAllReduce
            | K::DirectBroadcast { .. }
            | K::DirectReduce { .. }
    );
    direct && phase.step_n == 1 && !matches!(plan.kind, OpKind::AllToAll)
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
                let bytes = self.cx.bytes(self.member, blocks, Halves::Both);
                let desc = self.cx.desc(self.me, blocks, Halves::Both);
                self.memo = Some((blocks, bytes, desc));
                (bytes, desc)
            }
        }
    }

    /// The hop of the transfer from group member `from` to `to`, and, on
    /// one node, its ring direction and capped links (as [`LoadCx::add`]).
    fn route(&self, from: u32, to: u32) -> Option<(Hop, usize, f64)> {
        let cx = self.cx;
        let g = cx.plan.groups.modelled();
        let (a, b) = (cx.plan.rank(g, from)?, cx.plan.rank(g, to)?);
        let hop = Hop::of(relation(&cx.schedule.shape, a, b));
        if hop != Hop::Intra {
            return Some((hop, 0, 0.0));
        }
        let (dir, hops) = ring_hops(cx.schedule.shape.local_rank_n, a.0, b.0);
        Some((hop, dir, hops.min(cx.cap.links)))
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

impl Sides<'_> {
    /// The member sends to (`Side::Send`) or hears from every other member
    /// of `scope`: `peers` in the generator's order, or, when `counted`,
    /// every peer's blocks costing what `any` costs (a position-free
    /// layout on world groups, the member costed itself), the peers off
    /// its node counted by hop from the scope's arithmetic instead of
    /// visited. Those peers each add the same whole number of bytes (and
    /// of elements folded), so the counted sums are the visited ones to
    /// the bit while every partial sum is a whole number an `f64` holds
    /// exactly. A floor counts the peers off its node whatever the sizes
    /// (as it always has); a prediction only when [`sums_exact`] says the
    /// sums stay exact. The peers on its node are summed by ring direction
    /// ([`on_node_links`]) when the sums are exact and the cap on links is
    /// whole ([`whole_cap`]), else visited (`cost/predict/tests.rs` checks
    /// every way against the generated transfers).
    fn add_all(
        &mut self,
        peers: impl Iterator<Item = (u32, BlockSet)>,
        any: BlockSet,
        scope: &ScopeInstance,
        side: Side,
        counted: bool,
    ) {
        if !counted || scope.k < 2 {
            return self.add(peers, scope, side);
        }
        let shape = &self.cx.schedule.shape;
        let exact = sums_exact(self.of(any).0, scope.k, shape.local_rank_n);
        if !self.cx.floor && !exact {
            return self.add(peers, scope, side);
        }
        let (m, p, k, stride) = (self.member, scope.pos, scope.k, scope.stride.max(1));
        // The positions whose members (group index = rank) lie in the same
        // run of `span` ranks as the member: one run of positions around `p`.
        let run = |span: u32| {
            let first = m / span * span;
            let last = first.saturating_add(span - 1);
            (p - ((m - first) / stride).min(p), p.saturating_add((last - m) / stride).min(k - 1))
        };
        let local = shape.local_rank_n.max(1);
        let (node_lo, node_hi) = run(local);
        let (pod_lo, pod_hi) = run(local.saturating_mul(shape.nodes_per_pod.max(1)));
        // The peers on the member's node differ by their ring distance:
        // summed by direction in whole links while the sums are exact and
        // the cap on links is whole, else visited. The others are counted.
        let (bytes, desc) = self.of(any);
        let s = if side == Side::Send { SENT } else { HEARD };
        match self.cx.cap.whole.filter(|_| exact) {
            Some(cap) => {
                let ring = on_node_links(local, stride, (p - node_lo, node_hi - p), cap, side);
                for (dir, (n, links)) in ring.into_iter().enumerate().filter(|&(_, (n, _))| n > 0) {
                    let load = &mut self.load;
                    load.hop = load.hop.max(Some(Hop::Intra));
                    load.moved[s] += bytes * f64::from(n);
                    load.ring[s][dir] += bytes * links as f64;
                    load.desc[s] = load.desc[s].saturating_add(desc.saturating_mul(u64::from(n)));
                    if let Side::Hear { fold } = side {
                        if fold {
                            load.folded += bytes / self.cx.plan.dtype.size() as f64 * f64::from(n);
                        }
                        load.sender_n += n as usize;
                    }
                }
            }
            None => self.add((node_lo..=node_hi).filter(|&q| q != p).map(|q| (q, any)), scope, side),
        }
        let off_node = [(Hop::Inter, (pod_hi - pod_lo) - (node_hi - node_lo)), (Hop::Pod, k - 1 - (pod_hi - pod_lo))];
        for (hop, n) in off_node.into_iter().filter(|&(_, n)| n > 0) {
            let load = &mut self.load;
            load.hop = load.hop.max(Some(hop));
            load.moved[s] += bytes * f64::from(n);
            load.hops[s][hop as usize] += bytes * f64::from(n);
            load.desc[s] = load.desc[s].saturating_add(desc.saturating_mul(u64::from(n)));
            if let Side::Hear { fold } = side {
                if fold {
                    load.folded += bytes / self.cx.plan.dtype.size() as f64 * f64::from(n);
                }
                load.sender_n += n as usize;
            }
        }
    }
}

/// Below this every whole number is an `f64` (2^52, a bit under the
/// 2^53 where whole numbers start to be skipped, so that the product
/// [`sums_exact`] bounds the sums with may itself round without passing
/// 2^53).
const EXACT_WHOLE: f64 = (1u64 << 52) as f64;

/// Whether one side's sums over the peers of a scope of `k`, each peer
/// adding `bytes` (and link loads of `bytes` times at most `local / 2`
/// links on a node of `local` ranks), are exact in whatever order they
/// are added: `bytes` is whole and `bytes * k * local`, above every sum,
/// stays under [`EXACT_WHOLE`]. The elements folded are `bytes` over the
/// element size, whole and smaller.
fn sums_exact(bytes: f64, k: u32, local: u32) -> bool {
    bytes.fract() == 0.0 && bytes * f64::from(k) * f64::from(local.max(1)) <= EXACT_WHOLE
}

/// The cap on the links an intra-node transfer crosses
/// (`hops_max.max(1.0)`, as [`LoadCx::add`] applies it) as a whole number,
/// or `None` when it is not one (a cap a `model:` override sets always is).
pub(super) fn whole_cap(hops_max: f64) -> Option<u64> {
    let cap = hops_max.max(1.0);
    (cap.fract() == 0.0 && cap <= EXACT_WHOLE).then_some(cap as u64)
}

/// The member's peers on its node, `below` and `above` it at multiples of
/// `stride` ranks on a node of `local`: how many of its transfers with them
/// go each way round the node's ring (by [`ring_hops`]'s directions, the
/// one half way round [`EITHER_WAY`]), and their links, each capped at
/// `cap`, summed. The
/// clockwise distance from a sender to a peer `j * stride` above it is
/// `j * stride`, to one below it `local - j * stride`; a member hearing
/// sees the mirror. Whole numbers, so the load adds `bytes * links` once a
/// direction where a visit adds each peer's product: the same sum while
/// the sums are exact (`sums_exact`; `cost/predict/tests.rs` compares both
/// with the generated transfers). Each side's run of peers is summed in
/// closed form ([`add_run`]) while its offsets stay inside the node (as
/// the peers on a node's always do), else visited peer by peer.
pub(super) fn on_node_links(
    local: u32,
    stride: u32,
    (below, above): (u32, u32),
    cap: u64,
    side: Side,
) -> [(u32, u64); 3] {
    let mut ring = [(0, 0); 3];
    let send = side == Side::Send;
    let inside = |n: u32| stride > 0 && u64::from(n) * u64::from(stride) < u64::from(local);
    if !(inside(above) && inside(below)) {
        return on_node_links_visited(local, stride, (below, above), cap, side);
    }
    // A sender's peers above it, and a hearer's below it, are the offset
    // away clockwise; the others the rest of the ring.
    add_run(&mut ring, (local, stride), above, send, cap);
    add_run(&mut ring, (local, stride), below, !send, cap);
    ring
}

/// [`on_node_links`] visiting each peer: its ring direction and capped
/// links, one by one.
fn on_node_links_visited(local: u32, stride: u32, (below, above): (u32, u32), cap: u64, side: Side) -> [(u32, u64); 3] {
    let mut ring = [(0, 0); 3];
    let offsets = (1..=above).map(|j| (j, true)).chain((1..=below).map(|j| (j, false)));
    for (j, up) in offsets {
        let off = j.saturating_mul(stride);
        let cw = if up == (side == Side::Send) { off } else { local.saturating_sub(off) };
        let ccw = local.saturating_sub(cw);
        let (dir, hops) = shorter_way(cw, ccw);
        ring[dir].0 += 1;
        ring[dir].1 += u64::from(hops).min(cap);
    }
    ring
}

/// Adds to `ring` the `n` peers at offsets `j * stride`, `j` in `1..=n`,
/// all inside a node of `local` ranks, whose clockwise distance is the
/// offset (`clockwise`) or the rest of the ring, as the visit adds them:
/// a peer goes the shorter way (clockwise on a tie) across
/// `min(off, local - off)` links, capped at `cap`. The near peers (the
/// offset the shorter way) are the first `p`: clockwise while
/// `2 * off <= local`, counter-clockwise while `2 * off < local`; their
/// links are `j * stride`, the far ones' `local - j * stride`, each
/// capped: arithmetic series, summed in whole numbers (below 2^64: the
/// offsets are below `local`). The peer exactly half way round, if the run
/// reaches it, is then moved from the clockwise sum to [`EITHER_WAY`].
fn add_run(ring: &mut [(u32, u64); 3], (local, stride): (u32, u32), n: u32, clockwise: bool, cap: u64) {
    if n == 0 {
        return;
    }
    let (l, s, n64) = (u64::from(local), u64::from(stride), u64::from(n));
    // The near peers: the first `p`, and the direction each side goes.
    let (p, near, far) = if clockwise {
        // Clockwise while `2 j s <= l`.
        ((l / (2 * s)).min(n64), 0, 1)
    } else {
        // Counter-clockwise while `2 j s < l`: `j <= ceil(l / 2s) - 1`.
        (l.div_ceil(2 * s).saturating_sub(1).min(n64), 1, 0)
    };
    // Sum of `j` over `a..=b` (0 when empty), and how many.
    let sum = |a: u64, b: u64| if a > b { 0 } else { (a + b) * (b - a + 1) / 2 };
    let count = |a: u64, b: u64| if a > b { 0 } else { b - a + 1 };
    // Near: `min(j s, cap)`, uncapped while `j <= cap / s`.
    let q = cap / s;
    let near_links = s * sum(1, p.min(q)) + cap * count(q.saturating_add(1).max(1), p);
    // Far: `min(l - j s, cap)`, capped while `j < ceil((l - cap) / s)`.
    let r = l.saturating_sub(cap).div_ceil(s);
    let (capped, open) = (count(p + 1, n64.min(r.saturating_sub(1))), (r.max(p + 1), n64));
    let far_links = cap * capped + l * count(open.0, open.1) - s * sum(open.0, open.1);
    // `p` and `n - p` are at most `n`, a `u32`.
    let (p32, rest) = (u32::try_from(p).unwrap_or(n), n - u32::try_from(p).unwrap_or(n));
    ring[near].0 += p32;
    ring[near].1 += near_links;
    ring[far].0 += rest;
    ring[far].1 += far_links;
    // The peer half way round (`2 j s = l`), counted clockwise above on
    // either side: near when sending up, far when sending down.
    if l.is_multiple_of(2 * s) && l / (2 * s) <= n64 {
        let links = (l / 2).min(cap);
        ring[CLOCKWISE].0 -= 1;
        ring[CLOCKWISE].1 -= links;
        ring[EITHER_WAY].0 += 1;
        ring[EITHER_WAY].1 += links;
    }
}

/// Which way a direct step's transfers go, seen from the member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Send,
    /// Heard, and folded when `fold`.
    Hear {
        fold: bool,
    },
}
