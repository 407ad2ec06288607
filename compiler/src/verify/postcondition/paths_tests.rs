//! The path run against the full run: it proves every rooted pairing and
//! recursive halving with a prologue with the full run's figures, and
//! refuses every seeded defect, which the full run then names with its
//! own message.

use super::paths::Layout;
use super::tests::Mutated;
use super::*;
use crate::algorithms::StepRun;
use crate::algorithms::flat_ops;
use crate::build::build;
use crate::testing::Case;
use crate::valid::ResolvedAlgorithm;
use crate::verify::defect::Defects;
use crate::verify::transfers::{AsBuilt, Site};
use ccc_ir::enums::{AlgType, OpType};

const ROOTED: [OpType; 2] = [OpType::Broadcast, OpType::Reduce];

/// The rooted ops' flat ring cases: the phases listed as runs of steps.
fn rooted_rings() -> impl Iterator<Item = Case> {
    ROOTED.into_iter().flat_map(rooted_cases).filter(|c| c.alg == ResolvedAlgorithm::Flat(AlgType::Ring))
}

/// The rooted schedules of every flat algorithm serving `op`, over group
/// sizes 1..=9 and every root.
fn rooted_cases(op: OpType) -> Vec<Case> {
    let mut cases = Vec::new();
    for &alg in AlgType::ALL {
        if alg == AlgType::Hier || !flat_ops(alg).contains(&op) {
            continue;
        }
        for n in 1..=9u32 {
            for root in 0..n {
                let Some(mut case) = Case::for_alg(op, alg, n) else { continue };
                case.root = Some(root);
                cases.push(case);
            }
        }
    }
    cases
}

/// Both runs on one group and half of `source`'s transfers: the rooted
/// run's transfers and the full run's (or its defect).
fn both(schedule: &Schedule, source: &dyn TransferSource) -> (Option<u64>, Result<u64, Box<Defect>>) {
    let (plan, options) = (&schedule.collectives[0], ProverOptions::default());
    let fast = paths::run(schedule, plan, 0, HalfChunk::H0, source, &options);
    (fast, full::run(schedule, plan, 0, HalfChunk::H0, source, &options))
}

/// Every rooted pairing is proven by the path run (it never leaves a
/// sound schedule to the full run), with the full run's figures.
#[test]
fn every_rooted_pairing_is_proven_by_its_paths() {
    let mut algs = std::collections::BTreeSet::new();
    for op in ROOTED {
        for case in rooted_cases(op) {
            let schedule = build(&case.valid()).unwrap();
            assert!(paths::applies(&schedule.collectives[0]));
            let (fast, full) = both(&schedule, &AsBuilt);
            assert_eq!(fast, Some(full.unwrap()), "{case:?}");
            algs.insert(format!("{op:?} {:?}", case.alg));
        }
    }
    // Ring, direct and binomial trees, both ops.
    assert!(algs.len() >= 8, "{algs:?}");
}

/// Every rooted ring, as built, is taken member-major (`member_major`),
/// with the full run's figures; the path run then takes it so.
#[test]
fn rooted_rings_are_taken_member_major() {
    let mut taken = 0;
    for case in rooted_rings() {
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        let (n, block_n) = (plan.groups.size(), plan.layout().block_n());
        let shape_ok = |tr: &Transfer, m| paths::shape_ok(tr, m, n, block_n);
        let runs_of = |phase: &crate::schedule::Phase, index, out: &mut Vec<StepRun>| {
            let site = Site { group: 0, index, phase, inst: plan.instance(phase, index), step: phase.first_step, t: 0 };
            AsBuilt.runs(&schedule, plan, &site, out)
        };
        let found = member_major::run(plan, HalfChunk::H0, &runs_of, &shape_ok);
        let full = full::run(&schedule, plan, 0, HalfChunk::H0, &AsBuilt, &ProverOptions::default()).unwrap();
        assert_eq!(found, Some(Some(full)), "{case:?}");
        taken += 1;
    }
    assert!(taken > 40, "{taken}");
}

/// An edit of a member's list at a step: (member, step, list).
type Edit = dyn Fn(u32, u32, &mut Vec<Transfer>) + Sync;

/// A seeded defect the path run's tests share: every transfer of step 1
/// dropped.
fn drop_step_1(_: u32, step: u32, out: &mut Vec<Transfer>) {
    if step == 1 {
        out.clear();
    }
}

