//! Browser glue shared by the rest: the window, JS property reads, errors, the service worker
//! container, what this browser can do (capabilities, notification permission, a device name) and
//! the small records in web storage (a draft across an update reload, in-page notifications).

use futures::future::LocalBoxFuture;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::{Capabilities, Permission, device_label, is_ios};

pub(super) fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

pub(super) fn get(obj: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

pub(super) fn has(obj: &JsValue, key: &str) -> bool {
    js_sys::Reflect::has(obj, &JsValue::from_str(key)).unwrap_or(false)
        && !get(obj, key).is_undefined()
}

pub(super) fn js_error(e: &JsValue) -> (String, String) {
    let name = get(e, "name").as_string().unwrap_or_default();
    let message = get(e, "message")
        .as_string()
        .or_else(|| e.as_string())
        .unwrap_or_default();
    (name, message)
}

pub(super) fn sw_container() -> Option<web_sys::ServiceWorkerContainer> {
    let w = window()?;
    let nav = w.navigator();
    if !has(nav.as_ref(), "serviceWorker") {
        return None;
    }
    Some(nav.service_worker())
}

/// The registration a `getRegistration()` promise gives, if there is one.
pub(super) async fn registration_of(
    promise: js_sys::Promise,
) -> Option<web_sys::ServiceWorkerRegistration> {
    JsFuture::from(promise)
        .await
        .ok()
        .filter(|r| !r.is_undefined())
        .map(JsCast::unchecked_into)
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

pub(super) fn session_storage() -> Option<web_sys::Storage> {
    window()?.session_storage().ok().flatten()
}

pub(super) fn local_storage() -> Option<web_sys::Storage> {
    window()?.local_storage().ok().flatten()
}

pub(super) const DRAFT_KEY: &str = "bridge-console.draft";
pub(super) const IN_PAGE_KEY: &str = "bridge-console.in-page-notifications";

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
