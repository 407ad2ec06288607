//! The 8-byte CTRL SPAD word, `spad_ctrl_entry` (wire-contract §1, §3, which
//! calls it the scheduler slot; `docs/wire-format.md` §1). ccc keeps "slot"
//! for the 64-byte unit of the CTRL SPAD chain and the SLOT SPAD.
//!
//! ```text
//!  word byte:   0          1                 2                 3        4..7
//!            +--------+-----------------+-----------------+--------+-------------------------+
//!  bits      |7......0|7|6...4|3......0|7.5|4|3|2|1|0      |7......0| u32 LE                  |
//!            |rsvd  |c|t| sub |  algo   |rsv|u|s|S|W|R      |  pad   | channel_list            |
//!            |      |c| |type |  type   |   |t|m|C|C|p      |        | = sema_mask<<16 | shift |
//!            +--------+-----------------+-----------------+--------+-------------------------+
//! ```
//!
//! A word is an op entry ([`CcOp`]) when `header.cc_op` (byte 0 bit 0) is
//! set; otherwise it is an END mark, the CONTINUE mark or empty
//! ([`CtrlWord`]). [`CtrlWord::encode`] is the one place that packs a word
//! and [`CtrlWord::decode`] the one place that unpacks it.

use super::bytes::{DecodeError, DecodeErrorKind, EncodeError};

/// Bytes per CTRL SPAD word.
pub const WORD_BYTES: usize = 8;

/// What a CTRL SPAD image is, as a refusal's help says it.
pub const IMAGE_SHAPE: &str = "a CTRL SPAD image is 8-byte words: op entries, END and CONTINUE marks, empty words";

// Byte 0: the container header.
/// Byte 0: `header.cc_op`, the op-enable bit.
pub const HEADER_CC_OP: u8 = 1 << 0;
/// Byte 0: reserved header bits 7:1.
pub const HEADER_RESERVED_MASK: u8 = 0xFE;

// Byte 1: the cc_op entry's byte +0.
/// Byte 1: shift of `algo_type` (bits 3:0).
pub const ALGO_TYPE_SHIFT: u32 = 0;
/// Byte 1: `algo_type` mask after shifting (4 bits).
pub const ALGO_TYPE_MASK: u8 = 0x0F;
/// Byte 1: shift of `algo_sub_type` (bits 6:4).
pub const ALGO_SUB_TYPE_SHIFT: u32 = 4;
/// Byte 1: `algo_sub_type` mask after shifting (3 bits).
pub const ALGO_SUB_TYPE_MASK: u8 = 0x07;
/// Byte 1: shift of `trigger_next` (bit 7).
pub const TRIGGER_NEXT_SHIFT: u32 = 7;

// Byte 2: the cc_op entry's flag byte (+1).
/// Byte 2: `reporter` (bit 0).
pub const FLAG_REPORTER: u8 = 1 << 0;
/// Byte 2: `ring_wait_complete` (bit 1).
pub const FLAG_RING_WAIT_COMPLETE: u8 = 1 << 1;
/// Byte 2: `ring_send_complete` (bit 2).
pub const FLAG_RING_SEND_COMPLETE: u8 = 1 << 2;
/// Byte 2: `safe_mode` (bit 3, \[resolved\] a wire bit).
pub const FLAG_SAFE_MODE: u8 = 1 << 3;
/// Byte 2: `unique_tensors` (bit 4).
pub const FLAG_UNIQUE_TENSORS: u8 = 1 << 4;
/// Byte 2: reserved bits 7:5.
pub const FLAG_RESERVED_MASK: u8 = 0xE0;

/// Byte offset of the header byte.
pub const HEADER_BYTE: usize = 0;
/// Byte offset of `algo_type` / `algo_sub_type` / `trigger_next`.
pub const ALGO_BYTE: usize = 1;
/// Byte offset of the flag byte.
pub const FLAG_BYTE: usize = 2;
/// Byte offset of the padding byte.
pub const PAD_BYTE: usize = 3;
/// Byte offset of the 4-byte union (`channel_list` / mesh pair).
pub const UNION_BYTE: usize = 4;
/// Byte offset of `sema_mask` (high half of the union).
pub const SEMA_MASK_BYTE: usize = 6;

/// The CONTINUE marker word, `SPAD_SLOT_CONTINUE_MARK` \[seed\].
pub const CONTINUE_MARK: u64 = 0xFFFE_FFFE_0000_0000;

/// END mark: bits 1:0 hold this tag \[project\].
pub const END_TAG: u64 = 0b10;
/// END mark: the tag bits.
pub const END_TAG_MASK: u64 = 0b11;
/// END mark: bits 47:2 hold the completion address.
pub const END_ADDR_MASK: u64 = 0x0000_FFFF_FFFF_FFFC;
/// END mark: reserved bits 63:48.
pub const END_RESERVED_MASK: u64 = 0xFFFF_0000_0000_0000;
/// END mark: the bytes holding the reserved bits, low to high.
pub const END_RESERVED_BYTES: [usize; 2] = [6, 7];

