//! Every CLI→client line of the real CLI 2.1.332 captures, run through the transcript model.
//! (Native only: it reads the capture files.)

use std::path::PathBuf;

use bridge_console::state::{
    Block, ItemKind, PromptKind, Session, SessionState, Source, SystemKind, ToolStatus, UserOrigin,
};
use serde_json::Value;

use crate::model::rows::rows;

/// The frames of a capture file: `<< ` lines are the CLI's (source worker), `>> ` lines what the client
/// wrote (source client, as the relay echoes them).
fn frames_of(path: &std::path::Path) -> Vec<(Source, Value)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut frames = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let (source, body) = if let Some(b) = line.strip_prefix("<< ") {
            (Source::Worker, b)
        } else if let Some(b) = line.strip_prefix(">> ") {
            (Source::Client, b)
        } else {
            continue;
        };
        let v: Value = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1));
        frames.push((source, v));
    }
    frames
}

/// One of our own captures (`tests/fixtures/real-cli-2.1.332/bridge-capture-<name>.ndjson`).
fn our_capture(name: &str) -> Vec<(Source, Value)> {
    frames_of(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!(
        "tests/fixtures/real-cli-2.1.332/bridge-capture-{name}.ndjson"
    )))
}

fn fixtures() -> Vec<(String, Vec<(Source, Value)>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-cli-2.1.332");
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixture dir")
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        // The three captures shared with the project; ours (`bridge-capture-*`) have their own tests.
        let name = path.file_name().unwrap().to_string_lossy();
        if path.extension().and_then(|e| e.to_str()) != Some("ndjson")
            || !name.starts_with("live-capture-")
        {
            continue;
        }
        out.push((
            path.file_name().unwrap().to_string_lossy().into_owned(),
            frames_of(&path),
        ));
    }
    assert_eq!(out.len(), 3, "expected the three real captures");
    out
}

fn cli_lines(frames: &[(Source, Value)]) -> impl Iterator<Item = &Value> {
    frames
        .iter()
        .filter(|(s, _)| *s == Source::Worker)
        .map(|(_, v)| v)
}

fn run(frames: &[(Source, Value)], mut keep: impl FnMut(&Value) -> bool) -> Session {
    let mut s = Session::new();
    for v in cli_lines(frames).filter(|v| keep(v)) {
        s.apply_from(Source::Worker, v);
    }
    s
}

fn raw_rows(s: &Session) -> Vec<String> {
    rows(s, |k| match k {
        ItemKind::Raw(r) => Some(r.label.clone()),
        _ => None,
    })
}

fn assistant_texts(s: &Session) -> Vec<String> {
    let mut out = Vec::new();
    for k in s.order() {
        if let ItemKind::Assistant(a) = &s.item(k).unwrap().kind {
            for slot in &a.blocks {
                if let Block::Text(t) = &slot.block {
                    out.push(t.clone());
                }
            }
        }
    }
    out
}

#[test]
fn every_cli_line_of_every_capture_applies_and_nothing_is_unknown() {
    for (name, frames) in fixtures() {
        let s = run(&frames, |_| true);
        assert_eq!(s.applied() as usize, cli_lines(&frames).count(), "{name}");
        assert!(
            raw_rows(&s).is_empty(),
            "{name}: known frames shown raw: {:?}",
            raw_rows(&s)
        );
        assert_eq!(s.state(), SessionState::Idle, "{name}");
        assert!(s.prompts().is_empty(), "{name}: a prompt stayed open");
        assert!(
            (s.cost_total() - 0.000822).abs() < 1e-9,
            "{name}: cost {}",
            s.cost_total()
        );
        assert_eq!(
            assistant_texts(&s),
            vec![
                "I'll run a command.".to_string(),
                "The command printed: hello".to_string()
            ],
            "{name}"
        );
        // No streaming state is left behind.
        for k in s.order() {
            if let ItemKind::Assistant(a) = &s.item(k).unwrap().kind {
                assert!(!a.streaming, "{name}: {k} still streaming");
            }
        }
    }
}

