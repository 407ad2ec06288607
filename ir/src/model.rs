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
//!
//! [`ModelParams`] is the parameter table itself, one per architecture,
//! each value with its unit and source. Sources are tagged as in the rest
//! of ccc: \[public\] a public AWS page (named in `docs/cost-model.md`),
//! \[fitted\] fitted to the public nccom-test figures listed there,
//! \[project\] ccc's own assumption where nothing public says.

use crate::arch::Arch;
use serde::{Deserialize, Serialize};

/// Overrides of the cost model's parameters (all optional).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelOverrides {
    /// Fixed cost of launching one collective, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_ns: Option<u64>,
    /// Fixed cost of launching one collective whose members span nodes,
    /// on top of `launch_ns` (the runtime's network proxy), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_inter_ns: Option<u64>,
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
    pub fn fields(&self) -> [(&'static str, Option<u64>); 12] {
        [
            ("launch_ns", self.launch_ns),
            ("launch_inter_ns", self.launch_inter_ns),
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

/// Bytes per second in one GB/s (the decimal unit of the AWS pages).
const GB: f64 = 1e9;
/// Nanoseconds per second.
const NS_PER_S: f64 = 1e9;

/// The parameters of the model, in SI-friendly units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ModelParams {
    /// Fixed cost of one collective (launch, host proxy, final barrier), ns.
    pub launch_ns: f64,
    /// Fixed cost added to a collective whose members span nodes (the
    /// runtime's network proxy set-up), ns.
    pub launch_inter_ns: f64,
    /// α of a step inside a node, ns.
    pub alpha_intra_ns: f64,
    /// α of a step that crosses nodes inside a pod, ns.
    pub alpha_inter_ns: f64,
    /// α of a step that crosses pods, ns.
    pub alpha_pod_ns: f64,
    /// Intra-node bandwidth one rank can inject, bytes/s.
    pub link_intra: f64,
    /// Network bandwidth of one node, shared by its concurrent flows, bytes/s.
    pub node_inter: f64,
    /// DMA bandwidth of one TOP_SP, bytes/s (channels spread over TOP_SPs).
    pub dma: f64,
    /// Reduction throughput of one rank, elements/s (γ = 1 / this).
    pub reduce_elems: f64,
    /// Cost of one DMA descriptor on one TOP_SP, ns.
    pub desc_ns: f64,
    /// Cost of each incoming peer beyond the first in one step, ns.
    pub fanin_ns: f64,
    /// The most links an intra-node transfer crosses (the diameter of the
    /// node's chip network; see `predict::ring_hops`).
    pub hops_max: f64,
}

/// Trn1 (NeuronCore-v2, 32 ranks per trn1.32xlarge): EFA 800 Gbps per
/// instance \[public\]; DMA 1 TB/s per chip of two cores, 8 TOP_SPs
/// \[public\]; the launch cost and intra-node α \[fitted\] to nccom-test's
/// 8/32-rank all-gathers, the multi-node launch cost to its 64-rank
/// all-reduce's small sizes, the inter-node α a few µs \[project\] (a
/// network hop's latency); the intra-node link \[fitted\] to
/// that all-reduce's large sizes (NeuronLink-v2's per-link figure is not
/// published); `docs/cost-model.md` §5 says which figure fits which.
const SUNDA: ModelParams = ModelParams {
    launch_ns: 5_000.0,
    launch_inter_ns: 650_000.0,
    alpha_intra_ns: 200.0,
    alpha_inter_ns: 5_000.0,
    alpha_pod_ns: 10_000.0,
    link_intra: 50.0 * GB,
    node_inter: 100.0 * GB,
    dma: 125.0 * GB,
    reduce_elems: 100e9,
    desc_ns: 2.0,
    fanin_ns: 35.0,
    hops_max: 4.0,
};

/// Trn2 (NeuronCore-v3): 4 NeuronLink-v3 and 128 DMA engines per chip
/// \[public\], but no per-link rate: link, network (400 GB/s per node) and
/// DMA rates are \[project\], latencies Trn1's \[project\].
const CAYMAN: ModelParams =
    ModelParams { link_intra: 80.0 * GB, node_inter: 400.0 * GB, dma: 90.0 * GB, reduce_elems: 100e9, ..SUNDA };

/// Trn3 (NeuronCore-v4): NeuronLink-v4 2.56 TB/s and DMA 4.9 TB/s per
/// chip of eight cores \[public\]; the per-rank link and DMA rates derived
/// from them, network and latencies as Trn2 \[project\].
const MARIANA: ModelParams = ModelParams { link_intra: 160.0 * GB, dma: 150.0 * GB, ..CAYMAN };

/// NeuronCore-v4+: Mariana's numbers \[project\].
const MARIANA_PLUS: ModelParams = MARIANA;

impl ModelParams {
    /// The table of an architecture.
    pub const fn of(arch: Arch) -> ModelParams {
        match arch {
            Arch::Sunda => SUNDA,
            Arch::Cayman => CAYMAN,
            Arch::Mariana => MARIANA,
            Arch::MarianaPlus => MARIANA_PLUS,
        }
    }

    /// The table of `arch` with `overrides` applied.
    pub fn with(arch: Arch, overrides: Option<&ModelOverrides>) -> ModelParams {
        let mut p = ModelParams::of(arch);
        let Some(o) = overrides else { return p };
        let ns = |v: Option<u64>, d: f64| v.map_or(d, |v| v as f64);
        let rate = |v: Option<u64>, d: f64| v.map_or(d, |v| v as f64 * 1e6);
        p.launch_ns = ns(o.launch_ns, p.launch_ns);
        p.launch_inter_ns = ns(o.launch_inter_ns, p.launch_inter_ns);
        p.alpha_intra_ns = ns(o.alpha_intra_ns, p.alpha_intra_ns);
        p.alpha_inter_ns = ns(o.alpha_inter_ns, p.alpha_inter_ns);
        p.alpha_pod_ns = ns(o.alpha_pod_ns, p.alpha_pod_ns);
        p.link_intra = rate(o.link_intra_mbps, p.link_intra);
        p.node_inter = rate(o.node_inter_mbps, p.node_inter);
        p.dma = rate(o.dma_mbps, p.dma);
        p.reduce_elems = rate(o.reduce_melems, p.reduce_elems);
        p.desc_ns = ns(o.desc_ns, p.desc_ns);
        p.fanin_ns = ns(o.fanin_ns, p.fanin_ns);
        p.hops_max = o.hops_max.map_or(p.hops_max, |v| v as f64);
        p
    }

    /// Nanoseconds to move `bytes` at `rate` bytes/s.
    pub fn ns_at(bytes: f64, rate: f64) -> f64 {
        if rate > 0.0 { bytes / rate * NS_PER_S } else { f64::INFINITY }
    }
}

/// The accepted range of each override: rates and latencies must be
/// positive where they divide (bandwidths, throughput) and finite.
pub const OVERRIDE_MAX: u64 = 1_000_000_000_000;

/// Which overrides are divisors (0 would mean an infinitely slow link).
pub fn override_min(field: &str) -> u64 {
    match field {
        "link_intra_mbps" | "node_inter_mbps" | "dma_mbps" | "reduce_melems" | "hops_max" => 1,
        _ => 0,
    }
}
