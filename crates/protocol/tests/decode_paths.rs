//! The three ways into a `CliMessage` agree on every corpus line: from the text
//! (`parse_cli_line`, no intermediate `Value` for a known type), from an owned `Value` and from a
//! borrowed one (`from_value_ref`, what the console uses while keeping the raw frame). Unknown
//! fields land in `extra` either way, so each writes back the line it was read from.

use bridge_protocol::{CliMessage, ContentDelta, StreamEvent, parse_cli_line};
use serde_json::Value;

const FIXTURES: &[&str] = &[
    include_str!(
        "../../../tests/fixtures/real-cli-2.1.332/live-capture-allow-updatedInput-replay.ndjson"
    ),
    include_str!("../../../tests/fixtures/real-cli-2.1.332/live-capture-autoallowed.ndjson"),
    include_str!("../../../tests/fixtures/real-cli-2.1.332/live-capture-deny-interrupt.ndjson"),
    include_str!("../../../tests/fixtures/handmade/cli-messages.ndjson"),
    include_str!("../../../tests/fixtures/handmade/malformed.ndjson"),
];

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn text_owned_and_borrowed_decodes_agree() {
    let mut checked = 0;
    for line in FIXTURES.iter().flat_map(|f| f.lines()) {
        let Some(line) = line.strip_prefix("<< ") else {
            continue;
        };
        let from_text = parse_cli_line(line).map_err(|e| e.to_string());
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            assert!(from_text.is_err(), "{line}");
            continue;
        };
        let owned =
            CliMessage::from_value(value.clone()).map_err(|e| e.with_line(line).to_string());
        let borrowed =
            CliMessage::from_value_ref(&value).map_err(|e| e.with_line(line).to_string());
        assert_eq!(from_text, owned, "{line}");
        assert_eq!(borrowed, owned, "{line}");
        if let Ok(message) = &from_text {
            assert_eq!(serde_json::to_value(message).unwrap(), value, "{line}");
        }
        checked += 1;
    }
    assert!(checked > 100, "only {checked} lines");
}

/// A field the crate does not model, at every level of a streamed delta and of an assistant
/// frame, is kept in that level's `extra`, in order.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn unknown_fields_are_kept_at_every_level() {
    let line = r#"{"type":"assistant","zz":1,"message":{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"hi","new_block_field":[true]}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":2,"speed":"fast"},"later":{"a":"b"}},"parent_tool_use_id":null,"uuid":"u","session_id":"s","aa":"last"}"#;
    let CliMessage::Assistant(a) = parse_cli_line(line).unwrap() else {
        panic!()
    };
    assert_eq!(a.extra.keys().collect::<Vec<_>>(), ["zz", "aa"]);
    assert_eq!(
        a.message.extra.keys().collect::<Vec<_>>(),
        ["type", "later"]
    );
    assert_eq!(a.message.usage.extra["speed"], "fast");
    let back = serde_json::to_value(CliMessage::Assistant(a)).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(line).unwrap());
}

/// Decodes `line` the three ways; they must agree. Returns the text decode.
fn all_ways(line: &str) -> Result<CliMessage, String> {
    let from_text = parse_cli_line(line).map_err(|e| e.to_string());
    let value: Value = serde_json::from_str(line).unwrap();
    let owned = CliMessage::from_value(value.clone()).map_err(|e| e.with_line(line).to_string());
    let borrowed = CliMessage::from_value_ref(&value).map_err(|e| e.with_line(line).to_string());
    assert_eq!(from_text, owned, "{line}");
    assert_eq!(borrowed, owned, "{line}");
    from_text
}

fn delta_line(event: &str) -> String {
    format!(
        r#"{{"type":"stream_event","event":{event},"parent_tool_use_id":null,"uuid":"u","session_id":"s"}}"#
    )
}

