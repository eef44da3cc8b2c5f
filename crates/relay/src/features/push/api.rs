//! `/v1/push/*`: the VAPID public key, subscriptions, a test push, and answering a permission prompt
//! from a notification. Every route needs the controller (observers get 403).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use bridge_protocol::api::push::{
    PushAnswerRequest, PushAnswered, PushDecision, PushDevice, PushDeviceList, PushSubscribeAnswer,
    PushSubscribeRequest, PushTestAnswer, VapidPublicKey,
};
use serde_json::{Value, json};

use super::deliver::{Attempt, b64url};
use super::payload::{self, Prompt};
use super::store::{EventKind, NewSubscription, StoreError, Subscription};
use super::{Device, Push, crypto, endpoint};
use crate::core::session::{PendingRequest, Session};
use crate::edge::error::ApiError;
use crate::edge::extract::{AppState, Controller, JsonBody};

/// Longest kept device label, in characters.
const LABEL_CHARS: usize = 100;
/// Most session ids in one subscription's filter.
const MAX_SESSION_FILTER: usize = 100;
/// What a notification's Deny answers with.
pub const DENY_MESSAGE: &str = "Denied from a notification";

/// The push routes, merged into [`crate::http::app`].
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/push/vapid-public-key", get(vapid_public_key))
        .route(
            "/v1/push/subscriptions",
            post(subscribe).get(list_subscriptions),
        )
        .route("/v1/push/subscriptions/{id}", delete(unsubscribe))
        .route("/v1/push/subscriptions/{id}/test", post(test_push))
        .route("/v1/push/answer", post(answer))
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Full => ApiError::conflict("too_many_subscriptions", e.to_string()),
            StoreError::Cluster(m) => ApiError::cluster_unavailable(m),
            StoreError::Sqlite(_) => {
                tracing::error!(error = %e, "push subscription store failure");
                ApiError::internal(e.to_string())
            }
        }
    }
}

fn push(app: &AppState) -> Result<Arc<Push>, ApiError> {
    Push::of(app).ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "push_unavailable",
            "push notifications are not set up on this relay",
        )
    })
}

fn parse<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> Result<T, ApiError> {
    serde_json::from_value(v).map_err(|e| ApiError::bad_request(format!("invalid {what}: {e}")))
}

async fn vapid_public_key(
    State(app): State<AppState>,
    Controller(_): Controller,
) -> Result<Json<VapidPublicKey>, ApiError> {
    Ok(Json(VapidPublicKey {
        key: push(&app)?.subs.vapid()?.public_key().to_owned(),
    }))
}

fn check_subscription(
    body: PushSubscribeRequest,
    push: &Push,
) -> Result<NewSubscription, ApiError> {
    endpoint::check(&body.endpoint, &push.config.endpoint_allow).map_err(ApiError::bad_request)?;
    let key = b64url(&body.keys.p256dh).ok_or_else(|| {
        ApiError::bad_request(
            "keys.p256dh is not base64url (expected the browser's getKey('p256dh'))",
        )
    })?;
    crypto::parse_public_key(&key)
        .map_err(|e| ApiError::bad_request(format!("keys.p256dh: {e}")))?;
    let auth = b64url(&body.keys.auth)
        .ok_or_else(|| ApiError::bad_request("keys.auth is not base64url"))?;
    if auth.len() != crypto::AUTH_SECRET_LEN {
        return Err(ApiError::bad_request(format!(
            "keys.auth must be {} bytes (base64url), got {}",
            crypto::AUTH_SECRET_LEN,
            auth.len()
        )));
    }
    let events = match body.events {
        None => EventKind::ALL.to_vec(),
        Some(list) => {
            let mut out = Vec::new();
            for e in &list {
                let k = EventKind::parse(e).ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "events: unknown event {e:?}; expected any of needs_you, resolved, turn_done, agent_exited"
                    ))
                })?;
                if !out.contains(&k) {
                    out.push(k);
                }
            }
            if out.is_empty() {
                return Err(ApiError::bad_request(
                    "events must name at least one event (or be left out for all)",
                ));
            }
            out
        }
    };
    if let Some(ids) = &body.session_ids {
        if ids.is_empty() {
            return Err(ApiError::bad_request(
                "session_ids must name at least one session (or be left out or null for every session)",
            ));
        }
        if ids.len() > MAX_SESSION_FILTER || ids.iter().any(|s| s.is_empty() || s.len() > 200) {
            return Err(ApiError::bad_request(format!(
                "session_ids: at most {MAX_SESSION_FILTER} non-empty session ids"
            )));
        }
    }
    let label = body
        .label
        .map(|l| l.trim().chars().take(LABEL_CHARS).collect::<String>())
        .filter(|l| !l.is_empty());
    Ok(NewSubscription {
        endpoint: body.endpoint,
        p256dh: body.keys.p256dh.trim().to_owned(),
        auth: body.keys.auth.trim().to_owned(),
        label,
        events,
        session_ids: body.session_ids,
        expiration_time: body
            .expiration_time
            .filter(|t| t.is_finite())
            .map(|t| t as i64),
    })
}

