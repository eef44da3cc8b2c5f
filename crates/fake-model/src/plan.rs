//! How one `/v1/messages` request is answered: the [`Plan`] made from the picked scenario turn,
//! its SSE [`Step`]s in the Messages API's event order, and the JSON or streamed response.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::scenario::{self, Block, Turn, Usage};
use crate::{FakeModel, error_response, new_id};

/// Everything needed to answer one messages request.
pub(crate) struct Plan {
    turn: Turn,
    message_id: String,
    model: String,
    usage: Usage,
    /// tool_use ids, one per block (None for other blocks).
    tool_ids: Vec<Option<String>>,
}

impl Plan {
    pub(crate) fn new(turn: &Turn, request_model: &str, input_estimate: u64) -> Self {
        let tool_ids = turn
            .blocks
            .iter()
            .map(|b| match b {
                Block::ToolUse { id, .. } => Some(id.clone().unwrap_or_else(|| new_id("toolu_"))),
                _ => None,
            })
            .collect();
        let output_chars: usize = turn
            .blocks
            .iter()
            .map(|b| match b {
                Block::ToolUse { input, .. } => input.to_string().len(),
                other => other.text_chunks().iter().map(String::len).sum(),
            })
            .sum();
        let given = turn.usage.clone().unwrap_or_default();
        let usage = Usage {
            input_tokens: Some(given.input_tokens.unwrap_or(input_estimate)),
            output_tokens: Some(
                given
                    .output_tokens
                    .unwrap_or((output_chars as u64 / 4).max(1)),
            ),
            cache_creation_input_tokens: Some(given.cache_creation_input_tokens.unwrap_or(0)),
            cache_read_input_tokens: Some(given.cache_read_input_tokens.unwrap_or(0)),
        };
        Self {
            message_id: new_id("msg_"),
            model: turn
                .model
                .clone()
                .unwrap_or_else(|| request_model.to_string()),
            usage,
            tool_ids,
            turn: turn.clone(),
        }
    }

    pub(crate) fn usage_json(&self, output_tokens: u64) -> Value {
        json!({
            "input_tokens": self.usage.input_tokens.unwrap_or(0),
            "cache_creation_input_tokens": self.usage.cache_creation_input_tokens.unwrap_or(0),
            "cache_read_input_tokens": self.usage.cache_read_input_tokens.unwrap_or(0),
            "output_tokens": output_tokens,
            "service_tier": "standard",
        })
    }

    /// The complete content blocks (for the JSON answer).
    pub(crate) fn content(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for (i, block) in self.turn.blocks.iter().enumerate() {
            match block {
                Block::Text { .. } => out.push(json!({
                    "type": "text",
                    "text": block.text_chunks().concat(),
                })),
                Block::Thinking { signature, .. } => out.push(json!({
                    "type": "thinking",
                    "thinking": block.text_chunks().concat(),
                    "signature": signature.clone().unwrap_or_else(default_signature),
                })),
                Block::ToolUse { name, input, .. } => out.push(json!({
                    "type": "tool_use",
                    "id": self.tool_ids[i],
                    "name": name,
                    "input": input,
                })),
                Block::Error { .. } | Block::Disconnect => {}
            }
        }
        out
    }

    /// The SSE events, in order, with the delay to wait before each.
    pub(crate) fn steps(&self) -> Vec<Step> {
        let delay = Duration::from_millis(self.turn.delay_ms);
        let zero = Duration::ZERO;
        let mut steps = vec![
            Step::event(
                delay,
                "message_start",
                json!({
                    "type": "message_start",
                    "message": {
                        "id": self.message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": self.model,
                        "content": [],
                        "stop_reason": null,
                        "stop_sequence": null,
                        "usage": self.usage_json(1),
                    }
                }),
            ),
            Step::event(zero, "ping", json!({"type": "ping"})),
        ];
        // Error and Disconnect end the stream, so a block's position is its content index.
        for (index, block) in self.turn.blocks.iter().enumerate() {
            let (start, deltas): (Value, Vec<Value>) = match block {
                Block::Text { .. } => (
                    json!({"type": "text", "text": ""}),
                    block
                        .text_chunks()
                        .into_iter()
                        .map(|t| json!({"type": "text_delta", "text": t}))
                        .collect(),
                ),
                Block::Thinking { signature, .. } => {
                    let mut d: Vec<Value> = block
                        .text_chunks()
                        .into_iter()
                        .map(|t| json!({"type": "thinking_delta", "thinking": t}))
                        .collect();
                    d.push(json!({
                        "type": "signature_delta",
                        "signature": signature.clone().unwrap_or_else(default_signature),
                    }));
                    (
                        json!({"type": "thinking", "thinking": "", "signature": ""}),
                        d,
                    )
                }
                Block::ToolUse {
                    name,
                    input,
                    pieces,
                    ..
                } => {
                    let text = serde_json::to_string(input).unwrap_or_else(|_| "{}".into());
                    let mut d = vec![json!({"type": "input_json_delta", "partial_json": ""})];
                    d.extend(
                        scenario::split_pieces(&text, *pieces)
                            .into_iter()
                            .map(|p| json!({"type": "input_json_delta", "partial_json": p})),
                    );
                    (
                        json!({"type": "tool_use", "id": self.tool_ids[index], "name": name, "input": {}}),
                        d,
                    )
                }
                Block::Error {
                    error_type,
                    message,
                } => {
                    steps.push(Step::event(
                        delay,
                        "error",
                        json!({"type": "error", "error": {"type": error_type, "message": message}}),
                    ));
                    return steps;
                }
                Block::Disconnect => {
                    steps.push(Step::Disconnect(delay));
                    return steps;
                }
            };
            steps.push(Step::event(
                zero,
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            ));
            for d in deltas {
                steps.push(Step::event(
                    delay,
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index, "delta": d}),
                ));
            }
            steps.push(Step::event(
                zero,
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ));
        }
        steps.push(Step::event(
            delay,
            "message_delta",
            json!({
                "type": "message_delta",
                "delta": {"stop_reason": self.turn.effective_stop_reason(), "stop_sequence": null},
                "usage": self.usage_json(self.usage.output_tokens.unwrap_or(1)),
            }),
        ));
        steps.push(Step::event(
            zero,
            "message_stop",
            json!({"type": "message_stop"}),
        ));
        steps
    }
}

