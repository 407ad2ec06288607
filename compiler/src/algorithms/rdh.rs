//! Recursive halving and doubling (IntraRdh, InterRdh), and the binomial
//! trees they use for broadcast and reduce. See `docs/algorithms.md`.
//!
//! With `k` members, `p2` the largest power of two not above `k` and
//! `r = k - p2`, the first `2r` members pair up: the even member of each
//! pair hands its data to the odd one (prologue) and gets the result back
//! at the end (epilogue), so `p2` participants remain. Participant `j` is
//! member `2j + 1` for `j < r` and member `j + r` otherwise, and speaks for
//! the contiguous members `2j, 2j + 1` or `j + r`. Halving round `t`
//! exchanges with participant `j ^ (p2 >> (t + 1))` and keeps the half of
//! its contiguous range that contains `j`; doubling round `t` exchanges with
//! `j ^ (1 << t)` and doubles the range back. Every piece is one block
//! (the universe has exactly `k` blocks), so every range is a [`BlockSet`].

use super::step_gen::{Gen, md};
use super::{Composer, ScopeOp, Unsupported};
use crate::schedule::{BlockSet, RdhMode};
use crate::schedule::{PhaseKind, Scope};
use ccc_ir::enums::AlgType;
use ccc_ir::enums::ReductionType;
use ccc_ir::spec::Leg;

const FOLD: Option<ReductionType> = Some(ReductionType::Ring2R1W);

/// `(p2, r)` for `k` members.
pub(crate) fn split_pow2(k: u32) -> (u32, u32) {
    let p2 = if k == 0 { 0 } else { 1u32 << (31 - k.leading_zeros()) };
    (p2, k - p2)
}

/// Rounds of halving (or doubling) for `k` members: `log2(p2)`.
pub(crate) fn rounds(k: u32) -> u8 {
    let (p2, _) = split_pow2(k);
    p2.trailing_zeros() as u8
}

/// Rounds of a binomial tree over `k` members: `ceil(log2 k)`.
pub(crate) fn tree_rounds(k: u32) -> u8 {
    if k <= 1 { 0 } else { (32 - (k - 1).leading_zeros()) as u8 }
}

struct Participants {
    r: u32,
    /// Balanced: participant `j` of `p2` holds blocks
    /// `[floor(j k / p2), floor((j + 1) k / p2))` (all-reduce only).
    balanced: Option<(u32, u32)>,
}

impl Participants {
    fn of(&self, q: u32) -> Option<u32> {
        if q < 2 * self.r { (q % 2 == 1).then_some(q / 2) } else { Some(q - self.r) }
    }
    fn member(&self, j: u32) -> u32 {
        if j < self.r { 2 * j + 1 } else { j + self.r }
    }
    fn first_member(&self, j: u32) -> u32 {
        if j < self.r { 2 * j } else { j + self.r }
    }
    /// The blocks participants `a..b` hold: those of the members they speak
    /// for, or (balanced) an even share of the universe.
    fn blocks(&self, universe: BlockSet, a: u32, b: u32) -> BlockSet {
        if let Some((k, p2)) = self.balanced {
            let at = |j: u32| (u64::from(j) * u64::from(k) / u64::from(p2.max(1))) as u32;
            return universe.range(at(a), at(b));
        }
        let end = if b < self.r { 2 * b } else { b + self.r };
        universe.range(self.first_member(a), end)
    }
}

/// The prologue: the even member of each of the first `r` pairs hands over.
pub(crate) fn prologue<const L: bool>(g: &mut Gen<'_, L>, mode: RdhMode) {
    let (_, r) = split_pow2(g.k());
    let q = g.p();
    if q >= 2 * r {
        return;
    }
    let (from, to) = if q.is_multiple_of(2) { (q, q + 1) } else { (q - 1, q) };
    match mode {
        RdhMode::ReduceAll => {
            let all = g.universe();
            g.push_rel(from, to, all, FOLD);
        }
        _ => {
            let piece = g.universe().range(from, from + 1);
            g.push_rel(from, to, piece, None);
        }
    }
}

/// The epilogue: the odd member hands the result back to the even one.
pub(crate) fn epilogue<const L: bool>(g: &mut Gen<'_, L>, mode: RdhMode) {
    let (_, r) = split_pow2(g.k());
    let q = g.p();
    if q >= 2 * r {
        return;
    }
    let (from, to) = if q % 2 == 1 { (q, q - 1) } else { (q + 1, q) };
    let blocks = match mode {
        RdhMode::ScatterPiece => g.universe().range(to, to + 1),
        _ => g.universe(),
    };
    g.push_rel(from, to, blocks, None);
}

