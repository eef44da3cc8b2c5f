//! Every line the demo agent writes parses with `bridge_protocol::parse_cli_line` as a known message
//! (no `Unknown` anywhere inside) and re-serializes to the same JSON.

use std::time::Duration;

use crate::common::*;
use bridge_demo_agent::harness::{InProcess, kind};
use bridge_demo_agent::{AgentOptions, BUILTIN_NAMES, Scenario};
use serde_json::{Value, json};

#[test]
fn every_emitted_line_is_a_known_protocol_message() {
    let mut total = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for name in BUILTIN_NAMES {
        let lines = drive(name);
        assert!(!lines.is_empty(), "{name}: no output");
        for line in &lines {
            let msg = bridge_protocol::parse_cli_line(line)
                .unwrap_or_else(|e| panic!("{name}: does not parse: {e}\n{}", truncate(line)));
            assert!(
                msg.is_known(),
                "{name}: unknown message: {}",
                truncate(line)
            );
            let debug = format!("{msg:?}");
            assert!(
                !debug.contains("Unknown(") && !debug.contains("Internal("),
                "{name}: part of the frame was not recognised: {}\n{}",
                truncate(line),
                truncate(&debug)
            );
            let original: Value = serde_json::from_str(line).unwrap();
            assert_eq!(
                serde_json::to_value(&msg).unwrap(),
                original,
                "{name}: re-serialization differs: {}",
                truncate(line)
            );
            kinds.insert(msg.kind());
        }
        total += lines.len();
    }
    // the run really covered the protocol
    for k in [
        "control_response",
        "command_lifecycle",
        "system/init",
        "system/status",
        "system/thinking_tokens",
        "stream_event",
        "assistant",
        "user",
        "control_request/can_use_tool",
        "control_request/elicitation",
        "control_cancel_request",
    ] {
        assert!(
            kinds
                .iter()
                .any(|x| x == k || x.starts_with(&format!("{k}/"))),
            "never emitted {k}; kinds: {kinds:?}"
        );
    }
    assert!(kinds.iter().any(|k| k.starts_with("result")), "{kinds:?}");
    assert!(total > 500);
}

/// Accepts an `elicitation` form with an empty content.
fn accept_form(req: &Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": req["request_id"], "response": {"action": "accept", "content": {}}}})
}

fn truncate(s: &str) -> String {
    s.chars().take(600).collect()
}

/// Drives `scenario` through the interesting paths and returns every stdout line.
fn drive(scenario: &str) -> Vec<String> {
    let opts = AgentOptions {
        speed: if scenario == "long" { 0.01 } else { 0.0 },
        ..opts()
    };
    let mut a = InProcess::start(Scenario::builtin(scenario).unwrap(), opts);
    script(&mut a, scenario);
    a.close_stdin();
    while a.next(Duration::from_secs(60)).is_some() {}
    a.lines.clone()
}

fn script(a: &mut InProcess, scenario: &str) {
    a.send(&control(
        "i",
        json!({"subtype": "initialize", "hooks": null}),
    ));
    a.send(&json!({"type": "update_environment_variables", "variables": {"A": "1"}, "request_id": "env"}));
    a.send(&control(
        "m",
        json!({"subtype": "set_model", "model": "haiku"}),
    ));
    a.send(&control(
        "p",
        json!({"subtype": "set_permission_mode", "mode": "plan"}),
    ));
    a.send(&control("x", json!({"subtype": "no_such_subtype"})));
    a.send(&control(
        "t",
        json!({"subtype": "set_max_thinking_tokens", "max_thinking_tokens": 1000}),
    ));
    request(a, "s", json!({"subtype": "mcp_status"}));
    // turn 1: allow everything (edited input; a session rule and a mode change on the first prompt)
    a.send(&user("first", "11111111-2222-4333-8444-555555555555"));
    let mut first = true;
    loop {
        let Some(f) = next_of(a, |f| {
            is_result(f) || kind(f).starts_with("control_request/")
        }) else {
            return; // crash: the agent is gone
        };
        if is_result(&f) {
            break;
        }
        if kind(&f) == "control_request/elicitation" {
            a.send(&accept_form(&f));
            continue;
        }
        let mut input = f["request"]["input"].clone();
        input["answers"] = json!({"q": "a"});
        let perms = first.then(|| {
            json!([{"type": "addRules", "rules": [{"toolName": f["request"]["tool_name"], "ruleContent": "zz-never:*"}],
                    "behavior": "allow", "destination": "session"},
                   {"type": "setMode", "mode": "default", "destination": "session"}])
        });
        first = false;
        a.send(&allow(&f, Some(input), perms));
    }
    // turn 2: deny the first prompt (allow later ones); turn 3: interrupt at the first prompt, or
    // interrupt the stream
    for (turn, uuid) in [
        (2, "22222222-2222-4333-8444-555555555555"),
        (3, "33333333-2222-4333-8444-555555555555"),
    ] {
        a.send(&user("again", uuid));
        let mut prompts = 0;
        loop {
            let Some(f) = next_of(a, |f| {
                is_result(f)
                    || kind(f).starts_with("control_request/")
                    || f["event"]["delta"]["type"] == "text_delta"
            }) else {
                return;
            };
            if is_result(&f) {
                break;
            }
            if kind(&f) == "control_request/elicitation" {
                a.send(&accept_form(&f));
                continue;
            }
            if kind(&f) == "control_request/can_use_tool" {
                prompts += 1;
                if turn == 3 {
                    a.send(&control("int", json!({"subtype": "interrupt"})));
                } else if prompts == 1 {
                    a.send(&deny(&f, "no", false));
                } else {
                    a.send(&allow(&f, None, None));
                }
            } else if scenario == "long" && turn == 3 {
                a.send(&control("int", json!({"subtype": "interrupt"})));
            }
        }
    }
}

fn next_of(a: &mut InProcess, pred: impl Fn(&Value) -> bool) -> Option<Value> {
    loop {
        let f = a.next(Duration::from_secs(60))?;
        if pred(&f) {
            return Some(f);
        }
    }
}
