//! cost: the α-β-γ (Hockney) cost model, its lower bounds, and the
//! `algorithm: Auto` choice (`docs/cost-model.md`).
//!
//! The model is computed from the [`Schedule`] ccc actually builds, not
//! from a formula kept by hand per algorithm: [`predict()`] walks the
//! phases and steps of a collective plan and charges each step what its
//! busiest member moves, over which link, with which fold. [`bound()`] is
//! what no schedule can beat under the same parameters. [`auto`] is the
//! choice: every legal algorithm (the legality is validation's own),
//! predicted, cheapest first, ties broken by a documented order.
//!
//! The parameters are one table per architecture ([`ModelParams`]),
//! overridable from a spec's `model: (...)` block.

pub mod auto;
pub mod bound;
pub mod predict;
#[cfg(test)]
mod tests;

pub use crate::valid::{Alternative, AutoChoice};
use bound::cut_ns;
pub use bound::{Bound, BoundInput, bound, busbw_factor};
pub use ccc_ir::model::ModelParams;
pub use predict::{Hop, PhaseCost, Prediction, predict};

use crate::schedule::{CollectivePlan, OpKind, Schedule};
use ccc_ir::enums::OpType;
use ccc_ir::spec::Leg;
use serde::Serialize;

/// The op's size as nccom-test reports it, bytes: the output buffer of an
/// all-gather, the input buffer of every other op.
pub fn op_bytes(plan: &CollectivePlan) -> f64 {
    let n = f64::from(plan.groups.size());
    let input = plan.count as f64 * plan.dtype.size() as f64;
    match plan.kind {
        OpKind::AllGather => input * n,
        _ => input,
    }
}

/// [`op_bytes`] exactly: the size a table or JSON prints (an f64 holds
/// whole bytes only to 2^53, and a u64 not past 2^64 - 1, which an
/// all-gather's output can exceed).
pub fn op_size(plan: &CollectivePlan) -> u128 {
    let input = u128::from(plan.count) * u128::from(plan.dtype.size());
    match plan.kind {
        OpKind::AllGather => input * u128::from(plan.groups.size()),
        _ => input,
    }
}

/// The nodes a group of the plan spans.
fn nodes_spanned(schedule: &Schedule, plan: &CollectivePlan) -> u32 {
    // The world group holds ranks `0..n` at their own index: nodes `0`
    // to that of rank `n - 1`, without placing every member.
    if !plan.groups.is_explicit() {
        let n = plan.groups.size();
        return if n == 0 { 0 } else { schedule.shape.node(n - 1) + 1 };
    }
    nodes_listed(schedule, plan)
}

/// [`nodes_spanned`] counted from every member's node (the reference the
/// world group's shortcut is tested against).
fn nodes_listed(schedule: &Schedule, plan: &CollectivePlan) -> u32 {
    let mut nodes: Vec<u32> = (0..plan.groups.size())
        .filter_map(|i| plan.rank(plan.groups.modelled(), i))
        .map(|r| schedule.shape.node(r.0))
        .collect();
    // A group lists its members node by node (or nearly): dropping
    // repeats in a row first leaves few to sort.
    nodes.dedup();
    nodes.sort_unstable();
    nodes.dedup();
    nodes.len() as u32
}

/// The bound of one leg (or of the whole collective: `leg = None`) of
/// `plan`, whose groups span `nodes` nodes ([`nodes_spanned`]).
pub(crate) fn leg_bound(
    schedule: &Schedule,
    plan: &CollectivePlan,
    nodes: u32,
    leg: Option<Leg>,
    params: &ModelParams,
) -> Bound {
    let topsp_n = schedule.arch.params().topsp_n;
    let whole = BoundInput {
        op: plan.op,
        p: plan.groups.size(),
        nodes,
        bytes: op_bytes(plan),
        channels: plan.channels,
        topsp_n,
        per_node: plan.groups.size() / nodes.max(1),
    };
    let Some(leg) = leg else { return bound(whole, params, true) };
    let [local, per_pod, pods] = plan.radices.0;
    let inter = per_pod * pods;
    let input = plan.count as f64 * plan.dtype.size() as f64;
    let (p, nodes, bytes) = match leg {
        Leg::IntraReduceScatter => (local, 1, input),
        Leg::IntraAllGather => (local, 1, op_bytes(plan)),
        Leg::InterAllReduce | Leg::InterReduceScatter => (inter, inter, input / f64::from(local.max(1))),
        Leg::InterAllGather => (inter, inter, input * f64::from(inter)),
    };
    // The node's members run their inter legs at once, sharing its network.
    let mut b = bound(BoundInput { op: leg.op(), p, nodes, bytes, per_node: local, ..whole }, params, false);
    // And each of them on its own part of the buffer: what crosses the
    // node's boundary is all of theirs, `local` times one leg's (until
    // stop 45 the cut counted one member's, and an inter all-reduce of 1 GiB
    // on 8 nodes of 16 came out at 16 times its bound).
    b.cut_ns = cut_ns(leg.op(), nodes, bytes * f64::from(local.max(1)), params);
    b
}

/// One leg's prediction and bound (a flat algorithm has one leg, `None`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LegEvaluation {
    /// The leg (`None`: flat).
    pub leg: Option<Leg>,
    /// Predicted time of its phases, ns.
    pub predicted_ns: f64,
    /// Its bound (no launch cost), ns.
    pub bound_ns: f64,
}

/// A collective's prediction and bound, whole and per leg.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evaluation {
    /// The prediction.
    pub prediction: Prediction,
    /// The whole collective's bound.
    pub bound: Bound,
    /// Per leg, in run order.
    pub legs: Vec<LegEvaluation>,
    /// nccom-test's size, bytes, as the model computes with it.
    pub bytes: f64,
    /// The same size exactly ([`op_size`]), as it is printed.
    pub size: u128,
    /// nccom-test's busbw factor.
    pub busbw_factor: f64,
}

impl Evaluation {
    /// Predicted time over bound (≥ 1 for a schedule the bound holds for).
    pub fn ratio(&self) -> f64 {
        let b = self.bound.total_ns();
        if b > 0.0 { self.prediction.total_ns / b } else { 1.0 }
    }
    /// Algorithm bandwidth, bytes/s: size over predicted time.
    pub fn algbw(&self) -> f64 {
        if self.prediction.total_ns > 0.0 { self.bytes / self.prediction.total_ns * 1e9 } else { 0.0 }
    }
    /// Bus bandwidth, bytes/s: algbw times nccom-test's factor.
    pub fn busbw(&self) -> f64 {
        self.algbw() * self.busbw_factor
    }
}

/// Predicts and bounds collective `plan` of `schedule`.
pub fn evaluate(schedule: &Schedule, plan: &CollectivePlan, params: &ModelParams) -> Evaluation {
    let prediction = predict(schedule, plan, params);
    let nodes = nodes_spanned(schedule, plan);
    let mut legs: Vec<LegEvaluation> = Vec::new();
    for &(leg, _) in &plan.legs {
        // A leg's bound has no launch cost, as its time has none: a flat
        // algorithm's one leg is the whole bound less the launch.
        let b = Bound { launch_ns: 0.0, ..leg_bound(schedule, plan, nodes, leg, params) };
        legs.push(LegEvaluation { leg, predicted_ns: prediction.leg_ns(leg), bound_ns: b.total_ns() });
    }
    let op: OpType = plan.op;
    Evaluation {
        bound: leg_bound(schedule, plan, nodes, None, params),
        legs,
        bytes: op_bytes(plan),
        size: op_size(plan),
        busbw_factor: busbw_factor(op, plan.groups.size()),
        prediction,
    }
}
