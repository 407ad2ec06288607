//! The round trip: every emitted image decodes back to exactly the records
//! that were lowered.
//!
//! # Each distinct TOP_SP program decoded once
//!
//! A world repeats its TOP_SP programs: the 65,536 TOP_SPs of an 8,192-rank
//! Hier all-reduce encode to 8 distinct image sets (one per TOP_SP index),
//! so they hold 8 distinct programs as the encoder reads them. A [`Memo`]
//! keeps the programs whose images decoded back, with those images, and
//! only a success: a TOP_SP that fails is decoded (and reported, with its
//! rank) every time. Two arguments let an image skip its decode:
//!
//! - **Kept images** (written out, [`Memo::check_kept`]): the image's
//!   bytes equal bytes that decoded back to records equal to its program's.
//!   Decoding is a function of the bytes, so this image decodes to those
//!   same records, which are its program's. This holds whatever the
//!   encoder did.
//! - **Images not kept** ([`Memo::encode_and_check`]): such an image is
//!   never built when its program's [`EncodeInputs`] equal a proven one's
//!   (and the compile's arch, so its regions, is the same: a memo lives
//!   for one compile). Encoding is a pure function of those inputs
//!   (`encode.rs`), so the image would be byte for byte the proven one,
//!   which decodes back to records equal to this program's.
//!
//! The memo only shortcuts successes, so every image's verdict (and every
//! defect's message) is the one decoding it would give: results do not
//! depend on which thread got to a program first, on the thread count or
//! on the chunk size. It is a [`Distinct`] table (`lower/distinct.rs`: looked
//! up by a fingerprint and whole equality of the inputs, never iterated)
//! of at most [`MEMO_BYTES`] of images and the programs they decode to
//! (past that, a world of distinct programs decodes each, as without a
//! memo). For the same reason the proof does
//! not say how many images were decoded and how many matched: two threads
//! may both decode a program neither has yet kept, so that split depends
//! on the threads; the verdicts and the count of images proven do not.

use super::defect::{Defect, DefectKind};
use crate::encode::{EncodeInputs, ImageError, RankImages, TopSpImages, encode_topsp};
use crate::lower::distinct::{Distinct, fingerprint};
use crate::lower::{RankProgram, SegmentProgram, TopSpProgram};
use ccc_ir::arch::Arch;
use ccc_ir::id::{CollectiveIdx, Rank, TopSp};
use ccc_ir::wire::ctrl_spad;
use ccc_ir::wire::neff_configs::NeffConfigs;
use ccc_ir::wire::slot_spad::SlotSpad;

/// Images per TOP_SP: `ctrl_spad`, `slot_spad`, `neff_configs`.
const IMAGES_PER_TOPSP: u64 = 3;

/// The most bytes of images and programs a [`Memo`] holds: past it, a new
/// program is decoded but not kept. A TOP_SP's three images are at most
/// 4 KiB + 32 KiB + 3,592 bytes on Cayman, so hundreds of programs fit; an
/// 8,192-rank Hier all-reduce has 8, of 4,008 bytes of images each.
pub(crate) const MEMO_BYTES: usize = 16 << 20;

/// A round-trip defect of `rank`'s TOP_SP `topsp`.
fn defect(rank: Rank, topsp: TopSp, image: &'static str, detail: String) -> Box<Defect> {
    Box::new(Defect {
        collective: CollectiveIdx(0),
        group: 0,
        rank: Some(rank),
        topsp: Some(topsp),
        record: None,
        step: None,
        chunk: None,
        kind: DefectKind::RoundTrip { image, detail },
    })
}

/// Decodes one TOP_SP's images and compares them with its program, field
/// by field, without rebuilding the program's side as wire values.
fn check_topsp(rank: Rank, tp: &TopSpProgram, img: &TopSpImages) -> Result<(), Box<Defect>> {
    let fail = |image, detail| defect(rank, tp.topsp, image, detail);
    let segments = ctrl_spad::decode(&img.ctrl_spad).map_err(|e| fail("ctrl_spad", e.to_string()))?;
    let same = |(decoded, lowered): (&ctrl_spad::Segment, &SegmentProgram)| {
        decoded.compl_addr == lowered.compl_addr
            && decoded.records.len() == lowered.records.len()
            && decoded.records.iter().zip(&lowered.records).all(|(op, r)| *op == r.op)
    };
    let differs = segments.iter().zip(&tp.segments).position(|p| !same(p));
    if differs.is_some() || segments.len() != tp.segments.len() {
        let at = differs.unwrap_or(segments.len().min(tp.segments.len()));
        return Err(fail("ctrl_spad", format!("collective segment {at} differs")));
    }
    let slot = SlotSpad::decode(&img.slot_spad).map_err(|e| fail("slot_spad", e.to_string()))?;
    let record_n = tp.records().count();
    let differs = slot.records.iter().zip(tp.records()).position(|(decoded, r)| decoded[..] != r.tp[..]);
    if differs.is_some() || slot.records.len() != record_n {
        let at = differs.unwrap_or(slot.records.len().min(record_n));
        return Err(fail("slot_spad", format!("record {at}'s tp_inc_steps differ")));
    }
    let neff = NeffConfigs::decode(&img.neff_configs[..]).map_err(|e| fail("neff_configs", e.to_string()))?;
    if neff != tp.neff {
        return Err(fail("neff_configs", "the decoded block differs from the lowered one".into()));
    }
    Ok(())
}

