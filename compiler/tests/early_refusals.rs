//! A compile refuses what it cannot do before any world-sized work:
//! device limits, the prover's cell budget and the memory budget are
//! checked on a few representative ranks and on the schedule first
//! (issue 9, items 6 and 7). "Before any world-sized work" is shown, not
//! timed: the progress seam reports every stage that counts ranks, and
//! none starts; and the worlds are large enough that lowering them would
//! take minutes or gigabytes.
//!
//! Also: the progress reports of a compile that runs (item 8).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_compiler::lower::{Limit, LowerErrorKind};
use ccc_compiler::pipeline::{
    CompileError, DEFAULT_MEMORY_BUDGET, MemoryError, Options, Progress, Stage, WayOut, compile_source,
};
use ccc_compiler::verify::VerifyError;
use ccc_ir::id::Rank;
use std::sync::{Arc, Mutex};

/// Compiles `src` with `options`, recording every progress report.
fn compile_watched(src: &str, options: Options) -> (Result<(), CompileError>, Vec<Progress>) {
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let options = Options { progress: Some(Arc::new(move |p: Progress| sink.lock().unwrap().push(p))), ..options };
    let result = compile_source(src, &options).map(|_| ());
    let seen = seen.lock().unwrap().clone();
    (result, seen)
}

/// A latency-optimal mesh over 4,096 ranks on Mariana waits on more mesh
/// events per TOP_SP than the device has. Lowering every rank (each
/// lists a transfer per peer) took 57 s before; the refusal comes from
/// the probes, before any rank of the world is lowered.
#[test]
fn a_mesh_too_large_for_the_device_is_refused_before_the_world_is_lowered() {
    let src = "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 65536, arch: Mariana,
        topology: (rank_n: 4096, local_rank_n: 8), channels: 4, algorithm: LatencyOptMesh)";
    for verify in [true, false] {
        let (result, progress) = compile_watched(src, Options { verify, ..Options::default() });
        let Err(CompileError::Lower(e)) = result else { panic!("verify={verify}: {result:?}") };
        assert!(
            matches!(e.kind, LowerErrorKind::Limit { limit: Limit::MeshEvents, .. }) && e.rank == Rank(0),
            "verify={verify}: {e}"
        );
        assert_eq!(progress, [], "verify={verify}: no stage may start");
    }
}

/// A Mesh all-reduce over 1,048,576 ranks: each rank hears from 1,048,575
/// peers in a step, so the probe that lowers rank 0 finds its mesh events
/// far past the device's, and says how many. Finding each peer's event
/// once took a search of the events found so far (quadratic: more than
/// 590 s here); it is a lookup now, and the refusal is the same.
#[test]
fn a_mesh_over_a_million_ranks_is_refused_from_one_rank() {
    let src = "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 4194304, arch: Cayman,
        topology: (rank_n: 1048576, local_rank_n: 16), channels: 1, algorithm: Mesh)";
    let options = Options { ranks: vec![Rank(0)], verify: false, ..Options::default() };
    let (result, progress) = compile_watched(src, options);
    let Err(CompileError::Lower(e)) = result else { panic!("{result:?}") };
    // Both direct phases' peers, summed: 2 x 1,048,575.
    assert!(
        matches!(e.kind, LowerErrorKind::Limit { limit: Limit::MeshEvents, value: 2_097_150, max: 108, .. }),
        "{e}"
    );
    // One rank asked, no proof: lowered directly, no probe first.
    assert_eq!(progress.last().map(|p| (p.stage, p.done, p.total)), Some((Stage::Lower, 1, 1)));
}

/// Recursive halving over 451,522 ranks (not a power of two: a prologue,
/// so not symmetric) would need a full symbolic run of 451,522^2 cells:
/// refused from the schedule, before lowering 451,522 ranks (which took
/// 10 s and 6.2 GB before).
#[test]
fn a_proof_beyond_the_cell_budget_is_refused_before_the_world_is_lowered() {
    let src = "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 1048576, arch: Cayman,
        topology: (rank_n: 451522, local_rank_n: 2), channels: 1, algorithm: InterRdh)";
    for ranks in [vec![], vec![Rank(0)]] {
        let (result, progress) = compile_watched(src, Options { ranks, ..Options::default() });
        let Err(CompileError::Verify(VerifyError::TooLarge { collective: 0, cells, .. })) = result else {
            panic!("{result:?}")
        };
        assert_eq!(cells, 451_522 * 451_522);
        assert_eq!(progress, []);
    }
}

