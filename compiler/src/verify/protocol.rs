//! The protocol proof: the waits and signals the lowered records imply,
//! per TOP_SP and across peers, are all satisfied.
//!
//! Each rank is checked on its own, on every core:
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
//! 2. **The records against the step graph.** Step by step, every record
//!    posts exactly the descriptors (data and semaphore increments) that
//!    the rank's transfers in the step graph need; each mesh event waits
//!    for exactly the increments the step graph has its peer send; every
//!    record that runs to its end posts one TOPSP_CC_STATUS notification,
//!    and per TOP_SP they add up to `op_num`. In a symmetric group (see
//!    `symmetry`) a rank's transfers are member 0's moved to it, so its
//!    needs come from member 0's, without listing its transfers again:
//!    the same counts for every member when every block costs the same
//!    (and then a record equal to member 0's counts folded is checked
//!    whole), or per member from member 0's costs of small and big blocks.
//!
//! **Why no wait is left unsatisfied.** The postcondition proof matches,
//! at every step, every transfer a rank receives to exactly one identical
//! transfer its peer sends, and leaves no send unmatched (whichever halves
//! it moves). Both ends count a transfer's semaphore increments from the
//! transfer itself (blocks x halves, on every channel), and part 2 shows
//! each end's records post exactly those: so at every step every
//! connection (sender, receiver) delivers exactly the increments its
//! receiver consumes. Fewer would be a wait never satisfied; more, a signal
//! nobody consumes. A sender never has more than its send credits
//! (1..=511, checked per chain) unconsumed on a connection, so the 9-bit
//! net index that numbers them (wrapping at 512) never aliases, and since
//! every connection balances at every step both ends' wrapped indices agree
//! after each step. Steps only ever wait on the previous step of their own
//! rank and on transfers of the same step (the step graph's edges go from
//! step `s - 1` to `s`), so by induction over the steps no wait is left
//! unsatisfied and no cycle of waits exists.

use super::symmetry::{Rotation, Symmetry};
use super::{Defect, DefectKind, VerifyError};
use crate::lower::{RankProgram, Segment, TopSpProgram};
use crate::placement::{channel_sema, hosted_channels, mesh_sema, sema, topsps_for, topsps_used};
use crate::schedule::{BlockSet, CollectivePlan, DescTable, Schedule, Transfer};
use crate::step_graph::walk_collective;
use ccc_ir::arch::SemWindow;
use ccc_ir::enums::{DevicePattern, MetaringType};
use ccc_ir::id::{CollectiveIdx, Rank, Step, TopSp};
use ccc_ir::wire::tp::{Folder, TpIncStep};
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
    /// Records checked.
    pub records: u64,
    /// (rank, TOP_SP, step) points checked.
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
    prove_with(schedule, programs, &Symmetry::find(schedule))
}

/// [`prove`], with the schedule's symmetric groups already found
/// (shared with the postcondition proof; [`Symmetry::none`] checks every
/// rank against its own step graph). Every rank is checked on its own,
/// on every core; the first defect in rank order is reported, whatever
/// the thread count.
///
/// # Errors
///
/// As [`prove`].
pub fn prove_with(
    schedule: &Schedule,
    programs: &[RankProgram],
    symmetry: &Symmetry,
) -> Result<ProtocolProof, VerifyError> {
    prove_reporting(schedule, programs, symmetry, &|| {})
}

/// [`prove_with`], calling `checked()` as each rank is checked, from any
/// thread (for progress reports).
pub(crate) fn prove_reporting(
    schedule: &Schedule,
    programs: &[RankProgram],
    symmetry: &Symmetry,
    checked: &(dyn Fn() + Sync),
) -> Result<ProtocolProof, VerifyError> {
    for (r, program) in programs.iter().enumerate() {
        if program.rank != Rank(r as u32) {
            let at = Place { collective: 0, rank: Rank(r as u32), topsp: TopSp(0), record: None, step: None };
            return Err(defect(at, mismatch("rank of the program", u64::from(program.rank.0), r as u64)));
        }
    }
    if programs.len() != schedule.shape.rank_n as usize {
        let at = Place { collective: 0, rank: Rank(programs.len() as u32), topsp: TopSp(0), record: None, step: None };
        return Err(defect(at, mismatch("ranks lowered", programs.len() as u64, u64::from(schedule.shape.rank_n))));
    }
    prove_ranks_with(schedule, programs, symmetry, checked)
}

