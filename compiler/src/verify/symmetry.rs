//! Symmetry: when every member of a group runs member 0's program moved
//! to its own index, member 0's run stands for every member's.
//!
//! Member and block indices of a group are mixed-radix numbers over its
//! digits (local, node, pod). An `Action` joins the digits into runs that
//! move independently, each as a ring (adding with carry, mod its size) or,
//! under recursive halving and doubling, by XOR. One ring over every digit
//! is the flat rotation `i -> i + g (mod n)`; the rings `[local]` and
//! `[node, pod]` turn each node's ring and the ring across nodes at once.
//! A collective's runs are cut where its phases' scopes start and end.
//!
//! A group is *symmetric* (invariant under its action) when, at every
//! step, member `m`'s transfers are member 0's, in the same order, with
//! every member index and every block moved by `m` under the action, and
//! nothing else changed (but the display-only `neigh` label). A ring is:
//! member `m` sends block `m - s` to `m + 1` at step `s`. `rotation`
//! checks it for every member at every step, on every core, from the
//! transfers themselves (not from what the algorithm is called), and keeps
//! member 0's; a compile checks it instead on the transfers lowering
//! generates ([`Bases`], [`Watch`]).
//!
//! Invariance is what lets [`super::postcondition`] execute member 0
//! alone: if the buffers start invariant (member `m`'s block `b` holds
//! member 0's block `b - m` with every contributor moved by `m`), every
//! step keeps them so, since every member reads and writes the same cells
//! relative to itself. Checking invariance costs a comparison per transfer
//! of the world; the symbolic execution it saves costs a buffer of `n` x `n`
//! cells and a fold per block moved in the world.

use super::postcondition::{AsBuilt, Site, TransferSource};
use crate::schedule::{BlockSet, CollectivePlan, DIGITS, PhaseKind, Schedule, Transfer};
use crate::step_graph::NodeView;
use ccc_ir::id::Rank;
use rayon::prelude::*;