/// Without the proof, every one of the 451,522 ranks' images would be
/// held at once: refused by the memory budget, with emitting fewer ranks
/// as the way out.
#[test]
fn emitting_a_world_beyond_the_memory_budget_is_refused() {
    let src = "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 1048576, arch: Cayman,
        topology: (rank_n: 451522, local_rank_n: 2), channels: 1, algorithm: InterRdh)";
    let (result, progress) = compile_watched(src, Options { verify: false, ..Options::default() });
    let Err(CompileError::Memory(e)) = result else { panic!("{result:?}") };
    assert_eq!((e.proof, e.ranks, e.rank_n, e.budget), (0, 451_522, 451_522, DEFAULT_MEMORY_BUDGET));
    assert!(e.needed > e.budget && e.needed == e.emit, "{e:?}");
    assert_eq!(e.ways_out(), [WayOut::EmitFewerRanks, WayOut::FewerRanks]);
    assert_eq!(progress, []);
}

/// A permute over 1,048,576 ranks: not symmetric, so its proof runs in
/// full on a symbolic buffer of every member, hundreds of megabytes beside
/// each rank's watch (the world's records are streamed a chunk at a time,
/// not held). Under a budget that holds less, it is refused by the
/// estimate whether every rank or one is emitted, naming the ways out;
/// the message names no command-line flag.
#[test]
fn a_proof_beyond_the_memory_budget_is_refused_before_the_world_is_lowered() {
    let src = "Collective(op: Permute, dtype: Bf16, count: 4194304, arch: Cayman,
        topology: (rank_n: 1048576, local_rank_n: 4), channels: 2, algorithm: Ring, peer: 1)";
    let budget = 256 << 20;
    for ranks in [vec![], vec![Rank(0)]] {
        let emitted = if ranks.is_empty() { 1_048_576 } else { 1 };
        let (result, progress) = compile_watched(src, Options { ranks, memory_budget: budget, ..Options::default() });
        let Err(CompileError::Memory(e)) = result else { panic!("{result:?}") };
        let MemoryError { needed, budget: refused_at, proof, emit, ranks, rank_n, proving, emitting } = e.clone();
        assert_eq!((ranks, rank_n, refused_at), (emitted, 1_048_576, budget));
        assert!(proving && emitting, "{e:?}");
        assert!(needed > budget && needed == proof + emit && proof > budget, "{e:?}");
        assert_eq!(e.ways_out(), [WayOut::SkipProof, WayOut::Certificate, WayOut::FewerRanks]);
        let text = e.to_string();
        assert!(text.contains("more than the memory budget of 256.0 MiB"), "{text}");
        assert!(!text.contains("--"), "{text}");
        assert_eq!(progress, []);
    }
}

/// The proof's memory no longer grows with every rank's records: the same
/// permute's proof fits the default budget, and a verify that keeps no
/// rank (`emit` off) holds only a chunk of ranks beside it.
#[test]
fn a_streamed_proof_fits_the_default_budget() {
    let src = "Collective(op: Permute, dtype: Bf16, count: 4194304, arch: Cayman,
        topology: (rank_n: 1048576, local_rank_n: 4), channels: 2, algorithm: Ring, peer: 1)";
    let tight = Options { emit: false, memory_budget: 1, ..Options::default() };
    let Err(CompileError::Memory(e)) = compile_source(src, &tight) else { panic!("not refused") };
    assert!(e.proof < DEFAULT_MEMORY_BUDGET / 2, "{e:?}");
    assert!(e.emit < DEFAULT_MEMORY_BUDGET / 64, "one chunk's output: {e:?}");
    // A verify emits nothing and proves: the only way out is a smaller
    // world, and the message says what it does.
    assert_eq!(e.ways_out(), [WayOut::FewerRanks]);
    let text = e.to_string();
    assert!(text.starts_with("proving 1048576 of 1048576 ranks") && text.contains("lowered at a time"), "{text}");
    assert!(text.contains("budget of 1 byte;"), "{text}");
    // Without the proof, skipping it is no way out.
    let ranks = (0..1024).map(Rank).collect();
    let unproven = Options { verify: false, ranks, memory_budget: 1, ..Options::default() };
    let Err(CompileError::Memory(e)) = compile_source(src, &unproven) else { panic!("not refused") };
    assert_eq!(e.ways_out(), [WayOut::EmitFewerRanks, WayOut::FewerRanks]);
}

/// The budget is an option: the same small compile passes with the
/// default and is refused under a budget of a few kilobytes.
#[test]
fn the_memory_budget_is_an_option() {
    let src = "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 65536, arch: Cayman,
        topology: (rank_n: 16, local_rank_n: 4), channels: 2, algorithm: Ring)";
    assert!(compile_source(src, &Options::default()).is_ok());
    let tight = Options { memory_budget: 4096, ..Options::default() };
    let Err(CompileError::Memory(e)) = compile_source(src, &tight) else { panic!("not refused") };
    assert_eq!(e.budget, 4096);
}

