//! Lowering by records against the step-by-step reference: the same
//! program, or the same error, for every rank (or many sampled ranks of a
//! big world) of random specs the validator accepts.

use super::{LowerError, RankProgram, lower, lower_by_steps};
use crate::algorithms::{flat_ops, hier_legs, leg_choices_in};
use crate::build::build;
use crate::validate::validate;
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::id::Rank;
use ccc_ir::spec::{Algorithm, Collective, DType, HierLegs, LegChoices, Program, ReduceOp, Topology};

/// One random spec, drawn as small numbers that [`Draw::spec`] maps onto
/// what the validator can accept (most draws are accepted).
#[derive(Clone, Debug)]
pub(crate) struct Draw {
    op: usize,
    /// Flat algorithm among the op's, or Auto past them.
    alg: usize,
    /// Hier (for an op with legs), each leg's choice among its legal set.
    hier: Option<[usize; 5]>,
    wide: bool,
    local_rank_n: u32,
    node_n: u32,
    pod_n: u32,
    channels: u32,
    count: u64,
    dtype: usize,
    arch: usize,
    root: u32,
    peer: u32,
    /// 0: the world; 1: two groups, halves; 2: two groups, even and odd ranks.
    groups: u8,
}

impl Draw {
    pub(crate) fn spec(&self) -> Collective {
        // The ring-family ops (the patterns with closed forms) drawn more often.
        let ops: Vec<OpType> = OpType::ALL
            .iter()
            .flat_map(|&o| {
                let weight = match o {
                    OpType::AllReduce => 4,
                    OpType::AllGather | OpType::ReduceScatter | OpType::Broadcast | OpType::Reduce => 2,
                    _ => 1,
                };
                std::iter::repeat_n(o, weight)
            })
            .collect();
        let op = ops[self.op % ops.len()];
        let rank_n = self.local_rank_n * self.node_n;
        let two_groups = self.groups != 0 && rank_n.is_multiple_of(2);
        let n = if two_groups { rank_n / 2 } else { rank_n };
        // An AllToAllV spec holds n² counts: big worlds run AllToAll instead.
        let op = if op == OpType::AllToAllV && n > 256 { OpType::AllToAll } else { op };
        let algorithm = match (self.hier, hier_legs(op)) {
            (Some(picks), Some(legs)) => {
                let set = if self.wide { LegChoices::Wide } else { LegChoices::Seed };
                let mut hier = HierLegs { choices: set, ..HierLegs::default() };
                for (&leg, pick) in legs.iter().zip(picks) {
                    let choices = leg_choices_in(leg, set);
                    hier = hier.with(leg, choices[pick % choices.len()]);
                }
                Algorithm::Hier(hier)
            }
            _ => {
                // Half the draws from the ring family, half from every algorithm or Auto.
                let ring = [AlgType::Ring, AlgType::Kangaring, AlgType::SingleCycleRing];
                let algs: Vec<AlgType> = AlgType::ALL
                    .iter()
                    .copied()
                    .filter(|&a| a != AlgType::Hier && flat_ops(a).contains(&op))
                    .filter(|a| self.alg % 2 == 1 || ring.contains(a))
                    .collect();
                let pick = self.alg / 2 % (algs.len() + usize::from(self.alg % 2 == 1));
                algs.get(pick).and_then(|&a| Algorithm::flat(a)).unwrap_or(Algorithm::Auto)
            }
        };
        let groups = two_groups.then(|| match self.groups {
            1 => vec![(0..n).collect(), (n..rank_n).collect()],
            _ => vec![(0..n).map(|i| 2 * i).collect(), (0..n).map(|i| 2 * i + 1).collect()],
        });
        // AllToAllV: rows that are rotations of one row, so that each sums
        // to count; AllToAll and ReduceScatter: a count that n divides.
        let row: Vec<u64> = (0..u64::from(n)).map(|j| (j * 7 + self.count) % 13).collect();
        let counts = (op == OpType::AllToAllV).then(|| {
            let n = row.len();
            (0..n).map(|i| (0..n).map(|j| row[(i + j) % n]).collect()).collect()
        });
        let count = match op {
            OpType::AllToAllV => row.iter().sum(),
            OpType::AllToAll | OpType::ReduceScatter => self.count - self.count % u64::from(n),
            _ => self.count,
        };
        Collective {
            op,
            dtype: DType::ALL[self.dtype % DType::ALL.len()],
            reduce: op.is_reducing().then_some(ReduceOp::Add),
            count,
            arch: Arch::ALL[self.arch % Arch::ALL.len()],
            topology: Topology { rank_n, local_rank_n: self.local_rank_n, pod_n: self.pod_n },
            channels: self.channels,
            algorithm,
            root: op.is_rooted().then_some(self.root % n),
            peer: (op.takes_peers() && n >= 2).then(|| 1 + self.peer % (n - 1)),
            peers: None,
            counts,
            groups,
            barrier: None,
            send_credits: None,
            model: None,
        }
    }
}

