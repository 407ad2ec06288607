#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `ccc check` end to end on bad specs: every file in `examples/invalid/`
//! must exit 2, print nothing on stdout, and render a report on stderr that
//! is snapshotted in `snapshots/errors/<stem>.snap`. One test per file; the
//! list below must match the folder (`the_list_matches_the_folder`).

use crate::snapshot;
use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const INVALID: &str = "examples/invalid";

/// Runs `ccc check <path>` from the repository root, without colour.
fn check(path: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ccc"))
        .arg("check")
        .arg(path)
        .current_dir(ROOT)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// Checks `examples/invalid/<stem>.ron` fails with exit 2 and snapshots its report.
fn snapshot_invalid(stem: &str) {
    let path = format!("{INVALID}/{stem}.ron");
    let out = check(&path);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{path} should be refused with exit 2; stderr:\n{stderr}");
    assert!(out.stdout.is_empty(), "{path}: nothing on stdout, got {:?}", String::from_utf8_lossy(&out.stdout));
    assert!(stderr.contains(&path), "{path}: the report names the file");
    snapshot::settings("errors").bind(|| insta::assert_snapshot!(stem, stderr));
}

macro_rules! invalid_specs {
    ($($stem:ident),* $(,)?) => {
        /// The stems of every file in `examples/invalid/`, sorted.
        const LISTED: &[&str] = &[$(stringify!($stem)),*];
        $(
            #[test]
            fn $stem() {
                snapshot_invalid(stringify!($stem));
            }
        )*
    };
}

invalid_specs! {
    channels_33,
    channels_zero,
    device_barrier_too_large,
    groups_rank_twice_and_missing,
    groups_unequal_sizes,
    hier_groups_not_node_aligned,
    hier_groups_uneven_shapes,
    hier_kangaring_inter,
    hier_missing_leg,
    hier_unused_leg,
    hier_wide_choice_without_opt_in,
    kangaring_across_nodes,
    local_rank_n_not_divisor,
    mesh_events_over,
    missing_comma,
    missing_field,
    misspelt_field,
    model_auto_out_of_range,
    model_unknown_field,
    model_zero_bandwidth,
    permute_bad_peers,
    program_arch_mismatch,
    program_unknown_dtype,
    reduce_missing,
    reduce_on_allgather,
    reduce_scatter_count_not_multiple,
    root_out_of_range,
    several_problems,
    single_cycle_ring_allgather,
    two_step_pod_mesh_one_pod,
    unknown_op,
    value_wrong_type,
    wrong_struct_name,
}

#[test]
fn the_list_matches_the_folder() {
    let mut stems: Vec<String> = std::fs::read_dir(Path::new(ROOT).join(INVALID))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .map(|p| p.file_stem().unwrap().to_str().unwrap().to_owned())
        .collect();
    stems.sort();
    assert!(stems.len() >= 14, "at least 14 invalid examples, found {}", stems.len());
    assert_eq!(stems, LISTED, "add the new file to `invalid_specs!` (sorted), or remove the stale entry");
    // The README counts them.
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let said = format!("`examples/invalid/` holds {} such specs", stems.len());
    assert!(readme.contains(&said), "README should say: {said}");
}

#[test]
fn every_invalid_example_says_what_is_wrong_on_top() {
    for stem in LISTED {
        let text = std::fs::read_to_string(Path::new(ROOT).join(INVALID).join(format!("{stem}.ron"))).unwrap();
        assert!(text.starts_with("// "), "{stem}.ron starts with a comment saying what is wrong");
    }
}

const VALID_COLLECTIVE: &str = "\
// A hierarchical all-reduce over two nodes of 16.
Collective(
    op: AllReduce,
    dtype: Bf16,
    reduce: Add,
    count: 4194304,
    arch: Cayman,
    topology: (rank_n: 32, local_rank_n: 16),
    channels: 4,
    algorithm: Hier((
        intra_reduce_scatter: Ring,
        inter_all_reduce: SingleCycleRing,
        intra_all_gather: Kangaring,
    )),
)
";

#[test]
fn a_valid_collective_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("allreduce_hier.ron");
    std::fs::write(&path, VALID_COLLECTIVE).unwrap();
    let out = check(path.to_str().unwrap());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty());
    assert!(stdout.contains("a valid collective"), "{stdout}");
    assert!(stdout.contains("Cayman: 32 ranks, 16 per node, 2 nodes, 1 pod"), "{stdout}");
    assert!(
        stdout.contains(
            "collective 0: AllReduce Bf16 x 4194304, reduce Add, 1 group of 32, 4 channels, \
             Hier (intra_reduce_scatter Ring, inter_all_reduce SingleCycleRing, intra_all_gather Kangaring)"
        ),
        "{stdout}"
    );
}

#[test]
fn a_valid_program_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("program.ron");
    let second = "Collective(op: Broadcast, dtype: F32, count: 1024, arch: Cayman, \
                  topology: (rank_n: 32, local_rank_n: 16), channels: 2, algorithm: Ring, root: 3, \
                  groups: [[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15], \
                  [16, 17, 18, 19, 20, 21, 22, 23], [24, 25, 26, 27, 28, 29, 30, 31]])";
    let body = VALID_COLLECTIVE.split_once('\n').unwrap().1.trim();
    std::fs::write(&path, format!("Program(collectives: [{body}, {second}])")).unwrap();
    let out = check(path.to_str().unwrap());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("a valid program of 2 collectives"), "{stdout}");
    assert!(stdout.contains("collective 1: Broadcast F32 x 1024, root 3, 4 groups of 8, 2 channels, Ring"), "{stdout}");
}

#[test]
fn an_unreadable_file_is_bad_input() {
    let out = check("examples/invalid/no_such_spec.ron");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("cannot read examples/invalid/no_such_spec.ron"), "{stderr}");
}
