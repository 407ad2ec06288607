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

use crate::encode::RankImages;
use crate::manifest::Manifest;
use crate::sign::{Field, Signature, digest_of};
use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One rank's signature fields, with a name to show (a file name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    /// The name the report uses for this input.
    pub name: String,
    /// The signature's fields, in preimage order.
    pub fields: Vec<Field>,
    /// A digest of every image of every rank, when the caller knows them
    /// (it compiled a spec); `None` for a manifest, which lists its files
    /// but not their bytes. Two groups whose every member has the same
    /// digest here differ only in what the images do not carry
    /// ([`Difference::same_images`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<String>,
}

/// An input that cannot be diagnosed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The text is not JSON of the manifest's shape.
    #[error("{name} is not a ccc manifest: {message} (at line {line}, column {column})")]
    NotAManifest {
        /// The input's name.
        name: String,
        /// What the JSON reader found wrong.
        message: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// The manifest's `signature` is not the digest of its `signature_fields`.
    #[error(
        "{name}: its signature {stated} is not the digest of its signature_fields (they hash to {computed}); the file was edited or damaged"
    )]
    DigestMismatch {
        /// The input's name.
        name: String,
        /// The `signature` the manifest states.
        stated: String,
        /// The digest of its `signature_fields`.
        computed: String,
    },
    /// The manifest's `format_version` disagrees with its signature's field.
    #[error(
        "{name}: format_version {stated} disagrees with the signature's format_version field ({field}); the file was edited or damaged"
    )]
    FormatVersionMismatch {
        /// The input's name.
        name: String,
        /// The manifest's top-level `format_version`.
        stated: u32,
        /// The `format_version` signature field.
        field: String,
    },
}

/// The parts of a `manifest.json` a diagnosis reads. Other keys are
/// ignored, so that manifests of other ccc versions still load.
#[derive(Deserialize)]
struct SignedManifest {
    format_version: Option<u32>,
    signature: String,
    signature_fields: Vec<Field>,
}

impl Input {
    /// An input from raw fields.
    pub fn new(name: impl Into<String>, fields: Vec<Field>) -> Input {
        Input { name: name.into(), fields, images: None }
    }

    /// An input from a computed signature.
    pub fn from_signature(name: impl Into<String>, signature: &Signature) -> Input {
        Input::new(name, signature.fields.clone())
    }

    /// An input from a manifest, checking that its signature is the digest
    /// of its fields.
    ///
    /// # Errors
    ///
    /// [`InputError::DigestMismatch`] or [`InputError::FormatVersionMismatch`]
    /// for a manifest that was edited or damaged.
    pub fn from_manifest(name: impl Into<String>, manifest: &Manifest) -> Result<Input, InputError> {
        checked(name.into(), Some(manifest.format_version), &manifest.signature, manifest.signature_fields.clone())
    }

    /// An input from the text of a `manifest.json` (of this or another ccc
    /// version: only `signature`, `signature_fields` and `format_version`
    /// are read).
    ///
    /// # Errors
    ///
    /// [`InputError::NotAManifest`] for text that is not such JSON; the
    /// errors of [`Input::from_manifest`].
    pub fn from_manifest_json(name: impl Into<String>, json: &str) -> Result<Input, InputError> {
        let name = name.into();
        match serde_json::from_str::<SignedManifest>(json) {
            Ok(m) => checked(name, m.format_version, &m.signature, m.signature_fields),
            Err(e) => Err(InputError::NotAManifest {
                name,
                message: e.to_string().split(" at line ").next().unwrap_or_default().to_owned(),
                line: e.line(),
                column: e.column(),
            }),
        }
    }

    /// The digest of the fields (what the runtime compares).
    pub fn digest(&self) -> String {
        digest_of(&self.fields)
    }
}

