//! The pattern shortcut for network flows (`sends_off_from_pattern`)
//! against the generated transfers, member by member.

use super::*;
use crate::build::build;
use crate::validate::validate;
use ccc_ir::arch::Arch;
use ccc_ir::enums::OpType;
use ccc_ir::spec::{Algorithm, Collective, DType, HierLegs, Program, ReduceOp, Topology};

/// Every pattern's flows read from the pattern are what its generated
/// transfers say, for every member of every phase: every flat
/// algorithm, and Hier with ring, Kangaring, mesh, RDH and single-cycle
/// legs, over shapes and ops.
#[test]
fn a_patterns_sends_are_what_its_transfers_say() {
    let mut algorithms: Vec<Algorithm> = AlgType::ALL.iter().filter_map(|&a| Algorithm::flat(a)).collect();
    for (intra, inter) in [
        (AlgType::Ring, AlgType::Mesh),
        (AlgType::Kangaring, AlgType::SingleCycleRing),
        (AlgType::Kangaring, AlgType::InterRdh),
        (AlgType::Ring, AlgType::Ring),
    ] {
        let legs = HierLegs::new().intra_reduce_scatter(intra).intra_all_gather(intra);
        algorithms.push(Algorithm::Hier(legs.clone().inter_all_reduce(inter)));
        if inter != AlgType::SingleCycleRing {
            algorithms.push(Algorithm::Hier(HierLegs::new().inter_all_gather(inter).intra_all_gather(intra)));
            algorithms.push(Algorithm::Hier(HierLegs::new().intra_reduce_scatter(intra).inter_reduce_scatter(inter)));
        }
    }
    // Every op: the ones a pattern does not serve are refused and skipped.
    let ops = OpType::ALL;
    let shapes = [Topology::new(8, 8), Topology::new(16, 4), Topology::new(32, 8).pods(2), Topology::new(24, 8)];
    let (mut buf, mut checked) = (Vec::new(), 0);
    for topology in shapes {
        for &op in ops {
            for algorithm in &algorithms {
                let mut c = Collective::new(op, DType::Bf16, u64::from(topology.rank_n) * 64, Arch::Cayman, topology);
                c = c.algorithm(algorithm.clone());
                if op.is_reducing() {
                    c = c.reduce(ReduceOp::Add);
                }
                if matches!(op, OpType::Broadcast | OpType::Reduce) {
                    c = c.root(topology.rank_n - 3);
                }
                let Ok(valid) = validate(&Program::from(c)) else { continue };
                let Ok(schedule) = build(&valid) else { continue };
                let Some(plan) = schedule.collectives.first() else { continue };
                for phase in &plan.phases {
                    // One memo across the phase's members, as `node_flows` keeps it.
                    let mut spans = SpanMemo::default();
                    for m in 0..plan.groups.size() {
                        let Some(off) = sends_off_from_pattern(&schedule, plan, phase, m, &mut spans) else {
                            continue;
                        };
                        let walked = sends_off_walked(&schedule, plan, phase, m, &mut buf);
                        assert_eq!(off, walked, "{topology:?} {op:?} {algorithm:?} {:?} member {m}", phase.kind);
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}
