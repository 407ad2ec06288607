//! Short lists held inline: a phase's narrowing scopes and a plan's legs
//! have at most a few entries, and `Auto` plans a dozen candidates per
//! collective, so a heap vector for each would cost an allocation and a
//! free per phase and per plan for nothing (`docs/cost-model-revisions.md`).

use serde::{Serialize, Serializer};

/// A list of `Copy` items that reads as a slice: up to `N` items held
/// inline, none or more than `N` in a vector (an empty vector does not
/// allocate), so it never allocates for the short lists the algorithms
/// make and still takes any length. Compared, printed (`{:?}`) and
/// serialized as the slice it holds, exactly as a `Vec` of the same items.
#[derive(Clone)]
pub struct ShortList<T: Copy, const N: usize>(Repr<T, N>);

/// How a [`ShortList`] holds its items.
#[derive(Clone)]
enum Repr<T: Copy, const N: usize> {
    /// `len` items, in `1..=N`: the first `len` of `items` (the rest
    /// repeat the first item, and are never read).
    Inline { len: usize, items: [T; N] },
    /// No items (without an allocation), or more than `N`.
    Heap(Vec<T>),
}

impl<T: Copy, const N: usize> ShortList<T, N> {
    /// The empty list (no allocation).
    pub const fn new() -> Self {
        ShortList(Repr::Heap(Vec::new()))
    }

    /// A list of `items`, inline when there are `1..=N` of them.
    pub fn from_slice(items: &[T]) -> Self {
        match items {
            [] => Self::new(),
            [first, ..] if items.len() <= N => {
                let mut inline = [*first; N];
                // Item by item: a list this short is copied faster so than
                // by a call to `memcpy`.
                for (slot, &item) in inline.iter_mut().zip(items) {
                    *slot = item;
                }
                ShortList(Repr::Inline { len: items.len(), items: inline })
            }
            _ => ShortList(Repr::Heap(items.to_vec())),
        }
    }

    /// The items, as a slice.
    pub fn as_slice(&self) -> &[T] {
        match &self.0 {
            // `len` never exceeds `N` (`from_iter` keeps it so).
            Repr::Inline { len, items } => items.get(..*len).unwrap_or(&[]),
            Repr::Heap(items) => items,
        }
    }
}

impl<T: Copy, const N: usize> Default for ShortList<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy, const N: usize> FromIterator<T> for ShortList<T, N> {
    /// Fills the inline array while the items fit, and moves them to a
    /// vector with the rest at the first that does not.
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let Some(first) = iter.next() else { return Self::new() };
        let mut items = [first; N];
        let mut len = 0;
        for item in std::iter::once(first).chain(iter.by_ref()) {
            match items.get_mut(len) {
                Some(slot) => {
                    *slot = item;
                    len += 1;
                }
                None => {
                    let mut spilled = items.to_vec();
                    spilled.push(item);
                    spilled.extend(iter);
                    return ShortList(Repr::Heap(spilled));
                }
            }
        }
        ShortList(Repr::Inline { len, items })
    }
}

impl<T: Copy, const N: usize> std::ops::Deref for ShortList<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<'a, T: Copy, const N: usize> IntoIterator for &'a ShortList<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T: Copy + PartialEq, const N: usize> PartialEq for ShortList<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + Eq, const N: usize> Eq for ShortList<T, N> {}

impl<T: Copy + PartialEq, const N: usize> PartialEq<ShortList<T, N>> for Vec<T> {
    fn eq(&self, other: &ShortList<T, N>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + std::fmt::Debug, const N: usize> std::fmt::Debug for ShortList<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl<T: Copy + Serialize, const N: usize> Serialize for ShortList<T, N> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length from none to past the inline room reads back as the
    /// items given, equal to, printed and serialized as their `Vec`; the
    /// short ones are held inline, the empty and long ones in a vector.
    #[test]
    fn short_lists_read_as_their_items() {
        for n in 0..6u32 {
            let items: Vec<u32> = (10..10 + n).collect();
            let list: ShortList<u32, 3> = ShortList::from_slice(&items);
            assert_eq!(list.as_slice(), items.as_slice(), "{n}");
            assert!(items == list, "{n}");
            assert_eq!(format!("{list:?}"), format!("{items:?}"), "{n}");
            assert_eq!(serde_json::to_string(&list).ok(), serde_json::to_string(&items).ok(), "{n}");
            assert_eq!(list.iter().count(), items.len(), "{n}");
            let inline = matches!(list.0, Repr::Inline { .. });
            assert_eq!(inline, (1..=3).contains(&n), "{n}");
            if let Repr::Heap(v) = &list.0
                && n == 0
            {
                assert_eq!(v.capacity(), 0, "the empty list allocates nothing");
            }
        }
        // Lists of the same items are equal however they were made.
        let a: ShortList<u32, 3> = ShortList::from_slice(&[1, 2]);
        let b: ShortList<u32, 3> = [1, 2].into_iter().collect();
        assert_eq!(a, b);
        assert_ne!(a, ShortList::from_slice(&[1]));
        assert_ne!(a, ShortList::from_slice(&[1, 2, 3]));
    }
}
