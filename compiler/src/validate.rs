//! validate: a parsed spec into a [`ValidProgram`], or every problem in it.
//!
//! Validation collects: it reports every problem at once, each a typed
//! [`Problem`] located by a field path inside its collective
//! (`topology.local_rank_n`, `groups[1][3]`, `algorithm.inter_all_reduce`).
//! Checks that depend on an invalid value (the group size when the groups
//! are broken, the node of a rank when the topology is) are skipped rather
//! than reported as a cascade of follow-on errors.
//!
//! What an algorithm serves and what structure it needs come from
//! [`crate::algorithms`], the single source of truth.

use crate::algorithms::{self, Requirement};
use crate::parse::SpecForm;
use crate::valid::{DEFAULT_SEND_CREDITS, Groups, ResolvedAlgorithm, Shape, ValidCollective, ValidProgram};
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::{Algorithm, Barrier, Collective, DType, HierLegs, Leg, Program, ReduceOp, Topology};
use std::collections::BTreeMap;
use std::fmt::{self, Display};

/// The largest world ccc compiles.
pub const MAX_RANK_N: u32 = 1_048_576;
/// Ring channels accepted.
pub const CHANNELS: std::ops::RangeInclusive<u32> = 1..=32;
/// Initial send credits accepted.
pub const SEND_CREDITS: std::ops::RangeInclusive<u32> = 1..=511;
/// The device barrier is a radix-5 dissemination barrier of at most 4
/// steps: it spans at most 5^4 ranks.
pub const DEVICE_BARRIER_MAX_RANK_N: u32 = 625;

/// One problem in a spec, located by collective and field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    /// The collective's index in the program; `None` for the program itself.
    pub collective: Option<u32>,
    /// The path inside the collective (`topology.local_rank_n`, `groups[1][3]`,
    /// `algorithm.inter_all_reduce`, `peers[2]`).
    pub field: String,
    /// What is wrong, with the values.
    pub problem: Problem,
}

impl ValidationError {
    /// The full path as the user wrote the file: prefixed with
    /// `collectives[i].` when the file held a program.
    pub fn path(&self, form: SpecForm) -> String {
        match (form, self.collective) {
            (SpecForm::Program, Some(i)) => format!("collectives[{i}].{}", self.field),
            _ => self.field.clone(),
        }
    }
}

impl Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(i) = self.collective {
            write!(f, "collective {i}: ")?;
        }
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for ValidationError {}

/// Every problem found in a spec (at least one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        write!(f, "{n} problem{} in the spec:", if n == 1 { "" } else { "s" })?;
        for e in &self.0 {
            write!(f, "\n  - {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

/// A contract gate that explains why a choice is refused (wire-contract §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// KANGARING is intra-node only.
    KangaringIntraOnly,
    /// SINGLE_CYCLE_RING is for all-reduce only.
    SingleCycleRingAllReduceOnly,
    /// A leg is one algorithm; it cannot itself be hierarchical.
    HierDoesNotNest,
}

impl Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Gate::KangaringIntraOnly => "Kangaring runs inside a node only",
            Gate::SingleCycleRingAllReduceOnly => "SingleCycleRing is for all-reduce only",
            Gate::HierDoesNotNest => "a leg cannot itself be Hier",
        })
    }
}

/// The granularity of an alignment requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// Nodes (`rank / local_rank_n`).
    Node,
    /// Pods (`node / (node_n / pod_n)`).
    Pod,
}

impl Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Node => "node",
            Level::Pod => "pod",
        })
    }
}

/// Which replica group a problem is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupRef {
    /// The one implicit group of every rank (no `groups` given).
    World,
    /// `groups[i]`.
    Explicit(u32),
}

impl Display for GroupRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupRef::World => f.write_str("the group of all ranks"),
            GroupRef::Explicit(i) => write!(f, "groups[{i}]"),
        }
    }
}

/// How a group breaks an alignment requirement (at the [`Level`] of the
/// problem that carries it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlignFault {
    /// The group comes back to a node (pod) it already left.
    Revisited {
        /// The member where it comes back.
        rank: u32,
        /// The node (pod) revisited.
        unit: u32,
    },
    /// Two nodes (pods) hold different numbers of the group's members.
    Uneven {
        /// The first node (pod) of the group.
        first: u32,
        /// Its member count.
        first_len: u32,
        /// A node (pod) with a different count.
        other: u32,
        /// That count.
        other_len: u32,
    },
    /// The group lies on a single pod but must span at least two.
    SingleUnit {
        /// The one pod.
        unit: u32,
    },
}

