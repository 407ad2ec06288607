//! The protocol proof on every algorithm, with and without symmetry.

use super::found::hosted;
use super::profile::{Counts, Route};
use super::*;
use crate::build::build;
use crate::encode::encode;
use crate::lower::lower;
use crate::testing::Case;
use crate::verify::symmetry::Symmetry;
use crate::verify::{Defects, Prover, ProverOptions, VerifyError};
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::id::{Rank, Step, TopSp};
use ccc_ir::spec::Leg;
use ccc_ir::wire::tp::{TpIncStep, TpRuns};

/// The protocol proof of `programs`, every rank's, each rank checked
/// against member 0's needs where its watch saw its transfers moved
/// (`symmetry` on), else against its own step graph.
fn prove(schedule: &Schedule, programs: &[RankProgram], symmetry: bool) -> Result<ProtocolProof, VerifyError> {
    let prover = Prover::new(schedule, &ProverOptions { symmetry, ..ProverOptions::default() });
    let mut proof = ProtocolProof::default();
    let mut defects = Vec::new();
    for p in programs {
        let checked = prover.check_rank(p, &prover.watch(p.rank));
        proof.add(&checked.proof);
        defects.extend(checked.defects);
    }
    match Defects::collect(defects) {
        Some(d) => Err(VerifyError::Defects(Box::new(d))),
        None => Ok(proof),
    }
}

fn lower_all(case: &Case) -> (Schedule, Vec<RankProgram>) {
    let schedule = build(&case.valid()).unwrap();
    let programs: Vec<RankProgram> =
        (0..case.rank_n).map(|r| lower(&schedule, Rank(r)).unwrap_or_else(|e| panic!("{case:?}: {e}"))).collect();
    (schedule, programs)
}

fn assert_protocol(case: &Case) {
    let (schedule, programs) = lower_all(case);
    if let Err(e) = prove(&schedule, &programs, true) {
        panic!(
            "{:?} {:?} n={} local={} channels={}: {e}",
            case.op, case.alg, case.rank_n, case.local_rank_n, case.channels
        );
    }
    for p in &programs {
        let images = encode(p, schedule.arch).unwrap();
        crate::verify::Memo::new(schedule.arch).check_kept(p, &images).unwrap();
    }
}

#[test]
fn every_flat_pairing_is_checked() {
    for (op, alg) in Case::flat_pairs() {
        for n in [2u32, 3, 4, 5, 8, 12] {
            for channels in [1u8, 3, 9] {
                let Some(mut case) = Case::for_alg(op, alg, n) else { continue };
                case.channels = channels;
                assert_protocol(&case);
            }
        }
    }
}

/// Standing member 0's needs for every member's changes no figure, on
/// every flat pairing, invariant or not.
#[test]
fn symmetry_changes_no_figure() {
    for (op, alg) in Case::flat_pairs() {
        // Even blocks (every rank's counts the same) and uneven.
        for (n, channels, count) in [(2u32, 1u8, 4096), (5, 3, 4100), (8, 2, 4096), (8, 2, 4103), (12, 9, 4104)] {
            let Some(mut case) = Case::for_alg(op, alg, n) else { continue };
            case.channels = channels;
            case.count = count;
            let (schedule, programs) = lower_all(&case);
            let fast = prove(&schedule, &programs, true);
            let full = prove(&schedule, &programs, false);
            assert_eq!(fast, full, "{op:?} {alg:?} n={n} channels={channels} count={count}");
        }
    }
}

