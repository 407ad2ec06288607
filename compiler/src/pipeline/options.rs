//! What a compile is asked to do ([`Options`]: which ranks, where the proof
//! comes from, how much memory), and how it reports its progress
//! ([`Progress`], counted in ranks per [`Stage`]).

use crate::manifest::Manifest;
use crate::verify::ProverOptions;
use ccc_ir::id::Rank;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The default of [`Options::memory_budget`]: 2 GiB. What a compile may
/// hold at once, by the estimate made before any world-sized work (see
/// [`MemoryError`](super::MemoryError)); well under a 4 GiB address-space cap, which must also
/// hold the allocator's arenas, the threads' stacks, the spec and what the
/// estimate leaves out (the proof's interned contributor sets).
pub const DEFAULT_MEMORY_BUDGET: u64 = 2 << 30;

/// The default of [`Options::chunk_ranks`], the most ranks a chunk holds:
/// enough to keep every core busy between a chunk's stages and to pay each
/// stage's fork and join over many ranks, few enough that a chunk's
/// programs and images are a small part of the memory budget. A chunk
/// holds fewer where a rank's programs are large (see
/// [`CHUNK_CACHE_BYTES`]).
pub const DEFAULT_CHUNK_RANKS: usize = 512;

/// The programs a chunk holds, at most, by the largest probe's footprint
/// (`budget.rs`): each stage of a chunk reads every record again, so a
/// chunk's programs should stay in the processor's caches from one stage
/// to the next. A 65,536-rank Hier all-reduce's rank holds about 24 KB of
/// records: at 512 ranks a chunk (12 MB) left the stages after lowering
/// waiting on memory, and the verified compile took about 1.4 times the
/// CPU time it takes at 64; a flat ring's rank holds a few KB, and 64-rank
/// chunks made its compile slower by their fork-joins alone.
pub const CHUNK_CACHE_BYTES: u64 = 3 << 19;

/// What to compile.
#[derive(Clone)]
pub struct Options {
    /// The ranks to emit images for; empty means every rank. Taken as a
    /// set: [`Compiled::images`](super::Compiled::images) holds each once,
    /// in rank order, whatever the order or repeats here. Without a proof
    /// ([`verify`](Self::verify) off), the ranks not named are still
    /// judged against the limits that depend on the algorithm
    /// ([`UnloweredError`](super::UnloweredError)).
    pub ranks: Vec<Rank>,
    /// Keep the emitted ranks' programs and images in the
    /// [`Compiled`](super::Compiled) (the default). Off, they are lowered,
    /// encoded, checked (decoded back, when verifying) and dropped a chunk
    /// at a time, and [`Compiled::programs`](super::Compiled::programs)
    /// and `images` are empty: what a caller that writes nothing asks
    /// (`ccc verify` proves the world and emits none), whose memory then
    /// stays one chunk's output plus the proof's own state. When verifying
    /// with emit off, all work on ranks is the proof's
    /// ([`Times`](super::Times)).
    pub emit: bool,
    /// Prove the schedule before emitting (the default). Off, nothing is
    /// proven and [`Compiled::proof`](super::Compiled::proof) is `None`.
    pub verify: bool,
    /// When verifying, take the world's proof from this certificate (the
    /// manifest of an earlier verified compile of the same schedule)
    /// instead of proving the world again; see `pipeline/certificate.rs`.
    /// Read only when [`Options::verify`] is on.
    pub certificate: Option<Arc<Manifest>>,
    /// How the provers run: tuning that never changes what a proof finds
    /// (with its symmetry argument off, a large world is too large to
    /// prove: see [`ProverOptions`](crate::verify::ProverOptions)).
    pub prover: ProverOptions,
    /// The most memory, in bytes, the compile may estimate it holds at
    /// once ([`DEFAULT_MEMORY_BUDGET`]); more is refused before any
    /// world-sized work, with a [`MemoryError`](super::MemoryError). Not
    /// estimated for fewer than 4 ranks compiled without a proof of their
    /// own (skipped, or from a certificate): they are lowered directly,
    /// which costs what probing them would.
    pub memory_budget: u64,
    /// Called as work counted in ranks advances (see [`Progress`]); `None`
    /// costs nothing.
    pub progress: Option<Arc<ProgressFn>>,
    /// The most ranks lowered, encoded and checked at once (a chunk; see
    /// `pipeline/stream.rs`), [`DEFAULT_CHUNK_RANKS`]; 0 is taken as 1.
    /// A chunk holds fewer when that many ranks' programs would pass
    /// [`CHUNK_CACHE_BYTES`]. Tuning only: a result never depends on it;
    /// the memory a compile holds beyond what it keeps grows with it.
    pub chunk_ranks: usize,
    /// What the caller will hold besides, per emitted TOP_SP, while it
    /// keeps the result: counted against [`Options::memory_budget`] as the
    /// compile's own. Nothing for the CLI; a binding that copies each
    /// image into its own objects (Python's `bytes`) says so here.
    pub caller_holds: CallerHolds,
    /// A flag the caller may set from another thread to stop the compile
    /// (a Ctrl-C, a deadline): it is read before each chunk of ranks,
    /// between passes and before the result is returned, and once set the
    /// compile returns [`CompileError::Cancelled`](super::CompileError::Cancelled)
    /// with nothing emitted (the postcondition proof after the last chunk
    /// runs to its end first). `None` costs nothing.
    pub cancel: Option<Cancel>,
}

