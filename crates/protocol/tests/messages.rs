//! Helpers (`kind`, `uuid`, `session_id`, `parent_tool_use_id`, `is_ephemeral`, `request_id`),
//! forward compatibility (unknown types, subtypes, blocks, open value sets) and typed payloads.

use bridge_protocol::{
    CliMessage, ClientMessage, ContentBlock, ContentDelta, ControlRequestBody, ControlResponseBody,
    InitializeResponse, InterruptResponse, ParseError, PermissionMode, PermissionResult,
    SessionState, StopReason, StreamEvent, SystemMessage, parse_cli_line, parse_client_line,
};
use serde_json::{Value, json};

const SID: &str = "c4410d59-18a9-4874-b397-ab8d4ad6d207";

fn cli(value: Value) -> CliMessage {
    parse_cli_line(&value.to_string()).unwrap_or_else(|err| panic!("{err}"))
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn kind_and_envelope_helpers() {
    let init = cli(
        json!({"type": "system", "subtype": "init", "cwd": "/w", "model": "m",
        "permissionMode": "default", "tools": [], "mcp_servers": [], "slash_commands": [],
        "apiKeySource": "none", "claude_code_version": "2.1.332", "output_style": "default",
        "skills": [], "plugins": [], "uuid": "u-init", "session_id": SID}),
    );
    assert_eq!(init.kind(), "system/init");
    assert_eq!(init.type_name(), "system");
    assert_eq!(init.uuid(), Some("u-init"));
    assert_eq!(init.session_id(), Some(SID));
    assert!(init.is_known() && !init.is_ephemeral());

    let delta = cli(
        json!({"type": "stream_event", "parent_tool_use_id": "toolu_parent",
        "event": {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "hi"}},
        "uuid": "u-se", "session_id": SID, "api_message_id": "msg_1"}),
    );
    assert_eq!(delta.kind(), "stream_event");
    assert_eq!(delta.parent_tool_use_id(), Some("toolu_parent"));
    assert!(delta.is_ephemeral());
    let CliMessage::StreamEvent(frame) = &delta else {
        panic!("not a stream_event")
    };
    assert_eq!(frame.event.index(), Some(2));
    assert_eq!(frame.api_message_id.as_deref(), Some("msg_1"));
    assert!(
        matches!(&frame.event, StreamEvent::ContentBlockDelta(d) if matches!(&d.delta, ContentDelta::Text(t) if t.text == "hi"))
    );

    let thinking = cli(
        json!({"type": "system", "subtype": "thinking_tokens", "estimated_tokens": 5,
        "estimated_tokens_delta": 5, "uuid": "u", "session_id": SID}),
    );
    assert!(thinking.is_ephemeral());
    let summary = cli(
        json!({"type": "system", "subtype": "post_turn_summary", "uuid": "u2", "session_id": SID}),
    );
    assert!(summary.is_known() && summary.is_ephemeral());
    assert_eq!(summary.kind(), "system/post_turn_summary");
    assert_eq!(summary.uuid(), Some("u2"));

    let request = cli(json!({"type": "control_request", "request_id": "r1",
        "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}, "tool_use_id": "toolu_1"}}));
    assert_eq!(request.kind(), "control_request/can_use_tool");
    assert_eq!(request.request_id(), Some("r1"));
    assert_eq!(request.uuid(), None);
    let CliMessage::ControlRequest(request) = request else {
        panic!()
    };
    assert_eq!(request.request_id(), "r1");
    assert!(request.request.expects_client_answer());

    let result = cli(
        json!({"type": "result", "subtype": "error_during_execution", "duration_ms": 0,
        "duration_api_ms": 0, "is_error": true, "num_turns": 0, "stop_reason": null, "total_cost_usd": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0}, "modelUsage": {}, "permission_denials": [],
        "errors": ["aborted"], "uuid": "u-res", "session_id": SID}),
    );
    assert_eq!(result.kind(), "result/error_during_execution");
    let CliMessage::Result(result) = result else {
        panic!()
    };
    assert_eq!(result.stop_reason, Some(None));
    assert_eq!(
        result.total_cost_usd.as_ref().and_then(|n| n.as_f64()),
        Some(0.0)
    );
}

/// The `result` the relay's transcript replay closes a CLI session's history with
/// (crates/relay/src/features/transcripts/parse.rs `history`): no `duration_ms`, `usage`, `modelUsage`,
/// `num_turns`, `stop_reason` or `permission_denials`. It is a known `result`, and its absent fields
/// stay absent when it is written back.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_replayed_transcript_result_without_the_turn_figures_decodes() {
    let raw = json!({"type": "result", "subtype": "success", "is_error": false, "result": "",
        "total_cost_usd": 0.259324, "session_id": SID, "uuid": "c791d243-75ca-42b8-a933-9952f7b16edd",
        "from_transcript": true});
    let message = cli(raw.clone());
    assert_eq!(message.kind(), "result/success");
    let CliMessage::Result(result) = &message else {
        panic!("{message:?}")
    };
    assert_eq!(result.duration_ms, None);
    assert_eq!(result.num_turns, None);
    assert_eq!(result.usage, None);
    assert_eq!(result.stop_reason, None);
    assert_eq!(result.extra.get("from_transcript"), Some(&json!(true)));
    assert_eq!(serde_json::to_value(&message).unwrap(), raw);

    // A transcript's own compaction boundary, as the replay passes it on (camelCase metadata).
    let boundary = json!({"type": "system", "subtype": "compact_boundary", "parentUuid": null,
        "logicalParentUuid": "5d3f0e0a-6a57-4d55-9e0c-0d6c3b1d2a02", "isSidechain": false,
        "content": "Conversation compacted", "isMeta": false, "timestamp": "2026-11-30T10:05:00.000Z",
        "uuid": "5d3f0e0a-6a57-4d55-9e0c-0d6c3b1d2a03", "level": "info",
        "compactMetadata": {"trigger": "manual", "preTokens": 41234}, "session_id": SID});
    let message = cli(boundary.clone());
    assert_eq!(message.kind(), "system/compact_boundary");
    assert_eq!(serde_json::to_value(&message).unwrap(), boundary);

    // The frame that follows it in the replay.
    let idle = json!({"type": "system", "subtype": "session_state_changed", "state": "idle",
        "uuid": "0b4c7a52-2a57-4a8e-9d39-5b0f3a0b8f11", "session_id": SID, "from_transcript": true});
    let message = cli(idle.clone());
    assert_eq!(message.kind(), "system/session_state_changed");
    assert_eq!(serde_json::to_value(&message).unwrap(), idle);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn unknown_types_and_subtypes_keep_their_raw_json() {
    let raw = json!({"type": "hologram", "subtype": "beam", "uuid": "u9", "session_id": SID, "x": [1, 2]});
    let message = cli(raw.clone());
    assert!(!message.is_known());
    assert_eq!(message.kind(), "hologram/beam");
    assert_eq!(message.uuid(), Some("u9"));
    assert_eq!(message, CliMessage::Unknown(raw.clone()));
    assert_eq!(serde_json::to_value(&message).unwrap(), raw);

    let raw = json!({"type": "system", "subtype": "brand_new", "uuid": "u", "session_id": SID});
    let message = cli(raw.clone());
    assert_eq!(message, CliMessage::Unknown(raw));
    assert_eq!(message.kind(), "system/brand_new");

    let raw = json!({"type": "control_request", "request_id": "r", "request": {"subtype": "beam_me_up", "x": 1}});
    let message = cli(raw.clone());
    assert!(
        message.is_known(),
        "an unmodelled control subtype keeps the typed envelope"
    );
    assert_eq!(message.kind(), "control_request/beam_me_up");
    let CliMessage::ControlRequest(request) = &message else {
        panic!()
    };
    assert!(matches!(&request.request, ControlRequestBody::Other(body) if body["x"] == 1));
    assert_eq!(serde_json::to_value(&message).unwrap(), raw);

    let client = parse_client_line(r#"{"type":"bash_command","command":"ls"}"#).unwrap();
    assert!(!client.is_known());
    assert_eq!(client.kind(), "bash_command");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn unknown_blocks_stay_inside_a_known_message() {
    let message = cli(
        json!({"type": "assistant", "parent_tool_use_id": null, "uuid": "u", "session_id": SID,
        "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "hologram", "data": 1}], "stop_reason": "brand_new_reason",
            "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 2}}}),
    );
    let CliMessage::Assistant(assistant) = message else {
        panic!()
    };
    assert!(
        matches!(&assistant.message.content[0], ContentBlock::Unknown(raw) if raw["data"] == 1)
    );
    assert_eq!(assistant.message.content[0].block_type(), "hologram");
    assert_eq!(
        assistant.message.stop_reason,
        Some(StopReason::Other("brand_new_reason".into()))
    );
    assert_eq!(assistant.message.extra["type"], "message");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn open_value_sets_round_trip_verbatim() {
    for mode in PermissionMode::KNOWN {
        let parsed: PermissionMode = serde_json::from_value(json!(mode)).unwrap();
        assert!(parsed.is_known());
        assert_eq!(serde_json::to_value(&parsed).unwrap(), json!(mode));
    }
    let manual: PermissionMode = serde_json::from_value(json!("manual")).unwrap();
    assert_eq!(manual, PermissionMode::Other("manual".into()));
    assert_eq!(serde_json::to_value(&manual).unwrap(), json!("manual"));
    assert_eq!(manual.normalized(), PermissionMode::Default);
    assert_eq!(PermissionMode::AcceptEdits.to_string(), "acceptEdits");
    assert_eq!(SessionState::from("ended"), SessionState::Ended);
    assert_eq!(StopReason::from("tool_use").as_str(), "tool_use");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn absent_and_null_are_distinguished() {
    let with_null = json!({"type": "control_request", "request_id": "r",
        "request": {"subtype": "set_model", "model": null}});
    let absent =
        json!({"type": "control_request", "request_id": "r", "request": {"subtype": "set_model"}});
    let a = parse_client_line(&with_null.to_string()).unwrap();
    let b = parse_client_line(&absent.to_string()).unwrap();
    assert_ne!(a, b);
    assert_eq!(serde_json::to_value(&a).unwrap(), with_null);
    assert_eq!(serde_json::to_value(&b).unwrap(), absent);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn typed_payloads_of_control_responses() {
    let capture =
        include_str!("../../../tests/fixtures/real-cli-2.1.332/live-capture-autoallowed.ndjson");
    let init_line = capture
        .lines()
        .find(|line| line.starts_with("<< ") && line.contains("\"req_1_init\""))
        .expect("the capture has the initialize answer");
    let CliMessage::ControlResponse(response) = parse_cli_line(&init_line[3..]).unwrap() else {
        panic!()
    };
    assert_eq!(response.request_id(), Some("req_1_init"));
    let ControlResponseBody::Success(success) = &response.response else {
        panic!()
    };
    let init: InitializeResponse = success.payload().unwrap();
    assert!(!init.models.is_empty() && !init.commands.is_empty());
    assert_eq!(init.current_permission_mode, Some(PermissionMode::Default));
    assert_eq!(init.session_state, Some(SessionState::Idle));
    assert!(success.permission_result().is_none());

    let interrupt = cli(json!({"type": "control_response",
        "response": {"subtype": "success", "request_id": "i", "response": {"still_queued": ["a"]}}}));
    let CliMessage::ControlResponse(interrupt) = interrupt else {
        panic!()
    };
    let ControlResponseBody::Success(success) = interrupt.response else {
        panic!()
    };
    assert_eq!(
        success.payload::<InterruptResponse>().unwrap().still_queued,
        vec!["a".to_owned()]
    );

    let echo = cli(
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "c",
        "response": {"behavior": "deny", "message": "no", "interrupt": true, "toolUseID": "toolu_1"}}}),
    );
    let CliMessage::ControlResponse(echo) = echo else {
        panic!()
    };
    let ControlResponseBody::Success(success) = echo.response else {
        panic!()
    };
    let Some(Ok(PermissionResult::Deny(deny))) = success.permission_result() else {
        panic!()
    };
    assert_eq!((deny.message.as_str(), deny.interrupt), ("no", Some(true)));
    assert_eq!(PermissionResult::Deny(deny).tool_use_id(), Some("toolu_1"));

    let bad = cli(
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "c",
        "response": {"behavior": "allow", "updatedPermissions": [{"type": "setMode", "destination": "session"}]}}}),
    );
    let CliMessage::ControlResponse(bad) = bad else {
        panic!()
    };
    let ControlResponseBody::Success(success) = bad.response else {
        panic!()
    };
    let err = success
        .permission_result()
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `mode`"), "{err}");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn parse_errors_say_what_and_where() {
    let err = parse_cli_line(r#"{"type":"system","subtype":"init","uuid":"u","session_id":"s"}"#)
        .unwrap_err();
    assert_eq!(err.kind(), Some("system"));
    assert!(matches!(err, ParseError::InvalidBody { .. }));
    let text = err.to_string();
    assert!(
        text.contains("subtype `init`") && text.contains("missing field `cwd`"),
        "{text}"
    );
    assert!(text.contains(r#"(line: {"type":"system""#), "{text}");

    let long = format!(r#"{{"type":"assistant","junk":"{}""#, "x".repeat(500));
    let err = parse_cli_line(&long).unwrap_err();
    assert!(matches!(err, ParseError::InvalidJson { .. }));
    assert!(
        err.line_excerpt().chars().count() <= 161,
        "excerpt is bounded"
    );

    let err = CliMessage::from_value(json!([1])).unwrap_err();
    assert_eq!(
        err,
        ParseError::NotAMessage {
            line: String::new()
        }
    );
    let via_serde = serde_json::from_str::<CliMessage>(r#"{"type":"user"}"#).unwrap_err();
    assert!(
        via_serde.to_string().contains("missing field `message`"),
        "{via_serde}"
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn user_messages_from_the_cli() {
    let replay = cli(
        json!({"type": "user", "message": {"role": "user", "content": "Run echo hello"},
        "session_id": SID, "parent_tool_use_id": null, "uuid": "11111111-2222-4333-8444-555555555555",
        "timestamp": "2026-11-30T03:56:23.573Z", "isReplay": true}),
    );
    let CliMessage::User(replay) = replay else {
        panic!()
    };
    assert!(replay.is_replay() && !replay.is_synthetic());
    assert_eq!(replay.message.content.text(), "Run echo hello");

    let result = cli(
        json!({"type": "user", "parent_tool_use_id": null, "session_id": SID, "uuid": "u",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "is_error": true}]},
        "tool_use_result": "Error: a", "tool_result_meta": [{"id": "toolu_1",
            "permission_decision": {"decision": "reject", "source": "user_reject"}}]}),
    );
    let CliMessage::User(result) = result else {
        panic!()
    };
    let ContentBlock::ToolResult(block) = &result.message.content.blocks()[0] else {
        panic!()
    };
    assert!(block.is_error());
    assert_eq!(block.text(), "a\nb");
    assert_eq!(result.tool_use_result, Some(json!("Error: a")));
    let meta = &result.tool_result_meta.as_ref().unwrap()[0];
    assert_eq!(
        meta.permission_decision.as_ref().unwrap().decision,
        "reject"
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn abandoned_blocks_and_session_end() {
    let stop = cli(
        json!({"type": "stream_event", "event": {"type": "message_stop"}, "parent_tool_use_id": null,
        "uuid": "u", "session_id": SID, "abandoned_blocks": {"api_message_id": "msg_1", "from_block_index": 1}}),
    );
    let CliMessage::StreamEvent(stop) = stop else {
        panic!()
    };
    assert_eq!(
        stop.abandoned_blocks
            .as_ref()
            .map(|blocks| blocks.from_block_index),
        Some(1)
    );

    let ended = cli(
        json!({"type": "system", "subtype": "session_state_changed", "state": "ended",
        "exit_code": 1, "signal": null, "stderr_tail": "boom", "uuid": "u", "session_id": SID}),
    );
    let CliMessage::System(SystemMessage::SessionStateChanged(ended)) = ended else {
        panic!()
    };
    assert_eq!(ended.state, SessionState::Ended);
    assert_eq!(ended.extra["exit_code"], 1);
    assert_eq!(ended.extra["signal"], Value::Null);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn client_messages_helpers() {
    let user = parse_client_line(r#"{"type":"user","session_id":"","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"uuid":"abc"}"#).unwrap();
    assert_eq!((user.kind().as_str(), user.uuid()), ("user", Some("abc")));
    let env = parse_client_line(
        r#"{"type":"update_environment_variables","variables":{"A":"1"},"request_id":"env_1"}"#,
    )
    .unwrap();
    assert_eq!(env.request_id(), Some("env_1"));
    let ClientMessage::UpdateEnvironmentVariables(env) = env else {
        panic!()
    };
    assert_eq!(env.variables["A"], "1");
    let interrupt = parse_client_line(
        r#"{"type":"control_request","request_id":"r","request":{"subtype":"interrupt"}}"#,
    )
    .unwrap();
    assert_eq!(interrupt.kind(), "control_request/interrupt");
    let ClientMessage::ControlRequest(interrupt) = interrupt else {
        panic!()
    };
    assert!(!interrupt.request.expects_client_answer());
}
