//! Golden images for the CTRL SPAD chain (`docs/wire-format.md` §2), the
//! `tp_inc_steps` entry (§5) and the SLOT SPAD image (§7).
//!
//! Expected bytes are written by hand from the doc, one row per word (or per
//! field), never taken from the encoder's output.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common::{assert_bad_length, assert_bad_value_at, assert_bytes_eq, assert_reserved_at, image};
use ccc_ir::wire::ctrl_spad::{self, Placement, Segment};
use ccc_ir::wire::ctrl_word::CcOp;
use ccc_ir::wire::slot_spad::SlotSpad;
use ccc_ir::wire::tp::{Folder, TpIncStep, unfold};
use ccc_ir::wire::{DecodeError, DecodeErrorKind, EncodeError};

/// The CTRL SPAD size on every arch (§2).
const CTRL_SPAD_BYTES: u32 = 0x1000;
/// The SLOT SPAD size on every arch (§7).
const SLOT_SPAD_BYTES: u32 = 0x8000;

/// Cayman TOP_SP 0 `INC(1)`, the completion address of every END (§6).
const COMPL_A: u64 = 0x0000_0082_8000_1804;
/// Another aligned address (`INC(2)`), so two collectives' ENDs differ.
const COMPL_B: u64 = 0x0000_0082_8000_1808;

/// Record `i` of a test chain: a RING record whose `channel_list` is
/// `0x10 + i`, so every record's word is told apart in the image;
/// `trigger_next` on all but the last.
fn rec(i: u32, last: bool) -> CcOp {
    CcOp { trigger_next: !last, operand: 0x10 + i, ..CcOp::default() }
}

/// `n` records numbered from 0, the last one without `trigger_next`.
fn chain(n: u32) -> Vec<CcOp> {
    (0..n).map(|i| rec(i, i + 1 == n)).collect()
}

// Hand-written words (§1.1, §1.2, §1.3).
#[rustfmt::skip]
mod w {
    /// END for COMPL_A: 0x82_8000_1804 | 0b10.
    pub const END_A: [u8; 8] = [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00];
    /// END for COMPL_B: 0x82_8000_1808 | 0b10.
    pub const END_B: [u8; 8] = [0x0A, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00];
    /// CONTINUE mark 0xFFFE_FFFE_0000_0000.
    pub const CONT:  [u8; 8] = [0x00, 0x00, 0x00, 0x00, 0xFE, 0xFF, 0xFE, 0xFF];
    /// Empty word.
    pub const EMPTY: [u8; 8] = [0x00; 8];
    /// `rec(i, false)`: cc_op, trigger_next (byte 1 bit 7), channel_list 0x10 + i.
    pub const fn op(i: u8) -> [u8; 8] { [0x01, 0x80, 0x00, 0x00, 0x10 + i, 0x00, 0x00, 0x00] }
    /// `rec(i, true)`: cc_op, channel_list 0x10 + i, no trigger_next.
    pub const fn last(i: u8) -> [u8; 8] { [0x01, 0x00, 0x00, 0x00, 0x10 + i, 0x00, 0x00, 0x00] }
}

#[track_caller]
fn assert_chain_error(img: &[u8], offset: u64, phrase: &str, what: &str) {
    match ctrl_spad::decode(img) {
        Err(DecodeError { offset: got, kind: DecodeErrorKind::Chain(msg) })
            if got == offset && msg.contains(phrase) => {}
        other => panic!("{what}: want a chain error containing {phrase:?} at offset {offset:#x}, got {other:?}"),
    }
}

mod ctrl_spad_chain {
    use super::*;

    #[test]
    fn one_short_collective_fills_one_slot() {
        // A two-record ring collective on the leader TOP_SP, flags as §3 sets them.
        let first = CcOp {
            trigger_next: true,
            reporter: true,
            ring_send_complete: true,
            operand: 0b1_0001, // channels 0 and 4
            ..CcOp::default()
        };
        let second = CcOp { reporter: true, ring_wait_complete: true, operand: 0b1_0001, ..CcOp::default() };
        let segments = vec![Segment { records: vec![first, second], compl_addr: COMPL_A }];
        #[rustfmt::skip]
        let expected = image(&[
            [0x01, 0x80, 0x05, 0x00, 0x11, 0x00, 0x00, 0x00], // 0x00: op, trigger_next; reporter | send_complete; ch {0,4}
            [0x01, 0x00, 0x03, 0x00, 0x11, 0x00, 0x00, 0x00], // 0x08: op; reporter | wait_complete; ch {0,4}
            w::END_A,                                          // 0x10: END INC(1)
            w::EMPTY,                                          // 0x18: zero fill to the end of the slot
            w::EMPTY,                                          // 0x20
            w::EMPTY,                                          // 0x28
            w::EMPTY,                                          // 0x30
            w::EMPTY,                                          // 0x38
        ]);
        let img = ctrl_spad::encode(&segments, CTRL_SPAD_BYTES).unwrap();
        let placements = ctrl_spad::placements(&segments).unwrap();
        assert_bytes_eq(&img, &expected, "one short collective");
        assert_eq!(
            placements,
            vec![Placement { segment: 0, record: 0, offset: 0x00 }, Placement { segment: 0, record: 1, offset: 0x08 },]
        );
        assert_eq!(ctrl_spad::decode(&expected), Ok(segments));
    }

