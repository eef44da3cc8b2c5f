//! The console as an installed app: the service worker (`/sw.js`: registration, "new version"
//! updates), Web Push on this device (permission, subscription), notifications shown by the page
//! itself where push cannot work, and the small records kept in the browser (this device's
//! subscription id for the service worker, a composer draft across an update reload).
//!
//! The decisions are pure functions over plain structs, tested natively: whether push can work
//! here and why not ([`push_support`]), a readable device name ([`device_label`]), which sessions
//! newly wait for an answer ([`newly_waiting`]). The browser glue below them is used only through
//! [`crate::store::Store`]; components never call it.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::net::SessionSummary;

/// The service worker's script URL (scope `/`).
pub const SW_URL: &str = "/sw.js";
/// Cache Storage name and key under which the service worker finds this device's subscription.
pub const DEVICE_CACHE: &str = "bridge-device";
/// See [`DEVICE_CACHE`].
pub const DEVICE_KEY: &str = "/__bridge/device";
/// Push events a device can choose; `resolved` is always included (it closes answered prompts).
pub const PUSH_EVENTS: [(&str, &str); 3] = [
    (
        "needs_you",
        "A session needs you (a permission prompt or a question)",
    ),
    ("turn_done", "A long turn finished"),
    ("agent_exited", "An agent stopped unexpectedly"),
];
/// Always subscribed: closes a prompt's notification on every device once it is answered.
pub const RESOLVED: &str = "resolved";

// ------------------------------------------------------------------------------- pure decisions

/// The notification permission (`Notification.permission`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Permission {
    /// Not asked yet.
    #[default]
    Default,
    /// Allowed.
    Granted,
    /// Blocked (only the browser's site settings can undo it).
    Denied,
}

impl Permission {
    /// From the browser's string.
    pub fn parse(s: &str) -> Self {
        match s {
            "granted" => Permission::Granted,
            "denied" => Permission::Denied,
            _ => Permission::Default,
        }
    }
}

/// What this browser offers, read once by [`capabilities`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// `window.isSecureContext` (HTTPS, or http on a loopback host).
    pub secure_context: bool,
    /// `navigator.serviceWorker` exists.
    pub service_worker: bool,
    /// `window.PushManager` exists.
    pub push_manager: bool,
    /// `window.Notification` exists.
    pub notification: bool,
    /// An iPhone, iPad or iPod (iPadOS calls itself a Mac with a touch screen).
    pub ios: bool,
    /// Running as an installed app (`display-mode: standalone`, or iOS's `navigator.standalone`).
    pub standalone: bool,
    /// The notification permission.
    pub permission: Permission,
    /// The page's host (for the explanation).
    pub host: String,
}

/// Whether Web Push can work here and, if not, why (`data-state` of `notifications-status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushSupport {
    /// Push can be enabled (the permission may still have to be asked).
    Ready,
    /// Plain HTTP on a host that is not loopback: browsers keep push (and service workers) from it.
    Insecure,
    /// iOS / iPadOS Safari outside a home-screen app: Apple offers push only to installed apps.
    IosNeedsHomeScreen,
    /// No service worker, Push API or notifications in this browser.
    Unsupported,
    /// The person blocked notifications for this site.
    Denied,
}

impl PushSupport {
    /// `data-state` value.
    pub fn as_str(self) -> &'static str {
        match self {
            PushSupport::Ready => "ready",
            PushSupport::Insecure => "insecure",
            PushSupport::IosNeedsHomeScreen => "ios-home-screen",
            PushSupport::Unsupported => "unsupported",
            PushSupport::Denied => "denied",
        }
    }

    /// Why push cannot work, and what to do, in plain words (`None` when it can).
    pub fn explain(self, host: &str) -> Option<String> {
        Some(match self {
            PushSupport::Ready => return None,
            PushSupport::Insecure => format!(
                "Push notifications need a secure connection, and this page came over plain HTTP from {host}. \
                 Open the console over HTTPS (see “Use it from your phone” in the README), or as http://127.0.0.1 on the relay's own computer."
            ),
            PushSupport::IosNeedsHomeScreen => "On iPhone and iPad, notifications work only in the installed app: tap Share, then “Add to Home Screen”, and open Bridge Console from the home screen.".to_string(),
            PushSupport::Unsupported => "This browser cannot receive push notifications (it has no service worker or Push API).".to_string(),
            PushSupport::Denied => "Notifications are blocked for this site. Allow them in the browser's site settings, then come back here.".to_string(),
        })
    }
}

/// Whether Web Push can work with these capabilities.
pub fn push_support(c: &Capabilities) -> PushSupport {
    if !c.secure_context {
        PushSupport::Insecure
    } else if c.ios && !c.standalone {
        PushSupport::IosNeedsHomeScreen
    } else if !(c.service_worker && c.push_manager && c.notification) {
        PushSupport::Unsupported
    } else if c.permission == Permission::Denied {
        PushSupport::Denied
    } else {
        PushSupport::Ready
    }
}