fn checked(name: String, format_version: Option<u32>, stated: &str, fields: Vec<Field>) -> Result<Input, InputError> {
    let computed = digest_of(&fields);
    if computed != stated {
        return Err(InputError::DigestMismatch { name, stated: stated.to_owned(), computed });
    }
    if let Some(stated) = format_version
        && let Some(field) = fields.iter().find(|f| f.name == "format_version")
        && field.value != stated.to_string()
    {
        return Err(InputError::FormatVersionMismatch { name, stated, field: field.value.clone() });
    }
    Ok(Input { name, fields, images: None })
}

/// The likely cause of a difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// `count`, `dtype`.
    TensorShapes,
    /// `arch`, `topology`.
    Machine,
    /// `channels`, `algorithm`.
    Selection,
    /// `format_version`.
    Versions,
    /// `groups`.
    Groups,
    /// `op`, `reduce`, `root`, `peers`, `counts`; a missing or extra collective.
    ProgramDiverged,
    /// `schedule` alone, with the same format version.
    Builds,
    /// `barrier`, `send_credits`.
    Runtime,
    /// `schedule`, when input fields of the same collective differ too.
    FollowsFromInputs,
    /// `algorithm`, when both sides said `Auto` and it chose differently.
    AutoChoice,
    /// A field this ccc does not know.
    UnknownField,
}

/// The cause table: each cause, the fields that point to it, and what to
/// tell the user. The one place the wording lives.
const CAUSES: [(Cause, &[&str], &str); 11] = [
    (Cause::TensorShapes, &["count", "dtype"], "the ranks traced different tensor shapes"),
    (
        Cause::Machine,
        &["arch", "topology"],
        "different instance types or launcher settings (architecture, ranks per node, node or pod count)",
    ),
    (
        Cause::Selection,
        &["channels", "algorithm"],
        "different selection inputs: the algorithm or channel choice was made from different settings or tuning",
    ),
    (Cause::Versions, &["format_version"], "different ccc versions"),
    (Cause::Groups, &["groups"], "the replica groups were built differently"),
    (
        Cause::ProgramDiverged,
        &["op", "reduce", "root", "peers", "counts"],
        "a different collective was traced (the program diverged)",
    ),
    (Cause::Builds, &[], "different ccc builds: the same format version and inputs, but a different lowering"),
    (Cause::Runtime, &["barrier", "send_credits"], "different runtime or launcher settings"),
    (Cause::FollowsFromInputs, &[], "follows from the differing input fields of the same collective"),
    (
        Cause::AutoChoice,
        &[],
        "Auto chose differently: the cost model was given different inputs (the fields named, or `model:` overrides)",
    ),
    (Cause::UnknownField, &[], "a field this ccc does not know: the inputs were written by another ccc version"),
];

impl Cause {
    /// What to tell the user.
    pub fn text(self) -> &'static str {
        CAUSES.iter().find(|(c, _, _)| *c == self).map_or("", |(_, _, text)| text)
    }

    /// The cause a field points to on its own (`schedule` depends on the
    /// other fields and is decided by the comparison).
    pub fn of_field(field: &str) -> Cause {
        CAUSES.iter().find(|(_, fields, _)| fields.contains(&field)).map_or(Cause::UnknownField, |(c, _, _)| *c)
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

/// The diagnosis of a set of inputs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Every input has the same signature.
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
    /// The first collective that differs, if any does.
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
}

