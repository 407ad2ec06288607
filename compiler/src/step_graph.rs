//! The step graph: the data-flow schedule of a program, one node per
//! (collective, step, rank) holding the transfers the rank takes part in at
//! that step, with dependency edges.
//!
//! A node stands for the *completion* of a rank's step. Its dependencies
//! are the completion of the same rank's previous step (program order) and,
//! for every transfer that arrives at the step, the completion of the
//! sender's previous step (the sender issues the step's sends only once its
//! previous step has completed). Every edge therefore goes from step `s - 1`
//! to step `s`, the graph is acyclic by construction, and the canonical node
//! order — by collective, then step, then rank — is a topological order.
//!
//! One concept, two forms, named by role: [`walk_collective`] streams one
//! rank's nodes in that order without building anything world-sized,
//! reusing one buffer (lowering and the proofs use it); [`StepGraph`]
//! materializes the nodes and edges of chosen ranks with petgraph, for DOT
//! output (`ccc graph`) and the test of the order; petgraph types never
//! leave this file. The proofs build no graph: their deadlock argument is
//! the step order itself (see `verify`), which a graph search over the
//! world's nodes would only re-derive.

use crate::schedule::{CollectivePlan, Schedule, Transfer};
use crate::valid::GroupMember;
use ccc_ir::id::{CollectiveIdx, Rank, Step};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use std::collections::BTreeMap;

/// One rank's share of one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepNode {
    /// The collective.
    pub collective: CollectiveIdx,
    /// The step within the collective.
    pub step: Step,
    /// The rank.
    pub rank: Rank,
    /// The rank's replica group and its index in it.
    pub group: u32,
    /// The rank's group-local index.
    pub member: u32,
    /// The phase running at this step.
    pub phase: u32,
    /// Every transfer the rank sends or receives at this step.
    pub transfers: Vec<Transfer>,
}

/// Why an edge exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// The same rank's previous step.
    Program,
    /// A transfer's sender finished its previous step.
    Data,
}

/// One rank's nodes of one collective, in step order; `at` is where the
/// rank sits in the collective's groups ([`Groups::locate`](crate::valid::Groups::locate)).
pub fn collective_nodes<'a>(
    schedule: &'a Schedule,
    plan: &'a CollectivePlan,
    at: GroupMember,
) -> impl Iterator<Item = StepNode> + 'a {
    let (rank, group, member) = (at.rank(), at.group(), at.index());
    (0..plan.step_n).map(move |step| {
        let mut transfers = Vec::new();
        schedule.transfers(plan, group, member, step, &mut transfers);
        let phase = plan.phase_at(step).map_or(0, |(p, _)| p as u32);
        StepNode { collective: CollectiveIdx(plan.index), step: Step(step), rank, group, member, phase, transfers }
    })
}

/// A borrowed view of one node, as [`walk_collective`] hands it out.
#[derive(Clone, Copy, Debug)]
pub struct NodeView<'a> {
    /// The step within the collective.
    pub step: u32,
    /// The phase running at this step.
    pub phase: u32,
    /// The rank's replica group.
    pub group: u32,
    /// The rank's group-local index.
    pub member: u32,
    /// Every transfer the rank sends or receives at this step.
    pub transfers: &'a [Transfer],
}

/// Visits one rank's nodes of one collective in step order, reusing one
/// buffer for the transfers (the allocation-free form of
/// [`collective_nodes`], for lowering and the protocol proof).
///
/// # Errors
///
/// The first error `visit` returns; the walk stops there.
pub fn walk_collective<E>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    at: GroupMember,
    mut visit: impl FnMut(NodeView<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let (group, member) = (at.group(), at.index());
    let mut transfers = Vec::new();
    let mut placer = plan.placer(member);
    for (phase, p) in plan.phases.iter().enumerate() {
        let inst = placer.place(p);
        for t in 0..p.step_n {
            transfers.clear();
            schedule.phase_transfers(plan, group, p, inst, t, &mut transfers);
            let step = p.first_step + t;
            visit(NodeView { step, phase: phase as u32, group, member, transfers: &transfers })?;
        }
    }
    Ok(())
}

