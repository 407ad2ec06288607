//! Validation tests of the algorithm choice: what serves an op, hier's legs, and the node, pod and leg-choice requirements.

use super::*;
use crate::validate::algorithm::aligned;
use ccc_ir::model::ModelOverrides;
use ccc_ir::spec::LegAlgorithm;

/// A program that repeats a collective plans it once (`ProgramAuto`),
/// and every collective still gets the answer validating it alone gives:
/// collectives equal but for their model or their groups (the same bucket
/// of op, dtype, count and channels) get their own.
#[test]
fn auto_answers_are_kept_per_distinct_collective() {
    let auto = |f: &dyn Fn(&mut Collective)| {
        with(|c| {
            c.algorithm = Algorithm::Auto;
            f(c);
        })
    };
    let a = auto(&|_| {});
    let slow_network = auto(&|c| c.model = Some(ModelOverrides { node_inter_mbps: Some(1), ..Default::default() }));
    let pairs = auto(&|c| c.groups = Some((0..16).map(|g| vec![g, g + 16]).collect()));
    let smaller = auto(&|c| c.count = 1024);
    let program = [&a, &slow_network, &a, &pairs, &smaller, &slow_network, &a];
    let valid = validate(&Program { collectives: program.iter().map(|c| (*c).clone()).collect() }).unwrap();
    let alone: Vec<AutoChoice> = program.iter().map(|c| ok((*c).clone()).auto().unwrap().clone()).collect();
    for (i, (v, alone)) in valid.collectives().iter().zip(&alone).enumerate() {
        assert_eq!(v.auto(), Some(alone), "collective {i}");
        assert_eq!(v.algorithm(), &alone.winner().unwrap().algorithm, "collective {i}");
    }
    // The overrides and the groups change the answer, so a memo keyed on
    // the bucket alone would hand them the first collective's.
    assert_ne!(alone[1], alone[0]);
    assert_ne!(alone[3], alone[0]);
}

#[test]
fn auto_and_unserved_algorithms() {
    // Auto resolves to one of the legal choices it lists, and says so.
    let p = validate(&Program::from(with(|c| c.algorithm = Algorithm::Auto))).unwrap();
    let v = &p.collectives()[0];
    let auto = v.auto().unwrap();
    assert_eq!(auto.winner().map(|w| &w.algorithm), Some(v.algorithm()));
    assert!(auto.alternatives.iter().any(|a| a.algorithm == ResolvedAlgorithm::Flat(AlgType::Ring)));
    let e = one(with(|c| {
        c.op = OpType::AllGather;
        c.reduce = None;
        c.algorithm = Algorithm::SingleCycleRing;
    }));
    let Problem::AlgorithmDoesNotServe { gate, choices, .. } = &e.1 else { panic!("{e:?}") };
    assert_eq!(*gate, Some(Gate::SingleCycleRingAllReduceOnly));
    assert!(!choices.contains(&AlgType::SingleCycleRing));
    assert!(e.1.to_string().contains("(SingleCycleRing is for all-reduce only)"));
    let e = one(with(|c| {
        send(c);
        c.peer = Some(1);
        c.algorithm = hier_ar();
    }));
    assert!(matches!(e.1, Problem::AlgorithmDoesNotServe { alg: AlgType::Hier, op: OpType::Send, .. }));
}

#[test]
fn within_node_requirement() {
    let e = one(with(|c| c.algorithm = Algorithm::Kangaring));
    assert_eq!(
        e,
        (
            "algorithm".into(),
            Problem::NotWithinNode {
                alg: AlgType::Kangaring,
                leg: None,
                group: GroupRef::World,
                a: 0,
                node_a: 0,
                b: 16,
                node_b: 1,
                local_rank_n: 16,
                also: 0
            }
        )
    );
    ok(with(|c| {
        c.algorithm = Algorithm::Kangaring;
        c.groups = Some(vec![(0..16).collect(), (16..32).collect()]);
    }));
    let e = one(with(|c| {
        c.algorithm = Algorithm::IntraRdh;
        c.groups = Some((0..16).map(|i| vec![i, i + 16]).collect());
    }));
    let Problem::NotWithinNode { group, also, .. } = e.1 else { panic!("{e:?}") };
    assert_eq!((group, also), (GroupRef::Explicit(0), 15));
}

#[test]
fn node_aligned_requirement() {
    let interleaved: Vec<Vec<u32>> = vec![(0..16).flat_map(|i| [i, 16 + i]).collect()];
    let e = one(with(|c| {
        c.algorithm = Algorithm::BwOptMesh;
        c.groups = Some(interleaved.clone());
    }));
    assert_eq!(
        e.1,
        Problem::NotAligned {
            alg: AlgType::BwOptMesh,
            leg: None,
            level: Level::Node,
            group: GroupRef::Explicit(0),
            fault: AlignFault::Revisited { rank: 1, unit: 0 },
            also: 0,
            units: 2
        }
    );
    // Uneven: 2 members on node 0, 1 on node 1 — groups of 3 cannot be even.
    let uneven = [vec![0, 1, 16], vec![2, 3, 17]];
    let fault = aligned(&uneven[0], |r| r / 16).unwrap_err();
    assert_eq!(fault, AlignFault::Uneven { first: 0, first_len: 2, other: 1, other_len: 1 });
    ok(with(|c| {
        c.algorithm = Algorithm::LatencyOptMesh;
        c.groups = Some((0..8).map(|g| vec![2 * g, 2 * g + 1, 16 + 2 * g, 17 + 2 * g]).collect());
    }));
    // Hier needs node-aligned groups too.
    let e = one(with(|c| {
        c.algorithm = hier_ar();
        c.groups = Some(interleaved);
    }));
    assert!(matches!(e.1, Problem::NotAligned { alg: AlgType::Hier, level: Level::Node, .. }), "{e:?}");
}

