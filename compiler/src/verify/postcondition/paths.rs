//! The path run: a group's postcondition proven by tracing where each
//! contribution goes, one counter per (member, block) instead of a
//! contributor set, for any group (ring pipelines, binomial trees, direct
//! sends, recursive halving with a prologue; no symmetry needed). It
//! serves every op whose blocks are each reduced to one cell by folds and
//! then copied on: broadcast, reduce, all-reduce, reduce-scatter,
//! all-gather.
//!
//! The steps, the listing and the matching are the full run's (checks 1–3
//! of `verify`: every transfer involves its lister, stays in range and
//! keeps its block; every receive is matched to one identical send of its
//! sender at the same step and every send is matched; sizes agree on every
//! channel). What differs is the state, and the argument.
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
//! bytes per cell, in page-sized tiles of 16 members x 64 blocks so that
//! a pipeline's step touches few pages (a 4,096-member group of 4,096
//! blocks is 64 MiB instead of 128 MiB of set handles and the interned
//! sets) and a few integer operations per block moved, no set unions
//! (recursive halving's sets are bitsets in the full run).

use super::full::{same, size_mismatch};
use super::window::{Listing, Span, Window};
use crate::schedule::{CollectivePlan, OpKind, PhaseInstance, Schedule, Transfer};
use crate::verify::options::ProverOptions;
use crate::verify::transfers::TransferSource;
use ccc_ir::enums::HalfChunk;

/// An empty cell's state.
const EMPTY: u32 = 0;
/// A spent cell's state (above every count).
const SPENT: u32 = u32::MAX;

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

/// Members in a tile of cells: 16 counters of 4 bytes, one cache line.
const TILE_MEMBERS_SHIFT: u32 = 4;
/// Blocks in a tile of cells: 64 lines, one 4 KiB page.
const TILE_BLOCKS_SHIFT: u32 = 6;
const TILE_MEMBERS_MASK: u32 = (1 << TILE_MEMBERS_SHIFT) - 1;
const TILE_BLOCKS_MASK: u32 = (1 << TILE_BLOCKS_SHIFT) - 1;
const TILE_SHIFT: u32 = TILE_MEMBERS_SHIFT + TILE_BLOCKS_SHIFT;

/// One group, one half: a counter per cell, in tiles of 16 members x 64
/// blocks, block-major in a tile. A transfer keeps its blocks' positions,
/// so a ring neighbour's cell of the same block shares the cache line;
/// and a pipeline's step, which moves block `t - j` from each member `j`,
/// touches a page per 16 members instead of one per member.
struct Cells {
    n: u32,
    block_n: u32,
    /// Tiles across the members.
    tiles: usize,
    /// Contributors of every block: what a complete cell counts.
    total: u32,
    state: Vec<u32>,
}

impl Cells {
    fn new(plan: &CollectivePlan) -> Option<Cells> {
        let (n, block_n) = (plan.groups.size(), plan.layout().block_n());
        let root = plan.root;
        let reduces = matches!(plan.kind, OpKind::Reduce | OpKind::AllReduce | OpKind::ReduceScatter);
        let total = if reduces { n } else { 1 };
        let tiles = n.div_ceil(1 << TILE_MEMBERS_SHIFT) as usize;
        let rows = block_n.div_ceil(1 << TILE_BLOCKS_SHIFT) as usize;
        let mut cells = Cells { n, block_n, tiles, total, state: vec![EMPTY; (tiles * rows) << TILE_SHIFT] };
        for b in 0..block_n {
            for m in 0..n {
                let holds = match plan.kind {
                    OpKind::Broadcast => Some(m) == root,
                    OpKind::AllGather => b == m,
                    _ => true,
                };
                let c = cells.at(m, b);
                cells.state[c] = u32::from(holds);
            }
        }
        applies(plan).then_some(cells)
    }

    fn at(&self, m: u32, b: u32) -> usize {
        let tile = (b >> TILE_BLOCKS_SHIFT) as usize * self.tiles + (m >> TILE_MEMBERS_SHIFT) as usize;
        let within = ((b & TILE_BLOCKS_MASK) << TILE_MEMBERS_SHIFT) | (m & TILE_MEMBERS_MASK);
        (tile << TILE_SHIFT) | within as usize
    }

    fn complete(&self, s: u32) -> bool {
        s == self.total
    }

