//! The pre-floor: a floor under a candidate's walked floor (and so under
//! its prediction) named from its phases' patterns, without generating a
//! transfer or placing the sampled members; first without counting a
//! network flow, then, for a candidate still in reach, with the floor's
//! flows (`docs/cost-model.md` §4).
//!
//! The walked floor of a phase (`PhaseCoster` with `floor`) is, over its
//! sampled steps, each standing for `step_n / sampled` steps, member 0's
//! α, β and γ terms and overheads. Here, for the patterns whose every
//! step has member 0 move a piece the pattern names (the ring
//! reduce-scatter, all-gather and single-cycle all-reduce, the direct
//! reduce-scatter, all-gather and all-reduce, and recursive halving and
//! doubling over a power-of-two scope), one step's load is bounded from
//! below and charged `step_n` times:
//!
//! - α: the smallest α of the hops at least as wide as the widest member
//!   0's own transfers take (the step pays the α of the widest hop any
//!   transfer listed for it takes, and a `model:` override may make a
//!   wider hop's α the smaller);
//! - β: the largest of member 0's busier ring direction's link load
//!   (with the transfers half way round added, `ring_load`) over the link
//!   rate, its bytes off its node over its share of the node's network (the floor's flows, counted once in the [`FlowMemo`] the
//!   walks share, only when it moves bytes off its node: the floor's walk
//!   divides by the same count then; or, cheaper, the whole network, a
//!   share at least as fast), and its bytes through the DMA at
//!   the walk's DMA rate; each block counted at the layout's smallest
//!   block, so uneven counts and sampled steps stay above it;
//! - γ: the elements it folds, at the reduction rate, where every step
//!   folds (reduce-scatter patterns);
//! - no overheads (descriptors and fan-in): 0 is below them.
//!
//! Every other pattern (rooted trees and chains, the RDH prologue and
//! epilogue, all-to-all, point-to-point, halving over a scope that is not
//! a power of two, where member 0 may sit out a step) is bounded by 0.
//! `cost/tests.rs` checks the pre-floor against the walked floor phase by
//! phase over random specs.

use crate::cost::predict::{FlowMemo, Hop, PlanCx, ring_hops, ring_load};
use crate::schedule::{CollectivePlan, OpKind, Phase, PhaseInstance, PhaseKind, Schedule, ScopeInstance, relation};
use ccc_ir::model::ModelParams;

/// How much a phase's pre-floor is lowered, relative: rounding may make
/// the walk's sums (a few weighted steps, bytes over rates) a few units
/// in the last place apart from the pre-floor's; this is far above
/// that (an `f64` sum of 16 positive terms is within about 2e-15 of
/// exact) and far below anything the search compares.
const SLACK: f64 = 1e-9;

/// The most peers of a direct step whose hop and ring distance are
/// looked up, the nearest ahead of member 0 (with the last, behind it);
/// the others count in the DMA term only (bytes every peer moves), so a
/// 1024-member mesh costs what a 17-member one does. On world groups
/// the nearest ahead are those on member 0's node, which the link term
/// reads, and the last is often off it, which α reads.
const PEERS_VISITED: u32 = 16;

/// What the pre-floor of every plan of one collective reads.
pub(crate) struct PreFloor<'a> {
    schedule: &'a Schedule,
    params: &'a ModelParams,
    /// The DMA rate the walk charges (`PlanCx`), bytes/s.
    dma: f64,
    /// The cap on the links an intra-node transfer crosses, as the walk
    /// applies it.
    cap: f64,
    /// By [`Hop`] (intra, inter, pod), the least α of the hops at least
    /// as wide, ns: a step is charged the α of its widest hop, and a
    /// `model:` override may make a wider hop's α the smaller.
    least_alpha: [f64; 3],
}

/// Member 0's load at one step, bounded from below: bytes per side
/// ([`SENT`], [`HEARD`]).
#[derive(Default)]
struct Load {
    /// Bytes through the DMA, per side.
    moved: [f64; 2],
    /// Intra-node link loads (bytes times links) per side and ring
    /// direction (`ring_hops`).
    ring: [[f64; 3]; 2],
    /// Bytes off the member's node, per side.
    off: [f64; 2],
    /// The widest hop of the member's own transfers.
    hop: Option<Hop>,
    /// Elements folded.
    folded: f64,
}

/// The side of a [`Load`] that counts what member 0 sends.
const SENT: usize = 0;
/// The side of a [`Load`] that counts what member 0 hears.
const HEARD: usize = 1;

impl<'a> PreFloor<'a> {
    /// The pre-floors of `schedule`'s candidates under `params`, `cx` the
    /// context their walks share.
    pub(crate) fn new(schedule: &'a Schedule, params: &'a ModelParams, cx: &PlanCx<'_>) -> Self {
        let alphas = [Hop::Intra, Hop::Inter, Hop::Pod].map(|h| h.alpha_ns(params));
        let least_alpha = [0, 1, 2].map(|h| alphas.iter().skip(h).copied().fold(f64::INFINITY, f64::min));
        PreFloor { schedule, params, dma: cx.dma(), cap: params.hops_max.max(1.0), least_alpha }
    }

