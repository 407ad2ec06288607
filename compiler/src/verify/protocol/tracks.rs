//! A symmetric group's folded counts with blocks of two sizes, member by
//! member, in pieces of steps that post the same: the cost of a member is
//! that of its records, not of the blocks of the rarer size
//! (`exceptions.rs` lists those per member, which under a flat ring whose
//! big blocks are about half of them is about `n` steps a member, and
//! `n²` over the group; and it cannot list a transfer that moves several
//! blocks, as a hierarchical ring's inner legs do, one per node).
//!
//! Member `m` moves member 0's block set (one block, or whole runs of the
//! group's [`Action`]) to the set the action moves it to
//! ([`Action::move_set`]). Cut each phase into *runs*: steps in a row at
//! which member 0 lists as many transfers, each with the same costs on
//! every TOP_SP as the previous step's transfer in the same place, with a
//! set of the same shape where that one had one (or none), and each set's
//! start the previous one's but for one digit of one ring run `r` of the
//! action, one up or one down (mod the run's size), fixed for that place
//! along the run ([`Drift`]), or the same start. A ring's pieces move on
//! by one every step (`lower/runs.rs` lists them in closed form), in the
//! flat ring's one run or, under a hierarchy, in the local run (a node's
//! ring) or the node run (the ring across nodes), so its phases are a few
//! runs each; an orbit that moves otherwise (by XOR, or by strides) is
//! cut into many, and then the group keeps to its exceptions where it has
//! them ([`Tracks::cheaper_than`]).
//!
//! Along a run, a place's moved set starts at a digit `x(s) = x(first) +
//! d (s - first)` (mod the run's size `k`) in run `r`, its other digits
//! fixed: moving a ring run's digit adds member `m`'s digit mod `k`, so
//! the member's set drifts as member 0's does. How many of its blocks are
//! big, `f(x)`, is what its costs depend on; each of its positions grows
//! with `x` (by `x` times the run's place value, no carry), so each is big
//! below some `x` and `f` falls as `x` grows, at a few points (a set of
//! one block: one; a set spanning the runs above `r`: one, the node where
//! the big blocks end). Those points, found by bisection ([`turns`]), and
//! the wrap from `k - 1` to `0`, are where the set's costs may change:
//! cutting the run at the steps where `x(s)` reaches one ([`edges`]) cuts
//! it into *pieces* in which every transfer keeps its costs, so every
//! step of a piece posts what its first does: `Profile::counts` at that
//! step, pushed once for the piece's length (`Folder::push_n` folds `k`
//! equal steps as `k` pushes do). That is exactly the step-by-step fold
//! (`Profile::fold_steps`), which the tests compare it with on every
//! member of the flat rings whose blocks differ in cost, of every
//! pairing, and of every hierarchical composition.

use super::exceptions::{Costs, Folded};
use crate::schedule::{BlockSet, CollectivePlan};
use crate::verify::action::Action;
use crate::verify::symmetry::Orbit;
use ccc_ir::wire::tp::Folder;

/// How a place's set moves from one step of a run to the next: its start
/// the same, or one up or down (mod the run's size) in the digit of the
/// action's ring run it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Drift {
    /// The same set.
    Still,
    /// The next digit up in run `.0`.
    Up(usize),
    /// The next digit down in run `.0`.
    Down(usize),
}

/// Per place of a run (a transfer's index among its step's), its source
/// and destination set's drift; `None` for an empty set.
type Place = [Option<Drift>; 2];

/// Steps in a row whose transfers move as one (see the module overview).
#[derive(Debug)]
struct Run {
    first: u32,
    len: u32,
    /// Its places are `places[at..at + width]`.
    at: usize,
    width: usize,
}

/// What every member's fold shares: each phase's runs.
#[derive(Debug)]
pub(super) struct Tracks {
    /// Per phase, its runs, covering its steps in order.
    phases: Vec<Vec<Run>>,
    places: Vec<Place>,
}

