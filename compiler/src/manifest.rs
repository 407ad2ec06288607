//! `manifest.json`: what a compile wrote, and the signature with its
//! preimage in readable form. Deterministic: no times, paths or tool
//! versions, only the format version.

use crate::compiled::Compiled;
use crate::sign::{Field, algorithm, md5_hex};
use crate::verify::postcondition::CollectivePostcondition;
use crate::verify::protocol::ProtocolProof;
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::Leg;
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
    /// The architecture (`Cayman`, ...).
    pub arch: Arch,
    /// TOP_SPs each rank uses.
    pub topsps_used: u8,
    /// Per collective, what it resolved to.
    pub collectives: Vec<ManifestCollective>,
    /// Per compiled rank, what was written.
    pub ranks: Vec<ManifestRank>,
    /// What was proven, when the compile proved the schedule (or was
    /// certified by an earlier compile that did); absent with `--no-verify`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<ManifestProof>,
}

/// What a compile proved of its schedule (no times: the manifest is
/// deterministic).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestProof {
    /// `false` when this compile ran the proof; `true` when it was certified
    /// by the manifest of an earlier compile that proved the same schedule.
    pub certified: bool,
    /// Per collective, the postcondition proven.
    pub postconditions: Vec<CollectivePostcondition>,
    /// The protocol proof over every rank's records.
    pub protocol: ProtocolProof,
}

/// One collective's resolution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestCollective {
    /// Position in the program.
    pub index: u32,
    /// The op as written (`AllReduce`, ...).
    pub op: OpType,
    /// The display form of the algorithm with its legs, as the signature's
    /// `algorithm` field writes it (`Ring`, or
    /// `Hier(intra_reduce_scatter=Ring, ...)`): text for people; the typed
    /// resolution is [`ManifestCollective::legs`].
    pub algorithm: String,
    /// The resolved per-leg algorithms, in run order.
    pub legs: Vec<ManifestLeg>,
    /// Phases (records per TOP_SP).
    pub phases: u32,
    /// Steps.
    pub steps: u32,
    /// The cost model's prediction and bound (`docs/cost-model.md`);
    /// zero in a manifest written before the model existed.
    #[serde(default)]
    pub cost: ManifestCost,
}

/// A collective's predicted time, its lower bound, and what `Auto` chose.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestCost {
    /// Predicted time, whole ns.
    pub predicted_ns: u64,
    /// Lower bound, whole ns.
    pub bound_ns: u64,
    /// Present when the spec said `algorithm: Auto` or left a Hier leg to `Auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<ManifestAuto>,
}

/// What `Auto` chose and every legal choice it compared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestAuto {
    /// The choice, as the `algorithm` field writes it.
    pub chosen: String,
    /// Every legal choice, in the tie-break order.
    pub alternatives: Vec<ManifestAlternative>,
    /// The legs a `Hier((...))` left to the model (`leg: Auto`), in run
    /// order; absent when the whole algorithm was `Auto`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auto_legs: Vec<Leg>,
    /// Present when fitting the program into the CTRL SPAD moved the
    /// choice off the cheapest alternative (`docs/cost-model.md` §4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitted: Option<ManifestFitted>,
}

/// How fitting the program into the CTRL SPAD moved an `Auto` choice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFitted {
    /// The cheapest alternative, as the `algorithm` field writes it.
    pub cheapest: String,
    /// The CTRL SPAD slots per TOP_SP the choice takes.
    pub slots: u32,
    /// The slots the cheapest alternative takes.
    pub cheapest_slots: u32,
    /// The slots a TOP_SP's CTRL SPAD holds.
    pub capacity: u32,
    /// The mesh events per TOP_SP the choice takes.
    pub events: u32,
    /// The mesh events the cheapest alternative takes.
    pub cheapest_events: u32,
    /// The mesh events a TOP_SP holds.
    pub max_events: u32,
}

/// One legal choice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestAlternative {
    /// The choice.
    pub algorithm: String,
    /// Predicted time, whole ns; absent when `Auto` did not predict it
    /// (`not_predicted` says why; `ccc explain` predicts it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_ns: Option<u64>,
    /// Why it was not predicted, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_predicted: Option<String>,
    /// A floor under its prediction, whole ns (0 in a manifest written
    /// before floors existed).
    #[serde(default)]
    pub floor_ns: u64,
    /// The collective's lower bound, whole ns.
    pub bound_ns: u64,
}

/// What a manifest says of a choice `Auto` did not predict.
pub const NOT_PREDICTED: &str = "floor above the runner-up's prediction: it could neither win nor come second";

impl ManifestCost {
    /// The cost entry of one planned collective.
    pub fn of(schedule: &crate::schedule::Schedule, plan: &crate::schedule::CollectivePlan) -> ManifestCost {
        use crate::cost::auto::{display, whole_ns};
        let e = crate::cost::evaluate(schedule, plan, &plan.model);
        ManifestCost {
            predicted_ns: whole_ns(e.prediction.total_ns),
            bound_ns: whole_ns(e.bound.total_ns()),
            auto: plan.auto.as_ref().map(|a| ManifestAuto {
                chosen: algorithm(plan),
                alternatives: a
                    .alternatives
                    .iter()
                    .map(|alt| ManifestAlternative {
                        algorithm: display(&alt.algorithm),
                        predicted_ns: alt.predicted_ns,
                        not_predicted: alt.predicted_ns.is_none().then(|| NOT_PREDICTED.to_owned()),
                        floor_ns: alt.floor_ns,
                        bound_ns: alt.bound_ns,
                    })
                    .collect(),
                auto_legs: a.auto_legs.clone(),
                fitted: a.fitted.map(|f| ManifestFitted {
                    cheapest: a.alternatives.get(f.cheapest).map(|c| display(&c.algorithm)).unwrap_or_default(),
                    slots: f.slots,
                    cheapest_slots: f.cheapest_slots,
                    capacity: f.capacity,
                    events: f.events,
                    cheapest_events: f.cheapest_events,
                    max_events: f.max_events,
                }),
            }),
        }
    }
}

