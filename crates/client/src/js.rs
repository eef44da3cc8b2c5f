//! The JS API (wasm32): `BridgeClient`, `parseNdjson` and `classify`. Types for TypeScript come
//! from `types.d.ts` (the message union) and the `unchecked_*_type` attributes below.
//!
//! Every async method returns a Promise that rejects with an `Error` saying what went wrong.
//! Payloads are queued in the transport's outbox synchronously, in call order; the Promise
//! resolves when the relay has accepted the payload.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use bridge_protocol::build;
use bridge_transport::web::global_origin;
use bridge_transport::{Config, Endpoint, ReadMode, Resume};
use futures::channel::oneshot;
use js_sys::{Array, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::http::{describe, post_json};
use crate::{RelayAccess, connect_options, create_options, login_options, permission_answer};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("types.d.ts");

mod inner;
mod values;

use inner::*;
use values::*;

/// A connection to one session of a Bridge relay: the console's transport (reconnect, lossless
/// resume, dedup, outbox) without the console.
#[wasm_bindgen]
pub struct BridgeClient {
    inner: Rc<Inner>,
}

#[wasm_bindgen]
impl BridgeClient {
    /// Logs this browser in (`POST /v1/auth/login`): the relay sets its HttpOnly login cookie for
    /// its origin and returns a login secret that must go with it. On the page's own origin the
    /// secret is kept where the console keeps it (`localStorage`), so that `createSession` and
    /// `connect` then need neither `token` nor `loginSecret`.
    #[wasm_bindgen(
        unchecked_return_type = "Promise<{ loginSecret: string | null; role: 'controller' | 'observer' | null }>"
    )]
    pub fn login(
        #[wasm_bindgen(unchecked_param_type = "LoginOptions")] options: JsValue,
    ) -> Promise {
        future_to_promise(Box::pin(async move {
            let options = from_js(&options, "login")?;
            let o = login_options(&options).map_err(error)?;
            let base = resolve_base(o.base_url, "login")?;
            let body = Value::Object(
                [("token".to_owned(), Value::String(o.token))]
                    .into_iter()
                    .collect(),
            );
            let answer = post_json(&format!("{base}/v1/auth/login"), None, None, &body)
                .await
                .map_err(|e| error(format!("login: {e}")))?;
            let secret = answer.get("login_secret").and_then(Value::as_str);
            if global_origin().as_deref() == Some(base.as_str())
                && let Some(ls) = local_storage()
            {
                let _ = match secret {
                    Some(s) => ls.set_item(LOGIN_SECRET_KEY, s),
                    None => ls.remove_item(LOGIN_SECRET_KEY),
                };
            }
            Ok(object(&[
                ("loginSecret", opt_str(secret)),
                ("role", opt_str(answer.get("role").and_then(Value::as_str))),
            ]))
        }))
    }

    /// Creates a session (`POST /v1/code/sessions`): the relay starts an agent for it.
    #[wasm_bindgen(js_name = createSession, unchecked_return_type = "Promise<{ sessionId: string }>")]
    pub fn create_session(
        #[wasm_bindgen(unchecked_param_type = "CreateSessionOptions")] options: JsValue,
    ) -> Promise {
        future_to_promise(Box::pin(async move {
            let options = from_js(&options, "createSession")?;
            let o = create_options(&options).map_err(error)?;
            let (base, token, secret) = resolve(o.relay, "createSession")?;
            let answer = post_json(
                &format!("{base}/v1/code/sessions"),
                token.as_deref(),
                secret.as_deref(),
                &o.body,
            )
            .await
            .map_err(|e| error(format!("createSession: {e}")))?;
            let id = answer
                .get("session_id")
                .and_then(Value::as_str)
                .ok_or_else(|| error("createSession: the relay's answer has no session_id"))?;
            Ok(object(&[("sessionId", id.into())]))
        }))
    }

    /// Connects to a session. Resolves once the first connection is live (or the session turned
    /// out to be over: state `ended`); rejects when it cannot connect (a bad token, no such
    /// session, the relay unreachable) instead of retrying. After that, it reconnects by itself and
    /// resumes from the last sequence number it delivered.
    #[wasm_bindgen(unchecked_return_type = "Promise<BridgeClient>")]
    pub fn connect(
        #[wasm_bindgen(unchecked_param_type = "ConnectOptions")] options: JsValue,
    ) -> Promise {
        future_to_promise(Box::pin(async move {
            let options = from_js(&options, "connect")?;
            let o = connect_options(&options).map_err(error)?;
            let (base, token, secret) = resolve(o.relay, "connect")?;
            if o.transport.read_mode() == ReadMode::WebSocket && !has_global("WebSocket") {
                return Err(error(
                    "connect: this runtime has no global WebSocket (Node 20 has one only with \
                     --experimental-websocket; Node 22+ and browsers have it): use transport: 'sse'",
                ));
            }
            let endpoint =
                Endpoint::new(base, o.session_id.clone(), token).with_login_secret(secret);
            let config = Config::new(o.transport, o.session_id.clone());
            let resume = Resume {
                from_sequence_num: o.from_seq,
                ..Resume::default()
            };
            let transport = bridge_transport::web::connect(endpoint, config, resume);
            let (tx, rx) = oneshot::channel();
            let inner = Rc::new(Inner {
                handle: transport.handle(),
                session_id: o.session_id,
                state: Cell::new("connecting"),
                inbox: RefCell::default(),
                notices: RefCell::default(),
                on_message: RefCell::default(),
                on_state: RefCell::default(),
                state_told: Cell::new(false),
                on_notice: RefCell::default(),
                waiters: RefCell::default(),
                permissions: RefCell::default(),
                ready: RefCell::new(Some(tx)),
                delivering: Cell::new(false),
            });
            spawn_local(pump(inner.clone(), transport));
            match rx.await {
                Ok(Ok(())) => Ok(BridgeClient { inner }.into()),
                Ok(Err(e)) => Err(error(e)),
                Err(_) => Err(error("connect: the connection closed")),
            }
        }))
    }

    /// Registers the message handler (replacing the previous one; `null` removes it). It gets
    /// every CLI→client message in order and without duplicates, with its relay sequence number
    /// (`null` for ephemeral frames such as `stream_event`). Messages that arrived before a
    /// handler was registered are held and handed to it first. What this client sent is not
    /// echoed back (neither the relay's copy nor the CLI's replay of a prompt), as in the console;
    /// other clients' prompts are delivered.
    #[wasm_bindgen(js_name = onMessage)]
    pub fn on_message(
        &self,
        #[wasm_bindgen(unchecked_param_type = "MessageHandler | null")] handler: JsValue,
    ) -> Result<(), JsError> {
        *self.inner.on_message.borrow_mut() = as_handler(handler, "onMessage")?;
        self.deliver_soon();
        Ok(())
    }

    /// Registers the state handler (replacing the previous one; `null` removes it). It is called
    /// at once with the current state, then on every change.
    #[wasm_bindgen(js_name = onState)]
    pub fn on_state(
        &self,
        #[wasm_bindgen(unchecked_param_type = "StateHandler | null")] handler: JsValue,
    ) -> Result<(), JsError> {
        let cb = as_handler(handler, "onState")?;
        *self.inner.on_state.borrow_mut() = cb.clone();
        self.inner.state_told.set(false);
        if let Some(cb) = cb {
            let inner = self.inner.clone();
            spawn_local(async move {
                let current = inner.on_state.borrow().clone();
                // Still the registered handler and not told a change meanwhile: tell it the state
                // it starts from.
                if current.is_some_and(|c| c == cb) && !inner.state_told.replace(true) {
                    report(cb.call1(&JsValue::NULL, &JsValue::from_str(inner.state.get())));
                }
            });
        }
        Ok(())
    }

    /// Registers the notice handler (replacing the previous one; `null` removes it): history the
    /// relay no longer had (`gap`) and frames that could not be read (`malformed`). Held until a
    /// handler is registered, like messages.
    #[wasm_bindgen(js_name = onNotice)]
    pub fn on_notice(
        &self,
        #[wasm_bindgen(unchecked_param_type = "NoticeHandler | null")] handler: JsValue,
    ) -> Result<(), JsError> {
        *self.inner.on_notice.borrow_mut() = as_handler(handler, "onNotice")?;
        self.deliver_soon();
        Ok(())
    }

    /// Sends a prompt. Resolves with the message's uuid (the CLI's `isReplay` echo and
    /// `command_lifecycle` refer to it) once the relay has accepted it.
    #[wasm_bindgen(js_name = sendUser, unchecked_return_type = "Promise<string>")]
    pub fn send_user(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> Promise {
        let payload = match text.as_string() {
            Some(text) => Ok(build::value::user_text(&text, uuid::Uuid::new_v4())),
            None => Err("sendUser: the text must be a string".to_owned()),
        };
        self.post("sendUser", payload, Answer::Uuid)
    }

    /// Interrupts the current turn. Resolves with the control request's id (the CLI's
    /// `control_response` carries it) once the relay has accepted it.
    #[wasm_bindgen(unchecked_return_type = "Promise<string>")]
    pub fn interrupt(&self) -> Promise {
        self.post_control("interrupt", |id| Ok(build::value::interrupt(id)))
    }

    /// Switches the model (`null`: back to the default). Resolves with the control request's id
    /// once the relay has accepted it; the CLI's answer arrives as a `control_response`.
    #[wasm_bindgen(js_name = setModel, unchecked_return_type = "Promise<string>")]
    pub fn set_model(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string | null")] model: JsValue,
    ) -> Promise {
        self.post_control("setModel", |id| {
            if model.is_null() || model.is_undefined() {
                return Ok(build::value::set_model(id, None));
            }
            match model.as_string() {
                Some(m) if !m.is_empty() => Ok(build::value::set_model(id, Some(&m))),
                _ => Err("setModel: the model must be a non-empty string (or null)".to_owned()),
            }
        })
    }

    /// Switches the permission mode (`default`, `acceptEdits`, `plan`, `bypassPermissions`, …).
    /// Resolves with the control request's id once the relay has accepted it.
    #[wasm_bindgen(js_name = setPermissionMode, unchecked_return_type = "Promise<string>")]
    pub fn set_permission_mode(
        &self,
        #[wasm_bindgen(unchecked_param_type = "PermissionMode")] mode: JsValue,
    ) -> Promise {
        self.post_control("setPermissionMode", |id| match mode.as_string() {
            Some(m) => crate::set_permission_mode(id, &m),
            None => Err("setPermissionMode: the mode must be a string".to_owned()),
        })
    }

    /// Answers a `can_use_tool` request (its `request_id`). `allow` may carry an edited
    /// `updatedInput` (default: the input as asked) and `updatedPermissions`; `deny` a `message`
    /// for the model and `interrupt: true` to end the turn. Resolves once the relay has accepted
    /// the answer; rejects e.g. when another client answered first (HTTP 409).
    #[wasm_bindgen(js_name = respondToPermission, unchecked_return_type = "Promise<void>")]
    pub fn respond_to_permission(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] request_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "PermissionDecision")] decision: JsValue,
    ) -> Promise {
        let payload = (|| {
            let id = request_id
                .as_string()
                .ok_or_else(|| "respondToPermission: the request id must be a string".to_owned())?;
            let decision = from_js(&decision, "respondToPermission").map_err(|e| describe(&e))?;
            let seen = self
                .inner
                .permissions
                .borrow()
                .iter()
                .find(|(r, _)| *r == id)
                .map(|(_, s)| s.clone());
            permission_answer(&id, &decision, seen.as_ref())
        })();
        self.post("respondToPermission", payload, Answer::Nothing)
    }

    /// Closes the connection: pending sends get up to 3 s to go out, then the state becomes
    /// `offline` and nothing more is delivered.
    pub fn close(&self) {
        self.inner.handle.close();
    }

    /// The connection state: `connecting`, `live`, `reconnecting`, `offline` or `ended`.
    #[wasm_bindgen(getter, unchecked_return_type = "ConnectionStateName")]
    pub fn state(&self) -> String {
        self.inner.state.get().to_owned()
    }

    /// The session this client is connected to.
    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> String {
        self.inner.session_id.clone()
    }

    /// The highest relay sequence number delivered so far: pass it as `fromSeq` to resume later
    /// without receiving anything twice.
    #[wasm_bindgen(getter)]
    pub fn cursor(&self) -> f64 {
        self.inner.handle.cursor() as f64
    }
}

