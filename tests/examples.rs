#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Every spec in `examples/` compiled through the library and snapshotted.
//!
//! One `#[test]` per example (the list in `examples!` below must equal the
//! folder's content: `the_list_matches_the_folder`). Each compiles the spec
//! with `compile_source` and the default options (every rank, verification
//! on), checks the images of every rank against the rules of
//! `docs/wire-format.md` that can be stated without the schedule's details
//! (`check_wire_rules`), and writes these snapshots into
//! `snapshots/examples/`:
//!
//! | snapshot | what |
//! |---|---|
//! | `<example>.manifest` | signature, a digest of every rank's images, `manifest.json` (rank entries of the two snapshotted ranks only) |
//! | `<example>.rank-R.hexdump` | per TOP_SP, the annotated hexdump of `ctrl_spad.bin`, `slot_spad.bin`, `neff_configs.bin` |
//! | `<example>.rank-R.json` | per TOP_SP, the decoded `ctrl_spad.bin` in the vendor dumper's JSON shape |
//! | `<example>.rank-R.log` | per TOP_SP, the CTRL-mark log lines (device 0, the TOP_SP's index); before them, each Hier collective's selection line |
//! | `<example>.rank-R.dot` | the step graph of rank R alone, in DOT |
//!
//! for rank 0 and one other rank R, chosen by [`other_rank`]: the root of a
//! rooted collective when the root is not rank 0, else the last rank
//! (`rank_n - 1`: in the last node, in the last replica group, and rank 0's
//! predecessor on a flat ring).
//!
//! Every view is rendered from the *decoded* images with the same
//! `ccc_backends` functions `ccc decode` uses, and `check_cli` proves it:
//! `ccc compile --rank 0 --rank R` writes the same bytes, and `ccc decode`
//! on each written file prints exactly the TOP_SP's part of the snapshot
//! (hexdump of all three images, JSON and CTRL-mark log of the CTRL SPAD
//! image). A per-rank view that would exceed [`MAX_LINES`] lines shows only
//! the first and the last TOP_SP, and says so in its first line; no example
//! reaches that today (the largest view is about 1500 lines).

use crate::snapshot;
use ccc_backends::{dot, hexdump, json, text_log};
use ccc_compiler::encode::{RankImages, TopSpImages};
use ccc_compiler::manifest::Manifest;
use ccc_compiler::pipeline::{Compiled, Options, compile_source};
use ccc_compiler::placement::{self, sema};
use ccc_compiler::schedule::{CollectivePlan, Schedule};
use ccc_compiler::step_graph::StepGraph;
use ccc_ir::arch::{ArchParams, SemWindow};
use ccc_ir::enums::{AlgType, DevicePattern, MetaringType, OpType};
use ccc_ir::id::Rank;
use ccc_ir::spec::Leg;
use ccc_ir::wire::ctrl_spad::{self, SLOT_WORDS};
use ccc_ir::wire::ctrl_word::{self, CtrlWord};
use ccc_ir::wire::neff_configs::NeffConfigs;
use ccc_ir::wire::slot_spad::SlotSpad;
use md5::{Digest, Md5};
use std::fmt::Write as _;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A per-rank view longer than this shows only the first and last TOP_SP.
const MAX_LINES: usize = 3000;

/// The rank snapshotted beside rank 0: the root of a single rooted
/// collective when that root is not rank 0 (so a Reduce or Broadcast shows
/// the root's records and a non-root's), else the last rank.
fn other_rank(schedule: &Schedule) -> Rank {
    if let [plan] = schedule.collectives.as_slice()
        && let Some(root) = plan.root
    {
        let root = plan.rank(0, root).unwrap();
        if root != Rank(0) {
            return root;
        }
    }
    Rank(schedule.shape.rank_n - 1)
}

