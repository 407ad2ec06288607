//! `cargo bench -p ccc-bench --bench scale`: issue 12's table, whole-world
//! verified compiles of large worlds, each in a process of its own so that
//! its peak memory is its own.
//!
//! The unit is the time MD5 takes over 256 MiB, measured in this run (the
//! issue's `md5sum` of a 256 MiB file, in process): every wall time is
//! printed beside its ratio to it. Each row runs [`RUNS`] times each way,
//! the two ways alternating, every run a fresh child process (so that
//! each pays the same cold start: a first compile in a process pays for
//! its thread pool and fresh pages, which would otherwise fall on
//! whichever way ran first): verified, the whole world compiled and
//! proven, keeping no rank's output (what `ccc verify` does), its wall
//! and the child's peak resident memory (`VmHWM`) read right after; and
//! unverified, the same compile without the proof (every rank still
//! lowered and encoded, nothing kept). The row prints the median wall of
//! each way, the largest verified peak, and the proof's share: the
//! difference of the medians over the verified median.
//!
//! `CCC_BENCH_QUICK=1` skips the rows above 8,192 ranks;
//! `CCC_SCALE_ROWS=TEXT[;TEXT...]` runs only the rows whose label (as
//! printed, with its ranks) contains one of the `TEXT`s.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_bench::{emitted_bytes, human, md5_time, median};
use ccc_compiler::parse::parse;
use ccc_compiler::pipeline::{Options, compile};
use ccc_compiler::validate::validate;
use ccc_ir::id::Rank;
use std::process::Command;
use std::time::{Duration, Instant};

/// The child's environment variable naming its row.
const ROW_VAR: &str = "CCC_SCALE_ROW";

/// The child's environment variable naming its way: set (to anything) for
/// the compile without the proof.
const PLAIN_VAR: &str = "CCC_SCALE_PLAIN";

/// Runs of each row each way (the median is printed). Seven, not three:
/// on this project's 2-core virtual machine a child's wall moves by up to
/// 2x between runs of one binary (the InterRdh row's 20 ms verified
/// compile took 18 to 38 ms over 15 runs), and a median of three such
/// runs moved a row's proof share by 10 points between bench runs.
const RUNS: usize = 7;

/// A row: its label and its spec.
struct Row {
    name: &'static str,
    rank_n: u32,
    spec: &'static str,
}

const HIER: &str = "Hier((intra_reduce_scatter: Kangaring, inter_all_reduce: InterRdh, intra_all_gather: Ring))";

