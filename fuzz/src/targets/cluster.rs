//! What a relay reads from NATS (crates/relay/src/cluster/{wire,seal}.rs): a log message (one event
//! or a batch), a live frame, a sealed KV value, a message seal and an encrypted value. Nothing may
//! panic; no input may verify without the cluster's key; every event or live frame that decodes is
//! one line of JSON, so the SSE frame made of it is exactly its `id:`, `event:` and `data:` lines.

use async_nats::HeaderMap;
use bridge_relay::cluster::seal::Keys;
use bridge_relay::cluster::wire;
use bridge_relay::core::frames::Frame;

fn keys() -> &'static Keys {
    static K: std::sync::OnceLock<Keys> = std::sync::OnceLock::new();
    K.get_or_init(|| Keys::derive(b"the fuzz target's cluster secret 0123456789"))
}

/// The SSE frame of `f` is its fields and one blank line, nothing else.
fn one_sse_event(f: &Frame) {
    let text = std::str::from_utf8(&f.sse).expect("SSE is UTF-8");
    assert!(!text.contains('\r'), "{text:?}");
    let body = text
        .strip_suffix("\n\n")
        .expect("an SSE event ends with a blank line");
    for line in body.split('\n') {
        assert!(
            line.starts_with("id: ") || line.starts_with("event: ") || line.starts_with("data: "),
            "{line:?} in {text:?}"
        );
    }
    assert_eq!(body.matches("data: ").count(), 1, "{text:?}");
}

/// One input, as libFuzzer gives it (`fuzz_targets/cluster.rs`) and as the relay's test replays the
/// committed corpus (`crates/relay/tests/fuzz_corpus.rs`).
pub fn input(data: &[u8]) {
    if let Some(events) = wire::decode_events("cse_fuzz", data) {
        for (ev, _) in events {
            assert!(wire::one_line_json(ev.payload.as_bytes()));
            one_sse_event(&Frame::durable(&ev));
        }
    }
    if let Some(f) = wire::decode_live(data) {
        one_sse_event(&f);
    }
    let k = keys();
    assert!(k.open_value("bridge_credentials", "lgn.x", data).is_none());
    assert!(k.decrypt("bridge_push_keys", "vapid", data).is_none());
    // The input as a message's seal headers (one per line) and body (after a blank line).
    let text = String::from_utf8_lossy(data);
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut headers = HeaderMap::new();
    for line in head.lines() {
        if let Some((name, value)) = line.split_once(':')
            && !name.trim().is_empty()
            && name.bytes().all(|b| b.is_ascii_graphic())
            && !value.contains(['\r', '\n'])
        {
            headers.insert(name.trim(), value.trim());
        }
    }
    for subject in ["bridge.in.cse_fuzz", "bridge.create.n1"] {
        assert!(
            k.check_request(subject, Some(&headers), body.as_bytes())
                .is_err()
        );
        assert!(
            k.check_event(subject, Some(&headers), body.as_bytes())
                .is_err()
        );
    }
}
