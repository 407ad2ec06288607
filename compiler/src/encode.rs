//! encode: a lowered rank into the exact bytes each of its TOP_SPs loads
//! (`docs/wire-format.md`).
//!
//! Encoding is a pure function of what it reads of a TOP_SP,
//! `EncodeInputs` (and of the arch's region sizes): two TOP_SPs whose
//! inputs are equal, of whatever ranks, encode to equal images. The round
//! trip (`verify/roundtrip.rs`) rests on that to decode each distinct
//! TOP_SP program once.

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
/// or a field its width, naming the rank and TOP_SP.
pub fn encode(program: &RankProgram, arch: ccc_ir::arch::Arch) -> Result<RankImages, ImageError> {
    let params = arch.params();
    let topsps = program
        .topsps
        .iter()
        .map(|tp| {
            encode_topsp(tp, params.ctrl_spad_size, params.slot_spad_size).map_err(|source| ImageError {
                rank: program.rank,
                topsp: tp.topsp,
                source,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RankImages { rank: program.rank, topsps })
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
/// fingerprint of part of these, `verify/distinct.rs`.)
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
