//! What `Auto` keeps between collectives: [`Table`], the store behind
//! validation's memo of answers, events spent and listings, and
//! [`AutoCache`], which carries that memo from one validation to the next
//! ([`super::validate_cached`]).
//!
//! A table holds at most a capacity of entries, the least recently used
//! dropped first, except that an entry a collective of the program being
//! validated keeps for a later collective of the same program (what
//! [`super::validate`] keeps) is pinned until the program ends: a cache
//! never makes a program search more often than `validate` does. When a
//! program ends ([`Table::release`]) its pins lapse and the table is
//! trimmed back to the capacity. Only entries not pinned are in the age
//! index, so finding the one to drop never walks past pinned ones.

use super::Memo;
use std::collections::BTreeMap;
use std::fmt;

/// Entries of keys `K` and values `V`, found by bucket `B`, then by key.
pub(super) struct Table<B, K, V> {
    buckets: BTreeMap<B, Vec<Entry<K, V>>>,
    /// The last use of every entry not pinned (a stamp unique in the
    /// table), least recent first, with its bucket: the entry is the one
    /// of that bucket last used at that stamp. Pinned entries are left
    /// out, so the first is always the one to drop.
    ages: BTreeMap<u64, B>,
    /// The buckets of the entries pinned in the program being validated
    /// (a bucket may repeat), whose entries go back into `ages` when it
    /// ends.
    pinned: Vec<B>,
    /// Entries held, over every bucket.
    pub(super) len: usize,
}

/// One entry of a [`Table`].
struct Entry<K, V> {
    /// When it was last used (made or found).
    used: u64,
    /// Whether it is pinned until the program being validated ends.
    pinned: bool,
    key: K,
    value: V,
}

impl<B, K, V> Default for Table<B, K, V> {
    fn default() -> Self {
        Table { buckets: BTreeMap::new(), ages: BTreeMap::new(), pinned: Vec::new(), len: 0 }
    }
}

impl<B: Ord + Clone, K: PartialEq, V> Table<B, K, V> {
    /// Whether any entry is in `bucket`.
    pub(super) fn has_bucket(&self, bucket: &B) -> bool {
        self.buckets.contains_key(bucket)
    }

    /// The value kept under `bucket` for a key `key` accepts, marked used
    /// at `now` (a stamp not used before) and, with `pin`, pinned until
    /// the program ends.
    pub(super) fn get_mut(&mut self, bucket: &B, key: impl Fn(&K) -> bool, now: u64, pin: bool) -> Option<&mut V> {
        let entry = self.buckets.get_mut(bucket)?.iter_mut().find(|e| key(&e.key))?;
        if !entry.pinned {
            self.ages.remove(&entry.used);
            if pin {
                entry.pinned = true;
                self.pinned.push(bucket.clone());
            } else {
                self.ages.insert(now, bucket.clone());
            }
        }
        entry.used = now;
        Some(&mut entry.value)
    }

    /// Keeps `value` under `bucket` and `key` (not held yet), used at
    /// `now` (a stamp not used before). With `pin`, it is kept and pinned
    /// until the program ends; without, only within `capacity`, dropping
    /// the least recently used entry not pinned to make room, or not kept
    /// when every entry held is pinned (or the capacity is 0).
    pub(super) fn insert(&mut self, bucket: B, key: K, value: V, now: u64, capacity: usize, pin: bool) {
        if !pin && self.len >= capacity && !self.drop_least_used() {
            return;
        }
        if pin {
            self.pinned.push(bucket.clone());
        } else {
            self.ages.insert(now, bucket.clone());
        }
        self.buckets.entry(bucket).or_default().push(Entry { used: now, pinned: pin, key, value });
        self.len += 1;
    }

