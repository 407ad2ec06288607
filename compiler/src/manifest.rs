//! `manifest.json`: what a compile wrote, and the signature with its
//! preimage in readable form. Deterministic: no times, paths or tool
//! versions, only the format version.

use crate::pipeline::Compiled;
use crate::sign::{Field, algorithm};
use serde::{Deserialize, Serialize};

/// The manifest schema's own version (the file layout, not the wire format).
pub const MANIFEST_SCHEMA: u32 = 1;

/// The whole manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_SCHEMA`].
    pub manifest_schema: u32,
    /// ccc's wire format version ([`ccc_ir::FORMAT_VERSION`]).
    pub format_version: u32,
    /// The collective signature, 32 lower-case hex digits.
    pub signature: String,
    /// The signature's preimage, field by field, in order.
    pub signature_fields: Vec<Field>,
    /// The architecture.
    pub arch: String,
    /// TOP_SPs each rank uses.
    pub topsps_used: u8,
    /// Per collective, what it resolved to.
    pub collectives: Vec<ManifestCollective>,
    /// Per compiled rank, what was written.
    pub ranks: Vec<ManifestRank>,
}

/// One collective's resolution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestCollective {
    /// Position in the program.
    pub index: u32,
    /// The op.
    pub op: String,
    /// The algorithm, with its legs.
    pub algorithm: String,
    /// The resolved per-leg algorithms, in run order.
    pub legs: Vec<ManifestLeg>,
    /// Phases (records per TOP_SP).
    pub phases: u32,
    /// Steps.
    pub steps: u32,
}

/// One leg.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestLeg {
    /// The leg's field name, or `flat`.
    pub leg: String,
    /// The algorithm.
    pub algorithm: String,
}

/// One compiled rank.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestRank {
    /// The rank.
    pub rank: u32,
    /// Its TOP_SPs.
    pub topsps: Vec<ManifestTopSp>,
}

/// One TOP_SP's images.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestTopSp {
    /// The TOP_SP.
    pub topsp: u8,
    /// Records in its chain.
    pub records: u32,
    /// `ctrl_spad.bin` bytes.
    pub ctrl_spad_bytes: u64,
    /// `slot_spad.bin` bytes.
    pub slot_spad_bytes: u64,
    /// `neff_configs.bin` bytes (always 3592).
    pub neff_configs_bytes: u64,
}

impl Manifest {
    /// The manifest of a compile.
    pub fn of(compiled: &Compiled) -> Manifest {
        let schedule = &compiled.schedule;
        Manifest {
            manifest_schema: MANIFEST_SCHEMA,
            format_version: ccc_ir::FORMAT_VERSION,
            signature: compiled.signature.digest.clone(),
            signature_fields: compiled.signature.fields.clone(),
            arch: schedule.arch.name().into(),
            topsps_used: crate::lower::topsps_used(schedule),
            collectives: schedule
                .collectives
                .iter()
                .map(|p| ManifestCollective {
                    index: p.index,
                    op: p.op.name().into(),
                    algorithm: algorithm(p),
                    legs: p
                        .legs
                        .iter()
                        .map(|(leg, alg)| ManifestLeg {
                            leg: leg.map_or("flat", |l| l.field()).into(),
                            algorithm: alg.name().into(),
                        })
                        .collect(),
                    phases: p.phases.len() as u32,
                    steps: p.step_n,
                })
                .collect(),
            ranks: compiled
                .images
                .iter()
                .map(|r| ManifestRank {
                    rank: r.rank.0,
                    topsps: r
                        .topsps
                        .iter()
                        .map(|t| ManifestTopSp {
                            topsp: t.topsp.0,
                            records: t.record_n,
                            ctrl_spad_bytes: t.ctrl_spad.len() as u64,
                            slot_spad_bytes: t.slot_spad.len() as u64,
                            neff_configs_bytes: t.neff_configs.len() as u64,
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// The manifest as pretty JSON, ending with a newline.
    ///
    /// # Errors
    ///
    /// Serialization errors (none in practice: every field is plain data).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self).map(|s| s + "\n")
    }
}
