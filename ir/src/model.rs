//! The optional `model: (...)` block of a collective: overrides of the
//! cost model's per-architecture parameters, so that a user can calibrate
//! `algorithm: Auto` to their cluster (`docs/cost-model.md`).
//!
//! Every field is optional and a whole number in the unit its name ends
//! with (`_ns` nanoseconds, `_mbps` 10^6 bytes per second, `_melems` 10^6
//! elements per second): integers keep specs, manifests and choices exact
//! and deterministic. A field left out keeps the architecture's value.
//! The block never enters the signature: it can change only which
//! algorithm `Auto` picks, and the picked algorithm is signed.

use serde::{Deserialize, Serialize};

/// Overrides of the cost model's parameters (all optional).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelOverrides {
    /// Fixed cost of launching one collective, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_ns: Option<u64>,
    /// Per-step latency of a step whose transfers stay inside a node, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_intra_ns: Option<u64>,
    /// Per-step latency of a step with a transfer between nodes of a pod, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_inter_ns: Option<u64>,
    /// Per-step latency of a step with a transfer between pods, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_pod_ns: Option<u64>,
    /// Intra-node link bandwidth one rank can inject, 10^6 B/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_intra_mbps: Option<u64>,
    /// Network bandwidth of one node (instance), shared by its flows, 10^6 B/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_inter_mbps: Option<u64>,
    /// DMA bandwidth of one TOP_SP's channels, 10^6 B/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dma_mbps: Option<u64>,
    /// Reduction throughput of one rank, 10^6 elements per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduce_melems: Option<u64>,
    /// Cost of one DMA descriptor on one TOP_SP, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desc_ns: Option<u64>,
    /// Cost of each incoming peer beyond the first in one step (semaphore
    /// waits, fan-in congestion), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fanin_ns: Option<u64>,
    /// The most links an intra-node transfer crosses (the diameter of the
    /// node's chip network), a count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops_max: Option<u64>,
}

impl ModelOverrides {
    /// Every field's RON name and value, in declaration order.
    pub fn fields(&self) -> [(&'static str, Option<u64>); 11] {
        [
            ("launch_ns", self.launch_ns),
            ("alpha_intra_ns", self.alpha_intra_ns),
            ("alpha_inter_ns", self.alpha_inter_ns),
            ("alpha_pod_ns", self.alpha_pod_ns),
            ("link_intra_mbps", self.link_intra_mbps),
            ("node_inter_mbps", self.node_inter_mbps),
            ("dma_mbps", self.dma_mbps),
            ("reduce_melems", self.reduce_melems),
            ("desc_ns", self.desc_ns),
            ("fanin_ns", self.fanin_ns),
            ("hops_max", self.hops_max),
        ]
    }
}
