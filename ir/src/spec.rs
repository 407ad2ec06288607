//! The collective spec: what a user (or a framework) asks ccc to compile.
//!
//! The RON schema of `docs/interface.md` is the serde form of these
//! types: `Collective(op: AllReduce, dtype: Bf16, ...)` in a file is a
//! [`Collective`] value in code. A file may also hold a [`Program`], an
//! ordered list of collectives. Unknown fields are refused
//! (`deny_unknown_fields`) so that a misspelt key never falls back to a
//! default silently.
//!
//! These types carry what the user wrote, nothing more: validation (in the
//! compiler's `validate` pass) checks them and resolves defaults.

use crate::arch::Arch;
use crate::enums::{AlgType, OpType};
pub use crate::leg::LegAlgorithm;
use crate::model::ModelOverrides;
use serde::{Deserialize, Serialize};

/// An ordered list of collectives, lowered in order into one chain per
/// TOP_SP, signed together and diagnosed by index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    /// The collectives, in the order the model runs them.
    pub collectives: Vec<Collective>,
}

impl From<Collective> for Program {
    fn from(collective: Collective) -> Self {
        Program { collectives: vec![collective] }
    }
}

/// One collective operation over a topology.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Collective {
    /// The operation (`enc_op_type`).
    pub op: OpType,
    /// The element type.
    pub dtype: DType,
    /// The reduce operator: required for reducing ops, refused elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduce: Option<ReduceOp>,
    /// Elements in each rank's input buffer.
    pub count: u64,
    /// The NeuronCore generation.
    pub arch: Arch,
    /// Ranks, ranks per node, pods.
    pub topology: Topology,
    /// Ring channels, 1..=32.
    pub channels: u32,
    /// The algorithm: one flat choice, or one choice per hierarchical leg.
    pub algorithm: Algorithm,
    /// The root of Broadcast and Reduce (a group-local index with `groups`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<u32>,
    /// Shorthand peer map for Send/Recv/Permute: every rank r sends to
    /// `(r + peer) mod group size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<u32>,
    /// Explicit peer map for Send/Recv/Permute: `(source, target)` pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peers: Option<Vec<(u32, u32)>>,
    /// AllToAllV sizes: `counts[i][j]` elements go from member i to member j.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<Vec<u64>>>,
    /// Replica groups: the collective runs independently inside each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<Vec<u32>>>,
    /// Host barrier (default) or device barrier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub barrier: Option<Barrier>,
    /// Initial send credits per channel, 1..=511 (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_credits: Option<u32>,
    /// Cost-model overrides (`docs/cost-model.md`); only `Auto` reads them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelOverrides>,
}

/// The largest world ccc compiles (`topology.rank_n`), kept here so
/// that `parse` can say it as validation refuses it.
pub const MAX_RANK_N: u32 = 1_048_576;
/// Ring channels accepted (`channels`).
pub const CHANNELS: std::ops::RangeInclusive<u32> = 1..=32;
/// Initial send credits accepted (`send_credits`).
pub const SEND_CREDITS: std::ops::RangeInclusive<u32> = 1..=511;

/// The machine shape the collective runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Ranks in the collective.
    pub rank_n: u32,
    /// Ranks per node (a node is one instance); divides `rank_n`.
    pub local_rank_n: u32,
    /// Pods (UltraServer domains); divides the node count. Default 1.
    #[serde(default = "one")]
    pub pod_n: u32,
}

const fn one() -> u32 {
    1
}

/// The algorithm choice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Algorithm {
    /// Flat ring.
    Ring,
    /// Mesh; the sub-type is chosen from the topology.
    Mesh,
    /// Kangaring (intra-node only).
    Kangaring,
    /// Single-cycle ring (all-reduce only).
    SingleCycleRing,
    /// Recursive halving/doubling inside a node.
    IntraRdh,
    /// Single-step mesh.
    SingleStepMesh,
    /// Recursive halving/doubling across nodes.
    InterRdh,
    /// Two-step mesh: inside each pod, then across pods.
    TwoStepPodMesh,
    /// Latency-optimal mesh.
    LatencyOptMesh,
    /// Bandwidth-optimal mesh.
    BwOptMesh,
    /// Hierarchical: one choice per leg.
    Hier(HierLegs),
    /// Let the cost model choose.
    Auto,
}

