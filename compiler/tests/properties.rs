//! End-to-end property tests that hunt for defects: random *valid* specs,
//! built as `ccc_ir::spec` values (not text), through the whole pipeline.
//!
//! Properties:
//!
//! 1. Nothing panics: `validate` then `compile` (verification on), on the
//!    generated specs and on mutated (mostly invalid) copies of them.
//! 2. The generators make only valid specs, validation accepts them, and
//!    `compile` then succeeds or fails with a device limit only (`Lower`
//!    limits, `Image` errors, `Build(UnevenGroups)`, a proof too large to
//!    attempt) — never a `VerifyError::Defects` (a schedule the prover
//!    refutes) nor any other error. A success has one image per rank, one
//!    per used TOP_SP, within the regions of the interface, a proof, and a
//!    manifest that `diagnose` reads back to the same digest.
//! 3. Determinism: a second compile on a one-thread rayon pool, with the
//!    provers' symmetry shortcut off (every group executed in full, every
//!    rank checked against its own step graph), gives the same images,
//!    programs, signature and proof figures (or the same error); a random
//!    subset of ranks compiled alone (`verify: false`) gives exactly those
//!    ranks' bytes, and the same signature, as the whole-world compile.
//! 4. Signatures: 32 lower-case hex digits, the MD5 of their own preimage,
//!    equal for equal programs and blind to what `sign.rs` normalizes (group
//!    list order, `peer: k` against the pairs it expands to, explicit
//!    defaults, one in-order group against no groups) — which must not
//!    change a single image byte either; a different count signs
//!    differently. Across *neighbours* (a program and a copy with one field
//!    changed to another valid value): equal digests imply equal images, and
//!    `diagnose` reports a match exactly when the digests are equal.
//! 5. RON round trip: `ron::ser::to_string_pretty` of the spec (with and
//!    without struct names), read back by `ccc_compiler::parse::parse`, is
//!    the same program, in the same form, and signs the same.
//!
//! How specs are generated: every test draws a *tape* of random `u32`s and
//! reads its decisions from it in order (`Tape`): the world (arch, topology
//! up to 48 ranks, barrier, send credits), then per collective the replica
//! groups (none; pod-by-pod/node-by-node listings with shuffled members;
//! node-by-node across any nodes; random equal partitions; contiguous
//! blocks; in a shuffled list order), the op (every `OpType`), the algorithm
//! (a flat one that serves the op and whose structural requirement every
//! group meets, or `Hier` with legal leg choices whose own requirements the
//! leg members meet), dtype, count (1..16, primes, powers of two ± 1, up to
//! 10^7, rarely up to the 64-bit byte limit; a multiple of the group size
//! where validation requires it), reduce, root, peer map (`peer: k`, a shift
//! written out, or a random partial permutation), AllToAllV counts (zeros
//! included) and channels (1..=9). A program has 1 or 2–4 collectives
//! sharing arch, topology, barrier and send credits. A tape value of 0
//! always means the simplest choice, so proptest's shrinking (each value
//! toward 0) shrinks the spec. Bulk data (permutations, the counts matrix)
//! comes from a small PRNG seeded from the tape (seed 0: no shuffle).
//!
//! A failure message carries the spec as RON, ready for `ccc compile`;
//! minimized failures are kept in `tests/regressions/` (every `.ron` there is
//! compiled by `regressions_compile_or_hit_a_device_limit`). This file found
//! two defects, both fixed: an overflow at `count = u64::MAX` (its spec
//! stays in `tests/regressions/`), and group shapes checked in quadratic
//! time (no fixture: it needs a million-rank world).
//!
//! Running (the whole file takes about 2 s in the test profile on 2 cores):
//!
//! ```text
//! cargo test -p ccc-compiler --test properties                      # the fast suite (CI)
//! PROPTEST_CASES=3000 cargo test -p ccc-compiler --test properties  # every property, more cases
//! cargo test -p ccc-compiler --test properties -- --ignored --nocapture
//!     # the deep hunt: every property, worlds up to 256 ranks, up to 32
//!     # channels, 300 cases (CCC_DEEP_CASES=2000: about 90 s); prints the
//!     # tally of outcomes (ok, which device limit, neighbour verdicts)
//! PROPTEST_RNG_SEED=12345 cargo test ...                            # replay one run's draws
//! ```
//!
//! Nothing is printed unless a test fails (or the deep hunt runs with
//! `--nocapture`); a failure shows the outcomes tallied so far in this test
//! binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ccc_compiler::algorithms::{Requirement, flat_ops, hier_legs, leg_choices, requirement};
use ccc_compiler::build::BuildError;
use ccc_compiler::diagnose::{Input, diagnose};
use ccc_compiler::lower::LowerErrorKind;
use ccc_compiler::manifest::Manifest;
use ccc_compiler::parse::{SpecForm, parse};
use ccc_compiler::pipeline::{CompileError, Compiled, Options, compile};
use ccc_compiler::placement::topsps_used;
use ccc_compiler::sign::{PREIMAGE_HEADER, Signature, digest_of};
use ccc_compiler::validate::validate;
use ccc_compiler::verify::{ProverOptions, VerifyError};
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::id::Rank;
use ccc_ir::spec::{Algorithm, Barrier, Collective, DType, HierLegs, Leg, LegAlgorithm, Program, ReduceOp, Topology};
use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use ron::ser::PrettyConfig;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

// ---------------------------------------------------------------------------
// The tape: decisions read in order; 0 is always the simplest choice.

/// Tape values per case: more than any spec reads (a 4-collective program
/// reads at most about 90); past the end every decision reads 0.
const TAPE_LEN: usize = 128;

struct Tape<'a> {
    vals: &'a [u32],
    pos: usize,
}

impl<'a> Tape<'a> {
    fn new(vals: &'a [u32]) -> Self {
        Tape { vals, pos: 0 }
    }

    fn next(&mut self) -> u32 {
        let v = self.vals.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        v
    }

    /// `0..n` (0 when `n <= 1`).
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 { 0 } else { self.next() as usize % n }
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    /// True with probability 1/n; false on a 0.
    fn one_in(&mut self, n: usize) -> bool {
        n >= 1 && self.below(n) == n - 1
    }

    /// `lo..=hi`, `lo` on a 0.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        let wide = (u64::from(self.next()) << 32) | u64::from(self.next());
        lo + wide % (hi - lo + 1)
    }

    fn rng(&mut self) -> Rng {
        Rng(u64::from(self.next()))
    }
}