    #[test]
    fn the_second_collective_starts_at_the_next_slot() {
        let segments = vec![
            Segment { records: chain(2), compl_addr: COMPL_A },
            Segment { records: vec![rec(5, false), rec(6, true)], compl_addr: COMPL_B },
        ];
        #[rustfmt::skip]
        let expected = image(&[
            // slot 0: collective 0
            w::op(0),   // 0x00
            w::last(1), // 0x08
            w::END_A,   // 0x10
            w::EMPTY,   // 0x18
            w::EMPTY,   // 0x20
            w::EMPTY,   // 0x28
            w::EMPTY,   // 0x30
            w::EMPTY,   // 0x38
            // slot 1: collective 1 starts at offset 64
            w::op(5),   // 0x40
            w::last(6), // 0x48
            w::END_B,   // 0x50
            w::EMPTY,   // 0x58
            w::EMPTY,   // 0x60
            w::EMPTY,   // 0x68
            w::EMPTY,   // 0x70
            w::EMPTY,   // 0x78
        ]);
        let img = ctrl_spad::encode(&segments, CTRL_SPAD_BYTES).unwrap();
        let placements = ctrl_spad::placements(&segments).unwrap();
        assert_bytes_eq(&img, &expected, "two collectives");
        let offsets: Vec<(usize, usize, u64)> = placements.iter().map(|p| (p.segment, p.record, p.offset)).collect();
        assert_eq!(offsets, vec![(0, 0, 0x00), (0, 1, 0x08), (1, 0, 0x40), (1, 1, 0x48)]);
        assert_eq!(ctrl_spad::decode(&expected), Ok(segments));
    }

    #[test]
    fn seven_records_put_the_end_mark_in_the_last_word() {
        let segments = vec![Segment { records: chain(7), compl_addr: COMPL_A }];
        #[rustfmt::skip]
        let expected = image(&[
            w::op(0),   // 0x00
            w::op(1),   // 0x08
            w::op(2),   // 0x10
            w::op(3),   // 0x18
            w::op(4),   // 0x20
            w::op(5),   // 0x28
            w::last(6), // 0x30
            w::END_A,   // 0x38: word 7, allowed for END (nothing follows it)
        ]);
        let img = ctrl_spad::encode(&segments, CTRL_SPAD_BYTES).unwrap();
        assert_bytes_eq(&img, &expected, "seven records");
        assert_eq!(ctrl_spad::decode(&expected), Ok(segments));
    }

    #[test]
    fn eight_records_continue_into_the_next_slot() {
        let segments = vec![Segment { records: chain(8), compl_addr: COMPL_A }];
        #[rustfmt::skip]
        let expected = image(&[
            w::op(0),   // 0x00
            w::op(1),   // 0x08
            w::op(2),   // 0x10
            w::op(3),   // 0x18
            w::op(4),   // 0x20
            w::op(5),   // 0x28
            w::op(6),   // 0x30
            w::CONT,    // 0x38: word 7, records remain
            w::last(7), // 0x40: record 7, 8 bytes after the CONTINUE mark
            w::END_A,   // 0x48
            w::EMPTY,   // 0x50
            w::EMPTY,   // 0x58
            w::EMPTY,   // 0x60
            w::EMPTY,   // 0x68
            w::EMPTY,   // 0x70
            w::EMPTY,   // 0x78
        ]);
        let img = ctrl_spad::encode(&segments, CTRL_SPAD_BYTES).unwrap();
        let placements = ctrl_spad::placements(&segments).unwrap();
        assert_bytes_eq(&img, &expected, "eight records");
        let offsets: Vec<u64> = placements.iter().map(|p| p.offset).collect();
        assert_eq!(offsets, vec![0x00, 0x08, 0x10, 0x18, 0x20, 0x28, 0x30, 0x40]);
        assert_eq!(ctrl_spad::decode(&expected), Ok(segments));
    }

