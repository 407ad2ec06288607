//! The postcondition proof: execute the schedule symbolically and check
//! that every collective does what its op promises.
//!
//! Each group runs in bulk-synchronous steps: at step `s` every member
//! lists its transfers; the values it sends are read from its buffer as it
//! stood before the step, then every receive is matched to exactly one send
//! of the same transfer by the sender and applied (copied, or folded in
//! with a check that no contribution arrives twice). At the end every cell
//! the op defines is compared with what it must hold. A cell's value is the
//! set of members whose contribution it carries (`sets::Sets`); for all-to-all,
//! also which chunk it is.
//!
//! Every transfer moves data on all channels alike, so channels need no
//! separate run; the two halves of a chunk do when some transfer moves only
//! one (Kangaring), and then each half is proven on its own.

use super::sets::{EMPTY, SetId, Sets};
use super::symmetry::{Rotation, Symmetry, is_rotated};
use super::{Defect, DefectKind, ProverOptions, VerifyError};
use crate::schedule::{CollectivePlan, Halves, OpKind, Phase, PhaseInstance, PhaseKind, Schedule, Transfer};
use ccc_ir::enums::HalfChunk;
use ccc_ir::id::{Chunk, CollectiveIdx, Rank, Step};
use rayon::prelude::*;
use serde::Serialize;

/// The largest symbolic buffer (members x blocks of one group) the full
/// run takes on; 2^27 cells is about 1 GiB of handles, and about as much
/// again of sets (see the memory budget, `pipeline::DEFAULT_MEMORY_BUDGET`). A symmetric group, run on
/// member 0 alone, needs no such buffer.
pub const MAX_PROOF_CELLS: u64 = 1 << 27;

/// One member at one step: where a [`TransferSource`] is asked for transfers.
#[derive(Clone, Copy, Debug)]
pub struct Site<'a> {
    /// The replica group.
    pub group: u32,
    /// The member's group-local index.
    pub index: u32,
    /// The phase running.
    pub phase: &'a Phase,
    /// The phase placed around the member.
    pub inst: PhaseInstance,
    /// The collective step.
    pub step: u32,
    /// The step within the phase.
    pub t: u32,
}

/// Where transfers come from: the schedule itself, or, in tests, a mutated
/// view of it.
pub trait TransferSource: Sync {
    /// Appends every transfer the member at `site` sends or receives.
    fn transfers(&self, schedule: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>);
}

/// The schedule as built.
#[derive(Clone, Copy, Debug, Default)]
pub struct AsBuilt;

impl TransferSource for AsBuilt {
    fn transfers(&self, schedule: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
        schedule.phase_transfers(plan, site.group, site.phase, site.inst, site.t, out);
    }
}

/// What the postcondition proof established for one collective.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CollectivePostcondition {
    /// The collective.
    pub collective: u32,
    /// The postcondition that was checked, in words.
    pub claim: String,
    /// Groups executed.
    pub groups: u32,
    /// Members per group.
    pub members: u32,
    /// Steps executed.
    pub steps: u32,
    /// Halves executed separately (1 when every transfer moves both).
    pub halves: u32,
    /// Transfers matched and applied, summed over groups and halves.
    pub transfers: u64,
}

/// Proves every collective's postcondition.
///
/// # Errors
///
/// [`VerifyError::Defect`] with the first violation (rank, step, chunk);
/// [`VerifyError::TooLarge`] when a group's symbolic buffer exceeds
/// [`MAX_PROOF_CELLS`].
pub fn prove(schedule: &Schedule, source: &dyn TransferSource) -> Result<Vec<CollectivePostcondition>, VerifyError> {
    prove_with(schedule, source, &ProverOptions::default())
}

/// [`prove`] with explicit prover options.
///
/// # Errors
///
/// As [`prove`].
pub fn prove_with(
    schedule: &Schedule,
    source: &dyn TransferSource,
    options: &ProverOptions,
) -> Result<Vec<CollectivePostcondition>, VerifyError> {
    let symmetry = if options.symmetry { Symmetry::find_with(schedule, source) } else { Symmetry::none() };
    prove_given(schedule, source, options, &symmetry, &|_| {})
}

/// [`prove_with`] on the schedule as built, with its invariant groups
/// already found ([`Symmetry::find`]), to share them with the protocol
/// proof.
///
/// # Errors
///
/// As [`prove`].
pub fn prove_as_built(
    schedule: &Schedule,
    symmetry: &Symmetry,
    options: &ProverOptions,
) -> Result<Vec<CollectivePostcondition>, VerifyError> {
    prove_given(schedule, &AsBuilt, options, symmetry, &|_| {})
}

/// [`prove_as_built`], calling `proven(members)` as each group is proven
/// (for progress reports).
pub(crate) fn prove_as_built_reporting(
    schedule: &Schedule,
    symmetry: &Symmetry,
    options: &ProverOptions,
    proven: &dyn Fn(u64),
) -> Result<Vec<CollectivePostcondition>, VerifyError> {
    prove_given(schedule, &AsBuilt, options, symmetry, proven)
}

