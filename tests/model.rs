//! The transcript model against hand-built frame sequences: streaming assembly, replacement by the
//! durable frames, tool card states, prompts, and the real-CLI behaviours of REAL-CLI-NOTES.md.

use bridge_console::state::{
    Block, InterruptState, ItemKind, LocalRequest, PromptKind, SendState, Session, SessionState,
    SettledBy, Source, SystemKind, ToolStatus, UserOrigin, slash_matches,
};
use serde_json::{Value, json};
// The same tests run natively and, compiled to wasm32, in the browser.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

// ---------------------------------------------------------------- frame builders

fn ev(msg: &str, event: Value) -> Value {
    json!({"type": "stream_event", "event": event, "session_id": "s", "parent_tool_use_id": null,
           "uuid": uuid_like(), "api_message_id": msg})
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "00000000-0000-4000-8000-{:012}",
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn start(msg: &str) -> Value {
    ev(
        msg,
        json!({"type": "message_start", "message": {"id": msg, "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    )
}
fn block_start(msg: &str, index: u64, block: Value) -> Value {
    ev(
        msg,
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}
fn text_delta(msg: &str, index: u64, text: &str) -> Value {
    ev(
        msg,
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
    )
}
fn thinking_delta(msg: &str, index: u64, text: &str) -> Value {
    ev(
        msg,
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": text, "estimated_tokens": null}}),
    )
}
fn json_delta(msg: &str, index: u64, partial: &str) -> Value {
    ev(
        msg,
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": partial}}),
    )
}
fn block_stop(msg: &str, index: u64) -> Value {
    ev(msg, json!({"type": "content_block_stop", "index": index}))
}
fn message_delta(msg: &str, reason: Option<&str>) -> Value {
    ev(
        msg,
        json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
    )
}
fn message_stop(msg: &str) -> Value {
    ev(msg, json!({"type": "message_stop"}))
}
fn message_stop_abandoned(msg: &str, from: u64) -> Value {
    let mut v = message_stop(msg);
    v["abandoned_blocks"] = json!({"api_message_id": msg, "from_block_index": from});
    v
}
fn assistant(msg: &str, block: Value) -> Value {
    json!({"type": "assistant", "message": {"id": msg, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [block], "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}},
        "parent_tool_use_id": null, "session_id": "s", "uuid": uuid_like()})
}
fn sub_assistant(msg: &str, parent: &str, block: Value) -> Value {
    let mut v = assistant(msg, block);
    v["parent_tool_use_id"] = json!(parent);
    v
}
fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}
fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}
fn tool_result(id: &str, content: &str, is_error: bool) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
        "content": content, "is_error": is_error}]}, "parent_tool_use_id": null, "session_id": "s", "uuid": uuid_like()})
}
fn user_replay(uuid: &str, text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": text}, "session_id": "s",
           "parent_tool_use_id": null, "uuid": uuid, "isReplay": true})
}
fn can_use_tool(rid: &str, tool_id: &str, tool: &str, input: Value) -> Value {
    json!({"type": "control_request", "request_id": rid, "request": {"subtype": "can_use_tool", "tool_name": tool,
        "display_name": tool, "input": input, "tool_use_id": tool_id,
        "permission_suggestions": [{"type": "addRules", "rules": [{"toolName": tool}], "behavior": "allow", "destination": "session"}]}})
}
fn allow(rid: &str, updated: Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": rid,
        "response": {"behavior": "allow", "updatedInput": updated}}})
}
fn deny(rid: &str, message: &str) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": rid,
        "response": {"behavior": "deny", "message": message}}})
}
fn result(cost: f64, extra: Value) -> Value {
    let mut v = json!({"type": "result", "subtype": "success", "is_error": false, "duration_ms": 1200, "duration_api_ms": 900,
        "num_turns": 1, "result": "ok", "stop_reason": "end_turn", "total_cost_usd": cost,
        "usage": {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 0},
        "modelUsage": {}, "permission_denials": [], "uuid": uuid_like(), "session_id": "s"});
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            o.insert(k.clone(), x.clone());
        }
    }
    v
}

fn apply_all(s: &mut Session, frames: &[Value]) {
    for f in frames {
        s.apply_value(f);
    }
}

fn only_durable(frames: &[Value]) -> Vec<Value> {
    frames
        .iter()
        .filter(|f| f["type"] != "stream_event")
        .cloned()
        .collect()
}

