//! `bridge-console-client`: the Bridge Console's client as a JavaScript package, with no UI.
//!
//! `scripts/pack.sh` builds this crate with wasm-bindgen (`--target web`) into `pkg/`, an ES module
//! package for browsers and Node 20 (see `pkg/README.md`). It is a thin layer: the connection is
//! `bridge-transport` (the console's own SSE+POST / WebSocket / hybrid transports with reconnect,
//! lossless resume, dedup and the outbox), messages are decoded and classified by
//! `bridge-protocol`, and every client→CLI payload is made by `bridge_protocol::build`.
//!
//! This module holds the pure parts, tested natively: option parsing, the permission answer,
//! [`classify`], [`parse_ndjson`] and the state names. The JS bindings live in `js` (wasm32 only).

use bridge_protocol::framing::NdjsonDecoder;
use bridge_protocol::{
    CliMessage, ParseError, PermissionBehavior, PermissionMode, PermissionRuleValue,
    PermissionUpdate, PermissionUpdateDestination, SystemMessage, build,
};
use bridge_transport::{CloseReason, ConnectionState, TransportKind};
use serde_json::{Map, Value};

#[cfg(target_arch = "wasm32")]
mod http;
#[cfg(target_arch = "wasm32")]
mod js;

/// What [`classify`] answers, also listed in the package's `.d.ts` (`MessageClass`).
pub const CLASSES: &[&str] = &[
    "assistant",
    "user",
    "result",
    "system",
    "stream_event",
    "tool_progress",
    "tool_use_summary",
    "auth_status",
    "rate_limit_event",
    "prompt_suggestion",
    "conversation_reset",
    "active_goal",
    "can_use_tool",
    "elicitation",
    "control_request",
    "control_response",
    "control_cancel_request",
    "keep_alive",
    "command_lifecycle",
    "internal",
    "unknown",
    "invalid",
];

/// Classifies a CLI→client message by the protocol crate's unions: its `type`, except that a
/// `control_request` asking for a tool permission is `can_use_tool` and an MCP form or URL request
/// is `elicitation` (other control requests stay `control_request`). Internal frames the protocol
/// recognises are `internal`; a type (or `system` subtype) it does not know, kept whole, is
/// `unknown`; something that is not an object with a string `type` is `invalid`.
///
/// Only the tags are read: the typed body decoder (`CliMessage::from_value`) would more than double
/// the package's wasm, so a known type with a bad body is classified by its type here (the tests
/// check that both agree on the golden corpus).
pub fn classify(message: &Value) -> &'static str {
    let Some(kind) = message.get("type").and_then(Value::as_str) else {
        return "invalid";
    };
    match kind {
        "system" => match message.get("subtype").and_then(Value::as_str) {
            Some(subtype) if SystemMessage::is_recognised_subtype(subtype) => "system",
            Some(_) => "unknown",
            None => "invalid",
        },
        "control_request" => match message.pointer("/request/subtype").and_then(Value::as_str) {
            Some("can_use_tool") => "can_use_tool",
            Some("elicitation") => "elicitation",
            Some(_) => "control_request",
            None => "invalid",
        },
        _ if CliMessage::INTERNAL_TYPES.contains(&kind) => "internal",
        _ => CLASSES
            .iter()
            .find(|class| **class == kind && CliMessage::KNOWN_TYPES.contains(class))
            .copied()
            .unwrap_or("unknown"),
    }
}

/// A line [`parse_ndjson`] could not turn into a message.
#[derive(Debug, Clone, PartialEq)]
pub struct LineError {
    /// 1-based line number in the input (blank lines count).
    pub line: u64,
    /// What is wrong with it (the protocol crate's message, which quotes the line).
    pub message: String,
}

/// The result of [`parse_ndjson`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// Every message, as its JSON (unknown types included, kept whole), in order.
    pub messages: Vec<Value>,
    /// Lines that are not messages: invalid UTF-8 or JSON, over-long, or not an object with a
    /// string `type`.
    pub errors: Vec<LineError>,
}