fn prove_given(
    schedule: &Schedule,
    source: &dyn TransferSource,
    options: &ProverOptions,
    symmetry: &Symmetry,
    proven: &dyn Fn(u64),
) -> Result<Vec<CollectivePostcondition>, VerifyError> {
    schedule
        .collectives
        .iter()
        .map(|plan| prove_collective(schedule, plan, source, options, symmetry, proven))
        .collect()
}

/// Whether every group of `plan` the postcondition proof runs in full (not
/// on member 0 alone) fits [`MAX_PROOF_CELLS`], decided before anything is
/// lowered: a group runs in full unless its op's buffers start invariant,
/// symmetry is on and a sample of its members runs member 0's program
/// moved (`symmetry::sampled`; a group the sample passes but the proof
/// later finds not symmetric is refused then, as before).
///
/// # Errors
///
/// [`VerifyError::TooLarge`] for the first collective with a group that
/// surely runs in full and does not fit.
pub(crate) fn check_cells(schedule: &Schedule, options: &ProverOptions) -> Result<(), VerifyError> {
    for plan in &schedule.collectives {
        let cells = full_run_cells(plan);
        if cells <= MAX_PROOF_CELLS {
            continue;
        }
        let orbit = options.symmetry && invariant(plan);
        if (0..plan.groups.group_n()).any(|g| !orbit || super::symmetry::sampled(schedule, plan, g).is_none()) {
            return Err(VerifyError::TooLarge { collective: plan.index, cells, limit: MAX_PROOF_CELLS });
        }
    }
    Ok(())
}

/// The symbolic buffer of a full run of one group of `plan`: members x blocks.
pub(crate) fn full_run_cells(plan: &CollectivePlan) -> u64 {
    u64::from(plan.groups.size()) * u64::from(plan.layout().block_n())
}

/// The bytes a full run of one group of `plan` holds, by estimate: per
/// cell its set handle (and for all-to-all the chunk it holds) and as much
/// again for the interned sets and memoized unions (measured: a 3,000-rank
/// recursive halving holds about that), per member its place in the phase
/// and its step's lists.
pub(crate) fn full_run_bytes(plan: &CollectivePlan) -> u64 {
    /// A member's lists of one step on the heap, about: four small
    /// vectors with their allocators' headers.
    const MEMBER_LISTS: usize = 512;
    let chunk = if plan.kind == OpKind::AllToAll { std::mem::size_of::<u32>() } else { 0 };
    let cell = (2 * std::mem::size_of::<SetId>() + chunk) as u64;
    let member = (std::mem::size_of::<Member>() + std::mem::size_of::<PhaseInstance>() + MEMBER_LISTS) as u64;
    full_run_cells(plan).saturating_mul(cell).saturating_add(u64::from(plan.groups.size()) * member)
}

/// Bytes the postcondition proof of `plan` holds at most, by estimate
/// (groups run one after the other): a full run's, unless its groups are
/// proven on member 0 alone (judged on the first group's sample, as
/// [`check_cells`] judges every group's), or too large to run at all
/// ([`check_cells`] refuses those).
pub(crate) fn bytes(schedule: &Schedule, plan: &CollectivePlan, options: &ProverOptions) -> u64 {
    let orbit = options.symmetry && invariant(plan) && super::symmetry::sampled(schedule, plan, 0).is_some();
    if orbit || full_run_cells(plan) > MAX_PROOF_CELLS { 0 } else { full_run_bytes(plan) }
}

/// Whether the op's buffers start invariant under moving members (what
/// the run on member 0 alone needs).
pub(crate) fn invariant(plan: &CollectivePlan) -> bool {
    matches!(plan.kind, OpKind::AllReduce | OpKind::AllGather | OpKind::ReduceScatter)
}

fn prove_collective(
    schedule: &Schedule,
    plan: &CollectivePlan,
    source: &dyn TransferSource,
    options: &ProverOptions,
    symmetry: &Symmetry,
    proven: &dyn Fn(u64),
) -> Result<CollectivePostcondition, VerifyError> {
    let n = plan.groups.size();
    // Only a full run holds every member's buffer.
    let cells = full_run_cells(plan);
    let too_large = VerifyError::TooLarge { collective: plan.index, cells, limit: MAX_PROOF_CELLS };
    let halves = halves(plan);
    let mut transfers = 0u64;
    // Their buffers start symmetric.
    let invariant = invariant(plan);
    for group in 0..plan.groups.group_n() {
        let rotation = if invariant { symmetry.rotation(plan.index, group) } else { None };
        for &half in halves {
            // Member 0 alone, when every member runs its program moved;
            // anything that run cannot accept is left to the full run,
            // which names the defect.
            if let Some(moved) = rotation.and_then(|rot| orbit(plan, rot, half)) {
                transfers += moved;
                continue;
            }
            if cells > MAX_PROOF_CELLS {
                return Err(too_large);
            }
            let mut run = Run::new(schedule, plan, group, half);
            run.parallel = run.n >= options.parallel_from;
            run.execute(source)?;
            run.check_final()?;
            transfers += run.transfers;
        }
        proven(u64::from(n));
    }
    Ok(CollectivePostcondition {
        collective: plan.index,
        claim: claim(plan),
        groups: plan.groups.group_n(),
        members: n,
        steps: plan.step_n,
        halves: halves.len() as u32,
        transfers,
    })
}

