//! The passes in order, readable top to bottom: the one call a framework
//! (or the CLI) makes to turn a spec into images.

use crate::build::{BuildError, build};
use crate::encode::{ImageError, RankImages, encode};
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
use std::time::{Duration, Instant};

/// What to compile.
#[derive(Clone, Debug)]
pub struct Options {
    /// The ranks to emit images for; empty means every rank.
    pub ranks: Vec<Rank>,
    /// Prove the schedule before emitting (the default).
    pub verify: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { ranks: Vec::new(), verify: true }
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
        /// The part that differs.
        field: &'static str,
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
    compile_built(valid, schedule, &options.ranks, verify)
}

/// How [`compile_built`] checks what it emits.
enum Verify<'a> {
    /// The whole proof.
    Prove(&'a ProverOptions),
    /// Nothing (`--no-verify`, or a certificate checked by the caller).
    Skip,
}

/// Lowers, encodes, proves (if asked) and signs a built schedule.
fn compile_built(
    valid: &ValidProgram,
    schedule: Schedule,
    ranks: &[Rank],
    verify: Verify<'_>,
) -> Result<Compiled, CompileError> {
    let rank_n = schedule.shape.rank_n;
    let mut wanted: Vec<Rank> = if ranks.is_empty() { (0..rank_n).map(Rank).collect() } else { ranks.to_vec() };
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
    // Member 0's transfers of each group, for the watches below: proof work.
    let t = Instant::now();
    let bases = match verify {
        Verify::Prove(prover) if prover.symmetry => Some(Bases::new(&schedule)),
        _ => None,
    };
    let bases_time = t.elapsed();
    // Compile work first: lowering and encoding the ranks asked for is what
    // a rank costs, and a schedule that does not fit the device fails here,
    // before any world-sized proof is attempted. When proving, lowering
    // also shows each rank's step graph to a watch (see `Bases`).
    let (programs, seen) = lower_ranks_watched(&schedule, &wanted, bases.as_ref())?;
    let arch = schedule.arch;
    let images = first_error(programs.par_iter().map(|p| encode(p, arch)).collect())?;
    let proof = match verify {
        Verify::Prove(prover) => {
            let watched = Watched { bases, seen, time: bases_time };
            Some(prove(&schedule, &wanted, &programs, &images, prover, watched)?)
        }
        Verify::Skip => None,
    };
    let signature = sign(valid, &schedule);
    Ok(Compiled { schedule, signature, programs, images, proof })
}

