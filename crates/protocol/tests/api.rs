//! The relay's REST shapes: what the relay writes parses into the typed structs and serializes back
//! to the same JSON, unknown values included.

use bridge_protocol::SessionState;
use bridge_protocol::api::{
    CliLink, ExitInfo, Origin, SessionDetail, SessionList, SessionSummary, Source,
};
use serde_json::{Value, json};

/// A relay session as the list shows it (every field the relay writes).
fn relay_entry() -> Value {
    json!({
        "id": "cse_1", "state": "requires_action", "cwd": "/w", "model": null,
        "permission_mode": "default", "title": "Fix CI", "created_at": "2026-12-01T10:00:00Z",
        "last_activity_at": "2026-12-01T10:05:00Z", "pending_permissions": 1,
        "exit": null, "archived": false, "last_sequence_num": 42,
        "worktree": {"path": "/w/.bridge/wt", "branch": null},
        "worktree_kept": "uncommitted changes",
        "cli": {"session_id": "27784601-dc95-46a5-9f01-072efd77a9f0",
                "forked_from": {"id": "cse_0", "title": "Before", "before_message": "m1"}},
        "origin": "relay"
    })
}

/// A CLI session (Claude Code's own transcript).
fn cli_entry() -> Value {
    json!({
        "id": "27784601-dc95-46a5-9f01-072efd77a9f0", "origin": "cli", "state": "idle",
        "cwd": null, "title": null, "git_branch": null, "last_activity_at": "2026-12-01T09:00:00Z",
        "created_at": null, "model": null, "permission_mode": null, "pending_permissions": 0,
        "archived": false, "size_bytes": 1234
    })
}

fn round_trip(v: &Value) -> SessionSummary {
    let s: SessionSummary = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(&serde_json::to_value(&s).unwrap(), v, "same JSON back");
    s
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn relay_summary_round_trips_typed() {
    let s = round_trip(&relay_entry());
    assert_eq!(s.state, SessionState::RequiresAction);
    assert_eq!(s.origin(), Origin::Relay);
    assert_eq!(s.exit, Some(None), "exit: null is kept as null");
    assert_eq!(s.git_branch, None, "absent stays absent");
    assert_eq!(s.last_sequence_num, Some(42));
    let cli = s.cli.unwrap();
    assert_eq!(cli.forked_from.unwrap().title.as_deref(), Some("Before"));
    assert_eq!(s.worktree.unwrap().path, "/w/.bridge/wt");

    let mut ended = relay_entry();
    ended["exit"] =
        json!({"exit_code": 0, "signal": null, "stderr_tail": "", "at": "2026-12-01T10:06:00Z"});
    let s = round_trip(&ended);
    assert_eq!(s.exit.unwrap().unwrap().exit_code, Some(0));
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn cli_summary_round_trips_typed() {
    let s = round_trip(&cli_entry());
    assert_eq!(s.origin, Some(Origin::Cli));
    assert_eq!(s.git_branch, Some(None), "git_branch: null is kept");
    assert_eq!(s.git_branch(), None);
    assert_eq!(s.exit, None, "no exit key for a CLI session");
    assert_eq!(s.size_bytes, Some(1234));
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn unknown_state_origin_and_fields_parse_and_come_back() {
    let mut v = relay_entry();
    v["state"] = "hibernating".into();
    v["origin"] = "cloud".into();
    v["shiny_new_field"] = json!({"a": [1, 2]});
    v["cli"]["future"] = json!(true);
    let s: SessionSummary = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(s.state, SessionState::Other("hibernating".into()));
    assert_eq!(s.origin(), Origin::Other("cloud".into()));
    assert_eq!(s.extra["shiny_new_field"], json!({"a": [1, 2]}));
    // Unknown keys inside `cli` are not modelled: the rest of it comes back.
    let back = serde_json::to_value(&s).unwrap();
    let mut expected = v;
    expected["cli"].as_object_mut().unwrap().remove("future");
    assert_eq!(back, expected);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_bad_entry_does_not_fail_the_list() {
    let list = json!({"sessions": [
        relay_entry(),
        {"state": "idle"},
        {"id": "cse_bad", "pending_permissions": "many"},
        cli_entry(),
        {"id": "cse_min"}
    ]});
    let list: SessionList = serde_json::from_value(list).unwrap();
    let ids: Vec<_> = list.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        ["cse_1", "27784601-dc95-46a5-9f01-072efd77a9f0", "cse_min"]
    );
    assert_eq!(list.sessions[2].state, SessionState::Other(String::new()));
    let empty: SessionList = serde_json::from_value(json!({})).unwrap();
    assert!(empty.sessions.is_empty());
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn detail_flattens_the_summary() {
    let mut v = relay_entry();
    v.as_object_mut().unwrap().remove("origin");
    v["initialize"] = json!({"models": [{"value": "opus"}]});
    v["pending_requests"] = json!([{"request_id": "r1", "subtype": "can_use_tool", "sequence_num": 5, "tool_name": "Bash"}]);
    let d: SessionDetail = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(d.summary.id, "cse_1");
    assert!(
        d.summary.extra.is_empty(),
        "initialize is the detail's, not extra"
    );
    assert_eq!(d.pending_requests[0].tool_name.as_deref(), Some("Bash"));
    assert_eq!(serde_json::to_value(&d).unwrap(), v);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn source_is_open() {
    for (s, want) in [
        ("worker", Source::Worker),
        ("client", Source::Client),
        ("relay", Source::Relay),
    ] {
        assert_eq!(Source::from(s), want);
        assert_eq!(serde_json::to_value(&want).unwrap(), json!(s));
    }
    let odd: Source = serde_json::from_value(json!("mirror")).unwrap();
    assert_eq!(odd, Source::Other("mirror".into()));
    assert_eq!(odd.as_str(), "mirror");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn records_keep_their_shape() {
    let e = ExitInfo {
        exit_code: Some(1),
        signal: None,
        stderr_tail: "boom".into(),
        at: "t".into(),
        reason: None,
    };
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"exit_code": 1, "signal": null, "stderr_tail": "boom", "at": "t"})
    );
    assert_eq!(serde_json::to_value(CliLink::default()).unwrap(), json!({}));
}
