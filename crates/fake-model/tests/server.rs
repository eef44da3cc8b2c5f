//! The fake model over real HTTP (reqwest against a server bound to 127.0.0.1:0).

use std::time::Duration;

use bridge_fake_model::{FakeModel, RunningFakeModel, Scenario};
use serde_json::{Value, json};

use crate::common::{post_messages, request, start};

/// Parse an SSE body into (event name, data JSON) pairs.
fn parse_sse(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|chunk| !chunk.trim().is_empty())
        .map(|chunk| {
            let mut name = String::new();
            let mut data = String::new();
            for line in chunk.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    name = v.to_string();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push_str(v);
                }
            }
            let data: Value = serde_json::from_str(&data).expect("data is JSON");
            assert_eq!(data["type"], name.as_str(), "event name matches data.type");
            (name, data)
        })
        .collect()
}

#[tokio::test]
async fn streams_text_thinking_and_tool_use_like_the_api() {
    let fm = start(json!({"turns": [{
        "match": "make a file",
        "blocks": [
            {"type": "thinking", "thinking": "Let me think about it.", "signature": "c2ln"},
            {"type": "text", "chunks": ["I'll ", "create ", "it."]},
            {"type": "tool_use", "name": "Bash", "pieces": 4,
             "input": {"command": "touch x.txt", "description": "Create x.txt"}}
        ],
        "usage": {"input_tokens": 42, "output_tokens": 7}
    }]}))
    .await;
    let resp = post_messages(&fm.base_url(), &request("please make a file", true)).await;
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = parse_sse(&resp.text().await.unwrap());
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(names.last(), Some(&"message_stop"));
    assert_eq!(names[names.len() - 2], "message_delta");

    let start = &events[0].1["message"];
    assert_eq!(
        start["model"], "claude-test-model",
        "echoes the request model"
    );
    assert_eq!(start["usage"]["input_tokens"], 42);
    assert!(start["id"].as_str().unwrap().starts_with("msg_"));

    // Reassemble each block from its deltas.
    let mut blocks: Vec<Value> = Vec::new();
    let mut json_buf: Vec<String> = Vec::new();
    let mut json_pieces = 0;
    for (name, data) in &events {
        match name.as_str() {
            "content_block_start" => {
                assert_eq!(data["index"], blocks.len());
                blocks.push(data["content_block"].clone());
                json_buf.push(String::new());
            }
            "content_block_delta" => {
                let i = data["index"].as_u64().unwrap() as usize;
                let d = &data["delta"];
                match d["type"].as_str().unwrap() {
                    "text_delta" => {
                        let t = blocks[i]["text"].as_str().unwrap().to_string()
                            + d["text"].as_str().unwrap();
                        blocks[i]["text"] = t.into();
                    }
                    "thinking_delta" => {
                        let t = blocks[i]["thinking"].as_str().unwrap().to_string()
                            + d["thinking"].as_str().unwrap();
                        blocks[i]["thinking"] = t.into();
                    }
                    "signature_delta" => blocks[i]["signature"] = d["signature"].clone(),
                    "input_json_delta" => {
                        json_buf[i].push_str(d["partial_json"].as_str().unwrap());
                        json_pieces += 1;
                    }
                    other => panic!("unexpected delta {other}"),
                }
            }
            _ => {}
        }
    }
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0]["thinking"], "Let me think about it.");
    assert_eq!(blocks[0]["signature"], "c2ln");
    assert_eq!(blocks[1]["text"], "I'll create it.");
    assert_eq!(blocks[2]["name"], "Bash");
    assert!(blocks[2]["id"].as_str().unwrap().starts_with("toolu_"));
    let input: Value = serde_json::from_str(&json_buf[2]).unwrap();
    assert_eq!(
        input,
        json!({"command": "touch x.txt", "description": "Create x.txt"})
    );
    assert!(
        json_pieces >= 4,
        "input JSON arrives in several pieces ({json_pieces})"
    );

    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 7);
}