/// Proves the schedule: the postcondition over the step graph, the protocol
/// over every rank's records (lowering the ranks not asked for), and the
/// round trip of the images that were encoded.
fn prove(
    schedule: &Schedule,
    wanted: &[Rank],
    programs: &[RankProgram],
    images: &[RankImages],
    prover: &ProverOptions,
    watched: Watched,
) -> Result<Proof, CompileError> {
    let rank_n = schedule.shape.rank_n;
    // The protocol proof checks every rank's records: lower the ranks not
    // asked for now (proof work, watched like the others), and put the
    // ones asked for in their places.
    let t = Instant::now();
    let Watched { bases, mut seen, time: bases_time } = watched;
    let others: Vec<Rank> = (0..rank_n).map(Rank).filter(|r| wanted.binary_search(r).is_err()).collect();
    let (others, others_seen) = lower_ranks_watched(schedule, &others, bases.as_ref())?;
    seen.extend(others_seen);
    let lowering_time = t.elapsed();
    // The symmetric groups, from what the watches saw: postcondition
    // work, shared with the protocol proof.
    let t = Instant::now();
    let symmetry = bases.map_or_else(Symmetry::none, |b| b.symmetry(schedule, &seen));
    let symmetric_groups = symmetry.symmetric_groups();
    let post = postcondition::prove_as_built(schedule, &symmetry, prover)?;
    let postcondition_time = bases_time + t.elapsed();
    let t = Instant::now();
    let protocol = if others.is_empty() {
        protocol::prove_with(schedule, programs, &symmetry)?
    } else {
        let mut lowered = others.into_iter();
        let mut asked = programs.iter();
        let world: Vec<RankProgram> = (0..rank_n)
            .filter_map(|r| if wanted.binary_search(&Rank(r)).is_ok() { asked.next().cloned() } else { lowered.next() })
            .collect();
        protocol::prove_with(schedule, &world, &symmetry)?
    };
    let protocol_time = lowering_time + t.elapsed();
    let t = Instant::now();
    let images_checked = prove_roundtrips(programs, images)?;
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
    let mut compiled = compile_built(valid, schedule, &options.ranks, Verify::Skip)?;
    let t = Instant::now();
    protocol::prove_ranks(&compiled.schedule, &compiled.programs)?;
    let protocol_time = t.elapsed();
    let t = Instant::now();
    let images_checked = prove_roundtrips(&compiled.programs, &compiled.images)?;
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

/// The figures of a certificate's proof section must be those a proof of
/// this schedule reports: one postcondition per collective, with this
/// schedule's claim, groups, members and steps, and a protocol proof over
/// every rank's chains, records and steps. (The manifest is trusted input: this
/// catches a section copied from another schedule, not a forgery.)
fn check_proof_section(schedule: &Schedule, proof: &ManifestProof) -> Result<(), CertificateError> {
    let mismatch = |field: &'static str, found: String, expected: String| {
        Err(CertificateError::ProofMismatch { field, found, expected })
    };
    if proof.postconditions.len() != schedule.collectives.len() {
        return mismatch(
            "postconditions",
            proof.postconditions.len().to_string(),
            schedule.collectives.len().to_string(),
        );
    }
    let params = schedule.arch.params();
    let rank_n = u64::from(schedule.shape.rank_n);
    let (mut records, mut steps) = (0u64, 0u64);
    for (p, plan) in proof.postconditions.iter().zip(&schedule.collectives) {
        let want = (plan.index, postcondition::claim(plan), plan.groups.group_n(), plan.groups.size(), plan.step_n);
        let found = (p.collective, p.claim.clone(), p.groups, p.members, p.steps);
        if found != want {
            return mismatch("postcondition", format!("{found:?}"), format!("{want:?}"));
        }
        if !plan.phases.is_empty() {
            let used = u64::from(plan.channels.min(params.topsp_n));
            records += rank_n * used * plan.phases.len() as u64;
            steps += rank_n * used * u64::from(plan.step_n);
        }
    }
    let chains = rank_n * u64::from(crate::lower::topsps_used(schedule));
    let want = (chains, records, steps);
    let found = (proof.protocol.chains, proof.protocol.records, proof.protocol.steps);
    if found != want {
        return mismatch("protocol (chains, records, steps)", format!("{found:?}"), format!("{want:?}"));
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
/// it is lowered (no watch without bases).
fn lower_ranks_watched(
    schedule: &Schedule,
    ranks: &[Rank],
    bases: Option<&Bases>,
) -> Result<(Vec<RankProgram>, Vec<Seen>), LowerError> {
    let Some(bases) = bases else { return Ok((lower_ranks(schedule, ranks)?, Vec::new())) };
    let lowered = first_error(
        ranks
            .par_iter()
            .map(|&r| {
                let mut watch = bases.watch(r);
                lower_watched(schedule, r, &mut |plan, node| watch.see(plan, node)).map(|p| (p, watch.finish()))
            })
            .collect(),
    )?;
    Ok(lowered.into_iter().unzip())
}

/// Lowers `ranks` in parallel; the result is in the order asked, and the
/// error (if any) is the first in that order, whatever the thread count.
///
/// # Errors
///
/// The first rank's [`LowerError`].
pub fn lower_ranks(schedule: &Schedule, ranks: &[Rank]) -> Result<Vec<RankProgram>, LowerError> {
    first_error(ranks.par_iter().map(|&r| lower(schedule, r)).collect())
}

/// Decodes each image back and checks it against its program; the number
/// of images checked.
fn prove_roundtrips(programs: &[RankProgram], images: &[RankImages]) -> Result<u64, VerifyError> {
    let checked: Vec<Result<u64, VerifyError>> =
        programs.par_iter().zip(images).map(|(p, i)| roundtrip::prove(p, i)).collect();
    Ok(first_error(checked)?.iter().sum())
}

/// Collects in order, so the error returned is the first in input order
/// (a parallel collect into `Result` would return whichever failed first in
/// time).
fn first_error<T, E>(results: Vec<Result<T, E>>) -> Result<Vec<T>, E> {
    results.into_iter().collect()
}
