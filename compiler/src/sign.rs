//! sign: the collective signature — MD5 over a canonical, documented
//! preimage (`docs/signature.md`).
//!
//! The preimage is a list of named fields, one line each
//! (`collectives[1].count: 4194304`). It holds nothing rank-specific, so
//! every rank of one collective computes the same digest; it holds every
//! input that shapes the schedule plus a digest of the rank-invariant
//! schedule structure, so any rank that would run a different schedule
//! computes a different digest; and it is computed from parsed, normalized
//! values, so it is blind to how the RON was written. Every value is spelled
//! by this module (names, `match` arms, decimal numbers), never by Rust's
//! `Debug`, so renaming a Rust item changes no signature.
//!
//! Normalizations (each keeps every rank's bytes identical, which
//! `tests/signature.rs` checks): defaults are resolved by validation
//! (`pod_n`, `barrier`, `send_credits`); a lone collective is a program of
//! one; `peer: k` is expanded and peer pairs are sorted; no groups and one
//! group listing every rank in order are both `world`; replica groups are
//! sorted (the order groups are listed in changes nothing a rank runs; the
//! order of members inside a group does, and is kept).

use crate::schedule::{CollectivePlan, Schedule, Scope};
use crate::valid::{ValidCollective, ValidProgram};
use ccc_ir::FORMAT_VERSION;
use ccc_ir::spec::{Barrier, Leg};
use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The first line of every preimage.
pub const PREIMAGE_HEADER: &str = "ccc collective signature";

/// Group lists longer than this many ranks enter the preimage as a digest.
pub const LITERAL_GROUPS_MAX: usize = 256;

/// The fields each collective contributes, in preimage order
/// (`collectives[i].<field>`).
pub const COLLECTIVE_FIELDS: [&str; 15] = [
    "op",
    "dtype",
    "reduce",
    "count",
    "arch",
    "topology",
    "channels",
    "algorithm",
    "root",
    "peers",
    "counts",
    "groups",
    "barrier",
    "send_credits",
    "schedule",
];

/// The program-wide fields, in preimage order, before the collectives.
pub const PROGRAM_FIELDS: [&str; 2] = ["format_version", "collective_n"];

/// One named field of the preimage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// The field's path (`format_version`, `collectives[0].count`).
    pub name: String,
    /// Its canonical value.
    pub value: String,
}

/// A signature and the fields it was computed from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// The fields, in preimage order.
    pub fields: Vec<Field>,
    /// MD5 of the preimage, 32 lower-case hex digits.
    pub digest: String,
}

impl Signature {
    /// The exact bytes hashed: the header line, then `name: value` per field,
    /// each line ended by `\n`.
    pub fn preimage(&self) -> String {
        preimage_of(&self.fields)
    }
}

fn preimage_of(fields: &[Field]) -> String {
    let mut s = String::new();
    s.push_str(PREIMAGE_HEADER);
    s.push('\n');
    for f in fields {
        s.push_str(&f.name);
        s.push_str(": ");
        s.push_str(&f.value);
        s.push('\n');
    }
    s
}

/// The MD5 of a preimage, as lower-case hex.
pub fn digest_of(fields: &[Field]) -> String {
    md5_hex(preimage_of(fields).as_bytes())
}

/// MD5 of `bytes` as lower-case hex (`md5sum`'s digest; the manifest's
/// image MD5s too).
pub fn md5_hex(bytes: &[u8]) -> String {
    hex::encode(Md5::digest(bytes))
}

/// Appends `n` in decimal, as `Display` writes it (without `fmt`: the
/// preimage is most of a one-rank compile's signing).
fn push_int(s: &mut String, n: impl itoa::Integer) {
    s.push_str(itoa::Buffer::new().format(n));
}

/// `n` in decimal.
fn int(n: impl itoa::Integer) -> String {
    itoa::Buffer::new().format(n).to_owned()
}

/// Signs a program.
///
/// `schedule` is `build(valid)`'s: the two are read side by side,
/// collective by collective, and a schedule built from another program
/// signs neither (the collectives one holds past the other's are left
/// out).
pub fn sign(valid: &ValidProgram, schedule: &Schedule) -> Signature {
    let mut fields = Vec::with_capacity(PROGRAM_FIELDS.len() + COLLECTIVE_FIELDS.len() * valid.collectives().len());
    fields.push(Field { name: "format_version".into(), value: int(FORMAT_VERSION) });
    fields.push(Field { name: "collective_n".into(), value: int(valid.collectives().len()) });
    for (c, plan) in valid.collectives().iter().zip(&schedule.collectives) {
        collective_fields(valid, c, plan, &mut fields);
    }
    let digest = digest_of(&fields);
    Signature { fields, digest }
}