    #[test]
    fn fifteen_records_take_three_slots_then_the_next_collective() {
        let segments = vec![
            Segment { records: chain(15), compl_addr: COMPL_A },
            Segment { records: vec![rec(0, true)], compl_addr: COMPL_B },
        ];
        #[rustfmt::skip]
        let expected = image(&[
            w::op(0),  w::op(1),  w::op(2),  w::op(3),  w::op(4),  w::op(5),  w::op(6),  w::CONT,  // slot 0 @0x00
            w::op(7),  w::op(8),  w::op(9),  w::op(10), w::op(11), w::op(12), w::op(13), w::CONT,  // slot 1 @0x40
            w::last(14), w::END_A, w::EMPTY, w::EMPTY,  w::EMPTY,  w::EMPTY,  w::EMPTY,  w::EMPTY, // slot 2 @0x80
            w::last(0),  w::END_B, w::EMPTY, w::EMPTY,  w::EMPTY,  w::EMPTY,  w::EMPTY,  w::EMPTY, // slot 3 @0xC0
        ]);
        let img = ctrl_spad::encode(&segments, CTRL_SPAD_BYTES).unwrap();
        let placements = ctrl_spad::placements(&segments).unwrap();
        assert_bytes_eq(&img, &expected, "fifteen records");
        #[rustfmt::skip]
        let want: Vec<u64> = vec![
            0x00, 0x08, 0x10, 0x18, 0x20, 0x28, 0x30, // records 0..=6, slot 0
            0x40, 0x48, 0x50, 0x58, 0x60, 0x68, 0x70, // records 7..=13, slot 1
            0x80,                                     // record 14, slot 2
            0xC0,                                     // collective 1, record 0, slot 3
        ];
        assert_eq!(placements.iter().map(|p| p.offset).collect::<Vec<_>>(), want);
        assert_eq!(placements.last(), Some(&Placement { segment: 1, record: 0, offset: 0xC0 }));
        assert_eq!(ctrl_spad::decode(&expected), Ok(segments));
    }

    #[test]
    fn an_image_beyond_its_capacity_is_refused() {
        // Eight records need two slots, 128 bytes.
        let eight = vec![Segment { records: chain(8), compl_addr: COMPL_A }];
        assert_eq!(
            ctrl_spad::encode(&eight, 64),
            Err(EncodeError::RegionFull { region: "ctrl_spad", needed: 128, capacity: 64 })
        );
        assert!(ctrl_spad::encode(&eight, 128).is_ok());
        // 64 one-record collectives fill the 4 KiB CTRL SPAD exactly; 65 do not.
        let one = Segment { records: chain(1), compl_addr: COMPL_A };
        let img = ctrl_spad::encode(&vec![one.clone(); 64], CTRL_SPAD_BYTES).unwrap();
        assert_eq!(img.len(), 0x1000);
        assert_eq!(
            ctrl_spad::encode(&vec![one; 65], CTRL_SPAD_BYTES),
            Err(EncodeError::RegionFull { region: "ctrl_spad", needed: 65 * 64, capacity: 0x1000 })
        );
    }

    #[test]
    fn a_collective_without_records_is_refused() {
        // §2: a collective with no work on a TOP_SP contributes nothing to
        // its image; an END with no op entry before it is not decodable.
        let segments = vec![Segment { records: vec![], compl_addr: COMPL_A }];
        assert!(matches!(ctrl_spad::encode(&segments, CTRL_SPAD_BYTES), Err(EncodeError::BadValue { .. })));
        assert!(matches!(ctrl_spad::placements(&segments), Err(EncodeError::BadValue { .. })));
    }

    #[test]
    fn word_encode_errors_surface() {
        let bad = CcOp { algo_type: 16, ..CcOp::default() };
        let segments = vec![Segment { records: vec![bad], compl_addr: COMPL_A }];
        assert!(matches!(
            ctrl_spad::encode(&segments, CTRL_SPAD_BYTES),
            Err(EncodeError::FieldOverflow { field: "algo_type", .. })
        ));
        let segments = vec![Segment { records: chain(1), compl_addr: COMPL_A + 1 }];
        assert!(matches!(ctrl_spad::encode(&segments, CTRL_SPAD_BYTES), Err(EncodeError::BadValue { .. })));
    }

