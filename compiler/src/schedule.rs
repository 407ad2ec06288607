//! The schedule: the rank-invariant plan of a program, from which any
//! rank's transfers at any step are computed on demand.
//!
//! A collective runs independently in each replica group. Inside a group,
//! members are numbered `0..n` (the group-local index) and the buffer of
//! every member is cut into **blocks** (positions `0..block_n`, see
//! [`Layout`]); each block is striped over the channels and pipelined in two
//! halves. The algorithm is a list of **phases**; a phase is one step group
//! (one cc_op record per TOP_SP) running one pattern (a ring reduce-scatter,
//! a direct all-gather, one round of recursive halving, ...) over a
//! **scope**: the subset of the group that shares all but some digits of the
//! mixed-radix group index `i = local + Lg * (node + NPg * pod)`.
//!
//! Nothing here is per-rank or per-world: a [`Schedule`] is O(phases), and
//! [`Schedule::transfers`] gives one member's transfers at one step in time
//! proportional to their number. Compiling one rank never builds a
//! world-sized structure.

use crate::valid::{Groups, Shape};
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, HalfChunk, MeshType, Neigh, OpType, ReductionType};
use ccc_ir::id::Rank;
use ccc_ir::spec::{Barrier, DType, Leg, ReduceOp};
use serde::Serialize;

/// Bytes one DMA data descriptor moves at most \[project\].
pub const MAX_DESC_BYTES: u64 = 65536;

/// The plan of a whole program.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// The architecture.
    pub arch: Arch,
    /// The machine shape.
    pub shape: Shape,
    /// The barrier kind.
    pub barrier: Barrier,
    /// Initial send credits per channel.
    pub send_credits: u16,
    /// The collectives, in program order.
    pub collectives: Vec<CollectivePlan>,
}

/// The plan of one collective.
#[derive(Clone, Debug)]
pub struct CollectivePlan {
    /// Position in the program.
    pub index: u32,
    /// The op as written.
    pub op: OpType,
    /// The op as lowered (implicit permutes lower as their explicit form).
    pub kind: OpKind,
    /// Element type.
    pub dtype: DType,
    /// Reduce operator.
    pub reduce: Option<ReduceOp>,
    /// Elements per rank's input buffer.
    pub count: u64,
    /// Ring channels.
    pub channels: u8,
    /// The replica groups.
    pub groups: Groups,
    /// The mixed-radix shape shared by every group.
    pub radices: Radices,
    /// Root (group-local) of a rooted op.
    pub root: Option<u32>,
    /// Peer pairs (group-local) of a peer-map op, with a per-member index.
    pub peers: PeerMap,
    /// AllToAllV sizes.
    pub counts: Option<Vec<Vec<u64>>>,
    /// The phases, in order; phases with no peer are already dropped.
    pub phases: Vec<Phase>,
    /// Total steps (the sum of the phases' step counts).
    pub step_n: u32,
    /// The algorithm per leg, as resolved (for manifests and signatures).
    pub legs: Vec<(Option<Leg>, AlgType)>,
    /// The cost model's parameters for this collective.
    pub model: crate::cost::ModelParams,
    /// What `algorithm: Auto` chose, and from what (`None`: written).
    pub auto: Option<crate::cost::AutoChoice>,
}

/// What the symbolic model of an op looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum OpKind {
    /// Every member ends with every block reduced over all members.
    AllReduce,
    /// Every member ends with every member's block.
    AllGather,
    /// Member i ends with block i reduced over all members.
    ReduceScatter,
    /// Every member ends with the root's blocks.
    Broadcast,
    /// The root ends with every block reduced over all members.
    Reduce,
    /// Member i's output block j is member j's input block i.
    AllToAll,
    /// Each target ends with its source's buffer (or their reduction).
    Permute {
        /// The target reduces instead of overwriting.
        reduce: bool,
    },
}