/// Splits NDJSON text with the protocol crate's sans-IO decoder (CRLF, blank lines, a last line
/// without `\n`, over-long lines) and keeps each line that is a message (a JSON object with a string
/// `type`). A bad line is reported with the protocol crate's error and skipped; the lines after it
/// are still read. Bodies are not checked against their type (see [`classify`]).
pub fn parse_ndjson(text: &str) -> Parsed {
    let mut decoder = NdjsonDecoder::default();
    let mut lines = decoder.feed(text.as_bytes());
    lines.extend(decoder.finish());
    let mut parsed = Parsed::default();
    for line in lines {
        let line = match line {
            Ok(line) => line,
            Err(err) => {
                parsed.errors.push(LineError {
                    line: err.line(),
                    message: err.to_string(),
                });
                continue;
            }
        };
        let error = match serde_json::from_str::<Value>(&line.text) {
            Ok(value) if value.get("type").is_some_and(Value::is_string) => {
                parsed.messages.push(value);
                continue;
            }
            Ok(_) => ParseError::NotAMessage {
                line: String::new(),
            },
            Err(e) => ParseError::InvalidJson {
                reason: e.to_string(),
                line: String::new(),
            },
        };
        parsed.errors.push(LineError {
            line: line.number,
            message: error.with_line(&line.text).to_string(),
        });
    }
    parsed
}

/// The state names the package reports: `connecting`, `live`, `reconnecting`, `offline` (closed:
/// by `close()`, or a failure retrying cannot fix) or `ended` (the session is over and its whole
/// log was delivered). The same mapping as the console's header.
pub fn state_name(state: &ConnectionState) -> &'static str {
    match state {
        ConnectionState::Connecting { .. } => "connecting",
        ConnectionState::Open => "live",
        // The package never suspends; a suspended transport would resume from its cursor.
        ConnectionState::Reconnecting { .. } | ConnectionState::Suspended => "reconnecting",
        ConnectionState::Closed {
            reason: CloseReason::Permanent(why),
        } if why.contains("session_ended") => "ended",
        ConnectionState::Closed { .. } => "offline",
    }
}

/// Options of `BridgeClient.connect`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectOptions {
    /// The relay's origin; empty means the page's own origin.
    pub base_url: String,
    /// The controller (or observer) token; `None` uses the login cookie.
    pub token: Option<String>,
    /// The login secret that goes with the login cookie (`None`: the one kept at login, if any).
    pub login_secret: Option<String>,
    /// The session (`cse_…`).
    pub session_id: String,
    /// Which transport.
    pub transport: TransportKind,
    /// The relay sequence number to resume after (0: the whole log).
    pub from_seq: u64,
}

/// Options of `BridgeClient.createSession`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateOptions {
    /// The relay's origin; empty means the page's own origin.
    pub base_url: String,
    /// The controller token; `None` uses the login cookie.
    pub token: Option<String>,
    /// The login secret that goes with the login cookie (`None`: the one kept at login, if any).
    pub login_secret: Option<String>,
    /// The body of `POST /v1/code/sessions` (`cwd`, `model`, `permission_mode`, `title`).
    pub body: Value,
}

fn object<'a>(options: &'a Value, what: &str) -> Result<&'a Map<String, Value>, String> {
    match options {
        Value::Object(map) => Ok(map),
        Value::Null => Err(format!("{what}: pass an options object")),
        _ => Err(format!("{what}: the options must be an object")),
    }
}

/// A string option: absent or `null` → `None`; anything but a string is an error.
fn opt_string(map: &Map<String, Value>, key: &str, what: &str) -> Result<Option<String>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{what}: `{key}` must be a string")),
    }
}

fn base_url(map: &Map<String, Value>, what: &str) -> Result<String, String> {
    let url = opt_string(map, "baseUrl", what)?.unwrap_or_default();
    let url = url.trim().trim_end_matches('/').to_owned();
    if !url.is_empty() && !url.starts_with("http://") && !url.starts_with("https://") {
        return Err(format!(
            "{what}: `baseUrl` must start with http:// or https:// (got '{url}')"
        ));
    }
    Ok(url)
}

fn token(map: &Map<String, Value>, what: &str) -> Result<Option<String>, String> {
    Ok(opt_string(map, "token", what)?.filter(|t| !t.is_empty()))
}

fn login_secret(map: &Map<String, Value>, what: &str) -> Result<Option<String>, String> {
    Ok(opt_string(map, "loginSecret", what)?.filter(|t| !t.is_empty()))
}

/// Options of `BridgeClient.login`.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginOptions {
    /// The relay's origin; empty means the page's own origin.
    pub base_url: String,
    /// The token or one-time login code to exchange for the login cookie.
    pub token: String,
}

