//! The protocol proof: the waits and signals the lowered records imply,
//! per TOP_SP and across peers, are all satisfied.
//!
//! Each rank is checked on its own ([`check_rank`]), on every core, as
//! soon as it is lowered (its program can then be dropped):
//!
//! 1. **The chain of each (rank, TOP_SP).** Every collective that uses the
//!    TOP_SP has one record per phase, in order, covering its steps
//!    exactly; `trigger_next` runs each record into the next and stops at
//!    the last; every `ring_wait_complete` has an earlier
//!    `ring_send_complete` to wait for and every signal a waiter; the END
//!    mark carries the TOP_SP's completion semaphore; `channel_list` holds
//!    exactly the collective's channels on the TOP_SP; mesh records address
//!    their events inside the mesh window; credits are in 1..=511; the
//!    host's counts (`op_num`, END marks) match the chain.
//! 2. **The records against the step graph.** Step by step, every record
//!    posts exactly the descriptors (data and semaphore increments) that
//!    the rank's transfers in the step graph need; each mesh event waits
//!    for exactly the increments the step graph has its peer send; every
//!    record that runs to its end posts one TOPSP_CC_STATUS notification,
//!    and per TOP_SP they add up to `op_num`. When lowering saw a rank's
//!    transfers be member 0's moved to it at every step (its `Seen`, see
//!    `symmetry`), its needs come from member 0's ([`Profile`]), without
//!    listing its transfers again:
//!    the same counts for every member when every block costs the same
//!    (and then a record equal to member 0's counts folded is checked
//!    whole), or per member from member 0's costs of small and big blocks
//!    (folded as the group's base fold cut at the member's few exceptions,
//!    `exceptions.rs`, or under a ring, flat or hierarchical, in pieces
//!    of steps that post the same, `tracks.rs`, and checked whole too).
//!    A rank checked against its own step graph has its counts folded as
//!    lowering folds them and compared with its records whole first; only
//!    records that differ are checked step by step (`steps.rs`).
//!
//! **Why no wait is left unsatisfied.** The postcondition proof matches,
//! at every step, every transfer a rank receives to exactly one identical
//! transfer its peer sends, and leaves no send unmatched (whichever halves
//! it moves). Both ends count a transfer's semaphore increments from the
//! transfer itself (blocks x halves, on every channel), and part 2 shows
//! each end's records post exactly those: so at every step every
//! connection (sender, receiver) delivers exactly the increments its
//! receiver consumes. Fewer would be a wait never satisfied; more, a signal
//! nobody consumes. A sender never has more than its send credits
//! (1..=511, checked per chain) unconsumed on a connection, so the 9-bit
//! net index that numbers them (wrapping at 512) never aliases, and since
//! every connection balances at every step both ends' wrapped indices agree
//! after each step. Steps only ever wait on the previous step of their own
//! rank and on transfers of the same step (the step graph's edges go from
//! step `s - 1` to `s`), so by induction over the steps no wait is left
//! unsatisfied and no cycle of waits exists.

use super::defect::{Defect, DefectKind};
use super::symmetry::{Bases, Seen};
use crate::lower::RankProgram;
use crate::placement::topsps_used;
use crate::schedule::{CollectivePlan, Schedule};
use ccc_ir::id::TopSp;

mod chain;
mod exceptions;
mod found;
mod profile;
mod steps;
#[cfg(test)]
mod tests;
mod tracks;

pub(crate) use chain::{CHAINS_BYTES, Chains};
pub(crate) use found::RankChecked;
pub use found::{MAX_SEND_CREDITS, NET_INDEX_LOOP, ProtocolProof};
use found::{Place, defect, mismatch};
pub(crate) use profile::Profile;
use steps::{Setup, StepCheck};

/// Room for a rank's notifications per TOP_SP: one per TOP_SP index (a
/// `u8`), so that [`check_rank_in`] counts them on the stack.
const NOTIFIED_ROOM: usize = u8::MAX as usize + 1;

/// Member 0's needs of every group lowering may find symmetric,
/// `[collective][group]`: what a rank whose transfers were member 0's
/// moved posts (see [`Profile`]).
pub(crate) struct Profiles(Vec<Vec<Option<Profile>>>);

impl Profiles {
    /// The profiles of `bases`' groups; none without bases (every rank
    /// is then checked against its own step graph).
    pub(crate) fn new(schedule: &Schedule, bases: Option<&Bases>) -> Profiles {
        let Some(bases) = bases else { return Profiles(Vec::new()) };
        let of = |plan: &CollectivePlan, g| bases.orbit(plan.index, g).and_then(|o| Profile::new(schedule, plan, o));
        Profiles(
            schedule.collectives.iter().map(|plan| (0..plan.groups.group_n()).map(|g| of(plan, g)).collect()).collect(),
        )
    }

    /// Whether `group` of `collective` has a profile: the check of its
    /// members reads their watches ([`Seen`]).
    pub(crate) fn has(&self, collective: u32, group: u32) -> bool {
        self.0.get(collective as usize).and_then(|g| g.get(group as usize)).is_some_and(Option::is_some)
    }
}