/// The unions read their tag first when it comes first (the fast path); when it does not, the
/// result is the same.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn tag_not_first_decodes_the_same() {
    let first = all_ways(&delta_line(
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"hi","x":1}}"#,
    ))
    .unwrap();
    let later = all_ways(&delta_line(
        r#"{"index":2,"delta":{"text":"hi","type":"text_delta","x":1},"type":"content_block_delta"}"#,
    ))
    .unwrap();
    assert_eq!(first, later);
    let CliMessage::StreamEvent(event) = &first else {
        panic!("{first:?}")
    };
    let StreamEvent::ContentBlockDelta(delta) = &event.event else {
        panic!("{event:?}")
    };
    let ContentDelta::Text(text) = &delta.delta else {
        panic!("{delta:?}")
    };
    assert_eq!((delta.index, text.text.as_str()), (2, "hi"));
    assert_eq!(text.extra["x"], 1);

    // The top level too: `type` after the body's fields.
    let line = r#"{"uuid":"u","session_id":"s","parent_tool_use_id":null,"event":{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"hi","x":1}},"type":"stream_event"}"#;
    assert_eq!(all_ways(line).unwrap(), first);

    // Content blocks of an assistant message, tag first or not.
    let assistant = |block: &str| {
        all_ways(&format!(
            r#"{{"type":"assistant","message":{{"id":"m","type":"message","role":"assistant","model":"x","content":[{block}],"stop_reason":null,"stop_sequence":null,"usage":{{"input_tokens":1,"output_tokens":2}}}},"parent_tool_use_id":null,"uuid":"u","session_id":"s"}}"#
        ))
        .unwrap()
    };
    assert_eq!(
        assistant(r#"{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}"#),
        assistant(r#"{"id":"t","name":"Bash","input":{"command":"ls"},"type":"tool_use"}"#)
    );
}

/// An unknown event or delta type is kept whole (tag included, in order) and written back as read.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn unknown_event_and_delta_types_are_kept() {
    let line = delta_line(
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"future_delta","stuff":[1,{"a":null}],"z":"last"}}"#,
    );
    let message = all_ways(&line).unwrap();
    let CliMessage::StreamEvent(event) = &message else {
        panic!("{message:?}")
    };
    let StreamEvent::ContentBlockDelta(delta) = &event.event else {
        panic!("{event:?}")
    };
    let ContentDelta::Unknown(raw) = &delta.delta else {
        panic!("{delta:?}")
    };
    assert_eq!(
        raw.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["type", "stuff", "z"]
    );
    assert_eq!(delta.delta.tag(), "future_delta");
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        serde_json::from_str::<Value>(&line).unwrap()
    );

    let line = delta_line(r#"{"type":"future_event","index":0,"payload":{"type":"text_delta"}}"#);
    let message = all_ways(&line).unwrap();
    let CliMessage::StreamEvent(event) = &message else {
        panic!("{message:?}")
    };
    assert!(!event.event.is_known());
    assert_eq!(event.event.event_type(), "future_event");
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        serde_json::from_str::<Value>(&line).unwrap()
    );
}

/// A known delta type whose body does not fit is an error that names the message, the event and
/// the delta, with the reason, the same on every path (never a silent `Unknown`).
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_malformed_delta_is_a_clear_error() {
    for (event, reason) in [
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":7}}"#,
            "type `content_block_delta`: type `text_delta`: invalid type: integer `7`, expected a string",
        ),
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}"#,
            "type `content_block_delta`: type `text_delta`: missing field `text`",
        ),
        (
            r#"{"type":"content_block_delta","index":0,"delta":"text"}"#,
            "type `content_block_delta`: expected a JSON object with a string `type` field",
        ),
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"text":"x"}}"#,
            "type `content_block_delta`: missing string field `type`",
        ),
        (
            r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}"#,
            "type `content_block_delta`: missing field `index`",
        ),
    ] {
        let line = delta_line(event);
        let error = all_ways(&line).unwrap_err();
        assert!(
            error.contains(reason) && error.contains("stream_event"),
            "{error}\nshould say: {reason}"
        );
        assert!(!error.contains(" at line "), "{error}");
    }
}

/// A repeated `type` key: the last one wins, as in a `Value`, on every path.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_repeated_tag_decodes_as_a_value_would() {
    let message = all_ways(&delta_line(
        r#"{"type":"content_block_stop","index":0,"delta":{"type":"signature_delta","text":"x","type":"text_delta"},"type":"content_block_delta"}"#,
    ))
    .unwrap();
    let CliMessage::StreamEvent(event) = &message else {
        panic!("{message:?}")
    };
    let StreamEvent::ContentBlockDelta(delta) = &event.event else {
        panic!("{event:?}")
    };
    assert!(matches!(&delta.delta, ContentDelta::Text(t) if t.text == "x"));
}
