//! build: a validated program into its [`Schedule`] — the phases of every
//! collective, composed from the algorithm choices (`docs/algorithms.md`).

use crate::algorithms::{Composer, Requirement, ScopeOp, Unsupported, group_shape, hier, requirement};
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
    #[error(
        "collective {collective}: {alg} has no form for {op}{}",
        leg.map(|leg| format!(" (leg {leg})")).unwrap_or_default()
    )]
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
    plan_as(c, c.algorithm(), shape)
}

/// The plan of `c` composed under `algorithm` instead of its own: what
/// building `c` with that algorithm gives (`Auto` plans each of its
/// candidates so, without copying the collective).
pub(crate) fn plan_as(
    c: &ValidCollective,
    algorithm: &ResolvedAlgorithm,
    shape: &Shape,
) -> Result<CollectivePlan, BuildError> {
    let groups = c.groups().clone();
    let n = groups.size();
    let needs_shape = match algorithm {
        ResolvedAlgorithm::Flat(alg) => (requirement(*alg) != Requirement::None).then_some(*alg),
        ResolvedAlgorithm::Hier(_) => Some(AlgType::Hier),
    };
    let radices = match needs_shape {
        None => Radices([n, 1, 1]),
        Some(alg) => uniform_radices(&groups, shape, c.index(), alg)?,
    };
    let kind = OpKind::of(c.op());
    let op = match kind {
        OpKind::AllReduce => ScopeOp::AllReduce,
        OpKind::AllGather => ScopeOp::AllGather,
        OpKind::ReduceScatter => ScopeOp::ReduceScatter,
        OpKind::Broadcast => ScopeOp::Broadcast { root: c.root().unwrap_or(0) },
        OpKind::Reduce => ScopeOp::Reduce { root: c.root().unwrap_or(0) },
        OpKind::AllToAll => ScopeOp::AllToAll,
        OpKind::Permute { .. } => ScopeOp::PointToPoint,
    };
    let mut composer = Composer { radices: &radices, phases: Vec::new(), step: 0 };
    let unsupported =
        |u: Unsupported, leg| BuildError::Unsupported { collective: c.index(), alg: u.alg, op: c.op(), leg };
    let whole = Scope::WHOLE;
    let legs: Vec<(Option<Leg>, AlgType)> = match algorithm {
        ResolvedAlgorithm::Flat(alg) => {
            composer.compose(op, *alg, whole, &[], None).map_err(|u| unsupported(u, None))?;
            vec![(None, *alg)]
        }
        ResolvedAlgorithm::Hier(legs) => {
            hier::compose(&mut composer, legs).map_err(|(u, leg)| unsupported(u, Some(leg)))?;
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
        model: *c.model(),
        auto: c.auto().cloned(),
    })
}

/// The (members per node, nodes per pod, pods) shape of each group, which
/// must agree. Validation has checked each group is node-aligned (and
/// pod-aligned where needed); a group that is not pod-aligned gets one pod.
fn uniform_radices(groups: &Groups, shape: &Shape, collective: u32, alg: AlgType) -> Result<Radices, BuildError> {
    let Some(explicit) = groups.as_explicit() else {
        return Ok(Radices([shape.local_rank_n, shape.nodes_per_pod, shape.pod_n]));
    };
    let n = groups.size();
    let mut first: Option<[u32; 3]> = None;
    for (g, members) in (0u32..).zip(explicit) {
        let found = group_shape(members, shape);
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
