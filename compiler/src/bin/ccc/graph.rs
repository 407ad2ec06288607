//! `ccc graph`: the step graph in Graphviz DOT.

use crate::Failure;
use crate::args::GraphArgs;
use crate::compile::compile_failure;
use crate::load::load_spec;
use ccc_compiler::build::build;
use ccc_compiler::step_graph::StepGraph;
use ccc_ir::id::Rank;
use std::process::ExitCode;

/// Runs `ccc graph`.
pub fn run(args: &GraphArgs) -> Result<ExitCode, Failure> {
    let (_, valid) = load_spec(&args.spec)?;
    let schedule = build(&valid).map_err(|e| compile_failure(&args.spec, e.into()))?;
    let rank_n = schedule.shape.rank_n;
    if let Some(bad) = args.ranks.iter().find(|&&r| r >= rank_n) {
        return Err(Failure::input(miette::miette!("--rank {bad}: the world has {rank_n} ranks (0..{rank_n})")));
    }
    let ranks: Vec<Rank> = if args.ranks.is_empty() {
        (0..rank_n).map(Rank).collect()
    } else {
        args.ranks.iter().copied().map(Rank).collect()
    };
    let graph = StepGraph::build(&schedule, &ranks);
    print!("{}", ccc_backends::dot::render(&schedule, &graph));
    Ok(ExitCode::SUCCESS)
}
