//! The algorithms: which op each serves, what structure it needs from the
//! groups, and (in one file per family) how it decomposes into phases.
//!
//! The tables here are the single source of truth for validation's
//! "this pairing makes no sense" errors and for `docs/algorithms.md`.

use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::{Leg, LegChoices};
pub(crate) mod hier;
mod mesh;
mod rdh;
pub(crate) use rdh::sends_to as rdh_sends_to;
mod ring;
mod step_gen;
mod step_runs;
use crate::schedule::{CollectivePlan, Narrow, Phase, PhaseInstance, PhaseKind, Radices, Schedule, Scope, Transfer};
use crate::valid::Shape;
use ccc_ir::enums::ReductionType;
pub(crate) use step_runs::{StepRun, covers, moved_along};

/// The ops each flat algorithm serves.
pub fn flat_ops(alg: AlgType) -> &'static [OpType] {
    use OpType::*;
    const COLLECTIVE_RS_AG_AR: &[OpType] = &[AllReduce, AllGather, ReduceScatter];
    const TREES: &[OpType] = &[AllReduce, AllGather, ReduceScatter, Broadcast, Reduce];
    const ALL: &[OpType] = &[
        AllGather,
        AllReduce,
        Broadcast,
        Reduce,
        ReduceScatter,
        Send,
        Recv,
        AllToAll,
        Permute,
        PermuteReduce,
        PermuteImplicit,
        PermuteReduceImplicit,
        AllToAllV,
    ];
    match alg {
        AlgType::Ring | AlgType::Mesh => ALL,
        AlgType::Kangaring | AlgType::BwOptMesh | AlgType::Hier => COLLECTIVE_RS_AG_AR,
        AlgType::IntraRdh | AlgType::InterRdh => TREES,
        AlgType::SingleCycleRing | AlgType::SingleStepMesh | AlgType::TwoStepPodMesh | AlgType::LatencyOptMesh => {
            &[AllReduce]
        }
    }
}

/// Does `alg` serve `op`?
pub fn supports(alg: AlgType, op: OpType) -> bool {
    flat_ops(alg).contains(&op)
}

/// The structure an algorithm needs from every replica group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// Nothing beyond a group.
    None,
    /// The whole group lies inside one node.
    WithinNode,
    /// The group is listed node by node, the same number of members on each
    /// of its nodes.
    NodeAligned,
    /// The group is listed pod by pod, the same number of members on each of
    /// its pods, and spans at least two pods.
    PodAligned,
}

/// What `alg` needs from the groups (for a flat choice; Hier is
/// [`Requirement::NodeAligned`]).
pub fn requirement(alg: AlgType) -> Requirement {
    match alg {
        AlgType::Kangaring | AlgType::IntraRdh => Requirement::WithinNode,
        AlgType::Hier | AlgType::LatencyOptMesh | AlgType::BwOptMesh => Requirement::NodeAligned,
        AlgType::TwoStepPodMesh => Requirement::PodAligned,
        AlgType::Ring | AlgType::Mesh | AlgType::SingleCycleRing | AlgType::SingleStepMesh | AlgType::InterRdh => {
            Requirement::None
        }
    }
}

/// The legs a hierarchical op uses, in the order they run; `None` for an op
/// that has no hierarchical form.
pub fn hier_legs(op: OpType) -> Option<&'static [Leg]> {
    match op {
        OpType::AllReduce => Some(&[Leg::IntraReduceScatter, Leg::InterAllReduce, Leg::IntraAllGather]),
        OpType::AllGather => Some(&[Leg::InterAllGather, Leg::IntraAllGather]),
        OpType::ReduceScatter => Some(&[Leg::IntraReduceScatter, Leg::InterReduceScatter]),
        _ => None,
    }
}

/// The legal choices for a hierarchical leg (wire-contract §7, seed 001
/// §2.7): intra legs take Ring or Kangaring; inter legs take Ring, InterRdh
/// and Mesh; the inter all-reduce also takes SingleCycleRing. These are the
/// runtime's own sets, and the default ([`LegChoices::Seed`]).
pub fn leg_choices(leg: Leg) -> &'static [AlgType] {
    leg_choices_in(leg, LegChoices::Seed)
}