/// The seeded defects of every rooted pairing of 6 members (root 2), and
/// of recursive halving over 6: the path run refuses each, and the proof
/// reports the full run's defect, the one it reports with the path run
/// off.
#[test]
fn every_seeded_defect_is_left_to_the_full_run() {
    let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
    let edits: [(&str, &Edit); 7] = [
        ("a step dropped", &drop_step_1),
        ("a transfer listed twice", &|_, step, out| {
            if step == 0 {
                out.extend_from_within(..);
            }
        }),
        ("a receive unmatched", &|index, step, out| {
            if step == 0 && index == 3 {
                out.iter_mut().filter(|t| t.from == 3).for_each(|t| t.to = (t.to + 1) % 6);
            }
        }),
        ("a receive dropped", &|index, step, out| {
            if step == 0 && index == 3 {
                out.retain(|t| t.to != 3);
            }
        }),
        ("a fold turned to a copy, or the reverse", &|_, step, out| {
            if step == 0 {
                for t in out.iter_mut() {
                    t.fold = match t.fold {
                        Some(_) => None,
                        None => Some(ccc_ir::enums::ReductionType::Ring2R1W),
                    };
                }
            }
        }),
        ("the wrong chunk", &|_, step, out| {
            if step == 0 {
                for t in out.iter_mut().filter(|t| t.src.count == 1) {
                    let other = crate::schedule::BlockSet::one((t.src.start + 1) % 6);
                    (t.src, t.dst) = (other, other);
                }
            }
        }),
        ("a sender swapped for the root", &|_, step, out| {
            if step == 0 {
                out.iter_mut().filter(|t| t.from != 2 && t.to != 2).for_each(|t| t.from = 2);
            }
        }),
    ];
    let mut refused = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for op in [OpType::Broadcast, OpType::Reduce, OpType::AllReduce] {
        for alg in [AlgType::Ring, AlgType::Mesh, AlgType::InterRdh] {
            if op == OpType::AllReduce && alg != AlgType::InterRdh {
                continue;
            }
            let Some(mut case) = Case::for_alg(op, alg, 6) else { continue };
            case.root = Some(2);
            let schedule = build(&case.valid()).unwrap();
            for (what, edit) in edits {
                let source = Mutated(edit);
                let (fast, slow) = both(&schedule, &source);
                let Err(named) = slow else {
                    // The edit left the schedule sound (say, no transfer at
                    // its step, or a broadcast folding into empty cells): the
                    // path run proves it alike or leaves it to the full run.
                    assert!(fast.is_none() || fast == slow.ok(), "{op:?} {alg:?}: {what}");
                    continue;
                };
                assert_eq!(fast, None, "{op:?} {alg:?}: {what}: {named}");
                refused += 1;
                kinds.insert(format!("{:?}", named.kind).split([' ', '{', '(']).next().unwrap_or("").to_string());
                let proven = |options: &ProverOptions| {
                    let found = prove(&schedule, &source, options, &Symmetry::none(), &|_| {}).unwrap().defects;
                    Defects::collect(found).map(|d| d.first)
                };
                let (on, off) = (proven(&ProverOptions::default()), proven(&full));
                assert_eq!(on.as_ref(), Some(&*named), "{op:?} {alg:?}: {what}");
                assert_eq!(on, off, "{op:?} {alg:?}: {what}");
            }
        }
    }
    let named = ["Duplicate", "Missing", "Stranger", "UnmatchedReceive", "UnmatchedSend"];
    assert!(refused >= 15 && named.iter().all(|k| kinds.contains(*k)), "{refused} defects seeded: {kinds:?}");
}

/// Recursive halving and doubling over a group that is not a power of two
/// (a prologue folds the extra members in, an epilogue hands back) is
/// proven by the path run, on every op it serves that is not symmetric
/// there, with the full run's figures; and so is every other pairing the
/// path run takes.
#[test]
fn every_pairing_the_paths_take_has_the_full_figures() {
    let mut taken = Vec::new();
    for &alg in AlgType::ALL {
        if alg == AlgType::Hier {
            continue;
        }
        for &op in flat_ops(alg) {
            for n in 1..=13u32 {
                let Some(case) = Case::for_alg(op, alg, n) else { continue };
                let schedule = build(&case.valid()).unwrap();
                if !paths::applies(&schedule.collectives[0]) {
                    continue;
                }
                for half in halves(&schedule.collectives[0]) {
                    let (plan, options) = (&schedule.collectives[0], ProverOptions::default());
                    let fast = paths::run(&schedule, plan, 0, *half, &AsBuilt, &options);
                    let full = full::run(&schedule, plan, 0, *half, &AsBuilt, &options).unwrap();
                    assert!(fast.is_none() || fast == Some(full), "{op:?} {alg:?} n={n}");
                    if fast.is_some() {
                        taken.push((op, alg, n));
                    }
                }
            }
        }
    }
    for n in [3, 5, 6, 7, 12, 13] {
        for op in [OpType::AllReduce, OpType::ReduceScatter, OpType::AllGather] {
            if Case::for_alg(op, AlgType::InterRdh, n).is_some() {
                assert!(taken.contains(&(op, AlgType::InterRdh, n)), "{op:?} InterRdh n={n}: {taken:?}");
            }
        }
    }
}

