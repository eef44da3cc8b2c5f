//! Tag-first decoding of the unions declared with [`crate::util::tagged_union!`].
//!
//! serde's own internally tagged enums (and the `Value`-first decode this crate used before) read
//! the whole object into a buffer before they know which variant it is, then decode the buffer:
//! every nested union (a stream event, its delta, each content block) was parsed twice and
//! allocated as a `Value` tree in between. Here the union reads the object's first key: when it is
//! the tag with a known string value, which is how the CLI and the Messages API write every
//! object, the rest of the object is handed straight to the variant's own decoder (borrowing the
//! input where the decoder can). Anything else — the tag later in the object, a tag this crate
//! does not know, a non-string tag — is collected into a `Value` and takes the general path
//! ([`from_object`]), with the same result and the same errors as the `Value` decode
//! (`from_value`, kept for native callers that hold a `Value`). The general path decodes a known
//! variant from the object's JSON text with its tag moved first, so it reuses the text decoders
//! instead of linking a second, `Value`-reading set of them (the console links only the text
//! decoders).

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::extra::Key;

/// A union discriminated by the string field [`TaggedUnion::TAG`].
pub(crate) trait TaggedUnion: Sized {
    /// The discriminating field.
    const TAG: &'static str;

    /// The `type` of the messages whose body this union is, decoded with their `type` skipped
    /// ([`crate::extra::SkipType`]): the general path ([`from_object`]) decodes through the same
    /// wrapper, so the variants' decoders are linked once, not once per wrapper.
    const BODY_OF: Option<&'static str> = None;

    /// The tags with a typed variant, in the variants' order.
    const TAGS: &'static [&'static str];

    /// The index in [`Self::TAGS`] of `tag`, when it has a typed variant.
    fn known_tag(tag: &str) -> Option<usize> {
        Self::TAGS.iter().position(|known| *known == tag)
    }

    /// Decodes the variant of the known tag at `index` in [`Self::TAGS`] from the rest of the
    /// object.
    fn decode_variant<'de, D: Deserializer<'de>>(index: usize, body: D) -> Result<Self, D::Error>;

    /// The catch-all variant: an object whose tag this crate does not know, kept whole.
    fn other(value: Value) -> Self;
}

/// Deserializes a [`TaggedUnion`] tag-first (see the module documentation).
pub(crate) fn deserialize<'de, T: TaggedUnion, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    deserializer.deserialize_any(TagFirst::<T>(PhantomData))
}

/// Decodes an object whose tag is known (checked by the caller) on the tag-first path: the tag
/// moved to the front, then read from the borrowed `Value` (`from_value`, for native callers).
pub(crate) fn decode_known<T: TaggedUnion>(
    map: Map<String, Value>,
) -> Result<T, serde_json::Error> {
    deserialize(&tag_first::<T>(map))
}

/// The object with its tag moved to the front.
fn tag_first<T: TaggedUnion>(mut map: Map<String, Value>) -> Value {
    let mut ordered = Map::with_capacity(map.len());
    if let Some(tag) = map.shift_remove(T::TAG) {
        ordered.insert(T::TAG.to_owned(), tag);
    }
    ordered.extend(map);
    Value::Object(ordered)
}

/// The general path of a text decode: an object whose first key is not its tag (or whose tag is
/// not a known string). The same checks as `from_value`; a known variant is decoded from the
/// object's JSON text with the tag moved first (the tag-first text path, so no second set of
/// decoders), its error without the position in that text.
fn from_object<T: TaggedUnion>(map: Map<String, Value>) -> Result<T, serde_json::Error> {
    let Some(tag) = map.get(T::TAG).and_then(Value::as_str) else {
        return Err(de::Error::custom(format_args!(
            "missing string field `{}`",
            T::TAG
        )));
    };
    if T::known_tag(tag).is_none() {
        return Ok(T::other(Value::Object(map)));
    }
    let text = tag_first::<T>(map).to_string();
    if T::BODY_OF.is_some() {
        from_text(&text, |de| deserialize(crate::extra::SkipType(de)))
    } else {
        from_text(&text, |de| deserialize(de))
    }
}

/// Decodes `text` with `decode` (the whole text: trailing characters are an error). An error reads
/// as a `Value` decode's would: without its position in `text`, which the caller did not write.
pub(crate) fn from_text<'a, T>(
    text: &'a str,
    decode: impl FnOnce(
        &mut serde_json::Deserializer<serde_json::de::StrRead<'a>>,
    ) -> Result<T, serde_json::Error>,
) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    decode(&mut de)
        .and_then(|value| de.end().map(|()| value))
        .map_err(|err| de::Error::custom(without_position(&err.to_string())))
}

