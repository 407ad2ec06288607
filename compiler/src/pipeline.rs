//! The passes in order, readable top to bottom: the one call a framework
//! (or the CLI) makes to turn a spec into images.

use crate::build::{BuildError, build};
use crate::encode::{ImageError, RankImages, TopSpImages, encode};
use crate::lower::{LowerError, LowerErrorKind, RankProgram, lower, lower_watched};
use crate::manifest::{MANIFEST_SCHEMA, Manifest, ManifestProof};
use crate::parse::{ParseError, ParsedSpec, parse};
use crate::schedule::Schedule;
use crate::sign::{Signature, digest_of, sign};
use crate::valid::ValidProgram;
use crate::validate::{ValidationErrors, validate};
use crate::verify::postcondition::{self, CollectivePostcondition};
use crate::verify::protocol::{self, ProtocolProof};
use crate::verify::roundtrip;
use crate::verify::symmetry::{Bases, Seen, Symmetry};
use crate::verify::{ProverOptions, VerifyError};
use ccc_ir::FORMAT_VERSION;
use ccc_ir::id::Rank;
use rayon::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The default of [`Options::memory_budget`]: 2 GiB. What a compile may
/// hold at once, by the estimate made before any world-sized work (see
/// [`MemoryError`]); well under a 4 GiB address-space cap, which must also
/// hold the allocator's arenas, the threads' stacks, the spec and what the
/// estimate leaves out (the proof's interned contributor sets).
pub const DEFAULT_MEMORY_BUDGET: u64 = 2 << 30;

/// What to compile.
#[derive(Clone)]
pub struct Options {
    /// The ranks to emit images for; empty means every rank.
    pub ranks: Vec<Rank>,
    /// Prove the schedule before emitting (the default).
    pub verify: bool,
    /// The most memory, in bytes, the compile may estimate it holds at
    /// once ([`DEFAULT_MEMORY_BUDGET`]); more is refused before any
    /// world-sized work, with a [`MemoryError`].
    pub memory_budget: u64,
    /// Called as work counted in ranks advances (see [`Progress`]); `None`
    /// costs nothing.
    pub progress: Option<Arc<ProgressFn>>,
}

impl Default for Options {
    fn default() -> Self {
        Options { ranks: Vec::new(), verify: true, memory_budget: DEFAULT_MEMORY_BUDGET, progress: None }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("ranks", &self.ranks)
            .field("verify", &self.verify)
            .field("memory_budget", &self.memory_budget)
            .field("progress", &self.progress.as_ref().map(|_| "Fn(Progress)"))
            .finish()
    }
}

/// Receives [`Progress`] reports; called from any thread (rayon's
/// workers), so it must be quick and thread-safe. The library never
/// prints: a front end draws the reports (the CLI, a progress bar).
pub type ProgressFn = dyn Fn(Progress) + Send + Sync;

/// A stage of a compile whose work is counted in ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Lowering ranks (every rank when proving).
    Lower,
    /// The postcondition proof, counted in group members proven.
    Postcondition,
    /// The protocol proof, counted in ranks checked.
    Protocol,
    /// Decoding each emitted rank's images back.
    RoundTrip,
}

impl Stage {
    /// Its name, as a progress bar shows it.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Lower => "lower",
            Stage::Postcondition => "postcondition",
            Stage::Protocol => "protocol",
            Stage::RoundTrip => "round trip",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How far a stage has come: `done` of `total` ranks. Each stage reports
/// `done == 0` when it starts and `done == total` when it ends, and in
/// between at most about [`PROGRESS_REPORTS`] times, in increasing order
/// per stage (reports from different threads may arrive out of order:
/// keep the largest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The stage.
    pub stage: Stage,
    /// Ranks done.
    pub done: u64,
    /// Ranks the stage has in all.
    pub total: u64,
}

/// About how many reports a stage makes between its start and its end.
pub const PROGRESS_REPORTS: u64 = 1000;

/// Counts a stage's ranks and reports to [`Options::progress`].
struct Ticker<'a> {
    report: Option<&'a ProgressFn>,
    stage: Stage,
    total: u64,
    every: u64,
    done: AtomicU64,
}

