#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The built binary at the edges of its environment: a reader that closes
//! stdout early (`ccc graph ... | head -1`), a stdout that cannot be
//! written, and a world too large to draw as a graph.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ccc");

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name)
}

/// Runs `ccc args` with stdout a pipe whose reader is closed right away;
/// returns the exit status and stderr.
fn run_with_closed_stdout<S: AsRef<OsStr>>(args: &[S]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ccc");
    // Close the reading end before ccc has had time to write anything.
    drop(child.stdout.take());
    child.wait_with_output().expect("wait for ccc")
}

/// Runs `ccc args` with stdout thrown away.
fn run_quiet<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run ccc")
}

/// A closed stdout is the reader's choice, not an error: exit 0 (never
/// 101, a panic) and nothing about the pipe on stderr.
fn assert_quiet_success<S: AsRef<OsStr>>(args: &[S]) {
    let shown: Vec<String> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
    let out = run_with_closed_stdout(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "ccc {} with stdout closed: {}\nstderr:\n{stderr}",
        shown.join(" "),
        out.status
    );
    assert!(
        !stderr.contains("Broken pipe") && !stderr.contains("panicked"),
        "ccc {} with stdout closed printed on stderr:\n{stderr}",
        shown.join(" ")
    );
}

#[test]
fn check_survives_a_closed_stdout() {
    assert_quiet_success(&[OsStr::new("check"), example("allreduce_hier.ron").as_os_str()]);
}

#[test]
fn sign_survives_a_closed_stdout() {
    assert_quiet_success(&[OsStr::new("sign"), example("allreduce_hier.ron").as_os_str()]);
}

#[test]
fn graph_survives_a_closed_stdout() {
    // Far more DOT than a pipe buffers: the write fails whenever the
    // reader goes away.
    assert_quiet_success(&[OsStr::new("graph"), example("allreduce_hier_4x32.ron").as_os_str()]);
}

#[test]
fn verify_survives_a_closed_stdout() {
    assert_quiet_success(&[OsStr::new("verify"), example("allreduce_ring.ron").as_os_str()]);
}

#[test]
fn compile_survives_a_closed_stdout_and_still_writes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_quiet_success(&[
        OsStr::new("compile"),
        example("allreduce_ring.ron").as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    assert!(out.join("manifest.json").is_file(), "compile wrote no manifest.json");
}

#[test]
fn diagnose_survives_a_closed_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.ron");
    std::fs::copy(example("allreduce_ring.ron"), &copy).unwrap();
    let spec = example("allreduce_ring.ron");
    assert_quiet_success(&[OsStr::new("diagnose"), spec.as_os_str(), copy.as_os_str()]);
    assert_quiet_success(&[OsStr::new("diagnose"), OsStr::new("--json"), spec.as_os_str(), copy.as_os_str()]);
}