fn rows() -> Vec<Row> {
    let ar = |rank_n: u32, local: u32, ch: u32, alg: &str| {
        format!(
            "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 16777216, arch: Cayman, \
             topology: (rank_n: {rank_n}, local_rank_n: {local}), channels: {ch}, algorithm: {alg})"
        )
    };
    let rooted = |op: &str, reduce: &str| {
        format!(
            "Collective(op: {op}, dtype: Bf16, {reduce}count: 16777216, arch: Cayman, \
             topology: (rank_n: 4096, local_rank_n: 16), channels: 4, algorithm: Ring, root: 7)"
        )
    };
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    vec![
        Row { name: "Ring all-reduce, 32/node, 32 ch", rank_n: 8192, spec: leak(ar(8192, 32, 32, "Ring")) },
        Row { name: "Hier all-reduce, 32/node, 8 ch", rank_n: 8192, spec: leak(ar(8192, 32, 8, HIER)) },
        Row { name: "Hier all-reduce, 32/node, 8 ch", rank_n: 32768, spec: leak(ar(32768, 32, 8, HIER)) },
        Row { name: "Hier all-reduce, 32/node, 8 ch", rank_n: 65536, spec: leak(ar(65536, 32, 8, HIER)) },
        Row { name: "Ring broadcast, 16/node, 4 ch, root 7", rank_n: 4096, spec: leak(rooted("Broadcast", "")) },
        Row { name: "Ring reduce, 16/node, 4 ch, root 7", rank_n: 4096, spec: leak(rooted("Reduce", "reduce: Add, ")) },
        Row { name: "InterRdh all-reduce, 32/node, 1 ch", rank_n: 3072, spec: leak(ar(3072, 32, 1, "InterRdh")) },
        // Shapes whose whole-world cost was quadratic until stop 33 (the
        // next five until stop 34): a
        // count that leaves half the ranks a bigger block, a Mesh
        // point-to-point whose scope is the world, a 25-channel
        // LatencyOptMesh (each incoming mesh transfer's bytes).
        Row { name: "Ring all-reduce, count % n = n/2, 16/node, 1 ch", rank_n: 16384, spec: leak(uneven()) },
        Row { name: "Hier rings all-reduce, count % n = n/2, 16/node, 4 ch", rank_n: 32768, spec: leak(hier_uneven()) },
        Row {
            name: "Ring broadcast, count % g = 37, 4 strided groups, 4 ch",
            rank_n: 32768,
            spec: leak(strided_broadcast()),
        },
        Row { name: "Hier rings all-gather, 16/node, 4 ch", rank_n: 32768, spec: leak(hier_all_gather()) },
        Row { name: "PermuteReduce over Ring, peer n/2, 16/node, 4 ch", rank_n: 32768, spec: leak(far_peers()) },
        Row { name: "Ring all-to-all, 16/node, 4 ch", rank_n: 32768, spec: leak(all_to_all()) },
        Row { name: "Ring broadcast, one group, 64/node, 4 ch, root 3", rank_n: 32768, spec: leak(whole_broadcast()) },
        Row { name: "15 rooted and reducing collectives, 16/node, 1 ch", rank_n: 8192, spec: leak(rooted_program()) },
        Row { name: "Recv over Mesh, peer 1, 16/node, 2 ch", rank_n: 16384, spec: leak(recv()) },
        Row { name: "LatencyOptMesh all-reduce, 16/node, 25 ch", rank_n: 1024, spec: leak(latency_opt()) },
    ]
}

/// A flat ring of 16,384 ranks whose count leaves 8,192 of them a block
/// one element bigger.
fn uneven() -> String {
    "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 16785408, arch: Cayman, \
     topology: (rank_n: 16384, local_rank_n: 16), channels: 1, algorithm: Ring)"
        .to_owned()
}

/// A hierarchical all-reduce over rings of 32,768 ranks (2,048 nodes)
/// whose count leaves 16,384 of them a block one element bigger: its
/// inner legs move a block per node.
fn hier_uneven() -> String {
    "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 16793600, arch: Cayman, \
     topology: (rank_n: 32768, local_rank_n: 16), channels: 4, algorithm: Hier((intra_reduce_scatter: Ring, \
     inter_all_reduce: Ring, intra_all_gather: Ring)))"
        .to_owned()
}

/// A ring broadcast from rank 3 in 4 replica groups of 8,192 ranks, each
/// every fourth rank, whose count leaves 37 ranks of each a bigger block.
fn strided_broadcast() -> String {
    let n = 32768u32;
    let groups: Vec<String> = (0..4)
        .map(|j| {
            let members: Vec<String> = (j..n).step_by(4).map(|r| r.to_string()).collect();
            format!("[{}]", members.join(","))
        })
        .collect();
    format!(
        "Collective(op: Broadcast, dtype: Bf16, count: {}, arch: Cayman, \
         topology: (rank_n: {n}, local_rank_n: 16), channels: 4, algorithm: Ring, root: 3, groups: [{}])",
        (n / 4) * 64 + 37,
        groups.join(",")
    )
}

/// A hierarchical all-gather over rings of 32,768 ranks (2,048 nodes).
fn hier_all_gather() -> String {
    "Collective(op: AllGather, dtype: Bf16, count: 2097152, arch: Cayman, \
     topology: (rank_n: 32768, local_rank_n: 16), channels: 4, \
     algorithm: Hier((inter_all_gather: Ring, intra_all_gather: Ring)))"
        .to_owned()
}