/// Whether the page can show notifications itself (while it is open): the fallback where push
/// cannot work.
pub fn in_page_possible(c: &Capabilities) -> bool {
    c.secure_context && c.notification && c.permission != Permission::Denied
}

/// Whether a user agent is iOS / iPadOS (`platform` and touch points tell an iPad from a Mac).
pub fn is_ios(user_agent: &str, platform: &str, max_touch_points: u32) -> bool {
    ["iPhone", "iPad", "iPod"]
        .iter()
        .any(|d| user_agent.contains(d))
        || (platform == "MacIntel" && max_touch_points > 1)
}

/// A readable name for this device ("Chrome on Android"), from the user agent and, where the
/// browser offers it, `navigator.userAgentData.platform`.
pub fn device_label(user_agent: &str, ua_data_platform: Option<&str>) -> String {
    let ua = user_agent;
    let browser = if ua.contains("Edg/") || ua.contains("EdgA/") || ua.contains("EdgiOS/") {
        "Edge"
    } else if ua.contains("OPR/") {
        "Opera"
    } else if ua.contains("SamsungBrowser/") {
        "Samsung Internet"
    } else if ua.contains("Firefox/") || ua.contains("FxiOS/") {
        "Firefox"
    } else if ua.contains("CriOS/") || ua.contains("Chrome/") {
        if ua.contains("HeadlessChrome") {
            "Headless Chrome"
        } else {
            "Chrome"
        }
    } else if ua.contains("Safari/") {
        "Safari"
    } else {
        "Browser"
    };
    let os = match ua_data_platform.filter(|p| !p.is_empty()) {
        Some("macOS") if ua.contains("iPad") => "iPad".to_string(),
        Some(p) => p.to_string(),
        None => if ua.contains("iPhone") {
            "iPhone"
        } else if ua.contains("iPad") {
            "iPad"
        } else if ua.contains("Android") {
            "Android"
        } else if ua.contains("CrOS") {
            "ChromeOS"
        } else if ua.contains("Windows") {
            "Windows"
        } else if ua.contains("Mac OS X") || ua.contains("Macintosh") {
            "macOS"
        } else if ua.contains("Linux") {
            "Linux"
        } else {
            "this device"
        }
        .to_string(),
    };
    format!("{browser} on {os}")
}

/// Whether a session (as the list reports it) waits for an answer.
pub fn waits_for_answer(s: &SessionSummary) -> bool {
    s.state == bridge_protocol::SessionState::RequiresAction || s.pending_permissions > 0
}

/// Sessions that wait for an answer in `new` and did not in `old` (or wait for more than before).
pub fn newly_waiting<'a>(
    old: &[SessionSummary],
    new: &'a [SessionSummary],
) -> Vec<&'a SessionSummary> {
    new.iter()
        .filter(|s| waits_for_answer(s))
        .filter(|s| {
            old.iter().find(|o| o.id == s.id).is_none_or(|o| {
                !waits_for_answer(o) || s.pending_permissions > o.pending_permissions
            })
        })
        .collect()
}

/// Delay (ms) before the next attempt to reach the relay: 1 s doubling to 30 s, scaled by
/// `0.8 + 0.4 × jitter` (`jitter` in `[0, 1)`, so many consoles do not retry in step).
pub fn retry_delay_ms(attempt: u32, jitter: f64) -> u32 {
    let base = 1000u32.saturating_mul(1 << attempt.min(5)).min(30_000);
    (f64::from(base) * (0.8 + 0.4 * jitter.clamp(0.0, 1.0))) as u32
}

/// Decodes unpadded or padded base64url (the VAPID key's encoding); `None` if it is not.
pub fn base64url_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for c in s.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    (bits < 6).then_some(out)
}

/// What this device remembers about its push subscription, in Cache Storage ([`DEVICE_CACHE`]),
/// where the service worker reads it to answer from a notification and to subscribe again when the
/// browser replaces the subscription.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRecord {
    /// The relay's id of the subscription.
    pub subscription_id: String,
    /// The push endpoint it was made for.
    #[serde(default)]
    pub endpoint: String,
    /// The device name given to the relay.
    #[serde(default)]
    pub label: String,
    /// The events chosen.
    #[serde(default)]
    pub events: Vec<String>,
}

/// The events to register: the chosen ones plus [`RESOLVED`], in a stable order.
pub fn events_with_resolved(chosen: &[String]) -> Vec<String> {
    let mut out: Vec<String> = PUSH_EVENTS
        .iter()
        .map(|(e, _)| e.to_string())
        .filter(|e| chosen.contains(e))
        .collect();
    out.push(RESOLVED.to_string());
    out
}