impl Algorithm {
    /// The `enc_alg_type` of a flat choice; `Hier` for `Hier(..)`; `None` for `Auto`.
    pub const fn alg_type(&self) -> Option<AlgType> {
        Some(match self {
            Algorithm::Ring => AlgType::Ring,
            Algorithm::Mesh => AlgType::Mesh,
            Algorithm::Kangaring => AlgType::Kangaring,
            Algorithm::SingleCycleRing => AlgType::SingleCycleRing,
            Algorithm::IntraRdh => AlgType::IntraRdh,
            Algorithm::SingleStepMesh => AlgType::SingleStepMesh,
            Algorithm::InterRdh => AlgType::InterRdh,
            Algorithm::TwoStepPodMesh => AlgType::TwoStepPodMesh,
            Algorithm::LatencyOptMesh => AlgType::LatencyOptMesh,
            Algorithm::BwOptMesh => AlgType::BwOptMesh,
            Algorithm::Hier(_) => AlgType::Hier,
            Algorithm::Auto => return None,
        })
    }

    /// The flat algorithm for an `enc_alg_type` (`None` for HIER).
    pub const fn flat(alg: AlgType) -> Option<Algorithm> {
        Some(match alg {
            AlgType::Ring => Algorithm::Ring,
            AlgType::Mesh => Algorithm::Mesh,
            AlgType::Kangaring => Algorithm::Kangaring,
            AlgType::SingleCycleRing => Algorithm::SingleCycleRing,
            AlgType::IntraRdh => Algorithm::IntraRdh,
            AlgType::SingleStepMesh => Algorithm::SingleStepMesh,
            AlgType::InterRdh => Algorithm::InterRdh,
            AlgType::TwoStepPodMesh => Algorithm::TwoStepPodMesh,
            AlgType::LatencyOptMesh => Algorithm::LatencyOptMesh,
            AlgType::BwOptMesh => Algorithm::BwOptMesh,
            AlgType::Hier => return None,
        })
    }

    /// Whether anything is left to the cost model: the whole algorithm
    /// (`Auto`) or a leg of a `Hier((...))`.
    pub fn leaves_to_auto(&self) -> bool {
        match self {
            Algorithm::Auto => true,
            Algorithm::Hier(legs) => legs.has_auto_leg(),
            _ => false,
        }
    }
}

/// The per-leg choices of a hierarchical collective. Each op uses the legs
/// it needs; a leg given that the op does not use is an error. A leg may
/// be `Auto`: the cost model chooses it, the other legs stay as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HierLegs {
    /// Reduce-scatter among the ranks of a node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intra_reduce_scatter: Option<LegAlgorithm>,
    /// All-reduce among the ranks with the same local index, across nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_all_reduce: Option<LegAlgorithm>,
    /// Reduce-scatter across nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_reduce_scatter: Option<LegAlgorithm>,
    /// All-gather across nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_all_gather: Option<LegAlgorithm>,
    /// All-gather among the ranks of a node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intra_all_gather: Option<LegAlgorithm>,
    /// The legal sets the choices are checked against: the seed's
    /// (default), or ccc's wider set, opted into with `choices: Wide`.
    #[serde(default, skip_serializing_if = "LegChoices::is_seed")]
    pub choices: LegChoices,
}

