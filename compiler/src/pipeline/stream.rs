//! The world streamed through the compile and its proof: ranks are
//! lowered, encoded, checked and decoded back a chunk at a time (at most
//! [`Options::chunk_ranks`] ranks, fewer when their programs would pass
//! [`CHUNK_CACHE_BYTES`]; in rank order), and every rank not kept
//! ([`Options::emit`]) is dropped with its chunk. Only what the proof
//! needs across ranks outlives a chunk: each rank's symmetry watch
//! ([`Seen`], a count per collective), the protocol figures and the
//! defects found. The postcondition, which needs every rank's watch, runs
//! once the world has streamed by.
//!
//! A chunk's stages run one after another, each on every core: lowering
//! the ranks asked for; lowering the others, and every rank's symmetry
//! watch (proof work: the phases decide it with no step walked, or the
//! rank's step graph is watched where they do not, see
//! `verify::symmetry`); encoding the asked ones; the protocol check of
//! every rank; the round trip of the asked ones. Each stage's wall time is
//! its part of [`Times`](super::Times) or of the proof's.
//!
//! The round trip decodes each distinct TOP_SP program once per compile
//! (a [`Memo`] shared by the chunks, `verify/roundtrip.rs` says why that
//! is sound). When the images are not kept, encoding is the round trip's
//! work and is done with it, in the encoding stage's place: a TOP_SP
//! program equal to one proven is neither encoded nor decoded. When they
//! are neither kept nor checked (no proof, nothing emitted), only whether
//! each rank encodes matters, and a program whose encoding inputs equal
//! one that encoded is not encoded again (`encode.rs`).
//!
//! Results never depend on the thread count or the chunk size: each rank
//! is checked alone, and what is folded across ranks is folded in rank
//! order. The error returned is that of the lowest rank that fails to
//! lower or encode (its lowering's before its encoding's).

use super::certificate;
use super::options::ProofSource;
use super::ranks::{Failed, map_until_error};
use super::times::{Ledger, Part};
use super::{CHUNK_CACHE_BYTES, CompileError, Options, Proof, Stage, Ticker};
use crate::encode::{Encoded, RankImages, encode};
use crate::lower::{Lowerer, RankProgram};
use crate::schedule::Schedule;
use crate::verify::protocol::{self, RankChecked};
use crate::verify::symmetry::Seen;
use crate::verify::{Defect, Memo, Prover};
use ccc_ir::id::Rank;
use rayon::prelude::*;

/// What a streamed compile returns: the ranks kept, and the proof.
pub(super) struct Streamed {
    /// The programs of the ranks asked for, in rank order (none when
    /// [`Options::emit`] is off).
    pub(super) programs: Vec<RankProgram>,
    /// Their images, in the same order.
    pub(super) images: Vec<RankImages>,
    /// The proof, unless skipped.
    pub(super) proof: Option<Proof>,
}

/// What the checks of the chunks so far found, folded in rank order.
#[derive(Default)]
pub(super) struct Found {
    /// The protocol figures and defects of every rank checked.
    pub(super) protocol: RankChecked,
    /// Images decoded back.
    pub(super) images_checked: u64,
    /// The round trips' defects.
    pub(super) roundtrips: Vec<Defect>,
}

/// Streams `wanted` (every rank, when proving) through lowering, encoding
/// and the checks `source` asks, keeping the asked ranks when
/// [`Options::emit`] is on; then proves the postcondition and concludes.
///
/// # Errors
///
/// The lowest failing rank's lowering or image error; the proof's error.
pub(super) fn stream(
    schedule: &Schedule,
    wanted: &[Rank],
    source: ProofSource<'_>,
    options: &Options,
    chunk_ranks: usize,
    ledger: &mut Ledger,
) -> Result<Streamed, CompileError> {
    let prover = match source {
        ProofSource::Prove(prover) => Some(Prover::new(schedule, prover)),
        ProofSource::Certificate(_) | ProofSource::Skip => None,
    };
    ledger.lap(Part::Postcondition);
    let checks = !matches!(source, ProofSource::Skip);
    let world: Vec<Rank> = match prover {
        Some(_) => (0..schedule.shape.rank_n).map(Rank).collect(),
        None => wanted.to_vec(),
    };
    let lowering = Ticker::start(options, Stage::Lower, world.len() as u64);
    let (checking, decoding) = if checks {
        let checking = Ticker::start(options, Stage::Protocol, world.len() as u64);
        (Some(checking), Some(Ticker::start(options, Stage::RoundTrip, wanted.len() as u64)))
    } else {
        (None, None)
    };
    let memo = Memo::new(schedule.arch);
    let (lowerer, encoded) = (Lowerer::new(schedule), Encoded::new(schedule.arch));
    let prover = prover.as_ref();
    let stages = Stages { schedule, lowerer, wanted, prover, options, lowering, checking, decoding, memo, encoded };
    let mut seen = Vec::with_capacity(if prover.is_some() { world.len() } else { 0 });
    let mut found = Found::default();
    let mut programs = Vec::new();
    let mut images = Vec::new();
    for chunk in world.chunks(chunk_ranks.max(1)) {
        options.go_on()?;
        let (asked, asked_images) = stages.chunk(chunk, ledger, &mut seen, &mut found)?;
        if options.emit {
            programs.extend(asked);
            images.extend(asked_images);
            ledger.lap(Part::Other);
        } else {
            drop((asked, asked_images));
            ledger.lap(if checks { Part::RoundTrip } else { Part::Other });
        }
    }
    options.go_on()?;
    let proof = match (source, prover) {
        (ProofSource::Prove(_), Some(prover)) => {
            let members: u64 =
                schedule.collectives.iter().map(|p| u64::from(p.groups.group_n()) * u64::from(p.groups.size())).sum();
            let proving = Ticker::start(options, Stage::Postcondition, members);
            let post = prover.prove_postconditions(&seen, &|n| proving.tick(n))?;
            drop(seen);
            ledger.lap(Part::Postcondition);
            let established = Prover::conclude(post, [found.protocol], found.roundtrips)?;
            ledger.lap(Part::Protocol);
            Some(established.proof(found.images_checked, ledger.proof_times()))
        }
        (ProofSource::Certificate(certificate), _) => {
            let defects = found.protocol.defects.into_iter().chain(found.roundtrips);
            Some(certificate::certified(certificate, defects, found.images_checked, ledger.proof_times())?)
        }
        _ => None,
    };
    Ok(Streamed { programs, images, proof })
}

