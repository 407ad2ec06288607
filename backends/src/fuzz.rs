//! One input, one target: what the fuzzers (`fuzz/`, cargo-fuzz) and the
//! fuzz smoke test (`tests/fuzz_smoke.rs`, run by `cargo test`) feed their
//! bytes to, so that both exercise exactly the same code. See
//! `docs/fuzzing.md`.
//!
//! Each target takes arbitrary bytes and runs what `ccc` runs on a file of
//! that kind, then checks what must hold whatever the bytes are:
//!
//! | target | runs | checks |
//! |---|---|---|
//! | [`Target::RonSpec`] | parse, validate (for a spec with `Auto`, also through an [`AutoCache`], beside the same spec on another arch); for a small valid spec build, sign, compile rank 0 with the proof, decode its images | errors render to a bounded non-empty message; a parse error's span slices the source; a cached validation gives `validate`'s algorithms, `Auto` answers or problems; no proof defect; emitted images decode |
//! | [`Target::Hlo`] | import for a target of [`HLO_TARGETS`] (`ccc compile model.hlo --target`), print as `ccc import` does, then as [`Target::RonSpec`] from validate on | as [`Target::RonSpec`]; an import error's offset, line and column lie in the module; the printed RON reads back to the imported program |
//! | [`Target::DecodeCtrl`] | `ctrl_word::decode_words` (what `ccc decode` reads) and the stricter chain decoder, the three renderings | every decoded word re-encodes to its bytes; a decoded chain re-encodes and decodes to itself |
//! | [`Target::DecodeSlot`] | `SlotSpad::decode`, the three renderings | a decoded image re-encodes to the same bytes |
//! | [`Target::DecodeNeff`] | `NeffConfigs::decode`, the renderings | a decoded block re-encodes to the same bytes |
//! | [`Target::Manifest`] | the manifest reader of `ccc compile --proven-by` and of `ccc diagnose`, a diagnosis against a reference, certification of a reference spec | errors render to a bounded non-empty message; a manifest that certifies the reference spec is one `diagnose` also accepts |
//!
//! A violated check is a [`Finding`]; a panic is a finding too (the fuzzer
//! catches it, the smoke test wraps each call in `catch_unwind`). An input
//! the code rightly refuses is not a finding: it is an [`Outcome`] with the
//! messages a user would read.

use crate::{hexdump, json, text_log};
use ccc_compiler::diagnose::{Input, diagnose};
use ccc_compiler::hlo::compare::{HeaderDevices, header_devices};
use ccc_compiler::hlo::{HloError, import_module, parse_target};
use ccc_compiler::manifest::Manifest;
use ccc_compiler::parse::{SpecForm, parse, strip_bom};
use ccc_compiler::pipeline::{CompileError, Options, compile};
use ccc_compiler::sign::sign;
use ccc_compiler::valid::ValidProgram;
use ccc_compiler::validate::{AutoCache, ValidationErrors, validate, validate_cached};
use ccc_compiler::verify::VerifyError;
use ccc_ir::arch::Arch;
use ccc_ir::id::Rank;
use ccc_ir::spec::Program;
use ccc_ir::wire::ctrl_word::decode_words;
use ccc_ir::wire::neff_configs::NeffConfigs;
use ccc_ir::wire::slot_spad::SlotSpad;
use ccc_ir::wire::{DecodeError, ctrl_spad};
use std::fmt;
use std::sync::OnceLock;

/// The fixed part of the longest message a refusal may render to.
pub const MESSAGE_BASE_MAX: usize = 4096;
/// What each input byte may add to it: nothing. Messages quote bounded
/// excerpts of the input (48 characters of a token) and list at most a
/// few of many items, so no message grows with the input (issue 9, item
/// 4: a 4 MB identifier once gave 26 MB of errors; this was 2 until every
/// corpus input replayed under 0 in stop 49).
pub const MESSAGE_PER_INPUT_BYTE: usize = 0;

