#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `ccc diagnose` end to end, on the cases that send users hunting: one
//! rank's program has an extra collective, one rank's count is off by one,
//! one node uses other channels, groups built differently, two ccc versions,
//! 64 rank files of which 4 disagree; and equal specs written differently,
//! and bad inputs. Every output is snapshotted in `snapshots/diagnose/`;
//! exit codes are asserted here.
//!
//! Spec inputs are fixtures under `tests/fixtures/diagnose/`; manifest
//! inputs are written in a temporary folder (by `ccc compile`, by the
//! library, or edited from a real manifest), and `ccc` runs from inside it
//! so that the report names relative paths only.

use crate::snapshot;
use ccc_compiler::manifest::Manifest;
use ccc_compiler::pipeline::{Options, compile_source};
use ccc_compiler::sign::{Field, digest_of};
use ccc_ir::id::Rank;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const FIXTURES: &str = "tests/fixtures/diagnose";

/// What a run printed and returned.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `ccc <args>` in `dir`, without colour.
fn ccc_in(dir: &Path, args: &[&str]) -> Run {
    let out =
        Command::new(env!("CARGO_BIN_EXE_ccc")).args(args).current_dir(dir).env("NO_COLOR", "1").output().unwrap();
    Run {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// Runs `ccc diagnose <inputs>` from the repository root.
fn diagnose(inputs: &[&str]) -> Run {
    let mut args = vec!["diagnose"];
    args.extend(inputs);
    ccc_in(Path::new(ROOT), &args)
}

fn fixture(path: &str) -> String {
    format!("{FIXTURES}/{path}")
}

/// Snapshots `text` as `snapshots/diagnose/<name>.snap`.
fn snapshot(name: &str, text: &str) {
    snapshot::settings("diagnose").bind(|| insta::assert_snapshot!(name, text));
}

/// A mismatch: exit 1, the report on stdout, nothing on stderr.
fn mismatch(name: &str, run: &Run) {
    assert_eq!(run.code, 1, "a mismatch exits 1; stderr:\n{}", run.stderr);
    assert!(run.stderr.is_empty(), "nothing on stderr: {}", run.stderr);
    snapshot(name, &run.stdout);
}

/// A bad input: exit 2, nothing on stdout, the report on stderr.
fn bad_input(name: &str, run: &Run) {
    assert_eq!(run.code, 2, "a bad input exits 2; stdout:\n{}", run.stdout);
    assert!(run.stdout.is_empty(), "nothing on stdout: {}", run.stdout);
    snapshot(name, &run.stderr);
}

#[test]
fn extra_collective() {
    let run = diagnose(&[&fixture("extra_collective/rank-0.ron"), &fixture("extra_collective/rank-1.ron")]);
    assert!(run.stdout.contains("rank-1.ron has an extra collective 4 (AllGather F32 x 256)"), "{}", run.stdout);
    assert!(run.stdout.contains("4 of 6 (rank-0.ron) vs 4 of 7 (rank-1.ron)"), "{}", run.stdout);
    // Two specs are called what they are (issue 10, item 10).
    assert!(run.stdout.contains("the specs disagree at collective 4 of 6"), "{}", run.stdout);
    // One extra collective, not "every later collective differs".
    assert_eq!(run.stdout.matches("  - ").count(), 1, "{}", run.stdout);
    mismatch("extra_collective", &run);
}

#[test]
fn missing_collective_seen_from_the_other_side() {
    let run = diagnose(&[&fixture("extra_collective/rank-1.ron"), &fixture("extra_collective/rank-0.ron")]);
    assert!(
        run.stdout.contains("rank-0.ron has no collective in that place matching rank-1.ron's collective 4"),
        "{}",
        run.stdout
    );
    mismatch("missing_collective", &run);
}

/// Two collectives issued in the other order: one collective moved,
/// named with both places and the reordering as its cause, not one missing
/// and one extra each blamed on a program that diverged.
#[test]
fn collectives_issued_in_another_order() {
    let run = diagnose(&[&fixture("reordered/rank-0.ron"), &fixture("reordered/rank-3.ron")]);
    assert!(
        run.stdout.contains(
            "rank-0.ron's collective 2 (AllReduce F32 x 64) moved: it is rank-3.ron's collective 3, equal in every field"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(run.stdout.matches("  - ").count(), 1, "{}", run.stdout);
    assert!(run.stdout.contains("likely cause: the same collective issued at another place"), "{}", run.stdout);
    assert!(!run.stdout.contains("the program diverged"), "{}", run.stdout);
    mismatch("reordered", &run);
    let json = diagnose(&[&fixture("reordered/rank-0.ron"), &fixture("reordered/rank-3.ron"), "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let moved = &report["differences"][0]["collectives"][0];
    assert_eq!(
        (moved["kind"].as_str(), moved["majority_index"].as_u64(), moved["other_index"].as_u64()),
        (Some("moved"), Some(2), Some(3))
    );
    assert_eq!(moved["cause"].as_str(), Some("reordered"));
}

#[test]
fn count_off_by_one() {
    let run = diagnose(&[&fixture("count_off_by_one/rank-0.ron"), &fixture("count_off_by_one/rank-5.ron")]);
    assert!(run.stdout.contains("count: 16384 (rank-0.ron) vs 16385 (rank-5.ron), at collective 3"), "{}", run.stdout);
    assert!(
        run.stdout.contains("likely cause: the ranks traced different tensors (their shapes or element types)"),
        "{}",
        run.stdout
    );
    mismatch("count_off_by_one", &run);
}

#[test]
fn count_off_by_one_json() {
    let run = diagnose(&["--json", &fixture("count_off_by_one/rank-0.ron"), &fixture("count_off_by_one/rank-5.ron")]);
    assert_eq!(run.code, 1);
    let report: ccc_compiler::diagnose::Report = serde_json::from_str(&run.stdout).unwrap();
    assert!(!report.all_match);
    assert_eq!(report.odd_ones_out, ["rank-5.ron"]);
    mismatch("count_off_by_one.json", &run);
}

#[test]
fn one_node_uses_other_channels() {
    let nodes: Vec<String> = (0..4).map(|n| fixture(&format!("channels/node-{n}.ron"))).collect();
    let run = diagnose(&nodes.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(run.stdout.contains("odd ones out (1 of 4): node-2.ron"), "{}", run.stdout);
    assert!(run.stdout.contains("channels: 4 (majority) vs 2 (node-2.ron), at collectives 0-2"), "{}", run.stdout);
    mismatch("other_channels", &run);
}

#[test]
fn groups_built_differently() {
    let run = diagnose(&[&fixture("groups/rank-0.ron"), &fixture("groups/rank-6.ron")]);
    assert!(run.stdout.contains("likely cause: the replica groups were built differently"), "{}", run.stdout);
    mismatch("groups", &run);
}

/// Groups that also change the schedule: the headline names what the
/// list names (groups), not the schedule digest that follows from them
/// and which the list leaves out. (It once said `but groups, schedule
/// differ` above a list of groups alone.)
#[test]
fn the_headline_names_the_fields_the_list_names() {
    let dir = tempfile::tempdir().unwrap();
    let ring = std::fs::read_to_string(format!("{ROOT}/examples/allreduce_ring.ron")).unwrap();
    let grouped = ring.replace("channels: 2,", "channels: 2, groups: [[0, 1, 2, 3], [4, 5, 6, 7]],");
    assert_ne!(grouped, ring);
    std::fs::write(dir.path().join("a.ron"), &ring).unwrap();
    std::fs::write(dir.path().join("b.ron"), &grouped).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "a.ron", "b.ron"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("on both sides, but groups differs\n"), "{}", run.stdout);
    assert!(!run.stdout.contains("schedule"), "{}", run.stdout);
    let json = ccc_in(dir.path(), &["diagnose", "a.ron", "b.ron", "--json"]);
    assert!(json.stdout.contains("\"schedule\""), "the report still holds the digest: {}", json.stdout);
}

#[test]
fn three_inputs_without_a_majority() {
    let run = diagnose(&[
        &fixture("count_off_by_one/rank-0.ron"),
        &fixture("extra_collective/rank-1.ron"),
        &fixture("groups/rank-6.ron"),
    ]);
    assert!(run.stdout.contains("no majority"), "{}", run.stdout);
    mismatch("no_majority", &run);
}

/// Compiles `spec` (relative to the repository root) into `dir/out` with
/// `ccc compile --rank 0`.
fn compile_into(dir: &Path, spec: &str, out: &str) {
    let spec = format!("{ROOT}/{spec}");
    let run = ccc_in(dir, &["compile", &spec, "--rank", "0", "-o", out]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn different_format_versions() {
    let dir = tempfile::tempdir().unwrap();
    compile_into(dir.path(), &fixture("count_off_by_one/rank-0.ron"), "ccc-1");
    // What a later ccc (format version 2, a changed lowering) would have
    // written for the same spec: edited from the real manifest.
    let text = std::fs::read_to_string(dir.path().join("ccc-1/manifest.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["format_version"] = 2.into();
    let mut fields: Vec<Field> = serde_json::from_value(json["signature_fields"].clone()).unwrap();
    for f in &mut fields {
        if f.name == "format_version" {
            f.value = "2".into();
        }
        if f.name == "collectives[3].schedule" {
            f.value = "0123456789abcdef0123456789abcdef".into();
        }
    }
    json["signature"] = digest_of(&fields).into();
    json["signature_fields"] = serde_json::to_value(&fields).unwrap();
    std::fs::create_dir(dir.path().join("ccc-2")).unwrap();
    std::fs::write(dir.path().join("ccc-2/manifest.json"), serde_json::to_string_pretty(&json).unwrap()).unwrap();

    // Folders and manifest files are both accepted.
    let run = ccc_in(dir.path(), &["diagnose", "ccc-1", "ccc-2/manifest.json"]);
    assert!(
        run.stdout.contains("format_version: 1 (ccc-1/manifest.json) vs 2 (ccc-2/manifest.json)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("likely cause: different ccc versions"), "{}", run.stdout);
    mismatch("format_versions", &run);
}

#[test]
fn a_different_build_of_the_same_version() {
    let dir = tempfile::tempdir().unwrap();
    compile_into(dir.path(), &fixture("count_off_by_one/rank-0.ron"), "a");
    let text = std::fs::read_to_string(dir.path().join("a/manifest.json")).unwrap();
    let mut manifest: Manifest = serde_json::from_str(&text).unwrap();
    for f in &mut manifest.signature_fields {
        if f.name == "collectives[0].schedule" {
            f.value = "fedcba9876543210fedcba9876543210".into();
        }
    }
    manifest.signature = digest_of(&manifest.signature_fields);
    std::fs::create_dir(dir.path().join("b")).unwrap();
    std::fs::write(dir.path().join("b/manifest.json"), manifest.to_json().unwrap()).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
    assert!(run.stdout.contains("likely cause: different ccc builds"), "{}", run.stdout);
    assert!(run.stdout.contains("the manifests disagree at collective 0 of 6"), "{}", run.stdout);
    mismatch("different_builds", &run);
}

/// Two output folders whose files are the images their manifests list
/// (sizes and MD5s) are compared by those images, as two specs are
/// (`same_images`); a manifest alone vouches for no file and claims
/// nothing, nor does a folder whose files differ from its listing, one
/// listing sizes only (an earlier ccc build's), or one of fewer ranks
/// (against every rank, or against as few).
#[test]
fn manifests_tell_identical_images_by_their_md5s() {
    let dir = tempfile::tempdir().unwrap();
    let ring = format!("{ROOT}/examples/allreduce_ring.ron");
    let max = dir.path().join("ring_max.ron");
    std::fs::write(&max, std::fs::read_to_string(&ring).unwrap().replace("reduce: Add", "reduce: Max")).unwrap();
    for (spec, out) in [(ring.as_str(), "add"), (max.to_str().unwrap(), "max")] {
        let run = ccc_in(dir.path(), &["compile", spec, "-o", out, "-q"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let same = |args: &[&str]| {
        let run = ccc_in(dir.path(), args);
        assert_eq!(run.code, 1, "{}", run.stderr);
        let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        report["differences"][0]["same_images"].as_bool().unwrap()
    };
    assert!(same(&["diagnose", "add", "max", "--json"]));
    assert!(same(&["diagnose", "add", max.to_str().unwrap(), "--json"]));
    let prose = ccc_in(dir.path(), &["diagnose", "add", "max"]);
    assert!(prose.stdout.contains("the images are identical; the ranks differ in reduce"), "{}", prose.stdout);
    // A manifest alone: its listing vouches for no file.
    assert!(!same(&["diagnose", "add/manifest.json", "max", "--json"]));
    // A file changed since its compile: the folder claims nothing.
    let file = dir.path().join("max/rank-1/topsp-0/neff_configs.bin");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    assert!(!same(&["diagnose", "add", "max", "--json"]));
    bytes[100] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    assert!(same(&["diagnose", "add", "max", "--json"]));

    // Rank 0 alone against every rank: not shown to be the same.
    let run = ccc_in(dir.path(), &["compile", max.to_str().unwrap(), "-o", "max0", "--rank", "0", "-q"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!same(&["diagnose", "add", "max0", "--json"]));
    // Rank 0 alone on both sides: the same there, which says nothing of
    // the ranks neither holds (their images may differ), so not claimed.
    let run = ccc_in(dir.path(), &["compile", &ring, "-o", "add0", "--rank", "0", "-q"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!same(&["diagnose", "add0", "max0", "--json"]));
    // Sizes only: unknown, so not claimed.
    let text = std::fs::read_to_string(dir.path().join("add/manifest.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    for rank in json["ranks"].as_array_mut().unwrap() {
        for tp in rank["topsps"].as_array_mut().unwrap() {
            for key in ["ctrl_spad_md5", "slot_spad_md5", "neff_configs_md5"] {
                tp.as_object_mut().unwrap().remove(key);
            }
        }
    }
    std::fs::write(dir.path().join("add/manifest.json"), json.to_string()).unwrap();
    assert!(!same(&["diagnose", "add", "max", "--json"]));
}

/// An output folder whose files changed since ccc wrote them (an image
/// edited in place or cut short) is not a match, although its manifest
/// signs the same: its ranks would not load what the signature names. The
/// report names the folder and the file; a folder put back as written
/// matches again, as do one whose image is a link to the same bytes and
/// ones holding only some ranks' files; one missing a file of a rank
/// whose other files are there is no match. (It once said `match`, exit
/// 0, for each.)
#[test]
fn a_folder_whose_files_changed_is_no_match() {
    let dir = tempfile::tempdir().unwrap();
    let ring = format!("{ROOT}/examples/allreduce_ring.ron");
    for out in ["a", "b"] {
        let run = ccc_in(dir.path(), &["compile", &ring, "-o", out, "-q"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let file = dir.path().join("b/rank-3/topsp-0/slot_spad.bin");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[24] ^= 5;
    std::fs::write(&file, &bytes).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.starts_with("mismatch: all 2 inputs have signature "), "{}", run.stdout);
    assert!(run.stdout.contains("but 1 of 2 has files changed since ccc wrote them"), "{}", run.stdout);
    assert!(run.stdout.contains("rank-3/topsp-0/slot_spad.bin was edited since ccc wrote it"), "{}", run.stdout);
    // Its advice is one that works: ccc does not replace that folder.
    assert!(run.stdout.contains("(compile it again into a new folder: ccc does not replace one"), "{}", run.stdout);
    assert_eq!(ccc_in(dir.path(), &["compile", &ring, "-o", "b", "-q"]).code, 2);
    assert_eq!(ccc_in(dir.path(), &["compile", &ring, "-o", "c", "-q"]).code, 0);
    let json = ccc_in(dir.path(), &["diagnose", "a", "b", "--json"]);
    assert_eq!(json.code, 1);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["all_match"], false);
    assert_eq!(report["groups"].as_array().unwrap().len(), 1, "the signatures match");
    assert_eq!(report["edited"][0]["input"], "b/manifest.json");
    // Resized: named too.
    std::fs::write(&file, &bytes[..bytes.len() - 8]).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("rank-3/topsp-0/slot_spad.bin has "), "{}", run.stdout);
    // Put back: a match. A link to the same bytes in its place is no
    // change either.
    bytes[24] ^= 5;
    std::fs::write(&file, &bytes).unwrap();
    assert_eq!(ccc_in(dir.path(), &["diagnose", "a", "b"]).code, 0);
    // Two files swapped: both named (only the first was), and the one
    // that holds another's listed content says whose.
    let (t0, t1) =
        (dir.path().join("b/rank-3/topsp-0/ctrl_spad.bin"), dir.path().join("b/rank-3/topsp-1/ctrl_spad.bin"));
    let swap = |x: &Path, y: &Path| {
        let aside = dir.path().join("aside.bin");
        std::fs::rename(x, &aside).unwrap();
        std::fs::rename(y, x).unwrap();
        std::fs::rename(&aside, y).unwrap();
    };
    swap(&t0, &t1);
    let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("rank-3/topsp-0/ctrl_spad.bin ")
            && run.stdout.contains(
                "(it holds what the manifest lists for rank-0/topsp-1/ctrl_spad.bin: files swapped or copied?)"
            )
            && run.stdout.contains("; 1 other file changed too: rank-3/topsp-1/ctrl_spad.bin"),
        "{}",
        run.stdout
    );
    swap(&t0, &t1);
    assert_eq!(ccc_in(dir.path(), &["diagnose", "a", "b"]).code, 0);
    #[cfg(unix)]
    {
        let elsewhere = dir.path().join("slot_spad.bin");
        std::fs::rename(&file, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
        let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
        assert_eq!(run.code, 0, "{}", run.stdout);
    }
    // One image missing where its rank's other files are there is a
    // change: that rank cannot load (it said `match`, exit 0).
    let aside = dir.path().join("aside.bin");
    let one = dir.path().join("b/rank-5/topsp-0/ctrl_spad.bin");
    std::fs::rename(&one, &aside).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "rank-5/topsp-0/ctrl_spad.bin is missing, while other files of rank-5 are there: that rank cannot load \
             its images"
        ),
        "{}",
        run.stdout
    );
    std::fs::rename(&aside, &one).unwrap();
    // Files missing claim nothing otherwise: a folder of some ranks'
    // whole files (as a launcher ships each node its own), or its
    // manifest alone (as one gathers each rank's), is compared by
    // signature.
    for r in 0..4 {
        std::fs::remove_dir_all(dir.path().join(format!("b/rank-{r}"))).unwrap();
    }
    let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    for r in 4..8 {
        std::fs::remove_dir_all(dir.path().join(format!("b/rank-{r}"))).unwrap();
    }
    let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

/// A folder whose manifest this ccc cannot read whole (edited where the
/// signature does not reach: its `proof`, its schema number; or an
/// earlier ccc's, lacking fields added since) still has its images
/// checked against the files its `ranks` list: an edited image beside it
/// passed as `match`, exit 0. One whose listing does not read either
/// (a rank as a string), claiming this ccc's format, is named as edited.
/// Untouched images under such a manifest match.
#[test]
fn a_folder_whose_manifest_was_edited_is_no_match() {
    let dir = tempfile::tempdir().unwrap();
    let ring = format!("{ROOT}/examples/allreduce_ring.ron");
    for out in ["a", "b"] {
        let run = ccc_in(dir.path(), &["compile", &ring, "-o", out, "-q"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let path = dir.path().join("b/manifest.json");
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut m = written.clone();
        f(&mut m);
        std::fs::write(&path, m.to_string()).unwrap();
        ccc_in(dir.path(), &["diagnose", "a", "b"])
    };
    type Edit = dyn Fn(&mut serde_json::Value);
    let edits: [(&str, &Edit); 3] = [
        ("proof", &|m| m["proof"] = "yes".into()),
        ("schema missing", &|m| drop(m.as_object_mut().unwrap().remove("manifest_schema"))),
        ("an earlier ccc's", &|m| drop(m.as_object_mut().unwrap().remove("collectives"))),
    ];
    // Images untouched: a match.
    for (what, change) in edits {
        let run = edit(change);
        assert_eq!(run.code, 0, "{what}: {}", run.stdout);
    }
    // An image edited: named, whatever the manifest reads as.
    let image = dir.path().join("b/rank-0/topsp-0/ctrl_spad.bin");
    let mut bytes = std::fs::read(&image).unwrap();
    bytes[3] ^= 1;
    std::fs::write(&image, &bytes).unwrap();
    let as_written: &Edit = &|_| {};
    for (what, change) in edits.into_iter().chain([("as written", as_written)]) {
        let run = edit(change);
        assert_eq!(run.code, 1, "{what}: {}", run.stdout);
        assert!(run.stdout.contains("but 1 of 2 has files changed since ccc wrote them"), "{what}: {}", run.stdout);
        assert!(
            run.stdout.contains("rank-0/topsp-0/ctrl_spad.bin was edited since ccc wrote it"),
            "{what}: {}",
            run.stdout
        );
    }
    // A listing that does not read: the manifest is named.
    let run = edit(&|m| m["ranks"][1]["rank"] = "1".into());
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("b/manifest.json: manifest.json is not as ccc wrote it ("), "{}", run.stdout);
}

/// A spec beside a manifest: the report calls them inputs, not specs or
/// manifests (issue 10, item 10).
#[test]
fn a_spec_against_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    compile_into(dir.path(), &fixture("count_off_by_one/rank-0.ron"), "a");
    let other = format!("{ROOT}/{}", fixture("count_off_by_one/rank-5.ron"));
    let run = ccc_in(dir.path(), &["diagnose", "a", &other]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    // The folder named with its manifest (it was `manifest.json` alone,
    // which names no folder).
    assert!(run.stdout.contains("the inputs disagree at collective 3 of 6 (a/manifest.json)"), "{}", run.stdout);
    assert!(!run.stdout.contains("specs disagree") && !run.stdout.contains("manifests disagree"), "{}", run.stdout);
}

#[test]
fn sixty_four_manifests_four_odd_ones() {
    let dir = tempfile::tempdir().unwrap();
    let step = std::fs::read_to_string(format!("{ROOT}/{FIXTURES}/ranks64/step.ron")).unwrap();
    let short = std::fs::read_to_string(format!("{ROOT}/{FIXTURES}/ranks64/short-batch.ron")).unwrap();
    // Every rank compiles its own images (as a launcher does), and writes
    // its manifest; ranks 36-39 traced the shorter batch.
    for r in 0..64u32 {
        let spec = if (36..40).contains(&r) { &short } else { &step };
        let (_, _, compiled) =
            compile_source(spec, &Options { ranks: vec![Rank(r)], verify: false, ..Options::default() }).unwrap();
        let folder = dir.path().join(format!("rank-{r}"));
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("manifest.json"), Manifest::of(&compiled).to_json().unwrap()).unwrap();
    }
    let folders: Vec<String> = (0..64).map(|r| format!("rank-{r}")).collect();
    let mut args = vec!["diagnose"];
    args.extend(folders.iter().map(String::as_str));
    let run = ccc_in(dir.path(), &args);
    assert!(run.stdout.contains("majority: 60 of 64"), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "odd ones out (4 of 64): rank-36/manifest.json, rank-37/manifest.json, rank-38/manifest.json, rank-39/manifest.json"
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("count: 256 (majority) vs 128 (group 2), at collective 2"), "{}", run.stdout);
    mismatch("ranks64", &run);

    args.push("--json");
    let run = ccc_in(dir.path(), &args);
    assert_eq!(run.code, 1);
    let report: ccc_compiler::diagnose::Report = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report.groups.iter().map(|g| g.members.len()).collect::<Vec<_>>(), [60, 4]);
}

#[test]
fn equal_specs_written_differently_match() {
    let run = diagnose(&[&fixture("written/terse.ron"), &fixture("written/verbose.ron")]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("match"), "{}", run.stdout);
    snapshot("written_differently", &run.stdout);

    // A spec and the manifest compiled from the other writing match too.
    let dir = tempfile::tempdir().unwrap();
    compile_into(dir.path(), &fixture("written/verbose.ron"), "out");
    let terse = format!("{ROOT}/{}", fixture("written/terse.ron"));
    let run = ccc_in(dir.path(), &["diagnose", &terse, "out", "out/manifest.json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // (The digest itself is pinned by the snapshot above; here it is `ccc sign`'s.)
    let signed = ccc_in(dir.path(), &["sign", &terse]);
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    assert_eq!(run.stdout, format!("match: all 3 inputs have signature {} (1 collective)\n", signed.stdout.trim()));
}

#[test]
fn bad_spec() {
    let run = diagnose(&[&fixture("written/terse.ron"), &fixture("bad/typo.ron")]);
    assert!(run.stderr.contains("tests/fixtures/diagnose/bad/typo.ron"), "names the file: {}", run.stderr);
    bad_input("bad_spec", &run);
}

/// Several inputs refused: each is said, in input order, and a last line
/// counts them, so that fixing many ranks' inputs takes one run; a read
/// refused (a file missing) and a spec refused are said alike.
#[test]
fn every_refused_input_is_said() {
    let (terse, typo) = (fixture("written/terse.ron"), fixture("bad/typo.ron"));
    let run = diagnose(&[&typo, &terse, &typo]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.matches("cannot parse tests/fixtures/diagnose/bad/typo.ron").count(), 2, "{}", run.stderr);
    assert!(run.stderr.contains("2 of the 3 inputs were refused, each as said above"), "{}", run.stderr);
    bad_input("every_refused_input", &run);

    let run = diagnose(&[&terse, "no-such-rank.ron", "no-such-rank-either.ron"]);
    let (first, second) = (run.stderr.find("no-such-rank.ron"), run.stderr.find("no-such-rank-either.ron"));
    assert!(first.is_some() && first < second, "both, in input order: {}", run.stderr);
    assert!(run.stderr.contains("2 of the 3 inputs were refused"), "{}", run.stderr);
    // One unreadable and one that does not parse, in either order: both
    // (it said the unreadable one alone).
    for inputs in
        [["no-such-rank.ron", typo.as_str(), terse.as_str()], [typo.as_str(), "no-such-rank.ron", terse.as_str()]]
    {
        let run = diagnose(&inputs);
        assert_eq!(run.code, 2, "{}", run.stderr);
        let (missing, bad) = (run.stderr.find("cannot read no-such-rank.ron"), run.stderr.find("cannot parse "));
        assert!(missing.is_some() && bad.is_some(), "{}", run.stderr);
        assert_eq!(missing < bad, inputs[0] == "no-such-rank.ron", "in input order: {}", run.stderr);
        assert!(run.stderr.contains("2 of the 3 inputs were refused"), "{}", run.stderr);
    }
}

#[test]
fn bad_manifests() {
    let dir = tempfile::tempdir().unwrap();
    compile_into(dir.path(), &fixture("written/terse.ron"), "good");
    let text = std::fs::read_to_string(dir.path().join("good/manifest.json")).unwrap();

    std::fs::create_dir(dir.path().join("truncated")).unwrap();
    std::fs::write(dir.path().join("truncated/manifest.json"), &text[..text.len() / 2]).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "good", "truncated"]);
    bad_input("bad_manifest_truncated", &run);

    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["signature_fields"][5]["value"] = "4096".into();
    std::fs::create_dir(dir.path().join("edited")).unwrap();
    std::fs::write(dir.path().join("edited/manifest.json"), json.to_string()).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "good", "edited"]);
    assert!(run.stderr.contains("edited/manifest.json"), "{}", run.stderr);
    bad_input("bad_manifest_edited", &run);

    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "good", "empty"]);
    bad_input("bad_folder", &run);

    let run = ccc_in(dir.path(), &["diagnose", "good", "rank-9.ron"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("cannot read rank-9.ron"), "{}", run.stderr);
}

/// Writes `dir/<name>/manifest.json`: the manifest `text` with its fields
/// changed by `edit`, its top-level `format_version` set to the fields' own
/// and its signature recomputed, as a hand edit that knows the digest does.
fn resigned(dir: &Path, text: &str, name: &str, edit: impl FnOnce(&mut Vec<Field>)) {
    let mut json: serde_json::Value = serde_json::from_str(text).unwrap();
    let mut fields: Vec<Field> = serde_json::from_value(json["signature_fields"].clone()).unwrap();
    edit(&mut fields);
    if let Some(v) = fields.iter().find(|f| f.name == "format_version").and_then(|f| f.value.parse::<u32>().ok()) {
        json["format_version"] = v.into();
    }
    json["signature"] = digest_of(&fields).into();
    json["signature_fields"] = serde_json::to_value(&fields).unwrap();
    std::fs::create_dir(dir.join(name)).unwrap();
    std::fs::write(dir.join(name).join("manifest.json"), json.to_string()).unwrap();
}

/// A manifest edited by hand and signed again passes the digest check;
/// its fields must still be what ccc writes, or the report would compare
/// nonsense (a collective_n with no collectives behind it, a value with a
/// line break printed raw, two fields swapped reported as "no field
/// differs"). Another format version's fields cannot be checked that way:
/// they are compared as they stand, and whatever they hold prints as one
/// readable line.
#[test]
fn manifests_edited_and_signed_again() {
    let dir = tempfile::tempdir().unwrap();
    compile_into(dir.path(), &fixture("written/terse.ron"), "good");
    let text = std::fs::read_to_string(dir.path().join("good/manifest.json")).unwrap();
    // miette wraps at 80 columns: compare the words.
    let flat = |s: &str| s.replace('│', " ").split_whitespace().collect::<Vec<_>>().join(" ");
    let set = |name: &'static str, value: &'static str| {
        move |fields: &mut Vec<Field>| {
            fields.iter_mut().filter(|f| f.name == name).for_each(|f| f.value = value.into());
        }
    };
    resigned(dir.path(), &text, "more", set("collective_n", "5"));
    let run = ccc_in(dir.path(), &["diagnose", "good", "more"]);
    assert!(
        flat(&run.stderr).contains("collective_n is 5, so ccc writes 77 fields; this manifest lists 17"),
        "{}",
        run.stderr
    );
    bad_input("resigned_collective_n", &run);
    resigned(dir.path(), &text, "newline", set("collectives[0].count", "4096\nevil: 1"));
    let run = ccc_in(dir.path(), &["diagnose", "good", "newline"]);
    assert!(flat(&run.stderr).contains("(`collectives[0].count`): its value holds a line break"), "{}", run.stderr);
    assert_eq!(run.code, 2);
    resigned(dir.path(), &text, "swapped", |f| f.swap(3, 4));
    let run = ccc_in(dir.path(), &["diagnose", "good", "swapped"]);
    assert!(flat(&run.stderr).contains("signature_fields[3] is named `collectives[0].reduce`"), "{}", run.stderr);
    assert_eq!(run.code, 2);

    // Format version 2: the same fields in another order, a huge value.
    let v2 =
        |f: &mut Vec<Field>| f.iter_mut().filter(|f| f.name == "format_version").for_each(|f| f.value = "2".into());
    resigned(dir.path(), &text, "v2", v2);
    resigned(dir.path(), &text, "v2-swapped", |f| {
        v2(f);
        f.swap(3, 4);
    });
    let run = ccc_in(dir.path(), &["diagnose", "v2", "v2-swapped"]);
    assert!(run.stdout.contains("on both sides, with the same fields in a different order"), "{}", run.stdout);
    assert_eq!(run.code, 1);
    resigned(dir.path(), &text, "v2-huge", |f| {
        v2(f);
        f.iter_mut().filter(|f| f.name == "collectives[0].count").for_each(|f| f.value = "9".repeat(100_000));
    });
    let run = ccc_in(dir.path(), &["diagnose", "v2", "v2-huge"]);
    assert!(run.stdout.lines().all(|l| l.chars().count() < 400), "{}", run.stdout);
    mismatch("v2_huge_value", &run);
}

/// A spec given through a pipe (`/dev/stdin`, `<(...)`) is read once: it
/// used to be read to tell spec from manifest, then again to parse, which
/// found the pipe empty.
#[cfg(unix)]
#[test]
fn a_spec_through_a_pipe_is_read_once() {
    let run = through_stdin(&["diagnose", "/dev/stdin", "examples/allreduce_ring.ron"], "examples/allreduce_ring.ron");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("match: all 2 inputs have signature"), "{}", run.stdout);
}

/// An HLO module through a pipe, in prose and as JSON: the modules were
/// read to compare their instructions, then again to sign them, and the
/// pipe was empty the second time ("is empty, not an XLA HLO module").
#[test]
fn an_hlo_module_through_a_pipe_is_read_once() {
    let (module, target) = ("tests/hlo/ring_ppermute_8.compiled.hlo", "tests/hlo/targets/cayman_8.ron");
    for json in [&[][..], &["--json"]] {
        let args = [&["diagnose", "/dev/stdin", module, "--target", target][..], json].concat();
        let run = through_stdin(&args, module);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(run.stderr.is_empty(), "{}", run.stderr);
        let matched = if json.is_empty() {
            run.stdout.starts_with("match: all 2")
        } else {
            run.stdout.contains("\"all_match\": true")
        };
        assert!(matched, "{}", run.stdout);
    }
}

/// Runs `ccc <args>` from the repository root with the file at `stdin`
/// (relative to it) written to its standard input through a pipe.
fn through_stdin(args: &[&str], stdin: &str) -> Run {
    use std::io::Write as _;
    let data = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(stdin)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ccc"))
        .args(args)
        .env("NO_COLOR", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&data).unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// `Auto` on one side, its choice written on the other: the images are
/// identical and nothing chose differently, so the report says the ranks
/// chose the same algorithm differently (not that the runtime builds the
/// algorithm into descriptors, nor that Auto chose differently).
#[test]
fn auto_against_its_own_choice_written_says_how_it_was_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let base = "op: AllReduce, dtype: F32, reduce: Add, count: 1048576, arch: Cayman, \
                topology: (rank_n: 32, local_rank_n: 16), channels: 2";
    std::fs::write(dir.path().join("auto.ron"), format!("({base}, algorithm: Auto)")).unwrap();
    let explained = ccc_in(dir.path(), &["explain", "--json", "auto.ron"]);
    let v: serde_json::Value = serde_json::from_str(&explained.stdout).unwrap();
    // `Hier(a=X, b=Y)` as the spec writes it: `Hier((a: X, b: Y))`.
    let chosen = v[0]["chosen"].as_str().unwrap();
    let written = match chosen.strip_prefix("Hier(").and_then(|c| c.strip_suffix(')')) {
        Some(legs) => format!("Hier(({}))", legs.replace('=', ": ")),
        None => chosen.to_owned(),
    };
    std::fs::write(dir.path().join("written.ron"), format!("({base}, algorithm: {written})")).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "auto.ron", "written.ron"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "the images are identical; the ranks chose the same algorithm differently (Auto or written), which \
             the signature records\n"
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(&format!("both run {chosen}, left to Auto here and written there")), "{}", run.stdout);
    let json = ccc_in(dir.path(), &["diagnose", "auto.ron", "written.ron", "--json"]);
    assert!(json.stdout.contains("\"cause\": \"how_chosen\""), "{}", json.stdout);
}

/// An extra collective at the end: the side without it has no collective
/// at that index, and the report says where it stands instead (it once
/// said "collective 4 of 4" of a program of collectives 0 to 3).
#[test]
fn an_extra_collective_at_the_end_is_placed_after_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(format!("{ROOT}/examples/program_training_step.ron")).unwrap();
    let last = text.rfind("Collective(").unwrap();
    let end = text.rfind(']').unwrap();
    let extra = format!(
        "{},\n        {},\n{}",
        text[..end].trim_end().trim_end_matches(','),
        text[last..end].trim_end().trim_end_matches(','),
        &text[end..]
    );
    std::fs::write(dir.path().join("four.ron"), &text).unwrap();
    std::fs::write(dir.path().join("five.ron"), extra).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "four.ron", "five.ron"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains("the specs disagree at the end, after collective 3 of 4 (four.ron) vs 4 of 5 (five.ron)"),
        "{}",
        run.stdout
    );
}

/// Two programs of the same collectives, two of them swapped: the images
/// are identical (a record does not say which collective it serves), and
/// the report says the difference is in the signature; it once ended
/// "the images are identical; " with nothing after.
#[test]
fn swapped_collectives_with_identical_images_say_where_they_differ() {
    let dir = tempfile::tempdir().unwrap();
    let one = |op: &str, reduce: &str, count: u32| {
        format!(
            "Collective(op: {op}, dtype: F32, {reduce}count: {count}, arch: Cayman, \
             topology: (rank_n: 8, local_rank_n: 8), channels: 1, algorithm: Ring),\n"
        )
    };
    let (ar, ag, rs) = (
        one("AllReduce", "reduce: Add, ", 1024),
        one("AllGather", "", 256),
        one("ReduceScatter", "reduce: Add, ", 2048),
    );
    std::fs::write(dir.path().join("a.ron"), format!("Program(collectives: [\n{ar}{ag}{rs}])\n")).unwrap();
    std::fs::write(dir.path().join("b.ron"), format!("Program(collectives: [\n{ar}{rs}{ag}])\n")).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "a.ron", "b.ron"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("the images are identical: what differs is in the signature"), "{}", run.stdout);
    assert!(run.stdout.lines().all(|l| !l.trim_end().ends_with(';')), "{}", run.stdout);
}

/// One HLO module compiled on two hosts whose targets map devices to
/// ranks differently: the pairs differ, but as one list with two ranks
/// renumbered, which is what the report says (it blamed a diverged
/// program).
#[test]
fn pairs_over_renumbered_ranks_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let module = format!("{ROOT}/tests/hlo/ring_ppermute_8.compiled.hlo");
    for (target, out) in [("in-order", "a"), ("swapped", "b")] {
        let target = format!("{ROOT}/{}", fixture(&format!("renumbered/{target}.ron")));
        let run = ccc_in(dir.path(), &["compile", &module, "--target", &target, "--rank", "0", "-o", out]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
    assert!(
        run.stdout.contains(": the same pairs with ranks renumbered: 0 -> 1, 1 -> 0 (2 of the 8 ranks"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("likely cause: the same pairs over ranks numbered differently"), "{}", run.stdout);
    assert!(!run.stdout.contains("program diverged"), "{}", run.stdout);
    mismatch("renumbered", &run);

    let json = ccc_in(dir.path(), &["diagnose", "a", "b", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let field = &report["differences"][0]["collectives"][0]["fields"][0];
    assert_eq!(field["field"], "peers");
    assert_eq!(field["cause"], "renumbered");
    assert!(field["note"].as_str().unwrap().starts_with("the same pairs with ranks renumbered: 0 -> 1, 1 -> 0"));
}

/// Two ranks whose permutes shift by different offsets (`peer: 1`
/// against `peer: 3` and `peer: 7`, a pipeline's stage ahead against
/// another) are told they send at different offsets, a diverged program;
/// every two 8-cycles are one renumbering apart, which the report said
/// instead, blaming the launcher's rank order.
#[test]
fn permutes_shifted_by_different_offsets_say_so() {
    let dir = tempfile::tempdir().unwrap();
    for k in [1, 3, 7] {
        let spec = format!(
            "Collective(op: Permute, dtype: Bf16, count: 4194304, arch: Cayman, topology: (rank_n: 8, \
             local_rank_n: 4), channels: 2, algorithm: Ring, peer: {k})"
        );
        std::fs::write(dir.path().join(format!("p{k}.ron")), spec).unwrap();
    }
    let run = ccc_in(dir.path(), &["diagnose", "p1.ron", "p3.ron"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            ": each of the 8 ranks sends to the next rank on the first side (a shift by 1) and to the rank 3 ahead \
             on the second (a shift by 3), mod 8: the two sides send at different offsets"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("likely cause: a different collective was traced (the program diverged)"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("renumbered"), "{}", run.stdout);
    let run = ccc_in(dir.path(), &["diagnose", "p1.ron", "p7.ron", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let field = &report["differences"][0]["collectives"][0]["fields"][0];
    assert_eq!(field["field"], "peers");
    assert_eq!(field["cause"], "program_diverged");
    assert!(field["note"].as_str().unwrap().contains("to the rank before it on the second (a shift by 7)"));
}

/// Two specs whose groups differ over more ranks than the signature
/// writes out (it holds their count and MD5) are told where: the first
/// group and member that differ. (Only the two MD5s were shown.)
#[test]
fn long_groups_read_from_specs_say_where_they_differ() {
    let dir = tempfile::tempdir().unwrap();
    let mut groups: Vec<Vec<u32>> = (0..16).map(|g| (g * 32..g * 32 + 32).collect()).collect();
    let spec = |groups: &[Vec<u32>]| {
        format!(
            "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 1048576, arch: Cayman, topology: (rank_n: \
             512, local_rank_n: 32), channels: 2, algorithm: Ring, groups: {groups:?})"
        )
    };
    std::fs::write(dir.path().join("a.ron"), spec(&groups)).unwrap();
    groups[9].swap(3, 4);
    std::fs::write(dir.path().join("b.ron"), spec(&groups)).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "a.ron", "b.ron"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("- groups: 16 groups of 32, md5 "), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            ": the first group that differs is group 9 of 16 (from rank 288): member 3 is rank 291 on the first side \
             and 292 on the second (2 of its 32 members differ); 1 differs"
        ),
        "{}",
        run.stdout
    );
    // One side short enough to be written out keeps no list: no note (it
    // said the other side had "no such group", of "group 0 of 0").
    let short: Vec<Vec<u32>> = (0..8).map(|g| (g * 32..g * 32 + 32).collect()).collect();
    std::fs::write(dir.path().join("c.ron"), spec(&short).replace("rank_n: 512", "rank_n: 256")).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "c.ron", "b.ron"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!run.stdout.contains("the first group that differs"), "{}", run.stdout);
}

/// Byte-identical images under another architecture are put down to the
/// instance or the launcher, not to "descriptors the runtime builds",
/// which it said of every field.
#[test]
fn identical_images_on_another_arch_blame_the_machine() {
    let dir = tempfile::tempdir().unwrap();
    let ring = std::fs::read_to_string(format!("{ROOT}/examples/allreduce_ring.ron")).unwrap();
    assert!(ring.contains("arch: Cayman"));
    std::fs::write(dir.path().join("cayman.ron"), &ring).unwrap();
    std::fs::write(dir.path().join("mariana.ron"), ring.replace("arch: Cayman", "arch: Mariana")).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "cayman.ron", "mariana.ron"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "the images are identical; the ranks differ in arch, which the instance type or the launcher sets, not \
             these images"
        ),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("descriptors"), "{}", run.stdout);
}

/// The largest group of four inputs that holds two is not called a
/// majority (it was: `majority: 2 of 4`); three of four is. A file given
/// more than once is said to be, on stderr (it was silent, though each
/// time counts).
#[test]
fn a_largest_group_of_half_the_inputs_is_no_majority() {
    let dir = tempfile::tempdir().unwrap();
    let ring = std::fs::read_to_string(format!("{ROOT}/examples/allreduce_ring.ron")).unwrap();
    for (name, count) in [("a.ron", "1048576"), ("b.ron", "1048576"), ("x.ron", "1048577"), ("y.ron", "2048")] {
        std::fs::write(dir.path().join(name), ring.replace("count: 1048576", &format!("count: {count}"))).unwrap();
    }
    let run = ccc_in(dir.path(), &["diagnose", "a.ron", "b.ron", "x.ron", "y.ron"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("\nlargest group: 2 of 4, signature "), "{}", run.stdout);
    assert!(run.stdout.contains("what sets x.ron apart from the largest group:"), "{}", run.stdout);
    assert!(!run.stdout.contains("majority"), "{}", run.stdout);
    let run = ccc_in(dir.path(), &["diagnose", "a.ron", "b.ron", "a.ron", "y.ron"]);
    assert!(run.stdout.contains("\nmajority: 3 of 4, signature "), "{}", run.stdout);
    // One file given twice (by two spellings of its path) is said to be.
    assert!(
        run.stderr.contains("note: a.ron is given twice (inputs 1, 3): each counts as an input of its own"),
        "{}",
        run.stderr
    );
    let run = ccc_in(dir.path(), &["diagnose", "a.ron", "./a.ron"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("note: a.ron is given twice (inputs 1, 2)"), "{}", run.stderr);
    assert!(!ccc_in(dir.path(), &["diagnose", "a.ron", "b.ron"]).stderr.contains("given twice"));
}

/// A flag between the inputs is taken as a flag: `a --json b c` compared
/// three inputs (clap took `--json` for the end of a run of two or more
/// and refused "2 values required ... only 1 was provided"); one input
/// is refused as such, exit 2.
#[test]
fn a_flag_may_stand_between_the_inputs() {
    let (a, b) = (fixture("count_off_by_one/rank-0.ron"), fixture("count_off_by_one/rank-5.ron"));
    for args in [[a.as_str(), "--json", b.as_str(), a.as_str()], [a.as_str(), b.as_str(), "--json", a.as_str()]] {
        let run = diagnose(&args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        let report: ccc_compiler::diagnose::Report = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(report.input_n, 3, "{args:?}");
    }
    let one = diagnose(&[a.as_str(), "--json"]);
    assert_eq!(one.code, 2, "{}", one.stdout);
    assert!(one.stderr.contains("diagnose was given one input"), "{}", one.stderr);
}

/// `--target` (or `--algorithm`) with no HLO module among the inputs is
/// refused whatever they are: it was refused for specs but ignored for
/// manifests and output folders.
#[test]
fn a_target_without_a_module_is_refused_for_every_input_kind() {
    let dir = tempfile::tempdir().unwrap();
    compile_into(dir.path(), "examples/allreduce_ring.ron", "a");
    compile_into(dir.path(), "examples/allreduce_ring.ron", "b");
    let ring = format!("{ROOT}/examples/allreduce_ring.ron");
    let target = format!("{ROOT}/tests/hlo/targets/cayman_8.ron");
    for inputs in [["a", "b"], ["a/manifest.json", "b"]] {
        let run = ccc_in(dir.path(), &["diagnose", inputs[0], inputs[1], "--target", &target]);
        assert_eq!(run.code, 2, "{inputs:?}: {}", run.stdout);
        assert!(run.stderr.contains("none of the 2 inputs is an XLA HLO module"), "{}", run.stderr);
    }
    let run = ccc_in(dir.path(), &["diagnose", &ring, &ring, "--target", &target]);
    assert_eq!(run.code, 2, "{}", run.stdout);
}

/// A folder whose `manifest.json` is not a file, or not UTF-8, and a
/// manifest given where a spec goes: each refusal says what is wrong.
/// (They said "a folder without a manifest.json"; "cannot read ...: stream
/// did not contain valid UTF-8" with no offset; and a RON error at 1:1.)
#[test]
fn a_folder_manifest_that_is_not_one_is_named_for_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let ring = format!("{ROOT}/examples/allreduce_ring.ron");
    for out in ["a", "b"] {
        assert_eq!(ccc_in(dir.path(), &["compile", &ring, "-o", out, "-q"]).code, 0);
    }
    let squeeze = |t: &str| t.split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ");
    let run = ccc_in(dir.path(), &["sign", "a/manifest.json"]);
    assert_eq!(run.code, 2);
    assert!(
        squeeze(&run.stderr).contains("help: this looks like JSON (a manifest.json?), not a spec"),
        "{}",
        run.stderr
    );
    let manifest = dir.path().join("b/manifest.json");
    std::fs::write(&manifest, b"{\"manifest_schema\": \"\xff\"}").unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
    assert_eq!(run.code, 2);
    let said = squeeze(&run.stderr);
    assert!(said.contains("b/manifest.json is not UTF-8: byte 0xff at offset 21 (line 1, column 22)"), "{said}");
    std::fs::remove_file(&manifest).unwrap();
    std::fs::create_dir(&manifest).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
    assert_eq!(run.code, 2);
    let said = squeeze(&run.stderr);
    assert!(said.contains("b/manifest.json is a folder, not a file;"), "{said}");
    #[cfg(unix)]
    {
        std::fs::remove_dir(&manifest).unwrap();
        assert!(Command::new("mkfifo").arg(&manifest).status().unwrap().success());
        let run = ccc_in(dir.path(), &["diagnose", "a", "b"]);
        assert_eq!(run.code, 2);
        assert!(squeeze(&run.stderr).contains("b/manifest.json is a named pipe, not a file;"), "{}", run.stderr);
    }
}

/// Forty equal `Auto` all-reduces, the last one resized on one side: the
/// fit moves earlier choices, and the report leads with the resized
/// collective, said with its own sizes (it was named by the first moved
/// one's summary, "x 1024 on both sides").
#[test]
fn a_resized_collective_leads_over_the_choices_it_moved() {
    let dir = tempfile::tempdir().unwrap();
    let one = |count: u32| {
        format!(
            "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: {count}, arch: Cayman, \
             topology: (rank_n: 32, local_rank_n: 16), channels: 1, algorithm: Auto)"
        )
    };
    let program = |last: u32| {
        let mut cs: Vec<String> = (0..39).map(|_| one(1024)).collect();
        cs.push(one(last));
        format!("Program(collectives: [{}])", cs.join(",\n"))
    };
    std::fs::write(dir.path().join("a.ron"), program(1024)).unwrap();
    std::fs::write(dir.path().join("b.ron"), program(8)).unwrap();
    let run = ccc_in(dir.path(), &["diagnose", "a.ron", "b.ron"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let lead = run.stdout.lines().find(|l| l.starts_with("the specs disagree at")).unwrap_or_default();
    assert_eq!(
        lead,
        "the specs disagree at collective 39 of 40 (a.ron) vs 39 of 40 (b.ron): AllReduce Bf16 x 1024 (a.ron) vs \
         AllReduce Bf16 x 8 (b.ron)",
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("missing") && !run.stdout.contains("extra"), "{}", run.stdout);
}
