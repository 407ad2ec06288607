//! Sets of contributing members, as the symbolic executor sees them.
//!
//! A buffer cell holds the set of group members whose contribution it
//! carries. Ring-shaped algorithms only ever build cyclic intervals of
//! members, so a set is a packed `u64`: empty, a cyclic interval stored
//! inline, two members apart stored inline (a permute-reduce's cell: its
//! own and its peer's), or a handle to an interned bitset for anything
//! else (direct exchanges, recursive halving). Unions are memoized, so a
//! pattern that folds the same two sets into many cells costs one real
//! union.

use super::action::Action;
use std::collections::HashMap;

/// A packed set handle.
pub(crate) type SetId = u64;

/// The empty set.
pub(crate) const EMPTY: SetId = 0;
const TAG_SHIFT: u32 = 62;
const TAG_INTERVAL: u64 = 1 << TAG_SHIFT;
const TAG_BITS: u64 = 2 << TAG_SHIFT;
/// Two members, not a cyclic interval: the lower in the low bits, the
/// higher where an interval keeps its length.
const TAG_PAIR: u64 = 3 << TAG_SHIFT;
const TAG_MASK: u64 = 3 << TAG_SHIFT;
const LEN_SHIFT: u32 = 32;
const LOW_MASK: u64 = 0xFFFF_FFFF;
const LEN_MASK: u64 = (1 << (TAG_SHIFT - LEN_SHIFT)) - 1;

/// Interned sets over the members `0..n` of one group.
pub(crate) struct Sets {
    n: u32,
    words: usize,
    bits: Vec<u64>,
    // The maps are memos, only ever looked up, never iterated: a handle is
    // the bitset's index in `bits`, so it depends on the order of calls,
    // not on the hasher.
    interned: HashMap<Box<[u64]>, u64>,
    unions: HashMap<(SetId, SetId), Result<SetId, u32>>,
    moved: HashMap<(SetId, u32), SetId>,
}

/// What a set is.
enum View<'a> {
    Empty,
    Interval { start: u32, len: u32 },
    Pair { low: u32, high: u32 },
    Bits(&'a [u64]),
}

impl Sets {
    /// Sets over `n` members.
    pub(crate) fn new(n: u32) -> Sets {
        Sets {
            n,
            words: (n as usize).div_ceil(64),
            bits: Vec::new(),
            interned: HashMap::new(),
            unions: HashMap::new(),
            moved: HashMap::new(),
        }
    }

    /// `{m}`.
    pub(crate) fn single(&self, m: u32) -> SetId {
        interval(m, 1)
    }

    /// Every member.
    pub(crate) fn full(&self) -> SetId {
        interval(0, self.n)
    }