/// The drift from a set starting at `prev` to one starting at `next`,
/// both below the group's size, if one: every digit the same but one of a
/// ring run, one up or one down mod its size (of a run of two, up).
fn drift(action: &Action, prev: u32, next: u32) -> Option<Drift> {
    if prev == next {
        return Some(Drift::Still);
    }
    let mut found = None;
    for r in 0..action.run_n {
        let (a, b) = (action.digit(prev, r), action.digit(next, r));
        if a == b {
            continue;
        }
        let (_, size, xor) = action.run(r);
        if found.is_some() || xor {
            return None;
        }
        found = Some(if b == (a + 1) % size {
            Drift::Up(r)
        } else if (b + 1) % size == a {
            Drift::Down(r)
        } else {
            return None;
        });
    }
    found
}

/// Whether a place's set continues from `x` to `y` as one of a run: both
/// empty, or both of the same shape, each start below `n`.
fn same_shape(x: BlockSet, y: BlockSet, n: u32) -> bool {
    x.count == y.count && (x.count <= 1 || x.stride == y.stride) && (y.count == 0 || y.start < n)
}

/// A block set's drift placeholder at a run's first step: empty or not.
fn fresh(set: BlockSet) -> Option<Drift> {
    (set.count > 0).then_some(Drift::Still)
}

impl Tracks {
    /// The runs of a group of `n` members whose member 0 moves as `orbit`,
    /// its transfers costing `costs` on `used` TOP_SPs (see
    /// `Counts::ByBlock`); `None` when a block of member 0 lies outside
    /// `0..n`.
    pub(super) fn new(plan: &CollectivePlan, orbit: &Orbit, costs: &Costs, used: usize) -> Option<Tracks> {
        let n = plan.groups.size();
        if n == 0 {
            return None;
        }
        let mut tracks = Tracks { phases: Vec::with_capacity(plan.phases.len()), places: Vec::new() };
        for phase in &plan.phases {
            let mut runs: Vec<Run> = Vec::new();
            for s in phase.first_step..phase.first_step.checked_add(phase.step_n)? {
                if let Some(run) = runs.last_mut()
                    && tracks.extend(run, orbit, costs, used, n, s)
                {
                    continue;
                }
                let step = orbit.step(s);
                if step.iter().flat_map(|tr| [tr.src, tr.dst]).any(|b| b.count > 0 && b.start >= n) {
                    return None;
                }
                let at = tracks.places.len();
                tracks.places.extend(step.iter().map(|tr| [fresh(tr.src), fresh(tr.dst)]));
                runs.push(Run { first: s, len: 1, at, width: step.len() });
            }
            tracks.phases.push(runs);
        }
        Some(tracks)
    }

    /// Whether step `s` continues `run` (whose last step is `s - 1`): as
    /// many transfers, each with the costs and a set of the shape the
    /// previous step's had, drifting as the run's do (the drifts of a run
    /// of one step are set here). Extends it if so.
    fn extend(&mut self, run: &mut Run, orbit: &Orbit, costs: &Costs, used: usize, n: u32, s: u32) -> bool {
        let (Some(prev_step), true) = (s.checked_sub(1), run.first + run.len == s) else { return false };
        let (prev, next) = (orbit.span(prev_step), orbit.span(s));
        let (prev_tr, next_tr) = (orbit.step(prev_step), orbit.step(s));
        if next_tr.len() != run.width || prev_tr.len() != run.width {
            return false;
        }
        let Some(places) = self.places.get_mut(run.at..run.at + run.width) else { return false };
        let rows = |k: usize| costs.get(k * used..(k + 1) * used);
        let set = run.len == 1;
        // Check every place first, then (on a run's second step) set the drifts.
        for write in [false, true].into_iter().take(1 + usize::from(set)) {
            for (j, ((a, b), place)) in prev_tr.iter().zip(next_tr).zip(places.iter_mut()).enumerate() {
                let same_costs = rows(prev.0 + j).is_some_and(|r| Some(r) == rows(next.0 + j));
                if !same_costs {
                    return false;
                }
                for (side, (x, y)) in place.iter_mut().zip([(a.src, b.src), (a.dst, b.dst)]) {
                    if !same_shape(x, y, n) {
                        return false;
                    }
                    if x.count == 0 {
                        continue;
                    }
                    let Some(d) = drift(&orbit.action, x.start, y.start) else { return false };
                    if write {
                        *side = Some(d);
                    } else if !set && *side != Some(d) {
                        return false;
                    }
                }
            }
        }
        run.len += 1;
        true
    }