/// Reads `login`'s options.
pub fn login_options(options: &Value) -> Result<LoginOptions, String> {
    const WHAT: &str = "login";
    let map = object(options, WHAT)?;
    Ok(LoginOptions {
        base_url: base_url(map, WHAT)?,
        token: token(map, WHAT)?.ok_or_else(|| {
            format!("{WHAT}: `token` is required (the relay's token or a one-time login code)")
        })?,
    })
}

/// Reads `connect`'s options (already converted from the JS object to JSON).
pub fn connect_options(options: &Value) -> Result<ConnectOptions, String> {
    const WHAT: &str = "connect";
    let map = object(options, WHAT)?;
    let session_id = opt_string(map, "sessionId", WHAT)?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("{WHAT}: `sessionId` is required (from createSession)"))?;
    if !session_id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "{WHAT}: `sessionId` '{session_id}' is not a session id (letters, digits, `_` and `-`)"
        ));
    }
    let transport = match opt_string(map, "transport", WHAT)?.as_deref() {
        None | Some("sse") => TransportKind::SsePost,
        Some("ws") => TransportKind::WebSocket,
        Some("hybrid") => TransportKind::Hybrid,
        Some(other) => {
            return Err(format!(
                "{WHAT}: `transport` must be 'sse', 'ws' or 'hybrid', not '{other}'"
            ));
        }
    };
    let from_seq = match map.get("fromSeq") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_u64().ok_or_else(|| {
            format!("{WHAT}: `fromSeq` must be a whole number ≥ 0 (a relay sequence number)")
        })?,
    };
    Ok(ConnectOptions {
        base_url: base_url(map, WHAT)?,
        token: token(map, WHAT)?,
        login_secret: login_secret(map, WHAT)?,
        session_id,
        transport,
        from_seq,
    })
}

/// Reads `createSession`'s options.
pub fn create_options(options: &Value) -> Result<CreateOptions, String> {
    const WHAT: &str = "createSession";
    let empty = Value::Object(Map::new());
    let options = if options.is_null() { &empty } else { options };
    let map = object(options, WHAT)?;
    let mut body = Map::new();
    for (key, field) in [
        ("cwd", "cwd"),
        ("model", "model"),
        ("permissionMode", "permission_mode"),
        ("title", "title"),
    ] {
        if let Some(v) = opt_string(map, key, WHAT)? {
            body.insert(field.to_owned(), Value::String(v));
        }
    }
    Ok(CreateOptions {
        base_url: base_url(map, WHAT)?,
        token: token(map, WHAT)?,
        login_secret: login_secret(map, WHAT)?,
        body: Value::Object(body),
    })
}

/// What this client saw of a `can_use_tool` request (to fill in `toolUseID` and a default
/// `updatedInput`).
#[derive(Debug, Clone, PartialEq)]
pub struct SeenPermission {
    /// The tool call the request is about.
    pub tool_use_id: Option<String>,
    /// The input as the CLI asked.
    pub input: Value,
}

/// If `message` is a `can_use_tool` request: its `request_id` and what the answer needs.
pub fn permission_request(message: &Value) -> Option<(String, SeenPermission)> {
    if message.get("type")?.as_str()? != "control_request" {
        return None;
    }
    let request = message.get("request")?;
    if request.get("subtype")?.as_str()? != "can_use_tool" {
        return None;
    }
    Some((
        message.get("request_id")?.as_str()?.to_owned(),
        SeenPermission {
            tool_use_id: request
                .get("tool_use_id")
                .and_then(Value::as_str)
                .map(str::to_owned),
            input: request.get("input").cloned().unwrap_or(Value::Null),
        },
    ))
}

/// The `request_id` a message settles: a `control_response` or a `control_cancel_request`.
pub fn settled_request(message: &Value) -> Option<&str> {
    match message.get("type")?.as_str()? {
        "control_response" => message.get("response")?.get("request_id")?.as_str(),
        "control_cancel_request" => message.get("request_id")?.as_str(),
        _ => None,
    }
}

