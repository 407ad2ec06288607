//! The path run's counters as runs: where every phase moves ranges of
//! blocks (recursive halving and doubling, trees, direct sends), each
//! member's row of counters is held as runs of consecutive cells in one
//! state, so that a transfer of a range costs the runs it meets, not the
//! blocks it moves.
//!
//! Recursive halving moves `O(n)` blocks per member in all, so one
//! counter per cell costs `O(n^2)` block operations per group (9.4 M for
//! 3,072 members), and as many bytes of counters to clear; but its rows
//! hold a handful of runs at any step (the range a member keeps, the
//! spent ranges around it; the range it has gathered back), so that a
//! transfer costs a few runs.
//!
//! **Why it proves what the cell-per-counter run proves.** [`Runs`] is a
//! representation of the same array of counters, nothing more: a run
//! stands for each of its cells in its state. A read yields every cell's
//! state in the set's order (as runs of equal states), and a landing
//! applies the run's move `new(old, value)` to every cell of the set, in
//! the set's order, the value of each cell read from its sender before
//! the step; a piece where both the old state and the value are constant
//! is moved once, which is what moving each of its cells would give, and
//! the move is allowed for the piece exactly when it is for each cell.
//! So after every landing every cell's state is the one the per-cell
//! array holds, and the run accepts or refuses exactly as it does; the
//! module overview of `paths` argues the rest. A test holds both equal,
//! cell by cell, on random transfers, and end to end on every pairing
//! and seeded defect.
//!
//! **One run, one value.** A landing whose blocks lie in one run and
//! whose values read are one (a fold's sender reads none; recursive
//! halving and doubling land each range on cells of one state, from
//! cells of one state) makes one move, `new(state, value)`, for every
//! cell: the run is cut where the range begins and ends and the middle
//! takes the new state, joined to a neighbour run in that state, which
//! is the row the general landing builds (runs are kept maximal, so a
//! row of cells has one such form). It edits the row in place, one case
//! per way the range meets its run's ends and the neighbours' states
//! (at most two runs inserted or removed), and the general landing is
//! kept out of its code, so that the common landing costs a search and a
//! few stores. Anything else (the range crosses a
//! run's end, the values change along it, the read runs out before its
//! end) takes the general landing. The random test below holds the
//! rows equal to the per-cell ones, and maximal, after every step, and
//! a test of its own cuts, joins and refuses each case.
//!
//! Runs pay off only where rows stay short. A row that a strided set
//! (stride not 1, more than one block) lands in, or that splits into more
//! than [`MAX_RUNS`] runs, is turned into one counter per cell for the
//! rest of the run (the same states): then it costs what the per-cell
//! rows cost, never a run search per block.

use super::counters::{Counters, EMPTY, Extent};
use crate::schedule::{BlockSet, CollectivePlan, OpKind};

/// The runs a row holds before it turns into one counter per cell: a
/// landing shifts the runs after it, so a long row would cost more than
/// its cells.
const MAX_RUNS: usize = 64;

/// What a read yields: `len` consecutive cells (in the set's order) in
/// state `state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Run {
    pub(super) len: u32,
    pub(super) state: u32,
}

/// One member's counters.
#[derive(Clone, Debug)]
enum Row {
    /// `(first block, state)` per run, the first at block 0, ascending,
    /// no two neighbours in one state; each run ends where the next
    /// begins, the last at the row's end.
    Runs(Vec<(u32, u32)>),
    /// One state per block.
    Cells(Vec<u32>),
}

/// One group, one half: a row of counters per member, as runs.
pub(super) struct Runs {
    n: u32,
    block_n: u32,
    total: u32,
    rows: Vec<Row>,
    /// [`MAX_RUNS`] (fewer in the tests, to turn rows into cells often).
    max_runs: usize,
    /// A row's runs being rebuilt.
    scratch: Vec<(u32, u32)>,
}

/// Where a landing's values come from: `read`, run by run, then 0.
struct Cursor<'a> {
    read: &'a [Run],
    /// The run read next, and how many of its cells are left.
    at: usize,
    left: u32,
}

