//! `Auto` over a program that does not fit the CTRL SPAD when each
//! collective takes its cheapest choice (`cost::auto::fit`,
//! `docs/cost-model.md` §4): every collective's chain takes whole 64-byte
//! slots of each TOP_SP's CTRL SPAD, 64 of them, and 40 small all-reduces
//! on 32 ranks take more. Validation fits the choices together; the program
//! then compiles and is proven, every image within the CTRL SPAD; the
//! predicted total is the least within it; the manifest and `diagnose`
//! say what moved and why.
use super::cost_auto::collective;
use ccc_compiler::build::build;
use ccc_compiler::diagnose::{Input, diagnose};
use ccc_compiler::manifest::Manifest;
use ccc_compiler::pipeline::{Options, compile};
use ccc_compiler::sign::sign;
use ccc_compiler::validate::{Problem, validate};
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::{Algorithm, Collective, Program, Topology};
use ccc_ir::wire::ctrl_spad;

/// `n` all-reduces of 2 KiB and a little more each (so that `diagnose`
/// tells them apart) on two nodes of 16, each `Auto`: alone, each chooses
/// a mesh while a TOP_SP's mesh events last (one slot) and InterRdh after
/// (10 phases, two slots).
fn small_all_reduces(n: usize) -> Vec<Collective> {
    let c = |i| collective(OpType::AllReduce, 2048 + 64 * i, Arch::Cayman, Topology::new(32, 16));
    (0..n as u64).map(|i| c(i).algorithm(Algorithm::Auto)).collect()
}

/// The slots each collective of `program` takes on TOP_SP 0.
fn slots(program: &ccc_compiler::valid::ValidProgram) -> Vec<usize> {
    build(program).unwrap().collectives.iter().map(|p| ctrl_spad::slots(p.phases.len())).collect()
}

/// The sum of the collectives' predictions, as each records it.
fn predicted(program: &ccc_compiler::valid::ValidProgram) -> u64 {
    program.collectives().iter().map(|c| c.auto().unwrap().winner().unwrap().predicted_ns.unwrap()).sum()
}

