//! The envelope decoder (crates/transport/src/envelope.rs): `/ws?envelope=1` text frames and the
//! REST event list's envelopes, then the typed decoding of durable payloads. Nothing may panic; a
//! durable frame always has a sequence number above 0.

use bridge_transport::envelope::{Frame, decode_envelope, decode_sse, decode_ws};
use bridge_transport::sse::SseEvent;

/// One input, as libFuzzer gives it (`fuzz_targets/envelope.rs`) and as the relay's test replays the
/// committed corpus (`crates/relay/tests/fuzz_corpus.rs`).
pub fn input(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(Frame::Durable(d)) = decode_ws(text) {
        assert!(d.seq > 0);
        let _ = d.decode();
    }
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text)
        && let Ok(d) = decode_envelope(value)
    {
        assert!(d.seq > 0);
        let _ = d.decode();
    }
    // The same text as the data of each SSE event kind.
    for event in [
        "client_event",
        "ephemeral_event",
        "message",
        "delivery",
        "error",
    ] {
        let _ = decode_sse(&SseEvent {
            id: text.lines().next().map(str::to_owned),
            event: event.to_owned(),
            data: text.to_owned(),
        });
    }
}
