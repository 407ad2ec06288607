//! Where a compile's wall time went ([`Times`]), measured by one clock
//! ([`Ledger`]) whose laps cover the compile end to end: every instant
//! between the compile's start and its return is in exactly one part, so
//! the parts add up to the wall time by construction.
//!
//! Parts are walls of stages run one after another, never sums of
//! per-thread times: a stage that runs on every core (lowering a chunk of
//! ranks, checking it) is timed from its start to the last thread's end.

pub use crate::compiled::Times;
use std::time::{Duration, Instant};

/// A part of a compile's wall time: one of [`Times`]' own, or one of the
/// proof's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// [`Times::build`].
    Build,
    /// [`Times::lower`].
    Lower,
    /// [`Times::encode`].
    Encode,
    /// [`Proof::lowering_time`](crate::verify::Proof::lowering_time).
    ProofLower,
    /// [`Proof::postcondition_time`](crate::verify::Proof::postcondition_time).
    Postcondition,
    /// [`Proof::protocol_time`](crate::verify::Proof::protocol_time).
    Protocol,
    /// [`Proof::roundtrip_time`](crate::verify::Proof::roundtrip_time).
    RoundTrip,
    /// [`Times::other`].
    Other,
}

/// A stopwatch read in laps: each lap is the time since the previous one
/// (or since the start), added to the part it names. A compile without a
/// proof has no proof parts: their laps (none of substance) are
/// [`Times::other`].
pub(super) struct Ledger {
    last: Instant,
    times: Times,
    /// The proof's parts: lowering, postcondition, protocol, round trip.
    proof: [Duration; 4],
    proving: bool,
}

impl Ledger {
    /// Starts now; `proving` when the compile has a proof.
    pub(super) fn start(proving: bool) -> Ledger {
        Ledger { last: Instant::now(), times: Times::default(), proof: [Duration::ZERO; 4], proving }
    }

    /// The time since the last lap, added to `part`.
    pub(super) fn lap(&mut self, part: Part) {
        let now = Instant::now();
        let lap = now - self.last;
        self.last = now;
        let slot = match part {
            Part::Build => &mut self.times.build,
            Part::Lower => &mut self.times.lower,
            Part::Encode => &mut self.times.encode,
            Part::Other => &mut self.times.other,
            _ if !self.proving => &mut self.times.other,
            Part::ProofLower => &mut self.proof[0],
            Part::Postcondition => &mut self.proof[1],
            Part::Protocol => &mut self.proof[2],
            Part::RoundTrip => &mut self.proof[3],
        };
        *slot += lap;
    }

    /// The proof's parts so far: lowering, postcondition, protocol, round
    /// trip.
    pub(super) fn proof_times(&self) -> [Duration; 4] {
        self.proof
    }

    /// The times, a last lap counted as [`Part::Other`].
    pub(super) fn finish(mut self) -> Times {
        self.lap(Part::Other);
        self.times.proof = self.proof.iter().sum();
        self.times
    }
}