    #[test]
    fn no_collectives_make_an_empty_image() {
        let img = ctrl_spad::encode(&[], CTRL_SPAD_BYTES).unwrap();
        let placements = ctrl_spad::placements(&[]).unwrap();
        assert!(img.is_empty() && placements.is_empty());
        assert_eq!(ctrl_spad::decode(&[]), Ok(vec![]));
    }

    // --- decoder refusals -------------------------------------------------

    #[test]
    fn continue_before_the_last_word_is_refused() {
        #[rustfmt::skip]
        let img = image(&[
            w::op(0), w::CONT /* 0x08: word 1 */, w::last(1), w::END_A,
            w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
        ]);
        assert_chain_error(&img, 0x08, "CONTINUE", "CONTINUE at word 1");
    }

    #[test]
    fn an_op_entry_in_the_last_word_is_refused() {
        #[rustfmt::skip]
        let img = image(&[
            w::op(0), w::op(1), w::op(2), w::op(3), w::op(4), w::op(5), w::op(6),
            w::op(7), // 0x38: word 7
            w::last(8), w::END_A, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
        ]);
        assert_chain_error(&img, 0x38, "last word", "op entry at word 7");
    }

    #[test]
    fn a_chain_starting_mid_slot_is_refused() {
        #[rustfmt::skip]
        let img = image(&[
            w::EMPTY, w::last(0) /* 0x08 */, w::END_A, w::EMPTY,
            w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
        ]);
        assert_chain_error(&img, 0x08, "first word", "chain at word 1");
    }

    #[test]
    fn an_op_entry_after_end_in_the_same_slot_is_refused() {
        #[rustfmt::skip]
        let img = image(&[
            w::last(0), w::END_A, w::last(1) /* 0x10 */, w::END_B,
            w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
        ]);
        assert_chain_error(&img, 0x10, "after an END", "op after END");
    }

    #[test]
    fn an_empty_word_inside_a_chain_is_refused() {
        #[rustfmt::skip]
        let img = image(&[
            w::op(0), w::EMPTY /* 0x08 */, w::last(1), w::END_A,
            w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
        ]);
        assert_chain_error(&img, 0x08, "empty word", "empty inside a chain");
        // Also right after a CONTINUE mark, at the next slot's first word.
        #[rustfmt::skip]
        let img = image(&[
            w::op(0), w::op(1), w::op(2), w::op(3), w::op(4), w::op(5), w::op(6), w::CONT,
            w::EMPTY /* 0x40 */, w::last(7), w::END_A, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
        ]);
        assert_chain_error(&img, 0x40, "empty word", "empty after CONTINUE");
    }

    #[test]
    fn end_right_after_continue_is_refused() {
        // §1.2, §2: CONTINUE is written only while records remain, and the
        // continued *entry* sits 8 bytes after it; the END would have taken
        // word 7 instead.
        #[rustfmt::skip]
        let img = image(&[
            w::op(0), w::op(1), w::op(2), w::op(3), w::op(4), w::op(5), w::last(6), w::CONT,
            w::END_A /* 0x40 */, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
        ]);
        assert_chain_error(&img, 0x40, "CONTINUE", "END after CONTINUE");
    }

    #[test]
    fn a_chain_without_end_is_refused() {
        #[rustfmt::skip]
        let img = image(&[
            w::op(0), w::op(1), w::op(2), w::op(3), w::op(4), w::op(5), w::op(6), w::CONT,
        ]);
        // The chain runs off the end of the image: the offset is the image's end.
        assert_chain_error(&img, 0x40, "without an END", "missing END");
    }

    #[test]
    fn marks_outside_a_chain_are_refused() {
        #[rustfmt::skip]
        let img = image(&[
            w::END_A /* 0x00: END with no op before it */, w::EMPTY, w::EMPTY, w::EMPTY,
            w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
        ]);
        assert_chain_error(&img, 0x00, "END", "END at word 0");
        #[rustfmt::skip]
        let img = image(&[
            w::last(0), w::END_A, w::END_B /* 0x10 */, w::EMPTY,
            w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
        ]);
        assert_chain_error(&img, 0x10, "END", "second END");
        #[rustfmt::skip]
        let img = image(&[
            w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
            w::EMPTY, w::EMPTY, w::EMPTY, w::CONT /* 0x38 */,
        ]);
        assert_chain_error(&img, 0x38, "CONTINUE", "CONTINUE outside a chain");
    }

    #[test]
    fn lengths_that_are_not_whole_slots_are_refused() {
        for len in [1usize, 8, 56, 63, 65, 72, 120] {
            let img = vec![0u8; len];
            assert_bad_length(ctrl_spad::decode(&img), len, &format!("{len}-byte image"));
        }
    }

