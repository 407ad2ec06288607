//! The inputs of a diagnosis: one rank's signature fields, from a signature or a checked manifest.

use crate::manifest::Manifest;
use crate::parse::quote;
use crate::sign::{COLLECTIVE_FIELDS, Field, PROGRAM_FIELDS, Signature, digest_of};
use ccc_ir::FORMAT_VERSION;
use serde::{Deserialize, Serialize};

/// One rank's signature fields, with a name to show (a file name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    /// The name the report uses for this input.
    pub name: String,
    /// The signature's fields, in preimage order.
    pub fields: Vec<Field>,
    /// A digest of every image of every rank ([`images_digest`](super::images_digest)),
    /// when the caller knows the images: it compiled a spec, or checked an
    /// output folder's files against its manifest's MD5s
    /// ([`manifest_images_digest`](super::manifest_images_digest)); `None`
    /// for a manifest alone, whose listing vouches for no file. Two groups
    /// whose every member has the same digest here differ only in what the
    /// images do not carry
    /// ([`Difference::same_images`](super::Difference::same_images)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<String>,
    /// For an output folder whose files are not the ones its manifest
    /// lists (a file missing, resized or edited since ccc wrote it): why,
    /// as a sentence. Its ranks would not load what its signature says, so
    /// the report does not call it a match
    /// ([`Report::edited`](super::Report::edited)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited: Option<String>,
    /// What each collective's `Auto` choice reads that the signature does
    /// not hold ([`Unsigned`]), in program order, when the caller read the
    /// spec (a spec, or a module imported with its target); `None` for a
    /// manifest, which does not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsigned: Option<Vec<Unsigned>>,
}

/// What the signature does not hold of a collective, for the report to
/// say: what its `Auto` choice reads, the `model:` overrides and
/// `choices: Wide` (`docs/signature.md`; two sides whose `Auto` chose
/// differently may differ here alone), and its groups and pairs where the
/// signature holds only their count and MD5 (more than
/// [`LITERAL_GROUPS_MAX`](crate::sign::LITERAL_GROUPS_MAX) entries), so
/// that the report can say where two such lists differ.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unsigned {
    /// The `model:` overrides written, `(field, value)` in the block's
    /// field order (empty: none).
    pub model: Vec<(String, u64)>,
    /// Whether its `Hier((...))` says `choices: Wide`.
    pub wide: bool,
    /// Its explicit groups, sorted as the signature sorts them, where the
    /// signature holds their digest (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Vec<u32>>,
    /// Its pairs, sorted, where the signature holds their digest (empty
    /// otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<(u32, u32)>,
}

impl Unsigned {
    /// Of every collective of `program`, in order, as validation made it
    /// `valid` (`None` when the two do not hold as many collectives).
    pub fn of(program: &ccc_ir::spec::Program, valid: &crate::valid::ValidProgram) -> Option<Vec<Unsigned>> {
        use crate::sign::LITERAL_GROUPS_MAX;
        use ccc_ir::spec::{Algorithm, LegChoices};
        if program.collectives.len() != valid.collectives().len() {
            return None;
        }
        let one = |(c, v): (&ccc_ir::spec::Collective, &crate::valid::ValidCollective)| {
            let mut groups: Vec<Vec<u32>> = v.groups().as_explicit().map(<[_]>::to_vec).unwrap_or_default();
            groups.sort_unstable();
            if groups.iter().map(Vec::len).sum::<usize>() <= LITERAL_GROUPS_MAX {
                groups.clear();
            }
            let mut pairs = v.peers().to_vec();
            pairs.sort_unstable();
            if pairs.len() <= LITERAL_GROUPS_MAX {
                pairs.clear();
            }
            Unsigned {
                model: c.model.iter().flat_map(|m| m.fields()).filter_map(|(f, v)| Some((f.to_owned(), v?))).collect(),
                wide: matches!(&c.algorithm, Algorithm::Hier(legs) if legs.choices == LegChoices::Wide),
                groups,
                pairs,
            }
        };
        Some(program.collectives.iter().zip(valid.collectives()).map(one).collect())
    }

    /// What differs between `a` (here) and `b` (there), in words: each
    /// override set differently (`model.launch_ns (20000 here, not set
    /// there)`), then `choices`.
    pub(super) fn differences(a: &Unsigned, b: &Unsigned) -> Vec<String> {
        let value = |u: &Unsigned, f: &str| u.model.iter().find(|(g, _)| g == f).map(|&(_, v)| v);
        let said = |v: Option<u64>| v.map_or_else(|| "not set".to_owned(), |v| v.to_string());
        let mut fields: Vec<&str> = a.model.iter().map(|(f, _)| f.as_str()).collect();
        fields.extend(b.model.iter().map(|(f, _)| f.as_str()).filter(|f| value(a, f).is_none()));
        let mut out: Vec<String> = fields
            .into_iter()
            .filter(|f| value(a, f) != value(b, f))
            .map(|f| format!("model.{f} ({} here, {} there)", said(value(a, f)), said(value(b, f))))
            .collect();
        if a.wide != b.wide {
            let said = |wide: bool| if wide { "Wide" } else { "the seed's sets" };
            out.push(format!("choices ({} here, {} there)", said(a.wide), said(b.wide)));
        }
        out
    }
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
    /// The manifest's `signature_fields` are not fields ccc writes: a name or
    /// value holds a line break (a preimage line cannot), or, at this ccc's
    /// format version, a field is missing, extra, misnamed or out of order.
    #[error("{name}: signature_fields[{index}] {problem}; the file was edited or damaged")]
    EditedFields {
        /// The input's name.
        name: String,
        /// The position in `signature_fields` of the first field that is wrong.
        index: usize,
        /// What is wrong there, and what ccc writes instead.
        problem: String,
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

/// Whether an input `diagnose` reads is a manifest rather than a spec: by
/// the file's extension when it has one of the two (`.json`, `.ron`), else
/// by the text (JSON opens with `{`, after any byte-order mark). `file`:
/// the file's name, `None` for text given directly.
pub fn is_manifest(file: Option<&std::path::Path>, text: &str) -> bool {
    match file.and_then(|f| f.extension()).and_then(|e| e.to_str()) {
        Some("json") => true,
        Some("ron") => false,
        _ => text.trim_start_matches('\u{feff}').trim_start().starts_with('{'),
    }
}

/// The parts of a `manifest.json` a diagnosis reads. Other keys are
/// ignored, so that manifests of other ccc versions still load.
#[derive(Deserialize)]
struct SignedManifest {
    format_version: Option<u32>,
    signature: String,
    signature_fields: Vec<Object<Field>>,
}

/// A `T` read from a JSON object only: serde reads a struct's fields from
/// a list by position too, so that any list of three read as a manifest
/// (of no fields) and `[name, value]` as a field. Refused here, serde_json
/// says where.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ByName<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for ByName<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object of named fields")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(ByName(std::marker::PhantomData)).map(Object)
    }
}