/// Every rank of 32,768 reduces its buffer into the rank half the world
/// away.
fn far_peers() -> String {
    "Collective(op: PermuteReduce, dtype: Bf16, reduce: Add, count: 2097152, arch: Cayman, \
     topology: (rank_n: 32768, local_rank_n: 16), channels: 4, algorithm: Ring, peer: 16384)"
        .to_owned()
}

/// An all-to-all over a ring of 32,768 ranks, 16 elements a peer.
fn all_to_all() -> String {
    "Collective(op: AllToAll, dtype: Bf16, count: 524288, arch: Cayman, \
     topology: (rank_n: 32768, local_rank_n: 16), channels: 4, algorithm: Ring)"
        .to_owned()
}

/// A ring broadcast over one group of 32,768 ranks: 2^30 cells for a
/// full symbolic run, proven member-major on runs (refused before stop 35).
fn whole_broadcast() -> String {
    "Collective(op: Broadcast, dtype: Bf16, count: 1048576, root: 3, arch: Cayman, \
     topology: (rank_n: 32768, local_rank_n: 64), channels: 4, algorithm: Ring)"
        .to_owned()
}

/// Five rounds of a broadcast over InterRdh in contiguous groups of 256,
/// a ring reduce in strided groups of 64 and an all-reduce over InterRdh
/// on 8,192 ranks: every rank's TOP_SP differs in the descriptors it
/// posts (the round trip was quadratic in them before stop 35).
fn rooted_program() -> String {
    let n = 8192u32;
    let contiguous: Vec<String> = (0..n / 256)
        .map(|g| format!("[{}]", (g * 256..(g + 1) * 256).map(|r| r.to_string()).collect::<Vec<_>>().join(", ")))
        .collect();
    let strided: Vec<String> = (0..n / 64)
        .map(|g| format!("[{}]", (0..64).map(|k| (g + k * (n / 64)).to_string()).collect::<Vec<_>>().join(", ")))
        .collect();
    let topology = format!("arch: Cayman, topology: (rank_n: {n}, local_rank_n: 16), channels: 1");
    let mut collectives = Vec::new();
    for k in 0..5u32 {
        let count = 4096 * (k + 1) + 37;
        collectives.push(format!(
            "Collective(op: Broadcast, dtype: Bf16, count: {count}, root: {}, {topology}, algorithm: InterRdh, \
             groups: [{}])",
            (7 * k + 100) % 256,
            contiguous.join(", ")
        ));
        collectives.push(format!(
            "Collective(op: Reduce, dtype: Bf16, reduce: Add, count: {count}, root: 3, {topology}, \
             algorithm: Ring, groups: [{}])",
            strided.join(", ")
        ));
        collectives.push(format!(
            "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: {}, {topology}, algorithm: InterRdh)",
            1 + k
        ));
    }
    format!("Program(collectives: [{}])", collectives.join(", "))
}

/// Every rank of 16,384 receives from the next one over Mesh.
fn recv() -> String {
    "Collective(op: Recv, dtype: Bf16, count: 2097152, arch: Cayman, \
     topology: (rank_n: 16384, local_rank_n: 16), channels: 2, algorithm: Mesh, peer: 1)"
        .to_owned()
}

/// A LatencyOptMesh all-reduce over 1,024 ranks on 25 channels.
fn latency_opt() -> String {
    "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 16777216, arch: MarianaPlus, \
     topology: (rank_n: 1024, local_rank_n: 16), channels: 25, algorithm: LatencyOptMesh)"
        .to_owned()
}

