//! The wire enums of the vendor runtime, with their exact discriminants
//! (wire-contract §2).
//!
//! Three algorithm axes live here and must not be conflated:
//!
//! - [`DevicePattern`] (`enc_pattern_t`) is the only one on the wire: the
//!   4-bit `algo_type` of an op entry, RING or MESH.
//! - [`AlgType`] (`enc_alg_type`) is the host composer's choice: an input,
//!   part of the signature and of the logs, never packed into `algo_type`.
//! - [`MetaringType`] is derived from [`AlgType`] exactly as the reference
//!   derives it ([`MetaringType::from_alg`]).
//!
//! Each enum converts from its raw value with `TryFrom`, which fails with
//! [`UnknownValue`] naming the enum and the value; the INVALID sentinels are
//! named constants, not variants, so a value of the enum is always a real one.

use serde::{Deserialize, Serialize};

/// A raw value that is not a known discriminant of a wire enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{value} is not a known {enum_name} value")]
pub struct UnknownValue {
    /// The C name of the enum (`enc_alg_type`, ...).
    pub enum_name: &'static str,
    /// The raw value that was refused.
    pub value: u32,
}

/// Declares a wire enum: `#[repr(u8)]`, explicit discriminants, a fallible
/// conversion from the raw value, the vendor's C names and the list of all
/// values in discriminant order.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $name:ident, $c_name:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $c_variant:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[repr(u8)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $value, )+
        }

        impl $name {
            /// Every value, in discriminant order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The vendor's C name of the enum.
            pub const C_NAME: &'static str = $c_name;

            /// The raw discriminant.
            pub const fn raw(self) -> u8 {
                self as u8
            }

            /// The vendor's C name of this value.
            pub const fn c_name(self) -> &'static str {
                match self {
                    $( $name::$variant => $c_variant, )+
                }
            }

            /// The ccc spelling of this value (as in RON specs and JSON).
            pub const fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => stringify!($variant), )+
                }
            }
        }

        impl TryFrom<u32> for $name {
            type Error = UnknownValue;
            fn try_from(value: u32) -> Result<Self, UnknownValue> {
                match value {
                    $( $value => Ok($name::$variant), )+
                    _ => Err(UnknownValue { enum_name: $c_name, value }),
                }
            }
        }

        impl TryFrom<u8> for $name {
            type Error = UnknownValue;
            fn try_from(value: u8) -> Result<Self, UnknownValue> {
                Self::try_from(u32::from(value))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

wire_enum! {
    /// `enc_pattern_t`: the device pattern, the op entry's `algo_type`.
    /// It selects the live view of the 4-byte union: RING reads
    /// `channel_list`, MESH reads `sema_shift_offset`/`sema_mask`.
    DevicePattern, "enc_pattern_t" {
        /// The union holds `channel_list`.
        Ring = 0 => "ENC_PATTERN_RING",
        /// The union holds `sema_shift_offset` and `sema_mask`.
        Mesh = 1 => "ENC_PATTERN_MESH",
    }
}

impl DevicePattern {
    /// `ENC_PATTERN_INVALID`.
    pub const INVALID_RAW: u8 = 2;
}

wire_enum! {
    /// `enc_alg_type`: the host composer's algorithm (an input, never on the wire).
    AlgType, "enc_alg_type" {
        /// Flat ring.
        Ring = 0 => "ENC_ALG_RING",
        /// Hierarchical: one algorithm per intra/inter leg.
        Hier = 1 => "ENC_ALG_HIER",
        /// Mesh; its sub-type comes from the topology.
        Mesh = 2 => "ENC_ALG_MESH",
        /// Kangaring (intra-node only).
        Kangaring = 3 => "ENC_ALG_KANGARING",
        /// Single-cycle ring (all-reduce only).
        SingleCycleRing = 4 => "ENC_ALG_SINGLE_CYCLE_RING",
        /// Recursive halving/doubling inside a node.
        IntraRdh = 5 => "ENC_ALG_INTRA_RDH",
        /// Single-step mesh.
        SingleStepMesh = 6 => "ENC_ALG_SINGLE_STEP_MESH",
        /// Recursive halving/doubling across nodes.
        InterRdh = 7 => "ENC_ALG_INTER_RDH",
        /// Two-step mesh: inside each pod, then across pods.
        TwoStepPodMesh = 8 => "ENC_ALG_TWO_STEP_POD_MESH",
        /// Latency-optimal mesh.
        LatencyOptMesh = 9 => "ENC_ALG_LATENCY_OPT_MESH",
        /// Bandwidth-optimal mesh.
        BwOptMesh = 10 => "ENC_ALG_BW_OPT_MESH",
    }
}

impl AlgType {
    /// `ENC_ALG_INVALID`.
    pub const INVALID_RAW: u8 = 11;

    /// The device pattern records of this algorithm are lowered to
    /// (wire-contract §2, \[project\] family table). `None` for HIER, which
    /// is never on the wire: it is a composition of legs.
    pub const fn pattern(self) -> Option<DevicePattern> {
        match self {
            AlgType::Ring | AlgType::Kangaring | AlgType::SingleCycleRing | AlgType::InterRdh => {
                Some(DevicePattern::Ring)
            }
            AlgType::Mesh
            | AlgType::SingleStepMesh
            | AlgType::TwoStepPodMesh
            | AlgType::LatencyOptMesh
            | AlgType::BwOptMesh
            | AlgType::IntraRdh => Some(DevicePattern::Mesh),
            AlgType::Hier => None,
        }
    }
}

wire_enum! {
    /// The ring topology label derived from [`AlgType`].
    MetaringType, "metaring_type" {
        /// Plain ring.
        Ring = 0 => "RING",
        /// Kangaring.
        Kangaring = 1 => "KANGARING",
        /// Single-cycle ring.
        SingleCycleRing = 2 => "SINGLE_CYCLE_RING",
        /// Recursive halving/doubling.
        Rdh = 3 => "RDH",
    }
}

impl MetaringType {
    /// `enc_get_metaring_type`, exactly as the reference derives it: values
    /// 0..=3 give RING except KANGARING; SINGLE_CYCLE_RING and INTER_RDH map
    /// to their own labels; any other algorithm has no metaring type (the
    /// reference asserts).
    ///
    /// # Errors
    ///
    /// [`UnknownValue`] for an algorithm that has no metaring type.
    pub fn from_alg(alg: AlgType) -> Result<Self, UnknownValue> {
        match alg {
            AlgType::Kangaring => Ok(MetaringType::Kangaring),
            AlgType::Ring | AlgType::Hier | AlgType::Mesh => Ok(MetaringType::Ring),
            AlgType::SingleCycleRing => Ok(MetaringType::SingleCycleRing),
            AlgType::InterRdh => Ok(MetaringType::Rdh),
            other => Err(UnknownValue { enum_name: "metaring_type", value: u32::from(other.raw()) }),
        }
    }
}

wire_enum! {
    /// `enc_alg_mesh_type`: the sub-type of a MESH record.
    MeshType, "enc_alg_mesh_type" {
        /// All members inside one node (Sunda, Mariana, MarianaPlus).
        FullMesh = 0 => "ENC_ALG_FULL_MESH",
        /// Members on several nodes of one pod.
        GroupedMesh = 1 => "ENC_ALG_GROUPED_MESH",
        /// All members inside one node (Cayman, whose NeuronCore-v3 is
        /// Trainium2's core).
        MeshTrn2 = 2 => "ENC_ALG_MESH_TRN2",
        /// Members on several pods, through the switch.
        MeshSwitch = 3 => "ENC_ALG_MESH_SWITCH",
    }
}

impl MeshType {
    /// `ENC_ALG_MESH_INVALID`.
    pub const INVALID_RAW: u8 = 4;
}

wire_enum! {
    /// `enc_op_type` (prefix `ENC_`): the collective operation as the spec
    /// names it and the wire carries it. (The compiler has two narrower op
    /// enums for its own roles: `schedule::OpKind`, what an op does to the
    /// buffers, and `algorithms::ScopeOp`, what one composition step does
    /// over one scope.)
    OpType, "enc_op_type" {
        /// Every rank gets every rank's buffer.
        AllGather = 0 => "ENC_ALLGATHER",
        /// Every rank gets the reduction of every rank's buffer.
        AllReduce = 1 => "ENC_ALLREDUCE",
        /// Every rank gets the root's buffer.
        Broadcast = 2 => "ENC_BROADCAST",
        /// The root gets the reduction of every rank's buffer.
        Reduce = 3 => "ENC_REDUCE",
        /// Rank r gets the reduction of chunk r.
        ReduceScatter = 4 => "ENC_REDUCE_SCATTER",
        /// Point-to-point, seen from the sender.
        Send = 5 => "ENC_SEND",
        /// Point-to-point, seen from the receiver.
        Recv = 6 => "ENC_RECV",
        /// Rank r gets chunk r of every rank.
        AllToAll = 7 => "ENC_ALLTOALL",
        /// Each source sends its buffer to its target.
        Permute = 8 => "ENC_PERMUTE",
        /// Each target reduces its source's buffer into its own.
        PermuteReduce = 9 => "ENC_PERMUTE_REDUCE",
        /// Permute with implicit peers (accepted, lowered as Permute).
        PermuteImplicit = 10 => "ENC_PERMUTE_IMPLICIT",
        /// PermuteReduce with implicit peers (accepted, lowered as PermuteReduce).
        PermuteReduceImplicit = 11 => "ENC_PERMUTE_REDUCE_IMPLICIT",
        /// AllToAll with a size per (source, target) pair.
        AllToAllV = 12 => "ENC_ALLTOALL_V",
    }
}

impl OpType {
    /// `ENC_OP_INVALID` (alias `ENC_OP_N`).
    pub const INVALID_RAW: u8 = 13;

    /// Does the op combine contributions (and so need a reduce operator)?
    pub const fn is_reducing(self) -> bool {
        matches!(
            self,
            OpType::AllReduce
                | OpType::Reduce
                | OpType::ReduceScatter
                | OpType::PermuteReduce
                | OpType::PermuteReduceImplicit
        )
    }

    /// Does the op take a root?
    pub const fn is_rooted(self) -> bool {
        matches!(self, OpType::Broadcast | OpType::Reduce)
    }

    /// Does the op take a peer map (`peers` or `peer`)?
    pub const fn takes_peers(self) -> bool {
        matches!(
            self,
            OpType::Send
                | OpType::Recv
                | OpType::Permute
                | OpType::PermuteReduce
                | OpType::PermuteImplicit
                | OpType::PermuteReduceImplicit
        )
    }
}

wire_enum! {
    /// `SDMA_CCETYPE`: the reduce arithmetic. It rides the DMA engine's
    /// CCE descriptor, which the runtime builds, never the op entry: ccc
    /// writes no field of this type, and names it so that its values are
    /// the contract's ([`ReduceOp::cce_type`](crate::spec::ReduceOp::cce_type)
    /// says which a reduction asks for).
    CceType, "SDMA_CCETYPE" {
        /// Add.
        Add = 0 => "SDMA_CCETYPE_ADD",
        /// Fused multiply-add.
        Fma = 1 => "SDMA_CCETYPE_FMA",
        /// Maximum.
        Max = 2 => "SDMA_CCETYPE_MAX",
        /// Minimum.
        Min = 3 => "SDMA_CCETYPE_MIN",
        /// Extension.
        Ext = 4 => "SDMA_CCETYPE_EXT",
        /// GCE.
        Gce = 5 => "SDMA_CCETYPE_GCE",
    }
}

wire_enum! {
    /// `reduction_type_t`: the fold's access pattern, not an operator.
    ReductionType, "reduction_type_t" {
        /// Read two (local, incoming), write one.
        Ring2R1W = 0 => "RING_2R1W",
        /// Read two, write two (the result and the forwarding buffer).
        Ring2R2W = 1 => "RING_2R2W",
        /// Read N, write one.
        KangaringNR1W = 2 => "KANGARING_NR1W",
    }
}

wire_enum! {
    /// `encd_neigh`: which neighbour a transfer goes to, as seen by the sender.
    Neigh, "encd_neigh" {
        /// This rank itself (a local copy).
        Local = 0 => "ENCD_NEIGH_LOCAL",
        /// The next member of a ring.
        Next = 1 => "ENCD_NEIGH_NEXT",
        /// The previous member of a ring.
        Prev = 2 => "ENCD_NEIGH_PREV",
        /// The node's gateway.
        Gateway = 3 => "ENCD_NEIGH_GATEWAY",
        /// A peer on another node of the same pod.
        PeerRmtv = 4 => "ENCD_NEIGH_PEER_RMTV",
        /// A peer on another pod.
        PeerRmtv2 = 5 => "ENCD_NEIGH_PEER_RMTV2",
        /// A peer on the same node.
        PeerLocal = 6 => "ENCD_NEIGH_PEER_LOCAL",
        /// The next member's remote peer.
        NextPeerRmtv = 7 => "ENCD_NEIGH_NEXT_PEER_RMTV",
    }
}

impl Neigh {
    /// `ENCD_NEIGH_INVALID` (alias `ENCD_NEIGH_NUM`).
    pub const INVALID_RAW: u8 = 8;
}

wire_enum! {
    /// `enc_half_chunk_index`: a chunk is pipelined in two halves.
    HalfChunk, "enc_half_chunk_index" {
        /// The first half.
        H0 = 0 => "CHUNK_H0",
        /// The second half.
        H1 = 1 => "CHUNK_H1",
    }
}

impl HalfChunk {
    /// `ENC_CHUNK_SPLIT_N`: halves per chunk.
    pub const SPLIT_N: u8 = 2;
}

wire_enum! {
    /// `notification_type`: the kinds of notification-queue entries.
    NotificationType, "notification_type" {
        /// Trace.
        Trace = 0 => "NOTIFICATION_TYPE_TRACE",
        /// Event.
        Event = 1 => "NOTIFICATION_TYPE_EVENT",
        /// Error.
        Error = 2 => "NOTIFICATION_TYPE_ERROR",
        /// Inference status.
        InferStatus = 3 => "NOTIFICATION_TYPE_INFER_STATUS",
        /// DMA.
        Dma = 4 => "NOTIFICATION_TYPE_DMA",
        /// Throttle.
        Throttle = 5 => "NOTIFICATION_TYPE_THROTTLE",
        /// TOP_SP trace.
        TopspTrace = 6 => "NOTIFICATION_TYPE_TOPSP_TRACE",
        /// TOP_SP event.
        TopspEvent = 7 => "NOTIFICATION_TYPE_TOPSP_EVENT",
        /// TOP_SP error.
        TopspError = 8 => "NOTIFICATION_TYPE_TOPSP_ERROR",
        /// One per cc_op record per TOP_SP; the host counts them.
        TopspCcStatus = 9 => "NOTIFICATION_TYPE_TOPSP_CC_STATUS",
    }
}

impl NotificationType {
    /// `NOTIFICATION_TYPE_MAX`.
    pub const MAX_RAW: u8 = 10;
}

#[cfg(test)]
mod tests {
    use super::*;

    // Discriminants written from wire-contract §2 by hand.
    #[test]
    fn discriminants_match_the_contract() {
        let alg: Vec<(AlgType, u8)> = vec![
            (AlgType::Ring, 0),
            (AlgType::Hier, 1),
            (AlgType::Mesh, 2),
            (AlgType::Kangaring, 3),
            (AlgType::SingleCycleRing, 4),
            (AlgType::IntraRdh, 5),
            (AlgType::SingleStepMesh, 6),
            (AlgType::InterRdh, 7),
            (AlgType::TwoStepPodMesh, 8),
            (AlgType::LatencyOptMesh, 9),
            (AlgType::BwOptMesh, 10),
        ];
        for (v, raw) in alg {
            assert_eq!(v.raw(), raw, "{v:?}");
            assert_eq!(AlgType::try_from(raw), Ok(v));
        }
        assert!(AlgType::try_from(AlgType::INVALID_RAW).is_err());

        let ops: Vec<(OpType, u8)> = vec![
            (OpType::AllGather, 0),
            (OpType::AllReduce, 1),
            (OpType::Broadcast, 2),
            (OpType::Reduce, 3),
            (OpType::ReduceScatter, 4),
            (OpType::Send, 5),
            (OpType::Recv, 6),
            (OpType::AllToAll, 7),
            (OpType::Permute, 8),
            (OpType::PermuteReduce, 9),
            (OpType::PermuteImplicit, 10),
            (OpType::PermuteReduceImplicit, 11),
            (OpType::AllToAllV, 12),
        ];
        for (v, raw) in ops {
            assert_eq!(v.raw(), raw, "{v:?}");
            assert_eq!(OpType::try_from(raw), Ok(v));
        }
        assert!(OpType::try_from(13u8).is_err());

        assert_eq!((DevicePattern::Ring.raw(), DevicePattern::Mesh.raw()), (0, 1));
        assert!(DevicePattern::try_from(2u8).is_err());
        let mesh = [MeshType::FullMesh, MeshType::GroupedMesh, MeshType::MeshTrn2, MeshType::MeshSwitch];
        assert_eq!(mesh.map(MeshType::raw), [0, 1, 2, 3]);
        let cce = [CceType::Add, CceType::Fma, CceType::Max, CceType::Min, CceType::Ext, CceType::Gce];
        assert_eq!(cce.map(CceType::raw), [0, 1, 2, 3, 4, 5]);
        assert!(CceType::try_from(6u8).is_err());
        assert!(MeshType::try_from(MeshType::INVALID_RAW).is_err());
        // A reduction's arithmetic, by hand from the contract's values.
        let ops = crate::spec::ReduceOp::ALL.map(|op| op.cce_type().raw());
        assert_eq!(ops, [0, 1, 2, 3, 0]);
        assert_eq!(CceType::Gce.c_name(), "SDMA_CCETYPE_GCE");
        let red = [ReductionType::Ring2R1W, ReductionType::Ring2R2W, ReductionType::KangaringNR1W];
        assert_eq!(red.map(ReductionType::raw), [0, 1, 2]);
        let neigh = [
            Neigh::Local,
            Neigh::Next,
            Neigh::Prev,
            Neigh::Gateway,
            Neigh::PeerRmtv,
            Neigh::PeerRmtv2,
            Neigh::PeerLocal,
            Neigh::NextPeerRmtv,
        ];
        assert_eq!(neigh.map(Neigh::raw), [0, 1, 2, 3, 4, 5, 6, 7]);
        assert!(Neigh::try_from(8u8).is_err());
        assert_eq!((HalfChunk::H0.raw(), HalfChunk::H1.raw()), (0, 1));
        assert_eq!(NotificationType::TopspCcStatus.raw(), 9);
        let meta = [MetaringType::Ring, MetaringType::Kangaring, MetaringType::SingleCycleRing, MetaringType::Rdh];
        assert_eq!(meta.map(MetaringType::raw), [0, 1, 2, 3]);
    }

    #[test]
    fn metaring_type_is_derived_as_the_reference_does() {
        use AlgType::*;
        assert_eq!(MetaringType::from_alg(Ring), Ok(MetaringType::Ring));
        assert_eq!(MetaringType::from_alg(Hier), Ok(MetaringType::Ring));
        assert_eq!(MetaringType::from_alg(Mesh), Ok(MetaringType::Ring));
        assert_eq!(MetaringType::from_alg(Kangaring), Ok(MetaringType::Kangaring));
        assert_eq!(MetaringType::from_alg(SingleCycleRing), Ok(MetaringType::SingleCycleRing));
        assert_eq!(MetaringType::from_alg(InterRdh), Ok(MetaringType::Rdh));
        for alg in [IntraRdh, SingleStepMesh, TwoStepPodMesh, LatencyOptMesh, BwOptMesh] {
            assert!(MetaringType::from_alg(alg).is_err(), "{alg:?}");
        }
    }

    #[test]
    fn every_algorithm_but_hier_has_one_device_pattern() {
        for &alg in AlgType::ALL {
            assert_eq!(alg.pattern().is_none(), alg == AlgType::Hier, "{alg:?}");
        }
        // Metaring algorithms are RING-pattern; the rest are MESH-pattern.
        for &alg in AlgType::ALL {
            if alg == AlgType::Hier {
                continue;
            }
            let metaring =
                matches!(alg, AlgType::Ring | AlgType::Kangaring | AlgType::SingleCycleRing | AlgType::InterRdh);
            let want = if metaring { DevicePattern::Ring } else { DevicePattern::Mesh };
            assert_eq!(alg.pattern(), Some(want), "{alg:?}");
        }
    }
}
