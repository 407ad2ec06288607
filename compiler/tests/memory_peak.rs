//! The memory budget's estimate against the heap a compile really holds:
//! `dhat`'s allocator counts every byte allocated and freed, so the peak
//! over a compile is measured, not guessed. A prover that holds its
//! symmetry's orbits (a large symmetric ring's are most of what it holds)
//! must be estimated to hold them: the estimate left them out, and a
//! million-rank ring estimated at 88 MiB held 264 MiB; so must a path run
//! along a rooted ring's chain, which holds every member's runs.
//!
//! Its own test binary (`compiler/Cargo.toml`): the allocator is global.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_compiler::manifest::Manifest;
use ccc_compiler::pipeline::{CompileError, Options, compile_source};
use ccc_compiler::verify::ProverOptions;
use ccc_ir::id::Rank;
use std::sync::Arc;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// A flat ring all-reduce over `rank_n` ranks: symmetric, its proof taken
/// on member 0's orbit, one step per rank and direction.
fn ring(rank_n: u32) -> String {
    format!(
        "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 1048576, arch: Cayman,
            topology: (rank_n: {rank_n}, local_rank_n: 16), channels: 1, algorithm: Ring)"
    )
}

/// The estimate for `src` under `options`: what the budget refuses at one
/// byte says it needs.
fn estimate(src: &str, options: &Options) -> u64 {
    match compile_source(src, &Options { memory_budget: 1, ..options.clone() }) {
        Err(CompileError::Memory(e)) => e.needed,
        other => panic!("not refused for memory: {:?}", other.map(|_| ())),
    }
}

/// The heap's peak over a compile of `src` under `options`, above what
/// was held before it, bytes.
fn peak(src: &str, options: &Options) -> u64 {
    measured(|| {
        let compiled = compile_source(src, options);
        assert!(compiled.is_ok(), "{:?}", compiled.map(|_| ()));
    })
}

/// The heap's peak while `run` runs, above what was held before it, bytes.
fn measured(run: impl FnOnce()) -> u64 {
    let profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get().curr_bytes;
    run();
    let peak = dhat::HeapStats::get().max_bytes.saturating_sub(before);
    drop(profiler);
    peak as u64
}

/// A 262,144-rank ring: a verify (no rank kept) is estimated at least at
/// the heap's peak (small worlds are estimated well above it: the tables
/// of distinct programs are counted at their caps, 16 MiB each, while a
/// ring has few; here the orbit, about 45 MiB, is most of it); so is a
/// compile of four ranks that takes a certificate, which held the orbit
/// (to count the receives the certificate's figures claim) though only
/// its tables were estimated: 160 MiB held at a million ranks, against an
/// estimate of 16 MiB. (One test: `dhat` runs one profiler at a time.)
#[test]
fn the_estimate_bounds_the_heap_a_compile_holds() {
    let src = ring(262_144);
    let verify = Options { emit: false, prover: ProverOptions::default(), ..Options::default() };
    let (estimated, held) = (estimate(&src, &verify), peak(&src, &verify));
    assert!(held <= estimated, "verify: the heap's peak {held} passes the estimate {estimated}");
    // The estimate counts the orbit without holding it: a refusal spends
    // nothing world-sized (it built the orbit, 45 MiB here, 150 MiB at a
    // million ranks, to measure it).
    let refusing = measured(|| {
        estimate(&src, &verify);
    });
    assert!(refusing < estimated / 8, "a refusal held {refusing} bytes of an estimate of {estimated}");

    let proven = compile_source(&src, &Options { ranks: vec![Rank(0)], ..Options::default() });
    let (_, _, proven) = proven.unwrap_or_else(|e| panic!("{e}"));
    let certificate = Some(Arc::new(Manifest::of(&proven)));
    drop(proven);
    let ranks = (0..4).map(Rank).collect();
    let certified = Options { ranks, certificate, ..Options::default() };
    let (estimated, held) = (estimate(&src, &certified), peak(&src, &certified));
    assert!(held <= estimated, "certified: the heap's peak {held} passes the estimate {estimated}");

    // A rooted ring broadcast is not symmetric: its postcondition is a
    // path run along the chain, member-major, which holds every member's
    // runs; the estimate counted none of it (a million ranks held 1.37
    // GiB under an estimate of 87.5 MiB).
    let broadcast = "Collective(op: Broadcast, dtype: Bf16, count: 16777216, root: 5, arch: Cayman,
        topology: (rank_n: 65536, local_rank_n: 16), channels: 1, algorithm: Ring)";
    let (estimated, held) = (estimate(broadcast, &verify), peak(broadcast, &verify));
    assert!(held <= estimated, "broadcast: the heap's peak {held} passes the estimate {estimated}");
}
