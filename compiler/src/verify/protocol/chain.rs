//! Part 1 of the protocol proof: the chain of one (rank, TOP_SP) on its
//! own. Every collective that uses the TOP_SP has one record per phase, in
//! order, covering its steps exactly; the flags run each record into the
//! next and stop at the last; every wait has a signal and every signal a
//! waiter; the END mark carries the TOP_SP's completion semaphore;
//! `channel_list` holds exactly the collective's channels there; mesh
//! records address their events inside the mesh window; credits are in
//! 1..=511; the host's counts match the chain.
//!
//! The check reads the schedule and the TOP_SP's program, nothing else (the
//! rank only names where a defect is), so a compile checks each distinct
//! program once ([`Chains`], a [`Distinct`] table of the programs that
//! passed): the TOP_SPs of a world repeat (an 8,192-rank Hier all-reduce
//! has 8 distinct programs on its 65,536 TOP_SPs). Of a record's
//! `tp_inc_steps` runs the check reads only the steps they add up to, so
//! programs are distinct for it by [`same_chain`]: equal in everything but
//! the runs, and in each record's step total. A rooted op's TOP_SPs are
//! mostly distinct only by their runs (each rank's idle steps come at its
//! place along the chain): a 512-rank Ring broadcast's 2,048 TOP_SPs hold
//! 2,048 programs but a few chains. Only successes are kept, so a
//! defective chain is checked and reported on every rank that has it,
//! with the same message. Since a kept program passed, each of its
//! records' step total is its `step_n` (`check_record`), so a lookup adds
//! up the new program's runs only, against the kept record's `step_n`
//! (equal to the new record's, compared first): the same answer as adding
//! up both, for half the reading of runs (every rank of a world whose
//! programs differ only in their runs reads them).

use super::found::{MAX_SEND_CREDITS, Place, defect, hosted, mismatch};
use crate::lower::distinct::{Distinct, fingerprint_without_runs};
use crate::lower::{Record, SegmentProgram, TopSpProgram};
use crate::placement::{channel_sema, mesh_sema, sema, topsps_for};
use crate::schedule::{CollectivePlan, Phase, Schedule};
use crate::verify::defect::{Defect, DefectKind, SemaphoreWindow};
use ccc_ir::arch::SemWindow;
use ccc_ir::enums::{DevicePattern, MetaringType};
use ccc_ir::id::{Rank, TopSp};
use ccc_ir::wire::tp::TpIncStep;

/// The most bytes of programs a [`Chains`] holds (past it, new programs are
/// checked but not kept).
pub(crate) const CHAINS_BYTES: usize = 16 << 20;

/// The TOP_SP programs whose chains passed [`check`] for one schedule (see
/// the module overview), shared by every thread checking its ranks.
pub(crate) struct Chains(Distinct<()>);

impl Chains {
    /// None yet.
    pub(crate) fn new() -> Chains {
        Chains(Distinct::new(same_chain, CHAINS_BYTES))
    }

    /// [`check`], unless a program [`same_chain`] as `tp` passed it
    /// already: the same verdict, since the check reads only `schedule`
    /// (the one these chains are of) and what `same_chain` compares.
    pub(super) fn check(&self, schedule: &Schedule, rank: Rank, tp: &TopSpProgram) -> Result<(), Box<Defect>> {
        let fingerprint = fingerprint_without_runs(tp);
        if self.0.find(tp, fingerprint, |()| ()).is_some() {
            return Ok(());
        }
        check(schedule, rank, tp)?;
        self.0.keep(tp, fingerprint, (), 0);
        Ok(())
    }
}

/// Whether `b` is alike `a`, a program that passed [`check`], in all that
/// [`check`] reads: equal but for their records' `tp_inc_steps` runs, of
/// which each record's step total (the runs' repeats added up) is equal.
/// Every field of a record is named, so a field added to [`Record`] is
/// compared unless said here. Since `a` passed, each of its records' step
/// total is its `step_n` (`check_record`), so `b`'s totals are compared
/// with `a`'s `step_n`, not added up on both sides.
pub(super) fn same_chain(a: &TopSpProgram, b: &TopSpProgram) -> bool {
    let TopSpProgram { topsp, channels, segments, neff } = a;
    *topsp == b.topsp
        && *channels == b.channels
        && *neff == b.neff
        && segments.len() == b.segments.len()
        && segments.iter().zip(&b.segments).all(|(x, y)| same_segment(x, y))
}

