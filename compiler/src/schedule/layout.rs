//! The buffer layout and the DMA descriptor counts it implies: elements per (member, channel, block, half), descriptors of at most [`MAX_DESC_BYTES`], tabulated per collective.

use super::{BlockSet, CollectivePlan, Halves, OpKind, Transfer};
use ccc_ir::enums::HalfChunk;

/// Bytes one DMA data descriptor moves at most \[project\].
pub const MAX_DESC_BYTES: u64 = 65536;

/// How many element each (member, channel, block, half) holds.
#[derive(Clone, Copy, Debug)]
pub struct Layout<'a> {
    pub(super) plan: &'a CollectivePlan,
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
    /// Bytes per block on the table's channels, `[small, big]` x `[Both,
    /// H0, H1]`, when `uniform` is (what [`DescTable::bytes`] reads).
    bytes: Option<[[u64; 3]; 2]>,
}

/// Every block of every member alike ([`DescTable::every_block`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EveryBlock {
    /// Elements of any block of any member.
    pub elems: u64,
    /// Descriptors per block, per halves: `[Both, H0, H1]`.
    desc: [u64; 3],
}

impl EveryBlock {
    /// [`DescTable::count`] of `halves` of `blocks`: the same product of
    /// the block count and one block's descriptors (saturating: a block
    /// may need up to 2^48 of them).
    pub fn count(&self, blocks: BlockSet, halves: Halves) -> u64 {
        u64::from(blocks.count).saturating_mul(self.desc[halves_index(halves)])
    }
}

/// Blocks hold `small` elements, or one more below position `big_below`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Uniform {
    big_below: u32,
    /// Descriptors per block: `[small, big]` x `[Both, H0, H1]`.
    cost: [[u64; 3]; 2],
}

impl Uniform {
    /// How many of `blocks` sit below `big_below` (hold one more element).
    fn big_blocks(self, blocks: BlockSet) -> u32 {
        blocks.count_below(self.big_below)
    }
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
                // One half on every channel; both halves cost the two
                // summed (the very terms `Halves::Both` walks), so each
                // half is counted once, not twice.
                let half = |h| channels.iter().map(|&c| layout.descriptors_of_elems(elems, c, h)).sum::<u64>();
                let (h0, h1) = (half(HalfChunk::H0), half(HalfChunk::H1));
                // In `halves_index`'s order: Both, H0, H1.
                *row = [h0 + h1, h0, h1];
            }
            Uniform { big_below, cost }
        });
        let bytes = layout.uniform().map(|(small, big_below)| {
            let mut bytes = [[0u64; 3]; 2];
            let rows = if big_below == 0 { 1 } else { 2 };
            for (size, row) in bytes.iter_mut().enumerate().take(rows) {
                let elems = small.saturating_add(size as u64);
                let half = |h| {
                    channels.iter().fold(0u64, |sum, &c| {
                        sum.saturating_add(layout.half_of(elems, c, h).saturating_mul(plan.dtype.size()))
                    })
                };
                let (h0, h1) = (half(HalfChunk::H0), half(HalfChunk::H1));
                *row = [h0.saturating_add(h1), h0, h1];
            }
            bytes
        });
        DescTable { layout, channels: channels.to_vec(), uniform, bytes }
    }

    /// Bytes of `halves` of `blocks` of `member`'s buffer on the table's
    /// channels: [`Layout::bytes`] summed over them (saturating, as that
    /// sum does), in O(1) when blocks are alike but for one more element
    /// below a position.
    pub fn bytes(&self, member: u32, blocks: BlockSet, halves: Halves) -> u64 {
        match (self.uniform, self.bytes) {
            (Some(u), Some(bytes)) => {
                let big = u.big_blocks(blocks);
                let h = halves_index(halves);
                u64::from(big)
                    .saturating_mul(bytes[1][h])
                    .saturating_add(u64::from(blocks.count - big).saturating_mul(bytes[0][h]))
            }
            _ => self.walk(blocks, halves, |c, b, h| self.layout.bytes(member, c, b, h)),
        }
    }

    /// Whether `other`, a table of the same collective, counts every
    /// transfer as this one does: both tabulated with the same costs, or
    /// on the same channels.
    pub fn counts_alike(&self, other: &DescTable<'_>) -> bool {
        match (self.uniform, other.uniform) {
            (Some(a), Some(b)) => a == b,
            _ => self.channels == other.channels,
        }
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

    /// When every block of every member holds the same elements, none one
    /// bigger (the count splits evenly, or the op copies whole buffers):
    /// that number and the descriptors of one block, what
    /// [`Layout::block_elems`] and [`DescTable::count`] answer for any
    /// block, read without their arithmetic.
    pub fn every_block(&self) -> Option<EveryBlock> {
        let u = self.uniform.filter(|u| u.big_below == 0)?;
        let elems = self.layout.uniform().map(|(small, _)| small)?;
        Some(EveryBlock { elems, desc: u.cost[0] })
    }

    /// Descriptors to move `halves` of `blocks` of `member`'s buffer on the
    /// table's channels: data descriptors plus one semaphore increment per
    /// half-transfer.
    pub fn count(&self, member: u32, blocks: BlockSet, halves: Halves) -> u64 {
        match self.uniform {
            Some(u) => {
                let big = u.big_blocks(blocks);
                let h = halves_index(halves);
                let big_n = u64::from(big).saturating_mul(u.cost[1][h]);
                big_n.saturating_add(u64::from(blocks.count - big).saturating_mul(u.cost[0][h]))
            }
            None => self.walk(blocks, halves, |c, b, h| self.layout.descriptors(member, c, b, h)),
        }
    }

    /// `term` summed (saturating) over the table's channels, `blocks` and
    /// `halves`: the walk the tabulated answers stand for.
    fn walk(&self, blocks: BlockSet, halves: Halves, term: impl Fn(u8, u32, HalfChunk) -> u64) -> u64 {
        let mut sum = 0u64;
        for &c in &self.channels {
            for b in blocks.iter() {
                for h in halves.iter() {
                    sum = sum.saturating_add(term(c, b, h));
                }
            }
        }
        sum
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
