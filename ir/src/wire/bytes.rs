//! An offset-aware little-endian writer and reader over byte buffers, and the
//! encode/decode error types every wire format shares.
//!
//! Out-of-range accesses are errors, never panics: the writer is used with
//! offsets computed from a plan, and a wrong plan must surface as an
//! [`EncodeError`], not a crash.

use std::borrow::Cow;

/// What went wrong while decoding an image, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} (at offset {offset:#x})")]
pub struct DecodeError {
    /// Absolute byte offset in the image of the offending byte or word.
    pub offset: u64,
    /// What was wrong there.
    pub kind: DecodeErrorKind,
}

/// The kinds of decode failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeErrorKind {
    /// The image length is not what the format allows.
    #[error("image is {}, not {expected}", crate::noun::count(len, "byte"))]
    BadLength {
        /// The image's length.
        len: u64,
        /// What the format wants, in words.
        expected: Cow<'static, str>,
    },
    /// Reserved or padding bits are set.
    #[error("reserved bits set in {field}: {value:#04x} & {mask:#04x}")]
    ReservedBits {
        /// The field the bits belong to.
        field: &'static str,
        /// The byte (or masked value) read.
        value: u64,
        /// The reserved mask.
        mask: u64,
    },
    /// A word is neither an op entry, an END or CONTINUE mark, nor empty.
    #[error("unknown word {word:#018x}: not an op entry, END mark, CONTINUE mark or empty word")]
    UnknownWord {
        /// The word, read little-endian.
        word: u64,
    },
    /// A field holds a value the format does not allow.
    #[error("{field} is {value}, expected {expected}")]
    BadValue {
        /// The field.
        field: &'static str,
        /// The value read.
        value: u64,
        /// What would be accepted (with the values the image's own
        /// fields call for, where they say).
        expected: Cow<'static, str>,
    },
    /// The chain structure of a CTRL SPAD image is broken.
    #[error("{0}")]
    Chain(&'static str),
    /// A read ran past the end of the image.
    #[error("read of {} runs past the end of the {len}-byte image", crate::noun::count(width, "byte"))]
    Truncated {
        /// Bytes asked for.
        width: u64,
        /// The image's length.
        len: u64,
    },
}

/// What went wrong while encoding a value into bytes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// A field's value does not fit its width.
    #[error("{field} is {value}, which does not fit (maximum {max})")]
    FieldOverflow {
        /// The field.
        field: &'static str,
        /// The value asked for.
        value: u64,
        /// The largest value the field holds.
        max: u64,
    },
    /// A field's value is not allowed.
    #[error("{field} is {value}, {expected}")]
    BadValue {
        /// The field.
        field: &'static str,
        /// The value asked for.
        value: u64,
        /// What would be accepted.
        expected: &'static str,
    },
    /// The image does not fit its region.
    #[error("{region} needs {needed} bytes, more than its {capacity} bytes")]
    RegionFull {
        /// The region (`ctrl_spad`, `slot_spad`).
        region: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        capacity: u64,
    },
    /// A write fell outside the buffer (a wrong layout plan).
    #[error("write of {} at offset {offset:#x} falls outside the {len}-byte buffer", crate::noun::count(width, "byte"))]
    OutOfBounds {
        /// Where the write started.
        offset: u64,
        /// Bytes written.
        width: u64,
        /// The buffer's length.
        len: u64,
    },
}

/// Writes little-endian integers at explicit offsets into a byte buffer.
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut [u8],
}

impl<'a> Writer<'a> {
    /// A writer over `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf }
    }

    /// Writes `bytes` at `offset`.
    ///
    /// # Errors
    ///
    /// [`EncodeError::OutOfBounds`] when the bytes do not fit.
    pub fn put(&mut self, offset: usize, bytes: &[u8]) -> Result<(), EncodeError> {
        let len = self.buf.len();
        let dst = offset
            .checked_add(bytes.len())
            .and_then(|end| self.buf.get_mut(offset..end))
            .ok_or(EncodeError::OutOfBounds { offset: offset as u64, width: bytes.len() as u64, len: len as u64 })?;
        dst.copy_from_slice(bytes);
        Ok(())
    }

    /// Writes a `u8` at `offset`.
    ///
    /// # Errors
    ///
    /// [`EncodeError::OutOfBounds`].
    pub fn u8(&mut self, offset: usize, v: u8) -> Result<(), EncodeError> {
        self.put(offset, &[v])
    }

    /// Writes a little-endian `u16` at `offset`.
    ///
    /// # Errors
    ///
    /// [`EncodeError::OutOfBounds`].
    pub fn u16(&mut self, offset: usize, v: u16) -> Result<(), EncodeError> {
        self.put(offset, &v.to_le_bytes())
    }

    /// Writes a little-endian `u32` at `offset`.
    ///
    /// # Errors
    ///
    /// [`EncodeError::OutOfBounds`].
    pub fn u32(&mut self, offset: usize, v: u32) -> Result<(), EncodeError> {
        self.put(offset, &v.to_le_bytes())
    }

    /// Writes a little-endian `u64` at `offset`.
    ///
    /// # Errors
    ///
    /// [`EncodeError::OutOfBounds`].
    pub fn u64(&mut self, offset: usize, v: u64) -> Result<(), EncodeError> {
        self.put(offset, &v.to_le_bytes())
    }
}

