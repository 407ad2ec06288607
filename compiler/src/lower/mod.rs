//! lower: one rank's schedule into typed records, per TOP_SP
//! (`docs/wire-format.md` §2–§8).
//!
//! Channel `c` lives on TOP_SP `c % topsp_n` ([`crate::placement`] owns
//! that rule, the semaphore map and the device barrier's reach). For each
//! collective, every TOP_SP that hosts one of its channels gets one cc_op
//! record per phase (step group), chained with `trigger_next` and closed by
//! an END mark; each record's `tp_inc_steps` counts, step by step, the DMA
//! descriptors the rank posts for the channels of that TOP_SP, run-length
//! folded into runs of equal steps. Mesh records also get their events in
//! the TOP_SP's mesh event table. The `neff_configs` block of each TOP_SP
//! is filled last (`neff.rs`).
//!
//! **Lowering costs O(records + runs)**, not O(steps): a phase's runs come
//! from its pattern (`runs.rs`), not from walking its steps. Only the ring
//! phases have more than one step, and what a step posts changes only where
//! the pieces it sends or receives change weight: with uneven blocks the
//! `big_below` first blocks hold one element more, so pieces `0..r` of a
//! scope of `k` are heavy (`r` = the universe positions below `big_below`,
//! mod `k`) and the others light. Each ring pattern's sent and received
//! pieces are arithmetic sequences `q(t) = a ± t (mod k)` over a window of
//! steps, so a run can end only where a window opens or closes or a
//! sequence enters or leaves `0..r`: O(1) places per phase, each evaluated
//! on one step. One-step phases are that step. Lowering one rank of a
//! 65,536-rank flat ring costs what one of 1,024 ranks does (the bench's
//! `lower rank 0` rows).
//!
//! The step-by-step walk the closed forms replace is kept as the reference
//! ([`lower_by_steps`], `steps.rs`); a property test over random specs holds
//! both to the same programs and errors.

mod neff;
mod runs;
mod steps;
#[cfg(test)]
pub(crate) mod tests;

use crate::placement::{DEVICE_BARRIER_MAX_RANK_N, hosted_channels, mesh_sema, sema, topsps_for, topsps_used};
use crate::schedule::{CollectivePlan, DescTable, Schedule, Transfer, mesh_type};
use crate::valid::GroupMember;
use ccc_ir::arch::SemWindow;
use ccc_ir::enums::{DevicePattern, MetaringType, OpType};
use ccc_ir::id::{CollectiveIdx, Rank, Step, TopSp};
use ccc_ir::wire::ctrl_spad;
use ccc_ir::wire::ctrl_word::CcOp;
use ccc_ir::wire::neff_configs::{BarrierConfigs, BarrierStep, CHANNEL_IDS_N, DEVICE_STEPS_N, MeshEvent, NeffConfigs};
use ccc_ir::wire::tp::{Folder, TpIncStep, TpRuns, VAL_MASK};
use neff::{neff_configs, sem};
use serde::Serialize;
use std::fmt;
use std::mem::size_of;

/// One cc_op record with what it drives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Record {
    /// The op entry.
    pub op: CcOp,
    /// Its DMA schedule.
    pub tp: TpRuns,
    /// The phase it runs.
    pub phase: u32,
    /// The collective step of its first step.
    pub first_step: u32,
    /// Its step count.
    pub step_n: u32,
    /// Its mesh events (MESH records).
    pub events: Vec<MeshEvent>,
    /// Each event's target as counted, before narrowing to the table's u16
    /// (lowering refuses a record whose count does not fit).
    #[serde(skip)]
    pub event_targets: Vec<u64>,
}

/// One collective's chain on one TOP_SP, typed: its CTRL SPAD segment
/// (records and END mark, [`ctrl_spad::Segment`]) with what each record
/// drives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SegmentProgram {
    /// The collective.
    pub collective: u32,
    /// The records, in chain order.
    pub records: Vec<Record>,
    /// The END mark's completion address.
    pub compl_addr: u64,
}

