//! The round trip: every emitted image decodes back to exactly the records
//! that were lowered.

use super::defect::{Defect, DefectKind};
use crate::encode::RankImages;
use crate::lower::{RankProgram, SegmentProgram};
use ccc_ir::id::CollectiveIdx;
use ccc_ir::wire::ctrl_spad;
use ccc_ir::wire::neff_configs::NeffConfigs;
use ccc_ir::wire::slot_spad::SlotSpad;

/// Checks that `images` decode back to `program`; returns the number of
/// images checked.
///
/// # Errors
///
/// [`DefectKind::RoundTrip`] naming the rank, TOP_SP and image.
pub(crate) fn check(program: &RankProgram, images: &RankImages) -> Result<u64, Box<Defect>> {
    let fail = |topsp, image: &'static str, detail: String| {
        Box::new(Defect {
            collective: CollectiveIdx(0),
            group: 0,
            rank: Some(program.rank),
            topsp: Some(topsp),
            record: None,
            step: None,
            chunk: None,
            kind: DefectKind::RoundTrip { image, detail },
        })
    };
    if program.topsps.len() != images.topsps.len() {
        let detail = format!("{} TOP_SP images for {} lowered TOP_SPs", images.topsps.len(), program.topsps.len());
        return Err(fail(ccc_ir::id::TopSp(0), "TOP_SP", detail));
    }
    let mut checked = 0;
    for (tp, img) in program.topsps.iter().zip(&images.topsps) {
        let t = tp.topsp;
        let segments = ctrl_spad::decode(&img.ctrl_spad).map_err(|e| fail(t, "ctrl_spad", e.to_string()))?;
        let lowered: Vec<ctrl_spad::Segment> = tp.segments.iter().map(SegmentProgram::ctrl_spad).collect();
        if segments != lowered {
            let at =
                segments.iter().zip(&lowered).position(|(a, b)| a != b).unwrap_or(segments.len().min(lowered.len()));
            return Err(fail(t, "ctrl_spad", format!("collective segment {at} differs")));
        }
        let slot = SlotSpad::decode(&img.slot_spad).map_err(|e| fail(t, "slot_spad", e.to_string()))?;
        let tps: Vec<_> = tp.records().map(|r| r.tp.clone()).collect();
        if slot.records != tps {
            let at =
                slot.records.iter().zip(&tps).position(|(a, b)| a != b).unwrap_or(slot.records.len().min(tps.len()));
            return Err(fail(t, "slot_spad", format!("record {at}'s tp_inc_steps differ")));
        }
        let neff = NeffConfigs::decode(&img.neff_configs[..]).map_err(|e| fail(t, "neff_configs", e.to_string()))?;
        if neff != tp.neff {
            return Err(fail(t, "neff_configs", "the decoded block differs from the lowered one".into()));
        }
        checked += 3;
    }
    Ok(checked)
}
