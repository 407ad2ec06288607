//! `cargo bench -p ccc-bench --bench auto`: what `algorithm: Auto` adds to a
//! compile, beside what lowering one rank costs (issue 13: Auto must add
//! less than that).
//!
//! Auto's cost is validation with `Auto` minus validation with the
//! algorithm Auto chose written out (the same checks, without listing the
//! legal choices, planning them (composing each one's phases, not a whole
//! schedule), giving each a floor and predicting those that could win or
//! come second: the `predicted` column). Lowering one rank is
//! `lower_ranks(schedule, [rank 0])` on the chosen schedule. For context,
//! the last columns set Auto's cost beside a whole compile of rank 0 with
//! the choice written out (build, lower, encode and sign rank 0, without
//! the whole-world proof: what a framework pays at least for one rank's
//! bytes).
//!
//! The last case is a program: a training step whose 32 gradient
//! all-reduces come in 8 sizes. Validation plans each distinct
//! collective's candidates once and keeps what it costs of them for its
//! repeats (`validate`'s `ProgramAuto`, `cost::auto::Candidates`), so its
//! columns are the whole program's: Auto's cost over the program against
//! lowering (and compiling) rank 0 of the whole program.
//!
//! The `predict chosen` column is what predicting the chosen schedule
//! alone costs (`cost::predict` of its plan, as `evaluate` and the
//! manifest predict it; for a program, each distinct collective's once): what even a search told its winner beforehand
//! would pay to predict it by walking the schedule ccc builds, the least
//! `Auto` can add while it predicts from that schedule (issue 13, item 1).
//! Its ratio is to lowering one rank.
//!
//! The `warm` columns validate through an [`AutoCache`] that already holds
//! the case (`validate_cached`, what a lowering pass that compiles one
//! collective at a time pays when it meets a collective again): what
//! `Auto` adds then is the cached validation less the written one, set
//! beside lowering rank 0 again. A cache's first call for a collective
//! (`first_cached_validation`, through an empty cache) pays the search,
//! keeps what it found, and here frees it again, so that it is counted as
//! `auto_validation` is, freeing included.
//!
//! The times move with the machine's load; instruction counts do not:
//! `valgrind --tool=callgrind target/release/deps/auto-<hash> "16/node"`
//! runs one case (up to 25 validations each way within the time budget,
//! one more each for the columns, as many lowerings and compiles), and
//! `callgrind_annotate --inclusive=yes --threshold=100` gives the totals
//! of `auto_validation` and `written_validation` (what `Auto` adds is
//! their difference, freeing the result included), `cached_validation`
//! and `first_cached_validation`, `lower_ranks` and
//! `pipeline::compile`; `--tree=calling` gives their call counts to
//! divide by (`docs/cost-model.md` §7).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_bench::{human, median};
use ccc_compiler::build::build;
use ccc_compiler::cost::predict;
use ccc_compiler::pipeline::{Options, compile, lower_ranks};
use ccc_compiler::schedule::{CollectivePlan, Schedule};
use ccc_compiler::valid::ResolvedAlgorithm;
use ccc_compiler::validate::{AutoCache, validate, validate_cached};
use ccc_ir::arch::Arch;
use ccc_ir::enums::OpType;
use ccc_ir::id::Rank;
use ccc_ir::spec::{Algorithm, Collective, DType, HierLegs, Program, ReduceOp, Topology};
use std::time::Duration;

fn spec(op: OpType, arch: Arch, rank_n: u32, local: u32, count: u64) -> Collective {
    let c = Collective::new(op, DType::Bf16, count, arch, Topology::new(rank_n, local)).channels(4);
    if op.is_reducing() { c.reduce(ReduceOp::Add) } else { c }
}

/// The written form of a resolved algorithm.
fn written(r: &ResolvedAlgorithm) -> Algorithm {
    match r {
        ResolvedAlgorithm::Flat(a) => Algorithm::flat(*a).unwrap(),
        ResolvedAlgorithm::Hier(legs) => {
            let mut h = HierLegs::default();
            for &(leg, alg) in legs {
                h = h.with(leg, alg);
            }
            Algorithm::Hier(h)
        }
    }
}

/// One case: a program of collectives, each with `Auto`.
struct Case {
    name: &'static str,
    collectives: Vec<Collective>,
}

impl Case {
    fn one(name: &'static str, c: Collective) -> Case {
        Case { name, collectives: vec![c] }
    }
}

/// A training step's gradient all-reduces: 32 layers whose tensors come in
/// 8 sizes, 4 layers each, in layer order (each size recurs every 8).
fn training_step() -> Vec<Collective> {
    (0..32u64).map(|layer| spec(OpType::AllReduce, Arch::Cayman, 32, 16, (1 << 16) << (layer % 8))).collect()
}

/// One validation of `program` with `Auto`, its result dropped: what a
/// caller pays, freeing included. Not inlined, so that a profiler counts
/// it by name (`--toggle-collect=*auto_validation*`).
#[inline(never)]
fn auto_validation(program: &Program) {
    drop(validate(program).unwrap());
}

/// [`auto_validation`] of the same program with the choices written
/// out: its own name, so that the two are counted apart
/// (`--toggle-collect=*written_validation*`).
#[inline(never)]
fn written_validation(program: &Program) {
    drop(std::hint::black_box(validate(program).unwrap()));
}

/// Predicting the chosen schedule's `plans`, each alone
/// (`--toggle-collect=*chosen_prediction*`).
#[inline(never)]
fn chosen_prediction(schedule: &Schedule, plans: &[&CollectivePlan]) -> f64 {
    plans.iter().map(|p| std::hint::black_box(predict(schedule, p, &p.model).total_ns)).sum()
}

