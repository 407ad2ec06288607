//! From a parsed module to a [`Program`](ccc_ir::spec::Program): every collective instruction, in
//! program order, as one ccc collective (or one per dtype, for a combined
//! collective whose operands differ in dtype).
//!
//! Program order: the entry computation's instructions in the order written
//! (a scheduled module lists them in the order they run), descending into
//! the computations an instruction runs (`call`'s `to_apply`, `while`'s
//! `condition` and `body`, `conditional`'s branches, `async-start`'s
//! `calls`, fusions) where it stands. A loop body's collectives appear once.
//! A `custom-call`'s `called_computations` are walked only to refuse a
//! collective in one: its target decides whether and how often they run.

use super::error::HloError;
use super::groups;
use super::reduce::{Combiner, combiner};
use super::target::{DEFAULT_CHANNELS, Target};
use super::text::{Attr, Computation, Instruction, Module, Shape};
use ccc_ir::enums::OpType;
use ccc_ir::spec::{Algorithm, Collective, DType, ReduceOp};
use std::collections::{BTreeMap, BTreeSet};

/// Where an imported collective came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The HLO instruction's name (`all-reduce.17`).
    pub instruction: String,
    /// Its line in the module (1-based).
    pub line: usize,
    /// For a combined collective split by dtype: which operands this one carries.
    pub part: Option<String>,
    /// The innermost `conditional` branch it sits in, if any: a run takes
    /// one branch, while the program ccc compiles runs every branch's
    /// collectives one after another (`ccc import` says so).
    pub branch: Option<Branch>,
}

/// A branch of a `conditional`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    /// The `conditional` instruction's name.
    pub conditional: String,
    /// Its line in the module (1-based).
    pub line: usize,
    /// Which branch: the position in `branch_computations`, or 0 for
    /// `true_computation` and 1 for `false_computation`.
    pub index: usize,
}

/// The collectives found, each with its source, before the program is assembled.
pub(super) type Found = Vec<(Collective, Source)>;

/// How ids in `replica_groups` and `source_target_pairs` name devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// No `channel_id`: replica ids.
    CrossReplica,
    /// `channel_id`, no `use_global_device_ids` (all-to-all, permute, broadcast): partition ids.
    CrossPartition,
    /// `channel_id`, `use_global_device_ids=false`: replica ids, all partitions of each.
    CrossReplicaAndPartition,
    /// `channel_id`, `use_global_device_ids=true`: global device ids.
    FlattenedId,
}

/// The module's device space: `replica_count` x `num_partitions`, or (when
/// the header gives neither, as lowered text) one id space of `rank_n` devices.
#[derive(Clone, Copy, Debug)]
pub(super) struct Space {
    replicas: u64,
    partitions: u64,
    /// The header named the counts (else every mode's ids are device ids).
    explicit: bool,
    /// The device count was checked against the module: named by its
    /// header, or by a Shardy mesh of `rank_n` devices.
    checked: bool,
}

impl Space {
    /// Replicas times partitions: each at most `u32::MAX` ([`space`]), so
    /// the product fits.
    pub(super) fn devices(self) -> u64 {
        self.replicas * self.partitions
    }
}

/// The module's device space, checked against the target's `rank_n`.
pub(super) fn space(module: &Module<'_>, target: &Target) -> Result<Space, HloError> {
    let count = |key: &str| -> Result<Option<u64>, HloError> {
        module.header.iter().find(|a| a.key == key).map_or(Ok(None), |a| {
            // A count fits a `u32`, as `rank_n` does, so their product
            // (`Space::devices`) cannot overflow.
            a.value.parse::<u32>().ok().filter(|&n| n > 0).map(|n| Some(u64::from(n))).ok_or_else(|| {
                HloError::at(
                    a.at,
                    a.value.len(),
                    format!("`{key}={}` is not a device count", a.value),
                    format!("a whole number from 1 to {}, the most ranks a world holds", crate::validate::MAX_RANK_N),
                )
            })
        })
    };
    let (replicas, partitions) = (count("replica_count")?, count("num_partitions")?);
    let rank_n = u64::from(target.topology.rank_n);
    if replicas.is_none() && partitions.is_none() {
        // Lowered text names no device count, but JAX's Shardy meshes do:
        // a module for 8 devices read on a target of 64 ranks would be
        // read as 64 devices' (its permutes taken as they stand, its
        // groups refused as leaving devices out).
        let mesh = sdy_mesh_devices(module);
        if let Some((at, devices)) = mesh
            && devices != rank_n
        {
            return Err(HloError::at(
                at,
                SDY_MESH.len(),
                format!(
                    "the module's Shardy mesh (`xla.sdy.meshes`) has {} but the target has rank_n {rank_n}",
                    ccc_ir::noun::count(devices, "device")
                ),
                format!("accepted: a target of topology.rank_n {devices}, the mesh's device count"),
            ));
        }
        return Ok(Space { replicas: 1, partitions: rank_n, explicit: false, checked: mesh.is_some() });
    }
    let space =
        Space { replicas: replicas.unwrap_or(1), partitions: partitions.unwrap_or(1), explicit: true, checked: true };
    if space.devices() != rank_n {
        let at =
            module.header.iter().find(|a| a.key == "num_partitions" || a.key == "replica_count").map_or(0, |a| a.at);
        return Err(HloError::at(
            at,
            0,
            format!(
                "the module runs on {} ({} x {}) but the target has rank_n {rank_n}",
                ccc_ir::noun::count(space.devices(), "device"),
                ccc_ir::noun::count(space.replicas, "replica"),
                ccc_ir::noun::count(space.partitions, "partition")
            ),
            "give the target the module's device count as topology.rank_n",
        ));
    }
    Ok(space)
}

/// What opens a Shardy mesh in the header's `frontend_attributes`.
const SDY_MESH: &str = "#sdy.mesh<[";

/// The devices of the Shardy meshes a lowered module's header declares
/// (`frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2,
/// "y"=4]>}}`: the product of the axis sizes), with the byte offset of the
/// first; `None` when it declares none, only meshes of no axes (a
/// maximal mesh, one device), meshes of different sizes, or sizes it
/// cannot read.
fn sdy_mesh_devices(module: &Module<'_>) -> Option<(usize, u64)> {
    let mut found: Option<(usize, u64)> = None;
    for mesh in sdy_meshes(module)? {
        let devices = mesh.axes.iter().try_fold(1u64, |n, &(_, size)| n.checked_mul(size))?;
        match found {
            None => found = Some((mesh.at, devices)),
            Some((_, d)) if d == devices => {}
            Some(_) => return None,
        }
    }
    found
}

/// A Shardy mesh of a module's header: its name, the byte offset of its
/// `#sdy.mesh<[`, and its axes (name and size), in order.
pub(super) struct SdyMesh<'a> {
    name: &'a str,
    at: usize,
    axes: Vec<(&'a str, u64)>,
}

