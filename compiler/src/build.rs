//! build: a validated program into its [`Schedule`] — the phases of every
//! collective, composed from the algorithm choices (`docs/algorithms.md`).

use crate::algorithms::{Composer, Requirement, ScopeOp, Unsupported, group_shape, hier, requirement};
use crate::schedule::{CollectivePlan, OpKind, PeerMap, PlanLegs, Radices, Schedule, Scope};
use crate::valid::{Groups, ResolvedAlgorithm, Shape, ValidCollective, ValidProgram};
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::Leg;

/// Room made for a plan's phases up front, beside two per doubling of
/// the members ([`phases_reserved`]): as many as most plans have (a flat
/// ring or mesh has one or two, a hierarchical all-reduce of rings and
/// meshes at most six), so that composing them rarely grows the vector
/// (a plan's phases allocated once, not two or three times).
const PHASES_RESERVED: usize = 8;

/// The room [`Planner::plan`] makes for the phases of a plan over `n`
/// members: [`PHASES_RESERVED`], or two per doubling of the members and
/// two more (recursive halving and doubling's rounds, with a prologue and
/// an epilogue when `n` is not a power of two), whichever is more.
fn phases_reserved(n: u32) -> usize {
    let doublings = (u32::BITS - n.leading_zeros()) as usize;
    PHASES_RESERVED.max(2 * doublings + 2)
}

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
/// candidates so, without copying the collective). To plan several
/// algorithms of one collective, [`Planner`] shares what they have in
/// common.
pub(crate) fn plan_as(
    c: &ValidCollective,
    algorithm: &ResolvedAlgorithm,
    shape: &Shape,
) -> Result<CollectivePlan, BuildError> {
    Planner::new(c, shape).plan(algorithm)
}

/// Plans one collective under any number of algorithms, each plan exactly
/// what [`plan_as`] gives, doing once what they share: the op as the
/// algorithms compose it, the peer map, the groups' common node/pod shape
/// (found when a first algorithm needs it: for explicit groups it reads
/// every group). `Auto` plans a dozen candidates of one collective
/// (`cost::auto`).
pub(crate) struct Planner<'c> {
    c: &'c ValidCollective,
    shape: &'c Shape,
    kind: OpKind,
    op: ScopeOp,
    peers: PeerMap,
    /// The groups' common (members per node, nodes per pod, pods) shape,
    /// or the first group that differs, once an algorithm needed it.
    shaped: Option<Result<Radices, Uneven>>,
}

/// A group whose node/pod shape differs from group 0's (the fields of
/// [`BuildError::UnevenGroups`] that do not depend on the algorithm).
#[derive(Clone, Copy, Debug)]
struct Uneven {
    group: u32,
    found: [u32; 3],
    expected: [u32; 3],
}

impl<'c> Planner<'c> {
    /// The planner of `c` on a machine of `shape`.
    pub(crate) fn new(c: &'c ValidCollective, shape: &'c Shape) -> Self {
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
        let peers = PeerMap::new(c.peers().to_vec(), c.groups().size());
        Planner { c, shape, kind, op, peers, shaped: None }
    }

    /// The plan of the collective composed under `algorithm`: what
    /// [`plan_as`] gives.
    ///
    /// # Errors
    ///
    /// [`BuildError`] as [`build`] gives it for `algorithm`.
    pub(crate) fn plan(&mut self, algorithm: &ResolvedAlgorithm) -> Result<CollectivePlan, BuildError> {
        let c = self.c;
        let n = c.groups().size();
        let needs_shape = match algorithm {
            ResolvedAlgorithm::Flat(alg) => (requirement(*alg) != Requirement::None).then_some(*alg),
            ResolvedAlgorithm::Hier(_) => Some(AlgType::Hier),
        };
        let radices = match needs_shape {
            None => Radices([n, 1, 1]),
            Some(alg) => {
                let (groups, shape) = (c.groups(), self.shape);
                let shaped = *self.shaped.get_or_insert_with(|| uniform_radices(groups, shape));
                shaped.map_err(|Uneven { group, found, expected }| BuildError::UnevenGroups {
                    collective: c.index(),
                    group,
                    found,
                    expected,
                    alg,
                })?
            }
        };
        let mut composer = Composer { radices: &radices, phases: Vec::with_capacity(phases_reserved(n)), step: 0 };
        let unsupported =
            |u: Unsupported, leg| BuildError::Unsupported { collective: c.index(), alg: u.alg, op: c.op(), leg };
        let legs: PlanLegs = match algorithm {
            ResolvedAlgorithm::Flat(alg) => {
                composer.compose(self.op, *alg, Scope::WHOLE, &[], None).map_err(|u| unsupported(u, None))?;
                PlanLegs::from_slice(&[(None, *alg)])
            }
            ResolvedAlgorithm::Hier(legs) => {
                hier::compose(&mut composer, legs).map_err(|(u, leg)| unsupported(u, Some(leg)))?;
                legs.iter().map(|&(leg, alg)| (Some(leg), alg)).collect()
            }
        };
        let step_n = u32::try_from(composer.step)
            .map_err(|_| BuildError::TooManySteps { collective: c.index(), steps: composer.step })?;
        let phases = composer.phases;
        Ok(CollectivePlan {
            index: c.index(),
            op: c.op(),
            kind: self.kind,
            dtype: c.dtype(),
            reduce: c.reduce(),
            count: c.count(),
            channels: c.channels(),
            groups: c.groups().clone(),
            radices,
            root: c.root(),
            peers: self.peers.clone(),
            counts: c.counts.clone(),
            phases,
            step_n,
            legs,
            model: *c.model(),
            auto: c.auto().cloned(),
        })
    }
}

