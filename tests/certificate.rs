#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `ccc compile --proven-by MANIFEST`: a rank compiled under the certificate
//! of an earlier verified compile of the same schedule gets the same bytes
//! without proving the world again, and a certificate that does not vouch
//! for the schedule is refused.

use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const SPEC: &str = "examples/allreduce_hier.ron";

fn ccc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ccc")).args(args).current_dir(ROOT).env("NO_COLOR", "1").output().unwrap()
}

fn ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Exit 2; the report's words, one space apart (the report is wrapped to
/// a width, inside a frame).
fn refused(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "stdout: {}", String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    stderr.split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The verified world compile every test certifies from.
fn world(dir: &Path) -> std::path::PathBuf {
    let world = dir.join("world");
    ok(&ccc(&["compile", SPEC, "-o", s(&world)]));
    world
}

#[test]
fn a_certified_rank_is_the_rank_of_the_proven_world() {
    let dir = tempfile::tempdir().unwrap();
    let world = world(dir.path());
    let alone = dir.path().join("alone");
    let stdout = ok(&ccc(&["compile", SPEC, "-o", s(&alone), "--rank", "5", "--rank", "30", "--proven-by", s(&world)]));
    assert!(stdout.contains("certified: an earlier compile of this very schedule"), "{stdout}");
    for rank in [5, 30] {
        for topsp in 0..4 {
            for file in ["ctrl_spad.bin", "slot_spad.bin", "neff_configs.bin"] {
                let rel = format!("rank-{rank}/topsp-{topsp}/{file}");
                assert_eq!(std::fs::read(world.join(&rel)).unwrap(), std::fs::read(alone.join(&rel)).unwrap(), "{rel}");
            }
        }
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(alone.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["proof"]["certified"], true);
    let proven: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(world.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(proven["proof"]["certified"], false);
    assert_eq!(manifest["proof"]["postconditions"], proven["proof"]["postconditions"]);
    assert_eq!(manifest["signature"], proven["signature"]);
}

#[test]
fn a_certificate_for_another_schedule_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let world = world(dir.path());
    let other = dir.path().join("other.ron");
    let text = std::fs::read_to_string(Path::new(ROOT).join(SPEC)).unwrap().replace("count: 4194304", "count: 4194305");
    std::fs::write(&other, text).unwrap();
    let stderr = refused(&ccc(&["compile", s(&other), "-o", s(&dir.path().join("x")), "--proven-by", s(&world)]));
    assert!(stderr.contains("the certificate proved the schedule signed"), "{stderr}");
    assert!(stderr.contains("ccc diagnose"), "{stderr}");
    assert!(!dir.path().join("x").exists(), "nothing may be written");
}

#[test]
fn an_unproven_or_edited_certificate_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let unproven = dir.path().join("unproven");
    ok(&ccc(&["compile", SPEC, "-o", s(&unproven), "--no-verify"]));
    let stderr = refused(&ccc(&["compile", SPEC, "-o", s(&dir.path().join("x")), "--proven-by", s(&unproven)]));
    assert!(stderr.contains("did not prove its schedule"), "{stderr}");
    assert!(stderr.contains("--no-verify"), "the CLI names the flag that skipped the proof: {stderr}");

    let world = world(dir.path());
    let path = world.join("manifest.json");
    // Change the recorded count without re-signing.
    let edited = std::fs::read_to_string(&path).unwrap().replace("\"value\": \"4194304\"", "\"value\": \"4194305\"");
    std::fs::write(&path, edited).unwrap();
    let stderr = refused(&ccc(&["compile", SPEC, "-o", s(&dir.path().join("y")), "--proven-by", s(&path)]));
    assert!(stderr.contains("it was edited"), "{stderr}");
    // The file at fault is named, and what to use instead.
    assert!(stderr.contains(&format!("{} does not certify", path.display())), "{stderr}");
    assert!(stderr.contains("help: the manifest is not as ccc wrote it"), "{stderr}");
}

/// A proof section copied from another schedule's manifest onto an
/// unproven one is refused: its figures are not what a proof of this
/// schedule reports.
#[test]
fn a_proof_section_from_another_schedule_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let unproven = dir.path().join("unproven");
    ok(&ccc(&["compile", "examples/allreduce_ring.ron", "-o", s(&unproven), "--no-verify"]));
    let donor = dir.path().join("donor");
    ok(&ccc(&["compile", "examples/reduce_ring.ron", "-o", s(&donor), "--rank", "0"]));
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p.join("manifest.json")).unwrap()).unwrap()
    };
    let mut forged = read(&unproven);
    forged["proof"] = read(&donor)["proof"].clone();
    std::fs::write(unproven.join("manifest.json"), serde_json::to_string_pretty(&forged).unwrap()).unwrap();
    let stderr = refused(&ccc(&[
        "compile",
        "examples/allreduce_ring.ron",
        "-o",
        s(&dir.path().join("x")),
        "--proven-by",
        s(&unproven),
    ]));
    assert!(stderr.contains("proof section does not fit this schedule"), "{stderr}");
}

