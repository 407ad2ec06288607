//! The search behind [`super::choose`]: a floor under every candidate's
//! prediction, then predictions in floor order until no candidate left
//! could win or come second (branch and bound, `docs/cost-model.md` §4).
//!
//! The candidates are planned first ([`Planned`]: each one's phases
//! composed as `build` composes them, not a whole schedule each; one that
//! would exceed a lowering limit that depends on the choice, the mesh
//! events per TOP_SP, the increments per mesh event or the descriptors
//! per step, is dropped there, `legal.rs`), then
//! costed on one [`PlanCx`] (the descriptor table, sampled members and
//! DMA rate every plan of the collective shares) and one [`FlowMemo`]
//! (network flows and scratch buffers). A floor is cheap: member 0's
//! steps costed alone ([`PhaseCoster`] with `floor`); it keeps member 0's
//! loads from the transfers ([`FirstLoads`]) for the prediction of the
//! same plan or leg to take, in `Search::firsts`. A pre-floor is cheaper
//! still ([`PreFloor`]: named from the phases' patterns, never above the
//! floor), first without the network's flows, then with them.
//! Candidates are held at the highest floor found for each and the least
//! is costed one step further (pre-floor with flows, walked floor,
//! prediction), so they are predicted by walked floor, ties by the
//! tie-break order, each exactly as before (`branch_and_bound`). Once the
//! least floor or pre-floor held is
//! above the runner-up so far (or equal to it and later in the order, so
//! it would lose the tie), no candidate left can take the first or second
//! place, and they are recorded with their floor (their pre-floor where
//! it was not walked), not predicted. The winner and the runner-up
//! (`compile`'s `next Y at T us`) are therefore the ones predicting every
//! candidate would give: the same argmin with the same tie-break.

use super::legal::{Bounds, Peaks, Refusal, Unit, events_needed, peaks, step_bounds};
use super::prefloor::{PhasePre, PreFloor};
use super::{Machine, NoChoice, Stands, floor_ns, whole_ns};
use crate::build::Planner;
use crate::cost::predict::{FirstLoads, FlowMemo, PhaseCoster, PlanCx, launch_ns};
use crate::cost::{ModelParams, leg_bound, nodes_spanned};
use crate::lower::Limit;
use crate::schedule::{CollectivePlan, Phase, Schedule};
use crate::valid::{Alternative, ResolvedAlgorithm, ValidCollective};
use ccc_ir::arch::ArchParams;
use ccc_ir::enums::AlgType;
use ccc_ir::spec::Leg;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

/// Room made up front for the floors' kept loads of member 0
/// ([`Search::firsts`]): about what the floors of an all-reduce's
/// candidates at 32 ranks walk from the transfers, so that the vector
/// rarely grows.
const FIRST_LOADS_RESERVED: usize = 32;

/// A candidate as the search holds it between its floor and its
/// prediction.
enum Held {
    /// Planned alone and costed whole (its plan's position in
    /// [`Planned::plans`]): a flat algorithm, or a combination whose
    /// legs' phases do not run one after another.
    Whole(usize),
    /// A hierarchical combination, costed leg by leg ([`LegCost`]).
    Legs,
}

/// One hierarchical leg choice: a leg's phases cost the same whichever
/// algorithms the other legs run, so each is costed once, on the first
/// combination planned that holds it.
struct LegCost {
    key: (Leg, AlgType),
    /// The plan it is costed on, and its phases there.
    home: usize,
    phases: Range<usize>,
    /// What bounds its phases ([`PhasePre`]), once asked for: where they
    /// sit in [`Search::pre_phases`].
    pre_phases: Option<Range<usize>>,
    /// Pre-floors under its phases' floors, in run order, once asked for,
    /// without and with the phases' network flows: where they sit in
    /// [`Search::values`].
    pres: [Option<Range<usize>>; 2],
    /// Floors under its phases' times, in run order, once asked for: where
    /// they sit in [`Search::values`].
    floors: Option<Range<usize>>,
    /// Its phases' predicted times, once asked for, in [`Search::values`].
    times: Option<Range<usize>>,
    /// Where its floor's walk kept member 0's loads, in [`Search::firsts`].
    firsts: Range<usize>,
    /// Its phases' mesh events per TOP_SP (`legal.rs`).
    events: Bounds,
    /// Its phases' per-step needs, bounded from their patterns
    /// (`legal.rs`).
    steps: Peaks,
    /// Its phases' per-step needs as lowering counts them, once asked
    /// for (only when `steps` exceeds a limit).
    settled: Option<Peaks>,
}

