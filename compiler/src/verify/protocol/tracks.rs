//! A symmetric group's folded counts with blocks of two sizes, member by
//! member, in pieces of steps that post the same: the cost of a member is
//! that of its records, not of the blocks of the rarer size
//! (`exceptions.rs` lists those per member, which under a flat ring whose
//! big blocks are about half of them is about `n` steps a member, and
//! `n²` over the group).
//!
//! Under the flat rotation (`Action::cyclic`) member `m` moves member 0's
//! block `b` to `(b + m) mod n`, big when below `big_n` (the positions
//! below `big_below`, at most `n`). Cut each phase into *runs*: steps in a
//! row at which member 0 lists as many transfers, each with the same costs
//! on every TOP_SP as the previous step's transfer in the same place, with
//! a block (or none) where that one had one (or none), and each block
//! `d` past the previous one (mod `n`), `d` one of `0`, `+1`, `-1` fixed
//! for that place along the run. A ring's pieces move on by one every
//! step (`lower/runs.rs` lists them in closed form), so its phases are a
//! few runs each; an orbit that moves otherwise is cut into many, and then
//! the group keeps to its exceptions ([`Tracks::cheaper_than`]).
//!
//! Along a run, each place's moved block is `w(s) = w(first) + d (s -
//! first) (mod n)`, so it turns big or small only at the steps where
//! `w(s)` is an edge of `0..big_n`: going up, where it reaches `0` (from
//! `n - 1`) or `big_n`; going down, where it reaches `big_n - 1` or
//! `n - 1` (from `0`). Those steps, found by one subtraction mod `n` each,
//! cut the run into *pieces* in which every transfer keeps its costs and
//! its block's size, so every step of a piece posts what its first does:
//! `Profile::counts` at that step, pushed once for the piece's length
//! (`Folder::push_n` folds `k` equal steps as `k` pushes do). That is
//! exactly the step-by-step fold (`Profile::fold_steps`), which the tests
//! compare it with on every member of the flat rings whose blocks differ
//! in cost, and of every pairing.

use super::exceptions::{Costs, Folded};
use crate::schedule::{BlockSet, CollectivePlan};
use crate::verify::symmetry::Orbit;
use ccc_ir::wire::tp::Folder;

/// How a place's block moves from one step of a run to the next (mod `n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Drift {
    /// The same block.
    Still,
    /// The next block up.
    Up,
    /// The next block down.
    Down,
}

/// Per place of a run (a transfer's index among its step's), its source
/// and destination block's drift; `None` for an empty block set.
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

/// What every member's fold shares under the flat rotation: each phase's
/// runs.
#[derive(Debug)]
pub(super) struct Tracks {
    /// Per phase, its runs, covering its steps in order.
    phases: Vec<Vec<Run>>,
    places: Vec<Place>,
}

/// The drift from block `prev` to `next` among `n`, if one.
fn drift(prev: u32, next: u32, n: u32) -> Option<Drift> {
    let (p, x, n) = (u64::from(prev), u64::from(next), u64::from(n));
    if x == p {
        Some(Drift::Still)
    } else if x == (p + 1) % n {
        Some(Drift::Up)
    } else if (x + 1) % n == p {
        Some(Drift::Down)
    } else {
        None
    }
}

/// A block set's drift placeholder at a run's first step: empty or not.
fn fresh(set: BlockSet) -> Option<Drift> {
    (set.count > 0).then_some(Drift::Still)
}

