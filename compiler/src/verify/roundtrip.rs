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
//! - **Parts of images** ([`Memo::check_images`]): `ctrl_spad` is
//!   compared with the program's segments (END addresses, op entries) and
//!   `neff_configs` with its EXEC block, nothing else; a rooted op's
//!   TOP_SPs of one index differ in their runs (`slot_spad`) but mostly
//!   share those (a 512-rank Ring broadcast: 4 distinct `ctrl_spad` and 8
//!   distinct `neff_configs` images on 2,048 TOP_SPs, each of which has a
//!   program of its own). When both images' bytes equal a pair that decoded
//!   back to a program alike in those parts ([`same_parts`]), they decode,
//!   decoding being a function of the bytes, to that program's segments and
//!   block, so to this one's: only `slot_spad` is decoded. This holds
//!   whatever the encoder did, as for kept images. Only passing pairs are
//!   kept, and a pair that matches one passes both its comparisons, so the
//!   first defect [`check_topsp`] would name is `slot_spad`'s, which is
//!   still checked.
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
use crate::lower::distinct::{Distinct, fingerprint, fingerprint_without_runs};
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

/// The most bytes of programs and their `ctrl_spad` and `neff_configs`
/// images a [`Memo`] holds by their parts (past it, a new pair is decoded
/// but not kept). A rooted op's world has a few pairs per TOP_SP index: a
/// 512-rank Ring broadcast's 2,048 TOP_SPs hold 4 distinct `ctrl_spad` and
/// 8 distinct `neff_configs` images.
const PARTS_BYTES: usize = 4 << 20;

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
    check_ctrl_spad(rank, tp, img)?;
    check_slot_spad(rank, tp, img)?;
    check_neff_configs(rank, tp, img)
}

/// Decodes `img`'s `ctrl_spad` and compares it with `tp`'s segments: their
/// END addresses and op entries.
fn check_ctrl_spad(rank: Rank, tp: &TopSpProgram, img: &TopSpImages) -> Result<(), Box<Defect>> {
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
    Ok(())
}

/// Decodes `img`'s `slot_spad` and compares it with `tp`'s records'
/// `tp_inc_steps`.
fn check_slot_spad(rank: Rank, tp: &TopSpProgram, img: &TopSpImages) -> Result<(), Box<Defect>> {
    let fail = |image, detail| defect(rank, tp.topsp, image, detail);
    let slot = SlotSpad::decode(&img.slot_spad).map_err(|e| fail("slot_spad", e.to_string()))?;
    let record_n = tp.records().count();
    let differs = slot.records.iter().zip(tp.records()).position(|(decoded, r)| decoded[..] != r.tp[..]);
    if differs.is_some() || slot.records.len() != record_n {
        let at = differs.unwrap_or(slot.records.len().min(record_n));
        return Err(fail("slot_spad", format!("record {at}'s tp_inc_steps differ")));
    }
    Ok(())
}

/// Decodes `img`'s `neff_configs` and compares it with `tp`'s EXEC block.
fn check_neff_configs(rank: Rank, tp: &TopSpProgram, img: &TopSpImages) -> Result<(), Box<Defect>> {
    let fail = |image, detail| defect(rank, tp.topsp, image, detail);
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
    /// The `ctrl_spad` and `neff_configs` images that decoded back to
    /// programs' segments and EXEC blocks, by [`same_parts`].
    parts: Distinct<Parts>,
}

/// A TOP_SP's `ctrl_spad` and `neff_configs` images, that decoded back.
struct Parts {
    ctrl_spad: Vec<u8>,
    neff_configs: Vec<u8>,
}