/// The TOP_SP programs whose images decoded back, shared by every thread
/// of one compile (see the module overview). It encodes for one arch,
/// fixed when made: images proven for one arch's regions stand for no
/// other's.
pub(crate) struct Memo {
    arch: Arch,
    /// The programs proven, equal by their [`EncodeInputs`], each with
    /// its images.
    proven: Distinct<TopSpImages>,
}

/// Whether `a` and `b` encode alike: their [`EncodeInputs`] are equal.
fn same_inputs(a: &TopSpProgram, b: &TopSpProgram) -> bool {
    EncodeInputs(a) == EncodeInputs(b)
}

/// The bytes of a TOP_SP's three images.
fn image_bytes(images: &TopSpImages) -> usize {
    images.ctrl_spad.len() + images.slot_spad.len() + images.neff_configs.len()
}

impl Memo {
    /// An empty memo for images of `arch`.
    pub(crate) fn new(arch: Arch) -> Memo {
        Memo { arch, proven: Distinct::new(same_inputs, MEMO_BYTES) }
    }

    /// Whether a program with `tp`'s encoding inputs is proven, and its
    /// images pass `accept`.
    fn proven(&self, tp: &TopSpProgram, fingerprint: u64, accept: impl FnOnce(&TopSpImages) -> bool) -> bool {
        self.proven.find(tp, fingerprint, accept).unwrap_or(false)
    }

    /// Keeps `tp`, whose images `images` decoded back to it (unless a
    /// program with its inputs is kept already, or the memo is full).
    fn keep(&self, tp: &TopSpProgram, fingerprint: u64, images: TopSpImages) {
        let bytes = image_bytes(&images);
        self.proven.keep(tp, fingerprint, images, bytes);
    }

    /// Checks that `images` (kept, so each one built) decode back to
    /// `program`: an image whose bytes are those of a proven program with
    /// equal inputs is not decoded again. Returns the number of images
    /// checked.
    ///
    /// # Errors
    ///
    /// The first TOP_SP's [`DefectKind::RoundTrip`], naming the rank,
    /// TOP_SP and image.
    pub(crate) fn check_kept(&self, program: &RankProgram, images: &RankImages) -> Result<u64, Box<Defect>> {
        if program.topsps.len() != images.topsps.len() {
            let detail = format!("{} TOP_SP images for {} lowered TOP_SPs", images.topsps.len(), program.topsps.len());
            return Err(defect(program.rank, TopSp(0), "TOP_SP", detail));
        }
        for (tp, img) in program.topsps.iter().zip(&images.topsps) {
            let hash = fingerprint(tp);
            let same_bytes = |proven: &TopSpImages| {
                proven.ctrl_spad == img.ctrl_spad
                    && proven.slot_spad == img.slot_spad
                    && proven.neff_configs == img.neff_configs
            };
            if !self.proven(tp, hash, same_bytes) {
                check_topsp(program.rank, tp, img)?;
                self.keep(tp, hash, img.clone());
            }
        }
        Ok(IMAGES_PER_TOPSP * program.topsps.len() as u64)
    }

    /// Encodes `program`'s TOP_SPs that no proven program's inputs equal,
    /// for the memo's arch, and checks that those images decode back (images not
    /// kept: the others are proven already). Returns the number of images
    /// of the rank's program proven, or its first TOP_SP's round-trip
    /// defect.
    ///
    /// # Errors
    ///
    /// The first TOP_SP's [`ImageError`], as [`encode`](crate::encode::encode).
    pub(crate) fn encode_and_check(&self, program: &RankProgram) -> Result<Result<u64, Box<Defect>>, ImageError> {
        let params = self.arch.params();
        let mut fresh = Vec::new();
        for tp in &program.topsps {
            let hash = fingerprint(tp);
            if !self.proven(tp, hash, |_| true) {
                let images = encode_topsp(tp, params.ctrl_spad_size, params.slot_spad_size)
                    .map_err(|source| ImageError { rank: program.rank, topsp: tp.topsp, source })?;
                fresh.push((tp, hash, images));
            }
        }
        for (tp, hash, images) in fresh {
            if let Err(defect) = check_topsp(program.rank, tp, &images) {
                return Ok(Err(defect));
            }
            self.keep(tp, hash, images);
        }
        Ok(Ok(IMAGES_PER_TOPSP * program.topsps.len() as u64))
    }
}
