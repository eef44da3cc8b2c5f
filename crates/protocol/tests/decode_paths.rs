//! The three ways into a `CliMessage` agree on every corpus line: from the text
//! (`parse_cli_line`, no intermediate `Value` for a known type), from an owned `Value` and from a
//! borrowed one (`from_value_ref`, what the console uses while keeping the raw frame). Unknown
//! fields land in `extra` either way, so each writes back the line it was read from.

use bridge_protocol::{CliMessage, parse_cli_line};
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