/// SplitMix64, for bulk data; seed 0 gives identity permutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 { 0 } else { self.next() % n }
    }

    fn shuffle<T>(&mut self, xs: &mut [T]) {
        if self.0 == 0 {
            return;
        }
        for i in (1..xs.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            xs.swap(i, j);
        }
    }

    fn perm(&mut self, n: u32) -> Vec<u32> {
        let mut p: Vec<u32> = (0..n).collect();
        self.shuffle(&mut p);
        p
    }
}

fn divisors(n: u32) -> Vec<u32> {
    (1..=n).filter(|d| n.is_multiple_of(*d)).collect()
}

// ---------------------------------------------------------------------------
// Generators.

/// What every collective of a program shares.
#[derive(Clone, Copy, Debug)]
struct World {
    arch: Arch,
    topology: Topology,
    barrier: Option<Barrier>,
    send_credits: Option<u32>,
}

/// World sizes beyond 8 (up to 8 every size is drawn).
const SIZES: [u32; 34] = [
    9, 10, 12, 14, 15, 16, 18, 20, 21, 24, 25, 27, 28, 30, 32, 36, 40, 42, 44, 45, 47, 48, 56, 60, 64, 72, 80, 96, 100,
    120, 128, 144, 192, 256,
];

/// How big and how varied the generated programs are.
#[derive(Clone, Copy, Debug)]
struct Knobs {
    /// The largest world.
    max_rank_n: u32,
    /// One program in this many has 2–4 collectives.
    program_odds: usize,
    /// The most channels.
    max_channels: u32,
}

/// The fast suite's programs.
const FAST: Knobs = Knobs { max_rank_n: 48, program_odds: 4, max_channels: 9 };

/// The deep hunt's.
const DEEP: Knobs = Knobs { max_rank_n: 256, program_odds: 2, max_channels: 32 };

fn gen_world(t: &mut Tape<'_>, max_rank_n: u32) -> World {
    let rank_n = match t.below(3) {
        0 => t.range(1, 8) as u32,
        tier => {
            let cap = if tier == 1 { 16.min(max_rank_n) } else { max_rank_n };
            let sizes: Vec<u32> = SIZES.iter().copied().filter(|&s| s <= cap).collect();
            if sizes.is_empty() { t.range(1, u64::from(cap.min(8))) as u32 } else { t.pick(&sizes) }
        }
    };
    let local_rank_n = t.pick(&divisors(rank_n));
    // Several pods are rarer than one among the divisors; draw them often.
    let pods: Vec<u32> = divisors(rank_n / local_rank_n).into_iter().filter(|&p| p > 1).collect();
    let pod_n = if !pods.is_empty() && t.one_in(2) { t.pick(&pods) } else { 1 };
    let arch = t.pick(&Arch::ALL);
    let barrier = match t.below(4) {
        2 => Some(Barrier::Host),
        3 if rank_n <= 625 => Some(Barrier::Device),
        _ => None,
    };
    let send_credits = match t.below(4) {
        2 => Some(t.pick(&[2, 1, 3, 4])),
        3 => Some(t.range(1, 511) as u32),
        _ => None,
    };
    World { arch, topology: Topology { rank_n, local_rank_n, pod_n }, barrier, send_credits }
}

/// The node and pod of a global rank.
#[derive(Clone, Copy)]
struct Geometry {
    local_rank_n: u32,
    ranks_per_pod: u32,
}

impl Geometry {
    fn of(t: Topology) -> Self {
        Geometry { local_rank_n: t.local_rank_n, ranks_per_pod: t.rank_n / t.pod_n }
    }
    fn node(self, r: u32) -> u32 {
        r / self.local_rank_n
    }
    fn pod(self, r: u32) -> u32 {
        r / self.ranks_per_pod
    }
}

/// Replica groups: `None` (the world), or one of several listings.
fn gen_groups(t: &mut Tape<'_>, topo: Topology) -> Option<Vec<Vec<u32>>> {
    let (rank_n, l, pod_n) = (topo.rank_n, topo.local_rank_n, topo.pod_n);
    let node_n = rank_n / l;
    let np = node_n / pod_n;
    let mode = t.below(7);
    let mut groups = match mode {
        // Pod by pod, node by node: lg of each node's ranks, npg of each
        // pod's nodes, pg pods; which ranks/nodes/pods shuffled.
        2 | 3 => {
            let (lg, npg, pg) = (t.pick(&divisors(l)), t.pick(&divisors(np)), t.pick(&divisors(pod_n)));
            let mut rng = t.rng();
            let pod_perm = rng.perm(pod_n);
            let node_perm: Vec<Vec<u32>> = (0..pod_n).map(|_| rng.perm(np)).collect();
            let local_perm: Vec<Vec<u32>> = (0..node_n).map(|_| rng.perm(l)).collect();
            let mut groups = Vec::new();
            for gp in 0..pod_n / pg {
                for gn in 0..np / npg {
                    for gl in 0..l / lg {
                        let mut members = Vec::new();
                        for a in 0..pg {
                            let pod = pod_perm[(gp * pg + a) as usize];
                            for b in 0..npg {
                                let node = pod * np + node_perm[pod as usize][(gn * npg + b) as usize];
                                for c in 0..lg {
                                    members.push(node * l + local_perm[node as usize][(gl * lg + c) as usize]);
                                }
                            }
                        }
                        groups.push(members);
                    }
                }
            }
            groups
        }
        // Node by node, the nodes of a group drawn from anywhere (pods
        // ignored: the pod runs may be uneven).
        4 => {
            let (lg, cg) = (t.pick(&divisors(l)), t.pick(&divisors(node_n)));
            let mut rng = t.rng();
            let nodes = rng.perm(node_n);
            let local_perm: Vec<Vec<u32>> = (0..node_n).map(|_| rng.perm(l)).collect();
            let mut groups = Vec::new();
            for chunk in nodes.chunks(cg as usize) {
                for s in 0..l / lg {
                    let members = chunk
                        .iter()
                        .flat_map(|&node| (0..lg).map(move |c| (node, s * lg + c)))
                        .map(|(node, i)| node * l + local_perm[node as usize][i as usize])
                        .collect();
                    groups.push(members);
                }
            }
            groups
        }
        // A random partition into equal groups, members in random order.
        5 => {
            let n = t.pick(&divisors(rank_n));
            let mut rng = t.rng();
            rng.perm(rank_n).chunks(n as usize).map(<[u32]>::to_vec).collect()
        }
        // Contiguous blocks in order (one block: the world, written out).
        6 => {
            let n = t.pick(&divisors(rank_n));
            (0..rank_n).collect::<Vec<_>>().chunks(n as usize).map(<[u32]>::to_vec).collect()
        }
        _ => return None,
    };
    // The order the groups are listed in.
    t.rng().shuffle(&mut groups);
    Some(groups)
}