#[test]
fn pod_aligned_requirement() {
    let pods = |c: &mut Collective| c.topology = Topology { rank_n: 64, local_rank_n: 16, pod_n: 2 };
    let v = ok(with(|c| {
        pods(c);
        c.algorithm = Algorithm::TwoStepPodMesh;
    }));
    assert_eq!(v.algorithm(), &ResolvedAlgorithm::Flat(AlgType::TwoStepPodMesh));
    let e = one(with(|c| c.algorithm = Algorithm::TwoStepPodMesh));
    assert_eq!(
        e.1,
        Problem::NotAligned {
            alg: AlgType::TwoStepPodMesh,
            leg: None,
            level: Level::Pod,
            group: GroupRef::World,
            fault: AlignFault::SingleUnit { unit: 0 },
            also: 0,
            units: 1
        }
    );
    // One pod: the topology, not the groups, is what must change.
    let said = e.1.to_string();
    assert!(said.ends_with("accepted: a topology of at least two pods (`topology.pod_n` of 2 or more), or an algorithm without this need"), "{said}");
    // As an inter leg (a wide choice, opted into): the group's nodes must
    // span two pods.
    let hier = |c: &mut Collective| {
        c.algorithm = Algorithm::Hier(HierLegs {
            intra_reduce_scatter: Some(AlgType::Ring.into()),
            inter_all_reduce: Some(AlgType::TwoStepPodMesh.into()),
            intra_all_gather: Some(AlgType::Ring.into()),
            choices: LegChoices::Wide,
            ..HierLegs::default()
        });
    };
    ok(with(|c| {
        pods(c);
        hier(c);
    }));
    let e = one(with(hier));
    assert_eq!(e.0, "algorithm.inter_all_reduce");
    assert!(matches!(e.1, Problem::NotAligned { leg: Some(Leg::InterAllReduce), level: Level::Pod, .. }), "{e:?}");
    let text = e.1.to_string();
    assert!(text.contains("the nodes of each group"), "{text}");
    assert!(text.contains("accepted: a topology of at least two pods"), "{text}");
}

#[test]
fn hier_legs() {
    let legs = |l: HierLegs| with(|c| c.algorithm = Algorithm::Hier(l));
    let e = one(legs(HierLegs {
        intra_reduce_scatter: Some(AlgType::Ring.into()),
        intra_all_gather: Some(AlgType::Ring.into()),
        ..HierLegs::default()
    }));
    assert_eq!(e.0, "algorithm.inter_all_reduce");
    assert!(matches!(e.1, Problem::HierLegMissing { leg: Leg::InterAllReduce, .. }));
    assert!(e.1.to_string().contains("accepted: Ring, InterRdh, SingleCycleRing, Mesh, or Auto"), "{}", e.1);
    // Under `choices: Wide`, the accepted list is Wide's (it was the
    // seed's, while a wrong choice's said Wide's).
    let e = one(legs(HierLegs {
        intra_reduce_scatter: Some(AlgType::Ring.into()),
        intra_all_gather: Some(AlgType::Ring.into()),
        choices: LegChoices::Wide,
        ..HierLegs::default()
    }));
    let text = e.1.to_string();
    assert!(
        text.contains("accepted: Ring, InterRdh, SingleCycleRing, Mesh, SingleStepMesh, TwoStepPodMesh, or Auto"),
        "{text}"
    );
    let e = one(with(|c| {
        c.op = OpType::AllGather;
        c.reduce = None;
        c.algorithm = Algorithm::Hier(HierLegs {
            inter_all_gather: Some(AlgType::Ring.into()),
            intra_all_gather: Some(AlgType::Kangaring.into()),
            inter_all_reduce: Some(AlgType::Ring.into()),
            ..HierLegs::default()
        });
    }));
    assert_eq!(e.0, "algorithm.inter_all_reduce");
    assert!(matches!(e.1, Problem::HierLegUnused { op: OpType::AllGather, leg: Leg::InterAllReduce, .. }));
    let e = one(legs(HierLegs {
        intra_reduce_scatter: Some(AlgType::Ring.into()),
        inter_all_reduce: Some(AlgType::Kangaring.into()),
        intra_all_gather: Some(AlgType::Ring.into()),
        ..HierLegs::default()
    }));
    assert_eq!(e.0, "algorithm.inter_all_reduce");
    assert!(
        matches!(e.1, Problem::HierLegChoice { choice: AlgType::Kangaring, gate: Some(Gate::KangaringIntraOnly), .. }),
        "{e:?}"
    );
    assert!(e.1.to_string().contains("Kangaring runs inside a node only"));
    let all = errs(with(|c| {
        c.op = OpType::AllGather;
        c.reduce = None;
        c.algorithm = Algorithm::Hier(HierLegs {
            inter_all_gather: Some(AlgType::SingleCycleRing.into()),
            intra_all_gather: Some(AlgType::Hier.into()),
            ..HierLegs::default()
        });
    }));
    assert!(matches!(all[0].1, Problem::HierLegChoice { gate: Some(Gate::SingleCycleRingAllReduceOnly), .. }));
    assert!(matches!(all[1].1, Problem::HierLegChoice { gate: Some(Gate::HierDoesNotNest), .. }));
}