    fn view(&self, s: SetId) -> View<'_> {
        match s & TAG_MASK {
            TAG_INTERVAL => View::Interval { start: (s & LOW_MASK) as u32, len: ((s >> LEN_SHIFT) & LEN_MASK) as u32 },
            TAG_BITS => {
                let at = (s & LOW_MASK) as usize * self.words;
                View::Bits(self.bits.get(at..at + self.words).unwrap_or(&[]))
            }
            TAG_PAIR => View::Pair { low: (s & LOW_MASK) as u32, high: ((s >> LEN_SHIFT) & LEN_MASK) as u32 },
            _ => View::Empty,
        }
    }

    fn to_bits(&self, s: SetId) -> Vec<u64> {
        let mut out = vec![0u64; self.words];
        match self.view(s) {
            View::Empty => {}
            View::Bits(b) => out.copy_from_slice(b),
            View::Pair { low, high } => {
                for m in [low, high] {
                    out[(m / 64) as usize] |= 1 << (m % 64);
                }
            }
            View::Interval { start, len } => {
                for j in 0..len {
                    let m = ((u64::from(start) + u64::from(j)) % u64::from(self.n)) as usize;
                    out[m / 64] |= 1 << (m % 64);
                }
            }
        }
        out
    }

    fn intern(&mut self, bits: Vec<u64>) -> SetId {
        let count: u32 = bits.iter().map(|w| w.count_ones()).sum();
        if count == 0 {
            return EMPTY;
        }
        if count == self.n {
            return self.full();
        }
        // Canonical form: a set that is a cyclic interval is stored as one,
        // so that equal sets always have equal handles.
        if let Some(start) = self.interval_start(&bits, count) {
            return interval(start, count);
        }
        if count == 2 {
            let mut members = (0..self.n).filter(|&m| bits[(m / 64) as usize] >> (m % 64) & 1 == 1);
            if let (Some(low), Some(high)) = (members.next(), members.next()) {
                return self.two(low, high);
            }
        }
        if let Some(&id) = self.interned.get(bits.as_slice()) {
            return id;
        }
        let index = (self.bits.len() / self.words.max(1)) as u64;
        self.bits.extend_from_slice(&bits);
        let id = TAG_BITS | index;
        self.interned.insert(bits.into_boxed_slice(), id);
        id
    }

    /// The start of the cyclic run of `count` members `bits` holds, if it
    /// is one run.
    fn interval_start(&self, bits: &[u64], count: u32) -> Option<u32> {
        let has = |m: u32| bits[(m / 64) as usize] >> (m % 64) & 1 == 1;
        let start = (0..self.n).find(|&m| has(m) && !has((m + self.n - 1) % self.n))?;
        (0..count).all(|j| has((start + j) % self.n)).then_some(start)
    }

    /// `a ∪ b`, or `Err(m)` naming a member both already hold.
    pub(crate) fn union(&mut self, a: SetId, b: SetId) -> Result<SetId, u32> {
        if a == EMPTY {
            return Ok(b);
        }
        if b == EMPTY {
            return Ok(a);
        }
        // Two intervals: a few comparisons, no memo needed. The ring
        // algorithms only ever take this path.
        if a & TAG_MASK == TAG_INTERVAL
            && b & TAG_MASK == TAG_INTERVAL
            && let Some(r) = self.union_intervals(a, b)
        {
            return r;
        }
        let key = if a <= b { (a, b) } else { (b, a) };
        if let Some(&r) = self.unions.get(&key) {
            return r;
        }
        let r = self.union_bits(a, b);
        self.unions.insert(key, r);
        r
    }

    /// `{a, b}` for two members, in its canonical form: a cyclic
    /// interval when they are neighbours (or every member), else a pair.
    fn two(&self, a: u32, b: u32) -> SetId {
        let (low, high) = (a.min(b), a.max(b));
        if low == high {
            interval(low, 1)
        } else if self.n == 2 {
            self.full()
        } else if high == low + 1 {
            interval(low, 2)
        } else if low == 0 && high == self.n - 1 {
            interval(high, 2)
        } else {
            TAG_PAIR | (u64::from(high) << LEN_SHIFT) | u64::from(low)
        }
    }

    /// The union of two intervals when it is an interval (or an overlap).
    fn union_intervals(&self, a: SetId, b: SetId) -> Option<Result<SetId, u32>> {
        let n = self.n;
        if let (View::Interval { start: s1, len: l1 }, View::Interval { start: s2, len: l2 }) =
            (self.view(a), self.view(b))
        {
            let ahead = |from: u32, to: u32| (to + n - from) % n;
            let d = ahead(s1, s2);
            if d < l1 {
                return Some(Err(s2));
            }
            if ahead(s2, s1) < l2 {
                return Some(Err(s1));
            }
            let joined = |start| if l1 + l2 == n { interval(0, n) } else { interval(start, l1 + l2) };
            if d == l1 {
                return Some(Ok(joined(s1)));
            }
            if ahead(s2, s1) == l2 {
                return Some(Ok(joined(s2)));
            }
            // Two members apart: a pair, no bitset.
            if (l1, l2) == (1, 1) {
                return Some(Ok(self.two(s1, s2)));
            }
        }
        None
    }

    /// The union as bitsets, interned.
    fn union_bits(&mut self, a: SetId, b: SetId) -> Result<SetId, u32> {
        let (x, y) = (self.to_bits(a), self.to_bits(b));
        if let Some((w, common)) = x.iter().zip(&y).map(|(p, q)| p & q).enumerate().find(|(_, c)| *c != 0) {
            return Err((w * 64) as u32 + common.trailing_zeros());
        }
        let merged = x.iter().zip(&y).map(|(p, q)| p | q).collect();
        Ok(self.intern(merged))
    }

    /// The set with every member `m` replaced by `m + g` (mod `n`).
    pub(crate) fn rotate(&mut self, s: SetId, g: u32) -> SetId {
        let n = self.n;
        match self.view(s) {
            View::Empty => EMPTY,
            View::Interval { len, .. } if len == n => s,
            View::Interval { start, len } => interval(((u64::from(start) + u64::from(g)) % u64::from(n)) as u32, len),
            View::Pair { low, high } => {
                let add = |m: u32| ((u64::from(m) + u64::from(g)) % u64::from(n)) as u32;
                self.two(add(low), add(high))
            }
            View::Bits(b) => {
                let mut out = vec![0u64; self.words];
                for m in (0..n).filter(|&m| b[(m / 64) as usize] >> (m % 64) & 1 == 1) {
                    let r = ((u64::from(m) + u64::from(g)) % u64::from(n)) as usize;
                    out[r / 64] |= 1 << (r % 64);
                }
                self.intern(out)
            }
        }
    }

    /// The set with every member `m` moved by `g` under `action`.
    pub(crate) fn translate(&mut self, s: SetId, g: u32, action: &Action) -> SetId {
        if action.is_cyclic() {
            return self.rotate(s, g);
        }
        if s == EMPTY || s == self.full() {
            return s;
        }
        match self.view(s) {
            // One member (an all-gather's every cell): where it moves.
            View::Interval { start, len: 1 } => return interval(action.add(start, g), 1),
            View::Interval { start, len } => {
                if let Some(moved) = action.move_interval(start, len, g) {
                    return interval(moved, len);
                }
            }
            View::Pair { low, high } => return self.two(action.add(low, g), action.add(high, g)),
            _ => {}
        }
        if let Some(&moved) = self.moved.get(&(s, g)) {
            return moved;
        }
        let bits = self.to_bits(s);
        let mut out = vec![0u64; self.words];
        for m in (0..self.n).filter(|&m| bits[(m / 64) as usize] >> (m % 64) & 1 == 1) {
            let r = action.add(m, g) as usize;
            out[r / 64] |= 1 << (r % 64);
        }
        let moved = self.intern(out);
        self.moved.insert((s, g), moved);
        moved
    }

    /// Members in the set, ascending.
    #[cfg(test)]
    pub(crate) fn members(&self, s: SetId) -> Vec<u32> {
        let bits = self.to_bits(s);
        (0..self.n).filter(|&m| bits[(m / 64) as usize] >> (m % 64) & 1 == 1).collect()
    }

    /// Members in `want` but not in `have`, and in `have` but not in `want`.
    pub(crate) fn difference(&self, have: SetId, want: SetId) -> (Vec<u32>, Vec<u32>) {
        let (h, w) = (self.to_bits(have), self.to_bits(want));
        let pick = |a: &[u64], b: &[u64]| -> Vec<u32> {
            (0..self.n).filter(|&m| (a[(m / 64) as usize] & !b[(m / 64) as usize]) >> (m % 64) & 1 == 1).collect()
        };
        (pick(&w, &h), pick(&h, &w))
    }
}

