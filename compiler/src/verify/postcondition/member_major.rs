//! The path run's cells moved member-major: where a phase's every
//! member lists its transfers as runs of steps (`step_runs`: the ring
//! chains of broadcast and reduce), the phase's receives are applied a
//! whole run at a time, member after member along the chain, instead of
//! step after step; so that a 4,096-member chain costs 8,190
//! landings of ranges of blocks on rows held as runs (`runs`), not 16.8 M
//! landings of one block in step order.
//!
//! An *item* is one receive of one member's run: over the run's steps
//! `first..first + len`, member `to` receives from `from` the blocks of
//! `set` moved by `i * shift` at step `first + i` (the same positions on
//! both sides), folded or copied. The item *lands* in `(to, b)` and
//! *reads* (and, if it folds, spends) `(from, b)` at step `first + i`
//! for each block `b` of the moved set. A phase is taken member-major
//! only when:
//!
//! - (a) no cell is landed in twice in the phase;
//! - (b) no cell is read twice in the phase;
//! - (c) a cell both landed in and read is landed in at an earlier step
//!   than it is read;
//! - (d) the items' senders and receivers form no cycle (no member
//!   receives from itself), so the members have an order in which every
//!   item's sender comes before its receiver;
//!
//! and then the members' items are applied in that order, each over all
//! of its steps at once. Anything else (a set that is not the same on
//! both sides, a run moving by other than one block a step, a cell met
//! twice, a cycle, a phase whose runs do not decide its checks) takes
//! nothing member-major: the group is run step by step, as without it.
//!
//! **Why it is sound.** Reordering the moves changes nothing when each
//! cell meets the same moves in the same order with the same values
//! (each move is a function of the cell's state and the value read, and
//! so is whether it is allowed). Step by step, a cell meets at most a
//! landing and a read with its spend (a, b), the landing first (c); a
//! step's reads take the states before the step, then its folds' senders
//! are spent, then its receives land (`paths`). Take a cell `(x, b)`:
//!
//! - its landing's old state: step by step, nothing met the cell before
//!   in the phase (its read comes later), so it is the state the phase
//!   began with; member-major, the item reading it has `x` for sender and
//!   is applied after every item landing in `x` (d), so nothing met it
//!   either;
//! - its read's value (the spend's old state alike): step by step, the
//!   state after its landing if it has one (c), else the phase's first;
//!   member-major, the landing's item (receiver `x`) was applied before
//!   the reading item (sender `x`) (d), and nothing else meets the cell
//!   (a, b): the same.
//!
//! So every move meets the state and value it meets step by step, and is
//! allowed exactly then; the cells end the phase in the same states, and
//! the receives applied are the same, so the transfers counted are too.
//! An item's landings and reads, at its steps, meet distinct cells of two
//! members (`from != to`, and (a), (b) within it), so applying them a
//! range at a time, every read before every landing, is applying them
//! one step at a time. Conditions (a)–(c) are checked on *segments*: an
//! item moving by one block a step lands (or reads) blocks
//! `lo..lo + len` of one member at steps `b - lo + first`, one segment
//! per block of its set (a one-step item moves by nothing); two segments
//! of one member overlap or not, and on an overlap the steps of a
//! landing and a read differ by the same amount at every block, so one
//! comparison of `first - lo` decides (c) for all of it.

use super::counters::{Counters, copy, fold, spend};
use super::runs::Runs;
use crate::algorithms::StepRun;
use crate::schedule::{BlockSet, CollectivePlan, Phase, Transfer};
use ccc_ir::enums::HalfChunk;

/// Runs one group of `plan` for one half member-major, every phase (see
/// the module overview), on counters held as runs: the transfers matched,
/// `Some(None)` when the run refuses (a step by step run refuses too),
/// `None` when some phase is not to be taken member-major (the group is
/// then run step by step). `runs_of(phase, member, out)` lists a member's
/// runs of a phase as the source does (`false` when it has none), and
/// `shape_ok(transfer, member)` is the path run's shape check.
pub(super) fn run(
    plan: &CollectivePlan,
    half: HalfChunk,
    runs_of: &dyn Fn(&Phase, u32, &mut Vec<StepRun>) -> bool,
    shape_ok: &dyn Fn(&Transfer, u32) -> bool,
) -> Option<Option<u64>> {
    let block_n = plan.layout().block_n();
    let mut phases = Vec::with_capacity(plan.phases.len());
    let mut listed: Vec<Vec<StepRun>> = Vec::new();
    for phase in &plan.phases {
        listed.clear();
        for m in 0..plan.groups.size() {
            let mut own = Vec::new();
            if !runs_of(phase, m, &mut own) {
                return None;
            }
            listed.push(own);
        }
        let runs: Vec<&[StepRun]> = listed.iter().map(Vec::as_slice).collect();
        if !super::step_runs::checked(&runs, phase.step_n, block_n, shape_ok) {
            return None;
        }
        phases.push(MemberMajor::plan(&runs, half)?);
    }
    let mut cells = Runs::new(plan);
    let mut values = Vec::new();
    let mut transfers = 0;
    for phase in &phases {
        match phase.apply(&mut cells, &mut values) {
            Some(moved) => transfers += moved,
            None => return Some(None),
        }
    }
    Some(cells.done(plan).then_some(transfers))
}