impl OpKind {
    /// The symbolic model of an op.
    pub fn of(op: OpType) -> OpKind {
        match op {
            OpType::AllReduce => OpKind::AllReduce,
            OpType::AllGather => OpKind::AllGather,
            OpType::ReduceScatter => OpKind::ReduceScatter,
            OpType::Broadcast => OpKind::Broadcast,
            OpType::Reduce => OpKind::Reduce,
            OpType::AllToAll | OpType::AllToAllV => OpKind::AllToAll,
            OpType::Send | OpType::Recv | OpType::Permute | OpType::PermuteImplicit => {
                OpKind::Permute { reduce: false }
            }
            OpType::PermuteReduce | OpType::PermuteReduceImplicit => OpKind::Permute { reduce: true },
        }
    }
}

/// The mixed-radix decomposition of a group index:
/// `i = local + per_node * (node + nodes_per_pod * pod)`.
///
/// For a group that is not listed node by node, `[n, 1, 1]`: only the whole
/// group is ever a scope then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Radices(pub [u32; DIGITS]);

/// Digits of a group index: local (digit 0), node within pod, pod.
pub const DIGITS: usize = 3;
/// Digit of the member's node inside its pod.
pub const DIGIT_NODE: u8 = 1;
/// Digit of the member's pod.
pub const DIGIT_POD: u8 = 2;

impl Radices {
    /// The product of the radices of digits `lo..hi`.
    pub fn span(&self, lo: u8, hi: u8) -> u32 {
        self.0[usize::from(lo)..usize::from(hi)].iter().product()
    }
}

/// A subset of a group: the members that share every digit outside
/// `lo..hi` with a given member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Scope {
    /// First varying digit.
    pub lo: u8,
    /// One past the last varying digit.
    pub hi: u8,
}

impl Scope {
    /// The whole group.
    pub const WHOLE: Scope = Scope { lo: 0, hi: DIGITS as u8 };

    /// The part of this scope inside one node.
    pub fn node_part(self) -> Scope {
        Scope { lo: self.lo, hi: self.hi.min(DIGIT_NODE).max(self.lo) }
    }
    /// The part of this scope across nodes.
    pub fn cross_part(self) -> Scope {
        Scope { lo: self.lo.max(DIGIT_NODE).min(self.hi), hi: self.hi }
    }
    /// The part of this scope inside one pod.
    pub fn pod_part(self) -> Scope {
        Scope { lo: self.lo, hi: self.hi.min(DIGIT_POD).max(self.lo) }
    }
    /// The part of this scope across pods.
    pub fn cross_pod_part(self) -> Scope {
        Scope { lo: self.lo.max(DIGIT_POD).min(self.hi), hi: self.hi }
    }

    /// How many members the scope has.
    pub fn size(self, radices: &Radices) -> u32 {
        radices.span(self.lo, self.hi)
    }

    /// The scope around group member `index`: its members are
    /// `base + q * stride` for `q` in `0..k`, and `index` is at `q = pos`.
    pub fn around(self, radices: &Radices, index: u32) -> ScopeInstance {
        let stride = radices.span(0, self.lo);
        let k = radices.span(self.lo, self.hi);
        let pos = (index / stride) % k;
        ScopeInstance { base: index - pos * stride, stride, k, pos }
    }
}

/// A scope placed around one member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopeInstance {
    /// Group index of the scope's first member.
    pub base: u32,
    /// Distance between consecutive members' group indices.
    pub stride: u32,
    /// Members in the scope.
    pub k: u32,
    /// The member's position in the scope.
    pub pos: u32,
}

impl ScopeInstance {
    /// Group index of the member at position `q`.
    pub fn member(&self, q: u32) -> u32 {
        self.base + (q % self.k) * self.stride
    }
}

/// A strided set of block positions: `start + j * stride` for `j` in
/// `0..count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct BlockSet {
    /// The first position.
    pub start: u32,
    /// Distance between positions.
    pub stride: u32,
    /// How many positions.
    pub count: u32,
}

impl BlockSet {
    /// The positions `0..n`.
    pub const fn all(n: u32) -> BlockSet {
        BlockSet { start: 0, stride: 1, count: n }
    }

    /// One position.
    pub const fn one(b: u32) -> BlockSet {
        BlockSet { start: b, stride: 1, count: 1 }
    }

