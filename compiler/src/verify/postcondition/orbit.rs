//! The orbit run: a symmetric group's postcondition proven on member 0
//! alone, its transfers standing for every member's moved (see
//! `symmetry`).

use crate::schedule::{CollectivePlan, Halves, OpKind, Transfer};
use crate::verify::action::is_moved_by;
use crate::verify::sets::{EMPTY, SetId, Sets};
use crate::verify::symmetry::Orbit;
use ccc_ir::enums::HalfChunk;

/// The run of a symmetric group (all-reduce, all-gather, reduce-scatter
/// or all-to-all: their buffers start invariant) on member 0 alone, for
/// one half. Member `m`'s cell `b` is member 0's cell `b - m` with every
/// contributor shifted by `m`, so what member `q` sends from block `b` is
/// member 0's block `b - q`, shifted by `q`. The checks are the full run's,
/// on member 0's transfers: each must involve member 0 and keep its block;
/// each receive from `q` is matched to one send of member 0 that, rotated
/// by `q`, is that receive (member `q`'s send, by invariance), and every
/// send is matched, which matches every member's; folds never overlap; the
/// end state is member 0's share of the postcondition.
///
/// An all-to-all's cells also carry the chunk they hold, as the full run's
/// do: member `m`'s input block `i` holds its chunk `i`, so member `q`'s
/// cell moved from member 0's holds member 0's chunk moved by `q` too (a
/// chunk is an index among `n`, and moves as one). Its transfers copy an
/// input block to an output block, never fold, and member 0 must end
/// with output block `n + j` holding member `j`'s chunk 0 (by invariance,
/// member `m`'s holds member `j`'s chunk `m`).
///
/// Returns the transfers matched over all members, or `None` when any
/// check fails: the full run then finds the defect and names it.
pub(super) fn run(plan: &CollectivePlan, orbit: &Orbit, half: HalfChunk) -> Option<u64> {
    let n = plan.groups.size();
    let block_n = plan.layout().block_n();
    let action = &orbit.action;
    let all_to_all = plan.kind == OpKind::AllToAll;
    let mut sets = Sets::new(n);
    let own = sets.single(0);
    let holds = |b: u32| match plan.kind {
        OpKind::AllGather => b == 0,
        OpKind::AllToAll => b < n,
        _ => true,
    };
    let mut rel: Vec<SetId> = (0..block_n).map(|b| if holds(b) { own } else { EMPTY }).collect();
    // The chunk each cell holds (an all-to-all's; the others hold chunk
    // `b` at block `b` throughout).
    let mut chunks: Vec<u32> = if all_to_all { (0..block_n).map(|b| b % n).collect() } else { Vec::new() };
    let moves = |t: &Transfer| match t.halves {
        Halves::Both => true,
        Halves::Only(h) => h == half,
    };
    let (mut received, mut values, mut matched) = (0u64, Vec::new(), Vec::new());
    for step in 0..plan.step_n {
        let list = orbit.step(step);
        let shape = |t: &Transfer| {
            let blocks = if all_to_all {
                t.src.count == t.dst.count && t.src.below(n) && t.dst.below(block_n) && t.fold.is_none()
            } else {
                t.src.same_positions(t.dst) && t.src.below(n)
            };
            blocks && t.from < n && t.to < n && (t.from == 0 || t.to == 0)
        };
        if !list.iter().all(shape) {
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
                let at = action.add_block(b, action.inverse(y.from)) as usize;
                let chunk = chunks.get(at).map_or(0, |&c| action.add(c, y.from));
                values.push((sets.translate(*rel.get(at)?, y.from, action), chunk));
            }
        }
        let mut next = values.iter();
        for y in list.iter().filter(|y| y.to == 0 && moves(y)) {
            for b in y.dst.iter() {
                let (cell, &(value, chunk)) = (rel.get_mut(b as usize)?, next.next()?);
                *cell = match y.fold {
                    None => value,
                    Some(_) => sets.union(*cell, value).ok()?,
                };
                if let Some(c) = chunks.get_mut(b as usize) {
                    *c = chunk;
                }
            }
            received += 1;
        }
    }
    let full = sets.full();
    let done = match plan.kind {
        OpKind::AllReduce => rel.iter().all(|&c| c == full),
        OpKind::AllGather => (0..n).all(|b| rel[b as usize] == sets.single(b)),
        OpKind::ReduceScatter => rel[0] == full,
        OpKind::AllToAll => (0..n).all(|j| rel[(n + j) as usize] == sets.single(j) && chunks[(n + j) as usize] == 0),
        _ => false,
    };
    done.then_some(received * u64::from(n))
}
