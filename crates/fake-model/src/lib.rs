//! `bridge-fake-model`: a scripted Anthropic Messages API on 127.0.0.1, so the real Claude Code CLI runs
//! offline in tests (`ANTHROPIC_BASE_URL=http://127.0.0.1:PORT`).
//!
//! Endpoints:
//! - `POST /v1/messages` (the CLI adds `?beta=true`): SSE when `"stream": true` (`message_start`, `ping`,
//!   `content_block_start/delta/stop` with `text_delta`, `thinking_delta` + `signature_delta`,
//!   `input_json_delta` in several pieces, `message_delta` with stop reason and usage, `message_stop`), a JSON
//!   message otherwise. The answer is the scenario turn picked for the request (see [`scenario`]).
//! - `POST /v1/messages/count_tokens`: `{"input_tokens": n}` (an estimate from the body size).
//! - `GET /v1/models`: a short model list.
//! - `GET /_fake/requests`: every request received so far (`{"requests":[Record…]}`), `DELETE` clears it.
//! - `PUT /_fake/scenario`: replace the scenario (body: a scenario file), resetting which turns were used.
//!
//! Every request is recorded (method, path, query, selected headers without credentials, body, which turn
//! answered, whether the client dropped the stream) and, with `--record FILE`, appended to a JSONL file.

mod plan;
pub mod scenario;

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde::Serialize;
use serde_json::{Value, json};

use plan::{Plan, json_response, stream_response};
pub use scenario::{Block, HttpError, Scenario, Turn, Usage};

/// Largest request body accepted (the CLI's requests carry the whole conversation).
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Request headers kept in records (never credentials).
const KEPT_HEADERS: &[&str] = &[
    "anthropic-version",
    "anthropic-beta",
    "user-agent",
    "x-app",
    "content-type",
    "x-stainless-retry-count",
    "x-stainless-timeout",
];

/// Which reply answered a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Served {
    /// Scenario turn `index`.
    Turn { index: usize },
    /// The scenario's default reply.
    Default,
    /// An HTTP error of scenario turn `index`.
    Error { index: usize, status: u16 },
    /// Not a messages request (count_tokens, models, unknown path).
    Other,
}

/// One received request.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    /// 0-based arrival order.
    pub seq: u64,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Selected request headers (no credentials).
    pub headers: serde_json::Map<String, Value>,
    /// `stream` field of a messages request.
    pub stream: Option<bool>,
    /// Text of the last user message (text blocks and tool_result contents), what `match` is tested against.
    pub last_user_text: Option<String>,
    pub served: Served,
    /// The client closed the connection before the stream ended (e.g. the CLI was interrupted).
    pub aborted: bool,
    /// The request body (JSON when it parses, else a string).
    pub body: Value,
}

impl Record {
    /// A request `method uri` with its `headers` (those kept) and `body`, served
    /// [`Served::Other`]: no scenario turn, no stream, no user text. The model numbers it.
    fn other(method: &str, uri: &Uri, headers: &HeaderMap, body: Value) -> Record {
        Record {
            seq: 0,
            method: method.to_owned(),
            path: uri.path().to_string(),
            query: uri.query().map(str::to_string),
            headers: kept_headers(headers),
            stream: None,
            last_user_text: None,
            served: Served::Other,
            aborted: false,
            body,
        }
    }
}

struct Picked {
    turn: Turn,
    served: Served,
    error: Option<HttpError>,
}

struct ScenarioState {
    scenario: Scenario,
    used: Vec<bool>,
    errors_served: Vec<u32>,
}

impl ScenarioState {
    fn new(scenario: Scenario) -> Self {
        let n = scenario.turns.len();
        Self {
            scenario,
            used: vec![false; n],
            errors_served: vec![0; n],
        }
    }

