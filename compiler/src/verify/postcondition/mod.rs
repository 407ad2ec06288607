//! The postcondition proof: execute the schedule symbolically and check
//! that every collective does what its op promises.
//!
//! Each group runs in bulk-synchronous steps: at step `s` every member
//! lists its transfers; the values it sends are read from its buffer as it
//! stood before the step, then every receive is matched to exactly one send
//! of the same transfer by the sender and applied (copied, or folded in
//! with a check that no contribution arrives twice). At the end every cell
//! the op defines is compared with what it must hold. A cell's value is the
//! set of members whose contribution it carries (`sets::Sets`); for all-to-all,
//! also which chunk it is.
//!
//! Three runs do it: `full.rs` holds every member's buffer; `orbit.rs`
//! runs a symmetric group on member 0 alone; `paths.rs` keeps a counter
//! per cell and proves the op by where each contribution goes (folded
//! once along a path to one cell per block, then copied on). The last two
//! take only what they can prove and leave the rest to the full run,
//! which names the defect.
//!
//! Every transfer moves data on all channels alike, so channels need no
//! separate run; the two halves of a chunk do when some transfer moves only
//! one (Kangaring), and then each half is proven on its own.

use super::defect::{Defect, VerifyError};
use super::options::ProverOptions;
use super::sets::SetId;
use super::symmetry::Symmetry;
use super::transfers::TransferSource;
use crate::schedule::{CollectivePlan, Halves, OpKind, PhaseInstance, PhaseKind, Schedule, Transfer};
use ccc_ir::enums::HalfChunk;
use serde::Serialize;

mod counters;
mod full;
mod member_major;
mod orbit;
mod paths;
#[cfg(test)]
mod paths_tests;
mod runs;
mod step_runs;
#[cfg(test)]
mod tests;
mod window;

/// The largest symbolic buffer (members x blocks of one group) the full
/// run takes on; 2^27 cells is about 1 GiB of handles, and about as much
/// again of sets (see the memory budget, `pipeline::DEFAULT_MEMORY_BUDGET`). A symmetric group, run on
/// member 0 alone, needs no such buffer.
pub(crate) const MAX_PROOF_CELLS: u64 = 1 << 27;

/// What the postcondition proof established for one collective.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CollectivePostcondition {
    /// The collective.
    pub collective: u32,
    /// The postcondition that was checked, in words.
    pub claim: String,
    /// Groups executed.
    pub groups: u32,
    /// Members per group.
    pub members: u32,
    /// Steps executed.
    pub steps: u32,
    /// Halves executed separately (1 when every transfer moves both).
    pub halves: u32,
    /// Transfers matched and applied, summed over groups and halves.
    pub transfers: u64,
}

/// What the postcondition proof found: per collective what it
/// established, and the defects (each group's first).
pub(crate) struct Proven {
    /// Per collective, in order.
    pub(crate) collectives: Vec<CollectivePostcondition>,
    /// The defects found, in collective and group order.
    pub(crate) defects: Vec<Defect>,
}

/// Proves every collective's postcondition on `source`'s transfers, each
/// group of `symmetry` on member 0 alone, calling `proven(members)` as
/// each group is done (for progress reports).
///
/// # Errors
///
/// [`VerifyError::TooLarge`] when a group to run in full has a symbolic
/// buffer beyond [`MAX_PROOF_CELLS`]. Defects are not errors here: they
/// are collected in [`Proven::defects`].
pub(crate) fn prove(
    schedule: &Schedule,
    source: &dyn TransferSource,
    options: &ProverOptions,
    symmetry: &Symmetry,
    proven: &dyn Fn(u64),
) -> Result<Proven, VerifyError> {
    let mut defects = Vec::new();
    let collectives = schedule
        .collectives
        .iter()
        .map(|plan| prove_collective(schedule, plan, source, options, symmetry, proven, &mut defects))
        .collect::<Result<_, _>>()?;
    Ok(Proven { collectives, defects })
}

