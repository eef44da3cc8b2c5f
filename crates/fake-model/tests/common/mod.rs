//! Helpers shared by the fake model's integration tests: starting it on 127.0.0.1:0, Messages API
//! requests, and the requests it recorded.

// Each test file uses a part of these.
#![allow(dead_code)]

pub mod claude;

use bridge_fake_model::{FakeModel, Record, RunningFakeModel, Scenario};
use serde_json::{Value, json};

/// The fake model serving `scenario` (its JSON form).
pub async fn start(scenario: Value) -> RunningFakeModel {
    let scenario: Scenario = serde_json::from_value(scenario).expect("scenario");
    start_with(scenario).await
}

/// The fake model serving `scenario`.
pub async fn start_with(scenario: Scenario) -> RunningFakeModel {
    RunningFakeModel::start(FakeModel::new(scenario))
        .await
        .expect("start")
}

/// A Messages API request with one user text block.
pub fn request(text: &str, stream: bool) -> Value {
    json!({
        "model": "claude-test-model",
        "max_tokens": 1024,
        "stream": stream,
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    })
}

/// POSTs `body` to `{base}/v1/messages` as the CLI does (`?beta=true`, an API key, the API version).
pub async fn post_messages(base: &str, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{base}/v1/messages?beta=true"))
        .header("x-api-key", "sk-ant-fake")
        .header("anthropic-version", "2023-06-01")
        .json(body)
        .send()
        .await
        .expect("send")
}

/// The recorded `/v1/messages` requests (not `count_tokens`, `models`, ...).
pub fn messages_requests(reqs: &[Record]) -> Vec<&Record> {
    reqs.iter().filter(|r| r.path == "/v1/messages").collect()
}
