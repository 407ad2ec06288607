//! lower: one rank's step graph into typed records, per TOP_SP
//! (`docs/wire-format.md` §2–§8).
//!
//! Channel `c` lives on TOP_SP `c % topsp_n` ([`crate::placement`] owns
//! that rule, the semaphore map and the device barrier's reach). For each
//! collective, every TOP_SP that hosts one of its channels gets one cc_op
//! record per phase (step group), chained with `trigger_next` and closed by
//! an END mark; each record's `tp_inc_steps` counts, step by step, the DMA
//! descriptors the rank posts for the channels of that TOP_SP, run-length
//! folded. Mesh
//! records also get their events in the TOP_SP's mesh event table. The
//! `neff_configs` block of each TOP_SP is filled last.
//!
//! Lowering a rank walks only that rank's nodes: its cost is its own step
//! count, not the world's.

use crate::placement::{
    DEVICE_BARRIER_FANOUT, DEVICE_BARRIER_MAX_RANK_N, device_barrier_sema, hosted_channels, mesh_sema, sema,
    topsps_for, topsps_used,
};
use crate::schedule::{CollectivePlan, DescTable, Schedule, mesh_type};
use crate::step_graph::{NodeView, walk_collective};
use crate::valid::GroupMember;
use ccc_ir::arch::{ArchParams, SemWindow};
use ccc_ir::enums::{DevicePattern, MetaringType, OpType};
use ccc_ir::id::{CollectiveIdx, Rank, Step, TopSp};
use ccc_ir::spec::Barrier;
use ccc_ir::wire::ctrl_spad;
use ccc_ir::wire::ctrl_word::CcOp;
use ccc_ir::wire::neff_configs::{
    BarrierConfigs, BarrierStep, BasicBlockConfigs, CHANNEL_IDS_N, DEVICE_STEPS_N, MeshEvent, NeffConfigs, NeffFlags,
    SLOT_SPAD_BASE_N,
};
use ccc_ir::wire::tp::{Folder, TpIncStep, VAL_MASK};
use serde::Serialize;
use std::fmt;

/// One cc_op record with what it drives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Record {
    /// The op entry.
    pub op: CcOp,
    /// Its DMA schedule.
    pub tp: Vec<TpIncStep>,
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
        use std::mem::size_of;
        /// An allocator's bookkeeping per allocation, about.
        const HEADER: usize = 16;
        let vec = |capacity: usize, item: usize| if capacity == 0 { 0 } else { capacity * item + HEADER };
        let mut bytes = size_of::<RankProgram>() + vec(self.topsps.capacity(), size_of::<TopSpProgram>());
        for tp in &self.topsps {
            bytes += vec(tp.channels.capacity(), 1) + vec(tp.segments.capacity(), size_of::<SegmentProgram>());
            bytes +=
                vec(tp.neff.channel_ids.capacity(), 1) + vec(tp.neff.mesh_events.capacity(), size_of::<MeshEvent>());
            if let BarrierConfigs::Device { steps } = &tp.neff.barrier {
                bytes += vec(steps.capacity(), size_of::<BarrierStep>());
            }
            for segment in &tp.segments {
                bytes += vec(segment.records.capacity(), size_of::<Record>());
                for r in &segment.records {
                    bytes += vec(r.tp.capacity(), size_of::<TpIncStep>())
                        + vec(r.events.capacity(), size_of::<MeshEvent>())
                        + vec(r.event_targets.capacity(), size_of::<u64>());
                }
            }
        }
        bytes as u64
    }
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

/// Lowers rank `rank`.
///
/// # Errors
///
/// [`LowerError`] naming the limit, the value, the rank and the TOP_SP when
/// the schedule does not fit.
pub fn lower(schedule: &Schedule, rank: Rank) -> Result<RankProgram, LowerError> {
    lower_watched(schedule, rank, &mut |_, _| {})
}

