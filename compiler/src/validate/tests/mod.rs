//! Validation tests: every rule accepted and refused.

use super::wording::{REDUCE_OPS, abbreviated, divisors};
use super::*;
use crate::parse::SpecForm;

mod algorithm;

/// A valid flat ring all-reduce: 32 ranks, 16 per node, one pod.
fn base() -> Collective {
    let topology = Topology { rank_n: 32, local_rank_n: 16, pod_n: 1 };
    Collective::new(OpType::AllReduce, DType::Bf16, 4_194_304, Arch::Cayman, topology)
        .reduce(ReduceOp::Add)
        .channels(4)
        .algorithm(AlgType::Ring)
}

fn hier_ar() -> Algorithm {
    Algorithm::Hier(HierLegs {
        intra_reduce_scatter: Some(AlgType::Ring.into()),
        inter_all_reduce: Some(AlgType::SingleCycleRing.into()),
        intra_all_gather: Some(AlgType::Kangaring.into()),
        ..HierLegs::default()
    })
}

fn ok(c: Collective) -> ValidCollective {
    match validate(&Program::from(c)) {
        Ok(p) => p.collectives()[0].clone(),
        Err(e) => panic!("{e}"),
    }
}

fn errs(c: Collective) -> Vec<(String, Problem)> {
    errs_program(Program::from(c))
}

fn errs_program(p: Program) -> Vec<(String, Problem)> {
    match validate(&p) {
        Ok(_) => panic!("accepted"),
        Err(e) => {
            assert!(!e.0.is_empty());
            e.0.into_iter().map(|e| (e.field, e.problem)).collect()
        }
    }
}

/// The single error's field and problem.
fn one(c: Collective) -> (String, Problem) {
    let mut e = errs(c);
    assert_eq!(e.len(), 1, "{e:#?}");
    e.remove(0)
}

fn with(f: impl FnOnce(&mut Collective)) -> Collective {
    let mut c = base();
    f(&mut c);
    c
}

#[test]
fn accepts_the_base_and_resolves_defaults() {
    let p = validate(&Program::from(base())).unwrap();
    assert_eq!(p.arch(), Arch::Cayman);
    assert_eq!(p.barrier(), Barrier::Host);
    assert_eq!(p.send_credits(), DEFAULT_SEND_CREDITS);
    assert_eq!(p.topology(), Shape { rank_n: 32, local_rank_n: 16, pod_n: 1, node_n: 2, nodes_per_pod: 2 });
    let c = &p.collectives()[0];
    assert_eq!(c.algorithm(), &ResolvedAlgorithm::Flat(AlgType::Ring));
    assert_eq!(c.groups(), &Groups::world(32));
    assert_eq!(c.channels(), 4);
    assert!(c.peers().is_empty());
}

#[test]
fn hier_resolves_in_leg_order() {
    let c = ok(with(|c| c.algorithm = hier_ar()));
    assert_eq!(
        c.algorithm(),
        &ResolvedAlgorithm::Hier(
            crate::valid::LegAlgorithms::new(&[
                (Leg::IntraReduceScatter, AlgType::Ring),
                (Leg::InterAllReduce, AlgType::SingleCycleRing),
                (Leg::IntraAllGather, AlgType::Kangaring),
            ])
            .unwrap()
        )
    );
}

#[test]
fn program_needs_a_collective() {
    let e = errs_program(Program { collectives: vec![] });
    assert_eq!(e, vec![("collectives".to_owned(), Problem::NoCollectives)]);
}

