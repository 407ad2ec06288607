//! `Auto` never chooses what lowering refuses (`cost::auto::legal`,
//! `docs/cost-model.md` §4): a candidate whose schedule needs more mesh
//! events on a TOP_SP than the arch has, more increments on one mesh
//! event than a u16 counts, or more descriptors in one step than
//! `VAL_MASK`, is dropped before it is costed. The counts are lowering's,
//! member by member and record by record; every choice over a grid
//! lowers; the exhaustive reference drops the same candidates; and when
//! nothing is left validation says why.
use super::cost_auto::{OPS, collective};
use ccc_compiler::build::build;
use ccc_compiler::cost::auto::legal::{
    DESCRIPTORS_MAX, Peaks, Refusal, TARGET_MAX, Unit, events_needed, events_over, phase_events, phase_peaks, refusal,
    step_bound,
};
use ccc_compiler::cost::auto::{Machine, NoChoice, check_against, choose, choose_exhaustive, display};
use ccc_compiler::lower::{Limit, LowerErrorKind, lower};
use ccc_compiler::pipeline::{Options, compile_source};
use ccc_compiler::schedule::{CollectivePlan, Phase, Schedule};
use ccc_compiler::valid::{ResolvedAlgorithm, ValidProgram};
use ccc_compiler::validate::{Problem, validate};
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, DevicePattern, OpType};
use ccc_ir::id::Rank;
use ccc_ir::spec::{Algorithm, Collective, DType, HierLegs, LegAlgorithm, Program, ReduceOp, Topology};

/// Every algorithm validation accepts written out for `c`, in `Auto`'s
/// order (flat ones in `enc_alg_type` order, then every combination of
/// the seed's leg sets, the first leg outermost), whether it lowers or
/// not: the candidates before the legality rule.
fn written_candidates(c: &Collective) -> Vec<ResolvedAlgorithm> {
    let resolved = |algorithm: Algorithm| {
        validate(&Program::from(c.clone().algorithm(algorithm))).ok().map(|p| *p.collectives()[0].algorithm())
    };
    let mut out: Vec<ResolvedAlgorithm> =
        AlgType::ALL.iter().filter(|&&a| a != AlgType::Hier).filter_map(|&a| resolved(Algorithm::flat(a)?)).collect();
    let Some(legs) = ccc_compiler::algorithms::hier_legs(c.op) else { return out };
    let mut combos = vec![HierLegs::new()];
    for &leg in legs {
        combos = combos
            .into_iter()
            .flat_map(|base| ccc_compiler::algorithms::leg_choices(leg).iter().map(move |&a| base.clone().with(leg, a)))
            .collect();
    }
    out.extend(combos.into_iter().filter_map(|legs| resolved(Algorithm::Hier(legs))));
    out
}

/// `c` validated under `algorithm` (one of [`written_candidates`]) and built.
pub fn built(c: &Collective, algorithm: &ResolvedAlgorithm) -> (ValidProgram, Schedule) {
    let program = validate(&Program::from(c.clone().algorithm(written(algorithm)))).unwrap();
    let schedule = build(&program).unwrap();
    (program, schedule)
}

/// `algorithm` as a spec writes it.
fn written(algorithm: &ResolvedAlgorithm) -> Algorithm {
    match algorithm {
        ResolvedAlgorithm::Flat(a) => Algorithm::flat(*a).unwrap(),
        ResolvedAlgorithm::Hier(legs) => {
            Algorithm::Hier(legs.iter().fold(HierLegs::new(), |h, &(leg, a)| h.with(leg, a)))
        }
    }
}

/// Lowering `x.rank` alone runs out of mesh events at `x.collective`, by
/// the count `x` says (its own need and what the ones before it spent).
fn assert_runs_out(program: &ValidProgram, x: ccc_compiler::cost::auto::legal::Exceeded, name: &str) {
    let alone = Options { verify: false, ranks: vec![Rank(x.rank.unwrap())], ..Options::default() };
    let Err(ccc_compiler::pipeline::CompileError::Lower(e)) = ccc_compiler::pipeline::compile(program, &alone) else {
        panic!("{name}: rank {:?} lowers", x.rank)
    };
    let LowerErrorKind::Limit { limit: Limit::MeshEvents, value, .. } = e.kind else { panic!("{name}: {e}") };
    assert_eq!(
        (value, e.collective.map(|c| c.0)),
        (x.refusal.needed + u64::from(x.spent), Some(x.collective)),
        "{name}"
    );
}

/// Shapes whose mesh choices need from a few mesh events to more than a
/// TOP_SP has, on one node and across nodes and pods.
fn mesh_shapes() -> Vec<Topology> {
    vec![
        Topology::new(8, 8),
        // Not a power of two: RDH's prologue and epilogue reach some members only.
        Topology::new(24, 24),
        Topology::new(16, 4),
        Topology::new(32, 16),
        Topology::new(64, 64),
        Topology::new(64, 8).pods(2),
        Topology::new(128, 16).pods(2),
    ]
}

fn mesh_events_error(kind: &LowerErrorKind) -> Option<u64> {
    match kind {
        LowerErrorKind::Limit { limit: Limit::MeshEvents, value, .. } => Some(*value),
        _ => None,
    }
}

