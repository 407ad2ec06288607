//! Block sets and transfers: strided sets of block positions, the halves a transfer moves, one transfer between two members, and the peer map of a peer-map op.

use ccc_ir::enums::{HalfChunk, Neigh, ReductionType};
use serde::Serialize;

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

    /// How many of its positions are below `bound`, in O(1): the
    /// positions ascend, so those below are the first ones (a set of one
    /// position, or of stride 0, is all below or none).
    pub fn count_below(&self, bound: u32) -> u32 {
        if self.count == 0 || self.start >= bound {
            0
        } else if self.count == 1 || self.stride == 0 {
            self.count
        } else {
            self.count.min((bound - self.start).div_ceil(self.stride))
        }
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
