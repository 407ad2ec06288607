//! The orbit run: a symmetric group's postcondition proven on member 0
//! alone, its transfers standing for every member's moved (see
//! `symmetry`).

use crate::schedule::{CollectivePlan, Halves, OpKind, Transfer};
use crate::verify::action::is_moved_by;
use crate::verify::sets::{EMPTY, SetId, Sets};
use crate::verify::symmetry::Orbit;
use ccc_ir::enums::HalfChunk;

/// The run of a symmetric group (all-reduce, all-gather or
/// reduce-scatter: their buffers start invariant) on member 0 alone, for
/// one half. Member `m`'s cell `b` is member 0's cell `b - m` with every
/// contributor shifted by `m`, so what member `q` sends from block `b` is
/// member 0's block `b - q`, shifted by `q`. The checks are the full run's,
/// on member 0's transfers: each must involve member 0 and keep its block;
/// each receive from `q` is matched to one send of member 0 that, rotated
/// by `q`, is that receive (member `q`'s send, by invariance), and every
/// send is matched, which matches every member's; folds never overlap; the
/// end state is member 0's share of the postcondition.
///
/// Returns the transfers matched over all members, or `None` when any
/// check fails: the full run then finds the defect and names it.
pub(super) fn run(plan: &CollectivePlan, orbit: &Orbit, half: HalfChunk) -> Option<u64> {
    let n = plan.groups.size();
    let action = &orbit.action;
    let mut sets = Sets::new(n);
    let own = sets.single(0);
    let mut rel: Vec<SetId> =
        (0..n).map(|b| if plan.kind == OpKind::AllGather && b != 0 { EMPTY } else { own }).collect();
    let moves = |t: &Transfer| match t.halves {
        Halves::Both => true,
        Halves::Only(h) => h == half,
    };
    let (mut received, mut values, mut matched) = (0u64, Vec::new(), Vec::new());
    for step in 0..plan.step_n {
        let list = orbit.step(step);
        if list.iter().any(|t| {
            t.from >= n || t.to >= n || (t.from != 0 && t.to != 0) || !t.src.same_positions(t.dst) || !t.src.below(n)
        }) {
            return None;
        }
        matched.clear();
        matched.resize(list.len(), false);
        for y in list.iter().filter(|y| y.to == 0) {
            let k = (0..list.len())
                .find(|&k| list[k].from == 0 && !matched[k] && is_moved_by(y, &list[k], y.from, action))?;
            matched[k] = true;
        }
        if (0..list.len()).any(|k| list[k].from == 0 && !matched[k]) {
            return None;
        }
        // Read every value before the step writes any.
        values.clear();
        for y in list.iter().filter(|y| y.to == 0 && moves(y)) {
            for b in y.src.iter() {
                let at = action.add(b, action.inverse(y.from));
                values.push(sets.translate(rel[at as usize], y.from, action));
            }
        }
        let mut next = values.iter();
        for y in list.iter().filter(|y| y.to == 0 && moves(y)) {
            for b in y.dst.iter() {
                let (cell, &value) = (&mut rel[b as usize], next.next()?);
                *cell = match y.fold {
                    None => value,
                    Some(_) => sets.union(*cell, value).ok()?,
                };
            }
            received += 1;
        }
    }
    let full = sets.full();
    let done = match plan.kind {
        OpKind::AllReduce => rel.iter().all(|&c| c == full),
        OpKind::AllGather => (0..n).all(|b| rel[b as usize] == sets.single(b)),
        OpKind::ReduceScatter => rel[0] == full,
        _ => false,
    };
    done.then_some(received * u64::from(n))
}
