//! The path run: a group's postcondition proven by tracing where each
//! contribution goes, one counter per (member, block) instead of a
//! contributor set, for any group (ring pipelines, binomial trees, direct
//! sends, recursive halving with a prologue; no symmetry needed). It
//! serves every op whose blocks are each reduced to one cell by folds and
//! then copied on: broadcast, reduce, all-reduce, reduce-scatter,
//! all-gather.
//!
//! The steps, the listing and the checks are the full run's (checks 1–3
//! of `verify`: every transfer involves its lister, stays in range and
//! keeps its block; every receive is matched to one identical send of its
//! sender at the same step and every send is matched, decided for a
//! window of steps at once, see `window`; sizes agree on every channel).
//! What differs is the state, and the argument.
//!
//! Block `b`'s *contributors* are the members whose initial cell `b` is
//! not empty (every member for a reduction, the root for a broadcast,
//! member `b` for an all-gather); its final value is the set of them all.
//! A cell is in one of four states:
//!
//! - *empty*;
//! - *live* with a count `c` (it holds `c` contributors): every cell but
//!   the empty ones starts live with count 1;
//! - *complete*: live with every contributor, or copied from a complete
//!   cell;
//! - *spent*: it sent its value on by a fold, and is never read again.
//!
//! The moves allowed (anything else ends the run): a fold from a live,
//! not complete cell into an empty or live cell (the sender is then
//! spent, the receiver's count the sum); a copy from a complete cell into
//! any cell but a live, incomplete one (the receiver is then complete).
//! Sends read the cells as they stood before the step, so a cell that
//! sends and receives a fold at one step is refused (its receive would
//! land in a spent cell).
//!
//! **Why it is sound.** Invariant: the live cells' sets partition the
//! contributors. It holds at the start; a fold moves one live set into
//! another cell and retires the first (so the receiver's set is the
//! disjoint union, and its count is its size exactly: the full run's
//! union meets no duplicate); nothing else creates a live cell. So a live
//! cell whose count reaches every contributor holds exactly the final
//! value, and from then on no other cell is live and incomplete: a copy
//! from a complete cell, which the full run applies as an overwrite, only
//! spreads the final value and loses nothing. After the last step, the
//! run ends proven when every cell the op defines (as the full run's final
//! check reads them) is complete, that is holds exactly what the full run
//! demands; every other check of the full run was made on the way.
//!
//! Anything else ends the run with `None`: the full run then runs and
//! names the defect, with the message it always gave. The run is taken
//! only when it succeeds, so its figures are the full run's (the tests
//! compare both on every pairing it serves).
//!
//! Cost: the full run's listing, done a window of steps ahead (`window`:
//! one flat buffer per chunk of members, one fork-join per window), four
//! bytes per cell (a 4,096-member group of 4,096 blocks is 64 MiB instead
//! of 128 MiB of set handles and the interned sets) and a few integer
//! operations per block moved, no set unions (recursive halving's sets are
//! bitsets in the full run). Where the phases are ring pipelines the cells
//! lie in page-sized tiles of 16 members x 64 blocks, so that a step
//! touches few pages; where every phase is a pipelined chain, in one
//! row per diagonal (block + member), so that a step reads one row and
//! writes the next ([`Tiles`]); where every phase moves ranges of blocks
//! (recursive halving and doubling, trees, direct sends), each member's
//! row is held as runs of equal counters (`runs`), so that a range costs
//! the runs it meets: recursive halving over 3,072 members moves 9.4 M
//! blocks, in some 47,000 transfers of a few runs each. Every store holds
//! each cell's state exactly ([`Counters`]), so the argument above is
//! about cells whatever the store. Where every member's transfers over
//! a phase come as runs of steps (the schedule as built, on the chains),
//! the listing checks are made once per pair of overlapping runs and
//! each step's receives are read from the runs (`step_runs`), so no site
//! is listed one by one and idle members cost nothing per step. Where,
//! besides, every phase's runs meet each cell at most once by a landing
//! and once by a read, the landing first, and senders can come before
//! receivers, the cells are moved a run at a time, member after member
//! (`member_major`), on rows held as runs: a 4,096-member ring
//! broadcast's 16.8 M transfers are 8,190 landings of ranges of blocks,
//! and no counter per cell is held. Elsewhere the cells are moved step by
//! step.
//!
//! **Listing beside landing.** Where the listing is parallel (`window`'s
//! `Listing`: groups large enough that a window's fork-join pays), each
//! window of steps is listed and matched while the window listed before
//! it lands, one fork-join for both ([`rayon::join`]), in two buffers
//! that swap; recursive halving over 3,072 members is 24 phases of one
//! step each, so without this one core lands each step alone while the
//! other idles. It finds what landing each window as soon as it is
//! matched finds, because: (1) a window's listing and matching read the
//! source and the plan alone, never the cells (`window`), so listing it
//! earlier lists the same transfers and decides the same; (2) the cells
//! are moved by one thread, window after window and step after step in
//! order, exactly as before: the window listed beside is never read
//! until it has been matched and the one before it has landed, and a
//! phase taken from its runs first lands the window listed before it;
//! (3) the answer is `None` as soon as either half of a fork-join
//! refuses and the transfers matched otherwise: the run is taken only
//! whole, and a refusal leaves the defect to the full run, which names
//! it with its own message, so which refusal comes first, or whether a
//! window was listed after a refusal, changes nothing reported. Below the
//! parallel listing nothing overlaps (a fork-join costs more than a
//! small step): each window lands as soon as it is matched. A test
//! holds both equal on every pairing the run serves, with seeded defects
//! and with phases from runs between listed ones, under one thread and
//! two.

