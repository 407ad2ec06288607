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

use super::postcondition::{AsBuilt, Site, TransferSource};
use crate::schedule::{BlockSet, CollectivePlan, Schedule, Transfer};
use crate::step_graph::NodeView;
use ccc_ir::id::Rank;
use rayon::prelude::*;

/// The rotation-invariant groups of every collective of a schedule, found
/// once and shared by both provers.
#[derive(Debug, PartialEq, Eq)]
pub struct Symmetry {
    /// `[collective][group]`.
    rotations: Vec<Vec<Option<Rotation>>>,
}

impl Symmetry {
    /// Finds the rotation-invariant groups of the schedule as built.
    pub fn find(schedule: &Schedule) -> Symmetry {
        Symmetry::find_with(schedule, &AsBuilt)
    }

    /// Finds them from `source`'s transfers.
    pub(crate) fn find_with<S: TransferSource + ?Sized>(schedule: &Schedule, source: &S) -> Symmetry {
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

/// Member 0's transfers of every group that can be rotation-invariant (two
/// members or more, one block per member), listed before any rank is
/// lowered: what each rank's [`Watch`] compares its step graph with while
/// lowering walks it. A compile that lowers every rank anyway finds the
/// invariant groups this way for the cost of the comparisons alone; the
/// result is the one [`Symmetry::find`] gives.
#[derive(Debug)]
pub struct Bases {
    /// `[collective][group]`.
    rotations: Vec<Vec<Option<Rotation>>>,
}

/// A watch's count for a collective once a step was not the base rotated.
const BROKEN: u32 = u32::MAX;

impl Bases {
    /// Member 0's transfers of every candidate group of the schedule as built.
    pub fn new(schedule: &Schedule) -> Bases {
        let rotations = schedule
            .collectives
            .iter()
            .map(|plan| (0..plan.groups.group_n()).map(|g| base(schedule, plan, g, &AsBuilt)).collect())
            .collect();
        Bases { rotations }
    }

    /// A watch for rank `rank`'s lowering.
    pub fn watch(&self, rank: Rank) -> Watch<'_> {
        Watch { bases: self, seen: Seen { rank, steps: vec![0; self.rotations.len()] } }
    }

    /// The invariant groups: every member of the group was watched, and at
    /// every step of the collective its transfers were member 0's rotated.
    /// A rank missing from `seen` leaves its groups not invariant.
    pub fn symmetry(self, schedule: &Schedule, seen: &[Seen]) -> Symmetry {
        let mut by_rank: Vec<Option<&Seen>> = vec![None; schedule.shape.rank_n as usize];
        for s in seen {
            if let Some(slot) = by_rank.get_mut(s.rank.0 as usize) {
                *slot = Some(s);
            }
        }
        let rotations = self
            .rotations
            .into_iter()
            .zip(&schedule.collectives)
            .map(|(groups, plan)| {
                let c = plan.index as usize;
                let whole = |g: u32| {
                    (0..plan.groups.size()).all(|m| {
                        let seen = by_rank.get(plan.rank(g, m).0 as usize).copied().flatten();
                        seen.and_then(|s| s.steps.get(c)).is_some_and(|&steps| steps == plan.step_n)
                    })
                };
                groups.into_iter().enumerate().map(|(g, rot)| rot.filter(|_| whole(g as u32))).collect()
            })
            .collect();
        Symmetry { rotations }
    }
}

/// One rank's watch: per collective, how many steps in a row its
/// transfers were its group's base rotated by its index.
pub struct Watch<'a> {
    bases: &'a Bases,
    seen: Seen,
}

/// What a [`Watch`] saw of one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    rank: Rank,
    /// Per collective: steps seen rotated, in order from step 0; [`BROKEN`]
    /// once one was not.
    steps: Vec<u32>,
}

impl Watch<'_> {
    /// One node of the rank's step graph, as lowering walks it.
    #[inline]
    pub fn see(&mut self, plan: &CollectivePlan, node: &NodeView<'_>) {
        let Some(steps) = self.seen.steps.get_mut(plan.index as usize) else { return };
        if *steps == BROKEN {
            return;
        }
        let base = self.bases.rotations.get(plan.index as usize).and_then(|g| g.get(node.group as usize));
        let rotated = base.and_then(Option::as_ref).is_some_and(|base| {
            let want = base.step(node.step);
            let n = plan.groups.size();
            node.step == *steps
                && want.len() == node.transfers.len()
                && node.transfers.iter().zip(want).all(|(x, b)| is_rotated(x, b, node.member, n))
        });
        *steps = if rotated { *steps + 1 } else { BROKEN };
    }

    /// What it saw.
    pub fn finish(self) -> Seen {
        self.seen
    }
}