/// How indices of a group move: the group's digits joined into runs that
/// move independently, each as a ring (adding with carry among its digits,
/// mod its size) or, under recursive halving and doubling, as bits (XOR,
/// for a run of a power-of-two size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Action {
    n: u32,
    /// Runs in use.
    run_n: usize,
    /// Per run: place value and size (their product over runs is `n`);
    /// runs past `run_n` are `(0, 1)`, adding nothing.
    runs: [(u32, u32); DIGITS],
    /// Per run: moves by XOR rather than as a ring.
    xor: [bool; DIGITS],
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
        Action { n, run_n: found.len(), runs, xor, digits }
    }

    /// The flat rotation of `n` indices.
    pub(crate) fn cyclic(n: u32) -> Action {
        let mut runs = [(0, 1); DIGITS];
        runs[0] = (1, n);
        Action { n, run_n: 1, runs, xor: [false; DIGITS], digits: Vec::new() }
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
        Action { n, run_n: 2, runs, xor: [false, xor_nodes, false], digits }
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

    /// Moving by `g`, with `g`'s digits looked up once.
    #[inline(always)]
    fn by(&self, g: u32) -> Mover<'_> {
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
    fn digit(&self, v: u32, r: usize) -> u32 {
        let (place, size) = self.runs[r];
        self.digits.get(v as usize).map_or_else(|| v.checked_div(place).map_or(0, |q| q % size), |d| d[r])
    }

    /// Whether `set` is every index whose digits in runs `first..last`
    /// vary, its other digits fixed (and those in `first..last` zero at its
    /// start): moved, it is the same kind of set again, from the moved start
    /// with those digits cleared. Returns `first..last`.
    fn whole_runs(&self, set: BlockSet) -> Option<std::ops::Range<usize>> {
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

/// Moving indices by one `g`.
struct Mover<'a> {
    action: &'a Action,
    g: u32,
    /// `g`'s digits (but under the flat ring).
    digits: Option<[u32; DIGITS]>,
}

impl Mover<'_> {
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

/// The symmetric groups of every collective of a schedule, found
/// once and shared by both provers.
#[derive(Debug, PartialEq, Eq)]
pub struct Symmetry {
    /// `[collective][group]`.
    rotations: Vec<Vec<Option<Rotation>>>,
}

impl Symmetry {
    /// Finds the symmetric groups of the schedule as built.
    pub fn find(schedule: &Schedule) -> Symmetry {
        Symmetry::find_with(schedule, &AsBuilt)
    }

    /// Finds them from `source`'s transfers.
    pub(crate) fn find_with<S: TransferSource + ?Sized>(schedule: &Schedule, source: &S) -> Symmetry {
        let rotations = schedule
            .collectives
            .iter()
            .map(|plan| (0..plan.groups.group_n()).map(|g| rotation(schedule, plan, g, source)).collect())
            .collect();
        Symmetry { rotations }
    }

    /// No group taken as invariant: every proof runs in full.
    pub fn none() -> Symmetry {
        Symmetry { rotations: Vec::new() }
    }

    /// Member 0's transfers of `group` of `collective`, if it is invariant.
    pub(crate) fn rotation(&self, collective: u32, group: u32) -> Option<&Rotation> {
        self.rotations.get(collective as usize)?.get(group as usize)?.as_ref()
    }

    /// How many groups, over every collective, are symmetric.
    pub fn symmetric_groups(&self) -> u64 {
        self.rotations.iter().flatten().filter(|r| r.is_some()).count() as u64
    }
}

/// Member 0's transfers of every group that can be symmetric (two
/// members or more, one block per member), listed before any rank is
/// lowered: what each rank's [`Watch`] compares its step graph with while
/// lowering walks it. A compile that lowers every rank anyway finds the
/// invariant groups this way for the cost of the comparisons alone; the
/// result is the one [`Symmetry::find`] gives.
#[derive(Debug)]
pub struct Bases {
    /// `[collective][group]`.
    rotations: Vec<Vec<Option<Rotation>>>,
}

/// A watch's count for a collective once a step was not the base rotated.
const BROKEN: u32 = u32::MAX;

impl Bases {
    /// Member 0's transfers of every candidate group of the schedule as built.
    pub fn new(schedule: &Schedule) -> Bases {
        let rotations = schedule
            .collectives
            .iter()
            .map(|plan| (0..plan.groups.group_n()).map(|g| base(schedule, plan, g, &AsBuilt)).collect())
            .collect();
        Bases { rotations }
    }

    /// A watch for rank `rank`'s lowering.
    pub fn watch(&self, rank: Rank) -> Watch<'_> {
        Watch { bases: self, seen: Seen { rank, steps: vec![0; self.rotations.len()] } }
    }

    /// The invariant groups: every member of the group was watched, and at
    /// every step of the collective its transfers were member 0's rotated.
    /// A rank missing from `seen` leaves its groups not invariant.
    pub fn symmetry(self, schedule: &Schedule, seen: &[Seen]) -> Symmetry {
        let mut by_rank: Vec<Option<&Seen>> = vec![None; schedule.shape.rank_n as usize];
        for s in seen {
            if let Some(slot) = by_rank.get_mut(s.rank.0 as usize) {
                *slot = Some(s);
            }
        }
        let rotations = self
            .rotations
            .into_iter()
            .zip(&schedule.collectives)
            .map(|(groups, plan)| {
                let c = plan.index as usize;
                let whole = |g: u32| {
                    (0..plan.groups.size()).all(|m| {
                        let seen = by_rank.get(plan.rank(g, m).0 as usize).copied().flatten();
                        seen.and_then(|s| s.steps.get(c)).is_some_and(|&steps| steps == plan.step_n)
                    })
                };
                groups.into_iter().enumerate().map(|(g, rot)| rot.filter(|_| whole(g as u32))).collect()
            })
            .collect();
        Symmetry { rotations }
    }
}

/// One rank's watch: per collective, how many steps in a row its
/// transfers were its group's base rotated by its index.
pub struct Watch<'a> {
    bases: &'a Bases,
    seen: Seen,
}

/// What a [`Watch`] saw of one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    rank: Rank,
    /// Per collective: steps seen rotated, in order from step 0; [`BROKEN`]
    /// once one was not.
    steps: Vec<u32>,
}

impl Watch<'_> {
    /// One node of the rank's step graph, as lowering walks it.
    #[inline]
    pub fn see(&mut self, plan: &CollectivePlan, node: &NodeView<'_>) {
        let Some(steps) = self.seen.steps.get_mut(plan.index as usize) else { return };
        // Steps come in order from 0; once broken, never equal again.
        if *steps != node.step {
            *steps = BROKEN;
            return;
        }
        let base = self.bases.rotations.get(plan.index as usize).and_then(|g| g.get(node.group as usize));
        let rotated = base.and_then(Option::as_ref).is_some_and(|base| {
            let (first, end) = base.span(node.step);
            end - first == node.transfers.len() && {
                let by = base.action.by(node.member);
                node.transfers.iter().zip(&base.transfers[first..end]).all(|(x, b)| is_moved(x, b, &by))
            }
        });
        *steps = if rotated { *steps + 1 } else { BROKEN };
    }

    /// What it saw.
    pub fn finish(self) -> Seen {
        self.seen
    }
}

