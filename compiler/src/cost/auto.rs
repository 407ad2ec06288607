//! `algorithm: Auto`: take the legal choice with the lowest prediction.
//!
//! Validation lists the legal choices with its own checks (the same code
//! that accepts or refuses an algorithm a user writes), in a fixed order:
//! the flat algorithms in `enc_alg_type` order, then every hierarchical
//! combination, legs in run order, each leg's choices in its legal set's
//! order (the seed's sets). Each choice is built into a schedule and
//! given a floor under its prediction; those whose floor could still win
//! or come second are predicted ([`super::predict()`], `search.rs`);
//! predictions are compared in whole nanoseconds. **Tie-break:** the
//! lowest prediction wins; among equal ones, the first in that order. The
//! result is the one predicting every choice gives ([`choose_exhaustive`])
//! and deterministic: the same spec and model give the same choice on
//! every rank and every run.
//!
//! **Legality.** A choice whose schedule exceeds a lowering limit that
//! depends on the choice (more mesh events on a TOP_SP than the arch has,
//! more increments on one mesh event than a u16 counts, more descriptors
//! in one step than `VAL_MASK`) would be refused by lowering; it is
//! dropped before it is costed, so it is neither chosen nor listed
//! (`legal.rs`). When none is left, [`NoChoice::Limit`] names the limit
//! and what one refused choice needs.

use super::{Evaluation, ModelParams, evaluate};
use crate::build::build;
use crate::lower::Limit;
use crate::schedule::Schedule;
use crate::valid::{Alternative, AutoChoice, ResolvedAlgorithm, Shape, ValidCollective, ValidProgram};
use ccc_ir::arch::Arch;
use ccc_ir::spec::{Barrier, Leg};

pub mod fit;
pub mod legal;
pub(crate) mod prefloor;
mod search;

/// Why `Auto` has no choice to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoChoice {
    /// No candidate plans.
    NonePlans,
    /// The cheapest candidate is predicted at 2^64 ns (584 years) or more,
    /// where whole nanoseconds saturate and the candidates can no longer
    /// be told apart: only extreme `model:` values get here.
    OutOfRange,
    /// Every candidate that plans exceeds a lowering limit that depends
    /// on the choice, so none would lower (`legal.rs`).
    Limit {
        /// The limit the named candidate exceeds: `MeshEvents`,
        /// `MeshEventTarget` or `TpIncrement`.
        limit: Limit,
        /// The architecture.
        arch: Arch,
        /// What the named candidate needs of it.
        needed: u64,
        /// The most the limit allows (for `MeshEvents`, the arch's
        /// `mesh_event_max`).
        max: u64,
        /// For `MeshEvents`, what the program's collectives before this
        /// one already take of `max` ([`Machine::mesh_events_spent`]); 0
        /// for the other limits.
        spent: u32,
        /// The candidate named: of those refused for the first limit in
        /// the order they are judged, the one that needs the fewest (the
        /// first of equals).
        fewest: ResolvedAlgorithm,
        /// The other limits candidates exceed, in the order they are
        /// judged, each with its candidate named as `fewest` is: empty
        /// when every candidate exceeds `limit`. (A choice that exceeds
        /// none of `limit` may lower once one of these is met: a smaller
        /// size takes Ring under its descriptors where Mesh needs the
        /// same mesh events at any size.)
        also: Vec<AlsoExceeded>,
    },
}

/// A limit some of `Auto`'s candidates exceed beside the one
/// [`NoChoice::Limit`] names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlsoExceeded {
    /// The limit.
    pub limit: Limit,
    /// What the named candidate needs of it.
    pub needed: u64,
    /// The most the limit allows.
    pub max: u64,
    /// The candidate named: the one that needs the fewest.
    pub fewest: ResolvedAlgorithm,
}