/// Why subscribing failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PushError {
    /// The permission was not given.
    NotAllowed(String),
    /// The browser's push service could not be reached (or refused).
    Unreachable(String),
    /// Anything else.
    Other(String),
}

impl std::fmt::Display for PushError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PushError::NotAllowed(m) => write!(f, "notifications were not allowed ({m})"),
            PushError::Unreachable(m) => {
                write!(f, "the browser's push service could not be reached ({m})")
            }
            PushError::Other(m) => f.write_str(m),
        }
    }
}

/// Classifies a `DOMException` (its `name`, `message`) from `pushManager.subscribe()`.
pub fn classify_subscribe_error(name: &str, message: &str) -> PushError {
    let m = if message.is_empty() { name } else { message }.to_string();
    match name {
        "NotAllowedError" => PushError::NotAllowed(m),
        "AbortError" | "NetworkError" | "TimeoutError" | "UnknownError" => {
            PushError::Unreachable(m)
        }
        _ => PushError::Other(m),
    }
}

// ------------------------------------------------------------------------------- browser glue

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn has(obj: &JsValue, key: &str) -> bool {
    js_sys::Reflect::has(obj, &JsValue::from_str(key)).unwrap_or(false)
        && !get(obj, key).is_undefined()
}

fn js_error(e: &JsValue) -> (String, String) {
    let name = get(e, "name").as_string().unwrap_or_default();
    let message = get(e, "message")
        .as_string()
        .or_else(|| e.as_string())
        .unwrap_or_default();
    (name, message)
}

fn sw_container() -> Option<web_sys::ServiceWorkerContainer> {
    let w = window()?;
    let nav = w.navigator();
    if !has(nav.as_ref(), "serviceWorker") {
        return None;
    }
    Some(nav.service_worker())
}

/// What this browser offers.
pub fn capabilities() -> Capabilities {
    let Some(w) = window() else {
        return Capabilities::default();
    };
    let nav = w.navigator();
    let ua = nav.user_agent().unwrap_or_default();
    let platform = nav.platform().unwrap_or_default();
    let touch = get(nav.as_ref(), "maxTouchPoints").as_f64().unwrap_or(0.0) as u32;
    let standalone = get(nav.as_ref(), "standalone").as_bool() == Some(true)
        || w.match_media("(display-mode: standalone)")
            .ok()
            .flatten()
            .is_some_and(|m| m.matches());
    let notification = has(w.as_ref(), "Notification");
    Capabilities {
        secure_context: w.is_secure_context(),
        service_worker: has(nav.as_ref(), "serviceWorker"),
        push_manager: has(w.as_ref(), "PushManager"),
        notification,
        ios: is_ios(&ua, &platform, touch),
        standalone,
        permission: if notification {
            permission()
        } else {
            Permission::Default
        },
        host: w.location().host().unwrap_or_default(),
    }
}

/// The current notification permission.
pub fn permission() -> Permission {
    match web_sys::Notification::permission() {
        web_sys::NotificationPermission::Granted => Permission::Granted,
        web_sys::NotificationPermission::Denied => Permission::Denied,
        _ => Permission::Default,
    }
}

/// Asks for the notification permission. The request is made at once (call this directly in a
/// click handler: Safari only asks inside one); the future resolves with the answer.
pub fn request_permission() -> LocalBoxFuture<'static, Permission> {
    let promise = web_sys::Notification::request_permission();
    Box::pin(async move {
        match promise {
            Ok(p) => JsFuture::from(p)
                .await
                .ok()
                .and_then(|v| v.as_string())
                .map_or_else(permission, |s| Permission::parse(&s)),
            Err(_) => permission(),
        }
    })
}

/// This device's name for the relay's device list.
pub fn this_device_label() -> String {
    let Some(w) = window() else {
        return "Browser".into();
    };
    let nav = w.navigator();
    let ua = nav.user_agent().unwrap_or_default();
    let platform = get(&get(nav.as_ref(), "userAgentData"), "platform").as_string();
    device_label(&ua, platform.as_deref())
}

/// What the page hands the service worker: a new build is waiting (`on_update`), the path a click
/// on a notification opens (`on_navigate`), and which session the page shows (`showing`: the
/// service worker asks before it shows a push, and shows nothing when a focused window has it open).
pub struct SwHooks {
    /// A new build installed and waits.
    pub on_update: Rc<dyn Fn()>,
    /// Open this path (`/s/<id>`).
    pub on_navigate: Rc<dyn Fn(String)>,
    /// The session shown now, if any.
    pub showing: Rc<dyn Fn() -> Option<String>>,
}

fn reply(ev: &web_sys::MessageEvent, value: &JsValue) {
    let port = ev.ports().get(0);
    if let Ok(post) = get(&port, "postMessage").dyn_into::<js_sys::Function>() {
        let _ = post.call1(&port, value);
    }
}