fn phases(plan: &CollectivePlan) -> Vec<(&CollectivePlan, &Phase)> {
    plan.phases.iter().map(|p| (plan, p)).collect()
}

/// The brief's reproducer: 256 ranks, 64 per node, 2 pods, on Sunda.
/// `Auto` used to choose BwOptMesh (63 mesh events on a TOP_SP, 50 allowed),
/// which lowering then refused; now every legal choice lowers and the
/// choice is one of them.
#[test]
fn the_reproducer_compiles() {
    let c = collective(OpType::AllReduce, 8, Arch::Sunda, Topology::new(256, 64).pods(2)).algorithm(Algorithm::Auto);
    let program = validate(&Program::from(c.clone())).unwrap();
    let auto = program.collectives()[0].auto().unwrap();
    let names: Vec<String> = auto.alternatives.iter().map(|a| display(&a.algorithm)).collect();
    assert!(!names.contains(&"BwOptMesh".to_owned()), "{names:?}");
    let schedule = build(&program).unwrap();
    for rank in [0, 255] {
        lower(&schedule, Rank(rank)).unwrap_or_else(|e| panic!("{e}"));
    }
    // Written out, BwOptMesh is still refused by lowering, as before, at
    // its first step (63 events there), naming what it needs in all: what
    // `Auto`'s legality counts.
    let (_, bw) = built(&c, &ResolvedAlgorithm::Flat(AlgType::BwOptMesh));
    let err = lower(&bw, Rank(0)).unwrap_err();
    let needed = events_needed(&bw.shape, &phases(&bw.collectives[0]));
    assert_eq!(mesh_events_error(&err.kind), Some(u64::from(needed)), "{err}");
    assert_eq!((needed, err.step.map(|s| s.0)), (132, Some(0)), "{err}");
}

/// Every `Auto` choice over shapes to 1024 ranks and 2 pods, every op,
/// tiny to large sizes and one of 64 TiB (whose steps post more than
/// `VAL_MASK` descriptors on some candidates), Sunda (50 events) and each
/// other arch (108), lowers on rank 0, the last rank and the root.
#[test]
fn every_auto_choice_lowers() {
    let shapes = [
        Topology::new(8, 8),
        Topology::new(32, 16),
        Topology::new(64, 64),
        Topology::new(128, 16).pods(2),
        Topology::new(256, 64).pods(2),
        Topology::new(1024, 64),
        Topology::new(1024, 64).pods(2),
    ];
    let others = [Arch::Cayman, Arch::Mariana, Arch::MarianaPlus];
    let mut lowered = 0;
    for (s, &topology) in shapes.iter().enumerate() {
        for (o, &op) in OPS.iter().enumerate() {
            for (b, bytes) in [8u64, 64 << 10, 64 << 20, 1 << 46].into_iter().enumerate() {
                for arch in [Arch::Sunda, others[(s + o + b) % others.len()]] {
                    let c = collective(op, bytes, arch, topology).algorithm(Algorithm::Auto);
                    // Some ops do not serve every shape and size.
                    let Ok(program) = validate(&Program::from(c)) else { continue };
                    let schedule = build(&program).unwrap();
                    let rank_n = topology.rank_n;
                    for rank in [0, rank_n - 1, rank_n / 2 + 1] {
                        lower(&schedule, Rank(rank)).unwrap_or_else(|e| {
                            let chose = display(program.collectives()[0].algorithm());
                            panic!("{op} {bytes} B {arch} {topology:?}: Auto chose {chose}: {e}")
                        });
                    }
                    lowered += 1;
                }
            }
        }
    }
    assert!(lowered >= 200, "{lowered}");
}

