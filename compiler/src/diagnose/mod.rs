//! diagnose: why the signatures of two or more ranks differ, field by field.
//!
//! The runtime refuses a peer whose collective signature differs and says
//! no more. Every rank's signature is a list of named fields
//! ([`crate::sign`], `docs/signature.md`), so a mismatch can be explained:
//! [`diagnose`] takes one [`Input`] per rank (from a spec, a
//! [`crate::sign::Signature`] or a `manifest.json`), groups the inputs by
//! digest, picks the majority, and compares every other group with it.
//!
//! The comparison aligns the two programs collective by collective (a
//! longest common prefix and suffix, then a small edit-distance alignment of
//! what is left), so that one extra collective in the middle reads as "extra
//! collective at index 4" and not as "every later collective differs". Each
//! differing field is reported with both values and its likely cause, taken
//! from one table ([`Cause`]).
//!
//! The [`Report`] is plain data (serde), so a launcher can gather the
//! manifests of every rank, call [`diagnose`] and log the JSON. Nothing here
//! prints, panics or touches files.

pub(crate) mod align;
mod auto_note;
mod cause;
mod compare;
pub(crate) mod fields;
mod input;
mod lists;
mod renumber;

pub use cause::Cause;

/// The largest `manifest.json` a diagnosis reads: 256 MiB. A manifest
/// grows by about 2.9 KiB a compiled rank on an 8-TOP_SP arch (its files'
/// sizes and MD5s), so this holds ~90,000 ranks.
pub const MANIFEST_MAX_BYTES: u64 = 256 << 20;
pub use input::{Input, InputError, Unsigned, is_manifest};

use crate::encode::RankImages;
use compare::compare;
use fields::Parsed;
use indexmap::IndexMap;
use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};

/// `diagnose --json`'s report, with what HLO modules' collectives show
/// (`hlo`: [`ModulesReport::json`](crate::hlo::compare::ModulesReport::json),
/// only for modules whose collectives differ), after the report's own
/// fields: what the CLI prints and the Python binding returns.
#[derive(Serialize)]
pub struct WithHlo<'a> {
    /// The report.
    #[serde(flatten)]
    pub report: &'a Report,
    /// The modules' differences, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hlo: Option<serde_json::Value>,
}

/// The diagnosis of a set of inputs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Every input has the same signature, and no output folder's files
    /// were changed since ccc wrote them (`edited`).
    pub all_match: bool,
    /// Inputs diagnosed.
    pub input_n: u32,
    /// The groups of identical signatures: the majority first, then by size,
    /// ties by first appearance.
    pub groups: Vec<Group>,
    /// The largest group shares its size with another (the first to appear
    /// is the reference then).
    pub majority_tied: bool,
    /// Inputs outside the majority, in input order.
    pub odd_ones_out: Vec<String>,
    /// For each group after the first, what sets it apart from the majority
    /// (in the order of `groups`).
    pub differences: Vec<Difference>,
    /// The output folders whose files are not the ones their manifests
    /// list (missing, resized or edited since ccc wrote them), in input
    /// order: a rank loading them does not run the schedule its signature
    /// names, whatever the signatures say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edited: Vec<Edited>,
}

/// An output folder whose files were changed since ccc wrote them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edited {
    /// The input's name.
    pub input: String,
    /// What changed, as a sentence.
    pub why: String,
}

/// Inputs with one signature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// The digest.
    pub digest: String,
    /// The members' names, in input order.
    pub members: Vec<String>,
    /// Collectives in the program.
    pub collective_n: u32,
}

/// What sets one group apart from the majority.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    /// The group (an index into [`Report::groups`], at least 1).
    pub group: u32,
    /// The first collective that differs, if any does: in its own right
    /// where that is known (both sides specs: one whose `Auto` choice
    /// alone moved, because another collective differs, is passed over),
    /// so not always the first of [`Difference::collectives`].
    pub first: Option<Position>,
    /// Differing program-wide fields (`format_version`).
    pub fields: Vec<FieldDiff>,
    /// Every collective that differs, is missing or is extra, in program
    /// order.
    pub collectives: Vec<CollectiveDiff>,
    /// The distinct likely causes, in the order they first appear.
    pub causes: Vec<CauseNote>,
    /// Every member of both groups compiled to the same images (every
    /// rank, byte for byte): the differing fields are ones the runtime
    /// puts in descriptors and channel configs it builds, not in these
    /// images (ring order, reduce op, dtype). False when any member's
    /// images are unknown ([`Input::images`]).
    #[serde(default)]
    pub same_images: bool,
}