impl SegmentProgram {
    /// Its CTRL SPAD segment: the records' op entries and the END mark.
    pub fn ctrl_spad(&self) -> ctrl_spad::Segment {
        ctrl_spad::Segment { records: self.records.iter().map(|r| r.op).collect(), compl_addr: self.compl_addr }
    }
}

/// Everything one TOP_SP of one rank loads, typed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TopSpProgram {
    /// The TOP_SP.
    pub topsp: TopSp,
    /// The absolute channels it hosts, ascending.
    pub channels: Vec<u8>,
    /// The chain, one segment per collective that uses this TOP_SP.
    pub segments: Vec<SegmentProgram>,
    /// The EXEC config block.
    pub neff: NeffConfigs,
}

impl TopSpProgram {
    /// Every record, in chain order.
    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.segments.iter().flat_map(|s| &s.records)
    }
}

/// One rank's lowered program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankProgram {
    /// The rank.
    pub rank: Rank,
    /// Its TOP_SPs, `0..used`.
    pub topsps: Vec<TopSpProgram>,
}

impl RankProgram {
    /// The bytes it holds, inline and on the heap, by its vectors'
    /// capacities plus an allocator's header per allocation: what holding
    /// one more lowered rank costs (the proof holds every rank's).
    pub fn footprint(&self) -> u64 {
        // Each TOP_SP's inline bytes are counted in the vector's items.
        let held: u64 = self.topsps.iter().map(|tp| tp.footprint() - size_of::<TopSpProgram>() as u64).sum();
        (size_of::<RankProgram>() + heap(self.topsps.capacity(), size_of::<TopSpProgram>())) as u64 + held
    }
}

impl TopSpProgram {
    /// The bytes it holds, inline and on the heap, as
    /// [`RankProgram::footprint`] counts them.
    pub fn footprint(&self) -> u64 {
        let mut bytes = size_of::<TopSpProgram>();
        bytes += heap(self.channels.capacity(), 1) + heap(self.segments.capacity(), size_of::<SegmentProgram>());
        bytes +=
            heap(self.neff.channel_ids.capacity(), 1) + heap(self.neff.mesh_events.capacity(), size_of::<MeshEvent>());
        if let BarrierConfigs::Device { steps } = &self.neff.barrier {
            bytes += heap(steps.capacity(), size_of::<BarrierStep>());
        }
        for segment in &self.segments {
            bytes += heap(segment.records.capacity(), size_of::<Record>());
            for r in &segment.records {
                bytes += heap(r.tp.heap_capacity(), size_of::<TpIncStep>())
                    + heap(r.events.capacity(), size_of::<MeshEvent>())
                    + heap(r.event_targets.capacity(), size_of::<u64>());
            }
        }
        bytes as u64
    }
}

/// The heap bytes of a vector of `capacity` items of `item` bytes: none
/// when it holds no allocation, else its items and an allocator's
/// bookkeeping, about.
fn heap(capacity: usize, item: usize) -> usize {
    /// An allocator's bookkeeping per allocation, about.
    const HEADER: usize = 16;
    if capacity == 0 { 0 } else { capacity * item + HEADER }
}

/// A limit of the device that a schedule exceeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Limit {
    /// Mesh events per TOP_SP.
    MeshEvents,
    /// Increments one mesh event counts (u16).
    MeshEventTarget,
    /// Descriptors one tp_inc_steps increment posts (`VAL_MASK`).
    TpIncrement,
    /// END marks per TOP_SP (`tpb_compl_addr_num` is a u8).
    CompletionAddresses,
    /// Collectives per program (`function_n` is a u16).
    Functions,
    /// Records per TOP_SP (`op_num` is a u32).
    Records,
    /// Semaphores per EVT_SEM window.
    SemaphoreIndex,
}