impl<'a> Ticker<'a> {
    /// Starts `stage` of `total` ranks (reporting 0 done).
    fn start(options: &'a Options, stage: Stage, total: u64) -> Ticker<'a> {
        let report = options.progress.as_deref();
        if let Some(f) = report {
            f(Progress { stage, done: 0, total });
        }
        Ticker { report, stage, total, every: (total / PROGRESS_REPORTS).max(1), done: AtomicU64::new(0) }
    }

    /// `n` more ranks done.
    fn tick(&self, n: u64) {
        let Some(f) = self.report else { return };
        let before = self.done.fetch_add(n, Ordering::Relaxed);
        let done = before + n;
        if done / self.every != before / self.every || done == self.total {
            f(Progress { stage: self.stage, done, total: self.total });
        }
    }
}

/// What the proof established, and what it cost.
#[derive(Clone, Debug)]
pub struct Proof {
    /// Per collective: the postcondition proven by symbolic execution.
    pub postcondition: Vec<CollectivePostcondition>,
    /// The protocol proof over every rank's records.
    pub protocol: ProtocolProof,
    /// Replica groups whose every member was seen, at every step, to run
    /// member 0's program moved to it (see `verify::symmetry`): both
    /// provers ran on member 0 alone for them (0 when certified: the
    /// certificate does not say).
    pub symmetric_groups: u64,
    /// Images decoded back to their records.
    pub images_checked: u64,
    /// Time spent proving postconditions.
    pub postcondition_time: Duration,
    /// Time spent on the protocol proof, including lowering the ranks that
    /// were not asked for (only the proof needs them).
    pub protocol_time: Duration,
    /// Time spent on round trips.
    pub roundtrip_time: Duration,
    /// `true` when the postcondition and protocol figures come from the
    /// certificate of an earlier compile of the same schedule (see
    /// [`compile_certified`]) and this compile checked only its own ranks'
    /// chains and images.
    pub certified: bool,
}

impl Proof {
    /// Total proof time.
    pub fn time(&self) -> Duration {
        self.postcondition_time + self.protocol_time + self.roundtrip_time
    }
}

/// A compiled program.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The schedule every rank shares.
    pub schedule: Schedule,
    /// The collective signature.
    pub signature: Signature,
    /// The lowered programs of the ranks asked for, in rank order.
    pub programs: Vec<RankProgram>,
    /// Their images, in the same order.
    pub images: Vec<RankImages>,
    /// The proof, unless skipped.
    pub proof: Option<Proof>,
}

/// Any pass's failure.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CompileError {
    /// The text is not a spec.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The spec breaks rules.
    #[error(transparent)]
    Validate(#[from] ValidationErrors),
    /// The algorithms could not be composed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A rank does not fit the device.
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// The proof failed, or could not be attempted.
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// An image does not fit its region.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// A certificate that does not vouch for this schedule.
    #[error(transparent)]
    Certificate(#[from] CertificateError),
    /// The compile would hold more memory than its budget.
    #[error(transparent)]
    Memory(#[from] MemoryError),
}

/// A compile whose estimated memory exceeds [`Options::memory_budget`],
/// refused before any world-sized work. The estimate is made from a few
/// representative ranks lowered and encoded first: the proof holds every
/// rank's lowered records (and each rank's symmetry watch) and, for a
/// group it executes in full, a symbolic buffer of members x blocks
/// cells; the ranks emitted hold their records and images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryError {
    /// Bytes the compile would hold at once, by estimate: `proof + emit`.
    pub needed: u64,
    /// The budget ([`Options::memory_budget`]).
    pub budget: u64,
    /// Of `needed`, the proof's: every rank's lowered records and watch,
    /// the symbolic buffers (0 without a proof).
    pub proof: u64,
    /// Of `needed`, the emitted ranks': their records and images.
    pub emit: u64,
    /// Ranks to emit.
    pub ranks: u64,
    /// Ranks in the world.
    pub rank_n: u32,
}

/// A way to compile within the memory budget (see [`MemoryError::ways_out`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WayOut {
    /// A spec with fewer ranks.
    FewerRanks,
    /// Emit fewer ranks per compile (name them in [`Options::ranks`]).
    EmitFewerRanks,
    /// Compile the ranks named without the proof ([`Options::verify`] off).
    SkipProof,
    /// Take the proof from an earlier compile's certificate
    /// ([`compile_certified`]).
    Certificate,
}