impl Cursor<'_> {
    fn new(read: &[Run]) -> Cursor<'_> {
        Cursor { read, at: 0, left: read.first().map_or(0, |r| r.len) }
    }

    /// The next cell's value, and for how many cells it holds.
    fn peek(&mut self) -> (u32, u32) {
        while self.left == 0 && self.at < self.read.len() {
            self.at += 1;
            self.left = self.read.get(self.at).map_or(0, |r| r.len);
        }
        match self.read.get(self.at) {
            Some(r) => (r.state, self.left),
            None => (0, u32::MAX),
        }
    }

    fn advance(&mut self, len: u32) {
        if self.at < self.read.len() {
            self.left -= len;
        }
    }
}

/// Appends `run` to `runs`, joined to the last when in one state.
fn push(runs: &mut Vec<(u32, u32)>, run: (u32, u32)) {
    if runs.last().is_none_or(|last| last.1 != run.1) {
        runs.push(run);
    }
}

/// Appends `run` to `out`, joined to the last one from `base` on when in
/// one state.
fn push_read(out: &mut Vec<Run>, base: usize, run: Run) {
    let len = out.len();
    match out.last_mut() {
        Some(last) if len > base && last.state == run.state => last.len += run.len,
        _ => out.push(run),
    }
}

/// Where run `i` of `runs` ends.
fn end(runs: &[(u32, u32)], i: usize, block_n: u32) -> u32 {
    runs.get(i + 1).map_or(block_n, |r| r.0)
}

/// The index of the run of `runs` that holds block `b`.
fn holding(runs: &[(u32, u32)], b: u32) -> usize {
    runs.partition_point(|r| r.0 <= b).saturating_sub(1)
}

impl Runs {
    /// `plan`'s counters as they start (see `paths`: every cell live with
    /// count 1 but the empty ones).
    pub(super) fn new(plan: &CollectivePlan) -> Runs {
        let Extent { n, block_n, total } = Extent::of(plan);
        let rows = (0..n)
            .map(|m| {
                let mut runs = Vec::new();
                let starts: &[(u32, u32)] = match plan.kind {
                    OpKind::Broadcast => &[(0, u32::from(Some(m) == plan.root))],
                    // Block m alone holds a contribution.
                    OpKind::AllGather => &[(0, EMPTY), (m, 1), (m + 1, EMPTY)],
                    _ => &[(0, 1)],
                };
                // Each run from its first block on, to the next's (a run
                // that starts past the row's end, or where the next one
                // starts, holds no block).
                for (i, &run) in starts.iter().enumerate() {
                    let next = starts.get(i + 1).map_or(block_n, |r| r.0.min(block_n));
                    if run.0 < next {
                        push(&mut runs, run);
                    }
                }
                Row::Runs(runs)
            })
            .collect();
        Runs { n, block_n, total, rows, max_runs: MAX_RUNS, scratch: Vec::new() }
    }

    /// Member `m`'s state of block `b`.
    #[cfg(test)]
    pub(super) fn state(&self, m: u32, b: u32) -> u32 {
        match &self.rows[m as usize] {
            Row::Runs(runs) => runs[holding(runs, b)].1,
            Row::Cells(cells) => cells[b as usize],
        }
    }

    /// Spreads member `m`'s row once it holds more than `max_runs` runs
    /// (after every landing).
    fn cap(&mut self, m: u32) {
        if matches!(&self.rows[m as usize], Row::Runs(runs) if runs.len() > self.max_runs) {
            self.spread(m);
        }
    }

    /// Spreads member `m`'s row into one counter per cell (rare: kept out
    /// of the landings' code).
    #[inline(never)]
    fn spread(&mut self, m: u32) {
        let row = &mut self.rows[m as usize];
        if let Row::Runs(runs) = row {
            let mut cells = Vec::with_capacity(self.block_n as usize);
            for (i, &(first, state)) in runs.iter().enumerate() {
                cells.resize((end(runs, i, self.block_n) - first) as usize + cells.len(), state);
            }
            *row = Row::Cells(cells);
        }
    }

