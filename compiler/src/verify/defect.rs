//! What a failed proof reports: [`VerifyError`], and the [`Defects`] it
//! found, each a [`Defect`] naming the collective, group, rank, TOP_SP,
//! record, step and chunk where things go wrong, and what does
//! ([`DefectKind`]).

use ccc_ir::id::{Chunk, CollectiveIdx, Rank, Step, TopSp};
use serde::Serialize;

/// Why a schedule was not proven.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The proof found defects.
    #[error("{0}")]
    Defects(Box<Defects>),
    /// The symbolic buffers would be too large to hold.
    #[error(
        "collective {collective}: proving it needs {cells} symbolic buffer cells, more than the {limit} the prover \
         holds; skip the proof (a certificate vouches only for a schedule some compile proved, which this one no \
         compile can in full){}",
        provable.as_ref().map_or_else(String::new, |a| format!(
            ", or choose {a}, the cheapest of the other choices `Auto` weighed that the prover holds"
        ))
    )]
    TooLarge {
        /// The collective.
        collective: u32,
        /// Cells needed.
        cells: u64,
        /// The limit.
        limit: u64,
        /// For a collective whose algorithm `Auto` chose, the cheapest of
        /// its other choices that the prover holds, as a spec writes it
        /// ([`ResolvedAlgorithm::spec_text`](crate::valid::ResolvedAlgorithm::spec_text):
        /// `Ring`, `Hier((intra_reduce_scatter: Kangaring, ...))`); `None`
        /// otherwise, or when none does.
        provable: Option<String>,
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
    /// The record (index in its collective's chain on the TOP_SP).
    pub record: Option<u32>,
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
        if let Some(r) = self.record {
            write!(f, ", record {r}")?;
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

/// The most defects a failed proof lists; the others are counted.
pub const MAX_LISTED: usize = 20;

/// Every defect a proof found, in the order the proof met them
/// (postconditions by collective, group and half; then the protocol by
/// rank, TOP_SP and step; then the round trips by rank): the first
/// [`MAX_LISTED`] listed, the rest counted. A check stops at its first
/// defect where what follows would only echo it (one run of a group; one
/// chain; one collective's steps on one rank).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Defects {
    /// The first defect found: what a reader fixes first.
    pub first: Defect,
    /// The defects after it, up to [`MAX_LISTED`] in all.
    pub more: Vec<Defect>,
    /// Defects found beyond those listed.
    pub unlisted: u64,
}

impl Defects {
    /// The defects found, `None` when there is none.
    pub(crate) fn collect(found: impl IntoIterator<Item = Defect>) -> Option<Defects> {
        let mut found = found.into_iter();
        let first = found.next()?;
        let more: Vec<Defect> = found.by_ref().take(MAX_LISTED - 1).collect();
        Some(Defects { first, more, unlisted: found.count() as u64 })
    }

    /// How many defects were found, listed or not.
    pub fn total(&self) -> u64 {
        1 + self.more.len() as u64 + self.unlisted
    }

    /// The listed defects, the first first.
    pub fn iter(&self) -> impl Iterator<Item = &Defect> {
        std::iter::once(&self.first).chain(&self.more)
    }
}

impl From<Defect> for VerifyError {
    fn from(defect: Defect) -> VerifyError {
        VerifyError::Defects(Box::new(Defects { first: defect, more: Vec::new(), unlisted: 0 }))
    }
}

/// The first defect's message; the count of the others after it.
impl std::fmt::Display for Defects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.first)?;
        let others = self.total() - 1;
        if others > 0 {
            write!(f, " (and {})", ccc_ir::noun::count(others, "more defect"))?;
        }
        Ok(())
    }
}

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
    /// A record's `trigger_next` is clear but another record follows.
    #[error("trigger_next is 0 but record {next} follows: the chain stops here and the records after it never run")]
    ChainBroken {
        /// The record that never runs.
        next: u32,
    },
    /// The last record's `trigger_next` is set.
    #[error("trigger_next is 1 on the collective's last record: the device would run on into the END mark")]
    ChainOverrun,
    /// A record waits for a predecessor that never signals.
    #[error(
        "ring_wait_complete makes it wait for record {previous}'s completion, which never signals (ring_send_complete is 0): deadlock"
    )]
    WaitWithoutSignal {
        /// The record before it, whose completion it waits for.
        previous: u32,
    },
    /// The first record waits for a predecessor that does not exist.
    #[error("ring_wait_complete makes the collective's first record wait for a completion no record signals: deadlock")]
    FirstRecordWaits,
    /// A record signals a completion nothing waits for.
    #[error(
        "ring_send_complete signals a completion that no record waits for (the next record's ring_wait_complete is 0)"
    )]
    SignalWithoutWait,
    /// The END mark's completion address is not the TOP_SP's completion semaphore.
    #[error(
        "the END mark carries completion address {found:#x}, but this TOP_SP's completion semaphore is {}",
        .expected.map_or_else(|| "outside its window on this arch: no address is right".to_string(), |a| format!("{a:#x}"))
    )]
    WrongCompletionAddress {
        /// The address found.
        found: u64,
        /// The INC address of the completion semaphore; `None` when the
        /// arch's INC window does not reach it (no END mark can be right).
        expected: Option<u64>,
    },
    /// A channel with transfers is missing from the record's channel list.
    #[error(
        "channel {channel} carries this collective's transfers on this TOP_SP, but channel_list {channel_list:#010x} leaves it out"
    )]
    ChannelMissing {
        /// The channel.
        channel: u8,
        /// The record's bitmap.
        channel_list: u32,
    },
    /// The record lists a channel that is not this collective's on this TOP_SP.
    #[error(
        "channel_list {channel_list:#010x} lists channel {channel}, which this collective does not run on this TOP_SP"
    )]
    ChannelExtra {
        /// The channel.
        channel: u8,
        /// The record's bitmap.
        channel_list: u32,
    },
    /// A record's descriptor count disagrees with the step graph.
    #[error("the record posts {posted} {queue} descriptors at this step; the step graph's transfers need {needed}")]
    CountMismatch {
        /// `M2S` or `S2M`.
        queue: &'static str,
        /// Posted by the record.
        posted: u64,
        /// Needed by the transfers.
        needed: u64,
    },
    /// A mesh event whose target differs from the increments its peer sends.
    #[error("mesh event for {peer} waits for {target} increments; the peer sends {arrived}")]
    EventMismatch {
        /// The peer.
        peer: Rank,
        /// The event's target.
        target: u64,
        /// Increments sent.
        arrived: u64,
    },
    /// The EXEC config's mesh event table disagrees with the records' events.
    #[error(
        "mesh event table entry {entry} is not the event the records lower (the table has {table} entries, the records {records})"
    )]
    EventTable {
        /// The first differing entry.
        entry: u32,
        /// Entries in the table.
        table: u32,
        /// Events in the records.
        records: u32,
    },
    /// The record's shape disagrees with its phase.
    #[error("{field} is {found}, but the schedule needs {expected}")]
    FieldMismatch {
        /// The field.
        field: &'static str,
        /// The value found.
        found: u64,
        /// The value needed.
        expected: u64,
    },
    /// A semaphore index outside its window.
    #[error("semaphore index {index} is outside its window ({window} {first}..={last})")]
    SemaphoreOutOfWindow {
        /// The index.
        index: u32,
        /// The window's name.
        window: SemaphoreWindow,
        /// Its first index.
        first: u32,
        /// Its last index.
        last: u32,
    },
    /// Initial send credits outside 1..=511.
    #[error("initial send credits are {credits}; they must be in 1..=511")]
    CreditsOutOfRange {
        /// The credits.
        credits: u16,
    },
    /// The host would count a different number of notifications.
    #[error(
        "the TOP_SP posts {posted} TOPSP_CC_STATUS notifications (one per record run) but op_num tells the host to expect {op_num}"
    )]
    NotificationCount {
        /// Notifications the records post.
        posted: u64,
        /// `op_num`.
        op_num: u32,
    },
    /// Images that do not decode back to the lowered records.
    #[error("the {image} image does not decode back to the lowered records: {detail}")]
    RoundTrip {
        /// Which image.
        image: &'static str,
        /// What differs.
        detail: String,
    },
}

/// The semaphore windows of a TOP_SP the protocol proof checks indices
/// against (`placement::sema`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SemaphoreWindow {
    /// Each hosted channel's receive semaphores.
    Channel,
    /// The mesh events' semaphores.
    MeshEvent,
}

impl std::fmt::Display for SemaphoreWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SemaphoreWindow::Channel => "channel semaphores",
            SemaphoreWindow::MeshEvent => "mesh event semaphores",
        })
    }
}
