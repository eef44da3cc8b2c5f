//! Small serde helpers shared by the wire types.

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// Deserializes a field that is *present* in the input into `Some(..)`, even when its value is
/// `null`.
///
/// Used with `#[serde(default, deserialize_with = "present")]` on two kinds of fields:
/// * `Option<Value>` fields typed `unknown` upstream: `null` stays `Some(Value::Null)`;
/// * `Option<Option<T>>` fields that are both optional and nullable (`x?: T | null`): absent is
///   `None`, `null` is `Some(None)`, a value is `Some(Some(v))`.
///
/// Together with `skip_serializing_if = "Option::is_none"` this makes absent and `null` round-trip
/// exactly.
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// Reads the string value of `key` in a JSON object, if it is a string.
pub(crate) fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// A short, single-line excerpt of `text` for error messages (at most `max` characters).
pub(crate) fn snippet(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, ch) in text.chars().enumerate() {
        if count == max {
            out.push('…');
            break;
        }
        out.push(ch);
    }
    out
}

/// Declares an *open* string value set: the known values as unit variants plus `Other(String)` for
/// values this crate does not know yet. Serializes back exactly the string it was read from.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $lit:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value not known to this version of the crate, kept verbatim.
            Other(String),
        }

        impl $name {
            /// Every value this crate knows, in declaration order.
            pub const KNOWN: &'static [&'static str] = &[$($lit),+];

            /// The wire string.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $lit, )+
                    Self::Other(other) => other.as_str(),
                }
            }

            /// `false` for [`Self::Other`].
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Other(_))
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                match value {
                    $( $lit => Self::$variant, )+
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                match value.as_str() {
                    $( $lit => Self::$variant, )+
                    _ => Self::Other(value),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <::std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                Ok(Self::from(value.into_owned()))
            }
        }
    };
}
pub(crate) use open_enum;

/// Declares a union discriminated by a string field (`tag`), serialized with serde's internally
/// tagged representation. Each listed tag maps to a typed variant; a tag not listed is kept whole in
/// the final `$other(Value)` variant. A listed tag whose body does not fit its type is an error that
/// names the tag — never a silent fallback.
macro_rules! tagged_union {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident (tag = $tag:literal $(, body_of = $body_of:literal)?) {
            $( $(#[$vmeta:meta])* $lit:literal => $variant:ident($ty:ty), )+
            _ => $other:ident,
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize)]
        #[serde(tag = $tag)]
        $vis enum $name {
            $( $(#[$vmeta])* #[serde(rename = $lit)] $variant($ty), )+
            /// A value of the tag not listed above, kept verbatim (tag included).
            #[serde(untagged)]
            $other(::serde_json::Value),
        }

        impl $name {
            /// The tags with a typed variant.
            pub const KNOWN_TAGS: &'static [&'static str] = &[$($lit),+];

            /// The value of the discriminating field (for the catch-all: the raw value, or `""`).
            pub fn tag(&self) -> &str {
                match self {
                    $( Self::$variant(_) => $lit, )+
                    Self::$other(raw) => raw.get($tag).and_then(::serde_json::Value::as_str).unwrap_or(""),
                }
            }

            /// `false` for the catch-all variant.
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::$other(_))
            }

            /// Builds the union from a JSON value, dispatching on the tag first.
            pub fn from_value(value: ::serde_json::Value) -> Result<Self, ::serde_json::Error> {
                use ::serde::de::Error as _;
                let ::serde_json::Value::Object(map) = value else {
                    return Err(::serde_json::Error::custom(concat!(
                        "expected a JSON object with a string `", $tag, "` field"
                    )));
                };
                let Some(tag) = map.get($tag).and_then(::serde_json::Value::as_str) else {
                    return Err(::serde_json::Error::custom(concat!(
                        "missing string field `", $tag, "`"
                    )));
                };
                if <Self as $crate::tagged::TaggedUnion>::known_tag(tag).is_none() {
                    return Ok(Self::$other(::serde_json::Value::Object(map)));
                }
                $crate::tagged::decode_known(map)
            }
        }

        impl $crate::tagged::TaggedUnion for $name {
            const TAG: &'static str = $tag;
            $(const BODY_OF: Option<&'static str> = Some($body_of);)?

            const TAGS: &'static [&'static str] = Self::KNOWN_TAGS;

            fn decode_variant<'de, D: ::serde::Deserializer<'de>>(
                index: usize,
                body: D,
            ) -> Result<Self, D::Error> {
                // The variants in KNOWN_TAGS's order: a jump on the index, no second string match.
                let mut i = 0usize;
                $(
                    if index == i {
                        return <$ty as ::serde::Deserialize>::deserialize(body).map(Self::$variant);
                    }
                    i += 1;
                )+
                unreachable!("known_tag gives an index into KNOWN_TAGS, {} of {}", index, i)
            }

            fn other(value: ::serde_json::Value) -> Self {
                Self::$other(value)
            }
        }

        /// Tag-first: see `tagged.rs`.
        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::tagged::deserialize(deserializer)
            }
        }
    };
}
pub(crate) use tagged_union;
