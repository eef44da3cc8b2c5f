//! The console's partial-JSON repair (src/state/partial_json.rs). Properties: never panics; a
//! complete JSON document is returned as itself; every prefix (cut at a char boundary the fuzzer
//! picks, and every 7th boundary) repairs without panicking, and a repaired value is valid JSON.
#![no_main]

use bridge_fuzz::partial_json::repair;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
    for (i, _) in text.char_indices().step_by(7) {
        if let Some(v) = repair(&text[..i]) {
            serde_json::to_string(&v).expect("a repaired value serializes");
        }
    }
});
