//! Compiling ranks under the proof of an earlier compile of the same
//! schedule: the certificate (its manifest) is checked figure by figure
//! against what a proof of this schedule reports.
//!
//! Compiling under a certificate ([`Options::certificate`](super::Options::certificate)) instead of
//! proving the whole world again: the certificate must be of this manifest
//! schema and format version, intact (its signature the digest of its
//! fields), proven, of this spec's signature, and its proof section must
//! report what a proof of this schedule reports. The compile then checks
//! everything its own ranks' records can show alone (each chain's
//! structure, and step by step the descriptors each record posts against
//! the step graph) and decodes its images back; only the cross-rank
//! balance and the world's postcondition are taken from the certificate.
//! Its cost is its own ranks'.
//!
//! The manifest is trusted input, as the spec is: a certificate certifies
//! because it was written by a verified compile, not because it proves
//! anything itself.

use super::{CertificateError, CompileError, Proof};
use crate::manifest::{MANIFEST_SCHEMA, Manifest, ManifestProof};
use crate::schedule::Schedule;
use crate::sign::{Signature, digest_of};
use crate::verify::{Defect, Defects, VerifyError, postcondition};
use ccc_ir::FORMAT_VERSION;
use std::time::Duration;

/// What can be checked of a certificate before the schedule is built:
/// its schema, that it is proven, its format version, and that its
/// signature is the digest of its fields.
pub(super) fn check_intact(certificate: &Manifest) -> Result<(), CertificateError> {
    if certificate.manifest_schema != MANIFEST_SCHEMA {
        return Err(CertificateError::Schema { certificate: certificate.manifest_schema, ours: MANIFEST_SCHEMA });
    }
    if certificate.proof.is_none() {
        return Err(CertificateError::NotProven);
    }
    if certificate.format_version != FORMAT_VERSION {
        return Err(CertificateError::FormatVersion { certificate: certificate.format_version, ours: FORMAT_VERSION });
    }
    let digest = digest_of(&certificate.signature_fields);
    if digest != certificate.signature {
        return Err(CertificateError::Corrupt { signature: certificate.signature.clone(), digest });
    }
    Ok(())
}

/// That the certificate vouches for this schedule: it proved the schedule
/// signed as this one is, and its proof section reports what a proof of
/// this schedule reports.
pub(super) fn check_vouches(
    certificate: &Manifest,
    schedule: &Schedule,
    signature: &Signature,
) -> Result<(), CertificateError> {
    if signature.digest != certificate.signature {
        let ours = signature.digest.clone();
        return Err(CertificateError::OtherSchedule { certificate: certificate.signature.clone(), ours });
    }
    let proof = certificate.proof.as_ref().ok_or(CertificateError::NotProven)?;
    check_proof_section(schedule, proof)
}

/// The proof of a certified compile: the certificate's figures, and what
/// this compile's own ranks' checks found (`defects` of their chains, of
/// their records against the step graph and of their images decoded back,
/// and the `images_checked`; see `stream.rs`), with the time each part of
/// those checks took.
pub(super) fn certified(
    certificate: &Manifest,
    defects: impl IntoIterator<Item = Defect>,
    images_checked: u64,
    times: [Duration; 4],
) -> Result<Proof, CompileError> {
    let proven = certificate.proof.as_ref().ok_or(CertificateError::NotProven)?;
    if let Some(defects) = Defects::collect(defects) {
        return Err(VerifyError::Defects(Box::new(defects)).into());
    }
    let [lowering_time, postcondition_time, protocol_time, roundtrip_time] = times;
    Ok(Proof {
        postcondition: proven.postconditions.clone(),
        protocol: proven.protocol.clone(),
        images_checked,
        lowering_time,
        postcondition_time,
        protocol_time,
        roundtrip_time,
        symmetric_groups: 0,
        symmetric_by_phase: 0,
        certified: true,
    })
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
            let used = u64::from(crate::placement::topsps_for(params, plan.channels));
            records += rank_n * used * plan.phases.len() as u64;
            steps += rank_n * used * u64::from(plan.step_n);
        }
    }
    let chains = rank_n * u64::from(crate::placement::topsps_used(schedule));
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