use super::counters::{Counters, EMPTY, Extent, copy, fold, spend};
use super::full::{same, size_mismatch};
use super::runs::Runs;
use super::window::{Listing, Shape, Span, Window};
use crate::algorithms::StepRun;
use crate::schedule::Layout as Sizes;
use crate::schedule::{BlockSet, CollectivePlan, OpKind, Phase, PhaseInstance, PhaseKind, Schedule, Transfer};
use crate::verify::options::ProverOptions;
use crate::verify::transfers::{Site, TransferSource};
use ccc_ir::enums::HalfChunk;
use std::ops::Range;

/// Whether `plan`'s groups can take the path run: a broadcast or a reduce
/// with a root in the group, an all-reduce, a reduce-scatter or an
/// all-gather.
pub(super) fn applies(plan: &CollectivePlan) -> bool {
    match plan.kind {
        OpKind::Broadcast | OpKind::Reduce => plan.root.is_some_and(|r| r < plan.groups.size()),
        OpKind::AllReduce | OpKind::ReduceScatter | OpKind::AllGather => true,
        OpKind::AllToAll | OpKind::Permute { .. } => false,
    }
}

/// Whether every phase of `plan` is a ring chain (a rooted op's Ring).
fn chains(plan: &CollectivePlan) -> bool {
    plan.phases.iter().all(|p| matches!(p.kind, PhaseKind::RingBroadcast { .. } | PhaseKind::RingReduce { .. }))
}

/// Whether the path run of `plan` is taken member-major on rows held as
/// runs of equal counters (`member_major`): every phase a ring chain.
/// Its rows hold a few runs each, where a full run holds a cell per
/// (member, block): a 32,768-member chain of as many blocks verifies in
/// 71 MB. So a group too large to run in full may
/// still be proven by it; when it cannot be taken after all, a cell array
/// larger than the full run's limit is not made ([`Cells`]), and the
/// group is refused as too large then. (Rows of ranges, as recursive
/// halving's, hold runs too, but their number grows with the steps:
/// a 451,522-member recursive halving is still refused up front.)
pub(super) fn member_major(plan: &CollectivePlan) -> bool {
    applies(plan) && chains(plan)
}