/// One receive of one member's run over the run's steps (see the module
/// overview).
#[derive(Clone, Copy, Debug)]
struct Item {
    to: u32,
    from: u32,
    first: u32,
    len: u32,
    /// The blocks at `first`, on both sides.
    set: BlockSet,
    fold: bool,
}

impl Item {
    /// The item's segments: for each block of its set, the range of blocks
    /// it meets over its steps, and `first - lo` (the step at block `b` is
    /// `b` plus it). `None` unless it moves by one block a step (or has one
    /// step), or when a segment would end past `u32::MAX` (the run-level
    /// range check refuses such a run first).
    fn segments(&self, shift: u32) -> Option<impl Iterator<Item = Segment> + '_> {
        let last = self.set.last().unwrap_or(0);
        if (shift != 1 && self.len != 1) || last + u64::from(self.len) > u64::from(u32::MAX) {
            return None;
        }
        Some(self.set.iter().map(|lo| Segment { lo, end: lo + self.len, key: i64::from(self.first) - i64::from(lo) }))
    }

    /// The item's blocks over all its steps, set by set (with its
    /// segments' order: every block of the set, moved `0..len`).
    fn ranges(&self) -> impl Iterator<Item = BlockSet> + '_ {
        self.set.iter().map(|lo| BlockSet { start: lo, stride: 1, count: self.len })
    }
}

/// Blocks `lo..end` of one member, met at step `b + key` at block `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Segment {
    lo: u32,
    end: u32,
    key: i64,
}

/// A phase's receives, in an order that applies them as step by step
/// (see the module overview), and the transfers they are.
pub(super) struct MemberMajor {
    items: Vec<Item>,
    transfers: u64,
}

impl MemberMajor {
    /// The phase whose every member's runs are `runs` (by member, each
    /// covering the phase; the run-level checks passed), for half `half`;
    /// `None` when it is not to be taken member-major.
    pub(super) fn plan(runs: &[&[StepRun]], half: HalfChunk) -> Option<MemberMajor> {
        MemberMajor::planned(runs, half, Checks::ALL)
    }

    /// [`MemberMajor::plan`], making the checks `checks` asks for (the
    /// tests leave one out, to show it is needed).
    fn planned(runs: &[&[StepRun]], half: HalfChunk, checks: Checks) -> Option<MemberMajor> {
        let n = runs.len();
        let mut items = Vec::new();
        let mut transfers = 0u64;
        // Segments landed in and read, by member.
        let (mut landed, mut read) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        for (m, own) in runs.iter().enumerate() {
            for r in own.iter() {
                let moved = |tr: &&Transfer| tr.to == m as u32 && super::moves(tr, half);
                for tr in r.transfers.iter().filter(moved) {
                    if tr.src != tr.dst || tr.from == tr.to || tr.from as usize >= n {
                        return None;
                    }
                    let item = Item {
                        to: tr.to,
                        from: tr.from,
                        first: r.first,
                        len: r.len,
                        set: tr.dst,
                        fold: tr.fold.is_some(),
                    };
                    for s in item.segments(r.shift)? {
                        landed[m].push(s);
                        read[tr.from as usize].push(s);
                    }
                    transfers += u64::from(r.len);
                    items.push(item);
                }
            }
        }
        let ordered = (0..n).all(|m| {
            landed[m].sort_unstable();
            read[m].sort_unstable();
            (!checks.landed_once || disjoint(&landed[m]))
                && (!checks.read_once || disjoint(&read[m]))
                && (!checks.landed_first || landed_first(&landed[m], &read[m]))
        });
        let order = match checks.senders_first {
            true => ordered.then(|| senders_first(n, &items))??,
            false => ordered.then(|| (0..n as u32).collect())?,
        };
        // Stable: a member's items keep their runs' order.
        let mut at = vec![0u32; n];
        for (i, &m) in order.iter().enumerate() {
            at[m as usize] = i as u32;
        }
        items.sort_by_key(|it| at[it.to as usize]);
        Some(MemberMajor { items, transfers })
    }