impl WayOut {
    /// The way out, in words (a front end names its own flags).
    pub const fn describe(self) -> &'static str {
        match self {
            WayOut::FewerRanks => "a world of fewer ranks",
            WayOut::EmitFewerRanks => "emitting fewer ranks per compile",
            WayOut::SkipProof => "compiling the ranks named without the proof",
            WayOut::Certificate => "taking the proof from an earlier compile's certificate",
        }
    }
}

impl MemoryError {
    /// The ways out, the likeliest first: when the proof alone fits, emit
    /// fewer ranks; when it does not, skip it or take it from a
    /// certificate (both compile only the ranks named), or use fewer ranks.
    pub fn ways_out(&self) -> Vec<WayOut> {
        let mut ways = Vec::new();
        let one_rank = self.emit / self.ranks.max(1);
        if self.proof.saturating_add(one_rank) <= self.budget {
            if self.ranks > 1 {
                ways.push(WayOut::EmitFewerRanks);
            }
        } else {
            ways.extend([WayOut::SkipProof, WayOut::Certificate]);
        }
        ways.push(WayOut::FewerRanks);
        ways
    }
}

impl std::fmt::Display for MemoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "compiling {} of {} ranks needs an estimated {} ({} for the proof over every rank, {} for the ranks \
             emitted), more than the memory budget of {}; {}",
            self.ranks,
            self.rank_n,
            Bytes(self.needed),
            Bytes(self.proof),
            Bytes(self.emit),
            Bytes(self.budget),
            WaysOut(&self.ways_out())
        )
    }
}

impl std::error::Error for MemoryError {}

/// A byte count, in the largest binary unit that keeps it above 1.
struct Bytes(u64);

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
        if self.0 < 1024 {
            return write!(f, "{} bytes", self.0);
        }
        let (mut value, mut unit) = (self.0 as f64 / 1024.0, 0);
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        write!(f, "{value:.1} {}", UNITS[unit])
    }
}

/// Ways out, as a sentence.
struct WaysOut<'a>(&'a [WayOut]);

impl std::fmt::Display for WaysOut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ways out: ")?;
        for (i, way) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == self.0.len() { ", or " } else { ", " })?;
            }
            f.write_str(way.describe())?;
        }
        Ok(())
    }
}

/// Why a manifest does not certify a schedule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CertificateError {
    /// A manifest of another layout.
    #[error("the certificate's manifest_schema is {certificate}, this ccc reads {ours}")]
    Schema {
        /// The certificate's.
        certificate: u32,
        /// This ccc's.
        ours: u32,
    },
    /// The proof section is not what a proof of this schedule reports.
    #[error(
        "the certificate's proof section does not fit this schedule: {field} is {found}, a proof of it reports {expected}"
    )]
    ProofMismatch {
        /// The figure that differs, by its path in the manifest
        /// (`proof.postconditions[0].transfers`, `proof.protocol.signals`).
        field: String,
        /// What the certificate says.
        found: String,
        /// What a proof of this schedule reports.
        expected: String,
    },
    /// The manifest's compile skipped the proof.
    #[error("the certificate's compile did not prove its schedule (it was compiled with --no-verify)")]
    NotProven,
    /// The manifest was written by another format version.
    #[error("the certificate is of format version {certificate}, this ccc writes {ours}")]
    FormatVersion {
        /// The certificate's.
        certificate: u32,
        /// This ccc's.
        ours: u32,
    },
    /// The manifest's signature is not the MD5 of its own fields.
    #[error(
        "the certificate's signature {signature} is not the digest of its signature fields ({digest}): it was edited"
    )]
    Corrupt {
        /// The signature it claims.
        signature: String,
        /// The digest of its fields.
        digest: String,
    },
    /// The manifest proved another schedule.
    #[error(
        "the certificate proved the schedule signed {certificate}, but this spec signs {ours}; \
         run ccc diagnose on the two to see why"
    )]
    OtherSchedule {
        /// The certificate's signature.
        certificate: String,
        /// This spec's.
        ours: String,
    },
}