/// The legal choices for a hierarchical leg under `set`.
///
/// [`LegChoices::Wide`] (a spec's `choices: Wide`, a \[project\] extension)
/// adds SingleStepMesh and TwoStepPodMesh to the inter all-reduce: ccc
/// composes and proves them, but the runtime's selector never picks them,
/// so they are opt-in. It adds nothing else: LatencyOptMesh and BwOptMesh
/// are not inter-leg choices under either set, because they split their
/// members into a node level and a cross-node level, and an inter leg has
/// one member per node, so on it they would silently be SingleStepMesh and
/// Mesh. TwoStepPodMesh keeps its meaning there (nodes of a pod, then pods).
pub fn leg_choices_in(leg: Leg, set: LegChoices) -> &'static [AlgType] {
    use AlgType::*;
    match (leg, set) {
        (Leg::IntraReduceScatter | Leg::IntraAllGather, _) => &[Ring, Kangaring],
        (Leg::InterAllReduce, LegChoices::Seed) => &[Ring, InterRdh, SingleCycleRing, Mesh],
        (Leg::InterAllReduce, LegChoices::Wide) => {
            &[Ring, InterRdh, SingleCycleRing, Mesh, SingleStepMesh, TwoStepPodMesh]
        }
        (Leg::InterReduceScatter | Leg::InterAllGather, _) => &[Ring, InterRdh, Mesh],
    }
}

/// Runs of equal keys: their common length, if every run has the same
/// length and no key comes back after its run ended.
fn run_length(keys: &[u32]) -> Option<u32> {
    let mut len: Option<u32> = None;
    let mut seen = std::collections::BTreeSet::new();
    let mut i = 0;
    while i < keys.len() {
        let key = keys[i];
        if !seen.insert(key) {
            return None;
        }
        let run = keys[i..].iter().take_while(|&&k| k == key).count();
        let run32 = u32::try_from(run).ok()?;
        match len {
            None => len = Some(run32),
            Some(l) if l != run32 => return None,
            Some(_) => {}
        }
        i += run;
    }
    len
}

/// The (members per node, nodes per pod, pods) shape of a replica group, as
/// its listing shows it: the common length of its runs of equal node, then
/// of equal pod among those runs. A group not listed node by node but pod
/// by pod gets (members per pod, 1, pods); a group with neither structure
/// gets `(n, 1, 1)`. Every group of a collective that uses node or pod
/// structure must have the same shape (validation checks it).
pub fn group_shape(members: &[u32], shape: &Shape) -> [u32; 3] {
    let n = u32::try_from(members.len()).unwrap_or(u32::MAX);
    let nodes: Vec<u32> = members.iter().map(|&r| shape.node(r)).collect();
    let Some(per_node) = run_length(&nodes) else {
        // Not listed node by node, but maybe pod by pod: then the first
        // digit spans a pod (only pod-level algorithms use this shape).
        let pods: Vec<u32> = members.iter().map(|&r| shape.pod(r)).collect();
        return match run_length(&pods) {
            Some(per_pod) => [per_pod, 1, n / per_pod.max(1)],
            None => [n, 1, 1],
        };
    };
    let node_n = n / per_node.max(1);
    // One pod key per node run.
    let pods: Vec<u32> = members.iter().step_by(per_node.max(1) as usize).map(|&r| shape.pod(r)).collect();
    match run_length(&pods) {
        Some(nodes_per_pod) => [per_node, nodes_per_pod, node_n / nodes_per_pod.max(1)],
        None => [per_node, node_n, 1],
    }
}

/// The collective one composition step performs over one scope (a hier
/// leg, or a flat algorithm's whole group): what an algorithm family is
/// asked to compose. Not the spec's [`OpType`] (the op as written) nor
/// [`crate::schedule::OpKind`] (what the whole collective does to the
/// buffers); roots are positions in the scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScopeOp {
    AllReduce,
    ReduceScatter,
    AllGather,
    Broadcast { root: u32 },
    Reduce { root: u32 },
    AllToAll,
    PointToPoint,
}

/// Accumulates the phases of one collective.
pub(crate) struct Composer<'a> {
    pub radices: &'a Radices,
    pub phases: Vec<Phase>,
    pub step: u64,
}

/// The composition asked for something no algorithm here provides: a
/// pairing validation should have refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unsupported {
    pub alg: AlgType,
    pub op: ScopeOp,
}

/// The steps of a phase of `kind` over a scope of `k` members (0: the
/// phase has no peer and is dropped).
pub(crate) fn phase_steps(kind: PhaseKind, k: u32) -> u32 {
    match kind {
        PhaseKind::RingAllToAll => (k.saturating_sub(1)).max(1),
        PhaseKind::DirectAllToAll => 1,
        _ if k <= 1 => 0,
        PhaseKind::RingReduceScatter { .. } | PhaseKind::RingAllGather { .. } => k - 1,
        PhaseKind::RingAllReduceFused | PhaseKind::RingBroadcast { .. } | PhaseKind::RingReduce { .. } => 2 * (k - 1),
        _ => 1,
    }
}