/// Builds the `control_response` answering `can_use_tool` request `request_id` from the JS
/// decision (`{behavior:'allow', updatedInput?, updatedPermissions?}` or `{behavior:'deny',
/// message?, interrupt?}`) with `bridge_protocol::build`.
pub fn permission_answer(
    request_id: &str,
    decision: &Value,
    seen: Option<&SeenPermission>,
) -> Result<Value, String> {
    const WHAT: &str = "respondToPermission";
    if request_id.is_empty() {
        return Err(format!(
            "{WHAT}: the request id is required (the `request_id` of the can_use_tool message)"
        ));
    }
    let map = object(decision, WHAT)?;
    let tool_use_id = seen.and_then(|s| s.tool_use_id.as_deref());
    match opt_string(map, "behavior", WHAT)?.as_deref() {
        Some("allow") => {
            let updated_input = match map.get("updatedInput") {
                Some(Value::Object(input)) => Value::Object(input.clone()),
                Some(Value::Null) | None => match seen {
                    Some(seen) => seen.input.clone(),
                    None => {
                        return Err(format!(
                            "{WHAT}: `updatedInput` is required: this client has not seen can_use_tool \
                             request '{request_id}', so it cannot allow its input unchanged"
                        ));
                    }
                },
                Some(_) => return Err(format!("{WHAT}: `updatedInput` must be an object")),
            };
            let updated_permissions = match map.get("updatedPermissions") {
                None | Some(Value::Null) => Vec::new(),
                Some(v) => permission_updates(v).map_err(|e| format!("{WHAT}: {e}"))?,
            };
            Ok(build::value::allow(
                request_id,
                tool_use_id,
                updated_input,
                updated_permissions,
            ))
        }
        Some("deny") => {
            let message = opt_string(map, "message", WHAT)?.unwrap_or_default();
            let interrupt = match map.get("interrupt") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(format!("{WHAT}: `interrupt` must be true or false")),
            };
            Ok(build::value::deny(
                request_id,
                tool_use_id,
                &message,
                interrupt,
            ))
        }
        Some(other) => Err(format!(
            "{WHAT}: `behavior` must be 'allow' or 'deny', not '{other}'"
        )),
        None => Err(format!(
            "{WHAT}: `behavior` ('allow' or 'deny') is required"
        )),
    }
}

/// Reads `updatedPermissions` into the protocol crate's [`PermissionUpdate`]s through its
/// constructors. (Not with serde: its derived decoders would add a tenth to the package's
/// gzipped wasm.) An update of a type the protocol does not know is passed on whole.
pub fn permission_updates(value: &Value) -> Result<Vec<PermissionUpdate>, String> {
    let Value::Array(items) = value else {
        return Err("`updatedPermissions` must be a list of permission updates".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            permission_update(item).map_err(|e| format!("`updatedPermissions[{i}]`: {e}"))
        })
        .collect()
}

fn field<'a>(value: &'a Value, key: &str) -> Result<&'a str, String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("`{key}` must be a string"))
}

fn permission_update(update: &Value) -> Result<PermissionUpdate, String> {
    let kind = field(update, "type")?;
    let destination = || field(update, "destination").map(PermissionUpdateDestination::from);
    let list = |key: &str| {
        update
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| format!("`{key}` must be a list"))
    };
    match kind {
        "addRules" | "replaceRules" | "removeRules" => {
            let rules = list("rules")?
                .iter()
                .map(|rule| {
                    let tool = field(rule, "toolName")?;
                    match rule.get("ruleContent") {
                        None | Some(Value::Null) => Ok(PermissionRuleValue::tool(tool)),
                        Some(Value::String(content)) => {
                            Ok(PermissionRuleValue::with_content(tool, content.as_str()))
                        }
                        Some(_) => Err("`ruleContent` must be a string".to_owned()),
                    }
                })
                .collect::<Result<Vec<_>, String>>()?;
            let behavior = PermissionBehavior::from(field(update, "behavior")?);
            let destination = destination()?;
            Ok(match kind {
                "addRules" => PermissionUpdate::add_rules(rules, behavior, destination),
                "replaceRules" => PermissionUpdate::replace_rules(rules, behavior, destination),
                _ => PermissionUpdate::remove_rules(rules, behavior, destination),
            })
        }
        "setMode" => Ok(PermissionUpdate::set_mode(
            PermissionMode::from(field(update, "mode")?),
            destination()?,
        )),
        "addDirectories" | "removeDirectories" => {
            let directories = list("directories")?
                .iter()
                .map(|d| {
                    d.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| "`directories` must hold strings".to_owned())
                })
                .collect::<Result<Vec<_>, String>>()?;
            let destination = destination()?;
            Ok(if kind == "addDirectories" {
                PermissionUpdate::add_directories(directories, destination)
            } else {
                PermissionUpdate::remove_directories(directories, destination)
            })
        }
        _ => Ok(PermissionUpdate::Other(update.clone())),
    }
}