#[test]
fn decode_survives_a_closed_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let compiled = run_quiet(&[
        OsStr::new("compile"),
        example("allreduce_ring.ron").as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    assert_eq!(compiled.status.code(), Some(0), "{}", String::from_utf8_lossy(&compiled.stderr));
    let ctrl = out.join("rank-0").join("topsp-0").join("ctrl_spad.bin");
    assert_quiet_success(&[OsStr::new("decode"), ctrl.as_os_str()]);
}

/// Any other write error is reported, naming stdout, with exit 2.
#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_reported() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let out = Command::new(BIN)
        .args([OsStr::new("sign"), example("allreduce_hier.ron").as_os_str()])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    assert!(stderr.contains("stdout"), "stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "stderr:\n{stderr}");

    // A verb whose summary cannot be printed has written its output (a
    // compile's folder, an `--svg` file): the report says so, rather than
    // reading as "nothing was written" (`explain` and `sweep` said only
    // "cannot write to stdout").
    let dir = tempfile::tempdir().unwrap();
    // Each says what it lost: the summary, the tables, the rows (both
    // said "this summary", the JSON tables too).
    for (verb, flag, written, lost) in [
        ("compile", "-o", "out", "this summary"),
        ("explain", "--svg", "explain.svg", "the tables"),
        ("sweep", "--svg", "sweep.svg", "the rows"),
    ] {
        let written = dir.path().join(written);
        let out = Command::new(BIN)
            .args([OsStr::new(verb), example("allreduce_ring.ron").as_os_str(), OsStr::new(flag)])
            .arg(&written)
            .stdout(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{verb}: {stderr}");
        let words = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        let said = format!("{} was written whole; only {lost} was lost", written.display());
        assert!(words.contains(&said), "{verb}: {stderr}");
        assert!(written.exists(), "{verb}");
    }
    assert!(dir.path().join("out/manifest.json").is_file());
}

/// `--help` and `--version` into a full stdout fail as every verb's
/// output does, exit 2 naming stdout (they exited 0, nothing written).
#[cfg(target_os = "linux")]
#[test]
fn help_and_version_into_a_full_stdout_are_reported() {
    for args in [&["--help"][..], &["--version"], &["compile", "--help"]] {
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let out = Command::new(BIN).args(args).stdout(full).stderr(Stdio::piped()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("cannot write to stdout"), "{args:?}: {stderr}");
    }
    // Into a stdout that takes it: exit 0, as before.
    let out = Command::new(BIN).arg("--version").output().unwrap();
    assert_eq!((out.status.code(), out.stdout.starts_with(b"ccc ")), (Some(0), true));
}

/// A 65,536-rank ring: drawn whole it would have billions of nodes.
fn big_ring(dir: &Path) -> PathBuf {
    let spec = dir.join("ring_65536.ron");
    std::fs::write(
        &spec,
        "Collective(
    op: AllReduce,
    dtype: F32,
    reduce: Add,
    count: 1048576,
    arch: Cayman,
    topology: (rank_n: 65536, local_rank_n: 16),
    channels: 1,
    algorithm: Ring,
)
",
    )
    .unwrap();
    spec
}

#[test]
fn graph_refuses_a_world_too_large_to_draw() {
    let dir = tempfile::tempdir().unwrap();
    let spec = big_ring(dir.path());
    let out = run_quiet(&[OsStr::new("graph"), spec.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    // 65536 ranks x 2 x 65535 ring steps.
    assert!(stderr.contains("8589803520"), "the node count is named:\n{stderr}");
    assert!(stderr.contains("200000"), "the limit is named:\n{stderr}");
    assert!(stderr.contains("--rank R"), "the fix is named:\n{stderr}");
}

/// A mesh all-to-all of 4,096 ranks has only 4,096 nodes, but each lists
/// every peer: some 16 million transfers, gigabytes of DOT. Refused from
/// an estimate before the graph is built, not after it has filled memory;
/// one rank of it is drawn.
#[test]
fn graph_refuses_a_world_with_too_many_transfers() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("a2a.ron");
    let text = "Collective(op: AllToAll, dtype: Bf16, count: 1048576, arch: Cayman, \
                topology: (rank_n: 4096, local_rank_n: 16), channels: 1, algorithm: Mesh)";
    std::fs::write(&spec, text).unwrap();
    let out = run_quiet(&[OsStr::new("graph"), spec.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    // 4096 ranks x 8191 transfers (4095 sent, 4095 heard, its own block).
    assert!(stderr.contains("33550336 transfers") && stderr.contains("800000"), "stderr:\n{stderr}");
    assert!(stderr.contains("--rank R"), "stderr:\n{stderr}");
    let one = run_quiet(&[OsStr::new("graph"), spec.as_os_str(), OsStr::new("--rank"), OsStr::new("7")]);
    assert_eq!(one.status.code(), Some(0), "stderr:\n{}", String::from_utf8_lossy(&one.stderr));
}

/// A mesh broadcast's root lists a transfer per peer, the others one
/// each: the estimate from the first and last rank drawn missed a root
/// between them, and `--rank 0 --rank 5 --rank 10` drew a 77 MB graph
/// that `--rank 5` alone was refused. Every rank drawn is counted.
#[test]
fn graph_counts_a_busy_rank_between_the_first_and_last() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("bcast.ron");
    let text = "Collective(op: Broadcast, dtype: Bf16, count: 1048576, arch: Cayman, \
                topology: (rank_n: 1048576, local_rank_n: 16), channels: 1, algorithm: Mesh, root: 5)";
    std::fs::write(&spec, text).unwrap();
    let rank = |r: &'static str| [OsStr::new("--rank"), OsStr::new(r)];
    let alone = run_quiet(&[&[OsStr::new("graph"), spec.as_os_str()][..], &rank("5")].concat());
    assert_eq!(
        alone.status.code(),
        Some(2),
        "stderr:
{}",
        String::from_utf8_lossy(&alone.stderr)
    );
    let three = [&[OsStr::new("graph"), spec.as_os_str()][..], &rank("0"), &rank("5"), &rank("10")].concat();
    let out = run_quiet(&three);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stdout: {} bytes\nstderr:\n{stderr}", out.stdout.len());
    // (The report is wrapped to a width: compared without blanks and frames.)
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace() && *c != '│').collect::<String>();
    let said =
        "would draw more than 800000 transfers, the limit: the first 2 ranks draw 1048576 (rank 5 alone 1048575)";
    assert!(squeeze(&stderr).contains(&squeeze(said)), "{stderr}");
    // Two ranks either side of it are drawn.
    let quiet = [&[OsStr::new("graph"), spec.as_os_str()][..], &rank("0"), &rank("6"), &rank("10")].concat();
    assert_eq!(run_quiet(&quiet).status.code(), Some(0));
}

#[test]
fn graph_of_one_rank_of_a_large_world_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let spec = big_ring(dir.path());
    let out = run_quiet(&[OsStr::new("graph"), spec.as_os_str(), OsStr::new("--rank"), OsStr::new("0")]);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// Runs `ccc args` under a pseudo-terminal (util-linux `script`), so that
/// stderr is a terminal; returns everything the terminal received.
fn run_on_a_terminal(args: &str) -> String {
    let out = Command::new("script")
        .args(["-qec", &format!("{BIN} {args}"), "/dev/null"])
        .env("CCC_PROGRESS_AFTER_MS", "0")
        .stdin(Stdio::null())
        .output()
        .expect("run script (util-linux)");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A whole-world proof draws a progress bar with stage names and rank
/// counts on a terminal; nothing with `--quiet`, nothing into a pipe.
#[test]
fn progress_is_drawn_on_a_terminal_only() {
    let spec = example("allreduce_inter_rdh_nonpow2.ron");
    let spec = spec.display();
    let drawn = run_on_a_terminal(&format!("verify {spec}"));
    // The bar redraws at most 20 times a second, so a quick stage may never
    // be drawn; the first stage's start always is.
    assert!(drawn.contains("lower [") && drawn.contains("/12 ranks"), "no bar in:\n{drawn}");
    assert!(drawn.contains("proven: protocol"), "the summary follows the bar:\n{drawn}");

    let quiet = run_on_a_terminal(&format!("verify --quiet {spec}"));
    assert!(!quiet.contains("protocol ["), "--quiet drew a bar:\n{quiet}");
    assert!(quiet.contains("proven: protocol"), "{quiet}");

    let piped = Command::new(BIN)
        .args(["verify".as_ref(), example("allreduce_inter_rdh_nonpow2.ron").as_os_str()])
        .env("CCC_PROGRESS_AFTER_MS", "0")
        .output()
        .expect("run ccc");
    assert_eq!(piped.status.code(), Some(0));
    assert!(piped.stderr.is_empty(), "stderr into a pipe: {}", String::from_utf8_lossy(&piped.stderr));
}

/// A compile whose estimated memory exceeds the budget exits 2 before any
/// world-sized work, naming the CLI's ways out; `--memory-budget` takes
/// binary units and refuses what is not a size.
#[test]
fn a_compile_beyond_the_memory_budget_names_the_flags_that_help() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("permute.ron");
    std::fs::write(
        &spec,
        "Collective(op: Permute, dtype: Bf16, count: 4194304, arch: Cayman,
            topology: (rank_n: 1048576, local_rank_n: 4), channels: 2, algorithm: Ring, peer: 1)",
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .arg("compile")
            .arg(&spec)
            .arg("-o")
            .arg(&out)
            .args(extra)
            .env("NO_COLOR", "1")
            .output()
            .expect("run ccc")
    };
    let refused = run(&["--rank", "0", "--memory-budget", "256MiB"]);
    let stderr = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    // (The report is wrapped to a width, even inside a flag's name:
    // compared without blanks and frames.)
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace() && *c != '│').collect::<String>();
    let said = squeeze(&stderr);
    for flag in ["--no-verify", "--proven-by", "--memory-budget"] {
        assert!(said.contains(flag), "no {flag} in: {stderr}");
    }
    // The ranks are named already: not told to name them.
    assert!(said.contains(&squeeze("compile the ranks named with --no-verify")), "{stderr}");
    assert!(!said.contains(&squeeze("name the ranks needed (--rank R)")), "{stderr}");
    assert!(!out.exists(), "nothing is written");

    let bad = run(&["--memory-budget", "lots"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("\"lots\" is not a size"));
    // A negative size reaches the size parser, which says what is
    // accepted (clap called it an unexpected argument).
    let negative = run(&["--memory-budget", "-1"]);
    assert_eq!(negative.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&negative.stderr).contains("\"-1\" is negative; accepted: a whole number of bytes")
    );
    let ring = example("allreduce_ring.ron");
    let tiny = Command::new(BIN)
        .args(["verify".as_ref(), ring.as_os_str(), "--memory-budget".as_ref(), "1KiB".as_ref()])
        .output()
        .expect("run ccc");
    let stderr = String::from_utf8_lossy(&tiny.stderr);
    assert_eq!(tiny.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("budget") && stderr.contains("1.0 KiB"), "{stderr}");
    let roomy = Command::new(BIN)
        .args(["verify".as_ref(), ring.as_os_str(), "--memory-budget".as_ref(), "1GiB".as_ref()])
        .output()
        .expect("run ccc");
    assert_eq!(roomy.status.code(), Some(0), "{}", String::from_utf8_lossy(&roomy.stderr));
}

