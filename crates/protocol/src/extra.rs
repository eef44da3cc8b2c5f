//! Unknown fields kept in an `extra` map without `#[serde(flatten)]`.
//!
//! A flattened map makes serde buffer the whole object (and each nested flattened object again)
//! into its private `Content` tree before any field is read: slow, and a lot of code in the wasm
//! console. The types that every frame carries instead derive with `#[serde(remote = "Self")]`
//! (inherent `deserialize` / `serialize` functions over the modelled fields, `extra` skipped) and
//! [`with_extra!`] implements the serde traits around them:
//!
//! * deserializing hands the derived visitor a map access that answers only the struct's own field
//!   names (serde passes them to `deserialize_struct`); every other key is read as a
//!   [`serde_json::Value`] into `extra`, in one pass, with no buffering;
//! * serializing writes the derived fields as a map and then `extra`'s entries.
//!
//! Wire behaviour is the flattened one: unknown keys survive a round trip, absent fields stay
//! absent.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::ser::{self, Impossible, SerializeMap, SerializeStruct, Serializer};
use serde_json::{Map, Value};

/// Implements `Deserialize` and `Serialize` for a struct derived with `#[serde(remote = "Self")]`
/// whose `extra: Map<String, Value>` field is `#[serde(skip)]`.
macro_rules! with_extra {
    ($($ty:ty),+ $(,)?) => {$(
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let mut extra = ::serde_json::Map::new();
                let mut value =
                    <$ty>::deserialize($crate::extra::Collect::new(deserializer, &mut extra))?;
                value.extra = extra;
                Ok(value)
            }
        }

        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                <$ty>::serialize(self, $crate::extra::Append::new(serializer, &self.extra))
            }
        }
    )+};
}
pub(crate) use with_extra;

/// Declares structs that keep the fields they do not model: each derives `Debug, Clone, PartialEq`
/// and serde's traits with `#[serde(remote = "Self")]`, gets a last field
/// `#[serde(skip)] pub extra: Map<String, Value>` (the fields not modelled here, kept verbatim) and
/// [`with_extra!`]'s serde impls. Docs and other attributes — `#[derive(Default)]`, container and
/// field `#[serde(..)]` — pass through as written.
///
/// An `Option` field is left out when `None` (serde_with's `skip_serializing_none`: absent stays
/// absent); one the wire always carries, `null` included, is marked `#[serialize_always]`.
macro_rules! open_struct {
    ($(
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty ),* $(,)?
        }
    )+) => {$(
        #[::serde_with::skip_serializing_none]
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        $(#[$meta])*
        #[serde(remote = "Self")]
        $vis struct $name {
            $( $(#[$fmeta])* $fvis $field : $ty, )*
            /// Fields not modelled here, kept verbatim.
            #[serde(skip)]
            pub extra: ::serde_json::Map<String, ::serde_json::Value>,
        }
        $crate::extra::with_extra!($name);
    )+};
}
pub(crate) use open_struct;

// ------------------------------------------------------------------------------ deserializing

/// A deserializer that collects the keys a struct does not name into `extra`.
pub struct Collect<'a, D> {
    inner: D,
    extra: &'a mut Map<String, Value>,
}

impl<'a, D> Collect<'a, D> {
    pub(crate) fn new(inner: D, extra: &'a mut Map<String, Value>) -> Self {
        Collect { inner, extra }
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Collect<'_, D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.inner.deserialize_map(CollectVisitor {
            inner: visitor,
            fields,
            extra: self.extra,
        })
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

struct CollectVisitor<'a, V> {
    inner: V,
    fields: &'static [&'static str],
    extra: &'a mut Map<String, Value>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for CollectVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(CollectMap {
            inner: map,
            fields: self.fields,
            extra: self.extra,
        })
    }
}

struct CollectMap<'a, A> {
    inner: A,
    fields: &'static [&'static str],
    extra: &'a mut Map<String, Value>,
}

impl<'de, A: MapAccess<'de>> CollectMap<'_, A> {
    /// The index in `fields` of the next key the struct names; the keys before it that it does
    /// not name go into `extra`. One copy per input, not one per struct.
    #[inline(never)]
    fn next_field(&mut self) -> Result<Option<usize>, A::Error> {
        while let Some(key) = self.inner.next_key::<Key<'de>>()? {
            let name = key.as_str();
            if let Some(index) = self.fields.iter().position(|f| *f == name) {
                return Ok(Some(index));
            }
            let value: Value = self.inner.next_value()?;
            self.extra.insert(key.into_string(), value);
        }
        Ok(None)
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CollectMap<'_, A> {
    type Error = A::Error;

    /// Hands the derived visitor the field's index in `fields`, not its name: serde's derived
    /// field identifier maps an index with a jump table (the `fields` serde passes are the
    /// deserialized fields in that order), so the names are compared once, here, instead of again
    /// in every struct's own identifier code.
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.next_field()? {
            Some(index) => seed
                .deserialize((index as u64).into_deserializer())
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A map key, borrowed from the input when it can be.
pub(crate) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }

    pub(crate) fn into_string(self) -> String {
        match self {
            Key::Borrowed(s) => s.to_owned(),
            Key::Owned(s) => s,
        }
    }
}

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