    /// Applies the phase's receives to `cells`, item by item: every read
    /// of an item's range, then its spends, then its landings. `None` when
    /// some move is not allowed (a step by step run refuses it too).
    pub(super) fn apply<C: Counters>(&self, cells: &mut C, values: &mut Vec<C::Read>) -> Option<u64> {
        let total = cells.extent().total;
        let mut ok = true;
        for it in &self.items {
            for range in it.ranges() {
                values.clear();
                cells.read(it.from, range, values);
                if it.fold {
                    ok &= cells.land(it.from, range, &[], spend(total));
                    ok &= cells.land(it.to, range, values, fold(total));
                } else {
                    ok &= cells.land(it.to, range, values, copy(total));
                }
            }
            if !ok {
                return None;
            }
        }
        Some(self.transfers)
    }
}

/// Which of the conditions of the module overview [`MemberMajor::plan`]
/// checks: all of them, but in the tests.
#[derive(Clone, Copy, Debug)]
struct Checks {
    /// (a): no cell landed in twice.
    landed_once: bool,
    /// (b): no cell read twice.
    read_once: bool,
    /// (c): a cell landed in before it is read.
    landed_first: bool,
    /// (d): senders before receivers (else in member order).
    senders_first: bool,
}

impl Checks {
    const ALL: Checks = Checks { landed_once: true, read_once: true, landed_first: true, senders_first: true };
}

/// Whether `segments` (sorted) meet no block twice.
fn disjoint(segments: &[Segment]) -> bool {
    segments.windows(2).all(|w| w[0].end <= w[1].lo)
}

/// Whether, wherever a landing of `landed` and a read of `read` (each
/// sorted and disjoint) meet a block, the landing's step is below the
/// read's: on an overlap both steps grow by one a block, so their
/// `key`s decide.
fn landed_first(landed: &[Segment], read: &[Segment]) -> bool {
    let (mut i, mut j) = (0, 0);
    while let (Some(l), Some(r)) = (landed.get(i), read.get(j)) {
        if l.lo < r.end && r.lo < l.end && l.key >= r.key {
            return false;
        }
        if l.end <= r.end { i += 1 } else { j += 1 }
    }
    true
}

/// The members in an order where every item's sender comes before its
/// receiver (Kahn's, ties to the lowest member), or `None` on a cycle.
fn senders_first(n: usize, items: &[Item]) -> Option<Vec<u32>> {
    let mut waits = vec![0u32; n];
    // Items by sender: the receivers each member unblocks.
    let mut by_sender: Vec<(u32, u32)> = items.iter().map(|it| (it.from, it.to)).collect();
    by_sender.sort_unstable();
    for &(_, to) in &by_sender {
        waits[to as usize] += 1;
    }
    let mut order: Vec<u32> = (0..n as u32).filter(|&m| waits[m as usize] == 0).collect();
    let mut next = 0;
    while let Some(&m) = order.get(next) {
        next += 1;
        let from = by_sender.partition_point(|&(s, _)| s < m);
        let to = by_sender.partition_point(|&(s, _)| s <= m);
        for &(_, r) in &by_sender[from..to] {
            waits[r as usize] -= 1;
            if waits[r as usize] == 0 {
                order.push(r);
            }
        }
    }
    (order.len() == n).then_some(order)
}