/// A flat ring's records are exactly member 0's folded counts, on every
/// rank: the whole check is a comparison of `tp_inc_steps`.
#[test]
fn a_ring_takes_the_folded_path() {
    let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
    case.channels = 2;
    let records_of = |p: &RankProgram, t: usize| -> Vec<Vec<TpIncStep>> {
        p.topsps[t].segments[0].records.iter().map(|r| r.tp.to_vec()).collect()
    };
    // 4096 + 7 elements: the first 7 blocks are one element bigger, so
    // counts depend on the block, and each rank's are folded on its own.
    let (schedule, programs) = lower_all(&case);
    let symmetry = Symmetry::find(&schedule);
    let plan = &schedule.collectives[0];
    let orbit = symmetry.orbit(0, 0).unwrap();
    let uneven = Profile::new(&schedule, plan, orbit).unwrap();
    assert!(matches!(uneven.counts, Counts::ByBlock { big_below: 7, .. }) && uneven.folded.is_none());
    for p in &programs {
        let own = uneven.fold_for(plan, orbit, p.rank.0, 2).expect("no mesh phase");
        for (t, folded) in own.iter().enumerate() {
            assert_eq!(&records_of(p, t), folded, "uneven: rank {} TOP_SP {t}", p.rank.0);
        }
    }
    case.count = 4096;
    let (schedule, programs) = lower_all(&case);
    let symmetry = Symmetry::find(&schedule);
    let plan = &schedule.collectives[0];
    let profile = Profile::new(&schedule, plan, symmetry.orbit(0, 0).unwrap()).expect("invariant");
    let folded = profile.folded.as_ref().expect("no mesh phase");
    for p in &programs {
        for (t, folded) in folded.iter().enumerate() {
            assert_eq!(&records_of(p, t), folded, "rank {} TOP_SP {t}", p.rank.0);
        }
    }
}

/// With uneven blocks the counts depend on the rank, and each rank's
/// records are checked against its own step graph, step by step: a
/// record off by one at one step is caught there, symmetric or not.
#[test]
fn uneven_blocks_are_checked_step_by_step() {
    let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
    case.count = 4103;
    let (schedule, mut programs) = lower_all(&case);
    let symmetry = Symmetry::find(&schedule);
    assert!(symmetry.orbit(0, 0).is_some());
    prove(&schedule, &programs, true).unwrap();
    let tp = &mut programs[5].topsps[0].segments[0].records[1].tp;
    let last = tp.len() - 1;
    tp[last].m2s += 1;
    let Err(VerifyError::Defects(d)) = prove(&schedule, &programs, true) else { panic!("proven") };
    assert_eq!((d.first.rank, d.first.record), (Some(Rank(5)), Some(1)), "{d}");
    assert!(matches!(d.first.kind, DefectKind::CountMismatch { queue: "M2S", .. }), "{d}");
    let full = prove(&schedule, &programs, false);
    assert_eq!(full, Err(VerifyError::Defects(d)));
}

/// Groups of one rank have nothing to move: no record, no END mark,
/// and the proof still holds (all-to-all keeps its local copy).
#[test]
fn groups_of_one_rank_have_empty_chains() {
    for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter, OpType::AllToAll] {
        let mut case = Case::flat(op, AlgType::Ring, 4, 4);
        case.groups = Some(vec![vec![0], vec![1], vec![2], vec![3]]);
        assert_protocol(&case);
        let (_, programs) = lower_all(&case);
        let records = programs[0].topsps[0].records().count();
        assert_eq!(records, usize::from(op == OpType::AllToAll), "{op:?}");
    }
    assert_protocol(&Case::flat(OpType::AllReduce, AlgType::Mesh, 1, 1));
}

#[test]
fn every_hier_composition_is_checked() {
    for (op, choice) in Case::hier_choices() {
        let mut case = Case::hier(op, &choice, 24, 4);
        case.pod_n = 2;
        case.channels = 4;
        assert_protocol(&case);
    }
}

/// The rank-local check (what a certified compile runs on its own ranks)
/// catches a record that posts the wrong count without the other ranks:
/// a build that lowers the same schedule differently cannot ride on another
/// build's certificate.
#[test]
fn the_rank_local_check_catches_a_wrong_count_on_its_own() {
    let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
    case.channels = 2;
    case.count = 65536;
    let (schedule, mut programs) = lower_all(&case);
    let mut one = programs.swap_remove(5);
    assert!(check_rank(&schedule, &one, None, None, None).defects.is_empty());
    one.topsps[0].segments[0].records[1].tp[0].m2s += 1;
    let checked = check_rank(&schedule, &one, None, None, None);
    let [d] = &checked.defects[..] else { panic!("{:?}", checked.defects) };
    assert!(matches!(d.kind, DefectKind::CountMismatch { queue: "M2S", .. }), "{d}");
    assert_eq!((d.rank, d.topsp, d.record, d.step), (Some(Rank(5)), Some(TopSp(0)), Some(1), Some(Step(7))));
}