/// A flag that stops a compile ([`Options::cancel`]). Clones share it:
/// keep one, give the compile another, and [`Cancel::cancel`] from any
/// thread.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag not yet set.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Sets the flag: every compile given it (or a clone) stops at its
    /// next check.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the flag is set.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The flag itself, shared: for a signal handler to set (`ccc
    /// compile` stops on Ctrl-C through it).
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }
}

/// What a caller holds per emitted TOP_SP beside the compile's own images
/// ([`Options::caller_holds`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallerHolds {
    /// Copies of each image.
    pub image_copies: u64,
    /// Bytes of its own objects (headers, maps).
    pub bytes: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ranks: Vec::new(),
            emit: true,
            verify: true,
            certificate: None,
            prover: ProverOptions::default(),
            memory_budget: DEFAULT_MEMORY_BUDGET,
            progress: None,
            chunk_ranks: DEFAULT_CHUNK_RANKS,
            caller_holds: CallerHolds::default(),
            cancel: None,
        }
    }
}

/// Where a compile's proof comes from, as [`Options`] asks.
#[derive(Clone, Copy)]
pub(super) enum ProofSource<'a> {
    /// The whole proof, by these provers.
    Prove(&'a ProverOptions),
    /// The world's figures from a certificate; the ranks emitted checked.
    Certificate(&'a Manifest),
    /// No proof.
    Skip,
}

impl Options {
    /// Where the proof comes from.
    pub(super) fn proof_source(&self) -> ProofSource<'_> {
        match (&self.certificate, self.verify) {
            (_, false) => ProofSource::Skip,
            (Some(certificate), true) => ProofSource::Certificate(certificate),
            (None, true) => ProofSource::Prove(&self.prover),
        }
    }

    /// `Err(Cancelled)` once [`Options::cancel`] is set.
    pub(super) fn go_on(&self) -> Result<(), super::CompileError> {
        match &self.cancel {
            Some(cancel) if cancel.is_cancelled() => Err(super::CompileError::Cancelled),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("ranks", &self.ranks)
            .field("emit", &self.emit)
            .field("verify", &self.verify)
            .field("certificate", &self.certificate.as_ref().map(|c| &c.signature))
            .field("prover", &self.prover)
            .field("memory_budget", &self.memory_budget)
            .field("progress", &self.progress.as_ref().map(|_| "Fn(Progress)"))
            .field("chunk_ranks", &self.chunk_ranks)
            .field("caller_holds", &self.caller_holds)
            .field("cancel", &self.cancel)
            .finish()
    }
}

/// Receives [`Progress`] reports; called from any thread (rayon's
/// workers), so it must be quick and thread-safe. The library never
/// prints: a front end draws the reports (the CLI, a progress bar).
pub type ProgressFn = dyn Fn(Progress) + Send + Sync;

/// A stage of a compile whose work is counted in ranks. The ranks stream
/// through lowering, the protocol check and the round trip a chunk at a
/// time, so those three advance together (each started before the first
/// chunk); the postcondition follows, once every rank has been lowered.
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
/// keep the largest). Stages may advance together (see [`Stage`]).
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
pub(super) struct Ticker<'a> {
    report: Option<&'a ProgressFn>,
    stage: Stage,
    total: u64,
    every: u64,
    done: AtomicU64,
}

impl<'a> Ticker<'a> {
    /// Starts `stage` of `total` ranks (reporting 0 done).
    pub(super) fn start(options: &'a Options, stage: Stage, total: u64) -> Ticker<'a> {
        let report = options.progress.as_deref();
        if let Some(f) = report {
            f(Progress { stage, done: 0, total });
        }
        Ticker { report, stage, total, every: (total / PROGRESS_REPORTS).max(1), done: AtomicU64::new(0) }
    }

    /// `n` more ranks done.
    pub(super) fn tick(&self, n: u64) {
        let Some(f) = self.report else { return };
        let before = self.done.fetch_add(n, Ordering::Relaxed);
        let done = before + n;
        if done / self.every != before / self.every || done == self.total {
            f(Progress { stage: self.stage, done, total: self.total });
        }
    }
}