/// With the proof taken from a certificate, what the budget refuses
/// besides the ranks is the round-trip check's memo, and it is named so
/// (it was called "the proof over every rank", which the compile does not
/// run).
#[test]
fn a_certified_compile_beyond_the_budget_names_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let ring = example("allreduce_ring.ron");
    let compile = |out: &str, extra: &[&str]| {
        Command::new(BIN)
            .arg("compile")
            .arg(&ring)
            .args(["-q", "-o", out])
            .args(extra)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .expect("run ccc")
    };
    assert_eq!(compile("proven", &[]).status.code(), Some(0));
    let refused = compile("again", &["--proven-by", "proven", "--memory-budget", "1KiB"]);
    let stderr: String = String::from_utf8_lossy(&refused.stderr).split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("for the round-trip check of the distinct images"), "{stderr}");
    assert!(!stderr.contains("proof over every rank"), "{stderr}");
    // Proving, it is the proof's.
    let proving = compile("fresh", &["--memory-budget", "1KiB"]);
    let stderr: String = String::from_utf8_lossy(&proving.stderr).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(stderr.contains("for the proof over every rank"), "{stderr}");
    // Without a proof, the ranks alone (no "0 bytes for" anything).
    let unproven = compile("unproven", &["--no-verify", "--memory-budget", "1KiB"]);
    let words = String::from_utf8_lossy(&unproven.stderr);
    let stderr: String = words.split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ");
    assert!(stderr.contains("KiB (") && stderr.contains(" for the ranks emitted)"), "{stderr}");
    assert!(!stderr.contains("0 bytes for") && !stderr.contains("proof over"), "{stderr}");
}