/// Member 0's transfers of a symmetric group, step by step.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Rotation {
    /// How the group's indices move.
    pub(crate) action: Action,
    transfers: Vec<Transfer>,
    /// Step `s`'s transfers are `transfers[at[s]..at[s + 1]]`.
    at: Vec<usize>,
}

impl Rotation {
    /// Member 0's transfers, of every step in order.
    pub(crate) fn transfers(&self) -> &[Transfer] {
        &self.transfers
    }

    /// Where member 0's transfers of step `s` start and end among all of
    /// them (an empty span past the last step).
    #[inline(always)]
    pub(crate) fn span(&self, s: u32) -> (usize, usize) {
        let s = s as usize;
        match (self.at.get(s), self.at.get(s + 1)) {
            (Some(&a), Some(&b)) => (a, b),
            _ => (0, 0),
        }
    }

    /// Member 0's transfers at step `s` of the collective.
    pub(crate) fn step(&self, s: u32) -> &[Transfer] {
        let (a, b) = self.span(s);
        &self.transfers[a..b]
    }
}

/// Member 0's transfers, if every member of `group` lists, at every step,
/// exactly member 0's rotated by its index; `None` at the first member and
/// step that does not (or for a group of fewer than two members, or whose
/// blocks are not one per member, where rotation means nothing).
pub(crate) fn rotation<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    source: &S,
) -> Option<Rotation> {
    let n = plan.groups.size();
    let base = base(schedule, plan, group, source)?;
    let same = (1..n).into_par_iter().with_min_len(8).all(|m| {
        let mut step = 0u32;
        walk(schedule, plan, group, m, source, |_, list| {
            let want = base.step(step);
            step += 1;
            list.len() == want.len() && list.iter().zip(want).all(|(x, b)| is_rotated(x, b, m, &base.action))
        })
    });
    same.then_some(base)
}

/// Members a [`sampled`] check compares with member 0.
const SAMPLES: u32 = 16;

/// Member 0's transfers, if a sample of the group's members (the second,
/// the last and [`SAMPLES`] spread between) each list, at every step,
/// exactly member 0's moved to them: a necessary condition of
/// [`rotation`] at the cost of a few members' walks. `None` proves the
/// group is not symmetric; `Some` only says the sample did not show it.
pub(crate) fn sampled(schedule: &Schedule, plan: &CollectivePlan, group: u32) -> Option<Rotation> {
    let n = plan.groups.size();
    let base = base(schedule, plan, group, &AsBuilt)?;
    let mut members: Vec<u32> =
        (0..SAMPLES).map(|i| 1 + (u64::from(n - 1) * u64::from(i) / u64::from(SAMPLES)) as u32).collect();
    members.push(n - 1);
    members.sort_unstable();
    members.dedup();
    let same = members.iter().all(|&m| {
        let mut step = 0u32;
        walk(schedule, plan, group, m, &AsBuilt, |_, list| {
            let want = base.step(step);
            step += 1;
            list.len() == want.len() && list.iter().zip(want).all(|(x, b)| is_rotated(x, b, m, &base.action))
        })
    });
    same.then_some(base)
}

/// Member 0's transfers, step by step, for a group that can be invariant:
/// two members or more, one block per member (elsewhere rotation means
/// nothing).
pub(crate) fn base<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    source: &S,
) -> Option<Rotation> {
    let n = plan.groups.size();
    if n < 2 || plan.layout().block_n() != n {
        return None;
    }
    let mut base = Rotation { action: Action::of(plan), transfers: Vec::new(), at: vec![0] };
    // The phases must run steps 0..step_n, once each, in order: what both
    // the full run and the orbit run execute.
    let ordered = walk(schedule, plan, group, 0, source, |step, list| {
        if step as usize + 1 != base.at.len() {
            return false;
        }
        base.transfers.extend_from_slice(list);
        base.at.push(base.transfers.len());
        true
    });
    (ordered && base.at.len() == plan.step_n as usize + 1).then_some(base)
}

