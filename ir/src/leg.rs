//! A hierarchical leg's choice as a spec writes it: one algorithm
//! (`intra_reduce_scatter: Ring`) or `Auto`, the cost model's pick over
//! the leg's legal set (`docs/cost-model.md`).
//!
//! Its serde form is the algorithm's own name, `Auto` beside them, so a
//! spec that names an algorithm reads and writes exactly as before.

use crate::enums::AlgType;
use serde::de::{self, EnumAccess, VariantAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The name a leg's `Auto` is written with.
pub const AUTO_NAME: &str = "Auto";

/// The names a leg may run, as an unknown name's error lists them: the
/// `enc_alg_type` names in `AlgType::ALL`'s order but `Hier`, then `Auto`.
/// (`Hier` reads all the same, for validation to say that a leg cannot
/// itself be one.)
const LEG_NAMES: &[&str] = &[
    "Ring",
    "Mesh",
    "Kangaring",
    "SingleCycleRing",
    "IntraRdh",
    "SingleStepMesh",
    "InterRdh",
    "TwoStepPodMesh",
    "LatencyOptMesh",
    "BwOptMesh",
    AUTO_NAME,
];

/// One leg's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LegAlgorithm {
    /// The algorithm the spec names.
    Fixed(AlgType),
    /// The cost model chooses among the leg's legal set.
    Auto,
}

impl LegAlgorithm {
    /// The named algorithm (`None` for `Auto`).
    pub const fn fixed(self) -> Option<AlgType> {
        match self {
            LegAlgorithm::Fixed(alg) => Some(alg),
            LegAlgorithm::Auto => None,
        }
    }

    /// The spelling in a spec.
    pub const fn name(self) -> &'static str {
        match self {
            LegAlgorithm::Fixed(alg) => alg.name(),
            LegAlgorithm::Auto => AUTO_NAME,
        }
    }
}

impl From<AlgType> for LegAlgorithm {
    fn from(alg: AlgType) -> LegAlgorithm {
        LegAlgorithm::Fixed(alg)
    }
}

impl fmt::Display for LegAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for LegAlgorithm {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LegAlgorithm::Fixed(alg) => alg.serialize(s),
            LegAlgorithm::Auto => s.serialize_unit_variant("AlgType", AlgType::ALL.len() as u32, AUTO_NAME),
        }
    }
}

/// Reads a leg's name: an enum variant (RON `Ring`) or a string (JSON `"Ring"`).
struct NameVisitor;

impl NameVisitor {
    fn by_name<E: de::Error>(name: &str) -> Result<LegAlgorithm, E> {
        if name == AUTO_NAME {
            return Ok(LegAlgorithm::Auto);
        }
        AlgType::ALL
            .iter()
            .find(|a| a.name() == name)
            .map(|&a| LegAlgorithm::Fixed(a))
            .ok_or_else(|| E::unknown_variant(name, LEG_NAMES))
    }
}

impl<'de> Visitor<'de> for NameVisitor {
    type Value = LegAlgorithm;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an algorithm name or `Auto`")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<LegAlgorithm, E> {
        Self::by_name(v)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<LegAlgorithm, A::Error> {
        let (leg, variant): (Ident, _) = data.variant()?;
        variant.unit_variant()?;
        Ok(leg.0)
    }
}

/// A variant's identifier, read as one (RON hands variant names to
/// `deserialize_identifier`, not to `deserialize_string`).
struct Ident(LegAlgorithm);

impl<'de> Deserialize<'de> for Ident {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ident, D::Error> {
        d.deserialize_identifier(IdentVisitor)
    }
}

struct IdentVisitor;

impl Visitor<'_> for IdentVisitor {
    type Value = Ident;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an algorithm name or `Auto`")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Ident, E> {
        NameVisitor::by_name(v).map(Ident)
    }
}

impl<'de> Deserialize<'de> for LegAlgorithm {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LegAlgorithm, D::Error> {
        d.deserialize_enum("AlgType", LEG_NAMES, NameVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_auto_is_its_own() {
        for &alg in AlgType::ALL {
            let text = ron::to_string(&LegAlgorithm::Fixed(alg)).unwrap_or_default();
            assert_eq!(text, alg.name());
            assert_eq!(ron::from_str::<LegAlgorithm>(&text).ok(), Some(LegAlgorithm::Fixed(alg)));
        }
        assert_eq!(ron::from_str::<LegAlgorithm>("Auto").ok(), Some(LegAlgorithm::Auto));
        assert_eq!(ron::to_string(&LegAlgorithm::Auto).ok().as_deref(), Some("Auto"));
        assert!(ron::from_str::<LegAlgorithm>("Fastest").is_err());
        let names = AlgType::ALL.iter().map(|a| a.name()).filter(|&n| n != "Hier").chain([AUTO_NAME]);
        assert_eq!(names.collect::<Vec<_>>(), LEG_NAMES);
        // `Hier` reads, for validation to refuse.
        assert_eq!(ron::from_str::<LegAlgorithm>("Hier").ok(), Some(LegAlgorithm::Fixed(AlgType::Hier)));
    }
}
