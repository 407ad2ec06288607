//! The algorithms: which op each serves, what structure it needs from the
//! groups, and (in one file per family) how it decomposes into phases.
//!
//! The tables here are the single source of truth for validation's
//! "this pairing makes no sense" errors and for `docs/algorithms.md`.

use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::Leg;

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

/// The legal choices for a hierarchical leg (wire-contract §7): intra legs
/// take Ring or Kangaring; inter legs take Ring, InterRdh and the mesh
/// family, restricted to the algorithms that serve the leg's op; the inter
/// all-reduce also takes SingleCycleRing.
pub fn leg_choices(leg: Leg) -> &'static [AlgType] {
    use AlgType::*;
    match leg {
        Leg::IntraReduceScatter | Leg::IntraAllGather => &[Ring, Kangaring],
        Leg::InterAllReduce => {
            &[Ring, InterRdh, SingleCycleRing, Mesh, SingleStepMesh, TwoStepPodMesh, LatencyOptMesh, BwOptMesh]
        }
        Leg::InterReduceScatter | Leg::InterAllGather => &[Ring, InterRdh, Mesh, BwOptMesh],
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

    #[test]
    fn hier_legs_use_only_their_ops_legs() {
        for &op in OpType::ALL {
            if let Some(legs) = hier_legs(op) {
                assert!(supports(AlgType::Hier, op));
                for leg in legs {
                    let leg_op = leg.op();
                    // AllReduce composes RS, AR, AG; the others compose their own op.
                    assert!(op == OpType::AllReduce || leg_op == op, "{op} {leg}");
                }
            } else {
                assert!(!supports(AlgType::Hier, op), "{op}");
            }
        }
    }
}