/// Seed 001 §2.7's sets by default; SingleStepMesh and TwoStepPodMesh on
/// `inter_all_reduce` only with `choices: Wide`, and the refusal says so.
#[test]
fn wide_leg_choices_are_opt_in() {
    let ar = |alg: AlgType, choices: LegChoices| {
        with(|c| {
            c.topology.pod_n = 2;
            c.algorithm = Algorithm::Hier(HierLegs {
                intra_reduce_scatter: Some(AlgType::Ring.into()),
                inter_all_reduce: Some(alg.into()),
                intra_all_gather: Some(AlgType::Ring.into()),
                choices,
                ..HierLegs::default()
            });
        })
    };
    for alg in [AlgType::SingleStepMesh, AlgType::TwoStepPodMesh] {
        let e = one(ar(alg, LegChoices::Seed));
        assert_eq!(e.0, "algorithm.inter_all_reduce");
        assert_eq!(
            e.1,
            Problem::HierLegChoice {
                leg: Leg::InterAllReduce,
                choice: alg,
                choices: &[AlgType::Ring, AlgType::InterRdh, AlgType::SingleCycleRing, AlgType::Mesh],
                gate: Some(Gate::WideLegChoice),
            }
        );
        let text = e.1.to_string();
        for part in [alg.name(), "inter_all_reduce", "choices: Wide", "accepted: Ring, InterRdh, SingleCycleRing, Mesh"]
        {
            assert!(text.contains(part), "{part:?} in {text}");
        }
        ok(ar(alg, LegChoices::Wide));
    }
    // The seed's own choices need no opt-in, and the opt-in widens nothing
    // else: Kangaring stays intra-only, LatencyOptMesh stays refused.
    for alg in [AlgType::Ring, AlgType::InterRdh, AlgType::SingleCycleRing, AlgType::Mesh] {
        ok(ar(alg, LegChoices::Seed));
        ok(ar(alg, LegChoices::Wide));
    }
    let e = one(ar(AlgType::Kangaring, LegChoices::Wide));
    assert!(matches!(e.1, Problem::HierLegChoice { gate: Some(Gate::KangaringIntraOnly), .. }), "{e:?}");
    let e = one(ar(AlgType::LatencyOptMesh, LegChoices::Wide));
    assert!(matches!(e.1, Problem::HierLegChoice { gate: None, .. }), "{e:?}");
}

/// Every structural fact about the world group, as `world_holds` names it
/// from the shape, is the one checking its members finds (making one pod
/// meet `PodAligned`, or one node's worth of ranks fail `WithinNode`,
/// fails it).
#[test]
fn world_facts_follow_from_the_shape() {
    use crate::validate::algorithm::{groups_hold, world_holds};
    let reqs = [Requirement::None, Requirement::WithinNode, Requirement::NodeAligned, Requirement::PodAligned];
    let facts: Vec<Fact> = std::iter::once(Fact::SameShapes)
        .chain(
            reqs.iter()
                .flat_map(|&req| [Fact::Whole(req), Fact::Leg { intra: true, req }, Fact::Leg { intra: false, req }]),
        )
        .collect();
    // Each fact has its own place in the checker's memory.
    let mut slots: Vec<usize> = facts.iter().map(|f| f.slot()).collect();
    slots.sort_unstable();
    slots.dedup();
    assert_eq!((slots.len(), slots.last().copied()), (Fact::SLOTS, Some(Fact::SLOTS - 1)));
    let mut checked = 0;
    for rank_n in [1, 2, 4, 6, 8, 12, 16, 32, 48, 64, 96, 128, 256] {
        for local in [1, 2, 3, 4, 8, 16, 64].into_iter().filter(|l| rank_n % l == 0) {
            for pod_n in (1..=4).filter(|p| (rank_n / local) % p == 0) {
                let shape = shape_of(Topology { rank_n, local_rank_n: local, pod_n }).unwrap();
                let groups = CheckedGroups {
                    groups: Groups::world(rank_n),
                    n: rank_n,
                    members: vec![(GroupRef::World, (0..rank_n).collect())],
                };
                for &fact in &facts {
                    let found = groups_hold(fact, &shape, &groups);
                    assert_eq!(world_holds(fact, &shape, &groups), Some(found), "{fact:?} on {rank_n}/{local}/{pod_n}");
                    checked += usize::from(!found);
                }
                // Explicit groups are checked member by member.
                let explicit =
                    CheckedGroups { members: vec![(GroupRef::Explicit(0), (0..rank_n).collect())], ..groups };
                assert_eq!(world_holds(Fact::SameShapes, &shape, &explicit), None);
            }
        }
    }
    // Both verdicts are seen.
    assert!(checked > 50, "{checked} facts fail");
}

/// A topology and its groups, `None` for the world:
/// (rank_n, local_rank_n, pod_n, groups).
type Case = (u32, u32, u32, Option<Vec<Vec<u32>>>);

/// The listing tests' topologies: world groups on one and several pods,
/// node-contiguous, strided and unevenly shaped explicit groups.
fn listing_cases() -> [Case; 8] {
    [
        (8, 8, 1, None),
        (16, 4, 1, None),
        (32, 8, 2, None),
        (32, 4, 4, None),
        (16, 8, 1, Some((0..4).map(|g| (g * 4..g * 4 + 4).collect()).collect())),
        (16, 4, 1, Some((0..4).map(|g| (g..16).step_by(4).collect()).collect())),
        (16, 8, 1, Some(vec![vec![0, 1, 2, 3], vec![4, 5, 12, 13], vec![6, 7, 14, 15], vec![8, 9, 10, 11]])),
        (32, 4, 2, Some(vec![(0..16).collect(), (16..32).collect()])),
    ]
}