    #[test]
    fn word_errors_inside_a_chain_keep_their_absolute_offset() {
        let mut bad = w::last(7);
        bad[3] = 0x01; // byte 3 is padding
        #[rustfmt::skip]
        let img = image(&[
            w::op(0), w::op(1), w::op(2), w::op(3), w::op(4), w::op(5), w::op(6), w::CONT,
            bad /* 0x40; its byte 3 is 0x43 */, w::END_A, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY, w::EMPTY,
        ]);
        assert_reserved_at(ctrl_spad::decode(&img), 0x43, "padding in record 7");
    }
}

mod tp_inc_steps {
    use super::*;

    #[test]
    fn entry_golden_words() {
        // §5: m2s bits 23:0 = bytes 0..2, s2m bits 47:24 = bytes 3..5,
        // repeat bits 63:48 = bytes 6..7.
        #[rustfmt::skip]
        let rows: &[(&str, TpIncStep, [u8; 8])] = &[
            // what                       (m2s, s2m, repeat)                                         m2s             s2m             repeat
            ("m2s at VAL_MASK",       TpIncStep { m2s: 0xFF_FFFF, s2m: 0, repeat: 1 },          [0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01, 0x00]),
            ("s2m at VAL_MASK",       TpIncStep { m2s: 0, s2m: 0xFF_FFFF, repeat: 1 },          [0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x01, 0x00]),
            ("repeat at 65535",       TpIncStep { m2s: 0, s2m: 0, repeat: 0xFFFF },             [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF]),
            ("distinct bytes",        TpIncStep { m2s: 0x12_3456, s2m: 0xAB_CDEF, repeat: 0x0102 }, [0x56, 0x34, 0x12, 0xEF, 0xCD, 0xAB, 0x02, 0x01]),
            ("one send, one receive", TpIncStep { m2s: 2, s2m: 3, repeat: 4 },                  [0x02, 0x00, 0x00, 0x03, 0x00, 0x00, 0x04, 0x00]),
        ];
        for &(what, step, bytes) in rows {
            assert_eq!(step.encode(), Ok(bytes), "{what}: encode");
            assert_eq!(TpIncStep::decode(bytes, 0), Ok(step), "{what}: decode");
        }
    }

    #[test]
    fn values_beyond_val_mask_and_repeat_zero_are_refused() {
        assert_eq!(
            TpIncStep { m2s: 0x100_0000, s2m: 0, repeat: 1 }.encode(),
            Err(EncodeError::FieldOverflow { field: "tp_inc_steps m2s", value: 0x100_0000, max: 0xFF_FFFF })
        );
        assert_eq!(
            TpIncStep { m2s: 0, s2m: u32::MAX, repeat: 1 }.encode(),
            Err(EncodeError::FieldOverflow { field: "tp_inc_steps s2m", value: 0xFFFF_FFFF, max: 0xFF_FFFF })
        );
        assert!(matches!(
            TpIncStep { m2s: 1, s2m: 1, repeat: 0 }.encode(),
            Err(EncodeError::BadValue { field: "tp_inc_steps repeat", .. })
        ));
        // Decoding repeat = 0 names the repeat field's first byte.
        assert_bad_value_at(
            TpIncStep::decode([0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00], 0x20),
            0x26,
            "tp_inc_steps repeat",
            "repeat 0",
        );
    }

    #[test]
    fn total_descriptors_is_m2s_plus_s2m_times_repeat() {
        assert_eq!(TpIncStep { m2s: 2, s2m: 3, repeat: 4 }.total_descriptors(), 20);
        // The largest entry does not overflow.
        let max = TpIncStep { m2s: 0xFF_FFFF, s2m: 0xFF_FFFF, repeat: 0xFFFF };
        assert_eq!(max.total_descriptors(), 2 * 0xFF_FFFF * 0xFFFF);
    }

    fn step(m2s: u32, s2m: u32, repeat: u16) -> TpIncStep {
        TpIncStep { m2s, s2m, repeat }
    }

    #[test]
    fn consecutive_identical_pairs_fold() {
        let mut f = Folder::new();
        for _ in 0..3 {
            f.push(1, 2);
        }
        assert_eq!(f.finish(), vec![step(1, 2, 3)]);
    }

    #[test]
    fn different_pairs_do_not_fold() {
        let mut f = Folder::new();
        for (m2s, s2m) in [(1, 2), (1, 2), (2, 1), (1, 3), (1, 2), (0, 0), (0, 0)] {
            f.push(m2s, s2m);
        }
        assert_eq!(f.finish(), vec![step(1, 2, 2), step(2, 1, 1), step(1, 3, 1), step(1, 2, 1), step(0, 0, 2)]);
    }

