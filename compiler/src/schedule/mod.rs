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
//!
//! One file per concept: [`scope`](Scope) (mixed-radix digits and scopes),
//! [`phase`](Phase) (the patterns and their placement), [`blocks`](BlockSet)
//! (block sets, halves, transfers, peer maps), [`layout`](Layout) (elements
//! and DMA descriptors per block), [`topology`](relation) (how two ranks
//! relate). This module holds data only: the algorithms compose the phases
//! ([`crate::build`]) and say which transfers each phase kind makes, so
//! [`Schedule::transfers`] and [`Schedule::phase_transfers`] are implemented
//! in `algorithms/`, and `schedule` imports nothing from it. Data flows one
//! way: algorithms → schedule → lower.

mod blocks;
mod layout;
mod phase;
mod scope;
mod short;
mod topology;

pub use blocks::{BlockSet, Halves, Pair, PeerMap, Transfer};
pub use layout::{DescTable, EveryBlock, Layout, MAX_DESC_BYTES, split};
pub use phase::{NARROW_INLINE, Narrow, Phase, PhaseInstance, PhaseKind, RdhMode};
pub use scope::{DIGIT_NODE, DIGIT_POD, DIGITS, Radices, Scope, ScopeInstance, ScopePlacer};
pub use short::ShortList;
pub use topology::{mesh_type, relation};

use crate::valid::{Groups, Shape};
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::id::Rank;
use ccc_ir::spec::{Barrier, DType, Leg, ReduceOp};
use serde::Serialize;

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
    /// AllToAllV sizes, shared with the collective (and its other plans).
    pub counts: Option<std::sync::Arc<[Vec<u64>]>>,
    /// The phases, in order; phases with no peer are already dropped.
    pub phases: Vec<Phase>,
    /// Total steps (the sum of the phases' step counts).
    pub step_n: u32,
    /// The algorithm per leg, as resolved (for manifests and signatures).
    pub legs: PlanLegs,
    /// The cost model's parameters for this collective.
    pub model: ccc_ir::model::ModelParams,
    /// What `algorithm: Auto` chose, and from what (`None`: written).
    pub auto: Option<crate::valid::AutoChoice>,
}

/// The most legs held without an allocation: as many as a hierarchical
/// op runs (an all-reduce's three; a flat plan has one, without a leg).
pub const LEGS_INLINE: usize = 3;

/// A plan's algorithm per leg ([`CollectivePlan::legs`]): a short list,
/// held inline (`Auto` plans a dozen candidates per collective).
pub type PlanLegs = ShortList<(Option<Leg>, AlgType), LEGS_INLINE>;

/// What an op does to the buffers: the symbolic model the schedule is
/// planned for and the verifier proves. Coarser than the wire's
/// [`OpType`] (Send, Recv and the permutes are all a [`OpKind::Permute`];
/// AllToAllV is an AllToAll), and unlike `algorithms::ScopeOp` it describes
/// the whole collective, not one composition step.
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

    /// Member `index`'s placer: its phases placed one after another,
    /// each placed once per run of phases placed alike ([`PhasePlacer`]).
    pub fn placer(&self, index: u32) -> PhasePlacer<'_> {
        PhasePlacer { plan: self, index, last: None }
    }

    /// The phase running at collective step `step`, and the step within it.
    pub fn phase_at(&self, step: u32) -> Option<(usize, u32)> {
        let i = self.phases.partition_point(|p| p.first_step + p.step_n <= step);
        let phase = self.phases.get(i)?;
        (step >= phase.first_step).then(|| (i, step - phase.first_step))
    }

    /// The global rank of group member `index` of `group`; `None` when
    /// the plan's groups have no such member.
    pub fn rank(&self, group: u32, index: u32) -> Option<Rank> {
        self.groups.member(group, index)
    }
}

/// One member's phases placed one after another: what
/// [`CollectivePlan::instance`] gives, but a phase placed as the one
/// placed before it ([`Phase::placed_as`]) takes that one's placement
/// instead of computing it again.
pub struct PhasePlacer<'p> {
    plan: &'p CollectivePlan,
    index: u32,
    last: Option<(&'p Phase, PhaseInstance)>,
}

impl<'p> PhasePlacer<'p> {
    /// `phase` placed around the member.
    pub fn place(&mut self, phase: &'p Phase) -> PhaseInstance {
        if let Some((before, inst)) = self.last
            && phase.placed_as(before)
        {
            self.last = Some((phase, inst));
            return inst;
        }
        let inst = self.plan.instance(phase, self.index);
        self.last = Some((phase, inst));
        inst
    }
}

#[cfg(test)]
mod tests;
