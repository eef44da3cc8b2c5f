//! The builders produce exactly the JSON the CLI accepts (checked key by key, as values), and
//! their output parses back as known client messages.

use bridge_protocol::{
    ClientMessage, InitializeRequest, PermissionBehavior, PermissionMode, PermissionRuleValue,
    PermissionUpdate, PermissionUpdateDestination, Uuid, build, parse_client_line,
};
use serde_json::{Value, json};

const UUID: &str = "11111111-2222-4333-8444-555555555555";

/// Serializes, checks the line is parseable as the same known message, returns the JSON value.
fn wire(message: &ClientMessage) -> Value {
    let line = serde_json::to_string(message).expect("serializes");
    let parsed = parse_client_line(&line).expect("builder output parses");
    assert!(
        parsed.is_known(),
        "builder output is not a known message: {line}"
    );
    assert_eq!(
        &parsed, message,
        "builder output does not round-trip: {line}"
    );
    serde_json::from_str(&line).expect("JSON")
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn user_text_has_null_parent_and_empty_session() {
    let uuid = Uuid::parse_str(UUID).unwrap();
    let message = build::user_text("Run echo hello", uuid);
    assert_eq!(
        wire(&message),
        json!({
            "type": "user",
            "message": {"role": "user", "content": "Run echo hello"},
            "parent_tool_use_id": null,
            "uuid": UUID,
            "session_id": ""
        })
    );
    assert_eq!(message.uuid(), Some(UUID));
    let line = serde_json::to_string(&message).unwrap();
    assert!(
        line.starts_with(r#"{"type":"user","#),
        "type comes first: {line}"
    );
    assert!(line.contains(r#""parent_tool_use_id":null"#), "{line}");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn user_blocks_carry_the_blocks() {
    let uuid = Uuid::parse_str(UUID).unwrap();
    let blocks = vec![
        bridge_protocol::ContentBlock::Text(bridge_protocol::TextBlock::new("look")),
        bridge_protocol::ContentBlock::from_value(json!({
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
        }))
        .unwrap(),
    ];
    assert_eq!(
        wire(&build::user_blocks(blocks, uuid)),
        json!({
            "type": "user",
            "message": {"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
            ]},
            "parent_tool_use_id": null,
            "uuid": UUID,
            "session_id": ""
        })
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn control_requests_carry_the_request_id() {
    assert_eq!(
        wire(&build::initialize("req_1_init")),
        json!({"type": "control_request", "request_id": "req_1_init",
               "request": {"subtype": "initialize", "hooks": null}})
    );
    assert_eq!(
        wire(&build::interrupt("req_4_int")),
        json!({"type": "control_request", "request_id": "req_4_int", "request": {"subtype": "interrupt"}})
    );
    assert_eq!(
        wire(&build::get_context_usage("ctx1")),
        json!({"type": "control_request", "request_id": "ctx1", "request": {"subtype": "get_context_usage"}})
    );
    assert_eq!(
        wire(&build::mcp_status("mcp1")),
        json!({"type": "control_request", "request_id": "mcp1", "request": {"subtype": "mcp_status"}})
    );
    assert_eq!(
        wire(&build::set_model("r1", Some("claude-opus-5-5"))),
        json!({"type": "control_request", "request_id": "r1",
               "request": {"subtype": "set_model", "model": "claude-opus-5-5"}})
    );
    assert_eq!(
        wire(&build::set_model("r2", None)),
        json!({"type": "control_request", "request_id": "r2", "request": {"subtype": "set_model", "model": null}})
    );
    assert_eq!(
        wire(&build::set_permission_mode(
            "req_2_mode",
            PermissionMode::AcceptEdits
        )),
        json!({"type": "control_request", "request_id": "req_2_mode",
               "request": {"subtype": "set_permission_mode", "mode": "acceptEdits"}})
    );
    assert_eq!(
        wire(&build::set_permission_mode(
            "r3",
            PermissionMode::from("futureMode")
        )),
        json!({"type": "control_request", "request_id": "r3",
               "request": {"subtype": "set_permission_mode", "mode": "futureMode"}})
    );
    assert_eq!(
        wire(&build::set_max_thinking_tokens("r4", Some(8000))),
        json!({"type": "control_request", "request_id": "r4",
               "request": {"subtype": "set_max_thinking_tokens", "max_thinking_tokens": 8000}})
    );
    assert_eq!(
        wire(&build::rewind_files("r5", UUID, true)),
        json!({"type": "control_request", "request_id": "r5",
               "request": {"subtype": "rewind_files", "user_message_id": UUID, "dry_run": true}})
    );
    let options = InitializeRequest {
        supported_dialog_kinds: Some(vec!["confirm_plan".into()]),
        prompt_suggestions: Some(true),
        ..Default::default()
    };
    assert_eq!(
        wire(&build::initialize_with("r6", options)),
        json!({"type": "control_request", "request_id": "r6", "request": {
            "subtype": "initialize", "promptSuggestions": true, "supportedDialogKinds": ["confirm_plan"]}})
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn allow_always_carries_updated_input_and_tool_use_id() {
    let input = json!({"command": "touch created_by_host.txt", "description": "Run it"});
    assert_eq!(
        wire(&build::allow(
            "c16f",
            Some("toolu_3b55"),
            input.clone(),
            vec![]
        )),
        json!({"type": "control_response", "response": {
            "subtype": "success", "request_id": "c16f",
            "response": {"behavior": "allow", "updatedInput": input, "toolUseID": "toolu_3b55"}}})
    );
    // An empty input object is still sent.
    assert_eq!(
        wire(&build::allow("c17", None, json!({}), vec![])),
        json!({"type": "control_response", "response": {
            "subtype": "success", "request_id": "c17",
            "response": {"behavior": "allow", "updatedInput": {}}}})
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn allow_with_every_permission_update_omits_null_rule_content() {
    use PermissionUpdateDestination as D;
    let updates = vec![
        PermissionUpdate::add_rules(
            vec![PermissionRuleValue::tool("Write")],
            PermissionBehavior::Allow,
            D::Session,
        ),
        PermissionUpdate::replace_rules(
            vec![PermissionRuleValue::with_content("Bash", "npm test:*")],
            PermissionBehavior::Ask,
            D::ProjectSettings,
        ),
        PermissionUpdate::remove_rules(
            vec![PermissionRuleValue::with_content("Bash", "rm:*")],
            PermissionBehavior::Deny,
            D::UserSettings,
        ),
        PermissionUpdate::set_mode(PermissionMode::AcceptEdits, D::LocalSettings),
        PermissionUpdate::add_directories(vec!["/tmp/x".into()], D::CliArg),
        PermissionUpdate::remove_directories(vec!["/tmp/y".into()], D::Session),
    ];
    assert_eq!(
        wire(&build::allow(
            "r",
            Some("toolu_1"),
            json!({"file_path": "/w/a"}),
            updates
        )),
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "r", "response": {
            "behavior": "allow",
            "updatedInput": {"file_path": "/w/a"},
            "updatedPermissions": [
                {"type": "addRules", "rules": [{"toolName": "Write"}], "behavior": "allow", "destination": "session"},
                {"type": "replaceRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}], "behavior": "ask", "destination": "projectSettings"},
                {"type": "removeRules", "rules": [{"toolName": "Bash", "ruleContent": "rm:*"}], "behavior": "deny", "destination": "userSettings"},
                {"type": "setMode", "mode": "acceptEdits", "destination": "localSettings"},
                {"type": "addDirectories", "directories": ["/tmp/x"], "destination": "cliArg"},
                {"type": "removeDirectories", "directories": ["/tmp/y"], "destination": "session"}
            ],
            "toolUseID": "toolu_1"
        }}})
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn deny_carries_message_and_interrupt_only_when_set() {
    assert_eq!(
        wire(&build::deny(
            "2f13",
            Some("toolu_f592"),
            "User said no",
            false
        )),
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "2f13",
            "response": {"behavior": "deny", "message": "User said no", "toolUseID": "toolu_f592"}}})
    );
    assert_eq!(
        wire(&build::deny("2f14", None, "Stop", true)),
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "2f14",
            "response": {"behavior": "deny", "message": "Stop", "interrupt": true}}})
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn other_client_frames() {
    assert_eq!(
        wire(&build::success("ack", None)),
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "ack"}})
    );
    assert_eq!(
        wire(&build::success(
            "mcp",
            Some(json!({"mcp_response": {"jsonrpc": "2.0", "result": {}, "id": 0}}))
        )),
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "mcp",
            "response": {"mcp_response": {"jsonrpc": "2.0", "result": {}, "id": 0}}}})
    );
    assert_eq!(
        wire(&build::error("h1", "no handler")),
        json!({"type": "control_response", "response": {"subtype": "error", "request_id": "h1", "error": "no handler"}})
    );
    assert_eq!(
        wire(&build::cancel("r9")),
        json!({"type": "control_cancel_request", "request_id": "r9"})
    );
    assert_eq!(wire(&build::keep_alive()), json!({"type": "keep_alive"}));
    assert_eq!(
        wire(&build::update_environment_variables(
            [("CLAUDE_CODE_OAUTH_TOKEN".to_owned(), "t".to_owned())],
            Some("env_1")
        )),
        json!({"type": "update_environment_variables",
               "variables": {"CLAUDE_CODE_OAUTH_TOKEN": "t"}, "request_id": "env_1"})
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn request_ids_are_fresh_uuids() {
    let first = build::new_request_id();
    let second = build::new_request_id();
    assert_ne!(first, second);
    assert!(Uuid::parse_str(&first).is_ok(), "{first}");
}

/// `build::value::x(..)` is exactly `build::x(..)` serialized (same keys, same order).
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn value_builders_equal_the_typed_ones() {
    use build::value as v;
    let uuid = Uuid::parse_str(UUID).unwrap();
    let rule = PermissionUpdate::AddRules(bridge_protocol::RulesUpdate {
        rules: vec![PermissionRuleValue {
            tool_name: "Bash".into(),
            rule_content: Some("echo:*".into()),
            extra: Default::default(),
        }],
        behavior: PermissionBehavior::Allow,
        destination: PermissionUpdateDestination::Session,
        extra: Default::default(),
    });
    let input = json!({"command": "echo hi", "description": "x"});
    let pairs: Vec<(Value, ClientMessage)> = vec![
        (
            v::user_text("hi <b>", uuid),
            build::user_text("hi <b>", uuid),
        ),
        (
            v::user_blocks(
                vec![
                    v::text_block("look <b>"),
                    v::image_base64("image/png", "iVBORw0KGgo="),
                ],
                uuid,
            ),
            build::user_blocks(
                vec![
                    build::text_block("look <b>"),
                    build::image_base64("image/png", "iVBORw0KGgo="),
                ],
                uuid,
            ),
        ),
        (v::initialize("r0"), build::initialize("r0")),
        (v::interrupt("r1"), build::interrupt("r1")),
        (v::get_context_usage("c1"), build::get_context_usage("c1")),
        (v::mcp_status("m1"), build::mcp_status("m1")),
        (
            v::set_model("r2", Some("opus")),
            build::set_model("r2", Some("opus")),
        ),
        (v::set_model("r3", None), build::set_model("r3", None)),
        (
            v::set_permission_mode("r4", PermissionMode::AcceptEdits),
            build::set_permission_mode("r4", PermissionMode::AcceptEdits),
        ),
        (
            v::set_permission_mode("r4", PermissionMode::from("brandNew")),
            build::set_permission_mode("r4", PermissionMode::from("brandNew")),
        ),
        (
            v::allow("r5", Some("toolu_1"), input.clone(), vec![]),
            build::allow("r5", Some("toolu_1"), input.clone(), vec![]),
        ),
        (
            v::allow("r6", None, input.clone(), vec![rule.clone()]),
            build::allow("r6", None, input.clone(), vec![rule]),
        ),
        (
            v::deny("r7", Some("toolu_2"), "no", true),
            build::deny("r7", Some("toolu_2"), "no", true),
        ),
        (
            v::deny("r8", None, "no", false),
            build::deny("r8", None, "no", false),
        ),
        (
            v::success("r9", Some(json!({"a": 1}))),
            build::success("r9", Some(json!({"a": 1}))),
        ),
        (v::success("r10", None), build::success("r10", None)),
        (v::error("r11", "bad"), build::error("r11", "bad")),
        (v::cancel("r12"), build::cancel("r12")),
        (v::keep_alive(), build::keep_alive()),
    ];
    for (value, typed) in pairs {
        let typed_line = serde_json::to_string(&typed).unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), typed_line);
        assert_eq!(wire(&typed), value, "{typed_line}");
    }
}

/// An image prompt is what the Messages API takes: base64 source with its media type, text beside it.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn an_image_prompt_has_the_documented_shape() {
    let uuid = Uuid::parse_str(UUID).unwrap();
    let msg = build::value::user_blocks(
        vec![
            build::value::image_base64("image/webp", "UklGRg=="),
            build::value::text_block("what is this?"),
        ],
        uuid,
    );
    assert_eq!(
        msg,
        json!({
            "type": "user",
            "message": {"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "UklGRg=="}},
                {"type": "text", "text": "what is this?"}
            ]},
            "parent_tool_use_id": null,
            "uuid": UUID,
            "session_id": ""
        })
    );
    // And it reads back as a typed client message.
    let typed: ClientMessage = serde_json::from_value(msg.clone()).unwrap();
    assert_eq!(serde_json::to_value(typed).unwrap(), msg);
}
