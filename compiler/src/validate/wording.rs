//! Message helpers for the wording of [`Problem`]'s `Display` (and the lists of what would be accepted).

use super::*;
use ccc_ir::noun;

pub(super) const REDUCE_OPS: [ReduceOp; 5] =
    [ReduceOp::Add, ReduceOp::Fma, ReduceOp::Max, ReduceOp::Min, ReduceOp::Average];

pub(super) fn list<T: Display>(items: &[T]) -> String {
    items.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// At most 8 items, then "and N more".
pub(super) fn abbreviated(items: &[u32]) -> String {
    const SHOWN: usize = 8;
    let head = list(items.get(..SHOWN).unwrap_or(items));
    match items.len().checked_sub(SHOWN) {
        Some(more) if more > 0 => format!("{head} and {more} more"),
        _ => head,
    }
}

pub(super) fn divisors(n: u32) -> Vec<u32> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut d = 1u32;
    while u64::from(d) * u64::from(d) <= u64::from(n) {
        if n.is_multiple_of(d) {
            small.push(d);
            if d != n / d {
                large.push(n / d);
            }
        }
        d += 1;
    }
    small.extend(large.into_iter().rev());
    small
}

pub(super) fn ops_where(pred: fn(OpType) -> bool) -> Vec<OpType> {
    OpType::ALL.iter().copied().filter(|&op| pred(op)).collect()
}

pub(super) fn float_dtypes() -> Vec<DType> {
    DType::ALL.iter().copied().filter(|d| d.is_float()).collect()
}

pub(super) fn topology(t: &Topology) -> String {
    format!("(rank_n: {}, local_rank_n: {}, pod_n: {})", t.rank_n, t.local_rank_n, t.pod_n)
}

/// The most elements of `dtype` a 64-bit byte count holds.
pub(super) fn most_elements(dtype: DType) -> u64 {
    u64::MAX / dtype.size()
}

/// `count: 0`'s message: the range a count may take, or, for an op that
/// splits it over `n` members, the multiples of `n` it may take.
pub(super) fn count_zero(dtype: DType, split: Option<(OpType, u32)>) -> String {
    let most = most_elements(dtype);
    match split {
        // Groups of one take the whole count each: the plain range.
        Some((op, n)) if n > 1 => {
            let n64 = u64::from(n);
            format!(
                "0 leaves each of the {n} group members no element ({op} gives each count / {n}); \
                 accepted: a multiple of {n} from {n} to {}",
                most - most % n64
            )
        }
        _ => format!("0 is out of range; accepted: 1..={most}"),
    }
}

/// ", e.g. B or A": the multiples of `n` nearest `count` (below and
/// above), none above `most` (the counts the element type allows).
pub(super) fn multiples_near(count: u64, n: u32, most: u64) -> String {
    let n = u64::from(n);
    let count = count.min(most);
    let below = count - count % n.max(1);
    match (below > 0, below.checked_add(n).filter(|&a| a <= most)) {
        (true, Some(above)) => format!(", e.g. {below} or {above}"),
        (false, Some(above)) => format!(", e.g. {above}"),
        (true, None) => format!(", e.g. {below}"),
        (false, None) => String::new(),
    }
}

/// "; accepted: 0..=n-1" for an index into something of size n.
pub(super) fn index_range(n: Option<u32>) -> String {
    match n {
        Some(n) if n > 0 => format!("; accepted: 0..={}", n - 1),
        // The groups are not valid (their own problem is listed too).
        _ => "; accepted: an index below the group size (0, 1, ...)".to_owned(),
    }
}

pub(super) fn peer_step(peer: u32, n: u32) -> String {
    if n < 2 {
        format!(
            "{peer} needs another member, but groups have {}; accepted: groups of at least 2 ranks",
            noun::count(n, "member")
        )
    } else {
        format!("{peer} is out of range; accepted: 1..={} (member i sends to member (i + k) mod {n})", n - 1)
    }
}

pub(super) fn alg_name(alg: AlgType) -> String {
    if alg == AlgType::Hier { "Hier((...))".to_owned() } else { alg.to_string() }
}

pub(super) fn algorithms_list(algs: &[AlgType]) -> String {
    algs.iter().map(|&a| alg_name(a)).collect::<Vec<_>>().join(", ")
}

pub(super) fn gate_note(gate: Option<Gate>) -> String {
    gate.map_or_else(String::new, |g| format!(" ({g})"))
}

pub(super) fn leg_prefix(leg: Option<Leg>) -> String {
    leg.map_or_else(String::new, |l| format!("{l}: "))
}

/// ` (and 2 more groups differ too)`, or nothing.
pub(super) fn more_differ(n: u32) -> String {
    match n {
        0 => String::new(),
        1 => " (and 1 more group differs too)".to_owned(),
        n => format!(" (and {n} more groups differ too)"),
    }
}

pub(super) fn more_groups(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => " (and 1 more group)".to_owned(),
        n => format!(" (and {n} more groups)"),
    }
}

pub(super) fn not_aligned(p: &Problem) -> String {
    let Problem::NotAligned { alg, leg, level, group, fault, also: more, units } = p else {
        return String::new();
    };
    let (what, whose) = match leg {
        None => (format!("{} needs", alg_name(*alg)), format!("each group listed {level} by {level}")),
        Some(l) => (format!("{alg} on {l} needs"), format!("the nodes of each group listed {level} by {level}")),
    };
    let counted = if leg.is_some() { "nodes" } else { "members" };
    let span_two = if *level == Level::Pod { ", on at least two pods" } else { "" };
    let found = match fault {
        AlignFault::Revisited { rank, unit } => {
            format!("{group} comes back to {level} {unit} at rank {rank} after leaving it")
        }
        AlignFault::Uneven { first, first_len, other, other_len } => {
            format!("{group} has {first_len} {counted} on {level} {first} but {other_len} on {level} {other}")
        }
        AlignFault::SingleUnit { unit } => format!("{group} lies entirely on {level} {unit}"),
    };
    // A topology of one node or one pod: no group spans two.
    let accepted = match (fault, level, units) {
        (AlignFault::SingleUnit { .. }, Level::Pod, 1) => {
            "a topology of at least two pods (`topology.pod_n` of 2 or more), or an algorithm without this need"
        }
        (AlignFault::SingleUnit { .. }, Level::Node, 1) => {
            "a topology of at least two nodes (`rank_n` at least twice `local_rank_n`), or an algorithm without this \
             need"
        }
        _ => "groups with that structure, or an algorithm without this need",
    };
    format!(
        "{what} {whose}, the same number of {counted} on each {level}{span_two}, but {found}{}; accepted: {accepted}",
        more_groups(*more)
    )
}

/// The mesh events per TOP_SP an `Auto` collective may take: the arch's
/// `max` ("the 50 Sunda has"), or what the collectives before it left of
/// them.
pub(super) fn mesh_room(max: u32, spent: u32, arch: ccc_ir::arch::Arch) -> String {
    if spent == 0 {
        format!("the {max} {arch} has")
    } else {
        format!("the {} the collectives before it leave of the {max} {arch} has", max.saturating_sub(spent))
    }
}
