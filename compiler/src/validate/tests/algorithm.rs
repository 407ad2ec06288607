//! Validation tests of the algorithm choice: what serves an op, hier's legs, and the node, pod and leg-choice requirements.

use super::*;
use crate::validate::algorithm::aligned;
use ccc_ir::model::ModelOverrides;

/// A program that repeats a collective searches it once (`AutoMemo`),
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
            also: 0
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
            also: 0
        }
    );
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