#[test]
fn losing_every_stream_event_gives_the_identical_transcript() {
    for (name, frames) in fixtures() {
        let full = run(&frames, |_| true);
        let durable_only = run(&frames, |v| v["type"] != "stream_event");
        assert_eq!(full.snapshot(), durable_only.snapshot(), "{name}");
        // And losing only some of them (every other delta) too.
        let mut n = 0;
        let some = run(&frames, |v| {
            n += 1;
            v["type"] != "stream_event" || v["event"]["type"] != "content_block_delta" || n % 2 == 0
        });
        assert_eq!(full.snapshot(), some.snapshot(), "{name}");
    }
}

#[test]
fn capture_tool_cards_show_what_happened() {
    for (name, frames) in fixtures() {
        let s = run(&frames, |_| true);
        let tool_id = frames
            .iter()
            .find_map(|(_, v)| {
                (v["type"] == "assistant" && v["message"]["content"][0]["type"] == "tool_use").then(
                    || {
                        v["message"]["content"][0]["id"]
                            .as_str()
                            .unwrap()
                            .to_string()
                    },
                )
            })
            .expect("a tool call");
        let tool = s.tool(&tool_id).expect("tool card");
        assert_eq!(tool.name, "Bash");
        match name.as_str() {
            "live-capture-allow-updatedInput-replay.ndjson" => {
                assert_eq!(tool.status, ToolStatus::Done);
                // REAL-CLI-NOTES 10: the assistant frame keeps the original command, the card shows
                // what actually ran.
                assert_eq!(tool.input["command"], "touch created.txt");
                assert!(tool.edited());
                assert_eq!(tool.display_input()["command"], "touch created_by_host.txt");
            }
            "live-capture-deny-interrupt.ndjson" => {
                assert_eq!(tool.status, ToolStatus::Denied);
                assert_eq!(tool.deny_message.as_deref(), Some("User said no"));
                assert!(!tool.edited());
            }
            "live-capture-autoallowed.ndjson" => {
                assert_eq!(tool.status, ToolStatus::Done);
                assert_eq!(tool.output.as_ref().unwrap().text, "hello");
            }
            other => panic!("unexpected capture {other}"),
        }
    }
}

#[test]
fn capture_replayed_through_a_relay_with_client_echoes() {
    // Through the relay, what the client posted comes back with source "client": the `>>` lines.
    for (name, frames) in fixtures() {
        let mut s = Session::new();
        for (source, v) in &frames {
            s.apply_from(source.clone(), v);
        }
        let users: Vec<_> = rows(&s, |k| match k {
            ItemKind::User(u) => Some(u.text.clone()),
            _ => None,
        });
        assert_eq!(
            users,
            vec!["Run echo hello".to_string()],
            "{name}: one prompt row, no duplicate"
        );
        assert!(s.prompts().is_empty(), "{name}");
        assert!(raw_rows(&s).is_empty(), "{name}: {:?}", raw_rows(&s));
    }
}

#[test]
fn a_half_replayed_capture_shows_a_pending_prompt_and_requires_action() {
    let (_, frames) = fixtures()
        .into_iter()
        .find(|(n, _)| n.contains("deny"))
        .unwrap();
    let mut s = Session::new();
    for (_, v) in frames.iter().filter(|(src, _)| *src == Source::Worker) {
        s.apply_from(Source::Worker, v);
        if v["type"] == "control_request" {
            break;
        }
    }
    assert_eq!(s.state(), SessionState::RequiresAction);
    assert!(s.needs_you());
    let p = &s.prompts()[0];
    assert_eq!(p.tool_name, "Bash");
    assert_eq!(
        p.blocked_path.as_deref(),
        Some("/workspace/demo/created.txt")
    );
    assert_eq!(p.suggestions.len(), 3);
    let tool = s.tool(p.tool_use_id.as_deref().unwrap()).unwrap();
    assert_eq!(tool.status, ToolStatus::PendingPermission);
}