/// The candidates' plans: every flat algorithm's, and one combination's
/// for each leg choice not seen before (a combination of leg choices all
/// seen is costed from theirs and not planned). Which are planned depends
/// on the candidates alone, so they are all planned first and then costed
/// sharing one [`PlanCx`].
struct Planned {
    plans: Vec<CollectivePlan>,
    /// Each candidate that plans and lowers, with how it is held.
    held: Vec<(ResolvedAlgorithm, Held)>,
    legs: Vec<LegCost>,
    /// What the per-step bounds of every candidate share, from the first
    /// plan (`legal.rs`).
    unit: Option<Unit>,
    /// The mesh events per TOP_SP a candidate may take: the arch's less
    /// what the program's collectives before this one spent.
    room: u32,
    /// The candidates that plan but exceed a lowering limit
    /// (`legal.rs`): the one to name, and which ([`Refusal::before`]).
    refused: Option<(Refusal, ResolvedAlgorithm)>,
    /// At least the most mesh events per TOP_SP a held candidate needs
    /// (its bounds' most where that settled it, else its count).
    held_need: u32,
    /// The fewest mesh events a candidate refused for them needs
    /// (`u32::MAX`: none was).
    events_refused: u32,
}

impl Planned {
    /// Plans `candidates`, holding those that need at most `max` mesh
    /// events per TOP_SP.
    fn of(collective: &ValidCollective, schedule: &Schedule, max: u32, candidates: Vec<ResolvedAlgorithm>) -> Planned {
        let n = candidates.len();
        let params = schedule.arch.params();
        let mut planned = Planned {
            plans: Vec::with_capacity(n),
            held: Vec::with_capacity(n),
            legs: Vec::new(),
            unit: None,
            room: max,
            refused: None,
            held_need: 0,
            events_refused: u32::MAX,
        };
        // What every candidate's plan shares, found once.
        let mut planner = Planner::new(collective, &schedule.shape);
        for algorithm in candidates {
            // A combination of leg choices all seen: its needs are its
            // legs' (found with them).
            if let ResolvedAlgorithm::Hier(chosen) = &algorithm
                && let Some((events, steps)) = planned.legs_needs(chosen)
                && let Some(unit) = planned.unit
            {
                planned.hold(schedule, (params, unit), algorithm, Held::Legs, (events, steps), None);
                continue;
            }
            // As `build` plans it alone (the collective's first and only).
            let Ok(mut plan) = planner.plan(&algorithm) else { continue };
            plan.index = 0;
            let unit = *planned.unit.get_or_insert_with(|| Unit::of(params, &plan));
            let at = planned.plans.len();
            let h = match (&algorithm, leg_runs(&plan)) {
                (ResolvedAlgorithm::Hier(chosen), Some(runs)) => {
                    for (&key, phases) in chosen.iter().zip(runs) {
                        if planned.leg(key).is_none() {
                            let run = || plan.phases.get(phases.clone()).unwrap_or(&[]).iter().map(|p| (&plan, p));
                            let (events, steps) = (Bounds::of(run()), step_bounds(unit, run()));
                            let (pre_phases, pres) = (None, [None, None]);
                            let (floors, times, firsts, settled) = (None, None, 0..0, None);
                            planned.legs.push(LegCost {
                                key,
                                home: at,
                                phases,
                                pre_phases,
                                pres,
                                floors,
                                times,
                                firsts,
                                events,
                                steps,
                                settled,
                            });
                        }
                    }
                    Held::Legs
                }
                // Legs whose phases do not run one after another cannot
                // be costed apart: cost this combination whole, as
                // `choose_exhaustive` does, rather than drop it.
                _ => Held::Whole(at),
            };
            let whole = || plan.phases.iter().map(|p| (&plan, p));
            let needs = (Bounds::of(whole()), step_bounds(unit, whole()));
            planned.plans.push(plan);
            planned.hold(schedule, (params, unit), algorithm, h, needs, Some(at));
        }
        planned
    }