impl Tracks {
    /// The runs of a group of `n` members whose member 0 moves as `orbit`
    /// (under the flat rotation), its transfers costing `costs` on `used`
    /// TOP_SPs (see `Counts::ByBlock`); `None` under any other action, or
    /// when a block of member 0 lies outside `0..n`.
    pub(super) fn new(plan: &CollectivePlan, orbit: &Orbit, costs: &Costs, used: usize) -> Option<Tracks> {
        let n = plan.groups.size();
        if !orbit.action.is_cyclic() || n == 0 {
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
    /// many transfers, each with the costs and a block where the previous
    /// step's had, drifting as the run's do (the drifts of a run of one
    /// step are set here). Extends it if so.
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
                    if (x.count > 0) != (y.count > 0) || y.count > 0 && y.start >= n {
                        return false;
                    }
                    if x.count == 0 {
                        continue;
                    }
                    let Some(d) = drift(x.start, y.start, n) else { return false };
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
    /// `Exceptions::new`): a piece per run and per edge a moving block
    /// crosses, against a step per exception.
    pub(super) fn cheaper_than(&self, listed: u64) -> bool {
        let runs = self.phases.iter().map(|r| r.len() as u64).sum::<u64>();
        let moving = self.places.iter().flatten().filter(|d| matches!(d, Some(Drift::Up | Drift::Down))).count();
        runs + moving as u64 <= listed
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
        let big_n = big_below.min(n);
        let action = &orbit.action;
        let mut out: Folded = vec![Vec::with_capacity(self.phases.len()); used];
        let (mut counts, mut cuts) = (Vec::new(), Vec::new());
        for runs in &self.phases {
            let mut folders: Vec<Folder> = (0..used).map(|_| Folder::new()).collect();
            for run in runs {
                cuts.clear();
                cuts.push(0);
                let places = self.places.get(run.at..run.at + run.width)?;
                for (tr, place) in orbit.step(run.first).iter().zip(places) {
                    for (side, set) in place.iter().zip([tr.src, tr.dst]) {
                        if let Some(d) = side {
                            edges(*d, action.add(set.start, member), n, big_n, run.len, &mut cuts);
                        }
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

/// The steps of a run of `len` (from 0) at which a block at `w` on its
/// first step, drifting `d` among `n`, may turn big or small (big below
/// `big_n`), into `cuts`: where it reaches an edge (see the module
/// overview). None when every block is the same size.
fn edges(d: Drift, w: u32, n: u32, big_n: u32, len: u32, cuts: &mut Vec<u32>) {
    if big_n == 0 || big_n >= n {
        return;
    }
    let (w, n64) = (u64::from(w) % u64::from(n), u64::from(n));
    // The edges it may reach, and whether it goes up to them.
    let (at, up) = match d {
        Drift::Still => return,
        Drift::Up => ([0, big_n], true),
        Drift::Down => ([big_n - 1, n - 1], false),
    };
    for e in at.map(u64::from) {
        // The steps t with w + d t ≡ e (mod n): the first, then every n.
        let mut t = if up { (e + n64 - w) % n64 } else { (w + n64 - e) % n64 };
        while t < u64::from(len) {
            // Below len, a u32.
            cuts.push(t as u32);
            t += n64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Drift, edges};

    /// A block drifting among `n` from `w`, big below `big_n`: `edges`
    /// cuts at every step where it turns big or small, and only where it
    /// reaches an edge the module overview names, for every drift, start,
    /// split and run length (the flat rings fold only blocks that drift
    /// down: this holds the other drifts to the same account).
    #[test]
    fn edges_cut_where_blocks_turn() {
        let mut cut_n = 0;
        for n in 1u32..10 {
            for big_n in 0..=n {
                for w in 0..n {
                    for d in [Drift::Still, Drift::Up, Drift::Down] {
                        let len = 3 * n + 1;
                        let at = |t: u32| match d {
                            Drift::Still => w,
                            Drift::Up => (w + t) % n,
                            Drift::Down => (w + n * len - t) % n,
                        };
                        let mut cuts = Vec::new();
                        edges(d, w, n, big_n, len, &mut cuts);
                        for t in 1..len {
                            let turns = (at(t) < big_n) != (at(t - 1) < big_n);
                            assert!(!turns || cuts.contains(&t), "n={n} big_n={big_n} w={w} {d:?}: no cut at {t}");
                        }
                        let named = |t: u32| match d {
                            Drift::Still => false,
                            Drift::Up => at(t) == 0 || at(t) == big_n,
                            Drift::Down => at(t) + 1 == big_n || at(t) == n - 1,
                        };
                        for &t in &cuts {
                            assert!(t < len && named(t), "n={n} big_n={big_n} w={w} {d:?}: cut at {t}");
                        }
                        cut_n += cuts.len();
                    }
                }
            }
        }
        assert!(cut_n > 1000, "{cut_n} cuts");
    }
}
