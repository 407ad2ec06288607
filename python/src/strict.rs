//! A dict's JSON read as RON reads a spec: [`Strict`] deserializes a
//! `serde_json::Value` as `serde_json` does, except that a struct given a
//! list is refused. Serde's derived structs take their fields by position
//! from a sequence, so `{"topology": [32, 16]}` or a whole collective
//! written as a list would be read silently, field by field in declaration
//! order, where `ccc.parse` refuses the same spec ("a struct's fields are
//! written by name").

use serde::de::value::StrDeserializer;
use serde::de::{
    DeserializeSeed, Deserializer, EnumAccess, Error as _, IntoDeserializer, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};
use serde_json::{Error, Value};

/// A JSON value deserialized as a spec's RON is: structs by name only.
pub struct Strict(pub Value);

/// The refusal of a list where struct `name` (with `fields`) belongs.
fn by_name(name: &str, fields: &[&str]) -> Error {
    Error::custom(format!(
        "a list where a dict belongs (the fields of {name} are written by name); accepted: a dict of {}",
        fields.join(", ")
    ))
}

impl<'de> Deserializer<'de> for Strict {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            // Every item and entry read, as serde_json's reader demands:
            // `[0, 1, 7]` is no pair.
            Value::Array(items) => {
                let n = items.len();
                let mut seq = Seq(items.into_iter());
                let value = visitor.visit_seq(&mut seq)?;
                match seq.0.len() {
                    0 => Ok(value),
                    _ => Err(Error::invalid_length(n, &"fewer elements in array")),
                }
            }
            Value::Object(map) => {
                let n = map.len();
                let mut entries = Map { entries: map.into_iter(), value: None };
                let value = visitor.visit_map(&mut entries)?;
                match entries.entries.len() {
                    0 => Ok(value),
                    _ => Err(Error::invalid_length(n, &"fewer elements in map")),
                }
            }
            scalar => scalar.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(_) => Err(by_name(name, fields)),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(unit) => visitor.visit_enum(unit.into_deserializer()),
            // A one-entry map: its variant and value.
            Value::Object(map) if map.len() == 1 => match map.into_iter().next() {
                Some((variant, value)) => visitor.visit_enum(Variant { variant, value }),
                None => Err(Error::invalid_length(0, &"a map of one variant")),
            },
            // serde_json's own refusal of anything else.
            other => other.deserialize_enum(name, variants, visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

/// A list's items, each [`Strict`].
struct Seq(std::vec::IntoIter<Value>);

impl<'de> SeqAccess<'de> for Seq {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        self.0.next().map(|v| seed.deserialize(Strict(v))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// A dict's entries: keys as [`Key`]s, values [`Strict`].
struct Map {
    entries: serde_json::map::IntoIter,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for Map {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else { return Ok(None) };
        self.value = Some(value);
        seed.deserialize(Key(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self.value.take().ok_or_else(|| Error::custom("a value asked before its key"))?;
        seed.deserialize(Strict(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An enum written `{"Variant": value}`.
struct Variant {
    variant: String,
    value: Value,
}

impl<'de> EnumAccess<'de> for Variant {
    type Error = Error;
    type Variant = Variant;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Variant), Error> {
        let name: StrDeserializer<'_, Error> = self.variant.as_str().into_deserializer();
        Ok((seed.deserialize(name)?, self))
    }
}

impl<'de> VariantAccess<'de> for Variant {
    type Error = Error;

    /// A name written as a one-entry dict (`{"Mesh": None}`) is refused,
    /// as RON refuses `Mesh(())`: a name is its text alone.
    fn unit_variant(self) -> Result<(), Error> {
        let name = self.variant;
        // Only a leg's choice has `Hier` as a bare name (the algorithm's
        // `Hier` holds its legs): a leg of a leg, as RON's
        // `intra_reduce_scatter: Hier((...))` is refused.
        if name == "Hier" {
            return Err(Error::custom(
                "a leg cannot itself be Hier; accepted: a leg's algorithm as text (\"Ring\", \"Kangaring\", \"Auto\", ...)",
            ));
        }
        Err(Error::custom(format!(
            "`{name}` is a name, written as the text \"{name}\", not as a dict; accepted: \"{name}\""
        )))
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(Strict(self.value))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, Error> {
        Strict(self.value).deserialize_seq(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], visitor: V) -> Result<V::Value, Error> {
        Strict(self.value).deserialize_struct("the variant", fields, visitor)
    }
}

/// A dict's key: text, or a whole number written as its digits (JSON keys
/// are text: `devices: {0: 7}` arrives as `{"0": 7}`), as `serde_json`
/// reads a map's keys.
struct Key(String);

macro_rules! whole_key {
    ($($method:ident => $visit:ident as $ty:ty),* $(,)?) => {$(
        // Read as JSON reads a number (no `+`, no leading zero), as
        // serde_json reads a map's key.
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match serde_json::from_str::<$ty>(&self.0) {
                Ok(n) if self.0.bytes().all(|b| b == b'-' || b.is_ascii_digit()) => visitor.$visit(n),
                _ => Err(Error::invalid_type(Unexpected::Str(&self.0), &visitor)),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for Key {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_string(self.0)
    }

    whole_key! {
        deserialize_u8 => visit_u64 as u64,
        deserialize_u16 => visit_u64 as u64,
        deserialize_u32 => visit_u64 as u64,
        deserialize_u64 => visit_u64 as u64,
        deserialize_i8 => visit_i64 as i64,
        deserialize_i16 => visit_i64 as i64,
        deserialize_i32 => visit_i64 as i64,
        deserialize_i64 => visit_i64 as i64,
        deserialize_u128 => visit_u128 as u128,
        deserialize_i128 => visit_i128 as i128,
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(self.0.into_deserializer())
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    serde::forward_to_deserialize_any! {
        bool f32 f64 char str string bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}
