//! [`Target`]: the machine an HLO module is compiled for. HLO names devices,
//! not a topology; the target file says what they are, in RON with a spec's
//! field spellings:
//!
//! ```ron
//! (
//!     arch: Cayman,
//!     topology: (rank_n: 32, local_rank_n: 16),
//!     channels: 2,                          // optional, default 1
//!     algorithm: Ring,                      // optional: every collective
//!     algorithms: {AllToAll: Mesh},         // optional: per op, before `algorithm`
//!     // devices: {0: 0, 1: 2, 2: 1, 3: 3, ...}, // optional: every device -> its rank
//!     model: (alpha_inter_ns: 20000),       // optional: cost-model overrides
//! )
//! ```
//!
//! Without `devices`, device d is rank d. `barrier`, `send_credits` and
//! `model` are taken as a spec takes them.

use crate::parse::{LineCol, ParseError, chosen_auto_help, strip_bom};
use ccc_ir::arch::Arch;
use ccc_ir::enums::OpType;
use ccc_ir::model::ModelOverrides;
use ccc_ir::spec::{Algorithm, Barrier, Topology};
use std::collections::BTreeMap;

/// Ring channels of every imported collective when the target gives none.
pub const DEFAULT_CHANNELS: u32 = 1;

/// The machine an HLO module runs on, and the choices ccc is given for it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// The NeuronCore generation.
    pub arch: Arch,
    /// Ranks, ranks per node, pods: `rank_n` is the module's device count.
    pub topology: Topology,
    /// Ring channels of every collective (default [`DEFAULT_CHANNELS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<u32>,
    /// The algorithm of every collective, unless `algorithms` names its op.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<Algorithm>,
    /// The algorithm per op (`{AllReduce: Hier((...)), AllToAll: Mesh}`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "each_key_once")]
    pub algorithms: Option<BTreeMap<OpType, Algorithm>>,
    /// Device id → rank; every device of the module must be listed, each
    /// rank once. Default: device d is rank d.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "each_key_once")]
    pub devices: Option<BTreeMap<u32, u32>>,
    /// Host barrier (default) or device barrier, as in a spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub barrier: Option<Barrier>,
    /// Initial send credits per channel, as in a spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_credits: Option<u32>,
    /// Cost-model overrides for `Auto` (`docs/cost-model.md`), as a spec's
    /// `model:` block; copied into every imported collective.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelOverrides>,
}

impl Target {
    /// A target of `arch` and `topology` with every option at its default.
    pub const fn new(arch: Arch, topology: Topology) -> Self {
        Target {
            arch,
            topology,
            channels: None,
            algorithm: None,
            algorithms: None,
            devices: None,
            barrier: None,
            send_credits: None,
            model: None,
        }
    }

    /// Checks the values this target sets for every imported collective
    /// (`topology`, `channels`, `barrier`, `send_credits`, `model`) by the
    /// rules validation applies to a spec's
    /// ([`validate_settings`](crate::validate::validate_settings)), so that
    /// a value no collective could take is refused once, before anything is
    /// imported, by its own field path.
    ///
    /// # Errors
    ///
    /// [`ValidationErrors`](crate::validate::ValidationErrors) listing
    /// every problem found.
    pub fn validate(&self) -> Result<(), crate::validate::ValidationErrors> {
        let probe = ccc_ir::spec::Collective {
            barrier: self.barrier,
            send_credits: self.send_credits,
            model: self.model,
            ..ccc_ir::spec::Collective::new(OpType::AllReduce, ccc_ir::spec::DType::Bf16, 1, self.arch, self.topology)
                .channels(self.channels.unwrap_or(DEFAULT_CHANNELS))
        };
        crate::validate::validate_settings(&probe)
    }

    /// What a `devices` map must be, as refusals of one say it.
    pub const DEVICES_ACCEPTED: &'static str = "a map naming each device below topology.rank_n once, each rank once";