/// Consecutive runs of equal keys, none coming back after its run ended,
/// all the same length: that length.
fn common_run(keys: &[u32]) -> Option<usize> {
    let mut runs: Vec<(u32, usize)> = Vec::new();
    for &k in keys {
        match runs.last_mut() {
            Some((last, len)) if *last == k => *len += 1,
            _ => {
                if runs.iter().any(|&(v, _)| v == k) {
                    return None;
                }
                runs.push((k, 1));
            }
        }
    }
    let first = runs.first()?.1;
    runs.iter().all(|r| r.1 == first).then_some(first)
}

/// Do these members meet `req`? (The test's own reading of
/// `docs/algorithms.md` §2.2.)
fn meets(req: Requirement, members: &[u32], g: Geometry) -> bool {
    let nodes: Vec<u32> = members.iter().map(|&r| g.node(r)).collect();
    let pods: Vec<u32> = members.iter().map(|&r| g.pod(r)).collect();
    match req {
        Requirement::None => true,
        Requirement::WithinNode => nodes.iter().all(|&x| x == nodes[0]),
        Requirement::NodeAligned => common_run(&nodes).is_some(),
        Requirement::PodAligned => common_run(&pods).is_some_and(|len| members.len() / len >= 2),
    }
}

/// The (members per node, nodes per pod, pods) shape a group's listing
/// shows (`docs/algorithms.md` §1.1): every group of a collective whose
/// algorithm uses node or pod structure must have the same one.
fn listed_shape(members: &[u32], g: Geometry) -> [usize; 3] {
    let n = members.len();
    let nodes: Vec<u32> = members.iter().map(|&r| g.node(r)).collect();
    let pods: Vec<u32> = members.iter().map(|&r| g.pod(r)).collect();
    match common_run(&nodes) {
        Some(per_node) => {
            let node_pods: Vec<u32> = pods.iter().step_by(per_node).copied().collect();
            match common_run(&node_pods) {
                Some(per_pod) => [per_node, per_pod, node_pods.len() / per_pod],
                None => [per_node, node_pods.len(), 1],
            }
        }
        None => match common_run(&pods) {
            Some(per_pod) => [per_pod, 1, n / per_pod],
            None => [n, 1, 1],
        },
    }
}

/// The members of a Hier leg, per group (as validation reads them): one
/// node's members for an intra leg, one member per node for an inter leg.
fn leg_members(leg: Leg, members: &[u32], g: Geometry) -> Vec<u32> {
    let per_node = members.iter().take_while(|&&r| g.node(r) == g.node(members[0])).count();
    if leg.is_intra() {
        members[..per_node].to_vec()
    } else {
        members.iter().step_by(per_node.max(1)).copied().collect()
    }
}

fn gen_algorithm(t: &mut Tape<'_>, op: OpType, groups: &[Vec<u32>], g: Geometry) -> Algorithm {
    let one_shape = groups.iter().all(|m| listed_shape(m, g) == listed_shape(&groups[0], g));
    let all_meet = |req| req == Requirement::None || (one_shape && groups.iter().all(|m| meets(req, m, g)));
    let flat: Vec<AlgType> = AlgType::ALL
        .iter()
        .copied()
        .filter(|&a| a != AlgType::Hier && flat_ops(a).contains(&op) && all_meet(requirement(a)))
        .collect();
    let hier = flat_ops(AlgType::Hier).contains(&op) && all_meet(requirement(AlgType::Hier));
    if let (Some(legs), true, true) = (hier_legs(op), hier, t.one_in(3)) {
        let mut chosen = HierLegs::default();
        for &leg in legs {
            let choices: Vec<AlgType> = leg_choices(leg)
                .iter()
                .copied()
                .filter(|&a| groups.iter().all(|m| meets(requirement(a), &leg_members(leg, m, g), g)))
                .collect();
            chosen = chosen.with(leg, t.pick(&choices));
        }
        return Algorithm::Hier(chosen);
    }
    // Ring and Mesh serve every op and need nothing, so `flat` is never
    // empty; the others are drawn more often than their share when the
    // groups allow them.
    let special: Vec<AlgType> = flat.iter().copied().filter(|&a| a != AlgType::Ring && a != AlgType::Mesh).collect();
    let alg = if !special.is_empty() && t.one_in(2) { t.pick(&special) } else { t.pick(&flat) };
    Algorithm::flat(alg).unwrap()
}

/// Elements per rank: small (empty halves), primes, powers of two (±1),
/// up to 10^7, and rarely up to the most a 64-bit byte count holds; a
/// positive multiple of `multiple_of`.
fn gen_count(t: &mut Tape<'_>, multiple_of: u64, dtype: DType) -> u64 {
    let most = u64::MAX / dtype.size();
    let c = match t.below(7) {
        1 => t.range(17, 1000),
        2 => t.range(1001, 100_000),
        3 => t.range(100_001, 10_000_000),
        4 => t.pick(&[7, 13, 97, 257, 4099, 65_537, 999_983, 9_999_991]),
        5 => ((1u64 << t.range(0, 23)) + t.range(0, 2)).saturating_sub(1).max(1),
        6 if t.one_in(3) => {
            if t.one_in(2) {
                most - t.range(0, 2)
            } else {
                t.range(1 << 32, most)
            }
        }
        _ => t.range(1, 16),
    };
    if multiple_of > 1 { (c / multiple_of).max(1) * multiple_of } else { c }
}

/// AllToAllV rows: each sums to `count`, zeros included.
fn gen_counts(t: &mut Tape<'_>, n: u32, count: u64) -> Vec<Vec<u64>> {
    let mode = t.below(4);
    let mut rng = t.rng();
    (0..n)
        .map(|i| {
            let n = n as usize;
            match mode {
                // All of it to one member.
                1 => {
                    let mut row = vec![0; n];
                    row[rng.below(n as u64) as usize] = count;
                    row
                }
                // Even split, rotated.
                2 => (0..n).map(|j| split(count, n as u64, ((j + i as usize) % n) as u64)).collect(),
                // Random cuts.
                3 => {
                    let mut cuts: Vec<u64> = (1..n).map(|_| rng.below(count.saturating_add(1))).collect();
                    cuts.push(0);
                    cuts.push(count);
                    cuts.sort_unstable();
                    cuts.windows(2).map(|w| w[1] - w[0]).collect()
                }
                // Everything to member 0.
                _ => (0..n).map(|j| if j == 0 { count } else { 0 }).collect(),
            }
        })
        .collect()
}

fn split(total: u64, parts: u64, index: u64) -> u64 {
    total / parts + u64::from(index < total % parts)
}