    /// Holds `algorithm` as `held` when it lowers: when its schedule needs
    /// no more mesh events per TOP_SP than the arch has, and no step more
    /// increments per mesh event or descriptors than lowering allows
    /// (`legal.rs`); otherwise records it as refused. `needs` bounds what
    /// it needs: the phases of plan `whole`, or (`None`) its legs', each
    /// leg's on the plan it is costed on; they are counted (member by
    /// member for the events, phase by phase for the rest) only when the
    /// bounds do not settle it. `arch` is the arch's parameters and the
    /// collective's [`Unit`].
    fn hold(
        &mut self,
        schedule: &Schedule,
        arch: (&ArchParams, Unit),
        algorithm: ResolvedAlgorithm,
        held: Held,
        needs: (Bounds, Peaks),
        whole: Option<usize>,
    ) {
        let (events, steps) = needs;
        let max = self.room;
        let needed = events.need(max, || {
            let mut phases: Vec<(&CollectivePlan, &Phase)> = Vec::new();
            let mut add = |home: usize, run: Option<Range<usize>>| {
                let Some(plan) = self.plans.get(home) else { return };
                let run = run.unwrap_or(0..plan.phases.len());
                phases.extend(plan.phases.get(run).unwrap_or(&[]).iter().map(|p| (plan, p)));
            };
            match (whole, &algorithm) {
                (Some(at), _) => add(at, None),
                (None, ResolvedAlgorithm::Hier(chosen)) => {
                    for l in chosen.iter().filter_map(|&key| self.legs.get(self.leg(key)?)) {
                        add(l.home, Some(l.phases.clone()));
                    }
                }
                (None, ResolvedAlgorithm::Flat(_)) => {}
            }
            events_needed(&schedule.shape, &phases)
        });
        let refusal = match needed {
            n if n > max => Some(Refusal { limit: Limit::MeshEvents, needed: u64::from(n) }),
            _ if steps.fits() => None,
            _ => self.settle(schedule, arch, &algorithm, whole).over().map(|(limit, needed)| Refusal { limit, needed }),
        };
        if refusal.is_some_and(|r| r.limit == Limit::MeshEvents) {
            self.events_refused = self.events_refused.min(needed);
        }
        match refusal {
            None => {
                self.held_need = self.held_need.max(needed);
                self.held.push((algorithm, held));
            }
            Some(r) if self.refused.as_ref().is_none_or(|(named, _)| r.before(*named)) => {
                self.refused = Some((r, algorithm));
            }
            _ => {}
        }
    }

    /// The per-step needs of `algorithm` as lowering counts them where its
    /// bounds exceed a limit (`legal::peaks`): of plan `whole`, or
    /// (`None`) of its legs, each leg's settled once, on the plan it is
    /// costed on.
    fn settle(
        &mut self,
        schedule: &Schedule,
        (params, unit): (&ArchParams, Unit),
        algorithm: &ResolvedAlgorithm,
        whole: Option<usize>,
    ) -> Peaks {
        let shape = &schedule.shape;
        match (whole, algorithm) {
            (Some(at), _) => {
                let Some(plan) = self.plans.get(at) else { return Peaks::default() };
                let phases: Vec<_> = plan.phases.iter().map(|p| (plan, p)).collect();
                peaks(shape, params, unit, &phases)
            }
            (None, ResolvedAlgorithm::Hier(chosen)) => {
                let mut most = Peaks::default();
                for &key in chosen {
                    let Some(i) = self.leg(key) else { continue };
                    let l = &self.legs[i];
                    let leg = match l.settled {
                        _ if l.steps.fits() => l.steps,
                        Some(settled) => settled,
                        None => {
                            let Some(plan) = self.plans.get(l.home) else { continue };
                            let run = plan.phases.get(l.phases.clone()).unwrap_or(&[]);
                            let phases: Vec<_> = run.iter().map(|p| (plan, p)).collect();
                            let settled = peaks(shape, params, unit, &phases);
                            self.legs[i].settled = Some(settled);
                            settled
                        }
                    };
                    most = most.max(leg);
                }
                most
            }
            (None, ResolvedAlgorithm::Flat(_)) => Peaks::default(),
        }
    }