/// `algorithm` written for `op` on `case`'s checked shape and groups:
/// what it resolves to, and the checker (its problems, its listing).
fn resolve_on(case: &Case, op: OpType, algorithm: &Algorithm) -> (Option<ResolvedAlgorithm>, Checker) {
    let (rank_n, local_rank_n, pod_n, groups) = case;
    let shape = shape_of(Topology { rank_n: *rank_n, local_rank_n: *local_rank_n, pod_n: *pod_n }).unwrap();
    let checked = Checker::new(0).groups(groups.as_deref(), *rank_n).unwrap();
    let mut cx = Checker::new(0);
    let r = cx.algorithm(op, algorithm, Some((&shape, &checked)));
    (r, cx)
}

/// `Auto` lists exactly the candidates that resolve when written out,
/// over ops, shapes and groups (world, node-contiguous, strided across
/// nodes, two node/pod shapes), and so do `Auto` legs over the seed's and
/// the wide leg choices: a listing (which stops at a candidate's first
/// unmet fact and remembers failed facts too) and a written check (which
/// reports) agree. Letting a listing pass `SameShapes` fails it (the
/// uneven groups), as does letting it pass a failed leg requirement
/// (`TwoStepPodMesh` on one pod).
#[test]
fn auto_lists_what_resolves_written() {
    use ccc_ir::spec::LegAlgorithm;
    let (mut listed, mut refused) = (0, 0);
    for case in listing_cases() {
        let (rank_n, local, pod_n, groups) = &case;
        let resolved = |op: OpType, algorithm: &Algorithm| resolve_on(&case, op, algorithm);
        for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter, OpType::Broadcast, OpType::AllToAll] {
            let legs = crate::algorithms::hier_legs(op).unwrap_or(&[]);
            for set in [None, Some(LegChoices::Seed), Some(LegChoices::Wide)] {
                let (written, asked): (Vec<Algorithm>, Algorithm) = match set {
                    None => {
                        let mut w: Vec<Algorithm> = AlgType::ALL.iter().filter_map(|&a| Algorithm::flat(a)).collect();
                        let mut combos = vec![HierLegs::default()];
                        for &leg in legs {
                            let choices = crate::algorithms::leg_choices_in(leg, LegChoices::Seed);
                            combos = combos
                                .into_iter()
                                .flat_map(|h| choices.iter().map(move |&a| h.clone().with(leg, a)))
                                .collect();
                        }
                        w.extend(combos.into_iter().filter(|_| !legs.is_empty()).map(Algorithm::Hier));
                        (w, Algorithm::Auto)
                    }
                    Some(_) if legs.is_empty() => continue,
                    Some(choices) => {
                        let mut combos = vec![HierLegs { choices, ..HierLegs::default() }];
                        let mut auto = HierLegs { choices, ..HierLegs::default() };
                        for &leg in legs {
                            auto = auto.with(leg, LegAlgorithm::Auto);
                            let set = crate::algorithms::leg_choices_in(leg, choices);
                            combos = combos
                                .into_iter()
                                .flat_map(|h| set.iter().map(move |&a| h.clone().with(leg, a)))
                                .collect();
                        }
                        (combos.into_iter().map(Algorithm::Hier).collect(), Algorithm::Hier(auto))
                    }
                };
                let (_, mut cx) = resolved(op, &asked);
                let list = cx.auto.take().map(|(l, _)| l).unwrap_or_default();
                let mut valid = Vec::new();
                for algorithm in &written {
                    match resolved(op, algorithm) {
                        (Some(r), cx) if cx.errors.is_empty() => valid.push(r),
                        (_, cx) => refused += usize::from(!cx.errors.is_empty()),
                    }
                }
                assert_eq!(list, valid, "{op:?} {set:?} on {rank_n}/{local}/{pod_n} {groups:?}");
                listed += valid.len();
            }
        }
    }
    assert!(listed > 100 && refused > 100, "{listed} listed, {refused} refused");
}