/// Lists member `m`'s transfers step by step into `visit`; stops (and
/// returns `false`) when `visit` does.
pub(crate) fn walk<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    m: u32,
    source: &S,
    mut visit: impl FnMut(u32, &[Transfer]) -> bool,
) -> bool {
    let mut list = Vec::new();
    for phase in &plan.phases {
        let inst = plan.instance(phase, m);
        for t in 0..phase.step_n {
            list.clear();
            let site = Site { group, index: m, phase, inst, step: phase.first_step + t, t };
            source.transfers(schedule, plan, &site, &mut list);
            if !visit(site.step, &list) {
                return false;
            }
        }
    }
    true
}

/// `x` is `base` with its members and blocks moved by `g`. Blocks compare
/// as the positions they name, as a set (a block set is an ascending
/// progression, so two with as many positions are the same set exactly
/// when they name the same positions in order). `neigh` is not compared:
/// it names the link (within a node or across) for display, no proof reads
/// it, and a ring over several nodes crosses a node boundary at some
/// members and not at others.
#[inline(always)]
pub(crate) fn is_rotated(x: &Transfer, base: &Transfer, g: u32, action: &Action) -> bool {
    is_moved(x, base, &action.by(g))
}

/// [`is_rotated`], with the move's digits looked up once.
#[inline(always)]
fn is_moved(x: &Transfer, base: &Transfer, by: &Mover<'_>) -> bool {
    x.halves == base.halves
        && x.fold == base.fold
        && x.from == by.add(base.from)
        && x.to == by.add(base.to)
        && blocks_rotated(x.src, base.src, by)
        && ((x.dst.same_positions(x.src) && base.dst.same_positions(base.src)) || blocks_rotated(x.dst, base.dst, by))
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
fn blocks_rotated(x: BlockSet, base: BlockSet, by: &Mover<'_>) -> bool {
    // Out of range (or wrapping) is never a moved set: the full run
    // refuses it.
    if x.count != base.count || !x.below(by.action.n) {
        return false;
    }
    match moved_blocks(base, by) {
        Some(moved) => x.same_positions(moved),
        None => (0..x.count).all(|j| x.get(j) == by.add(base.get(j))),
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
        1 => return Some(BlockSet { start: by.add(base.start), ..base }),
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
    use super::*;
    use crate::build::build;
    use crate::testing::Case;
    use crate::verify::postcondition::AsBuilt;
    use ccc_ir::enums::{AlgType, OpType};

    fn rotation_of(case: &Case) -> Option<Rotation> {
        let schedule = build(&case.valid()).unwrap();
        rotation(&schedule, &schedule.collectives[0], 0, &AsBuilt)
    }

    #[test]
    fn a_flat_ring_is_rotation_invariant() {
        for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter] {
            let rot = rotation_of(&Case::flat(op, AlgType::Ring, 6, 2)).unwrap_or_else(|| panic!("{op:?}"));
            // Member 0 sends one block to member 1 and receives one from member 5.
            let first = rot.step(0);
            assert_eq!(first.len(), 2, "{op:?}: {first:?}");
            assert!(first.iter().any(|t| t.from == 0 && t.to == 1), "{op:?}: {first:?}");
            assert!(first.iter().any(|t| t.from == 5 && t.to == 0), "{op:?}: {first:?}");
        }
    }

    /// A ring all-reduce inside 3 nodes of 4, across them, and inside again.
    fn two_level_ring() -> Case {
        use ccc_ir::spec::Leg::{InterAllReduce, IntraAllGather, IntraReduceScatter};
        let legs = [IntraReduceScatter, InterAllReduce, IntraAllGather].map(|leg| (leg, AlgType::Ring));
        Case::hier(OpType::AllReduce, &legs, 12, 4)
    }

    /// Within a node, member 3's successor is member 0 of its node, not
    /// member 4: a two-level ring is not invariant under the flat rotation,
    /// but it is under the runs [local] and [node, pod], which its scopes
    /// cut.
    #[test]
    fn a_two_level_ring_turns_node_and_cross_rings_at_once() {
        let case = two_level_ring();
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        let rot = rotation_of(&case).expect("invariant under its runs");
        assert_eq!(rot.action, Action::of(plan));
        assert!(!rot.action.is_cyclic());
        // Member 5 = local 1 of node 1; moved by member 7 = local 3, node 1:
        // local 0, node 2 = member 8.
        assert_eq!(rot.action.add(5, 7), 8);
        assert_eq!(rot.action.add(rot.action.add(5, 7), rot.action.inverse(7)), 5);
        let mut flat = rot;
        flat.action = Action::cyclic(12);
        let walk_one = |m: u32| {
            let mut out = Vec::new();
            walk(&schedule, plan, 0, m, &AsBuilt, |_, list| {
                out.extend_from_slice(list);
                true
            });
            out
        };
        let (zero, three) = (walk_one(0), walk_one(3));
        assert!(!three.iter().zip(&zero).all(|(x, b)| is_rotated(x, b, 3, &flat.action)));
    }

    /// Under a two-level action, every transfer of every member is member
    /// 0's moved, and none is once its receiver, first block or halves
    /// change.
    #[test]
    fn two_level_moves_are_exact() {
        let case = two_level_ring();
        let schedule = build(&case.valid()).unwrap();
        let plan = &schedule.collectives[0];
        let rot = rotation_of(&case).unwrap();
        assert!(!rot.action.is_cyclic());
        let (mut accepted, mut refused) = (0, 0);
        for m in 0..12 {
            let mut k = 0;
            walk(&schedule, plan, 0, m, &AsBuilt, |_, list| {
                for x in list {
                    let base = &rot.transfers[k];
                    let other = |mut t: Transfer, edit: &dyn Fn(&mut Transfer)| {
                        edit(&mut t);
                        t
                    };
                    let variants = [
                        *x,
                        other(*x, &|t| t.to = (t.to + 1) % 12),
                        other(*x, &|t| t.src.start = (t.src.start + 1) % 12),
                        other(*x, &|t| t.halves = crate::schedule::Halves::Only(ccc_ir::enums::HalfChunk::H1)),
                    ];
                    for (i, v) in variants.iter().enumerate() {
                        let moved = is_rotated(v, base, m, &rot.action);
                        assert_eq!(moved, i == 0 || v == x, "member {m}, transfer {k}, variant {i}");
                        if moved { accepted += 1 } else { refused += 1 }
                    }
                    k += 1;
                }
                true
            });
        }
        assert!(accepted > 0 && refused > 0);
    }

    /// Recursive halving and doubling over a power of two pairs members
    /// by their bits: invariant under XOR, and its aligned block ranges
    /// and contribution intervals move as such; with a prologue (not a
    /// power of two) it is not invariant at all.
    #[test]
    fn recursive_halving_moves_by_xor() {
        let case = Case::for_alg(OpType::AllReduce, AlgType::InterRdh, 8).unwrap();
        let rot = rotation_of(&case).expect("invariant under XOR");
        assert_eq!((rot.action.run_n, rot.action.xor[0]), (1, true));
        assert_eq!(rot.action.add(5, 3), 6);
        assert_eq!(rot.action.inverse(5), 5);
        // Blocks 4..8 moved by 6: 2..4 and 0..2 swapped, as a set 0..4.
        let upper = BlockSet { start: 4, stride: 1, count: 4 };
        assert!(blocks_rotated(BlockSet { start: 0, stride: 1, count: 4 }, upper, &rot.action.by(6)));
        assert!(!blocks_rotated(BlockSet { start: 2, stride: 1, count: 4 }, upper, &rot.action.by(6)));
        let mut sets = crate::verify::sets::Sets::new(8);
        let pair = sets.union(sets.single(2), sets.single(3)).unwrap();
        let moved = sets.translate(pair, 5, &rot.action);
        assert_eq!(sets.members(moved), vec![6, 7]);
        assert!(rotation_of(&Case::for_alg(OpType::AllReduce, AlgType::InterRdh, 6).unwrap()).is_none());
    }

    /// Every position, moved by the flat ring, is every position again: a
    /// mesh that sends its whole buffer to every peer is symmetric.
    #[test]
    fn the_whole_buffer_moves_to_itself() {
        let ring = Action::cyclic(8);
        let all = BlockSet::all(8);
        assert!(blocks_rotated(all, all, &ring.by(3)));
        assert!(!blocks_rotated(BlockSet { start: 1, stride: 1, count: 7 }, BlockSet::all(7), &ring.by(3)));
        let case = Case::for_alg(OpType::AllReduce, AlgType::SingleStepMesh, 6).unwrap();
        assert!(rotation_of(&case).is_some());
    }

    #[test]
    fn whole_runs_move_as_sets() {
        // 4 locals x 3 nodes; the set {1, 5, 9} is local 1 of every node.
        let case = two_level_ring();
        let schedule = build(&case.valid()).unwrap();
        let action = Action::of(&schedule.collectives[0]);
        let set = BlockSet { start: 1, stride: 4, count: 3 };
        assert_eq!(action.whole_runs(set), Some(1..2));
        // Moved by member 6 (local 2, node 1): local 3 of every node.
        assert!(blocks_rotated(BlockSet { start: 3, stride: 4, count: 3 }, set, &action.by(6)));
        assert!(!blocks_rotated(BlockSet { start: 2, stride: 4, count: 3 }, set, &action.by(6)));
        // Not a whole run: positions compare one by one.
        let part = BlockSet { start: 1, stride: 4, count: 2 };
        assert_eq!(action.whole_runs(part), None);
        assert!(blocks_rotated(BlockSet { start: 7, stride: 4, count: 2 }, part, &action.by(6)));
    }

    /// What lowering's watches see gives the groups a walk of every
    /// member finds, on every flat pairing, every Hier composition and
    /// replica groups; a rank not watched leaves its group out.
    #[test]
    fn watching_the_lowering_finds_what_a_walk_finds() {
        let mut cases: Vec<Case> = Vec::new();
        for &alg in AlgType::ALL {
            if alg == AlgType::Hier {
                continue;
            }
            for &op in crate::algorithms::flat_ops(alg) {
                cases.extend([2u32, 5, 8].into_iter().filter_map(|n| Case::for_alg(op, alg, n)));
            }
        }
        cases.extend(Case::hier_choices().into_iter().map(|(op, choice)| Case::hier(op, &choice, 12, 4)));
        let mut grouped = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
        grouped.groups = Some(vec![vec![0, 2, 4, 6], vec![7, 5, 3, 1]]);
        cases.push(grouped);
        let mut invariant = 0;
        for case in &cases {
            let schedule = build(&case.valid()).unwrap();
            let bases = Bases::new(&schedule);
            let seen: Vec<Seen> = (0..schedule.shape.rank_n)
                .map(|r| {
                    let mut watch = bases.watch(Rank(r));
                    crate::lower::lower_watched(&schedule, Rank(r), &mut |plan, node| watch.see(plan, node)).unwrap();
                    watch.finish()
                })
                .collect();
            let walked = Symmetry::find(&schedule);
            invariant += walked.symmetric_groups();
            let missing = Bases::new(&schedule).symmetry(&schedule, &seen[1..]);
            assert_eq!(bases.symmetry(&schedule, &seen), walked, "{:?} {:?}", case.op, case.alg);
            for plan in &schedule.collectives {
                let (home, _) = plan.groups.locate(Rank(0));
                for g in 0..plan.groups.group_n() {
                    let want = g != home && walked.rotation(plan.index, g).is_some();
                    assert_eq!(
                        missing.rotation(plan.index, g).is_some(),
                        want,
                        "{:?} {:?} group {g}",
                        case.op,
                        case.alg
                    );
                }
            }
        }
        assert!(invariant > 10, "{invariant}");
    }

    /// Member 0's walk must run steps 0..step_n once each: a plan whose
    /// phases run one step more than it says is not taken as symmetric (a
    /// reviewer's counterexample; the full run executes every phase step).
    #[test]
    fn a_walk_past_the_collective_steps_is_not_symmetric() {
        let case = Case::for_alg(OpType::AllReduce, AlgType::SingleStepMesh, 4).unwrap();
        let mut schedule = build(&case.valid()).unwrap();
        assert!(rotation(&schedule, &schedule.collectives[0], 0, &AsBuilt).is_some());
        schedule.collectives[0].phases[0].step_n += 1;
        assert!(rotation(&schedule, &schedule.collectives[0], 0, &AsBuilt).is_none());
        assert_eq!(Symmetry::find(&schedule).symmetric_groups(), 0);
    }

    #[test]
    fn shifts_wrap_members_and_blocks() {
        let base = Transfer {
            from: 3,
            to: 0,
            src: BlockSet::one(2),
            dst: BlockSet::one(2),
            halves: crate::schedule::Halves::Both,
            fold: None,
            neigh: ccc_ir::enums::Neigh::Local,
        };
        let four = Action::cyclic(4);
        let x = Transfer { from: 1, to: 2, src: BlockSet::one(0), dst: BlockSet::one(0), ..base };
        assert!(is_rotated(&x, &base, 2, &four));
        assert!(!is_rotated(&x, &base, 1, &four));
        let moved = Transfer { dst: BlockSet::one(1), ..x };
        assert!(!is_rotated(&moved, &base, 2, &four));
        // A one-block set's stride names nothing.
        let strided = Transfer { src: BlockSet { start: 0, stride: 4, count: 1 }, ..x };
        assert!(is_rotated(&strided, &base, 2, &four));
    }
}