/// [`same_chain`] of one segment: every field, each record's runs by their
/// step total.
fn same_segment(x: &SegmentProgram, y: &SegmentProgram) -> bool {
    let SegmentProgram { collective, records, compl_addr } = x;
    *collective == y.collective
        && *compl_addr == y.compl_addr
        && records.len() == y.records.len()
        && records.iter().zip(&y.records).all(|(p, q)| same_record(p, q))
}

/// [`same_chain`] of one record (`x` passed): every field but its runs,
/// equal, and `y`'s runs' step total `x`'s `step_n`. The cheap fields
/// first; the (mostly empty) event lists by length before their contents.
#[inline]
fn same_record(x: &Record, y: &Record) -> bool {
    let Record { op, tp: _, phase, first_step, step_n, events, event_targets } = x;
    let total = |runs: &[TpIncStep]| runs.iter().map(|e| u64::from(e.repeat)).sum::<u64>();
    *phase == y.phase
        && *first_step == y.first_step
        && *step_n == y.step_n
        && *op == y.op
        && events.len() == y.events.len()
        && event_targets.len() == y.event_targets.len()
        && (events.is_empty() || *events == y.events)
        && (event_targets.is_empty() || *event_targets == y.event_targets)
        && total(&y.tp) == u64::from(*step_n)
}

/// The first defect of the chain of `tp`, on rank `rank`.
pub(super) fn check(schedule: &Schedule, rank: Rank, tp: &TopSpProgram) -> Result<(), Box<Defect>> {
    let params = schedule.arch.params();
    let t = tp.topsp;
    let place = |collective, record| Place { collective, rank, topsp: t, record, step: None };
    let credits = tp.neff.send_credits;
    if credits == 0 || credits > MAX_SEND_CREDITS {
        return Err(defect(place(0, None), DefectKind::CreditsOutOfRange { credits }));
    }
    // A collective has a chain on the TOP_SPs of its channels, unless it
    // has no phase at all (groups of one rank: nothing to move).
    let expected: Vec<&CollectivePlan> =
        schedule.collectives.iter().filter(|p| t.0 < topsps_for(params, p.channels) && !p.phases.is_empty()).collect();
    let found: Vec<u32> = tp.segments.iter().map(|s| s.collective).collect();
    let want: Vec<u32> = expected.iter().map(|p| p.index).collect();
    if found != want {
        let c = found.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(found.len().min(want.len()));
        return Err(defect(
            place(want.get(c).copied().unwrap_or(0), None),
            mismatch("collectives in the chain", found.len() as u64, want.len() as u64),
        ));
    }
    let completion = params.sem_addr(t.0, SemWindow::Inc, sema::COMPLETE).ok();
    let mut events = 0u32;
    for (segment, plan) in tp.segments.iter().zip(expected) {
        let at = |record| Place { collective: plan.index, rank, topsp: t, record, step: None };
        let records = segment.records.len();
        if records != plan.phases.len() {
            return Err(defect(at(None), mismatch("records in the chain", records as u64, plan.phases.len() as u64)));
        }
        let channel_list = hosted(schedule, plan, t.0).iter().fold(0u32, |acc, &c| acc | (1 << c));
        for (i, (record, phase)) in segment.records.iter().zip(&plan.phases).enumerate() {
            // A record's defect is located at its first step.
            let at = Place { step: Some(record.first_step), ..at(Some(i as u32)) };
            check_record(segment, i, record, phase, t, channel_list, &mut events).map_err(|kind| defect(at, kind))?;
        }
        if Some(segment.compl_addr) != completion {
            // The END mark follows the collective's last step.
            let last = Place { step: plan.step_n.checked_sub(1), ..at(None) };
            let (found, expected) = (segment.compl_addr, completion);
            return Err(defect(last, DefectKind::WrongCompletionAddress { found, expected }));
        }
    }
    check_host_counts(schedule, tp, events).map_err(|kind| defect(place(0, None), kind))
}

