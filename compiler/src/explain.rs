//! explain: every legal choice of every collective, predicted and bounded
//! by the cost model, the winner marked and why the others lost: the
//! tables `ccc explain` prints (as text or `--json`) and `ccc.explain`
//! returns in Python, built in one place.
//!
//! It sits above [`crate::validate`] (which asks [`crate::cost`] for
//! `Auto`'s choice) and lists the legal choices by validating the
//! collective with `Auto`, so that the alternatives are exactly `Auto`'s.

use crate::cost::Evaluation;
use crate::cost::auto::{Machine, display, evaluate_choice, legal, mesh_events, whole_ns};
use crate::valid::{ResolvedAlgorithm, ValidCollective, ValidProgram};
use crate::validate::validate;
use ccc_ir::noun::count;
use ccc_ir::spec::{Algorithm, Collective, LegAlgorithm, Program};
use serde::Serialize;

/// Microseconds, for tables (nccom-test reports time in us).
pub fn us(ns: f64) -> f64 {
    ns / 1e3
}

/// One legal choice of one collective, evaluated.
#[derive(Serialize)]
pub struct Choice {
    /// As the signature writes it.
    pub algorithm: String,
    /// Predicted time, µs.
    pub time_us: f64,
    /// nccom-test's algbw, GB/s (10^9 B/s).
    pub algbw_gbps: f64,
    /// nccom-test's busbw, GB/s.
    pub busbw_gbps: f64,
    /// Lower bound, µs.
    pub bound_us: f64,
    /// Predicted over bound.
    pub ratio: f64,
    /// The choice the spec compiles to.
    pub winner: bool,
    /// Why it lost (empty for the winner).
    pub why: String,
    /// Per leg (one `flat` leg for a flat algorithm).
    pub legs: Vec<LegChoice>,
    /// For the written choice only: the device limit it exceeds, so that
    /// lowering will refuse it (`verify`, `compile`), as a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub does_not_lower: Option<String>,
    /// The CTRL SPAD slots it takes on each TOP_SP it uses (one record
    /// per phase, 7 records a slot): what a program's collectives share.
    pub ctrl_spad_slots: u32,
    /// The mesh events it takes on each TOP_SP it uses (its most over the
    /// members): what a program's collectives share too.
    pub mesh_events: u32,
    #[serde(skip)]
    evaluation: Evaluation,
}

/// One leg of one choice.
#[derive(Clone, Serialize)]
pub struct LegChoice {
    /// The leg's field name, or `flat`.
    pub leg: String,
    /// Its algorithm.
    pub algorithm: String,
    /// Predicted time of its phases, µs.
    pub time_us: f64,
    /// Its bound, µs.
    pub bound_us: f64,
}

/// One collective's explanation.
#[derive(Serialize)]
pub struct Explained {
    /// Position in the program.
    pub index: u32,
    /// The op.
    pub op: String,
    /// nccom-test's size, bytes (a whole number; JSON writes it as one).
    pub bytes: u128,
    /// The algorithm as the spec writes it: `Auto`, a flat algorithm, or
    /// `Hier(leg=X, ...)` with the legs in run order, a leg left to the
    /// model written `Auto`.
    pub written: String,
    /// The algorithm the spec compiles to, as the signature writes it
    /// without its `Auto` marks (the winner of `choices`).
    pub chosen: String,
    /// Every legal choice, cheapest first (ties in the tie-break order).
    pub choices: Vec<Choice>,
}

/// The legal choices of collective `c` as `Auto` sees them; for a
/// `Hier((...))` with `Auto` legs, the combinations its fixed legs allow.
///
/// Where `Auto` itself is refused (under a `model:` that predicts every
/// choice past 2^64 ns, or where no choice lowers), the choices that
/// validate when written out, in the order `Auto` lists them (flat in
/// `AlgType::ALL`'s order, then the hierarchical combinations): `Auto`
/// lists exactly those (`validate/tests/algorithm.rs`), so that a written
/// algorithm is still shown with every other legal one.
pub fn legal_choices(c: &Collective) -> Option<Vec<ResolvedAlgorithm>> {
    let leg_auto = matches!(&c.algorithm, Algorithm::Hier(legs) if legs.has_auto_leg());
    let auto = if leg_auto { c.clone() } else { Collective { algorithm: Algorithm::Auto, ..c.clone() } };
    match validate(&Program::from(auto)) {
        Ok(valid) => {
            let choice = valid.collectives().first()?.auto()?.clone();
            Some(choice.alternatives.into_iter().map(|a| a.algorithm).collect())
        }
        Err(_) => Some(written_out(c)).filter(|legal| !legal.is_empty()),
    }
}