    /// What bounds `phase` of `plan` (see the module doc), placed around
    /// member 0 here (the tests' call).
    #[cfg(test)]
    pub(crate) fn phase(&self, plan: &CollectivePlan, phase: &Phase) -> PhasePre {
        self.placed(plan, phase, plan.instance(phase, 0))
    }

    /// What bounds `phase` of `plan` (see the module doc), `inst` its
    /// placement around member 0 (the search places a run of phases
    /// placed alike once, [`CollectivePlan::placer`]): its
    /// [`PhasePre::ns`] is a floor under the phase's walked floor.
    pub(crate) fn placed(&self, plan: &CollectivePlan, phase: &Phase, inst: PhaseInstance) -> PhasePre {
        use PhaseKind as K;
        let scope = inst.scope;
        if scope.k < 2 || phase.step_n == 0 {
            return PhasePre::NONE;
        }
        let block = min_block_bytes(plan);
        let piece = f64::from(inst.per_piece) * block;
        let size = plan.dtype.size() as f64;
        let mut load = Load::default();
        match phase.kind {
            K::RingReduceScatter { bidir } | K::RingAllGather { bidir } => {
                let fold = matches!(phase.kind, K::RingReduceScatter { .. });
                let (next, prev) = (scope.member(scope.pos + 1), scope.member(scope.pos + scope.k - 1));
                let me = scope.member(scope.pos);
                // One piece each way, or half a piece each way round both
                // directions (Kangaring).
                let share = if bidir { 0.5 } else { 1.0 };
                self.add(plan, &mut load, (me, next), SENT, piece * share);
                self.add(plan, &mut load, (prev, me), HEARD, piece * share);
                if bidir {
                    self.add(plan, &mut load, (me, prev), SENT, piece * share);
                    self.add(plan, &mut load, (next, me), HEARD, piece * share);
                }
                if fold {
                    load.folded = piece / size;
                }
            }
            // Its reduce-scatter steps fold, its all-gather steps do not:
            // γ is left out rather than counted over the sampled steps.
            K::RingAllReduceFused => {
                let (next, prev) = (scope.member(scope.pos + 1), scope.member(scope.pos + scope.k - 1));
                let me = scope.member(scope.pos);
                self.add(plan, &mut load, (me, next), SENT, piece);
                self.add(plan, &mut load, (prev, me), HEARD, piece);
            }
            K::DirectReduceScatter | K::DirectAllGather | K::DirectAllReduce if phase.step_n == 1 => {
                // Every peer gets a piece (the universe for an all-reduce)
                // and sends one.
                let each = match phase.kind {
                    K::DirectAllReduce => f64::from(inst.universe.count) * block,
                    _ => piece,
                };
                self.direct(plan, &mut load, &scope, each);
                if !matches!(phase.kind, K::DirectAllGather) {
                    load.folded = f64::from(scope.k - 1) * each / size;
                }
            }
            K::RdhHalving { round, .. } | K::RdhDoubling { round, .. } if scope.k.is_power_of_two() => {
                // Every member is a participant speaking for itself, one
                // block each (`algorithms/rdh.rs`): halving round `t`
                // exchanges `k >> (t + 1)` blocks with the participant that
                // far, doubling round `t` `1 << t` blocks; halving folds.
                let halving = matches!(phase.kind, K::RdhHalving { .. });
                let d = if halving {
                    scope.k.checked_shr(u32::from(round) + 1)
                } else {
                    1u32.checked_shl(u32::from(round))
                };
                let Some(d) = d.filter(|&d| d > 0 && d < scope.k) else { return PhasePre::NONE };
                let (me, peer) = (scope.member(scope.pos), scope.member(scope.pos ^ d));
                let blocks = f64::from(d) * block;
                self.add(plan, &mut load, (me, peer), SENT, blocks);
                self.add(plan, &mut load, (peer, me), HEARD, blocks);
                if halving {
                    load.folded = blocks / size;
                }
            }
            _ => return PhasePre::NONE,
        }
        self.pre(&load, phase.step_n)
    }

    /// The network's share `phase` of `plan` costs a floor's bytes off
    /// the node at, bytes/s, as the floor's walk divides it: the node's
    /// network over the floor's flows, from `flows` (counted there the
    /// first time). Asked only of a phase whose member 0 moves bytes off
    /// its node ([`PhasePre::off`]): the walk's load then does too, and
    /// divides by the same count.
    pub(crate) fn network(&self, plan: &CollectivePlan, phase: &Phase, flows: &mut FlowMemo) -> f64 {
        self.params.node_inter / flows.floor_flows(self.schedule, plan, phase)
    }