#[test]
fn mcp_elicitation_capture_opens_a_form_prompt_and_settles() {
    // Our capture: the real CLI runs an MCP tool that asks through `elicitation/create`; the CLI first
    // asks whether the tool may run (can_use_tool), then forwards the elicitation.
    let mut s = Session::new();
    let mut kinds = Vec::new();
    let mut tool_id = None;
    for (source, v) in our_capture("mcp-elicitation") {
        s.apply_from(source, &v);
        if v["type"] == "assistant" {
            tool_id = tool_id.or_else(|| {
                v["message"]["content"]
                    .as_array()?
                    .iter()
                    .find(|b| b["type"] == "tool_use")
                    .and_then(|b| b["id"].as_str())
                    .map(str::to_string)
            });
        }
        if let Some(p) = s.prompts().last()
            && kinds.last() != Some(&p.request_id)
        {
            kinds.push(p.request_id.clone());
            match p.kind {
                PromptKind::Permission => assert_eq!(p.tool_name, "mcp__asker__ask_user"),
                PromptKind::Elicitation => {
                    assert_eq!(p.tool_name, "asker", "the MCP server names the form");
                    assert_eq!(
                        p.description.as_deref(),
                        Some("What should the release be called?")
                    );
                    assert_eq!(p.input["required"][0], "answer", "the schema is the input");
                    assert_eq!(p.request["property_order"][1], "urgent");
                }
                ref k => panic!("unexpected prompt {k:?}"),
            }
        }
    }
    assert_eq!(kinds.len(), 2, "a permission prompt, then the form");
    assert!(s.prompts().is_empty(), "both answered");
    let tool = tool_id
        .and_then(|id| s.tool(&id).cloned())
        .expect("the MCP tool card");
    assert_eq!(tool.name, "mcp__asker__ask_user");
    assert_eq!(tool.status, ToolStatus::Done);
    assert!(tool.output.as_ref().unwrap().text.contains("Nimbus"));
    assert!(raw_rows(&s).is_empty(), "{:?}", raw_rows(&s));
    assert_eq!(s.state(), SessionState::Idle);
    // What was entered stays in the transcript, after the tool card, whatever the tool returns.
    let form = rows(&s, |k| match k {
        ItemKind::System(row) => match &row.kind {
            SystemKind::Notice { title, text, .. } if title == "form · asker" => {
                Some(text.clone())
            }
            _ => None,
        },
        _ => None,
    })
    .into_iter()
    .next()
    .expect("a row for the answered form");
    assert_eq!(
        form,
        "Another window submitted: answer = Nimbus, urgent = yes"
    );
}

#[test]
fn compact_capture_shows_a_boundary_and_the_command_output_without_tags() {
    // Our capture: two turns, then `/compact` sent as a prompt.
    let mut s = Session::new();
    // As through the relay: what the client wrote comes back too (source client).
    for (source, v) in our_capture("compact") {
        s.apply_from(source, &v);
    }
    let mut boundary = 0;
    let mut commands = Vec::new();
    let mut prompts = Vec::new();
    for k in s.order() {
        match &s.item(k).unwrap().kind {
            ItemKind::System(row) if matches!(row.kind, SystemKind::CompactBoundary { .. }) => {
                boundary += 1
            }
            ItemKind::User(u) if u.origin == UserOrigin::LocalCommand => {
                commands.push(bridge_console::format::local_command(&u.text))
            }
            ItemKind::User(u) if u.origin == UserOrigin::Prompt => prompts.push(u.text.clone()),
            _ => {}
        }
    }
    assert_eq!(boundary, 1);
    assert!(
        commands.contains(&("Command output", "Compacted".to_string())),
        "{commands:?}"
    );
    assert_eq!(
        prompts,
        ["say something first", "and once more", "/compact"]
    );
    assert!(raw_rows(&s).is_empty(), "{:?}", raw_rows(&s));
    assert_eq!(s.state(), SessionState::Idle);
}
