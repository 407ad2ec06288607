//! The validated program: what `validate` proves about a spec and resolves
//! from it. Only [`crate::validate::validate`] constructs these values, so a
//! function that takes a [`ValidProgram`] may rely on every invariant below.

use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::id::Rank;
use ccc_ir::model::ModelParams;
use ccc_ir::spec::{Barrier, DType, Leg, ReduceOp};
use serde::Serialize;

/// The default initial send credits per channel.
pub const DEFAULT_SEND_CREDITS: u16 = 2;

/// A program whose every collective has been checked.
///
/// Invariants: at least one collective; every collective shares `arch`,
/// `topology`, `barrier` and `send_credits`; see [`ValidCollective`].
#[derive(Clone, Debug)]
pub struct ValidProgram {
    /// The collectives, in program order.
    pub(crate) collectives: Vec<ValidCollective>,
    /// The architecture.
    pub(crate) arch: Arch,
    /// The machine shape.
    pub(crate) topology: Shape,
    /// The barrier the EXEC config carries.
    pub(crate) barrier: Barrier,
    /// Initial send credits per channel, 1..=511.
    pub(crate) send_credits: u16,
}

impl ValidProgram {
    /// The collectives in order.
    pub fn collectives(&self) -> &[ValidCollective] {
        &self.collectives
    }
    /// The architecture.
    pub fn arch(&self) -> Arch {
        self.arch
    }
    /// The machine shape.
    pub fn topology(&self) -> Shape {
        self.topology
    }
    /// The barrier kind.
    pub fn barrier(&self) -> Barrier {
        self.barrier
    }
    /// Initial send credits per channel.
    pub fn send_credits(&self) -> u16 {
        self.send_credits
    }
}

/// The machine shape, with the derived counts.
///
/// Invariants: `rank_n = node_n * local_rank_n`, `node_n = pod_n * nodes_per_pod`,
/// every count at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shape {
    /// Ranks in the world.
    pub rank_n: u32,
    /// Ranks per node.
    pub local_rank_n: u32,
    /// Pods.
    pub pod_n: u32,
    /// Nodes (`rank_n / local_rank_n`).
    pub node_n: u32,
    /// Nodes per pod (`node_n / pod_n`).
    pub nodes_per_pod: u32,
}

impl Shape {
    /// The node of a global rank. (Validation makes every shape's counts
    /// at least 1; a shape edited to hold a 0 puts every rank on node 0
    /// rather than divide by it.)
    pub const fn node(&self, rank: u32) -> u32 {
        match rank.checked_div(self.local_rank_n) {
            Some(node) => node,
            None => 0,
        }
    }
    /// The pod of a global rank (pod 0 for a shape edited to hold a 0).
    pub const fn pod(&self, rank: u32) -> u32 {
        match rank.checked_div(self.local_rank_n.saturating_mul(self.nodes_per_pod)) {
            Some(pod) => pod,
            None => 0,
        }
    }
}