fn assistant_blocks(s: &Session) -> Vec<Block> {
    s.order()
        .iter()
        .filter_map(|k| match &s.item(k).unwrap().kind {
            ItemKind::Assistant(a) => Some(
                a.blocks
                    .iter()
                    .map(|sl| sl.block.clone())
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect()
}

fn rows_of_role(s: &Session, role: &str) -> usize {
    s.order()
        .iter()
        .filter(|k| s.item(k).unwrap().role() == role)
        .count()
}

/// A turn: text streamed in three deltas, a Bash tool_use whose JSON streams in pieces, then text.
fn streamed_turn() -> Vec<Value> {
    let m = "msg_1";
    vec![
        start(m),
        block_start(m, 0, json!({"type": "text", "text": ""})),
        text_delta(m, 0, "Hello "),
        text_delta(m, 0, "**world**"),
        text_delta(m, 0, "!"),
        assistant(m, text("Hello **world**!")),
        block_stop(m, 0),
        block_start(
            m,
            1,
            json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}),
        ),
        json_delta(m, 1, "{\"command\": \"ls -"),
        json_delta(m, 1, "la\", \"description\": \"List\"}"),
        assistant(
            m,
            tool_use(
                "toolu_1",
                "Bash",
                json!({"command": "ls -la", "description": "List"}),
            ),
        ),
        block_stop(m, 1),
        message_delta(m, Some("tool_use")),
        message_stop(m),
        tool_result("toolu_1", "a\nb", false),
        start("msg_2"),
        block_start("msg_2", 0, json!({"type": "text", "text": ""})),
        text_delta("msg_2", 0, "Done."),
        assistant("msg_2", text("Done.")),
        block_stop("msg_2", 0),
        message_delta("msg_2", Some("end_turn")),
        message_stop("msg_2"),
        result(0.01, json!({})),
    ]
}

// ---------------------------------------------------------------- streaming

#[test]
fn streaming_text_appears_before_the_durable_frame_and_is_replaced_without_duplicate() {
    let frames = streamed_turn();
    let mut s = Session::new();
    apply_all(&mut s, &frames[..4]);
    assert_eq!(
        assistant_blocks(&s),
        vec![Block::Text("Hello **world**".into())]
    );
    let key = s.order()[0].clone();
    match &s.item(&key).unwrap().kind {
        ItemKind::Assistant(a) => {
            assert!(a.streaming);
            assert!(a.blocks[0].open && !a.blocks[0].durable);
        }
        _ => panic!("first row is the assistant"),
    }
    apply_all(&mut s, &frames[4..7]);
    assert_eq!(
        assistant_blocks(&s),
        vec![Block::Text("Hello **world**!".into())]
    );
    match &s.item(&key).unwrap().kind {
        ItemKind::Assistant(a) => assert!(a.blocks[0].durable && a.uuid.is_some()),
        _ => unreachable!(),
    }
    assert_eq!(rows_of_role(&s, "assistant"), 1);
}

/// A subagent's new API message closes its thread's older one still streaming, not the main thread's;
/// the turn's result closes every one (the model keeps the streaming rows aside, not a scan).
#[test]
fn a_subagents_new_message_closes_its_own_thread_and_the_result_closes_all() {
    let in_thread = |mut v: Value, parent: &str| {
        v["parent_tool_use_id"] = json!(parent);
        v
    };
    let streaming = |s: &Session, msg: &str| match &s.item(&format!("a:{msg}")).unwrap().kind {
        ItemKind::Assistant(a) => a.streaming,
        _ => panic!("{msg} is an assistant row"),
    };
    let mut s = Session::new();
    apply_all(
        &mut s,
        &[
            start("m1"),
            block_start("m1", 0, json!({"type": "text", "text": ""})),
            text_delta("m1", 0, "main"),
            in_thread(start("sub1"), "toolu_task"),
            in_thread(
                block_start("sub1", 0, json!({"type": "text", "text": ""})),
                "toolu_task",
            ),
        ],
    );
    assert!(streaming(&s, "m1") && streaming(&s, "sub1"));
    apply_all(&mut s, &[in_thread(start("sub2"), "toolu_task")]);
    assert!(
        !streaming(&s, "sub1"),
        "the subagent's older message is closed"
    );
    assert!(streaming(&s, "m1"), "the main thread's message streams on");
    assert!(streaming(&s, "sub2"));
    apply_all(&mut s, &[result(0.01, json!({}))]);
    for msg in ["m1", "sub1", "sub2"] {
        assert!(!streaming(&s, msg), "{msg} is closed by the result");
    }
}

/// On a scale-out gateway the live frames (deltas) and the log travel separate paths: a message's
/// deltas can arrive after its durable frame. They show nothing a second time.
#[test]
fn deltas_arriving_after_their_durable_frame_show_nothing_twice() {
    let frames = streamed_turn();
    let durable = only_durable(&frames);
    let mut once = Session::new();
    apply_all(&mut once, &durable);
    let mut late = Session::new();
    // Each message's durable frames first, then its stream events.
    let (msg1, rest): (Vec<_>, Vec<_>) = frames[..15]
        .iter()
        .cloned()
        .partition(|f| f["type"] == "stream_event");
    apply_all(&mut late, &rest);
    apply_all(&mut late, &msg1);
    apply_all(&mut late, &frames[15..]);
    assert_eq!(assistant_blocks(&late), assistant_blocks(&once));
    assert_eq!(
        assistant_blocks(&late)
            .iter()
            .filter(|b| **b == Block::Text("Hello **world**!".into()))
            .count(),
        1
    );
    assert_eq!(
        rows_of_role(&late, "assistant"),
        rows_of_role(&once, "assistant")
    );
}

#[test]
fn partial_tool_input_json_shows_the_forming_command() {
    let frames = streamed_turn();
    let mut s = Session::new();
    apply_all(&mut s, &frames[..9]);
    let tool = s.tool("toolu_1").expect("card exists while input streams");
    assert_eq!(tool.status, ToolStatus::Streaming);
    assert_eq!(tool.display_input(), json!({"command": "ls -"}));
    s.apply_value(&frames[9]);
    assert_eq!(
        s.tool("toolu_1").unwrap().display_input()["command"],
        "ls -la"
    );
    s.apply_value(&frames[10]);
    let tool = s.tool("toolu_1").unwrap();
    assert_eq!(tool.status, ToolStatus::Running);
    assert!(tool.input_complete);
}

#[test]
fn full_turn_final_state_and_identical_without_deltas() {
    let frames = streamed_turn();
    let mut a = Session::new();
    apply_all(&mut a, &frames);
    let mut b = Session::new();
    apply_all(&mut b, &only_durable(&frames));
    assert_eq!(a.snapshot(), b.snapshot());
    assert_eq!(rows_of_role(&a, "assistant"), 2);
    assert_eq!(a.tool("toolu_1").unwrap().status, ToolStatus::Done);
    assert_eq!(
        a.tool("toolu_1").unwrap().output.as_ref().unwrap().text,
        "a\nb"
    );
    assert_eq!(a.state(), SessionState::Idle);
}

#[test]
fn deltas_lost_in_the_middle_of_a_block_are_healed_by_the_durable_frame() {
    let frames = streamed_turn();
    let mut full = Session::new();
    apply_all(&mut full, &frames);
    // Drop a middle text delta and the second JSON delta (a reconnect gap).
    let lossy: Vec<Value> = frames
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 9)
        .map(|(_, f)| f.clone())
        .collect();
    let mut s = Session::new();
    apply_all(&mut s, &lossy);
    assert_eq!(full.snapshot(), s.snapshot());
}

