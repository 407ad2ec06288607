//! The command line, as clap sees it. Verbs and their flags follow
//! `docs/interface.md` (ccc's copy of the interface, kept current: every
//! verb and flag here is documented there); `check` is ccc's own addition.

use clap::builder::TypedValueParser;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// ccc: a collective schedule compiler for Trainium-class accelerators.
///
/// Compiles a collective spec (RON) into the exact bytes each rank's TOP_SPs
/// load, proves the schedule correct and deadlock-free first, signs it, and
/// explains signature mismatches between ranks.
#[derive(Debug, Parser)]
#[command(name = "ccc", version, propagate_version = true)]
pub struct Cli {
    /// The verb.
    #[command(subcommand)]
    pub command: Command,
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse, check, lower, verify, encode, sign and write every rank's images.
    Compile(CompileArgs),
    /// Print the collective signature: 32 lower-case hex digits.
    Sign(SpecArg),
    /// Decode an emitted image (ctrl_spad, slot_spad or neff_configs).
    Decode(DecodeArgs),
    /// Compare the signatures of specs, manifests, compile output folders or
    /// HLO modules (with --target) and explain differences.
    Diagnose(DiagnoseArgs),
    /// Everything compile does short of writing, then print the proof summary.
    Verify(VerifyArgs),
    /// Print the step graph in Graphviz DOT.
    Graph(GraphArgs),
    /// Parse and validate a spec, refusing what lowering would; print what it resolves to.
    Check(SpecArg),
    /// Print the RON program equivalent to an XLA HLO module's collectives.
    Import(ImportArgs),
    /// Every legal algorithm of every collective and leg, predicted by the
    /// cost model, the winner marked and why the others lost.
    Explain(ExplainArgs),
    /// The spec's predicted time and bandwidth over a range of sizes, in
    /// nccom-test's spirit: one row per size, the choice per leg.
    Sweep(SweepArgs),
}

impl Command {
    /// Whether the verb prints JSON (`--json`, `decode --format json`):
    /// then a failure is also printed on stdout as JSON
    /// ([`crate::report::json`]), for the tool reading it.
    pub fn prints_json(&self) -> bool {
        match self {
            Command::Diagnose(a) => a.json,
            Command::Explain(a) => a.json,
            Command::Sweep(a) => a.json,
            Command::Decode(a) => a.format == DecodeFormat::Json,
            Command::Compile(_)
            | Command::Sign(_)
            | Command::Verify(_)
            | Command::Graph(_)
            | Command::Check(_)
            | Command::Import(_) => false,
        }
    }
}

/// How an XLA HLO module given in place of a spec is read (`docs/hlo.md`).
/// An input is HLO by its content, not its extension.
#[derive(Debug, Default, clap::Args)]
pub struct HloArgs {
    /// For an HLO module: the target file (RON: arch, topology, optional
    /// channels, algorithm, algorithms, devices, barrier, send_credits,
    /// model).
    #[arg(long, value_name = "TARGET")]
    pub target: Option<PathBuf>,
    /// For an HLO module: the algorithm of every collective, as in a spec
    /// (`Ring`, `Mesh`, `Hier((...))`); overrides the target's.
    #[arg(long, value_name = "NAME")]
    pub algorithm: Option<String>,
}

/// `ccc import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The HLO module (`as_text()`, `--xla_dump_to`); `-`: standard input.
    pub module: PathBuf,
    /// Write the RON here instead of stdout.
    #[arg(short, long, value_name = "FILE", value_parser = parse_import_output())]
    pub out: Option<PathBuf>,
    /// Write the module's collectives as programs that each fit a TOP_SP's
    /// CTRL SPAD, in order, as many to a program as fit: `-o step.ron`
    /// writes `step.1.ron`, `step.2.ron`, ... (each a new file).
    #[arg(long, requires = "out")]
    pub split: bool,
    /// The target and algorithm choice.
    #[command(flatten)]
    pub hlo: HloArgs,
}