#[test]
fn program_collectives_share_settings() {
    let second = with(|c| {
        c.arch = Arch::Mariana;
        c.topology.local_rank_n = 8;
        c.barrier = Some(Barrier::Device);
        c.send_credits = Some(4);
    });
    let e = validate(&Program { collectives: vec![base(), second] }).unwrap_err();
    let got: Vec<_> = e.0.iter().map(|e| (e.collective, e.field.as_str())).collect();
    assert_eq!(got, vec![(Some(1), "arch"), (Some(1), "topology"), (Some(1), "barrier"), (Some(1), "send_credits")]);
    assert_eq!(e.0[0].problem, Problem::ArchDiffers { found: Arch::Mariana, first: Arch::Cayman });
    assert_eq!(e.0[3].problem, Problem::SendCreditsDiffers { found: 4, first: u32::from(DEFAULT_SEND_CREDITS) });
    assert_eq!(e.0[0].path(SpecForm::Program), "collectives[1].arch");
    assert_eq!(e.0[0].path(SpecForm::Collective), "arch");
    // Explicit defaults are the defaults.
    let same = with(|c| {
        c.barrier = Some(Barrier::Host);
        c.send_credits = Some(2);
    });
    let p = validate(&Program {
        collectives: vec![
            base(),
            same,
            with(|c| {
                c.op = OpType::AllGather;
                c.reduce = None;
            }),
        ],
    });
    let p = p.map_err(|e| e.to_string()).unwrap();
    assert_eq!(p.collectives().len(), 3);
    assert_eq!(p.collectives()[2].index(), 2);
    assert_eq!(p.collectives()[2].reduce(), None);
}

#[test]
fn a_shared_bad_value_is_reported_once() {
    let bad = with(|c| {
        c.send_credits = Some(0);
        c.topology.local_rank_n = 12;
    });
    let e = validate(&Program { collectives: vec![bad.clone(), bad] }).unwrap_err();
    let got: Vec<_> = e.0.iter().map(|e| (e.collective, e.field.as_str())).collect();
    assert_eq!(got, vec![(Some(0), "topology.local_rank_n"), (Some(0), "send_credits")]);
}

#[test]
fn topology_rules() {
    let e = one(with(|c| c.topology.rank_n = 0));
    assert_eq!(e, ("topology.rank_n".into(), Problem::OutOfRange { value: 0, min: 1, max: 1_048_576 }));
    let e = one(with(|c| {
        c.topology.rank_n = 2_097_152;
        c.topology.local_rank_n = 16;
    }));
    assert_eq!(e.0, "topology.rank_n");
    // 0 is refused as any other number that does not divide: a range
    // (`1..=32`) would accept 12, which is refused next.
    let e = one(with(|c| c.topology.local_rank_n = 0));
    assert_eq!(e, ("topology.local_rank_n".into(), Problem::LocalRankNNotDivisor { rank_n: 32, local_rank_n: 0 }));
    assert!(e.1.to_string().contains("accepted: a divisor of 32 (1, 2, 4, 8, 16, 32)"), "{}", e.1);
    let e = one(with(|c| c.topology.local_rank_n = 12));
    assert_eq!(e.1, Problem::LocalRankNNotDivisor { rank_n: 32, local_rank_n: 12 });
    assert!(e.1.to_string().contains("a divisor of 32 (1, 2, 4, 8, 16, 32)"), "{}", e.1);
    let e = one(with(|c| c.topology.pod_n = 0));
    assert_eq!(e, ("topology.pod_n".into(), Problem::PodNNotDivisor { node_n: 2, pod_n: 0 }));
    let e = one(with(|c| c.topology.pod_n = 3));
    assert_eq!(e.1, Problem::PodNNotDivisor { node_n: 2, pod_n: 3 });
    ok(with(|c| c.topology = Topology { rank_n: 64, local_rank_n: 16, pod_n: 4 }));
    ok(with(|c| c.topology = Topology { rank_n: 1, local_rank_n: 1, pod_n: 1 }));
}

#[test]
fn channels_range() {
    for bad in [0, 33] {
        let e = one(with(|c| c.channels = bad));
        assert_eq!(e, ("channels".into(), Problem::OutOfRange { value: u64::from(bad), min: 1, max: 32 }));
    }
    assert_eq!(ok(with(|c| c.channels = 32)).channels(), 32);
    assert_eq!(ok(with(|c| c.channels = 1)).channels(), 1);
}