/// The largest world a fuzzed valid spec is compiled and proven for: small
/// enough that one input costs milliseconds.
pub const COMPILE_MAX_RANKS: u32 = 16;
/// The most collectives a fuzzed valid spec may have to be compiled.
pub const COMPILE_MAX_COLLECTIVES: usize = 4;
/// The largest world a fuzzed valid spec is built and signed for.
pub const BUILD_MAX_RANKS: u32 = 4096;
/// The most collectives a fuzzed valid program is built and signed for: an
/// HLO module of a few KB may call one all-reduce 49,152 times (within the
/// importer's 2^18 repeated instructions), and building and signing that
/// took about 0.35 s of the 0.96 s such an input cost in a release build.
pub const BUILD_MAX_COLLECTIVES: usize = 4096;

/// The reference spec the manifest target certifies against: the manifest
/// seeds are compiled from it (`fuzz/seeds/manifest/`), so a mutant that
/// keeps the signature reaches the certificate checks.
pub const REFERENCE_SPEC: &str = "Collective(op: AllReduce, dtype: F32, reduce: Add, count: 4096, arch: Cayman,
    topology: (rank_n: 4, local_rank_n: 4), channels: 2, algorithm: Ring)";

/// The machines the HLO target imports modules for, as `ccc compile
/// model.hlo --target` reads them: `tests/hlo/targets/cayman_<n>.ron`, the
/// targets of the fixtures (8, 16, 32 and 64 devices; the invalid ones,
/// `tests/hlo/invalid/`, are for 8), so that every seed reaches its
/// collectives: [`hlo`] picks one by the device count the module's header
/// or its ids name.
pub const HLO_TARGETS: [&str; 4] = [
    "(arch: Cayman, topology: (rank_n: 8, local_rank_n: 8))",
    "(arch: Cayman, topology: (rank_n: 16, local_rank_n: 16))",
    "(arch: Cayman, topology: (rank_n: 32, local_rank_n: 16))",
    "(arch: Cayman, topology: (rank_n: 64, local_rank_n: 16))",
];

/// The fuzz targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A spec file (RON): [`ron_spec`].
    RonSpec,
    /// A CTRL SPAD image: [`decode_ctrl`].
    DecodeCtrl,
    /// A SLOT SPAD image: [`decode_slot`].
    DecodeSlot,
    /// A `neff_configs` block: [`decode_neff`].
    DecodeNeff,
    /// A `manifest.json`: [`manifest`].
    Manifest,
    /// An XLA HLO module: [`hlo`].
    Hlo,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 6] =
        [Target::RonSpec, Target::DecodeCtrl, Target::DecodeSlot, Target::DecodeNeff, Target::Manifest, Target::Hlo];

    /// The target's name: its cargo-fuzz target and seed folder.
    pub const fn name(self) -> &'static str {
        match self {
            Target::RonSpec => "ron_spec",
            Target::DecodeCtrl => "decode_ctrl",
            Target::DecodeSlot => "decode_slot",
            Target::DecodeNeff => "decode_neff",
            Target::Manifest => "manifest",
            Target::Hlo => "hlo",
        }
    }

    /// Runs the target on one input.
    ///
    /// # Errors
    ///
    /// A [`Finding`]: a check that does not hold for this input.
    pub fn run(self, data: &[u8]) -> Result<Outcome, Finding> {
        match self {
            Target::RonSpec => ron_spec(data),
            Target::DecodeCtrl => decode_ctrl(data),
            Target::DecodeSlot => decode_slot(data),
            Target::DecodeNeff => decode_neff(data),
            Target::Manifest => manifest(data),
            Target::Hlo => hlo(data),
        }
    }
}

/// What an input came to, when every check held.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The input was accepted (parsed and valid, decoded, read).
    pub accepted: bool,
    /// The messages a user would read for each refusal on the way, each
    /// checked non-empty and bounded.
    pub messages: Vec<String>,
}

/// A check that did not hold: a bug in ccc, to be minimized and fixed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding(pub String);

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Finding {}

/// Fails unless `cond`, with the message `what` builds.
fn ensure(cond: bool, what: impl FnOnce() -> String) -> Result<(), Finding> {
    if cond { Ok(()) } else { Err(Finding(what())) }
}

