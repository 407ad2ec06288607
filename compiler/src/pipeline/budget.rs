//! What is checked before any world-sized work: a few representative ranks
//! ([`probes`]) are lowered and encoded, and the memory the compile will
//! hold is estimated from them.

use super::options::ProofSource;
use super::{CompileError, MemoryError, Options};
use crate::encode::{ENCODED_BYTES, RankImages, TopSpImages, encode};
use crate::lower::{LowerError, RankProgram, lower};
use crate::schedule::Schedule;
use crate::verify::MEMO_BYTES;
use crate::verify::postcondition;
use crate::verify::protocol::CHAINS_BYTES;
use crate::verify::protocol::Profile;
use crate::verify::symmetry::{self, Seen};
use ccc_ir::id::Rank;

/// Ranks emitted from which a compile that does not prove first lowers a
/// few probes: fewer are lowered directly, which is as cheap.
const PROBE_FROM: usize = 4;

/// Everything that can be known before world-sized work: a few
/// representative ranks ([`probes`]) are lowered and encoded, so a
/// schedule that does not fit the device (mesh events, records, SPAD
/// sizes per TOP_SP) is refused at the cost of those ranks; the full
/// postcondition runs the proof will surely need must fit the prover's
/// cells; and the memory the compile will hold, estimated from the probes,
/// must fit [`Options::memory_budget`].
///
/// Returns the largest probe's program footprint (bytes), which sizes the
/// stream's chunks; `None` when no probe was lowered (fewer than
/// [`PROBE_FROM`] ranks asked, no proof: one chunk holds them).
///
/// # Errors
///
/// The first probe's lowering or image error, [`VerifyError::TooLarge`](crate::verify::VerifyError::TooLarge),
/// or a [`MemoryError`].
pub(super) fn check(
    schedule: &Schedule,
    wanted: &[Rank],
    source: ProofSource<'_>,
    options: &Options,
) -> Result<Option<u64>, CompileError> {
    let prover = match source {
        ProofSource::Prove(prover) => Some(prover),
        ProofSource::Certificate(_) | ProofSource::Skip => None,
    };
    if prover.is_none() && wanted.len() < PROBE_FROM {
        return Ok(None);
    }
    let probed = probe(schedule, wanted)?;
    if let Some(prover) = prover {
        postcondition::check_cells(schedule, prover)?;
    }
    let estimate = estimate(schedule, &probed, wanted.len() as u64, options, source);
    let needed = estimate.proof.saturating_add(estimate.emit);
    if needed > options.memory_budget {
        return Err(MemoryError {
            needed,
            budget: options.memory_budget,
            proof: estimate.proof,
            emit: estimate.emit,
            ranks: wanted.len() as u64,
            rank_n: schedule.shape.rank_n,
            proving: prover.is_some(),
            emitting: options.emit,
        }
        .into());
    }
    Ok(probed.iter().map(|p| p.program.footprint()).max())
}

/// The representative ranks lowered and encoded before any world-sized
/// work: the first and last rank asked for, and the world's first, middle
/// and last. A schedule's ranks differ by their place in their groups and
/// scopes; these catch a device limit every rank (or an end of the world)
/// exceeds, and give the sizes the memory estimate scales.
fn probes(rank_n: u32, wanted: &[Rank]) -> Vec<Rank> {
    let ends = [wanted.first(), wanted.last()].into_iter().flatten().copied();
    let mut ranks: Vec<Rank> = ends.chain([Rank(0), Rank(rank_n / 2), Rank(rank_n.saturating_sub(1))]).collect();
    ranks.sort_unstable();
    ranks.dedup();
    ranks
}

/// A lowered and encoded probe.
struct Probed {
    program: RankProgram,
    images: RankImages,
}

/// Lowers and encodes the [`probes`], in rank order; the first error.
fn probe(schedule: &Schedule, wanted: &[Rank]) -> Result<Vec<Probed>, CompileError> {
    let mut out = Vec::new();
    for rank in probes(schedule.shape.rank_n, wanted) {
        let program = lower(schedule, rank)?;
        let images = encode(&program, schedule.arch)?;
        out.push(Probed { program, images });
    }
    Ok(out)
}

