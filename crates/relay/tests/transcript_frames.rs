//! The frames the relay's transcript replay serves (a CLI session's JSONL history) are read by the
//! console through bridge-protocol's typed decode: every one of them must decode as a known message
//! (a `result` without `duration_ms` included), or the console shows it raw and waits on the turn.

use bridge_protocol::CliMessage;
use bridge_relay::features::transcripts::parse::history;
use serde_json::Value;

fn fixture(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/../../tests/fixtures/transcripts/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a transcript line is JSON"))
        .collect()
}

#[test]
fn every_replayed_frame_decodes_typed() {
    let dir = format!(
        "{}/../../tests/fixtures/transcripts",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the transcripts fixture directory")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    assert!(!names.is_empty());
    let mut failures = Vec::new();
    for name in &names {
        let frames = history(&fixture(name), None);
        assert_eq!(
            frames.iter().filter(|f| f["type"] == "result").count(),
            1,
            "{name}: the replay closes the turn with one result"
        );
        for frame in frames {
            let kind = frame["type"].as_str().unwrap_or("?").to_owned();
            match CliMessage::from_value(frame.clone()) {
                Ok(CliMessage::Unknown(_)) if kind != "system" => {}
                Ok(m) => {
                    // The typed message serializes back to the frame as it was replayed.
                    let back = serde_json::to_value(&m).expect("serializes");
                    if back != frame {
                        failures.push(format!(
                            "{name}: {kind} does not round-trip:\n{frame}\n{back}"
                        ));
                    }
                }
                Err(e) => failures.push(format!("{name}: {kind}: {e}\n{frame}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Lines a longer history has that the fixture does not: a compaction boundary (camelCase
/// `compactMetadata`) and an assistant API error.
#[test]
fn a_compacted_history_decodes_typed() {
    let sid = "27784601-dc95-46a5-9f01-072efd77a9f0";
    let lines: Vec<Value> = [
        serde_json::json!({"parentUuid": null, "isSidechain": false, "type": "user", "sessionId": sid,
            "uuid": "a1", "timestamp": "2026-11-30T10:00:00.000Z",
            "message": {"role": "user", "content": "hi"}}),
        serde_json::json!({"parentUuid": "a1", "isSidechain": false, "type": "assistant", "sessionId": sid,
            "uuid": "a2", "isApiErrorMessage": true, "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "model": "<synthetic>", "content": [{"type": "text", "text": "API Error"}],
            "stop_reason": "stop_sequence", "stop_sequence": "", "usage": {"input_tokens": 0, "output_tokens": 0}}}),
        serde_json::json!({"parentUuid": null, "logicalParentUuid": "a2", "isSidechain": false,
            "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
            "isMeta": false, "sessionId": sid, "uuid": "a3", "level": "info",
            "compactMetadata": {"trigger": "manual", "preTokens": 41234}}),
    ]
    .into();
    let frames = history(&lines, None);
    assert!(frames.iter().any(|f| f["subtype"] == "compact_boundary"));
    for frame in frames {
        let message =
            CliMessage::from_value(frame.clone()).unwrap_or_else(|e| panic!("{e}\n{frame}"));
        assert!(message.is_known(), "{frame}");
        assert_eq!(serde_json::to_value(&message).unwrap(), frame);
    }
}
