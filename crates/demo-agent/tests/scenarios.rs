//! The demo agent's scenarios (crash, hostile text, questions, edits, many tools, MCP, compact,
//! images) and modes, driven in-process over channels.

use crate::common::*;
use bridge_demo_agent::harness::{InProcess, kind};
use bridge_demo_agent::{AgentExit, AgentOptions, Scenario};
use serde_json::{Value, json};

#[test]
fn crash_scenario_exits_mid_turn_with_code_3() {
    let a = start("crash");
    a.send(&user("go", U1));
    let (res, rest) = a.finish(T);
    let err = res.unwrap_err();
    let exit = err.downcast_ref::<AgentExit>().expect("AgentExit");
    assert_eq!(exit.code, 3);
    assert!(exit.message.contains("simulated crash"));
    assert!(!deltas(&rest, "text_delta").is_empty(), "some deltas first");
    assert!(
        !rest.iter().any(is_result),
        "no result: it crashed mid-turn"
    );
}

#[test]
fn hostile_scenario_is_delivered_verbatim_and_on_one_line_each() {
    let mut a = start("hostile");
    a.send(&user("go", U1));
    let (result, frames) = a.until(T, is_result);
    let texts: Vec<&str> = frames
        .iter()
        .filter(|f| f["type"] == "assistant")
        .filter_map(|f| f["message"]["content"][0]["text"].as_str())
        .collect();
    let all = texts.concat();
    for needle in [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "[click](javascript:alert(1))",
    ] {
        assert!(all.contains(needle), "{needle}");
    }
    let long = texts
        .iter()
        .find(|t| t.len() >= 100 * 1024)
        .expect("a 100 KB text");
    assert!(!long.contains('\n'), "single line");
    assert!(result_text(&result).len() >= 100 * 1024);
    // U+2028 is escaped on the wire, the text itself is intact
    assert!(all.contains('\u{2028}'));
    assert!(
        a.lines
            .iter()
            .all(|l| !l.contains('\u{2028}') && !l.contains('\u{2029}'))
    );
    assert!(a.lines.iter().any(|l| l.contains("\\u2028")));
    a.finish(T).0.unwrap();
}

#[test]
fn ask_user_question_round_trip() {
    let (mut a, req, _) = asked("ask", "pick a color");
    assert_eq!(req["request"]["tool_name"], "AskUserQuestion");
    assert_eq!(req["request"]["requires_user_interaction"], true);
    let question = req["request"]["input"]["questions"][0]["question"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut input = req["request"]["input"].clone();
    input["answers"] = json!({ question.clone(): "Green" });
    a.send(&allow(&req, Some(input), None));
    let (result, frames) = a.until(T, is_result);
    let tr = tool_results(&frames)[0];
    assert!(user_content_text(tr).contains(&format!("\"{question}\"=\"Green\"")));
    assert_eq!(tr["tool_use_result"]["answers"][&question], "Green");
    assert!(result_text(&result).contains("Green"));
}

#[test]
fn edit_scenario_prompts_for_edit_and_write() {
    let (mut a, req, before) = asked("edit", "edit");
    assert_eq!(req["request"]["tool_name"], "Edit");
    assert_eq!(
        req["request"]["permission_suggestions"],
        json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])
    );
    let edit_block = before
        .iter()
        .rev()
        .find(|f| f["type"] == "assistant")
        .map(|f| f["message"]["content"][0].clone())
        .unwrap();
    assert_eq!(
        edit_block["input"]["replace_all"], false,
        "assistant frame applies defaults"
    );
    assert!(
        req["request"]["input"].get("replace_all").is_none(),
        "the prompt shows the model's input"
    );
    a.send(&allow(&req, None, None));
    let (req2, _) = a.until(T, is("control_request/can_use_tool"));
    assert_eq!(req2["request"]["tool_name"], "Write");
    a.send(&allow(&req2, None, None));
    let (result, frames) = a.until(T, is_result);
    let trs = tool_results(&frames);
    assert_eq!(trs.len(), 2);
    assert!(user_content_text(trs[0]).contains("src/main.rs has been updated"));
    assert!(
        user_content_text(trs[1])
            .contains("File created successfully at: /workspace/demo/NOTES.md")
    );
    assert_eq!(
        trs[0]["tool_use_result"]["newString"],
        req["request"]["input"]["new_string"]
    );
    assert_eq!(result["num_turns"], 2);
}

#[test]
fn many_scenario_runs_twenty_tools_without_prompts() {
    let mut a = start("many");
    for (i, u) in [U1, U2].iter().enumerate() {
        a.send(&user(&format!("load {i}"), u));
        let (result, frames) = a.until(T, is_result);
        assert!(!prompted(&frames));
        let trs = tool_results(&frames);
        assert_eq!(trs.len(), 20);
        assert_eq!(user_content_text(trs[19]), "$ echo step 20\nstep 20");
        assert_eq!(result["subtype"], "success");
    }
    a.finish(T).0.unwrap();
}

#[test]
fn bypass_and_dont_ask_modes() {
    let opts = AgentOptions {
        permission_mode: "bypassPermissions".into(),
        ..opts()
    };
    let mut a = InProcess::start(Scenario::builtin("default").unwrap(), opts);
    a.send(&user("go", U1));
    let (_, frames) = a.until(T, is_result);
    assert!(!prompted(&frames));

    a.send(&control(
        "p",
        json!({"subtype": "set_permission_mode", "mode": "dontAsk"}),
    ));
    a.send(&user("go", U2));
    let (result, frames) = a.until(T, is_result);
    assert!(!prompted(&frames));
    assert_eq!(result["permission_denials"].as_array().unwrap().len(), 1);
}