fn main() {
    if let Some(row) = std::env::var_os(ROW_VAR) {
        child(row.to_str().unwrap().parse().unwrap());
        return;
    }
    let quick = std::env::var_os("CCC_BENCH_QUICK").is_some();
    let only = std::env::var("CCC_SCALE_ROWS").ok();
    let unit = md5_unit();
    println!(
        "ccc scale benchmark; unit: MD5 of 256 MiB = {} in this run; {} threads",
        human(unit),
        rayon::current_num_threads()
    );
    println!();
    println!(
        "{:<44} {:>10} {:>7} {:>10} {:>10} {:>7} {:>11}",
        "whole world, verified, nothing kept", "wall", "units", "peak", "no proof", "units", "proof share"
    );
    for (i, row) in rows().iter().enumerate() {
        let label = format!("{}, {} ranks", row.name, row.rank_n);
        if quick && row.rank_n > 8192 || only.as_ref().is_some_and(|only| !only.split(';').any(|t| label.contains(t))) {
            continue;
        }
        let (mut verified, mut plain, mut peak_kib) = (Vec::new(), Vec::new(), 0.0f64);
        for _ in 0..RUNS {
            let (wall, peak) = run_child(i, false);
            verified.push(wall);
            peak_kib = peak_kib.max(peak);
            plain.push(run_child(i, true).0);
        }
        let (verified, plain) = (middle(verified), middle(plain));
        println!(
            "{:<44} {:>10} {:>7.2} {:>7.0} MiB {:>10} {:>7.2} {:>10.0}%",
            label,
            human(verified),
            verified.as_secs_f64() / unit.as_secs_f64(),
            peak_kib / 1024.0,
            human(plain),
            plain.as_secs_f64() / unit.as_secs_f64(),
            100.0 * verified.saturating_sub(plain).as_secs_f64() / verified.as_secs_f64()
        );
    }

    // One rank of a 65,536-rank flat ring, against MD5 of its own bytes.
    println!();
    let spec = "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 16777216, arch: Cayman, \
                topology: (rank_n: 65536, local_rank_n: 32), channels: 1, algorithm: Ring)";
    let valid = validate(&parse(spec).unwrap().program).unwrap();
    let options = Options { ranks: vec![Rank(0)], verify: false, ..Options::default() };
    let (t, compiled) = median(Duration::from_secs(2), || compile(&valid, &options).unwrap());
    let bytes = emitted_bytes(&compiled);
    let md5 = md5_time(&bytes);
    println!(
        "one rank of a 65536-rank flat ring: {} for {} bytes; MD5 of them {}; ratio {:.1}x",
        human(t),
        bytes.len(),
        human(md5),
        t.as_secs_f64() / md5.as_secs_f64()
    );
}

/// MD5 of 256 MiB: the median of three runs.
fn md5_unit() -> Duration {
    use md5::{Digest, Md5};
    let buf: Vec<u8> = (0..256u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let mut times: Vec<Duration> = (0..3)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(Md5::digest(&buf));
            t.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[1]
}

/// Row `row` compiled once in a fresh child, verified or (`plain`) not:
/// its wall and the child's peak resident memory, KiB.
fn run_child(row: usize, plain: bool) -> (Duration, f64) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.env(ROW_VAR, row.to_string());
    if plain {
        command.env(PLAIN_VAR, "1");
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let line = String::from_utf8(out.stdout).unwrap();
    let f: Vec<f64> = line.split_whitespace().map(|w| w.parse().unwrap()).collect();
    (Duration::from_secs_f64(f[0]), f[1])
}

/// The median of `times` (the middle one of an odd count).
fn middle(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

/// One row compiled once, in a child: prints its wall (s) and the peak
/// resident memory then (KiB). Verified unless [`PLAIN_VAR`] is set.
fn child(row: usize) {
    let rows = rows();
    let valid = validate(&parse(rows[row].spec).unwrap().program).unwrap();
    let budget = 64u64 << 30;
    let verify = std::env::var_os(PLAIN_VAR).is_none();
    let options = Options { ranks: Vec::new(), verify, emit: false, memory_budget: budget, ..Options::default() };
    let t = Instant::now();
    let compiled = compile(&valid, &options).unwrap();
    let wall = t.elapsed();
    drop(compiled);
    println!("{} {}", wall.as_secs_f64(), peak_kib());
}

/// This process's peak resident memory, KiB (`VmHWM`).
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}
