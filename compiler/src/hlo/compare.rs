//! Two ranks' HLO modules compared collective by collective: which
//! instruction differs, in which attribute, and the likely cause. The
//! signature comparison of `diagnose` says *that* two ranks' schedules
//! differ; this says which line of the framework's program made them.

use super::Imported;
use crate::diagnose::align::Edit;
use crate::diagnose::fields::Coll;
use ccc_ir::spec::Collective;
use std::collections::BTreeMap;

/// What makes two ranks' modules differ, in the words of the report.
pub const CAUSE: &str = "the ranks lowered different programs (different code, shapes, sharding or \
                         device count); every rank must run the same compiled module";

/// What makes two modules differ when one is lowered text (before XLA's
/// passes) and the other compiled, in the words of the report.
pub const STAGES: &str = "one module is lowered text (its header names no device count: before XLA's passes) and \
                          the other compiled: XLA's passes combine, convert and reschedule collectives, so the two \
                          differ whatever the ranks run; compare the compiled text of every rank (`.compile().as_text()`, \
                          or `--xla_dump_to`'s after-optimizations module)";

/// What the `HloModule` line of a module says of its devices
/// ([`header_devices`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderDevices {
    /// It names neither `replica_count` nor `num_partitions` (lowered
    /// text), or there is no such line.
    Unnamed,
    /// `replica_count` x `num_partitions` (a missing one 1).
    Devices(u64),
    /// A count that is not a whole number from 1 to `u32::MAX`: the
    /// importer's to refuse, with its message.
    Unreadable,
}

/// What the `HloModule` line of `src` says of its devices: a plain scan of
/// the line, read before (or without) importing the module, by the
/// importer's rule for a count (a whole number from 1 to `u32::MAX`). A
/// leading byte-order mark is skipped, as the importer skips it.
pub fn header_devices(src: &str) -> HeaderDevices {
    let Some(header) = crate::parse::strip_bom(src).lines().find(|l| l.trim_start().starts_with("HloModule")) else {
        return HeaderDevices::Unnamed;
    };
    let mut devices: Option<u64> = None;
    for word in header.split([',', ' ']) {
        let Some(value) = ["replica_count=", "num_partitions="].iter().find_map(|k| word.strip_prefix(k)) else {
            continue;
        };
        match value.parse::<u32>() {
            // Two u32 counts: the product fits.
            Ok(n) if n > 0 => devices = Some(devices.unwrap_or(1) * u64::from(n)),
            _ => return HeaderDevices::Unreadable,
        }
    }
    devices.map_or(HeaderDevices::Unnamed, HeaderDevices::Devices)
}

/// Whether the module `src` is lowered text: its `HloModule` line names
/// neither `replica_count` nor `num_partitions`, as a compiled module's
/// does.
pub fn is_lowered(src: &str) -> bool {
    header_devices(src) == HeaderDevices::Unnamed
}

/// What makes two ranks' modules name different device counts, in the
/// words of the report.
pub const DEVICE_COUNTS: &str = "the ranks were launched with different device counts (another world size or \
                                 mesh), so they compiled different modules; every rank must run one module compiled \
                                 for one device count";

/// What makes two ranks' modules hold the same collectives in another
/// order, in the words of the report.
pub const REORDERED: &str = "the ranks' modules hold the same collectives in another order (the same \
                             program scheduled differently, or collectives issued in another order); \
                             every rank must run its collectives in one order";

/// One difference between two modules' collectives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HloDifference {
    /// The instruction (as the first module names it; `a / b` when the names differ too).
    pub instruction: String,
    /// What differs, with each side's value (`replica_groups differ: ...`).
    pub what: String,
    /// The collective at another position (when every difference is
    /// one, [`REORDERED`] is the cause, not [`CAUSE`]; one that changed
    /// too is followed by a difference for each attribute).
    pub moved: bool,
}

impl std::fmt::Display for HloDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.instruction, self.what)
    }
}

/// The cause of `differences` ([`compare`]'s), in the words of the report.
pub fn cause(differences: &[HloDifference]) -> &'static str {
    if !differences.is_empty() && differences.iter().all(|d| d.moved) { REORDERED } else { CAUSE }
}