    /// [`Runs::land_range`] where blocks `a..b` (not empty) lie in one run
    /// of member `m`'s row and every value read is one (`read` is empty,
    /// or its first run covers them): every cell then makes one move, from
    /// the run's state with that value, so the run is cut into at most
    /// three (before `a`, `a..b` moved, from `b`), the moved piece joined
    /// to a neighbour in its new state, as `land_range` leaves the row.
    /// `None` (the row untouched) when the blocks or the values are not
    /// so.
    fn land_within(
        &mut self,
        m: u32,
        a: u32,
        b: u32,
        read: &[Run],
        new: &impl Fn(u32, u32) -> (u32, bool),
    ) -> Option<bool> {
        let Row::Runs(runs) = &mut self.rows[m as usize] else { return None };
        let value = match read {
            [] => 0,
            [first, ..] if first.len >= b - a => first.state,
            _ => return None,
        };
        let i = holding(runs, a);
        let (start, state) = runs[i];
        let stop = end(runs, i, self.block_n);
        if stop < b {
            return None;
        }
        let (to, allowed) = new(state, value);
        if to == state {
            return Some(allowed);
        }
        // Run i becomes: its cells before `a` (kept when `a > start`),
        // `a..b` in state `to` (joined to run i - 1 when that starts the
        // run and is in `to`), its cells from `b` (kept when `b < stop`);
        // run i + 1 joins the middle when it is in `to` and `b` ends run i.
        // Each case below edits the row in place to that maximal form.
        let next_joins = b == stop && runs.get(i + 1).is_some_and(|r| r.1 == to);
        let prev_joins = a == start && i > 0 && runs[i - 1].1 == to;
        match (a > start, b < stop) {
            (true, true) => {
                runs.splice(i + 1..i + 1, [(a, to), (b, state)]);
            }
            (true, false) if next_joins => runs[i + 1].0 = a,
            (true, false) => runs.insert(i + 1, (a, to)),
            (false, true) if prev_joins => runs[i].0 = b,
            (false, true) => {
                runs[i].1 = to;
                runs.insert(i + 1, (b, state));
            }
            (false, false) => match (prev_joins, next_joins) {
                (true, true) => {
                    runs.drain(i..i + 2);
                }
                (true, false) => {
                    runs.remove(i);
                }
                (false, true) => {
                    runs.remove(i);
                    runs[i].0 = a;
                }
                (false, false) => runs[i].1 = to,
            },
        }
        Some(allowed)
    }

    /// Lands blocks `a..b` of member `m`'s row of runs: each cell moved by
    /// `new` with the next value of `values`; whether every move was
    /// allowed. Out of line: the landings `land_within` serves, the
    /// common ones, then carry none of its code.
    #[inline(never)]
    fn land_range(
        &mut self,
        m: u32,
        a: u32,
        b: u32,
        values: &mut Cursor<'_>,
        new: &impl Fn(u32, u32) -> (u32, bool),
    ) -> bool {
        let Row::Runs(runs) = &mut self.rows[m as usize] else { return true };
        let scratch = &mut self.scratch;
        // Runs lo..hi meet a..b; from..to adds a neighbour either side, to
        // join the new runs to.
        let (lo, hi) = (holding(runs, a), runs.partition_point(|r| r.0 < b));
        let (from, to) = (lo.saturating_sub(1), (hi + 1).min(runs.len()));
        scratch.clear();
        runs[from..lo].iter().for_each(|&r| push(scratch, r));
        if runs[lo].0 < a {
            push(scratch, runs[lo]);
        }
        let mut ok = true;
        let mut p = a;
        for i in lo..hi {
            let e = end(runs, i, self.block_n).min(b);
            while p < e {
                let (value, left) = values.peek();
                let len = left.min(e - p);
                let (state, allowed) = new(runs[i].1, value);
                ok &= allowed;
                push(scratch, (p, state));
                values.advance(len);
                p += len;
            }
        }
        if end(runs, hi - 1, self.block_n) > b {
            push(scratch, (b, runs[hi - 1].1));
        }
        runs[hi..to].iter().for_each(|&r| push(scratch, r));
        runs.splice(from..to, scratch.drain(..));
        ok
    }