/// The legal sets a hierarchical collective's leg choices are checked
/// against (`docs/wire-format.md` §12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum LegChoices {
    /// The runtime's own sets (seed 001 §2.7): intra legs Ring or
    /// Kangaring; inter legs Ring, InterRdh or Mesh; `inter_all_reduce`
    /// also SingleCycleRing.
    #[default]
    Seed,
    /// A \[project\] extension: `inter_all_reduce` also accepts
    /// SingleStepMesh and TwoStepPodMesh, which ccc composes and proves but
    /// the runtime's selector never picks.
    Wide,
}

impl LegChoices {
    /// Is this the default, the seed's sets?
    pub const fn is_seed(&self) -> bool {
        matches!(self, LegChoices::Seed)
    }
}

/// A hierarchical leg.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Leg {
    /// `intra_reduce_scatter`.
    IntraReduceScatter,
    /// `inter_all_reduce`.
    InterAllReduce,
    /// `inter_reduce_scatter`.
    InterReduceScatter,
    /// `inter_all_gather`.
    InterAllGather,
    /// `intra_all_gather`.
    IntraAllGather,
}

impl Leg {
    /// Every leg, in field order.
    pub const ALL: [Leg; 5] = [
        Leg::IntraReduceScatter,
        Leg::InterAllReduce,
        Leg::InterReduceScatter,
        Leg::InterAllGather,
        Leg::IntraAllGather,
    ];

    /// The RON field name.
    pub const fn field(self) -> &'static str {
        match self {
            Leg::IntraReduceScatter => "intra_reduce_scatter",
            Leg::InterAllReduce => "inter_all_reduce",
            Leg::InterReduceScatter => "inter_reduce_scatter",
            Leg::InterAllGather => "inter_all_gather",
            Leg::IntraAllGather => "intra_all_gather",
        }
    }

    /// Is this an intra-node leg?
    pub const fn is_intra(self) -> bool {
        matches!(self, Leg::IntraReduceScatter | Leg::IntraAllGather)
    }

    /// The collective the leg performs over its members.
    pub const fn op(self) -> OpType {
        match self {
            Leg::IntraReduceScatter | Leg::InterReduceScatter => OpType::ReduceScatter,
            Leg::InterAllReduce => OpType::AllReduce,
            Leg::InterAllGather | Leg::IntraAllGather => OpType::AllGather,
        }
    }
}

impl std::fmt::Display for Leg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.field())
    }
}

impl HierLegs {
    /// These legs with `leg` set to `alg`.
    #[must_use]
    pub fn with(mut self, leg: Leg, alg: impl Into<LegAlgorithm>) -> HierLegs {
        let slot = match leg {
            Leg::IntraReduceScatter => &mut self.intra_reduce_scatter,
            Leg::InterAllReduce => &mut self.inter_all_reduce,
            Leg::InterReduceScatter => &mut self.inter_reduce_scatter,
            Leg::InterAllGather => &mut self.inter_all_gather,
            Leg::IntraAllGather => &mut self.intra_all_gather,
        };
        *slot = Some(alg.into());
        self
    }

    /// The choice given for `leg`, if any.
    pub const fn get(&self, leg: Leg) -> Option<LegAlgorithm> {
        match leg {
            Leg::IntraReduceScatter => self.intra_reduce_scatter,
            Leg::InterAllReduce => self.inter_all_reduce,
            Leg::InterReduceScatter => self.inter_reduce_scatter,
            Leg::InterAllGather => self.inter_all_gather,
            Leg::IntraAllGather => self.intra_all_gather,
        }
    }

    /// Whether any leg is left to the cost model (`Auto`).
    pub fn has_auto_leg(&self) -> bool {
        Leg::ALL.iter().any(|&leg| self.get(leg) == Some(LegAlgorithm::Auto))
    }
}

/// Element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 16-bit float.
    F16,
    /// bfloat16.
    Bf16,
    /// 8-bit float, 4 exponent bits.
    F8E4M3,
    /// 8-bit float, 5 exponent bits.
    F8E5M2,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
}

impl DType {
    /// Every element type.
    pub const ALL: [DType; 13] = [
        DType::F32,
        DType::F16,
        DType::Bf16,
        DType::F8E4M3,
        DType::F8E5M2,
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
    ];