/// What is wrong with a spec. Each message says what was found and what
/// would be accepted; the field is in the [`ValidationError`]'s path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// `Program(collectives: [])`.
    #[error("the program has no collectives; accepted: at least one `Collective(...)` in `collectives: [...]`")]
    NoCollectives,
    /// A collective's arch differs from collective 0's.
    #[error(
        "arch {found} differs from collective 0's {first}; accepted: {first} (all collectives of a program share \
         arch, topology, barrier and send_credits)"
    )]
    ArchDiffers {
        /// This collective's.
        found: Arch,
        /// Collective 0's.
        first: Arch,
    },
    /// A collective's topology differs from collective 0's.
    #[error(
        "topology {} differs from collective 0's {}; accepted: the same topology (all collectives of a program \
         share arch, topology, barrier and send_credits)",
        topology(found),
        topology(first)
    )]
    TopologyDiffers {
        /// This collective's.
        found: Topology,
        /// Collective 0's.
        first: Topology,
    },
    /// A collective's barrier differs from collective 0's.
    #[error(
        "barrier {found:?} differs from collective 0's {first:?} (absent means Host); accepted: {first:?} (all \
         collectives of a program share arch, topology, barrier and send_credits)"
    )]
    BarrierDiffers {
        /// This collective's (absent: Host).
        found: Barrier,
        /// Collective 0's.
        first: Barrier,
    },
    /// A collective's send credits differ from collective 0's.
    #[error(
        "send_credits {found} differs from collective 0's {first} (absent means 2); accepted: {first} (all \
         collectives of a program share arch, topology, barrier and send_credits)"
    )]
    SendCreditsDiffers {
        /// This collective's (absent: 2).
        found: u32,
        /// Collective 0's.
        first: u32,
    },
    /// A number outside its range.
    #[error("{value} is out of range; accepted: {min}..={max}")]
    OutOfRange {
        /// As written.
        value: u64,
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// `local_rank_n` does not divide `rank_n`.
    #[error(
        "local_rank_n {local_rank_n} does not divide rank_n {rank_n}, so the ranks cannot fill whole nodes; \
         accepted: a divisor of {rank_n} ({})",
        abbreviated(&divisors(*rank_n))
    )]
    LocalRankNNotDivisor {
        /// Ranks.
        rank_n: u32,
        /// Ranks per node as written.
        local_rank_n: u32,
    },
    /// `pod_n` does not divide the node count.
    #[error(
        "pod_n {pod_n} does not divide the {node_n} nodes (rank_n / local_rank_n), so the nodes cannot fill whole \
         pods; accepted: a divisor of {node_n} ({})",
        abbreviated(&divisors(*node_n))
    )]
    PodNNotDivisor {
        /// Nodes.
        node_n: u32,
        /// Pods as written.
        pod_n: u32,
    },
    /// `count: 0`.
    #[error("count is 0; accepted: at least 1 element per rank")]
    CountZero,
    /// The buffer size in bytes does not fit in 64 bits.
    #[error(
        "{count} elements of {dtype} ({} bytes each) overflow a 64-bit byte count; accepted: at most {}",
        dtype.size(), u64::MAX / dtype.size()
    )]
    CountOverflow {
        /// As written.
        count: u64,
        /// The element type.
        dtype: DType,
    },
    /// ReduceScatter or AllToAll with a count the group size does not divide.
    #[error(
        "{op} gives each of the {n} group members count / {n} elements, but {count} is not a multiple of {n}; \
         accepted: a multiple of {n}{}",
        multiples_near(*count, *n)
    )]
    CountNotMultiple {
        /// The op.
        op: OpType,
        /// As written.
        count: u64,
        /// The group size.
        n: u32,
    },
    /// A reducing op without `reduce`.
    #[error("{op} combines values and needs `reduce`; accepted: {}", list(&REDUCE_OPS))]
    ReduceMissing {
        /// The op.
        op: OpType,
    },
    /// `reduce` on an op that does not reduce.
    #[error(
        "{op} does not combine values, so `reduce: {reduce}` has no meaning; remove it (reduce is for {})",
        list(&ops_where(OpType::is_reducing))
    )]
    ReduceRefused {
        /// The op.
        op: OpType,
        /// As written.
        reduce: ReduceOp,
    },
    /// `reduce: Average` on an integer type.
    #[error(
        "Average divides by the group size and needs a float dtype, but dtype is {dtype}; accepted: Add, Fma, Max \
         or Min with {dtype}, or Average with {}",
        list(&float_dtypes())
    )]
    AverageNeedsFloat {
        /// The element type.
        dtype: DType,
    },
    /// A rooted op without `root`.
    #[error("{op} needs `root: N`, the root's index inside its group{}", index_range(*n))]
    RootMissing {
        /// The op.
        op: OpType,
        /// The group size, when the groups are valid.
        n: Option<u32>,
    },
    /// `root` on an op without a root.
    #[error(
        "{op} has no root, so `root: {root}` has no meaning; remove it (root is for {})",
        list(&ops_where(OpType::is_rooted))
    )]
    RootRefused {
        /// The op.
        op: OpType,
        /// As written.
        root: u32,
    },
    /// `root` beyond the group.
    #[error("root {root} is not a member of a group of {n} (root is an index inside the group){}", index_range(Some(*n)))]
    RootOutOfRange {
        /// As written.
        root: u32,
        /// The group size.
        n: u32,
    },
    /// A peer-map op without `peers` or `peer`.
    #[error(
        "{op} needs a peer map; accepted: `peers: [(source, target), ...]` with indices inside the group, or \
         `peer: k` (member i sends to member (i + k) mod group size)"
    )]
    PeerMapMissing {
        /// The op.
        op: OpType,
    },
    /// Both `peers` and `peer`.
    #[error("both `peers` and `peer` are given; accepted: exactly one of them")]
    PeerMapTwice,
    /// `peers` or `peer` on an op that takes no peer map.
    #[error(
        "{op} takes no peer map, so `{field}` has no meaning; remove it ({field} is for {})",
        list(&ops_where(OpType::takes_peers))
    )]
    PeerMapRefused {
        /// The op.
        op: OpType,
        /// `peers` or `peer`.
        field: &'static str,
    },
    /// `peers: []`.
    #[error("`peers` is empty; accepted: at least one (source, target) pair")]
    PeersEmpty,
    /// A peer pair naming an index beyond the group.
    #[error(
        "({}, {}) names a member beyond a group of {n}{}",
        pair.0, pair.1, index_range(Some(*n))
    )]
    PeerOutOfRange {
        /// As written.
        pair: (u32, u32),
        /// The group size.
        n: u32,
    },
    /// A pair from a member to itself.
    #[error("({member}, {member}) sends member {member} to itself; accepted: pairs of two different members")]
    PeerSelfPair {
        /// The member.
        member: u32,
    },
    /// A source listed twice.
    #[error("member {member} already sends in peers[{first}]; accepted: each member sends at most once")]
    PeerSourceRepeated {
        /// The member.
        member: u32,
        /// Where it sends first.
        first: usize,
    },
    /// A target listed twice.
    #[error("member {member} already receives in peers[{first}]; accepted: each member receives at most once")]
    PeerTargetRepeated {
        /// The member.
        member: u32,
        /// Where it receives first.
        first: usize,
    },
    /// `peer: k` with k outside 1..n.
    #[error("{}", peer_step(*peer, *n))]
    PeerStepOutOfRange {
        /// As written.
        peer: u32,
        /// The group size.
        n: u32,
    },
    /// AllToAllV without `counts`.
    #[error(
        "AllToAllV needs `counts`; accepted: one row per group member, row i listing the elements member i sends \
         to each member, each row summing to count"
    )]
    CountsMissing,
    /// `counts` on another op.
    #[error("{op} takes no `counts`; remove it (counts is for AllToAllV only)")]
    CountsRefused {
        /// The op.
        op: OpType,
    },
    /// `counts` with the wrong number of rows.
    #[error("counts has {rows} rows; accepted: {n} rows (one per group member) of {n} entries")]
    CountsRows {
        /// Rows as written.
        rows: usize,
        /// The group size.
        n: u32,
    },
    /// A `counts` row of the wrong length.
    #[error("the row has {len} entries; accepted: {n} (one per group member)")]
    CountsRowLength {
        /// Entries as written.
        len: usize,
        /// The group size.
        n: u32,
    },
    /// A `counts` row that does not sum to `count`.
    #[error(
        "the row sums to {} but count is {count}; accepted: entries that add up to count (all the member sends)",
        sum.map_or_else(|| "more than 2^64".to_owned(), |s| s.to_string())
    )]
    CountsRowSum {
        /// The row's sum (`None`: it overflows).
        sum: Option<u64>,
        /// The collective's count.
        count: u64,
    },
    /// `groups: []`.
    #[error("`groups` lists no group; accepted: at least one group, or no `groups` for one group of all ranks")]
    GroupsEmpty,
    /// `[]` inside `groups`.
    #[error("the group is empty; accepted: groups of at least one rank, all the same size")]
    GroupEmpty,
    /// A group of another size than the first.
    #[error(
        "the group has {size} ranks but groups[{expected_in}] has {expected}; accepted: groups all of the same size"
    )]
    GroupSizeMismatch {
        /// This group's size.
        size: usize,
        /// The first non-empty group's size.
        expected: usize,
        /// That group's index.
        expected_in: usize,
    },
    /// A group entry beyond `rank_n`.
    #[error("rank {rank} does not exist (rank_n is {rank_n}){}", index_range(Some(*rank_n)))]
    GroupRankOutOfRange {
        /// As written.
        rank: u32,
        /// Ranks.
        rank_n: u32,
    },
    /// A rank in two places.
    #[error("rank {rank} is listed twice, here and at groups[{}][{}]; accepted: every rank in exactly one group", first.0, first.1)]
    RankListedTwice {
        /// The rank.
        rank: u32,
        /// Where it is listed first: (group, index).
        first: (usize, usize),
    },
    /// Ranks in no group.
    #[error(
        "{} in no group: {}; accepted: every rank of 0..={} in exactly one group",
        if ranks.len() == 1 { "1 rank is".to_owned() } else { format!("{} ranks are", ranks.len()) },
        abbreviated(ranks),
        rank_n.saturating_sub(1)
    )]
    RanksInNoGroup {
        /// The ranks, ascending.
        ranks: Vec<u32>,
        /// Ranks.
        rank_n: u32,
    },
    /// `algorithm: Auto`.
    #[error(
        "`Auto` needs the cost model, which is not available yet; accepted: an algorithm that serves {op}: {}",
        algorithms_list(choices)
    )]
    AutoUnavailable {
        /// The op.
        op: OpType,
        /// The algorithms that serve it.
        choices: Vec<AlgType>,
    },
    /// A flat algorithm (or Hier) that does not serve the op.
    #[error(
        "{} does not serve {op}{}; accepted: {}",
        alg_name(*alg), gate_note(*gate), algorithms_list(choices)
    )]
    AlgorithmDoesNotServe {
        /// The algorithm.
        alg: AlgType,
        /// The op.
        op: OpType,
        /// The algorithms that serve the op.
        choices: Vec<AlgType>,
        /// The contract gate behind the refusal, if one applies.
        gate: Option<Gate>,
    },
    /// An algorithm that runs inside one node, on a group that spans nodes.
    #[error(
        "{}{alg} runs inside a node only, but {group} has rank {a} on node {node_a} and rank {b} on node {node_b}{}; \
         accepted: groups inside one node ({local_rank_n} ranks per node), or an algorithm that spans nodes",
        leg_prefix(*leg), more_groups(*also)
    )]
    NotWithinNode {
        /// The algorithm.
        alg: AlgType,
        /// The Hier leg it was chosen for, if any.
        leg: Option<Leg>,
        /// The first offending group.
        group: GroupRef,
        /// A member.
        a: u32,
        /// Its node.
        node_a: u32,
        /// A member on another node.
        b: u32,
        /// Its node.
        node_b: u32,
        /// Ranks per node.
        local_rank_n: u32,
        /// Further groups with the same problem.
        also: usize,
    },
    /// A group not listed node by node (pod by pod) as the algorithm needs.
    #[error("{}", not_aligned(self))]
    NotAligned {
        /// The algorithm (`Hier` for the hierarchical composition itself).
        alg: AlgType,
        /// The Hier leg it was chosen for, if any (its members are then the
        /// group's nodes).
        leg: Option<Leg>,
        /// Node or pod.
        level: Level,
        /// The first offending group.
        group: GroupRef,
        /// How it breaks the requirement.
        fault: AlignFault,
        /// Further groups with a problem.
        also: usize,
    },
    /// A leg the op uses, not given.
    #[error(
        "Hier for {op} needs a choice for {leg}; accepted: {} ({op} uses {})",
        list(algorithms::leg_choices(*leg)), list(legs)
    )]
    HierLegMissing {
        /// The op.
        op: OpType,
        /// The missing leg.
        leg: Leg,
        /// The legs the op uses.
        legs: &'static [Leg],
    },
    /// A leg given that the op does not use.
    #[error("{op} does not use {leg}; remove it ({op} uses {})", list(legs))]
    HierLegUnused {
        /// The op.
        op: OpType,
        /// The leg as written.
        leg: Leg,
        /// The legs the op uses.
        legs: &'static [Leg],
    },
    /// An illegal choice for a leg.
    #[error("{} is not a legal choice for {leg}{}; accepted: {}", alg_name(*choice), gate_note(*gate), list(choices))]
    HierLegChoice {
        /// The leg.
        leg: Leg,
        /// The choice as written.
        choice: AlgType,
        /// The legal choices.
        choices: &'static [AlgType],
        /// The contract gate behind the refusal, if one applies.
        gate: Option<Gate>,
    },
    /// A device barrier on a world it cannot span.
    #[error(
        "the device barrier is a radix-5 dissemination barrier of at most 4 steps, so it spans at most \
         {DEVICE_BARRIER_MAX_RANK_N} ranks, but rank_n is {rank_n}; accepted: Host (or no `barrier`) for this topology"
    )]
    DeviceBarrierTooLarge {
        /// Ranks.
        rank_n: u32,
    },
}