impl Limit {
    /// What to change in the spec when the limit is exceeded.
    pub const fn advice(self) -> &'static str {
        match self {
            Limit::MeshEvents => {
                "a MESH record waits on one event per sending peer, and a TOP_SP's table serves the whole \
                 program: choose Ring or a Hier algorithm, mesh over fewer ranks, or split the program"
            }
            Limit::MeshEventTarget => {
                "one peer sends more half-chunks in one mesh step than an event counts: use fewer channels \
                 or a ring algorithm"
            }
            Limit::TpIncrement => {
                "one step posts more 64 KiB descriptors than the increment register holds: choose an \
                 algorithm with fewer peers per step (a ring or Hier), raise channels, or split the collective"
            }
            Limit::CompletionAddresses | Limit::Functions | Limit::Records => "split the program into smaller ones",
            Limit::SemaphoreIndex => "this is a ccc defect; please report it with the spec",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::MeshEvents => "mesh events per TOP_SP",
            Limit::MeshEventTarget => "increments per mesh event",
            Limit::TpIncrement => "descriptors per tp_inc_steps increment (VAL_MASK)",
            Limit::CompletionAddresses => "END marks per TOP_SP (tpb_compl_addr_num)",
            Limit::Functions => "collectives per program (function_n)",
            Limit::Records => "records per TOP_SP (op_num)",
            Limit::SemaphoreIndex => "semaphores per EVT_SEM window",
        })
    }
}

/// Why a rank could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{rank}{}{}{}: {kind}",
    .topsp.map(|t| format!(", {t}")).unwrap_or_default(),
    .collective.map(|c| format!(", {c}")).unwrap_or_default(),
    .step.map(|s| format!(", {s}")).unwrap_or_default())]
pub struct LowerError {
    /// The rank.
    pub rank: Rank,
    /// The TOP_SP.
    pub topsp: Option<TopSp>,
    /// The collective.
    pub collective: Option<CollectiveIdx>,
    /// The step.
    pub step: Option<Step>,
    /// What went wrong.
    pub kind: LowerErrorKind,
}

/// The kinds of lowering failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerErrorKind {
    /// A device limit exceeded.
    #[error("{limit} is at most {max} on {arch}; this schedule needs {value}; {}", limit.advice())]
    Limit {
        /// The limit.
        limit: Limit,
        /// What the schedule needs.
        value: u64,
        /// The most the device takes.
        max: u64,
        /// The architecture.
        arch: ccc_ir::arch::Arch,
    },
    /// The rank is not in the world.
    #[error("no such rank: the world has {}", ccc_ir::noun::count(rank_n, "rank"))]
    NoSuchRank {
        /// Ranks in the world.
        rank_n: u32,
    },
    /// A collective's replica groups do not hold the rank (a schedule
    /// `build` did not make: its groups disagree with its shape).
    #[error("the collective's replica groups do not hold this rank")]
    NotInGroups,
    /// The schedule names a group member its groups do not hold (a
    /// schedule `build` did not make).
    #[error("the schedule names member {index} of replica group {group}, which the groups do not hold")]
    NoSuchMember {
        /// The replica group.
        group: u32,
        /// The group-local index.
        index: u32,
    },
    /// The device barrier does not reach every rank in its steps.
    #[error(
        "a device barrier covers at most {DEVICE_BARRIER_MAX_RANK_N} ranks in its {DEVICE_STEPS_N} steps; \
         the world has {rank_n}; use the host barrier"
    )]
    DeviceBarrierTooLarge {
        /// Ranks in the world.
        rank_n: u32,
    },
}

/// Lowers rank `rank`, by records: each phase's folded `tp_inc_steps`
/// runs come from its pattern (see the module overview), in time
/// proportional to the rank's records and runs, whatever the world's size.
///
/// # Errors
///
/// [`LowerError`] naming the limit, the value, the rank and the TOP_SP when
/// the schedule does not fit.
pub fn lower(schedule: &Schedule, rank: Rank) -> Result<RankProgram, LowerError> {
    lower_with(schedule, rank, runs::collective)
}

/// [`lower`] the way it was first written, step by step: every step of
/// every phase generated and counted, then folded. The reference that
/// lowering by records is tested against (and benchmarked beside); the
/// same program, or the same error, for every rank of every schedule.
///
/// # Errors
///
/// As [`lower`].
#[doc(hidden)]
pub fn lower_by_steps(schedule: &Schedule, rank: Rank) -> Result<RankProgram, LowerError> {
    lower_with(schedule, rank, steps::collective)
}