#[test]
fn without_partial_messages_there_are_no_stream_events() {
    let opts = AgentOptions {
        include_partial_messages: false,
        replay_user_messages: false,
        ..opts()
    };
    let mut a = InProcess::start(Scenario::builtin("default").unwrap(), opts);
    a.send(&user("go", U1));
    let (req, before) = a.until(T, is("control_request/can_use_tool"));
    a.send(&allow(&req, None, None));
    let (_, after) = a.until(T, is_result);
    let all: Vec<&Value> = before.iter().chain(after.iter()).collect();
    assert!(
        all.iter()
            .all(|f| f["type"] != "stream_event" && f["isReplay"] != true)
    );
    assert!(
        !all.iter().any(|f| f["type"] == "control_response"),
        "answers are not echoed"
    );
    assert_eq!(all.iter().filter(|f| f["type"] == "assistant").count(), 4);
}

#[test]
fn closing_stdin_while_idle_ends_cleanly() {
    let a = start("default");
    let (res, rest) = a.finish(T);
    res.unwrap();
    assert!(rest.is_empty());
}

#[test]
fn mcp_scenario_asks_through_elicitation_while_the_tool_runs() {
    let (mut a, req, _) = asked("mcp", "ship it");
    assert_eq!(req["request"]["tool_name"], "mcp__deploy__configure");
    assert_eq!(
        req["request"]["display_name"], "Configure",
        "as the CLI names it"
    );
    assert_eq!(req["request"]["mcp_server"]["name"], "deploy");
    a.send(&allow(&req, None, None));
    let (ask, between) = a.until(T, is("control_request/elicitation"));
    assert!(
        tool_results(&between).is_empty(),
        "the tool is still running"
    );
    let r = &ask["request"];
    assert_eq!(
        r["mcp_server_name"], "deploy",
        "from the mcp__<server>__ name"
    );
    assert_eq!(r["mode"], "form");
    assert_eq!(
        r["requested_schema"]["required"],
        json!(["environment", "replicas"])
    );
    assert_eq!(r["property_order"][0], "environment");
    let content = json!({"environment": "staging", "replicas": 2, "notify": true});
    a.send(
        &json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": ask["request_id"], "response": {"action": "accept", "content": content}}}),
    );
    let (result, frames) = a.until(T, is_result);
    let tr = tool_results(&frames)[0];
    assert_eq!(
        user_content_text(tr),
        format!("Elicitation accept: {content}")
    );
    assert_eq!(tr["message"]["content"][0]["is_error"], false);
    assert!(result_text(&result).contains("staging"));
}

#[test]
fn interrupt_during_an_elicitation_withdraws_it() {
    let (mut a, req, _) = asked("mcp", "ship it");
    a.send(&allow(&req, None, None));
    let (ask, _) = a.until(T, is("control_request/elicitation"));
    a.send(&control("int_1", json!({"subtype": "interrupt"})));
    let (result, after) = a.until(T, is_result);
    let cancel = after
        .iter()
        .find(|f| kind(f) == "control_cancel_request")
        .expect("the form is withdrawn");
    assert_eq!(cancel["request_id"], ask["request_id"]);
    assert_eq!(
        tool_results(&after)[0]["message"]["content"][0]["is_error"],
        true
    );
    assert_eq!(result["terminal_reason"], "aborted_tools");
}

#[test]
fn compact_finishes_with_its_result_even_when_interrupted() {
    // At speed 1 compaction takes 400 ms: an interrupt meanwhile is answered, and the command still ends
    // with its result (a turn without one would leave clients thinking the session is busy).
    let mut a = InProcess::start(
        Scenario::builtin("default").unwrap(),
        AgentOptions {
            speed: 1.0,
            ..opts()
        },
    );
    a.send(&user("/compact", U1));
    a.until(T, |f| f["status"] == "compacting");
    a.send(&control("int_1", json!({"subtype": "interrupt"})));
    let (result, before) = a.until(T, is_result);
    assert!(
        before.iter().any(is_response_to("int_1")),
        "the interrupt is answered"
    );
    assert!(
        before.iter().any(|f| f["subtype"] == "compact_boundary"),
        "compaction completed"
    );
    assert_eq!(result["local_command"], "compact");
}

#[test]
fn an_image_block_is_acknowledged_in_the_reply() {
    let scenario = Scenario::from_json(
        r#"{"replies": [{"steps": [{"type": "text", "text": "You said: {prompt}"}]}]}"#,
        "test",
    )
    .unwrap();
    let mut a = InProcess::start(scenario, opts());
    // 16,384 base64 characters: 12 KB of PNG.
    let data = "A".repeat(16 * 1024);
    a.send(&json!({"type": "user", "session_id": "", "parent_tool_use_id": null, "uuid": U1,
        "message": {"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
            {"type": "text", "text": "what is this?"}
        ]}}));
    let (result, frames) = a.until(T, is_result);
    let texts: String = deltas(&frames, "text_delta")
        .iter()
        .filter_map(|f| f["event"]["delta"]["text"].as_str())
        .collect();
    assert!(
        texts.starts_with("I see an image (image/png, 12 KB)."),
        "{texts}"
    );
    assert_eq!(result["result"], "You said: what is this?");
    // Its replay carries the image block as sent.
    let replay = frames.iter().find(|f| f["isReplay"] == true).unwrap();
    assert_eq!(
        replay["message"]["content"][0]["source"]["media_type"],
        "image/png"
    );
    assert_eq!(
        bridge_demo_agent::describe_images(&json!([
            {"type": "image", "source": {"type": "url", "url": "https://example.com/x.gif", "media_type": "image/gif"}}
        ])),
        ["image/gif, url source"]
    );
}