/// The differences between the collectives of `a` and `b`, in program
/// order. Modules of one program (each collective named once, half the
/// names shared) are compared by name (`by_name`). Others are aligned
/// as `diagnose` aligns two programs (`diagnose/align.rs`: equal runs
/// matched, one collective missing or extra named as such, not every
/// later one paired with its neighbour; of alignments alike, the one that
/// pairs instructions of one name); a collective missing from one place
/// and extra at another, equal in every attribute, moved, and is named
/// once with its two positions; and modules holding the same collectives
/// in an order no single move explains have each move named
/// (`reordered`).
pub fn compare(a: &Imported, b: &Imported) -> Vec<HloDifference> {
    let (ka, kb) = (attributes(a), attributes(b));
    // Two modules of one program name their collectives alike: paired by
    // name, a collective both moved and changed reads as both (aligned by
    // position, as one missing and one extra, or paired with a neighbour
    // of another op).
    if let Some(named) = by_name(a, b, &ka, &kb) {
        return named;
    }
    let aligned = compare_aligned(a, b, &ka, &kb);
    // The alignment names one move at a time; the same collectives in an
    // order no single move explains (two swapped ends) read there as
    // changed pairs. When both modules hold the same collectives, each
    // that moved is named instead.
    if cause(&aligned) == CAUSE
        && let Some(moved) = reordered(a, b, &ka, &kb)
    {
        return moved;
    }
    aligned
}

/// The differences of `a` and `b` with their collectives paired by
/// instruction name (and dtype, for a combined collective split by dtype),
/// when each module names every collective once and at least half of
/// either's names are the other's (`None` otherwise: modules of different
/// programs, or lowered against compiled text, whose passes rename). In
/// `a`'s order: each collective only `a` names, missing; each pair outside
/// the longest run kept in order, moved; each pair's attributes that
/// differ; then each only `b` names, extra, in `b`'s order.
fn by_name(a: &Imported, b: &Imported, ka: &[Attributes], kb: &[Attributes]) -> Option<Vec<HloDifference>> {
    // A combined collective split by dtype is one collective per dtype
    // under one name: paired by name and dtype (its `part` names its
    // operands, which a changed operand's dtype renumbers).
    let key = |m: &Imported| -> Option<BTreeMap<(String, ccc_ir::spec::DType), usize>> {
        let mut keys = BTreeMap::new();
        for (i, (s, c)) in m.sources.iter().zip(&m.program.collectives).enumerate() {
            if keys.insert((s.instruction.clone(), c.dtype), i).is_some() {
                return None;
            }
        }
        Some(keys)
    };
    let (names_a, names_b) = (key(a)?, key(b)?);
    let (na, nb) = (ka.len(), kb.len());
    if names_a.len() != na || names_b.len() != nb {
        return None;
    }
    // Paired by name and dtype; then a name left unpaired once in each
    // module is one collective whose dtype changed, paired by name (it
    // read as one missing and one extra).
    let mut pair_of_a: Vec<Option<usize>> = vec![None; na];
    let mut paired_b = vec![false; nb];
    for (i, (s, c)) in a.sources.iter().zip(&a.program.collectives).enumerate() {
        if let Some(&j) = names_b.get(&(s.instruction.clone(), c.dtype)) {
            pair_of_a[i] = Some(j);
            paired_b[j] = true;
        }
    }
    let lone = |m: &Imported, unpaired: &dyn Fn(usize) -> bool| {
        let mut once: BTreeMap<String, Option<usize>> = BTreeMap::new();
        for (i, s) in m.sources.iter().enumerate().filter(|&(i, _)| unpaired(i)) {
            once.entry(s.instruction.clone()).and_modify(|at| *at = None).or_insert(Some(i));
        }
        once
    };
    let lone_b = lone(b, &|j| !paired_b[j]);
    for (name, i) in lone(a, &|i| pair_of_a[i].is_none()) {
        if let (Some(i), Some(&Some(j))) = (i, lone_b.get(&name)) {
            pair_of_a[i] = Some(j);
            paired_b[j] = true;
        }
    }
    // Pairs in a's order, and the longest run of them kept in order.
    let pairs: Vec<(usize, usize)> = pair_of_a.iter().enumerate().filter_map(|(i, j)| j.map(|j| (i, j))).collect();
    let common = pairs.len();
    if common == 0 || 2 * common < na.max(nb) {
        return None;
    }
    let (ca, cb) = (as_coll(ka), as_coll(kb));
    let counts = format!("{} against {nb}", ccc_ir::noun::count(na as u64, "collective"));
    // Ranks of the pairs' positions in b, a permutation of 0..pairs.
    let mut by_b: Vec<usize> = (0..pairs.len()).collect();
    by_b.sort_by_key(|&p| pairs[p].1);
    let mut rank = vec![0; pairs.len()];
    for (r, &p) in by_b.iter().enumerate() {
        rank[p] = r;
    }
    let kept = crate::diagnose::align::longest_increasing(&rank);
    let mut out = Vec::new();
    let mut next = 0;
    for (i, s) in a.sources.iter().enumerate() {
        let name = s.instruction.clone();
        let Some(&(_, j)) = pairs.get(next).filter(|(pi, _)| *pi == i) else {
            let what = format!(
                "only the first module has this collective ({}), its {} ({counts})",
                summary(&ca[i]),
                ordinal(i)
            );
            out.push(HloDifference { instruction: name, what, moved: false });
            continue;
        };
        if !kept.contains(&next) {
            let (at, there) = (ordinal(i), ordinal(j));
            // Moved either way (`moved`, for `--json`); when it changed
            // too, the lines after it say how, and the cause is not the
            // order alone.
            let what = match ka[i] == kb[j] {
                true => format!("the same collective, {at} in the first module and {there} in the second"),
                false => format!("moved and changed: {at} in the first module and {there} in the second"),
            };
            out.push(HloDifference { instruction: name.clone(), what, moved: true });
        }
        for what in fields(&a.program.collectives[i], &b.program.collectives[j]) {
            out.push(HloDifference { instruction: name.clone(), what, moved: false });
        }
        next += 1;
    }
    for (j, s) in b.sources.iter().enumerate() {
        if !paired_b[j] {
            let what = format!(
                "only the second module has this collective ({}), its {} ({counts})",
                summary(&cb[j]),
                ordinal(j)
            );
            out.push(HloDifference { instruction: s.instruction.clone(), what, moved: false });
        }
    }
    Some(out)
}