// ------------------------------------------------------------------------------ serializing

/// A serializer that writes a struct as a map followed by `extra`'s entries.
pub struct Append<'a, S> {
    inner: S,
    extra: &'a Map<String, Value>,
}

impl<'a, S> Append<'a, S> {
    pub(crate) fn new(inner: S, extra: &'a Map<String, Value>) -> Self {
        Append { inner, extra }
    }
}

/// The struct's fields, then `extra`.
pub struct AppendStruct<'a, M> {
    map: M,
    extra: &'a Map<String, Value>,
}

impl<M: SerializeMap> SerializeStruct for AppendStruct<'_, M> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_field<T: ?Sized + ser::Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        self.map.serialize_entry(key, value)
    }

    fn end(mut self) -> Result<M::Ok, M::Error> {
        for (key, value) in self.extra {
            self.map.serialize_entry(key, value)?;
        }
        self.map.end()
    }
}

/// The `Serializer` methods [`Append`] refuses (it writes structs only): `method<T>(args) -> Ok`,
/// the generic parameter and the return type (`S::Ok` when left out) as the trait declares them.
macro_rules! only_structs {
    ($($method:ident $(<$t:ident>)? ($($arg:ty),*) $(-> $ret:ty)?),+ $(,)?) => {$(
        fn $method $(<$t: ?Sized + ser::Serialize>)? (self, $(_: $arg),*)
            -> Result<only_structs!(@ok $($ret)?), S::Error>
        {
            Err(ser::Error::custom("with_extra: only a struct can carry extra fields"))
        }
    )+};
    (@ok) => { S::Ok };
    (@ok $ret:ty) => { $ret };
}

impl<'a, S: Serializer> Serializer for Append<'a, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Impossible<S::Ok, S::Error>;
    type SerializeStruct = AppendStruct<'a, S::SerializeMap>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        let map = self.inner.serialize_map(Some(len + self.extra.len()))?;
        Ok(AppendStruct {
            map,
            extra: self.extra,
        })
    }

    only_structs! {
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32),
        serialize_i64(i64), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32),
        serialize_u64(u64), serialize_f32(f32), serialize_f64(f64), serialize_char(char),
        serialize_str(&str), serialize_bytes(&[u8]), serialize_none(), serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
        serialize_some<T>(&T), serialize_newtype_struct<T>(&'static str, &T),
        serialize_newtype_variant<T>(&'static str, u32, &'static str, &T),
        serialize_seq(Option<usize>) -> Self::SerializeSeq,
        serialize_tuple(usize) -> Self::SerializeTuple,
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct,
        serialize_tuple_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeTupleVariant,
        serialize_map(Option<usize>) -> Self::SerializeMap,
        serialize_struct_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeStructVariant,
    }
}

// ------------------------------------------------------------------------------ a message's body

/// A deserializer for a message's body: the object without its `type` key (the union read it
/// already), so the body type does not see it as an unknown field. A second `type` key is an error
/// (a text decode then takes the `Value` path, where the last one wins).
pub(crate) struct SkipType<D>(pub(crate) D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for SkipType<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(SkipVisitor(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_struct(name, fields, SkipVisitor(visitor))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

struct SkipVisitor<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for SkipVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(SkipMap(map, false))
    }
}

/// The map, and whether its `type` was seen.
struct SkipMap<A>(A, bool);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for SkipMap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        while let Some(key) = self.0.next_key::<Key<'de>>()? {
            if key.as_str() == "type" {
                if std::mem::replace(&mut self.1, true) {
                    return Err(de::Error::duplicate_field("type"));
                }
                self.0.next_value::<de::IgnoredAny>()?;
                continue;
            }
            return match key {
                Key::Borrowed(k) => seed.deserialize(de::value::BorrowedStrDeserializer::new(k)),
                Key::Owned(k) => seed.deserialize(k.into_deserializer()),
            }
            .map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.0.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint().map(|n| n.saturating_sub(1))
    }
}
