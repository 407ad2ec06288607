//! Member 0's transfers of a group ([`Orbit`]), step by step, with the
//! action that moves them to every member; and the walks that compare
//! other members with them: every member (`orbit`, the tests'
//! reference) or a sample ([`sampled`], a necessary condition the
//! postcondition proof asks before running member 0 alone).
//!
//! [`base`] lists member 0's transfers of a group that can be symmetric;
//! the watches of the parent module compare each rank's steps with them.

use crate::schedule::{CollectivePlan, Schedule, Transfer};
use crate::valid::GroupMember;
use crate::verify::action::{Action, blocks_move, is_moved_by, is_moved_with};
use crate::verify::by_phase::phases_move;
use crate::verify::transfers::{AsBuilt, TransferSource, walk};
#[cfg(test)]
use rayon::prelude::*;

/// Member 0's transfers of a group, step by step, with the action that
/// moves them to every member: in a symmetric group every member's
/// transfers are their orbit under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Orbit {
    /// How the group's indices move.
    pub(crate) action: Action,
    transfers: Vec<Transfer>,
    /// Step `s`'s transfers are `transfers[at[s]..at[s + 1]]`.
    at: Vec<usize>,
}

impl Orbit {
    /// The bytes it holds, its vectors' room included: what
    /// [`BaseSize::footprint`] counts without holding it.
    #[cfg(test)]
    pub(crate) fn footprint(&self) -> u64 {
        let room = self.transfers.capacity() * std::mem::size_of::<Transfer>()
            + self.at.capacity() * std::mem::size_of::<usize>();
        (std::mem::size_of::<Orbit>() + room) as u64
    }

    /// Whether `transfers`, a member's at collective step `step`, are
    /// member 0's moved to `member`, in order (what a watch asks of each
    /// node).
    pub(super) fn moves_to(&self, step: u32, member: u32, transfers: &[Transfer]) -> bool {
        let (first, end) = self.span(step);
        end - first == transfers.len() && {
            let by = self.action.by(member);
            transfers.iter().zip(&self.transfers[first..end]).all(|(x, b)| is_moved_with(x, b, &by))
        }
    }

    /// Whether `at`'s transfers at the middle step of each phase of
    /// `plan` are member 0's moved to it: when not, some step of the
    /// collective is not, and a walk of its steps finds so.
    pub(super) fn moves_at_middles(&self, schedule: &Schedule, plan: &CollectivePlan, at: GroupMember) -> bool {
        let mut transfers = Vec::new();
        plan.phases.iter().filter(|p| p.step_n > 0).all(|p| {
            let t = p.step_n / 2;
            transfers.clear();
            schedule.phase_transfers(plan, at.group(), p, plan.instance(p, at.index()), t, &mut transfers);
            self.moves_to(p.first_step + t, at.index(), &transfers)
        })
    }

    /// Whether member `m` of `group`, walked from `source`, lists at
    /// every step exactly member 0's transfers moved to it (what `orbit`
    /// asks of every member and [`sampled`] of a few).
    fn walks_moved<S: TransferSource + ?Sized>(
        &self,
        schedule: &Schedule,
        plan: &CollectivePlan,
        group: u32,
        m: u32,
        source: &S,
    ) -> bool {
        let mut step = 0u32;
        walk(schedule, plan, group, m, source, |_, list| {
            let want = self.step(step);
            step += 1;
            list.len() == want.len() && list.iter().zip(want).all(|(x, b)| is_moved_by(x, b, m, &self.action))
        })
    }

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
/// exactly member 0's moved by its index; `None` at the first member and
/// step that does not (or for a group of fewer than two members, or whose
/// blocks do not move with its members, where moving means nothing: see
/// [`base`]). The tests'
/// reference: a compile finds the same groups with [`Watch`](super::Watch)es.
#[cfg(test)]
pub(crate) fn orbit<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    source: &S,
) -> Option<Orbit> {
    let n = plan.groups.size();
    let base = base(schedule, plan, group, source)?;
    let same = (1..n).into_par_iter().with_min_len(8).all(|m| base.walks_moved(schedule, plan, group, m, source));
    same.then_some(base)
}

/// Members a [`sampled`] check compares with member 0.
const SAMPLES: u32 = 16;

/// Member 0's transfers, if a sample of the group's members (the second,
/// the last and [`SAMPLES`] spread between) each list, at every step,
/// exactly member 0's moved to them: a necessary condition of
/// `orbit` at the cost of a few members' walks. `None` proves the
/// group is not symmetric; `Some` only says the sample did not show it.
/// Where the phases decide (`by_phase`), no member past 0 is walked.
pub(crate) fn sampled(schedule: &Schedule, plan: &CollectivePlan, group: u32) -> Option<Orbit> {
    let base = base(schedule, plan, group, &AsBuilt)?;
    samples_agree(schedule, plan, group, &base).then_some(base)
}

/// What [`base`] would hold for a group, counted without holding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BaseSize {
    /// Member 0's transfers over every step.
    pub(crate) transfers: usize,
    /// The steps.
    pub(crate) steps: usize,
    /// Whether the phases alone show every member's transfers are member
    /// 0's moved (then [`sampled`] finds the group symmetric walking no
    /// one else).
    pub(crate) by_phase: bool,
    /// The room its two vectors grow to, in items: the transfers', and
    /// the step starts'.
    room: (usize, usize),
}