/// One checked collective.
///
/// Invariants: `channels` in 1..=32; `reduce` is `Some` exactly for reducing
/// ops; `root` is `Some` (and below the group size) exactly for rooted ops;
/// `peers` is non-empty exactly for peer-map ops, its entries below the
/// group size, no source or target repeated; `counts` is `Some` exactly for
/// AllToAllV, a `group size`-square matrix whose rows each sum to `count`;
/// the algorithm serves the op and the groups have the structure it needs.
#[derive(Clone, Debug)]
pub struct ValidCollective {
    /// Position in the program.
    pub(crate) index: u32,
    /// The op as written (implicit permutes included).
    pub(crate) op: OpType,
    /// Element type.
    pub(crate) dtype: DType,
    /// Reduce operator of a reducing op.
    pub(crate) reduce: Option<ReduceOp>,
    /// Elements per rank's input buffer.
    pub(crate) count: u64,
    /// Ring channels, 1..=32.
    pub(crate) channels: u8,
    /// The resolved algorithm.
    pub(crate) algorithm: ResolvedAlgorithm,
    /// The replica groups.
    pub(crate) groups: Groups,
    /// Root of a rooted op, as a group-local index.
    pub(crate) root: Option<u32>,
    /// (source, target) pairs of a peer-map op, group-local indices, in the
    /// order given (the `peer: k` shorthand expanded in member order).
    pub(crate) peers: Vec<(u32, u32)>,
    /// AllToAllV sizes, `counts[i][j]` from member i to member j. Shared
    /// with every plan of the collective (`Auto` plans several).
    pub(crate) counts: Option<std::sync::Arc<[Vec<u64>]>>,
    /// The cost model's parameters: the architecture's, with the spec's
    /// `model:` overrides applied.
    pub(crate) model: ModelParams,
    /// What `algorithm: Auto` chose and from what (`None`: the algorithm
    /// was written in the spec).
    pub(crate) auto: Option<AutoChoice>,
    /// Every candidate `Auto` listed, kept where the collectives before it
    /// had spent mesh events (so that its alternatives may lack choices
    /// that lower alone): fitting the program chooses again among those
    /// that lower within a whole TOP_SP's events (`cost::auto::fit`).
    pub(crate) listed: Option<std::sync::Arc<[ResolvedAlgorithm]>>,
}

impl ValidCollective {
    /// Position in the program.
    pub fn index(&self) -> u32 {
        self.index
    }
    /// The op as written.
    pub fn op(&self) -> OpType {
        self.op
    }
    /// Element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// Reduce operator.
    pub fn reduce(&self) -> Option<ReduceOp> {
        self.reduce
    }
    /// Elements per rank's input buffer.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Ring channels.
    pub fn channels(&self) -> u8 {
        self.channels
    }
    /// The resolved algorithm.
    pub fn algorithm(&self) -> &ResolvedAlgorithm {
        &self.algorithm
    }
    /// The replica groups.
    pub fn groups(&self) -> &Groups {
        &self.groups
    }
    /// Root (group-local).
    pub fn root(&self) -> Option<u32> {
        self.root
    }
    /// Peer pairs (group-local).
    pub fn peers(&self) -> &[(u32, u32)] {
        &self.peers
    }
    /// AllToAllV sizes.
    pub fn counts(&self) -> Option<&[Vec<u64>]> {
        self.counts.as_deref()
    }
    /// The cost model's parameters.
    pub fn model(&self) -> &ModelParams {
        &self.model
    }
    /// What `Auto` chose, when the spec said `Auto`.
    pub fn auto(&self) -> Option<&AutoChoice> {
        self.auto.as_ref()
    }
}

/// The algorithm after validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ResolvedAlgorithm {
    /// One algorithm over the whole group.
    Flat(AlgType),
    /// One algorithm per leg, in the order the legs run.
    Hier(LegAlgorithms),
}

impl ResolvedAlgorithm {
    /// The algorithm as a spec writes it, text that `algorithm:` reads
    /// back as this choice: `Ring`, or `Hier((intra_reduce_scatter:
    /// Kangaring, inter_all_reduce: InterRdh, intra_all_gather: Ring))`
    /// (the legs in run order). Where a message tells a user to write a
    /// choice, it gives this (the signature's form,
    /// `Hier(intra_reduce_scatter=Kangaring, ...)`, does not parse).
    pub fn spec_text(&self) -> String {
        match self {
            ResolvedAlgorithm::Flat(alg) => alg.name().to_owned(),
            ResolvedAlgorithm::Hier(legs) => {
                let parts: Vec<String> =
                    legs.iter().map(|(leg, alg)| format!("{}: {}", leg.field(), alg.name())).collect();
                format!("Hier(({}))", parts.join(", "))
            }
        }
    }
}