/// The message of a union's error: `{tag} `{value}`: {reason}`, without the reason's own
/// ` at line … column …` (serde_json adds the position of the whole value once).
pub(crate) fn variant_error<E: de::Error>(tag: &str, value: &str, reason: impl fmt::Display) -> E {
    let reason = reason.to_string();
    E::custom(format!("{tag} `{value}`: {}", without_position(&reason)))
}

/// `text` without a trailing ` at line N column M`.
fn without_position(text: &str) -> &str {
    let Some(at) = text.rfind(" at line ") else {
        return text;
    };
    let mut rest = text[at + " at line ".len()..].splitn(2, " column ");
    let digits =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    if digits(rest.next()) && digits(rest.next()) {
        &text[..at]
    } else {
        text
    }
}

struct TagFirst<T>(PhantomData<T>);

/// Anything but an object: the general path's error.
macro_rules! not_an_object {
    ($($method:ident($($arg:ty)?)),+ $(,)?) => {$(
        fn $method<E: de::Error>(self $(, _: $arg)?) -> Result<T, E> {
            Err(self.not_an_object())
        }
    )+};
}

impl<T: TaggedUnion> TagFirst<T> {
    fn not_an_object<E: de::Error>(&self) -> E {
        E::custom(format_args!(
            "expected a JSON object with a string `{}` field",
            T::TAG
        ))
    }
}

impl<'de, T: TaggedUnion> Visitor<'de> for TagFirst<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a JSON object with a string `{}` field", T::TAG)
    }

    not_an_object! {
        visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_str(&str),
        visit_unit(), visit_none(),
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Err(self.not_an_object())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut object = Map::new();
        match map.next_key::<Key<'de>>()? {
            Some(key) if key.as_str() == T::TAG => {
                let tag: Tag<'de> = map.next_value()?;
                if let Tag::Str(ref text) = tag
                    && let Some(index) = T::known_tag(text.as_str())
                {
                    let body = MapAccessDeserializer::new(RestOf { map, tag: T::TAG });
                    return T::decode_variant(index, body)
                        .map_err(|err| variant_error(T::TAG, T::TAGS[index], err));
                }
                object.insert(T::TAG.to_owned(), tag.into_value());
            }
            Some(key) => {
                let value = map.next_value()?;
                object.insert(key.into_string(), value);
            }
            None => {}
        }
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let value = map.next_value()?;
            object.insert(key.into_string(), value);
        }
        from_object(object).map_err(de::Error::custom)
    }
}

/// The tag's value: a string (borrowed when it can be), or anything else as a `Value`.
enum Tag<'de> {
    Str(Key<'de>),
    Other(Value),
}

impl Tag<'_> {
    fn into_value(self) -> Value {
        match self {
            Tag::Str(text) => Value::String(text.into_string()),
            Tag::Other(value) => value,
        }
    }
}

impl<'de> de::Deserialize<'de> for Tag<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TagVisitor;
        impl<'de> Visitor<'de> for TagVisitor {
            type Value = Tag<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Tag<'de>, E> {
                Ok(Tag::Str(Key::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Tag<'de>, E> {
                Ok(Tag::Str(Key::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Tag<'de>, E> {
                Ok(Tag::Str(Key::Owned(v)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::from(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<Tag<'de>, E> {
                Ok(Tag::Other(Value::Null))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tag<'de>, D::Error> {
                de::Deserialize::deserialize(d).map(Tag::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Tag<'de>, A::Error> {
                de::Deserialize::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(Tag::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Tag<'de>, A::Error> {
                de::Deserialize::deserialize(MapAccessDeserializer::new(map)).map(Tag::Other)
            }
        }
        deserializer.deserialize_any(TagVisitor)
    }
}

/// The object after its tag. A second tag key is an error (the line's decode then takes the
/// general path, through a `Value`, where the last one wins as in any JSON object).
struct RestOf<A> {
    map: A,
    tag: &'static str,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for RestOf<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.map.next_key::<Key<'de>>()? {
            Some(key) if key.as_str() == self.tag => Err(de::Error::duplicate_field(self.tag)),
            Some(Key::Borrowed(key)) => seed
                .deserialize(de::value::BorrowedStrDeserializer::<A::Error>::new(key))
                .map(Some),
            Some(Key::Owned(key)) => seed
                .deserialize(de::value::StringDeserializer::<A::Error>::new(key))
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}