/// A peer map over `n >= 2` members: `(peer, peers)`.
#[allow(clippy::type_complexity)]
fn gen_peers(t: &mut Tape<'_>, n: u32) -> (Option<u32>, Option<Vec<(u32, u32)>>) {
    let mode = t.below(3);
    let k = t.range(1, u64::from(n - 1)) as u32;
    let mut rng = t.rng();
    match mode {
        // A random partial permutation without fixed points.
        1 => {
            let sigma = rng.perm(n);
            let mut pairs: Vec<(u32, u32)> = (0..n)
                .filter(|&i| sigma[i as usize] != i && rng.below(3) != 0)
                .map(|i| (i, sigma[i as usize]))
                .collect();
            if pairs.is_empty() {
                pairs = (0..n).map(|i| (i, (i + k) % n)).collect();
            }
            rng.shuffle(&mut pairs);
            (None, Some(pairs))
        }
        // The shift by k, written out in a random order.
        2 => {
            let mut pairs: Vec<(u32, u32)> = (0..n).map(|i| (i, (i + k) % n)).collect();
            rng.shuffle(&mut pairs);
            (None, Some(pairs))
        }
        _ => (Some(k), None),
    }
}

fn gen_collective(t: &mut Tape<'_>, w: &World, max_channels: u32) -> Collective {
    let topo = w.topology;
    let g = Geometry::of(topo);
    let groups = gen_groups(t, topo);
    let members: Vec<Vec<u32>> = groups.clone().unwrap_or_else(|| vec![(0..topo.rank_n).collect()]);
    let n = members[0].len() as u32;
    let ops: Vec<OpType> = OpType::ALL.iter().copied().filter(|op| n >= 2 || !op.takes_peers()).collect();
    // AllReduce has the most algorithms: draw it more than its share.
    let op = if t.one_in(4) { OpType::AllReduce } else { t.pick(&ops) };
    let algorithm = gen_algorithm(t, op, &members, g);
    let splits = matches!(op, OpType::ReduceScatter | OpType::AllToAll);
    let dtype = t.pick(&DType::ALL);
    let count = gen_count(t, if splits { u64::from(n) } else { 1 }, dtype);
    let reduce = op.is_reducing().then(|| {
        let r = t.pick(&[ReduceOp::Add, ReduceOp::Max, ReduceOp::Min, ReduceOp::Fma, ReduceOp::Average]);
        if r == ReduceOp::Average && !dtype.is_float() { ReduceOp::Add } else { r }
    });
    let root = op.is_rooted().then(|| t.below(n as usize) as u32);
    let (peer, peers) = if op.takes_peers() { gen_peers(t, n) } else { (None, None) };
    let counts = (op == OpType::AllToAllV).then(|| gen_counts(t, n, count));
    let channels = t.range(1, u64::from(max_channels)) as u32;
    Collective {
        op,
        dtype,
        reduce,
        count,
        arch: w.arch,
        topology: topo,
        channels,
        algorithm,
        root,
        peer,
        peers,
        counts,
        groups,
        barrier: w.barrier,
        send_credits: w.send_credits,
        model: None,
    }
}

/// A program: one collective, or 2–4 sharing the world.
fn gen_program(t: &mut Tape<'_>, knobs: Knobs) -> Program {
    let w = gen_world(t, knobs.max_rank_n);
    let len = if t.one_in(knobs.program_odds) { t.range(2, 4) as usize } else { 1 };
    Program { collectives: (0..len).map(|_| gen_collective(t, &w, knobs.max_channels)).collect() }
}

fn tape() -> impl Strategy<Value = Vec<u32>> {
    proptest::collection::vec(any::<u32>(), TAPE_LEN)
}

// ---------------------------------------------------------------------------
// Known defects: shapes skipped so the rest of the suite stays meaningful.

// ---------------------------------------------------------------------------
// Checking.

/// The spec as a file would hold it.
fn ron_of(program: &Program) -> String {
    let config = PrettyConfig::new().struct_names(true);
    match program.collectives.as_slice() {
        [one] => ron::ser::to_string_pretty(one, config),
        _ => ron::ser::to_string_pretty(program, config),
    }
    .unwrap_or_else(|e| format!("<not serializable: {e}>"))
}

/// Outcomes seen so far (shown when a test fails, and by the deep hunt).
static TALLY: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

fn tally(key: &str) {
    *TALLY.lock().unwrap_or_else(std::sync::PoisonError::into_inner).entry(key.to_owned()).or_default() += 1;
}

fn tally_text() -> String {
    let t = TALLY.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    t.iter().map(|(k, v)| format!("  {v:6}  {k}")).collect::<Vec<_>>().join("\n")
}

/// What an accepted error is, or why it is a ccc defect.
fn acceptable(e: &CompileError) -> Result<String, String> {
    match e {
        CompileError::Lower(l) => match &l.kind {
            LowerErrorKind::Limit { limit, .. } => Ok(format!("lower: {limit}")),
            _ => Err(format!("lowering a validated spec failed with a non-limit error: {e}")),
        },
        CompileError::Image(i) => Ok(format!("image: {}", variant(&format!("{:?}", i.source)))),
        CompileError::Build(BuildError::UnevenGroups { .. }) => Ok("build: uneven groups".to_owned()),
        CompileError::Verify(VerifyError::TooLarge { .. }) => Ok("verify: too large to prove".to_owned()),
        CompileError::Memory(_) => Ok("memory: over budget".to_owned()),
        CompileError::Unlowered(u) => Ok(format!("lower (a rank not compiled): {}", u.exceeded.refusal.limit)),
        CompileError::Verify(VerifyError::Defects(_)) => Err(format!("DEFECT: the prover refutes the schedule: {e}")),
        CompileError::Build(_) => Err(format!("build failed on a validated spec: {e}")),
        CompileError::Parse(_) | CompileError::Validate(_) => Err(format!("compile re-validated and refused: {e}")),
        CompileError::Certificate(_) => Err(format!("a compile without a certificate failed on one: {e}")),
        CompileError::Cancelled => Err(format!("a compile nobody cancelled was cancelled: {e}")),
    }
}

fn variant(debug: &str) -> &str {
    debug.split([' ', '(', '{']).next().unwrap_or(debug)
}

/// Validates and compiles, catching panics: `None` when validation refuses;
/// `Err` (a failure message with the spec) on a panic.
#[allow(clippy::type_complexity)]
fn try_compile(program: &Program, options: &Options) -> Result<Option<Result<Compiled, CompileError>>, String> {
    let caught = catch_unwind(AssertUnwindSafe(|| validate(program).ok().map(|v| compile(&v, options))));
    caught.map_err(|panic| format!("PANIC: {}\nspec:\n{}", panic_text(&panic), ron_of(program)))
}

