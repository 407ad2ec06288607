#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Counted nouns agree with their number in what the CLI prints (issue
//! 10, item 8): a one-rank world, a one-step all-gather and a one-node
//! world say `1 rank`, `1 step`, `1 node`, never `1 ranks`. The agreement
//! itself is `ccc_ir::noun`, unit-tested there.

use std::process::{Command, Output};

/// A ring all-reduce on one rank: one rank, one chain, no steps.
const ONE_RANK: &str = "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 1024, arch: Cayman, \
                        topology: (rank_n: 1, local_rank_n: 1), channels: 1, algorithm: Ring)";

/// A ring all-gather over two one-rank nodes: one phase of one step.
const ONE_STEP: &str = "Collective(op: AllGather, dtype: F32, count: 1024, arch: Cayman, \
                        topology: (rank_n: 2, local_rank_n: 1), channels: 1, algorithm: Ring)";

fn ccc(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ccc")).args(args).current_dir(dir).env("NO_COLOR", "1").output().unwrap()
}

fn stdout(dir: &std::path::Path, args: &[&str]) -> String {
    let out = ccc(dir, args);
    assert!(out.status.success(), "ccc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn one_of_anything_is_singular() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("one.ron"), ONE_RANK).unwrap();
    std::fs::write(dir.join("two.ron"), ONE_STEP).unwrap();

    let check = stdout(dir, &["check", "one.ron"]);
    assert!(check.contains("Cayman: 1 rank, 1 per node, 1 node, 1 pod;"), "{check}");
    assert!(check.contains("1 group of 1, 1 channel, Ring"), "{check}");

    let verify = stdout(dir, &["verify", "one.ron"]);
    assert!(verify.contains("one.ron: 1 collective, 1 rank, 1 TOP_SP per rank (Cayman)"), "{verify}");
    assert!(verify.contains("protocol of 1 chain, 0 records, 0 steps checked"), "{verify}");
    assert!(!verify.contains(" 1 ranks") && !verify.contains(" 1 chains"), "{verify}");

    let verify = stdout(dir, &["verify", "two.ron"]);
    assert!(verify.contains("2 ranks, 1 TOP_SP per rank"), "{verify}");
    assert!(verify.contains("Ring, 1 phase, 1 step\n"), "{verify}");
    assert!(verify.contains("(1 group of 2, 2 transfers matched)"), "{verify}");
    assert!(verify.contains("symmetry: 1 group ran"), "{verify}");

    let compile = stdout(dir, &["compile", "one.ron", "-o", "out"]);
    assert!(compile.contains("wrote out: 1 rank, 4 files, "), "{compile}");

    let compile = ccc(dir, &["compile", "one.ron", "-o", "out1", "--rank", "1"]);
    let stderr = String::from_utf8(compile.stderr).unwrap();
    assert_eq!(compile.status.code(), Some(2));
    assert!(stderr.contains("no such rank: the world has 1 rank; accepted: rank 0"), "{stderr}");
    assert!(!stderr.contains("1 ranks"), "{stderr}");

    let explain = stdout(dir, &["explain", "one.ron"]);
    assert!(explain.contains("one.ron: 1 rank, 1 per node, 1 collective on Cayman"), "{explain}");
    // No phase: its time is 0, not -0 (an empty f64 sum), its bound too.
    assert!(explain.contains("leg flat: Ring 0.00 us (bound 0.00 us)"), "{explain}");
    // One legal choice (a ring of 65,536 all-to-all steps does not lower)
    // lost to nothing: no heading over an empty list.
    let lone = "Collective(op: AllToAll, dtype: F32, count: 65536, arch: Cayman, \
                topology: (rank_n: 65536, local_rank_n: 65536), channels: 1, algorithm: Auto)";
    std::fs::write(dir.join("lone.ron"), lone).unwrap();
    let explain = stdout(dir, &["explain", "lone.ron"]);
    assert!(explain.contains(": 1 legal choice\n") && !explain.contains("why the others lost"), "{explain}");
    let sweep = stdout(dir, &["sweep", "one.ron", "--from", "4KiB", "--to", "4KiB"]);
    assert!(sweep.contains("# AllReduce over 1 rank (1 per node) on Cayman, 1 channel;"), "{sweep}");

    let graph = ccc(dir, &["graph", "one.ron", "--rank", "1"]);
    let stderr = String::from_utf8(graph.stderr).unwrap();
    assert_eq!(graph.status.code(), Some(2));
    assert!(stderr.contains("--rank 1: no such rank: the world has 1 rank"), "{stderr}");
    assert!(stderr.contains("accepted: rank 0"), "{stderr}");
}