fn collective_fields(valid: &ValidProgram, c: &ValidCollective, plan: &CollectivePlan, out: &mut Vec<Field>) {
    let mut prefix = String::from("collectives[");
    push_int(&mut prefix, c.index());
    prefix.push_str("].");
    let mut push = |name: &str, value: String| {
        let mut full = String::with_capacity(prefix.len() + name.len());
        full.push_str(&prefix);
        full.push_str(name);
        out.push(Field { name: full, value });
    };
    let shape = valid.topology();
    push("op", c.op().name().into());
    push("dtype", c.dtype().name().into());
    push("reduce", c.reduce().map_or_else(|| "-".into(), |r| r.name().into()));
    push("count", int(c.count()));
    push("arch", valid.arch().name().into());
    let mut topology = String::from("rank_n=");
    push_int(&mut topology, shape.rank_n);
    topology.push_str(" local_rank_n=");
    push_int(&mut topology, shape.local_rank_n);
    topology.push_str(" pod_n=");
    push_int(&mut topology, shape.pod_n);
    push("topology", topology);
    push("channels", int(c.channels()));
    // An `Auto` collective signs its choice, marked as made by the model:
    // two ranks that choose differently sign differently, and diagnose can
    // tell a choice from a written algorithm (docs/signature.md).
    // A `Hier((...))` with `Auto` legs marks those legs alone:
    // `Hier(intra_reduce_scatter=Auto(Ring), inter_all_reduce=InterRdh, ...)`.
    let mut value = String::new();
    match c.auto() {
        Some(choice) if !choice.auto_legs.is_empty() => push_hier(&mut value, plan, &choice.auto_legs),
        Some(_) => {
            value.push_str("Auto(");
            push_algorithm(&mut value, plan);
            value.push(')');
        }
        None => push_algorithm(&mut value, plan),
    }
    push("algorithm", value);
    push("root", c.root().map_or_else(|| "-".into(), int));
    push("peers", peers(c));
    push("counts", counts(c));
    push("groups", groups(c, shape.rank_n));
    push("barrier", barrier(valid.barrier()).into());
    push("send_credits", int(valid.send_credits()));
    push("schedule", schedule_digest(plan));
}

/// `Ring`, or `Hier(intra_reduce_scatter=Ring, ...)` with the legs in run order.
pub fn algorithm(plan: &CollectivePlan) -> String {
    let mut s = String::new();
    push_algorithm(&mut s, plan);
    s
}

/// Appends [`algorithm`]'s spelling of `plan`'s algorithm.
fn push_algorithm(s: &mut String, plan: &CollectivePlan) {
    match plan.legs.as_slice() {
        [(None, alg)] => s.push_str(alg.name()),
        _ => push_hier(s, plan, &[]),
    }
}

/// The `Hier(...)` form of [`algorithm`], with each of `auto_legs` written
/// `leg=Auto(<choice>)`.
fn push_hier(s: &mut String, plan: &CollectivePlan, auto_legs: &[Leg]) {
    s.push_str("Hier(");
    for (i, (leg, alg)) in plan.legs.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(leg.map_or("flat", |l| l.field()));
        s.push('=');
        if leg.is_some_and(|l| auto_legs.contains(&l)) {
            s.push_str("Auto(");
            s.push_str(alg.name());
            s.push(')');
        } else {
            s.push_str(alg.name());
        }
    }
    s.push(')');
}

/// `[a, b, c]`, each item written by `item`.
fn push_list<T>(s: &mut String, items: impl IntoIterator<Item = T>, mut item: impl FnMut(&mut String, T)) {
    s.push('[');
    for (i, x) in items.into_iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        item(s, x);
    }
    s.push(']');
}