    /// Whether both name the same positions in the same order (the stride
    /// of a set of one position, or none, names nothing).
    pub fn same_positions(&self, other: BlockSet) -> bool {
        self.count == other.count
            && (self.count == 0 || (self.start == other.start && (self.count == 1 || self.stride == other.stride)))
    }

    /// The `j`-th position (wrapping past `u32::MAX`, which only a set
    /// that [`BlockSet::last`] puts out of range can do).
    pub fn get(&self, j: u32) -> u32 {
        self.start.wrapping_add(j.wrapping_mul(self.stride))
    }

    /// The last position, computed without wrapping (`None` when empty):
    /// a set whose last position is below a bound has every position below
    /// it, in ascending order.
    pub fn last(&self) -> Option<u64> {
        let steps = u64::from(self.count.checked_sub(1)?);
        Some(u64::from(self.start) + steps * u64::from(self.stride))
    }

    /// Whether every position is below `bound`.
    pub fn below(&self, bound: u32) -> bool {
        self.last().is_none_or(|last| last < u64::from(bound))
    }

    /// Every position, in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.count).map(|j| self.get(j))
    }

    /// Piece `q` of `k` interleaved pieces: positions `j` with `j % k == q`.
    /// The caller guarantees `count % k == 0`.
    pub fn piece(&self, k: u32, q: u32) -> BlockSet {
        BlockSet { start: self.get(q % k), stride: self.stride * k, count: self.count / k }
    }

    /// Positions `j` in `a..b` (a contiguous run of single-block pieces).
    pub fn range(&self, a: u32, b: u32) -> BlockSet {
        BlockSet { start: self.get(a), stride: self.stride, count: b.saturating_sub(a) }
    }
}

/// Which halves of each block a transfer moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Halves {
    /// Both, H0 then H1.
    Both,
    /// One half only.
    Only(HalfChunk),
}

impl Halves {
    /// The halves, in order.
    pub fn iter(self) -> impl Iterator<Item = HalfChunk> {
        let (a, b) = match self {
            Halves::Both => (Some(HalfChunk::H0), Some(HalfChunk::H1)),
            Halves::Only(h) => (Some(h), None),
        };
        a.into_iter().chain(b)
    }

    /// How many halves.
    pub fn count(self) -> u32 {
        match self {
            Halves::Both => 2,
            Halves::Only(_) => 1,
        }
    }
}

/// One movement of data between two members of a group at one step, on
/// every channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Transfer {
    /// Sending member (group-local index).
    pub from: u32,
    /// Receiving member (group-local index).
    pub to: u32,
    /// Positions read from the sender's buffer.
    pub src: BlockSet,
    /// Positions written in the receiver's buffer (as many as `src`).
    pub dst: BlockSet,
    /// Which halves move.
    pub halves: Halves,
    /// How the receiver folds the data in; `None` overwrites.
    pub fold: Option<ReductionType>,
    /// The receiver, as the sender sees it.
    pub neigh: Neigh,
}

