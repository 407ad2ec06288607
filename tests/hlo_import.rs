//! The HLO front end (`docs/hlo.md`) on the modules of `tests/hlo/`.
//!
//! - Every fixture imports, compiles with the default algorithm and
//!   verifies (`every_fixture_compiles_and_verifies`).
//! - The imported collectives match the module's collective instructions
//!   one for one — op, dtype, count, groups, peers, reduce — checked against
//!   a line scan of the module written here, independent of the importer
//!   (`collectives_match_a_line_scan`).
//! - `ccc import`'s RON parses back to the same program, and compiling the
//!   RON gives the signature compiling the HLO gives (`import_round_trips`).
//! - Malformed modules give a located error and exit 2 (`invalid_modules`).
//! - Modules that nest or repeat without bound (`tests/hlo/regressions/`:
//!   the `hlo` fuzz campaign's stack overflow, 22,000 unclosed `(` of a
//!   shape, and its neighbours) are refused with a located error, not a
//!   stack overflow or a walk of 2^30 computations
//!   (`hostile_modules_are_refused`).
//! - What each fixture imports to is snapshotted in `snapshots/hlo/`.

use ccc_compiler::hlo::{Imported, Target, compare, emit, import_module, parse_target};
use ccc_compiler::parse::parse;
use ccc_compiler::pipeline::{Options, compile};
use ccc_compiler::validate::validate;
use ccc_ir::enums::OpType;
use ccc_ir::spec::{DType, ReduceOp};
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every `.hlo` fixture that holds collectives: the generated ones and the
/// hand-written one, sorted.
fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["tests/hlo", "tests/hlo/handwritten", "tests/hlo/torch_xla"] {
        for entry in std::fs::read_dir(Path::new(ROOT).join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "hlo") && !is_unpartitioned(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    assert!(out.len() >= 19, "fixtures missing: {out:?}");
    out
}

/// The auto-sharded matmul before partitioning: no collectives yet; and
/// the partly manual shard_maps before partitioning, which ccc refuses
/// (`a_partly_manual_shard_map_is_imported_compiled`).
fn is_unpartitioned(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n == "gspmd_matmul_8.lowered.hlo" || (n.starts_with("partly_manual") && n.ends_with(".lowered.hlo"))
    })
}

/// The device count a fixture's name ends with (`..._16.compiled.hlo`).
fn devices(path: &Path) -> u32 {
    let name = path.file_name().unwrap().to_str().unwrap();
    let stem = name.split('.').next().unwrap();
    stem.rsplit('_').next().unwrap().parse().unwrap()
}

fn target_path(n: u32) -> PathBuf {
    Path::new(ROOT).join(format!("tests/hlo/targets/cayman_{n}.ron"))
}

fn target(n: u32) -> Target {
    parse_target(&std::fs::read_to_string(target_path(n)).unwrap()).unwrap()
}

fn import(path: &Path) -> (String, Imported) {
    let src = std::fs::read_to_string(path).unwrap();
    let imported =
        import_module(&src, &target(devices(path)), None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (src, imported)
}

#[test]
fn every_fixture_compiles_and_verifies() {
    for path in fixtures() {
        let (_, imported) = import(&path);
        let valid = validate(&imported.program).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        let compiled = compile(&valid, &Options::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(compiled.proof.is_some(), "{}: not verified", path.display());
    }
}

/// One collective instruction as a line scan sees it.
struct Scanned {
    name: String,
    opcode: String,
    /// (element type, elements) of each array in the result shape.
    leaves: Vec<(String, u64)>,
    line: String,
}

const OPCODES: [&str; 9] = [
    "all-reduce-start",
    "all-gather-start",
    "collective-permute-start",
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
    "collective-broadcast",
];

/// The collective instructions of a module: every line `name = shape
/// OPCODE(` with OPCODE a collective's.
fn scan(src: &str) -> Vec<Scanned> {
    let mut out = Vec::new();
    for line in src.lines() {
        let Some((lhs, rhs)) = line.split_once(" = ") else { continue };
        let Some(opcode) = OPCODES.iter().find(|op| rhs.contains(&format!(" {op}("))) else { continue };
        let shape = rhs.split(&format!(" {opcode}(")).next().unwrap();
        let name = lhs.trim().trim_start_matches("ROOT ").trim_start_matches('%').to_owned();
        out.push(Scanned { name, opcode: (*opcode).to_owned(), leaves: leaves(shape), line: line.to_owned() });
    }
    out
}

/// `(f32[2,8]{1,0}, s32[])` → [("f32", 16), ("s32", 1)].
fn leaves(shape: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for part in shape.split('[').collect::<Vec<_>>().windows(2) {
        let elem = part[0].rsplit(|c: char| !c.is_ascii_alphanumeric()).next().unwrap().to_owned();
        let dims = part[1].split(']').next().unwrap();
        let n = dims.split(',').filter(|d| !d.is_empty()).map(|d| d.parse::<u64>().unwrap()).product();
        out.push((elem, n));
    }
    out
}

/// The value of `key=` on a line, up to the next `, ` outside brackets
/// (a mesh's `, device_ids=(...)` is part of its value).
fn attr<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(&format!(" {key}="))? + key.len() + 2;
    let rest = &line[start..];
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 && !rest[i..].starts_with(", device_ids=") => return Some(&rest[..i]),
            _ => {}
        }
    }
    Some(rest)
}

/// The group size a `replica_groups` value spells (0: all devices).
fn group_size(value: &str) -> u64 {
    if let Some(rest) = value.strip_prefix("mesh[") {
        let (axes, _) = rest.split_once(']').unwrap();
        let grouped = rest.rsplit_once(' ').unwrap().1;
        let sizes: Vec<(&str, u64)> =
            axes.split(',').map(|a| a.split_once('=').unwrap()).map(|(n, s)| (n, s.parse().unwrap())).collect();
        let grouped = grouped.trim_matches(|c| c == '{' || c == '}');
        // A sub-axis `'x':(pre)size` groups `size` devices of its axis.
        let size_of = |g: &str| match g.split_once(':') {
            Some((_, sub)) => sub.rsplit_once(')').unwrap().1.parse().unwrap(),
            None => sizes.iter().find(|(n, _)| *n == g).unwrap().1,
        };
        return grouped.split(',').map(size_of).product::<u64>();
    }
    if let Some(rest) = value.strip_prefix('[') {
        return rest.split(']').next().unwrap().split(',').nth(1).unwrap().parse().unwrap();
    }
    explicit(value).first().map_or(0, |g| g.len() as u64)
}

/// `{{0,1},{2,3}}` → [[0, 1], [2, 3]].
fn explicit(value: &str) -> Vec<Vec<u32>> {
    let inner = value.strip_prefix('{').unwrap().strip_suffix('}').unwrap();
    inner
        .split("},{")
        .map(|g| g.trim_matches(|c| c == '{' || c == '}'))
        .filter(|g| !g.is_empty())
        .map(|g| g.split(',').map(|n| n.parse().unwrap()).collect())
        .collect()
}

/// The reduce of `to_apply=NAME`: the opcode of NAME's ROOT line (or,
/// where JAX wraps the root in a `Sharding` annotation, of the line it
/// wraps).
fn reduce_of(src: &str, name: &str) -> ReduceOp {
    let name = name.trim_start_matches('%');
    let mut lines = src.lines().skip_while(|l| {
        let l = l.trim_start_matches('%');
        !(l.starts_with(&format!("{name} ")) && l.trim_end().ends_with('{'))
    });
    lines.next().unwrap();
    let body: Vec<&str> = lines.take_while(|l| l.trim() != "}").collect();
    let mut root = *body.iter().find(|l| l.trim_start().starts_with("ROOT ")).unwrap();
    let opcode_of = |line: &str| {
        line.split(" = ").nth(1).unwrap().split('(').next().unwrap().rsplit(' ').next().unwrap().to_owned()
    };
    if opcode_of(root) == "custom-call" && root.contains("custom_call_target=\"Sharding\"") {
        let operand = root.split("custom-call(").nth(1).unwrap().split(')').next().unwrap().trim_start_matches('%');
        root =
            body.iter().find(|l| l.trim_start().trim_start_matches('%').starts_with(&format!("{operand} = "))).unwrap();
    }
    let opcode = opcode_of(root);
    let opcode = opcode.as_str();
    match opcode {
        "add" => ReduceOp::Add,
        "maximum" => ReduceOp::Max,
        "minimum" => ReduceOp::Min,
        other => panic!("unexpected reduction {other}"),
    }
}

fn dtype_of(elem: &str) -> DType {
    match elem {
        "f32" => DType::F32,
        "bf16" => DType::Bf16,
        "s32" => DType::I32,
        other => panic!("unexpected element type {other}"),
    }
}

#[test]
fn collectives_match_a_line_scan() {
    // The generated fixtures: their ids are global device ids (flattened
    // mode, or cross-partition with one replica), so the scanned groups are
    // the ranks. The hand-written one is checked in `handwritten_module`.
    for path in fixtures().into_iter().filter(|p| !p.to_str().unwrap().contains("handwritten")) {
        let (src, imported) = import(&path);
        let n = devices(&path);
        let scanned = scan(&src);
        let names: Vec<&str> = imported.sources.iter().map(|s| s.instruction.as_str()).collect();
        let mut dedup = names.clone();
        dedup.dedup();
        let scanned_names: Vec<&str> = scanned.iter().map(|s| s.name.as_str()).collect();
        // Program order may differ from line order (a called computation's
        // collectives come where it is called), so compare as sets too.
        let (mut a, mut b) = (dedup.clone(), scanned_names.clone());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "{}: instructions", path.display());
        for s in &scanned {
            let ours: Vec<_> = imported
                .program
                .collectives
                .iter()
                .zip(&imported.sources)
                .filter(|(_, src)| src.instruction == s.name)
                .map(|(c, _)| c)
                .collect();
            let at = format!("{}: {}", path.display(), s.name);
            let op = match s.opcode.trim_end_matches("-start") {
                "all-reduce" => OpType::AllReduce,
                "all-gather" => OpType::AllGather,
                "reduce-scatter" => OpType::ReduceScatter,
                "all-to-all" => OpType::AllToAll,
                "collective-permute" => OpType::Permute,
                "collective-broadcast" => OpType::Broadcast,
                other => panic!("{other}"),
            };
            let size = attr(&s.line, "replica_groups").map_or(0, group_size);
            let size = if size == 0 { u64::from(n) } else { size };
            let tuple_all_to_all = op == OpType::AllToAll && s.leaves.len() > 1;
            // Per dtype, in order of first appearance: the summed count.
            let mut expected: Vec<(DType, u64)> = Vec::new();
            for (elem, elements) in &s.leaves {
                let count = match op {
                    OpType::AllGather => elements / size,
                    OpType::ReduceScatter => elements * size,
                    _ => *elements,
                };
                let d = dtype_of(elem);
                match expected.iter_mut().find(|(e, _)| *e == d) {
                    Some(e) => e.1 += count,
                    None => expected.push((d, count)),
                }
            }
            let got: Vec<(DType, u64)> = ours.iter().map(|c| (c.dtype, c.count)).collect();
            assert_eq!(got, expected, "{at}: dtype and count (tuple all-to-all: {tuple_all_to_all})");
            for c in &ours {
                assert_eq!(c.op, op, "{at}: op");
                let reduce = attr(&s.line, "to_apply").map(|name| reduce_of(&src, name));
                assert_eq!(c.reduce, reduce, "{at}: reduce");
                let world: Vec<Vec<u32>> = vec![(0..n).collect()];
                let groups = c.groups.clone().unwrap_or(world);
                assert!(groups.iter().all(|g| g.len() as u64 == size), "{at}: group size");
                assert_eq!(groups.len() as u64 * size, u64::from(n), "{at}: group count");
                if let Some(value) = attr(&s.line, "replica_groups").filter(|v| v.starts_with("{{")) {
                    assert_eq!(groups, explicit(value), "{at}: groups");
                }
                let pairs = attr(&s.line, "source_target_pairs")
                    .map(|v| explicit(v).into_iter().map(|p| (p[0], p[1])).filter(|(a, b)| a != b).collect::<Vec<_>>());
                assert_eq!(c.peers, pairs, "{at}: peers");
            }
        }
    }
}

/// The hand-written module's collectives, as `docs/hlo.md` defines each id
/// mode over 2 replicas x 4 partitions (written out here by hand).
#[test]
fn handwritten_module() {
    let path = Path::new(ROOT).join("tests/hlo/handwritten/async_broadcast_8.hlo");
    let (_, imported) = import(&path);
    let got: Vec<_> = imported
        .program
        .collectives
        .iter()
        .zip(&imported.sources)
        .map(|(c, s)| (s.instruction.as_str(), c.op, c.dtype, c.reduce, c.count, c.groups.clone(), c.peers.clone()))
        .collect();
    let g = |v: &[&[u32]]| Some(v.iter().map(|g| g.to_vec()).collect::<Vec<_>>());
    let expected = vec![
        // Flattened ids, explicit groups; the async pair is one collective.
        (
            "all-reduce-start",
            OpType::AllReduce,
            DType::F32,
            Some(ReduceOp::Add),
            1024,
            g(&[&[0, 1], &[2, 3], &[4, 5], &[6, 7]]),
            None,
        ),
        // channel_id, use_global_device_ids absent (false): replicas {0} and
        // {1}, each with its 4 partitions; the input shard is 4096 / 4.
        ("all-gather-start", OpType::AllGather, DType::F32, None, 1024, g(&[&[0, 1, 2, 3], &[4, 5, 6, 7]]), None),
        // Inside async-start's computation; [2,4]<=[4,2]T(1,0) over global ids.
        (
            "reduce-scatter.9",
            OpType::ReduceScatter,
            DType::Bf16,
            Some(ReduceOp::Add),
            1024,
            g(&[&[0, 2, 4, 6], &[1, 3, 5, 7]]),
            None,
        ),
        // No channel_id, `{}`: all replicas, per partition; pred `and` is U8 Min.
        (
            "all-reduce.3",
            OpType::AllReduce,
            DType::U8,
            Some(ReduceOp::Min),
            32,
            g(&[&[0, 4], &[1, 5], &[2, 6], &[3, 7]]),
            None,
        ),
        // channel_id: partition ids, the ring in each replica.
        (
            "collective-permute-start",
            OpType::Permute,
            DType::F32,
            None,
            1024,
            None,
            Some(vec![(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4)]),
        ),
        (
            "collective-broadcast",
            OpType::Broadcast,
            DType::Bf16,
            None,
            32,
            g(&[&[0, 2], &[1, 3], &[4, 6], &[5, 7]]),
            None,
        ),
        // Tuple all-to-all: 4 operands of 32 elements, one per member.
        ("all-to-all", OpType::AllToAll, DType::Bf16, None, 128, g(&[&[0, 1, 2, 3], &[4, 5, 6, 7]]), None),
    ];
    assert_eq!(got, expected);
    assert_eq!(imported.program.collectives[5].root, Some(0));
}

/// XLA's short form of an `async-start` wrapping one collective
/// (`reduce-scatter-start`, through its `-update` to its `-done`;
/// `all-to-all-start`; `collective-broadcast-start`) is that collective,
/// as an `async-start` with `calls=` is: none is dropped (they were, until
/// stop 37: the module compiled without them and signed as if they were
/// not there). The expected values are worked out by hand from the module.
#[test]
fn async_short_forms_are_their_collectives() {
    let path = Path::new(ROOT).join("tests/hlo/handwritten/async_short_forms_8.hlo");
    let (src, imported) = import(&path);
    let got: Vec<_> = imported
        .program
        .collectives
        .iter()
        .zip(&imported.sources)
        .map(|(c, s)| (s.instruction.as_str(), s.line, c.op, c.reduce, c.count, c.groups.clone()))
        .collect();
    let g = |v: &[&[u32]]| Some(v.iter().map(|g| g.to_vec()).collect::<Vec<_>>());
    let expected = vec![
        // Flattened ids; the count is the input's 16 elements.
        ("rs-start", 15, OpType::ReduceScatter, Some(ReduceOp::Add), 16, g(&[&[0, 1, 2, 3], &[4, 5, 6, 7]])),
        // channel_id without use_global_device_ids: partition ids.
        ("a2a-start", 18, OpType::AllToAll, None, 4, g(&[&[0, 2], &[1, 3], &[4, 6], &[5, 7]])),
        // One group of every device: the world.
        ("cb-start", 20, OpType::Broadcast, None, 4, None),
    ];
    assert_eq!(got, expected);

    // A ragged all-to-all is refused in its short async form as in its
    // own; a done whose update leads to no start is refused, not skipped.
    let ragged = src.replace("all-to-all-start(", "ragged-all-to-all-start(");
    let e = import_module(&ragged, &target(8), None).expect_err("ragged");
    assert!(e.message.contains("is a `ragged-all-to-all-start`, which ccc cannot compile"), "{}", e.message);
    let orphan = src.replace(
        "reduce-scatter-update(((f32[16]{0}), f32[4]{0}) %rs-start)",
        "reduce-scatter-update(((f32[16]{0}), f32[4]{0}) %p)",
    );
    let e = import_module(&orphan, &target(8), None).expect_err("orphan");
    assert!(e.message.contains("`rs-start` has no `reduce-scatter-done`"), "{}", e.message);
}