    /// The mesh events (summed) and per-step needs (the larger of each)
    /// of a combination of `chosen` leg choices, over its legs; `None`
    /// unless every one has been seen.
    fn legs_needs(&self, chosen: &[(Leg, AlgType)]) -> Option<(Bounds, Peaks)> {
        chosen.iter().try_fold((Bounds::default(), Peaks::default()), |(events, steps), &key| {
            let l = self.legs.get(self.leg(key)?)?;
            Some((events + l.events, steps.max(l.steps)))
        })
    }

    fn leg(&self, key: (Leg, AlgType)) -> Option<usize> {
        self.legs.iter().position(|l| l.key == key)
    }
}

/// What one `Auto` choice costs its planned candidates with (it lives for
/// one choice: nothing is kept between validations).
pub(super) struct Search<'a> {
    schedule: &'a Schedule,
    plans: &'a [CollectivePlan],
    params: &'a ModelParams,
    /// What every plan's walk shares, made from the first plan.
    cx: &'a PlanCx<'a>,
    legs: Vec<LegCost>,
    /// The collective's launch cost, ns: the same for every candidate (it
    /// depends on the groups only).
    launch: f64,
    /// What the pre-floors read.
    pre: PreFloor<'a>,
    /// What bounds each phase whose pre-floor was asked for, plan by plan
    /// and leg by leg ([`PhasePre`]): found once, without and with the
    /// phases' network flows.
    pre_phases: Vec<PhasePre>,
    /// Where those of each plan costed whole sit in `pre_phases`, by plan.
    whole_pres: Vec<Option<Range<usize>>>,
    /// The phases' network flows, counted once for every candidate.
    flows: FlowMemo,
    /// Every leg's phase floors and times, one after another, as each
    /// [`LegCost`] asks for them (one vector, not one a leg).
    values: Vec<f64>,
    /// Member 0's loads as each floor walked them, for the prediction of
    /// the same phases to take (`PhaseCoster::recording`), one floor after
    /// another.
    firsts: FirstLoads,
    /// Where the floor of each plan costed whole kept them, by plan.
    whole_firsts: Vec<Range<usize>>,
}

/// Plans, floors and predicts `candidates` of `collective` on
/// `schedule` (the machine, no collective), as [`choose`](super::choose)
/// says: the position of the winner and every alternative that lowers.
///
/// # Errors
///
/// [`NoChoice`] when no candidate plans and lowers.
pub(super) fn choose(
    collective: &ValidCollective,
    machine: Machine,
    params: &ModelParams,
    candidates: Vec<ResolvedAlgorithm>,
) -> Result<(usize, Vec<Alternative>, Stands), NoChoice> {
    let schedule = &machine.schedule();
    let Planned { plans, held, legs, refused, held_need, events_refused, .. } =
        Planned::of(collective, schedule, machine.mesh_event_room(), candidates);
    if held.is_empty() {
        return Err(NoChoice::of(machine, refused));
    }
    let stands = Stands { from: held_need, below: events_refused };
    let Some(first) = plans.first() else { return Err(NoChoice::NonePlans) };
    match search(schedule, params, &plans, held, legs, first) {
        Some((chosen, alternatives)) => Ok((chosen, alternatives, stands)),
        None => Err(NoChoice::NonePlans),
    }
}

