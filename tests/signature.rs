#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The collective signature's guarantees (`docs/signature.md`):
//!
//! 1. identical on every rank: nothing in the preimage is rank-specific, and
//!    compiling any subset of ranks signs the same;
//! 2. different whenever any rank would run a different schedule: every
//!    schedule-affecting field of a valid spec, changed, changes the digest;
//!    two specs that sign differently differ in an input field or in some
//!    rank's bytes; two specs that sign equally emit the same bytes on every
//!    rank (which is what makes each normalization sound);
//! 3. blind to how the RON was written: a property over writings made with
//!    `ron::ser` (field order, comments, struct names, `Some(..)`, defaults
//!    written out, peer shorthand, group order, bare collective or program),
//!    and on fixtures through `ccc sign`.
//!
//! Specs are generated as values (small worlds, so the test stays fast).

use ccc_compiler::build::build;
use ccc_compiler::parse::parse;
use ccc_compiler::pipeline::{Options, compile};
use ccc_compiler::sign::{COLLECTIVE_FIELDS, PROGRAM_FIELDS, Signature, schedule_digest, schedule_preimage, sign};
use ccc_compiler::validate::validate;
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::id::Rank;
use ccc_ir::spec::{Algorithm, Barrier, Collective, DType, HierLegs, Leg, Program, ReduceOp, Topology};
use md5::{Digest, Md5};
use proptest::prelude::*;
use ron::ser::PrettyConfig;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Cases per property (small worlds: the three properties take well under a second each).
const CASES: u32 = 64;

const TOPOLOGIES: [(u32, u32, u32); 6] = [(8, 8, 1), (8, 4, 1), (4, 2, 1), (16, 4, 2), (4, 4, 1), (2, 1, 1)];
const REDUCES: [ReduceOp; 5] = [ReduceOp::Add, ReduceOp::Max, ReduceOp::Min, ReduceOp::Fma, ReduceOp::Average];

/// The ops each flat algorithm serves, as the spec table says (kept local:
/// the test should not trust the table it checks against).
fn serves(alg: AlgType, op: OpType) -> bool {
    use OpType::*;
    match alg {
        AlgType::Ring | AlgType::Mesh => true,
        AlgType::Kangaring | AlgType::BwOptMesh | AlgType::Hier => matches!(op, AllReduce | AllGather | ReduceScatter),
        AlgType::IntraRdh | AlgType::InterRdh => {
            matches!(op, AllReduce | AllGather | ReduceScatter | Broadcast | Reduce)
        }
        _ => op == AllReduce,
    }
}

fn hier_legs(op: OpType) -> &'static [Leg] {
    match op {
        OpType::AllReduce => &[Leg::IntraReduceScatter, Leg::InterAllReduce, Leg::IntraAllGather],
        OpType::AllGather => &[Leg::InterAllGather, Leg::IntraAllGather],
        OpType::ReduceScatter => &[Leg::IntraReduceScatter, Leg::InterReduceScatter],
        _ => &[],
    }
}

fn leg_choices(leg: Leg) -> &'static [AlgType] {
    use AlgType::*;
    match leg {
        Leg::IntraReduceScatter | Leg::IntraAllGather => &[Ring, Kangaring],
        Leg::InterAllReduce => {
            &[Ring, InterRdh, SingleCycleRing, Mesh, SingleStepMesh, TwoStepPodMesh, LatencyOptMesh, BwOptMesh]
        }
        Leg::InterReduceScatter | Leg::InterAllGather => &[Ring, InterRdh, Mesh, BwOptMesh],
    }
}

/// Seeds of one collective.
type Seeds = (usize, usize, u64, u32, usize, [usize; 3], u8, u32, (u8, u32));

fn seeds() -> impl Strategy<Value = Seeds> {
    (
        0..OpType::ALL.len(),
        0..DType::ALL.len(),
        1u64..2000,
        1u32..=4,
        0usize..16,
        [0usize..8, 0usize..8, 0usize..8],
        0u8..5,
        0u32..64,
        (0u8..3, 0u32..64),
    )
}

fn group_size(c: &Collective) -> u32 {
    c.groups.as_ref().map_or(c.topology.rank_n, |g| g[0].len() as u32)
}

