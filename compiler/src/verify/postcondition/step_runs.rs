//! The path run over runs of steps: a phase whose every member's
//! transfers the source lists as runs ([`StepRun`]: the schedule as
//! built, on the ring chains) has its listing checks (checks 1–2 of
//! `verify`: shapes, and every receive matched to one identical send, no
//! send left over) made once per pair of overlapping runs instead of at
//! every site; its steps are then applied a run at a time, member after
//! member, where `member_major` shows that the same, else one by one as
//! before, each member's receives read from the run holding the step.
//!
//! **Why a run's check is every step's.** Along a run every block set's
//! start moves by the same `shift` a step, and nothing else changes
//! (see `algorithms`' `step_runs`). Each shape check but the range is a
//! statement about members, counts and strides, or an equality of
//! starts between two block sets of one transfer, so it holds at every
//! step of the run when it holds at its first; the starts only grow,
//! so the range holds at every step when it holds at the last (computed
//! without wrapping: a block set that would wrap is out of range). For
//! matching, take a receive of member `m`'s run `R` and a run `S` of its
//! sender overlapping `R` on steps `a..b`, both moving by the same
//! `shift`: at step `a + i` every transfer of both lists is its form at
//! `a` moved by `i * shift`, and `same` (equal members, halves, fold,
//! and positions) holds between two transfers moved alike exactly when
//! it holds between them unmoved. So the receive's class counts in both
//! lists are the same at every step of the overlap as at `a`, and
//! counting them at `a` decides every step of it. That every step lists
//! as many sends as receives in all is a sum over the runs holding it,
//! kept as differences over the phase's steps. These are exactly the
//! per-step checks `window` makes (its `Window::matches` for the class
//! counting argument); anything this check does not accept (a run not
//! covering the phase in order, two overlapping runs that move apart)
//! decides nothing: the phase is listed step by step, as without runs.

use super::full::same;
use crate::algorithms::{StepRun, covers, moved_along};
use crate::schedule::Transfer;

/// Whether every site of a phase of `step_n` steps passes the path run's
/// shape checks (`shape_ok`) and its matching, decided from every
/// member's `runs` (by member); `false` when some site fails or the runs
/// cannot tell, and then the phase is to be listed step by step.
pub(super) fn checked(
    runs: &[&[StepRun]],
    step_n: u32,
    block_n: u32,
    shape_ok: &dyn Fn(&Transfer, u32) -> bool,
) -> bool {
    let mut balance = vec![0i64; step_n as usize + 1];
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    // Every member's runs first: a receive below reads its sender's.
    if !runs.iter().all(|own| covers(own, step_n)) {
        return false;
    }
    for (m, own) in runs.iter().enumerate() {
        let m = m as u32;
        for r in own.iter() {
            if !(r.transfers.iter().all(|tr| shape_ok(tr, m)) && r.in_range(block_n)) {
                return false;
            }
            let sends = r.transfers.iter().filter(|tr| tr.from == m).count() as i64;
            let receives = r.transfers.iter().filter(|tr| tr.to == m).count() as i64;
            balance[r.first as usize] += sends - receives;
            balance[(r.first + r.len) as usize] -= sends - receives;
            for tr in r.transfers.iter().filter(|tr| tr.to == m) {
                // The shape checks passed: the sender is a member.
                let Some(sender) = runs.get(tr.from as usize) else { return false };
                for s in sender.iter().filter(|s| s.first < r.first + r.len && r.first < s.first + s.len) {
                    if s.shift != r.shift {
                        return false;
                    }
                    let a = r.first.max(s.first);
                    let class = r.moved(tr, a);
                    mine.clear();
                    r.at(a, &mut mine);
                    theirs.clear();
                    s.at(a, &mut theirs);
                    let received = mine.iter().filter(|x| x.to == m && same(x, &class)).count();
                    let sent = theirs.iter().filter(|x| x.from == tr.from && same(x, &class)).count();
                    if received != sent {
                        return false;
                    }
                }
            }
        }
    }
    let mut open = 0i64;
    balance[..step_n as usize].iter().all(|&d| {
        open += d;
        open == 0
    })
}

/// Every member's receives at one phase step, in member order, read from
/// the runs holding it: every receive of every run, by first step, and
/// those of the runs holding the current step, by member and in their
/// list's order (a member's runs are disjoint, so its receives come from
/// one run at a time). Steps are asked in order.
pub(super) struct Receives {
    /// Every run's receives, by first step then member, each run's in
    /// its list's order.
    starts: Vec<Receive>,
    next: usize,
    /// The receives of the runs holding the current step.
    active: Vec<Receive>,
}

/// One receive of a run: the transfer at the run's first step.
#[derive(Clone, Copy)]
struct Receive {
    member: u32,
    first: u32,
    end: u32,
    shift: u32,
    tr: Transfer,
}

impl Receives {
    pub(super) fn new(runs: &[&[StepRun]]) -> Receives {
        let mut starts: Vec<Receive> = Vec::new();
        for (m, own) in runs.iter().enumerate() {
            let member = m as u32;
            for r in own.iter() {
                let (first, end, shift) = (r.first, r.first + r.len, r.shift);
                let received = r.transfers.iter().filter(|tr| tr.to == member);
                starts.extend(received.map(|&tr| Receive { member, first, end, shift, tr }));
            }
        }
        // Stable: a run's receives keep their order.
        starts.sort_by_key(|r| (r.first, r.member));
        Receives { starts, next: 0, active: Vec::new() }
    }

    /// Appends every member's receives at step `t` (not before the last
    /// step asked), member by member, each in its list's order.
    pub(super) fn at(&mut self, t: u32, out: &mut Vec<Transfer>) {
        self.active.retain(|r| r.end > t);
        while let Some(&r) = self.starts.get(self.next).filter(|r| r.first <= t) {
            self.next += 1;
            if r.end > t {
                // After the member's receives listed before it.
                let at = self.active.partition_point(|a| a.member <= r.member);
                self.active.insert(at, r);
            }
        }
        out.extend(self.active.iter().map(|r| moved_along(&r.tr, r.first, r.shift, t)));
    }
}
