//! What a compile returns: [`Compiled`], the typed value between the
//! pipeline and what writes or reports it (the manifest, the CLI, the
//! Python package). It lives below both the pipeline and the manifest so
//! that the pipeline can read a manifest back as a certificate without
//! the two importing each other.

use crate::encode::RankImages;
use crate::lower::RankProgram;
use crate::schedule::Schedule;
use crate::sign::Signature;
use crate::verify::Proof;
use std::time::Duration;

/// A compiled program.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The schedule every rank shares.
    pub schedule: Schedule,
    /// The collective signature.
    pub signature: Signature,
    /// The lowered programs of the ranks asked for, in rank order (none
    /// when [`Options::emit`](crate::pipeline::Options::emit) was off).
    pub programs: Vec<RankProgram>,
    /// Their images, in the same order.
    pub images: Vec<RankImages>,
    /// The proof, unless skipped.
    pub proof: Option<Proof>,
    /// Where the compile's wall time went.
    pub times: Times,
}

/// Where a compile's wall time went; [`Times::total`] is the compile's
/// wall time. With a proof, its share is [`Times::proof`], split in
/// [`Proof`]'s parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Times {
    /// Building the schedule, signing it, checking a certificate, and the
    /// checks before any world-sized work (a few probe ranks lowered and
    /// encoded, the memory estimate).
    pub build: Duration,
    /// Lowering the ranks kept (the watch of their step graphs is the
    /// proof's). When a verifying compile keeps none
    /// ([`Options::emit`](crate::pipeline::Options::emit) off), every
    /// rank is lowered for the proof alone, and its lowering is the
    /// proof's.
    pub lower: Duration,
    /// Encoding the ranks kept; when a verifying compile keeps none,
    /// encoding is for the round trip alone, and is the proof's.
    pub encode: Duration,
    /// The proof: [`Proof::time`](crate::verify::Proof::time).
    pub proof: Duration,
    /// The rest: gathering the ranks kept, dropping the others, putting
    /// the result together.
    pub other: Duration,
}

impl Times {
    /// The compile's wall time: the sum of the parts.
    pub fn total(&self) -> Duration {
        self.build + self.lower + self.encode + self.proof + self.other
    }
}
