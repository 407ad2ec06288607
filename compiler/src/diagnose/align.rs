//! Aligning two programs collective by collective: common prefix and suffix, then a minimum-cost edit alignment.

use super::fields::{Coll, value};
use super::idx;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// One edit of an alignment of two programs (an edit script, not a
/// schedule step): indices into `a` and `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edit {
    /// `a[i]` equals `b[j]`.
    Match(u32, u32),
    /// `a[i]` and `b[j]` are the same collective with different fields.
    Changed(u32, u32),
    /// `a[i]` has no counterpart; `b`'s next collective is `j`.
    Missing(u32, u32),
    /// `b[j]` has no counterpart; `a`'s next collective is `i`.
    Extra(u32, u32),
}

/// Alignments over more cells than this pair the middles by position.
const ALIGN_CELLS_MAX: usize = 4_000_000;

/// Where an alignment cost's structural part sits (the constants below):
/// above the tie-break (fields that differ, names that differ), which
/// sums below it, so that alignments compare by structure first and,
/// between alignments of equal structure, by how little they say
/// differs.
const STRUCTURE_SHIFT: u32 = 32;

/// Cost of a missing or an extra collective.
const COST_GAP: u64 = 2;
/// Cost of pairing two collectives that differ only in what `Auto` chose
/// (and so in their schedule): an `Auto` choice moved by the program
/// around it (the CTRL SPAD slots or mesh events the collectives share)
/// is no structural change at all (the fields it differs in still break
/// ties), so that a repeated collective whose choice moved reads as
/// changed where it stands, not as the program shifted by one (a missing
/// and an extra one of equal collectives), however many moved: at 1, a
/// later collective's size that moved two earlier choices read as the
/// first of them missing and the resized one extra (2 + 2 against
/// 1 + 1 + 3).
const COST_AUTO_MOVED: u64 = 0;
/// Cost of pairing two different collectives of the same op: less than a
/// missing plus an extra one (one changed collective reads as changed),
/// more than one gap (two shifted runs read as one missing, one extra).
const COST_CHANGED: u64 = 3;
/// Cost of pairing collectives of different ops: a tie with a gap pair,
/// resolved towards pairing (the same position, a different op).
const COST_CHANGED_OP: u64 = 4;

/// A gap's cost: its structure, and every field of the collective it
/// leaves out (a missing or extra collective says all of it differs).
fn gap(c: &Coll<'_>) -> u64 {
    (COST_GAP << STRUCTURE_SHIFT) + c.len() as u64
}

/// How many of `x`'s and `y`'s fields differ (a field on one side only
/// counts once).
fn fields_differing(x: &Coll<'_>, y: &Coll<'_>) -> u64 {
    let changed = x.iter().filter(|&&(k, v)| value(y, k) != Some(v)).count();
    let only_y = y.iter().filter(|&&(k, _)| value(x, k).is_none()).count();
    (changed + only_y) as u64
}

/// Whether `x` and `y` differ only in what `Auto` chose: both algorithms
/// hold an `Auto(...)` choice and every other field but the schedule is
/// equal.
fn auto_moved(x: &Coll<'_>, y: &Coll<'_>) -> bool {
    let auto = |c: &Coll<'_>| value(c, "algorithm").is_some_and(|a| a.contains("Auto("));
    let kept = |&&(k, _): &&(&str, &str)| k != "algorithm" && k != "schedule";
    auto(x) && auto(y) && x.iter().filter(kept).eq(y.iter().filter(kept))
}

/// Aligns two programs: the longest common prefix and suffix match; the
/// middles are aligned by minimum cost (ties: pair, then missing, then extra).
pub(crate) fn align(a: &[Coll<'_>], b: &[Coll<'_>]) -> Vec<Edit> {
    align_named(a, b, |_, _| false)
}