/// `ccc explain`.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// The collective spec (`.ron`) or an HLO module (with `--target`); `-`: standard input.
    pub spec: PathBuf,
    /// Print the tables as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also draw rank 0's records per TOP_SP on the predicted time axis
    /// into this SVG file (it must not exist yet).
    #[arg(long, value_name = "FILE", value_parser = parse_output())]
    pub svg: Option<PathBuf>,
    /// For an HLO module: the target and algorithm choice.
    #[command(flatten)]
    pub hlo: HloArgs,
}

/// `ccc sweep`.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// The collective spec (`.ron`) or an HLO module (with `--target`): its
    /// first collective is swept; `-`: standard input.
    pub spec: PathBuf,
    /// The smallest size (nccom-test's size: the output of an all-gather,
    /// the input of the others), bytes or with KiB/MiB/GiB/TiB.
    #[arg(long, value_name = "SIZE", default_value_t = Bytes(8), allow_hyphen_values = true)]
    pub from: Bytes,
    /// The largest size.
    #[arg(long, value_name = "SIZE", default_value_t = Bytes(1 << 30), allow_hyphen_values = true)]
    pub to: Bytes,
    /// The ratio between consecutive sizes, at least 2.
    #[arg(long, default_value_t = 2, allow_negative_numbers = true, value_parser = parse_factor)]
    pub factor: u64,
    /// Print the rows as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also plot predicted busbw against size for every legal choice into
    /// this SVG file (it must not exist yet).
    #[arg(long, value_name = "FILE", value_parser = parse_output())]
    pub svg: Option<PathBuf>,
    /// For an HLO module: the target and algorithm choice.
    #[command(flatten)]
    pub hlo: HloArgs,
}

/// A verb that takes one spec.
#[derive(Debug, clap::Args)]
pub struct SpecArg {
    /// The collective spec (`.ron`) or an HLO module (with `--target`); `-`: standard input.
    pub spec: PathBuf,
    /// How an HLO module is read.
    #[command(flatten)]
    pub hlo: HloArgs,
}

/// `ccc verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The collective spec (`.ron`) or an HLO module (with `--target`); `-`: standard input.
    pub spec: PathBuf,
    /// How an HLO module is read.
    #[command(flatten)]
    pub hlo: HloArgs,
    /// No progress bar (one is drawn on stderr only when it is a terminal).
    #[arg(short, long)]
    pub quiet: bool,
    /// The most memory the compile may hold, by its estimate made before
    /// any world-sized work (bytes, or with KiB/MiB/GiB/TiB); more is
    /// refused, with the ways out.
    #[arg(
        long,
        value_name = "SIZE",
        default_value_t = Bytes(ccc_compiler::pipeline::DEFAULT_MEMORY_BUDGET),
        allow_negative_numbers = true
    )]
    pub memory_budget: Bytes,
}

/// `ccc compile`.
#[derive(Debug, clap::Args)]
pub struct CompileArgs {
    /// The collective spec (`.ron`) or an HLO module (with `--target`); `-`: standard input.
    pub spec: PathBuf,
    /// How an HLO module is read.
    #[command(flatten)]
    pub hlo: HloArgs,
    /// The output folder (written atomically: complete or not at all).
    #[arg(short, long, value_parser = parse_output())]
    pub out: PathBuf,
    /// Compile only this rank (repeatable); default: every rank.
    #[arg(long = "rank", value_name = "R", allow_negative_numbers = true, value_parser = parse_rank)]
    pub ranks: Vec<u32>,
    /// Skip the proof (large worlds compiled one rank at a time).
    #[arg(long, conflicts_with = "proven_by")]
    pub no_verify: bool,
    /// Instead of proving the whole world again, rely on the manifest.json
    /// (or its folder) of an earlier verified compile of the same schedule:
    /// its signature must match; this compile still checks its own ranks.
    #[arg(long, value_name = "MANIFEST")]
    pub proven_by: Option<PathBuf>,
    /// No progress bar (one is drawn on stderr only when it is a terminal).
    #[arg(short, long)]
    pub quiet: bool,
    /// The most memory the compile may hold, by its estimate made before
    /// any world-sized work (bytes, or with KiB/MiB/GiB/TiB); more is
    /// refused, with the ways out.
    #[arg(
        long,
        value_name = "SIZE",
        default_value_t = Bytes(ccc_compiler::pipeline::DEFAULT_MEMORY_BUDGET),
        allow_negative_numbers = true
    )]
    pub memory_budget: Bytes,
}

