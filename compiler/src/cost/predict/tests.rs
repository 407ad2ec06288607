//! The pattern shortcut for network flows (`sends_off_from_pattern`)
//! against the generated transfers, member by member.

use super::*;
use crate::build::build;
use crate::schedule::{BlockSet, Halves, PhaseKind};
use crate::validate::validate;
use ccc_ir::arch::Arch;
use ccc_ir::enums::{HalfChunk, OpType};
use ccc_ir::spec::{Algorithm, Collective, DType, HierLegs, Program, ReduceOp, Topology};

/// Calls `f` with every phase of every built spec the tests read: every
/// flat algorithm, and Hier with ring, Kangaring, mesh, RDH and
/// single-cycle legs, over shapes (pods among them) and ops, each named.
fn each_phase(f: impl FnMut(&Schedule, &CollectivePlan, &Phase, &str)) {
    each_phase_uneven(0, f);
}

/// [`each_phase`] with `extra` more elements than 64 a rank (the blocks
/// then hold different sizes when it does not divide the group).
fn each_phase_uneven(extra: u64, f: impl FnMut(&Schedule, &CollectivePlan, &Phase, &str)) {
    let shapes = [
        Topology::new(8, 8),
        Topology::new(16, 4),
        Topology::new(32, 8).pods(2),
        Topology::new(24, 8),
        Topology::new(48, 16),
    ];
    each_phase_on(&shapes, true, extra, f);
}

