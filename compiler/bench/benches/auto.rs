//! `cargo bench -p ccc-bench --bench auto`: what `algorithm: Auto` adds to a
//! compile, beside what lowering one rank costs (issue 13: Auto must add
//! less than that).
//!
//! Auto's cost is validation with `Auto` minus validation with the
//! algorithm Auto chose written out (the same checks, without listing the
//! legal choices, planning them (composing each one's phases, not a whole
//! schedule), giving each a floor and predicting those that could win or
//! come second: the `predicted` column). Lowering one rank is
//! `lower_ranks(schedule, [rank 0])` on the chosen schedule.
//!
//! The times move with the machine's load; instruction counts do not:
//! `valgrind --tool=callgrind target/release/deps/auto-<hash> "16/node"`
//! runs one case (25 validations each way, 25 lowerings), and
//! `callgrind_annotate --inclusive=yes` gives `cost::auto::choose`,
//! `Checker::algorithm` (listing the choices) and `lower_ranks` per call
//! (`docs/cost-model.md` §7, revisions (9) to (11)).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_bench::{human, median};
use ccc_compiler::build::build;
use ccc_compiler::pipeline::lower_ranks;
use ccc_compiler::valid::ResolvedAlgorithm;
use ccc_compiler::validate::validate;
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

fn main() {
    let budget = Duration::from_secs(2);
    let cases = [
        ("all-reduce 32 ranks, 16/node, 8 MiB", spec(OpType::AllReduce, Arch::Cayman, 32, 16, 4 << 20)),
        ("all-reduce 64 ranks, 32/node, 1 GiB", spec(OpType::AllReduce, Arch::Sunda, 64, 32, 256 << 20)),
        ("all-gather 32 ranks, 32/node, 512 KiB", spec(OpType::AllGather, Arch::Sunda, 32, 32, 8192)),
        ("all-reduce 1024 ranks, 64/node, 64 MiB", spec(OpType::AllReduce, Arch::Cayman, 1024, 64, 32 << 20)),
    ];
    println!(
        "{:<42} {:>8} {:>10} {:>12} {:>14} {:>14} {:>8}",
        "case", "choices", "predicted", "Auto adds", "lower 1 rank", "Auto/lower", "chosen"
    );
    // `cargo bench -p ccc-bench --bench auto -- 1024` runs the cases whose
    // name holds `1024` (a profiler's run); no filter runs them all.
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    for (name, c) in cases {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let auto = Collective { algorithm: Algorithm::Auto, ..c.clone() };
        let (t_auto, valid) = median(budget, || validate(&Program::from(auto.clone())).unwrap());
        let v = &valid.collectives()[0];
        let choices = v.auto().unwrap().alternatives.len();
        let predicted = v.auto().unwrap().alternatives.iter().filter(|a| a.predicted_ns.is_some()).count();
        let fixed = Collective { algorithm: written(v.algorithm()), ..c };
        let (t_fixed, _) = median(budget, || validate(&Program::from(fixed.clone())).unwrap());
        let schedule = build(&valid).unwrap();
        let (t_lower, _) = median(budget, || lower_ranks(&schedule, &[Rank(0)]).unwrap());
        let adds = t_auto.saturating_sub(t_fixed);
        println!(
            "{:<42} {:>8} {:>10} {:>12} {:>14} {:>13.2}x {:>8}",
            name,
            choices,
            predicted,
            human(adds),
            human(t_lower),
            adds.as_secs_f64() / t_lower.as_secs_f64(),
            ccc_compiler::cost::auto::display(v.algorithm()).chars().take(8).collect::<String>()
        );
    }
}
