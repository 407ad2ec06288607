//! The problems validation reports: each a typed value that carries what
//! was wrong, and whose `Display` says so and what would be accepted.

use super::wording::*;
use super::*;
use crate::placement::DEVICE_BARRIER_MAX_RANK_N;
use ccc_ir::noun;

/// A contract gate that explains why a choice is refused (wire-contract §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// KANGARING is intra-node only.
    KangaringIntraOnly,
    /// SINGLE_CYCLE_RING is for all-reduce only.
    SingleCycleRingAllReduceOnly,
    /// A leg is one algorithm; it cannot itself be hierarchical.
    HierDoesNotNest,
    /// A choice of ccc's wider set, beyond the runtime's (seed 001 §2.7),
    /// given without the opt-in.
    WideLegChoice,
}

impl Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Gate::KangaringIntraOnly => "Kangaring runs inside a node only",
            Gate::SingleCycleRingAllReduceOnly => "SingleCycleRing is for all-reduce only",
            Gate::HierDoesNotNest => "a leg cannot itself be Hier",
            Gate::WideLegChoice => {
                "the runtime's selector never picks it there: a ccc extension, opted into with `choices: Wide` \
                 in the Hier legs"
            }
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

/// A group's shape as a message says it: `2 members per node, 1 node per
/// pod and 1 pod`.
fn group_shape(shape: &[u32; 3]) -> String {
    format!(
        "{} per node, {} per pod and {}",
        noun::count(shape[0], "member"),
        noun::count(shape[1], "node"),
        noun::count(shape[2], "pod")
    )
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
    /// Problems found past the first [`PROBLEMS_LISTED`](super::PROBLEMS_LISTED)
    /// of a spec, counted and not listed: the last entry of a
    /// [`ValidationErrors`](super::ValidationErrors) that has them, at
    /// field `...`. (A spec of a million bad entries made a million
    /// problems: 237 MB of text from 8 MB of RON.)
    #[error(
        "{n} more {}, not listed (validation lists the first {}); fixing those may show the others",
        ccc_ir::noun::noun(*n, "problem"),
        super::PROBLEMS_LISTED
    )]
    Unlisted {
        /// The problems found and not listed.
        n: u64,
    },
    /// The program's collectives take more slots of a TOP_SP's CTRL SPAD
    /// than it holds (`cost::auto::fit`).
    #[error(
        "the program's collectives take {needed} slots of the CTRL SPAD on TOP_SP 0, more than its {capacity} (each \
         collective's records start a fresh 64-byte slot, one record per phase, 7 a slot){fewest}{heaviest}; \
         accepted: at most {capacity} slots: {way}",
        needed = .0.needed,
        capacity = .0.capacity,
        fewest = match .0.fewest {
            Some(f) => format!(", and at least {f} with the fewest slots its `Auto` collectives can take"),
            None => String::new(),
        },
        heaviest = match .0.heaviest.is_empty() {
            true => ", each collective taking one".to_owned(),
            false => format!("; the most: {}", .0.heaviest.join(", ")),
        },
        way = if .0.by_count {
            format!(
                "split the program into programs that fit: at most {} collectives each (a collective takes one \
                 slot at the fewest), fewer where they take more",
                .0.capacity
            )
        } else {
            "split the program into programs that fit, or choose algorithms with fewer phases".to_owned()
        }
    )]
    CtrlSpadFull(crate::cost::auto::fit::Overflow),
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
        "barrier {found} differs from collective 0's {first} (absent means Host); accepted: {first} (all \
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
        "pod_n {pod_n} does not divide the {} (rank_n / local_rank_n), so the nodes cannot fill whole \
         pods; accepted: a divisor of {node_n} ({})",
        noun::count(node_n, "node"), abbreviated(&divisors(*node_n))
    )]
    PodNNotDivisor {
        /// Nodes.
        node_n: u32,
        /// Pods as written.
        pod_n: u32,
    },
    /// `count: 0`.
    #[error("{}", count_zero(*dtype, *split))]
    CountZero {
        /// The element type (its size bounds the count).
        dtype: DType,
        /// For an op that splits the count over the group (ReduceScatter,
        /// AllToAll), the op and the group size, when the groups are valid
        /// or their sizes agree on one that could be.
        split: Option<(OpType, u32)>,
    },
    /// The buffer size in bytes does not fit in 64 bits.
    #[error(
        "{count} elements of {dtype} ({} each) overflow a 64-bit byte count; accepted: at most {}",
        noun::count(dtype.size(), "byte"), most_elements(*dtype)
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
        multiples_near(*count, *n, most_elements(*dtype))
    )]
    CountNotMultiple {
        /// The op.
        op: OpType,
        /// As written.
        count: u64,
        /// The group size.
        n: u32,
        /// The element type: the multiples suggested stay within the
        /// counts its size allows ([`Problem::CountOverflow`]).
        dtype: DType,
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
    #[error("{root} is not a member of a group of {n} (root is an index inside the group){}", index_range(Some(*n)))]
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
    #[error(
        "counts has {}; accepted: {} (one per group member) of {}",
        noun::count(rows, "row"),
        noun::count(n, "row"),
        noun::count(n, "entry")
    )]
    CountsRows {
        /// Rows as written.
        rows: usize,
        /// The group size.
        n: u32,
    },
    /// A `counts` row of the wrong length.
    #[error("the row has {}; accepted: {n} (one per group member)", noun::count(len, "entry"))]
    CountsRowLength {
        /// Entries as written.
        len: usize,
        /// The group size.
        n: u32,
    },
    /// A `counts` row that does not sum to `count`.
    #[error(
        "the row sums to {} but count is {count}; accepted: entries that add up to count (all the member sends)",
        sum.map_or_else(|| "2^64 or more".to_owned(), |s| s.to_string())
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
        "the group has {} but groups[{expected_in}] has {expected}; accepted: groups all of the same size",
        noun::count(size, "rank")
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
        if ranks.len() == 1 { "1 rank is".to_owned() } else { format!("{} are", noun::count(ranks.len(), "rank")) },
        abbreviated(ranks),
        rank_n.saturating_sub(1)
    )]
    RanksInNoGroup {
        /// The ranks, ascending.
        ranks: Vec<u32>,
        /// Ranks.
        rank_n: u32,
    },
    /// `algorithm: Auto` with no legal choice to take.
    #[error(
        "`Auto` found no algorithm that serves {op} on this topology and these groups; accepted: a topology \
         or groups some algorithm fits (`ccc explain` lists what each needs)"
    )]
    AutoNoChoice {
        /// The op.
        op: OpType,
    },
    /// `algorithm: Auto` whose cheapest choice is predicted to take 2^64
    /// ns or more (`model:` values at their limits): the choices cannot be
    /// ordered.
    #[error(
        "`Auto` cannot order the algorithms for {op}: under this model even the cheapest is predicted to \
         take more than 2^64 ns (584 years); accepted: `model:` values under which some algorithm finishes \
         sooner (faster rates, smaller latencies), or a written algorithm"
    )]
    AutoOutOfRange {
        /// The op.
        op: OpType,
    },
    /// `algorithm: Auto` whose every legal choice exceeds a lowering limit
    /// that depends on the choice (mesh events per TOP_SP, less what the
    /// collectives before it take; increments per mesh event; descriptors
    /// per step), so none would lower.
    #[error(
        "`Auto` found no algorithm for {op} that lowers on {arch}: {}",
        none_lowers(*limit, *arch, *needed, *max, *spent, fewest, also)
    )]
    AutoNoneLowers {
        /// The op.
        op: OpType,
        /// The architecture.
        arch: Arch,
        /// The limit the named choice exceeds.
        limit: crate::lower::Limit,
        /// What the named choice needs of it (for mesh events, the fewest
        /// a legal choice needs).
        needed: u64,
        /// The most the limit allows.
        max: u64,
        /// For mesh events, what the program's collectives before this
        /// one take of `max` (0 for the other limits).
        spent: u32,
        /// The choice named, as the signature writes it.
        fewest: String,
        /// The other limits some choices exceed, in the order they are
        /// judged: empty when every choice exceeds `limit`.
        also: Vec<AlsoNeeds>,
    },
    /// A flat algorithm (or Hier) that does not serve the op.
    #[error(
        "{} does not serve {op}{}; accepted: {}, or Auto (the cost model chooses among them)",
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
         accepted: groups inside one node ({} per node), or an algorithm that spans nodes",
        leg_prefix(*leg), more_groups(*also), noun::count(local_rank_n, "rank")
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
        /// How many of `level` the topology has: with one, no group can
        /// span two, and the topology is what must change.
        units: u32,
    },
    /// Replica groups of different node/pod shapes under an algorithm that
    /// composes its phases from one shape.
    #[error(
        "{group} has {}, where {} of the {total} groups ({reference} first) have {}{}; {} composes its phases \
         from one group shape; accepted: groups that all list the same number of members on each node and of \
         nodes on each pod",
        group_shape(found), usual, group_shape(expected), super::wording::more_differ(total - usual - 1),
        alg_name(*alg)
    )]
    UnevenGroupShapes {
        /// The algorithm that needs one shape.
        alg: AlgType,
        /// The first group whose shape is not the usual one.
        group: GroupRef,
        /// Its (members per node, nodes per pod, pods).
        found: [u32; 3],
        /// The usual shape: the one most groups have (of equal counts, the
        /// first group's).
        expected: [u32; 3],
        /// The first group of the usual shape.
        reference: GroupRef,
        /// How many groups have the usual shape.
        usual: u32,
        /// How many groups there are (those of another shape than the
        /// usual one but `group`: `total - usual - 1`).
        total: u32,
    },
    /// A leg the op uses, not given.
    #[error(
        "Hier for {op} needs a choice for {leg}; accepted: {}, or Auto to let the cost model choose ({op} uses {})",
        list(algorithms::leg_choices_in(*leg, *choices)), list(legs)
    )]
    HierLegMissing {
        /// The op.
        op: OpType,
        /// The missing leg.
        leg: Leg,
        /// The choices the spec's `Hier` allows (`choices: Wide` or not).
        choices: ccc_ir::spec::LegChoices,
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
    #[error(
        "{} is not a legal choice for {leg}{}; accepted: {}, or Auto (the cost model chooses among them)",
        alg_name(*choice), gate_note(*gate), list(choices)
    )]
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

