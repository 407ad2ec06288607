//! build: a validated program into its [`Schedule`] — the phases of every
//! collective, composed from the algorithm choices (`docs/algorithms.md`).

use crate::algorithms::{Composer, LegOp, Requirement, Unsupported, requirement};
use crate::schedule::{CollectivePlan, OpKind, PeerMap, Radices, Schedule, Scope};
use crate::valid::{Groups, ResolvedAlgorithm, Shape, ValidCollective, ValidProgram};
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::Leg;

/// Why a validated program could not be composed into a schedule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// Replica groups that do not share one node/pod shape, under an
    /// algorithm that works on that shape.
    #[error(
        "collective {collective}: groups[{group}] has the shape {found:?} (members per node, nodes per pod, pods) \
         but groups[0] has {expected:?}; {alg} needs every replica group to have the same shape"
    )]
    UnevenGroups {
        /// The collective.
        collective: u32,
        /// The first group that differs.
        group: u32,
        /// Its shape.
        found: [u32; 3],
        /// Group 0's shape.
        expected: [u32; 3],
        /// The algorithm that needs the shape.
        alg: AlgType,
    },
    /// An algorithm was asked for an op it does not serve (validation lets
    /// no such pairing through; this is a compiler defect if it shows).
    #[error("collective {collective}: {alg} has no form for {op} (leg {leg:?})")]
    Unsupported {
        /// The collective.
        collective: u32,
        /// The algorithm.
        alg: AlgType,
        /// The op.
        op: OpType,
        /// The leg, if hierarchical.
        leg: Option<Leg>,
    },
    /// The schedule has more steps than a u32 counts.
    #[error("collective {collective}: {steps} steps do not fit in 32 bits")]
    TooManySteps {
        /// The collective.
        collective: u32,
        /// The step count.
        steps: u64,
    },
}

/// Composes every collective of `valid` into phases.
///
/// # Errors
///
/// [`BuildError`] when groups disagree on a shape the algorithm needs.
pub fn build(valid: &ValidProgram) -> Result<Schedule, BuildError> {
    let shape = valid.topology();
    let collectives = valid.collectives().iter().map(|c| plan_collective(c, &shape)).collect::<Result<Vec<_>, _>>()?;
    Ok(Schedule {
        arch: valid.arch(),
        shape,
        barrier: valid.barrier(),
        send_credits: valid.send_credits(),
        collectives,
    })
}

