//! `GET /v1/code/sessions/{id}/ws`.
//!
//! * bare (default): the official SDK's websocket option. One NDJSON message (with its `\n`) per text
//!   frame, both ways; CLI and relay messages only (no client echoes), no envelope. Live from the
//!   connect (plus the prompts still pending), or from `?from_sequence_num=N`.
//! * `?envelope=1[&from_sequence_num=N]`: each frame is `{"event","id","data"}` with the same data as
//!   the SSE stream (client echoes, delivery updates, catch_up_truncated included).
//!
//! Browsers cannot set headers on a WebSocket: credentials come from `Authorization`, or a first text
//! frame `{"type":"auth","credential":{"type":"oauth","token":"…"}}` (never the URL). The login cookie
//! alone is not enough: a socket carrying it must send `{"type":"auth","login_secret":"…"}` first
//! (nothing is sent or accepted before; close 4401 otherwise). A socket whose credential is revoked,
//! expires or is logged out is closed with 4401 within a second, and its writes are refused at once.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, header};
use axum::response::Response;
use futures::{SinkExt as _, StreamExt as _};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use crate::core::auth::Principal;
use crate::core::follow::Follower;
use crate::core::frames::{FrameKind, WS_CATCH_UP_TRUNCATED};
use crate::core::session::Session;
use crate::core::store::Source;
use crate::edge::error::ApiError;
use crate::edge::extract::AppState;

mod upgrade;
pub use upgrade::{ReadBudget, UNAUTHENTICATED_READ_BYTES};

