//! A verb asked for JSON (`diagnose --json`, `explain --json`, `sweep
//! --json`, `decode --format json`) that fails says so on stdout as JSON
//! too (interface.md, "Errors under `--json`"): a tool reading its output
//! parses an `{"error": ...}` object instead of nothing, with the exit
//! code and where the input was wrong. The prose report stays on stderr.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn ccc(args: &[&str]) -> Run {
    let out =
        Command::new(env!("CARGO_BIN_EXE_ccc")).args(args).current_dir(ROOT).env("NO_COLOR", "1").output().unwrap();
    Run {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// The `error` object of a failed run's stdout, after checking the exit
/// code (2, bad input) and that the prose report is on stderr.
fn error_of(run: &Run) -> Value {
    assert_eq!(run.code, 2, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains('×'), "the prose report stays on stderr: {}", run.stderr);
    let value: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    assert_eq!(value.as_object().map(|o| o.len()), Some(1), "one key, error: {value}");
    let error = value["error"].clone();
    assert_eq!(error["exit_code"], 2, "{error}");
    error
}

const TYPO: &str = "tests/fixtures/diagnose/bad/typo.ron";
const TERSE: &str = "tests/fixtures/diagnose/written/terse.ron";

/// A parse error: the file, and the line and column of the misspelt key
/// (counted by hand in the fixture: line 3, after 11 spaces and the 40
/// characters of `topology: (rank_n: 8, local_rank_n: 4), `).
#[test]
fn parse_error_is_located() {
    let error = error_of(&ccc(&["diagnose", "--json", TYPO, TERSE]));
    assert_eq!(error["code"], "ccc::parse");
    assert_eq!(error["file"], TYPO);
    assert_eq!((error["line"].as_u64(), error["column"].as_u64()), (Some(3), Some(52)), "{error}");
    assert_eq!(error["field"], "chanels");
    assert_eq!(error["label"], "unknown field `chanels`");
    assert_eq!(error["help"], "did you mean `channels`?");
    let message = error["message"].as_str().unwrap();
    assert!(message.starts_with(&format!("cannot parse {TYPO}: unexpected field named `chanels`")), "{message}");
}

/// A column counts characters, not bytes: a 2-byte `é` and a 3-byte `→`
/// before the token move it by one each.
#[test]
fn column_counts_characters() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("wide.ron");
    std::fs::write(&spec, "// é→\n/* é→ */ Collective(op: Nope)").unwrap();
    let error = error_of(&ccc(&["explain", "--json", spec.to_str().unwrap()]));
    assert_eq!((error["line"].as_u64(), error["column"].as_u64()), (Some(2), Some(25)), "{error}");
}

/// A file that is not UTF-8: where its first bad byte is, as the message
/// says it (it was only in the message).
#[test]
fn a_file_not_utf8_is_located() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("latin1.ron");
    std::fs::write(&spec, b"// caf\xe9\nCollective(op: \xff)").unwrap();
    let error = error_of(&ccc(&["sweep", "--json", spec.to_str().unwrap()]));
    assert_eq!(error["code"], "ccc::not_utf8");
    let at = ["line", "column", "offset"].map(|k| error[k].as_u64());
    assert_eq!(at, [Some(1), Some(7), Some(6)], "the é of line 1: {error}");
    assert_eq!(error["file"], spec.to_str().unwrap());
}

/// A spec that parses but breaks rules: every problem with its field path.
#[test]
fn validation_problems_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("invalid.ron");
    std::fs::write(
        &spec,
        "Collective(op: AllReduce, dtype: Bf16, count: 0, arch: Cayman, \
         topology: (rank_n: 3, local_rank_n: 2), channels: 1, algorithm: Ring)",
    )
    .unwrap();
    for verb in ["explain", "sweep"] {
        let error = error_of(&ccc(&[verb, "--json", spec.to_str().unwrap()]));
        assert_eq!(error["code"], "ccc::invalid", "{verb}");
        assert_eq!(error["count"], 3, "{verb}: {error}");
        let paths: Vec<&str> =
            error["problems"].as_array().unwrap().iter().filter_map(|p| p["path"].as_str()).collect();
        assert_eq!(paths, ["topology.local_rank_n", "count", "reduce"], "{verb}");
        let message = error["problems"][0]["message"].as_str().unwrap();
        assert!(message.starts_with("local_rank_n 2 does not divide rank_n 3"), "{message}");
    }
}

/// Several inputs refused: each one's error, in input order, under the
/// closing one.
#[test]
fn every_refused_input_is_listed() {
    let error = error_of(&ccc(&["diagnose", "--json", TYPO, TERSE, "no-such-rank.ron"]));
    assert!(error["message"].as_str().unwrap().starts_with("2 of the 3 inputs were refused"), "{error}");
    let inputs = error["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), 2, "{error}");
    assert_eq!((&inputs[0]["code"], &inputs[0]["file"]), (&"ccc::parse".into(), &TYPO.into()));
    assert!(inputs[1]["message"].as_str().unwrap().starts_with("cannot read no-such-rank.ron"), "{error}");
}

/// An error of no located kind (a file missing; an image of a bad length)
/// still gives its code, message and help.
#[test]
fn other_errors_give_message_and_help() {
    let error = error_of(&ccc(&["sweep", "--json", "no-such-spec.ron"]));
    assert!(error["message"].as_str().unwrap().starts_with("cannot read no-such-spec.ron"), "{error}");
    assert!(error["help"].as_str().unwrap().contains("check the spec's path"), "{error}");

    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("ctrl_spad.bin");
    std::fs::write(&image, [0u8; 7]).unwrap();
    let error = error_of(&ccc(&["decode", "--format", "json", image.to_str().unwrap()]));
    assert_eq!(error["code"], "ccc::decode");
    assert!(error["message"].as_str().unwrap().contains("not a multiple of 8 bytes"), "{error}");
}

/// Without JSON asked for, stdout stays empty on an error (the report is
/// on stderr alone), as before.
#[test]
fn prose_verbs_print_nothing_on_stdout() {
    for args in [
        &["diagnose", TYPO, TERSE][..],
        &["explain", TYPO],
        &["sweep", TYPO],
        &["decode", "--format", "text", TYPO],
        &["check", TYPO],
    ] {
        let run = ccc(args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
}

/// A control character in a file name the error quotes reaches stdout
/// escaped (a JSON escape), and the JSON reads the name back as it is.
#[test]
fn control_characters_stay_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let name = "bad\u{1b}]0;title\u{7}\u{9b}.ron";
    let spec = dir.path().join(name);
    std::fs::write(&spec, "garbage").unwrap();
    let run = ccc(&["explain", "--json", spec.to_str().unwrap()]);
    assert!(!run.stdout.chars().any(|c| c.is_control() && c != '\n'), "{:?}", run.stdout);
    let error = error_of(&run);
    let file = error["file"].as_str().unwrap();
    assert!(Path::new(file).ends_with(name), "{file:?}");
}