    fn pick(&mut self, haystack: &str, streaming: bool) -> Picked {
        for (i, turn) in self.scenario.turns.iter().enumerate() {
            if self.used[i] || !turn.fits(haystack, streaming) {
                continue;
            }
            if let Some(err) = &turn.error
                && self.errors_served[i] < err.times
            {
                self.errors_served[i] += 1;
                if self.errors_served[i] >= err.times && turn.blocks.is_empty() && !turn.reuse {
                    self.used[i] = true;
                }
                return Picked {
                    turn: turn.clone(),
                    served: Served::Error {
                        index: i,
                        status: err.status,
                    },
                    error: Some(err.clone()),
                };
            }
            if !turn.reuse {
                self.used[i] = true;
            }
            return Picked {
                turn: turn.clone(),
                served: Served::Turn { index: i },
                error: None,
            };
        }
        Picked {
            turn: self.scenario.default_turn(),
            served: Served::Default,
            error: None,
        }
    }
}

struct Inner {
    scenario: Mutex<ScenarioState>,
    records: Mutex<Vec<Record>>,
    record_file: Option<Mutex<std::fs::File>>,
}

/// The fake model's shared state; cheap to clone.
#[derive(Clone)]
pub struct FakeModel {
    inner: Arc<Inner>,
}

impl FakeModel {
    /// A fake model answering from `scenario`, recording nowhere but in memory.
    pub fn new(scenario: Scenario) -> Self {
        Self {
            inner: Arc::new(Inner {
                scenario: Mutex::new(ScenarioState::new(scenario)),
                records: Mutex::new(Vec::new()),
                record_file: None,
            }),
        }
    }

    /// Like [`FakeModel::new`], also appending every request as one JSON line to `path`.
    pub fn with_record_file(scenario: Scenario, path: &Path) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening record file {}", path.display()))?;
        Ok(Self {
            inner: Arc::new(Inner {
                scenario: Mutex::new(ScenarioState::new(scenario)),
                records: Mutex::new(Vec::new()),
                record_file: Some(Mutex::new(file)),
            }),
        })
    }

    /// Replace the scenario; every turn becomes unused again.
    pub fn set_scenario(&self, scenario: Scenario) {
        *lock(&self.inner.scenario) = ScenarioState::new(scenario);
    }

    /// Snapshot of the requests received so far.
    pub fn requests(&self) -> Vec<Record> {
        lock(&self.inner.records).clone()
    }

    /// Forget the recorded requests (the JSONL file is kept).
    pub fn clear_requests(&self) {
        lock(&self.inner.records).clear();
    }

    fn record(&self, mut rec: Record) -> u64 {
        let mut records = lock(&self.inner.records);
        rec.seq = records.last().map_or(0, |r| r.seq + 1);
        let seq = rec.seq;
        if let Some(file) = &self.inner.record_file {
            let line = serde_json::to_string(&rec).unwrap_or_default();
            let mut f = lock(file);
            if let Err(e) = writeln!(f, "{line}").and_then(|()| f.flush()) {
                tracing::warn!("writing record file: {e}");
            }
        }
        records.push(rec);
        seq
    }

    fn mark_aborted(&self, seq: u64) {
        if let Some(r) = lock(&self.inner.records).iter_mut().find(|r| r.seq == seq) {
            r.aborted = true;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The router (no socket), for tests and for [`serve`].
pub fn app(model: FakeModel) -> Router {
    Router::new()
        .route("/v1/messages", post(messages))
        .route("/v1/messages/count_tokens", post(count_tokens))
        .route("/v1/models", get(models))
        .route("/_fake/requests", get(list_requests).delete(clear_requests))
        .route("/_fake/scenario", put(replace_scenario))
        .route("/_fake/health", get(|| async { "ok" }))
        .fallback(fallback)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(model)
}

/// Serve `model` on an already bound listener until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    model: FakeModel,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app(model))
        .with_graceful_shutdown(shutdown)
        .await
}

/// A fake model running on a task of the current runtime (for tests). Dropping it stops the server.
pub struct RunningFakeModel {
    pub addr: SocketAddr,
    pub model: FakeModel,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl RunningFakeModel {
    /// Bind `127.0.0.1:0` and serve `model`.
    pub async fn start(model: FakeModel) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let m = model.clone();
        tokio::spawn(async move {
            let _ = serve(listener, m, async {
                let _ = stopped.await;
            })
            .await;
        });
        Ok(Self {
            addr,
            model,
            stop: Some(stop),
        })
    }

    /// `http://127.0.0.1:PORT`, what `ANTHROPIC_BASE_URL` should be.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for RunningFakeModel {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn kept_headers(headers: &HeaderMap) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for name in KEPT_HEADERS {
        if let Some(v) = headers.get(*name).and_then(|v| v.to_str().ok()) {
            out.insert((*name).to_string(), Value::String(v.to_string()));
        }
    }
    out
}

