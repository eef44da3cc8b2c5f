//! The decode benchmarks' corpus, built once for both of them: the protocol's criterion bench
//! (`benches/decode.rs`, native) and the console's browser bench (`tests/bench.rs`, wasm). Only
//! compiled with the `bench-corpus` feature (it embeds the real CLI captures).

/// The real CLI 2.1.332 captures the corpus is made of (tests/fixtures/real-cli-2.1.332).
pub const CAPTURES: &[&str] = &[
    include_str!("../../../tests/fixtures/real-cli-2.1.332/live-capture-autoallowed.ndjson"),
    include_str!("../../../tests/fixtures/real-cli-2.1.332/live-capture-deny-interrupt.ndjson"),
    include_str!(
        "../../../tests/fixtures/real-cli-2.1.332/live-capture-allow-updatedInput-replay.ndjson"
    ),
];

/// Handmade lines covering every message type (tests/fixtures/handmade).
pub const HANDMADE: &str = include_str!("../../../tests/fixtures/handmade/cli-messages.ndjson");

/// The stdout lines (`<< ` in a capture) of the real captures.
pub fn captured_lines() -> Vec<String> {
    CAPTURES
        .iter()
        .flat_map(|capture| capture.lines())
        .filter_map(|line| line.strip_prefix("<< "))
        .map(str::to_owned)
        .collect()
}

/// What the CLI writes in a real session: the captures' stdout lines and four times as many
/// streamed `text_delta`s (the bulk of a turn's frames).
pub fn mix() -> Vec<String> {
    let mut lines = captured_lines();
    let words = [
        "The ",
        "answer ",
        "is ",
        "in ",
        "`src/lib.rs`",
        ", line ",
        "42",
        ".\n",
    ];
    for i in 0..lines.len() * 4 {
        lines.push(
            serde_json::json!({"type": "stream_event", "event": {"type": "content_block_delta", "index": 1,
                "delta": {"type": "text_delta", "text": words[i % words.len()]}},
                "session_id": "5b0a2a4e-6b7e-4c43-9d3f-1f2e3d4c5b6a", "parent_tool_use_id": null,
                "uuid": format!("7d1c9c36-2f0e-4d6b-8a51-{i:012}"), "api_message_id": "msg_01XyZ"})
            .to_string(),
        );
    }
    lines
}

/// Every CLI-direction line of the captures and the handmade file (`#` comments and client lines
/// left out).
pub fn corpus() -> Vec<String> {
    CAPTURES
        .iter()
        .chain([&HANDMADE])
        .flat_map(|text| text.lines())
        .filter(|line| {
            !line.starts_with('#') && !line.starts_with(">> ") && !line.trim().is_empty()
        })
        .map(|line| line.strip_prefix("<< ").unwrap_or(line).to_owned())
        .collect()
}
