//! The verifier has teeth: each seeded defect is caught through the one
//! door, `verify::prove`, with its own specific message naming where it is.
//!
//! Record defects are seeded by editing a lowered program. (Step-graph
//! defects are seeded through the crate-private transfer source, in
//! `verify/postcondition/tests.rs`.) Every test first checks that the
//! unmutated schedule is proven, so a test can only pass because the
//! mutation was caught; each defect here is the only one found.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_compiler::build::build;
use ccc_compiler::lower::RankProgram;
use ccc_compiler::parse::parse;
use ccc_compiler::pipeline::lower_ranks;
use ccc_compiler::schedule::Schedule;
use ccc_compiler::validate::validate;
use ccc_compiler::verify::{Defect, DefectKind, ProverOptions, VerifyError, prove};
use ccc_ir::id::{Rank, Step, TopSp};

/// An 8-rank ring all-reduce on two nodes, two channels on two TOP_SPs.
const RING: &str = "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 65536, arch: Cayman,
    topology: (rank_n: 8, local_rank_n: 4), channels: 2, algorithm: Ring)";

/// A 6-rank mesh all-reduce (two single-step phases, mesh events).
const MESH: &str = "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 6000, arch: Cayman,
    topology: (rank_n: 6, local_rank_n: 6), channels: 1, algorithm: Mesh)";

fn schedule(src: &str) -> Schedule {
    build(&validate(&parse(src).unwrap().program).unwrap()).unwrap()
}

fn world(schedule: &Schedule) -> Vec<RankProgram> {
    let ranks: Vec<Rank> = (0..schedule.shape.rank_n).map(Rank).collect();
    lower_ranks(schedule, &ranks).unwrap()
}

/// The one defect found (a seeded defect that echoed would show here).
fn defect(result: Result<impl std::fmt::Debug, VerifyError>) -> Defect {
    match result {
        Err(VerifyError::Defects(d)) => {
            assert_eq!(d.total(), 1, "{d}");
            d.first
        }
        other => panic!("expected a defect, got {other:?}"),
    }
}

/// The whole proof of `programs`, every rank's.
fn prove_protocol(s: &Schedule, programs: &[RankProgram]) -> Result<(), VerifyError> {
    prove(s, programs, &[], &ProverOptions::default()).map(|_| ())
}

fn mutate_records(src: &str, edit: impl FnOnce(&mut Vec<RankProgram>)) -> Defect {
    let s = schedule(src);
    let mut programs = world(&s);
    prove_protocol(&s, &programs).unwrap();
    edit(&mut programs);
    defect(prove_protocol(&s, &programs))
}

#[test]
fn a_dropped_trigger_next_breaks_the_chain() {
    let d = mutate_records(RING, |p| p[3].topsps[1].segments[0].records[0].op.trigger_next = false);
    assert_eq!(d.kind, DefectKind::ChainBroken { next: 1 });
    assert_eq!((d.rank, d.topsp, d.record), (Some(Rank(3)), Some(TopSp(1)), Some(0)));
    assert_eq!(
        d.to_string(),
        "collective 0, rank 3, TOP_SP 1, record 0, step 0: trigger_next is 0 but record 1 follows: the chain stops here and the records after it never run"
    );
}

#[test]
fn a_cleared_channel_bit_is_a_missing_channel() {
    // Channel 1 lives on TOP_SP 1.
    let d = mutate_records(RING, |p| p[2].topsps[1].segments[0].records[1].op.operand &= !(1 << 1));
    assert_eq!(d.kind, DefectKind::ChannelMissing { channel: 1, channel_list: 0 });
    assert_eq!((d.rank, d.topsp, d.record), (Some(Rank(2)), Some(TopSp(1)), Some(1)));
    assert!(d.to_string().contains("channel 1 carries this collective's transfers"), "{d}");
}

#[test]
fn a_wrong_completion_address_is_named_with_the_right_one() {
    let d = mutate_records(RING, |p| p[0].topsps[0].segments[0].compl_addr += 4);
    assert_eq!(d.kind, DefectKind::WrongCompletionAddress { found: 0x82_8000_1808, expected: Some(0x82_8000_1804) });
    assert_eq!((d.rank, d.topsp), (Some(Rank(0)), Some(TopSp(0))));
}