/// Step `at` of `tp` (counted from the record's first step) posting one
/// more `m2s` (`s2m` with `s2m`), its entry split around it.
fn bump(tp: &mut TpRuns, at: u32, s2m: bool) {
    let mut steps = each_step(tp);
    let step = &mut steps[at as usize];
    if s2m {
        step.1 += 1
    } else {
        step.0 += 1
    }
    *tp = folded(steps);
}

/// `tp`'s `(m2s, s2m)`, one entry per step.
fn each_step(tp: &TpRuns) -> Vec<(u32, u32)> {
    tp.iter().flat_map(|e| std::iter::repeat_n((e.m2s, e.s2m), usize::from(e.repeat))).collect()
}

/// Steps' `(m2s, s2m)` folded into `tp_inc_steps` entries.
fn folded(steps: Vec<(u32, u32)>) -> TpRuns {
    let mut runs: Vec<TpIncStep> = Vec::new();
    for (m2s, s2m) in steps {
        match runs.last_mut() {
            Some(e) if (e.m2s, e.s2m) == (m2s, s2m) => e.repeat += 1,
            _ => runs.push(TpIncStep { m2s, s2m, repeat: 1 }),
        }
    }
    TpRuns::from(runs)
}

/// `tp` one step shorter: its last step dropped.
fn drop_last_step(tp: &mut TpRuns) {
    let mut steps = each_step(tp);
    steps.pop();
    *tp = folded(steps);
}

/// Records that cover too few steps are named by the step check itself,
/// not only by the chain check that runs before it (`chain.rs`: "steps
/// its tp_inc_steps cover"): whether the rank's needs come from its own
/// step graph or from member 0's, a last record one step short leaves the
/// collective's last step without a record ("steps its records cover"),
/// and a first record one step short runs the first phase's last step
/// from the second phase's record ("phase of the record running this
/// step"). Each is found at that step, on the TOP_SP edited.
#[test]
fn the_step_check_names_records_that_cover_too_few_steps() {
    let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, 6, 2);
    case.channels = 2;
    let (schedule, programs) = lower_all(&case);
    let plan = &schedule.collectives[0];
    let used = usize::from(crate::placement::topsps_for(schedule.arch.params(), plan.channels));
    let bases = Bases::new(&schedule);
    let program = &programs[3];
    let at = plan.groups.locate(program.rank).unwrap();
    let orbit = bases.orbit(plan.index, at.group()).expect("a flat ring is symmetric");
    let profile = Profile::new(&schedule, plan, orbit).expect("member 0's needs");
    let setup = Setup::new(&schedule, plan);
    // A ring all-reduce of 6: 5 steps reducing, 5 gathering.
    let phases: Vec<(u32, u32)> = plan.phases.iter().map(|p| (p.first_step, p.step_n)).collect();
    assert_eq!((phases, plan.step_n), (vec![(0, 5), (5, 5)], 10));
    for member0 in [None, Some((&profile, orbit))] {
        let (mut proof, mut notified) = (ProtocolProof::default(), vec![0u64; used]);
        assert!(StepCheck::new(&schedule, &setup, program, at, &mut proof, &mut notified).collective(member0).is_ok());
    }
    // The last TOP_SP: its defect is not the first TOP_SP's by default.
    assert_eq!(used, 2);
    let t = used - 1;
    // (record edited, the defect's record and step, its message)
    let edits = [
        (1, None, 9, "steps its records cover is 9, but the schedule needs 10"),
        (0, Some(1), 4, "phase of the record running this step is 1, but the schedule needs 0"),
    ];
    for (record, found_record, step, message) in edits {
        let mut edited = program.clone();
        drop_last_step(&mut edited.topsps[t].segments[0].records[record].tp);
        let whole = check_rank(&schedule, &edited, None, None, None);
        let [d] = &whole.defects[..] else { panic!("{:?}", whole.defects) };
        assert!(matches!(&d.kind, DefectKind::FieldMismatch { field, .. } if *field == "steps its tp_inc_steps cover"));
        for member0 in [None, Some((&profile, orbit))] {
            let (mut proof, mut notified) = (ProtocolProof::default(), vec![0u64; used]);
            let check = StepCheck::new(&schedule, &setup, &edited, at, &mut proof, &mut notified);
            let d = check.collective(member0).expect_err("a step without its record");
            assert!(matches!(d.kind, DefectKind::FieldMismatch { .. }), "{d}");
            assert_eq!(d.kind.to_string(), message);
            let want = (Some(program.rank), Some(TopSp(t as u8)), found_record, Some(Step(step)));
            assert_eq!((d.rank, d.topsp, d.record, d.step), want, "{d}");
        }
    }
}