/// The ranks per chunk: [`Options::chunk_ranks`], or fewer so that a
/// chunk's programs, at `probe_bytes` each (the largest probe's
/// footprint, when probes were lowered), stay within
/// [`CHUNK_CACHE_BYTES`]; at least one.
pub(super) fn chunk_ranks(options: &Options, probe_bytes: Option<u64>) -> usize {
    let most = options.chunk_ranks.max(1);
    match probe_bytes {
        Some(bytes) if bytes > 0 => most.min(usize::try_from(CHUNK_CACHE_BYTES / bytes).unwrap_or(most).max(1)),
        _ => most,
    }
}

/// What every chunk's stages share.
struct Stages<'a, 's> {
    schedule: &'s Schedule,
    /// What lowering every rank shares.
    lowerer: Lowerer<'s>,
    /// The ranks asked for, ascending.
    wanted: &'a [Rank],
    /// When proving: the prover, whose watches the ranks are lowered under.
    prover: Option<&'a Prover<'s>>,
    options: &'a Options,
    lowering: Ticker<'a>,
    /// Ranks checked (when checking).
    checking: Option<Ticker<'a>>,
    /// Ranks decoded back (when checking).
    decoding: Option<Ticker<'a>>,
    /// The TOP_SP programs decoded back so far.
    memo: Memo,
    /// The TOP_SP programs encoded so far, when no image is kept or checked.
    encoded: Encoded,
}