impl Composer<'_> {
    fn push(&mut self, kind: PhaseKind, alg: AlgType, leg: Option<Leg>, scope: Scope, narrow: &[Scope]) {
        let step_n = phase_steps(kind, scope.size(self.radices));
        if step_n == 0 {
            return;
        }
        self.phases.push(Phase {
            kind,
            alg,
            leg,
            scope,
            narrow: Narrow::from_slice(narrow),
            step_n,
            first_step: u32::try_from(self.step).unwrap_or(u32::MAX),
        });
        self.step += u64::from(step_n);
    }

    /// Appends the phases of `alg` performing `op` over `scope`.
    pub(crate) fn compose(
        &mut self,
        op: ScopeOp,
        alg: AlgType,
        scope: Scope,
        narrow: &[Scope],
        leg: Option<Leg>,
    ) -> Result<(), Unsupported> {
        match alg {
            AlgType::Ring | AlgType::Kangaring | AlgType::SingleCycleRing => {
                ring::compose(self, op, alg, scope, narrow, leg)
            }
            AlgType::IntraRdh | AlgType::InterRdh => rdh::compose(self, op, alg, scope, narrow, leg),
            AlgType::Mesh
            | AlgType::SingleStepMesh
            | AlgType::LatencyOptMesh
            | AlgType::TwoStepPodMesh
            | AlgType::BwOptMesh => mesh::compose(self, op, alg, scope, narrow, leg),
            AlgType::Hier => Err(Unsupported { alg, op }),
        }
    }
}

/// Appends to `out` every transfer that member `index` of `group` sends or
/// receives at step `t` of `phase`, each with its `neigh` named when
/// `LABELLED` (otherwise [`step_gen::UNLABELLED`]; see `step_gen`).
pub(crate) fn transfers<const LABELLED: bool>(
    plan: &CollectivePlan,
    shape: &Shape,
    group: u32,
    phase: &Phase,
    inst: PhaseInstance,
    t: u32,
    out: &mut Vec<Transfer>,
) {
    use PhaseKind as K;
    let mut g = step_gen::Gen::<LABELLED> { plan, shape, group, inst, out };
    match phase.kind {
        // Each fold of either ring reads the local piece and one incoming half.
        K::RingReduceScatter { bidir } => ring::reduce_scatter(&mut g, t, bidir, ReductionType::Ring2R1W),
        K::RingAllGather { bidir } => ring::all_gather(&mut g, t, bidir),
        K::RingAllReduceFused => ring::all_reduce_fused(&mut g, t),
        K::RingBroadcast { root } => ring::broadcast(&mut g, t, root),
        K::RingReduce { root } => ring::reduce(&mut g, t, root),
        K::RingAllToAll => ring::all_to_all(&mut g, t),
        K::DirectReduceScatter => mesh::reduce_scatter(&mut g),
        K::DirectAllGather => mesh::all_gather(&mut g),
        K::DirectAllReduce => mesh::all_reduce(&mut g),
        K::DirectBroadcast { root } => mesh::broadcast(&mut g, root),
        K::DirectReduce { root } => mesh::reduce(&mut g, root),
        K::DirectAllToAll => mesh::all_to_all(&mut g),
        K::PointToPoint => {
            let reduce = matches!(plan.kind, crate::schedule::OpKind::Permute { reduce: true });
            mesh::point_to_point(&mut g, reduce);
        }
        K::RdhPrologue { mode } => rdh::prologue(&mut g, mode),
        K::RdhHalving { round, balanced } => rdh::halving(&mut g, round, balanced),
        K::RdhDoubling { round, balanced } => rdh::doubling(&mut g, round, balanced),
        K::RdhEpilogue { mode } => rdh::epilogue(&mut g, mode),
        K::BinomialBroadcast { root, round } => rdh::tree_broadcast(&mut g, root, round),
        K::BinomialReduce { root, round } => rdh::tree_reduce(&mut g, root, round),
    }
}

// `Schedule`'s transfer queries live here, not in `schedule/`: which
// transfers a phase kind makes is algorithm knowledge (the generators
// above), and the schedule only holds the plan the algorithms composed.
// So `schedule` never imports `algorithms` and data flows one way:
// algorithms -> schedule -> lower.
impl Schedule {
    /// Appends to `out` every transfer of step `t` of `phase`, for the member
    /// `inst` was placed around (see [`CollectivePlan::instance`]): the form
    /// for callers that walk a phase step by step.
    pub fn phase_transfers(
        &self,
        collective: &CollectivePlan,
        group: u32,
        phase: &Phase,
        inst: PhaseInstance,
        t: u32,
        out: &mut Vec<Transfer>,
    ) {
        transfers::<true>(collective, &self.shape, group, phase, inst, t, out);
    }