/// What one phase posts on one TOP_SP: its folded `tp_inc_steps`, and its
/// mesh events with each one's count before narrowing to a u16.
#[derive(Clone, Debug, Default)]
struct Posts {
    folder: Folder,
    events: Vec<(MeshEvent, u64)>,
}

/// One phase of one collective, as lowered on every TOP_SP the collective
/// uses: `(phase, posts per TOP_SP)`, phases in order.
type PhasePosts = Vec<(u32, Vec<Posts>)>;

/// One rank lowering one collective: where the rank stands in it, and how
/// descriptors are counted on each TOP_SP. Both ways of lowering
/// (`runs.rs`, `steps.rs`) count through it.
struct Lowering<'a> {
    schedule: &'a Schedule,
    plan: &'a CollectivePlan,
    /// The rank, its replica group and its index in it.
    at: GroupMember,
    rank: Rank,
    group: u32,
    member: u32,
    /// Per TOP_SP, the descriptor table of the channels it hosts.
    tables: Vec<DescTable<'a>>,
}

impl<'a> Lowering<'a> {
    /// `None` when the collective's groups do not hold `rank`.
    fn new(schedule: &'a Schedule, plan: &'a CollectivePlan, rank: Rank) -> Option<Lowering<'a>> {
        let params = schedule.arch.params();
        let plan_used = topsps_for(params, plan.channels);
        let at = plan.groups.locate(rank)?;
        let tables = (0..plan_used).map(|t| DescTable::new(plan, &hosted_channels(params, plan.channels, t))).collect();
        Some(Lowering { schedule, plan, at, rank, group: at.group(), member: at.index(), tables })
    }

    /// The error of `kind` at `topsp` and `step` of this collective.
    fn error(&self, topsp: Option<TopSp>, step: Option<u32>, kind: LowerErrorKind) -> LowerError {
        LowerError {
            rank: self.rank,
            topsp,
            collective: Some(CollectiveIdx(self.plan.index)),
            step: step.map(Step),
            kind,
        }
    }

    /// Empty posts, one per TOP_SP.
    fn posts(&self) -> Vec<Posts> {
        vec![Posts::default(); self.tables.len()]
    }

    /// Counts, on every TOP_SP, `n` consecutive steps from collective step
    /// `step` that each move `transfers` (with their mesh events when the
    /// phase is a mesh).
    fn count(
        &self,
        step: u32,
        transfers: &[Transfer],
        n: u32,
        mesh: bool,
        posts: &mut [Posts],
    ) -> Result<(), LowerError> {
        for (t, (table, post)) in self.tables.iter().zip(posts.iter_mut()).enumerate() {
            let (m2s, s2m) = table.step(self.member, transfers);
            for v in [m2s, s2m] {
                if v > u64::from(VAL_MASK) {
                    let arch = self.schedule.arch;
                    let kind =
                        LowerErrorKind::Limit { limit: Limit::TpIncrement, value: v, max: u64::from(VAL_MASK), arch };
                    return Err(self.error(Some(TopSp(t as u8)), Some(step), kind));
                }
            }
            // Checked against VAL_MASK just above.
            post.folder.push_n(m2s as u32, s2m as u32, u64::from(n));
            if mesh {
                collect_events(self, transfers, table.channels(), u64::from(n), &mut post.events)
                    .map_err(|kind| self.error(Some(TopSp(t as u8)), Some(step), kind))?;
            }
        }
        Ok(())
    }
}

