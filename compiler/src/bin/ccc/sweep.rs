//! `ccc sweep`: the spec's first collective at every size from `--from` to
//! `--to` (times `--factor`), predicted by the cost model, in nccom-test's
//! spirit: size, count, type, time, algbw, busbw, and the choice per leg.
//! `--svg` plots predicted busbw against size for every legal choice, the
//! chosen path highlighted and each crossover marked.

use crate::Failure;
use crate::args::SweepArgs;
use crate::load::{load_first, load_first_recounted};
use crate::out::write_new;
use ccc_backends::plot::{Crossover, Curve, size_label, sweep_svg};
use ccc_compiler::cost::auto::{Machine, display, evaluate_choice, legal};
use ccc_compiler::explain::{legal_choices, us};
use ccc_compiler::lower::Limit;
use ccc_compiler::validate::{Problem, validate};
use ccc_ir::arch::Arch;
use ccc_ir::enums::OpType;
use ccc_ir::noun::count;
use ccc_ir::spec::{Collective, Program};
use serde::Serialize;
use std::fmt::Write as _;
use std::process::ExitCode;

/// One size.
#[derive(Serialize)]
pub struct Row {
    /// nccom-test's size, bytes (exact: an all-gather's can pass 2^64).
    pub size: u128,
    /// Elements per rank's input buffer.
    pub count: u64,
    /// Element type.
    pub dtype: String,
    /// Predicted time, µs.
    pub time_us: f64,
    /// algbw, GB/s (10^9 B/s).
    pub algbw_gbps: f64,
    /// busbw, GB/s.
    pub busbw_gbps: f64,
    /// The choice the spec compiles to at this size.
    pub algorithm: String,
    /// Per leg: (leg or `flat`, algorithm).
    pub legs: Vec<(String, String)>,
    /// Every legal choice's predicted busbw, GB/s (for `--svg`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<(String, f64)>,
    /// Each of `alternatives`' algbw, GB/s, in its order: what `--svg`
    /// plots where busbw is 0 at every size (a group of one rank).
    #[serde(skip)]
    pub alternatives_algbw: Vec<f64>,
}

/// The members of each of `c`'s groups (every rank without `groups`), at
/// least 1.
fn group_size(c: &Collective) -> u64 {
    u64::from(c.groups.as_ref().and_then(|g| g.first()).map_or(c.topology.rank_n, |g| g.len() as u32).max(1))
}

/// The count whose nccom-test size is `size` (an all-gather's size is its
/// output), rounded to what the op accepts; at least 1 (n for splitting ops).
fn count_for(c: &Collective, size: u64) -> u64 {
    let n = group_size(c);
    let elems = size / c.dtype.size();
    match c.op {
        OpType::AllGather => (elems / n).max(1),
        OpType::ReduceScatter | OpType::AllToAll => (elems / n * n).max(n),
        _ => elems.max(1),
    }
}

/// The smallest count the op accepts whose nccom-test size is at least
/// `size` (`None` past what a count holds): the row a range too narrow for
/// [`count_for`]'s sizes (`--from 9B --to 15B` of F32: 9 rounds down to 8)
/// may still hold.
fn count_at_least(c: &Collective, size: u64) -> Option<u64> {
    let n = group_size(c);
    let elems = size.div_ceil(c.dtype.size());
    match c.op {
        OpType::AllGather => Some(elems.div_ceil(n).max(1)),
        OpType::ReduceScatter | OpType::AllToAll => elems.div_ceil(n).checked_mul(n).map(|e| e.max(n)),
        _ => Some(elems.max(1)),
    }
}