/// Whether `a` and `b` are alike in all that [`check_ctrl_spad`] and
/// [`check_neff_configs`] compare a decoded image with: each segment's END
/// address and op entries, and the EXEC block (not the runs).
fn same_parts(a: &TopSpProgram, b: &TopSpProgram) -> bool {
    let same_segment = |(x, y): (&SegmentProgram, &SegmentProgram)| {
        x.compl_addr == y.compl_addr
            && x.records.len() == y.records.len()
            && x.records.iter().zip(&y.records).all(|(p, q)| p.op == q.op)
    };
    a.segments.len() == b.segments.len() && a.segments.iter().zip(&b.segments).all(same_segment) && a.neff == b.neff
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
        Memo { arch, proven: Distinct::new(same_inputs, MEMO_BYTES), parts: Distinct::new(same_parts, PARTS_BYTES) }
    }

    /// [`check_topsp`], the same verdict and defect, but `ctrl_spad` and
    /// `neff_configs` images equal byte for byte to a pair that decoded
    /// back to a program with [`same_parts`] are not decoded again (see
    /// the module overview). Returns whether they were.
    fn check_images(&self, rank: Rank, tp: &TopSpProgram, img: &TopSpImages) -> Result<bool, Box<Defect>> {
        let hash = fingerprint_without_runs(tp);
        let same_bytes =
            |kept: &Parts| kept.ctrl_spad == img.ctrl_spad && kept.neff_configs[..] == img.neff_configs[..];
        if self.parts.find(tp, hash, same_bytes).unwrap_or(false) {
            check_slot_spad(rank, tp, img)?;
            return Ok(false);
        }
        check_topsp(rank, tp, img)?;
        let parts = Parts { ctrl_spad: img.ctrl_spad.clone(), neff_configs: img.neff_configs.to_vec() };
        let bytes = parts.ctrl_spad.len() + parts.neff_configs.len();
        self.parts.keep(tp, hash, parts, bytes);
        Ok(true)
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
                self.check_images(program.rank, tp, img)?;
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
            if let Err(defect) = self.check_images(program.rank, tp, &images) {
                return Ok(Err(defect));
            }
            self.keep(tp, hash, images);
        }
        Ok(Ok(IMAGES_PER_TOPSP * program.topsps.len() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::encode::encode;
    use crate::lower::lower;
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};

    /// Two ranks of a rooted ring whose TOP_SP 0 programs differ only in
    /// their runs, with their images.
    fn two_ranks() -> (Arch, Vec<(RankProgram, RankImages)>) {
        let schedule = build(&Case::flat(OpType::Broadcast, AlgType::Ring, 8, 4).valid()).unwrap();
        let ranks = [Rank(5), Rank(6)].map(|r| {
            let program = lower(&schedule, r).unwrap();
            let images = encode(&program, schedule.arch).unwrap();
            (program, images)
        });
        let [a, b] = &ranks;
        let (ta, tb) = (&a.0.topsps[0], &b.0.topsps[0]);
        assert!(same_parts(ta, tb) && !same_inputs(ta, tb), "the ranks' TOP_SP 0 differ only in their runs");
        assert_eq!(a.1.topsps[0].neff_configs, b.1.topsps[0].neff_configs);
        (schedule.arch, ranks.into())
    }

    #[test]
    fn images_alike_but_for_their_runs_decode_their_parts_once() {
        let (arch, ranks) = two_ranks();
        let memo = Memo::new(arch);
        let check = |(p, i): &(RankProgram, RankImages)| memo.check_images(p.rank, &p.topsps[0], &i.topsps[0]);
        assert_eq!(check(&ranks[0]), Ok(true));
        assert_eq!(check(&ranks[1]), Ok(false), "rank 6's ctrl_spad and neff_configs are rank 5's bytes");
        assert_eq!(check(&ranks[1]), Ok(false));
    }

    #[test]
    fn a_pair_kept_names_the_same_defects() {
        let (arch, mut ranks) = two_ranks();
        let (slot_defect, neff_defect) = {
            let (p, i) = &mut ranks[1];
            let fresh = || Memo::new(arch);
            i.topsps[0].slot_spad[0] ^= 1;
            let slot = fresh().check_images(p.rank, &p.topsps[0], &i.topsps[0]).unwrap_err();
            i.topsps[0].slot_spad[0] ^= 1;
            i.topsps[0].neff_configs[OP_NUM_AT] ^= 1;
            let neff = fresh().check_images(p.rank, &p.topsps[0], &i.topsps[0]).unwrap_err();
            i.topsps[0].neff_configs[OP_NUM_AT] ^= 1;
            (slot, neff)
        };
        let memo = Memo::new(arch);
        let (p, i) = &ranks[0];
        assert_eq!(memo.check_images(p.rank, &p.topsps[0], &i.topsps[0]), Ok(true));
        let (p, i) = &mut ranks[1];
        i.topsps[0].slot_spad[0] ^= 1;
        assert_eq!(memo.check_images(p.rank, &p.topsps[0], &i.topsps[0]), Err(slot_defect));
        i.topsps[0].slot_spad[0] ^= 1;
        i.topsps[0].neff_configs[OP_NUM_AT] ^= 1;
        assert_eq!(memo.check_images(p.rank, &p.topsps[0], &i.topsps[0]), Err(neff_defect));
    }

    /// A byte of `op_num` in `neff_configs`.
    const OP_NUM_AT: usize = ccc_ir::wire::neff_configs::OP_NUM;
}