/// `stderr` as one line of words, miette's wrapping and its `│` gutter
/// taken out.
fn flat(stderr: &str) -> String {
    stderr.split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ")
}

fn ccc(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ccc")).args(args).current_dir(ROOT).env("NO_COLOR", "1").output().unwrap()
}

#[test]
fn import_round_trips() {
    for path in fixtures() {
        let (_, imported) = import(&path);
        let rel = path.strip_prefix(ROOT).unwrap().to_str().unwrap().to_owned();
        let ron = emit::to_ron(&imported, &rel).unwrap();
        assert_eq!(parse(&ron).unwrap().program, imported.program, "{rel}");
        let name = rel.trim_start_matches("tests/hlo/").trim_end_matches(".hlo").replace('/', "__");
        let mut settings = crate::snapshot::settings("hlo");
        settings.set_omit_expression(true);
        settings.set_description(format!("ccc import {rel} --target tests/hlo/targets/cayman_{}.ron", devices(&path)));
        settings.bind(|| insta::assert_snapshot!(name, ron));
    }
    // Through the command line, for two fixtures: the RON's signature is
    // the HLO's.
    let dir = tempfile::tempdir().unwrap();
    for name in ["tests/hlo/tp_train_step_16.compiled.hlo", "tests/hlo/handwritten/async_broadcast_8.hlo"] {
        let t = target_path(devices(Path::new(name)));
        let t = t.to_str().unwrap();
        let ron = dir.path().join(format!("{}.ron", Path::new(name).file_stem().unwrap().to_str().unwrap()));
        let out = ccc(&["import", name, "--target", t, "-o", ron.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        // `-o` names a new file: an existing one (the last import's, the
        // module itself, the target) is refused untouched, exit 2.
        let written = std::fs::read(&ron).unwrap();
        for existing in [ron.to_str().unwrap(), name, t] {
            let before = std::fs::read(Path::new(ROOT).join(existing)).unwrap();
            let again = ccc(&["import", name, "--target", t, "-o", existing]);
            let stderr = String::from_utf8_lossy(&again.stderr);
            assert_eq!(again.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains("a file is there") && stderr.contains("ccc never overwrites a file"), "{stderr}");
            assert_eq!(std::fs::read(Path::new(ROOT).join(existing)).unwrap(), before, "{existing}");
        }
        assert_eq!(std::fs::read(&ron).unwrap(), written);
        let from_hlo = ccc(&["sign", name, "--target", t]);
        let from_ron = ccc(&["sign", ron.to_str().unwrap()]);
        assert_eq!(from_hlo.status.code(), Some(0), "{}", String::from_utf8_lossy(&from_hlo.stderr));
        assert_eq!(from_hlo.stdout, from_ron.stdout, "{name}");
    }
}

/// `import` writes only a program the other verbs take: what `check`
/// refuses of the imported program (here `--algorithm` naming one that
/// cannot run a permute) it refuses too, with `check`'s report, each
/// problem at its instruction, and writes nothing. It printed the RON and
/// exited 0.
#[test]
fn import_refuses_what_check_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported.ron");
    let (module, t) = ("tests/hlo/ring_ppermute_8.compiled.hlo", target_path(8));
    let t = t.to_str().unwrap();
    for args in [vec!["import", module], vec!["import", module, "-o", out.to_str().unwrap()], vec!["check", module]] {
        let run = ccc(&[&args[..], &["--target", t, "--algorithm", "Kangaring"]].concat());
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        assert!(run.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8(run.stderr).unwrap();
        let at = format!("{module}:54: `ppermute.6`");
        assert!(stderr.contains(&at) && stderr.contains("Kangaring does not serve Permute"), "{args:?}: {stderr}");
    }
    assert!(!out.exists());
}

/// A program that validates but whose choices lowering refuses
/// (`--algorithm Mesh`: the second collective takes a TOP_SP past its 108
/// mesh events) is written, as one too full for the CTRL SPAD is, with a
/// note in the RON and on stderr (each part of `--split` too); `check`
/// refuses it, naming the rank and collective `compile` names here.
#[test]
fn import_writes_a_program_lowering_refuses_with_a_note_and_check_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported.ron");
    let (module, t) = ("tests/hlo/fsdp_gather_scatter_64.compiled.hlo", target_path(64));
    let t = t.to_str().unwrap();
    let import = ccc(&["import", module, "--target", t, "--algorithm", "Mesh", "-o", out.to_str().unwrap()]);
    assert_eq!(import.status.code(), Some(0), "{}", String::from_utf8_lossy(&import.stderr));
    let said = "does not compile: collective 1: mesh events per TOP_SP is at most 108 on Cayman; this choice needs \
                126 (63 of them taken by the collectives before it)";
    let ron = std::fs::read_to_string(&out).unwrap();
    assert!(ron.contains(&format!("// Note: this program {said}")), "{ron}");
    assert!(String::from_utf8_lossy(&import.stderr).contains(&format!("written, but it {said}")));
    let check = ccc(&["check", out.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(2));
    let check = String::from_utf8(check.stderr).unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(check.contains("imported.ron: rank 0, collective 1: mesh events per TOP_SP is at most 108"), "{check}");
    let compile = ccc(&["compile", out.to_str().unwrap(), "-o", dir.path().join("out").to_str().unwrap(), "-q"]);
    assert_eq!(compile.status.code(), Some(2));
    let compile = String::from_utf8(compile.stderr).unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(compile.contains("rank 0, TOP_SP 0, collective 1, step 0: mesh events per TOP_SP"), "{compile}");
    assert!(compile.contains("this schedule needs 126"), "{compile}");
    // Cut with `--split`, the part that does not compile says so too.
    let split = dir.path().join("split.ron");
    let args = ["import", module, "--target", t, "--algorithm", "Mesh", "--split", "-o", split.to_str().unwrap()];
    let import = ccc(&args);
    assert_eq!(import.status.code(), Some(0), "{}", String::from_utf8_lossy(&import.stderr));
    let part = std::fs::read_to_string(dir.path().join("split.1.ron")).unwrap();
    assert!(part.contains(&format!("// Note: this program {said}")), "{part}");
    assert!(String::from_utf8_lossy(&import.stderr).contains(&format!("split.1.ron: written, but it {said}")));
}

/// `(file, text the error points at, words of the message)`.
const INVALID: [(&str, &str, &str); 22] = [
    ("truncated.hlo", "\n", "dimensions"),
    ("unknown_attribute_value.hlo", "maybe", "use_global_device_ids=maybe is not a boolean"),
    ("groups_unreadable.hlo", "{{0,1,2,3},{4,5,6,x}}", "is not understood"),
    ("groups_overlap.hlo", "{{0,1,2,3},{3,4,5,6}}", "lists device 3 twice"),
    ("groups_miss_devices.hlo", "{{0,1},{2,3}}", "leaves device 4 out"),
    ("to_apply_subtract.hlo", "region_0.1\n", "`region_0.1` is not a recognised reduction"),
    ("to_apply_multiply.hlo", "f32[64]{0} all-reduce", "reduces f32 with multiply"),
    ("element_type_f64.hlo", "f64[64]", "element type `f64`"),
    // Not "the line looks truncated": a computation written inline.
    ("to_apply_inline.hlo", "{\n", "`to_apply={` opens a computation written inline"),
    // XLA's verifier refuses them (a self-pair counts: it sends and
    // receives as any pair does). They were imported, to a program every
    // other verb refused.
    ("pairs_source_twice.hlo", "{{0,1},{0,2}", "source_target_pairs lists source 0 twice"),
    ("pairs_target_twice.hlo", "{{0,1},{1,1}", "source_target_pairs lists target 1 twice"),
    ("channel_id_not_integer.hlo", "none", "channel_id=none is not a 64-bit integer"),
    ("permute_in_place.hlo", "collective-permute", "is the in-place collective-permute (4 operands"),
    ("dimensions_unreadable.hlo", "{a}", "dimensions={a} is not one dimension of f32[2,12]"),
    // Read as every device, where XLA refuses it.
    ("groups_empty_global_ids.hlo", "{}", "use_global_device_ids=true with no replica groups"),
    // Its help named replica group spellings, which pairs do not take.
    ("pairs_negative_id.hlo", "{{0,-1}}", "`source_target_pairs` value `{{0,-1}}` is not understood"),
    // Both were imported as if they were not there (the first compiled
    // without the collective; the second with the operand unjudged).
    ("opcode_underscore.hlo", "all_reduce", "`all_reduce` is not an XLA opcode, but names a collective (all-reduce)"),
    ("operand_undefined.hlo", "all-reduce", "its operand `q` is not defined in computation `main`"),
    // Imported as the first operand's count sent to each member, and
    // compiled.
    (
        "all_to_all_shapes_differ.hlo",
        "(f32[3]{0}, f32[5]{0}) all-to-all",
        "operands of different shapes (f32[3] and f32[5])",
    ),
    // Imported: the first read 5120 elements of one 1024-element operand,
    // the second dropped its collective, the third took no dimension.
    (
        "result_arity.hlo",
        "(f32[1024]{0}, f32[4096]{0})",
        "its result (f32[1024], f32[4096]) holds 2 arrays, but its operands 1 array",
    ),
    ("opcode_no_dashes.hlo", "allreduce", "`allreduce` is not an XLA opcode, but names a collective (all-reduce)"),
    ("reduce_scatter_no_dimensions.hlo", "reduce-scatter", "`rs` has no `dimensions`"),
];

/// A module cut just before its ENTRY computation (its header still
/// giving the entry's layout) is refused: it was entered at its last
/// computation, a branch's, whose collectives were compiled as the
/// program's. One without that header attribute (written by hand) is
/// entered at its last computation, as XLA reads it.
#[test]
fn a_module_cut_before_its_entry_is_refused() {
    let src = std::fs::read_to_string(Path::new(ROOT).join("tests/hlo/ring_ppermute_8.compiled.hlo")).unwrap();
    let cut = &src[..src.find("\nENTRY").unwrap() + 1];
    let e = import_module(cut, &target(8), None).unwrap_err();
    assert!(e.message.contains("the module has no `ENTRY` computation, though its header gives"), "{e}");
    assert!(e.help.contains("truncated before its ENTRY"), "{e}");
    let by_hand = SMALL.replace("ENTRY %main", "%main");
    assert!(!SMALL.contains("entry_computation_layout"));
    assert_eq!(import_module(&by_hand, &target(8), None).unwrap().program.collectives.len(), 1);
}

/// A misspelt collective opcode is refused wherever it is written, in a
/// computation nothing calls too, as XLA's parser refuses any opcode it
/// does not know.
#[test]
fn a_misspelt_opcode_is_refused_in_an_uncalled_computation() {
    let entry = SMALL.find("ENTRY").unwrap();
    let uncalled = "%spare (q: f32[8]) -> f32[8] {\n  %q = f32[8]{0} parameter(0)\n  ROOT %z = f32[8]{0} \
                    allreduce(f32[8]{0} %q), replica_groups={}, to_apply=%add\n}\n\n";
    let module = format!("{}{uncalled}{}", &SMALL[..entry], &SMALL[entry..]);
    let e = import_module(&module, &target(8), None).unwrap_err();
    assert!(e.message.contains("`z`: `allreduce` is not an XLA opcode, but names a collective (all-reduce)"), "{e}");
    assert!(import_module(SMALL, &target(8), None).is_ok());
}

#[test]
fn invalid_modules() {
    let target = target(8);
    for (file, marked, words) in INVALID {
        let rel = format!("tests/hlo/invalid/{file}");
        let src = std::fs::read_to_string(Path::new(ROOT).join(&rel)).unwrap();
        let e = import_module(&src, &target, None).expect_err(file);
        assert!(e.message.contains(words), "{file}: {}", e.message);
        if file.starts_with("pairs_") {
            assert!(!e.help.contains("mesh[") && !e.help.contains("<="), "{file}: {}", e.help);
        }
        // The located position: the first place the marked text occurs on
        // an instruction line (for the truncated file, its last line's end).
        let at = if file == "truncated.hlo" {
            src.len()
        } else {
            let ops = [
                " all-reduce(",
                " collective-permute(",
                " all-to-all(",
                " all_reduce(",
                " all-gather(",
                " allreduce(",
                " reduce-scatter(",
            ];
            let op = ops.iter().find_map(|op| src.find(op));
            let line_start = op.map(|i| src[..i].rfind('\n').unwrap() + 1).unwrap();
            line_start + src[line_start..].find(marked).unwrap()
        };
        let line = src[..at].matches('\n').count() + 1;
        let col = src[..at].rsplit('\n').next().unwrap().chars().count() + 1;
        assert_eq!((e.start.line, e.start.col), (line, col), "{file}: {e}");
        let out = ccc(&["import", &rel, "--target", target_path(8).to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{file}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(&format!("{rel}:{line}:{col}")), "{file}: {stderr}");
        // An HLO module is imported, not parsed as a spec: its own header and code.
        assert!(stderr.contains(&format!("cannot import {rel}: ")), "{file}: {stderr}");
        assert!(stderr.contains("ccc::hlo") && !stderr.contains("ccc::parse"), "{file}: {stderr}");
    }
}

/// `(file of tests/hlo/regressions/, text the error's line holds, words of the message)`;
/// the walk that repeats past its budget stops at an instruction line.
const HOSTILE: [(&str, &str, &str); 5] = [
    ("unclosed_tuple_22000.hlo", "%p = ", "the tuple shape nests more than 64 deep"),
    // A fuzzer's: two byte-order marks, the error placed in the text after
    // the second (`an_error_is_placed_in_the_text_given`).
    ("two_byte_order_marks.hlo", "%x = ", "expected a computation"),
    ("tuple_depth_65.hlo", "%t = ", "the tuple shape nests more than 64 deep"),
    ("call_depth_257.hlo", "%c257 (", "`c257` is called 257 calls deep"),
    ("call_fan_out_30.hlo", " = f32[8] ", "more than 262144 instructions beyond its own"),
];

/// A fuzzer's find: a 6,920-byte module whose error quoted the rest of a
/// line, 6,744 bytes, where a message must not grow with its input
/// (`MESSAGE_PER_INPUT_BYTE` is 0). HLO errors are bounded as a spec's
/// parse errors are: long tokens cut to an excerpt, the whole after
/// `MESSAGE_MAX_BYTES`.
#[test]
fn an_import_error_does_not_quote_the_module_at_length() {
    let rel = "tests/hlo/regressions/long_unexpected_text.hlo";
    let src = std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap();
    let e = import_module(&src, &target(8), None).unwrap_err();
    let said = e.to_string();
    assert!(said.contains("unexpected"), "{said}");
    assert!(e.message.len() <= ccc_compiler::parse::MESSAGE_MAX_BYTES + 64, "{} bytes", e.message.len());
    assert!(said.len() <= ccc_backends::fuzz::MESSAGE_BASE_MAX, "{} bytes", said.len());
}

/// An import error's offset and its line and column are of the text
/// given, whatever byte-order marks lead it: one is stripped, and a
/// caller that stripped one already (the CLI, Python, the fuzz target)
/// and passed text starting with another got offsets into a text it never
/// held (a fuzzer's find: a snippet 3 bytes off).
#[test]
fn an_error_is_placed_in_the_text_given() {
    // (marks, the byte the error is at, its column): past one mark, the
    // second is the text that is not HLO.
    for (marks, at, col) in [(0, 2, 3), (1, 5, 4), (2, 3, 2)] {
        let given = format!("{}  %x = f32[8] call(", "\u{feff}".repeat(marks));
        let e = import_module(&given, &target(8), None).unwrap_err();
        assert_eq!(e.byte_range(&given).start, at, "{marks} marks: {e}");
        assert_eq!((e.start.line, e.start.col), (1, col), "{marks} marks: {e}");
    }
}

#[test]
fn hostile_modules_are_refused() {
    for (file, line_holds, words) in HOSTILE {
        let rel = format!("tests/hlo/regressions/{file}");
        let src = std::fs::read_to_string(Path::new(ROOT).join(&rel)).unwrap();
        let e = import_module(&src, &target(8), None).expect_err(file);
        assert!(e.message.contains(words), "{file}: {e}");
        let line = src.lines().nth(e.start.line - 1).unwrap_or("");
        assert!(line.contains(line_holds), "{file}: {e} is on the line `{line}`");
        let first = src.lines().position(|l| l.contains(line_holds)).unwrap() + 1;
        assert!(file == "call_fan_out_30.hlo" || e.start.line == first, "{file}: {e}");
    }
    // Deep enough to overflow a test thread's stack when read recursively:
    // a tuple 100,000 deep, a chain of 20,000 calls.
    let header = "HloModule deep\n\nENTRY %main {\n  %p = f32[8] parameter(0)\n";
    let deep = 100_000;
    let tuple = format!("{header}  %t = {}f32[8]{} tuple(%p)\n}}\n", "(".repeat(deep), ")".repeat(deep));
    let e = import_module(&tuple, &target(8), None).unwrap_err();
    assert!(e.message.contains("nests more than 64 deep"), "{e}");
    assert_eq!((e.start.line, e.start.col), (5, 8 + 64), "{e}");
    let mut chain =
        String::from("HloModule chain\n\n%c20000 (p: f32[8]) -> f32[8] {\n  ROOT %p = f32[8] parameter(0)\n}\n");
    for i in (0..20_000).rev() {
        chain.push_str(&format!("%c{i} (p: f32[8]) -> f32[8] {{\n  %p = f32[8] parameter(0)\n  ROOT %x = f32[8] call(%p), to_apply=%c{}\n}}\n", i + 1));
    }
    chain.push_str("ENTRY %main {\n  %p = f32[8] parameter(0)\n  ROOT %q = f32[8] call(%p), to_apply=%c0\n}\n");
    let e = import_module(&chain, &target(8), None).unwrap_err();
    assert!(e.message.contains("`c256` is called 257 calls deep"), "{e}");
    // The command line says the same, with the file's line and exit 2.
    let rel = "tests/hlo/regressions/call_fan_out_30.hlo";
    let out = ccc(&["check", rel, "--target", target_path(8).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("instructions beyond its own") && stderr.contains(&format!("{rel}:")), "{stderr}");
}

/// A computation that calls itself, directly or through others, is refused
/// as a cycle naming the computations on it, at its definition, however
/// many computations the module has. (With more than 256, a two-step
/// cycle used to be reported as "called 257 calls deep".)
#[test]
fn call_cycles_are_named() {
    let computation = |name: &str, calls: &str| {
        let body = if calls.is_empty() {
            "  ROOT %p = f32[8] parameter(0)\n".to_owned()
        } else {
            format!("  %p = f32[8] parameter(0)\n  ROOT %x = f32[8] call(%p), to_apply=%{calls}\n")
        };
        format!("%{name} (p: f32[8]) -> f32[8] {{\n{body}}}\n\n")
    };
    for padding in [0, 300] {
        let mut src = String::from("HloModule cycle\n\n");
        for i in 0..padding {
            src.push_str(&computation(&format!("unused{i}"), ""));
        }
        src.push_str(&computation("a", "b"));
        src.push_str(&computation("b", "a"));
        src.push_str(&computation("self", "self"));
        src.push_str("ENTRY %main {\n  %p = f32[8] parameter(0)\n  ROOT %q = f32[8] call(%p), to_apply=%a\n}\n");
        let e = import_module(&src, &target(8), None).unwrap_err();
        assert!(e.message.contains("computation `a` calls itself: `a` calls `b` calls `a`"), "{padding}: {e}");
        assert_eq!(e.help, "HLO computations do not recurse");
        let line = src.lines().nth(e.start.line - 1).unwrap();
        assert!(line.starts_with("%a ("), "{padding}: {e} is on the line `{line}`");
        let direct = src.replace("to_apply=%a\n}", "to_apply=%self\n}");
        let e = import_module(&direct, &target(8), None).unwrap_err();
        assert!(e.message.contains("computation `self` calls itself: `self` calls `self`"), "{padding}: {e}");
    }
}

/// Device counts too large to multiply are refused at the header, not
/// multiplied: `replica_count=2^32` with `num_partitions=2^32` overflowed a
/// `u64` (a panic in a debug build, a wrapped count of 0 devices in a
/// release one). The largest counts accepted multiply without overflow and
/// are refused for not being the target's rank_n.
#[test]
fn device_counts_past_u32_are_refused_at_the_header() {
    let module = |header: &str| {
        format!(
            "HloModule m, {header}\n\n%add (a: f32[], b: f32[]) -> f32[] {{\n  %a = f32[] parameter(0)\n  \
             %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}}\n\nENTRY %main {{\n  \
             %p = f32[8] parameter(0)\n  ROOT %r = f32[8] all-reduce(%p), replica_groups={{}}, to_apply=%add\n}}\n"
        )
    };
    let e =
        import_module(&module("replica_count=4294967296, num_partitions=4294967296"), &target(8), None).unwrap_err();
    assert!(e.message.contains("`replica_count=4294967296` is not a device count"), "{e}");
    assert_eq!(e.help, "a whole number from 1 to 1048576, the most ranks a world holds");
    assert_eq!((e.start.line, e.start.col), (1, 28), "{e}");
    let e =
        import_module(&module("replica_count=4294967295, num_partitions=4294967295"), &target(8), None).unwrap_err();
    assert!(
        e.message.contains("runs on 18446744065119617025 devices (4294967295 replicas x 4294967295 partitions)"),
        "{e}"
    );
    assert!(import_module(&module("replica_count=2, num_partitions=4"), &target(8), None).is_ok());
    // A count of one is singular.
    let e = import_module(&module("replica_count=1, num_partitions=4"), &target(8), None).unwrap_err();
    assert!(e.message.contains("runs on 4 devices (1 replica x 4 partitions)"), "{e}");
}

/// An id past the module's ids says what the ids are in that mode (XLA's
/// rules: replica ids without `channel_id`, global device ids with
/// `use_global_device_ids=true`), how many the module has, and which are
/// accepted: "names id 1, but its replica ids are 0..1" read as if 1 were
/// one of them.
#[test]
fn an_id_past_the_modules_ids_says_what_they_are() {
    let module = |header: &str, attrs: &str| {
        format!(
            "HloModule m, {header}\n\n%add (a: f32[], b: f32[]) -> f32[] {{\n  %a = f32[] parameter(0)\n  \
             %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}}\n\nENTRY %main {{\n  \
             %p = f32[8] parameter(0)\n  ROOT %r = f32[8] all-reduce(%p), {attrs}, to_apply=%add\n}}\n"
        )
    };
    let e = import_module(&module("num_partitions=8", "replica_groups={{0,1}}"), &target(8), None).unwrap_err();
    assert!(e.message.contains("names id 1, but its ids are replica ids (no channel_id)"), "{e}");
    assert!(e.message.contains("of which the module has replica_count 1: only id 0"), "{e}");
    assert!(e.help.contains("use_global_device_ids=true"), "{}", e.help);
    let global = "channel_id=1, replica_groups={{0,8}}, use_global_device_ids=true";
    let e = import_module(&module("num_partitions=8", global), &target(8), None).unwrap_err();
    assert!(e.message.contains("global device ids (use_global_device_ids=true)"), "{e}");
    assert!(e.message.contains("replica_count x num_partitions = 8: ids 0 to 7"), "{e}");
    assert_eq!(e.help, "accepted: ids 0 to 7");
    // A header without counts (lowered text): device ids, the target's.
    let e = import_module(
        &module("", "replica_groups={{0,8}}").replace("HloModule m, \n", "HloModule m\n"),
        &target(8),
        None,
    )
    .unwrap_err();
    assert!(e.message.contains("its ids are device ids, of which the module has 8 (no replica_count"), "{e}");
    // An all-to-all takes no use_global_device_ids: not offered to it.
    let all_to_all = module("num_partitions=8", "replica_groups={{0,1}}").replace(
        "f32[8] all-reduce(%p), replica_groups={{0,1}}, to_apply=%add",
        "f32[8] all-to-all(%p), replica_groups={{0,1}}, dimensions={0}",
    );
    let e = import_module(&all_to_all, &target(8), None).unwrap_err();
    assert!(e.message.contains("names id 1, but its ids are replica ids (no channel_id)"), "{e}");
    assert_eq!(e.help, "accepted: only id 0");
}

#[test]
fn unpartitioned_module_says_what_to_import() {
    let path = Path::new(ROOT).join("tests/hlo/gspmd_matmul_8.lowered.hlo");
    let src = std::fs::read_to_string(&path).unwrap();
    let e = import_module(&src, &target(8), None).unwrap_err();
    assert!(e.message.contains("has no collectives"), "{e}");
    assert!(e.help.contains("Compiled.as_text()"), "{e:?}");
}

/// A shard_map manual over `x` of a mesh of `x` and `y`: its lowered
/// text gives the permute `f32[4,16]`, four devices' data along `y`
/// (ccc read count 64 and said nothing), so a collective in it is
/// refused, at the collective, pointing to the compiled text; the
/// compiled module gives each device's `f32[4,4]`, 16 elements. So is
/// GSPMD's form, and a dump before optimizations, whose header names the
/// device count; a second (maximal) mesh in the header, as
/// `jax.debug.callback` adds, does not hide it. Regions that are manual
/// over every axis of more than one device import: nested shard_maps
/// (outer `x`, inner `y`), a partly manual one holding no collective, an
/// axis of one device left out (its reduction wrapped in a `Sharding`
/// annotation, once refused as no reduction).
#[test]
fn a_partly_manual_shard_map_is_imported_compiled() {
    // The line of the first collective walked, and the refusal there.
    let refused = |rel: &str, first: &str, says: &str| {
        let src = std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap();
        let e = import_module(&src, &target(8), None).unwrap_err();
        assert!(e.message.contains(says), "{rel}: {e}");
        assert!(e.message.contains("its shape is still global along the others"), "{rel}: {e}");
        assert!(e.help.contains("compiled module"), "{rel}: {e:?}");
        let at = src.find(&format!(" {first} = ")).unwrap();
        assert_eq!(e.start.line, src[..at].matches('\n').count() + 1, "{rel}: {e}");
        src
    };
    let rel = "tests/hlo/partly_manual_8.lowered.hlo";
    let src = refused(
        rel,
        "psum.5",
        "`psum.5` runs in a shard_map (`shard_map.11`) manual over `x` but not over mesh axis `y`",
    );
    let out = ccc(&["check", rel, "--target", target_path(8).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    // A dump before optimizations names the device count: refused alike.
    let dumped = src.replacen("HloModule jit_inner, ", "HloModule jit_inner, num_partitions=8, ", 1);
    assert_ne!(dumped, src);
    let e = import_module(&dumped, &target(8), None).unwrap_err();
    assert!(e.message.contains("manual over `x` but not over mesh axis `y`"), "{e}");
    refused(
        "tests/hlo/partly_manual_callback_8.lowered.hlo",
        "ppermute.1",
        "manual over `x` but not over mesh axis `y`",
    );

    // GSPMD's form of it (Shardy off): a subgroup of the
    // `SPMDFullToShardShape` call's sharding is manual, the rest
    // replicated.
    let src = refused(
        "tests/hlo/partly_manual_gspmd_8.lowered.hlo",
        "ppermute.1",
        "manual over some mesh axes and not all (`SPMDFullToShardShape` with sharding `{devices=[1,1,2,4]<=[8] \
         last_tile_dims={manual, replicated}}`)",
    );
    // Tile counts past u64 are refused as partly manual, not multiplied
    // into an overflow.
    let huge = src.replace(
        "devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}",
        "devices=[18446744073709551615,3,2]<=[8] last_tile_dims={manual}",
    );
    assert_ne!(huge, src);
    let e = import_module(&huge, &target(8), None).unwrap_err();
    assert!(e.message.contains("manual over some mesh axes and not all"), "{e}");

    for (rel, op) in [
        ("partly_manual_8.compiled.hlo", OpType::Permute),
        ("partly_manual_8.compiled.hlo", OpType::AllReduce),
        ("nested_manual_8.lowered.hlo", OpType::AllReduce),
        ("nested_manual_gspmd_8.lowered.hlo", OpType::AllReduce),
        ("manual_then_partly_8.lowered.hlo", OpType::AllReduce),
        ("manual_size_one_axis_8.lowered.hlo", OpType::AllReduce),
    ] {
        let (_, imported) = import(&Path::new(ROOT).join("tests/hlo").join(rel));
        let c = imported.program.collectives.iter().find(|c| c.op == op).unwrap();
        assert_eq!(c.count, 16, "{rel}: one device's f32[4,4] (f32[1,16] on 8 x 1)");
    }

    // `diagnose` of modules refused on import says each, then how many
    // (it stopped at the first).
    let t = target_path(8);
    let (a, b) = ("tests/hlo/partly_manual_8.lowered.hlo", "tests/hlo/partly_manual_gspmd_8.lowered.hlo");
    let out = ccc(&["diagnose", a, b, "--target", t.to_str().unwrap()]);
    let stderr = flat(&String::from_utf8(out.stderr).unwrap());
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot import {a}")) && stderr.contains(&format!("cannot import {b}")),
        "{stderr}"
    );
    assert!(stderr.contains("2 of the 2 inputs were refused"), "{stderr}");
}

/// Two modules of one program whose collective `y` changed its element
/// type alone: `y` is paired by name and its types said to differ (it was
/// paired by name and type, so it read as one missing and one extra).
#[test]
fn diagnose_pairs_a_collective_whose_type_changed() {
    let dir = tempfile::tempdir().unwrap();
    let module = |y_type: &str| {
        let (p, add) = if y_type == "s32" { ("%q", "%addi") } else { ("%p", "%add") };
        format!(
            "HloModule m, num_partitions=8\n\n%add (a: f32[], b: f32[]) -> f32[] {{\n  %a = f32[] parameter(0)\n  \
             %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}}\n\n%addi (c: s32[], d: s32[]) -> s32[] {{\n  \
             %c = s32[] parameter(0)\n  %d = s32[] parameter(1)\n  ROOT %t = s32[] add(%c, %d)\n}}\n\n\
             ENTRY %main (p: f32[16], q: s32[16]) -> f32[16] {{\n  %p = f32[16]{{0}} parameter(0)\n  \
             %q = s32[16]{{0}} parameter(1)\n  \
             %x = f32[16]{{0}} all-reduce(%p), channel_id=1, replica_groups={{{{0,1,2,3}},{{4,5,6,7}}}}, use_global_device_ids=true, to_apply=%add\n  \
             %y = {y_type}[16]{{0}} all-reduce({p}), channel_id=2, replica_groups={{{{0,1}},{{2,3}},{{4,5}},{{6,7}}}}, use_global_device_ids=true, to_apply={add}\n  \
             ROOT %z = f32[16]{{0}} all-reduce(%p), channel_id=3, replica_groups={{{{0,1,2,3,4,5,6,7}}}}, use_global_device_ids=true, to_apply=%add\n}}\n"
        )
    };
    let (a, b) = (dir.path().join("f32.hlo"), dir.path().join("s32.hlo"));
    std::fs::write(&a, module("f32")).unwrap();
    std::fs::write(&b, module("s32")).unwrap();
    let t = target_path(8);
    let out = ccc(&["diagnose", a.to_str().unwrap(), b.to_str().unwrap(), "--target", t.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("  ")).collect();
    assert_eq!(lines, ["y: element types differ (F32 against I32)"], "{stdout}");
}

#[test]
fn diagnose_names_the_differing_instruction() {
    let dir = tempfile::tempdir().unwrap();
    let a = "tests/hlo/mixed_dtypes_8.lowered.hlo";
    let src = std::fs::read_to_string(Path::new(ROOT).join(a)).unwrap();
    let b = dir.path().join("rank1.hlo");
    let changed = src.replacen("replica_groups={{0,1,2,3,4,5,6,7}}", "replica_groups={{0,1,2,3},{4,5,6,7}}", 1);
    std::fs::write(&b, changed).unwrap();
    let t = target_path(8);
    let out = ccc(&["diagnose", a, b.to_str().unwrap(), "--target", t.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("psum.20: replica_groups differ"), "{stdout}");
    assert!(stdout.contains("the ranks lowered different programs"), "{stdout}");
    let same = ccc(&["diagnose", a, a, "--target", t.to_str().unwrap()]);
    assert_eq!(same.status.code(), Some(0), "{}", String::from_utf8_lossy(&same.stdout));

    // A module with a collective more: counted with its noun, the extra
    // one named as an instruction (HLO names may be op names). Its F32
    // all-reduce is paired with the other's, whose shape alone differs,
    // not with the I32 one that differs in type and shape too.
    let one = "tests/hlo/dp_train_step_8.compiled.hlo";
    let out = ccc(&["diagnose", one, "tests/hlo/mixed_dtypes_8.compiled.hlo", "--target", t.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("  ")).collect();
    assert_eq!(
        lines,
        [
            "psum.31: only the second module has this collective (AllReduce I32 x 16, groups all 8 ranks), its \
             collective 0 (1 collective against 2)",
            "all-reduce.4 / all-reduce: shapes (elements per rank) differ (10369 against 224)"
        ],
        "{stdout}"
    );

    // Collectives are aligned, not paired by position: one left out in
    // the middle is the one named (it named the last as missing, and
    // paired each after it with its neighbour); the same collectives in
    // another order are named with both positions, and the cause says so.
    let module = |body: &[&str]| {
        let mut m = String::from(
            "HloModule m, num_partitions=8\n\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  \
             %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n\nENTRY %main (p: f32[16]) -> f32[16] {\n  \
             %p = f32[16]{0} parameter(0)\n",
        );
        for line in body {
            m.push_str(line);
        }
        m + "}\n"
    };
    let x = "  %x = f32[16]{0} all-reduce(%p), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=%add\n";
    let y = "  %y = f32[16]{0} all-reduce(%p), channel_id=2, replica_groups={{0,1},{2,3},{4,5},{6,7}}, use_global_device_ids=true, to_apply=%add\n";
    let z = "  ROOT %z = f32[16]{0} all-reduce(%p), channel_id=3, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=%add\n";
    let write = |name: &str, body: &[&str]| {
        let path = dir.path().join(name);
        std::fs::write(&path, module(body)).unwrap();
        path.to_str().unwrap().to_owned()
    };
    // The difference lines of `diagnose a b` (exit 1), and its cause.
    let differences = |a: &str, b: &str| {
        let out = ccc(&["diagnose", a, b, "--target", t.to_str().unwrap()]);
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        let lines: Vec<String> = stdout.lines().filter_map(|l| l.strip_prefix("  ")).map(str::to_owned).collect();
        let cause = stdout.lines().find_map(|l| l.strip_prefix("likely cause: ")).unwrap_or_default().to_owned();
        (lines, cause)
    };
    let (xyz, xz, yxz) = (write("xyz.hlo", &[x, y, z]), write("xz.hlo", &[x, z]), write("yxz.hlo", &[y, x, z]));
    let missing = "y: only the first module has this collective (AllReduce F32 x 16, groups [[0, 1], [2, 3], [4, 5], [6, \
                   7]]), its collective 1 (3 collectives against 2)";
    assert_eq!(differences(&xyz, &xz), (vec![missing.to_owned()], compare::CAUSE.to_owned()));
    // Two swapped: one moved, named once.
    let swapped = "x: the same collective, collective 0 in the first module and collective 1 in the second";
    assert_eq!(differences(&xyz, &yxz), (vec![swapped.to_owned()], compare::REORDERED.to_owned()));
    // The first of four moved to the end: one line, not one per
    // collective it shifted.
    let w = "  %w = f32[16]{0} all-reduce(%p), channel_id=4, replica_groups={{0,2,4,6},{1,3,5,7}}, use_global_device_ids=true, to_apply=%add\n";
    let (z_inner, w_root) = (z.replace("ROOT ", ""), w.replace("  %w", "  ROOT %w"));
    let (wxyz, xyzw) = (write("wxyz.hlo", &[w, x, y, z]), write("xyzw.hlo", &[x, y, &z_inner, &w_root]));
    let rotated = "w: the same collective, collective 0 in the first module and collective 3 in the second";
    assert_eq!(differences(&wxyz, &xyzw), (vec![rotated.to_owned()], compare::REORDERED.to_owned()));
    // The two ends swapped, which no single move explains: both named as
    // moved, the one that stayed not (they read as two changed pairs,
    // and the cause as different programs).
    let (x_root, z_first) = (x.replace("  %x", "  ROOT %x"), z.replace("ROOT ", ""));
    let zyx = write("zyx.hlo", &[&z_first, y, &x_root]);
    let ends = [
        "x: the same collective, collective 0 in the first module and collective 2 in the second",
        "z: the same collective, collective 2 in the first module and collective 0 in the second",
    ];
    assert_eq!(differences(&xyz, &zyx), (ends.map(str::to_owned).to_vec(), compare::REORDERED.to_owned()));
    // Two moved among four (w x y z against z w y x): the longest run kept
    // in order (w y) stays.
    let (w_first, y_mid) = (w.to_owned(), y.to_owned());
    let zwyx = write("zwyx.hlo", &[&z_first, &w_first, &y_mid, &x_root]);
    let (lines, cause) = differences(&wxyz, &zwyx);
    assert_eq!(cause, compare::REORDERED);
    assert_eq!(
        lines,
        [
            "x: the same collective, collective 1 in the first module and collective 3 in the second",
            "z: the same collective, collective 3 in the first module and collective 0 in the second",
        ]
    );

    // One moved and changed (the batch grew, and XLA scheduled it
    // elsewhere): paired by name, named as both, not as one missing and
    // one extra collective.
    let x_wide = x.replace("{{0,1,2,3},{4,5,6,7}}", "{{0,1,2,3,4,5,6,7}}");
    let xwyz = write("xwyz.hlo", &[&x_wide, w, y, z]);
    let (lines, cause) = differences(&wxyz, &xwyz);
    assert_eq!(cause, compare::CAUSE);
    assert!(lines.iter().any(|l| l.starts_with("x: replica_groups differ")), "{lines:?}");
    assert_eq!(lines.iter().filter(|l| l.contains("in the first module and collective")).count(), 1, "{lines:?}");
    assert!(!lines.iter().any(|l| l.contains("only the")), "{lines:?}");
    // With `--json`, a collective moved and changed is marked moved, as
    // a move alone is: x, changed, to the end (w y z stay in order).
    let x_root = x_wide.replace("  %x", "  ROOT %x");
    let wyzx = write("wyzx.hlo", &[w, y, &z_inner, &x_root]);
    let out = ccc(&["diagnose", &wxyz, &wyzx, "--target", t.to_str().unwrap(), "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = json["hlo"]["groups"][0]["differences"].as_array().unwrap();
    let moved: Vec<&serde_json::Value> = listed.iter().filter(|d| d["moved"] == true).collect();
    assert_eq!(moved.len(), 1, "{json}");
    assert!(moved[0]["what"].as_str().unwrap().starts_with("moved and changed: collective"), "{json}");

    // The report of `diagnose` on fixtures (exit 1).
    let mismatch_with = |inputs: &[&str]| {
        let out = ccc(&[&["diagnose"][..], inputs, &["--target", t.to_str().unwrap()]].concat());
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        stdout
    };
    let mismatch = |a: &str, b: &str| mismatch_with(&[a, b]);
    // Modules compiled for different device counts cannot share the one
    // target: that is the report (exit 1), not a refusal of the second.
    let (dp, tp) = ("tests/hlo/dp_train_step_8.compiled.hlo", "tests/hlo/tp_train_step_16.compiled.hlo");
    let stdout = mismatch(dp, tp);
    assert!(stdout.contains(&format!("{dp}: 8 devices\n{tp}: 16 devices\n").replace("tests/", "  tests/")), "{stdout}");
    assert!(stdout.contains(&format!("likely cause: {}", compare::DEVICE_COUNTS)), "{stdout}");
    // The same beside a spec, the modules named alone (it was a refusal
    // telling the user to give the one target the second's device count).
    let spec = dir.path().join("dp8.ron");
    let out = ccc(&["import", dp, "--target", t.to_str().unwrap(), "-o", spec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = mismatch_with(&[dp, tp, spec.to_str().unwrap()]);
    assert!(stdout.contains(&format!("{dp}: 8 devices\n{tp}: 16 devices\n").replace("tests/", "  tests/")), "{stdout}");
    assert!(!stdout.contains("dp8.ron"), "{stdout}");
    // Lowered text against compiled text of one program: the passes
    // between explain what differs (it was blamed on different programs).
    let stdout = mismatch("tests/hlo/mixed_dtypes_8.lowered.hlo", "tests/hlo/mixed_dtypes_8.compiled.hlo");
    assert!(stdout.contains(&format!("likely cause: {}", compare::STAGES)), "{stdout}");

    // An equal collective inserted beside another: the inserted one is
    // named (by its instruction name), not its twin after it.
    let x2 = "  %x2 = f32[16]{0} all-reduce(%p), channel_id=5, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=%add\n";
    let xxyz = write("xxyz.hlo", &[x2, x, y, z]);
    let inserted = "x2: only the second module has this collective (AllReduce F32 x 16, groups [[0, 1, 2, 3], [4, 5, 6, \
                    7]]), its collective 0 (3 collectives against 4)";
    assert_eq!(differences(&xyz, &xxyz), (vec![inserted.to_owned()], compare::CAUSE.to_owned()));
    // `--json` carries the same under `hlo`: the reference modules, each
    // other group's modules, differences and cause (it compared the
    // signatures alone, naming no instruction).
    let out = ccc(&["diagnose", &xyz, &xyz, &xz, &yxz, "--json", "--target", t.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["hlo"]["reference"], serde_json::json!([xyz, xyz]));
    let groups = report["hlo"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{report}");
    assert_eq!(groups[0]["modules"], serde_json::json!([xz]));
    assert_eq!(groups[0]["differences"][0]["instruction"], "y");
    assert_eq!(groups[0]["cause"], compare::CAUSE);
    assert_eq!(
        (groups[1]["differences"][0]["moved"].as_bool(), groups[1]["cause"].as_str()),
        (Some(true), Some(compare::REORDERED))
    );
    assert!(report["all_match"] == false && report["groups"].is_array(), "the signature report stays: {report}");
    // Modules whose collectives agree have no `hlo`.
    let out = ccc(&["diagnose", &xyz, &xyz, "--json", "--target", t.to_str().unwrap()]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.get("hlo").is_none(), "{report}");
    // Groups that differ in their causes are each told theirs.
    let out = ccc(&["diagnose", &xyz, &xyz, &xz, &yxz, "--target", t.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let causes: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("likely cause: ")).collect();
    assert_eq!(causes, [compare::CAUSE, compare::REORDERED], "{stdout}");
    let at = |needle: &str| stdout.find(needle).unwrap_or_else(|| panic!("{needle} in {stdout}"));
    assert!(at(&format!("and {xz} differ")) < at(compare::CAUSE), "{stdout}");
    assert!(at(compare::CAUSE) < at(&format!("and {yxz} differ")), "{stdout}");
    // The same replica groups or permute pairs listed in another order
    // sign the same and are the same collectives: a match, as `--json` and
    // `sign` say, not a difference in the prose.
    let reordered = write("zyx_groups.hlo", &[&x.replace("{{0,1,2,3},{4,5,6,7}}", "{{4,5,6,7},{0,1,2,3}}"), y, z]);
    let out = ccc(&["diagnose", &xyz, &reordered, "--target", t.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let ring = std::fs::read_to_string(Path::new(ROOT).join("tests/hlo/ring_ppermute_8.lowered.hlo")).unwrap();
    let pairs = "source_target_pairs={{0,1},{1,2},{2,3},{3,4},{4,5},{5,6},{6,7},{7,0}}";
    let rotated = dir.path().join("rotated.hlo");
    std::fs::write(
        &rotated,
        ring.replacen(pairs, "source_target_pairs={{7,0},{0,1},{1,2},{2,3},{3,4},{4,5},{5,6},{6,7}}", 1),
    )
    .unwrap();
    let ring_path = Path::new(ROOT).join("tests/hlo/ring_ppermute_8.lowered.hlo");
    let out =
        ccc(&["diagnose", ring_path.to_str().unwrap(), rotated.to_str().unwrap(), "--target", t.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));

    // With more inputs, the modules that agree are the reference: the odd
    // one is named, even when it comes first, and each other group once.
    let c = dir.path().join("rank2.hlo");
    std::fs::copy(&b, &c).unwrap();
    let (b, c) = (b.to_str().unwrap(), c.to_str().unwrap());
    let out = ccc(&["diagnose", a, b, c, "--target", t.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.starts_with(&format!("2 of 3 modules agree: {b}, {c}\n")), "{stdout}");
    assert!(stdout.contains(&format!("{b} and {a} differ in their HLO collectives:")), "{stdout}");
    assert_eq!(stdout.matches("differ in their HLO collectives").count(), 1, "{stdout}");
    let out = ccc(&["diagnose", b, a, a, c, a, "--target", t.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with(&format!("3 of 5 modules agree: {a}, {a}, {a}\n")), "{stdout}");
    assert!(stdout.contains(&format!("{a} and {b} (as do {c}) differ in their HLO collectives:")), "{stdout}");
    // A tie is said to be one; so is a set in which no two agree.
    let out = ccc(&["diagnose", b, a, a, c, "--target", t.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with(&format!(
            "no majority: 2 groups of 2 modules agree among themselves; compared with the first: {b}, {c}\n"
        )),
        "{stdout}"
    );
    let d = dir.path().join("rank3.hlo");
    std::fs::write(
        &d,
        src.replacen("replica_groups={{0,1,2,3,4,5,6,7}}", "replica_groups={{0,1},{2,3},{4,5},{6,7}}", 1),
    )
    .unwrap();
    let out = ccc(&["diagnose", a, b, d.to_str().unwrap(), "--target", t.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("no two of the 3 modules agree; each is compared with the first\n"), "{stdout}");
    assert_eq!(stdout.matches("differ in their HLO collectives").count(), 2, "{stdout}");
}

#[test]
fn hlo_without_target_is_refused() {
    let out = ccc(&["check", "tests/hlo/ring_ppermute_8.lowered.hlo"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("needs --target"));
}

/// The target's choices: `devices` renames devices to ranks; `--algorithm`
/// beats `algorithms[op]`, which beats `algorithm`, which beats the default
/// (Auto); a header's device count must be the target's `rank_n`.
#[test]
fn target_choices() {
    use ccc_ir::spec::Algorithm;
    let path = Path::new(ROOT).join("tests/hlo/ring_ppermute_8.lowered.hlo");
    let src = std::fs::read_to_string(&path).unwrap();
    let reversed = "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8), devices: {0: 7, 1: 6, 2: 5, 3: 4, 4: 3, 5: 2, 6: 1, 7: 0})";
    let imported = import_module(&src, &parse_target(reversed).unwrap(), None).unwrap();
    // Device d sends to d + 1: rank 7 - d sends to rank 6 - d.
    let peers = imported.program.collectives[0].peers.clone().unwrap();
    assert_eq!(peers[0], (7, 6));
    assert_eq!(peers[7], (0, 7));

    let moe = std::fs::read_to_string(Path::new(ROOT).join("tests/hlo/moe_all_to_all_16.lowered.hlo")).unwrap();
    let t =
        |extra: &str| parse_target(&format!("(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8){extra})")).unwrap();
    let alg = |target: &Target, choice: Option<&Algorithm>| {
        import_module(&moe, target, choice).unwrap().program.collectives[0].algorithm.clone()
    };
    assert_eq!(alg(&t(""), None), Algorithm::Auto);
    assert_eq!(alg(&t(", algorithm: Mesh"), None), Algorithm::Mesh);
    assert_eq!(alg(&t(", algorithm: Ring, algorithms: {AllToAll: Mesh}"), None), Algorithm::Mesh);
    assert_eq!(alg(&t(", algorithms: {AllToAll: Mesh}"), Some(&Algorithm::Ring)), Algorithm::Ring);

    let dp = std::fs::read_to_string(Path::new(ROOT).join("tests/hlo/dp_train_step_8.compiled.hlo")).unwrap();
    let e = import_module(&dp, &target(16), None).unwrap_err();
    assert!(e.message.contains("runs on 8 devices"), "{e}");
    assert_eq!(e.start.line, 1, "{e}");
    // use_global_device_ids=true without a channel_id: XLA refuses it too.
    let no_channel = src.replacen(", channel_id=1, source_target_pairs", ", source_target_pairs", 1);
    assert!(import_module(&no_channel, &target(8), None).is_ok(), "cross-replica permute");
    let mixed = std::fs::read_to_string(Path::new(ROOT).join("tests/hlo/mixed_dtypes_8.lowered.hlo")).unwrap();
    let e = import_module(&mixed.replacen("channel_id=1, ", "", 1), &target(8), None).unwrap_err();
    assert!(e.message.contains("use_global_device_ids=true needs a channel_id"), "{e}");
    // A collective ccc cannot express is refused, not dropped.
    let e = import_module(&mixed.replacen(" all-reduce(", " ragged-all-to-all(", 1), &target(8), None).unwrap_err();
    assert!(e.message.contains("ragged-all-to-all"), "{e}");
    // So is XLA's collective-reduce (it was dropped without a word).
    let e = import_module(&mixed.replacen(" all-reduce(", " collective-reduce(", 1), &target(8), None).unwrap_err();
    assert!(e.message.contains("is a `collective-reduce`, which ccc cannot compile"), "{e}");
    // A `devices` map that is not one to one is the target's problem,
    // named at its field, with the device or rank at fault.
    let bad = "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8),\n devices: {0: 1, 1: 1})";
    let e = parse_target(bad).unwrap_err();
    assert!(e.message.contains("devices 0 and 1 are both given rank 1"), "{e}");
    assert_eq!((e.start.line, e.start.col), (2, 2), "{e}");
    // Named at the field itself, not at a comment that mentions devices.
    let commented = format!("// 8 devices, one node\n{bad}");
    assert_eq!(parse_target(&commented).unwrap_err().start.line, 3);
    let missing = "(arch: Cayman, topology: (rank_n: 4, local_rank_n: 4), devices: {0: 0, 1: 1, 3: 2})";
    assert!(parse_target(missing).unwrap_err().message.contains("device 2 is not listed"));
    let beyond = "(arch: Cayman, topology: (rank_n: 2, local_rank_n: 2), devices: {0: 0, 1: 5})";
    assert!(parse_target(beyond).unwrap_err().message.contains("device 1 is given rank 5"));
    // A target made in code is checked at import too.
    let mut made = target(8);
    made.devices = Some([(0, 1), (1, 1)].into_iter().collect());
    assert!(import_module(&src, &made, None).unwrap_err().message.contains("both given rank 1"));
}

/// `check`, `verify`, `graph` and `compile` take an HLO module with
/// `--target` (and `--algorithm`), whatever its extension.
#[test]
fn every_verb_takes_hlo() {
    let dir = tempfile::tempdir().unwrap();
    // Recognised by content: the same module under a `.ron` name.
    let module = dir.path().join("moe.ron");
    std::fs::copy(Path::new(ROOT).join("tests/hlo/moe_all_to_all_16.compiled.hlo"), &module).unwrap();
    let module = module.to_str().unwrap();
    let t = target_path(16);
    let t = t.to_str().unwrap();
    let out_dir = dir.path().join("out");
    let runs: [&[&str]; 4] = [
        &["check", module, "--target", t, "--algorithm", "Mesh"],
        &["verify", "-q", module, "--target", t],
        &["graph", module, "--target", t, "--rank", "0"],
        &["compile", "-q", module, "--target", t, "-o", out_dir.to_str().unwrap()],
    ];
    for args in runs {
        let out = ccc(args);
        assert_eq!(out.status.code(), Some(0), "ccc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let check = String::from_utf8(ccc(runs[0]).stdout).unwrap();
    assert!(check.contains("collective 1: AllToAll F32 x 2048, 2 groups of 8, 1 channel, Mesh"), "{check}");
    assert!(out_dir.join("manifest.json").is_file());
}

/// `--algorithm` reads an algorithm as a spec writes it: `Hier((...))`
/// legs without `Some`, per-leg `Auto` included.
#[test]
fn algorithm_flag_takes_hier_as_a_spec_writes_it() {
    let module = "tests/hlo/dp_train_step_8.compiled.hlo";
    let t = target_path(8);
    let t = t.to_str().unwrap();
    let hier = "Hier((intra_reduce_scatter: Ring, inter_all_reduce: Auto, intra_all_gather: Kangaring))";
    let out = ccc(&["check", module, "--target", t, "--algorithm", hier]);
    let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("intra_reduce_scatter Ring") && stdout.contains("intra_all_gather Kangaring"), "{stdout}");
    // One it cannot read is said as a spec's `algorithm` is: the name
    // meant, the leg's path, `Auto(X)` named (it said RON's `Non-whitespace
    // trailing characters`, and Rust's type names).
    for (given, says, help) in [
        ("ring", "unexpected name `ring` for --algorithm,", "did you mean `Ring`?"),
        ("", "--algorithm is empty", "--algorithm takes one algorithm as a spec's `algorithm:` writes it"),
        (
            "Hier((inter_all_reduce: Rnig))",
            "unexpected name `Rnig` for `Hier.inter_all_reduce`",
            "did you mean `Ring`?",
        ),
        ("Auto(Ring)", "`Auto` takes no choice in --algorithm", "`Auto(X)` is how a signature or manifest shows"),
        ("Ring Mesh", "non-whitespace trailing characters", "accepted: Ring, Mesh, Kangaring,"),
    ] {
        let out = ccc(&["explain", module, "--target", t, "--algorithm", given, "--json"]);
        assert_eq!(out.status.code(), Some(2), "{given}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let error = &json["error"];
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("--algorithm {given}: {says}")), "{given}: {error}");
        assert!(error["help"].as_str().unwrap().contains(help), "{given}: {error}");
        assert!(!message.contains("AlgType") && !message.contains("enum"), "{given}: {error}");
        assert_eq!(error["code"], "ccc::algorithm", "{given}: {error}");
    }
}

/// A bad field of the target file, copied into every imported collective,
/// is the target's problem: said once, under the target's name and its
/// own field path, not once a collective under the module's; a
/// collective's own problem is named at its HLO instruction.
#[test]
fn a_target_problem_is_named_once_in_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("bad.ron");
    std::fs::write(&t, "(arch: Cayman, topology: (rank_n: 32, local_rank_n: 16), model: (hops_max: 0))").unwrap();
    let module = "tests/hlo/fsdp_train_step_32.compiled.hlo";
    let out = ccc(&["check", module, "--target", t.to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("(the target of {module})")), "{stderr}");
    assert!(stderr.contains("bad.ron"), "{stderr}");
    assert_eq!(stderr.matches("model.hops_max: 0 is out of range").count(), 1, "{stderr}");
    assert!(!stderr.contains("collectives["), "{stderr}");
    // The collectives' own problems follow, by the module's paths.
    let t16 = dir.path().join("bad16.ron");
    std::fs::write(&t16, "(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8), model: (hops_max: 0))").unwrap();
    let moe = "tests/hlo/moe_all_to_all_16.compiled.hlo";
    let out = ccc(&["check", moe, "--target", t16.to_str().unwrap(), "--algorithm", "Kangaring"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches("model.hops_max").count(), 1, "{stderr}");
    // ... at the HLO instruction each came from, with its path in the
    // imported program.
    let at = format!("{moe}:253: `all-to-all` (collectives[0].algorithm):");
    assert!(stderr.contains(&at), "{stderr}");
    // Without a target problem, the same.
    let t = target_path(16);
    let out = ccc(&["check", moe, "--target", t.to_str().unwrap(), "--algorithm", "Kangaring"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains(&format!("{moe} is not a valid spec: 2 problems")) && stderr.contains(&at), "{stderr}");
}

/// `diagnose` of several modules says a problem of their one target once,
/// not once a module (it said it for each, then "2 of the 2 inputs were
/// refused"), whether the target does not parse or holds a value no
/// collective takes, and whether a spec stands beside the modules.
#[test]
fn diagnose_says_a_target_problem_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = ("tests/hlo/dp_train_step_8.compiled.hlo", "tests/hlo/gspmd_matmul_8.compiled.hlo");
    let spec = dir.path().join("dp8.ron");
    let good = target_path(8);
    let out = ccc(&["import", a, "--target", good.to_str().unwrap(), "-o", spec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for (text, says) in
        [("channels: 99", "channels: 99 is out of range"), ("chanels: 2", "unexpected field named `chanels`")]
    {
        let t = dir.path().join("t.ron");
        std::fs::write(&t, format!("(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8), {text})")).unwrap();
        for inputs in [&[a, b][..], &[a, b, spec.to_str().unwrap()]] {
            let out = ccc(&[&["diagnose"][..], inputs, &["--target", t.to_str().unwrap()]].concat());
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert_eq!(stderr.matches(says).count(), 1, "{text}, {} inputs: {stderr}", inputs.len());
            assert!(!stderr.contains("inputs were refused"), "{stderr}");
        }
    }
}

/// A target file that is not RON of the target schema is shown in a
/// snippet at its line and column, as a spec is, with what a target reads
/// as the help; `Auto(X)` copied from a signature is named as such.
#[test]
fn a_target_that_does_not_parse_is_shown_where() {
    let dir = tempfile::tempdir().unwrap();
    let module = "tests/hlo/moe_all_to_all_16.compiled.hlo";
    for (text, says, at) in [
        ("(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8),\n foo: 1)", "unexpected field named `foo`", "2:2"),
        // A byte-order mark is no column.
        (
            "\u{feff}(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8), foo: 1)",
            "unexpected field named `foo`",
            "1:57",
        ),
        (
            "(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8), algorithm: Auto(Mesh))",
            "`Auto` takes no choice in the target",
            "1:72",
        ),
        (
            "(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8), algorithm: Auto /* x */ (Mesh))",
            "`Auto` takes no choice in the target",
            "1:81",
        ),
        // A key written twice is refused, not the last one kept.
        (
            "(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8), algorithms: {AllToAll: Ring, AllToAll: Mesh})",
            "the key AllToAll is written twice",
            "1:86",
        ),
        (
            "(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8), devices: {0: 1, 1: 0, 0: 0})",
            "the key 0 is written twice",
            "1:79",
        ),
    ] {
        let t = dir.path().join("t.ron");
        std::fs::write(&t, text).unwrap();
        let out = ccc(&["check", module, "--target", t.to_str().unwrap()]);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(&format!("cannot parse target {}: {says}", t.display())), "{stderr}");
        assert!(stderr.contains(&format!("t.ron:{at}]")), "{stderr}");
        assert!(stderr.contains("╰── "), "a snippet: {stderr}");
        assert!(stderr.contains("help:"), "{stderr}");
    }
    // Said as a spec's field is (it said RON's words alone, `integer is
    // out of bounds`, `expected comma`, with the label `here` and, as
    // help, how a target reads): the field, its range, the name meant.
    for (text, label, help, field) in [
        ("channels: -1", "out of range for `channels`", "`channels` takes a whole number from 1 to 32", "channels"),
        ("channels: 1.5", "a fraction where a whole number belongs", "`channels` takes a whole number", "channels"),
        (
            "model: (launch_ns: -1)",
            "out of range for `launch_ns`",
            "`launch_ns` takes a whole number",
            "model.launch_ns",
        ),
        ("chanels: 2", "unknown field `chanels`", "did you mean `channels`?", "chanels"),
        ("algorithm: ring", "unknown variant `ring`", "did you mean `Ring`?", "algorithm"),
        ("arch: \"Cayman\"", "where a name belongs", "a name is written bare, without quotes: `arch: Cayman`", "arch"),
    ] {
        let t = dir.path().join("t.ron");
        std::fs::write(
            &t,
            format!("(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8), {text})").replace(
                "(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8), arch: \"Cayman\")",
                "(arch: \"Cayman\", topology: (rank_n: 16, local_rank_n: 8))",
            ),
        )
        .unwrap();
        let out = ccc(&["explain", module, "--target", t.to_str().unwrap(), "--json"]);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}: {stderr}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let error = &json["error"];
        assert!(error["label"].as_str().unwrap().contains(label), "{text}: {error}");
        assert!(error["help"].as_str().unwrap().starts_with(help), "{text}: {error}");
        assert_eq!(error["field"], field, "{text}: {error}");
        assert_eq!(error["code"], "ccc::target", "{text}: {error}");
    }
    // A `model:` block's misspelt field is named in the target's words,
    // not by the Rust type `ModelOverrides`.
    let t = dir.path().join("t.ron");
    std::fs::write(&t, "(arch: Cayman, topology: (rank_n: 16, local_rank_n: 8), model: (lunch_ns: 1))").unwrap();
    let out = ccc(&["check", module, "--target", t.to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    let said = stderr.replace('│', " ").split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(said.contains("unexpected field named `lunch_ns` in `model: (...)`"), "{stderr}");
    assert!(!said.contains("ModelOverrides"), "{stderr}");
}

/// `import` refuses a target value no collective could take, before
/// importing anything: it would otherwise print RON that `check` refuses.
/// Every such problem is said, under the target's name; `-o` writes nothing.
#[test]
fn import_refuses_a_target_value_no_collective_could_take() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("bad.ron");
    let target = "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8), channels: 99, model: (hops_max: 0))";
    std::fs::write(&t, target).unwrap();
    let module = "tests/hlo/dp_train_step_8.compiled.hlo";
    let written = dir.path().join("step.ron");
    let out = ccc(&["import", module, "--target", t.to_str().unwrap(), "-o", written.to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    let flat = flat(&stderr);
    assert!(flat.contains(&format!("(the target of {module}) is not a valid target")), "{stderr}");
    assert!(stderr.contains("channels: 99 is out of range; accepted: 1..=32"), "{stderr}");
    assert!(stderr.contains("model.hops_max: 0 is out of range"), "{stderr}");
    assert!(!written.exists());
    // The same target with its values in range imports.
    std::fs::write(&t, "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8), channels: 2)").unwrap();
    let out = ccc(&["import", module, "--target", t.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A target and a module both bad: every verb says the target's
/// problems first, as `import` (and Python's `import_hlo`) do; with a good
/// module, the verbs that validate say them with the collectives' own.
#[test]
fn a_bad_target_is_said_before_a_bad_module() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("bad.ron");
    std::fs::write(&t, "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 3))").unwrap();
    let module = dir.path().join("bad.hlo");
    let good = std::fs::read_to_string("tests/hlo/dp_train_step_8.compiled.hlo").unwrap();
    // The all-reduce reduces with a computation the module lacks.
    let cut = good.replacen("to_apply=%region_0.0.clone", "to_apply=%nowhere", 1);
    assert!(cut != good, "the fixture's all-reduce no longer reads as this test expects");
    std::fs::write(&module, &cut).unwrap();
    let out_dir = dir.path().join("out");
    let (t, m, o) = (t.to_str().unwrap(), module.to_str().unwrap(), out_dir.to_str().unwrap());
    for verb in [&["sign", m][..], &["compile", m, "-o", o], &["explain", m], &["verify", m], &["import", m]] {
        let out = ccc(&[verb, &["--target", t]].concat());
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{verb:?}: {stderr}");
        let flat = flat(&stderr);
        assert!(flat.contains(&format!("(the target of {m}) is not a valid target")), "{verb:?}: {stderr}");
        assert!(flat.contains("local_rank_n 3 does not divide rank_n 8"), "{verb:?}: {stderr}");
        assert!(!flat.contains("cannot import"), "{verb:?}: {stderr}");
    }
    assert!(!out_dir.exists());
    // The target mended, the module's own error.
    std::fs::write(t, "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8))").unwrap();
    let out = ccc(&["sign", m, "--target", t]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("cannot import {m}")), "{stderr}");
}

/// With `--target`, an input that is not a whole module is said to be what
/// it is: empty, an HLO module cut short (refused as HLO, at the place it
/// stops), or not HLO at all; never "a RON spec" for an empty or cut file.
#[test]
fn an_empty_or_cut_module_is_said_to_be_one() {
    let dir = tempfile::tempdir().unwrap();
    let t = target_path(8);
    let full = std::fs::read_to_string("tests/hlo/dp_train_step_8.compiled.hlo").unwrap();
    for (name, text, says) in [
        ("empty.hlo", String::new(), "empty.hlo is empty, not an XLA HLO module"),
        ("blank.hlo", " \n\n".to_owned(), "blank.hlo is empty, not an XLA HLO module"),
        ("word.hlo", "HloModule \n".to_owned(), "expected the module's name after `HloModule`"),
        ("cut.hlo", full[..10].to_owned(), "expected the module's name after `HloModule`"),
        ("spec.hlo", "Collective(op: AllReduce)".to_owned(), "is not an XLA HLO module"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = ccc(&["check", path.to_str().unwrap(), "--target", t.to_str().unwrap()]);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let flat = flat(&stderr);
        assert!(flat.contains(says), "{name}: {stderr}");
        assert!(!flat.contains("is a RON spec"), "{name}: {stderr}");
    }
}

/// A RON spec given to `ccc import` is said to be one, needing no
/// import: it was "not an XLA HLO module", with a help on how HLO text
/// starts. A text that is neither is still not HLO.
#[test]
fn a_spec_given_to_import_is_said_to_be_one() {
    let t = target_path(8);
    let out = ccc(&["import", "examples/allreduce_ring.ron", "--target", t.to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let said = flat(&stderr);
    assert!(said.contains("examples/allreduce_ring.ron is a RON spec, not an XLA HLO module"), "{stderr}");
    assert!(said.contains("every verb reads a RON spec as it is"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("notes.txt");
    std::fs::write(&other, "just words\n").unwrap();
    let out = ccc(&["import", other.to_str().unwrap(), "--target", t.to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(flat(&stderr).contains("is not an XLA HLO module"), "{stderr}");
}

/// StableHLO, what JAX 0.10.2's `Lowered.as_text()` prints by default
/// (here of `jax.jit(lambda x: x + 1)`, and with `debug_info=True`, which
/// puts `#loc` lines first), is said to be StableHLO, and the help names
/// the calls that give HLO text: it was "not an XLA HLO module" with a
/// help naming `as_text()`, the call that made it.
#[test]
fn stablehlo_text_is_said_to_be_one() {
    let body = "module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = \"result\"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<3xf32>
    return %1 : tensor<3xf32>
  }
}
";
    let dir = tempfile::tempdir().unwrap();
    let t = target_path(8);
    // A `#loc` line naming a file whose name holds `module` is no module line.
    for text in [body.to_owned(), format!("#loc1 = loc(\"my_module.py\":3:7)\n{body}")] {
        let e = import_module(&text, &target(8), None).unwrap_err();
        assert!(e.message.contains("is StableHLO (MLIR) text, not an XLA HLO module"), "{e}");
        assert!(e.help.contains("Lowered.as_text(dialect=\"hlo\")"), "{e:?}");
        assert_eq!(e.start.line, text.lines().position(|l| l.starts_with("module")).unwrap() + 1);
        let path = dir.path().join("f.mlir");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(e.start.col, 1, "{e}");
        for verb in ["import", "check", "diagnose"] {
            let p = path.to_str().unwrap();
            let args: Vec<&str> = if verb == "diagnose" { vec![verb, p, p] } else { vec![verb, p] };
            let out = ccc(&[&args[..], &["--target", t.to_str().unwrap()]].concat());
            let stderr = flat(&String::from_utf8(out.stderr).unwrap());
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains("f.mlir is StableHLO (MLIR) text"), "{verb}: {stderr}");
            assert!(stderr.contains("Lowered.as_text(dialect=\"hlo\")"), "{verb}: {stderr}");
            assert!(!stderr.contains("a RON spec?"), "{verb}: {stderr}");
        }
    }
}

/// Text whose lines end with CR alone is refused at its first CR, saying
/// so (it read as one line: "the module has no computations"); CRLF
/// line ends read as LF ones.
#[test]
fn cr_line_ends_are_said_to_be_what_they_are() {
    let cr = SMALL.replace('\n', "\r");
    let e = import_module(&cr, &target(8), None).unwrap_err();
    assert!(e.message.contains("lines end with a carriage return alone"), "{e}");
    assert_eq!((e.start.line, e.start.col), (1, SMALL.find('\n').unwrap() + 1), "{e}");
    let crlf = import_module(&SMALL.replace('\n', "\r\n"), &target(8), None).unwrap();
    assert_eq!(crlf.program, import_module(SMALL, &target(8), None).unwrap().program);
}

/// A small module: one all-reduce over two groups of 4 of 8 devices.
const SMALL: &str = "HloModule m, replica_count=1, num_partitions=8

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %r = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  ROOT %ar = f32[1024]{0} all-reduce(f32[1024]{0} %p), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=%add
}
";

/// Spellings XLA writes (or reads) that were imported wrongly or
/// refused: an async `call-start` whose callee holds a collective (it was
/// dropped without a word); a combined collective-permute of several
/// operands without `slice_sizes` (refused as the in-place form: each
/// operand is sent whole, one permute of their elements); a space before
/// the header's comma (the header was dropped with it, and the device
/// counts).
#[test]
fn spellings_xla_writes_import_as_they_mean() {
    let call = std::fs::read_to_string(Path::new(ROOT).join("tests/hlo/handwritten/call_start_8.hlo")).unwrap();
    let imported = import_module(&call, &target(8), None).unwrap();
    let names: Vec<&str> = imported.sources.iter().map(|s| s.instruction.as_str()).collect();
    assert_eq!(names, ["all-reduce.1", "ar2"]);

    let combined = SMALL.replace(
        "ROOT %ar = f32[1024]{0} all-reduce(f32[1024]{0} %p), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=%add",
        "%q = f32[32]{0} parameter(1)\n  ROOT %cp = (f32[1024]{0}, f32[32]{0}) collective-permute(f32[1024]{0} %p, f32[32]{0} %q), channel_id=1, source_target_pairs={{0,1},{1,0}}",
    );
    let imported = import_module(&combined, &target(8), None).unwrap();
    let c = &imported.program.collectives[0];
    assert_eq!((c.op, c.count, c.peers.as_deref()), (OpType::Permute, 1056, Some(&[(0, 1), (1, 0)][..])));

    let spaced = SMALL
        .replace("HloModule m, replica_count=1, num_partitions=8", "HloModule m , replica_count=2, num_partitions=4");
    let imported = import_module(&spaced, &target(8), None).unwrap();
    let unspaced = SMALL
        .replace("HloModule m, replica_count=1, num_partitions=8", "HloModule m, replica_count=2, num_partitions=4");
    assert_eq!(imported.program, import_module(&unspaced, &target(8), None).unwrap().program);
    // A computation of another execution thread (it was refused at its
    // closing `}, execution_thread=...`); anything else after a `}` is
    // still refused.
    let thread = std::fs::read_to_string(Path::new(ROOT).join("tests/hlo/handwritten/execution_thread_8.hlo")).unwrap();
    let c = &import_module(&thread, &target(8), None).unwrap().program.collectives[0];
    assert_eq!((c.op, c.count), (OpType::ReduceScatter, 64));
    let e = import_module(&thread.replace("}, execution_thread", "}, colour"), &target(8), None).unwrap_err();
    assert!(e.message.contains("unexpected `colour=\"parallel\"` after the `}` closing computation"), "{e}");
    // A pipeline's device-to-device send/recv is no collective: each named
    // as not compiled (they were dropped without a word), a recv alone too
    // (a stage that only receives); one with the host is not a transfer
    // between devices, and is not named. A module of nothing else says so.
    let gpu = std::fs::read_to_string(Path::new(ROOT).join("tests/hlo/handwritten/gpu_async_send_8.hlo")).unwrap();
    let imported = import_module(&gpu, &target(8), None).unwrap();
    let named: Vec<(&str, usize)> = imported.transfers.iter().map(|t| (t.instruction.as_str(), t.line)).collect();
    assert_eq!((imported.program.collectives.len(), named), (4, vec![("recv", 32), ("send", 33)]));
    let ron = emit::to_ron(&imported, "m.hlo").unwrap();
    assert!(ron.contains("// Not compiled: send (line 33), a device-to-device send/recv"), "{ron}");
    let host = gpu.replace("channel_id=7,", "channel_id=7, is_host_transfer=true,");
    assert!(import_module(&host, &target(8), None).unwrap().transfers.is_empty());
    let recv_alone = gpu.replace("  %send = ", "  %sent = ").replace(") send(", ") add(");
    let imported = import_module(&recv_alone, &target(8), None).unwrap();
    assert_eq!(imported.transfers.iter().map(|t| t.instruction.as_str()).collect::<Vec<_>>(), ["recv"]);
    assert!(imported.notes()[0].starts_with("the device-to-device send/recv `recv` (line 32) is not compiled"));
    let entry = gpu.find("  %ars = ").unwrap();
    let only = format!("{}  %tok = token[] after-all()\n{}", &gpu[..entry], &gpu[gpu.find("  %recv = ").unwrap()..]);
    let e = import_module(&only, &target(8), None).unwrap_err();
    assert!(e.message.contains("the module moves data only by device-to-device send/recv (`recv`, line"), "{e}");
    let out =
        ccc(&["check", "tests/hlo/handwritten/gpu_async_send_8.hlo", "--target", target_path(8).to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("2 device-to-device sends and recvs (the first `recv`, line 32) are not compiled"),
        "{stderr}"
    );
    // The header's `origin_recovery_table={` over the lines that follow
    // (its strings holding whole computations) is skipped: it was refused
    // as "a computation written inline".
    let header = "HloModule m, replica_count=1, num_partitions=8";
    let table = format!(
        "{header}, origin_recovery_table={{\n  {{\"ar\"}} : {{\"ar__ovp0\"}},\n  \"\n    ENTRY %recovery (param: f32[2]) \
         -> f32[16] {{\n      ROOT %all-gather = f32[16]{{0}} all-gather(%param), dimensions={{0}}\n    }}\n  \"\n}}\n"
    );
    let recovered = SMALL.replacen(&format!("{header}\n"), &table, 1);
    assert_eq!(
        import_module(&recovered, &target(8), None).unwrap().program,
        import_module(SMALL, &target(8), None).unwrap().program
    );
    let cut = &recovered[..recovered.find("  \"\n}").unwrap()];
    let e = import_module(cut, &target(8), None).unwrap_err();
    assert!(e.message.contains("the header's `origin_recovery_table={` is never closed"), "{e}");
    let e = import_module(&SMALL.replace("HloModule m,", "HloModule m junk,"), &target(8), None).unwrap_err();
    assert!(e.message.contains("unexpected `junk, replica_count=1, num_partitions=8` in the `HloModule` line"), "{e}");
}

/// `//` line comments, which XLA's lexer skips as it skips `/* */` ones
/// (a module annotated by hand), were refused; one inside a string is
/// text, and a lone `/` is still refused.
#[test]
fn line_comments_are_skipped_as_xla_reads_them() {
    let commented = SMALL
        .replace(
            "HloModule m, replica_count=1, num_partitions=8\n",
            "// reduced by hand\nHloModule m, replica_count=1, num_partitions=8 // 8 devices\n",
        )
        .replace(
            "  %p = f32[1024]{0} parameter(0)\n",
            "  // the gradient\n  %p = f32[1024]{0} parameter(0) // one bucket\r\n",
        );
    assert_ne!(commented, SMALL);
    let plain = import_module(SMALL, &target(8), None).unwrap();
    let imported = import_module(&commented, &target(8), None).unwrap();
    assert_eq!(imported.program, plain.program);
    // Lines are kept: the all-reduce is two lines further down.
    assert_eq!(imported.sources[0].line, plain.sources[0].line + 2);
    let quoted = SMALL.replace("to_apply=%add", "to_apply=%add, metadata={source_file=\"//x.py\"}");
    assert_eq!(import_module(&quoted, &target(8), None).unwrap().program, plain.program);
    let slash = SMALL.replace("to_apply=%add", "to_apply=%add / 2");
    let e = import_module(&slash, &target(8), None).unwrap_err();
    assert!(e.message.contains("`add / 2`"), "{e}");
    assert_eq!(e.start.line, slash.lines().position(|l| l.contains("%add / 2")).unwrap() + 1);
}

/// A collective in a computation a `custom-call` runs
/// (`called_computations`) was dropped without a word: the custom call's
/// target decides whether and how often it runs, so it is refused, named;
/// a custom call of a computation without collectives (a reduction)
/// imports as before.
#[test]
fn a_collective_a_custom_call_runs_is_refused() {
    let body = "%body (b: f32[64]) -> f32[64] {
  %b = f32[64]{0} parameter(0)
  ROOT %inner = f32[64]{0} all-reduce(f32[64]{0} %b), channel_id=2, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=%add
}

ENTRY";
    let ar = "  ROOT %ar = ";
    let call = |callee: &str| {
        SMALL.replacen("ENTRY", body, 1).replace(
            ar,
            &format!(
                "  %k = f32[64]{{0}} parameter(1)\n  %cc = f32[64]{{0}} custom-call(f32[64]{{0}} %k), \
                 custom_call_target=\"fused\", called_computations={{%{callee}}}\n{ar}"
            ),
        )
    };
    let e = import_module(&call("body"), &target(8), None).unwrap_err();
    assert!(e.message.contains("custom-call `cc` calls computation `body`, which holds `inner` (line 11)"), "{e}");
    assert_eq!(e.start.line, 17);
    let reduction = import_module(&call("add"), &target(8), None).unwrap();
    assert_eq!(reduction.sources.iter().map(|s| s.instruction.as_str()).collect::<Vec<_>>(), ["ar"]);
    // An empty list names no computation (it was "calls computation ``").
    let none = call("add").replace("called_computations={%add}", "called_computations={}");
    assert_eq!(import_module(&none, &target(8), None).unwrap().program, reduction.program);
}

/// A module of more collectives than a program holds (a training step's
/// 121) was refused by `ccc import` with `check`'s report, so it wrote
/// nothing, where docs/hlo.md says it writes the program for the user to
/// cut: it writes it, saying so in the RON and on stderr; `check` still
/// refuses it, without naming five collectives of one slot each.
#[test]
fn import_writes_a_program_too_full_to_compile_and_says_so() {
    let ar = |i: usize| {
        format!(
            "  %ar{i} = f32[1024]{{0}} all-reduce(f32[1024]{{0}} %p), channel_id={}, \
             replica_groups={{{{0,1,2,3,4,5,6,7}}}}, use_global_device_ids=true, to_apply=%add\n",
            i + 1
        )
    };
    let entry = SMALL.find("  ROOT %ar = ").unwrap();
    let many: String = (0..65).map(ar).collect();
    let module = format!("{}{many}  ROOT %t = () tuple()\n}}\n", &SMALL[..entry]);
    // A module path holding `Program(` (the note went in front of the
    // first, inside the header comment, and the RON did not parse).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("Program(1)")).unwrap();
    let (hlo, ron) = (dir.path().join("Program(1)/m.hlo"), dir.path().join("m.ron"));
    std::fs::write(&hlo, &module).unwrap();
    let t = target_path(8);
    let out = ccc(&["import", hlo.to_str().unwrap(), "--target", t.to_str().unwrap(), "-o", ron.to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "m.hlo: written, but it does not compile as one program: the program's collectives take 65 slots"
        ),
        "{stderr}"
    );
    let written = std::fs::read_to_string(&ron).unwrap();
    assert!(
        written.contains("// Note: these collectives take 65 slots of a TOP_SP's CTRL SPAD, more than its 64"),
        "{written}"
    );
    assert_eq!(parse(&written).unwrap().program.collectives.len(), 65);
    let out = ccc(&["check", ron.to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let said = flat(&stderr);
    assert!(said.contains("each collective taking one;") && !said.contains("the most:"), "{stderr}");
    // `--split -o OUT` of the module: its exit code and stderr, flattened
    // (the report is wrapped to a width).
    let split_to = |out: &Path| {
        let args = ["import", hlo.to_str().unwrap(), "--target", t.to_str().unwrap(), "--split", "-o"];
        let out = ccc(&[&args[..], &[out.to_str().unwrap()]].concat());
        let stderr = String::from_utf8(out.stderr).unwrap();
        (out.status.code(), flat(&stderr))
    };
    // `--split`: programs that each fit, in order, as many as fit; each
    // validates, and together they are the module's collectives.
    let split = dir.path().join("step.ron");
    let (code, stderr) = split_to(&split);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("step.2.ron: collectives 64 to 64"), "{stderr}");
    let parts: Vec<String> =
        (1..=2).map(|k| std::fs::read_to_string(dir.path().join(format!("step.{k}.ron"))).unwrap()).collect();
    assert!(!dir.path().join("step.3.ron").exists() && !split.exists());
    let header = "// Part 2 of 2: the module's collectives 64 to 64, at HLO lines 75 to 75";
    assert!(parts[1].contains(header), "{}", parts[1]);
    let mut joined = Vec::new();
    for part in &parts {
        let program = parse(part).unwrap().program;
        validate(&program).unwrap();
        joined.extend(program.collectives);
    }
    assert_eq!(joined, parse(&written).unwrap().program.collectives);
    // A folder is no name to number (the parts went beside it).
    let (code, stderr) = split_to(dir.path());
    assert_eq!(code, Some(2));
    assert!(stderr.contains("that is a folder"), "{stderr}");
    // Nothing is written when a part's name is taken, and nothing is
    // overwritten.
    std::fs::write(dir.path().join("again.2.ron"), "mine").unwrap();
    let (code, stderr) = split_to(&dir.path().join("again.ron"));
    assert_eq!(code, Some(2));
    assert!(stderr.contains("again.2.ron exists; nothing was written"), "{stderr}");
    assert!(!dir.path().join("again.1.ron").exists());
    assert_eq!(std::fs::read_to_string(dir.path().join("again.2.ron")).unwrap(), "mine");
    // 64 fit, with no note.
    let fits = format!("{}{}  ROOT %t = () tuple()\n}}\n", &SMALL[..entry], (0..64).map(ar).collect::<String>());
    std::fs::write(&hlo, &fits).unwrap();
    let out = ccc(&["import", hlo.to_str().unwrap(), "--target", t.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty() && !String::from_utf8(out.stdout).unwrap().contains("// Note:"));
}

/// Lowered text names no device count in its header, but its Shardy mesh
/// does: an 8-device module read with a 16-rank target was read as 16
/// devices' (a permute imported as it stands; groups refused as leaving
/// devices out, not for the count). A mesh of another size is refused at
/// the mesh; one that matches imports as before.
#[test]
fn a_lowered_module_s_mesh_must_match_the_target() {
    let src = std::fs::read_to_string(Path::new(ROOT).join("tests/hlo/ring_ppermute_8.lowered.hlo")).unwrap();
    let e = import_module(&src, &target(16), None).unwrap_err();
    assert!(
        e.message.contains("the module's Shardy mesh (`xla.sdy.meshes`) has 8 devices but the target has rank_n 16"),
        "{e}"
    );
    assert_eq!((e.start.line, &src[e.offset()..e.offset() + 11]), (1, "#sdy.mesh<["));
    assert!(import_module(&src, &target(8), None).is_ok());
    // Two meshes of different sizes say nothing of the count; a maximal
    // mesh (no axes) neither.
    let two = src.replacen(
        "{mesh = #sdy.mesh<[\"ring\"=8]>}",
        "{mesh = #sdy.mesh<[\"ring\"=8]>, small = #sdy.mesh<[\"x\"=2]>}",
        1,
    );
    assert_ne!(two, src);
    assert!(!matches!(import_module(&two, &target(16), None), Err(e) if e.message.contains("Shardy")));
    let maximal = src.replacen("#sdy.mesh<[\"ring\"=8]>", "#sdy.mesh<[], device_ids=[0]>", 1);
    assert_ne!(maximal, src);
    assert!(!matches!(import_module(&maximal, &target(16), None), Err(e) if e.message.contains("Shardy")));
}

/// Control characters of a module (an ESC `c` resets the terminal) were
/// printed raw in the message and the snippet: the first is named by its
/// code point, where it stands, and none is printed. (A NUL ended a word
/// where it stood, and the module was called truncated lines later.)
#[test]
fn control_characters_of_a_module_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("esc.hlo");
    std::fs::write(&path, SMALL.replace("channel_id=1", "channel_id=\u{1b}c\u{7}\u{9b}")).unwrap();
    let out = ccc(&["sign", path.to_str().unwrap(), "--target", target_path(8).to_str().unwrap()]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let flat = flat(&stderr);
    assert!(flat.contains("a control character (U+001B) where HLO text holds none"), "{stderr}");
    let line = SMALL.lines().position(|l| l.contains("channel_id=1")).unwrap() + 1;
    let col = SMALL.lines().nth(line - 1).unwrap().find("channel_id=1").unwrap() + "channel_id=".len() + 1;
    assert!(stderr.contains(&format!("esc.hlo:{line}:{col}]")), "{stderr}");
    assert!(!stderr.contains(['\u{1b}', '\u{7}', '\u{9b}']), "{stderr:?}");
    // A NUL in a keyword: there, not "truncated" at the end.
    let nul = SMALL.replace("ENTRY", "EN\0TRY");
    let e = import_module(&nul, &target(8), None).unwrap_err();
    assert!(e.message.starts_with("a control character (U+0000)"), "{e}");
    let entry = SMALL.lines().position(|l| l.starts_with("ENTRY")).unwrap() + 1;
    assert_eq!((e.start.line, e.start.col), (entry, 3));
    // Tabs and CRLF line ends are text.
    let tabs = SMALL.replace("  ", "\t").replace('\n', "\r\n");
    assert!(import_module(&tabs, &target(8), None).is_ok());
    // A quoted string (XLA prints a frontend attribute's value raw) and a
    // comment may hold any character; an escaped quote does not end one.
    let quoted = SMALL.replace("to_apply=%add", "to_apply=%add, metadata={op_name=\"a\\\"\u{c}\u{1b}b\"} // \u{1b}c");
    assert_ne!(quoted, SMALL);
    assert!(import_module(&quoted, &target(8), None).is_ok(), "{:?}", import_module(&quoted, &target(8), None));
}

/// PyTorch/XLA's `XLA_SAVE_TENSORS_FILE` wraps each graph's module in
/// lines of its own: it was refused as "expected a computation", saying
/// nothing of what it is or what to import instead.
#[test]
fn a_torch_xla_save_tensors_file_is_named_as_one() {
    let wrapped = format!(
        "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  fn (x.py:11)\n\n## BEGIN_GRAPH\n{SMALL}\nGraph Hash: b11f\n\n## END_GRAPH\n"
    );
    let e = import_module(&wrapped, &target(8), None).unwrap_err();
    assert!(e.message.starts_with("this is PyTorch/XLA's XLA_SAVE_TENSORS_FILE, not one HLO module"), "{e}");
    assert!(e.help.contains("--xla_dump_to"), "{e}");
    assert_eq!((e.start.line, e.start.col), (1, 1));
    // One graph cut out but for its hash line: named at that line.
    let cut = format!("{SMALL}\nGraph Hash: b11f\n");
    let e = import_module(&cut, &target(8), None).unwrap_err();
    assert!(e.message.contains("XLA_SAVE_TENSORS_FILE"), "{e}");
    assert_eq!(e.start.line, cut.lines().position(|l| l.starts_with("Graph Hash")).unwrap() + 1);
}

/// A bracket left open on its line is named where it opens (it was
/// "the line ends inside a bracket" at the line's end), and a stray
/// closing one where it stands.
#[test]
fn an_unbalanced_bracket_is_named_where_it_stands() {
    let open = SMALL.replace("replica_groups={{0,1,2,3},{4,5,6,7}}", "replica_groups={{0,1,2,3},{4,5,6,7}");
    let e = import_module(&open, &target(8), None).unwrap_err();
    assert!(e.message.contains("the `{` opened here is not closed on its line"), "{e}");
    let line = open.lines().nth(e.start.line - 1).unwrap();
    assert_eq!(line.chars().skip(e.start.col - 1).take(4).collect::<String>(), "{{0,", "{e}");
    let stray = SMALL.replace("channel_id=1,", "channel_id=1},");
    let e = import_module(&stray, &target(8), None).unwrap_err();
    assert!(e.message.contains("this `}` closes a bracket the value never opened"), "{e}");
    let line = stray.lines().nth(e.start.line - 1).unwrap();
    assert_eq!(line.chars().skip(e.start.col - 2).take(3).collect::<String>(), "1},", "{e}");
}

/// Reductions written the ways XLA writes them besides `add(x, y)`: a
/// maximum or minimum as `select(compare(x, y), ...)`, and through value
/// conversions (a bf16 sum carried out in f32, a copied root). They were
/// refused ("not a recognised reduction"). What is not a reduction of
/// the two parameters still is.
#[test]
fn reductions_are_recognised_through_select_and_conversions() {
    let root = "  ROOT %r = f32[] add(f32[] %x, f32[] %y)";
    assert!(SMALL.contains(root));
    let reduce = |body: &str| {
        let src = SMALL.replace(root, body);
        import_module(&src, &target(8), None).map(|i| i.program.collectives[0].reduce)
    };
    let select = |direction: &str, picks: &str| {
        format!(
            "  %c = pred[] compare(f32[] %x, f32[] %y), direction={direction}\n  ROOT %r = f32[] select(pred[] %c, {picks})"
        )
    };
    assert_eq!(reduce(&select("GT", "f32[] %x, f32[] %y")), Ok(Some(ReduceOp::Max)));
    assert_eq!(reduce(&select("GE", "f32[] %y, f32[] %x")), Ok(Some(ReduceOp::Min)));
    assert_eq!(reduce(&select("LT", "f32[] %x, f32[] %y")), Ok(Some(ReduceOp::Min)));
    assert_eq!(reduce(&select("LE", "f32[] %y, f32[] %x")), Ok(Some(ReduceOp::Max)));
    let widened = "  %cx = f64[] convert(f32[] %x)\n  %cy = f64[] convert(f32[] %y)\n  %a = f64[] add(f64[] %cx, f64[] %cy)\n  ROOT %r = f32[] convert(f64[] %a)";
    assert_eq!(reduce(widened), Ok(Some(ReduceOp::Add)));
    assert_eq!(
        reduce("  %a = f32[] minimum(f32[] %x, f32[] %y)\n  ROOT %r = f32[] copy(f32[] %a)"),
        Ok(Some(ReduceOp::Min))
    );
    // Not a reduction of the two parameters: refused, naming the root.
    // Conversions that lose values are among them (a maximum of the
    // values as pred is a logical or; an f32 maximum compared as s32 is
    // of truncated values); they were taken for the reduction.
    let narrowed =
        |to: &str, body: &str| format!("  %cx = {to}[] convert(f32[] %x)\n  %cy = {to}[] convert(f32[] %y)\n{body}");
    for body in [
        narrowed("pred", "  %m = pred[] maximum(pred[] %cx, pred[] %cy)\n  ROOT %r = f32[] convert(pred[] %m)"),
        narrowed("bf16", "  %a = bf16[] add(bf16[] %cx, bf16[] %cy)\n  ROOT %r = f32[] convert(bf16[] %a)"),
        narrowed(
            "s32",
            "  %c = pred[] compare(s32[] %cx, s32[] %cy), direction=GT\n  ROOT %r = f32[] select(pred[] %c, f32[] %x, f32[] %y)",
        ),
        select("EQ", "f32[] %x, f32[] %y"),
        select("GT", "f32[] %x, f32[] %x"),
        "  %k = f32[] constant(0)\n  %c = f32[] convert(f32[] %k)\n  ROOT %r = f32[] add(f32[] %x, f32[] %c)"
            .to_owned(),
        "  ROOT %r = f32[] subtract(f32[] %x, f32[] %y)".to_owned(),
    ] {
        let e = reduce(&body).unwrap_err();
        assert!(e.message.contains("is not a recognised reduction: it has root `r`"), "{body}: {e}");
    }
}

/// A mesh's explicit device order, as XLA prints it after the mesh
/// (`replica_groups=mesh[x=2,y=4], device_ids=(...) {y}`), is part of the
/// attribute, not a new one; an empty sub-axis is refused, not divided by.
#[test]
fn mesh_groups_in_a_module() {
    let module =
        |groups: &str| SMALL.replace("replica_groups={{0,1,2,3},{4,5,6,7}}", &format!("replica_groups={groups}"));
    let groups = |g: &str| import_module(&module(g), &target(8), None).map(|i| i.program.collectives[0].groups.clone());
    let reversed = Some(vec![vec![7, 6, 5, 4], vec![3, 2, 1, 0]]);
    assert_eq!(groups("mesh['x'=2,'y'=4], device_ids=(7,6,5,4,3,2,1,0) {'y'}").unwrap(), reversed);
    assert_eq!(groups("mesh[x=2,y=4], device_ids=(7,6,5,4,3,2,1,0) {y}").unwrap(), reversed);
    assert_eq!(groups("mesh[x=2,y=4] {x}").unwrap(), Some(vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]));
    let e = groups("mesh['x'=2,'y'=4] {'y':(0)2}").unwrap_err();
    assert!(e.message.contains("sub-axis `(0)2` is empty"), "{e}");
}

/// A shape whose dimensions multiply past 2^64 - 1 elements is refused as
/// such, not called empty; a reduce-scatter whose count would pass it is
/// refused, not imported at a saturated count.
#[test]
fn element_counts_past_u64_are_refused() {
    let module = |result: &str, op: &str, operand: &str, attrs: &str| {
        format!(
            "HloModule m, replica_count=1, num_partitions=8\n\n\
             %add (x: f32[], y: f32[]) -> f32[] {{\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  \
             ROOT %r = f32[] add(f32[] %x, f32[] %y)\n}}\n\n\
             ENTRY %main (p: {operand}) -> {result} {{\n  %p = {operand} parameter(0)\n  \
             ROOT %c = {result} {op}({operand} %p), channel_id=1, replica_groups={{{{0,1,2,3}},{{4,5,6,7}}}}, \
             use_global_device_ids=true, {attrs}to_apply=%add\n}}\n"
        )
    };
    let huge = "f32[4294967296,4294967297]";
    let e = import_module(&module(huge, "all-reduce", huge, ""), &target(8), None).unwrap_err();
    assert!(e.message.contains("more than 2^64 - 1 elements"), "{e}");
    // A zero dimension after large ones is empty, not too large: it moves
    // nothing (and a module of nothing else is refused as such).
    let empty = "f32[4294967296,4294967297,0]";
    let e = import_module(&module(empty, "all-reduce", empty, ""), &target(8), None).unwrap_err();
    assert!(e.message.contains("the module's collectives move nothing (`c` is the first)"), "{e}");
    let big = "f32[4611686018427387904,1]";
    let whole = "f32[18446744073709551615,1]";
    let e = import_module(&module(big, "reduce-scatter", whole, "dimensions={0}, "), &target(8), None).unwrap_err();
    assert!(e.message.contains("more than 2^64 - 1 elements"), "{e}");
    // An ordinary one still imports.
    assert!(import_module(&module("f32[1024]", "all-reduce", "f32[1024]", ""), &target(8), None).is_ok());
}

/// Text XLA would not load as one module is refused where it goes wrong,
/// not imported in part: two modules, two ENTRY computations, two
/// computations of one name, two ROOTs of one computation, a header or
/// instruction attribute given twice.
#[test]
fn one_module_per_text() {
    let refused = |src: &str, words: &str| {
        let e = import_module(src, &target(8), None).unwrap_err();
        assert!(e.message.contains(words), "{words}: {e}");
    };
    refused(&format!("{SMALL}{SMALL}"), "a second `HloModule` header");
    // Two ROOTs in one computation (XLA's parser refuses them; the first
    // was taken).
    let roots = SMALL.replace("  %p = f32[1024]{0} parameter(0)", "  ROOT %p = f32[1024]{0} parameter(0)");
    refused(&roots, "`ar` is a second ROOT of computation `main` (the first is `p`)");
    let entry = SMALL.split("ENTRY").nth(1).unwrap().replace("%main", "%main2");
    refused(&format!("{SMALL}\nENTRY{entry}"), "a second ENTRY computation, `main2`");
    let add = SMALL.split("\n\n").nth(1).unwrap();
    refused(&format!("{SMALL}\n{add}\n"), "a second computation named `add`");
    refused(&SMALL.replace("replica_count=1,", "replica_count=8, replica_count=1,"), "gives `replica_count` twice");
    // An instruction's attribute twice, as XLA's parser refuses it: which
    // of the two would hold is not said.
    let groups = "replica_groups={{0,1,2,3},{4,5,6,7}}";
    refused(
        &SMALL.replace(groups, &format!("{groups}, replica_groups={{{{0,1,2,3,4,5,6,7}}}}")),
        "`ar` gives `replica_groups` twice",
    );
    assert!(import_module(SMALL, &target(8), None).is_ok());
}

/// Collectives that move nothing leave nothing to compile, and the error
/// says so (not that the module was lowered without partitioning).
#[test]
fn collectives_that_move_nothing_are_named() {
    let refused = |src: &str, words: &str| {
        let e = import_module(src, &target(8), None).unwrap_err();
        assert!(e.message.contains(words), "{words}: {e}");
    };
    let self_pairs = SMALL.replace(
        "all-reduce(f32[1024]{0} %p), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=%add",
        "collective-permute(f32[1024]{0} %p), channel_id=1, source_target_pairs={{0,0},{3,3}}",
    );
    refused(&self_pairs, "the module's collectives move nothing (`ar` is the first)");

    // Beside a collective that moves data, an empty tuple's all-reduce is
    // left out, and `ccc import` says so in the RON it writes (it used to
    // be dropped unseen).
    let with_empty = SMALL.replace(
        "  ROOT %ar",
        "  %none = () all-reduce(), channel_id=2, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=%add\n  ROOT %ar",
    );
    let imported = import_module(&with_empty, &target(8), None).unwrap();
    assert_eq!(imported.program.collectives.len(), 1);
    assert_eq!(imported.moved_nothing.len(), 1);
    assert_eq!((imported.moved_nothing[0].instruction.as_str(), imported.moved_nothing[0].line), ("none", 11));
    let ron = emit::to_ron(&imported, "m.hlo").unwrap();
    assert!(ron.contains("// Left out: none (line 11) moves nothing"), "{ron}");
    assert_eq!(parse(&ron).unwrap().program, imported.program);

    // So is an all-reduce of an empty array (JAX lowers a psum of an
    // `f32[1,0]` so): it refused the whole module ("moves no elements").
    let with_zero = SMALL.replace(
        "  ROOT %ar",
        "  %e = f32[1,0]{1,0} reshape(f32[0]{0} %p)\n  %z = f32[1,0]{1,0} all-reduce(f32[1,0]{1,0} %e), channel_id=2, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=%add\n  ROOT %ar",
    );
    let imported = import_module(&with_zero, &target(8), None).unwrap();
    assert_eq!(imported.program.collectives.len(), 1);
    assert_eq!((imported.moved_nothing[0].instruction.as_str(), imported.moved_nothing[0].line), ("z", 12));
}

/// An async collective is one start and one done: a second done of the
/// same start, or a done without its start, is refused where it stands,
/// not ignored.
#[test]
fn a_start_completed_twice_is_refused() {
    let async_pair = SMALL
        .replace(
            "  ROOT %ar = f32[1024]{0} all-reduce(f32[1024]{0} %p),",
            "  %ars = f32[1024]{0} all-reduce-start(f32[1024]{0} %p),",
        )
        .replace("to_apply=%add\n}", "to_apply=%add\n  ROOT %ard = f32[1024]{0} all-reduce-done(f32[1024]{0} %ars)\n}");
    assert_eq!(import_module(&async_pair, &target(8), None).unwrap().program.collectives.len(), 1);
    let twice =
        async_pair.replace("  ROOT %ard", "  %ard0 = f32[1024]{0} all-reduce-done(f32[1024]{0} %ars)\n  ROOT %ard");
    let e = import_module(&twice, &target(8), None).unwrap_err();
    assert!(e.message.contains("`ard` is a second `all-reduce-done` of `ars` (the first is `ard0`)"), "{e}");
    assert_eq!(e.start.line, 13, "{e}");

    // A done whose start is missing (a cut or edited module) is refused
    // at the done, not read as a module without collectives.
    let orphan = SMALL.replace(
        "  ROOT %ar = f32[1024]{0} all-reduce(f32[1024]{0} %p),",
        "  ROOT %ard = f32[1024]{0} all-reduce-done(f32[1024]{0} %nope),",
    );
    let e = import_module(&orphan, &target(8), None).unwrap_err();
    assert!(e.message.contains("`ard` completes `nope`, which computation `main` does not define"), "{e}");
    let wrong = orphan.replace("%nope", "%p");
    let e = import_module(&wrong, &target(8), None).unwrap_err();
    assert!(
        e.message.contains("`ard` completes `p` (a `parameter`): its operand must be the `all-reduce-start`"),
        "{e}"
    );
}

/// The same for XLA's generic `async-start` of a computation holding the
/// collective: one done, whose operand leads back to it. A start without
/// its done, one completed twice, and a done of no start were imported
/// (XLA refuses each).
#[test]
fn a_generic_async_start_is_completed_once() {
    let wrapped = "%wrapped (y: f32[1024]) -> f32[1024] {\n  %y = f32[1024]{0} parameter(0)\n  ROOT %w = f32[1024]{0} \
                   all-reduce(f32[1024]{0} %y), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, \
                   use_global_device_ids=true, to_apply=%add\n}\n\n";
    let shape = "((f32[1024]{0}), f32[1024]{0}, u32[])";
    let start = format!("  %st = {shape} async-start(f32[1024]{{0}} %p), calls=%wrapped\n");
    let done = |name: &str, of: &str| format!("  ROOT %{name} = f32[1024]{{0}} async-done({shape} %{of})\n}}");
    let entry = SMALL.find("ENTRY").unwrap();
    let body_end = SMALL[entry..].find("  ROOT %ar").unwrap() + entry;
    let module = |tail: &str| format!("{}{wrapped}{}{tail}", &SMALL[..entry], &SMALL[entry..body_end]);

    let paired = module(&format!("{start}{}", done("d", "st")));
    assert_eq!(import_module(&paired, &target(8), None).unwrap().program.collectives.len(), 1);
    let no_done = module(&format!("{start}  ROOT %n = f32[1024]{{0}} negate(f32[1024]{{0}} %p)\n}}"));
    let e = import_module(&no_done, &target(8), None).unwrap_err();
    assert!(e.message.contains("`st` has no `async-done` in computation `main`"), "{e}");
    let twice = module(&format!("{start}  %d0 = f32[1024]{{0}} async-done({shape} %st)\n{}", done("d", "st")));
    let e = import_module(&twice, &target(8), None).unwrap_err();
    assert!(e.message.contains("`d` is a second `async-done` of `st` (the first is `d0`)"), "{e}");
    let of_nothing = module(&format!("{start}  %d0 = f32[1024]{{0}} async-done({shape} %st)\n{}", done("d", "p")));
    let e = import_module(&of_nothing, &target(8), None).unwrap_err();
    assert!(e.message.contains("`d` completes `p` (a `parameter`): its operand must be the `async-start`"), "{e}");
}

/// A collective whose result does not fit its operand (XLA's verifier
/// refuses it) is refused, not counted from the result alone.
#[test]
fn ill_typed_collectives_are_refused() {
    let all_reduce = "ROOT %ar = f32[1024]{0} all-reduce(f32[1024]{0} %p)";
    let with = |root: &str| SMALL.replace(all_reduce, root);
    let refused = |root: &str, words: &str| {
        let e = import_module(&with(root), &target(8), None).unwrap_err();
        assert!(e.message.contains(words), "{root}: {e}");
    };
    refused("ROOT %ar = f32[7]{0} all-reduce(f32[1024]{0} %p)", "it has its operand's elements");
    refused("ROOT %ar = bf16[1024]{0} all-reduce(f32[1024]{0} %p)", "bf16 is not f32");
    let gather =
        |result: &str| format!("ROOT %ag = f32[{result}]{{0}} all-gather(f32[1024]{{0}} %p), dimensions={{0}}");
    // The all-gathers keep the all-reduce's other attributes; to_apply is
    // ignored by an all-gather.
    refused(&gather("4000"), "an all-gather over 4 has 4 times its operand's elements");
    assert!(import_module(&with(&gather("4096")), &target(8), None).is_ok());
    // A dimension the shape does not have is said to be one.
    let past = gather("4096").replace("dimensions={0}", "dimensions={5}");
    refused(&past, "dimensions={5} names dimension 5, but f32[4096] has 1 dimension");
    let scatter =
        |result: &str| format!("ROOT %rs = f32[{result}]{{0}} reduce-scatter(f32[1024]{{0}} %p), dimensions={{0}}");
    refused(&scatter("100"), "a reduce-scatter over 4 has 1/4 of its operand's elements");
    let ok = import_module(&with(&scatter("256")), &target(8), None).unwrap();
    assert_eq!(ok.program.collectives[0].count, 1024);
    // The elements right but not the shape: XLA's verifier wants the
    // operand's shape, or the operand's with the dimension named times
    // (or over) the group size.
    refused("ROOT %ar = f32[32,32]{1,0} all-reduce(f32[1024]{0} %p)", "it has its operand's shape, f32[1024]");
    refused(&gather("32,128"), "an all-gather over 4 along dimension 0 makes f32[4096]");
    refused(&scatter("16,16"), "a reduce-scatter over 4 along dimension 0 makes f32[256]");
    // A dimension the operand does not have, though the result does.
    refused(
        &gather("4,1024").replace("dimensions={0}", "dimensions={1}"),
        "dimensions={1} names dimension 1, but its operand has 1 dimension",
    );
    refused(
        &scatter("2,128").replace("dimensions={0}", "dimensions={1}"),
        "dimensions={1} names dimension 1, but its operand has 1 dimension",
    );
}

/// A module of calls fanning out to `levels` deep, each level calling the
/// next twice, the last holding `per_leaf` all-reduces over the world.
fn fan_out(levels: u32, per_leaf: u32) -> String {
    let mut m = String::from(
        "HloModule fan\n\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n\n",
    );
    m += &format!("%c{levels} (p: f32[8]) -> f32[8] {{\n  %p = f32[8] parameter(0)\n");
    for i in 0..per_leaf {
        let root = if i + 1 == per_leaf { "ROOT " } else { "" };
        m += &format!("  {root}%r{i} = f32[8] all-reduce(%p), replica_groups={{}}, to_apply=%add\n");
    }
    m += "}\n\n";
    for l in (1..levels).rev() {
        let next = l + 1;
        m += &format!(
            "%c{l} (p: f32[8]) -> f32[8] {{\n  %p = f32[8] parameter(0)\n  %x = f32[8] call(%p), to_apply=%c{next}\n  ROOT %y = f32[8] call(%x), to_apply=%c{next}\n}}\n\n"
        );
    }
    m + "ENTRY %main {\n  %p = f32[8] parameter(0)\n  ROOT %q = f32[8] call(%p), to_apply=%c1\n}\n"
}

/// A small module that calls itself out to more collectives than a
/// program holds is refused as the walk finds them; one at the edge of a
/// large world imports in a moment (each instruction's groups are worked
/// out once, not at every call); a target whose world validation would
/// refuse is refused before any device list is built (a `rank_n` of
/// 2^32 - 1 used to abort on a 34 GB allocation).
#[test]
fn a_module_is_bounded_by_its_collectives_and_its_world() {
    // 2^14 leaves of 4 all-reduces: 65,536, one more than a program holds.
    let e = import_module(&fan_out(15, 4), &target(8), None).unwrap_err();
    assert!(e.message.contains("imports more than 65535 collectives"), "{e}");
    // Half as many leaves: 32,768 collectives over a world of 2^20 ranks.
    let world = parse_target("(arch: Cayman, topology: (rank_n: 1048576, local_rank_n: 16))").unwrap();
    let imported = import_module(&fan_out(14, 4), &world, None).unwrap();
    assert_eq!(imported.program.collectives.len(), 32_768);
    let huge = parse_target("(arch: Cayman, topology: (rank_n: 4294967295, local_rank_n: 1))").unwrap();
    let e = import_module(&fan_out(2, 1), &huge, None).unwrap_err();
    assert!(e.message.contains("topology.rank_n is 4294967295") && e.help.contains("1..=1048576"), "{e}");
}

/// `import -o FOLDER`: refused, with a RON file's name as the example (it
/// once suggested `FOLDER/plot.svg`, the SVG verbs' example).
#[test]
fn import_into_a_folder_suggests_a_ron_file() {
    let dir = tempfile::tempdir().unwrap();
    let t = target_path(8);
    let out = ccc(&[
        "import",
        "tests/hlo/dp_train_step_8.compiled.hlo",
        "--target",
        t.to_str().unwrap(),
        "-o",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("e.g. FOLDER/program.ron"), "{stderr}");
}

/// A `conditional`'s branches are walked one after another, so their
/// collectives are all imported; a run takes one branch, so each is marked
/// with its branch and the RON says what that means.
#[test]
fn collectives_in_conditional_branches_are_marked() {
    let src = "HloModule cond, num_partitions=8

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%max (c: f32[], d: f32[]) -> f32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %m = f32[] maximum(%c, %d)
}

%yes (x: f32[16]) -> f32[16] {
  %x = f32[16]{0} parameter(0)
  ROOT %sum = f32[16]{0} all-reduce(%x), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=%add
}

%no (y: f32[16]) -> f32[16] {
  %y = f32[16]{0} parameter(0)
  ROOT %most = f32[16]{0} all-reduce(%y), channel_id=2, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=%max
}

ENTRY %main (p: pred[], v: f32[16]) -> f32[16] {
  %p = pred[] parameter(0)
  %v = f32[16]{0} parameter(1)
  ROOT %pick = f32[16]{0} conditional(%p, %v, %v), true_computation=%yes, false_computation=%no
}
";
    let imported = import_module(src, &target(8), None).unwrap();
    let branches: Vec<_> =
        imported.sources.iter().map(|s| (s.instruction.as_str(), s.branch.as_ref().map(|b| b.index))).collect();
    assert_eq!(branches, [("sum", Some(0)), ("most", Some(1))]);
    let ron = emit::to_ron(&imported, "cond.hlo").unwrap();
    assert!(ron.contains("// 0: sum (line 17, branch 0 of conditional `pick` (line 28))"), "{ron}");
    assert!(ron.contains("a run takes one branch"), "{ron}");
    // The verbs that compile the module say so on stderr.
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("cond.hlo");
    std::fs::write(&module, src).unwrap();
    let t = target_path(8);
    let out = ccc(&["sign", module.to_str().unwrap(), "--target", t.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("2 collectives sit in branches of a `conditional` (sum, line 17, branch 0 of `pick`, line 28)"),
        "{stderr}"
    );
}

/// `diagnose` with `--target` reads a RON spec beside HLO modules as it
/// is (the target and `--algorithm` are the modules'): a module against
/// the program `import` made of it matches, and against that program
/// edited, names the edit. It refused the spec ("not an XLA HLO
/// module"), and without `--target` refused the module, so one could not
/// be compared with the other. RON specs alone are still told that
/// `--target` is not for them.
#[test]
fn diagnose_compares_a_module_with_a_spec() {
    let dir = tempfile::tempdir().unwrap();
    let (module, t) = ("tests/hlo/ring_ppermute_8.compiled.hlo", target_path(8));
    let t = t.to_str().unwrap();
    let imported = ccc(&["import", module, "--target", t]);
    assert_eq!(imported.status.code(), Some(0));
    let spec = dir.path().join("imported.ron");
    std::fs::write(&spec, &imported.stdout).unwrap();
    let edited = dir.path().join("edited.ron");
    std::fs::write(&edited, String::from_utf8(imported.stdout).unwrap().replacen("count: 512", "count: 513", 1))
        .unwrap();
    let (spec, edited) = (spec.to_str().unwrap(), edited.to_str().unwrap());

    let same = ccc(&["diagnose", module, spec, "--target", t]);
    let stdout = String::from_utf8(same.stdout).unwrap();
    assert_eq!(same.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&same.stderr));
    assert!(stdout.starts_with("match: all 2 inputs"), "{stdout}");
    let other = ccc(&["diagnose", module, edited, "--target", t]);
    let stdout = String::from_utf8(other.stdout).unwrap();
    assert_eq!(other.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&other.stderr));
    assert!(
        stdout.contains("count: 512 (ring_ppermute_8.compiled.hlo) vs 513 (edited.ron), at collective 0"),
        "{stdout}"
    );

    let specs = ccc(&["diagnose", spec, edited, "--target", t]);
    assert_eq!(specs.status.code(), Some(2));
    assert!(String::from_utf8(specs.stderr).unwrap().contains("none of the 2 inputs is an XLA HLO module"));
}

/// A module whose header names no device count (lowered text, as
/// PyTorch/XLA's `_get_xla_tensors_hlo` gives it) and a collective over all
/// devices (no replica groups): taken as the target's ranks, and said so,
/// by the verbs (stderr) and by `import` (a comment); explicit groups,
/// which must hold every device, say nothing.
#[test]
fn an_unnamed_device_count_taken_from_the_target_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let all = SMALL.replace("HloModule m, replica_count=1, num_partitions=8", "HloModule m").replace(
        ", channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true",
        ", replica_groups={}",
    );
    assert!(!all.contains("num_partitions") && all.contains("replica_groups={}"));
    let grouped = SMALL.replace("HloModule m, replica_count=1, num_partitions=8", "HloModule m");
    let (all_path, grouped_path) = (dir.path().join("all.hlo"), dir.path().join("grouped.hlo"));
    std::fs::write(&all_path, &all).unwrap();
    std::fs::write(&grouped_path, &grouped).unwrap();
    let line = all.lines().position(|l| l.contains("ROOT %ar")).unwrap() + 1;
    for n in [8, 64] {
        let t = target_path(n);
        let t = t.to_str().unwrap();
        let out = ccc(&["sign", all_path.to_str().unwrap(), "--target", t]);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let flat = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("the module names no device count"), "{stderr}");
        assert!(
            flat.contains(&format!("`ar` (line {line}) over all devices, taken as the target's {n} ranks")),
            "{stderr}"
        );
        let out = ccc(&["import", all_path.to_str().unwrap(), "--target", t]);
        let ron = String::from_utf8(out.stdout).unwrap();
        assert!(ron.contains(&format!("// Note: the module names no device count; ar (line {line}) runs over all devices, taken as the\n// target's {n} ranks.")), "{ron}");
    }
    // Groups that must hold every device: the count is checked, nothing said.
    let out = ccc(&["sign", grouped_path.to_str().unwrap(), "--target", target_path(8).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8(out.stderr).unwrap().contains("device count"));
    let out = ccc(&["sign", grouped_path.to_str().unwrap(), "--target", target_path(64).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "groups of 8 devices on 64 ranks leave devices out");
    // A Shardy mesh of the target's size checks the count: nothing said.
    assert!(import_module(&all, &target(8), None).unwrap().assumed_devices.is_some());
    let lowered = std::fs::read_to_string(Path::new(ROOT).join("tests/hlo/ring_ppermute_8.lowered.hlo")).unwrap();
    let header = lowered.lines().next().unwrap();
    assert!(header.contains("#sdy.mesh<[\"ring\"=8]>"), "{header}");
    let meshed = all.replacen("HloModule m", header, 1);
    assert!(import_module(&meshed, &target(8), None).unwrap().assumed_devices.is_none());
}

/// A module of 300 all-reduces for a target of `channels: 99`: every
/// collective has the target's problem, more than validation lists
/// (`PROBLEMS_LISTED`). The report is the target's, once, as for a small
/// module; it read "not a valid spec: 45 problems ... and 44 more", the
/// count of repeats past those listed.
#[test]
fn a_bad_target_of_a_module_of_many_collectives_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut hlo = String::from(
        "HloModule many\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT a = f32[] add(x, y)\n}\n\n\
         ENTRY main {\n  p = f32[8]{0} parameter(0)\n",
    );
    let mut prev = "p".to_owned();
    for i in 0..300 {
        hlo.push_str(&format!("  ar{i} = f32[8]{{0}} all-reduce({prev}), replica_groups={{}}, to_apply=add\n"));
        prev = format!("ar{i}");
    }
    hlo.push_str(&format!("  ROOT r = f32[8]{{0}} copy({prev})\n}}\n"));
    let module = dir.path().join("many.hlo");
    std::fs::write(&module, hlo).unwrap();
    let target = dir.path().join("target.ron");
    std::fs::write(&target, "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8), channels: 99)\n").unwrap();
    let out = ccc(&["sign", module.to_str().unwrap(), "--target", target.to_str().unwrap()]);
    let said = flat(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("(the target of "), "{said}");
    assert!(said.contains("is not a valid target: 1 problem"), "{said}");
    assert!(said.contains("channels: 99 is out of range; accepted: 1..=32"), "{said}");
    assert!(!said.contains("more problems"), "{said}");
}