    /// [`Counters::land`] where `land_within` declines: a strided set,
    /// a row of cells, or runs or values that change along the range
    /// (rare, so out of the common landing's code).
    #[inline(never)]
    fn land_general(&mut self, m: u32, set: BlockSet, read: &[Run], new: impl Fn(u32, u32) -> (u32, bool)) -> bool {
        let range = set.stride == 1 || set.count == 1;
        let mut values = Cursor::new(read);
        if !range {
            self.spread(m);
        }
        let ok = match &mut self.rows[m as usize] {
            Row::Cells(cells) => {
                let mut ok = true;
                for b in set.iter() {
                    let (value, _) = values.peek();
                    let cell = &mut cells[b as usize];
                    let (to, allowed) = new(*cell, value);
                    (*cell, ok) = (to, ok & allowed);
                    values.advance(1);
                }
                ok
            }
            // A range that `land_within` declined.
            Row::Runs(_) => self.land_range(m, set.start, set.start + set.count, &mut values, &new),
        };
        self.cap(m);
        ok
    }
}

impl Counters for Runs {
    type Read = Run;

    fn extent(&self) -> Extent {
        Extent { n: self.n, block_n: self.block_n, total: self.total }
    }

    #[inline]
    fn read(&self, m: u32, set: BlockSet, out: &mut Vec<Run>) {
        let base = out.len();
        match &self.rows[m as usize] {
            Row::Runs(runs) if (set.stride == 1 || set.count == 1) && set.count > 0 => {
                // The runs from the one holding `a` on, while they start
                // below `b` (each begins where the one before ends; the
                // set is in range, the last run ends at the row's end).
                let (a, b) = (set.start, set.start + set.count);
                let (mut i, mut p) = (holding(runs, a), a);
                while p < b && i < runs.len() {
                    let e = end(runs, i, self.block_n).min(b);
                    push_read(out, base, Run { len: e - p, state: runs[i].1 });
                    (p, i) = (e, i + 1);
                }
            }
            Row::Runs(runs) => {
                set.iter().for_each(|b| push_read(out, base, Run { len: 1, state: runs[holding(runs, b)].1 }))
            }
            Row::Cells(cells) => {
                set.iter().for_each(|b| push_read(out, base, Run { len: 1, state: cells[b as usize] }))
            }
        }
    }

    fn land(&mut self, m: u32, set: BlockSet, read: &[Run], new: impl Fn(u32, u32) -> (u32, bool)) -> bool {
        if set.count == 0 {
            return true;
        }
        let range = set.stride == 1 || set.count == 1;
        // Within one run, one value: the common landing, first.
        if range && let Some(ok) = self.land_within(m, set.start, set.start + set.count, read, &new) {
            self.cap(m);
            return ok;
        }
        self.land_general(m, set, read, new)
    }

    fn done(&self, plan: &CollectivePlan) -> bool {
        let complete = |m: u32, blocks: std::ops::Range<u32>| match &self.rows[m as usize] {
            Row::Runs(runs) => {
                let (a, b) = (blocks.start, blocks.end);
                a >= b || runs[holding(runs, a)..runs.partition_point(|r| r.0 < b)].iter().all(|r| r.1 == self.total)
            }
            Row::Cells(cells) => cells[blocks.start as usize..blocks.end as usize].iter().all(|&s| s == self.total),
        };
        (0..self.n).all(|m| match plan.kind {
            OpKind::ReduceScatter => m >= self.block_n || complete(m, m..m + 1),
            OpKind::Reduce => Some(m) != plan.root || complete(m, 0..self.block_n),
            _ => complete(m, 0..self.block_n),
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::paths::{self, Cells};
    use super::*;
    use crate::build::build;
    use crate::schedule::{Halves, Transfer};
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, Neigh, OpType, ReductionType};

    /// A xorshift generator: `next(bound)` in `0..bound`.
    pub(in crate::verify::postcondition) fn generator(mut seed: u64) -> impl FnMut(u32) -> u32 {
        move |bound| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(bound.max(1))) as u32
        }
    }