/// How the counters are laid out in memory. The layout decides only
/// where a counter is stored, never what the run finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tiles {
    /// Tiles of `2^members` members x `2^blocks` blocks, block-major in a
    /// tile.
    Tiled { members: u32, blocks: u32 },
    /// One row of blocks per member, so that a range of blocks is
    /// consecutive memory. The run holds such rows as runs of equal
    /// counters ([`Runs`]); one counter per cell in a row is the tests'
    /// reference.
    Rows,
    /// One row per diagonal `(b + m) mod blocks`, members in order along
    /// it (for at most as many members as blocks): a pipelined chain's
    /// step, which moves block `t - j + 1` into each member `j` from
    /// `j - 1`, then reads one row and writes the next, in member order.
    Skewed,
}

/// For ring pipelines: 16 members (16 counters of 4 bytes, one cache
/// line) x 64 blocks (64 lines, one 4 KiB page). A transfer keeps its
/// blocks' positions, so a ring neighbour's cell of the same block shares
/// the cache line; and a pipeline's step, which moves block `t - j` from
/// each member `j`, touches a page per 16 members instead of one per
/// member.
const PIPELINE_TILES: Tiles = Tiles::Tiled { members: 4, blocks: 6 };

impl Tiles {
    /// The layout for `plan`: rows (as runs) when every phase moves
    /// ranges of blocks (recursive halving and doubling, trees, direct
    /// sends: no ring pattern), diagonals when every phase is a pipelined
    /// chain (and there are no more members than blocks), pipeline tiles
    /// otherwise.
    fn of(plan: &CollectivePlan) -> Tiles {
        use PhaseKind as K;
        if chains(plan) && plan.groups.size() <= plan.layout().block_n() {
            return Tiles::Skewed;
        }
        let ranges = plan.phases.iter().all(|p| {
            p.kind.is_rdh()
                || matches!(
                    p.kind,
                    K::DirectReduceScatter
                        | K::DirectAllGather
                        | K::DirectAllReduce
                        | K::DirectBroadcast { .. }
                        | K::DirectReduce { .. }
                )
        });
        if ranges { Tiles::Rows } else { PIPELINE_TILES }
    }
}

/// One group, one half: a counter per cell, laid out in [`Tiles`].
pub(super) struct Cells {
    n: u32,
    block_n: u32,
    tiles: Tiles,
    /// Tiles across the members (tiled).
    across: usize,
    /// Contributors of every block: what a complete cell counts.
    total: u32,
    state: Vec<u32>,
}

impl Cells {
    /// The cells of `plan`'s layout. The run takes cells only in pipeline
    /// tiles or diagonals: its rows are held as runs ([`Runs`]), and one
    /// counter per cell in a row is the tests' reference.
    fn new(plan: &CollectivePlan) -> Option<Cells> {
        Cells::laid_out(plan, Tiles::of(plan))
    }

    /// A row per member, whatever the plan: the tests' reference.
    #[cfg(test)]
    pub(super) fn rows(plan: &CollectivePlan) -> Option<Cells> {
        Cells::laid_out(plan, Tiles::Rows)
    }

    /// Member `m`'s state of block `b`.
    #[cfg(test)]
    pub(super) fn state(&self, m: u32, b: u32) -> u32 {
        self.state[self.at(m, b)]
    }

    fn laid_out(plan: &CollectivePlan, tiles: Tiles) -> Option<Cells> {
        let Extent { n, block_n, total } = Extent::of(plan);
        // Diagonals need every `b + m` below `2 * block_n`.
        let tiles = if tiles == Tiles::Skewed && n > block_n { PIPELINE_TILES } else { tiles };
        let root = plan.root;
        let size = match tiles {
            Tiles::Tiled { members, blocks } => {
                let rows = block_n.div_ceil(1 << blocks) as usize;
                (n.div_ceil(1 << members) as usize * rows) << (members + blocks)
            }
            Tiles::Rows | Tiles::Skewed => n as usize * block_n as usize,
        };
        // No more counters than the full run's limit on cells: a larger
        // group is proven only by a run that holds runs, or refused.
        if size as u64 > super::MAX_PROOF_CELLS {
            return None;
        }
        let across = match tiles {
            Tiles::Tiled { members, .. } => n.div_ceil(1 << members) as usize,
            Tiles::Rows | Tiles::Skewed => 0,
        };
        let mut cells = Cells { n, block_n, tiles, across, total, state: vec![EMPTY; size] };
        for (m, b) in Cells::order(n, block_n, tiles) {
            let holds = match plan.kind {
                OpKind::Broadcast => Some(m) == root,
                OpKind::AllGather => b == m,
                _ => true,
            };
            let c = cells.at(m, b);
            cells.state[c] = u32::from(holds);
        }
        applies(plan).then_some(cells)
    }