/// Where two programs stop agreeing: index and count on both sides
/// ("collective 4 of 6 vs 4 of 5").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// Index in the majority's program (from 0).
    pub majority_index: u32,
    /// Collectives in the majority's program.
    pub majority_n: u32,
    /// Index in the group's program (from 0).
    pub other_index: u32,
    /// Collectives in the group's program.
    pub other_n: u32,
}

/// How a collective differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    /// Both programs have it, with different fields.
    Changed,
    /// Only the majority's program has it.
    Missing,
    /// Only the group's program has it.
    Extra,
    /// Both programs have it, equal in every field, at another place
    /// among the others: missing where the majority has it and extra
    /// where the group has it (`majority_index` and `other_index` are its
    /// two places).
    Moved,
}

/// One collective that differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectiveDiff {
    /// Changed, missing, extra or moved.
    pub kind: DiffKind,
    /// Its index in the majority's program; for an extra collective, the
    /// index of the majority's collective that follows it (or the count).
    pub majority_index: u32,
    /// Its index in the group's program; for a missing collective, the
    /// index of the group's collective that follows where it would be.
    pub other_index: u32,
    /// `AllGather Bf16 x 1024` on the majority's side (none when extra).
    pub majority: Option<String>,
    /// The same on the group's side (none when missing).
    pub other: Option<String>,
    /// For a changed collective, the fields that differ.
    pub fields: Vec<FieldDiff>,
    /// For a missing or extra collective, the cause.
    pub cause: Option<Cause>,
}

/// One field that differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldDiff {
    /// The field (`count`; `format_version`).
    pub field: String,
    /// The majority's value (none when it lacks the field).
    pub majority: Option<String>,
    /// The group's value (none when it lacks the field).
    pub other: Option<String>,
    /// The likely cause.
    pub cause: Cause,
    /// A sentence for this difference in particular, when the cause's
    /// wording is not enough: for `algorithm`, what `Auto` chose on each
    /// side and which inputs to the choice differ; for `peers`, the ranks
    /// a renumbering moves to make the majority's pairs the other's.
    /// Where it says "here" it means the majority's side (`majority`),
    /// "there" the other's (`other`); `ccc diagnose` names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A cause and its wording.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CauseNote {
    /// The cause.
    pub cause: Cause,
    /// What it means.
    pub text: String,
}

/// Diagnoses a set of inputs: groups by digest, the majority, and what
/// sets every other group apart from it.
pub fn diagnose(inputs: &[Input]) -> Report {
    // Groups in order of first appearance (an IndexMap keeps it), then
    // stably by size.
    let mut by_digest: IndexMap<String, Vec<usize>> = IndexMap::new();
    for (i, input) in inputs.iter().enumerate() {
        by_digest.entry(input.digest()).or_default().push(i);
    }
    let mut groups: Vec<(String, Vec<usize>)> = by_digest.into_iter().collect();
    groups.sort_by_key(|(_, members)| std::cmp::Reverse(members.len()));

    let parsed: Vec<Parsed<'_>> =
        inputs.iter().map(|i| Parsed { unsigned: i.unsigned.as_deref(), ..Parsed::of(&i.fields) }).collect();
    let name = |i: usize| inputs.get(i).map_or_else(String::new, |x| x.name.clone());
    let first_of = |members: &[usize]| members.first().and_then(|&i| parsed.get(i));

    let majority = groups.first().map(|(_, m)| m.as_slice()).unwrap_or_default();
    let mut odd: Vec<usize> = groups.iter().skip(1).flat_map(|(_, m)| m.iter().copied()).collect();
    odd.sort_unstable();
    let differences = match first_of(majority) {
        Some(reference) => groups
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(g, (_, members))| {
                first_of(members).map(|p| Difference {
                    same_images: same_images(inputs, majority, members),
                    ..compare(idx(g), reference, p)
                })
            })
            .collect(),
        None => Vec::new(),
    };
    let edited: Vec<Edited> =
        inputs.iter().filter_map(|i| Some(Edited { input: i.name.clone(), why: i.edited.clone()? })).collect();
    Report {
        all_match: groups.len() <= 1 && edited.is_empty(),
        edited,
        input_n: idx(inputs.len()),
        majority_tied: groups.get(1).is_some_and(|(_, m)| m.len() == majority.len()),
        odd_ones_out: odd.into_iter().map(name).collect(),
        groups: groups
            .iter()
            .map(|(digest, members)| Group {
                digest: digest.clone(),
                members: members.iter().map(|&i| name(i)).collect(),
                collective_n: first_of(members).map_or(0, |p| idx(p.collectives.len())),
            })
            .collect(),
        differences,
    }
}