/// Compiles `examples/<stem>.ron`, checks every rank's images, and
/// snapshots rank 0 and [`other_rank`].
fn snapshot_example(stem: &str) {
    let file = format!("examples/{stem}.ron");
    let src = std::fs::read_to_string(format!("{ROOT}/{file}")).unwrap();
    let (_, _, compiled) =
        compile_source(&src, &Options::default()).unwrap_or_else(|e| panic!("{file} does not compile: {e}"));
    let rank_n = compiled.schedule.shape.rank_n;
    assert_eq!(compiled.images.len(), rank_n as usize, "{file}: images for every rank");
    assert!(compiled.proof.is_some(), "{file}: verified");
    for images in &compiled.images {
        check_wire_rules(&file, &compiled.schedule, images);
    }
    let ranks = [Rank(0), other_rank(&compiled.schedule)];
    check_cli(&file, &compiled, &ranks);
    let mut settings = snapshot::settings("examples");
    settings.set_omit_expression(true);
    settings.bind(|| {
        insta::assert_snapshot!(format!("{stem}.manifest"), manifest_view(&file, &compiled, &ranks));
        for rank in ranks {
            let images = &compiled.images[rank.0 as usize];
            assert_eq!(images.rank, rank);
            let params = compiled.schedule.arch.params();
            let r = rank.0;
            insta::assert_snapshot!(format!("{stem}.rank-{r}.hexdump"), hexdump_view(&file, images, params));
            insta::assert_snapshot!(format!("{stem}.rank-{r}.json"), json_view(&file, images));
            insta::assert_snapshot!(format!("{stem}.rank-{r}.log"), log_view(&file, &compiled.schedule, images));
            let graph = StepGraph::build(&compiled.schedule, &[rank]);
            insta::assert_snapshot!(format!("{stem}.rank-{r}.dot"), dot_view(&file, rank, &compiled.schedule, &graph));
        }
    });
}

// ---------------------------------------------------------------- views

/// The signature, a digest of every image of every rank, and the manifest
/// with only the snapshotted ranks' entries.
fn manifest_view(file: &str, compiled: &Compiled, ranks: &[Rank]) -> String {
    let mut md5 = Md5::new();
    let mut bytes = 0usize;
    for images in &compiled.images {
        for tp in &images.topsps {
            for image in [&tp.ctrl_spad[..], &tp.slot_spad[..], &tp.neff_configs[..]] {
                md5.update(image);
                bytes += image.len();
            }
        }
    }
    let mut manifest = Manifest::of(compiled);
    let rank_n = manifest.ranks.len();
    manifest.ranks.retain(|r| ranks.contains(&Rank(r.rank)));
    let shown: Vec<String> = ranks.iter().map(|r| r.0.to_string()).collect();
    let mut out = String::new();
    let _ = writeln!(out, "# {file}: the whole world compiled (default options)");
    let _ = writeln!(out, "signature: {}", compiled.signature.digest);
    let _ = writeln!(
        out,
        "images: {rank_n} ranks x {} TOP_SPs, {bytes} bytes, md5 {} (ctrl, slot, neff per TOP_SP, rank order)",
        manifest.topsps_used,
        hex::encode(md5.finalize())
    );
    let _ = writeln!(out, "manifest.json (rank entries of ranks {} only):", shown.join(" and "));
    out.push_str(&manifest.to_json().unwrap());
    out
}

/// The TOP_SPs a view shows: all, or the first and the last when the whole
/// would be longer than [`MAX_LINES`]; with the header's note.
fn select(images: &RankImages, render: impl Fn(&[&TopSpImages]) -> String) -> (String, String) {
    let all: Vec<&TopSpImages> = images.topsps.iter().collect();
    let full = render(&all);
    let n = all.len();
    let lines = full.lines().count();
    if lines <= MAX_LINES || n <= 2 {
        return (format!("TOP_SPs 0..={}", n - 1), full);
    }
    let ends = [all[0], all[n - 1]];
    (format!("TOP_SPs 0 and {} of 0..={} only: all {n} would take {lines} lines", n - 1, n - 1), render(&ends))
}

fn hexdump_view(file: &str, images: &RankImages, params: &ArchParams) -> String {
    let (shown, body) = select(images, |topsps| {
        let mut out = String::new();
        for tp in topsps {
            let t = tp.topsp.0;
            let words = ctrl_word::decode_words(&tp.ctrl_spad).unwrap();
            let spad = SlotSpad::decode(&tp.slot_spad).unwrap();
            let neff = NeffConfigs::decode(&tp.neff_configs[..]).unwrap();
            let _ = writeln!(
                out,
                "=== TOP_SP {t}: ctrl_spad.bin, {} bytes, {} records ===",
                tp.ctrl_spad.len(),
                tp.record_n
            );
            out.push_str(&hexdump::ctrl(&words, params));
            let _ = writeln!(out, "=== TOP_SP {t}: slot_spad.bin, {} bytes ===", tp.slot_spad.len());
            out.push_str(&hexdump::slot(&spad));
            let _ = writeln!(out, "=== TOP_SP {t}: neff_configs.bin, {} bytes ===", tp.neff_configs.len());
            out.push_str(&hexdump::neff(&neff, params));
        }
        out
    });
    format!("# {file}, rank {}: {shown}\n{body}", images.rank.0)
}