    /// A random set of blocks below `block_n`: a range mostly, else
    /// strided (stride 0 repeats one block).
    fn random_set(next: &mut impl FnMut(u32) -> u32, block_n: u32) -> BlockSet {
        let start = next(block_n);
        let stride = [1, 1, 1, 0, 2, 3][next(6) as usize];
        let room = (block_n - 1 - start).checked_div(stride).map_or(4, |steps| steps + 1);
        BlockSet { start, stride, count: next(room + 1) }
    }

    /// One member's row of 8 blocks, `runs`, in a group whose complete
    /// cells count 4.
    fn row_of(runs: &[(u32, u32)]) -> Runs {
        let rows = vec![Row::Runs(runs.to_vec())];
        Runs { n: 1, block_n: 8, total: 4, rows, max_runs: MAX_RUNS, scratch: Vec::new() }
    }

    /// A landing in one run with one value cuts the run and joins the
    /// moved piece to a neighbour in its state, as the general landing
    /// does; one that crosses a run's end, reads two values or reads too
    /// few takes the general landing (each would be wrong if moved as one
    /// piece); a refused move is refused either way.
    #[test]
    fn one_run_one_value_lands_as_the_general_landing() {
        let start = [(0, 1), (3, 2), (5, 1)];
        let run = |len, state| Run { len, state };
        let take = |s: u32, v: u32| (v, s != 9);
        // (blocks, values read, the row after, whether allowed)
        type Case = ((u32, u32), Vec<Run>, Vec<(u32, u32)>, bool);
        // The first six land within one run (`land_within` answers),
        // the last three take the general landing (it declines).
        let within = 6;
        let cases: [Case; 9] = [
            ((1, 2), vec![run(1, 7)], vec![(0, 1), (1, 7), (2, 1), (3, 2), (5, 1)], true),
            ((0, 3), vec![run(3, 2)], vec![(0, 2), (5, 1)], true),
            ((5, 8), vec![run(3, 2)], vec![(0, 1), (3, 2)], true),
            ((3, 5), vec![run(2, 2)], start.to_vec(), true),
            ((0, 2), vec![], vec![(0, 0), (2, 1), (3, 2), (5, 1)], true),
            // The whole middle run joins both neighbours: three runs give way to one.
            ((3, 5), vec![run(2, 1)], vec![(0, 1)], true),
            // Crosses the first run's end.
            ((2, 4), vec![run(2, 9)], vec![(0, 1), (2, 9), (4, 2), (5, 1)], true),
            // Two values; too few values (the rest read as 0).
            ((0, 2), vec![run(1, 3), run(1, 4)], vec![(0, 3), (1, 4), (2, 1), (3, 2), (5, 1)], true),
            ((0, 2), vec![run(1, 3)], vec![(0, 3), (1, 0), (2, 1), (3, 2), (5, 1)], true),
        ];
        for (i, ((a, b), read, after, allowed)) in cases.into_iter().enumerate() {
            // The shortcut itself: it answers exactly the cases within one run.
            let mut direct = row_of(&start);
            let answer = direct.land_within(0, a, b, &read, &take);
            if i < within {
                assert_eq!(answer, Some(allowed), "{a}..{b} {read:?}: land_within");
                assert!(matches!(&direct.rows[0], Row::Runs(r) if *r == after), "{a}..{b} land_within");
            } else {
                assert_eq!(answer, None, "{a}..{b} {read:?}: land_within must decline");
                assert!(matches!(&direct.rows[0], Row::Runs(r) if *r == start), "{a}..{b} declined, row untouched");
            }
            let set = BlockSet { start: a, stride: 1, count: b - a };
            let mut runs = row_of(&start);
            assert_eq!(runs.land(0, set, &read, take), allowed, "{a}..{b} {read:?}");
            assert!(matches!(&runs.rows[0], Row::Runs(r) if *r == after), "{a}..{b} {read:?}: {:?}", runs.rows[0]);
            let mut general = row_of(&start);
            assert_eq!(general.land_range(0, a, b, &mut Cursor::new(&read), &take), allowed);
            assert!(matches!(&general.rows[0], Row::Runs(r) if *r == after), "{a}..{b} general");
        }
        // A refused move, in one run with one value, is refused.
        let mut runs = row_of(&[(0, 9), (4, 1)]);
        assert!(!runs.land(0, BlockSet { start: 1, stride: 1, count: 2 }, &[run(2, 3)], take));
        assert!(matches!(&runs.rows[0], Row::Runs(r) if *r == [(0, 9), (1, 3), (3, 9), (4, 1)]));
    }

