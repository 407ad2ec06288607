//! Per-leg `Auto` inside `Hier((...))` (issue 13): the model chooses the
//! legs written `Auto`, the others stay as written.
//!
//! - a spec with `Auto` legs parses, compiles and proves;
//! - its choice is whole `Auto`'s choice restricted to the Hier
//!   combinations with the written legs: same winner, same alternatives in
//!   the same order with the same floors and (predicted exhaustively) the
//!   same predictions (a property over shapes, sizes, ops and every way of
//!   fixing the other legs);
//! - the choice is deterministic and signed leg by leg
//!   (`leg=Auto(<choice>)`), the written legs as written;
//! - an `Auto` on a leg the op does not use, or beside a written leg that
//!   is not legal, is refused like a written Hier.

use crate::cost_auto::{assert_agrees, exhaustive};
use ccc_compiler::cost::auto::display;
use ccc_compiler::parse::parse;
use ccc_compiler::pipeline::{Options, compile};
use ccc_compiler::valid::{ResolvedAlgorithm, ValidProgram};
use ccc_compiler::validate::validate;
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::{Algorithm, Collective, DType, HierLegs, Leg, LegAlgorithm, Program, ReduceOp, Topology};

fn collective(op: OpType, bytes: u64, arch: Arch, rank_n: u32, local: u32) -> Collective {
    let count = (bytes / 4).max(1).div_ceil(u64::from(rank_n)) * u64::from(rank_n);
    let mut c = Collective::new(op, DType::F32, count, arch, Topology::new(rank_n, local)).channels(4);
    if op.is_reducing() {
        c = c.reduce(ReduceOp::Add);
    }
    c
}

fn valid(c: &Collective) -> ValidProgram {
    validate(&Program::from(c.clone())).unwrap_or_else(|e| panic!("{c:?}: {e}"))
}

/// The op's Hier legs, in run order.
fn legs_of(op: OpType) -> &'static [Leg] {
    match op {
        OpType::AllReduce => &[Leg::IntraReduceScatter, Leg::InterAllReduce, Leg::IntraAllGather],
        OpType::AllGather => &[Leg::InterAllGather, Leg::IntraAllGather],
        _ => &[Leg::IntraReduceScatter, Leg::InterReduceScatter],
    }
}

/// The seed's legal set of a leg (docs/interface.md), written out here.
fn seed(leg: Leg) -> &'static [AlgType] {
    match leg {
        Leg::IntraReduceScatter | Leg::IntraAllGather => &[AlgType::Ring, AlgType::Kangaring],
        Leg::InterAllReduce => &[AlgType::Ring, AlgType::InterRdh, AlgType::SingleCycleRing, AlgType::Mesh],
        _ => &[AlgType::Ring, AlgType::InterRdh, AlgType::Mesh],
    }
}

/// Every way to write `op`'s legs with at least one `Auto`: each leg
/// `Auto` or one of its seed choices.
fn leg_auto_specs(op: OpType) -> Vec<HierLegs> {
    let mut out = vec![HierLegs::default()];
    for &leg in legs_of(op) {
        let options: Vec<LegAlgorithm> =
            std::iter::once(LegAlgorithm::Auto).chain(seed(leg).iter().map(|&a| LegAlgorithm::Fixed(a))).collect();
        out = out.into_iter().flat_map(|h| options.iter().map(move |&o| h.clone().with(leg, o))).collect();
    }
    out.retain(|h| legs_of(op).iter().any(|&l| h.get(l) == Some(LegAlgorithm::Auto)));
    out
}

/// Does a resolved Hier keep every written (non-`Auto`) leg of `legs`?
fn keeps(resolved: &ResolvedAlgorithm, legs: &HierLegs) -> bool {
    let ResolvedAlgorithm::Hier(chosen) = resolved else { return false };
    chosen.iter().all(|&(leg, alg)| match legs.get(leg) {
        Some(LegAlgorithm::Fixed(written)) => written == alg,
        _ => true,
    })
}

