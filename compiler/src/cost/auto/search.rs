//! The search behind [`super::choose`]: a floor under every candidate's
//! prediction, then predictions in floor order until no candidate left
//! could win or come second (branch and bound, `docs/cost-model.md` §4).
//!
//! The candidates are planned first ([`Store::of`]: each one's phases
//! composed as `build` composes them, not a whole schedule each), then
//! judged for the mesh events left ([`Store::hold`]: one that would
//! exceed a lowering limit that depends on the choice, the mesh events
//! per TOP_SP, the increments per mesh event or the descriptors per step,
//! is dropped there, `legal.rs`), then costed on one [`PlanCx`] (the
//! descriptor table, sampled members and DMA rate every plan of the
//! collective shares) and one [`FlowMemo`] (network flows and scratch
//! buffers). A floor is cheap: member 0's
//! steps costed alone ([`PhaseCoster`] with `floor`); it keeps member 0's
//! loads from the transfers ([`FirstLoads`]) for the prediction of the
//! same plan or leg to take, in `Costs::firsts`. A pre-floor is cheaper
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
//!
//! **What is kept.** The plans, every need counted and every value costed
//! (a candidate's pre-floors, floor and prediction, a leg's phase values,
//! the flows, member 0's loads) depend on the collective and the machine
//! and not on the mesh events left: only which candidates are held, and
//! so what the branch and bound asks, does. A [`Store`] keeps them, each
//! found the first time a choice asks for it, so that a choice for the
//! same collective with fewer events left ([`Store::choose`] again) judges
//! and searches afresh over the values found, costing only what it asks
//! for and no earlier choice did. What it records is what it asked for
//! (an alternative's floor is the last value it asked of it), whatever
//! else earlier choices found: the very choice a fresh store makes.

use super::legal::{Bounds, LIMITS_JUDGED, Peaks, Refusal, Unit, events_needed, peaks, step_bounds};
use super::prefloor::{PhasePre, PreFloor};
use super::{Machine, NoChoice, Stands, floor_ns, whole_ns};
use crate::build::Planner;
use crate::cost::predict::{FirstLoads, FlowMemo, PhaseCoster, PlanCx, launch_ns};
use crate::cost::{ModelParams, leg_bound, nodes_spanned};
use crate::lower::Limit;
use crate::schedule::{CollectivePlan, Phase, Schedule};
use crate::valid::{Alternative, ResolvedAlgorithm, ValidCollective};
use ccc_ir::enums::AlgType;
use ccc_ir::spec::Leg;
use std::cell::OnceCell;
use std::ops::Range;

/// Room made up front for the floors' kept loads of member 0
/// ([`Costs::firsts`]): about what the floors of an all-reduce's
/// candidates at 32 ranks walk from the transfers, so that the vector
/// rarely grows.
const FIRST_LOADS_RESERVED: usize = 32;

/// How many things [`branch_and_bound`] asks of a candidate ([`Ask`]).
const ASKS: usize = 3;

