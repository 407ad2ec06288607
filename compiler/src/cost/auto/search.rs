//! The search behind [`super::choose`]: a floor under every candidate's
//! prediction, then predictions in floor order until no candidate left
//! could win or come second (branch and bound, `docs/cost-model.md` §4).
//!
//! A floor is cheap: the candidate built (a few hundred ns) and member 0's
//! steps costed alone ([`PhaseCoster`] with `floor`). Candidates are
//! visited by floor, ties by the tie-break order; each is predicted
//! exactly as before. Once the next floor is above the runner-up so far
//! (or equal to it and later in the order, so it would lose the tie), no
//! candidate left can take the first or second place, and they are
//! recorded with their floor, not predicted. The winner and the runner-up
//! (`compile`'s `next Y at T us`) are therefore the ones predicting every
//! candidate would give: the same argmin with the same tie-break.

use super::{Machine, build_alone, floor_ns, whole_ns};
use crate::cost::predict::{FlowMemo, PhaseCoster, launch_ns};
use crate::cost::{ModelParams, leg_bound, nodes_spanned};
use crate::schedule::{CollectivePlan, Schedule};
use crate::valid::{Alternative, AutoChoice, ResolvedAlgorithm, ValidCollective};
use ccc_ir::enums::AlgType;
use ccc_ir::spec::Leg;
use std::ops::Range;

/// A candidate as the search holds it between its floor and its
/// prediction.
enum Held {
    /// Built alone and costed whole: a flat algorithm, or a combination
    /// whose legs' phases do not run one after another.
    Whole(Schedule),
    /// A hierarchical combination, costed leg by leg ([`LegCost`]).
    Legs(Vec<(Leg, AlgType)>),
}

/// One hierarchical leg choice: a leg's phases cost the same whichever
/// algorithms the other legs run, so each is costed once, on the first
/// combination built that holds it.
struct LegCost {
    key: (Leg, AlgType),
    /// The schedule in [`Search::homes`] it was costed on, and its phases there.
    home: usize,
    phases: Range<usize>,
    /// Floors under its phases' times, in run order.
    floors: Vec<f64>,
    /// Its phases' predicted times, once asked for.
    times: Option<Vec<f64>>,
}

/// What one `Auto` choice has built and costed so far (it lives for one
/// choice: nothing is kept between validations).
pub(super) struct Search<'a> {
    collective: &'a ValidCollective,
    machine: Machine,
    params: &'a ModelParams,
    /// The combinations built for their legs.
    homes: Vec<Schedule>,
    legs: Vec<LegCost>,
    /// The collective's bound and its launch cost, ns: the same for every
    /// candidate (they depend on the op, groups, size and channels only).
    fixed: Option<(f64, f64)>,
    /// The phases' network flows, counted once for every candidate.
    flows: FlowMemo,
}

impl<'a> Search<'a> {
    pub(super) fn new(collective: &'a ValidCollective, machine: Machine, params: &'a ModelParams) -> Self {
        Search {
            collective,
            machine,
            params,
            homes: Vec::new(),
            legs: Vec::new(),
            fixed: None,
            flows: FlowMemo::default(),
        }
    }

    /// Predicts the candidates that could win or come second, in floor
    /// order, and picks the cheapest; `None` when no candidate builds.
    pub(super) fn choose(mut self, candidates: Vec<ResolvedAlgorithm>, auto_legs: Vec<Leg>) -> Option<AutoChoice> {
        let mut held = Vec::with_capacity(candidates.len());
        for algorithm in candidates {
            let Some((h, floor)) = self.hold(&algorithm) else { continue };
            held.push((algorithm, h, floor_ns(floor)));
        }
        let (bound, _) = self.fixed?;
        let mut order: Vec<usize> = (0..held.len()).collect();
        order.sort_by_key(|&i| (held[i].2, i));
        let mut predicted: Vec<Option<u64>> = vec![None; held.len()];
        // The first and second place so far, as (prediction, position).
        let mut top: [Option<(u64, usize)>; 2] = [None, None];
        for i in order {
            // A prediction is at least its floor: a candidate whose floor
            // is above the second place (or equal and later in the order)
            // cannot take either place, nor can any after it.
            if top[1].is_some_and(|second| (held[i].2, i) > second) {
                break;
            }
            let p = whole_ns(self.predict(&held[i].1)?);
            predicted[i] = Some(p);
            match top {
                [Some(first), _] if (p, i) >= first => {
                    if top[1].is_none_or(|second| (p, i) < second) {
                        top[1] = Some((p, i));
                    }
                }
                [first, _] => top = [Some((p, i)), first],
            }
        }
        let chosen = top[0]?.1;
        let bound_ns = whole_ns(bound);
        let alternatives = held
            .into_iter()
            .zip(predicted)
            .map(|((algorithm, _, floor_ns), predicted_ns)| Alternative { algorithm, predicted_ns, floor_ns, bound_ns })
            .collect();
        Some(AutoChoice { chosen, alternatives, auto_legs })
    }