/// The halves a collective's proof runs separately: both when some
/// transfer moves only one (Kangaring's two directions), else one run for
/// both.
pub(crate) fn halves(plan: &CollectivePlan) -> &'static [HalfChunk] {
    let split = plan.phases.iter().any(|p| {
        matches!(p.kind, PhaseKind::RingReduceScatter { bidir: true } | PhaseKind::RingAllGather { bidir: true })
    });
    if split { &[HalfChunk::H0, HalfChunk::H1] } else { &[HalfChunk::H0] }
}

/// Whether transfer `t` moves half `half`.
pub(crate) fn moves(t: &Transfer, half: HalfChunk) -> bool {
    match t.halves {
        Halves::Both => true,
        Halves::Only(h) => h == half,
    }
}

/// The run of a symmetric group (all-reduce, all-gather or
/// reduce-scatter: their buffers start invariant) on member 0 alone, for
/// one half. Member `m`'s cell `b` is member 0's cell `b - m` with every
/// contributor shifted by `m`, so what member `q` sends from block `b` is
/// member 0's block `b - q`, shifted by `q`. The checks are the full run's,
/// on member 0's transfers: each must involve member 0 and keep its block;
/// each receive from `q` is matched to one send of member 0 that, rotated
/// by `q`, is that receive (member `q`'s send, by invariance), and every
/// send is matched, which matches every member's; folds never overlap; the
/// end state is member 0's share of the postcondition.
///
/// Returns the transfers matched over all members, or `None` when any
/// check fails: the full run then finds the defect and names it.
fn orbit(plan: &CollectivePlan, rot: &Rotation, half: HalfChunk) -> Option<u64> {
    let n = plan.groups.size();
    let action = &rot.action;
    let mut sets = Sets::new(n);
    let own = sets.single(0);
    let mut rel: Vec<SetId> =
        (0..n).map(|b| if plan.kind == OpKind::AllGather && b != 0 { EMPTY } else { own }).collect();
    let moves = |t: &Transfer| match t.halves {
        Halves::Both => true,
        Halves::Only(h) => h == half,
    };
    let (mut received, mut values, mut matched) = (0u64, Vec::new(), Vec::new());
    for step in 0..plan.step_n {
        let list = rot.step(step);
        if list.iter().any(|t| {
            t.from >= n || t.to >= n || (t.from != 0 && t.to != 0) || !t.src.same_positions(t.dst) || !t.src.below(n)
        }) {
            return None;
        }
        matched.clear();
        matched.resize(list.len(), false);
        for y in list.iter().filter(|y| y.to == 0) {
            let k = (0..list.len())
                .find(|&k| list[k].from == 0 && !matched[k] && is_rotated(y, &list[k], y.from, action))?;
            matched[k] = true;
        }
        if (0..list.len()).any(|k| list[k].from == 0 && !matched[k]) {
            return None;
        }
        // Read every value before the step writes any.
        values.clear();
        for y in list.iter().filter(|y| y.to == 0 && moves(y)) {
            for b in y.src.iter() {
                let at = action.add(b, action.inverse(y.from));
                values.push(sets.translate(rel[at as usize], y.from, action));
            }
        }
        let mut next = values.iter();
        for y in list.iter().filter(|y| y.to == 0 && moves(y)) {
            for b in y.dst.iter() {
                let (cell, &value) = (&mut rel[b as usize], next.next()?);
                *cell = match y.fold {
                    None => value,
                    Some(_) => sets.union(*cell, value).ok()?,
                };
            }
            received += 1;
        }
    }
    let full = sets.full();
    let done = match plan.kind {
        OpKind::AllReduce => rel.iter().all(|&c| c == full),
        OpKind::AllGather => (0..n).all(|b| rel[b as usize] == sets.single(b)),
        OpKind::ReduceScatter => rel[0] == full,
        _ => false,
    };
    done.then_some(received * u64::from(n))
}

/// A send and a receive describe the same transfer: the same members,
/// halves and fold, the same block positions (a one-block set's stride
/// names nothing), whatever `neigh` says: a label for display that nothing
/// emitted or proven reads (so that a group whose members differ only in
/// it is still symmetric; see `symmetry`).
fn same(a: &Transfer, b: &Transfer) -> bool {
    (a.from, a.to, a.halves, a.fold) == (b.from, b.to, b.halves, b.fold)
        && a.src.same_positions(b.src)
        && a.dst.same_positions(b.dst)
}