fn json_view(file: &str, images: &RankImages) -> String {
    let (shown, body) = select(images, |topsps| {
        let mut out = String::new();
        for tp in topsps {
            let words = ctrl_word::decode_words(&tp.ctrl_spad).unwrap();
            let _ = writeln!(out, "// TOP_SP {}: ctrl_spad.bin", tp.topsp.0);
            out.push_str(&json::ctrl(&words).unwrap());
        }
        out
    });
    format!("// {file}, rank {}: {shown}\n{body}", images.rank.0)
}

/// The CTRL-mark log of every TOP_SP; first, for each Hier collective, the
/// runtime's selection line, which only the compile knows (an image does
/// not tell a Hier program from a flat one, `docs/wire-format.md` §12).
fn log_view(file: &str, schedule: &Schedule, images: &RankImages) -> String {
    let (shown, body) = select(images, |topsps| {
        let mut out = String::new();
        for tp in topsps {
            let words = ctrl_word::decode_words(&tp.ctrl_spad).unwrap();
            out.push_str(&text_log::ctrl(&words, 0, u32::from(tp.topsp.0)));
        }
        out
    });
    let mut hier = String::new();
    for plan in &schedule.collectives {
        let legs: Vec<(Leg, AlgType)> = plan.legs.iter().filter_map(|&(leg, alg)| Some((leg?, alg))).collect();
        if !legs.is_empty() {
            let _ =
                writeln!(hier, "# collective {} (from the compile):\n{}", plan.index, text_log::hier_selections(&legs));
        }
    }
    format!("# {file}, rank {}: {shown}, device 0\n{hier}{body}", images.rank.0)
}

fn dot_view(file: &str, rank: Rank, schedule: &Schedule, graph: &StepGraph) -> String {
    format!("// {file}: the step graph of rank {} alone\n{}", rank.0, dot::render(schedule, graph))
}

// ---------------------------------------------------------------- the CLI