    /// Appends to `out` every transfer member `index` of `group` sends or
    /// receives at `step` of collective `collective`.
    pub fn transfers(&self, collective: &CollectivePlan, group: u32, index: u32, step: u32, out: &mut Vec<Transfer>) {
        let Some((p, t)) = collective.phase_at(step) else { return };
        let Some(phase) = collective.phases.get(p) else { return };
        let inst = collective.instance(phase, index);
        transfers::<true>(collective, &self.shape, group, phase, inst, t, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leg_choices_respect_the_contract_gates() {
        for leg in Leg::ALL {
            for &alg in leg_choices(leg) {
                // Every legal leg choice serves the leg's op.
                assert!(supports(alg, leg.op()), "{leg} {alg}");
                // KANGARING is intra-node only; SINGLE_CYCLE_RING is all-reduce only.
                if alg == AlgType::Kangaring {
                    assert!(leg.is_intra(), "{leg}");
                }
                if alg == AlgType::SingleCycleRing {
                    assert_eq!(leg.op(), OpType::AllReduce);
                }
                assert_ne!(alg, AlgType::Hier);
            }
        }
        assert_eq!(leg_choices(Leg::IntraAllGather), &[AlgType::Ring, AlgType::Kangaring]);
    }

    /// Seed 001 §2.7, written out by hand: intra all-gather / reduce-scatter
    /// in {RING, KANGARING}; inter in {RING, INTER_RDH, MESH}; inter
    /// all-reduce adds SINGLE_CYCLE_RING. The wide set only adds to it.
    #[test]
    fn the_default_legal_sets_are_the_seeds() {
        use AlgType::*;
        let same = |leg: Leg, seed: &[AlgType]| {
            let ours = leg_choices(leg);
            assert!(ours.len() == seed.len() && seed.iter().all(|a| ours.contains(a)), "{leg}: {ours:?} vs {seed:?}");
        };
        same(Leg::IntraAllGather, &[Ring, Kangaring]);
        same(Leg::IntraReduceScatter, &[Ring, Kangaring]);
        same(Leg::InterAllGather, &[Ring, InterRdh, Mesh]);
        same(Leg::InterReduceScatter, &[Ring, InterRdh, Mesh]);
        same(Leg::InterAllReduce, &[Ring, InterRdh, Mesh, SingleCycleRing]);
        for leg in Leg::ALL {
            let wide = leg_choices_in(leg, LegChoices::Wide);
            assert!(leg_choices(leg).iter().all(|a| wide.contains(a)), "{leg}");
            let extra: Vec<AlgType> = wide.iter().copied().filter(|a| !leg_choices(leg).contains(a)).collect();
            let expected = if leg == Leg::InterAllReduce { vec![SingleStepMesh, TwoStepPodMesh] } else { vec![] };
            assert_eq!(extra, expected, "{leg}");
            for &alg in wide {
                assert!(supports(alg, leg.op()), "{leg} {alg}");
            }
        }
    }

    #[test]
    fn hier_legs_use_only_their_ops_legs() {
        for &op in OpType::ALL {
            if let Some(legs) = hier_legs(op) {
                assert!(supports(AlgType::Hier, op));
                for (i, leg) in legs.iter().enumerate() {
                    // Each leg once: `validate` resolves a combination
                    // into `LegAlgorithms`, which refuses a repeat.
                    assert!(!legs[..i].contains(leg), "{op} names {leg} twice");
                    let leg_op = leg.op();
                    // AllReduce composes RS, AR, AG; the others compose their own op.
                    assert!(op == OpType::AllReduce || leg_op == op, "{op} {leg}");
                }
            } else {
                assert!(!supports(AlgType::Hier, op), "{op}");
            }
        }
    }

    #[test]
    fn runs_must_be_even_and_not_come_back() {
        assert_eq!(run_length(&[0, 0, 1, 1, 2, 2]), Some(2));
        assert_eq!(run_length(&[0, 0, 1, 1, 1]), None);
        assert_eq!(run_length(&[0, 1, 0, 1]), None);
        assert_eq!(run_length(&[]), None);
    }

    #[test]
    fn group_shapes_follow_the_listing() {
        let shape = Shape { rank_n: 32, local_rank_n: 4, pod_n: 2, node_n: 8, nodes_per_pod: 4 };
        // Two locals on each of the 8 nodes, listed node by node.
        let members: Vec<u32> = (0..8).flat_map(|node| [node * 4, node * 4 + 1]).collect();
        assert_eq!(group_shape(&members, &shape), [2, 4, 2]);
        // Interleaved nodes of one pod: no structure at all.
        assert_eq!(group_shape(&[0, 4, 1, 5], &shape), [4, 1, 1]);
        // Three members of one node and one of another, on each of two
        // pods: not node by node, but pod by pod.
        assert_eq!(group_shape(&[0, 1, 2, 4, 16, 17, 18, 20], &shape), [4, 1, 2]);
    }
}