impl NoChoice {
    /// Why nothing is left of the candidates on `machine`, the refused
    /// one to name (`None`: none planned).
    /// (`refused`: one per limit exceeded, in the order they are judged.)
    fn of(machine: Machine, refused: Vec<(legal::Refusal, ResolvedAlgorithm)>) -> NoChoice {
        let Machine { arch, mesh_events_spent, .. } = machine;
        let mut refused = refused.into_iter();
        match refused.next() {
            None => NoChoice::NonePlans,
            Some((r, fewest)) => {
                let spent = if r.limit == Limit::MeshEvents { mesh_events_spent } else { 0 };
                let params = arch.params();
                let also = refused
                    .map(|(o, fewest)| AlsoExceeded { limit: o.limit, needed: o.needed, max: o.max(params), fewest })
                    .collect();
                NoChoice::Limit { limit: r.limit, arch, needed: r.needed, max: r.max(params), spent, fewest, also }
            }
        }
    }
}

/// The machine a choice is made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Architecture.
    pub arch: Arch,
    /// Shape.
    pub shape: Shape,
    /// Barrier.
    pub barrier: Barrier,
    /// Send credits.
    pub send_credits: u16,
    /// The mesh events per TOP_SP the program's collectives before this
    /// one already take (0 for a collective alone): a TOP_SP's events add
    /// up over every collective it hosts, so a candidate is legal only
    /// within what they leave (`legal.rs`).
    pub mesh_events_spent: u32,
}

/// Picks the cheapest of `candidates` for `collective` (see the module
/// doc for the order); `auto_legs` are the legs a `Hier((...))` left to
/// the model (empty: the whole algorithm was `Auto`).
///
/// Every candidate gets a floor under its prediction ([`Alternative::floor_ns`]);
/// candidates are predicted in floor order until no floor left could
/// take the first or second place, so the winner and the runner-up are
/// the ones [`choose_exhaustive`] finds, with the same predictions to
/// the nanosecond; the others keep their floor and no prediction
/// (`search.rs`). Each hierarchical leg choice is costed once: a leg's
/// phases cost the same whichever algorithms the other legs run, and a
/// combination's prediction is the launch cost plus its legs' phase times
/// summed in run order, the same sum [`super::predict()`] makes
/// (`compiler/tests/cost_auto.rs` checks all of this). Candidates that
/// would not lower are dropped first (`legal.rs`).
///
/// # Errors
///
/// [`NoChoice`] when no candidate plans and lowers.
pub fn choose(
    collective: &ValidCollective,
    machine: Machine,
    params: &ModelParams,
    candidates: Vec<ResolvedAlgorithm>,
    auto_legs: Vec<Leg>,
) -> Result<AutoChoice, NoChoice> {
    choose_standing(collective, machine, params, candidates, auto_legs).map(|(choice, _)| choice)
}

/// The mesh events left to a collective ([`Machine::mesh_event_room`])
/// over which a choice stands: every candidate it held needs at most
/// `from`, every one it refused more than `below - 1`, so with any room in
/// `from..below` the same candidates are held, in the same order, and the
/// same choice is made from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stands {
    /// The fewest events left with which the choice stands.
    pub from: u32,
    /// The fewest events left with which it no longer does (`u32::MAX`:
    /// none refused).
    pub below: u32,
}

impl Stands {
    /// Whether the choice stands with `room` events left.
    pub fn with(self, room: u32) -> bool {
        (self.from..self.below).contains(&room)
    }
}

/// [`choose`], and the rooms over which its choice stands: what a program
/// of collectives needs to reuse the choice for an equal collective that
/// has fewer mesh events left.
///
/// # Errors
///
/// As [`choose`].
pub fn choose_standing(
    collective: &ValidCollective,
    machine: Machine,
    params: &ModelParams,
    candidates: Vec<ResolvedAlgorithm>,
    auto_legs: Vec<Leg>,
) -> Result<(AutoChoice, Stands), NoChoice> {
    let mut store = search::Store::of(collective, machine.schedule(), *params, candidates);
    let found = store.choose(machine)?;
    let stands = found.stands;
    let (chosen, alternatives) = store.alternatives(found);
    Ok((AutoChoice { chosen, alternatives, auto_legs, fitted: None }, stands))
}