/// Lowers every rank in `ranks` both ways and compares; `false` when the
/// validator or the build refused the spec (nothing to compare).
fn same_both_ways(spec: &Collective, ranks: impl Fn(u32) -> Vec<u32>) -> bool {
    let Ok(valid) = validate(&Program::from(spec.clone())) else { return false };
    let Ok(schedule) = build(&valid) else { return false };
    for r in ranks(schedule.shape.rank_n) {
        let by_records = lower(&schedule, Rank(r));
        let by_steps = lower_by_steps(&schedule, Rank(r));
        if by_records != by_steps {
            panic!("rank {r} of {spec:?}:\n{}", first_difference(&by_records, &by_steps));
        }
    }
    true
}

/// Where two lowerings of a rank first differ, shortly: the first record
/// whose runs differ, or both results whole.
fn first_difference(
    by_records: &Result<RankProgram, LowerError>,
    by_steps: &Result<RankProgram, LowerError>,
) -> String {
    if let (Ok(a), Ok(b)) = (by_records, by_steps) {
        for (ta, tb) in a.topsps.iter().zip(&b.topsps) {
            for (ra, rb) in ta.records().zip(tb.records()) {
                if ra != rb {
                    return format!("{}, phase {}: by records {:?}\nby steps {:?}", ta.topsp, ra.phase, ra.tp, rb.tp);
                }
            }
        }
    }
    format!("by records {by_records:?}\nby steps {by_steps:?}")
}

/// Counts that divide, that do not, and that leave blocks empty.
fn any_count() -> impl proptest::strategy::Strategy<Value = u64> {
    use proptest::prelude::*;
    prop_oneof![0u64..80, 80u64..5000, (0u64..4096).prop_map(|d| 16_777_216 - 2048 + d), 1u64 << 20..1u64 << 34]
}

pub(crate) fn any_draw(
    node_n: std::ops::Range<u32>,
    local_rank_n: std::ops::Range<u32>,
) -> impl proptest::strategy::Strategy<Value = Draw> {
    use proptest::prelude::*;
    (
        (0usize..64, 0usize..64, proptest::option::of(proptest::array::uniform5(0usize..8)), any::<bool>()),
        (local_rank_n, node_n, 1u32..3, 1u32..33, any_count()),
        (0usize..16, 0usize..4, any::<u32>(), any::<u32>(), 0u8..3),
    )
        .prop_map(|((op, alg, hier, wide), (local_rank_n, node_n, pod_n, channels, count), rest)| {
            let (dtype, arch, root, peer, groups) = rest;
            Draw { op, alg, hier, wide, local_rank_n, node_n, pod_n, channels, count, dtype, arch, root, peer, groups }
        })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 1024, ..Default::default() })]

    /// Small worlds, every rank: every op and algorithm, rank counts that
    /// are not powers of two, 1..=32 channels, uneven and tiny counts,
    /// roots, Hier legs (the wide set too), replica groups, every arch.
    #[test]
    fn records_lower_as_steps_do(draw in any_draw(1..9, 1..9)) {
        same_both_ways(&draw.spec(), |n| (0..n).collect());
    }

}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 128, ..Default::default() })]

    /// Big worlds (up to 2,560 ranks), sampled ranks: the first, the last,
    /// and a spread between.
    #[test]
    fn records_lower_as_steps_do_in_big_worlds(draw in any_draw(8..81, 1..33), seed in 0u32..1000) {
        same_both_ways(&draw.spec(), |n| {
            let mut ranks: Vec<u32> = (0..12u32).map(|i| (seed + i * 7919) % n).collect();
            ranks.extend([0, n - 1]);
            ranks
        });
    }
}

