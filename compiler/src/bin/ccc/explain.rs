//! `ccc explain`: every legal choice of every collective, predicted and
//! bounded, the winner marked and why the others lost; and the cost lines
//! `compile` and `verify` print.

use crate::Failure;
use crate::args::ExplainArgs;
use crate::load::load_spec;
use ccc_backends::plot::{Bar, timeline_svg};
use ccc_compiler::build::build;
use ccc_compiler::cost::auto::{Machine, display, evaluate_choice, whole_ns};
use ccc_compiler::cost::{self, Evaluation};
use ccc_compiler::placement;
use ccc_compiler::schedule::{CollectivePlan, Schedule};
use ccc_compiler::valid::{ResolvedAlgorithm, ValidCollective, ValidProgram};
use ccc_compiler::validate::validate;
use ccc_ir::noun::count;
use ccc_ir::spec::{Algorithm, Collective, Leg, LegAlgorithm, Program};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// Microseconds, for tables (nccom-test reports time in us).
pub fn us(ns: f64) -> f64 {
    ns / 1e3
}

/// The lines a compile prints under each collective: the prediction and
/// its ratio to the bound; for `Auto`, what it chose from how many.
pub fn cost_lines(out: &mut String, schedule: &Schedule, plan: &CollectivePlan) {
    let e = cost::evaluate(schedule, plan, &plan.model);
    let _ = writeln!(
        out,
        "collective {}: predicted {:.1} us, bound {:.1} us, ratio {:.2} (docs/cost-model.md)",
        plan.index,
        us(e.prediction.total_ns),
        us(e.bound.total_ns()),
        e.ratio()
    );
    if let Some(auto) = &plan.auto {
        let mut others: Vec<_> =
            auto.alternatives.iter().enumerate().filter(|(i, _)| *i != auto.chosen).map(|(_, a)| a).collect();
        others.sort_by_key(|a| a.predicted_ns);
        let next = others
            .first()
            .map(|a| format!("; next {} at {:.1} us", display(&a.algorithm), us(a.predicted_ns as f64)))
            .unwrap_or_default();
        let legs: Vec<&str> = auto.auto_legs.iter().map(|l| l.field()).collect();
        let scope = if legs.is_empty() { String::new() } else { format!(" for {}", legs.join(", ")) };
        let _ = writeln!(
            out,
            "collective {}: Auto{scope} chose {}, the cheapest of {} legal choices{next}",
            plan.index,
            ccc_compiler::sign::algorithm(plan),
            auto.alternatives.len()
        );
    }
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
    /// nccom-test's size, bytes.
    pub bytes: f64,
    /// `Auto`, or the algorithm as written.
    pub written: String,
    /// Every legal choice, cheapest first (ties in the tie-break order).
    pub choices: Vec<Choice>,
}