    /// Builds what `algorithm`'s floor needs and returns it with the
    /// floor, ns; `None` when it does not build.
    fn hold(&mut self, algorithm: &ResolvedAlgorithm) -> Option<(Held, f64)> {
        let chosen = match algorithm {
            ResolvedAlgorithm::Hier(chosen)
                if self.fixed.is_some() && chosen.iter().all(|l| self.leg(*l).is_some()) =>
            {
                return Some((Held::Legs(chosen.clone()), self.legs_sum(chosen, |l| Some(&l.floors))?));
            }
            ResolvedAlgorithm::Hier(chosen) => chosen,
            ResolvedAlgorithm::Flat(_) => {
                let schedule = build_alone(self.collective, self.machine, algorithm)?;
                let floor = self.whole_floor(&schedule)?;
                return Some((Held::Whole(schedule), floor));
            }
        };
        let schedule = build_alone(self.collective, self.machine, algorithm)?;
        let plan = schedule.collectives.first()?;
        let Some(runs) = leg_runs(plan) else {
            // Legs whose phases do not run one after another cannot be
            // costed apart: cost this combination whole, as
            // `choose_exhaustive` does, rather than drop it.
            let floor = self.whole_floor(&schedule)?;
            return Some((Held::Whole(schedule), floor));
        };
        self.fix(&schedule, plan);
        let home = self.homes.len();
        let mut coster = PhaseCoster::with_memo(&schedule, plan, self.params, true, &mut self.flows);
        for (&key, phases) in chosen.iter().zip(runs) {
            // (`self.leg`, borrowing only the legs: the coster holds the flows.)
            if !self.legs.iter().any(|l| l.key == key) {
                let floors = coster.times(phases.clone());
                self.legs.push(LegCost { key, home, phases, floors, times: None });
            }
        }
        self.homes.push(schedule);
        Some((Held::Legs(chosen.clone()), self.legs_sum(chosen, |l| Some(&l.floors))?))
    }

    /// The floor of a candidate built alone: the launch cost plus its
    /// phases' floors, summed as [`predict()`] sums their times.
    ///
    /// [`predict()`]: crate::cost::predict::predict
    fn whole_floor(&mut self, schedule: &Schedule) -> Option<f64> {
        let plan = schedule.collectives.first()?;
        self.fix(schedule, plan);
        let (_, launch) = self.fixed?;
        Some(launch + phase_times(PhaseCoster::with_memo(schedule, plan, self.params, true, &mut self.flows)))
    }

    /// Records the collective's bound and launch cost from the first plan
    /// built.
    fn fix(&mut self, schedule: &Schedule, plan: &CollectivePlan) {
        if self.fixed.is_none() {
            let nodes = nodes_spanned(schedule, plan);
            let bound = leg_bound(schedule, plan, nodes, None, self.params).total_ns();
            self.fixed = Some((bound, launch_ns(schedule, plan, self.params)));
        }
    }

    fn leg(&self, key: (Leg, AlgType)) -> Option<usize> {
        self.legs.iter().position(|l| l.key == key)
    }

    /// The launch cost plus, leg by leg in run order, the phase values
    /// `of` gives: the very sum [`predict()`] makes of a whole plan's
    /// phase times.
    ///
    /// [`predict()`]: crate::cost::predict::predict
    fn legs_sum(&self, chosen: &[(Leg, AlgType)], of: impl Fn(&LegCost) -> Option<&Vec<f64>>) -> Option<f64> {
        let mut at = 0.0;
        for &key in chosen {
            for t in of(self.legs.get(self.leg(key)?)?)? {
                at += t;
            }
        }
        let (_, launch) = self.fixed?;
        Some(launch + at)
    }

    /// The prediction of a held candidate, ns: a whole one's
    /// [`predict()`] total (the launch cost plus its phases' times, their
    /// network flows from [`Search::flows`]); a combination's from its
    /// legs' phase times, costing each leg the first time it is asked for.
    ///
    /// [`predict()`]: crate::cost::predict::predict
    fn predict(&mut self, held: &Held) -> Option<f64> {
        let chosen = match held {
            Held::Whole(schedule) => {
                // `predict()`'s total: the launch cost plus the phases'
                // times summed in run order.
                let plan = schedule.collectives.first()?;
                let (_, launch) = self.fixed?;
                return Some(
                    launch + phase_times(PhaseCoster::with_memo(schedule, plan, self.params, false, &mut self.flows)),
                );
            }
            Held::Legs(chosen) => chosen,
        };
        for &key in chosen {
            let l = self.leg(key)?;
            if self.legs[l].times.is_none() {
                let schedule = self.homes.get(self.legs[l].home)?;
                let plan = schedule.collectives.first()?;
                let mut coster = PhaseCoster::with_memo(schedule, plan, self.params, false, &mut self.flows);
                let times = coster.times(self.legs[l].phases.clone());
                self.legs[l].times = Some(times);
            }
        }
        self.legs_sum(chosen, |l| l.times.as_ref())
    }
}

/// The floor of `plan` built alone, ns: the launch cost plus its phases'
/// floors, summed as [`predict()`] sums their times.
///
/// [`predict()`]: crate::cost::predict::predict
pub(super) fn whole_floor(schedule: &Schedule, plan: &CollectivePlan, params: &ModelParams) -> f64 {
    launch_ns(schedule, plan, params) + phase_times(PhaseCoster::new(schedule, plan, params, true))
}

/// The times (or floors) `coster` gives every phase of its plan, summed in
/// run order as [`predict()`] sums them.
///
/// [`predict()`]: crate::cost::predict::predict
fn phase_times(mut coster: PhaseCoster<'_>) -> f64 {
    let mut at = 0.0;
    for t in coster.every_time() {
        at += t;
    }
    at
}

/// The phases of each leg of a hierarchical plan, in the plan's leg order;
/// `None` unless each leg's phases are one run, in that order.
fn leg_runs(plan: &CollectivePlan) -> Option<Vec<Range<usize>>> {
    let mut runs = Vec::with_capacity(plan.legs.len());
    let mut at = 0;
    for &(leg, _) in &plan.legs {
        let n = plan.phases.iter().skip(at).take_while(|p| p.leg == leg).count();
        runs.push(at..at + n);
        at += n;
    }
    (at == plan.phases.len()).then_some(runs)
}