#[tokio::test]
async fn non_streaming_requests_get_a_json_message() {
    let fm = start(json!({"turns": [{"match": "title", "blocks": [
        {"type": "text", "chunks": ["A ", "title"]},
        {"type": "tool_use", "name": "Read", "input": {"file_path": "/tmp/a"}, "id": "toolu_fixed"}
    ]}]}))
    .await;
    let resp = post_messages(&fm.base_url(), &request("make a title", false)).await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["type"], "message");
    assert_eq!(body["role"], "assistant");
    assert_eq!(
        body["content"][0],
        json!({"type": "text", "text": "A title"})
    );
    assert_eq!(body["content"][1]["id"], "toolu_fixed");
    assert_eq!(body["content"][1]["input"]["file_path"], "/tmp/a");
    assert_eq!(body["stop_reason"], "tool_use");
    assert!(body["usage"]["input_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn turns_are_picked_by_match_used_once_then_default() {
    let fm = start(json!({
        "turns": [
            {"match": "alpha", "blocks": [{"type": "text", "text": "A1"}]},
            {"match": "alpha", "blocks": [{"type": "text", "text": "A2"}]},
            {"match": "use ls instead", "blocks": [{"type": "text", "text": "Understood"}]}
        ],
        "default": {"blocks": [{"type": "text", "text": "fallback"}]}
    }))
    .await;
    let base = fm.base_url();
    let text_of = |v: Value| v["content"][0]["text"].as_str().unwrap().to_string();
    let ask = |t: &str| request(t, false);
    let r = |b: Value| {
        let base = base.clone();
        async move {
            text_of(
                post_messages(&base, &b)
                    .await
                    .json::<Value>()
                    .await
                    .unwrap(),
            )
        }
    };
    assert_eq!(r(ask("say alpha")).await, "A1");
    assert_eq!(r(ask("beta")).await, "fallback");
    assert_eq!(r(ask("alpha again")).await, "A2");
    assert_eq!(r(ask("alpha thrice")).await, "fallback");
    // A tool_result's content is matched too (this is how a deny message reaches a scripted turn).
    let denied = json!({
        "model": "m", "max_tokens": 10, "stream": false,
        "messages": [
            {"role": "user", "content": "do it"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true,
              "content": [{"type": "text", "text": "The user said: use ls instead"}]}]}
        ]
    });
    assert_eq!(r(denied).await, "Understood");

    let recorded: Value = reqwest::get(format!("{base}/_fake/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let reqs = recorded["requests"].as_array().unwrap();
    assert_eq!(reqs.len(), 5);
    assert_eq!(reqs[0]["served"], json!({"kind": "turn", "index": 0}));
    assert_eq!(reqs[1]["served"], json!({"kind": "default"}));
    assert_eq!(reqs[4]["last_user_text"], "The user said: use ls instead");
    assert_eq!(reqs[4]["query"], "beta=true");
    assert_eq!(reqs[0]["headers"]["anthropic-version"], "2023-06-01");
    assert!(
        reqs[0]["headers"].get("x-api-key").is_none(),
        "credentials are never recorded"
    );
    assert_eq!(reqs[2]["seq"], 2);
}

#[tokio::test]
async fn http_errors_carry_retry_after_then_the_turn_is_served() {
    let fm = start(json!([{
        "error": {"status": 529, "type": "overloaded_error", "message": "busy", "retry_after": 2, "times": 2},
        "blocks": [{"type": "text", "text": "finally"}]
    }]))
    .await;
    for _ in 0..2 {
        let resp = post_messages(&fm.base_url(), &request("x", true)).await;
        assert_eq!(resp.status().as_u16(), 529);
        assert_eq!(resp.headers()["retry-after"], "2");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["type"], "error");
        assert_eq!(body["error"]["type"], "overloaded_error");
        assert_eq!(body["error"]["message"], "busy");
    }
    let resp = post_messages(&fm.base_url(), &request("x", true)).await;
    assert_eq!(resp.status(), 200);
    let text = resp.text().await.unwrap();
    assert!(text.contains("finally"));
}

#[tokio::test]
async fn mid_stream_error_event_ends_the_stream() {
    let fm = start(json!([{"blocks": [
        {"type": "text", "text": "partial"},
        {"type": "error", "error_type": "overloaded_error", "message": "Overloaded"},
        {"type": "text", "text": "never sent"}
    ]}]))
    .await;
    let resp = post_messages(&fm.base_url(), &request("x", true)).await;
    let events = parse_sse(&resp.text().await.unwrap());
    let (name, data) = events.last().unwrap();
    assert_eq!(name, "error");
    assert_eq!(data["error"]["type"], "overloaded_error");
    assert!(!events.iter().any(|(n, _)| n == "message_stop"));
    assert!(!format!("{events:?}").contains("never sent"));
}