#[test]
fn thinking_streams_and_is_replaced() {
    let m = "msg_t";
    let frames = vec![
        start(m),
        block_start(
            m,
            0,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        thinking_delta(m, 0, "Let me "),
        thinking_delta(m, 0, "check"),
        assistant(
            m,
            json!({"type": "thinking", "thinking": "Let me check", "signature": "sig"}),
        ),
        block_stop(m, 0),
        block_start(m, 1, json!({"type": "text", "text": ""})),
        text_delta(m, 1, "Answer"),
        assistant(m, text("Answer")),
        block_stop(m, 1),
        message_stop(m),
    ];
    let mut s = Session::new();
    apply_all(&mut s, &frames[..4]);
    assert_eq!(
        assistant_blocks(&s),
        vec![Block::Thinking("Let me check".into())]
    );
    apply_all(&mut s, &frames[4..]);
    assert_eq!(
        assistant_blocks(&s),
        vec![
            Block::Thinking("Let me check".into()),
            Block::Text("Answer".into())
        ]
    );
    let mut b = Session::new();
    apply_all(&mut b, &only_durable(&frames));
    assert_eq!(s.snapshot(), b.snapshot());
}

#[test]
fn redelivered_durable_frames_change_nothing() {
    let frames = streamed_turn();
    let mut a = Session::new();
    apply_all(&mut a, &frames);
    let before = a.snapshot();
    for f in only_durable(&frames) {
        a.apply_value(&f);
    }
    assert_eq!(a.snapshot(), before);
}

// ---------------------------------------------------------------- interrupts and stream errors

#[test]
fn interrupt_abandons_streamed_blocks_from_the_index_on() {
    let m = "msg_i";
    let frames = vec![
        start(m),
        block_start(m, 0, json!({"type": "text", "text": ""})),
        text_delta(m, 0, "Partial ans"),
        assistant(m, text("Partial ans")),
        block_start(
            m,
            1,
            json!({"type": "tool_use", "id": "toolu_x", "name": "Write", "input": {}}),
        ),
        json_delta(m, 1, "{\"file_path\": \"/tmp/a"),
        block_stop(m, 0),
        block_stop(m, 1),
        message_delta(m, None),
        message_stop_abandoned(m, 1),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]},
               "parent_tool_use_id": null, "session_id": "s", "uuid": uuid_like()}),
        result(
            0.0,
            json!({"subtype": "error_during_execution", "is_error": true, "terminal_reason": "aborted_streaming", "errors": []}),
        ),
    ];
    let mut s = Session::new();
    s.local_request("req_int", LocalRequest::Interrupt);
    assert_eq!(s.interrupt_state(), InterruptState::Requested);
    s.apply_value(&json!({"type": "control_response", "response": {"subtype": "success", "request_id": "req_int", "response": {"still_queued": []}}}));
    assert_eq!(s.interrupt_state(), InterruptState::Acknowledged);
    apply_all(&mut s, &frames);
    assert_eq!(
        assistant_blocks(&s),
        vec![Block::Text("Partial ans".into())]
    );
    assert!(
        s.tool("toolu_x").is_none(),
        "the abandoned tool_use leaves no card"
    );
    let synthetic = s
        .order()
        .iter()
        .find_map(|k| match &s.item(k).unwrap().kind {
            ItemKind::User(u) => Some(u.origin),
            _ => None,
        });
    assert_eq!(synthetic, Some(UserOrigin::Synthetic));
    let mut b = Session::new();
    apply_all(&mut b, &only_durable(&frames));
    assert_eq!(s.snapshot()["rows"], b.snapshot()["rows"]);
    assert_eq!(s.state(), SessionState::Idle);
}

#[test]
fn stream_error_drops_the_partial_block_and_the_silent_retry_shows_once() {
    let m = "msg_e";
    let frames = vec![
        start(m),
        block_start(m, 0, json!({"type": "text", "text": ""})),
        text_delta(m, 0, "This will be cut o"),
        block_stop(m, 0),
        message_stop_abandoned(m, 0),
        // Non-streaming retry: an assistant frame with no stream events and stop_reason set.
        json!({"type": "assistant", "message": {"id": "msg_retry", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [text("The full answer.")], "stop_reason": "end_turn", "usage": {"input_tokens": 0, "output_tokens": 0}}, "parent_tool_use_id": null, "session_id": "s", "uuid": uuid_like()}),
        result(0.02, json!({})),
    ];
    let mut s = Session::new();
    apply_all(&mut s, &frames[..3]);
    assert_eq!(
        assistant_blocks(&s),
        vec![Block::Text("This will be cut o".into())]
    );
    apply_all(&mut s, &frames[3..]);
    assert_eq!(
        assistant_blocks(&s),
        vec![Block::Text("The full answer.".into())]
    );
    assert_eq!(rows_of_role(&s, "assistant"), 1);
    let mut b = Session::new();
    apply_all(&mut b, &only_durable(&frames));
    assert_eq!(s.snapshot(), b.snapshot());
}

// ---------------------------------------------------------------- tool states and permissions

fn tool_turn(tool: &str, input: Value) -> Vec<Value> {
    let m = "msg_p";
    vec![
        start(m),
        block_start(
            m,
            0,
            json!({"type": "tool_use", "id": "toolu_p", "name": tool, "input": {}}),
        ),
        json_delta(m, 0, &input.to_string()),
        assistant(m, tool_use("toolu_p", tool, input)),
        block_stop(m, 0),
        message_delta(m, Some("tool_use")),
        message_stop(m),
    ]
}

#[test]
fn permission_allow_with_edited_input_shows_what_ran() {
    let input = json!({"command": "rm -rf build", "description": "Clean"});
    let mut s = Session::new();
    apply_all(&mut s, &tool_turn("Bash", input.clone()));
    s.apply_value(&can_use_tool("r1", "toolu_p", "Bash", input.clone()));
    assert_eq!(
        s.tool("toolu_p").unwrap().status,
        ToolStatus::PendingPermission
    );
    assert_eq!(s.state(), SessionState::RequiresAction);
    assert!(s.needs_you());
    // This console answers with an edited command; its echo comes back (relay: source client).
    s.answer_locally("r1");
    assert!(!s.needs_you(), "answered here: no longer waiting on us");
    let edited = json!({"command": "rm -rf build/tmp", "description": "Clean"});
    s.apply_from(Source::Client, &allow("r1", edited.clone()));
    // The CLI echoes it too (--replay-user-messages); nothing changes the second time.
    s.apply_value(&allow("r1", edited.clone()));
    let tool = s.tool("toolu_p").unwrap();
    assert_eq!(tool.status, ToolStatus::Running);
    assert!(tool.edited());
    assert_eq!(tool.display_input(), edited);
    assert_eq!(tool.input, input, "the proposal is kept for the diff");
    assert_eq!(s.settled("r1"), Some(&SettledBy::Me));
    assert!(
        s.notices().is_empty(),
        "no 'answered elsewhere' notice for our own answer"
    );
    s.apply_value(&tool_result("toolu_p", "", false));
    assert_eq!(s.tool("toolu_p").unwrap().status, ToolStatus::Done);
    // A late assistant frame repeating the original input does not undo the edit (REAL-CLI-NOTES 10).
    s.apply_value(&assistant("msg_p", tool_use("toolu_p", "Bash", input)));
    assert_eq!(s.tool("toolu_p").unwrap().display_input(), edited);
}