/// One collective that differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectiveDiff {
    /// Changed, missing or extra.
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
    /// wording is not enough (what `Auto` chose on each side, and which
    /// inputs to the choice differ).
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
    // Groups in order of first appearance, then stably by size.
    let mut by_digest: BTreeMap<String, usize> = BTreeMap::new();
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let digest = input.digest();
        match by_digest.get(&digest) {
            Some(&g) => {
                if let Some((_, members)) = groups.get_mut(g) {
                    members.push(i);
                }
            }
            None => {
                by_digest.insert(digest.clone(), groups.len());
                groups.push((digest, vec![i]));
            }
        }
    }
    groups.sort_by_key(|(_, members)| std::cmp::Reverse(members.len()));

    let parsed: Vec<Parsed<'_>> = inputs.iter().map(|i| Parsed::of(&i.fields)).collect();
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
    Report {
        all_match: groups.len() <= 1,
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

/// The digest [`Input::images`] holds: MD5 (hex) over every rank's images
/// in rank order, each TOP_SP's `ctrl_spad`, `slot_spad` and `neff_configs`
/// in order, each image preceded by its length (little-endian `u64`) so
/// that no two lists of images hash alike by concatenation.
pub fn images_digest(images: &[RankImages]) -> String {
    let mut md5 = Md5::new();
    for rank in images {
        md5.update(rank.rank.0.to_le_bytes());
        for tp in &rank.topsps {
            for image in [&tp.ctrl_spad[..], &tp.slot_spad[..], &tp.neff_configs[..]] {
                md5.update((image.len() as u64).to_le_bytes());
                md5.update(image);
            }
        }
    }
    hex::encode(md5.finalize())
}

/// Do all members of both groups carry one known image digest?
fn same_images(inputs: &[Input], a: &[usize], b: &[usize]) -> bool {
    let mut digests = a.iter().chain(b).map(|&i| inputs.get(i).and_then(|x| x.images.as_deref()));
    match digests.next() {
        Some(Some(first)) => digests.all(|d| d == Some(first)),
        _ => false,
    }
}

fn idx(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A signature's fields, split into program-wide fields and collectives.
struct Parsed<'a> {
    /// `(name, value)` of every field outside `collectives[i]`.
    program: Vec<(&'a str, &'a str)>,
    /// Per collective, in index order: `(field, value)`.
    collectives: Vec<Vec<(&'a str, &'a str)>>,
}

impl<'a> Parsed<'a> {
    fn of(fields: &'a [Field]) -> Parsed<'a> {
        let mut program = Vec::new();
        let mut collectives: BTreeMap<u64, Vec<(&str, &str)>> = BTreeMap::new();
        for f in fields {
            match collective_field(&f.name) {
                Some((i, key)) => collectives.entry(i).or_default().push((key, &f.value)),
                None => program.push((f.name.as_str(), f.value.as_str())),
            }
        }
        Parsed { program, collectives: collectives.into_values().collect() }
    }
}

/// `collectives[4].count` → `(4, "count")`.
fn collective_field(name: &str) -> Option<(u64, &str)> {
    let rest = name.strip_prefix("collectives[")?;
    let (index, key) = rest.split_once("].")?;
    Some((index.parse().ok()?, key))
}

fn value<'a>(fields: &[(&'a str, &'a str)], key: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// `AllGather Bf16 x 1024`.
fn summary(c: &[(&str, &str)]) -> String {
    let get = |key| value(c, key).unwrap_or("?");
    format!("{} {} x {}", get("op"), get("dtype"), get("count"))
}

/// The fields whose values differ between `a` and `b`, in `a`'s order and
/// then `b`'s extras: `(key, a's value, b's value)`.
fn field_diffs<'a>(
    a: &[(&'a str, &'a str)],
    b: &[(&'a str, &'a str)],
) -> Vec<(&'a str, Option<&'a str>, Option<&'a str>)> {
    let mut out = Vec::new();
    for &(key, va) in a {
        let vb = value(b, key);
        if vb != Some(va) {
            out.push((key, Some(va), vb));
        }
    }
    for &(key, vb) in b {
        if value(a, key).is_none() {
            out.push((key, None, Some(vb)));
        }
    }
    out
}

/// When both sides' `algorithm` was chosen by `Auto` (signed
/// `Auto(<choice>)`) and the choices differ: the sentence that says so,
/// with the other differing fields of the collective, the inputs to the
/// choice; when none differs, the inputs that differ are the `model:`
/// overrides, which are not signed.
fn auto_note(diffs: &[(&str, Option<&str>, Option<&str>)]) -> Option<String> {
    let chosen = |v: Option<&str>| v?.strip_prefix("Auto(")?.strip_suffix(')').map(str::to_owned);
    let &(_, va, vb) = diffs.iter().find(|(k, _, _)| *k == "algorithm")?;
    let (here, there) = (chosen(va)?, chosen(vb)?);
    let inputs: Vec<&str> =
        diffs.iter().map(|(k, _, _)| *k).filter(|k| *k != "algorithm" && *k != "schedule").collect();
    let inputs = if inputs.is_empty() {
        "model (the `model:` overrides of the cost model, which the signature does not hold)".to_owned()
    } else {
        inputs.join(", ")
    };
    Some(format!("Auto chose {here} here and {there} there: the inputs to the choice differ: {inputs}"))
}

/// Compares group `group`'s program `b` with the majority's `a`.
fn compare(group: u32, a: &Parsed<'_>, b: &Parsed<'_>) -> Difference {
    let fields: Vec<FieldDiff> = field_diffs(&a.program, &b.program)
        .into_iter()
        .filter(|(key, _, _)| *key != "collective_n")
        .map(|(key, va, vb)| FieldDiff {
            field: key.to_owned(),
            majority: va.map(str::to_owned),
            other: vb.map(str::to_owned),
            cause: Cause::of_field(key),
            note: None,
        })
        .collect();
    let versions_differ = fields.iter().any(|f| f.field == "format_version");

    let mut collectives = Vec::new();
    for step in align(&a.collectives, &b.collectives) {
        let get = |v: &[Vec<(&str, &str)>], i: u32| v.get(i as usize).map(|c| summary(c));
        let diff = match step {
            Step::Match(..) => continue,
            Step::Changed(i, j) => {
                let (ca, cb) = (a.collectives.get(i as usize), b.collectives.get(j as usize));
                let diffs = field_diffs(ca.map_or(&[][..], Vec::as_slice), cb.map_or(&[][..], Vec::as_slice));
                let inputs_differ = diffs.iter().any(|(k, _, _)| *k != "schedule");
                let auto = auto_note(&diffs);
                let fields = diffs
                    .into_iter()
                    .map(|(key, va, vb)| FieldDiff {
                        field: key.to_owned(),
                        majority: va.map(str::to_owned),
                        other: vb.map(str::to_owned),
                        cause: match key {
                            "schedule" if inputs_differ => Cause::FollowsFromInputs,
                            "schedule" if versions_differ => Cause::Versions,
                            "schedule" => Cause::Builds,
                            "algorithm" if auto.is_some() => Cause::AutoChoice,
                            _ => Cause::of_field(key),
                        },
                        note: if key == "algorithm" { auto.clone() } else { None },
                    })
                    .collect();
                CollectiveDiff {
                    kind: DiffKind::Changed,
                    majority_index: i,
                    other_index: j,
                    majority: get(&a.collectives, i),
                    other: get(&b.collectives, j),
                    fields,
                    cause: None,
                }
            }
            Step::Missing(i, j) => CollectiveDiff {
                kind: DiffKind::Missing,
                majority_index: i,
                other_index: j,
                majority: get(&a.collectives, i),
                other: None,
                fields: Vec::new(),
                cause: Some(Cause::ProgramDiverged),
            },
            Step::Extra(i, j) => CollectiveDiff {
                kind: DiffKind::Extra,
                majority_index: i,
                other_index: j,
                majority: None,
                other: get(&b.collectives, j),
                fields: Vec::new(),
                cause: Some(Cause::ProgramDiverged),
            },
        };
        collectives.push(diff);
    }

    let first = collectives.first().map(|d| Position {
        majority_index: d.majority_index,
        majority_n: idx(a.collectives.len()),
        other_index: d.other_index,
        other_n: idx(b.collectives.len()),
    });
    let mut causes: Vec<CauseNote> = Vec::new();
    let all = fields
        .iter()
        .map(|f| f.cause)
        .chain(collectives.iter().flat_map(|c| c.cause.into_iter().chain(c.fields.iter().map(|f| f.cause))));
    for cause in all {
        if !causes.iter().any(|n| n.cause == cause) {
            causes.push(CauseNote { cause, text: cause.text().to_owned() });
        }
    }
    Difference { group, first, fields, collectives, causes, same_images: false }
}

/// One step of an alignment of two programs: indices into `a` and `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// `a[i]` equals `b[j]`.
    Match(u32, u32),
    /// `a[i]` and `b[j]` are the same collective with different fields.
    Changed(u32, u32),
    /// `a[i]` has no counterpart; `b`'s next collective is `j`.
    Missing(u32, u32),
    /// `b[j]` has no counterpart; `a`'s next collective is `i`.
    Extra(u32, u32),
}