/// The Shardy meshes of axes a module's header declares
/// (`xla.sdy.meshes={maximal_mesh_0 = #sdy.mesh<[], device_ids=[0]>, mesh
/// = #sdy.mesh<["x"=2, "y"=4]>}`), in order, a mesh of no axes (maximal,
/// one device) left out; `None` when one cannot be read.
pub(super) fn sdy_meshes<'a>(module: &Module<'a>) -> Option<Vec<SdyMesh<'a>>> {
    let Some(attrs) = module.header.iter().find(|a| a.key == "frontend_attributes") else { return Some(Vec::new()) };
    let mut meshes = Vec::new();
    for (i, _) in attrs.value.match_indices(SDY_MESH) {
        let before = attrs.value.get(..i)?.trim_end().strip_suffix('=').unwrap_or_default().trim_end();
        let name = before.get(before.rfind(['{', ',', ' ']).map_or(0, |j| j + 1)..)?;
        let axes = attrs.value.get(i + SDY_MESH.len()..)?;
        let axes = axes.get(..axes.find(']')?)?;
        if axes.trim().is_empty() {
            continue;
        }
        let axes = axes
            .split(',')
            .map(|axis| {
                let (name, size) = axis.rsplit_once('=')?;
                Some((name.trim().trim_matches('"'), size.trim().parse::<u64>().ok()?))
            })
            .collect::<Option<Vec<_>>>()?;
        meshes.push(SdyMesh { name, at: attrs.at + i, axes });
    }
    Some(meshes)
}

/// The manual region a walk is in: a `shard_map`'s body, called with its
/// operands made local (`xla.sdy.GlobalToLocalShape`, or GSPMD's
/// `SPMDFullToShardShape`), within any it is nested in.
#[derive(Clone, Debug)]
pub(super) struct Manual {
    /// The Shardy mesh axes it and the regions around it are manual over.
    axes: BTreeSet<String>,
    /// Manual over every axis of more than one device: shapes in it are
    /// one device's.
    full: bool,
    /// The innermost region that is not, as a message names it, when
    /// `full` is false.
    said: String,
}

/// What names the axes a `shard_map` is manual over, in the
/// `frontend_attributes` of JAX's `xla.sdy.GlobalToLocalShape` call
/// (`xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>"`).
const SDY_MANUAL_AXES: &str = "manual_axes{";

/// What names the mesh a Shardy sharding is over (`<@mesh, [...]>`).
const SDY_MESH_REF: &str = "<@";

/// What a collective in a partly manual shard_map is told to do instead
/// ([`Walker::manual_region`]).
const PARTLY_MANUAL_HELP: &str = "import the compiled module instead (`jax.jit(f).lower(...).compile().as_text()`, \
                                  or `--xla_dump_to`), whose shapes are per device; or make the shard_map manual \
                                  over every mesh axis";

/// The `sharding` of `instruction` when it is GSPMD's
/// `SPMDFullToShardShape` manual over some devices' subgroup and tiled
/// or replicated over more than one device besides
/// (`{devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}`);
/// `None` for any other instruction, a sharding of `{manual}` alone, or
/// one it cannot read.
fn gspmd_partly_manual<'a>(instruction: &Instruction<'a>) -> Option<Attr<'a>> {
    if instruction.custom_call_target() != Some("SPMDFullToShardShape") {
        return None;
    }
    let sharding = *instruction.attr("sharding")?;
    let value = sharding.value;
    let dims = value.get(value.find("devices=[")? + "devices=[".len()..)?;
    let dims: Vec<u64> =
        dims.get(..dims.find(']')?)?.split(',').map(|d| d.trim().parse().ok()).collect::<Option<_>>()?;
    let last = value.get(value.find("last_tile_dims={")? + "last_tile_dims={".len()..)?;
    let last: Vec<&str> = last.get(..last.find('}')?)?.split(',').map(str::trim).collect();
    let manual = dims.len().checked_sub(last.len())? + last.iter().position(|&d| d == "manual")?;
    let others = dims.iter().enumerate().filter(|&(i, _)| i != manual).fold(1u64, |n, (_, &d)| n.saturating_mul(d));
    (others > 1).then_some(sharding)
}

/// Whether `opcode` (or its async start) is all-reduce, all-gather or
/// reduce-scatter: the ops that take `use_global_device_ids`.
fn family(opcode: &str) -> bool {
    op_of(opcode).is_some_and(|op| matches!(op, OpType::AllReduce | OpType::AllGather | OpType::ReduceScatter))
}

/// What each collective opcode is in ccc: the synchronous form, or its
/// async start (`all-reduce-start`; XLA prints an `async-start` whose
/// computation is one collective in that short form too:
/// `reduce-scatter-start`, `all-to-all-start`).
fn op_of(opcode: &str) -> Option<OpType> {
    Some(match opcode.strip_suffix("-start").unwrap_or(opcode) {
        "all-reduce" => OpType::AllReduce,
        "all-gather" => OpType::AllGather,
        "reduce-scatter" => OpType::ReduceScatter,
        "all-to-all" => OpType::AllToAll,
        "collective-permute" => OpType::Permute,
        "collective-broadcast" => OpType::Broadcast,
        _ => return None,
    })
}

/// Refuses a collective's `*-done` whose operand is not that collective's
/// `*-start` in the same computation: its start is missing (a truncated
/// or hand-edited module), so a collective would be silently dropped.
fn done_has_its_start(computation: &Computation<'_>, done: &Instruction<'_>, family: &str) -> Result<(), HloError> {
    let start = format!("{family}-start");
    if family != "async" && op_of(&start).is_none() {
        return Ok(());
    }
    let operand = computation.start_of(done.operands.first().copied().unwrap_or(""));
    match computation.get(operand) {
        Some(s) if s.opcode == start => Ok(()),
        found => Err(HloError::at(
            done.opcode_at,
            done.opcode.len(),
            match found {
                Some(s) => format!(
                    "`{}` completes `{operand}` (a `{}`): its operand must be the `{start}` it completes",
                    done.name, s.opcode
                ),
                None => format!(
                    "`{}` completes `{operand}`, which computation `{}` does not define",
                    done.name, computation.name
                ),
            },
            format!("a `{}` completes the `{start}` that is its operand; the module looks truncated", done.opcode),
        )),
    }
}

/// The collective an opcode that is not XLA's seems to name (`all_reduce`,
/// `all-reduce-frobnicate`): read as any other instruction, it would be
/// dropped without a word, and the program compiled without it. `None`
/// for XLA's own opcodes (`all-reduce-start`, `reduce-scatter-update`,
/// `ragged-all-to-all`, `reduce`, ...).
fn near_collective(opcode: &str) -> Option<&'static str> {
    const FAMILIES: [&str; 6] =
        ["all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute", "collective-broadcast"];
    const ENDINGS: [&str; 4] = ["", "-start", "-update", "-done"];
    // A refused collective, in any async form, is refused as such in the
    // walk (`REFUSED`), not as a misspelling.
    let refused = ENDINGS.iter().skip(1).find_map(|end| opcode.strip_suffix(end)).unwrap_or(opcode);
    let exact = |family: &str| {
        opcode.strip_prefix(family).is_some_and(|end| ENDINGS.contains(&end)) || REFUSED.contains(&refused)
    };
    // Read without dashes and underscores, in any case: a family inside
    // it (`all_reduce`, `allreduce`, `my-all-to-all`), or one, or one of
    // its async forms, two edits away (`all-to-al`, `collective-permut`).
    // Lengths more than two apart are more than two edits apart: the
    // distance is computed only for those that are not. (Judged once per
    // distinct opcode of a module, [`refuse_misspelt`].)
    let squeezed = |s: &str| -> String {
        s.bytes().filter(|&b| b != b'-' && b != b'_').map(|b| char::from(b.to_ascii_lowercase())).collect()
    };
    let mine = squeezed(opcode);
    FAMILIES.iter().copied().find(|&family| {
        let near = ENDINGS.iter().any(|end| {
            let theirs = squeezed(&format!("{family}{end}"));
            mine.contains(&theirs)
                || (mine.len().abs_diff(theirs.len()) <= 2 && strsim::osa_distance(&mine, &theirs) <= 2)
        });
        near && !exact(family)
    })
}