/// How the path run lists its transfers (steps per window, members per
/// chunk, chunks in parallel) changes nothing it finds: on every rooted
/// pairing and every seeded defect of `every_seeded_defect_is_left_to_the_full_run`'s
/// first two kinds, each listing gives the default's answer.
#[test]
fn the_listing_does_not_change_the_answer() {
    use super::window::Listing;
    let listings = [
        Listing { steps: 1, chunk: 1, parallel: false },
        Listing { steps: 2, chunk: 3, parallel: true },
        Listing { steps: 5, chunk: 2, parallel: false },
        Listing { steps: 1 << 20, chunk: 4, parallel: true },
    ];
    let twice: &Edit = &|index, step, out| {
        if step == 2 && index == 1 {
            out.extend_from_within(..);
        }
    };
    let mut compared = 0;
    for op in ROOTED {
        for case in rooted_cases(op) {
            let schedule = build(&case.valid()).unwrap();
            let plan = &schedule.collectives[0];
            let sources: [&dyn TransferSource; 3] = [&AsBuilt, &Mutated(&drop_step_1), &Mutated(twice)];
            for source in sources {
                let default = paths::run(&schedule, plan, 0, HalfChunk::H0, source, &ProverOptions::default());
                for listing in listings {
                    let listed = paths::run_listed(&schedule, plan, 0, HalfChunk::H0, source, listing);
                    assert_eq!(listed, default, "{case:?} {listing:?}");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 1000, "{compared}");
}

/// Where the counters lie (pipeline tiles, one row per member, each row
/// as runs, or one row per diagonal) changes nothing the path run finds:
/// on every rooted pairing and recursive halving with a prologue, as
/// built and with seeded defects, every layout gives the default's answer.
#[test]
fn the_cell_layout_does_not_change_the_answer() {
    let twice: &Edit = &|index, step, out| {
        if step == 0 && index == 1 {
            out.extend_from_within(..);
        }
    };
    let mut cases: Vec<Case> = ROOTED.into_iter().flat_map(rooted_cases).collect();
    for n in [3, 5, 6, 7, 12, 13] {
        for op in [OpType::AllReduce, OpType::ReduceScatter, OpType::AllGather] {
            cases.extend(Case::for_alg(op, AlgType::InterRdh, n));
        }
    }
    let (mut compared, mut proven) = (0, 0);
    for case in &cases {
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        let sources: [&dyn TransferSource; 3] = [&AsBuilt, &Mutated(&drop_step_1), &Mutated(twice)];
        for source in sources {
            let default = paths::run(&schedule, plan, 0, HalfChunk::H0, source, &ProverOptions::default());
            for layout in [Layout::Tiled, Layout::Rows, Layout::Runs, Layout::Skewed] {
                let laid_out = paths::run_laid_out(&schedule, plan, HalfChunk::H0, source, layout);
                assert_eq!(laid_out, default, "{case:?} {layout:?}");
                compared += 1;
            }
            proven += u32::from(default.is_some());
        }
    }
    assert!(compared > 1500 && proven > 300, "{compared} {proven}");
}

/// The schedule's runs, one member's run edited (member, run index, run),
/// and its transfers at every site read from those runs: the run-level
/// checks and a listing step by step see the same transfers.
struct SeededRuns<F: Fn(u32, usize, &mut StepRun) + Sync>(F);

impl<F: Fn(u32, usize, &mut StepRun) + Sync> TransferSource for SeededRuns<F> {
    fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
        let mut runs = Vec::new();
        if self.runs(s, plan, site, &mut runs) {
            if let Some(run) = runs.iter().find(|r| r.holds(site.t)) {
                run.at(site.t, out);
            }
        } else {
            AsBuilt.transfers(s, plan, site, out);
        }
    }

    fn runs(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<StepRun>) -> bool {
        let listed = AsBuilt.runs(s, plan, site, out);
        for (i, run) in out.iter_mut().enumerate() {
            (self.0)(site.index, i, run);
        }
        listed
    }
}

/// A source's transfers site by site only: its runs are never asked.
struct StepByStep<'s>(&'s dyn TransferSource);

impl TransferSource for StepByStep<'_> {
    fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
        self.0.transfers(s, plan, site, out);
    }
}

