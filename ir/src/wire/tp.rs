//! `tp_inc_steps`: a record's DMA tail-pointer increments (wire-contract §4;
//! `docs/wire-format.md` §5).
//!
//! ```text
//!  bits 63..48   47..24   23..0
//!      +-------+--------+-------+
//!      |repeat |  s2m   |  m2s  |
//!      +-------+--------+-------+
//! ```

use super::bytes::{DecodeError, DecodeErrorKind, EncodeError};
use smallvec::SmallVec;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// Bytes per entry.
pub const ENTRY_BYTES: usize = 8;
/// The increment register's value mask (`VAL_MASK`) \[seed\]: 24 bits.
pub const VAL_MASK: u32 = 0x00FF_FFFF;
/// Shift of `m2s`.
pub const M2S_SHIFT: u32 = 0;
/// Shift of `s2m`.
pub const S2M_SHIFT: u32 = 24;
/// Shift of `repeat`.
pub const REPEAT_SHIFT: u32 = 48;
/// The largest `repeat`.
pub const REPEAT_MAX: u16 = u16::MAX;
/// Byte offset of `repeat` within an entry.
pub const REPEAT_BYTE: u64 = (REPEAT_SHIFT / 8) as u64;

/// One `tp_inc_steps[i] = m2s, s2m, repeat` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct TpIncStep {
    /// Descriptors to post on the send (M2S) queue per step.
    pub m2s: u32,
    /// Descriptors to post on the receive (S2M) queue per step.
    pub s2m: u32,
    /// How many consecutive steps post this pair (1..=65535).
    pub repeat: u16,
}

impl TpIncStep {
    /// Packs the entry.
    ///
    /// # Errors
    ///
    /// [`EncodeError::FieldOverflow`] when `m2s` or `s2m` exceeds
    /// [`VAL_MASK`]; [`EncodeError::BadValue`] when `repeat` is 0.
    pub fn encode(&self) -> Result<[u8; ENTRY_BYTES], EncodeError> {
        let TpIncStep { m2s, s2m, repeat } = *self;
        for (field, value) in [("tp_inc_steps m2s", m2s), ("tp_inc_steps s2m", s2m)] {
            if value > VAL_MASK {
                return Err(EncodeError::FieldOverflow { field, value: u64::from(value), max: u64::from(VAL_MASK) });
            }
        }
        if repeat == 0 {
            return Err(EncodeError::BadValue { field: "tp_inc_steps repeat", value: 0, expected: "1..=65535" });
        }
        let word = (u64::from(m2s) << M2S_SHIFT) | (u64::from(s2m) << S2M_SHIFT) | (u64::from(repeat) << REPEAT_SHIFT);
        Ok(word.to_le_bytes())
    }

    /// Unpacks the entry found at absolute byte `offset`.
    ///
    /// # Errors
    ///
    /// [`DecodeErrorKind::BadValue`] for `repeat = 0`.
    pub fn decode(bytes: [u8; ENTRY_BYTES], offset: u64) -> Result<TpIncStep, DecodeError> {
        let word = u64::from_le_bytes(bytes);
        let field = |shift: u32| ((word >> shift) & u64::from(VAL_MASK)) as u32;
        let repeat = (word >> REPEAT_SHIFT) as u16;
        if repeat == 0 {
            return Err(DecodeError {
                offset: offset + REPEAT_BYTE,
                kind: DecodeErrorKind::BadValue {
                    field: "tp_inc_steps repeat",
                    value: 0,
                    expected: "1..=65535".into(),
                },
            });
        }
        Ok(TpIncStep { m2s: field(M2S_SHIFT), s2m: field(S2M_SHIFT), repeat })
    }

    /// Descriptors this entry posts in all: `(m2s + s2m) * repeat`.
    pub const fn total_descriptors(&self) -> u64 {
        (self.m2s as u64 + self.s2m as u64) * self.repeat as u64
    }
}

/// How many entries a [`TpRuns`] holds without a heap allocation: most
/// records fold to one or two runs.
pub const TP_RUNS_INLINE: usize = 2;