/// Floors and predicts the `held` candidates (`first` the first plan),
/// as [`choose`] says; `None` when a held candidate cannot be costed.
fn search(
    schedule: &Schedule,
    params: &ModelParams,
    plans: &[CollectivePlan],
    held: Vec<(ResolvedAlgorithm, Held)>,
    legs: Vec<LegCost>,
    first: &CollectivePlan,
) -> Option<(usize, Vec<Alternative>)> {
    // The collective's bound and launch cost are the same for every
    // candidate (they depend on the op, groups, size and channels only).
    let bound = leg_bound(schedule, first, nodes_spanned(schedule, first), None, params).total_ns();
    let cx = PlanCx::new(schedule, first, params);
    let launch = launch_ns(schedule, first, params);
    let (flows, values) = (FlowMemo::default(), Vec::new());
    let (firsts, whole_firsts) = (Vec::with_capacity(FIRST_LOADS_RESERVED), vec![0..0; plans.len()]);
    let (pre, pre_phases, whole_pres) = (PreFloor::new(schedule, params, &cx), Vec::new(), vec![None; plans.len()]);
    let mut search = Search {
        schedule,
        plans,
        params,
        cx: &cx,
        legs,
        launch,
        pre,
        pre_phases,
        whole_pres,
        flows,
        values,
        firsts,
        whole_firsts,
    };
    // Every candidate's pre-floor: its floor in the manifest unless its
    // floor is walked.
    let mut floors = Vec::with_capacity(held.len());
    for (algorithm, h) in &held {
        floors.push(floor_ns(search.pre_floor(algorithm, h, false)?));
    }
    let (top, predicted) = branch_and_bound(&mut floors, |i, ask| {
        let (algorithm, h) = held.get(i)?;
        Some(match ask {
            Ask::Flows => floor_ns(search.pre_floor(algorithm, h, true)?),
            Ask::Floor => floor_ns(search.floor(algorithm, h)?),
            Ask::Prediction => whole_ns(search.predict(algorithm, h)?),
        })
    })?;
    let chosen = top?.1;
    let bound_ns = whole_ns(bound);
    let alternatives = held
        .into_iter()
        .zip(floors)
        .zip(predicted)
        .map(|(((algorithm, _), floor_ns), predicted_ns)| Alternative { algorithm, predicted_ns, floor_ns, bound_ns })
        .collect();
    Some((chosen, alternatives))
}

/// A place in the search: (prediction, position), whole ns.
type Place = (u64, usize);

/// What [`branch_and_bound`] asks of a candidate, each at least the one
/// before it and at most the next: its pre-floor with the phases'
/// network flows counted (the first one it is given has none), its
/// walked floor, its prediction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ask {
    Flows,
    Floor,
    Prediction,
}

/// The branch and bound over candidates whose pre-floors (without
/// flows) are `floors` (whole ns, by position): `cost(i, ask)` costs
/// candidate `i` as `ask` says (whole ns; `None`: it cannot be costed).
/// The first place (prediction, position) and every prediction made;
/// `floors` ends with each candidate's highest floor found (its walked
/// floor where it was walked).
///
/// Every candidate is held with the highest floor found for it, least
/// (floor, position) first; the least is taken and costed one step
/// further (pre-floor with flows, walked floor, prediction) and held
/// again, until it is predicted. A candidate is therefore predicted only
/// once every other's floor is known to be at least its walked floor (a
/// floor is at least each of its pre-floors), so the candidates are
/// predicted in (floor, position) order, the very predictions a search
/// visiting them by walked floor makes. It stops when the least (floor,
/// position) held is above the second place (prediction, position): a
/// prediction is at least its floor, so none left can win or come second.
fn branch_and_bound(
    floors: &mut [u64],
    mut cost: impl FnMut(usize, Ask) -> Option<u64>,
) -> Option<(Option<Place>, Vec<Option<u64>>)> {
    // Each key holds its position, so no two are equal: the heap pops them
    // in one order whatever order they were pushed in.
    let held = floors.iter().enumerate().map(|(i, &pre)| Reverse((pre, i, Ask::Flows)));
    let mut held: BinaryHeap<Reverse<(u64, usize, Ask)>> = held.collect();
    let mut predicted: Vec<Option<u64>> = vec![None; floors.len()];
    // The first and second place so far, as (prediction, position).
    let mut top: [Option<Place>; 2] = [None, None];
    while let Some(Reverse((floor, i, ask))) = held.pop() {
        if top[1].is_some_and(|second| (floor, i) > second) {
            break;
        }
        if ask != Ask::Prediction {
            let found = cost(i, ask)?;
            *floors.get_mut(i)? = found;
            let next = if ask == Ask::Flows { Ask::Floor } else { Ask::Prediction };
            held.push(Reverse((found, i, next)));
            continue;
        }
        let p = cost(i, Ask::Prediction)?;
        *predicted.get_mut(i)? = Some(p);
        match top {
            [Some(first), _] if (p, i) >= first => {
                if top[1].is_none_or(|second| (p, i) < second) {
                    top[1] = Some((p, i));
                }
            }
            [first, _] => top = [Some((p, i)), first],
        }
    }
    Some((top[0], predicted))
}