/// Registers `/sw.js` (scope `/`) and reports, through `hooks.on_update`, a new build that installed
/// and waits (never when the first one installs). Checks for a new build every 30 minutes and when
/// the page becomes visible again. Answers the service worker's messages: `bridge:navigate` (open a
/// path) and `bridge:which-session` (reply `{session_id, visible}` on the port it sent).
pub fn register_service_worker(hooks: SwHooks) {
    let Some(container) = sw_container() else {
        return;
    };
    let SwHooks {
        on_update,
        on_navigate,
        showing,
    } = hooks;
    let on_message =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            let data = ev.data();
            match get(&data, "type").as_string().as_deref() {
                Some("bridge:navigate") => {
                    if let Some(url) = get(&data, "url").as_string()
                        && url.starts_with('/')
                        && !url.starts_with("//")
                    {
                        on_navigate(url);
                    }
                }
                Some("bridge:which-session") => {
                    let answer = js_sys::Object::new();
                    let sid = showing().map_or(JsValue::NULL, |s| JsValue::from_str(&s));
                    let _ = js_sys::Reflect::set(&answer, &"session_id".into(), &sid);
                    let visible = JsValue::from_bool(!crate::dom::page_hidden());
                    let _ = js_sys::Reflect::set(&answer, &"visible".into(), &visible);
                    reply(&ev, &answer);
                }
                _ => {}
            }
        });
    container.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let opts = web_sys::RegistrationOptions::new();
    opts.set_scope("/");
    let promise = container.register_with_options(SW_URL, &opts);
    leptos::task::spawn_local(async move {
        let reg = match JsFuture::from(promise).await {
            Ok(r) => r.unchecked_into::<web_sys::ServiceWorkerRegistration>(),
            Err(e) => {
                leptos::logging::warn!("service worker registration failed: {:?}", js_error(&e));
                return;
            }
        };
        watch_updates(&container, &reg, on_update);
        let check = {
            let reg = reg.clone();
            move || {
                if let Ok(p) = reg.update() {
                    // A failed check (offline) only means no news.
                    leptos::task::spawn_local(async move {
                        let _ = JsFuture::from(p).await;
                    });
                }
            }
        };
        let check2 = check.clone();
        gloo_timers::callback::Interval::new(30 * 60 * 1000, check).forget();
        let on_visible = Closure::<dyn Fn()>::new(move || {
            if !crate::dom::page_hidden() {
                check2();
            }
        });
        if let Some(doc) = window().and_then(|w| w.document()) {
            let _ = doc.add_event_listener_with_callback(
                "visibilitychange",
                on_visible.as_ref().unchecked_ref(),
            );
        }
        on_visible.forget();
    });
}

fn watch_updates(
    container: &web_sys::ServiceWorkerContainer,
    reg: &web_sys::ServiceWorkerRegistration,
    on_update: Rc<dyn Fn()>,
) {
    // A worker that installed while an older one controls this page is a new build; the very
    // first install (no controller yet) is not.
    if reg.waiting().is_some() && container.controller().is_some() {
        on_update();
    }
    let reg2 = reg.clone();
    let container = container.clone();
    let on_found = Closure::<dyn Fn()>::new(move || {
        let Some(worker) = reg2.installing() else {
            return;
        };
        let w2 = worker.clone();
        let container = container.clone();
        let on_update = on_update.clone();
        let on_state = Closure::<dyn Fn()>::new(move || {
            if w2.state() == web_sys::ServiceWorkerState::Installed
                && container.controller().is_some()
            {
                on_update();
            }
        });
        worker.set_onstatechange(Some(on_state.as_ref().unchecked_ref()));
        on_state.forget();
    });
    reg.set_onupdatefound(Some(on_found.as_ref().unchecked_ref()));
    on_found.forget();
}

/// Switches to the waiting build: tells it to take over (`SKIP_WAITING`) and reloads the page when
/// it has (`controllerchange`). Reloads at once if nothing waits.
pub fn activate_update() {
    let reload = || {
        if let Some(w) = window() {
            let _ = w.location().reload();
        }
    };
    let Some(container) = sw_container() else {
        return reload();
    };
    let on_change = Closure::<dyn Fn()>::new(reload);
    container.set_oncontrollerchange(Some(on_change.as_ref().unchecked_ref()));
    on_change.forget();
    let promise = container.get_registration();
    leptos::task::spawn_local(async move {
        let waiting = JsFuture::from(promise)
            .await
            .ok()
            .filter(|r| !r.is_undefined())
            .and_then(|r| {
                r.unchecked_into::<web_sys::ServiceWorkerRegistration>()
                    .waiting()
            });
        match waiting {
            Some(w) => {
                let msg = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&msg, &"type".into(), &"SKIP_WAITING".into());
                if w.post_message(&msg).is_err() {
                    reload();
                }
            }
            None => reload(),
        }
    });
}