#[test]
fn count_rules() {
    let zero = one(with(|c| c.count = 0));
    assert_eq!(zero, ("count".into(), Problem::CountZero { dtype: DType::Bf16, split: None }));
    // 2^64 bytes hold 2^63 Bf16 elements, less one for the byte count's
    // own top value.
    assert_eq!(zero.1.to_string(), "0 is out of range; accepted: 1..=9223372036854775807");
    let e = one(with(|c| c.count = u64::MAX / 2 + 1));
    assert_eq!(e.1, Problem::CountOverflow { count: u64::MAX / 2 + 1, dtype: DType::Bf16 });
    ok(with(|c| c.count = u64::MAX / 2));
    for op in [OpType::ReduceScatter, OpType::AllToAll] {
        let e = one(with(|c| {
            c.op = op;
            c.reduce = op.is_reducing().then_some(ReduceOp::Add);
            c.count = 1000;
        }));
        assert_eq!(e, ("count".into(), Problem::CountNotMultiple { op, count: 1000, n: 32, dtype: DType::Bf16 }));
        assert!(e.1.to_string().contains("e.g. 992 or 1024"), "{}", e.1);
        // 0 is a multiple of the group size, but leaves every member none.
        let zero = one(with(|c| {
            c.op = op;
            c.reduce = op.is_reducing().then_some(ReduceOp::Add);
            c.count = 0;
        }));
        assert_eq!(zero, ("count".into(), Problem::CountZero { dtype: DType::Bf16, split: Some((op, 32)) }));
        // The largest multiple of 32 at most 2^63 - 1 is 2^63 - 32.
        let said = zero.1.to_string();
        assert!(said.ends_with("accepted: a multiple of 32 from 32 to 9223372036854775776"), "{said}");
        // A count past what Bf16's byte count holds and not a multiple:
        // both problems, and the multiples suggested are ones the first
        // accepts (none above 2^63 - 1).
        let both = with(|c| {
            c.op = op;
            c.reduce = op.is_reducing().then_some(ReduceOp::Add);
            c.count = u64::MAX;
        });
        let said: Vec<String> = errs(both).iter().map(|e| e.1.to_string()).collect();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].ends_with("accepted: at most 9223372036854775807"), "{said:?}");
        assert!(said[1].ends_with("accepted: a multiple of 32, e.g. 9223372036854775776"), "{said:?}");
    }
    // The group size counts, not rank_n.
    ok(with(|c| {
        c.op = OpType::ReduceScatter;
        c.count = 8;
        c.groups = Some((0..8).map(|g| (4 * g..4 * g + 4).collect()).collect());
    }));
}

#[test]
fn reduce_rules() {
    assert_eq!(one(with(|c| c.reduce = None)), ("reduce".into(), Problem::ReduceMissing { op: OpType::AllReduce }));
    assert_eq!(
        one(with(|c| c.op = OpType::AllGather)),
        ("reduce".into(), Problem::ReduceRefused { op: OpType::AllGather, reduce: ReduceOp::Add })
    );
    let e = one(with(|c| {
        c.reduce = Some(ReduceOp::Average);
        c.dtype = DType::I32;
    }));
    assert_eq!(e.1, Problem::AverageNeedsFloat { dtype: DType::I32 });
    assert_eq!(ok(with(|c| c.reduce = Some(ReduceOp::Average))).reduce(), Some(ReduceOp::Average));
}