/// For every candidate with a mesh phase over a grid of shapes, ops and
/// archs, on every rank (ranks 0, 1, the root and the last on the
/// largest): each MESH record has the events `phase_events` counts for
/// its member; where lowering refuses the limit, its count is the sum
/// through the refused record; `events_needed` is the most any rank
/// needs and `events_over` refuses exactly the candidates lowering does
/// (and, against any limit, says so with the count).
#[test]
fn the_count_is_what_lowering_gives() {
    let shapes = mesh_shapes();
    let (mut candidates, mut refused, mut records) = (0, 0, 0);
    for &topology in &shapes {
        for &op in &OPS {
            for arch in [Arch::Sunda, Arch::Cayman] {
                let c = collective(op, 64 << 10, arch, topology);
                let max = u32::from(arch.params().mesh_event_max);
                for algorithm in written_candidates(&c) {
                    let (_, schedule) = built(&c, &algorithm);
                    let plan = &schedule.collectives[0];
                    if !plan.phases.iter().any(|p| p.alg.pattern() == Some(DevicePattern::Mesh)) {
                        continue;
                    }
                    candidates += 1;
                    let name = format!("{op} {arch} {topology:?} {}", display(&algorithm));
                    let rank_n = topology.rank_n;
                    let every = rank_n <= 64;
                    let ranks: Vec<u32> =
                        if every { (0..rank_n).collect() } else { vec![0, 1, rank_n / 2 + 1, rank_n - 1] };
                    let (mut most, mut any_refused) = (0u32, false);
                    let mut out = Vec::new();
                    for rank in ranks {
                        let member = plan.groups.locate(Rank(rank)).unwrap().index();
                        let mut count = |p: &Phase| phase_events(&schedule.shape, plan, p, member, &mut out);
                        match lower(&schedule, Rank(rank)) {
                            Ok(program) => {
                                for tp in &program.topsps {
                                    let mut total = 0;
                                    for r in tp.records() {
                                        let phase = &plan.phases[r.phase as usize];
                                        let want = if phase.alg.pattern() == Some(DevicePattern::Mesh) {
                                            phase_events(&schedule.shape, plan, phase, member, &mut out)
                                        } else {
                                            0
                                        };
                                        assert_eq!(
                                            r.events.len() as u32,
                                            want,
                                            "{name}: rank {rank} phase {}",
                                            r.phase
                                        );
                                        total += want;
                                        records += 1;
                                    }
                                    most = most.max(total);
                                }
                            }
                            Err(e) => {
                                // Lowering names the step where the events
                                // first go past the table, and what the
                                // collective needs in all.
                                let value = mesh_events_error(&e.kind).unwrap_or_else(|| panic!("{name}: {e}"));
                                let (at, _) = plan.phase_at(e.step.unwrap().0).unwrap();
                                let upto: u32 = plan.phases[..=at].iter().map(&mut count).sum();
                                assert!(upto > max, "{name}: rank {rank}: {upto} events by the step named");
                                let through: u32 = plan.phases.iter().map(count).sum();
                                assert_eq!(u64::from(through), value, "{name}: rank {rank}");
                                most = most.max(through);
                                any_refused = true;
                            }
                        }
                    }
                    let needed = events_needed(&schedule.shape, &phases(plan));
                    let over = events_over(&schedule.shape, &phases(plan), max);
                    if every {
                        assert_eq!(over.is_some(), any_refused, "{name}: {over:?}");
                        if !any_refused {
                            assert_eq!(needed, most, "{name}");
                        }
                    } else if any_refused {
                        assert!(over.is_some(), "{name}");
                    }
                    assert!(needed >= most, "{name}: {needed} < {most}");
                    assert_eq!(over, (needed > max).then_some(needed), "{name}");
                    // Against any limit, not only the arch's: the phases'
                    // bounds settle it only where they are exact.
                    for m in 0..needed {
                        assert_eq!(events_over(&schedule.shape, &phases(plan), m), Some(needed), "{name} {m}");
                    }
                    refused += usize::from(over.is_some());
                }
            }
        }
    }
    assert!(candidates >= 200 && refused >= 20 && records >= 10_000, "{candidates} {refused} {records}");
}

/// `choose` and `choose_exhaustive` over every written candidate, the
/// refused ones included (for mesh events, and at 256 GiB, 16 and 64 TiB
/// for the descriptors per step): they drop the same ones (the reference judges
/// each whole schedule) and keep their promises over the rest; none they
/// keep is refused by lowering on rank 0.
#[test]
fn the_exhaustive_reference_drops_the_same_candidates() {
    let shapes =
        [Topology::new(32, 16), Topology::new(64, 32), Topology::new(128, 16).pods(2), Topology::new(256, 64).pods(2)];
    let (mut dropped, mut stepped, mut none_left) = (0, 0, 0);
    for &topology in &shapes {
        for &op in &[OpType::AllReduce, OpType::AllToAll, OpType::Reduce] {
            for arch in [Arch::Sunda, Arch::Cayman] {
                for bytes in [8u64, 1 << 20, 1 << 38, 1 << 44, 1 << 46] {
                    let c = collective(op, bytes, arch, topology);
                    let name = format!("{op} {bytes} B {arch} {topology:?}");
                    let all = written_candidates(&c);
                    let (program, _) = built(&c, &all[0]);
                    let vc = &program.collectives()[0];
                    let machine = Machine::of(&program);
                    let fast = choose(vc, machine, vc.model(), all.clone(), Vec::new());
                    let every = choose_exhaustive(vc, machine, vc.model(), all.clone(), Vec::new());
                    let fast = match (fast, every) {
                        (Ok(fast), Ok(every)) => {
                            check_against(&fast, &every).unwrap_or_else(|e| panic!("{name}: {e}"));
                            fast.alternatives
                        }
                        (Err(fast), Err(every)) => {
                            assert_eq!(fast, every, "{name}");
                            none_left += 1;
                            Vec::new()
                        }
                        (fast, every) => panic!("{name}: {fast:?} against {every:?}"),
                    };
                    for algorithm in &all {
                        let kept = fast.iter().any(|a| &a.algorithm == algorithm);
                        let (_, schedule) = built(&c, algorithm);
                        let lowers = lower(&schedule, Rank(0)).is_ok();
                        assert!(!kept || lowers, "{name}: kept {}", display(algorithm));
                        let plan = &schedule.collectives[0];
                        let judged = refusal(
                            &schedule.shape,
                            arch.params(),
                            u32::from(arch.params().mesh_event_max),
                            &phases(plan),
                        );
                        assert_eq!(kept, judged.is_none(), "{name}: {}: {judged:?}", display(algorithm));
                        dropped += usize::from(!kept);
                        stepped += usize::from(judged.is_some_and(|r| r.limit != Limit::MeshEvents));
                    }
                }
            }
        }
    }
    assert!(dropped >= 20 && stepped >= 20 && none_left >= 1, "{dropped} {stepped} {none_left}");
}