    #[test]
    fn runs_longer_than_65535_split() {
        let mut f = Folder::new();
        f.push_n(5, 6, 2 * 65_535 + 7);
        assert_eq!(f.finish(), vec![step(5, 6, 65_535), step(5, 6, 65_535), step(5, 6, 7)]);

        // A run that fills an entry exactly, then one more step.
        let mut f = Folder::new();
        f.push_n(1, 1, 65_534);
        f.push(1, 1);
        f.push(1, 1);
        assert_eq!(f.finish(), vec![step(1, 1, 65_535), step(1, 1, 1)]);

        // push_n tops up an open entry before starting a new one.
        let mut f = Folder::new();
        f.push_n(3, 0, 65_000);
        f.push_n(3, 0, 1_000);
        assert_eq!(f.finish(), vec![step(3, 0, 65_535), step(3, 0, 465)]);
    }

    #[test]
    fn zero_steps_add_nothing() {
        let mut f = Folder::new();
        f.push_n(1, 1, 0);
        assert_eq!(f.clone().finish(), vec![]);
        f.push(1, 1);
        f.push_n(2, 2, 0);
        f.push(1, 1);
        assert_eq!(f.finish(), vec![step(1, 1, 2)]);
    }

    #[test]
    fn unfold_expands_every_entry() {
        let entries = vec![step(1, 2, 2), step(0, 0, 1), step(3, 4, 3)];
        let pairs: Vec<(u32, u32)> = unfold(&entries).collect();
        assert_eq!(pairs, vec![(1, 2), (1, 2), (0, 0), (3, 4), (3, 4), (3, 4)]);
        // And folding the expansion gives the entries back.
        let mut f = Folder::new();
        for (m2s, s2m) in pairs {
            f.push(m2s, s2m);
        }
        assert_eq!(f.finish(), entries);
        assert_eq!(unfold(&[]).count(), 0);
    }
}

mod slot_spad {
    use super::*;

    fn step(m2s: u32, s2m: u32, repeat: u16) -> TpIncStep {
        TpIncStep { m2s, s2m, repeat }
    }

    /// Three records (the middle one without entries), three entries.
    fn three_records() -> SlotSpad {
        SlotSpad { records: vec![vec![step(3, 5, 1)], vec![], vec![step(1, 0, 2), step(0, 1, 0xFFFF)]] }
    }

    /// `three_records()` by hand from §7.
    #[rustfmt::skip]
    fn three_records_image() -> Vec<u8> {
        [
            &[0x03, 0x00, 0x00, 0x00][..],                       // 0x00 record_n = 3
            &[0x03, 0x00, 0x00, 0x00],                           // 0x04 entry_n = 3
            &[0x00, 0x00, 0x01, 0x00],                           // 0x08 record 0: first 0, count 1
            &[0x01, 0x00, 0x00, 0x00],                           // 0x0C record 1: first 1, count 0
            &[0x01, 0x00, 0x02, 0x00],                           // 0x10 record 2: first 1, count 2
            &[0x00, 0x00, 0x00, 0x00],                           // 0x14 padding: 8 + 4*3 = 20 rounded up to 24
            &[0x03, 0x00, 0x00, 0x05, 0x00, 0x00, 0x01, 0x00],   // 0x18 entry 0: m2s 3, s2m 5, repeat 1
            &[0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00],   // 0x20 entry 1: m2s 1, s2m 0, repeat 2
            &[0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0xFF, 0xFF],   // 0x28 entry 2: m2s 0, s2m 1, repeat 65535
        ]
        .concat()
    }

    #[test]
    fn header_index_padding_and_entries() {
        let img = three_records().encode(SLOT_SPAD_BYTES).unwrap();
        assert_bytes_eq(&img, &three_records_image(), "three records");
        assert_eq!(SlotSpad::decode(&three_records_image()), Ok(three_records()));
    }

    #[test]
    fn an_even_record_count_needs_no_padding() {
        let spad = SlotSpad { records: vec![vec![step(7, 0, 1)], vec![step(0, 9, 3)]] };
        #[rustfmt::skip]
        let expected = [
            &[0x02, 0x00, 0x00, 0x00][..],                       // 0x00 record_n = 2
            &[0x02, 0x00, 0x00, 0x00],                           // 0x04 entry_n = 2
            &[0x00, 0x00, 0x01, 0x00],                           // 0x08 record 0: first 0, count 1
            &[0x01, 0x00, 0x01, 0x00],                           // 0x0C record 1: first 1, count 1
            &[0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00],   // 0x10 entry 0
            &[0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x03, 0x00],   // 0x18 entry 1
        ]
        .concat();
        assert_bytes_eq(&spad.encode(SLOT_SPAD_BYTES).unwrap(), &expected, "two records");
        assert_eq!(SlotSpad::decode(&expected), Ok(spad));
    }

