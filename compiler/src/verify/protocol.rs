//! The protocol proof: replay the waits and signals the lowered records
//! imply, per TOP_SP and across peers, and show every wait is satisfied.
//!
//! Two parts:
//!
//! 1. **The chain of each (rank, TOP_SP).** Every collective that uses the
//!    TOP_SP has one record per phase, in order, covering its steps
//!    exactly; `trigger_next` runs each record into the next and stops at
//!    the last; every `ring_wait_complete` has an earlier
//!    `ring_send_complete` to wait for and every signal a waiter; the END
//!    mark carries the TOP_SP's completion semaphore; `channel_list` holds
//!    exactly the collective's channels on the TOP_SP; mesh records address
//!    their events inside the mesh window; credits are in 1..=511; the
//!    host's counts (`op_num`, END marks) match the chain.
//! 2. **The replay.** All ranks advance in lockstep, step by step. At each
//!    step every record posts the descriptors its `tp_inc_steps` says, which
//!    must be what the step graph's transfers need; every send increments the
//!    receiver's semaphore for the channel (or its mesh event); after the
//!    step every connection (sender, receiver) must have delivered exactly
//!    the increments the receiver consumes from it — fewer is a wait that is
//!    never satisfied (deadlock), more is a signal nobody consumes. A sender
//!    never has more than its send credits (1..=511, checked per chain)
//!    unconsumed on a connection, so the 9-bit net index that numbers them
//!    (wrapping at 512) never aliases, and since every connection balances
//!    at every step both ends' wrapped indices agree after each step. Every
//!    record that runs to its end posts one TOPSP_CC_STATUS notification; per
//!    TOP_SP they must add up to `op_num`.
//!
//! Steps only ever wait on the previous step of their own rank and on
//! transfers of the same step (the step graph's edges go from step `s - 1`
//! to `s`), so when every count balances at every step, induction over the
//! steps shows that no wait is left unsatisfied and no cycle of waits exists.

use super::{Defect, DefectKind, ProverOptions, VerifyError};
use crate::lower::{RankProgram, Segment, TopSpProgram, mesh_sema, sema, topsps_used};
use crate::schedule::{CollectivePlan, DescTable, Schedule, Transfer};
use crate::step_graph::walk_collective;
use ccc_ir::arch::SemWindow;
use ccc_ir::enums::{DevicePattern, MetaringType};
use ccc_ir::id::{CollectiveIdx, Rank, Step, TopSp};
use ccc_ir::wire::tp::TpIncStep;
use rayon::prelude::*;
use serde::Serialize;

/// Net indices wrap at 512 (`NET_INDEX_LOOP_SIZE`).
pub const NET_INDEX_LOOP: u16 = 512;
/// The largest initial send credit: fewer than [`NET_INDEX_LOOP`], so the
/// unconsumed messages of a connection never alias in the wrapped index.
pub const MAX_SEND_CREDITS: u16 = NET_INDEX_LOOP - 1;

/// What the protocol proof established.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ProtocolProof {
    /// (rank, TOP_SP) chains checked.
    pub chains: u64,
    /// Records checked and replayed.
    pub records: u64,
    /// (rank, TOP_SP, step) points replayed.
    pub steps: u64,
    /// Semaphore increments matched to a wait.
    pub signals: u64,
}

struct Place {
    collective: u32,
    rank: Rank,
    topsp: TopSp,
    record: Option<u32>,
    step: Option<u32>,
}

fn defect(p: Place, kind: DefectKind) -> VerifyError {
    VerifyError::Defect(Box::new(Defect {
        collective: CollectiveIdx(p.collective),
        group: 0,
        rank: Some(p.rank),
        topsp: Some(p.topsp),
        record: p.record,
        step: p.step.map(Step),
        chunk: None,
        kind,
    }))
}

fn mismatch(field: &'static str, found: u64, expected: u64) -> DefectKind {
    DefectKind::FieldMismatch { field, found, expected }
}

/// Proves the protocol of every rank's lowered program. `programs[r]` must
/// be rank `r`'s, for every rank of the world.
///
/// # Errors
///
/// [`VerifyError::Defect`] naming the rank, TOP_SP, record and step.
pub fn prove(schedule: &Schedule, programs: &[RankProgram]) -> Result<ProtocolProof, VerifyError> {
    prove_with(schedule, programs, &ProverOptions::default())
}

