//! Why a rank could not be lowered: a device limit the schedule exceeds
//! (with what to change in the spec), or a schedule `build` did not make.

use crate::placement::DEVICE_BARRIER_MAX_RANK_N;
use ccc_ir::id::{CollectiveIdx, Rank, Step, TopSp};
use ccc_ir::wire::neff_configs::DEVICE_STEPS_N;
use serde::Serialize;
use std::fmt;

/// A limit of the device that a schedule exceeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Limit {
    /// Mesh events per TOP_SP.
    MeshEvents,
    /// Increments one mesh event counts (u16).
    MeshEventTarget,
    /// Descriptors one tp_inc_steps increment posts (`VAL_MASK`).
    TpIncrement,
    /// END marks per TOP_SP (`tpb_compl_addr_num` is a u8).
    CompletionAddresses,
    /// Collectives per program (`function_n` is a u16).
    Functions,
    /// Records per TOP_SP (`op_num` is a u32).
    Records,
    /// Semaphores per EVT_SEM window.
    SemaphoreIndex,
}

impl Limit {
    /// What to change in the spec when the limit is exceeded on `arch`.
    pub fn advice(self, arch: ccc_ir::arch::Arch) -> String {
        let fixed = match self {
            Limit::MeshEvents => {
                "a MESH record waits on one event per sending peer, and a TOP_SP's table serves the whole \
                 program: choose Ring or a Hier algorithm with no Mesh leg, mesh over fewer ranks, or split the \
                 program"
            }
            Limit::MeshEventTarget => {
                "one peer sends more half-chunks in one mesh step than an event counts: use fewer channels \
                 or a ring algorithm"
            }
            // More channels spread a step's descriptors over more TOP_SPs,
            // up to the arch's.
            Limit::TpIncrement => {
                return format!(
                    "one step posts more 64 KiB descriptors than the increment register holds: a smaller \
                     count, more channels while the collective has fewer than the {} TOP_SPs of {arch} (each \
                     TOP_SP posts its channels' share), an algorithm with fewer peers per step where this one \
                     meshes (a ring or Hier), or splitting the collective",
                    arch.params().topsp_n
                );
            }
            Limit::CompletionAddresses | Limit::Functions | Limit::Records => "split the program into smaller ones",
            Limit::SemaphoreIndex => "this is a ccc defect; please report it with the spec",
        };
        fixed.to_owned()
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::MeshEvents => "mesh events per TOP_SP",
            Limit::MeshEventTarget => "increments per mesh event",
            Limit::TpIncrement => "descriptors per tp_inc_steps increment (VAL_MASK)",
            Limit::CompletionAddresses => "END marks per TOP_SP (tpb_compl_addr_num)",
            Limit::Functions => "collectives per program (function_n)",
            Limit::Records => "records per TOP_SP (op_num)",
            Limit::SemaphoreIndex => "semaphores per EVT_SEM window",
        })
    }
}

/// Why a rank could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{rank}{}{}{}: {kind}",
    .topsp.map(|t| format!(", {t}")).unwrap_or_default(),
    .collective.map(|c| format!(", {c}")).unwrap_or_default(),
    .step.map(|s| format!(", {s}")).unwrap_or_default())]
pub struct LowerError {
    /// The rank.
    pub rank: Rank,
    /// The TOP_SP.
    pub topsp: Option<TopSp>,
    /// The collective.
    pub collective: Option<CollectiveIdx>,
    /// The step.
    pub step: Option<Step>,
    /// What went wrong.
    pub kind: LowerErrorKind,
}

/// The kinds of lowering failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerErrorKind {
    /// A device limit exceeded.
    #[error("{limit} is at most {max} on {arch}; this schedule needs {value}; {}", limit.advice(*arch))]
    Limit {
        /// The limit.
        limit: Limit,
        /// What the schedule needs.
        value: u64,
        /// The most the device takes.
        max: u64,
        /// The architecture.
        arch: ccc_ir::arch::Arch,
    },
    /// The rank is not in the world.
    #[error(
        "no such rank: the world has {}; accepted: {}",
        ccc_ir::noun::count(rank_n, "rank"),
        match rank_n { 0 => "none".to_owned(), 1 => "rank 0".to_owned(), n => format!("ranks 0 to {}", n - 1) }
    )]
    NoSuchRank {
        /// Ranks in the world.
        rank_n: u32,
    },
    /// A collective's replica groups do not hold the rank (a schedule
    /// `build` did not make: its groups disagree with its shape).
    #[error("the collective's replica groups do not hold this rank")]
    NotInGroups,
    /// More ring channels than a channel list's 32 bits name (a schedule
    /// `build` did not make: validation holds channels to 1..=32).
    #[error("the collective has {channels} ring channels; a ring channel list names at most 32")]
    TooManyChannels {
        /// The collective's channels.
        channels: u8,
    },
    /// The schedule names a group member its groups do not hold (a
    /// schedule `build` did not make).
    #[error("the schedule names member {index} of replica group {group}, which the groups do not hold")]
    NoSuchMember {
        /// The replica group.
        group: u32,
        /// The group-local index.
        index: u32,
    },
    /// The device barrier does not reach every rank in its steps.
    #[error(
        "a device barrier covers at most {DEVICE_BARRIER_MAX_RANK_N} ranks in its {DEVICE_STEPS_N} steps; \
         the world has {rank_n}; use the host barrier"
    )]
    DeviceBarrierTooLarge {
        /// Ranks in the world.
        rank_n: u32,
    },
}
