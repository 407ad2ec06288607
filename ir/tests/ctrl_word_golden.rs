//! Golden bytes for the 8-byte CTRL SPAD word, `spad_ctrl_entry`
//! (wire-contract §1, §3; `docs/wire-format.md` §1).
//!
//! Every expected byte below is written by hand from the contract's field
//! table, never taken from the encoder's output. Rows name the contract row
//! they check.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common::{assert_bad_length, assert_reserved_at, image};
use ccc_ir::wire::ctrl_word::{CcOp, CtrlWord, decode_words};
use ccc_ir::wire::{DecodeError, DecodeErrorKind, EncodeError};

/// An op entry with every field zero: each row below changes one field.
const ZERO: CcOp = CcOp {
    algo_type: 0,
    algo_sub_type: 0,
    trigger_next: false,
    reporter: false,
    ring_wait_complete: false,
    ring_send_complete: false,
    safe_mode: false,
    unique_tensors: false,
    operand: 0,
};

/// Checks both directions: `value` packs to `bytes`, and `bytes` unpack to `value`.
#[track_caller]
fn assert_word(what: &str, value: CtrlWord, bytes: [u8; 8]) {
    assert_eq!(value.encode(), Ok(bytes), "{what}: encode");
    assert_eq!(CtrlWord::decode(bytes, 0), Ok(value), "{what}: decode");
}

// ---------------------------------------------------------------------------
// Op entry: each [seed] field alone at its maximum.
// ---------------------------------------------------------------------------