/// A hierarchical algorithm's choices: one algorithm per leg, in the
/// order the legs run, no leg twice (so at most [`Leg::ALL`]'s five).
/// Held inline, so that a [`ResolvedAlgorithm`] is `Copy`: `Auto` lists,
/// keeps and records every candidate of every collective without a heap
/// allocation each. Reads as a slice of `(leg, algorithm)` pairs;
/// compares, prints and serializes as that slice.
#[derive(Clone, Copy)]
pub struct LegAlgorithms {
    len: u8,
    /// The pairs in `..len`; the rest is filler, never read.
    pairs: [(Leg, AlgType); Leg::ALL.len()],
}

impl LegAlgorithms {
    /// No leg yet (its slots hold a filler that is never read).
    pub const EMPTY: LegAlgorithms =
        LegAlgorithms { len: 0, pairs: [(Leg::IntraReduceScatter, AlgType::Ring); Leg::ALL.len()] };

    /// `pairs`, in order; `None` when a leg is named twice.
    pub fn new(pairs: &[(Leg, AlgType)]) -> Option<LegAlgorithms> {
        pairs.iter().try_fold(LegAlgorithms::EMPTY, |out, &(leg, alg)| out.with(leg, alg))
    }

    /// These pairs and `(leg, alg)` after them; `None` when `leg` is
    /// already named.
    pub fn with(mut self, leg: Leg, alg: AlgType) -> Option<LegAlgorithms> {
        if self.iter().any(|&(l, _)| l == leg) {
            return None;
        }
        // Distinct legs are at most `Leg::ALL.len()`, so a new one has a slot.
        *self.pairs.get_mut(usize::from(self.len))? = (leg, alg);
        self.len += 1;
        Some(self)
    }

    /// Sets the algorithm of the `i`-th leg (its leg stays, so no leg is
    /// named twice); `false`, and nothing set, when there is no such leg.
    pub fn set_algorithm(&mut self, i: usize, alg: AlgType) -> bool {
        match self.pairs.get_mut(..usize::from(self.len)).and_then(|pairs| pairs.get_mut(i)) {
            Some(pair) => {
                pair.1 = alg;
                true
            }
            None => false,
        }
    }
}