impl Stages<'_, '_> {
    /// One chunk (ascending ranks) through every stage: its asked ranks'
    /// programs and images, every rank's watch pushed to `seen` (when
    /// proving) and every check's findings folded into `found`.
    fn chunk(
        &self,
        chunk: &[Rank],
        ledger: &mut Ledger,
        seen: &mut Vec<Seen>,
        found: &mut Found,
    ) -> Result<(Vec<RankProgram>, Vec<RankImages>), CompileError> {
        let schedule = self.schedule;
        let (asked, other_ranks): (Vec<Rank>, Vec<Rank>) =
            chunk.iter().partition(|r| self.wanted.binary_search(r).is_ok());
        let checks = self.checking.is_some();
        let lower_each = |ranks: &[Rank]| {
            map_until_error(ranks, |&r| {
                let program = self.lowerer.lower(r);
                self.lowering.tick(1);
                program
            })
        };
        // Ranks kept are lowered as compile work; ranks not kept only the
        // checks need, and every rank's watch, are proof work.
        let kept = self.options.emit || !checks;
        let (programs, asked_failed) = lower_each(&asked);
        ledger.lap(if kept { Part::Lower } else { Part::ProofLower });
        let (others, others_failed) = match self.prover {
            Some(_) => lower_each(&other_ranks),
            None => (Vec::new(), None),
        };
        let watch = |programs: &[RankProgram]| -> Vec<Seen> {
            match self.prover {
                Some(prover) => programs.par_iter().map(|p| prover.watch(p.rank)).collect(),
                None => Vec::new(),
            }
        };
        let (asked_seen, others_seen) = (watch(&programs), watch(&others));
        ledger.lap(Part::ProofLower);
        // Not kept, each rank is encoded and decoded back at once (when
        // not kept the checks run, so `decoding` is on).
        let (images, round_trips, encode_failed) = match (kept, &self.decoding) {
            (false, Some(decoding)) => {
                let (round_trips, failed) = map_until_error(&programs, |p| {
                    let round_trip = self.memo.encode_and_check(p);
                    decoding.tick(1);
                    round_trip
                });
                (Vec::new(), Some(round_trips), failed)
            }
            // Neither kept nor checked, an image matters only by whether
            // it encodes: each distinct program is encoded once.
            _ if !self.options.emit => {
                let (_, failed) = map_until_error(&programs, |p| self.encoded.check(p));
                (Vec::new(), None, failed)
            }
            _ => {
                let (images, failed) = map_until_error(&programs, |p| encode(p, schedule.arch));
                (images, None, failed)
            }
        };
        ledger.lap(if kept { Part::Encode } else { Part::RoundTrip });
        let lowest = [
            asked_failed.map(|f| f.at(&asked)),
            others_failed.map(|f| f.at(&other_ranks)),
            encode_failed.map(|f| f.at(&asked)),
        ];
        if let Some((_, error)) = lowest.into_iter().flatten().min_by_key(|(rank, _)| *rank) {
            return Err(error);
        }
        let world = in_rank_order(chunk, self.wanted, (&programs, asked_seen), (&others, others_seen));
        if let Some(checking) = &self.checking {
            let checked: Vec<RankChecked> = world
                .par_iter()
                .map(|(program, seen)| {
                    let checked = match (self.prover, seen) {
                        (Some(prover), Some(seen)) => prover.check_rank(program, seen),
                        _ => protocol::check_rank(schedule, program, None, None, None),
                    };
                    checking.tick(1);
                    checked
                })
                .collect();
            for rank in checked {
                found.protocol.proof.add(&rank.proof);
                found.protocol.defects.extend(rank.defects);
            }
        }
        seen.extend(world.into_iter().filter_map(|(_, s)| s));
        drop(others);
        ledger.lap(Part::Protocol);
        if let Some(decoding) = &self.decoding {
            let decoded: Vec<_> = round_trips.unwrap_or_else(|| {
                programs
                    .par_iter()
                    .zip(&images)
                    .map(|(p, i)| {
                        let decoded = self.memo.check_kept(p, i);
                        decoding.tick(1);
                        decoded
                    })
                    .collect()
            });
            for d in decoded {
                match d {
                    Ok(n) => found.images_checked += n,
                    Err(d) => found.roundtrips.push(*d),
                }
            }
        }
        ledger.lap(Part::RoundTrip);
        Ok((programs, images))
    }
}

/// The chunk's asked and other ranks (each in rank order, with their
/// watches when proving) merged into the chunk's order.
fn in_rank_order<'p>(
    chunk: &[Rank],
    wanted: &[Rank],
    asked: (&'p [RankProgram], Vec<Seen>),
    others: (&'p [RankProgram], Vec<Seen>),
) -> Vec<(&'p RankProgram, Option<Seen>)> {
    let mut asked_seen = asked.1.into_iter();
    let mut others_seen = others.1.into_iter();
    let mut asked = asked.0.iter();
    let mut others = others.0.iter();
    chunk
        .iter()
        .filter_map(|r| {
            if wanted.binary_search(r).is_ok() {
                Some((asked.next()?, asked_seen.next()))
            } else {
                Some((others.next()?, others_seen.next()))
            }
        })
        .collect()
}

impl<E: Into<CompileError>> Failed<E> {
    /// The failing item's rank (`ranks[index]`), with its error.
    fn at(self, ranks: &[Rank]) -> (Rank, CompileError) {
        (ranks.get(self.index).copied().unwrap_or(Rank(u32::MAX)), self.error.into())
    }
}

#[cfg(test)]
mod tests {
    use super::{CHUNK_CACHE_BYTES, Options, chunk_ranks};

    /// A chunk holds `chunk_ranks` ranks of small programs, fewer of large
    /// ones (at least one), and all of them when nothing was probed.
    #[test]
    fn chunks_are_sized_by_the_probes_programs() {
        let options = Options { chunk_ranks: 512, ..Options::default() };
        assert_eq!(chunk_ranks(&options, None), 512);
        assert_eq!(chunk_ranks(&options, Some(4_000)), 393);
        assert_eq!(CHUNK_CACHE_BYTES / 24_000, 65);
        assert_eq!(chunk_ranks(&options, Some(24_000)), 65);
        assert_eq!(chunk_ranks(&options, Some(CHUNK_CACHE_BYTES + 1)), 1);
        assert_eq!(chunk_ranks(&options, Some(0)), 512);
        let narrow = Options { chunk_ranks: 0, ..Options::default() };
        assert_eq!(chunk_ranks(&narrow, Some(1)), 1);
        assert_eq!(chunk_ranks(&Options { chunk_ranks: 8, ..Options::default() }, Some(4_000)), 8);
    }
}