    #[test]
    fn no_records_is_just_the_header() {
        assert_eq!(SlotSpad::default().encode(SLOT_SPAD_BYTES), Ok(vec![0u8; 8]));
        assert_eq!(SlotSpad::decode(&[0u8; 8]), Ok(SlotSpad::default()));
    }

    #[test]
    fn an_image_beyond_its_capacity_is_refused() {
        // 8 header + 4 index (+4 padding) + 8 per entry: 3 entries need 40 bytes.
        let spad = SlotSpad { records: vec![vec![step(1, 1, 1); 3]] };
        assert_eq!(spad.encode(40).map(|v| v.len()), Ok(40));
        assert_eq!(spad.encode(39), Err(EncodeError::RegionFull { region: "slot_spad", needed: 40, capacity: 39 }));
    }

    #[test]
    fn entry_errors_surface() {
        let spad = SlotSpad { records: vec![vec![step(0x100_0000, 0, 1)]] };
        assert!(matches!(spad.encode(SLOT_SPAD_BYTES), Err(EncodeError::FieldOverflow { .. })));
        let spad = SlotSpad { records: vec![vec![step(1, 0, 0)]] };
        assert!(matches!(spad.encode(SLOT_SPAD_BYTES), Err(EncodeError::BadValue { .. })));
    }

    #[test]
    fn an_index_that_does_not_tile_the_entries_is_refused() {
        // Record 1 claims to start at entry 0 instead of 1.
        let mut img = three_records_image();
        img[0x0C] = 0x00;
        assert_bad_value_at(SlotSpad::decode(&img), 0x0C, "slot_spad first_entry", "record 1 first = 0");
        // Each message gives the value the rest of the image calls for:
        // record 0 holds entry 0 alone, so record 1 starts at 1.
        let said = SlotSpad::decode(&img).unwrap_err().to_string();
        assert_eq!(said, "slot_spad first_entry is 0, expected 1 (the end of record 0's entries) (at offset 0xc)");
        // Record 0 starts anywhere but 0.
        let mut img = three_records_image();
        img[0x08] = 0x01;
        let said = SlotSpad::decode(&img).unwrap_err().to_string();
        assert_eq!(said, "slot_spad first_entry is 1, expected 0 (record 0's entries come first) (at offset 0x8)");
        // Record 2 claims three entries from entry 1, one more than
        // entry_n = 3 leaves: its count is wrong, at its count's offset.
        let mut img = three_records_image();
        img[0x12] = 0x03;
        assert_bad_value_at(SlotSpad::decode(&img), 0x12, "slot_spad record entry_n", "record 2 count = 3");
        let said = SlotSpad::decode(&img).unwrap_err().to_string();
        assert_eq!(
            said,
            "slot_spad record entry_n is 3, expected at most 2 (the image's entry_n, 3, less first_entry 1) \
             (at offset 0x12)"
        );
        // The index covers two of the three entries.
        let mut img = three_records_image();
        img[0x12] = 0x01;
        assert_bad_value_at(SlotSpad::decode(&img), 0x04, "slot_spad entry_n", "entry 2 not indexed");
        let said = SlotSpad::decode(&img).unwrap_err().to_string();
        assert_eq!(said, "slot_spad entry_n is 3, expected 2, the sum of the records' entry counts (at offset 0x4)");
    }