/// Validates (which must accept: the generators make valid specs only) and
/// compiles, catching panics; `Err` is a failure message with the spec.
fn run(program: &Program, options: &Options) -> Result<Result<Compiled, CompileError>, String> {
    try_compile(program, options)?.ok_or_else(|| {
        let e = validate(program).err().map(|e| e.to_string()).unwrap_or_default();
        format!("validation refused a generated spec: {e}\nspec:\n{}", ron_of(program))
    })
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "<non-string panic>".to_owned())
}

/// Properties 1 and 2 on one program: the compile result (a success or an
/// accepted device limit), or a failure message.
fn check_compiles(program: &Program) -> Result<Result<Compiled, CompileError>, String> {
    let result = run(program, &Options::default())?;
    match &result {
        Ok(c) => {
            tally("ok");
            check_output(program, c).map_err(|e| format!("{e}\nspec:\n{}", ron_of(program)))?;
        }
        Err(e) => match acceptable(e) {
            Ok(kind) => tally(&kind),
            Err(why) => {
                tally("FAILURE");
                return Err(format!("{why}\nspec:\n{}\noutcomes so far:\n{}", ron_of(program), tally_text()));
            }
        },
    }
    Ok(result)
}

/// The images are what the interface promises: one per rank in order, one
/// per used TOP_SP, within their regions; the proof was made.
fn check_output(program: &Program, c: &Compiled) -> Result<(), String> {
    let rank_n = program.collectives[0].topology.rank_n;
    let ranks: Vec<Rank> = (0..rank_n).map(Rank).collect();
    if c.images.iter().map(|i| i.rank).ne(ranks.iter().copied()) || c.programs.iter().map(|p| p.rank).ne(ranks) {
        return Err("the images are not one per rank, in rank order".to_owned());
    }
    if c.proof.is_none() {
        return Err("compiled with verification on, but no proof".to_owned());
    }
    let used = topsps_used(&c.schedule);
    for img in &c.images {
        if img.topsps.iter().map(|t| t.topsp.0).ne(0..used) {
            return Err(format!("{}: TOP_SPs {:?}, expected 0..{used}", img.rank, img.topsps.len()));
        }
        for t in &img.topsps {
            if t.ctrl_spad.len() % 8 != 0 || t.ctrl_spad.len() > 4096 || t.slot_spad.len() > 32768 {
                return Err(format!(
                    "{}, {}: ctrl_spad {} bytes, slot_spad {} bytes",
                    img.rank,
                    t.topsp,
                    t.ctrl_spad.len(),
                    t.slot_spad.len()
                ));
            }
        }
    }
    check_digest(&c.signature)?;
    // The manifest carries the same signature, and `diagnose` reads it back.
    let json = Manifest::of(c).to_json().map_err(|e| format!("manifest: {e}"))?;
    let input = Input::from_manifest_json("manifest.json", &json).map_err(|e| format!("manifest: {e:?}"))?;
    if input.digest() != c.signature.digest {
        return Err("the manifest's fields digest differently from the signature".to_owned());
    }
    Ok(())
}

fn config(cases: u32) -> ProptestConfig {
    let base = ProptestConfig::default();
    let cases = if std::env::var_os("PROPTEST_CASES").is_some() { base.cases } else { cases };
    ProptestConfig { cases, failure_persistence: None, max_shrink_iters: 2048, ..base }
}

/// Fails the proptest case with `msg`.
fn fail(msg: String) -> TestCaseError {
    TestCaseError::fail(msg)
}

// ---------------------------------------------------------------------------
// Property 3: determinism.