impl Outcome {
    /// Records a refusal's message after checking it is non-empty and
    /// bounded for an input of `input_len` bytes.
    fn refuse(&mut self, what: &str, message: String, input_len: usize) -> Result<(), Finding> {
        ensure(!message.trim().is_empty(), || format!("{what}: the error renders to an empty message"))?;
        let max = MESSAGE_BASE_MAX.saturating_add(MESSAGE_PER_INPUT_BYTE.saturating_mul(input_len));
        ensure(message.len() <= max, || {
            let head: String = message.chars().take(200).collect();
            format!(
                "{what}: a {input_len}-byte input's error renders to {} bytes, more than {max}: {head}...",
                message.len()
            )
        })?;
        self.messages.push(message);
        Ok(())
    }
}

/// A spec file: parse and validate it as `ccc check` does, and for a small
/// valid spec build, sign and compile rank 0 with the whole proof, then
/// decode every image emitted. Bytes that are not UTF-8 are refused as
/// `ccc` refuses such a file.
///
/// # Errors
///
/// A [`Finding`]: an unbounded or empty message, a parse error span that
/// does not slice the source, a proof defect in a schedule ccc built, an
/// emitted image that does not decode.
pub fn ron_spec(data: &[u8]) -> Result<Outcome, Finding> {
    let mut out = Outcome::default();
    let Ok(src) = std::str::from_utf8(data) else {
        return Ok(out);
    };
    let parsed = match parse(src) {
        Ok(parsed) => parsed,
        Err(e) => {
            let range = e.span.byte_range(src);
            ensure(src.get(range.clone()).is_some(), || {
                format!("parse error span {:?} is {range:?}, which does not slice the source", e.span)
            })?;
            ensure(e.span.start.line >= 1 && e.span.start.col >= 1, || {
                format!("parse error span {:?} is not 1-based", e.span)
            })?;
            out.refuse("parse error label", e.label(), data.len())?;
            out.refuse("parse error", e.to_string(), data.len())?;
            return Ok(out);
        }
    };
    check_program(&parsed.program, parsed.form, data.len(), &mut out)?;
    Ok(out)
}

/// What `ccc` runs on a program it has read, spec or imported module:
/// validate it (every problem and its path recorded as a refusal), and for
/// a valid one (then `out` is accepted) build and sign it if it has at
/// most [`BUILD_MAX_RANKS`] ranks and [`BUILD_MAX_COLLECTIVES`]
/// collectives, and compile rank 0 with the whole proof
/// if it has at most [`COMPILE_MAX_RANKS`] ranks and
/// [`COMPILE_MAX_COLLECTIVES`] collectives.
fn check_program(program: &Program, form: SpecForm, input_len: usize, out: &mut Outcome) -> Result<(), Finding> {
    let validated = validate(program);
    check_cached(program, &validated)?;
    let valid = match validated {
        Ok(valid) => valid,
        Err(errors) => {
            ensure(!errors.0.is_empty(), || "validation failed with no problem listed".to_owned())?;
            for problem in &errors.0 {
                out.refuse("validation problem path", problem.path(form), input_len)?;
                out.refuse("validation problem", problem.to_string(), input_len)?;
            }
            return Ok(());
        }
    };
    out.accepted = true;
    let shape = valid.topology();
    if shape.rank_n <= BUILD_MAX_RANKS && valid.collectives().len() <= BUILD_MAX_COLLECTIVES {
        match ccc_compiler::build::build(&valid) {
            Ok(schedule) => {
                let signature = sign(&valid, &schedule);
                ensure(signature.digest.len() == 32, || format!("signature {} is not 32 digits", signature.digest))?;
            }
            Err(e) => out.refuse("build error", e.to_string(), input_len)?,
        }
    }
    if shape.rank_n <= COMPILE_MAX_RANKS && valid.collectives().len() <= COMPILE_MAX_COLLECTIVES {
        compile_small(&valid, input_len, out)?;
    }
    Ok(())
}