#[test]
fn a_wait_with_no_matching_signal_deadlocks() {
    // Record 0 no longer signals its completion; record 1 still waits for it.
    let d = mutate_records(RING, |p| p[4].topsps[0].segments[0].records[0].op.ring_send_complete = false);
    assert_eq!(d.kind, DefectKind::WaitWithoutSignal { previous: 0 });
    assert_eq!((d.rank, d.topsp, d.record), (Some(Rank(4)), Some(TopSp(0)), Some(1)));
    assert!(d.to_string().ends_with("which never signals (ring_send_complete is 0): deadlock"), "{d}");
}

#[test]
fn a_record_posting_the_wrong_count_is_caught_at_its_step() {
    // Rank 1's reduce-scatter record expects one more receive descriptor per step.
    let d = mutate_records(RING, |p| p[1].topsps[0].segments[0].records[0].tp[0].s2m += 1);
    assert!(matches!(d.kind, DefectKind::CountMismatch { queue: "S2M", .. }), "{d}");
    assert_eq!((d.rank, d.topsp, d.record, d.step), (Some(Rank(1)), Some(TopSp(0)), Some(0), Some(Step(0))));
}

#[test]
fn a_mesh_event_waiting_for_too_much_is_caught() {
    // The event waits for one increment more, in the record and in the
    // EXEC config's table alike: only the step graph can tell.
    let d = mutate_records(MESH, |p| {
        let tp = &mut p[2].topsps[0];
        tp.segments[0].records[0].events[0].target += 1;
        tp.neff.mesh_events[0].target += 1;
    });
    assert!(matches!(d.kind, DefectKind::EventMismatch { .. }), "{d}");
    assert_eq!((d.rank, d.topsp, d.record), (Some(Rank(2)), Some(TopSp(0)), Some(0)));
    assert!(d.to_string().contains("waits for 3 increments; the peer sends 2"), "{d}");
}

#[test]
fn a_mesh_event_table_that_disagrees_with_its_records_is_caught() {
    let d = mutate_records(MESH, |p| p[2].topsps[0].segments[0].records[0].events[0].target += 1);
    assert_eq!(d.kind, DefectKind::EventTable { entry: 0, table: 10, records: 10 });
}

#[test]
fn send_credits_outside_1_to_511_are_refused() {
    let d = mutate_records(RING, |p| p[0].topsps[0].neff.send_credits = 0);
    assert_eq!(d.kind, DefectKind::CreditsOutOfRange { credits: 0 });
    // 512 unconsumed messages would alias in the 9-bit net index.
    let d = mutate_records(RING, |p| p[6].topsps[1].neff.send_credits = 512);
    assert_eq!(d.kind, DefectKind::CreditsOutOfRange { credits: 512 });
    assert_eq!((d.rank, d.topsp), (Some(Rank(6)), Some(TopSp(1))));
}

#[test]
fn a_notification_count_the_host_would_not_expect_is_caught() {
    let d = mutate_records(RING, |p| p[5].topsps[1].neff.op_num += 1);
    assert!(matches!(d.kind, DefectKind::FieldMismatch { field: "op_num", .. }), "{d}");
}

/// Every defect is reported, not only the first: two ranks with a broken
/// chain give two defects, in rank order; the message is the first's,
/// with the count of the others.
#[test]
fn defects_on_two_ranks_are_both_reported() {
    let s = schedule(RING);
    let mut programs = world(&s);
    programs[3].topsps[1].segments[0].records[0].op.trigger_next = false;
    programs[6].topsps[0].neff.send_credits = 0;
    let Err(VerifyError::Defects(d)) = prove_protocol(&s, &programs) else { panic!("proven") };
    assert_eq!(d.total(), 2, "{d}");
    assert_eq!((d.first.rank, d.more[0].rank), (Some(Rank(3)), Some(Rank(6))));
    assert_eq!(d.more[0].kind, DefectKind::CreditsOutOfRange { credits: 0 });
    assert_eq!(
        d.to_string(),
        "collective 0, rank 3, TOP_SP 1, record 0, step 0: trigger_next is 0 but record 1 follows: the chain stops here and the records after it never run (and 1 more defect)"
    );
}

/// A 16-rank Hier all-reduce: its TOP_SP programs repeat across ranks.
const HIER: &str = "Collective(op: AllReduce, dtype: Bf16, reduce: Add, count: 65536, arch: Cayman,
    topology: (rank_n: 16, local_rank_n: 4), channels: 2,
    algorithm: Hier((intra_reduce_scatter: Kangaring, inter_all_reduce: InterRdh, intra_all_gather: Ring)))";