/// The postcondition a collective must meet, in words (the `claim` of its proof).
pub fn claim(plan: &CollectivePlan) -> String {
    match plan.kind {
        OpKind::AllReduce => "every rank holds every chunk reduced over every rank, each contribution once".into(),
        OpKind::AllGather => "every rank holds every rank's chunk".into(),
        OpKind::ReduceScatter => "rank i holds chunk i reduced over every rank, each contribution once".into(),
        OpKind::Broadcast => "every rank holds the root's chunks".into(),
        OpKind::Reduce => "the root holds every chunk reduced over every rank, each contribution once".into(),
        OpKind::AllToAll => "rank i's output chunk j is rank j's input chunk i, with its size".into(),
        OpKind::Permute { reduce: false } => "every target holds its source's buffer".into(),
        OpKind::Permute { reduce: true } => "every target holds its own and its source's buffer, folded once".into(),
    }
}

/// One group, one half: the symbolic buffers and the step loop.
struct Run<'a> {
    schedule: &'a Schedule,
    plan: &'a CollectivePlan,
    group: u32,
    half: HalfChunk,
    n: u32,
    block_n: u32,
    sets: Sets,
    cells: Vec<SetId>,
    /// The chunk each cell holds (all-to-all only; elsewhere a cell's chunk is its position).
    chunks: Option<Vec<u32>>,
    transfers: u64,
    /// List each step's transfers on every core.
    parallel: bool,
}

/// One member's share of a step: what it listed, what it sends (with the
/// values read before the step), what it expects. Reused across steps.
#[derive(Default)]
struct Member {
    listed: Vec<Transfer>,
    values: Vec<(SetId, u32)>,
    outgoing: Vec<Outgoing>,
    /// Positions in `listed` of the transfers the member receives.
    incoming: Vec<u32>,
    error: Option<VerifyError>,
}

/// A send waiting for its receive: its position in `listed` and where its
/// values start.
struct Outgoing {
    listed: u32,
    values: usize,
    matched: bool,
}

impl<'a> Run<'a> {
    fn new(schedule: &'a Schedule, plan: &'a CollectivePlan, group: u32, half: HalfChunk) -> Self {
        let n = plan.groups.size();
        let block_n = plan.layout().block_n();
        let size = (n as usize) * (block_n as usize);
        let moves = plan.kind == OpKind::AllToAll;
        let mut run = Run {
            schedule,
            plan,
            group,
            half,
            n,
            block_n,
            sets: Sets::new(n),
            cells: vec![EMPTY; size],
            chunks: moves.then(|| vec![0; size]),
            transfers: 0,
            parallel: false,
        };
        for m in 0..n {
            let own = run.sets.single(m);
            for b in 0..block_n {
                let holds = match plan.kind {
                    OpKind::AllReduce | OpKind::ReduceScatter | OpKind::Reduce | OpKind::Permute { .. } => true,
                    OpKind::AllGather => b == m,
                    OpKind::Broadcast => Some(m) == plan.root,
                    OpKind::AllToAll => b < n,
                };
                let c = run.cell(m, b);
                if holds {
                    run.cells[c] = own;
                }
                if let Some(ch) = run.chunks.as_mut() {
                    ch[c] = b % n;
                }
            }
        }
        run
    }

    fn rank(&self, m: u32) -> Rank {
        self.plan.rank(self.group, m)
    }

    fn defect(&self, rank: Option<u32>, step: Option<u32>, chunk: Option<u32>, kind: DefectKind) -> VerifyError {
        VerifyError::Defect(Box::new(Defect {
            collective: CollectiveIdx(self.plan.index),
            group: self.group,
            rank: rank.map(|m| self.rank(m)),
            topsp: None,
            record: None,
            step: step.map(Step),
            chunk: chunk.map(Chunk),
            kind,
        }))
    }

    /// Where cell (member `m`, block `b`) lives: diagonal-major, at
    /// `((b - m) mod block_n) * n + m`. A ring step touches block `m - s - 1`
    /// of every member `m`, one diagonal, so its reads and writes are
    /// contiguous instead of one cache miss per member.
    fn cell(&self, m: u32, b: u32) -> usize {
        let mm = if m < self.block_n { m } else { m % self.block_n };
        let diag = if b >= mm { b - mm } else { b + self.block_n - mm };
        (diag as usize) * (self.n as usize) + m as usize
    }

    fn moves_half(&self, t: &Transfer) -> bool {
        match t.halves {
            Halves::Both => true,
            Halves::Only(h) => h == self.half,
        }
    }

