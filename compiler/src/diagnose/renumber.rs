//! Whether two `peers` values are the same pairs over ranks numbered
//! differently.
//!
//! Each rank in a permute's pairs sends to at most one rank and receives
//! from at most one (validation refuses more), so the pairs are chains
//! (`0 -> 1 -> 2`) and cycles (`0 -> 1 -> 0`). Two such pair lists are one
//! list with its ranks renumbered exactly when they have the same chains
//! and cycles by length: match each chain or cycle of one side with one
//! of the same kind and length on the other, rank by rank. That is what a
//! device-to-rank map (an HLO target's `devices`) or a launcher that
//! numbers ranks in another order does to one program; a program that
//! built another permutation of the same shape (a shift by +1 against -1)
//! looks the same, so the renumbering found is shown, the one that moves
//! fewest ranks this matching finds, for the user to judge.

use std::collections::{BTreeMap, BTreeSet};

/// Past this length a cycle is matched as it starts (rank for rank from
/// its least rank), not at the rotation that moves fewest ranks: the
/// search is quadratic in the length. A `peers` value lists at most
/// [`crate::sign::LITERAL_GROUPS_MAX`] pairs, so this is never reached
/// from a signature today.
const ROTATIONS_MAX_LEN: usize = 4096;

/// How many moves [`note`] names before it says how many more there are.
const MOVES_NAMED: usize = 8;

/// A chain or cycle of pairs: its ranks in order, a cycle from its least
/// rank.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Component {
    cycle: bool,
    ranks: Vec<u32>,
}