// ---------------------------------------------------------------------------
// Message helpers (used by `Problem`'s Display only).

const REDUCE_OPS: [ReduceOp; 5] = [ReduceOp::Add, ReduceOp::Fma, ReduceOp::Max, ReduceOp::Min, ReduceOp::Average];

fn list<T: Display>(items: &[T]) -> String {
    items.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// At most 8 items, then "and N more".
fn abbreviated(items: &[u32]) -> String {
    const SHOWN: usize = 8;
    let head = list(items.get(..SHOWN).unwrap_or(items));
    match items.len().checked_sub(SHOWN) {
        Some(more) if more > 0 => format!("{head} and {more} more"),
        _ => head,
    }
}

fn divisors(n: u32) -> Vec<u32> {
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

fn ops_where(pred: fn(OpType) -> bool) -> Vec<OpType> {
    OpType::ALL.iter().copied().filter(|&op| pred(op)).collect()
}

fn float_dtypes() -> Vec<DType> {
    DType::ALL.iter().copied().filter(|d| d.is_float()).collect()
}

fn topology(t: &Topology) -> String {
    format!("(rank_n: {}, local_rank_n: {}, pod_n: {})", t.rank_n, t.local_rank_n, t.pod_n)
}

fn multiples_near(count: u64, n: u32) -> String {
    let n = u64::from(n);
    let below = count - count % n.max(1);
    match (below > 0, below.checked_add(n)) {
        (true, Some(above)) => format!(", e.g. {below} or {above}"),
        (false, Some(above)) => format!(", e.g. {above}"),
        (true, None) => format!(", e.g. {below}"),
        (false, None) => String::new(),
    }
}

/// "; accepted: 0..=n-1" for an index into something of size n.
fn index_range(n: Option<u32>) -> String {
    match n {
        Some(n) if n > 0 => format!("; accepted: 0..={}", n - 1),
        _ => String::new(),
    }
}

fn peer_step(peer: u32, n: u32) -> String {
    if n < 2 {
        format!("peer: {peer} needs another member, but groups have {n} member; accepted: groups of at least 2 ranks")
    } else {
        format!("peer: {peer} is out of range; accepted: 1..={} (member i sends to member (i + k) mod {n})", n - 1)
    }
}

fn alg_name(alg: AlgType) -> String {
    if alg == AlgType::Hier { "Hier((...))".to_owned() } else { alg.to_string() }
}

fn algorithms_list(algs: &[AlgType]) -> String {
    algs.iter().map(|&a| alg_name(a)).collect::<Vec<_>>().join(", ")
}

fn gate_note(gate: Option<Gate>) -> String {
    gate.map_or_else(String::new, |g| format!(" ({g})"))
}

fn leg_prefix(leg: Option<Leg>) -> String {
    leg.map_or_else(String::new, |l| format!("{l}: "))
}

fn more_groups(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => " (and 1 more group)".to_owned(),
        n => format!(" (and {n} more groups)"),
    }
}

fn not_aligned(p: &Problem) -> String {
    let Problem::NotAligned { alg, leg, level, group, fault, also: more } = p else {
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
    format!(
        "{what} {whose}, the same number of {counted} on each {level}{span_two}, but {found}{}; accepted: groups \
         with that structure, or an algorithm without this need",
        more_groups(*more)
    )
}

// ---------------------------------------------------------------------------
// The pass.

/// Checks a parsed program and resolves its defaults.
///
/// # Errors
///
/// [`ValidationErrors`] listing every problem found (at least one).
pub fn validate(program: Program) -> Result<ValidProgram, ValidationErrors> {
    let mut errors = Vec::new();
    let Some(first) = program.collectives.first() else {
        errors.push(ValidationError {
            collective: None,
            field: "collectives".to_owned(),
            problem: Problem::NoCollectives,
        });
        return Err(ValidationErrors(errors));
    };
    let first_barrier = first.barrier.unwrap_or_default();
    let first_credits = first.send_credits.unwrap_or(u32::from(DEFAULT_SEND_CREDITS));

    let mut valid = Vec::new();
    for (i, c) in program.collectives.iter().enumerate() {
        let mut cx = Checker { index: idx(i), errors: Vec::new() };
        let barrier = c.barrier.unwrap_or_default();
        let credits = c.send_credits.unwrap_or(u32::from(DEFAULT_SEND_CREDITS));
        if i > 0 {
            if c.arch != first.arch {
                cx.push("arch", Problem::ArchDiffers { found: c.arch, first: first.arch });
            }
            if c.topology != first.topology {
                cx.push("topology", Problem::TopologyDiffers { found: c.topology, first: first.topology });
            }
            if barrier != first_barrier {
                cx.push("barrier", Problem::BarrierDiffers { found: barrier, first: first_barrier });
            }
            if credits != first_credits {
                cx.push("send_credits", Problem::SendCreditsDiffers { found: credits, first: first_credits });
            }
        }
        // Shared settings are reported once, at the first collective that
        // carries them, not once per collective.
        let own = Own {
            topology: i == 0 || c.topology != first.topology,
            barrier: i == 0 || barrier != first_barrier,
            send_credits: i == 0 || credits != first_credits,
        };
        if let Some(v) = cx.collective(c, own) {
            valid.push(v);
        }
        errors.append(&mut cx.errors);
    }

    let shape = shape_of(first.topology);
    let all_valid = errors.is_empty() && valid.len() == program.collectives.len();
    match (all_valid, shape, u16::try_from(first_credits)) {
        (true, Some(topology), Ok(send_credits)) => Ok(ValidProgram {
            arch: first.arch,
            topology,
            barrier: first_barrier,
            send_credits,
            collectives: valid,
            spec: program,
        }),
        _ => Err(ValidationErrors(errors)),
    }
}

fn idx(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// The shape of a topology, if it is valid.
fn shape_of(t: Topology) -> Option<Shape> {
    let ok = (1..=MAX_RANK_N).contains(&t.rank_n)
        && t.local_rank_n >= 1
        && t.rank_n.is_multiple_of(t.local_rank_n)
        && t.pod_n >= 1
        && (t.rank_n / t.local_rank_n).is_multiple_of(t.pod_n);
    ok.then(|| {
        let node_n = t.rank_n / t.local_rank_n;
        Shape {
            rank_n: t.rank_n,
            local_rank_n: t.local_rank_n,
            pod_n: t.pod_n,
            node_n,
            nodes_per_pod: node_n / t.pod_n,
        }
    })
}

/// Which of the settings every collective of a program shares are checked
/// at this collective: the first one's always, a later one's only where it
/// differs (so that one bad shared value is reported once).
#[derive(Clone, Copy)]
struct Own {
    topology: bool,
    barrier: bool,
    send_credits: bool,
}

/// The groups of a collective, once checked.
struct CheckedGroups {
    groups: Groups,
    /// Members per group.
    n: u32,
    /// Each group's members in order, with how to name it.
    members: Vec<(GroupRef, Vec<u32>)>,
}

/// Collects one collective's problems.
struct Checker {
    index: u32,
    errors: Vec<ValidationError>,
}

impl Checker {
    fn push(&mut self, field: impl Into<String>, problem: Problem) {
        self.errors.push(ValidationError { collective: Some(self.index), field: field.into(), problem });
    }

    fn range(&mut self, field: &str, value: u32, range: &std::ops::RangeInclusive<u32>) -> bool {
        let ok = range.contains(&value);
        if !ok {
            let (min, max) = (u64::from(*range.start()), u64::from(*range.end()));
            self.push(field, Problem::OutOfRange { value: u64::from(value), min, max });
        }
        ok
    }

    /// Checks one collective; `own` says which shared settings to check here.
    fn collective(&mut self, c: &Collective, own: Own) -> Option<ValidCollective> {
        let before = self.errors.len();
        if own.topology {
            self.topology(c.topology);
        }
        let shape = shape_of(c.topology);
        let rank_n = (1..=MAX_RANK_N).contains(&c.topology.rank_n).then_some(c.topology.rank_n);

        let channels = self.range("channels", c.channels, &CHANNELS).then(|| u8::try_from(c.channels).ok()).flatten();
        self.count(c);
        self.reduce(c);

        // The groups come first because the group size bounds everything
        // else; their problems are reported after the other fields, in the
        // order of the schema.
        let mut group_checker = Checker { index: self.index, errors: Vec::new() };
        let groups = rank_n.and_then(|rank_n| group_checker.groups(c.groups.as_deref(), rank_n));
        let n = groups.as_ref().map(|g| g.n);

        if let Some(n) = n {
            self.count_split(c, n);
        }
        let root = self.root(c, n);
        let peers = self.peers(c, n);
        self.counts(c, n);
        self.errors.append(&mut group_checker.errors);
        let algorithm = self.algorithm(c, shape.as_ref().zip(groups.as_ref()));

        if let (true, Barrier::Device, Some(rank_n)) = (own.barrier, c.barrier.unwrap_or_default(), rank_n)
            && rank_n > DEVICE_BARRIER_MAX_RANK_N
        {
            self.push("barrier", Problem::DeviceBarrierTooLarge { rank_n });
        }
        if let (true, Some(credits)) = (own.send_credits, c.send_credits) {
            self.range("send_credits", credits, &SEND_CREDITS);
        }

        if self.errors.len() != before {
            return None;
        }
        Some(ValidCollective {
            index: self.index,
            op: c.op,
            dtype: c.dtype,
            reduce: c.reduce,
            count: c.count,
            channels: channels?,
            algorithm: algorithm?,
            groups: groups?.groups,
            root: root?,
            peers: peers?,
            counts: c.counts.clone(),
        })
    }

    fn topology(&mut self, t: Topology) {
        if !self.range("topology.rank_n", t.rank_n, &(1..=MAX_RANK_N)) {
            if t.local_rank_n == 0 {
                self.push(
                    "topology.local_rank_n",
                    Problem::OutOfRange { value: 0, min: 1, max: u64::from(MAX_RANK_N) },
                );
            }
            if t.pod_n == 0 {
                self.push("topology.pod_n", Problem::OutOfRange { value: 0, min: 1, max: u64::from(MAX_RANK_N) });
            }
            return;
        }
        if !t.rank_n.is_multiple_of(t.local_rank_n) {
            let problem = if t.local_rank_n == 0 {
                Problem::OutOfRange { value: 0, min: 1, max: u64::from(t.rank_n) }
            } else {
                Problem::LocalRankNNotDivisor { rank_n: t.rank_n, local_rank_n: t.local_rank_n }
            };
            self.push("topology.local_rank_n", problem);
            if t.pod_n == 0 {
                self.push("topology.pod_n", Problem::OutOfRange { value: 0, min: 1, max: u64::from(t.rank_n) });
            }
            return;
        }
        let node_n = t.rank_n / t.local_rank_n;
        if t.pod_n == 0 {
            self.push("topology.pod_n", Problem::OutOfRange { value: 0, min: 1, max: u64::from(node_n) });
        } else if !node_n.is_multiple_of(t.pod_n) {
            self.push("topology.pod_n", Problem::PodNNotDivisor { node_n, pod_n: t.pod_n });
        }
    }

    fn count(&mut self, c: &Collective) {
        if c.count == 0 {
            self.push("count", Problem::CountZero);
        } else if c.count.checked_mul(c.dtype.size()).is_none() {
            self.push("count", Problem::CountOverflow { count: c.count, dtype: c.dtype });
        }
    }

    fn count_split(&mut self, c: &Collective, n: u32) {
        let splits = matches!(c.op, OpType::ReduceScatter | OpType::AllToAll);
        if splits && c.count != 0 && !c.count.is_multiple_of(u64::from(n)) {
            self.push("count", Problem::CountNotMultiple { op: c.op, count: c.count, n });
        }
    }

    fn reduce(&mut self, c: &Collective) {
        match (c.op.is_reducing(), c.reduce) {
            (true, None) => self.push("reduce", Problem::ReduceMissing { op: c.op }),
            (false, Some(reduce)) => self.push("reduce", Problem::ReduceRefused { op: c.op, reduce }),
            (true, Some(ReduceOp::Average)) if !c.dtype.is_float() => {
                self.push("reduce", Problem::AverageNeedsFloat { dtype: c.dtype });
            }
            _ => {}
        }
    }

    /// `Some(root)` when valid (`Some(None)` for an op without a root).
    fn root(&mut self, c: &Collective, n: Option<u32>) -> Option<Option<u32>> {
        match (c.op.is_rooted(), c.root) {
            (true, None) => {
                self.push("root", Problem::RootMissing { op: c.op, n });
                None
            }
            (false, Some(root)) => {
                self.push("root", Problem::RootRefused { op: c.op, root });
                None
            }
            (false, None) => Some(None),
            (true, Some(root)) => match n {
                Some(n) if root < n => Some(Some(root)),
                Some(n) => {
                    self.push("root", Problem::RootOutOfRange { root, n });
                    None
                }
                None => None,
            },
        }
    }

    /// The peer pairs, normalized (empty for an op without a peer map).
    fn peers(&mut self, c: &Collective, n: Option<u32>) -> Option<Vec<(u32, u32)>> {
        if !c.op.takes_peers() {
            let mut ok = true;
            if c.peers.is_some() {
                self.push("peers", Problem::PeerMapRefused { op: c.op, field: "peers" });
                ok = false;
            }
            if c.peer.is_some() {
                self.push("peer", Problem::PeerMapRefused { op: c.op, field: "peer" });
                ok = false;
            }
            return ok.then(Vec::new);
        }
        match (&c.peers, c.peer) {
            (Some(_), Some(_)) => {
                self.push("peer", Problem::PeerMapTwice);
                None
            }
            (None, None) => {
                self.push("peers", Problem::PeerMapMissing { op: c.op });
                None
            }
            (None, Some(k)) => {
                let n = n?;
                if k == 0 || k >= n {
                    self.push("peer", Problem::PeerStepOutOfRange { peer: k, n });
                    return None;
                }
                // k < n <= MAX_RANK_N: the sum cannot overflow.
                Some((0..n).map(|i| (i, (i + k) % n)).collect())
            }
            (Some(pairs), None) => {
                if pairs.is_empty() {
                    self.push("peers", Problem::PeersEmpty);
                    return None;
                }
                let before = self.errors.len();
                let mut sources = BTreeMap::new();
                let mut targets = BTreeMap::new();
                for (i, &(s, t)) in pairs.iter().enumerate() {
                    let field = format!("peers[{i}]");
                    if let Some(n) = n
                        && (s >= n || t >= n)
                    {
                        self.push(field, Problem::PeerOutOfRange { pair: (s, t), n });
                        continue;
                    }
                    if s == t {
                        self.push(field, Problem::PeerSelfPair { member: s });
                        continue;
                    }
                    if let Some(&first) = sources.get(&s) {
                        self.push(field.clone(), Problem::PeerSourceRepeated { member: s, first });
                    } else {
                        sources.insert(s, i);
                    }
                    if let Some(&first) = targets.get(&t) {
                        self.push(field, Problem::PeerTargetRepeated { member: t, first });
                    } else {
                        targets.insert(t, i);
                    }
                }
                (self.errors.len() == before && n.is_some()).then(|| pairs.clone())
            }
        }
    }

    fn counts(&mut self, c: &Collective, n: Option<u32>) {
        if c.op != OpType::AllToAllV {
            if c.counts.is_some() {
                self.push("counts", Problem::CountsRefused { op: c.op });
            }
            return;
        }
        let Some(rows) = &c.counts else {
            self.push("counts", Problem::CountsMissing);
            return;
        };
        if let Some(n) = n
            && rows.len() != n as usize
        {
            self.push("counts", Problem::CountsRows { rows: rows.len(), n });
        }
        for (i, row) in rows.iter().enumerate() {
            if let Some(n) = n
                && row.len() != n as usize
            {
                self.push(format!("counts[{i}]"), Problem::CountsRowLength { len: row.len(), n });
            }
            let sum = row.iter().try_fold(0u64, |acc, &x| acc.checked_add(x));
            if sum != Some(c.count) {
                self.push(format!("counts[{i}]"), Problem::CountsRowSum { sum, count: c.count });
            }
        }
    }

    fn groups(&mut self, groups: Option<&[Vec<u32>]>, rank_n: u32) -> Option<CheckedGroups> {
        let Some(groups) = groups else {
            return Some(CheckedGroups {
                groups: Groups::world(rank_n),
                n: rank_n,
                members: vec![(GroupRef::World, (0..rank_n).collect())],
            });
        };
        if groups.is_empty() {
            self.push("groups", Problem::GroupsEmpty);
            return None;
        }
        let before = self.errors.len();
        let (expected_in, expected) =
            groups.iter().enumerate().find(|(_, g)| !g.is_empty()).map_or((0, 0), |(i, g)| (i, g.len()));
        let mut seen: Vec<Option<(usize, usize)>> = vec![None; rank_n as usize];
        for (gi, group) in groups.iter().enumerate() {
            if group.is_empty() {
                self.push(format!("groups[{gi}]"), Problem::GroupEmpty);
            } else if group.len() != expected {
                self.push(
                    format!("groups[{gi}]"),
                    Problem::GroupSizeMismatch { size: group.len(), expected, expected_in },
                );
            }
            for (mi, &rank) in group.iter().enumerate() {
                match seen.get_mut(rank as usize) {
                    None => self.push(format!("groups[{gi}][{mi}]"), Problem::GroupRankOutOfRange { rank, rank_n }),
                    Some(Some(first)) => {
                        let first = *first;
                        self.push(format!("groups[{gi}][{mi}]"), Problem::RankListedTwice { rank, first });
                    }
                    Some(slot) => *slot = Some((gi, mi)),
                }
            }
        }
        let missing: Vec<u32> = seen.iter().enumerate().filter(|(_, s)| s.is_none()).map(|(r, _)| idx(r)).collect();
        if !missing.is_empty() {
            self.push("groups", Problem::RanksInNoGroup { ranks: missing, rank_n });
        }
        if self.errors.len() != before {
            return None;
        }
        let members = groups.iter().enumerate().map(|(i, g)| (GroupRef::Explicit(idx(i)), g.clone())).collect();
        Some(CheckedGroups { groups: Groups::explicit(rank_n, groups.to_vec()), n: idx(expected), members })
    }

    /// Resolves the algorithm; `structure` is the shape and groups when both
    /// are valid (structural requirements are checked only then).
    fn algorithm(&mut self, c: &Collective, structure: Option<(&Shape, &CheckedGroups)>) -> Option<ResolvedAlgorithm> {
        let op = c.op;
        let serving = || {
            let mut algs: Vec<AlgType> =
                AlgType::ALL.iter().copied().filter(|&a| a != AlgType::Hier && algorithms::supports(a, op)).collect();
            if algorithms::supports(AlgType::Hier, op) && algorithms::hier_legs(op).is_some() {
                algs.push(AlgType::Hier);
            }
            algs
        };
        let alg = match &c.algorithm {
            Algorithm::Auto => {
                self.push("algorithm", Problem::AutoUnavailable { op, choices: serving() });
                return None;
            }
            Algorithm::Hier(legs) => return self.hier(op, legs, structure, serving),
            flat => flat.alg_type()?,
        };
        if !algorithms::supports(alg, op) {
            let gate = (alg == AlgType::SingleCycleRing).then_some(Gate::SingleCycleRingAllReduceOnly);
            self.push("algorithm", Problem::AlgorithmDoesNotServe { alg, op, choices: serving(), gate });
            return None;
        }
        let (shape, groups) = structure?;
        let mut unmet =
            groups.members.iter().filter_map(|(g, m)| unmet(algorithms::requirement(alg), m, shape).map(|u| (*g, u)));
        if let Some((group, u)) = unmet.next() {
            let more = unmet.count();
            self.push("algorithm", u.problem(alg, None, group, more, shape));
            return None;
        }
        Some(ResolvedAlgorithm::Flat(alg))
    }

    fn hier(
        &mut self,
        op: OpType,
        given: &HierLegs,
        structure: Option<(&Shape, &CheckedGroups)>,
        serving: impl Fn() -> Vec<AlgType>,
    ) -> Option<ResolvedAlgorithm> {
        let legs = match algorithms::hier_legs(op) {
            Some(legs) if algorithms::supports(AlgType::Hier, op) => legs,
            _ => {
                let problem = Problem::AlgorithmDoesNotServe { alg: AlgType::Hier, op, choices: serving(), gate: None };
                self.push("algorithm", problem);
                return None;
            }
        };
        let before = self.errors.len();
        let mut chosen = Vec::new();
        for leg in Leg::ALL {
            let field = format!("algorithm.{leg}");
            match (legs.contains(&leg), given.get(leg)) {
                (true, None) => self.push(field, Problem::HierLegMissing { op, leg, legs }),
                (false, Some(_)) => self.push(field, Problem::HierLegUnused { op, leg, legs }),
                (false, None) => {}
                (true, Some(choice)) => {
                    let choices = algorithms::leg_choices(leg);
                    if choices.contains(&choice) {
                        chosen.push((leg, choice));
                    } else {
                        let gate = match choice {
                            AlgType::Kangaring if !leg.is_intra() => Some(Gate::KangaringIntraOnly),
                            AlgType::SingleCycleRing if leg.op() != OpType::AllReduce => {
                                Some(Gate::SingleCycleRingAllReduceOnly)
                            }
                            AlgType::Hier => Some(Gate::HierDoesNotNest),
                            _ => None,
                        };
                        self.push(field, Problem::HierLegChoice { leg, choice, choices, gate });
                    }
                }
            }
        }
        if self.errors.len() != before {
            return None;
        }
        let (shape, groups) = structure?;
        // The composition itself: every group listed node by node.
        let mut unmet_groups = groups
            .members
            .iter()
            .filter_map(|(g, m)| unmet(algorithms::requirement(AlgType::Hier), m, shape).map(|u| (*g, u)));
        if let Some((group, u)) = unmet_groups.next() {
            let more = unmet_groups.count();
            self.push("algorithm", u.problem(AlgType::Hier, None, group, more, shape));
            return None;
        }
        // Each leg's own requirement, over the leg's members: one node's
        // members for an intra leg, one member per node for an inter leg.
        // Groups are node-aligned here, so the first of each is representative.
        for &(leg, alg) in &chosen {
            let req = algorithms::requirement(alg);
            let mut unmet_legs = groups.members.iter().filter_map(|(g, m)| {
                let per_node =
                    m.iter().take_while(|&&r| shape.node(r) == m.first().map_or(0, |&f| shape.node(f))).count();
                let leg_members: Vec<u32> = if leg.is_intra() {
                    m.iter().take(per_node).copied().collect()
                } else {
                    m.iter().step_by(per_node.max(1)).copied().collect()
                };
                unmet(req, &leg_members, shape).map(|u| (*g, u))
            });
            if let Some((group, u)) = unmet_legs.next() {
                let more = unmet_legs.count();
                self.push(format!("algorithm.{leg}"), u.problem(alg, Some(leg), group, more, shape));
            }
        }
        if self.errors.len() != before {
            return None;
        }
        // `chosen` follows `Leg::ALL`; the resolution follows the op's leg order.
        let resolved = legs.iter().filter_map(|&leg| chosen.iter().find(|(l, _)| *l == leg).copied()).collect();
        Some(ResolvedAlgorithm::Hier(resolved))
    }
}

/// How a group fails a [`Requirement`].
enum Unmet {
    /// Members on two nodes.
    Nodes { a: u32, b: u32 },
    /// Not aligned at a level.
    Aligned(Level, AlignFault),
}

impl Unmet {
    fn problem(self, alg: AlgType, leg: Option<Leg>, group: GroupRef, also: usize, shape: &Shape) -> Problem {
        match self {
            Unmet::Nodes { a, b } => Problem::NotWithinNode {
                alg,
                leg,
                group,
                a,
                node_a: shape.node(a),
                b,
                node_b: shape.node(b),
                local_rank_n: shape.local_rank_n,
                also,
            },
            Unmet::Aligned(level, fault) => Problem::NotAligned { alg, leg, level, group, fault, also },
        }
    }
}

/// Does `members` (global ranks, valid for `shape`) meet `req`?
fn unmet(req: Requirement, members: &[u32], shape: &Shape) -> Option<Unmet> {
    match req {
        Requirement::None => None,
        Requirement::WithinNode => {
            let &a = members.first()?;
            let &b = members.iter().find(|&&r| shape.node(r) != shape.node(a))?;
            Some(Unmet::Nodes { a, b })
        }
        Requirement::NodeAligned => aligned(members, |r| shape.node(r)).err().map(|f| Unmet::Aligned(Level::Node, f)),
        Requirement::PodAligned => match aligned(members, |r| shape.pod(r)) {
            Err(f) => Some(Unmet::Aligned(Level::Pod, f)),
            Ok(1) => Some(Unmet::Aligned(
                Level::Pod,
                AlignFault::SingleUnit { unit: members.first().map_or(0, |&r| shape.pod(r)) },
            )),
            Ok(_) => None,
        },
    }
}

/// Checks that `members` come in consecutive runs of the same unit, no unit
/// visited twice, every run the same length; returns the number of runs.
fn aligned(members: &[u32], unit: impl Fn(u32) -> u32) -> Result<usize, AlignFault> {
    // (unit, run length), in order.
    let mut runs: Vec<(u32, u32)> = Vec::new();
    let mut visited = std::collections::BTreeSet::new();
    for &rank in members {
        let u = unit(rank);
        match runs.last_mut() {
            Some((last, len)) if *last == u => *len += 1,
            _ => {
                if !visited.insert(u) {
                    return Err(AlignFault::Revisited { rank, unit: u });
                }
                runs.push((u, 1));
            }
        }
    }
    let Some(&(first, first_len)) = runs.first() else { return Ok(0) };
    match runs.iter().find(|&&(_, len)| len != first_len) {
        Some(&(other, other_len)) => Err(AlignFault::Uneven { first, first_len, other, other_len }),
        None => Ok(runs.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid flat ring all-reduce: 32 ranks, 16 per node, one pod.
    fn base() -> Collective {
        Collective {
            op: OpType::AllReduce,
            dtype: DType::Bf16,
            reduce: Some(ReduceOp::Add),
            count: 4_194_304,
            arch: Arch::Cayman,
            topology: Topology { rank_n: 32, local_rank_n: 16, pod_n: 1 },
            channels: 4,
            algorithm: Algorithm::Ring,
            root: None,
            peer: None,
            peers: None,
            counts: None,
            groups: None,
            barrier: None,
            send_credits: None,
        }
    }

    fn hier_ar() -> Algorithm {
        Algorithm::Hier(HierLegs {
            intra_reduce_scatter: Some(AlgType::Ring),
            inter_all_reduce: Some(AlgType::SingleCycleRing),
            intra_all_gather: Some(AlgType::Kangaring),
            ..HierLegs::default()
        })
    }

    fn ok(c: Collective) -> ValidCollective {
        match validate(Program::from(c)) {
            Ok(p) => p.collectives()[0].clone(),
            Err(e) => panic!("{e}"),
        }
    }

    fn errs(c: Collective) -> Vec<(String, Problem)> {
        errs_program(Program::from(c))
    }

    fn errs_program(p: Program) -> Vec<(String, Problem)> {
        match validate(p) {
            Ok(_) => panic!("accepted"),
            Err(e) => {
                assert!(!e.0.is_empty());
                e.0.into_iter().map(|e| (e.field, e.problem)).collect()
            }
        }
    }

    /// The single error's field and problem.
    fn one(c: Collective) -> (String, Problem) {
        let mut e = errs(c);
        assert_eq!(e.len(), 1, "{e:#?}");
        e.remove(0)
    }

    fn with(f: impl FnOnce(&mut Collective)) -> Collective {
        let mut c = base();
        f(&mut c);
        c
    }

    #[test]
    fn accepts_the_base_and_resolves_defaults() {
        let p = validate(Program::from(base())).unwrap();
        assert_eq!(p.arch(), Arch::Cayman);
        assert_eq!(p.barrier(), Barrier::Host);
        assert_eq!(p.send_credits(), DEFAULT_SEND_CREDITS);
        assert_eq!(p.topology(), Shape { rank_n: 32, local_rank_n: 16, pod_n: 1, node_n: 2, nodes_per_pod: 2 });
        let c = &p.collectives()[0];
        assert_eq!(c.algorithm(), &ResolvedAlgorithm::Flat(AlgType::Ring));
        assert_eq!(c.groups(), &Groups::world(32));
        assert_eq!(c.channels(), 4);
        assert!(c.peers().is_empty());
    }

    #[test]
    fn hier_resolves_in_leg_order() {
        let c = ok(with(|c| c.algorithm = hier_ar()));
        assert_eq!(
            c.algorithm(),
            &ResolvedAlgorithm::Hier(vec![
                (Leg::IntraReduceScatter, AlgType::Ring),
                (Leg::InterAllReduce, AlgType::SingleCycleRing),
                (Leg::IntraAllGather, AlgType::Kangaring),
            ])
        );
    }

    #[test]
    fn program_needs_a_collective() {
        let e = errs_program(Program { collectives: vec![] });
        assert_eq!(e, vec![("collectives".to_owned(), Problem::NoCollectives)]);
    }

    #[test]
    fn program_collectives_share_settings() {
        let second = with(|c| {
            c.arch = Arch::Mariana;
            c.topology.local_rank_n = 8;
            c.barrier = Some(Barrier::Device);
            c.send_credits = Some(4);
        });
        let e = validate(Program { collectives: vec![base(), second] }).unwrap_err();
        let got: Vec<_> = e.0.iter().map(|e| (e.collective, e.field.as_str())).collect();
        assert_eq!(
            got,
            vec![(Some(1), "arch"), (Some(1), "topology"), (Some(1), "barrier"), (Some(1), "send_credits")]
        );
        assert_eq!(e.0[0].problem, Problem::ArchDiffers { found: Arch::Mariana, first: Arch::Cayman });
        assert_eq!(e.0[3].problem, Problem::SendCreditsDiffers { found: 4, first: u32::from(DEFAULT_SEND_CREDITS) });
        assert_eq!(e.0[0].path(SpecForm::Program), "collectives[1].arch");
        assert_eq!(e.0[0].path(SpecForm::Collective), "arch");
        // Explicit defaults are the defaults.
        let same = with(|c| {
            c.barrier = Some(Barrier::Host);
            c.send_credits = Some(2);
        });
        let p = validate(Program {
            collectives: vec![
                base(),
                same,
                with(|c| {
                    c.op = OpType::AllGather;
                    c.reduce = None;
                }),
            ],
        });
        let p = p.map_err(|e| e.to_string()).unwrap();
        assert_eq!(p.collectives().len(), 3);
        assert_eq!(p.collectives()[2].index(), 2);
        assert_eq!(p.collectives()[2].reduce(), None);
    }

    #[test]
    fn a_shared_bad_value_is_reported_once() {
        let bad = with(|c| {
            c.send_credits = Some(0);
            c.topology.local_rank_n = 12;
        });
        let e = validate(Program { collectives: vec![bad.clone(), bad] }).unwrap_err();
        let got: Vec<_> = e.0.iter().map(|e| (e.collective, e.field.as_str())).collect();
        assert_eq!(got, vec![(Some(0), "topology.local_rank_n"), (Some(0), "send_credits")]);
    }

    #[test]
    fn topology_rules() {
        let e = one(with(|c| c.topology.rank_n = 0));
        assert_eq!(e, ("topology.rank_n".into(), Problem::OutOfRange { value: 0, min: 1, max: 1_048_576 }));
        let e = one(with(|c| {
            c.topology.rank_n = 2_097_152;
            c.topology.local_rank_n = 16;
        }));
        assert_eq!(e.0, "topology.rank_n");
        let e = one(with(|c| c.topology.local_rank_n = 0));
        assert_eq!(e, ("topology.local_rank_n".into(), Problem::OutOfRange { value: 0, min: 1, max: 32 }));
        let e = one(with(|c| c.topology.local_rank_n = 12));
        assert_eq!(e.1, Problem::LocalRankNNotDivisor { rank_n: 32, local_rank_n: 12 });
        assert!(e.1.to_string().contains("a divisor of 32 (1, 2, 4, 8, 16, 32)"), "{}", e.1);
        let e = one(with(|c| c.topology.pod_n = 0));
        assert_eq!(e, ("topology.pod_n".into(), Problem::OutOfRange { value: 0, min: 1, max: 2 }));
        let e = one(with(|c| c.topology.pod_n = 3));
        assert_eq!(e.1, Problem::PodNNotDivisor { node_n: 2, pod_n: 3 });
        ok(with(|c| c.topology = Topology { rank_n: 64, local_rank_n: 16, pod_n: 4 }));
        ok(with(|c| c.topology = Topology { rank_n: 1, local_rank_n: 1, pod_n: 1 }));
    }

    #[test]
    fn channels_range() {
        for bad in [0, 33] {
            let e = one(with(|c| c.channels = bad));
            assert_eq!(e, ("channels".into(), Problem::OutOfRange { value: u64::from(bad), min: 1, max: 32 }));
        }
        assert_eq!(ok(with(|c| c.channels = 32)).channels(), 32);
        assert_eq!(ok(with(|c| c.channels = 1)).channels(), 1);
    }

    #[test]
    fn count_rules() {
        assert_eq!(one(with(|c| c.count = 0)), ("count".into(), Problem::CountZero));
        let e = one(with(|c| c.count = u64::MAX / 2 + 1));
        assert_eq!(e.1, Problem::CountOverflow { count: u64::MAX / 2 + 1, dtype: DType::Bf16 });
        ok(with(|c| c.count = u64::MAX / 2));
        for op in [OpType::ReduceScatter, OpType::AllToAll] {
            let e = one(with(|c| {
                c.op = op;
                c.reduce = op.is_reducing().then_some(ReduceOp::Add);
                c.count = 1000;
            }));
            assert_eq!(e, ("count".into(), Problem::CountNotMultiple { op, count: 1000, n: 32 }));
            assert!(e.1.to_string().contains("e.g. 992 or 1024"), "{}", e.1);
        }
        // The group size counts, not rank_n.
        ok(with(|c| {
            c.op = OpType::ReduceScatter;
            c.count = 8;
            c.groups = Some((0..8).map(|g| (4 * g..4 * g + 4).collect()).collect());
        }));
    }

    #[test]
    fn reduce_rules() {
        assert_eq!(one(with(|c| c.reduce = None)), ("reduce".into(), Problem::ReduceMissing { op: OpType::AllReduce }));
        assert_eq!(
            one(with(|c| c.op = OpType::AllGather)),
            ("reduce".into(), Problem::ReduceRefused { op: OpType::AllGather, reduce: ReduceOp::Add })
        );
        let e = one(with(|c| {
            c.reduce = Some(ReduceOp::Average);
            c.dtype = DType::I32;
        }));
        assert_eq!(e.1, Problem::AverageNeedsFloat { dtype: DType::I32 });
        assert_eq!(ok(with(|c| c.reduce = Some(ReduceOp::Average))).reduce(), Some(ReduceOp::Average));
    }

    #[test]
    fn root_rules() {
        let bcast = |c: &mut Collective| {
            c.op = OpType::Broadcast;
            c.reduce = None;
        };
        assert_eq!(one(with(bcast)), ("root".into(), Problem::RootMissing { op: OpType::Broadcast, n: Some(32) }));
        assert_eq!(
            one(with(|c| c.root = Some(0))),
            ("root".into(), Problem::RootRefused { op: OpType::AllReduce, root: 0 })
        );
        let groups = Some((0..8).map(|g| (4 * g..4 * g + 4).collect()).collect::<Vec<Vec<u32>>>());
        let e = one(with(|c| {
            bcast(c);
            c.root = Some(4);
            c.groups = groups.clone();
        }));
        assert_eq!(e, ("root".into(), Problem::RootOutOfRange { root: 4, n: 4 }));
        assert!(e.1.to_string().contains("accepted: 0..=3"));
        let v = ok(with(|c| {
            bcast(c);
            c.root = Some(3);
            c.groups = groups;
        }));
        assert_eq!(v.root(), Some(3));
    }

    fn send(c: &mut Collective) {
        c.op = OpType::Send;
        c.reduce = None;
    }

    #[test]
    fn peer_shorthand_expands() {
        let v = ok(with(|c| {
            send(c);
            c.peer = Some(1);
            c.groups = Some(vec![(0..16).collect(), (16..32).collect()]);
        }));
        assert_eq!(v.peers().len(), 16);
        assert_eq!(v.peers()[0], (0, 1));
        assert_eq!(v.peers()[15], (15, 0));
        for bad in [0, 32] {
            let e = one(with(|c| {
                send(c);
                c.peer = Some(bad);
            }));
            assert_eq!(e, ("peer".into(), Problem::PeerStepOutOfRange { peer: bad, n: 32 }));
        }
    }

    #[test]
    fn peer_map_presence() {
        assert_eq!(one(with(send)), ("peers".into(), Problem::PeerMapMissing { op: OpType::Send }));
        let e = one(with(|c| {
            send(c);
            c.peer = Some(1);
            c.peers = Some(vec![(0, 1)]);
        }));
        assert_eq!(e, ("peer".into(), Problem::PeerMapTwice));
        assert_eq!(
            one(with(|c| c.peer = Some(1))),
            ("peer".into(), Problem::PeerMapRefused { op: OpType::AllReduce, field: "peer" })
        );
        assert_eq!(
            one(with(|c| {
                send(c);
                c.peers = Some(vec![]);
            })),
            ("peers".into(), Problem::PeersEmpty)
        );
    }

    #[test]
    fn peer_pairs() {
        let v = ok(with(|c| {
            send(c);
            c.peers = Some(vec![(0, 5), (5, 0), (1, 2)]);
        }));
        assert_eq!(v.peers(), &[(0, 5), (5, 0), (1, 2)]);
        let e = errs(with(|c| {
            send(c);
            c.peers = Some(vec![(0, 5), (0, 6), (7, 5), (3, 3), (40, 1)]);
        }));
        assert_eq!(
            e,
            vec![
                ("peers[1]".into(), Problem::PeerSourceRepeated { member: 0, first: 0 }),
                ("peers[2]".into(), Problem::PeerTargetRepeated { member: 5, first: 0 }),
                ("peers[3]".into(), Problem::PeerSelfPair { member: 3 }),
                ("peers[4]".into(), Problem::PeerOutOfRange { pair: (40, 1), n: 32 }),
            ]
        );
    }

    #[test]
    fn counts_rules() {
        let a2av = |c: &mut Collective| {
            c.op = OpType::AllToAllV;
            c.reduce = None;
            c.count = 6;
            c.groups = Some((0..16).map(|g| vec![2 * g, 2 * g + 1]).collect());
        };
        let v = ok(with(|c| {
            a2av(c);
            c.counts = Some(vec![vec![1, 5], vec![6, 0]]);
        }));
        assert_eq!(v.counts(), Some(&[vec![1, 5], vec![6, 0]][..]));
        assert_eq!(one(with(a2av)), ("counts".into(), Problem::CountsMissing));
        assert_eq!(
            one(with(|c| c.counts = Some(vec![]))),
            ("counts".into(), Problem::CountsRefused { op: OpType::AllReduce })
        );
        let e = errs(with(|c| {
            a2av(c);
            c.counts = Some(vec![vec![1, 2, 3], vec![6, 1], vec![u64::MAX, 1]]);
        }));
        assert_eq!(
            e,
            vec![
                ("counts".into(), Problem::CountsRows { rows: 3, n: 2 }),
                ("counts[0]".into(), Problem::CountsRowLength { len: 3, n: 2 }),
                ("counts[1]".into(), Problem::CountsRowSum { sum: Some(7), count: 6 }),
                ("counts[2]".into(), Problem::CountsRowSum { sum: None, count: 6 }),
            ]
        );
    }

    #[test]
    fn groups_rules() {
        let v = ok(with(|c| c.groups = Some(vec![(16..32).collect(), (0..16).collect()])));
        assert_eq!(v.groups().group_n(), 2);
        assert_eq!(v.groups().size(), 16);
        assert_eq!(one(with(|c| c.groups = Some(vec![]))), ("groups".into(), Problem::GroupsEmpty));
        let e = errs(with(|c| c.groups = Some(vec![vec![], (0..16).collect(), (16..31).collect()])));
        assert_eq!(e[0], ("groups[0]".into(), Problem::GroupEmpty));
        assert_eq!(e[1], ("groups[2]".into(), Problem::GroupSizeMismatch { size: 15, expected: 16, expected_in: 1 }));
        assert_eq!(e[2], ("groups".into(), Problem::RanksInNoGroup { ranks: vec![31], rank_n: 32 }));
        let mut second: Vec<u32> = (16..32).collect();
        second[3] = 5;
        second[4] = 32;
        let e = errs(with(|c| c.groups = Some(vec![(0..16).collect(), second])));
        assert_eq!(
            e,
            vec![
                ("groups[1][3]".into(), Problem::RankListedTwice { rank: 5, first: (0, 5) }),
                ("groups[1][4]".into(), Problem::GroupRankOutOfRange { rank: 32, rank_n: 32 }),
                ("groups".into(), Problem::RanksInNoGroup { ranks: vec![19, 20], rank_n: 32 }),
            ]
        );
        let e = one(with(|c| c.groups = Some(vec![vec![0]])));
        let text = e.1.to_string();
        assert!(text.starts_with("31 ranks are in no group: 1, 2, 3, 4, 5, 6, 7, 8 and 23 more;"), "{text}");
    }

    #[test]
    fn auto_and_unserved_algorithms() {
        let e = one(with(|c| c.algorithm = Algorithm::Auto));
        let Problem::AutoUnavailable { op: OpType::AllReduce, choices } = &e.1 else { panic!("{e:?}") };
        assert_eq!(choices.first(), Some(&AlgType::Ring));
        assert_eq!(choices.last(), Some(&AlgType::Hier));
        assert!(e.1.to_string().contains("Hier((...))"));
        let e = one(with(|c| {
            c.op = OpType::AllGather;
            c.reduce = None;
            c.algorithm = Algorithm::SingleCycleRing;
        }));
        let Problem::AlgorithmDoesNotServe { gate, choices, .. } = &e.1 else { panic!("{e:?}") };
        assert_eq!(*gate, Some(Gate::SingleCycleRingAllReduceOnly));
        assert!(!choices.contains(&AlgType::SingleCycleRing));
        assert!(e.1.to_string().contains("(SingleCycleRing is for all-reduce only)"));
        let e = one(with(|c| {
            send(c);
            c.peer = Some(1);
            c.algorithm = hier_ar();
        }));
        assert!(matches!(e.1, Problem::AlgorithmDoesNotServe { alg: AlgType::Hier, op: OpType::Send, .. }));
    }

    #[test]
    fn within_node_requirement() {
        let e = one(with(|c| c.algorithm = Algorithm::Kangaring));
        assert_eq!(
            e,
            (
                "algorithm".into(),
                Problem::NotWithinNode {
                    alg: AlgType::Kangaring,
                    leg: None,
                    group: GroupRef::World,
                    a: 0,
                    node_a: 0,
                    b: 16,
                    node_b: 1,
                    local_rank_n: 16,
                    also: 0
                }
            )
        );
        ok(with(|c| {
            c.algorithm = Algorithm::Kangaring;
            c.groups = Some(vec![(0..16).collect(), (16..32).collect()]);
        }));
        let e = one(with(|c| {
            c.algorithm = Algorithm::IntraRdh;
            c.groups = Some((0..16).map(|i| vec![i, i + 16]).collect());
        }));
        let Problem::NotWithinNode { group, also, .. } = e.1 else { panic!("{e:?}") };
        assert_eq!((group, also), (GroupRef::Explicit(0), 15));
    }

    #[test]
    fn node_aligned_requirement() {
        let interleaved: Vec<Vec<u32>> = vec![(0..16).flat_map(|i| [i, 16 + i]).collect()];
        let e = one(with(|c| {
            c.algorithm = Algorithm::BwOptMesh;
            c.groups = Some(interleaved.clone());
        }));
        assert_eq!(
            e.1,
            Problem::NotAligned {
                alg: AlgType::BwOptMesh,
                leg: None,
                level: Level::Node,
                group: GroupRef::Explicit(0),
                fault: AlignFault::Revisited { rank: 1, unit: 0 },
                also: 0
            }
        );
        // Uneven: 2 members on node 0, 1 on node 1 — groups of 3 cannot be even.
        let uneven = [vec![0, 1, 16], vec![2, 3, 17]];
        let fault = aligned(&uneven[0], |r| r / 16).unwrap_err();
        assert_eq!(fault, AlignFault::Uneven { first: 0, first_len: 2, other: 1, other_len: 1 });
        ok(with(|c| {
            c.algorithm = Algorithm::LatencyOptMesh;
            c.groups = Some((0..8).map(|g| vec![2 * g, 2 * g + 1, 16 + 2 * g, 17 + 2 * g]).collect());
        }));
        // Hier needs node-aligned groups too.
        let e = one(with(|c| {
            c.algorithm = hier_ar();
            c.groups = Some(interleaved);
        }));
        assert!(matches!(e.1, Problem::NotAligned { alg: AlgType::Hier, level: Level::Node, .. }), "{e:?}");
    }

    #[test]
    fn pod_aligned_requirement() {
        let pods = |c: &mut Collective| c.topology = Topology { rank_n: 64, local_rank_n: 16, pod_n: 2 };
        let v = ok(with(|c| {
            pods(c);
            c.algorithm = Algorithm::TwoStepPodMesh;
        }));
        assert_eq!(v.algorithm(), &ResolvedAlgorithm::Flat(AlgType::TwoStepPodMesh));
        let e = one(with(|c| c.algorithm = Algorithm::TwoStepPodMesh));
        assert_eq!(
            e.1,
            Problem::NotAligned {
                alg: AlgType::TwoStepPodMesh,
                leg: None,
                level: Level::Pod,
                group: GroupRef::World,
                fault: AlignFault::SingleUnit { unit: 0 },
                also: 0
            }
        );
        // As an inter leg: the group's nodes must span two pods.
        let hier = |c: &mut Collective| {
            c.algorithm = Algorithm::Hier(HierLegs {
                intra_reduce_scatter: Some(AlgType::Ring),
                inter_all_reduce: Some(AlgType::TwoStepPodMesh),
                intra_all_gather: Some(AlgType::Ring),
                ..HierLegs::default()
            });
        };
        ok(with(|c| {
            pods(c);
            hier(c);
        }));
        let e = one(with(hier));
        assert_eq!(e.0, "algorithm.inter_all_reduce");
        assert!(matches!(e.1, Problem::NotAligned { leg: Some(Leg::InterAllReduce), level: Level::Pod, .. }), "{e:?}");
        let text = e.1.to_string();
        assert!(text.contains("the nodes of each group"), "{text}");
    }

    #[test]
    fn hier_legs() {
        let legs = |l: HierLegs| with(|c| c.algorithm = Algorithm::Hier(l));
        let e = one(legs(HierLegs {
            intra_reduce_scatter: Some(AlgType::Ring),
            intra_all_gather: Some(AlgType::Ring),
            ..HierLegs::default()
        }));
        assert_eq!(e.0, "algorithm.inter_all_reduce");
        assert!(matches!(e.1, Problem::HierLegMissing { leg: Leg::InterAllReduce, .. }));
        let e = one(with(|c| {
            c.op = OpType::AllGather;
            c.reduce = None;
            c.algorithm = Algorithm::Hier(HierLegs {
                inter_all_gather: Some(AlgType::Ring),
                intra_all_gather: Some(AlgType::Kangaring),
                inter_all_reduce: Some(AlgType::Ring),
                ..HierLegs::default()
            });
        }));
        assert_eq!(e.0, "algorithm.inter_all_reduce");
        assert!(matches!(e.1, Problem::HierLegUnused { op: OpType::AllGather, leg: Leg::InterAllReduce, .. }));
        let e = one(legs(HierLegs {
            intra_reduce_scatter: Some(AlgType::Ring),
            inter_all_reduce: Some(AlgType::Kangaring),
            intra_all_gather: Some(AlgType::Ring),
            ..HierLegs::default()
        }));
        assert_eq!(e.0, "algorithm.inter_all_reduce");
        assert!(
            matches!(
                e.1,
                Problem::HierLegChoice { choice: AlgType::Kangaring, gate: Some(Gate::KangaringIntraOnly), .. }
            ),
            "{e:?}"
        );
        assert!(e.1.to_string().contains("Kangaring runs inside a node only"));
        let all = errs(with(|c| {
            c.op = OpType::AllGather;
            c.reduce = None;
            c.algorithm = Algorithm::Hier(HierLegs {
                inter_all_gather: Some(AlgType::SingleCycleRing),
                intra_all_gather: Some(AlgType::Hier),
                ..HierLegs::default()
            });
        }));
        assert!(matches!(all[0].1, Problem::HierLegChoice { gate: Some(Gate::SingleCycleRingAllReduceOnly), .. }));
        assert!(matches!(all[1].1, Problem::HierLegChoice { gate: Some(Gate::HierDoesNotNest), .. }));
    }

    #[test]
    fn barrier_and_credits() {
        let big = |c: &mut Collective| c.topology = Topology { rank_n: 1024, local_rank_n: 16, pod_n: 1 };
        let e = one(with(|c| {
            big(c);
            c.barrier = Some(Barrier::Device);
        }));
        assert_eq!(e, ("barrier".into(), Problem::DeviceBarrierTooLarge { rank_n: 1024 }));
        ok(with(big));
        ok(with(|c| {
            c.topology = Topology { rank_n: 625, local_rank_n: 25, pod_n: 1 };
            c.barrier = Some(Barrier::Device);
        }));
        for bad in [0, 512] {
            let e = one(with(|c| c.send_credits = Some(bad)));
            assert_eq!(e, ("send_credits".into(), Problem::OutOfRange { value: u64::from(bad), min: 1, max: 511 }));
        }
        let p = validate(Program::from(with(|c| c.send_credits = Some(511)))).unwrap();
        assert_eq!(p.send_credits(), 511);
    }

    #[test]
    fn collects_every_problem() {
        let e = errs(with(|c| {
            c.channels = 0;
            c.reduce = None;
            c.root = Some(1);
            c.topology.pod_n = 3;
            c.algorithm = Algorithm::Auto;
            c.send_credits = Some(600);
        }));
        let fields: Vec<_> = e.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(fields, vec!["topology.pod_n", "channels", "reduce", "root", "algorithm", "send_credits"]);
    }

    #[test]
    fn messages_say_what_is_accepted() {
        let e = validate(Program::from(with(|c| c.channels = 33))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "1 problem in the spec:\n  - collective 0: channels: 33 is out of range; accepted: 1..=32"
        );
        assert_eq!(divisors(36), vec![1, 2, 3, 4, 6, 9, 12, 18, 36]);
        assert_eq!(divisors(1), vec![1]);
        assert_eq!(abbreviated(&[1, 2]), "1, 2");
    }

    fn any_alg() -> impl proptest::strategy::Strategy<Value = AlgType> {
        proptest::sample::select(AlgType::ALL.to_vec())
    }

    fn any_algorithm() -> impl proptest::strategy::Strategy<Value = Algorithm> {
        use proptest::prelude::*;
        let legs = proptest::collection::vec(proptest::option::of(any_alg()), 5).prop_map(|l| {
            Algorithm::Hier(HierLegs {
                intra_reduce_scatter: l[0],
                inter_all_reduce: l[1],
                inter_reduce_scatter: l[2],
                inter_all_gather: l[3],
                intra_all_gather: l[4],
            })
        });
        prop_oneof![any_alg().prop_map(|a| Algorithm::flat(a).unwrap_or(Algorithm::Auto)), legs,]
    }

    proptest::proptest! {
        /// Any spec is either accepted or refused with at least one problem;
        /// nothing panics, and an accepted spec keeps the invariants.
        #[test]
        fn never_panics(
            op in proptest::sample::select(OpType::ALL.to_vec()),
            dtype in proptest::sample::select(DType::ALL.to_vec()),
            reduce in proptest::option::of(proptest::sample::select(REDUCE_OPS.to_vec())),
            count in proptest::prop_oneof![0u64..70, proptest::num::u64::ANY],
            rank_n in 0u32..40,
            local_rank_n in 0u32..10,
            pod_n in 0u32..4,
            channels in 0u32..40,
            algorithm in any_algorithm(),
            root in proptest::option::of(0u32..40),
            peer in proptest::option::of(0u32..40),
            peers in proptest::option::of(proptest::collection::vec((0u32..40, 0u32..40), 0..6)),
            counts in proptest::option::of(proptest::collection::vec(proptest::collection::vec(0u64..8, 0..5), 0..5)),
            groups in proptest::option::of(proptest::collection::vec(proptest::collection::vec(0u32..40, 0..9), 0..6)),
            device in proptest::bool::ANY,
            send_credits in proptest::option::of(0u32..600),
        ) {
            let c = Collective {
                op, dtype, reduce, count, arch: Arch::Cayman,
                topology: Topology { rank_n, local_rank_n, pod_n },
                channels, algorithm, root, peer, peers, counts, groups,
                barrier: device.then_some(Barrier::Device), send_credits,
            };
            match validate(Program::from(c)) {
                Ok(p) => {
                    let v = &p.collectives()[0];
                    let n = v.groups().size();
                    proptest::prop_assert!(n >= 1);
                    proptest::prop_assert_eq!(v.groups().group_n() * n, p.topology().rank_n);
                    proptest::prop_assert!(v.root().is_none_or(|r| r < n));
                    proptest::prop_assert!(v.peers().iter().all(|&(s, t)| s < n && t < n && s != t));
                    proptest::prop_assert_eq!(v.reduce().is_some(), v.op().is_reducing());
                }
                Err(e) => proptest::prop_assert!(!e.0.is_empty()),
            }
        }
    }
}