    /// Whether member folds from these runs cost less than from
    /// exceptions that list about `listed` steps a member (see
    /// `Exceptions::new`): [`Tracks::pieces`] against a step per
    /// exception.
    pub(super) fn cheaper_than(&self, listed: u64) -> bool {
        self.pieces() <= listed
    }

    /// About how many pieces a member's fold takes: one per run and one
    /// per edge a moving set crosses (at least once, when its size turns).
    pub(super) fn pieces(&self) -> u64 {
        let runs = self.phases.iter().map(|r| r.len() as u64).sum::<u64>();
        let moving = self.places.iter().flatten().filter(|d| matches!(d, Some(Drift::Up(_) | Drift::Down(_)))).count();
        runs + moving as u64
    }

    /// Member `member`'s counts folded per TOP_SP and phase (`used`
    /// TOP_SPs), with blocks below `big_below` big: each piece's counts
    /// from `counted(step, out)` (`Profile::counts`) at its first step,
    /// pushed for its length. `None` when a count does not fit a fold, or
    /// `member` is not one of the group's `n` (then the member's
    /// exceptions decide, as before).
    pub(super) fn fold(
        &self,
        orbit: &Orbit,
        member: u32,
        n: u32,
        big_below: u32,
        used: usize,
        mut counted: impl FnMut(u32, &mut Vec<(u64, u64)>),
    ) -> Option<Folded> {
        if member >= n {
            return None;
        }
        let action = &orbit.action;
        let mut out: Folded = vec![Vec::with_capacity(self.phases.len()); used];
        let (mut counts, mut cuts, mut points) = (Vec::new(), Vec::new(), Vec::new());
        for runs in &self.phases {
            let mut folders: Vec<Folder> = (0..used).map(|_| Folder::new()).collect();
            for run in runs {
                cuts.clear();
                cuts.push(0);
                let places = self.places.get(run.at..run.at + run.width)?;
                for (tr, place) in orbit.step(run.first).iter().zip(places) {
                    for (side, set) in place.iter().zip([tr.src, tr.dst]) {
                        let (up, r) = match side {
                            Some(Drift::Up(r)) => (true, *r),
                            Some(Drift::Down(r)) => (false, *r),
                            Some(Drift::Still) | None => continue,
                        };
                        let moved = action.move_set(set, member)?;
                        let (place, size, _) = action.run(r);
                        let x = action.digit(moved.start, r);
                        let base = moved.start - x * place;
                        let big = |x: u32| BlockSet { start: base + x * place, ..moved }.count_below(big_below);
                        points.clear();
                        let wraps = turns(big, size, &mut points);
                        edges(up, x, size, &points, wraps, run.len, &mut cuts);
                    }
                }
                cuts.sort_unstable();
                cuts.dedup();
                for (i, &cut) in cuts.iter().enumerate() {
                    let end = cuts.get(i + 1).copied().unwrap_or(run.len);
                    counted(run.first + cut, &mut counts);
                    for (folder, &(m2s, s2m)) in folders.iter_mut().zip(&counts) {
                        folder.push_n(u32::try_from(m2s).ok()?, u32::try_from(s2m).ok()?, u64::from(end - cut));
                    }
                }
            }
            for (o, f) in out.iter_mut().zip(folders) {
                o.push(f.finish());
            }
        }
        Some(out)
    }
}

/// The points `x` in `1..size` at which `f`, non-increasing on
/// `0..size`, changes (`f(x) != f(x - 1)`), ascending, into `out`, found
/// by bisection (a few evaluations per point); returns whether `f`
/// changes at all, so that wrapping from `size - 1` to `0` changes it
/// too.
pub(super) fn turns(f: impl Fn(u32) -> u32, size: u32, out: &mut Vec<u32>) -> bool {
    if size < 2 {
        return false;
    }
    let (first, last) = (f(0), f(size - 1));
    if first == last {
        return false;
    }
    // Spans (lo, f(lo), hi, f(hi)) with f(lo) != f(hi), lowest first.
    let mut spans = vec![(0, first, size - 1, last)];
    while let Some((lo, f_lo, hi, f_hi)) = spans.pop() {
        if hi == lo + 1 {
            out.push(hi);
            continue;
        }
        let mid = lo + (hi - lo) / 2;
        let f_mid = f(mid);
        // Upper half pushed first: the lower is taken first.
        if f_mid != f_hi {
            spans.push((mid, f_mid, hi, f_hi));
        }
        if f_lo != f_mid {
            spans.push((lo, f_lo, mid, f_mid));
        }
    }
    true
}