/// Reads little-endian integers at explicit offsets; offsets in errors are
/// absolute (the reader's `base` is added).
#[derive(Clone, Copy, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    base: u64,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, whose first byte sits at absolute offset `base`.
    pub fn new(buf: &'a [u8], base: u64) -> Self {
        Reader { buf, base }
    }

    /// The absolute offset of relative offset `offset`.
    pub fn abs(&self, offset: usize) -> u64 {
        self.base + offset as u64
    }

    /// The `N` bytes at `offset`.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::Truncated`] when they run past the end.
    pub fn array<const N: usize>(&self, offset: usize) -> Result<[u8; N], DecodeError> {
        offset.checked_add(N).and_then(|end| self.buf.get(offset..end)).and_then(|s| <[u8; N]>::try_from(s).ok()).ok_or(
            DecodeError {
                offset: self.abs(offset),
                kind: DecodeErrorKind::Truncated { width: N as u64, len: self.buf.len() as u64 },
            },
        )
    }

    /// The `u8` at `offset`.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::Truncated`].
    pub fn u8(&self, offset: usize) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(offset)?[0])
    }

    /// The little-endian `u16` at `offset`.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::Truncated`].
    pub fn u16(&self, offset: usize) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array(offset)?))
    }

    /// The little-endian `u32` at `offset`.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::Truncated`].
    pub fn u32(&self, offset: usize) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array(offset)?))
    }

    /// The little-endian `u64` at `offset`.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::Truncated`].
    pub fn u64(&self, offset: usize) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array(offset)?))
    }

    /// Refuses any non-zero byte in `offset..offset + len` (a reserved area),
    /// naming the first offending byte.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::ReservedBits`] or [`DecodeErrorKind::Truncated`].
    pub fn zeros(&self, offset: usize, len: usize, field: &'static str) -> Result<(), DecodeError> {
        let area = offset.checked_add(len).and_then(|end| self.buf.get(offset..end)).ok_or(DecodeError {
            offset: self.abs(offset),
            kind: DecodeErrorKind::Truncated { width: len as u64, len: self.buf.len() as u64 },
        })?;
        // An OR over the whole area compiles to wide loads (`neff_configs`'
        // unused mesh events alone are up to 1,728 bytes, and a whole-world
        // proof decodes every distinct image); only a non-zero area is
        // walked again, to name its first byte.
        if area.iter().fold(0u8, |any, &b| any | b) == 0 {
            return Ok(());
        }
        match area.iter().position(|&b| b != 0) {
            None => Ok(()),
            Some(i) => Err(DecodeError {
                offset: self.abs(offset + i),
                kind: DecodeErrorKind::ReservedBits { field, value: u64::from(area[i]), mask: 0xFF },
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_outside_the_buffer_are_errors() {
        let mut buf = [0u8; 4];
        let mut w = Writer::new(&mut buf);
        assert!(w.u32(0, 0x0403_0201).is_ok());
        assert_eq!(buf, [1, 2, 3, 4]);
        let mut w = Writer::new(&mut buf);
        assert_eq!(w.u16(3, 1), Err(EncodeError::OutOfBounds { offset: 3, width: 2, len: 4 }));
        assert!(w.u8(usize::MAX, 1).is_err());
    }

    #[test]
    fn reads_report_absolute_offsets() {
        let buf = [0u8, 0, 0x20, 0];
        let r = Reader::new(&buf, 0x100);
        assert_eq!(r.u16(0), Ok(0));
        let err = r.zeros(0, 4, "pad").unwrap_err();
        assert_eq!(err.offset, 0x102);
        assert_eq!(r.u32(2).unwrap_err().offset, 0x102);
    }

    #[test]
    fn a_long_reserved_area_names_its_first_nonzero_byte() {
        let mut buf = vec![0u8; 2048];
        let r = Reader::new(&buf, 0);
        assert_eq!(r.zeros(0, 2048, "pad"), Ok(()));
        buf[1500] = 0x80;
        buf[1900] = 0x01;
        let err = Reader::new(&buf, 0x40).zeros(8, 2040, "pad").unwrap_err();
        assert_eq!(err.offset, 0x40 + 1500);
        assert_eq!(err.kind, DecodeErrorKind::ReservedBits { field: "pad", value: 0x80, mask: 0xFF });
    }

    #[test]
    fn one_byte_is_one_byte() {
        let one = DecodeError {
            offset: 0,
            kind: DecodeErrorKind::BadLength { len: 1, expected: "a multiple of 8 bytes".into() },
        };
        assert_eq!(one.to_string(), "image is 1 byte, not a multiple of 8 bytes (at offset 0x0)");
        let past = DecodeErrorKind::Truncated { width: 1, len: 0 };
        assert_eq!(past.to_string(), "read of 1 byte runs past the end of the 0-byte image");
        let outside = EncodeError::OutOfBounds { offset: 4, width: 1, len: 4 };
        assert_eq!(outside.to_string(), "write of 1 byte at offset 0x4 falls outside the 4-byte buffer");
        let two = DecodeErrorKind::Truncated { width: 2, len: 1 };
        assert_eq!(two.to_string(), "read of 2 bytes runs past the end of the 1-byte image");
    }
}