    /// Member 0 (at `scope.pos`) sends `each` bytes to every other member
    /// of `scope` and hears as much from each: all of them through the
    /// DMA, the first [`PEERS_VISITED`] it sends to in the generator's
    /// order (and the last) on their links (the heard side is left out of
    /// the link and network terms: a lower bound on their largest).
    fn direct(&self, plan: &CollectivePlan, load: &mut Load, scope: &ScopeInstance, each: f64) {
        let me = scope.member(scope.pos);
        let peers = scope.k - 1;
        let last = (peers > PEERS_VISITED).then_some(peers);
        for d in (1..=peers.min(PEERS_VISITED)).chain(last) {
            self.add(plan, load, (me, scope.member(scope.pos + d)), SENT, each);
        }
        load.moved = [f64::from(peers) * each; 2];
    }

    /// Adds to member 0's `load` on `side` one transfer of `bytes` from
    /// group member `from` to `to`, routed as the walk routes it
    /// (`LoadCx::add`): none when either is not in the group.
    fn add(&self, plan: &CollectivePlan, load: &mut Load, (from, to): (u32, u32), side: usize, bytes: f64) {
        let g = plan.groups.modelled();
        let (Some(a), Some(b)) = (plan.rank(g, from), plan.rank(g, to)) else { return };
        let shape = &self.schedule.shape;
        let hop = Hop::of(relation(shape, a, b));
        load.hop = load.hop.max(Some(hop));
        load.moved[side] += bytes;
        match hop {
            Hop::Intra => {
                let (dir, links) = ring_hops(shape.local_rank_n, a.0, b.0);
                load.ring[side][dir] += bytes * links.min(self.cap);
            }
            Hop::Inter | Hop::Pod => load.off[side] += bytes,
        }
    }

    /// One step's terms for a member with at least `load`, `steps` of
    /// them (`predict::step_terms`, every rate but the network's the
    /// walk's own).
    fn pre(&self, load: &Load, steps: u32) -> PhasePre {
        let p = self.params;
        let Some(hop) = load.hop else { return PhasePre::NONE };
        // The step's hop is at least the member's own widest.
        let alpha = self.least_alpha[match hop {
            Hop::Intra => 0,
            Hop::Inter => 1,
            Hop::Pod => 2,
        }];
        let most = |x: [f64; 2]| x[0].max(x[1]);
        let link = ModelParams::ns_at(ring_load(load.ring[SENT]).max(ring_load(load.ring[HEARD])), p.link_intra);
        let dma = ModelParams::ns_at(most(load.moved), self.dma);
        let gamma = if load.folded > 0.0 { load.folded / p.reduce_elems * 1e9 } else { 0.0 };
        PhasePre { steps: f64::from(steps), fixed: alpha + gamma, beta: link.max(dma), off: most(load.off) }
    }
}

/// A phase's pre-floor, kept by the search so that it is found once:
/// its steps, each at least `fixed + max(beta, off / network)` ns, where
/// `network` is the flow's share of the node's network.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PhasePre {
    steps: f64,
    /// α and γ of a step, ns.
    fixed: f64,
    /// The larger of a step's link and DMA β, ns.
    beta: f64,
    /// Member 0's bytes off its node in a step, on its busier side.
    pub(crate) off: f64,
}

impl PhasePre {
    /// A phase bounded by 0.
    const NONE: PhasePre = PhasePre { steps: 0.0, fixed: 0.0, beta: 0.0, off: 0.0 };

    /// The pre-floor, ns, with the bytes off the node at `network`
    /// bytes/s: the node's whole network (`ModelParams::node_inter`, at
    /// least any flow's share) or [`PreFloor::network`]; lowered by
    /// [`SLACK`].
    pub(crate) fn ns(&self, network: f64) -> f64 {
        let step = self.fixed + self.beta.max(ModelParams::ns_at(self.off, network));
        let ns = self.steps * step * (1.0 - SLACK);
        if ns.is_nan() { 0.0 } else { ns.max(0.0) }
    }
}

/// The bytes of the smallest block of any member's buffer in `plan`'s
/// layout (`Layout::block_elems`): a part of the count split over the
/// group rounds down; an all-to-all with per-pair counts may hold none.
fn min_block_bytes(plan: &CollectivePlan) -> f64 {
    let n = u64::from(plan.groups.size().max(1));
    let elems = match plan.kind {
        OpKind::AllReduce | OpKind::ReduceScatter | OpKind::Broadcast | OpKind::Reduce => plan.count / n,
        OpKind::AllGather | OpKind::Permute { .. } => plan.count,
        OpKind::AllToAll if plan.counts.is_some() => 0,
        OpKind::AllToAll => plan.count / n,
    };
    elems as f64 * plan.dtype.size() as f64
}