#[tokio::test]
async fn scripted_disconnect_breaks_the_body() {
    let fm =
        start(json!([{"blocks": [{"type": "text", "text": "abc"}, {"type": "disconnect"}]}])).await;
    let resp = post_messages(&fm.base_url(), &request("x", true)).await;
    assert_eq!(resp.status(), 200);
    assert!(resp.text().await.is_err(), "the body must not end cleanly");
}

#[tokio::test]
async fn a_dropped_stream_is_recorded_as_aborted() {
    let fm = start(json!([{"delay_ms": 50, "blocks": [
        {"type": "text", "text": "x", "repeat": 400}
    ]}]))
    .await;
    let mut resp = post_messages(&fm.base_url(), &request("x", true)).await;
    // Read the first chunk, then hang up.
    let first = resp.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("message_start"));
    drop(resp);
    let mut aborted = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if fm.model.requests()[0].aborted {
            aborted = true;
            break;
        }
    }
    assert!(aborted, "the server noticed the client went away");
}

/// Sends `req`: the answer's JSON.
async fn json_of(req: reqwest::RequestBuilder) -> Value {
    req.send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn count_tokens_models_and_unknown_paths() {
    let fm = start(json!([])).await;
    let base = fm.base_url();
    let c = reqwest::Client::new();
    let body = json_of(
        c.post(format!("{base}/v1/messages/count_tokens?beta=true"))
            .json(&request("hello there", false)),
    )
    .await;
    assert!(body["input_tokens"].as_u64().unwrap() > 0);
    let models = json_of(c.get(format!("{base}/v1/models"))).await;
    assert!(!models["data"].as_array().unwrap().is_empty());
    // A raw body (not JSON-encoded by the client) to `path`.
    let post_raw =
        |path: &str, body: &'static str| c.post(format!("{base}{path}")).body(body).send();
    let resp = post_raw("/v1/other", "{}").await.unwrap();
    assert_eq!(resp.status(), 404);
    let err: Value = resp.json().await.unwrap();
    assert_eq!(err["error"]["type"], "not_found_error");
    let resp = post_raw("/v1/messages", "not json").await.unwrap();
    assert_eq!(resp.status(), 400);
    assert_eq!(fm.model.requests().len(), 4);
    // The built-in default answer when the scenario has none.
    let resp = post_messages(&base, &request("anything", false)).await;
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["content"][0]["text"], "OK.");
    assert_eq!(body["stop_reason"], "end_turn");
}

#[tokio::test]
async fn scenario_can_be_replaced_and_requests_cleared() {
    let fm = start(json!([])).await;
    let base = fm.base_url();
    let c = reqwest::Client::new();
    let resp = c
        .put(format!("{base}/_fake/scenario"))
        .body(r#"[{"blocks":[{"type":"nope"}]}]"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let resp = c
        .put(format!("{base}/_fake/scenario"))
        .body(r#"[{"blocks":[{"type":"text","text":"replaced"}]}]"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body: Value = post_messages(&base, &request("x", false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["content"][0]["text"], "replaced");
    assert_eq!(fm.model.requests().len(), 1);
    let resp = c
        .delete(format!("{base}/_fake/requests"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    assert!(fm.model.requests().is_empty());
}

#[tokio::test]
async fn record_file_gets_one_json_line_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("requests.jsonl");
    let model = FakeModel::with_record_file(Scenario::default(), &path).unwrap();
    let fm = RunningFakeModel::start(model).await.unwrap();
    post_messages(&fm.base_url(), &request("first", true))
        .await
        .text()
        .await
        .unwrap();
    post_messages(&fm.base_url(), &request("second", false))
        .await
        .text()
        .await
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        lines[0]["body"]["messages"][0]["content"][0]["text"],
        "first"
    );
    assert_eq!(lines[1]["stream"], false);
}

#[test]
fn binary_prints_its_address_and_refuses_non_loopback() {
    use std::io::BufRead as _;
    let exe = env!("CARGO_BIN_EXE_bridge-fake-model");
    let out = std::process::Command::new(exe)
        .args(["--bind", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));

    let mut child = std::process::Command::new(exe)
        .args(["--bind", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .expect("first line announces the address");
    let addr: std::net::SocketAddr = addr.parse().unwrap();
    assert!(addr.ip().is_loopback());
    assert_ne!(addr.port(), 0);
}