/// The cc_op record: one step group on one TOP_SP.
///
/// Fields hold raw values, as the vendor's dumper prints them; ccc's
/// lowering only ever writes the device patterns RING (0) and MESH (1) into
/// `algo_type` and a known sub-type into `algo_sub_type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CcOp {
    /// Device pattern (`enc_pattern_t`), 4 bits.
    pub algo_type: u8,
    /// Sub-type: `metaring_type` for RING, `enc_alg_mesh_type` for MESH; 3 bits.
    pub algo_sub_type: u8,
    /// Another record follows in this chain.
    pub trigger_next: bool,
    /// The reporting (leader) channel's record.
    pub reporter: bool,
    /// Wait for the previous record's completion before issuing.
    pub ring_wait_complete: bool,
    /// Signal completion once this record's sends are done.
    pub ring_send_complete: bool,
    /// The runtime's `permute_chain`.
    pub safe_mode: bool,
    /// The output is a tensor distinct from the input.
    pub unique_tensors: bool,
    /// The 4-byte union: `channel_list` (RING) or
    /// `sema_mask << 16 | sema_shift_offset` (MESH).
    pub operand: u32,
}

impl CcOp {
    /// Ring view: the channel bitmap (bit c = channel c).
    pub const fn channel_list(&self) -> u32 {
        self.operand
    }

    /// Mesh view: the low half of the union.
    pub const fn sema_shift_offset(&self) -> u16 {
        (self.operand & 0xFFFF) as u16
    }

    /// Mesh view: the high half of the union.
    pub const fn sema_mask(&self) -> u16 {
        (self.operand >> 16) as u16
    }

    /// The union built from the mesh view's two halves.
    pub const fn mesh_operand(sema_shift_offset: u16, sema_mask: u16) -> u32 {
        ((sema_mask as u32) << 16) | sema_shift_offset as u32
    }
}

/// One 8-byte word of a CTRL SPAD image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CtrlWord {
    /// An op entry (`header.cc_op = 1`).
    Op(CcOp),
    /// The end of a collective's chain; the device increments `compl_addr`.
    End {
        /// The completion semaphore's INC-window address.
        compl_addr: u64,
    },
    /// The chain continues at the first word of the next slot.
    Continue,
    /// An unused word (all zero).
    Empty,
}

impl CtrlWord {
    /// Packs the word.
    ///
    /// # Errors
    ///
    /// [`EncodeError::FieldOverflow`] when `algo_type` exceeds 4 bits,
    /// `algo_sub_type` 3 bits, or an END address 48 bits;
    /// [`EncodeError::BadValue`] for an END address that is not 4-byte aligned.
    pub fn encode(&self) -> Result<[u8; WORD_BYTES], EncodeError> {
        match *self {
            CtrlWord::Op(op) => encode_op(&op),
            CtrlWord::End { compl_addr } => {
                if compl_addr & !END_ADDR_MASK & !END_TAG_MASK != 0 {
                    return Err(EncodeError::FieldOverflow {
                        field: "END compl_addr",
                        value: compl_addr,
                        max: END_ADDR_MASK,
                    });
                }
                if compl_addr & END_TAG_MASK != 0 {
                    return Err(EncodeError::BadValue {
                        field: "END compl_addr",
                        value: compl_addr,
                        expected: "a 4-byte aligned semaphore address",
                    });
                }
                Ok((compl_addr | END_TAG).to_le_bytes())
            }
            CtrlWord::Continue => Ok(CONTINUE_MARK.to_le_bytes()),
            CtrlWord::Empty => Ok([0; WORD_BYTES]),
        }
    }

    /// Unpacks the word found at absolute byte `offset` of an image.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::ReservedBits`] naming the offending byte's offset
    /// for a set reserved or padding bit; [`DecodeErrorKind::UnknownWord`]
    /// for a non-op word that is no mark.
    pub fn decode(bytes: [u8; WORD_BYTES], offset: u64) -> Result<CtrlWord, DecodeError> {
        let word = u64::from_le_bytes(bytes);
        if bytes[HEADER_BYTE] & HEADER_CC_OP != 0 {
            return decode_op(bytes, offset).map(CtrlWord::Op);
        }
        if word == 0 {
            return Ok(CtrlWord::Empty);
        }
        if word == CONTINUE_MARK {
            return Ok(CtrlWord::Continue);
        }
        if word & END_TAG_MASK == END_TAG {
            if word & END_RESERVED_MASK != 0 {
                // The first set reserved byte.
                let byte = END_RESERVED_BYTES.into_iter().find(|&b| bytes[b] != 0).unwrap_or(END_RESERVED_BYTES[1]);
                return Err(DecodeError {
                    offset: offset + byte as u64,
                    kind: DecodeErrorKind::ReservedBits {
                        field: "END mark bits 63:48",
                        value: u64::from(bytes[byte]),
                        mask: 0xFF,
                    },
                });
            }
            return Ok(CtrlWord::End { compl_addr: word & END_ADDR_MASK });
        }
        Err(DecodeError { offset, kind: DecodeErrorKind::UnknownWord { word } })
    }
}