/// A collective from seeds; validation decides whether it is kept.
fn make(t: Topology, s: Seeds) -> Collective {
    let (op_i, dtype_i, count, channels, alg_i, legs_i, groups_mode, pick, (peer_mode, peer_pick)) = s;
    let op = OpType::ALL[op_i];
    let dtype = DType::ALL[dtype_i];
    let rank_n = t.rank_n;
    let groups: Option<Vec<Vec<u32>>> = match groups_mode {
        1 if rank_n >= 2 => Some(vec![(0..rank_n / 2).collect(), (rank_n / 2..rank_n).collect()]),
        2 if rank_n >= 2 => Some((0..2).map(|g| (g..rank_n).step_by(2).collect()).collect()),
        3 => Some(
            (0..rank_n / t.local_rank_n).map(|n| (n * t.local_rank_n..(n + 1) * t.local_rank_n).collect()).collect(),
        ),
        _ => None,
    };
    let n = groups.as_ref().map_or(rank_n, |g| g[0].len() as u32);
    let flat: Vec<AlgType> = AlgType::ALL.iter().copied().filter(|&a| a != AlgType::Hier && serves(a, op)).collect();
    let algorithm = if !hier_legs(op).is_empty() && t.local_rank_n < rank_n && alg_i < 5 {
        let mut legs = HierLegs::default();
        for (k, &leg) in hier_legs(op).iter().enumerate() {
            let choices = leg_choices(leg);
            legs = legs.with(leg, choices[legs_i[k] % choices.len()]);
        }
        Algorithm::Hier(legs)
    } else {
        Algorithm::flat(flat[alg_i % flat.len()]).unwrap()
    };
    let counts: Option<Vec<Vec<u64>>> = (op == OpType::AllToAllV).then(|| {
        let base: Vec<u64> = (0..u64::from(n)).map(|j| (count + j * 7) % 13 + 1).collect();
        (0..n as usize).map(|i| (0..n as usize).map(|j| base[(i + j) % n as usize]).collect()).collect()
    });
    let count = match (&counts, op) {
        (Some(c), _) => c[0].iter().sum(),
        (None, OpType::ReduceScatter | OpType::AllToAll) => count * u64::from(n),
        _ => count,
    };
    let reduce = op.is_reducing().then(|| match REDUCES[pick as usize % 5] {
        ReduceOp::Average if !dtype.is_float() => ReduceOp::Add,
        r => r,
    });
    let k = 1 + peer_pick % n.saturating_sub(1).max(1);
    let (peer, peers) = match (op.takes_peers(), peer_mode) {
        (false, _) => (None, None),
        (true, 0) => (Some(k), None),
        (true, _) => (None, Some((0..1 + pick % n).map(|i| (i, (i + k) % n)).collect())),
    };
    Collective {
        op,
        dtype,
        reduce,
        count,
        arch: Arch::Cayman,
        topology: t,
        channels,
        algorithm,
        root: op.is_rooted().then_some(pick % n),
        peer,
        peers,
        counts,
        groups,
        barrier: None,
        send_credits: None,
        model: None,
    }
}

/// A valid program of one or two collectives.
fn program() -> impl Strategy<Value = Program> {
    (
        0..TOPOLOGIES.len(),
        proptest::collection::vec(seeds(), 1..=2),
        0..Arch::ALL.len(),
        proptest::option::of(prop_oneof![Just(Barrier::Host), Just(Barrier::Device)]),
        proptest::option::of(prop_oneof![Just(2u32), Just(5u32)]),
    )
        .prop_filter_map("valid programs only", |(t, seeds, arch, barrier, send_credits)| {
            let (rank_n, local_rank_n, pod_n) = TOPOLOGIES[t];
            let topology = Topology { rank_n, local_rank_n, pod_n };
            let collectives = seeds
                .into_iter()
                .map(|s| Collective { arch: Arch::ALL[arch], barrier, send_credits, ..make(topology, s) })
                .collect();
            let program = Program { collectives };
            signed(&program).map(|_| program)
        })
}

/// The signature of a program, if it is valid.
fn signed(p: &Program) -> Option<Signature> {
    let valid = validate(p).ok()?;
    let schedule = build(&valid).ok()?;
    Some(sign(&valid, &schedule))
}

