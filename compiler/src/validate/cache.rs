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
//! trimmed back to the capacity.

use super::Memo;
use std::collections::BTreeMap;
use std::fmt;

/// Entries of keys `K` and values `V`, found by bucket `B`, then by key.
pub(super) struct Table<B, K, V> {
    buckets: BTreeMap<B, Vec<Entry<K, V>>>,
    /// Every entry's last use (a stamp unique in the table), oldest
    /// first, with its bucket: the entry is the one of that bucket last
    /// used at that stamp.
    ages: BTreeMap<u64, B>,
    /// Entries held, over every bucket.
    pub(super) len: usize,
    /// The program being validated: an entry pinned in it is not dropped
    /// before it ends.
    program: u64,
    /// Whether entries are ever dropped (an [`AutoCache`]'s tables): only
    /// then are their uses tracked in `ages`. One program validated alone
    /// keeps every entry it makes, all pinned.
    bounded: bool,
}

/// One entry of a [`Table`].
struct Entry<K, V> {
    /// When it was last used (made or found).
    used: u64,
    /// The program in which it was last pinned, if any (`u64::MAX`:
    /// never): pinned while that program is being validated.
    pinned_in: u64,
    key: K,
    value: V,
}

/// An entry never pinned.
const NEVER: u64 = u64::MAX;

impl<B, K, V> Table<B, K, V> {
    /// An empty table whose entries are never dropped.
    pub(super) fn unbounded() -> Self {
        Table { buckets: BTreeMap::new(), ages: BTreeMap::new(), len: 0, program: 0, bounded: false }
    }

    /// An empty table whose least recently used entries are dropped past
    /// a capacity.
    pub(super) fn bounded() -> Self {
        Table { bounded: true, ..Table::unbounded() }
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
        if self.bounded {
            self.ages.remove(&entry.used);
            self.ages.insert(now, bucket.clone());
        }
        entry.used = now;
        if pin {
            entry.pinned_in = self.program;
        }
        Some(&mut entry.value)
    }

    /// Keeps `value` under `bucket` and `key` (not held yet), used at
    /// `now` (a stamp not used before). With `pin`, it is kept and pinned
    /// until the program ends; without, only within `capacity`, dropping
    /// the least recently used entry not pinned to make room, or not kept
    /// when every entry is pinned (or the capacity is 0).
    pub(super) fn insert(&mut self, bucket: B, key: K, value: V, now: u64, capacity: usize, pin: bool) {
        if !pin && self.len >= capacity && !self.drop_least_used() {
            return;
        }
        let pinned_in = if pin { self.program } else { NEVER };
        if self.bounded {
            self.ages.insert(now, bucket.clone());
        }
        self.buckets.entry(bucket).or_default().push(Entry { used: now, pinned_in, key, value });
        self.len += 1;
    }

    /// Ends the program: every pin lapses, and the least recently used
    /// entries are dropped until at most `capacity` are held.
    pub(super) fn release(&mut self, capacity: usize) {
        self.program += 1;
        while self.len > capacity && self.drop_least_used() {}
    }

    /// Drops the least recently used entry not pinned; `false` when every
    /// entry is pinned (or none is held).
    fn drop_least_used(&mut self) -> bool {
        let program = self.program;
        let found = self.ages.iter().find_map(|(&used, bucket)| {
            let entries = self.buckets.get(bucket)?;
            let i = entries.iter().position(|e| e.used == used)?;
            (entries[i].pinned_in != program).then(|| (used, bucket.clone(), i))
        });
        let Some((used, bucket, i)) = found else { return false };
        self.ages.remove(&used);
        if let Some(entries) = self.buckets.get_mut(&bucket) {
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
/// `docs/cost-model.md` §4) and its key, which holds an AllToAllV's
/// counts and a permute's peers. While one program is validated, the
/// entries it keeps for its own later collectives (what [`super::validate`]
/// keeps) are held beyond the capacity, so a cache never makes a program
/// search more often than `validate` does.
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
        AutoCache { memo: Memo::bounded(), capacity }
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
        self.memo = Memo::bounded();
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

    /// The least recently used entry goes first, a pinned one only after
    /// its program ends, and a table over its capacity is trimmed then.
    #[test]
    fn tables_drop_the_least_recently_used_entry_not_pinned() {
        let mut t: Table<u8, u8, &str> = Table::bounded();
        t.insert(0, 0, "a", 1, 2, false);
        t.insert(0, 1, "b", 2, 2, false);
        assert!(t.get_mut(&0, |&k| k == 0, 3, false).is_some()); // "a" used after "b"
        t.insert(1, 2, "c", 4, 2, false); // drops "b"
        assert!(t.get_mut(&0, |&k| k == 1, 5, false).is_none());
        assert_eq!(t.len, 2);
        // Pinned: kept past the capacity, and not dropped for others.
        t.insert(2, 3, "d", 6, 2, true);
        t.insert(2, 4, "e", 7, 2, true);
        assert_eq!(t.len, 4);
        t.insert(3, 5, "f", 8, 2, false); // drops "a", the least used not pinned
        assert_eq!(t.len, 4);
        assert!(t.get_mut(&0, |&k| k == 0, 9, false).is_none());
        assert!(t.get_mut(&1, |&k| k == 2, 10, false).is_some()); // "c" now newer than "f"
        // The program ends: the pins lapse; trimmed to 2, least used first.
        t.release(2);
        assert_eq!(t.len, 2);
        let held: Vec<&str> = [(1, 2), (2, 3), (2, 4), (3, 5)]
            .iter()
            .filter_map(|&(b, k)| t.get_mut(&b, |&x| x == k, 20 + u64::from(k), false).map(|v| *v))
            .collect();
        assert_eq!(held, ["c", "f"]);
        // A capacity of 0 keeps only what is pinned.
        let mut none: Table<u8, u8, &str> = Table::bounded();
        none.insert(0, 0, "x", 1, 0, false);
        none.insert(0, 1, "y", 2, 0, true);
        assert_eq!(none.len, 1);
        none.release(0);
        assert_eq!((none.len, none.buckets.len(), none.ages.len()), (0, 0, 0));
    }
}
