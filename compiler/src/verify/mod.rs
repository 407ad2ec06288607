//! verify: prove a compiled schedule implements its collective and cannot
//! deadlock, before a byte is emitted.
//!
//! - [`postcondition`]: symbolic execution of the step graph: every op's
//!   postcondition holds, each contribution folded exactly once.
//!
//! A failed proof is a [`Defect`] that names the collective, the rank, the
//! step and the chunk (or TOP_SP and record) where things go wrong.

pub mod postcondition;
pub(crate) mod sets;

use ccc_ir::id::{Channel, Chunk, CollectiveIdx, Rank, Step, TopSp};
use serde::Serialize;

/// Why a schedule was not proven.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The proof found a defect.
    #[error("{0}")]
    Defect(Box<Defect>),
    /// The symbolic buffers would be too large to hold.
    #[error(
        "collective {collective}: proving it needs {cells} symbolic buffer cells, more than the {limit} the prover \
         holds; compile with --no-verify to skip the proof"
    )]
    TooLarge {
        /// The collective.
        collective: u32,
        /// Cells needed.
        cells: u64,
        /// The limit.
        limit: u64,
    },
}

/// A place in the schedule where the proof fails, and what fails there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Defect {
    /// The collective.
    pub collective: CollectiveIdx,
    /// The replica group.
    pub group: u32,
    /// The rank, when one is to blame.
    pub rank: Option<Rank>,
    /// The TOP_SP, for protocol defects.
    pub topsp: Option<TopSp>,
    /// The step, when the defect happens during the run.
    pub step: Option<Step>,
    /// The chunk (block position) concerned.
    pub chunk: Option<Chunk>,
    /// What is wrong.
    pub kind: DefectKind,
}

impl std::fmt::Display for Defect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.collective)?;
        if let Some(r) = self.rank {
            write!(f, ", {r}")?;
        }
        if let Some(t) = self.topsp {
            write!(f, ", {t}")?;
        }
        if let Some(s) = self.step {
            write!(f, ", {s}")?;
        }
        if let Some(c) = self.chunk {
            write!(f, ", {c}")?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for Defect {}

/// Ranks, abbreviated after eight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankList(pub Vec<Rank>);

impl std::fmt::Display for RankList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = if self.0.len() == 1 { "rank" } else { "ranks" };
        write!(f, "{word} ")?;
        for (i, r) in self.0.iter().take(8).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", r.0)?;
        }
        if self.0.len() > 8 {
            write!(f, " and {} more", self.0.len() - 8)?;
        }
        Ok(())
    }
}

/// The kinds of defect.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
pub enum DefectKind {
    /// A send no receive matches.
    #[error("sends this chunk to {to}, which does not receive it at this step")]
    UnmatchedSend {
        /// The intended receiver.
        to: Rank,
    },
    /// A receive no send matches.
    #[error("waits for this chunk from {from}, which does not send it at this step")]
    UnmatchedReceive {
        /// The expected sender.
        from: Rank,
    },
    /// A contribution folded in twice.
    #[error("would fold in {contributor}'s contribution a second time (arriving from {from})")]
    Duplicate {
        /// Where the data came from.
        from: Rank,
        /// The contribution that would be counted twice.
        contributor: Rank,
    },
    /// Contributions missing at the end.
    #[error("ends without the contribution of {}", RankList(.contributors.clone()))]
    Missing {
        /// The missing contributors.
        contributors: Vec<Rank>,
    },
    /// Contributions that must not be there at the end.
    #[error("ends holding data it must not hold: the contribution of {}", RankList(.contributors.clone()))]
    Extra {
        /// The unexpected contributors.
        contributors: Vec<Rank>,
    },
    /// A chunk where another belongs.
    #[error("holds chunk {found} where chunk {chunk} belongs")]
    WrongChunk {
        /// The chunk found.
        found: u32,
        /// The chunk that belongs.
        chunk: u32,
    },
    /// A chunk moved to another position by an op that keeps positions.
    #[error("moves this chunk to {to}; this op keeps every chunk at its position")]
    Moved {
        /// The destination position.
        to: Chunk,
    },
    /// Sender and receiver disagree on a chunk's size.
    #[error("{from} sends {sent} elements on {channel} where {expected} are expected")]
    SizeMismatch {
        /// The sender.
        from: Rank,
        /// The channel.
        channel: u8,
        /// Elements sent.
        sent: u64,
        /// Elements the receiver's buffer holds there.
        expected: u64,
    },
    /// A member lists a transfer between two others.
    #[error("lists a transfer from {from} to {to} that it takes no part in")]
    Stranger {
        /// The sender.
        from: Rank,
        /// The receiver.
        to: Rank,
    },
    /// An index out of its range.
    #[error("{what} {value} is out of range (below {limit} expected)")]
    OutOfRange {
        /// What is out of range.
        what: &'static str,
        /// The value.
        value: u32,
        /// The bound.
        limit: u32,
    },
    /// A protocol defect on the lowered records (see `protocol`).
    #[error("{0}")]
    Protocol(String),
}

#[allow(unused)]
fn _ids(_: Channel) {}
