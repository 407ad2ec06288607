//! # ccc-bench: how ccc's cost grows
//!
//! `cargo bench -p ccc-bench` runs three small harnesses of their own (no
//! framework: they need ratios against a baseline measured in the same
//! run, which the common harnesses do not print): `benches/compile.rs`
//! (one rank and whole worlds, each beside MD5 of the bytes it emitted),
//! `benches/auto.rs` (what `algorithm: Auto` adds, beside lowering one
//! rank) and `benches/scale.rs` (large whole-world proofs, each in its own
//! process for its peak memory, in units of MD5 over 256 MiB). Each case is
//! timed as the median of repeated runs. This crate is separate from the
//! compiler so its build never slows the tests.

#![forbid(unsafe_code)]
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_compiler::parse::parse;
use ccc_compiler::pipeline::Compiled;
use ccc_compiler::valid::ValidProgram;
use ccc_compiler::validate::validate;
use std::time::{Duration, Instant};

/// A flat ring all-reduce over `rank_n` ranks (16 per node, 1 channel).
pub fn ring_allreduce(rank_n: u32, channels: u8) -> ValidProgram {
    ring_allreduce_of(rank_n, channels, 16_777_216)
}

/// [`ring_allreduce`] of `count` elements.
pub fn ring_allreduce_of(rank_n: u32, channels: u8, count: u64) -> ValidProgram {
    let local = rank_n.min(16);
    let src = format!(
        "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: {count}, arch: Cayman, \
         topology: (rank_n: {rank_n}, local_rank_n: {local}), channels: {channels}, algorithm: Ring)"
    );
    validate(&parse(&src).unwrap().program).unwrap()
}

/// The README's two-level all-reduce over `rank_n` ranks, 16 per node, 1
/// channel: a ring inside each node, a single-cycle ring across nodes, a
/// Kangaring inside again.
pub fn hier_allreduce(rank_n: u32) -> ValidProgram {
    let src = format!(
        "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 16777216, arch: Cayman, \
         topology: (rank_n: {rank_n}, local_rank_n: 16), channels: 1, algorithm: Hier((intra_reduce_scatter: Ring, \
         inter_all_reduce: SingleCycleRing, intra_all_gather: Kangaring)))"
    );
    validate(&parse(&src).unwrap().program).unwrap()
}

/// Median wall time of `f` over repeated runs: at least one run, then more
/// until `budget` is spent or 25 runs are done.
pub fn median<T>(budget: Duration, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let start = Instant::now();
    let mut last;
    loop {
        let t = Instant::now();
        last = f();
        times.push(t.elapsed());
        if start.elapsed() >= budget || times.len() >= 25 {
            break;
        }
    }
    times.sort_unstable();
    (times[times.len() / 2], last)
}

/// Every byte a compile emitted, in rank and TOP_SP order.
pub fn emitted_bytes(compiled: &Compiled) -> Vec<u8> {
    let mut out = Vec::new();
    for rank in &compiled.images {
        for t in &rank.topsps {
            out.extend_from_slice(&t.ctrl_spad);
            out.extend_from_slice(&t.slot_spad);
            out.extend_from_slice(&t.neff_configs[..]);
        }
    }
    out
}

/// Median time of MD5 over `bytes`.
pub fn md5_time(bytes: &[u8]) -> Duration {
    use md5::{Digest, Md5};
    median(Duration::from_millis(200), || Md5::digest(bytes)).0
}

/// `25 ns`, `12.3 µs`, `4.56 ms`, `1.23 s`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.1} µs", s * 1e6)
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}