/// Refuses the first instruction of `module`, in text order, whose opcode
/// is not XLA's but names a collective ([`near_collective`]): XLA's parser
/// refuses any opcode it does not know, and read as any other
/// instruction, the collective would be dropped. Run once over the text,
/// before the walk (which may visit an instruction 262,144 times), each
/// distinct opcode judged once.
///
/// # Errors
///
/// At the opcode, naming the collective it seems to be.
pub(super) fn refuse_misspelt(module: &Module<'_>) -> Result<(), HloError> {
    let mut judged: BTreeMap<&str, Option<&'static str>> = BTreeMap::new();
    for ins in module.computations.iter().flat_map(|c| &c.instructions) {
        let near = *judged.entry(ins.opcode).or_insert_with(|| near_collective(ins.opcode));
        if let Some(near) = near {
            return Err(HloError::at(
                ins.opcode_at,
                ins.opcode.len(),
                format!("`{}`: `{}` is not an XLA opcode, but names a collective ({near})", ins.name, ins.opcode),
                "the collective opcodes ccc imports: all-reduce, all-gather, reduce-scatter, all-to-all, \
                 collective-permute, collective-broadcast (each also as `-start`/`-done`); ccc refuses a \
                 misspelt one rather than drop it",
            ));
        }
    }
    Ok(())
}

/// The one `*-done` of the async start `start` (`all-reduce-start`,
/// `async-start`) in `computation`: a start with none (a truncated
/// module: XLA refuses it) or with two is refused.
fn its_done<'c, 'a>(
    computation: &'c Computation<'a>,
    start: &Instruction<'a>,
) -> Result<&'c Instruction<'a>, HloError> {
    let family = start.opcode.strip_suffix("-start").unwrap_or(start.opcode);
    let done = format!("{family}-done");
    let mut dones = computation.dones_of(start.name).filter(|d| d.opcode == done);
    match (dones.next(), dones.next()) {
        (Some(d), None) => Ok(d),
        (Some(first), Some(second)) => Err(HloError::at(
            second.at,
            second.name.len(),
            format!(
                "`{}` is a second `{done}` of `{}` (the first is `{}`) in computation `{}`",
                second.name, start.name, first.name, computation.name
            ),
            "an async operation is one start and one done; XLA does not write a start twice completed",
        )),
        (None, _) => Err(HloError::at(
            start.at,
            start.name.len(),
            format!("`{}` has no `{done}` in computation `{}`", start.name, computation.name),
            "an async operation is a start and its done; the module looks truncated",
        )),
    }
}

/// Whether `opcode`'s `to_apply` is a computation it runs where it
/// stands: a `call`, and its async form `call-start` (XLA prints an
/// `async-start` of a call so, `to_apply=` kept: TPU SparseCore offloads
/// collectives this way). A collective's `to_apply` is its reduction.
fn calls_to_apply(opcode: &str) -> bool {
    opcode == "call" || opcode == "call-start"
}

/// Opcodes of collectives ccc cannot express: refused rather than dropped.
const REFUSED: [&str; 2] = ["ragged-all-to-all", "collective-reduce"];

/// The attribute naming the computations a `custom-call` may run: its
/// target decides whether and how often, so a collective in one is
/// refused rather than imported or dropped.
const CUSTOM_CALLS: &str = "called_computations";

/// The attributes naming the computations an instruction runs where it stands.
const CALLS: [&str; 6] = ["calls", "body", "condition", "branch_computations", "true_computation", "false_computation"];

/// The algorithm of an imported collective of `op`: `--algorithm`, else the
/// target's `algorithms[op]`, else its `algorithm`, else [`default_algorithm`].
pub fn choose_algorithm(op: OpType, target: &Target, choice: Option<&Algorithm>) -> Algorithm {
    choice
        .or_else(|| target.algorithms.as_ref().and_then(|m| m.get(&op)))
        .or(target.algorithm.as_ref())
        .cloned()
        .unwrap_or_else(|| default_algorithm(op))
}

/// The algorithm chosen when neither the command line nor the target names
/// one: `Auto`, the cost model's cheapest legal choice for each collective
/// (`docs/cost-model.md`).
pub const fn default_algorithm(_op: OpType) -> Algorithm {
    Algorithm::Auto
}

/// The deepest computations may call one another (the entry is depth 0):
/// XLA nests a few levels (a `while` body's `call` of a fusion). The bound
/// keeps the recursive walk off the end of the stack on a module that is a
/// chain of thousands of `call`s.
pub const MAX_CALL_DEPTH: usize = 256;

/// How many instructions the walk may visit beyond the module's own count:
/// a computation called from two places is walked twice, so a module of a
/// few lines that calls each level's computation twice would otherwise be
/// walked 2^levels times (a 4.5 KB module of 30 levels did not finish in 20 s).
/// 2^18 covers a lowered model calling a 2,000-instruction layer 100 times.
pub const MAX_REPEATED_INSTRUCTIONS: usize = 1 << 18;

/// The importer's state while walking a module.
pub(super) struct Walker<'m, 'a> {
    pub(super) by_name: BTreeMap<&'a str, &'m Computation<'a>>,
    pub(super) target: &'m Target,
    pub(super) algorithm: Option<&'m Algorithm>,
    pub(super) space: Space,
    pub(super) found: Found,
    /// Instructions the walk may still visit (see [`MAX_REPEATED_INSTRUCTIONS`]).
    pub(super) budget: usize,
    /// The computations being walked, from the entry to the current one:
    /// a callee already on it is a cycle.
    pub(super) path: Vec<&'a str>,
    /// The same names, to look one up without reading the path.
    pub(super) on_path: BTreeSet<&'a str>,
    /// The first collective instruction met that moves nothing (a
    /// permute whose every pair is a device sending to itself, a
    /// collective of an empty tuple), for the error when no collective
    /// is left.
    pub(super) moved_nothing: Vec<Source>,
    /// The device-to-device `send` and `recv` instructions met (see
    /// [`super::Imported::transfers`]).
    pub(super) transfers: Vec<Source>,
    /// The first collective over all devices (no replica groups) in a
    /// module whose header names no device count (see
    /// [`super::Imported::assumed_devices`]).
    pub(super) assumed: Option<Source>,
    /// What each collective instruction imported, by its byte offset: an
    /// instruction in a computation called from many places is imported
    /// once and its collectives copied at each further call, not worked
    /// out again (its groups cost O(rank_n) each time).
    pub(super) imported: BTreeMap<usize, Found>,
    /// The byte offset of every newline of `src`, in order: an
    /// instruction's line is a binary search, not a count from the start.
    pub(super) newlines: Vec<usize>,
    /// The `conditional` branches being walked, outermost first.
    pub(super) branches: Vec<Branch>,
    /// The Shardy meshes of the header ([`sdy_meshes`]).
    pub(super) meshes: Vec<SdyMesh<'a>>,
    /// The manual regions being walked, outermost first ([`Manual`]).
    pub(super) manual: Vec<Manual>,
}

/// The most collectives a module may import: a program's most
/// (`function_n` is a u16; lowering refuses more), checked as the walk
/// finds them so that a small module calling itself out to many
/// collectives is refused early.
pub const MAX_COLLECTIVES: usize = u16::MAX as usize;