/// The legal choices of collective `c` as `Auto` sees them; for a
/// `Hier((...))` with `Auto` legs, the combinations its fixed legs allow.
pub fn legal_choices(c: &Collective) -> Option<Vec<ResolvedAlgorithm>> {
    let leg_auto = match &c.algorithm {
        Algorithm::Hier(legs) => Leg::ALL.iter().any(|&l| legs.get(l) == Some(LegAlgorithm::Auto)),
        _ => false,
    };
    let auto = if leg_auto { c.clone() } else { Collective { algorithm: Algorithm::Auto, ..c.clone() } };
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
pub fn explain_collective(c: &Collective, vc: &ValidCollective, machine: Machine) -> Result<Explained, Failure> {
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
    Ok(Explained {
        index: vc.index(),
        op: vc.op().name().to_owned(),
        bytes: choices.first().map_or(0.0, |ch| ch.evaluation.bytes),
        written: match &c.algorithm {
            Algorithm::Auto => "Auto".to_owned(),
            _ => display(vc.algorithm()),
        },
        choices,
    })
}

/// Runs `ccc explain`.
pub fn run(args: &ExplainArgs) -> Result<ExitCode, Failure> {
    let (parsed, valid) = load_spec(&args.spec, &args.hlo)?;
    let machine = Machine::of(&valid);
    let mut all = Vec::new();
    for (c, vc) in parsed.program.collectives.iter().zip(valid.collectives()) {
        all.push(explain_collective(c, vc, machine)?);
    }
    if let Some(path) = &args.svg {
        let svg = timeline(&args.spec, &valid)?;
        write_new(path, &svg)?;
    }
    let text = if args.json {
        serde_json::to_string_pretty(&all).map_err(|e| Failure::input(miette::miette!("cannot write JSON: {e}")))?
            + "\n"
    } else {
        render(&args.spec, &valid, &all)
    };
    crate::out::emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn render(spec: &Path, valid: &ValidProgram, all: &[Explained]) -> String {
    let mut out = String::new();
    let shape = valid.topology();
    let _ = writeln!(
        out,
        "{}: {} ranks, {} per node, {} on {} (cost model: docs/cost-model.md; GB/s = 10^9 B/s)",
        spec.display(),
        shape.rank_n,
        shape.local_rank_n,
        count(all.len(), "collective"),
        valid.arch()
    );
    for e in all {
        let _ = writeln!(
            out,
            "\ncollective {}: {} of {:.0} bytes, algorithm {}: {}",
            e.index,
            e.op,
            e.bytes,
            e.written,
            count(e.choices.len(), "legal choice")
        );
        let w = e.choices.iter().map(|ch| ch.algorithm.len()).max().unwrap_or(0).max("algorithm".len());
        let _ = writeln!(
            out,
            "  {:<2}{:<w$} {:>11} {:>11} {:>11} {:>11} {:>7}",
            "", "algorithm", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "bound(us)", "ratio"
        );
        for ch in &e.choices {
            let _ = writeln!(
                out,
                "  {:<2}{:<w$} {:>11.2} {:>11.2} {:>11.2} {:>11.2} {:>7.2}",
                if ch.winner { "*" } else { "" },
                ch.algorithm,
                ch.time_us,
                ch.algbw_gbps,
                ch.busbw_gbps,
                ch.bound_us,
                ch.ratio
            );
        }
        if let Some(w) = e.choices.iter().find(|ch| ch.winner) {
            let _ = writeln!(out, "  (* the choice this spec compiles to; its legs:)");
            for l in &w.legs {
                let _ = writeln!(
                    out,
                    "    leg {}: {} {:.2} us (bound {:.2} us)",
                    l.leg, l.algorithm, l.time_us, l.bound_us
                );
            }
        }
        let _ = writeln!(out, "  why the others lost:");
        for ch in e.choices.iter().filter(|ch| !ch.winner) {
            let _ = writeln!(out, "    {}: {}", ch.algorithm, ch.why);
        }
    }
    out
}

/// Rank 0's records per TOP_SP as bars on the predicted time axis: every
/// collective's phases in program order after its launch cost.
fn timeline(spec: &Path, valid: &ValidProgram) -> Result<String, Failure> {
    let schedule = build(valid).map_err(|e| Failure::input(miette::miette!("{}: {e}", spec.display())))?;
    let arch = schedule.arch.params();
    let rows_n = placement::topsps_used(&schedule);
    let rows: Vec<String> = (0..rows_n).map(|t| format!("TOP_SP {t}")).collect();
    let mut bars = Vec::new();
    let mut at = 0.0;
    for plan in &schedule.collectives {
        let e = cost::evaluate(&schedule, plan, &plan.model);
        at += e.prediction.launch_ns;
        for t in 0..placement::topsps_for(arch, plan.channels) {
            for p in &e.prediction.phases {
                bars.push(Bar {
                    row: usize::from(t),
                    start_us: us(at + p.start_ns),
                    end_us: us(at + p.start_ns + p.time_ns),
                    label: p.pattern.clone(),
                    colour: p.index,
                    title: format!(
                        "collective {} record {} on TOP_SP {t}: {} ({}{}), {} over {} hops, {:.0} bytes sent by the busiest rank, {:.2} us",
                        plan.index,
                        p.index,
                        p.pattern,
                        p.leg.map_or_else(String::new, |l| format!("{l} ")),
                        p.alg,
                        count(p.steps, "step"),
                        p.hop.name(),
                        p.bytes,
                        us(p.time_ns)
                    ),
                });
            }
        }
        at += e.prediction.total_ns - e.prediction.launch_ns;
    }
    let title = format!("{}: rank 0's records on the predicted time axis", spec.display());
    timeline_svg(&title, &rows, &bars).map_err(|e| Failure::input(miette::miette!("{e}")))
}

/// Writes a new file; refuses one that exists (ccc never overwrites a
/// file it did not write).
pub fn write_new(path: &Path, text: &str) -> Result<(), Failure> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| {
        Failure::input(miette::miette!(
            help = "ccc never overwrites a file: choose another name, or move that file away",
            "cannot create {}: {e}",
            path.display()
        ))
    })?;
    f.write_all(text.as_bytes()).map_err(|e| Failure::input(miette::miette!("cannot write {}: {e}", path.display())))
}