/// The digest [`Input::images`] holds: MD5 (hex) over every rank in rank
/// order (its number, little-endian `u32`), each of its TOP_SPs (its
/// number, a byte) and each TOP_SP's `ctrl_spad`, `slot_spad` and
/// `neff_configs` in order, each image as its length (little-endian
/// `u64`) and its own MD5 (16 bytes). An image enters by its MD5 so that a
/// manifest, which lists each file's size and MD5, gives the digest its
/// compile's images give ([`manifest_images_digest`]).
///
/// `None` unless `images` holds every rank of the `rank_n`, in order: two
/// compiles of some ranks alone (`--rank`, `ranks=`) may match there and
/// differ on a rank neither holds, so they vouch for no world's images.
pub fn images_digest(images: &[RankImages], rank_n: u32) -> Option<String> {
    if !every_rank(images.iter().map(|r| r.rank.0), rank_n) {
        return None;
    }
    let mut digest = ImagesDigest::default();
    for rank in images {
        digest.rank(rank.rank.0);
        for tp in &rank.topsps {
            digest.topsp(tp.topsp.0);
            for image in [&tp.ctrl_spad[..], &tp.slot_spad[..], &tp.neff_configs[..]] {
                digest.image(image.len() as u64, Md5::digest(image).into());
            }
        }
    }
    Some(digest.finish())
}

/// [`images_digest`] of the images `manifest` lists, from their sizes and
/// MD5s; `None` unless it lists every rank of its world (the `rank_n` of
/// its signature's `topology`), each file with an MD5 of 32 hex digits (a
/// manifest of an earlier ccc build lists none).
pub fn manifest_images_digest(manifest: &crate::manifest::Manifest) -> Option<String> {
    let ranks = &manifest.ranks;
    if !every_rank(ranks.iter().map(|r| r.rank), world_rank_n(&manifest.signature_fields)?) {
        return None;
    }
    let md5 =
        |hex_digits: &Option<String>| -> Option<[u8; 16]> { hex::decode(hex_digits.as_deref()?).ok()?.try_into().ok() };
    let mut digest = ImagesDigest::default();
    for rank in ranks {
        digest.rank(rank.rank);
        for tp in &rank.topsps {
            digest.topsp(tp.topsp);
            digest.image(tp.ctrl_spad_bytes, md5(&tp.ctrl_spad_md5)?);
            digest.image(tp.slot_spad_bytes, md5(&tp.slot_spad_md5)?);
            digest.image(tp.neff_configs_bytes, md5(&tp.neff_configs_md5)?);
        }
    }
    Some(digest.finish())
}

/// Whether `ranks` are 0, 1, ..., `rank_n - 1`, in order (and at least one).
fn every_rank(ranks: impl ExactSizeIterator<Item = u32>, rank_n: u32) -> bool {
    rank_n > 0 && ranks.len() == rank_n as usize && ranks.zip(0..).all(|(r, i)| r == i)
}

/// The world's rank count, from the first collective's `topology` field
/// (`rank_n=32 local_rank_n=16 pod_n=1`, every collective's the same).
fn world_rank_n(fields: &[crate::sign::Field]) -> Option<u32> {
    let parsed = fields::Parsed::of(fields);
    let topology = fields::value(parsed.collectives.first()?, "topology")?;
    topology.split(' ').find_map(|kv| kv.strip_prefix("rank_n="))?.parse().ok()
}

/// The hash behind [`images_digest`], fed in its order.
#[derive(Default)]
struct ImagesDigest(Md5);

impl ImagesDigest {
    fn rank(&mut self, rank: u32) {
        self.0.update(rank.to_le_bytes());
    }

    fn topsp(&mut self, topsp: u8) {
        self.0.update([topsp]);
    }

    fn image(&mut self, len: u64, md5: [u8; 16]) {
        self.0.update(len.to_le_bytes());
        self.0.update(md5);
    }

    fn finish(self) -> String {
        hex::encode(self.0.finalize())
    }
}

/// Do all members of both groups carry one known image digest?
fn same_images(inputs: &[Input], a: &[usize], b: &[usize]) -> bool {
    let mut digests = a.iter().chain(b).map(|&i| inputs.get(i).and_then(|x| x.images.as_deref()));
    match digests.next() {
        Some(Some(first)) => digests.all(|d| d == Some(first)),
        _ => false,
    }
}

pub(super) fn idx(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests;
