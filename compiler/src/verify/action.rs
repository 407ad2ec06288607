//! How the indices of a group move ([`Action`]), and whether a transfer is
//! another moved ([`is_moved_by`]): what symmetry is made of (see
//! `symmetry`).
//!
//! Member and block indices of a group are mixed-radix numbers over its
//! digits (local, node, pod). An `Action` joins the digits into runs that
//! move independently, each as a ring (adding with carry, mod its size) or,
//! under recursive halving and doubling, by XOR. One ring over every digit
//! is the flat rotation `i -> i + g (mod n)`; the rings `[local]` and
//! `[node, pod]` turn each node's ring and the ring across nodes at once.
//! A collective's runs are cut where its phases' scopes start and end.
//! Block positions move as member indices do; an all-to-all's second
//! copy of them (its output blocks `n..2n`) moves as a copy of its own.

use crate::schedule::{BlockSet, CollectivePlan, DIGITS, OpKind, PhaseKind, Transfer};

/// How indices of a group move: the group's digits joined into runs that
/// move independently, each as a ring (adding with carry among its digits,
/// mod its size) or, under recursive halving and doubling, as bits (XOR,
/// for a run of a power-of-two size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Action {
    n: u32,
    /// Block positions per member: `n`, or `2n` for an all-to-all, whose
    /// output blocks `n..2n` move as a second copy of the indices
    /// ([`Action::add_block`]).
    blocks: u32,
    /// Runs in use.
    pub(super) run_n: usize,
    /// Per run: place value and size (their product over runs is `n`);
    /// runs past `run_n` are `(0, 1)`, adding nothing.
    runs: [(u32, u32); DIGITS],
    /// Per run: moves by XOR rather than as a ring.
    pub(super) xor: [bool; DIGITS],
    /// Unless it is the flat ring: each index's digit in each run, so that
    /// moving an index costs no division.
    digits: Vec<[u32; DIGITS]>,
}

/// Whether a phase pairs members by their bits (`j ^ 2^t`).
fn pairs_by_bits(kind: PhaseKind) -> bool {
    matches!(
        kind,
        PhaseKind::RdhPrologue { .. }
            | PhaseKind::RdhHalving { .. }
            | PhaseKind::RdhDoubling { .. }
            | PhaseKind::RdhEpilogue { .. }
    )
}

impl Action {
    /// The action of `plan`'s groups: the digits cut wherever one of its
    /// phases' scopes (or the scopes that narrow their blocks) starts or
    /// ends, so a flat algorithm's group is one run. A run of a
    /// power-of-two size under a recursive halving or doubling phase moves
    /// by XOR; every other run as a ring.
    pub(crate) fn of(plan: &CollectivePlan) -> Action {
        // An all-to-all-v's blocks do not move (their sizes depend on the
        // member): they keep one copy, as every other op's.
        let blocks = if blocks_move(plan) { plan.layout().block_n() } else { plan.groups.size() };
        Action { blocks, ..Action::of_members(plan) }
    }

