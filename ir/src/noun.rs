//! Counted nouns in messages: `1 rank`, `2 ranks`, `1 entry`, `3 entries`.
//!
//! Every message of ccc that puts a number before a noun (the compile
//! summary, validation problems, decode errors, the diagnosis) agrees the
//! noun with its number through [`count`] (number and noun) or [`noun`]
//! (the noun alone, for `16 ranks per node` written as `{n} {noun} per
//! node`), so that "1 ranks" cannot be written in one place and fixed in
//! another.
//!
//! The plural is English's regular one, which covers every noun ccc counts:
//! `-y` after a consonant becomes `-ies` (`entry`), `-s`, `-x`, `-ch` and
//! `-sh` take `-es`, anything else takes `-s` (`TOP_SP` → `TOP_SPs`). In a
//! noun of several words the last is the one that agrees (`peer pair`).

use std::fmt;

/// A number a noun can agree with: any unsigned or signed integer.
pub trait Number: Copy + fmt::Display {
    /// Is it exactly one (the only number English counts in the singular)?
    fn is_one(self) -> bool;
}

macro_rules! number {
    ($($t:ty),*) => {$(
        impl Number for $t {
            fn is_one(self) -> bool {
                self == 1
            }
        }
    )*};
}
number!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

/// A borrowed number (a field of an error that `thiserror` binds by
/// reference) counts as the number.
impl<N: Number> Number for &N {
    fn is_one(self) -> bool {
        (*self).is_one()
    }
}

/// `n` and `singular` agreeing with it: `count(1, "rank")` displays
/// `1 rank`, `count(3, "entry")` displays `3 entries`.
pub fn count<N: Number>(n: N, singular: &str) -> Count<'_, N> {
    Count { n, noun: noun(n, singular) }
}

/// `singular`, or its plural when `n` is not one: `noun(16, "rank")`
/// displays `ranks`.
pub fn noun<N: Number>(n: N, singular: &str) -> Noun<'_> {
    Noun { singular, plural: !n.is_one() }
}

/// A number and its noun; see [`count`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count<'a, N> {
    n: N,
    noun: Noun<'a>,
}

impl<N: Number> fmt::Display for Count<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.n, self.noun)
    }
}

/// A noun in the number it agrees with; see [`noun`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Noun<'a> {
    singular: &'a str,
    plural: bool,
}

impl fmt::Display for Noun<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.singular;
        if !self.plural {
            return f.write_str(s);
        }
        let consonant_y = s.strip_suffix('y').filter(|stem| !stem.ends_with(['a', 'e', 'i', 'o', 'u']));
        match consonant_y {
            Some(stem) if !stem.is_empty() => write!(f, "{stem}ies"),
            _ if s.ends_with(['s', 'x']) || s.ends_with("ch") || s.ends_with("sh") => write!(f, "{s}es"),
            _ => write!(f, "{s}s"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_number_plural() {
        assert_eq!(count(1u32, "rank").to_string(), "1 rank");
        assert_eq!(count(0usize, "rank").to_string(), "0 ranks");
        assert_eq!(count(2u64, "rank").to_string(), "2 ranks");
        assert_eq!(count(-1i32, "step").to_string(), "-1 steps");
        assert_eq!(count(u64::MAX, "byte").to_string(), format!("{} bytes", u64::MAX));
        assert_eq!(noun(16u8, "rank").to_string(), "ranks");
        assert_eq!(noun(1u8, "rank").to_string(), "rank");
    }

    #[test]
    fn every_noun_ccc_counts_takes_its_plural() {
        let cases = [
            ("rank", "ranks"),
            ("step", "steps"),
            ("node", "nodes"),
            ("group", "groups"),
            ("record", "records"),
            ("file", "files"),
            ("chain", "chains"),
            ("collective", "collectives"),
            ("phase", "phases"),
            ("channel", "channels"),
            ("entry", "entries"),
            ("TOP_SP", "TOP_SPs"),
            ("transfer", "transfers"),
            ("semaphore increment", "semaphore increments"),
            ("peer pair", "peer pairs"),
            ("key", "keys"),
            ("pass", "passes"),
            ("box", "boxes"),
            ("patch", "patches"),
            ("y", "ys"),
        ];
        for (one, many) in cases {
            assert_eq!(count(1u32, one).to_string(), format!("1 {one}"));
            assert_eq!(count(2u32, one).to_string(), format!("2 {many}"));
        }
    }
}