/// Member 0's transfers of a rotation-invariant group, step by step.
#[derive(Debug, PartialEq, Eq)]
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
pub(crate) fn rotation<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    source: &S,
) -> Option<Rotation> {
    let n = plan.groups.size();
    let base = base(schedule, plan, group, source)?;
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

/// Member 0's transfers, step by step, for a group that can be invariant:
/// two members or more, one block per member (elsewhere rotation means
/// nothing).
fn base<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    source: &S,
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
    Some(base)
}

/// Lists member `m`'s transfers step by step into `visit`; stops (and
/// returns `false`) when `visit` does.
fn walk<S: TransferSource + ?Sized>(
    schedule: &Schedule,
    plan: &CollectivePlan,
    group: u32,
    m: u32,
    source: &S,
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
#[inline(always)]
pub(crate) fn is_rotated(x: &Transfer, base: &Transfer, g: u32, n: u32) -> bool {
    // The common case, one comparison of the whole transfer: neither block
    // progression wraps, so each is the base's from a shifted start.
    if let (Some(src), Some(dst)) = (shifted(base.src, g, n), shifted(base.dst, g, n)) {
        let want =
            Transfer { from: shift(base.from, g, n), to: shift(base.to, g, n), src, dst, neigh: x.neigh, ..*base };
        return *x == want;
    }
    x.halves == base.halves
        && x.fold == base.fold
        && x.from == shift(base.from, g, n)
        && x.to == shift(base.to, g, n)
        && blocks_rotated(x.src, base.src, g, n)
        && blocks_rotated(x.dst, base.dst, g, n)
}

/// `base` shifted by `g`, when no position wraps past `n`.
#[inline(always)]
fn shifted(base: BlockSet, g: u32, n: u32) -> Option<BlockSet> {
    let start = u64::from(base.start) + u64::from(g);
    let last = start + u64::from(base.count.saturating_sub(1)) * u64::from(base.stride);
    (last < u64::from(n)).then_some(BlockSet { start: start as u32, ..base })
}

/// `v + g` (mod `n`), for `g < n`: a compare instead of a division, which
/// would cost more than the rest of the check.
#[inline(always)]
pub(crate) fn shift(v: u32, g: u32, n: u32) -> u32 {
    let (s, n) = (u64::from(v) + u64::from(g), u64::from(n));
    let s = if s >= n { s - n } else { s };
    // Only a member or block out of range gets here: divide.
    (if s >= n { s % n } else { s }) as u32
}

#[inline(always)]
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

    /// What lowering's watches see gives the groups a walk of every
    /// member finds, on every flat pairing, every Hier composition and
    /// replica groups; a rank not watched leaves its group out.
    #[test]
    fn watching_the_lowering_finds_what_a_walk_finds() {
        let mut cases: Vec<Case> = Vec::new();
        for &alg in AlgType::ALL {
            if alg == AlgType::Hier {
                continue;
            }
            for &op in crate::algorithms::flat_ops(alg) {
                cases.extend([2u32, 5, 8].into_iter().filter_map(|n| Case::for_alg(op, alg, n)));
            }
        }
        cases.extend(Case::hier_choices().into_iter().map(|(op, choice)| Case::hier(op, &choice, 12, 4)));
        let mut grouped = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
        grouped.groups = Some(vec![vec![0, 2, 4, 6], vec![7, 5, 3, 1]]);
        cases.push(grouped);
        let mut invariant = 0;
        for case in &cases {
            let schedule = build(&case.valid()).unwrap();
            let bases = Bases::new(&schedule);
            let seen: Vec<Seen> = (0..schedule.shape.rank_n)
                .map(|r| {
                    let mut watch = bases.watch(Rank(r));
                    crate::lower::lower_watched(&schedule, Rank(r), &mut |plan, node| watch.see(plan, node)).unwrap();
                    watch.finish()
                })
                .collect();
            let walked = Symmetry::find(&schedule);
            invariant += walked.invariant_groups();
            let missing = Bases::new(&schedule).symmetry(&schedule, &seen[1..]);
            assert_eq!(bases.symmetry(&schedule, &seen), walked, "{:?} {:?}", case.op, case.alg);
            for plan in &schedule.collectives {
                let (home, _) = plan.groups.locate(Rank(0));
                for g in 0..plan.groups.group_n() {
                    let want = g != home && walked.rotation(plan.index, g).is_some();
                    assert_eq!(
                        missing.rotation(plan.index, g).is_some(),
                        want,
                        "{:?} {:?} group {g}",
                        case.op,
                        case.alg
                    );
                }
            }
        }
        assert!(invariant > 10, "{invariant}");
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