    /// [`Action::of`], its blocks one per member.
    fn of_members(plan: &CollectivePlan) -> Action {
        let n = plan.groups.size();
        let mut cuts = vec![0u8, DIGITS as u8];
        for phase in &plan.phases {
            for scope in std::iter::once(&phase.scope).chain(&phase.narrow) {
                cuts.extend([scope.lo, scope.hi]);
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let radices = &plan.radices;
        let found: Vec<(u32, u32, bool)> = cuts
            .windows(2)
            .map(|w| {
                let size = radices.span(w[0], w[1]);
                let xor = size.is_power_of_two()
                    && plan.phases.iter().any(|p| pairs_by_bits(p.kind) && p.scope.lo <= w[0] && w[1] <= p.scope.hi);
                (radices.span(0, w[0]), size, xor)
            })
            .filter(|&(_, size, _)| size > 1)
            .collect();
        let product: u64 = found.iter().map(|&(_, size, _)| u64::from(size)).product();
        if found.is_empty() || found.len() > DIGITS || product != u64::from(n) {
            return Action::cyclic(n);
        }
        if found.len() == 1 && !found[0].2 {
            return Action::cyclic(n);
        }
        let (mut runs, mut xor) = ([(0, 1); DIGITS], [false; DIGITS]);
        for (r, &(place, size, x)) in found.iter().enumerate() {
            runs[r] = (place, size);
            xor[r] = x;
        }
        let digits = (0..n).map(|i| runs.map(|(place, size)| i.checked_div(place).map_or(0, |q| q % size))).collect();
        Action { n, blocks: n, run_n: found.len(), runs, xor, digits }
    }

    /// The flat rotation of `n` indices.
    pub(crate) fn cyclic(n: u32) -> Action {
        let mut runs = [(0, 1); DIGITS];
        runs[0] = (1, n);
        Action { n, blocks: n, run_n: 1, runs, xor: [false; DIGITS], digits: Vec::new() }
    }

    /// `local` indices in a node, turning on their own, and the nodes of
    /// `n / local` turning as a ring (or moving by XOR): a two-level
    /// group's action.
    #[cfg(test)]
    pub(crate) fn two_level(local: u32, n: u32, xor_nodes: bool) -> Action {
        let mut runs = [(0, 1); DIGITS];
        runs[0] = (1, local);
        runs[1] = (local, n / local);
        let digits = (0..n).map(|i| [i % local, i / local, 0]).collect();
        Action { n, blocks: n, run_n: 2, runs, xor: [false, xor_nodes, false], digits }
    }

    /// Whether the indices with place value `place` and `size` values
    /// form one of its runs, and if so whether that run moves by XOR.
    pub(super) fn run_xor(&self, place: u32, size: u32) -> Option<bool> {
        let r = self.runs[..self.run_n].iter().position(|&run| run == (place, size))?;
        Some(self.xor[r])
    }

    /// Run `r`'s place value and size, and whether it moves by XOR (a
    /// run past those in use is `(0, 1)`, adding nothing).
    pub(super) fn run(&self, r: usize) -> (u32, u32, bool) {
        let (place, size) = self.runs.get(r).copied().unwrap_or((0, 1));
        (place, size, self.xor.get(r).copied().unwrap_or(false))
    }

    /// `set` moved by `g`, when it is empty, one position, or whole runs
    /// ([`Action::whole_runs`]): again such a set. `None` for any other
    /// set (the sets `protocol`'s profiles count blocks of are these).
    pub(super) fn move_set(&self, set: BlockSet, g: u32) -> Option<BlockSet> {
        match set.count {
            0 => Some(set),
            1 => Some(BlockSet { start: self.add(set.start, g), ..set }),
            _ => {
                let runs = self.whole_runs(set)?;
                Some(BlockSet { start: self.clear(self.add(set.start, g), runs)?, ..set })
            }
        }
    }

    /// Whether it is the flat rotation.
    pub(crate) fn is_cyclic(&self) -> bool {
        self.digits.is_empty()
    }

    /// Index `v` moved by `g`. An index out of range stays where it is
    /// (the flat rotation takes it mod `n`).
    #[inline(always)]
    pub(crate) fn add(&self, v: u32, g: u32) -> u32 {
        self.by(g).add(v)
    }

    /// Block position `v` moved by `g`: an index below `n` as
    /// [`Action::add`] moves it; an all-to-all's output block `n + i`
    /// to `n + (i moved)`.
    #[inline(always)]
    pub(crate) fn add_block(&self, v: u32, g: u32) -> u32 {
        self.by(g).add_block(v)
    }

    /// Moving by `g`, with `g`'s digits looked up once.
    #[inline(always)]
    pub(super) fn by(&self, g: u32) -> Mover<'_> {
        Mover { action: self, g, digits: self.digits.get(g as usize).copied() }
    }

    /// The index that moves `g` back to 0: adding it undoes adding `g`.
    pub(crate) fn inverse(&self, g: u32) -> u32 {
        if g >= self.n {
            return 0;
        }
        let Some(d) = self.digits.get(g as usize) else { return (self.n - g) % self.n };
        (0..DIGITS)
            .map(|r| {
                let (place, size) = self.runs[r];
                place * if self.xor[r] { d[r] } else { (size - d[r]) % size }
            })
            .sum()
    }

    /// Index `v`'s digit in run `r`.
    #[inline(always)]
    pub(super) fn digit(&self, v: u32, r: usize) -> u32 {
        let (place, size) = self.runs[r];
        self.digits.get(v as usize).map_or_else(|| v.checked_div(place).map_or(0, |q| q % size), |d| d[r])
    }

    /// Whether `set` is every index whose digits in runs `first..last`
    /// vary, its other digits fixed (and those in `first..last` zero at its
    /// start): moved, it is the same kind of set again, from the moved start
    /// with those digits cleared. Returns `first..last`.
    pub(super) fn whole_runs(&self, set: BlockSet) -> Option<std::ops::Range<usize>> {
        let first = self.runs[..self.run_n].iter().position(|&(place, _)| place == set.stride)?;
        let mut count = 1u64;
        let mut last = first;
        while count < u64::from(set.count) && last < self.run_n {
            count *= u64::from(self.runs[last].1);
            last += 1;
        }
        let runs = first..last;
        (count == u64::from(set.count) && self.clear(set.start, runs.clone()) == Some(set.start)).then_some(runs)
    }

    /// Whether `set` is an aligned block of `count` (a power of two) values
    /// of one XOR run's digit, its other digits fixed: moved, it is again
    /// such a block, from the moved start with the digit's low bits
    /// cleared. Returns the run.
    fn xor_block(&self, set: BlockSet) -> Option<usize> {
        let r = self.runs[..self.run_n].iter().position(|&(place, _)| place == set.stride)?;
        let aligned = self.xor[r]
            && set.count.is_power_of_two()
            && set.count <= self.runs[r].1
            && set.start < self.n
            && self.digit(set.start, r).is_multiple_of(set.count);
        aligned.then_some(r)
    }

    /// Where an interval of `len` indices from `start` (in flat index
    /// order, cyclic) lands moved by `g`, when it lands as an interval:
    /// under two runs, whole blocks of the lower run, consecutive in the
    /// upper one (a ring across nodes gathers whole nodes; under XOR, an
    /// aligned power-of-two count of them); under one XOR run, an aligned
    /// power-of-two block.
    pub(crate) fn move_interval(&self, start: u32, len: u32, g: u32) -> Option<u32> {
        let (unit, top) = match self.run_n {
            1 => (1, 0),
            2 if self.runs[0].0 == 1 => (self.runs[0].1, 1),
            _ => return None,
        };
        if self.is_cyclic() || start >= self.n || !start.is_multiple_of(unit) || !len.is_multiple_of(unit) {
            return None;
        }
        let (a, c) = (start / unit, len / unit);
        let moved = self.digit(self.add(start, g), top);
        if self.xor[top] {
            (c.is_power_of_two() && a.is_multiple_of(c)).then(|| (moved & !(c - 1)) * unit)
        } else {
            (top == 1).then_some(moved * unit)
        }
    }

    /// `v` with its digits in `runs` set to 0.
    #[inline(always)]
    fn clear(&self, v: u32, runs: std::ops::Range<usize>) -> Option<u32> {
        if v >= self.n {
            return None;
        }
        let mut out = v;
        for r in runs {
            out -= self.digit(v, r) * self.runs[r].0;
        }
        Some(out)
    }
}

/// Whether `plan`'s blocks move with its members: one per member, or an
/// all-to-all's input and output copy of them, all of one size.
pub(crate) fn blocks_move(plan: &CollectivePlan) -> bool {
    let (n, block_n) = (plan.groups.size(), plan.layout().block_n());
    block_n == n || (plan.kind == OpKind::AllToAll && plan.counts.is_none() && block_n == 2 * n)
}

/// Moving indices by one `g`.
pub(super) struct Mover<'a> {
    action: &'a Action,
    g: u32,
    /// `g`'s digits (but under the flat ring).
    digits: Option<[u32; DIGITS]>,
}