fn peers(c: &ValidCollective) -> String {
    if c.peers().is_empty() {
        return "-".into();
    }
    let mut pairs = c.peers().to_vec();
    pairs.sort_unstable();
    if pairs.len() > LITERAL_GROUPS_MAX {
        let bytes: Vec<u8> = pairs.iter().flat_map(|&(a, b)| [a.to_le_bytes(), b.to_le_bytes()]).flatten().collect();
        return format!("{} pairs, md5 {}", pairs.len(), md5_hex(&bytes));
    }
    let mut s = String::new();
    push_list(&mut s, pairs, |s, (a, b)| {
        s.push('(');
        push_int(s, a);
        s.push_str(", ");
        push_int(s, b);
        s.push(')');
    });
    s
}

fn counts(c: &ValidCollective) -> String {
    let Some(rows) = c.counts() else { return "-".into() };
    let n = rows.len();
    if n * n <= LITERAL_GROUPS_MAX {
        let mut s = String::new();
        push_list(&mut s, rows, |s, row| push_list(s, row.iter().copied(), push_int));
        return s;
    }
    let bytes: Vec<u8> = rows.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
    format!("{n}x{n} sizes, md5 {}", md5_hex(&bytes))
}

/// The replica groups: `world`, or the groups sorted (by their member
/// lists; groups are disjoint, so this is by first member), each group's
/// members in the order given.
fn groups(c: &ValidCollective, rank_n: u32) -> String {
    let Some(given) = c.groups().as_explicit() else { return "world".into() };
    let mut groups: Vec<&Vec<u32>> = given.iter().collect();
    groups.sort_unstable();
    if let [only] = groups.as_slice()
        && only.iter().copied().eq(0..rank_n)
    {
        return "world".into();
    }
    let total: usize = groups.iter().map(|g| g.len()).sum();
    if total <= LITERAL_GROUPS_MAX {
        let mut s = String::new();
        push_list(&mut s, groups, |s, g| push_list(s, g.iter().copied(), push_int));
        return s;
    }
    let bytes: Vec<u8> =
        groups.iter().flat_map(|g| g.iter().flat_map(|r| r.to_le_bytes()).chain(u32::MAX.to_le_bytes())).collect();
    format!("{} groups of {}, md5 {}", groups.len(), c.groups().size(), md5_hex(&bytes))
}

/// `Host` or `Device`: the spelling of the `barrier` field.
pub const fn barrier(barrier: Barrier) -> &'static str {
    match barrier {
        Barrier::Host => "Host",
        Barrier::Device => "Device",
    }
}

/// MD5 (lower-case hex) of [`schedule_preimage`]: the `schedule` field.
pub fn schedule_digest(plan: &CollectivePlan) -> String {
    md5_hex(schedule_preimage(plan).as_bytes())
}

/// Room for one `phase` line of [`schedule_preimage`]: most are shorter,
/// so the preimage is written without growing.
const PHASE_LINE_RESERVED: usize = 112;

/// The rank-invariant schedule structure, one line each (every line ended
/// by `\n`), as `docs/signature.md` spells it:
///
/// ```text
/// radices local=L node=N pod=P
/// steps S
/// phase <kind> alg=<Alg> leg=<leg|-> scope=<lo>..<hi> narrow=<lo>..<hi>,...|- first_step=F step_n=S
/// ```
///
/// with one `phase` line per phase, in run order, and `<kind>` as
/// [`PhaseKind`](crate::schedule::PhaseKind)'s `Display` writes it (pinned
/// by this module's tests). No spelling comes from `Debug`, so renaming a
/// Rust item changes no signature.
pub fn schedule_preimage(plan: &CollectivePlan) -> String {
    let mut s = String::with_capacity(PHASE_LINE_RESERVED * (plan.phases.len() + 1));
    let [local, node, pod] = plan.radices.0;
    s.push_str("radices local=");
    push_int(&mut s, local);
    s.push_str(" node=");
    push_int(&mut s, node);
    s.push_str(" pod=");
    push_int(&mut s, pod);
    s.push_str("\nsteps ");
    push_int(&mut s, plan.step_n);
    s.push('\n');
    for p in &plan.phases {
        s.push_str("phase ");
        let _ = write!(s, "{}", p.kind);
        s.push_str(" alg=");
        s.push_str(p.alg.name());
        s.push_str(" leg=");
        s.push_str(p.leg.map_or("-", |l| l.field()));
        s.push_str(" scope=");
        push_scope(&mut s, p.scope);
        s.push_str(" narrow=");
        if p.narrow.is_empty() {
            s.push('-');
        }
        for (i, &n) in p.narrow.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            push_scope(&mut s, n);
        }
        s.push_str(" first_step=");
        push_int(&mut s, p.first_step);
        s.push_str(" step_n=");
        push_int(&mut s, p.step_n);
        s.push('\n');
    }
    s
}