fn check_determinism(program: &Program, subset_seed: u64) -> Result<(), String> {
    let spec = || ron_of(program);
    let a = check_compiles(program)?;
    // The second compile on one thread: the result may not depend on how
    // rayon splits the work.
    // It runs every group in full: the symmetry shortcut may change no
    // result either.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().map_err(|e| e.to_string())?;
    let full = ProverOptions { symmetry: false, ..ProverOptions::default() };
    let b = pool.install(|| try_compile(program, &Options { prover: full, ..Options::default() }))?;
    let b = b.ok_or_else(|| format!("validation refused a generated spec\nspec:\n{}", spec()))?;
    match (&a, &b) {
        (Ok(a), Ok(b)) => {
            if a.images != b.images || a.programs != b.programs || a.signature != b.signature {
                return Err(format!("two compiles differ\nspec:\n{}", spec()));
            }
            let (pa, pb) = (a.proof.as_ref(), b.proof.as_ref());
            if pa.map(|p| (&p.postcondition, &p.protocol, p.images_checked))
                != pb.map(|p| (&p.postcondition, &p.protocol, p.images_checked))
            {
                return Err(format!("the symmetry shortcut changed what was proven\nspec:\n{}", spec()));
            }
        }
        (Err(a_err), Err(b_err)) => {
            let (a_err, b_err) = (format!("{a_err:?}"), format!("{b_err:?}"));
            if a_err != b_err {
                return Err(format!("two compiles fail differently:\n{a_err}\n{b_err}\nspec:\n{}", spec()));
            }
        }
        _ => return Err(format!("one compile succeeds, the other fails\nspec:\n{}", spec())),
    }
    // A subset of ranks, in random order, maybe repeated.
    let rank_n = program.collectives[0].topology.rank_n;
    let mut rng = Rng(subset_seed);
    let want = 1 + rng.below(u64::from(rank_n.min(6)));
    let ranks: Vec<Rank> = (0..want).map(|_| Rank(rng.below(u64::from(rank_n)) as u32)).collect();
    let c = run(program, &Options { ranks: ranks.clone(), verify: false, ..Options::default() })?;
    match (a, c) {
        (Ok(a), Ok(c)) => {
            let mut sorted: Vec<Rank> = ranks.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let got: Vec<Rank> = c.images.iter().map(|i| i.rank).collect();
            if got != sorted || c.programs.iter().map(|p| p.rank).collect::<Vec<_>>() != sorted {
                return Err(format!("asked for {ranks:?}, got images of {got:?}\nspec:\n{}", spec()));
            }
            for (img, prog) in c.images.iter().zip(&c.programs) {
                let r = img.rank.0 as usize;
                if *img != a.images[r] || *prog != a.programs[r] {
                    return Err(format!(
                        "rank {r} compiled alone (ranks {ranks:?}) differs from the whole-world compile\nspec:\n{}",
                        spec()
                    ));
                }
            }
            if c.signature != a.signature {
                return Err(format!("the signature depends on the ranks compiled\nspec:\n{}", spec()));
            }
        }
        (Ok(_), Err(e)) => {
            return Err(format!("the world compiles but ranks {ranks:?} alone fail: {e}\nspec:\n{}", spec()));
        }
        (Err(_), Err(e)) => {
            acceptable(&e).map_err(|why| format!("{why}\nspec:\n{}", spec()))?;
        }
        (Err(_), Ok(_)) => {} // the failing rank was not asked for
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Property 4: signatures.

fn check_digest(s: &Signature) -> Result<(), String> {
    let hex = s.digest.len() == 32 && s.digest.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'));
    if !hex {
        return Err(format!("digest {:?} is not 32 lower-case hex digits", s.digest));
    }
    if digest_of(&s.fields) != s.digest {
        return Err("the digest is not the MD5 of the fields' preimage".to_owned());
    }
    if !s.preimage().starts_with(PREIMAGE_HEADER) {
        return Err("the preimage does not start with its header".to_owned());
    }
    Ok(())
}

/// Rewrites a program in ways `sign.rs` normalizes: nothing a rank runs may
/// change.
fn respell(program: &Program, seed: u64) -> Program {
    let mut rng = Rng(seed | 1);
    let mut p = program.clone();
    for c in &mut p.collectives {
        let n = c.groups.as_ref().map_or(c.topology.rank_n, |g| g[0].len() as u32);
        // The order groups are listed in.
        if let Some(groups) = c.groups.as_mut() {
            rng.shuffle(groups);
        }
        // No groups against one group of every rank in order.
        match &c.groups {
            None if rng.below(2) == 0 => c.groups = Some(vec![(0..c.topology.rank_n).collect()]),
            Some(g) if g.len() == 1 && g[0].iter().copied().eq(0..c.topology.rank_n) => c.groups = None,
            _ => {}
        }
        // `peer: k` against its pairs, in any order; pairs in any order.
        if let Some(k) = c.peer.take() {
            let mut pairs: Vec<(u32, u32)> = (0..n).map(|i| (i, (i + k) % n)).collect();
            rng.shuffle(&mut pairs);
            c.peers = Some(pairs);
        } else if let Some(pairs) = c.peers.as_mut() {
            rng.shuffle(pairs);
        }
        // Defaults written out, or left out.
        c.barrier = match c.barrier {
            None => Some(Barrier::Host),
            Some(Barrier::Host) => None,
            device => device,
        };
        c.send_credits = match c.send_credits {
            None => Some(2),
            Some(2) => None,
            other => other,
        };
    }
    p
}

fn check_signatures(program: &Program, seed: u64) -> Result<(), String> {
    let spec = || ron_of(program);
    let fast = Options { ranks: Vec::new(), verify: false, ..Options::default() };
    let Ok(a) = run(program, &fast)? else { return Ok(()) };
    check_digest(&a.signature).map_err(|e| format!("{e}\nspec:\n{}", spec()))?;
    let Ok(b) = run(&program.clone(), &fast)? else {
        return Err(format!("an equal program fails to compile\nspec:\n{}", spec()));
    };
    if a.signature != b.signature {
        return Err(format!("equal programs sign differently\nspec:\n{}", spec()));
    }
    let respelt = respell(program, seed);
    let c = match run(&respelt, &fast)? {
        Ok(c) => c,
        Err(e) => {
            return Err(format!(
                "a respelt program fails to compile: {e}\nspec:\n{}\nrespelt:\n{}",
                spec(),
                ron_of(&respelt)
            ));
        }
    };
    if c.signature.digest != a.signature.digest {
        let diff: Vec<String> = a
            .signature
            .fields
            .iter()
            .zip(&c.signature.fields)
            .filter(|(x, y)| x != y)
            .map(|(x, y)| format!("{}: {} vs {}", x.name, x.value, y.value))
            .collect();
        return Err(format!(
            "a respelt program signs differently ({diff:?})\nspec:\n{}\nrespelt:\n{}",
            spec(),
            ron_of(&respelt)
        ));
    }
    if c.images != a.images {
        return Err(format!(
            "a respelt program signs the same but its images differ\nspec:\n{}\nrespelt:\n{}",
            spec(),
            ron_of(&respelt)
        ));
    }
    // A different count signs differently (when the count is free to move).
    let mut other = program.clone();
    let c0 = &mut other.collectives[0];
    if !matches!(c0.op, OpType::ReduceScatter | OpType::AllToAll | OpType::AllToAllV) && c0.count < 1 << 40 {
        c0.count += 1;
        if let Ok(d) = run(&other, &fast)?
            && d.signature.digest == a.signature.digest
        {
            return Err(format!("count and count + 1 sign the same\nspec:\n{}", spec()));
        }
    }
    Ok(())
}

/// A program one step away: one field of one collective (or one shared
/// setting) changed to another value, or one collective drawn anew. It may
/// be invalid (the caller skips those) or, rarely, equal.
fn neighbour(t: &mut Tape<'_>, program: &Program, knobs: Knobs) -> Program {
    let mut q = program.clone();
    let topo = q.collectives[0].topology;
    let g = Geometry::of(topo);
    let i = t.below(q.collectives.len());
    let world = World {
        arch: q.collectives[0].arch,
        topology: topo,
        barrier: q.collectives[0].barrier,
        send_credits: q.collectives[0].send_credits,
    };
    let c = &mut q.collectives[i];
    let members: Vec<Vec<u32>> = c.groups.clone().unwrap_or_else(|| vec![(0..topo.rank_n).collect()]);
    let n = members[0].len() as u32;
    /// A value of `xs` other than `old` (when there is one).
    fn other<T: Copy + PartialEq>(t: &mut Tape<'_>, xs: &[T], old: T) -> T {
        let rest: Vec<T> = xs.iter().copied().filter(|&x| x != old).collect();
        if rest.is_empty() { old } else { t.pick(&rest) }
    }
    #[derive(Clone, Copy)]
    enum Tweak {
        Anew,
        Channels,
        Root,
        Count,
        Dtype,
        Reduce,
        Algorithm,
        Peers,
        Swap,
        Arch,
        Shared,
    }
    let mut tweaks = vec![Tweak::Anew, Tweak::Channels, Tweak::Count, Tweak::Dtype, Tweak::Algorithm, Tweak::Arch];
    tweaks.push(Tweak::Shared);
    if c.root.is_some() && n >= 2 {
        tweaks.push(Tweak::Root);
    }
    if c.reduce.is_some() {
        tweaks.push(Tweak::Reduce);
    }
    if c.op.takes_peers() {
        tweaks.push(Tweak::Peers);
    }
    if c.groups.is_some() && n >= 2 {
        tweaks.push(Tweak::Swap);
    }
    match t.pick(&tweaks) {
        Tweak::Channels => {
            let all: Vec<u32> = (1..=knobs.max_channels).collect();
            c.channels = other(t, &all, c.channels);
        }
        Tweak::Root => c.root = c.root.map(|r| (r + 1 + t.below(n as usize - 1) as u32) % n),
        Tweak::Count => {
            let splits = matches!(c.op, OpType::ReduceScatter | OpType::AllToAll);
            c.count = gen_count(t, if splits { u64::from(n) } else { 1 }, c.dtype);
            if c.op == OpType::AllToAllV {
                c.counts = Some(gen_counts(t, n, c.count));
            }
        }
        Tweak::Dtype => {
            c.dtype = other(t, &DType::ALL, c.dtype);
            if c.count.checked_mul(c.dtype.size()).is_none() {
                c.dtype = DType::U8;
            }
            if c.reduce == Some(ReduceOp::Average) && !c.dtype.is_float() {
                c.dtype = DType::F32;
            }
        }
        Tweak::Reduce => {
            let ops = [ReduceOp::Add, ReduceOp::Max, ReduceOp::Min, ReduceOp::Fma, ReduceOp::Average];
            let r = other(t, &ops, c.reduce.unwrap_or(ReduceOp::Add));
            c.reduce = Some(if r == ReduceOp::Average && !c.dtype.is_float() { ReduceOp::Add } else { r });
        }
        Tweak::Algorithm => c.algorithm = gen_algorithm(t, c.op, &members, g),
        Tweak::Peers => (c.peer, c.peers) = gen_peers(t, n),
        Tweak::Swap => {
            // Two members of one group trade places.
            if let Some(groups) = c.groups.as_mut() {
                let gi = t.below(groups.len());
                let a = t.below(n as usize);
                let b = (a + 1 + t.below(n as usize - 1)) % n as usize;
                groups[gi].swap(a, b);
            }
        }
        Tweak::Arch => {
            let arch = other(t, &Arch::ALL, c.arch);
            q.collectives.iter_mut().for_each(|c| c.arch = arch);
        }
        Tweak::Shared => {
            let barrier = t.pick(&[None, Some(Barrier::Host), Some(Barrier::Device)]);
            let credits = t.pick(&[None, Some(1), Some(2), Some(3), Some(511)]);
            let both = t.below(3);
            for c in &mut q.collectives {
                if both != 1 {
                    c.barrier = barrier;
                }
                if both != 0 {
                    c.send_credits = credits;
                }
            }
        }
        Tweak::Anew => *c = gen_collective(t, &world, knobs.max_channels),
    }
    q
}

/// Two programs whose ranks run different bytes must sign differently; and
/// `diagnose` tells them apart exactly when their digests differ.
fn check_neighbours(a_spec: &Program, b_spec: &Program) -> Result<(), String> {
    let fast = Options { ranks: Vec::new(), verify: false, ..Options::default() };
    let a = run(a_spec, &fast)?;
    // The neighbour may be invalid (skipped) or hit a device limit.
    let b = try_compile(b_spec, &fast)?;
    if let Some(Err(e)) = &b {
        acceptable(e).map_err(|why| format!("{why}\nspec:\n{}", ron_of(b_spec)))?;
    }
    let (Ok(a), Some(Ok(b))) = (a, b) else {
        tally("neighbour: skipped");
        return Ok(());
    };
    let both = || format!("spec:\n{}\nneighbour:\n{}", ron_of(a_spec), ron_of(b_spec));
    let same_digest = a.signature.digest == b.signature.digest;
    if same_digest && a.images != b.images {
        return Err(format!("two programs sign the same but run different bytes\n{}", both()));
    }
    if a_spec == b_spec && !same_digest {
        return Err(format!("equal programs sign differently\n{}", both()));
    }
    let report = diagnose(&[Input::from_signature("a", &a.signature), Input::from_signature("b", &b.signature)]);
    if report.all_match != same_digest {
        return Err(format!(
            "diagnose says all_match = {} for digests equal = {same_digest}\n{}",
            report.all_match,
            both()
        ));
    }
    if !same_digest && report.differences.iter().all(|d| d.fields.is_empty() && d.collectives.is_empty()) {
        return Err(format!("diagnose finds no difference between different signatures\n{}", both()));
    }
    tally(match (same_digest, a_spec == b_spec) {
        (true, true) => "neighbour: equal",
        (true, false) => "neighbour: respelt, same signature",
        _ => "neighbour: different signature",
    });
    Ok(())
}

// ---------------------------------------------------------------------------
// Property 5: RON round trip.

fn check_round_trip(program: &Program) -> Result<(), String> {
    let mut texts = vec![(
        SpecForm::Program,
        ron::ser::to_string_pretty(program, PrettyConfig::new().struct_names(true)).map_err(|e| e.to_string())?,
    )];
    if let [one] = program.collectives.as_slice() {
        for names in [false, true] {
            let text =
                ron::ser::to_string_pretty(one, PrettyConfig::new().struct_names(names)).map_err(|e| e.to_string())?;
            texts.push((SpecForm::Collective, text));
        }
    }
    for (form, text) in texts {
        let parsed = parse(&text).map_err(|e| format!("ccc cannot read ron's text: {e} at {:?}\n{text}", e.span))?;
        if parsed.form != form {
            return Err(format!("read as {:?}, written as {form:?}\n{text}", parsed.form));
        }
        if parsed.program != *program {
            return Err(format!("the round trip changes the program\nwritten:\n{text}\nread: {:?}", parsed.program));
        }
    }
    // And the text signs as the value does.
    let fast = Options { ranks: Vec::new(), verify: false, ..Options::default() };
    let text = ron_of(program);
    let reparsed = parse(&text).map_err(|e| e.to_string())?.program;
    match (run(program, &fast)?, run(&reparsed, &fast)?) {
        (Ok(a), Ok(b)) if a.signature == b.signature => Ok(()),
        (Err(a), Err(b)) if format!("{a:?}") == format!("{b:?}") => Ok(()),
        _ => Err(format!("the spec and its RON text compile differently\n{text}")),
    }
}

// ---------------------------------------------------------------------------
// Property 1 on mutated specs: any value, no panic.

/// Breaks (or bends) one field of one collective.
fn mutate(t: &mut Tape<'_>, program: &mut Program) {
    let i = t.below(program.collectives.len());
    let c = &mut program.collectives[i];
    // The group size as generated (earlier mutations may have broken it).
    let n = c.groups.as_ref().and_then(|g| g.first()).map_or(c.topology.rank_n, |g| g.len() as u32).min(64);
    let big = t.pick(&[0, 1, u32::MAX, u32::MAX - 1, 1 << 20, (1 << 20) + 1, 33, 512, 625, 626]);
    match t.below(24) {
        0 => c.count = t.pick(&[0, u64::MAX, u64::MAX / 2, u64::MAX / 8 + 1]),
        1 => c.channels = big,
        2 => c.topology.rank_n = big,
        3 => c.topology.local_rank_n = big,
        4 => c.topology.pod_n = big,
        5 => c.root = Some(t.pick(&[n, n + 1, u32::MAX, 0])),
        6 => c.peer = Some(t.pick(&[0, n, n.saturating_sub(1), u32::MAX, 1])),
        7 => c.peers = Some(vec![(0, 0), (u32::MAX, 1), (1, u32::MAX)][..t.range(0, 3) as usize].to_vec()),
        8 => c.peers = Some(vec![(0, 1), (0, 1)]),
        9 => c.counts = Some(vec![vec![u64::MAX, 2]; t.range(0, 3) as usize]),
        10 => c.counts = Some(vec![vec![c.count]; n as usize]),
        11 => c.groups = Some(vec![]),
        12 => c.groups = Some(vec![vec![], vec![0]]),
        13 => c.groups = Some(vec![vec![0, 0]; 2]),
        14 => c.groups = Some(vec![vec![u32::MAX]]),
        15 => {
            if let Some(g) = c.groups.as_mut().and_then(|g| g.last_mut()) {
                g.pop();
            }
        }
        16 => c.algorithm = if t.one_in(2) { Algorithm::Hier(HierLegs::default()) } else { Algorithm::Auto },
        17 => {
            let alg: LegAlgorithm = t.pick(AlgType::ALL).into();
            let legs = HierLegs {
                intra_reduce_scatter: Some(alg),
                inter_all_reduce: t.one_in(2).then_some(alg),
                inter_reduce_scatter: t.one_in(2).then_some(alg),
                inter_all_gather: t.one_in(2).then_some(alg),
                intra_all_gather: Some(alg),
                ..HierLegs::default()
            };
            c.algorithm = Algorithm::Hier(legs);
        }
        18 => c.algorithm = Algorithm::flat(t.pick(&AlgType::ALL[..AlgType::ALL.len() - 1])).unwrap_or(Algorithm::Ring),
        19 => c.reduce = t.pick(&[None, Some(ReduceOp::Average), Some(ReduceOp::Fma)]),
        20 => c.send_credits = Some(big),
        21 => c.barrier = Some(Barrier::Device),
        22 => c.op = t.pick(OpType::ALL),
        _ => c.dtype = t.pick(&DType::ALL),
    }
}

fn check_mutated(program: &Program) -> Result<(), String> {
    // Still valid (a bend, not a break): compile it only if it is small.
    let small = program.collectives[0].topology.rank_n <= 64;
    let caught = catch_unwind(AssertUnwindSafe(|| validate(program)));
    match caught {
        Err(panic) => Err(format!("PANIC in validate: {}\nspec:\n{}", panic_text(&panic), ron_of(program))),
        Ok(Err(_)) => {
            tally("refused");
            Ok(())
        }
        Ok(Ok(_)) if !small => Ok(()),
        Ok(Ok(_)) => check_compiles(program).map(drop),
    }
}

// ---------------------------------------------------------------------------
// The tests.

proptest! {
    #![proptest_config(config(256))]

    /// Properties 1 and 2.
    #[test]
    fn validated_specs_compile_or_hit_a_device_limit(vals in tape()) {
        let program = gen_program(&mut Tape::new(&vals), FAST);
        let _compiled = check_compiles(&program).map_err(fail)?;
    }

    /// Property 4.
    #[test]
    fn signatures_are_sane_and_blind_to_spelling(vals in tape(), seed in any::<u64>()) {
        let program = gen_program(&mut Tape::new(&vals), Knobs { program_odds: 3, ..FAST });
        check_signatures(&program, seed).map_err(fail)?;
    }

    /// Property 4, across neighbours.
    #[test]
    fn programs_that_run_differently_sign_differently(vals in tape(), more in tape()) {
        let knobs = Knobs { program_odds: 3, ..FAST };
        let a = gen_program(&mut Tape::new(&vals), knobs);
        let b = neighbour(&mut Tape::new(&more), &a, knobs);
        check_neighbours(&a, &b).map_err(fail)?;
    }

    /// Property 5.
    #[test]
    fn specs_round_trip_through_ron(vals in tape()) {
        let program = gen_program(&mut Tape::new(&vals), Knobs { program_odds: 3, ..FAST });
        check_round_trip(&program).map_err(fail)?;
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// Property 3 (three compiles per case).
    #[test]
    fn compiling_is_deterministic(vals in tape(), subset_seed in any::<u64>()) {
        let program = gen_program(&mut Tape::new(&vals), FAST);
        check_determinism(&program, subset_seed).map_err(fail)?;
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// Property 1 on mutated (mostly invalid) specs.
    #[test]
    fn mutated_specs_never_panic(vals in tape(), more in tape()) {
        let mut program = gen_program(&mut Tape::new(&vals), Knobs { max_rank_n: 16, ..FAST });
        let mut t = Tape::new(&more);
        for _ in 0..1 + t.below(3) {
            mutate(&mut t, &mut program);
        }
        check_mutated(&program).map_err(fail)?;
    }
}

/// The deep hunt: every property on bigger worlds (up to 256 ranks, 32
/// channels), more programs. `CCC_DEEP_CASES` sets the case count (default
/// 300); with `--nocapture` it prints the tally of outcomes.
#[test]
#[ignore = "deep hunt, minutes: run with --ignored"]
fn deep_hunt() {
    let cases = std::env::var("CCC_DEEP_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(&(tape(), tape(), any::<u64>()), |(vals, more, seed)| {
        let program = gen_program(&mut Tape::new(&vals), DEEP);
        let other = neighbour(&mut Tape::new(&more), &program, DEEP);
        check_determinism(&program, seed).map_err(fail)?;
        check_signatures(&program, seed).map_err(fail)?;
        check_neighbours(&program, &other).map_err(fail)?;
        check_round_trip(&program).map_err(fail)
    });
    #[allow(clippy::print_stdout)]
    {
        println!("deep hunt, {cases} cases; outcomes:\n{}", tally_text());
    }
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Minimized failures found by these properties, kept as specs: each must
/// now validate and compile (or hit a device limit).
#[test]
fn regressions_compile_or_hit_a_device_limit() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut paths: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    assert!(
        paths.iter().any(|p| p.extension().is_some_and(|e| e == "ron")),
        "no regression specs in {}",
        dir.display()
    );
    paths.sort();
    for path in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "ron")) {
        let text = std::fs::read_to_string(path).unwrap();
        let program = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())).program;
        if let Err(msg) = check_compiles(&program).and_then(|_| check_determinism(&program, 7)) {
            panic!("{}: {msg}", path.display());
        }
    }
}