impl std::ops::Deref for LegAlgorithms {
    type Target = [(Leg, AlgType)];
    fn deref(&self) -> &Self::Target {
        self.pairs.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

impl<'a> IntoIterator for &'a LegAlgorithms {
    type Item = &'a (Leg, AlgType);
    type IntoIter = std::slice::Iter<'a, (Leg, AlgType)>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl PartialEq for LegAlgorithms {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl Eq for LegAlgorithms {}

impl std::fmt::Debug for LegAlgorithms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for LegAlgorithms {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// Replica groups: the collective runs independently inside each.
///
/// Invariants: every rank of the world is in exactly one group; all groups
/// have the same size (at least 1). Without explicit groups, the whole world
/// is one group in rank order, stored in O(1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Groups {
    rank_n: u32,
    /// `None`: one group, the world in rank order. Shared, so that a
    /// clone (every plan of the collective holds one, and `Auto` plans a
    /// dozen) copies a pointer, not every group.
    explicit: Option<std::sync::Arc<Explicit>>,
    /// The group the cost model costs now ([`Groups::modelled`]): the
    /// first of [`Groups::costed`], or another of them in a copy made to
    /// cost it ([`Groups::costing`]).
    modelled: u32,
}

/// Explicit groups and where each rank sits in them.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Explicit {
    groups: Vec<Vec<u32>>,
    /// Global rank → (group, index in group).
    places: Vec<(u32, u32)>,
    /// The groups the cost model costs ([`Groups::costed`]).
    costed: Vec<u32>,
}

/// The most members the cost model costs in all of one collective's
/// costed groups ([`Groups::costed`]): groups laid out alike cost alike,
/// so only distinct layouts are costed, each of them up to this many
/// members in all, and past it the ones spread widest (at least one).
pub(crate) const COSTED_MEMBERS_MAX: u64 = 4096;

impl Groups {
    /// The whole world, one group in rank order.
    pub(crate) fn world(rank_n: u32) -> Self {
        Groups { rank_n, explicit: None, modelled: 0 }
    }

    /// Explicit groups, group 0 costed until [`Groups::modelled_on`]
    /// says otherwise. The caller (validation) has checked the invariants.
    pub(crate) fn explicit(rank_n: u32, groups: Vec<Vec<u32>>) -> Self {
        let mut places = vec![(0, 0); rank_n as usize];
        for (g, members) in groups.iter().enumerate() {
            for (i, &r) in members.iter().enumerate() {
                if let Some(place) = places.get_mut(r as usize) {
                    *place = (g as u32, i as u32);
                }
            }
        }
        let costed = vec![0];
        Groups { rank_n, explicit: Some(std::sync::Arc::new(Explicit { groups, places, costed })), modelled: 0 }
    }

    /// These groups with the costed groups chosen on `shape` for an op of
    /// peer map `peers` (group-local pairs, empty for other ops): one of
    /// each distinct layout, the one spread widest first
    /// (`costed_groups`).
    pub(crate) fn modelled_on(mut self, shape: &Shape, peers: &[(u32, u32)]) -> Self {
        if let Some(e) = self.explicit.as_mut() {
            let costed = costed_groups(shape, &e.groups, peers);
            self.modelled = costed.first().copied().unwrap_or(0);
            if costed != e.costed {
                std::sync::Arc::make_mut(e).costed = costed;
            }
        }
        self
    }

    /// The group the cost model costs (0 for the world): of explicit
    /// groups, the one spread widest (`costed_groups`), so that the
    /// prediction does not depend on the order the groups are listed in;
    /// in a copy made by `Groups::costing`, the group it names.
    pub fn modelled(&self) -> u32 {
        self.modelled
    }

    /// The groups the cost model costs, the one spread widest first (the
    /// world: `[0]`): one of each distinct layout of members on pods,
    /// nodes and links, up to 4,096 members in all. Groups run at once
    /// and the collective ends with the slowest, so a prediction is the
    /// most of theirs (`docs/cost-model.md` §1, Groups).
    pub fn costed(&self) -> &[u32] {
        self.explicit.as_ref().map_or(&[0], |e| e.costed.as_slice())
    }

    /// A copy of these groups whose costed group ([`Groups::modelled`]) is
    /// `g`, to cost another of [`Groups::costed`].
    pub(crate) fn costing(&self, g: u32) -> Self {
        Groups { modelled: g, ..self.clone() }
    }

    /// Are the groups explicit (given in the spec)?
    pub fn is_explicit(&self) -> bool {
        self.explicit.is_some()
    }

    /// Number of groups.
    pub fn group_n(&self) -> u32 {
        self.explicit.as_ref().map_or(1, |e| e.groups.len() as u32)
    }

    /// Members per group.
    pub fn size(&self) -> u32 {
        match &self.explicit {
            None => self.rank_n,
            Some(e) => e.groups.first().map_or(0, |m| m.len() as u32),
        }
    }

    /// The global rank of member `index` of group `group`; `None` when the
    /// groups have no such group or the group no such member.
    pub fn member(&self, group: u32, index: u32) -> Option<Rank> {
        match &self.explicit {
            None => (group == 0 && index < self.rank_n).then_some(Rank(index)),
            Some(e) => e.groups.get(group as usize)?.get(index as usize).copied().map(Rank),
        }
    }

    /// Where a global rank sits in the groups; `None` for a rank outside
    /// the world.
    pub fn locate(&self, rank: Rank) -> Option<GroupMember> {
        let (group, index) = match &self.explicit {
            None => (rank.0 < self.rank_n).then_some((0, rank.0))?,
            Some(e) => *e.places.get(rank.0 as usize)?,
        };
        Some(GroupMember { rank, group, index })
    }

    /// The explicit groups, if any.
    pub fn as_explicit(&self) -> Option<&[Vec<u32>]> {
        self.explicit.as_deref().map(|e| e.groups.as_slice())
    }
}

/// The groups of `groups` on `shape` the cost model costs, the one spread
/// widest first: of each distinct layout (`layout`: groups laid out alike
/// cost alike), the one spread widest, as many as hold at most
/// [`COSTED_MEMBERS_MAX`] members in all (at least one), in that order. A group is spread wider when it spans more pods,
/// then more nodes, then (for an op of a peer map, `peers` group-local)
/// has more pairs across a pod, then across a node, then a longer pair
/// inside a node, then crosses a pod and then a node more often from one
/// member to the next (its ring's edges, the last member to the first
/// included), then walks more links inside its nodes along that ring; of
/// those alike in all of it, by layout, then the one holding the lowest
/// rank. Groups run at
/// once and the collective ends with the slowest, so a prediction is the
/// most of the costed groups' (`docs/cost-model.md` §1, Groups), and
/// which they are does not depend on the order the groups are listed in: a
/// group on one node listed first once hid a group across two, and a group
/// in rank order once hid one whose members of a node were shuffled.
fn costed_groups(shape: &Shape, groups: &[Vec<u32>], peers: &[(u32, u32)]) -> Vec<u32> {
    let local = shape.local_rank_n.max(1);
    // The shorter way round a node's ring from `a` to `b` on it, as the
    // cost model's `ring_hops` walks it (which `valid` may not import:
    // `cost` depends on it).
    let hops = |a: u32, b: u32| {
        let cw = (b % local + local - a % local) % local;
        cw.min(local - cw)
    };
    // A peer map's pairs across a pod and across a node, then its longest
    // walk inside a node (links), in this group's ranks.
    let pairs = |members: &[u32]| {
        let (mut pod, mut node, mut links) = (0u32, 0u32, 0u32);
        for &(s, t) in peers {
            let (Some(&a), Some(&b)) = (members.get(s as usize), members.get(t as usize)) else { continue };
            pod += u32::from(shape.pod(a) != shape.pod(b));
            node += u32::from(shape.node(a) != shape.node(b));
            if shape.node(a) == shape.node(b) {
                links = links.max(hops(a, b));
            }
        }
        (pod, node, links)
    };
    let key = |members: &[u32]| {
        let (mut nodes, mut pods): (Vec<u32>, Vec<u32>) =
            members.iter().map(|&r| (shape.node(r), shape.pod(r))).unzip();
        let edges = members.iter().zip(members.iter().cycle().skip(1));
        let (mut node_cuts, mut pod_cuts, mut links) = (0u32, 0u32, 0u64);
        for (&a, &b) in edges {
            node_cuts += u32::from(shape.node(a) != shape.node(b));
            pod_cuts += u32::from(shape.pod(a) != shape.pod(b));
            if shape.node(a) == shape.node(b) {
                links += u64::from(hops(a, b));
            }
        }
        for v in [&mut nodes, &mut pods] {
            v.sort_unstable();
            v.dedup();
        }
        (pods.len(), nodes.len(), pairs(members), pod_cuts, node_cuts, links)
    };
    // A group's layout: each member's pod and node, numbered in the order
    // the group first meets them, and its place on its node's ring counted
    // from the first member the group has there, one way round or the
    // other (of a node's places, those read the way that comes first).
    // Two groups of one layout are the same job on other pods, nodes and
    // links (renamed, each node's ring turned or mirrored), which the
    // cost model costs alike.
    let layout = |members: &[u32]| {
        use std::collections::BTreeMap;
        let (mut pods, mut nodes): (BTreeMap<u32, u32>, BTreeMap<u32, (u32, u32)>) = Default::default();
        let mut places: Vec<(u32, u32, u32)> = members
            .iter()
            .map(|&r| {
                let next = pods.len() as u32;
                let pod = *pods.entry(shape.pod(r)).or_insert(next);
                // A node by its number, with the first member met on it.
                let next = nodes.len() as u32;
                let &mut (node, first) = nodes.entry(shape.node(r)).or_insert((next, r));
                (pod, node, (r % local + local - first % local) % local)
            })
            .collect();
        // A node's places read the other way round are its mirror image:
        // the first member whose place differs from its mirror's decides
        // which reading comes first.
        let mirror = |place: u32| (local - place) % local;
        let mut mirrored: Vec<Option<bool>> = vec![None; nodes.len()];
        for &(_, node, place) in &places {
            let m = &mut mirrored[node as usize];
            if m.is_none() && mirror(place) != place {
                *m = Some(mirror(place) < place);
            }
        }
        for (_, node, place) in &mut places {
            if mirrored[*node as usize] == Some(true) {
                *place = mirror(*place);
            }
        }
        places
    };
    // Widest first, then by layout (so that which layouts are costed, and
    // which first, is the same for the same job on other nodes and
    // links); of one layout, the group holding the lowest rank.
    let mut order: Vec<(u32, _, _, u32)> = groups
        .iter()
        .enumerate()
        .map(|(g, m)| (g as u32, key(m), layout(m), m.iter().min().copied().unwrap_or(u32::MAX)))
        .collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.2.cmp(&b.2)).then(a.3.cmp(&b.3)));
    order.dedup_by(|later, kept| later.2 == kept.2);
    let size = groups.first().map_or(1, |g| g.len() as u64).max(1);
    let room = usize::try_from(COSTED_MEMBERS_MAX / size).unwrap_or(usize::MAX).max(1);
    let costed: Vec<u32> = order.into_iter().take(room).map(|(g, ..)| g).collect();
    if costed.is_empty() { vec![0] } else { costed }
}

