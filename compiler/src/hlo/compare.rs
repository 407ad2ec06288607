//! Two ranks' HLO modules compared collective by collective: which
//! instruction differs, in which attribute, and the likely cause. The
//! signature comparison of `diagnose` says *that* two ranks' schedules
//! differ; this says which line of the framework's program made them.

use super::Imported;
use ccc_ir::spec::Collective;

/// What makes two ranks' modules differ, in the words of the report.
pub const CAUSE: &str = "the ranks lowered different programs (different code, shapes, sharding or \
                         device count); every rank must run the same compiled module";

/// One difference between two modules' collectives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HloDifference {
    /// The instruction (as the first module names it; `a / b` when the names differ too).
    pub instruction: String,
    /// What differs, with each side's value (`replica_groups differ: ...`).
    pub what: String,
}

impl std::fmt::Display for HloDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.instruction, self.what)
    }
}

/// The differences between the collectives of `a` and `b`, in program order.
pub fn compare(a: &Imported, b: &Imported) -> Vec<HloDifference> {
    let mut out = Vec::new();
    let pairs = a.program.collectives.iter().zip(&a.sources).zip(b.program.collectives.iter().zip(&b.sources));
    for ((ca, sa), (cb, sb)) in pairs {
        let instruction = if sa.instruction == sb.instruction {
            sa.instruction.clone()
        } else {
            format!("{} / {}", sa.instruction, sb.instruction)
        };
        for what in fields(ca, cb) {
            out.push(HloDifference { instruction: instruction.clone(), what });
        }
    }
    let (na, nb) = (a.program.collectives.len(), b.program.collectives.len());
    if na != nb {
        let (longer, extra) = if na > nb { ("the first", &a.sources[nb..]) } else { ("the second", &b.sources[na..]) };
        let names: Vec<String> = extra.iter().map(|s| format!("`{}`", s.instruction)).collect();
        let them = if names.len() == 1 { "instruction" } else { "instructions" };
        out.push(HloDifference {
            instruction: extra.first().map_or_else(String::new, |s| s.instruction.clone()),
            what: format!(
                "{na} {} against {nb}: only {longer} module has the collective {them} {}",
                if na == 1 { "collective" } else { "collectives" },
                names.join(", ")
            ),
        });
    }
    out
}

/// What [`compare`] looks at in a module, as one value: two modules'
/// keys are equal exactly when `compare` finds no difference between them,
/// so that many modules are grouped in O(M log M), not compared in pairs.
pub fn key(m: &Imported) -> String {
    let reduce = |c: &Collective| c.reduce.map_or_else(|| "none".to_owned(), |r| r.to_string());
    m.program
        .collectives
        .iter()
        .map(|c| {
            let peers = format!("{:?}", c.peers.as_deref().unwrap_or(&[]));
            format!("{}|{}|{}|{}|{}|{peers}\n", c.op, c.dtype, c.count, reduce(c), groups(c))
        })
        .collect()
}

/// The attributes of two collectives that differ, in HLO's words.
fn fields(a: &Collective, b: &Collective) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{what} differ ({x} against {y})"));
        }
    };
    differ("opcodes", format!("{}", a.op), format!("{}", b.op));
    differ("element types", a.dtype.to_string(), b.dtype.to_string());
    differ("shapes (elements per rank)", a.count.to_string(), b.count.to_string());
    let reduce = |c: &Collective| c.reduce.map_or_else(|| "none".to_owned(), |r| r.to_string());
    differ("to_apply reductions", reduce(a), reduce(b));
    differ("replica_groups", groups(a), groups(b));
    differ(
        "source_target_pairs",
        format!("{:?}", a.peers.as_deref().unwrap_or(&[])),
        format!("{:?}", b.peers.as_deref().unwrap_or(&[])),
    );
    out
}

/// A collective's groups as ranks (`all N ranks` for the one default group).
fn groups(c: &Collective) -> String {
    c.groups.as_ref().map_or_else(|| format!("all {} ranks", c.topology.rank_n), |g| format!("{g:?}"))
}