    /// Whether every cell the op defines is complete.
    fn done(&self, plan: &CollectivePlan) -> bool {
        (0..self.block_n).all(|b| {
            (0..self.n).all(|m| {
                let defined = match plan.kind {
                    OpKind::ReduceScatter => b == m,
                    OpKind::Reduce => Some(m) == plan.root,
                    _ => true,
                };
                !defined || self.complete(self.state[self.at(m, b)])
            })
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
    let mut cells = Cells::new(plan)?;
    let (n, block_n) = (cells.n, cells.block_n);
    let mut listed = Window::new(n, listing);
    let mut insts: Vec<PhaseInstance> = Vec::with_capacity(n as usize);
    // This step's receives that move the half, each with where its
    // values (its blocks' states at the sender before the step) start.
    let mut moved: Vec<(Transfer, usize)> = Vec::new();
    let mut values: Vec<u32> = Vec::new();
    let mut transfers = 0u64;
    let layout = plan.layout();
    for phase in &plan.phases {
        insts.clear();
        insts.extend((0..n).map(|m| plan.instance(phase, m)));
        let mut first = 0;
        while first < phase.step_n {
            let steps = listing.steps.max(1).min(phase.step_n - first);
            let shape_ok = |tr: &Transfer, m| shape_ok(tr, m, n, block_n);
            let span = Span { schedule, plan, source, shape_ok: &shape_ok, group, phase, insts: &insts, first, steps };
            if !listed.fill(&span) {
                return None;
            }
            first += steps;
            for w in 0..steps {
                // Match every receive (in member order, as the full run
                // does), and keep those that move this half with the
                // values they read.
                moved.clear();
                values.clear();
                for m in 0..n {
                    for k in 0..listed.list(m, w).len() {
                        let tr = listed.list(m, w)[k];
                        if tr.to != m {
                            continue;
                        }
                        listed.match_send(&tr, w, |sent| same(sent, &tr))?;
                        if super::moves(&tr, half) {
                            moved.push((tr, values.len()));
                            values.extend(tr.src.iter().map(|b| cells.state[cells.at(tr.from, b)]));
                        }
                    }
                }
                if listed.unmatched(n, w) {
                    return None;
                }
                apply(&mut cells, &moved, &values, |tr, sb, db| {
                    size_mismatch(&layout, plan.channels, half, tr, sb, db).is_none()
                })?;
                transfers += moved.len() as u64;
            }
        }
    }
    cells.done(plan).then_some(transfers)
}

/// Applies one step's receives (`values`: what each read before the
/// step): first every fold's sender is spent, once, then every receive
/// lands (see the module overview for the moves allowed).
fn apply(
    cells: &mut Cells,
    moved: &[(Transfer, usize)],
    values: &[u32],
    sizes_agree: impl Fn(&Transfer, u32, u32) -> bool,
) -> Option<()> {
    for (tr, _) in moved.iter().filter(|(tr, _)| tr.fold.is_some()) {
        for sb in tr.src.iter() {
            let c = cells.at(tr.from, sb);
            let s = cells.state[c];
            // Spent already at this step: a second fold of the same cell.
            if s == EMPTY || s == SPENT || cells.complete(s) {
                return None;
            }
            cells.state[c] = SPENT;
        }
    }
    for &(tr, at) in moved {
        for (j, (sb, db)) in tr.src.iter().zip(tr.dst.iter()).enumerate() {
            if !sizes_agree(&tr, sb, db) {
                return None;
            }
            let (value, c) = (values[at + j], cells.at(tr.to, db));
            let s = cells.state[c];
            cells.state[c] = match tr.fold {
                // The sender was live: checked above.
                Some(_) if s == SPENT || cells.complete(s) => return None,
                Some(_) => s + value,
                None if !cells.complete(value) || (s != EMPTY && s != SPENT && !cells.complete(s)) => return None,
                None => value,
            };
        }
    }
    Some(())
}

/// The full run's shape checks: the transfer involves member `m`, names
/// members and blocks in range, as many of each side, and keeps every
/// block at its position.
fn shape_ok(t: &Transfer, m: u32, n: u32, block_n: u32) -> bool {
    t.from < n
        && t.to < n
        && (t.from == m || t.to == m)
        && t.src.count == t.dst.count
        && t.src.below(block_n)
        && t.dst.below(block_n)
        && t.src.same_positions(t.dst)
}