/// What the check of every rank of one schedule shares: each
/// collective's [`Setup`] (its channels and descriptor tables), made once
/// rather than per rank.
pub(crate) struct Setups<'s>(Vec<Setup<'s>>);

impl<'s> Setups<'s> {
    /// The setups of `schedule`'s collectives.
    pub(crate) fn new(schedule: &'s Schedule) -> Setups<'s> {
        Setups(schedule.collectives.iter().map(|plan| Setup::new(schedule, plan)).collect())
    }

    /// No setup: [`check_rank_in`] makes each collective's as the rank
    /// needs it (only those the rank is a member of).
    fn none() -> Setups<'s> {
        Setups(Vec::new())
    }
}

/// [`check_rank_in`] with no shared setups: each collective the rank is
/// a member of is set up for this rank alone.
pub(crate) fn check_rank(
    schedule: &Schedule,
    program: &RankProgram,
    bases: Option<(&Bases, &Profiles)>,
    seen: Option<&Seen>,
    chains: Option<&Chains>,
) -> RankChecked {
    check_rank_in(schedule, &Setups::none(), program, bases, seen, chains)
}

/// Checks everything of the protocol one rank's records show: each
/// chain's structure; step by step, that every record posts exactly the
/// descriptors the rank's transfers need, member 0's moved when `seen`
/// shows lowering found them so and `bases` has them; that each mesh
/// event waits for exactly the increments the step graph sends it; that
/// the notifications per TOP_SP add up to `op_num`. The balance between
/// ranks is the postcondition proof's (see the module overview). With
/// `chains`, a chain equal to one that passed for this schedule is not
/// checked again (`chain.rs`).
///
/// A defect in a chain stops the rank's check there (its steps would only
/// echo it); otherwise each collective's first defect is collected.
/// `setups` are the schedule's (see [`Setups`]).
pub(crate) fn check_rank_in(
    schedule: &Schedule,
    setups: &Setups<'_>,
    program: &RankProgram,
    bases: Option<(&Bases, &Profiles)>,
    seen: Option<&Seen>,
    chains: Option<&Chains>,
) -> RankChecked {
    let mut checked = RankChecked::default();
    let rank = program.rank;
    let used_all = topsps_used(schedule);
    if program.topsps.len() != usize::from(used_all) {
        let found = program.topsps.len() as u64;
        checked.defects.push(*defect(Place::chain(rank, TopSp(0)), mismatch("TOP_SPs", found, u64::from(used_all))));
        return checked;
    }
    for tp in &program.topsps {
        let chain = match chains {
            Some(chains) => chains.check(schedule, rank, tp),
            None => chain::check(schedule, rank, tp),
        };
        match chain {
            Ok(()) => {
                checked.proof.chains += 1;
                checked.proof.records += tp.records().count() as u64;
            }
            Err(d) => checked.defects.push(*d),
        }
    }
    if !checked.defects.is_empty() {
        return checked;
    }
    // Every record that runs to its end notifies the host once; per TOP_SP
    // used, on the stack (a TOP_SP index is a u8).
    let mut notified_all = [0u64; NOTIFIED_ROOM];
    let notified = &mut notified_all[..usize::from(used_all)];
    for plan in &schedule.collectives {
        let Some(at) = plan.groups.locate(rank) else {
            let kind = DefectKind::OutOfRange { what: "rank", value: rank.0, limit: schedule.shape.rank_n };
            checked.defects.push(*defect(Place { collective: plan.index, ..Place::chain(rank, TopSp(0)) }, kind));
            continue;
        };
        let group = at.group();
        let moved = seen.is_some_and(|s| s.all_moved(plan));
        let profile = bases.filter(|_| moved).and_then(|(bases, profiles)| {
            let profile = profiles.0.get(plan.index as usize)?.get(group as usize)?.as_ref()?;
            Some((profile, bases.orbit(plan.index, group)?))
        });
        // The schedule's setup of the collective, else (none shared) one
        // made here.
        let own: Setup<'_>;
        let setup = match setups.0.get(plan.index as usize).filter(|s| s.is_of(plan)) {
            Some(setup) => setup,
            None => {
                own = Setup::new(schedule, plan);
                &own
            }
        };
        let check = StepCheck::new(schedule, setup, program, at, &mut checked.proof, notified);
        if let Err(d) = check.collective(profile) {
            checked.defects.push(*d);
        }
    }
    if checked.defects.is_empty() {
        checked.defects.extend(check_notifications(program, notified));
    }
    checked
}

/// Per TOP_SP, the notifications the records post against `op_num`.
fn check_notifications<'a>(program: &'a RankProgram, notified: &'a [u64]) -> impl Iterator<Item = Defect> + 'a {
    program.topsps.iter().filter_map(move |tp| {
        // A TOP_SP past those used has no count: its chain check has
        // already reported it (the collectives in the chain).
        let posted = *notified.get(usize::from(tp.topsp.0))?;
        (posted != u64::from(tp.neff.op_num)).then(|| {
            let kind = DefectKind::NotificationCount { posted, op_num: tp.neff.op_num };
            *defect(Place::chain(program.rank, tp.topsp), kind)
        })
    })
}