/// Alignments over more cells than this pair the middles by position.
const ALIGN_CELLS_MAX: usize = 4_000_000;

/// Cost of a missing or an extra collective.
const COST_GAP: u32 = 2;
/// Cost of pairing two different collectives of the same op: less than a
/// missing plus an extra one (one changed collective reads as changed),
/// more than one gap (two shifted runs read as one missing, one extra).
const COST_CHANGED: u32 = 3;
/// Cost of pairing collectives of different ops: a tie with a gap pair,
/// resolved towards pairing (the same position, a different op).
const COST_CHANGED_OP: u32 = 4;

type Coll<'a> = Vec<(&'a str, &'a str)>;

/// Aligns two programs: the longest common prefix and suffix match; the
/// middles are aligned by minimum cost (ties: pair, then missing, then extra).
fn align(a: &[Coll<'_>], b: &[Coll<'_>]) -> Vec<Step> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a.iter().rev().zip(b.iter().rev()).take(max_suffix).take_while(|(x, y)| x == y).count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);

    let mut steps: Vec<Step> = (0..prefix).map(|k| Step::Match(idx(k), idx(k))).collect();
    let at = |i: usize, j: usize| (idx(prefix + i), idx(prefix + j));
    let cost = |x: &Coll<'_>, y: &Coll<'_>| {
        if x == y {
            0
        } else if value(x, "op") == value(y, "op") {
            COST_CHANGED
        } else {
            COST_CHANGED_OP
        }
    };
    let (n, m) = (a_mid.len(), b_mid.len());
    let cells = (n + 1).saturating_mul(m + 1);
    if cells > ALIGN_CELLS_MAX {
        for k in 0..n.max(m) {
            let (i, j) = at(k.min(n), k.min(m));
            steps.push(match (k < n, k < m) {
                (true, true) if a_mid.get(k) == b_mid.get(k) => Step::Match(i, j),
                (true, true) => Step::Changed(i, j),
                (true, false) => Step::Missing(i, j),
                _ => Step::Extra(i, j),
            });
        }
    } else {
        // d[i][j]: the cost of aligning a_mid[i..] with b_mid[j..].
        let w = m + 1;
        let mut d = vec![0u32; cells];
        for i in (0..=n).rev() {
            for j in (0..=m).rev() {
                let here = match (a_mid.get(i), b_mid.get(j)) {
                    (Some(x), Some(y)) => {
                        let pair = cost(x, y) + d[(i + 1) * w + j + 1];
                        let missing = COST_GAP + d[(i + 1) * w + j];
                        let extra = COST_GAP + d[i * w + j + 1];
                        pair.min(missing).min(extra)
                    }
                    (Some(_), None) => COST_GAP + d[(i + 1) * w + j],
                    (None, Some(_)) => COST_GAP + d[i * w + j + 1],
                    (None, None) => 0,
                };
                d[i * w + j] = here;
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            let (ii, jj) = at(i, j);
            let here = d[i * w + j];
            match (a_mid.get(i), b_mid.get(j)) {
                (Some(x), Some(y)) if cost(x, y) + d[(i + 1) * w + j + 1] == here => {
                    steps.push(if x == y { Step::Match(ii, jj) } else { Step::Changed(ii, jj) });
                    i += 1;
                    j += 1;
                }
                (Some(_), _) if j == m || COST_GAP + d[(i + 1) * w + j] == here => {
                    steps.push(Step::Missing(ii, jj));
                    i += 1;
                }
                _ => {
                    steps.push(Step::Extra(ii, jj));
                    j += 1;
                }
            }
        }
    }
    let (a0, b0) = (a.len() - suffix, b.len() - suffix);
    steps.extend((0..suffix).map(|k| Step::Match(idx(a0 + k), idx(b0 + k))));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coll(op: &str, count: u64) -> Vec<(String, String)> {
        vec![
            ("op".into(), op.into()),
            ("dtype".into(), "Bf16".into()),
            ("count".into(), count.to_string()),
            ("channels".into(), "4".into()),
            ("schedule".into(), format!("s{op}{count}")),
        ]
    }

    fn input(name: &str, version: u32, program: &[Vec<(String, String)>]) -> Input {
        let mut fields = vec![
            Field { name: "format_version".into(), value: version.to_string() },
            Field { name: "collective_n".into(), value: program.len().to_string() },
        ];
        for (i, c) in program.iter().enumerate() {
            for (k, v) in c {
                fields.push(Field { name: format!("collectives[{i}].{k}"), value: v.clone() });
            }
        }
        Input::new(name, fields)
    }

    fn program(counts: &[(&str, u64)]) -> Vec<Vec<(String, String)>> {
        counts.iter().map(|&(op, n)| coll(op, n)).collect()
    }

    fn base() -> Vec<Vec<(String, String)>> {
        program(&[("AllReduce", 1), ("AllGather", 2), ("AllReduce", 3), ("ReduceScatter", 4), ("AllReduce", 5)])
    }

    #[test]
    fn identical_images_are_reported_only_when_every_member_has_them() {
        let a = input("a", 1, &program(&[("AllReduce", 8)]));
        let b = input("b", 1, &program(&[("AllReduce", 9)]));
        let with = |i: &Input, d: Option<&str>| Input { images: d.map(str::to_owned), ..i.clone() };
        let report = diagnose(&[with(&a, Some("x")), with(&a, Some("x")), with(&b, Some("x"))]);
        assert!(report.differences[0].same_images);
        let report = diagnose(&[with(&a, Some("x")), with(&b, Some("y"))]);
        assert!(!report.differences[0].same_images);
        // A manifest's images are unknown: nothing is claimed.
        let report = diagnose(&[with(&a, Some("x")), with(&a, None), with(&b, Some("x"))]);
        assert!(!report.differences[0].same_images);
    }

    #[test]
    fn equal_inputs_match() {
        let r = diagnose(&[input("a", 1, &base()), input("b", 1, &base()), input("c", 1, &base())]);
        assert!(r.all_match);
        assert_eq!(r.groups.len(), 1);
        assert_eq!(r.groups[0].members, ["a", "b", "c"]);
        assert!(r.odd_ones_out.is_empty() && r.differences.is_empty() && !r.majority_tied);
    }

    #[test]
    fn an_extra_collective_in_the_middle_is_one_extra() {
        let mut b = base();
        b.insert(2, coll("AllGather", 9));
        let r = diagnose(&[input("a", 1, &base()), input("b", 1, &b)]);
        assert!(!r.all_match && r.majority_tied);
        let d = &r.differences[0];
        assert_eq!(d.collectives.len(), 1, "{d:#?}");
        assert_eq!(d.collectives[0].kind, DiffKind::Extra);
        assert_eq!((d.collectives[0].majority_index, d.collectives[0].other_index), (2, 2));
        assert_eq!(d.collectives[0].other.as_deref(), Some("AllGather Bf16 x 9"));
        assert_eq!(d.first, Some(Position { majority_index: 2, majority_n: 5, other_index: 2, other_n: 6 }));
        assert_eq!(d.causes[0].cause, Cause::ProgramDiverged);
    }

    #[test]
    fn a_missing_collective_is_one_missing() {
        let mut b = base();
        b.remove(3);
        let r = diagnose(&[input("a", 1, &base()), input("b", 1, &b)]);
        let d = &r.differences[0];
        assert_eq!(d.collectives.len(), 1, "{d:#?}");
        assert_eq!((d.collectives[0].kind, d.collectives[0].majority_index), (DiffKind::Missing, 3));
    }

    #[test]
    fn a_changed_count_is_changed_with_its_cause() {
        let mut b = base();
        b[1] = coll("AllGather", 3);
        let r = diagnose(&[input("a", 1, &base()), input("b", 1, &b)]);
        let d = &r.differences[0];
        assert_eq!(d.collectives.len(), 1);
        let c = &d.collectives[0];
        assert_eq!(c.kind, DiffKind::Changed);
        let causes: Vec<(&str, Cause)> = c.fields.iter().map(|f| (f.field.as_str(), f.cause)).collect();
        assert_eq!(causes, [("count", Cause::TensorShapes), ("schedule", Cause::FollowsFromInputs)]);
    }

    #[test]
    fn a_shifted_run_reads_as_one_missing_and_one_extra() {
        let a = program(&[("AllReduce", 1), ("AllReduce", 2), ("AllReduce", 3), ("AllReduce", 4)]);
        let b = program(&[("AllReduce", 1), ("AllReduce", 3), ("AllReduce", 4), ("AllReduce", 5)]);
        let r = diagnose(&[input("a", 1, &a), input("b", 1, &b)]);
        let kinds: Vec<(DiffKind, u32, u32)> =
            r.differences[0].collectives.iter().map(|c| (c.kind, c.majority_index, c.other_index)).collect();
        assert_eq!(kinds, [(DiffKind::Missing, 1, 1), (DiffKind::Extra, 4, 3)]);
    }

    #[test]
    fn the_schedule_alone_is_a_build_or_a_version() {
        let mut b = base();
        b[0][4].1 = "other".into();
        let r = diagnose(&[input("a", 1, &base()), input("b", 1, &b)]);
        assert_eq!(r.differences[0].collectives[0].fields[0].cause, Cause::Builds);
        let r = diagnose(&[input("a", 1, &base()), input("b", 2, &b)]);
        let d = &r.differences[0];
        assert_eq!(d.fields[0].field, "format_version");
        assert_eq!(d.fields[0].cause, Cause::Versions);
        assert_eq!(d.collectives[0].fields[0].cause, Cause::Versions);
        assert_eq!(d.causes.len(), 1);
    }

    #[test]
    fn majority_and_odd_ones_out() {
        let mut odd = base();
        odd[4][3].1 = "2".into();
        let mut inputs: Vec<Input> = (0..7).map(|r| input(&format!("r{r}"), 1, &base())).collect();
        inputs[2] = input("r2", 1, &odd);
        inputs[5] = input("r5", 1, &odd);
        inputs.push(input("r7", 1, &base()[..4]));
        let r = diagnose(&inputs);
        assert_eq!(r.groups.len(), 3);
        assert_eq!(r.groups[0].members, ["r0", "r1", "r3", "r4", "r6"]);
        assert_eq!(r.groups[1].members, ["r2", "r5"]);
        assert_eq!(r.groups[2].members, ["r7"]);
        assert_eq!(r.odd_ones_out, ["r2", "r5", "r7"]);
        assert!(!r.majority_tied);
        assert_eq!(r.differences.iter().map(|d| d.group).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(r.differences[1].collectives[0].kind, DiffKind::Missing);
    }

    #[test]
    fn unknown_and_absent_fields() {
        let mut b = input("b", 1, &base());
        b.fields.push(Field { name: "collectives[0].tp_layout".into(), value: "x".into() });
        let r = diagnose(&[input("a", 1, &base()), b]);
        let f = &r.differences[0].collectives[0].fields[0];
        assert_eq!((f.field.as_str(), f.majority.as_deref(), f.cause), ("tp_layout", None, Cause::UnknownField));
    }

    #[test]
    fn every_signature_field_has_a_cause() {
        for field in crate::sign::COLLECTIVE_FIELDS.iter().chain(&["format_version"]) {
            if *field != "schedule" {
                assert_ne!(Cause::of_field(field), Cause::UnknownField, "{field}");
            }
        }
        for (cause, _, text) in CAUSES {
            assert_eq!(cause.text(), text);
            assert!(!text.is_empty());
        }
    }

    #[test]
    fn manifests_are_checked() {
        let a = input("a", 1, &base());
        let json = serde_json::json!({
            "format_version": 1, "signature": a.digest(), "signature_fields": a.fields, "other": 3
        })
        .to_string();
        assert_eq!(Input::from_manifest_json("a", &json), Ok(a.clone()));
        let bad = json.replace(&a.digest(), "0123");
        assert!(matches!(Input::from_manifest_json("a", &bad), Err(InputError::DigestMismatch { .. })));
        let v2 = json.replace("\"format_version\":1", "\"format_version\":2");
        assert!(matches!(Input::from_manifest_json("a", &v2), Err(InputError::FormatVersionMismatch { .. })));
        let e = Input::from_manifest_json("a", "{\"signature\": 3").unwrap_err();
        assert!(matches!(e, InputError::NotAManifest { line: 1, .. }), "{e:?}");
    }

    #[test]
    fn no_inputs_no_panic() {
        let r = diagnose(&[]);
        assert!(r.all_match && r.groups.is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Any edit script: the alignment's cost never exceeds the edit's,
        /// matches are really equal, and every collective appears once.
        #[test]
        fn alignment_is_consistent(
            a in proptest::collection::vec((0u8..3, 0u64..4), 0..12),
            b in proptest::collection::vec((0u8..3, 0u64..4), 0..12),
        ) {
            let ops = ["AllReduce", "AllGather", "ReduceScatter"];
            let pa: Vec<_> = a.iter().map(|&(o, n)| coll(ops[o as usize], n)).collect();
            let pb: Vec<_> = b.iter().map(|&(o, n)| coll(ops[o as usize], n)).collect();
            let (ia, ib) = (input("a", 1, &pa), input("b", 1, &pb));
            let (qa, qb) = (Parsed::of(&ia.fields), Parsed::of(&ib.fields));
            let steps = align(&qa.collectives, &qb.collectives);
            let (mut i, mut j) = (0u32, 0u32);
            for s in &steps {
                match *s {
                    Step::Match(x, y) => {
                        proptest::prop_assert_eq!((x, y), (i, j));
                        proptest::prop_assert_eq!(&pa[x as usize], &pb[y as usize]);
                        i += 1; j += 1;
                    }
                    Step::Changed(x, y) => { proptest::prop_assert_eq!((x, y), (i, j)); i += 1; j += 1; }
                    Step::Missing(x, y) => { proptest::prop_assert_eq!((x, y), (i, j)); i += 1; }
                    Step::Extra(x, y) => { proptest::prop_assert_eq!((x, y), (i, j)); j += 1; }
                }
            }
            proptest::prop_assert_eq!((i as usize, j as usize), (pa.len(), pb.len()));
            let r = diagnose(&[ia, ib]);
            proptest::prop_assert_eq!(r.all_match, pa == pb);
            if pa != pb {
                proptest::prop_assert!(!r.differences[0].collectives.is_empty());
            }
        }
    }
}