/// What a send's Promise resolves with.
enum Answer {
    Uuid,
    RequestId(String),
    Nothing,
}

impl BridgeClient {
    fn deliver_soon(&self) {
        let inner = self.inner.clone();
        spawn_local(async move { inner.deliver() });
    }

    /// Posts the control request `make` builds under a new request id; resolves with that id.
    fn post_control(
        &self,
        what: &'static str,
        make: impl FnOnce(&str) -> Result<Value, String>,
    ) -> Promise {
        let id = build::new_request_id();
        let payload = make(&id);
        self.post(what, payload, Answer::RequestId(id))
    }

    /// Queues `payload` now (so sends keep their call order) and resolves when the relay
    /// accepted it.
    fn post(&self, what: &'static str, payload: Result<Value, String>, answer: Answer) -> Promise {
        let queued = payload
            .and_then(|p| self.inner.handle.send(p).map_err(|e| e.to_string()))
            .map(|uuid| {
                let (tx, rx) = oneshot::channel();
                self.inner
                    .waiters
                    .borrow_mut()
                    .push_back((uuid.clone(), tx));
                (uuid, rx)
            });
        future_to_promise(Box::pin(async move {
            let (uuid, rx) = queued.map_err(|e| error(prefixed(what, &e)))?;
            match rx.await {
                Ok(Ok(())) => Ok(match answer {
                    Answer::Uuid => uuid.into(),
                    Answer::RequestId(id) => id.into(),
                    Answer::Nothing => JsValue::UNDEFINED,
                }),
                Ok(Err(e)) => Err(error(format!("{what}: {e}"))),
                Err(_) => Err(error(format!(
                    "{what}: the connection closed before the relay confirmed it"
                ))),
            }
        }))
    }
}

