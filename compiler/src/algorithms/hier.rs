//! Hier: a hierarchical collective, one algorithm per leg (wire-contract
//! §7; `docs/algorithms.md` §3.10).
//!
//! The group index is `i = local + Lg * cross`. An intra leg runs over the
//! node part of the group (the `Lg` members of one node) on the whole
//! buffer; an inter leg runs over the cross part (one member per node, same
//! local index) on the piece the intra reduce-scatter left with the member:
//! blocks `{local, local + Lg, local + 2 Lg, ...}`. So:
//!
//! - all-reduce: intra reduce-scatter, inter all-reduce, intra all-gather;
//! - all-gather: inter all-gather, then intra all-gather;
//! - reduce-scatter: intra reduce-scatter, then inter reduce-scatter, which
//!   leaves block `local + Lg * node` = the member's own group index.
//!
//! Each leg is composed by its own algorithm's family, over its scope.

use super::{Composer, ScopeOp, Unsupported};
use crate::schedule::Scope;
use ccc_ir::enums::AlgType;
use ccc_ir::spec::Leg;

/// The collective a leg performs, its scope, and what narrowed the data.
fn leg_scope(leg: Leg) -> (ScopeOp, Scope, &'static [Scope]) {
    const NODE: Scope = Scope { lo: Scope::WHOLE.lo, hi: crate::schedule::DIGIT_NODE };
    const CROSS: Scope = Scope { lo: crate::schedule::DIGIT_NODE, hi: Scope::WHOLE.hi };
    const NARROWED: &[Scope] = &[NODE];
    match leg {
        Leg::IntraReduceScatter => (ScopeOp::ReduceScatter, NODE, &[]),
        Leg::IntraAllGather => (ScopeOp::AllGather, NODE, &[]),
        Leg::InterAllReduce => (ScopeOp::AllReduce, CROSS, NARROWED),
        Leg::InterReduceScatter => (ScopeOp::ReduceScatter, CROSS, NARROWED),
        Leg::InterAllGather => (ScopeOp::AllGather, CROSS, NARROWED),
    }
}

/// Appends the phases of every leg, in the order given (the op's run order).
///
/// # Errors
///
/// The first leg whose algorithm has no form for the leg's collective.
pub(crate) fn compose(c: &mut Composer<'_>, legs: &[(Leg, AlgType)]) -> Result<(), (Unsupported, Leg)> {
    for &(leg, alg) in legs {
        let (op, scope, narrow) = leg_scope(leg);
        c.compose(op, alg, scope, narrow, Some(leg)).map_err(|u| (u, leg))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The constant scopes are the whole group's node and cross parts.
    #[test]
    fn leg_scopes_are_the_node_and_cross_parts() {
        let (_, node, _) = leg_scope(Leg::IntraReduceScatter);
        let (_, cross, narrow) = leg_scope(Leg::InterAllReduce);
        assert_eq!(node, Scope::WHOLE.node_part());
        assert_eq!(cross, Scope::WHOLE.cross_part());
        assert_eq!(narrow, &[Scope::WHOLE.node_part()]);
    }
}