/// [`prove`] with explicit prover options.
///
/// # Errors
///
/// As [`prove`].
pub fn prove_with(
    schedule: &Schedule,
    programs: &[RankProgram],
    options: &ProverOptions,
) -> Result<ProtocolProof, VerifyError> {
    let mut proof = ProtocolProof { chains: 0, records: 0, steps: 0, signals: 0 };
    let used = topsps_used(schedule);
    for (r, program) in programs.iter().enumerate() {
        let rank = Rank(r as u32);
        let at = |topsp| Place { collective: 0, rank, topsp, record: None, step: None };
        if program.rank != rank {
            return Err(defect(at(TopSp(0)), mismatch("rank of the program", u64::from(program.rank.0), r as u64)));
        }
        if program.topsps.len() != usize::from(used) {
            return Err(defect(at(TopSp(0)), mismatch("TOP_SPs", program.topsps.len() as u64, u64::from(used))));
        }
        for tp in &program.topsps {
            check_chain(schedule, rank, tp)?;
            proof.chains += 1;
            proof.records += tp.records().count() as u64;
        }
    }
    if programs.len() != schedule.shape.rank_n as usize {
        let at = Place { collective: 0, rank: Rank(programs.len() as u32), topsp: TopSp(0), record: None, step: None };
        return Err(defect(at, mismatch("ranks lowered", programs.len() as u64, u64::from(schedule.shape.rank_n))));
    }
    let mut notified = vec![0u64; programs.len() * usize::from(used)];
    for plan in &schedule.collectives {
        replay(schedule, plan, programs, &mut notified, &mut proof, options)?;
    }
    for (r, program) in programs.iter().enumerate() {
        for tp in &program.topsps {
            let posted = notified[r * usize::from(used) + usize::from(tp.topsp.0)];
            if posted != u64::from(tp.neff.op_num) {
                let at = Place { collective: 0, rank: program.rank, topsp: tp.topsp, record: None, step: None };
                return Err(defect(at, DefectKind::NotificationCount { posted, op_num: tp.neff.op_num }));
            }
        }
    }
    Ok(proof)
}

/// What a rank-local check established.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankCheck {
    /// (rank, TOP_SP) chains checked.
    pub chains: u64,
    /// (rank, TOP_SP, step) points whose posted descriptors were checked.
    pub steps: u64,
}

/// Everything of the proof that one rank's records can show alone, for the
/// ranks given: each chain's structure (records per phase, flags, channel
/// lists, END addresses, mesh windows, credits, host counts), and, step by
/// step, that every record posts exactly the descriptors the step graph's
/// transfers of that rank need. Only the cross-rank balance needs the other
/// ranks. This is what a compile certified by an earlier proof of the same
/// schedule still checks of its own ranks: it catches a build that lowers
/// the same schedule differently.
///
/// # Errors
///
/// [`VerifyError::Defect`] naming the rank, TOP_SP, record and step.
pub fn prove_ranks(schedule: &Schedule, programs: &[RankProgram]) -> Result<RankCheck, VerifyError> {
    let used = topsps_used(schedule);
    let mut check = RankCheck { chains: 0, steps: 0 };
    for program in programs {
        let rank = program.rank;
        if program.topsps.len() != usize::from(used) {
            let at = Place { collective: 0, rank, topsp: TopSp(0), record: None, step: None };
            return Err(defect(at, mismatch("TOP_SPs", program.topsps.len() as u64, u64::from(used))));
        }
        for tp in &program.topsps {
            check_chain(schedule, rank, tp)?;
            check.chains += 1;
        }
        for plan in &schedule.collectives {
            let plan_used = plan.channels.min(schedule.arch.params().topsp_n);
            let tables: Vec<DescTable<'_>> =
                (0..plan_used).map(|t| DescTable::new(plan, &hosted(schedule, plan, t))).collect();
            let mut cursors: Vec<Cursor<'_>> = program.topsps[..usize::from(plan_used)]
                .iter()
                .map(|tp| {
                    let records =
                        tp.segments.iter().find(|s| s.collective == plan.index).map_or(&[][..], |s| &s.records[..]);
                    Cursor { records, record: 0, entry: 0, done: 0 }
                })
                .collect();
            walk_collective(schedule, plan, rank, |node| {
                for (t, (table, cursor)) in tables.iter().zip(&mut cursors).enumerate() {
                    let place = |record| Place {
                        collective: plan.index,
                        rank,
                        topsp: TopSp(t as u8),
                        record,
                        step: Some(node.step),
                    };
                    let (m2s, s2m) = table.step(node.member, node.transfers);
                    let Some((record, posted_m2s, posted_s2m)) = cursor.next() else {
                        return Err(defect(
                            place(None),
                            mismatch("steps its records cover", u64::from(node.step), u64::from(plan.step_n)),
                        ));
                    };
                    for (queue, posted, needed) in [("M2S", posted_m2s, m2s), ("S2M", posted_s2m, s2m)] {
                        if u64::from(posted) != needed {
                            return Err(defect(
                                place(Some(record)),
                                DefectKind::CountMismatch { queue, posted: u64::from(posted), needed },
                            ));
                        }
                    }
                    check.steps += 1;
                }
                Ok(())
            })?;
        }
    }
    Ok(check)
}

