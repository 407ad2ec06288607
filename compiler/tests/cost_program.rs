//! `Auto` over a program of collectives (`validate`'s `ProgramAuto`,
//! `docs/cost-model.md` §4): a TOP_SP's mesh events add up over every
//! collective it hosts, so each `Auto` collective is held to what the
//! collectives before it leave. A program whose collectives each fit
//! alone lowers whole; every choice is the one made alone with the events
//! before it spent (so reusing a choice for an equal collective is
//! sound); and when nothing is left, validation says what the earlier
//! collectives took.
use super::cost_auto::collective;
use super::cost_legal::built;
use ccc_compiler::build::build;
use ccc_compiler::cost::auto::legal::events_needed;
use ccc_compiler::cost::auto::{Machine, choose};
use ccc_compiler::pipeline::lower_ranks;
use ccc_compiler::valid::ResolvedAlgorithm;
use ccc_compiler::validate::{Problem, validate};
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::id::Rank;
use ccc_ir::spec::{Algorithm, Collective, HierLegs, LegAlgorithm, Program, Topology};

/// A training step's gradient all-reduces: 32 layers whose tensors come
/// in 8 sizes, each recurring every 8 layers (the bench's program). Alone,
/// the smallest chooses a mesh that takes 32 of Cayman's 108 events per
/// TOP_SP; four of them do not fit.
fn training_step() -> Vec<Collective> {
    let topology = Topology::new(32, 16);
    (0..32u64).map(|layer| collective(OpType::AllReduce, (128 << 10) << (layer % 8), Arch::Cayman, topology)).collect()
}

/// Small collectives of every kind on Sunda (50 events per TOP_SP), two
/// nodes of 32, over 1, 4 and 8 channels (so over different TOP_SPs).
fn mixed_small() -> Vec<Collective> {
    let topology = Topology::new(64, 32);
    let ops = [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter, OpType::AllToAll];
    (0..12u32)
        .map(|i| {
            let op = ops[i as usize % ops.len()];
            collective(op, 4096, Arch::Sunda, topology).channels([1, 4, 8][i as usize % 3])
        })
        .collect()
}

fn auto(collectives: Vec<Collective>) -> Program {
    Program { collectives: collectives.into_iter().map(|c| c.algorithm(Algorithm::Auto)).collect() }
}

/// The most mesh events any member of `c`'s groups needs under
/// `algorithm`, counted member by member on its schedule built alone.
fn events_of(c: &Collective, algorithm: &ResolvedAlgorithm) -> u32 {
    let (_, schedule) = built(c, algorithm);
    let plan = &schedule.collectives[0];
    let phases: Vec<_> = plan.phases.iter().map(|p| (plan, p)).collect();
    events_needed(&schedule.shape, &phases)
}

/// Every program here chose meshes for more events than a TOP_SP has in
/// all when each collective was judged alone (the training step failed to
/// lower at its 25th all-reduce); held to what the earlier ones leave,
/// every rank lowers.
#[test]
fn a_program_of_auto_collectives_lowers() {
    for (name, program) in [("training step", auto(training_step())), ("mixed", auto(mixed_small()))] {
        let valid = validate(&program).unwrap_or_else(|e| panic!("{name}: {e}"));
        let schedule = build(&valid).unwrap();
        let ranks: Vec<Rank> = (0..schedule.shape.rank_n).map(Rank).collect();
        lower_ranks(&schedule, &ranks).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Judged alone, the collectives need more than the arch has: the
        // program would not lower without the rule.
        let max = u32::from(valid.arch().params().mesh_event_max);
        let alone: u32 = program
            .collectives
            .iter()
            .map(|c| events_of(c, validate(&Program::from(c.clone())).unwrap().collectives()[0].algorithm()))
            .sum();
        assert!(alone > max, "{name}: alone the collectives need {alone}, at most {max}");
    }
}

/// Each collective's choice (its alternatives, floors, predictions and
/// winner) is the one `choose` makes for it alone with the events the
/// collectives before it spent, counted here member by member: the
/// program's answers, some reused for equal collectives, are the ones a
/// fresh search gives.
#[test]
fn each_choice_is_made_with_the_events_before_it_spent() {
    for (name, program) in [("training step", auto(training_step())), ("mixed", auto(mixed_small()))] {
        let valid = validate(&program).unwrap();
        let mut machine = Machine::of(&valid);
        let mut rooms = Vec::new();
        for (i, (c, vc)) in program.collectives.iter().zip(valid.collectives()).enumerate() {
            // The candidates held with every event free: a superset of
            // those held with fewer, in the same order.
            let alone = validate(&Program::from(c.clone())).unwrap();
            let fresh_vc = &alone.collectives()[0];
            let candidates: Vec<ResolvedAlgorithm> =
                fresh_vc.auto().unwrap().alternatives.iter().map(|a| a.algorithm).collect();
            let fresh = choose(fresh_vc, machine, fresh_vc.model(), candidates, Vec::new()).unwrap();
            assert_eq!(vc.auto(), Some(&fresh), "{name}: collective {i}");
            rooms.push(machine.mesh_event_room());
            machine.mesh_events_spent += events_of(c, vc.algorithm());
        }
        // The events left fell as the program went on, so answers were
        // made (or reused) with different rooms.
        assert!(rooms.first() > rooms.last(), "{name}: {rooms:?}");
    }
}