#[test]
fn each_seed_field_alone_at_its_maximum() {
    #[rustfmt::skip]
    let rows: &[(&str, CcOp, [u8; 8])] = &[
        // contract §1 row                          value                                          b0    b1    b2    b3    b4    b5    b6    b7
        ("byte 0 bit 0 header.cc_op (alone)",       ZERO,                                          [0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ("byte 1 bits 3:0 algo_type = 15",          CcOp { algo_type: 15, ..ZERO },                [0x01, 0x0F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ("byte 1 bits 6:4 algo_sub_type = 7",       CcOp { algo_sub_type: 7, ..ZERO },             [0x01, 0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ("byte 1 bit 7 trigger_next",               CcOp { trigger_next: true, ..ZERO },           [0x01, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ("byte 2 bit 0 reporter",                   CcOp { reporter: true, ..ZERO },               [0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ("byte 2 bit 1 ring_wait_complete",         CcOp { ring_wait_complete: true, ..ZERO },     [0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ("byte 2 bit 2 ring_send_complete",         CcOp { ring_send_complete: true, ..ZERO },     [0x01, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ("byte 2 bit 3 safe_mode [resolved]",       CcOp { safe_mode: true, ..ZERO },              [0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ("byte 2 bit 4 unique_tensors",             CcOp { unique_tensors: true, ..ZERO },         [0x01, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ("bytes 4..7 channel_list = 0xFFFF_FFFF",   CcOp { operand: 0xFFFF_FFFF, ..ZERO },         [0x01, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF]),
        ("bytes 4..5 sema_shift_offset = 0xFFFF",   CcOp { operand: CcOp::mesh_operand(0xFFFF, 0), ..ZERO }, [0x01, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00]),
        ("bytes 6..7 sema_mask = 0xFFFF",           CcOp { operand: CcOp::mesh_operand(0, 0xFFFF), ..ZERO }, [0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF]),
    ];
    for &(what, op, bytes) in rows {
        assert_word(what, CtrlWord::Op(op), bytes);
    }
}

#[test]
fn every_field_at_its_maximum_at_once() {
    let op = CcOp {
        algo_type: 15,
        algo_sub_type: 7,
        trigger_next: true,
        reporter: true,
        ring_wait_complete: true,
        ring_send_complete: true,
        safe_mode: true,
        unique_tensors: true,
        operand: 0xFFFF_FFFF,
    };
    #[rustfmt::skip]
    let bytes = [
        0x01,                   // byte 0: header.cc_op = 1, bits 7:1 reserved 0
        0xFF,                   // byte 1: trigger_next | algo_sub_type 7 << 4 | algo_type 15
        0x1F,                   // byte 2: the five flags in bits 4:0, bits 7:5 reserved 0
        0x00,                   // byte 3: padding
        0xFF, 0xFF, 0xFF, 0xFF, // bytes 4..7: channel_list
    ];
    assert_word("all fields at maximum", CtrlWord::Op(op), bytes);
}

#[test]
fn the_mesh_view_reads_its_own_half_of_the_union() {
    // sema_shift_offset alone: bytes 4..5.
    let Ok(CtrlWord::Op(op)) = CtrlWord::decode([0x01, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00], 0) else {
        panic!("sema_shift_offset word does not decode as an op entry");
    };
    assert_eq!((op.sema_shift_offset(), op.sema_mask()), (0xFFFF, 0x0000));
    // sema_mask alone: bytes 6..7.
    let Ok(CtrlWord::Op(op)) = CtrlWord::decode([0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF], 0) else {
        panic!("sema_mask word does not decode as an op entry");
    };
    assert_eq!((op.sema_shift_offset(), op.sema_mask()), (0x0000, 0xFFFF));
}

// ---------------------------------------------------------------------------
// The canonical check value and the union.
// ---------------------------------------------------------------------------

#[test]
fn canonical_check_value_mesh_switch_with_trigger_next() {
    // Contract §1: algo_type = 1 (MESH), algo_sub_type = 3 (MESH_SWITCH),
    // trigger_next = 1 gives the 16-bit word 0xB101 over word bytes 0..1.
    let op = CcOp { algo_type: 1, algo_sub_type: 3, trigger_next: true, ..ZERO };
    #[rustfmt::skip]
    let bytes = [
        0x01,                   // byte 0: header.cc_op = 1
        0xB1,                   // byte 1: trigger_next (bit 7) | 3 << 4 | 1
        0x00,                   // byte 2: flags
        0x00,                   // byte 3: padding
        0x00, 0x00, 0x00, 0x00, // bytes 4..7: union
    ];
    assert_word("canonical check value", CtrlWord::Op(op), bytes);
    assert_eq!(u16::from_le_bytes([bytes[0], bytes[1]]), 0xB101);
}

#[test]
fn the_union_aliases_channel_list_and_the_mesh_pair() {
    let op = CcOp { operand: 0xAAAA_BBBB, ..ZERO };
    #[rustfmt::skip]
    let bytes = [
        0x01, 0x00, 0x00, 0x00, // bytes 0..3: op entry, nothing else set
        0xBB, 0xBB,             // bytes 4..5: sema_shift_offset = channel_list low half
        0xAA, 0xAA,             // bytes 6..7: sema_mask = channel_list high half
    ];
    assert_word("union 0xAAAABBBB", CtrlWord::Op(op), bytes);
    let Ok(CtrlWord::Op(back)) = CtrlWord::decode(bytes, 0) else { panic!("not an op entry") };
    assert_eq!(back.channel_list(), 0xAAAA_BBBB);
    assert_eq!(back.sema_shift_offset(), 0xBBBB);
    assert_eq!(back.sema_mask(), 0xAAAA);
    assert_eq!(CcOp::mesh_operand(0xBBBB, 0xAAAA), 0xAAAA_BBBB);
}

// ---------------------------------------------------------------------------
// Reserved bits: one case per bit, decoded inside a multi-word image.
// ---------------------------------------------------------------------------

/// A valid image prefix: an op entry, an END mark and the CONTINUE mark, so
/// the bad word sits at word 3, absolute byte offset 0x18.
#[rustfmt::skip]
const PREFIX: [[u8; 8]; 3] = [
    [0x01, 0x80, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00], // word 0 @0x00: op entry, trigger_next, channel 0
    [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00], // word 1 @0x08: END 0x82_8000_1804
    [0x00, 0x00, 0x00, 0x00, 0xFE, 0xFF, 0xFE, 0xFF], // word 2 @0x10: CONTINUE
];

#[test]
fn every_reserved_bit_is_refused_at_its_absolute_offset() {
    #[rustfmt::skip]
    let rows: &[(&str, [u8; 8], u64)] = &[
        // contract row                    bad word at 0x18                                    offending byte
        ("op byte 0 bit 1 (header rsvd)",  [0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], 0x18),
        ("op byte 0 bit 2 (header rsvd)",  [0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], 0x18),
        ("op byte 0 bit 3 (header rsvd)",  [0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], 0x18),
        ("op byte 0 bit 4 (header rsvd)",  [0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], 0x18),
        ("op byte 0 bit 5 (header rsvd)",  [0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], 0x18),
        ("op byte 0 bit 6 (header rsvd)",  [0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], 0x18),
        ("op byte 0 bit 7 (header rsvd)",  [0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], 0x18),
        ("op byte 2 bit 5 (flags rsvd)",   [0x01, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00], 0x1A),
        ("op byte 2 bit 6 (flags rsvd)",   [0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00], 0x1A),
        ("op byte 2 bit 7 (flags rsvd)",   [0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00], 0x1A),
        ("op byte 3 bit 0 (padding)",      [0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00], 0x1B),
        ("op byte 3 bit 1 (padding)",      [0x01, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00], 0x1B),
        ("op byte 3 bit 2 (padding)",      [0x01, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00], 0x1B),
        ("op byte 3 bit 3 (padding)",      [0x01, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00], 0x1B),
        ("op byte 3 bit 4 (padding)",      [0x01, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00], 0x1B),
        ("op byte 3 bit 5 (padding)",      [0x01, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00], 0x1B),
        ("op byte 3 bit 6 (padding)",      [0x01, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00], 0x1B),
        ("op byte 3 bit 7 (padding)",      [0x01, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00], 0x1B),
        ("END bit 48",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x01, 0x00], 0x1E),
        ("END bit 49",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x02, 0x00], 0x1E),
        ("END bit 50",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x04, 0x00], 0x1E),
        ("END bit 51",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x08, 0x00], 0x1E),
        ("END bit 52",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x10, 0x00], 0x1E),
        ("END bit 53",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x20, 0x00], 0x1E),
        ("END bit 54",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x40, 0x00], 0x1E),
        ("END bit 55",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x80, 0x00], 0x1E),
        ("END bit 56",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x01], 0x1F),
        ("END bit 57",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x02], 0x1F),
        ("END bit 58",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x04], 0x1F),
        ("END bit 59",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x08], 0x1F),
        ("END bit 60",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x10], 0x1F),
        ("END bit 61",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x20], 0x1F),
        ("END bit 62",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x40], 0x1F),
        ("END bit 63",                     [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x80], 0x1F),
    ];
    for &(what, bad, offset) in rows {
        // The bad word, then an empty word after it: the error must name the
        // bad word's byte, not the image's start or end.
        let img = image(&[PREFIX[0], PREFIX[1], PREFIX[2], bad, [0; 8]]);
        assert_reserved_at(decode_words(&img), offset, what);
        // The same word alone, at absolute offset 0: the offset is relative
        // to the word's position, not fixed.
        assert_reserved_at(CtrlWord::decode(bad, 0), offset - 0x18, what);
    }
}

#[test]
fn the_prefix_used_above_is_itself_valid() {
    // Guards the test above: without this, a decoder refusing the prefix
    // would fail every row for the wrong reason at the wrong offset, which the
    // offset check catches, but this says so plainly.
    let words = decode_words(&image(&PREFIX)).unwrap();
    assert_eq!(words.iter().map(|&(o, _)| o).collect::<Vec<_>>(), vec![0x00, 0x08, 0x10]);
}

#[test]
fn an_op_entry_reserved_error_names_the_byte_value_and_mask() {
    let err = CtrlWord::decode([0x01, 0x00, 0xA4, 0x00, 0x00, 0x00, 0x00, 0x00], 0x40).unwrap_err();
    assert_eq!(err.offset, 0x42);
    assert!(
        matches!(err.kind, DecodeErrorKind::ReservedBits { value: 0xA4, mask: 0xE0, .. }),
        "unexpected kind {:?}",
        err.kind
    );
}

// ---------------------------------------------------------------------------
// Marks and the empty word.
// ---------------------------------------------------------------------------

#[test]
fn end_mark_is_the_completion_address_with_tag_0b10() {
    #[rustfmt::skip]
    let rows: &[(&str, u64, [u8; 8])] = &[
        // §1.3 END = compl_addr | 0b10            compl_addr              word bytes (LE)
        ("Cayman TOP_SP 0 INC(1), §6 example",     0x0000_0082_8000_1804,  [0x06, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]),
        ("Cayman TOP_SP 1 INC(1)",                 0x0000_0082_8010_1804,  [0x06, 0x18, 0x10, 0x80, 0x82, 0x00, 0x00, 0x00]),
        ("largest 48-bit aligned address",         0x0000_FFFF_FFFF_FFFC,  [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00]),
        ("address 0",                              0x0000_0000_0000_0000,  [0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
    ];
    for &(what, compl_addr, bytes) in rows {
        assert_word(what, CtrlWord::End { compl_addr }, bytes);
    }
    // The interface example as a word: 0x0000008280001804 | 0b10.
    let word = u64::from_le_bytes(CtrlWord::End { compl_addr: 0x0000_0082_8000_1804 }.encode().unwrap());
    assert_eq!(word, 0x0000_0082_8000_1806);
}

#[test]
fn continue_mark_and_empty_word() {
    // §1.2: SPAD_SLOT_CONTINUE_MARK = 0xFFFE_FFFE_0000_0000 [seed].
    assert_word("CONTINUE", CtrlWord::Continue, [0x00, 0x00, 0x00, 0x00, 0xFE, 0xFF, 0xFE, 0xFF]);
    assert_eq!(u64::from_le_bytes([0x00, 0x00, 0x00, 0x00, 0xFE, 0xFF, 0xFE, 0xFF]), 0xFFFE_FFFE_0000_0000);
    // §1: all 64 bits zero.
    assert_word("empty", CtrlWord::Empty, [0x00; 8]);
}

#[test]
fn unknown_words_are_refused_at_their_offset() {
    #[rustfmt::skip]
    let rows: &[(&str, [u8; 8])] = &[
        // cc_op = 0, bits 1:0 = 00, not CONTINUE, not zero
        ("bit 2 only",                      [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ("an aligned address without tag",  [0x04, 0x18, 0x00, 0x80, 0x82, 0x00, 0x00, 0x00]),
        ("CONTINUE with one more bit",      [0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFE, 0xFF]),
        ("CONTINUE with bit 2 set",         [0x04, 0x00, 0x00, 0x00, 0xFE, 0xFF, 0xFE, 0xFF]),
        ("bit 63 only",                     [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80]),
        ("all ones but bits 1:0",           [0xFC, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
    ];
    for &(what, bad) in rows {
        let img = image(&[PREFIX[0], PREFIX[1], bad]);
        let word = u64::from_le_bytes(bad);
        assert_eq!(
            decode_words(&img),
            Err(DecodeError { offset: 0x10, kind: DecodeErrorKind::UnknownWord { word } }),
            "{what}"
        );
    }
}

#[test]
fn images_that_are_not_whole_words_are_refused() {
    for len in [1usize, 7, 9, 15, 17, 63, 65] {
        let img = vec![0u8; len];
        assert_bad_length(decode_words(&img), len, &format!("{len}-byte image"));
        // The error points at the trailing partial word.
        assert_eq!(decode_words(&img).unwrap_err().offset, (len / 8 * 8) as u64);
    }
    // Whole words, including none at all, are accepted.
    assert_eq!(decode_words(&[]), Ok(vec![]));
    assert_eq!(decode_words(&[0u8; 16]), Ok(vec![(0, CtrlWord::Empty), (8, CtrlWord::Empty)]));
}

// ---------------------------------------------------------------------------
// Encode errors.
// ---------------------------------------------------------------------------

#[test]
fn fields_wider_than_their_bits_are_encode_errors() {
    assert_eq!(
        CtrlWord::Op(CcOp { algo_type: 16, ..ZERO }).encode(),
        Err(EncodeError::FieldOverflow { field: "algo_type", value: 16, max: 15 })
    );
    assert_eq!(
        CtrlWord::Op(CcOp { algo_type: 255, ..ZERO }).encode(),
        Err(EncodeError::FieldOverflow { field: "algo_type", value: 255, max: 15 })
    );
    assert_eq!(
        CtrlWord::Op(CcOp { algo_sub_type: 8, ..ZERO }).encode(),
        Err(EncodeError::FieldOverflow { field: "algo_sub_type", value: 8, max: 7 })
    );
    assert_eq!(
        CtrlWord::Op(CcOp { algo_sub_type: 255, ..ZERO }).encode(),
        Err(EncodeError::FieldOverflow { field: "algo_sub_type", value: 255, max: 7 })
    );
}

#[test]
fn end_addresses_must_be_aligned_and_below_2_pow_48() {
    for compl_addr in [0x0000_0082_8000_1805u64, 0x0000_0082_8000_1806, 0x0000_0082_8000_1807, 1, 2] {
        assert!(
            matches!(CtrlWord::End { compl_addr }.encode(), Err(EncodeError::BadValue { .. })),
            "unaligned {compl_addr:#x} must be refused"
        );
    }
    for compl_addr in [0x0001_0000_0000_0000u64, 0x8000_0000_0000_0000, 0xFFFF_FFFF_FFFF_FFFC] {
        assert!(
            matches!(CtrlWord::End { compl_addr }.encode(), Err(EncodeError::FieldOverflow { .. })),
            "{compl_addr:#x} above 48 bits must be refused"
        );
    }
}