/// A collective's candidates on one machine, planned once, with every
/// need counted and every value costed of them so far: what
/// [`choose_standing`] finds that does not depend on the mesh events
/// spent (`search.rs`). A program repeating a collective keeps it, so
/// that choosing for the repeat with fewer events left
/// ([`Candidates::choose`]) judges and searches afresh but plans nothing
/// and costs only the values no choice before it asked for.
pub struct Candidates {
    store: search::Store,
    /// The machine, with no events spent.
    machine: Machine,
    auto_legs: Vec<Leg>,
}

impl Candidates {
    /// Plans `candidates` of `collective` on `machine` (its events spent
    /// are not read), as [`choose`] takes them; nothing costed yet.
    pub fn of(
        collective: &ValidCollective,
        machine: Machine,
        params: &ModelParams,
        candidates: Vec<ResolvedAlgorithm>,
        auto_legs: Vec<Leg>,
    ) -> Candidates {
        let machine = Machine { mesh_events_spent: 0, ..machine };
        let store = search::Store::of(collective, machine.schedule(), *params, candidates);
        Candidates { store, machine, auto_legs }
    }

    /// [`choose_standing`] on the machine with `mesh_events_spent`: the
    /// same choice and rooms, equal as a whole (what it records is what
    /// this choice asked for, whatever earlier ones found), costing only
    /// what no earlier choice on these candidates asked for.
    ///
    /// # Errors
    ///
    /// As [`choose`].
    pub fn choose(&mut self, mesh_events_spent: u32) -> Result<(AutoChoice, Stands), NoChoice> {
        let found = self.store.choose(Machine { mesh_events_spent, ..self.machine })?;
        let stands = found.stands;
        let (chosen, alternatives) = self.store.alternatives(found);
        Ok((AutoChoice { chosen, alternatives, auto_legs: self.auto_legs.clone(), fitted: None }, stands))
    }
}

/// The reference [`choose`] is tested against: every candidate built,
/// judged by the same legality rule on its whole schedule, predicted whole
/// and given its floor, one by one.
///
/// # Errors
///
/// As [`choose`].
pub fn choose_exhaustive(
    collective: &ValidCollective,
    machine: Machine,
    params: &ModelParams,
    candidates: Vec<ResolvedAlgorithm>,
    auto_legs: Vec<Leg>,
) -> Result<AutoChoice, NoChoice> {
    let mut alternatives = Vec::with_capacity(candidates.len());
    let mut refused: [Option<(legal::Refusal, ResolvedAlgorithm)>; legal::LIMITS_JUDGED] = [None; legal::LIMITS_JUDGED];
    let room = machine.mesh_event_room();
    for algorithm in candidates {
        let Some((schedule, e)) = evaluate_choice(collective, machine, params, &algorithm) else { continue };
        let Some(plan) = schedule.collectives.first() else { continue };
        let phases: Vec<_> = plan.phases.iter().map(|p| (plan, p)).collect();
        if let Some(r) = legal::refusal(&schedule.shape, machine.arch.params(), room, &phases) {
            let named = &mut refused[r.order()];
            if named.as_ref().is_none_or(|(n, _)| r.before(*n)) {
                *named = Some((r, algorithm));
            }
            continue;
        }
        alternatives.push(Alternative {
            algorithm,
            predicted_ns: Some(whole_ns(e.prediction.total_ns)),
            floor_ns: floor_ns(search::whole_floor(&schedule, plan, params)),
            bound_ns: whole_ns(e.bound.total_ns()),
        });
    }
    // min_by_key keeps the first of equal keys: the documented tie-break.
    let Some(chosen) = alternatives.iter().enumerate().min_by_key(|(_, a)| a.predicted_ns).map(|(i, _)| i) else {
        return Err(NoChoice::of(machine, refused.into_iter().flatten().collect()));
    };
    Ok(AutoChoice { chosen, alternatives, auto_legs, fitted: None })
}