    /// Every cell `(m, b)` of `n` members' `block_n` blocks laid out in
    /// `tiles` once, about in the order they lie in memory.
    fn order(n: u32, block_n: u32, tiles: Tiles) -> impl Iterator<Item = (u32, u32)> {
        let skewed = tiles == Tiles::Skewed;
        let diagonals = (0..if skewed { block_n } else { 0 }).flat_map(move |r| {
            // b = r - m (mod block_n), m < n <= block_n.
            (0..n).map(move |m| (m, if r >= m { r - m } else { r + block_n - m }))
        });
        let members = (0..if skewed { 0 } else { n }).flat_map(move |m| (0..block_n).map(move |b| (m, b)));
        diagonals.chain(members)
    }

    #[inline(always)]
    fn at(&self, m: u32, b: u32) -> usize {
        match self.tiles {
            Tiles::Tiled { members, blocks } => {
                let tile = (b >> blocks) as usize * self.across + (m >> members) as usize;
                let within = ((b & ((1 << blocks) - 1)) << members) | (m & ((1 << members) - 1));
                (tile << (members + blocks)) | within as usize
            }
            Tiles::Rows => m as usize * self.block_n as usize + b as usize,
            Tiles::Skewed => {
                // b < block_n and m < n <= block_n: one subtraction wraps it.
                let d = b + m;
                let row = if d >= self.block_n { d - self.block_n } else { d };
                row as usize * self.n as usize + m as usize
            }
        }
    }

    /// Where member `m`'s cells of `set` lie when they are consecutive
    /// memory: one block, or a stride-1 range in a row layout (the set is
    /// in range: the shape checks come first).
    #[inline(always)]
    fn slice(&self, m: u32, set: BlockSet) -> Option<Range<usize>> {
        let consecutive = set.count == 1 || (self.tiles == Tiles::Rows && set.stride == 1);
        consecutive.then(|| {
            let first = self.at(m, set.start);
            first..first + set.count as usize
        })
    }
}

impl Counters for Cells {
    type Read = u32;

    fn extent(&self) -> Extent {
        Extent { n: self.n, block_n: self.block_n, total: self.total }
    }

    fn read(&self, m: u32, set: BlockSet, out: &mut Vec<u32>) {
        match self.slice(m, set) {
            Some(r) => out.extend_from_slice(&self.state[r]),
            None => out.extend(set.iter().map(|b| self.state[self.at(m, b)])),
        }
    }

    /// A set whose blocks lie in consecutive memory ([`Cells::slice`]) is
    /// moved as a slice, block by block all the same.
    #[inline(always)]
    fn land(&mut self, m: u32, set: BlockSet, read: &[u32], new: impl Fn(u32, u32) -> (u32, bool)) -> bool {
        let value = |j: usize| read.get(j).copied().unwrap_or(0);
        let mut ok = true;
        match self.slice(m, set) {
            Some(r) if read.is_empty() => {
                for s in &mut self.state[r] {
                    let (to, allowed) = new(*s, 0);
                    (*s, ok) = (to, ok & allowed);
                }
            }
            Some(r) => {
                for (s, &v) in self.state[r].iter_mut().zip(read) {
                    let (to, allowed) = new(*s, v);
                    (*s, ok) = (to, ok & allowed);
                }
            }
            None => {
                for (j, b) in set.iter().enumerate() {
                    let c = self.at(m, b);
                    let (to, allowed) = new(self.state[c], value(j));
                    (self.state[c], ok) = (to, ok & allowed);
                }
            }
        }
        ok
    }

