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

#[path = "model/builders.rs"]
mod builders;
#[path = "model/results_system.rs"]
mod results_system;
#[path = "model/rows.rs"]
pub mod rows;

use builders::*;
use rows::rows;

// ---------------------------------------------------------------- streaming

#[test]
fn streaming_text_appears_before_the_durable_frame_and_is_replaced_without_duplicate() {
    let frames = streamed_turn();
    let mut s = Session::new();
    apply_expecting(
        &mut s,
        &frames[..4],
        vec![Block::Text("Hello **world**".into())],
    );
    let key = s.order()[0].clone();
    match &s.item(&key).unwrap().kind {
        ItemKind::Assistant(a) => {
            assert!(a.streaming);
            assert!(a.blocks[0].open && !a.blocks[0].durable);
        }
        _ => panic!("first row is the assistant"),
    }
    apply_expecting(
        &mut s,
        &frames[4..7],
        vec![Block::Text("Hello **world**!".into())],
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
    let once = session_of(&durable);
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
    let a = session_of(&frames);
    let b = session_of(&only_durable(&frames));
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
    let full = session_of(&frames);
    // Drop a middle text delta and the second JSON delta (a reconnect gap).
    let lossy: Vec<Value> = frames
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 9)
        .map(|(_, f)| f.clone())
        .collect();
    let s = session_of(&lossy);
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
    let s = streamed_then_settled(
        &frames,
        4,
        vec![Block::Thinking("Let me check".into())],
        vec![
            Block::Thinking("Let me check".into()),
            Block::Text("Answer".into()),
        ],
    );
    let b = session_of(&only_durable(&frames));
    assert_eq!(s.snapshot(), b.snapshot());
}

#[test]
fn redelivered_durable_frames_change_nothing() {
    let frames = streamed_turn();
    let mut a = session_of(&frames);
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
    apply_expecting(&mut s, &frames, vec![Block::Text("Partial ans".into())]);
    assert!(
        s.tool("toolu_x").is_none(),
        "the abandoned tool_use leaves no card"
    );
    let origins = rows(&s, |k| match k {
        ItemKind::User(u) => Some(u.origin),
        _ => None,
    });
    assert_eq!(origins.first(), Some(&UserOrigin::Synthetic));
    let b = session_of(&only_durable(&frames));
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
    let s = streamed_then_settled(
        &frames,
        3,
        vec![Block::Text("This will be cut o".into())],
        vec![Block::Text("The full answer.".into())],
    );
    assert_eq!(rows_of_role(&s, "assistant"), 1);
    let b = session_of(&only_durable(&frames));
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

/// Applies to `s` a turn calling `tool` with `input` (`toolu_p`), and the CLI asking permission
/// for it (request `r1`).
fn ask_permission(s: &mut Session, tool: &str, input: Value) {
    apply_all(s, &tool_turn(tool, input.clone()));
    s.apply_value(&can_use_tool("r1", "toolu_p", tool, input));
}

#[test]
fn permission_allow_with_edited_input_shows_what_ran() {
    let input = json!({"command": "rm -rf build", "description": "Clean"});
    let mut s = Session::new();
    ask_permission(&mut s, "Bash", input.clone());
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
    ask_permission(&mut s, "Bash", input.clone());
    s.apply_value(&allow("r1", input));
    assert!(!s.tool("toolu_p").unwrap().edited());
}

#[test]
fn deny_then_error_result_is_denied_with_the_message() {
    let input = json!({"command": "curl evil"});
    let mut s = Session::new();
    ask_permission(&mut s, "Bash", input);
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
    ask_permission(&mut s, "Bash", json!({"command": "ls"}));
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
    ask_permission(&mut s, "Bash", json!({"command": "ls"}));
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
    ask_permission(&mut s, "Bash", json!({"command": "ls"}));
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
    let texts = |s: &Session| -> Vec<(String, bool)> {
        rows(s, |k| match k {
            ItemKind::User(u) => Some((u.text.clone(), u.coalesced)),
            _ => None,
        })
    };
    let each_once = vec![("first".into(), false), ("second".into(), true)];
    assert_eq!(texts(&s), each_once);

    // Seen only through the CLI's replays (another client's prompts).
    let mut o = Session::new();
    o.apply_value(&user_replay("q1", "first"));
    o.apply_value(&user_replay("q2", "first\nsecond"));
    assert_eq!(texts(&o), each_once);
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
    let origins = rows(&s, |k| match k {
        ItemKind::User(u) => Some(u.origin),
        _ => None,
    });
    assert_eq!(
        origins,
        vec![UserOrigin::Synthetic, UserOrigin::LocalCommand]
    );
}
