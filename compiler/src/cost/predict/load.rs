//! One member's load at one step, from the transfers the step generates:
//! what each transfer adds to the bytes, link loads, descriptors and
//! folds of `StepLoad` (a direct step's are named by `direct.rs`, which
//! adds the same values).

use super::{Cap, HEARD, Hop, SENT, StepLoad};
use crate::schedule::{
    BlockSet, CollectivePlan, DescTable, EveryBlock, Halves, Phase, PhaseInstance, Schedule, Transfer, relation,
};

pub(super) fn halves_share(h: Halves) -> f64 {
    match h {
        Halves::Both => 1.0,
        Halves::Only(_) => 0.5,
    }
}

/// Bytes of `blocks` of `member`'s buffer, `halves` of them.
pub(super) fn bytes_of(plan: &CollectivePlan, member: u32, blocks: BlockSet, halves: Halves) -> f64 {
    if blocks.count == 0 {
        return 0.0;
    }
    let elems = plan.layout().block_elems(member, blocks.start);
    f64::from(blocks.count) * elems as f64 * plan.dtype.size() as f64 * halves_share(halves)
}

/// Member `me`'s load at step `t` of `phase` (`inst`: the phase placed
/// around it), from the transfers the pattern generates for it (into
/// `buf`; `senders` is scratch). The transfers are generated unlabelled
/// (`algorithms/step_gen.rs`): a transfer's hop is read from its ranks'
/// relation here, never from its `neigh`; the reference
/// (`named` off) generates them labelled, as lowering does.
pub(super) fn step_load(
    cx: &LoadCx<'_>,
    me: u32,
    phase: &Phase,
    inst: PhaseInstance,
    t: u32,
    buf: &mut Vec<Transfer>,
    senders: &mut Vec<u32>,
) -> StepLoad {
    buf.clear();
    if cx.named {
        crate::algorithms::transfers::<false>(
            cx.plan,
            &cx.schedule.shape,
            cx.plan.groups.modelled(),
            phase,
            inst,
            t,
            buf,
        );
    } else {
        cx.schedule.phase_transfers(cx.plan, cx.plan.groups.modelled(), phase, inst, t, buf);
    }
    let mut load = StepLoad::default();
    senders.clear();
    for t in buf.iter() {
        cx.add(&mut load, me, t.from, t.to, t.src, t.dst, t.halves, t.fold.is_some());
        if t.to == me {
            senders.push(t.from);
        }
    }
    senders.sort_unstable();
    senders.dedup();
    load.sender_n = senders.len();
    load.finish();
    load
}

/// What costing one member's transfers reads.
pub(super) struct LoadCx<'a> {
    pub(super) schedule: &'a Schedule,
    pub(super) plan: &'a CollectivePlan,
    pub(super) table: &'a DescTable<'a>,
    /// The cap on an intra-node transfer's links, from the model's
    /// `hops_max`.
    pub(super) cap: Cap,
    /// Name a direct step's transfers from its pattern (false: generate
    /// them, the reference the shortcut is tested against).
    pub(super) named: bool,
    /// Costing a floor: a direct step's peers off the member's node may
    /// be counted rather than visited (`direct::Sides::add_all`).
    pub(super) floor: bool,
    /// Every block alike ([`DescTable::every_block`]), read instead of
    /// working out a transfer's block elements and descriptors (`None`:
    /// worked out, as the reference does).
    pub(super) every: Option<EveryBlock>,
}