/// [`align`], where `renamed(i, j)` says that `a[i]` and `b[j]` go by
/// different names (HLO instructions): of two alignments alike in
/// structure and in the fields they find differing, the one that pairs
/// fewer collectives of different names is taken, and a common prefix or
/// suffix holds only equal collectives of the same name.
///
/// An alignment's cost is, first, its structure (gaps and pairs, by the
/// `COST_` constants), then the fields it says differ (those its changed
/// pairs differ in, and every field of a missing or extra collective),
/// then the pairs it makes across names: so a collective moved and
/// changed reads as the one that moved, with the one field that changed,
/// not as its neighbour changed in every field; and a collective whose
/// `Auto` choice moved still reads as changed where it stands, not as a
/// missing and an extra one of the same structure.
pub(crate) fn align_named(a: &[Coll<'_>], b: &[Coll<'_>], renamed: impl Fn(usize, usize) -> bool) -> Vec<Edit> {
    let same = |i: usize, j: usize| a.get(i) == b.get(j) && !renamed(i, j);
    let prefix = (0..a.len().min(b.len())).take_while(|&k| same(k, k)).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = (1..=max_suffix).take_while(|&k| same(a.len() - k, b.len() - k)).count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);

    let mut edits: Vec<Edit> = (0..prefix).map(|k| Edit::Match(idx(k), idx(k))).collect();
    let at = |i: usize, j: usize| (idx(prefix + i), idx(prefix + j));
    let cost = |i: usize, j: usize, x: &Coll<'_>, y: &Coll<'_>| {
        let structure = if x == y {
            0
        } else if auto_moved(x, y) {
            COST_AUTO_MOVED
        } else if value(x, "op") == value(y, "op") {
            COST_CHANGED
        } else {
            COST_CHANGED_OP
        };
        (structure << STRUCTURE_SHIFT) + fields_differing(x, y) + u64::from(renamed(prefix + i, prefix + j))
    };
    let (n, m) = (a_mid.len(), b_mid.len());
    let cells = (n + 1).saturating_mul(m + 1);
    if cells > ALIGN_CELLS_MAX {
        for k in 0..n.max(m) {
            let (i, j) = at(k.min(n), k.min(m));
            edits.push(match (k < n, k < m) {
                (true, true) if a_mid.get(k) == b_mid.get(k) => Edit::Match(i, j),
                (true, true) => Edit::Changed(i, j),
                (true, false) => Edit::Missing(i, j),
                _ => Edit::Extra(i, j),
            });
        }
    } else {
        // d[i][j]: the cost of aligning a_mid[i..] with b_mid[j..].
        let w = m + 1;
        let mut d = vec![0u64; cells];
        for i in (0..=n).rev() {
            for j in (0..=m).rev() {
                let here = match (a_mid.get(i), b_mid.get(j)) {
                    (Some(x), Some(y)) => {
                        let pair = cost(i, j, x, y) + d[(i + 1) * w + j + 1];
                        let missing = gap(x) + d[(i + 1) * w + j];
                        let extra = gap(y) + d[i * w + j + 1];
                        pair.min(missing).min(extra)
                    }
                    (Some(x), None) => gap(x) + d[(i + 1) * w + j],
                    (None, Some(y)) => gap(y) + d[i * w + j + 1],
                    (None, None) => 0,
                };
                d[i * w + j] = here;
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            let (ii, jj) = at(i, j);
            let here = d[i * w + j];
            match (a_mid.get(i), b_mid.get(j)) {
                (Some(x), Some(y)) if cost(i, j, x, y) + d[(i + 1) * w + j + 1] == here => {
                    edits.push(if x == y { Edit::Match(ii, jj) } else { Edit::Changed(ii, jj) });
                    i += 1;
                    j += 1;
                }
                (Some(x), _) if j == m || gap(x) + d[(i + 1) * w + j] == here => {
                    edits.push(Edit::Missing(ii, jj));
                    i += 1;
                }
                _ => {
                    edits.push(Edit::Extra(ii, jj));
                    j += 1;
                }
            }
        }
    }
    let (a0, b0) = (a.len() - suffix, b.len() - suffix);
    edits.extend((0..suffix).map(|k| Edit::Match(idx(a0 + k), idx(b0 + k))));
    edits
}