/// The runner-up of `choice`: the cheapest predicted alternative but the
/// winner, the first among equals, as (prediction, position). `Auto`
/// always predicts it (`compile`'s `next Y at T us`).
pub fn runner_up(choice: &AutoChoice) -> Option<(u64, usize)> {
    let predicted = choice.alternatives.iter().enumerate().filter_map(|(i, a)| Some((a.predicted_ns?, i)));
    predicted.filter(|&(_, i)| i != choice.chosen).min()
}

/// What [`choose`] promises against [`choose_exhaustive`] over the same
/// candidates (`reference`): the same alternatives in the same order with
/// the same bounds, and the same floors where `choice` predicted them (an
/// unpredicted one's, perhaps its pre-floor, at most the reference's);
/// every floor at most its prediction; the
/// same winner and runner-up; every prediction `choice` made the
/// reference's, to the nanosecond; every alternative it left unpredicted
/// with a floor above the runner-up (or equal and later in the order).
/// The first broken promise, in words (the tests' check).
///
/// # Errors
///
/// The first difference found.
pub fn check_against(choice: &AutoChoice, reference: &AutoChoice) -> Result<(), String> {
    let names = |c: &AutoChoice| c.alternatives.iter().map(|a| display(&a.algorithm)).collect::<Vec<_>>();
    if names(choice) != names(reference) || choice.auto_legs != reference.auto_legs {
        return Err(format!("alternatives {:?} against {:?}", names(choice), names(reference)));
    }
    for (c, r) in choice.alternatives.iter().zip(&reference.alternatives) {
        let name = display(&c.algorithm);
        let p = r.predicted_ns.ok_or_else(|| format!("the reference did not predict {name}"))?;
        if r.floor_ns > p {
            return Err(format!("{name}'s floor {} is above its prediction {p}", r.floor_ns));
        }
        // A predicted choice's floor was walked: the reference's. One left
        // unpredicted may keep its pre-floor, at most that.
        let floor_kept = match c.predicted_ns {
            Some(_) => c.floor_ns == r.floor_ns,
            None => c.floor_ns <= r.floor_ns,
        };
        if !floor_kept || c.bound_ns != r.bound_ns || c.predicted_ns.is_some_and(|cp| cp != p) {
            return Err(format!("{name}: {c:?} against {r:?}"));
        }
    }
    if choice.chosen != reference.chosen {
        return Err(format!("chose {} against {}", choice.chosen, reference.chosen));
    }
    let second = runner_up(reference);
    if runner_up(choice) != second {
        return Err(format!("runner-up {:?} against {second:?}", runner_up(choice)));
    }
    for (i, c) in choice.alternatives.iter().enumerate() {
        if c.predicted_ns.is_none() && second.is_none_or(|s| (c.floor_ns, i) <= s) {
            return Err(format!("{} left unpredicted with its floor {} in reach", display(&c.algorithm), c.floor_ns));
        }
    }
    Ok(())
}

/// Builds `collective` alone under `algorithm` on `machine` and evaluates
/// it; `None` when it does not build.
pub fn evaluate_choice(
    collective: &ValidCollective,
    machine: Machine,
    params: &ModelParams,
    algorithm: &ResolvedAlgorithm,
) -> Option<(Schedule, Evaluation)> {
    let schedule = build_alone(collective, machine, algorithm)?;
    let e = evaluate(&schedule, schedule.collectives.first()?, params);
    Some((schedule, e))
}

/// Builds `collective` alone under `algorithm` on `machine`.
pub(crate) fn build_alone(
    collective: &ValidCollective,
    machine: Machine,
    algorithm: &ResolvedAlgorithm,
) -> Option<Schedule> {
    let mut c = collective.clone();
    c.algorithm = *algorithm;
    c.index = 0;
    c.auto = None;
    let program = ValidProgram {
        collectives: vec![c],
        arch: machine.arch,
        topology: machine.shape,
        barrier: machine.barrier,
        send_credits: machine.send_credits,
    };
    build(&program).ok()
}

