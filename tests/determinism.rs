#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Determinism: the same spec gives the same bytes, whatever the run, the
//! thread count, or the set of ranks compiled beside a rank.
//!
//! - `compiling_twice_gives_identical_bytes`: every example, twice.
//! - `thread_counts_do_not_change_the_bytes`: every example inside rayon
//!   pools of 1, 2 and 4 threads.
//! - `parallel_provers_agree_with_sequential_ones`: the provers' parallel
//!   path, forced on small examples, in pools of 1, 2 and 4 threads.
//! - `one_rank_alone_is_the_rank_in_the_world`: for several examples, rank
//!   0, a middle rank and the last rank compiled alone (`Options::ranks`)
//!   are byte-identical to the same rank compiled with the whole world,
//!   with and without verification.
//! - `the_cli_writes_identical_folders`: `ccc compile` run twice into two
//!   folders writes the same files with the same bytes.

use ccc_compiler::parse::parse;
use ccc_compiler::pipeline::{self, Compiled, Options, compile_source};
use ccc_compiler::validate::validate;
use ccc_compiler::verify::ProverOptions;
use ccc_ir::id::Rank;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every `examples/*.ron`, sorted, as (stem, source).
fn examples() -> Vec<(String, String)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(format!("{ROOT}/examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 18, "examples/ has {} specs", paths.len());
    paths
        .into_iter()
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect()
}

fn example(stem: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/examples/{stem}.ron")).unwrap()
}

fn compile(stem: &str, src: &str, options: &Options) -> Compiled {
    compile_source(src, options).unwrap_or_else(|e| panic!("examples/{stem}.ron: {e}")).2
}

/// Asserts two compiles emitted the same signature, programs and bytes.
fn assert_same(what: &str, a: &Compiled, b: &Compiled) {
    assert_eq!(a.signature.digest, b.signature.digest, "{what}: signature");
    assert_eq!(a.signature.fields, b.signature.fields, "{what}: signature fields");
    assert_eq!(a.images.len(), b.images.len(), "{what}: ranks");
    for (x, y) in a.images.iter().zip(&b.images) {
        assert_eq!(x.rank, y.rank, "{what}");
        assert!(x == y, "{what}: the images of {} differ", x.rank);
    }
    assert!(a.programs == b.programs, "{what}: the lowered programs differ");
}

#[test]
fn compiling_twice_gives_identical_bytes() {
    for (stem, src) in examples() {
        let first = compile(&stem, &src, &Options::default());
        let second = compile(&stem, &src, &Options::default());
        assert_same(&format!("{stem}: run 1 vs run 2"), &first, &second);
    }
}

#[test]
fn thread_counts_do_not_change_the_bytes() {
    let pools: Vec<(usize, rayon::ThreadPool)> =
        [1, 2, 4].into_iter().map(|k| (k, rayon::ThreadPoolBuilder::new().num_threads(k).build().unwrap())).collect();
    for (stem, src) in examples() {
        let runs: Vec<(usize, Compiled)> =
            pools.iter().map(|(k, pool)| (*k, pool.install(|| compile(&stem, &src, &Options::default())))).collect();
        let (k0, base) = &runs[0];
        for (k, run) in &runs[1..] {
            assert_same(&format!("{stem}: {k0} thread vs {k} threads"), base, run);
        }
    }
}

/// The provers split each step's per-member work over the threads only from
/// a large world; force that path on small examples (parallel from 2
/// members) and check that pools of 1, 2 and 4 threads prove the same
/// things and emit the same bytes as the sequential provers.
#[test]
fn parallel_provers_agree_with_sequential_ones() {
    let parallel = ProverOptions { parallel_from: 2, ..ProverOptions::default() };
    for stem in ["allreduce_hier_4x32", "allreduce_kangaring", "alltoallv_mesh", "program_training_step"] {
        let valid = validate(&parse(&example(stem)).unwrap().program).unwrap();
        let sequential = pipeline::compile(&valid, &Options::default()).unwrap();
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let c = pool
                .install(|| pipeline::compile(&valid, &Options { prover: parallel, ..Options::default() }).unwrap());
            assert_same(&format!("{stem} with {threads} threads, parallel provers"), &sequential, &c);
            let (a, b) = (sequential.proof.as_ref().unwrap(), c.proof.as_ref().unwrap());
            assert_eq!(a.postcondition, b.postcondition, "{stem}: {threads} threads");
            assert_eq!(a.protocol, b.protocol, "{stem}: {threads} threads");
        }
    }
}