/// A scope as its digit range, `lo..hi`.
fn push_scope(s: &mut String, scope: Scope) {
    push_int(s, scope.lo);
    s.push_str("..");
    push_int(s, scope.hi);
}

#[cfg(test)]
mod tests {
    //! The preimage's fields and spellings are the documented ones. (The
    //! signature's guarantees — same on every rank, changed by every
    //! schedule-affecting field, blind to how the RON was written — are
    //! checked in `tests/signature.rs`.)

    use super::*;
    use crate::build::build;
    use crate::parse::parse;
    use crate::validate::validate;
    use ccc_ir::spec::Barrier;

    fn digest_of_text(src: &str) -> Result<String, String> {
        let parsed = parse(src).map_err(|e| format!("{e}\n{src}"))?;
        let valid = validate(&parsed.program).map_err(|e| format!("{e:?}\n{src}"))?;
        let schedule = build(&valid).map_err(|e| format!("{e}\n{src}"))?;
        Ok(sign(&valid, &schedule).digest)
    }

    #[test]
    fn the_fields_are_the_documented_ones() {
        let src = "(op: AllReduce, dtype: F32, reduce: Add, count: 64, arch: Cayman, \
                   topology: (rank_n: 4, local_rank_n: 4), channels: 1, algorithm: Ring)";
        let valid = validate(&parse(src).unwrap().program).unwrap();
        let s = sign(&valid, &build(&valid).unwrap());
        let names: Vec<&str> = s.fields.iter().map(|f| f.name.as_str()).collect();
        let mut expected: Vec<String> = PROGRAM_FIELDS.iter().map(|f| (*f).to_owned()).collect();
        expected.extend(COLLECTIVE_FIELDS.iter().map(|f| format!("collectives[0].{f}")));
        assert_eq!(names, expected);
        assert_eq!(s.digest, digest_of(&s.fields));
        assert!(s.preimage().starts_with("ccc collective signature\nformat_version: "));
        assert_eq!(s.digest.len(), 32);
        assert!(s.digest.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    /// Every pattern's spelling, pinned: a change here is a change of every
    /// signature of that pattern, and of docs/signature.md.
    #[test]
    fn the_schedule_spellings_are_the_documented_ones() {
        use crate::schedule::{PhaseKind as K, RdhMode as M};
        let expected: [(K, &str); 22] = [
            (K::RingReduceScatter { bidir: false }, "ring_reduce_scatter bidir=0"),
            (K::RingReduceScatter { bidir: true }, "ring_reduce_scatter bidir=1"),
            (K::RingAllGather { bidir: true }, "ring_all_gather bidir=1"),
            (K::RingAllReduceFused, "ring_all_reduce_fused"),
            (K::RingBroadcast { root: 3 }, "ring_broadcast root=3"),
            (K::RingReduce { root: 12 }, "ring_reduce root=12"),
            (K::RingAllToAll, "ring_all_to_all"),
            (K::DirectReduceScatter, "direct_reduce_scatter"),
            (K::DirectAllGather, "direct_all_gather"),
            (K::DirectAllReduce, "direct_all_reduce"),
            (K::DirectBroadcast { root: 0 }, "direct_broadcast root=0"),
            (K::DirectReduce { root: 5 }, "direct_reduce root=5"),
            (K::DirectAllToAll, "direct_all_to_all"),
            (K::PointToPoint, "point_to_point"),
            (K::RdhPrologue { mode: M::ReduceAll }, "rdh_prologue mode=reduce_all"),
            (K::RdhPrologue { mode: M::GatherPiece }, "rdh_prologue mode=gather_piece"),
            (K::RdhHalving { round: 2, balanced: true }, "rdh_halving round=2 balanced=1"),
            (K::RdhDoubling { round: 0, balanced: false }, "rdh_doubling round=0 balanced=0"),
            (K::RdhEpilogue { mode: M::CopyAll }, "rdh_epilogue mode=copy_all"),
            (K::RdhEpilogue { mode: M::ScatterPiece }, "rdh_epilogue mode=scatter_piece"),
            (K::BinomialBroadcast { root: 3, round: 0 }, "binomial_broadcast root=3 round=0"),
            (K::BinomialReduce { root: 1, round: 4 }, "binomial_reduce root=1 round=4"),
        ];
        for (kind, spelling) in expected {
            assert_eq!(kind.to_string(), spelling);
        }
        assert_eq!(barrier(Barrier::Host), "Host");
        assert_eq!(barrier(Barrier::Device), "Device");
    }

    /// The schedule preimage of every shipped example follows the documented
    /// grammar: `radices`, `steps`, then `phase` lines of the documented
    /// fields, with nothing of Rust's `Debug` (`{`, `[`, `(`, `:`, `,` in
    /// anything but `narrow`).
    #[test]
    fn the_schedule_preimage_has_the_documented_grammar() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "ron") {
                continue;
            }
            let src = std::fs::read_to_string(&path).unwrap();
            let valid = validate(&parse(&src).unwrap().program).unwrap();
            for plan in &build(&valid).unwrap().collectives {
                let text = schedule_preimage(plan);
                assert!(text.ends_with('\n') && !text.contains('\r'), "{}", path.display());
                let mut lines = text.lines();
                let radices = lines.next().unwrap();
                let [l, n, p] = plan.radices.0;
                assert_eq!(radices, format!("radices local={l} node={n} pod={p}"));
                assert_eq!(lines.next().unwrap(), format!("steps {}", plan.step_n));
                let mut phase_n = 0;
                for line in lines {
                    phase_n += 1;
                    assert!(!line.contains(['{', '}', '[', ']', '(', ')', ':', '"']), "{line}");
                    assert!(!line.contains("  ") && !line.ends_with(' '), "{line}");
                    let words: Vec<&str> = line.split(' ').collect();
                    assert_eq!(words[0], "phase", "{line}");
                    let keys: Vec<&str> =
                        words[words.len() - 6..].iter().map(|w| w.split_once('=').unwrap().0).collect();
                    assert_eq!(keys, ["alg", "leg", "scope", "narrow", "first_step", "step_n"], "{line}");
                    assert!(words[1].chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{line}");
                    for param in &words[2..words.len() - 6] {
                        let (key, value) = param.split_once('=').unwrap();
                        assert!(["bidir", "root", "round", "balanced", "mode"].contains(&key), "{line}");
                        assert!(!value.is_empty(), "{line}");
                    }
                }
                assert_eq!(phase_n, plan.phases.len());
                assert_eq!(schedule_digest(plan), hex::encode(Md5::digest(text.as_bytes())));
                seen += 1;
            }
        }
        assert!(seen >= 5, "examples found: {seen}");
    }

