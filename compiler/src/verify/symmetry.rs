//! Rotation symmetry: when every member of a group runs member 0's program
//! shifted by its own index, member 0's run stands for every member's.
//!
//! A group of `n` members is *rotation-invariant* when, at every step,
//! member `m`'s transfers are member 0's, in the same order, with every
//! member index and every block position shifted by `m` (mod `n`) and
//! nothing else changed (but the display-only `neigh` label). A ring is: member `m` sends block `m - s` to
//! `m + 1` at step `s`. [`rotation`] checks it for every member at every
//! step, on every core, from the transfers themselves (not from what the
//! algorithm is called), and keeps member 0's.
//!
//! Invariance is what lets [`super::postcondition`] execute member 0
//! alone: if the buffers start rotation-invariant (member `m`'s block `b`
//! holds member 0's block `b - m` with every contributor shifted by `m`),
//! every step keeps them so, since every member reads and writes the same
//! cells relative to itself. Checking invariance costs one listing of
//! every member's transfers; the symbolic execution it saves costs a
//! buffer of `n` x `n` cells and a fold per transfer of the world.

use super::postcondition::{Site, TransferSource};
use crate::schedule::{BlockSet, CollectivePlan, Schedule, Transfer};
use rayon::prelude::*;

/// The rotation-invariant groups of every collective of a schedule, found
/// once and shared by both provers.
#[derive(Debug)]
pub struct Symmetry {
    /// `[collective][group]`.
    rotations: Vec<Vec<Option<Rotation>>>,
}

impl Symmetry {
    /// Finds the rotation-invariant groups of the schedule as built.
    pub fn find(schedule: &Schedule) -> Symmetry {
        Symmetry::find_with(schedule, &super::postcondition::AsBuilt)
    }

    /// Finds them from `source`'s transfers.
    pub(crate) fn find_with(schedule: &Schedule, source: &dyn TransferSource) -> Symmetry {
        let rotations = schedule
            .collectives
            .iter()
            .map(|plan| (0..plan.groups.group_n()).map(|g| rotation(schedule, plan, g, source)).collect())
            .collect();
        Symmetry { rotations }
    }

    /// No group taken as invariant: every proof runs in full.
    pub fn none() -> Symmetry {
        Symmetry { rotations: Vec::new() }
    }

    /// Member 0's transfers of `group` of `collective`, if it is invariant.
    pub(crate) fn rotation(&self, collective: u32, group: u32) -> Option<&Rotation> {
        self.rotations.get(collective as usize)?.get(group as usize)?.as_ref()
    }

    /// How many groups, over every collective, are rotation-invariant.
    pub fn invariant_groups(&self) -> u64 {
        self.rotations.iter().flatten().filter(|r| r.is_some()).count() as u64
    }
}

/// Member 0's transfers of a rotation-invariant group, step by step.
#[derive(Debug)]
pub(crate) struct Rotation {
    transfers: Vec<Transfer>,
    /// Step `s`'s transfers are `transfers[at[s]..at[s + 1]]`.
    at: Vec<usize>,
}

impl Rotation {
    /// Member 0's transfers at step `s` of the collective.
    pub(crate) fn step(&self, s: u32) -> &[Transfer] {
        let s = s as usize;
        match (self.at.get(s), self.at.get(s + 1)) {
            (Some(&a), Some(&b)) => &self.transfers[a..b],
            _ => &[],
        }
    }
}

/// Member 0's transfers, if every member of `group` lists, at every step,
/// exactly member 0's rotated by its index; `None` at the first member and
/// step that does not (or for a group of fewer than two members, or whose
/// blocks are not one per member, where rotation means nothing).
pub(crate) fn rotation(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    source: &dyn TransferSource,
) -> Option<Rotation> {
    let n = plan.groups.size();
    if n < 2 || plan.layout().block_n() != n {
        return None;
    }
    let mut base = Rotation { transfers: Vec::new(), at: vec![0] };
    walk(schedule, plan, group, 0, source, |list| {
        base.transfers.extend_from_slice(list);
        base.at.push(base.transfers.len());
        true
    });
    let same = (1..n).into_par_iter().with_min_len(8).all(|m| {
        let mut step = 0u32;
        walk(schedule, plan, group, m, source, |list| {
            let want = base.step(step);
            step += 1;
            list.len() == want.len() && list.iter().zip(want).all(|(x, b)| is_rotated(x, b, m, n))
        })
    });
    same.then_some(base)
}