async fn ready_registration() -> Result<web_sys::ServiceWorkerRegistration, PushError> {
    let container = sw_container()
        .ok_or_else(|| PushError::Other("this browser has no service worker".into()))?;
    let ready = container
        .ready()
        .map_err(|e| PushError::Other(js_error(&e).1))?;
    // `ready` never settles when registration failed: give it a while.
    let timeout = gloo_timers::future::TimeoutFuture::new(10_000);
    futures::pin_mut!(timeout);
    let ready = JsFuture::from(ready);
    futures::pin_mut!(ready);
    match futures::future::select(ready, timeout).await {
        futures::future::Either::Left((Ok(r), _)) => Ok(r.unchecked_into()),
        futures::future::Either::Left((Err(e), _)) => Err(PushError::Other(js_error(&e).1)),
        futures::future::Either::Right(_) => Err(PushError::Other(
            "the service worker did not start (reload the page and try again)".into(),
        )),
    }
}

fn subscription_json(sub: &JsValue) -> Result<Value, PushError> {
    let text = js_sys::JSON::stringify(sub)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| PushError::Other("the push subscription could not be read".into()))?;
    serde_json::from_str(&text).map_err(|e| PushError::Other(e.to_string()))
}

/// This browser's current push subscription (`PushSubscription.toJSON()`), if any.
pub async fn current_subscription() -> Option<Value> {
    let reg = ready_registration().await.ok()?;
    let pm = reg.push_manager().ok()?;
    let sub = JsFuture::from(pm.get_subscription().ok()?).await.ok()?;
    if sub.is_null() || sub.is_undefined() {
        return None;
    }
    subscription_json(&sub).ok()
}

/// Subscribes this browser to push with the relay's VAPID key (base64url) and returns
/// `PushSubscription.toJSON()`. A subscription made for another key is replaced.
pub async fn subscribe(vapid_key: &str) -> Result<Value, PushError> {
    let key = base64url_decode(vapid_key)
        .filter(|k| k.len() == 65)
        .ok_or_else(|| {
            PushError::Other("the relay's VAPID key is not a P-256 public key".into())
        })?;
    let reg = ready_registration().await?;
    let pm = reg
        .push_manager()
        .map_err(|e| PushError::Other(js_error(&e).1))?;
    let opts = web_sys::PushSubscriptionOptionsInit::new();
    opts.set_user_visible_only(true);
    let key_array = js_sys::Uint8Array::from(key.as_slice());
    opts.set_application_server_key(&key_array);
    let attempt = |pm: &web_sys::PushManager| {
        let p = pm.subscribe_with_options(&opts);
        async move {
            match p {
                Ok(p) => JsFuture::from(p).await,
                Err(e) => Err(e),
            }
        }
    };
    let sub = match attempt(&pm).await {
        Ok(s) => s,
        Err(e) if js_error(&e).0 == "InvalidStateError" => {
            // Subscribed earlier with another key (the relay's data dir was replaced): start over.
            unsubscribe().await;
            attempt(&pm).await.map_err(|e| {
                let (n, m) = js_error(&e);
                classify_subscribe_error(&n, &m)
            })?
        }
        Err(e) => {
            let (n, m) = js_error(&e);
            return Err(classify_subscribe_error(&n, &m));
        }
    };
    subscription_json(&sub)
}

/// Drops this browser's push subscription (if any).
pub async fn unsubscribe() {
    let Ok(reg) = ready_registration().await else {
        return;
    };
    let Ok(pm) = reg.push_manager() else { return };
    let Some(p) = pm.get_subscription().ok() else {
        return;
    };
    let Ok(sub) = JsFuture::from(p).await else {
        return;
    };
    // Called by name, not through `PushSubscription`: anything with the same methods will do.
    if let Ok(f) = get(&sub, "unsubscribe").dyn_into::<js_sys::Function>()
        && let Ok(p) = f.call0(&sub)
        && let Ok(p) = p.dyn_into::<js_sys::Promise>()
    {
        let _ = JsFuture::from(p).await;
    }
}

async fn device_cache() -> Option<web_sys::Cache> {
    let caches = window()?.caches().ok()?;
    JsFuture::from(caches.open(DEVICE_CACHE))
        .await
        .ok()
        .map(JsCast::unchecked_into)
}

/// Keeps this device's subscription where the service worker reads it.
pub async fn save_device(record: &DeviceRecord) {
    let Some(cache) = device_cache().await else {
        return;
    };
    let Ok(json) = serde_json::to_string(record) else {
        return;
    };
    let init = web_sys::ResponseInit::new();
    let headers = web_sys::Headers::new().ok();
    if let Some(h) = &headers {
        let _ = h.set("content-type", "application/json");
        init.set_headers(h);
    }
    if let Ok(resp) = web_sys::Response::new_with_opt_str_and_init(Some(&json), &init) {
        let _ = JsFuture::from(cache.put_with_str(DEVICE_KEY, &resp)).await;
    }
}