/// The schedule as built, but each member's first run that moves data
/// starts a step late, so its runs no longer cover the phase; its
/// transfers are the schedule's.
struct GappedRuns;

impl TransferSource for GappedRuns {
    fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
        AsBuilt.transfers(s, plan, site, out);
    }

    fn runs(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<StepRun>) -> bool {
        let listed = AsBuilt.runs(s, plan, site, out);
        if let Some(run) = out.iter_mut().find(|r| r.len > 1 && !r.transfers.is_empty()) {
            run.first += 1;
            run.len -= 1;
        }
        listed
    }
}

/// Runs that leave a gap decide nothing: the phase is listed step by step
/// from the source's transfers, so on every rooted ring the path run
/// proves what it proves as built (it listed nothing at the gap, and
/// refused, before the run-level check's refusal sent it to the sources'
/// transfers).
#[test]
fn runs_that_leave_a_gap_decide_nothing() {
    let mut compared = 0;
    for case in rooted_rings() {
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        let as_built = paths::run(&schedule, plan, 0, HalfChunk::H0, &AsBuilt, &ProverOptions::default());
        assert!(as_built.is_some(), "{case:?}");
        let gapped = paths::run(&schedule, plan, 0, HalfChunk::H0, &GappedRuns, &ProverOptions::default());
        assert_eq!(gapped, as_built, "{case:?}");
        compared += 1;
    }
    assert!(compared > 30, "{compared}");
}

/// A run's edit: (member, run index, run).
type RunEdit = dyn Fn(u32, usize, &mut StepRun) + Sync;

/// On every ring broadcast and reduce over 2..=9 members and every root,
/// as built and with a run of member 1 seeded with a defect, the path run
/// over runs finds what it finds listing every site step by step: the
/// run-level checks accept exactly what the step-level ones accept.
#[test]
fn runs_decide_as_the_steps_do() {
    let edits: [(&str, &RunEdit); 9] = [
        ("as built", &|_, _, _| {}),
        ("a receive dropped", &|m, i, run| {
            if m == 1 && i == 1 {
                run.transfers.retain(|t| t.to != 1);
            }
        }),
        ("a transfer listed twice", &|m, i, run| {
            if m == 1 && i == 1 {
                run.transfers.extend_from_within(..);
            }
        }),
        ("a run moving apart", &|m, _, run| {
            if m == 1 && run.len > 1 {
                run.shift += 1;
            }
        }),
        ("a run moving out of range", &|m, _, run| {
            if m == 1 && run.len > 1 {
                run.shift = 1 << 20;
            }
        }),
        ("every run moving out of range alike", &|_, _, run| {
            if run.len > 1 {
                run.shift = 1 << 20;
            }
        }),
        ("a fold turned to a copy, or the reverse", &|m, i, run| {
            if m == 1 && i == 1 {
                for t in &mut run.transfers {
                    t.fold = match t.fold {
                        Some(_) => None,
                        None => Some(ccc_ir::enums::ReductionType::Ring2R1W),
                    };
                }
            }
        }),
        ("a gap between runs", &|m, i, run| {
            if m == 1 && i == 1 && run.len > 1 {
                run.first += 1;
                run.len -= 1;
            }
        }),
        ("a send nobody receives, in an idle run", &|m, _, run| {
            if m == 1 && run.transfers.is_empty() {
                let block = crate::schedule::BlockSet::one(0);
                let to = 0;
                let neigh = ccc_ir::enums::Neigh::Next;
                let halves = crate::schedule::Halves::Both;
                run.transfers.push(Transfer { from: 1, to, src: block, dst: block, halves, fold: None, neigh });
            }
        }),
    ];
    let (mut compared, mut refused) = (0, 0);
    for case in rooted_rings() {
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        for (what, edit) in edits {
            let seeded = SeededRuns(edit);
            let by_runs = paths::run(&schedule, plan, 0, HalfChunk::H0, &seeded, &ProverOptions::default());
            let by_steps =
                paths::run(&schedule, plan, 0, HalfChunk::H0, &StepByStep(&seeded), &ProverOptions::default());
            assert_eq!(by_runs, by_steps, "{what}: {case:?}");
            if what == "as built" {
                assert!(by_runs.is_some(), "{case:?}");
            }
            compared += 1;
            refused += u32::from(by_runs.is_none());
        }
    }
    assert!(compared > 300 && refused > 150, "{compared} {refused}");
}