/// One record of a chain: its flags against its neighbours', its fields
/// against its phase, its channels (RING) or events (MESH). `events` counts
/// the TOP_SP's mesh events so far.
fn check_record(
    segment: &SegmentProgram,
    i: usize,
    record: &Record,
    phase: &Phase,
    t: TopSp,
    channel_list: u32,
    events: &mut u32,
) -> Result<(), DefectKind> {
    check_flags(&segment.records, i)?;
    let op = &record.op;
    let pattern = phase.alg.pattern().unwrap_or(DevicePattern::Ring);
    let steps: u64 = record.tp.iter().map(|e| u64::from(e.repeat)).sum();
    check_fields(&[
        ("algo_type", u64::from(op.algo_type), u64::from(pattern.raw())),
        ("first step", u64::from(record.first_step), u64::from(phase.first_step)),
        ("steps in the record", u64::from(record.step_n), u64::from(phase.step_n)),
        ("steps its tp_inc_steps cover", steps, u64::from(phase.step_n)),
        ("reporter", u64::from(op.reporter), u64::from(t.0 == 0)),
    ])?;
    match pattern {
        DevicePattern::Ring => check_ring(record, phase, channel_list),
        DevicePattern::Mesh => check_mesh(record, events),
    }
}

/// `trigger_next` runs record `i` into the next and stops at the last;
/// its wait has an earlier signal and its signal a waiter.
fn check_flags(records: &[Record], i: usize) -> Result<(), DefectKind> {
    let op = &records[i].op;
    let last = i + 1 == records.len();
    if !op.trigger_next && !last {
        return Err(DefectKind::ChainBroken { next: i as u32 + 1 });
    }
    if op.trigger_next && last {
        return Err(DefectKind::ChainOverrun);
    }
    if op.ring_wait_complete {
        match i.checked_sub(1).and_then(|p| records.get(p)) {
            None => return Err(DefectKind::FirstRecordWaits),
            Some(prev) if !prev.op.ring_send_complete => {
                return Err(DefectKind::WaitWithoutSignal { previous: i as u32 - 1 });
            }
            Some(_) => {}
        }
    }
    if op.ring_send_complete && !records.get(i + 1).is_some_and(|next| next.op.ring_wait_complete) {
        return Err(DefectKind::SignalWithoutWait);
    }
    Ok(())
}