/// The line and column a parse error's snippet names count characters, as
/// an editor's "go to column" does, not bytes: text of several bytes a
/// character before the error (in a comment), on a short line and on one
/// long enough to be cut, and a lone `\r` (no line break to RON, nor to an
/// editor that reads `\n` ones). (It once said column 34 for the 28th
/// character, and line 2 after a lone `\r`.)
#[test]
fn a_parse_errors_column_counts_characters() {
    let dir = tempfile::tempdir().unwrap();
    for filler in ["ééé😀", &"é".repeat(300), "a\rbé"] {
        let before = format!("(op: AllReduce, /* {filler} */ ");
        let spec = dir.path().join("uni.ron");
        std::fs::write(&spec, format!("{before}bogus: 1)")).unwrap();
        let out = Command::new(BIN).arg("check").arg(&spec).env("NO_COLOR", "1").output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let at = format!("uni.ron:1:{}]", before.chars().count() + 1);
        assert!(stderr.contains(&at), "{at} in {stderr}");
    }
}

/// A stderr that cannot be written (its reader gone, a full disk) loses
/// what ccc had to say there, not the exit code: a refusal still exits 2,
/// a compile that wrote its output 0, never a panic's 101.
#[test]
fn a_stderr_that_cannot_be_written_keeps_the_exit_code() {
    // A pipe whose reader is closed before ccc starts: every write fails.
    let closed = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        writer
    };
    let refused = Command::new(BIN)
        .args([OsStr::new("check"), example("invalid").join("missing_comma.ron").as_os_str()])
        .stdout(Stdio::null())
        .stderr(closed())
        .status()
        .unwrap();
    assert_eq!(refused.code(), Some(2));

    // A compile that finds a dead compile's work folder beside its output
    // says so on stderr, and has still written its output.
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("o");
    // A process id above Linux's largest (2^22): never alive.
    std::fs::create_dir(dir.path().join(".o.ccc-tmp-99999999")).unwrap();
    let wrote = Command::new(BIN)
        .args([OsStr::new("compile"), example("allreduce_ring.ron").as_os_str(), OsStr::new("-q"), OsStr::new("-o")])
        .arg(&folder)
        .stdout(Stdio::null())
        .stderr(closed())
        .status()
        .unwrap();
    assert_eq!(wrote.code(), Some(0));
    assert!(folder.join("manifest.json").is_file());
    assert!(!dir.path().join(".o.ccc-tmp-99999999").exists(), "the dead compile's folder is removed");
}