/// One TOP_SP's images: rank, TOP_SP, and the three files.
type Images = (u32, u8, Vec<u8>, Vec<u8>, Vec<u8>);

/// Every rank's images, flattened.
fn bytes(p: &Program) -> Vec<Images> {
    let valid = validate(p).unwrap();
    let compiled = compile(&valid, &Options { ranks: Vec::new(), verify: false, ..Options::default() }).unwrap();
    compiled
        .images
        .iter()
        .flat_map(|r| {
            r.topsps
                .iter()
                .map(move |t| (r.rank.0, t.topsp.0, t.ctrl_spad.clone(), t.slot_spad.clone(), t.neff_configs.to_vec()))
        })
        .collect()
}

/// The input fields (everything but the schedule digests).
fn inputs(s: &Signature) -> Vec<(String, String)> {
    s.fields.iter().filter(|f| !f.name.ends_with(".schedule")).map(|f| (f.name.clone(), f.value.clone())).collect()
}

/// Applies `f` to every collective (settings all collectives share).
fn all(p: &Program, f: impl Fn(&mut Collective)) -> Program {
    let mut q = p.clone();
    q.collectives.iter_mut().for_each(f);
    q
}

/// Applies `f` to collective `k`.
fn one(p: &Program, k: usize, f: impl FnOnce(&mut Collective)) -> Program {
    let mut q = p.clone();
    f(&mut q.collectives[k]);
    q
}

