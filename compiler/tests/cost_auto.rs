//! The `Auto` chooser (`cost::auto::choose`: a floor under every
//! candidate, predictions in floor order until none left could win or come
//! second, each hierarchical leg choice costed once) against the
//! exhaustive one (`cost::auto::choose_exhaustive`: every candidate built
//! and predicted whole): over shapes, sizes, ops, architectures, explicit
//! groups, `model:` overrides and per-leg `Auto` (random specs:
//! `cost/tests.rs`), every
//! floor is at most its prediction, both make the same choice with the
//! same runner-up from the same alternatives, every prediction the chooser
//! made is the exhaustive one to the nanosecond, and every alternative it
//! did not predict has a floor that shows it could not place; the
//! manifest says which were not predicted and why.
use ccc_compiler::cost::AutoChoice;
use ccc_compiler::cost::auto::{Machine, check_against, choose_exhaustive, display};
use ccc_compiler::manifest::{ManifestCost, NOT_PREDICTED};
use ccc_compiler::valid::ValidProgram;
use ccc_compiler::validate::validate;
use ccc_ir::arch::Arch;
use ccc_ir::enums::OpType;
use ccc_ir::model::ModelOverrides;
use ccc_ir::spec::{Algorithm, Collective, DType, HierLegs, LegAlgorithm, Program, ReduceOp, Topology};

/// The ops `Auto` is checked over (also `cost_legal.rs`).
pub const OPS: [OpType; 6] =
    [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter, OpType::AllToAll, OpType::Broadcast, OpType::Reduce];

/// `op` over `bytes` (rounded to a count every group splits evenly) on
/// `arch` and `topology`, 4 channels, rooted mid-world (also `cost_legal.rs`).
pub fn collective(op: OpType, bytes: u64, arch: Arch, topology: Topology) -> Collective {
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

/// The exhaustive chooser's choice over the candidates validation listed
/// for collective 0 of `program`: every candidate predicted, with its floor.
pub fn exhaustive(program: &ValidProgram) -> AutoChoice {
    let vc = &program.collectives()[0];
    let fast = vc.auto().unwrap_or_else(|| panic!("no Auto choice"));
    let candidates = fast.alternatives.iter().map(|a| a.algorithm).collect();
    choose_exhaustive(vc, Machine::of(program), vc.model(), candidates, fast.auto_legs.clone()).unwrap()
}

/// `fast` (validation's choice) against `reference` (the exhaustive
/// one's, over the same candidates): [`check_against`]'s promises.
pub fn assert_agrees(fast: &AutoChoice, reference: &AutoChoice, what: &str) {
    if let Err(e) = check_against(fast, reference) {
        panic!("{what}: {e}");
    }
}

/// Validates `c` (whose algorithm leaves something to `Auto`) and checks
/// the choice validation made (the fast chooser's) against the exhaustive
/// chooser over the same candidates. Returns the alternatives compared
/// (0 when the spec is refused: some ops do not serve every shape).
fn same_choice(c: &Collective) -> usize {
    let Ok(program) = validate(&Program::from(c.clone())) else { return 0 };
    let fast = program.collectives()[0].auto().unwrap_or_else(|| panic!("{c:?}: no Auto choice"));
    assert_agrees(fast, &exhaustive(&program), &format!("{c:?}"));
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

/// The manifest records every alternative: a prediction where `Auto` made
/// one, and otherwise no prediction, the reason, and the floor, which is
/// at most the prediction `ccc explain` (the exhaustive chooser) gives.
#[test]
fn the_manifest_says_which_alternatives_were_not_predicted() {
    let c = collective(OpType::AllReduce, 8 << 20, Arch::Cayman, Topology::new(32, 16)).algorithm(Algorithm::Auto);
    let program = validate(&Program::from(c)).unwrap();
    let schedule = ccc_compiler::build::build(&program).unwrap();
    let cost = ManifestCost::of(&schedule, &schedule.collectives[0]);
    let auto = cost.auto.unwrap();
    let all = exhaustive(&program);
    assert_eq!(auto.chosen, display(&all.alternatives[all.chosen].algorithm));
    assert_eq!(auto.alternatives.len(), all.alternatives.len());
    let mut unpredicted = 0;
    for (m, r) in auto.alternatives.iter().zip(&all.alternatives) {
        assert_eq!(m.algorithm, display(&r.algorithm));
        assert!(m.floor_ns <= r.predicted_ns.unwrap(), "{}", m.algorithm);
        match m.predicted_ns {
            Some(p) => assert_eq!((Some(p), &m.not_predicted), (r.predicted_ns, &None)),
            None => {
                assert_eq!(m.not_predicted.as_deref(), Some(NOT_PREDICTED));
                let json = serde_json::to_value(m).unwrap();
                assert!(json.get("predicted_ns").is_none(), "{json}");
                unpredicted += 1;
            }
        }
    }
    // The case prunes (23 choices, a handful within reach of the winner).
    assert!(unpredicted >= 10, "{unpredicted}");
}
