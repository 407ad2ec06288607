//! The SLOT SPAD image: every record's `tp_inc_steps`, in chain order
//! (`docs/wire-format.md` §7).
//!
//! ```text
//!  0x00  u32 record_n
//!  0x04  u32 entry_n
//!  0x08  record_n x { u16 first_entry, u16 entry_n }
//!  ....  (zero padding to a multiple of 8)
//!  ....  entry_n x u64 tp_inc_steps entry
//! ```

use super::bytes::{DecodeError, DecodeErrorKind, EncodeError, Reader, Writer};
use super::tp::{ENTRY_BYTES, TpIncStep};

/// Offset of `record_n`.
pub const RECORD_N_OFFSET: usize = 0;

/// What a SLOT SPAD image is, as a refusal's help says it.
pub const IMAGE_SHAPE: &str =
    "a SLOT SPAD image is record_n, entry_n, the per-record index, then the tp_inc_steps entries";
/// Offset of `entry_n`.
pub const ENTRY_N_OFFSET: usize = 4;
/// Offset of the per-record index.
pub const INDEX_OFFSET: usize = 8;
/// Bytes per index row.
pub const INDEX_ROW_BYTES: usize = 4;
/// Offset in an index row of the record's `entry_n` (after its u16
/// `first_entry`).
pub const ROW_ENTRY_N_OFFSET: usize = 2;

/// Each record's `tp_inc_steps`, in chain order.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SlotSpad {
    /// `records[i]` is the i-th record's list.
    pub records: Vec<Vec<TpIncStep>>,
}

/// Byte offset of the first entry for `record_n` records.
pub fn entries_offset(record_n: usize) -> usize {
    (INDEX_OFFSET + INDEX_ROW_BYTES * record_n).next_multiple_of(ENTRY_BYTES)
}

impl SlotSpad {
    /// Packs the image.
    ///
    /// # Errors
    ///
    /// [`EncodeError::RegionFull`] beyond `capacity` bytes;
    /// [`EncodeError::FieldOverflow`] when a record has more than 65535
    /// entries or the entries overflow the u16 index; an entry's own error.
    pub fn encode(&self, capacity: u32) -> Result<Vec<u8>, EncodeError> {
        let record_n = self.records.len();
        let entry_n: usize = self.records.iter().map(Vec::len).sum();
        let start = entries_offset(record_n);
        let needed = (start + entry_n * ENTRY_BYTES) as u64;
        if needed > u64::from(capacity) {
            return Err(EncodeError::RegionFull { region: "slot_spad", needed, capacity: u64::from(capacity) });
        }
        let to_u16 = |field, v: usize| {
            u16::try_from(v).map_err(|_| EncodeError::FieldOverflow {
                field,
                value: v as u64,
                max: u64::from(u16::MAX),
            })
        };
        let to_u32 = |field, v: usize| {
            u32::try_from(v).map_err(|_| EncodeError::FieldOverflow {
                field,
                value: v as u64,
                max: u64::from(u32::MAX),
            })
        };
        let mut image = vec![0u8; start + entry_n * ENTRY_BYTES];
        let mut w = Writer::new(&mut image);
        w.u32(RECORD_N_OFFSET, to_u32("slot_spad record_n", record_n)?)?;
        w.u32(ENTRY_N_OFFSET, to_u32("slot_spad entry_n", entry_n)?)?;
        let mut first = 0usize;
        for (i, entries) in self.records.iter().enumerate() {
            let row = INDEX_OFFSET + INDEX_ROW_BYTES * i;
            w.u16(row, to_u16("slot_spad first_entry", first)?)?;
            w.u16(row + ROW_ENTRY_N_OFFSET, to_u16("slot_spad record entry_n", entries.len())?)?;
            for (j, entry) in entries.iter().enumerate() {
                w.put(start + (first + j) * ENTRY_BYTES, &entry.encode()?)?;
            }
            first += entries.len();
        }
        Ok(image)
    }

