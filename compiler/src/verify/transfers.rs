//! Where the provers get a member's transfers: the schedule itself
//! ([`AsBuilt`]), listed at one [`Site`] at a time, or member by member in
//! step order ([`walk`]); the schedule as built also lists a phase's
//! transfers a run of steps at a time where its generator has a closed
//! form ([`TransferSource::runs`]), and several members' at one step at
//! once ([`TransferSource::list_members`], the path run's listing: each
//! member's what its site lists, generated straight onto the caller's
//! buffer, since the generators only append). The schedule's transfers are listed
//! unlabelled (`algorithms::transfers::<false>`: each `neigh` a
//! placeholder, everything else as built): `neigh` names a link for
//! display, and no proof reads it (a send and its receive are the same
//! transfer whatever it says, `postcondition`'s `same`; a member's
//! transfers are member 0's moved whatever it says, `action`'s
//! `is_moved_with`), so naming it, two rank look-ups per transfer, would
//! be work no check uses. A test proves schedules with every `neigh`
//! scrambled and finds the same. The [`TransferSource`] trait is
//! crate-private: the unit tests seed defects through it, nothing outside
//! the crate sees it.

use crate::algorithms::StepRun;
use crate::schedule::{CollectivePlan, Phase, PhaseInstance, Schedule, Transfer};

/// One member at one step: where a [`TransferSource`] is asked for transfers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Site<'a> {
    /// The replica group.
    pub(crate) group: u32,
    /// The member's group-local index (read by the tests' mutated
    /// sources; the schedule's transfers are placed by `inst`).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) index: u32,
    /// The phase running.
    pub(crate) phase: &'a Phase,
    /// The phase placed around the member.
    pub(crate) inst: PhaseInstance,
    /// The collective step.
    pub(crate) step: u32,
    /// The step within the phase.
    pub(crate) t: u32,
}

/// Consecutive members of one group at one step of a phase: where a
/// [`TransferSource`] is asked for several members' transfers at once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Members<'a> {
    /// The replica group.
    pub(crate) group: u32,
    /// The phase running.
    pub(crate) phase: &'a Phase,
    /// The first member's group-local index.
    pub(crate) first: u32,
    /// Each member's placement in the phase, from `first` on.
    pub(crate) insts: &'a [PhaseInstance],
    /// The step within the phase.
    pub(crate) t: u32,
}

/// Where transfers come from: the schedule itself, or, in tests, a mutated
/// view of it.
pub(crate) trait TransferSource: Sync {
    /// Appends every transfer the member at `site` sends or receives.
    fn transfers(&self, schedule: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>);

    /// Appends to `out`, member after member, what
    /// [`TransferSource::transfers`] lists at each site of `at`, each in
    /// a list of its own (`scratch`, since a source may edit what it was
    /// handed: the tests' mutated sources do), and after each member the
    /// length of `out` to `ends`.
    fn list_members(
        &self,
        schedule: &Schedule,
        plan: &CollectivePlan,
        at: &Members<'_>,
        out: &mut Vec<Transfer>,
        ends: &mut Vec<u32>,
        scratch: &mut Vec<Transfer>,
    ) {
        let step = at.phase.first_step + at.t;
        for (index, &inst) in (at.first..).zip(at.insts) {
            let site = Site { group: at.group, index, phase: at.phase, inst, step, t: at.t };
            scratch.clear();
            self.transfers(schedule, plan, &site, scratch);
            out.extend_from_slice(scratch);
            ends.push(out.len() as u32);
        }
    }

    /// The transfers of the member and phase of `site` (its step is not
    /// read) as runs of steps ([`StepRun`]), into `out`, when the source
    /// knows them so; `false` when it does not, and then it is asked at
    /// every site. Only the schedule as built answers: a mutated source of
    /// the tests is asked at every site, so each seeded defect is met where
    /// it was seeded.
    fn runs(&self, _schedule: &Schedule, _plan: &CollectivePlan, _site: &Site<'_>, _out: &mut Vec<StepRun>) -> bool {
        false
    }
}

/// The schedule as built, its transfers unlabelled (see the module doc).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AsBuilt;

impl TransferSource for AsBuilt {
    fn transfers(&self, schedule: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<Transfer>) {
        crate::algorithms::transfers::<false>(plan, &schedule.shape, site.group, site.phase, site.inst, site.t, out);
    }

    /// Every member's transfers straight onto `out`: the generators only
    /// append (they push, and read nothing of `out`), so each member's
    /// are what it lists on its own, with no list of its own to copy.
    fn list_members(
        &self,
        schedule: &Schedule,
        plan: &CollectivePlan,
        at: &Members<'_>,
        out: &mut Vec<Transfer>,
        ends: &mut Vec<u32>,
        _scratch: &mut Vec<Transfer>,
    ) {
        for &inst in at.insts {
            crate::algorithms::transfers::<false>(plan, &schedule.shape, at.group, at.phase, inst, at.t, out);
            ends.push(out.len() as u32);
        }
    }

    /// The generator's runs where its phase has them (see `algorithms`'
    /// `step_runs`): the same transfers at every site, held by its tests.
    fn runs(&self, schedule: &Schedule, plan: &CollectivePlan, site: &Site<'_>, out: &mut Vec<StepRun>) -> bool {
        schedule.phase_runs(plan, site.group, site.phase, site.inst, out)
    }
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
    let mut placer = plan.placer(m);
    for phase in &plan.phases {
        let inst = placer.place(phase);
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
