//! The CTRL SPAD image: each collective's chain of op entries, laid out in
//! slots with CONTINUE and END marks (`docs/wire-format.md` §2).
//!
//! ```text
//!  slot 0 (64 B)                         slot 1
//!  +----+----+----+----+----+----+----+------+ +----+-----+-----+ ...
//!  | op | op | op | op | op | op | op | CONT | | op | END |  0  |
//!  +----+----+----+----+----+----+----+------+ +----+-----+-----+
//!   collective 0 spills into slot 1;            collective 1 starts at slot 2
//! ```

use super::bytes::{DecodeError, DecodeErrorKind, EncodeError};
use super::ctrl_word::{CcOp, CtrlWord, WORD_BYTES};

/// Bytes per slot \[project\].
pub const SLOT_BYTES: usize = 64;
/// Words per slot.
pub const SLOT_WORDS: usize = SLOT_BYTES / WORD_BYTES;

/// Op entries a slot holds beside its CONTINUE or END mark: a slot's last
/// word is never an op entry.
pub const SLOT_RECORDS: usize = SLOT_WORDS - 1;

/// The slots a collective of `records` op entries takes in the image
/// [`encode`] lays out: it starts at a fresh slot, each slot holds
/// [`SLOT_RECORDS`] op entries and a CONTINUE mark, and the END mark may
/// take the last slot's last word; so `ceil(records / 7)`, and none for a
/// collective with no record on the TOP_SP (it contributes nothing).
/// What a program's collectives take adds up: `Auto` fits a program's
/// choices into the CTRL SPAD by it.
pub fn slots(records: usize) -> usize {
    records.div_ceil(SLOT_RECORDS)
}

/// One collective's part of a TOP_SP's chain.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    /// The op entries, in chain order.
    pub records: Vec<CcOp>,
    /// The END mark's completion address.
    pub compl_addr: u64,
}

/// Where a record landed in the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Index of the segment (collective) in the image.
    pub segment: usize,
    /// Index of the record in its segment.
    pub record: usize,
    /// Byte offset of the record's word.
    pub offset: u64,
}

/// Lays the segments out into slots and packs every word.
///
/// # Errors
///
/// [`EncodeError::RegionFull`] when the image exceeds `capacity` bytes,
/// [`EncodeError::BadValue`] for a segment with no records (a collective
/// with no work on a TOP_SP contributes nothing to its image, and an END
/// with no op entry before it would not decode), or a word's own encode
/// error.
pub fn encode(segments: &[Segment], capacity: u32) -> Result<Vec<u8>, EncodeError> {
    let words = lay_out(segments)?;
    let needed = (words.len() * WORD_BYTES) as u64;
    if needed > u64::from(capacity) {
        return Err(EncodeError::RegionFull { region: "ctrl_spad", needed, capacity: u64::from(capacity) });
    }
    let mut image = Vec::with_capacity(words.len() * WORD_BYTES);
    for word in &words {
        image.extend_from_slice(&word.encode()?);
    }
    Ok(image)
}

/// Where each record of `segments` lands in the image [`encode`] writes,
/// in chain order: the same layout, read back word by word.
///
/// # Errors
///
/// [`EncodeError::BadValue`] for a segment with no records, as [`encode`].
pub fn placements(segments: &[Segment]) -> Result<Vec<Placement>, EncodeError> {
    let mut placements = Vec::new();
    let (mut segment, mut record) = (0, 0);
    for (i, word) in lay_out(segments)?.iter().enumerate() {
        match word {
            CtrlWord::Op(_) => {
                placements.push(Placement { segment, record, offset: (i * WORD_BYTES) as u64 });
                record += 1;
            }
            CtrlWord::End { .. } => (segment, record) = (segment + 1, 0),
            CtrlWord::Continue | CtrlWord::Empty => {}
        }
    }
    Ok(placements)
}