/// `ccc decode`.
#[derive(Debug, clap::Args)]
pub struct DecodeArgs {
    /// The image: any multiple of 8 bytes for a CTRL SPAD image; `-`: standard input.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DecodeFormat::Text)]
    pub format: DecodeFormat,
    /// Which region the image is; default: from the file name
    /// (`slot_spad*` → slot, `neff_configs*` → neff, anything else → ctrl).
    #[arg(long, value_enum)]
    pub region: Option<Region>,
    /// Device index printed in `--format log` lines.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = parse_index)]
    pub device: u32,
    /// TOP_SP index printed in `--format log` lines.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = parse_topsp)]
    pub topsp: u32,
}

/// `ccc decode --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DecodeFormat {
    /// JSON in the vendor dumper's shape: a CTRL SPAD's words as an array;
    /// a SLOT SPAD's `record_n`, `entry_n` and records, and a
    /// `neff_configs` block's fields, as an object.
    Json,
    /// The runtime's log lines: a CTRL SPAD's CTRL-mark lines, a SLOT
    /// SPAD's `tp_inc_steps` lines under a label per record (a
    /// `neff_configs` block has no log, and is refused).
    Log,
    /// An annotated hexdump: offset | bytes | meaning.
    Text,
}

/// `ccc decode --region`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Region {
    /// A CTRL SPAD image (`ctrl_spad.bin`): 8-byte words.
    Ctrl,
    /// A SLOT SPAD image (`slot_spad.bin`): tp_inc_steps.
    Slot,
    /// An EXEC config block (`neff_configs.bin`): 3592 bytes.
    Neff,
}

/// `ccc diagnose`.
#[derive(Debug, clap::Args)]
pub struct DiagnoseArgs {
    /// Two or more inputs, each a spec (`.ron`), a manifest
    /// (`manifest.json`), an output folder (`ccc compile -o`; one holding
    /// a file changed since ccc wrote it is no match) or an HLO module
    /// (with `--target`).
    ///
    /// (Taken one or more at a time, so that a flag may stand between
    /// them; `run` refuses fewer than two.)
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// Print the report as JSON instead of prose.
    #[arg(long)]
    pub json: bool,
    /// How HLO modules are read.
    #[command(flatten)]
    pub hlo: HloArgs,
}

/// `ccc graph`.
#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// The collective spec (`.ron`) or an HLO module (with `--target`); `-`: standard input.
    pub spec: PathBuf,
    /// How an HLO module is read.
    #[command(flatten)]
    pub hlo: HloArgs,
    /// Only this rank's steps (repeatable); default: every rank.
    #[arg(long = "rank", value_name = "R", allow_negative_numbers = true, value_parser = parse_rank)]
    pub ranks: Vec<u32>,
}

/// A `--device` or `--topsp` value: a non-negative integer. Negative
/// numbers reach this parser (`allow_negative_numbers`), so that `-1` is
/// told what is accepted rather than how to pass a value starting with `-`.
fn parse_index(value: &str) -> Result<u32, String> {
    value.trim().parse::<u32>().map_err(|_| format!("accepted: a non-negative whole number up to {}", u32::MAX))
}

/// An output's path: anything but `-`, which names standard input where
/// ccc reads a file, and would here be a file or folder named `-` (`./-`
/// names one). Read as an `OsString`: an output's name need not be UTF-8.
fn parse_output() -> impl TypedValueParser<Value = PathBuf> {
    clap::builder::OsStringValueParser::new().try_map(|value| refuse_dash(value, ""))
}

