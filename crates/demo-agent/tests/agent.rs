//! Behaviour of the demo agent, driven in-process over channels.

use crate::common::*;
use bridge_demo_agent::harness::{InProcess, kind};
use bridge_demo_agent::{AgentOptions, Scenario, cost_usd};
use serde_json::{Value, json};

#[test]
fn default_turn_has_every_feature_in_order() {
    let mut a = start("default");
    let (init, _) = request(
        &mut a,
        "init_1",
        json!({"subtype": "initialize", "hooks": null}),
    );
    let body = &init["response"]["response"];
    assert_eq!(body["claude_code_version"], "2.1.332-demo");
    assert_eq!(body["current_permission_mode"], "default");
    let models = body["models"].as_array().unwrap();
    assert!(models.len() >= 3);
    for m in models {
        for f in ["value", "displayName", "description"] {
            assert!(
                m[f].as_str().is_some_and(|s| !s.is_empty()),
                "model lacks {f}: {m}"
            );
        }
    }
    assert!(!body["commands"].as_array().unwrap().is_empty());

    a.send(&user("Show me everything", U1));
    let (req, before) = a.until(T, is("control_request/can_use_tool"));
    let kinds: Vec<String> = before.iter().map(kind).collect();
    assert_eq!(
        kinds[..5],
        [
            "command_lifecycle/queued",
            "command_lifecycle/started",
            "system/init",
            "system/status",
            "user"
        ]
    );
    assert_eq!(before[0]["command_uuid"], U1);
    assert_eq!(before[2]["user_message_uuids"], json!([U1]));
    assert_eq!(before[2]["claude_code_version"], "2.1.332-demo");
    assert_eq!(before[2]["cwd"], "/workspace/demo");
    assert!(
        before[2]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("Bash"))
    );
    assert_eq!(before[3]["status"], "requesting");
    assert_eq!(before[4]["isReplay"], true);
    assert_eq!(before[4]["uuid"], U1);
    assert_eq!(kind(&before[5]), "stream_event/message_start");
    assert_eq!(before[5]["user_message_uuid"], U1);

    // thinking: deltas, thinking_tokens, signature, assistant frame before content_block_stop
    let thinking = deltas(&before, "thinking_delta");
    assert!(thinking.len() > 1);
    let tt: Vec<&Value> = before
        .iter()
        .filter(|f| kind(f) == "system/thinking_tokens")
        .collect();
    assert_eq!(
        tt.len(),
        thinking.len(),
        "one thinking_tokens per thinking_delta"
    );
    assert_eq!(deltas(&before, "signature_delta").len(), 1);
    // every assistant frame comes right before the content_block_stop of its block
    let mut assistants = 0;
    for (i, f) in before.iter().enumerate() {
        if f["type"] == "assistant" {
            assistants += 1;
            assert_eq!(kind(&before[i + 1]), "stream_event/content_block_stop");
            assert!(f["message"]["stop_reason"].is_null());
        }
    }
    assert_eq!(assistants, 3, "thinking, text, tool_use");
    let blocks: Vec<&Value> = before
        .iter()
        .filter(|f| f["type"] == "assistant")
        .map(|f| &f["message"]["content"][0])
        .collect();
    assert_eq!(blocks[0]["type"], "thinking");
    assert!(
        blocks[0]["signature"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let text = blocks[1]["text"].as_str().unwrap();
    let streamed: String = deltas(&before, "text_delta")
        .iter()
        .map(|d| d["event"]["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, text);
    assert!(text.contains("\n## ") || text.starts_with("## "), "heading");
    assert!(text.contains("\n- "), "list");
    assert!(text.contains("|---|"), "table");
    assert!(text.contains("```rust"), "code fence");
    // tool_use input streamed in several pieces that concatenate to the input
    let pieces = deltas(&before, "input_json_delta");
    assert!(pieces.len() >= 3);
    let json_text: String = pieces
        .iter()
        .map(|d| d["event"]["delta"]["partial_json"].as_str().unwrap())
        .collect();
    let input: Value = serde_json::from_str(&json_text).unwrap();
    assert_eq!(blocks[2]["input"], input);
    assert_eq!(blocks[2]["name"], "Bash");

    // the permission prompt
    let r = &req["request"];
    assert_eq!(r["tool_name"], "Bash");
    assert_eq!(r["input"], input);
    assert_eq!(r["tool_use_id"], blocks[2]["id"]);
    assert!(r["description"].is_string());
    assert_eq!(r["blocked_path"], "/workspace/demo/demo-output.txt");
    let sugg = r["permission_suggestions"].as_array().unwrap();
    assert!(
        sugg.iter()
            .any(|s| s["type"] == "addRules" && s["destination"] == "localSettings")
    );
    assert!(sugg.iter().any(|s| s["type"] == "setMode"
        && s["mode"] == "acceptEdits"
        && s["destination"] == "session"));

    a.send(&allow(&req, None, None));
    let (result, after) = a.until(T, is_result);
    let kinds: Vec<String> = after.iter().map(kind).collect();
    assert_eq!(
        kinds[..5],
        [
            "control_response/success", // --replay-user-messages echo of our answer
            "stream_event/message_delta",
            "stream_event/message_stop",
            "user",
            "system/status"
        ]
    );
    assert_eq!(after[1]["event"]["delta"]["stop_reason"], "tool_use");
    let tr = &after[3];
    assert_eq!(tr["message"]["content"][0]["tool_use_id"], blocks[2]["id"]);
    assert_eq!(tr["message"]["content"][0]["is_error"], false);
    assert!(user_content_text(tr).starts_with("$ touch demo-output.txt"));
    assert!(tr["tool_use_result"].is_object());
    assert_eq!(
        tr["tool_result_meta"][0]["permission_decision"]["decision"],
        "accept"
    );
    let last = after
        .iter()
        .rev()
        .find(|f| kind(f) == "stream_event/message_delta")
        .unwrap();
    assert_eq!(last["event"]["delta"]["stop_reason"], "end_turn");
    assert_eq!(kind(after.last().unwrap()), "stream_event/message_stop");
    let final_text = after
        .iter()
        .rev()
        .find(|f| f["type"] == "assistant")
        .map(|f| {
            f["message"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .unwrap();

    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["result"], final_text);
    assert_eq!(result["terminal_reason"], "completed");
    assert_eq!(result["permission_denials"], json!([]));
    assert_eq!(result["user_message_uuids"], json!([U1]));
    let model = before[2]["model"].as_str().unwrap();
    let usage = &result["usage"];
    let (i, o) = (
        usage["input_tokens"].as_u64().unwrap(),
        usage["output_tokens"].as_u64().unwrap(),
    );
    assert!(i > 0 && o > 0);
    assert!(
        usage["output_tokens_details"]["thinking_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    let cost = result["total_cost_usd"].as_f64().unwrap();
    assert!(cost > 0.0);
    assert!((cost - cost_usd(model, i, o)).abs() < 1e-12);
    assert_eq!(
        result["modelUsage"][model]["costUSD"],
        result["total_cost_usd"]
    );
    assert_eq!(result["modelUsage"][model]["outputTokens"], o);

    let (done, _) = a.until(T, is("command_lifecycle/completed"));
    assert_eq!(done["command_uuid"], U1);
    let (res, rest) = a.finish(T);
    res.unwrap();
    assert!(
        rest.is_empty(),
        "nothing after command_lifecycle/completed: {rest:?}"
    );
}

#[test]
fn edited_updated_input_is_what_runs() {
    let edited = json!({"command": "touch edited_by_host.txt", "description": "edited"});
    let (a, _, result, after) = answered("default", "go", |req| allow(req, Some(edited), None));
    let trs = tool_results(&after);
    assert_eq!(trs.len(), 1);
    let text = user_content_text(trs[0]);
    assert!(text.starts_with("$ touch edited_by_host.txt"), "{text}");
    assert!(!text.contains("demo-output.txt"));
    // the final text shows the tool result
    assert!(result_text(&result).contains("touch edited_by_host.txt"));
    a.finish(T).0.unwrap();
}

#[test]
fn deny_message_is_echoed_and_recorded() {
    let (a, req, result, after) = answered("default", "go", |req| {
        deny(req, "Not in my home directory, thanks", false)
    });
    let trs = tool_results(&after);
    assert_eq!(trs.len(), 1);
    assert_eq!(
        user_content_text(trs[0]),
        "Not in my home directory, thanks"
    );
    assert_eq!(trs[0]["message"]["content"][0]["is_error"], true);
    assert_eq!(
        trs[0]["tool_result_meta"][0]["permission_decision"]["decision"],
        "reject"
    );
    // deny: the tool_result comes before message_delta (like the real CLI)
    let pos = |k: &str| after.iter().position(|f| kind(f) == k).unwrap();
    assert!(
        after.iter().position(|f| std::ptr::eq(f, trs[0])).unwrap()
            < pos("stream_event/message_delta")
    );
    assert_eq!(result["subtype"], "success");
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1);
    assert_eq!(denials[0]["tool_name"], "Bash");
    assert_eq!(denials[0]["tool_use_id"], req["request"]["tool_use_id"]);
    assert_eq!(denials[0]["tool_input"], req["request"]["input"]);
    assert!(result_text(&result).contains("Not in my home directory"));
    a.finish(T).0.unwrap();
}

#[test]
fn deny_with_interrupt_ends_the_turn() {
    let (a, _, result, after) =
        answered("default", "go", |req| deny(req, "Stop right there", true));
    assert_eq!(
        user_content_text(tool_results(&after)[0]),
        "Stop right there"
    );
    assert!(after.iter().any(|f| f["type"] == "user"
        && user_content_text(f) == "[Request interrupted by user for tool use]"));
    assert!(
        !after.iter().any(|f| kind(f) == "system/status"),
        "no second model request"
    );
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["terminal_reason"], "aborted_tools");
    assert_eq!(result["permission_denials"].as_array().unwrap().len(), 1);
    a.finish(T).0.unwrap();
}

#[test]
fn session_rule_skips_the_second_prompt() {
    let (mut a, req, _) = asked("default", "first");
    let rule = req["request"]["permission_suggestions"][0].clone();
    assert_eq!(rule["type"], "addRules");
    let mut rule = rule;
    rule["destination"] = json!("session");
    a.send(&allow(&req, None, Some(json!([rule]))));
    let (r1, _) = a.until(T, is_result);
    assert_eq!(r1["subtype"], "success");

    a.send(&user("second", U2));
    let (r2, between) = a.until(T, is_result);
    assert!(!prompted(&between), "second identical call was prompted");
    let trs = tool_results(&between);
    assert_eq!(trs.len(), 1);
    let decision = &trs[0]["tool_result_meta"][0]["permission_decision"];
    assert_eq!(decision["decision"], "accept");
    assert_eq!(decision["reason_type"], "rule");
    assert_eq!(r2["subtype"], "success");
    a.finish(T).0.unwrap();
}

#[test]
fn rule_for_another_command_still_prompts() {
    let (mut a, req, _) = asked("default", "first");
    let rule = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch other.txt"}],
                      "behavior": "allow", "destination": "session"});
    a.send(&allow(&req, None, Some(json!([rule]))));
    a.until(T, is_result);
    a.send(&user("second", U2));
    a.until(T, is("control_request/can_use_tool"));
}

#[test]
fn interrupt_mid_stream_cleans_up_like_the_cli() {
    // ~30 s at speed 1: the interrupt always lands mid-stream, however loaded the machine is.
    let opts = AgentOptions {
        speed: 1.0,
        ..opts()
    };
    let mut a = InProcess::start(Scenario::builtin("long").unwrap(), opts);
    a.send(&user("write a lot", U1));
    a.until(T, |f| f["event"]["delta"]["type"] == "text_delta");
    let (resp, _) = request(&mut a, "int_1", json!({"subtype": "interrupt"}));
    assert_eq!(resp["response"]["subtype"], "success");
    assert_eq!(resp["response"]["response"], json!({"still_queued": []}));
    let (result, after) = a.until(T, is_result);
    let kinds: Vec<String> = after.iter().map(kind).collect();
    // at most one delta that was already being written; then the clean-up frames
    let first_cleanup = kinds
        .iter()
        .position(|k| k == "assistant")
        .expect("partial assistant");
    assert!(
        first_cleanup <= 1,
        "kept streaming after the interrupt: {kinds:?}"
    );
    assert_eq!(
        kinds[first_cleanup..],
        [
            "assistant",
            "stream_event/content_block_stop",
            "stream_event/message_delta",
            "stream_event/message_stop",
            "user"
        ]
    );
    let partial = after[first_cleanup]["message"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(!partial.is_empty());
    assert!(partial.len() < 6000, "the whole answer was written");
    let delta = &after[first_cleanup + 2];
    assert!(delta["event"]["delta"]["stop_reason"].is_null());
    let stop = &after[first_cleanup + 3];
    assert_eq!(stop["event"]["abandoned_blocks"]["from_block_index"], 1);
    assert_eq!(
        stop["event"]["abandoned_blocks"]["api_message_id"],
        stop["api_message_id"]
    );
    assert_eq!(
        user_content_text(after.last().unwrap()),
        "[Request interrupted by user]"
    );
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["terminal_reason"], "aborted_streaming");
    assert!(result["errors"].is_array());
    a.until(T, is("command_lifecycle/completed"));

    // the session goes on
    a.send(&user("again", U2));
    let (_, frames) = a.until(T, |f| f["event"]["delta"]["type"] == "text_delta");
    assert!(frames.iter().any(|f| kind(f) == "system/init"));
    a.send(&control("int_2", json!({"subtype": "interrupt"})));
    let (result, _) = a.until(T, is_result);
    assert_eq!(result["terminal_reason"], "aborted_streaming");
    assert_eq!(result["result_index"], 1);
}

#[test]
fn interrupt_during_a_prompt_withdraws_it() {
    let (mut a, req, _) = asked("default", "go");
    let (_, _) = request(&mut a, "int_1", json!({"subtype": "interrupt"}));
    let (result, after) = a.until(T, is_result);
    assert_eq!(kind(&after[0]), "control_cancel_request");
    assert_eq!(after[0]["request_id"], req["request_id"]);
    assert_eq!(
        tool_results(&after)[0]["message"]["content"][0]["is_error"],
        true
    );
    assert_eq!(result["terminal_reason"], "aborted_tools");
    // a late answer to the withdrawn prompt changes nothing
    a.send(&allow(&req, None, None));
    let (_, between) = request(&mut a, "m", json!({"subtype": "mcp_status"}));
    assert!(
        between
            .iter()
            .all(|f| f["type"] == "control_response" || kind(f) == "command_lifecycle/completed")
    );
}

#[test]
fn reinitialize_reports_the_pending_prompt() {
    let (mut a, req, _) = asked("default", "go");
    let (init, _) = request(&mut a, "init_2", json!({"subtype": "initialize"}));
    assert_eq!(
        init["response"]["pending_permission_requests"],
        json!([req])
    );
    a.send(&allow(&req, None, None));
    a.until(T, is_result);
}

#[test]
fn set_model_changes_the_next_init() {
    let mut a = start("default");
    let (resp, _) = request(
        &mut a,
        "m1",
        json!({"subtype": "set_model", "model": "opus"}),
    );
    assert_eq!(resp["response"]["subtype"], "success");
    a.send(&user("hi", U1));
    let (init, _) = a.until(T, is("system/init"));
    assert_eq!(init["model"], "claude-opus-4-1");
    let (start, _) = a.until(T, is("stream_event/message_start"));
    assert_eq!(start["event"]["message"]["model"], "claude-opus-4-1");
    let (req, _) = a.until(T, is("control_request/can_use_tool"));
    a.send(&allow(&req, None, None));
    let (result, _) = a.until(T, is_result);
    assert!(result["modelUsage"]["claude-opus-4-1"].is_object());

    request(&mut a, "m2", json!({"subtype": "set_model", "model": null}));
    a.send(&user("hi", U2));
    let (init, _) = a.until(T, is("system/init"));
    assert_eq!(init["model"], "claude-sonnet-4-5");
}

#[test]
fn total_cost_is_the_running_total_of_the_session() {
    let mut a = start("default");
    let mut totals = Vec::new();
    let mut turn_costs = Vec::new();
    for uuid in [U1, U2] {
        a.send(&user("hi", uuid));
        let (req, _) = a.until(T, is("control_request/can_use_tool"));
        a.send(&allow(&req, None, None));
        let (result, _) = a.until(T, is_result);
        let usage = &result["usage"];
        let model = result["modelUsage"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        turn_costs.push(cost_usd(
            &model,
            usage["input_tokens"].as_u64().unwrap(),
            usage["output_tokens"].as_u64().unwrap(),
        ));
        totals.push(result["total_cost_usd"].as_f64().unwrap());
    }
    assert!((totals[0] - turn_costs[0]).abs() < 1e-12);
    assert!(
        (totals[1] - (turn_costs[0] + turn_costs[1])).abs() < 1e-12,
        "second result must carry the running total, got {totals:?} for turn costs {turn_costs:?}"
    );
}

#[test]
fn set_permission_mode_is_answered_and_applied() {
    let mut a = start("edit");
    let (resp, _) = request(
        &mut a,
        "p1",
        json!({"subtype": "set_permission_mode", "mode": "acceptEdits"}),
    );
    assert_eq!(resp["response"]["response"], json!({"mode": "acceptEdits"}));
    let (status, _) = a.until(T, is("system/status"));
    assert!(status["status"].is_null());
    assert_eq!(status["permissionMode"], "acceptEdits");

    a.send(&user("edit it", U1));
    let (init, _) = a.until(T, is("system/init"));
    assert_eq!(init["permissionMode"], "acceptEdits");
    let (result, frames) = a.until(T, is_result);
    assert!(!prompted(&frames), "acceptEdits prompts no edit");
    assert_eq!(tool_results(&frames).len(), 2);
    assert_eq!(result["subtype"], "success");

    let (resp, _) = request(
        &mut a,
        "p2",
        json!({"subtype": "set_permission_mode", "mode": "yolo"}),
    );
    assert_eq!(resp["response"]["subtype"], "error");
}

#[test]
fn unknown_control_subtype_is_an_error_response() {
    let mut a = start("default");
    let (resp, before) = request(&mut a, "bogus_1", json!({"subtype": "no_such_subtype"}));
    assert!(before.is_empty());
    assert_eq!(
        resp,
        json!({"type": "control_response", "response": {"subtype": "error", "request_id": "bogus_1",
               "error": "Unsupported control request subtype: no_such_subtype", "error_code": "unsupported_request"}})
    );
}

#[test]
fn garbage_and_unknown_types_are_ignored() {
    let mut a = start("default");
    a.send_raw("this is not json\n\n[1,2]\n");
    a.send(&json!({"type": "keep_alive"}));
    a.send(&json!({"type": "something_new", "x": 1}));
    a.send(&json!({"type": "update_environment_variables", "variables": {"FOO": "1"}, "request_id": "env_1"}));
    let (resp, before) = a.until(T, is_response_to("env_1"));
    assert!(before.is_empty());
    assert_eq!(resp["response"]["response"], json!({"applied": []}));
    a.finish(T).0.unwrap();
}

#[test]
fn queued_messages_are_coalesced_into_one_turn() {
    let scenario = Scenario::from_json(
        r#"{"replies": [
            {"match": "slow", "steps": [{"type": "text", "text": "word ", "repeat_text": 2000, "chunk_chars": 5, "delay_ms": 50}]},
            {"steps": [{"type": "text", "text": "You said: {prompt}"}]}
        ]}"#,
        "test",
    )
    .unwrap();
    let mut a = InProcess::start(
        scenario,
        AgentOptions {
            speed: 1.0,
            ..opts()
        },
    );
    a.send(&user("slow one", U1));
    a.until(T, |f| f["event"]["delta"]["type"] == "text_delta");
    a.send(&user("two", U2));
    a.send(&user("three", U3));
    let (q, _) = a.until(T, |f| {
        kind(f) == "command_lifecycle/queued" && f["command_uuid"] == U3
    });
    assert_eq!(q["command_uuid"], U3);
    let (resp, _) = request(&mut a, "int", json!({"subtype": "interrupt"}));
    assert_eq!(
        resp["response"]["response"]["still_queued"],
        json!([U2, U3])
    );
    let (r1, _) = a.until(T, is_result);
    assert_eq!(r1["user_message_uuids"], json!([U1]));
    assert_eq!(r1["queued_turn_count"], 2);
    let (r2, frames) = a.until(T, is_result);
    assert_eq!(r2["user_message_uuids"], json!([U2, U3]));
    assert_eq!(r2["result"], "You said: two\nthree");
    let replays: Vec<&Value> = frames.iter().filter(|f| f["isReplay"] == true).collect();
    assert_eq!(replays.len(), 2);
    assert_eq!(replays[0]["uuid"], U2);
    assert_eq!(replays[1]["uuid"], U3);
    assert_eq!(replays[1]["message"]["content"], "two\nthree");
    assert_eq!(
        frames.iter().filter(|f| kind(f) == "system/init").count(),
        1
    );
    a.finish(T).0.unwrap();
}