/// `Hier((...))` with some legs `Auto` and the others written, rightly or
/// not (a choice outside the set, a leg whose requirement the groups do
/// not meet, an unused leg): the listing, which decides the written legs
/// once for every combination, holds exactly the combinations that
/// resolve without a problem when written out, in the same order.
#[test]
fn auto_legs_beside_written_ones_list_what_resolves() {
    use ccc_ir::spec::LegAlgorithm;
    let (mut listed, mut empty, mut written_refused) = (0, 0, 0);
    for case in listing_cases() {
        let (rank_n, local, pod_n, groups) = &case;
        let resolved = |op: OpType, algorithm: &Algorithm| resolve_on(&case, op, algorithm);
        for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter] {
            let legs = crate::algorithms::hier_legs(op).unwrap();
            for choices in [LegChoices::Seed, LegChoices::Wide] {
                // Which legs are Auto: every non-empty proper subset.
                for mask in 1..(1u32 << legs.len()) - 1 {
                    let auto: Vec<Leg> = (0..legs.len()).filter(|&i| mask & (1 << i) != 0).map(|i| legs[i]).collect();
                    // The written legs: every combination of the wide set
                    // plus Kangaring (refused on inter legs), under `choices`.
                    let mut bases = vec![HierLegs { choices, ..HierLegs::default() }];
                    for &leg in legs {
                        if auto.contains(&leg) {
                            bases = bases.into_iter().map(|h| h.with(leg, LegAlgorithm::Auto)).collect();
                            continue;
                        }
                        let mut written = crate::algorithms::leg_choices_in(leg, LegChoices::Wide).to_vec();
                        if !written.contains(&AlgType::Kangaring) {
                            written.push(AlgType::Kangaring);
                        }
                        bases = bases
                            .into_iter()
                            .flat_map(|h| written.iter().map(move |&a| h.clone().with(leg, a)))
                            .collect();
                    }
                    // A leg the op does not use, written: refused whatever the rest.
                    let unused = Leg::ALL.into_iter().find(|l| !legs.contains(l)).unwrap();
                    let first = bases[0].clone();
                    bases.push(first.with(unused, AlgType::Ring));
                    for base in bases {
                        let (_, mut cx) = resolved(op, &Algorithm::Hier(base.clone()));
                        let list = cx.auto.take().map(|(l, _)| l).unwrap_or_default();
                        let mut combos = vec![base.clone()];
                        for &leg in &auto {
                            let set = crate::algorithms::leg_choices_in(leg, choices);
                            combos = combos
                                .into_iter()
                                .flat_map(|h| set.iter().map(move |&a| h.clone().with(leg, a)))
                                .collect();
                        }
                        let mut valid = Vec::new();
                        for combo in combos {
                            match resolved(op, &Algorithm::Hier(combo)) {
                                (Some(r), cx) if cx.errors.is_empty() => valid.push(r),
                                _ => {}
                            }
                        }
                        assert_eq!(list, valid, "{op:?} {base:?} on {rank_n}/{local}/{pod_n} {groups:?}");
                        listed += valid.len();
                        empty += usize::from(valid.is_empty());
                        written_refused +=
                            usize::from(cx.errors.iter().any(|e| !matches!(e.problem, Problem::AutoNoChoice { .. })));
                    }
                }
            }
        }
    }
    assert!(listed > 100 && empty > 100 && written_refused > 100, "{listed} listed, {empty} empty, {written_refused}");
}

/// `op` over about `bytes` (a count every rank splits evenly) on `arch`
/// and `topology`, 4 channels, its algorithm left to `Auto`.
fn auto_of(op: OpType, bytes: u64, arch: Arch, topology: Topology) -> Collective {
    let rank_n = u64::from(topology.rank_n);
    let count = (bytes / 2).max(1).div_ceil(rank_n) * rank_n;
    let c = Collective::new(op, DType::Bf16, count, arch, topology).channels(4).algorithm(Algorithm::Auto);
    if op.is_reducing() { c.reduce(ReduceOp::Add) } else { c }
}

/// What [`assert_each_answer_is_fresh`] saw of a program's answers.
#[derive(Debug, Default)]
struct Seen {
    /// Answers chosen from the candidates kept for an equal collective
    /// before, not reused whole.
    replayed: usize,
    /// Of those, the ones holding fewer candidates than the collective
    /// alone holds (some refused for the events left).
    replayed_refusing: usize,
    /// Of those, the ones with none left.
    replayed_none: usize,
    /// Collectives refused in what the `Auto` ones before them left that
    /// asked again in what the written ones leave.
    retried: usize,
}

