//! The inputs of a diagnosis: one rank's signature fields, from a signature or a checked manifest.

use crate::manifest::Manifest;
use crate::sign::{Field, Signature, digest_of};
use serde::{Deserialize, Serialize};

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
    /// ([`Difference::same_images`](super::Difference::same_images)).
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