/// [`lower`], showing `watch` every node of the rank's step graph as the
/// lowering walks it, collective by collective and step by step: the proof
/// checks the step graph's symmetry on the transfers lowering generates
/// anyway (see `verify::symmetry::Watch`).
///
/// # Errors
///
/// As [`lower`].
pub fn lower_watched(
    schedule: &Schedule,
    rank: Rank,
    watch: &mut dyn FnMut(&CollectivePlan, &NodeView<'_>),
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
        let plan_used = topsps_for(params, plan.channels);
        let mut records: Vec<Vec<Record>> = vec![Vec::new(); usize::from(plan_used)];
        let mut folders: Vec<Folder> = (0..plan_used).map(|_| Folder::new()).collect();
        let mut events: Vec<Vec<(MeshEvent, u64)>> = vec![Vec::new(); usize::from(plan_used)];
        let hosted: Vec<Vec<u8>> = (0..plan_used).map(|t| hosted_channels(params, plan.channels, t)).collect();
        let tables: Vec<DescTable<'_>> = hosted.iter().map(|h| DescTable::new(plan, h)).collect();
        let mut current_phase: Option<u32> = None;
        let at =
            plan.groups.locate(rank).ok_or_else(|| err(None, Some(plan.index), None, LowerErrorKind::NotInGroups))?;
        walk_collective(schedule, plan, at, |node| {
            watch(plan, &node);
            if current_phase != Some(node.phase) {
                if let Some(p) = current_phase {
                    finish_records(schedule, plan, at, p, &mut folders, &mut events, &mut records)
                        .map_err(|kind| err(None, Some(plan.index), Some(node.step), kind))?;
                }
                current_phase = Some(node.phase);
            }
            let mesh = plan_phase_is_mesh(plan, node.phase);
            for t in 0..usize::from(plan_used) {
                let (m2s, s2m) = tables[t].step(node.member, node.transfers);
                for v in [m2s, s2m] {
                    if v > u64::from(VAL_MASK) {
                        return Err(err(
                            Some(TopSp(t as u8)),
                            Some(plan.index),
                            Some(node.step),
                            limit(Limit::TpIncrement, v, u64::from(VAL_MASK)),
                        ));
                    }
                }
                // Checked against VAL_MASK just above.
                folders[t].push(m2s as u32, s2m as u32);
                if mesh {
                    collect_events(plan, &node, &hosted[t], &mut events[t])
                        .map_err(|kind| err(Some(TopSp(t as u8)), Some(plan.index), Some(node.step), kind))?;
                }
            }
            Ok(())
        })?;
        if let Some(p) = current_phase {
            finish_records(schedule, plan, at, p, &mut folders, &mut events, &mut records)
                .map_err(|kind| err(None, Some(plan.index), None, kind))?;
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
                    r.op.operand = hosted[t].iter().fold(0u32, |acc, &c| acc | (1u32 << c));
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

fn plan_phase_is_mesh(plan: &CollectivePlan, phase: u32) -> bool {
    plan.phases.get(phase as usize).and_then(|p| p.alg.pattern()) == Some(DevicePattern::Mesh)
}

/// The address of semaphore `index` of `window` on `topsp`. Every index
/// lowering uses is a named constant of `placement::sema` inside the
/// window; one outside it is refused as a limit, never addressed.
fn sem(params: &ArchParams, topsp: TopSp, window: SemWindow, index: u32) -> Result<u64, LowerErrorKind> {
    params.sem_addr(topsp.0, window, index).map_err(|e| LowerErrorKind::Limit {
        limit: Limit::SemaphoreIndex,
        value: u64::from(e.index),
        max: u64::from(e.limit),
        arch: params.arch,
    })
}

/// Adds this step's incoming transfers to the record's events: one event
/// per sending peer, counting one increment per half-transfer per channel.
fn collect_events(
    plan: &CollectivePlan,
    node: &NodeView<'_>,
    hosted: &[u8],
    events: &mut Vec<(MeshEvent, u64)>,
) -> Result<(), LowerErrorKind> {
    let layout = plan.layout();
    for t in node.transfers.iter().filter(|t| t.to == node.member && t.from != node.member) {
        let peer = member_rank(plan, node.group, t.from)?.0;
        let increments = u64::from(t.dst.count) * u64::from(t.halves.count()) * hosted.len() as u64;
        let mut bytes = 0u64;
        for &c in hosted {
            for b in t.dst.iter() {
                for h in t.halves.iter() {
                    bytes = bytes.saturating_add(layout.bytes(node.member, c, b, h));
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
        *target = target.saturating_add(increments);
        // The table's field is a u16; a count beyond it is refused as a limit.
        event.target = u16::try_from(*target).unwrap_or(u16::MAX);
        event.bytes = event.bytes.saturating_add(bytes);
    }
    Ok(())
}

/// The rank of member `index` of `group`, or the error naming it.
fn member_rank(plan: &CollectivePlan, group: u32, index: u32) -> Result<Rank, LowerErrorKind> {
    plan.rank(group, index).ok_or(LowerErrorKind::NoSuchMember { group, index })
}

/// Closes the records of `phase` on every TOP_SP.
fn finish_records(
    schedule: &Schedule,
    plan: &CollectivePlan,
    at: GroupMember,
    phase: u32,
    folders: &mut [Folder],
    events: &mut [Vec<(MeshEvent, u64)>],
    records: &mut [Vec<Record>],
) -> Result<(), LowerErrorKind> {
    let Some(p) = plan.phases.get(phase as usize) else { return Ok(()) };
    let pattern = p.alg.pattern().unwrap_or(DevicePattern::Ring);
    let sub_type = match pattern {
        DevicePattern::Ring => MetaringType::from_alg(p.alg).map_or(0, MetaringType::raw),
        DevicePattern::Mesh => {
            let inst = plan.instance(p, at.index());
            let ranks = (0..inst.scope.k)
                .map(|q| member_rank(plan, at.group(), inst.scope.member(q)))
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
    for (t, folder) in folders.iter_mut().enumerate() {
        let tp = std::mem::take(folder).finish();
        records[t].push(Record {
            op: CcOp {
                algo_type: pattern.raw(),
                algo_sub_type: sub_type,
                safe_mode,
                unique_tensors,
                ..CcOp::default()
            },
            tp,
            phase,
            first_step: p.first_step,
            step_n: p.step_n,
            events: events[t].iter().map(|&(e, _)| e).collect(),
            event_targets: std::mem::take(&mut events[t]).into_iter().map(|(_, t)| t).collect(),
        });
    }
    Ok(())
}

/// The EXEC config block of one TOP_SP.
fn neff_configs(schedule: &Schedule, tp: &TopSpProgram) -> Result<NeffConfigs, LowerErrorKind> {
    let params = schedule.arch.params();
    let t = tp.topsp;
    let read = |i| sem(params, t, SemWindow::Read, i);
    let limit = |limit, value: u64, max: u64| LowerErrorKind::Limit { limit, value, max, arch: schedule.arch };
    let records = tp.records().count() as u64;
    let op_num = u32::try_from(records).map_err(|_| limit(Limit::Records, records, u64::from(u32::MAX)))?;
    let functions = schedule.collectives.len() as u64;
    let function_n = u16::try_from(functions).map_err(|_| limit(Limit::Functions, functions, u64::from(u16::MAX)))?;
    let ends = tp.segments.len() as u64;
    let tpb_compl_addr_num =
        u8::try_from(ends).map_err(|_| limit(Limit::CompletionAddresses, ends, u64::from(u8::MAX)))?;
    let mut slot_spad_base = [0u64; SLOT_SPAD_BASE_N];
    slot_spad_base[0] = params.slot_spad_addr(t.0);
    let barrier = match schedule.barrier {
        Barrier::Host => {
            BarrierConfigs::Host { barrier_start: read(sema::BARRIER_START)?, barrier_done: read(sema::BARRIER_DONE)? }
        }
        Barrier::Device => BarrierConfigs::Device { steps: device_barrier(schedule, t)? },
    };
    let pring_total_desc_num =
        tp.records().flat_map(|r| &r.tp).fold(0u64, |acc, e| acc.saturating_add(e.total_descriptors()));
    Ok(NeffConfigs {
        trigger: read(sema::TRIGGER)?,
        trigger_next: read(sema::TRIGGER_NEXT)?,
        complete: read(sema::COMPLETE)?,
        complete_prev: read(sema::COMPLETE_PREV)?,
        tpb_stop_sema: read(sema::TPB_STOP)?,
        ctrl_spad: params.ctrl_spad_addr(t.0),
        slot_spad_base,
        op_num,
        function_n,
        tpb_compl_addr_num,
        // At most 32 channels in all.
        channel_n: tp.channels.len() as u8,
        topsp_index: t.0,
        send_credits: schedule.send_credits,
        channel_ids: tp.channels.clone(),
        mesh_events: tp.records().flat_map(|r| r.events.iter().copied()).collect(),
        barrier,
        basic_block: BasicBlockConfigs {
            switch_completed: read(sema::SWITCH_COMPLETED)?,
            pring_base_addr: params.pring_addr(t.0),
            pring_total_desc_num,
        },
        flags: NeffFlags { leader: t.0 == 0, dbg_cc_nop: false, host_cc: false },
    })
}

/// The radix-5 dissemination barrier over every rank (`docs/wire-format.md` §8.2).
fn device_barrier(schedule: &Schedule, t: TopSp) -> Result<Vec<BarrierStep>, LowerErrorKind> {
    let params = schedule.arch.params();
    let rank_n = schedule.shape.rank_n;
    let radix = DEVICE_BARRIER_FANOUT + 1;
    let mut steps = Vec::new();
    let mut span = 1u64;
    while span < u64::from(rank_n) {
        if steps.len() == DEVICE_STEPS_N {
            return Err(LowerErrorKind::DeviceBarrierTooLarge { rank_n });
        }
        let s = steps.len() as u32;
        let mut step = BarrierStep::default();
        let mut used = 0u16;
        for i in 1..=DEVICE_BARRIER_FANOUT {
            if u64::from(i) * span < u64::from(rank_n) {
                let slot = (i - 1) as usize;
                step.barrier_sema[slot] = sem(params, t, SemWindow::Read, device_barrier_sema(s, i - 1))?;
                step.target_sema_val[slot] = 1;
                used += 1;
            }
        }
        step.m2s_val = used;
        step.s2m_val = used;
        steps.push(step);
        span *= u64::from(radix);
    }
    if steps.is_empty() {
        // A single rank still runs one (empty) step: the block needs 1..=4.
        steps.push(BarrierStep::default());
    }
    Ok(steps)
}