/// A rank of the world with its replica group and its index in it. Only
/// [`Groups::locate`] makes one, so a `GroupMember` always names a rank the
/// groups hold: code that has one needs no "rank outside the world" case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupMember {
    rank: Rank,
    group: u32,
    index: u32,
}

impl GroupMember {
    /// The global rank.
    pub fn rank(self) -> Rank {
        self.rank
    }
    /// The replica group.
    pub fn group(self) -> u32 {
        self.group
    }
    /// The index in the group (the group-local member).
    pub fn index(self) -> u32 {
        self.index
    }
}

/// One legal choice with its prediction, or the floor that made a
/// prediction needless.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Alternative {
    /// The choice.
    pub algorithm: ResolvedAlgorithm,
    /// Predicted time, whole ns; `None` when it was not predicted: its
    /// floor is above the runner-up's prediction (or equal to it, and the
    /// choice comes later in the tie-break order), so it could neither win
    /// nor come second (`docs/cost-model.md` §4). `ccc explain` predicts
    /// every choice.
    pub predicted_ns: Option<u64>,
    /// A floor under this choice's prediction, whole ns: cheaper to compute
    /// than the prediction, never above it. For a choice whose floor was
    /// not walked (its pre-floor already above the runner-up's prediction),
    /// its pre-floor: named from its phases' patterns, never above the
    /// walked floor (`docs/cost-model.md` §4). A predicted choice's floor
    /// is always the walked one.
    pub floor_ns: u64,
    /// The collective's lower bound, whole ns (the same for every choice).
    pub bound_ns: u64,
}

