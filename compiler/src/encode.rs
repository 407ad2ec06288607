//! encode: a lowered rank into the exact bytes each of its TOP_SPs loads
//! (`docs/wire-format.md`).
//!
//! Encoding is a pure function of what it reads of a TOP_SP,
//! `EncodeInputs` (and of the arch's region sizes): two TOP_SPs whose
//! inputs are equal, of whatever ranks, encode to equal images. The round
//! trip (`verify/roundtrip.rs`) rests on that to decode each distinct
//! TOP_SP program once, and a compile that keeps no image and proves
//! nothing on it to encode each distinct TOP_SP program once (`Encoded`):
//! an image nobody keeps matters only by whether it fits, and a program
//! whose inputs equal one that encoded would encode to the same bytes.

use crate::lower::distinct::{Distinct, fingerprint};
use crate::lower::{RankProgram, SegmentProgram, TopSpProgram};
use ccc_ir::id::{Rank, TopSp};
use ccc_ir::wire::EncodeError;
use ccc_ir::wire::ctrl_spad::{self, Segment};
use ccc_ir::wire::neff_configs::NEFF_CONFIGS_BYTES;
use ccc_ir::wire::slot_spad::SlotSpad;

/// The three images of one TOP_SP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopSpImages {
    /// The TOP_SP.
    pub topsp: TopSp,
    /// `ctrl_spad.bin`: the slot chain.
    pub ctrl_spad: Vec<u8>,
    /// `slot_spad.bin`: the tp_inc_steps.
    pub slot_spad: Vec<u8>,
    /// `neff_configs.bin`: exactly 3592 bytes.
    pub neff_configs: Box<[u8; NEFF_CONFIGS_BYTES]>,
    /// Records in the chain.
    pub record_n: u32,
}

/// Every image of one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankImages {
    /// The rank.
    pub rank: Rank,
    /// Per TOP_SP, in order.
    pub topsps: Vec<TopSpImages>,
}

/// An image that could not be encoded, with where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{rank}, {topsp}: {source}")]
pub struct ImageError {
    /// The rank.
    pub rank: Rank,
    /// The TOP_SP.
    pub topsp: TopSp,
    /// What did not fit.
    pub source: EncodeError,
}

/// Encodes every TOP_SP of a lowered rank.
///
/// # Errors
///
/// [`ImageError`] when an image exceeds its region (CTRL SPAD, SLOT SPAD)
/// or a field its width, naming the rank and TOP_SP; or when a TOP_SP is
/// past the ones `arch` has (the rank was lowered for another arch: a
/// Cayman rank's eight TOP_SPs encoded for Sunda's four).
pub fn encode(program: &RankProgram, arch: ccc_ir::arch::Arch) -> Result<RankImages, ImageError> {
    let params = arch.params();
    let topsps = program
        .topsps
        .iter()
        .map(|tp| {
            let image = match tp.topsp.0 < params.topsp_n {
                true => encode_topsp(tp, params.ctrl_spad_size, params.slot_spad_size),
                // The rank was lowered for an arch with more TOP_SPs.
                false => Err(EncodeError::FieldOverflow {
                    field: "topsp",
                    value: u64::from(tp.topsp.0),
                    max: u64::from(params.topsp_n.saturating_sub(1)),
                }),
            };
            image.map_err(|source| ImageError { rank: program.rank, topsp: tp.topsp, source })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RankImages { rank: program.rank, topsps })
}

/// The most bytes of programs an [`Encoded`] holds (past it, new programs
/// are encoded but not kept).
pub(crate) const ENCODED_BYTES: usize = 16 << 20;

/// The TOP_SP programs a compile that keeps no image has encoded, for one
/// arch (see the module overview), shared by every thread: only programs
/// that encoded are kept, so a TOP_SP that does not fit is encoded, and
/// its error returned, every time.
pub(crate) struct Encoded {
    arch: ccc_ir::arch::Arch,
    /// The programs that encoded, equal by their [`EncodeInputs`].
    table: Distinct<()>,
}

impl Encoded {
    /// None yet, for images of `arch`.
    pub(crate) fn new(arch: ccc_ir::arch::Arch) -> Encoded {
        Encoded { arch, table: Distinct::new(|a, b| EncodeInputs(a) == EncodeInputs(b), ENCODED_BYTES) }
    }

    /// Whether every TOP_SP of `program` encodes, as [`encode`] says,
    /// without keeping the images: a TOP_SP whose inputs equal a program's
    /// that encoded is not encoded again.
    ///
    /// # Errors
    ///
    /// The first TOP_SP's [`ImageError`], as [`encode`].
    pub(crate) fn check(&self, program: &RankProgram) -> Result<(), ImageError> {
        let params = self.arch.params();
        for tp in &program.topsps {
            let fingerprint = fingerprint(tp);
            if self.table.find(tp, fingerprint, |()| ()).is_none() {
                encode_topsp(tp, params.ctrl_spad_size, params.slot_spad_size).map_err(|source| ImageError {
                    rank: program.rank,
                    topsp: tp.topsp,
                    source,
                })?;
                self.table.keep(tp, fingerprint, (), 0);
            }
        }
        Ok(())
    }
}

/// Encodes one TOP_SP (its index is the images' label only).
///
/// # Errors
///
/// As [`encode`], without the rank and TOP_SP.
pub(crate) fn encode_topsp(
    tp: &TopSpProgram,
    ctrl_capacity: u32,
    slot_capacity: u32,
) -> Result<TopSpImages, EncodeError> {
    let segments: Vec<Segment> = tp.segments.iter().map(SegmentProgram::ctrl_spad).collect();
    let ctrl_spad = ctrl_spad::encode(&segments, ctrl_capacity)?;
    let slot = SlotSpad { records: tp.records().map(|r| r.tp.to_vec()).collect() };
    let slot_spad = slot.encode(slot_capacity)?;
    let neff_configs = tp.neff.encode()?;
    Ok(TopSpImages { topsp: tp.topsp, ctrl_spad, slot_spad, neff_configs, record_n: tp.neff.op_num })
}

/// Exactly what [`encode_topsp`] reads of a TOP_SP, compared as a whole:
/// each segment's op entries and END address, each record's
/// `tp_inc_steps`, and the EXEC block (which holds the TOP_SP's index).
/// Not the phases, steps, channels or mesh event counts the checks read:
/// the images do not hold them. (The round trip files programs under a
/// fingerprint of part of these, `lower/distinct.rs`.)
#[derive(Clone, Copy)]
pub(crate) struct EncodeInputs<'a>(pub(crate) &'a TopSpProgram);

