//! The ways into a `CliMessage` agree on every corpus line: from the text (`parse_cli_line`:
//! the text decoders only — the line straight when it starts with its `type`, else through a
//! `Value` read for its classification and decoded from that `Value`'s text), from an owned
//! `Value` and from a borrowed one (`from_value_ref`, the relay's). Unknown fields land in `extra`
//! either way, so each writes back the line it was read from. The same for `ClientMessage`.

use bridge_protocol::{
    CliMessage, ClientMessage, ContentDelta, StreamEvent, parse_cli_line, parse_client_line,
};
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

/// The delta of a `content_block_delta` event whose delta type is unknown, and its raw object.
fn unknown_delta(message: &CliMessage) -> (&ContentDelta, &Value) {
    let CliMessage::StreamEvent(event) = message else {
        panic!("{message:?}")
    };
    let StreamEvent::ContentBlockDelta(delta) = &event.event else {
        panic!("{event:?}")
    };
    let ContentDelta::Unknown(raw) = &delta.delta else {
        panic!("{delta:?}")
    };
    (&delta.delta, raw)
}

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
    let (delta, raw) = unknown_delta(&message);
    assert_eq!(
        raw.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["type", "stuff", "z"]
    );
    assert_eq!(delta.tag(), "future_delta");
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

/// A union whose tag is not its first key is decoded from text without a `Value` decoder: the
/// same results and errors as the `Value` decode, at every level — tag later, missing, not a
/// string, repeated, unknown — and bad JSON or a non-object is the same error on every path.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn tag_later_missing_repeated_or_unknown_agree() {
    let ok = |event: &str| all_ways(&delta_line(event)).unwrap();
    for (event, reason) in [
        // Tag later, a body that does not fit: the error names the tag, as when it comes first.
        (
            r#"{"index":0,"delta":{"text":7,"type":"text_delta"},"type":"content_block_delta"}"#,
            "type `content_block_delta`: type `text_delta`: invalid type: integer `7`, expected a string",
        ),
        (
            r#"{"delta":{"type":"text_delta","text":"x"},"type":"content_block_delta"}"#,
            "type `content_block_delta`: missing field `index`",
        ),
        // Tag missing, or not a string.
        (
            r#"{"index":0,"delta":{"text":"x","type":5},"type":"content_block_delta"}"#,
            "type `content_block_delta`: missing string field `type`",
        ),
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":null,"text":"x"}}"#,
            "type `content_block_delta`: missing string field `type`",
        ),
    ] {
        let error = all_ways(&delta_line(event)).unwrap_err();
        assert!(error.contains(reason), "{error}\nshould say: {reason}");
        assert!(!error.contains(" at line "), "{error}");
    }
    // Repeated: the last one wins, tag first or later; a first unknown one does not count.
    let text = ok(
        r#"{"index":0,"delta":{"type":"future_delta","text":"x","type":"text_delta"},"type":"content_block_delta"}"#,
    );
    let repeated_later = ok(
        r#"{"index":0,"type":"content_block_stop","delta":{"text":"x","type":"text_delta","type":"text_delta"},"type":"content_block_delta"}"#,
    );
    assert_eq!(text, repeated_later);
    // Unknown, later: kept whole, in its order.
    let message =
        ok(r#"{"index":0,"delta":{"z":[1],"type":"future_delta"},"type":"content_block_delta"}"#);
    let (_, raw) = unknown_delta(&message);
    assert_eq!(
        raw.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["z", "type"]
    );

    // The top level: `type` later with a body that does not fit; a repeated `type`; a system
    // message with `subtype` first.
    let error = all_ways(r#"{"uuid":"u","session_id":7,"type":"keep_alive_x"}"#).unwrap();
    assert!(!error.is_known());
    for line in [
        r#"{"event":{"type":"message_stop"},"uuid":"u","session_id":7,"parent_tool_use_id":null,"type":"stream_event"}"#,
        r#"{"type":"user","type":"stream_event","event":{"type":"message_stop"},"uuid":"u","session_id":7,"parent_tool_use_id":null}"#,
    ] {
        let error = all_ways(line).unwrap_err();
        assert!(
            error.contains("stream_event") && error.contains("session_id"),
            "{error}"
        );
        assert!(!error.contains(" at line "), "{error}");
    }
    let system =
        r#"{"subtype":"status","type":"system","status":null,"uuid":"u","session_id":"s"}"#;
    assert_eq!(all_ways(system).unwrap().kind(), "system/status");
}

/// Text that is not a message is the same error whichever way it is read.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn not_a_message_or_bad_json_is_worded_once() {
    for line in [
        r#"[1,2]"#,
        r#""text""#,
        r#"{"type":7}"#,
        r#"{"subtype":"x"}"#,
    ] {
        let from_text = parse_cli_line(line).unwrap_err().to_string();
        let value: Value = serde_json::from_str(line).unwrap();
        let owned = CliMessage::from_value(value)
            .unwrap_err()
            .with_line(line)
            .to_string();
        assert_eq!(from_text, owned);
    }
    for line in [r#"{"type":"user""#, r#"{"type":"user"} x"#, "not json"] {
        let error = parse_cli_line(line).unwrap_err().to_string();
        let reason = serde_json::from_str::<Value>(line).unwrap_err().to_string();
        assert!(error.contains(&reason), "{error}\nshould say: {reason}");
        assert_eq!(error, parse_client_line(line).unwrap_err().to_string());
    }
}

/// A client's frames: from the text (its decoders only) as from a `Value`, results and errors.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn client_text_and_value_decodes_agree() {
    let extra = [
        r#"{"message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"type":"user"}"#,
        r#"{"type":"control_request","request_id":"r","request":{"subtype":"interrupt"},"type":"control_request"}"#,
        r#"{"type":"control_request","request_id":5,"request":{"subtype":"interrupt"}}"#,
        r#"{"type":"keep_alive","x":1}"#,
        r#"{"type":"bash_command","command":"ls"}"#,
        r#"{"type":["user"]}"#,
        r#"[]"#,
    ];
    let fixture = include_str!("../../../tests/fixtures/handmade/client-messages.ndjson");
    let mut read = 0;
    let lines = fixture.lines().filter_map(|l| l.strip_prefix(">> "));
    for line in lines.chain(extra) {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let from_text = parse_client_line(line).map_err(|e| e.to_string());
        let from_value =
            ClientMessage::from_value(value).map_err(|e| e.with_line(line).to_string());
        assert_eq!(from_text, from_value, "{line}");
        read += 1;
    }
    assert!(read > extra.len(), "{read}");
}
