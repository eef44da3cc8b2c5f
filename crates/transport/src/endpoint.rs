//! The relay's URLs and the pure parts of reading its HTTP answers, shared by
//! both backends.

use serde_json::Value;

use crate::backoff::parse_retry_after;
use crate::core::{EventsPage, Failure};
use crate::outbox::PostOutcome;

/// Where a session lives and how to authenticate.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The relay's origin, e.g. `http://127.0.0.1:8080` (no trailing slash).
    /// Empty in the browser means "same origin".
    pub base_url: String,
    /// The session id (`cse_…`).
    pub session_id: String,
    /// The bearer token, sent in the `Authorization` header (never in a URL).
    /// `None` in the browser relies on the `bridge_session` cookie.
    pub token: Option<String>,
    /// With the login cookie: the per-login secret the relay returned at login, sent in the
    /// `X-Bridge-Login` header and as a WebSocket's first frame (the cookie alone is refused).
    pub login_secret: Option<String>,
}

/// The header carrying [`Endpoint::login_secret`].
pub const LOGIN_SECRET_HEADER: &str = "X-Bridge-Login";

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("session_id", &self.session_id)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field(
                "login_secret",
                &self.login_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl Endpoint {
    /// An endpoint with a token.
    pub fn new(
        base_url: impl Into<String>,
        session_id: impl Into<String>,
        token: Option<String>,
    ) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            session_id: session_id.into(),
            token,
            login_secret: None,
        }
    }

    /// The same endpoint with the login secret that goes with the login cookie.
    pub fn with_login_secret(mut self, secret: Option<String>) -> Self {
        self.login_secret = secret;
        self
    }

    /// The session's URL. The id is one percent-encoded path segment whatever it holds, so an id
    /// taken from a crafted link (`x/../../v1/code/sessions`, `a?b#c`) cannot address another
    /// endpoint: a message for it goes to an unknown session (404), never to `POST /v1/code/sessions`.
    fn session_base(&self) -> String {
        format!(
            "{}/v1/code/sessions/{}",
            self.base_url,
            encode_segment(&self.session_id)
        )
    }

    /// `GET …/events/stream[?from_sequence_num=N]`.
    pub fn stream_url(&self, from: u64) -> String {
        if from > 0 {
            format!(
                "{}/events/stream?from_sequence_num={from}",
                self.session_base()
            )
        } else {
            format!("{}/events/stream", self.session_base())
        }
    }

    /// `POST …/events`.
    pub fn send_url(&self) -> String {
        format!("{}/events", self.session_base())
    }

    /// `GET …/events?after=N&limit=M`.
    pub fn events_url(&self, after: u64, limit: usize) -> String {
        format!("{}/events?after={after}&limit={limit}", self.session_base())
    }

    /// `ws(s)://…/ws?envelope=1&from_sequence_num=N` (from an `http(s)` base).
    pub fn ws_url(&self, from: u64) -> String {
        let base = self.session_base();
        let base = if let Some(rest) = base.strip_prefix("https://") {
            format!("wss://{rest}")
        } else if let Some(rest) = base.strip_prefix("http://") {
            format!("ws://{rest}")
        } else {
            base
        };
        format!("{base}/ws?envelope=1&from_sequence_num={from}")
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters (`A-Z a-z 0-9 - _ ~`); `.` is
/// encoded too, so no id reads as a `.` / `..` segment to a parser that only folds literal dots.
pub fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The relay's error body `{"error":{"type","message"}}` → (type, message).
pub fn error_type(body: &str) -> (String, String) {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let s = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_control())
            .take(512)
            .collect::<String>()
    };
    (s("/error/type"), s("/error/message"))
}