    fn done(&self, plan: &CollectivePlan) -> bool {
        Cells::order(self.n, self.block_n, self.tiles).all(|(m, b)| {
            let defined = match plan.kind {
                OpKind::ReduceScatter => b == m,
                OpKind::Reduce => Some(m) == plan.root,
                _ => true,
            };
            !defined || self.state[self.at(m, b)] == self.total
        })
    }
}

/// Runs one group for one half, on `source`'s transfers: the transfers
/// matched, or `None` when the argument does not go through (see the
/// module overview; the full run names the defect).
pub(super) fn run(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    half: HalfChunk,
    source: &dyn TransferSource,
    options: &ProverOptions,
) -> Option<u64> {
    let listing = Listing::for_group(plan.groups.size(), options.parallel_from);
    run_listed(schedule, plan, group, half, source, listing)
}

/// [`run`], its transfers listed as `listing` says (see `window`: what is
/// listed, matched and applied does not depend on it).
pub(super) fn run_listed(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    half: HalfChunk,
    source: &dyn TransferSource,
    listing: Listing,
) -> Option<u64> {
    let Extent { n, block_n, .. } = Extent::of(plan);
    let shape_ok = |tr: &Transfer, m| shape_ok(tr, m, n, block_n);
    let runs_of = |phase: &Phase, index, out: &mut Vec<StepRun>| {
        let site = Site { group, index, phase, inst: plan.instance(phase, index), step: phase.first_step, t: 0 };
        source.runs(schedule, plan, &site, out)
    };
    // Every phase's runs applied a member at a time, where that applies
    // them as step by step (`member_major`).
    if applies(plan)
        && let Some(found) = super::member_major::run(plan, half, &runs_of, &shape_ok)
    {
        return found;
    }
    match Tiles::of(plan) {
        // Ranges of blocks: each row as runs (`runs`), the same states.
        Tiles::Rows => applies(plan).then(|| run_in(schedule, plan, group, half, source, listing, Runs::new(plan)))?,
        Tiles::Tiled { .. } | Tiles::Skewed => run_in(schedule, plan, group, half, source, listing, Cells::new(plan)?),
    }
}

/// Where the tests lay the path run's counters out, whatever the plan.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// One per cell, in pipeline tiles.
    Tiled,
    /// One per cell, a row per member.
    Rows,
    /// A row per member, as runs.
    Runs,
    /// One per cell, a row per diagonal.
    Skewed,
}

/// [`run_listed`] with its counters laid out as `layout` says, whatever
/// the plan: the tests' check that the layout changes nothing.
#[cfg(test)]
pub(super) fn run_laid_out(
    schedule: &Schedule,
    plan: &CollectivePlan,
    half: HalfChunk,
    source: &dyn TransferSource,
    layout: Layout,
) -> Option<u64> {
    let listing = Listing::for_group(plan.groups.size(), u32::MAX);
    let cells = |tiles| Cells::laid_out(plan, tiles);
    match layout {
        Layout::Tiled => run_in(schedule, plan, 0, half, source, listing, cells(PIPELINE_TILES)?),
        Layout::Rows => run_in(schedule, plan, 0, half, source, listing, cells(Tiles::Rows)?),
        Layout::Runs => run_in(schedule, plan, 0, half, source, listing, Runs::new(plan)),
        Layout::Skewed => run_in(schedule, plan, 0, half, source, listing, cells(Tiles::Skewed)?),
    }
}

