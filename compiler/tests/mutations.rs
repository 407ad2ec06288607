//! The verifier has teeth: each seeded defect is caught, with its own
//! specific message naming where it is.
//!
//! Step-graph defects are seeded through a `TransferSource` that wraps the
//! schedule; record defects by editing a lowered program. Every test first
//! checks that the unmutated schedule is proven, so a test can only pass
//! because the mutation was caught.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_compiler::build::build;
use ccc_compiler::lower::RankProgram;
use ccc_compiler::parse::parse;
use ccc_compiler::pipeline::lower_ranks;
use ccc_compiler::schedule::{CollectivePlan, Schedule, Transfer};
use ccc_compiler::validate::validate;
use ccc_compiler::verify::postcondition::{AsBuilt, Site, TransferSource, prove as prove_postcondition};
use ccc_compiler::verify::protocol::prove as prove_protocol;
use ccc_compiler::verify::{Defect, DefectKind, VerifyError};
use ccc_ir::id::{Chunk, Rank, Step, TopSp};

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

fn defect(result: Result<impl std::fmt::Debug, VerifyError>) -> Defect {
    match result {
        Err(VerifyError::Defect(d)) => *d,
        other => panic!("expected a defect, got {other:?}"),
    }
}

/// Wraps the schedule's transfers with an edit of (member, step, list).
struct Mutated<F: Fn(u32, u32, &mut Vec<Transfer>) + Sync>(F);

impl<F: Fn(u32, u32, &mut Vec<Transfer>) + Sync> TransferSource for Mutated<F> {
    fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
        AsBuilt.transfers(s, plan, site, out);
        (self.0)(site.index, site.step, out);
    }
}

#[test]
fn a_dropped_step_leaves_contributions_missing() {
    let s = schedule(RING);
    prove_postcondition(&s, &AsBuilt).unwrap();
    // Nobody runs step 3 (a reduce-scatter step): both sides agree, so
    // every transfer matches, but the contributions it carried never arrive.
    let d = defect(prove_postcondition(
        &s,
        &Mutated(|_, step, out: &mut Vec<Transfer>| {
            if step == 3 {
                out.clear();
            }
        }),
    ));
    assert!(matches!(&d.kind, DefectKind::Missing { contributors } if !contributors.is_empty()), "{d}");
    // Located after the collective's last step (step 13 of 14).
    assert_eq!((d.rank, d.step, d.chunk), (Some(Rank(0)), Some(Step(13)), Some(Chunk(0))));
    assert!(
        d.to_string().starts_with("collective 0, rank 0, step 13, chunk 0: ends without the contribution of rank"),
        "{d}"
    );
}

#[test]
fn a_swapped_peer_leaves_a_receive_unmatched() {
    let s = schedule(RING);
    prove_postcondition(&s, &AsBuilt).unwrap();
    // At step 2, rank 5 sends to rank 7 instead of its ring neighbour 6.
    let d = defect(prove_postcondition(
        &s,
        &Mutated(|index, step, out: &mut Vec<Transfer>| {
            if index == 5 && step == 2 {
                for t in out.iter_mut().filter(|t| t.from == 5) {
                    t.to = 7;
                }
            }
        }),
    ));
    assert_eq!(d.kind, DefectKind::UnmatchedReceive { from: Rank(5) }, "{d}");
    assert_eq!((d.rank, d.step), (Some(Rank(6)), Some(Step(2))));
    assert_eq!(
        d.to_string(),
        "collective 0, rank 6, step 2, chunk 2: waits for this chunk from rank 5, which does not send it at this step"
    );
}

#[test]
fn a_chunk_reduced_twice_is_a_duplicate_contribution() {
    let s = schedule(RING);
    prove_postcondition(&s, &AsBuilt).unwrap();
    // At step 1, the fold from rank 2 into rank 3 is listed twice on both
    // sides: every transfer still matches, but rank 3 would fold the same
    // partial sum in twice.
    let d = defect(prove_postcondition(
        &s,
        &Mutated(|index, step, out: &mut Vec<Transfer>| {
            if step == 1
                && (index == 2 || index == 3)
                && let Some(t) = out.iter().find(|t| t.from == 2 && t.to == 3).copied()
            {
                out.push(t);
            }
        }),
    ));
    assert!(matches!(d.kind, DefectKind::Duplicate { from: Rank(2), .. }), "{d}");
    assert_eq!((d.rank, d.step), (Some(Rank(3)), Some(Step(1))));
    assert!(d.to_string().contains("a second time (arriving from rank 2)"), "{d}");
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
    assert_eq!(d.kind, DefectKind::WrongCompletionAddress { found: 0x82_8000_1808, expected: 0x82_8000_1804 });
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

/// The rank-local check (what a certified compile runs on its own ranks)
/// catches a record that posts the wrong count without the other ranks:
/// a build that lowers the same schedule differently cannot ride on another
/// build's certificate.
#[test]
fn the_rank_local_check_catches_a_wrong_count_on_its_own() {
    let s = schedule(RING);
    let mut programs = world(&s);
    let mut one = vec![programs.swap_remove(5)];
    ccc_compiler::verify::protocol::prove_ranks(&s, &one).unwrap();
    one[0].topsps[0].segments[0].records[1].tp[0].m2s += 1;
    let d = defect(ccc_compiler::verify::protocol::prove_ranks(&s, &one));
    assert!(matches!(d.kind, DefectKind::CountMismatch { queue: "M2S", .. }), "{d}");
    assert_eq!((d.rank, d.topsp, d.record, d.step), (Some(Rank(5)), Some(TopSp(0)), Some(1), Some(Step(7))));
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
