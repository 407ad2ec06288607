//! `ccc graph`: the step graph in Graphviz DOT.
//!
//! The graph has one node per step of every rank drawn, so a large world
//! drawn whole would not fit in memory (a 65,536-rank ring has billions of
//! nodes). The node count is known from the schedule before anything is
//! built; above [`MAX_GRAPH_NODES`] the verb refuses (exit 2) and says to
//! draw fewer ranks with `--rank`.

use crate::Failure;
use crate::args::GraphArgs;
use crate::compile::compile_failure;
use crate::load::load_spec;
use ccc_compiler::build::build;
use ccc_compiler::schedule::Schedule;
use ccc_compiler::step_graph::StepGraph;
use ccc_ir::id::Rank;
use ccc_ir::noun::count;
use std::process::ExitCode;

/// The most nodes a graph may have: well past anything Graphviz lays out,
/// and some 50 MB of DOT (a node and its edges take about 230 bytes).
const MAX_GRAPH_NODES: u64 = 200_000;

/// Runs `ccc graph`.
pub fn run(args: &GraphArgs) -> Result<ExitCode, Failure> {
    let (_, valid) = load_spec(&args.spec, &args.hlo)?;
    let schedule = build(&valid).map_err(|e| compile_failure(&args.spec, e.into()))?;
    let rank_n = schedule.shape.rank_n;
    if let Some(bad) = args.ranks.iter().find(|&&r| r >= rank_n) {
        let world = count(rank_n, "rank");
        return Err(Failure::input(miette::miette!("--rank {bad}: the world has {world} (0..{rank_n})")));
    }
    let mut ranks: Vec<Rank> = if args.ranks.is_empty() {
        (0..rank_n).map(Rank).collect()
    } else {
        args.ranks.iter().copied().map(Rank).collect()
    };
    // The graph draws each rank once, however often it is asked for.
    ranks.sort_unstable();
    ranks.dedup();
    let nodes = node_count(&schedule, ranks.len());
    if nodes > MAX_GRAPH_NODES {
        let steps: u64 = schedule.collectives.iter().map(|c| u64::from(c.step_n)).sum();
        let drawn = if args.ranks.is_empty() { "every rank" } else { "the ranks asked for" };
        return Err(Failure::input(miette::miette!(
            help = "pass --rank R (repeatable) to draw fewer ranks",
            "{}: the step graph of {drawn} would have {nodes} nodes ({} x {}), over the limit of {MAX_GRAPH_NODES}",
            args.spec.display(),
            count(ranks.len(), "rank"),
            count(steps, "step"),
        )));
    }
    let graph = StepGraph::build(&schedule, &ranks);
    crate::out::emit(&ccc_backends::dot::render(&schedule, &graph))?;
    Ok(ExitCode::SUCCESS)
}

/// The nodes the graph of `rank_n` ranks has: one per step of every
/// collective, for each rank.
fn node_count(schedule: &Schedule, rank_n: usize) -> u64 {
    let ranks = u64::try_from(rank_n).unwrap_or(u64::MAX);
    schedule.collectives.iter().map(|c| u64::from(c.step_n).saturating_mul(ranks)).fold(0, u64::saturating_add)
}