/// Everything of the protocol proof one rank's records show, for the ranks
/// given, each on its own and on every core: each chain's structure
/// (records per phase, flags, channel lists, END addresses, mesh windows,
/// credits, host counts); step by step, that every record posts exactly
/// the descriptors the step graph's transfers of that rank need; that each
/// mesh event waits for exactly the increments the step graph sends it;
/// and that the notifications per TOP_SP add up to `op_num`. The balance
/// between ranks is the postcondition proof's (see the module overview).
/// A compile certified by an earlier proof of the same schedule checks its
/// own ranks with this: it catches a build that lowers the same schedule
/// differently.
///
/// # Errors
///
/// [`VerifyError::Defect`] naming the rank, TOP_SP, record and step: the
/// first in the order of `programs`.
pub fn prove_ranks(schedule: &Schedule, programs: &[RankProgram]) -> Result<ProtocolProof, VerifyError> {
    prove_ranks_with(schedule, programs, &Symmetry::none(), &|| {})
}

/// [`prove_ranks`], with each rank of a group `symmetry` found symmetric
/// checked against member 0's transfers moved to it (see [`Profile`]).
fn prove_ranks_with(
    schedule: &Schedule,
    programs: &[RankProgram],
    symmetry: &Symmetry,
    checked: &(dyn Fn() + Sync),
) -> Result<ProtocolProof, VerifyError> {
    let profiles: Vec<Vec<Option<Profile<'_>>>> = schedule
        .collectives
        .iter()
        .map(|plan| {
            (0..plan.groups.group_n()).map(|g| Profile::new(schedule, plan, symmetry.rotation(plan.index, g))).collect()
        })
        .collect();
    let results: Vec<Result<ProtocolProof, VerifyError>> = programs
        .par_iter()
        .with_min_len(4)
        .map(|p| {
            let proof = check_rank(schedule, p, &profiles);
            checked();
            proof
        })
        .collect();
    let mut proof = ProtocolProof { chains: 0, records: 0, steps: 0, signals: 0 };
    for r in results {
        let p = r?;
        proof.chains += p.chains;
        proof.records += p.records;
        proof.steps += p.steps;
        proof.signals += p.signals;
    }
    Ok(proof)
}

/// Increments a rank received from each peer during one mesh phase.
type Incoming = Vec<(u32, u64)>;

/// What the step graph has a member do at one step: per TOP_SP of the
/// collective, the `(m2s, s2m)` descriptors it must post; and per transfer
/// it receives, the sending member and the semaphore increments.
#[derive(Default)]
struct Needs {
    counts: Vec<(u64, u64)>,
    receives: Vec<(u32, u64)>,
}

/// What a symmetric group's members post, from member 0's transfers: a
/// member's transfers are member 0's moved to it.
struct Profile<'a> {
    rotation: &'a Rotation,
    counts: Counts,
    /// The counts of [`Counts::Same`] folded as the lowering folds them,
    /// per TOP_SP and phase: a record whose `tp_inc_steps` are exactly these
    /// posts exactly the counts, step by step. `None` otherwise, with mesh
    /// phases (their events need the steps) or counts too wide to fold.
    folded: Option<Folded>,
    /// Whether the collective has a mesh phase.
    mesh: bool,
    /// Semaphore increments a member receives over the collective, on
    /// every channel.
    signals: u64,
}

/// `tp_inc_steps` per TOP_SP and record.
type Folded = Vec<Vec<Vec<TpIncStep>>>;

/// The descriptors a member of a symmetric group posts at each step.
enum Counts {
    /// Every block costs the same: every member posts member 0's counts,
    /// `[s * used + t]` for step `s` and TOP_SP `t`.
    Same(Vec<(u64, u64)>),
    /// Blocks below `big_below` hold one more element, and every transfer
    /// moves one block (or none): what member 0's transfer `k` posts on
    /// TOP_SP `t`, `[k * used + t]`, with its block small and with it big.
    /// A member posts, for each of its transfers, the row its moved block
    /// falls in.
    ByBlock { big_below: u32, costs: Vec<[(u64, u64); 2]> },
}