#[test]
fn unedited_allow_is_not_marked_edited() {
    let input = json!({"command": "make"});
    let mut s = Session::new();
    apply_all(&mut s, &tool_turn("Bash", input.clone()));
    s.apply_value(&can_use_tool("r1", "toolu_p", "Bash", input.clone()));
    s.apply_value(&allow("r1", input));
    assert!(!s.tool("toolu_p").unwrap().edited());
}

#[test]
fn deny_then_error_result_is_denied_with_the_message() {
    let input = json!({"command": "curl evil"});
    let mut s = Session::new();
    apply_all(&mut s, &tool_turn("Bash", input.clone()));
    s.apply_value(&can_use_tool("r1", "toolu_p", "Bash", input));
    s.apply_from(Source::Client, &deny("r1", "Not that"));
    assert_eq!(s.tool("toolu_p").unwrap().status, ToolStatus::Denied);
    s.apply_value(&tool_result("toolu_p", "Not that", true));
    let t = s.tool("toolu_p").unwrap();
    assert_eq!(t.status, ToolStatus::Denied);
    assert_eq!(t.deny_message.as_deref(), Some("Not that"));
}

#[test]
fn error_result_without_denial_is_error() {
    let mut s = Session::new();
    apply_all(&mut s, &tool_turn("Read", json!({"file_path": "/nope"})));
    s.apply_value(&tool_result("toolu_p", "File does not exist.", true));
    assert_eq!(s.tool("toolu_p").unwrap().status, ToolStatus::Error);
}

#[test]
fn tool_progress_sets_elapsed_time() {
    let mut s = Session::new();
    apply_all(&mut s, &tool_turn("Bash", json!({"command": "sleep 5"})));
    s.apply_value(&json!({"type": "tool_progress", "tool_use_id": "toolu_p", "tool_name": "Bash", "parent_tool_use_id": null,
        "elapsed_time_seconds": 3.5, "uuid": uuid_like(), "session_id": "s"}));
    let t = s.tool("toolu_p").unwrap();
    assert_eq!(t.progress_secs, Some(3.5));
    assert_eq!(t.status, ToolStatus::Running);
}

#[test]
fn prompt_answered_by_another_controller_closes_with_a_notice() {
    let mut s = Session::new();
    apply_all(&mut s, &tool_turn("Bash", json!({"command": "ls"})));
    s.apply_value(&can_use_tool(
        "r1",
        "toolu_p",
        "Bash",
        json!({"command": "ls"}),
    ));
    s.apply_from(Source::Client, &allow("r1", json!({"command": "ls"})));
    assert!(s.prompts().is_empty());
    assert_eq!(s.settled("r1"), Some(&SettledBy::Other));
    assert!(s.notices().last().unwrap().text.contains("another window"));
}

#[test]
fn prompts_settled_in_the_history_of_an_opened_session_say_nothing() {
    // Opening a session replays its log: a prompt answered long ago was never shown here.
    let mut s = Session::new();
    s.set_replaying(true);
    apply_all(&mut s, &tool_turn("Bash", json!({"command": "ls"})));
    s.apply_value(&can_use_tool(
        "r1",
        "toolu_p",
        "Bash",
        json!({"command": "ls"}),
    ));
    s.apply_from(Source::Client, &allow("r1", json!({"command": "ls"})));
    s.set_replaying(false);
    assert!(s.prompts().is_empty());
    assert_eq!(s.settled("r1"), Some(&SettledBy::Other));
    assert!(s.notices().is_empty(), "{:?}", s.notices());
}

#[test]
fn prompt_cancelled_by_the_cli_closes_with_a_notice() {
    let mut s = Session::new();
    apply_all(
        &mut s,
        &tool_turn(
            "AskUserQuestion",
            json!({"questions": [{"question": "Which?", "options": [{"label": "A"}]}]}),
        ),
    );
    s.apply_value(&can_use_tool(
        "r9",
        "toolu_p",
        "AskUserQuestion",
        json!({"questions": []}),
    ));
    assert_eq!(s.prompts()[0].kind, PromptKind::Question);
    s.apply_value(&json!({"type": "control_cancel_request", "request_id": "r9"}));
    assert!(s.prompts().is_empty());
    assert_eq!(s.settled("r9"), Some(&SettledBy::Cancelled));
    assert!(s.notices().last().unwrap().text.contains("withdrew"));
    // A late duplicate of the request does not reopen it.
    s.apply_value(&can_use_tool(
        "r9",
        "toolu_p",
        "AskUserQuestion",
        json!({"questions": []}),
    ));
    assert!(s.prompts().is_empty());
}

