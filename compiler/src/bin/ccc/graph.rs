//! `ccc graph`: the step graph in Graphviz DOT.
//!
//! The graph has one node per step of every rank drawn, so a large world
//! drawn whole would not fit in memory (a 65,536-rank ring has billions of
//! nodes). The node count is known from the schedule before anything is
//! built; above [`MAX_GRAPH_NODES`] the verb refuses (exit 2) and says to
//! draw fewer ranks with `--rank`. Each node also lists its transfers (an
//! edge and a label entry each), which grow with the peers of a step: a
//! mesh all-to-all of 4,096 ranks has 4,096 nodes but 16 million
//! transfers, gigabytes of DOT. Their number is estimated from the first
//! and last rank drawn, built alone, before the whole graph is; above
//! [`MAX_GRAPH_TRANSFERS`] the verb refuses too, and so it does when the
//! ranks drawn, each built alone and counted in turn, pass it (a rank
//! between the first and last may be far busier: a rooted op's root).

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

/// The most transfers a graph may draw: some 50 MB of DOT (a transfer,
/// counted at each end, takes about 60 bytes: its edge and its entry in a
/// node's label).
const MAX_GRAPH_TRANSFERS: u64 = 800_000;

/// Runs `ccc graph`.
pub fn run(args: &GraphArgs) -> Result<ExitCode, Failure> {
    let (_, valid) = load_spec(&args.spec, &args.hlo)?;
    let schedule = build(&valid).map_err(|e| compile_failure(&args.spec, e.into()))?;
    let rank_n = schedule.shape.rank_n;
    if let Some(bad) = args.ranks.iter().find(|&&r| r >= rank_n) {
        let world = count(rank_n, "rank");
        let accepted = if rank_n == 1 { "rank 0".to_owned() } else { format!("ranks 0 to {}", rank_n - 1) };
        return Err(Failure::input(miette::miette!(
            help = format!("accepted: {accepted}"),
            "--rank {bad}: no such rank: the world has {world}"
        )));
    }
    let mut ranks: Vec<Rank> = if args.ranks.is_empty() {
        (0..rank_n).map(Rank).collect()
    } else {
        args.ranks.iter().copied().map(Rank).collect()
    };
    // The graph draws each rank once, however often it is asked for.
    ranks.sort_unstable();
    ranks.dedup();
    let drawn = if args.ranks.is_empty() { "every rank" } else { "the ranks asked for" };
    // Fewer ranks help unless one is drawn already.
    let help = if ranks.len() > 1 {
        "pass --rank R (repeatable) to draw fewer ranks"
    } else {
        "one rank's graph is over the limit: draw a smaller spec (fewer steps, or fewer peers a step)"
    };
    let nodes = node_count(&schedule, ranks.len());
    if nodes > MAX_GRAPH_NODES {
        let steps: u64 = schedule.collectives.iter().map(|c| u64::from(c.step_n)).sum();
        return Err(Failure::input(miette::miette!(
            help = help,
            "{}: the step graph of {drawn} would have {nodes} nodes ({} x {}), over the limit of {MAX_GRAPH_NODES}",
            args.spec.display(),
            count(ranks.len(), "rank"),
            count(steps, "step"),
        )));
    }
    // The transfers, from the busier of the first and last rank drawn
    // (a rooted op's root, rank 0 by default, is often the busiest). One
    // rank drawn is built once: its graph is the one drawn.
    let alone = |r: &Rank| StepGraph::build(&schedule, &[*r]);
    let first = ranks.first().map(alone);
    let last = ranks.last().filter(|_| ranks.len() > 1).map(alone);
    let per_rank = [&first, &last]
        .into_iter()
        .flatten()
        .map(|g| g.nodes().map(|n| n.transfers.len() as u64).sum::<u64>())
        .max()
        .unwrap_or(0);
    let transfers = per_rank.saturating_mul(ranks.len() as u64);
    if transfers > MAX_GRAPH_TRANSFERS {
        return Err(Failure::input(miette::miette!(
            help = help,
            "{}: the step graph of {drawn} would draw about {transfers} transfers ({} x {per_rank}), over the \
             limit of {MAX_GRAPH_TRANSFERS}",
            args.spec.display(),
            count(ranks.len(), "rank"),
        )));
    }
    // The estimate holds for the first and last rank; a rank between them
    // may be far busier (a rooted op's root): every rank drawn is counted,
    // each built alone, until the count passes the limit.
    if ranks.len() > 2 {
        let mut counted = 0u64;
        for (k, r) in ranks.iter().enumerate() {
            let own: u64 = alone(r).nodes().map(|n| n.transfers.len() as u64).sum();
            counted = counted.saturating_add(own);
            if counted > MAX_GRAPH_TRANSFERS {
                return Err(Failure::input(miette::miette!(
                    help = help,
                    "{}: the step graph of {drawn} would draw more than {MAX_GRAPH_TRANSFERS} transfers, the \
                     limit: the first {} draw {counted} (rank {} alone {own})",
                    args.spec.display(),
                    count(k + 1, "rank"),
                    r.0,
                )));
            }
        }
    }
    let graph = match first {
        Some(graph) if ranks.len() == 1 => graph,
        _ => StepGraph::build(&schedule, &ranks),
    };
    crate::out::emit(&ccc_backends::dot::render(&schedule, &graph))?;
    Ok(ExitCode::SUCCESS)
}

/// The nodes the graph of `rank_n` ranks has: one per step of every
/// collective, for each rank.
fn node_count(schedule: &Schedule, rank_n: usize) -> u64 {
    let ranks = u64::try_from(rank_n).unwrap_or(u64::MAX);
    schedule.collectives.iter().map(|c| u64::from(c.step_n).saturating_mul(ranks)).fold(0, u64::saturating_add)
}