fn prefixed(what: &str, message: &str) -> String {
    if message.starts_with(what) {
        message.to_owned()
    } else {
        format!("{what}: {message}")
    }
}

/// Where the console keeps the login secret (`localStorage`, so per origin): a page on the relay's
/// origin shares the console's login, and a login made here serves the console too.
const LOGIN_SECRET_KEY: &str = "bridge-console.login-secret";

fn local_storage() -> Option<web_sys::Storage> {
    let ls = Reflect::get(&js_sys::global(), &JsValue::from_str("localStorage")).ok()?;
    (!ls.is_undefined() && !ls.is_null()).then(|| ls.unchecked_into())
}

/// The secret to send beside the login cookie: the one given, else (only towards the page's own
/// origin, whose login it is) the one kept at login.
fn login_secret_for(base: &str, token: &Option<String>, given: Option<String>) -> Option<String> {
    if token.is_some() {
        return None;
    }
    given.or_else(|| {
        if global_origin().as_deref() != Some(base) {
            return None;
        }
        local_storage()?
            .get_item(LOGIN_SECRET_KEY)
            .ok()
            .flatten()
            .filter(|s| !s.is_empty())
    })
}

/// What `connect` and `createSession` send to the relay: its origin ([`resolve_base`]), the token,
/// and the login secret to send beside the cookie ([`login_secret_for`]).
fn resolve(
    access: RelayAccess,
    what: &str,
) -> Result<(String, Option<String>, Option<String>), JsValue> {
    let base = resolve_base(access.base_url, what)?;
    let secret = login_secret_for(&base, &access.token, access.login_secret);
    Ok((base, access.token, secret))
}