/// Steps that need the same are checked as one run, and a run reports
/// what a check of each of its steps would: a record off by one at any
/// one step, on any TOP_SP, is caught at that step, TOP_SP and record
/// with the queue that differs; of two, the lower step wins, and on one
/// step the lower TOP_SP. With uneven blocks (4,099 elements) the ring
/// chains' runs of steps are listed in pieces; with even ones (6,144) a
/// run of the chain's steps at a time (`Schedule::phase_runs`).
#[test]
fn runs_report_the_step_a_step_check_reports() {
    let mut checked = 0;
    for (op, alg, count) in [
        (OpType::Broadcast, AlgType::Ring, 4099),
        (OpType::Reduce, AlgType::Ring, 4099),
        (OpType::AllReduce, AlgType::InterRdh, 4099),
        (OpType::Broadcast, AlgType::Ring, 6144),
        (OpType::Reduce, AlgType::Ring, 6144),
    ] {
        let mut case = Case::for_alg(op, alg, 6).unwrap();
        case.root = Some(2);
        case.channels = 3;
        case.count = count;
        let (schedule, programs) = lower_all(&case);
        let plan = &schedule.collectives[0];
        let even = (0..3).all(|t| crate::schedule::DescTable::new(plan, &hosted(&schedule, plan, t)).position_free());
        assert_eq!(even, count == 6144, "{op:?} {count}");
        for p in &programs {
            assert!(check_rank(&schedule, p, None, None, None).defects.is_empty());
            let segment = |p: &RankProgram, t: usize| p.topsps[t].segments[0].records.clone();
            for t in 0..p.topsps.len() {
                for (i, record) in segment(p, t).iter().enumerate() {
                    for at in 0..record.step_n {
                        let step = record.first_step + at;
                        let s2m = step % 2 == 1;
                        let mut edited = p.clone();
                        bump(&mut edited.topsps[t].segments[0].records[i].tp, at, s2m);
                        // Another TOP_SP off at a later step, and at the
                        // same step: the first defect stays this one, but
                        // for a lower TOP_SP at the same step.
                        let other = (t + 1) % p.topsps.len();
                        if other != t && at + 1 < record.step_n {
                            bump(&mut edited.topsps[other].segments[0].records[i].tp, at + 1, false);
                        }
                        let found = check_rank(&schedule, &edited, None, None, None);
                        let [d] = &found.defects[..] else { panic!("{:?}", found.defects) };
                        let queue = if s2m { "S2M" } else { "M2S" };
                        assert!(matches!(d.kind, DefectKind::CountMismatch { queue: q, .. } if q == queue), "{d}");
                        let want = (Some(p.rank), Some(TopSp(t as u8)), Some(i as u32), Some(Step(step)));
                        assert_eq!((d.rank, d.topsp, d.record, d.step), want, "{op:?} {alg:?}");
                        if other < t {
                            bump(&mut edited.topsps[other].segments[0].records[i].tp, at, false);
                            let found = check_rank(&schedule, &edited, None, None, None);
                            let [d] = &found.defects[..] else { panic!("{:?}", found.defects) };
                            assert_eq!((d.topsp, d.step), (Some(TopSp(other as u8)), Some(Step(step))));
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert!(plan.step_n > 0);
    }
    assert!(checked > 700, "{checked}");
}

/// Where the folded walk decides a rank's records, it counts exactly the
/// figures and notifications the step-by-step check does (which passes
/// there): on every pairing, recursive halving with a prologue and uneven
/// rooted rings; it decides many (rank, collective) pairs, and none of a
/// collective with a mesh phase.
#[test]
fn folded_walks_count_as_the_step_by_step_check() {
    let mut cases = Case::pairings(&[2, 3, 5, 8]);
    cases.push(Case::for_alg(OpType::AllReduce, AlgType::InterRdh, 12).unwrap());
    for op in [OpType::Broadcast, OpType::Reduce] {
        let mut uneven = Case::flat(op, AlgType::Ring, 7, 1);
        uneven.count = 4099;
        cases.push(uneven);
    }
    let (mut folded, mut walked) = (0u32, 0u32);
    for case in &cases {
        let (schedule, programs) = lower_all(case);
        let used = usize::from(crate::placement::topsps_used(&schedule));
        for p in &programs {
            for plan in &schedule.collectives {
                let Some(at) = plan.groups.locate(p.rank) else { continue };
                let setup = Setup::new(&schedule, plan);
                let (mut by_fold, mut by_step) = (ProtocolProof::default(), ProtocolProof::default());
                let (mut fold_notified, mut step_notified) = (vec![0u64; used], vec![0u64; used]);
                let decided = StepCheck::new(&schedule, &setup, p, at, &mut by_fold, &mut fold_notified).folded_alone();
                let stepped = StepCheck::new(&schedule, &setup, p, at, &mut by_step, &mut step_notified).step_by_step();
                assert!(stepped.is_ok(), "{case:?} rank {}", p.rank.0);
                let mesh = plan.phases.iter().any(|ph| ph.alg.pattern() == Some(ccc_ir::enums::DevicePattern::Mesh));
                assert!(!(mesh && decided), "{case:?}: a mesh phase is never folded");
                if decided {
                    folded += 1;
                    assert_eq!((&by_fold, &fold_notified), (&by_step, &step_notified), "{case:?} rank {}", p.rank.0);
                } else {
                    walked += 1;
                    assert_eq!((by_fold, fold_notified.iter().sum::<u64>()), (ProtocolProof::default(), 0));
                }
            }
        }
    }
    assert!(folded > 400 && walked > 100, "{folded} folded, {walked} walked");
}

/// With blocks of two sizes, every member's fold from its group's
/// exceptions is its step-by-step fold: on every pairing whose groups are
/// symmetric, with the big blocks the few (one element over a multiple of
/// the blocks) and the many (the cases' 4,096 + 7 elements).
#[test]
fn exceptions_fold_as_the_steps_do() {
    let (mut compared, mut cases) = (0u32, 0u32);
    for count in [4096 + 1, 4096 + 7] {
        for mut case in Case::pairings(&[2, 3, 5, 8, 12]) {
            case.count = count;
            let Ok(schedule) = build(&case.valid()) else { continue };
            let symmetry = Symmetry::find(&schedule);
            for plan in &schedule.collectives {
                let used = usize::from(crate::placement::topsps_for(schedule.arch.params(), plan.channels));
                for g in 0..plan.groups.group_n() {
                    let Some(orbit) = symmetry.orbit(plan.index, g) else { continue };
                    let Some(profile) = Profile::new(&schedule, plan, orbit) else { continue };
                    let mut any = false;
                    for m in 0..plan.groups.size() {
                        let Some(by_exceptions) = profile.exceptions_fold(plan, orbit, m, used, Route::Listed) else {
                            continue;
                        };
                        let steps = profile.fold_steps(plan, orbit, m, used);
                        assert_eq!(Some(by_exceptions), steps, "{case:?} member {m}");
                        if let Some(by_tracks) = profile.exceptions_fold(plan, orbit, m, used, Route::Tracks) {
                            assert_eq!(Some(by_tracks), steps, "tracks: {case:?} member {m}");
                        }
                        (compared, any) = (compared + 1, true);
                    }
                    cases += u32::from(any);
                }
            }
        }
    }
    assert!(compared > 150 && cases > 20, "{compared} members of {cases} groups");
}

/// Elements per block of `case` at which one block more costs one
/// descriptor more: each half on each channel fills
/// [`MAX_DESC_BYTES`](crate::schedule::MAX_DESC_BYTES) exactly, so that a
/// big block's first half on channel 0 needs a second descriptor.
fn block_at_a_descriptor_edge(case: &Case) -> u64 {
    // Bf16 (the cases' type, two bytes), two halves per channel: the
    // callers assert that blocks then cost differently.
    u64::from(case.channels) * 2 * crate::schedule::MAX_DESC_BYTES / 2
}

/// Every member's fold of every symmetric group with blocks of two sizes,
/// by each route (`Route`), against its step-by-step fold; `None` from
/// the pieces only where the group has no runs. Returns how many members
/// the pieces folded, and whether the cheaper route took them at least
/// once; asserts that some transfer costs more with its block big (else
/// every route folds the same counts at every step, whatever it cuts).
fn routes_fold_as_the_steps_do(case: &Case) -> (u32, bool) {
    let schedule = build(&case.valid()).unwrap_or_else(|e| panic!("{case:?}: {e}"));
    let symmetry = Symmetry::find(&schedule);
    let (mut by_tracks, mut chosen) = (0, false);
    for plan in &schedule.collectives {
        let used = usize::from(crate::placement::topsps_for(schedule.arch.params(), plan.channels));
        for g in 0..plan.groups.group_n() {
            let Some(orbit) = symmetry.orbit(plan.index, g) else { continue };
            let Some(profile) = Profile::new(&schedule, plan, orbit) else { continue };
            let Counts::ByBlock { costs, .. } = &profile.counts else { continue };
            assert!(costs.iter().any(|[small, big]| small != big), "{case:?}: blocks cost alike");
            if plan.phases.iter().any(|p| p.alg.pattern() == Some(ccc_ir::enums::DevicePattern::Mesh)) {
                // Mesh events need the steps: no fold by any route.
                assert_eq!(profile.fold_for(plan, orbit, 0, used), None, "{case:?}");
                continue;
            }
            for m in 0..plan.groups.size() {
                let steps = profile.fold_steps(plan, orbit, m, used);
                assert!(steps.is_some(), "{case:?} member {m}");
                let listed = profile.exceptions_fold(plan, orbit, m, used, Route::Listed);
                if profile.has_exceptions() {
                    assert_eq!(listed, steps, "listed: {case:?} member {m}");
                } else {
                    assert_eq!(listed, None, "listed: {case:?} member {m}");
                }
                let cheaper = profile.exceptions_fold(plan, orbit, m, used, Route::Cheaper);
                assert_eq!(cheaper, steps, "cheaper: {case:?} member {m}");
                assert_eq!(profile.fold_for(plan, orbit, m, used), steps, "fold_for: {case:?} member {m}");
                let tracks = profile.exceptions_fold(plan, orbit, m, used, Route::Tracks);
                if tracks.is_some() {
                    assert_eq!(tracks, steps, "tracks: {case:?} member {m}");
                    by_tracks += 1;
                    chosen |= cheaper.is_some() && profile.takes_tracks();
                } else {
                    assert!(!orbit.action.is_cyclic(), "{case:?}: a flat rotation has runs");
                }
            }
        }
    }
    (by_tracks, chosen)
}

/// Folding a member in pieces of equal steps (`tracks.rs`) is its
/// step-by-step fold, on flat ring all-reduces (the flat rings whose
/// blocks differ in size) of many sizes whose element count leaves one
/// block over, about half of them, and all but one; over interleaved
/// groups; on one channel and several; and on every Hier composition
/// on 24 nodes of 4 (whose rings move blocks, and sets of a block per
/// node, one digit at a time: more than a thousand of their members fold
/// in pieces).
#[test]
fn pieces_fold_as_the_steps_do() {
    let (mut by_tracks, mut chosen) = (0, 0);
    for n in [2u32, 3, 5, 8, 13, 16, 33, 64] {
        for r in [1, n / 2, n - 1] {
            for channels in [1u8, 3] {
                let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, n, 1);
                case.channels = channels;
                case.count = block_at_a_descriptor_edge(&case) * u64::from(n) + u64::from(r);
                let (folded, took) = routes_fold_as_the_steps_do(&case);
                assert_eq!(folded, n, "{case:?}");
                by_tracks += folded;
                chosen += u32::from(took);
            }
        }
    }
    for (n, r) in [(16u32, 1u32), (16, 4), (16, 7)] {
        let mut grouped = Case::flat(OpType::AllReduce, AlgType::Ring, n, 4);
        grouped.groups = Some(vec![(0..n).step_by(2).collect(), (1..n).step_by(2).rev().collect()]);
        grouped.count = block_at_a_descriptor_edge(&grouped) * u64::from(n / 2) + u64::from(r);
        by_tracks += routes_fold_as_the_steps_do(&grouped).0;
    }
    let mut hier = 0;
    for (op, choice) in Case::hier_choices() {
        for r in [1, 5, 11] {
            // 24 nodes: enough steps across them that pieces are fewer.
            let mut case = Case::hier(op, &choice, 96, 4);
            case.count = block_at_a_descriptor_edge(&case) * 96 + r;
            hier += routes_fold_as_the_steps_do(&case).0;
        }
    }
    assert!(by_tracks > 900 && chosen > 10, "{by_tracks} members folded in pieces, in {chosen} cases by choice");
    assert!(hier > 1000, "{hier} members of hierarchical groups folded in pieces");
}

/// The whole protocol proof of uneven flat rings, every rank's records
/// checked against member 0's folded in pieces, reports what checking
/// each rank against its own step graph does.
#[test]
fn pieces_change_no_figure() {
    for (n, r, channels) in [(33u32, 16u32, 1u8), (33, 1, 3), (33, 32, 2), (24, 12, 3)] {
        let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, n, 1);
        case.channels = channels;
        case.count = block_at_a_descriptor_edge(&case) * u64::from(n) + u64::from(r);
        let (schedule, programs) = lower_all(&case);
        let fast = prove(&schedule, &programs, true);
        assert!(fast.is_ok(), "{case:?}: {fast:?}");
        assert_eq!(fast, prove(&schedule, &programs, false), "{case:?}");
    }
}

/// The same of hierarchical all-reduces whose blocks differ in size,
/// whose inner legs move a block per node (one set of whole runs): over
/// rings, and over Kangaring and InterRdh legs, on 32 nodes of 4 and on
/// 2 pods of 16 nodes of 4.
#[test]
fn hierarchical_pieces_change_no_figure() {
    let rings = [
        (Leg::IntraReduceScatter, AlgType::Ring),
        (Leg::InterAllReduce, AlgType::Ring),
        (Leg::IntraAllGather, AlgType::Ring),
    ];
    let mixed = [
        (Leg::IntraReduceScatter, AlgType::Kangaring),
        (Leg::InterAllReduce, AlgType::InterRdh),
        (Leg::IntraAllGather, AlgType::Ring),
    ];
    let mut folded = 0;
    for legs in [&rings, &mixed] {
        for pod_n in [1, 2] {
            for r in [1u64, 61, 127] {
                let mut case = Case::hier(OpType::AllReduce, legs, 128, 4);
                case.pod_n = pod_n;
                case.count = block_at_a_descriptor_edge(&case) * 128 + r;
                let (schedule, programs) = lower_all(&case);
                let fast = prove(&schedule, &programs, true);
                assert!(fast.is_ok(), "{case:?}: {fast:?}");
                assert_eq!(fast, prove(&schedule, &programs, false), "{case:?}");
                folded += routes_fold_as_the_steps_do(&case).0;
            }
        }
    }
    // The rings' groups (the InterRdh leg moves by XOR: no pieces).
    assert!(folded >= 6 * 128, "{folded} members folded in pieces");
}

/// Rooted ring chains whose blocks differ in cost, listed a run at a time
/// in pieces (`Listing`), check and count exactly what listing every step
/// from the generator does, folded and step by step: on chains of many
/// lengths, with one big block, about half and all but one, every root
/// position's kind (first, inside, last), one channel and several.
#[test]
fn chains_in_pieces_count_as_their_steps() {
    let mut compared = 0;
    for op in [OpType::Broadcast, OpType::Reduce] {
        for n in [2u32, 5, 8, 17] {
            for r in [1, n / 2, n - 1] {
                for (root, channels) in [(0, 1u8), (n / 2, 3), (n - 1, 2)] {
                    let mut case = Case::flat(op, AlgType::Ring, n, 1);
                    case.root = Some(root);
                    case.channels = channels;
                    case.count = block_at_a_descriptor_edge(&case) * u64::from(n) + u64::from(r);
                    let (schedule, programs) = lower_all(&case);
                    let plan = &schedule.collectives[0];
                    let used = usize::from(crate::placement::topsps_used(&schedule));
                    let pieces = Setup::new(&schedule, plan);
                    let mut steps = Setup::new(&schedule, plan);
                    steps.one_step_at_a_time = true;
                    let table = crate::schedule::DescTable::new(plan, &hosted(&schedule, plan, 0));
                    assert!(table.big_below().is_some() && !table.position_free(), "{case:?}");
                    for p in &programs {
                        let Some(at) = plan.groups.locate(p.rank) else { continue };
                        let mut figures = Vec::new();
                        for setup in [&pieces, &steps] {
                            let (mut folded, mut stepped) = (ProtocolProof::default(), ProtocolProof::default());
                            let (mut fold_notified, mut step_notified) = (vec![0u64; used], vec![0u64; used]);
                            let decided =
                                StepCheck::new(&schedule, setup, p, at, &mut folded, &mut fold_notified).folded_alone();
                            let ok = StepCheck::new(&schedule, setup, p, at, &mut stepped, &mut step_notified)
                                .step_by_step()
                                .is_ok();
                            figures.push((decided, ok, folded, fold_notified, stepped, step_notified));
                        }
                        assert!(figures[0].0 && figures[0].1, "{case:?} rank {}", p.rank.0);
                        assert_eq!(figures[0], figures[1], "{case:?} rank {}", p.rank.0);
                        compared += 1;
                    }
                }
            }
        }
    }
    assert!(compared > 300, "{compared} ranks compared");
}

/// A schedule whose step counts were edited past anything `build` makes
/// (the library hands out `Schedule` with public fields) is refused or
/// proven like any other, never an abort: a phase of 2^32 - 1 steps once
/// made the postcondition allocate a counter per step.
#[test]
fn a_schedule_edited_to_endless_steps_is_no_abort() {
    let case = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
    let (schedule, programs) = lower_all(&case);
    for edit in 0..3 {
        let mut edited = schedule.clone();
        let plan = &mut edited.collectives[0];
        match edit {
            0 => plan.phases[0].step_n = u32::MAX,
            1 => plan.step_n = u32::MAX,
            _ => {
                plan.phases[0].step_n = u32::MAX;
                plan.step_n = u32::MAX;
            }
        }
        let proven = crate::verify::prove(&edited, &programs, &[], &ProverOptions::default());
        let Err(VerifyError::Defects(d)) = proven else { panic!("edit {edit}: proven") };
        let DefectKind::FieldMismatch { field, found, expected } = d.first.kind else { panic!("{d}") };
        assert_eq!(found, u64::from(u32::MAX), "{d}");
        assert_eq!((field, expected), if edit == 1 { ("steps of a collective", 14) } else { ("steps of a phase", 7) });
    }
    // Unedited, the same check passes.
    assert!(crate::verify::prove(&schedule, &programs, &[], &ProverOptions::default()).is_ok());
}