/// A candidate as the search holds it between its floor and its
/// prediction.
enum Held {
    /// Planned alone and costed whole (its plan's position in
    /// [`Store::plans`]): a flat algorithm, or a combination whose
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
    /// sit in [`Costs::pre_phases`].
    pre_phases: Option<Range<usize>>,
    /// Pre-floors under its phases' floors, in run order, once asked for,
    /// without and with the phases' network flows: where they sit in
    /// [`Costs::values`].
    pres: [Option<Range<usize>>; 2],
    /// Floors under its phases' times, in run order, once asked for: where
    /// they sit in [`Costs::values`].
    floors: Option<Range<usize>>,
    /// Its phases' predicted times, once asked for, in [`Costs::values`].
    times: Option<Range<usize>>,
    /// Where its floor's walk kept member 0's loads, in [`Costs::firsts`].
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

/// A candidate that plans, as a [`Store`] keeps it (its algorithm apart,
/// in [`Store::algorithms`]): how it is costed, what it needs, and what
/// has been found of it.
struct Candidate {
    held: Held,
    /// Bounds on the mesh events per TOP_SP it needs and on its per-step
    /// needs (`legal.rs`).
    needs: (Bounds, Peaks),
    /// The plan whose phases it needs: `Some` for one planned, `None` for
    /// a combination of legs all seen before (each leg's on the plan it is
    /// costed on).
    whole: Option<usize>,
    /// Its mesh events per TOP_SP as lowering counts them, once asked for
    /// (only when its bounds do not settle whether it is held).
    counted: Option<u32>,
    /// Its per-step needs as lowering counts them, once asked for (only
    /// when `needs` exceeds a limit).
    settled: Option<Peaks>,
    /// Its pre-floor without the network's flows, whole ns, once asked
    /// for.
    pre: Option<u64>,
    /// What [`branch_and_bound`] asked of it (by [`Ask`]), whole ns, once
    /// asked for.
    asked: [Option<u64>; ASKS],
}

/// What one collective's candidates on one machine are costed with, kept
/// across choices ([`Store`]): the values found so far and where each
/// sits.
struct Costs {
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

/// A collective's candidates on one machine, planned, with every need
/// and value found of them so far (see the module doc): the part of
/// [`super::choose`] that does not depend on the mesh events spent.
pub(super) struct Store {
    /// The machine, without collectives.
    schedule: Schedule,
    params: ModelParams,
    /// Every flat algorithm's plan, and one combination's for each leg
    /// choice not seen before (a combination of leg choices all seen is
    /// costed from theirs and not planned). Which are planned depends on
    /// the candidates alone.
    plans: Vec<CollectivePlan>,
    /// Each candidate that plans, in the candidates' order.
    candidates: Vec<Candidate>,
    /// Their algorithms, by position.
    algorithms: Vec<ResolvedAlgorithm>,
    legs: Vec<LegCost>,
    /// What the per-step bounds of every candidate share, from the first
    /// plan (`legal.rs`).
    unit: Option<Unit>,
    costs: Costs,
    /// The collective's bound, whole ns, once asked for: the same for
    /// every candidate (it depends on the op, groups, size and channels
    /// only).
    bound_ns: Option<u64>,
}

/// The candidates one choice holds (positions in [`Store::candidates`],
/// in order), with what [`Stands`] is made of and the refused one to
/// name.
struct Holding {
    held: Vec<usize>,
    /// The candidates that plan but exceed a lowering limit
    /// (`legal.rs`): for each limit ([`Refusal::order`]), the one to name
    /// ([`Refusal::before`]: the fewest needed, the first of equals).
    refused: [Option<(Refusal, usize)>; LIMITS_JUDGED],
    /// At least the most mesh events per TOP_SP a held candidate needs
    /// (its bounds' most where that settled it, else its count).
    held_need: u32,
    /// The fewest mesh events a candidate refused for them needs
    /// (`u32::MAX`: none was).
    events_refused: u32,
}

/// What one choice found: the winner's position among the held
/// candidates and what is recorded of each.
pub(super) struct Found {
    chosen: usize,
    /// The held candidates' positions in [`Store::candidates`], in order.
    held: Vec<usize>,
    /// Each held one's floor recorded: the last value asked of it.
    floors: Vec<u64>,
    predicted: Vec<Option<u64>>,
    bound_ns: u64,
    /// The rooms over which the choice stands.
    pub(super) stands: Stands,
}

impl Store {
    /// Plans `candidates` of `collective` on `schedule` (the machine, no
    /// collective), with what bounds their needs; nothing costed yet.
    pub(super) fn of(
        collective: &ValidCollective,
        schedule: Schedule,
        params: ModelParams,
        candidates: Vec<ResolvedAlgorithm>,
    ) -> Store {
        let n = candidates.len();
        let arch = schedule.arch.params();
        let (mut plans, mut planned, mut legs) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::new());
        let mut algorithms = Vec::with_capacity(n);
        let mut unit: Option<Unit> = None;
        // What every candidate's plan shares, found once.
        let mut planner = Planner::new(collective, &schedule.shape);
        for algorithm in candidates {
            let (counted, settled, pre, asked) = (None, None, None, [None; ASKS]);
            // A combination of leg choices all seen: its needs are its
            // legs' (found with them).
            if let ResolvedAlgorithm::Hier(chosen) = &algorithm
                && let Some(needs) = legs_needs(&legs, chosen)
                && unit.is_some()
            {
                let (held_as, whole) = (Held::Legs, None);
                planned.push(Candidate { held: held_as, needs, whole, counted, settled, pre, asked });
                algorithms.push(algorithm);
                continue;
            }
            // As `build` plans it alone (the collective's first and only).
            let Ok(mut plan) = planner.plan(&algorithm) else { continue };
            plan.index = 0;
            let unit = *unit.get_or_insert_with(|| Unit::of(arch, &plan));
            // What `step_bounds` finds of every phase of a quiet plan,
            // asked once for the plan.
            let quiet = unit.quiet(&plan);
            let at = plans.len();
            // A leg's phases cost the same in every combination, but with
            // more than one costed group the slowest group of a combination
            // may be another's in each leg: such combinations are costed
            // whole.
            let one_group = plan.groups.costed().len() == 1;
            let h = match (&algorithm, leg_runs(&plan).filter(|_| one_group)) {
                (ResolvedAlgorithm::Hier(chosen), Some(runs)) => {
                    for (&key, phases) in chosen.iter().zip(runs) {
                        if leg(&legs, key).is_none() {
                            let run = || plan.phases.get(phases.clone()).unwrap_or(&[]).iter().map(|p| (&plan, p));
                            let steps = if quiet { Peaks::default() } else { step_bounds(unit, run()) };
                            let events = Bounds::of(run());
                            let (pre_phases, pres) = (None, [None, None]);
                            let (floors, times, firsts, settled) = (None, None, 0..0, None);
                            legs.push(LegCost {
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
            let needs = (Bounds::of(whole()), if quiet { Peaks::default() } else { step_bounds(unit, whole()) });
            plans.push(plan);
            planned.push(Candidate { held: h, needs, whole: Some(at), counted, settled, pre, asked });
            algorithms.push(algorithm);
        }
        // Room for what bounds every phase of every plan, and for each
        // leg's four values a phase (two pre-floors, a floor, a time): the
        // most a store keeps, allocated once.
        let phases: usize = plans.iter().map(|p| p.phases.len()).sum();
        let leg_phases: usize = legs.iter().map(|l| l.phases.len()).sum();
        let costs = Costs {
            pre_phases: Vec::with_capacity(phases),
            whole_pres: vec![None; plans.len()],
            flows: FlowMemo::default(),
            values: Vec::with_capacity(4 * leg_phases),
            firsts: Vec::with_capacity(FIRST_LOADS_RESERVED),
            whole_firsts: vec![0..0; plans.len()],
        };
        Store { schedule, params, plans, candidates: planned, algorithms, legs, unit, costs, bound_ns: None }
    }

    /// Judges, floors and predicts the candidates for `machine` (as the
    /// store's, with its events spent), as [`choose`](super::choose)
    /// says, from the values found so far, finding those it asks for and
    /// keeping them.
    ///
    /// # Errors
    ///
    /// [`NoChoice`] when no candidate plans and lowers, or the cheapest
    /// is predicted past what whole nanoseconds hold.
    pub(super) fn choose(&mut self, machine: Machine) -> Result<Found, NoChoice> {
        let Holding { held, refused, held_need, events_refused } = self.hold(machine.mesh_event_room());
        if held.is_empty() {
            let refused = refused.into_iter().flatten().filter_map(|(r, c)| Some((r, *self.algorithms.get(c)?)));
            return Err(NoChoice::of(machine, refused.collect()));
        }
        let stands = Stands { from: held_need, below: events_refused };
        let found = self.search(held, stands).ok_or(NoChoice::NonePlans)?;
        // A winner at the saturated whole-ns value may tie with others
        // there that are cheaper: nothing can be chosen honestly.
        if found.predicted.get(found.chosen) == Some(&Some(u64::MAX)) {
            return Err(NoChoice::OutOfRange);
        }
        Ok(found)
    }

    /// The alternatives of `found` ([`Store::choose`]), their algorithms
    /// copied from the store.
    pub(super) fn alternatives(&self, found: Found) -> (usize, Vec<Alternative>) {
        let Found { chosen, held, floors, predicted, bound_ns, .. } = found;
        let mut alternatives = Vec::with_capacity(held.len());
        for ((c, floor_ns), predicted_ns) in held.into_iter().zip(floors).zip(predicted) {
            let Some(algorithm) = self.algorithms.get(c).copied() else { continue };
            alternatives.push(Alternative { algorithm, predicted_ns, floor_ns, bound_ns });
        }
        (chosen, alternatives)
    }

    /// Holds each candidate that lowers with `room` mesh events per
    /// TOP_SP left: that needs no more of them than that, and no step
    /// more increments per mesh event or descriptors than lowering allows
    /// (`legal.rs`); records the others as refused. Its needs are counted
    /// (member by member for the events, phase by phase for the rest) only
    /// when the bounds do not settle it, once for every choice.
    fn hold(&mut self, room: u32) -> Holding {
        let n = self.candidates.len();
        let mut h = Holding {
            held: Vec::with_capacity(n),
            refused: [None; LIMITS_JUDGED],
            held_need: 0,
            events_refused: u32::MAX,
        };
        for c in 0..n {
            let Some(&Candidate { needs: (events, steps), .. }) = self.candidates.get(c) else { continue };
            let needed = events.need(room, || self.count(c));
            let refusal = match needed {
                n if n > room => Some(Refusal { limit: Limit::MeshEvents, needed: u64::from(n) }),
                _ if steps.fits() => None,
                _ => self.settle(c).over().map(|(limit, needed)| Refusal { limit, needed }),
            };
            if refusal.is_some_and(|r| r.limit == Limit::MeshEvents) {
                h.events_refused = h.events_refused.min(needed);
            }
            match refusal {
                None => {
                    h.held_need = h.held_need.max(needed);
                    h.held.push(c);
                }
                Some(r) => {
                    let named = &mut h.refused[r.order()];
                    if named.is_none_or(|(n, _)| r.before(n)) {
                        *named = Some((r, c));
                    }
                }
            }
        }
        h
    }

    /// The mesh events per TOP_SP candidate `c` needs as lowering counts
    /// them: its plan's phases, or its legs', each leg's on the plan it is
    /// costed on; counted once.
    fn count(&mut self, c: usize) -> u32 {
        let Some(candidate) = self.candidates.get(c) else { return 0 };
        if let Some(counted) = candidate.counted {
            return counted;
        }
        let mut phases: Vec<(&CollectivePlan, &Phase)> = Vec::new();
        let mut add = |home: usize, run: Option<Range<usize>>| {
            let Some(plan) = self.plans.get(home) else { return };
            let run = run.unwrap_or(0..plan.phases.len());
            phases.extend(plan.phases.get(run).unwrap_or(&[]).iter().map(|p| (plan, p)));
        };
        match (candidate.whole, self.algorithms.get(c)) {
            (Some(at), _) => add(at, None),
            (None, Some(ResolvedAlgorithm::Hier(chosen))) => {
                for l in chosen.iter().filter_map(|&key| self.legs.get(leg(&self.legs, key)?)) {
                    add(l.home, Some(l.phases.clone()));
                }
            }
            (None, _) => {}
        }
        let counted = events_needed(&self.schedule.shape, &phases);
        if let Some(candidate) = self.candidates.get_mut(c) {
            candidate.counted = Some(counted);
        }
        counted
    }

    /// The per-step needs of candidate `c` as lowering counts them where
    /// its bounds exceed a limit (`legal::peaks`): of its plan, or of its
    /// legs, each leg's settled once, on the plan it is costed on.
    fn settle(&mut self, c: usize) -> Peaks {
        let (Some(candidate), Some(unit)) = (self.candidates.get(c), self.unit) else { return Peaks::default() };
        if let Some(settled) = candidate.settled {
            return settled;
        }
        let (shape, params) = (&self.schedule.shape, self.schedule.arch.params());
        let settled = match (candidate.whole, self.algorithms.get(c)) {
            (Some(at), _) => {
                let Some(plan) = self.plans.get(at) else { return Peaks::default() };
                let phases: Vec<_> = plan.phases.iter().map(|p| (plan, p)).collect();
                peaks(shape, params, unit, &phases)
            }
            (None, Some(ResolvedAlgorithm::Hier(chosen))) => {
                let mut most = Peaks::default();
                for &key in chosen {
                    let Some(i) = leg(&self.legs, key) else { continue };
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
            (None, _) => Peaks::default(),
        };
        if let Some(candidate) = self.candidates.get_mut(c) {
            candidate.settled = Some(settled);
        }
        settled
    }

    /// Floors and predicts the `held` candidates, as [`choose`](super::choose) says,
    /// each value taken from the store where an earlier choice found it
    /// (`stands`: the rooms over which the choice stands); `None` when a
    /// held candidate cannot be costed.
    fn search(&mut self, held: Vec<usize>, stands: Stands) -> Option<Found> {
        let Store { schedule, params, plans, candidates, algorithms, legs, costs, bound_ns, .. } = self;
        let (schedule, params, plans) = (&*schedule, &*params, &plans[..]);
        let first = plans.first()?;
        // What costing shares, made the first time a value is not kept
        // (a choice whose values were all found before makes none).
        let made: OnceCell<Made<'_>> = OnceCell::new();
        let mut value = |c: usize, ask: Option<Ask>| -> Option<u64> {
            let at = *held.get(c)?;
            let (candidate, algorithm) = (candidates.get_mut(at)?, algorithms.get(at)?);
            let kept = match ask {
                None => &mut candidate.pre,
                Some(ask) => candidate.asked.get_mut(ask as usize)?,
            };
            if let Some(v) = *kept {
                return Some(v);
            }
            let m = made.get_or_init(|| Made::new(schedule, first, params));
            let (cx, launch, pre) = (&m.cx, m.launch, &m.pre);
            let mut search = Search { schedule, plans, params, cx, legs, launch, pre, c: costs };
            let h = &candidate.held;
            let v = match ask {
                None => floor_ns(search.pre_floor(algorithm, h, false)?),
                Some(Ask::Flows) => floor_ns(search.pre_floor(algorithm, h, true)?),
                Some(Ask::Floor) => floor_ns(search.floor(algorithm, h)?),
                Some(Ask::Prediction) => whole_ns(search.predict(algorithm, h)?),
            };
            *kept = Some(v);
            Some(v)
        };
        // Every candidate's pre-floor: its floor in the manifest unless its
        // floor is walked.
        let mut floors = Vec::with_capacity(held.len());
        for c in 0..held.len() {
            floors.push(value(c, None)?);
        }
        let (top, predicted) = branch_and_bound(&mut floors, |c, ask| value(c, Some(ask)))?;
        let chosen = top?.1;
        // The collective's bound is the same for every candidate (it
        // depends on the op, groups, size and channels only).
        let bound = *bound_ns.get_or_insert_with(|| {
            whole_ns(leg_bound(schedule, first, nodes_spanned(schedule, first), None, params).total_ns())
        });
        Some(Found { chosen, held, floors, predicted, bound_ns: bound, stands })
    }
}

/// The mesh events (summed) and per-step needs (the larger of each) of a
/// combination of `chosen` leg choices, over its `legs`; `None` unless
/// every one has been seen.
fn legs_needs(legs: &[LegCost], chosen: &[(Leg, AlgType)]) -> Option<(Bounds, Peaks)> {
    chosen.iter().try_fold((Bounds::default(), Peaks::default()), |(events, steps), &key| {
        let l = legs.get(leg(legs, key)?)?;
        Some((events + l.events, steps.max(l.steps)))
    })
}

/// Where leg choice `key` sits in `legs`.
fn leg(legs: &[LegCost], key: (Leg, AlgType)) -> Option<usize> {
    legs.iter().position(|l| l.key == key)
}

/// What costing a store's candidates reads that is made from its first
/// plan: made once a choice, when it first costs anything.
struct Made<'a> {
    /// What every plan's walk shares.
    cx: PlanCx<'a>,
    /// The collective's launch cost, ns: the same for every candidate (it
    /// depends on the groups only).
    launch: f64,
    /// What the pre-floors read.
    pre: PreFloor<'a>,
}

impl<'a> Made<'a> {
    fn new(schedule: &'a Schedule, first: &'a CollectivePlan, params: &'a ModelParams) -> Made<'a> {
        let cx = PlanCx::new(schedule, first, params);
        let launch = launch_ns(schedule, first, params);
        let pre = PreFloor::new(schedule, params, &cx);
        Made { cx, launch, pre }
    }
}

/// What one value a choice asks of its candidates is costed with: the
/// store's plans and the values kept (see [`Costs`]), and what is made
/// from its first plan ([`Made`]).
struct Search<'a> {
    schedule: &'a Schedule,
    plans: &'a [CollectivePlan],
    params: &'a ModelParams,
    /// What every plan's walk shares, made from the first plan.
    cx: &'a PlanCx<'a>,
    legs: &'a mut [LegCost],
    /// The collective's launch cost, ns.
    launch: f64,
    /// What the pre-floors read.
    pre: &'a PreFloor<'a>,
    /// The values kept.
    c: &'a mut Costs,
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
    // Each key holds its position, so no two are equal: held greatest
    // first, the least is popped from the end, in one order whatever
    // order they were pushed in (a handful of candidates: a sorted vector
    // costs less than a heap's sifting).
    let mut held: Vec<(u64, usize, Ask)> = floors.iter().enumerate().map(|(i, &pre)| (pre, i, Ask::Flows)).collect();
    held.sort_unstable_by(|a, b| b.cmp(a));
    let mut predicted: Vec<Option<u64>> = vec![None; floors.len()];
    // The first and second place so far, as (prediction, position).
    let mut top: [Option<Place>; 2] = [None, None];
    while let Some((floor, i, ask)) = held.pop() {
        if top[1].is_some_and(|second| (floor, i) > second) {
            break;
        }
        if ask != Ask::Prediction {
            let found = cost(i, ask)?;
            *floors.get_mut(i)? = found;
            let next = if ask == Ask::Flows { Ask::Floor } else { Ask::Prediction };
            let key = (found, i, next);
            held.insert(held.partition_point(|&k| k > key), key);
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
    /// is found once for both ([`Costs::pre_phases`]).
    fn pre_floor(&mut self, algorithm: &ResolvedAlgorithm, held: &Held, with_flows: bool) -> Option<f64> {
        let plans = self.plans;
        let chosen = match (held, algorithm) {
            (Held::Whole(at), _) => {
                let plan = plans.get(*at)?;
                let kept = self.kept_pres(*at, 0..plan.phases.len(), self.c.whole_pres.get(*at)?.clone())?;
                *self.c.whole_pres.get_mut(*at)? = Some(kept.clone());
                let mut total = 0.0;
                for (phase, k) in plan.phases.iter().zip(kept) {
                    let bound = *self.c.pre_phases.get(k)?;
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
                let from = self.c.values.len();
                for (phase, k) in plan.phases.get(phases)?.iter().zip(kept.clone()) {
                    let bound = *self.c.pre_phases.get(k)?;
                    let ns = self.pre_ns(plan, phase, bound, with_flows);
                    self.c.values.push(ns);
                }
                let l = self.legs.get_mut(i)?;
                l.pre_phases = Some(kept);
                *l.pres.get_mut(which)? = Some(from..self.c.values.len());
            }
            for t in self.c.values.get(self.legs.get(i)?.pres.get(which)?.clone()?)? {
                at += t;
            }
        }
        Some(self.launch + at)
    }

    /// Where what bounds `phases` of plan `at` sits in
    /// [`Costs::pre_phases`]: `kept`, or found now.
    fn kept_pres(&mut self, at: usize, phases: Range<usize>, kept: Option<Range<usize>>) -> Option<Range<usize>> {
        if kept.is_some() {
            return kept;
        }
        let plan = self.plans.get(at)?;
        let from = self.c.pre_phases.len();
        // Member 0 placed once per run of phases placed alike.
        let mut placer = plan.placer(0);
        for phase in plan.phases.get(phases)? {
            let inst = placer.place(phase);
            self.c.pre_phases.push(self.pre.placed(plan, phase, inst));
        }
        Some(from..self.c.pre_phases.len())
    }

    /// The pre-floor of `phase` of `plan`, which `bound` bounds: its
    /// bytes off the node at the node's whole network, or, `with_flows`,
    /// at the floor's share of it (its flows counted once, in
    /// [`Costs::flows`], where the walks find them).
    fn pre_ns(&mut self, plan: &CollectivePlan, phase: &Phase, bound: PhasePre, with_flows: bool) -> f64 {
        let network = if with_flows && bound.off > 0.0 {
            self.pre.network(plan, phase, &mut self.c.flows)
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
    /// network flows from [`Costs::flows`]); a combination's from its
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
                let coster = PhaseCoster::new(schedule, plan, params, cx, floor).with_memo(&mut self.c.flows);
                let kept = self.c.whole_firsts.get_mut(*at)?;
                let total = if floor {
                    let from = self.c.firsts.len();
                    let total = coster.recording(&mut self.c.firsts).total();
                    *kept = from..self.c.firsts.len();
                    total
                } else {
                    let first = coster.replaying(self.c.firsts.get(kept.clone()).unwrap_or_default()).total();
                    slowest_group(schedule, plan, params, first)
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
                let coster = PhaseCoster::new(schedule, plan, params, cx, floor).with_memo(&mut self.c.flows);
                let from = self.c.values.len();
                if floor {
                    let first = self.c.firsts.len();
                    coster.recording(&mut self.c.firsts).times(l.phases.clone(), &mut self.c.values);
                    l.firsts = first..self.c.firsts.len();
                } else {
                    let kept = self.c.firsts.get(l.firsts.clone()).unwrap_or_default();
                    coster.replaying(kept).times(l.phases.clone(), &mut self.c.values);
                }
                *known = Some(from..self.c.values.len());
            }
            // The launch cost plus, leg by leg in run order, the phase
            // values: the very sum [`predict()`] makes of a whole plan's.
            for t in self.c.values.get(known.clone()?)? {
                at += t;
            }
        }
        Some(self.launch + at)
    }
}

/// The most of `first`, the phases' time of `plan`'s first costed group,
/// and the phases' times of its other costed groups
/// ([`Groups::costed`](crate::valid::Groups::costed)), each walked on its
/// own context and without the memo (whose flows and member 0's loads are
/// the first group's): the sum [`predict()`] takes the slowest of.
///
/// [`predict()`]: crate::cost::predict::predict
fn slowest_group(schedule: &Schedule, plan: &CollectivePlan, params: &ModelParams, first: f64) -> f64 {
    let others = plan.groups.costed().iter().filter(|&&g| g != plan.groups.modelled());
    others.fold(first, |slowest, &g| {
        let other = CollectivePlan { groups: plan.groups.costing(g), ..plan.clone() };
        let cx = PlanCx::new(schedule, &other, params);
        slowest.max(PhaseCoster::new(schedule, &other, params, &cx, false).total())
    })
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