/// Per-leg `Auto` with a written Mesh inter leg over 32 nodes on Sunda:
/// every combination needs 62 events (50 allowed), so validation refuses
/// the spec, naming the field, the limit and what would be accepted; the
/// exhaustive reference gives the same reason.
#[test]
fn no_legal_choice_left_is_a_validation_error() {
    let legs = HierLegs::new()
        .intra_reduce_scatter(LegAlgorithm::Auto)
        .inter_all_reduce(AlgType::Mesh)
        .intra_all_gather(LegAlgorithm::Auto);
    let on = |arch| collective(OpType::AllReduce, 256, arch, Topology::new(64, 2));
    let c = on(Arch::Sunda).algorithm(Algorithm::Hier(legs.clone()));
    let errors = validate(&Program::from(c.clone())).unwrap_err().0;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field, "algorithm");
    let Problem::AutoNoneLowers { needed, max, ref fewest, .. } = errors[0].problem else {
        panic!("{:?}", errors[0].problem)
    };
    assert_eq!((needed, max), (62, 50));
    assert_eq!(fewest, "Hier(intra_reduce_scatter=Ring, inter_all_reduce=Mesh, intra_all_gather=Ring)");
    let text = errors[0].to_string();
    assert!(text.contains("mesh events per TOP_SP") && text.contains("accepted:"), "{text}");
    // On Cayman (108 events) the same spec is legal.
    assert!(validate(&Program::from(on(Arch::Cayman).algorithm(Algorithm::Hier(legs)))).is_ok());
    // The reference refuses it alike.
    let written = written_candidates(&c.algorithm(Algorithm::Auto));
    let mesh: Vec<ResolvedAlgorithm> = written
        .into_iter()
        .filter(|a| matches!(a, ResolvedAlgorithm::Hier(l) if l.iter().any(|&(_, alg)| alg == AlgType::Mesh)))
        .collect();
    let (program, _) = built(&on(Arch::Sunda), &mesh[0]);
    let vc = &program.collectives()[0];
    let machine = Machine::of(&program);
    let fast = choose(vc, machine, vc.model(), mesh.clone(), Vec::new()).unwrap_err();
    let every = choose_exhaustive(vc, machine, vc.model(), mesh, Vec::new()).unwrap_err();
    assert_eq!(fast, every);
    assert!(matches!(fast, NoChoice::Limit { limit: Limit::MeshEvents, needed: 62, max: 50, .. }), "{fast:?}");
}

/// The limit of a lowering refusal that depends on the choice, with the
/// value lowering names.
fn choice_limit(kind: &LowerErrorKind) -> Option<(Limit, u64)> {
    match kind {
        LowerErrorKind::Limit {
            limit: limit @ (Limit::MeshEvents | Limit::MeshEventTarget | Limit::TpIncrement),
            value,
            ..
        } => Some((*limit, *value)),
        _ => None,
    }
}

/// Per phase of the schedule's collective, what lowering gives the
/// records of `ranks`: the most descriptors one step posts in one
/// direction on any TOP_SP, and the most increments any mesh event
/// counts; the first rank that does not lower, and why, otherwise.
fn lowered_peaks(schedule: &Schedule, ranks: &[u32]) -> Result<Vec<Peaks>, (u32, LowerErrorKind)> {
    let plan = &schedule.collectives[0];
    let mut most = vec![Peaks::default(); plan.phases.len()];
    for &rank in ranks {
        let program = lower(schedule, Rank(rank)).map_err(|e| (rank, e.kind))?;
        for r in program.topsps.iter().flat_map(|tp| tp.records()) {
            let m = &mut most[r.phase as usize];
            for e in r.tp.iter() {
                m.descriptors = m.descriptors.max(u64::from(e.m2s.max(e.s2m)));
            }
            m.target = r.event_targets.iter().fold(m.target, |t, &e| t.max(e));
        }
    }
    Ok(most)
}

/// An AllToAllV over `topology` whose members send uneven counts (each
/// row a rotation of the same sizes, so every row sums alike).
fn all_to_all_v(bytes: u64, arch: Arch, topology: Topology) -> Collective {
    let n = u64::from(topology.rank_n);
    let base = (bytes / 2 / n / n).max(1);
    let counts: Vec<Vec<u64>> = (0..n).map(|i| (0..n).map(|j| base + (i + j) % n).collect()).collect();
    let count = counts[0].iter().sum();
    Collective::new(OpType::AllToAllV, DType::Bf16, count, arch, topology).counts(counts)
}