/// Set (as a request extension) by a scale-out gateway on a WebSocket to a mirror: resolves when the
/// mirror's source, NATS, becomes unreachable. The socket then closes with 1013 ("try again later",
/// which the console's transport answers by reconnecting): its reconnection gets 503 until NATS is
/// back and then resumes from its cursor with nothing lost, as an SSE stream does.
#[derive(Clone)]
pub struct SourceLost(pub Arc<dyn Fn() -> futures::future::BoxFuture<'static, ()> + Send + Sync>);

/// How long an unauthenticated socket may take to send its auth message.
pub const WS_AUTH_TIMEOUT: Duration = Duration::from_secs(5);
/// The credential is missing, wrong, revoked, expired or logged out.
pub const CLOSE_UNAUTHORIZED: u16 = 4401;
/// What an envelope-mode socket sends every keepalive interval: browsers cannot see WebSocket pings,
/// so clients' liveness checks need a frame they can read.
const WS_KEEPALIVE_FRAME: &str = r#"{"event":"keepalive","id":null,"data":{}}"#;
const CLOSE_NORMAL: u16 = 1000;
const CLOSE_POLICY: u16 = 1008;
const CLOSE_GOING_AWAY: u16 = 1001;
const CLOSE_TOO_BIG: u16 = 1009;
const CLOSE_TRY_AGAIN_LATER: u16 = 1013;
/// Envelope mode: the session has ended and the client already has its whole log (the WebSocket
/// counterpart of the SSE stream's 404 `session_ended`); clients do not reconnect after it.
pub const CLOSE_SESSION_ENDED: u16 = 4404;
/// `from_sequence_num` is past the end of the session's log (the WebSocket counterpart of the SSE
/// stream's and the event list's 400 `cursor_beyond_end`); reconnecting with it cannot succeed.
pub const CLOSE_CURSOR_BEYOND_END: u16 = 4400;

#[derive(Deserialize)]
pub struct WsQuery {
    envelope: Option<String>,
    from_sequence_num: Option<u64>,
}

#[allow(clippy::too_many_arguments)] // an axum handler: one argument per extractor
pub async fn upgrade(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<WsQuery>,
    headers: HeaderMap,
    ext: crate::edge::external::External,
    crate::edge::extract::PeerIp(peer): crate::edge::extract::PeerIp,
    lost: Option<axum::Extension<SourceLost>>,
    ws: upgrade::Upgrade,
) -> Result<Response, ApiError> {
    let has_credentials =
        headers.contains_key(header::AUTHORIZATION) || headers.contains_key(header::COOKIE);
    let principal = match app.authenticate(&headers, &ext) {
        Ok(p) => Some(p),
        Err(e) if has_credentials && headers.contains_key(header::AUTHORIZATION) => return Err(e),
        Err(_) => None,
    };
    let session = match &principal {
        Some(p) => app.visible_session(p, &id)?,
        None => app.get(&id).ok_or_else(|| ApiError::unknown_session(&id))?,
    };
    let envelope = q
        .envelope
        .as_deref()
        .is_some_and(|v| v == "1" || v == "true");
    let from = q.from_sequence_num;
    let slot = match &principal {
        Some(p) => Some(app.limits.streams.acquire(&p.token_id)?),
        None => None,
    };
    // Not authenticated yet: one of a bounded number, in all and from this peer.
    let pending = match &principal {
        Some(_) => None,
        None => Some(app.limits.pending_auth.acquire(peer)?),
    };
    // The same cap as a POST body; before authentication, a few KB in all.
    let limit = app.config.quotas.max_body_bytes;
    let budget = match &principal {
        Some(_) => ReadBudget::unlimited(),
        None => ReadBudget::unauthenticated(),
    };
    let cookie = crate::edge::extract::cookie_value(&headers, ext.cookie_name()).map(str::to_owned);
    let b = budget.clone();
    Ok(ws.on_upgrade(limit, budget, move |socket| {
        let lost = lost.map(|axum::Extension(l)| l);
        let pending = pending.map(|p| (p, b));
        run(
            app, session, principal, slot, peer, envelope, from, cookie, lost, socket, pending,
        )
    }))
}

/// A close frame; the reason is cut to the protocol's 123 bytes.
fn close(code: u16, reason: &str) -> Message {
    Message::Close(Some(CloseFrame {
        code: code.into(),
        reason: Utf8Bytes::from(crate::core::util::truncate_utf8(reason, 123).to_owned()),
    }))
}

/// The close once a client has an ended session's whole log (at connect, or right after its final
/// event): a normal close on the bare protocol (the SDK ends its iterator), a final one in envelope
/// mode (the console's transport does not reconnect).
fn ended_close(envelope: bool, cursor: u64) -> Message {
    if envelope {
        close(
            CLOSE_SESSION_ENDED,
            &format!("session_ended: nothing after sequence number {cursor}"),
        )
    } else {
        close(CLOSE_NORMAL, "session ended")
    }
}

fn error_frame(e: &ApiError) -> Message {
    let v = json!({"event": "error", "id": null, "data": {"type": "error", "status": e.status.as_u16(), "error": {"type": e.kind, "message": e.message}}});
    Message::Text(Utf8Bytes::from(v.to_string()))
}

/// `{"type":"auth","credential":{"token":…}}`, or `{"type":"auth","login_secret":…}` beside the
/// login `cookie` → principal.
fn auth_message(app: &AppState, v: &Value, cookie: Option<&str>) -> Option<Principal> {
    if v.get("type").and_then(Value::as_str) != Some("auth") {
        return None;
    }
    if let (Some(secret), Some(cookie)) = (v.get("login_secret").and_then(Value::as_str), cookie) {
        return app.auth.authenticate_cookie(cookie, Some(secret));
    }
    let token = v.pointer("/credential/token").and_then(Value::as_str)?;
    app.auth.authenticate_token(token)
}

#[allow(clippy::too_many_arguments)]
async fn run(
    app: AppState,
    session: Arc<Session>,
    principal: Option<Principal>,
    slot: Option<crate::core::limits::StreamSlot>,
    peer: Option<std::net::IpAddr>,
    envelope: bool,
    from: Option<u64>,
    cookie: Option<String>,
    lost: Option<SourceLost>,
    socket: upgrade::Socket,
    pending: Option<(crate::core::limits::PendingSlot, ReadBudget)>,
) {
    let (mut sink, mut stream) = socket.split();
    let mut verdicts = Verdicts::new();
    let (principal, _slot) = match principal {
        Some(p) => (p, slot),
        None => {
            let first = tokio::time::timeout(WS_AUTH_TIMEOUT, stream.next()).await;
            // A credential guess like a login: the same per-peer bucket (charged when it fails), the
            // same small size.
            if let Err(wait) = app.limits.login.peek(peer, std::time::Instant::now()) {
                let _ = sink
                    .send(close(
                        CLOSE_TRY_AGAIN_LATER,
                        &format!(
                            "too many authentication attempts from this address; try again in {} s",
                            wait.as_secs() + 1
                        ),
                    ))
                    .await;
                return;
            }
            let who = match first {
                Ok(Some(Ok(Message::Text(t))))
                    if t.len() <= crate::core::limits::UNAUTHENTICATED_BODY_BYTES =>
                {
                    t.lines()
                        .find(|l| !l.trim().is_empty())
                        .and_then(|l| serde_json::from_str::<Value>(l).ok())
                        .and_then(|v| auth_message(&app, &v, cookie.as_deref()))
                }
                Ok(Some(Err(e))) => {
                    // More than an auth message (or not WebSocket at all): not read, not checked.
                    tracing::debug!(error = %e, "unauthenticated websocket message refused");
                    let _ = sink
                        .send(close(CLOSE_TOO_BIG, "message too big or malformed"))
                        .await;
                    return;
                }
                _ => None,
            };
            // Authenticated or refused: no longer waiting.
            let budget = pending.map(|(_, b)| b);
            match who {
                Some(p)
                    if p.can_see(&session.id)
                        && crate::edge::extract::may_see_terminal(&p, &session) =>
                {
                    if let Some(b) = budget {
                        b.lift();
                    }
                    match app.limits.streams.acquire(&p.token_id) {
                        Ok(slot) => (p, Some(slot)),
                        Err(_) => {
                            let reason = "too many open streams for this credential; raise --max-streams-per-principal";
                            let _ = sink.send(close(CLOSE_TRY_AGAIN_LATER, reason)).await;
                            return;
                        }
                    }
                }
                _ => {
                    let _ = app.limits.login.check(peer, std::time::Instant::now());
                    let msg = if cookie.is_some() {
                        close(
                            CLOSE_UNAUTHORIZED,
                            "login secret required: send {\"type\":\"auth\",\"login_secret\":\"…\"} first, or log in again",
                        )
                    } else {
                        close(
                            CLOSE_POLICY,
                            "authentication required: send {\"type\":\"auth\",\"credential\":{\"type\":\"oauth\",\"token\":\"…\"}} first",
                        )
                    };
                    let _ = sink.send(msg).await;
                    return;
                }
            }
        }
    };

    let cursor = match from {
        Some(n) => n,
        None if envelope => 0,
        None => session.last_seq(),
    };
    let (mut follower, truncated) = Follower::new(session.clone(), cursor);
    if follower.beyond_end() {
        let e = follower.beyond_end_error();
        let _ = sink
            .send(close(
                CLOSE_CURSOR_BEYOND_END,
                &format!("cursor_beyond_end: {}", e.message),
            ))
            .await;
        return;
    }
    if envelope
        && truncated
        && sink
            .send(Message::Text(Utf8Bytes::from_static(WS_CATCH_UP_TRUNCATED)))
            .await
            .is_err()
    {
        return;
    }
    if !envelope && from.is_none() {
        // Late joiner on the bare protocol: the prompts still waiting for an answer.
        for p in session.pending_payloads() {
            let line = format!("{}\n", String::from_utf8_lossy(&p));
            if sink
                .send(Message::Text(Utf8Bytes::from(line)))
                .await
                .is_err()
            {
                return;
            }
        }
    }

    if follower.finished() {
        // Nothing will ever come: say so instead of idling until the client gives up.
        let _ = sink.send(ended_close(envelope, follower.cursor())).await;
        return;
    }

    let mut shutdown = app.shutdown_signal();
    let mut revoked = Box::pin(crate::edge::extract::until_revoked(
        app.clone(),
        principal.clone(),
    ));
    // Checked before each batch too: `select!` may pick a batch over a revocation that woke at the
    // same time, and no frame may follow a revocation that was answered.
    let mut removed = app.auth.revocations();
    removed.mark_unchanged();
    let mut source_lost = match &lost {
        Some(l) => (l.0)(),
        None => Box::pin(std::future::pending()),
    };
    let keepalive = app.config.sse_keepalive;
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive);
    loop {
        tokio::select! {
            batch = follower.next_batch() => {
                let Some(frames) = batch else { break };
                if removed.has_changed().unwrap_or(false) {
                    removed.mark_unchanged();
                    if !app.auth.is_live(&principal) {
                        let _ = sink.send(close(CLOSE_UNAUTHORIZED, "credential revoked, expired or logged out")).await;
                        return;
                    }
                }
                for f in frames {
                    // Observers do not see the account or pid of an initialize answer.
                    let f = if principal.can_write() { f } else { crate::core::redact::frame_for_observer(&f) };
                    let text = if envelope {
                        f.ws_envelope()
                    } else {
                        // The bare protocol has no delivery updates, echoes or truncation signal.
                        if matches!(f.kind, FrameKind::DeliveryUpdate | FrameKind::CatchUpTruncated)
                            || f.source == Source::Client
                        {
                            continue;
                        }
                        f.ws_line()
                    };
                    if sink.feed(Message::Text(text)).await.is_err() {
                        return;
                    }
                }
                if sink.flush().await.is_err() {
                    return;
                }
                if follower.finished() {
                    // The session's final event is out.
                    let _ = sink.send(ended_close(envelope, follower.cursor())).await;
                    return;
                }
            }
            msg = stream.next() => {
                match msg {
                    Some(Ok(Message::Text(t))) => {
                        if !app.auth.is_live(&principal) {
                            // Refused at once, not at the next revocation check.
                            let _ = sink.send(close(CLOSE_UNAUTHORIZED, "credential revoked, expired or logged out")).await;
                            return;
                        }
                        for reply in inbound(&app, &session, &principal, envelope, t.as_str(), &mut verdicts) {
                            if sink.send(reply).await.is_err() {
                                return;
                            }
                        }
                    }
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => {}
                }
            }
            // A gateway's mirror: the host's verdict on a frame sent earlier (refusals only).
            Some(reply) = verdicts.next(), if !verdicts.is_empty() => {
                if let Some(reply) = reply
                    && sink.send(reply).await.is_err()
                {
                    return;
                }
            }
            _ = ping.tick() => {
                let beat = if envelope {
                    Message::Text(Utf8Bytes::from_static(WS_KEEPALIVE_FRAME))
                } else {
                    Message::Ping(Default::default())
                };
                if sink.send(beat).await.is_err() {
                    return;
                }
            }
            () = &mut revoked => {
                let _ = sink.send(close(CLOSE_UNAUTHORIZED, "credential revoked, expired or logged out")).await;
                return;
            }
            () = crate::core::util::until_true(&mut shutdown) => {
                let _ = sink.send(close(CLOSE_GOING_AWAY, "relay shutting down")).await;
                return;
            }
            () = &mut source_lost => {
                let _ = sink.send(close(CLOSE_TRY_AGAIN_LATER, "NATS is unreachable: reconnect; the stream resumes once it is back")).await;
                return;
            }
        }
    }
    let _ = sink.close().await;
}

