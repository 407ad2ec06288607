//! A signature's fields as a diagnosis reads them: program-wide fields and, per collective, `(field, value)` pairs.

use crate::parse::bound_message;
use crate::sign::Field;
use std::collections::BTreeMap;

/// One collective's fields, `(field, value)`, in signature order.
pub(crate) type Coll<'a> = Vec<(&'a str, &'a str)>;

/// A signature's fields, split into program-wide fields and collectives.
pub(super) struct Parsed<'a> {
    /// `(name, value)` of every field outside `collectives[i]`.
    pub(super) program: Vec<(&'a str, &'a str)>,
    /// Per collective, in index order: `(field, value)`.
    pub(super) collectives: Vec<Coll<'a>>,
    /// What each collective's `Auto` choice reads unsigned, where the
    /// input knows it ([`Input::unsigned`](super::Input::unsigned)).
    pub(super) unsigned: Option<&'a [super::Unsigned]>,
}

impl<'a> Parsed<'a> {
    pub(super) fn of(fields: &'a [Field]) -> Parsed<'a> {
        let mut program = Vec::new();
        let mut collectives: BTreeMap<u64, Vec<(&str, &str)>> = BTreeMap::new();
        for f in fields {
            match collective_field(&f.name) {
                Some((i, key)) => collectives.entry(i).or_default().push((key, &f.value)),
                None => program.push((f.name.as_str(), f.value.as_str())),
            }
        }
        Parsed { program, collectives: collectives.into_values().collect(), unsigned: None }
    }
}

/// `collectives[4].count` → `(4, "count")`.
fn collective_field(name: &str) -> Option<(u64, &str)> {
    let rest = name.strip_prefix("collectives[")?;
    let (index, key) = rest.split_once("].")?;
    Some((index.parse().ok()?, key))
}

pub(super) fn value<'a>(fields: &[(&'a str, &'a str)], key: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// `AllGather Bf16 x 1024`, a long value cut (an edited manifest can hold
/// any length: [`bound_message`]).
pub(super) fn summary(c: &[(&str, &str)]) -> String {
    let get = |key| value(c, key).unwrap_or("?");
    bound_message(&format!("{} {} x {}", get("op"), get("dtype"), get("count")))
}