/// Over every candidate of a grid of shapes, ops (AllToAllV among them),
/// archs, channel counts and uneven sizes, every rank lowered: each
/// phase's count (`phase_peaks`) is the most descriptors one step of any
/// rank posts in one direction on any TOP_SP, and the most increments
/// any of its mesh events counts; the pattern's bound (`step_bound`) is
/// at least that, and for a mesh phase's events equal to it.
#[test]
fn the_step_counts_are_what_lowering_gives() {
    let shapes =
        [Topology::new(8, 8), Topology::new(12, 12), Topology::new(16, 4), Topology::new(24, 8), Topology::new(32, 16)];
    let archs = [Arch::Sunda, Arch::Cayman, Arch::Mariana];
    let (mut phases, mut meshes, mut uneven, mut quiet) = (0, 0, 0, 0);
    let mut out = Vec::new();
    for (s, &topology) in shapes.iter().enumerate() {
        for (o, op) in OPS.iter().copied().chain([OpType::AllToAllV]).enumerate() {
            for (b, bytes) in [8u64, 3 << 20].into_iter().enumerate() {
                let arch = archs[(s + o + b) % archs.len()];
                let channels = [1u32, 5, 32][(s + o + 2 * b) % 3];
                let mut c = if op == OpType::AllToAllV {
                    all_to_all_v(bytes, arch, topology)
                } else {
                    collective(op, bytes, arch, topology)
                };
                if !matches!(op, OpType::ReduceScatter | OpType::AllToAll | OpType::AllToAllV) {
                    // Blocks of two sizes: the first ones hold one element more.
                    c.count += 3;
                    uneven += 1;
                }
                let c = c.channels(channels);
                let ranks: Vec<u32> = (0..topology.rank_n).collect();
                for algorithm in written_candidates(&c) {
                    let (_, schedule) = built(&c, &algorithm);
                    let plan = &schedule.collectives[0];
                    let name = format!("{op} {bytes} B {arch} {channels} ch {topology:?} {}", display(&algorithm));
                    let lowered = lowered_peaks(&schedule, &ranks).unwrap_or_else(|e| panic!("{name}: {e:?}"));
                    let unit = Unit::of(arch.params(), plan);
                    for (i, phase) in plan.phases.iter().enumerate() {
                        let exact = phase_peaks(&schedule.shape, arch.params(), plan, phase, &mut out);
                        assert_eq!(exact, lowered[i], "{name}: phase {i} {}", phase.kind);
                        let bound = step_bound(unit, plan, phase);
                        let at_least = bound.descriptors >= exact.descriptors && bound.target >= exact.target;
                        assert!(at_least, "{name}: phase {i} {}: {bound:?} under {exact:?}", phase.kind);
                        // The shortcut that skips the bounds is sound.
                        assert!(!unit.quiet(plan) || bound.fits(), "{name}: phase {i} {}: {bound:?}", phase.kind);
                        quiet += usize::from(unit.quiet(plan));
                        let mesh = phase.alg.pattern() == Some(DevicePattern::Mesh);
                        let peers = phase.scope.size(&plan.radices) > 1;
                        if mesh && peers && phase.kind.name() != "point_to_point" {
                            assert_eq!(bound.target, exact.target, "{name}: phase {i} {}", phase.kind);
                            meshes += 1;
                        }
                        phases += 1;
                    }
                }
            }
        }
    }
    assert!(phases >= 1_000 && meshes >= 200 && uneven >= 20 && quiet >= 500, "{phases} {meshes} {uneven} {quiet}");
}

/// Over every candidate of small shapes, every op (AllToAllV among
/// them), at sizes whose steps post about `VAL_MASK` descriptors (256
/// GiB, where only a direct all-reduce's `k (k - 1)` blocks in a step
/// pass it, to 64 TiB) on 1 or 4 channels: `refusal` refuses exactly the candidates
/// that some rank fails to lower for a limit that depends on the choice,
/// naming the limit and the count lowering names; every other candidate
/// lowers on every rank.
#[test]
fn the_step_limits_refuse_what_lowering_refuses() {
    let shapes = [Topology::new(8, 8), Topology::new(12, 12), Topology::new(16, 4)];
    let (mut kept, mut refused) = (0, 0);
    for (s, &topology) in shapes.iter().enumerate() {
        for (o, op) in OPS.iter().copied().chain([OpType::AllToAllV]).enumerate() {
            for bytes in [1u64 << 38, 1 << 40, 1 << 42, 1 << 44, 1 << 46] {
                for channels in [1u32, 4] {
                    let arch = [Arch::Sunda, Arch::Cayman][(s + o) % 2];
                    let c = if op == OpType::AllToAllV {
                        all_to_all_v(bytes, arch, topology)
                    } else {
                        collective(op, bytes, arch, topology)
                    }
                    .channels(channels);
                    let ranks: Vec<u32> = (0..topology.rank_n).collect();
                    for algorithm in written_candidates(&c) {
                        let (_, schedule) = built(&c, &algorithm);
                        let plan = &schedule.collectives[0];
                        let name = format!("{op} {bytes} B {arch} {channels} ch {topology:?} {}", display(&algorithm));
                        let judged = refusal(
                            &schedule.shape,
                            arch.params(),
                            u32::from(arch.params().mesh_event_max),
                            &phases(plan),
                        );
                        match (judged, lowered_peaks(&schedule, &ranks)) {
                            (None, Ok(_)) => kept += 1,
                            (Some(r), Err((rank, e))) => {
                                let (limit, value) = choice_limit(&e).unwrap_or_else(|| panic!("{name}: {e}"));
                                // Lowering names the first step it cannot
                                // post; the rule names the most any needs.
                                assert!(limit != Limit::MeshEvents || r.limit == limit, "{name}: {r:?} {e}");
                                assert!(value <= r.needed || r.limit != limit, "{name}: rank {rank}: {r:?} {e}");
                                refused += 1;
                            }
                            (judged, lowered) => panic!("{name}: judged {judged:?}, lowered {:?}", lowered.err()),
                        }
                    }
                }
            }
        }
    }
    assert!(kept >= 100 && refused >= 100, "{kept} {refused}");
}

