//! The console's partial-JSON repair (src/state/partial_json.rs). Properties: never panics; a
//! complete JSON document is returned as itself; prefixes cut at 32 char boundaries spread over the
//! input repair without panicking, and a repaired value is valid JSON.

use super::super::partial_json::repair;

/// One input, as libFuzzer gives it (`fuzz_targets/partial_json.rs`) and as the relay's test replays the
/// committed corpus (`crates/relay/tests/fuzz_corpus.rs`).
pub fn input(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let repaired = repair(text);
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text.trim_start()) {
        assert_eq!(
            repaired.as_ref(),
            Some(&value),
            "a complete document was changed"
        );
    }
    // 32 cuts spread over the text (every 7th char boundary made each input cost n²/7: a 4 KB
    // input was 585 repairs); the fuzzer still reaches every cut by shortening the input.
    let boundaries = text.char_indices().count();
    let step = boundaries.div_ceil(32).max(1);
    for (i, _) in text.char_indices().step_by(step) {
        if let Some(v) = repair(&text[..i]) {
            serde_json::to_string(&v).expect("a repaired value serializes");
        }
    }
}