/// Checks that validating `program` through an [`AutoCache`] gives
/// `validated`, what [`validate`] gave, when it leaves anything to `Auto`.
/// Through a cache of one entry a table: the program, the same program on
/// another arch (which must not take its answers, and pushes them out of
/// the cache), then the program again. Through a cache of the default
/// capacity: the program twice, the second time with every answer the
/// first kept. The sequences are this input's alone, so a finding replays
/// from its artifact.
fn check_cached(program: &Program, validated: &Result<ValidProgram, ValidationErrors>) -> Result<(), Finding> {
    if !program.collectives.iter().any(|c| c.algorithm.leaves_to_auto()) {
        return Ok(());
    }
    let mut other = program.clone();
    for c in &mut other.collectives {
        c.arch = if c.arch == Arch::Cayman { Arch::Sunda } else { Arch::Cayman };
    }
    let other_validated = validate(&other);
    // (name, which cache: the small one or the large one, program, what
    // `validate` gives it)
    let calls = [
        ("one entry a table, first", 0, program, validated),
        ("one entry a table, on another arch", 0, &other, &other_validated),
        ("one entry a table, again", 0, program, validated),
        ("default capacity, first", 1, program, validated),
        ("default capacity, again", 1, program, validated),
    ];
    let mut caches = [AutoCache::with_capacity(1), AutoCache::new()];
    for (call, cache, p, expected) in calls {
        let through = validate_cached(p, &mut caches[cache]);
        ensure(same_validation(expected, &through), || {
            format!("validating through an AutoCache ({call}) differs from validate")
        })?;
    }
    Ok(())
}

/// Whether two validations of one program agree in everything a cache
/// could change: each collective's algorithm and `Auto` answer, or the
/// problems.
fn same_validation(a: &Result<ValidProgram, ValidationErrors>, b: &Result<ValidProgram, ValidationErrors>) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => {
            a.collectives().len() == b.collectives().len()
                && a.collectives()
                    .iter()
                    .zip(b.collectives())
                    .all(|(x, y)| x.algorithm() == y.algorithm() && x.auto() == y.auto())
        }
        (Err(a), Err(b)) => a == b,
        _ => false,
    }
}

/// The targets of [`HLO_TARGETS`], parsed once.
fn hlo_targets() -> &'static [ccc_compiler::hlo::Target] {
    static TARGETS: OnceLock<Vec<ccc_compiler::hlo::Target>> = OnceLock::new();
    TARGETS.get_or_init(|| HLO_TARGETS.iter().map_while(|t| parse_target(t).ok()).collect())
}

/// The attributes whose values name device ids ([`named_devices`]).
const ID_KEYS: [&str; 2] = ["replica_groups=", "source_target_pairs="];

/// The fewest devices the ids of the module's `replica_groups` and
/// `source_target_pairs` need ([`ids_needed`]; 0 when it names none). A
/// plain scan, as [`header_devices`]: the importer checks the ids itself.
/// Linear in the module: a value ends where the line's next such
/// attribute starts, so no byte is read for more than one value.
fn named_devices(src: &str) -> u64 {
    let mut most = 0u64;
    for line in src.lines() {
        let mut values: Vec<(usize, usize)> =
            ID_KEYS.iter().flat_map(|k| line.match_indices(k).map(move |(at, _)| (at, at + k.len()))).collect();
        values.sort_unstable();
        for (i, &(_, from)) in values.iter().enumerate() {
            let to = values.get(i + 1).map_or(line.len(), |&(next, _)| next);
            most = most.max(ids_needed(line.get(from..to).unwrap_or("")));
        }
    }
    most
}

/// The whole numbers in `text`, in order (those past `u64` skipped).
fn numbers(text: &str) -> impl Iterator<Item = u64> + '_ {
    text.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse::<u64>().ok())
}

/// The devices one value's ids need: one past the largest id of a braced
/// list (`{{0,1},{2,3}}`), the product of an iota list's dims
/// (`[2,4]<=[8]`), else 0.
fn ids_needed(value: &str) -> u64 {
    if value.starts_with('{') {
        let mut depth = 0usize;
        let end = value
            .char_indices()
            .find_map(|(i, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                (depth == 0).then_some(i)
            })
            .unwrap_or(value.len());
        numbers(value.get(..end).unwrap_or("")).max().map_or(0, |id| id.saturating_add(1))
    } else if let Some((_, dims)) = value.strip_prefix('[').and_then(|v| v.split_once("]<=[")) {
        numbers(dims.split(']').next().unwrap_or("")).fold(1u64, u64::saturating_mul)
    } else {
        0
    }
}