/// Runs `ccc sweep`.
pub fn run(args: &SweepArgs) -> Result<ExitCode, Failure> {
    // Only the first collective is swept: only it is validated. Its
    // written count is never run: where that count is refused (`Auto`
    // serves no choice there), the first size asked is judged instead,
    // and the written count's refusal stands only if that is refused too.
    let (parsed, _) = match load_first(&args.spec, &args.hlo) {
        Ok(loaded) => loaded,
        Err(written) => {
            load_first_recounted(&args.spec, &args.hlo, &|c| count_for(c, args.from.0)).map_err(|_| written)?
        }
    };
    let Some(first) = parsed.program.collectives.first() else {
        return Err(Failure::input(miette::miette!("{}: no collective to sweep", args.spec.display())));
    };
    if args.from.0 == 0 || args.from.0 > args.to.0 {
        // Say which bound is wrong.
        let why = if args.from.0 == 0 { "--from is 0 bytes" } else { "--from is past --to" };
        return Err(Failure::input(miette::miette!(
            "--from {} --to {}: {why}; accepted: 1 <= from <= to",
            args.from,
            args.to
        )));
    }
    if first.op == OpType::AllToAllV {
        return Err(Failure::input(miette::miette!(
            help = "sweep an AllToAll of the same count, or compare AllToAllV specs with `ccc explain`",
            "{}: an AllToAllV's sizes are its `counts` matrix, which a sweep cannot scale with `count`",
            args.spec.display()
        )));
    }
    let want_all = args.svg.is_some() || args.json;
    let mut rows: Vec<Row> = Vec::new();
    let mut size = args.from.0;
    // The smallest size the op takes, when every size asked is under it.
    let mut smallest = None;
    // The first size that does not lower on the device, and why: the
    // table stops there (every larger size posts more per step).
    let mut stopped = None;
    loop {
        let count = count_for(first, size);
        if rows.last().is_none_or(|r| r.count != count) && smallest.is_none_or(|(c, _)| c != count) {
            let r = match row(&args.spec, first, count, want_all)? {
                Sized::Row(r) => r,
                Sized::DoesNotLower(why) => {
                    stopped = Some((count, why));
                    break;
                }
            };
            // A count rounded to what the op takes may move the size out
            // of the range asked: such a row is not printed.
            if (u128::from(args.from.0)..=u128::from(args.to.0)).contains(&r.size) {
                rows.push(r);
            } else {
                smallest = smallest.or(Some((count, r.size)));
            }
        }
        match size.checked_mul(args.factor) {
            Some(next) if next <= args.to.0 => size = next,
            _ => break,
        }
    }
    if let (true, Some((count, why))) = (rows.is_empty(), &stopped) {
        return Err(Failure::input(miette::miette!(
            help = why.help(first.arch),
            "{}: at count {count}, the first size asked, {}: {}",
            args.spec.display(),
            why.what(),
            why.said
        )));
    }
    // Every size asked rounded out of the range: the first count inside it,
    // if one is.
    if rows.is_empty()
        && stopped.is_none()
        && let Some(count) = count_at_least(first, args.from.0)
        && let Sized::Row(r) = row(&args.spec, first, count, want_all)?
        && r.size <= u128::from(args.to.0)
    {
        rows.push(r);
    }
    if rows.is_empty() {
        let (nearest, bytes) = smallest.unwrap_or_default();
        return Err(Failure::input(miette::miette!(
            help = format!("the nearest size this op takes is {bytes} bytes (count {nearest}): widen the range to it"),
            "--from {} --to {}: no size in this range is one {} of {} takes",
            args.from,
            args.to,
            first.op,
            count(first.topology.rank_n, "rank"),
        )));
    }
    if let Some(path) = &args.svg {
        // One row has no plot: said why there is one (the sweep stopped
        // where nothing lowers, or no other size in the range is one the
        // op takes).
        if let [only] = rows.as_slice() {
            let help = match &stopped {
                Some((count, why)) => format!(
                    "the sweep stops at count {count}, where {}: {why}; start lower, or leave out --svg",
                    why.what()
                ),
                None => "no other size in the range is one this op takes: widen --from and --to, or leave out \
                         --svg for the table alone"
                    .to_owned(),
            };
            return Err(Failure::input(miette::miette!(
                help = help,
                "cannot plot one size ({} bytes): a plot of busbw against size needs two sizes at least",
                only.size
            )));
        }
        write_new(path, &plot(&args.spec, first, &rows)?)?;
    }
    let text = if args.json {
        serde_json::to_string_pretty(&rows).map_err(|e| Failure::input(miette::miette!("cannot write JSON: {e}")))?
            + "\n"
    } else {
        table(first, &rows)
    };
    // The SVG is whole by now: a summary that cannot be printed says so.
    crate::out::emit_after(&text, "the rows", args.svg.as_deref())?;
    if let Some((count, why)) = stopped {
        note!("note: the sweep stops at count {count}, where {}: {why}", why.what());
    }
    Ok(ExitCode::SUCCESS)
}

/// One size of a sweep: its row, or why it does not lower on the device.
enum Sized {
    Row(Row),
    DoesNotLower(NotLowered),
}

/// Why a size ends the sweep: what was said, and the limit exceeded
/// (`None`: `Auto`'s predictions pass 2^64 ns, as every larger size's do).
struct NotLowered {
    said: String,
    limit: Option<Limit>,
    /// The written algorithm, when it is the one that does not lower
    /// (other choices may): `None` for `Auto`, which found none that does.
    written: Option<String>,
}