fn interval(start: u32, len: u32) -> SetId {
    TAG_INTERVAL | (u64::from(len) << LEN_SHIFT) | u64::from(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_intervals_stay_intervals() {
        let mut s = Sets::new(8);
        let a = s.single(6);
        let b = s.union(a, s.single(7)).unwrap();
        let c = s.union(b, s.single(0)).unwrap();
        assert_eq!(c & TAG_MASK, TAG_INTERVAL);
        assert_eq!(s.members(c), vec![0, 6, 7]);
        let d = s.union(s.single(5), c).unwrap();
        assert_eq!(s.members(d), vec![0, 5, 6, 7]);
    }

    #[test]
    fn overlaps_name_a_shared_member() {
        let mut s = Sets::new(8);
        let a = s.union(s.single(2), s.single(3)).unwrap();
        assert_eq!(s.union(a, s.single(3)), Err(3));
        let far = s.union(s.single(0), s.single(4)).unwrap();
        assert_eq!(far & TAG_MASK, TAG_PAIR);
        assert_eq!(s.union(far, s.single(4)), Err(4));
        assert_eq!(s.union(far, a).map(|x| s.members(x)), Ok(vec![0, 2, 3, 4]));
    }

    #[test]
    fn rotation_shifts_every_member() {
        let mut s = Sets::new(8);
        let run = s.union(s.single(6), s.single(7)).unwrap();
        let r = s.rotate(run, 3);
        assert_eq!(s.members(r), vec![1, 2]);
        let far = s.union(s.single(0), s.single(4)).unwrap();
        let r = s.rotate(far, 5);
        assert_eq!(s.members(r), vec![1, 5]);
        assert_eq!(s.rotate(s.full(), 5), s.full());
        assert_eq!(s.rotate(EMPTY, 5), EMPTY);
    }

    /// Moving a set under a two-level action moves each member, whichever
    /// path it takes (one member as itself, whole nodes as an interval,
    /// the rest as bits).
    #[test]
    fn translation_moves_every_member() {
        for (action, n) in [(Action::two_level(4, 12, false), 12), (Action::two_level(4, 16, true), 16)] {
            let mut s = Sets::new(n);
            for start in 0..n {
                for len in 1..n {
                    let mut set = EMPTY;
                    for j in 0..len {
                        set = s.union(set, s.single((start + j) % n)).unwrap();
                    }
                    for g in 0..n {
                        let moved = s.translate(set, g, &action);
                        let mut want: Vec<u32> = s.members(set).iter().map(|&m| action.add(m, g)).collect();
                        want.sort_unstable();
                        assert_eq!(s.members(moved), want, "{action:?}: [{start}, +{len}) by {g}");
                    }
                }
            }
        }
    }

    /// Two members apart are one inline pair whichever order they are
    /// joined in, neighbours an interval (across the wrap too); moved by
    /// rotation or a two-level action, a pair names its two members
    /// moved, in canonical form (the same handle as the moved members
    /// joined afresh); joined with a third, it is what the bits say.
    #[test]
    fn pairs_are_canonical_and_move_their_members() {
        for (action, n) in
            [(Action::cyclic(7), 7), (Action::two_level(4, 12, false), 12), (Action::two_level(4, 16, true), 16)]
        {
            let mut s = Sets::new(n);
            let mut pairs = 0;
            for a in 0..n {
                for b in 0..n {
                    if a == b {
                        continue;
                    }
                    let set = s.union(s.single(a), s.single(b)).unwrap();
                    assert_eq!(set, s.union(s.single(b), s.single(a)).unwrap());
                    let neighbours = (a + 1) % n == b || (b + 1) % n == a;
                    assert_eq!(set & TAG_MASK, if neighbours { TAG_INTERVAL } else { TAG_PAIR }, "{{{a}, {b}}}");
                    pairs += usize::from(!neighbours);
                    let mut both = vec![a, b];
                    both.sort_unstable();
                    assert_eq!(s.members(set), both);
                    for g in 0..n {
                        let (x, y) = (action.add(a, g), action.add(b, g));
                        let afresh = s.union(s.single(x), s.single(y)).unwrap();
                        assert_eq!(s.translate(set, g, &action), afresh, "{action:?}: {{{a}, {b}}} by {g}");
                        let (x, y) = ((a + g) % n, (b + g) % n);
                        assert_eq!(s.rotate(set, g), s.union(s.single(x), s.single(y)).unwrap());
                    }
                    let third = (0..n).find(|m| !both.contains(m)).unwrap();
                    let three = s.union(set, s.single(third)).unwrap();
                    let mut want = vec![a, b, third];
                    want.sort_unstable();
                    assert_eq!(s.members(three), want);
                    assert_eq!(s.union(set, s.single(a)), Err(a));
                }
            }
            assert!(pairs > n as usize * 2, "{pairs}");
        }
    }

    #[test]
    fn full_sets_are_canonical() {
        let mut s = Sets::new(4);
        let mut acc = EMPTY;
        for m in [0, 2, 1, 3] {
            acc = s.union(acc, s.single(m)).unwrap();
        }
        assert_eq!(acc, s.full());
        let mut ring = s.single(2);
        for m in [3, 0, 1] {
            ring = s.union(ring, s.single(m)).unwrap();
        }
        assert_eq!(ring, s.full());
        assert_eq!(s.difference(s.single(1), s.full()), (vec![0, 2, 3], vec![]));
    }
}