/// An XLA HLO module, as `ccc compile model.hlo --target` reads it: imported
/// for a target of [`HLO_TARGETS`] (after a byte-order mark is skipped, as
/// the CLI does), printed as `ccc import` prints it and read back, then
/// validated, built, signed and compiled as [`ron_spec`] does a spec. Bytes
/// that are not UTF-8 are refused as `ccc` refuses such a file. The target
/// is the one of the device count the module's `HloModule` line names (the
/// first when none has it, which refuses the module at its header), or,
/// when it names none (lowered text, whose ids are the target's ranks), the
/// smallest whose ranks hold the ids its `replica_groups` and
/// `source_target_pairs` name (the last when none does).
///
/// # Errors
///
/// A [`Finding`]: an unbounded or empty message, an import error whose
/// offset, line or column is not in the module, printed RON that does not
/// read back to the imported program, then as [`ron_spec`].
pub fn hlo(data: &[u8]) -> Result<Outcome, Finding> {
    let mut out = Outcome::default();
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(out);
    };
    let targets = hlo_targets();
    ensure(targets.len() == HLO_TARGETS.len(), || "an HLO_TARGETS entry is not a target".to_owned())?;
    let src = strip_bom(text);
    let rank_n = |t: &ccc_compiler::hlo::Target| u64::from(t.topology.rank_n);
    let target = match header_devices(src) {
        HeaderDevices::Devices(devices) => targets.iter().find(|t| rank_n(t) == devices).or(targets.first()),
        HeaderDevices::Unreadable => targets.first(),
        HeaderDevices::Unnamed => {
            let needed = named_devices(src);
            targets.iter().find(|t| rank_n(t) >= needed).or(targets.last())
        }
    };
    let target = target.ok_or_else(|| Finding("HLO_TARGETS is empty".to_owned()))?;
    let imported = match import_module(src, target, None) {
        Ok(imported) => imported,
        Err(e) => {
            check_hlo_location(&e, src)?;
            out.refuse("import error", e.to_string(), data.len())?;
            out.refuse("import error help", e.help, data.len())?;
            return Ok(out);
        }
    };
    ensure(imported.sources.len() == imported.program.collectives.len(), || {
        format!("{} collectives imported but {} sources", imported.program.collectives.len(), imported.sources.len())
    })?;
    let printed = ccc_compiler::hlo::emit::to_ron(&imported, "fuzzed.hlo")
        .map_err(|e| Finding(format!("the imported program does not print as RON: {e}")))?;
    let read = parse(&printed).map_err(|e| Finding(format!("`ccc import`'s RON does not parse: {e}\n{printed}")))?;
    ensure(read.program == imported.program, || {
        format!("`ccc import`'s RON reads back to another program:\n{printed}")
    })?;
    check_program(&imported.program, SpecForm::Program, data.len(), &mut out)?;
    Ok(out)
}

/// An import error points into the module: its byte offset is at most the
/// module's length, and its line and column are those of that offset.
fn check_hlo_location(e: &HloError, src: &str) -> Result<(), Finding> {
    ensure(e.offset() <= src.len(), || {
        format!("import error offset {} is past the module's {} bytes: {e}", e.offset(), src.len())
    })?;
    let at = e.byte_range(src).start;
    let before = src.get(..at).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    ensure((e.start.line, e.start.col) == (line, col), || {
        format!("import error at {} but its offset {at} is {line}:{col}: {e}", e.start)
    })
}

/// The options of the fuzzed compiles: rank 0's images, with the proof
/// (the default: `verify` is on) and every other default.
fn rank_zero() -> Options {
    Options { ranks: vec![Rank(0)], ..Options::default() }
}