/// The words of the image, slot by slot: every collective starts at a
/// fresh slot, a CONTINUE mark takes a slot's last word when the chain goes
/// on, an END mark closes each collective, empty words pad the last slot.
fn lay_out(segments: &[Segment]) -> Result<Vec<CtrlWord>, EncodeError> {
    let mut words: Vec<CtrlWord> = Vec::new();
    for segment in segments {
        if segment.records.is_empty() {
            return Err(EncodeError::BadValue {
                field: "ctrl_spad segment records",
                value: 0,
                expected: "at least one op entry per collective on this TOP_SP",
            });
        }
        // Every collective starts at a fresh slot.
        words.resize(words.len().next_multiple_of(SLOT_WORDS), CtrlWord::Empty);
        for &op in &segment.records {
            if words.len() % SLOT_WORDS == SLOT_WORDS - 1 {
                // The last word of a slot, and the chain goes on after this
                // record: the slot ends with a CONTINUE mark.
                words.push(CtrlWord::Continue);
            }
            words.push(CtrlWord::Op(op));
        }
        // The END mark closes the chain, so it may take a slot's last word.
        words.push(CtrlWord::End { compl_addr: segment.compl_addr });
    }
    words.resize(words.len().next_multiple_of(SLOT_WORDS), CtrlWord::Empty);
    Ok(words)
}

/// Parses an image back into its segments, checking the slot structure:
/// a segment starts at a slot boundary, a CONTINUE mark sits only in a
/// slot's last word and is followed by an op entry, an END mark closes
/// each segment, and only empty words follow an END within its slot.
///
/// `trigger_next` is returned as found: whether it is consistent is the
/// verifier's question, not the decoder's.
///
/// # Errors
///
/// A word's decode error, [`DecodeErrorKind::BadLength`] for a length that
/// is not a whole number of slots, or [`DecodeErrorKind::Chain`] naming the
/// structural fault.
pub fn decode(image: &[u8]) -> Result<Vec<Segment>, DecodeError> {
    if !image.len().is_multiple_of(SLOT_BYTES) {
        return Err(DecodeError {
            offset: (image.len() - image.len() % SLOT_BYTES) as u64,
            kind: DecodeErrorKind::BadLength {
                len: image.len() as u64,
                expected: "a whole number of 64-byte slots".into(),
            },
        });
    }
    let words = super::ctrl_word::decode_words(image)?;
    let mut segments = Vec::new();
    let mut open: Option<Vec<CcOp>> = None;
    let mut after_end = false;
    let mut after_continue = false;
    for (i, &(offset, word)) in words.iter().enumerate() {
        let in_slot = i % SLOT_WORDS;
        let chain_err = |msg| DecodeError { offset, kind: DecodeErrorKind::Chain(msg) };
        if in_slot == 0 {
            after_end = false;
        }
        match word {
            CtrlWord::Empty => {
                if open.is_some() {
                    return Err(chain_err("empty word inside a chain: expected an op entry, END or CONTINUE"));
                }
            }
            CtrlWord::Op(op) => {
                if after_end {
                    return Err(chain_err("op entry after an END mark in the same slot"));
                }
                if in_slot == SLOT_WORDS - 1 {
                    return Err(chain_err(
                        "op entry in the last word of a slot, where a CONTINUE mark or the END mark belongs",
                    ));
                }
                match open.as_mut() {
                    Some(records) => records.push(op),
                    None if in_slot == 0 => open = Some(vec![op]),
                    None => return Err(chain_err("a chain must start at the first word of a slot")),
                }
            }
            CtrlWord::Continue => {
                if open.is_none() {
                    return Err(chain_err("CONTINUE mark outside a chain"));
                }
                if in_slot != SLOT_WORDS - 1 {
                    return Err(chain_err("CONTINUE mark before the last word of its slot"));
                }
            }
            // The END would have taken the CONTINUE mark's word: a CONTINUE
            // is written only while records remain (docs §1.2, §2).
            CtrlWord::End { .. } if after_continue => {
                return Err(chain_err(
                    "END mark right after a CONTINUE mark: a CONTINUE must be followed by an op entry",
                ));
            }
            CtrlWord::End { compl_addr } => match open.take() {
                Some(records) => {
                    segments.push(Segment { records, compl_addr });
                    after_end = true;
                }
                None if in_slot == 0 => {
                    // A collective with no records is not something ccc emits.
                    return Err(chain_err("END mark with no op entry before it"));
                }
                None => return Err(chain_err("END mark outside a chain")),
            },
        }
        after_continue = word == CtrlWord::Continue;
    }
    if open.is_some() {
        let offset = image.len() as u64;
        return Err(DecodeError {
            offset,
            kind: DecodeErrorKind::Chain("chain runs off the end of the image without an END mark"),
        });
    }
    Ok(segments)
}