    /// Ends the program: every pin lapses, and the least recently used
    /// entries are dropped until at most `capacity` are held.
    pub(super) fn release(&mut self, capacity: usize) {
        let mut pinned = std::mem::take(&mut self.pinned);
        pinned.sort_unstable();
        pinned.dedup();
        for bucket in pinned {
            let Some(entries) = self.buckets.get_mut(&bucket) else { continue };
            for entry in entries.iter_mut().filter(|e| e.pinned) {
                entry.pinned = false;
                self.ages.insert(entry.used, bucket.clone());
            }
        }
        while self.len > capacity && self.drop_least_used() {}
    }

    /// Drops the least recently used entry not pinned; `false` when there
    /// is none (every entry held is pinned, or none is held).
    fn drop_least_used(&mut self) -> bool {
        let Some((used, bucket)) = self.ages.pop_first() else { return false };
        if let Some(entries) = self.buckets.get_mut(&bucket)
            && let Some(i) = entries.iter().position(|e| e.used == used)
        {
            entries.remove(i);
            self.len -= 1;
            if entries.is_empty() {
                self.buckets.remove(&bucket);
            }
        }
        true
    }
}

/// What `Auto` keeps between the programs [`super::validate_cached`]
/// validates: for each distinct collective met, its candidates planned
/// with every value costed of them and the answers found; what each
/// collective spends of the mesh events; and whole `Auto`'s listings.
///
/// An answer depends on the collective (op, dtype, reduction, count,
/// channels, groups, root, peers, counts, `model:`, its algorithm: whole
/// `Auto` or which legs are left to it), the machine (arch, topology,
/// barrier, send credits) and the mesh events the collectives before it
/// spend. An entry is reused only when all of them are equal (the events
/// spent through the range over which its choice stands), so a cache
/// never changes what validation returns: only how long it takes.
///
/// Each of its three tables holds at most [`AutoCache::capacity`] entries
/// between validations, the least recently used dropped first. The
/// capacity counts entries, not bytes: an entry keeps its collective's
/// plans (about 34 KiB for an all-reduce of 32 ranks, 86 KiB at 65,536,
/// `docs/cost-model.md` §4), its key, which holds an AllToAllV's counts
/// and a permute's peers, and an answer for each range of mesh events
/// spent before it that it was asked at (at most one per value of the
/// events spent; one, for a collective always first in its program).
/// While one program is validated, the entries it keeps for its own later
/// collectives (what [`super::validate`] keeps) are pinned: held beyond
/// the capacity, never dropped for another, so a cache never makes a
/// program search more often than `validate` does; when every entry held
/// is pinned, a new one is not kept.
///
/// `Send`, not shared: keep one per thread, or lock it (validations
/// through one lock then take turns).
pub struct AutoCache {
    pub(super) memo: Memo,
    pub(super) capacity: usize,
}

// A cache may move to another thread (the Python binding locks one for
// every thread): this does not compile if it cannot.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<AutoCache>();
};

impl AutoCache {
    /// Entries each table keeps by default: a thousand distinct
    /// collectives, far more than a training step has.
    pub const DEFAULT_CAPACITY: usize = 1024;

    /// An empty cache keeping [`AutoCache::DEFAULT_CAPACITY`] entries per
    /// table.
    #[must_use]
    pub fn new() -> AutoCache {
        AutoCache::with_capacity(Self::DEFAULT_CAPACITY)
    }

    /// An empty cache keeping at most `capacity` entries per table between
    /// validations (0 keeps nothing: every validation searches as
    /// [`super::validate`] does).
    #[must_use]
    pub fn with_capacity(capacity: usize) -> AutoCache {
        AutoCache { memo: Memo::default(), capacity }
    }

    /// The most entries each table keeps between validations.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The distinct collectives whose `Auto` answers are kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.memo.answers.len
    }

    /// Whether no `Auto` answer is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops everything kept.
    pub fn clear(&mut self) {
        self.memo = Memo::default();
    }

    /// The entries each table holds: answers, events spent, listings.
    #[cfg(test)]
    pub(super) fn table_lens(&self) -> [usize; 3] {
        [self.memo.answers.len, self.memo.spent.len, self.memo.listed.len]
    }
}

