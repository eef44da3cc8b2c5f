//! The header's informational control requests through the relay: a controller's
//! `get_context_usage` and `mcp_status` reach the agent and its answers come back on the asker's
//! stream and stay in the log (where observers, who may not ask, read them).

use crate::common::*;
use serde_json::{Value, json};

fn answer_to<'a>(frames: &'a [Frame], rid: &str) -> Option<&'a Value> {
    frames
        .iter()
        .find(|f| is_type(f, "control_response") && f.payload()["response"]["request_id"] == rid)
        .map(|f| &f.payload()["response"])
}

#[tokio::test]
async fn context_usage_and_mcp_status_answers_reach_the_asker_and_the_log() {
    let (_dir, relay, sid) = demo_session().await;
    let mut sse = relay.sse(&sid, None).await;
    for (rid, subtype) in [("ctx-1", "get_context_usage"), ("mcp-1", "mcp_status")] {
        let r = relay.post(&sid, TOKEN, control_request(rid, subtype)).await;
        assert_eq!(r.status(), 200, "{subtype}: {}", r.text().await.unwrap());
    }
    let frames = sse
        .until("both answers", |f| {
            is_type(f, "control_response") && f.payload()["response"]["request_id"] == "mcp-1"
        })
        .await;
    let ctx = answer_to(&frames, "ctx-1").expect("the context usage answer on the stream");
    assert_eq!(ctx["subtype"], "success");
    let usage: bridge_protocol::ContextUsageResponse =
        serde_json::from_value(ctx["response"].clone()).unwrap();
    assert!(usage.max_tokens > usage.total_tokens && usage.total_tokens > 0);
    assert!(usage.categories.iter().any(|c| c.name == "Messages"));
    let mcp = answer_to(&frames, "mcp-1").unwrap();
    let status: bridge_protocol::McpStatusResponse =
        serde_json::from_value(mcp["response"].clone()).unwrap();
    let states: Vec<&str> = status
        .mcp_servers
        .iter()
        .map(|s| s.status.as_str())
        .collect();
    assert_eq!(states, ["connected", "needs-auth", "failed"]);

    // An observer may not ask, but reads the requests and answers in the log.
    let minted = relay
        .mint_observer(json!({"session_id": sid, "expires_in_secs": 600}))
        .await;
    let obs = minted["token"].as_str().unwrap();
    let refused = relay
        .post(&sid, obs, control_request("ctx-obs", "get_context_usage"))
        .await;
    assert_eq!(refused.status(), 403);
    let log = get_json(
        &relay.url(&format!(
            "/v1/code/sessions/{sid}/events?after=0&limit=10000"
        )),
        obs,
    )
    .await;
    let payloads: Vec<&Value> = log["data"]
        .as_array()
        .or_else(|| log["events"].as_array())
        .expect("an event list")
        .iter()
        .map(|e| &e["payload"])
        .collect();
    for rid in ["ctx-1", "mcp-1"] {
        assert!(
            payloads
                .iter()
                .any(|p| p["type"] == "control_request" && p["request_id"] == rid),
            "the request {rid} is in the log"
        );
        assert!(
            payloads.iter().any(|p| p["type"] == "control_response"
                && p["response"]["request_id"] == rid
                && p["response"]["subtype"] == "success"),
            "the answer to {rid} is in the log"
        );
    }
    assert!(
        !payloads.iter().any(|p| p["request_id"] == "ctx-obs"),
        "the observer's request was not stored"
    );
}