/// The relay's origin: the given one, or the page's own.
fn resolve_base(base_url: String, what: &str) -> Result<String, JsValue> {
    if !base_url.is_empty() {
        return Ok(base_url);
    }
    global_origin().ok_or_else(|| {
        error(format!(
            "{what}: `baseUrl` is required outside a page served over http(s) (e.g. 'http://127.0.0.1:8787')"
        ))
    })
}

/// Splits NDJSON text (CRLF, blank lines, a last line without `\n`) with the protocol crate's
/// decoder and checks every line with its typed decoder: `messages` holds each message as a plain
/// object (unknown types included), `errors` each line that is not one, and reading goes on after
/// it.
#[wasm_bindgen(js_name = parseNdjson, unchecked_return_type = "ParsedNdjson")]
pub fn parse_ndjson(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> Result<JsValue, JsError> {
    let text = text
        .as_string()
        .ok_or_else(|| JsError::new("parseNdjson: the text must be a string"))?;
    let parsed = crate::parse_ndjson(&text);
    let messages: Array = parsed.messages.iter().map(to_js).collect();
    let errors: Array = parsed
        .errors
        .iter()
        .map(|e| {
            object(&[
                ("line", number(e.line)),
                ("message", e.message.as_str().into()),
            ])
        })
        .collect();
    Ok(object(&[
        ("messages", messages.into()),
        ("errors", errors.into()),
    ]))
}

/// Classifies a CLI→client message with the protocol crate's decoder (see `MessageClass`).
#[wasm_bindgen(unchecked_return_type = "MessageClass")]
pub fn classify(
    #[wasm_bindgen(unchecked_param_type = "CliMessage | object")] message: JsValue,
) -> String {
    match from_js(&message, "classify") {
        Ok(value) => crate::classify(&value).to_owned(),
        Err(_) => "invalid".to_owned(),
    }
}