    /// Whether `devices`, when given, maps the devices `0..rank_n` one to
    /// one onto the ranks `0..rank_n`; else what is wrong with it, naming
    /// the first device or rank at fault.
    ///
    /// # Errors
    ///
    /// What is wrong, as a sentence.
    pub fn check_devices(&self) -> Result<(), String> {
        let Some(map) = &self.devices else { return Ok(()) };
        let n = self.topology.rank_n;
        if let Some((&d, _)) = map.iter().find(|&(&d, _)| d >= n) {
            return Err(format!("device {d} is not below topology.rank_n ({n})"));
        }
        if let Some((&d, &r)) = map.iter().find(|&(_, &r)| r >= n) {
            return Err(format!("device {d} is given rank {r}, not below topology.rank_n ({n})"));
        }
        let mut owner: BTreeMap<u32, u32> = BTreeMap::new();
        for (&d, &r) in map {
            if let Some(first) = owner.insert(r, d) {
                return Err(format!("devices {first} and {d} are both given rank {r}"));
            }
        }
        if let Some(missing) = (0..n).find(|d| !map.contains_key(d)) {
            return Err(format!("device {missing} is not listed (every device below {n} is, each once)"));
        }
        Ok(())
    }
}

/// An optional map whose keys are each written once: a key written twice
/// is refused, where a `BTreeMap` would keep its last value and drop the
/// first without a word (`devices: {0: 0, ..., 0: 1}` gave device 0 rank 1).
fn each_key_once<'de, D, K, V>(d: D) -> Result<Option<BTreeMap<K, V>>, D::Error>
where
    D: serde::Deserializer<'de>,
    K: serde::Deserialize<'de> + Ord + std::fmt::Debug,
    V: serde::Deserialize<'de>,
{
    use serde::de::{Error, MapAccess, Visitor};
    use std::marker::PhantomData;

    struct Once<K, V>(PhantomData<(K, V)>);

    impl<'de, K, V> Visitor<'de> for Once<K, V>
    where
        K: serde::Deserialize<'de> + Ord + std::fmt::Debug,
        V: serde::Deserialize<'de>,
    {
        type Value = Option<BTreeMap<K, V>>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map, each key once")
        }

        fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D2: serde::Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_map(self)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Self::Value, A::Error> {
            let mut map = BTreeMap::new();
            // Each key checked as soon as it is read, so that a text
            // format's error points at it, not at its value's end.
            while let Some(key) = entries.next_key::<K>()? {
                if map.contains_key(&key) {
                    return Err(A::Error::custom(format!("the key {key:?} is written twice; accepted: each key once")));
                }
                let value = entries.next_value::<V>()?;
                map.insert(key, value);
            }
            Ok(Some(map))
        }
    }

    d.deserialize_option(Once(PhantomData))
}

/// A target file that is not RON of the target schema, or a
/// `--algorithm` that is not an algorithm: what is wrong and where, said
/// as a spec's parse error says it ([`ParseError`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{start}: {message}")]
pub struct TargetError {
    /// What is wrong, in a spec's words.
    pub message: Box<str>,
    /// Where it starts.
    pub start: LineCol,
    /// One past where it ends.
    pub end: LineCol,
    /// A short label for the offending token.
    pub label: Box<str>,
    /// The field it is about (`channels`, `model.launch_ns`), where known.
    pub field: Option<Box<str>>,
    /// What would be accepted there, where the error says.
    pub accepted: Option<Box<str>>,
    /// How to fix it (for a target, at least how a target reads).
    pub help: Option<Box<str>>,
}

/// How a target file reads: the help of a problem with no better one.
pub const TARGET_READS: &str = "a target reads `(arch: Cayman, topology: (rank_n: 32, local_rank_n: 16))` with \
                                optional channels, algorithm, algorithms, devices, barrier, send_credits, model";