impl Machine {
    /// The mesh events per TOP_SP a candidate may still take: the arch's
    /// `mesh_event_max` less what the collectives before it spent.
    pub fn mesh_event_room(self) -> u32 {
        u32::from(self.arch.params().mesh_event_max).saturating_sub(self.mesh_events_spent)
    }

    /// A schedule of this machine without collectives.
    pub(super) fn schedule(self) -> Schedule {
        Schedule {
            arch: self.arch,
            shape: self.shape,
            barrier: self.barrier,
            send_credits: self.send_credits,
            collectives: Vec::new(),
        }
    }

    /// The machine a validated program runs on.
    pub fn of(program: &ValidProgram) -> Machine {
        Machine {
            arch: program.arch(),
            shape: program.topology(),
            barrier: program.barrier(),
            send_credits: program.send_credits(),
            mesh_events_spent: 0,
        }
    }
}

/// The most mesh events per TOP_SP any member of `collective`'s groups
/// waits on under its (resolved) algorithm, as lowering counts them
/// (`legal.rs`): what it spends of every TOP_SP it uses, for the `Auto`
/// collectives after it. 0 when it does not build (validation refuses it
/// then, or lowering does).
pub fn mesh_events(collective: &ValidCollective, machine: Machine) -> u32 {
    build_alone(collective, machine, &collective.algorithm).map_or(0, |schedule| events_of(&schedule))
}

/// The mesh events each member of `collective`'s groups waits on under
/// its algorithm, built alone on `machine`, by member (empty when it does
/// not build): [`mesh_events`] is their most.
pub fn events_by_member(collective: &ValidCollective, machine: Machine) -> Vec<u32> {
    let Some(schedule) = build_alone(collective, machine, &collective.algorithm) else { return Vec::new() };
    let Some(plan) = schedule.collectives.first() else { return Vec::new() };
    let phases: Vec<_> = plan.phases.iter().map(|p| (plan, p)).collect();
    legal::events_by_member(&schedule.shape, &phases)
}

/// The most mesh events per TOP_SP any member of the groups of a
/// schedule's one collective waits on ([`mesh_events`]); 0 without one.
pub(crate) fn events_of(schedule: &Schedule) -> u32 {
    let Some(plan) = schedule.collectives.first() else { return 0 };
    let phases: Vec<_> = plan.phases.iter().map(|p| (plan, p)).collect();
    match legal::Bounds::of(phases.iter().copied()) {
        legal::Bounds { lo, hi } if lo == hi => hi,
        _ => legal::events_needed(&schedule.shape, &phases),
    }
}

/// A floor in whole nanoseconds, rounded down far enough that no
/// prediction it is under can round below it: the floor and the
/// prediction sum their terms in different groupings, so the floor is
/// first lowered by a relative 10^-9 and 1 ns (NaN: 0, no floor).
pub fn floor_ns(ns: f64) -> u64 {
    let lowered = ns * (1.0 - FLOOR_MARGIN) - 1.0;
    if lowered.is_nan() { 0 } else { lowered.floor().clamp(0.0, u64::MAX as f64) as u64 }
}

/// The relative margin [`floor_ns`] lowers a floor by.
const FLOOR_MARGIN: f64 = 1e-9;

/// A prediction in whole nanoseconds (saturating; NaN as the largest).
pub fn whole_ns(ns: f64) -> u64 {
    if ns.is_nan() { u64::MAX } else { ns.round().clamp(0.0, u64::MAX as f64) as u64 }
}

/// A choice as the signature's `algorithm` field writes it: `Ring`, or
/// `Hier(intra_reduce_scatter=Ring, ...)` with the legs in run order.
pub fn display(algorithm: &ResolvedAlgorithm) -> String {
    match algorithm {
        ResolvedAlgorithm::Flat(alg) => alg.name().to_owned(),
        ResolvedAlgorithm::Hier(legs) => {
            let parts: Vec<String> = legs.iter().map(|(leg, alg)| format!("{}={}", leg.field(), alg.name())).collect();
            format!("Hier({})", parts.join(", "))
        }
    }
}