impl Search<'_> {
    /// The pre-floor of a held candidate, ns ([`PreFloor`]), with the
    /// phases' network flows counted or not (`with_flows`): a whole one's
    /// launch cost plus its phases' pre-floors, a combination's from its
    /// legs', each leg's found the first time it is asked for; summed as
    /// [`Search::floor`] sums the phases' floors, so that, each under its
    /// phase's floor, the sum is under the floor's. What bounds each phase
    /// is found once for both ([`Search::pre_phases`]).
    fn pre_floor(&mut self, algorithm: &ResolvedAlgorithm, held: &Held, with_flows: bool) -> Option<f64> {
        let plans = self.plans;
        let chosen = match (held, algorithm) {
            (Held::Whole(at), _) => {
                let plan = plans.get(*at)?;
                let kept = self.kept_pres(*at, 0..plan.phases.len(), self.whole_pres.get(*at)?.clone())?;
                *self.whole_pres.get_mut(*at)? = Some(kept.clone());
                let mut total = 0.0;
                for (phase, k) in plan.phases.iter().zip(kept) {
                    let bound = *self.pre_phases.get(k)?;
                    total += self.pre_ns(plan, phase, bound, with_flows);
                }
                return Some(self.launch + total);
            }
            (Held::Legs, ResolvedAlgorithm::Hier(chosen)) => chosen,
            (Held::Legs, ResolvedAlgorithm::Flat(_)) => return None,
        };
        let which = usize::from(with_flows);
        let mut at = 0.0;
        for &key in chosen {
            let i = self.legs.iter().position(|l| l.key == key)?;
            let l = self.legs.get(i)?;
            if l.pres.get(which)?.is_none() {
                let (home, phases, kept) = (l.home, l.phases.clone(), l.pre_phases.clone());
                let plan = plans.get(home)?;
                let kept = self.kept_pres(home, phases.clone(), kept)?;
                let from = self.values.len();
                for (phase, k) in plan.phases.get(phases)?.iter().zip(kept.clone()) {
                    let bound = *self.pre_phases.get(k)?;
                    let ns = self.pre_ns(plan, phase, bound, with_flows);
                    self.values.push(ns);
                }
                let l = self.legs.get_mut(i)?;
                l.pre_phases = Some(kept);
                *l.pres.get_mut(which)? = Some(from..self.values.len());
            }
            for t in self.values.get(self.legs.get(i)?.pres.get(which)?.clone()?)? {
                at += t;
            }
        }
        Some(self.launch + at)
    }

    /// Where what bounds `phases` of plan `at` sits in
    /// [`Search::pre_phases`]: `kept`, or found now.
    fn kept_pres(&mut self, at: usize, phases: Range<usize>, kept: Option<Range<usize>>) -> Option<Range<usize>> {
        if kept.is_some() {
            return kept;
        }
        let plan = self.plans.get(at)?;
        let from = self.pre_phases.len();
        for phase in plan.phases.get(phases)? {
            self.pre_phases.push(self.pre.phase(plan, phase));
        }
        Some(from..self.pre_phases.len())
    }

    /// The pre-floor of `phase` of `plan`, which `bound` bounds: its
    /// bytes off the node at the node's whole network, or, `with_flows`,
    /// at the floor's share of it (its flows counted once, in
    /// [`Search::flows`], where the walks find them).
    fn pre_ns(&mut self, plan: &CollectivePlan, phase: &Phase, bound: PhasePre, with_flows: bool) -> f64 {
        let network = if with_flows && bound.off > 0.0 {
            self.pre.network(plan, phase, &mut self.flows)
        } else {
            self.params.node_inter
        };
        bound.ns(network)
    }

    /// The floor of a held candidate, ns: a whole one's launch cost plus
    /// its phases' floors, summed as [`predict()`] sums their times; a
    /// combination's from its legs' phase floors, flooring each leg the
    /// first time it is asked for.
    ///
    /// [`predict()`]: crate::cost::predict::predict
    fn floor(&mut self, algorithm: &ResolvedAlgorithm, held: &Held) -> Option<f64> {
        self.cost(algorithm, held, true)
    }

    /// The prediction of a held candidate, ns: a whole one's
    /// [`predict()`] total (the launch cost plus its phases' times, their
    /// network flows from [`Search::flows`]); a combination's from its
    /// legs' phase times, costing each leg the first time it is asked for.
    ///
    /// [`predict()`]: crate::cost::predict::predict
    fn predict(&mut self, algorithm: &ResolvedAlgorithm, held: &Held) -> Option<f64> {
        self.cost(algorithm, held, false)
    }

    /// [`Search::floor`] (`floor`) or [`Search::predict`].
    fn cost(&mut self, algorithm: &ResolvedAlgorithm, held: &Held, floor: bool) -> Option<f64> {
        let (schedule, params, cx) = (self.schedule, self.params, self.cx);
        let chosen = match (held, algorithm) {
            (Held::Whole(at), _) => {
                let plan = self.plans.get(*at)?;
                let coster = PhaseCoster::new(schedule, plan, params, cx, floor).with_memo(&mut self.flows);
                let kept = self.whole_firsts.get_mut(*at)?;
                let total = if floor {
                    let from = self.firsts.len();
                    let total = coster.recording(&mut self.firsts).total();
                    *kept = from..self.firsts.len();
                    total
                } else {
                    coster.replaying(self.firsts.get(kept.clone()).unwrap_or_default()).total()
                };
                return Some(self.launch + total);
            }
            (Held::Legs, ResolvedAlgorithm::Hier(chosen)) => chosen,
            (Held::Legs, ResolvedAlgorithm::Flat(_)) => return None,
        };
        let mut at = 0.0;
        for &key in chosen {
            let l = self.legs.iter_mut().find(|l| l.key == key)?;
            let known = if floor { &mut l.floors } else { &mut l.times };
            if known.is_none() {
                let plan = self.plans.get(l.home)?;
                let coster = PhaseCoster::new(schedule, plan, params, cx, floor).with_memo(&mut self.flows);
                let from = self.values.len();
                if floor {
                    let first = self.firsts.len();
                    coster.recording(&mut self.firsts).times(l.phases.clone(), &mut self.values);
                    l.firsts = first..self.firsts.len();
                } else {
                    let kept = self.firsts.get(l.firsts.clone()).unwrap_or_default();
                    coster.replaying(kept).times(l.phases.clone(), &mut self.values);
                }
                *known = Some(from..self.values.len());
            }
            // The launch cost plus, leg by leg in run order, the phase
            // values: the very sum [`predict()`] makes of a whole plan's.
            for t in self.values.get(known.clone()?)? {
                at += t;
            }
        }
        Some(self.launch + at)
    }
}

