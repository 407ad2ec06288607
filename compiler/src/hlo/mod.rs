//! hlo: the XLA HLO front end. Reads an HLO module as XLA prints it
//! (`--xla_dump_to`, `Lowered.as_text(dialect="hlo")`, `Compiled.as_text()`)
//! and turns its collective instructions, in program order, into a ccc
//! [`Program`] for a [`Target`] (the machine: HLO names devices, not a
//! topology).
//!
//! ```text
//!  &str ──text::parse_module──▶ Module ──import::Walker──▶ Imported { Program, Source per collective }
//! ```
//!
//! - `text` is the grammar (module, computations, one instruction per
//!   line; attribute values kept raw), with line:column errors.
//! - `groups` reads `replica_groups` in every spelling XLA prints and
//!   `source_target_pairs`.
//! - `reduce` maps element types and `to_apply` reductions.
//! - [`mod@import`] walks the module and maps each collective; its
//!   [`import::default_algorithm`] is the one place `Auto` plugs in.
//! - [`emit`] prints an [`Imported`] program as RON, each collective under
//!   a comment naming its HLO instruction.
//! - [`target`] is the target file.
//!
//! The grammar, group and reduction readers are the importer's own
//! (`pub(crate)`); a caller needs [`import()`] or [`import_module`], [`Target`]
//! and, for the CLI's views, [`emit`] and [`compare`].
//!
//! `docs/hlo.md` says what is supported and what is refused.

pub mod compare;
pub mod emit;
pub mod error;
pub(crate) mod groups;
pub mod import;
pub(crate) mod reduce;
pub mod target;
pub(crate) mod text;

pub use error::HloError;
pub use import::{Branch, Source};
pub use target::{Target, TargetError, parse_target};

use ccc_ir::spec::{Algorithm, Program};
use std::collections::{BTreeMap, BTreeSet};

/// An imported module: the program, and where each of its collectives came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The module's name (`HloModule NAME`), if it has a header.
    pub module: Option<String>,
    /// The collectives, in program order.
    pub program: Program,
    /// One per collective of `program`: its HLO instruction.
    pub sources: Vec<Source>,
    /// The collective instructions imported as nothing, because they move
    /// nothing (a collective of an empty tuple, a permute whose every pair
    /// sends a device to itself), in the order met: `ccc import` lists them
    /// in a comment, so that none is dropped unseen.
    pub moved_nothing: Vec<Source>,
    /// The device-to-device `send` and `recv` instructions (a pipeline's
    /// transfers between stages), in the order met (once for each place a
    /// computation holding one is called): no collective ccc compiles
    /// moves their data, so `ccc import` lists them in a comment and the
    /// verbs that compile a module say so.
    pub transfers: Vec<Source>,
    /// In a module whose header names no device count (lowered text,
    /// without a Shardy mesh): the first collective over all devices (no
    /// replica groups), taken to span the target's `rank_n` (the second
    /// value), which nothing in the module confirms.
    pub assumed_devices: Option<(Source, u32)>,
}

impl Imported {
    /// What of the module is not compiled as it runs, one sentence each,
    /// for a front end to show (the CLI on stderr, Python as warnings;
    /// `ccc import` writes the same as comments): collectives in branches
    /// of a `conditional` (every branch's is compiled, one after another)
    /// and device-to-device send/recv (none is).
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let branched: Vec<&Source> = self.sources.iter().filter(|s| s.branch.is_some()).collect();
        if let Some(first) = branched.first()
            && let Some(b) = &first.branch
        {
            notes.push(format!(
                "{} in branches of a `conditional` ({}, line {}, branch {} of `{}`, line {}): ccc compiles every \
                 branch's, one after another, where a run takes one branch",
                match branched.len() {
                    1 => "1 collective sits".to_owned(),
                    n => format!("{n} collectives sit"),
                },
                first.instruction,
                first.line,
                b.index,
                b.conditional,
                b.line
            ));
        }
        if let Some((first, rank_n)) = &self.assumed_devices {
            notes.push(format!(
                "the module names no device count (no replica_count or num_partitions in its header): `{}` (line \
                 {}){} over all devices, taken as the target's {rank_n} ranks; import the compiled module, whose \
                 header names the count, to have it checked",
                first.instruction,
                first.line,
                if self.sources.len() > 1 { " and any other collective" } else { "" },
            ));
        }
        if let Some(first) = self.transfers.first() {
            let (what, line) = (&first.instruction, first.line);
            notes.push(format!(
                "{}: ccc compiles collectives, not these transfers",
                match self.transfers.len() {
                    1 => format!("the device-to-device send/recv `{what}` (line {line}) is not compiled"),
                    n => format!(
                        "{n} device-to-device sends and recvs (the first `{what}`, line {line}) are not compiled"
                    ),
                }
            ));
        }
        notes
    }
}