/// What `Auto` chose, and from what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AutoChoice {
    /// Index of the winner in `alternatives`.
    pub chosen: usize,
    /// Every legal choice, in the tie-break order.
    pub alternatives: Vec<Alternative>,
    /// The legs a `Hier((...))` left to the model (`leg: Auto`), in run
    /// order; empty when the whole algorithm was `Auto`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub auto_legs: Vec<Leg>,
    /// When the program's CTRL SPAD moved the choice off the cheapest
    /// (`cost::auto::fit`): what it left and why; `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fitted: Option<Fitted>,
}

/// How fitting a program into the CTRL SPAD moved an `Auto` choice: the
/// program's collectives, each on the cheapest alternative alone, took
/// more slots than a TOP_SP's CTRL SPAD holds (or left written
/// collectives after them too few mesh events), and the choices that sum
/// the least predicted time within it and within a TOP_SP's mesh events
/// took another one here (`docs/cost-model.md` §4): one with fewer slots,
/// or with fewer mesh events, left to collectives that needed them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Fitted {
    /// The cheapest alternative alone (an index into the alternatives).
    pub cheapest: usize,
    /// The CTRL SPAD slots per TOP_SP the choice takes.
    pub slots: u32,
    /// The slots the cheapest alternative takes.
    pub cheapest_slots: u32,
    /// The slots a TOP_SP's CTRL SPAD holds.
    pub capacity: u32,
    /// The mesh events per TOP_SP the choice takes (its most over the
    /// members).
    pub events: u32,
    /// The mesh events the cheapest alternative takes.
    pub cheapest_events: u32,
    /// The mesh events a TOP_SP holds (`mesh_event_max`).
    pub max_events: u32,
}