/// Cache Storage key (in [`DEVICE_CACHE`]) of `{"login_secret": "…"}`: the service worker sends it
/// in `X-Bridge-Login` with `POST /v1/push/answer` (the login cookie alone is refused).
pub const LOGIN_KEY: &str = "/__bridge/login";

/// Mirrors the login secret where the service worker reads it; `None` forgets it (logout).
pub async fn mirror_login_secret(secret: Option<String>) {
    let Some(cache) = device_cache().await else {
        return;
    };
    let Some(secret) = secret else {
        let _ = JsFuture::from(cache.delete_with_str(LOGIN_KEY)).await;
        return;
    };
    let json = serde_json::json!({ "login_secret": secret }).to_string();
    let init = web_sys::ResponseInit::new();
    if let Ok(h) = web_sys::Headers::new() {
        let _ = h.set("content-type", "application/json");
        init.set_headers(&h);
    }
    if let Ok(resp) = web_sys::Response::new_with_opt_str_and_init(Some(&json), &init) {
        let _ = JsFuture::from(cache.put_with_str(LOGIN_KEY, &resp)).await;
    }
}

/// This device's subscription as last saved.
pub async fn load_device() -> Option<DeviceRecord> {
    let cache = device_cache().await?;
    let resp = JsFuture::from(cache.match_with_str(DEVICE_KEY))
        .await
        .ok()?;
    let resp = resp.dyn_into::<web_sys::Response>().ok()?;
    let text = JsFuture::from(resp.text().ok()?).await.ok()?.as_string()?;
    serde_json::from_str(&text).ok()
}

/// Forgets this device's subscription.
pub async fn forget_device() {
    if let Some(cache) = device_cache().await {
        let _ = JsFuture::from(cache.delete_with_str(DEVICE_KEY)).await;
    }
}

/// Shows a notification from the page (the fallback where push cannot work): through the service
/// worker when one is active (its click handler focuses this window on `url`), else with
/// `new Notification` (a click focuses this window and calls `on_click`).
pub fn show_local_notification(
    title: &str,
    body: &str,
    tag: &str,
    url: &str,
    on_click: Rc<dyn Fn(String)>,
) {
    if permission() != Permission::Granted {
        return;
    }
    let opts = web_sys::NotificationOptions::new();
    opts.set_body(body);
    opts.set_tag(tag);
    opts.set_icon("/icons/icon-192.png");
    let data =
        serde_json::json!({"v": 1, "type": "local", "url": url, "title": title, "body": body});
    // A plain object (not a Map): the service worker's click handler reads `data.url`.
    if let Ok(d) = js_sys::JSON::parse(&data.to_string()) {
        opts.set_data(&d);
    }
    let sw_title = title.to_string();
    let title = title.to_string();
    let url = url.to_string();
    let fallback = move |opts: &web_sys::NotificationOptions| {
        if let Ok(n) = web_sys::Notification::new_with_options(&title, opts) {
            let n2 = n.clone();
            let cb = Closure::<dyn Fn()>::new(move || {
                if let Some(w) = window() {
                    let _ = w.focus();
                }
                n2.close();
                on_click(url.clone());
            });
            n.set_onclick(Some(cb.as_ref().unchecked_ref()));
            cb.forget();
        }
    };
    let Some(container) = sw_container().filter(|c| c.controller().is_some()) else {
        return fallback(&opts);
    };
    let promise = container.get_registration();
    leptos::task::spawn_local(async move {
        let reg = JsFuture::from(promise)
            .await
            .ok()
            .filter(|r| !r.is_undefined())
            .map(JsCast::unchecked_into::<web_sys::ServiceWorkerRegistration>);
        let shown = match reg.map(|r| r.show_notification_with_options(&sw_title, &opts)) {
            Some(Ok(p)) => JsFuture::from(p).await.is_ok(),
            _ => false,
        };
        if !shown {
            fallback(&opts);
        }
    });
}

fn session_storage() -> Option<web_sys::Storage> {
    window()?.session_storage().ok().flatten()
}

fn local_storage() -> Option<web_sys::Storage> {
    window()?.local_storage().ok().flatten()
}

const DRAFT_KEY: &str = "bridge-console.draft";
const IN_PAGE_KEY: &str = "bridge-console.in-page-notifications";

/// Keeps the composer's draft for one reload (an update) in `sessionStorage`.
pub fn save_draft(session_id: &str, text: &str) {
    if let Some(s) = session_storage() {
        let v = serde_json::json!({"session_id": session_id, "text": text});
        let _ = s.set_item(DRAFT_KEY, &v.to_string());
    }
}

