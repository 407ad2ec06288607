//! `cargo bench -p ccc-bench`: compile cost of ring all-reduces, each beside
//! the MD5 time of the bytes it emitted; lowering by records beside the
//! step walk it replaced (the last column: how many times faster); the proof's share of a verified
//! compile of a ring and of a two-level all-reduce.
//!
//! `CCC_BENCH_QUICK=1` skips the largest cases (for a smoke run);
//! `CCC_BENCH_PROOF_ONLY=1` runs only the verified compiles (for profiling).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_bench::{emitted_bytes, hier_allreduce, human, md5_time, median, ring_allreduce, ring_allreduce_of};
use ccc_compiler::pipeline::{Options, compile};
use ccc_compiler::valid::ValidProgram;
use ccc_ir::id::Rank;
use std::time::Duration;

fn main() {
    let quick = std::env::var_os("CCC_BENCH_QUICK").is_some();
    let budget = Duration::from_secs(2);
    println!("ccc benchmarks: ring all-reduce, Bf16 x 16777216, 1 channel; {} threads", rayon::current_num_threads());
    println!();
    println!(
        "{:<44} {:>10} {:>12} {:>10} {:>16} {:>9}",
        "case", "median", "per step", "bytes", "md5 same bytes", "ratio"
    );

    // One rank, growing world: cost must follow the rank's own steps, 2(n-1).
    let proof_only = std::env::var_os("CCC_BENCH_PROOF_ONLY").is_some();
    for rank_n in [8u32, 64, 1024, 8192, 65536] {
        if proof_only || (quick && rank_n > 8192) {
            continue;
        }
        let valid = ring_allreduce(rank_n, 1);
        let options = Options { ranks: vec![Rank(0)], verify: false, ..Options::default() };
        let (t, compiled) = median(budget, || compile(&valid, &options).unwrap());
        let bytes = emitted_bytes(&compiled);
        let steps = u64::from(compiled.schedule.collectives[0].step_n);
        report(&format!("compile rank 0 of {rank_n} ranks"), t, Some(steps), &bytes);
    }

    // Lowering alone, by records against the step walk it replaced, in the
    // same run (cheap: kept in quick runs too).
    if !proof_only {
        for rank_n in [1024u32, 65536] {
            let schedule = ccc_compiler::build::build(&ring_allreduce(rank_n, 1)).unwrap();
            let (records, _) = median(budget, || ccc_compiler::lower::lower(&schedule, Rank(0)).unwrap());
            let (steps, _) = median(budget, || ccc_compiler::lower::lower_by_steps(&schedule, Rank(0)).unwrap());
            println!(
                "{:<44} {:>10} {:>12} {:>10} {:>16} {:>8.0}x",
                format!("lower rank 0 of {rank_n} ranks: by records"),
                human(records),
                "-",
                "-",
                format!("by steps {}", human(steps)),
                steps.as_secs_f64() / records.as_secs_f64()
            );
        }
    }

    // The whole world.
    let valid = ring_allreduce(1024, 1);
    let all = Options { ranks: Vec::new(), verify: false, ..Options::default() };
    if !proof_only {
        let (t, compiled) = median(budget, || compile(&valid, &all).unwrap());
        report("compile all 1024 ranks (no proof)", t, None, &emitted_bytes(&compiled));
    }

    // The proof, and its share of a verified compile: the verified compile
    // beside the same compile without proof, in the same run. The share is
    // the time proving adds; the parts are what the provers timed (the
    // symmetry watch's walk of each rank's steps shows only in the
    // difference).
    println!();
    println!(
        "{:<36} {:>10} {:>10} {:>11} {:>10} {:>10} {:>11}",
        "all ranks, 16 per node", "no proof", "verified", "postcond.", "protocol", "round trip", "proof share"
    );
    type Spec = fn(u32) -> ValidProgram;
    let cases: [(&str, u32, Spec); 5] = [
        ("ring all-reduce", 1024, |n| ring_allreduce(n, 1)),
        ("ring all-reduce", 8192, |n| ring_allreduce(n, 1)),
        ("ring, uneven blocks", 1024, |n| ring_allreduce_of(n, 1, 16_777_215)),
        ("two-level all-reduce", 1024, hier_allreduce),
        ("two-level all-reduce", 8192, hier_allreduce),
    ];
    for (name, rank_n, spec) in cases {
        if quick && rank_n > 1024 {
            continue;
        }
        let valid = spec(rank_n);
        let run_budget = if rank_n > 1024 { Duration::from_secs(8) } else { budget };
        let unverified = Options { ranks: Vec::new(), verify: false, ..Options::default() };
        let (plain, _) = median(run_budget, || compile(&valid, &unverified).unwrap());
        let verified = Options { ranks: Vec::new(), verify: true, ..Options::default() };
        // Time and proof figures from one run: the run with the median total.
        let mut runs = Vec::new();
        median(run_budget, || {
            let t = std::time::Instant::now();
            let compiled = compile(&valid, &verified).unwrap();
            runs.push((t.elapsed(), compiled.proof.unwrap()));
        });
        runs.sort_by_key(|(t, _)| *t);
        let (t, proof) = &runs[runs.len() / 2];
        let t = *t;
        println!(
            "{:<36} {:>10} {:>10} {:>11} {:>10} {:>10} {:>10.0}%",
            format!("{name}, {rank_n} ranks"),
            human(plain),
            human(t),
            human(proof.postcondition_time),
            human(proof.protocol_time),
            human(proof.roundtrip_time),
            100.0 * t.saturating_sub(plain).as_secs_f64() / t.as_secs_f64()
        );
    }
}

fn report(case: &str, t: Duration, steps: Option<u64>, bytes: &[u8]) {
    let md5 = md5_time(bytes);
    let per_step = steps.map(|s| human(t / u32::try_from(s).unwrap_or(u32::MAX))).unwrap_or_else(|| "-".into());
    println!(
        "{:<44} {:>10} {:>12} {:>10} {:>16} {:>8.1}x",
        case,
        human(t),
        per_step,
        bytes.len(),
        human(md5),
        t.as_secs_f64() / md5.as_secs_f64()
    );
}
