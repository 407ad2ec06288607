//! Scopes: the mixed-radix digits of a group index (local, node, pod) and the subsets of a group that share all but some of them.

use serde::Serialize;

/// The mixed-radix decomposition of a group index:
/// `i = local + per_node * (node + nodes_per_pod * pod)`.
///
/// For a group that is not listed node by node, `[n, 1, 1]`: only the whole
/// group is ever a scope then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Radices(pub [u32; DIGITS]);

/// Digits of a group index: local (digit 0), node within pod, pod.
pub const DIGITS: usize = 3;
/// Digit of the member's node inside its pod.
pub const DIGIT_NODE: u8 = 1;
/// Digit of the member's pod.
pub const DIGIT_POD: u8 = 2;

impl Radices {
    /// The product of the radices of digits `lo..hi` (1 when none).
    ///
    /// Digit by digit rather than over a slice of the array: it is asked
    /// twice each time a scope is placed around a member (every phase of
    /// every member a prediction or a lowering walks), and the slice's
    /// bounds checks cost as much as the product.
    #[inline]
    pub fn span(&self, lo: u8, hi: u8) -> u32 {
        let [local, node, pod] = self.0;
        let radix = |digit: u8, r: u32| if lo <= digit && digit < hi { r } else { 1 };
        radix(0, local) * radix(DIGIT_NODE, node) * radix(DIGIT_POD, pod)
    }
}

/// A subset of a group: the members that share every digit outside
/// `lo..hi` with a given member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Scope {
    /// First varying digit.
    pub lo: u8,
    /// One past the last varying digit.
    pub hi: u8,
}

impl Scope {
    /// The whole group.
    pub const WHOLE: Scope = Scope { lo: 0, hi: DIGITS as u8 };

    /// The part of this scope inside one node.
    pub fn node_part(self) -> Scope {
        Scope { lo: self.lo, hi: self.hi.min(DIGIT_NODE).max(self.lo) }
    }
    /// The part of this scope across nodes.
    pub fn cross_part(self) -> Scope {
        Scope { lo: self.lo.max(DIGIT_NODE).min(self.hi), hi: self.hi }
    }
    /// The part of this scope inside one pod.
    pub fn pod_part(self) -> Scope {
        Scope { lo: self.lo, hi: self.hi.min(DIGIT_POD).max(self.lo) }
    }
    /// The part of this scope across pods.
    pub fn cross_pod_part(self) -> Scope {
        Scope { lo: self.lo.max(DIGIT_POD).min(self.hi), hi: self.hi }
    }

    /// How many members the scope has.
    pub fn size(self, radices: &Radices) -> u32 {
        radices.span(self.lo, self.hi)
    }

    /// The scope around group member `index`: its members are
    /// `base + q * stride` for `q` in `0..k`, and `index` is at `q = pos`.
    #[inline]
    pub fn around(self, radices: &Radices, index: u32) -> ScopeInstance {
        self.placer(radices).around(index)
    }

    /// The scope's stride and size under `radices`, to place it around
    /// many members ([`ScopePlacer::around`]) without recomputing them.
    #[inline]
    pub fn placer(self, radices: &Radices) -> ScopePlacer {
        ScopePlacer { stride: radices.span(0, self.lo), k: radices.span(self.lo, self.hi) }
    }
}

/// A scope's stride and size under one group's radices ([`Scope::placer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopePlacer {
    stride: u32,
    k: u32,
}

impl ScopePlacer {
    /// [`Scope::around`] group member `index`.
    #[inline]
    pub fn around(self, index: u32) -> ScopeInstance {
        let ScopePlacer { stride, k } = self;
        let pos = (index / stride) % k;
        ScopeInstance { base: index - pos * stride, stride, k, pos }
    }
}

/// A scope placed around one member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopeInstance {
    /// Group index of the scope's first member.
    pub base: u32,
    /// Distance between consecutive members' group indices.
    pub stride: u32,
    /// Members in the scope.
    pub k: u32,
    /// The member's position in the scope.
    pub pos: u32,
}

impl ScopeInstance {
    /// Group index of the member at position `q`.
    pub fn member(&self, q: u32) -> u32 {
        self.base + (q % self.k) * self.stride
    }
}
