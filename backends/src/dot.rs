//! The step graph in Graphviz DOT: one box per (collective, step, rank)
//! listing the rank's transfers, solid edges for data dependencies and
//! dashed edges for program order. Node ids follow the canonical order, so
//! the output is deterministic.

use ccc_compiler::schedule::{BlockSet, Halves, Schedule, Transfer};
use ccc_compiler::step_graph::{EdgeKind, StepGraph, StepNode};
use ccc_ir::enums::HalfChunk;
use std::fmt::Write as _;

/// Renders `graph` (built from `schedule`) as a DOT digraph.
pub fn render(schedule: &Schedule, graph: &StepGraph) -> String {
    let mut out = String::new();
    out.push_str("digraph ccc {\n");
    out.push_str("  rankdir=LR;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n");
    let mut current: Option<u32> = None;
    for (i, node) in graph.nodes().enumerate() {
        if current != Some(node.collective.0) {
            if current.is_some() {
                out.push_str("  }\n");
            }
            current = Some(node.collective.0);
            let title = schedule
                .collectives
                .get(node.collective.0 as usize)
                .map(|p| format!("{}: {} ({})", node.collective, p.op, ccc_compiler::sign::algorithm(p)))
                .unwrap_or_default();
            let _ = writeln!(out, "  subgraph cluster_{} {{\n    label=\"{}\";", node.collective.0, escape(&title));
        }
        let _ = writeln!(out, "    n{i} [label=\"{}\"];", label(schedule, node));
    }
    if current.is_some() {
        out.push_str("  }\n");
    }
    for (from, to, kind) in graph.edges() {
        let style = match kind {
            EdgeKind::Program => " [style=dashed, color=gray]",
            EdgeKind::Data => "",
        };
        let _ = writeln!(out, "  n{from} -> n{to}{style};");
    }
    out.push_str("}\n");
    out
}

fn label(schedule: &Schedule, node: &StepNode) -> String {
    let plan = schedule.collectives.get(node.collective.0 as usize);
    let phase = plan.and_then(|p| p.phases.get(node.phase as usize)).map(|p| p.kind.to_string()).unwrap_or_default();
    let mut s = format!("{} {}\\l{}\\l", node.rank, node.step, escape(&phase));
    for t in &node.transfers {
        let _ = write!(s, "{}\\l", transfer(schedule, node, t));
    }
    s
}

fn transfer(schedule: &Schedule, node: &StepNode, t: &Transfer) -> String {
    let Some(plan) = schedule.collectives.get(node.collective.0 as usize) else { return String::new() };
    // A member the groups do not hold (a hand-made plan) shows by its index.
    let rank = |m: u32| plan.rank(node.group, m).map_or_else(|| format!("member {m}"), |r| r.to_string());
    let halves = match t.halves {
        Halves::Both => "H0+H1",
        Halves::Only(HalfChunk::H0) => "H0",
        Halves::Only(HalfChunk::H1) => "H1",
    };
    let fold = t.fold.map(|f| format!(", fold {}", f.c_name())).unwrap_or_default();
    let moved = if t.src == t.dst { String::new() } else { format!(" into {}", blocks(t.dst)) };
    if t.from == node.member && t.to == node.member {
        format!("copy {} {halves}{moved} (LOCAL)", blocks(t.src))
    } else if t.from == node.member {
        format!("send {} {halves}{moved} -> {} ({}){fold}", blocks(t.src), rank(t.to), t.neigh.c_name())
    } else {
        format!("recv {} {halves}{moved} <- {}{fold}", blocks(t.dst), rank(t.from))
    }
}

fn blocks(b: BlockSet) -> String {
    match b.count {
        0 => "no chunk".into(),
        1 => format!("chunk {}", b.start),
        n if n <= 4 => {
            let list: Vec<String> = b.iter().map(|x| x.to_string()).collect();
            format!("chunks {}", list.join(","))
        }
        n => format!("chunks {}+{}k (k<{n})", b.start, b.stride),
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