/// Bytes a compile will hold at once, by estimate.
struct Estimate {
    /// The proof's: every rank's watch, a chunk of the ranks only the
    /// proof needs, the symbolic buffers.
    proof: u64,
    /// The emitted ranks': records and images (a chunk's, when none is
    /// kept).
    emit: u64,
}

/// The memory of a compile emitting `ranks` ranks, from the largest probe,
/// as `stream.rs` streams the world: the ranks kept, their programs and
/// images (when none is kept, the chunk in flight's); the tables of
/// distinct TOP_SP programs the compile keeps (`lower/distinct.rs`: the
/// round trip's and the chain check's when checking, the encoder's when
/// neither keeping nor checking), each at most its byte cap and at most
/// every rank's programs and images; when proving, every rank's watch
/// (what outlives its chunk), a chunk of ranks only the proof needs,
/// lowered, with their watches, and the postcondition proof's largest
/// buffers. A chunk's ranks are either kept or only the proof's, so
/// counting a whole chunk of each overcounts by at most one chunk.
fn estimate(
    schedule: &Schedule,
    probed: &[Probed],
    ranks: u64,
    options: &Options,
    source: ProofSource<'_>,
) -> Estimate {
    use std::mem::size_of;
    let program = probed.iter().map(|p| p.program.footprint()).max().unwrap_or(0);
    let images = probed.iter().map(|p| images_footprint(&p.images)).max().unwrap_or(0);
    let chunk = options.chunk_ranks.max(1) as u64;
    let kept = if options.emit { ranks } else { ranks.min(chunk) };
    let mut emit = kept.saturating_mul(program.saturating_add(images));
    if options.emit {
        // What the caller holds of each kept rank besides (a binding's
        // copies of its images).
        let holds = options.caller_holds;
        let besides = |p: &Probed| {
            let topsps = p.images.topsps.len() as u64;
            images_heap(&p.images).saturating_mul(holds.image_copies).saturating_add(topsps.saturating_mul(holds.bytes))
        };
        emit = emit.saturating_add(ranks.saturating_mul(probed.iter().map(besides).max().unwrap_or(0)));
    }
    let rank_n = u64::from(schedule.shape.rank_n);
    // A table holds at most its cap, and at most every rank's programs
    // (with their images).
    let table = |cap: usize| (cap as u64).min(rank_n.saturating_mul(program.saturating_add(images)));
    let (prover, tables) = match source {
        ProofSource::Prove(prover) => (Some(prover), table(MEMO_BYTES).saturating_add(table(CHAINS_BYTES))),
        ProofSource::Certificate(_) => (None, table(MEMO_BYTES)),
        ProofSource::Skip if !options.emit => (None, table(ENCODED_BYTES)),
        ProofSource::Skip => (None, 0),
    };
    let Some(prover) = prover else {
        return match source {
            ProofSource::Skip => Estimate { proof: 0, emit: emit.saturating_add(tables) },
            _ => Estimate { proof: tables, emit },
        };
    };
    // A watch: its rank and a count per collective, on the heap.
    let watch = (size_of::<Seen>() + 4 * schedule.collectives.len() + ALLOCATION_HEADER) as u64;
    // A rank lowered in a chunk, as the parallel map collects it.
    let collected = size_of::<Option<Result<RankProgram, LowerError>>>() as u64;
    let in_flight = rank_n.min(chunk).saturating_mul(program.saturating_add(watch).saturating_add(collected));
    let watches = rank_n.saturating_mul(watch);
    // Per collective, the size of its group 0's base orbit (counted, not
    // held: nothing world-sized is held before the refusal): the
    // postcondition proof's largest buffers, and what the prover's symmetry
    // holds for the whole proof: every group's base orbit and its protocol
    // profile (`Bases`, `Profiles`), each group's the size of group 0's (a
    // collective's groups are of one size and run the same steps).
    let (mut buffers, mut held) = (0u64, 0u64);
    for plan in &schedule.collectives {
        let base = prover.symmetry.then(|| symmetry::base_size(schedule, plan, 0)).flatten();
        buffers = buffers.max(postcondition::bytes(schedule, plan, prover, base));
        if let Some(base) = base {
            let one = base.footprint().saturating_add(Profile::bytes_at_most(schedule, plan, base));
            held = held.saturating_add(one.saturating_mul(u64::from(plan.groups.group_n())));
        }
    }
    let proof = watches.saturating_add(in_flight).saturating_add(buffers).saturating_add(held).saturating_add(tables);
    Estimate { proof, emit }
}

