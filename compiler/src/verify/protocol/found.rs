//! What a protocol check finds: its figures ([`ProtocolProof`]) and
//! defects, and where a defect is ([`Place`]).

use crate::placement::hosted_channels;
use crate::schedule::{CollectivePlan, Schedule};
use crate::verify::defect::{Defect, DefectKind};
use ccc_ir::id::{CollectiveIdx, Rank, Step, TopSp};
use serde::Serialize;

/// Net indices wrap at 512 (`NET_INDEX_LOOP_SIZE`).
pub const NET_INDEX_LOOP: u16 = 512;
/// The largest initial send credit: fewer than [`NET_INDEX_LOOP`], so the
/// unconsumed messages of a connection never alias in the wrapped index.
pub const MAX_SEND_CREDITS: u16 = NET_INDEX_LOOP - 1;

/// What the protocol proof established.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ProtocolProof {
    /// (rank, TOP_SP) chains checked.
    pub chains: u64,
    /// Records checked.
    pub records: u64,
    /// (rank, TOP_SP, step) points checked.
    pub steps: u64,
    /// Semaphore increments matched to a wait.
    pub signals: u64,
}

impl ProtocolProof {
    /// `other`'s figures added to these.
    pub(crate) fn add(&mut self, other: &ProtocolProof) {
        self.chains += other.chains;
        self.records += other.records;
        self.steps += other.steps;
        self.signals += other.signals;
    }
}

/// What the check of one rank found: its share of the figures, and its
/// defects (none when it holds).
#[derive(Default)]
pub(crate) struct RankChecked {
    pub(crate) proof: ProtocolProof,
    pub(crate) defects: Vec<Defect>,
}

/// Where a protocol defect is.
pub(super) struct Place {
    pub(super) collective: u32,
    pub(super) rank: Rank,
    pub(super) topsp: TopSp,
    pub(super) record: Option<u32>,
    pub(super) step: Option<u32>,
}

impl Place {
    /// A defect of the whole (rank, TOP_SP), not of one collective.
    pub(super) fn chain(rank: Rank, topsp: TopSp) -> Place {
        Place { collective: 0, rank, topsp, record: None, step: None }
    }
}

/// A defect at `p`.
pub(super) fn defect(p: Place, kind: DefectKind) -> Box<Defect> {
    Box::new(Defect {
        collective: CollectiveIdx(p.collective),
        group: 0,
        rank: Some(p.rank),
        topsp: Some(p.topsp),
        record: p.record,
        step: p.step.map(Step),
        chunk: None,
        kind,
    })
}

/// A field that is not what the schedule needs.
pub(super) fn mismatch(field: &'static str, found: u64, expected: u64) -> DefectKind {
    DefectKind::FieldMismatch { field, found, expected }
}

/// Channels of `plan` on TOP_SP `t`, ascending.
pub(super) fn hosted(schedule: &Schedule, plan: &CollectivePlan, t: u8) -> Vec<u8> {
    hosted_channels(schedule.arch.params(), plan.channels, t)
}