    fn execute(&mut self, source: &dyn TransferSource) -> Result<(), VerifyError> {
        let plan = self.plan;
        let mut insts: Vec<PhaseInstance> = Vec::with_capacity(self.n as usize);
        let mut members: Vec<Member> = (0..self.n).map(|_| Member::default()).collect();
        for phase in &plan.phases {
            // Each member's place in the phase, once per phase.
            insts.clear();
            insts.extend((0..self.n).map(|m| plan.instance(phase, m)));
            for t in 0..phase.step_n {
                self.list(source, phase, &insts, t, &mut members);
                self.exchange(phase.first_step + t, &mut members)?;
            }
        }
        Ok(())
    }

    /// First half of a bulk-synchronous step, member by member and in
    /// parallel (the buffers are only read): every member lists its
    /// transfers, and its sends read the buffers as they stood.
    fn list(
        &self,
        source: &dyn TransferSource,
        phase: &Phase,
        insts: &[PhaseInstance],
        t: u32,
        members: &mut [Member],
    ) {
        let step = phase.first_step + t;
        let one = |(m, b): (usize, &mut Member)| {
            let m = m as u32;
            b.listed.clear();
            b.values.clear();
            b.outgoing.clear();
            b.incoming.clear();
            b.error = None;
            let site = Site { group: self.group, index: m, phase, inst: insts[m as usize], step, t };
            source.transfers(self.schedule, self.plan, &site, &mut b.listed);
            for (k, tr) in b.listed.iter().enumerate() {
                if let Err(e) = self.check_shape(m, step, tr) {
                    b.error = Some(e);
                    return;
                }
                // Every transfer is matched, whichever halves it moves: the
                // protocol proof's balance of every connection rests on it.
                // Only those moving this half carry values.
                if tr.from == m {
                    let at = b.values.len();
                    for j in 0..if self.moves_half(tr) { tr.src.count } else { 0 } {
                        let c = self.cell(m, tr.src.get(j));
                        let chunk = self.chunks.as_ref().map_or(tr.src.get(j), |ch| ch[c]);
                        b.values.push((self.cells[c], chunk));
                    }
                    b.outgoing.push(Outgoing { listed: k as u32, values: at, matched: false });
                }
                if tr.to == m {
                    b.incoming.push(k as u32);
                }
            }
        };
        if self.parallel {
            members.par_iter_mut().enumerate().with_min_len(16).for_each(one);
        } else {
            members.iter_mut().enumerate().for_each(one);
        }
    }

    /// Second half of the step, in member order: every receive is matched to
    /// one send of the same transfer and applied; no send may go unmatched.
    fn exchange(&mut self, step: u32, members: &mut [Member]) -> Result<(), VerifyError> {
        if let Some(e) = members.iter_mut().find_map(|b| b.error.take()) {
            return Err(e);
        }
        for m in 0..members.len() {
            for k in 0..members[m].incoming.len() {
                let tr = members[m].listed[members[m].incoming[k] as usize];
                let from = &mut members[tr.from as usize];
                let listed = &from.listed;
                let Some(o) = from.outgoing.iter_mut().find(|o| !o.matched && same(&listed[o.listed as usize], &tr))
                else {
                    return Err(self.defect(
                        Some(m as u32),
                        Some(step),
                        Some(tr.dst.start),
                        DefectKind::UnmatchedReceive { from: self.rank(tr.from) },
                    ));
                };
                o.matched = true;
                if !self.moves_half(&tr) {
                    continue;
                }
                let at = o.values;
                let values = &members[tr.from as usize].values[at..at + tr.src.count as usize];
                self.apply(step, &tr, values)?;
                self.transfers += 1;
            }
        }
        if let Some((b, o)) =
            members.iter().flat_map(|b| b.outgoing.iter().map(move |o| (b, o))).find(|(_, o)| !o.matched)
        {
            let tr = b.listed[o.listed as usize];
            return Err(self.defect(
                Some(tr.from),
                Some(step),
                Some(tr.src.start),
                DefectKind::UnmatchedSend { to: self.rank(tr.to) },
            ));
        }
        Ok(())
    }