/// Runs the built `ccc` from the repository root; returns stdout, asserting
/// success.
fn ccc(args: &[&str]) -> String {
    let out =
        Command::new(env!("CARGO_BIN_EXE_ccc")).args(args).current_dir(ROOT).env("NO_COLOR", "1").output().unwrap();
    assert!(out.status.success(), "ccc {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `ccc compile` writes the library's bytes for `ranks`, and `ccc decode`
/// prints what the snapshots show for each file.
fn check_cli(file: &str, compiled: &Compiled, ranks: &[Rank]) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let out_s = out.to_str().unwrap();
    let (r0, r1) = (ranks[0].0.to_string(), ranks[1].0.to_string());
    ccc(&["compile", file, "-o", out_s, "--rank", &r0, "--rank", &r1]);
    let params = compiled.schedule.arch.params();
    for &rank in ranks {
        let images = &compiled.images[rank.0 as usize];
        for tp in &images.topsps {
            let t = tp.topsp.0;
            let at = format!("{file}, rank {}, TOP_SP {t}", rank.0);
            let dir = out.join(format!("rank-{}", rank.0)).join(format!("topsp-{t}"));
            let path = |name: &str| dir.join(name).to_str().unwrap().to_owned();
            let (ctrl, slot_path, neff) = (path("ctrl_spad.bin"), path("slot_spad.bin"), path("neff_configs.bin"));
            assert_eq!(std::fs::read(&ctrl).unwrap(), tp.ctrl_spad, "{at}: ctrl_spad.bin");
            assert_eq!(std::fs::read(&slot_path).unwrap(), tp.slot_spad, "{at}: slot_spad.bin");
            assert_eq!(std::fs::read(&neff).unwrap(), tp.neff_configs.to_vec(), "{at}: neff_configs.bin");
            let words = ctrl_word::decode_words(&tp.ctrl_spad).unwrap();
            let spad = SlotSpad::decode(&tp.slot_spad).unwrap();
            let cfg = NeffConfigs::decode(&tp.neff_configs[..]).unwrap();
            assert_eq!(ccc(&["decode", &ctrl]), hexdump::ctrl(&words, params), "{at}: ccc decode ctrl_spad.bin");
            assert_eq!(ccc(&["decode", &slot_path]), hexdump::slot(&spad), "{at}: ccc decode slot_spad.bin");
            assert_eq!(ccc(&["decode", &neff]), hexdump::neff(&cfg, params), "{at}: ccc decode neff_configs.bin");
            assert_eq!(ccc(&["decode", "--format", "json", &ctrl]), json::ctrl(&words).unwrap(), "{at}: json");
            let topsp = t.to_string();
            assert_eq!(
                ccc(&["decode", "--format", "log", "--topsp", &topsp, &ctrl]),
                text_log::ctrl(&words, 0, u32::from(t)),
                "{at}: log"
            );
        }
    }
}

// ---------------------------------------------------------------- wire rules

/// The rules of `docs/wire-format.md` every image of every example obeys,
/// checked on the decoded bytes: the chain structure (§2), the fields of
/// each op entry (§3), the channel placement (§4) and the config block (§8).
fn check_wire_rules(file: &str, schedule: &Schedule, images: &RankImages) {
    let params = schedule.arch.params();
    let max_channels = schedule.collectives.iter().map(|p| p.channels).max().unwrap();
    assert_eq!(images.topsps.len(), usize::from(placement::topsps_used(schedule)), "{file}: TOP_SPs used (§4)");
    for (t, tp) in images.topsps.iter().enumerate() {
        let t8 = u8::try_from(t).unwrap();
        let at = format!("{file}, rank {}, TOP_SP {t}", images.rank.0);
        assert_eq!(tp.topsp.0, t8, "{at}");
        // §2: whole slots, within the region; CONTINUE only in a slot's last
        // word, followed by an op entry.
        assert!(tp.ctrl_spad.len().is_multiple_of(64) && !tp.ctrl_spad.is_empty(), "{at}: ctrl length");
        assert!(tp.ctrl_spad.len() <= params.ctrl_spad_size as usize, "{at}: CTRL SPAD limit");
        assert!(tp.slot_spad.len() <= params.slot_spad_size as usize, "{at}: SLOT SPAD limit");
        let words = ctrl_word::decode_words(&tp.ctrl_spad).unwrap();
        for (i, (offset, word)) in words.iter().enumerate() {
            if *word == CtrlWord::Continue {
                assert_eq!(i % SLOT_WORDS, SLOT_WORDS - 1, "{at}: CONTINUE at {offset:#x} is not a slot's word 7");
                assert!(matches!(words.get(i + 1), Some((_, CtrlWord::Op(_)))), "{at}: CONTINUE at {offset:#x}");
            }
        }
        let segments = ctrl_spad::decode(&tp.ctrl_spad).unwrap_or_else(|e| panic!("{at}: chain: {e}"));
        // §4: a collective has records on TOP_SPs 0..min(channels, topsp_n).
        let plans: Vec<&CollectivePlan> =
            schedule.collectives.iter().filter(|p| t8 < placement::topsps_for(params, p.channels)).collect();
        assert_eq!(segments.len(), plans.len(), "{at}: one chain per collective using this TOP_SP");
        let hosted = placement::hosted_channels(params, max_channels, t8);
        let inc_complete = params.sem_addr(t8, SemWindow::Inc, sema::COMPLETE).unwrap();
        for (segment, plan) in segments.iter().zip(&plans) {
            let at = format!("{at}, collective {}", plan.index);
            // §6: every END mark increments the TOP_SP's `complete`.
            assert_eq!(segment.compl_addr, inc_complete, "{at}: END compl address");
            assert_eq!(segment.records.len(), plan.phases.len(), "{at}: one record per phase");
            let n = segment.records.len();
            let mask = placement::hosted_channels(params, plan.channels, t8).iter().fold(0u32, |m, c| m | (1 << c));
            for (i, (op, phase)) in segment.records.iter().zip(&plan.phases).enumerate() {
                let at = format!("{at}, record {i}");
                assert_eq!(op.trigger_next, i + 1 < n, "{at}: trigger_next");
                assert_eq!(op.ring_wait_complete, i > 0, "{at}: ring_wait_complete");
                assert_eq!(op.ring_send_complete, i + 1 < n, "{at}: ring_send_complete");
                assert_eq!(op.reporter, t == 0, "{at}: reporter");
                let permute = matches!(
                    plan.op,
                    OpType::Permute | OpType::PermuteReduce | OpType::PermuteImplicit | OpType::PermuteReduceImplicit
                );
                assert_eq!(op.safe_mode, permute, "{at}: safe_mode");
                // All-gather and reduce-scatter run in place in the output buffer.
                let unique = matches!(plan.op, OpType::AllToAll | OpType::AllToAllV);
                assert_eq!(op.unique_tensors, unique, "{at}: unique_tensors");
                let pattern = phase.alg.pattern().unwrap();
                assert_eq!(op.algo_type, pattern.raw(), "{at}: algo_type of {}", phase.alg);
                match pattern {
                    DevicePattern::Ring => {
                        let sub = MetaringType::from_alg(phase.alg).unwrap();
                        assert_eq!(op.algo_sub_type, sub.raw(), "{at}: metaring_type of {}", phase.alg);
                        assert_eq!(op.channel_list(), mask, "{at}: channel_list");
                    }
                    DevicePattern::Mesh => assert_eq!(op.sema_mask(), sema::MESH_MASK, "{at}: sema_mask"),
                }
            }
        }
        // §7 and §8.
        let record_n: usize = segments.iter().map(|s| s.records.len()).sum();
        let spad = SlotSpad::decode(&tp.slot_spad).unwrap();
        assert_eq!(spad.records.len(), record_n, "{at}: slot_spad record_n");
        let neff = NeffConfigs::decode(&tp.neff_configs[..]).unwrap();
        assert_eq!(neff.op_num as usize, record_n, "{at}: op_num");
        assert_eq!(tp.record_n as usize, record_n, "{at}: record_n");
        assert_eq!(usize::from(neff.function_n), schedule.collectives.len(), "{at}: function_n");
        assert_eq!(usize::from(neff.tpb_compl_addr_num), segments.len(), "{at}: tpb_compl_addr_num");
        assert_eq!(neff.topsp_index, t8, "{at}: topsp_index");
        assert_eq!(neff.flags.leader, t == 0, "{at}: leader");
        assert_eq!(neff.channel_ids, hosted, "{at}: channel_ids");
        assert_eq!(usize::from(neff.channel_n), hosted.len(), "{at}: channel_n");
        let read = |i| params.sem_addr(t8, SemWindow::Read, i).unwrap();
        assert_eq!(
            [neff.trigger, neff.complete, neff.trigger_next, neff.complete_prev, neff.tpb_stop_sema],
            [read(0), read(1), read(2), read(3), read(4)],
            "{at}: semaphore handles"
        );
    }
}

// ---------------------------------------------------------------- the list

macro_rules! examples {
    ($($stem:ident),* $(,)?) => {
        /// The stems of every `examples/*.ron`, sorted.
        const LISTED: &[&str] = &[$(stringify!($stem)),*];
        $(
            #[test]
            fn $stem() {
                snapshot_example(stringify!($stem));
            }
        )*
    };
}

examples! {
    allgather_mesh,
    allgather_ring_device_barrier,
    allreduce_hier,
    allreduce_hier_4x32,
    allreduce_inter_rdh_nonpow2,
    allreduce_intra_rdh_continue,
    allreduce_kangaring,
    allreduce_latency_opt_mesh,
    allreduce_ring,
    allreduce_single_cycle_ring,
    allreduce_single_step_mesh_sunda,
    allreduce_tp_groups,
    allreduce_two_step_pod_mesh,
    allreduce_uneven_count,
    alltoall_mesh_grouped,
    alltoallv_mesh,
    broadcast_intra_rdh_nonpow2,
    permute_reduce_mesh,
    permute_ring,
    program_training_step,
    recv_pipeline,
    reduce_ring,
    reduce_scatter_bw_opt_mesh,
    reduce_scatter_hier_mariana,
    send_pipeline,
}

#[test]
fn the_list_matches_the_folder() {
    let mut found: Vec<String> = std::fs::read_dir(format!("{ROOT}/examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    assert!(found.len() >= 18, "at least 18 examples, found {}", found.len());
    assert_eq!(LISTED, found, "the examples! list must name every examples/*.ron, sorted");
}

/// Every op and every algorithm of interface.md has an example.
#[test]
fn the_examples_cover_every_op_and_algorithm() {
    let mut ops = std::collections::BTreeSet::new();
    let mut algs = std::collections::BTreeSet::new();
    for stem in LISTED {
        let src = std::fs::read_to_string(format!("{ROOT}/examples/{stem}.ron")).unwrap();
        let parsed = ccc_compiler::parse::parse(&src).unwrap();
        for c in &parsed.program.collectives {
            ops.insert(c.op);
            algs.insert(c.algorithm.alg_type().unwrap());
            if let ccc_ir::spec::Algorithm::Hier(legs) = &c.algorithm {
                algs.extend(Leg::ALL.iter().filter_map(|&l| legs.get(l).and_then(|a| a.fixed())));
            }
        }
    }
    use OpType::*;
    for op in [
        AllReduce,
        AllGather,
        ReduceScatter,
        Broadcast,
        Reduce,
        AllToAll,
        AllToAllV,
        Send,
        Recv,
        Permute,
        PermuteReduce,
    ] {
        assert!(ops.contains(&op), "no example of {op}");
    }
    for alg in ccc_ir::enums::AlgType::ALL {
        assert!(algs.contains(alg), "no example of {alg}");
    }
}