#[test]
fn root_rules() {
    let bcast = |c: &mut Collective| {
        c.op = OpType::Broadcast;
        c.reduce = None;
    };
    assert_eq!(one(with(bcast)), ("root".into(), Problem::RootMissing { op: OpType::Broadcast, n: Some(32) }));
    // What is accepted is said even where the groups, broken too, give no
    // size.
    for n in [Some(32), None] {
        let said = Problem::RootMissing { op: OpType::Broadcast, n }.to_string();
        assert!(said.contains("; accepted: "), "{said}");
    }
    assert_eq!(
        one(with(|c| c.root = Some(0))),
        ("root".into(), Problem::RootRefused { op: OpType::AllReduce, root: 0 })
    );
    let groups = Some((0..8).map(|g| (4 * g..4 * g + 4).collect()).collect::<Vec<Vec<u32>>>());
    let e = one(with(|c| {
        bcast(c);
        c.root = Some(4);
        c.groups = groups.clone();
    }));
    assert_eq!(e, ("root".into(), Problem::RootOutOfRange { root: 4, n: 4 }));
    assert!(e.1.to_string().contains("accepted: 0..=3"));
    let v = ok(with(|c| {
        bcast(c);
        c.root = Some(3);
        c.groups = groups;
    }));
    assert_eq!(v.root(), Some(3));
    // Groups with another problem (rank 32 does not exist, rank 31 is in
    // none) but of one size, 4: the root is still checked against it,
    // in the same round.
    let mut broken: Vec<Vec<u32>> = (0..8).map(|g| (4 * g..4 * g + 4).collect()).collect();
    broken[7][3] = 32;
    let e = errs(with(|c| {
        bcast(c);
        c.root = Some(4);
        c.groups = Some(broken.clone());
    }));
    assert_eq!(
        e,
        vec![
            ("root".into(), Problem::RootOutOfRange { root: 4, n: 4 }),
            ("groups[7][3]".into(), Problem::GroupRankOutOfRange { rank: 32, rank_n: 32 }),
            ("groups".into(), Problem::RanksInNoGroup { ranks: vec![31], rank_n: 32 }),
        ]
    );
    // A size no valid grouping of 32 ranks has (12 does not divide 32)
    // gives none either: the root waits for the groups.
    let twelve: Vec<Vec<u32>> = vec![(0..12).collect(), (12..24).collect()];
    let e = errs(with(|c| {
        bcast(c);
        c.root = Some(20);
        c.groups = Some(twelve);
    }));
    assert!(e.iter().all(|(f, _)| f != "root"), "{e:#?}");
    // Sizes that differ give no size to check against: the root waits.
    broken[7].pop();
    let e = errs(with(|c| {
        bcast(c);
        c.root = Some(4);
        c.groups = Some(broken);
    }));
    assert!(e.iter().all(|(f, _)| f != "root"), "{e:#?}");
}

fn send(c: &mut Collective) {
    c.op = OpType::Send;
    c.reduce = None;
}

#[test]
fn peer_shorthand_expands() {
    let v = ok(with(|c| {
        send(c);
        c.peer = Some(1);
        c.groups = Some(vec![(0..16).collect(), (16..32).collect()]);
    }));
    assert_eq!(v.peers().len(), 16);
    assert_eq!(v.peers()[0], (0, 1));
    assert_eq!(v.peers()[15], (15, 0));
    for bad in [0, 32] {
        let e = one(with(|c| {
            send(c);
            c.peer = Some(bad);
        }));
        assert_eq!(e, ("peer".into(), Problem::PeerStepOutOfRange { peer: bad, n: 32 }));
    }
}

#[test]
fn peer_map_presence() {
    assert_eq!(one(with(send)), ("peers".into(), Problem::PeerMapMissing { op: OpType::Send }));
    let e = one(with(|c| {
        send(c);
        c.peer = Some(1);
        c.peers = Some(vec![(0, 1)]);
    }));
    assert_eq!(e, ("peer".into(), Problem::PeerMapTwice));
    assert_eq!(
        one(with(|c| c.peer = Some(1))),
        ("peer".into(), Problem::PeerMapRefused { op: OpType::AllReduce, field: "peer" })
    );
    assert_eq!(
        one(with(|c| {
            send(c);
            c.peers = Some(vec![]);
        })),
        ("peers".into(), Problem::PeersEmpty)
    );
}

#[test]
fn peer_pairs() {
    let v = ok(with(|c| {
        send(c);
        c.peers = Some(vec![(0, 5), (5, 0), (1, 2)]);
    }));
    assert_eq!(v.peers(), &[(0, 5), (5, 0), (1, 2)]);
    let e = errs(with(|c| {
        send(c);
        c.peers = Some(vec![(0, 5), (0, 6), (7, 5), (3, 3), (40, 1)]);
    }));
    assert_eq!(
        e,
        vec![
            ("peers[1]".into(), Problem::PeerSourceRepeated { member: 0, first: 0 }),
            ("peers[2]".into(), Problem::PeerTargetRepeated { member: 5, first: 0 }),
            ("peers[3]".into(), Problem::PeerSelfPair { member: 3 }),
            ("peers[4]".into(), Problem::PeerOutOfRange { pair: (40, 1), n: 32 }),
        ]
    );
}

