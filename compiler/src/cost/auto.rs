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

use super::{Evaluation, ModelParams, evaluate};
use crate::build::build;
use crate::schedule::Schedule;
use crate::valid::{Alternative, AutoChoice, ResolvedAlgorithm, Shape, ValidCollective, ValidProgram};
use ccc_ir::arch::Arch;
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
pub fn choose(
    collective: &ValidCollective,
    machine: Machine,
    params: &ModelParams,
    candidates: Vec<ResolvedAlgorithm>,
    auto_legs: Vec<Leg>,
) -> Option<AutoChoice> {
    let mut alternatives = Vec::with_capacity(candidates.len());
    for algorithm in candidates {
        let Some((_, e)) = evaluate_choice(collective, machine, params, &algorithm) else { continue };
        alternatives.push(Alternative {
            algorithm,
            predicted_ns: whole_ns(e.prediction.total_ns),
            bound_ns: whole_ns(e.bound.total_ns()),
        });
    }
    // min_by_key keeps the first of equal keys: the documented tie-break.
    let chosen = alternatives.iter().enumerate().min_by_key(|(_, a)| a.predicted_ns).map(|(i, _)| i)?;
    Some(AutoChoice { chosen, alternatives, auto_legs })
}

/// Builds `collective` alone under `algorithm` on `machine` and evaluates
/// it; `None` when it does not build.
pub fn evaluate_choice(
    collective: &ValidCollective,
    machine: Machine,
    params: &ModelParams,
    algorithm: &ResolvedAlgorithm,
) -> Option<(Schedule, Evaluation)> {
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
    let schedule = build(&program).ok()?;
    let e = evaluate(&schedule, schedule.collectives.first()?, params);
    Some((schedule, e))
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