/// The pattern a phase runs. See `docs/algorithms.md` for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PhaseKind {
    /// Ring reduce-scatter, `k - 1` steps; `bidir`: H0 clockwise, H1 counter-clockwise.
    RingReduceScatter {
        /// Kangaring's two directions.
        bidir: bool,
    },
    /// Ring all-gather, `k - 1` steps.
    RingAllGather {
        /// Kangaring's two directions.
        bidir: bool,
    },
    /// Single-cycle ring all-reduce: reduce-scatter and all-gather in one
    /// cycle of `2(k - 1)` steps, folding 2R2W.
    RingAllReduceFused,
    /// Pipelined ring broadcast from the scope position `root`, `2k - 2` steps.
    RingBroadcast {
        /// Root position in the scope.
        root: u32,
    },
    /// Pipelined ring reduce to the scope position `root`, `2k - 2` steps.
    RingReduce {
        /// Root position in the scope.
        root: u32,
    },
    /// Shifted pairwise exchange: at step `t` every member sends to the
    /// member `t + 1` ahead; `max(k - 1, 1)` steps.
    RingAllToAll,
    /// Direct reduce-scatter: one step, every member sends piece q to q.
    DirectReduceScatter,
    /// Direct all-gather: one step.
    DirectAllGather,
    /// Direct all-reduce: one step, every member sends everything to all.
    DirectAllReduce,
    /// Direct broadcast from the root: one step.
    DirectBroadcast {
        /// Root position in the scope.
        root: u32,
    },
    /// Direct reduce to the root: one step.
    DirectReduce {
        /// Root position in the scope.
        root: u32,
    },
    /// Direct all-to-all: one step.
    DirectAllToAll,
    /// The op's peer pairs: one step.
    PointToPoint,
    /// RDH, fewer-than-power-of-two prologue: even members of the first
    /// `2r` hand their data to the odd one.
    RdhPrologue {
        /// What is handed over.
        mode: RdhMode,
    },
    /// RDH reduce-scatter round: exchange halves with the partner at
    /// distance `p' >> (round + 1)`.
    RdhHalving {
        /// Round, from 0.
        round: u8,
        /// All-reduce: participants hold balanced ranges of the blocks
        /// instead of the blocks of the members they speak for.
        balanced: bool,
    },
    /// RDH all-gather round: exchange with the partner at distance `1 << round`.
    RdhDoubling {
        /// Round, from 0.
        round: u8,
        /// As in [`PhaseKind::RdhHalving`].
        balanced: bool,
    },
    /// RDH epilogue: the odd member of each of the first `r` pairs hands
    /// the result back to the even one.
    RdhEpilogue {
        /// What is handed back.
        mode: RdhMode,
    },
    /// Binomial-tree broadcast round: members `q' < 2^round` send to `q' + 2^round`.
    BinomialBroadcast {
        /// Root position in the scope.
        root: u32,
        /// Round, from 0.
        round: u8,
    },
    /// Binomial-tree reduce round: members with `q' mod 2^(round+1) == 2^round`
    /// send to `q' - 2^round`.
    BinomialReduce {
        /// Root position in the scope.
        root: u32,
        /// Round, from 0.
        round: u8,
    },
}

/// What an RDH prologue or epilogue moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RdhMode {
    /// Everything, reduced (prologue of AR/RS).
    ReduceAll,
    /// The even member's own piece, copied (prologue of AG).
    GatherPiece,
    /// Everything, copied (epilogue of AR/AG).
    CopyAll,
    /// The even member's piece, copied (epilogue of RS).
    ScatterPiece,
}

/// One phase: one step group, one record per TOP_SP.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Phase {
    /// The pattern.
    pub kind: PhaseKind,
    /// The algorithm the phase belongs to (it sets the record's fields).
    pub alg: AlgType,
    /// The hierarchical leg, if any.
    pub leg: Option<Leg>,
    /// The members it runs over.
    pub scope: Scope,
    /// Reduce-scatter scopes that narrowed the data before this phase: the
    /// phase works on the member's piece of each, in order.
    pub narrow: Vec<Scope>,
    /// Steps in the phase.
    pub step_n: u32,
    /// The collective's step at which the phase starts.
    pub first_step: u32,
}

/// A phase placed around one member.
#[derive(Clone, Copy, Debug)]
pub struct PhaseInstance {
    /// The scope around the member.
    pub scope: ScopeInstance,
    /// The blocks the phase works on.
    pub universe: BlockSet,
    /// Blocks per piece: the universe's blocks over the scope's members.
    pub per_piece: u32,
}

/// A `(source, target)` pair of group-local indices.
pub type Pair = (u32, u32);

/// The peer pairs of a peer-map op, indexed by member.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerMap {
    /// `(source, target)` pairs, group-local, in spec order.
    pub pairs: Vec<(u32, u32)>,
    /// For each member: the pair it sends in and the pair it receives in.
    by_member: Vec<(Option<u32>, Option<u32>)>,
}