/// The (members per node, nodes per pod, pods) shape of each group, which
/// must agree. Validation has checked each group is node-aligned (and
/// pod-aligned where needed); a group that is not pod-aligned gets one pod.
fn uniform_radices(groups: &Groups, shape: &Shape) -> Result<Radices, Uneven> {
    let Some(explicit) = groups.as_explicit() else {
        return Ok(Radices([shape.local_rank_n, shape.nodes_per_pod, shape.pod_n]));
    };
    let n = groups.size();
    let mut first: Option<[u32; 3]> = None;
    for (group, members) in (0u32..).zip(explicit) {
        let found = group_shape(members, shape);
        match first {
            None => first = Some(found),
            Some(expected) if expected != found => return Err(Uneven { group, found, expected }),
            Some(_) => {}
        }
    }
    Ok(Radices(first.unwrap_or([n, 1, 1])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Case;
    use ccc_ir::spec::Leg;

    /// Every algorithm that serves an all-reduce, flat and hierarchical,
    /// with those that need no node shape between those that do (so a
    /// shape found for one is never taken by the next).
    fn all_reduce_algorithms() -> Vec<ResolvedAlgorithm> {
        let mut out = Vec::new();
        for &alg in AlgType::ALL.iter().filter(|&&a| a != AlgType::Hier) {
            if crate::algorithms::supports(alg, OpType::AllReduce) {
                out.push(ResolvedAlgorithm::Flat(alg));
                out.push(ResolvedAlgorithm::Flat(AlgType::Ring));
            }
        }
        for inter in [AlgType::Ring, AlgType::InterRdh, AlgType::Mesh] {
            let legs = [(Leg::IntraReduceScatter, AlgType::Kangaring), (Leg::InterAllReduce, inter)];
            out.push(ResolvedAlgorithm::Hier(
                crate::valid::LegAlgorithms::new(&[legs[0], legs[1], (Leg::IntraAllGather, AlgType::Ring)]).unwrap(),
            ));
            out.push(ResolvedAlgorithm::Flat(AlgType::Mesh));
        }
        out
    }

    /// One [`Planner`] planning every all-reduce algorithm in turn gives
    /// each exactly what [`plan_as`] gives it alone (plan or error, to the
    /// last field), over the world group, explicit groups of one node
    /// shape, and explicit groups of two shapes (where every algorithm
    /// that needs the shape fails, each naming itself).
    #[test]
    fn a_planner_plans_each_algorithm_as_plan_as_alone() {
        let algorithms = all_reduce_algorithms();
        let even = vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]];
        // Group 1 is not listed node by node: shape (4, 1, 1), not (2, 2, 1).
        let uneven = vec![vec![0, 1, 2, 3], vec![4, 6, 5, 7]];
        let (mut planned, mut failed) = (0, 0);
        for groups in [None, Some(even), Some(uneven)] {
            let case = Case { groups, ..Case::flat(OpType::AllReduce, AlgType::Ring, 8, 2) };
            let valid = case.valid();
            let (shape, c) = (valid.topology(), &valid.collectives()[0]);
            let mut planner = Planner::new(c, &shape);
            for algorithm in &algorithms {
                let shared = planner.plan(algorithm);
                let alone = plan_as(c, algorithm, &shape);
                assert_eq!(format!("{shared:?}"), format!("{alone:?}"), "{algorithm:?} over {:?}", case.groups);
                planned += u32::from(shared.is_ok());
                failed += u32::from(matches!(shared, Err(BuildError::UnevenGroups { .. })));
            }
        }
        assert!(planned > 20 && failed > 5, "{planned} planned, {failed} failed");
    }

    /// A plan shares its collective's explicit groups and AllToAllV sizes
    /// instead of copying them (`Auto` plans a dozen candidates).
    #[test]
    fn plans_share_the_groups_and_sizes() {
        let mut case = Case::flat(OpType::AllToAllV, AlgType::Ring, 8, 2);
        case.groups = Some(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        let valid = case.valid();
        let (shape, c) = (valid.topology(), &valid.collectives()[0]);
        let mut planner = Planner::new(c, &shape);
        for alg in [AlgType::Ring, AlgType::Mesh] {
            let plan = planner.plan(&ResolvedAlgorithm::Flat(alg)).unwrap();
            let (ours, theirs) = (plan.groups.as_explicit().unwrap(), c.groups().as_explicit().unwrap());
            assert_eq!(ours, theirs);
            assert!(std::ptr::eq(ours, theirs), "{alg}: the groups were copied");
            let (ours, theirs) = (plan.counts.as_ref().unwrap(), c.counts.as_ref().unwrap());
            assert!(std::sync::Arc::ptr_eq(ours, theirs), "{alg}: the sizes were copied");
        }
    }
}