    /// A listed transfer must involve the member, stay inside the buffers,
    /// and (except for all-to-all) keep each chunk at its position.
    fn check_shape(&self, m: u32, step: u32, t: &Transfer) -> Result<(), VerifyError> {
        let out_of_range = |what, value: u32, limit: u32| {
            self.defect(Some(m), Some(step), None, DefectKind::OutOfRange { what, value, limit })
        };
        if t.from >= self.n {
            return Err(out_of_range("sending member", t.from, self.n));
        }
        if t.to >= self.n {
            return Err(out_of_range("receiving member", t.to, self.n));
        }
        if t.from != m && t.to != m {
            return Err(self.defect(
                Some(m),
                Some(step),
                None,
                DefectKind::Stranger { from: self.rank(t.from), to: self.rank(t.to) },
            ));
        }
        if t.src.count != t.dst.count {
            return Err(out_of_range("destination chunk count", t.dst.count, t.src.count));
        }
        // Computed without wrapping: a set in range is ascending, so two
        // with as many positions name the same ones exactly when they are
        // the same set (what matching and symmetry rely on).
        let last = |s: crate::schedule::BlockSet| s.last().map_or(0, |l| u32::try_from(l).unwrap_or(u32::MAX));
        if !t.src.below(self.block_n) {
            return Err(out_of_range("source chunk", last(t.src), self.block_n));
        }
        if !t.dst.below(self.block_n) {
            return Err(out_of_range("destination chunk", last(t.dst), self.block_n));
        }
        if self.chunks.is_none() && !t.src.same_positions(t.dst) {
            return Err(self.defect(
                Some(m),
                Some(step),
                Some(t.src.start),
                DefectKind::Moved { to: Chunk(t.dst.start) },
            ));
        }
        Ok(())
    }