#[test]
fn counts_rules() {
    let a2av = |c: &mut Collective| {
        c.op = OpType::AllToAllV;
        c.reduce = None;
        c.count = 6;
        c.groups = Some((0..16).map(|g| vec![2 * g, 2 * g + 1]).collect());
    };
    let v = ok(with(|c| {
        a2av(c);
        c.counts = Some(vec![vec![1, 5], vec![6, 0]]);
    }));
    assert_eq!(v.counts(), Some(&[vec![1, 5], vec![6, 0]][..]));
    assert_eq!(one(with(a2av)), ("counts".into(), Problem::CountsMissing));
    assert_eq!(
        one(with(|c| c.counts = Some(vec![]))),
        ("counts".into(), Problem::CountsRefused { op: OpType::AllReduce })
    );
    let e = errs(with(|c| {
        a2av(c);
        c.counts = Some(vec![vec![1, 2, 3], vec![6, 1], vec![u64::MAX, 1]]);
    }));
    assert_eq!(
        e,
        vec![
            ("counts".into(), Problem::CountsRows { rows: 3, n: 2 }),
            ("counts[0]".into(), Problem::CountsRowLength { len: 3, n: 2 }),
            ("counts[1]".into(), Problem::CountsRowSum { sum: Some(7), count: 6 }),
            ("counts[2]".into(), Problem::CountsRowSum { sum: None, count: 6 }),
        ]
    );
    // A sum past u64 is said as what it is: at least 2^64.
    let said = Problem::CountsRowSum { sum: None, count: 6 }.to_string();
    assert!(said.starts_with("the row sums to 2^64 or more but count is 6"), "{said}");
}

#[test]
fn groups_rules() {
    let v = ok(with(|c| c.groups = Some(vec![(16..32).collect(), (0..16).collect()])));
    assert_eq!(v.groups().group_n(), 2);
    assert_eq!(v.groups().size(), 16);
    assert_eq!(one(with(|c| c.groups = Some(vec![]))), ("groups".into(), Problem::GroupsEmpty));
    let e = errs(with(|c| c.groups = Some(vec![vec![], (0..16).collect(), (16..31).collect()])));
    assert_eq!(e[0], ("groups[0]".into(), Problem::GroupEmpty));
    assert_eq!(e[1], ("groups[2]".into(), Problem::GroupSizeMismatch { size: 15, expected: 16, expected_in: 1 }));
    assert_eq!(e[2], ("groups".into(), Problem::RanksInNoGroup { ranks: vec![31], rank_n: 32 }));
    let mut second: Vec<u32> = (16..32).collect();
    second[3] = 5;
    second[4] = 32;
    let e = errs(with(|c| c.groups = Some(vec![(0..16).collect(), second])));
    assert_eq!(
        e,
        vec![
            ("groups[1][3]".into(), Problem::RankListedTwice { rank: 5, first: (0, 5) }),
            ("groups[1][4]".into(), Problem::GroupRankOutOfRange { rank: 32, rank_n: 32 }),
            ("groups".into(), Problem::RanksInNoGroup { ranks: vec![19, 20], rank_n: 32 }),
        ]
    );
    let e = one(with(|c| c.groups = Some(vec![vec![0]])));
    let text = e.1.to_string();
    assert!(text.starts_with("31 ranks are in no group: 1, 2, 3, 4, 5, 6, 7, 8 and 23 more;"), "{text}");
}

#[test]
fn barrier_and_credits() {
    let big = |c: &mut Collective| c.topology = Topology { rank_n: 1024, local_rank_n: 16, pod_n: 1 };
    let e = one(with(|c| {
        big(c);
        c.barrier = Some(Barrier::Device);
    }));
    assert_eq!(e, ("barrier".into(), Problem::DeviceBarrierTooLarge { rank_n: 1024 }));
    ok(with(big));
    ok(with(|c| {
        c.topology = Topology { rank_n: 625, local_rank_n: 25, pod_n: 1 };
        c.barrier = Some(Barrier::Device);
    }));
    for bad in [0, 512] {
        let e = one(with(|c| c.send_credits = Some(bad)));
        assert_eq!(e, ("send_credits".into(), Problem::OutOfRange { value: u64::from(bad), min: 1, max: 511 }));
    }
    let p = validate(&Program::from(with(|c| c.send_credits = Some(511)))).unwrap();
    assert_eq!(p.send_credits(), 511);
}