impl BaseSize {
    /// The bytes the base would hold, its vectors' room included.
    pub(crate) fn footprint(self) -> u64 {
        let (transfers, starts) = self.room;
        let bytes = std::mem::size_of::<Orbit>()
            .saturating_add(transfers.saturating_mul(std::mem::size_of::<Transfer>()))
            .saturating_add(starts.saturating_mul(std::mem::size_of::<usize>()));
        bytes as u64
    }
}

/// The room a vector of `cap` items grows to when it must hold `len`, as
/// `Vec` grows (twice its room, at least what it must hold, at least 4
/// items): what a base's vectors reach, pushed a step at a time.
fn grown(cap: usize, len: usize) -> usize {
    if len <= cap { cap } else { cap.saturating_mul(2).max(len).max(4) }
}

/// [`base`]'s size for `group`, member 0's transfers counted as they are
/// walked rather than held (a million-rank ring's are 150 MiB, which the
/// memory budget's estimate must not spend before it refuses); `None`
/// where [`base`] would make none.
pub(crate) fn base_size(schedule: &Schedule, plan: &CollectivePlan, group: u32) -> Option<BaseSize> {
    if plan.groups.size() < 2 || !blocks_move(plan) {
        return None;
    }
    // As `base` makes them: no transfers yet, and the first step's start.
    let (mut transfers, mut steps, mut room) = (0usize, 0usize, (0usize, 1usize));
    let ordered = walk_in_order(schedule, plan, group, &AsBuilt, |list| {
        transfers += list.len();
        steps += 1;
        room = (grown(room.0, transfers), grown(room.1, steps + 1));
    });
    let by_phase = phases_move(plan, &Action::of(plan));
    ordered.then_some(BaseSize { transfers, steps, by_phase, room })
}

/// Whether [`sampled`] finds `group` symmetric, holding member 0's
/// transfers only where the phases do not decide it.
pub(crate) fn sampled_holds(schedule: &Schedule, plan: &CollectivePlan, group: u32) -> bool {
    walk_moved_by_phase(schedule, plan, group, |_| {}) || sampled(schedule, plan, group).is_some()
}

/// [`sampled_holds`] of a group whose [`base_size`] is `size`: where the
/// phases decide, nothing is walked again.
pub(crate) fn sampled_holds_sized(schedule: &Schedule, plan: &CollectivePlan, group: u32, size: BaseSize) -> bool {
    size.by_phase || sampled(schedule, plan, group).is_some()
}

/// Gives `each` member 0's transfers of `group`, step by step, as they are
/// walked rather than held, where [`sampled`] would answer from the
/// phases alone that every member's are member 0's moved (a million-rank
/// ring's are hundreds of megabytes held). `false` where it would not
/// (then `each` may have been given some steps: the caller drops what it
/// made of them and asks [`sampled`]).
pub(crate) fn walk_moved_by_phase(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    mut each: impl FnMut(&[Transfer]),
) -> bool {
    phases_move(plan, &Action::of(plan)) && walk_in_order(schedule, plan, group, &AsBuilt, |list| each(list))
}

/// Walks `group`'s member 0 step by step, giving `each` its transfers,
/// while the phases run steps 0..step_n, once each, in order (what both
/// the full run and the orbit run execute); whether they all did.
fn walk_in_order<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    source: &S,
    mut each: impl FnMut(&[Transfer]),
) -> bool {
    let mut next = 0u32;
    let ordered = walk(schedule, plan, group, 0, source, |step, list| {
        if step != next {
            return false;
        }
        each(list);
        next += 1;
        true
    });
    ordered && next == plan.step_n
}

/// Whether `base`, `group`'s member 0's transfers, is every member's moved
/// as far as the sample shows ([`sampled`] with the base already made).
fn samples_agree(schedule: &Schedule, plan: &CollectivePlan, group: u32, base: &Orbit) -> bool {
    if phases_move(plan, &base.action) {
        return true;
    }
    let n = plan.groups.size();
    let mut members: Vec<u32> =
        (0..SAMPLES).map(|i| 1 + (u64::from(n - 1) * u64::from(i) / u64::from(SAMPLES)) as u32).collect();
    members.push(n - 1);
    members.sort_unstable();
    members.dedup();
    members.iter().all(|&m| base.walks_moved(schedule, plan, group, m, &AsBuilt))
}

/// Member 0's transfers, step by step, for a group that can be invariant:
/// two members or more, one block per member (elsewhere rotation means
/// nothing), or an all-to-all's two (its input and output, each moving as
/// the members do, [`Action::add_block`]; not an all-to-all-v's, whose
/// sizes depend on the member).
pub(crate) fn base<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    source: &S,
) -> Option<Orbit> {
    let n = plan.groups.size();
    if n < 2 || !blocks_move(plan) {
        return None;
    }
    let (mut transfers, mut at) = (Vec::new(), vec![0]);
    let ordered = walk_in_order(schedule, plan, group, source, |list| {
        transfers.extend_from_slice(list);
        at.push(transfers.len());
    });
    ordered.then(|| Orbit { action: Action::of(plan), transfers, at })
}