pub(crate) fn default_signature() -> String {
    "ZmFrZS1zaWduYXR1cmU=".into()
}

pub(crate) enum Step {
    Event(Duration, Bytes),
    Disconnect(Duration),
}

impl Step {
    pub(crate) fn event(delay: Duration, name: &str, data: Value) -> Self {
        Step::Event(
            delay,
            Bytes::from(format!("event: {name}\ndata: {data}\n\n")),
        )
    }
}

pub(crate) fn json_response(plan: Plan) -> Response {
    if let Some(Block::Error {
        error_type,
        message,
    }) = plan
        .turn
        .blocks
        .iter()
        .find(|b| matches!(b, Block::Error { .. }))
    {
        return error_response(
            StatusCode::from_u16(529).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
            error_type,
            message,
        );
    }
    let body = json!({
        "id": plan.message_id,
        "type": "message",
        "role": "assistant",
        "model": plan.model,
        "content": plan.content(),
        "stop_reason": plan.turn.effective_stop_reason(),
        "stop_sequence": null,
        "usage": plan.usage_json(plan.usage.output_tokens.unwrap_or(1)),
    });
    let mut resp = (StatusCode::OK, axum::Json(body)).into_response();
    if let Ok(v) = HeaderValue::from_str(&new_id("req_")) {
        resp.headers_mut().insert("request-id", v);
    }
    resp
}

pub(crate) fn stream_response(model: FakeModel, seq: u64, plan: Plan) -> Response {
    let steps = plan.steps();
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        for step in steps {
            match step {
                Step::Event(delay, bytes) => {
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    if tx.send(Ok(bytes)).await.is_err() {
                        model.mark_aborted(seq);
                        return;
                    }
                }
                Step::Disconnect(delay) => {
                    tokio::time::sleep(delay).await;
                    let _ = tx
                        .send(Err(std::io::Error::other("scripted disconnect")))
                        .await;
                    return;
                }
            }
        }
        // Dropping `tx` ends the body.
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let mut resp = Response::new(Body::from_stream(stream));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(&new_id("req_")) {
        h.insert("request-id", v);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_the_api_event_order() {
        let turn: Turn = serde_json::from_value(json!({"blocks": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "chunks": ["a", "b"]},
            {"type": "tool_use", "name": "Bash", "input": {"command": "touch x.txt"}, "pieces": 4}
        ]}))
        .unwrap();
        let plan = Plan::new(&turn, "m", 10);
        let names: Vec<String> = plan
            .steps()
            .iter()
            .map(|s| match s {
                Step::Event(_, b) => {
                    let t = String::from_utf8_lossy(b);
                    t.lines()
                        .next()
                        .unwrap()
                        .trim_start_matches("event: ")
                        .to_string()
                }
                Step::Disconnect(_) => "disconnect".into(),
            })
            .collect();
        let expected: Vec<&str> = [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
        ]
        .into_iter()
        .chain(std::iter::repeat_n("content_block_delta", 5))
        .chain(["content_block_stop", "message_delta", "message_stop"])
        .collect();
        assert_eq!(names, expected);
        assert_eq!(plan.content().len(), 3);
        assert_eq!(plan.content()[2]["input"]["command"], "touch x.txt");
    }
}