/// Every single-field change of a program that should change what some
/// rank runs, named for the failure message. Not all of them are valid;
/// the caller keeps those that are.
fn mutations(p: &Program) -> Vec<(String, Program)> {
    let mut out: Vec<(String, Program)> = Vec::new();
    let first = &p.collectives[0];
    for &arch in &Arch::ALL {
        if arch != first.arch {
            out.push((format!("arch {arch}"), all(p, |c| c.arch = arch)));
        }
    }
    let t = first.topology;
    for local in [1, 2, 4, 8, 16] {
        if local != t.local_rank_n {
            out.push((format!("local_rank_n {local}"), all(p, |c| c.topology.local_rank_n = local)));
        }
    }
    for pod_n in [1, 2] {
        if pod_n != t.pod_n {
            out.push((format!("pod_n {pod_n}"), all(p, |c| c.topology.pod_n = pod_n)));
        }
    }
    out.push(("rank_n doubled".into(), all(p, |c| c.topology.rank_n *= 2)));
    let barrier = match first.barrier.unwrap_or_default() {
        Barrier::Host => Barrier::Device,
        Barrier::Device => Barrier::Host,
    };
    out.push((format!("barrier {barrier:?}"), all(p, |c| c.barrier = Some(barrier))));
    let credits = if first.send_credits.unwrap_or(2) == 3 { 4 } else { 3 };
    out.push((format!("send_credits {credits}"), all(p, |c| c.send_credits = Some(credits))));

    for (k, c) in p.collectives.iter().enumerate() {
        let n = group_size(c);
        let at = |what: String| format!("collectives[{k}].{what}");
        for &op in OpType::ALL {
            if op != c.op {
                out.push((
                    at(format!("op {op}")),
                    one(p, k, |c| {
                        c.op = op;
                        c.reduce = op.is_reducing().then_some(ReduceOp::Add);
                        c.root = op.is_rooted().then_some(0);
                        (c.peer, c.peers) = if op.takes_peers() { (Some(1), None) } else { (None, None) };
                        if op != OpType::AllToAllV {
                            c.counts = None;
                        }
                    }),
                ));
            }
        }
        for &dtype in &DType::ALL {
            if dtype != c.dtype {
                out.push((at(format!("dtype {dtype}")), one(p, k, |c| c.dtype = dtype)));
            }
        }
        if c.reduce.is_some() {
            for r in REDUCES {
                if Some(r) != c.reduce {
                    out.push((at(format!("reduce {r}")), one(p, k, |c| c.reduce = Some(r))));
                }
            }
        }
        for count in [c.count + 1, c.count + u64::from(n), c.count * 2] {
            out.push((at(format!("count {count}")), one(p, k, |c| c.count = count)));
        }
        for channels in [c.channels.saturating_sub(1), c.channels + 1] {
            out.push((at(format!("channels {channels}")), one(p, k, |c| c.channels = channels)));
        }
        for &alg in AlgType::ALL {
            if alg != AlgType::Hier && Some(alg) != c.algorithm.alg_type() {
                let flat = Algorithm::flat(alg).unwrap();
                out.push((at(format!("algorithm {alg}")), one(p, k, |c| c.algorithm = flat)));
            }
        }
        if let Algorithm::Hier(legs) = &c.algorithm {
            for &leg in hier_legs(c.op) {
                for &choice in leg_choices(leg) {
                    if legs.get(leg) != Some(choice.into()) {
                        let changed = legs.clone().with(leg, choice);
                        out.push((
                            at(format!("algorithm.{leg} {choice}")),
                            one(p, k, |c| c.algorithm = Algorithm::Hier(changed)),
                        ));
                    }
                }
            }
        } else if !hier_legs(c.op).is_empty() {
            let mut legs = HierLegs::default();
            for &leg in hier_legs(c.op) {
                legs = legs.with(leg, AlgType::Ring);
            }
            out.push((at("algorithm Hier(all Ring)".into()), one(p, k, |c| c.algorithm = Algorithm::Hier(legs))));
        }
        if let Some(root) = c.root
            && n > 1
        {
            out.push((at(format!("root {}", (root + 1) % n)), one(p, k, |c| c.root = Some((root + 1) % n))));
        }
        if let Some(step) = c.peer
            && n > 2
        {
            let next = step % (n - 1).max(1) + 1;
            out.push((at(format!("peer {next}")), one(p, k, |c| c.peer = Some(next))));
        }
        if let Some(pairs) = &c.peers {
            // Drop the last pair, or (for one pair) retarget it.
            let mut fewer = pairs.clone();
            if fewer.len() > 1 {
                fewer.pop();
            } else if let Some(p0) = fewer.first_mut() {
                p0.1 = (p0.1 + 1) % n;
            }
            out.push((at("peers changed".into()), one(p, k, |c| c.peers = Some(fewer))));
        }
        if let Some(counts) = &c.counts {
            let mut swapped = counts.clone();
            if let Some(row) = swapped.first_mut()
                && let Some(j) = (1..row.len()).find(|&j| row[j] != row[0])
            {
                row.swap(0, j);
                out.push((at("counts[0] permuted".into()), one(p, k, |c| c.counts = Some(swapped))));
            }
        }
        let rank_n = c.topology.rank_n;
        let contiguous: Vec<Vec<u32>> = vec![(0..rank_n / 2).collect(), (rank_n / 2..rank_n).collect()];
        let strided: Vec<Vec<u32>> = (0..2).map(|g| (g..rank_n).step_by(2).collect()).collect();
        for (what, g) in [("contiguous halves", contiguous), ("strided halves", strided)] {
            if c.groups.as_ref() != Some(&g) {
                out.push((at(format!("groups {what}")), one(p, k, |c| c.groups = Some(g))));
            }
        }
        let mut swapped = c.groups.clone().unwrap_or_else(|| vec![(0..rank_n).collect()]);
        if swapped[0].len() >= 3 {
            swapped[0].swap(1, 2);
            out.push((at("groups member order".into()), one(p, k, |c| c.groups = Some(swapped))));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// Every rank signs the same: the signature a compile of any subset of
    /// ranks carries is the one computed without ranks, and the preimage
    /// names only the documented, rank-free fields.
    #[test]
    fn identical_on_every_rank(p in program(), pick in any::<u64>()) {
        let expected = signed(&p).unwrap();
        let valid = validate(&p).unwrap();
        let rank_n = valid.topology().rank_n;
        let subsets: Vec<Vec<Rank>> = vec![
            vec![Rank(0)],
            vec![Rank(rank_n - 1)],
            (0..rank_n).filter(|r| (pick >> (r % 64)) & 1 == 1).map(Rank).collect(),
        ];
        for ranks in subsets {
            let compiled = compile(&valid, &Options { ranks: ranks.clone(), verify: false, ..Options::default() }).unwrap();
            prop_assert_eq!(&compiled.signature, &expected, "ranks {:?}", ranks);
        }
        for f in &expected.fields {
            let known = PROGRAM_FIELDS.contains(&f.name.as_str())
                || f.name.strip_prefix("collectives[").and_then(|r| r.split_once("].")).is_some_and(|(i, key)| {
                    i.parse::<usize>().is_ok_and(|i| i < p.collectives.len()) && COLLECTIVE_FIELDS.contains(&key)
                });
            prop_assert!(known, "undocumented field {}", f.name);
            prop_assert!(!f.name.contains("rank:") && !f.name.ends_with("rank"), "rank-specific field {}", f.name);
        }
    }

    /// Every schedule-affecting change of a valid spec changes the digest;
    /// and two specs that sign differently differ in an input field, or in
    /// some rank's bytes.
    #[test]
    fn every_schedule_affecting_field_changes_the_digest(p in program()) {
        let base = signed(&p).unwrap();
        let mut tried = 0;
        for (what, q) in mutations(&p) {
            let Some(other) = signed(&q) else { continue };
            tried += 1;
            prop_assert_ne!(&other.digest, &base.digest, "{} left the digest unchanged", what);
            if inputs(&other) == inputs(&base) {
                prop_assert_ne!(bytes(&q), bytes(&p), "{}: only the schedule digest differs, yet every byte is equal", what);
            }
        }
        // count and dtype can always change.
        prop_assert!(tried >= 2);
    }

    /// Specs that are written differently but mean the same (the
    /// normalizations of docs/signature.md) sign equally, and every rank's
    /// bytes are equal too: equal signatures never hide different schedules.
    #[test]
    fn normalizations_keep_every_byte(p in program(), seed in any::<u64>()) {
        let base = signed(&p).unwrap();
        let mut q = p.clone();
        for c in &mut q.collectives {
            let n = group_size(c);
            c.barrier = Some(c.barrier.unwrap_or_default());
            c.send_credits = Some(c.send_credits.unwrap_or(2));
            if let Some(k) = c.peer.take() {
                c.peers = Some((0..n).map(|i| (i, (i + k) % n)).collect());
            }
            if let Some(pairs) = c.peers.as_mut() {
                let by = seed as usize % pairs.len().max(1);
                pairs.rotate_left(by);
                pairs.reverse();
            }
            match c.groups.as_mut() {
                Some(g) => {
                    let by = seed as usize % g.len();
                    g.rotate_left(by);
                    g.reverse();
                }
                None => c.groups = Some(vec![(0..c.topology.rank_n).collect()]),
            }
        }
        prop_assert_eq!(&signed(&q).unwrap(), &base);
        prop_assert_eq!(bytes(&q), bytes(&p));
    }
}

// ---------------------------------------------------------------------------
// Blind to how the RON was written.

/// How to write a spec out.
#[derive(Clone, Debug)]
struct Style {
    /// A permutation seed for the field order.
    order: u64,
    /// Write `Collective(` rather than `(`.
    named: bool,
    /// `// line` and `/* block */` comments between fields.
    comments: bool,
    /// `ron::ser::to_string_pretty` (else `to_string`) for values.
    pretty: bool,
    /// `Some(...)` around optional values.
    some: bool,
    /// Defaults written out (`pod_n: 1`, `barrier: Host`, `send_credits: 2`).
    defaults: bool,
    /// `Topology(...)`, `HierLegs(...)` struct names in values.
    struct_names: bool,
    /// Peer maps as `peer: k` where they are a whole shift, else explicit.
    peer_shorthand: bool,
    /// A seed to shuffle peer pairs and group order.
    shuffle: u64,
    /// No groups written as one group of every rank in order.
    world_group: bool,
    /// A one-collective program written as a bare collective.
    bare: bool,
    /// Trailing commas.
    trailing: bool,
}

fn style() -> impl Strategy<Value = Style> {
    (any::<u64>(), any::<[bool; 10]>(), any::<u64>()).prop_map(|(order, b, shuffle)| Style {
        order,
        named: b[0],
        comments: b[1],
        pretty: b[2],
        some: b[3],
        defaults: b[4],
        struct_names: b[5],
        peer_shorthand: b[6],
        shuffle,
        world_group: b[7],
        bare: b[8],
        trailing: b[9],
    })
}

/// A deterministic shuffle (xorshift), so failures reproduce.
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        items.swap(i, (seed % (i as u64 + 1)) as usize);
    }
}