impl Mover<'_> {
    /// Block position `v` moved (see [`Action::add_block`]).
    #[inline(always)]
    fn add_block(&self, v: u32) -> u32 {
        let (n, blocks) = (self.action.n, self.action.blocks);
        if v >= n && v < blocks { n + self.add(v - n) } else { self.add(v) }
    }

    #[inline(always)]
    fn add(&self, v: u32) -> u32 {
        let action = self.action;
        if action.digits.is_empty() {
            return shift(v, self.g, action.n);
        }
        let (Some(a), Some(b)) = (action.digits.get(v as usize), self.digits) else { return v };
        let mut out = 0;
        for r in 0..action.run_n.min(DIGITS) {
            let (place, size) = action.runs[r];
            let s = if action.xor[r] { a[r] ^ b[r] } else { a[r] + b[r] };
            out += place * if s >= size { s - size } else { s };
        }
        out
    }
}

/// `x` is `base` with its members and blocks moved by `g`. Blocks compare
/// as the positions they name, as a set (a block set is an ascending
/// progression, so two with as many positions are the same set exactly
/// when they name the same positions in order). `neigh` is not compared:
/// it names the link (within a node or across) for display, no proof reads
/// it, and a ring over several nodes crosses a node boundary at some
/// members and not at others.
#[inline(always)]
pub(crate) fn is_moved_by(x: &Transfer, base: &Transfer, g: u32, action: &Action) -> bool {
    is_moved_with(x, base, &action.by(g))
}