/// Channels of `plan` on TOP_SP `t`, ascending.
fn hosted(schedule: &Schedule, plan: &CollectivePlan, t: u8) -> Vec<u8> {
    let n = schedule.arch.params().topsp_n;
    (0..plan.channels).filter(|c| c % n == t).collect()
}

fn check_chain(schedule: &Schedule, rank: Rank, tp: &TopSpProgram) -> Result<(), VerifyError> {
    let params = schedule.arch.params();
    let t = tp.topsp;
    let place = |collective, record| Place { collective, rank, topsp: t, record, step: None };
    let credits = tp.neff.send_credits;
    if credits == 0 || credits > MAX_SEND_CREDITS {
        return Err(defect(place(0, None), DefectKind::CreditsOutOfRange { credits }));
    }
    // A collective has a chain on the TOP_SPs of its channels, unless it
    // has no phase at all (groups of one rank: nothing to move).
    let expected_segments: Vec<&CollectivePlan> =
        schedule.collectives.iter().filter(|p| t.0 < p.channels.min(params.topsp_n) && !p.phases.is_empty()).collect();
    let found: Vec<u32> = tp.segments.iter().map(|s| s.collective).collect();
    let want: Vec<u32> = expected_segments.iter().map(|p| p.index).collect();
    if found != want {
        let c = found.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(found.len().min(want.len()));
        return Err(defect(
            place(want.get(c).copied().unwrap_or(0), None),
            mismatch("collectives in the chain", found.len() as u64, want.len() as u64),
        ));
    }
    let compl = params.sem_addr(t.0, SemWindow::Inc, sema::COMPLETE).unwrap_or(0);
    let mut events = 0u32;
    let mut event_sema = Vec::new();
    for (segment, plan) in tp.segments.iter().zip(expected_segments) {
        check_segment(schedule, rank, t, plan, segment, &mut events)?;
        if segment.compl_addr != compl {
            // The END mark follows the collective's last step.
            let last = Place { step: plan.step_n.checked_sub(1), ..place(plan.index, None) };
            return Err(defect(
                last,
                DefectKind::WrongCompletionAddress { found: segment.compl_addr, expected: compl },
            ));
        }
        event_sema.extend(segment.records.iter().flat_map(|r| r.events.iter().copied()));
    }
    if events > u32::from(params.mesh_event_max) {
        return Err(defect(
            place(0, None),
            mismatch("mesh events", u64::from(events), u64::from(params.mesh_event_max)),
        ));
    }
    let neff = &tp.neff;
    let records = tp.records().count() as u64;
    let checks: [(&'static str, u64, u64); 5] = [
        ("op_num", u64::from(neff.op_num), records),
        ("tpb_compl_addr_num", u64::from(neff.tpb_compl_addr_num), tp.segments.len() as u64),
        ("mesh_event_n", neff.mesh_events.len() as u64, event_sema.len() as u64),
        ("leader flag", u64::from(neff.flags.leader), u64::from(t.0 == 0)),
        ("topsp_index", u64::from(neff.topsp_index), u64::from(t.0)),
    ];
    for (field, found, expected) in checks {
        if found != expected {
            return Err(defect(place(0, None), mismatch(field, found, expected)));
        }
    }
    if neff.mesh_events != event_sema {
        let entry = neff.mesh_events.iter().zip(&event_sema).position(|(a, b)| a != b).unwrap_or(event_sema.len());
        let kind = DefectKind::EventTable {
            entry: entry as u32,
            table: neff.mesh_events.len() as u32,
            records: event_sema.len() as u32,
        };
        return Err(defect(place(0, None), kind));
    }
    for (j, _) in tp.channels.iter().enumerate() {
        let recv = sema::CHANNEL + 2 * j as u32;
        if recv + 1 >= sema::MESH {
            return Err(defect(
                place(0, None),
                DefectKind::SemaphoreOutOfWindow { index: recv + 1, window: "channel semaphores 24..=87" },
            ));
        }
    }
    Ok(())
}

fn check_segment(
    schedule: &Schedule,
    rank: Rank,
    t: TopSp,
    plan: &CollectivePlan,
    segment: &Segment,
    events: &mut u32,
) -> Result<(), VerifyError> {
    let place = |record: Option<u32>| Place { collective: plan.index, rank, topsp: t, record, step: None };
    let n = segment.records.len();
    if n != plan.phases.len() {
        return Err(defect(place(None), mismatch("records in the chain", n as u64, plan.phases.len() as u64)));
    }
    let channel_list = hosted(schedule, plan, t.0).iter().fold(0u32, |acc, &c| acc | (1 << c));
    for (i, (record, phase)) in segment.records.iter().zip(&plan.phases).enumerate() {
        // A record's defect is located at its first step.
        let at = Place { step: Some(record.first_step), ..place(Some(i as u32)) };
        let op = &record.op;
        let last = i + 1 == n;
        if !op.trigger_next && !last {
            return Err(defect(at, DefectKind::ChainBroken { next: i as u32 + 1 }));
        }
        if op.trigger_next && last {
            return Err(defect(at, DefectKind::ChainOverrun));
        }
        if op.ring_wait_complete {
            match i.checked_sub(1).and_then(|p| segment.records.get(p)) {
                None => return Err(defect(at, DefectKind::FirstRecordWaits)),
                Some(prev) if !prev.op.ring_send_complete => {
                    return Err(defect(at, DefectKind::WaitWithoutSignal { previous: i as u32 - 1 }));
                }
                Some(_) => {}
            }
        }
        if op.ring_send_complete && !segment.records.get(i + 1).is_some_and(|next| next.op.ring_wait_complete) {
            return Err(defect(at, DefectKind::SignalWithoutWait));
        }
        let pattern = phase.alg.pattern().unwrap_or(DevicePattern::Ring);
        let steps: u64 = record.tp.iter().map(|e| u64::from(e.repeat)).sum();
        let fields: [(&'static str, u64, u64); 5] = [
            ("algo_type", u64::from(op.algo_type), u64::from(pattern.raw())),
            ("first step", u64::from(record.first_step), u64::from(phase.first_step)),
            ("steps in the record", u64::from(record.step_n), u64::from(phase.step_n)),
            ("steps its tp_inc_steps cover", steps, u64::from(phase.step_n)),
            ("reporter", u64::from(op.reporter), u64::from(t.0 == 0)),
        ];
        for (field, found, expected) in fields {
            if found != expected {
                return Err(defect(at, mismatch(field, found, expected)));
            }
        }
        match pattern {
            DevicePattern::Ring => {
                let want = MetaringType::from_alg(phase.alg).map_or(0, MetaringType::raw);
                if op.algo_sub_type != want {
                    return Err(defect(at, mismatch("algo_sub_type", u64::from(op.algo_sub_type), u64::from(want))));
                }
                let list = op.channel_list();
                if let Some(c) = (0..32u8).find(|c| channel_list & !list & (1 << c) != 0) {
                    return Err(defect(at, DefectKind::ChannelMissing { channel: c, channel_list: list }));
                }
                if let Some(c) = (0..32u8).find(|c| list & !channel_list & (1 << c) != 0) {
                    return Err(defect(at, DefectKind::ChannelExtra { channel: c, channel_list: list }));
                }
                if !record.events.is_empty() {
                    return Err(defect(at, mismatch("mesh events of a RING record", record.events.len() as u64, 0)));
                }
            }
            DevicePattern::Mesh => {
                let fields: [(&'static str, u64, u64); 2] = [
                    ("sema_shift_offset", u64::from(op.sema_shift_offset()), u64::from(*events)),
                    ("sema_mask", u64::from(op.sema_mask()), u64::from(sema::MESH_MASK)),
                ];
                for (field, found, expected) in fields {
                    if found != expected {
                        return Err(defect(at, mismatch(field, found, expected)));
                    }
                }
                for (e, event) in record.events.iter().enumerate() {
                    let index = u32::from(event.sema_index);
                    let want = u32::from(mesh_sema(*events + e as u32));
                    if !(sema::MESH..sema::MESH + u32::from(sema::MESH_MASK) + 1).contains(&index) {
                        return Err(defect(
                            at,
                            DefectKind::SemaphoreOutOfWindow { index, window: "mesh event semaphores 88..=215" },
                        ));
                    }
                    if index != want {
                        return Err(defect(at, mismatch("mesh event semaphore", u64::from(index), u64::from(want))));
                    }
                }
                *events += record.events.len() as u32;
            }
        }
    }
    Ok(())
}

/// A (rank, TOP_SP)'s position in its records' `tp_inc_steps`.
struct Cursor<'a> {
    records: &'a [crate::lower::Record],
    record: usize,
    entry: usize,
    done: u16,
}

impl Cursor<'_> {
    /// The next step's `(record, m2s, s2m)`.
    fn next(&mut self) -> Option<(u32, u32, u32)> {
        loop {
            let record = self.records.get(self.record)?;
            match record.tp.get(self.entry) {
                Some(&TpIncStep { m2s, s2m, repeat }) if self.done < repeat => {
                    self.done += 1;
                    return Some((self.record as u32, m2s, s2m));
                }
                Some(_) => {
                    self.entry += 1;
                    self.done = 0;
                }
                None => {
                    self.record += 1;
                    self.entry = 0;
                    self.done = 0;
                }
            }
        }
    }
}

/// One rank's share of the replay: its chains' cursors, the increments it
/// consumes this step, and what it sends. Reused across steps.
struct RankState<'a> {
    cursors: Vec<Cursor<'a>>,
    /// (sending rank, increments per channel) for each receive.
    receives: Vec<(u32, u64)>,
    transfers: Vec<Transfer>,
    /// (receiving rank, increments per channel, a mesh event) for each send.
    sends: Vec<(usize, u64, bool)>,
    error: Option<VerifyError>,
}