/// Parses, validates and compiles RON source.
///
/// # Errors
///
/// The first failing pass's error.
pub fn compile_source(src: &str, options: &Options) -> Result<(ParsedSpec, ValidProgram, Compiled), CompileError> {
    let parsed = parse(src)?;
    let valid = validate(parsed.program.clone())?;
    let compiled = compile(&valid, options)?;
    Ok((parsed, valid, compiled))
}

/// Compiles a validated program: build, lower, verify, encode, sign.
///
/// # Errors
///
/// The first failing pass's error. Nothing is returned half-done.
pub fn compile(valid: &ValidProgram, options: &Options) -> Result<Compiled, CompileError> {
    compile_tuned(valid, options, &ProverOptions::default())
}

/// [`compile`] with explicit prover tuning (which never changes a result).
///
/// # Errors
///
/// As [`compile`].
pub fn compile_tuned(
    valid: &ValidProgram,
    options: &Options,
    prover: &ProverOptions,
) -> Result<Compiled, CompileError> {
    let schedule = build(valid)?;
    let verify = if options.verify { Verify::Prove(prover) } else { Verify::Skip };
    compile_built(valid, schedule, options, verify)
}

/// How [`compile_built`] checks what it emits.
#[derive(Clone, Copy)]
enum Verify<'a> {
    /// The whole proof.
    Prove(&'a ProverOptions),
    /// Nothing (`--no-verify`, or a certificate checked by the caller).
    Skip,
}

/// Ranks emitted from which a compile that does not prove first lowers a
/// few probes: fewer are lowered directly, which is as cheap.
const PROBE_FROM: usize = 4;

/// Lowers, encodes, proves (if asked) and signs a built schedule.
///
/// Everything that can be known before world-sized work is checked first:
/// a few representative ranks ([`probes`]) are lowered and encoded, so a
/// schedule that does not fit the device (mesh events, records, SPAD
/// sizes per TOP_SP) is refused at the cost of those ranks; the full
/// postcondition runs the proof will surely need must fit the prover's
/// cells; and the memory the compile will hold, estimated from the probes,
/// must fit [`Options::memory_budget`]. Only then are the ranks lowered,
/// every rank when proving, stopping at the first that fails.
fn compile_built(
    valid: &ValidProgram,
    schedule: Schedule,
    options: &Options,
    verify: Verify<'_>,
) -> Result<Compiled, CompileError> {
    let rank_n = schedule.shape.rank_n;
    let mut wanted: Vec<Rank> =
        if options.ranks.is_empty() { (0..rank_n).map(Rank).collect() } else { options.ranks.clone() };
    wanted.sort_unstable();
    wanted.dedup();
    if let Some(&bad) = wanted.iter().find(|r| r.0 >= rank_n) {
        return Err(LowerError {
            rank: bad,
            topsp: None,
            collective: None,
            step: None,
            kind: LowerErrorKind::NoSuchRank { rank_n },
        }
        .into());
    }
    let proving = matches!(verify, Verify::Prove(_));
    if proving || wanted.len() >= PROBE_FROM {
        let probed = probe(&schedule, &wanted)?;
        if let Verify::Prove(prover) = verify {
            postcondition::check_cells(&schedule, prover)?;
        }
        let prover = match verify {
            Verify::Prove(prover) => Some(prover),
            Verify::Skip => None,
        };
        let estimate = estimate(&schedule, &probed, wanted.len() as u64, prover);
        if estimate.proof.saturating_add(estimate.emit) > options.memory_budget {
            return Err(MemoryError {
                needed: estimate.proof.saturating_add(estimate.emit),
                budget: options.memory_budget,
                proof: estimate.proof,
                emit: estimate.emit,
                ranks: wanted.len() as u64,
                rank_n,
            }
            .into());
        }
    }
    // Member 0's transfers of each group, for the watches below: proof work.
    let t = Instant::now();
    let bases = match verify {
        Verify::Prove(prover) if prover.symmetry => Some(Bases::new(&schedule)),
        _ => None,
    };
    let bases_time = t.elapsed();
    // Compile work first: lowering and encoding the ranks asked for is what
    // a rank costs. When proving, lowering also shows each rank's step
    // graph to a watch (see `Bases`).
    let lowered = if proving { rank_n as usize } else { wanted.len() };
    let lowering = Ticker::start(options, Stage::Lower, lowered as u64);
    let (programs, seen) = lower_ranks_watched(&schedule, &wanted, bases.as_ref(), &lowering)?;
    let arch = schedule.arch;
    let images = first_error_early(&programs, |p| encode(p, arch))?;
    let proof = match verify {
        Verify::Prove(prover) => {
            let watched = Watched { bases, seen, time: bases_time };
            Some(prove(&schedule, &wanted, &programs, &images, prover, watched, options, &lowering)?)
        }
        Verify::Skip => None,
    };
    let signature = sign(valid, &schedule);
    Ok(Compiled { schedule, signature, programs, images, proof })
}