/// A compile that runs reports each stage from 0 to its total, in order
/// per stage: lowering every rank, the protocol over every rank, the
/// round trip of each emitted rank (the three streamed together, started
/// in that order), then the postcondition over every member.
#[test]
fn progress_reports_every_stage_from_start_to_end() {
    let src = "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 65536, arch: Cayman,
        topology: (rank_n: 24, local_rank_n: 4), channels: 2, algorithm: Ring)";
    let (result, progress) = compile_watched(src, Options { ranks: vec![Rank(3), Rank(7)], ..Options::default() });
    result.unwrap();
    for (stage, total) in [(Stage::Lower, 24), (Stage::Postcondition, 24), (Stage::Protocol, 24), (Stage::RoundTrip, 2)]
    {
        let reports: Vec<u64> = progress.iter().filter(|p| p.stage == stage).map(|p| p.done).collect();
        assert!(progress.iter().filter(|p| p.stage == stage).all(|p| p.total == total), "{stage}: {progress:?}");
        assert_eq!(reports.first(), Some(&0), "{stage}: {progress:?}");
        assert_eq!(reports.iter().max(), Some(&total), "{stage}: {progress:?}");
    }
    let stages: Vec<Stage> = progress.iter().map(|p| p.stage).collect();
    let first = |s| stages.iter().position(|&x| x == s).unwrap();
    assert!(first(Stage::Lower) < first(Stage::Protocol));
    assert!(first(Stage::Protocol) < first(Stage::RoundTrip));
    assert!(first(Stage::RoundTrip) < first(Stage::Postcondition));
    // The postcondition starts once every rank is lowered.
    let lowered = progress.iter().position(|p| p.stage == Stage::Lower && p.done == 24).unwrap();
    assert!(lowered < first(Stage::Postcondition), "{progress:?}");
    // Without --verify: lowering the ranks asked for, nothing else.
    let (result, progress) =
        compile_watched(src, Options { ranks: vec![Rank(3)], verify: false, ..Options::default() });
    result.unwrap();
    assert!(progress.iter().all(|p| p.stage == Stage::Lower && p.total == 1), "{progress:?}");
}

/// A schedule handed to the lowering entry points with more channels than
/// a ring channel list's 32 bits (not one `build` makes: every field of a
/// `Schedule` is public) is refused with a typed error, not a shift
/// overflow.
#[test]
fn a_schedule_of_too_many_channels_is_refused_by_lowering() {
    let src = "Collective(op: AllGather, dtype: F32, count: 1024, arch: Cayman,
        topology: (rank_n: 2, local_rank_n: 1), channels: 1, algorithm: Ring)";
    let valid = ccc_compiler::validate::validate(&ccc_compiler::parse::parse(src).unwrap().program).unwrap();
    let mut schedule = ccc_compiler::build::build(&valid).unwrap();
    schedule.collectives[0].channels = 33;
    let refused =
        |e: &ccc_compiler::lower::LowerError| matches!(e.kind, LowerErrorKind::TooManyChannels { channels: 33 });
    let by_records = ccc_compiler::lower::lower(&schedule, Rank(0)).unwrap_err();
    let by_steps = ccc_compiler::lower::lower_by_steps(&schedule, Rank(0)).unwrap_err();
    let ranks = ccc_compiler::pipeline::lower_ranks(&schedule, &[Rank(0)]).unwrap_err();
    assert!(refused(&by_records) && refused(&by_steps), "{by_records}; {by_steps}");
    assert!(ranks.to_string().contains("33 ring channels"), "{ranks}");
}

/// A ring Broadcast over one group of 16,384 ranks has a symbolic buffer
/// of 16,384^2 cells, twice the full run's limit, so it was refused up
/// front; but its path run is taken member-major, on rows held as runs
/// (`paths::member_major`), and needs tens of megabytes. It is proven now,
/// and the reduce, its mirror, of one element (every block but one
/// empty) too. An all-gather as large, which only a full run would
/// prove, is still refused before any rank is lowered (below, the
/// 451,522-rank recursive halving).
#[test]
fn a_rooted_ring_beyond_the_cell_budget_is_proven_member_major() {
    for (op, count) in [("Broadcast", 1 << 20), ("Reduce, reduce: Add", 1)] {
        let src = format!(
            "Collective(op: {op}, dtype: Bf16, count: {count}, root: 3, arch: Cayman,
             topology: (rank_n: 16384, local_rank_n: 64), channels: 1, algorithm: Ring)"
        );
        let options = Options { emit: false, ..Options::default() };
        let (_, _, compiled) = compile_source(&src, &options).unwrap_or_else(|e| panic!("{op}: {e}"));
        let proof = compiled.proof.unwrap();
        assert_eq!(proof.postcondition[0].members, 16384, "{op}");
    }
}