async fn subscribe(
    State(app): State<AppState>,
    Controller(_): Controller,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let push = push(&app)?;
    let body: PushSubscribeRequest = parse(
        body,
        "subscription (expected PushSubscription.toJSON(): {\"endpoint\", \"keys\": {\"p256dh\", \"auth\"}})",
    )?;
    let new = check_subscription(body, &push)?;
    let (id, created) = push.subs.upsert(&new).await?;
    tracing::info!(subscription = %id, created, label = ?new.label, "push subscription registered");
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(PushSubscribeAnswer { id })).into_response())
}

/// A subscription as the device list shows it: no keys, only its push service's origin.
fn device(s: &Subscription) -> PushDevice {
    let r = &s.registration;
    let origin = reqwest::Url::parse(&r.endpoint)
        .map(|u| endpoint::origin(&u))
        .unwrap_or_default();
    PushDevice {
        id: s.id.clone(),
        label: r.label.clone(),
        endpoint_origin: origin,
        events: r.events.iter().map(|e| e.as_str().to_owned()).collect(),
        expiration_time: r.expiration_time,
        created_at: s.created_at.clone(),
        updated_at: s.updated_at.clone(),
        last_success_at: s.last_success_at.clone(),
        last_error: s.last_error.clone(),
        last_error_at: s.last_error_at.clone(),
        // Absent means every session (clients read a missing list as "no filter").
        session_ids: r.session_ids.clone(),
    }
}

async fn list_subscriptions(
    State(app): State<AppState>,
    Controller(_): Controller,
) -> Result<Json<PushDeviceList>, ApiError> {
    let subs = push(&app)?.subs.list()?;
    Ok(Json(PushDeviceList {
        subscriptions: subs.iter().map(device).collect(),
    }))
}

fn unknown_subscription(id: &str) -> ApiError {
    ApiError::not_found(format!(
        "no push subscription with id {id:?}; list them with GET /v1/push/subscriptions"
    ))
}

async fn unsubscribe(
    State(app): State<AppState>,
    Controller(_): Controller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if push(&app)?.subs.delete(&id).await? {
        tracing::info!(subscription = %id, "push subscription removed");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(unknown_subscription(&id))
    }
}

fn bad_gateway(message: String) -> ApiError {
    ApiError::new(StatusCode::BAD_GATEWAY, "push_failed", message)
}

async fn test_push(
    State(app): State<AppState>,
    Controller(_): Controller,
    Path(id): Path<String>,
) -> Result<Json<PushTestAnswer>, ApiError> {
    let push = push(&app)?;
    let sub = push
        .subs
        .get(&id)
        .await?
        .ok_or_else(|| unknown_subscription(&id))?;
    let msg = payload::render_test(&super::hostname());
    match push.send_now(&sub, &msg).await {
        Attempt::Status { status, .. } if (200..300).contains(&status) => {
            push.subs.record_success(&id).await?;
            Ok(Json(PushTestAnswer {
                delivered: true,
                status,
            }))
        }
        Attempt::Status { status, .. } if matches!(status, 404 | 410) => {
            push.subs.delete(&id).await?;
            Err(bad_gateway(format!(
                "the push service answered {status}: this subscription expired or was revoked, so it was removed; \
                 enable notifications on the device again"
            )))
        }
        Attempt::Status { status, body, .. } => {
            let mut error = format!("the push service answered {status}");
            if !body.is_empty() {
                error.push_str(": ");
                error.push_str(&body);
            }
            push.subs.record_error(&id, &error).await?;
            Err(bad_gateway(error))
        }
        Attempt::Transport(e) => {
            let error = format!("the push service could not be reached: {e}");
            push.subs.record_error(&id, &error).await?;
            Err(bad_gateway(error))
        }
    }
}

/// An answer from a notification, read and checked as far as it can be without the session.
pub struct Answer {
    pub body: PushAnswerRequest,
    pub allow: bool,
    /// The device it came from (its subscription), named in the audit record.
    pub device: Option<Device>,
}

/// Reads the body of `POST /v1/push/answer` (shared with a gateway, which answers a session
/// another node runs: `crate::cluster`).
pub async fn read_answer(app: &AppState, body: Value) -> Result<Answer, ApiError> {
    let push = push(app)?;
    let body: PushAnswerRequest = parse(
        body,
        "answer (expected {\"session_id\", \"request_id\", \"decision\": \"allow\"|\"deny\", \"subscription_id\"?})",
    )?;
    let allow = match &body.decision {
        PushDecision::Allow => true,
        PushDecision::Deny => false,
        PushDecision::Other(other) => {
            return Err(ApiError::bad_request(format!(
                "decision must be \"allow\" or \"deny\", not {other:?}"
            )));
        }
    };
    let device = match &body.subscription_id {
        Some(id) => {
            let sub = push.subs.get(id).await?.ok_or_else(|| {
                ApiError::bad_request(format!(
                    "subscription_id {id:?} is not a registered push subscription"
                ))
            })?;
            Some(Device {
                id: sub.id,
                label: sub.registration.label,
            })
        }
        None => None,
    };
    Ok(Answer {
        body,
        allow,
        device,
    })
}