/// One end of a move ([`moves`]): a collective missing from one place and
/// extra at another, equal in every field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MoveEnd {
    /// Its index in `a`.
    pub(crate) from: u32,
    /// Its index in `b`.
    pub(crate) to: u32,
    /// Whether this end comes first among the edits: where the programs
    /// part, and where the move is reported (the other end is not).
    pub(crate) first: bool,
}

/// The moves among `edits` (an alignment of `a` and `b`), by edit: for
/// each edit that is one end of a move, that move. Each missing
/// collective, in program order, is paired with the first extra one equal
/// to it in every field not paired yet.
pub(crate) fn moves(edits: &[Edit], a: &[Coll<'_>], b: &[Coll<'_>]) -> Vec<Option<MoveEnd>> {
    let mut ends = vec![None; edits.len()];
    // The extra collectives not paired yet: (edit position, index in `b`).
    let mut extra: Vec<(usize, u32)> = edits
        .iter()
        .enumerate()
        .filter_map(|(at, e)| if let Edit::Extra(_, j) = *e { Some((at, j)) } else { None })
        .collect();
    for (at, e) in edits.iter().enumerate() {
        let Edit::Missing(i, _) = *e else { continue };
        let Some(x) = a.get(i as usize) else { continue };
        let Some(k) = extra.iter().position(|&(_, j)| b.get(j as usize) == Some(x)) else { continue };
        let (there, j) = extra.remove(k);
        ends[at] = Some(MoveEnd { from: i, to: j, first: at < there });
        ends[there] = Some(MoveEnd { from: i, to: j, first: there < at });
    }
    ends
}