    /// Bytes per element.
    pub const fn size(self) -> u64 {
        match self {
            DType::F8E4M3 | DType::F8E5M2 | DType::I8 | DType::U8 => 1,
            DType::F16 | DType::Bf16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::I64 | DType::U64 => 8,
        }
    }

    /// Is it a floating-point type?
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::Bf16 | DType::F8E4M3 | DType::F8E5M2)
    }

    /// The ccc spelling.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "F32",
            DType::F16 => "F16",
            DType::Bf16 => "Bf16",
            DType::F8E4M3 => "F8E4M3",
            DType::F8E5M2 => "F8E5M2",
            DType::I8 => "I8",
            DType::U8 => "U8",
            DType::I16 => "I16",
            DType::U16 => "U16",
            DType::I32 => "I32",
            DType::U32 => "U32",
            DType::I64 => "I64",
            DType::U64 => "U64",
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Reduce operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ReduceOp {
    /// Sum.
    Add,
    /// Fused multiply-add.
    Fma,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Mean: a sum, scaled by 1/n after the last fold (float types only).
    Average,
}

impl ReduceOp {
    /// Every operator, in declaration order.
    pub const ALL: [ReduceOp; 5] = [ReduceOp::Add, ReduceOp::Fma, ReduceOp::Max, ReduceOp::Min, ReduceOp::Average];

    /// The ccc spelling.
    pub const fn name(self) -> &'static str {
        match self {
            ReduceOp::Add => "Add",
            ReduceOp::Fma => "Fma",
            ReduceOp::Max => "Max",
            ReduceOp::Min => "Min",
            ReduceOp::Average => "Average",
        }
    }

    /// The DMA engine's arithmetic for this reduction (`SDMA_CCETYPE`,
    /// wire-contract §2): a mean folds as a sum (its 1/n scale is applied
    /// after the last fold, not by the engine).
    pub const fn cce_type(self) -> crate::enums::CceType {
        use crate::enums::CceType;
        match self {
            ReduceOp::Add | ReduceOp::Average => CceType::Add,
            ReduceOp::Fma => CceType::Fma,
            ReduceOp::Max => CceType::Max,
            ReduceOp::Min => CceType::Min,
        }
    }
}

impl std::fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which barrier the EXEC config carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Barrier {
    /// The host arms `barrier_start`; leaders increment `barrier_done`.
    #[default]
    Host,
    /// A counted dissemination barrier run by the devices.
    Device,
}

impl Barrier {
    /// The name, as a spec writes it.
    pub const fn name(self) -> &'static str {
        match self {
            Barrier::Host => "Host",
            Barrier::Device => "Device",
        }
    }
}

impl std::fmt::Display for Barrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whole `Auto` and any `Auto` leg leave the choice to the cost
    /// model; written algorithms, flat or every leg, do not.
    #[test]
    fn what_leaves_the_choice_to_auto() {
        let written = HierLegs::default().with(Leg::IntraReduceScatter, AlgType::Ring);
        let one_left = written.clone().with(Leg::IntraAllGather, LegAlgorithm::Auto);
        assert!(Algorithm::Auto.leaves_to_auto());
        assert!(Algorithm::Hier(one_left.clone()).leaves_to_auto() && one_left.has_auto_leg());
        assert!(!Algorithm::Hier(written.clone()).leaves_to_auto() && !written.has_auto_leg());
        assert!(!Algorithm::Ring.leaves_to_auto());
    }

    /// A barrier's display name is the spelling a spec file uses for it.
    #[test]
    fn barrier_names_are_their_spec_spelling() {
        for barrier in [Barrier::Host, Barrier::Device] {
            assert_eq!(ron::from_str::<Barrier>(barrier.name()).ok(), Some(barrier));
            assert_eq!(barrier.to_string(), barrier.name());
        }
    }
}