#[test]
fn leg_auto_is_whole_auto_restricted_to_the_written_legs() {
    let mut checked = 0;
    for (arch, rank_n, local) in [(Arch::Cayman, 32, 16), (Arch::Sunda, 16, 4)] {
        for bytes in [8, 16 << 20] {
            for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter] {
                let c = collective(op, bytes, arch, rank_n, local);
                // Every alternative predicted (validation's choice predicts
                // only those that could win or come second).
                let whole = exhaustive(&valid(&Collective { algorithm: Algorithm::Auto, ..c.clone() }));
                for legs in leg_auto_specs(op) {
                    let v = valid(&Collective { algorithm: Algorithm::Hier(legs.clone()), ..c.clone() });
                    let vc = &v.collectives()[0];
                    let choice = vc.auto().unwrap();
                    let all = exhaustive(&v);
                    let what = format!("{legs:?} {arch} {rank_n}/{local} {bytes} B");
                    assert_agrees(choice, &all, &what);
                    let auto_legs: Vec<Leg> =
                        legs_of(op).iter().copied().filter(|&l| legs.get(l) == Some(LegAlgorithm::Auto)).collect();
                    assert_eq!(choice.auto_legs, auto_legs);
                    // The restriction of whole Auto's list, order kept.
                    let restricted: Vec<_> =
                        whole.alternatives.iter().filter(|a| keeps(&a.algorithm, &legs)).cloned().collect();
                    assert_eq!(all.alternatives, restricted, "{what}");
                    let best = restricted.iter().map(|a| a.predicted_ns.unwrap()).min().unwrap();
                    let first_best = restricted.iter().find(|a| a.predicted_ns == Some(best)).unwrap();
                    assert_eq!(vc.algorithm(), &first_best.algorithm, "{legs:?}");
                    assert!(keeps(vc.algorithm(), &legs), "a written leg moved: {}", display(vc.algorithm()));
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100, "{checked}");
}

const SPEC: &str = "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 4194304, arch: Cayman,
    topology: (rank_n: 32, local_rank_n: 16), channels: 4,
    algorithm: Hier((intra_reduce_scatter: Auto, inter_all_reduce: InterRdh, intra_all_gather: Auto)))";

#[test]
fn a_leg_auto_spec_compiles_proves_and_signs_each_leg() {
    let program = parse(SPEC).unwrap().program;
    let v = validate(&program).unwrap();
    let again = validate(&program).unwrap();
    assert_eq!(v.collectives()[0].auto(), again.collectives()[0].auto());
    let ResolvedAlgorithm::Hier(chosen) = v.collectives()[0].algorithm() else { panic!("not Hier") };
    assert_eq!(chosen[1], (Leg::InterAllReduce, AlgType::InterRdh));
    let compiled = compile(&v, &Options::default()).unwrap();
    assert!(compiled.proof.is_some(), "compile proves by default");
    let again = compile(&again, &Options::default()).unwrap();
    assert_eq!(compiled.signature.digest, again.signature.digest);
    let field = compiled.signature.fields.iter().find(|f| f.name == "collectives[0].algorithm").unwrap();
    let expected = format!(
        "Hier(intra_reduce_scatter=Auto({}), inter_all_reduce=InterRdh, intra_all_gather=Auto({}))",
        chosen[0].1.name(),
        chosen[2].1.name()
    );
    assert_eq!(field.value, expected);
    // Writing the chosen legs by hand builds the same bytes, signed as written.
    let written = SPEC
        .replacen("intra_reduce_scatter: Auto", &format!("intra_reduce_scatter: {}", chosen[0].1.name()), 1)
        .replacen("intra_all_gather: Auto", &format!("intra_all_gather: {}", chosen[2].1.name()), 1);
    let by_hand = compile(&validate(&parse(&written).unwrap().program).unwrap(), &Options::default()).unwrap();
    let schedule = |s: &ccc_compiler::sign::Signature| {
        s.fields.iter().find(|f| f.name == "collectives[0].schedule").map(|f| f.value.clone())
    };
    assert_eq!(schedule(&by_hand.signature), schedule(&compiled.signature));
    assert_ne!(by_hand.signature.digest, compiled.signature.digest);
}

#[test]
fn leg_auto_is_refused_where_a_written_leg_would_be() {
    // A leg the op does not use.
    let unused = SPEC.replace("intra_all_gather: Auto)", "intra_all_gather: Auto, inter_all_gather: Auto)");
    let e = validate(&parse(&unused).unwrap().program).unwrap_err().to_string();
    assert!(e.contains("inter_all_gather"), "{e}");
    // A written leg outside its legal set, beside Auto legs.
    let illegal = SPEC.replace("inter_all_reduce: InterRdh", "inter_all_reduce: Kangaring");
    let e = validate(&parse(&illegal).unwrap().program).unwrap_err().to_string();
    assert!(e.contains("inter_all_reduce") && e.contains("Kangaring"), "{e}");
    // A misspelt leg value names what is accepted.
    let misspelt = SPEC.replace("intra_all_gather: Auto", "intra_all_gather: Automatic");
    let e = parse(&misspelt).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("Auto"), "{e}");
}

/// `explain` shows the algorithm as written (`leg=Auto` for a leg left to
/// the model) and, separately, the choice it compiles to: the winner.
#[test]
fn explain_shows_the_written_legs_and_the_choice_apart() {
    let legs = HierLegs::new()
        .intra_reduce_scatter(LegAlgorithm::Auto)
        .inter_all_reduce(AlgType::InterRdh)
        .intra_all_gather(LegAlgorithm::Auto);
    let c = collective(OpType::AllReduce, 8 << 20, Arch::Cayman, 32, 16).algorithm(Algorithm::Hier(legs));
    let program = Program::from(c.clone());
    let explained = ccc_compiler::explain::explain(&program, &valid(&c));
    let e = &explained[0];
    assert_eq!(e.written, "Hier(intra_reduce_scatter=Auto, inter_all_reduce=InterRdh, intra_all_gather=Auto)");
    let winner = e.choices.iter().find(|ch| ch.winner).map(|ch| ch.algorithm.clone());
    assert_eq!(Some(&e.chosen), winner.as_ref());
    assert!(e.chosen.contains("inter_all_reduce=InterRdh") && !e.chosen.contains("Auto"), "{}", e.chosen);
    // A whole Auto is written `Auto`; a written algorithm as written.
    let auto = collective(OpType::AllReduce, 8 << 20, Arch::Cayman, 32, 16).algorithm(Algorithm::Auto);
    let e = &ccc_compiler::explain::explain(&Program::from(auto.clone()), &valid(&auto))[0];
    assert_eq!(e.written, "Auto");
    assert!(e.choices.iter().any(|ch| ch.winner && ch.algorithm == e.chosen));
    let ring = collective(OpType::AllReduce, 8 << 20, Arch::Cayman, 32, 16).algorithm(Algorithm::Ring);
    let e = &ccc_compiler::explain::explain(&Program::from(ring.clone()), &valid(&ring))[0];
    assert_eq!((e.written.as_str(), e.chosen.as_str()), ("Ring", "Ring"));
}
