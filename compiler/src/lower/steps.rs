//! The reference lowering: every step of every phase of the rank walked
//! ([`walk_collective`]), its transfers generated and counted on each
//! TOP_SP, then run-length folded. Cost O(steps); [`super::runs`] gives the
//! same in O(records + runs), and the tests hold the two to each other.

use super::{Lowering, PhasePosts, plan_phase_is_mesh};
use crate::step_graph::walk_collective;

/// Every phase of `l`'s collective, posted step by step.
pub(super) fn collective(l: &Lowering<'_>) -> Result<PhasePosts, super::LowerError> {
    let mut phases: PhasePosts = Vec::new();
    walk_collective(l.schedule, l.plan, l.at, |node| {
        if phases.last().map(|(p, _)| *p) != Some(node.phase) {
            phases.push((node.phase, l.posts()));
        }
        let mesh = plan_phase_is_mesh(l.plan, node.phase);
        match phases.last_mut() {
            Some((_, posts)) => l.count(node.step, node.transfers, 1, mesh, posts),
            None => Ok(()),
        }
    })?;
    Ok(phases)
}