/// The symmetry shortcut is tuning: with it off, every group runs in full,
/// and every example proves the same things and emits the same bytes. At
/// least one example is symmetric, so the shortcut is exercised.
#[test]
fn the_symmetry_shortcut_changes_no_result() {
    let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
    let mut rotated = 0;
    for (stem, src) in examples() {
        let valid = validate(&parse(&src).unwrap().program).unwrap();
        let fast = pipeline::compile(&valid, &Options::default()).unwrap();
        let slow = pipeline::compile(&valid, &Options { prover: full, ..Options::default() }).unwrap();
        assert_same(&format!("{stem}: symmetry on vs off"), &fast, &slow);
        let (a, b) = (fast.proof.as_ref().unwrap(), slow.proof.as_ref().unwrap());
        assert_eq!(a.postcondition, b.postcondition, "{stem}");
        assert_eq!(a.protocol, b.protocol, "{stem}");
        assert_eq!(b.symmetric_groups, 0, "{stem}");
        rotated += a.symmetric_groups;
    }
    assert!(rotated > 0, "no example took the symmetry shortcut");
}

#[test]
fn one_rank_alone_is_the_rank_in_the_world() {
    for stem in [
        "allreduce_hier_4x32",
        "program_training_step",
        "allreduce_tp_groups",
        "allreduce_inter_rdh_nonpow2",
        "alltoallv_mesh",
        "allreduce_uneven_count",
        "reduce_scatter_hier_mariana",
        "broadcast_intra_rdh_nonpow2",
    ] {
        let src = example(stem);
        for verify in [true, false] {
            let world = compile(stem, &src, &Options { ranks: Vec::new(), verify, ..Options::default() });
            let rank_n = world.schedule.shape.rank_n;
            for r in [0, rank_n / 2 - 1, rank_n / 2, rank_n - 1] {
                let alone = compile(stem, &src, &Options { ranks: vec![Rank(r)], verify, ..Options::default() });
                let what = format!("{stem}, rank {r} alone vs in the world (verify {verify})");
                assert_eq!(alone.signature.digest, world.signature.digest, "{what}: signature");
                assert_eq!(alone.images.len(), 1, "{what}");
                assert!(alone.images[0] == world.images[r as usize], "{what}: the images differ");
                assert!(alone.programs[0] == world.programs[r as usize], "{what}: the lowered programs differ");
            }
        }
    }
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(path.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn the_cli_writes_identical_folders() {
    let tmp = tempfile::tempdir().unwrap();
    for stem in ["program_training_step", "allreduce_hier_4x32"] {
        let trees: Vec<BTreeMap<PathBuf, Vec<u8>>> = ["a", "b"]
            .iter()
            .map(|run| {
                let out = tmp.path().join(format!("{stem}-{run}"));
                let status = Command::new(env!("CARGO_BIN_EXE_ccc"))
                    .arg("compile")
                    .arg(format!("examples/{stem}.ron"))
                    .arg("-o")
                    .arg(&out)
                    .current_dir(ROOT)
                    .env("NO_COLOR", "1")
                    .output()
                    .unwrap();
                assert!(status.status.success(), "{stem}: {}", String::from_utf8_lossy(&status.stderr));
                tree(&out)
            })
            .collect();
        let (a, b) = (&trees[0], &trees[1]);
        assert!(a.contains_key(Path::new("manifest.json")), "{stem}: manifest.json written");
        assert!(a.contains_key(Path::new("rank-0/topsp-0/ctrl_spad.bin")), "{stem}: rank 0 written");
        let names = |t: &BTreeMap<PathBuf, Vec<u8>>| t.keys().cloned().collect::<Vec<_>>();
        assert_eq!(names(a), names(b), "{stem}: the two folders hold different files");
        for (path, bytes) in a {
            assert!(b[path] == *bytes, "{stem}: {} differs between the two runs", path.display());
        }
    }
}