/// `validate_settings` reports the shared settings' problems as
/// `validate` does, in its order, with no collective index, and does not
/// look at the op, count, reduce, root or algorithm.
#[test]
fn settings_alone_are_checked_as_validation_checks_them() {
    let bad = with(|c| {
        c.channels = 0;
        c.count = 0;
        c.reduce = None;
        c.root = Some(1);
        c.topology.pod_n = 3;
        c.algorithm = Algorithm::Auto;
        c.model = Some(ccc_ir::model::ModelOverrides { dma_mbps: Some(0), ..Default::default() });
        c.send_credits = Some(600);
        c.barrier = Some(Barrier::Device);
        c.topology = Topology { rank_n: 1024, local_rank_n: 16, pod_n: 3 };
    });
    let e = validate_settings(&bad).unwrap_err();
    let got: Vec<_> = e.0.iter().map(|e| (e.collective, e.field.as_str())).collect();
    assert_eq!(
        got,
        [
            (None, "topology.pod_n"),
            (None, "channels"),
            (None, "model.dma_mbps"),
            (None, "barrier"),
            (None, "send_credits")
        ]
    );
    let settings_of_validate: Vec<_> = errs(bad)
        .into_iter()
        .map(|(f, _)| f)
        .filter(|f| ["topology", "channels", "model", "barrier", "send_credits"].iter().any(|s| f.starts_with(s)))
        .collect();
    assert_eq!(settings_of_validate, got.iter().map(|(_, f)| f.to_string()).collect::<Vec<_>>());
    // Count 0, no reduce, a root: not its business.
    assert!(
        validate_settings(&with(|c| {
            c.count = 0;
            c.reduce = None;
            c.root = Some(1);
        }))
        .is_ok()
    );
}

#[test]
fn collects_every_problem() {
    let e = errs(with(|c| {
        c.channels = 0;
        c.reduce = None;
        c.root = Some(1);
        c.topology.pod_n = 3;
        c.algorithm = Algorithm::Auto;
        c.model = Some(ccc_ir::model::ModelOverrides { dma_mbps: Some(0), ..Default::default() });
        c.send_credits = Some(600);
    }));
    let fields: Vec<_> = e.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(fields, vec!["topology.pod_n", "channels", "reduce", "root", "model.dma_mbps", "send_credits"]);
}

#[test]
fn messages_say_what_is_accepted() {
    let e = validate(&Program::from(with(|c| c.channels = 33))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "1 problem in the spec:\n  - collective 0: channels: 33 is out of range; accepted: 1..=32"
    );
    // The field is named once, before its value (not `peer: peer: 0`).
    let peer = Problem::PeerStepOutOfRange { peer: 0, n: 8 }.to_string();
    assert_eq!(peer, "0 is out of range; accepted: 1..=7 (member i sends to member (i + k) mod 8)");
    let root = Problem::RootOutOfRange { root: 16, n: 16 }.to_string();
    assert_eq!(root, "16 is not a member of a group of 16 (root is an index inside the group); accepted: 0..=15");
    assert_eq!(divisors(36), vec![1, 2, 3, 4, 6, 9, 12, 18, 36]);
    assert_eq!(divisors(1), vec![1]);
    assert_eq!(abbreviated(&[1, 2]), "1, 2");
}

fn any_alg() -> impl proptest::strategy::Strategy<Value = AlgType> {
    proptest::sample::select(AlgType::ALL.to_vec())
}

