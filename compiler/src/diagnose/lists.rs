//! Where two `groups` or `peers` values differ, beyond both values: two
//! lists of pairs that shift every rank by different offsets, or that one
//! renumbering of ranks makes one of the other ([`super::renumber`]). The
//! signature holds a list of more than
//! [`LITERAL_GROUPS_MAX`](crate::sign::LITERAL_GROUPS_MAX) entries as its
//! count and MD5 only (`16 groups of 32, md5 ...`), which says that the
//! lists differ but not where; a spec's lists are kept beside its
//! signature ([`Unsigned`](super::Unsigned)), so for two such the first
//! difference is named too: the group and member, or the sender.

use super::Unsigned;
use super::renumber;
use std::collections::BTreeMap;

/// The note on field `key` (`groups`, `peers`) whose signed values are
/// `values` (where both sides have one), and `kept` the lists both sides
/// kept unsigned (both read from specs), if there is one to make; with
/// whether it says the ranks were renumbered (the likely cause then).
pub(super) fn note(
    key: &str,
    values: Option<(&str, &str)>,
    kept: Option<(&Unsigned, &Unsigned)>,
) -> Option<(String, bool)> {
    // Both kept (a side written out in full keeps none).
    let kept = |of: fn(&Unsigned) -> bool| kept.filter(|(x, y)| of(x) && of(y));
    match key {
        // Written out, read from the values; else the lists kept.
        "peers" => match values.and_then(|(a, b)| Some((renumber::pairs(a)?, renumber::pairs(b)?))) {
            Some((a, b)) => shift_or_renumbering(&a, &b),
            None => kept(|u| !u.pairs.is_empty()).and_then(|(x, y)| peers_note(&x.pairs, &y.pairs)),
        },
        "groups" => {
            kept(|u| !u.groups.is_empty()).and_then(|(x, y)| groups_note(&x.groups, &y.groups)).map(|n| (n, false))
        }
        _ => None,
    }
}

/// Two lists of pairs as shifts by different offsets, or as one
/// renumbering of ranks (`true`), where they are.
fn shift_or_renumbering(here: &[(u32, u32)], there: &[(u32, u32)]) -> Option<(String, bool)> {
    renumber::shift_note(here, there)
        .map(|note| (note, false))
        .or_else(|| renumber::note(here, there).map(|note| (note, true)))
}

/// The first group that differs between `here` and `there` (each sorted
/// as the signature sorts them), the member where, and how many differ.
fn groups_note(here: &[Vec<u32>], there: &[Vec<u32>]) -> Option<String> {
    let differ = |i: usize| here.get(i) != there.get(i);
    let n = here.len().max(there.len());
    let first = (0..n).find(|&i| differ(i))?;
    let differing = (0..n).filter(|&i| differ(i)).count();
    let (a, b) = (here.get(first), there.get(first));
    let from = a.or(b).and_then(|g| g.first()).map_or(String::new(), |r| format!(" (from rank {r})"));
    let what = match (a, b) {
        (Some(a), Some(b)) if a.len() == b.len() => {
            let at = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(0);
            let members = a.iter().zip(b).filter(|(x, y)| x != y).count();
            let (x, y) = (a.get(at).copied().unwrap_or(0), b.get(at).copied().unwrap_or(0));
            format!(
                "member {at} is rank {x} on the first side and {y} on the second ({members} of its {} members \
                 differ)",
                a.len()
            )
        }
        (Some(a), Some(b)) => format!("it has {} members on the first side and {} on the second", a.len(), b.len()),
        (Some(_), None) => "the second side has no such group".to_owned(),
        (None, _) => "the first side has no such group".to_owned(),
    };
    let verb = if differing == 1 { "differs" } else { "differ" };
    Some(format!("the first group that differs is group {first} of {}{from}: {what}; {differing} {verb}", here.len()))
}

/// Where two long lists of pairs differ, and whether one renumbering of
/// ranks makes one the other ([`shift_or_renumbering`]), else the first
/// sender whose pair differs and how many do.
fn peers_note(here: &[(u32, u32)], there: &[(u32, u32)]) -> Option<(String, bool)> {
    if let Some(said) = shift_or_renumbering(here, there) {
        return Some(said);
    }
    let (a, b): (BTreeMap<u32, u32>, BTreeMap<u32, u32>) =
        (here.iter().copied().collect(), there.iter().copied().collect());
    let mut senders: Vec<u32> = a.keys().chain(b.keys()).copied().collect();
    senders.sort_unstable();
    senders.dedup();
    let differing: Vec<u32> = senders.into_iter().filter(|s| a.get(s) != b.get(s)).collect();
    let &first = differing.first()?;
    let to = |m: &BTreeMap<u32, u32>| m.get(&first).map_or_else(|| "no rank".to_owned(), |t| format!("rank {t}"));
    let verb = if differing.len() == 1 { "differs" } else { "differ" };
    let note = format!(
        "the first pair that differs is rank {first}'s: it sends to {} on the first side and to {} on the second; \
         {} senders' pairs {verb}",
        to(&a),
        to(&b),
        differing.len()
    );
    Some((note, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_group_and_member_are_named() {
        let here: Vec<Vec<u32>> = (0..16).map(|g| (g * 32..g * 32 + 32).collect()).collect();
        let mut there = here.clone();
        there[9].swap(3, 4);
        assert_eq!(
            groups_note(&here, &there).as_deref(),
            Some(
                "the first group that differs is group 9 of 16 (from rank 288): member 3 is rank 291 on the first \
                 side and 292 on the second (2 of its 32 members differ); 1 differs"
            )
        );
        let halves: Vec<Vec<u32>> = (0..32).map(|g| (g * 16..g * 16 + 16).collect()).collect();
        assert_eq!(
            groups_note(&here, &halves).as_deref(),
            Some(
                "the first group that differs is group 0 of 16 (from rank 0): it has 32 members on the first side \
                 and 16 on the second; 32 differ"
            )
        );
        assert_eq!(groups_note(&here, &here), None);
    }

    #[test]
    fn long_pairs_are_said_as_shifts_or_by_their_first_difference() {
        let by = |k: u32| (0..512).map(|r| (r, (r + k) % 512)).collect::<Vec<_>>();
        assert!(peers_note(&by(32), &by(64)).unwrap().0.contains("(a shift by 32)"));
        // Ranks 0 and 1 exchanged in a ring: one renumbering.
        let swap = |r: u32| [1, 0].get(r as usize).copied().unwrap_or(r);
        let swapped: Vec<(u32, u32)> = by(1).iter().map(|&(a, b)| (swap(a), swap(b))).collect();
        let (note, renumbered) = peers_note(&by(1), &swapped).unwrap();
        assert!(renumbered && note.starts_with("the same pairs with ranks renumbered: 0 -> 1, 1 -> 0"), "{note}");
        // Two senders exchange their targets: a renumbering would need
        // the receivers moved, which changes other pairs; say the first.
        let mut odd = by(1);
        odd[5].1 = 7;
        odd[6].1 = 6;
        let note = peers_note(&by(1), &odd).unwrap();
        let said = "the first pair that differs is rank 5's: it sends to rank 6 on the first side and to rank 7 on \
                    the second; 2 senders' pairs differ";
        assert_eq!((note.0.as_str(), note.1), (said, false));
        assert_eq!(peers_note(&by(1), &by(1)), None);
    }
}
