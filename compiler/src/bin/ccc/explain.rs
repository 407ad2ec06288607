//! `ccc explain`: every legal choice of every collective, predicted and
//! bounded, the winner marked and why the others lost; and the cost lines
//! `compile` and `verify` print.

use crate::Failure;
use crate::args::ExplainArgs;
use crate::load::load_spec;
use ccc_backends::plot::{Bar, timeline_svg};
use ccc_compiler::build::build;
use ccc_compiler::cost;
use ccc_compiler::cost::auto::{display, runner_up};
use ccc_compiler::explain::{Explained, explain, us};
use ccc_compiler::placement;
use ccc_compiler::schedule::{CollectivePlan, Schedule};
use ccc_compiler::valid::ValidProgram;
use ccc_ir::noun::count;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

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
        // Auto predicts the runner-up however many choices it leaves
        // unpredicted.
        let next = runner_up(auto)
            .and_then(|(p, i)| Some((p, auto.alternatives.get(i)?)))
            .map(|(p, a)| format!("; next {} at {:.1} us", display(&a.algorithm), us(p as f64)))
            .unwrap_or_default();
        let legs: Vec<&str> = auto.auto_legs.iter().map(|l| l.field()).collect();
        let scope = if legs.is_empty() { String::new() } else { format!(" for {}", legs.join(", ")) };
        let chose = ccc_compiler::sign::algorithm(plan);
        let n = count(auto.alternatives.len(), "legal choice");
        let cheapest = auto.fitted.and_then(|f| Some((f, auto.alternatives.get(f.cheapest)?)));
        let _ = match cheapest {
            None => writeln!(out, "collective {}: Auto{scope} chose {chose}, the cheapest of {n}{next}", plan.index),
            // The program's CTRL SPAD moved it off the cheapest.
            Some((f, a)) => writeln!(
                out,
                "collective {}: Auto{scope} chose {chose} ({}, {}) of {n} to fit the program into \
                 the CTRL SPAD ({} slots per TOP_SP) and the mesh events ({} per TOP_SP); the cheapest, {} at \
                 {:.1} us, takes {} and {}",
                plan.index,
                count(f.slots as usize, "slot"),
                count(f.events as usize, "mesh event"),
                f.capacity,
                f.max_events,
                display(&a.algorithm),
                us(a.predicted_ns.unwrap_or_default() as f64),
                count(f.cheapest_slots as usize, "slot"),
                count(f.cheapest_events as usize, "mesh event"),
            ),
        };
    }
}

/// Runs `ccc explain`.
pub fn run(args: &ExplainArgs) -> Result<ExitCode, Failure> {
    let (parsed, valid) = load_spec(&args.spec, &args.hlo)?;
    let all = explain(&parsed.program, &valid);
    if let Some(path) = &args.svg {
        let svg = timeline(&args.spec, &valid)?;
        crate::out::write_new(path, &svg)?;
    }
    let text = if args.json {
        serde_json::to_string_pretty(&all).map_err(|e| Failure::input(miette::miette!("cannot write JSON: {e}")))?
            + "\n"
    } else {
        render(&args.spec, &valid, &all)
    };
    // The SVG is whole by now: a summary that cannot be printed says so.
    crate::out::emit_after(&text, "the tables", args.svg.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

fn render(spec: &Path, valid: &ValidProgram, all: &[Explained]) -> String {
    let mut out = String::new();
    let shape = valid.topology();
    let _ = writeln!(
        out,
        "{}: {}, {} per node, {} on {} (cost model: docs/cost-model.md; GB/s = 10^9 B/s)",
        spec.display(),
        count(shape.rank_n, "rank"),
        shape.local_rank_n,
        count(all.len(), "collective"),
        valid.arch()
    );
    for e in all {
        // Explicit groups set the bus bandwidth's factor (by the group's
        // size): named.
        let grouped = valid
            .collectives()
            .get(e.index as usize)
            .map(|c| c.groups())
            .filter(|g| g.is_explicit() && g.group_n() > 1)
            .map_or_else(String::new, |g| format!(" in {} of {}", count(g.group_n(), "group"), g.size()));
        let _ = writeln!(
            out,
            "\ncollective {}: {} of {} bytes{grouped}, algorithm {}{}: {}",
            e.index,
            e.op,
            e.bytes,
            e.written,
            // A Hier with legs left to the model: what it chose, beside
            // what was written (a whole Auto's choice is the starred row).
            if e.written.contains("=Auto") { format!(" (chose {})", e.chosen) } else { String::new() },
            // A written choice that does not lower is shown, but is not
            // one of the legal choices `Auto` would list.
            match e.choices.iter().any(|ch| ch.winner && ch.does_not_lower.is_some()) {
                true => format!("{} and the written one", count(e.choices.len().saturating_sub(1), "legal choice")),
                false => count(e.choices.len(), "legal choice").to_string(),
            }
        );
        // The algorithm last, as `sweep` puts it: a Hier's name is long,
        // and the numbers line up ahead of it.
        let _ = writeln!(
            out,
            "  {:<2}{:>11} {:>11} {:>11} {:>11} {:>7}  algorithm",
            "", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "bound(us)", "ratio"
        );
        for ch in &e.choices {
            let _ = writeln!(
                out,
                "  {:<2}{:>11.2} {:>11.2} {:>11.2} {:>11.2} {:>7.2}  {}",
                if ch.winner { "*" } else { "" },
                ch.time_us,
                ch.algbw_gbps,
                ch.busbw_gbps,
                ch.bound_us,
                ch.ratio,
                ch.algorithm
            );
        }
        if let Some(why) = e.choices.iter().find(|ch| ch.winner).and_then(|w| w.does_not_lower.as_ref()) {
            let _ = writeln!(out, "  ! the written choice does not lower: {why} (verify and compile refuse it)");
        }
        if let Some(w) = e.choices.iter().find(|ch| ch.winner) {
            let legend = match w.does_not_lower {
                // Refused by compile: not a choice it compiles to.
                Some(_) => "  (* the written choice, which does not lower; its legs:)",
                None => "  (* the choice this spec compiles to; its legs:)",
            };
            let _ = writeln!(out, "{legend}");
            for l in &w.legs {
                let _ = writeln!(
                    out,
                    "    leg {}: {} {:.2} us (bound {:.2} us)",
                    l.leg, l.algorithm, l.time_us, l.bound_us
                );
            }
        }
        // A lone choice lost to nothing: no heading over an empty list.
        if e.choices.iter().any(|ch| !ch.winner) {
            let _ = writeln!(out, "  why the others lost:");
        }
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
                    label: p.pattern.to_owned(),
                    colour: p.index,
                    title: format!(
                        "collective {} record {} on TOP_SP {t}: {} ({}{}), {} over {} hops, {:.0} bytes sent in the phase by the busiest rank over all its TOP_SPs, {:.2} us",
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