/// The first `(field, found, expected)` that differs.
fn check_fields(fields: &[(&'static str, u64, u64)]) -> Result<(), DefectKind> {
    match fields.iter().find(|(_, found, expected)| found != expected) {
        Some(&(field, found, expected)) => Err(mismatch(field, found, expected)),
        None => Ok(()),
    }
}

/// A RING record: its sub-type, exactly the collective's channels on the
/// TOP_SP, no events.
fn check_ring(record: &Record, phase: &Phase, channel_list: u32) -> Result<(), DefectKind> {
    let op = &record.op;
    let want = MetaringType::from_alg(phase.alg).map_or(0, MetaringType::raw);
    check_fields(&[("algo_sub_type", u64::from(op.algo_sub_type), u64::from(want))])?;
    let list = op.channel_list();
    if let Some(channel) = (0..32u8).find(|c| channel_list & !list & (1 << c) != 0) {
        return Err(DefectKind::ChannelMissing { channel, channel_list: list });
    }
    if let Some(channel) = (0..32u8).find(|c| list & !channel_list & (1 << c) != 0) {
        return Err(DefectKind::ChannelExtra { channel, channel_list: list });
    }
    check_fields(&[("mesh events of a RING record", record.events.len() as u64, 0)])
}

/// A MESH record: its events follow the TOP_SP's earlier ones, inside the
/// mesh event window.
fn check_mesh(record: &Record, events: &mut u32) -> Result<(), DefectKind> {
    let op = &record.op;
    check_fields(&[
        ("sema_shift_offset", u64::from(op.sema_shift_offset()), u64::from(*events)),
        ("sema_mask", u64::from(op.sema_mask()), u64::from(sema::MESH_MASK)),
    ])?;
    let (first, last) = (sema::MESH, sema::MESH + u32::from(sema::MESH_MASK));
    for (e, event) in record.events.iter().enumerate() {
        let index = u32::from(event.sema_index);
        if !(first..=last).contains(&index) {
            return Err(DefectKind::SemaphoreOutOfWindow { index, window: SemaphoreWindow::MeshEvent, first, last });
        }
        let want = u32::from(mesh_sema(*events + e as u32));
        check_fields(&[("mesh event semaphore", u64::from(index), u64::from(want))])?;
    }
    *events += record.events.len() as u32;
    Ok(())
}

/// The EXEC config block against the chain: the mesh events it holds, the
/// host's counts, the flags, and every hosted channel's semaphores inside
/// their window.
fn check_host_counts(schedule: &Schedule, tp: &TopSpProgram, events: u32) -> Result<(), DefectKind> {
    let params = schedule.arch.params();
    let t = tp.topsp;
    if events > u32::from(params.mesh_event_max) {
        return Err(mismatch("mesh events", u64::from(events), u64::from(params.mesh_event_max)));
    }
    let neff = &tp.neff;
    let event_sema: Vec<_> = tp.records().flat_map(|r| r.events.iter().copied()).collect();
    check_fields(&[
        ("op_num", u64::from(neff.op_num), tp.records().count() as u64),
        ("tpb_compl_addr_num", u64::from(neff.tpb_compl_addr_num), tp.segments.len() as u64),
        ("mesh_event_n", neff.mesh_events.len() as u64, event_sema.len() as u64),
        ("leader flag", u64::from(neff.flags.leader), u64::from(t.0 == 0)),
        ("topsp_index", u64::from(neff.topsp_index), u64::from(t.0)),
    ])?;
    if neff.mesh_events != event_sema {
        let entry = neff.mesh_events.iter().zip(&event_sema).position(|(a, b)| a != b).unwrap_or(event_sema.len());
        let (table, records) = (neff.mesh_events.len() as u32, event_sema.len() as u32);
        return Err(DefectKind::EventTable { entry: entry as u32, table, records });
    }
    let (first, last) = (sema::CHANNEL, sema::MESH - 1);
    match (0..tp.channels.len() as u32).map(|j| channel_sema(j) + 1).find(|&recv| recv > last) {
        Some(index) => Err(DefectKind::SemaphoreOutOfWindow { index, window: SemaphoreWindow::Channel, first, last }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::lower::lower;
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};

    /// A rooted ring's TOP_SP 0 on two ranks: programs that differ, in
    /// their runs only.
    fn two_ranks() -> (Schedule, TopSpProgram, TopSpProgram) {
        let schedule = build(&Case::flat(OpType::Broadcast, AlgType::Ring, 8, 4).valid()).unwrap();
        let [a, b] = [Rank(5), Rank(6)].map(|r| lower(&schedule, r).unwrap().topsps.swap_remove(0));
        (schedule, a, b)
    }

    #[test]
    fn programs_alike_but_for_their_runs_are_one_chain() {
        let (schedule, a, b) = two_ranks();
        assert_ne!(a, b);
        assert!(same_chain(&a, &b));
        let chains = Chains::new();
        assert_eq!(chains.check(&schedule, Rank(5), &a), Ok(()));
        assert_eq!(chains.check(&schedule, Rank(6), &b), Ok(()));
    }

    #[test]
    fn a_step_total_that_differs_is_checked_and_named() {
        let (schedule, a, mut b) = two_ranks();
        let record = &mut b.segments[0].records[0];
        record.tp[0].repeat += 1;
        assert!(!same_chain(&a, &b));
        let alone = check(&schedule, Rank(6), &b).unwrap_err();
        assert!(
            matches!(&alone.kind, DefectKind::FieldMismatch { field, .. } if *field == "steps its tp_inc_steps cover"),
            "{alone:?}"
        );
        let chains = Chains::new();
        assert_eq!(chains.check(&schedule, Rank(5), &a), Ok(()));
        assert_eq!(chains.check(&schedule, Rank(6), &b), Err(alone));
    }
}