/// The steps of a run of `len` (from 0) at which a set whose digit is `x`
/// on its first step, drifting up (or down) among `size`, may change its
/// costs, into `cuts`: where its digit reaches a point of `points` (going
/// up; going down, one below it), or wraps when `wraps` (to `0` going up,
/// to `size - 1` going down).
fn edges(up: bool, x: u32, size: u32, points: &[u32], wraps: bool, len: u32, cuts: &mut Vec<u32>) {
    let (x, k) = (u64::from(x) % u64::from(size.max(1)), u64::from(size.max(1)));
    let wrap = wraps.then_some(if up { 0 } else { k - 1 });
    let reached = points.iter().map(|&p| if up { u64::from(p) } else { u64::from(p) - 1 });
    for e in reached.chain(wrap) {
        // The steps t with x + d t ≡ e (mod size): the first, then every size.
        let mut t = if up { (e + k - x) % k } else { (x + k - e) % k };
        while t < u64::from(len) {
            // Below len, a u32.
            cuts.push(t as u32);
            t += k;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{edges, turns};

    /// A block drifting among `n` from `w`, big below `big_n`: `edges`,
    /// given the points `turns` finds, cuts at every step where it turns
    /// big or small, and only where it reaches `big_n` or wraps, for both
    /// drifts, every start, split and run length (the flat rings fold
    /// only blocks that drift down: this holds the other drift to the same
    /// account).
    #[test]
    fn edges_cut_where_blocks_turn() {
        let mut cut_n = 0;
        for n in 1u32..10 {
            for big_n in 0..=n {
                for w in 0..n {
                    for up in [true, false] {
                        let len = 3 * n + 1;
                        let at = |t: u32| if up { (w + t) % n } else { (w + n * len - t) % n };
                        let mut points = Vec::new();
                        let wraps = turns(|x| u32::from(x < big_n), n, &mut points);
                        let mut cuts = Vec::new();
                        edges(up, w, n, &points, wraps, len, &mut cuts);
                        for t in 1..len {
                            let turned = (at(t) < big_n) != (at(t - 1) < big_n);
                            assert!(!turned || cuts.contains(&t), "n={n} big_n={big_n} w={w} up={up}: no cut at {t}");
                        }
                        let named = |t: u32| {
                            if up { at(t) == 0 || at(t) == big_n } else { at(t) + 1 == big_n || at(t) == n - 1 }
                        };
                        for &t in &cuts {
                            assert!(t < len && named(t), "n={n} big_n={big_n} w={w} up={up}: cut at {t}");
                        }
                        if big_n == 0 || big_n >= n {
                            assert!(cuts.is_empty(), "n={n} big_n={big_n}: every block alike, cut at {cuts:?}");
                        }
                        cut_n += cuts.len();
                    }
                }
            }
        }
        assert!(cut_n > 1000, "{cut_n} cuts");
    }

    /// `turns` finds exactly the points where a non-increasing function
    /// changes, and says whether it changes at all: for every function of
    /// up to three steps down, on every domain up to 12 (a set of blocks
    /// turns at one or two points; a third holds the bisection to more).
    #[test]
    fn turns_are_where_the_function_changes() {
        let mut checked = 0;
        for size in 0u32..12 {
            for a in 0..=size {
                for b in a..=size {
                    for c in b..=size {
                        let f = |x: u32| [a, b, c].iter().filter(|&&t| x < t).count() as u32;
                        let mut found = Vec::new();
                        let changes = turns(f, size, &mut found);
                        let want: Vec<u32> = (1..size).filter(|&x| f(x) != f(x - 1)).collect();
                        assert_eq!(found, want, "size={size} steps at {a}, {b}, {c}");
                        assert_eq!(changes, !want.is_empty(), "size={size} steps at {a}, {b}, {c}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked} functions");
    }
}
