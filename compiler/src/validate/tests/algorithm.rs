//! Validation tests of the algorithm choice: what serves an op, hier's legs, and the node, pod and leg-choice requirements.

use super::*;
use crate::validate::algorithm::aligned;

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
