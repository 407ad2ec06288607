//! The reference lowering: every step of every phase of the rank walked
//! ([`walk_collective`]), its transfers generated and counted on each
//! TOP_SP, then run-length folded. Cost O(steps); [`super::runs`] gives the
//! same in O(records + runs), and the tests hold the two to each other.

use super::{Lowering, PhaseSink, plan_phase_is_mesh};
use crate::step_graph::walk_collective;

/// Every phase of `l`'s collective, posted step by step into `emit`.
pub(super) fn collective(l: &Lowering<'_>, emit: &mut PhaseSink<'_>) -> Result<(), super::LowerError> {
    let mut posts = l.posts();
    let mut current = None;
    walk_collective(l.schedule, l.plan, l.at, |node| {
        if current != Some(node.phase) {
            if let Some(phase) = current {
                emit(phase, &mut posts)?;
            }
            current = Some(node.phase);
        }
        let mesh = plan_phase_is_mesh(l.plan, node.phase);
        l.count(node.step, node.transfers, 1, mesh, &mut posts)
    })?;
    match current {
        Some(phase) => emit(phase, &mut posts),
        None => Ok(()),
    }
}