/// Validates `program` and checks every `Auto` answer its collectives
/// were given against a fresh `cost::auto::choose_standing` for the same
/// collective over the same candidates on the same machine, with the
/// events the program had spent before it: equal as a whole, `NoChoice`
/// included, and so are the rooms over which it stands where it was
/// chosen then. `picks[i]` names collective `i`'s kind (equal collectives
/// share one), to tell a choice made from candidates kept for an earlier
/// equal collective. A collective refused in what the `Auto` ones before
/// it left asks again in what the written ones leave (`deferred`), and
/// spends nothing for those after it.
fn assert_each_answer_is_fresh(name: &str, program: &Program, picks: &[usize]) -> Seen {
    let (_, log) = validate_logged(program);
    let autos = program.collectives.iter().filter(|c| c.algorithm.leaves_to_auto()).count();
    let again = |k: usize| k > 0 && log[k - 1].collective.index == log[k].collective.index;
    let retries = (0..log.len()).filter(|&k| again(k)).count();
    assert_eq!(log.len() - retries, autos, "{name}: one answer an Auto collective, and its retry");
    let mut seen = Seen { retried: retries, ..Seen::default() };
    // The events the collectives before spend, each built afresh under
    // its choice (the program keeps what an equal one spent), and of them
    // the written ones'; one left without a choice is refused and spends
    // none, nor does one chosen on its retry.
    let (mut spent, mut written_spent) = (0u32, 0u32);
    let mut before = 0;
    for (k, logged) in log.iter().enumerate() {
        let Logged { collective, machine, candidates, auto_legs, answer, chosen_now } = logged;
        let i = collective.index as usize;
        // The written collectives before it spend too, validated alone.
        for written in program.collectives.get(before..i).unwrap_or_default() {
            let alone = validate(&Program::from(written.clone())).expect("a written collective validates alone");
            let fresh = cost::auto::mesh_events(&alone.collectives()[0], Machine { mesh_events_spent: 0, ..*machine });
            spent = spent.saturating_add(fresh);
            written_spent = written_spent.saturating_add(fresh);
        }
        before = i + 1;
        let (retry, retried) = (again(k), log.get(k + 1).is_some_and(|n| n.collective.index == collective.index));
        let expected = if retry { written_spent } else { spent };
        assert_eq!(
            machine.mesh_events_spent, expected,
            "{name}: the events spent before collective {i} (retry: {retry})"
        );
        assert!(
            !retried || matches!(answer, Err(NoChoice::Limit { .. })),
            "{name}: collective {i} retried after {answer:?}"
        );
        // The choices listed (perhaps kept from an equal listing before)
        // are the collective's listed alone.
        let (_, alone) = validate_logged(&Program::from(program.collectives[i].clone()));
        assert_eq!(
            (candidates, auto_legs),
            (&alone[0].candidates, &alone[0].auto_legs),
            "{name}: collective {i}'s list"
        );
        if let (Ok(choice), false) = (answer, retry) {
            let mut chosen = collective.clone();
            chosen.algorithm = choice.alternatives[choice.chosen].algorithm;
            let fresh = cost::auto::mesh_events(&chosen, Machine { mesh_events_spent: 0, ..*machine });
            spent = spent.saturating_add(fresh);
        }
        let fresh =
            cost::auto::choose_standing(collective, *machine, &collective.model, candidates.clone(), auto_legs.clone());
        let fresh_answer = fresh.as_ref().map(|(choice, _)| choice);
        assert_eq!(answer.as_ref(), fresh_answer, "{name}: collective {i}, {} events spent", machine.mesh_events_spent);
        if let Some(stands) = chosen_now {
            let fresh_stands = fresh.as_ref().ok().map(|&(_, s)| s);
            assert_eq!(*stands, fresh_stands, "{name}: collective {i}'s rooms");
        }
        if picks[..i].contains(&picks[i]) && chosen_now.is_some() {
            seen.replayed += 1;
            let alone = cost::auto::choose(
                collective,
                Machine { mesh_events_spent: 0, ..*machine },
                &collective.model,
                candidates.clone(),
                auto_legs.clone(),
            );
            let held_alone = alone.map_or(0, |c| c.alternatives.len());
            let held = answer.as_ref().map_or(0, |c| c.alternatives.len());
            seen.replayed_refusing += usize::from(held < held_alone);
            seen.replayed_none += usize::from(answer.is_err());
        }
    }
    seen
}

/// A program of `pool[picks[i]]` for each `i`.
fn program_of(pool: &[Collective], picks: &[usize]) -> Program {
    Program { collectives: picks.iter().map(|&p| pool[p % pool.len()].clone()).collect() }
}

/// A training step's 32 all-reduces in 8 sizes (the `auto` bench's last
/// case): the chosen meshes spend the events, so the later repeats are
/// chosen with less room than the first, from the candidates kept for it,
/// refusing some; each answer is the fresh search's, whatever order the
/// sizes come in.
#[test]
fn a_training_step_chooses_each_repeat_as_a_fresh_search_would() {
    let topology = Topology::new(32, 16);
    let pool: Vec<Collective> =
        (0..8u64).map(|s| auto_of(OpType::AllReduce, (128 << 10) << s, Arch::Cayman, topology)).collect();
    let ascending: Vec<usize> = (0..32).map(|layer| layer % 8).collect();
    let descending: Vec<usize> = (0..32).map(|layer| 7 - layer % 8).collect();
    for (name, picks) in [("ascending", ascending), ("descending", descending)] {
        let seen = assert_each_answer_is_fresh(name, &program_of(&pool, &picks), &picks);
        assert!(seen.replayed > 0 && seen.replayed_refusing > 0, "{name}: {seen:?}");
    }
}

/// A collective whose every combination needs 62 of Cayman's 108 events
/// (`Hier` with its inter leg a mesh, the intra all-gather left to
/// `Auto`), repeated after one written the same way: the repeat is
/// chosen from the candidates kept for the first, with none left, and
/// says so as a fresh search does (`NoChoice` equal, the events spent
/// named); and all-reduces, all-gathers and reduce-scatters between them.
#[test]
fn a_repeat_with_no_room_left_refuses_as_a_fresh_search_would() {
    let topology = Topology::new(64, 2);
    let legs = HierLegs::new().intra_reduce_scatter(AlgType::Ring).inter_all_reduce(AlgType::Mesh);
    let base = auto_of(OpType::AllReduce, 512, Arch::Cayman, topology);
    let left = base.clone().algorithm(Algorithm::Hier(legs.clone().intra_all_gather(LegAlgorithm::Auto)));
    let written = base.algorithm(Algorithm::Hier(legs.intra_all_gather(AlgType::Ring)));
    let pool = [
        left,
        written,
        auto_of(OpType::AllReduce, 64 << 10, Arch::Cayman, topology),
        auto_of(OpType::AllGather, 64 << 10, Arch::Cayman, topology),
        auto_of(OpType::ReduceScatter, 1 << 20, Arch::Cayman, topology),
    ];
    let picks = [0, 2, 3, 4, 0, 1, 2, 0, 3, 4, 0];
    let seen = assert_each_answer_is_fresh("no room", &program_of(&pool, &picks), &picks);
    assert!(seen.replayed_none > 0 && seen.retried > 0, "{seen:?}");
}