fn participants(k: u32, balanced: bool) -> (u32, Participants) {
    let (p2, r) = split_pow2(k);
    (p2, Participants { r, balanced: balanced.then_some((k, p2)) })
}

/// Halving round `round`: exchange the half the partner keeps, fold the half we keep.
pub(crate) fn halving<const L: bool>(g: &mut Gen<'_, L>, round: u8, balanced: bool) {
    let (p2, parts) = participants(g.k(), balanced);
    let Some(j) = parts.of(g.p()) else { return };
    let d = p2 >> (u32::from(round) + 1);
    let partner = j ^ d;
    let keep = j & !(d - 1);
    let theirs = partner & !(d - 1);
    let (me, peer) = (parts.member(j), parts.member(partner));
    let send = parts.blocks(g.universe(), theirs, theirs + d);
    let recv = parts.blocks(g.universe(), keep, keep + d);
    g.push_rel(me, peer, send, FOLD);
    g.push_rel(peer, me, recv, FOLD);
}

/// Doubling round `round`: exchange the ranges held so far.
pub(crate) fn doubling<const L: bool>(g: &mut Gen<'_, L>, round: u8, balanced: bool) {
    let (_, parts) = participants(g.k(), balanced);
    let Some(j) = parts.of(g.p()) else { return };
    let d = 1u32 << round;
    let partner = j ^ d;
    let mine = j & !(d - 1);
    let theirs = partner & !(d - 1);
    let (me, peer) = (parts.member(j), parts.member(partner));
    let send = parts.blocks(g.universe(), mine, mine + d);
    let recv = parts.blocks(g.universe(), theirs, theirs + d);
    g.push_rel(me, peer, send, None);
    g.push_rel(peer, me, recv, None);
}

/// The scope position member `q` of `k` sends to at the step of an RDH
/// phase of `kind` (`Some(None)`: it sends nothing), from the same
/// pairing the generators above use: what they push with `from == q`,
/// named without generating it (the cost model's network flows). `None`
/// for any other kind, or a round no built plan has.
pub(crate) fn sends_to(kind: PhaseKind, k: u32, q: u32) -> Option<Option<u32>> {
    use PhaseKind as K;
    let (p2, parts) = participants(k, false);
    let r = parts.r;
    let d = match kind {
        K::RdhPrologue { .. } => return Some((q < 2 * r && q.is_multiple_of(2)).then_some(q + 1)),
        K::RdhEpilogue { .. } => return Some((q < 2 * r && q % 2 == 1).then(|| q - 1)),
        K::RdhHalving { round, .. } => p2.checked_shr(u32::from(round) + 1)?,
        K::RdhDoubling { round, .. } => 1u32.checked_shl(u32::from(round))?,
        _ => return None,
    };
    let Some(j) = parts.of(q) else { return Some(None) };
    let partner = j ^ d;
    (d > 0 && partner < p2).then(|| Some(parts.member(partner)))
}

/// Binomial broadcast round: members `q' < 2^round` send to `q' + 2^round`.
pub(crate) fn tree_broadcast<const L: bool>(g: &mut Gen<'_, L>, root: u32, round: u8) {
    let k = g.k();
    let rel = md(i64::from(g.p()) - i64::from(root), k);
    let d = 1u32 << round;
    let pos = |x: u32| md(i64::from(x) + i64::from(root), k);
    let all = g.universe();
    if rel < d && rel + d < k {
        g.push_rel(g.p(), pos(rel + d), all, None);
    }
    if (d..2 * d).contains(&rel) {
        g.push_rel(pos(rel - d), g.p(), all, None);
    }
}

/// Binomial reduce round: members with `q' mod 2^(round+1) == 2^round` send
/// to `q' - 2^round`, which folds.
pub(crate) fn tree_reduce<const L: bool>(g: &mut Gen<'_, L>, root: u32, round: u8) {
    let k = g.k();
    let rel = md(i64::from(g.p()) - i64::from(root), k);
    let d = 1u32 << round;
    let pos = |x: u32| md(i64::from(x) + i64::from(root), k);
    let all = g.universe();
    if rel % (2 * d) == d {
        g.push_rel(g.p(), pos(rel - d), all, FOLD);
    }
    if rel.is_multiple_of(2 * d) && rel + d < k {
        g.push_rel(pos(rel + d), g.p(), all, FOLD);
    }
}