impl Default for AutoCache {
    /// [`AutoCache::new`].
    fn default() -> Self {
        AutoCache::new()
    }
}

impl fmt::Debug for AutoCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AutoCache")
            .field("answers", &self.memo.answers.len)
            .field("spent", &self.memo.spent.len)
            .field("listed", &self.memo.listed.len)
            .field("capacity", &self.capacity)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl<B: Ord + Clone, K: PartialEq, V> Table<B, K, V> {
        /// Asserts that `ages` names exactly the entries not pinned, each
        /// at its last use, and that `len` counts every entry.
        fn assert_consistent(&self) {
            let entries: Vec<&Entry<K, V>> = self.buckets.values().flatten().collect();
            assert_eq!(entries.len(), self.len);
            let unpinned: Vec<u64> = entries.iter().filter(|e| !e.pinned).map(|e| e.used).collect();
            assert_eq!(unpinned.len(), self.ages.len());
            for used in unpinned {
                let bucket = &self.ages[&used];
                assert!(self.buckets[bucket].iter().any(|e| e.used == used && !e.pinned));
            }
        }

        /// Whether an entry of `key` is held under `bucket` (without
        /// marking it used).
        fn holds(&self, bucket: &B, key: &K) -> bool {
            self.buckets.get(bucket).is_some_and(|es| es.iter().any(|e| e.key == *key))
        }
    }

    /// The least recently used entry not pinned goes first, even when
    /// pinned ones are older; pinned entries stay past the capacity until
    /// their program ends, and the table is trimmed then.
    #[test]
    fn tables_drop_the_least_recently_used_entry_not_pinned() {
        let mut t: Table<u8, u8, &str> = Table::default();
        t.insert(0, 0, "a", 1, 2, false);
        t.insert(0, 1, "b", 2, 2, false);
        assert!(t.get_mut(&0, |&k| k == 0, 3, false).is_some()); // "a" used after "b"
        t.insert(1, 2, "c", 4, 2, false); // drops "b"
        assert!(!t.holds(&0, &1) && t.holds(&0, &0) && t.len == 2);
        t.assert_consistent();
        // Pinned: kept past the capacity.
        t.insert(2, 3, "d", 5, 2, true);
        t.insert(2, 4, "e", 6, 2, true);
        assert_eq!(t.len, 4);
        t.assert_consistent();
        // "a" and "c" used after the pinned ones: "a" is the least
        // recently used entry not pinned, and goes, not "d" or "e".
        assert!(t.get_mut(&0, |&k| k == 0, 7, false).is_some());
        assert!(t.get_mut(&1, |&k| k == 2, 8, false).is_some());
        t.insert(3, 5, "f", 9, 2, false);
        assert!(!t.holds(&0, &0) && t.holds(&2, &3) && t.holds(&2, &4) && t.len == 4);
        t.assert_consistent();
        // A pinned entry found again stays pinned.
        assert!(t.get_mut(&2, |&k| k == 4, 10, false).is_some());
        t.assert_consistent();
        // The program ends: the pins lapse; trimmed to 2, least used
        // first: "d" (5), "c" (8), "f" (9), "e" (10) keep "f" and "e".
        t.release(2);
        t.assert_consistent();
        assert_eq!(t.len, 2);
        assert!(t.holds(&3, &5) && t.holds(&2, &4));
        // A capacity of 0 keeps only what is pinned, and nothing for long.
        let mut none: Table<u8, u8, &str> = Table::default();
        none.insert(0, 0, "x", 1, 0, false);
        none.insert(0, 1, "y", 2, 0, true);
        none.insert(0, 2, "z", 3, 0, false); // every entry held is pinned
        assert_eq!((none.len, none.ages.len()), (1, 0));
        none.assert_consistent();
        none.release(0);
        assert_eq!((none.len, none.buckets.len(), none.ages.len()), (0, 0, 0));
    }
}