/// [`run_listed`] on `cells`: each phase's steps from its runs where
/// they decide its checks (`step_runs`), else listed a window at a time
/// (`window`), each window listed and matched while the one before it
/// lands where the listing is parallel (see [`Landing`] and the module
/// overview). Then the whole run is one job of the thread pool, so that
/// each window's fork-join starts from a worker: one hand-over to the
/// pool per run instead of one per window.
fn run_in<C: Counters + Send>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    half: HalfChunk,
    source: &dyn TransferSource,
    listing: Listing,
    cells: C,
) -> Option<u64> {
    if listing.parallel && rayon::current_thread_index().is_none() {
        return rayon::scope(|_| run_in(schedule, plan, group, half, source, listing, cells));
    }
    let Extent { n, block_n, .. } = cells.extent();
    let layout = plan.layout();
    let mut landing = Landing::new(plan, &layout, half, cells);
    // The window being listed, and the one listed before it, which
    // lands meanwhile (`ready` steps of it, when there is one).
    let (mut listed, mut last) = (Window::new(n, listing), Window::new(n, listing));
    let mut ready: Option<u32> = None;
    let mut insts: Vec<PhaseInstance> = Vec::with_capacity(n as usize);
    let mut runs: Vec<Vec<StepRun>> = Vec::with_capacity(n as usize);
    for (p, phase) in plan.phases.iter().enumerate() {
        if p == 0 || !phase.placed_as(&plan.phases[p - 1]) {
            insts.clear();
            insts.extend((0..n).map(|m| plan.instance(phase, m)));
        }
        // Every member's runs, or none: the first member without runs
        // leaves the phase to the listing, so no other is asked.
        runs.clear();
        for (index, &inst) in (0..n).zip(&insts) {
            let mut listed = Vec::new();
            let site = Site { group, index, phase, inst, step: phase.first_step, t: 0 };
            if !source.runs(schedule, plan, &site, &mut listed) {
                runs.clear();
                break;
            }
            runs.push(listed);
        }
        let shape_ok = |tr: &Transfer, m| shape_ok(tr, m, n, block_n);
        let all: Vec<&[StepRun]> = runs.iter().map(Vec::as_slice).collect();
        if all.len() == n as usize && super::step_runs::checked(&all, phase.step_n, block_n, &shape_ok) {
            // The window listed before lands first: steps land in order.
            if let Some(steps) = ready.take() {
                landing.window(&last, steps)?;
            }
            let mut receives = super::step_runs::Receives::new(&all);
            for t in 0..phase.step_n {
                landing.moved.clear();
                receives.at(t, &mut landing.moved);
                landing.step()?;
            }
            continue;
        }
        // The runs decided nothing: the phase is listed step by step from
        // the source, as without runs, a window at a time. Listed in
        // parallel, a window is listed and matched while the one listed
        // before it lands, and lands while the next is listed; else it
        // lands as soon as it is matched.
        let mut first = 0;
        while first < phase.step_n {
            let steps = listing.steps.max(1).min(phase.step_n - first);
            let shape = Shape { n, block_n };
            let span = Span { schedule, plan, source, shape, group, phase, insts: &insts, first, steps };
            let mut list = || listed.fill(&span) && listed.matches(steps, same);
            let (landed, matched) = match ready.take() {
                Some(ready) => rayon::join(|| landing.window(&last, ready), list),
                None => (Some(()), list()),
            };
            landed?;
            if !matched {
                return None;
            }
            std::mem::swap(&mut listed, &mut last);
            if listing.parallel {
                ready = Some(steps);
            } else {
                landing.window(&last, steps)?;
            }
            first += steps;
        }
    }
    if let Some(steps) = ready {
        landing.window(&last, steps)?;
    }
    landing.cells.done(plan).then_some(landing.transfers)
}

/// The run's cells and what moves them, step after step: each step's
/// receives (every member's, in member order) read their senders' cells
/// as they stood before the step, then land ([`apply`]). Steps land one
/// at a time, in order, on the calling thread; only the listing of the
/// next window runs beside them.
struct Landing<'a, C: Counters> {
    plan: &'a CollectivePlan,
    layout: &'a Sizes<'a>,
    half: HalfChunk,
    cells: C,
    /// Every member's receives at one step, in member order; then, in
    /// [`Landing::step`], those of them that move the half.
    moved: Vec<Transfer>,
    read: Reads<C::Read>,
    /// Receives landed so far.
    transfers: u64,
}