impl PeerMap {
    /// Indexes the pairs of a group of `n` members.
    pub fn new(pairs: Vec<(u32, u32)>, n: u32) -> PeerMap {
        if pairs.is_empty() {
            return PeerMap::default();
        }
        let mut by_member = vec![(None, None); n as usize];
        for (i, &(s, t)) in pairs.iter().enumerate() {
            if let Some(m) = by_member.get_mut(s as usize) {
                m.0 = Some(i as u32);
            }
            if let Some(m) = by_member.get_mut(t as usize) {
                m.1 = Some(i as u32);
            }
        }
        PeerMap { pairs, by_member }
    }

    /// The pair member `m` sends in, and the one it receives in.
    pub fn of(&self, m: u32) -> (Option<Pair>, Option<Pair>) {
        let (s, r) = self.by_member.get(m as usize).copied().unwrap_or((None, None));
        let pair = |i: Option<u32>| i.and_then(|i| self.pairs.get(i as usize).copied());
        (pair(s), pair(r))
    }
}

/// How many element each (member, channel, block, half) holds.
#[derive(Clone, Copy, Debug)]
pub struct Layout<'a> {
    plan: &'a CollectivePlan,
}

/// The size of part `index` of `parts` near-equal parts of `total`: the
/// first `total % parts` parts get one more.
pub const fn split(total: u64, parts: u64, index: u64) -> u64 {
    if parts == 0 {
        return 0;
    }
    total / parts + if index < total % parts { 1 } else { 0 }
}

impl<'a> Layout<'a> {
    /// Block positions per member buffer.
    pub fn block_n(&self) -> u32 {
        let n = self.plan.groups.size();
        match self.plan.kind {
            OpKind::AllToAll => 2 * n,
            OpKind::Permute { .. } => 1,
            _ => n,
        }
    }

    /// Elements of block `b` of `member`'s buffer, all channels and halves.
    pub fn block_elems(&self, member: u32, b: u32) -> u64 {
        let p = self.plan;
        let n = u64::from(p.groups.size());
        match p.kind {
            OpKind::AllReduce | OpKind::ReduceScatter | OpKind::Broadcast | OpKind::Reduce => {
                split(p.count, n, u64::from(b))
            }
            OpKind::AllGather | OpKind::Permute { .. } => p.count,
            OpKind::AllToAll => match &p.counts {
                None => p.count / n.max(1),
                Some(counts) => {
                    let n32 = p.groups.size();
                    let (i, j) = if b < n32 { (member, b) } else { (b - n32, member) };
                    counts.get(i as usize).and_then(|row| row.get(j as usize)).copied().unwrap_or(0)
                }
            },
        }
    }

    /// Elements of one half of block `b` on `channel`.
    pub fn elems(&self, member: u32, channel: u8, b: u32, half: HalfChunk) -> u64 {
        self.half_of(self.block_elems(member, b), channel, half)
    }

    /// Elements of one half, on `channel`, of a block of `elems` elements.
    fn half_of(&self, elems: u64, channel: u8, half: HalfChunk) -> u64 {
        let per_channel = split(elems, u64::from(self.plan.channels), u64::from(channel));
        split(per_channel, u64::from(HalfChunk::SPLIT_N), u64::from(half.raw()))
    }

    /// Descriptors for one half, on `channel`, of a block of `elems` elements.
    fn descriptors_of_elems(&self, elems: u64, channel: u8, half: HalfChunk) -> u64 {
        self.half_of(elems, channel, half).saturating_mul(self.plan.dtype.size()).div_ceil(MAX_DESC_BYTES) + 1
    }

    /// `(small, big_below)` when every block of every member holds `small`
    /// elements, or `small + 1` below position `big_below`; `None` when sizes
    /// depend on the member (AllToAllV).
    fn uniform(&self) -> Option<(u64, u32)> {
        let p = self.plan;
        let n = u64::from(p.groups.size()).max(1);
        match p.kind {
            OpKind::AllReduce | OpKind::ReduceScatter | OpKind::Broadcast | OpKind::Reduce => {
                Some((p.count / n, u32::try_from(p.count % n).unwrap_or(u32::MAX)))
            }
            OpKind::AllGather | OpKind::Permute { .. } => Some((p.count, 0)),
            OpKind::AllToAll if p.counts.is_none() => Some((p.count / n, 0)),
            OpKind::AllToAll => None,
        }
    }