#[test]
fn a_certificate_of_another_format_version_or_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let world = world(dir.path());
    let path = world.join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["format_version"] = serde_json::json!(99);
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let stderr = refused(&ccc(&["compile", SPEC, "-o", s(&dir.path().join("x")), "--proven-by", s(&path)]));
    assert!(stderr.contains("format version 99"), "{stderr}");
    m["format_version"] = serde_json::json!(ccc_ir::FORMAT_VERSION);
    m["manifest_schema"] = serde_json::json!(99);
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let stderr = refused(&ccc(&["compile", SPEC, "-o", s(&dir.path().join("y")), "--proven-by", s(&path)]));
    assert!(stderr.contains("manifest_schema is 99"), "{stderr}");
}

#[test]
fn proven_by_and_no_verify_exclude_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let out = ccc(&["compile", SPEC, "-o", s(dir.path()), "--no-verify", "--proven-by", s(dir.path())]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}

/// Every figure of the proof section is checked against what a proof of
/// this schedule reports: a certificate with any one edited (and its
/// signature intact: the proof section is not signed) is refused with
/// exit 2, naming the figure's path in the manifest, the certificate's
/// value and the schedule's, and nothing is written.
#[test]
fn every_edited_figure_of_the_proof_section_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let world = world(dir.path());
    let text = std::fs::read_to_string(world.join("manifest.json")).unwrap();
    let proven: serde_json::Value = serde_json::from_str(&text).unwrap();
    let figures = [
        "/proof/postconditions/0/collective",
        "/proof/postconditions/0/groups",
        "/proof/postconditions/0/members",
        "/proof/postconditions/0/steps",
        "/proof/postconditions/0/halves",
        "/proof/postconditions/0/transfers",
        "/proof/protocol/chains",
        "/proof/protocol/records",
        "/proof/protocol/steps",
        "/proof/protocol/signals",
    ];
    for (i, pointer) in figures.iter().enumerate() {
        let value = proven.pointer(pointer).and_then(serde_json::Value::as_u64).unwrap();
        let mut edited = proven.clone();
        *edited.pointer_mut(pointer).unwrap() = serde_json::json!(value + 1);
        let cert = dir.path().join(format!("cert-{i}.json"));
        std::fs::write(&cert, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
        let out = dir.path().join(format!("out-{i}"));
        let stderr = refused(&ccc(&["compile", SPEC, "-o", s(&out), "--rank", "0", "--proven-by", s(&cert)]));
        let path = pointer.trim_start_matches('/').replace("/0/", "[0].").replace('/', ".");
        let want = format!("{path} is {}, a proof of it reports {value}", value + 1);
        assert!(stderr.replace("\n  │ ", " ").contains(&want), "{pointer}: want {want:?} in {stderr}");
        assert!(!out.exists(), "{pointer}: nothing may be written");
    }
    let mut edited = proven.clone();
    *edited.pointer_mut("/proof/postconditions/0/claim").unwrap() = serde_json::json!("every rank holds nothing");
    let cert = dir.path().join("claim.json");
    std::fs::write(&cert, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    let stderr =
        refused(&ccc(&["compile", SPEC, "-o", s(&dir.path().join("c")), "--rank", "0", "--proven-by", s(&cert)]));
    assert!(
        stderr.replace("\n  │ ", " ").contains("proof.postconditions[0].claim is \"every rank holds nothing\""),
        "{stderr}"
    );
}

/// The figures computed for the check agree with the proof on every
/// example: a world compile certifies a rank of each.
#[test]
fn every_example_certifies_its_own_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let mut examples: Vec<_> = std::fs::read_dir(Path::new(ROOT).join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect();
    examples.sort();
    for (i, spec) in examples.iter().enumerate() {
        let world = dir.path().join(format!("world-{i}"));
        ok(&ccc(&["compile", s(spec), "-o", s(&world), "--rank", "0"]));
        let alone = dir.path().join(format!("alone-{i}"));
        let stdout = ok(&ccc(&["compile", s(spec), "-o", s(&alone), "--rank", "0", "--proven-by", s(&world)]));
        assert!(stdout.contains("certified"), "{}: {stdout}", spec.display());
    }
}