/// One leg.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestLeg {
    /// The leg (`intra_reduce_scatter`, ...), or `flat`.
    pub leg: ManifestLegName,
    /// The algorithm that runs it.
    pub algorithm: AlgType,
}

/// A leg's name in the manifest: the hierarchical leg's field name, or
/// `flat` for the one leg of a flat algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ManifestLegName {
    /// The one leg of a flat algorithm.
    Flat,
    /// [`Leg::IntraReduceScatter`].
    IntraReduceScatter,
    /// [`Leg::InterAllReduce`].
    InterAllReduce,
    /// [`Leg::InterReduceScatter`].
    InterReduceScatter,
    /// [`Leg::InterAllGather`].
    InterAllGather,
    /// [`Leg::IntraAllGather`].
    IntraAllGather,
}

impl ManifestLegName {
    /// The name of a resolved leg (`None`: a flat algorithm).
    pub const fn of(leg: Option<Leg>) -> ManifestLegName {
        match leg {
            None => ManifestLegName::Flat,
            Some(Leg::IntraReduceScatter) => ManifestLegName::IntraReduceScatter,
            Some(Leg::InterAllReduce) => ManifestLegName::InterAllReduce,
            Some(Leg::InterReduceScatter) => ManifestLegName::InterReduceScatter,
            Some(Leg::InterAllGather) => ManifestLegName::InterAllGather,
            Some(Leg::IntraAllGather) => ManifestLegName::IntraAllGather,
        }
    }

    /// The leg it names (`None` for `flat`).
    pub const fn leg(self) -> Option<Leg> {
        match self {
            ManifestLegName::Flat => None,
            ManifestLegName::IntraReduceScatter => Some(Leg::IntraReduceScatter),
            ManifestLegName::InterAllReduce => Some(Leg::InterAllReduce),
            ManifestLegName::InterReduceScatter => Some(Leg::InterReduceScatter),
            ManifestLegName::InterAllGather => Some(Leg::InterAllGather),
            ManifestLegName::IntraAllGather => Some(Leg::IntraAllGather),
        }
    }

    /// The spelling in `manifest.json`: [`Leg::field`], or `flat`.
    pub const fn name(self) -> &'static str {
        match self.leg() {
            None => "flat",
            Some(leg) => leg.field(),
        }
    }
}

impl From<Option<Leg>> for ManifestLegName {
    fn from(leg: Option<Leg>) -> Self {
        ManifestLegName::of(leg)
    }
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
    /// MD5 of `ctrl_spad.bin`, lower-case hex: how a later compile into the
    /// same folder tells the file ccc wrote from one edited since (absent
    /// from manifests of earlier ccc builds, which are checked by size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctrl_spad_md5: Option<String>,
    /// MD5 of `slot_spad.bin`, as `ctrl_spad_md5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_spad_md5: Option<String>,
    /// MD5 of `neff_configs.bin`, as `ctrl_spad_md5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neff_configs_md5: Option<String>,
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
            arch: schedule.arch,
            topsps_used: crate::placement::topsps_used(schedule),
            collectives: schedule
                .collectives
                .iter()
                .map(|p| ManifestCollective {
                    index: p.index,
                    op: p.op,
                    algorithm: algorithm(p),
                    legs: p
                        .legs
                        .iter()
                        .map(|&(leg, algorithm)| ManifestLeg { leg: ManifestLegName::of(leg), algorithm })
                        .collect(),
                    phases: p.phases.len() as u32,
                    steps: p.step_n,
                    cost: ManifestCost::of(schedule, p),
                })
                .collect(),
            proof: compiled.proof.as_ref().map(|p| ManifestProof {
                certified: p.certified,
                postconditions: p.postcondition.clone(),
                protocol: p.protocol.clone(),
            }),
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
                            ctrl_spad_md5: Some(md5_hex(&t.ctrl_spad)),
                            slot_spad_md5: Some(md5_hex(&t.slot_spad)),
                            neff_configs_md5: Some(md5_hex(&t.neff_configs[..])),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed fields serialize as the names ccc uses everywhere else,
    /// and read back.
    #[test]
    fn kinds_serialize_as_their_names() {
        for &arch in &Arch::ALL {
            assert_eq!(text(&arch), format!("\"{}\"", arch.name()));
        }
        for &op in OpType::ALL {
            assert_eq!(text(&op), format!("\"{}\"", op.name()));
        }
        for &alg in AlgType::ALL {
            assert_eq!(text(&alg), format!("\"{}\"", alg.name()));
        }
        let legs = [
            None,
            Some(Leg::IntraReduceScatter),
            Some(Leg::InterAllReduce),
            Some(Leg::InterReduceScatter),
            Some(Leg::InterAllGather),
            Some(Leg::IntraAllGather),
        ];
        for leg in legs {
            let name = ManifestLegName::of(leg);
            assert_eq!(name.leg(), leg);
            assert_eq!(text(&name), format!("\"{}\"", name.name()));
            assert_eq!(serde_json::from_str::<ManifestLegName>(&text(&name)).ok(), Some(name));
        }
        assert_eq!(ManifestLegName::Flat.name(), "flat");
    }

    /// A value as JSON text.
    fn text<T: Serialize>(value: &T) -> String {
        serde_json::to_string(value).unwrap_or_default()
    }
}
