//! The fast `Auto` chooser (`cost::auto::choose`, which costs each
//! hierarchical leg choice once and counts a mesh phase's network flows
//! from its pattern) against the exhaustive one it replaced
//! (`cost::auto::choose_exhaustive`: every candidate built and predicted
//! whole): over shapes, sizes, ops, architectures, explicit groups,
//! `model:` overrides and per-leg `Auto`, both make the same choice from
//! the same alternatives with the same predictions and bounds, to the
//! nanosecond.

use ccc_compiler::cost::auto::{Machine, choose_exhaustive};
use ccc_compiler::validate::validate;
use ccc_ir::arch::Arch;
use ccc_ir::enums::OpType;
use ccc_ir::model::ModelOverrides;
use ccc_ir::spec::{Algorithm, Collective, DType, HierLegs, LegAlgorithm, Program, ReduceOp, Topology};

const OPS: [OpType; 6] =
    [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter, OpType::AllToAll, OpType::Broadcast, OpType::Reduce];

fn collective(op: OpType, bytes: u64, arch: Arch, topology: Topology) -> Collective {
    let rank_n = topology.rank_n;
    let count = (bytes / 2).max(1).div_ceil(u64::from(rank_n)) * u64::from(rank_n);
    let mut c = Collective::new(op, DType::Bf16, count, arch, topology).channels(4);
    if op.is_reducing() {
        c = c.reduce(ReduceOp::Add);
    }
    if matches!(op, OpType::Broadcast | OpType::Reduce) {
        c = c.root(rank_n / 2 + 1);
    }
    c
}

/// Validates `c` (whose algorithm leaves something to `Auto`) and checks
/// the choice validation made (the fast chooser's) against the exhaustive
/// chooser over the same candidates. Returns the alternatives compared
/// (0 when the spec is refused: some ops do not serve every shape).
fn same_choice(c: &Collective) -> usize {
    let Ok(program) = validate(&Program::from(c.clone())) else { return 0 };
    let vc = &program.collectives()[0];
    let fast = vc.auto().unwrap_or_else(|| panic!("{c:?}: no Auto choice"));
    let candidates = fast.alternatives.iter().map(|a| a.algorithm.clone()).collect();
    let reference = choose_exhaustive(vc, Machine::of(&program), vc.model(), candidates, fast.auto_legs.clone());
    assert_eq!(Some(fast), reference.as_ref(), "{c:?}");
    fast.alternatives.len()
}

#[test]
fn the_fast_chooser_chooses_what_the_exhaustive_one_does() {
    let shapes = [
        Topology::new(8, 8),
        Topology::new(32, 32),
        Topology::new(32, 16),
        Topology::new(16, 4),
        Topology::new(64, 32),
        Topology::new(48, 8),
        Topology::new(64, 8).pods(2),
        Topology::new(256, 64),
    ];
    let archs = [Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::MarianaPlus];
    let (mut cases, mut alternatives) = (0, 0);
    for (s, &topology) in shapes.iter().enumerate() {
        for (o, &op) in OPS.iter().enumerate() {
            for (b, bytes) in [8u64, 1 << 10, 64 << 10, 1 << 20, 16 << 20, 1 << 30].into_iter().enumerate() {
                // Every architecture over the sizes, not every triple.
                let arch = archs[(s + o + b) % archs.len()];
                let n = same_choice(&collective(op, bytes, arch, topology).algorithm(Algorithm::Auto));
                cases += usize::from(n > 0);
                alternatives += n;
            }
        }
    }
    assert!(cases >= 200 && alternatives >= 2000, "{cases} cases, {alternatives} alternatives");
}

#[test]
fn per_leg_auto_groups_and_overrides_choose_alike_too() {
    let base = |op, bytes| collective(op, bytes, Arch::Cayman, Topology::new(32, 8));
    let mut cases = 0;
    for bytes in [8u64, 256 << 10, 64 << 20] {
        // Per-leg Auto: one leg written, the others left to the model.
        let legs = HierLegs::new().inter_all_reduce(LegAlgorithm::Auto).intra_reduce_scatter(LegAlgorithm::Auto);
        let legs = legs.with(ccc_ir::spec::Leg::IntraAllGather, ccc_ir::enums::AlgType::Kangaring);
        cases += usize::from(same_choice(&base(OpType::AllReduce, bytes).algorithm(Algorithm::Hier(legs))) > 0);
        // Explicit groups: two groups of 16, two nodes each.
        let groups: Vec<Vec<u32>> = vec![(0..16).collect(), (16..32).collect()];
        for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter] {
            let c = base(op, bytes).groups(groups.clone()).algorithm(Algorithm::Auto);
            cases += usize::from(same_choice(&c) > 0);
        }
        // Overrides that move the choice: a cheap network, a slow fan-in.
        for model in [
            ModelOverrides { alpha_inter_ns: Some(2_000), node_inter_mbps: Some(1_000_000), ..Default::default() },
            ModelOverrides { fanin_ns: Some(5_000), alpha_intra_ns: Some(10), ..Default::default() },
        ] {
            let c = base(OpType::AllReduce, bytes).model(model).algorithm(Algorithm::Auto);
            cases += usize::from(same_choice(&c) > 0);
        }
    }
    assert_eq!(cases, 3 * 6);
}