/// A source's transfers, and its runs for every other phase (the odd
/// ones), a run of one step per step: phases taken from runs and phases
/// listed a window at a time alternate, on any plan.
struct RunsEveryOtherPhase<'s>(&'s dyn TransferSource);

impl TransferSource for RunsEveryOtherPhase<'_> {
    fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
        self.0.transfers(s, plan, site, out);
    }

    fn runs(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<StepRun>) -> bool {
        out.clear();
        let p = plan.phases.iter().position(|phase| std::ptr::eq(phase, site.phase));
        if p.is_none_or(|p| p % 2 == 0) {
            return false;
        }
        for t in 0..site.phase.step_n {
            let mut transfers = Vec::new();
            let (group, index, phase, inst) = (site.group, site.index, site.phase, site.inst);
            let at = Site { group, index, phase, inst, step: phase.first_step + t, t };
            self.0.transfers(s, plan, &at, &mut transfers);
            out.push(StepRun { first: t, len: 1, shift: 0, transfers });
        }
        true
    }
}

/// Each window listed and matched while the one before it lands (the
/// listing in parallel) finds what landing each window as soon as it is
/// matched finds: on every pairing the path run serves over 1..=13
/// members, as built and with defects seeded at the first steps and at
/// the last, its runs taken for every phase or every other one, under one
/// thread and two, every parallel listing gives the sequential one's
/// answer.
#[test]
fn landing_beside_the_listing_changes_nothing() {
    use super::window::Listing;
    let sequential = Listing { steps: 1, chunk: u32::MAX, parallel: false };
    let overlapped = [
        Listing { steps: 1, chunk: 2, parallel: true },
        Listing { steps: 2, chunk: 3, parallel: true },
        Listing { steps: 1 << 20, chunk: 4, parallel: true },
    ];
    let pools: Vec<rayon::ThreadPool> =
        [1, 2].into_iter().map(|k| rayon::ThreadPoolBuilder::new().num_threads(k).build().unwrap()).collect();
    let twice: &Edit = &|index, step, out| {
        if step == 0 && index == 1 {
            out.extend_from_within(..);
        }
    };
    let (mut compared, mut proven, mut refused) = (0, 0, 0);
    for (op, alg) in Case::flat_pairs() {
        for n in 1..=13u32 {
            let Some(case) = Case::for_alg(op, alg, n) else { continue };
            let schedule = build(&case.valid()).unwrap();
            let plan = &schedule.collectives[0];
            if !paths::applies(plan) {
                continue;
            }
            let last = plan.step_n.saturating_sub(1);
            let drop_last = Mutated(move |_, step, out: &mut Vec<Transfer>| {
                if step == last {
                    out.clear();
                }
            });
            let seeded: [&dyn TransferSource; 4] = [&AsBuilt, &Mutated(&drop_step_1), &Mutated(twice), &drop_last];
            let every_other = seeded.map(RunsEveryOtherPhase);
            let sources = seeded.into_iter().chain(every_other.iter().map(|s| s as &dyn TransferSource));
            for source in sources {
                let want = paths::run_listed(&schedule, plan, 0, HalfChunk::H0, source, sequential);
                for listing in overlapped {
                    for pool in &pools {
                        let got =
                            pool.install(|| paths::run_listed(&schedule, plan, 0, HalfChunk::H0, source, listing));
                        assert_eq!(
                            got,
                            want,
                            "{op:?} {alg:?} n={n} {listing:?}, {} threads",
                            pool.current_num_threads()
                        );
                        compared += 1;
                    }
                }
                if want.is_some() { proven += 1 } else { refused += 1 }
            }
        }
    }
    assert!(compared > 5000 && proven > 500 && refused > 500, "{compared} {proven} {refused}");
}

/// The path run makes no cell array beyond the full run's limit on cells:
/// a ring broadcast over 16,384 members has 16,384^2 cells (its blocks
/// as many), so its cells are not laid out (it is proven member-major,
/// on runs, or refused as too large); 64 members' are.
#[test]
fn no_cell_array_beyond_the_limit_is_made() {
    for (n, made) in [(64, true), (16384, false)] {
        let mut case = Case::flat(OpType::Broadcast, AlgType::Ring, n, 64);
        case.count = 1 << 20;
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        assert_eq!(full_run_cells(plan) > MAX_PROOF_CELLS, !made, "{n} members");
        assert_eq!(paths::Cells::rows(plan).is_some(), made, "{n} members");
        assert!(paths::member_major(plan));
    }
}