fn ron<T: serde::Serialize>(value: &T, style: &Style) -> String {
    let text = if style.pretty {
        ron::ser::to_string_pretty(value, PrettyConfig::new().struct_names(style.struct_names))
    } else {
        ron::ser::to_string(value)
    };
    text.unwrap_or_default()
}

fn write_collective(c: &Collective, style: &Style) -> String {
    let opt = |text: String| if style.some { format!("Some({text})") } else { text };
    let rank_n = c.topology.rank_n;
    let n = c.groups.as_ref().map_or(rank_n, |g| g[0].len() as u32);
    let mut fields: Vec<(&str, String)> = vec![
        ("op", ron(&c.op, style)),
        ("dtype", ron(&c.dtype, style)),
        ("count", ron(&c.count, style)),
        ("arch", ron(&c.arch, style)),
        ("channels", ron(&c.channels, style)),
        ("algorithm", ron(&c.algorithm, style)),
    ];
    let t = c.topology;
    let topology = if t.pod_n == 1 && !style.defaults {
        format!("(rank_n: {}, local_rank_n: {})", t.rank_n, t.local_rank_n)
    } else {
        ron(&t, style)
    };
    fields.push(("topology", topology));
    if let Some(r) = c.reduce {
        fields.push(("reduce", opt(ron(&r, style))));
    }
    if let Some(r) = c.root {
        fields.push(("root", opt(ron(&r, style))));
    }
    let mut pairs: Option<Vec<(u32, u32)>> =
        c.peers.clone().or_else(|| c.peer.map(|k| (0..n).map(|i| (i, (i + k) % n)).collect()));
    if let Some(p) = pairs.as_mut() {
        shuffle(p, style.shuffle);
        let shift = (p.len() == n as usize).then(|| p.first().map(|&(s, t)| (t + n - s) % n)).flatten();
        match shift {
            Some(k) if style.peer_shorthand && p.iter().all(|&(s, t)| t == (s + k) % n) => {
                fields.push(("peer", opt(ron(&k, style))));
            }
            _ => fields.push(("peers", opt(ron(p, style)))),
        }
    }
    if let Some(counts) = &c.counts {
        fields.push(("counts", opt(ron(counts, style))));
    }
    match (&c.groups, style.world_group) {
        (Some(g), _) => {
            let mut g = g.clone();
            shuffle(&mut g, style.shuffle.rotate_left(7));
            fields.push(("groups", opt(ron(&g, style))));
        }
        (None, true) => fields.push(("groups", opt(ron(&vec![(0..rank_n).collect::<Vec<u32>>()], style)))),
        (None, false) => {}
    }
    match (c.barrier.unwrap_or_default(), style.defaults) {
        (Barrier::Host, false) => {}
        (b, _) => fields.push(("barrier", opt(ron(&b, style)))),
    }
    match (c.send_credits.unwrap_or(2), style.defaults) {
        (2, false) => {}
        (s, _) => fields.push(("send_credits", opt(ron(&s, style)))),
    }
    shuffle(&mut fields, style.order);
    let sep = if style.comments { ",\n    // the next field\n    " } else { ", " };
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| if style.comments { format!("{k}: /* {k} */ {v}") } else { format!("{k}: {v}") })
        .collect();
    let name = if style.named { "Collective" } else { "" };
    let trailing = if style.trailing { "," } else { "" };
    format!("{name}(\n    {}{trailing}\n)", body.join(sep))
}