/// Lowers `rank`, each collective's phases posted by `posts`.
fn lower_with(
    schedule: &Schedule,
    rank: Rank,
    posts: fn(&Lowering<'_>) -> Result<PhasePosts, LowerError>,
) -> Result<RankProgram, LowerError> {
    let params = schedule.arch.params();
    let err = |topsp: Option<TopSp>, collective: Option<u32>, step: Option<u32>, kind| LowerError {
        rank,
        topsp,
        collective: collective.map(CollectiveIdx),
        step: step.map(Step),
        kind,
    };
    if rank.0 >= schedule.shape.rank_n {
        return Err(err(None, None, None, LowerErrorKind::NoSuchRank { rank_n: schedule.shape.rank_n }));
    }
    let limit = |limit, value: u64, max: u64| LowerErrorKind::Limit { limit, value, max, arch: schedule.arch };
    let used = topsps_used(schedule);
    // The channels of every collective: those below the widest one.
    let widest = schedule.collectives.iter().map(|p| p.channels).max().unwrap_or(0).min(CHANNEL_IDS_N as u8);
    let mut topsps: Vec<TopSpProgram> = (0..used)
        .map(|t| {
            let channels = hosted_channels(params, widest, t);
            TopSpProgram { topsp: TopSp(t), channels, segments: Vec::new(), neff: NeffConfigs::default() }
        })
        .collect();
    let mut events_used = vec![0u32; usize::from(used)];
    for plan in &schedule.collectives {
        let lowering = Lowering::new(schedule, plan, rank)
            .ok_or_else(|| err(None, Some(plan.index), None, LowerErrorKind::NotInGroups))?;
        let mut records: Vec<Vec<Record>> = vec![Vec::new(); lowering.tables.len()];
        for (phase, phase_posts) in posts(&lowering)? {
            finish_records(&lowering, phase, phase_posts, &mut records)
                .map_err(|kind| lowering.error(None, None, kind))?;
        }
        for (t, mut recs) in records.into_iter().enumerate() {
            if recs.is_empty() {
                continue;
            }
            let topsp = TopSp(t as u8);
            let n = recs.len();
            for (i, r) in recs.iter_mut().enumerate() {
                r.op.trigger_next = i + 1 < n;
                r.op.ring_wait_complete = i > 0;
                r.op.ring_send_complete = i + 1 < n;
                r.op.reporter = t == 0;
                if r.op.algo_type == DevicePattern::Mesh.raw() {
                    let shift = events_used[t];
                    let event_n = r.events.len() as u32;
                    let max = u32::from(params.mesh_event_max);
                    if shift + event_n > max {
                        return Err(err(
                            Some(topsp),
                            Some(plan.index),
                            Some(r.first_step),
                            limit(Limit::MeshEvents, u64::from(shift + event_n), u64::from(max)),
                        ));
                    }
                    if let Some(&needed) = r.event_targets.iter().find(|&&t| t > u64::from(u16::MAX)) {
                        return Err(err(
                            Some(topsp),
                            Some(plan.index),
                            Some(r.first_step),
                            limit(Limit::MeshEventTarget, needed, u64::from(u16::MAX)),
                        ));
                    }
                    for (e, ev) in r.events.iter_mut().enumerate() {
                        ev.sema_index = mesh_sema(shift + e as u32);
                    }
                    // shift + event_n <= mesh_event_max <= 108.
                    r.op.operand = CcOp::mesh_operand(shift as u16, sema::MESH_MASK);
                    events_used[t] += event_n;
                } else {
                    r.op.operand = lowering.tables[t].channels().iter().fold(0u32, |acc, &c| acc | (1u32 << c));
                }
            }
            let compl_addr = sem(params, topsp, SemWindow::Inc, sema::COMPLETE)
                .map_err(|kind| err(Some(topsp), Some(plan.index), None, kind))?;
            topsps[t].segments.push(SegmentProgram { collective: plan.index, records: recs, compl_addr });
        }
    }
    for tp in &mut topsps {
        tp.neff = neff_configs(schedule, tp).map_err(|kind| err(Some(tp.topsp), None, None, kind))?;
    }
    Ok(RankProgram { rank, topsps })
}

/// Whether phase `phase` of `plan` runs the mesh pattern (its records get
/// mesh events).
fn plan_phase_is_mesh(plan: &CollectivePlan, phase: u32) -> bool {
    plan.phases.get(phase as usize).and_then(|p| p.alg.pattern()) == Some(DevicePattern::Mesh)
}

/// Adds the incoming transfers of `times` steps that each move `transfers`
/// to the record's events: one event per sending peer, counting one
/// increment per half-transfer per channel.
fn collect_events(
    l: &Lowering<'_>,
    transfers: &[Transfer],
    hosted: &[u8],
    times: u64,
    events: &mut Vec<(MeshEvent, u64)>,
) -> Result<(), LowerErrorKind> {
    let layout = l.plan.layout();
    for t in transfers.iter().filter(|t| t.to == l.member && t.from != l.member) {
        let peer = member_rank(l.plan, l.group, t.from)?.0;
        let increments = u64::from(t.dst.count) * u64::from(t.halves.count()) * hosted.len() as u64;
        let mut bytes = 0u64;
        for &c in hosted {
            for b in t.dst.iter() {
                for h in t.halves.iter() {
                    bytes = bytes.saturating_add(layout.bytes(l.member, c, b, h));
                }
            }
        }
        let (event, target) = match events.iter_mut().find(|(e, _)| e.peer == peer) {
            Some((e, t)) => (e, t),
            None => {
                events.push((MeshEvent { peer, sema_index: 0, target: 0, bytes: 0 }, 0));
                let last = events.len() - 1;
                let (e, t) = &mut events[last];
                (e, t)
            }
        };
        // Adding `times` steps at once saturates where adding them one by
        // one would.
        *target = target.saturating_add(increments.saturating_mul(times));
        // The table's field is a u16; a count beyond it is refused as a limit.
        event.target = u16::try_from(*target).unwrap_or(u16::MAX);
        event.bytes = event.bytes.saturating_add(bytes.saturating_mul(times));
    }
    Ok(())
}

/// The rank of member `index` of `group`, or the error naming it.
fn member_rank(plan: &CollectivePlan, group: u32, index: u32) -> Result<Rank, LowerErrorKind> {
    plan.rank(group, index).ok_or(LowerErrorKind::NoSuchMember { group, index })
}

/// Closes the records of `phase` on every TOP_SP, from what it posted.
fn finish_records(
    l: &Lowering<'_>,
    phase: u32,
    posts: Vec<Posts>,
    records: &mut [Vec<Record>],
) -> Result<(), LowerErrorKind> {
    let (schedule, plan) = (l.schedule, l.plan);
    let Some(p) = plan.phases.get(phase as usize) else { return Ok(()) };
    let pattern = p.alg.pattern().unwrap_or(DevicePattern::Ring);
    let sub_type = match pattern {
        DevicePattern::Ring => MetaringType::from_alg(p.alg).map_or(0, MetaringType::raw),
        DevicePattern::Mesh => {
            let inst = plan.instance(p, l.member);
            let ranks = (0..inst.scope.k)
                .map(|q| member_rank(plan, l.group, inst.scope.member(q)))
                .collect::<Result<Vec<_>, _>>()?;
            mesh_type(schedule.arch, &schedule.shape, ranks).raw()
        }
    };
    let safe_mode = matches!(
        plan.op,
        OpType::Permute | OpType::PermuteReduce | OpType::PermuteImplicit | OpType::PermuteReduceImplicit
    );
    // All-gather and reduce-scatter run in place in the output buffer (the
    // rank's input sits at its own chunk of it); only all-to-all keeps its
    // input and output apart (docs/algorithms.md).
    let unique_tensors = matches!(plan.op, OpType::AllToAll | OpType::AllToAllV);
    for (post, records) in posts.into_iter().zip(records.iter_mut()) {
        records.push(Record {
            op: CcOp {
                algo_type: pattern.raw(),
                algo_sub_type: sub_type,
                safe_mode,
                unique_tensors,
                ..CcOp::default()
            },
            tp: post.folder.runs(),
            phase,
            first_step: p.first_step,
            step_n: p.step_n,
            events: post.events.iter().map(|&(e, _)| e).collect(),
            event_targets: post.events.into_iter().map(|(_, t)| t).collect(),
        });
    }
    Ok(())
}