/// The pairs of a `peers` value as a signature writes it
/// (`[(0, 1), (1, 2)]`); `None` for anything else (`-`, a digest of a
/// long list).
pub(super) fn pairs(value: &str) -> Option<Vec<(u32, u32)>> {
    let inner = value.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    let inner = inner.strip_prefix('(')?.strip_suffix(')')?;
    inner
        .split("), (")
        .map(|pair| {
            let (a, b) = pair.split_once(", ")?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect()
}

/// The chains and cycles of `pairs`; `None` when a rank sends or
/// receives twice.
fn components(pairs: &[(u32, u32)]) -> Option<Vec<Component>> {
    let mut next: BTreeMap<u32, u32> = BTreeMap::new();
    let mut receivers: BTreeSet<u32> = BTreeSet::new();
    for &(from, to) in pairs {
        if next.insert(from, to).is_some() || !receivers.insert(to) {
            return None;
        }
    }
    let mut seen: BTreeSet<u32> = BTreeSet::new();
    let mut out = Vec::new();
    // Chains: from each rank that sends and receives nothing.
    for &start in next.keys().filter(|r| !receivers.contains(r)) {
        let mut ranks = vec![start];
        let mut at = start;
        while let Some(&to) = next.get(&at) {
            ranks.push(to);
            at = to;
        }
        seen.extend(ranks.iter().copied());
        out.push(Component { cycle: false, ranks });
    }
    // Cycles: every rank left, from its least (the keys run in order).
    for &start in next.keys() {
        if seen.contains(&start) {
            continue;
        }
        let mut ranks = vec![start];
        let mut at = next.get(&start).copied()?;
        while at != start {
            ranks.push(at);
            at = next.get(&at).copied()?;
        }
        seen.extend(ranks.iter().copied());
        out.push(Component { cycle: true, ranks });
    }
    Some(out)
}

/// The ranks a renumbering of `a`'s pairs into `b`'s moves, as
/// `(rank in a, rank in b)` by `a`'s rank; `None` when no renumbering
/// makes one the other (or either is not a list of pairs), or when the
/// two are the same pairs.
fn renumbering(a: &[(u32, u32)], b: &[(u32, u32)]) -> Option<Vec<(u32, u32)>> {
    let (mut ca, mut cb) = (components(a)?, components(b)?);
    // The same chains and cycles by length on both sides, or no match.
    let shape = |c: &[Component]| {
        let mut s: Vec<(bool, usize)> = c.iter().map(|c| (c.cycle, c.ranks.len())).collect();
        s.sort_unstable();
        s
    };
    if shape(&ca) != shape(&cb) {
        return None;
    }
    // A chain or cycle on both sides keeps its ranks; the others are
    // matched in order of kind, length and least rank.
    let (in_a, in_b): (BTreeSet<Component>, BTreeSet<Component>) =
        (ca.iter().cloned().collect(), cb.iter().cloned().collect());
    ca.retain(|c| !in_b.contains(c));
    cb.retain(|c| !in_a.contains(c));
    let order = |c: &Component| (c.cycle, c.ranks.len(), c.ranks.first().copied());
    ca.sort_by_key(order);
    cb.sort_by_key(order);
    let mut moves: Vec<(u32, u32)> = Vec::new();
    for (x, y) in ca.iter().zip(&cb) {
        let n = x.ranks.len();
        // A cycle may be matched at any rotation: take the one that keeps
        // most ranks where they are (the first such).
        let shift = match x.cycle && n <= ROTATIONS_MAX_LEN {
            true => (0..n)
                .max_by_key(|&s| {
                    let kept = x.ranks.iter().enumerate().filter(|&(i, r)| y.ranks.get((i + s) % n) == Some(r));
                    (kept.count(), std::cmp::Reverse(s))
                })
                .unwrap_or(0),
            false => 0,
        };
        for (i, &r) in x.ranks.iter().enumerate() {
            let to = y.ranks.get((i + shift) % n).copied()?;
            if to != r {
                moves.push((r, to));
            }
        }
    }
    moves.sort_unstable();
    (!moves.is_empty()).then_some(moves)
}

/// The shift a list of pairs makes, as `(k, n)`: its senders are the
/// ranks `0..n`, its receivers the same, and each rank `r` sends to
/// `(r + k) % n` (a world-wide `peer: k`, a pipeline's send to the next
/// stage); `None` for any other list, or `k = 0`.
fn shift(pairs: &[(u32, u32)]) -> Option<(u32, u32)> {
    let n = u32::try_from(pairs.len()).ok()?;
    let &(a, b) = pairs.first()?;
    let k = (u64::from(b) + u64::from(n) - u64::from(a) % u64::from(n)) % u64::from(n);
    let mut senders: Vec<u32> = pairs.iter().map(|&(a, _)| a).collect();
    senders.sort_unstable();
    let every = senders.iter().enumerate().all(|(i, &r)| u32::try_from(i) == Ok(r));
    let shifted =
        pairs.iter().all(|&(a, b)| u64::from(a) < u64::from(n) && (u64::from(a) + k) % u64::from(n) == u64::from(b));
    let k = u32::try_from(k).ok()?;
    (k != 0 && every && shifted).then_some((k, n))
}

/// The sentence for two `peers` values that each shift every rank by
/// its own offset over the same ranks (`peer: 1` against `peer: 3`):
/// which offset each side sends at. A renumbering could make one such
/// shift the other when their cycles are alike, but two ranks of one
/// program that send at different offsets (a pipeline's stage ahead
/// against the one behind) are far likelier than a launcher that
/// numbered every rank in a rotated order, so this is said instead
/// (`None` unless both are such shifts, over as many ranks).
pub(super) fn shift_note(here: &[(u32, u32)], there: &[(u32, u32)]) -> Option<String> {
    let ((k, n), (j, m)) = (shift(here)?, shift(there)?);
    if n != m || k == j {
        return None;
    }
    let ahead = |k: u32| match (k, n - k) {
        (1, _) => "the next rank".to_owned(),
        (_, 1) => "the rank before it".to_owned(),
        (k, _) => format!("the rank {k} ahead"),
    };
    Some(format!(
        "each of the {n} ranks sends to {} on the first side (a shift by {k}) and to {} on the second (a shift by \
         {j}), mod {n}: the two sides send at different offsets",
        ahead(k),
        ahead(j)
    ))
}

/// The sentence for two `peers` values that one renumbering of ranks
/// makes one of the other: which ranks it moves, from the first value's
/// numbers to the second's (`None` when there is none).
pub(super) fn note(here: &[(u32, u32)], there: &[(u32, u32)]) -> Option<String> {
    let moves = renumbering(here, there)?;
    let ranks: BTreeSet<u32> = here.iter().flat_map(|&(a, b)| [a, b]).collect();
    let named: Vec<String> = moves.iter().take(MOVES_NAMED).map(|(a, b)| format!("{a} -> {b}")).collect();
    let more = match moves.len().saturating_sub(MOVES_NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Some(format!(
        "the same pairs with ranks renumbered: {}{more} ({} of the {} ranks in the pairs, each from its number on \
         the first side to its number on the second)",
        named.join(", "),
        moves.len(),
        ranks.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The functions over `peers` values as a signature writes them.
    fn renumbering(a: &str, b: &str) -> Option<Vec<(u32, u32)>> {
        super::renumbering(&pairs(a)?, &pairs(b)?)
    }
    fn note(a: &str, b: &str) -> Option<String> {
        super::note(&pairs(a)?, &pairs(b)?)
    }
    fn shift_note(a: &str, b: &str) -> Option<String> {
        super::shift_note(&pairs(a)?, &pairs(b)?)
    }

    /// Writes pairs as a signature does.
    fn text(pairs: &[(u32, u32)]) -> String {
        let mut sorted = pairs.to_vec();
        sorted.sort_unstable();
        let inner: Vec<String> = sorted.iter().map(|(a, b)| format!("({a}, {b})")).collect();
        format!("[{}]", inner.join(", "))
    }

    #[test]
    fn a_swap_of_two_ranks_in_a_ring_is_found() {
        // The ring 0 -> 1 -> ... -> 7 -> 0 with ranks 0 and 1 exchanged.
        let ring: Vec<(u32, u32)> = (0..8).map(|r| (r, (r + 1) % 8)).collect();
        let swap = |r: u32| match r {
            0 => 1,
            1 => 0,
            r => r,
        };
        let swapped: Vec<(u32, u32)> = ring.iter().map(|&(a, b)| (swap(a), swap(b))).collect();
        assert_eq!(renumbering(&text(&ring), &text(&swapped)), Some(vec![(0, 1), (1, 0)]));
        assert_eq!(
            note(&text(&ring), &text(&swapped)).as_deref(),
            Some(
                "the same pairs with ranks renumbered: 0 -> 1, 1 -> 0 (2 of the 8 ranks in the pairs, each from its \
                 number on the first side to its number on the second)"
            )
        );
    }

    #[test]
    fn chains_and_cycles_of_other_lengths_are_not_a_renumbering() {
        // One 4-cycle against two 2-cycles; a chain of 3 against a 3-cycle.
        let four = text(&[(0, 1), (1, 2), (2, 3), (3, 0)]);
        let twos = text(&[(0, 1), (1, 0), (2, 3), (3, 2)]);
        assert_eq!(renumbering(&four, &twos), None);
        let chain = text(&[(0, 1), (1, 2)]);
        let cycle = text(&[(0, 1), (1, 2), (2, 0)]);
        assert_eq!(renumbering(&chain, &cycle), None);
        // The same pairs are no renumbering either.
        assert_eq!(renumbering(&four, &four), None);
    }

    #[test]
    fn a_chain_is_matched_from_its_start_and_kept_pieces_stay() {
        // 0 -> 1 -> 2 becomes 5 -> 1 -> 2; the 2-cycle 3 <-> 4 is on both.
        let a = text(&[(0, 1), (1, 2), (3, 4), (4, 3)]);
        let b = text(&[(5, 1), (1, 2), (3, 4), (4, 3)]);
        assert_eq!(renumbering(&a, &b), Some(vec![(0, 5)]));
    }

    #[test]
    fn a_shift_the_other_way_is_a_renumbering_that_moves_most_ranks() {
        let plus: Vec<(u32, u32)> = (0..4).map(|r| (r, (r + 1) % 4)).collect();
        let minus: Vec<(u32, u32)> = (0..4).map(|r| (r, (r + 3) % 4)).collect();
        // 0 -> 1 -> 2 -> 3 against 0 -> 3 -> 2 -> 1: the best rotation
        // keeps two ranks (0 and 2) and exchanges 1 and 3.
        assert_eq!(renumbering(&text(&plus), &text(&minus)), Some(vec![(1, 3), (3, 1)]));
    }

    /// Two world-wide shifts by different offsets are said as shifts,
    /// whatever renumbering would also match them (8 ranks shifted by 1,
    /// 3 and 7 are each one 8-cycle).
    #[test]
    fn two_shifts_by_different_offsets_are_said_as_shifts() {
        let by = |k: u32| text(&(0..8).map(|r| (r, (r + k) % 8)).collect::<Vec<_>>());
        assert_eq!(
            shift_note(&by(1), &by(3)).as_deref(),
            Some(
                "each of the 8 ranks sends to the next rank on the first side (a shift by 1) and to the rank 3 \
                 ahead on the second (a shift by 3), mod 8: the two sides send at different offsets"
            )
        );
        assert!(shift_note(&by(1), &by(7)).unwrap().contains("to the rank before it on the second (a shift by 7)"));
        // The same shift, shifts over different rank counts, and lists
        // that are not shifts say nothing here.
        assert_eq!(shift_note(&by(2), &by(2)), None);
        assert_eq!(shift_note(&by(1), &text(&(0..4).map(|r| (r, (r + 1) % 4)).collect::<Vec<_>>())), None);
        assert_eq!(shift_note(&by(1), "[(0, 2), (1, 0), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 1)]"), None);
        // Senders not 0..n: 1 -> 2 -> 3 -> 1 is no shift of ranks 0..3.
        assert_eq!(shift(&[(1, 2), (2, 3), (3, 1)]), None);
        assert_eq!(shift(&[(0, 1), (1, 0)]), Some((1, 2)));
    }

    #[test]
    fn what_is_not_a_list_of_distinct_pairs_is_no_renumbering() {
        assert_eq!(renumbering("-", "[(0, 1)]"), None);
        assert_eq!(renumbering("512 pairs, md5 00", "512 pairs, md5 11"), None);
        // Rank 0 sends twice.
        assert_eq!(renumbering("[(0, 1), (0, 2)]", "[(1, 0), (1, 2)]"), None);
        assert_eq!(pairs("[]"), Some(Vec::new()));
        assert_eq!(pairs("[(0, 1), (2, x)]"), None);
    }
}