/// An allocator's bookkeeping per allocation, about.
const ALLOCATION_HEADER: usize = 16;

/// The bytes of a rank's images themselves.
fn images_heap(images: &RankImages) -> u64 {
    images.topsps.iter().map(|t| t.ctrl_spad.len() + t.slot_spad.len() + t.neff_configs.len()).sum::<usize>() as u64
}

/// The bytes a rank's images hold.
fn images_footprint(images: &RankImages) -> u64 {
    let inline = std::mem::size_of::<RankImages>() + images.topsps.capacity() * std::mem::size_of::<TopSpImages>();
    let heap: usize =
        images.topsps.iter().map(|t| t.ctrl_spad.capacity() + t.slot_spad.capacity() + t.neff_configs.len()).sum();
    (inline + heap) as u64
}

#[cfg(test)]
mod tests {
    use super::{ENCODED_BYTES, MEMO_BYTES, estimate, probe};
    use crate::build::build;
    use crate::pipeline::CallerHolds;
    use crate::pipeline::Options;
    use crate::pipeline::options::ProofSource;
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};
    use ccc_ir::id::Rank;

    /// The encoder's table of distinct programs is counted when nothing is
    /// kept or checked, at most every rank's programs and images; no table
    /// when the ranks are kept unchecked.
    #[test]
    fn the_distinct_program_tables_are_counted_where_they_are_kept() {
        let case = Case::flat(OpType::AllReduce, AlgType::Ring, 64, 16);
        let schedule = build(&case.valid()).unwrap();
        let wanted: Vec<Rank> = (0..64).map(Rank).collect();
        let probed = probe(&schedule, &wanted).unwrap();
        let per_rank = {
            let e = estimate(&schedule, &probed, 1, &Options { emit: true, ..Options::default() }, ProofSource::Skip);
            e.emit
        };
        let world = 64 * per_rank;
        assert!(world < ENCODED_BYTES as u64 && world < MEMO_BYTES as u64, "a small world stays under the caps");
        let kept = Options { emit: true, ..Options::default() };
        let unkept = Options { emit: false, ..Options::default() };
        let e = estimate(&schedule, &probed, 64, &kept, ProofSource::Skip);
        assert_eq!((e.proof, e.emit), (0, 64 * per_rank), "kept and unchecked: no table");
        let e = estimate(&schedule, &probed, 64, &unkept, ProofSource::Skip);
        assert_eq!((e.proof, e.emit), (0, 64 * per_rank + world), "a chunk in flight and the encoder's table");
    }

    /// What a caller holds besides (a binding's copies of the images, its
    /// objects per TOP_SP) is counted for every kept rank, and only when
    /// ranks are kept.
    #[test]
    fn what_the_caller_holds_is_counted_per_kept_rank() {
        let case = Case::flat(OpType::AllReduce, AlgType::Ring, 64, 16);
        let schedule = build(&case.valid()).unwrap();
        let wanted: Vec<Rank> = (0..64).map(Rank).collect();
        let probed = probe(&schedule, &wanted).unwrap();
        let image_bytes: u64 = probed[0]
            .images
            .topsps
            .iter()
            .map(|t| (t.ctrl_spad.len() + t.slot_spad.len() + t.neff_configs.len()) as u64)
            .sum();
        let topsps = probed[0].images.topsps.len() as u64;
        assert!(probed.iter().all(|p| p.images.topsps.len() as u64 == topsps));
        let holds = CallerHolds { image_copies: 1, bytes: 100 };
        let plain = Options::default();
        let held = Options { caller_holds: holds, ..Options::default() };
        let e0 = estimate(&schedule, &probed, 64, &plain, ProofSource::Skip);
        let e1 = estimate(&schedule, &probed, 64, &held, ProofSource::Skip);
        // Every ring rank's images are alike in size.
        assert_eq!(e1.emit - e0.emit, 64 * (image_bytes + 100 * topsps));
        let unkept = |o: Options| Options { emit: false, ..o };
        let (u0, u1) = (
            estimate(&schedule, &probed, 64, &unkept(plain), ProofSource::Skip),
            estimate(&schedule, &probed, 64, &unkept(held), ProofSource::Skip),
        );
        assert_eq!(u0.emit, u1.emit, "nothing kept, nothing held");
    }
}