/// The choices of `c`'s `Auto` (or of its `Auto` legs) that validate when
/// written out ([`legal_choices`] where `Auto` is refused).
fn written_out(c: &Collective) -> Vec<ResolvedAlgorithm> {
    use crate::validate::{auto_legs, combinations};
    use ccc_ir::enums::AlgType;
    use ccc_ir::spec::HierLegs;
    let resolved = |algorithm: Algorithm| {
        let valid = validate(&Program::from(Collective { algorithm, ..c.clone() })).ok()?;
        valid.collectives().first().map(|vc| *vc.algorithm())
    };
    // The legs left to choose over what is written: every leg for a whole
    // `Auto`, with the flat algorithms before them.
    let mut out: Vec<ResolvedAlgorithm> = Vec::new();
    let (base, legs) = match &c.algorithm {
        Algorithm::Hier(written) if written.has_auto_leg() => (written.clone(), auto_legs(c.op, written).collect()),
        _ => {
            let flat = AlgType::ALL.iter().filter(|&&a| a != AlgType::Hier).filter_map(|&a| Algorithm::flat(a));
            out.extend(flat.filter_map(resolved));
            let Some(legs) = crate::algorithms::hier_legs(c.op) else { return out };
            (HierLegs::default(), legs.to_vec())
        }
    };
    out.extend(combinations(&base, &legs, base.choices).filter_map(|h| resolved(Algorithm::Hier(h))));
    out
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
///
/// `machine` carries the mesh events the collectives before it spend
/// ([`Machine::mesh_events_spent`], as [`explain`] counts them): a written
/// collective lists the choices `Auto` would hold in its place, those
/// that fit in what is left, and its own.
pub fn explain_collective(c: &Collective, vc: &ValidCollective, machine: Machine) -> Explained {
    // Validation already listed the alternatives when the spec left a
    // choice to `Auto`; otherwise list them (which runs `Auto` once) and
    // keep, besides the written one, those that lower with the events
    // left, judged on the schedule built here by `Auto`'s own rule.
    let listed = vc.auto().map(|a| a.alternatives.iter().map(|x| x.algorithm).collect());
    let judge = listed.is_none();
    let mut legal = listed.or_else(|| legal_choices(c)).unwrap_or_default();
    if !legal.contains(vc.algorithm()) {
        legal.push(*vc.algorithm());
    }
    let (arch, room) = (machine.arch.params(), machine.mesh_event_room());
    let mut choices = Vec::new();
    for alg in legal {
        let Some((schedule, e)) = evaluate_choice(vc, machine, vc.model(), &alg) else { continue };
        let plan = schedule.collectives.first();
        // Judged when it may be dropped, and for the written choice, which
        // is shown whatever it needs, saying so.
        let written = &alg == vc.algorithm();
        let refused = (judge || written).then(|| {
            let phases: Vec<_> = plan.into_iter().flat_map(|p| p.phases.iter().map(move |ph| (p, ph))).collect();
            legal::refusal(&schedule.shape, arch, room, &phases)
        });
        let refused = refused.flatten();
        if judge && !written && refused.is_some() {
            continue;
        }
        let does_not_lower = refused.filter(|_| written).map(|r| r.describe(machine.arch, machine.mesh_events_spent));
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
        let ctrl_spad_slots = plan.map_or(0, |p| crate::cost::auto::fit::slots(p.phases.len()));
        let mesh_events = crate::cost::auto::events_of(&schedule);
        choices.push(Choice {
            ctrl_spad_slots,
            mesh_events,
            algorithm: display(&alg),
            time_us: us(e.prediction.total_ns),
            algbw_gbps: e.algbw() / 1e9,
            busbw_gbps: e.busbw() / 1e9,
            bound_us: us(e.bound.total_ns()),
            ratio: e.ratio(),
            winner: written,
            why: String::new(),
            legs,
            does_not_lower,
            evaluation: e,
        });
    }
    // Cheapest first; the sort is stable, so ties keep the tie-break order.
    choices.sort_by_key(|ch| whole_ns(ch.evaluation.prediction.total_ns));
    let best = choices.iter().find(|ch| ch.winner).map(|ch| ch.evaluation.prediction.total_ns);
    // Fitted into the program's CTRL SPAD: the slots the winner takes.
    let fitted = vc.auto().and_then(|a| a.fitted);
    for ch in &mut choices {
        if ch.winner {
            continue;
        }
        let t = ch.evaluation.prediction.total_ns;
        // `Auto` compares whole nanoseconds, a tie going to the first in
        // the order of the legal choices: a choice a fraction of a
        // nanosecond under the winner ties it (it was said "faster than
        // the written choice", of a spec that wrote none).
        let tie = best.is_some_and(|w| whole_ns(t) == whole_ns(w));
        ch.why = match best {
            Some(_) if tie && vc.auto().is_some() => format!(
                "ties the winner to the nanosecond; not chosen: Auto takes the first of equal choices in its \
                 order (docs/cost-model.md §4); {}",
                dominant(&ch.evaluation)
            ),
            Some(_) if tie => {
                format!(
                    "ties the written choice; not chosen: the spec names its algorithm; {}",
                    dominant(&ch.evaluation)
                )
            }
            // Measured from the choice the spec compiles to: `Auto`'s
            // winner, or the written choice (which may not be the
            // cheapest: calling it the winner read as if it were).
            Some(w) if t >= w => {
                format!(
                    "+{:.1} us ({}) over the {}; {}",
                    us(t - w),
                    percent_over(t / w - 1.0),
                    if vc.auto().is_some() { "winner" } else { "written choice" },
                    dominant(&ch.evaluation)
                )
            }
            Some(w) => match fitted {
                None => format!(
                    "{:.1} us faster than the written choice; not chosen: the spec names its algorithm",
                    us(w - t)
                ),
                Some(f) => format!(
                    "{:.1} us faster; not chosen: it takes {} and {}, and the program's choices that fit a \
                     TOP_SP's {} slots and {} mesh events with the least time in all leave this collective {} and {}",
                    us(w - t),
                    count(ch.ctrl_spad_slots, "slot"),
                    count(ch.mesh_events, "mesh event"),
                    f.capacity,
                    f.max_events,
                    count(f.slots, "slot"),
                    count(f.events, "mesh event"),
                ),
            },
            None => dominant(&ch.evaluation),
        };
    }
    Explained {
        index: vc.index(),
        op: vc.op().name().to_owned(),
        bytes: choices.first().map_or(0, |ch| ch.evaluation.size),
        written: written(c).unwrap_or_else(|| display(vc.algorithm())),
        chosen: display(vc.algorithm()),
        choices,
    }
}

/// `fraction` (0.25) as a percentage to read: whole percents from 1%
/// up, a tenth of one below (`+0.3%`), and `<0.1%` below that, so that
/// a real difference never reads `+0%`.
fn percent_over(fraction: f64) -> String {
    let pct = fraction * 100.0;
    match pct {
        p if p >= 1.0 => format!("{p:+.0}%"),
        p if p >= 0.1 => format!("{p:+.1}%"),
        _ => "+<0.1%".to_owned(),
    }
}

/// Collective `c`'s algorithm as written: `Auto`, a flat algorithm's
/// name, or `Hier(leg=X, ...)` over the op's legs in run order (a leg left
/// to the model `leg=Auto`). `None` when the op has no Hier legs.
pub fn written(c: &Collective) -> Option<String> {
    match &c.algorithm {
        Algorithm::Auto => Some("Auto".to_owned()),
        Algorithm::Hier(legs) => {
            let parts: Vec<String> = crate::algorithms::hier_legs(c.op)?
                .iter()
                .filter_map(|&leg| {
                    let alg = match legs.get(leg)? {
                        LegAlgorithm::Auto => "Auto",
                        LegAlgorithm::Fixed(a) => a.name(),
                    };
                    Some(format!("{}={alg}", leg.field()))
                })
                .collect();
            Some(format!("Hier({})", parts.join(", ")))
        }
        flat => flat.alg_type().map(|a| a.name().to_owned()),
    }
}

/// Explains every collective of `program` (validated as `valid`), in
/// program order, each with the mesh events the collectives before it
/// spend (as validation holds an `Auto` collective to what they leave:
/// each collective's most, [`cost::auto::mesh_events`]).
///
/// `valid` is `validate(program)`'s: the two are read side by side, and
/// a collective of one without its like in the other is not explained.
///
/// [`cost::auto::mesh_events`]: crate::cost::auto::mesh_events
pub fn explain(program: &Program, valid: &ValidProgram) -> Vec<Explained> {
    let machine = Machine::of(valid);
    let last = valid.collectives().len().saturating_sub(1);
    let mut spent = 0u32;
    let mut all = Vec::with_capacity(valid.collectives().len());
    for (i, (c, vc)) in program.collectives.iter().zip(valid.collectives()).enumerate() {
        all.push(explain_collective(c, vc, Machine { mesh_events_spent: spent, ..machine }));
        if i < last {
            spent = spent.saturating_add(mesh_events(vc, machine));
        }
    }
    all
}