impl PartialEq for EncodeInputs<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0, other.0);
        a.neff == b.neff
            && a.segments.len() == b.segments.len()
            && a.segments.iter().zip(&b.segments).all(|(s, t)| {
                s.compl_addr == t.compl_addr
                    && s.records.len() == t.records.len()
                    && s.records.iter().zip(&t.records).all(|(r, q)| r.op == q.op && r.tp == q.tp)
            })
    }
}

impl Eq for EncodeInputs<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::lower::lower;
    use crate::testing::Case;
    use ccc_ir::arch::Arch;
    use ccc_ir::enums::{AlgType, OpType};

    /// Encoding each distinct program once answers as encoding every rank
    /// does: the same error, naming its own rank, for two ranks whose
    /// TOP_SP 0 programs are equal and do not encode (a run repeated 0
    /// times), after an intact copy encoded; success for the others.
    #[test]
    fn encoded_answers_as_encode_on_every_rank_even_when_a_program_repeats() {
        let schedule = build(&Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4).valid()).unwrap();
        let mut programs: Vec<RankProgram> = (0..8).map(|r| lower(&schedule, Rank(r)).unwrap()).collect();
        let same: Vec<usize> = (1..8).filter(|&r| programs[r].topsps[0] == programs[0].topsps[0]).collect();
        assert!(same.len() >= 3, "no repeated TOP_SP program: the test would not reach the table");
        let encoded = Encoded::new(schedule.arch);
        assert_eq!(encoded.check(&programs[0]), Ok(()));
        let (a, b) = (same[1], same[2]);
        for r in [a, b] {
            programs[r].topsps[0].segments[0].records[0].tp[0].repeat = 0;
        }
        for p in &programs {
            let expected = encode(p, schedule.arch).map(|_| ());
            assert_eq!(encoded.check(p), expected, "rank {}", p.rank.0);
            assert_eq!(expected.is_err(), [a, b].contains(&(p.rank.0 as usize)), "rank {}", p.rank.0);
        }
    }

    /// A rank lowered for Cayman (eight TOP_SPs) encoded for Sunda (four)
    /// is refused at its first TOP_SP past Sunda's, not encoded into
    /// images for TOP_SPs Sunda does not have.
    #[test]
    fn a_topsp_past_the_arch_is_refused() {
        let mut case = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
        case.channels = 8;
        let schedule = build(&case.valid()).unwrap();
        let program = lower(&schedule, Rank(0)).unwrap();
        assert_eq!(program.topsps.len(), 8);
        assert_eq!(encode(&program, Arch::Cayman).map(|i| i.topsps.len()), Ok(8));
        let refused = encode(&program, Arch::Sunda).unwrap_err();
        assert_eq!((refused.rank, refused.topsp), (Rank(0), TopSp(4)));
        assert!(refused.to_string().ends_with("topsp is 4, which does not fit (maximum 3)"), "{refused}");
    }
}