    /// Records whose entries run past what a 16-bit `first_entry` can
    /// name: the message says the value it calls for cannot be written
    /// there, rather than asking for it.
    #[test]
    fn a_first_entry_past_sixteen_bits_is_said_to_be_unwritable() {
        // Records 0 and 1 hold 65535 entries each; record 2 would start at
        // entry 131070, and its index row (u16) says 65534 (131070 wrapped).
        let entries = 2 * 0xFFFF;
        let mut img = [
            &[0x03, 0x00, 0x00, 0x00][..], // record_n = 3
            &(entries as u32).to_le_bytes(),
            &[0x00, 0x00, 0xFF, 0xFF], // record 0: first 0, count 65535
            &[0xFF, 0xFF, 0xFF, 0xFF], // record 1: first 65535, count 65535
            &[0xFE, 0xFF, 0x00, 0x00], // record 2: first 65534, count 0
            &[0x00, 0x00, 0x00, 0x00], // padding to 24
        ]
        .concat();
        for _ in 0..entries {
            img.extend_from_slice(&[0x03, 0x00, 0x00, 0x05, 0x00, 0x00, 0x01, 0x00]); // m2s 3, s2m 5, repeat 1
        }
        let said = SlotSpad::decode(&img).unwrap_err().to_string();
        assert_eq!(
            said,
            "slot_spad first_entry is 65534, expected 131070 (the end of record 1's entries), which the index's 16 \
             bits cannot hold: records 2..3 start past the last entry an index row can name (at offset 0x10)"
        );
    }

    #[test]
    fn lengths_that_disagree_with_the_header_are_refused() {
        let good = three_records_image();
        // One entry more, one byte more, one entry less.
        let mut longer = good.clone();
        longer.extend_from_slice(&[0; 8]);
        assert_bad_length(SlotSpad::decode(&longer), 56, "an extra entry");
        let mut odd = good.clone();
        odd.push(0);
        assert_bad_length(SlotSpad::decode(&odd), 49, "an extra byte");
        assert_bad_length(SlotSpad::decode(&good[..40]), 40, "an entry short");
        // The message names the length the header calls for (24 bytes of
        // header, index and padding, and 3 entries of 8), at the end of
        // the shorter of the two.
        let said = SlotSpad::decode(&good[..40]).unwrap_err().to_string();
        assert_eq!(
            said,
            "image is 40 bytes, not the 48 bytes its header calls for (the header, the index of 3 records and 3 \
             entries) (at offset 0x28)"
        );
        let said = SlotSpad::decode(&longer).unwrap_err().to_string();
        assert!(said.ends_with("(at offset 0x30)"), "{said}");
        // entry_n says 4.
        let mut img = good.clone();
        img[0x04] = 0x04;
        assert_bad_length(SlotSpad::decode(&img), 48, "entry_n 4");
        // record_n so large the index cannot fit in memory.
        let mut img = good;
        img[0..4].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF]);
        assert!(SlotSpad::decode(&img).is_err());
        // Shorter than the header.
        for len in 0..8 {
            assert!(
                matches!(
                    SlotSpad::decode(&vec![0u8; len]),
                    Err(DecodeError { kind: DecodeErrorKind::Truncated { .. }, .. })
                ),
                "{len}-byte image"
            );
        }
    }

    #[test]
    fn non_zero_index_padding_is_refused() {
        for offset in 0x14..0x18 {
            let mut img = three_records_image();
            img[offset] = 0x80;
            assert_reserved_at(SlotSpad::decode(&img), offset as u64, &format!("padding byte {offset:#x}"));
        }
    }

    #[test]
    fn an_entry_with_repeat_zero_is_refused_at_its_offset() {
        let mut img = three_records_image();
        img[0x26] = 0x00; // entry 1's repeat, bytes 0x26..0x28
        assert_bad_value_at(SlotSpad::decode(&img), 0x26, "tp_inc_steps repeat", "entry 1 repeat 0");
    }
}

/// The slots a collective takes, counted by the rule of §2 (7 op entries
/// and a mark per slot, the END may take the last word): 1 to 7 records
/// fit one slot, 8 to 14 two, 15 three; and what `ctrl_spad::slots` says
/// is what `encode` lays out, for one collective and for several after
/// one another.
#[test]
fn slots_are_what_encode_lays_out() {
    for (records, want) in [(0, 0), (1, 1), (7, 1), (8, 2), (14, 2), (15, 3), (21, 3), (22, 4), (24, 4)] {
        assert_eq!(ctrl_spad::slots(records), want, "{records} records");
    }
    for n in 1..=30u32 {
        let one = ctrl_spad::encode(&[Segment { records: chain(n), compl_addr: COMPL_A }], CTRL_SPAD_BYTES).unwrap();
        assert_eq!(one.len(), ctrl_spad::slots(n as usize) * ctrl_spad::SLOT_BYTES, "{n} records");
        let two =
            [Segment { records: chain(n), compl_addr: COMPL_A }, Segment { records: chain(3), compl_addr: COMPL_B }];
        let both = ctrl_spad::encode(&two, CTRL_SPAD_BYTES).unwrap();
        assert_eq!(both.len(), (ctrl_spad::slots(n as usize) + 1) * ctrl_spad::SLOT_BYTES, "{n} and 3 records");
    }
}