    /// The `peers`, `counts` and `groups` values of `src`'s collective 0.
    fn lists_of_text(src: &str) -> [String; 3] {
        let valid = validate(&parse(src).unwrap().program).unwrap();
        let signature = sign(&valid, &build(&valid).unwrap());
        let value = |name: &str| {
            let full = format!("collectives[0].{name}");
            signature.fields.iter().find(|f| f.name == full).unwrap().value.clone()
        };
        [value("peers"), value("counts"), value("groups")]
    }

    /// MD5 of `bytes`, lower-case hex, straight from the `md5` crate.
    fn md5_of(bytes: &[u8]) -> String {
        Md5::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Peers, counts and groups are spelled as `docs/signature.md` says,
    /// short lists literally and long ones (beyond 256 pairs, entries or
    /// ranks) as a count and the MD5 of their little-endian bytes, each
    /// expected value built here from the doc's words.
    #[test]
    fn lists_are_spelled_as_documented() {
        // Short: literal, pairs and groups sorted, members in their order.
        let peers = "[(3, 0), (0, 1), (2, 3), (1, 2)]";
        let src = format!(
            "(op: Permute, dtype: Bf16, count: 4096, arch: Cayman, topology: (rank_n: 4, local_rank_n: 4), \
             channels: 1, algorithm: Ring, peers: {peers})"
        );
        assert_eq!(lists_of_text(&src)[0], "[(0, 1), (1, 2), (2, 3), (3, 0)]");
        let src = "(op: AllGather, dtype: F32, count: 64, arch: Cayman, topology: (rank_n: 8, local_rank_n: 8), \
                   channels: 1, algorithm: Ring, groups: [[4, 5, 7, 6], [0, 1, 2, 3]])";
        assert_eq!(lists_of_text(src), ["-", "-", "[[0, 1, 2, 3], [4, 5, 7, 6]]"].map(String::from));
        let src = "(op: AllToAllV, dtype: Bf16, count: 96, arch: Cayman, topology: (rank_n: 2, local_rank_n: 2), \
                   channels: 1, algorithm: Mesh, counts: [[32, 64], [64, 32]])";
        assert_eq!(lists_of_text(src)[1], "[[32, 64], [64, 32]]");

        // Long peers: 512 pairs, sorted, each pair's two u32s little-endian.
        let n = 512u32;
        let listed: Vec<String> = (0..n).rev().map(|r| format!("({r}, {})", (r + 1) % n)).collect();
        let src = format!(
            "(op: Permute, dtype: Bf16, count: 4096, arch: Cayman, topology: (rank_n: {n}, local_rank_n: 64), \
             channels: 1, algorithm: Ring, peers: [{}])",
            listed.join(", ")
        );
        let bytes: Vec<u8> = (0..n).flat_map(|r| [r.to_le_bytes(), ((r + 1) % n).to_le_bytes()]).flatten().collect();
        assert_eq!(lists_of_text(&src)[0], format!("512 pairs, md5 {}", md5_of(&bytes)));

        // Long counts: 32x32 = 1024 entries, row by row, each a u64
        // little-endian.
        let n = 32usize;
        let row = |r: usize| (0..n).map(move |c| 64 * ((r + c) % n % 3 + 1) as u64);
        let total: u64 = row(0).sum();
        let rows: Vec<String> =
            (0..n).map(|r| format!("[{}]", row(r).map(|v| v.to_string()).collect::<Vec<_>>().join(", "))).collect();
        let src = format!(
            "(op: AllToAllV, dtype: Bf16, count: {total}, arch: Cayman, topology: (rank_n: {n}, local_rank_n: {n}), \
             channels: 1, algorithm: Mesh, counts: [{}])",
            rows.join(", ")
        );
        let bytes: Vec<u8> = (0..n).flat_map(row).flat_map(u64::to_le_bytes).collect();
        assert_eq!(lists_of_text(&src)[1], format!("32x32 sizes, md5 {}", md5_of(&bytes)));

        // Long groups: 512 ranks in 64 groups of 8, listed last first,
        // sorted, each group's members as u32s little-endian then u32::MAX.
        let groups: Vec<String> = (0..64u32)
            .rev()
            .map(|g| format!("[{}]", (0..8).map(|m| (8 * g + m).to_string()).collect::<Vec<_>>().join(", ")))
            .collect();
        let src = format!(
            "(op: AllReduce, dtype: F32, reduce: Add, count: 65536, arch: Cayman, \
             topology: (rank_n: 512, local_rank_n: 64), channels: 1, algorithm: Ring, groups: [{}])",
            groups.join(", ")
        );
        let bytes: Vec<u8> = (0..64u32)
            .flat_map(|g| (0..8).map(move |m| 8 * g + m).chain([u32::MAX]))
            .flat_map(u32::to_le_bytes)
            .collect();
        assert_eq!(lists_of_text(&src)[2], format!("64 groups of 8, md5 {}", md5_of(&bytes)));
    }

    #[test]
    fn group_order_is_normalized_member_order_is_not() {
        let spec = |groups: &str| {
            format!(
                "(op: AllGather, dtype: F32, count: 64, arch: Cayman, topology: (rank_n: 8, local_rank_n: 8), \
                 channels: 1, algorithm: Ring, groups: {groups})"
            )
        };
        let a = digest_of_text(&spec("[[0, 1, 2, 3], [4, 5, 6, 7]]")).unwrap();
        assert_eq!(digest_of_text(&spec("[[4, 5, 6, 7], [0, 1, 2, 3]]")).unwrap(), a);
        assert_ne!(digest_of_text(&spec("[[1, 0, 2, 3], [4, 5, 6, 7]]")).unwrap(), a);
        let world = digest_of_text(&spec("[[0, 1, 2, 3, 4, 5, 6, 7]]")).unwrap();
        assert_eq!(
            digest_of_text(&spec("[[0, 1, 2, 3, 4, 5, 6, 7]]").replace(", groups: [[0, 1, 2, 3, 4, 5, 6, 7]]", ""))
                .unwrap(),
            world
        );
    }
}