/// One ring all-reduce over 8 ranks on Sunda's 5 channels (TOP_SP 0
/// hosts channels 0 and 4) whose one step posts exactly `VAL_MASK`
/// descriptors, and one that posts one more: the rule keeps the first and
/// refuses the second, with lowering's count, as lowering does.
#[test]
fn the_descriptor_limit_is_exact() {
    // A block of 5 x 65,536 x m + d elements: each channel's halves hold
    // 32,768 x m elements and the first d % 5 channels' one more (two
    // more each past the first five), so TOP_SP 0's descriptors are
    // 4 (m + 1) plus 3 for d = 6 and plus 4 for d = 10.
    let m = 4_194_302u64;
    for (d, needed) in [(6u64, DESCRIPTORS_MAX), (10, DESCRIPTORS_MAX + 1)] {
        let count = 8 * (5 * 65_536 * m + d);
        let c = Collective::new(OpType::AllReduce, DType::Bf16, count, Arch::Sunda, Topology::new(8, 8))
            .reduce(ReduceOp::Add)
            .channels(5);
        let (_, schedule) = built(&c, &ResolvedAlgorithm::Flat(AlgType::Ring));
        let plan = &schedule.collectives[0];
        let mut out = Vec::new();
        let most = plan.phases.iter().map(|p| phase_peaks(&schedule.shape, Arch::Sunda.params(), plan, p, &mut out));
        assert_eq!(most.map(|p| p.descriptors).max(), Some(needed));
        let judged = refusal(
            &schedule.shape,
            Arch::Sunda.params(),
            u32::from(Arch::Sunda.params().mesh_event_max),
            &phases(plan),
        );
        let lowered = lower(&schedule, Rank(0));
        if needed <= DESCRIPTORS_MAX {
            assert_eq!(judged, None);
            lowered.unwrap();
        } else {
            assert_eq!(judged, Some(Refusal { limit: Limit::TpIncrement, needed }));
            assert_eq!(choice_limit(&lowered.unwrap_err().kind), Some((Limit::TpIncrement, needed)));
        }
    }
}

/// The brief's reproducers, which `Auto` used to resolve to what
/// lowering then refused: all-reduce of 8 elements over 65,536 ranks on
/// one node at 32 channels on Cayman chose IntraRdh, whose first halving
/// round counts 262,144 increments on one mesh event (65,535 fit); and
/// all-to-all of 2 TiB over 8 ranks on Sunda chose Mesh, whose one step
/// posts 33,554,448 descriptors (16,777,215 fit). Now neither is a
/// candidate and the choices compile.
#[test]
fn the_step_limit_reproducers_compile() {
    let src = "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 8, arch: Cayman,
               topology: (rank_n: 65536, local_rank_n: 65536), channels: 32, algorithm: Auto)";
    let last = Rank(65_535);
    let options = Options { ranks: vec![Rank(0), Rank(1), last], verify: false, ..Options::default() };
    let (_, program, _) = compile_source(src, &options).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<String> =
        program.collectives()[0].auto().unwrap().alternatives.iter().map(|a| display(&a.algorithm)).collect();
    assert!(!names.contains(&"IntraRdh".to_owned()), "{names:?}");
    let c = Collective::new(OpType::AllReduce, DType::Bf16, 8, Arch::Cayman, Topology::new(65_536, 65_536))
        .reduce(ReduceOp::Add)
        .channels(32);
    let (_, rdh) = built(&c, &ResolvedAlgorithm::Flat(AlgType::IntraRdh));
    let err = lower(&rdh, Rank(0)).unwrap_err();
    assert_eq!(choice_limit(&err.kind), Some((Limit::MeshEventTarget, 262_144)), "{err}");
    let plan = &rdh.collectives[0];
    let judged =
        refusal(&rdh.shape, Arch::Cayman.params(), u32::from(Arch::Cayman.params().mesh_event_max), &phases(plan));
    assert_eq!(judged, Some(Refusal { limit: Limit::MeshEventTarget, needed: 262_144 }));
    assert_eq!(judged.map(|r| r.max(Arch::Cayman.params())), Some(TARGET_MAX));

    let src = "Collective(op: AllToAll, dtype: Bf16, count: 1099511627776, arch: Sunda,
               topology: (rank_n: 8, local_rank_n: 8), channels: 1, algorithm: Auto)";
    let (_, program, compiled) = compile_source(src, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(display(program.collectives()[0].algorithm()), "Ring");
    assert_eq!(compiled.images.len(), 8);
    let c = Collective::new(OpType::AllToAll, DType::Bf16, 1 << 40, Arch::Sunda, Topology::new(8, 8));
    let (_, mesh) = built(&c, &ResolvedAlgorithm::Flat(AlgType::Mesh));
    let err = lower(&mesh, Rank(0)).unwrap_err();
    assert_eq!(choice_limit(&err.kind), Some((Limit::TpIncrement, 33_554_448)), "{err}");
}