impl NotLowered {
    /// What to change, for the limit exceeded: the mesh events a choice
    /// needs do not grow with the size, so only another choice helps; the
    /// other limits grow with it.
    fn help(&self, arch: Arch) -> String {
        match self.limit {
            Some(Limit::MeshEvents) => {
                let which =
                    if self.written.is_some() { "the written choice lowers at no size" } else { "no size lowers" };
                format!("a smaller size needs as many mesh events, so {which}: {}", Limit::MeshEvents.advice(arch))
            }
            Some(limit) => format!("sweep smaller sizes (--to), or: {}", limit.advice(arch)),
            None => "sweep smaller sizes (--to), or give `model:` faster rates and smaller latencies".to_owned(),
        }
    }

    /// What happens at the size, after "where".
    fn what(&self) -> String {
        match (self.limit, &self.written) {
            (Some(_), Some(written)) => format!("the written choice, {written}, does not lower"),
            (Some(_), None) => "nothing lowers".to_owned(),
            (None, _) => "the predictions pass 2^64 ns".to_owned(),
        }
    }
}

impl std::fmt::Display for NotLowered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.said)
    }
}

fn row(spec: &std::path::Path, c: &Collective, count: u64, all: bool) -> Result<Sized, Failure> {
    let sized = Collective { count, ..c.clone() };
    let valid = match validate(&Program::from(sized.clone())) {
        Ok(valid) => valid,
        // `Auto` found nothing that lowers at this size: the sweep's end.
        Err(e) if e.0.iter().all(|p| matches!(p.problem, Problem::AutoNoneLowers { .. })) => {
            // The one collective swept's; none would be no refusal at all.
            // Of several limits, the last judged: a smaller size meets it
            // (the mesh events are the same at any size).
            let limit = e.0.iter().find_map(|p| match &p.problem {
                Problem::AutoNoneLowers { limit, also, .. } => Some(also.last().map_or(*limit, |a| a.limit)),
                _ => None,
            });
            if let Some(limit) = limit {
                let said = e.0.iter().map(|p| p.problem.to_string()).collect::<Vec<_>>().join("; ");
                return Ok(Sized::DoesNotLower(NotLowered { said, limit: Some(limit), written: None }));
            }
            return Err(Failure::input(miette::miette!("{}: at count {count}: {e}", spec.display())));
        }
        // Predicted past 2^64 ns: so is every larger size.
        Err(e) if e.0.iter().all(|p| matches!(p.problem, Problem::AutoOutOfRange { .. })) => {
            let said = e.0.iter().map(|p| p.problem.to_string()).collect::<Vec<_>>().join("; ");
            return Ok(Sized::DoesNotLower(NotLowered { said, limit: None, written: None }));
        }
        Err(e) => return Err(Failure::input(miette::miette!("{}: at count {count}: {e}", spec.display()))),
    };
    let machine = Machine::of(&valid);
    let Some(vc) = valid.collectives().first() else {
        return Err(Failure::input(miette::miette!("{}: no collective to sweep", spec.display())));
    };
    let Some((schedule, e)) = evaluate_choice(vc, machine, vc.model(), vc.algorithm()) else {
        return Err(Failure::input(miette::miette!(
            "{}: at count {count}: the schedule does not build",
            spec.display()
        )));
    };
    // A written choice that exceeds a device limit at this size is shown
    // by `explain`, and refused by `verify` and `compile`: not a row.
    let phases: Vec<_> = schedule.collectives.iter().flat_map(|p| p.phases.iter().map(move |ph| (p, ph))).collect();
    if let Some(r) = legal::refusal(&schedule.shape, machine.arch.params(), machine.mesh_event_room(), &phases) {
        let said = r.describe(machine.arch, machine.mesh_events_spent);
        // `Auto` drops a choice that does not lower before it chooses: this
        // is the written one.
        let written = vc.auto().is_none().then(|| display(vc.algorithm()));
        return Ok(Sized::DoesNotLower(NotLowered { said, limit: Some(r.limit), written }));
    }
    let legs = schedule
        .collectives
        .first()
        .map(|p| {
            p.legs
                .iter()
                .map(|(l, a)| (l.map_or_else(|| "flat".to_owned(), |l| l.field().to_owned()), a.name().to_owned()))
        })
        .into_iter()
        .flatten()
        .collect();
    let (mut alternatives, mut alternatives_algbw) = (Vec::new(), Vec::new());
    if all {
        for alg in legal_choices(&sized).unwrap_or_default() {
            if let Some((_, e)) = evaluate_choice(vc, machine, vc.model(), &alg) {
                alternatives.push((display(&alg), e.busbw() / 1e9));
                alternatives_algbw.push(e.algbw() / 1e9);
            }
        }
    }
    Ok(Sized::Row(Row {
        size: e.size,
        count,
        dtype: c.dtype.name().to_owned(),
        time_us: us(e.prediction.total_ns),
        algbw_gbps: e.algbw() / 1e9,
        busbw_gbps: e.busbw() / 1e9,
        algorithm: display(vc.algorithm()),
        legs,
        alternatives,
        alternatives_algbw,
    }))
}