/// Every op with every flat algorithm that serves it, and every Hier
/// composition, on a few fixed shapes with uneven blocks: the grid the
/// random specs may miss, each spec the validator accepts compared on
/// every rank; and the grid must be mostly accepted to mean anything.
#[test]
fn every_pairing_lowers_as_steps_do() {
    let mut accepted = 0;
    let mut tried = 0;
    for op in 0..OpType::ALL.len() {
        for alg in 0..AlgType::ALL.len() {
            for hier in [None, Some([0, 1, 2, 3, 4]), Some([1, 0, 1, 0, 1]), Some([3, 2, 1, 1, 1])] {
                for (local_rank_n, node_n, pod_n, count, channels) in
                    [(4, 3, 1, 4099, 5), (2, 4, 2, 37, 3), (3, 5, 1, 1_000_003, 32), (8, 2, 2, 9, 1)]
                {
                    let draw = Draw {
                        op,
                        alg,
                        hier,
                        wide: true,
                        local_rank_n,
                        node_n,
                        pod_n,
                        channels,
                        count,
                        dtype: 1,
                        arch: 1,
                        root: 5,
                        peer: 2,
                        groups: 0,
                    };
                    tried += 1;
                    accepted += u32::from(same_both_ways(&draw.spec(), |n| (0..n).collect()));
                }
            }
        }
    }
    assert!(accepted * 3 > tried, "{accepted} of {tried} accepted");
}

/// One rank of a 65,536-rank flat ring: the program of a ring phase of
/// 65,535 steps is the step walk's, its records a handful of runs.
#[test]
fn a_big_ring_folds_to_a_few_runs() {
    let draw = Draw {
        op: OpType::ALL.iter().position(|&o| o == OpType::AllReduce).unwrap_or(0),
        alg: 0,
        hier: None,
        wide: false,
        local_rank_n: 32,
        node_n: 2048,
        pod_n: 1,
        channels: 3,
        count: 16_777_216 + 12_345,
        dtype: 1,
        arch: 1,
        root: 0,
        peer: 0,
        groups: 0,
    };
    let spec = draw.spec();
    assert_eq!(spec.algorithm, Algorithm::Ring);
    let valid = validate(&Program::from(spec)).unwrap();
    let schedule = build(&valid).unwrap();
    for r in [0, 12_345, 65_535] {
        let program = lower(&schedule, Rank(r)).unwrap();
        assert_eq!(program, lower_by_steps(&schedule, Rank(r)).unwrap(), "rank {r}");
        let runs = program.topsps.iter().flat_map(|t| t.records()).map(|rec| rec.tp.len()).max();
        assert!(runs.is_some_and(|n| n <= 6), "rank {r}: {runs:?}");
    }
}