#[cfg(test)]
mod tests {
    use super::super::counters::{EMPTY, Extent, SPENT};
    use super::super::paths::{self, Cells};
    use super::super::runs::tests::generator;
    use super::*;
    use crate::build::build;
    use crate::schedule::Halves;
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, Neigh, OpType, ReductionType};

    /// Random runs of `n` members over `step_n` steps, each member's
    /// covering them in order: a few receives a run, from the member
    /// before it on a chain up or down the members mostly, else from
    /// anyone (itself too); one block mostly,
    /// else a strided set; moving by one block a step mostly, else by
    /// none or two; the same set on both sides, but now and then one block
    /// named with another stride; every set in range at every step.
    fn random_runs(next: &mut impl FnMut(u32) -> u32, n: u32, block_n: u32, step_n: u32) -> Vec<Vec<StepRun>> {
        // The chain's direction: up the members or down.
        let up = next(2) == 0;
        (0..n)
            .map(|m| {
                let mut runs = Vec::new();
                let mut first = 0;
                while first < step_n {
                    let len = 1 + next(step_n - first);
                    let shift = [1, 1, 1, 0, 2][next(5) as usize];
                    let transfers = (0..next(3))
                        .filter_map(|_| {
                            let before = if up { m.checked_sub(1) } else { Some(m + 1).filter(|&b| b < n) };
                            let from = before.filter(|_| next(3) > 0).unwrap_or_else(|| next(n));
                            let (count, stride) = if next(3) > 0 { (1, 1) } else { (next(3), 1 + next(3)) };
                            let span = (len - 1) * shift + count.saturating_sub(1) * stride;
                            let start = next(block_n.checked_sub(span).filter(|&room| room > 0)?);
                            let src = BlockSet { start, stride, count };
                            // One block named with another stride: the same position.
                            let other = count <= 1 && next(12) == 0;
                            let dst = if other { BlockSet { stride: stride + 1, ..src } } else { src };
                            let fold = (next(2) == 0).then_some(ReductionType::Ring2R1W);
                            Some(Transfer { from, to: m, src, dst, halves: Halves::Both, fold, neigh: Neigh::Next })
                        })
                        .collect();
                    runs.push(StepRun { first, len, shift, transfers });
                    first += len;
                }
                runs
            })
            .collect()
    }

    /// The path run's steps over `runs`: at each step every member's
    /// receives, in member order, from the run holding it; the receives
    /// applied, or `None` at the first step refused.
    fn by_steps<C: Counters>(cells: &mut C, runs: &[Vec<StepRun>], step_n: u32) -> Option<u64> {
        let (mut moved, mut at) = (Vec::new(), Vec::new());
        let mut transfers = 0;
        for t in 0..step_n {
            moved.clear();
            for (m, own) in runs.iter().enumerate() {
                at.clear();
                own.iter().filter(|r| r.holds(t)).for_each(|r| r.at(t, &mut at));
                moved.extend(at.iter().filter(|tr| tr.to == m as u32));
            }
            paths::step(cells, &moved)?;
            transfers += moved.len() as u64;
        }
        Some(transfers)
    }

    /// Sets member `m`'s block `b` to `state` (any state: the argument
    /// holds from wherever a phase starts).
    fn set<C: Counters>(cells: &mut C, m: u32, b: u32, state: u32) {
        cells.land(m, BlockSet::one(b), &[], |_, _| (state, true));
    }

    /// Phases of random runs over every op's starting counters, now and
    /// then from cells set to any state: wherever a phase is taken
    /// member-major, it finds what the steps find (the answer, the
    /// transfers, and every cell's state after it).
    #[test]
    fn member_major_finds_what_the_steps_find() {
        let ops = [OpType::AllReduce, OpType::ReduceScatter, OpType::AllGather, OpType::Broadcast, OpType::Reduce];
        let mut next = generator(0x51_7cc1_b727_220a);
        let (mut taken, mut refused, mut phases) = (0, 0, 0);
        let mut values = Vec::new();
        for round in 0..10_000 {
            let op = ops[round % ops.len()];
            let n = 2 + next(4);
            let Some(mut case) = Case::for_alg(op, AlgType::InterRdh, n) else { continue };
            case.root = Some(next(n));
            let schedule = build(&case.valid()).unwrap();
            let plan = &schedule.collectives[0];
            let mut reference = Cells::rows(plan).unwrap();
            let mut cells = Runs::new(plan);
            let Extent { block_n, total, .. } = reference.extent();
            for _ in 0..1 + next(3) {
                let step_n = 1 + next(5);
                let runs = random_runs(&mut next, n, block_n, step_n);
                let own: Vec<&[StepRun]> = runs.iter().map(Vec::as_slice).collect();
                for _ in 0..if next(2) == 0 { next(2 * n) } else { 0 } {
                    let (m, b) = (next(n), next(block_n));
                    let state = [EMPTY, SPENT, 1 + next(total + 1)][next(3) as usize];
                    set(&mut reference, m, b, state);
                    set(&mut cells, m, b, state);
                }
                let want = by_steps(&mut reference, &runs, step_n);
                let found = match MemberMajor::plan(&own, HalfChunk::H0) {
                    Some(phase) => {
                        taken += 1;
                        refused += u32::from(want.is_none());
                        phase.apply(&mut cells, &mut values)
                    }
                    None => by_steps(&mut cells, &runs, step_n),
                };
                assert_eq!(found, want, "{op:?} n={n}: {runs:?}");
                let Some(_) = want else { break };
                for (m, b) in (0..n).flat_map(|m| (0..block_n).map(move |b| (m, b))) {
                    assert_eq!(cells.state(m, b), reference.state(m, b), "{op:?} n={n} ({m}, {b}): {runs:?}");
                }
                phases += 1;
            }
        }
        assert!(taken > 1000 && refused > 200 && phases > 500, "{taken} taken, {refused} refused, {phases}");
    }

    /// A run of folds, one block a step: `(first, len, receives)`, a
    /// receive `(from, start)` folding one block.
    type Folds<'a> = (u32, u32, &'a [(u32, u32)]);

    /// A case: what it shows, every member's runs, cells set to a state
    /// first (`(member, block, state)`), and the checks made without the
    /// condition it shows needed.
    type Needed<'a> = (&'a str, &'a [Vec<StepRun>], &'a [(u32, u32, u32)], Checks);

    /// Three members' runs of folds: member `m`'s are `runs[m]`.
    fn folds(runs: [&[Folds<'_>]; 3]) -> Vec<Vec<StepRun>> {
        let run = |m: u32, &(first, len, receives): &Folds<'_>| {
            let fold = Some(ReductionType::Ring2R1W);
            let transfers = receives
                .iter()
                .map(|&(from, start)| {
                    let set = BlockSet::one(start);
                    Transfer { from, to: m, src: set, dst: set, halves: Halves::Both, fold, neigh: Neigh::Next }
                })
                .collect();
            StepRun { first, len, shift: 1, transfers }
        };
        (0..3).map(|m| runs[m as usize].iter().map(|r| run(m, r)).collect()).collect()
    }

    /// Leaving out any one of conditions (a), (c) and (d) of the module
    /// overview takes a phase member-major that finds otherwise than its
    /// steps; with every condition it finds what they find (run step by
    /// step, or, for (d), member-major in an order with senders first). Condition (b)
    /// is one today's moves imply (a cell read twice either keeps its
    /// state, two copies, or meets a refused move in either order: a
    /// copy reads only a complete cell, which a fold's sender may not
    /// be, and a spent cell is spent no more); it keeps the argument
    /// about cells.
    #[test]
    fn each_condition_is_needed() {
        let all = Checks::ALL;
        // Member 0's one run lists its receive from 1 first, but it lands
        // in block 1 a step after the one from 2 does: 1 + 1, then + 2
        // (past the total, allowed), step by step; 1 + 2 = 3, the total,
        // then a fold into a complete cell member-major.
        let twice = folds([&[(0, 2, &[(1, 0), (2, 1)])], &[(0, 2, &[])], &[(0, 2, &[])]]);
        // Member 0 reads member 1's block 0 at step 0, which member 1 is
        // folded into at step 1 (into a spent cell, refused).
        let early = folds([&[(0, 1, &[(1, 0)]), (1, 1, &[])], &[(0, 1, &[]), (1, 1, &[(2, 0)])], &[(0, 2, &[])]]);
        // Down the members: 2 into 1 at step 0, 1 into 0 at step 1; in
        // member order, 0 reads 1's block before 2 is folded into it.
        let down = folds([&[(0, 1, &[]), (1, 1, &[(1, 0)])], &[(0, 1, &[(2, 0)]), (1, 1, &[])], &[(0, 2, &[])]]);
        let cases: [Needed<'_>; 3] = [
            ("(a)", &twice, &[(1, 1, 2)], Checks { landed_once: false, ..all }),
            ("(c)", &early, &[], Checks { landed_first: false, ..all }),
            ("(d)", &down, &[], Checks { senders_first: false, ..all }),
        ];
        let case = Case::for_alg(OpType::Reduce, AlgType::Ring, 3).unwrap();
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        for (what, runs, states, without) in cases {
            let own: Vec<&[StepRun]> = runs.iter().map(Vec::as_slice).collect();
            let start = || {
                let mut cells = Cells::rows(plan).unwrap();
                states.iter().for_each(|&(m, b, state)| set(&mut cells, m, b, state));
                cells
            };
            assert!(start().extent().block_n >= 3 && start().extent().total == 3);
            let want = by_steps(&mut start(), runs, 2);
            // Every condition: run step by step, or (d) in an order that
            // finds the same.
            let checked = match MemberMajor::plan(&own, HalfChunk::H0) {
                Some(phase) => phase.apply(&mut start(), &mut Vec::new()),
                None => by_steps(&mut start(), runs, 2),
            };
            assert_eq!(checked, want, "{what}");
            let Some(phase) = MemberMajor::planned(&own, HalfChunk::H0, without) else { panic!("{what}") };
            let found = phase.apply(&mut start(), &mut Vec::new());
            assert_ne!(found.is_some(), want.is_some(), "{what}: {found:?} {want:?}");
        }
    }
}
