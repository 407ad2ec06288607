//! The full run: one group's postcondition proven by executing every
//! member's buffer symbolically, step by step (see the module overview).

use crate::schedule::{CollectivePlan, OpKind, Phase, PhaseInstance, Schedule, Transfer};
use crate::verify::defect::{Defect, DefectKind};
use crate::verify::options::ProverOptions;
use crate::verify::sets::{EMPTY, SetId, Sets};
use crate::verify::transfers::{Site, TransferSource};
use ccc_ir::enums::HalfChunk;
use ccc_ir::id::{Chunk, CollectiveIdx, Rank, Step};
use rayon::prelude::*;

/// The bytes of one member's place in a full run, inline (its lists on
/// the heap are counted apart).
pub(super) const MEMBER_BYTES: usize = std::mem::size_of::<Member>();

/// Runs one group of `plan` in full for one half, on `source`'s
/// transfers: the transfers matched, or the first defect.
pub(super) fn run(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    half: HalfChunk,
    source: &dyn TransferSource,
    options: &ProverOptions,
) -> Result<u64, Box<Defect>> {
    let mut run = Run::new(schedule, plan, group, half);
    if run.ranks.len() != run.n as usize {
        let kind = DefectKind::OutOfRange { what: "replica group", value: group, limit: plan.groups.group_n() };
        return Err(run.defect(None, None, None, kind));
    }
    run.parallel = run.n >= options.parallel_from;
    run.execute(source)?;
    run.check_final()?;
    Ok(run.transfers)
}

/// One group, one half: the symbolic buffers and the step loop.
struct Run<'a> {
    schedule: &'a Schedule,
    plan: &'a CollectivePlan,
    group: u32,
    half: HalfChunk,
    n: u32,
    /// The global rank of each member, `0..n` (shorter when the groups
    /// have no such group: [`run`] refuses that before anything else).
    ranks: Vec<Rank>,
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
    error: Option<Box<Defect>>,
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
            ranks: (0..n).map_while(|m| plan.rank(group, m)).collect(),
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

    /// The rank of member `m`: every member the run names is below `n`
    /// (transfers are range-checked in `check_shape` before use).
    fn rank(&self, m: u32) -> Rank {
        self.ranks[m as usize]
    }

    fn defect(&self, rank: Option<u32>, step: Option<u32>, chunk: Option<u32>, kind: DefectKind) -> Box<Defect> {
        Box::new(Defect {
            collective: CollectiveIdx(self.plan.index),
            group: self.group,
            rank: rank.map(|m| self.rank(m)),
            topsp: None,
            record: None,
            step: step.map(Step),
            chunk: chunk.map(Chunk),
            kind,
        })
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

    fn execute(&mut self, source: &dyn TransferSource) -> Result<(), Box<Defect>> {
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
                    for j in 0..if super::moves(tr, self.half) { tr.src.count } else { 0 } {
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
    fn exchange(&mut self, step: u32, members: &mut [Member]) -> Result<(), Box<Defect>> {
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
                if !super::moves(&tr, self.half) {
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
    fn check_shape(&self, m: u32, step: u32, t: &Transfer) -> Result<(), Box<Defect>> {
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

    fn apply(&mut self, step: u32, t: &Transfer, values: &[(SetId, u32)]) -> Result<(), Box<Defect>> {
        let layout = self.plan.layout();
        for (j, &(value, chunk)) in values.iter().enumerate() {
            let (sb, db) = (t.src.get(j as u32), t.dst.get(j as u32));
            if let Some((channel, sent, expected)) = size_mismatch(&layout, self.plan.channels, self.half, t, sb, db) {
                return Err(self.defect(
                    Some(t.to),
                    Some(step),
                    Some(db),
                    DefectKind::SizeMismatch { from: self.rank(t.from), channel, sent, expected },
                ));
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
    fn check_final(&mut self) -> Result<(), Box<Defect>> {
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

/// The first channel on which `t`'s block `sb` as sent and block `db` as
/// received differ in size, with both sizes: `(channel, sent, expected)`
/// (none when the two blocks are the same set of positions).
pub(super) fn size_mismatch(
    layout: &crate::schedule::Layout<'_>,
    channels: u8,
    half: HalfChunk,
    t: &Transfer,
    sb: u32,
    db: u32,
) -> Option<(u8, u64, u64)> {
    if t.src == t.dst {
        return None;
    }
    (0..channels).find_map(|channel| {
        let sent = layout.elems(t.from, channel, sb, half);
        let expected = layout.elems(t.to, channel, db, half);
        (sent != expected).then_some((channel, sent, expected))
    })
}

/// A send and a receive describe the same transfer: the same members,
/// halves and fold, the same block positions (a one-block set's stride
/// names nothing), whatever `neigh` says: a label for display that nothing
/// emitted or proven reads (so that a group whose members differ only in
/// it is still symmetric; see `symmetry`).
pub(super) fn same(a: &Transfer, b: &Transfer) -> bool {
    (a.from, a.to, a.halves, a.fold) == (b.from, b.to, b.halves, b.fold)
        && a.src.same_positions(b.src)
        && a.dst.same_positions(b.dst)
}