/// The largest HLO module ccc reads: 256 MiB (a compiled dump of a large
/// model is tens of MiB). The CLI reads a module under this cap, and the
/// Python module refuses longer text.
pub const MODULE_MAX_BYTES: u64 = 256 << 20;

/// Where HLO text comes from, as a message names it.
pub const HLO_SOURCES: &str = "`Compiled.as_text()` (of `jax.jit(f).lower(...).compile()`), `Lowered.as_text(dialect=\"hlo\")`, or a \
     `--xla_dump_to` dump";

/// What ccc says of MLIR text (StableHLO, what JAX's `Lowered.as_text()`
/// gives by default), which it does not read.
pub const MLIR_TEXT: &str = "is StableHLO (MLIR) text, not an XLA HLO module: JAX's `Lowered.as_text()` gives \
                             StableHLO unless asked for HLO";

/// Does `src` look like MLIR text (`module @jit_f attributes {...} {`,
/// after any `#loc` lines): StableHLO or MHLO, as JAX's
/// `Lowered.as_text()` prints it by default, not HLO text.
pub fn looks_like_mlir(src: &str) -> bool {
    mlir_module_at(crate::parse::strip_bom(src)).is_some()
}

/// The byte offset of MLIR text's `module` line ([`looks_like_mlir`]):
/// its first significant line (not blank, a `//` comment or a `#loc`
/// line), when that opens a module.
fn mlir_module_at(src: &str) -> Option<usize> {
    let mut offset = 0;
    for line in src.split_inclusive('\n') {
        let text = line.trim();
        if !text.is_empty() && !text.starts_with("//") && !text.starts_with("#loc") {
            let opens = ["module @", "module {", "module attributes"].iter().any(|m| text.starts_with(m));
            return opens.then(|| offset + (line.len() - line.trim_start().len()));
        }
        offset += line.len();
    }
    None
}

/// Does `src` look like HLO text (rather than a RON spec)? True when its
/// first significant line starts with `HloModule`, or it has an `ENTRY`
/// computation line. Used to recognise an input by content.
pub fn looks_like_hlo(src: &str) -> bool {
    let src = crate::parse::strip_bom(src);
    let first = src.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("//"));
    // `HloModule` alone (a module cut short after its first word) is one
    // too, so that it is refused as HLO, where it is said what is missing.
    first.is_some_and(|l| l == "HloModule" || l.starts_with("HloModule "))
        || src.lines().any(|l| l.trim_start().starts_with("ENTRY ") && l.trim_end().ends_with('{'))
}

/// Imports the collectives of the HLO module `src` for `target`.
///
/// # Errors
///
/// [`HloError`] (located at line and column) when the text is not HLO as
/// XLA prints it, or a collective is one ccc cannot express (the error
/// names the instruction or computation).
pub fn import(src: &str, target: &Target) -> Result<Program, HloError> {
    import_module(src, target, None).map(|imported| imported.program)
}

/// [`import()`], keeping each collective's source instruction; `algorithm`
/// (the command line's `--algorithm`) overrides the target's choice for
/// every collective.
///
/// # Errors
///
/// As [`import()`].
pub fn import_module(given: &str, target: &Target, algorithm: Option<&Algorithm>) -> Result<Imported, HloError> {
    let src = crate::parse::strip_bom(given);
    // An error is placed in the text given, byte-order mark and all: a
    // caller that stripped one already (the CLI, Python) and passes text
    // starting with another gets offsets into what it holds.
    let skip = given.len() - src.len();
    let place = |e: HloError| e.shifted(skip).locate(given);
    // Placed at the `module` line, after any `#loc` lines (whose text may
    // say `module` too).
    if let Some(at) = mlir_module_at(src) {
        return Err(place(HloError::at(
            at,
            "module".len(),
            format!("the text {MLIR_TEXT}"),
            format!("import HLO text: {HLO_SOURCES}"),
        )));
    }
    let clean = text::prepare(src).map_err(place)?;
    let module = text::parse_module(&clean).map_err(place)?;
    walk(&module, src, target, algorithm).map_err(place)
}