fn parse_body(body: &Bytes) -> Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
}

/// The text of the last `user` message of a Messages API request: its text blocks and the contents of its
/// tool_result blocks, joined by newlines. `None` when the body has no user message.
pub fn last_user_text(body: &Value) -> Option<String> {
    let messages = body.get("messages")?.as_array()?;
    let last = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    let mut parts: Vec<String> = Vec::new();
    collect_text(last.get("content")?, &mut parts);
    Some(parts.join("\n"))
}

fn collect_text(content: &Value, out: &mut Vec<String>) {
    match content {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => {
            for item in items {
                match item.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = item.get("text").and_then(Value::as_str) {
                            out.push(t.to_string());
                        }
                    }
                    Some("tool_result") => {
                        if let Some(c) = item.get("content") {
                            collect_text(c, out);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

pub(crate) fn new_id(prefix: &str) -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}{}", &hex[..24])
}

pub(crate) fn error_response(status: StatusCode, error_type: &str, message: &str) -> Response {
    let body = json!({
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": new_id("req_"),
    });
    (status, axum::Json(body)).into_response()
}

fn http_error_response(err: &HttpError) -> Response {
    let status = StatusCode::from_u16(err.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = error_response(status, &err.error_type, &err.message);
    if let Some(secs) = err.retry_after
        && let Ok(v) = HeaderValue::from_str(&secs.to_string())
    {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    if let Ok(v) = HeaderValue::from_str(&new_id("req_")) {
        resp.headers_mut().insert("request-id", v);
    }
    resp
}

async fn messages(
    State(model): State<FakeModel>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let json_body = parse_body(&body);
    if !json_body.is_object() {
        model.record(Record::other(method.as_str(), &uri, &headers, json_body));
        return error_response(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "request body is not a JSON object",
        );
    }
    let streaming = json_body
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let user_text = last_user_text(&json_body);
    let picked = lock(&model.inner.scenario).pick(user_text.as_deref().unwrap_or(""), streaming);
    let request_model = json_body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("claude-sonnet-4-5")
        .to_string();
    let input_estimate = (body.len() as u64 / 4).max(1);
    tracing::info!(
        streaming,
        served = ?picked.served,
        "POST {} ({} bytes)",
        uri,
        body.len()
    );
    let seq = model.record(Record {
        stream: Some(streaming),
        last_user_text: user_text,
        served: picked.served.clone(),
        ..Record::other(method.as_str(), &uri, &headers, json_body)
    });
    if let Some(err) = &picked.error {
        return http_error_response(err);
    }
    let plan = Plan::new(&picked.turn, &request_model, input_estimate);
    if streaming {
        stream_response(model, seq, plan)
    } else {
        json_response(plan)
    }
}

async fn count_tokens(
    State(model): State<FakeModel>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let json_body = parse_body(&body);
    let n = (body.len() as u64 / 4).max(1);
    let user_text = last_user_text(&json_body);
    model.record(Record {
        last_user_text: user_text,
        ..Record::other("POST", &uri, &headers, json_body)
    });
    axum::Json(json!({"input_tokens": n})).into_response()
}

async fn models(State(model): State<FakeModel>, uri: Uri, headers: HeaderMap) -> Response {
    model.record(Record::other("GET", &uri, &headers, Value::Null));
    let data: Vec<Value> = [
        ("claude-sonnet-4-5", "Claude Sonnet 4.5"),
        ("claude-opus-4-1", "Claude Opus 4.1"),
        ("claude-haiku-4-5", "Claude Haiku 4.5"),
    ]
    .iter()
    .map(|(id, name)| {
        json!({"type": "model", "id": id, "display_name": name, "created_at": "2025-01-01T00:00:00Z"})
    })
    .collect();
    axum::Json(json!({"data": data, "has_more": false, "first_id": "claude-sonnet-4-5", "last_id": "claude-haiku-4-5"}))
        .into_response()
}

async fn list_requests(State(model): State<FakeModel>) -> Response {
    axum::Json(json!({"requests": model.requests()})).into_response()
}

async fn clear_requests(State(model): State<FakeModel>) -> StatusCode {
    model.clear_requests();
    StatusCode::NO_CONTENT
}

async fn replace_scenario(State(model): State<FakeModel>, body: Bytes) -> Response {
    match serde_json::from_slice::<Scenario>(&body) {
        Ok(s) => {
            let n = s.turns.len();
            model.set_scenario(s);
            axum::Json(json!({"turns": n})).into_response()
        }
        Err(e) => error_response(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            &format!("invalid scenario: {e}"),
        ),
    }
}

async fn fallback(
    State(model): State<FakeModel>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    tracing::warn!("unhandled {method} {uri}");
    let body = if body.is_empty() {
        Value::Null
    } else {
        parse_body(&body)
    };
    model.record(Record::other(method.as_str(), &uri, &headers, body));
    error_response(
        StatusCode::NOT_FOUND,
        "not_found_error",
        &format!("the fake model does not serve {method} {}", uri.path()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_user_text_reads_text_and_tool_results() {
        let body = json!({"messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": [{"type": "text", "text": "ignored"}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "denied: use ls"}]},
                {"type": "tool_result", "tool_use_id": "u", "content": "plain"},
                {"type": "text", "text": "<system-reminder>x</system-reminder>"}
            ]}
        ]});
        let text = last_user_text(&body).unwrap();
        assert!(text.contains("denied: use ls"));
        assert!(text.contains("plain"));
        assert!(text.contains("system-reminder"));
        assert!(!text.contains("first"));
        assert_eq!(last_user_text(&json!({"messages": []})), None);
    }

    #[test]
    fn pick_uses_turns_once_then_default() {
        let s = Scenario::from_json(
            r#"{"turns":[{"match":"a","blocks":[]},{"match":"a","reuse":true,"blocks":[]}],
                "default":{"blocks":[{"type":"text","text":"d"}]}}"#,
        )
        .unwrap();
        let mut st = ScenarioState::new(s);
        assert_eq!(st.pick("a", true).served, Served::Turn { index: 0 });
        assert_eq!(st.pick("a", true).served, Served::Turn { index: 1 });
        assert_eq!(st.pick("a", true).served, Served::Turn { index: 1 });
        assert_eq!(st.pick("b", true).served, Served::Default);
    }

    #[test]
    fn pick_serves_errors_then_blocks() {
        let s = Scenario::from_json(
            r#"[{"error":{"status":529,"type":"overloaded_error","times":2},"blocks":[{"type":"text","text":"x"}]}]"#,
        )
        .unwrap();
        let mut st = ScenarioState::new(s);
        assert!(matches!(
            st.pick("", true).served,
            Served::Error { status: 529, .. }
        ));
        assert!(matches!(st.pick("", true).served, Served::Error { .. }));
        assert_eq!(st.pick("", true).served, Served::Turn { index: 0 });
        assert_eq!(st.pick("", true).served, Served::Default);
    }
}