/// Sixty Mesh permutes pair ranks 0 and 1, then one pairs ranks 2 and 3,
/// on Sunda (50 mesh events per TOP_SP). Rank 2 needs one event and
/// lowers; rank 0 needs 60. Compiled alone without the proof, rank 2's
/// bytes were written, and the signature a world that cannot load the
/// program would never match: the other ranks are judged on the schedule
/// now, as `ccc check` judges them.
#[test]
fn named_ranks_without_the_proof_are_refused_when_another_rank_does_not_fit() {
    let permute = |a: u32, b: u32| {
        format!(
            "Collective(op: PermuteReduce, dtype: F32, reduce: Add, count: 1024, arch: Sunda, \
             topology: (rank_n: 8, local_rank_n: 8), channels: 1, algorithm: Mesh, peers: [({a}, {b}), ({b}, {a})])"
        )
    };
    let mut collectives = vec![permute(0, 1); 60];
    collectives.push(permute(2, 3));
    let src = format!("Program(collectives: [{}])", collectives.join(", "));
    let alone = |ranks: &[u32], verify: bool| {
        let options = Options { ranks: ranks.iter().copied().map(Rank).collect(), verify, ..Options::default() };
        compile_source(&src, &options).map(|_| ())
    };
    let Err(CompileError::Unlowered(u)) = alone(&[2], false) else { panic!("{:?}", alone(&[2], false)) };
    assert_eq!((u.exceeded.rank, u.exceeded.collective), (Some(0), 50), "{u}");
    assert_eq!((u.exceeded.refusal.limit, u.exceeded.refusal.needed, u.exceeded.spent), (Limit::MeshEvents, 1, 50));
    let said = u.to_string();
    assert!(
        said.starts_with("rank 0, collective 50: mesh events per TOP_SP is at most 50 on Sunda; this choice needs 51"),
        "{said}"
    );
    assert!(said.contains("but rank 0 does not (it was not compiled, and no proof lowered it)"), "{said}");
    // Rank 0 named: its own lowering refuses it, at its TOP_SP and step.
    let Err(CompileError::Lower(e)) = alone(&[0, 2], false) else { panic!("{:?}", alone(&[0, 2], false)) };
    assert_eq!((e.rank, e.collective.map(|c| c.0)), (Rank(0), Some(50)), "{e}");
    assert!(matches!(e.kind, LowerErrorKind::Limit { limit: Limit::MeshEvents, value: 51, max: 50, .. }), "{e}");
    // With the proof, every rank is lowered, and rank 0 refuses it.
    let Err(CompileError::Lower(e)) = alone(&[2], true) else { panic!("{:?}", alone(&[2], true)) };
    assert_eq!(e.rank, Rank(0), "{e}");
    // A program every rank fits still compiles rank 2 alone.
    let fits = src.replacen(&format!("{}, ", permute(0, 1)), "", 20);
    let options = Options { ranks: vec![Rank(2)], verify: false, ..Options::default() };
    assert!(compile_source(&fits, &options).is_ok());
}

/// A broadcast over 16,384 ranks: `Auto` chooses InterRdh, whose proof
/// needs more symbolic cells than the prover holds, so a default compile
/// is refused before any rank is lowered. The refusal said only to skip
/// the proof; it names Ring now, the cheapest of `Auto`'s other choices
/// that the prover holds, and Ring written compiles proven. A written
/// InterRdh names nothing: no choice was weighed.
#[test]
fn a_choice_too_large_to_prove_names_one_auto_weighed_that_is_not() {
    let src = |alg: &str| {
        format!(
            "Collective(op: Broadcast, dtype: Bf16, count: 1048576, arch: Cayman, \
             topology: (rank_n: 16384, local_rank_n: 16), channels: 1, algorithm: {alg}, root: 0)"
        )
    };
    let (result, progress) = compile_watched(&src("Auto"), Options::default());
    let Err(CompileError::Verify(VerifyError::TooLarge { collective: 0, provable, .. })) = &result else {
        panic!("{result:?}")
    };
    assert_eq!(provable.as_deref(), Some("Ring"));
    let said = result.unwrap_err().to_string();
    assert!(
        said.ends_with(", or choose Ring, the cheapest of the other choices `Auto` weighed that the prover holds"),
        "{said}"
    );
    assert_eq!(progress, [], "no stage may start");
    let options = Options { emit: false, ..Options::default() };
    let ring = compile_source(&src("Ring"), &options).map(|(_, _, c)| c.proof.is_some());
    assert!(matches!(ring, Ok(true)), "{ring:?}");
    let (written, _) = compile_watched(&src("InterRdh"), Options::default());
    assert!(matches!(written, Err(CompileError::Verify(VerifyError::TooLarge { provable: None, .. }))), "{written:?}");
}