/// The floor of `plan` built alone, ns: the launch cost plus its phases'
/// floors, summed as [`predict()`] sums their times.
///
/// [`predict()`]: crate::cost::predict::predict
pub(super) fn whole_floor(schedule: &Schedule, plan: &CollectivePlan, params: &ModelParams) -> f64 {
    let cx = PlanCx::new(schedule, plan, params);
    launch_ns(schedule, plan, params) + PhaseCoster::new(schedule, plan, params, &cx, true).total()
}

/// The phases of each leg of a hierarchical plan, in the plan's leg order;
/// `None` unless each leg's phases are one run, in that order. Named as
/// they are asked for, not collected (a plan per new leg choice).
fn leg_runs(plan: &CollectivePlan) -> Option<impl Iterator<Item = Range<usize>> + Clone + '_> {
    let runs = plan.legs.iter().scan(0, |at: &mut usize, &(leg, _)| {
        let n = plan.phases.iter().skip(*at).take_while(|p| p.leg == leg).count();
        let run = *at..*at + n;
        *at += n;
        Some(run)
    });
    let end = runs.clone().last().map_or(0, |run| run.end);
    (end == plan.phases.len()).then_some(runs)
}

#[cfg(test)]
mod tests {
    use super::{Ask, branch_and_bound};