/// A written Hier with a Mesh inter leg takes 62 of Cayman's 108 events;
/// the same combination left to per-leg `Auto` after it needs 62 more, and
/// every combination with that Mesh leg does: validation refuses the
/// second, saying what the first took and what would be accepted.
#[test]
fn no_room_left_by_the_collectives_before_is_a_validation_error() {
    let legs = HierLegs::new().intra_reduce_scatter(AlgType::Ring).inter_all_reduce(AlgType::Mesh);
    let c = collective(OpType::AllReduce, 256, Arch::Cayman, Topology::new(64, 2));
    let written = c.clone().algorithm(Algorithm::Hier(legs.clone().intra_all_gather(AlgType::Ring)));
    let left = c.algorithm(Algorithm::Hier(legs.intra_all_gather(LegAlgorithm::Auto)));
    // Each alone is legal.
    assert!(validate(&Program::from(left.clone())).is_ok());
    let errors = validate(&Program { collectives: vec![written, left] }).unwrap_err().0;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!((errors[0].collective, errors[0].field.as_str()), (Some(1), "algorithm"));
    let Problem::AutoNoneLowers { needed, max, spent, .. } = errors[0].problem else {
        panic!("{:?}", errors[0].problem)
    };
    assert_eq!((needed, max, spent), (62, 108, 62));
    let text = errors[0].to_string();
    assert!(text.contains("than the 46 the collectives before it leave of the 108 Cayman has"), "{text}");
    assert!(text.contains("or fewer mesh events in the collectives before it"), "{text}");
}

/// The written form of a resolved algorithm.
fn written(r: &ResolvedAlgorithm) -> Algorithm {
    match r {
        ResolvedAlgorithm::Flat(a) => Algorithm::flat(*a).unwrap(),
        ResolvedAlgorithm::Hier(legs) => {
            Algorithm::Hier(legs.iter().fold(HierLegs::new(), |h, &(leg, alg)| h.with(leg, alg)))
        }
    }
}

/// `explain` of a written collective in a program lists the choices
/// `Auto` would hold in its place, with the events the collectives
/// before it spend, and its own: three meshes of the training step's
/// smallest all-reduce (32 of Cayman's 108 events each) leave no room for
/// a fourth, so a fourth written as Ring lists no mesh, though alone it
/// would.
#[test]
fn explain_lists_the_choices_that_fit_after_the_collectives_before() {
    use ccc_compiler::cost::auto::display;
    use ccc_compiler::explain::explain;
    use std::collections::BTreeSet;
    let c = training_step().remove(0);
    let alone = validate(&Program::from(c.clone().algorithm(Algorithm::Auto))).unwrap();
    let mesh = *alone.collectives()[0].algorithm();
    assert!(events_of(&c, &mesh) > 0, "alone, the smallest chooses a mesh: {}", display(&mesh));
    let meshes = vec![c.clone().algorithm(written(&mesh)); 3];
    let program =
        |last: Algorithm| Program { collectives: meshes.iter().cloned().chain([c.clone().algorithm(last)]).collect() };
    let ring = program(Algorithm::flat(AlgType::Ring).unwrap());
    let explained = explain(&ring, &validate(&ring).unwrap());
    let listed: BTreeSet<String> = explained[3].choices.iter().map(|ch| ch.algorithm.clone()).collect();
    let as_auto = program(Algorithm::Auto);
    let held = validate(&as_auto).unwrap();
    let mut expected: BTreeSet<String> =
        held.collectives()[3].auto().unwrap().alternatives.iter().map(|a| display(&a.algorithm)).collect();
    expected.insert("Ring".to_owned());
    assert_eq!(listed, expected);
    assert!(!listed.contains(&display(&mesh)), "{listed:?}");
    let one = Program::from(c.clone().algorithm(Algorithm::flat(AlgType::Ring).unwrap()));
    let alone_listed: BTreeSet<String> =
        explain(&one, &validate(&one).unwrap())[0].choices.iter().map(|ch| ch.algorithm.clone()).collect();
    assert!(alone_listed.contains(&display(&mesh)) && alone_listed.len() > listed.len(), "{alone_listed:?}");
    // The meshes before it are explained with what the ones before them
    // leave: the third has room for its own mesh but lists what fits.
    assert!(explained[2].choices.iter().any(|ch| ch.winner && ch.algorithm == display(&mesh)));
}