/// The representative ranks lowered and encoded before any world-sized
/// work: the first and last rank asked for, and the world's first, middle
/// and last. A schedule's ranks differ by their place in their groups and
/// scopes; these catch a device limit every rank (or an end of the world)
/// exceeds, and give the sizes the memory estimate scales.
fn probes(rank_n: u32, wanted: &[Rank]) -> Vec<Rank> {
    let ends = [wanted.first(), wanted.last()].into_iter().flatten().copied();
    let mut ranks: Vec<Rank> = ends.chain([Rank(0), Rank(rank_n / 2), Rank(rank_n.saturating_sub(1))]).collect();
    ranks.sort_unstable();
    ranks.dedup();
    ranks
}

/// A lowered and encoded probe.
struct Probed {
    program: RankProgram,
    images: RankImages,
}

/// Lowers and encodes the [`probes`], in rank order; the first error.
fn probe(schedule: &Schedule, wanted: &[Rank]) -> Result<Vec<Probed>, CompileError> {
    let mut out = Vec::new();
    for rank in probes(schedule.shape.rank_n, wanted) {
        let program = lower(schedule, rank)?;
        let images = encode(&program, schedule.arch)?;
        out.push(Probed { program, images });
    }
    Ok(out)
}

/// Bytes a compile will hold at once, by estimate.
struct Estimate {
    /// The proof's: every rank's lowered records and watch, the symbolic
    /// buffers.
    proof: u64,
    /// The emitted ranks': records and images.
    emit: u64,
}

/// The memory of a compile emitting `ranks` ranks, from the largest probe:
/// the emitted ranks' programs and images; when proving, every rank's
/// program and watch as lowering collects them, the world in rank order
/// the protocol proof takes (a second copy of the emitted ranks'
/// programs), and the postcondition proof's largest buffers.
fn estimate(schedule: &Schedule, probed: &[Probed], ranks: u64, prover: Option<&ProverOptions>) -> Estimate {
    use std::mem::size_of;
    let program = probed.iter().map(|p| p.program.footprint()).max().unwrap_or(0);
    let images = probed.iter().map(|p| images_footprint(&p.images)).max().unwrap_or(0);
    let emit = ranks.saturating_mul(program.saturating_add(images));
    let Some(prover) = prover else { return Estimate { proof: 0, emit } };
    let rank_n = u64::from(schedule.shape.rank_n);
    let watch = (size_of::<Seen>() + 4 * schedule.collectives.len()) as u64;
    // Lowering collects each rank's result, then unzips it; the protocol
    // proof's world is one more vector of programs.
    let collected = size_of::<Option<Result<(RankProgram, Seen), LowerError>>>() + size_of::<RankProgram>();
    let per_rank = program.saturating_add(watch).saturating_add(collected as u64);
    let world = rank_n.saturating_mul(per_rank).saturating_add(ranks.saturating_mul(program));
    let buffers = schedule.collectives.iter().map(|plan| postcondition::bytes(schedule, plan, prover)).max();
    Estimate { proof: world.saturating_add(buffers.unwrap_or(0)), emit }
}