/// The draft kept for `session_id` by [`save_draft`] (taken: it is removed).
pub fn take_draft(session_id: &str) -> Option<String> {
    let s = session_storage()?;
    let stored = s.get_item(DRAFT_KEY).ok().flatten()?;
    let v: Value = serde_json::from_str(&stored).ok()?;
    if v.get("session_id").and_then(Value::as_str) != Some(session_id) {
        return None;
    }
    let _ = s.remove_item(DRAFT_KEY);
    v.get("text")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

/// Whether the person turned on notifications shown by the page itself.
pub fn in_page_enabled() -> bool {
    local_storage()
        .and_then(|s| s.get_item(IN_PAGE_KEY).ok().flatten())
        .is_some_and(|v| v == "1")
}

/// Remembers [`in_page_enabled`].
pub fn set_in_page_enabled(on: bool) {
    if let Some(s) = local_storage() {
        let _ = if on {
            s.set_item(IN_PAGE_KEY, "1")
        } else {
            s.remove_item(IN_PAGE_KEY)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps() -> Capabilities {
        Capabilities {
            secure_context: true,
            service_worker: true,
            push_manager: true,
            notification: true,
            ios: false,
            standalone: false,
            permission: Permission::Default,
            host: "relay.example:8787".into(),
        }
    }

    #[test]
    fn push_support_names_the_first_obstacle() {
        assert_eq!(push_support(&caps()), PushSupport::Ready);
        let granted = Capabilities {
            permission: Permission::Granted,
            ..caps()
        };
        assert_eq!(push_support(&granted), PushSupport::Ready);
        // Plain HTTP on a LAN address: no service worker either, but the reason is the HTTP.
        let http = Capabilities {
            secure_context: false,
            service_worker: false,
            push_manager: false,
            ..caps()
        };
        assert_eq!(push_support(&http), PushSupport::Insecure);
        let text = PushSupport::Insecure.explain(&http.host).unwrap();
        assert!(
            text.contains("relay.example:8787") && text.contains("HTTPS"),
            "{text}"
        );
        // iOS Safari in a tab has no PushManager: the way out is the home screen, not another browser.
        let ios_tab = Capabilities {
            ios: true,
            push_manager: false,
            ..caps()
        };
        assert_eq!(push_support(&ios_tab), PushSupport::IosNeedsHomeScreen);
        let ios_app = Capabilities {
            ios: true,
            standalone: true,
            ..caps()
        };
        assert_eq!(push_support(&ios_app), PushSupport::Ready);
        let old_ios_app = Capabilities {
            push_manager: false,
            ..ios_app.clone()
        };
        assert_eq!(push_support(&old_ios_app), PushSupport::Unsupported);
        let no_sw = Capabilities {
            service_worker: false,
            ..caps()
        };
        assert_eq!(push_support(&no_sw), PushSupport::Unsupported);
        let denied = Capabilities {
            permission: Permission::Denied,
            ..caps()
        };
        assert_eq!(push_support(&denied), PushSupport::Denied);
        assert_eq!(PushSupport::Ready.explain("h"), None);
        for s in [
            PushSupport::Insecure,
            PushSupport::IosNeedsHomeScreen,
            PushSupport::Unsupported,
            PushSupport::Denied,
        ] {
            assert!(s.explain("h").is_some_and(|t| t.len() > 30), "{s:?}");
        }
    }

    #[test]
    fn in_page_notifications_need_a_secure_page_and_no_block() {
        assert!(in_page_possible(&caps()));
        assert!(!in_page_possible(&Capabilities {
            permission: Permission::Denied,
            ..caps()
        }));
        assert!(!in_page_possible(&Capabilities {
            notification: false,
            ..caps()
        }));
        assert!(!in_page_possible(&Capabilities {
            secure_context: false,
            ..caps()
        }));
        assert_eq!(Permission::parse("granted"), Permission::Granted);
        assert_eq!(Permission::parse("denied"), Permission::Denied);
        assert_eq!(Permission::parse("prompt"), Permission::Default);
    }

    const ANDROID_CHROME: &str = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36";
    const IPHONE_SAFARI: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
    const IPAD_DESKTOP_UA: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15";
    const LINUX_FIREFOX: &str =
        "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    const WIN_EDGE: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0";

    #[test]
    fn devices_get_readable_names() {
        assert_eq!(device_label(ANDROID_CHROME, None), "Chrome on Android");
        assert_eq!(
            device_label(ANDROID_CHROME, Some("Android")),
            "Chrome on Android"
        );
        assert_eq!(device_label(IPHONE_SAFARI, None), "Safari on iPhone");
        assert_eq!(device_label(IPAD_DESKTOP_UA, None), "Safari on macOS");
        assert_eq!(device_label(LINUX_FIREFOX, None), "Firefox on Linux");
        assert_eq!(device_label(WIN_EDGE, Some("Windows")), "Edge on Windows");
        assert_eq!(device_label(WIN_EDGE, Some("")), "Edge on Windows");
        assert_eq!(device_label("", None), "Browser on this device");
        assert_eq!(
            device_label(
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36",
                Some("Linux")
            ),
            "Headless Chrome on Linux"
        );
    }

    #[test]
    fn ios_is_told_apart_from_a_mac() {
        assert!(is_ios(IPHONE_SAFARI, "iPhone", 5));
        assert!(
            is_ios(IPAD_DESKTOP_UA, "MacIntel", 5),
            "iPadOS desktop mode"
        );
        assert!(!is_ios(IPAD_DESKTOP_UA, "MacIntel", 0), "a Mac");
        assert!(!is_ios(ANDROID_CHROME, "Linux armv8l", 5));
    }

    fn summary(id: &str, state: &str, pending: u64) -> SessionSummary {
        serde_json::from_value(serde_json::json!({
            "id": id, "state": state, "pending_permissions": pending
        }))
        .unwrap()
    }

    #[test]
    fn newly_waiting_sessions_are_found_once() {
        let old = vec![
            summary("a", "running", 0),
            summary("b", "requires_action", 1),
        ];
        let new = vec![
            summary("a", "requires_action", 1),
            summary("b", "requires_action", 1),
            summary("c", "idle", 0),
            summary("d", "running", 1),
        ];
        let ids: Vec<&str> = newly_waiting(&old, &new)
            .iter()
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(
            ids,
            ["a", "d"],
            "b was already waiting, c waits for nothing"
        );
        let more = vec![summary("b", "requires_action", 2)];
        assert_eq!(newly_waiting(&old, &more).len(), 1, "a second prompt in b");
        assert!(newly_waiting(&new, &new).is_empty());
    }

    #[test]
    fn relay_retries_back_off_with_jitter_and_a_ceiling() {
        let d: Vec<u32> = (0..8).map(|a| retry_delay_ms(a, 0.5)).collect();
        assert_eq!(d, [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
        assert_eq!(retry_delay_ms(0, 0.0), 800);
        assert_eq!(retry_delay_ms(0, 0.999_999), 1199);
        assert_eq!(retry_delay_ms(40, 1.0), 36_000);
        assert_eq!(retry_delay_ms(3, -4.0), 6400, "jitter is clamped");
    }

    #[test]
    fn base64url_decodes_a_vapid_key() {
        assert_eq!(base64url_decode("").unwrap(), b"");
        assert_eq!(base64url_decode("Zm9vYmFy").unwrap(), b"foobar");
        assert_eq!(base64url_decode("Zm9vYg").unwrap(), b"foob");
        assert_eq!(base64url_decode("Zm9vYg==").unwrap(), b"foob");
        assert_eq!(base64url_decode("-_8").unwrap(), [0xfb, 0xff]);
        assert_eq!(base64url_decode("a"), None, "6 bits are not a byte");
        assert_eq!(base64url_decode("ab$d"), None);
        // An uncompressed P-256 point: 65 bytes, 87 characters unpadded.
        let key = "BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U";
        let bytes = base64url_decode(key).unwrap();
        assert_eq!(bytes.len(), 65);
        assert_eq!(bytes[0], 4);
    }

    #[test]
    fn events_always_include_resolved_in_a_stable_order() {
        let chosen = vec!["agent_exited".to_string(), "needs_you".to_string()];
        assert_eq!(
            events_with_resolved(&chosen),
            ["needs_you", "agent_exited", "resolved"]
        );
        assert_eq!(events_with_resolved(&[]), ["resolved"]);
        let unknown = vec!["bogus".to_string()];
        assert_eq!(events_with_resolved(&unknown), ["resolved"]);
    }

    #[test]
    fn subscribe_errors_are_classified() {
        assert!(matches!(
            classify_subscribe_error("AbortError", "Registration failed - push service error"),
            PushError::Unreachable(m) if m.contains("push service")
        ));
        assert!(matches!(
            classify_subscribe_error("NotAllowedError", ""),
            PushError::NotAllowed(m) if m == "NotAllowedError"
        ));
        assert!(matches!(
            classify_subscribe_error("InvalidAccessError", "bad key"),
            PushError::Other(_)
        ));
        let e = PushError::Unreachable("x".into());
        assert!(e.to_string().contains("push service"));
    }

    #[test]
    fn the_device_record_reads_what_the_service_worker_writes() {
        // The service worker writes `{subscription_id, endpoint, label, events}` after it subscribes again.
        let r: DeviceRecord =
            serde_json::from_str(r#"{"subscription_id":"sub_1","extra":true}"#).unwrap();
        assert_eq!(r.subscription_id, "sub_1");
        assert!(r.events.is_empty());
        let back: DeviceRecord = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