#[test]
fn a_program_that_overflows_the_ctrl_spad_is_fitted_and_proven() {
    let program = Program { collectives: small_all_reduces(40) };
    let valid = validate(&program).unwrap();
    let capacity = Arch::Cayman.params().ctrl_spad_size as usize / ctrl_spad::SLOT_BYTES;
    // Each at its cheapest, they would not fit.
    let cheapest: usize = valid
        .collectives()
        .iter()
        .zip(slots(&valid))
        .map(|(c, s)| c.auto().unwrap().fitted.map_or(s, |f| f.cheapest_slots as usize))
        .sum();
    assert!(cheapest > capacity, "{cheapest} slots: the test needs a program that does not fit");
    let taken = slots(&valid);
    assert!(taken.iter().sum::<usize>() <= capacity, "{taken:?}");
    let moved: Vec<_> = valid.collectives().iter().filter_map(|c| c.auto().unwrap().fitted).collect();
    assert!(!moved.is_empty());
    for f in &moved {
        assert!(f.slots < f.cheapest_slots && f.capacity as usize == capacity, "{f:?}");
    }
    // Compiled and proven, every rank's every TOP_SP within the CTRL SPAD.
    let compiled = compile(&valid, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(compiled.proof.is_some());
    for rank in &compiled.images {
        for t in &rank.topsps {
            assert!(t.ctrl_spad.len() <= capacity * ctrl_spad::SLOT_BYTES);
        }
    }
    // The manifest says what moved each.
    let manifest = Manifest::of(&compiled);
    let fitted = manifest.collectives.iter().filter_map(|c| c.cost.auto.as_ref()?.fitted.as_ref()).count();
    assert_eq!(fitted, moved.len());
    // Deterministic.
    assert_eq!(sign(&valid, &compiled.schedule), sign(&validate(&program).unwrap(), &compiled.schedule));
}

/// No other assignment of the collectives' alternatives that fits (each
/// spending no more mesh events than its first choice) predicts less in
/// all: checked against moving any one collective to any other option
/// and any two in opposite directions (a full search would take
/// 19^40 programs).
#[test]
fn the_fitted_program_predicts_the_least_that_fits() {
    let program = Program { collectives: small_all_reduces(40) };
    let valid = validate(&program).unwrap();
    let total = predicted(&valid);
    let capacity = Arch::Cayman.params().ctrl_spad_size as usize / ctrl_spad::SLOT_BYTES;
    let taken = slots(&valid);
    let spare = capacity - taken.iter().sum::<usize>();
    // Whatever a collective could take instead, with its slots and time.
    let mut cheaper_with_more = Vec::new();
    let mut dearer_with_fewer = Vec::new();
    for (i, c) in valid.collectives().iter().enumerate() {
        let auto = c.auto().unwrap();
        let now = auto.winner().unwrap().predicted_ns.unwrap();
        for a in &auto.alternatives {
            let Some(p) = a.predicted_ns else { continue };
            let mut one = program.clone();
            one.collectives[i].algorithm = written(&a.algorithm);
            let Ok(alone) = validate(&one) else { continue };
            let s = slots(&alone)[i];
            if s > taken[i] && p < now {
                cheaper_with_more.push((i, s - taken[i], now - p));
            } else if s < taken[i] && p > now {
                dearer_with_fewer.push((i, taken[i] - s, p - now));
            }
        }
    }
    for &(i, more, saves) in &cheaper_with_more {
        assert!(more > spare, "collective {i} could take {more} more slots of {spare} spare and save {saves} ns");
        for &(j, fewer, costs) in &dearer_with_fewer {
            if i != j && fewer + spare >= more {
                assert!(costs >= saves, "moving {i} up and {j} down saves {} ns of {total}", saves - costs);
            }
        }
    }
    assert!(!cheaper_with_more.is_empty(), "the program was not squeezed");
}

/// The written form of a resolved algorithm.
fn written(r: &ccc_compiler::valid::ResolvedAlgorithm) -> Algorithm {
    match r {
        ccc_compiler::valid::ResolvedAlgorithm::Flat(a) => Algorithm::flat(*a).unwrap(),
        ccc_compiler::valid::ResolvedAlgorithm::Hier(legs) => {
            Algorithm::Hier(legs.iter().fold(ccc_ir::spec::HierLegs::new(), |h, &(leg, a)| h.with(leg, a)))
        }
    }
}

/// Two ranks whose programs differ only in the last collective, left to
/// `Auto` on one (fitted into one slot) and written `InterRdh` (two
/// slots) on the other: the slot it takes moves an earlier collective,
/// and `diagnose` names the CTRL SPAD and the last collective as the
/// input that differs, though nothing before it does.
#[test]
fn diagnose_says_a_later_collective_moved_a_fitted_choice() {
    let signed = |name: &str, last: Algorithm| {
        let mut collectives = small_all_reduces(40);
        collectives[39] = collectives[39].clone().algorithm(last);
        let valid = validate(&Program { collectives }).unwrap();
        let schedule = build(&valid).unwrap();
        Input::new(name, sign(&valid, &schedule).fields)
    };
    let report = diagnose(&[signed("a", Algorithm::Auto), signed("b", Algorithm::flat(AlgType::InterRdh).unwrap())]);
    let collectives = &report.differences[0].collectives;
    let earlier = collectives.iter().find(|d| d.majority_index < 39).unwrap_or_else(|| panic!("{report:?}"));
    let field = earlier.fields.iter().find(|f| f.field == "algorithm").unwrap_or_else(|| panic!("{earlier:?}"));
    let note = field.note.as_deref().unwrap_or_default();
    assert!(
        note.contains("the inputs to the choice differ: the CTRL SPAD slots the program's collectives share (collective 39 differs"),
        "{note}"
    );
    assert!(!note.contains("mesh events"), "{note}");
}

/// A program that cannot fit is refused by validation, before anything
/// is built or lowered, naming the slots and the collectives that take
/// the most: written (40 InterRdh all-reduces, 10 phases and 2 slots
/// each), and left to `Auto` (70 collectives: at least one slot each).
#[test]
fn a_program_that_cannot_fit_is_refused_by_validation() {
    let rdh = Algorithm::flat(AlgType::InterRdh).unwrap();
    let collectives: Vec<Collective> = small_all_reduces(40).into_iter().map(|c| c.algorithm(rdh.clone())).collect();
    let errors = validate(&Program { collectives }).map(drop).unwrap_err();
    let [e] = &errors.0[..] else { panic!("{errors}") };
    assert_eq!((e.collective, e.field.as_str()), (None, "collectives"));
    let Problem::CtrlSpadFull { needed: 80, capacity: 64, fewest: None, heaviest } = &e.problem else { panic!("{e}") };
    assert_eq!(heaviest.len(), 5);
    assert_eq!(heaviest[0], "collective 0 (InterRdh, 10 phases): 2 slots");
    let text = e.to_string();
    assert!(text.contains("split the program into programs that fit"), "{text}");

    let errors = validate(&Program { collectives: small_all_reduces(70) }).map(drop).unwrap_err();
    let [e] = &errors.0[..] else { panic!("{errors}") };
    let Problem::CtrlSpadFull { needed, fewest: Some(70), .. } = &e.problem else { panic!("{e}") };
    assert!(*needed > 70, "{e}");
    assert!(e.to_string().contains("and 70 with the fewest slots its `Auto` collectives can take"), "{e}");
}