/// Compiles rank 0 of a small valid program with the whole proof and
/// decodes every image it emits.
fn compile_small(valid: &ValidProgram, input_len: usize, out: &mut Outcome) -> Result<(), Finding> {
    match compile(valid, &rank_zero()) {
        Ok(compiled) => {
            for rank in &compiled.images {
                for t in &rank.topsps {
                    let images = [
                        (Target::DecodeCtrl, &t.ctrl_spad[..]),
                        (Target::DecodeSlot, &t.slot_spad[..]),
                        (Target::DecodeNeff, &t.neff_configs[..]),
                    ];
                    for (target, image) in images {
                        let decoded = target.run(image)?;
                        ensure(decoded.accepted, || {
                            format!(
                                "rank {} TOP_SP {}: the emitted {} image does not decode: {:?}",
                                rank.rank.0,
                                t.topsp.0,
                                target.name(),
                                decoded.messages
                            )
                        })?;
                    }
                }
            }
            Ok(())
        }
        Err(CompileError::Verify(VerifyError::Defects(defect))) => {
            Err(Finding(format!("the proof found a defect in a schedule ccc built: {defect}")))
        }
        Err(e) => out.refuse("compile error", e.to_string(), input_len),
    }
}

/// The arch whose table names the addresses in a dump, as `ccc decode`
/// picks it: the one with the most TOP_SPs.
fn naming_arch() -> Arch {
    let mut best = Arch::Cayman;
    for arch in Arch::ALL {
        if arch.params().topsp_n > best.params().topsp_n {
            best = arch;
        }
    }
    best
}

/// Records a decode error as `ccc decode` would report it.
fn refuse_decode(out: &mut Outcome, what: &str, e: &DecodeError, input_len: usize) -> Result<(), Finding> {
    ensure(e.offset <= input_len as u64, || {
        format!("{what}: error offset {:#x} is past the image's end: {e}", e.offset)
    })?;
    out.refuse(what, e.to_string(), input_len)
}

/// A CTRL SPAD image: decoded word by word as `ccc decode` does (and
/// rendered in its three views), and by the chain decoder.
///
/// # Errors
///
/// A [`Finding`]: a decoded word that does not re-encode to its bytes, a
/// decoded chain that does not survive encode and decode, a bad message.
pub fn decode_ctrl(data: &[u8]) -> Result<Outcome, Finding> {
    let mut out = Outcome::default();
    match decode_words(data) {
        Ok(words) => {
            out.accepted = true;
            for &(offset, word) in &words {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                let bytes = data.get(start..start.saturating_add(8));
                let again = word
                    .encode()
                    .map_err(|e| Finding(format!("word at {offset:#x} decodes but does not encode: {e}")))?;
                ensure(bytes == Some(&again[..]), || {
                    format!("word at {offset:#x} decodes to {word:?}, which encodes to {again:02x?}, not {bytes:02x?}")
                })?;
            }
            let rendered = json::ctrl(&words).map_err(|e| Finding(format!("json::ctrl failed: {e}")))?;
            ensure(!rendered.is_empty(), || "json::ctrl rendered nothing".to_owned())?;
            let _ = text_log::ctrl(&words, 0, 0);
            let _ = hexdump::ctrl(&words, naming_arch().params());
        }
        Err(e) => refuse_decode(&mut out, "ctrl word decode", &e, data.len())?,
    }
    match ctrl_spad::decode(data) {
        Ok(segments) => {
            if let Ok(image) = ctrl_spad::encode(&segments, u32::MAX) {
                let again = ctrl_spad::decode(&image).map_err(|e| {
                    Finding(format!("a decoded chain re-encodes to an image that does not decode: {e}"))
                })?;
                ensure(again == segments, || "a decoded chain re-encodes and decodes to another chain".to_owned())?;
            }
        }
        Err(e) => refuse_decode(&mut out, "ctrl chain decode", &e, data.len())?,
    }
    Ok(out)
}

/// A SLOT SPAD image, as `ccc decode --region slot` reads and renders it.
///
/// # Errors
///
/// A [`Finding`]: an image that decodes but does not re-encode to the same
/// bytes, a bad message.
pub fn decode_slot(data: &[u8]) -> Result<Outcome, Finding> {
    let mut out = Outcome::default();
    match SlotSpad::decode(data) {
        Ok(spad) => {
            out.accepted = true;
            let again =
                spad.encode(u32::MAX).map_err(|e| Finding(format!("a decoded SLOT SPAD does not encode: {e}")))?;
            ensure(again == data, || {
                format!("a decoded {}-byte SLOT SPAD re-encodes to {} other bytes", data.len(), again.len())
            })?;
            json::slot(&spad).map_err(|e| Finding(format!("json::slot failed: {e}")))?;
            let _ = text_log::slot(&spad, 0, 0);
            let _ = hexdump::slot(&spad);
        }
        Err(e) => refuse_decode(&mut out, "slot decode", &e, data.len())?,
    }
    Ok(out)
}