impl Input {
    /// An input from raw fields.
    pub fn new(name: impl Into<String>, fields: Vec<Field>) -> Input {
        Input { name: name.into(), fields, images: None, edited: None, unsigned: None }
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
    /// [`InputError::DigestMismatch`], [`InputError::FormatVersionMismatch`]
    /// or [`InputError::EditedFields`] for a manifest that was edited or
    /// damaged.
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
        // A byte-order mark (an editor's) is not JSON, nor part of the text.
        let json = json.strip_prefix('\u{feff}').unwrap_or(json);
        let not_one = |name: String, e: serde_json::Error| {
            // serde_json says column 0 for an error before the first byte.
            let (line, column) = (e.line().max(1), e.column().max(1));
            let message = e.to_string().split(" at line ").next().unwrap_or_default().to_owned();
            InputError::NotAManifest { name, message, line, column }
        };
        // Objects only, the manifest and each of its fields, as ccc
        // writes them ([`Object`]).
        match serde_json::from_str::<Object<SignedManifest>>(json) {
            Ok(Object(m)) => {
                let fields = m.signature_fields.into_iter().map(|Object(f)| f).collect();
                checked(name, m.format_version, &m.signature, fields)
            }
            Err(e) => Err(not_one(name, e)),
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
    if let Err((index, problem)) = check_fields(&fields, format_version == Some(FORMAT_VERSION)) {
        return Err(InputError::EditedFields { name, index, problem });
    }
    Ok(Input { name, fields, images: None, edited: None, unsigned: None })
}

/// Checks that `fields` are fields ccc writes: no line break in a name or
/// value (each is one preimage line), and, when the manifest (`ours`) or
/// the fields state this ccc's format version, exactly the fields `sign`
/// writes, in its order (`docs/signature.md`). Fields of another format
/// version are compared as they stand. The error is the position of the
/// first wrong field and what is wrong with it.
fn check_fields(fields: &[Field], ours: bool) -> Result<(), (usize, String)> {
    let breaks = |s: &str| s.contains(['\n', '\r']);
    if let Some((i, f)) = fields.iter().enumerate().find(|(_, f)| breaks(&f.name) || breaks(&f.value)) {
        let what = if breaks(&f.name) { "its name" } else { "its value" };
        return Err((i, format!("({}): {what} holds a line break, which no preimage line can", quote(&f.name))));
    }
    let version = FORMAT_VERSION.to_string();
    if !ours && fields.first().is_none_or(|f| f.name != "format_version" || f.value != version) {
        return Ok(());
    }
    let misnamed = |i: usize, f: &Field, want: &str| {
        (i, format!("is named {}, where format version {version} has `{want}`", quote(&f.name)))
    };
    // `format_version` and `collective_n` first, then the collectives.
    for (i, want) in PROGRAM_FIELDS.iter().enumerate() {
        match fields.get(i) {
            Some(f) if f.name == *want => {}
            Some(f) => return Err(misnamed(i, f, want)),
            None => return Err((i, format!("is missing: format version {version} writes `{want}` there"))),
        }
    }
    let listed = fields.get(1).map_or("", |f| f.value.as_str());
    let n: usize = listed.parse().map_err(|_| {
        (1, format!("(`collective_n`) is {}, where ccc writes the number of collectives in decimal", quote(listed)))
    })?;
    let Some(want) = n.checked_mul(COLLECTIVE_FIELDS.len()).and_then(|c| c.checked_add(PROGRAM_FIELDS.len())) else {
        return Err((1, format!("(`collective_n`) is {n}, more collectives than a manifest can list")));
    };
    let expected = (0..n).flat_map(|i| COLLECTIVE_FIELDS.iter().map(move |f| format!("collectives[{i}].{f}")));
    for ((i, f), want) in fields.iter().enumerate().skip(PROGRAM_FIELDS.len()).zip(expected) {
        if f.name != want {
            return Err(misnamed(i, f, &want));
        }
    }
    if fields.len() != want {
        return Err((
            fields.len().min(want),
            format!(
                "{}: collective_n is {n}, so ccc writes {want} fields; this manifest lists {}",
                if fields.len() < want { "is missing" } else { "is extra" },
                fields.len()
            ),
        ));
    }
    Ok(())
}
