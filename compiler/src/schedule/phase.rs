//! Phases: the pattern each phase runs, over which scope and steps, and a phase placed around one member.

use super::{BlockSet, Scope, ScopeInstance, ShortList};
use ccc_ir::enums::AlgType;
use ccc_ir::spec::Leg;
use serde::Serialize;

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

impl PhaseKind {
    /// Whether this is one of the recursive halving and doubling patterns
    /// (`algorithms/rdh.rs`): a prologue, a halving or doubling round, an
    /// epilogue, or a binomial tree.
    pub const fn is_rdh(&self) -> bool {
        matches!(
            self,
            PhaseKind::RdhPrologue { .. }
                | PhaseKind::RdhHalving { .. }
                | PhaseKind::RdhDoubling { .. }
                | PhaseKind::RdhEpilogue { .. }
                | PhaseKind::BinomialBroadcast { .. }
                | PhaseKind::BinomialReduce { .. }
        )
    }

    /// The pattern's snake_case name, without its parameters
    /// (`ring_reduce_scatter`): the one spelling of a phase everywhere
    /// ccc prints one (signature, DOT, explain).
    pub const fn name(&self) -> &'static str {
        match self {
            PhaseKind::RingReduceScatter { .. } => "ring_reduce_scatter",
            PhaseKind::RingAllGather { .. } => "ring_all_gather",
            PhaseKind::RingAllReduceFused => "ring_all_reduce_fused",
            PhaseKind::RingBroadcast { .. } => "ring_broadcast",
            PhaseKind::RingReduce { .. } => "ring_reduce",
            PhaseKind::RingAllToAll => "ring_all_to_all",
            PhaseKind::DirectReduceScatter => "direct_reduce_scatter",
            PhaseKind::DirectAllGather => "direct_all_gather",
            PhaseKind::DirectAllReduce => "direct_all_reduce",
            PhaseKind::DirectBroadcast { .. } => "direct_broadcast",
            PhaseKind::DirectReduce { .. } => "direct_reduce",
            PhaseKind::DirectAllToAll => "direct_all_to_all",
            PhaseKind::PointToPoint => "point_to_point",
            PhaseKind::RdhPrologue { .. } => "rdh_prologue",
            PhaseKind::RdhHalving { .. } => "rdh_halving",
            PhaseKind::RdhDoubling { .. } => "rdh_doubling",
            PhaseKind::RdhEpilogue { .. } => "rdh_epilogue",
            PhaseKind::BinomialBroadcast { .. } => "binomial_broadcast",
            PhaseKind::BinomialReduce { .. } => "binomial_reduce",
        }
    }
}

/// The signature's spelling of a phase's pattern: its [`PhaseKind::name`],
/// then its parameters as `key=value` in declaration order (numbers in
/// decimal, flags `0`/`1`, [`RdhMode`] in snake_case), separated by single
/// spaces. Signed: changing it changes every signature.
impl std::fmt::Display for PhaseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let flag = u8::from;
        f.write_str(self.name())?;
        match *self {
            PhaseKind::RingReduceScatter { bidir } | PhaseKind::RingAllGather { bidir } => {
                write!(f, " bidir={}", flag(bidir))
            }
            PhaseKind::RingBroadcast { root }
            | PhaseKind::RingReduce { root }
            | PhaseKind::DirectBroadcast { root }
            | PhaseKind::DirectReduce { root } => write!(f, " root={root}"),
            PhaseKind::RdhPrologue { mode } | PhaseKind::RdhEpilogue { mode } => write!(f, " mode={}", mode.name()),
            PhaseKind::RdhHalving { round, balanced } | PhaseKind::RdhDoubling { round, balanced } => {
                write!(f, " round={round} balanced={}", flag(balanced))
            }
            PhaseKind::BinomialBroadcast { root, round } | PhaseKind::BinomialReduce { root, round } => {
                write!(f, " root={root} round={round}")
            }
            PhaseKind::RingAllReduceFused
            | PhaseKind::RingAllToAll
            | PhaseKind::DirectReduceScatter
            | PhaseKind::DirectAllGather
            | PhaseKind::DirectAllReduce
            | PhaseKind::DirectAllToAll
            | PhaseKind::PointToPoint => Ok(()),
        }
    }
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

impl RdhMode {
    /// Its snake_case name, as the signature spells it.
    pub const fn name(self) -> &'static str {
        match self {
            RdhMode::ReduceAll => "reduce_all",
            RdhMode::GatherPiece => "gather_piece",
            RdhMode::CopyAll => "copy_all",
            RdhMode::ScatterPiece => "scatter_piece",
        }
    }
}

/// The most narrowing scopes held without an allocation: a hierarchical
/// inter leg's node scope, and under it BwOptMesh's node level (the
/// deepest nesting the algorithms compose).
pub const NARROW_INLINE: usize = 2;

/// A phase's narrowing scopes ([`Phase::narrow`]): a short list, held
/// inline (every inter-leg phase of every plan `Auto` makes has one).
pub type Narrow = ShortList<Scope, NARROW_INLINE>;

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
    pub narrow: Narrow,
    /// Steps in the phase.
    pub step_n: u32,
    /// The collective's step at which the phase starts.
    pub first_step: u32,
}

impl Phase {
    /// Whether `self` is placed around every member as `other` is: the
    /// same scope and narrowing, all that [`CollectivePlan::instance`]
    /// reads (recursive halving's rounds are all placed alike).
    ///
    /// [`CollectivePlan::instance`]: super::CollectivePlan::instance
    pub fn placed_as(&self, other: &Phase) -> bool {
        self.scope == other.scope && self.narrow == other.narrow
    }
}

/// A phase placed around one member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseInstance {
    /// The scope around the member.
    pub scope: ScopeInstance,
    /// The blocks the phase works on.
    pub universe: BlockSet,
    /// Blocks per piece: the universe's blocks over the scope's members.
    pub per_piece: u32,
}
