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
//!
//! **Per rank, little is allocated.** What does not depend on the rank
//! (each collective's descriptor table per TOP_SP) is made once per
//! schedule by a [`Lowerer`], which a compile lowers every rank through;
//! a record keeps its `tp_inc_steps` runs inline up to two
//! ([`TpRuns`]); one buffer of posts serves every
//! phase. A rank's program is then a few vectors per TOP_SP (its
//! channels, segments and records), which matters when a proof lowers,
//! checks and drops 65,536 ranks. Why a rank cannot be lowered is
//! `error.rs`.

pub(crate) mod distinct;
mod error;
mod neff;
mod runs;
mod steps;
#[cfg(test)]
pub(crate) mod tests;

use crate::placement::{hosted_channels, mesh_sema, sema, topsps_for, topsps_used};
use crate::schedule::{CollectivePlan, DescTable, Schedule, Transfer, mesh_type};
use crate::valid::GroupMember;
use ccc_ir::arch::SemWindow;
use ccc_ir::enums::{DevicePattern, MeshType, MetaringType, OpType};
use ccc_ir::id::{CollectiveIdx, Rank, Step, TopSp};
use ccc_ir::wire::ctrl_spad;
use ccc_ir::wire::ctrl_word::CcOp;
use ccc_ir::wire::neff_configs::{BarrierConfigs, BarrierStep, CHANNEL_IDS_N, MeshEvent, NeffConfigs};
use ccc_ir::wire::tp::{Folder, TpIncStep, TpRuns, VAL_MASK};
pub use error::{Limit, LowerError, LowerErrorKind};
use neff::{neff_configs, sem};
use serde::Serialize;
use std::mem::size_of;
use std::sync::OnceLock;

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

/// Lowers rank `rank`, by records: each phase's folded `tp_inc_steps`
/// runs come from its pattern (see the module overview), in time
/// proportional to the rank's records and runs, whatever the world's size.
///
/// # Errors
///
/// [`LowerError`] naming the limit, the value, the rank and the TOP_SP when
/// the schedule does not fit.
pub fn lower(schedule: &Schedule, rank: Rank) -> Result<RankProgram, LowerError> {
    Lowerer::new(schedule).lower(rank)
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
    Lowerer::new(schedule).lower_with(rank, steps::collective)
}

/// What lowering every rank of one schedule shares, made once: each
/// collective's descriptor table on each TOP_SP it uses (the channels
/// hosted there and what a block costs on them do not depend on the
/// rank). [`lower`] makes one per rank; a compile that lowers many ranks
/// makes one and lowers each rank through it, to the same programs.
pub struct Lowerer<'s> {
    schedule: &'s Schedule,
    /// `[collective][TOP_SP]`, over the TOP_SPs the collective uses.
    tables: Vec<Vec<DescTable<'s>>>,
    /// `[collective][group]`, for a collective of explicit groups with a
    /// mesh phase: the mesh type of the whole group, found for the first
    /// of its ranks lowered whose mesh scope is the group (a permute's),
    /// and kept for the others (each rank listing the group made lowering
    /// a world-wide group quadratic).
    group_meshes: Vec<Vec<OnceLock<MeshType>>>,
}