    /// Bytes of one half of block `b` on `channel`.
    pub fn bytes(&self, member: u32, channel: u8, b: u32, half: HalfChunk) -> u64 {
        self.elems(member, channel, b, half).saturating_mul(self.plan.dtype.size())
    }

    /// DMA descriptors for one half-transfer of block `b` on `channel`: the
    /// data descriptors plus the trailing semaphore increment.
    pub fn descriptors(&self, member: u32, channel: u8, b: u32, half: HalfChunk) -> u64 {
        self.descriptors_of_elems(self.block_elems(member, b), channel, half)
    }
}

/// DMA descriptor counts of one collective on one set of channels,
/// tabulated once so that counting a transfer costs O(1) instead of a walk
/// over its blocks, channels and halves.
#[derive(Clone, Debug)]
pub struct DescTable<'a> {
    layout: Layout<'a>,
    channels: Vec<u8>,
    uniform: Option<Uniform>,
}

/// Blocks hold `small` elements, or one more below position `big_below`.
#[derive(Clone, Copy, Debug)]
struct Uniform {
    big_below: u32,
    /// Descriptors per block: `[small, big]` x `[Both, H0, H1]`.
    cost: [[u64; 3]; 2],
}

fn halves_index(h: Halves) -> usize {
    match h {
        Halves::Both => 0,
        Halves::Only(HalfChunk::H0) => 1,
        Halves::Only(HalfChunk::H1) => 2,
    }
}

impl<'a> DescTable<'a> {
    /// The table of `plan` on `channels`.
    pub fn new(plan: &'a CollectivePlan, channels: &[u8]) -> Self {
        let layout = plan.layout();
        let uniform = layout.uniform().map(|(small, big_below)| {
            let mut cost = [[0u64; 3]; 2];
            // Row 1 is the block one element bigger; it exists only below
            // `big_below` (and `small` may be u64::MAX when it does not).
            let rows = if big_below == 0 { 1 } else { 2 };
            for (size, row) in cost.iter_mut().enumerate().take(rows) {
                let elems = small.saturating_add(size as u64);
                for (i, halves) in
                    [Halves::Both, Halves::Only(HalfChunk::H0), Halves::Only(HalfChunk::H1)].into_iter().enumerate()
                {
                    row[i] = channels
                        .iter()
                        .flat_map(|&c| halves.iter().map(move |h| layout.descriptors_of_elems(elems, c, h)))
                        .sum();
                }
            }
            Uniform { big_below, cost }
        });
        DescTable { layout, channels: channels.to_vec(), uniform }
    }

    /// The channels counted.
    pub fn channels(&self) -> &[u8] {
        &self.channels
    }

    /// When every member's blocks hold the same elements but for one more
    /// below a position: that position (0 when none is bigger).
    pub fn big_below(&self) -> Option<u32> {
        self.uniform.map(|u| u.big_below)
    }

    /// Whether every block of every member costs the same descriptors, so
    /// that a count depends only on how many blocks move, not which.
    pub fn position_free(&self) -> bool {
        self.uniform.is_some_and(|u| u.big_below == 0 || u.big_below >= self.layout.block_n())
    }

    /// Descriptors to move `halves` of `blocks` of `member`'s buffer on the
    /// table's channels: data descriptors plus one semaphore increment per
    /// half-transfer.
    pub fn count(&self, member: u32, blocks: BlockSet, halves: Halves) -> u64 {
        match self.uniform {
            Some(u) => {
                let big = if blocks.count == 0 || blocks.start >= u.big_below {
                    0
                } else if blocks.count == 1 || blocks.stride == 0 {
                    blocks.count
                } else {
                    blocks.count.min((u.big_below - blocks.start).div_ceil(blocks.stride))
                };
                let h = halves_index(halves);
                u64::from(big) * u.cost[1][h] + u64::from(blocks.count - big) * u.cost[0][h]
            }
            None => {
                let mut d = 0u64;
                for &c in &self.channels {
                    for b in blocks.iter() {
                        for h in halves.iter() {
                            d = d.saturating_add(self.layout.descriptors(member, c, b, h));
                        }
                    }
                }
                d
            }
        }
    }