/// The moves that make `a` `b` when `b` holds exactly `a`'s collectives
/// in another order, as `(index in a, index in b)` in `a`'s order; `None`
/// when they differ in more than order (or not at all). [`align`] names
/// one move at a time, so an order no single move explains (two ends
/// swapped) reads there as changed pairs; this names each collective
/// that moved instead.
///
/// Each collective of `a` is paired with an equal one of `b`, in order
/// (with `names`, one of the same name first); the longest run of pairs
/// kept in order stays (of runs alike, the one keeping most collectives
/// where they stand: [`longest_increasing`]), and every other pair moved.
pub(crate) fn reordering(a: &[Coll<'_>], b: &[Coll<'_>], names: Option<(&[&str], &[&str])>) -> Option<Vec<(u32, u32)>> {
    if a.len() != b.len() || a == b {
        return None;
    }
    let name = |side: usize, i: usize| names.and_then(|n| if side == 0 { n.0 } else { n.1 }.get(i).copied());
    // b's collectives by value and name, and by value alone, each list in
    // b's order (taken from the front).
    let mut named: BTreeMap<(&Coll<'_>, Option<&str>), VecDeque<usize>> = BTreeMap::new();
    let mut equal: BTreeMap<&Coll<'_>, VecDeque<usize>> = BTreeMap::new();
    for (j, c) in b.iter().enumerate() {
        named.entry((c, name(1, j))).or_default().push_back(j);
        equal.entry(c).or_default().push_back(j);
    }
    let mut to: Vec<Option<usize>> = vec![None; a.len()];
    let mut taken = vec![false; b.len()];
    for (i, c) in a.iter().enumerate() {
        if let Some(j) = named.get_mut(&(c, name(0, i))).and_then(VecDeque::pop_front) {
            to[i] = Some(j);
            taken[j] = true;
        }
    }
    for (i, c) in a.iter().enumerate() {
        if to[i].is_none() {
            let queue = equal.get_mut(c)?;
            while queue.front().is_some_and(|&j| taken[j]) {
                queue.pop_front();
            }
            let j = queue.pop_front()?;
            to[i] = Some(j);
            taken[j] = true;
        }
    }
    let to: Vec<usize> = to.into_iter().collect::<Option<_>>()?;
    let kept = longest_increasing(&to);
    Some((0..to.len()).filter(|i| !kept.contains(i)).map(|i| (idx(i), idx(to[i]))).collect())
}

/// The positions of one longest increasing run of `values` (a permutation
/// of `0..n`, each position's value where it goes), in order: of runs
/// alike, one keeping most positions where they are (value equal to
/// position), so that a collective that stayed is not named as moved. A
/// Fenwick tree over the values, O(n log n).
pub(crate) fn longest_increasing(values: &[usize]) -> BTreeSet<usize> {
    let n = values.len();
    // tree[k]: the best run (length, positions kept, its last position +
    // 1) ending at a value in the range Fenwick index k covers.
    let mut tree = vec![(0usize, 0usize, 0usize); n + 1];
    let mut before: Vec<Option<usize>> = vec![None; n];
    let mut best = (0, 0, 0);
    for (p, &v) in values.iter().enumerate() {
        // The best run ending at a value below v (Fenwick indices 1..=v).
        let (mut q, mut k) = ((0, 0, 0), v.min(n));
        while k > 0 {
            q = q.max(tree[k]);
            k &= k - 1;
        }
        let me = (q.0 + 1, q.1 + usize::from(v == p), p + 1);
        before[p] = q.2.checked_sub(1);
        best = best.max(me);
        let mut k = v + 1;
        while k <= n {
            tree[k] = tree[k].max(me);
            k += k & k.wrapping_neg();
        }
    }
    let mut kept = BTreeSet::new();
    let mut at = best.2.checked_sub(1);
    while let Some(p) = at {
        kept.insert(p);
        at = before[p];
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    #[test]
    fn the_longest_run_kept_prefers_collectives_that_stayed() {
        // 0 1 2 against 2 1 0: any one stays; the middle one, where it is.
        assert_eq!(longest_increasing(&[2, 1, 0]), BTreeSet::from([1]));
        // One moved from the end to the front: the others stay.
        assert_eq!(longest_increasing(&[1, 2, 3, 0]), BTreeSet::from([0, 1, 2]));
        assert_eq!(longest_increasing(&[]), BTreeSet::new());
    }

    /// Every run [`longest_increasing`] can return, by brute force: the
    /// increasing runs of `values` (position sets), longest first, then
    /// most positions kept where they are.
    fn best_runs(values: &[usize]) -> (usize, usize) {
        let n = values.len();
        let mut best = (0, 0);
        for mask in 0u32..(1 << n) {
            let picked: Vec<usize> = (0..n).filter(|&p| mask & (1 << p) != 0).collect();
            if picked.windows(2).all(|w| values[w[0]] < values[w[1]]) {
                let kept = picked.iter().filter(|&&p| values[p] == p).count();
                best = best.max((picked.len(), kept));
            }
        }
        best
    }

    /// Every permutation of up to 7: the run returned is increasing, as
    /// long as any, and keeps as many positions where they are as any run
    /// that long.
    #[test]
    fn the_longest_run_is_longest_and_keeps_most_in_place() {
        fn permutations(n: usize) -> Vec<Vec<usize>> {
            if n == 0 {
                return vec![Vec::new()];
            }
            let mut out = Vec::new();
            for p in permutations(n - 1) {
                for at in 0..=p.len() {
                    let mut q = p.clone();
                    q.insert(at, n - 1);
                    out.push(q);
                }
            }
            out
        }
        for n in 0..=7 {
            for values in permutations(n) {
                let run: Vec<usize> = longest_increasing(&values).into_iter().collect();
                assert!(run.windows(2).all(|w| values[w[0]] < values[w[1]]), "{values:?}: {run:?}");
                let kept = run.iter().filter(|&&p| values[p] == p).count();
                assert_eq!((run.len(), kept), best_runs(&values), "{values:?}: {run:?}");
            }
        }
    }

    proptest::proptest! {
        /// Any reordering of collectives drawn from a few values (so that
        /// equal ones repeat): each move pairs equal collectives, each
        /// index moves at most once, what did not move lines up in order,
        /// and with all values distinct, as few move as any order-keeping
        /// pairing allows.
        #[test]
        fn a_reordering_pairs_equal_collectives(
            (a, order) in proptest::collection::vec(0u8..4, 0..12)
                .prop_flat_map(|a| { let n = a.len(); (proptest::strategy::Just(a), proptest::sample::subsequence((0..n).collect::<Vec<_>>(), n).prop_shuffle()) }),
        ) {
            use proptest::prop_assert;
            use proptest::prop_assert_eq;
            let text: Vec<String> = a.iter().map(u8::to_string).collect();
            let ca: Vec<Coll<'_>> = text.iter().map(|t| vec![("op", t.as_str())]).collect();
            let cb: Vec<Coll<'_>> = order.iter().map(|&k| ca[k].clone()).collect();
            match reordering(&ca, &cb, None) {
                None => prop_assert_eq!(&ca, &cb),
                Some(moves) => {
                    prop_assert!(ca != cb);
                    let (mut from, mut to) = (BTreeSet::new(), BTreeSet::new());
                    for &(i, j) in &moves {
                        prop_assert_eq!(&ca[i as usize], &cb[j as usize]);
                        prop_assert!(from.insert(i) && to.insert(j));
                    }
                    prop_assert!(!moves.is_empty() && moves.len() < ca.len());
                    // What did not move lines up, in order: a without the
                    // moved ones is b without them.
                    let stay_a: Vec<&Coll<'_>> = (0..ca.len()).filter(|i| !from.contains(&idx(*i))).map(|i| &ca[i]).collect();
                    let stay_b: Vec<&Coll<'_>> = (0..cb.len()).filter(|j| !to.contains(&idx(*j))).map(|j| &cb[j]).collect();
                    prop_assert_eq!(stay_a, stay_b);
                }
            }
            // Distinct values: `order` is the only pairing, and the moves
            // are the positions outside its longest increasing run.
            let distinct: Vec<usize> = (0..order.len()).collect();
            let ids: Vec<String> = distinct.iter().map(usize::to_string).collect();
            let da: Vec<Coll<'_>> = ids.iter().map(|t| vec![("op", t.as_str())]).collect();
            let db: Vec<Coll<'_>> = order.iter().map(|&k| da[k].clone()).collect();
            // b[j] = a[order[j]]: a's position i goes to j where order[j] == i.
            let mut goes = vec![0; order.len()];
            for (j, &i) in order.iter().enumerate() {
                goes[i] = j;
            }
            let moved = reordering(&da, &db, None).map_or(0, |m| m.len());
            prop_assert_eq!(moved, order.len() - best_runs(&goes).0);
        }
    }

    #[test]
    fn a_reordering_names_what_moved_and_only_a_reordering() {
        let (x, y, z) = (vec![("op", "x")], vec![("op", "y")], vec![("op", "z")]);
        let a = [x.clone(), y.clone(), z.clone()];
        assert_eq!(reordering(&a, &[z.clone(), y.clone(), x.clone()], None), Some(vec![(0, 2), (2, 0)]));
        assert_eq!(reordering(&a, &a, None), None);
        assert_eq!(reordering(&a, &[z.clone(), y.clone(), y.clone()], None), None);
        assert_eq!(reordering(&a, &[z.clone(), y.clone()], None), None);
        // Equal collectives are told apart by name: the one named `b`
        // moved, not its twin.
        let twins = [x.clone(), x.clone(), y.clone()];
        let moved = [x.clone(), y.clone(), x.clone()];
        let names = (&["a", "b", "c"][..], &["a", "c", "b"][..]);
        assert_eq!(reordering(&twins, &moved, Some(names)), Some(vec![(1, 2)]));
    }
}
