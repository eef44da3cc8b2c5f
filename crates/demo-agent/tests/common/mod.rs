#![allow(dead_code)]

use std::time::Duration;

use bridge_demo_agent::harness::{InProcess, kind};
use bridge_demo_agent::{AgentOptions, Scenario};
use serde_json::{Value, json};

pub const T: Duration = Duration::from_secs(10);

pub fn opts() -> AgentOptions {
    AgentOptions {
        cwd: "/workspace/demo".into(),
        ..AgentOptions::default()
    }
}

pub fn start(name: &str) -> InProcess {
    InProcess::start(Scenario::builtin(name).expect("builtin"), opts())
}

/// The built-in scenario `name`, sent the prompt `text` (as [`U1`]) and run to the permission it
/// asks: the agent, the `can_use_tool` request and the frames before it.
pub fn asked(name: &str, text: &str) -> (InProcess, Value, Vec<Value>) {
    let mut a = start(name);
    a.send(&user(text, U1));
    let (req, before) = a.until(T, is("control_request/can_use_tool"));
    (a, req, before)
}

/// [`asked`], then the request answered with what `answer` makes of it and the turn run to its
/// result: the agent, the `can_use_tool` request, the `result` frame and the frames before it.
pub fn answered(
    name: &str,
    text: &str,
    answer: impl FnOnce(&Value) -> Value,
) -> (InProcess, Value, Value, Vec<Value>) {
    let (mut a, req, _) = asked(name, text);
    a.send(&answer(&req));
    let (result, after) = a.until(T, is_result);
    (a, req, result, after)
}

/// The text of a `result` frame.
pub fn result_text(result: &Value) -> &str {
    result["result"].as_str().unwrap()
}

pub fn user(text: &str, uuid: &str) -> Value {
    json!({"type": "user", "session_id": "", "message": {"role": "user", "content": text},
           "parent_tool_use_id": null, "uuid": uuid})
}

pub fn control(request_id: &str, request: Value) -> Value {
    json!({"type": "control_request", "request_id": request_id, "request": request})
}

/// Sends the control request `request` as `request_id` and waits for its response: the response
/// and the frames before it.
pub fn request(a: &mut InProcess, request_id: &str, request: Value) -> (Value, Vec<Value>) {
    a.send(&control(request_id, request));
    a.until(T, is_response_to(request_id))
}

pub fn allow(
    req: &Value,
    updated_input: Option<Value>,
    updated_permissions: Option<Value>,
) -> Value {
    let mut resp = json!({"behavior": "allow"});
    if let Some(u) = updated_input {
        resp["updatedInput"] = u;
    }
    if let Some(p) = updated_permissions {
        resp["updatedPermissions"] = p;
    }
    resp["toolUseID"] = req["request"]["tool_use_id"].clone();
    json!({"type": "control_response",
           "response": {"subtype": "success", "request_id": req["request_id"], "response": resp}})
}

pub fn deny(req: &Value, message: &str, interrupt: bool) -> Value {
    let mut resp = json!({"behavior": "deny", "message": message});
    if interrupt {
        resp["interrupt"] = json!(true);
    }
    resp["toolUseID"] = req["request"]["tool_use_id"].clone();
    json!({"type": "control_response",
           "response": {"subtype": "success", "request_id": req["request_id"], "response": resp}})
}

pub fn is(k: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| kind(v) == k
}

/// Whether any of `frames` is a permission prompt (`can_use_tool`).
pub fn prompted(frames: &[Value]) -> bool {
    frames
        .iter()
        .any(|f| kind(f) == "control_request/can_use_tool")
}

pub fn is_result(v: &Value) -> bool {
    v["type"] == "result"
}

pub fn is_response_to(id: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| v["type"] == "control_response" && v["response"]["request_id"] == id
}

/// Text of a `user` frame's first content block (tool_result content or text).
pub fn user_content_text(v: &Value) -> String {
    let c = &v["message"]["content"];
    if let Some(s) = c.as_str() {
        return s.to_owned();
    }
    let b = &c[0];
    b["content"]
        .as_str()
        .or(b["text"].as_str())
        .unwrap_or_default()
        .to_owned()
}

pub fn tool_results(frames: &[Value]) -> Vec<&Value> {
    frames
        .iter()
        .filter(|v| v["type"] == "user" && v["message"]["content"][0]["type"] == "tool_result")
        .collect()
}

/// Message uuids the tests use.
pub const U1: &str = "11111111-2222-4333-8444-555555555555";
pub const U2: &str = "22222222-2222-4333-8444-555555555555";
pub const U3: &str = "33333333-2222-4333-8444-555555555555";

pub fn deltas<'a>(frames: &'a [Value], delta_type: &str) -> Vec<&'a Value> {
    frames
        .iter()
        .filter(|f| f["type"] == "stream_event" && f["event"]["delta"]["type"] == delta_type)
        .collect()
}