    /// `(m2s, s2m)` member `me` posts for `transfers`.
    pub fn step(&self, me: u32, transfers: &[Transfer]) -> (u64, u64) {
        let (mut m2s, mut s2m) = (0u64, 0u64);
        for t in transfers {
            if t.from == me {
                m2s = m2s.saturating_add(self.count(me, t.src, t.halves));
            }
            if t.to == me {
                s2m = s2m.saturating_add(self.count(me, t.dst, t.halves));
            }
        }
        (m2s, s2m)
    }
}

impl CollectivePlan {
    /// The buffer layout.
    pub fn layout(&self) -> Layout<'_> {
        Layout { plan: self }
    }

    /// Phase `phase` placed around group member `index`.
    pub fn instance(&self, phase: &Phase, index: u32) -> PhaseInstance {
        let mut universe = BlockSet::all(self.groups.size());
        for narrow in &phase.narrow {
            let s = narrow.around(&self.radices, index);
            universe = universe.piece(s.k, s.pos);
        }
        let scope = phase.scope.around(&self.radices, index);
        PhaseInstance { scope, universe, per_piece: universe.count / scope.k.max(1) }
    }

    /// The phase running at collective step `step`, and the step within it.
    pub fn phase_at(&self, step: u32) -> Option<(usize, u32)> {
        let i = self.phases.partition_point(|p| p.first_step + p.step_n <= step);
        let phase = self.phases.get(i)?;
        (step >= phase.first_step).then(|| (i, step - phase.first_step))
    }

    /// The global rank of group member `index` of `group`.
    pub fn rank(&self, group: u32, index: u32) -> Rank {
        self.groups.member(group, index)
    }
}

/// Which relation two global ranks have: the neighbour kind of a non-ring
/// transfer (`docs/algorithms.md`).
pub fn relation(shape: &Shape, a: Rank, b: Rank) -> Neigh {
    if a == b {
        Neigh::Local
    } else if shape.node(a.0) == shape.node(b.0) {
        Neigh::PeerLocal
    } else if shape.pod(a.0) == shape.pod(b.0) {
        Neigh::PeerRmtv
    } else {
        Neigh::PeerRmtv2
    }
}

/// The mesh sub-type of a set of global ranks on `arch`.
pub fn mesh_type(arch: Arch, shape: &Shape, ranks: impl IntoIterator<Item = Rank>) -> MeshType {
    let mut ranks = ranks.into_iter();
    let Some(first) = ranks.next() else {
        return within_node_mesh(arch);
    };
    let (mut nodes, mut pods) = (false, false);
    for r in ranks {
        nodes |= shape.node(r.0) != shape.node(first.0);
        pods |= shape.pod(r.0) != shape.pod(first.0);
    }
    if pods {
        MeshType::MeshSwitch
    } else if nodes {
        MeshType::GroupedMesh
    } else {
        within_node_mesh(arch)
    }
}

/// Inside one node: MESH_TRN2 on Cayman (NeuronCore-v3 is Trainium2's
/// core), FULL_MESH on the others.
fn within_node_mesh(arch: Arch) -> MeshType {
    match arch {
        Arch::Cayman => MeshType::MeshTrn2,
        Arch::Sunda | Arch::Mariana | Arch::MarianaPlus => MeshType::FullMesh,
    }
}

impl Schedule {
    /// Appends to `out` every transfer of step `t` of `phase`, for the member
    /// `inst` was placed around (see [`CollectivePlan::instance`]): the form
    /// for callers that walk a phase step by step.
    pub fn phase_transfers(
        &self,
        collective: &CollectivePlan,
        group: u32,
        phase: &Phase,
        inst: PhaseInstance,
        t: u32,
        out: &mut Vec<Transfer>,
    ) {
        crate::algorithms::transfers(collective, &self.shape, group, phase, inst, t, out);
    }

