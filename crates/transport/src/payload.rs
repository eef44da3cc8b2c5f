//! A frame's payload as the relay sent it: its JSON text, not a `serde_json::Value`. The console
//! decodes its typed message straight from that text (bridge-protocol's tag-first path) and builds
//! a `Value` only where it needs one (a frame it shows raw); a consumer that wants the JSON tree
//! asks for [`Payload::value`].

use bridge_protocol::MessageType;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// One payload: a JSON object with a string `type` (checked when the frame was decoded), kept as
/// the text it arrived as.
#[derive(Clone, Debug)]
pub struct Payload(Box<RawValue>);

impl Payload {
    /// The payload in `raw`, if it is an object with a string `type`; with its `uuid` when
    /// `with_uuid` (a non-empty string `uuid`, `None` otherwise).
    pub(crate) fn checked(raw: &RawValue, with_uuid: bool) -> Option<(Payload, Option<String>)> {
        let text = raw.get();
        if !text.starts_with('{') {
            return None;
        }
        let uuid = match (leading_type(text), with_uuid) {
            // What the CLI and the relay write: `{"type":"…"` first; nothing else to read.
            (Some(_), false) => None,
            _ => {
                let tags = Tags::read(text)?;
                tags.kind.as_deref()?;
                tags.uuid.filter(|u| !u.is_empty())
            }
        };
        Some((Payload(raw.to_owned()), uuid))
    }

    /// The JSON text.
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// The payload as a `serde_json::Value` (parsed from the text each time: for rare frames and
    /// consumers that want the tree). `Null` for the one text that is JSON but no `Value`: nested
    /// deeper than serde_json's 128 levels (a typed decode refuses it too).
    pub fn value(&self) -> Value {
        serde_json::from_str(self.text()).unwrap_or(Value::Null)
    }

    /// Its `type` (`Other("")` for a type written with escapes, which no known type needs).
    pub fn kind(&self) -> MessageType<'_> {
        let text = self.text();
        let tag = leading_type(text)
            .or_else(|| serde_json::from_str::<BorrowedTag>(text).ok()?.kind)
            .unwrap_or_default();
        MessageType::from_tag(tag)
    }

    /// `subtype`, when it comes right after `type` (as the CLI writes every `system` and `result`
    /// frame), else read from the whole object.
    pub fn subtype(&self) -> Option<String> {
        let text = self.text();
        if let Some(rest) = after_leading_type(text)
            && let Some(sub) = rest.strip_prefix(r#","subtype":""#)
            && let Some(end) = sub.find('"')
            && !sub[..end].contains('\\')
        {
            return Some(sub[..end].to_owned());
        }
        self.value()
            .get("subtype")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
}

#[derive(Deserialize)]
struct BorrowedTag<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a str>,
}

/// `type` and `uuid` of a payload whose `type` is not first (or whose `uuid` is needed), read in
/// one pass over the object without building it. `None` when it is not an object; a field that is
/// not a string reads as absent (as `Value::as_str` would).
struct Tags {
    kind: Option<String>,
    uuid: Option<String>,
}

impl Tags {
    fn read(text: &str) -> Option<Tags> {
        #[derive(Deserialize)]
        struct Raw<'a> {
            #[serde(rename = "type", borrow, default)]
            kind: Option<&'a RawValue>,
            #[serde(borrow, default)]
            uuid: Option<&'a RawValue>,
        }
        let as_str =
            |v: Option<&RawValue>| v.and_then(|v| serde_json::from_str::<String>(v.get()).ok());
        // Without the field reader (feature `field-reader`) the fallback below reads every payload.
        let fields = match cfg!(feature = "field-reader") {
            true => serde_json::from_str::<Raw>(text),
            false => Err(serde::de::Error::custom("read through a Value")),
        };
        match fields {
            Ok(raw) => Some(Tags {
                kind: as_str(raw.kind),
                uuid: as_str(raw.uuid),
            }),
            // Not an object — or a repeated key, which a `Value` reads as its last value.
            Err(_) => {
                let value: Value = serde_json::from_str(text).ok()?;
                let field = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_owned);
                value.is_object().then(|| Tags {
                    kind: field("type"),
                    uuid: field("uuid"),
                })
            }
        }
    }
}

