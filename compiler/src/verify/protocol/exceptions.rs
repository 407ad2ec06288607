//! A symmetric group's folded counts when blocks differ in size
//! (`Counts::ByBlock` in `profile.rs`), member by member without walking
//! its steps: what is the same for every member is computed once per
//! group ([`Exceptions`]), and each member costs the few steps where it
//! differs.
//!
//! Member `m` moves member 0's block `v` as block `v + m` (the group's
//! action), which is big when `v + m < big_below`. Call the positions
//! whose size is the rarer one (the big ones when fewer than half are
//! big, else the small ones) the *minority*, and the other size the
//! *base*. At a step where none of member 0's blocks moves onto a
//! minority position for member `m`, every block it moves is of the base
//! size, so it posts the *base counts*: each transfer's cost with its
//! block (if any) of the base size, the same for every member, folded
//! once per phase. The blocks that move onto the minority for `m` are
//! `w - m` for each minority position `w`: adding `m` is a bijection of
//! `0..n` by construction (`Action::of` adds digit by digit, each digit
//! mod its size or by XOR, the sizes' product `n`; `action.rs`'s tests
//! hold it a permutation for every `m` on every pairing), and adding
//! `-m` undoes it (checked for each `w`); the steps where
//! member 0 moves one of them are the member's *exceptions*, and there its
//! counts are `Profile::counts`' own. So the fold is the base fold cut
//! at the exceptions, each counted as the step-by-step fold counts it:
//! exactly the step-by-step fold (`Profile::fold_steps`, which the tests
//! compare it with on every member), at the cost of the base runs and the
//! exceptions. A ring all-reduce of `n` members whose blocks are all big
//! but one has about four exceptions a member, instead of `2n` steps.
//!
//! Where the rarer size is common (a ring's `count mod n` near `n / 2`),
//! listing exceptions costs about `n` steps a member; under a ring,
//! member 0's blocks then move on by one every step, and
//! `Profile::fold_for` folds each member in pieces of equal steps instead
//! (`tracks.rs`), whichever of the two costs less ([`Exceptions::listed`]).
//! A transfer of several blocks (a hierarchy's inner legs move one per
//! node) has no exceptions to list: its group folds in pieces only.

use crate::schedule::CollectivePlan;
use crate::verify::symmetry::Orbit;
use ccc_ir::wire::tp::{Folder, TpIncStep};
use std::ops::Range;

/// `tp_inc_steps` per TOP_SP and record.
pub(super) type Folded = Vec<Vec<Vec<TpIncStep>>>;

/// `(m2s, s2m)` per TOP_SP.
type Counted = Vec<(u64, u64)>;

/// Steps in a row that post the same: first step, steps, counts.
type Run = (u32, u32, Counted);

/// A transfer's costs on each TOP_SP with its block small and big (see
/// `Counts::ByBlock` in `profile.rs`).
pub(super) type Costs = [[(u64, u64); 2]];

/// What every member's fold shares, computed once per group.
pub(super) struct Exceptions {
    /// The minority positions (see the module overview).
    minority: Range<u32>,
    /// Per block `v` of member 0 (below the group size), the steps at
    /// which member 0 moves it: `steps[at[v]..at[v + 1]]`, ascending.
    at: Vec<usize>,
    steps: Vec<u32>,
    /// Per phase, the base counts as runs of equal steps: `(first step,
    /// steps, counts per TOP_SP)`.
    base: Vec<Vec<Run>>,
    /// About how many steps a member's exceptions list: the minority's
    /// share of member 0's moves.
    pub(super) listed: u64,
}