fn walk(
    module: &text::Module<'_>,
    src: &str,
    target: &Target,
    algorithm: Option<&Algorithm>,
) -> Result<Imported, HloError> {
    // Every list of devices the import builds is as long as the world:
    // a world validation would refuse is refused before any is built.
    let rank_n = target.topology.rank_n;
    if !(1..=crate::validate::MAX_RANK_N).contains(&rank_n) {
        return Err(HloError::at(
            0,
            0,
            format!("the target's topology.rank_n is {rank_n}"),
            format!("accepted: 1..={}", crate::validate::MAX_RANK_N),
        ));
    }
    check_devices(target)?;
    let entry = module.computations.iter().find(|c| c.entry).or(module.computations.last()).ok_or_else(|| {
        HloError::at(src.len(), 0, "the module has no computations", "an HLO module has an `ENTRY` computation")
    })?;
    // XLA reads a module without `ENTRY` as entered at its last
    // computation, but prints `ENTRY` whenever it prints the entry's
    // layout in the header: a module with the one and not the other was
    // cut before its entry, whose collectives would be missed (and a
    // branch's taken for the program's).
    if !entry.entry && module.header.iter().any(|a| a.key == "entry_computation_layout") {
        return Err(HloError::at(
            src.len(),
            0,
            format!(
                "the module has no `ENTRY` computation, though its header gives the entry's layout: it ends after \
                 `{}`",
                entry.name
            ),
            "the file looks truncated before its ENTRY computation; dump the module again",
        ));
    }
    import::refuse_misspelt(module)?;
    let space = import::space(module, target)?;
    let by_name: BTreeMap<&str, &text::Computation<'_>> = module.computations.iter().map(|c| (c.name, c)).collect();
    let own: usize = module.computations.iter().map(|c| c.instructions.len()).sum();
    let budget = own.saturating_add(import::MAX_REPEATED_INSTRUCTIONS);
    let (path, on_path) = (Vec::new(), BTreeSet::new());
    let mut walker = import::Walker {
        by_name,
        target,
        algorithm,
        space,
        found: Vec::new(),
        budget,
        path,
        on_path,
        moved_nothing: Vec::new(),
        transfers: Vec::new(),
        assumed: None,
        imported: BTreeMap::new(),
        newlines: src.match_indices('\n').map(|(at, _)| at).collect(),
        branches: Vec::new(),
        meshes: import::sdy_meshes(module).unwrap_or_default(),
        manual: Vec::new(),
    };
    walker.walk(entry)?;
    if let (true, Some(first)) = (walker.found.is_empty(), walker.moved_nothing.first()) {
        return Err(HloError::at(
            entry.at,
            entry.name.len(),
            format!(
                "the module's collectives move nothing (`{}` is the first): there is nothing to compile",
                first.instruction
            ),
            "a collective-permute whose every pair sends a device to itself, or a collective of an empty \
             tuple, moves no data; ccc imports them as nothing",
        ));
    }
    if let (true, Some(first)) = (walker.found.is_empty(), walker.transfers.first()) {
        return Err(HloError::at(
            entry.at,
            entry.name.len(),
            format!(
                "the module moves data only by device-to-device send/recv (`{}`, line {}), which ccc does not \
                 compile: it has no collectives",
                first.instruction, first.line
            ),
            "ccc compiles collectives (all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute, \
             collective-broadcast); a pipeline stage's sends and recvs are not among them",
        ));
    }
    if walker.found.is_empty() {
        return Err(HloError::at(
            entry.at,
            entry.name.len(),
            format!("the module has no collectives (entry computation `{}`)", entry.name),
            "a module lowered but not partitioned has none yet, only `sharding={...}` annotations (JAX's \
             Lowered.as_text() of an auto-sharded jit; PyTorch/XLA SPMD's graph before XLA's passes): import the \
             compiled text (Compiled.as_text(); --xla_dump_to's *after_optimizations* module)",
        ));
    }
    let (collectives, sources) = walker.found.into_iter().unzip();
    Ok(Imported {
        module: module.name.map(str::to_owned),
        program: Program { collectives },
        sources,
        moved_nothing: walker.moved_nothing,
        transfers: walker.transfers,
        assumed_devices: walker.assumed.map(|s| (s, target.topology.rank_n)),
    })
}

/// The target's `devices` map, when given, is a one-to-one map of the
/// devices `0..rank_n` onto the ranks `0..rank_n`.
fn check_devices(target: &Target) -> Result<(), HloError> {
    target.check_devices().map_err(|why| {
        HloError::at(
            0,
            0,
            format!("the target's `devices` map: {why}"),
            format!("accepted: `devices: {{0: r0, 1: r1, ...}}`, {}", Target::DEVICES_ACCEPTED),
        )
    })
}