    /// Runs [`branch_and_bound`] over candidates given as (pre-floor,
    /// pre-floor with flows, floor, prediction): the winner's position,
    /// the predictions made, the floors recorded and the floors walked, in
    /// the order walked.
    fn run(c: &[(u64, u64, u64, u64)]) -> (usize, Vec<Option<u64>>, Vec<u64>, Vec<usize>) {
        let mut floors: Vec<u64> = c.iter().map(|x| x.0).collect();
        let mut walked = Vec::new();
        let (top, predicted) = branch_and_bound(&mut floors, |i, ask| {
            let &(_, flows, floor, p) = c.get(i)?;
            Some(match ask {
                Ask::Flows => flows,
                Ask::Floor => {
                    walked.push(i);
                    floor
                }
                Ask::Prediction => p,
            })
        })
        .unwrap();
        (top.unwrap().1, predicted, floors, walked)
    }

    /// A candidate whose pre-floor (then floor) equals the second place's
    /// prediction but comes earlier in the order would take the second
    /// place on the tie: it is walked and predicted, and does.
    #[test]
    fn an_equal_key_earlier_in_the_order_is_still_predicted() {
        // 0 wins; 2 is predicted second first; 1 ties it and is earlier.
        let (winner, predicted, _, _) = run(&[(5, 5, 5, 5), (20, 20, 20, 20), (10, 10, 10, 20)]);
        assert_eq!(winner, 0);
        assert_eq!(predicted, [Some(5), Some(20), Some(20)]);
        // Later in the order, the tie loses: not walked, its pre-floor kept.
        let (_, predicted, floors, walked) = run(&[(5, 5, 5, 5), (10, 10, 10, 20), (20, 20, 20, 20)]);
        assert_eq!(predicted, [Some(5), Some(20), None]);
        assert_eq!((floors, walked), (vec![5, 10, 20], vec![0, 1]));
    }

    /// Predictions go in walked-floor order, not pre-floor order: a
    /// candidate with a low pre-floor but a high floor is walked, not
    /// predicted; one whose pre-floor is out of reach is not walked.
    #[test]
    fn predictions_follow_the_walked_floors() {
        let c = [(1, 1, 100, 100), (2, 2, 5, 5), (3, 3, 6, 6), (4, 4, 7, 50), (9, 9, 9, 9)];
        let (winner, predicted, floors, walked) = run(&c);
        assert_eq!(winner, 1);
        assert_eq!(predicted, [None, Some(5), Some(6), None, None]);
        // 4's pre-floor, 9, is above the second place, 6: never walked.
        assert_eq!((floors, walked), (vec![100, 5, 6, 7, 9], vec![0, 1, 2, 3]));
    }

    /// A pre-floor with flows out of reach spares the walk, and is the
    /// floor recorded.
    #[test]
    fn the_flows_spare_a_walk() {
        let (winner, predicted, floors, walked) = run(&[(1, 1, 5, 5), (2, 2, 6, 6), (3, 50, 60, 60)]);
        assert_eq!(winner, 0);
        assert_eq!(predicted, [Some(5), Some(6), None]);
        assert_eq!((floors, walked), (vec![5, 6, 50], vec![0, 1]));
    }
}