/// The round trip decodes a TOP_SP program repeated across ranks once and
/// takes a later image whose bytes equal the proven one's as proven; an
/// image whose bytes differ is decoded, so each tampered copy of a
/// repeated program is caught on its own rank, with the same message.
#[test]
fn a_tampered_image_is_caught_on_every_rank_even_when_its_program_repeats() {
    use ccc_compiler::encode::{RankImages, encode};
    use ccc_ir::wire::neff_configs::{FLAG_DBG_CC_NOP, FLAGS};
    let s = schedule(HIER);
    let programs = world(&s);
    let mut images: Vec<RankImages> = programs.iter().map(|p| encode(p, s.arch).unwrap()).collect();
    prove(&s, &programs, &images, &ProverOptions::default()).unwrap();
    // Three ranks whose TOP_SP 0 programs are equal (so their images are).
    let same: Vec<usize> = (1..programs.len()).filter(|&r| programs[r].topsps[0] == programs[0].topsps[0]).collect();
    assert!(same.len() >= 2, "no repeated TOP_SP program: the test would not reach the memo");
    let (a, b) = (same[0], same[1]);
    for r in [a, b] {
        assert_eq!(images[r].topsps[0], images[0].topsps[0]);
        images[r].topsps[0].neff_configs[FLAGS] ^= FLAG_DBG_CC_NOP;
    }
    let Err(VerifyError::Defects(d)) = prove(&s, &programs, &images, &ProverOptions::default()) else {
        panic!("proven")
    };
    assert_eq!(d.total(), 2, "{d}");
    let mut found = std::iter::once(&d.first).chain(&d.more);
    for r in [a, b] {
        let defect = found.next().unwrap();
        assert_eq!((defect.rank, defect.topsp), (Some(Rank(r as u32)), Some(TopSp(0))));
        let kind = DefectKind::RoundTrip {
            image: "neff_configs",
            detail: "the decoded block differs from the lowered one".into(),
        };
        assert_eq!(defect.kind, kind);
    }
}

/// The chain check runs once per distinct TOP_SP program and keeps only
/// successes: when a repeated program's chain is broken on two ranks (and
/// the intact copy is proven on the others), each broken copy is caught
/// on its own rank, with the message the check gives without a memo.
#[test]
fn a_broken_chain_is_caught_on_every_rank_even_when_its_program_repeats() {
    let s = schedule(HIER);
    let mut programs = world(&s);
    prove_protocol(&s, &programs).unwrap();
    let same: Vec<usize> = (1..programs.len()).filter(|&r| programs[r].topsps[0] == programs[0].topsps[0]).collect();
    assert!(same.len() >= 2, "no repeated TOP_SP program: the test would not reach the memo");
    let (a, b) = (same[0], same[1]);
    for r in [a, b] {
        programs[r].topsps[0].segments[0].records[0].op.trigger_next = false;
    }
    let Err(VerifyError::Defects(d)) = prove_protocol(&s, &programs) else { panic!("proven") };
    assert_eq!(d.total(), 2, "{d}");
    let mut found = std::iter::once(&d.first).chain(&d.more);
    for r in [a, b] {
        let defect = found.next().unwrap();
        assert_eq!((defect.rank, defect.topsp, defect.record), (Some(Rank(r as u32)), Some(TopSp(0)), Some(0)));
        assert_eq!(defect.kind, DefectKind::ChainBroken { next: 1 });
        assert_eq!(
            defect.to_string(),
            format!(
                "collective 0, rank {r}, TOP_SP 0, record 0, step 0: trigger_next is 0 but record 1 follows: the \
                 chain stops here and the records after it never run"
            )
        );
    }
}

/// A TOP_SP numbered past those the schedule uses (a program not from
/// lowering) is a defect named on it (its chain holds a collective the
/// schedule puts on no such TOP_SP), not an index out of bounds.
#[test]
fn a_topsp_numbered_past_those_used_is_caught() {
    let d = mutate_records(RING, |p| p[5].topsps[1].topsp = TopSp(9));
    assert_eq!((d.rank, d.topsp), (Some(Rank(5)), Some(TopSp(9))), "{d}");
    assert!(matches!(d.kind, DefectKind::FieldMismatch { field: "collectives in the chain", .. }), "{d}");
}