/// Lists member `m`'s transfers step by step into `visit`; stops (and
/// returns `false`) when `visit` does.
fn walk(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    m: u32,
    source: &dyn TransferSource,
    mut visit: impl FnMut(&[Transfer]) -> bool,
) -> bool {
    let mut list = Vec::new();
    for phase in &plan.phases {
        let inst = plan.instance(phase, m);
        for t in 0..phase.step_n {
            list.clear();
            let site = Site { group, index: m, phase, inst, step: phase.first_step + t, t };
            source.transfers(schedule, plan, &site, &mut list);
            if !visit(&list) {
                return false;
            }
        }
    }
    true
}

/// `x` is `base` with its members and blocks shifted by `g` (mod `n`).
/// `neigh` is not compared: it names the link (within a node or across)
/// for display, no proof reads it, and a ring over several nodes crosses
/// a node boundary at some members and not at others.
#[inline]
pub(crate) fn is_rotated(x: &Transfer, base: &Transfer, g: u32, n: u32) -> bool {
    x.halves == base.halves
        && x.fold == base.fold
        && x.from == shift(base.from, g, n)
        && x.to == shift(base.to, g, n)
        && blocks_rotated(x.src, base.src, g, n)
        && blocks_rotated(x.dst, base.dst, g, n)
}

/// `v + g` (mod `n`), for `g < n`: a compare instead of a division, which
/// would cost more than the rest of the check.
#[inline]
pub(crate) fn shift(v: u32, g: u32, n: u32) -> u32 {
    let (s, n) = (u64::from(v) + u64::from(g), u64::from(n));
    let s = if s >= n { s - n } else { s };
    // Only a member or block out of range gets here: divide.
    (if s >= n { s % n } else { s }) as u32
}

#[inline]
fn blocks_rotated(x: BlockSet, base: BlockSet, g: u32, n: u32) -> bool {
    if x.count != base.count {
        return false;
    }
    let Some(last) = x.count.checked_sub(1) else { return true };
    // No wrap: the shifted set is the same progression from a shifted start.
    let start = u64::from(base.start) + u64::from(g);
    if x.stride == base.stride && start + u64::from(last) * u64::from(base.stride) < u64::from(n) {
        return u64::from(x.start) == start;
    }
    (0..x.count).all(|j| x.get(j) == shift(base.get(j), g, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::testing::Case;
    use crate::verify::postcondition::AsBuilt;
    use ccc_ir::enums::{AlgType, OpType};

    fn rotation_of(case: &Case) -> Option<Rotation> {
        let schedule = build(&case.valid()).unwrap();
        rotation(&schedule, &schedule.collectives[0], 0, &AsBuilt)
    }

    #[test]
    fn a_flat_ring_is_rotation_invariant() {
        for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter] {
            let rot = rotation_of(&Case::flat(op, AlgType::Ring, 6, 2)).unwrap_or_else(|| panic!("{op:?}"));
            // Member 0 sends one block to member 1 and receives one from member 5.
            let first = rot.step(0);
            assert_eq!(first.len(), 2, "{op:?}: {first:?}");
            assert!(first.iter().any(|t| t.from == 0 && t.to == 1), "{op:?}: {first:?}");
            assert!(first.iter().any(|t| t.from == 5 && t.to == 0), "{op:?}: {first:?}");
        }
    }

    #[test]
    fn a_two_level_ring_is_not() {
        // Within a node, member 3's successor is member 0 of its node, not member 4.
        let case = Case::hier(
            OpType::AllReduce,
            &[
                (ccc_ir::spec::Leg::IntraReduceScatter, AlgType::Ring),
                (ccc_ir::spec::Leg::InterAllReduce, AlgType::Ring),
                (ccc_ir::spec::Leg::IntraAllGather, AlgType::Ring),
            ],
            8,
            4,
        );
        assert!(rotation_of(&case).is_none());
    }

    #[test]
    fn shifts_wrap_members_and_blocks() {
        let base = Transfer {
            from: 3,
            to: 0,
            src: BlockSet::one(2),
            dst: BlockSet::one(2),
            halves: crate::schedule::Halves::Both,
            fold: None,
            neigh: ccc_ir::enums::Neigh::Local,
        };
        let x = Transfer { from: 1, to: 2, src: BlockSet::one(0), dst: BlockSet::one(0), ..base };
        assert!(is_rotated(&x, &base, 2, 4));
        assert!(!is_rotated(&x, &base, 1, 4));
        let moved = Transfer { dst: BlockSet::one(1), ..x };
        assert!(!is_rotated(&moved, &base, 2, 4));
    }
}
