//! `algorithm: Auto`: predict every legal choice and take the cheapest.
//!
//! Validation lists the legal choices with its own checks (the same code
//! that accepts or refuses an algorithm a user writes), in a fixed order:
//! the flat algorithms in `enc_alg_type` order, then every hierarchical
//! combination, legs in run order, each leg's choices in its legal set's
//! order (the seed's sets). Each choice is built into a schedule and
//! predicted ([`super::predict()`]); predictions are compared in whole
//! nanoseconds. **Tie-break:** the lowest prediction wins; among equal
//! ones, the first in that order. The result is deterministic: the same
//! spec and model give the same choice on every rank and every run.

use super::{Evaluation, ModelParams, evaluate, predict};
use crate::build::build;
use crate::schedule::{CollectivePlan, Schedule};
use crate::valid::{Alternative, AutoChoice, ResolvedAlgorithm, Shape, ValidCollective, ValidProgram};
use ccc_ir::arch::Arch;
use ccc_ir::enums::AlgType;
use ccc_ir::spec::{Barrier, Leg};

/// The machine a choice is made for.
#[derive(Clone, Copy, Debug)]
pub struct Machine {
    /// Architecture.
    pub arch: Arch,
    /// Shape.
    pub shape: Shape,
    /// Barrier.
    pub barrier: Barrier,
    /// Send credits.
    pub send_credits: u16,
}

/// Predicts `collective` under each of `candidates` and picks the cheapest
/// (see the module doc for the order); `auto_legs` are the legs a
/// `Hier((...))` left to the model (empty: the whole algorithm was `Auto`).
/// `None` when no candidate builds.
///
/// Each hierarchical leg choice is costed once (`LegCosts`): a leg's
/// phases cost the same whichever algorithms the other legs run, and a
/// combination's prediction is the launch cost plus its legs' phase times
/// summed in run order, the same sum [`super::predict()`] makes, so every
/// alternative's prediction is the one [`choose_exhaustive`] computes,
/// to the bit (`compiler/tests/cost_auto.rs` checks it).
pub fn choose(
    collective: &ValidCollective,
    machine: Machine,
    params: &ModelParams,
    candidates: Vec<ResolvedAlgorithm>,
    auto_legs: Vec<Leg>,
) -> Option<AutoChoice> {
    let mut legs = LegCosts::default();
    choose_by(candidates, auto_legs, |algorithm| match algorithm {
        ResolvedAlgorithm::Hier(chosen) => legs.predict(collective, machine, params, chosen),
        ResolvedAlgorithm::Flat(_) => whole(collective, machine, params, algorithm),
    })
}

/// The reference [`choose`] is tested against: every candidate built and
/// predicted whole, one by one.
pub fn choose_exhaustive(
    collective: &ValidCollective,
    machine: Machine,
    params: &ModelParams,
    candidates: Vec<ResolvedAlgorithm>,
    auto_legs: Vec<Leg>,
) -> Option<AutoChoice> {
    choose_by(candidates, auto_legs, |algorithm| whole(collective, machine, params, algorithm))
}

/// The candidates `cost` predicts (prediction and bound, ns; `None`: it
/// does not build), and the cheapest of them.
fn choose_by(
    candidates: Vec<ResolvedAlgorithm>,
    auto_legs: Vec<Leg>,
    mut cost: impl FnMut(&ResolvedAlgorithm) -> Option<(f64, f64)>,
) -> Option<AutoChoice> {
    let mut alternatives = Vec::with_capacity(candidates.len());
    for algorithm in candidates {
        let Some((predicted, bound)) = cost(&algorithm) else { continue };
        alternatives.push(Alternative { algorithm, predicted_ns: whole_ns(predicted), bound_ns: whole_ns(bound) });
    }
    pick(alternatives, auto_legs)
}

/// `algorithm` built alone and predicted whole: its prediction and bound, ns.
fn whole(
    collective: &ValidCollective,
    machine: Machine,
    params: &ModelParams,
    algorithm: &ResolvedAlgorithm,
) -> Option<(f64, f64)> {
    evaluate_choice(collective, machine, params, algorithm).map(|(_, e)| (e.prediction.total_ns, e.bound.total_ns()))
}

