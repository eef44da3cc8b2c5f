//! What observers do not see and what the event log never holds in clear: the agent's `initialize`
//! answer (account email, organisation, pid) is redacted for observers; the values of
//! `update_environment_variables` are replaced before the client's message is stored (the agent still
//! gets the real values on stdin).

use bridge_protocol::MessageType;
use serde_json::Value;

/// The placeholder for a value kept out of sight.
pub const REDACTED: &str = "[redacted]";

/// Keys of an `initialize` answer an observer does not see.
const PRIVATE_INIT_KEYS: &[&str] = &["account", "pid", "email", "organization", "organisation"];

/// The line to store for a client message: `Some` with the variable values replaced when it is an
/// `update_environment_variables` message (top level or as a control request), else `None` (store
/// the original).
pub fn stored_client_line(ty: &str, value: &Value) -> Option<String> {
    let path = match MessageType::from_tag(ty) {
        MessageType::UpdateEnvironmentVariables => "/variables",
        MessageType::ControlRequest
            if value.pointer("/request/subtype").and_then(Value::as_str)
                == Some("update_environment_variables") =>
        {
            "/request/variables"
        }
        _ => return None,
    };
    let mut v = value.clone();
    let vars = v.pointer_mut(path)?.as_object_mut()?;
    for val in vars.values_mut() {
        *val = Value::String(REDACTED.into());
    }
    Some(v.to_string())
}

/// Redacts an `initialize` answer (or anything holding one) for an observer, in place: the account,
/// email, organisation and pid, wherever they are nested.
pub fn initialize_for_observer(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, val) in m.iter_mut() {
                if PRIVATE_INIT_KEYS.contains(&k.as_str()) {
                    *val = Value::String(REDACTED.into());
                } else {
                    initialize_for_observer(val);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(initialize_for_observer),
        _ => {}
    }
}

/// An event payload as an observer may see it: `Some` when it had to change (a control response
/// carrying an `initialize` answer, i.e. one with an account or pid), else `None`.
pub fn payload_for_observer(payload: &Value) -> Option<Value> {
    if MessageType::of(payload) != Some(MessageType::ControlResponse) {
        return None;
    }
    let inner = payload.pointer("/response/response")?.as_object()?;
    if !PRIVATE_INIT_KEYS.iter().any(|k| inner.contains_key(*k)) {
        return None;
    }
    let mut v = payload.clone();
    if let Some(r) = v.pointer_mut("/response/response") {
        initialize_for_observer(r);
    }
    Some(v)
}

/// A frame as an observer may see it: the same frame unless it is a worker's control response
/// carrying an `initialize` answer, which is rebuilt with [`payload_for_observer`].
pub fn frame_for_observer(
    f: &std::sync::Arc<crate::core::frames::Frame>,
) -> std::sync::Arc<crate::core::frames::Frame> {
    use crate::core::frames::{Frame, FrameKind};
    if f.kind != FrameKind::ClientEvent {
        return f.clone();
    }
    let Ok(text) = std::str::from_utf8(&f.payload) else {
        return f.clone();
    };
    if !text.contains("\"control_response\"")
        || !PRIVATE_INIT_KEYS
            .iter()
            .any(|k| text.contains(&format!("\"{k}\"")))
    {
        return f.clone();
    }
    let (Ok(payload), Ok(envelope)) = (
        serde_json::from_str::<Value>(text),
        serde_json::from_slice::<Value>(&f.data),
    ) else {
        return f.clone();
    };
    let Some(redacted) = payload_for_observer(&payload) else {
        return f.clone();
    };
    let field = |k: &str| {
        envelope
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let e = crate::core::store::StoredEvent {
        session_id: String::new(),
        seq: f.seq.unwrap_or_default(),
        event_id: field("event_id"),
        event_type: field("event_type"),
        source: f.source.clone(),
        created_at: field("created_at"),
        payload: redacted.to_string(),
        client_uuid: None,
    };
    Frame::durable_with(&e, f.ends_session)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn environment_values_are_replaced_keys_kept() {
        let top = json!({"type":"update_environment_variables","variables":{"TOKEN":"s3cret","B":"x"},"request_id":"e1"});
        let line = stored_client_line("update_environment_variables", &top).unwrap();
        assert!(!line.contains("s3cret"));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["variables"]["TOKEN"], REDACTED);
        assert_eq!(v["request_id"], "e1");
        let ctl = json!({"type":"control_request","request_id":"r","request":{"subtype":"update_environment_variables","variables":{"K":"v1"}}});
        let line = stored_client_line("control_request", &ctl).unwrap();
        assert!(!line.contains("v1") && line.contains("\"K\""));
        assert!(stored_client_line("user", &json!({"type":"user"})).is_none());
    }

    #[test]
    fn initialize_answers_lose_account_and_pid() {
        let p = json!({"type":"control_response","response":{"subtype":"success","request_id":"i1",
            "response":{"models":[{"value":"m"}],"account":{"email":"a@b.c","organization":"Org"},"pid":4242}}});
        let r = payload_for_observer(&p).unwrap();
        let s = r.to_string();
        assert!(!s.contains("a@b.c") && !s.contains("Org") && !s.contains("4242"));
        assert_eq!(r["response"]["response"]["models"][0]["value"], "m");
        assert!(
            payload_for_observer(
                &json!({"type":"control_response","response":{"response":{"ok":1}}})
            )
            .is_none()
        );
    }

    #[test]
    fn frames_for_observers_are_rebuilt_only_when_needed() {
        use crate::core::frames::Frame;
        use crate::core::store::{Source, StoredEvent};
        let ev = |payload: &str| StoredEvent {
            session_id: "s".into(),
            seq: 7,
            event_id: "ev7".into(),
            event_type: "control_response".into(),
            source: Source::Worker,
            created_at: "2026-01-01T00:00:00Z".into(),
            payload: payload.into(),
            client_uuid: None,
        };
        let plain = Frame::durable(&ev(
            r#"{"type":"control_response","response":{"response":{}}}"#,
        ));
        assert!(std::sync::Arc::ptr_eq(&plain, &frame_for_observer(&plain)));
        let init = Frame::durable(&ev(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"i","response":{"account":{"email":"me@x.io"},"pid":99}}}"#,
        ));
        let seen = frame_for_observer(&init);
        let sse = std::str::from_utf8(&seen.sse).unwrap();
        assert!(
            sse.starts_with("id: 7\n") && sse.contains("\"event_id\":\"ev7\""),
            "{sse}"
        );
        assert!(!sse.contains("me@x.io") && !sse.contains(":99"), "{sse}");
        assert!(!seen.ws_envelope().as_str().contains("me@x.io"));
    }
}