/// One record's `tp_inc_steps` entries, in order: a vector that keeps up to
/// [`TP_RUNS_INLINE`] entries inline, so that lowering a world of records
/// of one or two runs allocates nothing per record. It reads as a slice
/// (`Deref`), prints and serializes as a list, and compares equal to a
/// `Vec` of the same entries.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct TpRuns(SmallVec<[TpIncStep; TP_RUNS_INLINE]>);

impl TpRuns {
    /// No entries.
    pub fn new() -> Self {
        TpRuns::default()
    }

    /// Appends an entry.
    pub fn push(&mut self, entry: TpIncStep) {
        self.0.push(entry);
    }

    /// The entries a heap allocation holds room for: 0 while they are
    /// inline.
    pub fn heap_capacity(&self) -> usize {
        if self.0.spilled() { self.0.capacity() } else { 0 }
    }
}

impl Deref for TpRuns {
    type Target = [TpIncStep];
    fn deref(&self) -> &[TpIncStep] {
        &self.0
    }
}

impl DerefMut for TpRuns {
    fn deref_mut(&mut self) -> &mut [TpIncStep] {
        &mut self.0
    }
}

impl fmt::Debug for TpRuns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl serde::Serialize for TpRuns {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.as_slice().serialize(serializer)
    }
}

impl From<Vec<TpIncStep>> for TpRuns {
    fn from(entries: Vec<TpIncStep>) -> Self {
        TpRuns(SmallVec::from_vec(entries))
    }
}

impl FromIterator<TpIncStep> for TpRuns {
    fn from_iter<I: IntoIterator<Item = TpIncStep>>(entries: I) -> Self {
        TpRuns(entries.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a TpRuns {
    type Item = &'a TpIncStep;
    type IntoIter = std::slice::Iter<'a, TpIncStep>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl PartialEq<Vec<TpIncStep>> for TpRuns {
    fn eq(&self, other: &Vec<TpIncStep>) -> bool {
        self[..] == other[..]
    }
}

impl PartialEq<TpRuns> for Vec<TpIncStep> {
    fn eq(&self, other: &TpRuns) -> bool {
        self[..] == other[..]
    }
}

/// Run-length folds per-step `(m2s, s2m)` pairs: consecutive identical pairs
/// become one entry, split every [`REPEAT_MAX`] steps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folder {
    entries: TpRuns,
}

impl Folder {
    /// An empty folder.
    pub fn new() -> Self {
        Folder::default()
    }

    /// Appends `n` steps that each post `(m2s, s2m)`.
    pub fn push_n(&mut self, m2s: u32, s2m: u32, mut n: u64) {
        while n > 0 {
            match self.entries.last_mut() {
                Some(last) if last.m2s == m2s && last.s2m == s2m && last.repeat < REPEAT_MAX => {
                    let room = u64::from(REPEAT_MAX - last.repeat);
                    let take = room.min(n);
                    // `take` <= room <= u16::MAX.
                    last.repeat += take as u16;
                    n -= take;
                }
                _ => {
                    let take = n.min(u64::from(REPEAT_MAX));
                    self.entries.push(TpIncStep { m2s, s2m, repeat: take as u16 });
                    n -= take;
                }
            }
        }
    }

    /// Appends one step.
    pub fn push(&mut self, m2s: u32, s2m: u32) {
        self.push_n(m2s, s2m, 1);
    }

    /// The folded entries.
    pub fn finish(self) -> Vec<TpIncStep> {
        self.entries.to_vec()
    }

    /// The folded entries, as a record holds them.
    pub fn runs(self) -> TpRuns {
        self.entries
    }
}

/// Expands entries back into one `(m2s, s2m)` pair per step.
pub fn unfold(entries: &[TpIncStep]) -> impl Iterator<Item = (u32, u32)> + '_ {
    entries.iter().flat_map(|e| std::iter::repeat_n((e.m2s, e.s2m), usize::from(e.repeat)))
}