/// `X` of a text that starts `{"type":"X"` (no escapes in `X`).
fn leading_type(text: &str) -> Option<&str> {
    let rest = text.strip_prefix(r#"{"type":""#)?;
    let end = rest.find('"')?;
    let kind = &rest[..end];
    (!kind.contains('\\')).then_some(kind)
}

/// The text after `{"type":"X"`.
fn after_leading_type(text: &str) -> Option<&str> {
    let kind = leading_type(text)?;
    Some(&text[r#"{"type":""#.len() + kind.len() + 1..])
}

impl PartialEq for Payload {
    /// Equal JSON (not only equal text).
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text() || self.value() == other.value()
    }
}

impl Serialize for Payload {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl From<&Value> for Payload {
    /// A payload made here (a synthetic frame, a test): `value` written as JSON text.
    fn from(value: &Value) -> Payload {
        let text = serde_json::to_string(value).expect("a Value serializes");
        Payload(RawValue::from_string(text).expect("serde_json writes valid JSON"))
    }
}

impl From<Value> for Payload {
    fn from(value: Value) -> Payload {
        Payload::from(&value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn checked(text: &str, with_uuid: bool) -> Option<(Payload, Option<String>)> {
        let raw: Box<RawValue> = serde_json::from_str(text).unwrap();
        Payload::checked(&raw, with_uuid)
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn type_and_uuid_wherever_they_are() {
        let (p, uuid) = checked(
            r#"{"type":"result","subtype":"success","uuid":"u-1"}"#,
            true,
        )
        .unwrap();
        assert_eq!(uuid.as_deref(), Some("u-1"));
        assert_eq!(p.kind(), MessageType::Result);
        assert_eq!(p.subtype().as_deref(), Some("success"));
        // The type later, spaces, an escaped uuid.
        let text = r#"{ "uuid": "u\u002d2", "subtype": "init", "type": "system" }"#;
        let (p, uuid) = checked(text, true).unwrap();
        assert_eq!(uuid.as_deref(), Some("u-2"));
        assert_eq!(p.kind(), MessageType::System);
        assert_eq!(p.subtype().as_deref(), Some("init"));
        assert_eq!(p.text(), text, "kept as it came");
        assert_eq!(
            p.value(),
            json!({"uuid": "u-2", "subtype": "init", "type": "system"})
        );
        // A repeated key reads as a `Value` would: the last one.
        let (_, uuid) = checked(r#"{"type":"user","uuid":"a","uuid":"b"}"#, true).unwrap();
        assert_eq!(uuid.as_deref(), Some("b"));
        // No uuid, an empty one, a non-string one.
        for text in [
            r#"{"type":"keep_alive"}"#,
            r#"{"type":"user","uuid":""}"#,
            r#"{"type":"user","uuid":5}"#,
        ] {
            assert_eq!(checked(text, true).unwrap().1, None, "{text}");
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn not_a_message_is_refused() {
        // (An array would fill a struct's fields by position.)
        for text in [
            r#"{"x":1}"#,
            r#"{"type":5}"#,
            "[1]",
            r#"["user","u-1"]"#,
            "5",
            r#""type""#,
        ] {
            assert!(checked(text, false).is_none(), "{text}");
            assert!(checked(text, true).is_none(), "{text}");
        }
    }

    // Only the field reader accepts such a payload; read through a `Value` (the JS client's build)
    // the envelope itself is too deep and the frame is refused as not JSON.
    #[cfg(feature = "field-reader")]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn too_deep_for_a_value_is_null_not_a_panic() {
        let text = format!(
            r#"{{"type":"user","x":{}1{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let (p, _) = checked(&text, true).unwrap();
        assert_eq!(p.value(), Value::Null);
        assert!(bridge_protocol::CliMessage::from_value(p.value()).is_err());
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn equal_json_is_equal_and_serializes_as_is() {
        let a = Payload::from(json!({"type": "keep_alive"}));
        let (b, _) = checked(r#"{ "type" : "keep_alive" }"#, false).unwrap();
        assert_eq!(a, b);
        assert_eq!(
            serde_json::to_value(&b).unwrap(),
            json!({"type": "keep_alive"})
        );
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            r#"{ "type" : "keep_alive" }"#
        );
    }
}