/// A `neff_configs` block, as `ccc decode --region neff` reads and renders
/// it (the dump with every arch's naming table).
///
/// # Errors
///
/// A [`Finding`]: a block that decodes but does not re-encode to the same
/// bytes, a bad message.
pub fn decode_neff(data: &[u8]) -> Result<Outcome, Finding> {
    let mut out = Outcome::default();
    match NeffConfigs::decode(data) {
        Ok(cfg) => {
            out.accepted = true;
            let again = cfg.encode().map_err(|e| Finding(format!("a decoded neff_configs does not encode: {e}")))?;
            ensure(again[..] == *data, || "a decoded neff_configs re-encodes to other bytes".to_owned())?;
            json::neff(&cfg).map_err(|e| Finding(format!("json::neff failed: {e}")))?;
            for arch in Arch::ALL {
                let _ = hexdump::neff(&cfg, arch.params());
            }
        }
        Err(e) => refuse_decode(&mut out, "neff decode", &e, data.len())?,
    }
    Ok(out)
}

/// The reference program and its digest, built once.
fn reference() -> Option<&'static (ValidProgram, Input)> {
    static REFERENCE: OnceLock<Option<(ValidProgram, Input)>> = OnceLock::new();
    REFERENCE
        .get_or_init(|| {
            let valid = validate(&parse(REFERENCE_SPEC).ok()?.program).ok()?;
            let schedule = ccc_compiler::build::build(&valid).ok()?;
            let input = Input::from_signature("reference", &sign(&valid, &schedule));
            Some((valid, input))
        })
        .as_ref()
}

/// A `manifest.json`: read as `ccc diagnose` reads it (only the signature
/// fields) and as `ccc compile --proven-by` reads it (the whole
/// [`Manifest`]); diagnosed against the reference spec's signature; offered
/// as the certificate of a compile of rank 0 of [`REFERENCE_SPEC`].
///
/// # Errors
///
/// A [`Finding`]: a bad message, a diagnosis that does not serialize, a
/// certificate accepted whose signature `diagnose` refuses.
pub fn manifest(data: &[u8]) -> Result<Outcome, Finding> {
    let mut out = Outcome::default();
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(out);
    };
    let reference = reference().ok_or_else(|| Finding("the reference spec does not compile".to_owned()))?;
    let read = Input::from_manifest_json("fuzzed", text);
    match &read {
        Ok(input) => {
            let report = diagnose(&[reference.1.clone(), input.clone()]);
            serde_json::to_string(&report).map_err(|e| Finding(format!("the diagnosis does not serialize: {e}")))?;
        }
        Err(e) => out.refuse("diagnose manifest reader", e.to_string(), data.len())?,
    }
    let manifest = match serde_json::from_str::<Manifest>(text) {
        Ok(manifest) => manifest,
        Err(e) => {
            out.refuse("--proven-by manifest reader", e.to_string(), data.len())?;
            return Ok(out);
        }
    };
    out.accepted = true;
    if let Err(e) = Input::from_manifest("fuzzed", &manifest) {
        out.refuse("manifest signature check", e.to_string(), data.len())?;
    }
    let certified = Options { certificate: Some(std::sync::Arc::new(manifest)), ..rank_zero() };
    match compile(&reference.0, &certified) {
        Ok(_) => ensure(read.is_ok(), || "a certificate is accepted whose signature diagnose refuses".to_owned())?,
        Err(CompileError::Verify(VerifyError::Defects(defect))) => {
            return Err(Finding(format!("a certified compile found a defect: {defect}")));
        }
        Err(e) => out.refuse("certificate", e.to_string(), data.len())?,
    }
    Ok(out)
}