    /// Whether `row` is as every landing must leave it: one counter per
    /// block, or runs from block 0 on, ascending, none empty, no two
    /// neighbours in one state.
    fn canonical(row: &Row, block_n: u32) -> bool {
        match row {
            Row::Cells(cells) => cells.len() == block_n as usize,
            Row::Runs(runs) => {
                (block_n == 0 || !runs.is_empty())
                    && runs.first().is_none_or(|r| r.0 == 0)
                    && runs.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 != w[1].1)
                    && runs.last().is_none_or(|r| r.0 < block_n.max(1))
            }
        }
    }

    /// On random steps of random transfers (folds and copies, ranges,
    /// strided and repeated blocks, legal moves or not) from every op's
    /// starting counters, the runs hold every cell's state as the
    /// per-cell rows do after every step, answer every step alike, and
    /// agree on the end; rows turn into cells on the way (few runs
    /// allowed) or not.
    #[test]
    fn runs_hold_every_cell_as_the_cells_do() {
        let ops = [OpType::AllReduce, OpType::ReduceScatter, OpType::AllGather, OpType::Broadcast, OpType::Reduce];
        let mut next = generator(0x9e37_79b9_7f4a_7c15);
        let (mut steps, mut refused, mut turned) = (0, 0, 0);
        for round in 0..600 {
            let op = ops[round % ops.len()];
            let n = 1 + next(9);
            let Some(mut case) = Case::for_alg(op, AlgType::InterRdh, n) else { continue };
            case.root = Some(next(n));
            let schedule = build(&case.valid()).unwrap();
            let plan = &schedule.collectives[0];
            let mut cells = Cells::rows(plan).unwrap();
            let max_runs = [1, 2, 4, MAX_RUNS][next(4) as usize];
            let mut runs = Runs { max_runs, ..Runs::new(plan) };
            let block_n = cells.extent().block_n;
            for _ in 0..1 + next(12) {
                let moved: Vec<Transfer> = (0..next(2 * n + 1))
                    .map(|_| {
                        let set = random_set(&mut next, block_n.max(1));
                        let set = if block_n == 0 { BlockSet::all(0) } else { set };
                        let fold = (next(2) == 0).then_some(ReductionType::Ring2R1W);
                        let (from, to) = (next(n), next(n));
                        Transfer { from, to, src: set, dst: set, halves: Halves::Both, fold, neigh: Neigh::Next }
                    })
                    .collect();
                let by_cells = paths::step(&mut cells, &moved);
                let by_runs = paths::step(&mut runs, &moved);
                assert_eq!(by_runs, by_cells, "{op:?} n={n}: {moved:?}");
                for m in 0..n {
                    for b in 0..block_n {
                        assert_eq!(runs.state(m, b), cells.state(m, b), "{op:?} n={n} member {m} block {b}: {moved:?}");
                    }
                    assert!(canonical(&runs.rows[m as usize], block_n), "{op:?} n={n} member {m}: {moved:?}");
                }
                steps += 1;
                refused += u32::from(by_cells.is_none());
            }
            assert_eq!(runs.done(plan), cells.done(plan), "{op:?} n={n}");
            turned += runs.rows.iter().filter(|r| matches!(r, Row::Cells(_))).count();
        }
        assert!(steps > 2000 && refused > 500 && steps - refused > 500 && turned > 100, "{steps} {refused} {turned}");
    }
}