/// The cheapest of `alternatives`, the first among equals.
fn pick(alternatives: Vec<Alternative>, auto_legs: Vec<Leg>) -> Option<AutoChoice> {
    // min_by_key keeps the first of equal keys: the documented tie-break.
    let chosen = alternatives.iter().enumerate().min_by_key(|(_, a)| a.predicted_ns).map(|(i, _)| i)?;
    Some(AutoChoice { chosen, alternatives, auto_legs })
}

/// The phase times of every hierarchical leg choice costed so far, and
/// the collective's bound and launch cost (the same for every
/// combination: they depend on the op, groups, size and channels only).
#[derive(Default)]
struct LegCosts {
    /// `(leg, algorithm)` to that leg's phase times, in run order.
    phases: Vec<((Leg, AlgType), Vec<f64>)>,
    /// The bound and the launch cost, ns.
    fixed: Option<(f64, f64)>,
}

impl LegCosts {
    fn get(&self, leg: (Leg, AlgType)) -> Option<&[f64]> {
        self.phases.iter().find(|(k, _)| *k == leg).map(|(_, t)| t.as_slice())
    }

    /// The prediction and bound of the combination `chosen`, ns; builds it
    /// only when one of its leg choices has not been costed yet, and then
    /// costs only those legs. `None` when it does not build.
    fn predict(
        &mut self,
        collective: &ValidCollective,
        machine: Machine,
        params: &ModelParams,
        chosen: &[(Leg, AlgType)],
    ) -> Option<(f64, f64)> {
        if self.fixed.is_none() || chosen.iter().any(|&l| self.get(l).is_none()) {
            let schedule = build_alone(collective, machine, &ResolvedAlgorithm::Hier(chosen.to_vec()))?;
            let plan = schedule.collectives.first()?;
            let Some(runs) = leg_runs(plan) else {
                // Legs whose phases do not run one after another cannot be
                // costed apart: cost this combination whole, as
                // `choose_exhaustive` does, rather than drop it.
                let e = evaluate(&schedule, plan, params);
                return Some((e.prediction.total_ns, e.bound.total_ns()));
            };
            for (&leg, range) in chosen.iter().zip(runs) {
                if self.get(leg).is_none() {
                    let times = predict::phase_times(&schedule, plan, params, range);
                    self.phases.push((leg, times));
                }
            }
            let nodes = super::nodes_spanned(&schedule, plan);
            let bound = super::leg_bound(&schedule, plan, nodes, None, params).total_ns();
            self.fixed = Some((bound, predict::launch_ns(&schedule, plan, params)));
        }
        // The sum `predict` makes: the phases' times in run order, then
        // the launch cost.
        let mut at = 0.0;
        for &leg in chosen {
            for t in self.get(leg)? {
                at += t;
            }
        }
        let (bound, launch) = self.fixed?;
        Some((launch + at, bound))
    }
}

/// The phases of each leg of a hierarchical plan, in the plan's leg order;
/// `None` unless each leg's phases are one run, in that order.
fn leg_runs(plan: &CollectivePlan) -> Option<Vec<std::ops::Range<usize>>> {
    let mut runs = Vec::with_capacity(plan.legs.len());
    let mut at = 0;
    for &(leg, _) in &plan.legs {
        let n = plan.phases.iter().skip(at).take_while(|p| p.leg == leg).count();
        runs.push(at..at + n);
        at += n;
    }
    (at == plan.phases.len()).then_some(runs)
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
fn build_alone(collective: &ValidCollective, machine: Machine, algorithm: &ResolvedAlgorithm) -> Option<Schedule> {
    let mut c = collective.clone();
    c.algorithm = algorithm.clone();
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
    /// The machine a validated program runs on.
    pub fn of(program: &ValidProgram) -> Machine {
        Machine {
            arch: program.arch(),
            shape: program.topology(),
            barrier: program.barrier(),
            send_credits: program.send_credits(),
        }
    }
}

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