/// The moves that make `a`'s collectives `b`'s, when the two hold the
/// same collectives in another order (`None` otherwise), as
/// [`align::reordering`](crate::diagnose::align::reordering) finds them,
/// an instruction paired with one of its own name first.
fn reordered(a: &Imported, b: &Imported, ka: &[Attributes], kb: &[Attributes]) -> Option<Vec<HloDifference>> {
    fn name(m: &Imported, i: usize) -> &str {
        m.sources.get(i).map_or("?", |s| s.instruction.as_str())
    }
    let names_a: Vec<&str> = (0..ka.len()).map(|i| name(a, i)).collect();
    let names_b: Vec<&str> = (0..kb.len()).map(|j| name(b, j)).collect();
    let moves = crate::diagnose::align::reordering(&as_coll(ka), &as_coll(kb), Some((&names_a, &names_b)))?;
    let moved = moves.into_iter().map(|(i, j)| {
        let (i, j) = (i as usize, j as usize);
        let (x, y) = (name(a, i), name(b, j));
        HloDifference {
            instruction: if x == y { x.to_owned() } else { format!("{x} / {y}") },
            what: format!("the same collective, {} in the first module and {} in the second", ordinal(i), ordinal(j)),
            moved: true,
        }
    });
    Some(moved.collect())
}