/// [`auto_validation`] through `cache`, which holds the program's answers
/// already: what a repeat costs (`--toggle-collect=*cached_validation*`).
#[inline(never)]
fn cached_validation(program: &Program, cache: &mut AutoCache) {
    drop(std::hint::black_box(validate_cached(program, cache).unwrap()));
}

/// [`auto_validation`] through an empty `cache`: a first call, which
/// searches and keeps what it found; then the cache is emptied, so that
/// freeing is counted as in [`auto_validation`].
#[inline(never)]
fn first_cached_validation(program: &Program, cache: &mut AutoCache) {
    drop(std::hint::black_box(validate_cached(program, cache).unwrap()));
    cache.clear();
}

fn main() {
    let budget = Duration::from_secs(2);
    let cases = [
        Case::one("all-reduce 32 ranks, 16/node, 8 MiB", spec(OpType::AllReduce, Arch::Cayman, 32, 16, 4 << 20)),
        Case::one("all-reduce 64 ranks, 32/node, 1 GiB", spec(OpType::AllReduce, Arch::Sunda, 64, 32, 256 << 20)),
        Case::one("all-gather 32 ranks, 32/node, 512 KiB", spec(OpType::AllGather, Arch::Sunda, 32, 32, 8192)),
        Case::one("all-reduce 1024 ranks, 64/node, 64 MiB", spec(OpType::AllReduce, Arch::Cayman, 1024, 64, 32 << 20)),
        Case { name: "32 all-reduces, 8 sizes (32 ranks, 16/node)", collectives: training_step() },
    ];
    println!(
        "{:<44} {:>8} {:>10} {:>12} {:>14} {:>11} {:>15} {:>13} {:>16} {:>13} {:>11} {:>11} {:>12} {:>8}",
        "case",
        "choices",
        "predicted",
        "Auto adds",
        "lower 1 rank",
        "Auto/lower",
        "predict chosen",
        "predict/lower",
        "compile 1 rank",
        "Auto/compile",
        "warm adds",
        "warm/lower",
        "first cached",
        "chosen"
    );
    // `cargo bench -p ccc-bench --bench auto -- 1024` runs the cases whose
    // name holds `1024` (a profiler's run); no filter runs them all.
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    for case in cases {
        if !filter.is_empty() && !filter.iter().any(|f| case.name.contains(f.as_str())) {
            continue;
        }
        let auto = Program {
            collectives: case
                .collectives
                .iter()
                .map(|c| Collective { algorithm: Algorithm::Auto, ..c.clone() })
                .collect(),
        };
        let (t_auto, ()) = median(budget, || auto_validation(&auto));
        let valid = validate(&auto).unwrap();
        let v = &valid.collectives()[0];
        let choices = v.auto().unwrap().alternatives.len();
        let predicted = v.auto().unwrap().alternatives.iter().filter(|a| a.predicted_ns.is_some()).count();
        let fixed = Program {
            collectives: case
                .collectives
                .iter()
                .zip(valid.collectives())
                .map(|(c, v)| Collective { algorithm: written(v.algorithm()), ..c.clone() })
                .collect(),
        };
        let (t_fixed, ()) = median(budget, || written_validation(&fixed));
        let valid_fixed = validate(&fixed).unwrap();
        let schedule = build(&valid).unwrap();
        let (t_lower, _) = median(budget, || lower_ranks(&schedule, &[Rank(0)]).unwrap());
        // Each distinct collective's once: a program's repeats take
        // their first's answer (`ProgramAuto`).
        let firsts: Vec<&CollectivePlan> = (schedule.collectives.iter().enumerate())
            .filter(|&(i, _)| !case.collectives[..i].contains(&case.collectives[i]))
            .map(|(_, p)| p)
            .collect();
        let (t_predict, _) = median(budget, || chosen_prediction(&schedule, &firsts));
        let rank0 = Options { ranks: vec![Rank(0)], verify: false, ..Options::default() };
        let (t_compile, _) = median(budget, || compile(&valid_fixed, &rank0).unwrap());
        let mut cache = AutoCache::new();
        let (t_first, ()) = median(budget, || first_cached_validation(&auto, &mut cache));
        drop(validate_cached(&auto, &mut cache).unwrap());
        let (t_warm, ()) = median(budget, || cached_validation(&auto, &mut cache));
        let adds = t_auto.saturating_sub(t_fixed);
        // A warm cache's `Auto` is within the wall clock's noise of the
        // written validation, so the difference can come out below 0:
        // printed as `< 0`.
        let warm = t_warm.saturating_sub(t_fixed);
        println!(
            "{:<44} {:>8} {:>10} {:>12} {:>14} {:>10.2}x {:>15} {:>12.2}x {:>16} {:>12.2}x {:>11} {:>10.2}x {:>12} {:>8}",
            case.name,
            choices,
            predicted,
            human(adds),
            human(t_lower),
            adds.as_secs_f64() / t_lower.as_secs_f64(),
            human(t_predict),
            t_predict.as_secs_f64() / t_lower.as_secs_f64(),
            human(t_compile),
            adds.as_secs_f64() / t_compile.as_secs_f64(),
            if t_warm < t_fixed { "< 0".to_owned() } else { human(warm) },
            warm.as_secs_f64() / t_lower.as_secs_f64(),
            human(t_first.saturating_sub(t_fixed)),
            ccc_compiler::cost::auto::display(v.algorithm()).chars().take(8).collect::<String>()
        );
    }
}