fn table(c: &Collective, rows: &[Row]) -> String {
    let mut out = String::new();
    // Explicit groups set the bus bandwidth's factor (nccom-test's, by the
    // group's size), so the header names them.
    let grouped = match c.groups.as_deref() {
        Some(groups @ [first, _, ..]) => format!(" in {} of {}", count(groups.len(), "group"), first.len()),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "# {} over {} ({} per node){grouped} on {}, {}; predicted by the cost model (docs/cost-model.md); GB/s = \
         10^9 B/s",
        c.op,
        count(c.topology.rank_n, "rank"),
        c.topology.local_rank_n,
        c.arch,
        count(c.channels, "channel")
    );
    // Each column as wide as its widest cell, at least nccom-test's
    // (a size past 10^12 B or a time past 10^9 us widens its column, so
    // that the columns stay aligned).
    let header = ["size(B)", "count(elems)", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            let f = |v: f64| format!("{v:.2}");
            [
                r.size.to_string(),
                r.count.to_string(),
                r.dtype.to_string(),
                f(r.time_us),
                f(r.algbw_gbps),
                f(r.busbw_gbps),
            ]
        })
        .collect();
    let mut widths = [12, 14, 7, 12, 12, 12];
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |out: &mut String, row: &[&str], last: &str| {
        let padded: Vec<String> = row.iter().zip(widths).map(|(cell, width)| format!("{cell:>width$}")).collect();
        let _ = writeln!(out, "{}  {last}", padded.join(" "));
    };
    line(&mut out, &header, "algorithm");
    for (r, row) in rows.iter().zip(&cells) {
        line(&mut out, &row.each_ref().map(String::as_str), &r.algorithm);
    }
    out
}

fn plot(spec: &std::path::Path, c: &Collective, rows: &[Row]) -> Result<String, Failure> {
    // busbw is algbw times nccom-test's factor, which is 0 for a group of
    // one rank: then every value is 0, which a log axis cannot show, and
    // the plot is of algbw, as its axis and title say.
    let by_algbw = rows.iter().all(|r| r.busbw_gbps == 0.0) && rows.iter().any(|r| r.algbw_gbps > 0.0);
    let mut curves: Vec<Curve> = Vec::new();
    for r in rows {
        for (i, (name, busbw)) in r.alternatives.iter().enumerate() {
            let value = if by_algbw { r.alternatives_algbw.get(i).copied().unwrap_or(0.0) } else { *busbw };
            let name = short(name);
            match curves.iter_mut().find(|cv| cv.name == name) {
                Some(cv) => cv.points.push((r.size as f64, value)),
                None => curves.push(Curve { name, points: vec![(r.size as f64, value)] }),
            }
        }
    }
    let chosen: Vec<(f64, f64)> =
        rows.iter().map(|r| (r.size as f64, if by_algbw { r.algbw_gbps } else { r.busbw_gbps })).collect();
    let crossovers: Vec<Crossover> = rows
        .windows(2)
        .filter_map(|w| match w {
            [a, b] if a.algorithm != b.algorithm => Some(Crossover { size: b.size as f64, to: short(&b.algorithm) }),
            _ => None,
        })
        .collect();
    let title = format!(
        "{}: {} over {} on {}, {} to {}{}",
        spec.display(),
        c.op,
        ccc_ir::noun::count(u64::from(c.topology.rank_n), "rank"),
        c.arch,
        size_label(rows.first().map_or(0.0, |r| r.size as f64)),
        size_label(rows.last().map_or(0.0, |r| r.size as f64)),
        if by_algbw { " (algbw: busbw is 0 for a group of one rank)" } else { "" }
    );
    let measure = if by_algbw { "algbw" } else { "busbw" };
    sweep_svg(&title, measure, &curves, &chosen, &crossovers).map_err(|e| Failure::input(miette::miette!("{e}")))
}

/// A choice's name for a legend: the legs abbreviated (`intra_` → `i`,
/// `inter_` → `x`, `reduce_scatter` → `RS`, `all_reduce` → `AR`,
/// `all_gather` → `AG`), so that Hier combinations fit beside the plot.
fn short(name: &str) -> String {
    name.replace("intra_", "i")
        .replace("inter_", "x")
        .replace("reduce_scatter", "RS")
        .replace("all_reduce", "AR")
        .replace("all_gather", "AG")
}