/// A file name holding control characters is shown escaped, on stdout and
/// on stderr, on a terminal too (where the report gives up its colour
/// rather than print them): an ESC `]` in a name printed raw set the
/// terminal's title.
#[test]
fn control_characters_in_a_path_do_not_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(example("allreduce_ring.ron")).unwrap();
    let good = dir.path().join("ok\u{1b}[31m.ron");
    std::fs::write(&good, &spec).unwrap();
    let bad = dir.path().join("bad\u{1b}]0;TITLE\u{7}.ron");
    let mesh = "Collective(op: AllGather, dtype: Bf16, count: 1048576, arch: Cayman,
        topology: (rank_n: 128, local_rank_n: 128), channels: 1, algorithm: Mesh)";
    std::fs::write(&bad, mesh).unwrap();
    let raw = |bytes: &[u8]| bytes.iter().any(|&b| b == 0x1b || b == 0x07);
    let out = Command::new(BIN).args([OsStr::new("check"), good.as_os_str()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(!raw(&out.stdout) && stdout.contains("ok\\u001b[31m.ron: a valid collective"), "{stdout}");
    let out = Command::new(BIN).args([OsStr::new("check"), bad.as_os_str()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(!raw(&out.stderr) && stderr.contains("bad\\u{1b}]0;TITLE\\u{7}.ron"), "{stderr}");
    let target = dir.path().join("out\u{1b}[2J");
    let out = Command::new(BIN)
        .args([OsStr::new("compile"), good.as_os_str(), OsStr::new("-o"), target.as_os_str(), OsStr::new("-q")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!raw(&out.stdout) && !raw(&out.stderr), "{}", String::from_utf8_lossy(&out.stdout));
    // A `--json` output stays JSON that reads back the names as they are
    // (JSON escapes C0 characters only; DEL and C1 were written `\u{7f}`).
    let (del, c1) = (dir.path().join("a\u{7f}b.ron"), dir.path().join("c\u{85}d.ron"));
    std::fs::write(&del, &spec).unwrap();
    std::fs::write(&c1, &spec).unwrap();
    let out = Command::new(BIN)
        .args([OsStr::new("diagnose"), OsStr::new("--json"), del.as_os_str(), c1.as_os_str()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stdout.contains(&0x7f) && !String::from_utf8_lossy(&out.stdout).contains('\u{85}'));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("a\u{7f}b.ron") && text.contains("c\u{85}d.ron"), "{text}");
    // A bidirectional override (U+202E) reorders what follows it on a
    // terminal, so that a name reads as another: escaped too (it was
    // printed raw).
    let bidi = dir.path().join("x\u{202e}nor.ron");
    let out = Command::new(BIN).args([OsStr::new("check"), bidi.as_os_str()]).output().unwrap();
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(!stderr.contains('\u{202e}') && stderr.contains("x\\u{202e}nor.ron"), "{stderr}");
    // clap's own refusal, which echoes the argument raw on a terminal.
    let drawn = Command::new("script")
        .args(["-qec", &format!("{BIN} \"$(printf 'check\\033]0;TITLE\\007')\""), "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("run script (util-linux)");
    let drawn = String::from_utf8_lossy(&drawn.stdout).into_owned();
    assert!(drawn.contains("unrecognized subcommand") && !drawn.contains("\u{1b}]0;"), "{drawn:?}");
    // On a terminal: the report's colour goes, the escape stays escaped.
    let drawn = Command::new("script")
        .args(["-qec", &format!("{BIN} check '{}'", bad.display()), "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("run script (util-linux)");
    let drawn = String::from_utf8_lossy(&drawn.stdout).into_owned();
    assert!(drawn.contains("bad\\u{1b}]0;TITLE\\u{7}.ron") && !drawn.contains("\u{1b}]0;"), "{drawn:?}");
}

/// Runs `ccc args` with `input` on its stdin (written from a thread, so
/// that a ccc that stops reading early does not block the test; a write
/// it refuses by closing its end is ignored).
fn run_with_stdin(args: &[&str], input: Vec<u8>) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ccc");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for ccc");
    writer.join().unwrap();
    out
}

/// `-` names standard input wherever a verb reads a file: a spec, an HLO
/// module (with `--target`), an image, so that `ccc import ... | ccc
/// compile - -o out` needs no file between them; each gives what the
/// file gives. An input past its cap is refused after reading one byte
/// more than the cap, as a file of unknown size is; an empty one is an
/// empty spec.
#[test]
fn a_dash_reads_standard_input() {
    let ring = std::fs::read(example("allreduce_ring.ron")).unwrap();
    let of = |out: &Output| (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned());
    let file = run_with_stdin(&["sign", "examples/allreduce_ring.ron"], Vec::new());
    assert_eq!(of(&run_with_stdin(&["sign", "-"], ring.clone())), of(&file));
    assert_eq!(file.status.code(), Some(0));
    // An HLO module, and the program `import` prints of it: one signature.
    let module = "tests/hlo/dp_train_step_8.compiled.hlo";
    let target = "tests/hlo/targets/cayman_8.ron";
    let text = std::fs::read(module).unwrap();
    let signed = run_with_stdin(&["sign", "-", "--target", target], text);
    let imported = run_with_stdin(&["import", module, "--target", target], Vec::new());
    assert_eq!(imported.status.code(), Some(0));
    assert_eq!(of(&run_with_stdin(&["sign", "-"], imported.stdout)), of(&signed));
    assert_eq!(signed.status.code(), Some(0), "{}", String::from_utf8_lossy(&signed.stderr));
    // compile -o from a pipe, and decode of an image from one.
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let compiled = run_with_stdin(&["compile", "-", "-o", out_dir.to_str().unwrap(), "-q"], ring.clone());
    assert_eq!(compiled.status.code(), Some(0), "{}", String::from_utf8_lossy(&compiled.stderr));
    let image = out_dir.join("rank-0/topsp-0/ctrl_spad.bin");
    let decoded = run_with_stdin(&["decode", image.to_str().unwrap()], Vec::new());
    assert_eq!(of(&run_with_stdin(&["decode", "-", "--region", "ctrl"], std::fs::read(&image).unwrap())), of(&decoded));
    // Past the spec's 16 MiB: refused, ccc having stopped reading.
    let large = run_with_stdin(&["check", "-"], vec![b' '; (16 << 20) + 1]);
    let stderr = String::from_utf8_lossy(&large.stderr);
    assert_eq!(large.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("- is too large for a spec: more than 16777216 bytes"), "{stderr}");
    let empty = run_with_stdin(&["check", "-"], Vec::new());
    assert_eq!(empty.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("cannot parse -: the spec is empty"));
    // An image from a pipe has no name to take its region from.
    let text = run_with_stdin(&["decode", "-"], b"abc".to_vec());
    let stderr = String::from_utf8_lossy(&text.stderr).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(stderr.contains("the region (CTRL SPAD) is the default for standard input"), "{stderr}");
}

/// `-` as an output is refused, not taken for a file or folder named `-`
/// (which `diagnose -` would then not read: `-` is standard input there).
#[test]
fn a_dash_is_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let ring = example("allreduce_ring.ron");
    let ring = ring.to_str().unwrap();
    let module = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hlo/dp_train_step_8.compiled.hlo");
    let target = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hlo/targets/cayman_8.ron");
    for args in [
        &["compile", ring, "-o", "-"][..],
        &["import", module, "--target", target, "-o", "-"],
        &["explain", ring, "--svg", "-"],
        &["sweep", ring, "--svg", "-"],
    ] {
        let out = Command::new(BIN).args(args).current_dir(dir.path()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("`-` names standard input, for what ccc reads"), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
}