fn replay(
    schedule: &Schedule,
    plan: &CollectivePlan,
    programs: &[RankProgram],
    notified: &mut [u64],
    proof: &mut ProtocolProof,
    options: &ProverOptions,
) -> Result<(), VerifyError> {
    let params = schedule.arch.params();
    let used_all = usize::from(topsps_used(schedule));
    let used = usize::from(plan.channels.min(params.topsp_n));
    let hosted: Vec<Vec<u8>> = (0..used).map(|t| hosted(schedule, plan, t as u8)).collect();
    let tables: Vec<DescTable<'_>> = hosted.iter().map(|h| DescTable::new(plan, h)).collect();
    let rank_n = programs.len();
    let mut states: Vec<RankState<'_>> = programs
        .iter()
        .map(|program| RankState {
            cursors: (0..used)
                .map(|t| {
                    let records = program
                        .topsps
                        .get(t)
                        .and_then(|tp| tp.segments.iter().find(|s| s.collective == plan.index))
                        .map_or(&[][..], |s| &s.records[..]);
                    Cursor { records, record: 0, entry: 0, done: 0 }
                })
                .collect(),
            receives: Vec::new(),
            transfers: Vec::new(),
            sends: Vec::new(),
            error: None,
        })
        .collect();
    // Per receiving rank, (sender, increments per channel) as they arrive.
    let mut arrived: Vec<Vec<(u32, u64)>> = vec![Vec::new(); rank_n];
    let mut event_in: Vec<Vec<(u32, u64)>> = vec![Vec::new(); rank_n * used];
    let located: Vec<(u32, u32)> = (0..rank_n).map(|r| plan.groups.locate(Rank(r as u32))).collect();
    let mut insts = Vec::with_capacity(rank_n);
    for step in 0..plan.step_n {
        let Some((phase_index, t_in_phase)) = plan.phase_at(step) else { break };
        let phase = &plan.phases[phase_index];
        if t_in_phase == 0 {
            insts.clear();
            insts.extend(located.iter().map(|&(_, member)| plan.instance(phase, member)));
        }
        let mesh = phase.alg.pattern() == Some(DevicePattern::Mesh);
        let place = |r: usize, t: usize, record| Place {
            collective: plan.index,
            rank: Rank(r as u32),
            topsp: TopSp(t as u8),
            record,
            step: Some(step),
        };
        // Every rank, in parallel: post what its records say, check it
        // against the step graph, and note what it sends and consumes.
        let one = |(r, st): (usize, &mut RankState<'_>)| {
            let (group, member) = located[r];
            st.transfers.clear();
            st.sends.clear();
            st.receives.clear();
            st.error = None;
            schedule.phase_transfers(plan, group, phase, insts[r], t_in_phase, &mut st.transfers);
            for (t, table) in tables.iter().enumerate() {
                let (m2s, s2m) = table.step(member, &st.transfers);
                let Some((record, posted_m2s, posted_s2m)) = st.cursors[t].next() else {
                    st.error = Some(defect(
                        place(r, t, None),
                        mismatch("steps its records cover", u64::from(step), u64::from(plan.step_n)),
                    ));
                    return;
                };
                if record as usize != phase_index {
                    st.error = Some(defect(
                        place(r, t, Some(record)),
                        mismatch("phase of the record running this step", u64::from(record), phase_index as u64),
                    ));
                    return;
                }
                for (queue, posted, needed) in [("M2S", posted_m2s, m2s), ("S2M", posted_s2m, s2m)] {
                    if u64::from(posted) != needed {
                        st.error = Some(defect(
                            place(r, t, Some(record)),
                            DefectKind::CountMismatch { queue, posted: u64::from(posted), needed },
                        ));
                        return;
                    }
                }
            }
            for tr in &st.transfers {
                let increments = u64::from(tr.src.count) * u64::from(tr.halves.count());
                if tr.from == member {
                    let to = plan.rank(group, tr.to).0 as usize;
                    st.sends.push((to, increments, mesh && tr.to != tr.from));
                }
                if tr.to == member {
                    st.receives.push((plan.rank(group, tr.from).0, increments));
                }
            }
        };
        if rank_n >= options.parallel_from as usize {
            states.par_iter_mut().enumerate().with_min_len(16).for_each(one);
        } else {
            states.iter_mut().enumerate().for_each(one);
        }
        // Then, in rank order: deliver every send's increments.
        for (r, st) in states.iter_mut().enumerate() {
            if let Some(e) = st.error.take() {
                return Err(e);
            }
            proof.steps += used as u64;
            for &(to, increments, event) in &st.sends {
                arrived[to].push((r as u32, increments));
                if event {
                    for (t, channels) in hosted.iter().enumerate() {
                        let total = increments * channels.len() as u64;
                        let list = &mut event_in[to * used + t];
                        match list.iter_mut().find(|(p, _)| *p == r as u32) {
                            Some(e) => e.1 += total,
                            None => list.push((r as u32, total)),
                        }
                    }
                }
            }
        }
        // Every connection delivered exactly what its receiver consumes at
        // this step, on every channel of every TOP_SP alike.
        let channels: u64 = hosted.iter().map(|h| h.len() as u64).sum();
        let first_channel = hosted.first().and_then(|h| h.first()).copied().unwrap_or(0);
        for (r, st) in states.iter_mut().enumerate() {
            // Usually one or two peers: already in order, nothing to sort.
            let got = merge(&mut arrived[r]);
            let want = merge(&mut st.receives);
            let at = place(r, 0, Some(phase_index as u32));
            let sema = |from: u32| {
                if mesh {
                    st.cursors[0]
                        .records
                        .get(phase_index)
                        .and_then(|rec| rec.events.iter().find(|e| e.peer == from))
                        .map_or(sema::MESH, |e| u32::from(e.sema_index))
                } else {
                    sema::CHANNEL
                }
            };
            if let Some(kind) = balance(got, want, sema, first_channel) {
                return Err(defect(at, kind));
            }
            proof.signals += got.iter().map(|&(_, n)| n).sum::<u64>() * channels;
            arrived[r].clear();
        }
        if t_in_phase + 1 == phase.step_n {
            for (r, st) in states.iter().enumerate() {
                for t in 0..used {
                    let incoming = std::mem::take(&mut event_in[r * used + t]);
                    notified[r * used_all + t] += 1;
                    if !mesh {
                        continue;
                    }
                    let Some(record) = st.cursors[t].records.get(phase_index) else { continue };
                    let at = place(r, t, Some(phase_index as u32));
                    for &(peer, sent) in &incoming {
                        let target = record.events.iter().find(|e| e.peer == peer).map_or(0, |e| u64::from(e.target));
                        if target != sent {
                            return Err(defect(
                                at,
                                DefectKind::EventMismatch { peer: Rank(peer), target, arrived: sent },
                            ));
                        }
                    }
                    for e in &record.events {
                        if !incoming.iter().any(|&(p, _)| p == e.peer) {
                            return Err(defect(
                                at,
                                DefectKind::EventMismatch {
                                    peer: Rank(e.peer),
                                    target: u64::from(e.target),
                                    arrived: 0,
                                },
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Sorts (peer, count) pairs by peer and sums duplicates.
fn merge(list: &mut Vec<(u32, u64)>) -> &[(u32, u64)] {
    if !list.is_sorted_by_key(|&(p, _)| p) {
        list.sort_unstable_by_key(|&(p, _)| p);
    }
    list.dedup_by(|next, kept| {
        if next.0 == kept.0 {
            kept.1 += next.1;
            true
        } else {
            false
        }
    });
    list
}

/// Compares what arrived per sender with what the receiver waits for.
fn balance(got: &[(u32, u64)], want: &[(u32, u64)], sema: impl Fn(u32) -> u32, channel: u8) -> Option<DefectKind> {
    let (mut i, mut j) = (0, 0);
    loop {
        let (g, w) = (got.get(i).copied(), want.get(j).copied());
        let (from, arrived, expected) = match (g, w) {
            (None, None) => return None,
            (Some((p, a)), Some((q, e))) if p == q => {
                i += 1;
                j += 1;
                (p, a, e)
            }
            (Some((p, a)), Some((q, _))) if p < q => {
                i += 1;
                (p, a, 0)
            }
            (Some((p, a)), None) => {
                i += 1;
                (p, a, 0)
            }
            (_, Some((q, e))) => {
                j += 1;
                (q, 0, e)
            }
        };
        let from_rank = Rank(from);
        if arrived < expected {
            return Some(DefectKind::SignalsMissing { from: from_rank, sema: sema(from), channel, expected, arrived });
        }
        if arrived > expected {
            return Some(DefectKind::SignalsUnconsumed {
                from: from_rank,
                sema: sema(from),
                channel,
                expected,
                arrived,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::flat_ops;
    use crate::build::build;
    use crate::encode::encode;
    use crate::lower::lower;
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};

    fn lower_all(case: &Case) -> (Schedule, Vec<RankProgram>) {
        let schedule = build(&case.valid()).unwrap();
        let programs: Vec<RankProgram> =
            (0..case.rank_n).map(|r| lower(&schedule, Rank(r)).unwrap_or_else(|e| panic!("{case:?}: {e}"))).collect();
        (schedule, programs)
    }

    fn assert_protocol(case: &Case) {
        let (schedule, programs) = lower_all(case);
        if let Err(e) = prove(&schedule, &programs) {
            panic!(
                "{:?} {:?} n={} local={} channels={}: {e}",
                case.op, case.alg, case.rank_n, case.local_rank_n, case.channels
            );
        }
        for p in &programs {
            let images = encode(p, schedule.arch).unwrap();
            crate::verify::roundtrip::prove(p, &images).unwrap();
        }
    }

    #[test]
    fn every_flat_pairing_replays() {
        for &alg in AlgType::ALL {
            if alg == AlgType::Hier {
                continue;
            }
            for &op in flat_ops(alg) {
                for n in [2u32, 3, 4, 5, 8, 12] {
                    for channels in [1u8, 3, 9] {
                        let Some(mut case) = Case::for_alg(op, alg, n) else { continue };
                        case.channels = channels;
                        assert_protocol(&case);
                    }
                }
            }
        }
    }

    /// Groups of one rank have nothing to move: no record, no END mark,
    /// and the proof still holds (all-to-all keeps its local copy).
    #[test]
    fn groups_of_one_rank_have_empty_chains() {
        for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter, OpType::AllToAll] {
            let mut case = Case::flat(op, AlgType::Ring, 4, 4);
            case.groups = Some(vec![vec![0], vec![1], vec![2], vec![3]]);
            assert_protocol(&case);
            let (_, programs) = lower_all(&case);
            let records = programs[0].topsps[0].records().count();
            assert_eq!(records, usize::from(op == OpType::AllToAll), "{op:?}");
        }
        assert_protocol(&Case::flat(OpType::AllReduce, AlgType::Mesh, 1, 1));
    }

    #[test]
    fn every_hier_composition_replays() {
        for (op, choice) in Case::hier_choices() {
            let mut case = Case::hier(op, &choice, 24, 4);
            case.pod_n = 2;
            case.channels = 4;
            assert_protocol(&case);
        }
    }
}