impl TargetError {
    /// `e`, a spec parse error of the text read as `file` (`the target`,
    /// `--algorithm`), with `whole` (how that text reads) the help where
    /// a spec's would speak of a spec file (its end, text after it, its
    /// name, a field missing from it, a value not of its schema) or there
    /// is none.
    fn of(e: &ParseError, file: &str, whole: &str) -> TargetError {
        use crate::parse::ParseErrorKind as K;
        let at_root = e.path.as_deref().is_none_or(|p| !p.contains('.'));
        let of_the_whole = match e.kind {
            K::UnexpectedEof | K::TrailingCharacters | K::WrongStructName { .. } | K::MissingField { .. } => at_root,
            K::Syntax => e.path.is_none(),
            _ => false,
        };
        let (message, help) = match &e.kind {
            // `algorithm: Auto(Ring)`, copied from a signature or manifest.
            K::ChosenAuto { .. } => (format!("`Auto` takes no choice in {file}"), Some(chosen_auto_help("spec"))),
            _ if of_the_whole => (e.message.to_string(), Some(whole.to_owned())),
            _ => (e.message.to_string(), e.help().or_else(|| Some(whole.to_owned()))),
        };
        TargetError {
            message: message.into(),
            start: e.span.start,
            end: e.span.end,
            label: e.label().into(),
            field: e.path.clone(),
            accepted: e.accepted().map(Into::into),
            help: help.map(Into::into),
        }
    }
}

/// Parses a target file's text (`implicit_some` on, as for specs).
///
/// # Errors
///
/// [`TargetError`] with the line and column of the first problem.
pub fn parse_target(src: &str) -> Result<Target, TargetError> {
    let target = crate::parse::parse_part::<Target>(src, "the target")
        .map_err(|e| TargetError::of(&e, "the target", TARGET_READS))?;
    // A `devices` map that is not one to one is the target's problem, at
    // its `devices` field.
    target.check_devices().map_err(|why| {
        let (line, col) = field_at(strip_bom(src), "devices").unwrap_or((1, 1));
        let start = LineCol { line, col };
        TargetError {
            message: format!("devices: {why}").into(),
            start,
            end: LineCol { line, col: col + "devices".len() },
            label: "here".into(),
            field: Some("devices".into()),
            accepted: Some(Target::DEVICES_ACCEPTED.into()),
            help: Some(format!("accepted: {}", Target::DEVICES_ACCEPTED).into()),
        }
    })?;
    Ok(target)
}

/// The line and column (1-based, in chars) of the field `name` written as
/// `name:` outside a `//` comment, if it is.
fn field_at(src: &str, name: &str) -> Option<(usize, usize)> {
    src.lines().enumerate().find_map(|(i, line)| {
        let code = line.split("//").next().unwrap_or("");
        let mut from = 0;
        while let Some(found) = code.get(from..)?.find(name) {
            let at = from + found;
            let before = code.get(..at)?.chars().next_back();
            let after = code.get(at + name.len()..)?.trim_start();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && after.starts_with(':') {
                return Some((i + 1, code.get(..at)?.chars().count() + 1));
            }
            from = at + name.len();
        }
        None
    })
}

/// Parses an algorithm as a spec writes it (`Ring`, `Hier((...))`, its
/// legs without `Some`, as `implicit_some` reads them): the command line's
/// `--algorithm`.
///
/// # Errors
///
/// [`TargetError`] with the column of the problem, said as a spec's
/// `algorithm` would be.
pub fn parse_algorithm(text: &str) -> Result<Algorithm, TargetError> {
    crate::parse::parse_part::<Algorithm>(text, "--algorithm").map_err(|e| {
        let mut e = TargetError::of(&e, "--algorithm", ALGORITHM_READS);
        e.accepted = e.accepted.or_else(|| Some(ALGORITHMS_ACCEPTED.into()));
        e
    })
}

/// What `--algorithm` takes, where its error names nothing.
const ALGORITHMS_ACCEPTED: &str = "Ring, Mesh, Kangaring, SingleCycleRing, IntraRdh, SingleStepMesh, InterRdh, \
                                   TwoStepPodMesh, LatencyOptMesh, BwOptMesh, Hier((...)), Auto";

/// How `--algorithm` reads: the help of a problem with no better one.
const ALGORITHM_READS: &str = "--algorithm takes one algorithm as a spec's `algorithm:` writes it: a name (`Ring`, \
                               `Auto`) or `Hier((intra_reduce_scatter: Ring, ...))`";