fn any_algorithm() -> impl proptest::strategy::Strategy<Value = Algorithm> {
    use proptest::prelude::*;
    let legs = proptest::collection::vec(proptest::option::of(any_alg()), 5).prop_map(|l| {
        Algorithm::Hier(HierLegs {
            intra_reduce_scatter: l[0].map(Into::into),
            inter_all_reduce: l[1].map(Into::into),
            inter_reduce_scatter: l[2].map(Into::into),
            inter_all_gather: l[3].map(Into::into),
            intra_all_gather: l[4].map(Into::into),
            choices: LegChoices::Seed,
        })
    });
    prop_oneof![any_alg().prop_map(|a| Algorithm::flat(a).unwrap_or(Algorithm::Auto)), legs,]
}

proptest::proptest! {
    /// Any spec is either accepted or refused with at least one problem;
    /// nothing panics, and an accepted spec keeps the invariants.
    #[test]
    fn never_panics(
        op in proptest::sample::select(OpType::ALL.to_vec()),
        dtype in proptest::sample::select(DType::ALL.to_vec()),
        reduce in proptest::option::of(proptest::sample::select(REDUCE_OPS.to_vec())),
        count in proptest::prop_oneof![0u64..70, proptest::num::u64::ANY],
        rank_n in 0u32..40,
        local_rank_n in 0u32..10,
        pod_n in 0u32..4,
        channels in 0u32..40,
        algorithm in any_algorithm(),
        root in proptest::option::of(0u32..40),
        peer in proptest::option::of(0u32..40),
        peers in proptest::option::of(proptest::collection::vec((0u32..40, 0u32..40), 0..6)),
        counts in proptest::option::of(proptest::collection::vec(proptest::collection::vec(0u64..8, 0..5), 0..5)),
        groups in proptest::option::of(proptest::collection::vec(proptest::collection::vec(0u32..40, 0..9), 0..6)),
        device in proptest::bool::ANY,
        send_credits in proptest::option::of(0u32..600),
    ) {
        let c = Collective {
            op, dtype, reduce, count, arch: Arch::Cayman,
            topology: Topology { rank_n, local_rank_n, pod_n },
            channels, algorithm, root, peer, peers, counts, groups,
            barrier: device.then_some(Barrier::Device), send_credits, model: None,
        };
        match validate(&Program::from(c)) {
            Ok(p) => {
                let v = &p.collectives()[0];
                let n = v.groups().size();
                proptest::prop_assert!(n >= 1);
                proptest::prop_assert_eq!(v.groups().group_n() * n, p.topology().rank_n);
                proptest::prop_assert!(v.root().is_none_or(|r| r < n));
                proptest::prop_assert!(v.peers().iter().all(|&(s, t)| s < n && t < n && s != t));
                proptest::prop_assert_eq!(v.reduce().is_some(), v.op().is_reducing());
            }
            Err(e) => proptest::prop_assert!(!e.0.is_empty()),
        }
    }
}

/// Counted nouns agree with their number in every problem that counts
/// (issue 10, item 8): "the 1 node", not "the 1 nodes".
#[test]
fn counts_of_one_read_in_the_singular() {
    let e = one(with(|c| c.topology = Topology { rank_n: 4, local_rank_n: 4, pod_n: 2 }));
    assert_eq!(e.1, Problem::PodNNotDivisor { node_n: 1, pod_n: 2 });
    assert!(e.1.to_string().starts_with("pod_n 2 does not divide the 1 node (rank_n"), "{}", e.1);
    let rows = Problem::CountsRows { rows: 1, n: 1 }.to_string();
    assert_eq!(rows, "counts has 1 row; accepted: 1 row (one per group member) of 1 entry");
    let row = Problem::CountsRowLength { len: 1, n: 2 }.to_string();
    assert_eq!(row, "the row has 1 entry; accepted: 2 (one per group member)");
    let size = Problem::GroupSizeMismatch { size: 1, expected: 2, expected_in: 0 }.to_string();
    assert!(size.starts_with("the group has 1 rank but groups[0] has 2;"), "{size}");
    let bytes = Problem::CountOverflow { count: u64::MAX, dtype: DType::I8 }.to_string();
    assert!(bytes.contains("elements of I8 (1 byte each)"), "{bytes}");
    let bytes = Problem::CountOverflow { count: u64::MAX, dtype: DType::F32 }.to_string();
    assert!(bytes.contains("elements of F32 (4 bytes each)"), "{bytes}");
}