/// A collective's attributes as [`compare`] reads them.
type Attributes = Vec<(&'static str, String)>;

/// [`compare`] by alignment: equal runs matched, one move at a time.
fn compare_aligned(a: &Imported, b: &Imported, ka: &[Attributes], kb: &[Attributes]) -> Vec<HloDifference> {
    let (ca, cb) = (as_coll(ka), as_coll(kb));
    let (na, nb) = (ca.len(), cb.len());
    // `sources` is public: a caller's shorter list names what it lacks `?`.
    let named = |m: &Imported, i: usize| m.sources.get(i).map_or_else(|| "?".to_owned(), |s| s.instruction.clone());
    let name = |i: usize, j: usize| {
        let (x, y) = (named(a, i), named(b, j));
        if x == y { x } else { format!("{x} / {y}") }
    };
    // Of alignments alike but for names, the one that pairs instructions
    // of the same name: a collective inserted beside an equal one is the
    // one named as extra, not its neighbour.
    let names_a: Vec<&str> = a.sources.iter().map(|s| s.instruction.as_str()).collect();
    let names_b: Vec<&str> = b.sources.iter().map(|s| s.instruction.as_str()).collect();
    let edits = crate::diagnose::align::align_named(&ca, &cb, |i, j| names_a.get(i) != names_b.get(j));
    // Missing here and extra there, and equal: a move, named once, at its
    // end that comes first.
    let moves = crate::diagnose::align::moves(&edits, &ca, &cb);
    let counts = format!("{} against {nb}", ccc_ir::noun::count(na as u64, "collective"));
    let mut out = Vec::new();
    for (at, edit) in edits.into_iter().enumerate() {
        match edit {
            Edit::Match(..) => {}
            _ if let Some(Some(m)) = moves.get(at) => {
                if m.first {
                    let (i, j) = (m.from as usize, m.to as usize);
                    out.push(HloDifference {
                        instruction: name(i, j),
                        what: format!(
                            "the same collective, {} in the first module and {} in the second",
                            ordinal(i),
                            ordinal(j)
                        ),
                        moved: true,
                    });
                }
            }
            Edit::Changed(i, j) => {
                let (i, j) = (i as usize, j as usize);
                for what in fields(&a.program.collectives[i], &b.program.collectives[j]) {
                    out.push(HloDifference { instruction: name(i, j), what, moved: false });
                }
            }
            Edit::Missing(i, _) => {
                let i = i as usize;
                out.push(HloDifference {
                    instruction: named(a, i),
                    what: format!(
                        "only the first module has this collective ({}), its {} ({counts})",
                        summary(&ca[i]),
                        ordinal(i)
                    ),
                    moved: false,
                });
            }
            Edit::Extra(_, j) => {
                let j = j as usize;
                out.push(HloDifference {
                    instruction: named(b, j),
                    what: format!(
                        "only the second module has this collective ({}), its {} ({counts})",
                        summary(&cb[j]),
                        ordinal(j)
                    ),
                    moved: false,
                });
            }
        }
    }
    out
}

/// A collective's attributes in a few words: `AllReduce F32 x 16, groups
/// [[0, 1], [2, 3]]`.
fn summary(c: &Coll<'_>) -> String {
    let get = |k: &str| c.iter().find(|(key, _)| *key == k).map_or("", |(_, v)| *v);
    // A permute's are its pairs (its groups are the world, always).
    let (what, members) = match get("op") {
        "Permute" => ("pairs", get("peers")),
        _ => ("groups", get("groups")),
    };
    format!("{} {} x {}, {what} {members}", get("op"), get("dtype"), get("count"))
}

/// `collective 3`, counted from 0 as the reports count collectives.
fn ordinal(i: usize) -> String {
    format!("collective {i}")
}

/// Each collective of `m` as the attributes [`fields`] compares, named as
/// `diagnose`'s aligner reads them (`op` first).
fn attributes(m: &Imported) -> Vec<Attributes> {
    let reduce = |c: &Collective| c.reduce.map_or_else(|| "none".to_owned(), |r| r.to_string());
    m.program
        .collectives
        .iter()
        .map(|c| {
            vec![
                ("op", c.op.to_string()),
                ("dtype", c.dtype.to_string()),
                ("count", c.count.to_string()),
                ("reduce", reduce(c)),
                ("groups", groups(c)),
                ("peers", peers(c)),
            ]
        })
        .collect()
}

fn as_coll<'a>(attributes: &'a [Attributes]) -> Vec<Coll<'a>> {
    attributes.iter().map(|c| c.iter().map(|(k, v)| (*k, v.as_str())).collect()).collect()
}