fn plan_collective(c: &ValidCollective, shape: &Shape) -> Result<CollectivePlan, BuildError> {
    let groups = c.groups().clone();
    let n = groups.size();
    let needs_shape = match c.algorithm() {
        ResolvedAlgorithm::Flat(alg) => (requirement(*alg) != Requirement::None).then_some(*alg),
        ResolvedAlgorithm::Hier(_) => Some(AlgType::Hier),
    };
    let radices = match needs_shape {
        None => Radices([n, 1, 1]),
        Some(alg) => uniform_radices(&groups, shape, c.index(), alg)?,
    };
    let kind = OpKind::of(c.op());
    let op = match kind {
        OpKind::AllReduce => LegOp::AllReduce,
        OpKind::AllGather => LegOp::AllGather,
        OpKind::ReduceScatter => LegOp::ReduceScatter,
        OpKind::Broadcast => LegOp::Broadcast { root: c.root().unwrap_or(0) },
        OpKind::Reduce => LegOp::Reduce { root: c.root().unwrap_or(0) },
        OpKind::AllToAll => LegOp::AllToAll,
        OpKind::Permute { .. } => LegOp::PointToPoint,
    };
    let mut composer = Composer { radices: &radices, phases: Vec::new(), step: 0 };
    let unsupported =
        |u: Unsupported, leg| BuildError::Unsupported { collective: c.index(), alg: u.alg, op: c.op(), leg };
    let whole = Scope::WHOLE;
    let (node, cross) = (whole.node_part(), whole.cross_part());
    let legs: Vec<(Option<Leg>, AlgType)> = match c.algorithm() {
        ResolvedAlgorithm::Flat(alg) => {
            composer.compose(op, *alg, whole, &[], None).map_err(|u| unsupported(u, None))?;
            vec![(None, *alg)]
        }
        ResolvedAlgorithm::Hier(legs) => {
            for &(leg, alg) in legs {
                let (leg_op, scope, narrow): (LegOp, Scope, &[Scope]) = match leg {
                    Leg::IntraReduceScatter => (LegOp::ReduceScatter, node, &[]),
                    Leg::IntraAllGather => (LegOp::AllGather, node, &[]),
                    Leg::InterAllReduce => (LegOp::AllReduce, cross, std::slice::from_ref(&node)),
                    Leg::InterReduceScatter => (LegOp::ReduceScatter, cross, std::slice::from_ref(&node)),
                    Leg::InterAllGather => (LegOp::AllGather, cross, std::slice::from_ref(&node)),
                };
                composer.compose(leg_op, alg, scope, narrow, Some(leg)).map_err(|u| unsupported(u, Some(leg)))?;
            }
            legs.iter().map(|&(leg, alg)| (Some(leg), alg)).collect()
        }
    };
    let step_n = u32::try_from(composer.step)
        .map_err(|_| BuildError::TooManySteps { collective: c.index(), steps: composer.step })?;
    let phases = composer.phases;
    let peers = PeerMap::new(c.peers().to_vec(), n);
    Ok(CollectivePlan {
        index: c.index(),
        op: c.op(),
        kind,
        dtype: c.dtype(),
        reduce: c.reduce(),
        count: c.count(),
        channels: c.channels(),
        groups,
        radices,
        root: c.root(),
        peers,
        counts: c.counts().map(<[Vec<u64>]>::to_vec),
        phases,
        step_n,
        legs,
    })
}

/// The (members per node, nodes per pod, pods) shape of each group, which
/// must agree. Validation has checked each group is node-aligned (and
/// pod-aligned where needed); a group that is not pod-aligned gets one pod.
fn uniform_radices(groups: &Groups, shape: &Shape, collective: u32, alg: AlgType) -> Result<Radices, BuildError> {
    if !groups.is_explicit() {
        return Ok(Radices([shape.local_rank_n, shape.nodes_per_pod, shape.pod_n]));
    }
    let n = groups.size();
    let mut first: Option<[u32; 3]> = None;
    for g in 0..groups.group_n() {
        let members: Vec<u32> = (0..n).map(|i| groups.member(g, i).0).collect();
        let found = group_radices(&members, shape);
        match first {
            None => first = Some(found),
            Some(expected) if expected != found => {
                return Err(BuildError::UnevenGroups { collective, group: g, found, expected, alg });
            }
            Some(_) => {}
        }
    }
    Ok(Radices(first.unwrap_or([n, 1, 1])))
}

/// Runs of equal keys: their common length, if every run has the same
/// length and no key comes back after its run ended.
fn run_length(keys: &[u32]) -> Option<u32> {
    let mut len: Option<u32> = None;
    let mut seen: Vec<u32> = Vec::new();
    let mut i = 0;
    while i < keys.len() {
        let key = keys[i];
        if seen.contains(&key) {
            return None;
        }
        seen.push(key);
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

fn group_radices(members: &[u32], shape: &Shape) -> [u32; 3] {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(group_radices(&members, &shape), [2, 4, 2]);
        // Interleaved nodes of one pod: no structure at all.
        assert_eq!(group_radices(&[0, 4, 1, 5], &shape), [4, 1, 1]);
        // Three members of one node and one of another, on each of two
        // pods: not node by node, but pod by pod.
        assert_eq!(group_radices(&[0, 1, 2, 4, 16, 17, 18, 20], &shape), [4, 1, 2]);
    }
}
