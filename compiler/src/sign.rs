//! sign: the collective signature — MD5 over a canonical, documented
//! preimage (`docs/signature.md`).
//!
//! The preimage is a list of named fields, one line each
//! (`collectives[1].count: 4194304`). It holds nothing rank-specific, so
//! every rank of one collective computes the same digest; it holds every
//! input that shapes the schedule plus a digest of the rank-invariant
//! schedule structure, so any rank that would run a different schedule
//! computes a different digest; and it is computed from parsed, normalized
//! values, so it is blind to how the RON was written.

use crate::schedule::{CollectivePlan, Schedule};
use crate::valid::{ValidCollective, ValidProgram};
use ccc_ir::FORMAT_VERSION;
use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The first line of every preimage.
pub const PREIMAGE_HEADER: &str = "ccc collective signature";

/// Group lists longer than this many ranks enter the preimage as a digest.
pub const LITERAL_GROUPS_MAX: usize = 256;

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
    hex::encode(Md5::digest(preimage_of(fields).as_bytes()))
}

/// Signs a program.
pub fn sign(valid: &ValidProgram, schedule: &Schedule) -> Signature {
    let mut fields = vec![
        Field { name: "format_version".into(), value: FORMAT_VERSION.to_string() },
        Field { name: "collective_n".into(), value: valid.collectives().len().to_string() },
    ];
    for (c, plan) in valid.collectives().iter().zip(&schedule.collectives) {
        collective_fields(valid, c, plan, &mut fields);
    }
    let digest = digest_of(&fields);
    Signature { fields, digest }
}

fn collective_fields(valid: &ValidProgram, c: &ValidCollective, plan: &CollectivePlan, out: &mut Vec<Field>) {
    let prefix = format!("collectives[{}].", c.index());
    let mut push = |name: &str, value: String| out.push(Field { name: format!("{prefix}{name}"), value });
    let shape = valid.topology();
    push("op", c.op().name().into());
    push("dtype", c.dtype().name().into());
    push("reduce", c.reduce().map_or_else(|| "-".into(), |r| r.name().into()));
    push("count", c.count().to_string());
    push("arch", valid.arch().name().into());
    push("topology", format!("rank_n={} local_rank_n={} pod_n={}", shape.rank_n, shape.local_rank_n, shape.pod_n));
    push("channels", c.channels().to_string());
    push("algorithm", algorithm(plan));
    push("root", c.root().map_or_else(|| "-".into(), |r| r.to_string()));
    push("peers", peers(c));
    push("counts", counts(c));
    push("groups", groups(c, shape.rank_n));
    push("barrier", format!("{:?}", valid.barrier()));
    push("send_credits", valid.send_credits().to_string());
    push("schedule", schedule_digest(plan));
}

/// `Ring`, or `Hier(intra_reduce_scatter=Ring, ...)` with the legs in run order.
pub fn algorithm(plan: &CollectivePlan) -> String {
    match plan.legs.as_slice() {
        [(None, alg)] => alg.name().to_string(),
        legs => {
            let parts: Vec<String> =
                legs.iter().map(|(leg, alg)| format!("{}={}", leg.map_or("flat", |l| l.field()), alg.name())).collect();
            format!("Hier({})", parts.join(", "))
        }
    }
}

fn peers(c: &ValidCollective) -> String {
    if c.peers().is_empty() {
        return "-".into();
    }
    let mut pairs = c.peers().to_vec();
    pairs.sort_unstable();
    if pairs.len() > LITERAL_GROUPS_MAX {
        let bytes: Vec<u8> = pairs.iter().flat_map(|&(a, b)| [a.to_le_bytes(), b.to_le_bytes()]).flatten().collect();
        return format!("{} pairs, md5 {}", pairs.len(), hex::encode(Md5::digest(&bytes)));
    }
    let list: Vec<String> = pairs.iter().map(|(a, b)| format!("({a}, {b})")).collect();
    format!("[{}]", list.join(", "))
}

fn counts(c: &ValidCollective) -> String {
    let Some(rows) = c.counts() else { return "-".into() };
    let n = rows.len();
    if n * n <= LITERAL_GROUPS_MAX {
        let list: Vec<String> =
            rows.iter().map(|r| format!("[{}]", r.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))).collect();
        return format!("[{}]", list.join(", "));
    }
    let bytes: Vec<u8> = rows.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
    format!("{n}x{n} sizes, md5 {}", hex::encode(Md5::digest(&bytes)))
}

fn groups(c: &ValidCollective, rank_n: u32) -> String {
    let Some(groups) = c.groups().as_explicit() else { return "world".into() };
    let world = groups.len() == 1 && groups[0].iter().copied().eq(0..rank_n);
    if world {
        return "world".into();
    }
    let total: usize = groups.iter().map(Vec::len).sum();
    if total <= LITERAL_GROUPS_MAX {
        let list: Vec<String> = groups
            .iter()
            .map(|g| format!("[{}]", g.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")))
            .collect();
        return format!("[{}]", list.join(", "));
    }
    let bytes: Vec<u8> =
        groups.iter().flat_map(|g| g.iter().flat_map(|r| r.to_le_bytes()).chain(u32::MAX.to_le_bytes())).collect();
    format!("{} groups of {}, md5 {}", groups.len(), c.groups().size(), hex::encode(Md5::digest(&bytes)))
}

/// MD5 of the rank-invariant schedule structure: every phase's pattern,
/// algorithm, leg, scope, narrowing and step range, and the group shape.
pub fn schedule_digest(plan: &CollectivePlan) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "radices {:?}", plan.radices.0);
    let _ = writeln!(s, "steps {}", plan.step_n);
    for p in &plan.phases {
        let _ = writeln!(
            s,
            "{:?} alg={} leg={} scope={}..{} narrow={:?} first_step={} step_n={}",
            p.kind,
            p.alg.name(),
            p.leg.map_or("-", |l| l.field()),
            p.scope.lo,
            p.scope.hi,
            p.narrow.iter().map(|n| (n.lo, n.hi)).collect::<Vec<_>>(),
            p.first_step,
            p.step_n
        );
    }
    hex::encode(Md5::digest(s.as_bytes()))
}