impl AutoChoice {
    /// The winner.
    pub fn winner(&self) -> Option<&Alternative> {
        self.alternatives.get(self.chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shape's node and pod are its rank divided by what a node and a
    /// pod hold; a shape edited to hold a 0 (a `Schedule`'s fields are
    /// public) puts every rank on node and pod 0, not a division by zero
    /// (`cost::predict` of such a schedule once panicked).
    #[test]
    fn a_shape_of_zeros_places_every_rank_on_node_zero() {
        let shape = Shape { rank_n: 32, local_rank_n: 4, pod_n: 2, node_n: 8, nodes_per_pod: 4 };
        assert_eq!((shape.node(13), shape.pod(13), shape.pod(16)), (3, 0, 1));
        for shape in [Shape { local_rank_n: 0, ..shape }, Shape { nodes_per_pod: 0, ..shape }] {
            assert_eq!(shape.pod(13), 0);
            assert!(shape.node(13) == 0 || shape.local_rank_n != 0);
        }
    }

    /// A rank or member the groups do not hold has no place: `None`, never
    /// a made-up rank.
    #[test]
    fn outside_the_groups_is_none() {
        let world = Groups::world(4);
        assert_eq!(world.member(0, 3), Some(Rank(3)));
        assert_eq!(world.member(0, 4), None);
        assert_eq!(world.member(1, 0), None);
        let at = world.locate(Rank(2)).unwrap();
        assert_eq!((at.rank(), at.group(), at.index()), (Rank(2), 0, 2));
        assert_eq!(world.locate(Rank(4)), None);

        let explicit = Groups::explicit(4, vec![vec![3, 1], vec![0, 2]]);
        assert_eq!(explicit.member(0, 0), Some(Rank(3)));
        assert_eq!(explicit.member(1, 1), Some(Rank(2)));
        assert_eq!(explicit.member(0, 2), None);
        assert_eq!(explicit.member(2, 0), None);
        let at = explicit.locate(Rank(1)).unwrap();
        assert_eq!((at.rank(), at.group(), at.index()), (Rank(1), 0, 1));
        assert_eq!(explicit.locate(Rank(4)), None);
    }

    /// What a message tells a user to write reads back as the choice it
    /// names: every flat algorithm, and every hierarchical choice of
    /// every op, through the spec parser.
    #[test]
    fn a_choice_as_a_spec_writes_it_parses_back() {
        use ccc_ir::spec::{Algorithm, HierLegs};
        let flat = crate::testing::Case::flat_pairs().map(|(_, alg)| ResolvedAlgorithm::Flat(alg));
        let hier = crate::testing::Case::hier_choices()
            .into_iter()
            .map(|(_, pairs)| ResolvedAlgorithm::Hier(LegAlgorithms::new(&pairs).unwrap()));
        let mut seen = 0;
        for choice in flat.chain(hier) {
            let text = choice.spec_text();
            let spec = format!(
                "Collective(op: AllReduce, dtype: Bf16, count: 8, arch: Cayman, topology: (rank_n: 8, \
                 local_rank_n: 4), channels: 2, algorithm: {text})"
            );
            let parsed = crate::parse::parse(&spec).unwrap_or_else(|e| panic!("{text}: {e}"));
            let expected = match choice {
                ResolvedAlgorithm::Flat(alg) => Algorithm::flat(alg).unwrap(),
                ResolvedAlgorithm::Hier(legs) => {
                    Algorithm::Hier(legs.iter().fold(HierLegs::default(), |h, &(leg, alg)| h.with(leg, alg)))
                }
            };
            assert_eq!(parsed.program.collectives[0].algorithm, expected, "{text}");
            seen += 1;
        }
        assert!(seen > 30, "{seen} choices");
        let legs =
            LegAlgorithms::new(&[(Leg::IntraReduceScatter, AlgType::Kangaring), (Leg::IntraAllGather, AlgType::Ring)]);
        assert_eq!(
            ResolvedAlgorithm::Hier(legs.unwrap()).spec_text(),
            "Hier((intra_reduce_scatter: Kangaring, intra_all_gather: Ring))"
        );
    }

    /// A hierarchical choice holds its pairs in order, at most one per
    /// leg, and reads, compares, prints and serializes as the list it
    /// was (a `Vec` before it was held inline): the manifest and
    /// `explain --json` keep their shape.
    #[test]
    fn leg_algorithms_read_as_their_list() {
        let pairs = [
            (Leg::IntraReduceScatter, AlgType::Kangaring),
            (Leg::InterAllReduce, AlgType::InterRdh),
            (Leg::IntraAllGather, AlgType::Ring),
        ];
        let legs = LegAlgorithms::new(&pairs).unwrap();
        assert_eq!(&legs[..], &pairs[..]);
        assert_eq!(format!("{legs:?}"), format!("{:?}", pairs.to_vec()));
        let json = serde_json::to_string(&ResolvedAlgorithm::Hier(legs)).unwrap();
        assert_eq!(
            json,
            r#"{"Hier":[["IntraReduceScatter","Kangaring"],["InterAllReduce","InterRdh"],["IntraAllGather","Ring"]]}"#
        );
        // Equal lists are equal whatever filler the unused slots hold.
        let two = LegAlgorithms::new(&pairs[..2]).unwrap();
        assert_eq!(two, LegAlgorithms::new(&pairs[..2]).unwrap());
        assert_ne!(two, legs);
        assert_eq!(LegAlgorithms::new(&[]).unwrap(), LegAlgorithms::EMPTY);
        assert_eq!(LegAlgorithms::EMPTY.len(), 0);
        assert_eq!(LegAlgorithms::EMPTY.with(pairs[0].0, pairs[0].1).unwrap()[..], pairs[..1]);
        assert!(legs.with(Leg::IntraAllGather, AlgType::Kangaring).is_none());
        // Every leg once fits; a leg named twice is refused.
        let every: Vec<_> = Leg::ALL.iter().map(|&l| (l, AlgType::Ring)).collect();
        assert_eq!(LegAlgorithms::new(&every).unwrap().len(), Leg::ALL.len());
        let again = [(Leg::InterAllReduce, AlgType::Ring), (Leg::InterAllReduce, AlgType::Mesh)];
        assert!(LegAlgorithms::new(&again).is_none());
        // An algorithm is set in place, its leg kept; past the end nothing is.
        let mut set = legs;
        assert!(set.set_algorithm(1, AlgType::Mesh));
        assert_eq!(set[1], (Leg::InterAllReduce, AlgType::Mesh));
        assert_eq!((set[0], set[2]), (pairs[0], pairs[2]));
        assert!(!set.set_algorithm(3, AlgType::Ring));
        assert_eq!(&set[..], &[pairs[0], (Leg::InterAllReduce, AlgType::Mesh), pairs[2]]);
    }
}
