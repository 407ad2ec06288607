//! Lower bounds: what no schedule of the op can beat under the model's own
//! parameters (`docs/cost-model.md` §3).
//!
//! For an op over `p` members spread over `N` nodes (`L` per node), with
//! `n` the op's buffer in bytes (nccom-test's `size`: the output of an
//! all-gather, the input of the others):
//!
//! - latency: `⌈log2 N⌉·α_inter + (⌈log2 p⌉ − ⌈log2 N⌉)·α_intra`, under
//!   the single-port assumption (one message in and out per member per
//!   step); a direct (mesh) pattern breaks it and can come under it. An
//!   op of a peer map (send, receive, the permutes) relays nothing: one
//!   step, `α_intra`;
//! - bandwidth: `(p−1)/p·n / B` for all-gather, reduce-scatter, all-to-all,
//!   broadcast and reduce, `2(p−1)/p·n / B` for all-reduce, with `B` the
//!   most one rank can inject when every rank injects its share (both
//!   directions of its intra-node links plus its share of its node's
//!   network, all through its TOP_SPs' DMA); an op of a peer map, `n / B`
//!   with the node's whole network (its map may have one pair);
//! - cut (members on several nodes): what must cross a node's boundary
//!   over the node's network: `2(N−1)/N·n` for all-reduce, `(N−1)/N·n` for
//!   reduce-scatter and all-gather, `(N−1)/N·n` for all-to-all (for an
//!   inter leg, `n` is the node's: its `L` members' parts together, see
//!   `leg_bound` in the parent module).
//!
//! The bound is the launch cost (with the multi-node one when the
//! members span nodes) plus the largest of the three.

use crate::cost::predict::Hop;
use ccc_ir::enums::OpType;
use ccc_ir::model::ModelParams;
use serde::Serialize;

/// The terms of a bound, ns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Bound {
    /// Launch cost.
    pub launch_ns: f64,
    /// Latency term.
    pub latency_ns: f64,
    /// Bandwidth term.
    pub bandwidth_ns: f64,
    /// Node-cut term (0 inside one node).
    pub cut_ns: f64,
}

impl Bound {
    /// Launch plus the largest term.
    pub fn total_ns(&self) -> f64 {
        self.launch_ns + self.latency_ns.max(self.bandwidth_ns).max(self.cut_ns)
    }
}

/// What a bound is computed over.
#[derive(Clone, Copy, Debug)]
pub struct BoundInput {
    /// The op the members run.
    pub op: OpType,
    /// Members.
    pub p: u32,
    /// Nodes they span.
    pub nodes: u32,
    /// The op's buffer, bytes (see the module doc).
    pub bytes: f64,
    /// Ring channels.
    pub channels: u8,
    /// TOP_SPs per core.
    pub topsp_n: u8,
    /// Members per node (they share the node's network).
    pub per_node: u32,
}

fn log2_ceil(x: u32) -> u32 {
    if x <= 1 { 0 } else { 32 - (x - 1).leading_zeros() }
}

/// The lower bound of `input` under `params`, `launch` counted or not.
pub fn bound(input: BoundInput, params: &ModelParams, launch: bool) -> Bound {
    let BoundInput { op, p, nodes, bytes, channels, topsp_n, per_node } = input;
    // The launch cost every schedule pays: `launch_ns`, and
    // `launch_inter_ns` when the members span nodes.
    let inter = if nodes > 1 { params.launch_inter_ns } else { 0.0 };
    let launch_ns = if launch { params.launch_ns + inter } else { 0.0 };
    if p <= 1 {
        return Bound { launch_ns, latency_ns: 0.0, bandwidth_ns: 0.0, cut_ns: 0.0 };
    }
    let (lp, ln) = (log2_ceil(p), log2_ceil(nodes));
    // A step across nodes pays at least an intra-node step's α
    // (`Hop::alpha_ns`).
    let alpha_inter = if nodes > 1 { Hop::Inter.alpha_ns(params) } else { 0.0 };
    let latency_ns = if op.takes_peers() {
        // A peer map's messages can all go in one step: no member needs
        // anything relayed. At least one step, over the narrowest hop.
        params.alpha_intra_ns
    } else {
        f64::from(ln) * alpha_inter + f64::from(lp - ln.min(lp)) * params.alpha_intra_ns
    };
    let dma = params.dma * f64::from(channels.min(topsp_n).max(1));
    // Every member must inject its share; the members of a node share its
    // network. A peer map may be sparse (one pair across nodes), so its
    // sender may have the node's whole network.
    let sharing = if op.takes_peers() { 1 } else { per_node.max(1) };
    let network = params.node_inter / f64::from(sharing);
    // Both directions of the intra-node links, the network share, all
    // through the DMA.
    let links = 2.0 * params.link_intra + if nodes > 1 { network } else { 0.0 };
    let inject = links.min(dma);
    let pf = f64::from(p);
    let share = (pf - 1.0) / pf;
    let factor = match op {
        OpType::AllReduce => 2.0 * share,
        OpType::Send | OpType::Recv | OpType::Permute | OpType::PermuteImplicit => 1.0,
        OpType::PermuteReduce | OpType::PermuteReduceImplicit => 1.0,
        _ => share,
    };
    let bandwidth_ns = ModelParams::ns_at(factor * bytes, inject);
    let cut_ns = cut_ns(op, nodes, bytes, params);
    Bound { launch_ns, latency_ns, bandwidth_ns, cut_ns }
}

/// The cut term of [`bound`]: what must cross a node's boundary when `op`
/// runs on `bytes` (the whole node's, see the module doc) over `nodes`
/// nodes, over the node's network, ns; 0 on one node.
pub(crate) fn cut_ns(op: OpType, nodes: u32, bytes: f64, params: &ModelParams) -> f64 {
    if nodes <= 1 {
        return 0.0;
    }
    let nf = f64::from(nodes);
    let cut_share = (nf - 1.0) / nf;
    let cut_factor = match op {
        OpType::AllReduce => 2.0 * cut_share,
        OpType::AllGather | OpType::ReduceScatter | OpType::AllToAll | OpType::AllToAllV => cut_share,
        _ => 0.0,
    };
    ModelParams::ns_at(cut_factor * bytes, params.node_inter)
}

/// nccom-test's bus-bandwidth factor of an op over `p` ranks: busbw =
/// algbw × factor (2(p−1)/p for all-reduce, (p−1)/p for all-gather,
/// reduce-scatter and all-to-all, 1 otherwise).
pub fn busbw_factor(op: OpType, p: u32) -> f64 {
    let pf = f64::from(p.max(1));
    match op {
        OpType::AllReduce => 2.0 * (pf - 1.0) / pf,
        OpType::AllGather | OpType::ReduceScatter | OpType::AllToAll | OpType::AllToAllV => (pf - 1.0) / pf,
        _ => 1.0,
    }
}