/// The bytes a rank's images hold.
fn images_footprint(images: &RankImages) -> u64 {
    let inline = std::mem::size_of::<RankImages>() + images.topsps.capacity() * std::mem::size_of::<TopSpImages>();
    let heap: usize =
        images.topsps.iter().map(|t| t.ctrl_spad.capacity() + t.slot_spad.capacity() + t.neff_configs.len()).sum();
    (inline + heap) as u64
}

/// Proves the schedule: the postcondition over the step graph, the protocol
/// over every rank's records (lowering the ranks not asked for), and the
/// round trip of the images that were encoded.
#[allow(clippy::too_many_arguments)]
fn prove(
    schedule: &Schedule,
    wanted: &[Rank],
    programs: &[RankProgram],
    images: &[RankImages],
    prover: &ProverOptions,
    watched: Watched,
    options: &Options,
    lowering: &Ticker<'_>,
) -> Result<Proof, CompileError> {
    let rank_n = schedule.shape.rank_n;
    // The protocol proof checks every rank's records: lower the ranks not
    // asked for now (proof work, watched like the others), and put the
    // ones asked for in their places.
    let t = Instant::now();
    let Watched { bases, mut seen, time: bases_time } = watched;
    let others: Vec<Rank> = (0..rank_n).map(Rank).filter(|r| wanted.binary_search(r).is_err()).collect();
    let (others, others_seen) = lower_ranks_watched(schedule, &others, bases.as_ref(), lowering)?;
    seen.extend(others_seen);
    let lowering_time = t.elapsed();
    // The symmetric groups, from what the watches saw: postcondition
    // work, shared with the protocol proof.
    let t = Instant::now();
    let symmetry = bases.map_or_else(Symmetry::none, |b| b.symmetry(schedule, &seen));
    let symmetric_groups = symmetry.symmetric_groups();
    let members: u64 =
        schedule.collectives.iter().map(|p| u64::from(p.groups.group_n()) * u64::from(p.groups.size())).sum();
    let proving = Ticker::start(options, Stage::Postcondition, members);
    let post = postcondition::prove_as_built_reporting(schedule, &symmetry, prover, &|n| proving.tick(n))?;
    let postcondition_time = bases_time + t.elapsed();
    let t = Instant::now();
    let checking = Ticker::start(options, Stage::Protocol, u64::from(rank_n));
    let tick = || checking.tick(1);
    let protocol = if others.is_empty() {
        protocol::prove_reporting(schedule, programs, &symmetry, &tick)?
    } else {
        let mut lowered = others.into_iter();
        let mut asked = programs.iter();
        let world: Vec<RankProgram> = (0..rank_n)
            .filter_map(|r| if wanted.binary_search(&Rank(r)).is_ok() { asked.next().cloned() } else { lowered.next() })
            .collect();
        protocol::prove_reporting(schedule, &world, &symmetry, &tick)?
    };
    let protocol_time = lowering_time + t.elapsed();
    let t = Instant::now();
    let images_checked = prove_roundtrips(programs, images, options)?;
    Ok(Proof {
        postcondition: post,
        protocol,
        images_checked,
        postcondition_time,
        protocol_time,
        roundtrip_time: t.elapsed(),
        symmetric_groups,
        certified: false,
    })
}

