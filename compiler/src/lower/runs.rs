//! Lowering by records: each phase's `tp_inc_steps` runs from its pattern,
//! without walking its steps.
//!
//! What a step posts on a TOP_SP is the descriptors of the pieces it sends
//! and receives. [`DescTable`](crate::schedule::DescTable) prices a block
//! by its size alone, and block sizes differ only by one element, below
//! position `big_below` ([`crate::schedule::Layout`]). A ring phase of
//! scope `k` cuts its universe into `k` interleaved pieces; piece `q` holds
//! universe positions `q, q + k, ...`, so when `L` of the universe's
//! positions lie below `big_below`, pieces `0..r` (`r = L mod k`) hold one
//! big block more than pieces `r..k`: two weights, heavy and light.
//!
//! Each ring pattern sends and receives pieces along arithmetic sequences:
//!
//! | pattern | steps | sent piece at step `t` | received piece |
//! |---|---|---|---|
//! | reduce-scatter | `0..k-1` | `p-t-1` (and `p+t+1` ccw) | `p-t-2` (`p+t+2`) |
//! | all-gather | `0..k-1` | `p-t` (`p+t`) | `p-t-1` (`p+t+1`) |
//! | fused all-reduce | `0..k-1`, then `k-1..2k-2` | RS, then AG at `t-k+1` | likewise |
//! | broadcast / reduce, chain position `j` | send `j..j+k` (`j ≤ k-2`), receive `j-1..j-1+k` (`j ≥ 1`) | `t-j` | `t-j+1` |
//!
//! (`p` the member's scope position, all mod `k`; broadcast's chain starts
//! at the root, reduce's just after it.) Between the places where a window
//! opens or closes or a sequence enters or leaves the heavy pieces `0..r`,
//! every step posts the same: those places split the phase into at most a
//! few segments, one step of each is generated and counted, and the count
//! is folded in for the segment's length. The ring all-to-all posts the
//! same every step after the first (its step 0 also copies locally) when
//! every block costs the same. Everything else is walked step by step:
//! one-step phases, and the all-to-all of AllToAllV, whose per-pair sizes
//! are a spec of `n²` counts anyway.

use super::{LowerError, Lowering, PhaseSink, plan_phase_is_mesh};
use crate::schedule::{Phase, PhaseInstance, PhaseKind};

/// Every phase of `l`'s collective, posted run by run into `emit`.
pub(super) fn collective(l: &Lowering<'_>, emit: &mut PhaseSink<'_>) -> Result<(), LowerError> {
    let plan = l.plan;
    let mut transfers = Vec::new();
    let mut posts = l.posts();
    let mut starts = Vec::new();
    for (i, phase) in plan.phases.iter().enumerate() {
        let inst = plan.instance(phase, l.member);
        let mesh = plan_phase_is_mesh(plan, i as u32);
        segment_starts(l, phase, inst, &mut starts);
        for (s, &start) in starts.iter().enumerate() {
            let end = starts.get(s + 1).copied().unwrap_or(phase.step_n);
            transfers.clear();
            l.schedule.phase_transfers(plan, l.group, phase, inst, start, &mut transfers);
            l.count(phase.first_step + start, &transfers, end - start, mesh, &mut posts)?;
        }
        emit(i as u32, &mut posts)?;
    }
    Ok(())
}

