//! Building a spec in code: constructors and chained setters for the
//! [`crate::spec`] types, so that a program states what it asks for and
//! nothing else.
//!
//! ```
//! use ccc_ir::arch::Arch;
//! use ccc_ir::enums::{AlgType, OpType};
//! use ccc_ir::spec::{Collective, DType, HierLegs, ReduceOp, Topology};
//!
//! let ring = Collective::new(OpType::AllReduce, DType::F32, 1 << 20, Arch::Cayman, Topology::new(8, 8))
//!     .reduce(ReduceOp::Add)
//!     .channels(2)
//!     .algorithm(AlgType::Ring);
//! let hier = Collective::new(OpType::AllReduce, DType::Bf16, 4_194_304, Arch::Cayman, Topology::new(32, 16))
//!     .reduce(ReduceOp::Add)
//!     .algorithm(HierLegs::new().intra_reduce_scatter(AlgType::Ring).inter_all_reduce(AlgType::SingleCycleRing));
//! assert_eq!(ring.channels, 2);
//! assert_eq!(hier.root, None);
//! ```
//!
//! **One algorithm vocabulary.** An algorithm is named by [`AlgType`] (the
//! runtime's `enc_alg_type`, whose variants are the RON names) wherever it
//! is chosen: a flat collective's `.algorithm(AlgType::Ring)` and a Hier
//! leg's `.intra_reduce_scatter(AlgType::Ring)` alike. [`Algorithm`] stays
//! the serde form of the RON `algorithm:` field (a flat name, `Hier((...))`
//! or `Auto`), so no RON spelling, byte or signature changes; `From`
//! conversions turn an [`AlgType`] or a [`HierLegs`] into the
//! [`Algorithm`] a setter needs, so code never has to pick between two
//! enums with the same variant names.
//!
//! Nothing here checks the values: `validate` does, reporting every problem
//! at once, exactly as for a RON file.

use crate::arch::Arch;
use crate::enums::{AlgType, OpType};
use crate::spec::{Algorithm, Barrier, Collective, DType, HierLegs, LegAlgorithm, ReduceOp, Topology};

impl Collective {
    /// A collective with what every op needs: one channel, no reduce
    /// operator, and `Algorithm::Auto` until [`Collective::algorithm`]
    /// chooses one (`Auto` lets the cost model choose). Everything optional is unset, as in a
    /// RON file that does not mention it.
    pub fn new(op: OpType, dtype: DType, count: u64, arch: Arch, topology: Topology) -> Collective {
        Collective {
            op,
            dtype,
            reduce: None,
            count,
            arch,
            topology,
            channels: 1,
            algorithm: Algorithm::Auto,
            root: None,
            peer: None,
            peers: None,
            counts: None,
            groups: None,
            barrier: None,
            send_credits: None,
            model: None,
        }
    }

    /// Sets the reduce operator (required for reducing ops).
    #[must_use]
    pub fn reduce(mut self, reduce: ReduceOp) -> Collective {
        self.reduce = Some(reduce);
        self
    }

    /// Sets the number of ring channels (1..=32).
    #[must_use]
    pub fn channels(mut self, channels: u32) -> Collective {
        self.channels = channels;
        self
    }

    /// Sets the algorithm: an [`AlgType`] for a flat choice, a [`HierLegs`]
    /// for a hierarchical one, or an [`Algorithm`].
    #[must_use]
    pub fn algorithm(mut self, algorithm: impl Into<Algorithm>) -> Collective {
        self.algorithm = algorithm.into();
        self
    }

    /// Sets the root of Broadcast and Reduce.
    #[must_use]
    pub fn root(mut self, root: u32) -> Collective {
        self.root = Some(root);
        self
    }

    /// Sets the shorthand peer map of Send/Recv/Permute: rank r sends to
    /// `(r + peer) mod group size`.
    #[must_use]
    pub fn peer(mut self, peer: u32) -> Collective {
        self.peer = Some(peer);
        self
    }

    /// Sets the explicit peer map of Send/Recv/Permute: `(source, target)`
    /// pairs.
    #[must_use]
    pub fn peers(mut self, peers: impl IntoIterator<Item = (u32, u32)>) -> Collective {
        self.peers = Some(peers.into_iter().collect());
        self
    }

    /// Sets the AllToAllV sizes: `counts[i][j]` elements go from member i to
    /// member j.
    #[must_use]
    pub fn counts(mut self, counts: Vec<Vec<u64>>) -> Collective {
        self.counts = Some(counts);
        self
    }

    /// Sets the replica groups: the collective runs inside each.
    #[must_use]
    pub fn groups(mut self, groups: Vec<Vec<u32>>) -> Collective {
        self.groups = Some(groups);
        self
    }

    /// Sets the barrier (default: the host barrier).
    #[must_use]
    pub fn barrier(mut self, barrier: Barrier) -> Collective {
        self.barrier = Some(barrier);
        self
    }

    /// Sets the initial send credits per channel (1..=511, default 2).
    #[must_use]
    pub fn send_credits(mut self, send_credits: u32) -> Collective {
        self.send_credits = Some(send_credits);
        self
    }