/// Another limit some of `Auto`'s choices exceed
/// ([`Problem::AutoNoneLowers`]), with the choice that needs the fewest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlsoNeeds {
    /// The limit.
    pub limit: crate::lower::Limit,
    /// What the named choice needs of it.
    pub needed: u64,
    /// The most the limit allows.
    pub max: u64,
    /// The choice named, as the signature writes it.
    pub fewest: String,
}

/// Why `Auto` has nothing left that lowers, for `limit`: what every legal
/// choice exceeds, what the named one needs, and what would be accepted;
/// when the choices exceed different limits (`also`), each limit with
/// what some choices need, and what would let those lower.
fn none_lowers(
    limit: crate::lower::Limit,
    arch: Arch,
    needed: u64,
    max: u64,
    spent: u32,
    fewest: &str,
    also: &[AlsoNeeds],
) -> String {
    use crate::lower::Limit;
    if !also.is_empty() {
        let first = AlsoNeeds { limit, needed, max, fewest: fewest.to_owned() };
        let all = || std::iter::once(&first).chain(also);
        let some = |a: &AlsoNeeds| match a.limit {
            Limit::MeshEventTarget => format!(
                "some count more increments in one mesh event than the {} its target holds ({} needs {})",
                a.max, a.fewest, a.needed
            ),
            Limit::TpIncrement => format!(
                "some post more descriptors in one step than the {} one tp_inc_steps increment holds (VAL_MASK; \
                 {} needs {})",
                a.max, a.fewest, a.needed
            ),
            _ => format!(
                "some need more mesh events per TOP_SP than {} (the fewest, {}, needs {})",
                super::wording::mesh_room(u32::try_from(a.max).unwrap_or(u32::MAX), spent, arch),
                a.fewest,
                a.needed
            ),
        };
        let lets = |a: &AlsoNeeds| match a.limit {
            Limit::MeshEventTarget => "the increments per mesh event need fewer channels".to_owned(),
            Limit::TpIncrement => format!(
                "the descriptors need a smaller count, more channels while fewer than the {} TOP_SPs of {arch}, or \
                 the collective split into smaller ones",
                arch.params().topsp_n
            ),
            _ => format!(
                "the mesh events need fewer ranks per mesh (fewer nodes, smaller groups){}",
                if spent > 0 { " or fewer mesh events in the collectives before it" } else { "" }
            ),
        };
        let said: Vec<String> = all().map(some).collect();
        let ways: Vec<String> = all().map(lets).collect();
        return format!(
            "each legal choice exceeds a limit, not all the same one (each is named by the first it exceeds, and \
             may exceed others): {}; accepted: a choice within every limit: {}",
            said.join("; "),
            ways.join("; ")
        );
    }
    match limit {
        Limit::MeshEventTarget => format!(
            "every legal choice has a mesh event that counts more increments than the {max} its target \
             holds (one per half-chunk a peer sends in a MESH step, per channel of the TOP_SP; {fewest} needs \
             {needed}); accepted: fewer channels, or a leg written Ring or InterRdh in place of a mesh"
        ),
        Limit::TpIncrement => format!(
            "every legal choice posts more descriptors in one step than the {max} one tp_inc_steps increment \
             holds (VAL_MASK: one per 64 KiB a rank moves in one step on one TOP_SP; {fewest} needs {needed}); \
             accepted: a smaller count, more channels while fewer than the {} TOP_SPs of {arch}, or the \
             collective split into smaller ones",
            arch.params().topsp_n
        ),
        _ => format!(
            "every legal choice needs more mesh events per TOP_SP than {} (one per peer that sends to a rank in \
             each MESH step; the fewest, {fewest}, needs {needed}); accepted: a leg written Ring or InterRdh in \
             place of Mesh, or fewer ranks per mesh (fewer nodes, smaller groups){}",
            super::wording::mesh_room(u32::try_from(max).unwrap_or(u32::MAX), spent, arch),
            if spent > 0 { ", or fewer mesh events in the collectives before it" } else { "" }
        ),
    }
}
