//! Answering the demo agent's permission prompts: shared by the native tests (through
//! [`super`]) and the browser test (`web.rs`, which includes this file alone).

use serde_json::Value;

/// When `v` is a `can_use_tool` request: the answer allowing it with its input unchanged, as the
/// JSON to send.
pub fn allow_if_asked(v: &Value) -> Option<Value> {
    if v["type"] != "control_request" || v["request"]["subtype"] != "can_use_tool" {
        return None;
    }
    let allow = bridge_protocol::build::allow(
        v["request_id"].as_str().unwrap(),
        v["request"]["tool_use_id"].as_str(),
        v["request"]["input"].clone(),
        vec![],
    );
    Some(serde_json::to_value(allow).unwrap())
}