    /// Appends to `out` every transfer member `index` of `group` sends or
    /// receives at `step` of collective `collective`.
    pub fn transfers(&self, collective: &CollectivePlan, group: u32, index: u32, step: u32, out: &mut Vec<Transfer>) {
        let Some((p, t)) = collective.phase_at(step) else { return };
        let Some(phase) = collective.phases.get(p) else { return };
        let inst = collective.instance(phase, index);
        crate::algorithms::transfers(collective, &self.shape, group, phase, inst, t, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_decompose_the_group_index() {
        // 2 pods x 3 nodes x 4 locals = 24 members.
        let r = Radices([4, 3, 2]);
        let node = Scope::WHOLE.node_part();
        let cross = Scope::WHOLE.cross_part();
        assert_eq!((node.size(&r), cross.size(&r)), (4, 6));
        // Member 17 = local 1, node 1, pod 1.
        let s = node.around(&r, 17);
        assert_eq!((s.base, s.stride, s.k, s.pos), (16, 1, 4, 1));
        let c = cross.around(&r, 17);
        assert_eq!((c.base, c.stride, c.k, c.pos), (1, 4, 6, 4));
        assert_eq!((0..6).map(|q| c.member(q)).collect::<Vec<_>>(), vec![1, 5, 9, 13, 17, 21]);
        // Inside the cross scope: nodes of one pod, then pods.
        let in_pod = cross.pod_part();
        let pods = cross.cross_pod_part();
        assert_eq!((in_pod.size(&r), pods.size(&r)), (3, 2));
        assert_eq!(cross.node_part().size(&r), 1);
        let p = pods.around(&r, 17);
        assert_eq!((p.base, p.stride, p.k, p.pos), (5, 12, 2, 1));
    }

    #[test]
    fn pieces_interleave() {
        let all = BlockSet::all(12);
        let p = all.piece(4, 1);
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![1, 5, 9]);
        assert_eq!(p.piece(3, 2).iter().collect::<Vec<_>>(), vec![9]);
        assert_eq!(all.range(3, 6).iter().collect::<Vec<_>>(), vec![3, 4, 5]);
    }

    /// The tabulated count equals the walk over every block, channel and
    /// half it replaces, for every op's layout (uniform or not).
    #[test]
    fn descriptor_tables_count_as_the_block_walk_does() {
        use crate::testing::Case;
        use ccc_ir::enums::{AlgType, OpType};
        for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter, OpType::AllToAll, OpType::AllToAllV] {
            for (count, channels) in [(4096 + 7, 3u8), (10, 4), (1 << 20, 1), (3 * 65536 + 5, 2)] {
                let mut case = Case::flat(op, AlgType::Mesh, 6, 6);
                case.count = count;
                case.channels = channels;
                let schedule = crate::build::build(&case.valid()).unwrap();
                let plan = &schedule.collectives[0];
                let layout = plan.layout();
                let block_n = layout.block_n();
                for hosted in [vec![0u8], (0..channels).collect::<Vec<_>>()] {
                    let table = DescTable::new(plan, &hosted);
                    for member in 0..6 {
                        for (start, stride, n) in [(0, 1, block_n), (1, 2, block_n / 2), (block_n - 1, 1, 1), (2, 3, 1)]
                        {
                            let blocks = BlockSet { start, stride, count: n };
                            for halves in [Halves::Both, Halves::Only(HalfChunk::H0), Halves::Only(HalfChunk::H1)] {
                                let walk: u64 = hosted
                                    .iter()
                                    .flat_map(|&c| {
                                        blocks.iter().flat_map(move |b| halves.iter().map(move |h| (c, b, h)))
                                    })
                                    .map(|(c, b, h)| layout.descriptors(member, c, b, h))
                                    .sum();
                                assert_eq!(
                                    table.count(member, blocks, halves),
                                    walk,
                                    "{op:?} {count} {blocks:?} {halves:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn split_spreads_the_remainder_first() {
        let parts: Vec<u64> = (0..4).map(|i| split(10, 4, i)).collect();
        assert_eq!(parts, vec![3, 3, 2, 2]);
        assert_eq!(parts.iter().sum::<u64>(), 10);
        assert_eq!(split(5, 0, 0), 0);
    }
}