/// What [`compare`] looks at in a module, as one value: two modules'
/// keys are equal exactly when `compare` finds no difference between them
/// (both read `attributes`, whose values hold no `|` or newline), so
/// that many modules are grouped in O(M log M), not compared in pairs.
pub fn key(m: &Imported) -> String {
    attributes(m).iter().map(|c| c.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>().join("|") + "\n").collect()
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
    differ("source_target_pairs", peers(a), peers(b));
    out
}

/// A collective's groups as ranks (`all N ranks` for the one default
/// group), in the order the signature reads them: the groups sorted (the
/// order they are listed in changes no byte), each group's members as
/// listed (their order does).
fn groups(c: &Collective) -> String {
    c.groups.as_ref().map_or_else(
        || format!("all {} ranks", c.topology.rank_n),
        |g| {
            let mut sorted: Vec<&Vec<u32>> = g.iter().collect();
            sorted.sort_unstable();
            format!("{sorted:?}")
        },
    )
}

/// A collective's `(source, target)` pairs, sorted as the signature reads
/// them (the order they are listed in changes no byte).
fn peers(c: &Collective) -> String {
    let mut pairs = c.peers.clone().unwrap_or_default();
    pairs.sort_unstable();
    format!("{pairs:?}")
}

/// What `ccc diagnose` finds of HLO modules' collectives: the groups of
/// modules whose collectives agree, the reference (the largest group, the
/// earliest of equal ones), and each other group's differences from it.
pub struct ModulesReport {
    /// Every module, by the name it was given.
    paths: Vec<String>,
    /// The groups, by position in `paths`, in the order first met.
    groups: Vec<Vec<usize>>,
    /// Which group is the reference.
    reference: usize,
    /// Each other group (by position in `groups`), its differences and
    /// their likely cause.
    compared: Vec<(usize, Vec<HloDifference>, &'static str)>,
}

/// `ccc diagnose` on HLO `modules` (each imported once, `names` as
/// given, `lowered` whether each is lowered text, [`is_lowered`]): groups the modules whose collectives agree and compares each
/// other group with the largest (the earliest of equal ones). `None` when
/// their collectives agree (the signature comparison then runs as for
/// specs).
pub fn compare_modules(names: &[String], modules: &[Imported], lowered: &[bool]) -> Option<ModulesReport> {
    // Modules whose collectives agree form a group (by one key each, in
    // the order first met); the largest (the earliest of equal ones) is
    // the reference the others are told apart from, so that one odd rank
    // among many is the one named.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for (i, module) in modules.iter().enumerate() {
        match by_key.entry(key(module)) {
            std::collections::btree_map::Entry::Occupied(g) => groups[*g.get()].push(i),
            std::collections::btree_map::Entry::Vacant(g) => {
                g.insert(groups.len());
                groups.push(vec![i]);
            }
        }
    }
    if groups.len() < 2 {
        return None;
    }
    let most = groups.iter().map(Vec::len).max().unwrap_or(0);
    let reference = groups.iter().position(|g| g.len() == most).unwrap_or(0);
    let compared = (0..groups.len())
        .filter(|&g| g != reference)
        .map(|g| {
            let differences = compare(&modules[groups[reference][0]], &modules[groups[g][0]]);
            // Lowered text against compiled: the passes between explain
            // what differs, not the ranks.
            let stage = |g: usize| groups[g].first().and_then(|&i| lowered.get(i)).copied();
            let cause = match stage(reference) != stage(g) {
                true => STAGES,
                false => cause(&differences),
            };
            (g, differences, cause)
        })
        .collect();
    Some(ModulesReport { paths: names.to_vec(), groups, reference, compared })
}

impl ModulesReport {
    /// The modules of group `g`, as given, joined by `, `.
    fn names(&self, g: &[usize]) -> String {
        g.iter().filter_map(|&i| self.paths.get(i).cloned()).collect::<Vec<_>>().join(", ")
    }