fn encode_op(op: &CcOp) -> Result<[u8; WORD_BYTES], EncodeError> {
    // Exhaustive destructure: a new field breaks the build here.
    let CcOp {
        algo_type,
        algo_sub_type,
        trigger_next,
        reporter,
        ring_wait_complete,
        ring_send_complete,
        safe_mode,
        unique_tensors,
        operand,
    } = *op;
    if algo_type > ALGO_TYPE_MASK {
        return Err(EncodeError::FieldOverflow {
            field: "algo_type",
            value: u64::from(algo_type),
            max: u64::from(ALGO_TYPE_MASK),
        });
    }
    if algo_sub_type > ALGO_SUB_TYPE_MASK {
        return Err(EncodeError::FieldOverflow {
            field: "algo_sub_type",
            value: u64::from(algo_sub_type),
            max: u64::from(ALGO_SUB_TYPE_MASK),
        });
    }
    let mut w = [0u8; WORD_BYTES];
    w[HEADER_BYTE] = HEADER_CC_OP;
    w[ALGO_BYTE] = (algo_type << ALGO_TYPE_SHIFT)
        | (algo_sub_type << ALGO_SUB_TYPE_SHIFT)
        | (u8::from(trigger_next) << TRIGGER_NEXT_SHIFT);
    let flag = |on: bool, bit: u8| if on { bit } else { 0 };
    w[FLAG_BYTE] = flag(reporter, FLAG_REPORTER)
        | flag(ring_wait_complete, FLAG_RING_WAIT_COMPLETE)
        | flag(ring_send_complete, FLAG_RING_SEND_COMPLETE)
        | flag(safe_mode, FLAG_SAFE_MODE)
        | flag(unique_tensors, FLAG_UNIQUE_TENSORS);
    w[PAD_BYTE] = 0;
    let [u0, u1, u2, u3] = operand.to_le_bytes();
    w[UNION_BYTE] = u0;
    w[UNION_BYTE + 1] = u1;
    w[UNION_BYTE + 2] = u2;
    w[UNION_BYTE + 3] = u3;
    Ok(w)
}

fn decode_op(w: [u8; WORD_BYTES], offset: u64) -> Result<CcOp, DecodeError> {
    let reserved = |byte: usize, mask: u8, field: &'static str| {
        let value = w[byte] & mask;
        if value != 0 {
            Err(DecodeError {
                offset: offset + byte as u64,
                kind: DecodeErrorKind::ReservedBits { field, value: u64::from(w[byte]), mask: u64::from(mask) },
            })
        } else {
            Ok(())
        }
    };
    reserved(HEADER_BYTE, HEADER_RESERVED_MASK, "header bits 7:1")?;
    reserved(FLAG_BYTE, FLAG_RESERVED_MASK, "flag byte bits 7:5")?;
    reserved(PAD_BYTE, 0xFF, "padding byte 3")?;
    let algo = w[ALGO_BYTE];
    let flags = w[FLAG_BYTE];
    Ok(CcOp {
        algo_type: (algo >> ALGO_TYPE_SHIFT) & ALGO_TYPE_MASK,
        algo_sub_type: (algo >> ALGO_SUB_TYPE_SHIFT) & ALGO_SUB_TYPE_MASK,
        trigger_next: (algo >> TRIGGER_NEXT_SHIFT) & 1 == 1,
        reporter: flags & FLAG_REPORTER != 0,
        ring_wait_complete: flags & FLAG_RING_WAIT_COMPLETE != 0,
        ring_send_complete: flags & FLAG_RING_SEND_COMPLETE != 0,
        safe_mode: flags & FLAG_SAFE_MODE != 0,
        unique_tensors: flags & FLAG_UNIQUE_TENSORS != 0,
        operand: u32::from_le_bytes([w[UNION_BYTE], w[UNION_BYTE + 1], w[UNION_BYTE + 2], w[UNION_BYTE + 3]]),
    })
}

/// Decodes a raw image of words (any multiple of 8 bytes, as `ccc decode`
/// takes), returning each word with its absolute byte offset.
///
/// # Errors
///
/// [`DecodeErrorKind::BadLength`] for a length that is not a multiple of 8,
/// or the first word's decode error.
pub fn decode_words(image: &[u8]) -> Result<Vec<(u64, CtrlWord)>, DecodeError> {
    if !image.len().is_multiple_of(WORD_BYTES) {
        return Err(DecodeError {
            offset: (image.len() - image.len() % WORD_BYTES) as u64,
            kind: DecodeErrorKind::BadLength { len: image.len() as u64, expected: "a multiple of 8 bytes".into() },
        });
    }
    image
        .chunks_exact(WORD_BYTES)
        .enumerate()
        .map(|(i, chunk)| {
            let offset = (i * WORD_BYTES) as u64;
            let mut bytes = [0u8; WORD_BYTES];
            bytes.copy_from_slice(chunk);
            CtrlWord::decode(bytes, offset).map(|w| (offset, w))
        })
        .collect()
}