/// A MESH record's sub-type, named from its scope's first and last rank
/// when the groups are the world in rank order, is what listing every rank
/// of the scope gives (the way lowering named it before): for meshes
/// within a node, across nodes, and across pods, and for permutes whose
/// scope is the whole world.
#[test]
fn mesh_sub_types_from_the_scope_ends_are_the_full_scan_s() {
    use crate::schedule::mesh_type;
    use crate::testing::Case;
    let mut cases = Vec::new();
    for (op, alg, rank_n, local, pods) in [
        (OpType::AllGather, AlgType::Mesh, 16, 16, 1),
        (OpType::AllGather, AlgType::Mesh, 32, 8, 1),
        (OpType::AllReduce, AlgType::LatencyOptMesh, 32, 8, 1),
        (OpType::AllReduce, AlgType::TwoStepPodMesh, 32, 8, 2),
        (OpType::Permute, AlgType::Mesh, 64, 16, 1),
        (OpType::Permute, AlgType::Mesh, 64, 8, 2),
        (OpType::Recv, AlgType::Mesh, 48, 16, 3),
    ] {
        let mut case = Case::flat(op, alg, rank_n, local);
        case.pod_n = pods;
        if op.takes_peers() {
            case.peers = (0..rank_n).map(|r| ((r + 1) % rank_n, r)).collect();
        }
        cases.push(case);
    }
    let (mut checked, mut seen) = (0, std::collections::BTreeSet::new());
    for case in cases {
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        for rank in 0..case.rank_n {
            let program = lower(&schedule, Rank(rank)).unwrap();
            for record in program.topsps.iter().flat_map(|tp| tp.records()) {
                if record.op.algo_type != ccc_ir::enums::DevicePattern::Mesh.raw() {
                    continue;
                }
                let phase = &plan.phases[record.phase as usize];
                let scope = plan.instance(phase, rank).scope;
                let every = (0..scope.k).map(|q| plan.rank(0, scope.member(q)).unwrap());
                let full = mesh_type(schedule.arch, &schedule.shape, every).raw();
                assert_eq!(record.op.algo_sub_type, full, "{case:?} rank {rank} phase {}", record.phase);
                checked += 1;
                seen.insert(full);
            }
        }
    }
    assert!(checked > 500, "{checked}");
    assert!(seen.len() >= 3, "within a node, across nodes and across pods: {seen:?}");
}

/// With explicit groups, a MESH record's sub-type that one `Lowerer`
/// keeps per group (found for its first rank whose scope is the group)
/// is the one a scan of the rank's own scope finds, for every rank: over
/// one group that is the world reversed (across pods), groups of two
/// nodes (of one pod for two of them, of two pods for the others) and
/// groups of one node, each listed backwards.
#[test]
fn kept_group_mesh_types_are_the_full_scan_s() {
    use crate::schedule::mesh_type;
    use crate::testing::Case;
    let backwards = |from: u32, len: u32| (from..from + len).rev().collect::<Vec<u32>>();
    let (mut checked, mut seen) = (0, std::collections::BTreeSet::new());
    for size in [64, 16, 8] {
        let mut case = Case::flat(OpType::Permute, AlgType::Mesh, 64, 8);
        case.pod_n = 2;
        case.groups = Some(if size == 16 {
            // Nodes of 8, 4 to a pod: pairs (0, 1) and (6, 7) within a
            // pod, (2, 5) and (3, 4) across the two.
            [(0, 1), (2, 5), (3, 4), (6, 7)]
                .iter()
                .map(|&(a, b)| [backwards(b * 8, 8), backwards(a * 8, 8)].concat())
                .collect()
        } else {
            (0..64 / size).map(|g| backwards(g * size, size)).collect()
        });
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        let lowerer = crate::lower::Lowerer::new(&schedule);
        for rank in 0..case.rank_n {
            let program = lowerer.lower(Rank(rank)).unwrap();
            let at = plan.groups.locate(Rank(rank)).unwrap();
            for record in program.topsps.iter().flat_map(|tp| tp.records()) {
                assert_eq!(record.op.algo_type, ccc_ir::enums::DevicePattern::Mesh.raw(), "{case:?}");
                let scope = plan.instance(&plan.phases[record.phase as usize], at.index()).scope;
                assert_eq!(scope.k, size, "{case:?}: the scope is the group");
                let every = (0..scope.k).map(|q| plan.rank(at.group(), scope.member(q)).unwrap());
                let full = mesh_type(schedule.arch, &schedule.shape, every).raw();
                assert_eq!(record.op.algo_sub_type, full, "{case:?} rank {rank}");
                checked += 1;
                seen.insert(full);
            }
        }
    }
    assert!(checked >= 3 * 64, "{checked}");
    assert_eq!(seen.len(), 3, "across pods, across nodes, within a node: {seen:?}");
}
