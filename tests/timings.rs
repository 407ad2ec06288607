#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The times the summary prints are consistent (issue 12, item 3): the
//! `time:` line's parts add up to its total, its proof part is the `proof
//! time:` line's total, and that line's parts add up to it. Not a timed
//! assertion: every figure is printed to 0.1 ms, so sums may differ by the
//! rounding of their terms and nothing else, whatever the machine's speed.
//!
//! Also the library's side: a compile's `Times`' proof part is the
//! proof's time, and a compile that keeps no rank
//! (`Options::emit` off) proves the same as one that keeps them all.

use ccc_compiler::pipeline::{Options, compile_source};
use std::path::Path;
use std::process::Command;

/// The line starting `label`, `label T ms (NAME V ms, NAME V ms, ...)`:
/// the total `T`, then every part's name and value, in order.
fn figures(summary: &str, label: &str) -> (f64, Vec<(String, f64)>) {
    let line = summary.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label} in:\n{summary}"));
    let ms =
        |s: &str| -> f64 { s.trim().strip_suffix(" ms").unwrap_or_else(|| panic!("{s:?} in {line}")).parse().unwrap() };
    let (total, parts) = line[label.len()..].split_once(" (").unwrap_or_else(|| panic!("no parts in {line}"));
    let parts = parts.strip_suffix(')').unwrap_or_else(|| panic!("{line}"));
    let parts = parts
        .split(", ")
        .map(|part| {
            let (name, value) = part.split_once(' ').unwrap_or_else(|| panic!("{part:?} in {line}"));
            let (name, value) = match value.split_once(' ') {
                // A two-word name ("round trip").
                Some((more, value)) if more.parse::<f64>().is_err() => (format!("{name} {more}"), value),
                _ => (name.to_owned(), value),
            };
            (name, ms(value))
        })
        .collect();
    (ms(total), parts)
}

/// The parts after the total, by name, add up to it within the rounding
/// of every figure (half a tenth of a millisecond each).
fn assert_adds_up(summary: &str, label: &str, names: &[&str]) -> f64 {
    let (total, parts) = figures(summary, label);
    let got: Vec<&str> = parts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(got, names, "{label} parts in:\n{summary}");
    let sum: f64 = parts.iter().map(|(_, v)| v).sum();
    let rounding = 0.05 * (parts.len() + 1) as f64 + 1e-9;
    assert!((total - sum).abs() <= rounding, "{label} {total} ms, its parts {sum} ms:\n{summary}");
    total
}

/// What the summary of `ccc args` prints, on success.
fn summary(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ccc")).args(args).env("NO_COLOR", "1").output().unwrap();
    assert!(out.status.success(), "ccc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

const PARTS: [&str; 7] = ["load", "build", "lower", "encode", "proof", "other", "write"];

#[test]
fn the_printed_times_add_up() {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/allreduce_inter_rdh_nonpow2.ron");
    let spec = spec.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for args in [vec!["verify", spec], vec!["compile", spec, "-o", out.to_str().unwrap()]] {
        let summary = summary(&args);
        assert_adds_up(&summary, "time:", &PARTS);
        let proof = assert_adds_up(&summary, "proof time:", &["lower", "postcondition", "protocol", "round trip"]);
        let in_total = figures(&summary, "time:").1.into_iter().find(|(n, _)| n == "proof").unwrap().1;
        assert!(
            (proof - in_total).abs() < 1e-9,
            "{args:?}: proof time {proof} ms, in the total {in_total}:\n{summary}"
        );
    }
}

#[test]
fn a_compile_that_keeps_no_rank_proves_the_same() {
    let src = "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 65536, arch: Cayman,
        topology: (rank_n: 24, local_rank_n: 4), channels: 2, algorithm: Ring)";
    let (_, _, kept) = compile_source(src, &Options { chunk_ranks: 5, ..Options::default() }).unwrap();
    let (_, _, none) = compile_source(src, &Options { emit: false, chunk_ranks: 7, ..Options::default() }).unwrap();
    assert_eq!((kept.programs.len(), kept.images.len()), (24, 24));
    assert!(none.programs.is_empty() && none.images.is_empty());
    let (a, b) = (kept.proof.unwrap(), none.proof.unwrap());
    assert_eq!((&a.postcondition, &a.protocol, a.images_checked), (&b.postcondition, &b.protocol, b.images_checked));
    for (times, proof) in [(kept.times, a), (none.times, b)] {
        assert_eq!(times.proof, proof.time());
    }
    // Keeping none, every rank's lowering and encoding is the proof's.
    assert_eq!((none.times.lower, none.times.encode), (std::time::Duration::ZERO, std::time::Duration::ZERO));
}