    /// The first module of group `g`.
    fn first(&self, g: usize) -> &str {
        self.groups.get(g).and_then(|g| g.first()).and_then(|&i| self.paths.get(i)).map_or("", String::as_str)
    }

    /// The report in prose, as `ccc diagnose` prints it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let most = self.groups.get(self.reference).map_or(0, Vec::len);
        if self.paths.len() > 2 {
            let tied = self.groups.iter().filter(|g| g.len() == most).count();
            let majority = self.names(self.groups.get(self.reference).map_or(&[][..], Vec::as_slice));
            out.push_str(&if most == 1 {
                format!("no two of the {} modules agree; each is compared with the first\n", self.paths.len())
            } else if tied > 1 {
                format!("no majority: {tied} groups of {most} modules agree among themselves; compared with the first: {majority}\n")
            } else {
                format!("{most} of {} modules agree: {majority}\n", self.paths.len())
            });
        }
        // One cause every group shares is said once, at the end; causes
        // that differ are said group by group.
        let shared =
            self.compared.first().map(|&(_, _, c)| c).filter(|&c| self.compared.iter().all(|&(_, _, d)| d == c));
        for (g, differences, cause) in &self.compared {
            let also = self.groups.get(*g).and_then(|g| g.get(1..)).unwrap_or_default();
            let with = if also.is_empty() { String::new() } else { format!(" (as do {})", self.names(also)) };
            out.push_str(&format!(
                "{} and {}{with} differ in their HLO collectives:\n",
                self.first(self.reference),
                self.first(*g)
            ));
            for d in differences {
                out.push_str(&format!("  {d}\n"));
            }
            if shared.is_none() {
                out.push_str(&format!("likely cause: {cause}\n"));
            }
        }
        if let Some(cause) = shared {
            out.push_str(&format!("likely cause: {cause}\n"));
        }
        out
    }

    /// The report as data, for `diagnose --json`'s `hlo` key: the
    /// reference modules, and each other group's modules, its differences
    /// (`instruction`, `what`, `moved`) and likely cause.
    pub fn json(&self) -> serde_json::Value {
        let modules = |g: usize| -> Vec<&str> {
            self.groups
                .get(g)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .filter_map(|&i| self.paths.get(i))
                .map(String::as_str)
                .collect()
        };
        let groups: Vec<serde_json::Value> = self
            .compared
            .iter()
            .map(|(g, differences, cause)| {
                let differences: Vec<serde_json::Value> = differences
                    .iter()
                    .map(|d| serde_json::json!({ "instruction": d.instruction, "what": d.what, "moved": d.moved }))
                    .collect();
                serde_json::json!({ "modules": modules(*g), "differences": differences, "cause": cause })
            })
            .collect();
        serde_json::json!({ "reference": modules(self.reference), "groups": groups })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_names_its_devices_none_or_a_count_the_importer_refuses() {
        let devices = |header: &str| header_devices(&format!("{header}\n\nENTRY e {{\n}}\n"));
        assert_eq!(devices("HloModule m, replica_count=2, num_partitions=4"), HeaderDevices::Devices(8));
        assert_eq!(devices("HloModule m, num_partitions=16"), HeaderDevices::Devices(16));
        assert_eq!(devices("HloModule m, entry_computation_layout={()->f32[]}"), HeaderDevices::Unnamed);
        assert_eq!(devices("HloModule m, num_partitions=0"), HeaderDevices::Unreadable);
        assert_eq!(devices("HloModule m, num_partitions=99999999999999999999999"), HeaderDevices::Unreadable);
        assert!(is_lowered("HloModule m\n") && !is_lowered("HloModule m, replica_count=1\n"));
        // A byte-order mark before the header: the header still read (a
        // compiled module read as lowered text blamed different programs).
        assert_eq!(devices("\u{feff}HloModule m, num_partitions=16"), HeaderDevices::Devices(16));
        assert!(!is_lowered("\u{feff}HloModule m, replica_count=1\n"));
    }
}
