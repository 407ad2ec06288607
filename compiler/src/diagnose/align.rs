//! Aligning two programs collective by collective: common prefix and suffix, then a minimum-cost edit alignment.

use super::fields::{Coll, value};
use super::idx;

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
/// around it (the CTRL SPAD slots or mesh events the collectives share),
/// cheaper than any other change, so that a repeated collective whose
/// choice moved reads as changed where it stands, not as the program
/// shifted by one (a missing and an extra one of equal collectives).
const COST_AUTO_MOVED: u64 = 1;
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
