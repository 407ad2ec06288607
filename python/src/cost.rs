//! The adapter's cost half, without PyO3: every legal choice of every
//! collective, predicted and bounded, the winner marked and why the others
//! lost — the rows `ccc explain --json` prints.
//!
//! The library exports the model (`ccc_compiler::cost`: `evaluate_choice`,
//! `Machine`, `display`, `whole_ns`); the table built from it is CLI-private
//! (`compiler/src/bin/ccc/explain.rs`). `legal_choices`, `dominant` and
//! `explain_collective` and the three row types below are copied from
//! there, so that `ccc.explain` returns the same values as the CLI; a
//! change there is to be mirrored here (`tests/test_explain.py` compares
//! the two on the shipped examples).

use crate::adapter::{Failure, Spec, validation_error};
use ccc_compiler::cost::Evaluation;
use ccc_compiler::cost::auto::{Machine, display, evaluate_choice, whole_ns};
use ccc_compiler::valid::{ResolvedAlgorithm, ValidCollective};
use ccc_compiler::validate::validate;
use ccc_ir::noun::count;
use ccc_ir::spec::{Algorithm, Collective, Program};
use serde::Serialize;

/// Microseconds, for tables (nccom-test reports time in us).
fn us(ns: f64) -> f64 {
    ns / 1e3
}

/// One legal choice of one collective, evaluated.
#[derive(Serialize)]
struct Choice {
    /// As the signature writes it.
    algorithm: String,
    /// Predicted time, µs.
    time_us: f64,
    /// nccom-test's algbw, GB/s (10^9 B/s).
    algbw_gbps: f64,
    /// nccom-test's busbw, GB/s.
    busbw_gbps: f64,
    /// Lower bound, µs.
    bound_us: f64,
    /// Predicted over bound.
    ratio: f64,
    /// The choice the spec compiles to.
    winner: bool,
    /// Why it lost (empty for the winner).
    why: String,
    /// Per leg (one `flat` leg for a flat algorithm).
    legs: Vec<LegChoice>,
    #[serde(skip)]
    evaluation: Evaluation,
}

/// One leg of one choice.
#[derive(Serialize)]
struct LegChoice {
    /// The leg's field name, or `flat`.
    leg: String,
    /// Its algorithm.
    algorithm: String,
    /// Predicted time of its phases, µs.
    time_us: f64,
    /// Its bound, µs.
    bound_us: f64,
}

/// One collective's explanation.
#[derive(Serialize)]
struct Explained {
    /// Position in the program.
    index: u32,
    /// The op.
    op: String,
    /// nccom-test's size, bytes.
    bytes: f64,
    /// `Auto`, or the algorithm as written.
    written: String,
    /// Every legal choice, cheapest first (ties in the tie-break order).
    choices: Vec<Choice>,
}

/// Explains every collective of `spec`: JSON text of the list
/// `ccc explain --json` prints.
///
/// # Errors
///
/// Validation errors (every problem, by field path).
pub fn explain(spec: &Spec) -> Result<String, Failure> {
    let valid = validate(&spec.program).map_err(|e| validation_error(&e, spec.form))?;
    let machine = Machine::of(&valid);
    let all: Vec<Explained> = spec
        .program
        .collectives
        .iter()
        .zip(valid.collectives())
        .map(|(c, vc)| explain_collective(c, vc, machine))
        .collect();
    serde_json::to_string(&all).map_err(|e| {
        crate::adapter::ErrorInfo::new(crate::adapter::ErrorClass::Internal, "Json", format!("cannot write JSON: {e}"))
    })
}

/// The legal choices of collective `c` as `Auto` sees them.
fn legal_choices(c: &Collective) -> Option<Vec<ResolvedAlgorithm>> {
    let auto = Collective { algorithm: Algorithm::Auto, ..c.clone() };
    let valid = validate(&Program::from(auto)).ok()?;
    let choice = valid.collectives().first()?.auto()?.clone();
    Some(choice.alternatives.into_iter().map(|a| a.algorithm).collect())
}

/// The dominant term of a prediction, for "why it lost".
fn dominant(e: &Evaluation) -> String {
    let (mut a, mut b, mut g, mut o) = (0.0, 0.0, 0.0, 0.0);
    for p in &e.prediction.phases {
        a += p.alpha_ns;
        b += p.beta_ns;
        g += p.gamma_ns;
        o += p.overhead_ns;
    }
    let steps: u32 = e.prediction.phases.iter().map(|p| p.steps).sum();
    let terms = [
        (a, format!("latency-bound: {} cost {:.1} us of α", count(steps, "step"), us(a))),
        (b, format!("bandwidth-bound: {:.1} us of β", us(b))),
        (g, format!("reduction-bound: {:.1} us of γ", us(g))),
        (o, format!("overhead-bound: {:.1} us of descriptors and fan-in", us(o))),
    ];
    terms.into_iter().max_by(|x, y| x.0.total_cmp(&y.0)).map(|(_, s)| s).unwrap_or_default()
}

/// Evaluates every legal choice of collective `vc` (written as `c`).
fn explain_collective(c: &Collective, vc: &ValidCollective, machine: Machine) -> Explained {
    let legal = legal_choices(c).unwrap_or_else(|| vec![vc.algorithm().clone()]);
    let mut choices = Vec::new();
    for alg in legal {
        let Some((schedule, e)) = evaluate_choice(vc, machine, vc.model(), &alg) else { continue };
        let plan = schedule.collectives.first();
        let legs = plan
            .map(|plan| {
                e.legs
                    .iter()
                    .zip(&plan.legs)
                    .map(|(l, &(_, a))| LegChoice {
                        leg: l.leg.map_or_else(|| "flat".to_owned(), |leg| leg.field().to_owned()),
                        algorithm: a.name().to_owned(),
                        time_us: us(l.predicted_ns),
                        bound_us: us(l.bound_ns),
                    })
                    .collect()
            })
            .unwrap_or_default();
        choices.push(Choice {
            algorithm: display(&alg),
            time_us: us(e.prediction.total_ns),
            algbw_gbps: e.algbw() / 1e9,
            busbw_gbps: e.busbw() / 1e9,
            bound_us: us(e.bound.total_ns()),
            ratio: e.ratio(),
            winner: &alg == vc.algorithm(),
            why: String::new(),
            legs,
            evaluation: e,
        });
    }
    // Cheapest first; the sort is stable, so ties keep the tie-break order.
    choices.sort_by_key(|ch| whole_ns(ch.evaluation.prediction.total_ns));
    let best = choices.iter().find(|ch| ch.winner).map(|ch| ch.evaluation.prediction.total_ns);
    for ch in &mut choices {
        if ch.winner {
            continue;
        }
        let t = ch.evaluation.prediction.total_ns;
        ch.why = match best {
            Some(w) if t >= w => {
                format!(
                    "+{:.1} us ({:+.0}%) over the winner; {}",
                    us(t - w),
                    (t / w - 1.0) * 100.0,
                    dominant(&ch.evaluation)
                )
            }
            Some(w) => {
                format!("{:.1} us faster than the written choice; not chosen: the spec names its algorithm", us(w - t))
            }
            None => dominant(&ch.evaluation),
        };
    }
    Explained {
        index: vc.index(),
        op: vc.op().name().to_owned(),
        bytes: choices.first().map_or(0.0, |ch| ch.evaluation.bytes),
        written: match &c.algorithm {
            Algorithm::Auto => "Auto".to_owned(),
            _ => display(vc.algorithm()),
        },
        choices,
    }
}
