//! `get_context_usage` and `mcp_status` answers of the real CLI 2.1.332 (captured against the fake
//! model) read into their typed forms.

use bridge_protocol::{
    CliMessage, ContextUsageResponse, ControlResponseBody, McpServerState, McpStatusResponse,
    parse_cli_line,
};

/// The success payloads of the CLI's control responses in a capture, by request id.
fn answers(capture: &str) -> Vec<(String, serde_json::Value)> {
    capture
        .lines()
        .filter_map(|l| l.strip_prefix("<< "))
        .filter_map(
            |l| match parse_cli_line(l).expect("every CLI line parses") {
                CliMessage::ControlResponse(r) => match r.response {
                    ControlResponseBody::Success(s) => {
                        Some((s.request_id.clone(), s.response.clone().unwrap_or_default()))
                    }
                    _ => None,
                },
                _ => None,
            },
        )
        .collect()
}

#[test]
fn context_usage_of_the_real_cli() {
    let capture = include_str!(
        "../../../tests/fixtures/real-cli-2.1.332/bridge-capture-tasks-interrupt.ndjson"
    );
    let all = answers(capture);
    let (_, before) = all.iter().find(|(id, _)| id == "ctx0").expect("ctx0");
    let (_, after) = all.iter().find(|(id, _)| id == "ctx1").expect("ctx1");
    let before: ContextUsageResponse = serde_json::from_value(before.clone()).unwrap();
    let after: ContextUsageResponse = serde_json::from_value(after.clone()).unwrap();
    assert_eq!(after.max_tokens, 1_000_000);
    assert!(
        after.total_tokens > before.total_tokens,
        "a turn adds messages"
    );
    let messages = after
        .categories
        .iter()
        .find(|c| c.id.as_deref() == Some("messages"))
        .expect("a Messages category");
    assert!(messages.is_used() && messages.tokens > 0);
    let used: u64 = after
        .categories
        .iter()
        .filter(|c| c.is_used())
        .map(|c| c.tokens)
        .sum();
    assert_eq!(
        used, after.total_tokens,
        "the used categories add up to the total"
    );
}

#[test]
fn mcp_status_of_the_real_cli() {
    let capture =
        include_str!("../../../tests/fixtures/real-cli-2.1.332/bridge-capture-mcp-status.ndjson");
    let all = answers(capture);
    let status = |id: &str| -> McpStatusResponse {
        let (_, body) = all.iter().find(|(i, _)| i == id).expect(id);
        serde_json::from_value(body.clone()).unwrap()
    };
    let first = status("mcp0");
    let later = status("mcp1");
    let state = |r: &McpStatusResponse, name: &str| {
        r.mcp_servers
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.status.clone())
            .unwrap()
    };
    assert_eq!(state(&first, "asker"), McpServerState::Pending);
    assert_eq!(state(&later, "asker"), McpServerState::Connected);
    assert_eq!(state(&later, "broken"), McpServerState::Failed);
    let broken = later
        .mcp_servers
        .iter()
        .find(|s| s.name == "broken")
        .unwrap();
    assert!(broken.error.as_deref().unwrap().contains("ENOENT"));
    let asker = later
        .mcp_servers
        .iter()
        .find(|s| s.name == "asker")
        .unwrap();
    assert_eq!(asker.server_info.as_ref().unwrap().version, "1.0.0");
    assert_eq!(asker.tools.as_ref().unwrap()[0].name, "ask_user");
}