    /// Sets the cost-model overrides `Auto` chooses with.
    #[must_use]
    pub fn model(mut self, model: crate::model::ModelOverrides) -> Collective {
        self.model = Some(model);
        self
    }
}

impl Topology {
    /// `rank_n` ranks, `local_rank_n` of them per node, one pod.
    pub const fn new(rank_n: u32, local_rank_n: u32) -> Topology {
        Topology { rank_n, local_rank_n, pod_n: 1 }
    }

    /// Sets the number of pods (it divides the node count).
    #[must_use]
    pub const fn pods(mut self, pod_n: u32) -> Topology {
        self.pod_n = pod_n;
        self
    }
}

impl HierLegs {
    /// No leg chosen yet; each setter chooses one. Each op uses the legs it
    /// needs, and `validate` names a missing or an extra one.
    pub fn new() -> HierLegs {
        HierLegs::default()
    }

    /// Chooses the reduce-scatter among the ranks of a node.
    #[must_use]
    pub fn intra_reduce_scatter(mut self, alg: impl Into<LegAlgorithm>) -> HierLegs {
        self.intra_reduce_scatter = Some(alg.into());
        self
    }

    /// Chooses the all-reduce across nodes.
    #[must_use]
    pub fn inter_all_reduce(mut self, alg: impl Into<LegAlgorithm>) -> HierLegs {
        self.inter_all_reduce = Some(alg.into());
        self
    }

    /// Chooses the reduce-scatter across nodes.
    #[must_use]
    pub fn inter_reduce_scatter(mut self, alg: impl Into<LegAlgorithm>) -> HierLegs {
        self.inter_reduce_scatter = Some(alg.into());
        self
    }

    /// Chooses the all-gather across nodes.
    #[must_use]
    pub fn inter_all_gather(mut self, alg: impl Into<LegAlgorithm>) -> HierLegs {
        self.inter_all_gather = Some(alg.into());
        self
    }

    /// Chooses the all-gather among the ranks of a node.
    #[must_use]
    pub fn intra_all_gather(mut self, alg: impl Into<LegAlgorithm>) -> HierLegs {
        self.intra_all_gather = Some(alg.into());
        self
    }
}

/// A flat algorithm by its one name: `AlgType::Ring` is `Algorithm::Ring`.
/// `AlgType::Hier` names no legs, so it becomes `Hier` with none chosen,
/// which `validate` refuses by naming the legs the op needs; pass a
/// [`HierLegs`] instead.
impl From<AlgType> for Algorithm {
    fn from(alg: AlgType) -> Algorithm {
        Algorithm::flat(alg).unwrap_or_else(|| Algorithm::Hier(HierLegs::default()))
    }
}

/// A hierarchical algorithm: `Algorithm::Hier(legs)`.
impl From<HierLegs> for Algorithm {
    fn from(legs: HierLegs) -> Algorithm {
        Algorithm::Hier(legs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flat_name_is_the_same_algorithm() {
        for &alg in AlgType::ALL {
            let converted = Algorithm::from(alg);
            match Algorithm::flat(alg) {
                Some(flat) => assert_eq!(converted, flat),
                None => assert_eq!(converted, Algorithm::Hier(HierLegs::default())),
            }
            assert_eq!(converted.alg_type(), Some(alg));
        }
    }

    #[test]
    fn the_builder_is_the_struct_literal() {
        let built = Collective::new(OpType::AllReduce, DType::Bf16, 4096, Arch::Cayman, Topology::new(32, 16).pods(2))
            .reduce(ReduceOp::Add)
            .channels(4)
            .algorithm(HierLegs::new().intra_reduce_scatter(AlgType::Ring).inter_all_reduce(AlgType::InterRdh))
            .groups(vec![(0..32).collect()])
            .barrier(Barrier::Device)
            .send_credits(3);
        let literal = Collective {
            op: OpType::AllReduce,
            dtype: DType::Bf16,
            reduce: Some(ReduceOp::Add),
            count: 4096,
            arch: Arch::Cayman,
            topology: Topology { rank_n: 32, local_rank_n: 16, pod_n: 2 },
            channels: 4,
            algorithm: Algorithm::Hier(HierLegs {
                intra_reduce_scatter: Some(AlgType::Ring.into()),
                inter_all_reduce: Some(AlgType::InterRdh.into()),
                ..HierLegs::default()
            }),
            root: None,
            peer: None,
            peers: None,
            counts: None,
            groups: Some(vec![(0..32).collect()]),
            barrier: Some(Barrier::Device),
            send_credits: Some(3),
            model: None,
        };
        assert_eq!(built, literal);
        let permute = Collective::new(OpType::Permute, DType::F32, 1, Arch::Sunda, Topology::new(2, 2))
            .peers([(0, 1), (1, 0)])
            .peer(1)
            .root(0)
            .counts(vec![vec![1]]);
        assert_eq!(permute.peers, Some(vec![(0, 1), (1, 0)]));
        assert_eq!((permute.peer, permute.root, permute.counts), (Some(1), Some(0), Some(vec![vec![1]])));
        assert_eq!(permute.algorithm, Algorithm::Auto);
        assert_eq!(permute.channels, 1);
    }
}