    fn apply(&mut self, step: u32, t: &Transfer, values: &[(SetId, u32)]) -> Result<(), VerifyError> {
        let layout = self.plan.layout();
        for (j, &(value, chunk)) in values.iter().enumerate() {
            let (sb, db) = (t.src.get(j as u32), t.dst.get(j as u32));
            if t.src != t.dst {
                for channel in 0..self.plan.channels {
                    let sent = layout.elems(t.from, channel, sb, self.half);
                    let expected = layout.elems(t.to, channel, db, self.half);
                    if sent != expected {
                        return Err(self.defect(
                            Some(t.to),
                            Some(step),
                            Some(db),
                            DefectKind::SizeMismatch { from: self.rank(t.from), channel, sent, expected },
                        ));
                    }
                }
            }
            let c = self.cell(t.to, db);
            match t.fold {
                None => {
                    self.cells[c] = value;
                    if let Some(ch) = self.chunks.as_mut() {
                        ch[c] = chunk;
                    }
                }
                Some(_) => {
                    if let Some(ch) = self.chunks.as_ref()
                        && ch[c] != chunk
                    {
                        let found = ch[c];
                        return Err(self.defect(
                            Some(t.to),
                            Some(step),
                            Some(db),
                            DefectKind::WrongChunk { found, chunk },
                        ));
                    }
                    match self.sets.union(self.cells[c], value) {
                        Ok(u) => self.cells[c] = u,
                        Err(twice) => {
                            return Err(self.defect(
                                Some(t.to),
                                Some(step),
                                Some(db),
                                DefectKind::Duplicate { from: self.rank(t.from), contributor: self.rank(twice) },
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Compares every cell the op defines with what it must hold.
    fn check_final(&mut self) -> Result<(), VerifyError> {
        let full = self.sets.full();
        for m in 0..self.n {
            // What a receiving member of a permute must hold.
            let permuted = match self.plan.kind {
                OpKind::Permute { reduce } => match self.plan.peers.of(m).1 {
                    Some((s, _)) if reduce => {
                        Some(self.sets.union(self.sets.single(s), self.sets.single(m)).unwrap_or(EMPTY))
                    }
                    Some((s, _)) => Some(self.sets.single(s)),
                    None => None,
                },
                _ => None,
            };
            for b in 0..self.block_n {
                let want: Option<(SetId, u32)> = match self.plan.kind {
                    OpKind::AllReduce => Some((full, b)),
                    OpKind::ReduceScatter => (b == m).then_some((full, b)),
                    OpKind::AllGather => Some((self.sets.single(b), b)),
                    OpKind::Broadcast => self.plan.root.map(|r| (self.sets.single(r), b)),
                    OpKind::Reduce => (Some(m) == self.plan.root).then_some((full, b)),
                    OpKind::AllToAll => (b >= self.n).then(|| (self.sets.single(b - self.n), m)),
                    OpKind::Permute { .. } => permuted.map(|w| (w, b)),
                };
                let Some((want, want_chunk)) = want else { continue };
                let c = self.cell(m, b);
                let have = self.cells[c];
                if let Some(ch) = &self.chunks
                    && ch[c] != want_chunk
                {
                    return Err(self.defect(
                        Some(m),
                        self.plan.step_n.checked_sub(1),
                        Some(b),
                        DefectKind::WrongChunk { found: ch[c], chunk: want_chunk },
                    ));
                }
                // Set handles are canonical: equal sets have equal handles.
                if have != want {
                    let (missing, extra) = self.sets.difference(have, want);
                    let ranks = |v: Vec<u32>| v.into_iter().map(|x| self.rank(x)).collect::<Vec<_>>();
                    let kind = if missing.is_empty() {
                        DefectKind::Extra { contributors: ranks(extra) }
                    } else {
                        DefectKind::Missing { contributors: ranks(missing) }
                    };
                    // The end state is the state after the collective's last step.
                    return Err(self.defect(Some(m), self.plan.step_n.checked_sub(1), Some(b), kind));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::flat_ops;
    use crate::build::build;
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};

    fn prove_case(case: &Case) -> Result<Vec<CollectivePostcondition>, VerifyError> {
        let schedule = build(&case.valid()).map_err(|e| panic!("{case:?}: {e}")).unwrap();
        prove(&schedule, &AsBuilt)
    }

    fn assert_proven(case: &Case) {
        if let Err(e) = prove_case(case) {
            panic!("{:?} {:?} n={} local={}: {e}", case.op, case.alg, case.rank_n, case.local_rank_n);
        }
    }

    /// Every flat algorithm on every op it serves, over many group sizes,
    /// including sizes that are not powers of two.
    #[test]
    fn every_flat_pairing_is_proven() {
        for &alg in AlgType::ALL {
            if alg == AlgType::Hier {
                continue;
            }
            for &op in flat_ops(alg) {
                for n in 1..=13u32 {
                    let Some(case) = Case::for_alg(op, alg, n) else { continue };
                    assert_proven(&case);
                }
            }
        }
    }

    #[test]
    fn every_hier_composition_is_proven() {
        for (op, choice) in Case::hier_choices() {
            let two_step = choice.iter().any(|&(_, alg)| alg == AlgType::TwoStepPodMesh);
            for (rank_n, local, pods) in [(12, 4, 1), (8, 2, 2), (24, 4, 2), (6, 3, 1), (5, 1, 1)] {
                if two_step && pods < 2 {
                    continue;
                }
                let mut case = Case::hier(op, &choice, rank_n, local);
                case.pod_n = pods;
                assert_proven(&case);
            }
        }
    }

    #[test]
    fn replica_groups_are_proven_independently() {
        let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
        case.groups = Some(vec![vec![0, 2, 4, 6], vec![7, 5, 3, 1]]);
        assert_proven(&case);
        let mut case = Case::hier(
            OpType::AllReduce,
            &[
                (ccc_ir::spec::Leg::IntraReduceScatter, AlgType::Kangaring),
                (ccc_ir::spec::Leg::InterAllReduce, AlgType::InterRdh),
                (ccc_ir::spec::Leg::IntraAllGather, AlgType::Ring),
            ],
            16,
            4,
        );
        case.groups = Some(vec![vec![0, 1, 4, 5, 8, 9, 12, 13], vec![2, 3, 6, 7, 10, 11, 14, 15]]);
        assert_proven(&case);
    }

    /// The orbit run proves what the full run proves, with the same
    /// figures, for every flat pairing and size, invariant or not.
    #[test]
    fn symmetry_changes_no_figure() {
        let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
        for &alg in AlgType::ALL {
            if alg == AlgType::Hier {
                continue;
            }
            for &op in flat_ops(alg) {
                for n in 1..=9u32 {
                    let Some(case) = Case::for_alg(op, alg, n) else { continue };
                    let schedule = build(&case.valid()).unwrap();
                    let fast = prove_with(&schedule, &AsBuilt, &ProverOptions::default());
                    assert_eq!(fast, prove_with(&schedule, &AsBuilt, &full), "{op:?} {alg:?} n={n}");
                }
            }
        }
    }

    /// The same on every Hier composition, with and without pods: their
    /// groups are invariant under the runs their scopes cut, and the ring
    /// and direct compositions are proven on member 0 alone.
    #[test]
    fn hier_compositions_are_proven_the_same_on_one_member() {
        let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
        let mut orbits = Vec::new();
        for (op, choice) in Case::hier_choices() {
            let two_step = choice.iter().any(|&(_, alg)| alg == AlgType::TwoStepPodMesh);
            for (rank_n, local, pods) in [(12, 4, 1), (16, 4, 1), (24, 4, 2)] {
                if two_step && pods < 2 {
                    continue;
                }
                let mut case = Case::hier(op, &choice, rank_n, local);
                case.pod_n = pods;
                let schedule = build(&case.valid()).unwrap();
                let fast = prove_with(&schedule, &AsBuilt, &ProverOptions::default());
                assert_eq!(fast, prove_with(&schedule, &AsBuilt, &full), "{op:?} {choice:?} pods={pods}");
                let plan = &schedule.collectives[0];
                let rot = crate::verify::symmetry::rotation(&schedule, plan, 0, &AsBuilt);
                if rot.is_some_and(|r| orbit(plan, &r, HalfChunk::H0).is_some()) {
                    orbits.push((op, choice.clone(), rank_n / local / pods, pods));
                }
            }
        }
        let ring = |leg| (leg, AlgType::Ring);
        use ccc_ir::spec::Leg::{InterAllReduce, IntraAllGather, IntraReduceScatter};
        let all_rings = vec![ring(IntraReduceScatter), ring(InterAllReduce), ring(IntraAllGather)];
        assert!(orbits.contains(&(OpType::AllReduce, all_rings.clone(), 3, 1)), "{orbits:?}");
        assert!(orbits.contains(&(OpType::AllReduce, all_rings, 3, 2)), "{orbits:?}");
        // Recursive halving across 4 nodes moves by XOR; across 3 it has a
        // prologue, and is proven in full.
        let rdh = vec![ring(IntraReduceScatter), (InterAllReduce, AlgType::InterRdh), ring(IntraAllGather)];
        assert!(orbits.contains(&(OpType::AllReduce, rdh.clone(), 4, 1)), "{orbits:?}");
        assert!(!orbits.contains(&(OpType::AllReduce, rdh, 3, 1)), "{orbits:?}");
    }

    /// Rings of every flavour, and recursive halving and doubling over a
    /// power of two, are proven on member 0 alone, on each half.
    #[test]
    fn rings_and_halvings_are_proven_on_one_member() {
        for alg in [AlgType::Ring, AlgType::Kangaring, AlgType::SingleCycleRing, AlgType::InterRdh] {
            for &op in flat_ops(alg) {
                if !matches!(op, OpType::AllReduce | OpType::AllGather | OpType::ReduceScatter) {
                    continue;
                }
                let Some(case) = Case::for_alg(op, alg, 8) else { continue };
                let schedule = build(&case.valid()).unwrap();
                let plan = &schedule.collectives[0];
                let rot = crate::verify::symmetry::rotation(&schedule, plan, 0, &AsBuilt)
                    .unwrap_or_else(|| panic!("{op:?} {alg:?}: not symmetric"));
                for half in [HalfChunk::H0, HalfChunk::H1] {
                    assert!(orbit(plan, &rot, half).is_some(), "{op:?} {alg:?} {half:?}");
                }
            }
        }
    }

    /// A defect every member shares keeps the group invariant: the orbit
    /// run refuses it, and the full run names it.
    #[test]
    fn a_defect_every_member_shares_is_left_to_the_full_run() {
        struct Twice;
        impl TransferSource for Twice {
            fn transfers(&self, s: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
                AsBuilt.transfers(s, plan, site, out);
                if site.step == 1 {
                    out.extend_from_within(..);
                }
            }
        }
        let schedule = build(&Case::flat(OpType::AllReduce, AlgType::Ring, 6, 2).valid()).unwrap();
        let plan = &schedule.collectives[0];
        let rot = crate::verify::symmetry::rotation(&schedule, plan, 0, &Twice).expect("still invariant");
        assert_eq!(orbit(plan, &rot, HalfChunk::H0), None);
        let Err(VerifyError::Defect(d)) = prove(&schedule, &Twice) else { panic!("proven") };
        assert!(matches!(d.kind, DefectKind::Duplicate { .. }), "{d}");
        assert_eq!((d.rank, d.step), (Some(Rank(0)), Some(Step(1))), "{d}");
    }

    /// A block set whose stride wraps past `u32::MAX` names positions out
    /// of order: the full run refuses it as out of range, and the orbit run
    /// must not accept it as the same set as an ascending one (a reviewer's
    /// counterexample: 2 ranks, member 0 sends blocks "1, 0").
    #[test]
    fn a_wrapping_block_set_is_refused_by_both_runs() {
        struct Wrapping;
        impl TransferSource for Wrapping {
            fn transfers(&self, _: &Schedule, _: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
                if site.step != 0 {
                    return;
                }
                let ascending = crate::schedule::BlockSet { start: 0, stride: 1, count: 2 };
                let wrapping = crate::schedule::BlockSet { start: 1, stride: u32::MAX, count: 2 };
                let t = |from, to, blocks| Transfer {
                    from,
                    to,
                    src: blocks,
                    dst: blocks,
                    halves: Halves::Both,
                    fold: Some(ccc_ir::enums::ReductionType::Ring2R1W),
                    neigh: ccc_ir::enums::Neigh::Next,
                };
                let (me, peer) = (site.index, 1 - site.index);
                out.push(t(me, peer, if me == 0 { wrapping } else { ascending }));
                out.push(t(peer, me, ascending));
            }
        }
        let schedule = build(&Case::flat(OpType::AllReduce, AlgType::Ring, 2, 1).valid()).unwrap();
        let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
        let fast = prove_with(&schedule, &Wrapping, &ProverOptions::default());
        assert!(
            matches!(&fast, Err(VerifyError::Defect(d)) if matches!(d.kind, DefectKind::OutOfRange { .. })),
            "{fast:?}"
        );
        assert_eq!(fast, prove_with(&schedule, &Wrapping, &full));
    }

    #[test]
    fn a_large_ring_is_proven() {
        let case = Case::flat(OpType::AllReduce, AlgType::Ring, 256, 16);
        let proof = prove_case(&case).unwrap();
        assert_eq!(proof[0].transfers, 2 * 255 * 256);
    }
}