/// All-to-all of 8 TiB over 8 ranks on Sunda: every candidate posts more
/// than `VAL_MASK` descriptors in a step (Ring the fewest, two blocks of
/// 2^24 + 2 at its first step), so validation refuses `algorithm`,
/// naming the limit, the choice and what it needs; the exhaustive
/// reference gives the same reason.
#[test]
fn no_choice_left_under_the_descriptor_limit_is_a_validation_error() {
    let c = Collective::new(OpType::AllToAll, DType::Bf16, 1 << 42, Arch::Sunda, Topology::new(8, 8));
    let errors = validate(&Program::from(c.clone().algorithm(Algorithm::Auto))).unwrap_err().0;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field, "algorithm");
    let Problem::AutoNoneLowers { limit, needed, max, ref fewest, .. } = errors[0].problem else {
        panic!("{:?}", errors[0].problem)
    };
    assert_eq!((limit, needed, max, fewest.as_str()), (Limit::TpIncrement, 33_554_436, DESCRIPTORS_MAX, "Ring"));
    let text = errors[0].to_string();
    assert!(text.contains("descriptors in one step") && text.contains("accepted:"), "{text}");
    let (fast, every) = refused_by_both(&c);
    assert_eq!(fast, every);
}

/// Why the search and the exhaustive reference refuse every written
/// candidate of `c` (built on the first one's machine), in that order.
fn refused_by_both(c: &Collective) -> (NoChoice, NoChoice) {
    let all = written_candidates(c);
    let (program, _) = built(c, &all[0]);
    let vc = &program.collectives()[0];
    let machine = Machine::of(&program);
    let fast = choose(vc, machine, vc.model(), all.clone(), Vec::new()).unwrap_err();
    (fast, choose_exhaustive(vc, machine, vc.model(), all, Vec::new()).unwrap_err())
}

/// All-reduce of 2^44 U64 elements over 64 ranks of 16 a node on Cayman:
/// the mesh choices need more mesh events than a TOP_SP has (the fewest,
/// Mesh, 126), the others more descriptors in a step than `VAL_MASK`
/// (Ring the fewest). The refusal said every legal choice needed too many
/// mesh events, and that writing Ring would do: it names both limits now,
/// with what each needs (a choice may exceed both: a smaller mesh of these
/// bytes still posts too many descriptors); the exhaustive reference gives
/// the same reason.
#[test]
fn choices_refused_for_different_limits_are_named_by_each() {
    use ccc_compiler::validate::AlsoNeeds;
    let c = Collective::new(OpType::AllReduce, DType::U64, 1 << 44, Arch::Cayman, Topology::new(64, 16))
        .reduce(ReduceOp::Add);
    let errors = validate(&Program::from(c.clone().algorithm(Algorithm::Auto))).unwrap_err().0;
    assert_eq!(errors.len(), 1, "{errors:?}");
    let Problem::AutoNoneLowers { limit, needed, ref fewest, ref also, .. } = errors[0].problem else {
        panic!("{:?}", errors[0].problem)
    };
    assert_eq!((limit, needed, fewest.as_str()), (Limit::MeshEvents, 126, "Mesh"));
    let ring =
        AlsoNeeds { limit: Limit::TpIncrement, needed: 33_554_434, max: DESCRIPTORS_MAX, fewest: "Ring".to_owned() };
    assert_eq!(also, &[ring]);
    let text = errors[0].to_string();
    assert!(!text.contains("every legal choice") && text.contains("not all the same one"), "{text}");
    assert!(text.contains("(VAL_MASK; Ring needs 33554434)"), "{text}");
    assert!(
        text.contains("accepted: a choice within every limit: the mesh events need fewer ranks per mesh"),
        "{text}"
    );
    assert!(text.contains("; the descriptors need a smaller count"), "{text}");
    let (fast, every) = refused_by_both(&c);
    assert_eq!(fast, every);
}