/// IntraRdh and InterRdh as phases: recursive halving/doubling for the
/// reduce/gather forms, binomial trees for broadcast and reduce (§3.4).
pub(super) fn compose(
    c: &mut Composer<'_>,
    op: ScopeOp,
    alg: AlgType,
    scope: Scope,
    narrow: &[Scope],
    leg: Option<Leg>,
) -> Result<(), Unsupported> {
    use PhaseKind as K;
    let unsupported = Err(Unsupported { alg, op });
    match alg {
        AlgType::IntraRdh | AlgType::InterRdh => {
            let k = scope.size(c.radices);
            let (_, r) = split_pow2(k);
            let m = rounds(k);
            // All-reduce ends with every block everywhere, so its rounds
            // may split the blocks evenly over the participants (MPICH's
            // split); reduce-scatter and all-gather keep each member's
            // block with the participant that speaks for it.
            let balanced = op == ScopeOp::AllReduce;
            let halving = |c: &mut Composer<'_>| {
                (0..m).for_each(|t| c.push(K::RdhHalving { round: t, balanced }, alg, leg, scope, narrow))
            };
            let doubling = |c: &mut Composer<'_>| {
                (0..m).for_each(|t| c.push(K::RdhDoubling { round: t, balanced }, alg, leg, scope, narrow))
            };
            let (pro, epi) = match op {
                ScopeOp::AllReduce => (RdhMode::ReduceAll, RdhMode::CopyAll),
                ScopeOp::ReduceScatter => (RdhMode::ReduceAll, RdhMode::ScatterPiece),
                ScopeOp::AllGather => (RdhMode::GatherPiece, RdhMode::CopyAll),
                ScopeOp::Broadcast { root } => {
                    for t in 0..tree_rounds(k) {
                        c.push(K::BinomialBroadcast { root, round: t }, alg, leg, scope, narrow);
                    }
                    return Ok(());
                }
                ScopeOp::Reduce { root } => {
                    for t in 0..tree_rounds(k) {
                        c.push(K::BinomialReduce { root, round: t }, alg, leg, scope, narrow);
                    }
                    return Ok(());
                }
                ScopeOp::AllToAll | ScopeOp::PointToPoint => return unsupported,
            };
            if r > 0 {
                c.push(K::RdhPrologue { mode: pro }, alg, leg, scope, narrow);
            }
            if op != ScopeOp::AllGather {
                halving(c);
            }
            if op != ScopeOp::ReduceScatter {
                doubling(c);
            }
            if r > 0 {
                c.push(K::RdhEpilogue { mode: epi }, alg, leg, scope, narrow);
            }
        }
        _ => return unsupported,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_split() {
        assert_eq!(split_pow2(8), (8, 0));
        assert_eq!(split_pow2(12), (8, 4));
        assert_eq!(split_pow2(1), (1, 0));
        assert_eq!(rounds(12), 3);
        assert_eq!(tree_rounds(1), 0);
        assert_eq!(tree_rounds(2), 1);
        assert_eq!(tree_rounds(5), 3);
        assert_eq!(tree_rounds(8), 3);
    }

    #[test]
    fn participants_speak_for_contiguous_members() {
        let p = Participants { r: 2, balanced: None };
        // k = 6: members 0..4 pair up, 4 and 5 stand alone.
        assert_eq!((0..6).map(|q| p.of(q)).collect::<Vec<_>>(), vec![None, Some(0), None, Some(1), Some(2), Some(3)]);
        assert_eq!((0..4).map(|j| p.member(j)).collect::<Vec<_>>(), vec![1, 3, 4, 5]);
        let u = BlockSet::all(6);
        assert_eq!(p.blocks(u, 0, 2).iter().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert_eq!(p.blocks(u, 2, 4).iter().collect::<Vec<_>>(), vec![4, 5]);
        assert_eq!(p.blocks(u, 1, 3).iter().collect::<Vec<_>>(), vec![2, 3, 4]);
        // Balanced (all-reduce): 6 blocks over 4 participants, 1 or 2 each.
        let (_, b) = participants(6, true);
        let shares: Vec<Vec<u32>> = (0..4).map(|j| b.blocks(u, j, j + 1).iter().collect()).collect();
        assert_eq!(shares, vec![vec![0], vec![1, 2], vec![3], vec![4, 5]]);
        assert_eq!(b.blocks(u, 0, 2).iter().collect::<Vec<_>>(), vec![0, 1, 2]);
    }
}