impl<'a, C: Counters> Landing<'a, C> {
    fn new(plan: &'a CollectivePlan, layout: &'a Sizes<'a>, half: HalfChunk, cells: C) -> Self {
        let (moved, read) = (Vec::new(), Reads::default());
        Landing { plan, layout, half, cells, moved, read, transfers: 0 }
    }

    /// Lands the first `steps` steps of `window`, listed and matched.
    fn window(&mut self, window: &Window, steps: u32) -> Option<()> {
        for w in 0..steps {
            self.moved.clear();
            window.receives(w, &mut self.moved);
            self.step()?;
        }
        Some(())
    }

    /// Lands the step whose receives are [`Landing::moved`]: every
    /// receive is matched (checked before); those that move the half land,
    /// in member order, with the values they read (the others are
    /// dropped from the list first, in place: where every receive moves
    /// the half, as under one run for both, nothing is copied).
    fn step(&mut self) -> Option<()> {
        let (plan, layout, half) = (self.plan, self.layout, self.half);
        self.moved.retain(|tr| super::moves(tr, half));
        self.read.step(&self.cells, &self.moved);
        apply(&mut self.cells, &self.moved, &self.read, |tr, sb, db| {
            size_mismatch(layout, plan.channels, half, tr, sb, db).is_none()
        })?;
        self.transfers += self.moved.len() as u64;
        Some(())
    }
}

/// What one step's receives read: each its sender's cells as they stood
/// before the step.
struct Reads<R> {
    values: Vec<R>,
    /// Receive `i`'s values are `values[at[i]..at[i + 1]]`.
    at: Vec<usize>,
}

impl<R> Default for Reads<R> {
    fn default() -> Self {
        Reads { values: Vec::new(), at: Vec::new() }
    }
}

impl<R: Copy> Reads<R> {
    /// Reads what each of `moved` reads, from `cells` before the step.
    fn step(&mut self, cells: &impl Counters<Read = R>, moved: &[Transfer]) {
        self.values.clear();
        self.at.clear();
        self.at.push(0);
        for tr in moved {
            cells.read(tr.from, tr.src, &mut self.values);
            self.at.push(self.values.len());
        }
    }

    /// What receive `i` read.
    fn of(&self, i: usize) -> &[R] {
        &self.values[self.at[i]..self.at[i + 1]]
    }
}

/// One step of `moved` (receives, in member order) on `cells`, every
/// block of the same size on both sides: the tests' step.
#[cfg(test)]
pub(super) fn step<C: Counters>(cells: &mut C, moved: &[Transfer]) -> Option<()> {
    let mut read = Reads::default();
    read.step(cells, moved);
    apply(cells, moved, &read, |_, _, _| true)
}

/// Applies one step's receives (`read`: what each read before the
/// step): first every fold's sender is spent, once, then every receive
/// lands (see the module overview for the moves allowed).
fn apply<C: Counters>(
    cells: &mut C,
    moved: &[Transfer],
    read: &Reads<C::Read>,
    sizes_agree: impl Fn(&Transfer, u32, u32) -> bool,
) -> Option<()> {
    let total = cells.extent().total;
    for tr in moved.iter().filter(|tr| tr.fold.is_some()) {
        cells.land(tr.from, tr.src, &[], spend(total)).then_some(())?;
    }
    for (i, tr) in moved.iter().enumerate() {
        // The same positions on both sides have the same sizes.
        if tr.src != tr.dst && !tr.src.iter().zip(tr.dst.iter()).all(|(sb, db)| sizes_agree(tr, sb, db)) {
            return None;
        }
        let read = read.of(i);
        let landed = match tr.fold {
            Some(_) => cells.land(tr.to, tr.dst, read, fold(total)),
            None => cells.land(tr.to, tr.dst, read, copy(total)),
        };
        landed.then_some(())?;
    }
    Some(())
}

/// The full run's shape checks: the transfer involves member `m`, names
/// members and blocks in range, as many of each side, and keeps every
/// block at its position.
pub(super) fn shape_ok(t: &Transfer, m: u32, n: u32, block_n: u32) -> bool {
    Shape { n, block_n }.ok(t, m)
}