fn write(p: &Program, style: &Style) -> String {
    let head = if style.comments { "// a spec written one way\n#![enable(implicit_some)]\n" } else { "" };
    match p.collectives.as_slice() {
        [only] if style.bare => {
            format!("{head}{}", write_collective(only, &Style { named: style.named, ..style.clone() }))
        }
        all => {
            let list: Vec<String> =
                all.iter().map(|c| write_collective(c, &Style { named: true, ..style.clone() })).collect();
            format!("{head}Program(collectives: [\n{}\n])\n", list.join(",\n"))
        }
    }
}

fn digest_of_text(src: &str) -> Result<String, String> {
    let parsed = parse(src).map_err(|e| format!("{e} at {}\n{src}", e.span.start))?;
    let valid = validate(&parsed.program).map_err(|e| format!("{e:?}\n{src}"))?;
    let schedule = build(&valid).map_err(|e| format!("{e}\n{src}"))?;
    Ok(sign(&valid, &schedule).digest)
}

fn digest_of_value(p: &Program) -> String {
    signed(p).unwrap().digest
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any two writings of one program sign like the value itself.
    #[test]
    fn blind_to_how_the_ron_is_written(p in program(), a in style(), b in style()) {
        let expected = digest_of_value(&p);
        let (ta, tb) = (write(&p, &a), write(&p, &b));
        prop_assert_eq!(digest_of_text(&ta), Ok(expected.clone()), "style {:?}", a);
        prop_assert_eq!(digest_of_text(&tb), Ok(expected), "style {:?}", b);
    }
}