impl LoadCx<'_> {
    /// [`bytes_of`] `halves` of `blocks` of `member`'s buffer: the same
    /// product, the block's elements read when every block is alike.
    pub(super) fn bytes(&self, member: u32, blocks: BlockSet, halves: Halves) -> f64 {
        match self.every {
            Some(every) if blocks.count > 0 => {
                f64::from(blocks.count) * every.elems as f64 * self.plan.dtype.size() as f64 * halves_share(halves)
            }
            _ => bytes_of(self.plan, member, blocks, halves),
        }
    }

    /// [`DescTable::count`] of `halves` of `blocks` of `member`'s buffer,
    /// read when every block is alike.
    pub(super) fn desc(&self, member: u32, blocks: BlockSet, halves: Halves) -> u64 {
        match self.every {
            Some(every) => every.count(blocks, halves),
            None => self.table.count(member, blocks, halves),
        }
    }

    /// Adds to `me`'s `load` one transfer of `halves` of blocks `src` of
    /// member `from` to blocks `dst` of member `to` (folded there when
    /// `fold`), if `me` sends or receives it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add(
        &self,
        load: &mut StepLoad,
        me: u32,
        from: u32,
        to: u32,
        src: BlockSet,
        dst: BlockSet,
        halves: Halves,
        fold: bool,
    ) {
        let (schedule, plan) = (self.schedule, self.plan);
        // Every transfer of a built plan is between members of the group.
        let g = plan.groups.modelled();
        let (Some(a), Some(b)) = (plan.rank(g, from), plan.rank(g, to)) else { return };
        let hop = Hop::of(relation(&schedule.shape, a, b));
        load.hop = load.hop.max(Some(hop));
        if from != me && to != me {
            return;
        }
        let bytes = self.bytes(from, src, halves);
        // Only an intra-node transfer loads the node's ring (`add_side`).
        let (dir, hops) = match hop {
            Hop::Intra => {
                let (dir, hops) = ring_hops(schedule.shape.local_rank_n, a.0, b.0);
                (dir, hops.min(self.cap.links))
            }
            Hop::Inter | Hop::Pod => (0, 0.0),
        };
        if from == me {
            load.add_side(SENT, hop, dir, hops, bytes, self.desc(me, src, halves));
        }
        if to == me {
            load.add_side(HEARD, hop, dir, hops, bytes, self.desc(me, dst, halves));
            if fold {
                load.folded += bytes / plan.dtype.size() as f64;
            }
        }
    }
}

impl StepLoad {
    /// The intra-node loads, per side: the busier ring direction's, with
    /// the transfers half way round ([`EITHER_WAY`]) on it.
    pub(super) fn finish(&mut self) {
        for (hops, ring) in self.hops.iter_mut().zip(self.ring) {
            hops[Hop::Intra as usize] = ring_load(ring);
        }
    }
}

/// The ring direction of [`ring_hops`] that a transfer goes clockwise.
pub(crate) const CLOCKWISE: usize = 0;
/// The ring direction of [`ring_hops`] that a transfer goes
/// counter-clockwise.
pub(crate) const COUNTER_CLOCKWISE: usize = 1;
/// The "direction" of [`ring_hops`] of a transfer exactly half way round
/// the node's ring, which may go either way: it is charged to the busier
/// direction ([`ring_load`]).
pub(crate) const EITHER_WAY: usize = 2;

/// The link load of a member's side from its loads by ring direction
/// ([`CLOCKWISE`], [`COUNTER_CLOCKWISE`], [`EITHER_WAY`]): the busier
/// direction's, with the transfers half way round added to it (as if
/// each went the busier way, so that a group and its mirror image, whose
/// directions swap, cost the same).
pub(crate) fn ring_load(ring: [f64; 3]) -> f64 {
    ring[CLOCKWISE].max(ring[COUNTER_CLOCKWISE]) + ring[EITHER_WAY]
}

/// The direction ([`CLOCKWISE`], [`COUNTER_CLOCKWISE`], or
/// [`EITHER_WAY`] for a transfer exactly half way round) and the number
/// of links a transfer from global rank `a` to `b` crosses inside a node
/// whose `local` ranks sit on a bidirectional ring in local-index order:
/// the \[project\] stand-in for the node's NeuronLink topology, capped by
/// the caller at the network's diameter
/// ([`ccc_ir::model::ModelParams::hops_max`]). A transfer to a neighbour
/// crosses one link; one to a rank `d` places away shares `d` links with
/// the other transfers of its step (so a ring, whose transfers all go one
/// way, uses half the node's links, a Kangaring both halves, and a mesh
/// or a far recursive-halving partner pays for the distance). A member's
/// copy to itself crosses none: it loads the DMA, not a link.
pub(crate) fn ring_hops(local: u32, a: u32, b: u32) -> (usize, f64) {
    let local = local.max(1);
    let cw = (b % local + local - a % local) % local;
    if cw == 0 {
        return (CLOCKWISE, 0.0);
    }
    let (dir, links) = shorter_way(cw, local - cw);
    (dir, f64::from(links))
}

/// Which way round a transfer `cw` links away clockwise and `ccw`
/// counter-clockwise goes, and across how many links: the shorter way,
/// [`EITHER_WAY`] when both are as long (the one rule [`ring_hops`] and
/// the closed forms of `direct.rs` count by).
pub(super) fn shorter_way(cw: u32, ccw: u32) -> (usize, u32) {
    match cw.cmp(&ccw) {
        std::cmp::Ordering::Less => (CLOCKWISE, cw),
        std::cmp::Ordering::Equal => (EITHER_WAY, cw),
        std::cmp::Ordering::Greater => (COUNTER_CLOCKWISE, ccw),
    }
}