/// The message that answers `pending` as `answer` says, or why a notification cannot answer it.
pub fn answer_message(
    answer: &Answer,
    pending: Option<PendingRequest>,
    session: &Session,
) -> Result<Value, ApiError> {
    let body = &answer.body;
    let Some(pending) = pending else {
        return Err(session.not_pending_error(&body.request_id).into());
    };
    if !payload::is_ordinary_tool(&pending.subtype, pending.tool_name.as_deref()) {
        return Err(ApiError::bad_request(format!(
            "request {:?} is a {} that needs the console (questions, plan approvals and other requests \
             cannot be answered from a notification)",
            body.request_id,
            match pending.tool_name.as_deref() {
                Some("AskUserQuestion") => "question".to_owned(),
                Some("ExitPlanMode") => "plan approval".to_owned(),
                _ => pending.subtype.clone(),
            }
        )));
    }
    let (_, answerable) = payload::prompt_body(&Prompt {
        request_id: body.request_id.clone(),
        subtype: pending.subtype.clone(),
        tool_name: pending.tool_name.clone(),
        input: pending.input.clone(),
    });
    if answer.allow && !answerable {
        return Err(ApiError::bad_request(
            "this request's input is too long, or holds hidden characters, to be shown whole in a notification; \
             allow it from the console",
        ));
    }
    let rid = body.request_id.as_str();
    let tool_use_id = pending.tool_use_id.as_deref();
    let mut msg = if answer.allow {
        bridge_protocol::build::value::allow(
            rid,
            tool_use_id,
            pending.input.clone().unwrap_or_else(|| json!({})),
            Vec::new(),
        )
    } else {
        bridge_protocol::build::value::deny(rid, tool_use_id, DENY_MESSAGE, false)
    };
    if let Some(o) = msg.as_object_mut() {
        o.insert("uuid".into(), uuid::Uuid::new_v4().to_string().into());
    }
    Ok(msg)
}

/// What a notification's answer gets back.
pub fn answered(answer: &Answer) -> Json<PushAnswered> {
    let b = &answer.body;
    tracing::info!(session = %b.session_id, request = %b.request_id, decision = %b.decision, device = ?answer.device.as_ref().map(|d| &d.id), "answered from a notification");
    Json(PushAnswered {
        ok: true,
        decision: b.decision.clone(),
    })
}

/// `POST /v1/push/answer`: Allow / Deny from a notification, through the ordinary answer path.
/// (In a cluster, a gateway answers a session another node runs itself: `crate::cluster`.)
async fn answer(
    State(app): State<AppState>,
    Controller(who): Controller,
    JsonBody(body): JsonBody,
) -> Result<Json<PushAnswered>, ApiError> {
    let answer = read_answer(&app, body).await?;
    let session = app.visible_session(&who, &answer.body.session_id)?;
    let pending = session.pending_request(&answer.body.request_id);
    let msg = answer_message(&answer, pending, &session)?;
    session.ingest_from(&who, answer.device.as_ref(), vec![msg])?;
    Ok(answered(&answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The device list's entry as the relay wrote it with `json!` before it was a protocol type.
    fn written_before(s: &Subscription, origin: &str) -> Value {
        let r = &s.registration;
        let mut v = json!({
            "id": s.id,
            "label": r.label,
            "endpoint_origin": origin,
            "events": r.events,
            "expiration_time": r.expiration_time,
            "created_at": s.created_at,
            "updated_at": s.updated_at,
            "last_success_at": s.last_success_at,
            "last_error": s.last_error,
            "last_error_at": s.last_error_at,
        });
        if let Some(ids) = &r.session_ids {
            v["session_ids"] = json!(ids);
        }
        v
    }

    #[test]
    fn a_device_is_written_byte_for_byte_as_before() {
        let fresh = Subscription {
            id: "psub_1".into(),
            registration: NewSubscription {
                endpoint: "https://fcm.googleapis.com:443/fcm/send/abc".into(),
                p256dh: "never shown".into(),
                auth: "never shown".into(),
                events: EventKind::ALL.to_vec(),
                ..NewSubscription::default()
            },
            created_at: "2025-01-01T00:00:00.000Z".into(),
            updated_at: "2025-01-01T00:00:00.000Z".into(),
            ..Subscription::default()
        };
        let used = Subscription {
            registration: NewSubscription {
                label: Some("Phone \"A\"".into()),
                events: vec![EventKind::TurnDone],
                session_ids: Some(vec!["cse_a".into(), "cse_b".into()]),
                expiration_time: Some(1_700_000_000_000),
                ..fresh.registration.clone()
            },
            last_success_at: Some("2025-01-02T00:00:00.000Z".into()),
            last_error: Some("the push service answered 400".into()),
            last_error_at: Some("2025-01-03T00:00:00.000Z".into()),
            ..fresh.clone()
        };
        for s in [fresh, used] {
            let d = device(&s);
            let now = serde_json::to_string(&d).unwrap();
            let before = serde_json::to_string(&written_before(&s, &d.endpoint_origin)).unwrap();
            assert_eq!(now, before);
            assert!(!now.contains("never shown"), "no keys: {now}");
        }
    }
}