impl<'a> Profile<'a> {
    fn new(schedule: &Schedule, plan: &CollectivePlan, rotation: Option<&'a Rotation>) -> Option<Profile<'a>> {
        let rotation = rotation?;
        let used = topsps_for(schedule.arch.params(), plan.channels);
        let tables: Vec<DescTable<'_>> = (0..used).map(|t| DescTable::new(plan, &hosted(schedule, plan, t))).collect();
        let all = rotation.transfers();
        let counts = if tables.iter().all(DescTable::position_free) {
            let tables = &tables;
            Counts::Same(
                (0..plan.step_n)
                    .flat_map(|s| tables.iter().map(move |table| table.step(0, rotation.step(s))))
                    .collect(),
            )
        } else {
            let big_below = tables.first()?.big_below()?;
            if all.iter().any(|t| t.src.count > 1 || t.dst.count > 1) {
                return None;
            }
            let n = plan.groups.size();
            let probe = |t: &Transfer, pos: u32| {
                let at = |b: BlockSet| if b.count == 0 { b } else { BlockSet::one(pos) };
                Transfer { src: at(t.src), dst: at(t.dst), ..*t }
            };
            let costs = all
                .iter()
                .flat_map(|t| {
                    let (small, big) = (probe(t, big_below.min(n - 1)), probe(t, 0));
                    tables.iter().map(move |table| [table.step(0, &[small]), table.step(0, &[big])])
                })
                .collect();
            Counts::ByBlock { big_below, costs }
        };
        let mesh = plan.phases.iter().any(|p| p.alg.pattern() == Some(DevicePattern::Mesh));
        let channels: u64 = tables.iter().map(|t| t.channels().len() as u64).sum();
        let signals = all
            .iter()
            .filter(|tr| tr.to == 0)
            .map(|tr| u64::from(tr.src.count) * u64::from(tr.halves.count()) * channels)
            .sum();
        let mut profile = Profile { rotation, counts, folded: None, mesh, signals };
        // The same for every member: fold them once.
        if matches!(profile.counts, Counts::Same(_)) {
            profile.folded = profile.fold_for(plan, 0, usize::from(used));
        }
        Some(profile)
    }

    /// What member `member` posts, folded per TOP_SP and phase as the
    /// lowering folds it, when that can be compared record by record (no
    /// mesh phase, counts that fit).
    fn fold_for(&self, plan: &CollectivePlan, member: u32, used: usize) -> Option<Folded> {
        if self.mesh {
            return None;
        }
        let mut out: Folded = vec![Vec::with_capacity(plan.phases.len()); used];
        let mut counts = Vec::new();
        for p in &plan.phases {
            let mut folders: Vec<Folder> = (0..used).map(|_| Folder::new()).collect();
            for s in p.first_step..p.first_step + p.step_n {
                self.counts(s, member, used, &mut counts);
                for (folder, &(m2s, s2m)) in folders.iter_mut().zip(&counts) {
                    folder.push(u32::try_from(m2s).ok()?, u32::try_from(s2m).ok()?);
                }
            }
            for (o, f) in out.iter_mut().zip(folders) {
                o.push(f.finish());
            }
        }
        Some(out)
    }

    /// What member `member` posts at step `step`, per TOP_SP, into `out`.
    fn counts(&self, step: u32, member: u32, used: usize, out: &mut Vec<(u64, u64)>) {
        out.clear();
        match &self.counts {
            Counts::Same(counts) => out.extend_from_slice(&counts[step as usize * used..][..used]),
            Counts::ByBlock { big_below, costs } => {
                out.resize(used, (0, 0));
                let (first, end) = self.rotation.span(step);
                let action = &self.rotation.action;
                let big = |b: BlockSet| usize::from(b.count > 0 && action.add(b.start, member) < *big_below);
                for (k, tr) in (first..end).zip(self.rotation.step(step)) {
                    let (src, dst) = (big(tr.src), big(tr.dst));
                    for (t, o) in out.iter_mut().enumerate() {
                        let row = &costs[k * used + t];
                        o.0 += row[src].0;
                        o.1 += row[dst].1;
                    }
                }
            }
        }
    }
}

fn check_rank(
    schedule: &Schedule,
    program: &RankProgram,
    profiles: &[Vec<Option<Profile<'_>>>],
) -> Result<ProtocolProof, VerifyError> {
    let used_all = topsps_used(schedule);
    let rank = program.rank;
    let mut proof = ProtocolProof { chains: 0, records: 0, steps: 0, signals: 0 };
    if program.topsps.len() != usize::from(used_all) {
        let at = Place { collective: 0, rank, topsp: TopSp(0), record: None, step: None };
        return Err(defect(at, mismatch("TOP_SPs", program.topsps.len() as u64, u64::from(used_all))));
    }
    for tp in &program.topsps {
        check_chain(schedule, rank, tp)?;
        proof.chains += 1;
        proof.records += tp.records().count() as u64;
    }
    // Every record that runs to its end notifies the host once.
    let mut notified = vec![0u64; usize::from(used_all)];
    let mut incoming: Incoming = Vec::new();
    let mut needs = Needs::default();
    for plan in &schedule.collectives {
        let used = usize::from(topsps_for(schedule.arch.params(), plan.channels));
        let hosted: Vec<Vec<u8>> = (0..used).map(|t| hosted(schedule, plan, t as u8)).collect();
        let channels: u64 = hosted.iter().map(|h| h.len() as u64).sum();
        let mut cursors: Vec<Cursor<'_>> = program.topsps[..used]
            .iter()
            .map(|tp| {
                let records =
                    tp.segments.iter().find(|s| s.collective == plan.index).map_or(&[][..], |s| &s.records[..]);
                Cursor { records, record: 0, entry: 0, done: 0 }
            })
            .collect();
        let (group, member) = plan.groups.locate(rank);
        let profile = profiles.get(plan.index as usize).and_then(|g| g.get(group as usize)).and_then(Option::as_ref);
        // Records that are exactly the profile's folded counts post them
        // step by step: what the step-by-step check below would find.
        let own: Option<Folded>;
        let folded = match profile {
            Some(p) if p.folded.is_some() => p.folded.as_ref(),
            Some(p) => {
                own = p.fold_for(plan, member, used);
                own.as_ref()
            }
            None => None,
        };
        if let Some((profile, folded)) = profile.zip(folded)
            && cursors
                .iter()
                .zip(folded)
                .all(|(c, f)| c.records.len() == f.len() && c.records.iter().zip(f).all(|(r, tp)| r.tp == *tp))
        {
            proof.steps += used as u64 * u64::from(plan.step_n);
            proof.signals += profile.signals;
            for n in notified.iter_mut().take(used) {
                *n += plan.phases.iter().filter(|p| p.step_n > 0).count() as u64;
            }
            continue;
        }
        // One step: the records' posts against the step graph's needs.
        let mut check = |step: u32, phase_index: usize, needs: &Needs| -> Result<(), VerifyError> {
            let place = |t: usize, record| Place {
                collective: plan.index,
                rank,
                topsp: TopSp(t as u8),
                record,
                step: Some(step),
            };
            for (t, (cursor, &(m2s, s2m))) in cursors.iter_mut().zip(&needs.counts).enumerate() {
                let Some((record, posted_m2s, posted_s2m)) = cursor.next() else {
                    return Err(defect(
                        place(t, None),
                        mismatch("steps its records cover", u64::from(step), u64::from(plan.step_n)),
                    ));
                };
                if record as usize != phase_index {
                    return Err(defect(
                        place(t, Some(record)),
                        mismatch("phase of the record running this step", u64::from(record), phase_index as u64),
                    ));
                }
                for (queue, posted, needed) in [("M2S", posted_m2s, m2s), ("S2M", posted_s2m, s2m)] {
                    if u64::from(posted) != needed {
                        return Err(defect(
                            place(t, Some(record)),
                            DefectKind::CountMismatch { queue, posted: u64::from(posted), needed },
                        ));
                    }
                }
                proof.steps += 1;
            }
            let phase = &plan.phases[phase_index];
            let mesh = phase.alg.pattern() == Some(DevicePattern::Mesh);
            for &(from, increments) in &needs.receives {
                proof.signals += increments * channels;
                if mesh && from != member {
                    let peer = plan.rank(group, from).0;
                    match incoming.iter_mut().find(|(p, _)| *p == peer) {
                        Some(e) => e.1 += increments,
                        None => incoming.push((peer, increments)),
                    }
                }
            }
            if step + 1 == phase.first_step + phase.step_n {
                for (t, n) in notified.iter_mut().enumerate().take(used) {
                    *n += 1;
                    if mesh {
                        let record = cursors[t].records.get(phase_index);
                        check_events(record, &incoming, hosted[t].len() as u64, place(t, Some(phase_index as u32)))?;
                    }
                }
                incoming.clear();
            }
            Ok(())
        };
        let increments = |tr: &Transfer| u64::from(tr.src.count) * u64::from(tr.halves.count());
        match profile {
            Some(profile) => {
                for step in 0..plan.step_n {
                    let Some((phase_index, _)) = plan.phase_at(step) else { break };
                    profile.counts(step, member, used, &mut needs.counts);
                    needs.receives.clear();
                    let base = profile.rotation.step(step).iter().filter(|tr| tr.to == 0);
                    let action = &profile.rotation.action;
                    needs.receives.extend(base.map(|tr| (action.add(tr.from, member), increments(tr))));
                    check(step, phase_index, &needs)?;
                }
            }
            None => {
                let tables: Vec<DescTable<'_>> = hosted.iter().map(|h| DescTable::new(plan, h)).collect();
                walk_collective(schedule, plan, rank, |node| {
                    needs.counts.clear();
                    needs.counts.extend(tables.iter().map(|table| table.step(node.member, node.transfers)));
                    needs.receives.clear();
                    let received = node.transfers.iter().filter(|tr| tr.to == node.member);
                    needs.receives.extend(received.map(|tr| (tr.from, increments(tr))));
                    check(node.step, node.phase as usize, &needs)
                })?;
            }
        }
    }
    for tp in &program.topsps {
        let posted = notified[usize::from(tp.topsp.0)];
        if posted != u64::from(tp.neff.op_num) {
            let at = Place { collective: 0, rank, topsp: tp.topsp, record: None, step: None };
            return Err(defect(at, DefectKind::NotificationCount { posted, op_num: tp.neff.op_num }));
        }
    }
    Ok(proof)
}

/// A mesh record's events must wait, per peer, for exactly the increments
/// the step graph has that peer send the rank during the phase, on each of
/// the TOP_SP's `channels` (and for nothing from a peer that sends none).
fn check_events(
    record: Option<&crate::lower::Record>,
    incoming: &Incoming,
    channels: u64,
    at: Place,
) -> Result<(), VerifyError> {
    let Some(record) = record else { return Ok(()) };
    for &(peer, sent) in incoming {
        let sent = sent * channels;
        let target = record.events.iter().find(|e| e.peer == peer).map_or(0, |e| u64::from(e.target));
        if target != sent {
            return Err(defect(at, DefectKind::EventMismatch { peer: Rank(peer), target, arrived: sent }));
        }
    }
    if let Some(e) = record.events.iter().find(|e| !incoming.iter().any(|&(p, _)| p == e.peer)) {
        let kind = DefectKind::EventMismatch { peer: Rank(e.peer), target: u64::from(e.target), arrived: 0 };
        return Err(defect(at, kind));
    }
    Ok(())
}

/// Channels of `plan` on TOP_SP `t`, ascending.
fn hosted(schedule: &Schedule, plan: &CollectivePlan, t: u8) -> Vec<u8> {
    hosted_channels(schedule.arch.params(), plan.channels, t)
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
        schedule.collectives.iter().filter(|p| t.0 < topsps_for(params, p.channels) && !p.phases.is_empty()).collect();
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
        let recv = channel_sema(j as u32);
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
    fn every_flat_pairing_is_checked() {
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

    /// Standing member 0's needs for every member's changes no figure, on
    /// every flat pairing, invariant or not.
    #[test]
    fn symmetry_changes_no_figure() {
        for &alg in AlgType::ALL {
            if alg == AlgType::Hier {
                continue;
            }
            for &op in flat_ops(alg) {
                // Even blocks (every rank's counts the same) and uneven.
                for (n, channels, count) in [(2u32, 1u8, 4096), (5, 3, 4100), (8, 2, 4096), (8, 2, 4103), (12, 9, 4104)]
                {
                    let Some(mut case) = Case::for_alg(op, alg, n) else { continue };
                    case.channels = channels;
                    case.count = count;
                    let (schedule, programs) = lower_all(&case);
                    let fast = prove_with(&schedule, &programs, &Symmetry::find(&schedule));
                    let full = prove_with(&schedule, &programs, &Symmetry::none());
                    assert_eq!(fast, full, "{op:?} {alg:?} n={n} channels={channels} count={count}");
                }
            }
        }
    }

    /// A flat ring's records are exactly member 0's folded counts, on every
    /// rank: the whole check is a comparison of `tp_inc_steps`.
    #[test]
    fn a_ring_takes_the_folded_path() {
        let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
        case.channels = 2;
        let records_of = |p: &RankProgram, t: usize| -> Vec<Vec<TpIncStep>> {
            p.topsps[t].segments[0].records.iter().map(|r| r.tp.clone()).collect()
        };
        // 4096 + 7 elements: the first 7 blocks are one element bigger, so
        // counts depend on the block, and each rank's are folded on its own.
        let (schedule, programs) = lower_all(&case);
        let symmetry = Symmetry::find(&schedule);
        let plan = &schedule.collectives[0];
        let uneven = Profile::new(&schedule, plan, symmetry.rotation(0, 0)).unwrap();
        assert!(matches!(uneven.counts, Counts::ByBlock { big_below: 7, .. }) && uneven.folded.is_none());
        for p in &programs {
            let own = uneven.fold_for(plan, p.rank.0, 2).expect("no mesh phase");
            for (t, folded) in own.iter().enumerate() {
                assert_eq!(&records_of(p, t), folded, "uneven: rank {} TOP_SP {t}", p.rank.0);
            }
        }
        case.count = 4096;
        let (schedule, programs) = lower_all(&case);
        let symmetry = Symmetry::find(&schedule);
        let plan = &schedule.collectives[0];
        let profile = Profile::new(&schedule, plan, symmetry.rotation(0, 0)).expect("invariant");
        let folded = profile.folded.as_ref().expect("no mesh phase");
        for p in &programs {
            for (t, folded) in folded.iter().enumerate() {
                assert_eq!(&records_of(p, t), folded, "rank {} TOP_SP {t}", p.rank.0);
            }
        }
    }

    /// With uneven blocks the counts depend on the rank, and each rank's
    /// records are checked against its own step graph, step by step: a
    /// record off by one at one step is caught there, symmetric or not.
    #[test]
    fn uneven_blocks_are_checked_step_by_step() {
        let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
        case.count = 4103;
        let (schedule, mut programs) = lower_all(&case);
        let symmetry = Symmetry::find(&schedule);
        assert!(symmetry.rotation(0, 0).is_some());
        prove_with(&schedule, &programs, &symmetry).unwrap();
        let tp = &mut programs[5].topsps[0].segments[0].records[1].tp;
        let last = tp.len() - 1;
        tp[last].m2s += 1;
        let Err(VerifyError::Defect(d)) = prove_with(&schedule, &programs, &symmetry) else { panic!("proven") };
        assert_eq!((d.rank, d.record), (Some(Rank(5)), Some(1)), "{d}");
        assert!(matches!(d.kind, DefectKind::CountMismatch { queue: "M2S", .. }), "{d}");
        let full = prove_with(&schedule, &programs, &Symmetry::none());
        assert_eq!(full, Err(VerifyError::Defect(d)));
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
    fn every_hier_composition_is_checked() {
        for (op, choice) in Case::hier_choices() {
            let mut case = Case::hier(op, &choice, 24, 4);
            case.pod_n = 2;
            case.channels = 4;
            assert_protocol(&case);
        }
    }
}