impl<'s> Lowerer<'s> {
    /// The tables of `schedule`.
    pub fn new(schedule: &'s Schedule) -> Lowerer<'s> {
        let params = schedule.arch.params();
        let tables = schedule
            .collectives
            .iter()
            .map(|plan| {
                (0..topsps_for(params, plan.channels))
                    .map(|t| DescTable::new(plan, &hosted_channels(params, plan.channels, t)))
                    .collect()
            })
            .collect();
        let group_meshes = schedule
            .collectives
            .iter()
            .map(|plan| {
                let mesh = plan.phases.iter().any(|p| p.alg.pattern() == Some(DevicePattern::Mesh));
                let n = if mesh && plan.groups.is_explicit() { plan.groups.group_n() } else { 0 };
                (0..n).map(|_| OnceLock::new()).collect()
            })
            .collect();
        Lowerer { schedule, tables, group_meshes }
    }

    /// Lowers rank `rank`, as [`lower`].
    ///
    /// # Errors
    ///
    /// As [`lower`].
    pub fn lower(&self, rank: Rank) -> Result<RankProgram, LowerError> {
        self.lower_with(rank, runs::collective)
    }
}

/// What one phase posts on one TOP_SP: its folded `tp_inc_steps`, and its
/// mesh events with each one's count before narrowing to a u16.
#[derive(Clone, Debug, Default)]
struct Posts {
    folder: Folder,
    events: Vec<(MeshEvent, u64)>,
    /// Where each peer's event sits in `events`: a mesh over k members
    /// finds its k - 1 peers' events in O(k log k), not O(k^2).
    event_of: std::collections::BTreeMap<u32, usize>,
}

/// Takes each phase of a collective once it is posted, in order: the
/// phase and its posts per TOP_SP the collective uses (taken, so the
/// buffer can serve the next phase).
type PhaseSink<'e> = dyn FnMut(u32, &mut [Posts]) -> Result<(), LowerError> + 'e;

/// One rank lowering one collective: where the rank stands in it, and how
/// descriptors are counted on each TOP_SP. Both ways of lowering
/// (`runs.rs`, `steps.rs`) count through it.
struct Lowering<'a> {
    schedule: &'a Schedule,
    plan: &'a CollectivePlan,
    /// Per group, its mesh type once found (see [`Lowerer`]); empty when
    /// not kept.
    group_meshes: &'a [OnceLock<MeshType>],
    /// The rank, its replica group and its index in it.
    at: GroupMember,
    rank: Rank,
    group: u32,
    member: u32,
    /// Per TOP_SP, the descriptor table of the channels it hosts.
    tables: &'a [DescTable<'a>],
}

impl<'a> Lowering<'a> {
    /// `None` when the collective's groups do not hold `rank`.
    fn new(
        schedule: &'a Schedule,
        plan: &'a CollectivePlan,
        tables: &'a [DescTable<'a>],
        group_meshes: &'a [OnceLock<MeshType>],
        rank: Rank,
    ) -> Option<Lowering<'a>> {
        let at = plan.groups.locate(rank)?;
        Some(Lowering { schedule, plan, group_meshes, at, rank, group: at.group(), member: at.index(), tables })
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
                collect_events(self, transfers, table, u64::from(n), post)
                    .map_err(|kind| self.error(Some(TopSp(t as u8)), Some(step), kind))?;
            }
        }
        Ok(())
    }
}