/// [`each_phase_uneven`] over world groups on `shapes`, and the
/// interleaved explicit groups when `explicit`.
fn each_phase_on(
    shapes: &[Topology],
    explicit: bool,
    extra: u64,
    mut f: impl FnMut(&Schedule, &CollectivePlan, &Phase, &str),
) {
    let mut algorithms: Vec<Algorithm> = AlgType::ALL.iter().filter_map(|&a| Algorithm::flat(a)).collect();
    for (intra, inter) in [
        (AlgType::Ring, AlgType::Mesh),
        (AlgType::Kangaring, AlgType::SingleCycleRing),
        (AlgType::Kangaring, AlgType::InterRdh),
        (AlgType::Ring, AlgType::Ring),
        (AlgType::Mesh, AlgType::Mesh),
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
    // World groups on every shape, and explicit interleaved groups (two
    // groups, even and odd ranks, each with members on every node) on
    // 16 ranks of 4 a node: `node_flows`' explicit-group path.
    let interleaved: Vec<Vec<u32>> = (0..2).map(|g| (0..8).map(|i| 2 * i + g).collect()).collect();
    let worlds = shapes.iter().map(|&t| (t, None));
    let explicit = explicit.then_some((Topology::new(16, 4), Some(interleaved)));
    for (topology, groups) in worlds.chain(explicit) {
        for &op in ops {
            for algorithm in &algorithms {
                let count = u64::from(topology.rank_n) * 64 + extra;
                let mut c = Collective::new(op, DType::Bf16, count, Arch::Cayman, topology);
                c = c.algorithm(algorithm.clone());
                c.groups = groups.clone();
                if op.is_reducing() {
                    c = c.reduce(ReduceOp::Add);
                }
                if matches!(op, OpType::Broadcast | OpType::Reduce) {
                    c = c.root(topology.rank_n - 3);
                }
                if op.takes_peers() {
                    c.peers = Some(uneven_peers(topology, c.groups.as_ref()));
                }
                let Ok(valid) = validate(&Program::from(c)) else { continue };
                let Ok(schedule) = build(&valid) else { continue };
                let Some(plan) = schedule.collectives.first() else { continue };
                for phase in &plan.phases {
                    f(
                        &schedule,
                        plan,
                        phase,
                        &format!("{topology:?} {groups:?} {op:?} {algorithm:?} {:?}", phase.kind),
                    );
                }
            }
        }
    }
}

/// A peer map whose pairs leave some nodes and not others: the second
/// node's worth of members each send to the matching member of the first
/// (members `L..2L` to `0..L`, `L` ranks a node), or, in a group of fewer
/// than `2L`, the first half each to the next member.
fn uneven_peers(topology: Topology, groups: Option<&Vec<Vec<u32>>>) -> Vec<(u32, u32)> {
    let (n, l) = (groups.and_then(|g| g.first()).map_or(topology.rank_n, |g| g.len() as u32), topology.local_rank_n);
    if n >= 2 * l { (0..l).map(|i| (l + i, i)).collect() } else { (0..n / 2).map(|i| (i, (i + 1) % n)).collect() }
}

/// Every pattern's flows read from the pattern are what its generated
/// transfers say, for every member of every phase.
#[test]
fn a_patterns_sends_are_what_its_transfers_say() {
    let (mut buf, mut checked) = (Vec::new(), 0);
    each_phase(|schedule, plan, phase, name| {
        // One memo across the phase's members, as `node_flows` keeps it.
        let mut spans = SpanMemo::default();
        for m in 0..plan.groups.size() {
            let Some(off) = sends_off_from_pattern(schedule, plan, phase, m, &mut spans) else { continue };
            let walked = sends_off_walked(schedule, plan, phase, m, &mut buf);
            assert_eq!(off, walked, "{name} member {m}");
            checked += 1;
        }
    });
    assert!(checked > 1000, "{checked}");
}

/// In a phase where the pattern leaves some member's sends unnamed
/// (`sends_off_from_pattern` answers `None`), it names no member as sending
/// off its node, for every member of every phase (what lets
/// `count_flows` stop once a floor's walk budget is spent); and such
/// phases are met.
#[test]
fn a_pattern_leaving_a_member_unnamed_names_none_sending() {
    let mut unnamed_n = 0;
    each_phase(|schedule, plan, phase, name| {
        let mut spans = SpanMemo::default();
        let answers: Vec<Option<bool>> =
            (0..plan.groups.size()).map(|m| sends_off_from_pattern(schedule, plan, phase, m, &mut spans)).collect();
        if answers.contains(&None) {
            assert!(!answers.contains(&Some(true)), "{name}: {answers:?}");
            unnamed_n += 1;
        }
    });
    assert!(unnamed_n > 150, "{unnamed_n}");
}

/// An RDH phase's sends named from its pairing are what its generated
/// transfers say, for every member of every RDH phase, those off the
/// member's node among them (a prologue and epilogue too: 24 ranks pair
/// up).
#[test]
fn an_rdh_partners_sends_are_what_its_transfers_say() {
    let (mut buf, mut checked, mut off_node, mut kinds) = (Vec::new(), 0, 0, Vec::new());
    each_phase(|schedule, plan, phase, name| {
        let mut spans = SpanMemo::default();
        for m in 0..plan.groups.size() {
            let Some(off) = sends_off_from_partner(schedule, plan, phase, m, &mut spans) else { continue };
            assert_eq!(off, sends_off_walked(schedule, plan, phase, m, &mut buf), "{name} member {m}");
            (checked, off_node) = (checked + 1, off_node + usize::from(off));
            if !kinds.contains(&phase.kind.name()) {
                kinds.push(phase.kind.name());
            }
        }
    });
    assert!(checked > 1000 && off_node > 100, "{checked} {off_node}");
    assert_eq!(kinds.len(), 4, "{kinds:?}");
}

/// A direct step's load, its peers off the member's node counted rather
/// than visited (a floor's, and a prediction's while the sums stay
/// exact), is the load of the step's generated transfers to the bit, for
/// every member of every direct phase (and some are counted: world groups
/// spanning nodes and pods).
#[test]
fn a_counted_direct_load_is_the_generated_one() {
    let (mut counted, mut on_node, mut buf, mut senders) = (0, 0, Vec::new(), Vec::new());
    each_phase(|schedule, plan, phase, name| {
        let busiest = hosted_channels(schedule.arch.params(), plan.channels, 0);
        let table = DescTable::new(plan, &busiest);
        // The default cap on a transfer's links (4), none binding, one
        // link, and a cap that is not whole (on-node peers then visited).
        for hops_max in [ModelParams::of(schedule.arch).hops_max, 64.0, 1.0, 2.0, 2.5] {
            let params = ModelParams { hops_max, ..ModelParams::of(schedule.arch) };
            let every = table.every_block();
            let cx = |floor| LoadCx {
                schedule,
                plan,
                table: &table,
                cap: Cap::of(params.hops_max),
                named: true,
                floor,
                every,
            };
            for m in 0..plan.groups.size() {
                let inst = plan.instance(phase, m);
                let Some(predicted) = direct::load(&cx(false), phase, m, inst) else { continue };
                // Every block's elements and descriptors worked out, and read.
                let generated =
                    step_load(&LoadCx { every: None, ..cx(false) }, m, phase, inst, 0, &mut buf, &mut senders);
                let read = step_load(&cx(false), m, phase, inst, 0, &mut buf, &mut senders);
                assert_eq!(read, generated, "{name} member {m} hops_max {hops_max}");
                assert_eq!(predicted, generated, "{name} member {m} hops_max {hops_max}");
                let floor = direct::load(&cx(true), phase, m, inst);
                assert_eq!(floor.as_ref(), Some(&generated), "{name} member {m} hops_max {hops_max}");
                counted += usize::from(table.position_free() && generated.hops[SENT][Hop::Inter as usize] > 0.0);
                on_node += usize::from(table.position_free() && generated.ring[SENT][1] > 0.0);
            }
        }
    });
    assert!(counted > 100 && on_node > 100, "{counted} {on_node}");
}

/// A member's peers on its node, summed by ring direction, are what
/// visiting each with `ring_hops` gives, for runs of peers anywhere on a
/// node (not only the whole node a world group's direct step has, where
/// sending and hearing see the same distances), every stride and cap,
/// both sides (hearing with a sender's distances fails it; so does the
/// tie at half the node going counter-clockwise, or an uncapped link).
#[test]
fn on_node_peers_summed_by_direction_are_the_visited_ones() {
    let mut checked = 0;
    for local in 1..=64u32 {
        for stride in 1..=8u32 {
            for me in 0..local {
                let below = me / stride;
                let above = (local - 1 - me) / stride;
                for (lo, hi) in [(below, above), (below, 0), (0, above), (below / 2, above.min(1))] {
                    for cap in [1, 2, 3, 4, 7, 16, 31, 64, u64::MAX] {
                        for side in [direct::Side::Send, direct::Side::Hear { fold: true }] {
                            let mut visited = [(0u32, 0u64); 3];
                            let peers = (1..=hi).map(|j| me + j * stride).chain((1..=lo).map(|j| me - j * stride));
                            for peer in peers {
                                let (a, b) = if side == direct::Side::Send { (me, peer) } else { (peer, me) };
                                let (dir, hops) = load::ring_hops(local, a, b);
                                visited[dir].0 += 1;
                                visited[dir].1 += (hops as u64).min(cap);
                            }
                            let summed = direct::on_node_links(local, stride, (lo, hi), cap, side);
                            assert_eq!(summed, visited, "{local} {stride} {me} {lo} {hi} {cap}");
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 100_000, "{checked}");
}

/// A prediction's direct load is the generated one to the bit even when
/// the sums pass 2^53 and so depend on their order: it then visits every
/// peer (`direct::sums_exact`), where a floor, which counts them
/// whatever the sizes, does not match the generated load (counting them
/// in the prediction too makes this fail).
#[test]
fn a_prediction_visits_direct_peers_when_counted_sums_would_round() {
    let (mut buf, mut senders, mut rounded) = (Vec::new(), Vec::new(), 0);
    // About 2^49 bytes a block, 63 peers: sums near 2^55, whose last bits
    // the order of the additions moves.
    let count = (3u64 << 47) + 12_345;
    for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter] {
        let c = Collective::new(op, DType::Bf16, count * 64, Arch::Cayman, Topology::new(64, 8))
            .algorithm(Algorithm::flat(AlgType::Mesh).expect("flat"));
        let c = if op.is_reducing() { c.reduce(ReduceOp::Add) } else { c };
        let valid = validate(&Program::from(c)).expect("valid");
        let schedule = build(&valid).expect("built");
        let plan = &schedule.collectives[0];
        let busiest = hosted_channels(schedule.arch.params(), plan.channels, 0);
        let table = DescTable::new(plan, &busiest);
        let params = ModelParams::of(schedule.arch);
        let cx = |floor| LoadCx {
            schedule: &schedule,
            plan,
            table: &table,
            cap: Cap::of(params.hops_max),
            named: true,
            floor,
            every: table.every_block(),
        };
        for phase in &plan.phases {
            for m in 0..plan.groups.size() {
                let inst = plan.instance(phase, m);
                let Some(predicted) = direct::load(&cx(false), phase, m, inst) else { continue };
                let generated = step_load(&cx(false), m, phase, inst, 0, &mut buf, &mut senders);
                assert_eq!(predicted, generated, "{op:?} {:?} member {m}", phase.kind);
                rounded += usize::from(direct::load(&cx(true), phase, m, inst).as_ref() != Some(&generated));
            }
        }
    }
    assert!(rounded > 0, "no floor rounded: the sizes do not test the guard");
}

/// Phases that `FlowMemo` keys alike (`Sends`: the same scope and
/// radices, kinds whose sends the pattern names the same way) count the
/// same flows: every phase, its kind swapped for each kind keyed with
/// it, counts what it counts, for a floor and a prediction (and some of
/// them send off their node, on more than one member).
#[test]
fn phases_keyed_alike_count_alike() {
    use crate::schedule::PhaseKind as K;
    let kinds = [
        K::DirectReduceScatter,
        K::DirectAllGather,
        K::DirectAllReduce,
        K::DirectAllToAll,
        K::DirectBroadcast { root: 0 },
        K::DirectReduce { root: 0 },
        K::RingReduceScatter { bidir: false },
        K::RingReduceScatter { bidir: true },
        K::RingAllGather { bidir: false },
        K::RingAllGather { bidir: true },
        K::RingAllReduceFused,
        K::RingBroadcast { root: 0 },
        K::RingReduce { root: 0 },
        K::RingAllToAll,
    ];
    let (mut buf, mut swapped_n, mut several) = (Vec::new(), 0, 0);
    each_phase(|schedule, plan, phase, name| {
        let sends = flows::Sends::of(phase);
        for kind in kinds.into_iter().filter(|&k| k != phase.kind) {
            let swapped = Phase { kind, ..phase.clone() };
            if !sends.is(&swapped) {
                continue;
            }
            for floor in [true, false] {
                let (a, b) = (
                    node_flows(schedule, plan, phase, &mut buf, floor),
                    node_flows(schedule, plan, &swapped, &mut buf, floor),
                );
                assert_eq!(a.flows.to_bits(), b.flows.to_bits(), "{name} as {kind:?}, floor {floor}");
                several += usize::from(a.flows > 1.0);
            }
            swapped_n += 1;
        }
    });
    assert!(swapped_n > 300 && several > 100, "{swapped_n} {several}");
}

/// A phase's flows as a prediction counts them (`node_flows`: from the
/// pattern, the RDH pairing, or the walk, an RDH answer reused across
/// members at one scope position) are what the generated transfers of
/// every member on member 0's node say, for every phase.
#[test]
fn a_phases_flows_are_what_its_transfers_say() {
    let (mut buf, mut checked, mut several) = (Vec::new(), 0, 0);
    each_phase(|schedule, plan, phase, name| {
        if phase.step_n == 0 {
            return;
        }
        let node = |i: u32| plan.rank(0, i).map(|r| schedule.shape.node(r.0));
        let on_node: Vec<u32> = (0..plan.groups.size()).filter(|&i| node(i) == node(0)).collect();
        let sending = on_node.iter().filter(|&&m| sends_off_walked(schedule, plan, phase, m, &mut buf)).count();
        let groups_on_node = (schedule.shape.local_rank_n / on_node.len().max(1) as u32).max(1);
        let walked = f64::from((sending as u32).max(1) * groups_on_node);
        let counted = count_flows(schedule, plan, phase, &mut buf, false, true).flows;
        assert_eq!(counted.to_bits(), walked.to_bits(), "{name}");
        (checked, several) = (checked + 1, several + usize::from(sending > 1));
    });
    assert!(checked > 300 && several > 80, "{checked} {several}");
}

/// Where a prediction takes the busiest node's flows (an uneven halving,
/// a binomial tree, a peer map: `flows::uneven_sends`), the count is what
/// every member's generated transfers say: per node, the costed group's
/// members on it that send off it at the phase's first step (for a peer
/// map's step, or receive from off it, whichever are more), times the
/// groups that share it, the most over the nodes; and never under member
/// 0's node's.
#[test]
fn the_busiest_nodes_flows_are_what_the_transfers_say() {
    let (mut buf, mut checked, mut raised, mut peers) = (Vec::new(), 0, 0, 0);
    let shapes = [Topology::new(24, 8), Topology::new(48, 16), Topology::new(12, 4), Topology::new(64, 8)];
    each_phase_on(&shapes, true, 0, |schedule, plan, phase, name| {
        if phase.step_n == 0 || !flows::uneven_sends(plan, phase) {
            return;
        }
        let shape = &schedule.shape;
        let g = plan.groups.modelled();
        let p2p = matches!(phase.kind, PhaseKind::PointToPoint);
        let node = |m: u32| shape.node(plan.rank(g, m).unwrap().0);
        let mut per_node: std::collections::BTreeMap<u32, (u32, u32, u32)> = std::collections::BTreeMap::new();
        for m in 0..plan.groups.size() {
            buf.clear();
            schedule.transfers(plan, g, m, phase.first_step, &mut buf);
            let off = buf.iter().any(|t| t.from == m && node(t.to) != node(m));
            let into = p2p && buf.iter().any(|t| t.to == m && node(t.from) != node(m));
            let e = per_node.entry(node(m)).or_default();
            *e = (e.0 + 1, e.1 + u32::from(off), e.2 + u32::from(into));
        }
        let walked = per_node
            .values()
            .map(|&(on, off, into)| {
                f64::from(off.max(into).max(1)) * f64::from((shape.local_rank_n / on.max(1)).max(1))
            })
            .fold(1.0, f64::max);
        let predicted = node_flows(schedule, plan, phase, &mut buf, false).flows;
        let member0 = count_flows(schedule, plan, phase, &mut buf, false, true).flows;
        assert_eq!(predicted.to_bits(), walked.max(member0).to_bits(), "{name}");
        checked += 1;
        raised += usize::from(walked > member0);
        peers += usize::from(p2p && walked > member0);
    });
    assert!(checked > 50 && raised > 5 && peers > 5, "{checked} {raised} {peers}");
}

/// A phase's flows counted with node 0's members at one position taking
/// the first one's answer by arithmetic (`count_flows`, on world groups
/// whose phase stride is whole nodes), and a floor's count stopped once its
/// walk budget is spent, are what the members counted one by one give, for
/// a floor (its walk budget too) and a prediction, and both shortcuts are
/// taken (inter-leg phases over several nodes; RDH rounds over the world,
/// on nodes of up to 32 ranks, where the members left once the budget is
/// spent are more than the counted ones).
#[test]
fn flows_counted_alike_are_the_member_by_member_ones() {
    let (mut buf, mut alike, mut cut) = (Vec::new(), 0, 0);
    let mut check = |schedule: &Schedule, plan: &CollectivePlan, phase: &Phase, name: &str| {
        for floor in [true, false] {
            let shortcut = count_flows(schedule, plan, phase, &mut buf, floor, true);
            let one_by_one = count_flows(schedule, plan, phase, &mut buf, floor, false);
            let got = (shortcut.flows.to_bits(), shortcut.walked, shortcut.skipped);
            assert_eq!(
                got,
                (one_by_one.flows.to_bits(), one_by_one.walked, one_by_one.skipped),
                "{name}, floor {floor}"
            );
        }
        let stride = phase.scope.placer(&plan.radices).around(0).stride;
        let l = schedule.shape.local_rank_n;
        alike += usize::from(
            !plan.groups.is_explicit() && stride >= l && stride.is_multiple_of(l) && plan.groups.size() > l,
        );
        let spent = count_flows(schedule, plan, phase, &mut buf, true, false).skipped;
        cut += usize::from(!plan.groups.is_explicit() && spent && l > 2 * (flows::FLOOR_WALKED + 1));
    };
    each_phase(&mut check);
    each_phase_on(&[Topology::new(64, 32)], false, 0, &mut check);
    assert!(alike > 50 && cut > 10, "{alike} {cut}");
}

/// A member a prediction skips as a twin of an earlier one
/// (`twins::alike`) has that member's load at every sampled step, to the
/// bit: the load the walk finds (a direct step's named, the others
/// generated unlabelled) and the load of the generated, labelled
/// transfers, for every pair of members of every phase where twins are
/// looked for (world groups over nodes and pods; the interleaved groups
/// are not), with counts that split evenly and (where no twin is looked
/// for: the blocks differ in size) not. Each member is held to the first
/// member it is a twin of, as the walk skips it; twins found by whole
/// nodes apart and by a scope stride of whole nodes, across pods, are
/// among them.
#[test]
fn a_twin_costs_what_its_twin_costs() {
    let (mut buf, mut senders, mut twins, mut by_stride, mut pods) = (Vec::new(), Vec::new(), 0, 0, 0);
    let mut check = |schedule: &Schedule, plan: &CollectivePlan, phase: &Phase, name: &str| {
        let busiest = hosted_channels(schedule.arch.params(), plan.channels, 0);
        let table = DescTable::new(plan, &busiest);
        if !twins::may_have_twins(plan, &table, phase) {
            return;
        }
        let cap = Cap::of(ModelParams::of(schedule.arch).hops_max);
        let every = table.every_block();
        let cx = |named: bool| LoadCx {
            schedule,
            plan,
            table: &table,
            cap,
            named,
            floor: false,
            every: every.filter(|_| named),
        };
        let shape = &schedule.shape;
        let insts: Vec<PhaseInstance> = (0..plan.groups.size()).map(|m| plan.instance(phase, m)).collect();
        let mut loads = |m: u32, t: u32| {
            let inst = insts[m as usize];
            let walked = direct::load(&cx(true), phase, m, inst)
                .unwrap_or_else(|| step_load(&cx(true), m, phase, inst, t, &mut buf, &mut senders));
            (walked, step_load(&cx(false), m, phase, inst, t, &mut buf, &mut senders))
        };
        for b in 0..plan.groups.size() {
            let ib = insts[b as usize];
            let Some(a) = (0..b).find(|&a| twins::alike(shape, (a, insts[a as usize]), (b, ib))) else { continue };
            for t in sampled_steps(phase.step_n, walked_steps(phase)).0 {
                let (twin, first) = (loads(b, t), loads(a, t));
                assert_eq!(twin, first, "{name}: member {b} (twin of {a}), step {t}");
            }
            twins += 1;
            let local = shape.local_rank_n;
            by_stride += usize::from((b - a) % local != 0);
            pods += usize::from(shape.pod_n > 1 && shape.pod(a) != shape.pod(b));
        }
    };
    each_phase_uneven(0, &mut check);
    each_phase_uneven(3, &mut check);
    assert!(twins > 3000 && by_stride > 1000 && pods > 200, "{twins} {by_stride} {pods}");
}

/// A narrowing's key (`flows::Narrowing`, packed into one number when it
/// fits) is another narrowing's exactly when the two lists are equal, for
/// every list of up to four scopes over the group's digits, and lists too
/// long to pack are listed and still told apart.
#[test]
fn narrowings_keyed_alike_are_equal() {
    use crate::schedule::{DIGITS, Scope};
    use flows::Narrowing;
    let scopes: Vec<Scope> =
        (0..=DIGITS as u8).flat_map(|lo| (lo..=DIGITS as u8).map(move |hi| Scope { lo, hi })).collect();
    let mut lists: Vec<Vec<Scope>> = vec![Vec::new()];
    for len in 1..=4 {
        let longer: Vec<Vec<Scope>> = lists
            .iter()
            .filter(|l| l.len() == len - 1)
            .flat_map(|l| scopes.iter().map(move |&s| [l.as_slice(), &[s]].concat()))
            .collect();
        lists.extend(longer);
    }
    // Too long to pack: 16 scopes.
    let long = vec![Scope::WHOLE; 16];
    lists.push(long.clone());
    lists.push([long.as_slice(), &[Scope { lo: 0, hi: 1 }]].concat());
    let mut packed = 0;
    for a in &lists {
        let key = Narrowing::of(a);
        packed += usize::from(matches!(key, Narrowing::Packed(_)));
        for b in &lists {
            assert_eq!(key.is(b, Narrowing::packed(b)), a == b, "{a:?} {b:?}");
        }
    }
    assert_eq!(packed, lists.len() - 2);
}

/// When every block is alike (`DescTable::every_block`), its elements and
/// descriptors are what the layout and the table work out for every block
/// of every member and for block sets of every start, stride, size and
/// halves, over every op and algorithm of the grid, with counts that split
/// evenly and not (where none is alike: some blocks are one bigger).
#[test]
fn every_block_alike_reads_what_is_worked_out() {
    let (mut alike, mut not) = (0, 0);
    let mut check = |schedule: &Schedule, plan: &CollectivePlan, phase: &Phase, _: &str| {
        // Once a plan.
        if plan.phases.first() != Some(phase) {
            return;
        }
        let busiest = hosted_channels(schedule.arch.params(), plan.channels, 0);
        let table = DescTable::new(plan, &busiest);
        let Some(every) = table.every_block() else {
            not += 1;
            return;
        };
        let (layout, n) = (plan.layout(), plan.layout().block_n());
        for member in 0..plan.groups.size() {
            for b in 0..n {
                assert_eq!(every.elems, layout.block_elems(member, b), "{:?} member {member} block {b}", plan.kind);
            }
            for (start, stride) in (0..n).flat_map(|s| (1..4).map(move |d| (s, d))) {
                for count in 0..=(n - start).div_ceil(stride) {
                    let blocks = BlockSet { start, stride, count };
                    for halves in [Halves::Both, Halves::Only(HalfChunk::H0), Halves::Only(HalfChunk::H1)] {
                        let worked = table.count(member, blocks, halves);
                        assert_eq!(every.count(blocks, halves), worked, "{:?} {blocks:?} {halves:?}", plan.kind);
                    }
                }
            }
        }
        alike += 1;
    };
    each_phase_uneven(0, &mut check);
    each_phase_uneven(3, &mut check);
    assert!(alike > 100 && not > 100, "{alike} {not}");
}