    /// Unpacks an image, checking that the index tiles the entries in order
    /// and that padding is zero.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::BadLength`], [`DecodeErrorKind::BadValue`] for an
    /// inconsistent index, [`DecodeErrorKind::ReservedBits`] for padding.
    pub fn decode(image: &[u8]) -> Result<SlotSpad, DecodeError> {
        let r = Reader::new(image, 0);
        let record_n = r.u32(RECORD_N_OFFSET)? as usize;
        let entry_n = r.u32(ENTRY_N_OFFSET)? as usize;
        let start = INDEX_ROW_BYTES
            .checked_mul(record_n)
            .and_then(|n| n.checked_add(INDEX_OFFSET))
            .map(|n| n.next_multiple_of(ENTRY_BYTES));
        let end = start.and_then(|s| entry_n.checked_mul(ENTRY_BYTES).and_then(|n| n.checked_add(s)));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(DecodeError {
                offset: RECORD_N_OFFSET as u64,
                kind: DecodeErrorKind::BadValue {
                    field: "record_n",
                    value: record_n as u64,
                    expected: "a size that fits".into(),
                },
            });
        };
        if end != image.len() {
            // Where the image and what its header calls for part: the
            // end of the shorter.
            return Err(DecodeError {
                offset: end.min(image.len()) as u64,
                kind: DecodeErrorKind::BadLength {
                    len: image.len() as u64,
                    expected: format!(
                        "the {end} bytes its header calls for (the header, the index of {record_n} records and \
                         {entry_n} entries)"
                    )
                    .into(),
                },
            });
        }
        let index_end = INDEX_OFFSET + INDEX_ROW_BYTES * record_n;
        r.zeros(index_end, start - index_end, "slot_spad index padding")?;
        let mut records = Vec::with_capacity(record_n);
        let mut next = 0usize;
        for i in 0..record_n {
            let row = INDEX_OFFSET + INDEX_ROW_BYTES * i;
            let first = usize::from(r.u16(row)?);
            let n = usize::from(r.u16(row + ROW_ENTRY_N_OFFSET)?);
            if first != next {
                let expected = match i {
                    0 => "0 (record 0's entries come first)".into(),
                    _ if next > usize::from(u16::MAX) => format!(
                        "{next} (the end of record {}'s entries), which the index's 16 bits cannot hold: \
                         records {}..{record_n} start past the last entry an index row can name",
                        i - 1,
                        i
                    )
                    .into(),
                    _ => format!("{next} (the end of record {}'s entries)", i - 1).into(),
                };
                return Err(DecodeError {
                    offset: row as u64,
                    kind: DecodeErrorKind::BadValue { field: "slot_spad first_entry", value: first as u64, expected },
                });
            }
            if first + n > entry_n {
                return Err(DecodeError {
                    offset: (row + ROW_ENTRY_N_OFFSET) as u64,
                    kind: DecodeErrorKind::BadValue {
                        field: "slot_spad record entry_n",
                        value: n as u64,
                        expected: format!(
                            "at most {} (the image's entry_n, {entry_n}, less first_entry {first})",
                            entry_n - first
                        )
                        .into(),
                    },
                });
            }
            let entries = (first..first + n)
                .map(|e| {
                    let at = start + e * ENTRY_BYTES;
                    TpIncStep::decode(r.array(at)?, at as u64)
                })
                .collect::<Result<Vec<_>, _>>()?;
            records.push(entries);
            next = first + n;
        }
        if next != entry_n {
            return Err(DecodeError {
                offset: ENTRY_N_OFFSET as u64,
                kind: DecodeErrorKind::BadValue {
                    field: "slot_spad entry_n",
                    value: entry_n as u64,
                    expected: format!("{next}, the sum of the records' entry counts").into(),
                },
            });
        }
        Ok(SlotSpad { records })
    }
}