/// Whether every group of `plan` the postcondition proof runs in full (not
/// on member 0 alone) fits [`MAX_PROOF_CELLS`], decided before anything is
/// lowered: a group runs in full unless its op's buffers start invariant,
/// symmetry is on and a sample of its members runs member 0's program
/// moved (`symmetry::sampled`; a group the sample passes but the proof
/// later finds not symmetric is refused then, as before), or its path run
/// is taken member-major (`paths::member_major`: ring chains; a group
/// whose path run fails is refused then).
///
/// # Errors
///
/// [`VerifyError::TooLarge`] for the first collective with a group that
/// surely runs in full and does not fit.
pub(crate) fn check_cells(schedule: &Schedule, options: &ProverOptions) -> Result<(), VerifyError> {
    for plan in &schedule.collectives {
        let cells = full_run_cells(plan);
        // A path run taken member-major needs far less.
        if cells <= MAX_PROOF_CELLS || (options.symmetry && paths::member_major(plan)) {
            continue;
        }
        let orbit = options.symmetry && invariant(plan);
        if (0..plan.groups.group_n()).any(|g| !orbit || !super::symmetry::sampled_holds(schedule, plan, g)) {
            return Err(VerifyError::TooLarge {
                collective: plan.index,
                cells,
                limit: MAX_PROOF_CELLS,
                provable: None,
            });
        }
    }
    Ok(())
}

/// The symbolic buffer of a full run of one group of `plan`: members x blocks.
pub(crate) fn full_run_cells(plan: &CollectivePlan) -> u64 {
    u64::from(plan.groups.size()) * u64::from(plan.layout().block_n())
}

/// The bytes a full run of one group of `plan` holds, by estimate: per
/// cell its set handle (and for all-to-all the chunk it holds) and as much
/// again for the interned sets and memoized unions (measured: a 3,000-rank
/// recursive halving holds about that), per member its place in the phase
/// and its step's lists.
pub(crate) fn full_run_bytes(plan: &CollectivePlan) -> u64 {
    /// A member's lists of one step on the heap, about: four small
    /// vectors with their allocators' headers.
    const MEMBER_LISTS: usize = 512;
    let chunk = if plan.kind == OpKind::AllToAll { std::mem::size_of::<u32>() } else { 0 };
    let cell = (2 * std::mem::size_of::<SetId>() + chunk) as u64;
    let member = (full::MEMBER_BYTES + std::mem::size_of::<PhaseInstance>() + MEMBER_LISTS) as u64;
    full_run_cells(plan).saturating_mul(cell).saturating_add(u64::from(plan.groups.size()) * member)
}

/// Bytes the postcondition proof of `plan` holds at most, by estimate
/// (groups run one after the other): a full run's, unless its groups are
/// proven on member 0 alone (judged on the first group's sample, as
/// [`check_cells`] judges every group's), or too large to run at all
/// ([`check_cells`] refuses those).
///
/// `base`: group 0's [`symmetry::base_size`](super::symmetry::base_size),
/// as the caller found it (`None` too where the prover has no symmetry).
pub(crate) fn bytes(
    schedule: &Schedule,
    plan: &CollectivePlan,
    options: &ProverOptions,
    base: Option<super::symmetry::BaseSize>,
) -> u64 {
    let orbit = options.symmetry
        && invariant(plan)
        && base.is_some_and(|size| super::symmetry::sampled_holds_sized(schedule, plan, 0, size));
    let full = if full_run_cells(plan) > MAX_PROOF_CELLS { 0 } else { full_run_bytes(plan) };
    match () {
        () if orbit => 0,
        // A ring chain's path run, taken member-major, holds every
        // member's runs and receives, whatever the cells; the full run
        // stays its fallback.
        () if options.symmetry && paths::member_major(plan) => {
            full.max(u64::from(plan.groups.size()).saturating_mul(PATH_RUN_MEMBER_BYTES))
        }
        () => full,
    }
}

/// The bytes a member-major path run holds per member, about: its runs,
/// their transfers and the receives matched. Measured (resident, above
/// the rest of the estimate): 1.0 to 1.1 KiB a member over ring
/// broadcasts and reduces of 65,536 to 1,048,576 ranks on 1 and 32
/// channels (a million ranks' broadcast held 1.37 GiB against an estimate
/// of 87.5 MiB that counted none of it); a sixth more for what that
/// sample missed, not more, so that the million-rank reduce on 32
/// channels, 1.83 GiB resident, still fits the default budget.
const PATH_RUN_MEMBER_BYTES: u64 = 1280;