/// A `Candidates` kept across choices gives what a fresh search gives for
/// every number of events spent, asked in any order (falling, rising,
/// jumping, repeated, past the arch's most): what one choice found does
/// not leak into another's answer.
#[test]
fn kept_candidates_choose_as_fresh_searches_in_any_order() {
    let topology = Topology::new(32, 16);
    let pool = [
        auto_of(OpType::AllReduce, 128 << 10, Arch::Cayman, topology),
        auto_of(OpType::AllGather, 1 << 20, Arch::Sunda, topology),
        auto_of(OpType::ReduceScatter, 16 << 10, Arch::Cayman, Topology::new(64, 32)),
    ];
    for (p, c) in pool.iter().enumerate() {
        let (_, log) = validate_logged(&Program::from(c.clone()));
        let Logged { collective, machine, candidates, auto_legs, .. } = &log[0];
        let max = u32::from(machine.arch.params().mesh_event_max);
        let falling: Vec<u32> = (0..=max + 2).rev().step_by(3).collect();
        let rising: Vec<u32> = (0..=max + 2).step_by(5).collect();
        let jumping = [max / 2, 0, max, max - 1, max / 3, max / 2, 2 * max / 3, 1];
        for (order, spent) in [("falling", &falling[..]), ("rising", &rising[..]), ("jumping", &jumping[..])] {
            let mut kept =
                Candidates::of(collective, *machine, &collective.model, candidates.clone(), auto_legs.clone());
            let mut held = std::collections::BTreeSet::new();
            for &s in spent {
                let m = Machine { mesh_events_spent: s, ..*machine };
                let fresh = cost::auto::choose_standing(
                    collective,
                    m,
                    &collective.model,
                    candidates.clone(),
                    auto_legs.clone(),
                );
                let got = kept.choose(s);
                assert_eq!(got, fresh, "collective {p}, {order}, {s} events spent");
                held.insert(got.map_or(0, |(c, _)| c.alternatives.len()));
            }
            // The events spent change which candidates are held.
            assert!(held.len() > 1, "collective {p}, {order}: {held:?}");
        }
    }
}

/// Random programs' `Auto` cases: the arch, topology and channels shared,
/// then each collective's op (all-reduce, all-gather or reduce-scatter)
/// and size, each kind drawn from `POOL_KINDS` so that kinds repeat.
const POOL_KINDS: usize = 6;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]
    /// Every `Auto` answer of a random program mixing ops, sizes and
    /// repeats, on one of three machines, is the fresh search's.
    #[test]
    fn random_programs_choose_each_repeat_as_a_fresh_search_would(
        machine in 0usize..3,
        kinds in proptest::collection::vec((0usize..3, 0u32..12), POOL_KINDS),
        picks in proptest::collection::vec(0usize..POOL_KINDS, 2..14),
    ) {
        let (arch, topology, channels) =
            [(Arch::Cayman, Topology::new(32, 16), 4), (Arch::Sunda, Topology::new(64, 32), 8), (Arch::Cayman, Topology::new(64, 2), 1)][machine];
        let ops = [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter];
        let pool: Vec<Collective> =
            kinds.iter().map(|&(op, size)| auto_of(ops[op], 1024 << size, arch, topology).channels(channels)).collect();
        assert_each_answer_is_fresh("random", &program_of(&pool, &picks), &picks);
    }
}

/// Whole `Auto`'s listing is kept for the `Auto` collectives after it by
/// op, shape and groups: groups within a node list no `Hier` (nor a
/// choice needing more than one node), groups across nodes do, so a
/// listing kept by op alone would hand one the other's; each collective's
/// list is the one it has alone.
#[test]
fn auto_listings_are_kept_per_op_and_groups() {
    let topology = Topology::new(32, 16);
    let world = auto_of(OpType::AllReduce, 1 << 20, Arch::Cayman, topology);
    let mut on_node = world.clone();
    on_node.groups = Some(vec![(0..16).collect(), (16..32).collect()]);
    let mut across = world.clone();
    across.groups = Some((0..16).map(|i| vec![i, i + 16]).collect());
    let gather = auto_of(OpType::AllGather, 1 << 20, Arch::Cayman, topology);
    let pool = [world, on_node, across, gather];
    let lists: Vec<Vec<ResolvedAlgorithm>> =
        pool.iter().map(|c| validate_logged(&Program::from(c.clone())).1.remove(0).candidates).collect();
    assert_ne!(lists[0], lists[1], "world and on-node groups list alike: the test would not tell");
    assert_ne!(lists[1], lists[2], "on-node and across groups list alike: the test would not tell");
    let picks = [0, 1, 2, 3, 1, 0, 2, 3, 0];
    assert_each_answer_is_fresh("listings", &program_of(&pool, &picks), &picks);
}

/// Single-collective and multi-collective programs a lowering pass could
/// validate one after another: every answer `Auto` would give on each
/// machine differs from the others', so a cache handing one program
/// another's answer would be seen.
fn cache_pool() -> Vec<Program> {
    let topology = Topology::new(32, 16);
    let reduce = auto_of(OpType::AllReduce, 8 << 20, Arch::Cayman, topology);
    let on_sunda = Collective { arch: Arch::Sunda, ..reduce.clone() };
    let slow =
        Collective { model: Some(ModelOverrides { node_inter_mbps: Some(1), ..Default::default() }), ..reduce.clone() };
    let wide = auto_of(OpType::AllReduce, 8 << 20, Arch::Cayman, Topology::new(64, 32));
    let gather = auto_of(OpType::AllGather, 512 << 10, Arch::Cayman, topology);
    let legs = HierLegs::new()
        .intra_reduce_scatter(LegAlgorithm::Auto)
        .inter_all_reduce(AlgType::InterRdh)
        .intra_all_gather(LegAlgorithm::Auto);
    let per_leg = reduce.clone().algorithm(Algorithm::Hier(legs));
    let written = reduce.clone().algorithm(Algorithm::Ring);
    let step: Vec<Collective> =
        (0..6u64).map(|i| auto_of(OpType::AllReduce, (256 << 10) << (i % 3), Arch::Cayman, topology)).collect();
    let invalid = Collective { count: 3, ..reduce.clone() };
    let on_node = Collective { groups: Some(vec![(0..16).collect(), (16..32).collect()]), ..reduce.clone() };
    let mut pool: Vec<Program> = [reduce, on_sunda, slow, wide, gather, per_leg, written, invalid, on_node]
        .into_iter()
        .map(Program::from)
        .collect();
    pool.push(Program { collectives: step });
    pool
}