/// [`is_moved_by`], with the move's digits looked up once.
#[inline(always)]
pub(super) fn is_moved_with(x: &Transfer, base: &Transfer, by: &Mover<'_>) -> bool {
    x.halves == base.halves
        && x.fold == base.fold
        && x.from == by.add(base.from)
        && x.to == by.add(base.to)
        && blocks_moved(x.src, base.src, by)
        && ((x.dst.same_positions(x.src) && base.dst.same_positions(base.src)) || blocks_moved(x.dst, base.dst, by))
}

/// `v + g` (mod `n`), for `g < n`: a compare instead of a division, which
/// would cost more than the rest of the check.
#[inline(always)]
fn shift(v: u32, g: u32, n: u32) -> u32 {
    let (s, n) = (u64::from(v) + u64::from(g), u64::from(n));
    let s = if s >= n { s - n } else { s };
    // Only a member or block out of range gets here: divide.
    (if s >= n { s % n } else { s }) as u32
}

/// `x` names the positions of `base` moved (by `by`), as a set.
#[inline(always)]
pub(super) fn blocks_moved(x: BlockSet, base: BlockSet, by: &Mover<'_>) -> bool {
    // Out of range (or wrapping) is never a moved set: the full run
    // refuses it.
    if x.count != base.count || !x.below(by.action.blocks) {
        return false;
    }
    match moved_blocks(base, by) {
        Some(moved) => x.same_positions(moved),
        None => (0..x.count).all(|j| x.get(j) == by.add_block(base.get(j))),
    }
}

/// `base` moved (by `by`), when the moved positions are again a
/// progression (as a set): one position; under the flat ring, a
/// progression that does not wrap; whole runs (under the flat ring, every
/// position); an aligned XOR block.
#[inline(always)]
fn moved_blocks(base: BlockSet, by: &Mover<'_>) -> Option<BlockSet> {
    let action = by.action;
    match base.count {
        0 => return Some(base),
        1 => return Some(BlockSet { start: by.add_block(base.start), ..base }),
        // Output blocks move as their own copy: block by block.
        _ if action.blocks != action.n => return None,
        _ => {}
    }
    if action.is_cyclic() {
        let start = u64::from(base.start) + u64::from(by.g);
        let last = start + u64::from(base.count - 1) * u64::from(base.stride);
        if last < u64::from(action.n) {
            return Some(BlockSet { start: start as u32, ..base });
        }
    }
    if let Some(runs) = action.whole_runs(base) {
        return Some(BlockSet { start: action.clear(by.add(base.start), runs)?, ..base });
    }
    let r = action.xor_block(base)?;
    let moved = by.add(base.start);
    let low = action.digit(moved, r) & (base.count - 1);
    Some(BlockSet { start: moved - low * action.runs[r].0, ..base })
}

#[cfg(test)]
mod tests {
    use super::Action;
    use crate::build::build;
    use crate::testing::Case;

    /// Adding any `g` permutes `0..n`, and adding its inverse undoes it,
    /// on every pairing's action (what `protocol/exceptions.rs` relies on:
    /// the blocks a member moves onto a position are found from that
    /// position alone).
    #[test]
    fn adding_permutes_the_indices() {
        let mut actions = 0;
        for case in Case::pairings(&[2, 3, 5, 6, 8, 12]) {
            let Ok(schedule) = build(&case.valid()) else { continue };
            for plan in &schedule.collectives {
                let action = Action::of(plan);
                let n = plan.groups.size();
                for g in 0..n {
                    let mut hit = vec![false; n as usize];
                    for v in 0..n {
                        let w = action.add(v, g);
                        assert!(w < n && !hit[w as usize], "{case:?}: {v} + {g} = {w} twice or out of range");
                        hit[w as usize] = true;
                        assert_eq!(action.add(w, action.inverse(g)), v, "{case:?}: {v} + {g} - {g}");
                    }
                }
                actions += usize::from(!action.is_cyclic());
            }
        }
        // Not only the flat rotation: the digit-wise actions are held too.
        assert!(actions > 10, "{actions} digit-wise actions");
    }
}
