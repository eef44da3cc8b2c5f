//! `BridgeClient`'s option objects (`connect`, `createSession`, `login`), checked with errors that
//! name the option.

use bridge_transport::TransportKind;
use serde_json::{Map, Value};

/// Where the relay is and what to show it: the options `baseUrl`, `token` and `loginSecret` of
/// `connect` and `createSession`.
#[derive(Debug, Clone, PartialEq)]
pub struct RelayAccess {
    /// The relay's origin; empty means the page's own origin.
    pub base_url: String,
    /// The controller token (or, to connect, an observer token); `None` uses the login cookie.
    pub token: Option<String>,
    /// The login secret that goes with the login cookie (`None`: the one kept at login, if any).
    pub login_secret: Option<String>,
}

/// Options of `BridgeClient.connect`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectOptions {
    pub relay: RelayAccess,
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
    pub relay: RelayAccess,
    /// The body of `POST /v1/code/sessions` (`cwd`, `model`, `permission_mode`, `title`).
    pub body: Value,
}

pub(crate) fn object<'a>(options: &'a Value, what: &str) -> Result<&'a Map<String, Value>, String> {
    match options {
        Value::Object(map) => Ok(map),
        Value::Null => Err(format!("{what}: pass an options object")),
        _ => Err(format!("{what}: the options must be an object")),
    }
}

/// A string option: absent or `null` → `None`; anything but a string is an error.
pub(crate) fn opt_string(
    map: &Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<Option<String>, String> {
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

fn relay_access(map: &Map<String, Value>, what: &str) -> Result<RelayAccess, String> {
    Ok(RelayAccess {
        base_url: base_url(map, what)?,
        token: token(map, what)?,
        login_secret: opt_string(map, "loginSecret", what)?.filter(|t| !t.is_empty()),
    })
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
        relay: relay_access(map, WHAT)?,
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
        relay: relay_access(map, WHAT)?,
        body: Value::Object(body),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[test]
    fn connect_options_are_checked() {
        let o = connect_options(&json!({"baseUrl":"http://127.0.0.1:9/","token":"t","sessionId":"cse_1","transport":"hybrid","fromSeq":7,"loginSecret":"ls"})).unwrap();
        assert_eq!(
            o,
            ConnectOptions {
                relay: RelayAccess {
                    base_url: "http://127.0.0.1:9".into(),
                    token: Some("t".into()),
                    login_secret: Some("ls".into()),
                },
                session_id: "cse_1".into(),
                transport: TransportKind::Hybrid,
                from_seq: 7,
            }
        );
        let d = connect_options(&json!({"sessionId":"cse_1"})).unwrap();
        assert_eq!(
            (
                d.transport,
                d.from_seq,
                d.relay.token,
                d.relay.base_url.as_str()
            ),
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
        assert_eq!(o.relay.base_url, "https://r.example");
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
}