/// Programs validated one after another through one [`AutoCache`] each
/// give what [`validate`] gives them, whole (errors included), at every
/// capacity, and a repeat reuses the answer kept for it: the cache only
/// saves time.
#[test]
fn a_cache_across_programs_changes_nothing_but_the_search() {
    let pool = cache_pool();
    let answers: Vec<AutoChoice> =
        pool[..3].iter().map(|p| validate(p).unwrap().collectives()[0].auto().unwrap().clone()).collect();
    assert_ne!(answers[0], answers[1], "the archs choose alike: the test would not tell");
    assert_ne!(answers[0], answers[2], "the models choose alike: the test would not tell");
    // What validating each program alone reuses within it: the step's
    // repeats.
    let within: Vec<usize> =
        pool.iter().map(|p| validate_logged(p).1.iter().filter(|l| l.chosen_now.is_none()).count()).collect();
    assert!(within[9] > 0, "the step reuses nothing: {within:?}");
    let order: Vec<usize> = (0..pool.len()).chain((0..pool.len()).rev()).chain([0, 9, 8, 1, 0]).collect();
    for capacity in [AutoCache::DEFAULT_CAPACITY, 3, 1, 0] {
        let mut cache = AutoCache::with_capacity(capacity);
        let mut reused = 0;
        for (n, &p) in order.iter().enumerate() {
            let (got, log) = validate_cached_logged(&pool[p], &mut cache);
            let fresh = validate(&pool[p]);
            assert_eq!(format!("{got:?}"), format!("{fresh:?}"), "capacity {capacity}, program {p} (call {n})");
            let here = log.iter().filter(|l| l.chosen_now.is_none()).count();
            // Never more searching than validating alone.
            assert!(here >= within[p], "capacity {capacity}, program {p} (call {n}): {here} reused");
            reused += here;
            assert!(cache.table_lens().iter().all(|&l| l <= capacity), "capacity {capacity}: {cache:?}");
        }
        let alone: usize = order.iter().map(|&p| within[p]).sum();
        match capacity {
            0 => assert!(cache.is_empty() && reused == alone, "{cache:?}, {reused} reused, {alone} alone"),
            // Every Auto collective of the second pass too.
            AutoCache::DEFAULT_CAPACITY => assert!(reused >= alone + 8, "{reused} reused, {alone} alone"),
            _ => {}
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 16, ..Default::default() })]
    /// Random sequences of programs, each on one of three machines, through
    /// one small cache: each validates as it does alone.
    #[test]
    fn random_program_sequences_through_a_cache_validate_as_alone(
        capacity in 0usize..4,
        calls in proptest::collection::vec((0usize..3, 0usize..3, 0u32..6, 1usize..3), 2..10),
    ) {
        // The three machines share every bucket (op, dtype, count,
        // channels: every count is a multiple of 64), so only the whole
        // key tells their answers apart.
        let machines = [(Arch::Cayman, Topology::new(32, 16)), (Arch::Sunda, Topology::new(64, 32)), (Arch::Cayman, Topology::new(64, 2))];
        let ops = [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter];
        let mut cache = AutoCache::with_capacity(capacity);
        for (n, &(machine, op, size, repeats)) in calls.iter().enumerate() {
            let (arch, topology) = machines[machine];
            let c = auto_of(ops[op], 4096 << (3 * size), arch, topology);
            let program = Program { collectives: vec![c; repeats] };
            let got = validate_cached(&program, &mut cache);
            assert_eq!(format!("{got:?}"), format!("{:?}", validate(&program)), "call {n}");
        }
    }
}

/// Groups of uneven shapes name the odd one against the shape most
/// groups have, and count the others (it named groups[6] against
/// groups[0], as if groups[0] were wrong, and never groups[7]).
#[test]
fn the_odd_group_shape_is_named_against_the_usual_one() {
    let e = one(with(|c| {
        c.topology = Topology { rank_n: 16, local_rank_n: 2, pod_n: 2 };
        c.algorithm = Algorithm::flat(AlgType::BwOptMesh).unwrap();
        c.groups = Some(vec![
            vec![0, 2],
            vec![1, 3],
            vec![4, 6],
            vec![5, 7],
            vec![8, 10],
            vec![9, 11],
            vec![12, 13],
            vec![14, 15],
        ]);
    }));
    assert_eq!(e.0, "groups");
    let text = e.1.to_string();
    assert!(
        text.starts_with(
            "groups[6] has 2 members per node, 1 node per pod and 1 pod, where 6 of the 8 groups (groups[0] first) \
             have 1 member per node, 2 nodes per pod and 1 pod (and 1 more group differs too);"
        ),
        "{text}"
    );
}