#[test]
fn several_prompts_queue_in_order_and_kinds_are_told_apart() {
    let mut s = Session::new();
    s.apply_value(&can_use_tool("a", "t1", "Bash", json!({"command": "x"})));
    s.apply_value(&can_use_tool(
        "b",
        "t2",
        "ExitPlanMode",
        json!({"plan": "# Plan"}),
    ));
    s.apply_value(&json!({"type": "control_request", "request_id": "c", "request": {"subtype": "elicitation",
        "mcp_server_name": "srv", "message": "Your name?", "requested_schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}));
    s.apply_value(&json!({"type": "control_request", "request_id": "d", "request": {"subtype": "request_user_dialog",
        "dialog_kind": "confirm", "payload": {"text": "ok?"}}}));
    let kinds: Vec<_> = s
        .prompts()
        .iter()
        .map(|p| (p.request_id.clone(), p.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("a".to_string(), PromptKind::Permission),
            ("b".to_string(), PromptKind::PlanApproval),
            ("c".to_string(), PromptKind::Elicitation),
            ("d".to_string(), PromptKind::UserDialog),
        ]
    );
    assert_eq!(s.prompts()[2].description.as_deref(), Some("Your name?"));
    s.answer_locally("a");
    assert_eq!(
        s.open_prompts()
            .map(|p| p.request_id.as_str())
            .collect::<Vec<_>>(),
        vec!["b", "c", "d"]
    );
    s.answer_failed("a", "network");
    assert_eq!(
        s.open_prompts().count(),
        4,
        "a failed answer reopens the prompt"
    );
    s.answer_conflict("a");
    assert_eq!(s.open_prompts().count(), 3);
    assert_eq!(s.settled("a"), Some(&SettledBy::Other));
}

#[test]
fn relay_timeout_deny_settles_and_says_so() {
    let mut s = Session::new();
    s.apply_value(&can_use_tool("r1", "t1", "Bash", json!({"command": "x"})));
    s.apply_from(
        Source::Relay,
        &deny("r1", "No controller answered within 10 s"),
    );
    assert!(s.prompts().is_empty());
    assert!(
        s.notices()
            .iter()
            .any(|n| n.text.contains("No controller answered"))
    );
}

#[test]
fn observer_sees_prompts_but_is_never_asked() {
    let mut s = Session::observer();
    apply_all(&mut s, &tool_turn("Bash", json!({"command": "ls"})));
    s.apply_value(&can_use_tool(
        "r1",
        "toolu_p",
        "Bash",
        json!({"command": "ls"}),
    ));
    assert!(s.is_observer());
    assert_eq!(s.state(), SessionState::RequiresAction);
    assert!(!s.needs_you());
    assert_eq!(
        s.prompts().len(),
        1,
        "still visible as 'waiting for the controller'"
    );
    s.apply_from(Source::Client, &allow("r1", json!({"command": "ls"})));
    assert!(s.prompts().is_empty());
    assert!(
        s.notices().is_empty(),
        "observers get no 'answered elsewhere' notice"
    );
}

// ---------------------------------------------------------------- prompts typed here, echoes, coalescing

#[test]
fn local_prompt_is_pending_then_confirmed_by_its_echo_without_duplicate() {
    let mut s = Session::new();
    s.add_local_prompt("u-1", "hello");
    let key = s.order()[0].clone();
    let send_state = |s: &Session| match &s.item(&key).unwrap().kind {
        ItemKind::User(u) => u.send.clone(),
        _ => unreachable!(),
    };
    assert_eq!(send_state(&s), SendState::Pending);
    s.set_send_state("u-1", SendState::Sent);
    assert_eq!(send_state(&s), SendState::Sent);
    s.apply_from(
        Source::Client,
        &json!({"type": "user", "message": {"role": "user", "content": "hello"},
        "parent_tool_use_id": null, "session_id": "", "uuid": "u-1"}),
    );
    assert_eq!(send_state(&s), SendState::Confirmed);
    s.apply_value(&user_replay("u-1", "hello"));
    s.set_send_state("u-1", SendState::Sent); // a late POST answer does not downgrade
    assert_eq!(send_state(&s), SendState::Confirmed);
    assert_eq!(rows_of_role(&s, "user"), 1);
}

#[test]
fn failed_send_is_marked_and_retry_keeps_the_row() {
    let mut s = Session::new();
    s.add_local_prompt("u-2", "retry me");
    s.set_send_state("u-2", SendState::Failed("offline".into()));
    assert_eq!(s.local_prompt_text("u-2"), Some("retry me"));
    s.add_local_prompt("u-2", "retry me");
    assert_eq!(rows_of_role(&s, "user"), 1);
    s.set_send_state("u-2", SendState::Pending);
    s.apply_value(&user_replay("u-2", "retry me"));
    match &s.item("u:u-2").unwrap().kind {
        ItemKind::User(u) => assert_eq!(u.send, SendState::Confirmed),
        _ => unreachable!(),
    }
}

#[test]
fn coalesced_queued_prompts_show_each_prompt_once() {
    // Sent here: two prompts while a turn streams. The CLI replays the first, then the second under
    // its uuid with both texts joined by "\n", and answers both in one turn.
    let mut s = Session::new();
    s.add_local_prompt("q1", "first");
    s.add_local_prompt("q2", "second");
    s.apply_value(&json!({"type": "command_lifecycle", "command_uuid": "q2", "state": "queued", "uuid": uuid_like(), "session_id": "s"}));
    match &s.item("u:q2").unwrap().kind {
        ItemKind::User(u) => assert_eq!(u.lifecycle.as_deref(), Some("queued")),
        _ => unreachable!(),
    }
    s.apply_value(&user_replay("q1", "first"));
    s.apply_value(&user_replay("q2", "first\nsecond"));
    let texts: Vec<(String, bool)> = s
        .order()
        .iter()
        .filter_map(|k| match &s.item(k).unwrap().kind {
            ItemKind::User(u) => Some((u.text.clone(), u.coalesced)),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        vec![("first".into(), false), ("second".into(), true)]
    );

    // Seen only through the CLI's replays (another client's prompts).
    let mut o = Session::new();
    o.apply_value(&user_replay("q1", "first"));
    o.apply_value(&user_replay("q2", "first\nsecond"));
    let texts: Vec<(String, bool)> = o
        .order()
        .iter()
        .filter_map(|k| match &o.item(k).unwrap().kind {
            ItemKind::User(u) => Some((u.text.clone(), u.coalesced)),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        vec![("first".into(), false), ("second".into(), true)]
    );
}

#[test]
fn cli_made_user_frames_are_labelled() {
    let mut s = Session::new();
    s.apply_value(&json!({"type": "user", "message": {"role": "user", "content": "Output token limit hit. Resume directly"},
        "isSynthetic": true, "parent_tool_use_id": null, "session_id": "s", "uuid": "syn"}));
    s.apply_value(&user_replay(
        "cmd",
        "<local-command-stdout>Set model to opus</local-command-stdout>",
    ));
    let origins: Vec<_> = s
        .order()
        .iter()
        .filter_map(|k| match &s.item(k).unwrap().kind {
            ItemKind::User(u) => Some(u.origin),
            _ => None,
        })
        .collect();
    assert_eq!(
        origins,
        vec![UserOrigin::Synthetic, UserOrigin::LocalCommand]
    );
}

// ---------------------------------------------------------------- results, errors, frames after result

#[test]
fn api_error_inside_success_result_is_an_error_footer() {
    let mut s = Session::new();
    s.apply_value(&json!({"type": "assistant", "message": {"id": "msg_syn", "type": "message", "role": "assistant", "model": "<synthetic>",
        "content": [text("API Error: 500 Internal Server Error")], "stop_reason": "stop_sequence", "usage": {"input_tokens": 0, "output_tokens": 0}},
        "error": "server_error", "parent_tool_use_id": null, "session_id": "s", "uuid": uuid_like()}));
    s.apply_value(&result(
        0.0,
        json!({"is_error": true, "terminal_reason": "api_error", "api_error_status": 500,
        "stop_reason": "stop_sequence", "result": "API Error: 500 Internal Server Error"}),
    ));
    let mut saw_error_msg = false;
    let mut saw_footer = false;
    for k in s.order() {
        match &s.item(k).unwrap().kind {
            ItemKind::Assistant(a) => {
                assert_eq!(a.error.as_deref(), Some("server_error"));
                assert_eq!(a.model.as_deref(), Some("<synthetic>"));
                saw_error_msg = true;
            }
            ItemKind::Result(r) => {
                assert_eq!(r.subtype, "success");
                assert!(r.is_error);
                assert_eq!(r.api_error_status, Some(500));
                assert_eq!(
                    r.errors,
                    vec!["API Error: 500 Internal Server Error".to_string()]
                );
                saw_footer = true;
            }
            _ => {}
        }
    }
    assert!(saw_error_msg && saw_footer);
}

#[test]
fn frames_after_result_and_a_turn_the_cli_starts_itself() {
    let mut s = Session::new();
    apply_all(&mut s, &streamed_turn());
    assert_eq!(s.state(), SessionState::Idle);
    // A background subagent keeps working after the result...
    s.apply_value(&sub_assistant(
        "msg_bg",
        "toolu_1",
        text("background progress"),
    ));
    assert_eq!(
        s.state(),
        SessionState::Idle,
        "subagent frames do not restart the main turn"
    );
    // ...then the CLI starts a new turn on its own: init, streamed answer, a second result.
    s.apply_value(&json!({"type": "system", "subtype": "init", "mcp_servers": [], "slash_commands": [], "apiKeySource": "none", "output_style": "default", "skills": [], "plugins": [], "cwd": "/w", "model": "claude-sonnet-4-5", "permissionMode": "default",
        "tools": ["Bash"], "claude_code_version": "2.1.332", "uuid": uuid_like(), "session_id": "s"}));
    assert_eq!(s.state(), SessionState::Running);
    let m = "msg_auto";
    apply_all(
        &mut s,
        &[
            start(m),
            block_start(m, 0, json!({"type": "text", "text": ""})),
            text_delta(m, 0, "Background work finished."),
            assistant(m, text("Background work finished.")),
            block_stop(m, 0),
            message_stop(m),
            result(0.015, json!({})),
        ],
    );
    assert_eq!(s.state(), SessionState::Idle);
    assert_eq!(rows_of_role(&s, "result"), 2);
    assert!(
        (s.cost_total() - 0.015).abs() < 1e-12,
        "cumulative CLI total: {}",
        s.cost_total()
    );
    let costs: Vec<(f64, f64)> = s
        .order()
        .iter()
        .filter_map(|k| match &s.item(k).unwrap().kind {
            ItemKind::Result(r) => Some((r.turn_cost, r.session_cost)),
            _ => None,
        })
        .collect();
    assert!(
        (costs[0].0 - 0.01).abs() < 1e-12 && (costs[1].0 - 0.005).abs() < 1e-12,
        "{costs:?}"
    );
}

#[test]
fn running_cost_survives_a_cli_restart_and_prefers_per_turn_usage() {
    let mut s = Session::new();
    s.apply_value(&result(0.02, json!({})));
    s.apply_value(&result(0.05, json!({})));
    // A new CLI process (total restarts from 0).
    s.apply_value(&result(0.01, json!({})));
    assert!((s.cost_total() - 0.06).abs() < 1e-12, "{}", s.cost_total());
    s.apply_value(&result(
        0.04,
        json!({"model_usage_since_last_result": {"m": {"costUSD": 0.03}}}),
    ));
    let last = s
        .order()
        .iter()
        .rev()
        .find_map(|k| match &s.item(k).unwrap().kind {
            ItemKind::Result(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert!((last.turn_cost - 0.03).abs() < 1e-12);
    assert!(
        (last.session_cost - 0.09).abs() < 1e-12,
        "{}",
        last.session_cost
    );
    assert_eq!(last.input_tokens, Some(15));
}

// ---------------------------------------------------------------- subagents

#[test]
fn subagent_frames_nest_under_the_agent_tool_call() {
    let mut s = Session::new();
    s.apply_value(&assistant(
        "msg_a",
        tool_use(
            "toolu_agent",
            "Agent",
            json!({"description": "Explore", "prompt": "Find it"}),
        ),
    ));
    s.apply_value(&json!({"type": "user", "message": {"role": "user", "content": "Find it"}, "parent_tool_use_id": "toolu_agent",
        "session_id": "s", "uuid": uuid_like()}));
    s.apply_value(&sub_assistant(
        "msg_sub",
        "toolu_agent",
        tool_use("toolu_inner", "Bash", json!({"command": "grep -r x"})),
    ));
    let mut inner_result = tool_result("toolu_inner", "x found", false);
    inner_result["parent_tool_use_id"] = json!("toolu_agent");
    s.apply_value(&inner_result);
    s.apply_value(&tool_result("toolu_agent", "Report: found x", false));
    assert_eq!(
        s.order().len(),
        1,
        "everything nests under the one top-level row"
    );
    let agent = s.tool("toolu_agent").unwrap().clone();
    assert_eq!(agent.children.len(), 2);
    assert_eq!(agent.status, ToolStatus::Done);
    let inner = s.tool("toolu_inner").unwrap();
    assert_eq!(inner.status, ToolStatus::Done);
    assert_eq!(inner.owner, "a:msg_sub");
    // Changing a nested card bumps the top-level row's revision (so it re-renders).
    let top = s.order()[0].clone();
    let before = s.item_rev(&top);
    s.apply_value(&json!({"type": "tool_progress", "tool_use_id": "toolu_inner", "tool_name": "Bash", "parent_tool_use_id": "toolu_agent",
        "elapsed_time_seconds": 1.0, "uuid": uuid_like(), "session_id": "s"}));
    assert!(s.item_rev(&top) > before);
    match &s.item(&agent.children[0]).unwrap().kind {
        ItemKind::User(u) => assert_eq!(u.origin, UserOrigin::SubagentPrompt),
        _ => panic!("subagent prompt first"),
    }
}

// ---------------------------------------------------------------- system frames, unknown frames, state

#[test]
fn system_frames_become_rows_or_state() {
    let mut s = Session::new();
    let init = |model: &str| {
        json!({"type": "system", "subtype": "init", "mcp_servers": [], "slash_commands": [], "apiKeySource": "none", "output_style": "default", "skills": [], "plugins": [], "cwd": "/w", "model": model, "permissionMode": "default",
        "tools": ["Bash", "Read"], "claude_code_version": "2.1.332", "uuid": uuid_like(), "session_id": "s"})
    };
    s.apply_value(&init("m1"));
    s.apply_value(&init("m1"));
    s.apply_value(&init("m2"));
    assert_eq!(
        rows_of_role(&s, "system"),
        2,
        "init shown first and on change only"
    );
    assert_eq!(s.info().model.as_deref(), Some("m2"));
    s.apply_value(&json!({"type": "system", "subtype": "status", "status": null, "permissionMode": "acceptEdits", "uuid": uuid_like(), "session_id": "s"}));
    assert_eq!(s.info().permission_mode.as_deref(), Some("acceptEdits"));
    s.apply_value(&json!({"type": "system", "subtype": "api_retry", "attempt": 2, "max_retries": 10, "retry_delay_ms": 1200,
        "error_status": 529, "error": "overloaded", "uuid": uuid_like(), "session_id": "s"}));
    s.apply_value(&json!({"type": "system", "subtype": "compact_boundary", "compact_metadata": {"trigger": "manual", "pre_tokens": 5000},
        "uuid": uuid_like(), "session_id": "s"}));
    s.apply_value(&json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed_warning", "rateLimitType": "five_hour",
        "resetsAt": 1_900_000_000}, "uuid": uuid_like(), "session_id": "s"}));
    assert_eq!(s.rate_limit().unwrap().status, "allowed_warning");
    s.apply_value(&json!({"type": "system", "subtype": "thinking_tokens", "estimated_tokens": 5, "estimated_tokens_delta": 5, "uuid": uuid_like(), "session_id": "s"}));
    s.apply_value(&json!({"type": "system", "subtype": "informational", "content": "Heads up", "level": "warning", "uuid": uuid_like(), "session_id": "s"}));
    let kinds: Vec<String> = s
        .order()
        .iter()
        .filter_map(|k| match &s.item(k).unwrap().kind {
            ItemKind::System(sr) => Some(match &sr.kind {
                SystemKind::Init { .. } => "init".to_string(),
                SystemKind::ApiRetry { attempt, .. } => format!("retry{attempt}"),
                SystemKind::CompactBoundary { .. } => "compact".into(),
                SystemKind::RateLimit { .. } => "ratelimit".into(),
                SystemKind::Notice { level, .. } => format!("notice-{level}"),
                SystemKind::Ended { .. } => "ended".into(),
            }),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "init",
            "init",
            "retry2",
            "compact",
            "ratelimit",
            "notice-warning"
        ]
    );
    s.apply_from(Source::Relay, &json!({"type": "system", "subtype": "session_state_changed", "state": "ended", "exit_code": 1,
        "signal": null, "stderr_tail": "boom", "uuid": uuid_like(), "session_id": "s"}));
    assert_eq!(s.state(), SessionState::Ended);
}

#[test]
fn unknown_types_and_subtypes_are_kept_as_raw_rows() {
    let mut s = Session::new();
    s.apply_value(&json!({"type": "brand_new_thing", "payload": {"x": 1}, "uuid": "n1"}));
    s.apply_value(
        &json!({"type": "system", "subtype": "from_the_future", "uuid": "n2", "session_id": "s"}),
    );
    s.apply_value(&json!({"no_type_at_all": true}));
    let labels: Vec<String> = s
        .order()
        .iter()
        .filter_map(|k| match &s.item(k).unwrap().kind {
            ItemKind::Raw(r) => Some(r.label.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        labels,
        vec![
            "brand_new_thing",
            "system/from_the_future",
            "(no type) (could not read: not a message: expected a JSON object with a string \"type\" field)"
        ]
    );
    match &s.item(&s.order()[0]).unwrap().kind {
        ItemKind::Raw(r) => assert!(r.json.contains("\"x\": 1")),
        _ => unreachable!(),
    }
    // A redelivery (same uuid) is not shown twice.
    s.apply_value(&json!({"type": "brand_new_thing", "payload": {"x": 1}, "uuid": "n1"}));
    assert_eq!(rows_of_role(&s, "raw"), 3);
}

#[test]
fn set_model_and_mode_are_acknowledged_and_initialize_fills_models() {
    let mut s = Session::new();
    s.set_summary(&json!({"id": "x", "state": "idle", "model": "claude-sonnet-4-5", "permission_mode": "default", "cwd": "/w",
        "initialize": {"models": [{"value": "default", "displayName": "Default", "description": "d"},
                                  {"value": "opus", "displayName": "Opus", "description": "o"}], "current_permission_mode": "default"}}));
    assert_eq!(
        s.info()
            .models
            .iter()
            .map(|m| m.value.as_str())
            .collect::<Vec<_>>(),
        vec!["default", "opus"]
    );
    s.local_request("m1", LocalRequest::SetModel(Some("opus".into())));
    s.apply_value(&json!({"type": "control_response", "response": {"subtype": "success", "request_id": "m1", "response": {}}}));
    assert_eq!(s.info().model.as_deref(), Some("opus"));
    s.local_request("p1", LocalRequest::SetPermissionMode("plan".into()));
    s.apply_value(&json!({"type": "control_response", "response": {"subtype": "success", "request_id": "p1", "response": {"mode": "plan"}}}));
    assert_eq!(s.info().permission_mode.as_deref(), Some("plan"));
    s.local_request(
        "p2",
        LocalRequest::SetPermissionMode("bypassPermissions".into()),
    );
    s.apply_value(&json!({"type": "control_response", "response": {"subtype": "error", "request_id": "p2", "error": "not allowed"}}));
    assert_eq!(s.info().permission_mode.as_deref(), Some("plan"));
    assert!(s.notices().last().unwrap().text.contains("not allowed"));
}

#[test]
fn interrupt_from_another_controller_is_shown() {
    let mut s = Session::new();
    s.apply_from(
        Source::Client,
        &json!({"type": "control_request", "request_id": "x", "request": {"subtype": "interrupt"}}),
    );
    assert_eq!(s.interrupt_state(), InterruptState::Requested);
    s.apply_value(&json!({"type": "control_response", "response": {"subtype": "success", "request_id": "x", "response": {"still_queued": []}}}));
    assert_eq!(s.interrupt_state(), InterruptState::Acknowledged);
}

#[test]
fn revisions_change_only_for_touched_rows() {
    let frames = streamed_turn();
    let mut s = Session::new();
    apply_all(&mut s, &frames[..8]);
    let first = s.order()[0].clone();
    let rev_first = s.item_rev(&first);
    let order_rev = s.order_rev();
    s.apply_value(&frames[8]); // a json delta for a block of the same row
    assert!(s.item_rev(&first) > rev_first);
    assert_eq!(
        s.order_rev(),
        order_rev,
        "a delta does not change the row order"
    );
}

fn form_rows(s: &Session) -> Vec<(String, String)> {
    s.order()
        .iter()
        .filter_map(|k| match &s.item(k).unwrap().kind {
            ItemKind::System(row) => match &row.kind {
                SystemKind::Notice { title, text, .. } if title.starts_with("form · ") => {
                    Some((title.clone(), text.clone()))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn elicitation(rid: &str) -> Value {
    json!({"type": "control_request", "request_id": rid, "request": {"subtype": "elicitation",
        "mcp_server_name": "deploy", "message": "Where to?", "mode": "form",
        "requested_schema": {"type": "object", "properties": {"env": {"type": "string"}}}}})
}

#[test]
fn an_answered_form_stays_in_the_transcript_as_text() {
    let mut s = Session::new();
    s.apply_value(&elicitation("e1"));
    assert_eq!(s.prompts()[0].kind, PromptKind::Elicitation);
    // Answered here: the echo of our own answer settles it.
    s.answer_locally("e1");
    let hostile = "<img src=x onerror=alert(1)>".repeat(20);
    s.apply_from(
        Source::Client,
        &json!({"type": "control_response", "response": {"subtype": "success", "request_id": "e1",
            "response": {"action": "accept", "content": {"env": "staging", "replicas": 2, "notify": false, "note": hostile}}}}),
    );
    assert!(s.prompts().is_empty());
    let rows = form_rows(&s);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "form · deploy");
    assert!(
        rows[0]
            .1
            .starts_with("You submitted: env = staging, replicas = 2, notify = no, note = <img"),
        "{rows:?}"
    );
    assert!(rows[0].1.ends_with('…'), "long values are cut");
    // A second echo adds nothing.
    s.apply_from(
        Source::Client,
        &json!({"type": "control_response", "response": {"subtype": "success", "request_id": "e1",
            "response": {"action": "accept", "content": {}}}}),
    );
    assert_eq!(form_rows(&s).len(), 1);

    // Declined elsewhere; withdrawn by the CLI.
    s.apply_value(&elicitation("e2"));
    s.apply_from(
        Source::Client,
        &json!({"type": "control_response", "response": {"subtype": "success", "request_id": "e2",
            "response": {"action": "decline"}}}),
    );
    s.apply_value(&elicitation("e3"));
    s.apply_value(&json!({"type": "control_cancel_request", "request_id": "e3"}));
    let rows = form_rows(&s);
    assert_eq!(rows[1].1, "Another window declined to answer.");
    assert_eq!(
        rows[2].1,
        "Withdrawn by Claude Code before it was answered."
    );

    // An observer reads who it was.
    let mut o = Session::observer();
    o.apply_value(&elicitation("e4"));
    o.apply_from(
        Source::Client,
        &json!({"type": "control_response", "response": {"subtype": "success", "request_id": "e4",
            "response": {"action": "cancel"}}}),
    );
    assert_eq!(form_rows(&o)[0].1, "The controller dismissed the form.");
}

#[test]
fn slash_commands_come_from_initialize_and_match_by_prefix_first() {
    let mut s = Session::new();
    s.set_initialize(&json!({"commands": [
        {"name": "review", "description": "Review a PR", "argumentHint": "<pr>"},
        {"name": "compact", "description": "Compact"},
        {"name": "/config", "description": "Config"},
        {"name": "", "description": "nameless"},
        {"name": "__remote-workflow", "description": "internal"},
        {"description": "no name"},
    ]}));
    let cmds = s.info().commands.clone();
    assert_eq!(
        cmds.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["review", "compact", "config"],
        "a leading slash is dropped; nameless and internal (`__`) entries skipped"
    );
    assert_eq!(cmds[0].argument_hint, "<pr>");
    let names = |t: &str, limit| {
        slash_matches(&cmds, t, limit)
            .into_iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names("/", 8), ["review", "compact", "config"]);
    assert_eq!(names("/co", 8), ["compact", "config"]);
    assert_eq!(names("/CO", 8), ["compact", "config"], "case-insensitive");
    assert_eq!(names("/ev", 8), ["review"], "contains, after prefixes");
    assert_eq!(names("/c", 1), ["compact"]);
    assert!(names("co", 8).is_empty(), "only after a slash");
    assert!(
        names("/compact now", 8).is_empty(),
        "not once arguments start"
    );
    // commands_changed replaces the list.
    s.apply_value(
        &json!({"type": "system", "subtype": "commands_changed", "commands": [{"name": "init", "description": "", "argumentHint": ""}],
        "uuid": uuid_like(), "session_id": "s"}),
    );
    let now: Vec<_> = slash_matches(&s.info().commands, "/", 8)
        .into_iter()
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(now, ["init"]);
}

#[test]
fn a_known_type_whose_body_does_not_fit_is_shown_raw_with_the_error() {
    let mut s = Session::new();
    // `result` without its required fields: decoded as a `result`, it does not fit.
    s.apply_value(
        &json!({"type": "result", "subtype": "success", "uuid": "bad1", "session_id": "s"}),
    );
    // An `assistant` whose message is a string.
    s.apply_value(
        &json!({"type": "assistant", "message": "hi", "uuid": "bad2", "session_id": "s",
        "parent_tool_use_id": null}),
    );
    let raw: Vec<(String, String)> = s
        .order()
        .iter()
        .filter_map(|k| match &s.item(k).unwrap().kind {
            ItemKind::Raw(r) => Some((r.label.clone(), r.json.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(raw.len(), 2, "both shown, neither dropped: {raw:?}");
    assert!(
        raw[0]
            .0
            .starts_with("result/success (could not read: bad `result` message")
    );
    assert!(raw[0].1.contains("\"bad1\""));
    assert!(
        raw[1]
            .0
            .starts_with("assistant (could not read: bad `assistant` message")
    );
    assert_eq!(rows_of_role(&s, "result"), 0);
    assert_eq!(rows_of_role(&s, "assistant"), 0);
}

#[test]
fn a_prompt_whose_request_does_not_fit_is_still_offered_with_the_error_shown() {
    let mut s = Session::new();
    // `tool_use_id` must be a string: the request does not decode, but the CLI waits on it.
    s.apply_value(&json!({"type": "control_request", "request_id": "r-odd", "request": {
        "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}, "tool_use_id": 7}}));
    assert_eq!(s.prompts().len(), 1, "still answerable");
    assert_eq!(s.prompts()[0].kind, PromptKind::Permission);
    assert_eq!(rows_of_role(&s, "raw"), 1, "and shown raw with the error");
    // A request nobody answers here (not a prompt) that does not fit: shown raw once.
    s.apply_value(
        &json!({"type": "control_request", "request_id": "r-hook", "request": {
        "subtype": "hook_callback", "callback_id": 3}}),
    );
    assert_eq!(s.prompts().len(), 1);
    assert_eq!(rows_of_role(&s, "raw"), 2);
}