/// Host verdicts a gateway's socket waits for, in the order the frames came.
type Verdicts =
    futures::stream::FuturesOrdered<futures::future::BoxFuture<'static, Option<Message>>>;
/// Frames of one socket that may wait for their host's verdict at once.
const MAX_VERDICTS: usize = 64;

/// Handles one inbound text frame; returns frames to send back (errors, envelope mode only). A
/// mirror's frames go to the session's host; its refusal comes back later through `verdicts`.
fn inbound(
    app: &AppState,
    session: &Session,
    who: &Principal,
    envelope: bool,
    text: &str,
    verdicts: &mut Verdicts,
) -> Vec<Message> {
    let chunks: Vec<&str> = if envelope {
        vec![text]
    } else {
        text.split('\n').collect()
    };
    let mut replies = Vec::new();
    for chunk in chunks.into_iter().filter(|c| !c.trim().is_empty()) {
        let result = match serde_json::from_str::<Value>(chunk) {
            Err(e) => Err(ApiError::bad_request(format!("malformed JSON frame: {e}"))),
            Ok(v)
                if matches!(
                    v.get("type").and_then(Value::as_str),
                    Some("keep_alive" | "auth")
                ) =>
            {
                let _ = auth_message(app, &v, None);
                Ok(())
            }
            Ok(_) if session.is_mirror() && verdicts.len() >= MAX_VERDICTS => Err(ApiError::new(
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                format!(
                    "{MAX_VERDICTS} frames are still waiting for the session's host; send fewer at once"
                ),
            )),
            Ok(v) if session.is_mirror() => {
                let verdict = session.forward_input(who, v);
                let id = session.id.clone();
                verdicts.push_back(Box::pin(async move {
                    let e = ApiError::from(verdict.await.err()?);
                    tracing::debug!(session = %id, error = %e, "websocket frame refused by the session's host");
                    envelope.then(|| error_frame(&e))
                }));
                Ok(())
            }
            Ok(v) => session
                .ingest(who, vec![v])
                .map(|_| ())
                .map_err(ApiError::from),
        };
        if let Err(e) = result {
            tracing::debug!(session = %session.id, error = %e, "websocket frame refused");
            if envelope {
                replies.push(error_frame(&e));
            }
        }
    }
    replies
}