/// Maps a POST answer to an outcome. 2xx: the results; 400/401/403/404/409/
/// 410/413/422: refused (not retried); anything else: retryable.
pub fn classify_post_status(
    status: u16,
    retry_after: Option<&str>,
    body: &str,
    now_unix_ms: u64,
) -> PostOutcome {
    if (200..300).contains(&status) {
        let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let results = v
            .get("results")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|r| {
                        (
                            r.get("event_id").and_then(Value::as_str).map(str::to_owned),
                            r.get("sequence_num").and_then(Value::as_u64),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        return PostOutcome::Accepted(results);
    }
    let (kind, message) = error_type(body);
    match status {
        400 | 401 | 403 | 404 | 409 | 410 | 413 | 422 => PostOutcome::Rejected {
            status,
            kind,
            message,
        },
        _ => PostOutcome::Retryable {
            error: if kind.is_empty() {
                format!("HTTP {status}")
            } else {
                format!("HTTP {status} ({kind}): {message}")
            },
            retry_after_ms: retry_after.and_then(|v| parse_retry_after(v, now_unix_ms)),
        },
    }
}

/// Parses `{"events":[…],"truncated":bool,"last_sequence_num":n}`.
pub fn events_page(body: &str) -> Result<EventsPage, Failure> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| Failure::Network(format!("event list is not JSON: {e}")))?;
    let Some(events) = v.get("events").and_then(Value::as_array) else {
        return Err(Failure::Network("event list has no `events` array".into()));
    };
    Ok(EventsPage {
        events: events.clone(),
        truncated: v.get("truncated").and_then(Value::as_bool).unwrap_or(false),
        last_sequence_num: v
            .get("last_sequence_num")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn urls() {
        let e = Endpoint::new("http://127.0.0.1:9/", "cse_1", Some("tok-value-123".into()))
            .with_login_secret(Some("login-value-456".into()));
        assert_eq!(
            e.stream_url(0),
            "http://127.0.0.1:9/v1/code/sessions/cse_1/events/stream"
        );
        assert_eq!(
            e.stream_url(12),
            "http://127.0.0.1:9/v1/code/sessions/cse_1/events/stream?from_sequence_num=12"
        );
        assert_eq!(
            e.send_url(),
            "http://127.0.0.1:9/v1/code/sessions/cse_1/events"
        );
        assert_eq!(
            e.events_url(3, 10),
            "http://127.0.0.1:9/v1/code/sessions/cse_1/events?after=3&limit=10"
        );
        assert_eq!(
            e.ws_url(5),
            "ws://127.0.0.1:9/v1/code/sessions/cse_1/ws?envelope=1&from_sequence_num=5"
        );
        let s = Endpoint::new("https://relay.example", "cse_1", None);
        assert!(s.ws_url(0).starts_with("wss://relay.example/"));
        let debug = format!("{e:?}");
        assert!(
            !debug.contains("tok-value-123") && !debug.contains("login-value-456"),
            "the token and the login secret are never logged: {debug}"
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn crafted_session_ids_stay_one_path_segment() {
        let prefix = "http://h/v1/code/sessions/";
        for id in [
            "x/../../v1/code/sessions",
            "a?b#c",
            "../..",
            "a b%2F",
            "é/\\x",
        ] {
            let e = Endpoint::new("http://h", id, None);
            let urls = [
                (e.send_url(), "/events"),
                (e.stream_url(0), "/events/stream"),
                (e.events_url(1, 2), "/events?after=1&limit=2"),
            ];
            for (url, tail) in urls {
                let segment = url
                    .strip_prefix(prefix)
                    .and_then(|r| r.strip_suffix(tail))
                    .unwrap_or_else(|| panic!("{id:?} -> {url}"));
                assert!(
                    segment
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_~%".contains(&b)),
                    "{id:?} -> {url}"
                );
            }
            let ws = e.ws_url(0);
            assert!(ws.ends_with("/ws?envelope=1&from_sequence_num=0"), "{ws}");
            assert_eq!(ws.matches('?').count(), 1, "{ws}");
            assert!(!ws.contains('#') && !ws.contains("/../"), "{ws}");
        }
        assert_eq!(
            Endpoint::new("http://h", "x/../../v1/code/sessions", None).send_url(),
            "http://h/v1/code/sessions/x%2F%2E%2E%2F%2E%2E%2Fv1%2Fcode%2Fsessions/events"
        );
        assert_eq!(encode_segment("a?b#c"), "a%3Fb%23c");
        assert_eq!(encode_segment("cse_0aZ-~"), "cse_0aZ-~");
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn post_statuses() {
        assert_eq!(
            classify_post_status(
                200,
                None,
                r#"{"results":[{"event_id":"e","sequence_num":4},{"event_id":null,"sequence_num":null}]}"#,
                0
            ),
            PostOutcome::Accepted(vec![(Some("e".into()), Some(4)), (None, None)])
        );
        assert_eq!(
            classify_post_status(
                409,
                None,
                r#"{"error":{"type":"request_not_pending","message":"m"}}"#,
                0
            ),
            PostOutcome::Rejected {
                status: 409,
                kind: "request_not_pending".into(),
                message: "m".into()
            }
        );
        assert_eq!(
            classify_post_status(503, Some("2"), "", 0),
            PostOutcome::Retryable {
                error: "HTTP 503".into(),
                retry_after_ms: Some(2_000)
            }
        );
        assert!(matches!(
            classify_post_status(429, None, "", 0),
            PostOutcome::Retryable { .. }
        ));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn pages() {
        let p = events_page(
            r#"{"events":[{"sequence_num":1}],"truncated":true,"last_sequence_num":9}"#,
        )
        .unwrap();
        assert_eq!(
            (p.events.len(), p.truncated, p.last_sequence_num),
            (1, true, 9)
        );
        assert!(events_page("{}").is_err());
    }
}