/// The nodes and edges of a chosen set of ranks.
#[derive(Debug)]
pub struct StepGraph {
    graph: DiGraph<StepNode, EdgeKind>,
}

impl StepGraph {
    /// Builds the graph of `ranks` (sorted and deduplicated; data edges only
    /// between ranks in the set). A rank outside a collective's groups has
    /// no nodes in it.
    pub fn build(schedule: &Schedule, ranks: &[Rank]) -> StepGraph {
        let mut ranks = ranks.to_vec();
        ranks.sort_unstable();
        ranks.dedup();
        let mut graph = DiGraph::new();
        // (collective, step, rank) -> node, to place edges.
        let mut index: BTreeMap<(u32, u32, Rank), NodeIndex> = BTreeMap::new();
        for plan in &schedule.collectives {
            let mut iters: Vec<_> = ranks
                .iter()
                .filter_map(|&r| plan.groups.locate(r))
                .map(|at| collective_nodes(schedule, plan, at))
                .collect();
            for step in 0..plan.step_n {
                for it in &mut iters {
                    let Some(node) = it.next() else { continue };
                    let key = (plan.index, step, node.rank);
                    let senders: Vec<Rank> = node
                        .transfers
                        .iter()
                        .filter(|t| t.to == node.member && t.from != node.member)
                        // A sender the groups do not hold has no node, so no edge.
                        .filter_map(|t| plan.rank(node.group, t.from))
                        .collect();
                    let rank = node.rank;
                    let id = graph.add_node(node);
                    index.insert(key, id);
                    if step > 0 {
                        if let Some(&prev) = index.get(&(plan.index, step - 1, rank)) {
                            graph.add_edge(prev, id, EdgeKind::Program);
                        }
                        let mut senders = senders;
                        senders.sort_unstable();
                        senders.dedup();
                        for s in senders {
                            if let Some(&from) = index.get(&(plan.index, step - 1, s)) {
                                graph.add_edge(from, id, EdgeKind::Data);
                            }
                        }
                    }
                }
            }
        }
        StepGraph { graph }
    }

    /// Nodes in canonical order.
    pub fn nodes(&self) -> impl Iterator<Item = &StepNode> {
        self.graph.node_weights()
    }

    /// Edges as (from, to, kind) over node positions in [`StepGraph::nodes`],
    /// sorted.
    pub fn edges(&self) -> Vec<(usize, usize, EdgeKind)> {
        let mut edges: Vec<_> =
            self.graph.edge_references().map(|e| (e.source().index(), e.target().index(), *e.weight())).collect();
        edges.sort_unstable();
        edges
    }

    /// Is the graph acyclic, with every edge going forward in canonical order?
    pub fn is_forward(&self) -> bool {
        self.graph.edge_references().all(|e| e.source().index() < e.target().index())
            && petgraph::algo::toposort(&self.graph, None).is_ok()
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};
    use ccc_ir::spec::Leg;

    /// Every edge goes from step `s - 1` to step `s`: the canonical order is
    /// a topological order, whatever the algorithm.
    #[test]
    fn edges_go_forward() {
        let hier = Case::hier(
            OpType::AllReduce,
            &[
                (Leg::IntraReduceScatter, AlgType::Kangaring),
                (Leg::InterAllReduce, AlgType::InterRdh),
                (Leg::IntraAllGather, AlgType::Ring),
            ],
            12,
            4,
        );
        for case in [
            hier,
            Case::flat(OpType::AllToAll, AlgType::Ring, 6, 3),
            Case::flat(OpType::Reduce, AlgType::IntraRdh, 5, 5),
        ] {
            let schedule = build(&case.valid()).unwrap();
            let ranks: Vec<Rank> = (0..case.rank_n).map(Rank).collect();
            let graph = StepGraph::build(&schedule, &ranks);
            assert!(graph.is_forward(), "{case:?}");
            let steps: u32 = schedule.collectives.iter().map(|c| c.step_n).sum();
            assert_eq!(graph.node_count(), (steps * case.rank_n) as usize);
            assert!(graph.edges().iter().any(|e| e.2 == EdgeKind::Data));
        }
    }
}