impl<'a> Walker<'_, 'a> {
    /// Walks `computation` in order, called through [`Walker::path`] (its
    /// length is the depth: the entry is walked with an empty path); a
    /// computation that calls itself, through any path, is refused as a
    /// cycle (and named with the computations between), one more than
    /// [`MAX_CALL_DEPTH`] deep as too deep.
    pub(super) fn walk(&mut self, computation: &Computation<'a>) -> Result<(), HloError> {
        let depth = self.path.len();
        if self.on_path.contains(computation.name) {
            let from = self.path.iter().position(|&n| n == computation.name).unwrap_or(0);
            let cycle: Vec<String> =
                self.path.iter().skip(from).chain([&computation.name]).map(|n| format!("`{n}`")).collect();
            return Err(HloError::at(
                computation.at,
                computation.name.len(),
                format!("computation `{}` calls itself: {}", computation.name, cycle.join(" calls ")),
                "HLO computations do not recurse",
            ));
        }
        if depth > MAX_CALL_DEPTH {
            return Err(HloError::at(
                computation.at,
                computation.name.len(),
                format!("computation `{}` is called {depth} calls deep from the entry computation", computation.name),
                format!("ccc follows calls at most {MAX_CALL_DEPTH} deep"),
            ));
        }
        for ins in &computation.instructions {
            self.budget = self.budget.checked_sub(1).ok_or_else(|| {
                HloError::at(
                    ins.opcode_at,
                    ins.opcode.len(),
                    format!(
                        "walking the module's calls visits more than {MAX_REPEATED_INSTRUCTIONS} instructions \
                         beyond its own (computations called from many places, each calling more); it stopped at \
                         `{}` in computation `{}`",
                        ins.name, computation.name
                    ),
                    format!(
                        "ccc walks a computation once per call; a module may repeat at most \
                         {MAX_REPEATED_INSTRUCTIONS} instructions that way"
                    ),
                )
            })?;
            // A device-to-device send or recv (not one with the host)
            // moves data between devices as no collective ccc compiles
            // does: kept to be named, never dropped unseen. (A stage that
            // only receives has a recv alone.)
            let transfer = matches!(ins.opcode, "send" | "recv");
            if transfer && ins.attr("is_host_transfer").is_none_or(|a| a.value != "true") {
                let line = self.line(ins.at);
                let branch = self.branches.last().cloned();
                self.transfers.push(Source { instruction: ins.name.to_owned(), line, part: None, branch });
            }
            if REFUSED.contains(&ins.opcode.strip_suffix("-start").unwrap_or(ins.opcode)) {
                return Err(HloError::at(
                    ins.opcode_at,
                    ins.opcode.len(),
                    format!("`{}` is a `{}`, which ccc cannot compile", ins.name, ins.opcode),
                    "ccc imports all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute and collective-broadcast",
                ));
            }
            if let Some(op) = op_of(ins.opcode) {
                // Text before SPMD partitioning (lowered, or a dump before
                // optimizations) holds a partly manual shard_map's shapes
                // global along the axes it is not manual over: its count
                // would be several devices'.
                if let Some(m) = self.manual.last().filter(|m| !m.full) {
                    return Err(HloError::at(
                        ins.at,
                        ins.name.len(),
                        format!(
                            "`{}` runs in {}: in this text its shape is still global along the others, so its count \
                             is not one device's",
                            ins.name, m.said
                        ),
                        PARTLY_MANUAL_HELP,
                    ));
                }
                self.collective(computation, ins, op)?;
            }
            // An `async-start` (whatever it wraps) is completed once, as
            // the named collective starts are (`result_shape`).
            if ins.opcode == "async-start" {
                its_done(computation, ins)?;
            }
            if let Some(family) = ins.opcode.strip_suffix("-done") {
                done_has_its_start(computation, ins, family)?;
                continue;
            }
            if ins.opcode == "async-update" {
                continue;
            }
            // Each callee, with its branch when it is one of a conditional's
            // (a custom call's are walked to find what they hold).
            let mut callees: Vec<(&str, usize, Option<usize>, bool)> = Vec::new();
            for attr in ins.attrs.iter().filter(|a| {
                CALLS.contains(&a.key) || a.key == CUSTOM_CALLS || (a.key == "to_apply" && calls_to_apply(ins.opcode))
            }) {
                let list = attr.value.trim_start_matches('{').trim_end_matches('}');
                let branch = |i: usize| match attr.key {
                    "branch_computations" => Some(i),
                    "true_computation" => Some(0),
                    "false_computation" => Some(1),
                    _ => None,
                };
                // `called_computations={}` names none (`"".split` gives one "").
                let names = list.split(',').enumerate().filter(|(_, n)| !n.trim().is_empty());
                let custom = attr.key == CUSTOM_CALLS;
                callees.extend(names.map(|(i, n)| (n.trim().trim_start_matches('%'), attr.at, branch(i), custom)));
            }
            for (name, at, branch, custom) in callees {
                let Some(&callee) = self.by_name.get(name) else {
                    return Err(HloError::at(
                        at,
                        name.len(),
                        format!("`{}` calls computation `{name}`, which the module does not define", ins.name),
                        "the module looks truncated",
                    ));
                };
                self.path.push(computation.name);
                self.on_path.insert(computation.name);
                if let Some(index) = branch {
                    let line = self.line(ins.at);
                    self.branches.push(Branch { conditional: ins.name.to_owned(), line, index });
                }
                let (found, transfers) = (self.found.len(), self.transfers.len());
                let region = (ins.opcode == "call").then(|| self.manual_region(computation, ins)).flatten();
                let entered = region.is_some();
                self.manual.extend(region);
                let walked = self.walk(callee);
                if entered {
                    self.manual.pop();
                }
                if branch.is_some() {
                    self.branches.pop();
                }
                self.path.pop();
                self.on_path.remove(computation.name);
                walked?;
                if custom {
                    let held = self.found.get(found).map(|(_, s)| s).or_else(|| self.transfers.get(transfers));
                    if let Some(held) = held {
                        return Err(HloError::at(
                            at,
                            name.len(),
                            format!(
                                "custom-call `{}` calls computation `{name}`, which holds `{}` (line {}): a custom \
                                 call's target decides whether and how often it runs what it calls, so ccc cannot \
                                 tell which collectives run",
                                ins.name, held.instruction, held.line
                            ),
                            "keep collectives out of computations a custom call runs (call them with `call`)",
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The manual region `call` enters, when an operand of it is a
    /// shard_map's operand made local: Shardy's `xla.sdy.GlobalToLocalShape`
    /// (its `manual_axes`, over the mesh its sharding names, or the
    /// module's one mesh), or GSPMD's `SPMDFullToShardShape` (its
    /// `sharding` manual over a subgroup, [`gspmd_partly_manual`], or
    /// `{manual}`); within the region walked now.
    fn manual_region(&self, computation: &Computation<'a>, call: &Instruction<'a>) -> Option<Manual> {
        let outer = self.manual.last();
        let (mut axes, outer_full) = outer.map_or((BTreeSet::new(), false), |m| (m.axes.clone(), m.full));
        for operand in &call.operands {
            let Some(made) = computation.get(operand) else { continue };
            match made.custom_call_target() {
                Some("xla.sdy.GlobalToLocalShape") => {
                    let attrs = made.attr("frontend_attributes").map_or("", |a| a.value);
                    let start = attrs.find(SDY_MANUAL_AXES)? + SDY_MANUAL_AXES.len();
                    let listed = attrs.get(start..)?;
                    let listed = listed.get(..listed.find('}')?)?;
                    let own: Vec<&str> =
                        listed.split(',').map(|a| a.trim().trim_matches(|c| c == '\\' || c == '"')).collect();
                    axes.extend(own.iter().filter(|a| !a.is_empty()).map(|a| (*a).to_owned()));
                    // The mesh its sharding names, else the module's one.
                    let named = attrs.find(SDY_MESH_REF).and_then(|i| {
                        let rest = attrs.get(i + SDY_MESH_REF.len()..)?;
                        rest.get(..rest.find([',', '>'])?)
                    });
                    let mesh = match named {
                        Some(name) => self.meshes.iter().find(|m| m.name == name),
                        None if self.meshes.len() == 1 => self.meshes.first(),
                        None => None,
                    };
                    // A mesh it cannot tell is taken as served: refused
                    // only where the text says so.
                    let missing: Vec<&str> = mesh.map_or_else(Vec::new, |m| {
                        m.axes.iter().filter(|&&(a, size)| size > 1 && !axes.contains(a)).map(|&(a, _)| a).collect()
                    });
                    let quoted = |list: &[&str]| list.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ");
                    let manual: Vec<&str> = axes.iter().map(String::as_str).collect();
                    let said = format!(
                        "a shard_map (`{}`) manual over {} but not over mesh {} {}",
                        made.name,
                        quoted(&manual),
                        if missing.len() == 1 { "axis" } else { "axes" },
                        quoted(&missing)
                    );
                    return Some(Manual { full: outer_full || missing.is_empty(), axes, said });
                }
                Some("SPMDFullToShardShape") => {
                    let partly = gspmd_partly_manual(made);
                    let said = partly.map_or_else(String::new, |sharding| {
                        format!(
                            "a shard_map (`{}`) manual over some mesh axes and not all (`SPMDFullToShardShape` with \
                             sharding `{}`)",
                            made.name, sharding.value
                        )
                    });
                    return Some(Manual { full: outer_full || partly.is_none(), axes, said });
                }
                _ => {}
            }
        }
        None
    }

    /// The 1-based line of byte offset `at` in the module.
    fn line(&self, at: usize) -> usize {
        self.newlines.partition_point(|&nl| nl < at) + 1
    }

    /// Imports one collective instruction.
    fn collective(&mut self, computation: &Computation<'a>, ins: &Instruction<'a>, op: OpType) -> Result<(), HloError> {
        let from = self.found.len();
        match self.imported.get(&ins.at) {
            // Reached again (a computation called from many places): in
            // the branch it is reached through now.
            Some(found) => {
                let branch = self.branches.last().cloned();
                self.found.extend(found.iter().cloned().map(|(c, s)| (c, Source { branch: branch.clone(), ..s })));
            }
            None => {
                self.import_collective(computation, ins, op)?;
                let found = self.found.get(from..).unwrap_or_default().to_vec();
                self.imported.insert(ins.at, found);
            }
        }
        if self.found.len() > MAX_COLLECTIVES {
            return Err(HloError::at(
                ins.at,
                ins.name.len(),
                format!("the module imports more than {MAX_COLLECTIVES} collectives (here, at `{}`)", ins.name),
                format!(
                    "a program holds at most {MAX_COLLECTIVES} collectives (function_n is 16 bits): split the module"
                ),
            ));
        }
        Ok(())
    }

    /// Imports one collective instruction the first time it is met.
    fn import_collective(
        &mut self,
        computation: &Computation<'a>,
        ins: &Instruction<'a>,
        op: OpType,
    ) -> Result<(), HloError> {
        let shape = self.result_shape(computation, ins)?;
        let mode = mode(ins, op)?;
        let reduce = if op == OpType::AllReduce || op == OpType::ReduceScatter {
            Some(combiner(&self.by_name, ins)?)
        } else {
            None
        };
        let line = self.line(ins.at);
        // The in-place form (input, output buffer and their offsets, and
        // `slice_sizes`, which XLA's parser reads it by) moves slices into
        // a buffer: not a permute of the operand, whose count ccc would
        // take from the output buffer. Several operands without
        // `slice_sizes` are a combined permute (XLA's combiner), each
        // operand sent whole.
        if op == OpType::Permute && ins.attr("slice_sizes").is_some() {
            return Err(HloError::at(
                ins.opcode_at,
                ins.opcode.len(),
                format!(
                    "`{}` is the in-place collective-permute ({} operands, `slice_sizes`), which ccc does not import",
                    ins.name,
                    ins.operands.len()
                ),
                "a collective-permute of one operand, its whole buffer sent to each target",
            ));
        }
        let (groups, peers) = if op == OpType::Permute {
            (None, Some(self.pairs(ins, mode)?))
        } else {
            (Some(self.groups(ins, mode)?), None)
        };
        let n = groups.as_ref().and_then(|g| g.first()).map_or(1, Vec::len) as u64;
        let parts = counts(ins, op, &shape, n, reduce)?;
        typed(computation, ins, op, &shape, n)?;
        if parts.is_empty() || peers.as_ref().is_some_and(Vec::is_empty) {
            let branch = self.branches.last().cloned();
            self.moved_nothing.push(Source { instruction: ins.name.to_owned(), line, part: None, branch });
        }
        let split = parts.len() > 1;
        for (dtype, reduce, count, operands) in parts {
            let Some(peers) = peers.as_ref().map_or(Some(None), |p| (!p.is_empty()).then(|| Some(p.clone()))) else {
                // Every pair was a device sending to itself: nothing moves.
                continue;
            };
            let collective = Collective {
                op,
                dtype,
                reduce,
                count,
                arch: self.target.arch,
                topology: self.target.topology,
                channels: self.target.channels.unwrap_or(DEFAULT_CHANNELS),
                algorithm: choose_algorithm(op, self.target, self.algorithm),
                root: (op == OpType::Broadcast).then_some(0),
                peer: None,
                peers,
                counts: None,
                groups: groups.clone().and_then(world_or),
                barrier: self.target.barrier,
                send_credits: self.target.send_credits,
                model: self.target.model,
            };
            let part = split.then(|| format!("the {dtype} operands {operands}"));
            let branch = self.branches.last().cloned();
            self.found.push((collective, Source { instruction: ins.name.to_owned(), line, part, branch }));
        }
        Ok(())
    }

    /// The result shape: an async start's is its done's.
    fn result_shape(&self, computation: &Computation<'a>, ins: &Instruction<'a>) -> Result<Shape, HloError> {
        match ins.opcode.strip_suffix("-start") {
            Some(_) => Ok(its_done(computation, ins)?.shape.clone()),
            None => Ok(ins.shape.clone()),
        }
    }

    /// The groups of a grouped collective as ranks, checked to partition the devices.
    fn groups(&mut self, ins: &Instruction<'a>, mode: Mode) -> Result<Vec<Vec<u32>>, HloError> {
        let attr = ins.attr("replica_groups");
        let (value, at) = attr.map_or(("{}", ins.at), |a| (a.value, a.at));
        let listed = groups::replica_groups(value, at)?;
        let s = self.space;
        let range = match mode {
            _ if !s.explicit => s.devices(),
            Mode::CrossReplica | Mode::CrossReplicaAndPartition => s.replicas,
            Mode::CrossPartition => s.partitions,
            Mode::FlattenedId => s.devices(),
        };
        // XLA's verifier: "if use_global_device_ids is set, the replica
        // groups cannot be empty".
        if listed.is_none() && mode == Mode::FlattenedId {
            return Err(HloError::at(
                attr.map_or(ins.at, |a| a.at),
                attr.map_or(ins.name.len(), |a| a.value.len()),
                format!("`{}`: use_global_device_ids=true with no replica groups", ins.name),
                "list the groups (`replica_groups={{0,1,2,3},{4,5,6,7}}`, or one of every device): XLA refuses \
                 empty ones with global device ids",
            ));
        }
        // All devices, where the header names no count: the target's.
        if listed.is_none() && !s.checked && self.assumed.is_none() {
            self.assumed =
                Some(Source { instruction: ins.name.to_owned(), line: self.line(ins.at), part: None, branch: None });
        }
        let listed = listed.unwrap_or_else(|| vec![(0..range).collect()]);
        let len = attr.map_or(ins.name.len(), |a| a.value.len());
        let fail = |message: String| {
            HloError::at(
                at,
                len,
                format!("`{}`: {message}", ins.name),
                "accepted: groups of equal size that hold every device exactly once",
            )
        };
        if let Some(id) = listed.iter().flatten().find(|&&id| id >= range) {
            // What the ids are in this mode (XLA's rules), and how many the
            // module has of them.
            let (ids, counted) = match mode {
                _ if !s.explicit => (
                    "device ids",
                    format!("{} (no replica_count or num_partitions in its header: the target's rank_n)", s.devices()),
                ),
                Mode::CrossReplica => ("replica ids (no channel_id)", format!("replica_count {}", s.replicas)),
                Mode::CrossReplicaAndPartition => (
                    "replica ids (channel_id and use_global_device_ids=false)",
                    format!("replica_count {}", s.replicas),
                ),
                Mode::CrossPartition => {
                    ("partition ids (channel_id on this op)", format!("num_partitions {}", s.partitions))
                }
                Mode::FlattenedId => (
                    "global device ids (use_global_device_ids=true)",
                    format!("replica_count x num_partitions = {}", s.devices()),
                ),
            };
            let below = if range == 1 { "only id 0".to_owned() } else { format!("ids 0 to {}", range - 1) };
            return Err(HloError::at(
                at,
                len,
                format!(
                    "`{}`: replica_groups names id {id}, but its ids are {ids}, of which the module has {counted}: \
                     {below}",
                    ins.name
                ),
                // Global ids are offered where they are not in use already and
                // the op takes them (all-reduce, all-gather, reduce-scatter).
                match s.explicit && mode != Mode::FlattenedId && family(ins.opcode) {
                    false => format!("accepted: {below}"),
                    true => format!(
                        "accepted: {below}; a group names any device by its global id with channel_id and \
                         use_global_device_ids=true"
                    ),
                },
            ));
        }
        let devices: Vec<Vec<u64>> = if !s.explicit {
            listed
        } else {
            let p = s.partitions;
            match mode {
                Mode::FlattenedId => listed,
                Mode::CrossReplica => {
                    (0..p).flat_map(|q| listed.iter().map(move |g| g.iter().map(|r| r * p + q).collect())).collect()
                }
                Mode::CrossPartition => (0..s.replicas)
                    .flat_map(|r| listed.iter().map(move |g| g.iter().map(|q| r * p + q).collect()))
                    .collect(),
                Mode::CrossReplicaAndPartition => {
                    listed.iter().map(|g| g.iter().flat_map(|r| (0..p).map(move |q| r * p + q)).collect()).collect()
                }
            }
        };
        let mut seen = vec![false; usize::try_from(s.devices()).unwrap_or(0)];
        let size = devices.first().map_or(0, Vec::len);
        for g in &devices {
            if g.len() != size {
                return Err(fail(format!("replica_groups has groups of {size} and of {} devices", g.len())));
            }
            for &d in g {
                match seen.get_mut(d as usize) {
                    Some(slot) if !*slot => *slot = true,
                    _ => return Err(fail(format!("replica_groups lists device {d} twice"))),
                }
            }
        }
        if let Some(missing) = seen.iter().position(|s| !s) {
            return Err(fail(format!(
                "replica_groups leaves device {missing} out: the groups do not partition the {} devices",
                s.devices()
            )));
        }
        devices.iter().map(|g| g.iter().map(|&d| self.rank(d)).collect()).collect()
    }

    /// The peer pairs of a collective-permute, as ranks, self-pairs dropped.
    fn pairs(&self, ins: &Instruction<'a>, mode: Mode) -> Result<Vec<(u32, u32)>, HloError> {
        let attr = ins.attr("source_target_pairs").ok_or_else(|| {
            HloError::at(
                ins.opcode_at,
                ins.opcode.len(),
                format!("`{}` has no `source_target_pairs`", ins.name),
                "a collective-permute lists `source_target_pairs={{0,1},{1,0}}`",
            )
        })?;
        let listed = groups::pairs(attr.value, attr.at)?;
        let s = self.space;
        let (range, copies): (u64, Vec<(u64, u64)>) = match mode {
            _ if !s.explicit => (s.devices(), vec![(1, 0)]),
            Mode::CrossReplica => (s.replicas, (0..s.partitions).map(|q| (s.partitions, q)).collect()),
            _ => (s.partitions, (0..s.replicas).map(|r| (1, r * s.partitions)).collect()),
        };
        if let Some(&(a, b)) = listed.iter().find(|&&(a, b)| a >= range || b >= range) {
            return Err(HloError::at(
                attr.at,
                attr.value.len(),
                format!("`{}`: source_target_pairs has {{{a},{b}}}, but the module has {range} ids", ins.name),
                "accepted: ids below the device count",
            ));
        }
        // XLA's verifier refuses a source or a target listed twice ("appears
        // more than once in instruction's source-target pairs").
        let (mut sources, mut targets) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for &(a, b) in &listed {
            let again = match (sources.insert(a), targets.insert(b)) {
                (false, _) => Some(("source", a)),
                (_, false) => Some(("target", b)),
                _ => None,
            };
            if let Some((role, id)) = again {
                return Err(HloError::at(
                    attr.at,
                    attr.value.len(),
                    format!("`{}`: source_target_pairs lists {role} {id} twice", ins.name),
                    "accepted: each id a source at most once and a target at most once (as XLA's verifier requires)",
                ));
            }
        }
        let mut out = Vec::new();
        for &(scale, offset) in &copies {
            for &(a, b) in listed.iter().filter(|(a, b)| a != b) {
                out.push((self.rank(a * scale + offset)?, self.rank(b * scale + offset)?));
            }
        }
        Ok(out)
    }

    /// The rank of device `d` (the target's `devices` map, else d).
    fn rank(&self, d: u64) -> Result<u32, HloError> {
        let d = u32::try_from(d)
            .map_err(|_| HloError::at(0, 0, format!("device {d} is out of range"), "a device id below 2^32"))?;
        match &self.target.devices {
            None => Ok(d),
            Some(map) => map.get(&d).copied().ok_or_else(|| {
                HloError::at(
                    0,
                    0,
                    format!("the target's `devices` map has no rank for device {d}"),
                    "list every device of the module in `devices`",
                )
            }),
        }
    }
}

/// One group holding every rank in order is the default: no `groups` field.
fn world_or(groups: Vec<Vec<u32>>) -> Option<Vec<Vec<u32>>> {
    let world = groups.len() == 1
        && groups.first().is_some_and(|g| g.iter().enumerate().all(|(i, &r)| i as u64 == u64::from(r)));
    (!world).then_some(groups)
}

/// The id mode of a collective, as XLA decides it from `channel_id` and
/// `use_global_device_ids` (the all-reduce family always has the latter,
/// default false; all-to-all, permute and broadcast never do).
fn mode(ins: &Instruction<'_>, op: OpType) -> Result<Mode, HloError> {
    // A channel id is a 64-bit integer (XLA's parser: "expects integer");
    // any other value is refused rather than read as "a channel given".
    let channel = match ins.attr("channel_id") {
        None => false,
        Some(a) if a.value.trim().parse::<i64>().is_ok() => true,
        Some(a) => {
            return Err(HloError::at(
                a.at,
                a.value.len(),
                format!("`{}`: channel_id={} is not a 64-bit integer", ins.name, a.value),
                "accepted: a 64-bit integer (`channel_id=1`), or no channel_id",
            ));
        }
    };
    let global = match ins.attr("use_global_device_ids") {
        None => None,
        Some(a) => match a.value {
            "true" => Some(true),
            "false" => Some(false),
            other => {
                return Err(HloError::at(
                    a.at,
                    other.len(),
                    format!("`{}`: use_global_device_ids={other} is not a boolean", ins.name),
                    "accepted: true or false",
                ));
            }
        },
    };
    let family = matches!(op, OpType::AllReduce | OpType::AllGather | OpType::ReduceScatter);
    let global = if family { Some(global.unwrap_or(false)) } else { global };
    Ok(match (channel, global) {
        (false, Some(true)) => {
            let at = ins.attr("use_global_device_ids").map_or(ins.at, |a| a.at);
            return Err(HloError::at(
                at,
                4,
                format!("`{}`: use_global_device_ids=true needs a channel_id", ins.name),
                "XLA refuses this combination too; give the collective a channel_id",
            ));
        }
        (false, _) => Mode::CrossReplica,
        (true, None) => Mode::CrossPartition,
        (true, Some(false)) => Mode::CrossReplicaAndPartition,
        (true, Some(true)) => Mode::FlattenedId,
    })
}

/// Checks that a collective's result agrees with its operands, as XLA's
/// verifier does: leaf by leaf, the same element type, and the elements
/// the op makes of the operand's (the same for an all-reduce, all-to-all
/// or permute; `n` times for an all-gather; `1/n` for a reduce-scatter),
/// since the count is read from the result. An operand the computation
/// does not define is refused (XLA's parser: "instruction does not
/// exist"), and so is a result of another number of arrays than its
/// operands (XLA's verifier pairs them one to one; ccc would read a
/// count for arrays no operand sends, or drop an operand's).
fn typed(
    computation: &Computation<'_>,
    ins: &Instruction<'_>,
    op: OpType,
    result: &Shape,
    n: u64,
) -> Result<(), HloError> {
    let mut operands: Vec<&Shape> = Vec::with_capacity(ins.operands.len());
    for name in &ins.operands {
        let Some(defined) = computation.get(name) else {
            return Err(HloError::at(
                ins.opcode_at,
                ins.opcode.len(),
                format!("`{}`: its operand `{name}` is not defined in computation `{}`", ins.name, computation.name),
                "an operand names an instruction of the same computation (XLA refuses an \
                 undefined one too)",
            ));
        };
        operands.push(&defined.shape);
    }
    let operand_leaves: Vec<&Shape> = operands.into_iter().flat_map(Shape::leaves).collect();
    let result_leaves = result.leaves();
    if operand_leaves.len() != result_leaves.len() {
        let arrays = |n: usize| ccc_ir::noun::count(n, "array");
        return Err(HloError::at(
            ins.shape_at,
            1,
            format!(
                "`{}`: its result {result} holds {}, but its operands {}",
                ins.name,
                arrays(result_leaves.len()),
                arrays(operand_leaves.len())
            ),
            "one result array per operand array, in order, as XLA's verifier requires: a module hand-edited, or \
             text a framework wrote that XLA has not compiled yet (its compile would fail here)",
        ));
    }
    for (operand, leaf) in operand_leaves.into_iter().zip(result_leaves) {
        let (Shape::Array { elem: from, dims: from_dims }, Shape::Array { elem: to, dims: to_dims }) = (operand, leaf)
        else {
            continue;
        };
        let fail = |why: String| {
            HloError::at(
                ins.shape_at,
                1,
                format!("`{}`: its result {leaf} does not fit its operand {operand}: {why}", ins.name),
                "XLA's verifier refuses this too: a module hand-edited, or text a framework wrote that XLA has not \
                 compiled yet (its compile would fail here)",
            )
        };
        if from != to {
            return Err(fail(format!("{to} is not {from}")));
        }
        let (Some(a), Some(b)) = (operand.elements(), leaf.elements()) else { continue };
        let (expected, what) = match op {
            OpType::AllGather => {
                (a.checked_mul(n), format!("an all-gather over {n} has {n} times its operand's elements"))
            }
            OpType::ReduceScatter => (
                Some(a / n.max(1)).filter(|_| a % n.max(1) == 0),
                format!("a reduce-scatter over {n} has 1/{n} of its operand's elements"),
            ),
            _ => (Some(a), "it has its operand's elements".to_owned()),
        };
        if expected != Some(b) {
            return Err(fail(what));
        }
        // With the elements right, dimension by dimension where the op
        // names one (XLA's verifier: the result is the operand with
        // dimension `d` times `n`, or over `n`), and the operand's own
        // shape otherwise.
        let along = dimension(ins).and_then(|(_, d)| d.ok());
        let mut shaped = from_dims.clone();
        let gathers = matches!(op, OpType::AllGather | OpType::ReduceScatter);
        if let (true, Some(d)) = (gathers, along) {
            let Some(x) = shaped.get_mut(d) else {
                let dims = ccc_ir::noun::count(from_dims.len(), "dimension");
                return Err(fail(format!("dimensions={{{d}}} names dimension {d}, but its operand has {dims}")));
            };
            *x = match op {
                OpType::AllGather => x.checked_mul(n),
                _ => (n > 0 && x.is_multiple_of(n)).then(|| *x / n),
            }
            .ok_or_else(|| fail(format!("dimension {d} of its operand, {x}, does not split into {n} equal parts")))?;
        }
        // (An all-gather or reduce-scatter without `dimensions` is
        // refused by `counts`.)
        let named = !gathers || along.is_some();
        if named && shaped != *to_dims {
            let expected = Shape::Array { elem: from.clone(), dims: shaped };
            let why = match (op, along) {
                (OpType::AllGather, Some(d)) => format!("an all-gather over {n} along dimension {d} makes {expected}"),
                (OpType::ReduceScatter, Some(d)) => {
                    format!("a reduce-scatter over {n} along dimension {d} makes {expected}")
                }
                _ => format!("it has its operand's shape, {expected}"),
            };
            return Err(fail(why));
        }
    }
    Ok(())
}

/// The `dimensions={d}` attribute of `ins`, with the one dimension it
/// names, when it reads as one.
fn dimension<'i, 'a>(ins: &'i Instruction<'a>) -> Option<(&'i Attr<'a>, Result<usize, std::num::ParseIntError>)> {
    ins.attr("dimensions").map(|a| (a, a.value.trim_matches(|c| c == '{' || c == '}').trim().parse::<usize>()))
}

/// One ccc collective's element type, reduce, count and the operands it carries.
type Part = (DType, Option<ReduceOp>, u64, String);

/// The counts of a collective per dtype: every leaf of the result shape
/// contributes its per-rank input elements as the op defines them; leaves
/// of one dtype are summed, dtypes kept apart in order of first appearance.
fn counts(
    ins: &Instruction<'_>,
    op: OpType,
    shape: &Shape,
    n: u64,
    reduce: Option<Combiner>,
) -> Result<Vec<Part>, HloError> {
    let leaves = shape.leaves();
    let tuple_all_to_all = op == OpType::AllToAll && matches!(shape, Shape::Tuple(_));
    if tuple_all_to_all && leaves.len() as u64 != n {
        return Err(HloError::at(
            ins.shape_at,
            1,
            format!(
                "`{}`: a tuple all-to-all over groups of {n} has {n} result arrays, one per member, not {}",
                ins.name,
                leaves.len()
            ),
            "one operand and one result array per group member",
        ));
    }
    // Its operands are the blocks sent to each member: XLA's verifier
    // requires one shape of them all ("requires the same shape for all
    // operands"); ccc would send each the first's count.
    if tuple_all_to_all && let Some(other) = leaves.iter().find(|l| Some(**l) != leaves.first().copied()) {
        let first = leaves.first().map(ToString::to_string).unwrap_or_default();
        return Err(HloError::at(
            ins.shape_at,
            1,
            format!("`{}`: a tuple all-to-all with operands of different shapes ({first} and {other})", ins.name),
            "its operands are the blocks sent to each member: one shape for them all, as XLA's verifier requires",
        ));
    }
    let dimension = dimension(ins);
    let mut parts: Vec<(DType, Option<ReduceOp>, u64, Vec<usize>)> = Vec::new();
    for (i, leaf) in leaves.iter().enumerate() {
        let Shape::Array { elem, dims } = leaf else { continue };
        let (dtype, reduce) = super::reduce::dtype(ins, elem, reduce)?;
        let too_many = || {
            HloError::at(
                ins.shape_at,
                1,
                format!("`{}` moves more than 2^64 - 1 elements per rank ({leaf})", ins.name),
                "a collective's count is a 64-bit number of elements: the shape's dimensions multiply past it",
            )
        };
        // A zero dimension empties the shape, however large the others: an
        // empty operand moves nothing and is left out (JAX lowers a psum
        // of an `f32[1,0]` so); a collective of only such is left out
        // whole, as an empty tuple is.
        if dims.contains(&0) {
            continue;
        }
        let elements = leaf.elements().ok_or_else(too_many)?;
        let split = matches!(op, OpType::AllGather | OpType::AllToAll) && !tuple_all_to_all;
        // A reduce-scatter names its dimension too (XLA's parser requires
        // `dimensions`): its result is the part, whatever its size.
        let scatter = op == OpType::ReduceScatter;
        if split || scatter {
            match &dimension {
                Some((_, Ok(d))) if dims.get(*d).is_some_and(|&size| scatter || size % n == 0) => {}
                Some((a, Ok(d))) if *d >= dims.len() => {
                    return Err(HloError::at(
                        a.at,
                        a.value.len(),
                        format!(
                            "`{}`: dimensions={} names dimension {d}, but {leaf} has {}",
                            ins.name,
                            a.value,
                            ccc_ir::noun::count(dims.len(), "dimension")
                        ),
                        match dims.len() {
                            0 => "an array to split: a scalar has no dimension".to_owned(),
                            1 => "dimensions={0}".to_owned(),
                            k => format!("a dimension of the shape, 0 to {}", k - 1),
                        },
                    ));
                }
                Some((a, Err(_))) => {
                    return Err(HloError::at(
                        a.at,
                        a.value.len(),
                        format!("`{}`: dimensions={} is not one dimension of {leaf}", ins.name, a.value),
                        match dims.len() {
                            0 => "an array to split: a scalar has no dimension".to_owned(),
                            1 => "dimensions={0}".to_owned(),
                            k => format!("one dimension of the shape, `dimensions={{d}}` with d from 0 to {}", k - 1),
                        },
                    ));
                }
                Some((a, _)) => {
                    return Err(HloError::at(
                        a.at,
                        a.value.len(),
                        format!("`{}`: dimensions={} of {leaf} does not split into {n} equal parts", ins.name, a.value),
                        "the dimension's size must be a multiple of the group size",
                    ));
                }
                None => {
                    return Err(HloError::at(
                        ins.opcode_at,
                        ins.opcode.len(),
                        format!("`{}` has no `dimensions`", ins.name),
                        "an array all-gather, all-to-all or reduce-scatter names its dimension: `dimensions={0}`",
                    ));
                }
            }
        }
        let count = match op {
            OpType::AllGather => elements / n,
            OpType::ReduceScatter => elements.checked_mul(n).ok_or_else(too_many)?,
            _ => elements,
        };
        match parts.iter_mut().find(|p| p.0 == dtype) {
            Some(p) => {
                p.2 = p.2.checked_add(count).ok_or_else(too_many)?;
                p.3.push(i);
            }
            None => parts.push((dtype, reduce, count, vec![i])),
        }
    }
    Ok(parts.into_iter().map(|(d, r, c, ops)| (d, r, c, operand_list(&ops, leaves.len()))).collect())
}

/// `0, 2 of 3`.
fn operand_list(ops: &[usize], of: usize) -> String {
    let list: Vec<String> = ops.iter().map(usize::to_string).collect();
    format!("{} of {of}", list.join(", "))
}

#[cfg(test)]
mod tests {
    use super::near_collective;

    /// XLA's own collective opcodes, and others that share words with
    /// them, are not taken for misspellings; a misspelt or made-up one
    /// names the collective it seems to be.
    #[test]
    fn misspelt_collective_opcodes_are_told_from_xlas() {
        for opcode in [
            "all-reduce",
            "all-reduce-start",
            "all-reduce-done",
            "all-gather-start",
            "reduce-scatter-update",
            "all-to-all-start",
            "collective-permute-done",
            "collective-broadcast",
            "ragged-all-to-all",
            "ragged-all-to-all-start",
            "ragged-all-to-all-done",
            "collective-reduce-start",
            "reduce",
            "reduce-precision",
            "async-start",
            "fusion",
        ] {
            assert_eq!(near_collective(opcode), None, "{opcode}");
        }
        assert_eq!(near_collective("all_reduce"), Some("all-reduce"));
        assert_eq!(near_collective("All-Gather"), Some("all-gather"));
        assert_eq!(near_collective("all-reduce-frobnicate"), Some("all-reduce"));
        assert_eq!(near_collective("collective_permute_start"), Some("collective-permute"));
        assert_eq!(near_collective("my-all-to-all"), Some("all-to-all"));
        // Without its dashes, in another case, or a letter or two off.
        assert_eq!(near_collective("allreduce"), Some("all-reduce"));
        assert_eq!(near_collective("AllReduce"), Some("all-reduce"));
        assert_eq!(near_collective("all-to-al"), Some("all-to-all"));
        assert_eq!(near_collective("collective-permut"), Some("collective-permute"));
        assert_eq!(near_collective("allgather-start"), Some("all-gather"));
        assert_eq!(near_collective("reduce-scater"), Some("reduce-scatter"));
        // XLA's other opcodes near them in letters stay theirs.
        for opcode in ["gather", "scatter", "reduce-window", "reduce", "all", "custom-call", "parameter", "add"] {
            assert_eq!(near_collective(opcode), None, "{opcode}");
        }
    }
}