/// `set_permission_mode` for `mode` (any string: the set of modes is open).
pub fn set_permission_mode(request_id: &str, mode: &str) -> Result<Value, String> {
    if mode.is_empty() {
        return Err(
            "setPermissionMode: the mode is required (e.g. 'default', 'acceptEdits', 'plan')"
                .into(),
        );
    }
    Ok(build::value::set_permission_mode(
        request_id,
        PermissionMode::from(mode),
    ))
}

/// A hint for a connect failure, by what the relay said.
pub fn connect_hint(error: &str) -> &'static str {
    if error.contains("HTTP 401") || error.contains("code 1008") || error.contains("code 4001") {
        " (check the token, or log in first when relying on the cookie)"
    } else if error.contains("HTTP 403") || error.contains("code 4003") {
        " (this token may not read that session)"
    } else if error.contains("HTTP 404") || error.contains("code 4404") {
        " (no such session on this relay)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_with_the_protocol_decoder() {
        let cases = [
            (json!({"type":"keep_alive"}), "keep_alive"),
            (
                json!({"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t"}}),
                "can_use_tool",
            ),
            (
                json!({"type":"control_request","request_id":"r","request":{"subtype":"interrupt"}}),
                "control_request",
            ),
            (json!({"type":"brand_new","x":1}), "unknown"),
            (json!({"type":"autocompact_state"}), "internal"),
            // only the tags are read: a known type with a bad body keeps its class
            (json!({"type":"assistant","message":42}), "assistant"),
            (json!({"type":"system"}), "invalid"),
            (json!({"type":"system","subtype":"brand_new"}), "unknown"),
            (json!({"type":"system","subtype":"init"}), "system"),
            (
                json!({"type":"control_request","request":{"subtype":"elicitation"}}),
                "elicitation",
            ),
            (json!("text"), "invalid"),
            (json!({"no":"type"}), "invalid"),
            (
                json!({"type":"control_cancel_request","request_id":"r"}),
                "control_cancel_request",
            ),
        ];
        for (message, class) in cases {
            assert_eq!(classify(&message), class, "{message}");
            assert!(CLASSES.contains(&class));
        }
    }

    #[test]
    fn every_cli_line_of_the_corpus_classifies() {
        // Capture format: `<< ` lines are what the CLI wrote, `>> ` what a client wrote.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");
        let mut seen = std::collections::BTreeSet::new();
        let mut count = 0;
        for path in walk(std::path::Path::new(dir)) {
            let text = std::fs::read_to_string(&path).unwrap();
            let cli: String = text
                .lines()
                .filter_map(|l| l.strip_prefix("<< "))
                .map(|l| format!("{l}\n"))
                .collect();
            let parsed = parse_ndjson(&cli);
            assert!(
                parsed.errors.is_empty(),
                "{}: {:?}",
                path.display(),
                parsed.errors
            );
            for m in &parsed.messages {
                let class = classify(m);
                assert!(CLASSES.contains(&class));
                assert_eq!(class, typed_class(m), "{}: {m}", path.display());
                seen.insert(class);
                count += 1;
            }
        }
        assert!(count > 100, "the golden corpus was read ({count} messages)");
        for class in [
            "assistant",
            "stream_event",
            "can_use_tool",
            "result",
            "system",
            "user",
        ] {
            assert!(seen.contains(class), "{class} not in the corpus: {seen:?}");
        }
    }

    /// What the typed decoder says (`classify` reads only the tags).
    fn typed_class(message: &Value) -> &'static str {
        use bridge_protocol::ControlRequestBody;
        match CliMessage::from_value(message.clone()) {
            Err(_) => "invalid",
            Ok(CliMessage::Unknown(_)) => "unknown",
            Ok(CliMessage::Internal(_)) => "internal",
            Ok(CliMessage::ControlRequest(request)) => match request.request {
                ControlRequestBody::CanUseTool(_) => "can_use_tool",
                ControlRequestBody::Elicitation(_) => "elicitation",
                _ => "control_request",
            },
            Ok(known) => CLASSES
                .iter()
                .find(|c| **c == known.type_name())
                .copied()
                .unwrap_or("unknown"),
        }
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else if path.extension().is_some_and(|e| e == "ndjson")
                && !path.ends_with("malformed.ndjson")
            {
                out.push(path);
            }
        }
        out
    }

    #[test]
    fn ndjson_keeps_going_after_a_bad_line() {
        let text = "{\"type\":\"keep_alive\"}\r\n\nnot json\n[1,2]\n{\"type\":\"new_kind\"}";
        let parsed = parse_ndjson(text);
        assert_eq!(
            parsed.messages,
            vec![json!({"type":"keep_alive"}), json!({"type":"new_kind"})]
        );
        let lines: Vec<u64> = parsed.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![3, 4]);
        assert!(parsed.errors[0].message.starts_with("not valid JSON"));
        assert!(parsed.errors[0].message.contains("not json"));
        assert!(parsed.errors[1].message.starts_with("not a message"));

        assert_eq!(parse_ndjson(""), Parsed::default());
    }

    #[test]
    fn states_are_named_like_the_console() {
        use bridge_transport::Failure;
        assert_eq!(
            state_name(&ConnectionState::Connecting { attempt: 0 }),
            "connecting"
        );
        assert_eq!(state_name(&ConnectionState::Open), "live");
        assert_eq!(
            state_name(&ConnectionState::Reconnecting {
                attempt: 1,
                next_retry_ms: 1000,
                last_error: "x".into()
            }),
            "reconnecting"
        );
        let closed = |reason| state_name(&ConnectionState::Closed { reason });
        assert_eq!(closed(CloseReason::Client), "offline");
        assert_eq!(
            closed(CloseReason::Permanent("HTTP 404 (session_ended)".into())),
            "ended"
        );
        let ws = Failure::WsClosed {
            code: 4404,
            reason: "session_ended: nothing after 9".into(),
        };
        assert_eq!(closed(CloseReason::Permanent(ws.to_string())), "ended");
        assert_eq!(
            closed(CloseReason::Permanent("HTTP 401 (unauthorized)".into())),
            "offline"
        );
    }

    #[test]
    fn connect_options_are_checked() {
        let o = connect_options(&json!({"baseUrl":"http://127.0.0.1:9/","token":"t","sessionId":"cse_1","transport":"hybrid","fromSeq":7,"loginSecret":"ls"})).unwrap();
        assert_eq!(
            o,
            ConnectOptions {
                base_url: "http://127.0.0.1:9".into(),
                token: Some("t".into()),
                login_secret: Some("ls".into()),
                session_id: "cse_1".into(),
                transport: TransportKind::Hybrid,
                from_seq: 7,
            }
        );
        let d = connect_options(&json!({"sessionId":"cse_1"})).unwrap();
        assert_eq!(
            (d.transport, d.from_seq, d.token, d.base_url.as_str()),
            (TransportKind::SsePost, 0, None, "")
        );
        for (bad, says) in [
            (json!(null), "options object"),
            (json!({}), "`sessionId` is required"),
            (
                json!({"sessionId":"s","transport":"carrier-pigeon"}),
                "'sse', 'ws' or 'hybrid'",
            ),
            (json!({"sessionId":"s","fromSeq":-1}), "`fromSeq`"),
            (json!({"sessionId":"s","fromSeq":1.5}), "`fromSeq`"),
            (
                json!({"sessionId":"s","token":5}),
                "`token` must be a string",
            ),
            (json!({"sessionId":"s","baseUrl":"127.0.0.1:9"}), "http://"),
            (json!({"sessionId":"../admin"}), "not a session id"),
        ] {
            let err = connect_options(&bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn create_options_map_to_the_relay_body() {
        let o = create_options(&json!({"baseUrl":"https://r.example","cwd":"/w","model":"sonnet","permissionMode":"plan","extra":1})).unwrap();
        assert_eq!(o.base_url, "https://r.example");
        assert_eq!(
            o.body,
            json!({"cwd":"/w","model":"sonnet","permission_mode":"plan"})
        );
        assert_eq!(create_options(&Value::Null).unwrap().body, json!({}));
        assert_eq!(
            login_options(&json!({"token":"abc"})).unwrap(),
            LoginOptions {
                base_url: String::new(),
                token: "abc".into()
            }
        );
        assert!(
            login_options(&json!({}))
                .unwrap_err()
                .contains("`token` is required")
        );
        assert!(create_options(&json!({"cwd": 3})).is_err());
    }

    #[test]
    fn permission_answers_come_from_the_builders() {
        let request = json!({"type":"control_request","request_id":"req-1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"rm -rf build"},"tool_use_id":"toolu_1"}});
        let (id, seen) = permission_request(&request).unwrap();
        assert_eq!(id, "req-1");
        let edited = permission_answer(
            &id,
            &json!({"behavior":"allow","updatedInput":{"command":"ls build"},"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"ls:*"}],"behavior":"allow","destination":"session"}]}),
            Some(&seen),
        )
        .unwrap();
        assert_eq!(
            edited,
            build::value::allow(
                "req-1",
                Some("toolu_1"),
                json!({"command":"ls build"}),
                vec![PermissionUpdate::add_rules(
                    vec![bridge_protocol::PermissionRuleValue::with_content(
                        "Bash", "ls:*"
                    )],
                    "allow".into(),
                    "session".into()
                )]
            )
        );
        // allow as asked: the input seen in the request
        let as_asked = permission_answer(&id, &json!({"behavior":"allow"}), Some(&seen)).unwrap();
        assert_eq!(
            as_asked["response"]["response"]["updatedInput"],
            json!({"command":"rm -rf build"})
        );
        let deny = permission_answer(
            &id,
            &json!({"behavior":"deny","message":"not that","interrupt":true}),
            Some(&seen),
        )
        .unwrap();
        assert_eq!(
            deny,
            build::value::deny("req-1", Some("toolu_1"), "not that", true)
        );
        // the typed client union accepts both
        for answer in [&edited, &as_asked, &deny] {
            let line = serde_json::to_string(answer).unwrap();
            assert!(
                bridge_protocol::parse_client_line(&line)
                    .unwrap()
                    .is_known()
            );
        }
        for (bad, says) in [
            (json!({"behavior":"allow"}), "`updatedInput` is required"),
            (json!({"behavior":"maybe"}), "'allow' or 'deny'"),
            (json!({}), "`behavior`"),
            (
                json!({"behavior":"allow","updatedInput":{},"updatedPermissions":[{"type":"addRules"}]}),
                "`updatedPermissions[0]`: `rules`",
            ),
            (json!({"behavior":"deny","interrupt":"yes"}), "`interrupt`"),
        ] {
            let err = permission_answer("req-2", &bad, None).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert!(permission_answer("", &json!({"behavior":"deny"}), None).is_err());
    }

    #[test]
    fn permission_updates_read_like_the_typed_decoder() {
        let updates = json!([
            {"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test:*"},{"toolName":"Read"}],"behavior":"allow","destination":"localSettings"},
            {"type":"replaceRules","rules":[],"behavior":"deny","destination":"session"},
            {"type":"removeRules","rules":[{"toolName":"Edit"}],"behavior":"ask","destination":"userSettings"},
            {"type":"setMode","mode":"acceptEdits","destination":"session"},
            {"type":"addDirectories","directories":["/tmp/a"],"destination":"session"},
            {"type":"removeDirectories","directories":["/tmp/b"],"destination":"projectSettings"},
            {"type":"futureUpdate","x":1}
        ]);
        let ours = permission_updates(&updates).unwrap();
        let typed: Vec<PermissionUpdate> = serde_json::from_value(updates.clone()).unwrap();
        assert_eq!(ours, typed);
        assert_eq!(serde_json::to_value(&ours).unwrap(), updates);
        for (bad, says) in [
            (json!({}), "must be a list"),
            (json!([{"rules":[]}]), "[0]`: `type`"),
            (
                json!([{"type":"addRules","behavior":"allow","destination":"session"}]),
                "`rules` must be a list",
            ),
            (json!([{"type":"setMode","mode":"plan"}]), "`destination`"),
            (
                json!([{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":1}],"behavior":"allow","destination":"session"}]),
                "`ruleContent`",
            ),
            (
                json!([{"type":"addDirectories","directories":[1],"destination":"session"}]),
                "hold strings",
            ),
        ] {
            let err = permission_updates(&bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn settled_requests_are_recognised() {
        assert_eq!(
            settled_request(
                &json!({"type":"control_response","response":{"subtype":"success","request_id":"r1"}})
            ),
            Some("r1")
        );
        assert_eq!(
            settled_request(&json!({"type":"control_cancel_request","request_id":"r2"})),
            Some("r2")
        );
        assert_eq!(settled_request(&json!({"type":"user"})), None);
    }

    #[test]
    fn permission_modes_are_open() {
        let v = set_permission_mode("r", "someFutureMode").unwrap();
        assert_eq!(v["request"]["mode"], "someFutureMode");
        assert!(set_permission_mode("r", "").is_err());
    }
}