/// Compiles the ranks asked for under the certificate of an earlier compile
/// that proved the same schedule (its `manifest.json`), instead of proving
/// the whole world again. The certificate must be of this manifest schema
/// and format version, intact (its signature the digest of its fields),
/// proven, of this spec's signature, and its proof section must report what
/// a proof of this schedule reports. This compile then checks everything its
/// own ranks' records can show alone (each chain's structure, and step by
/// step the descriptors each record posts against the step graph) and
/// decodes its images back; only the cross-rank balance and the world's
/// postcondition are taken from the certificate. Its cost is its own ranks'.
///
/// The manifest is trusted input, as the spec is: a certificate certifies
/// because it was written by a verified compile, not because it proves
/// anything itself.
///
/// # Errors
///
/// [`CompileError::Certificate`] when the manifest does not vouch for this
/// schedule; otherwise as [`compile`].
pub fn compile_certified(
    valid: &ValidProgram,
    options: &Options,
    certificate: &Manifest,
) -> Result<Compiled, CompileError> {
    if certificate.manifest_schema != MANIFEST_SCHEMA {
        return Err(CertificateError::Schema { certificate: certificate.manifest_schema, ours: MANIFEST_SCHEMA }.into());
    }
    let proof = certificate.proof.as_ref().ok_or(CertificateError::NotProven)?;
    if certificate.format_version != FORMAT_VERSION {
        return Err(
            CertificateError::FormatVersion { certificate: certificate.format_version, ours: FORMAT_VERSION }.into()
        );
    }
    let digest = digest_of(&certificate.signature_fields);
    if digest != certificate.signature {
        return Err(CertificateError::Corrupt { signature: certificate.signature.clone(), digest }.into());
    }
    let schedule = build(valid)?;
    let ours = sign(valid, &schedule).digest;
    if ours != certificate.signature {
        return Err(CertificateError::OtherSchedule { certificate: certificate.signature.clone(), ours }.into());
    }
    check_proof_section(&schedule, proof)?;
    let mut compiled = compile_built(valid, schedule, options, Verify::Skip)?;
    let t = Instant::now();
    protocol::prove_ranks(&compiled.schedule, &compiled.programs)?;
    let protocol_time = t.elapsed();
    let t = Instant::now();
    let images_checked = prove_roundtrips(&compiled.programs, &compiled.images, options)?;
    compiled.proof = Some(Proof {
        postcondition: proof.postconditions.clone(),
        protocol: proof.protocol.clone(),
        images_checked,
        postcondition_time: Duration::ZERO,
        protocol_time,
        roundtrip_time: t.elapsed(),
        symmetric_groups: 0,
        certified: true,
    });
    Ok(compiled)
}

/// Every figure of a certificate's proof section must be the one a proof
/// of this schedule reports: per collective its index, claim, groups,
/// members, steps, halves and transfers matched; for the protocol its
/// chains, records, steps and semaphore increments. They are all
/// computable without proving (`verify::figures`): the shape's from the
/// phases, the two transfer counts by listing what each member receives
/// (member 0's, times the group size, for a group that moves member 0's
/// program to each member sampled). The first that differs is named by
/// its path in the manifest. (The manifest is trusted input: this catches
/// an edited section or one copied from another schedule, not a forgery.)
fn check_proof_section(schedule: &Schedule, proof: &ManifestProof) -> Result<(), CertificateError> {
    let mismatch = |field: String, found: &dyn std::fmt::Display, expected: &dyn std::fmt::Display| {
        Err(CertificateError::ProofMismatch { field, found: found.to_string(), expected: expected.to_string() })
    };
    if proof.postconditions.len() != schedule.collectives.len() {
        let (found, expected) = (proof.postconditions.len(), schedule.collectives.len());
        return mismatch("proof.postconditions (entries)".into(), &found, &expected);
    }
    let figures = crate::verify::figures::figures(schedule);
    let params = schedule.arch.params();
    let rank_n = u64::from(schedule.shape.rank_n);
    let (mut records, mut steps) = (0u64, 0u64);
    for (i, ((p, plan), &(halves, transfers))) in
        proof.postconditions.iter().zip(&schedule.collectives).zip(&figures.collectives).enumerate()
    {
        let claim = postcondition::claim(plan);
        let numbers: [(&str, u64, u64); 6] = [
            ("collective", u64::from(p.collective), u64::from(plan.index)),
            ("groups", u64::from(p.groups), u64::from(plan.groups.group_n())),
            ("members", u64::from(p.members), u64::from(plan.groups.size())),
            ("steps", u64::from(p.steps), u64::from(plan.step_n)),
            ("halves", u64::from(p.halves), u64::from(halves)),
            ("transfers", p.transfers, transfers),
        ];
        if let Some(&(name, found, expected)) = numbers.iter().find(|(_, f, e)| f != e) {
            return mismatch(format!("proof.postconditions[{i}].{name}"), &found, &expected);
        }
        if p.claim != claim {
            return mismatch(
                format!("proof.postconditions[{i}].claim"),
                &format!("{:?}", p.claim),
                &format!("{claim:?}"),
            );
        }
        if !plan.phases.is_empty() {
            let used = u64::from(plan.channels.min(params.topsp_n));
            records += rank_n * used * plan.phases.len() as u64;
            steps += rank_n * used * u64::from(plan.step_n);
        }
    }
    let chains = rank_n * u64::from(crate::lower::topsps_used(schedule));
    let p = &proof.protocol;
    let numbers: [(&str, u64, u64); 4] = [
        ("chains", p.chains, chains),
        ("records", p.records, records),
        ("steps", p.steps, steps),
        ("signals", p.signals, figures.signals),
    ];
    if let Some(&(name, found, expected)) = numbers.iter().find(|(_, f, e)| f != e) {
        return mismatch(format!("proof.protocol.{name}"), &found, &expected);
    }
    Ok(())
}