/// Runs the built `ccc` with `args` from the repository root.
fn ccc(args: &[&str]) -> (i32, String, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_ccc")).args(args).current_dir(ROOT).env("NO_COLOR", "1").output().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn ccc_sign_is_blind_to_the_writing() {
    let (code, a, _) = ccc(&["sign", "tests/fixtures/diagnose/written/terse.ron"]);
    assert_eq!(code, 0);
    assert_eq!(a.len(), 33, "32 hex digits and a newline: {a:?}");
    let (code, b, _) = ccc(&["sign", "tests/fixtures/diagnose/written/verbose.ron"]);
    assert_eq!(code, 0);
    assert_eq!(a, b);
}

#[test]
fn compiling_other_ranks_writes_the_same_signature() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = |rank: &str| {
        let out = dir.path().join(format!("r{rank}"));
        let (code, _, err) =
            ccc(&["compile", "examples/allreduce_ring.ron", "--rank", rank, "-o", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
        (json["signature"].clone(), json["signature_fields"].clone())
    };
    let r0 = manifest("0");
    assert_eq!(manifest("5"), r0);
    let (_, sign, _) = ccc(&["sign", "examples/allreduce_ring.ron"]);
    assert_eq!(r0.0.as_str().unwrap(), sign.trim());
}

/// The example preimage in docs/signature.md is what ccc computes for the
/// shipped example, and its digest is `ccc sign`'s; the example's schedule
/// preimage is quoted too, and hashes to its `schedule` field.
#[test]
fn the_documented_example_is_current() {
    let src = std::fs::read_to_string(format!("{ROOT}/examples/allreduce_hier.ron")).unwrap();
    let valid = validate(&parse(&src).unwrap().program).unwrap();
    let schedule = build(&valid).unwrap();
    let s = sign(&valid, &schedule);
    let doc = std::fs::read_to_string(format!("{ROOT}/docs/signature.md")).unwrap();
    assert!(doc.contains(&s.preimage()), "docs/signature.md should quote the preimage:\n{}", s.preimage());
    assert!(doc.contains(&s.digest), "docs/signature.md should quote the digest {}", s.digest);
    let plan = &schedule.collectives[0];
    let lines = schedule_preimage(plan);
    assert!(
        doc.contains(&format!("```text\n{lines}```")),
        "docs/signature.md should quote the schedule preimage:\n{lines}"
    );
    let field = s.fields.iter().find(|f| f.name == "collectives[0].schedule").unwrap();
    assert_eq!(field.value, schedule_digest(plan));
    assert_eq!(field.value, hex::encode(Md5::digest(lines.as_bytes())), "the schedule field is the MD5 of its lines");
    let ccc_sign = ccc(&["sign", "examples/allreduce_hier.ron"]);
    assert_eq!(ccc_sign.1.trim(), s.digest);
    for field in PROGRAM_FIELDS.iter().chain(&COLLECTIVE_FIELDS) {
        assert!(doc.contains(&format!("`{field}`")), "docs/signature.md should document `{field}`");
    }
}