/// Whether the op's buffers start invariant under moving members (what
/// the run on member 0 alone needs): an all-to-all's too, its chunks
/// moving with them (`orbit.rs`).
pub(crate) fn invariant(plan: &CollectivePlan) -> bool {
    matches!(plan.kind, OpKind::AllReduce | OpKind::AllGather | OpKind::ReduceScatter | OpKind::AllToAll)
}

/// One collective: each group on member 0 alone when it is symmetric,
/// else by its contributions' paths when that argument proves it, else
/// in full; a group's first defect goes to `defects` and ends its
/// runs (what follows it would only echo it).
fn prove_collective(
    schedule: &Schedule,
    plan: &CollectivePlan,
    source: &dyn TransferSource,
    options: &ProverOptions,
    symmetry: &Symmetry,
    proven: &dyn Fn(u64),
    defects: &mut Vec<Defect>,
) -> Result<CollectivePostcondition, VerifyError> {
    let n = plan.groups.size();
    // Only a full run holds every member's buffer.
    let cells = full_run_cells(plan);
    let too_large = VerifyError::TooLarge { collective: plan.index, cells, limit: MAX_PROOF_CELLS, provable: None };
    let halves = halves(plan);
    let mut transfers = 0u64;
    // Their buffers start symmetric.
    let invariant = invariant(plan);
    let paths = options.symmetry && paths::applies(plan);
    for group in 0..plan.groups.group_n() {
        let orbit = if invariant { symmetry.orbit(plan.index, group) } else { None };
        for &half in halves {
            // Member 0 alone, when every member runs its program moved;
            // anything that run cannot accept is left to the full run,
            // which names the defect.
            if let Some(moved) = orbit.and_then(|o| orbit::run(plan, o, half)) {
                transfers += moved;
                continue;
            }
            // By its contributions' paths, a counter a cell; again
            // anything it cannot accept is left to the full run.
            if paths && let Some(moved) = paths::run(schedule, plan, group, half, source, options) {
                transfers += moved;
                continue;
            }
            if cells > MAX_PROOF_CELLS {
                return Err(too_large);
            }
            match full::run(schedule, plan, group, half, source, options) {
                Ok(moved) => transfers += moved,
                Err(defect) => {
                    defects.push(*defect);
                    break;
                }
            }
        }
        proven(u64::from(n));
    }
    Ok(CollectivePostcondition {
        collective: plan.index,
        claim: claim(plan),
        groups: plan.groups.group_n(),
        members: n,
        steps: plan.step_n,
        halves: halves.len() as u32,
        transfers,
    })
}

/// The halves a collective's proof runs separately: both when some
/// transfer moves only one (Kangaring's two directions), else one run for
/// both.
pub(crate) fn halves(plan: &CollectivePlan) -> &'static [HalfChunk] {
    let split = plan.phases.iter().any(|p| {
        matches!(p.kind, PhaseKind::RingReduceScatter { bidir: true } | PhaseKind::RingAllGather { bidir: true })
    });
    if split { &[HalfChunk::H0, HalfChunk::H1] } else { &[HalfChunk::H0] }
}

/// Whether transfer `t` moves half `half`.
pub(crate) fn moves(t: &Transfer, half: HalfChunk) -> bool {
    match t.halves {
        Halves::Both => true,
        Halves::Only(h) => h == half,
    }
}

/// The postcondition a collective must meet, in words (the `claim` of its proof).
pub fn claim(plan: &CollectivePlan) -> String {
    match plan.kind {
        OpKind::AllReduce => "every rank holds every chunk reduced over every rank, each contribution once".into(),
        OpKind::AllGather => "every rank holds every rank's chunk".into(),
        OpKind::ReduceScatter => "rank i holds chunk i reduced over every rank, each contribution once".into(),
        OpKind::Broadcast => "every rank holds the root's chunks".into(),
        OpKind::Reduce => "the root holds every chunk reduced over every rank, each contribution once".into(),
        OpKind::AllToAll => "rank i's output chunk j is rank j's input chunk i, with its size".into(),
        OpKind::Permute { reduce: false } => "every target holds its source's buffer".into(),
        OpKind::Permute { reduce: true } => "every target holds its own and its source's buffer, folded once".into(),
    }
}