impl Lowerer<'_> {
    /// Lowers `rank`, each collective's phases posted by `posts`.
    fn lower_with(
        &self,
        rank: Rank,
        posts: fn(&Lowering<'_>, &mut PhaseSink<'_>) -> Result<(), LowerError>,
    ) -> Result<RankProgram, LowerError> {
        let schedule = self.schedule;
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
        for ((plan, tables), group_meshes) in schedule.collectives.iter().zip(&self.tables).zip(&self.group_meshes) {
            // A channel list is a u32 bit mask (`1 << channel` below).
            if u32::from(plan.channels) > u32::BITS {
                let kind = LowerErrorKind::TooManyChannels { channels: plan.channels };
                return Err(err(None, Some(plan.index), None, kind));
            }
            let lowering = Lowering::new(schedule, plan, tables, group_meshes, rank)
                .ok_or_else(|| err(None, Some(plan.index), None, LowerErrorKind::NotInGroups))?;
            let mut records: Vec<Vec<Record>> =
                (0..tables.len()).map(|_| Vec::with_capacity(plan.phases.len())).collect();
            posts(&lowering, &mut |phase, phase_posts| {
                finish_records(&lowering, phase, phase_posts, &mut records)
                    .map_err(|kind| lowering.error(None, None, kind))
            })?;
            for (t, mut recs) in records.into_iter().enumerate() {
                if recs.is_empty() {
                    continue;
                }
                let topsp = TopSp(t as u8);
                let n = recs.len();
                // The record whose mesh events first go past the TOP_SP's
                // table, its step, and the events through it.
                let mut over = None;
                for (i, r) in recs.iter_mut().enumerate() {
                    r.op.trigger_next = i + 1 < n;
                    r.op.ring_wait_complete = i > 0;
                    r.op.ring_send_complete = i + 1 < n;
                    r.op.reporter = t == 0;
                    // Mesh or ring view of the union, from the phase's
                    // algorithm, not from the packed `algo_type` (whose
                    // meaning is the one [resolved] line, `AlgType::pattern`).
                    if plan_phase_is_mesh(plan, r.phase) {
                        let shift = events_used[t];
                        let event_n = r.events.len() as u32;
                        let max = u32::from(params.mesh_event_max);
                        if shift + event_n > max {
                            over = Some((i, r.first_step, shift + event_n));
                            break;
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
                if let Some((i, step, through)) = over {
                    // What the TOP_SP needs through the end of this
                    // collective, not only up to the record that first goes
                    // past the limit: what `Auto`'s legality counts
                    // (`cost/auto/legal.rs`).
                    let later: usize = recs
                        .iter()
                        .skip(i + 1)
                        .filter(|l| plan_phase_is_mesh(plan, l.phase))
                        .map(|l| l.events.len())
                        .sum();
                    let needed = u64::from(through) + later as u64;
                    let max = u64::from(params.mesh_event_max);
                    return Err(err(Some(topsp), Some(plan.index), Some(step), limit(Limit::MeshEvents, needed, max)));
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
    table: &DescTable<'_>,
    times: u64,
    post: &mut Posts,
) -> Result<(), LowerErrorKind> {
    let Posts { events, event_of, .. } = post;
    let hosted = table.channels().len() as u64;
    for t in transfers.iter().filter(|t| t.to == l.member && t.from != l.member) {
        let peer = member_rank(l.plan, l.group, t.from)?.0;
        let increments = u64::from(t.dst.count) * u64::from(t.halves.count()) * hosted;
        // Every block of the transfer on every hosted channel: the table
        // sums them in closed form (a mesh all-reduce's transfer holds
        // every block of the buffer).
        let bytes = table.bytes(l.member, t.dst, t.halves);
        let at = *event_of.entry(peer).or_insert_with(|| {
            events.push((MeshEvent { peer, sema_index: 0, target: 0, bytes: 0 }, 0));
            events.len() - 1
        });
        let Some((event, target)) = events.get_mut(at) else { continue };
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

/// Closes the records of `phase` on every TOP_SP, from what it posted
/// (taken, leaving `posts` empty).
fn finish_records(
    l: &Lowering<'_>,
    phase: u32,
    posts: &mut [Posts],
    records: &mut [Vec<Record>],
) -> Result<(), LowerErrorKind> {
    let (schedule, plan) = (l.schedule, l.plan);
    let Some(p) = plan.phases.get(phase as usize) else { return Ok(()) };
    let pattern = p.alg.pattern().unwrap_or(DevicePattern::Ring);
    let sub_type = match pattern {
        DevicePattern::Ring => MetaringType::from_alg(p.alg).map_or(0, MetaringType::raw),
        DevicePattern::Mesh => {
            let scope = plan.instance(p, l.member).scope;
            // The world in rank order: the scope's ranks ascend, and node
            // and pod ascend with the rank, so its first and last rank say
            // whether it spans nodes or pods (a permute's scope is the
            // world: listing it per rank made lowering the world
            // quadratic). Explicit groups list every member, a scope that
            // is the whole group once per group (`Lowerer`).
            let of = |members: &mut dyn Iterator<Item = u32>| -> Result<MeshType, LowerErrorKind> {
                let ranks = members.map(|m| member_rank(plan, l.group, m)).collect::<Result<Vec<_>, _>>()?;
                Ok(mesh_type(schedule.arch, &schedule.shape, ranks))
            };
            let whole_group = scope.k == plan.groups.size();
            let kept = l.group_meshes.get(l.group as usize).filter(|_| whole_group);
            let mesh = if let Some(&found) = kept.and_then(OnceLock::get) {
                found
            } else if plan.groups.is_explicit() || scope.k <= 2 {
                let found = of(&mut (0..scope.k).map(|q| scope.member(q)))?;
                if let Some(kept) = kept {
                    let _ = kept.set(found);
                }
                found
            } else {
                of(&mut [scope.member(0), scope.member(scope.k - 1)].into_iter())?
            };
            mesh.raw()
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
    for (post, records) in posts.iter_mut().zip(records.iter_mut()) {
        let post = std::mem::take(post);
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