impl Exceptions {
    /// Those of a group of `n` members whose member 0 moves as `orbit`,
    /// with blocks below `big_below` big and `costs` (see
    /// `Counts::ByBlock`) on `used` TOP_SPs; `None` when a block of
    /// member 0 lies outside `0..n`, or a transfer moves several.
    pub(super) fn new(
        plan: &CollectivePlan,
        orbit: &Orbit,
        big_below: u32,
        costs: &Costs,
        used: usize,
    ) -> Option<Exceptions> {
        let n = plan.groups.size();
        let big_n = big_below.min(n);
        let (minority, base) = if big_n <= n - big_n { (0..big_n, 0) } else { (big_n..n, 1) };
        // Per block, the steps that move it (each step once).
        let mut of_block: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
        for s in 0..plan.step_n {
            for tr in orbit.step(s) {
                for set in [tr.src, tr.dst] {
                    if set.count == 0 {
                        continue;
                    }
                    // A set of several blocks (whole runs) has no one step
                    // per block: its members fold in pieces (`tracks.rs`).
                    if set.count > 1 {
                        return None;
                    }
                    let steps = of_block.get_mut(set.start as usize)?;
                    if steps.last() != Some(&s) {
                        steps.push(s);
                    }
                }
            }
        }
        let mut at = Vec::with_capacity(n as usize + 1);
        at.push(0);
        let mut steps = Vec::new();
        for block in of_block {
            steps.extend(block);
            at.push(steps.len());
        }
        let base_counts = |s: u32, out: &mut Vec<(u64, u64)>| {
            out.clear();
            out.resize(used, (0, 0));
            let (first, end) = orbit.span(s);
            for (k, tr) in (first..end).zip(orbit.step(s)) {
                let (src, dst) = (usize::from(tr.src.count > 0) * base, usize::from(tr.dst.count > 0) * base);
                for (t, o) in out.iter_mut().enumerate() {
                    let row = &costs[k * used + t];
                    o.0 += row[src].0;
                    o.1 += row[dst].1;
                }
            }
        };
        let mut counts = Vec::new();
        let base = plan
            .phases
            .iter()
            .map(|phase| {
                let mut runs: Vec<Run> = Vec::new();
                for s in phase.first_step..phase.first_step + phase.step_n {
                    base_counts(s, &mut counts);
                    match runs.last_mut() {
                        Some(run) if run.2 == counts => run.1 += 1,
                        _ => runs.push((s, 1, counts.clone())),
                    }
                }
                runs
            })
            .collect();
        let listed = (minority.len() as u64 * steps.len() as u64).checked_div(u64::from(n)).unwrap_or(0);
        Some(Exceptions { minority, at, steps, base, listed })
    }

    /// Member `member`'s exceptions: the steps at which member 0 moves a
    /// block that `member` moves onto a minority position, ascending;
    /// `None` when adding the member's inverse does not undo adding it.
    fn of(&self, orbit: &Orbit, member: u32) -> Option<Vec<u32>> {
        let action = &orbit.action;
        let back = action.inverse(member);
        let mut out = Vec::new();
        for w in self.minority.clone() {
            let v = action.add(w, back);
            if action.add(v, member) != w {
                return None;
            }
            let (a, b) = (*self.at.get(v as usize)?, *self.at.get(v as usize + 1)?);
            out.extend_from_slice(self.steps.get(a..b)?);
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// Member `member`'s counts folded per TOP_SP and phase: the base
    /// runs cut at its exceptions, each exception's counts from
    /// `counted(step, out)` (`Profile::counts`). `None` when a count does
    /// not fit a fold, or the exceptions cannot be found (see
    /// [`Exceptions::of`]).
    pub(super) fn fold(
        &self,
        plan: &CollectivePlan,
        orbit: &Orbit,
        member: u32,
        used: usize,
        mut counted: impl FnMut(u32, &mut Vec<(u64, u64)>),
    ) -> Option<Folded> {
        let exceptions = self.of(orbit, member)?;
        let mut next = exceptions.iter().copied().peekable();
        let mut out: Folded = vec![Vec::with_capacity(plan.phases.len()); used];
        let mut counts = Vec::new();
        let push = |folders: &mut [Folder], counts: &[(u64, u64)], n: u32| -> Option<()> {
            for (folder, &(m2s, s2m)) in folders.iter_mut().zip(counts) {
                folder.push_n(u32::try_from(m2s).ok()?, u32::try_from(s2m).ok()?, u64::from(n));
            }
            Some(())
        };
        for runs in &self.base {
            let mut folders: Vec<Folder> = (0..used).map(|_| Folder::new()).collect();
            for (first, len, base) in runs {
                let (mut s, end) = (*first, first + len);
                while s < end {
                    while next.next_if(|&x| x < s).is_some() {}
                    let stop = next.peek().copied().filter(|&x| x < end).unwrap_or(end);
                    if stop > s {
                        push(&mut folders, base, stop - s)?;
                    }
                    if stop < end {
                        counted(stop, &mut counts);
                        push(&mut folders, &counts, 1)?;
                    }
                    s = stop + 1;
                }
            }
            for (o, f) in out.iter_mut().zip(folders) {
                o.push(f.finish());
            }
        }
        Some(out)
    }
}