/// `legal::exceeded` (what `ccc check` refuses of a program that
/// validates) against compiling every rank without the proof, over
/// programs of one to three written collectives: it finds a limit exactly
/// when lowering refuses one that depends on the algorithm, and for the
/// mesh events names the rank and collective lowering names (the first
/// rank that runs out), with the collective's own need and what the ones
/// before it spent adding up to lowering's count. Programs are drawn from
/// a fixed generator (an LCG), some over two replica groups of half the
/// world each.
#[test]
fn check_refuses_what_lowering_refuses() {
    use ccc_compiler::cost::auto::legal::{exceeded, exceeded_built};
    use ccc_compiler::pipeline::CompileError;
    use ccc_compiler::pipeline::compile;
    let mut shapes = mesh_shapes();
    // A flat Mesh over all of one node: 127 events.
    shapes.push(Topology::new(128, 128));
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut draw = |n: usize| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize % n
    };
    let (mut programs, mut over, mut by_events, mut by_steps, mut reordered) = (0, 0, 0, 0, 0);
    for _ in 0..240 {
        let (topology, arch) = (shapes[draw(shapes.len())], [Arch::Sunda, Arch::Cayman][draw(2)]);
        let bytes = [1 << 10, 64 << 10, 16 << 20, 1 << 38][draw(4)];
        let mut collectives = Vec::new();
        for _ in 0..=draw(3) {
            let mut c = collective(OPS[draw(OPS.len())], bytes, arch, topology);
            // Now and then over replica groups of half the world each.
            if draw(4) == 0 && topology.rank_n % 2 == 0 && c.root.is_none() {
                let half = topology.rank_n / 2;
                c.groups = Some((0..2).map(|g| (0..half).map(|i| g * half + i).collect()).collect());
                c.count = c.count.div_ceil(u64::from(half)) * u64::from(half);
            }
            let candidates = written_candidates(&c);
            // Mostly the mesh choices, which are the ones that run out.
            let meshes: Vec<_> = candidates
                .iter()
                .filter(|a| display(a).contains("Mesh") || display(a).contains("mesh"))
                .copied()
                .collect();
            let pool = if !meshes.is_empty() && draw(4) != 0 { meshes } else { candidates };
            if pool.is_empty() {
                continue;
            }
            collectives.push(c.clone().algorithm(written(&pool[draw(pool.len())])));
        }
        let Ok(program) = validate(&Program { collectives }) else { continue };
        programs += 1;
        let found = exceeded(&program);
        // Judged on the program built whole (`sign`, `diagnose`), the same.
        let schedule = build(&program).unwrap();
        assert_eq!(exceeded_built(&program, &schedule), found);
        let options = Options { verify: false, ..Options::default() };
        let name = format!("{:?}", program.collectives().iter().map(|c| display(c.algorithm())).collect::<Vec<_>>());
        match compile(&program, &options) {
            Ok(_) => assert_eq!(found, None, "{name} {topology:?} {arch}"),
            Err(CompileError::Lower(e)) => {
                let LowerErrorKind::Limit { limit, value, .. } = e.kind else { panic!("{name}: {e}") };
                let x = found.unwrap_or_else(|| panic!("{name} {topology:?} {arch}: lowering refused: {e}"));
                over += 1;
                let at = e.collective.map(|c| c.0);
                if limit == Limit::MeshEvents {
                    by_events += 1;
                    assert_eq!(x.refusal.limit, limit, "{name}: {e}");
                    assert_runs_out(&program, x, &name);
                    // The first rank that runs out: lowering, which takes a
                    // few sample ranks first, names it or one after it.
                    assert!(x.rank.is_some_and(|r| r <= e.rank.0), "{name}: {e}: {x:?}");
                } else if (x.refusal.limit, Some(x.collective)) == (limit, at) {
                    // Lowering names the first step over the limit, this
                    // the busiest.
                    by_steps += 1;
                    assert!(x.refusal.needed >= value, "{name}: {e}: {x:?}");
                } else {
                    // Lowering meets the limits rank by rank and step by
                    // step; `exceeded` judges the events first, then each
                    // collective's busiest member: another limit, or the
                    // same at another collective, may come first.
                    assert!(matches!(limit, Limit::MeshEventTarget | Limit::TpIncrement), "{name}: {e}");
                    reordered += 1;
                }
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    // Lowering names another rank than the first that runs out: a rooted
    // Mesh reduce over two groups of 64 on Sunda, each rooted at its first
    // member, ranks 10 and 64, each waiting on 63 peers (50 allowed).
    // Lowering samples rank 64, the world's middle, first.
    let mesh = Algorithm::flat(AlgType::Mesh).unwrap();
    let mut c = collective(OpType::Reduce, 1 << 20, Arch::Sunda, Topology::new(128, 128)).algorithm(mesh);
    let first = [10].into_iter().chain((0..64).filter(|&r| r != 10)).collect();
    c.groups = Some(vec![first, (64..128).collect()]);
    c.root = Some(0);
    let program = validate(&Program::from(c)).unwrap();
    let x = exceeded(&program).unwrap();
    assert_eq!((x.rank, x.collective, x.refusal.needed), (Some(10), 0, 63));
    let built = exceeded_built(&program, &build(&program).unwrap());
    assert_eq!(built, Some(x));
    assert_runs_out(&program, x, "two rooted groups");
    let Err(CompileError::Lower(e)) = compile(&program, &Options { verify: false, ..Options::default() }) else {
        panic!("compiled")
    };
    assert_eq!(e.rank, Rank(64));
    let counts =
        format!("{programs} programs: {over} refused, {by_events} for events, {by_steps} per step, {reordered}");
    assert!(programs >= 150 && by_events >= 20 && by_steps >= 3 && over < programs, "{counts}");
}