/// `import -o`: as [`parse_output`], saying that without it the program
/// goes to stdout.
fn parse_import_output() -> impl TypedValueParser<Value = PathBuf> {
    clap::builder::OsStringValueParser::new()
        .try_map(|value| refuse_dash(value, "; without -o, import prints the program on stdout"))
}

/// `value` as a path, or the refusal of `-`, `also` after it.
fn refuse_dash(value: std::ffi::OsString, also: &str) -> Result<PathBuf, String> {
    match value == "-" {
        true => Err(format!(
            "`-` names standard input, for what ccc reads; an output is a path (`./-` for one named `-`){also}"
        )),
        false => Ok(PathBuf::from(value)),
    }
}

/// A `--factor` value: a whole number, at least 2. Negative numbers reach
/// this parser (`allow_negative_numbers`), so that `-2` is told what is
/// accepted rather than how to pass a value starting with `-`.
fn parse_factor(value: &str) -> Result<u64, String> {
    match value.trim().parse::<u64>() {
        Ok(factor) if factor >= 2 => Ok(factor),
        _ => Err(format!("accepted: a whole number from 2 to {} (each size is the one before times it)", u64::MAX)),
    }
}

/// A `--topsp` value: a non-negative integer the runtime's `%d` prints as
/// written (a larger one would print negative, `TOPSP -1`).
fn parse_topsp(value: &str) -> Result<u32, String> {
    let max = i32::MAX.unsigned_abs();
    match value.trim().parse::<u32>() {
        Ok(topsp) if topsp <= max => Ok(topsp),
        _ => Err(format!("accepted: a non-negative whole number up to {max} (the log prints it with %d)")),
    }
}

/// A `--rank` value: a non-negative integer (that it is below the spec's
/// `rank_n` is checked once the spec is read). Negative numbers reach this
/// parser (`allow_negative_numbers`) so that `--rank -1` is told what a rank
/// is rather than how to pass a value that starts with `-`.
fn parse_rank(value: &str) -> Result<u32, String> {
    value.trim().parse::<u32>().map_err(|e| {
        let why = if value.trim().parse::<i64>().is_ok_and(|n| n < 0) {
            "negative"
        } else if *e.kind() == std::num::IntErrorKind::PosOverflow {
            "too large (a world holds at most 1048576 ranks)"
        } else {
            "not a whole number"
        };
        format!("{why}: a rank is a non-negative integer below the spec's topology.rank_n (0, 1, ...)")
    })
}

/// A size in bytes, written plain (`1073741824`) or with a binary unit
/// (`512MiB`, `2GiB`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bytes(pub u64);

/// Binary units, largest first, with their shifts.
pub const UNITS: [(&str, u32); 5] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10), ("B", 0)];

impl std::fmt::Display for Bytes {
    /// The largest unit that divides the size exactly (`2GiB`, `1536MiB`);
    /// zero in bytes (`0B`), as every unit divides it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (unit, shift) = UNITS
            .iter()
            .copied()
            .find(|&(_, shift)| self.0 != 0 && self.0.is_multiple_of(1u64 << shift))
            .unwrap_or(("B", 0));
        write!(f, "{}{unit}", self.0 >> shift)
    }
}

impl std::str::FromStr for Bytes {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (digits, shift) =
            UNITS.iter().find_map(|&(unit, shift)| Some((s.strip_suffix(unit)?.trim_end(), shift))).unwrap_or((s, 0));
        let accepted = "accepted: a whole number of bytes, or one with KiB, MiB, GiB or TiB (e.g. 4GiB)";
        let too_large = || format!("{s:?} is 2^64 bytes or more, past the largest size (2^64 - 1 bytes); {accepted}");
        let n: u64 = digits.parse().map_err(|e: std::num::ParseIntError| {
            if *e.kind() == std::num::IntErrorKind::PosOverflow {
                too_large()
            } else if digits.parse::<i128>().is_ok_and(|n| n < 0) {
                format!("{s:?} is negative; {accepted}")
            } else {
                format!("{s:?} is not a size; {accepted}")
            }
        })?;
        n.checked_mul(1u64 << shift).map(Bytes).ok_or_else(too_large)
    }
}