/// What the proof starts from when lowering watched the step graph: member
/// 0's transfers of each group, what each lowered rank's watch saw, and the
/// time listing the bases took.
struct Watched {
    bases: Option<Bases>,
    seen: Vec<Seen>,
    time: Duration,
}

/// [`lower_ranks`], each rank's step graph shown to a watch of `bases` as
/// it is lowered (no watch without bases), each rank lowered counted by
/// `ticker`.
fn lower_ranks_watched(
    schedule: &Schedule,
    ranks: &[Rank],
    bases: Option<&Bases>,
    ticker: &Ticker<'_>,
) -> Result<(Vec<RankProgram>, Vec<Seen>), LowerError> {
    let Some(bases) = bases else {
        let programs = first_error_early(ranks, |&r| {
            let program = lower(schedule, r);
            ticker.tick(1);
            program
        })?;
        return Ok((programs, Vec::new()));
    };
    let lowered = first_error_early(ranks, |&r| {
        let mut watch = bases.watch(r);
        let program = lower_watched(schedule, r, &mut |plan, node| watch.see(plan, node)).map(|p| (p, watch.finish()));
        ticker.tick(1);
        program
    })?;
    Ok(lowered.into_iter().unzip())
}

/// Lowers `ranks` in parallel; the result is in the order asked, and the
/// error (if any) is the first in that order, whatever the thread count.
///
/// # Errors
///
/// The first rank's [`LowerError`].
pub fn lower_ranks(schedule: &Schedule, ranks: &[Rank]) -> Result<Vec<RankProgram>, LowerError> {
    first_error_early(ranks, |&r| lower(schedule, r))
}

/// Decodes each image back and checks it against its program; the number
/// of images checked.
fn prove_roundtrips(programs: &[RankProgram], images: &[RankImages], options: &Options) -> Result<u64, VerifyError> {
    let ticker = Ticker::start(options, Stage::RoundTrip, programs.len() as u64);
    let pairs: Vec<(&RankProgram, &RankImages)> = programs.iter().zip(images).collect();
    let checked = first_error_early(&pairs, |(p, i)| {
        let checked = roundtrip::prove(p, i);
        ticker.tick(1);
        checked
    })?;
    Ok(checked.iter().sum())
}

/// Maps `items` in parallel, in order, stopping early at a failure: the
/// error returned is the first in input order, whatever the thread count
/// (a parallel collect into `Result` would return whichever failed first
/// in time). Once item `i` has failed, items after it are skipped; every
/// item before the lowest failing index still runs, so that index's error
/// is the first in order.
fn first_error_early<I, T, E, F>(items: &[I], f: F) -> Result<Vec<T>, E>
where
    I: Sync,
    T: Send,
    E: Send,
    F: Fn(&I) -> Result<T, E> + Sync,
{
    let failed = AtomicUsize::new(usize::MAX);
    let results: Vec<Option<Result<T, E>>> = items
        .par_iter()
        .enumerate()
        .map(|(i, item)| {
            if i > failed.load(Ordering::Relaxed) {
                return None;
            }
            let result = f(item);
            if result.is_err() {
                failed.fetch_min(i, Ordering::Relaxed);
            }
            Some(result)
        })
        .collect();
    // An item is skipped only after a failure at a lower index, which
    // comes first here.
    results.into_iter().flatten().collect()
}