/// The steps of `phase` (from 0, ascending) from which on every step
/// posts the same as the segment's first, until the next, into `at`.
fn segment_starts(l: &Lowering<'_>, phase: &Phase, inst: PhaseInstance, at: &mut Vec<u32>) {
    at.clear();
    let every_step = |at: &mut Vec<u32>| at.extend(0..phase.step_n);
    let Some(table) = l.tables.first() else { return at.push(0) };
    // Block costs that depend on the member (AllToAllV): no closed form.
    let Some(big_below) = table.big_below() else { return every_step(at) };
    at.push(0);
    let (k, p) = (i64::from(inst.scope.k), i64::from(inst.scope.pos));
    let heavy = i64::from(heavy_pieces(big_below, inst));
    let mut s = Starts { k, heavy, n: i64::from(phase.step_n), at };
    use PhaseKind as K;
    match phase.kind {
        K::RingReduceScatter { bidir } => {
            s.sequence(p - 1, -1, 0, k - 1);
            s.sequence(p - 2, -1, 0, k - 1);
            if bidir {
                s.sequence(p + 1, 1, 0, k - 1);
                s.sequence(p + 2, 1, 0, k - 1);
            }
        }
        K::RingAllGather { bidir } => {
            s.sequence(p, -1, 0, k - 1);
            s.sequence(p - 1, -1, 0, k - 1);
            if bidir {
                s.sequence(p, 1, 0, k - 1);
                s.sequence(p + 1, 1, 0, k - 1);
            }
        }
        K::RingAllReduceFused => {
            s.sequence(p - 1, -1, 0, k - 1);
            s.sequence(p - 2, -1, 0, k - 1);
            // The all-gather's step t' = t - (k - 1) sends p - t'.
            s.sequence(p + k - 1, -1, k - 1, 2 * k - 2);
            s.sequence(p + k - 2, -1, k - 1, 2 * k - 2);
        }
        K::RingBroadcast { root } => s.chain((p - i64::from(root)).rem_euclid(k.max(1))),
        K::RingReduce { root } => s.chain((p - i64::from(root) - 1).rem_euclid(k.max(1))),
        K::RingAllToAll if table.position_free() => s.at(1),
        _ => {
            s.at.clear();
            return every_step(s.at);
        }
    }
    s.at.sort_unstable();
    s.at.dedup();
}

/// How many of the `k` pieces of `inst`'s universe are heavy (hold one
/// block below `big_below` more than the rest): pieces `0..r`.
fn heavy_pieces(big_below: u32, inst: PhaseInstance) -> u32 {
    let u = inst.universe;
    let k = u64::from(inst.scope.k.max(1));
    // Universe positions the pieces cover, and how many lie below big_below.
    let covered = u64::from(inst.per_piece) * k;
    let below = if u.start >= big_below {
        0
    } else if u.stride == 0 {
        u64::from(u.count)
    } else {
        u64::from(big_below - u.start).div_ceil(u64::from(u.stride))
    };
    // Below k, so it fits.
    (below.min(covered) % k) as u32
}

/// Segment starts being gathered: steps `0..n` of a phase over `k` pieces,
/// pieces `0..heavy` heavy.
struct Starts<'v> {
    k: i64,
    heavy: i64,
    n: i64,
    at: &'v mut Vec<u32>,
}

impl Starts<'_> {
    /// A segment may start at step `t` (ignored outside the phase).
    fn at(&mut self, t: i64) {
        if (0..self.n).contains(&t) {
            // In 0..n, a u32.
            self.at.push(t as u32);
        }
    }

    /// Pieces `q(t) = a + d t (mod k)`, `d = ±1`, sent or received on steps
    /// `lo..hi`: segments start where the window does, where it ends, and
    /// where `q` enters or leaves the heavy pieces `0..heavy` (going up at
    /// `0` and `heavy`; going down at `heavy - 1` and `k - 1`).
    fn sequence(&mut self, a: i64, d: i64, lo: i64, hi: i64) {
        self.at(lo);
        self.at(hi);
        if self.heavy == 0 {
            return;
        }
        let edges = if d > 0 { [0, self.heavy] } else { [self.heavy - 1, self.k - 1] };
        for v in edges {
            // The first t >= lo with a + d t ≡ v (mod k): d is its own inverse.
            let mut t = lo + (d * (v - a) - lo).rem_euclid(self.k);
            while t < hi {
                self.at(t);
                t += self.k;
            }
        }
    }

    /// The pipelined chain at position `j`: it sends piece `t - j` on steps
    /// `j..j+k` unless it is the last (`j = k - 1`), and receives piece
    /// `t - j + 1` on steps `j-1..j-1+k` unless it is the first.
    fn chain(&mut self, j: i64) {
        if j <= self.k - 2 {
            self.sequence(-j, 1, j, j + self.k);
        }
        if j >= 1 {
            self.sequence(1 - j, 1, j - 1, j - 1 + self.k);
        }
    }
}