/// An algorithm that does not serve the op names as accepted only what
/// the shape and groups let run, each of which validates when written
/// (it named Kangaring and IntraRdh for an all-gather over two nodes,
/// which run inside a node only); `Hier` stands for its combinations.
#[test]
fn an_algorithm_that_does_not_serve_names_only_what_runs_here() {
    let gather = |alg: Algorithm| Collective { op: OpType::AllGather, reduce: None, algorithm: alg, ..base() };
    let (field, problem) = one(gather(Algorithm::SingleCycleRing));
    assert_eq!(field, "algorithm");
    let Problem::AlgorithmDoesNotServe { choices, .. } = problem else { panic!("{problem:?}") };
    assert!(!choices.contains(&AlgType::Kangaring) && !choices.contains(&AlgType::IntraRdh), "{choices:?}");
    assert!(choices.contains(&AlgType::Ring) && choices.contains(&AlgType::Hier), "{choices:?}");
    for alg in choices.into_iter().filter_map(Algorithm::flat) {
        ok(gather(alg));
    }
    // So does a Hier written for an op Hier does not serve: a broadcast
    // on two nodes of one rank listed IntraRdh, which a node of one rank
    // refuses.
    let topology = Topology { rank_n: 2, local_rank_n: 1, pod_n: 1 };
    let legs = HierLegs { inter_all_gather: Some(AlgType::Ring.into()), ..HierLegs::default() };
    let broadcast = Collective::new(OpType::Broadcast, DType::Bf16, 1024, Arch::Cayman, topology)
        .root(0)
        .algorithm(Algorithm::Hier(legs));
    let (field, problem) = one(broadcast.clone());
    assert_eq!(field, "algorithm");
    let Problem::AlgorithmDoesNotServe { alg: AlgType::Hier, choices, .. } = problem else { panic!("{problem:?}") };
    assert_eq!(choices, [AlgType::Ring, AlgType::Mesh, AlgType::InterRdh]);
    for alg in choices.into_iter().filter_map(Algorithm::flat) {
        ok(Collective { algorithm: alg, ..broadcast.clone() });
    }
}

/// A spec of many bad entries lists the first [`PROBLEMS_LISTED`] problems
/// and counts the rest: a million duplicated pairs (8 MB of RON) made two
/// million problems and 237 MB of text.
#[test]
fn problems_past_those_listed_are_counted_not_kept() {
    let pairs = 4096u32;
    let topology = Topology { rank_n: 16, local_rank_n: 8, pod_n: 1 };
    let c = Collective::new(OpType::Permute, DType::F32, 64, Arch::Cayman, topology)
        .algorithm(AlgType::Ring)
        .peers(vec![(0, 1); pairs as usize]);
    let Err(e) = validate(&Program::from(c.clone())) else { panic!("accepted") };
    // Every pair after the first sends from 0 and receives at 1 again.
    assert_eq!(e.count(), 2 * u64::from(pairs - 1));
    assert_eq!(e.0.len(), PROBLEMS_LISTED + 1);
    assert_eq!(e.listed().count(), PROBLEMS_LISTED);
    let last = e.0.last().unwrap();
    assert_eq!((last.field.as_str(), &last.problem), ("...", &Problem::Unlisted { n: 2 * 4095 - 256 }));
    let text = e.to_string();
    assert!(text.starts_with("8190 problems in the spec:"), "{}", &text[..80]);
    assert!(
        text.ends_with(
            "...: 7934 more problems, not listed (validation lists the first 256); fixing those may show the others"
        ),
        "{}",
        &text[text.len() - 200..]
    );
    // Over a program, too: 64 such collectives list 256 in all.
    let p = Program { collectives: vec![c; 64] };
    let Err(e) = validate(&p) else { panic!("accepted") };
    assert_eq!((e.0.len(), e.count()), (PROBLEMS_LISTED + 1, 64 * 8190));
    assert!(e.0[..PROBLEMS_LISTED].iter().all(|e| e.collective == Some(0)));
}
